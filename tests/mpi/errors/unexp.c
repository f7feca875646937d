/* Rank 1 sends 8 MB of eager messages on a communicator rank 0 receives on only after a
 * barrier: they all wait in rank 0's unexpected queue. Under a small RMPI_UNEXP_MAX the
 * job must end with a message naming rank 1 and the knob (tests/CMakeLists.txt), not grow
 * without limit; under the default bound it completes and checks the data. */
#include "mtest.h"

#include <string.h>

#define N 2000
#define LEN 4000

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    static unsigned char buf[LEN];
    if (mtest_rank == 1)
        for (int i = 0; i < N; i++) {
            memset(buf, i & 0xff, LEN);
            MPI_Send(buf, LEN, MPI_BYTE, 0, 0, c);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    if (mtest_rank == 0)
        for (int i = 0; i < N; i++) {
            MPI_Recv(buf, LEN, MPI_BYTE, 1, 0, c, MPI_STATUS_IGNORE);
            MTEST_CHECK(buf[0] == (i & 0xff) && buf[LEN - 1] == (i & 0xff), "message %d carries %d", i, buf[0]);
        }
    MPI_Comm_free(&c);
    return mtest_finalize();
}
