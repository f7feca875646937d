/* Allreduce against a locally computed reference: sizes 0 .. 1 MiB, int/sum, a vector type
 * with gaps, double/max, unsigned/bxor; in place or not; blocking, MPI_Iallreduce (also four
 * at once around point-to-point) and MPI_Allreduce_init started three times. The testlist
 * forces every algorithm (RMPI_COLL_ALLREDUCE). Non-commutative user operations: waiting
 * for MPI_Op_create (ops branch). */
#include "collcheck.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    ck_matrix(C_ALLREDUCE, 0, 1 << 20);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    ck_t k = ck_make(K_INT);
    int v = mtest_rank + 1, sum = 0;
    MTEST_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, dup));
    MTEST_CHECK(sum == mtest_size * (mtest_size + 1) / 2, "allreduce on a dup: %d", sum);
    MTEST_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    MTEST_CHECK(sum == v, "allreduce on SELF: %d", sum);
    ck_free(&k);
    MPI_Comm_free(&dup);
    return mtest_finalize();
}
