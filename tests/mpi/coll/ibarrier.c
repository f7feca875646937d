/* Non-blocking barrier: several outstanding at once, overlapped with point-to-point, and
 * completed through Test, Wait and Waitall; no rank leaves a barrier before all entered. */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank, n = mtest_size;
    MPI_Request reqs[4];
    for (int i = 0; i < 4; i++)
        MPI_Ibarrier(MPI_COMM_WORLD, &reqs[i]);
    /* point-to-point traffic while the barriers are in flight */
    int token = me, got = -1;
    MPI_Sendrecv(&token, 1, MPI_INT, (me + 1) % n, 5, &got, 1, MPI_INT, (me - 1 + n) % n, 5, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MTEST_CHECK(got == (me - 1 + n) % n, "ring token %d, expected %d", got, (me - 1 + n) % n);
    int flag = 0;
    while (!flag)
        MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE);
    MTEST_CHECK(reqs[0] == MPI_REQUEST_NULL, "completed request not set to MPI_REQUEST_NULL");
    MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
    MPI_Waitall(2, &reqs[2], MPI_STATUSES_IGNORE);

    /* ordering: rank 0 arrives late; nobody may leave the barrier before it entered (the
     * ranks share one host, so MPI_Wtime is one clock; a message sent before the barrier
     * need not have arrived after it when ranks use different transports) */
    double t0 = MPI_Wtime();
    if (me == 0)
        while (MPI_Wtime() - t0 < 0.2)
            ;
    double entered = MPI_Wtime();
    MPI_Request b;
    MPI_Ibarrier(MPI_COMM_WORLD, &b);
    MPI_Wait(&b, MPI_STATUS_IGNORE);
    double left = MPI_Wtime();
    MPI_Bcast(&entered, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MTEST_CHECK(left >= entered, "left the barrier %.6f s before rank 0 entered it", entered - left);
    /* persistent: started several times, freed once inactive and once while active */
    MPI_Request p;
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &p);
    for (int i = 0; i < 5; i++) {
        MPI_Start(&p);
        MPI_Wait(&p, MPI_STATUS_IGNORE);
        MTEST_CHECK(p != MPI_REQUEST_NULL, "a persistent request survives its completion");
    }
    MPI_Request_free(&p);
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &p);
    MPI_Start(&p);
    MPI_Request_free(&p);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Ibarrier(MPI_COMM_WORLD, &b);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Cancel(&b), cls = -1;
    MPI_Error_class(rc, &cls);
    MTEST_CHECK(cls == MPI_ERR_REQUEST, "cancel of a collective request: class %d, expected MPI_ERR_REQUEST", cls);
    MPI_Wait(&b, MPI_STATUS_IGNORE);
    return mtest_finalize();
}
