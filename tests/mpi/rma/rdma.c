/* Put and Get on the providers' RDMA (RMPI_RMA_RDMA; over tcp, ofi, fake nodes, and
 * Win_create windows on shm through cross-memory attach). Each check holds on the
 * active-message path too (RMPI_RMA_RDMA=0), which the testlist also runs:
 * - many puts in flight to every other rank (lock_all), flush_all, then gets read them back;
 *   a flag put after a flush is never seen before the data it follows;
 * - 4 MiB puts and gets (striped, cut by the providers), with contiguous and non-contiguous
 *   origin types, and a non-contiguous target of 4 KiB blocks (one RDMA op per block) and
 *   of 8-byte blocks (packed into one message);
 * - request-based Rput/Rget completing only with their data;
 * - fence and PSCW epochs over Win_create and Win_allocate windows;
 * - dynamic windows with attach and detach (messages: no keys for attached memory);
 * - a put or get outside the target window fails with MPI_ERR_RMA_RANGE under
 *   MPI_ERRORS_RETURN, and the guard bytes around the target window stay intact;
 * - small gets and puts interleaved (shm sends each run of one direction as one
 *   cross-memory call, up to 64 ops), more than a batch holds, a 5000-byte put among them,
 *   then a fence with no flush before it: every value lands and every get reads the
 *   target's data;
 * - a few small puts then a flush, seen by the target after it (lone_puts);
 * - gets read by the origin at the flush: after an unflushed put and an unacknowledged
 *   accumulate to the same place, under a lock another rank holds (lone_gets);
 * - puts then a flush, then a flag in a shared window: the target reads the data at once
 *   after the flag, with no MPI call in between (seen_after_flush; shm's ring copies when
 *   cross-memory attach is refused);
 * - exclusive contention on the last rank with RDMA alone in each epoch (a 5000-byte block
 *   of counters: get, flush, put of the block plus one, unlock; then a block read by a
 *   get alone under a shared lock, all equal): the unlock's UNLOCK then goes without an
 *   answer (docs/wire/rma.md), so the final counts are exact only if it still released the
 *   lock after the data and the next lock waited for it (unlock_rdma);
 * - bursts of gets (runs of 8-byte ones, each ended by a larger one) with eager messages
 *   moving meanwhile: 3 rounds, or only these with arguments "storm ROUNDS"
 *   (tests/netns/rma.sh runs it over two tcp rails, where answers pass each other). */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdio.h>

#define SLOTS 512 /* puts in flight per target */
#define BIG (4u << 20)
#define GUARD 4096

static long val(int origin, int target, int i) { return ((long)origin << 40) ^ ((long)target << 20) ^ i; }

/* Win_create over the middle of a buffer with guard pages around it. */
static char *guarded(size_t bytes)
{
    char *g = malloc(bytes + 2 * GUARD);
    memset(g, 0x5a, GUARD);
    memset(g + GUARD + bytes, 0xa5, GUARD);
    memset(g + GUARD, 0, bytes);
    return g;
}

static void check_guards(const char *g, size_t bytes)
{
    int bad = 0;
    for (size_t i = 0; i < GUARD; i++)
        bad += g[i] != 0x5a || g[GUARD + bytes + i] != (char)0xa5;
    MTEST_CHECK(bad == 0, "%d guard bytes around the window changed", bad);
}

static void many_in_flight(MPI_Win win, long *mem, int rank, int size)
{
    MTEST_OK(MPI_Win_lock_all(0, win));
    static long src[SLOTS];
    for (int t = 0; t < size; t++) {
        for (int i = 0; i < SLOTS; i++)
            src[i] = val(rank, t, i);
        /* one put per element: SLOTS operations in flight to each target */
        for (int i = 0; i < SLOTS; i++)
            MTEST_OK(MPI_Put(&src[i], 1, MPI_LONG, t, (MPI_Aint)rank * SLOTS + i, 1, MPI_LONG, win));
        MTEST_OK(MPI_Win_flush(t, win)); /* src is reused for the next target */
    }
    MTEST_OK(MPI_Win_flush_all(win));
    long *back = malloc(SLOTS * sizeof(long));
    for (int t = 0; t < size; t++) {
        int o = rank; /* our own puts, complete after the flush */
        for (int i = 0; i < SLOTS; i++)
            MTEST_OK(MPI_Get(&back[i], 1, MPI_LONG, t, (MPI_Aint)o * SLOTS + i, 1, MPI_LONG, win));
        MTEST_OK(MPI_Win_flush_local(t, win));
        int bad = 0;
        for (int i = 0; i < SLOTS; i++)
            bad += back[i] != val(o, t, i);
        MTEST_CHECK(bad == 0, "target %d: %d of my own puts read back wrong", t, bad);
    }
    MTEST_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    int bad = 0;
    for (int o = 0; o < size; o++)
        for (int i = 0; i < SLOTS; i++)
            bad += mem[(size_t)o * SLOTS + i] != val(o, rank, i);
    MTEST_CHECK(bad == 0, "%d elements of my window wrong after unlock_all and a barrier", bad);
    free(back);
}

/* data, flush, flag: whoever sees the flag sees the data. */
static void flag_after_data(MPI_Win win, long *mem, int rank, int size)
{
    if (size < 2)
        return;
    long *data = malloc(SLOTS * sizeof(long));
    if (rank == 1) {
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        memset(mem, 0, (SLOTS + 1) * sizeof(long));
        MTEST_OK(MPI_Win_unlock(1, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < SLOTS; i++)
            data[i] = val(9, 1, i);
        long one = 1;
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        MTEST_OK(MPI_Put(data, SLOTS, MPI_LONG, 1, 0, SLOTS, MPI_LONG, win));
        MTEST_OK(MPI_Win_flush(1, win));
        MTEST_OK(MPI_Put(&one, 1, MPI_LONG, 1, SLOTS, 1, MPI_LONG, win));
        MTEST_OK(MPI_Win_unlock(1, win));
    } else if (rank == 1) {
        long flag = 0;
        while (!flag) {
            MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
            flag = mem[SLOTS];
            MTEST_OK(MPI_Win_unlock(1, win));
        }
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        int bad = 0;
        for (int i = 0; i < SLOTS; i++)
            bad += mem[i] != val(9, 1, i);
        MTEST_OK(MPI_Win_unlock(1, win));
        MTEST_CHECK(bad == 0, "flag seen before %d data elements", bad);
    }
    free(data);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void fill(char *p, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (char)(i * 131 + (size_t)seed * 7 + (i >> 12));
}

/* 4 MiB to the next rank: contiguous, vector origin, vector targets of big and tiny blocks. */
static void big(int rank, int size)
{
    char *g = guarded(BIG);
    char *mem = g + GUARD;
    MPI_Win win;
    MTEST_OK(MPI_Win_create(mem, BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int t = (rank + 1) % size, from = (rank - 1 + size) % size;
    char *src = malloc(2 * BIG), *back = malloc(2 * BIG);
    fill(src, 2 * BIG, rank);
    MPI_Datatype half, blocks, tiny;
    /* every other 4 KiB of a 2*BIG buffer: BIG bytes */
    MPI_Type_vector(BIG / 4096, 4096, 8192, MPI_BYTE, &half);
    MPI_Type_commit(&half);
    /* 4 KiB blocks with 4 KiB gaps over the target's window: BIG/2 bytes */
    MPI_Type_vector(BIG / 8192, 4096, 8192, MPI_BYTE, &blocks);
    MPI_Type_commit(&blocks);
    MPI_Type_vector(BIG / 16, 8, 16, MPI_BYTE, &tiny);
    MPI_Type_commit(&tiny);
    for (int mode = 0; mode < 4; mode++) {
        MTEST_OK(MPI_Win_fence(0, win));
        if (mode == 0)
            MTEST_OK(MPI_Put(src, BIG, MPI_BYTE, t, 0, BIG, MPI_BYTE, win));
        else if (mode == 1)
            MTEST_OK(MPI_Put(src, 1, half, t, 0, BIG, MPI_BYTE, win));
        else if (mode == 2)
            MTEST_OK(MPI_Put(src, BIG / 2, MPI_BYTE, t, 0, 1, blocks, win));
        else
            MTEST_OK(MPI_Put(src, BIG / 2, MPI_BYTE, t, 0, 1, tiny, win));
        MTEST_OK(MPI_Win_fence(0, win));
        /* what `from` put here, computed from its seed */
        char *want = malloc(2 * BIG), *exp = calloc(BIG, 1);
        fill(want, 2 * BIG, from);
        if (mode == 0)
            memcpy(exp, want, BIG);
        else if (mode == 1)
            for (size_t k = 0; k < BIG / 4096; k++)
                memcpy(exp + k * 4096, want + k * 8192, 4096);
        else
            for (size_t k = 0, b = mode == 2 ? 4096 : 8; k < BIG / 2 / b; k++)
                memcpy(exp + k * 2 * b, want + k * b, b);
        MTEST_CHECK(memcmp(exp, mem, BIG) == 0, "mode %d: window differs from what rank %d put", mode, from);
        /* read it back from the target and compare with what we put */
        memset(back, 0, 2 * BIG);
        if (mode == 0)
            MTEST_OK(MPI_Get(back, BIG, MPI_BYTE, t, 0, BIG, MPI_BYTE, win));
        else if (mode == 1)
            MTEST_OK(MPI_Get(back, 1, half, t, 0, BIG, MPI_BYTE, win));
        else
            MTEST_OK(MPI_Get(back, BIG / 2, MPI_BYTE, t, 0, 1, mode == 2 ? blocks : tiny, win));
        MTEST_OK(MPI_Win_fence(0, win));
        size_t n = mode < 2 ? BIG : BIG / 2;
        int ok = mode == 1 ? 1 : memcmp(back, src, n) == 0;
        if (mode == 1)
            for (size_t k = 0; k < BIG / 4096; k++)
                ok &= memcmp(back + k * 8192, src + k * 8192, 4096) == 0;
        MTEST_CHECK(ok, "mode %d: get from rank %d differs from what this rank put", mode, t);
        MTEST_OK(MPI_Win_fence(0, win));
        memset(mem, 0, BIG);
        free(want);
        free(exp);
    }
    MTEST_OK(MPI_Win_fence(0, win));
    MTEST_OK(MPI_Win_free(&win));
    check_guards(g, BIG);
    MPI_Type_free(&half);
    MPI_Type_free(&blocks);
    MPI_Type_free(&tiny);
    free(src);
    free(back);
    free(g);
}

static void requests_and_pscw(int rank, int size)
{
    long *mem;
    MPI_Win win;
    MTEST_OK(MPI_Win_allocate(64 * 1024 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    int t = (rank + 1) % size, from = (rank - 1 + size) % size;
    long *src = malloc(64 * 1024 * sizeof(long)), *back = malloc(64 * 1024 * sizeof(long));
    for (int i = 0; i < 64 * 1024; i++)
        src[i] = val(rank, t, i);
    MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    MPI_Request r[2];
    MTEST_OK(MPI_Rput(src, 64 * 1024, MPI_LONG, t, 0, 64 * 1024, MPI_LONG, win, &r[0]));
    MTEST_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    MTEST_OK(MPI_Win_flush(t, win));
    MTEST_OK(MPI_Rget(back, 64 * 1024, MPI_LONG, t, 0, 64 * 1024, MPI_LONG, win, &r[1]));
    MTEST_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    MTEST_CHECK(memcmp(back, src, 64 * 1024 * sizeof(long)) == 0, "Rget after Rput and flush read other data");
    MTEST_OK(MPI_Win_unlock(t, win));
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_CHECK(mem[777] == val(from, rank, 777), "element 777 is %lx", (unsigned long)mem[777]);

    /* PSCW: the next rank writes, we wait */
    MPI_Group world, to, by;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &t, &to);
    MPI_Group_incl(world, 1, &from, &by);
    MTEST_OK(MPI_Win_post(by, 0, win));
    MTEST_OK(MPI_Win_start(to, 0, win));
    for (int i = 0; i < 64; i++)
        src[i] = -val(rank, t, i);
    MTEST_OK(MPI_Put(src, 64, MPI_LONG, t, 100, 64, MPI_LONG, win));
    MTEST_OK(MPI_Win_complete(win));
    MTEST_OK(MPI_Win_wait(win));
    int bad = 0;
    for (int i = 0; i < 64; i++)
        bad += mem[100 + i] != -val(from, rank, i);
    MTEST_CHECK(bad == 0, "PSCW: %d elements not there after Win_wait", bad);
    MPI_Group_free(&world);
    MPI_Group_free(&to);
    MPI_Group_free(&by);
    MTEST_OK(MPI_Win_free(&win));
    free(src);
    free(back);
}

static void dynamic(int rank, int size)
{
    MPI_Win win;
    MTEST_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    long *a = calloc(1024, sizeof(long));
    MTEST_OK(MPI_Win_attach(win, a, 1024 * sizeof(long)));
    MPI_Aint mine, *addr = malloc((size_t)size * sizeof *addr);
    MPI_Get_address(a, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);
    int t = (rank + 1) % size, from = (rank - 1 + size) % size;
    long v[1024];
    for (int i = 0; i < 1024; i++)
        v[i] = val(rank, t, i);
    MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    MTEST_OK(MPI_Put(v, 1024, MPI_LONG, t, addr[t], 1024, MPI_LONG, win));
    MTEST_OK(MPI_Win_unlock(t, win));
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_CHECK(a[1023] == val(from, rank, 1023), "dynamic: last element %lx", (unsigned long)a[1023]);
    MTEST_OK(MPI_Win_detach(win, a));
    MPI_Barrier(MPI_COMM_WORLD);
    /* detached: a put there is a range error the target reports at the unlock */
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    MPI_Put(v, 1, MPI_LONG, t, addr[t], 1, MPI_LONG, win);
    MTEST_ERR(MPI_Win_unlock(t, win), MPI_ERR_RMA_RANGE);
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_CHECK(a[0] == val(from, rank, 0), "dynamic: detached memory was written");
    MTEST_OK(MPI_Win_free(&win));
    free(a);
    free(addr);
}

/* Outside the window: MPI_ERR_RMA_RANGE at the call, the target's memory untouched. */
static void out_of_range(int rank, int size)
{
    const size_t bytes = 1000;
    char *g = guarded(bytes);
    MPI_Win win;
    MTEST_OK(MPI_Win_create(g + GUARD, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    int t = (rank + 1) % size;
    char src[4096];
    memset(src, 0x77, sizeof src);
    MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    MTEST_ERR(MPI_Put(src, 8, MPI_BYTE, t, 996, 8, MPI_BYTE, win), MPI_ERR_RMA_RANGE);
    MTEST_ERR(MPI_Put(src, 4096, MPI_BYTE, t, 0, 4096, MPI_BYTE, win), MPI_ERR_RMA_RANGE);
    MTEST_ERR(MPI_Get(src, 16, MPI_BYTE, t, 990, 16, MPI_BYTE, win), MPI_ERR_RMA_RANGE);
    MTEST_OK(MPI_Put(src, 8, MPI_BYTE, t, 992, 8, MPI_BYTE, win)); /* the last 8 bytes are fine */
    MTEST_OK(MPI_Win_unlock(t, win));
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_CHECK(g[GUARD + 992] == 0x77 && g[GUARD + 999] == 0x77, "the last 8 bytes were not written");
    check_guards(g, bytes);
    MTEST_OK(MPI_Win_free(&win));
    free(g);
}

#define MIX_OPS 300
#define MIX_RO 4096 /* the target's read-only half, then the half the puts write */

static void mixed_small(int rank, int size)
{
    char *g = guarded(2 * MIX_RO + 8192);
    long *mem = (long *)(void *)(g + GUARD);
    for (int i = 0; i < MIX_RO / 8; i++)
        mem[i] = val(rank, rank, i);
    memset(mem + MIX_RO / 8, 0, MIX_RO + 8192);
    MPI_Win win;
    MTEST_OK(MPI_Win_create(mem, 2 * MIX_RO + 8192, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int t = (rank + 1) % size, from = (rank - 1 + size) % size;
    long got[MIX_OPS], put[MIX_OPS];
    char blob[5000];
    fill(blob, sizeof blob, rank + 7);
    MTEST_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < MIX_OPS; i++) {
        got[i] = -1;
        put[i] = val(rank, t, i);
        if (i % 3 == 0) /* a get ends a run of puts: the direction changes */
            MTEST_OK(MPI_Get(&got[i], 1, MPI_LONG, t, (MPI_Aint)((i % (MIX_RO / 8)) * 8), 1, MPI_LONG, win));
        else
            MTEST_OK(MPI_Put(&put[i], 1, MPI_LONG, t, (MPI_Aint)(MIX_RO + i * 8), 1, MPI_LONG, win));
        if (i == MIX_OPS / 2) /* larger than a batch takes: goes alone, after the others */
            MTEST_OK(
                MPI_Put(blob, sizeof blob, MPI_BYTE, t, 2 * MIX_RO + 8192 - sizeof blob, sizeof blob, MPI_BYTE, win));
    }
    MTEST_OK(MPI_Win_fence(0, win));
    char want[5000];
    fill(want, sizeof want, from + 7);
    for (int i = 0; i < MIX_OPS; i++) {
        if (i % 3 == 0)
            MTEST_CHECK(got[i] == val(t, t, i % (MIX_RO / 8)), "get %d from rank %d read %ld", i, t, got[i]);
        else
            MTEST_CHECK(mem[MIX_RO / 8 + i] == val(from, rank, i), "put %d from rank %d: slot holds %ld", i, from,
                        mem[MIX_RO / 8 + i]);
    }
    MTEST_CHECK(memcmp((char *)mem + 2 * MIX_RO + 8192 - sizeof want, want, sizeof want) == 0,
                "the 5000-byte put from rank %d differs", from);
    MTEST_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MTEST_OK(MPI_Win_free(&win));
    check_guards(g, 2 * MIX_RO + 8192);
    free(g);
}

/* A few small puts then a flush (shm: posted then by cross-memory attach instead of
 * as a message, when nothing else to that target is unacknowledged): after the flush
 * the target sees them. Rounds: puts alone; an accumulate to a slot, a progress call that sends it, then a
 * put to the slot (it must not overtake the accumulate's message); a progress call between
 * two puts (the first may have left as a message); under Win_lock (its lazy request
 * goes first; in the other rounds a put + flush had the lock granted before); five puts (more than a flush writes itself) and one put of two
 * slots. Each round rank 0 tells the target by a message, which reads after Win_sync. */
#define LONE_ROUNDS 60
static void lone_puts(int rank, int size)
{
    if (size < 2)
        return;
    long *mem = calloc(8, sizeof(long));
    MPI_Win win;
    MTEST_OK(MPI_Win_create(mem, 8 * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    if (rank == 0) {
        for (int r = 0; r < LONE_ROUNDS; r++) {
            long v[5] = {val(0, 1, r), val(0, 1, r + 1), 1, val(0, 1, r + 2), val(0, 1, r + 3)};
            int kind = r % 5, flag;
            if (kind == 3) /* shared: the target takes its own lock to read */
                MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
            else
                MTEST_OK(MPI_Win_lock_all(0, win));
            if (kind != 3) { /* the lazy lock granted first: the puts below may go by RDMA */
                MTEST_OK(MPI_Put(&v[4], 1, MPI_LONG, 1, 7, 1, MPI_LONG, win));
                MTEST_OK(MPI_Win_flush(1, win));
            }
            if (kind == 1)
                MTEST_OK(MPI_Accumulate(&v[2], 1, MPI_LONG, 1, 0, 1, MPI_LONG, MPI_SUM, win));
            else
                MTEST_OK(MPI_Put(&v[0], 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
            if (kind == 1 || kind == 2) /* progress: the batch leaves as a message */
                MTEST_OK(MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            if (kind == 4)
                for (int k = 0; k < 5; k++)
                    MTEST_OK(MPI_Put(&v[k], 1, MPI_LONG, 1, 2 + k, 1, MPI_LONG, win));
            if (kind == 1) /* unacknowledged, the accumulate's message may not be handled yet */
                MTEST_OK(MPI_Put(&v[0], 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
            MTEST_OK(MPI_Put(&v[0], 2, MPI_LONG, 1, 1, 2, MPI_LONG, win));
            MTEST_OK(MPI_Win_flush(1, win));
            MPI_Send(&r, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(&flag, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MTEST_OK(kind == 3 ? MPI_Win_unlock(1, win) : MPI_Win_unlock_all(win));
        }
    } else if (rank == 1) {
        for (int r = 0; r < LONE_ROUNDS; r++) {
            int got;
            MPI_Recv(&got, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
            MTEST_OK(MPI_Win_sync(win));
            MTEST_CHECK(mem[0] == val(0, 1, r) && mem[1] == val(0, 1, r) && mem[2] == val(0, 1, r + 1),
                        "round %d (kind %d): slots %ld %ld %ld after the flush", r, r % 5, mem[0], mem[1], mem[2]);
            if (r % 5 == 4)
                MTEST_CHECK(mem[3] == val(0, 1, r + 1) && mem[4] == 1 && mem[5] == val(0, 1, r + 2) &&
                                mem[6] == val(0, 1, r + 3),
                            "round %d: five puts land as %ld %ld %ld %ld", r, mem[3], mem[4], mem[5], mem[6]);
            MTEST_OK(MPI_Win_unlock(1, win));
            MPI_Send(&got, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_free(&win));
    free(mem);
}

/* Gets to a Win_create target of this node wait to be read by one synchronous cross-memory
 * call at the next synchronisation (or other operation). Rank 0 reads rank 1's window:
 * - after a 4 KiB put to the same place not yet flushed (an RDMA op still in shm's
 *   cross-memory batch): the get reads the put's data, not what was there. Checked only
 *   where rank 1 shares rank 0's node: elsewhere MPI orders no put before a get (MPI-3.1
 *   11.7.2; a conflicting access in one epoch is erroneous) and the two may take
 *   different rails, the get served first (seen once over tcp with two rails);
 * - after an accumulate to the same slot sent as a message and not acknowledged: the get
 *   reads the sum (a get read by the origin before the target handled it would not);
 * - under a shared lock that rank 1 holds exclusively while it changes the slot from the
 *   old to the new value: the get reads the new one (read before the grant: the old);
 * - a run of gets of several sizes, more than one read holds, with gets of its own window
 *   in between, each reading its slot. */
#define LGET_ROUNDS 20
#define LGET_SLOTS 1024
static void lone_gets(int rank, int size)
{
    if (size < 2)
        return;
    long *mem = calloc(LGET_SLOTS, sizeof(long));
    MPI_Win win;
    MTEST_OK(MPI_Win_create(mem, LGET_SLOTS * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    long *src = malloc(512 * sizeof(long)), got[200];
    MPI_Comm node;
    MPI_Group wg, ng;
    int w1 = 1, t_node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(node, &ng);
    MPI_Group_translate_ranks(wg, 1, &w1, ng, &t_node);
    MPI_Group_free(&wg);
    MPI_Group_free(&ng);
    MPI_Comm_free(&node);
    int t_here = t_node != MPI_UNDEFINED; /* rank 1 on rank 0's node */
    for (int r = 0; r < LGET_ROUNDS; r++) {
        if (rank == 1) { /* old values everywhere */
            MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
            for (int i = 0; i < LGET_SLOTS; i++)
                mem[i] = val(1, r, i);
            MTEST_OK(MPI_Win_unlock(1, win));
        } else if (rank == 0) {
            for (int i = 0; i < LGET_SLOTS; i++)
                mem[i] = val(0, r, i);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            MTEST_OK(MPI_Win_lock_all(0, win));
            long one = 1;
            MTEST_OK(MPI_Get(&got[0], 1, MPI_LONG, 1, 0, 1, MPI_LONG, win)); /* the lazy lock's grant */
            MTEST_OK(MPI_Win_flush(1, win));
            for (int i = 0; i < 512; i++)
                src[i] = val(2, r, i);
            MTEST_OK(MPI_Put(src, 512, MPI_LONG, 1, 512, 512, MPI_LONG, win));
            MTEST_OK(MPI_Get(&got[1], 1, MPI_LONG, 1, 700, 1, MPI_LONG, win));
            MTEST_OK(MPI_Win_flush(1, win));
            MTEST_CHECK(!t_here || got[1] == val(2, r, 700 - 512), "round %d: a get after an unflushed put read %ld", r,
                        got[1]);
            MTEST_OK(MPI_Accumulate(&one, 1, MPI_LONG, 1, 3, 1, MPI_LONG, MPI_SUM, win));
            MTEST_OK(MPI_Get(&got[2], 1, MPI_LONG, 1, 3, 1, MPI_LONG, win));
            MTEST_OK(MPI_Win_flush_local(1, win));
            MTEST_CHECK(got[2] == val(1, r, 3) + 1, "round %d: a get after an accumulate read %ld, not %ld", r, got[2],
                        val(1, r, 3) + 1);
            /* a run: 1, 2 or 3 longs each, from slots 10.., our own window in between */
            int at = 3, slot = 10;
            for (int k = 0; k < 70; k++) {
                int n = 1 + k % 3;
                MTEST_OK(MPI_Get(&got[at], n, MPI_LONG, 1, slot, n, MPI_LONG, win));
                at += n;
                slot += n + 1;
                if (k % 23 == 22) {
                    MTEST_OK(MPI_Get(&got[at], 1, MPI_LONG, 0, 5, 1, MPI_LONG, win));
                    at++;
                }
            }
            MTEST_OK(MPI_Win_unlock_all(win));
            int bad = 0;
            at = 3, slot = 10;
            for (int k = 0; k < 70; k++) {
                int n = 1 + k % 3;
                for (int j = 0; j < n; j++)
                    bad += got[at++] != val(1, r, slot + j);
                slot += n + 1;
                if (k % 23 == 22)
                    bad += got[at++] != val(0, r, 5);
            }
            MTEST_CHECK(bad == 0, "round %d: %d of a run of gets read wrong", r, bad);
            /* rank 1 holds its exclusive lock while it writes the new value */
            int go = r;
            MPI_Send(&go, 1, MPI_INT, 1, 9, MPI_COMM_WORLD); /* our lock_all is over */
            MPI_Recv(&go, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
            MTEST_OK(MPI_Get(&got[0], 1, MPI_LONG, 1, 1, 1, MPI_LONG, win));
            MTEST_OK(MPI_Win_unlock(1, win));
            if (getenv("MUT"))
                fprintf(stderr, "MUT r %d got %ld old %ld new %ld\n", r, got[0], val(1, r, 1), val(3, r, 1));
            MTEST_CHECK(got[0] == val(3, r, 1), "round %d: a get under a lock not yet granted read %ld", r, got[0]);
        } else if (rank == 1) {
            int go;
            MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
            MPI_Send(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
            /* rank 0's lock request arrives meanwhile (mostly asleep: on a loaded machine
             * rank 0 needs the core; polling, so our message leaves) */
            for (int k = 0; k < 20; k++) {
                int flag;
                MTEST_OK(MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
                nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
            }
            mem[1] = val(3, r, 1);
            MTEST_OK(MPI_Win_unlock(1, win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MTEST_OK(MPI_Win_free(&win));
    free(src);
    free(mem);
}

/* A flush's puts are at the target when it returns, whether the rail wrote them by
 * cross-memory attach or, where the kernel refuses it (RMPI_SHM_CMA=off stands in for
 * ptrace_scope or a container policy), sent them as ring copies the target applies when
 * it polls. Rank 0 puts (a lone 8 B put and a 16 B one, which a flush writes itself, or
 * one 4 KiB put, which is RDMA at once), flushes, then raises a flag in a shared window;
 * rank 1 reads its Win_create memory right after it sees the flag, with no MPI call in
 * between, so data still waiting in a ring is caught (it polls by Win_sync once in 4096
 * loads of the flag while the flag is down: with the ring copies not flushed by a FLUSH
 * round trip this caught 0-2 of 200 rounds when it polled at every load). Ranks 0 and 1
 * on one node only. */
#define SEEN_ROUNDS 200
#define SEEN_BIG 512 /* longs: a 4 KiB put */
static void seen_after_flush(int rank, int size)
{
    if (size < 2)
        return;
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int together = 0, one = 1, in_node;
    MPI_Group wg, ng;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Comm_group(node, &ng);
    MPI_Group_translate_ranks(wg, 1, &one, ng, &in_node);
    together = rank == 0 && in_node != MPI_UNDEFINED;
    MPI_Group_free(&wg);
    MPI_Group_free(&ng);
    MPI_Bcast(&together, 1, MPI_INT, 0, MPI_COMM_WORLD);
    long *mem = calloc(8 + SEEN_BIG, sizeof(long));
    MPI_Win win, fwin;
    MTEST_OK(MPI_Win_create(mem, (8 + SEEN_BIG) * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int nrank;
    MPI_Comm_rank(node, &nrank);
    int *fbase, fdisp;
    MPI_Aint fsize;
    MTEST_OK(MPI_Win_allocate_shared(nrank == 0 ? 64 : 0, 1, MPI_INFO_NULL, node, &fbase, &fwin));
    MTEST_OK(MPI_Win_shared_query(fwin, 0, &fsize, &fdisp, &fbase));
    int *flag = fbase; /* [0] raised by rank 0 after its flush, [1] rank 1's answer */
    MTEST_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, fwin));
    if (nrank == 0)
        flag[0] = flag[1] = 0;
    MTEST_OK(MPI_Win_sync(fwin));
    MPI_Barrier(MPI_COMM_WORLD);
    if (together && rank == 0) {
        static long big[SEEN_BIG];
        MTEST_OK(MPI_Win_lock_all(0, win));
        for (int r = 0; r < SEEN_ROUNDS; r++) {
            long v[3] = {val(0, 1, r), val(0, 1, r + 1), val(0, 1, r + 2)};
            if (r % 2 == 0) {
                MTEST_OK(MPI_Put(&v[0], 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
                MTEST_OK(MPI_Put(&v[1], 2, MPI_LONG, 1, 1, 2, MPI_LONG, win));
            } else {
                for (int i = 0; i < SEEN_BIG; i++)
                    big[i] = val(0, r, i);
                MTEST_OK(MPI_Put(big, SEEN_BIG, MPI_LONG, 1, 8, SEEN_BIG, MPI_LONG, win));
            }
            MTEST_OK(MPI_Win_flush(1, win));
            __atomic_store_n(&flag[0], r + 1, __ATOMIC_RELEASE);
            while (__atomic_load_n(&flag[1], __ATOMIC_ACQUIRE) != r + 1)
                MTEST_OK(MPI_Win_sync(fwin));
        }
        MTEST_OK(MPI_Win_unlock_all(win));
    } else if (together && rank == 1) {
        for (int r = 0; r < SEEN_ROUNDS; r++) {
            /* loads between the polls: a flag raised without our poll is seen before the next */
            for (int k = 1; __atomic_load_n(&flag[0], __ATOMIC_ACQUIRE) != r + 1; k++)
                if (k % 4096 == 0)
                    MTEST_OK(MPI_Win_sync(fwin));
            if (r % 2 == 0) {
                MTEST_CHECK(mem[0] == val(0, 1, r) && mem[1] == val(0, 1, r + 1) && mem[2] == val(0, 1, r + 2),
                            "round %d: after the origin's flush the small puts read %ld %ld %ld", r, mem[0], mem[1],
                            mem[2]);
            } else {
                int bad = 0;
                for (int i = 0; i < SEEN_BIG; i++)
                    bad += mem[8 + i] != val(0, r, i);
                MTEST_CHECK(bad == 0, "round %d: after the origin's flush %d of %d longs of its 4 KiB put differ", r,
                            bad, SEEN_BIG);
            }
            __atomic_store_n(&flag[1], r + 1, __ATOMIC_RELEASE);
        }
    }
    MTEST_OK(MPI_Win_unlock_all(fwin));
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_free(&fwin));
    MTEST_OK(MPI_Win_free(&win));
    MPI_Comm_free(&node);
    free(mem);
}

/* A run of gets of mixed sizes in flight to one target: where the rail's reads are slower
 * than messages (tcp;ofi_rxm) the first of each run is a read and the others of at most
 * 4 KiB go as GET messages behind it, larger ones as reads again; on shm small puts go as
 * messages and gets by cross-memory attach. Every byte must come back from its place. */
#define RUN_GETS 48
static void get_runs(int rank, int size)
{
    static const size_t len[4] = {8, 4096, 5000, 1000};
    size_t span = 0;
    for (int i = 0; i < RUN_GETS; i++)
        span += len[i % 4];
    char *mem, *back = malloc(span), *want = malloc(span);
    MPI_Win win;
    MTEST_OK(MPI_Win_allocate((MPI_Aint)span, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    fill(mem, span, rank + 3);
    MPI_Barrier(MPI_COMM_WORLD);
    int t = (rank + 1) % size;
    fill(want, span, t + 3);
    for (int round = 0; round < 3; round++) {
        memset(back, 0, span);
        MTEST_OK(MPI_Win_lock_all(0, win));
        size_t at = 0;
        for (int i = 0; i < RUN_GETS; i++) { /* the last ones first: any order must do */
            size_t n = len[i % 4], off = span - at - n;
            MTEST_OK(MPI_Get(back + off, (int)n, MPI_BYTE, t, (MPI_Aint)off, (int)n, MPI_BYTE, win));
            at += n;
        }
        MTEST_OK(MPI_Win_flush(t, win));
        MTEST_CHECK(memcmp(back, want, span) == 0, "round %d: a run of %d gets from rank %d read wrong bytes", round,
                    RUN_GETS, t);
        MTEST_OK(MPI_Win_unlock_all(win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_free(&win));
    free(back);
    free(want);
}

/* Bursts of gets of mixed sizes in flight at once, in both directions, with eager messages
 * moving meanwhile, round after round. Over tcp the target answers a run of small reads
 * whole among its acknowledgements and cuts the answers of larger ones into chunks, so an
 * answer to a later read may reach the initiator before one to an earlier read
 * (src/net/tcp/README.md): every get must still read its own bytes. */
#define STORM_OPS 128
#define STORM_SPAN (64 * 1024)
#define STORM_MAXGET 20000
#define STORM_MSGS 8
#define STORM_MSG (48 * 1024)
static size_t storm_len(int round, int i)
{
    /* runs of 8-byte reads longer than a writev's share of the answers, each ended by a
     * larger read (one, several or many chunks) */
    static const size_t big[4] = {5000, 4096, STORM_MAXGET, 1000};
    int run = 24 + (round % 4) * 8;
    return i % run == run - 1 ? big[(i / run + round) % 4] : 8;
}

static void read_storm(int rank, int size, int rounds)
{
    char *mem;
    MPI_Win win;
    MTEST_OK(MPI_Win_allocate(STORM_SPAN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    fill(mem, STORM_SPAN, rank + 11);
    int t = (rank + 1) % size, from = (rank - 1 + size) % size;
    char *want = malloc(STORM_SPAN), *back = malloc((size_t)STORM_OPS * STORM_MAXGET);
    char *out = malloc(STORM_MSGS * STORM_MSG), *in = malloc(STORM_MSGS * STORM_MSG), *in_want = malloc(STORM_MSG);
    fill(want, STORM_SPAN, t + 11);
    size_t at[STORM_OPS];
    MPI_Request req[2 * STORM_MSGS];
    MPI_Barrier(MPI_COMM_WORLD);
    for (int round = 0; round < rounds; round++) {
        for (int m = 0; m < STORM_MSGS; m++) {
            fill(out + (size_t)m * STORM_MSG, STORM_MSG, rank * 1000 + round * STORM_MSGS + m);
            MTEST_OK(MPI_Irecv(in + (size_t)m * STORM_MSG, STORM_MSG, MPI_BYTE, from, round, MPI_COMM_WORLD, &req[m]));
            MTEST_OK(MPI_Isend(out + (size_t)m * STORM_MSG, STORM_MSG, MPI_BYTE, t, round, MPI_COMM_WORLD,
                               &req[STORM_MSGS + m]));
        }
        MTEST_OK(MPI_Win_lock_all(0, win));
        for (int i = 0; i < STORM_OPS; i++) {
            size_t n = storm_len(round, i);
            at[i] = (size_t)(i * 997 + round * 131) % (STORM_SPAN - n);
            memset(back + (size_t)i * STORM_MAXGET, 0, n);
            MTEST_OK(
                MPI_Get(back + (size_t)i * STORM_MAXGET, (int)n, MPI_BYTE, t, (MPI_Aint)at[i], (int)n, MPI_BYTE, win));
        }
        MTEST_OK(MPI_Win_flush_all(win));
        int bad = 0;
        for (int i = 0; i < STORM_OPS; i++)
            bad += memcmp(back + (size_t)i * STORM_MAXGET, want + at[i], storm_len(round, i)) != 0;
        MTEST_CHECK(bad == 0, "round %d: %d of %d gets from rank %d read wrong bytes", round, bad, STORM_OPS, t);
        MTEST_OK(MPI_Win_unlock_all(win));
        MTEST_OK(MPI_Waitall(2 * STORM_MSGS, req, MPI_STATUSES_IGNORE));
        bad = 0;
        for (int m = 0; m < STORM_MSGS; m++) {
            fill(in_want, STORM_MSG, from * 1000 + round * STORM_MSGS + m);
            bad += memcmp(in + (size_t)m * STORM_MSG, in_want, STORM_MSG) != 0;
        }
        MTEST_CHECK(bad == 0, "round %d: %d of %d messages from rank %d differ", round, bad, STORM_MSGS, from);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_free(&win));
    free(want);
    free(back);
    free(out);
    free(in);
    free(in_want);
}

#define UQ_LONGS 625 /* 5000 bytes: RDMA on every rail, cross-memory attach on shm */
#define UQ_ITERS 30
static void unlock_rdma(int rank, int size)
{
    long *mem = calloc(UQ_LONGS, sizeof(long)), *blk = malloc(UQ_LONGS * sizeof(long));
    MPI_Win win;
    MTEST_OK(MPI_Win_create(mem, UQ_LONGS * sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int t = size - 1;
    for (int it = 0; it < UQ_ITERS; it++) {
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        MTEST_OK(MPI_Get(blk, UQ_LONGS, MPI_LONG, t, 0, UQ_LONGS, MPI_LONG, win));
        MTEST_OK(MPI_Win_flush(t, win));
        for (int i = 1; i < UQ_LONGS; i++)
            MTEST_CHECK(blk[i] == blk[0], "iteration %d: counter %d is %ld, counter 0 %ld under an exclusive lock", it,
                        i, blk[i], blk[0]);
        for (int i = 0; i < UQ_LONGS; i++)
            blk[i]++;
        MTEST_OK(MPI_Put(blk, UQ_LONGS, MPI_LONG, t, 0, UQ_LONGS, MPI_LONG, win));
        MTEST_OK(MPI_Win_unlock(t, win));
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
        MTEST_OK(MPI_Get(blk, UQ_LONGS, MPI_LONG, t, 0, UQ_LONGS, MPI_LONG, win));
        MTEST_OK(MPI_Win_unlock(t, win));
        for (int i = 1; i < UQ_LONGS; i++)
            MTEST_CHECK(blk[i] == blk[0], "iteration %d: a shared lock read counter %d %ld, counter 0 %ld", it, i,
                        blk[i], blk[0]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == t) {
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
        for (int i = 0; i < UQ_LONGS; i++)
            MTEST_CHECK(mem[i] == (long)size * UQ_ITERS, "counter %d: %ld, expected %ld", i, mem[i],
                        (long)size * UQ_ITERS);
        MTEST_OK(MPI_Win_unlock(t, win));
    }
    MTEST_OK(MPI_Win_free(&win));
    free(mem);
    free(blk);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank = mtest_rank, size = mtest_size;
    if (argc > 1 && !strcmp(argv[1], "storm")) { /* only the read storm, ROUNDS times */
        read_storm(rank, size, argc > 2 ? atoi(argv[2]) : 50);
        return mtest_finalize();
    }
    for (int flavor = 0; flavor < 2; flavor++) {
        long *mem;
        MPI_Win win;
        size_t bytes = ((size_t)size * SLOTS + 1) * sizeof(long);
        if (flavor == 0) {
            MTEST_OK(MPI_Win_allocate((MPI_Aint)bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        } else {
            mem = malloc(bytes);
            MTEST_OK(MPI_Win_create(mem, (MPI_Aint)bytes, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        }
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
        memset(mem, 0, bytes);
        MTEST_OK(MPI_Win_unlock(rank, win));
        MPI_Barrier(MPI_COMM_WORLD);
        many_in_flight(win, mem, rank, size);
        flag_after_data(win, mem, rank, size);
        MTEST_OK(MPI_Win_free(&win));
        if (flavor == 1)
            free(mem);
    }
    big(rank, size);
    requests_and_pscw(rank, size);
    dynamic(rank, size);
    out_of_range(rank, size);
    mixed_small(rank, size);
    lone_puts(rank, size);
    lone_gets(rank, size);
    seen_after_flush(rank, size);
    get_runs(rank, size);
    unlock_rdma(rank, size);
    read_storm(rank, size, 3);
    return mtest_finalize();
}
