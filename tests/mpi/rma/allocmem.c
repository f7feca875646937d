/* MPI_Alloc_mem memory under Win_create. With RMPI_RMA_ALLOC_MEM_SHM (the default) each
 * allocation is a shared-memory file, and a Win_create window over it is mapped by the
 * other ranks of its node, whose operations on it are then loads, stores and atomics that
 * need nothing of the target:
 * - progress: the target (rank 1) stays outside MPI for 3 s while rank 0 locks it, puts
 *   8 B and 64 KiB, flushes, gets both back, fetch-and-adds, compare-and-swaps and
 *   unlocks; every result is checked. Argument "direct" (both ranks on one node, memory
 *   mapped): all of it returns within 2 s, before the target is back. Argument "stall"
 *   (the knob off: the 8 B put and the atomics are messages the target serves): it cannot
 *   return before the target is back in MPI, so the first line is shown to tell the two
 *   apart. Without an argument, results only.
 * - the same on a dynamic window with an MPI_Alloc_mem region attached; then the region
 *   detached and freed and a new allocation attached: accumulates of every rank land in the
 *   new one;
 * - a window over part of an allocation, at an offset that is not page aligned, reached by
 *   puts and gets of every rank at its first and last byte;
 * - 300 live allocations (past the 256 kept as files, the rest malloc'd), each written and
 *   read back, windows over the first and the last, freed in mixed order; 0 bytes;
 * - Win_shared_query on Win_allocate and Win_create over Alloc_mem: other ranks' memory
 *   where it is mapped, stores through it seen by its owner ("direct": every rank's);
 * - fork: the child's copy is the memory at the fork, its writes stay its own, and the
 *   parent's window still takes puts (without the fork handlers of mem.c the child read
 *   the parent's later writes and the parent the child's);
 * - a negative size is MPI_ERR_SIZE. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BIG 65536
#define NALLOC 300

static double now(void) { return MPI_Wtime(); }

static void progress(int rank, int size, const char *mode)
{
    char *mem = NULL;
    MTEST_OK(MPI_Alloc_mem(BIG + 64, MPI_INFO_NULL, &mem));
    memset(mem, 0, BIG + 64);
    MPI_Win win;
    MTEST_OK(MPI_Win_create(mem, BIG + 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    char *src = malloc(BIG), *back = malloc(BIG);
    MTEST_CHECK(src && back, "out of memory");
    mtest_fill(src, BIG, 7);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        mtest_sleep(3.0); /* no MPI call */
    } else if (rank == 0 && size > 1) {
        double t0 = now();
        long eight = 0x0102030405060708L, got8 = 0, old = -1, one = 1, cmp = 5, swapped = -1;
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        MTEST_OK(MPI_Put(&eight, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
        MTEST_OK(MPI_Put(src, BIG, MPI_BYTE, 1, 64, BIG, MPI_BYTE, win));
        MTEST_OK(MPI_Win_flush(1, win));
        MTEST_OK(MPI_Get(&got8, 1, MPI_LONG, 1, 0, 1, MPI_LONG, win));
        MTEST_OK(MPI_Get(back, BIG, MPI_BYTE, 1, 64, BIG, MPI_BYTE, win));
        MTEST_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 1, 8, MPI_SUM, win));
        MTEST_OK(MPI_Win_flush(1, win));
        MTEST_OK(MPI_Compare_and_swap(&one, &cmp, &swapped, MPI_LONG, 1, 16, win));
        MTEST_OK(MPI_Win_unlock(1, win));
        double dt = now() - t0;
        MTEST_CHECK(got8 == eight && !memcmp(back, src, BIG), "put then get on rank 1: data differ");
        MTEST_CHECK(old == 0 && swapped == 0, "fetch-and-add old %ld (0), compare-and-swap old %ld (0)", old, swapped);
        if (!strcmp(mode, "direct"))
            MTEST_CHECK(dt < 2.0, "direct: %.2f s with the target outside MPI (memory not mapped?)", dt);
        if (!strcmp(mode, "stall"))
            MTEST_CHECK(dt >= 2.0, "stall: %.2f s: returned while the target was outside MPI", dt);
        if (*mode)
            printf("%s: lock to unlock on a target outside MPI: %.2f s\n", mode, dt);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1 && size > 1) { /* the target sees what rank 0 did, after the barrier */
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        long w[3];
        memcpy(w, mem, sizeof w);
        MTEST_OK(MPI_Win_unlock(1, win));
        MTEST_CHECK(w[0] == 0x0102030405060708L && w[1] == 1 && w[2] == 0, "rank 1 sees %lx %ld %ld", w[0], w[1], w[2]);
        MTEST_CHECK(!memcmp(mem + 64, src, BIG), "rank 1: the 64 KiB put differs");
    }
    MTEST_OK(MPI_Win_free(&win));
    MTEST_OK(MPI_Free_mem(mem));
    free(src);
    free(back);
}

/* The same on a dynamic window: rank 1 attaches an MPI_Alloc_mem region (mapped by the
 * origins of its node at their first access); then detaches and frees it, attaches a new
 * allocation, and rank 0's next put must land in the new one (a mapping of the old region
 * must not be used for the new address range). */
static void dynamic(int rank, int size, const char *mode)
{
    char *mem = NULL;
    MPI_Win win;
    MTEST_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Aint at = 0;
    if (rank == 1) {
        MTEST_OK(MPI_Alloc_mem(BIG + 64, MPI_INFO_NULL, &mem));
        memset(mem, 0, BIG + 64);
        MTEST_OK(MPI_Win_attach(win, mem, BIG + 64));
        MPI_Get_address(mem, &at);
    }
    MPI_Bcast(&at, 1, MPI_AINT, 1 % size, MPI_COMM_WORLD);
    char *src = malloc(BIG), *back = malloc(BIG);
    MTEST_CHECK(src && back, "out of memory");
    mtest_fill(src, BIG, 9);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        mtest_sleep(3.0); /* no MPI call */
    } else if (rank == 0 && size > 1) {
        double t0 = now();
        long eight = 0x1112131415161718L, got8 = 0, old = -1, one = 1, cmp = 5, swapped = -1;
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        MTEST_OK(MPI_Put(&eight, 1, MPI_LONG, 1, at, 1, MPI_LONG, win));
        MTEST_OK(MPI_Put(src, BIG, MPI_BYTE, 1, at + 64, BIG, MPI_BYTE, win));
        MTEST_OK(MPI_Win_flush(1, win));
        MTEST_OK(MPI_Get(&got8, 1, MPI_LONG, 1, at, 1, MPI_LONG, win));
        MTEST_OK(MPI_Get(back, BIG, MPI_BYTE, 1, at + 64, BIG, MPI_BYTE, win));
        MTEST_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 1, at + 8, MPI_SUM, win));
        MTEST_OK(MPI_Win_flush(1, win));
        MTEST_OK(MPI_Compare_and_swap(&one, &cmp, &swapped, MPI_LONG, 1, at + 16, win));
        MTEST_OK(MPI_Win_unlock(1, win));
        double dt = now() - t0;
        MTEST_CHECK(got8 == eight && !memcmp(back, src, BIG), "dynamic: put then get on rank 1: data differ");
        MTEST_CHECK(old == 0 && swapped == 0, "dynamic: fetch-and-add old %ld, compare-and-swap old %ld", old, swapped);
        if (!strcmp(mode, "direct"))
            MTEST_CHECK(dt < 2.0, "dynamic direct: %.2f s with the target outside MPI (region not mapped?)", dt);
        if (!strcmp(mode, "stall"))
            MTEST_CHECK(dt >= 2.0, "dynamic stall: %.2f s: returned while the target was outside MPI", dt);
        if (*mode)
            printf("dynamic %s: lock to unlock on a target outside MPI: %.2f s\n", mode, dt);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        long w[3];
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        memcpy(w, mem, sizeof w);
        MTEST_OK(MPI_Win_unlock(1, win));
        MTEST_CHECK(w[0] == 0x1112131415161718L && w[1] == 1 && w[2] == 0, "dynamic: rank 1 sees %lx %ld %ld", w[0],
                    w[1], w[2]);
        MTEST_CHECK(!memcmp(mem + 64, src, BIG), "dynamic: rank 1: the 64 KiB put differs");
        /* a new allocation in place of the old one */
        MTEST_OK(MPI_Win_detach(win, mem));
        MTEST_OK(MPI_Free_mem(mem));
        MTEST_OK(MPI_Alloc_mem(4096, MPI_INFO_NULL, &mem));
        memset(mem, 0, 4096);
        MTEST_OK(MPI_Win_attach(win, mem, 4096));
        MPI_Get_address(mem, &at);
    }
    MPI_Bcast(&at, 1, MPI_AINT, 1 % size, MPI_COMM_WORLD);
    if (rank != 1 && size > 1) { /* every other rank adds its rank + 1 to the new region's first long */
        long add = rank + 1, got = -1;
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        MTEST_OK(MPI_Accumulate(&add, 1, MPI_LONG, 1, at, 1, MPI_LONG, MPI_SUM, win));
        MTEST_OK(MPI_Win_flush(1, win));
        MTEST_OK(MPI_Get(&got, 1, MPI_LONG, 1, at + 8, 1, MPI_LONG, win));
        MTEST_OK(MPI_Win_unlock(1, win));
        MTEST_CHECK(got == 0, "dynamic: the new region's second long is %ld", got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        long want = 0, v;
        for (int r = 0; r < size; r++)
            want += r == 1 ? 0 : r + 1;
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win));
        memcpy(&v, mem, sizeof v);
        MTEST_OK(MPI_Win_unlock(1, win));
        MTEST_CHECK(v == want, "dynamic: the new region holds %ld, want %ld", v, want);
        MTEST_OK(MPI_Win_detach(win, mem));
    }
    MTEST_OK(MPI_Win_free(&win));
    if (rank == 1)
        MTEST_OK(MPI_Free_mem(mem));
    free(src);
    free(back);
}

/* A window over bytes [off, off + n) of an allocation; every rank puts its rank at the
 * window's first and last byte of the next rank, then everyone checks its own. */
static void part(int rank, int size)
{
    const MPI_Aint total = 3 * 4096 + 100, off = 4096 + 13, n = 4096 + 50;
    unsigned char *mem = NULL;
    MTEST_OK(MPI_Alloc_mem(total, MPI_INFO_NULL, &mem));
    memset(mem, 0xee, (size_t)total);
    MPI_Win win;
    MTEST_OK(MPI_Win_create(mem + off, n, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int to = (rank + 1) % size;
    unsigned char v = (unsigned char)rank, got[2] = {0, 0};
    MTEST_OK(MPI_Win_lock_all(0, win));
    MTEST_OK(MPI_Put(&v, 1, MPI_BYTE, to, 0, 1, MPI_BYTE, win));
    MTEST_OK(MPI_Put(&v, 1, MPI_BYTE, to, n - 1, 1, MPI_BYTE, win));
    MTEST_OK(MPI_Win_flush(to, win));
    MTEST_OK(MPI_Get(&got[0], 1, MPI_BYTE, to, 0, 1, MPI_BYTE, win));
    MTEST_OK(MPI_Get(&got[1], 1, MPI_BYTE, to, n - 1, 1, MPI_BYTE, win));
    MTEST_OK(MPI_Win_unlock_all(win));
    MTEST_CHECK(got[0] == v && got[1] == v, "part: read back %u %u from rank %d, wrote %u", got[0], got[1], to, v);
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
    int from = (rank + size - 1) % size, bad = 0;
    for (MPI_Aint i = 0; i < total; i++) {
        unsigned char want = (i == off || i == off + n - 1) ? (unsigned char)from : 0xee;
        bad += mem[i] != want;
    }
    MTEST_OK(MPI_Win_unlock(rank, win));
    MTEST_CHECK(!bad, "part: %d bytes wrong around the window", bad);
    MTEST_OK(MPI_Win_free(&win));
    MTEST_OK(MPI_Free_mem(mem));
}

static void many(int rank, int size)
{
    char **p = calloc(NALLOC, sizeof *p);
    MTEST_CHECK(p != NULL, "out of memory");
    for (int i = 0; i < NALLOC; i++) {
        MTEST_OK(MPI_Alloc_mem(i + 1, MPI_INFO_NULL, &p[i]));
        memset(p[i], i & 0x7f, (size_t)i + 1);
    }
    for (int k = 0; k < 2; k++) { /* the first (a file) and the last (malloc'd) */
        int i = k ? NALLOC - 1 : 0;
        MPI_Win win;
        MTEST_OK(MPI_Win_create(p[i], i + 1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        char c = 0;
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, (rank + 1) % size, 0, win));
        MTEST_OK(MPI_Get(&c, 1, MPI_CHAR, (rank + 1) % size, i, 1, MPI_CHAR, win));
        MTEST_OK(MPI_Win_unlock((rank + 1) % size, win));
        MTEST_CHECK(c == (char)(i & 0x7f), "allocation %d: read %d", i, c);
        MTEST_OK(MPI_Win_free(&win));
    }
    for (int i = 0; i < NALLOC; i += 2) {
        int bad = 0;
        for (int j = 0; j <= i; j++)
            bad += p[i][j] != (char)(i & 0x7f);
        MTEST_CHECK(!bad, "allocation %d changed", i);
        MTEST_OK(MPI_Free_mem(p[i]));
    }
    for (int i = 1; i < NALLOC; i += 2)
        MTEST_OK(MPI_Free_mem(p[i]));
    void *z = NULL;
    MTEST_OK(MPI_Alloc_mem(0, MPI_INFO_NULL, &z));
    MTEST_OK(MPI_Free_mem(z));
    free(p);
}

/* fork: the child holds its own copy of the memory at the fork, as with malloc: the
 * parent's writes after the fork are not seen by the child, the child's never reach the
 * parent; and the parent's memory is still its window's, reached by the others' puts. */
#define FORK_BYTES (1 << 20)
static void forked(int rank, int size)
{
    unsigned char *a = NULL, *small = NULL;
    MTEST_OK(MPI_Alloc_mem(FORK_BYTES, MPI_INFO_NULL, &a));
    MTEST_OK(MPI_Alloc_mem(100, MPI_INFO_NULL, &small));
    memset(a, 0x11, FORK_BYTES);
    memset(small, 0x11, 100);
    MPI_Win win;
    MTEST_OK(MPI_Win_create(a, FORK_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int go[2];
        MTEST_CHECK(pipe(go) == 0, "pipe failed");
        fflush(stdout);
        pid_t pid = fork();
        MTEST_CHECK(pid >= 0, "fork failed");
        if (pid == 0) { /* no MPI call here */
            char c;
            close(go[1]);
            int ok = read(go[0], &c, 1) == 1, snap = 0;
            for (size_t i = 0; i < FORK_BYTES; i += 4093)
                snap += a[i] == 0x11;
            snap += small[99] == 0x11;
            memset(a, 0x33, FORK_BYTES);
            memset(small, 0x33, 100);
            _exit(ok && snap == (int)((FORK_BYTES + 4092) / 4093) + 1 ? 0 : 3);
        }
        close(go[0]);
        memset(a, 0x22, FORK_BYTES);
        memset(small, 0x22, 100);
        MTEST_CHECK(write(go[1], "g", 1) == 1, "pipe write failed");
        close(go[1]);
        int st = 0;
        MTEST_CHECK(waitpid(pid, &st, 0) == pid, "waitpid failed");
        MTEST_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                    "fork: the child did not read the memory as it was at the fork (status %d)", st);
        int bad = 0;
        for (size_t i = 0; i < FORK_BYTES; i++)
            bad += a[i] != 0x22;
        bad += small[0] != 0x22 || small[99] != 0x22;
        MTEST_CHECK(!bad, "fork: %d bytes of the parent's memory changed by the child", bad);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1 && size > 1) {
        unsigned char v[64];
        memset(v, 0x44, sizeof v);
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        MTEST_OK(MPI_Put(v, 64, MPI_BYTE, 0, 4096, 64, MPI_BYTE, win));
        MTEST_OK(MPI_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && size > 1) {
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        MTEST_CHECK(a[4096] == 0x44 && a[4159] == 0x44 && a[4160] == 0x22, "fork: a put after it read %d %d %d",
                    a[4096], a[4159], a[4160]);
        MTEST_OK(MPI_Win_unlock(0, win));
    }
    MTEST_OK(MPI_Win_free(&win));
    MTEST_OK(MPI_Free_mem(small));
    MTEST_OK(MPI_Free_mem(a));
}

/* Win_shared_query on Win_allocate and on Win_create over MPI_Alloc_mem: where another
 * rank's memory is mapped here it is returned, with that rank's size, and a store through
 * it is what the owner reads after MPI_Win_sync and a barrier; elsewhere size 0 and NULL.
 * "direct": every rank must be reachable so (one node, mapped). With more than two ranks
 * the last gives 0 bytes: NULL and 0 for it everywhere but at itself. */
static MPI_Aint query_part(int t, int size) { return size > 2 && t == size - 1 ? 0 : 64 + 8 * t; }

static void query(int rank, int size, const char *mode)
{
    for (int k = 0; k < 2; k++) {
        MPI_Aint bytes = query_part(rank, size);
        unsigned char *mem = NULL;
        MPI_Win win;
        if (k == 0) {
            MTEST_OK(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        } else {
            MTEST_OK(MPI_Alloc_mem(bytes, MPI_INFO_NULL, &mem));
            MTEST_OK(MPI_Win_create(mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        }
        memset(mem, 0xff, (size_t)bytes);
        MTEST_OK(MPI_Win_lock_all(0, win));
        MTEST_OK(MPI_Win_sync(win));
        MPI_Barrier(MPI_COMM_WORLD);
        int reached = 0, *sent = calloc((size_t)size, sizeof(int)), *got = calloc((size_t)size, sizeof(int));
        for (int t = 0; t < size; t++) {
            MPI_Aint qs = -1;
            int du = -1;
            unsigned char *p = NULL;
            MTEST_OK(MPI_Win_shared_query(win, t, &qs, &du, &p));
            if (t == rank) {
                MTEST_CHECK(p == mem && qs == bytes && du == 1, "flavor %d: own part %p %ld", k, (void *)p, (long)qs);
            } else if (p) {
                MTEST_CHECK(qs == query_part(t, size) && qs && du == 1, "flavor %d: rank %d's part has size %ld", k, t,
                            (long)qs);
                p[rank] = (unsigned char)rank;
                sent[t] = 1;
                reached++;
            } else {
                MTEST_CHECK(qs == 0, "flavor %d: rank %d: NULL with size %ld", k, t, (long)qs);
            }
        }
        if (!strcmp(mode, "direct"))
            MTEST_CHECK(reached == size - 1 - (size > 2 && rank != size - 1),
                        "flavor %d: %d of the other ranks' memory reachable", k, reached);
        MTEST_OK(MPI_Win_sync(win));
        MPI_Alltoall(sent, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD);
        MTEST_OK(MPI_Win_sync(win));
        for (int o = 0; o < size; o++)
            if (o != rank && bytes)
                MTEST_CHECK(mem[o] == (got[o] ? (unsigned char)o : 0xff), "flavor %d: byte %d is %d (stored: %d)", k, o,
                            mem[o], got[o]);
        free(sent);
        free(got);
        MTEST_OK(MPI_Win_unlock_all(win));
        MTEST_OK(MPI_Win_free(&win));
        if (k == 1)
            MTEST_OK(MPI_Free_mem(mem));
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    progress(rank, size, argc > 1 ? argv[1] : "");
    dynamic(rank, size, argc > 1 ? argv[1] : "");
    part(rank, size);
    many(rank, size);
    forked(rank, size);
    query(rank, size, argc > 1 ? argv[1] : "");
    mtest_errors_return(MPI_COMM_WORLD);
    void *q = NULL;
    MTEST_ERR(MPI_Alloc_mem(-1, MPI_INFO_NULL, &q), MPI_ERR_SIZE);
    return mtest_finalize();
}
