/* Reduce_scatter (uneven counts, some zero) and Reduce_scatter_block against a locally
 * computed reference: the matrix of allreduce.c for each. RMPI_COLL_REDUCE_SCATTER forces
 * the algorithm. */
#include "collcheck.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    ck_matrix(C_REDSCAT, 0, 1 << 20);
    ck_matrix(C_REDSCAT_BLOCK, 0, 40000);
    return mtest_finalize();
}
