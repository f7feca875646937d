/* Sendrecv and Sendrecv_replace around a ring (both directions, eager and rendezvous
 * sizes, different send and receive sizes, wildcards), checking data and statuses. A ring
 * of blocking sends would deadlock on rendezvous; Sendrecv must not. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int sizes[] = {0, 1, 1000, 16384, 16385, 100000, 1 << 20};
#define NS (int)(sizeof sizes / sizeof sizes[0])
#define MAXSZ (1 << 20)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const int me = mtest_rank, np = mtest_size;
    const int right = (me + 1) % np, left = (me - 1 + np) % np;
    unsigned char *s = mtest_malloc(MAXSZ), *r = mtest_malloc(MAXSZ + MTEST_GUARD);

    for (int k = 0; k < NS; k++) {
        for (int dir = 0; dir < 2; dir++) {
            const int to = dir ? left : right, from = dir ? right : left;
            /* the message sent to the right is sizes[k]; the one from the left too. The
             * receive buffer is larger in direction 1 (count reports the message). */
            const int n = sizes[k];
            const int cap = dir ? MAXSZ : n;
            const int tag = k * 2 + dir;
            MPI_Status st;
            mtest_fill(s, (size_t)n, mtest_seed(me, to, tag));
            memset(r, 0, (size_t)n);
            mtest_guard_set(r, (size_t)cap);
            /* direction 1 uses a wildcard: ANY_SOURCE with the tag, or the source with ANY_TAG
             * (both wildcards could match the left neighbour's next message) */
            int src = from, rtag = tag;
            if (dir)
                (k % 2) ? (void)(rtag = MPI_ANY_TAG) : (void)(src = MPI_ANY_SOURCE);
            MTEST_OK(MPI_Sendrecv(s, n, MPI_BYTE, to, tag, r, cap, MPI_BYTE, src, rtag, MPI_COMM_WORLD, &st));
            char what[64];
            snprintf(what, sizeof what, "Sendrecv %d bytes dir %d", n, dir);
            int cnt = -1;
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            MTEST_CHECK(cnt == n && st.MPI_SOURCE == from && st.MPI_TAG == tag, "%s: count %d source %d tag %d", what,
                        cnt, st.MPI_SOURCE, st.MPI_TAG);
            mtest_check_buf(r, (size_t)n, mtest_seed(from, me, tag), what);
            mtest_guard_check(r, (size_t)cap, what);
        }

        /* replace: the buffer is sent right and overwritten with what comes from the left */
        const int n = sizes[k];
        const int tag = 100 + k;
        MPI_Status st;
        mtest_fill(r, (size_t)n, mtest_seed(me, right, tag));
        mtest_guard_set(r, (size_t)n);
        MTEST_OK(MPI_Sendrecv_replace(r, n, MPI_BYTE, right, tag, left, tag, MPI_COMM_WORLD, &st));
        char what[64];
        snprintf(what, sizeof what, "Sendrecv_replace %d bytes", n);
        int cnt = -1;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        MTEST_CHECK(cnt == n && st.MPI_SOURCE == left && st.MPI_TAG == tag, "%s: count %d source %d tag %d", what, cnt,
                    st.MPI_SOURCE, st.MPI_TAG);
        mtest_check_buf(r, (size_t)n, mtest_seed(left, me, tag), what);
        mtest_guard_check(r, (size_t)n, what);
    }

    /* unequal sizes: send k ints right, receive (left's) k ints; with an int type */
    {
        int out[300], in[300];
        for (int i = 0; i < 300; i++)
            out[i] = me * 1000 + i, in[i] = -1;
        int nout = 50 + me, nin = 50 + left;
        MPI_Status st;
        MTEST_OK(MPI_Sendrecv(out, nout, MPI_INT, right, 9, in, 300, MPI_INT, left, 9, MPI_COMM_WORLD, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_INT, &cnt);
        MTEST_CHECK(cnt == nin, "Sendrecv of %d ints: count %d", nin, cnt);
        for (int i = 0; i < 300; i++) {
            int want = i < nin ? left * 1000 + i : -1;
            if (in[i] != want) {
                MTEST_CHECK(0, "Sendrecv ints: in[%d] = %d, expected %d", i, in[i], want);
                break;
            }
        }
        /* Sendrecv_replace with MPI_INT, rendezvous size */
        enum { N = 50000 };
        int *v = mtest_malloc(N * sizeof(int));
        for (int i = 0; i < N; i++)
            v[i] = me * 7 + i;
        MTEST_OK(MPI_Sendrecv_replace(v, N, MPI_INT, left, 10, right, 10, MPI_COMM_WORLD, &st));
        for (int i = 0; i < N; i++)
            if (v[i] != right * 7 + i) {
                MTEST_CHECK(0, "Sendrecv_replace ints: v[%d] = %d, expected %d", i, v[i], right * 7 + i);
                break;
            }
        free(v);
    }
    free(s);
    free(r);
    return mtest_finalize();
}
