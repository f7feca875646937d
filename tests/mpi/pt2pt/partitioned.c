/* Partitioned communication (Psend_init, Precv_init, the Pready calls, Parrived) between rank 0 and
 * rank 1 (to itself with one rank): three rounds on the same requests, partitions marked in
 * reverse order, by range and by list; Parrived false before the sender marked anything
 * (the receiver waits for a go-ahead that the sender sends after its Start), true once
 * the data is in, data checked; an ordinary message with the same tag goes to the ordinary
 * receive, not to the partitioned one; a non-contiguous type; bad input gives the right
 * class: MPI_ANY_SOURCE, a partition out of range, a partition marked twice, Pready before
 * Start, Parrived on a send request. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define P 4
#define N 3000 /* ints per partition: 48 KB in all, a rendezvous on every provider */

static void round_trip(int me, int peer, int round, MPI_Request sreq, MPI_Request rreq, int *sbuf, int *rbuf)
{
    int flag = 1;
    if (me == 0) {
        MTEST_OK(MPI_Start(&sreq));
        for (int i = 0; i < P * N; i++)
            sbuf[i] = round * 1000003 + i;
        MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 50, MPI_COMM_WORLD)); /* go-ahead */
        MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (round == 0) {
            for (int p = P - 1; p >= 0; p--)
                MTEST_OK(MPI_Pready(p, sreq));
        } else if (round == 1) {
            MTEST_OK(MPI_Pready_range(P / 2, P - 1, sreq));
            MTEST_OK(MPI_Pready_range(0, P / 2 - 1, sreq));
        } else {
            int list[P];
            for (int p = 0; p < P; p++)
                list[p] = (p * 3) % P;
            MTEST_OK(MPI_Pready_list(P, list, sreq));
        }
        MTEST_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    }
    if (me == 1) {
        memset(rbuf, 0xff, sizeof(int) * P * N);
        MTEST_OK(MPI_Start(&rreq));
        MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Parrived(rreq, 0, &flag));
        MTEST_CHECK(!flag, "round %d: partition 0 arrived before the sender marked anything", round);
        MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 51, MPI_COMM_WORLD));
        for (flag = 0; !flag;)
            MTEST_OK(MPI_Parrived(rreq, P - 1, &flag));
        MTEST_OK(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
        int bad = 0;
        for (int i = 0; i < P * N; i++)
            bad += rbuf[i] != round * 1000003 + i;
        MTEST_CHECK(!bad, "round %d: %d of %d ints wrong", round, bad, P * N);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    mtest_errors_return(MPI_COMM_WORLD);
    int peer = mtest_size > 1 ? 1 - mtest_rank : 0;
    int *sbuf = mtest_malloc(sizeof(int) * P * N), *rbuf = mtest_malloc(sizeof(int) * P * N);
    MPI_Request sreq = MPI_REQUEST_NULL, rreq = MPI_REQUEST_NULL;

    if (mtest_size == 1) { /* to itself: both requests on rank 0 */
        int flag = 0;
        MTEST_OK(MPI_Psend_init(sbuf, P, N, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &sreq));
        MTEST_OK(MPI_Precv_init(rbuf, P, N, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &rreq));
        for (int i = 0; i < P * N; i++)
            sbuf[i] = 3 * i;
        MTEST_OK(MPI_Start(&rreq));
        MTEST_OK(MPI_Start(&sreq));
        MTEST_OK(MPI_Parrived(rreq, 1, &flag));
        MTEST_CHECK(!flag, "arrived before any Pready");
        MTEST_OK(MPI_Pready_range(0, P - 1, sreq));
        MTEST_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
        MTEST_CHECK(!memcmp(sbuf, rbuf, sizeof(int) * P * N), "data sent to itself differs");
    } else if (mtest_rank < 2) {
        if (mtest_rank == 0)
            MTEST_OK(MPI_Psend_init(sbuf, P, N, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &sreq));
        else
            MTEST_OK(MPI_Precv_init(rbuf, P, N, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &rreq));
        for (int round = 0; round < 3; round++)
            round_trip(mtest_rank, peer, round, sreq, rreq, sbuf, rbuf);

        /* an ordinary message of the same tag is not taken by the partitioned receive */
        int v = 0;
        if (mtest_rank == 0) {
            MTEST_OK(MPI_Send(&(int){42}, 1, MPI_INT, peer, 7, MPI_COMM_WORLD));
            MTEST_OK(MPI_Start(&sreq));
            for (int i = 0; i < P * N; i++)
                sbuf[i] = -i;
            MTEST_OK(MPI_Pready_range(0, P - 1, sreq));
            MTEST_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        } else {
            MTEST_OK(MPI_Start(&rreq));
            MTEST_OK(MPI_Recv(&v, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MTEST_CHECK(v == 42, "the ordinary receive got %d, not the ordinary message's 42", v);
            MTEST_OK(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
            MTEST_CHECK(rbuf[5] == -5 && rbuf[P * N - 1] == -(P * N - 1), "partitioned data after an ordinary message");
        }

        /* a vector type (10 ints, stride 2: extent 19 ints), one per partition */
        MPI_Datatype vec;
        MPI_Type_vector(10, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        MPI_Request vs = MPI_REQUEST_NULL, vr = MPI_REQUEST_NULL;
        if (mtest_rank == 0) {
            for (int i = 0; i < 19 * P; i++)
                sbuf[i] = 100 + i;
            MTEST_OK(MPI_Psend_init(sbuf, P, 1, vec, peer, 8, MPI_COMM_WORLD, MPI_INFO_NULL, &vs));
            MTEST_OK(MPI_Start(&vs));
            MTEST_OK(MPI_Pready_range(0, P - 1, vs));
            MTEST_OK(MPI_Wait(&vs, MPI_STATUS_IGNORE));
            MTEST_OK(MPI_Request_free(&vs));
        } else {
            memset(rbuf, 0, sizeof(int) * 19 * P);
            MTEST_OK(MPI_Precv_init(rbuf, P, 1, vec, peer, 8, MPI_COMM_WORLD, MPI_INFO_NULL, &vr));
            MTEST_OK(MPI_Start(&vr));
            MTEST_OK(MPI_Wait(&vr, MPI_STATUS_IGNORE));
            MTEST_OK(MPI_Request_free(&vr));
            int bad = 0;
            for (int i = 0; i < 19 * P; i++)
                bad += rbuf[i] != (i % 19 % 2 ? 0 : 100 + i);
            MTEST_CHECK(!bad, "vector partitions: %d ints wrong (gaps must stay 0)", bad);
        }
        MPI_Type_free(&vec);

        /* bad input */
        MPI_Request x;
        MTEST_ERR(MPI_Precv_init(rbuf, P, N, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &x),
                  MPI_ERR_RANK);
        MTEST_ERR(MPI_Psend_init(sbuf, 0, N, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &x), MPI_ERR_ARG);
        if (mtest_rank == 0) {
            MTEST_ERR(MPI_Pready(0, sreq), MPI_ERR_REQUEST); /* not started */
            MTEST_ERR(MPI_Parrived(sreq, 0, &(int){0}), MPI_ERR_REQUEST);
            MTEST_OK(MPI_Start(&sreq));
            MTEST_ERR(MPI_Pready(P, sreq), MPI_ERR_ARG);
            MTEST_OK(MPI_Pready(0, sreq));
            MTEST_ERR(MPI_Pready(0, sreq), MPI_ERR_ARG);
            MTEST_OK(MPI_Pready_range(1, P - 1, sreq));
            MTEST_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        } else {
            MTEST_ERR(MPI_Parrived(rreq, P, &(int){0}), MPI_ERR_ARG);
            MTEST_OK(MPI_Start(&rreq));
            MTEST_OK(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
        }
    }
    if (sreq != MPI_REQUEST_NULL)
        MTEST_OK(MPI_Request_free(&sreq));
    if (rreq != MPI_REQUEST_NULL)
        MTEST_OK(MPI_Request_free(&rreq));
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
