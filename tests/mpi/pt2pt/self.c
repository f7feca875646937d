/* Messages to oneself, on MPI_COMM_WORLD and MPI_COMM_SELF: Isend then Recv (unexpected),
 * Irecv then Send, Sendrecv and Sendrecv_replace with oneself, Issend/Ssend to oneself,
 * Probe; sizes up to rendezvous (4 MiB). */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int sizes[] = {0, 1, 100, 16384, 16385, 100000, 4 << 20};
#define NS (int)(sizeof sizes / sizeof sizes[0])
#define MAXSZ (4 << 20)

static unsigned char *sbuf, *rbuf;

static void check(const char *how, MPI_Comm comm, int n, unsigned seed, const MPI_Status *st, int tag)
{
    int me, cnt = -1;
    MPI_Comm_rank(comm, &me);
    char what[96];
    snprintf(what, sizeof what, "%s %d bytes on %s", how, n, comm == MPI_COMM_SELF ? "SELF" : "WORLD");
    MPI_Get_count(st, MPI_BYTE, &cnt);
    MTEST_CHECK(cnt == n && st->MPI_SOURCE == me && st->MPI_TAG == tag, "%s: count %d source %d tag %d", what, cnt,
                st->MPI_SOURCE, st->MPI_TAG);
    mtest_check_buf(rbuf, (size_t)n, seed, what);
    mtest_guard_check(rbuf, (size_t)n, what);
}

static void run(MPI_Comm comm)
{
    int me;
    MPI_Comm_rank(comm, &me);
    for (int k = 0; k < NS; k++) {
        const int n = sizes[k];
        MPI_Request rq;
        MPI_Status st;
        unsigned seed = mtest_seed(me, me, k);

        mtest_fill(sbuf, (size_t)n, seed);
        mtest_guard_set(rbuf, (size_t)n);
        MTEST_OK(MPI_Isend(sbuf, n, MPI_BYTE, me, k, comm, &rq));
        MTEST_OK(MPI_Recv(rbuf, n, MPI_BYTE, me, k, comm, &st));
        MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        check("Isend+Recv", comm, n, seed, &st, k);

        seed++;
        mtest_fill(sbuf, (size_t)n, seed);
        memset(rbuf, 0, (size_t)n);
        MTEST_OK(MPI_Irecv(rbuf, n, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &rq));
        MTEST_OK(MPI_Send(sbuf, n, MPI_BYTE, me, k + 100, comm));
        MTEST_OK(MPI_Wait(&rq, &st));
        check("Irecv+Send", comm, n, seed, &st, k + 100);

        seed++;
        mtest_fill(sbuf, (size_t)n, seed);
        memset(rbuf, 0, (size_t)n);
        MTEST_OK(MPI_Sendrecv(sbuf, n, MPI_BYTE, me, k + 200, rbuf, n, MPI_BYTE, me, k + 200, comm, &st));
        check("Sendrecv", comm, n, seed, &st, k + 200);

        seed++;
        mtest_fill(rbuf, (size_t)n, seed);
        MTEST_OK(MPI_Sendrecv_replace(rbuf, n, MPI_BYTE, me, k + 300, me, k + 300, comm, &st));
        check("Sendrecv_replace", comm, n, seed, &st, k + 300);

        seed++;
        mtest_fill(sbuf, (size_t)n, seed);
        memset(rbuf, 0, (size_t)n);
        MTEST_OK(MPI_Issend(sbuf, n, MPI_BYTE, me, k + 400, comm, &rq));
        int flag = 1;
        MTEST_OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
        MTEST_CHECK(!flag, "Issend of %d bytes to self completed before the receive was posted", n);
        MTEST_OK(MPI_Probe(me, k + 400, comm, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        MTEST_CHECK(cnt == n && st.MPI_SOURCE == me, "Probe of a message to self: count %d source %d", cnt,
                    st.MPI_SOURCE);
        MTEST_OK(MPI_Recv(rbuf, n, MPI_BYTE, me, k + 400, comm, &st));
        if (!flag)
            MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        check("Issend+Recv", comm, n, seed, &st, k + 400);

        seed++;
        mtest_fill(sbuf, (size_t)n, seed);
        memset(rbuf, 0, (size_t)n);
        MTEST_OK(MPI_Irecv(rbuf, n, MPI_BYTE, me, k + 500, comm, &rq));
        MTEST_OK(MPI_Ssend(sbuf, n, MPI_BYTE, me, k + 500, comm));
        MTEST_OK(MPI_Wait(&rq, &st));
        check("Irecv+Ssend", comm, n, seed, &st, k + 500);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    sbuf = mtest_malloc(MAXSZ);
    rbuf = mtest_malloc(MAXSZ + MTEST_GUARD);
    run(MPI_COMM_WORLD);
    run(MPI_COMM_SELF);
    int sz = -1, r = -1;
    MPI_Comm_size(MPI_COMM_SELF, &sz);
    MPI_Comm_rank(MPI_COMM_SELF, &r);
    MTEST_CHECK(sz == 1 && r == 0, "MPI_COMM_SELF: size %d rank %d", sz, r);
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
