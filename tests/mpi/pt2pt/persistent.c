/* Persistent requests: Send_init/Ssend_init/Rsend_init/Recv_init started many times with
 * Start and Startall, completed with Wait, Waitall and Testall; new data every round.
 * Inactive persistent requests: Wait/Test/Request_get_status return at once with an empty
 * status; Request_free of an inactive request; PROC_NULL persistent requests. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int sizes[] = {4, 16384, 200000};
#define NS 3
#define ROUNDS 40

static void check_empty(const char *what, const MPI_Status *st)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    MTEST_CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && cnt == 0,
                "%s: expected an empty status, got source %d tag %d count %d", what, st->MPI_SOURCE, st->MPI_TAG, cnt);
}

static void inactive_checks(MPI_Request *r, const char *what)
{
    MPI_Status st;
    int flag = 0;
    memset(&st, 0x55, sizeof st);
    MTEST_OK(MPI_Wait(r, &st));
    MTEST_CHECK(*r != MPI_REQUEST_NULL, "%s: Wait on an inactive persistent request freed it", what);
    check_empty(what, &st);
    memset(&st, 0x55, sizeof st);
    MTEST_OK(MPI_Test(r, &flag, &st));
    MTEST_CHECK(flag && *r != MPI_REQUEST_NULL, "%s: Test on an inactive request: flag %d", what, flag);
    check_empty(what, &st);
    flag = 0;
    memset(&st, 0x55, sizeof st);
    MTEST_OK(MPI_Request_get_status(*r, &flag, &st));
    MTEST_CHECK(flag, "%s: Request_get_status on an inactive request: flag 0", what);
    check_empty(what, &st);
}

/* Pairs exchange in both directions at once with Startall, then check. */
static void exchange(int peer)
{
    for (int k = 0; k < NS; k++) {
        const int n = sizes[k];
        unsigned char *s = mtest_malloc((size_t)n), *r = mtest_malloc((size_t)n + MTEST_GUARD);
        MPI_Request rq[2];
        MTEST_OK(MPI_Recv_init(r, n, MPI_BYTE, peer, k, MPI_COMM_WORLD, &rq[0]));
        if (k == 1)
            MTEST_OK(MPI_Ssend_init(s, n, MPI_BYTE, peer, k, MPI_COMM_WORLD, &rq[1]));
        else
            MTEST_OK(MPI_Send_init(s, n, MPI_BYTE, peer, k, MPI_COMM_WORLD, &rq[1]));
        inactive_checks(&rq[0], "Recv_init before any Start");
        inactive_checks(&rq[1], "Send_init before any Start");
        for (int it = 0; it < ROUNDS; it++) {
            MPI_Status st[2];
            mtest_fill(s, (size_t)n, mtest_seed(mtest_rank, peer, it * 10 + k));
            mtest_fill(r, (size_t)n, 0xdeadu);
            mtest_guard_set(r, (size_t)n);
            MTEST_OK(MPI_Startall(2, rq));
            if (it % 3 == 0) {
                MTEST_OK(MPI_Waitall(2, rq, st));
            } else if (it % 3 == 1) {
                MTEST_OK(MPI_Wait(&rq[1], &st[1]));
                MTEST_OK(MPI_Wait(&rq[0], &st[0]));
            } else {
                int flag = 0;
                while (!flag)
                    MTEST_OK(MPI_Testall(2, rq, &flag, st));
            }
            MTEST_CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL,
                        "completing a persistent request set the handle to MPI_REQUEST_NULL");
            char what[64];
            snprintf(what, sizeof what, "persistent %d bytes round %d", n, it);
            int cnt = -1;
            MPI_Get_count(&st[0], MPI_BYTE, &cnt);
            MTEST_CHECK(cnt == n && st[0].MPI_SOURCE == peer && st[0].MPI_TAG == k, "%s: count %d source %d tag %d",
                        what, cnt, st[0].MPI_SOURCE, st[0].MPI_TAG);
            mtest_check_buf(r, (size_t)n, mtest_seed(peer, mtest_rank, it * 10 + k), what);
            mtest_guard_check(r, (size_t)n, what);
        }
        inactive_checks(&rq[0], "Recv_init after completion");
        MTEST_OK(MPI_Request_free(&rq[0]));
        MTEST_OK(MPI_Request_free(&rq[1]));
        MTEST_CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "Request_free did not null the handles");
        free(s);
        free(r);
    }
}

/* Rsend_init: the receiver starts its receive and then synchronises, so every ready send
 * finds a posted receive. */
static void ready(int peer, int role)
{
    enum { N = 8000 };
    static unsigned char buf[N];
    MPI_Request rq;
    if (role == 0)
        MTEST_OK(MPI_Recv_init(buf, N, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &rq));
    else
        MTEST_OK(MPI_Rsend_init(buf, N, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &rq));
    for (int it = 0; it < 10; it++) {
        if (role == 0) {
            MTEST_OK(MPI_Start(&rq));
            MTEST_OK(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 4, NULL, 0, MPI_BYTE, peer, 4, MPI_COMM_WORLD,
                                  MPI_STATUS_IGNORE));
            MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            mtest_check_buf(buf, N, mtest_seed(peer, mtest_rank, 700 + it), "Rsend_init payload");
        } else {
            mtest_fill(buf, N, mtest_seed(mtest_rank, peer, 700 + it));
            MTEST_OK(MPI_Sendrecv(NULL, 0, MPI_BYTE, peer, 4, NULL, 0, MPI_BYTE, peer, 4, MPI_COMM_WORLD,
                                  MPI_STATUS_IGNORE));
            MTEST_OK(MPI_Start(&rq));
            MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
    }
    MTEST_OK(MPI_Request_free(&rq));
}

static void proc_null(void)
{
    MPI_Request rq[2];
    MPI_Status st[2];
    int x = 42;
    MTEST_OK(MPI_Send_init(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq[0]));
    MTEST_OK(MPI_Recv_init(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq[1]));
    for (int it = 0; it < 3; it++) {
        memset(st, 0x55, sizeof st);
        MTEST_OK(MPI_Startall(2, rq));
        MTEST_OK(MPI_Waitall(2, rq, st));
        int cnt = -1;
        MPI_Get_count(&st[1], MPI_INT, &cnt);
        MTEST_CHECK(st[1].MPI_SOURCE == MPI_PROC_NULL && st[1].MPI_TAG == MPI_ANY_TAG && cnt == 0 && x == 42,
                    "persistent receive from PROC_NULL: source %d tag %d count %d x %d", st[1].MPI_SOURCE,
                    st[1].MPI_TAG, cnt, x);
    }
    MTEST_OK(MPI_Request_free(&rq[0]));
    MTEST_OK(MPI_Request_free(&rq[1]));
}

/* Many persistent requests created, never started, and freed; then one freed while
 * active (the receive still completes and the handle is gone). */
static void free_cases(int peer, int role)
{
    MPI_Request rq[100];
    int x = 0;
    for (int i = 0; i < 100; i++)
        MTEST_OK(MPI_Recv_init(&x, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &rq[i]));
    for (int i = 0; i < 100; i++)
        MTEST_OK(MPI_Request_free(&rq[i]));
    int v = 0;
    if (role == 0) {
        MPI_Request r;
        MTEST_OK(MPI_Send_init(&v, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &r));
        v = 4321;
        MTEST_OK(MPI_Start(&r));
        MTEST_OK(MPI_Request_free(&r));
        MTEST_CHECK(r == MPI_REQUEST_NULL, "Request_free of an active request did not null the handle");
    } else {
        MTEST_OK(MPI_Recv(&v, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_CHECK(v == 4321, "send from a persistent request freed while active delivered %d", v);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int peer = mtest_rank ^ 1;
    if (peer < mtest_size) {
        exchange(peer);
        ready(peer, mtest_rank & 1);
        free_cases(peer, mtest_rank & 1);
    }
    proc_null();
    return mtest_finalize();
}
