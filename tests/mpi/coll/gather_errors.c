/* Bad arguments under MPI_ERRORS_RETURN get the right class, from every flavour (blocking,
 * MPI_I*, *_init), and the communicator works afterwards. Every rank makes the same mistake
 * (a rank that found nothing wrong would go on into the collective). MPI_ERR_TRUNCATE
 * when a rank receives more than its counts allow. */
#include "gtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank, n = mtest_size;
    MPI_Comm w = MPI_COMM_WORLD;
    mtest_errors_return(w);
    int sb[64], rb[64 * 64], counts[64], displs[64];
    MPI_Datatype types[64];
    for (int i = 0; i < 64; i++)
        counts[i] = 1, displs[i] = i, types[i] = MPI_INT, sb[i] = i;
    MPI_Request req;
    MPI_Info ni = MPI_INFO_NULL;

    MTEST_ERR(MPI_Gather(sb, 1, MPI_INT, rb, 1, MPI_INT, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    MTEST_ERR(MPI_Ialltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, MPI_COMM_NULL, &req), MPI_ERR_COMM);

    MTEST_ERR(MPI_Gather(sb, 1, MPI_INT, rb, 1, MPI_INT, n, w), MPI_ERR_ROOT);
    MTEST_ERR(MPI_Igatherv(sb, 1, MPI_INT, rb, counts, displs, MPI_INT, -1, w, &req), MPI_ERR_ROOT);
    MTEST_ERR(MPI_Scatter_init(sb, 1, MPI_INT, rb, 1, MPI_INT, n + 3, w, ni, &req), MPI_ERR_ROOT);
    MTEST_ERR(MPI_Scatterv(sb, counts, displs, MPI_INT, rb, 1, MPI_INT, MPI_ROOT, w), MPI_ERR_ROOT);

    MTEST_ERR(MPI_Allgather(sb, -1, MPI_INT, rb, 1, MPI_INT, w), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Alltoall(sb, 1, MPI_INT, rb, -2, MPI_INT, w), MPI_ERR_COUNT);
    counts[n - 1] = -1;
    MTEST_ERR(MPI_Allgatherv(sb, 1, MPI_INT, rb, counts, displs, MPI_INT, w), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Ialltoallv(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_INT, w, &req), MPI_ERR_COUNT);
    counts[n - 1] = 1;

    MTEST_ERR(MPI_Allgather(sb, 1, MPI_DATATYPE_NULL, rb, 1, MPI_INT, w), MPI_ERR_TYPE);
    MPI_Datatype unc;
    MPI_Type_contiguous(2, MPI_INT, &unc);
    MTEST_ERR(MPI_Alltoall_init(sb, 1, unc, rb, 2, MPI_INT, w, ni, &req), MPI_ERR_TYPE);
    MTEST_ERR(MPI_Gather(sb, 1, unc, rb, 1, MPI_INT, 0, w), MPI_ERR_TYPE);
    types[n - 1] = unc;
    MTEST_ERR(MPI_Alltoallw(sb, counts, displs, types, rb, counts, displs, types, w), MPI_ERR_TYPE);
    types[n - 1] = MPI_INT;
    MPI_Type_free(&unc);

    MTEST_ERR(MPI_Allgather(NULL, 1, MPI_INT, rb, 1, MPI_INT, w), MPI_ERR_BUFFER);
    MTEST_ERR(MPI_Allgather(sb, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, w), MPI_ERR_BUFFER);
    MTEST_ERR(MPI_Alltoall(rb, 1, MPI_INT, rb, 1, MPI_INT, w), MPI_ERR_BUFFER);
    /* MPI_IN_PLACE: recvbuf at the root of a gather, sendbuf elsewhere */
    MTEST_ERR(MPI_Gather(me ? MPI_IN_PLACE : sb, 1, MPI_INT, me ? rb : MPI_IN_PLACE, 1, MPI_INT, 0, w), MPI_ERR_BUFFER);
    MTEST_ERR(MPI_Iscatter(me ? sb : MPI_IN_PLACE, 1, MPI_INT, me ? MPI_IN_PLACE : rb, 1, MPI_INT, 0, w, &req),
              MPI_ERR_BUFFER);

    MTEST_ERR(MPI_Allgatherv(sb, 1, MPI_INT, rb, NULL, displs, MPI_INT, w), MPI_ERR_ARG);
    MTEST_ERR(MPI_Iallgatherv(sb, 1, MPI_INT, rb, counts, NULL, MPI_INT, w, &req), MPI_ERR_ARG);
    MTEST_ERR(MPI_Alltoallv(sb, NULL, displs, MPI_INT, rb, counts, displs, MPI_INT, w), MPI_ERR_ARG);
    MTEST_ERR(MPI_Alltoallw_init(sb, counts, displs, NULL, rb, counts, displs, types, w, ni, &req), MPI_ERR_ARG);
    MTEST_ERR(MPI_Iallgather(sb, 1, MPI_INT, rb, 1, MPI_INT, w, NULL), MPI_ERR_REQUEST);

    /* neighbourhood collectives need a topology */
    MPI_Aint ad[64] = {0};
    MTEST_ERR(MPI_Neighbor_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, w), MPI_ERR_TOPOLOGY);
    MTEST_ERR(MPI_Ineighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, w, &req), MPI_ERR_TOPOLOGY);
    MTEST_ERR(MPI_Neighbor_alltoallv_init(sb, counts, displs, MPI_INT, rb, counts, displs, MPI_INT, w, ni, &req),
              MPI_ERR_TOPOLOGY);
    MTEST_ERR(MPI_Neighbor_alltoallw(sb, counts, ad, types, rb, counts, ad, types, w), MPI_ERR_TOPOLOGY);
    MTEST_ERR(MPI_Neighbor_allgatherv_c(sb, 1, MPI_INT, rb, NULL, NULL, MPI_INT, w), MPI_ERR_TOPOLOGY);

    /* truncation: the root expects one int less than each rank sends */
    for (int root = 0; root<n; root += n> 2 ? n - 1 : 1) {
        int rc = MPI_Gather(sb, 4, MPI_INT, rb, 3, MPI_INT, root, w);
        MTEST_ERR(rc, me == root ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
        MTEST_OK(MPI_Igather(sb, 4, MPI_INT, rb, 3, MPI_INT, root, w, &req));
        MTEST_ERR(MPI_Wait(&req, MPI_STATUS_IGNORE), me == root ? MPI_ERR_TRUNCATE : MPI_SUCCESS);
    }
    MTEST_ERR(MPI_Allgather(sb, 2, MPI_INT, rb, 1, MPI_INT, w), MPI_ERR_TRUNCATE);
    MTEST_ERR(MPI_Alltoall(sb, 2, MPI_INT, rb, 1, MPI_INT, w), MPI_ERR_TRUNCATE);

    /* and the communicator still works */
    int x = me * 3 + 1, all[64];
    MTEST_OK(MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, w));
    for (int i = 0; i < n; i++)
        MTEST_CHECK(all[i] == i * 3 + 1, "allgather after errors: [%d] = %d", i, all[i]);
    return mtest_finalize();
}
