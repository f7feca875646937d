/* Collective bindings: Barrier, Bcast, Reduce, Allreduce, Scan, Exscan, Reduce_scatter and
 * Reduce_scatter_block, each blocking, non-blocking (MPI_I*) and persistent (*_init), with
 * their large-count _c forms. One function per collective checks the arguments and builds
 * the schedule (coll.h); the public functions only say which flavour they are. */
#include "api_coll.h"

#include <stdlib.h>

enum { BLOCKING, NONBLOCKING, PERSISTENT };

/* Run the schedule (blocking) or hand it to the user as a request. Lock held. */
static int go(rmpi_comm_t *c, rmpi_nbc_t *s, MPI_Request *req, int mode)
{
    if (mode == BLOCKING)
        return rmpi_nbc_run(s);
    rmpi_api_coll_request(c, s, req, mode == PERSISTENT);
    return 0;
}

static int failed(const char *func, rmpi_comm_t *c, int rc)
{
    return rmpi_api_error(c, rc, func, "the collective failed on rank %d (do all ranks pass matching counts, "
                                       "datatypes and roots?)", c->rank);
}

/* Library state, communicator and request handle. */
static int check_comm(const char *func, MPI_Comm comm, MPI_Request *req, int mode, rmpi_comm_t **cp)
{
    if (RMPI_UNLIKELY(rmpi_api_state != RMPI_STATE_INIT))
        return rmpi_api_not_initialized(func);
    rmpi_comm_t *c = *cp = rmpi_comm_get(comm);
    if (RMPI_UNLIKELY(!c))
        return rmpi_api_error(NULL, MPI_ERR_COMM, func, "invalid communicator %p", (void *)comm);
    if (RMPI_UNLIKELY(mode != BLOCKING && !req))
        return rmpi_api_error(c, MPI_ERR_REQUEST, func, "request must not be NULL");
    return 0;
}

/* Count, datatype and (unless NULL is allowed: buf == MPI_IN_PLACE handled by the caller)
 * a non-NULL buffer for a non-empty message. */
static int check_data(const char *func, rmpi_comm_t *c, const void *buf, MPI_Count count, MPI_Datatype type,
                      rmpi_dtype_t **dt)
{
    if (RMPI_UNLIKELY(count < 0))
        return rmpi_api_error(c, MPI_ERR_COUNT, func, "count %lld is negative", (long long)count);
    return rmpi_api_check_buf(func, c, buf, count, type, dt);
}

int rmpi_api_coll_check_root(const char *func, rmpi_comm_t *c, int root)
{
    const char *name = c->name[0] ? c->name : "the communicator";
    if (!c->inter) {
        if (RMPI_LIKELY(root >= 0 && root < c->size))
            return 0;
        return rmpi_api_error(c, MPI_ERR_ROOT, func, "root %d is not a rank of %s, which has %d rank(s)", root,
                              name, c->size);
    }
    if (RMPI_LIKELY(root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->rsize)))
        return 0;
    return rmpi_api_error(c, MPI_ERR_ROOT, func,
                          "root %d on rank %d of intercommunicator %s: pass MPI_ROOT at the root, MPI_PROC_NULL "
                          "at the rest of its group and the root's rank (0..%d) in the remote group",
                          root, c->rank, name, c->rsize - 1);
}

int rmpi_api_coll_intra_only(const char *func, rmpi_comm_t *c)
{
    if (RMPI_LIKELY(!c->inter))
        return 0;
    return rmpi_api_error(c, MPI_ERR_COMM, func, "%s is not defined on intercommunicators (rank %d of %s)", func,
                          c->rank, c->name[0] ? c->name : "an intercommunicator");
}

static int check_op(const char *func, rmpi_comm_t *c, MPI_Op op, MPI_Datatype type)
{
    if (RMPI_UNLIKELY(op == MPI_REPLACE || op == MPI_NO_OP))
        return rmpi_api_error(c, MPI_ERR_OP, func, "MPI_REPLACE and MPI_NO_OP are for one-sided accumulates only");
    int rc = rmpi_coll_op_check(op, type);
    if (RMPI_LIKELY(!rc))
        return 0;
    return rmpi_api_error(c, rc, func, rc == MPI_ERR_OP ? "the operation is invalid or not defined on this datatype"
                                                        : "reductions on this datatype are not supported");
}

/* Send and receive buffers of a reduction: MPI_IN_PLACE only as sbuf and only where
 * inplace_ok, never the same buffer twice. */
static int check_bufs(const char *func, rmpi_comm_t *c, const void *sbuf, const void *rbuf, MPI_Count count,
                      int inplace_ok, int rbuf_used)
{
    if (RMPI_UNLIKELY(rbuf == MPI_IN_PLACE && rbuf_used))
        return rmpi_api_error(c, MPI_ERR_BUFFER, func, "MPI_IN_PLACE is allowed as the send buffer only");
    if (RMPI_UNLIKELY(sbuf == MPI_IN_PLACE && !inplace_ok))
        return rmpi_api_error(c, MPI_ERR_BUFFER, func, "MPI_IN_PLACE is not allowed here (rank %d%s)", c->rank,
                              c->inter ? ", an intercommunicator" : "");
    if (RMPI_UNLIKELY(sbuf == rbuf && rbuf_used && count > 0))
        return rmpi_api_error(c, MPI_ERR_BUFFER, func,
                              "send and receive buffers are the same (pass MPI_IN_PLACE as the send buffer)");
    return 0;
}

/* ---- Barrier ---- */

static int barrier(const char *func, MPI_Comm comm, MPI_Request *req, int mode)
{
    rmpi_comm_t *c;
    int rc = check_comm(func, comm, req, mode, &c);
    if (rc)
        return rc;
    RMPI_LOCK();
    rc = go(c, rmpi_coll_barrier_sched(c), req, mode);
    RMPI_UNLOCK();
    return rc ? failed(func, c, rc) : MPI_SUCCESS;
}

int MPI_Barrier(MPI_Comm comm) { return barrier(__func__, comm, NULL, BLOCKING); }
int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request) { return barrier(__func__, comm, request, NONBLOCKING); }
int MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return barrier(__func__, comm, request, PERSISTENT);
}

/* ---- Bcast ---- */

static int bcast(const char *func, void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm,
                 MPI_Request *req, int mode)
{
    rmpi_comm_t *c;
    rmpi_dtype_t *dt;
    int rc;
    if ((rc = check_comm(func, comm, req, mode, &c)) || (rc = rmpi_api_coll_check_root(func, c, root)))
        return rc;
    if (c->inter && root == MPI_PROC_NULL)
        dt = NULL; /* no argument but root is significant */
    else if ((rc = check_data(func, c, buf, count, type, &dt)))
        return rc;
    if (RMPI_UNLIKELY(buf == MPI_IN_PLACE))
        return rmpi_api_error(c, MPI_ERR_BUFFER, func, "MPI_IN_PLACE is not a broadcast buffer");
    RMPI_LOCK();
    rc = go(c, rmpi_coll_bcast_sched(c, buf, (size_t)count, dt, root), req, mode);
    RMPI_UNLOCK();
    return rc ? failed(func, c, rc) : MPI_SUCCESS;
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast(__func__, buffer, count, datatype, root, comm, NULL, BLOCKING);
}
int MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast(__func__, buffer, count, datatype, root, comm, NULL, BLOCKING);
}
int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)
{
    return bcast(__func__, buffer, count, datatype, root, comm, request, NONBLOCKING);
}
int MPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)
{
    return bcast(__func__, buffer, count, datatype, root, comm, request, NONBLOCKING);
}
int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                   MPI_Request *request)
{
    return bcast(__func__, buffer, count, datatype, root, comm, request, PERSISTENT);
}
int MPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request)
{
    return bcast(__func__, buffer, count, datatype, root, comm, request, PERSISTENT);
}

/* ---- Reduce, Allreduce, Scan, Exscan ---- */

enum { K_REDUCE, K_ALLREDUCE, K_SCAN, K_EXSCAN };

static int reduction(const char *func, int kind, const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Request *req, int mode)
{
    rmpi_comm_t *c;
    rmpi_dtype_t *dt;
    int rc;
    if ((rc = check_comm(func, comm, req, mode, &c)))
        return rc;
    if (kind == K_REDUCE && (rc = rmpi_api_coll_check_root(func, c, root)))
        return rc;
    if ((kind == K_SCAN || kind == K_EXSCAN) && (rc = rmpi_api_coll_intra_only(func, c)))
        return rc;
    /* intercommunicator Reduce: the root takes, the other group gives, MPI_PROC_NULL neither */
    int takes = kind != K_REDUCE || (c->inter ? root == MPI_ROOT : c->rank == root);
    int gives = kind != K_REDUCE || !c->inter || root >= 0;
    dt = NULL;
    if ((gives && (rc = check_data(func, c, sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, type, &dt))) ||
        (takes && (rc = check_data(func, c, rbuf, count, type, &dt))) ||
        ((gives || takes) && (rc = check_op(func, c, op, type))) ||
        (rc = check_bufs(func, c, gives ? sbuf : NULL, rbuf, count, takes && !c->inter, takes)))
        return rc;
    RMPI_LOCK();
    size_t n = (size_t)count;
    rmpi_nbc_t *s = kind == K_REDUCE      ? rmpi_coll_reduce_sched(c, sbuf, rbuf, n, dt, op, root)
                    : kind == K_ALLREDUCE ? rmpi_coll_allreduce_sched(c, sbuf, rbuf, n, dt, op)
                                          : rmpi_coll_scan_sched(c, sbuf, rbuf, n, dt, op, kind == K_EXSCAN);
    rc = go(c, s, req, mode);
    RMPI_UNLOCK();
    return rc ? failed(func, c, rc) : MPI_SUCCESS;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    return reduction(__func__, K_REDUCE, sendbuf, recvbuf, count, datatype, op, root, comm, NULL, BLOCKING);
}
int MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    return reduction(__func__, K_REDUCE, sendbuf, recvbuf, count, datatype, op, root, comm, NULL, BLOCKING);
}
int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request *request)
{
    return reduction(__func__, K_REDUCE, sendbuf, recvbuf, count, datatype, op, root, comm, request, NONBLOCKING);
}
int MPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    return reduction(__func__, K_REDUCE, sendbuf, recvbuf, count, datatype, op, root, comm, request, NONBLOCKING);
}
int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Info info,
                    MPI_Request *request)
{
    return reduction(__func__, K_REDUCE, sendbuf, recvbuf, count, datatype, op, root, comm, request, PERSISTENT);
}
int MPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request *request)
{
    return reduction(__func__, K_REDUCE, sendbuf, recvbuf, count, datatype, op, root, comm, request, PERSISTENT);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduction(__func__, K_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, 0, comm, NULL, BLOCKING);
}
int MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduction(__func__, K_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, 0, comm, NULL, BLOCKING);
}
int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduction(__func__, K_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, 0, comm, request, NONBLOCKING);
}
int MPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduction(__func__, K_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, 0, comm, request, NONBLOCKING);
}
int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return reduction(__func__, K_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, 0, comm, request, PERSISTENT);
}
int MPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return reduction(__func__, K_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, 0, comm, request, PERSISTENT);
}
int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduction(__func__, K_SCAN, sendbuf, recvbuf, count, datatype, op, 0, comm, NULL, BLOCKING);
}
int MPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduction(__func__, K_SCAN, sendbuf, recvbuf, count, datatype, op, 0, comm, NULL, BLOCKING);
}
int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduction(__func__, K_SCAN, sendbuf, recvbuf, count, datatype, op, 0, comm, request, NONBLOCKING);
}
int MPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduction(__func__, K_SCAN, sendbuf, recvbuf, count, datatype, op, 0, comm, request, NONBLOCKING);
}
int MPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return reduction(__func__, K_SCAN, sendbuf, recvbuf, count, datatype, op, 0, comm, request, PERSISTENT);
}
int MPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return reduction(__func__, K_SCAN, sendbuf, recvbuf, count, datatype, op, 0, comm, request, PERSISTENT);
}
int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduction(__func__, K_EXSCAN, sendbuf, recvbuf, count, datatype, op, 0, comm, NULL, BLOCKING);
}
int MPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduction(__func__, K_EXSCAN, sendbuf, recvbuf, count, datatype, op, 0, comm, NULL, BLOCKING);
}
int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduction(__func__, K_EXSCAN, sendbuf, recvbuf, count, datatype, op, 0, comm, request, NONBLOCKING);
}
int MPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduction(__func__, K_EXSCAN, sendbuf, recvbuf, count, datatype, op, 0, comm, request, NONBLOCKING);
}
int MPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return reduction(__func__, K_EXSCAN, sendbuf, recvbuf, count, datatype, op, 0, comm, request, PERSISTENT);
}
int MPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return reduction(__func__, K_EXSCAN, sendbuf, recvbuf, count, datatype, op, 0, comm, request, PERSISTENT);
}

/* ---- Reduce_scatter, Reduce_scatter_block ---- */

/* Counts come as int[] (ic), MPI_Count[] (lc) or, when both are BLOCK, one block count for
 * every rank (block). */
#define BLOCK ((void *)1)
static int reduce_scatter(const char *func, const void *sbuf, void *rbuf, const int *ic, const MPI_Count *lc,
                          MPI_Count block, MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *req, int mode)
{
    rmpi_comm_t *c;
    rmpi_dtype_t *dt;
    int rc;
    if ((rc = check_comm(func, comm, req, mode, &c)))
        return rc;
    int n = c->size, blockwise = (const void *)ic == BLOCK;
    if (RMPI_UNLIKELY(!ic && !lc))
        return rmpi_api_error(c, MPI_ERR_ARG, func, "recvcounts must not be NULL");
    size_t *counts = rmpi_xmalloc((size_t)n * sizeof *counts);
    MPI_Count total = 0;
    for (int i = 0; i < n; i++) {
        MPI_Count k = blockwise ? block : ic ? ic[i] : lc[i];
        if (RMPI_UNLIKELY(k < 0)) {
            free(counts);
            return rmpi_api_error(c, MPI_ERR_COUNT, func, "count %lld for rank %d is negative", (long long)k, i);
        }
        counts[i] = (size_t)k;
        if (RMPI_UNLIKELY(__builtin_add_overflow(total, k, &total))) {
            free(counts);
            return rmpi_api_error(c, MPI_ERR_COUNT, func, "the counts add up to more than an MPI_Count holds");
        }
    }
    if ((rc = check_data(func, c, sbuf == MPI_IN_PLACE ? rbuf : sbuf, total, type, &dt)) ||
        (rc = check_data(func, c, rbuf, (MPI_Count)counts[c->rank], type, &dt)) ||
        (rc = check_op(func, c, op, type)) || (rc = check_bufs(func, c, sbuf, rbuf, total, !c->inter, 1))) {
        free(counts);
        return rc;
    }
    RMPI_LOCK();
    rc = go(c, rmpi_coll_reduce_scatter_sched(c, sbuf, rbuf, counts, dt, op), req, mode);
    RMPI_UNLOCK();
    free(counts);
    return rc ? failed(func, c, rc) : MPI_SUCCESS;
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter(__func__, sendbuf, recvbuf, recvcounts, NULL, 0, datatype, op, comm, NULL, BLOCKING);
}
int MPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter(__func__, sendbuf, recvbuf, NULL, recvcounts, 0, datatype, op, comm, NULL, BLOCKING);
}
int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduce_scatter(__func__, sendbuf, recvbuf, recvcounts, NULL, 0, datatype, op, comm, request,
                          NONBLOCKING);
}
int MPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduce_scatter(__func__, sendbuf, recvbuf, NULL, recvcounts, 0, datatype, op, comm, request,
                          NONBLOCKING);
}
int MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return reduce_scatter(__func__, sendbuf, recvbuf, recvcounts, NULL, 0, datatype, op, comm, request,
                          PERSISTENT);
}
int MPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return reduce_scatter(__func__, sendbuf, recvbuf, NULL, recvcounts, 0, datatype, op, comm, request,
                          PERSISTENT);
}
int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter(__func__, sendbuf, recvbuf, BLOCK, BLOCK, recvcount, datatype, op, comm, NULL, BLOCKING);
}
int MPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter(__func__, sendbuf, recvbuf, BLOCK, BLOCK, recvcount, datatype, op, comm, NULL, BLOCKING);
}
int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduce_scatter(__func__, sendbuf, recvbuf, BLOCK, BLOCK, recvcount, datatype, op, comm, request,
                          NONBLOCKING);
}
int MPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return reduce_scatter(__func__, sendbuf, recvbuf, BLOCK, BLOCK, recvcount, datatype, op, comm, request,
                          NONBLOCKING);
}
int MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return reduce_scatter(__func__, sendbuf, recvbuf, BLOCK, BLOCK, recvcount, datatype, op, comm, request,
                          PERSISTENT);
}
int MPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return reduce_scatter(__func__, sendbuf, recvbuf, BLOCK, BLOCK, recvcount, datatype, op, comm, request,
                          PERSISTENT);
}
