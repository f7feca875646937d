/* MPI_ANY_SOURCE / MPI_ANY_TAG: status fields name the real source and tag, messages from
 * one source arrive in order, wildcard and specific posted receives match in posting order,
 * and Get_count is the message's size (eager and rendezvous). */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define K 12
#define BIG 100000

static size_t msg_size(int i) { return (i % 3 == 2) ? BIG + (size_t)i : (size_t)(i * 37 % 200); }

/* Every rank but 0 sends K messages with tag src*100+i; rank 0 takes them all with
 * wildcards and checks source, tag, order per source, size and content. */
static void gather_wild(int use_irecv)
{
    const int me = mtest_rank, np = mtest_size;
    unsigned char *buf = mtest_malloc(BIG + K + MTEST_GUARD);
    if (me != 0) {
        MPI_Request rq[K];
        unsigned char *s[K];
        for (int i = 0; i < K; i++) {
            s[i] = mtest_malloc(msg_size(i));
            mtest_fill(s[i], msg_size(i), mtest_seed(me, 0, i + use_irecv * 50));
            MTEST_OK(MPI_Isend(s[i], (int)msg_size(i), MPI_BYTE, 0, me * 100 + i, MPI_COMM_WORLD, &rq[i]));
        }
        MTEST_OK(MPI_Waitall(K, rq, MPI_STATUSES_IGNORE));
        for (int i = 0; i < K; i++)
            free(s[i]);
    } else {
        int *next = calloc((size_t)np, sizeof *next);
        for (int n = 0; n < K * (np - 1); n++) {
            MPI_Status st;
            memset(&st, 0x55, sizeof st);
            mtest_guard_set(buf, BIG + K);
            if (use_irecv) {
                MPI_Request rq;
                MTEST_OK(MPI_Irecv(buf, BIG + K, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq));
                MTEST_OK(MPI_Wait(&rq, &st));
            } else {
                MTEST_OK(MPI_Recv(buf, BIG + K, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            }
            int src = st.MPI_SOURCE, tag = st.MPI_TAG;
            if (src <= 0 || src >= np) {
                MTEST_CHECK(0, "wildcard receive: status source %d out of range", src);
                continue;
            }
            int i = next[src]++;
            MTEST_CHECK(tag == src * 100 + i, "wildcard receive from %d: tag %d, expected %d (order or tag wrong)", src,
                        tag, src * 100 + i);
            int cnt = -1;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            MTEST_CHECK(cnt == (int)msg_size(i), "wildcard receive from %d tag %d: count %d, expected %zu", src, tag,
                        cnt, msg_size(i));
            char what[96];
            snprintf(what, sizeof what, "wildcard message %d from rank %d", i, src);
            mtest_check_buf(buf, msg_size(i), mtest_seed(src, 0, i + use_irecv * 50), what);
            mtest_guard_check(buf, BIG + K, what);
        }
        for (int r = 1; r < np; r++)
            MTEST_CHECK(next[r] == K, "got %d messages from rank %d, expected %d", next[r], r, K);
        free(next);
    }
    free(buf);
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Half-wildcards: ANY_SOURCE with a given tag, a given source with ANY_TAG. */
static void half_wild(void)
{
    const int me = mtest_rank, np = mtest_size;
    if (np < 2)
        return;
    if (me == 1) {
        int v[3] = {7, 8, 9};
        MTEST_OK(MPI_Send(&v[0], 1, MPI_INT, 0, 33, MPI_COMM_WORLD));
        MTEST_OK(MPI_Send(&v[1], 1, MPI_INT, 0, 44, MPI_COMM_WORLD));
        MTEST_OK(MPI_Send(&v[2], 1, MPI_INT, 0, 55, MPI_COMM_WORLD));
    } else if (me == 0) {
        MPI_Status st;
        int x = 0;
        /* tag 44 is selected over the earlier 33 */
        MTEST_OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 44, MPI_COMM_WORLD, &st));
        MTEST_CHECK(x == 8 && st.MPI_SOURCE == 1 && st.MPI_TAG == 44, "ANY_SOURCE tag 44: x=%d src=%d tag=%d", x,
                    st.MPI_SOURCE, st.MPI_TAG);
        MTEST_OK(MPI_Recv(&x, 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        MTEST_CHECK(x == 7 && st.MPI_SOURCE == 1 && st.MPI_TAG == 33, "source 1 ANY_TAG: x=%d src=%d tag=%d", x,
                    st.MPI_SOURCE, st.MPI_TAG);
        MTEST_OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        MTEST_CHECK(x == 9 && st.MPI_SOURCE == 1 && st.MPI_TAG == 55, "ANY/ANY: x=%d src=%d tag=%d", x, st.MPI_SOURCE,
                    st.MPI_TAG);
    }
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Posted receives match in posting order, wildcard or not: a message goes to the earliest
 * posted receive it matches. */
static void posted_order(void)
{
    const int me = mtest_rank, np = mtest_size;
    if (np < 2)
        return;
    enum { N = 4 };
    static unsigned char r[N][BIG], s[N][BIG];
    if (me == 0) {
        MPI_Request rq[N];
        MPI_Status st[N];
        /* any-source, specific, any-source/any-tag, specific: all match the four messages */
        MTEST_OK(MPI_Irecv(r[0], BIG, MPI_BYTE, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &rq[0]));
        MTEST_OK(MPI_Irecv(r[1], BIG, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &rq[1]));
        MTEST_OK(MPI_Irecv(r[2], BIG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[2]));
        MTEST_OK(MPI_Irecv(r[3], BIG, MPI_BYTE, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[3]));
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
        MTEST_OK(MPI_Waitall(N, rq, st));
        for (int i = 0; i < N; i++) {
            size_t n = (i % 2) ? BIG : 64;
            char what[64];
            snprintf(what, sizeof what, "posted receive %d", i);
            mtest_check_buf(r[i], n, mtest_seed(1, 0, 300 + i), what);
            MTEST_CHECK(st[i].MPI_SOURCE == 1 && st[i].MPI_TAG == 5, "%s: src %d tag %d", what, st[i].MPI_SOURCE,
                        st[i].MPI_TAG);
            int cnt;
            MPI_Get_count(&st[i], MPI_BYTE, &cnt);
            MTEST_CHECK(cnt == (int)n, "%s: count %d, expected %zu", what, cnt, n);
        }
    } else {
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (me == 1)
            for (int i = 0; i < N; i++) {
                size_t n = (i % 2) ? BIG : 64;
                mtest_fill(s[i], n, mtest_seed(1, 0, 300 + i));
                MTEST_OK(MPI_Send(s[i], (int)n, MPI_BYTE, 0, 5, MPI_COMM_WORLD));
            }
    }
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    gather_wild(0);
    gather_wild(1);
    half_wild();
    posted_order();
    return mtest_finalize();
}
