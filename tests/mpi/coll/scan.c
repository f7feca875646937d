/* Scan and Exscan against a locally computed prefix reference (the matrix of allreduce.c
 * for each); Exscan leaves rank 0's buffer alone. RMPI_COLL_SCAN forces the algorithm. */
#include "collcheck.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    ck_matrix(C_SCAN, 0, 1 << 20);
    ck_matrix(C_EXSCAN, 0, 40000); /* same algorithms as Scan: large sizes once */
    /* rank 0's receive buffer is not touched by Exscan */
    int v = 5, r = -1;
    MTEST_OK(MPI_Exscan(&v, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    if (mtest_rank == 0)
        MTEST_CHECK(r == -1, "exscan wrote rank 0's buffer: %d", r);
    else
        MTEST_CHECK(r == 5 * mtest_rank, "exscan: %d, expected %d", r, 5 * mtest_rank);
    return mtest_finalize();
}
