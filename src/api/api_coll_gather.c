/* Bindings of the data-movement collectives: Gather(v), Scatter(v), Allgather(v),
 * Alltoall(v/w) and the neighbourhood ones. A binding describes each side of the call
 * (buffer, counts, displacements, types) as a side_t; one function per family checks the
 * sides, turns them into block arrays (coll.h rmpi_coll_blk_t) and builds the schedule.
 * The public forms (blocking, MPI_I*, *_init, each with its _c) are generated from
 * src/api/forms.txt and included at the end. */
#include "api_coll.h"

#include <limits.h>
#include <stdlib.h>

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

/* The array's width comes from its C type: the int and _c forms build the same side_t. */
#define ARR(a)                         \
    {                                  \
        (a), sizeof *(a) > sizeof(int) \
    }
#define REG(buf, count, type) ((side_t){(buf), (count), {NULL, 0}, {NULL, 0}, &(type)})
#define VEC(buf, counts, displs, type) ((side_t){(buf), 0, ARR(counts), ARR(displs), &(type)})
#define VECW(buf, counts, displs, types) ((side_t){(buf), 0, ARR(counts), ARR(displs), (types)})

typedef struct call {
    const char *func;
    rmpi_comm_t *c;
    int mode;
    MPI_Request *req;
} call_t;

#define CALL(func, c, req, mode) ((call_t){(func), (c), (mode), (req)})

/* The point-to-point buffer checks for a count of any width. */
static int check_buf(const call_t *k, const void *buf, long long count, MPI_Datatype type, rmpi_dtype_t **dt)
{
    return rmpi_api_check_buf(k->func, k->c, buf, count, type, dt);
}

static const char *side_name(int recv) { return recv ? "recv" : "send"; }

/* Check a side of nblk blocks in the given form and build its blocks: *out is few when
 * they fit its nfew entries (a small blocking call then allocates nothing: malloc and
 * free of the two sides were a fifth of a 2-rank 8 B Alltoall's instructions), else
 * allocated (free it with blk_free). */
static int side_blocks(const call_t *k, const side_t *sd, int nblk, int form, int recv, rmpi_coll_blk_t **out,
                       rmpi_coll_blk_t *few, int nfew)
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
    rmpi_coll_blk_t *b = nfew && nblk <= nfew ? few : rmpi_xmalloc((size_t)(nblk ? nblk : 1) * sizeof *b);
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

static void blk_free(rmpi_coll_blk_t *b, const rmpi_coll_blk_t *few)
{
    if (b != few)
        free(b);
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

/* Lock held: run the schedule (blocking) or hand it over as a request; drops the lock.
 * s == NULL: the call ran without one (shared memory) and rc is its result. */
static int finish_rc(const call_t *k, rmpi_nbc_t *s, int rc)
{
    if (s && k->mode == RMPI_API_RUN)
        rc = rmpi_nbc_run(s);
    else if (s) {
        rmpi_api_coll_request(k->c, s, k->req, k->mode == RMPI_API_PERSIST);
        rc = 0;
    }
    RMPI_UNLOCK();
    if (rc == MPI_ERR_TRUNCATE)
        return rmpi_api_error(k->c, rc, k->func,
                              "data arrived that is larger than its receive buffer (counts or types of the ranks "
                              "do not match)");
    return rc ? rmpi_api_error(k->c, rc, k->func, "the collective failed") : MPI_SUCCESS;
}

static int finish(const call_t *k, rmpi_nbc_t *s) { return finish_rc(k, s, 0); }

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
    rmpi_coll_blk_t *ob = NULL, *mb = NULL, ofew[1], mfew[8]; /* the callees copy what they keep */
    if (has_one && (rc = side_blocks(k, one, 1, RMPI_COLL_REGULAR, scatter, &ob, ofew, 1)))
        return rc;
    if (is_root && ((rc = side_blocks(k, many, c->rsize, form, !scatter, &mb, mfew, 8)) ||
                    (has_one && (rc = check_alias(k, scatter ? many : one, scatter ? mb : ob, scatter ? c->rsize : 1,
                                                  scatter ? one : many))))) {
        blk_free(ob, ofew);
        blk_free(mb, mfew);
        return rc;
    }
    RMPI_LOCK();
    if (k->mode == RMPI_API_RUN &&
        (rc = rmpi_coll_rooted_now(c, ob, mb, root, form, scatter)) != RMPI_COLL_SHM_DECLINED) {
        blk_free(ob, ofew);
        blk_free(mb, mfew);
        return finish_rc(k, NULL, rc);
    }
    rmpi_nbc_t *s =
        scatter ? rmpi_coll_scatter_sched(c, mb, ob, root, form) : rmpi_coll_gather_sched(c, ob, mb, root, form);
    blk_free(ob, ofew);
    blk_free(mb, mfew);
    return finish(k, s);
}

static int gather(const char *func, rmpi_comm_t *c, side_t send, side_t recv, int root, int form, MPI_Request *req,
                  int mode)
{
    call_t k = CALL(func, c, req, mode);
    return rooted(&k, &send, &recv, root, form, 0);
}

static int scatter(const char *func, rmpi_comm_t *c, side_t send, side_t recv, int root, int form, MPI_Request *req,
                   int mode)
{
    call_t k = CALL(func, c, req, mode);
    return rooted(&k, &recv, &send, root, form, 1);
}

/* ---- Allgather(v), Alltoall(v/w) ---- */

/* allgather: send is one block; alltoall: n blocks in `form`. Either may be in place. */
static int all(const char *func, rmpi_comm_t *c, side_t send, side_t recv, int form, int gather, MPI_Request *req,
               int mode)
{
    call_t k = CALL(func, c, req, mode);
    int rc;
    /* blocks per peer: the remote group's on an intercommunicator (never in place there) */
    int in_place = send.buf == MPI_IN_PLACE && !c->inter, ns = gather ? 1 : c->rsize;
    rmpi_coll_blk_t *sb = NULL, *rb = NULL, sfew[8], rfew[8]; /* the callees copy what they keep */
    if ((!in_place && (rc = side_blocks(&k, &send, ns, gather ? RMPI_COLL_REGULAR : form, 0, &sb, sfew, 8))) ||
        (rc = side_blocks(&k, &recv, c->rsize, form, 1, &rb, rfew, 8)) ||
        (rc = check_alias(&k, &send, sb, ns, &recv))) {
        blk_free(sb, sfew);
        blk_free(rb, rfew);
        return rc;
    }
    RMPI_LOCK();
    rmpi_nbc_t *s = NULL;
    rc = RMPI_COLL_SHM_DECLINED;
    if (mode == RMPI_API_RUN)
        rc = gather ? rmpi_coll_shm_allgather(c, sb, rb, form) : rmpi_coll_shm_alltoall(c, sb, rb, form);
    else
        s = gather ? rmpi_coll_shm_allgather_sched(c, sb, rb, form) : rmpi_coll_shm_alltoall_sched(c, sb, rb, form);
    if (!s && rc == RMPI_COLL_SHM_DECLINED)
        s = gather ? rmpi_coll_allgather_sched(c, sb, rb, form) : rmpi_coll_alltoall_sched(c, sb, rb, form);
    blk_free(sb, sfew);
    blk_free(rb, rfew);
    return finish_rc(&k, s, rc);
}

/* ---- neighbourhood collectives ---- */

/* Whether c's topology is Cartesian (neighbor.c's pairing rule). comm.h says nothing of the
 * topology's kind until topologies land; then: c->topo && c->topo->kind == MPI_CART. */
static int cartesian(const rmpi_comm_t *c) { return c->topo && c->topo->kind == MPI_CART; }

/* gather: the one send block goes to every destination (Neighbor_allgather(v)). */
static int neighbor(const char *func, rmpi_comm_t *c, side_t send, side_t recv, int sform, int rform, int gather,
                    MPI_Request *req, int mode)
{
    call_t k = CALL(func, c, req, mode);
    int rc;
    if ((rc = rmpi_api_coll_intra_only(func, c)))
        return rc;
    int indeg, outdeg;
    const int *src, *dst;
    if (rmpi_comm_neighbors(c, &indeg, &src, &outdeg, &dst))
        return rmpi_api_error(c, MPI_ERR_TOPOLOGY, func,
                              "the communicator has no topology (create one with MPI_Cart_create, "
                              "MPI_Graph_create or MPI_Dist_graph_create)");
    rmpi_coll_blk_t *sb = NULL, *rb = NULL;
    if ((rc = side_blocks(&k, &send, gather ? 1 : outdeg, sform, 0, &sb, NULL, 0)) ||
        (rc = side_blocks(&k, &recv, indeg, rform, 1, &rb, NULL, 0)) ||
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

#define R RMPI_COLL_REGULAR
#define V RMPI_COLL_V
#define W RMPI_COLL_W

#include "api/api_coll_gather.forms.h"
