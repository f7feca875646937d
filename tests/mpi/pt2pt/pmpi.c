/* The profiling interface: a tool defines MPI_Send and MPI_Barrier, counts the calls and
 * forwards them to PMPI_Send / PMPI_Barrier, as mpiP or Score-P do. The program's calls
 * must reach the tool and the data must still arrive. */
#include "mtest.h"

static int sends, barriers;

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    sends++;
    return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Barrier(MPI_Comm comm)
{
    barriers++;
    return PMPI_Barrier(comm);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank, n = mtest_size;
    int s0 = sends;
    if (me == 0) {
        for (int r = 1; r < n; r++)
            MPI_Send(&r, 1, MPI_INT, r, 3, MPI_COMM_WORLD);
        MTEST_CHECK(sends - s0 == n - 1, "the tool saw %d sends, expected %d", sends - s0, n - 1);
    } else {
        int v = -1;
        MPI_Recv(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MTEST_CHECK(v == me, "received %d, expected %d", v, me);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MTEST_CHECK(barriers == 1, "the tool saw %d barriers", barriers);
    return mtest_finalize();
}
