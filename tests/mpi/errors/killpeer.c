/* A peer dies mid-run: rank 1 raise(SIGKILL)s itself while rank 0 waits in MPI_Recv (an
 * eager-size receive, or with argv[1] = "rndv" a rendezvous transfer that rank 1 started
 * before dying). The job must end within seconds with a non-zero status and a message
 * naming rank 1 (from mpiexec or the library), not hang. The job is expected to FAIL, so
 * the kill modes are registered with ctest properties (see tests/mpi/README.md).
 * Without an argument nobody dies and the program passes (listed in the testlist). */
#include "mtest.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define BIG (4 << 20)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "none";
    const int kill_it = strcmp(mode, "none") != 0, rndv = strcmp(mode, "rndv") == 0;
    if (mtest_size < 2)
        return mtest_finalize();
    char *buf = mtest_malloc(BIG);
    memset(buf, 1, BIG);
    if (mtest_rank == 1) {
        MPI_Request rq = MPI_REQUEST_NULL;
        if (rndv)
            MTEST_OK(MPI_Isend(buf, BIG, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &rq));
        /* tell rank 0 we are about to go, so it is surely inside its receive */
        MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD));
        if (kill_it) {
            mtest_sleep(0.2);
            raise(SIGKILL);
        }
        if (!rndv)
            MTEST_OK(MPI_Send(buf, 1, MPI_BYTE, 0, 1, MPI_COMM_WORLD));
        else
            MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else if (mtest_rank == 0) {
        MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (rndv)
            mtest_sleep(0.5); /* rank 1 is dead by the time the rendezvous is served */
        MTEST_OK(MPI_Recv(buf, BIG, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_CHECK(!kill_it, "rank 0 received a message from a rank that was killed");
    }
    free(buf);
    return mtest_finalize();
}
