/* One-sided communication bindings (MPI-4.1 chapter 12) over src/rma: window creation and
 * free, attach/detach, shared queries, the communication calls (int and _c forms,
 * request-based ones), synchronisation, window names, info, group and error handlers.
 * Attributes and keyvals of windows are in api_attr.c, Win_create_errhandler in
 * api_error.c. Errors go to the window's handler (MPI_ERRORS_ARE_FATAL unless set);
 * an invalid window handle to MPI_COMM_WORLD's. */
#include "api_impl.h"

#include <limits.h>
#include <stdio.h>

#include "../coll/coll.h"
#include "../rma/rma.h"

#define WIN_ERROR(w, code, ...)                                                       \
    ((w) ? rmpi_api_win_error((w)->errh, (MPI_Win)(w), (code), __func__, __VA_ARGS__) \
         : rmpi_api_error(NULL, (code), __func__, __VA_ARGS__))
#define WIN_CHECK(cond, w, code, ...)               \
    do {                                            \
        if (RMPI_UNLIKELY(!(cond)))                 \
            return WIN_ERROR(w, code, __VA_ARGS__); \
    } while (0)
#define GET_WIN(w, h)                \
    RMPI_API_INIT_CHECK();           \
    rmpi_win_t *w = rmpi_win_get(h); \
    RMPI_CHECK(w, NULL, MPI_ERR_WIN, "invalid window %p", (void *)(h))

#define ASSERT_BITS (MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)

/* ---- creation ---- */

static int win_new(const char *func, int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
                   MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    if (rmpi_api_state != RMPI_STATE_INIT)
        return rmpi_api_not_initialized(func);
    rmpi_comm_t *c = rmpi_comm_get(comm);
    if (!c)
        return rmpi_api_error(NULL, MPI_ERR_COMM, func, "invalid communicator %p", (void *)comm);
    if (c->inter)
        return rmpi_api_error(c, MPI_ERR_COMM, func, "windows need an intracommunicator");
    if (!win)
        return rmpi_api_error(c, MPI_ERR_ARG, func, "win must not be NULL");
    if (size < 0)
        return rmpi_api_error(c, MPI_ERR_SIZE, func, "size %lld is negative", (long long)size);
    if (disp_unit <= 0)
        return rmpi_api_error(c, MPI_ERR_DISP, func, "disp_unit %lld must be positive", (long long)disp_unit);
    if ((flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) && !baseptr)
        return rmpi_api_error(c, MPI_ERR_ARG, func, "baseptr must not be NULL");
    rmpi_info_t *in = NULL;
    if (info != MPI_INFO_NULL && !(in = rmpi_info_get(info)))
        return rmpi_api_error(c, MPI_ERR_INFO, func, "invalid info object %p", (void *)info);
    rmpi_win_t *w = NULL;
    RMPI_LOCK();
    int rc = rmpi_rma_win_create(c, flavor, &base, (size_t)size, disp_unit, &w);
    RMPI_UNLOCK();
    if (rc == MPI_ERR_RMA_SHARED)
        return rmpi_api_error(c, rc, func,
                              "MPI_Win_allocate_shared needs every rank of the communicator on one "
                              "node; rank %d's communicator spans several (use MPI_Comm_split_type "
                              "with MPI_COMM_TYPE_SHARED first)",
                              rmpi_core_rank);
    if (rc)
        return rmpi_api_error(c, rc, func, "the window could not be created");
    w->info = in ? rmpi_info_dup(in) : NULL;
    w->attr_size = (MPI_Aint)w->bytes;
    w->attr_disp_unit = disp_unit > INT_MAX ? INT_MAX : (int)disp_unit;
    w->attr_flavor = flavor;
    w->attr_model = MPI_WIN_UNIFIED;
    if (baseptr)
        *(void **)baseptr = base;
    *win = (MPI_Win)w;
    return MPI_SUCCESS;
}

int MPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return win_new(__func__, MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm, NULL, win);
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return win_new(__func__, MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm, NULL, win);
}

int MPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    return win_new(__func__, MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm, baseptr, win);
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    return win_new(__func__, MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm, baseptr, win);
}

int MPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                              MPI_Win *win)
{
    return win_new(__func__, MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info, comm, baseptr, win);
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    return win_new(__func__, MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info, comm, baseptr, win);
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return win_new(__func__, MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, info, comm, NULL, win);
}

int MPI_Win_free(MPI_Win *win)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(win, NULL, MPI_ERR_WIN, "win must not be NULL");
    rmpi_win_t *w = rmpi_win_get(*win);
    RMPI_CHECK(w, NULL, MPI_ERR_WIN, "invalid window %p", (void *)*win);
    WIN_CHECK(!w->start_group && !w->post_group && !w->nlocked && !w->lock_all, w, MPI_ERR_RMA_SYNC,
              "the window still has an open access or exposure epoch (Complete, Wait or Unlock first)");
    int rc = rmpi_api_win_attr_free(*win);
    if (rc)
        return WIN_ERROR(w, rc, "a delete callback of the window's attributes returned error %d", rc);
    MPI_Errhandler eh = w->errh;
    rmpi_info_t *info = w->info;
    RMPI_LOCK();
    rc = rmpi_rma_win_free(w);
    RMPI_UNLOCK();
    rmpi_api_errh_release(eh);
    rmpi_info_free(info);
    *win = MPI_WIN_NULL;
    return rc ? rmpi_api_error(NULL, rc, __func__, "a target reported an error for earlier operations") : MPI_SUCCESS;
}

int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    GET_WIN(w, win);
    WIN_CHECK(w->flavor == MPI_WIN_FLAVOR_DYNAMIC, w, MPI_ERR_RMA_FLAVOR,
              "only windows from MPI_Win_create_dynamic take attached memory");
    WIN_CHECK(size >= 0, w, MPI_ERR_SIZE, "size %lld is negative", (long long)size);
    WIN_CHECK(base || size == 0, w, MPI_ERR_ARG, "base must not be NULL");
    RMPI_LOCK();
    int rc = rmpi_rma_attach(w, base, (size_t)size);
    RMPI_UNLOCK();
    return rc ? WIN_ERROR(w, rc, "memory at %p (%lld bytes) overlaps memory already attached", base, (long long)size)
              : MPI_SUCCESS;
}

int MPI_Win_detach(MPI_Win win, const void *base)
{
    GET_WIN(w, win);
    WIN_CHECK(w->flavor == MPI_WIN_FLAVOR_DYNAMIC, w, MPI_ERR_RMA_FLAVOR,
              "only windows from MPI_Win_create_dynamic have attached memory");
    RMPI_LOCK();
    int rc = rmpi_rma_detach(w, base);
    RMPI_UNLOCK();
    return rc ? WIN_ERROR(w, rc, "no memory attached at %p", base) : MPI_SUCCESS;
}

static int shared_query(const char *func, MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
    if (rmpi_api_state != RMPI_STATE_INIT)
        return rmpi_api_not_initialized(func);
    rmpi_win_t *w = rmpi_win_get(win);
    if (!w)
        return rmpi_api_error(NULL, MPI_ERR_WIN, func, "invalid window %p", (void *)win);
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return rmpi_api_win_error(w->errh, win, MPI_ERR_RMA_FLAVOR, func,
                                  "a dynamic window has no memory to query (MPI_Win_allocate_shared makes one)");
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->size))
        return rmpi_api_win_error(w->errh, win, MPI_ERR_RANK, func, "rank %d is not in the window's group of %d", rank,
                                  w->size);
    if (!size || !disp_unit || !baseptr)
        return rmpi_api_win_error(w->errh, win, MPI_ERR_ARG, func, "size, disp_unit and baseptr must not be NULL");
    rmpi_rma_shared_query(w, rank, size, disp_unit, (void **)baseptr);
    return MPI_SUCCESS;
}

int MPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void *baseptr)
{
    return shared_query(__func__, win, rank, size, disp_unit, baseptr);
}

int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    MPI_Aint du = 0;
    int rc = shared_query(__func__, win, rank, size, disp_unit ? &du : NULL, baseptr);
    if (!rc)
        *disp_unit = (int)du;
    return rc;
}

/* ---- communication ---- */

/* One checking path for every communication call: kind RMPI_RMA_*, fop/cas marks the
 * single-element forms (their types must be predefined). Not inlined: the bindings'
 * short paths run before it without its stack frame. */
static __attribute__((noinline)) int rma_call(const char *func, rmpi_rma_op_t *op, MPI_Count ocount, MPI_Datatype otype,
                                              MPI_Count rcount, MPI_Datatype rtype, MPI_Count tcount,
                                              MPI_Datatype ttype, int single, MPI_Win win, MPI_Request *request)
{
    if (rmpi_api_state != RMPI_STATE_INIT)
        return rmpi_api_not_initialized(func);
    rmpi_win_t *w = rmpi_win_get(win);
    if (!w)
        return rmpi_api_error(NULL, MPI_ERR_WIN, func, "invalid window %p", (void *)win);
#define FAIL(code, ...) return rmpi_api_win_error(w->errh, win, (code), func, __VA_ARGS__)
    int k = op->kind;
    int has_o =
        k == RMPI_RMA_PUT || k == RMPI_RMA_ACC || k == RMPI_RMA_CAS || (k == RMPI_RMA_GACC && op->op != MPI_NO_OP);
    int has_r = k == RMPI_RMA_GET || k == RMPI_RMA_GACC || k == RMPI_RMA_CAS;
    if (ocount < 0 || rcount < 0 || tcount < 0)
        FAIL(MPI_ERR_COUNT, "a count is negative");
    if (op->target == MPI_PROC_NULL) { /* no effect, complete at once */
        if (request) {
            rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_SEND);
            rmpi_req_complete(r);
            *request = rmpi_api_req_handle(r);
        }
        return MPI_SUCCESS;
    }
    if (op->target < 0 || op->target >= w->size)
        FAIL(MPI_ERR_RANK, "target rank %d is not in the window's group of %d", op->target, w->size);
    /* one lookup when the handles agree (every fetch-and-op and compare-and-swap, most
     * puts and gets): each was about 20 instructions */
    rmpi_dtype_t *tdt = rmpi_dtype_get(ttype);
    rmpi_dtype_t *odt = !has_o ? NULL : otype == ttype ? tdt : rmpi_dtype_get(otype);
    rmpi_dtype_t *rdt = !has_r ? NULL : rtype == ttype ? tdt : rmpi_dtype_get(rtype);
    if ((has_o && (!odt || !odt->committed)) || (has_r && (!rdt || !rdt->committed)) || !tdt || !tdt->committed)
        FAIL(MPI_ERR_TYPE, "invalid or uncommitted datatype");
    if (single && !tdt->predefined)
        FAIL(MPI_ERR_TYPE, "the datatype of %s must be predefined",
             k == RMPI_RMA_CAS ? "Compare_and_swap" : "Fetch_and_op");
    if ((has_o && !rmpi_dtype_count_ok(odt, ocount)) || (has_r && !rmpi_dtype_count_ok(rdt, rcount)) ||
        !rmpi_dtype_count_ok(tdt, tcount))
        FAIL(MPI_ERR_COUNT, "a count times its datatype's size (or extent) does not fit in the address space");
    size_t tbytes = (size_t)tcount * tdt->size;
    if (has_o && (size_t)ocount * odt->size != tbytes)
        FAIL(MPI_ERR_TYPE, "the origin holds %zu bytes, the target %zu", (size_t)ocount * odt->size, tbytes);
    if (has_r && (size_t)rcount * rdt->size != tbytes)
        FAIL(MPI_ERR_TYPE, "the result buffer holds %zu bytes, the target %zu", (size_t)rcount * rdt->size, tbytes);
    if (k == RMPI_RMA_ACC || k == RMPI_RMA_GACC) {
        if (!rmpi_coll_op_predefined(op->op))
            FAIL(MPI_ERR_OP, "one-sided accumulates take predefined operations only");
        if (tbytes && rmpi_coll_op_check(op->op, ttype))
            FAIL(MPI_ERR_OP, "the operation is not defined on the target datatype");
        if (tbytes && (tdt->basic == MPI_DATATYPE_NULL || (has_o && odt->basic != tdt->basic)))
            FAIL(MPI_ERR_TYPE, "origin and target datatypes must be built from one same predefined type");
    }
    if (k == RMPI_RMA_CAS && rmpi_coll_op_check(MPI_BOR, ttype) && rmpi_coll_op_check(MPI_LOR, ttype))
        FAIL(MPI_ERR_TYPE, "Compare_and_swap takes integer, logical or byte types");
    if (request && !w->lock_all && !w->locked[op->target])
        FAIL(MPI_ERR_RMA_SYNC,
             "request-based operations need a passive-target epoch on rank %d (Win_lock or "
             "Win_lock_all)",
             op->target);
    if (!rmpi_rma_can_access(w, op->target))
        FAIL(MPI_ERR_RMA_SYNC,
             "no access epoch to rank %d is open (Win_fence, Win_start, Win_lock or Win_lock_all "
             "first)",
             op->target);
    op->ocount = (size_t)ocount, op->odt = odt;
    op->rcount = (size_t)rcount, op->rdt = rdt;
    op->tcount = (size_t)tcount, op->tdt = tdt;
    RMPI_LOCK();
    rmpi_req_t *ureq = request ? rmpi_req_alloc(RMPI_REQ_SEND) : NULL;
    int rc = rmpi_rma_issue(w, op, ureq);
    if (rc && ureq)
        rmpi_req_release(ureq);
    RMPI_UNLOCK();
    if (rc)
        FAIL(rc, "the target range (displacement %lld, %zu bytes) is outside rank %d's window", (long long)op->tdisp,
             tbytes, op->target);
    if (request)
        *request = rmpi_api_req_handle(ureq);
    return MPI_SUCCESS;
#undef FAIL
}

/* The short paths (rma.h): an operation on a target of this node in an open epoch, done
 * by rma before any other work here, as Open MPI's osc/sm does it; whatever they do not
 * take, every error included, goes through rma_call's checks. */
#define SHORT_PATH(w, call)                                                                           \
    do {                                                                                              \
        rmpi_win_t *w;                                                                                \
        if (RMPI_LIKELY(rmpi_api_state == RMPI_STATE_INIT) && (w = rmpi_win_get(win)) && (call) == 0) \
            return MPI_SUCCESS;                                                                       \
    } while (0)

#define OP_INIT(k, ob, rb, cb, t, d, o)                                                               \
    {                                                                                                 \
        .kind = (k), .obuf = (ob), .rbuf = (rb), .cbuf = (cb), .target = (t), .tdisp = (d), .op = (o) \
    }

int MPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    SHORT_PATH(w, origin_datatype != target_datatype || origin_count != target_count ||
                      (rmpi_rma_direct_put(w, origin_addr, target_datatype, target_count, target_rank, target_disp) &&
                       rmpi_rma_rdma_put(w, origin_addr, target_datatype, target_count, target_rank, target_disp)));
    rmpi_rma_op_t op = OP_INIT(RMPI_RMA_PUT, origin_addr, NULL, NULL, target_rank, target_disp, MPI_OP_NULL);
    return rma_call(__func__, &op, origin_count, origin_datatype, 0, MPI_DATATYPE_NULL, target_count, target_datatype,
                    0, win, NULL);
}

int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    SHORT_PATH(w, origin_datatype != target_datatype || origin_count != target_count ||
                      (rmpi_rma_direct_put(w, origin_addr, target_datatype, target_count, target_rank, target_disp) &&
                       rmpi_rma_rdma_put(w, origin_addr, target_datatype, target_count, target_rank, target_disp)));
    rmpi_rma_op_t op = OP_INIT(RMPI_RMA_PUT, origin_addr, NULL, NULL, target_rank, target_disp, MPI_OP_NULL);
    return rma_call(__func__, &op, origin_count, origin_datatype, 0, MPI_DATATYPE_NULL, target_count, target_datatype,
                    0, win, NULL);
}

int MPI_Rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
               MPI_Request *request)
{
    RMPI_CHECK(request, NULL, MPI_ERR_ARG, "request must not be NULL");
    rmpi_rma_op_t op = OP_INIT(RMPI_RMA_PUT, origin_addr, NULL, NULL, target_rank, target_disp, MPI_OP_NULL);
    return rma_call(__func__, &op, origin_count, origin_datatype, 0, MPI_DATATYPE_NULL, target_count, target_datatype,
                    0, win, request);
}

int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    return MPI_Rput_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                      target_datatype, win, request);
}

int MPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    SHORT_PATH(w, origin_datatype != target_datatype || origin_count != target_count ||
                      (rmpi_rma_direct_get(w, origin_addr, target_datatype, target_count, target_rank, target_disp) &&
                       rmpi_rma_msg_get(w, origin_addr, target_datatype, target_count, target_rank, target_disp) &&
                       rmpi_rma_rdma_get(w, origin_addr, target_datatype, target_count, target_rank, target_disp)));
    rmpi_rma_op_t op = OP_INIT(RMPI_RMA_GET, NULL, origin_addr, NULL, target_rank, target_disp, MPI_OP_NULL);
    return rma_call(__func__, &op, 0, MPI_DATATYPE_NULL, origin_count, origin_datatype, target_count, target_datatype,
                    0, win, NULL);
}

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    return MPI_Get_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                     target_datatype, win);
}

int MPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
               MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
               MPI_Request *request)
{
    RMPI_CHECK(request, NULL, MPI_ERR_ARG, "request must not be NULL");
    rmpi_rma_op_t op = OP_INIT(RMPI_RMA_GET, NULL, origin_addr, NULL, target_rank, target_disp, MPI_OP_NULL);
    return rma_call(__func__, &op, 0, MPI_DATATYPE_NULL, origin_count, origin_datatype, target_count, target_datatype,
                    0, win, request);
}

int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    return MPI_Rget_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                      target_datatype, win, request);
}

int MPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                     MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    rmpi_rma_op_t o = OP_INIT(RMPI_RMA_ACC, origin_addr, NULL, NULL, target_rank, target_disp, op);
    SHORT_PATH(w, origin_datatype != target_datatype || origin_count != target_count ||
                      rmpi_rma_direct_small(w, &o, target_datatype, target_count));
    return rma_call(__func__, &o, origin_count, origin_datatype, 0, MPI_DATATYPE_NULL, target_count, target_datatype, 0,
                    win, NULL);
}

int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return MPI_Accumulate_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                            target_datatype, op, win);
}

int MPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype, int target_rank,
                      MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                      MPI_Win win, MPI_Request *request)
{
    RMPI_CHECK(request, NULL, MPI_ERR_ARG, "request must not be NULL");
    rmpi_rma_op_t o = OP_INIT(RMPI_RMA_ACC, origin_addr, NULL, NULL, target_rank, target_disp, op);
    return rma_call(__func__, &o, origin_count, origin_datatype, 0, MPI_DATATYPE_NULL, target_count, target_datatype, 0,
                    win, request);
}

int MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                    MPI_Request *request)
{
    return MPI_Raccumulate_c(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                             target_datatype, op, win, request);
}

int MPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                         void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
                         MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                         MPI_Win win)
{
    rmpi_rma_op_t o = OP_INIT(RMPI_RMA_GACC, origin_addr, result_addr, NULL, target_rank, target_disp, op);
    SHORT_PATH(w, (op != MPI_NO_OP && (origin_datatype != target_datatype || origin_count != target_count)) ||
                      result_datatype != target_datatype || result_count != target_count ||
                      rmpi_rma_direct_small(w, &o, target_datatype, target_count));
    return rma_call(__func__, &o, origin_count, origin_datatype, result_count, result_datatype, target_count,
                    target_datatype, 0, win, NULL);
}

int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                       int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                       int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return MPI_Get_accumulate_c(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                                target_rank, target_disp, target_count, target_datatype, op, win);
}

int MPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                          void *result_addr, MPI_Count result_count, MPI_Datatype result_datatype, int target_rank,
                          MPI_Aint target_disp, MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win, MPI_Request *request)
{
    RMPI_CHECK(request, NULL, MPI_ERR_ARG, "request must not be NULL");
    rmpi_rma_op_t o = OP_INIT(RMPI_RMA_GACC, origin_addr, result_addr, NULL, target_rank, target_disp, op);
    return rma_call(__func__, &o, origin_count, origin_datatype, result_count, result_datatype, target_count,
                    target_datatype, 0, win, request);
}

int MPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    return MPI_Rget_accumulate_c(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
                                 target_rank, target_disp, target_count, target_datatype, op, win, request);
}

/* Fetch_and_op's and Compare_and_swap's short paths: a direct target's memory, else a
 * message (the direct checks cost about 40 instructions where they cannot succeed) */
static inline int small_atomic(rmpi_win_t *w, const rmpi_rma_op_t *o, MPI_Datatype type)
{
    int t = o->target;
    if ((unsigned)t < (unsigned)w->size && !rmpi_rma_direct(w, t))
        return rmpi_rma_msg_atomic(w, o, type);
    return rmpi_rma_direct_small(w, o, type, 1);
}

int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
                     MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    rmpi_rma_op_t o = OP_INIT(RMPI_RMA_GACC, origin_addr, result_addr, NULL, target_rank, target_disp, op);
    SHORT_PATH(w, small_atomic(w, &o, datatype));
    return rma_call(__func__, &o, 1, datatype, 1, datatype, 1, datatype, 1, win, NULL);
}

int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr, MPI_Datatype datatype,
                         int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    rmpi_rma_op_t o =
        OP_INIT(RMPI_RMA_CAS, origin_addr, result_addr, compare_addr, target_rank, target_disp, MPI_OP_NULL);
    SHORT_PATH(w, small_atomic(w, &o, datatype));
    return rma_call(__func__, &o, 1, datatype, 1, datatype, 1, datatype, 1, win, NULL);
}

/* ---- synchronisation ---- */

static const char *sync_text(int rc)
{
    return rc == MPI_ERR_RMA_SYNC ? "not allowed in the window's current synchronisation state"
                                  : "a target reported an error for earlier operations";
}

int MPI_Win_fence(int assert, MPI_Win win)
{
    GET_WIN(w, win);
    WIN_CHECK(!(assert & ~ASSERT_BITS), w, MPI_ERR_ASSERT, "assert %#x has bits that are no MPI_MODE_* of fence",
              (unsigned)assert);
    RMPI_LOCK();
    int rc = rmpi_rma_fence(w, assert);
    RMPI_UNLOCK();
    return rc ? WIN_ERROR(w, rc, "%s", sync_text(rc)) : MPI_SUCCESS;
}

static int pscw(const char *func, MPI_Group group, int assert, MPI_Win win, int start)
{
    if (rmpi_api_state != RMPI_STATE_INIT)
        return rmpi_api_not_initialized(func);
    rmpi_win_t *w = rmpi_win_get(win);
    if (!w)
        return rmpi_api_error(NULL, MPI_ERR_WIN, func, "invalid window %p", (void *)win);
    rmpi_group_t *g = rmpi_group_get(group);
    if (!g)
        return rmpi_api_win_error(w->errh, win, MPI_ERR_GROUP, func, "invalid group");
    if (assert & ~ASSERT_BITS)
        return rmpi_api_win_error(w->errh, win, MPI_ERR_ASSERT, func, "assert %#x has unknown bits", (unsigned)assert);
    RMPI_LOCK();
    int rc = start ? rmpi_rma_start(w, g) : rmpi_rma_post(w, g);
    RMPI_UNLOCK();
    return rc ? rmpi_api_win_error(w->errh, win, rc, func,
                                   "an epoch of this kind is already open, or the group "
                                   "has processes outside the window")
              : MPI_SUCCESS;
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win) { return pscw(__func__, group, assert, win, 0); }
int MPI_Win_start(MPI_Group group, int assert, MPI_Win win) { return pscw(__func__, group, assert, win, 1); }

int MPI_Win_complete(MPI_Win win)
{
    GET_WIN(w, win);
    RMPI_LOCK();
    int rc = rmpi_rma_complete(w);
    RMPI_UNLOCK();
    return rc ? WIN_ERROR(w, rc, "%s",
                          rc == MPI_ERR_RMA_SYNC ? "no access epoch was started (MPI_Win_start)" : sync_text(rc))
              : MPI_SUCCESS;
}

int MPI_Win_wait(MPI_Win win)
{
    GET_WIN(w, win);
    RMPI_LOCK();
    int rc = rmpi_rma_wait(w);
    RMPI_UNLOCK();
    return rc ? WIN_ERROR(w, rc, "no exposure epoch was posted (MPI_Win_post)") : MPI_SUCCESS;
}

int MPI_Win_test(MPI_Win win, int *flag)
{
    GET_WIN(w, win);
    WIN_CHECK(flag, w, MPI_ERR_ARG, "flag must not be NULL");
    RMPI_LOCK();
    int rc = rmpi_rma_test(w, flag);
    RMPI_UNLOCK();
    return rc ? WIN_ERROR(w, rc, "no exposure epoch was posted (MPI_Win_post)") : MPI_SUCCESS;
}

#define CHECK_TARGET(w, rank)                                                                                   \
    WIN_CHECK((rank) >= 0 && (rank) < (w)->size, w, MPI_ERR_RANK, "rank %d is not in the window's group of %d", \
              (rank), (w)->size)

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    SHORT_PATH(w, rmpi_rma_lock_direct(w, lock_type, rank, assert));
    GET_WIN(w, win);
    WIN_CHECK(lock_type == MPI_LOCK_EXCLUSIVE || lock_type == MPI_LOCK_SHARED, w, MPI_ERR_LOCKTYPE,
              "lock_type %d is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED", lock_type);
    WIN_CHECK(!(assert & ~ASSERT_BITS), w, MPI_ERR_ASSERT, "assert %#x has unknown bits", (unsigned)assert);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    CHECK_TARGET(w, rank);
    RMPI_LOCK();
    int rc = rmpi_rma_lock(w, lock_type, rank, assert);
    RMPI_UNLOCK();
    return rc ? WIN_ERROR(w, rc, "rank %d is already locked by this process (or Lock_all is active)", rank)
              : MPI_SUCCESS;
}

int MPI_Win_unlock(int rank, MPI_Win win)
{
    SHORT_PATH(w, rmpi_rma_unlock_direct(w, rank));
    GET_WIN(w, win);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    CHECK_TARGET(w, rank);
    RMPI_LOCK();
    int rc = rmpi_rma_unlock(w, rank);
    RMPI_UNLOCK();
    return rc ? WIN_ERROR(w, rc, "rank %d: %s (Unlock without Lock?)", rank, sync_text(rc)) : MPI_SUCCESS;
}

int MPI_Win_lock_all(int assert, MPI_Win win)
{
    GET_WIN(w, win);
    WIN_CHECK(!(assert & ~ASSERT_BITS), w, MPI_ERR_ASSERT, "assert %#x has unknown bits", (unsigned)assert);
    RMPI_LOCK();
    int rc = rmpi_rma_lock_all(w, assert);
    RMPI_UNLOCK();
    return rc ? WIN_ERROR(w, rc, "the window already holds locks") : MPI_SUCCESS;
}

int MPI_Win_unlock_all(MPI_Win win)
{
    GET_WIN(w, win);
    RMPI_LOCK();
    int rc = rmpi_rma_unlock_all(w);
    RMPI_UNLOCK();
    return rc ? WIN_ERROR(w, rc, "%s (Unlock_all without Lock_all?)", sync_text(rc)) : MPI_SUCCESS;
}

static __attribute__((noinline)) int flush(const char *func, int rank, MPI_Win win, int local)
{
    if (rmpi_api_state != RMPI_STATE_INIT)
        return rmpi_api_not_initialized(func);
    rmpi_win_t *w = rmpi_win_get(win);
    if (!w)
        return rmpi_api_error(NULL, MPI_ERR_WIN, func, "invalid window %p", (void *)win);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank != -1 && (rank < 0 || rank >= w->size))
        return rmpi_api_win_error(w->errh, win, MPI_ERR_RANK, func, "rank %d is not in the window's group of %d", rank,
                                  w->size);
    RMPI_LOCK();
    int rc = rmpi_rma_flush(w, rank, local);
    RMPI_UNLOCK();
    return rc ? rmpi_api_win_error(w->errh, win, rc, func, "%s (flushes need a passive-target epoch)", sync_text(rc))
              : MPI_SUCCESS;
}

static __attribute__((noinline)) int flush_direct_locked(rmpi_win_t *w, int rank)
{
    pthread_mutex_lock(&rmpi_big_lock); /* its progress poll and the process-wide store debt */
    int rc = rmpi_rma_flush_direct(w, rank);
    pthread_mutex_unlock(&rmpi_big_lock);
    return rc;
}

static inline int flush_direct(rmpi_win_t *w, int rank)
{
    return RMPI_UNLIKELY(rmpi_thread_multiple) ? flush_direct_locked(w, rank) : rmpi_rma_flush_direct(w, rank);
}

/* A window not looked up last, or another thread may call: the short path under the
 * lock, else the full checks. */
static __attribute__((noinline)) int flush_any(const char *func, int rank, MPI_Win win, int local)
{
    SHORT_PATH(w, flush_direct(w, rank));
    return flush(func, rank == -1 ? -2 : rank, win, local);
}

/* Win_flush(_local)'s binding. A direct flush (rma.h) is inline here when no other thread
 * may call and the window is the one looked up last: no call then, so nothing for a slow
 * path to keep in saved registers (the saves and a second look at the thread level were
 * a sixth of the flush); a window of that kind whose target is not direct goes straight
 * to the full checks, not through the short path a second time. */
static inline int flush_binding(const char *func, int rank, MPI_Win win, int local)
{
    rmpi_win_t *w = (rmpi_win_t *)win;
    if (RMPI_LIKELY(rmpi_api_state == RMPI_STATE_INIT) && !rmpi_thread_multiple && (uintptr_t)win >= 4096 &&
        (uintptr_t)win == __atomic_load_n(&rmpi_win_live.last, __ATOMIC_RELAXED) && w->magic == RMPI_WIN_MAGIC)
        return rmpi_rma_flush_direct(w, rank) == 0 ? MPI_SUCCESS : flush(func, rank == -1 ? -2 : rank, win, local);
    return flush_any(func, rank, win, local);
}

int MPI_Win_flush(int rank, MPI_Win win) { return flush_binding(__func__, rank, win, 0); }
int MPI_Win_flush_all(MPI_Win win) { return flush(__func__, -1, win, 0); }
int MPI_Win_flush_local(int rank, MPI_Win win) { return flush_binding(__func__, rank, win, 1); }
int MPI_Win_flush_local_all(MPI_Win win) { return flush(__func__, -1, win, 1); }

int MPI_Win_sync(MPI_Win win)
{
    GET_WIN(w, win);
    (void)w;
    /* the unified model: make this process's stores visible to the other processes
     * sharing the memory, and theirs to us */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    RMPI_LOCK();
    rmpi_core_progress();
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

/* ---- names, info, group, error handlers ---- */

int MPI_Win_set_name(MPI_Win win, const char *name)
{
    GET_WIN(w, win);
    WIN_CHECK(name, w, MPI_ERR_ARG, "name must not be NULL");
    snprintf(w->name, sizeof w->name, "%s", name);
    return MPI_SUCCESS;
}

int MPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(win_name && resultlen, NULL, MPI_ERR_ARG, "win_name and resultlen must not be NULL");
    if (win == MPI_WIN_NULL) { /* MPI-4.1: the null handle has a name too */
        *resultlen = snprintf(win_name, MPI_MAX_OBJECT_NAME, "MPI_WIN_NULL");
        return MPI_SUCCESS;
    }
    rmpi_win_t *w = rmpi_win_get(win);
    RMPI_CHECK(w, NULL, MPI_ERR_WIN, "invalid window %p", (void *)win);
    *resultlen = snprintf(win_name, MPI_MAX_OBJECT_NAME, "%s", w->name);
    return MPI_SUCCESS;
}

int MPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    GET_WIN(w, win);
    rmpi_info_t *i = NULL;
    if (info != MPI_INFO_NULL)
        WIN_CHECK((i = rmpi_info_get(info)) != NULL, w, MPI_ERR_INFO, "invalid info object %p", (void *)info);
    RMPI_LOCK();
    rmpi_info_t *old = w->info;
    w->info = i ? rmpi_info_dup(i) : NULL;
    rmpi_info_free(old);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    GET_WIN(w, win);
    WIN_CHECK(info_used, w, MPI_ERR_ARG, "info_used must not be NULL");
    RMPI_LOCK();
    *info_used = (MPI_Info)rmpi_info_dup(w->info);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    GET_WIN(w, win);
    WIN_CHECK(group, w, MPI_ERR_ARG, "group must not be NULL");
    RMPI_LOCK();
    *group = rmpi_group_handle(rmpi_group_of_comm(w->comm, 0));
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    GET_WIN(w, win);
    WIN_CHECK(rmpi_api_errh_valid(errhandler), w, MPI_ERR_ARG, "invalid error handler");
    rmpi_api_errh_replace(&w->errh, errhandler);
    return MPI_SUCCESS;
}

int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    GET_WIN(w, win);
    WIN_CHECK(errhandler, w, MPI_ERR_ARG, "errhandler must not be NULL");
    rmpi_api_errh_retain(w->errh);
    *errhandler = w->errh;
    return MPI_SUCCESS;
}

int MPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    GET_WIN(w, win);
    return rmpi_api_win_call_errhandler(w->errh, win, errorcode);
}
