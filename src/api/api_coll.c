/* Collective bindings: Barrier, Bcast, Reduce, Allreduce, Scan, Exscan, Reduce_scatter and
 * Reduce_scatter_block. One function per collective checks the arguments and builds the
 * schedule (coll.h); the public forms (blocking, MPI_I*, *_init, each with its _c) are
 * generated from src/api/forms.txt and included at the end. */
#include "api_coll.h"

#include <stdlib.h>

/* Run the schedule (blocking) or hand it to the user as a request. Lock held. */
static int go(rmpi_comm_t *c, rmpi_nbc_t *s, MPI_Request *req, int mode)
{
    if (mode == RMPI_API_RUN)
        return rmpi_nbc_run(s);
    rmpi_api_coll_request(c, s, req, mode == RMPI_API_PERSIST);
    return 0;
}

static int failed(const char *func, rmpi_comm_t *c, int rc)
{
    return rmpi_api_error(c, rc, func,
                          "the collective failed on rank %d (do all ranks pass matching counts, "
                          "datatypes and roots?)",
                          c->rank);
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
        return rmpi_api_error(c, MPI_ERR_ROOT, func, "root %d is not a rank of %s, which has %d rank(s)", root, name,
                              c->size);
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

/* dt: the checked type. A predefined op with a kernel on its basic elements is valid: one
 * table read (rmpi_coll_op_kernel), where the full check looks the op and type up again. */
static int check_op(const char *func, rmpi_comm_t *c, MPI_Op op, MPI_Datatype type, const rmpi_dtype_t *dt)
{
    if (RMPI_LIKELY(dt->size && rmpi_coll_op_kernel(op, dt->basic)))
        return 0;
    if (RMPI_UNLIKELY(op == MPI_REPLACE || op == MPI_NO_OP))
        return rmpi_api_error(c, MPI_ERR_OP, func, "MPI_REPLACE and MPI_NO_OP are for one-sided accumulates only");
    int rc = rmpi_coll_op_check(op, type);
    if (RMPI_LIKELY(!rc))
        return 0;
    return rmpi_api_error(c, rc, func,
                          rc == MPI_ERR_OP ? "the operation is invalid or not defined on this datatype"
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

static int barrier(const char *func, rmpi_comm_t *c, MPI_Request *req, int mode)
{
    RMPI_LOCK();
    int rc = RMPI_COLL_SHM_DECLINED;
    rmpi_nbc_t *s = NULL;
    if (mode == RMPI_API_RUN)
        rc = rmpi_coll_shm_barrier(c);
    else
        s = rmpi_coll_shm_barrier_sched(c);
    if (rc == RMPI_COLL_SHM_DECLINED)
        rc = go(c, s ? s : rmpi_coll_barrier_sched(c), req, mode);
    RMPI_UNLOCK();
    return rc ? failed(func, c, rc) : MPI_SUCCESS;
}

/* ---- Bcast ---- */

static int bcast(const char *func, rmpi_comm_t *c, void *buf, MPI_Count count, MPI_Datatype type, int root,
                 MPI_Request *req, int mode)
{
    rmpi_dtype_t *dt;
    int rc;
    if ((rc = rmpi_api_coll_check_root(func, c, root)))
        return rc;
    if (c->inter && root == MPI_PROC_NULL)
        dt = NULL; /* no argument but root is significant */
    else if ((rc = check_data(func, c, buf, count, type, &dt)))
        return rc;
    if (RMPI_UNLIKELY(buf == MPI_IN_PLACE))
        return rmpi_api_error(c, MPI_ERR_BUFFER, func, "MPI_IN_PLACE is not a broadcast buffer");
    RMPI_LOCK();
    rmpi_nbc_t *s = NULL;
    rc = RMPI_COLL_SHM_DECLINED;
    if (c->inter)
        ; /* never on one node's segment */
    else if (mode == RMPI_API_RUN)
        rc = rmpi_coll_shm_bcast(c, buf, (size_t)count, dt, root);
    else
        s = rmpi_coll_shm_bcast_sched(c, buf, (size_t)count, dt, root);
    if (rc == RMPI_COLL_SHM_DECLINED)
        rc = go(c, s ? s : rmpi_coll_bcast_sched(c, buf, (size_t)count, dt, root), req, mode);
    RMPI_UNLOCK();
    return rc ? failed(func, c, rc) : MPI_SUCCESS;
}

/* ---- Reduce, Allreduce, Scan, Exscan ---- */

enum { K_REDUCE, K_ALLREDUCE, K_SCAN, K_EXSCAN };

static int reduction(const char *func, rmpi_comm_t *c, int kind, const void *sbuf, void *rbuf, MPI_Count count,
                     MPI_Datatype type, MPI_Op op, int root, MPI_Request *req, int mode)
{
    rmpi_dtype_t *dt;
    int rc = 0;
    if (kind == K_REDUCE && (rc = rmpi_api_coll_check_root(func, c, root)))
        return rc;
    if ((kind == K_SCAN || kind == K_EXSCAN) && (rc = rmpi_api_coll_intra_only(func, c)))
        return rc;
    /* intercommunicator Reduce: the root takes, the other group gives, MPI_PROC_NULL neither */
    int takes = kind != K_REDUCE || (c->inter ? root == MPI_ROOT : c->rank == root);
    int gives = kind != K_REDUCE || !c->inter || root >= 0;
    dt = NULL;
    /* the root's second buffer: the same count and type, only the buffer to check */
    if ((gives && (rc = check_data(func, c, sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, type, &dt))) ||
        (takes &&
         (rc = dt ? rmpi_api_check_buf_of(func, c, rbuf, count, dt) : check_data(func, c, rbuf, count, type, &dt))) ||
        ((gives || takes) && (rc = check_op(func, c, op, type, dt))) ||
        (rc = check_bufs(func, c, gives ? sbuf : NULL, rbuf, count, takes && !c->inter, takes)))
        return rc;
    RMPI_LOCK();
    size_t n = (size_t)count;
    rmpi_nbc_t *s = NULL;
    rc = RMPI_COLL_SHM_DECLINED;
    if (kind == K_SCAN && mode == RMPI_API_RUN && !c->inter)
        rc = rmpi_coll_shm_scan(c, sbuf, rbuf, n, dt, op);
    else if (kind > K_ALLREDUCE || c->inter)
        ; /* Exscan, non-blocking Scan, intercommunicators: schedules only */
    else if (mode == RMPI_API_RUN)
        rc = rmpi_coll_shm_reduce(c, sbuf, rbuf, n, dt, op, kind == K_REDUCE ? root : -1);
    else
        s = rmpi_coll_shm_reduce_sched(c, sbuf, rbuf, n, dt, op, kind == K_REDUCE ? root : -1);
    if (rc == RMPI_COLL_SHM_DECLINED) {
        if (!s)
            s = kind == K_REDUCE      ? rmpi_coll_reduce_sched(c, sbuf, rbuf, n, dt, op, root)
                : kind == K_ALLREDUCE ? rmpi_coll_allreduce_sched(c, sbuf, rbuf, n, dt, op)
                                      : rmpi_coll_scan_sched(c, sbuf, rbuf, n, dt, op, kind == K_EXSCAN);
        rc = go(c, s, req, mode);
    }
    RMPI_UNLOCK();
    return rc ? failed(func, c, rc) : MPI_SUCCESS;
}

/* ---- Reduce_scatter, Reduce_scatter_block ---- */

/* Counts come as an int[] or MPI_Count[] array (ARR: the array and whether it is wide) or,
 * with BLOCK, as one block count for every rank (block). */
#define ARR(a) (const void *)(a), (int)(sizeof *(a) > sizeof(int))
#define BLOCK_COUNTS ((const void *)1)
#define BLOCK BLOCK_COUNTS, 0
static int reduce_scatter(const char *func, rmpi_comm_t *c, const void *sbuf, void *rbuf, const void *counts_in,
                          int wide, MPI_Count block, MPI_Datatype type, MPI_Op op, MPI_Request *req, int mode)
{
    rmpi_dtype_t *dt;
    int rc;
    int n = c->size, blockwise = counts_in == BLOCK_COUNTS;
    if (RMPI_UNLIKELY(!counts_in))
        return rmpi_api_error(c, MPI_ERR_ARG, func, "recvcounts must not be NULL");
    size_t *counts = rmpi_xmalloc((size_t)n * sizeof *counts);
    MPI_Count total = 0;
    for (int i = 0; i < n; i++) {
        MPI_Count k = blockwise ? block : wide ? ((const MPI_Count *)counts_in)[i] : ((const int *)counts_in)[i];
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
        (rc = check_op(func, c, op, type, dt)) || (rc = check_bufs(func, c, sbuf, rbuf, total, !c->inter, 1))) {
        free(counts);
        return rc;
    }
    RMPI_LOCK();
    rc = RMPI_COLL_SHM_DECLINED;
    if (mode == RMPI_API_RUN)
        rc = rmpi_coll_shm_reduce_scatter(c, sbuf, rbuf, counts, (size_t)total, dt, op);
    if (rc == RMPI_COLL_SHM_DECLINED)
        rc = go(c, rmpi_coll_reduce_scatter_sched(c, sbuf, rbuf, counts, dt, op), req, mode);
    RMPI_UNLOCK();
    free(counts);
    return rc ? failed(func, c, rc) : MPI_SUCCESS;
}

#include "api/api_coll.forms.h"
