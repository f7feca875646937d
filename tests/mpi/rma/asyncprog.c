/* Passive target served while the target computes outside MPI (RMPI_ASYNC_PROGRESS):
 * rank 0 exposes a window, leaves the barrier and then makes no MPI call while it polls a
 * flag file the ranks share on this host (they are on one host even across fake nodes);
 * every other rank takes an exclusive lock on rank 0, puts 4 longs into its own slots,
 * flushes, gets them back, adds its rank to a shared counter with Accumulate, unlocks,
 * checks what it got and raises its flag byte. Rank 0 asserts that every flag came while it
 * was outside MPI (up to 10 s), then reads its window: the puts and the counter's exact sum.
 * Once for each flavor: Win_allocate, Win_create, a dynamic window.
 * args=stall: the same first phase, expecting no progress: rank 0 waits 3 s outside MPI
 * and asserts that no flag came (the origins must be stuck in their epoch), then enters MPI
 * and checks that the epochs then complete with the right data. Over tcp (emulated RDMA,
 * locks as messages) an origin cannot finish without the target's progress. */
#include "mtest.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 4
#define NPHASE 3

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long val(int phase, int r, int i) { return 1000000L * (phase + 1) + 1000L * r + i; }

/* Polls the flag bytes of phase until every origin raised its own or limit seconds passed,
 * with no MPI call: returns the number raised. */
static int wait_flags(int fd, int phase, int size, double limit)
{
    double t0 = now();
    char *f = malloc((size_t)size);
    int got = 0;
    for (;;) {
        if (pread(fd, f, (size_t)size, (off_t)phase * size) != size)
            memset(f, 0, (size_t)size);
        got = 0;
        for (int r = 1; r < size; r++)
            got += f[r] == 1;
        if (got == size - 1 || now() - t0 > limit)
            break;
        usleep(1000);
    }
    free(f);
    return got;
}

static void origin(MPI_Win win, MPI_Aint base, int phase, int rank, int fd)
{
    long put[SLOTS], got[SLOTS], add = rank;
    for (int i = 0; i < SLOTS; i++) {
        put[i] = val(phase, rank, i);
        got[i] = -1;
    }
    MPI_Aint disp = base + (MPI_Aint)((1 + SLOTS * rank) * sizeof(long));
    MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    MTEST_OK(MPI_Put(put, SLOTS, MPI_LONG, 0, disp, SLOTS, MPI_LONG, win));
    MTEST_OK(MPI_Win_flush(0, win));
    MTEST_OK(MPI_Get(got, SLOTS, MPI_LONG, 0, disp, SLOTS, MPI_LONG, win));
    MTEST_OK(MPI_Accumulate(&add, 1, MPI_LONG, 0, base, 1, MPI_LONG, MPI_SUM, win));
    MTEST_OK(MPI_Win_unlock(0, win));
    for (int i = 0; i < SLOTS; i++)
        MTEST_CHECK(got[i] == put[i], "phase %d rank %d: got[%d] = %ld, put %ld", phase, rank, i, got[i], put[i]);
    char one = 1;
    MTEST_CHECK(pwrite(fd, &one, 1, (off_t)phase * mtest_size + rank) == 1, "rank %d: the flag write failed", rank);
}

/* The target's check of its window memory mem after every origin's epoch. */
static void check_window(MPI_Win win, const long *mem, int phase, int size)
{
    MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
    long sum = 0;
    for (int r = 1; r < size; r++)
        sum += r;
    MTEST_CHECK(mem[0] == sum, "phase %d: counter %ld, expected %ld", phase, mem[0], sum);
    for (int r = 1; r < size; r++)
        for (int i = 0; i < SLOTS; i++)
            MTEST_CHECK(mem[1 + SLOTS * r + i] == val(phase, r, i), "phase %d: slot %d of rank %d is %ld, expected %ld",
                        phase, i, r, mem[1 + SLOTS * r + i], val(phase, r, i));
    MTEST_OK(MPI_Win_unlock(0, win));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int stall = argc > 1 && !strcmp(argv[1], "stall");
    int rank = mtest_rank, size = mtest_size;
    MTEST_CHECK(size >= 2, "needs 2 ranks or more");
    char path[256] = "";
    if (rank == 0) {
        const char *dir = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/rmpi-asyncprog-XXXXXX", dir && *dir ? dir : "/tmp");
        int fd = mkstemp(path);
        MTEST_CHECK(fd >= 0 && ftruncate(fd, (off_t)NPHASE * size) == 0, "no flag file %s", path);
        if (fd >= 0)
            close(fd);
    }
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    int fd = open(path, O_RDWR);
    MTEST_CHECK(fd >= 0, "rank %d: cannot open the flag file %s", rank, path);

    size_t bytes = (size_t)(1 + SLOTS * size) * sizeof(long);
    for (int phase = 0; phase < (stall ? 1 : NPHASE); phase++) {
        long *mem = NULL, *own = NULL;
        MPI_Win win;
        MPI_Aint base = 0;
        if (phase == 0) {
            MTEST_OK(MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        } else if (phase == 1) {
            own = mtest_malloc(bytes);
            MTEST_OK(MPI_Win_create(own, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
            mem = own;
        } else {
            MTEST_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
            if (rank == 0) {
                own = mtest_malloc(bytes);
                MTEST_OK(MPI_Win_attach(win, own, (MPI_Aint)bytes));
                MPI_Get_address(own, &base);
            }
            mem = own;
            MPI_Bcast(&base, 1, MPI_AINT, 0, MPI_COMM_WORLD);
        }
        if (rank == 0) {
            MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
            memset(mem, 0, bytes);
            MTEST_OK(MPI_Win_unlock(0, win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            /* outside MPI from here to the flags */
            double t0 = now();
            int got = wait_flags(fd, phase, size, stall ? 3.0 : 10.0);
            double t = now() - t0;
            if (stall)
                MTEST_CHECK(got == 0,
                            "stall: %d of %d origins finished while the target was outside MPI without a "
                            "progress thread",
                            got, size - 1);
            else
                MTEST_CHECK(got == size - 1,
                            "phase %d: %d of %d origins finished while the target stayed outside MPI for %.1f s", phase,
                            got, size - 1, t);
        } else {
            origin(win, base, phase, rank, fd);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            MTEST_CHECK(wait_flags(fd, phase, size, 0) == size - 1, "phase %d: an origin never raised its flag", phase);
            check_window(win, mem, phase, size);
        }
        if (phase == 2 && rank == 0)
            MTEST_OK(MPI_Win_detach(win, own));
        MTEST_OK(MPI_Win_free(&win));
        free(own);
    }
    if (fd >= 0)
        close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(path);
    return mtest_finalize();
}
