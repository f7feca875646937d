/* MPI_Barrier: nobody leaves before the last rank has entered. Each rank in turn arrives
 * 0.1 s late; every rank checks it left after the late rank entered (MPI_Wtime is
 * CLOCK_MONOTONIC, common to the processes of one host). How long a rank's own wait lasted
 * is not checked: a rank descheduled on a loaded machine after the first barrier measures
 * less, and leaving after the late rank entered already proves the barrier waited. Then
 * many barriers in a row, on a duplicate, on MPI_COMM_SELF, and interleaved with pending
 * messages. */
#include "mtest.h"

#define LATE 0.1

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const int me = mtest_rank, np = mtest_size;
    for (int late = 0; late < np; late++) {
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
        double entered = 0;
        if (me == late) {
            mtest_sleep(LATE);
            entered = MPI_Wtime();
        }
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
        double left = MPI_Wtime();
        /* tell everyone when the late rank entered */
        if (me == late) {
            for (int r = 0; r < np; r++)
                if (r != me)
                    MTEST_OK(MPI_Send(&entered, 1, MPI_DOUBLE, r, 1, MPI_COMM_WORLD));
        } else {
            MTEST_OK(MPI_Recv(&entered, 1, MPI_DOUBLE, late, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
        MTEST_CHECK(left >= entered, "rank left the barrier %.4f s before rank %d entered it", entered - left, late);
    }

    for (int i = 0; i < 500; i++)
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Comm d;
    MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    for (int i = 0; i < 100; i++)
        MTEST_OK(MPI_Barrier(i % 2 ? d : MPI_COMM_WORLD));
    MTEST_OK(MPI_Barrier(MPI_COMM_SELF));

    /* barriers while point-to-point messages are pending (eager and rendezvous) */
    static int big[30000];
    int right = (me + 1) % np, left = (me - 1 + np) % np;
    for (int i = 0; i < 30000; i++)
        big[i] = me + i;
    static int in[30000];
    MPI_Request rq[2];
    MTEST_OK(MPI_Isend(big, 30000, MPI_INT, right, 0, d, &rq[0]));
    MTEST_OK(MPI_Barrier(d));
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    MTEST_OK(MPI_Irecv(in, 30000, MPI_INT, left, 0, d, &rq[1]));
    MTEST_OK(MPI_Barrier(d));
    MTEST_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 30000; i++)
        if (in[i] != left + i) {
            MTEST_CHECK(0, "message across barriers: in[%d] = %d", i, in[i]);
            break;
        }
    MTEST_OK(MPI_Comm_free(&d));
    return mtest_finalize();
}
