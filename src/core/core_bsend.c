/* Buffered mode: the pools of attached buffers and the sends from them. A buffered send
 * packs the message into the pool (first fit), sends from the copy, and frees the space
 * when the copy has been delivered. The bindings keep the slots (the process's here, a
 * communicator's or a session's in their objects) and report the errors. */
#include "core_impl.h"

#include <stdlib.h>

typedef struct bseg {
    struct bseg *next;
    size_t off, len; /* bytes of the attached buffer in use, MPI_BSEND_OVERHEAD included */
    uint64_t id;     /* order of the Bsend, for flushes */
    char *heap;      /* MPI_BUFFER_AUTOMATIC: the copy's own allocation */
    rmpi_req_t *req;
} bseg_t;

typedef struct flush_wait {
    struct flush_wait *next;
    uint64_t upto;   /* complete when no message of an id <= upto is in flight */
    rmpi_req_t *req; /* made by the caller (a generalized request) */
} flush_wait_t;

struct rmpi_bpool {
    char *buf;
    size_t size;
    int automatic; /* MPI_BUFFER_AUTOMATIC: each message gets its own allocation */
    bseg_t *segs;  /* sorted by offset */
    uint64_t next_id;
    flush_wait_t *flushes;
};

rmpi_bpool_t *rmpi_core_bpool_proc;

static void reap(rmpi_bpool_t *p)
{
    for (bseg_t **pp = &p->segs; *pp;) {
        bseg_t *s = *pp;
        if (s->req->done) {
            rmpi_req_release(s->req);
            *pp = s->next;
            free(s->heap);
            free(s);
        } else {
            pp = &s->next;
        }
    }
}

/* Called as each buffered send completes (inside progress, before its done flag is set):
 * flushes waiting on nothing older are complete. */
static void bsend_done(rmpi_req_t *r)
{
    rmpi_bpool_t *p = r->user2;
    for (flush_wait_t **fp = &p->flushes; *fp;) {
        flush_wait_t *f = *fp;
        int busy = 0;
        for (bseg_t *s = p->segs; s && !busy; s = s->next)
            busy = s->id <= f->upto && s->req != r && !s->req->done;
        if (busy) {
            fp = &f->next;
            continue;
        }
        *fp = f->next;
        rmpi_req_complete(f->req);
        free(f);
    }
}

int rmpi_core_bpool_attach(rmpi_bpool_t **slot, void *buf, size_t size, const char **why)
{
    if (*slot) {
        *why = "a buffer is already attached (detach it first)";
        return MPI_ERR_BUFFER;
    }
    if (!buf && size) {
        *why = "buffer is NULL";
        return MPI_ERR_BUFFER;
    }
    rmpi_bpool_t *p = rmpi_xcalloc(1, sizeof *p);
    p->automatic = buf == MPI_BUFFER_AUTOMATIC;
    p->buf = p->automatic ? NULL : buf;
    p->size = p->automatic ? 0 : size;
    *slot = p;
    return MPI_SUCCESS;
}

void rmpi_core_bpool_flush(rmpi_bpool_t *p)
{
    if (!p)
        return;
    RMPI_LOCK();
    /* the standard: every buffered message has been transmitted when this returns */
    unsigned idle = 0;
    for (reap(p); p->segs; reap(p))
        rmpi_core_wait_step(&idle);
    RMPI_UNLOCK();
}

int rmpi_core_bpool_iflush(rmpi_bpool_t *p, rmpi_req_t *req)
{
    if (p)
        reap(p);
    if (!p || !p->segs)
        return 0;
    flush_wait_t *f = rmpi_xmalloc(sizeof *f);
    f->upto = p->next_id;
    f->req = req;
    f->next = p->flushes;
    p->flushes = f;
    return 1;
}

int rmpi_core_bpool_detach(rmpi_bpool_t **slot, void **buf, size_t *size, const char **why)
{
    rmpi_bpool_t *p = *slot;
    if (!p) {
        *why = "no buffer is attached";
        return MPI_ERR_BUFFER;
    }
    rmpi_core_bpool_flush(p);
    *buf = p->automatic ? MPI_BUFFER_AUTOMATIC : p->buf;
    *size = p->size;
    RMPI_LOCK();
    while (p->flushes) { /* all sent: pending Iflush requests are complete too */
        flush_wait_t *f = p->flushes;
        p->flushes = f->next;
        rmpi_req_complete(f->req);
        free(f);
    }
    RMPI_UNLOCK();
    free(p);
    *slot = NULL;
    return MPI_SUCCESS;
}

int rmpi_core_bsend(rmpi_bpool_t *pool, int dest, uint32_t ctx, int src, int tag, const void *buf, size_t count,
                    const void *type, size_t bytes, size_t *size)
{
    /* Exactly what the standard tells users to provide per message: the bookkeeping lives
     * outside the buffer and packed bytes need no alignment (rounding up made a buffer of
     * size + MPI_BSEND_OVERHEAD too small; mpi4py's tests attach exactly that). */
    size_t need = bytes + MPI_BSEND_OVERHEAD;
    /* the communicator's buffer (MPI_Comm_attach_buffer), else the process's */
    rmpi_bpool_t *p = pool ? pool : rmpi_core_bpool_proc;
    if (p)
        reap(p);
    size_t off = 0;
    bseg_t **pp = p ? &p->segs : NULL;
    char *copy = NULL, *heap = NULL;
    if (p && p->automatic) {
        copy = heap = rmpi_xmalloc(bytes ? bytes : 1);
    } else if (p) {
        while (*pp && (*pp)->off < off + need) {
            off = (*pp)->off + (*pp)->len;
            pp = &(*pp)->next;
        }
        if (off + need <= p->size)
            copy = p->buf + off;
    }
    if (!copy) {
        *size = p ? p->size : 0;
        return MPI_ERR_BUFFER;
    }
    bseg_t *s = rmpi_xmalloc(sizeof *s);
    s->off = off;
    s->len = need;
    s->heap = heap;
    s->id = ++p->next_id;
    s->next = *pp;
    *pp = s;
    rmpi_core_types->pack(buf, count, type, 0, copy, bytes);
    rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_SEND);
    r->buf = copy;
    r->len = bytes;
    r->rank = dest;
    r->ctx = ctx;
    r->tag = tag;
    r->src = src;
    r->user2 = p;
    r->on_complete = bsend_done;
    s->req = r;
    rmpi_core_isend(r);
    return MPI_SUCCESS;
}
