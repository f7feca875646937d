/* The bindings' short paths to targets of this node (src/rma/direct.c), against a model:
 * - Get_accumulate, Accumulate and Fetch_and_op of 1, 3 and 40 elements of 1-, 2-, 4- and
 *   8-byte signed and unsigned integers with every operation the short path takes (up to
 *   32 elements: plain arithmetic under the accumulate lock; 40: the reduction kernel
 *   under it), aligned and misaligned, on the next rank's window:
 *   the fetched values and the window's new contents are what the model computes;
 * - contention from every rank: fetch-and-adds and 2-element accumulates (the lock on the
 *   short path, atomics where the target applies them) on the same two counters of rank
 *   0, and fetch-and-adds on a misaligned counter (the lock): exact totals, and every
 *   fetched value of counter 0 seen once;
 * - puts and gets of contiguous predefined types in lock_all, lock and fence epochs, and
 *   through PSCW (the general path) in between: what was put is read back;
 * - a flush orders the puts before it against every later load (store-buffering, as in
 *   Dekker's algorithm): ranks 0 and 1 each put the round number to the other, flush, and
 *   get the one the other put; both reading an older round breaks MPI's "complete at the
 *   target" (x86 lets a load pass a store that a flush did not fence); half of the rounds
 *   put on one window and get from another.
 * With RMPI_RMA_DIRECT=0 the same checks run as active messages (the model is the same). */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define WIN_BYTES 1024
#define N 300

static const MPI_Op ops[] = {MPI_SUM, MPI_MIN, MPI_MAX, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_REPLACE, MPI_NO_OP};

/* x op a for one element of es bytes, signed or not, in 64 bits */
static uint64_t model(MPI_Op op, uint64_t a, uint64_t x, size_t es, int sgn)
{
    int sh = 64 - 8 * (int)es;
    int64_t sa = (int64_t)(a << sh) >> sh, sx = (int64_t)(x << sh) >> sh; /* sign-extended */
    uint64_t mask = es == 8 ? UINT64_MAX : ((uint64_t)1 << (8 * es)) - 1, ua = a & mask, ux = x & mask;
    int lt = sgn ? sx < sa : ux < ua, gt = sgn ? sx > sa : ux > ua;
    if (op == MPI_SUM)
        return (a + x) & mask;
    if (op == MPI_MIN)
        return lt ? ux : ua;
    if (op == MPI_MAX)
        return gt ? ux : ua;
    if (op == MPI_BAND)
        return ua & ux;
    if (op == MPI_BOR)
        return ua | ux;
    if (op == MPI_BXOR)
        return ua ^ ux;
    if (op == MPI_REPLACE)
        return ux;
    return ua;
}

static uint64_t load(const unsigned char *p, size_t es)
{
    uint64_t v = 0;
    memcpy(&v, p, es); /* little-endian: the low bytes */
    return v;
}

static void elementwise(int rank, int size, unsigned char *mem, MPI_Win win)
{
    static const MPI_Datatype types[] = {MPI_INT8_T,  MPI_UINT8_T,  MPI_INT16_T, MPI_UINT16_T,
                                         MPI_INT32_T, MPI_UINT32_T, MPI_INT64_T, MPI_UINT64_T};
    static const int counts[] = {1, 3, 40};
    int t = (rank + 1) % size;
    unsigned seed = 12345u + (unsigned)rank;
    MTEST_OK(MPI_Win_lock_all(0, win));
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        size_t es = (size_t)1 << (ti / 2);
        int sgn = !(ti & 1);
        for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
            for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
                for (int mis = 0; mis < 2; mis++) {
                    int n = counts[ci];
                    /* the region of the window this rank owns on its target: rank r writes
                     * rank r+1's window only; misaligned by one byte */
                    MPI_Aint disp = 8 + mis;
                    unsigned char before[8 * 40], x[8 * 40], got[8 * 40], after[8 * 40];
                    for (size_t i = 0; i < n * es; i++) {
                        seed = seed * 1103515245u + 12345u;
                        before[i] = (unsigned char)(seed >> 16);
                        seed = seed * 1103515245u + 12345u;
                        x[i] = (unsigned char)(seed >> 16);
                    }
                    MTEST_OK(MPI_Put(before, (int)(n * es), MPI_BYTE, t, disp, (int)(n * es), MPI_BYTE, win));
                    MTEST_OK(MPI_Win_flush(t, win));
                    if (n == 1 && (oi & 1))
                        MTEST_OK(MPI_Fetch_and_op(x, got, types[ti], t, disp, ops[oi], win));
                    else
                        MTEST_OK(MPI_Get_accumulate(x, n, types[ti], got, n, types[ti], t, disp, n, types[ti], ops[oi],
                                                    win));
                    MTEST_OK(MPI_Win_flush(t, win));
                    /* and a plain accumulate on top, with the same operand */
                    MTEST_OK(MPI_Accumulate(x, n, types[ti], t, disp, n, types[ti], ops[oi], win));
                    MTEST_OK(MPI_Win_flush(t, win));
                    MTEST_OK(MPI_Get(after, (int)(n * es), MPI_BYTE, t, disp, (int)(n * es), MPI_BYTE, win));
                    MTEST_OK(MPI_Win_flush(t, win));
                    int bad = 0;
                    for (int i = 0; i < n && !bad; i++) {
                        uint64_t a = load(before + i * es, es), v = load(x + i * es, es);
                        uint64_t once = model(ops[oi], a, v, es, sgn), twice = model(ops[oi], once, v, es, sgn);
                        if (load(got + i * es, es) != a || load(after + i * es, es) != twice)
                            bad = 1;
                    }
                    MTEST_CHECK(!bad, "type %zu op %zu count %d misaligned %d: fetched or stored values differ", ti, oi,
                                n, mis);
                }
    }
    MTEST_OK(MPI_Win_unlock_all(win));
    (void)mem;
}

static int cmp(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static void contention(int rank, int size, unsigned char *mem, MPI_Win win)
{
    /* counters on rank 0: two aligned longs at 0 and 8, one misaligned long at 17 */
    if (rank == 0) {
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        memset(mem, 0, 32);
        MTEST_OK(MPI_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    long one = 1, two[2] = {2, 3}, *got = malloc(N * sizeof(long)), old;
    MTEST_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < N; i++) {
        MTEST_OK(MPI_Fetch_and_op(&one, &got[i], MPI_LONG, 0, 0, MPI_SUM, win));
        MTEST_OK(MPI_Accumulate(two, 2, MPI_LONG, 0, 0, 2, MPI_LONG, MPI_SUM, win));
        MTEST_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 8, MPI_SUM, win));
        MTEST_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 17, MPI_SUM, win));
        MTEST_OK(MPI_Win_flush(0, win));
    }
    MTEST_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    /* every fetched value of counter 0 is distinct (each fetch saw a different sum) */
    long *all = rank == 0 ? malloc((size_t)size * N * sizeof(long)) : NULL;
    MPI_Gather(got, N, MPI_LONG, all, N, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        long c0, c1, c2;
        memcpy(&c0, mem, 8);
        memcpy(&c1, mem + 8, 8);
        memcpy(&c2, mem + 17, 8);
        MTEST_OK(MPI_Win_unlock(0, win));
        long total = (long)size * N;
        MTEST_CHECK(c0 == 3 * total && c1 == 4 * total && c2 == total, "counters %ld %ld %ld, expected %ld %ld %ld", c0,
                    c1, c2, 3 * total, 4 * total, total);
        qsort(all, (size_t)size * N, sizeof(long), cmp);
        int dup = 0;
        for (long i = 1; i < total; i++)
            dup += all[i] == all[i - 1];
        MTEST_CHECK(!dup, "%d fetched values of counter 0 seen twice", dup);
        free(all);
    }
    free(got);
}

static void copies(int rank, int size, MPI_Win win)
{
    int t = (rank + 1) % size, from = (rank + size - 1) % size;
    double d[5] = {1.5, -2, 3, 1e300, 0.25}, dr[5];
    short s[7] = {1, -2, 3, -4, 5, -6, 7}, sr[7];
    MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    MTEST_OK(MPI_Put(d, 5, MPI_DOUBLE, t, 64, 5, MPI_DOUBLE, win));
    MTEST_OK(MPI_Put(s, 7, MPI_SHORT, t, 200, 7, MPI_SHORT, win));
    MTEST_OK(MPI_Get(dr, 5, MPI_DOUBLE, t, 64, 5, MPI_DOUBLE, win));
    MTEST_OK(MPI_Get(sr, 7, MPI_SHORT, t, 200, 7, MPI_SHORT, win));
    MTEST_OK(MPI_Win_unlock(t, win));
    MTEST_CHECK(!memcmp(d, dr, sizeof d) && !memcmp(s, sr, sizeof s), "lock epoch: got back other data");
    /* fence epoch: put to the next rank, then read what the previous one put here */
    int mine[3] = {rank, rank * 10, rank * 100}, seen[3];
    MTEST_OK(MPI_Win_fence(0, win));
    MTEST_OK(MPI_Put(mine, 3, MPI_INT, t, 300, 3, MPI_INT, win));
    MTEST_OK(MPI_Win_fence(0, win));
    MTEST_OK(MPI_Get(seen, 3, MPI_INT, t, 300, 3, MPI_INT, win));
    MTEST_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MTEST_CHECK(seen[0] == rank && seen[1] == rank * 10 && seen[2] == rank * 100, "fence epoch: %d %d %d", seen[0],
                seen[1], seen[2]);
    /* PSCW (the general path), then the short path again in a lock_all epoch */
    MPI_Group world, to, by;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &t, &to);
    MPI_Group_incl(world, 1, &from, &by);
    MTEST_OK(MPI_Win_post(by, 0, win));
    MTEST_OK(MPI_Win_start(to, 0, win));
    int pv = 1000 + rank;
    MTEST_OK(MPI_Put(&pv, 1, MPI_INT, t, 400, 1, MPI_INT, win));
    MTEST_OK(MPI_Win_complete(win));
    MTEST_OK(MPI_Win_wait(win));
    MTEST_OK(MPI_Win_lock_all(0, win));
    int back = 0;
    MTEST_OK(MPI_Get(&back, 1, MPI_INT, rank, 400, 1, MPI_INT, win));
    MTEST_OK(MPI_Win_unlock_all(win));
    MTEST_CHECK(back == 1000 + from, "PSCW put: %d, expected %d", back, 1000 + from);
    MPI_Group_free(&to);
    MPI_Group_free(&by);
    MPI_Group_free(&world);
}

#define ROUNDS 3000

static void store_load(int rank, int size, unsigned char *mem, MPI_Win win)
{
    MPI_Win win2;
    int64_t *mem2;
    MTEST_OK(MPI_Win_allocate(16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem2, &win2));
    mem2[0] = mem2[1] = 0;
    MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    memset(mem + WIN_BYTES / 2, 0, 16);
    MTEST_OK(MPI_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD); /* the first one ever seen is round 1: the windows hold 0 before */
    int64_t *seen = calloc(ROUNDS + 1, sizeof *seen);
    MTEST_OK(MPI_Win_lock_all(0, win));
    MTEST_OK(MPI_Win_lock_all(0, win2));
    for (int64_t r = 1; r <= ROUNDS && size >= 2; r++) {
        /* rank 0 puts x at rank 1 (win, 0 + 512), rank 1 puts y at rank 0 (win or win2, 8) */
        MPI_Win wy = r & 1 ? win : win2;
        MPI_Aint xdisp = WIN_BYTES / 2, ydisp = r & 1 ? WIN_BYTES / 2 + 8 : 8;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            MTEST_OK(MPI_Put(&r, 1, MPI_INT64_T, 1, xdisp, 1, MPI_INT64_T, win));
            MTEST_OK(MPI_Win_flush(1, win));
            MTEST_OK(MPI_Get(&seen[r], 1, MPI_INT64_T, 0, ydisp, 1, MPI_INT64_T, wy));
            MTEST_OK(MPI_Win_flush(0, wy));
        } else if (rank == 1) {
            MTEST_OK(MPI_Put(&r, 1, MPI_INT64_T, 0, ydisp, 1, MPI_INT64_T, wy));
            MTEST_OK(MPI_Win_flush(0, wy));
            MTEST_OK(MPI_Get(&seen[r], 1, MPI_INT64_T, 1, xdisp, 1, MPI_INT64_T, win));
            MTEST_OK(MPI_Win_flush(1, win));
        }
    }
    MTEST_OK(MPI_Win_unlock_all(win2));
    MTEST_OK(MPI_Win_unlock_all(win));
    if (rank < 2 && size >= 2) {
        int64_t *other = malloc((ROUNDS + 1) * sizeof *other);
        MPI_Sendrecv(seen, ROUNDS + 1, MPI_INT64_T, rank ^ 1, 0, other, ROUNDS + 1, MPI_INT64_T, rank ^ 1, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int both = 0, first = 0;
        for (int r = 1; r <= ROUNDS; r++)
            if (seen[r] < r && other[r] < r && !both++)
                first = r;
        MTEST_CHECK(!both, "%d of %d rounds: neither rank saw the other's flushed put (first: round %d)", both, ROUNDS,
                    first);
        free(other);
    }
    free(seen);
    MTEST_OK(MPI_Win_free(&win2));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *mem;
    MPI_Win win;
    MTEST_OK(MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    memset(mem, 0, WIN_BYTES);
    MPI_Barrier(MPI_COMM_WORLD);
    elementwise(rank, size, mem, win);
    MPI_Barrier(MPI_COMM_WORLD);
    contention(rank, size, mem, win);
    MPI_Barrier(MPI_COMM_WORLD);
    copies(rank, size, win);
    MPI_Barrier(MPI_COMM_WORLD);
    store_load(rank, size, mem, win);
    MTEST_OK(MPI_Win_free(&win));
    return mtest_finalize();
}
