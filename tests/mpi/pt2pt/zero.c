/* Zero-size messages: count 0 with a NULL buffer in every send mode and receive kind;
 * statuses give the right source, tag and count 0; a receive buffer is not touched; many
 * zero-byte messages with repeated and changing tags (header-cache path) arrive in order;
 * a zero-size message matches a receive with a larger count. */
#include "mtest.h"

#include <stdio.h>
#include <string.h>

static void check_zero(const char *what, const MPI_Status *st, int src, int tag)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    MTEST_CHECK(cnt == 0 && st->MPI_SOURCE == src && st->MPI_TAG == tag,
                "%s: count %d source %d tag %d, expected 0/%d/%d", what, cnt, st->MPI_SOURCE, st->MPI_TAG, src, tag);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int peer = mtest_rank ^ 1;
    if (peer < mtest_size) {
        MPI_Status st;
        if (mtest_rank & 1) {
            MPI_Request rq;
            MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD));
            MTEST_OK(MPI_Ssend(NULL, 0, MPI_INT, peer, 2, MPI_COMM_WORLD));
            MTEST_OK(MPI_Isend(NULL, 0, MPI_DOUBLE, peer, 3, MPI_COMM_WORLD, &rq));
            MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            MTEST_OK(MPI_Issend(NULL, 0, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &rq));
            MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            char c = 'x';
            MTEST_OK(MPI_Send(&c, 0, MPI_CHAR, peer, 5, MPI_COMM_WORLD));
            /* a burst: same tag (cached header), then alternating tags */
            for (int i = 0; i < 300; i++)
                MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, i < 100 ? 6 : 6 + i % 3, MPI_COMM_WORLD));
            int last = 12345;
            MTEST_OK(MPI_Send(&last, 1, MPI_INT, peer, 6, MPI_COMM_WORLD));
            MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MTEST_OK(MPI_Rsend(NULL, 0, MPI_BYTE, peer, 10, MPI_COMM_WORLD));
        } else {
            int big[16];
            for (int i = 0; i < 16; i++)
                big[i] = -i;
            MPI_Request rq;
            memset(&st, 0x55, sizeof st);
            MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st));
            check_zero("Send(0)/Recv(NULL,0)", &st, peer, 1);
            MTEST_OK(MPI_Recv(big, 16, MPI_INT, peer, 2, MPI_COMM_WORLD, &st));
            check_zero("Ssend(0)/Recv(16 ints)", &st, peer, 2);
            MTEST_OK(MPI_Irecv(NULL, 0, MPI_DOUBLE, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &rq));
            MTEST_OK(MPI_Wait(&rq, &st));
            check_zero("Isend(0)/Irecv(NULL,0)", &st, peer, 3);
            MTEST_OK(MPI_Probe(peer, 4, MPI_COMM_WORLD, &st));
            check_zero("Probe of Issend(0)", &st, peer, 4);
            MTEST_OK(MPI_Recv(big, 16, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            check_zero("Issend(0)/Recv ANY_TAG", &st, peer, 4);
            MTEST_OK(MPI_Recv(big, 16, MPI_INT, peer, 5, MPI_COMM_WORLD, &st));
            check_zero("Send(&c,0)", &st, peer, 5);
            for (int i = 0; i < 16; i++)
                MTEST_CHECK(big[i] == -i, "a zero-size receive wrote big[%d] = %d", i, big[i]);
            for (int i = 0; i < 300; i++) {
                int tag = i < 100 ? 6 : 6 + i % 3;
                memset(&st, 0x55, sizeof st);
                MTEST_OK(MPI_Recv(big, 16, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                char what[48];
                snprintf(what, sizeof what, "zero-byte burst message %d", i);
                check_zero(what, &st, peer, tag);
            }
            MTEST_OK(MPI_Recv(big, 16, MPI_INT, peer, 6, MPI_COMM_WORLD, &st));
            int cnt = -1;
            MPI_Get_count(&st, MPI_INT, &cnt);
            MTEST_CHECK(cnt == 1 && big[0] == 12345, "message after the burst: count %d value %d", cnt, big[0]);
            MTEST_OK(MPI_Irecv(NULL, 0, MPI_BYTE, peer, 10, MPI_COMM_WORLD, &rq));
            MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 9, MPI_COMM_WORLD));
            MTEST_OK(MPI_Wait(&rq, &st));
            check_zero("Rsend(0)", &st, peer, 10);
        }
    }
    return mtest_finalize();
}
