/* Passive target: every rank increments counters at every rank under exclusive locks
 * (Fetch_and_op, Compare_and_swap loops, get + put read-modify-write, which is only
 * correct if the lock excludes the others), shared locks with Lock_all and flushes;
 * the exact final values are checked. */
#include "mtest.h"

#define ITERS 20

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long *mem;
    MPI_Win win;
    MTEST_OK(MPI_Win_allocate(4 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (int i = 0; i < 4; i++)
        mem[i] = 0;
    MTEST_OK(MPI_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);

    long one = 1, old, prevs = 0;
    for (int it = 0; it < ITERS; it++)
        for (int t = 0; t < size; t++) {
            /* slot 0: fetch_and_op; the fetched values of one rank are increasing */
            MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
            MTEST_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, t, 0, MPI_SUM, win));
            MTEST_OK(MPI_Win_flush(t, win));
            MTEST_CHECK(old >= 0 && old < (long)size * ITERS, "fetched %ld", old);
            /* slot 1: compare_and_swap until it takes */
            long cur = 0, seen;
            for (;;) {
                long want = cur + 1;
                MTEST_OK(MPI_Compare_and_swap(&want, &cur, &seen, MPI_LONG, t, 1, win));
                MTEST_OK(MPI_Win_flush(t, win));
                if (seen == cur)
                    break;
                cur = seen;
            }
            /* slot 2: get, add, put under the exclusive lock */
            long v = -1;
            MTEST_OK(MPI_Get(&v, 1, MPI_LONG, t, 2, 1, MPI_LONG, win));
            MTEST_OK(MPI_Win_flush(t, win));
            v += 1;
            MTEST_OK(MPI_Put(&v, 1, MPI_LONG, t, 2, 1, MPI_LONG, win));
            MTEST_OK(MPI_Win_unlock(t, win));
            prevs += old;
        }
    (void)prevs;
    /* slot 3: accumulates under shared locks from everyone at once */
    MTEST_OK(MPI_Win_lock_all(0, win));
    for (int it = 0; it < ITERS; it++)
        for (int t = 0; t < size; t++)
            MTEST_OK(MPI_Accumulate(&one, 1, MPI_LONG, t, 3, 1, MPI_LONG, MPI_SUM, win));
    MTEST_OK(MPI_Win_flush_all(win));
    MTEST_OK(MPI_Win_flush_local_all(win));
    MTEST_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);

    MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    long want = (long)size * ITERS;
    for (int i = 0; i < 4; i++)
        MTEST_CHECK(mem[i] == want, "slot %d = %ld, expected %ld", i, mem[i], want);
    MTEST_OK(MPI_Win_sync(win));
    MTEST_OK(MPI_Win_unlock(rank, win));

    /* a shared lock of every rank on rank 0 at once, with a fetch of the counter */
    MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    long got = -1;
    MTEST_OK(MPI_Fetch_and_op(NULL, &got, MPI_LONG, 0, 0, MPI_NO_OP, win));
    MTEST_OK(MPI_Win_flush_local(0, win));
    MTEST_CHECK(got == want, "no_op fetch %ld", got);
    MTEST_OK(MPI_Win_unlock(0, win));
    /* MPI_MODE_NOCHECK: no lock message, but unlock still completes the put remotely */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        for (int t = 0; t < size; t++) {
            long z = 42;
            MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, MPI_MODE_NOCHECK, win));
            MTEST_OK(MPI_Put(&z, 1, MPI_LONG, t, 0, 1, MPI_LONG, win));
            MTEST_OK(MPI_Win_unlock(t, win));
        }
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_CHECK(mem[0] == 42, "nocheck put: %ld", mem[0]);
    MTEST_OK(MPI_Win_free(&win));
    return mtest_finalize();
}
