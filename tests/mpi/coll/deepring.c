/* Bcasts and Reduces through the segment's deep ring (2 ranks with a core each, up to
 * RMPI_COLL_SHM_BCAST_DEEP / _REDUCE_DEEP bytes: 16 KiB slots laid over the members' step
 * buffers) mixed with calls that use those buffers in other ways: single copy (its tables
 * and the step number in each buffer's first line, RMPI_COLL_SHM_*_CMA), Reduce and
 * Allreduce steps in the buffers, multi-step Bcasts above the ring, and non-blocking Bcasts
 * many at a time. Every slot is used at every size, so the slots whose data lie next to a
 * buffer's first line are written too: a slot that covered it would let a reader take the
 * stale data there for a published step (a wrong result, or a cross-memory copy to a
 * garbage address). Sizes on both sides of 16 KiB (one slot) and of the ring's limit; roots
 * alternate, Reduces in place at the root in odd rounds, the other rank overwriting its
 * operand as soon as its call returns (single copy releases it once the root has read it);
 * every 7th round the others sleep 2 ms while rank 0 roots 80 Bcasts, so it runs the whole
 * ring ahead and waits for slots. Every buffer is checked against its pattern or its sum. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static const int sizes[] = {200, 1000, 4096, 8000, 16000, 16384, 16448, 20000, 32768, 40000};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])
#define MAXB 40000
#define BIG (128 * 1024)
#define NB 12

static void nap(void)
{
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank, n = mtest_size;
    char *b = mtest_malloc(MAXB), *nb = mtest_malloc((size_t)NB * MAXB);
    char *big = mtest_malloc(BIG), *all = mtest_malloc((size_t)n * BIG);
    int *iv = mtest_malloc(BIG), *isum = mtest_malloc(BIG);
    size_t ni = BIG / sizeof(int);
    for (int round = 0; round < 40; round++) {
        if (round % 7 == 6) { /* the root runs the ring full while the others sleep */
            if (me)
                nap();
            for (int i = 0; i < 80; i++) {
                unsigned seed = (unsigned)(round * 1000 + i);
                if (me == 0)
                    mtest_fill(b, 4096, seed);
                else
                    memset(b, 0, 4096);
                MTEST_OK(MPI_Bcast(b, 4096, MPI_BYTE, 0, MPI_COMM_WORLD));
                if (mtest_check_buf(b, 4096, seed, "deep Bcast"))
                    MTEST_CHECK(0, "round %d: Bcast %d of 4096 bytes wrong", round, i);
            }
        }
        for (int k = 0; k < NSIZES; k++) {
            int root = (round + k) % n, sz = sizes[k];
            unsigned seed = (unsigned)(round * 100 + k);
            if (me == root)
                mtest_fill(b, (size_t)sz, seed);
            else
                memset(b, 0, (size_t)sz);
            MTEST_OK(MPI_Bcast(b, sz, MPI_BYTE, root, MPI_COMM_WORLD));
            if (mtest_check_buf(b, (size_t)sz, seed, "deep Bcast"))
                MTEST_CHECK(0, "round %d: Bcast of %d bytes from %d wrong", round, sz, root);
        }
        /* Reduces of the ring's sizes (the other rank's operand in a slot), to both roots,
         * in place at the root in odd rounds; the sum in rank order is exact in ints */
        for (int k = 0; k < NSIZES; k++) {
            int root = (round + k + 1) % n, cnt = sizes[k] / (int)sizeof(int);
            for (int i = 0; i < cnt; i++)
                iv[i] = (i + round) * (me + 1);
            int in_place = (round & 1) && me == root;
            MTEST_OK(MPI_Reduce(in_place ? MPI_IN_PLACE : iv, in_place ? iv : isum, cnt, MPI_INT, MPI_SUM, root,
                                MPI_COMM_WORLD));
            if (me != root) /* a rank released early (before its operand was read) shows here */
                memset(iv, 0xff, (size_t)cnt * sizeof(int));
            const int *got = in_place ? iv : isum;
            for (int i = 0; me == root && i < cnt; i++)
                if (got[i] != (i + round) * n * (n + 1) / 2) {
                    MTEST_CHECK(0, "round %d: Reduce of %d ints to %d%s: element %d is %d, expected %d", round, cnt,
                                root, in_place ? " in place" : "", i, got[i], (i + round) * n * (n + 1) / 2);
                    break;
                }
        }
        /* the buffers in single copy: an Allgather of 128 KiB blocks, a Bcast of them */
        mtest_fill(big, BIG, (unsigned)(round * 7 + me));
        MTEST_OK(MPI_Allgather(big, BIG, MPI_BYTE, all, BIG, MPI_BYTE, MPI_COMM_WORLD));
        for (int r = 0; r < n; r++)
            if (mtest_check_buf(all + (size_t)r * BIG, BIG, (unsigned)(round * 7 + r), "Allgather"))
                MTEST_CHECK(0, "round %d: Allgather block of %d wrong", round, r);
        int root = round % n;
        mtest_fill(big, BIG, (unsigned)round + 5000);
        if (me != root)
            memset(big, 0, BIG);
        MTEST_OK(MPI_Bcast(big, BIG, MPI_BYTE, root, MPI_COMM_WORLD));
        if (mtest_check_buf(big, BIG, (unsigned)round + 5000, "large Bcast"))
            MTEST_CHECK(0, "round %d: Bcast of %d bytes wrong", round, BIG);
        /* the buffers as Reduce and Allreduce steps, large (single copy) and small */
        for (size_t i = 0; i < ni; i++)
            iv[i] = (int)(i % 1000) * (me + 1) + round;
        size_t counts[2] = {ni, 1000};
        for (int c = 0; c < 2; c++) {
            MTEST_OK(c ? MPI_Allreduce(iv, isum, (int)counts[c], MPI_INT, MPI_SUM, MPI_COMM_WORLD)
                       : MPI_Reduce(iv, isum, (int)counts[c], MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
            if (c || me == root)
                for (size_t i = 0; i < counts[c]; i++) {
                    int want = (int)(i % 1000) * n * (n + 1) / 2 + n * round;
                    if (isum[i] != want) {
                        MTEST_CHECK(0, "round %d: %s element %zu is %d, expected %d", round, c ? "Allreduce" : "Reduce",
                                    i, isum[i], want);
                        break;
                    }
                }
        }
        /* NB Ibcasts in flight at once, of the ring's sizes */
        MPI_Request req[NB];
        for (int j = 0; j < NB; j++) {
            int sz = sizes[(round + j) % NSIZES];
            char *p = nb + (size_t)j * MAXB;
            if (me == root)
                mtest_fill(p, (size_t)sz, (unsigned)(round * 31 + j));
            else
                memset(p, 0, (size_t)sz);
            MTEST_OK(MPI_Ibcast(p, sz, MPI_BYTE, root, MPI_COMM_WORLD, &req[j]));
        }
        MTEST_OK(MPI_Waitall(NB, req, MPI_STATUSES_IGNORE));
        for (int j = 0; j < NB; j++)
            if (mtest_check_buf(nb + (size_t)j * MAXB, (size_t)sizes[(round + j) % NSIZES], (unsigned)(round * 31 + j),
                                "Ibcast"))
                MTEST_CHECK(0, "round %d: Ibcast %d wrong", round, j);
    }
    free(b);
    free(nb);
    free(big);
    free(all);
    free(iv);
    free(isum);
    return mtest_finalize();
}
