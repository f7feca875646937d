/* MPI_Cancel: an unmatched receive is cancelled (Wait returns, Test_cancelled is true, the
 * buffer is untouched, and a later message goes to the next receive); a receive that has
 * already matched (eager or rendezvous) cannot be cancelled and delivers its data; a
 * persistent receive can be cancelled and started again. Sends: see cancel_send. */
#include "mtest.h"

#include <stdio.h>
#include <string.h>

#define BIG 150000
static unsigned char sbuf[BIG], rbuf[BIG];

static int cancelled(const MPI_Status *st)
{
    int flag = -1;
    MTEST_OK(MPI_Test_cancelled(st, &flag));
    return flag;
}

static void unmatched(int peer, int role)
{
    if (role == 0) {
        MPI_Request rq;
        MPI_Status st;
        int x = 777;
        /* nothing is ever sent with tag 99 */
        MTEST_OK(MPI_Irecv(&x, 1, MPI_INT, peer, 99, MPI_COMM_WORLD, &rq));
        MTEST_OK(MPI_Cancel(&rq));
        MTEST_OK(MPI_Wait(&rq, &st));
        MTEST_CHECK(rq == MPI_REQUEST_NULL, "Wait on a cancelled receive did not free the request");
        MTEST_CHECK(cancelled(&st) == 1, "Test_cancelled is false for a cancelled unmatched receive");
        MTEST_CHECK(x == 777, "a cancelled receive wrote its buffer (%d)", x);

        /* a wildcard receive, cancelled, then polled with Test */
        MTEST_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &rq));
        MTEST_OK(MPI_Cancel(&rq));
        int flag = 0;
        for (int i = 0; i < 1000000 && !flag; i++)
            MTEST_OK(MPI_Test(&rq, &flag, &st));
        MTEST_CHECK(flag && cancelled(&st) == 1, "Test on a cancelled wildcard receive: flag %d cancelled %d", flag,
                    flag ? cancelled(&st) : -1);
        /* the cancelled receive is gone: the tag-7 message goes to this one */
        MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 8, MPI_COMM_WORLD));
        MTEST_OK(MPI_Recv(&x, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &st));
        MTEST_CHECK(x == 4242 && cancelled(&st) == 0, "after cancel: x %d cancelled %d", x, cancelled(&st));
    } else {
        int v = 4242;
        MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Send(&v, 1, MPI_INT, peer, 7, MPI_COMM_WORLD));
    }
}

/* The receive is posted, the message sent, and a second message (same sender, sent
 * after) received: by non-overtaking, the first receive has matched. Cancel must fail. */
static void matched(int peer, int role, int n)
{
    if (role == 0) {
        MPI_Request rq;
        MPI_Status st;
        mtest_fill(rbuf, (size_t)n, 0xdeadu);
        MTEST_OK(MPI_Irecv(rbuf, n, MPI_BYTE, peer, 20, MPI_COMM_WORLD, &rq));
        MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 21, MPI_COMM_WORLD));
        MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Cancel(&rq));
        MTEST_OK(MPI_Wait(&rq, &st));
        MTEST_CHECK(cancelled(&st) == 0, "a matched receive of %d bytes was cancelled", n);
        int cnt = -1;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        MTEST_CHECK(cnt == n && st.MPI_SOURCE == peer && st.MPI_TAG == 20,
                    "matched receive after Cancel: count %d source %d tag %d", cnt, st.MPI_SOURCE, st.MPI_TAG);
        char what[64];
        snprintf(what, sizeof what, "matched %d-byte receive after Cancel", n);
        mtest_check_buf(rbuf, (size_t)n, mtest_seed(peer, mtest_rank, n), what);
    } else {
        MPI_Request rq;
        mtest_fill(sbuf, (size_t)n, mtest_seed(mtest_rank, peer, n));
        MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Isend(sbuf, n, MPI_BYTE, peer, 20, MPI_COMM_WORLD, &rq));
        MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 22, MPI_COMM_WORLD));
        MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
}

static void persistent(int peer, int role)
{
    int x = -1;
    if (role == 0) {
        MPI_Request rq;
        MPI_Status st;
        MTEST_OK(MPI_Recv_init(&x, 1, MPI_INT, peer, 30, MPI_COMM_WORLD, &rq));
        MTEST_OK(MPI_Start(&rq));
        MTEST_OK(MPI_Cancel(&rq));
        MTEST_OK(MPI_Wait(&rq, &st));
        MTEST_CHECK(cancelled(&st) == 1 && x == -1, "cancelled persistent receive: cancelled %d x %d", cancelled(&st),
                    x);
        MTEST_CHECK(rq != MPI_REQUEST_NULL, "Wait freed a cancelled persistent request");
        MTEST_OK(MPI_Start(&rq));
        MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 31, MPI_COMM_WORLD));
        MTEST_OK(MPI_Wait(&rq, &st));
        MTEST_CHECK(cancelled(&st) == 0 && x == 5150, "restarted persistent receive: cancelled %d x %d", cancelled(&st),
                    x);
        MTEST_OK(MPI_Request_free(&rq));
    } else {
        x = 5150;
        MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 31, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Send(&x, 1, MPI_INT, peer, 30, MPI_COMM_WORLD));
    }
}

/* Cancelling a send whose message is still unmatched at the receiver succeeds (the
 * receiver withdraws it: docs/wire/core.md CANCEL), for eager and rendezvous sizes, Isend,
 * Issend and a persistent send; the receiver posts nothing for it until the sender has
 * waited, then finds nothing, and a later message with the same envelope is the first it
 * receives. A send whose message was already matched is not cancelled and arrives. */
static void cancel_send(int peer, int role, int n, int mode)
{
    /* A tag of its own per size: the sender's next call may already have sent the next
     * size's message when this receiver probes for a duplicate of this one. */
    const int tag = 40 + 2 * mode + (n == BIG);
    if (role == 1) {
        MPI_Request rq;
        MPI_Status st;
        mtest_fill(sbuf, (size_t)n, mtest_seed(mtest_rank, peer, tag));
        if (mode == 0)
            MTEST_OK(MPI_Isend(sbuf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq));
        else if (mode == 1)
            MTEST_OK(MPI_Issend(sbuf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq));
        else {
            MTEST_OK(MPI_Send_init(sbuf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq));
            MTEST_OK(MPI_Start(&rq));
        }
        MTEST_OK(MPI_Cancel(&rq));
        MTEST_OK(MPI_Wait(&rq, &st));
        int c = cancelled(&st);
        MTEST_CHECK(c == 1, "an unmatched %d-byte send (mode %d) was not cancelled", n, mode);
        if (mode == 2) { /* the persistent send goes again, and arrives */
            MTEST_OK(MPI_Start(&rq));
            MTEST_OK(MPI_Send(&c, 1, MPI_INT, peer, 49, MPI_COMM_WORLD));
            MTEST_OK(MPI_Wait(&rq, &st));
            MTEST_CHECK(cancelled(&st) == 0, "a restarted persistent send reports cancelled");
            MTEST_OK(MPI_Request_free(&rq));
        } else { /* the same envelope again, not cancelled (the receiver posts after tag 49) */
            MTEST_OK(MPI_Isend(sbuf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq));
            MTEST_OK(MPI_Send(&c, 1, MPI_INT, peer, 49, MPI_COMM_WORLD));
            MTEST_OK(MPI_Wait(&rq, &st));
        }
    } else {
        int c = -1;
        MPI_Status st;
        /* the sender's second message (and its word) arrive; the cancelled one never does */
        MTEST_OK(MPI_Recv(&c, 1, MPI_INT, peer, 49, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        mtest_fill(rbuf, (size_t)n, 0xbeefu);
        MTEST_OK(MPI_Recv(rbuf, BIG, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        MTEST_CHECK(cnt == n, "the message after a cancelled send: %d bytes", cnt);
        mtest_check_buf(rbuf, (size_t)n, mtest_seed(peer, mtest_rank, tag), "the message after a cancelled send");
        int flag = 1;
        MTEST_OK(MPI_Iprobe(peer, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        MTEST_CHECK(!flag, "a cancelled %d-byte send (mode %d) was delivered too", n, mode);
    }
}

/* The receiver has matched the message (its receive is posted and a later message of the
 * same sender has arrived): the send's cancel fails and the data arrives. */
static void cancel_matched_send(int peer, int role, int n)
{
    if (role == 1) {
        MPI_Request rq;
        MPI_Status st;
        mtest_fill(sbuf, (size_t)n, mtest_seed(mtest_rank, peer, 50));
        MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 51, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Isend(sbuf, n, MPI_BYTE, peer, 50, MPI_COMM_WORLD, &rq));
        MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 52, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Cancel(&rq));
        MTEST_OK(MPI_Wait(&rq, &st));
        MTEST_CHECK(cancelled(&st) == 0, "a matched %d-byte send was cancelled", n);
    } else {
        MPI_Request rq;
        MTEST_OK(MPI_Irecv(rbuf, n, MPI_BYTE, peer, 50, MPI_COMM_WORLD, &rq));
        MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 51, MPI_COMM_WORLD));
        int flag = 0;
        while (!flag) /* matched: the eager data is in, or the rendezvous has begun */
            MTEST_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 52, MPI_COMM_WORLD));
        mtest_check_buf(rbuf, (size_t)n, mtest_seed(peer, mtest_rank, 50), "a send whose cancel came too late");
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int peer = mtest_rank ^ 1;
    if (peer < mtest_size) {
        int role = mtest_rank & 1;
        unmatched(peer, role);
        matched(peer, role, 100);
        matched(peer, role, BIG);
        persistent(peer, role);
        for (int mode = 0; mode < 3; mode++) {
            cancel_send(peer, role, 100, mode);
            cancel_send(peer, role, BIG, mode);
        }
        cancel_matched_send(peer, role, 100);
        cancel_matched_send(peer, role, BIG);
    }
    return mtest_finalize();
}
