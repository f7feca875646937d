/* Large puts and gets to a rank of this node whose copy the origin splits with the target
 * (shm's cross-memory attach, RMPI_SHM_CMA_SPLIT: the origin copies the first half while the
 * target, polling inside MPI, copies the second; src/net/shm/README.md). On every path the
 * data must come out exact; on shm the split must happen:
 * - exact: one origin at a time puts to, then gets from, every other rank of a Win_create
 *   and a dynamic window (lock_all + flush) while the others wait in a barrier, at sizes
 *   around the split threshold and the half (4097 B to 1 MiB + 13) and at offsets off a
 *   line and a page on both sides; guard bytes before and after each range untouched;
 * - flag: 1 MiB put, flush, then an 8-byte flag; the target polls the flag with MPI calls
 *   (lock/unlock of its own window) and must find the data whole once it sees the flag;
 * - busy (rank 0 to rank 1): the target waits in a receive (so it polls and offers to
 *   split), then computes 0.3 s outside MPI while the origin puts 20 x 256 KiB: the origin
 *   must take the halves back itself (MPI_T rmpi_split_claimed grows) and the data be exact;
 * - range: a 128 KiB put into a dynamic window's 64 KiB region fails with
 *   MPI_ERR_RMA_RANGE and writes nothing past the region.
 * Argument "split" (shm lines): the summed MPI_T counter rmpi_split_served must be above 0
 * after "exact" (the targets did copy halves), and "busy" runs its counter check; "none"
 * (each rank pinned to one CPU, so more ranks than CPUs: no split is offered): every rank's
 * counters stay 0. */
#include "mtest.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { WIN = (2 << 20) + 8192, PRE = 64, REGION = 64 << 10 };

static const size_t sizes[] = {4097, 32768, 65535, 65536, 65537, 65600, 131077, 262144, 1048589};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
static const size_t ooffs[] = {0, 1, 63};
static const size_t toffs[] = {0, 7, 4097};

/* The MPI_T counters, started once: a read gives what this process counted since. */
static MPI_T_pvar_session ses;
static const char *pv_name[2] = {"rmpi_split_served", "rmpi_split_claimed"};
static MPI_T_pvar_handle pv[2];

static void pvar_start(void)
{
    MTEST_OK(MPI_T_pvar_session_create(&ses));
    for (int i = 0; i < 2; i++) {
        int idx = -1, cnt;
        MTEST_OK(MPI_T_pvar_get_index(pv_name[i], MPI_T_PVAR_CLASS_COUNTER, &idx));
        MTEST_OK(MPI_T_pvar_handle_alloc(ses, idx, NULL, &pv[i], &cnt));
        MTEST_OK(MPI_T_pvar_start(ses, pv[i]));
    }
}

static unsigned long long pvar(int i)
{
    unsigned long long v = 0;
    MTEST_OK(MPI_T_pvar_read(ses, pv[i], &v));
    return v;
}

static void pvar_stop(void)
{
    for (int i = 0; i < 2; i++)
        MTEST_OK(MPI_T_pvar_handle_free(ses, &pv[i]));
    MTEST_OK(MPI_T_pvar_session_free(&ses));
}

static int bad_guard(const unsigned char *p, size_t n, unsigned char v)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += p[i] != v;
    return bad;
}

/* One origin's put then get of len bytes at (oo, to) to target t; the others check. */
static void exact_case(MPI_Win win, int dyn, const MPI_Aint *base, unsigned char *mem, unsigned char *obuf, int o,
                       size_t len, size_t oo, size_t to, int idx)
{
    char what[160];
    unsigned seed = mtest_seed(o, 0, idx);
    /* put: targets clear their range (and guards) first */
    memset(mem, 0xee, WIN);
    if (mtest_rank == o)
        mtest_fill(obuf + oo, len, seed);
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (mtest_rank == o) {
        MTEST_OK(MPI_Win_lock_all(0, win));
        for (int t = 0; t < mtest_size; t++)
            if (t != o)
                MTEST_OK(MPI_Put(obuf + oo, (int)len, MPI_BYTE, t, (dyn ? base[t] : 0) + PRE + (MPI_Aint)to, (int)len,
                                 MPI_BYTE, win));
        MTEST_OK(MPI_Win_flush_all(win));
        MTEST_OK(MPI_Win_unlock_all(win));
    }
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (mtest_rank != o) {
        snprintf(what, sizeof what, "%s put of %zu B from rank %d at origin +%zu, target +%zu",
                 dyn ? "dynamic" : "Win_create", len, o, oo, to);
        mtest_check_buf(mem + PRE + to, len, seed, what);
        MTEST_CHECK(!bad_guard(mem, PRE + to, 0xee) && !bad_guard(mem + PRE + to + len, 64, 0xee),
                    "%s: bytes written outside the range", what);
    }
    /* get: each target fills its range with its own pattern */
    unsigned gseed = mtest_seed(mtest_rank, o, idx);
    mtest_fill(mem + PRE + to, len, gseed);
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (mtest_rank == o) {
        MTEST_OK(MPI_Win_lock_all(0, win));
        for (int t = 0; t < mtest_size; t++) {
            if (t == o)
                continue;
            memset(obuf, 0xee, oo + len + 64);
            MTEST_OK(MPI_Get(obuf + oo, (int)len, MPI_BYTE, t, (dyn ? base[t] : 0) + PRE + (MPI_Aint)to, (int)len,
                             MPI_BYTE, win));
            MTEST_OK(MPI_Win_flush(t, win));
            snprintf(what, sizeof what, "%s get of %zu B from rank %d at origin +%zu, target +%zu",
                     dyn ? "dynamic" : "Win_create", len, t, oo, to);
            mtest_check_buf(obuf + oo, len, mtest_seed(t, o, idx), what);
            MTEST_CHECK(!bad_guard(obuf, oo, 0xee) && !bad_guard(obuf + oo + len, 64, 0xee),
                        "%s: bytes written outside the range", what);
        }
        MTEST_OK(MPI_Win_unlock_all(win));
    }
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* 1 MiB, flush, then a flag the target polls through MPI calls. */
static void flag_case(MPI_Win win, int dyn, const MPI_Aint *base, unsigned char *mem, unsigned char *obuf)
{
    if (mtest_size < 2)
        return;
    const size_t len = 1 << 20;
    volatile uint64_t *flag = (volatile uint64_t *)(mem + PRE + len + 4096);
    memset(mem, 0, WIN);
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int round = 0; round < 5; round++) {
        unsigned seed = mtest_seed(0, 1, 500 + round);
        if (mtest_rank == 0) {
            uint64_t v = (uint64_t)round + 1;
            mtest_fill(obuf, len, seed);
            MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
            MTEST_OK(MPI_Put(obuf, (int)len, MPI_BYTE, 1, (dyn ? base[1] : 0) + PRE, (int)len, MPI_BYTE, win));
            MTEST_OK(MPI_Win_flush(1, win));
            MTEST_OK(MPI_Put(&v, 8, MPI_BYTE, 1, (dyn ? base[1] : 0) + PRE + (MPI_Aint)len + 4096, 8, MPI_BYTE, win));
            MTEST_OK(MPI_Win_unlock(1, win));
        } else if (mtest_rank == 1) {
            for (;;) {
                MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
                uint64_t f = *flag;
                MTEST_OK(MPI_Win_unlock(1, win));
                if (f == (uint64_t)round + 1)
                    break;
            }
            char what[96];
            snprintf(what, sizeof what, "%s 1 MiB put seen after its flag, round %d", dyn ? "dynamic" : "Win_create",
                     round);
            mtest_check_buf(mem + PRE, len, seed, what);
        }
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The target computes outside MPI: the origin must not wait for it. */
static void busy_case(MPI_Win win, unsigned char *mem, unsigned char *obuf, int check)
{
    if (mtest_size < 2)
        return;
    enum { N = 20, LEN = 256 << 10 };
    memset(mem, 0xee, WIN);
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    int go = 1;
    if (mtest_rank == 0) {
        unsigned long long c0 = pvar(1);
        mtest_sleep(0.02); /* rank 1 polls in its receive meanwhile */
        MTEST_OK(MPI_Send(&go, 1, MPI_INT, 1, 9, MPI_COMM_WORLD));
        mtest_sleep(0.02); /* now it computes */
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        for (int i = 0; i < N; i++) {
            mtest_fill(obuf, LEN, mtest_seed(0, 1, 900 + i));
            MTEST_OK(MPI_Put(obuf, LEN, MPI_BYTE, 1, PRE + (MPI_Aint)i * 4096, LEN, MPI_BYTE, win));
            MTEST_OK(MPI_Win_flush(1, win));
        }
        MTEST_OK(MPI_Win_unlock(1, win));
        unsigned long long c1 = pvar(1);
        if (check)
            MTEST_CHECK(c1 > c0, "the busy target's halves: rmpi_split_claimed %llu -> %llu, want it to grow", c0, c1);
    } else if (mtest_rank == 1) {
        MTEST_OK(MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        volatile double x = 0;
        for (double t0 = now_s(); now_s() - t0 < 0.3;)
            x += 1;
    }
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (mtest_rank == 1) { /* each put overlapped the previous one but the first 4 KiB: the last is whole */
        mtest_check_buf(mem + PRE + (size_t)(N - 1) * 4096, LEN, mtest_seed(0, 1, 900 + N - 1),
                        "busy target's last put");
        for (int i = 0; i < N - 1; i++) {
            char what[64];
            snprintf(what, sizeof what, "busy target's put %d (its first 4 KiB)", i);
            mtest_check_buf(mem + PRE + (size_t)i * 4096, 4096, mtest_seed(0, 1, 900 + i), what);
        }
    }
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A put running past a dynamic window's region. */
static void range_case(unsigned char *obuf)
{
    MPI_Win win;
    unsigned char *reg = mtest_malloc(4 * REGION);
    memset(reg, 0xee, 4 * REGION);
    MTEST_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MTEST_OK(MPI_Win_attach(win, reg + REGION, REGION));
    MTEST_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    MPI_Aint a, *base = mtest_malloc(sizeof *base * (size_t)mtest_size);
    MTEST_OK(MPI_Get_address(reg + REGION, &a));
    MTEST_OK(MPI_Allgather(&a, 1, MPI_AINT, base, 1, MPI_AINT, MPI_COMM_WORLD));
    if (mtest_rank == 0 && mtest_size > 1) {
        int t = mtest_size - 1;
        mtest_fill(obuf, 2 * REGION, 77);
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        int rc = MPI_Put(obuf, 2 * REGION, MPI_BYTE, t, base[t], 2 * REGION, MPI_BYTE, win);
        int rc2 = MPI_Win_flush(t, win);
        int cls = MPI_SUCCESS;
        MPI_Error_class(rc != MPI_SUCCESS ? rc : rc2, &cls);
        MTEST_CHECK(cls == MPI_ERR_RMA_RANGE,
                    "a 128 KiB put into a 64 KiB region: error class %d, want MPI_ERR_RMA_RANGE", cls);
        MTEST_OK(MPI_Win_unlock(t, win));
    }
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (mtest_rank == mtest_size - 1 && mtest_size > 1)
        MTEST_CHECK(!bad_guard(reg + 2 * REGION, 2 * REGION, 0xee), "the refused put wrote past the region");
    MTEST_OK(MPI_Win_detach(win, reg + REGION));
    MTEST_OK(MPI_Win_free(&win));
    free(base);
    free(reg);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "none") && mtest_pin_one_cpu(argv[0])) /* oversubscribed on any machine */
        return 1;
    mtest_init(&argc, &argv);
    int split = argc > 1 && !strcmp(argv[1], "split"), none = argc > 1 && !strcmp(argv[1], "none");
    int prov;
    MTEST_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &prov));
    pvar_start();
    unsigned char *mem = mtest_malloc(WIN), *obuf = mtest_malloc(WIN);
    MPI_Aint *base = mtest_malloc(sizeof *base * (size_t)mtest_size), a;
    MTEST_OK(MPI_Get_address(mem, &a));
    MTEST_OK(MPI_Allgather(&a, 1, MPI_AINT, base, 1, MPI_AINT, MPI_COMM_WORLD));
    for (int dyn = 0; dyn < 2; dyn++) {
        MPI_Win win;
        if (dyn) {
            MTEST_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
            MTEST_OK(MPI_Win_attach(win, mem, WIN));
        } else {
            MTEST_OK(MPI_Win_create(mem, WIN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        }
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
        int idx = 0;
        for (int o = 0; o < mtest_size; o++)
            for (int s = 0; s < NSIZES; s++)
                for (int i = 0; i < 3; i++)
                    exact_case(win, dyn, base, mem, obuf, o, sizes[s], ooffs[i], toffs[(i + s) % 3], idx++);
        flag_case(win, dyn, base, mem, obuf);
        if (!dyn)
            busy_case(win, mem, obuf, split);
        if (dyn)
            MTEST_OK(MPI_Win_detach(win, mem));
        MTEST_OK(MPI_Win_free(&win));
    }
    unsigned long long served = pvar(0), all = 0;
    MTEST_OK(MPI_Allreduce(&served, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    if (split && mtest_rank == 0 && mtest_size > 1)
        MTEST_CHECK(all > 0, "no target copied a half (MPI_T rmpi_split_served summed: 0)");
    if (none)
        MTEST_CHECK(served == 0 && pvar(1) == 0, "rank %d: %llu halves served, %llu taken back, want none offered",
                    mtest_rank, served, pvar(1));
    range_case(obuf);
    free(base);
    free(mem);
    free(obuf);
    pvar_stop();
    MTEST_OK(MPI_T_finalize());
    return mtest_finalize();
}
