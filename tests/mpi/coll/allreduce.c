/* Allreduce against a locally computed reference: sizes 0 .. 1 MiB, int/sum, a vector type
 * with gaps, double/max, unsigned/bxor; in place or not; blocking, MPI_Iallreduce (also four
 * at once around point-to-point) and MPI_Allreduce_init started three times. The testlist
 * forces every algorithm (RMPI_COLL_ALLREDUCE). A persistent allreduce outlives
 * MPI_Type_free of its type. Non-commutative user operations: noncomm.c. */
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
    /* a persistent allreduce keeps its vector type and runs after MPI_Type_free */
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int a[3] = {mtest_rank, -7, 10 * mtest_rank}, b[3] = {0, -7, 0};
    MPI_Request r;
    MTEST_OK(MPI_Allreduce_init(a, b, 1, vec, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    MPI_Type_free(&vec);
    for (int rep = 0; rep < 2; rep++) {
        MTEST_OK(MPI_Start(&r));
        MTEST_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        int t = mtest_size * (mtest_size - 1) / 2;
        MTEST_CHECK(b[0] == t && b[1] == -7 && b[2] == 10 * t, "allreduce with a freed type: %d %d %d", b[0], b[1],
                    b[2]);
    }
    MTEST_OK(MPI_Request_free(&r));
    MPI_Comm_free(&dup);
    return mtest_finalize();
}
