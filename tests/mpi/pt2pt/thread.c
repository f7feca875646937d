/* MPI_THREAD_MULTIPLE: two pthreads per rank, each ping-ponging with the same thread of the
 * partner rank (i^1) on its own duplicate of MPI_COMM_WORLD, with the same tags, eager and
 * rendezvous sizes mixed. Only the communicator keeps the two streams apart; every byte is
 * checked. A third phase has both threads use wildcards on their communicator. */
#include "mtest.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ITERS 200
#define NT 2
static const int sizes[] = {0, 8, 1000, 16384, 100000};
#define NS 5
#define MAXSZ 100000

static MPI_Comm comms[NT];
static int peer;

static void *run(void *arg)
{
    const int t = (int)(intptr_t)arg;
    const int me = mtest_rank;
    MPI_Comm comm = comms[t];
    unsigned char *s = mtest_malloc(MAXSZ), *r = mtest_malloc(MAXSZ);
    for (int it = 0; it < ITERS; it++) {
        const int n = sizes[(it + t) % NS];
        const unsigned seed_out = mtest_seed(me, peer, it * 4 + t), seed_in = mtest_seed(peer, me, it * 4 + t);
        MPI_Status st;
        mtest_fill(s, (size_t)n, seed_out);
        int wild = it >= ITERS / 2;
        int src = wild ? MPI_ANY_SOURCE : peer, tag = wild ? MPI_ANY_TAG : 5;
        if (me & 1) {
            MTEST_OK(MPI_Recv(r, MAXSZ, MPI_BYTE, src, tag, comm, &st));
            MTEST_OK(MPI_Send(s, n, MPI_BYTE, peer, 5, comm));
        } else {
            MTEST_OK(MPI_Send(s, n, MPI_BYTE, peer, 5, comm));
            MTEST_OK(MPI_Recv(r, MAXSZ, MPI_BYTE, src, tag, comm, &st));
        }
        int cnt = -1;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        char what[80];
        snprintf(what, sizeof what, "thread %d iteration %d (%d bytes)", t, it, n);
        MTEST_CHECK(cnt == n && st.MPI_SOURCE == peer && st.MPI_TAG == 5, "%s: count %d source %d tag %d", what, cnt,
                    st.MPI_SOURCE, st.MPI_TAG);
        if (cnt == n)
            mtest_check_buf(r, (size_t)n, seed_in, what);
        if (it % 50 == 0) {
            /* nonblocking in the mix */
            MPI_Request rq[2];
            mtest_fill(s, MAXSZ, seed_out + 7);
            MTEST_OK(MPI_Irecv(r, MAXSZ, MPI_BYTE, peer, 6, comm, &rq[0]));
            MTEST_OK(MPI_Isend(s, MAXSZ, MPI_BYTE, peer, 6, comm, &rq[1]));
            MTEST_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
            mtest_check_buf(r, MAXSZ, seed_in + 7, what);
        }
    }
    free(s);
    free(r);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int flag = 0, level = -1;
    MTEST_OK(MPI_Is_thread_main(&flag));
    MTEST_CHECK(flag, "MPI_Is_thread_main is false in the main thread");
    MTEST_OK(MPI_Query_thread(&level));
    MTEST_CHECK(level == provided, "MPI_Query_thread %d, Init_thread provided %d", level, provided);
    for (int t = 0; t < NT; t++)
        MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]));
    peer = mtest_rank ^ 1;
    if (provided == MPI_THREAD_MULTIPLE && peer < mtest_size) {
        pthread_t th[NT];
        for (int t = 0; t < NT; t++)
            MTEST_CHECK(pthread_create(&th[t], NULL, run, (void *)(intptr_t)t) == 0, "pthread_create failed");
        for (int t = 0; t < NT; t++)
            pthread_join(th[t], NULL);
    }
    for (int t = 0; t < NT; t++)
        MTEST_OK(MPI_Comm_free(&comms[t]));
    return mtest_finalize();
}
