/* Buffered mode: Buffer_attach/detach and Bsend. A buffered send copies the message into
 * the attached buffer (first fit), sends from the copy, and frees the space when the copy
 * has been delivered. */
#include "api_pt2pt.h"

#include <stdlib.h>
#include <string.h>

typedef struct bseg {
    struct bseg *next;
    size_t off, len;   /* bytes of the attached buffer in use, MPI_BSEND_OVERHEAD included */
    rmpi_req_t *req;
} bseg_t;

static char *bbuf;
static size_t bsize;
static bseg_t *bsegs;   /* sorted by offset */

int MPI_Buffer_attach(void *buffer, int size)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(size >= 0, NULL, MPI_ERR_ARG, "size %d is negative", size);
    RMPI_CHECK(buffer || size == 0, NULL, MPI_ERR_BUFFER, "buffer is NULL");
    RMPI_CHECK(!bbuf, NULL, MPI_ERR_BUFFER, "a buffer is already attached (detach it first)");
    bbuf = buffer;
    bsize = (size_t)size;
    return MPI_SUCCESS;
}

static void reap(void)
{
    for (bseg_t **pp = &bsegs; *pp;) {
        bseg_t *s = *pp;
        if (s->req->done) {
            rmpi_req_release(s->req);
            *pp = s->next;
            free(s);
        } else {
            pp = &s->next;
        }
    }
}

int MPI_Buffer_detach(void *buffer_addr, int *size)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(buffer_addr && size, NULL, MPI_ERR_ARG, "buffer_addr and size must not be NULL");
    RMPI_LOCK();
    /* the standard: detach blocks until every buffered message has been transmitted */
    unsigned idle = 0;
    for (reap(); bsegs; reap())
        rmpi_core_wait_step(&idle);
    RMPI_UNLOCK();
    *(void **)buffer_addr = bbuf;
    *size = (int)bsize;
    bbuf = NULL;
    bsize = 0;
    return MPI_SUCCESS;
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
    reap();
    size_t off = 0;
    bseg_t **pp = &bsegs;
    while (*pp && (*pp)->off < off + need) {
        off = (*pp)->off + (*pp)->len;
        pp = &(*pp)->next;
    }
    if (!bbuf || off + need > bsize) {
        RMPI_UNLOCK();
        return rmpi_api_error(c, MPI_ERR_BUFFER, func,
                              "the attached buffer (%zu bytes) has no room for %zu bytes plus MPI_BSEND_OVERHEAD; "
                              "attach a larger one with MPI_Buffer_attach",
                              bsize, bytes);
    }
    bseg_t *s = rmpi_xmalloc(sizeof *s);
    s->off = off;
    s->len = need;
    s->next = *pp;
    *pp = s;
    char *copy = bbuf + off;
    rmpi_dtype_pack(buf, (size_t)count, dt, 0, copy, bytes);
    rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_SEND);
    r->buf = copy;
    r->len = bytes;
    r->rank = rmpi_comm_world_rank(c, dest);
    r->ctx = c->ctx;
    r->tag = tag;
    r->src = c->rank;
    r->ucomm = c;
    s->req = r;
    rmpi_core_isend(r);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}
