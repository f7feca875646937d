/* Bad arguments to the collectives under MPI_ERRORS_RETURN give the right error class,
 * start nothing (the collectives after them still match) and go through the
 * communicator's error handler: MPI_ERR_COMM, MPI_ERR_ROOT, MPI_ERR_COUNT, MPI_ERR_TYPE,
 * MPI_ERR_OP (invalid, or not defined on the type), MPI_ERR_REQUEST (NULL request),
 * MPI_ERR_BUFFER (MPI_IN_PLACE where not allowed, aliased buffers, NULL buffers),
 * MPI_ERR_ARG (NULL recvcounts). */
#include "mtest.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    mtest_errors_return(MPI_COMM_WORLD);
    MPI_Comm w = MPI_COMM_WORLD;
    int n = mtest_size, me = mtest_rank;
    int a[4] = {1, 2, 3, 4}, b[4];
    double d[4] = {0};
    MPI_Request rq = MPI_REQUEST_NULL;
    int counts[64];
    for (int i = 0; i < n; i++)
        counts[i] = 1;

    MTEST_ERR(MPI_Bcast(a, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    MTEST_ERR(MPI_Allreduce(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL), MPI_ERR_COMM);
    MTEST_ERR(MPI_Ibarrier(MPI_COMM_NULL, &rq), MPI_ERR_COMM);

    MTEST_ERR(MPI_Bcast(a, 1, MPI_INT, n, w), MPI_ERR_ROOT);
    MTEST_ERR(MPI_Bcast(a, 1, MPI_INT, -1, w), MPI_ERR_ROOT);
    MTEST_ERR(MPI_Ibcast(a, 1, MPI_INT, MPI_ROOT, w, &rq), MPI_ERR_ROOT);
    MTEST_ERR(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, n, w), MPI_ERR_ROOT);
    MTEST_ERR(MPI_Reduce_init(a, b, 1, MPI_INT, MPI_SUM, -3, w, MPI_INFO_NULL, &rq), MPI_ERR_ROOT);

    MTEST_ERR(MPI_Bcast(a, -1, MPI_INT, 0, w), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Reduce(a, b, -1, MPI_INT, MPI_SUM, 0, w), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Allreduce(a, b, -2, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Iscan(a, b, -1, MPI_INT, MPI_SUM, w, &rq), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Exscan_init(a, b, -1, MPI_INT, MPI_SUM, w, MPI_INFO_NULL, &rq), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Reduce_scatter_block(a, b, -1, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    counts[n - 1] = -1;
    MTEST_ERR(MPI_Reduce_scatter(a, b, counts, MPI_INT, MPI_SUM, w), MPI_ERR_COUNT);
    counts[n - 1] = 1;
    MTEST_ERR(MPI_Bcast_c(a, -1, MPI_INT, 0, w), MPI_ERR_COUNT);

    MTEST_ERR(MPI_Bcast(a, 1, MPI_DATATYPE_NULL, 0, w), MPI_ERR_TYPE);
    MTEST_ERR(MPI_Allreduce(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, w), MPI_ERR_TYPE);
    MPI_Datatype unc;
    MPI_Type_contiguous(2, MPI_INT, &unc);
    MTEST_ERR(MPI_Reduce(a, b, 1, unc, MPI_SUM, 0, w), MPI_ERR_TYPE);
    MTEST_ERR(MPI_Bcast(a, 1, unc, 0, w), MPI_ERR_TYPE);
    MPI_Type_free(&unc);

    MTEST_ERR(MPI_Allreduce(a, b, 1, MPI_INT, MPI_OP_NULL, w), MPI_ERR_OP);
    MTEST_ERR(MPI_Reduce(d, d + 2, 1, MPI_DOUBLE, MPI_BAND, 0, w), MPI_ERR_OP);
    MTEST_ERR(MPI_Iallreduce(d, d + 2, 1, MPI_DOUBLE, MPI_BXOR, w, &rq), MPI_ERR_OP);
    MTEST_ERR(MPI_Scan(a, b, 1, MPI_INT, MPI_REPLACE, w), MPI_ERR_OP);

    MTEST_ERR(MPI_Ibcast(a, 1, MPI_INT, 0, w, NULL), MPI_ERR_REQUEST);
    MTEST_ERR(MPI_Ibarrier(w, NULL), MPI_ERR_REQUEST);
    MTEST_ERR(MPI_Allreduce_init(a, b, 1, MPI_INT, MPI_SUM, w, MPI_INFO_NULL, NULL), MPI_ERR_REQUEST);
    MTEST_ERR(MPI_Ireduce_scatter_block(a, b, 1, MPI_INT, MPI_SUM, w, NULL), MPI_ERR_REQUEST);

    MTEST_ERR(MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, w), MPI_ERR_BUFFER);
    MTEST_ERR(MPI_Allreduce(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    MTEST_ERR(MPI_Allreduce(a, a, 1, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    MTEST_ERR(MPI_Allreduce(NULL, b, 1, MPI_INT, MPI_SUM, w), MPI_ERR_BUFFER);
    MTEST_ERR(MPI_Bcast(NULL, 1, MPI_INT, 0, w), MPI_ERR_BUFFER);
    if (me != 0) /* only the root may pass MPI_IN_PLACE to Reduce; the root stays out */
        MTEST_ERR(MPI_Reduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, 0, w), MPI_ERR_BUFFER);

    MTEST_ERR(MPI_Reduce_scatter(a, b, NULL, MPI_INT, MPI_SUM, w), MPI_ERR_ARG);

    /* the communicator's own handler is called, with the code */
    MPI_Comm dup;
    MPI_Errhandler eh;
    MTEST_OK(MPI_Comm_dup(w, &dup));
    MTEST_OK(MPI_Comm_create_errhandler(mtest_recording_handler, &eh));
    MTEST_OK(MPI_Comm_set_errhandler(dup, eh));
    int rc = MPI_Bcast(a, 1, MPI_INT, n + 5, dup), cls = -1;
    MPI_Error_class(rc, &cls);
    MTEST_CHECK(cls == MPI_ERR_ROOT, "class %d, expected MPI_ERR_ROOT", cls);
    MTEST_CHECK(mtest_handler_calls == 1 && mtest_handler_code == rc && mtest_handler_comm == dup,
                "handler called %d times, code %d (returned %d)", mtest_handler_calls, mtest_handler_code, rc);
    MPI_Errhandler_free(&eh);

    /* nothing was started: collectives still match */
    int v = me + 1, sum = 0;
    MTEST_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, w));
    MTEST_CHECK(sum == n * (n + 1) / 2, "allreduce after errors: %d", sum);
    MTEST_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, dup));
    MTEST_CHECK(sum == n * (n + 1) / 2, "allreduce on the dup after errors: %d", sum);
    MTEST_OK(MPI_Barrier(dup));
    MPI_Comm_free(&dup);
    return mtest_finalize();
}
