/* Synchronous mode: MPI_Ssend/MPI_Issend complete only after the matching receive has
 * started. The receiver sleeps 0.5 s before posting and reports when it posted; the
 * sender's Ssend must return after that (MPI_Wtime is CLOCK_MONOTONIC, shared by the
 * processes of one host); how long it took is not checked (a rank descheduled under load
 * may start its Ssend late: timing belongs in bench/). An Issend must test false until
 * the receiver is told to post, also after the receiver probed the message (a probe is not
 * a receive). Sizes cover the eager (sync flag + ack) and rendezvous paths. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>

static const int sizes[] = {0, 8, 1000, 16000, 100000};
#define NS (int)(sizeof sizes / sizeof sizes[0])
#define DELAY 0.5

static unsigned char sbuf[100000], rbuf[100000];

static void blocking(int me, int peer, int k)
{
    int n = sizes[k];
    if (me & 1) {
        mtest_sleep(DELAY);
        double posted = MPI_Wtime();
        MPI_Status st;
        MTEST_OK(MPI_Recv(rbuf, n, MPI_BYTE, peer, k, MPI_COMM_WORLD, &st));
        mtest_check_buf(rbuf, (size_t)n, mtest_seed(peer, me, k), "Ssend payload");
        MTEST_OK(MPI_Send(&posted, 1, MPI_DOUBLE, peer, 1000 + k, MPI_COMM_WORLD));
    } else {
        mtest_fill(sbuf, (size_t)n, mtest_seed(me, peer, k));
        MTEST_OK(MPI_Ssend(sbuf, n, MPI_BYTE, peer, k, MPI_COMM_WORLD));
        double t1 = MPI_Wtime(), posted = 0;
        MTEST_OK(MPI_Recv(&posted, 1, MPI_DOUBLE, peer, 1000 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_CHECK(t1 >= posted, "Ssend of %d bytes returned %.3f s before the receive was posted", n, posted - t1);
    }
}

static void nonblocking(int me, int peer, int k)
{
    int n = sizes[k];
    int tag = 100 + k;
    if (me & 1) {
        int go = 0;
        MPI_Status st;
        /* let the message arrive, look at it without receiving, then tell the sender */
        MTEST_OK(MPI_Probe(peer, tag, MPI_COMM_WORLD, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        MTEST_CHECK(cnt == n, "Probe of an Issend of %d bytes: count %d", n, cnt);
        MTEST_OK(MPI_Send(&go, 1, MPI_INT, peer, 2000 + k, MPI_COMM_WORLD));
        MTEST_OK(MPI_Recv(&go, 1, MPI_INT, peer, 3000 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Recv(rbuf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st));
        mtest_check_buf(rbuf, (size_t)n, mtest_seed(peer, me, tag), "Issend payload");
    } else {
        MPI_Request rq;
        int flag = 1, go = 0, polls = 0, early = 0;
        mtest_fill(sbuf, (size_t)n, mtest_seed(me, peer, tag));
        MTEST_OK(MPI_Issend(sbuf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq));
        MTEST_OK(MPI_Recv(&go, 1, MPI_INT, peer, 2000 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < 0.1) {
            MTEST_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
            polls++;
            if (flag) {
                early = 1;
                break;
            }
        }
        MTEST_CHECK(!early,
                    "Issend of %d bytes completed after %d tests, before any receive was posted "
                    "(the receiver had only probed it)",
                    n, polls);
        MTEST_OK(MPI_Send(&go, 1, MPI_INT, peer, 3000 + k, MPI_COMM_WORLD));
        if (!early)
            MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
}

/* A synchronous send to a receive that is already posted completes without a pause. */
static void preposted(int me, int peer)
{
    for (int k = 0; k < NS; k++) {
        int n = sizes[k];
        if (me & 1) {
            MPI_Request rq;
            MTEST_OK(MPI_Irecv(rbuf, n, MPI_BYTE, peer, 50, MPI_COMM_WORLD, &rq));
            MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 51, MPI_COMM_WORLD));
            MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            mtest_check_buf(rbuf, (size_t)n, mtest_seed(peer, me, 50 + k), "Ssend to a posted receive");
        } else {
            mtest_fill(sbuf, (size_t)n, mtest_seed(me, peer, 50 + k));
            MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MTEST_OK(MPI_Ssend(sbuf, n, MPI_BYTE, peer, 50, MPI_COMM_WORLD));
        }
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank, peer = me ^ 1;
    if (peer < mtest_size) {
        /* two sizes with the 0.5 s pause keep the test short; the rest go through nonblocking() */
        blocking(me, peer, 1);
        blocking(me, peer, NS - 1);
        for (int k = 0; k < NS; k++)
            nonblocking(me, peer, k);
        preposted(me, peer);
    }
    return mtest_finalize();
}
