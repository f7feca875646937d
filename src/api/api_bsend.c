/* Buffered mode: Buffer_attach/detach and Bsend. A buffered send copies the message into
 * the attached buffer (first fit), sends from the copy, and frees the space when the copy
 * has been delivered. */
#include "api_pt2pt.h"

#include <stdlib.h>
#include <string.h>

typedef struct bseg {
    struct bseg *next;
    size_t off, len;   /* bytes of the attached buffer in use, MPI_BSEND_OVERHEAD included */
    uint64_t id;       /* order of the Bsend, for flushes */
    char *heap;        /* MPI_BUFFER_AUTOMATIC: the copy's own allocation */
    rmpi_req_t *req;
} bseg_t;

typedef struct flush_wait {
    struct flush_wait *next;
    uint64_t upto;     /* complete when no message of an id <= upto is in flight */
    rmpi_req_t *req;   /* a generalized request (api_greq.c) */
} flush_wait_t;

/* A buffer attached to the process, to a communicator or to a session. */
struct rmpi_bpool {
    char *buf;
    size_t size;
    int automatic;     /* MPI_BUFFER_AUTOMATIC: each message gets its own allocation */
    bseg_t *segs;      /* sorted by offset */
    uint64_t next_id;
    flush_wait_t *flushes;
};

static rmpi_bpool_t *proc_pool;

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

int rmpi_api_bpool_attach(rmpi_bpool_t **slot, void *buf, size_t size, const char **why)
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

void rmpi_api_bpool_flush(rmpi_bpool_t *p)
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

MPI_Request rmpi_api_bpool_iflush(rmpi_bpool_t *p, rmpi_comm_t *c)
{
    RMPI_LOCK();
    if (p)
        reap(p);
    if (!p || !p->segs) {
        RMPI_UNLOCK();
        return rmpi_api_done_req(c);
    }
    flush_wait_t *f = rmpi_xmalloc(sizeof *f);
    f->upto = p->next_id;
    f->req = rmpi_api_greq_new(NULL, NULL, NULL, NULL, c);
    f->next = p->flushes;
    p->flushes = f;
    RMPI_UNLOCK();
    return rmpi_api_req_handle(f->req);
}

int rmpi_api_bpool_detach(rmpi_bpool_t **slot, void *addr, MPI_Count *size, const char **why)
{
    rmpi_bpool_t *p = *slot;
    if (!p) {
        *why = "no buffer is attached";
        return MPI_ERR_BUFFER;
    }
    rmpi_api_bpool_flush(p);
    *(void **)addr = p->automatic ? MPI_BUFFER_AUTOMATIC : p->buf;
    *size = (MPI_Count)p->size;
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

/* Attach and detach for the process (c NULL: errors go to MPI_COMM_WORLD's handler) and for
 * a communicator (its handler); the int and _c forms of MPI_Buffer_attach/detach and
 * MPI_Comm_attach/detach_buffer come from src/api/forms.txt (the end of this file). */
static int buffer_attach(const char *func, rmpi_comm_t *c, rmpi_bpool_t **slot, void *buffer, MPI_Count size)
{
    if (RMPI_UNLIKELY(size < 0))
        return rmpi_api_error(c, MPI_ERR_ARG, func, "size %lld is negative", (long long)size);
    const char *why = NULL;
    int rc = rmpi_api_bpool_attach(slot, buffer, (size_t)size, &why);
    return rc ? rmpi_api_error(c, rc, func, "%s", why) : MPI_SUCCESS;
}

/* An int form narrows *size unchecked: its buffer was attached through the int form, or
 * through a _c form with a size that fits. */
static int buffer_detach(const char *func, rmpi_comm_t *c, rmpi_bpool_t **slot, void *buffer_addr, MPI_Count *size)
{
    if (RMPI_UNLIKELY(!buffer_addr || !size))
        return rmpi_api_error(c, MPI_ERR_ARG, func, "buffer_addr and size must not be NULL");
    const char *why = NULL;
    int rc = rmpi_api_bpool_detach(slot, buffer_addr, size, &why);
    return rc ? rmpi_api_error(c, rc, func, "%s", why) : MPI_SUCCESS;
}

int MPI_Buffer_flush(void)
{
    RMPI_API_INIT_CHECK();
    rmpi_api_bpool_flush(proc_pool);
    return MPI_SUCCESS;
}

int MPI_Buffer_iflush(MPI_Request *request)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(request, NULL, MPI_ERR_ARG, "request must not be NULL");
    *request = rmpi_api_bpool_iflush(proc_pool, NULL);
    return MPI_SUCCESS;
}

/* ---- per communicator (MPI-4.1) ---- */

#define GET_COMM(c, h)                                                   \
    RMPI_API_INIT_CHECK();                                               \
    rmpi_comm_t *c = rmpi_comm_get(h);                                   \
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator")

int MPI_Comm_flush_buffer(MPI_Comm comm)
{
    GET_COMM(c, comm);
    rmpi_api_bpool_flush(c->bsend);
    return MPI_SUCCESS;
}

int MPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    GET_COMM(c, comm);
    RMPI_CHECK(request, c, MPI_ERR_ARG, "request must not be NULL");
    *request = rmpi_api_bpool_iflush(c->bsend, c);
    return MPI_SUCCESS;
}

/* MPI_Comm_free: the buffer goes with the communicator, once its messages are sent. */
void rmpi_api_bsend_comm_free(rmpi_comm_t *c)
{
    if (!c->bsend)
        return;
    void *addr;
    MPI_Count n;
    const char *why;
    rmpi_api_bpool_detach(&c->bsend, &addr, &n, &why);
}

int rmpi_api_bsend(const char *func, const void *buf, int count, rmpi_dtype_t *dt, int dest, int tag, rmpi_comm_t *c)
{
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    size_t bytes = (size_t)count * dt->size;
    /* Exactly what the standard tells users to provide per message: the bookkeeping lives
     * outside the buffer and packed bytes need no alignment (rounding up made a buffer of
     * size + MPI_BSEND_OVERHEAD too small; mpi4py's tests attach exactly that). */
    size_t need = bytes + MPI_BSEND_OVERHEAD;
    RMPI_LOCK();
    /* the communicator's buffer (MPI_Comm_attach_buffer), else the process's */
    rmpi_bpool_t *p = c->bsend ? c->bsend : proc_pool;
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
        RMPI_UNLOCK();
        return rmpi_api_error(c, MPI_ERR_BUFFER, func,
                              "the attached buffer (%zu bytes) has no room for %zu bytes plus MPI_BSEND_OVERHEAD; "
                              "attach a larger one with MPI_Buffer_attach or MPI_Comm_attach_buffer",
                              p ? p->size : 0, bytes);
    }
    bseg_t *s = rmpi_xmalloc(sizeof *s);
    s->off = off;
    s->len = need;
    s->heap = heap;
    s->id = ++p->next_id;
    s->next = *pp;
    *pp = s;
    rmpi_dtype_pack(buf, (size_t)count, dt, 0, copy, bytes);
    rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_SEND);
    r->buf = copy;
    r->len = bytes;
    r->rank = rmpi_comm_world_rank(c, dest);
    r->ctx = c->ctx;
    r->tag = tag;
    r->src = c->rank;
    r->ucomm = c;
    r->user2 = p;
    r->on_complete = bsend_done;
    s->req = r;
    rmpi_core_isend(r);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

#include "api/api_bsend.forms.h"
