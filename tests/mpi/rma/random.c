/* Random operations against a model: every rank owns one slot of SLOT ints in every rank's
 * window and is the only one writing it, so it can predict the slot exactly. Each round,
 * inside one fence epoch, it issues a random sequence of puts, accumulates (SUM, MAX,
 * REPLACE), get_accumulates (SUM, NO_OP), fetch_and_ops and compare_and_swaps to random offsets
 * of its slots, with random datatypes on both sides (contiguous, vector, indexed with
 * holes, resized), and checks every fetched value against the model at that point of the
 * sequence (operations of one origin are applied in issue order); after the fence it reads
 * each slot back with a get and compares the whole slot. The seed is fixed per rank.
 * Origin buffers are reused right after each call: RailMPI's puts and accumulates complete
 * locally when issued (src/rma/README.md), which this also checks. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define SLOT 256
#define ROUNDS 6
#define OPS 24

static unsigned long long rng;
static unsigned rnd(unsigned n)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rng >> 33) % n;
}

/* A random type over ints: returns it committed, with its element offsets (in ints) in
 * idx[0..*n) in type-map order, its extent (the stride of repeated elements) in *ext and
 * its upper bound in *ub (ints). */
static MPI_Datatype rand_type(int *idx, int *n, int *ext, int *ub)
{
    MPI_Datatype t;
    switch (rnd(4)) {
    case 0: {
        int c = 1 + (int)rnd(8);
        MPI_Type_contiguous(c, MPI_INT, &t);
        for (int i = 0; i < c; i++)
            idx[i] = i;
        *n = c, *ext = *ub = c;
        break;
    }
    case 1: {
        int c = 1 + (int)rnd(4), bl = 1 + (int)rnd(3), st = bl + (int)rnd(3);
        MPI_Type_vector(c, bl, st, MPI_INT, &t);
        *n = 0;
        for (int i = 0; i < c; i++)
            for (int j = 0; j < bl; j++)
                idx[(*n)++] = i * st + j;
        *ext = *ub = (c - 1) * st + bl;
        break;
    }
    case 2: {
        int bl[3] = {1 + (int)rnd(2), 1 + (int)rnd(3), 1}, dp[3];
        dp[0] = (int)rnd(2);
        dp[1] = dp[0] + bl[0] + 1 + (int)rnd(3);
        dp[2] = dp[1] + bl[1] + (int)rnd(4);
        MPI_Type_indexed(3, bl, dp, MPI_INT, &t);
        *n = 0;
        for (int b = 0; b < 3; b++)
            for (int j = 0; j < bl[b]; j++)
                idx[(*n)++] = dp[b] + j;
        *ub = dp[2] + bl[2];
        *ext = *ub - dp[0]; /* the lower bound is the first block's displacement */
        break;
    }
    default: { /* two ints, extent of three: a stride-3 pattern when repeated */
        MPI_Datatype c2;
        MPI_Type_contiguous(2, MPI_INT, &c2);
        MPI_Type_create_resized(c2, 0, 3 * (MPI_Aint)sizeof(int), &t);
        MPI_Type_free(&c2);
        idx[0] = 0, idx[1] = 1;
        *n = 2, *ext = *ub = 3;
        break;
    }
    }
    MPI_Type_commit(&t);
    return t;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rng = 0x9e3779b97f4a7c15ULL * (unsigned long long)(rank + 1);
    int *mem;
    MPI_Win win;
    MTEST_OK(
        MPI_Win_allocate((MPI_Aint)size * SLOT * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, (size_t)size * SLOT * sizeof(int));
    int *model = calloc((size_t)size * SLOT, sizeof(int)); /* my slot at each target */
    MTEST_OK(MPI_Win_fence(0, win));
    for (int round = 0; round < ROUNDS; round++) {
        /* fetched values are checked after the epoch: keep them with what they must be */
        int *fetched = calloc(OPS * size * 64, sizeof(int)), *expect = calloc(OPS * size * 64, sizeof(int));
        int *cmps = calloc(OPS * size * 64, sizeof(int)); /* compare values must live until the fence */
        int nf = 0;
        for (int op = 0; op < OPS * size; op++) {
            int t = (int)rnd((unsigned)size), *slot = model + t * SLOT;
            int oi[64], on, oe, oub, ti[64], tn, te, tub;
            MPI_Datatype tt = rand_type(ti, &tn, &te, &tub);
            int tc = 1 + (int)rnd(3); /* target count */
            int n = tn * tc;          /* ints moved */
            int disp = (int)rnd((unsigned)(SLOT - (te * (tc - 1) + tub)));
            int tpos[256];
            for (int k = 0; k < tc; k++)
                for (int j = 0; j < tn; j++)
                    tpos[k * tn + j] = disp + k * te + ti[j];
            int vals[256];
            for (int i = 0; i < n; i++)
                vals[i] = (int)rnd(1000) - 500;
            MPI_Aint tdisp = (MPI_Aint)rank * SLOT + disp;
            int kind = (int)rnd(6);
            if (kind == 4) { /* fetch_and_op on one int */
                expect[nf] = slot[tpos[0]];
                MTEST_OK(MPI_Fetch_and_op(&vals[0], fetched + nf++, MPI_INT, t, (MPI_Aint)rank * SLOT + tpos[0],
                                          MPI_SUM, win));
                slot[tpos[0]] += vals[0];
                MPI_Type_free(&tt);
                continue;
            }
            if (kind == 5) { /* compare_and_swap, half the time with the right compare value */
                int pos = tpos[0];
                cmps[nf] = rnd(2) ? slot[pos] : slot[pos] + 1;
                expect[nf] = slot[pos];
                MTEST_OK(MPI_Compare_and_swap(&vals[0], &cmps[nf], fetched + nf, MPI_INT, t,
                                              (MPI_Aint)rank * SLOT + pos, win));
                if (cmps[nf] == slot[pos])
                    slot[pos] = vals[0];
                nf++;
                MPI_Type_free(&tt);
                continue;
            }
            /* origin side: a random type of its own holding n ints */
            MPI_Datatype ot = rand_type(oi, &on, &oe, &oub);
            int obuf[2048] = {0}, ocount;
            if (n % on || (n / on) * oe > 2048) { /* not a whole number of origin elements: plain ints */
                MPI_Type_free(&ot);
                ot = MPI_INT, on = 1, oe = 1;
                oi[0] = 0;
            }
            ocount = n / on;
            for (int k = 0; k < ocount; k++)
                for (int j = 0; j < on; j++)
                    obuf[k * oe + oi[j]] = vals[k * on + j];
            if (kind == 0) {
                MTEST_OK(MPI_Put(obuf, ocount, ot, t, tdisp, tc, tt, win));
                for (int i = 0; i < n; i++)
                    slot[tpos[i]] = vals[i];
            } else if (kind == 1 || kind == 2) {
                MPI_Op o = kind == 1 ? MPI_SUM : rnd(2) ? MPI_MAX : MPI_REPLACE;
                MTEST_OK(MPI_Accumulate(obuf, ocount, ot, t, tdisp, tc, tt, o, win));
                for (int i = 0; i < n; i++)
                    slot[tpos[i]] = o == MPI_SUM   ? slot[tpos[i]] + vals[i]
                                    : o == MPI_MAX ? (vals[i] > slot[tpos[i]] ? vals[i] : slot[tpos[i]])
                                                   : vals[i];
            } else { /* get_accumulate (SUM or NO_OP) into a contiguous result kept for later */
                MPI_Op o = rnd(3) ? MPI_SUM : MPI_NO_OP;
                MTEST_OK(MPI_Get_accumulate(obuf, ocount, ot, fetched + nf, n, MPI_INT, t, tdisp, tc, tt, o, win));
                for (int i = 0; i < n; i++) {
                    expect[nf + i] = slot[tpos[i]];
                    if (o == MPI_SUM)
                        slot[tpos[i]] += vals[i];
                }
                nf += n;
            }
            if (ot != MPI_INT)
                MPI_Type_free(&ot);
            MPI_Type_free(&tt);
        }
        MTEST_OK(MPI_Win_fence(0, win));
        for (int i = 0; i < nf; i++)
            MTEST_CHECK(fetched[i] == expect[i], "round %d: get_accumulate value %d: %d, expected %d", round, i,
                        fetched[i], expect[i]);
        /* read every slot back */
        int *back = calloc((size_t)size * SLOT, sizeof(int));
        for (int t = 0; t < size; t++)
            MTEST_OK(MPI_Get(back + t * SLOT, SLOT, MPI_INT, t, (MPI_Aint)rank * SLOT, SLOT, MPI_INT, win));
        MTEST_OK(MPI_Win_fence(0, win));
        int bad = 0;
        for (int i = 0; i < size * SLOT && bad < 5; i++)
            if (back[i] != model[i]) {
                MTEST_CHECK(0, "round %d: target %d int %d = %d, model %d", round, i / SLOT, i % SLOT, back[i],
                            model[i]);
                bad++;
            }
        free(back);
        free(fetched);
        free(expect);
        free(cmps);
    }
    MTEST_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MTEST_OK(MPI_Win_free(&win));
    free(model);
    return mtest_finalize();
}
