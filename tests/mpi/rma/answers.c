/* Answers of fetching one-sided operations, many in flight to several targets at once.
 * The short paths' fetch-and-op, compare-and-swap and gets to targets reached by messages
 * post no receive: the window's eager handler writes each answer into its result by the
 * operation's tag (src/rma/ops.c rma_answer_landed), 64 slots, an operation whose slot is
 * still taken posts a receive as before, and answers the core queued as unexpected (behind
 * a request of another origin, or a rendezvous answer) are received by the progress hook.
 * Every rank, under lock_all on a Win_create window (Win_allocate with args=allocate),
 * issues R rounds to every rank (itself included), each round a fetch-and-add of a counter
 * and a compare-and-swap of another (both its own at that target), a get of 8 B and one of
 * 24 B of the target's constants, and every 4th round a get of 2 KiB and every 16th of
 * 32 KiB; every 32nd an Rget and an Rget_accumulate with requests (posted receives):
 *  - phase 0: one Win_flush_all completes them all;
 *  - phase 1: Win_flush of one target at a time, that target's results checked right
 *    after its own flush (an answer counted against another target lets a flush return
 *    before its answers landed: the sentinel is still there);
 *  - phase 2: a Win_flush_all every 3 rounds (up to 3 ranks, every answer but the 2 KiB
 *    and 32 KiB gets' fits the slots).
 * Each result must be what that target's memory held at that round: the targets' values
 * differ, so an answer written into another target's or another round's result is caught,
 * a lost one hangs (watchdog) or leaves the sentinel, and a duplicate overwrites a later
 * result with an earlier answer (or lands in a freed slot's next operation). Hundreds of
 * answers per target are in flight, far past the 64 slots. */
#include "mtest.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R 200
#define IDN 8
#define MID 2048
#define BIG 32768
#define NBIG ((R + 15) / 16)
#define SENT ((int64_t)0x5a5a5a5a5a5a5a5aLL)

static int64_t fop_base(int t, int o) { return (int64_t)(t + 1) * 1000000007LL + (int64_t)o * 100000; }
static int64_t cas_base(int t, int o) { return (int64_t)(t + 1) * 3000000019LL + (int64_t)o * 10000; }
static int64_t ident(int t, int j) { return (int64_t)(t + 1) * 7777777LL + j; }

/* target memory: fop[size], cas[size], ident[IDN], then BIG bytes of pattern (seed t) */
typedef struct {
    int64_t *fop, *cas, *g8, *g24, *gmid, *grq, *gacc;
    unsigned char *big;
} results_t;

static void fill_sentinel(results_t *r, int n)
{
    for (size_t i = 0; i < (size_t)n * R; i++) {
        r->fop[i] = r->cas[i] = r->g8[i] = SENT;
        r->grq[i] = r->gacc[i] = SENT;
    }
    for (size_t i = 0; i < (size_t)n * R * 3; i++)
        r->g24[i] = SENT;
    memset(r->gmid, 0x5a, (size_t)n * (R / 4) * MID);
    memset(r->big, 0x5a, (size_t)n * NBIG * BIG);
}

static int rq_round(int k) { return k % 32 == 5; }

/* The results of target t in phase p, against what its memory held at each round. */
static void check_target(const results_t *r, int t, int p, int me)
{
    int bad = 0;
    for (int k = 0; k < R && bad < 8; k++) {
        size_t i = (size_t)t * R + (size_t)k;
        int64_t n = (int64_t)p * R + k; /* operations of ours on that counter before this one */
        int64_t want = fop_base(t, me) + n;
        if (r->fop[i] != want && ++bad)
            MTEST_CHECK(0, "phase %d target %d round %d: fetch-and-add got %lld, expected %lld", p, t, k,
                        (long long)r->fop[i], (long long)want);
        want = cas_base(t, me) + n;
        if (r->cas[i] != want && ++bad)
            MTEST_CHECK(0, "phase %d target %d round %d: compare-and-swap got %lld, expected %lld", p, t, k,
                        (long long)r->cas[i], (long long)want);
        if (r->g8[i] != ident(t, k % IDN) && ++bad)
            MTEST_CHECK(0, "phase %d target %d round %d: get of 8 B got %lld, expected %lld", p, t, k,
                        (long long)r->g8[i], (long long)ident(t, k % IDN));
        for (int j = 0; j < 3; j++)
            if (r->g24[i * 3 + (size_t)j] != ident(t, k % 6 + j) && ++bad)
                MTEST_CHECK(0, "phase %d target %d round %d: get of 24 B, element %d got %lld, expected %lld", p, t, k,
                            j, (long long)r->g24[i * 3 + (size_t)j], (long long)ident(t, k % 6 + j));
        if (rq_round(k) && r->grq[i] != ident(t, 7) && ++bad)
            MTEST_CHECK(0, "phase %d target %d round %d: Rget got %lld", p, t, k, (long long)r->grq[i]);
        if (rq_round(k) && r->gacc[i] != ident(t, 6) && ++bad)
            MTEST_CHECK(0, "phase %d target %d round %d: Rget_accumulate got %lld", p, t, k, (long long)r->gacc[i]);
    }
    char what[64];
    for (int k = 0; k < R / 4; k++) {
        snprintf(what, sizeof what, "phase %d target %d get of 2 KiB %d", p, t, k);
        mtest_check_buf(r->gmid + ((size_t)t * (R / 4) + (size_t)k) * (MID / 8), MID, (unsigned)t + 100u, what);
    }
    for (int k = 0; k < NBIG; k++) {
        snprintf(what, sizeof what, "phase %d target %d get of 32 KiB %d", p, t, k);
        mtest_check_buf(r->big + ((size_t)t * NBIG + (size_t)k) * BIG, BIG, (unsigned)t + 100u, what);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank, n = mtest_size;
    int allocate = argc > 1 && strcmp(argv[1], "allocate") == 0;
    size_t words = 2 * (size_t)n + IDN;
    size_t bytes = words * 8 + BIG;
    char *mem;
    MPI_Win win;
    if (allocate)
        MTEST_OK(MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    else {
        mem = mtest_malloc(bytes);
        MTEST_OK(MPI_Win_create(mem, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    }
    int64_t *w64 = (int64_t *)(void *)mem;
    for (int o = 0; o < n; o++) {
        w64[o] = fop_base(me, o);
        w64[n + o] = cas_base(me, o);
    }
    for (int j = 0; j < IDN; j++)
        w64[2 * n + j] = ident(me, j);
    mtest_fill(mem + words * 8, BIG, (unsigned)me + 100u);
    const MPI_Aint fop_at = (MPI_Aint)me * 8, cas_at = (MPI_Aint)(n + me) * 8, id_at = (MPI_Aint)(2 * n) * 8,
                   big_at = (MPI_Aint)words * 8;
    MPI_Barrier(MPI_COMM_WORLD);

    results_t r;
    r.fop = mtest_malloc((size_t)n * R * 8);
    r.cas = mtest_malloc((size_t)n * R * 8);
    r.g8 = mtest_malloc((size_t)n * R * 8);
    r.grq = mtest_malloc((size_t)n * R * 8);
    r.gacc = mtest_malloc((size_t)n * R * 8);
    r.g24 = mtest_malloc((size_t)n * R * 3 * 8);
    r.gmid = mtest_malloc((size_t)n * (R / 4) * MID);
    r.big = mtest_malloc((size_t)n * NBIG * BIG);
    MPI_Request *reqs = mtest_malloc((size_t)n * R * 2 * sizeof *reqs);
    const int64_t one = 1;

    MTEST_OK(MPI_Win_lock_all(0, win));
    for (int p = 0; p < 3; p++) {
        fill_sentinel(&r, n);
        int nreq = 0;
        for (int k = 0; k < R; k++) {
            for (int s = 0; s < n; s++) {
                int t = (me + s) % n; /* ranks start at different targets */
                size_t i = (size_t)t * R + (size_t)k;
                int64_t cmp = cas_base(t, me) + (int64_t)p * R + k, swp = cmp + 1;
                MTEST_OK(MPI_Fetch_and_op(&one, &r.fop[i], MPI_INT64_T, t, fop_at, MPI_SUM, win));
                MTEST_OK(MPI_Compare_and_swap(&swp, &cmp, &r.cas[i], MPI_INT64_T, t, cas_at, win));
                MTEST_OK(MPI_Get(&r.g8[i], 1, MPI_INT64_T, t, id_at + (MPI_Aint)(k % IDN) * 8, 1, MPI_INT64_T, win));
                MTEST_OK(MPI_Get(&r.g24[i * 3], 3, MPI_INT64_T, t, id_at + (MPI_Aint)(k % 6) * 8, 3, MPI_INT64_T, win));
                if (k % 4 == 0)
                    MTEST_OK(MPI_Get(r.gmid + ((size_t)t * (R / 4) + (size_t)k / 4) * (MID / 8), MID, MPI_BYTE, t,
                                     big_at, MID, MPI_BYTE, win));
                if (k % 16 == 0)
                    MTEST_OK(MPI_Get(r.big + ((size_t)t * NBIG + (size_t)k / 16) * BIG, BIG, MPI_BYTE, t, big_at, BIG,
                                     MPI_BYTE, win));
                if (rq_round(k)) {
                    MTEST_OK(MPI_Rget(&r.grq[i], 1, MPI_INT64_T, t, id_at + 7 * 8, 1, MPI_INT64_T, win, &reqs[nreq++]));
                    MTEST_OK(MPI_Rget_accumulate(&one, 1, MPI_INT64_T, &r.gacc[i], 1, MPI_INT64_T, t, id_at + 6 * 8, 1,
                                                 MPI_INT64_T, MPI_NO_OP, win, &reqs[nreq++]));
                }
            }
            if (p == 2 && k % 3 == 2)
                MTEST_OK(MPI_Win_flush_all(win));
        }
        if (p != 1) {
            MTEST_OK(MPI_Win_flush_all(win));
            MTEST_OK(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
            for (int t = 0; t < n; t++)
                check_target(&r, t, p, me);
        } else {
            MTEST_OK(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
            for (int s = n - 1; s >= 0; s--) { /* the last target issued to first */
                int t = (me + s) % n;
                MTEST_OK(MPI_Win_flush(t, win));
                check_target(&r, t, p, me);
            }
        }
    }
    MTEST_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    /* every origin's operations on our counters: R per phase each, 3 phases */
    for (int o = 0; o < n; o++) {
        MTEST_CHECK(w64[o] == fop_base(me, o) + 3 * R, "counter of origin %d: %lld, expected %lld", o,
                    (long long)w64[o], (long long)(fop_base(me, o) + 3 * R));
        MTEST_CHECK(w64[n + o] == cas_base(me, o) + 3 * R, "compare-and-swap word of origin %d: %lld, expected %lld", o,
                    (long long)w64[n + o], (long long)(cas_base(me, o) + 3 * R));
    }
    MTEST_OK(MPI_Win_free(&win));
    if (!allocate)
        free(mem);
    free(r.fop);
    free(r.cas);
    free(r.g8);
    free(r.grq);
    free(r.gacc);
    free(r.g24);
    free(r.gmid);
    free(r.big);
    free(reqs);
    return mtest_finalize();
}
