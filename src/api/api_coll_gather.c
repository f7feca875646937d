/* Bindings of the data-movement collectives: Gather(v), Scatter(v), Allgather(v),
 * Alltoall(v/w) and the neighbourhood ones, each blocking, MPI_I* and *_init, with their
 * large-count _c forms. A binding describes each side of the call (buffer, counts,
 * displacements, types) as a side_t; one function per family checks the sides, turns
 * them into block arrays (coll.h rmpi_coll_blk_t) and builds the schedule. */
#include "api_coll.h"

#include <limits.h>
#include <stdlib.h>

enum { RUN, START, PERSIST }; /* blocking, MPI_I*, *_init */

/* An int or a 64-bit (MPI_Count, MPI_Aint) array, as the binding received it. */
typedef struct arr {
    const void *p;
    int wide;
} arr_t;

static long long at(arr_t a, int i) { return a.wide ? ((const int64_t *)a.p)[i] : ((const int *)a.p)[i]; }

/* One side of a call: count elements of *types (regular form), counts[i] elements at
 * displs[i] extents (v form) or bytes with types[i] (w form). */
typedef struct side {
    const void *buf;
    long long count;
    arr_t counts, displs;
    const MPI_Datatype *types;
} side_t;

#define REG(buf, count, type) ((side_t){(buf), (count), {NULL, 0}, {NULL, 0}, &(type)})
#define VEC(buf, counts, cw, displs, dw, type) ((side_t){(buf), 0, {(counts), (cw)}, {(displs), (dw)}, &(type)})
#define VECW(buf, counts, cw, displs, dw, types) ((side_t){(buf), 0, {(counts), (cw)}, {(displs), (dw)}, (types)})

typedef struct call {
    const char *func;
    rmpi_comm_t *c;
    int mode;
    MPI_Request *req;
} call_t;

static int begin(call_t *k, const char *func, MPI_Comm comm, int mode, MPI_Request *req)
{
    k->func = func, k->mode = mode, k->req = req;
    if (RMPI_UNLIKELY(rmpi_api_state != RMPI_STATE_INIT))
        return rmpi_api_not_initialized(func);
    k->c = rmpi_comm_get(comm);
    if (!k->c)
        return rmpi_api_error(NULL, MPI_ERR_COMM, func, "invalid communicator %p", (void *)comm);
    if (mode != RUN && !req)
        return rmpi_api_error(k->c, MPI_ERR_REQUEST, func, "request must not be NULL");
    return 0;
}

/* The point-to-point buffer checks for a count of any width. */
static int check_buf(const call_t *k, const void *buf, long long count, MPI_Datatype type, rmpi_dtype_t **dt)
{
    return rmpi_api_check_buf(k->func, k->c, buf, count, type, dt);
}

static const char *side_name(int recv) { return recv ? "recv" : "send"; }

/* Check a side of nblk blocks in the given form and build its blocks (*out, to free). */
static int side_blocks(const call_t *k, const side_t *sd, int nblk, int form, int recv, rmpi_coll_blk_t **out)
{
    const char *nm = side_name(recv);
    *out = NULL;
    if (sd->buf == MPI_IN_PLACE)
        return rmpi_api_error(k->c, MPI_ERR_BUFFER, k->func, "%sbuf cannot be MPI_IN_PLACE here", nm);
    rmpi_dtype_t *dt = NULL;
    int rc;
    if (form == RMPI_COLL_REGULAR) {
        if ((rc = check_buf(k, sd->buf, sd->count, sd->types[0], &dt)))
            return rc;
        /* block i starts i * count extents in: the whole side must be addressable */
        MPI_Count span;
        if (__builtin_mul_overflow((MPI_Count)sd->count, (MPI_Count)(nblk ? nblk : 1), &span) ||
            !rmpi_dtype_count_ok(dt, span))
            return rmpi_api_count_error(k->func, k->c, sd->count, dt);
    } else {
        if (nblk && !sd->counts.p)
            return rmpi_api_error(k->c, MPI_ERR_ARG, k->func, "%scounts is NULL", nm);
        if (nblk && !sd->displs.p)
            return rmpi_api_error(k->c, MPI_ERR_ARG, k->func, "%s displacements are NULL", nm);
        if (form == RMPI_COLL_W && nblk && !sd->types)
            return rmpi_api_error(k->c, MPI_ERR_ARG, k->func, "%stypes is NULL", nm);
        for (int i = 0; i < nblk; i++)
            if (at(sd->counts, i) < 0)
                return rmpi_api_error(k->c, MPI_ERR_COUNT, k->func, "%scounts[%d] is %lld, negative", nm, i,
                                      at(sd->counts, i));
        /* buffers may be MPI_BOTTOM with absolute displacements: types checked, not NULL */
        for (int i = 0; i < (form == RMPI_COLL_W ? nblk : 1); i++)
            if ((rc = check_buf(k, NULL, 0, sd->types[i], &dt)))
                return rc;
        for (int i = 0; i < nblk; i++) {
            rmpi_dtype_t *t = form == RMPI_COLL_W ? rmpi_dtype_get(sd->types[i]) : dt;
            if (!rmpi_dtype_count_ok(t, at(sd->counts, i)))
                return rmpi_api_count_error(k->func, k->c, at(sd->counts, i), t);
        }
    }
    rmpi_coll_blk_t *b = rmpi_xmalloc((size_t)(nblk ? nblk : 1) * sizeof *b);
    uintptr_t base = (uintptr_t)sd->buf;
    for (int i = 0; i < nblk; i++) {
        if (form == RMPI_COLL_REGULAR) {
            b[i] = (rmpi_coll_blk_t){(void *)(base + (uintptr_t)((MPI_Aint)i * sd->count * dt->extent)),
                                     (size_t)sd->count, dt};
        } else {
            rmpi_dtype_t *t = form == RMPI_COLL_W ? rmpi_dtype_get(sd->types[i]) : dt;
            MPI_Aint off = (MPI_Aint)at(sd->displs, i) * (form == RMPI_COLL_W ? 1 : t->extent);
            b[i] = (rmpi_coll_blk_t){(void *)(base + (uintptr_t)off), (size_t)at(sd->counts, i), t};
        }
    }
    *out = b;
    return 0;
}

/* Bytes a side moves, for the aliasing check. */
static size_t side_bytes(const rmpi_coll_blk_t *b, int nblk)
{
    size_t n = 0;
    for (int i = 0; b && i < nblk; i++)
        n += b[i].count * b[i].dt->size;
    return n;
}

static int check_alias(const call_t *k, const side_t *s, const rmpi_coll_blk_t *sb, int ns, const side_t *r)
{
    if (s->buf && s->buf == r->buf && side_bytes(sb, ns))
        return rmpi_api_error(k->c, MPI_ERR_BUFFER, k->func,
                              "sendbuf and recvbuf are the same buffer (use MPI_IN_PLACE)");
    return 0;
}

/* Lock held: run the schedule (blocking) or hand it over as a request; drops the lock. */
static int finish(const call_t *k, rmpi_nbc_t *s)
{
    int rc = 0;
    if (k->mode == RUN)
        rc = rmpi_nbc_run(s);
    else
        rmpi_api_coll_request(k->c, s, k->req, k->mode == PERSIST);
    RMPI_UNLOCK();
    if (rc == MPI_ERR_TRUNCATE)
        return rmpi_api_error(k->c, rc, k->func,
                              "data arrived that is larger than its receive buffer (counts or types of the ranks "
                              "do not match)");
    return rc ? rmpi_api_error(k->c, rc, k->func, "the collective failed") : MPI_SUCCESS;
}

/* ---- Gather, Gatherv, Scatter, Scatterv ---- */

/* The root's side has n blocks in `form`; the other side is one block, or MPI_IN_PLACE
 * at the root. scatter swaps the roles. On an intercommunicator the root (MPI_ROOT) has
 * only the n = remote size blocks, the other group only the one block, and the rest of
 * the root's group (MPI_PROC_NULL) neither. */
static int rooted(const call_t *k, const side_t *one, const side_t *many, int root, int form, int scatter)
{
    int rc = rmpi_api_coll_check_root(k->func, k->c, root);
    if (rc)
        return rc;
    rmpi_comm_t *c = k->c;
    int is_root = c->inter ? root == MPI_ROOT : c->rank == root;
    int in_place = is_root && one->buf == MPI_IN_PLACE, has_one = c->inter ? root >= 0 : !in_place;
    rmpi_coll_blk_t *ob = NULL, *mb = NULL;
    if (has_one && (rc = side_blocks(k, one, 1, RMPI_COLL_REGULAR, scatter, &ob)))
        return rc;
    if (is_root && ((rc = side_blocks(k, many, c->rsize, form, !scatter, &mb)) ||
                    (has_one && (rc = check_alias(k, scatter ? many : one, scatter ? mb : ob,
                                                    scatter ? c->rsize : 1, scatter ? one : many))))) {
        free(ob);
        free(mb);
        return rc;
    }
    RMPI_LOCK();
    rmpi_nbc_t *s = scatter ? rmpi_coll_scatter_sched(c, mb, ob, root, form)
                            : rmpi_coll_gather_sched(c, ob, mb, root, form);
    free(ob);
    free(mb);
    return finish(k, s);
}

static int gather(const char *func, side_t send, side_t recv, int root, MPI_Comm comm, int form, int mode,
                  MPI_Request *req)
{
    call_t k;
    int rc = begin(&k, func, comm, mode, req);
    return rc ? rc : rooted(&k, &send, &recv, root, form, 0);
}

static int scatter(const char *func, side_t send, side_t recv, int root, MPI_Comm comm, int form, int mode,
                   MPI_Request *req)
{
    call_t k;
    int rc = begin(&k, func, comm, mode, req);
    return rc ? rc : rooted(&k, &recv, &send, root, form, 1);
}

/* ---- Allgather(v), Alltoall(v/w) ---- */

/* allgather: send is one block; alltoall: n blocks in `form`. Either may be in place. */
static int all(const char *func, side_t send, side_t recv, MPI_Comm comm, int form, int gather, int mode,
               MPI_Request *req)
{
    call_t k;
    int rc = begin(&k, func, comm, mode, req);
    if (rc)
        return rc;
    rmpi_comm_t *c = k.c;
    /* blocks per peer: the remote group's on an intercommunicator (never in place there) */
    int in_place = send.buf == MPI_IN_PLACE && !c->inter, ns = gather ? 1 : c->rsize;
    rmpi_coll_blk_t *sb = NULL, *rb = NULL;
    if ((!in_place && (rc = side_blocks(&k, &send, ns, gather ? RMPI_COLL_REGULAR : form, 0, &sb))) ||
        (rc = side_blocks(&k, &recv, c->rsize, form, 1, &rb)) || (rc = check_alias(&k, &send, sb, ns, &recv))) {
        free(sb);
        free(rb);
        return rc;
    }
    RMPI_LOCK();
    rmpi_nbc_t *s = gather ? rmpi_coll_allgather_sched(c, sb, rb, form) : rmpi_coll_alltoall_sched(c, sb, rb, form);
    free(sb);
    free(rb);
    return finish(&k, s);
}

/* ---- neighbourhood collectives ---- */

/* Whether c's topology is Cartesian (neighbor.c's pairing rule). comm.h says nothing of the
 * topology's kind until topologies land; then: c->topo && c->topo->kind == MPI_CART. */
static int cartesian(const rmpi_comm_t *c) { return c->topo && c->topo->kind == MPI_CART; }

/* gather: the one send block goes to every destination (Neighbor_allgather(v)). */
static int neighbor(const char *func, side_t send, side_t recv, MPI_Comm comm, int sform, int rform, int gather,
                    int mode, MPI_Request *req)
{
    call_t k;
    int rc = begin(&k, func, comm, mode, req);
    if (rc)
        return rc;
    rmpi_comm_t *c = k.c;
    if ((rc = rmpi_api_coll_intra_only(func, c)))
        return rc;
    int indeg, outdeg;
    const int *src, *dst;
    if (rmpi_comm_neighbors(c, &indeg, &src, &outdeg, &dst))
        return rmpi_api_error(c, MPI_ERR_TOPOLOGY, func,
                              "the communicator has no topology (create one with MPI_Cart_create, "
                              "MPI_Graph_create or MPI_Dist_graph_create)");
    rmpi_coll_blk_t *sb = NULL, *rb = NULL;
    if ((rc = side_blocks(&k, &send, gather ? 1 : outdeg, sform, 0, &sb)) ||
        (rc = side_blocks(&k, &recv, indeg, rform, 1, &rb)) ||
        (rc = check_alias(&k, &send, sb, gather ? 1 : outdeg, &recv))) {
        free(sb);
        free(rb);
        return rc;
    }
    if (gather) {
        sb = rmpi_xrealloc(sb, (size_t)(outdeg ? outdeg : 1) * sizeof *sb);
        for (int j = 1; j < outdeg; j++)
            sb[j] = sb[0];
    }
    RMPI_LOCK();
    rmpi_nbc_t *s = rmpi_coll_neighbor_sched(c, indeg, src, rb, outdeg, dst, sb, cartesian(c));
    free(sb);
    free(rb);
    return finish(&k, s);
}

/* ---- the bindings ---- */

#define R RMPI_COLL_REGULAR
#define V RMPI_COLL_V
#define W RMPI_COLL_W

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gather(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), root, comm, R,
                  RUN, NULL);
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return gather(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), root, comm, R,
                  START, request);
}

int MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return gather(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), root, comm, R,
                  PERSIST, request);
}

int MPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                 MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gather(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), root, comm, R,
                  RUN, NULL);
}

int MPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return gather(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), root, comm, R,
                  START, request);
}

int MPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                      MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    return gather(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), root, comm, R,
                  PERSIST, request);
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gather(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 0, displs, 0, recvtype),
                  root, comm, V, RUN, NULL);
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return gather(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 0, displs, 0, recvtype),
                  root, comm, V, START, request);
}

int MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                     MPI_Info info, MPI_Request *request)
{
    return gather(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 0, displs, 0, recvtype),
                  root, comm, V, PERSIST, request);
}

int MPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm)
{
    return gather(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 1, displs, 1, recvtype),
                  root, comm, V, RUN, NULL);
}

int MPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                   MPI_Comm comm, MPI_Request *request)
{
    return gather(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 1, displs, 1, recvtype),
                  root, comm, V, START, request);
}

int MPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                       const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return gather(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 1, displs, 1, recvtype),
                  root, comm, V, PERSIST, request);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return scatter(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), root, comm, R,
                   RUN, NULL);
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return scatter(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), root, comm, R,
                   START, request);
}

int MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return scatter(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), root, comm, R,
                   PERSIST, request);
}

int MPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return scatter(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), root, comm, R,
                   RUN, NULL);
}

int MPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return scatter(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), root, comm, R,
                   START, request);
}

int MPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                       MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    return scatter(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), root, comm, R,
                   PERSIST, request);
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return scatter(__func__, VEC(sendbuf, sendcounts, 0, displs, 0, sendtype), REG(recvbuf, recvcount, recvtype),
                   root, comm, V, RUN, NULL);
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return scatter(__func__, VEC(sendbuf, sendcounts, 0, displs, 0, sendtype), REG(recvbuf, recvcount, recvtype),
                   root, comm, V, START, request);
}

int MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                      void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    return scatter(__func__, VEC(sendbuf, sendcounts, 0, displs, 0, sendtype), REG(recvbuf, recvcount, recvtype),
                   root, comm, V, PERSIST, request);
}

int MPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                   MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                   MPI_Comm comm)
{
    return scatter(__func__, VEC(sendbuf, sendcounts, 1, displs, 1, sendtype), REG(recvbuf, recvcount, recvtype),
                   root, comm, V, RUN, NULL);
}

int MPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                    MPI_Comm comm, MPI_Request *request)
{
    return scatter(__func__, VEC(sendbuf, sendcounts, 1, displs, 1, sendtype), REG(recvbuf, recvcount, recvtype),
                   root, comm, V, START, request);
}

int MPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return scatter(__func__, VEC(sendbuf, sendcounts, 1, displs, 1, sendtype), REG(recvbuf, recvcount, recvtype),
                   root, comm, V, PERSIST, request);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, 1, RUN,
               NULL);
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, 1, START,
               request);
}

int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, 1,
               PERSIST, request);
}

int MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, 1, RUN,
               NULL);
}

int MPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, 1, START,
               request);
}

int MPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                         MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, 1,
               PERSIST, request);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 0, displs, 0, recvtype), comm,
               V, 1, RUN, NULL);
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request *request)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 0, displs, 0, recvtype), comm,
               V, 1, START, request);
}

int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 0, displs, 0, recvtype), comm,
               V, 1, PERSIST, request);
}

int MPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 1, displs, 1, recvtype), comm,
               V, 1, RUN, NULL);
}

int MPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request *request)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 1, displs, 1, recvtype), comm,
               V, 1, START, request);
}

int MPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 1, displs, 1, recvtype), comm,
               V, 1, PERSIST, request);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, 0, RUN,
               NULL);
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, 0, START,
               request);
}

int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, 0,
               PERSIST, request);
}

int MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, 0, RUN,
               NULL);
}

int MPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, 0, START,
               request);
}

int MPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                        MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    return all(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, 0,
               PERSIST, request);
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return all(__func__, VEC(sendbuf, sendcounts, 0, sdispls, 0, sendtype),
               VEC(recvbuf, recvcounts, 0, rdispls, 0, recvtype), comm, V, 0, RUN, NULL);
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request)
{
    return all(__func__, VEC(sendbuf, sendcounts, 0, sdispls, 0, sendtype),
               VEC(recvbuf, recvcounts, 0, rdispls, 0, recvtype), comm, V, 0, START, request);
}

int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return all(__func__, VEC(sendbuf, sendcounts, 0, sdispls, 0, sendtype),
               VEC(recvbuf, recvcounts, 0, rdispls, 0, recvtype), comm, V, 0, PERSIST, request);
}

int MPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                    MPI_Datatype recvtype, MPI_Comm comm)
{
    return all(__func__, VEC(sendbuf, sendcounts, 1, sdispls, 1, sendtype),
               VEC(recvbuf, recvcounts, 1, rdispls, 1, recvtype), comm, V, 0, RUN, NULL);
}

int MPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return all(__func__, VEC(sendbuf, sendcounts, 1, sdispls, 1, sendtype),
               VEC(recvbuf, recvcounts, 1, rdispls, 1, recvtype), comm, V, 0, START, request);
}

int MPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                         MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                         const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    return all(__func__, VEC(sendbuf, sendcounts, 1, sdispls, 1, sendtype),
               VEC(recvbuf, recvcounts, 1, rdispls, 1, recvtype), comm, V, 0, PERSIST, request);
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
                  void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
                  MPI_Comm comm)
{
    return all(__func__, VECW(sendbuf, sendcounts, 0, sdispls, 0, sendtypes),
               VECW(recvbuf, recvcounts, 0, rdispls, 0, recvtypes), comm, W, 0, RUN, NULL);
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                   const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
    return all(__func__, VECW(sendbuf, sendcounts, 0, sdispls, 0, sendtypes),
               VECW(recvbuf, recvcounts, 0, rdispls, 0, recvtypes), comm, W, 0, START, request);
}

int MPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                       const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return all(__func__, VECW(sendbuf, sendcounts, 0, sdispls, 0, sendtypes),
               VECW(recvbuf, recvcounts, 0, rdispls, 0, recvtypes), comm, W, 0, PERSIST, request);
}

int MPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return all(__func__, VECW(sendbuf, sendcounts, 1, sdispls, 1, sendtypes),
               VECW(recvbuf, recvcounts, 1, rdispls, 1, recvtypes), comm, W, 0, RUN, NULL);
}

int MPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
    return all(__func__, VECW(sendbuf, sendcounts, 1, sdispls, 1, sendtypes),
               VECW(recvbuf, recvcounts, 1, rdispls, 1, recvtypes), comm, W, 0, START, request);
}

int MPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                         const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                         const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    return all(__func__, VECW(sendbuf, sendcounts, 1, sdispls, 1, sendtypes),
               VECW(recvbuf, recvcounts, 1, rdispls, 1, recvtypes), comm, W, 0, PERSIST, request);
}

int MPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, R, 1,
                    RUN, NULL);
}

int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, R, 1,
                    START, request);
}

int MPI_Neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                MPI_Request *request)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, R, 1,
                    PERSIST, request);
}

int MPI_Neighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, R, 1,
                    RUN, NULL);
}

int MPI_Ineighbor_allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                              MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, R, 1,
                    START, request);
}

int MPI_Neighbor_allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, R, 1,
                    PERSIST, request);
}

int MPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 0, displs, 0, recvtype),
                    comm, R, V, 1, RUN, NULL);
}

int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 0, displs, 0, recvtype),
                    comm, R, V, 1, START, request);
}

int MPI_Neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request *request)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 0, displs, 0, recvtype),
                    comm, R, V, 1, PERSIST, request);
}

int MPI_Neighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                              MPI_Comm comm)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 1, displs, 1, recvtype),
                    comm, R, V, 1, RUN, NULL);
}

int MPI_Ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                               const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request *request)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 1, displs, 1, recvtype),
                    comm, R, V, 1, START, request);
}

int MPI_Neighbor_allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), VEC(recvbuf, recvcounts, 1, displs, 1, recvtype),
                    comm, R, V, 1, PERSIST, request);
}

int MPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, R, 0,
                    RUN, NULL);
}

int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, R, 0,
                    START, request);
}

int MPI_Neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, R, 0,
                    PERSIST, request);
}

int MPI_Neighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                            MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, R, 0,
                    RUN, NULL);
}

int MPI_Ineighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, R, 0,
                    START, request);
}

int MPI_Neighbor_alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    return neighbor(__func__, REG(sendbuf, sendcount, sendtype), REG(recvbuf, recvcount, recvtype), comm, R, R, 0,
                    PERSIST, request);
}

int MPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                           MPI_Comm comm)
{
    return neighbor(__func__, VEC(sendbuf, sendcounts, 0, sdispls, 0, sendtype),
                    VEC(recvbuf, recvcounts, 0, rdispls, 0, recvtype), comm, V, V, 0, RUN, NULL);
}

int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return neighbor(__func__, VEC(sendbuf, sendcounts, 0, sdispls, 0, sendtype),
                    VEC(recvbuf, recvcounts, 0, rdispls, 0, recvtype), comm, V, V, 0, START, request);
}

int MPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return neighbor(__func__, VEC(sendbuf, sendcounts, 0, sdispls, 0, sendtype),
                    VEC(recvbuf, recvcounts, 0, rdispls, 0, recvtype), comm, V, V, 0, PERSIST, request);
}

int MPI_Neighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                             const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    return neighbor(__func__, VEC(sendbuf, sendcounts, 1, sdispls, 1, sendtype),
                    VEC(recvbuf, recvcounts, 1, rdispls, 1, recvtype), comm, V, V, 0, RUN, NULL);
}

int MPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return neighbor(__func__, VEC(sendbuf, sendcounts, 1, sdispls, 1, sendtype),
                    VEC(recvbuf, recvcounts, 1, rdispls, 1, recvtype), comm, V, V, 0, START, request);
}

int MPI_Neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                  MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                                  const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    return neighbor(__func__, VEC(sendbuf, sendcounts, 1, sdispls, 1, sendtype),
                    VEC(recvbuf, recvcounts, 1, rdispls, 1, recvtype), comm, V, V, 0, PERSIST, request);
}

int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return neighbor(__func__, VECW(sendbuf, sendcounts, 0, sdispls, 1, sendtypes),
                    VECW(recvbuf, recvcounts, 0, rdispls, 1, recvtypes), comm, W, W, 0, RUN, NULL);
}

int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            MPI_Request *request)
{
    return neighbor(__func__, VECW(sendbuf, sendcounts, 0, sdispls, 1, sendtypes),
                    VECW(recvbuf, recvcounts, 0, rdispls, 1, recvtypes), comm, W, W, 0, START, request);
}

int MPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                                const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                                const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    return neighbor(__func__, VECW(sendbuf, sendcounts, 0, sdispls, 1, sendtypes),
                    VECW(recvbuf, recvcounts, 0, rdispls, 1, recvtypes), comm, W, W, 0, PERSIST, request);
}

int MPI_Neighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    return neighbor(__func__, VECW(sendbuf, sendcounts, 1, sdispls, 1, sendtypes),
                    VECW(recvbuf, recvcounts, 1, rdispls, 1, recvtypes), comm, W, W, 0, RUN, NULL);
}

int MPI_Ineighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                              const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                              const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                              MPI_Request *request)
{
    return neighbor(__func__, VECW(sendbuf, sendcounts, 1, sdispls, 1, sendtypes),
                    VECW(recvbuf, recvcounts, 1, rdispls, 1, recvtypes), comm, W, W, 0, START, request);
}

int MPI_Neighbor_alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                                  const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                                  MPI_Info info, MPI_Request *request)
{
    return neighbor(__func__, VECW(sendbuf, sendcounts, 1, sdispls, 1, sendtypes),
                    VECW(recvbuf, recvcounts, 1, rdispls, 1, recvtypes), comm, W, W, 0, PERSIST, request);
}
