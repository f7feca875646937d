/* Generalized requests (MPI_Grequest_start/complete): requests the application completes
 * itself. The request is an ordinary core request of kind RMPI_REQ_GREQ, so every Wait,
 * Test and Request_get_status form handles it; its status comes from the user's query
 * function, called each time a status is asked for, and the free function runs once, when
 * the request is both complete and freed (by a wait, a test or Request_free). The library
 * uses the same requests for its own operations that finish outside the core (Iflush). */
#include "api_pt2pt.h"

#include <stdlib.h>

typedef struct greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
} greq_t;

static int greq_free(rmpi_req_t *r)
{
    greq_t *g = r->user;
    r->user = NULL;
    int rc = g && g->free_fn ? g->free_fn(g->extra) : MPI_SUCCESS;
    free(g);
    return rc;
}

/* Freed before it completed: the free function runs at completion, then the core releases
 * the request. */
static void greq_on_complete(rmpi_req_t *r)
{
    if (r->flags & RMPI_RF_FREED)
        greq_free(r);
}

rmpi_req_t *rmpi_api_greq_new(MPI_Grequest_query_function *query, MPI_Grequest_free_function *free_fn,
                              MPI_Grequest_cancel_function *cancel, void *extra, rmpi_comm_t *c)
{
    greq_t *g = rmpi_xcalloc(1, sizeof *g);
    g->query = query;
    g->free_fn = free_fn;
    g->cancel = cancel;
    g->extra = extra;
    rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_GREQ);
    r->user = g;
    r->ucomm = c;
    r->done = 0;
    r->st_err = 0;
    r->on_complete = greq_on_complete;
    return r;
}

int rmpi_api_greq_status(rmpi_req_t *r, MPI_Status *st)
{
    MPI_Status local;
    if (st == MPI_STATUS_IGNORE)
        st = &local;
    /* what a query function leaves unset reads as an empty status */
    rmpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
    greq_t *g = r->user;
    r->st_err = g && g->query ? g->query(g->extra, st) : MPI_SUCCESS;
    st->MPI_ERROR = r->st_err; /* as for every request: Waitall reports it there */
    return r->st_err;
}

int rmpi_api_greq_finish(rmpi_req_t *r, MPI_Status *st)
{
    int rc = rmpi_api_greq_status(r, st);
    int frc = greq_free(r);
    rmpi_req_release(r);
    return rc ? rc : frc;
}

int rmpi_api_greq_release(rmpi_req_t *r)
{
    int rc = greq_free(r);
    rmpi_req_release(r);
    return rc;
}

int rmpi_api_greq_cancel(rmpi_req_t *r)
{
    greq_t *g = r->user;
    return g && g->cancel ? g->cancel(g->extra, r->done) : MPI_SUCCESS;
}

int MPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                       MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(request, NULL, MPI_ERR_ARG, "request must not be NULL");
    RMPI_LOCK();
    rmpi_req_t *r = rmpi_api_greq_new(query_fn, free_fn, cancel_fn, extra_state, NULL);
    RMPI_UNLOCK();
    *request = rmpi_api_req_handle(r);
    return MPI_SUCCESS;
}

int MPI_Grequest_complete(MPI_Request request)
{
    RMPI_API_INIT_CHECK();
    rmpi_req_t *r = rmpi_api_req(request);
    RMPI_CHECK(r && r->kind == RMPI_REQ_GREQ, NULL, MPI_ERR_REQUEST,
               "not a generalized request (from MPI_Grequest_start), or already freed");
    RMPI_CHECK(!r->done, NULL, MPI_ERR_REQUEST, "the generalized request is already complete");
    RMPI_LOCK();
    rmpi_req_complete(r);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}
