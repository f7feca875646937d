/* Dynamic windows: the target detaches a region while an origin's epoch still accesses it
 * (erroneous in MPI, so the origin must get a clear error, never a crash or a hang). Rank 0
 * is the origin, the last rank the target (another node under RMPI_TOPO_FAKE_NODES):
 * - lock, lock_all and fence epochs: a put and a get of 64 KiB (RDMA over libfabric, with
 *   the key of the region's table entry the origin read at the epoch's start) succeed, the
 *   target detaches the region while the epoch is open and says so by message, then a put
 *   and a get of 64 KiB (the get first under lock_all) and a put of 8 B into it fail with
 *   MPI_ERR_RMA_RANGE at the next flush (fence) and write nothing: tcp;ofi_rxm drops the
 *   connection when a write carries a closed key, and the job hung there;
 * - memory never attached, in the same epoch: the same error;
 * - after each case the window goes on: the region attached again and written, every byte
 *   checked, then a final put and get checked.
 * mtest's watchdog (MTEST_TIMEOUT, the testlist's timeout) turns a hang into a failure. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

enum { BIG = 64 << 10 };

static int untouched(const unsigned char *p, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += p[i] != 0xee;
    return bad;
}

enum mode { LOCK, LOCK_ALL, FENCE, NMODES };
static const char *mode_name[NMODES] = {"lock", "lock_all", "fence"};

static int open_epoch(enum mode m, int t, MPI_Win win)
{
    return m == LOCK       ? MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win)
           : m == LOCK_ALL ? MPI_Win_lock_all(0, win)
                           : MPI_SUCCESS;
}

static int close_epoch(enum mode m, int t, MPI_Win win)
{
    return m == LOCK ? MPI_Win_unlock(t, win) : m == LOCK_ALL ? MPI_Win_unlock_all(win) : MPI_SUCCESS;
}

/* The origin's sync inside the epoch: a flush, or under fence the fence itself. */
static int sync_op(enum mode m, int t, MPI_Win win)
{
    return m == FENCE ? MPI_Win_fence(0, win) : MPI_Win_flush(t, win);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const int rank = mtest_rank, size = mtest_size, origin = 0, target = size - 1;
    MPI_Win win;
    MTEST_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MTEST_OK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    unsigned char *reg = malloc(BIG), *never = malloc(BIG), *src = malloc(BIG), *back = malloc(BIG);
    MPI_Aint ra, na;
    MPI_Get_address(reg, &ra);
    MPI_Get_address(never, &na);
    MPI_Bcast(&ra, 1, MPI_AINT, target, MPI_COMM_WORLD);
    MPI_Bcast(&na, 1, MPI_AINT, target, MPI_COMM_WORLD);

    for (int m = 0; m < NMODES; m++) {
        int seed = 10 * m;
        if (rank == target) {
            memset(reg, 0, BIG);
            memset(never, 0xee, BIG);
            MTEST_OK(MPI_Win_attach(win, reg, BIG));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (m == FENCE)
            MTEST_OK(MPI_Win_fence(0, win));
        if (rank == origin && size > 1) {
            MTEST_OK(open_epoch(m, target, win));
            mtest_fill(src, BIG, (unsigned)seed);
            MTEST_OK(MPI_Put(src, BIG, MPI_BYTE, target, ra, BIG, MPI_BYTE, win));
            if (m != FENCE) { /* (a fence epoch has no flush: the put may land or not) */
                MTEST_OK(MPI_Win_flush(target, win));
                memset(back, 0, BIG);
                MTEST_OK(MPI_Get(back, BIG, MPI_BYTE, target, ra, BIG, MPI_BYTE, win));
                MTEST_OK(MPI_Win_flush(target, win));
                mtest_check_buf(back, BIG, (unsigned)seed, "64 KiB read back before the detach");
            }
            /* the target detaches inside our epoch */
            MPI_Send(NULL, 0, MPI_BYTE, target, 1, MPI_COMM_WORLD);
            MPI_Recv(NULL, 0, MPI_BYTE, target, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            /* the first access after the detach uses the epoch's stale copy of the table:
             * a get under lock_all, a put otherwise */
            mtest_fill(src, BIG, (unsigned)seed + 1);
            memset(back, 0x11, BIG);
            for (int i = 0; i < 2; i++) {
                if ((i == 0) == (m == LOCK_ALL))
                    MTEST_OK(MPI_Get(back, BIG, MPI_BYTE, target, ra, BIG, MPI_BYTE, win));
                else
                    MTEST_OK(MPI_Put(src, BIG, MPI_BYTE, target, ra, BIG, MPI_BYTE, win));
                MTEST_ERR(sync_op(m, target, win), MPI_ERR_RMA_RANGE);
            }
            MTEST_OK(MPI_Put(src, 8, MPI_BYTE, target, ra, 8, MPI_BYTE, win));
            MTEST_ERR(sync_op(m, target, win), MPI_ERR_RMA_RANGE);
            /* never attached */
            MTEST_OK(MPI_Put(src, BIG, MPI_BYTE, target, na, BIG, MPI_BYTE, win));
            MTEST_ERR(sync_op(m, target, win), MPI_ERR_RMA_RANGE);
            MTEST_OK(close_epoch(m, target, win));
        } else if (rank == target && size > 1) {
            MPI_Recv(NULL, 0, MPI_BYTE, origin, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (m != FENCE)
                mtest_check_buf(reg, BIG, (unsigned)seed, "64 KiB put before the detach");
            MTEST_OK(MPI_Win_detach(win, reg));
            memset(reg, 0xee, BIG);
            MPI_Send(NULL, 0, MPI_BYTE, origin, 2, MPI_COMM_WORLD);
        }
        /* the origin's four fences above, matched by everyone else's */
        for (int i = 0; m == FENCE && size > 1 && rank != origin && i < 4; i++)
            MTEST_OK(MPI_Win_fence(0, win));
        if (m == FENCE)
            MTEST_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == target && size > 1) {
            int wrote = untouched(reg, BIG), wrote_never = untouched(never, BIG);
            MTEST_CHECK(!wrote, "%s: the detached region got %d bytes written", mode_name[m], wrote);
            MTEST_CHECK(!wrote_never, "%s: memory never attached got %d bytes written", mode_name[m], wrote_never);
        }
        /* the window goes on: attached again, written and read back */
        if (rank == target) {
            memset(reg, 0, BIG);
            MTEST_OK(MPI_Win_attach(win, reg, BIG));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == origin) {
            mtest_fill(src, BIG, (unsigned)seed + 2);
            MTEST_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
            MTEST_OK(MPI_Put(src, BIG, MPI_BYTE, target, ra, BIG, MPI_BYTE, win));
            MTEST_OK(MPI_Win_flush(target, win));
            memset(back, 0, BIG);
            MTEST_OK(MPI_Get(back, BIG, MPI_BYTE, target, ra, BIG, MPI_BYTE, win));
            MTEST_OK(MPI_Win_unlock(target, win));
            mtest_check_buf(back, BIG, (unsigned)seed + 2, "after the error, 64 KiB read back");
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == target) {
            mtest_check_buf(reg, BIG, (unsigned)seed + 2, "after the error, 64 KiB put");
            MTEST_OK(MPI_Win_detach(win, reg));
        }
    }
    MTEST_OK(MPI_Win_free(&win));
    free(reg);
    free(never);
    free(src);
    free(back);
    return mtest_finalize();
}
