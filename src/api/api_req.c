/* Completion bindings: Wait/Test families, Request_free, Cancel, status queries. */
#include "api_pt2pt.h"

#include "api_coll.h"

#include <limits.h>

void rmpi_api_status_empty(MPI_Status *st)
{
    if (st != MPI_STATUS_IGNORE)
        rmpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
}

void rmpi_api_req_status(const rmpi_req_t *r, MPI_Status *st)
{
    if (RMPI_UNLIKELY(r->kind == RMPI_REQ_GREQ)) { /* the query function, even for no status */
        rmpi_api_greq_status((rmpi_req_t *)r, st);
        return;
    }
    if (st == MPI_STATUS_IGNORE)
        return;
    if (r->kind == RMPI_REQ_SEND || r->kind == RMPI_REQ_COLL) {
        /* a send's or a collective's status carries only the cancel flag and the error */
        rmpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, r->st_err, 0, !!(r->flags & RMPI_RF_CANCELLED));
        return;
    }
    rmpi_status_set(st, r->st_src, r->st_tag, r->st_err, r->st_bytes, !!(r->flags & RMPI_RF_CANCELLED));
}

int rmpi_api_req_finish(MPI_Request *h, MPI_Status *st)
{
    rmpi_req_t *r = rmpi_api_req(*h);
    if (RMPI_UNLIKELY(r->kind == RMPI_REQ_GREQ)) {
        *h = MPI_REQUEST_NULL;
        return rmpi_api_greq_finish(r, st);
    }
    int err = r->st_err;
    if (r->flags & RMPI_RF_PERSISTENT) {
        if (!(r->flags & RMPI_RF_ACTIVE)) {
            rmpi_api_status_empty(st);
            return MPI_SUCCESS;
        }
        rmpi_api_req_status(r, st);
        r->flags &= (uint16_t)~RMPI_RF_ACTIVE;
        return err;
    }
    rmpi_api_req_status(r, st);
    rmpi_req_release(r);
    *h = MPI_REQUEST_NULL;
    return err;
}

/* Inactive or null handles count as complete with an empty status. */
static int req_inactive(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL)
        return 1;
    rmpi_req_t *r = rmpi_api_req(h); /* NULL: invalid, which the caller reports */
    return r && (r->flags & RMPI_RF_PERSISTENT) && !(r->flags & RMPI_RF_ACTIVE);
}

static int check_reqs(const char *func, int count, MPI_Request reqs[])
{
    if (count < 0)
        return rmpi_api_error(NULL, MPI_ERR_COUNT, func, "count %d is negative", count);
    if (count > 0 && !reqs)
        return rmpi_api_error(NULL, MPI_ERR_REQUEST, func, "array_of_requests is NULL");
    for (int i = 0; i < count; i++)
        if (reqs[i] != MPI_REQUEST_NULL && !rmpi_api_req(reqs[i]))
            return rmpi_api_error(NULL, MPI_ERR_REQUEST, func,
                                  "request %d is not a valid request (already freed or completed?)", i);
    return 0;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(request, NULL, MPI_ERR_REQUEST, "request must not be NULL");
    int rc = check_reqs(__func__, 1, request);
    if (rc)
        return rc;
    if (req_inactive(*request)) {
        rmpi_api_status_empty(status);
        return MPI_SUCCESS;
    }
    rmpi_req_t *r = rmpi_api_req(*request);
    rmpi_comm_t *c = r->ucomm;
    RMPI_LOCK();
    rmpi_core_wait(r);
    int err = rmpi_api_req_finish(request, status);
    RMPI_UNLOCK();
    if (RMPI_UNLIKELY(err))
        return rmpi_api_error(c, err, __func__, "the operation failed: %s", rmpi_api_err_name(err));
    return MPI_SUCCESS;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(request && flag, NULL, MPI_ERR_ARG, "request and flag must not be NULL");
    int rc = check_reqs(__func__, 1, request);
    if (rc)
        return rc;
    if (req_inactive(*request)) {
        *flag = 1;
        rmpi_api_status_empty(status);
        return MPI_SUCCESS;
    }
    rmpi_req_t *r = rmpi_api_req(*request);
    rmpi_comm_t *c = r->ucomm;
    RMPI_LOCK();
    if (!r->done)
        rmpi_core_progress();
    int err = 0;
    *flag = r->done;
    if (r->done)
        err = rmpi_api_req_finish(request, status);
    RMPI_UNLOCK();
    if (RMPI_UNLIKELY(err))
        return rmpi_api_error(c, err, __func__, "the operation failed: %s", rmpi_api_err_name(err));
    return MPI_SUCCESS;
}

/* Multi-completion: every status gets MPI_ERROR; any failure -> MPI_ERR_IN_STATUS. */
int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    RMPI_API_INIT_CHECK();
    int rc = check_reqs(__func__, count, array_of_requests);
    if (rc)
        return rc;
    int failed = 0;
    rmpi_comm_t *badc = NULL;
    RMPI_LOCK();
    for (int i = 0; i < count; i++) {
        MPI_Status *st = array_of_statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &array_of_statuses[i];
        if (req_inactive(array_of_requests[i])) {
            rmpi_api_status_empty(st);
            continue;
        }
        rmpi_req_t *r = rmpi_api_req(array_of_requests[i]);
        rmpi_core_wait(r);
        rmpi_comm_t *c = r->ucomm;
        int err = rmpi_api_req_finish(&array_of_requests[i], st);
        if (err && !failed)
            failed = 1, badc = c;
    }
    RMPI_UNLOCK();
    if (failed)
        return rmpi_api_error(badc, MPI_ERR_IN_STATUS, __func__, "at least one request failed; see the statuses");
    return MPI_SUCCESS;
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
    RMPI_API_INIT_CHECK();
    int rc = check_reqs(__func__, count, array_of_requests);
    if (rc)
        return rc;
    RMPI_CHECK(flag, NULL, MPI_ERR_ARG, "flag must not be NULL");
    RMPI_LOCK();
    rmpi_core_progress();
    int all = 1;
    for (int i = 0; i < count && all; i++)
        if (!req_inactive(array_of_requests[i]) && !rmpi_api_req(array_of_requests[i])->done)
            all = 0;
    RMPI_UNLOCK();
    *flag = all;
    if (!all)
        return MPI_SUCCESS;
    return MPI_Waitall(count, array_of_requests, array_of_statuses);
}

/* index of a completed active request, MPI_UNDEFINED if none active, -1 if none done */
static int find_done(int count, MPI_Request reqs[])
{
    int active = 0;
    for (int i = 0; i < count; i++) {
        if (req_inactive(reqs[i]))
            continue;
        active = 1;
        if (rmpi_api_req(reqs[i])->done)
            return i;
    }
    return active ? -1 : MPI_UNDEFINED;
}

static int finish_one(MPI_Request reqs[], int i, MPI_Status *status, const char *func)
{
    rmpi_req_t *r = rmpi_api_req(reqs[i]);
    rmpi_comm_t *c = r->ucomm;
    int err = rmpi_api_req_finish(&reqs[i], status);
    RMPI_UNLOCK();
    if (err)
        return rmpi_api_error(c, err, func, "the operation failed: %s", rmpi_api_err_name(err));
    return MPI_SUCCESS;
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    RMPI_API_INIT_CHECK();
    int rc = check_reqs(__func__, count, array_of_requests);
    if (rc)
        return rc;
    RMPI_CHECK(index, NULL, MPI_ERR_ARG, "index must not be NULL");
    RMPI_LOCK();
    unsigned idle = 0;
    int i;
    while ((i = find_done(count, array_of_requests)) == -1)
        rmpi_core_wait_step(&idle);
    *index = i;
    if (i == MPI_UNDEFINED) {
        RMPI_UNLOCK();
        rmpi_api_status_empty(status);
        return MPI_SUCCESS;
    }
    return finish_one(array_of_requests, i, status, __func__);
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
{
    RMPI_API_INIT_CHECK();
    int rc = check_reqs(__func__, count, array_of_requests);
    if (rc)
        return rc;
    RMPI_CHECK(index && flag, NULL, MPI_ERR_ARG, "index and flag must not be NULL");
    RMPI_LOCK();
    rmpi_core_progress();
    int i = find_done(count, array_of_requests);
    if (i < 0 || i == MPI_UNDEFINED) {
        RMPI_UNLOCK();
        *flag = i == MPI_UNDEFINED;
        *index = MPI_UNDEFINED;
        if (*flag)
            rmpi_api_status_empty(status);
        return MPI_SUCCESS;
    }
    *flag = 1;
    *index = i;
    return finish_one(array_of_requests, i, status, __func__);
}

static int some(int count, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[], int block,
                const char *func)
{
    RMPI_LOCK();
    unsigned idle = 0;
    int n, active;
    for (;;) {
        n = 0, active = 0;
        for (int i = 0; i < count; i++)
            if (!req_inactive(reqs[i])) {
                active = 1;
                if (rmpi_api_req(reqs[i])->done)
                    indices[n++] = i;
            }
        if (n || !active || !block)
            break;
        rmpi_core_wait_step(&idle);
    }
    if (!active) {
        RMPI_UNLOCK();
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    int failed = 0;
    rmpi_comm_t *c = NULL;
    for (int k = 0; k < n; k++) {
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[k];
        rmpi_comm_t *rc = rmpi_api_req(reqs[indices[k]])->ucomm;
        if (rmpi_api_req_finish(&reqs[indices[k]], st))
            failed = 1, c = rc;
    }
    RMPI_UNLOCK();
    *outcount = n;
    if (failed)
        return rmpi_api_error(c, MPI_ERR_IN_STATUS, func, "at least one request failed; see the statuses");
    return MPI_SUCCESS;
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[])
{
    RMPI_API_INIT_CHECK();
    int rc = check_reqs(__func__, incount, array_of_requests);
    if (rc)
        return rc;
    RMPI_CHECK(outcount && (incount == 0 || array_of_indices), NULL, MPI_ERR_ARG, "outcount/indices must not be NULL");
    return some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 1, __func__);
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[])
{
    RMPI_API_INIT_CHECK();
    int rc = check_reqs(__func__, incount, array_of_requests);
    if (rc)
        return rc;
    RMPI_CHECK(outcount && (incount == 0 || array_of_indices), NULL, MPI_ERR_ARG, "outcount/indices must not be NULL");
    RMPI_LOCK();
    rmpi_core_progress();
    RMPI_UNLOCK();
    return some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 0, __func__);
}

int MPI_Request_free(MPI_Request *request)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(request, NULL, MPI_ERR_REQUEST, "request must not be NULL");
    rmpi_req_t *r = rmpi_api_req(*request);
    RMPI_CHECK(r, NULL, MPI_ERR_REQUEST, "invalid request (already freed or completed?)");
    int rc = 0;
    RMPI_LOCK();
    int active = !r->done;
    if (active) {
        /* the operation goes on; the core releases the request when it completes */
        r->flags |= RMPI_RF_FREED;
        r->flags &= (uint16_t)~RMPI_RF_PERSISTENT;
        if (r->kind != RMPI_REQ_GREQ) /* a freed generalized request is still completed by handle */
            r->handle = 0;
    } else {
        if ((r->flags & RMPI_RF_PERSISTENT) && r->udt)
            rmpi_dtype_release(r->udt);
        if (r->kind == RMPI_REQ_COLL && r->user) /* an inactive persistent collective */
            rmpi_nbc_free(r->user);
        if (r->kind == RMPI_REQ_GREQ)
            rc = rmpi_api_greq_release(r);
        else
            rmpi_req_release(r);
    }
    RMPI_UNLOCK();
    *request = MPI_REQUEST_NULL;
    if (rc)
        return rmpi_api_error(NULL, rc, __func__, "the generalized request's free function returned error %d", rc);
    return MPI_SUCCESS;
}

int MPI_Cancel(MPI_Request *request)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(request, NULL, MPI_ERR_REQUEST, "request must not be NULL");
    rmpi_req_t *r = rmpi_api_req(*request);
    RMPI_CHECK(r, NULL, MPI_ERR_REQUEST, "invalid request");
    RMPI_CHECK(r->kind != RMPI_REQ_COLL, r->ucomm, MPI_ERR_REQUEST,
               "a collective request cannot be cancelled (MPI forbids it)");
    RMPI_LOCK();
    /* Receives still waiting for a match are cancelled. A send asks its receiver to
     * withdraw the message: it completes at the answer, cancelled if the message was still
     * unmatched (Test_cancelled says which). */
    int rc = 0;
    if (r->kind == RMPI_REQ_RECV && !r->done)
        rmpi_core_cancel_recv(r);
    else if (r->kind == RMPI_REQ_SEND)
        rmpi_core_cancel_send(r);
    else if (r->kind == RMPI_REQ_GREQ)
        rc = rmpi_api_greq_cancel(r);
    RMPI_UNLOCK();
    if (rc)
        return rmpi_api_error(r->ucomm, rc, __func__, "the generalized request's cancel function returned error %d",
                              rc);
    return MPI_SUCCESS;
}

int MPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(status && flag, NULL, MPI_ERR_ARG, "status and flag must not be NULL");
    *flag = status->MPI_internal[2] != 0;
    return MPI_SUCCESS;
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(flag, NULL, MPI_ERR_ARG, "flag must not be NULL");
    if (req_inactive(request)) {
        *flag = 1;
        rmpi_api_status_empty(status);
        return MPI_SUCCESS;
    }
    rmpi_req_t *r = rmpi_api_req(request);
    RMPI_CHECK(r, NULL, MPI_ERR_REQUEST, "invalid request");
    RMPI_LOCK();
    if (!r->done)
        rmpi_core_progress();
    *flag = r->done;
    if (r->done)
        rmpi_api_req_status(r, status);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

/* The MPI-4.1 multi-request forms of Request_get_status: like Testall/Testany/Testsome,
 * but nothing is freed or deactivated. Inactive and null requests count as complete with
 * an empty status, as for Request_get_status. */
static int get_status_multi(const char *func, int count, const MPI_Request reqs[], int *done_out)
{
    if (RMPI_UNLIKELY(rmpi_api_state != RMPI_STATE_INIT))
        return rmpi_api_not_initialized(func);
    int rc = check_reqs(func, count, (MPI_Request *)(uintptr_t)reqs);
    if (rc)
        return rc;
    RMPI_LOCK();
    rmpi_core_progress();
    int done = 0;
    for (int i = 0; i < count; i++)
        done += req_inactive(reqs[i]) || rmpi_api_req(reqs[i])->done;
    RMPI_UNLOCK();
    *done_out = done;
    return 0;
}

static void status_of(MPI_Request h, MPI_Status *st)
{
    if (req_inactive(h))
        rmpi_api_status_empty(st);
    else
        rmpi_api_req_status(rmpi_api_req(h), st);
}

int MPI_Request_get_status_all(int count, const MPI_Request array_of_requests[], int *flag,
                               MPI_Status *array_of_statuses)
{
    RMPI_CHECK(flag, NULL, MPI_ERR_ARG, "flag must not be NULL");
    int done, rc = get_status_multi(__func__, count, array_of_requests, &done);
    if (rc)
        return rc;
    *flag = done == count;
    if (*flag && array_of_statuses != MPI_STATUSES_IGNORE)
        for (int i = 0; i < count; i++)
            status_of(array_of_requests[i], &array_of_statuses[i]);
    return MPI_SUCCESS;
}

int MPI_Request_get_status_any(int count, const MPI_Request array_of_requests[], int *indx, int *flag,
                               MPI_Status *status)
{
    RMPI_CHECK(indx && flag, NULL, MPI_ERR_ARG, "indx and flag must not be NULL");
    int done, rc = get_status_multi(__func__, count, array_of_requests, &done);
    if (rc)
        return rc;
    *indx = MPI_UNDEFINED;
    *flag = 0;
    int active = 0;
    for (int i = 0; i < count; i++) {
        if (req_inactive(array_of_requests[i]))
            continue;
        active++;
        if (rmpi_api_req(array_of_requests[i])->done) {
            *indx = i;
            *flag = 1;
            rmpi_api_req_status(rmpi_api_req(array_of_requests[i]), status);
            return MPI_SUCCESS;
        }
    }
    if (!active) { /* nothing active: flag true, index undefined, empty status */
        *flag = 1;
        rmpi_api_status_empty(status);
    }
    return MPI_SUCCESS;
}

int MPI_Request_get_status_some(int incount, const MPI_Request array_of_requests[], int *outcount,
                                int array_of_indices[], MPI_Status *array_of_statuses)
{
    RMPI_CHECK(outcount, NULL, MPI_ERR_ARG, "outcount must not be NULL");
    int done, rc = get_status_multi(__func__, incount, array_of_requests, &done);
    if (rc)
        return rc;
    int active = 0, n = 0;
    for (int i = 0; i < incount; i++) {
        if (req_inactive(array_of_requests[i]))
            continue;
        active++;
        if (!rmpi_api_req(array_of_requests[i])->done)
            continue;
        array_of_indices[n] = i;
        if (array_of_statuses != MPI_STATUSES_IGNORE)
            rmpi_api_req_status(rmpi_api_req(array_of_requests[i]), &array_of_statuses[n]);
        n++;
    }
    *outcount = active ? n : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* Get_count/Get_elements and their MPI_Count twins: one body, the caller's name in the
 * messages. */
static int status_count(const char *func, const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count,
                        int elements)
{
    if (RMPI_UNLIKELY(rmpi_api_state != RMPI_STATE_INIT))
        return rmpi_api_not_initialized(func);
    if (!status || !count)
        return rmpi_api_error(NULL, MPI_ERR_ARG, func, "status and count must not be NULL");
    rmpi_dtype_t *dt = rmpi_dtype_get(datatype);
    if (!dt)
        return rmpi_api_error(NULL, MPI_ERR_TYPE, func, "invalid datatype");
    size_t bytes = rmpi_status_bytes(status);
    *count = elements ? rmpi_dtype_elements(dt, bytes) : rmpi_dtype_count(dt, bytes);
    return MPI_SUCCESS;
}

/* The int flavours: MPI_UNDEFINED when the count does not fit. */
static int status_count_int(const char *func, const MPI_Status *status, MPI_Datatype datatype, int *count, int elements)
{
    MPI_Count n = 0;
    int rc = status_count(func, status, datatype, count ? &n : NULL, elements);
    if (rc == MPI_SUCCESS)
        *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return rc;
}

int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    return status_count_int(__func__, status, datatype, count, 0);
}

int MPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return status_count(__func__, status, datatype, count, 0);
}

int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    return status_count_int(__func__, status, datatype, count, 1);
}

int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return status_count(__func__, status, datatype, count, 1);
}

int MPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return status_count(__func__, status, datatype, count, 1);
}

int MPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    RMPI_CHECK(status, NULL, MPI_ERR_ARG, "status must not be NULL");
    status->MPI_internal[2] = flag;
    return MPI_SUCCESS;
}

static int set_elements(const char *func, MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    if (!status || count < 0)
        return rmpi_api_error(NULL, MPI_ERR_ARG, func, "status must not be NULL and count non-negative");
    rmpi_dtype_t *dt = rmpi_dtype_get(datatype);
    if (!dt)
        return rmpi_api_error(NULL, MPI_ERR_TYPE, func, "invalid datatype");
    size_t bytes = rmpi_dtype_elements_bytes(dt, count);
    rmpi_status_set(status, status->MPI_SOURCE, status->MPI_TAG, status->MPI_ERROR, bytes, status->MPI_internal[2]);
    return MPI_SUCCESS;
}

int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    return set_elements(__func__, status, datatype, count);
}

int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements(__func__, status, datatype, count);
}

int MPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements(__func__, status, datatype, count);
}

void rmpi_api_coll_request(rmpi_comm_t *c, rmpi_nbc_t *s, MPI_Request *request, int persistent)
{
    rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_COLL);
    r->ucomm = c;
    r->user = s;
    if (persistent) {
        r->flags |= RMPI_RF_PERSISTENT;
        r->done = 1;
    } else {
        rmpi_nbc_start(s, r, 0);
    }
    *request = rmpi_api_req_handle(r);
}
