/* Shared-memory windows: one segment mapped by every rank; shared_query gives each rank's
 * part (contiguous in rank order), direct stores become visible to the others after
 * Win_sync + barrier; RMA operations work on it too. A communicator spanning several
 * nodes is refused with MPI_ERR_RMA_SHARED (RMPI_TOPO_FAKE_NODES makes pretend nodes). */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nr, ns;
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &ns);
    int *mine;
    MPI_Win win;
    /* rank i has i + 1 ints */
    MTEST_OK(MPI_Win_allocate_shared((MPI_Aint)(nr + 1) * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &win));
    MTEST_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
    for (int i = 0; i <= nr; i++)
        mine[i] = nr * 100 + i;
    MTEST_OK(MPI_Win_sync(win));
    MPI_Barrier(node);
    MTEST_OK(MPI_Win_sync(win));
    int *prev_end = NULL;
    for (int r = 0; r < ns; r++) {
        MPI_Aint sz;
        int du;
        int *p;
        MTEST_OK(MPI_Win_shared_query(win, r, &sz, &du, &p));
        MTEST_CHECK(sz == (MPI_Aint)(r + 1) * (MPI_Aint)sizeof(int) && du == (int)sizeof(int),
                    "rank %d: size %ld unit %d", r, (long)sz, du);
        if (prev_end)
            MTEST_CHECK(p == prev_end, "rank %d's part is not right after rank %d's", r, r - 1);
        prev_end = p + r + 1;
        if (r == nr)
            MTEST_CHECK(p == mine, "my own part is not where Win_allocate_shared put it");
        for (int i = 0; i <= r; i++)
            MTEST_CHECK(p[i] == r * 100 + i, "load of rank %d [%d] = %d", r, i, p[i]);
    }
    MPI_Aint sz;
    int du, *p0;
    MTEST_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &p0));
    MTEST_CHECK(sz == (MPI_Aint)sizeof(int), "PROC_NULL query size %ld", (long)sz);
    MTEST_OK(MPI_Win_unlock_all(win));
    MPI_Barrier(node);
    /* RMA on the shared window: everyone adds to rank 0's first int */
    MTEST_OK(MPI_Win_fence(0, win));
    int one = 1;
    MTEST_OK(MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, win));
    MTEST_OK(MPI_Win_fence(0, win));
    MTEST_CHECK(p0[0] == ns, "accumulated %d, expected %d", p0[0], ns);
    MTEST_OK(MPI_Win_free(&win));

    /* Odd ranks give no memory: their query is size 0 and a NULL base; a PROC_NULL query
     * names the first rank that gave some. */
    MTEST_OK(MPI_Win_allocate_shared(nr % 2 ? 0 : 64, 8, MPI_INFO_NULL, node, &mine, &win));
    for (int r = 0; r < ns; r++) {
        int *p = (int *)&sz;
        MTEST_OK(MPI_Win_shared_query(win, r, &sz, &du, &p));
        if (r % 2)
            MTEST_CHECK(sz == 0 && p == NULL, "rank %d gave 0 bytes: query says size %ld base %p", r, (long)sz,
                        (void *)p);
        else
            MTEST_CHECK(sz == 64 && p != NULL, "rank %d gave 64 bytes: query says size %ld base %p", r, (long)sz,
                        (void *)p);
    }
    MTEST_OK(MPI_Win_shared_query(win, MPI_PROC_NULL, &sz, &du, &p0));
    MTEST_CHECK(sz == 64 && p0 != NULL, "PROC_NULL query of a window with empty parts: size %ld", (long)sz);
    MTEST_OK(MPI_Win_free(&win));
    if (ns < size) {
        mtest_errors_return(MPI_COMM_WORLD);
        void *wb;
        MPI_Win ww = MPI_WIN_NULL;
        MTEST_ERR(MPI_Win_allocate_shared(16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wb, &ww), MPI_ERR_RMA_SHARED);
        MTEST_CHECK(ww == MPI_WIN_NULL, "a refused shared window was handed out");
    }
    MPI_Comm_free(&node);
    return mtest_finalize();
}
