/* The target side: a core progress hook, registered while any window exists, receives
 * each window's active messages and handles them one at a time in arrival order
 * (docs/wire/rma.md); the lock manager queues lock requests that cannot be granted. */
#include "rma_impl.h"

typedef struct incoming {
    rmpi_list_t link;
    rmpi_req_t *req;     /* receive of the message (eager: complete at once) */
    void *buf;
} incoming_t;

struct rmpi_win_lockq {
    rmpi_win_lockq_t *next;
    int origin, type;
    int32_t tag;
};

static rmpi_list_t wins = {&wins, &wins};
static int nwins;

static int rma_progress(void);

void rma_serve_add(rmpi_win_t *w)
{
    rmpi_list_push_back(&wins, &w->link);
    if (nwins++ == 0)
        rmpi_core_hook_add(rma_progress);
}

void rma_serve_remove(rmpi_win_t *w)
{
    rmpi_list_remove(&w->link);
    while (w->lockq) {
        rmpi_win_lockq_t *q = w->lockq;
        w->lockq = q->next;
        free(q);
    }
    if (--nwins == 0)
        rmpi_core_hook_remove(rma_progress);
}

static void ack(rmpi_win_t *w, int origin, int32_t tag)
{
    int32_t *e = rmpi_xmalloc(sizeof *e);
    *e = w->errs[origin];
    w->errs[origin] = 0;
    rma_send(w, origin, tag, e, sizeof *e);
}

/* ---- lock manager: shared locks coexist, an exclusive one is alone; FIFO order ---- */
static int lock_grantable(const rmpi_win_t *w, int type)
{
    return type == RMA_LOCK_EXCL ? !w->lock_excl && !w->lock_shared : !w->lock_excl;
}

static void lock_take(rmpi_win_t *w, int type)
{
    if (type == RMA_LOCK_EXCL)
        w->lock_excl = 1;
    else
        w->lock_shared++;
}

static void lock_request(rmpi_win_t *w, int origin, int type, int32_t tag)
{
    if (!w->lockq && lock_grantable(w, type)) {
        lock_take(w, type);
        ack(w, origin, tag);
        return;
    }
    rmpi_win_lockq_t *q = rmpi_xmalloc(sizeof *q), **p = &w->lockq;
    *q = (rmpi_win_lockq_t){NULL, origin, type, tag};
    while (*p)
        p = &(*p)->next;
    *p = q;
}

static void lock_release(rmpi_win_t *w, int type)
{
    if (type == RMA_LOCK_EXCL)
        w->lock_excl = 0;
    else if (w->lock_shared > 0)
        w->lock_shared--;
    while (w->lockq && lock_grantable(w, w->lockq->type)) {
        rmpi_win_lockq_t *q = w->lockq;
        w->lockq = q->next;
        lock_take(w, q->type);
        ack(w, q->origin, q->tag);
        free(q);
    }
}

/* ---- data access ---- */

/* The target memory of a message, or NULL when the range is outside the window (the
 * origin checks windows it knows the size of; dynamic windows are checked here). */
static char *target_base(rmpi_win_t *w, const rma_hdr_t *h, const rma_seg_t *segs)
{
    int64_t lo = 0, hi = (int64_t)h->bytes;
    if (h->nseg) {
        lo = INT64_MAX, hi = INT64_MIN;
        for (uint32_t i = 0; i < h->nseg; i++) {
            if (segs[i].off < lo)
                lo = segs[i].off;
            if (segs[i].off + (int64_t)segs[i].len > hi)
                hi = segs[i].off + (int64_t)segs[i].len;
        }
    }
    if (!h->bytes)
        return (char *)w->base;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* [a, b) may run over attached regions that touch each other (MPICH accepts such
         * accesses): follow them from a until b is covered or a gap shows. */
        uintptr_t a = (uintptr_t)(h->disp + (uint64_t)lo), b = (uintptr_t)(h->disp + (uint64_t)hi);
        for (int step = 0; step <= w->nregions; step++) {
            int i = 0;
            while (i < w->nregions && !(a >= w->regions[i].base && a < w->regions[i].base + w->regions[i].len))
                i++;
            if (i == w->nregions)
                return NULL;
            a = w->regions[i].base + w->regions[i].len;
            if (b <= a)
                return (char *)(uintptr_t)h->disp;
        }
        return NULL;
    }
    if ((int64_t)h->disp + lo < 0 || (uint64_t)((int64_t)h->disp + hi) > w->bytes)
        return NULL;
    return (char *)w->base + h->disp;
}

static void gather(const char *base, const rma_hdr_t *h, const rma_seg_t *segs, char *out)
{
    if (!h->nseg) {
        memcpy(out, base, h->bytes);
        return;
    }
    for (uint32_t i = 0; i < h->nseg; i++) {
        memcpy(out, base + segs[i].off, segs[i].len);
        out += segs[i].len;
    }
}

static void scatter(char *base, const rma_hdr_t *h, const rma_seg_t *segs, const char *in)
{
    if (!h->nseg) {
        memcpy(base, in, h->bytes);
        return;
    }
    for (uint32_t i = 0; i < h->nseg; i++) {
        memcpy(base + segs[i].off, in, segs[i].len);
        in += segs[i].len;
    }
}

static void accumulate(char *base, const rma_hdr_t *h, const rma_seg_t *segs, const char *data)
{
    MPI_Op op = (MPI_Op)(uintptr_t)h->op;
    MPI_Datatype basic = (MPI_Datatype)(uintptr_t)h->basic;
    if (op == MPI_NO_OP || !h->bytes)
        return;
    if (op == MPI_REPLACE) {
        scatter(base, h, segs, data);
        return;
    }
    size_t n = h->bytes / rmpi_dtype_size(rmpi_dtype_get(basic));
    if (!h->nseg) {
        rmpi_coll_op_apply(op, basic, data, base, n);
        return;
    }
    char *tmp = rmpi_xmalloc(h->bytes);
    gather(base, h, segs, tmp);
    rmpi_coll_op_apply(op, basic, data, tmp, n);
    scatter(base, h, segs, tmp);
    free(tmp);
}

static void handle(rmpi_win_t *w, int origin, char *msg, size_t len)
{
    rma_hdr_t *h = (rma_hdr_t *)(void *)msg;
    if (len < sizeof *h || h->version != RMA_WIRE_VERSION)
        rmpi_fatal("one-sided message of %zu bytes from rank %d of a window is not wire version %d "
                   "(docs/wire/rma.md); mixed RailMPI builds?", len, origin, RMA_WIRE_VERSION);
    const rma_seg_t *segs = (const rma_seg_t *)(void *)(msg + sizeof *h);
    const char *data = msg + sizeof *h + h->nseg * sizeof(rma_seg_t);
    char *base = NULL, *reply = NULL;
    size_t rlen = 0;
    switch (h->kind) {
    case AM_PUT:
    case AM_ACC:
    case AM_GET:
    case AM_GACC:
    case AM_CAS:
        base = target_base(w, h, segs);
        if (!base && h->bytes)
            w->errs[origin] = MPI_ERR_RMA_RANGE;
        if (h->kind == AM_GET || h->kind == AM_GACC || h->kind == AM_CAS) {
            rlen = h->bytes;
            reply = rmpi_xmalloc(rlen ? rlen : 1);
            memset(reply, 0, rlen);
            if (base)
                gather(base, h, segs, reply);
        }
        if (!base)
            break;
        if (h->kind == AM_PUT)
            scatter(base, h, segs, data);
        else if (h->kind == AM_ACC || h->kind == AM_GACC)
            accumulate(base, h, segs, data);
        else if (h->kind == AM_CAS && memcmp(reply, data + h->bytes, h->bytes) == 0) /* origin, then compare value */
            scatter(base, h, segs, data);
        break;
    case AM_LOCK:
        lock_request(w, origin, h->lock_type, h->reply_tag);
        return;
    case AM_UNLOCK:
        ack(w, origin, h->reply_tag);
        lock_release(w, h->lock_type);
        return;
    case AM_FLUSH:
        ack(w, origin, h->reply_tag);
        return;
    case AM_POST:
        w->posts[origin]++;
        return;
    case AM_COMPLETE:
        w->completes++;
        return;
    default:
        rmpi_fatal("one-sided message of unknown kind %d from rank %d of a window.", h->kind, origin);
    }
    if (reply)
        rma_send(w, origin, h->reply_tag, reply, rlen);
}

/* Take the window's new messages in arrival order; handle those at the head that have
 * fully landed (a rendezvous message holds back the ones behind it). */
static int serve(rmpi_win_t *w)
{
    int n = 0;
    rmpi_unexp_t *u;
    while ((u = rmpi_core_probe_find(w->comm->ctx, MPI_ANY_SOURCE, RMA_TAG_AM)) != NULL) {
        rmpi_core_unexp_take(u);
        incoming_t *m = rmpi_xmalloc(sizeof *m);
        m->buf = rmpi_xmalloc(u->len ? u->len : 1);
        m->req = rmpi_req_alloc(RMPI_REQ_RECV);
        m->req->buf = m->buf;
        m->req->len = u->len;
        m->req->ctx = w->comm->ctx;
        m->req->rank = u->src;
        m->req->tag = RMA_TAG_AM;
        rmpi_list_push_back(&w->incoming, &m->link);
        rmpi_core_mrecv(m->req, u);
        n++;
    }
    while (!rmpi_list_empty(&w->incoming)) {
        incoming_t *m = RMPI_CONTAINER_OF(w->incoming.next, incoming_t, link);
        if (!m->req->done)
            break;
        rmpi_list_remove(&m->link);
        handle(w, m->req->st_src, m->buf, m->req->st_bytes);
        rmpi_req_release(m->req);
        free(m->buf);
        free(m);
        n++;
    }
    return n;
}

static int rma_progress(void)
{
    static int busy;
    if (busy)
        return 0;
    busy = 1;
    int n = 0;
    rmpi_list_t *e;
    rmpi_list_for_each(e, &wins) n += serve(RMPI_CONTAINER_OF(e, rmpi_win_t, link));
    busy = 0;
    return n;
}
