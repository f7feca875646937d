/* Rendezvous replies interleaved with eager frames that are stuck half-written. Rank 0
 * flushes a first burst (so the transport has taken turns between its queues once), starts
 * a rendezvous send to rank 1, then a burst of eager sends that overflows the
 * transport (with RMPI_NET=tcp RMPI_TCP_SNDBUF=4k, the last eager frame is only partly in
 * the socket) and then stops calling MPI for a while; meanwhile rank 1 matches the
 * rendezvous, so its read request (or CTS) is waiting when rank 0 makes progress again. The
 * data of the rendezvous must not be cut into the middle of a half-sent eager frame: every
 * message must arrive intact and in order. Several rounds, in both directions. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>

#define BIG 200000
#define SMALL 8000
#define NSMALL 24

static unsigned char big_s[BIG], big_r[BIG], small_s[NSMALL][SMALL], small_r[NSMALL][SMALL];

static void sender(int peer, int round)
{
    MPI_Request rq[NSMALL + 1];
    /* warm-up: a burst the peer drains late, so the transport has queued and flushed once */
    for (int i = 0; i < NSMALL; i++) {
        mtest_fill(small_s[i], SMALL, mtest_seed(mtest_rank, peer, round * 1000 + i));
        MTEST_OK(MPI_Isend(small_s[i], SMALL, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &rq[i]));
    }
    MTEST_OK(MPI_Waitall(NSMALL, rq, MPI_STATUSES_IGNORE));
    /* eager sends complete at once; waiting for the peer's ack flushes what is queued */
    MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));

    mtest_fill(big_s, BIG, mtest_seed(mtest_rank, peer, round * 1000 + 500));
    MTEST_OK(MPI_Isend(big_s, BIG, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &rq[0]));
    for (int i = 0; i < NSMALL; i++) {
        mtest_fill(small_s[i], SMALL, mtest_seed(mtest_rank, peer, round * 1000 + 600 + i));
        MTEST_OK(MPI_Isend(small_s[i], SMALL, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &rq[i + 1]));
    }
    /* no MPI calls: the peer matches the rendezvous while our eager frames are stuck */
    mtest_sleep(0.15);
    MTEST_OK(MPI_Waitall(NSMALL + 1, rq, MPI_STATUSES_IGNORE));
}

static void receiver(int peer, int round)
{
    char what[80];
    mtest_sleep(0.05);
    for (int i = 0; i < NSMALL; i++) {
        MTEST_OK(MPI_Recv(small_r[i], SMALL, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        snprintf(what, sizeof what, "round %d warm-up message %d", round, i);
        mtest_check_buf(small_r[i], SMALL, mtest_seed(peer, mtest_rank, round * 1000 + i), what);
    }
    MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 4, MPI_COMM_WORLD));
    MPI_Request rq;
    mtest_sleep(0.03);
    MTEST_OK(MPI_Irecv(big_r, BIG, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &rq));
    /* progress the match (sends the read request / CTS), without taking the eager data */
    int flag = 0;
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < 0.05)
        MTEST_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
    for (int i = 0; i < NSMALL; i++) {
        MTEST_OK(MPI_Recv(small_r[i], SMALL, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        snprintf(what, sizeof what, "round %d eager message %d after the rendezvous", round, i);
        mtest_check_buf(small_r[i], SMALL, mtest_seed(peer, mtest_rank, round * 1000 + 600 + i), what);
    }
    if (!flag)
        MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    snprintf(what, sizeof what, "round %d rendezvous message", round);
    mtest_check_buf(big_r, BIG, mtest_seed(peer, mtest_rank, round * 1000 + 500), what);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int peer = mtest_rank ^ 1;
    if (peer < mtest_size)
        for (int round = 0; round < 4; round++) {
            /* rank roles swap every round */
            if ((mtest_rank & 1) == (round & 1))
                sender(peer, round);
            else
                receiver(peer, round);
        }
    return mtest_finalize();
}
