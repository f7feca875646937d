/* Passive-target locks requested with the first operation (lazy locks, docs/wire/rma.md):
 * - exclusive contention: every rank increments a counter on the last rank ITERS times
 *   with Get, Flush, Put under an exclusive lock (correct only if the lock excludes the
 *   others), then a second counter with Get + Put and no flush between lock and unlock
 *   (the get's answer lands at unlock): the final values are exact;
 * - shared readers: under a shared lock two Gets of the counter pair, separated by a flush,
 *   see equal values (no exclusive writer got in between) while others write;
 * - a lock with no operation, a lock whose only operation is a get, Lock_all with one
 *   target written, and MPI_MODE_NOCHECK (disjoint targets chosen by rank, no lock
 *   message): every value checked;
 * - a target whose only calls are lock_all epochs on its own memory serves the others,
 *   and one whose only calls are Lock/Unlock of its own memory, or Flush of it. */
#include "mtest.h"

#define ITERS 40

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long *mem;
    MPI_Win win;
    MTEST_OK(MPI_Win_allocate(8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (int i = 0; i < 8; i++)
        mem[i] = 0;
    MTEST_OK(MPI_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);
    int t = size - 1;

    for (int it = 0; it < ITERS; it++) {
        long v = -1, pair[2] = {-1, -1};
        /* slots 0 and 1 always move together under the exclusive lock */
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        MTEST_OK(MPI_Get(pair, 2, MPI_LONG, t, 0, 2, MPI_LONG, win));
        MTEST_OK(MPI_Win_flush(t, win));
        MTEST_CHECK(pair[0] == pair[1], "iteration %d: slots 0 and 1 differ under an exclusive lock: %ld %ld", it,
                    pair[0], pair[1]);
        pair[0]++;
        pair[1]++;
        MTEST_OK(MPI_Put(pair, 2, MPI_LONG, t, 0, 2, MPI_LONG, win));
        MTEST_OK(MPI_Win_unlock(t, win));

        /* slot 2: get and put in one epoch without a flush: the put must not overtake */
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        MTEST_OK(MPI_Get(&v, 1, MPI_LONG, t, 2, 1, MPI_LONG, win));
        MTEST_OK(MPI_Win_flush_local(t, win));
        v++;
        MTEST_OK(MPI_Put(&v, 1, MPI_LONG, t, 2, 1, MPI_LONG, win));
        MTEST_OK(MPI_Win_unlock(t, win));

        /* a shared reader: the pair stays equal between two reads */
        long a[2] = {-1, -2}, b[2] = {-3, -4};
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        MTEST_OK(MPI_Get(a, 2, MPI_LONG, t, 0, 2, MPI_LONG, win));
        MTEST_OK(MPI_Win_flush(t, win));
        MTEST_OK(MPI_Get(b, 2, MPI_LONG, t, 0, 2, MPI_LONG, win));
        MTEST_OK(MPI_Win_unlock(t, win));
        MTEST_CHECK(a[0] == a[1] && b[0] == b[1] && a[0] == b[0],
                    "iteration %d: a shared lock saw a writer: %ld %ld then %ld %ld", it, a[0], a[1], b[0], b[1]);

        /* a lock and unlock with nothing between them */
        MTEST_OK(MPI_Win_lock(it % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, t, 0, win));
        MTEST_OK(MPI_Win_unlock(t, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long got[3] = {-1, -1, -1};
    MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    MTEST_OK(MPI_Get(got, 3, MPI_LONG, t, 0, 3, MPI_LONG, win));
    MTEST_OK(MPI_Win_unlock(t, win));
    long want = (long)size * ITERS;
    MTEST_CHECK(got[0] == want && got[1] == want && got[2] == want, "counters %ld %ld %ld, expected %ld each", got[0],
                got[1], got[2], want);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Lock_all, one accumulate to one target only */
    long one = 1;
    MTEST_OK(MPI_Win_lock_all(0, win));
    MTEST_OK(MPI_Accumulate(&one, 1, MPI_LONG, (rank + 1) % size, 3, 1, MPI_LONG, MPI_SUM, win));
    MTEST_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    MTEST_CHECK(mem[3] == 1, "slot 3 is %ld after one accumulate from the rank before", mem[3]);
    MTEST_OK(MPI_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* NOCHECK: each rank writes only slot 4 + 0 of the next rank, whose slot nobody else
     * touches, several times, then reads it back under NOCHECK too */
    for (int it = 0; it < ITERS; it++) {
        long x = 1000L * rank + it, y = -1;
        int to = (rank + 1) % size;
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, to, MPI_MODE_NOCHECK, win));
        MTEST_OK(MPI_Put(&x, 1, MPI_LONG, to, 4, 1, MPI_LONG, win));
        MTEST_OK(MPI_Win_flush(to, win));
        MTEST_OK(MPI_Get(&y, 1, MPI_LONG, to, 4, 1, MPI_LONG, win));
        MTEST_OK(MPI_Win_unlock(to, win));
        MTEST_CHECK(y == x, "NOCHECK: read %ld back, wrote %ld", y, x);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    long from = (rank - 1 + size) % size;
    MTEST_CHECK(mem[4] == 1000L * from + ITERS - 1, "slot 4 is %ld, expected %ld", mem[4], 1000L * from + ITERS - 1);
    MTEST_OK(MPI_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* A target whose only MPI calls are lock_all epochs on its own memory must still
     * serve the others (mpi4py.util.sync's Condition hung on it with lazy lock_all): rank
     * 0 polls slot 5 with fetch-and-op under lock_all until every other rank has asked it
     * for a fetch-and-add of slot 6, waited for the answer, and then set slot 5's count. */
    if (rank == 0) {
        long seen = 0, zero = 0;
        while (seen < size - 1) {
            MTEST_OK(MPI_Win_lock_all(0, win));
            MTEST_OK(MPI_Fetch_and_op(&zero, &seen, MPI_LONG, 0, 5, MPI_NO_OP, win));
            MTEST_OK(MPI_Win_flush(0, win));
            MTEST_OK(MPI_Win_unlock_all(win));
        }
        MTEST_CHECK(mem[6] == size - 1, "slot 6 is %ld after %d fetch-and-adds", mem[6], size - 1);
    } else {
        long old = -1;
        MTEST_OK(MPI_Win_lock_all(0, win));
        MTEST_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 6, MPI_SUM, win));
        MTEST_OK(MPI_Win_flush(0, win));
        MTEST_CHECK(old >= 0 && old < size - 1, "fetch-and-add of slot 6 fetched %ld", old);
        MTEST_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, 5, 1, MPI_LONG, MPI_SUM, win));
        MTEST_OK(MPI_Win_unlock_all(win));
    }

    /* The same with Win_lock on our own memory, which sends and waits for nothing: rank 0
     * loops on Lock(self), a local store, a load of slot 7 and Unlock(self) until every
     * other rank's accumulate into slot 7 (after its fetch-and-add of slot 6, whose answer
     * rank 0 must give) is in; then on Flush(self) and loads of slot 7 inside one shared
     * lock, until the others' second round is in. Each hangs without its poll (tcp, two
     * fake nodes; or RMPI_RMA_DIRECT=0). */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int round = 1; round <= 2; round++) {
        if (rank == 0) {
            long n = 0;
            if (round == 2)
                MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            while (n < round * (size - 1)) {
                if (round == 1)
                    MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
                else
                    MTEST_OK(MPI_Win_flush(0, win));
                if (round == 1)
                    __atomic_store_n(&mem[0], n, __ATOMIC_RELAXED);
                n = __atomic_load_n(&mem[7], __ATOMIC_RELAXED);
                if (round == 1)
                    MTEST_OK(MPI_Win_unlock(0, win));
            }
            if (round == 2)
                MTEST_OK(MPI_Win_unlock(0, win));
            MTEST_CHECK(mem[6] == (round + 1) * (size - 1), "round %d: slot 6 is %ld after the fetch-and-adds", round,
                        mem[6]);
        } else {
            long old = -1;
            MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
            MTEST_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 6, MPI_SUM, win));
            MTEST_OK(MPI_Win_flush(0, win));
            MTEST_CHECK(old >= round * (size - 1) && old < (round + 1) * (size - 1),
                        "round %d: fetch-and-add of slot 6 fetched %ld", round, old);
            MTEST_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, 7, 1, MPI_LONG, MPI_SUM, win));
            MTEST_OK(MPI_Win_unlock(0, win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }

    MTEST_OK(MPI_Win_free(&win));
    return mtest_finalize();
}
