/* Non-overtaking: messages from one sender with one tag arrive in the order sent, even when
 * eager and rendezvous sizes are mixed (a later eager message must not pass an earlier
 * rendezvous one), whether the receives are posted first or the messages wait unexpected.
 * Tag-selective receives may take messages out of order and still get the right ones.
 * Ranks pair up: the odd rank of each pair sends, the even one receives. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 160
static const size_t cycle[] = {0, 10, 16000, 20000, 70000, 1, 300000, 4, 65536, 16384, 17000, 2};
#define NCYCLE (sizeof cycle / sizeof cycle[0])
#define MAXSZ 300000

static size_t sz(int i) { return cycle[i % NCYCLE]; }

static unsigned char *bufs[N];

static void sender(int peer, int round, int ssend_every)
{
    MPI_Request rq[N];
    for (int i = 0; i < N; i++) {
        mtest_fill(bufs[i], sz(i), mtest_seed(mtest_rank, peer, round * N + i));
        if (ssend_every && i % ssend_every == 0)
            MTEST_OK(MPI_Issend(bufs[i], (int)sz(i), MPI_BYTE, peer, 7, MPI_COMM_WORLD, &rq[i]));
        else
            MTEST_OK(MPI_Isend(bufs[i], (int)sz(i), MPI_BYTE, peer, 7, MPI_COMM_WORLD, &rq[i]));
    }
    MTEST_OK(MPI_Waitall(N, rq, MPI_STATUSES_IGNORE));
}

static void check(int peer, int round, int i, const MPI_Status *st)
{
    char what[96];
    snprintf(what, sizeof what, "round %d message %d (%zu bytes)", round, i, sz(i));
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    MTEST_CHECK(cnt == (int)sz(i), "%s: count %d (a message overtook another?)", what, cnt);
    if (cnt == (int)sz(i))
        mtest_check_buf(bufs[i], sz(i), mtest_seed(peer, mtest_rank, round * N + i), what);
    MTEST_CHECK(st->MPI_SOURCE == peer && st->MPI_TAG == 7, "%s: source %d tag %d", what, st->MPI_SOURCE, st->MPI_TAG);
}

/* Round 0: receives posted before the sends start. */
static void posted_first(int role, int peer)
{
    if (role == 0) {
        MPI_Request rq[N];
        MPI_Status st[N];
        for (int i = 0; i < N; i++)
            MTEST_OK(MPI_Irecv(bufs[i], MAXSZ, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &rq[i]));
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
        MTEST_OK(MPI_Waitall(N, rq, st));
        for (int i = 0; i < N; i++)
            check(peer, 0, i, &st[i]);
    } else {
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (role == 1)
            sender(peer, 0, 0);
    }
}

/* Round 1: sends (some synchronous) started first; the receiver takes them one by one
 * with blocking receives after a pause, so eager ones queue as unexpected. */
static void unexpected(int role, int peer)
{
    if (role == 0) {
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
        mtest_sleep(0.05);
        for (int i = 0; i < N; i++) {
            MPI_Status st;
            MTEST_OK(MPI_Recv(bufs[i], MAXSZ, MPI_BYTE, peer, 7, MPI_COMM_WORLD, &st));
            check(peer, 1, i, &st);
        }
    } else {
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (role == 1)
            sender(peer, 1, 5);
    }
}

/* Round 2: half posted, half unexpected, with ANY_TAG and ANY_SOURCE receives. */
static void mixed(int role, int peer)
{
    if (role == 0) {
        MPI_Request rq[N / 2];
        MPI_Status st[N / 2];
        for (int i = 0; i < N / 2; i++)
            MTEST_OK(MPI_Irecv(bufs[i], MAXSZ, MPI_BYTE, i % 2 ? MPI_ANY_SOURCE : peer, i % 3 ? 7 : MPI_ANY_TAG,
                               MPI_COMM_WORLD, &rq[i]));
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
        MTEST_OK(MPI_Waitall(N / 2, rq, st));
        for (int i = 0; i < N / 2; i++)
            check(peer, 2, i, &st[i]);
        for (int i = N / 2; i < N; i++) {
            MPI_Status s;
            MTEST_OK(MPI_Recv(bufs[i], MAXSZ, MPI_BYTE, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &s));
            check(peer, 2, i, &s);
        }
    } else {
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (role == 1)
            sender(peer, 2, 0);
    }
}

/* Tag-selective: tags 1..T sent in order, received in reverse. */
static void by_tag(int role, int peer)
{
    enum { T = 24 };
    if (role == 1) {
        MPI_Request rq[T];
        for (int t = 0; t < T; t++) {
            mtest_fill(bufs[t], sz(t), mtest_seed(mtest_rank, peer, 5000 + t));
            MTEST_OK(MPI_Isend(bufs[t], (int)sz(t), MPI_BYTE, peer, t + 1, MPI_COMM_WORLD, &rq[t]));
        }
        MTEST_OK(MPI_Waitall(T, rq, MPI_STATUSES_IGNORE));
    } else if (role == 0) {
        for (int t = T - 1; t >= 0; t--) {
            MPI_Status st;
            MTEST_OK(MPI_Recv(bufs[t], MAXSZ, MPI_BYTE, peer, t + 1, MPI_COMM_WORLD, &st));
            int cnt = -1;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            char what[64];
            snprintf(what, sizeof what, "tag %d received out of order", t + 1);
            MTEST_CHECK(cnt == (int)sz(t) && st.MPI_TAG == t + 1, "%s: count %d tag %d", what, cnt, st.MPI_TAG);
            if (cnt == (int)sz(t))
                mtest_check_buf(bufs[t], sz(t), mtest_seed(peer, mtest_rank, 5000 + t), what);
        }
    }
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    for (int i = 0; i < N; i++)
        bufs[i] = mtest_malloc(MAXSZ);
    /* role 0 receives, 1 sends, -1 idle (odd rank count) */
    int peer = mtest_rank ^ 1;
    int role = peer < mtest_size ? (mtest_rank & 1) : -1;
    posted_first(role, peer);
    unexpected(role, peer);
    mixed(role, peer);
    by_tag(role, peer);
    for (int i = 0; i < N; i++)
        free(bufs[i]);
    return mtest_finalize();
}
