/* Reduce against a locally computed reference: the full matrix of allreduce.c with the
 * last rank as root, then every root with small and large vectors, in place at the root or
 * not. The testlist forces every algorithm (RMPI_COLL_REDUCE). */
#include "collcheck.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    ck_matrix(C_REDUCE, mtest_size - 1, 1 << 20);
    ck_t k = ck_make(K_INT);
    for (int root = 0; root < mtest_size; root++) {
        ck_one(C_REDUCE, &k, 100, M_BLOCKING, root % 2, root, 900 + root);
        ck_one(C_REDUCE, &k, 40000, root % 3 ? M_BLOCKING : M_NONBLOCKING, root % 2 == 0, root, 950 + root);
    }
    ck_free(&k);
    return mtest_finalize();
}
