/* Probe, Iprobe and the matched-probe family (Mprobe/Improbe/Mrecv/Imrecv). */
#include "api_pt2pt.h"

static void unexp_status(const rmpi_unexp_t *u, MPI_Status *st)
{
    if (st != MPI_STATUS_IGNORE)
        rmpi_status_set(st, u->src, u->tag, MPI_SUCCESS, u->len, 0);
}

#define PROBE_CHECKS()                                                                                          \
    RMPI_API_INIT_CHECK();                                                                                      \
    rmpi_comm_t *c = rmpi_comm_get(comm);                                                                       \
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator %p", (void *)comm);                                 \
    int rc_;                                                                                                    \
    if ((rc_ = rmpi_api_check_rank(__func__, c, source, 1)) || (rc_ = rmpi_api_check_tag(__func__, c, tag, 1))) \
    return rc_

/* Messages handed out by Mprobe/Improbe and not yet received: a handle is looked up
 * before it is read. */
static rmpi_addrset_t message_live = RMPI_ADDRSET_INIT;

/* Probe: block (or poll once) until a matching message is queued. take: remove it. */
static rmpi_unexp_t *probe(rmpi_comm_t *c, int source, int tag, int block, int take)
{
    RMPI_LOCK();
    rmpi_unexp_t *u = rmpi_core_probe_find(c->ctx, source, tag);
    unsigned idle = 0;
    if (!u) {
        do {
            if (block)
                rmpi_core_wait_step(&idle);
            else
                rmpi_core_progress();
            u = rmpi_core_probe_find(c->ctx, source, tag);
        } while (!u && block);
    }
    if (u && take) {
        rmpi_core_unexp_take(u);
        rmpi_addrset_add(&message_live, u);
    }
    RMPI_UNLOCK();
    return u;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    PROBE_CHECKS();
    RMPI_CHECK(flag, c, MPI_ERR_ARG, "flag must not be NULL");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        rmpi_status_set(status == MPI_STATUS_IGNORE ? &(MPI_Status){0} : status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0, 0);
        return MPI_SUCCESS;
    }
    rmpi_unexp_t *u = probe(c, source, tag, 0, 0);
    *flag = u != NULL;
    if (u)
        unexp_status(u, status);
    return MPI_SUCCESS;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    PROBE_CHECKS();
    if (source == MPI_PROC_NULL) {
        if (status != MPI_STATUS_IGNORE)
            rmpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0, 0);
        return MPI_SUCCESS;
    }
    unexp_status(probe(c, source, tag, 1, 0), status);
    return MPI_SUCCESS;
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
    PROBE_CHECKS();
    RMPI_CHECK(flag && message, c, MPI_ERR_ARG, "flag and message must not be NULL");
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        if (status != MPI_STATUS_IGNORE)
            rmpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0, 0);
        return MPI_SUCCESS;
    }
    rmpi_unexp_t *u = probe(c, source, tag, 0, 1);
    *flag = u != NULL;
    if (u) {
        unexp_status(u, status);
        *message = (MPI_Message)u;
    }
    return MPI_SUCCESS;
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    PROBE_CHECKS();
    RMPI_CHECK(message, c, MPI_ERR_ARG, "message must not be NULL");
    if (source == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        if (status != MPI_STATUS_IGNORE)
            rmpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0, 0);
        return MPI_SUCCESS;
    }
    rmpi_unexp_t *u = probe(c, source, tag, 1, 1);
    unexp_status(u, status);
    *message = (MPI_Message)u;
    return MPI_SUCCESS;
}

static rmpi_unexp_t *message_get(MPI_Message m)
{
    if ((uintptr_t)m < 4096 || !rmpi_addrset_has(&message_live, m, rmpi_thread_multiple))
        return NULL;
    rmpi_unexp_t *u = (rmpi_unexp_t *)m;
    return u->magic == RMPI_REQ_MAGIC ? u : NULL;
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(message && request, NULL, MPI_ERR_ARG, "message and request must not be NULL");
    rmpi_dtype_t *dt;
    int rc = rmpi_api_check_buf(__func__, NULL, buf, count, datatype, &dt);
    if (rc)
        return rc;
    if (*message == MPI_MESSAGE_NO_PROC) {
        RMPI_LOCK();
        rmpi_req_t *r = rmpi_api_null_req(RMPI_REQ_RECV, &rmpi_comm_world);
        r->flags |= RMPI_RF_ACTIVE;
        RMPI_UNLOCK();
        *request = rmpi_api_req_handle(r);
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    rmpi_unexp_t *u = message_get(*message);
    RMPI_CHECK(u, NULL, MPI_ERR_REQUEST, "invalid message handle (already received?)");
    RMPI_LOCK();
    rmpi_addrset_del(&message_live, u);
    /* the message's communicator is not stored; errors go to MPI_COMM_WORLD's handler */
    rmpi_req_t *r = rmpi_api_recv_req(buf, count, dt, u->src, u->tag, &rmpi_comm_world);
    r->ctx = u->ctx;
    rmpi_core_mrecv(r, u);
    r->flags |= RMPI_RF_ACTIVE;
    RMPI_UNLOCK();
    *request = rmpi_api_req_handle(r);
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status)
{
    MPI_Request req;
    int rc = MPI_Imrecv(buf, count, datatype, message, &req);
    if (rc)
        return rc;
    return MPI_Wait(&req, status);
}
