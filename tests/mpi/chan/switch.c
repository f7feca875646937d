/* Random traffic while channels switch under the messages (RMPI_CHAN_FORCE_SWITCH_MS):
 * every rank sends MSGS messages to every other rank in a random interleaving, sizes across
 * the size classes, past the largest class (fragments) and past the eager limit (rendezvous),
 * some synchronous; receives mix any-source receives, probes followed by a receive of the
 * probed source, and receives posted for one source; a receive that can never match is
 * posted and cancelled now and then. Every message must arrive once, from each source in the
 * order sent (its index is in the payload and its size follows from the index), intact.
 * args=kill: rank 1 SIGKILLs itself half-way (the job must end naming it, not hang).
 * args=stream: every other rank streams STREAM_MSGS messages of 1 KiB to rank 0 instead, a
 * window in flight (the selection's stream term gives each a ring: the testlist checks rank
 * 0's report, its shared queue given back once no sender is on it), each checked alike. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../mtest.h"

#define MSGS 240
#define WINDOW 8
#define TAG 7
#define TAG_NEVER 99
#define MAXLEN 70000
#define STREAM_MSGS 4000
#define STREAM_LEN 1024

static size_t msg_size(int src, int dst, int i)
{
    static const size_t sizes[] = {0,    1,    8,    200,  256,  257,  900,   1024, 1500,
                                   2048, 4000, 4096, 8000, 8100, 9000, 20000, 70000};
    unsigned h = mtest_seed(src, dst, i) * 2654435761u;
    return sizes[(h >> 7) % (sizeof sizes / sizeof *sizes)];
}

static int next_idx[64];
static int nerr_order;

static void check_msg(const char *buf, int src, int me, size_t got)
{
    int i = next_idx[src]++;
    size_t want = msg_size(src, me, i);
    if (got != want) {
        if (nerr_order++ < 5)
            mtest_error(__FILE__, __LINE__,
                        "from %d message %d: %zu bytes, expected %zu (lost, repeated or out of order)", src, i, got,
                        want);
        return;
    }
    if (got >= sizeof(int)) {
        int idx;
        memcpy(&idx, buf, sizeof idx);
        if (idx != i && nerr_order++ < 5)
            mtest_error(__FILE__, __LINE__, "from %d: message %d arrived where %d was expected", src, idx, i);
        if (got > sizeof(int))
            mtest_check_buf(buf + sizeof(int), got - sizeof(int), mtest_seed(src, me, i), "payload");
    }
}

static void stream(int me, int n)
{
    enum { W = 64 };
    static char buf[W][STREAM_LEN];
    MPI_Request req[W];
    if (me != 0) {
        for (int i = 0; i < STREAM_MSGS; i += W) {
            int k = i + W <= STREAM_MSGS ? W : STREAM_MSGS - i;
            for (int j = 0; j < k; j++) {
                int idx = i + j;
                memcpy(buf[j], &idx, sizeof idx);
                mtest_fill(buf[j] + sizeof idx, STREAM_LEN - sizeof idx, mtest_seed(me, 0, idx));
                MTEST_OK(MPI_Isend(buf[j], STREAM_LEN, MPI_CHAR, 0, TAG, MPI_COMM_WORLD, &req[j]));
            }
            MTEST_OK(MPI_Waitall(k, req, MPI_STATUSES_IGNORE));
        }
        return;
    }
    for (int got = 0; got < (n - 1) * STREAM_MSGS; got++) {
        MPI_Status st;
        MTEST_OK(MPI_Recv(buf[0], STREAM_LEN, MPI_CHAR, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &st));
        int len, idx, src = st.MPI_SOURCE;
        MPI_Get_count(&st, MPI_CHAR, &len);
        memcpy(&idx, buf[0], sizeof idx);
        if ((len != STREAM_LEN || idx != next_idx[src]) && nerr_order++ < 5)
            mtest_error(__FILE__, __LINE__, "from %d: message %d (%d bytes) where %d was expected", src, idx, len,
                        next_idx[src]);
        else
            mtest_check_buf(buf[0] + sizeof idx, STREAM_LEN - sizeof idx, mtest_seed(src, 0, idx), "payload");
        next_idx[src]++;
    }
    for (int s = 1; s < n; s++)
        MTEST_CHECK(next_idx[s] == STREAM_MSGS, "from %d: %d messages, expected %d", s, next_idx[s], STREAM_MSGS);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int kill_me = argc > 1 && !strcmp(argv[1], "kill") && me == 1;
    if (n < 2 || n > 64) {
        MPI_Finalize();
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "stream")) {
        stream(me, n);
        return mtest_finalize();
    }
    int nsend = (n - 1) * MSGS, nrecv = nsend;
    int *order = mtest_malloc((size_t)nsend * sizeof *order), *cnt = calloc((size_t)n, sizeof *cnt);
    for (int d = 0, k = 0; d < n; d++)
        for (int i = 0; d != me && i < MSGS; i++)
            order[k++] = d;
    unsigned rs = 12345u + (unsigned)me;
    for (int k = nsend - 1; k > 0; k--) {
        int j = (int)(rand_r(&rs) % (unsigned)(k + 1)), t = order[k];
        order[k] = order[j];
        order[j] = t;
    }
    char *sbuf[WINDOW], *rbuf = mtest_malloc(MAXLEN);
    MPI_Request sreq[WINDOW];
    for (int w = 0; w < WINDOW; w++) {
        sbuf[w] = mtest_malloc(MAXLEN);
        sreq[w] = MPI_REQUEST_NULL;
    }
    int sent = 0, recvd = 0;
    while (sent < nsend || recvd < nrecv) {
        if (kill_me && sent >= nsend / 2)
            raise(SIGKILL);
        for (int w = 0; w < WINDOW && sent < nsend; w++) {
            int done = 1;
            if (sreq[w] != MPI_REQUEST_NULL)
                MTEST_OK(MPI_Test(&sreq[w], &done, MPI_STATUS_IGNORE));
            if (!done)
                continue;
            int d = order[sent++], i = cnt[d]++;
            size_t len = msg_size(me, d, i);
            if (len >= sizeof(int)) {
                memcpy(sbuf[w], &i, sizeof i);
                mtest_fill(sbuf[w] + sizeof(int), len - sizeof(int), mtest_seed(me, d, i));
            }
            if (rand_r(&rs) % 8 == 0)
                MTEST_OK(MPI_Issend(sbuf[w], (int)len, MPI_CHAR, d, TAG, MPI_COMM_WORLD, &sreq[w]));
            else
                MTEST_OK(MPI_Isend(sbuf[w], (int)len, MPI_CHAR, d, TAG, MPI_COMM_WORLD, &sreq[w]));
        }
        MPI_Status st;
        int mode = (int)(rand_r(&rs) % 4), flag = 0, got;
        if (mode == 0) { /* any-source receive, when something is there */
            MTEST_OK(MPI_Iprobe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &flag, &st));
            if (flag) {
                MTEST_OK(MPI_Recv(rbuf, MAXLEN, MPI_CHAR, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &st));
                MPI_Get_count(&st, MPI_CHAR, &got);
                check_msg(rbuf, st.MPI_SOURCE, me, (size_t)got);
                recvd++;
            }
        } else if (mode == 1) { /* probe, then receive exactly the probed size from its source */
            MTEST_OK(MPI_Iprobe(MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &flag, &st));
            if (flag) {
                int src = st.MPI_SOURCE, len;
                MPI_Get_count(&st, MPI_CHAR, &len);
                MTEST_OK(MPI_Recv(rbuf, len, MPI_CHAR, src, TAG, MPI_COMM_WORLD, &st));
                MPI_Get_count(&st, MPI_CHAR, &got);
                check_msg(rbuf, src, me, (size_t)got);
                recvd++;
            }
        } else if (mode == 2) { /* a receive posted for one source */
            int src = (int)(rand_r(&rs) % (unsigned)n);
            if (src != me && next_idx[src] < MSGS) {
                MTEST_OK(MPI_Iprobe(src, TAG, MPI_COMM_WORLD, &flag, &st));
                if (flag) {
                    MPI_Request r;
                    MTEST_OK(MPI_Irecv(rbuf, MAXLEN, MPI_CHAR, src, TAG, MPI_COMM_WORLD, &r));
                    MTEST_OK(MPI_Wait(&r, &st));
                    MPI_Get_count(&st, MPI_CHAR, &got);
                    check_msg(rbuf, src, me, (size_t)got);
                    recvd++;
                }
            }
        } else if (rand_r(&rs) % 16 == 0) { /* a receive nobody matches, cancelled */
            MPI_Request r;
            int c = 0;
            MTEST_OK(MPI_Irecv(rbuf, 1, MPI_CHAR, MPI_ANY_SOURCE, TAG_NEVER, MPI_COMM_WORLD, &r));
            MTEST_OK(MPI_Cancel(&r));
            MTEST_OK(MPI_Wait(&r, &st));
            MPI_Test_cancelled(&st, &c);
            MTEST_CHECK(c, "a receive nobody could match was not cancelled");
        }
    }
    MTEST_OK(MPI_Waitall(WINDOW, sreq, MPI_STATUSES_IGNORE));
    for (int s = 0; s < n; s++)
        MTEST_CHECK(s == me || next_idx[s] == MSGS, "from %d: %d messages, expected %d", s, next_idx[s], MSGS);
    for (int w = 0; w < WINDOW; w++)
        free(sbuf[w]);
    free(rbuf);
    free(order);
    free(cnt);
    return mtest_finalize();
}
