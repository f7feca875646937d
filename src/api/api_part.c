/* Partitioned point-to-point (MPI 4.0: Psend_init, Precv_init, Pready*, Parrived).
 *
 * A partitioned operation is a persistent send or receive of the whole buffer (partitions
 * x count elements) with a little state in req->ext. MPI_Start arms it; the send goes out
 * as one message once every partition is marked ready, the receive is posted at Start, and
 * Parrived reports a partition arrived when the whole message has (every partition has
 * then arrived: correct, if coarser than necessary). The messages travel on the
 * communicator's collective context with tags of their own (part_tag), so a partitioned
 * send matches only a partitioned receive, never an ordinary one or a collective's. */
#include "api_pt2pt.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct part {
    int send;        /* 1: Psend_init, 0: Precv_init */
    int n;           /* partitions */
    int nready;      /* send: partitions marked ready since Start */
    unsigned char ready[]; /* send: one flag per partition */
} part_t;

/* User tags 0..TAG_UB onto negative tags (collective traffic uses non-negative ones and
 * MPI_ANY_TAG is -2): INT_MIN + tag, except that the two highest tags share -1. */
static int part_tag(int tag)
{
    return tag >= INT_MAX - 1 ? -1 : INT_MIN + tag;
}

static int part_init(const char *func, void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                     int peer, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request, int send)
{
    RMPI_API_INIT_CHECK();
    rmpi_comm_t *c = rmpi_comm_get(comm);
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator %p", (void *)comm);
    RMPI_CHECK(partitions >= 1, c, MPI_ERR_ARG, "partitions is %d; it must be at least 1", partitions);
    RMPI_CHECK(count >= 0 && count <= INT_MAX / partitions, c, MPI_ERR_COUNT,
               "%d partitions of %lld elements: negative, or more than INT_MAX elements in all", partitions,
               (long long)count);
    RMPI_CHECK(info == MPI_INFO_NULL || rmpi_info_get(info), c, MPI_ERR_INFO, "invalid info object");
    RMPI_CHECK(request, c, MPI_ERR_ARG, "request must not be NULL");
    RMPI_CHECK(peer != MPI_ANY_SOURCE, c, MPI_ERR_RANK, "MPI_ANY_SOURCE is not allowed in partitioned communication");
    RMPI_CHECK(tag != MPI_ANY_TAG, c, MPI_ERR_TAG, "MPI_ANY_TAG is not allowed in partitioned communication");
    int total = partitions * (int)count;
    rmpi_dtype_t *dt;
    int rc;
    if ((rc = rmpi_api_check_buf(func, c, buf, total, datatype, &dt)) || (rc = rmpi_api_check_rank(func, c, peer, 0)) ||
        (rc = rmpi_api_check_tag(func, c, tag, 0)))
        return rc;
    RMPI_LOCK();
    rmpi_req_t *r = NULL;
    if (peer == MPI_PROC_NULL) {
        r = rmpi_api_null_req(send ? RMPI_REQ_SEND : RMPI_REQ_RECV, c);
    } else if (send) {
        r = rmpi_api_send_req(buf, total, dt, peer, tag, c, RMPI_MODE_STD);
    } else {
        r = rmpi_api_recv_req(buf, total, dt, peer, tag, c);
    }
    r->ctx = c->ctx + 1;
    r->tag = part_tag(tag);
    part_t *p = rmpi_xcalloc(1, sizeof *p + (size_t)partitions);
    p->send = send;
    p->n = partitions;
    r->ext = p;
    r->flags |= RMPI_RF_PERSISTENT | RMPI_RF_PARTITIONED;
    r->done = 1;
    RMPI_UNLOCK();
    *request = rmpi_api_req_handle(r);
    return MPI_SUCCESS;
}

int MPI_Psend_init_c(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return part_init(__func__, (void *)(uintptr_t)buf, partitions, count, datatype, dest, tag, comm, info, request, 1);
}

int MPI_Psend_init(const void *buf, int partitions, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return part_init(__func__, (void *)(uintptr_t)buf, partitions, count, datatype, dest, tag, comm, info, request, 1);
}

int MPI_Precv_init_c(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return part_init(__func__, buf, partitions, count, datatype, source, tag, comm, info, request, 0);
}

int MPI_Precv_init(void *buf, int partitions, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Info info, MPI_Request *request)
{
    return part_init(__func__, buf, partitions, count, datatype, source, tag, comm, info, request, 0);
}

/* MPI_Start of a partitioned request (lock held, request marked active): a receive is
 * posted now, a send waits for its partitions. */
void rmpi_api_part_start(rmpi_req_t *r)
{
    part_t *p = r->ext;
    if (p->send) {
        memset(p->ready, 0, (size_t)p->n);
        p->nready = 0;
        r->done = 0;
        return;
    }
    if (r->kind == RMPI_REQ_NULLOP) {
        r->done = 1;
        return;
    }
    rmpi_api_arm(r);
    rmpi_core_irecv(r);
}

/* The partitioned send request behind a handle, or an error code. */
static int send_part(const char *func, MPI_Request request, rmpi_req_t **out)
{
    rmpi_req_t *r = rmpi_api_req(request);
    if (!r || !(r->flags & RMPI_RF_PARTITIONED) || !((part_t *)r->ext)->send)
        return rmpi_api_error(NULL, MPI_ERR_REQUEST, func, "not a partitioned send request (MPI_Psend_init)");
    if (!(r->flags & RMPI_RF_ACTIVE))
        return rmpi_api_error(r->ucomm, MPI_ERR_REQUEST, func, "the request is not active: call MPI_Start first");
    *out = r;
    return MPI_SUCCESS;
}

/* Marks partitions [lo, hi] (or the list) ready; the last one sends the message. */
static int ready(const char *func, rmpi_req_t *r, int lo, int hi, const int *list)
{
    part_t *p = r->ext;
    int count = list ? lo : hi - lo + 1;
    for (int k = 0; k < count; k++) {
        int i = list ? list[k] : lo + k;
        if (i < 0 || i >= p->n)
            return rmpi_api_error(r->ucomm, MPI_ERR_ARG, func, "partition %d is outside 0..%d", i, p->n - 1);
        if (p->ready[i])
            return rmpi_api_error(r->ucomm, MPI_ERR_ARG, func,
                                  "partition %d is already ready since the last MPI_Start", i);
    }
    RMPI_LOCK();
    for (int k = 0; k < count; k++) {
        p->ready[list ? list[k] : lo + k] = 1;
        p->nready++;
    }
    if (p->nready == p->n) {
        if (r->kind == RMPI_REQ_NULLOP)
            r->done = 1;
        else
            rmpi_api_post_send(r);
    }
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Pready(int partition, MPI_Request request)
{
    RMPI_API_INIT_CHECK();
    rmpi_req_t *r = NULL;
    int rc = send_part(__func__, request, &r);
    return rc ? rc : ready(__func__, r, partition, partition, NULL);
}

int MPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    RMPI_API_INIT_CHECK();
    rmpi_req_t *r = NULL;
    int rc = send_part(__func__, request, &r);
    if (rc)
        return rc;
    RMPI_CHECK(partition_low <= partition_high, r->ucomm, MPI_ERR_ARG, "partition_low %d is above partition_high %d",
               partition_low, partition_high);
    return ready(__func__, r, partition_low, partition_high, NULL);
}

int MPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    RMPI_API_INIT_CHECK();
    rmpi_req_t *r = NULL;
    int rc = send_part(__func__, request, &r);
    if (rc)
        return rc;
    RMPI_CHECK(length >= 0 && (length == 0 || array_of_partitions), r->ucomm, MPI_ERR_ARG,
               "length %d is negative or array_of_partitions is NULL", length);
    return ready(__func__, r, length, 0, array_of_partitions);
}

int MPI_Parrived(MPI_Request request, int partition, int *flag)
{
    RMPI_API_INIT_CHECK();
    rmpi_req_t *r = rmpi_api_req(request);
    RMPI_CHECK(r && (r->flags & RMPI_RF_PARTITIONED) && !((part_t *)r->ext)->send, NULL, MPI_ERR_REQUEST,
               "not a partitioned receive request (MPI_Precv_init)");
    part_t *p = r->ext;
    RMPI_CHECK(partition >= 0 && partition < p->n, r->ucomm, MPI_ERR_ARG, "partition %d is outside 0..%d", partition,
               p->n - 1);
    RMPI_CHECK(flag, r->ucomm, MPI_ERR_ARG, "flag must not be NULL");
    RMPI_LOCK();
    if (!r->done)
        rmpi_core_progress();
    *flag = r->done; /* an inactive request has nothing pending: every partition is in */
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}
