/* Bursts of small messages (0 .. 1.5 KiB, tags 0..4) from every rank to every other, posted
 * nonblocking at once, so that on a long link they are coalesced into bundles
 * (RMPI_COALESCE_WAIT, tests/netns/streams.sh coalesce). The receiver takes them with
 * MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG) then MPI_Recv of what the probe named, with
 * MPI_ANY_SOURCE / MPI_ANY_TAG receives, or with MPI_Iprobe polls, in turn: every message
 * must arrive once, in order per sender (each carries its sequence number), with the tag
 * and bytes its sender gave it. A ping-pong between bursts mixes single frames in.
 *   bursts [ROUNDS [BURST]]   default 40 rounds of 64 messages to each peer */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define MAXLEN 1536

/* message k from src: its size and tag, the same sequence on both sides */
static void shape(int src, int k, size_t *len, int *tag)
{
    unsigned x = (unsigned)src * 2654435761u ^ (unsigned)k * 40503u;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    *len = 8 + x % (MAXLEN - 8);
    *tag = (int)(x >> 24) % 5;
}

static void fill(unsigned char *b, int src, int k, size_t len)
{
    memcpy(b, &k, sizeof k);
    memcpy(b + 4, &src, sizeof src);
    for (size_t i = 8; i < len; i++)
        b[i] = mtest_pattern((unsigned)(src * 100003 + k), i);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rounds = argc > 1 ? atoi(argv[1]) : 40, burst = argc > 2 ? atoi(argv[2]) : 64;
    int n = mtest_size, me = mtest_rank;
    unsigned char *sbuf = mtest_malloc((size_t)burst * (size_t)n * MAXLEN), rbuf[MAXLEN], want[MAXLEN];
    MPI_Request *req = mtest_malloc((size_t)burst * (size_t)n * sizeof *req);
    int *next = calloc((size_t)n, sizeof *next), *sent = calloc((size_t)n, sizeof *sent);
    int mode = 0;
    MPI_Comm tokens; /* the ping-pong's own: a burst's any-source receives must not take it */
    MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &tokens));
    for (int r = 0; r < rounds; r++) {
        int nr = 0;
        for (int b = 0; b < burst; b++)
            for (int p = 0; p < n; p++) {
                if (p == me)
                    continue;
                size_t len;
                int tag, k = sent[p]++;
                shape(me, k, &len, &tag);
                unsigned char *sb = sbuf + (size_t)nr * MAXLEN;
                fill(sb, me, k, len);
                MTEST_OK(MPI_Isend(sb, (int)len, MPI_BYTE, p, tag, MPI_COMM_WORLD, &req[nr++]));
            }
        for (int got = 0; got < burst * (n - 1); got++) {
            MPI_Status st;
            int count = -1;
            switch (mode++ % 3) {
            case 0: /* probe anything, then receive exactly what it named */
                MTEST_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                MTEST_OK(MPI_Recv(rbuf, MAXLEN, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st));
                break;
            case 1: MTEST_OK(MPI_Recv(rbuf, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st)); break;
            default: {
                int flag = 0;
                while (!flag)
                    MTEST_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
                MTEST_OK(MPI_Recv(rbuf, MAXLEN, MPI_BYTE, st.MPI_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            }
            }
            MPI_Get_count(&st, MPI_BYTE, &count);
            int src = st.MPI_SOURCE, k = -1;
            if (src < 0 || src >= n || src == me || count < 8) {
                MTEST_CHECK(0, "round %d: a message from %d of %d bytes", r, src, count);
                continue;
            }
            memcpy(&k, rbuf, sizeof k);
            size_t len;
            int tag;
            shape(src, next[src], &len, &tag);
            MTEST_CHECK(k == next[src], "from %d: message %d arrived where %d was due", src, k, next[src]);
            MTEST_CHECK(st.MPI_TAG == tag && (size_t)count == len, "from %d message %d: tag %d size %d, sent %d %zu",
                        src, k, st.MPI_TAG, count, tag, len);
            fill(want, src, next[src], len);
            MTEST_CHECK(!memcmp(rbuf, want, len), "from %d message %d: bytes differ", src, k);
            next[src]++;
        }
        MTEST_OK(MPI_Waitall(nr, req, MPI_STATUSES_IGNORE));
        /* a ping-pong between neighbours: single frames between the bursts */
        int token = r, back = -1, right = (me + 1) % n, left = (me + n - 1) % n;
        MTEST_OK(MPI_Sendrecv(&token, 1, MPI_INT, right, 99, &back, 1, MPI_INT, left, 99, tokens, MPI_STATUS_IGNORE));
        MTEST_CHECK(back == r, "round %d: token %d", r, back);
    }
    for (int p = 0; p < n; p++)
        MTEST_CHECK(p == me || next[p] == rounds * burst, "from %d: %d messages, %d sent", p, next[p], rounds * burst);
    MTEST_OK(MPI_Comm_free(&tokens));
    free(next);
    free(sent);
    free(req);
    free(sbuf);
    return mtest_finalize();
}
