/* Invalid arguments under MPI_ERRORS_RETURN give the right error class and change nothing:
 * ranks (size, -5, ANY_SOURCE as a destination), tags (negative, ANY_TAG on a send; the
 * largest valid tag works), negative counts, MPI_DATATYPE_NULL and uncommitted types,
 * MPI_COMM_NULL (handled by MPI_COMM_WORLD's error handler), NULL buffers with count > 0,
 * used-up request handles, Start of a non-persistent request. Error_class is the identity
 * on classes and Error_string is non-empty for each. A user error handler is called with
 * the communicator and the code. Afterwards, communication still works. */
#include "mtest.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static int peer;

static void ranks(void)
{
    int x = 0, flag;
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Status st;
    MPI_Message m;
    MTEST_ERR(MPI_Send(&x, 1, MPI_INT, mtest_size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    MTEST_ERR(MPI_Send(&x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    MTEST_ERR(MPI_Send(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    MTEST_ERR(MPI_Ssend(&x, 1, MPI_INT, mtest_size + 100, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    MTEST_ERR(MPI_Rsend(&x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    MTEST_ERR(MPI_Isend(&x, 1, MPI_INT, mtest_size, 0, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    MTEST_CHECK(rq == MPI_REQUEST_NULL, "a failed Isend set the request handle");
    MTEST_ERR(MPI_Issend(&x, 1, MPI_INT, INT_MAX, 0, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    MTEST_ERR(MPI_Send_init(&x, 1, MPI_INT, mtest_size, 0, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    MTEST_ERR(MPI_Recv(&x, 1, MPI_INT, mtest_size, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    MTEST_ERR(MPI_Recv(&x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    MTEST_ERR(MPI_Irecv(&x, 1, MPI_INT, mtest_size, 0, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    MTEST_ERR(MPI_Recv_init(&x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    MTEST_ERR(MPI_Probe(mtest_size, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    MTEST_ERR(MPI_Iprobe(-5, 0, MPI_COMM_WORLD, &flag, &st), MPI_ERR_RANK);
    MTEST_ERR(MPI_Mprobe(mtest_size, 0, MPI_COMM_WORLD, &m, &st), MPI_ERR_RANK);
    MTEST_ERR(MPI_Sendrecv(&x, 1, MPI_INT, mtest_size, 0, &x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    MTEST_ERR(MPI_Sendrecv(&x, 1, MPI_INT, 0, 0, &x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    MTEST_ERR(MPI_Sendrecv_replace(&x, 1, MPI_INT, mtest_size, 0, 0, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    /* a rank valid in WORLD is invalid in SELF */
    if (mtest_size > 1)
        MTEST_ERR(MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_SELF), MPI_ERR_RANK);
}

static void tags(void)
{
    int x = 0;
    MPI_Request rq;
    MPI_Status st;
    MTEST_ERR(MPI_Send(&x, 1, MPI_INT, peer, -1, MPI_COMM_WORLD), MPI_ERR_TAG);
    MTEST_ERR(MPI_Send(&x, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    MTEST_ERR(MPI_Isend(&x, 1, MPI_INT, peer, INT_MIN, MPI_COMM_WORLD, &rq), MPI_ERR_TAG);
    MTEST_ERR(MPI_Recv(&x, 1, MPI_INT, peer, -5, MPI_COMM_WORLD, &st), MPI_ERR_TAG);
    MTEST_ERR(MPI_Irecv(&x, 1, MPI_INT, peer, -100, MPI_COMM_WORLD, &rq), MPI_ERR_TAG);
    int flag;
    MTEST_ERR(MPI_Iprobe(peer, -7, MPI_COMM_WORLD, &flag, &st), MPI_ERR_TAG);
    /* the largest tag the library allows (MPI_TAG_UB = INT_MAX) is valid, to oneself */
    int v = 99;
    x = 0;
    MTEST_OK(MPI_Isend(&v, 1, MPI_INT, mtest_rank, INT_MAX, MPI_COMM_WORLD, &rq));
    MTEST_OK(MPI_Recv(&x, 1, MPI_INT, mtest_rank, INT_MAX, MPI_COMM_WORLD, &st));
    MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MTEST_CHECK(x == 99 && st.MPI_TAG == INT_MAX, "tag INT_MAX: x %d status tag %d", x, st.MPI_TAG);
}

static void counts_types_buffers(void)
{
    int x[4] = {0};
    MPI_Request rq;
    MPI_Status st;
    MTEST_ERR(MPI_Send(x, -1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Recv(x, -3, MPI_INT, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Isend(x, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &rq), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Irecv(x, INT_MIN, MPI_INT, peer, 0, MPI_COMM_WORLD, &rq), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Send_init(x, -1, MPI_INT, peer, 0, MPI_COMM_WORLD, &rq), MPI_ERR_COUNT);

    MTEST_ERR(MPI_Send(x, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MTEST_ERR(MPI_Recv(x, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_TYPE);
    MTEST_ERR(MPI_Irecv(x, 1, MPI_DATATYPE_NULL, peer, 0, MPI_COMM_WORLD, &rq), MPI_ERR_TYPE);
    MPI_Datatype t;
    MTEST_OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MTEST_ERR(MPI_Send(x, 1, t, peer, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    MTEST_ERR(MPI_Recv(x, 1, t, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_TYPE);
    MTEST_ERR(MPI_Isend(x, 2, t, peer, 0, MPI_COMM_WORLD, &rq), MPI_ERR_TYPE);
    MTEST_OK(MPI_Type_free(&t));
    int cnt;
    MPI_Status good;
    memset(&good, 0, sizeof good);
    MTEST_ERR(MPI_Get_count(&good, MPI_DATATYPE_NULL, &cnt), MPI_ERR_TYPE);

    MTEST_ERR(MPI_Send(NULL, 1, MPI_INT, peer, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MTEST_ERR(MPI_Recv(NULL, 4, MPI_INT, peer, 0, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER);
    MTEST_ERR(MPI_Isend(NULL, 1, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &rq), MPI_ERR_BUFFER);
    MTEST_ERR(MPI_Irecv(NULL, 1, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &rq), MPI_ERR_BUFFER);
}

static void comms(void)
{
    int x = 0, n;
    MPI_Status st;
    MPI_Request rq;
    MPI_Comm c;
    MTEST_ERR(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    MTEST_ERR(MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM);
    MTEST_ERR(MPI_Isend(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &rq), MPI_ERR_COMM);
    MTEST_ERR(MPI_Irecv(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &rq), MPI_ERR_COMM);
    MTEST_ERR(MPI_Probe(0, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM);
    MTEST_ERR(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    MTEST_ERR(MPI_Comm_size(MPI_COMM_NULL, &n), MPI_ERR_COMM);
    MTEST_ERR(MPI_Comm_rank(MPI_COMM_NULL, &n), MPI_ERR_COMM);
    MTEST_ERR(MPI_Comm_dup(MPI_COMM_NULL, &c), MPI_ERR_COMM);
    c = MPI_COMM_NULL;
    MTEST_ERR(MPI_Comm_free(&c), MPI_ERR_COMM);
    /* freeing a predefined communicator is an error too */
    c = MPI_COMM_WORLD;
    MTEST_ERR(MPI_Comm_free(&c), MPI_ERR_COMM);
    MTEST_CHECK(c == MPI_COMM_WORLD, "a failed Comm_free changed the handle");
    c = MPI_COMM_SELF;
    MTEST_ERR(MPI_Comm_free(&c), MPI_ERR_COMM);
    /* a freed communicator's handle is MPI_COMM_NULL */
    MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    MTEST_OK(MPI_Comm_free(&c));
    MTEST_ERR(MPI_Send(&x, 1, MPI_INT, 0, 0, c), MPI_ERR_COMM);
}

static void requests(void)
{
    int v = 5, x = 0;
    MPI_Request rq, copy;
    MPI_Status st;
    /* completed by Wait: the copy names a request that no longer exists */
    MTEST_OK(MPI_Isend(&v, 1, MPI_INT, mtest_rank, 3, MPI_COMM_WORLD, &rq));
    copy = rq;
    MTEST_OK(MPI_Recv(&x, 1, MPI_INT, mtest_rank, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    MTEST_CHECK(rq == MPI_REQUEST_NULL, "Wait did not set the handle to MPI_REQUEST_NULL");
    MTEST_ERR(MPI_Wait(&copy, &st), MPI_ERR_REQUEST);
    int flag;
    MTEST_ERR(MPI_Test(&copy, &flag, &st), MPI_ERR_REQUEST);
    MTEST_ERR(MPI_Request_free(&copy), MPI_ERR_REQUEST);
    MTEST_ERR(MPI_Waitall(1, &copy, &st), MPI_ERR_REQUEST);
    MTEST_ERR(MPI_Cancel(&copy), MPI_ERR_REQUEST);

    /* freed by Request_free */
    MTEST_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq));
    copy = rq;
    MTEST_OK(MPI_Request_free(&rq));
    MTEST_ERR(MPI_Wait(&copy, &st), MPI_ERR_REQUEST);

    /* Start needs a persistent request */
    MTEST_OK(MPI_Irecv(&x, 1, MPI_INT, mtest_rank, 4, MPI_COMM_WORLD, &rq));
    MTEST_ERR(MPI_Start(&rq), MPI_ERR_REQUEST);
    MTEST_OK(MPI_Cancel(&rq));
    MTEST_OK(MPI_Wait(&rq, &st));
    /* starting an active persistent request */
    MTEST_OK(MPI_Recv_init(&x, 1, MPI_INT, mtest_rank, 4, MPI_COMM_WORLD, &rq));
    MTEST_OK(MPI_Start(&rq));
    MTEST_ERR(MPI_Start(&rq), MPI_ERR_REQUEST);
    MTEST_OK(MPI_Cancel(&rq));
    MTEST_OK(MPI_Wait(&rq, &st));
    MTEST_OK(MPI_Request_free(&rq));
    /* Waitall/Waitany with a negative count */
    int idx;
    MTEST_ERR(MPI_Waitall(-1, &rq, MPI_STATUSES_IGNORE), MPI_ERR_COUNT);
    (void)idx;
}

static void classes(void)
{
    for (int c = MPI_SUCCESS; c <= MPI_ERR_ERRHANDLER; c++) {
        int cls = -1, len = -1;
        char s[MPI_MAX_ERROR_STRING];
        s[0] = 0;
        MTEST_OK(MPI_Error_class(c, &cls));
        MTEST_CHECK(cls == c, "Error_class(%d) = %d", c, cls);
        MTEST_OK(MPI_Error_string(c, s, &len));
        MTEST_CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && (int)strlen(s) == len,
                    "Error_string(%d): length %d, \"%s\"", c, len, s);
    }
    char s[MPI_MAX_ERROR_STRING];
    int len;
    MTEST_OK(MPI_Error_string(MPI_ERR_RANK, s, &len));
    MTEST_CHECK(strstr(s, "rank") != NULL, "Error_string(MPI_ERR_RANK) = \"%s\" does not mention the rank", s);
    MTEST_OK(MPI_Error_string(MPI_ERR_TRUNCATE, s, &len));
    MTEST_CHECK(strstr(s, "trunc") != NULL, "Error_string(MPI_ERR_TRUNCATE) = \"%s\"", s);
}

static void user_handler(void)
{
    MPI_Errhandler eh, got;
    MPI_Comm d;
    MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MTEST_OK(MPI_Comm_create_errhandler(mtest_recording_handler, &eh));
    MTEST_OK(MPI_Comm_set_errhandler(d, eh));
    MTEST_OK(MPI_Comm_get_errhandler(d, &got));
    MTEST_CHECK(got == eh, "Comm_get_errhandler returned another handler");
    MTEST_OK(MPI_Errhandler_free(&got));
    int x = 0;
    int rc = MPI_Send(&x, 1, MPI_INT, mtest_size, 0, d);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    MTEST_CHECK(mtest_handler_calls == 1 && mtest_handler_code == rc && mtest_handler_comm == d && cls == MPI_ERR_RANK,
                "user handler: %d calls, code %d (returned %d, class %d), comm %s", mtest_handler_calls,
                mtest_handler_code, rc, cls, mtest_handler_comm == d ? "right" : "wrong");
    /* an invalid communicator goes to MPI_COMM_WORLD's handler */
    MTEST_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    mtest_handler_calls = 0;
    rc = MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
    MTEST_CHECK(mtest_handler_calls == 1 && mtest_handler_code == rc && mtest_handler_comm == MPI_COMM_WORLD,
                "invalid communicator: WORLD's handler called %d times, comm %s", mtest_handler_calls,
                mtest_handler_comm == MPI_COMM_WORLD ? "WORLD" : "not WORLD");
    MTEST_OK(MPI_Errhandler_free(&eh));
    MTEST_CHECK(eh == MPI_ERRHANDLER_NULL, "Errhandler_free did not null the handle");
    /* still attached to d and WORLD: must keep working after the free */
    mtest_handler_calls = 0;
    MPI_Send(&x, 1, MPI_INT, -5, 0, d);
    MTEST_CHECK(mtest_handler_calls == 1, "user handler after Errhandler_free: %d calls", mtest_handler_calls);
    MTEST_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MTEST_OK(MPI_Comm_free(&d));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    mtest_errors_return(MPI_COMM_WORLD);
    mtest_errors_return(MPI_COMM_SELF);
    MPI_Errhandler eh;
    MTEST_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    MTEST_CHECK(eh == MPI_ERRORS_RETURN, "Comm_get_errhandler after set: %p", (void *)eh);
    peer = (mtest_rank ^ 1) < mtest_size ? (mtest_rank ^ 1) : mtest_rank;
    ranks();
    tags();
    counts_types_buffers();
    comms();
    requests();
    classes();
    user_handler();

    /* the failed calls sent nothing, and the library still works */
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    int flag = 1;
    MPI_Status st;
    MTEST_OK(MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, &st));
    MTEST_CHECK(!flag, "a failed call delivered a message from rank %d", st.MPI_SOURCE);
    int v = mtest_rank, w = -1;
    MTEST_OK(MPI_Sendrecv(&v, 1, MPI_INT, peer, 1, &w, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MTEST_CHECK(w == peer, "ping after the errors: got %d", w);
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    return mtest_finalize();
}
