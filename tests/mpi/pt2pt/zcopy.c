/* Eager sends that a provider may take straight from the user's buffer (send_zc: libfabric
 * rails, nonblocking sends of at least the rail's zc_min bytes; the request completes with
 * the send) next to frames it copies or injects, every byte checked. Each rank sends to
 * every other rank, each pair in turn:
 *  1. every size 0..300 B (inject limits with our 12 header bytes: tcp 64, rxm as asked
 *     256, and the zero-copy threshold sit in there), one at a time, each checked byte by
 *     byte, also the bytes past it;
 *  2. a window of 48 Isends from distinct buffers, sizes mixed around the zero-copy
 *     threshold and the eager limit (0, 7, 64, 100, 2047..2049, 4096, 16383, 16384, 20000),
 *     receives posted after the sends (unexpected path), in tag order;
 *  3. 256 Isends of 16 KiB before any Wait (more than a provider's transmit queue: the
 *     refused ones wait in its pending queue; 4 MiB, more than the sockets hold while the
 *     receiver sleeps), then the sender scribbles the buffers after its Waitall: the
 *     receiver must find what was there at send time (a request completed before the
 *     provider was done with its buffer fails here);
 *  4. Isend + MPI_Request_free of 8 KiB messages: the core releases them at completion.
 * Then every rank checks what it got. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXONE 300
#define WIN 48
#define MANY 256
#define MANY_SZ 16384
#define FREED 16
#define FREED_SZ 8192

static const size_t mix[] = {0, 7, 64, 100, 2047, 2048, 2049, 4096, 16383, 16384, 20000, 3000};
#define NMIX (sizeof mix / sizeof mix[0])

static size_t win_size(int i) { return mix[(size_t)i % NMIX]; }

static void send_to(int p, unsigned char *buf)
{
    const int me = mtest_rank;
    MPI_Request rq[MANY];
    /* 1: sizes 0..MAXONE, blocking and nonblocking alternately */
    for (int n = 0; n <= MAXONE; n++) {
        mtest_fill(buf, (size_t)n, mtest_seed(me, p, n));
        if (n % 2)
            MTEST_OK(MPI_Send(buf, n, MPI_BYTE, p, n, MPI_COMM_WORLD));
        else {
            MTEST_OK(MPI_Isend(buf, n, MPI_BYTE, p, n, MPI_COMM_WORLD, &rq[0]));
            MTEST_OK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
        }
    }
    /* 2: a mixed window from distinct buffers */
    size_t off = 0;
    for (int i = 0; i < WIN; i++) {
        mtest_fill(buf + off, win_size(i), mtest_seed(me, p, 1000 + i));
        MTEST_OK(MPI_Isend(buf + off, (int)win_size(i), MPI_BYTE, p, 1000 + i, MPI_COMM_WORLD, &rq[i]));
        off += win_size(i);
    }
    MTEST_OK(MPI_Waitall(WIN, rq, MPI_STATUSES_IGNORE));
    /* 3: many in flight; scribbled once they completed */
    for (int i = 0; i < MANY; i++) {
        mtest_fill(buf + (size_t)i * MANY_SZ, MANY_SZ, mtest_seed(me, p, 2000 + i));
        MTEST_OK(MPI_Isend(buf + (size_t)i * MANY_SZ, MANY_SZ, MPI_BYTE, p, 2000, MPI_COMM_WORLD, &rq[i]));
    }
    MTEST_OK(MPI_Waitall(MANY, rq, MPI_STATUSES_IGNORE));
    memset(buf, 0x5a, (size_t)MANY * MANY_SZ);
}

/* 4 uses its own buffer: it may be read until the freed requests complete (after the
 * receiver's answer, which comes after their data on the same connection). */
static void send_freed(int p, unsigned char *buf)
{
    for (int i = 0; i < FREED; i++) {
        MPI_Request r;
        mtest_fill(buf + (size_t)i * FREED_SZ, FREED_SZ, mtest_seed(mtest_rank, p, 3000 + i));
        MTEST_OK(MPI_Isend(buf + (size_t)i * FREED_SZ, FREED_SZ, MPI_BYTE, p, 3000 + i, MPI_COMM_WORLD, &r));
        MTEST_OK(MPI_Request_free(&r));
        MTEST_CHECK(r == MPI_REQUEST_NULL, "Request_free left the handle set");
    }
}

static void recv_from(int p, unsigned char *buf)
{
    const int me = mtest_rank;
    char what[64];
    MPI_Status st;
    for (int n = 0; n <= MAXONE; n++) {
        memset(buf, 0xee, MAXONE + 64);
        MTEST_OK(MPI_Recv(buf, MAXONE + 64, MPI_BYTE, p, n, MPI_COMM_WORLD, &st));
        int cnt;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        MTEST_CHECK(cnt == n, "size %d from %d: got %d bytes", n, p, cnt);
        snprintf(what, sizeof what, "size %d from %d", n, p);
        mtest_check_buf(buf, (size_t)n, mtest_seed(p, me, n), what);
        for (int i = n; i < MAXONE + 64; i++)
            if (buf[i] != 0xee) {
                MTEST_CHECK(0, "size %d from %d: byte %d past the message was written", n, p, i);
                break;
            }
    }
    MPI_Request rq[MANY];
    mtest_sleep(0.02); /* let window 2 arrive before its receives: the unexpected path */
    size_t off = 0;
    for (int i = 0; i < WIN; i++) {
        MTEST_OK(MPI_Irecv(buf + off, (int)win_size(i), MPI_BYTE, p, 1000 + i, MPI_COMM_WORLD, &rq[i]));
        off += win_size(i);
    }
    MTEST_OK(MPI_Waitall(WIN, rq, MPI_STATUSES_IGNORE));
    off = 0;
    for (int i = 0; i < WIN; i++) {
        snprintf(what, sizeof what, "window message %d (%zu B) from %d", i, win_size(i), p);
        mtest_check_buf(buf + off, win_size(i), mtest_seed(p, me, 1000 + i), what);
        off += win_size(i);
    }
    mtest_sleep(0.3); /* the sender's sockets fill: its sends stay in the provider */
    for (int i = 0; i < MANY; i++)
        MTEST_OK(MPI_Irecv(buf + (size_t)i * MANY_SZ, MANY_SZ, MPI_BYTE, p, 2000, MPI_COMM_WORLD, &rq[i]));
    MTEST_OK(MPI_Waitall(MANY, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < MANY; i++) {
        snprintf(what, sizeof what, "message %d of %d in flight from %d", i, MANY, p);
        mtest_check_buf(buf + (size_t)i * MANY_SZ, MANY_SZ, mtest_seed(p, me, 2000 + i), what);
    }
}

static void recv_freed(int p, unsigned char *buf)
{
    char what[64];
    for (int i = FREED - 1; i >= 0; i--) { /* out of order: some wait as unexpected messages */
        MTEST_OK(MPI_Recv(buf, FREED_SZ, MPI_BYTE, p, 3000 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        snprintf(what, sizeof what, "freed-request message %d from %d", i, p);
        mtest_check_buf(buf, FREED_SZ, mtest_seed(p, mtest_rank, 3000 + i), what);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const int me = mtest_rank, np = mtest_size;
    unsigned char *sbuf = mtest_malloc((size_t)MANY * MANY_SZ), *rbuf = mtest_malloc((size_t)MANY * MANY_SZ);
    unsigned char *fbuf = mtest_malloc((size_t)FREED * FREED_SZ);
    /* every ordered pair (a -> b) in turn; the others wait in the barrier */
    for (int a = 0; a < np; a++)
        for (int b = 0; b < np; b++) {
            if (a == b)
                continue;
            if (me == a) {
                send_to(b, sbuf);
                send_freed(b, fbuf);
                int ack;
                MTEST_OK(MPI_Recv(&ack, 1, MPI_INT, b, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else if (me == b) {
                recv_from(a, rbuf);
                recv_freed(a, rbuf);
                int ack = 1;
                MTEST_OK(MPI_Send(&ack, 1, MPI_INT, a, 9, MPI_COMM_WORLD));
            }
            MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
    int rc = mtest_finalize();
    free(sbuf);
    free(rbuf);
    free(fbuf);
    return rc;
}
