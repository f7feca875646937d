/* Partitioned point-to-point bindings (MPI 4.0: Psend_init, Precv_init, Pready*,
 * Parrived): argument checks and handles; the requests, their context and tags and when
 * the message goes are the core's (core_part.c). */
#include "api_pt2pt.h"

#include <limits.h>

static int part_init(const char *func, void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int peer,
                     int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request, int send)
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
    r->ctx = c->ctx; /* the core moves both to the partitioned ones (MPI_PROC_NULL too) */
    r->tag = tag;
    rmpi_core_part_init(r, partitions, send);
    RMPI_UNLOCK();
    *request = rmpi_api_req_handle(r);
    return MPI_SUCCESS;
}

int MPI_Psend_init_c(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return part_init(__func__, (void *)(uintptr_t)buf, partitions, count, datatype, dest, tag, comm, info, request, 1);
}

int MPI_Psend_init(const void *buf, int partitions, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                   MPI_Info info, MPI_Request *request)
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

/* The partitioned send request behind a handle, or an error code. */
static int send_part(const char *func, MPI_Request request, rmpi_req_t **out)
{
    rmpi_req_t *r = rmpi_api_req(request);
    if (!r || !(r->flags & RMPI_RF_PARTITIONED) || !rmpi_core_part_is_send(r))
        return rmpi_api_error(NULL, MPI_ERR_REQUEST, func, "not a partitioned send request (MPI_Psend_init)");
    if (!(r->flags & RMPI_RF_ACTIVE))
        return rmpi_api_error(r->ucomm, MPI_ERR_REQUEST, func, "the request is not active: call MPI_Start first");
    *out = r;
    return MPI_SUCCESS;
}

/* Marks partitions [lo, hi] (or the list) ready; the last one sends the message. */
static int ready(const char *func, rmpi_req_t *r, int lo, int hi, const int *list)
{
    int n = rmpi_core_part_count(r), count = list ? lo : hi - lo + 1;
    for (int k = 0; k < count; k++) {
        int i = list ? list[k] : lo + k;
        if (i < 0 || i >= n)
            return rmpi_api_error(r->ucomm, MPI_ERR_ARG, func, "partition %d is outside 0..%d", i, n - 1);
        if (rmpi_core_part_is_ready(r, i))
            return rmpi_api_error(r->ucomm, MPI_ERR_ARG, func, "partition %d is already ready since the last MPI_Start",
                                  i);
    }
    RMPI_LOCK();
    rmpi_core_part_ready(r, lo, hi, list);
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
    RMPI_CHECK(r && (r->flags & RMPI_RF_PARTITIONED) && !rmpi_core_part_is_send(r), NULL, MPI_ERR_REQUEST,
               "not a partitioned receive request (MPI_Precv_init)");
    int n = rmpi_core_part_count(r);
    RMPI_CHECK(partition >= 0 && partition < n, r->ucomm, MPI_ERR_ARG, "partition %d is outside 0..%d", partition,
               n - 1);
    RMPI_CHECK(flag, r->ucomm, MPI_ERR_ARG, "flag must not be NULL");
    RMPI_LOCK();
    if (!r->done)
        rmpi_core_progress();
    *flag = r->done; /* an inactive request has nothing pending: every partition is in */
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}
