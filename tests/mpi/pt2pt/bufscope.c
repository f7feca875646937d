/* MPI-4.1 buffers and generalized requests.
 * Buffers: a communicator's own buffer carries its Bsends (the process has none attached);
 * MPI_BUFFER_AUTOMATIC needs no space from the user; Comm_iflush_buffer stays incomplete
 * while a rendezvous-size Bsend waits for its receiver and completes once it is received;
 * Comm_flush_buffer and Buffer_flush return with everything sent; detach gives back what was
 * attached; a session's buffer attaches, flushes and detaches; errors (MPI_ERRORS_RETURN):
 * a second attach, detach with nothing attached -> MPI_ERR_BUFFER.
 * Generalized requests: Test is false until MPI_Grequest_complete; Wait returns the status
 * the query function sets and calls the free function once; Request_free before completion
 * runs the free function at completion; Cancel calls the cancel function with the
 * completion state; a query function's error comes back from Wait and in Waitall's status. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define BIG 200000 /* rendezvous on every provider */

static void buffers(int peer)
{
    MPI_Comm comm;
    MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    mtest_errors_return(MPI_COMM_WORLD);
    unsigned char *msg = mtest_malloc(BIG), *in = mtest_malloc(BIG);
    int need = BIG + 100 + 2 * MPI_BSEND_OVERHEAD;
    char *space = mtest_malloc((size_t)need);

    if (mtest_rank == 0) {
        /* no process buffer: only the communicator's can carry these */
        MTEST_OK(MPI_Comm_attach_buffer(comm, space, need));
        MTEST_ERR(MPI_Comm_attach_buffer(comm, space, need), MPI_ERR_BUFFER);
        mtest_fill(msg, BIG, 7);
        MTEST_OK(MPI_Bsend(msg, BIG, MPI_BYTE, peer, 1, comm));
        MTEST_OK(MPI_Bsend(msg, 100, MPI_BYTE, peer, 2, comm));
        memset(msg, 0, BIG);
        MPI_Request fl;
        int flag = 1;
        MTEST_OK(MPI_Comm_iflush_buffer(comm, &fl));
        for (int i = 0; i < 100; i++)
            MTEST_OK(MPI_Test(&fl, &flag, MPI_STATUS_IGNORE));
        MTEST_CHECK(!flag, "Comm_iflush_buffer completed before the receiver posted its receive");
        MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 3, comm)); /* now the receiver may receive */
        MTEST_OK(MPI_Wait(&fl, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Comm_flush_buffer(comm));
        void *p = NULL;
        int sz = 0;
        MTEST_OK(MPI_Comm_detach_buffer(comm, &p, &sz));
        MTEST_CHECK(p == space && sz == need, "Comm_detach_buffer gave %p/%d, attached %p/%d", p, sz, (void *)space,
                    need);
        MTEST_ERR(MPI_Comm_detach_buffer(comm, &p, &sz), MPI_ERR_BUFFER);
        MTEST_ERR(MPI_Bsend(msg, 10, MPI_BYTE, peer, 4, comm), MPI_ERR_BUFFER); /* nothing attached */

        /* automatic: no space given, any size goes */
        MTEST_OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
        mtest_fill(msg, BIG, 8);
        MTEST_OK(MPI_Bsend(msg, BIG, MPI_BYTE, peer, 5, comm));
        memset(msg, 0, BIG);
        MTEST_OK(MPI_Buffer_flush());
        MTEST_OK(MPI_Buffer_detach(&p, &sz));
        MTEST_CHECK(p == MPI_BUFFER_AUTOMATIC && sz == 0, "Buffer_detach gave %p/%d for an automatic buffer", p, sz);
        MPI_Request fl2;
        MTEST_OK(MPI_Buffer_iflush(&fl2)); /* nothing attached: complete at once */
        MTEST_OK(MPI_Wait(&fl2, MPI_STATUS_IGNORE));
        MTEST_ERR(MPI_Buffer_detach(&p, &sz), MPI_ERR_BUFFER);
    } else {
        MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 3, comm, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Recv(in, BIG, MPI_BYTE, peer, 1, comm, MPI_STATUS_IGNORE));
        mtest_check_buf(in, BIG, 7, "Bsend through the communicator's buffer");
        MTEST_OK(MPI_Recv(in, 100, MPI_BYTE, peer, 2, comm, MPI_STATUS_IGNORE));
        mtest_check_buf(in, 100, 7, "small Bsend through the communicator's buffer");
        MTEST_OK(MPI_Recv(in, BIG, MPI_BYTE, peer, 5, comm, MPI_STATUS_IGNORE));
        mtest_check_buf(in, BIG, 8, "Bsend through MPI_BUFFER_AUTOMATIC");
    }

    MPI_Session s;
    MTEST_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MTEST_OK(MPI_Session_attach_buffer(s, space, need));
    MTEST_ERR(MPI_Session_attach_buffer(s, space, need), MPI_ERR_BUFFER);
    MTEST_OK(MPI_Session_flush_buffer(s));
    void *p = NULL;
    MPI_Count n = 0;
    MTEST_OK(MPI_Session_detach_buffer_c(s, &p, &n));
    MTEST_CHECK(p == space && n == need, "Session_detach_buffer_c gave %p/%lld", p, (long long)n);
    MTEST_OK(MPI_Session_finalize(&s));
    MTEST_OK(MPI_Comm_free(&comm));
    free(msg);
    free(in);
    free(space);
}

typedef struct {
    int queries, frees, cancels, last_complete, query_rc;
} gstate_t;

static int g_query(void *extra, MPI_Status *st)
{
    gstate_t *g = extra;
    g->queries++;
    MPI_Status_set_elements(st, MPI_INT, 3);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = 5;
    st->MPI_TAG = 77;
    return g->query_rc;
}

static int g_free(void *extra)
{
    ((gstate_t *)extra)->frees++;
    return MPI_SUCCESS;
}

static int g_cancel(void *extra, int complete)
{
    gstate_t *g = extra;
    g->cancels++;
    g->last_complete = complete;
    return MPI_SUCCESS;
}

static void grequests(void)
{
    gstate_t g = {0};
    MPI_Request r;
    MPI_Status st;
    int flag = 1, count = -1;
    mtest_errors_return(MPI_COMM_WORLD);
    MTEST_OK(MPI_Grequest_start(g_query, g_free, g_cancel, &g, &r));
    MTEST_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
    MTEST_CHECK(!flag, "a generalized request tested complete before MPI_Grequest_complete");
    MTEST_OK(MPI_Cancel(&r));
    MTEST_CHECK(g.cancels == 1 && g.last_complete == 0, "cancel function: %d calls, complete=%d", g.cancels,
                g.last_complete);
    MTEST_OK(MPI_Grequest_complete(r));
    MTEST_ERR(MPI_Grequest_complete(r), MPI_ERR_REQUEST);
    MTEST_OK(MPI_Wait(&r, &st));
    MPI_Get_count(&st, MPI_INT, &count);
    MTEST_CHECK(r == MPI_REQUEST_NULL, "Wait left the handle of a generalized request");
    MTEST_CHECK(st.MPI_SOURCE == 5 && st.MPI_TAG == 77 && count == 3,
                "status from the query function: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
    MTEST_CHECK(g.queries == 1 && g.frees == 1, "query %d and free %d calls (want 1 and 1)", g.queries, g.frees);

    /* freed while active: the free function runs when it completes, not before */
    gstate_t h = {0};
    MTEST_OK(MPI_Grequest_start(g_query, g_free, g_cancel, &h, &r));
    MPI_Request keep = r;
    MTEST_OK(MPI_Request_free(&r));
    MTEST_CHECK(h.frees == 0, "free function ran before the request completed");
    MTEST_OK(MPI_Grequest_complete(keep));
    MTEST_CHECK(h.frees == 1 && h.queries == 0, "after completion: free %d, query %d (want 1, 0)", h.frees, h.queries);

    /* a query function's error: Wait returns it; Waitall puts it in the status */
    gstate_t e = {0};
    e.query_rc = MPI_ERR_OTHER;
    MTEST_OK(MPI_Grequest_start(g_query, g_free, NULL, &e, &r));
    MTEST_OK(MPI_Grequest_complete(r));
    MTEST_ERR(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_OTHER);
    MPI_Request two[2];
    MPI_Status sts[2];
    MTEST_OK(MPI_Grequest_start(g_query, g_free, NULL, &e, &two[0]));
    MTEST_OK(MPI_Grequest_start(g_query, g_free, NULL, &g, &two[1]));
    MTEST_OK(MPI_Grequest_complete(two[1]));
    MTEST_OK(MPI_Grequest_complete(two[0]));
    MTEST_ERR(MPI_Waitall(2, two, sts), MPI_ERR_IN_STATUS);
    MTEST_CHECK(sts[0].MPI_ERROR == MPI_ERR_OTHER && sts[1].MPI_ERROR == MPI_SUCCESS,
                "Waitall statuses: errors %d and %d", sts[0].MPI_ERROR, sts[1].MPI_ERROR);
    MTEST_CHECK(e.frees == 2 && g.frees == 2, "free calls %d and %d (want 2 and 2)", e.frees, g.frees);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    if (mtest_size >= 2 && mtest_rank < 2)
        buffers(1 - mtest_rank);
    grequests();
    return mtest_finalize();
}
