/* Point-to-point bindings: the send modes, receives, persistent requests. */
#include "api_pt2pt.h"

#include "../coll/coll.h"

#include <stdlib.h>
#include <string.h>

int rmpi_api_count_error(const char *func, rmpi_comm_t *c, MPI_Count count, const rmpi_dtype_t *dt)
{
    return rmpi_api_error(c, MPI_ERR_COUNT, func,
                          "%lld elements of a datatype of %zu bytes (extent %lld) do not fit in the address space",
                          (long long)count, dt->size, (long long)dt->extent);
}

/* A NULL buffer is an error only where data would be read or written through it (an
 * absolute-address type has true_lb > 0). Inline in both checks: the small-message path
 * runs rmpi_api_check_buf twice per ping-pong, and a call here cost ~13 instructions each. */
static inline int buf_null(const void *buf, MPI_Count count, const rmpi_dtype_t *dt)
{
    return !buf && count > 0 && dt->size > 0 && !(dt->true_lb > 0);
}

static __attribute__((noinline, cold)) int buf_error(const char *func, rmpi_comm_t *c, MPI_Count count)
{
    return rmpi_api_error(c, MPI_ERR_BUFFER, func, "buffer is NULL with count %lld", (long long)count);
}

int rmpi_api_check_buf(const char *func, rmpi_comm_t *c, const void *buf, MPI_Count count, MPI_Datatype type,
                       rmpi_dtype_t **dtp)
{
    if (RMPI_UNLIKELY(count < 0))
        return rmpi_api_error(c, MPI_ERR_COUNT, func, "count %lld is negative", (long long)count);
    rmpi_dtype_t *dt = rmpi_dtype_get(type);
    if (RMPI_UNLIKELY(!dt))
        return rmpi_api_error(c, MPI_ERR_TYPE, func, "invalid datatype %p", (void *)type);
    if (RMPI_UNLIKELY(!dt->committed))
        return rmpi_api_error(c, MPI_ERR_TYPE, func, "datatype %p is not committed (call MPI_Type_commit)",
                              (void *)type);
    if (RMPI_UNLIKELY(!rmpi_dtype_count_ok(dt, count)))
        return rmpi_api_count_error(func, c, count, dt);
    if (RMPI_UNLIKELY(buf_null(buf, count, dt)))
        return buf_error(func, c, count);
    *dtp = dt;
    return 0;
}

int rmpi_api_check_buf_of(const char *func, rmpi_comm_t *c, const void *buf, MPI_Count count, const rmpi_dtype_t *dt)
{
    return RMPI_UNLIKELY(buf_null(buf, count, dt)) ? buf_error(func, c, count) : 0;
}

int rmpi_api_check_rank(const char *func, rmpi_comm_t *c, int rank, int any_ok)
{
    /* the remote group's size on an intercommunicator, the size otherwise: one field read */
    if (RMPI_LIKELY(rank >= 0 && rank < rmpi_comm_remote_size(c)) || rank == MPI_PROC_NULL ||
        (any_ok && rank == MPI_ANY_SOURCE))
        return 0;
    return rmpi_api_error(c, MPI_ERR_RANK, func, "rank %d is invalid in %s, which has %d rank(s)%s", rank,
                          c->name[0] ? c->name : "the communicator", c->rsize, c->inter ? " in its remote group" : "");
}

int rmpi_api_check_tag(const char *func, rmpi_comm_t *c, int tag, int any_ok)
{
    if (RMPI_LIKELY(tag >= 0 && tag <= RMPI_TAG_UB) || (any_ok && tag == MPI_ANY_TAG))
        return 0;
    return rmpi_api_error(c, MPI_ERR_TAG, func, "tag %d is invalid (valid: 0..%d%s)", tag, RMPI_TAG_UB,
                          any_ok ? " or MPI_ANY_TAG" : "");
}

/* Completion of a request on a user-defined type: the reference it held goes (a
 * persistent request keeps it until freed). */
static void api_req_done(rmpi_req_t *r)
{
    rmpi_dtype_t *dt = r->udt;
    if (!(r->flags & RMPI_RF_PERSISTENT) && dt) {
        rmpi_dtype_release(dt);
        r->udt = NULL;
    }
}

/* The user's data as the core takes it: one byte range when the type lays count elements
 * out contiguously, else the (buf, count, type) triple as it is (RMPI_RF_TYPED), which
 * the core sends as segments, pieces or a packed copy and receives by unpacking. */
static rmpi_req_t *init_req(int kind, void *buf, int count, rmpi_dtype_t *dt, rmpi_comm_t *c)
{
    rmpi_req_t *r = rmpi_req_alloc(kind);
    r->user = buf;
    r->ucount = (size_t)count;
    r->udt = dt;
    r->ucomm = c;
    r->ctx = c->ctx;
    r->len = (size_t)count * dt->size;
    if (RMPI_LIKELY(rmpi_dtype_is_contig(dt, (size_t)count)))
        r->buf = rmpi_dtype_contig_ptr(buf, dt);
    else
        r->flags |= RMPI_RF_TYPED;
    if (!dt->predefined) {
        rmpi_dtype_retain(dt);
        r->on_complete = api_req_done;
    }
    return r;
}

rmpi_req_t *rmpi_api_null_req(int kind, rmpi_comm_t *c)
{
    rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_NULLOP);
    r->ucomm = c;
    r->st_src = MPI_PROC_NULL;
    r->st_tag = MPI_ANY_TAG;
    r->done = 1;
    (void)kind;
    return r;
}

MPI_Request rmpi_api_done_req(rmpi_comm_t *c)
{
    RMPI_LOCK();
    rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_NULLOP);
    r->ucomm = c;
    r->st_src = MPI_ANY_SOURCE;
    r->st_tag = MPI_ANY_TAG;
    r->done = 1;
    r->flags |= RMPI_RF_ACTIVE;
    RMPI_UNLOCK();
    return rmpi_api_req_handle(r);
}

rmpi_req_t *rmpi_api_send_req(const void *buf, int count, rmpi_dtype_t *dt, int dest, int tag, rmpi_comm_t *c, int mode)
{
    rmpi_req_t *r = init_req(RMPI_REQ_SEND, (void *)buf, count, dt, c);
    r->rank = rmpi_comm_world_rank(c, dest);
    r->tag = tag;
    r->src = c->rank;
    r->mode = (uint8_t)mode;
    return r;
}

rmpi_req_t *rmpi_api_recv_req(void *buf, int count, rmpi_dtype_t *dt, int src, int tag, rmpi_comm_t *c)
{
    rmpi_req_t *r = init_req(RMPI_REQ_RECV, buf, count, dt, c);
    r->rank = src;
    r->tag = tag;
    return r;
}

#define SEND_CHECKS(func, c, buf, count, type, dest, tag, dt)                                                          \
    RMPI_API_INIT_CHECK();                                                                                             \
    rmpi_comm_t *c = rmpi_comm_get(comm);                                                                              \
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator %p", (void *)comm);                                        \
    rmpi_dtype_t *dt;                                                                                                  \
    int rc_;                                                                                                           \
    if ((rc_ = rmpi_api_check_buf(func, c, buf, count, type, &dt)) || (rc_ = rmpi_api_check_rank(func, c, dest, 0)) || \
        (rc_ = rmpi_api_check_tag(func, c, tag, 0)))                                                                   \
    return rc_

#define RECV_CHECKS(func, c, buf, count, type, src, tag, dt)                                                          \
    RMPI_API_INIT_CHECK();                                                                                            \
    rmpi_comm_t *c = rmpi_comm_get(comm);                                                                             \
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator %p", (void *)comm);                                       \
    rmpi_dtype_t *dt;                                                                                                 \
    int rc_;                                                                                                          \
    if ((rc_ = rmpi_api_check_buf(func, c, buf, count, type, &dt)) || (rc_ = rmpi_api_check_rank(func, c, src, 1)) || \
        (rc_ = rmpi_api_check_tag(func, c, tag, 1)))                                                                  \
    return rc_

/* Blocking send of any mode: post, wait, free. */
static int send_blocking(const char *func, const void *buf, int count, rmpi_dtype_t *dt, int dest, int tag,
                         rmpi_comm_t *c, int mode)
{
    if (RMPI_UNLIKELY(dest == MPI_PROC_NULL))
        return MPI_SUCCESS;
    RMPI_LOCK();
    /* the small-message path: no request at all */
    if (RMPI_LIKELY(mode == RMPI_MODE_STD && rmpi_dtype_is_contig(dt, (size_t)count)) &&
        rmpi_core_send_eager(rmpi_comm_world_rank(c, dest), c->ctx, c->rank, tag, rmpi_dtype_contig_ptr(buf, dt),
                             (size_t)count * dt->size)) {
        rmpi_core_throttle();
        RMPI_UNLOCK();
        return MPI_SUCCESS;
    }
    rmpi_req_t *r = rmpi_api_send_req(buf, count, dt, dest, tag, c, mode);
    rmpi_core_isend(r);
    rmpi_core_wait(r);
    rmpi_req_release(r);
    rmpi_core_throttle();
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

static int send_nonblocking(const void *buf, int count, rmpi_dtype_t *dt, int dest, int tag, rmpi_comm_t *c, int mode,
                            MPI_Request *request)
{
    RMPI_LOCK();
    rmpi_req_t *r;
    if (RMPI_UNLIKELY(dest == MPI_PROC_NULL)) {
        r = rmpi_api_null_req(RMPI_REQ_SEND, c);
    } else {
        r = rmpi_api_send_req(buf, count, dt, dest, tag, c, mode);
        rmpi_core_isend(r);
    }
    r->flags |= RMPI_RF_ACTIVE;
    RMPI_UNLOCK();
    *request = rmpi_api_req_handle(r);
    return MPI_SUCCESS;
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    SEND_CHECKS(__func__, c, buf, count, datatype, dest, tag, dt);
    return send_blocking(__func__, buf, count, dt, dest, tag, c, RMPI_MODE_STD);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    SEND_CHECKS(__func__, c, buf, count, datatype, dest, tag, dt);
    return send_blocking(__func__, buf, count, dt, dest, tag, c, RMPI_MODE_SYNC);
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    SEND_CHECKS(__func__, c, buf, count, datatype, dest, tag, dt);
    return send_blocking(__func__, buf, count, dt, dest, tag, c, RMPI_MODE_READY);
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    SEND_CHECKS(__func__, c, buf, count, datatype, dest, tag, dt);
    return rmpi_api_bsend(__func__, buf, count, dt, dest, tag, c);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
    SEND_CHECKS(__func__, c, buf, count, datatype, dest, tag, dt);
    RMPI_CHECK(request, c, MPI_ERR_ARG, "request must not be NULL");
    return send_nonblocking(buf, count, dt, dest, tag, c, RMPI_MODE_STD, request);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    SEND_CHECKS(__func__, c, buf, count, datatype, dest, tag, dt);
    RMPI_CHECK(request, c, MPI_ERR_ARG, "request must not be NULL");
    return send_nonblocking(buf, count, dt, dest, tag, c, RMPI_MODE_SYNC, request);
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    SEND_CHECKS(__func__, c, buf, count, datatype, dest, tag, dt);
    RMPI_CHECK(request, c, MPI_ERR_ARG, "request must not be NULL");
    return send_nonblocking(buf, count, dt, dest, tag, c, RMPI_MODE_READY, request);
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    SEND_CHECKS(__func__, c, buf, count, datatype, dest, tag, dt);
    RMPI_CHECK(request, c, MPI_ERR_ARG, "request must not be NULL");
    /* the data is copied into the attached buffer before return, so the request is complete */
    int rc = rmpi_api_bsend(__func__, buf, count, dt, dest, tag, c);
    if (rc)
        return rc;
    *request = rmpi_api_done_req(c);
    return MPI_SUCCESS;
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    RECV_CHECKS(__func__, c, buf, count, datatype, source, tag, dt);
    if (RMPI_UNLIKELY(source == MPI_PROC_NULL)) {
        if (status != MPI_STATUS_IGNORE)
            rmpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
        return MPI_SUCCESS;
    }
    RMPI_LOCK();
    rmpi_req_t stack_req, *r = &stack_req;
    int contig = rmpi_dtype_is_contig(dt, (size_t)count);
    if (RMPI_LIKELY(contig)) {
        /* blocking receive of contiguous data: a request on the stack, nothing to set up */
        rmpi_req_init_stack(r, RMPI_REQ_RECV);
        r->buf = rmpi_dtype_contig_ptr(buf, dt);
        r->len = (size_t)count * dt->size;
        r->ctx = c->ctx, r->rank = source, r->tag = tag;
    } else {
        r = rmpi_api_recv_req(buf, count, dt, source, tag, c);
    }
    rmpi_core_irecv(r);
    rmpi_core_wait(r);
    rmpi_api_req_status(r, status);
    int err = r->st_err, src = r->st_src, tg = r->st_tag;
    size_t msglen = r->st_msglen;
    if (!contig)
        rmpi_req_release(r);
    RMPI_UNLOCK();
    if (RMPI_UNLIKELY(err))
        return RMPI_ERROR(c, err,
                          "message from rank %d tag %d was truncated: %zu bytes sent, the receive buffer "
                          "holds %zu (the first %zu were delivered)",
                          src, tg, msglen, (size_t)count * dt->size, (size_t)count * dt->size);
    return MPI_SUCCESS;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    RECV_CHECKS(__func__, c, buf, count, datatype, source, tag, dt);
    RMPI_CHECK(request, c, MPI_ERR_ARG, "request must not be NULL");
    RMPI_LOCK();
    rmpi_req_t *r;
    if (RMPI_UNLIKELY(source == MPI_PROC_NULL)) {
        r = rmpi_api_null_req(RMPI_REQ_RECV, c);
    } else {
        r = rmpi_api_recv_req(buf, count, dt, source, tag, c);
        rmpi_core_irecv(r);
    }
    r->flags |= RMPI_RF_ACTIVE;
    RMPI_UNLOCK();
    *request = rmpi_api_req_handle(r);
    return MPI_SUCCESS;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    RECV_CHECKS(__func__, c, recvbuf, recvcount, recvtype, source, recvtag, rdt);
    rmpi_dtype_t *sdt;
    if ((rc_ = rmpi_api_check_buf(__func__, c, sendbuf, sendcount, sendtype, &sdt)) ||
        (rc_ = rmpi_api_check_rank(__func__, c, dest, 0)) || (rc_ = rmpi_api_check_tag(__func__, c, sendtag, 0)))
        return rc_;
    MPI_Request reqs[2];
    MPI_Status sts[2];
    MPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &reqs[0]);
    MPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &reqs[1]);
    int rc = MPI_Waitall(2, reqs, sts);
    if (status != MPI_STATUS_IGNORE)
        *status = sts[0];
    if (rc == MPI_ERR_IN_STATUS)
        rc = sts[0].MPI_ERROR;
    return rc;
}

/* MPI-4 non-blocking sendrecv: the point-to-point schedule coll builds (rmpi_nbc_sendrecv
 * decides how each side's data travels); the request is a receive with the receive's status. */
static void isendrecv_sched(rmpi_comm_t *c, const void *sbuf, int scount, rmpi_dtype_t *sdt, int dest, int sendtag,
                            void *rbuf, int rcount, rmpi_dtype_t *rdt, int source, int recvtag, int replace,
                            MPI_Request *request)
{
    rmpi_req_t *r = rmpi_nbc_sendrecv(c, sbuf, (size_t)scount, sdt, dest, sendtag, rbuf, (size_t)rcount, rdt, source,
                                      recvtag, replace);
    *request = rmpi_api_req_handle(r);
}

int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    RECV_CHECKS(__func__, c, recvbuf, recvcount, recvtype, source, recvtag, rdt);
    rmpi_dtype_t *sdt;
    if ((rc_ = rmpi_api_check_buf(__func__, c, sendbuf, sendcount, sendtype, &sdt)) ||
        (rc_ = rmpi_api_check_rank(__func__, c, dest, 0)) || (rc_ = rmpi_api_check_tag(__func__, c, sendtag, 0)))
        return rc_;
    RMPI_CHECK(request, c, MPI_ERR_ARG, "request must not be NULL");
    RMPI_LOCK();
    isendrecv_sched(c, sendbuf, sendcount, sdt, dest, sendtag, recvbuf, recvcount, rdt, source, recvtag, 0, request);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

/* Argument checks shared by Sendrecv_replace and Isendrecv_replace (messages name func). */
static int replace_checks(const char *func, rmpi_comm_t *c, void *buf, int count, MPI_Datatype datatype, int dest,
                          int sendtag, int source, int recvtag, rmpi_dtype_t **dt)
{
    int rc;
    if ((rc = rmpi_api_check_buf(func, c, buf, count, datatype, dt)) || (rc = rmpi_api_check_rank(func, c, dest, 0)) ||
        (rc = rmpi_api_check_tag(func, c, sendtag, 0)) || (rc = rmpi_api_check_rank(func, c, source, 1)) ||
        (rc = rmpi_api_check_tag(func, c, recvtag, 1)))
        return rc;
    return 0;
}

/* Both replace forms: checks, then the schedule (its request in *request). */
static int replace_start(const char *func, void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                         int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    if (RMPI_UNLIKELY(rmpi_api_state != RMPI_STATE_INIT))
        return rmpi_api_not_initialized(func);
    rmpi_comm_t *c = rmpi_comm_get(comm);
    if (!c)
        return rmpi_api_error(NULL, MPI_ERR_COMM, func, "invalid communicator %p", (void *)comm);
    rmpi_dtype_t *dt;
    int rc = replace_checks(func, c, buf, count, datatype, dest, sendtag, source, recvtag, &dt);
    if (rc)
        return rc;
    if (!request)
        return rmpi_api_error(c, MPI_ERR_ARG, func, "request must not be NULL");
    RMPI_LOCK();
    isendrecv_sched(c, buf, count, dt, dest, sendtag, buf, count, dt, source, recvtag, 1, request);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                          MPI_Comm comm, MPI_Request *request)
{
    return replace_start(__func__, buf, count, datatype, dest, sendtag, source, recvtag, comm, request);
}

/* The blocking form is the non-blocking one and a wait: the schedule sends from a packed
 * copy, so the receive can land in buf while the send is in flight. */
int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status *status)
{
    MPI_Request req;
    int rc = replace_start(__func__, buf, count, datatype, dest, sendtag, source, recvtag, comm, &req);
    return rc ? rc : MPI_Wait(&req, status);
}

/* ---- persistent requests ---- */

static int persistent(rmpi_req_t *r, MPI_Request *request)
{
    r->flags |= RMPI_RF_PERSISTENT;
    r->done = 1;
    *request = rmpi_api_req_handle(r);
    return MPI_SUCCESS;
}

#define SEND_INIT(name, mode)                                                                          \
    int name(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,      \
             MPI_Request *request)                                                                     \
    {                                                                                                  \
        SEND_CHECKS(__func__, c, buf, count, datatype, dest, tag, dt);                                 \
        RMPI_CHECK(request, c, MPI_ERR_ARG, "request must not be NULL");                               \
        RMPI_LOCK();                                                                                   \
        rmpi_req_t *r = dest == MPI_PROC_NULL ? rmpi_api_null_req(RMPI_REQ_SEND, c)                    \
                                              : rmpi_api_send_req(buf, count, dt, dest, tag, c, mode); \
        RMPI_UNLOCK();                                                                                 \
        return persistent(r, request);                                                                 \
    }
SEND_INIT(MPI_Send_init, RMPI_MODE_STD)
SEND_INIT(MPI_Ssend_init, RMPI_MODE_SYNC)
SEND_INIT(MPI_Rsend_init, RMPI_MODE_READY)

/* Persistent buffered send: every MPI_Start copies the data into the attached buffer and
 * sends it (rmpi_api_bsend), so the request is complete when Start returns. The request
 * keeps the arguments: buf in user, the count in ucount, the type in udt (held), the
 * destination's communicator rank in rank, the tag, the communicator in ucomm. */
int MPI_Bsend_init(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    SEND_CHECKS(__func__, c, buf, count, datatype, dest, tag, dt);
    RMPI_CHECK(request, c, MPI_ERR_ARG, "request must not be NULL");
    RMPI_LOCK();
    rmpi_req_t *r = rmpi_api_null_req(RMPI_REQ_SEND, c);
    r->mode = RMPI_MODE_BUFFERED;
    r->user = (void *)(uintptr_t)buf;
    r->ucount = (size_t)count;
    r->udt = dt;
    rmpi_dtype_retain(dt);
    r->rank = dest;
    r->tag = tag;
    RMPI_UNLOCK();
    return persistent(r, request);
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    RECV_CHECKS(__func__, c, buf, count, datatype, source, tag, dt);
    RMPI_CHECK(request, c, MPI_ERR_ARG, "request must not be NULL");
    RMPI_LOCK();
    rmpi_req_t *r = source == MPI_PROC_NULL ? rmpi_api_null_req(RMPI_REQ_RECV, c)
                                            : rmpi_api_recv_req(buf, count, dt, source, tag, c);
    RMPI_UNLOCK();
    return persistent(r, request);
}

int MPI_Start(MPI_Request *request)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(request, NULL, MPI_ERR_REQUEST, "request must not be NULL");
    rmpi_req_t *r = rmpi_api_req(*request);
    RMPI_CHECK(r && (r->flags & RMPI_RF_PERSISTENT), NULL, MPI_ERR_REQUEST, "not a persistent request");
    RMPI_CHECK(!(r->flags & RMPI_RF_ACTIVE), r->ucomm, MPI_ERR_REQUEST, "the request is already active");
    RMPI_LOCK();
    r->flags |= RMPI_RF_ACTIVE;
    if (r->kind == RMPI_REQ_SEND || r->kind == RMPI_REQ_RECV) { /* the status of the last run goes */
        r->flags &= (uint16_t)~RMPI_RF_CANCELLED;
        r->st_err = 0;
    }
    if (RMPI_UNLIKELY(r->flags & RMPI_RF_PARTITIONED)) {
        rmpi_core_part_start(r);
    } else if (r->kind == RMPI_REQ_NULLOP && r->mode == RMPI_MODE_BUFFERED) { /* Bsend_init */
        RMPI_UNLOCK();
        r->st_err = rmpi_api_bsend("MPI_Start", r->user, (int)r->ucount, r->udt, r->rank, r->tag, r->ucomm);
        r->done = 1;
        return r->st_err;
    } else if (r->kind == RMPI_REQ_NULLOP) {
        r->done = 1;
    } else if (r->kind == RMPI_REQ_COLL) {
        rmpi_nbc_start(r->user, r, 1);
    } else {
        if (r->udt && !((rmpi_dtype_t *)r->udt)->predefined)
            r->on_complete = api_req_done;
        if (r->kind == RMPI_REQ_SEND)
            rmpi_core_isend(r);
        else
            rmpi_core_irecv(r);
    }
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Startall(int count, MPI_Request array_of_requests[])
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(count >= 0, NULL, MPI_ERR_COUNT, "count %d is negative", count);
    for (int i = 0; i < count; i++) {
        int rc = MPI_Start(&array_of_requests[i]);
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}
