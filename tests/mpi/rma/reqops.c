/* Request-based operations: Rput, Rget, Raccumulate, Rget_accumulate inside lock_all,
 * waited with Waitall; a freed Rget request still lands; PROC_NULL targets complete at once. */
#include "mtest.h"

#define N 32

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *mem;
    MPI_Win win;
    MTEST_OK(MPI_Win_allocate(3 * N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i < 3 * N; i++)
        mem[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    int t = (rank + 1) % size, from = (rank - 1 + size) % size;
    double src[N], res[N], back[N];
    for (int i = 0; i < N; i++)
        src[i] = rank + i * 0.5;
    /* a non-blocking collective in flight meanwhile: its progress hook and the window's share the core */
    MPI_Request ib;
    MTEST_OK(MPI_Ibarrier(MPI_COMM_WORLD, &ib));
    MTEST_OK(MPI_Win_lock_all(0, win));
    MPI_Request rq[4];
    MTEST_OK(MPI_Rput(src, N, MPI_DOUBLE, t, 0, N, MPI_DOUBLE, win, &rq[0]));
    MTEST_OK(MPI_Raccumulate(src, N, MPI_DOUBLE, t, N, N, MPI_DOUBLE, MPI_SUM, win, &rq[1]));
    MTEST_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    MTEST_OK(MPI_Win_flush(t, win));
    MTEST_OK(MPI_Rget(back, N, MPI_DOUBLE, t, 0, N, MPI_DOUBLE, win, &rq[2]));
    MTEST_OK(MPI_Rget_accumulate(src, N, MPI_DOUBLE, res, N, MPI_DOUBLE, t, N, N, MPI_DOUBLE, MPI_SUM, win, &rq[3]));
    MTEST_OK(MPI_Waitall(2, &rq[2], MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++) {
        MTEST_CHECK(back[i] == src[i], "rget [%d] = %g", i, back[i]);
        MTEST_CHECK(res[i] == src[i], "rget_accumulate fetched [%d] = %g", i, res[i]);
    }
    /* a freed request: the data still lands, the flush waits for it */
    double late = -1;
    MPI_Request fr;
    MTEST_OK(MPI_Rget(&late, 1, MPI_DOUBLE, t, N + 1, 1, MPI_DOUBLE, win, &fr));
    MTEST_OK(MPI_Request_free(&fr));
    MTEST_OK(MPI_Win_flush_local(t, win));
    MTEST_CHECK(late == 2 * src[1], "freed rget: %g", late);
    /* PROC_NULL */
    MTEST_OK(MPI_Rput(src, N, MPI_DOUBLE, MPI_PROC_NULL, 0, N, MPI_DOUBLE, win, &rq[0]));
    int flag = 0;
    MTEST_OK(MPI_Test(&rq[0], &flag, MPI_STATUS_IGNORE));
    MTEST_CHECK(flag && rq[0] == MPI_REQUEST_NULL, "PROC_NULL rput not complete at once");
    MTEST_OK(MPI_Win_unlock_all(win));
    MTEST_OK(MPI_Wait(&ib, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N; i++) {
        double s = from + i * 0.5;
        MTEST_CHECK(mem[i] == s, "put landed [%d] = %g", i, mem[i]);
        MTEST_CHECK(mem[N + i] == 2 * s, "accumulates [%d] = %g", i, mem[N + i]);
    }
    MTEST_OK(MPI_Win_free(&win));
    return mtest_finalize();
}
