/* Errors under the default handler MPI_ERRORS_ARE_FATAL (or MPI_ERRORS_ABORT) end the whole
 * job with a non-zero status and a message on stderr that names the function and the bad
 * argument. argv[1] picks the error; the job is expected to FAIL, so these modes are
 * registered with ctest properties (see tests/mpi/README.md), not in the testlist:
 *     rank      MPI_Send to rank = size            "MPI_Send: rank N is invalid"
 *     tag       MPI_Send with tag -1               "MPI_Send: tag -1 is invalid"
 *     comm      MPI_Send on MPI_COMM_NULL          "MPI_Send: invalid communicator"
 *     truncate  rank 0 receives 100 ints into 10   "MPI_Recv: ... truncated"
 *     abort     MPI_Comm_set_errhandler(MPI_ERRORS_ABORT) then an invalid rank
 *     usercall  MPI_Abort(MPI_COMM_WORLD, 42)      mpiexec exits 42
 * Only rank 1 (or 0) makes the error; the other ranks wait in a receive that never
 * completes, so the job ends only if the error takes everyone down.
 * Without an argument the program runs cleanly and passes (listed in the testlist). */
#include "mtest.h"

#include <string.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const char *mode = argc > 1 ? argv[1] : "none";
    const int culprit = mtest_size > 1 ? 1 : 0;
    int x[100] = {0};
    if (strcmp(mode, "none") == 0) {
        /* the clean run: a ping to make sure the program itself is sound */
        int v = mtest_rank, w = -1, p = (mtest_rank ^ 1) < mtest_size ? mtest_rank ^ 1 : mtest_rank;
        MTEST_OK(MPI_Sendrecv(&v, 1, MPI_INT, p, 0, &w, 1, MPI_INT, p, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_CHECK(w == p, "ping got %d", w);
        return mtest_finalize();
    }
    if (strcmp(mode, "truncate") == 0) {
        if (mtest_rank == 0)
            MPI_Recv(x, 10, MPI_INT, culprit, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else if (mtest_rank == culprit)
            MPI_Send(x, 100, MPI_INT, 0, 5, MPI_COMM_WORLD);
    } else if (mtest_rank == culprit) {
        if (strcmp(mode, "rank") == 0) {
            MPI_Send(x, 1, MPI_INT, mtest_size, 0, MPI_COMM_WORLD);
        } else if (strcmp(mode, "tag") == 0) {
            MPI_Send(x, 1, MPI_INT, 0, -1, MPI_COMM_WORLD);
        } else if (strcmp(mode, "comm") == 0) {
            MPI_Send(x, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
        } else if (strcmp(mode, "abort") == 0) {
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT);
            MPI_Send(x, 1, MPI_INT, mtest_size, 0, MPI_COMM_WORLD);
        } else if (strcmp(mode, "usercall") == 0) {
            MPI_Abort(MPI_COMM_WORLD, 42);
        } else {
            MTEST_CHECK(0, "unknown mode \"%s\"", mode);
            return mtest_finalize();
        }
        /* reaching this line means the error did not end the job */
        MTEST_CHECK(0, "mode %s: the erroneous call returned under a fatal error handler", mode);
    }
    /* everyone else waits for a message that never comes */
    MPI_Recv(x, 1, MPI_INT, MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MTEST_CHECK(0, "mode %s: a receive that nobody matches completed", mode);
    return mtest_finalize();
}
