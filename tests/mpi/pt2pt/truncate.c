/* Truncation under MPI_ERRORS_RETURN: a message longer than the receive buffer gives
 * MPI_ERR_TRUNCATE (Recv; Wait of an Irecv; MPI_ERR_IN_STATUS from Waitall with the
 * status's MPI_ERROR set, the other status MPI_SUCCESS), the part that fits is delivered
 * intact and nothing past the buffer is written. The sender completes normally, and the
 * next messages between the pair still work. Eager and rendezvous sizes. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int msg[] = {100, 16384, 100000, 1 << 20};
#define NM 4

static unsigned char *sbuf, *rbuf;

static int errclass(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

static void check_part(const char *what, int n, int cap, unsigned seed)
{
    mtest_check_buf(rbuf, (size_t)cap, seed, what);
    mtest_guard_check(rbuf, (size_t)cap, what);
    (void)n;
}

static void prep(int cap)
{
    memset(rbuf, 0, (size_t)cap);
    mtest_guard_set(rbuf, (size_t)cap);
}

/* method 0: Recv, 1: Irecv+Wait, 2: Irecv+Waitall with a good second receive */
static void receiver(int peer, int k, int method)
{
    const int n = msg[k], cap = n / 2 + 1;
    const int tag = k * 10 + method;
    const unsigned seed = mtest_seed(peer, mtest_rank, tag);
    char what[96];
    snprintf(what, sizeof what, "%d-byte message into %d bytes (method %d)", n, cap, method);
    MPI_Status st[2];
    memset(st, 0x55, sizeof st);
    prep(cap);
    int rc;
    if (method == 0) {
        rc = MPI_Recv(rbuf, cap, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st[0]);
        MTEST_CHECK(errclass(rc) == MPI_ERR_TRUNCATE, "%s: Recv returned %d (class %d), expected MPI_ERR_TRUNCATE",
                    what, rc, errclass(rc));
    } else if (method == 1) {
        MPI_Request rq;
        MTEST_OK(MPI_Irecv(rbuf, cap, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq));
        rc = MPI_Wait(&rq, &st[0]);
        MTEST_CHECK(errclass(rc) == MPI_ERR_TRUNCATE, "%s: Wait returned %d (class %d), expected MPI_ERR_TRUNCATE",
                    what, rc, errclass(rc));
        MTEST_CHECK(rq == MPI_REQUEST_NULL, "%s: the failed request was not freed", what);
    } else {
        MPI_Request rq[2];
        int good = 0;
        MTEST_OK(MPI_Irecv(rbuf, cap, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &rq[0]));
        MTEST_OK(MPI_Irecv(&good, 1, MPI_INT, peer, tag + 1000, MPI_COMM_WORLD, &rq[1]));
        rc = MPI_Waitall(2, rq, st);
        MTEST_CHECK(rc == MPI_ERR_IN_STATUS, "%s: Waitall returned %d, expected MPI_ERR_IN_STATUS", what, rc);
        MTEST_CHECK(errclass(st[0].MPI_ERROR) == MPI_ERR_TRUNCATE,
                    "%s: Waitall status[0].MPI_ERROR = %d, expected MPI_ERR_TRUNCATE", what, st[0].MPI_ERROR);
        MTEST_CHECK(st[1].MPI_ERROR == MPI_SUCCESS, "%s: Waitall status[1].MPI_ERROR = %d, expected MPI_SUCCESS", what,
                    st[1].MPI_ERROR);
        MTEST_CHECK(good == tag, "%s: the second receive of Waitall got %d", what, good);
        MTEST_CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "%s: Waitall left requests", what);
    }
    MTEST_CHECK(st[0].MPI_SOURCE == peer && st[0].MPI_TAG == tag, "%s: status source %d tag %d", what, st[0].MPI_SOURCE,
                st[0].MPI_TAG);
    check_part(what, n, cap, seed);

    /* the pair still works: a follow-up message of the same size arrives whole */
    int flag_rc;
    flag_rc = MPI_Recv(rbuf, n, MPI_BYTE, peer, tag + 2000, MPI_COMM_WORLD, &st[0]);
    MTEST_CHECK(flag_rc == MPI_SUCCESS, "%s: the next receive failed with %d", what, flag_rc);
    snprintf(what, sizeof what, "%d-byte message after a truncation", n);
    mtest_check_buf(rbuf, (size_t)n, seed + 1, what);
}

static void sender(int peer, int k, int method)
{
    const int n = msg[k];
    const int tag = k * 10 + method;
    const unsigned seed = mtest_seed(mtest_rank, peer, tag);
    mtest_fill(sbuf, (size_t)n, seed);
    int rc = MPI_Send(sbuf, n, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS, "Send of %d bytes that the receiver truncates returned %d", n, rc);
    if (method == 2)
        MTEST_OK(MPI_Send(&tag, 1, MPI_INT, peer, tag + 1000, MPI_COMM_WORLD));
    mtest_fill(sbuf, (size_t)n, seed + 1);
    MTEST_OK(MPI_Send(sbuf, n, MPI_BYTE, peer, tag + 2000, MPI_COMM_WORLD));
}

/* A truncated Sendrecv returns the class of the receive's error. */
static void sendrecv(int peer)
{
    int big[64], small[2];
    for (int i = 0; i < 64; i++)
        big[i] = i;
    MPI_Status st;
    int rc = MPI_Sendrecv(big, 64, MPI_INT, peer, 500, small, 2, MPI_INT, peer, 500, MPI_COMM_WORLD, &st);
    MTEST_CHECK(errclass(rc) == MPI_ERR_TRUNCATE, "truncated Sendrecv returned %d (class %d)", rc, errclass(rc));
    MTEST_CHECK(small[0] == 0 && small[1] == 1, "truncated Sendrecv delivered %d %d", small[0], small[1]);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    mtest_errors_return(MPI_COMM_WORLD);
    sbuf = mtest_malloc(1 << 20);
    rbuf = mtest_malloc((1 << 20) + MTEST_GUARD);
    int peer = mtest_rank ^ 1;
    if (peer < mtest_size) {
        for (int k = 0; k < NM; k++)
            for (int method = 0; method < 3; method++) {
                if (mtest_rank & 1)
                    sender(peer, k, method);
                else
                    receiver(peer, k, method);
            }
        sendrecv(peer);
    }
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
