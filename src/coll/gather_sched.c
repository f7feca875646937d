/* Blocks through schedules for the data-movement collectives (gather_sched.h). */
#include "gather_sched.h"

#include "../datatype/datatype.h"

#include <stdlib.h>

struct gx_later {
    const void *packed;
    rmpi_coll_blk_t blk;
};

static char gx_empty; /* address of empty blocks that name no buffer */

char *gx_contig(const rmpi_coll_blk_t *b)
{
    if (!gx_bytes(b))
        return b->buf ? (char *)b->buf : &gx_empty;
    return rmpi_dtype_is_contig(b->dt, b->count) ? rmpi_dtype_contig_ptr(b->buf, b->dt) : NULL;
}

char *gx_contig_all(const rmpi_coll_blk_t *b, int n)
{
    char *start = NULL, *next = NULL;
    for (int i = 0; i < n; i++) {
        size_t len = gx_bytes(&b[i]);
        if (!len)
            continue;
        char *p = gx_contig(&b[i]);
        if (!p || (next && p != next))
            return NULL;
        if (!start)
            start = p;
        next = p + len;
    }
    return start ? start : &gx_empty;
}

rmpi_coll_blk_t gx_bytes_blk(void *p, size_t n)
{
    rmpi_coll_blk_t b = {p, n, rmpi_dtype_get(MPI_BYTE)};
    return b;
}

void gx_init(gx_t *g, rmpi_comm_t *c)
{
    *g = (gx_t){0};
    g->s = rmpi_nbc_new(c);
    g->me = c->rank;
    g->n = c->size;
}

void gx_round(gx_t *g)
{
    rmpi_nbc_round(g->s);
    for (size_t i = 0; i < g->nlater; i++)
        rmpi_nbc_unpack(g->s, g->later[i].packed, g->later[i].blk.buf, g->later[i].blk.count, g->later[i].blk.dt);
    g->nlater = 0;
}

rmpi_nbc_t *gx_end(gx_t *g)
{
    gx_round(g);
    free(g->later);
    return g->s;
}

void gx_pack(gx_t *g, const rmpi_coll_blk_t *b, void *packed)
{
    char *p = gx_contig(b);
    if (p)
        rmpi_nbc_copy(g->s, p, packed, gx_bytes(b));
    else
        rmpi_nbc_pack(g->s, b->buf, b->count, b->dt, packed);
}

void gx_put(gx_t *g, const rmpi_coll_blk_t *b, void *slot, size_t room)
{
    if (gx_bytes(b) == room) {
        gx_pack(g, b, slot);
        return;
    }
    rmpi_nbc_recv(g->s, slot, room, g->me);
    gx_send(g, b, g->me);
}

void gx_unpack(gx_t *g, const void *packed, const rmpi_coll_blk_t *b)
{
    char *p = gx_contig(b);
    if (p)
        rmpi_nbc_copy(g->s, packed, p, gx_bytes(b));
    else
        rmpi_nbc_unpack(g->s, packed, b->buf, b->count, b->dt);
}

void gx_send(gx_t *g, const rmpi_coll_blk_t *b, int peer)
{
    if (peer == MPI_PROC_NULL)
        return;
    char *p = gx_contig(b);
    if (!p) {
        /* the same block to several peers (allgather, neighbours) is packed once */
        if (!g->packed || g->packed_blk.buf != b->buf || g->packed_blk.count != b->count || g->packed_blk.dt != b->dt) {
            g->packed = rmpi_nbc_tmp(g->s, gx_bytes(b));
            g->packed_blk = *b;
            rmpi_nbc_pack(g->s, b->buf, b->count, b->dt, g->packed);
        }
        p = g->packed;
    }
    rmpi_nbc_send(g->s, p, gx_bytes(b), peer);
}

void gx_recv_at(gx_t *g, const rmpi_coll_blk_t *b, void *at, int peer)
{
    if (peer == MPI_PROC_NULL)
        return;
    size_t len = gx_bytes(b);
    rmpi_nbc_recv(g->s, at, len, peer);
    if (at == gx_contig(b) || !len)
        return;
    if (g->nlater == g->caplater) {
        g->caplater = g->caplater ? 2 * g->caplater : 8;
        g->later = rmpi_xrealloc(g->later, g->caplater * sizeof *g->later);
    }
    g->later[g->nlater++] = (gx_later_t){at, *b};
}

void gx_recv(gx_t *g, const rmpi_coll_blk_t *b, int peer)
{
    char *p = gx_contig(b);
    gx_recv_at(g, b, p ? p : rmpi_nbc_tmp(g->s, gx_bytes(b)), peer);
}

void gx_copy(gx_t *g, const rmpi_coll_blk_t *from, const rmpi_coll_blk_t *to)
{
    size_t len = gx_bytes(from);
    if (len != gx_bytes(to)) {
        /* mismatched signatures: let the receive path judge (truncation or short data) */
        gx_recv(g, to, g->me);
        gx_send(g, from, g->me);
        return;
    }
    char *src = gx_contig(from), *dst = gx_contig(to);
    if (src)
        gx_unpack(g, src, to);
    else if (dst)
        gx_pack(g, from, dst);
    else {
        void *tmp = rmpi_nbc_tmp(g->s, len);
        rmpi_nbc_pack(g->s, from->buf, from->count, from->dt, tmp);
        rmpi_nbc_unpack(g->s, tmp, to->buf, to->count, to->dt);
    }
}
