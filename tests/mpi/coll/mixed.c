/* Different non-blocking and persistent collectives outstanding at once on two
 * communicators, with point-to-point traffic on the same communicator in between, then
 * completed with Waitall / one by one in reverse order; repeated so persistent requests
 * restart while others run. */
#include "collcheck.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank, n = mtest_size;
    MPI_Comm dup;
    MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    ck_t k = ck_make(K_INT);
    enum { CNT = 5000 };
    int *bc = mtest_malloc(CNT * sizeof(int)), *pbc = mtest_malloc(CNT * sizeof(int));
    ck_call_t ar, sc, rs, pr;
    MPI_Request preq[2], req[8];
    int pval = 0, psum = -1;
    MTEST_OK(MPI_Allreduce_init(&pval, &psum, 1, MPI_INT, MPI_SUM, dup, MPI_INFO_NULL, &preq[0]));
    MTEST_OK(MPI_Bcast_init(pbc, CNT, MPI_INT, n - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &preq[1]));
    for (int round = 0; round < 3; round++) {
        /* persistent ones first, on both communicators */
        pval = me + round;
        for (int i = 0; i < CNT; i++)
            pbc[i] = me == n - 1 ? i * 3 + round : -1;
        MTEST_OK(MPI_Startall(2, preq));
        for (int i = 0; i < CNT; i++)
            bc[i] = me == 0 ? i + round : -1;
        MTEST_OK(MPI_Ibcast(bc, CNT, MPI_INT, 0, MPI_COMM_WORLD, &req[0]));
        ck_start(&ar, C_ALLREDUCE, &k, 40000, M_NONBLOCKING, round == 1, 0, 10 + round);
        ck_start(&sc, C_SCAN, &k, 100, M_NONBLOCKING, 0, 0, 20 + round);
        ck_start(&rs, C_REDSCAT_BLOCK, &k, 3000, M_NONBLOCKING, round == 2, 0, 30 + round);
        ck_start(&pr, C_REDUCE, &k, 7, M_NONBLOCKING, 0, round % n, 40 + round);
        MTEST_OK(MPI_Ibarrier(dup, &req[1]));
        int token = me * 10 + round, got = -1;
        MTEST_OK(MPI_Sendrecv(&token, 1, MPI_INT, (me + 1) % n, 7, &got, 1, MPI_INT, (me - 1 + n) % n, 7,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_CHECK(got == ((me - 1 + n) % n) * 10 + round, "ring token %d", got);
        req[2] = ar.req, req[3] = sc.req, req[4] = rs.req, req[5] = pr.req;
        if (round % 2) {
            MTEST_OK(MPI_Waitall(6, req, MPI_STATUSES_IGNORE));
        } else {
            for (int i = 5; i >= 0; i--)
                MTEST_OK(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
        }
        MTEST_OK(MPI_Waitall(2, preq, MPI_STATUSES_IGNORE));
        ck_finish(&ar, &k);
        ck_finish(&sc, &k);
        ck_finish(&rs, &k);
        ck_finish(&pr, &k);
        ck_free_call(&ar), ck_free_call(&sc), ck_free_call(&rs), ck_free_call(&pr);
        int bad = 0;
        for (int i = 0; i < CNT; i++)
            bad += bc[i] != i + round || pbc[i] != i * 3 + round;
        MTEST_CHECK(!bad, "round %d: %d bad broadcast elements", round, bad);
        MTEST_CHECK(psum == n * (n - 1) / 2 + n * round, "round %d: persistent allreduce %d", round, psum);
    }
    MTEST_OK(MPI_Request_free(&preq[0]));
    MTEST_OK(MPI_Request_free(&preq[1]));
    free(bc);
    free(pbc);
    ck_free(&k);
    MPI_Comm_free(&dup);
    return mtest_finalize();
}
