/* Windows larger than 2 GiB of virtual space: displacements and sizes past 2^31 must not
 * be cut to 32 bits on any path (direct stores, active messages, RDMA). Win_create over an
 * anonymous MAP_NORESERVE mapping of 2 GiB + 1 MiB per rank, of which a few pages are
 * touched, then the same mapping attached to a dynamic window (addresses past its start +
 * 2^31); with the argument `allocate` also Win_allocate of that size on rank 0 (the node
 * segment is fallocate'd: that much memory of /dev/shm while it runs, so only in a line
 * labelled slow; with RMPI_RMA_DIRECT=0 it is plain malloc'd, virtual).
 * - Put at 2^31 + 8 r and at the end - 8 (r + 1), read at the target after a fence, Get back;
 * - Fetch_and_op and Accumulate under lock_all next to 2^31 from every rank at once: the
 *   exact sum;
 * - a Put whose end passes the window by one byte is MPI_ERR_RMA_RANGE (a dynamic window's
 *   at the flush). */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BIG (((MPI_Aint)1 << 31) + ((MPI_Aint)1 << 20))
#define HI ((MPI_Aint)1 << 31)

/* only0: rank 0 alone has the big window, every rank works on it; else each rank on the next.
 * at: the displacement of each rank's byte 0 (a dynamic window's addresses), or NULL for 0. */
static void check_window(MPI_Win win, char *base, int rank, int size, int only0, const char *flavor, const MPI_Aint *at)
{
    int t = only0 ? 0 : (rank + 1) % size;
    MPI_Aint d = at ? at[t] : 0; /* displacements at the target t */
    long v = 1000 + rank, last = 2000 + rank, got[2] = {0, 0}, one = 1, old = -1;
    MTEST_OK(MPI_Win_fence(0, win));
    MTEST_OK(MPI_Put(&v, 1, MPI_LONG, t, d + HI + 8 * rank, 1, MPI_LONG, win));
    MTEST_OK(MPI_Put(&last, 1, MPI_LONG, t, d + BIG - 8 * (rank + 1), 1, MPI_LONG, win));
    MTEST_OK(MPI_Win_fence(0, win));
    for (int o = 0; o < size; o++) {
        if (only0 ? rank != 0 : o != (rank - 1 + size) % size)
            continue;
        long mine[2];
        memcpy(&mine[0], base + HI + 8 * o, sizeof(long));
        memcpy(&mine[1], base + BIG - 8 * (o + 1), sizeof(long));
        MTEST_CHECK(mine[0] == 1000 + o && mine[1] == 2000 + o, "%s: memory past 2 GiB from rank %d holds %ld, %ld",
                    flavor, o, mine[0], mine[1]);
    }
    MTEST_OK(MPI_Get(&got[0], 1, MPI_LONG, t, d + HI + 8 * rank, 1, MPI_LONG, win));
    MTEST_OK(MPI_Get(&got[1], 1, MPI_LONG, t, d + BIG - 8 * (rank + 1), 1, MPI_LONG, win));
    MTEST_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MTEST_CHECK(got[0] == v && got[1] == last, "%s: got %ld, %ld past 2 GiB of rank %d", flavor, got[0], got[1], t);

    MTEST_OK(MPI_Win_lock_all(0, win));
    for (int r = 0; r < (only0 ? 1 : size); r++) {
        MTEST_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, r, (at ? at[r] : 0) + HI - 64, MPI_SUM, win));
        MTEST_OK(MPI_Accumulate(&one, 1, MPI_LONG, r, (at ? at[r] : 0) + HI - 56, 1, MPI_LONG, MPI_SUM, win));
    }
    MTEST_OK(MPI_Win_flush_all(win));
    MTEST_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (!only0 || rank == 0) {
        long sums[2];
        MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win));
        memcpy(sums, base + HI - 64, sizeof sums);
        MTEST_OK(MPI_Win_unlock(rank, win));
        MTEST_CHECK(sums[0] == size && sums[1] == size, "%s: sums near 2 GiB %ld, %ld, expected %d", flavor, sums[0],
                    sums[1], size);
    }

    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
    int cls = 0, rc = MPI_Put(&v, 8, MPI_BYTE, t, d + BIG - 7, 8, MPI_BYTE, win);
    if (rc == MPI_SUCCESS && at) /* a dynamic window's target finds it outside every region */
        rc = MPI_Win_flush(t, win);
    MPI_Error_class(rc, &cls);
    MTEST_CHECK(cls == MPI_ERR_RMA_RANGE, "%s: a put one byte past 2 GiB + 1 MiB: class %d", flavor, cls);
    MTEST_OK(MPI_Win_unlock(t, win));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *base;
    MPI_Win win;
    if (argc > 1 && !strcmp(argv[1], "allocate")) {
        MTEST_OK(MPI_Win_allocate(rank ? 0 : BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
        check_window(win, base, rank, size, 1, "Win_allocate", NULL);
        MTEST_OK(MPI_Win_free(&win));
    }

    void *map = mmap(NULL, (size_t)BIG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    int ok = map != MAP_FAILED, all = 0;
    MTEST_CHECK(ok, "mmap of 2 GiB + 1 MiB (MAP_NORESERVE) failed on rank %d", rank);
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) {
        MTEST_OK(MPI_Win_create(map, BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        check_window(win, map, rank, size, 0, "Win_create", NULL);
        MTEST_OK(MPI_Win_free(&win));
        /* the same memory attached to a dynamic window: absolute addresses past 2^31 of its start */
        MPI_Aint a, *at = malloc((size_t)size * sizeof(MPI_Aint));
        memset((char *)map + HI - 64, 0, 16); /* the sums start again */
        MTEST_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        MTEST_OK(MPI_Win_attach(win, map, BIG));
        MPI_Get_address(map, &a);
        MPI_Allgather(&a, 1, MPI_AINT, at, 1, MPI_AINT, MPI_COMM_WORLD);
        check_window(win, map, rank, size, 0, "dynamic", at);
        MPI_Barrier(MPI_COMM_WORLD);
        MTEST_OK(MPI_Win_detach(win, map));
        MTEST_OK(MPI_Win_free(&win));
        free(at);
    }
    if (ok)
        munmap(map, (size_t)BIG);
    return mtest_finalize();
}
