/* Eager messages read straight into a posted receive's buffer (tcp: RMPI_TCP_PLACE; the
 * provider asks the core for the frame's destination once its header has arrived). Rank 0
 * receives; every other rank sends when rank 0 says its receives are posted, so the
 * frames meet posted receives and most are placed (testlist checks the report's count).
 * Sizes around the read-ahead (8 KiB), around RMPI_TCP_PLACE past it and up to the tcp eager
 * limit (64 KiB) and one past it (rendezvous). Per size:
 * - exact and larger receives: data, count, source and tag, nothing written past the
 *   message (guard bytes at the message's end and at the buffer's);
 * - truncation: MPI_ERR_TRUNCATE, the part that fits intact, nothing past the buffer;
 * - any-source receives, one per sender, all posted before any sender starts: each holds
 *   one whole message of the source its status names (frames of different peers each land
 *   in their own matched receive);
 * - two receives with MPI_ANY_TAG: the first gets the first message (order kept when the
 *   match is made at the header);
 * - a burst of 12 messages of alternating tags (full and cached headers) into 12 posted
 *   receives, the last ones' frames arriving in the same reads as the payloads before;
 * - a non-contiguous receive (vector), scattered correctly;
 * - a probe then a receive (the unexpected path beside placed ones). */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int sizes[] = {1000,  2000,  8100,  8191,  8192,  8193,  9300,  9400, 12000,
                            16383, 16384, 16385, 32768, 40000, 65535, 65536, 65537};
#define NS ((int)(sizeof sizes / sizeof sizes[0]))
#define BURST 12
#define MAXN 65537

static unsigned char *sbuf, *rbuf[BURST];

static int errclass(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}

static void go(int peer) { MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 999, MPI_COMM_WORLD)); }
static void wait_go(void) { MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, 0, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE)); }

static void send_msg(int n, int idx, int tag)
{
    mtest_fill(sbuf, (size_t)n, mtest_seed(mtest_rank, 0, idx));
    MTEST_OK(MPI_Send(sbuf, n, MPI_BYTE, 0, tag, MPI_COMM_WORLD));
}

/* Rank 0's side of size index k with sender 1 (and, for any-source, every sender). */
static void receiver(int k, int size)
{
    const int n = sizes[k], peer = 1;
    char what[128];
    MPI_Status st;
    MPI_Request rq[BURST];
    int idx = k * 100;

    /* exact, then larger receive */
    for (int extra = 0; extra <= 1000; extra += 1000) {
        snprintf(what, sizeof what, "%d bytes into a receive of %d", n, n + extra);
        memset(rbuf[0], 0, (size_t)(n + extra));
        mtest_guard_set(rbuf[0], (size_t)n);
        mtest_guard_set(rbuf[0], (size_t)(n + extra));
        MTEST_OK(MPI_Irecv(rbuf[0], n + extra, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &rq[0]));
        go(peer);
        MTEST_OK(MPI_Wait(&rq[0], &st));
        mtest_check_status(&st, peer, 1, n, what);
        mtest_check_buf(rbuf[0], (size_t)n, mtest_seed(peer, 0, idx++), what);
        mtest_guard_check(rbuf[0], (size_t)n, what);
        mtest_guard_check(rbuf[0], (size_t)(n + extra), what);
    }

    /* truncation */
    {
        const int cap = n / 2 + 1;
        snprintf(what, sizeof what, "%d bytes into a receive of %d (truncated)", n, cap);
        memset(rbuf[0], 0, (size_t)cap);
        mtest_guard_set(rbuf[0], (size_t)cap);
        MTEST_OK(MPI_Irecv(rbuf[0], cap, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &rq[0]));
        go(peer);
        int rc = MPI_Wait(&rq[0], &st);
        MTEST_CHECK(errclass(rc) == MPI_ERR_TRUNCATE, "%s: Wait returned class %d, expected MPI_ERR_TRUNCATE", what,
                    errclass(rc));
        mtest_check_buf(rbuf[0], (size_t)cap, mtest_seed(peer, 0, idx++), what);
        mtest_guard_check(rbuf[0], (size_t)cap, what);
    }

    /* any source: one receive per sender, all posted first */
    {
        const int ns = size - 1;
        for (int i = 0; i < ns; i++) {
            memset(rbuf[i], 0, (size_t)n);
            mtest_guard_set(rbuf[i], (size_t)n);
            MTEST_OK(MPI_Irecv(rbuf[i], n, MPI_BYTE, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &rq[i]));
        }
        for (int p = 1; p < size; p++)
            go(p);
        int seen[BURST] = {0};
        for (int i = 0; i < ns; i++) {
            MTEST_OK(MPI_Wait(&rq[i], &st));
            int src = st.MPI_SOURCE;
            snprintf(what, sizeof what, "%d bytes, any-source receive %d (from %d)", n, i, src);
            if (src < 1 || src >= size) {
                MTEST_CHECK(0, "%s: bad source", what);
                continue;
            }
            seen[src - 1]++;
            mtest_check_status(&st, src, 3, n, what);
            mtest_check_buf(rbuf[i], (size_t)n, mtest_seed(src, 0, idx), what);
            mtest_guard_check(rbuf[i], (size_t)n, what);
        }
        for (int i = 0; i < ns; i++)
            MTEST_CHECK(seen[i] == 1, "%d bytes: %d any-source receives got rank %d's message", n, seen[i], i + 1);
        idx++;
    }

    /* MPI_ANY_TAG twice: the first message into the first receive */
    {
        const int n2 = n > 2000 ? n - 1000 : n + 1000;
        memset(rbuf[0], 0, (size_t)n);
        memset(rbuf[1], 0, (size_t)n2);
        MTEST_OK(MPI_Irecv(rbuf[0], n, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[0]));
        MTEST_OK(MPI_Irecv(rbuf[1], n2, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[1]));
        go(peer);
        MTEST_OK(MPI_Wait(&rq[0], &st));
        snprintf(what, sizeof what, "%d bytes, first of two MPI_ANY_TAG receives", n);
        mtest_check_status(&st, peer, 4, n, what);
        mtest_check_buf(rbuf[0], (size_t)n, mtest_seed(peer, 0, idx++), what);
        MTEST_OK(MPI_Wait(&rq[1], &st));
        snprintf(what, sizeof what, "%d bytes, second of two MPI_ANY_TAG receives", n2);
        mtest_check_status(&st, peer, 5, n2, what);
        mtest_check_buf(rbuf[1], (size_t)n2, mtest_seed(peer, 0, idx++), what);
    }

    /* a burst of BURST messages, tags alternating every two (full and cached headers) */
    {
        for (int i = 0; i < BURST; i++) {
            memset(rbuf[i], 0, (size_t)n);
            mtest_guard_set(rbuf[i], (size_t)n);
            MTEST_OK(MPI_Irecv(rbuf[i], n, MPI_BYTE, peer, 10 + i / 2, MPI_COMM_WORLD, &rq[i]));
        }
        go(peer);
        MPI_Status sts[BURST];
        MTEST_OK(MPI_Waitall(BURST, rq, sts));
        for (int i = 0; i < BURST; i++) {
            snprintf(what, sizeof what, "%d bytes, burst message %d", n, i);
            mtest_check_status(&sts[i], peer, 10 + i / 2, n, what);
            mtest_check_buf(rbuf[i], (size_t)n, mtest_seed(peer, 0, idx + i), what);
            mtest_guard_check(rbuf[i], (size_t)n, what);
        }
        idx += BURST;
    }

    /* a vector receive: every other 100-byte block of rbuf[0] */
    {
        const int blocks = (n + 99) / 100;
        MPI_Datatype vec;
        MTEST_OK(MPI_Type_vector(blocks, 100, 200, MPI_BYTE, &vec));
        MTEST_OK(MPI_Type_commit(&vec));
        memset(rbuf[0], 0xee, (size_t)blocks * 200);
        MTEST_OK(MPI_Irecv(rbuf[0], 1, vec, peer, 20, MPI_COMM_WORLD, &rq[0]));
        go(peer);
        MTEST_OK(MPI_Wait(&rq[0], &st));
        snprintf(what, sizeof what, "%d bytes into a vector receive", n);
        const unsigned seed = mtest_seed(peer, 0, idx++);
        size_t bad = 0;
        for (int i = 0; i < n; i++)
            bad += rbuf[0][(size_t)(i / 100) * 200 + (size_t)(i % 100)] != mtest_pattern(seed, (size_t)i);
        for (int b = 0; b < blocks; b++)
            for (int j = 100; j < 200; j++)
                bad += rbuf[0][(size_t)b * 200 + (size_t)j] != 0xee;
        MTEST_CHECK(bad == 0, "%s: %zu bytes wrong", what, bad);
        MTEST_OK(MPI_Type_free(&vec));
    }

    /* probe, then receive (unexpected), then a posted one again */
    {
        go(peer);
        MTEST_OK(MPI_Probe(peer, 21, MPI_COMM_WORLD, &st));
        snprintf(what, sizeof what, "%d bytes, probed", n);
        mtest_check_status(&st, peer, 21, n, what);
        memset(rbuf[0], 0, (size_t)n);
        MTEST_OK(MPI_Recv(rbuf[0], n, MPI_BYTE, peer, 21, MPI_COMM_WORLD, &st));
        mtest_check_buf(rbuf[0], (size_t)n, mtest_seed(peer, 0, idx++), what);
        memset(rbuf[1], 0, (size_t)n);
        MTEST_OK(MPI_Irecv(rbuf[1], n, MPI_BYTE, peer, 22, MPI_COMM_WORLD, &rq[1]));
        go(peer);
        MTEST_OK(MPI_Wait(&rq[1], &st));
        snprintf(what, sizeof what, "%d bytes, posted after a probe", n);
        mtest_check_status(&st, peer, 22, n, what);
        mtest_check_buf(rbuf[1], (size_t)n, mtest_seed(peer, 0, idx++), what);
    }
}

static void sender(int k)
{
    const int n = sizes[k];
    int idx = k * 100;
    const int one = mtest_rank == 1;
    if (one) {
        for (int extra = 0; extra <= 1000; extra += 1000) {
            wait_go();
            send_msg(n, idx++, 1);
        }
        wait_go();
        send_msg(n, idx++, 2);
    }
    idx = k * 100 + 3; /* the any-source message: the same index for every sender */
    wait_go();
    send_msg(n, idx++, 3);
    if (!one)
        return;
    const int n2 = n > 2000 ? n - 1000 : n + 1000;
    wait_go();
    send_msg(n, idx++, 4);
    send_msg(n2, idx++, 5);
    wait_go();
    for (int i = 0; i < BURST; i++)
        send_msg(n, idx + i, 10 + i / 2);
    idx += BURST;
    wait_go();
    send_msg(n, idx++, 20);
    wait_go();
    send_msg(n, idx++, 21);
    wait_go();
    send_msg(n, idx++, 22);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MTEST_CHECK(mtest_size >= 2 && mtest_size <= BURST + 1, "needs 2 to %d ranks", BURST + 1);
    mtest_errors_return(MPI_COMM_WORLD);
    sbuf = mtest_malloc(MAXN + 1000 + MTEST_GUARD);
    for (int i = 0; i < BURST; i++)
        rbuf[i] = mtest_malloc((size_t)2 * (MAXN + 1000) + MTEST_GUARD);
    for (int k = 0; k < NS && mtest_size >= 2; k++) {
        if (mtest_rank == 0)
            receiver(k, mtest_size);
        else
            sender(k);
    }
    free(sbuf);
    for (int i = 0; i < BURST; i++)
        free(rbuf[i]);
    return mtest_finalize();
}
