/* Windows of large puts in flight, as one-sided put_bw runs them: under lock_all, rank 0
 * puts 64 blocks then flushes, 8 times a round, in rounds of 64 KiB and 1 MiB blocks
 * alternating, into 16 block slots of every other rank's window (put k into slot k % 16,
 * from origin memory that holds slot k % 16's pattern, so every put of a slot carries the
 * same bytes); then 64 accumulates (MPI_SUM of ints) of 1 MiB into a second window. Puts
 * of 256 KiB or more and accumulates of 64 KiB or more from contiguous memory go as a
 * message made of a header and the user's buffer when the target is reached by messages (RMPI_RMA_RDMA=0,
 * or dynamic windows across nodes): over libfabric those are rendezvous the origin
 * writes, and a chunked write's fence once held them forever (src/net/ofi/README.md: 3
 * runs in 4 hung over tcp;ofi_rxm). Every target checks its window after each round. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPUT 64
#define SLOTS 16
#define BIG (1 << 20)
#define WINDOWS 8

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const int me = mtest_rank, np = mtest_size;
    const size_t wbytes = (size_t)SLOTS * BIG;
    unsigned char *obuf = mtest_malloc(wbytes), *tbuf;
    MPI_Win win, awin;
    MTEST_OK(MPI_Win_allocate((MPI_Aint)wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &tbuf, &win));
    int *abuf;
    MTEST_OK(MPI_Win_allocate(BIG, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &abuf, &awin));
    memset(abuf, 0, BIG);
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    static const size_t sizes[] = {65536, BIG, 65536, BIG};
    for (int round = 0; round < (int)(sizeof sizes / sizeof *sizes); round++) {
        const size_t sz = sizes[round];
        if (me == 0) {
            for (int s = 0; s < SLOTS; s++)
                mtest_fill(obuf + (size_t)s * sz, sz, mtest_seed(round, s, 0));
            MTEST_OK(MPI_Win_lock_all(0, win));
            for (int w = 0; w < WINDOWS; w++)
                for (int t = 1; t < np; t++) {
                    for (int k = 0; k < NPUT; k++) {
                        MPI_Aint at = (MPI_Aint)((size_t)(k % SLOTS) * sz);
                        MTEST_OK(MPI_Put(obuf + at, (int)sz, MPI_BYTE, t, at, (int)sz, MPI_BYTE, win));
                    }
                    MTEST_OK(MPI_Win_flush(t, win));
                }
            MTEST_OK(MPI_Win_unlock_all(win));
        }
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (me != 0)
            for (int s = 0; s < SLOTS; s++) {
                char what[80];
                snprintf(what, sizeof what, "round %d (%zu bytes) slot %d", round, sz, s);
                mtest_check_buf(tbuf + (size_t)s * sz, sz, mtest_seed(round, s, 0), what);
            }
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    const int nint = BIG / (int)sizeof(int);
    if (me == 0) {
        int *one = (int *)(void *)obuf;
        for (int i = 0; i < nint; i++)
            one[i] = i % 7 + 1;
        MTEST_OK(MPI_Win_lock_all(0, awin));
        for (int t = 1; t < np; t++) {
            for (int k = 0; k < NPUT; k++)
                MTEST_OK(MPI_Accumulate(one, nint, MPI_INT, t, 0, nint, MPI_INT, MPI_SUM, awin));
            MTEST_OK(MPI_Win_flush(t, awin));
        }
        MTEST_OK(MPI_Win_unlock_all(awin));
    }
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me != 0) {
        int bad = 0, first = -1;
        for (int i = 0; i < nint; i++)
            if (abuf[i] != NPUT * (i % 7 + 1) && bad++ == 0)
                first = i;
        MTEST_CHECK(bad == 0, "accumulates: %d wrong ints, the first at %d (%d, expected %d)", bad, first,
                    first >= 0 ? abuf[first] : 0, first >= 0 ? NPUT * (first % 7 + 1) : 0);
    }
    MTEST_OK(MPI_Win_free(&awin));
    MTEST_OK(MPI_Win_free(&win));
    free(obuf);
    return mtest_finalize();
}
