/* Accumulates under contention, flush ordering, shared windows next to dynamic ones, and
 * windows of 0 bytes. With every rank on one node these run on the direct path (loads,
 * stores and atomics on the node segment); RMPI_RMA_DIRECT=0 runs them as active messages.
 * - every rank fetch-and-adds one counter on rank 0 at once: the fetched values are each
 *   of 0 .. size*N-1 exactly once;
 * - every rank accumulates doubles (the accumulate lock), longs with MPI_MAX and MPI_BXOR
 *   and MPI_PROD (atomics and the lock) into the same elements at once, and 64-long sums
 *   (the lock) over elements others fetch-and-add (atomics): exact results;
 * - Get_accumulate through a vector target type, Compare_and_swap on int and int8_t;
 * - put data, flush, put flag: a target that sees the flag sees the data;
 * - an allocate_shared window and a dynamic window used in the same epochs;
 * - contention on a dynamic window (its atomics are messages the target serves, short
 *   requests served where they land mixed with full ones): every rank fetch-and-adds one
 *   long on rank 0 and accumulates to it, increments another by compare-and-swap loops
 *   while the others add to it with accumulates, fetch-and-adds an int at an odd address and
 *   an unsigned char, MAXes an unsigned short, and compare-and-swaps that must fail:
 *   fetched values each seen once, exact totals;
 * - windows of 0 bytes (all ranks, or some) in every synchronisation mode;
 * - accumulates of 320 KB from the user's buffer (not packed: sent from where they lie),
 *   the buffer overwritten right after flush_local, after flush, and after a fence: exact
 *   sums, so a send still reading the buffer after the call that completes it locally
 *   would add the overwritten values. */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N 200
#define K 8
#define BIG 64 /* longs: an accumulate this large takes the lock, not element atomics */

static void contention(int rank, int size)
{
    long *mem;
    MPI_Win win;
    MTEST_OK(
        MPI_Win_allocate((2 + 3 * K + BIG) * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    double *dbl = (double *)(mem + 2 + 2 * K); /* K doubles after the longs */
    MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
    for (int i = 0; i < 2 + 3 * K + BIG; i++)
        mem[i] = 0;
    for (int i = 0; i < K; i++)
        dbl[i] = 0.0, mem[2 + K + i] = 1; /* PROD starts at 1 */
    MTEST_OK(MPI_Win_unlock(rank, win));
    MPI_Barrier(MPI_COMM_WORLD);

    long *got = malloc(N * sizeof(long)), one = 1;
    MTEST_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < N; i++) {
        MTEST_OK(MPI_Fetch_and_op(&one, &got[i], MPI_LONG, 0, 0, MPI_SUM, win));
        MTEST_OK(MPI_Win_flush(0, win));
        long v = (long)rank * N + i;
        MTEST_OK(MPI_Accumulate(&v, 1, MPI_LONG, 0, 1, 1, MPI_LONG, MPI_MAX, win));
        double d[K];
        for (int k = 0; k < K; k++)
            d[k] = 0.5 + k;
        MTEST_OK(MPI_Accumulate(d, K, MPI_DOUBLE, 0, 2 + 2 * K, K, MPI_DOUBLE, MPI_SUM, win));
        long bits[K];
        for (int k = 0; k < K; k++)
            bits[k] = 1L << ((rank + i + k) % 60);
        MTEST_OK(MPI_Accumulate(bits, K, MPI_LONG, 0, 2, K, MPI_LONG, MPI_BXOR, win));
        long ones[BIG];
        for (int k = 0; k < BIG; k++)
            ones[k] = 1;
        MTEST_OK(MPI_Accumulate(ones, BIG, MPI_LONG, 0, 2 + 3 * K, BIG, MPI_LONG, MPI_SUM, win));
        long old;
        MTEST_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 2 + 3 * K + (i % BIG), MPI_SUM, win));
        if (i < 10) { /* 2^(10 size) fits in a long up to 6 ranks */
            long two[K];
            for (int k = 0; k < K; k++)
                two[k] = 2;
            MTEST_OK(MPI_Accumulate(two, K, MPI_LONG, 0, 2 + K, K, MPI_LONG, MPI_PROD, win));
        }
    }
    MTEST_OK(MPI_Win_unlock_all(win));
    long *all = rank == 0 ? malloc((size_t)size * N * sizeof(long)) : NULL;
    MPI_Gather(got, N, MPI_LONG, all, N, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char *seen = calloc((size_t)size * N, 1);
        for (int i = 0; i < size * N; i++) {
            MTEST_CHECK(all[i] >= 0 && all[i] < (long)size * N, "fetched %ld out of range", all[i]);
            if (all[i] >= 0 && all[i] < (long)size * N) {
                MTEST_CHECK(!seen[all[i]], "value %ld fetched twice", all[i]);
                seen[all[i]] = 1;
            }
        }
        free(seen);
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MTEST_CHECK(mem[0] == (long)size * N, "counter %ld, expected %ld", mem[0], (long)size * N);
        MTEST_CHECK(mem[1] == (long)size * N - 1, "max %ld, expected %ld", mem[1], (long)size * N - 1);
        for (int k = 0; k < K; k++) {
            long x = 0;
            for (int r = 0; r < size; r++)
                for (int i = 0; i < N; i++)
                    x ^= 1L << ((r + i + k) % 60);
            MTEST_CHECK(mem[2 + k] == x, "bxor %d: %lx, expected %lx", k, mem[2 + k], x);
            MTEST_CHECK(mem[2 + K + k] == 1L << (10 * size), "prod %d: %ld", k, mem[2 + K + k]);
            double want = (double)size * N * (0.5 + k);
            MTEST_CHECK(dbl[k] == want, "double sum %d: %g, expected %g", k, dbl[k], want);
        }
        for (int k = 0; k < BIG; k++) { /* locked and atomic sums on the same elements */
            long want = (long)size * N + (long)size * (N / BIG + (k < N % BIG));
            MTEST_CHECK(mem[2 + 3 * K + k] == want, "big sum %d: %ld, expected %ld", k, mem[2 + 3 * K + k], want);
        }
        MTEST_OK(MPI_Win_unlock(0, win));
    }
    free(all);
    free(got);

    /* Get_accumulate through a strided target type; CAS on int and char */
    MPI_Datatype vec;
    MPI_Type_vector(K / 2, 1, 2, MPI_LONG, &vec);
    MPI_Type_commit(&vec);
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_fence(0, win));
    if (rank == 0)
        for (int k = 0; k < K; k++)
            mem[2 + k] = 100 + k;
    MTEST_OK(MPI_Win_fence(0, win));
    long add[K / 2], old[K / 2];
    for (int k = 0; k < K / 2; k++)
        add[k] = 1;
    MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    MTEST_OK(MPI_Get_accumulate(add, K / 2, MPI_LONG, old, K / 2, MPI_LONG, 0, 2, 1, vec, MPI_SUM, win));
    MTEST_OK(MPI_Win_unlock(0, win));
    for (int k = 0; k < K / 2; k++)
        MTEST_CHECK(old[k] >= 100 + 2 * k && old[k] < 100 + 2 * k + size, "strided fetch %d: %ld", k, old[k]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        for (int k = 0; k < K; k++)
            MTEST_CHECK(mem[2 + k] == 100 + k + (k % 2 ? 0 : size), "strided sum %d: %ld", k, mem[2 + k]);
        MTEST_OK(MPI_Win_unlock(0, win));
    }
    MPI_Type_free(&vec);
    MPI_Barrier(MPI_COMM_WORLD);
    /* every rank swaps its rank + 1 into the int at rank 0 when it still holds 0: one wins */
    int *iw = (int *)(mem + 2);
    int8_t *cw = (int8_t *)(mem + 3);
    MTEST_OK(MPI_Win_fence(0, win));
    if (rank == 0)
        *iw = 0, *cw = 0;
    MTEST_OK(MPI_Win_fence(0, win));
    int zero = 0, mine = rank + 1, was = -1;
    int8_t czero = 0, cmine = (int8_t)(rank + 1), cwas = -1;
    MTEST_OK(MPI_Win_lock_all(0, win));
    MTEST_OK(MPI_Compare_and_swap(&mine, &zero, &was, MPI_INT, 0, 2, win));
    MTEST_OK(MPI_Compare_and_swap(&cmine, &czero, &cwas, MPI_INT8_T, 0, 3, win));
    MTEST_OK(MPI_Win_unlock_all(win));
    int won = was == 0, cwon = cwas == 0, nwon = 0, ncwon = 0;
    MPI_Allreduce(&won, &nwon, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&cwon, &ncwon, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MTEST_CHECK(nwon == 1 && ncwon == 1, "compare_and_swap: %d and %d winners", nwon, ncwon);
    MTEST_OK(MPI_Win_free(&win));
}

/* Put data, flush, put flag; the target polls the flag with atomic reads. */
static void flush_order(int rank, int size)
{
    if (size < 2)
        return;
    int *mem;
    MPI_Win win;
    MTEST_OK(MPI_Win_allocate((K + 1) * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i <= K; i++)
        mem[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_lock_all(0, win));
    for (int round = 1; round <= 20; round++) {
        if (rank == 1) {
            int data[K], flag = round;
            for (int k = 0; k < K; k++)
                data[k] = round * 1000 + k;
            MTEST_OK(MPI_Put(data, K, MPI_INT, 0, 1, K, MPI_INT, win));
            MTEST_OK(MPI_Win_flush(0, win));
            MTEST_OK(MPI_Accumulate(&flag, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_REPLACE, win));
            MTEST_OK(MPI_Win_flush(0, win));
        } else if (rank == 0) {
            int flag = 0, dummy = 0;
            while (flag != round) {
                MTEST_OK(MPI_Fetch_and_op(&dummy, &flag, MPI_INT, 0, 0, MPI_NO_OP, win));
                MTEST_OK(MPI_Win_flush(0, win));
            }
            MTEST_OK(MPI_Win_sync(win));
            for (int k = 0; k < K; k++)
                MTEST_CHECK(mem[1 + k] == round * 1000 + k, "round %d: data %d is %d after the flag", round, k,
                            mem[1 + k]);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MTEST_OK(MPI_Win_unlock_all(win));
    MTEST_OK(MPI_Win_free(&win));
}

/* A shared window and a dynamic one in the same epochs. */
static void shared_and_dynamic(int rank, int size)
{
    long *sh;
    MPI_Win ws, wd;
    MPI_Comm node; /* shared windows need one node: with fake nodes, the node's ranks */
    int nrank, nsize;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    MTEST_OK(MPI_Win_allocate_shared(nsize * sizeof(long), sizeof(long), MPI_INFO_NULL, node, &sh, &ws));
    MTEST_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &wd));
    long *dyn = calloc((size_t)size + 1, sizeof(long)); /* a slot per origin, then a counter */
    MTEST_OK(MPI_Win_attach(wd, dyn, (MPI_Aint)(size + 1) * sizeof(long)));
    MPI_Aint addr, *addrs = malloc((size_t)size * sizeof(MPI_Aint));
    MPI_Get_address(dyn, &addr);
    MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    for (int i = 0; i < nsize; i++)
        sh[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_lock_all(0, ws));
    MTEST_OK(MPI_Win_lock_all(0, wd));
    for (int t = 0; t < nsize; t++) {
        long v = 10 * nrank + t;
        MTEST_OK(MPI_Put(&v, 1, MPI_LONG, t, nrank, 1, MPI_LONG, ws));
    }
    for (int t = 0; t < size; t++) {
        long v = 10 * rank + t;
        MTEST_OK(MPI_Put(&v, 1, MPI_LONG, t, addrs[t] + rank * (MPI_Aint)sizeof(long), 1, MPI_LONG, wd));
        long one = 1;
        MTEST_OK(
            MPI_Accumulate(&one, 1, MPI_LONG, t, addrs[t] + size * (MPI_Aint)sizeof(long), 1, MPI_LONG, MPI_SUM, wd));
    }
    MTEST_OK(MPI_Win_flush_all(ws));
    MTEST_OK(MPI_Win_flush_all(wd));
    MTEST_OK(MPI_Win_unlock_all(wd));
    MTEST_OK(MPI_Win_unlock_all(ws));
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_sync(ws));
    for (int r = 0; r < nsize; r++)
        MTEST_CHECK(sh[r] == 10 * r + nrank, "shared slot %d: %ld", r, sh[r]);
    for (int r = 0; r < size; r++) {
        MTEST_CHECK(dyn[r] == 10 * r + rank, "dynamic slot %d: %ld", r, dyn[r]);
    }
    MTEST_CHECK(dyn[size] == size, "dynamic counter: %ld", dyn[size]);
    /* another rank's part of the shared window, read through Win_shared_query */
    MPI_Aint qs;
    int du;
    long *peer;
    MTEST_OK(MPI_Win_shared_query(ws, (nrank + 1) % nsize, &qs, &du, &peer));
    MTEST_CHECK(qs == nsize * (MPI_Aint)sizeof(long) && peer[nrank] == 10 * nrank + (nrank + 1) % nsize,
                "shared_query part of rank %d", (nrank + 1) % nsize);
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_detach(wd, dyn));
    MTEST_OK(MPI_Win_free(&wd));
    MTEST_OK(MPI_Win_free(&ws));
    MPI_Comm_free(&node);
    free(dyn);
    free(addrs);
}

/* Windows of 0 bytes: everywhere, or on odd ranks only. */
static void empty_windows(void)
{
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    for (int mode = 0; mode < 3; mode++) {
        MPI_Comm comm = mode == 2 ? node : MPI_COMM_WORLD;
        int rank, size;
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        MPI_Aint bytes = mode == 0 || (mode == 1 && rank % 2) ? 0 : sizeof(long);
        void *base;
        MPI_Win win;
        if (mode == 2)
            MTEST_OK(MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, comm, &base, &win));
        else
            MTEST_OK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
        int t = (rank + 1) % size;
        long v = 7, r = 0;
        MTEST_OK(MPI_Win_fence(0, win));
        MTEST_OK(MPI_Put(&v, 0, MPI_LONG, t, 0, 0, MPI_LONG, win));
        MTEST_OK(MPI_Get(&r, 0, MPI_LONG, t, 0, 0, MPI_LONG, win));
        MTEST_OK(MPI_Accumulate(&v, 0, MPI_LONG, t, 0, 0, MPI_LONG, MPI_SUM, win));
        MTEST_OK(MPI_Win_fence(0, win));
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        MTEST_OK(MPI_Get_accumulate(&v, 0, MPI_LONG, &r, 0, MPI_LONG, t, 0, 0, MPI_LONG, MPI_SUM, win));
        MTEST_OK(MPI_Win_unlock(t, win));
        MPI_Group g, peers;
        MPI_Win_get_group(win, &g);
        int pr[2] = {(rank + 1) % size, (rank - 1 + size) % size};
        MPI_Group_incl(g, size > 1 ? (pr[0] == pr[1] ? 1 : 2) : 1, pr, &peers);
        MTEST_OK(MPI_Win_post(peers, 0, win));
        MTEST_OK(MPI_Win_start(peers, 0, win));
        MTEST_OK(MPI_Put(&v, 0, MPI_LONG, t, 0, 0, MPI_LONG, win));
        MTEST_OK(MPI_Win_complete(win));
        MTEST_OK(MPI_Win_wait(win));
        MPI_Group_free(&peers);
        MPI_Group_free(&g);
        MTEST_CHECK(r == 0, "mode %d: a 0-byte get wrote %ld", mode, r);
        if (mode == 2) {
            MPI_Aint qs;
            int du;
            void *qb;
            MTEST_OK(MPI_Win_shared_query(win, rank, &qs, &du, &qb));
            MTEST_CHECK(qs == bytes && (bytes ? qb == base : qb == NULL), "shared_query of a %ld-byte part: %ld, %p",
                        (long)bytes, (long)qs, qb);
        }
        int *model, flag;
        MTEST_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
        MTEST_CHECK(flag && *model == MPI_WIN_UNIFIED, "memory model");
        if (bytes) { /* a range past a rank's 0 bytes is an error; here past 8 */
            MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
            MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
            int rc = MPI_Put(&v, 2, MPI_LONG, rank, 0, 2, MPI_LONG, win), cls = 0;
            MPI_Error_class(rc, &cls);
            MTEST_CHECK(cls == MPI_ERR_RMA_RANGE, "a put past the window: class %d", cls);
            MTEST_OK(MPI_Win_unlock(rank, win));
        }
        MTEST_OK(MPI_Win_free(&win));
    }
    MPI_Comm_free(&node);
}

#define LARGE 40000 /* longs: 320 KB, past the size accumulates go unpacked */

static void large_from_user(int rank, int size)
{
    long *mem, *src = malloc(LARGE * sizeof(long));
    MPI_Win win;
    MTEST_OK(MPI_Win_allocate(2 * LARGE * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int k = 0; k < 2 * LARGE; k++)
        mem[k] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < LARGE; k++)
        src[k] = rank + 1 + k % 7;
    MTEST_OK(MPI_Accumulate(src, LARGE, MPI_LONG, 0, 0, LARGE, MPI_LONG, MPI_SUM, win));
    MTEST_OK(MPI_Win_flush_local(0, win));
    for (int k = 0; k < LARGE; k++)
        src[k] = 2 * (rank + 1); /* locally complete: the accumulate above must not read these */
    MTEST_OK(MPI_Accumulate(src, LARGE, MPI_LONG, 0, LARGE, LARGE, MPI_LONG, MPI_SUM, win));
    MTEST_OK(MPI_Win_flush(0, win));
    for (int k = 0; k < LARGE; k++)
        src[k] = -1000000;
    MTEST_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    long ranks = (long)size * (size + 1) / 2; /* sum of rank + 1 */
    if (rank == 0) {
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        int bad = 0;
        for (int k = 0; k < LARGE && bad < 5; k++) {
            long want = ranks + (long)size * (k % 7), want2 = 2 * ranks;
            if (mem[k] != want || mem[LARGE + k] != want2) {
                MTEST_CHECK(0, "element %d: %ld and %ld, expected %ld and %ld", k, mem[k], mem[LARGE + k], want, want2);
                bad++;
            }
        }
        MTEST_OK(MPI_Win_unlock(0, win));
    }
    /* fence epochs: every rank into its right neighbour, the buffer overwritten after the fence */
    MTEST_OK(MPI_Win_fence(0, win));
    for (int k = 0; k < LARGE; k++)
        src[k] = k;
    MTEST_OK(MPI_Accumulate(src, LARGE, MPI_LONG, (rank + 1) % size, 0, LARGE, MPI_LONG, MPI_SUM, win));
    MTEST_OK(MPI_Win_fence(0, win));
    for (int k = 0; k < LARGE; k++)
        src[k] = -1000000;
    MTEST_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    long base = rank == 0 ? ranks : 0; /* rank 0's first half holds the sums above */
    int bad = 0;
    for (int k = 0; k < LARGE && bad < 5; k++) {
        long want = (rank == 0 ? base + (long)size * (k % 7) : 0) + k;
        if (mem[k] != want) {
            MTEST_CHECK(0, "fence: element %d is %ld, expected %ld", k, mem[k], want);
            bad++;
        }
    }
    MTEST_OK(MPI_Win_free(&win));
    free(src);
}

/* Contention on one dynamic window at rank 0: a long counter taken by fetch-and-add (the
 * short request) and by accumulates (the full one) in turn, a long incremented by
 * compare-and-swap loops while accumulates add to it, an int at an odd address and an
 * unsigned char fetch-and-added, an unsigned short MAXed. The fetched values of the first
 * counter are distinct; every total is exact (a request served twice, lost, or applied
 * out of turn with another origin's changes it). */
static void dynamic_contention(int rank, int size)
{
    enum { ROUNDS = 150 };
    MPI_Win win;
    MTEST_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    char *mem = calloc(64, 1);
    long *ctr = (long *)(void *)mem, *cas = ctr + 1; /* then bytes 16..: int at 17, char 24, ushort 26 */
    if (rank == 0)
        MTEST_OK(MPI_Win_attach(win, mem, 64));
    MPI_Aint base;
    MPI_Get_address(mem, &base);
    MPI_Bcast(&base, 1, MPI_AINT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    long *got = malloc(ROUNDS * sizeof(long)), one = 1;
    int ione = 1, iold;
    unsigned char cone = 1, cold;
    unsigned short mx, mold;
    MTEST_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < ROUNDS; i++) {
        MTEST_OK(MPI_Fetch_and_op(&one, &got[i], MPI_LONG, 0, base, MPI_SUM, win));
        MTEST_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, base, 1, MPI_LONG, MPI_SUM, win));
        MTEST_OK(MPI_Fetch_and_op(&ione, &iold, MPI_INT, 0, base + 17, MPI_SUM, win));
        MTEST_OK(MPI_Fetch_and_op(&cone, &cold, MPI_UNSIGNED_CHAR, 0, base + 24, MPI_SUM, win));
        mx = (unsigned short)(rank * 1000 + i);
        MTEST_OK(MPI_Fetch_and_op(&mx, &mold, MPI_UNSIGNED_SHORT, 0, base + 26, MPI_MAX, win));
        MTEST_OK(MPI_Win_flush(0, win));
        /* one increment by compare-and-swap, racing the others' and their accumulates */
        long seen, want;
        MTEST_OK(MPI_Fetch_and_op(NULL, &seen, MPI_LONG, 0, base + 8, MPI_NO_OP, win));
        MTEST_OK(MPI_Win_flush(0, win));
        for (;;) {
            want = seen + 1;
            long old;
            MTEST_OK(MPI_Compare_and_swap(&want, &seen, &old, MPI_LONG, 0, base + 8, win));
            MTEST_OK(MPI_Win_flush(0, win));
            if (old == seen)
                break;
            seen = old;
        }
        MTEST_OK(MPI_Accumulate(&one, 1, MPI_LONG, 0, base + 8, 1, MPI_LONG, MPI_SUM, win));
        long never = -1, junk = -1000 - rank, was; /* a compare that fails writes nothing */
        MTEST_OK(MPI_Compare_and_swap(&junk, &never, &was, MPI_LONG, 0, base + 8, win));
        MTEST_OK(MPI_Win_flush(0, win));
        MTEST_CHECK(was >= 0, "compare-and-swap fetched %ld", was);
    }
    MTEST_OK(MPI_Win_unlock_all(win));
    long *all = rank == 0 ? malloc((size_t)size * ROUNDS * sizeof(long)) : NULL;
    MPI_Gather(got, ROUNDS, MPI_LONG, all, ROUNDS, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long total = 2L * size * ROUNDS;
        char *hit = calloc((size_t)total, 1);
        for (int i = 0; i < size * ROUNDS; i++) {
            MTEST_CHECK(all[i] >= 0 && all[i] < total, "fetched %ld out of range", all[i]);
            if (all[i] >= 0 && all[i] < total) {
                MTEST_CHECK(!hit[all[i]], "value %ld fetched twice", all[i]);
                hit[all[i]] = 1;
            }
        }
        free(hit);
        int iv;
        unsigned short us;
        memcpy(&iv, mem + 17, sizeof iv);
        memcpy(&us, mem + 26, sizeof us);
        MTEST_CHECK(*ctr == total, "counter %ld, expected %ld", *ctr, total);
        MTEST_CHECK(*cas == total, "compare-and-swap counter %ld, expected %ld", *cas, total);
        MTEST_CHECK(iv == size * ROUNDS, "int at an odd address %d, expected %d", iv, size * ROUNDS);
        MTEST_CHECK((unsigned char)mem[24] == (unsigned char)(size * ROUNDS), "unsigned char %u",
                    (unsigned char)mem[24]);
        MTEST_CHECK(us == (unsigned short)((size - 1) * 1000 + ROUNDS - 1), "max %u", us);
        MTEST_CHECK(mem[16] == 0 && mem[21] == 0 && mem[22] == 0 && mem[23] == 0 && mem[25] == 0 && mem[28] == 0,
                    "bytes next to the elements written");
        MTEST_OK(MPI_Win_detach(win, mem));
    }
    MTEST_OK(MPI_Win_free(&win));
    free(all);
    free(got);
    free(mem);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    contention(rank, size);
    flush_order(rank, size);
    shared_and_dynamic(rank, size);
    dynamic_contention(rank, size);
    empty_windows();
    large_from_user(rank, size);
    return mtest_finalize();
}
