/* Segment iterator: the contiguous pieces of (buf, count, dt) as an iovec list, so a
 * provider can gather a non-contiguous send straight from the user's buffer: the flattened
 * datatype handed down as a vector list instead of a packed copy (Huang et al., 'Design
 * Alternatives and Performance Trade-offs for Implementing MPI-2 over InfiniBand', sec. 3.2). */
#include "dtype_impl.h"

#include "../core/core.h"

typedef struct iter_out {
    struct iovec *iov;
    int n, max;
    size_t pos;  /* stream byte where the next piece starts */
    size_t left; /* stream bytes still wanted */
} iter_out_t;

/* Add one piece, merged into the last segment when it starts where that one ends.
 * Returns 1 when the walk must stop: the list is full and the piece is not adjacent
 * (it is left for the next call), or every wanted byte is in. */
static int put(iter_out_t *o, char *p, size_t len)
{
    if (len > o->left)
        len = o->left;
    struct iovec *last = o->n ? &o->iov[o->n - 1] : NULL;
    if (last && (char *)last->iov_base + last->iov_len == p) {
        last->iov_len += len;
    } else {
        if (o->n == o->max)
            return 1;
        o->iov[o->n++] = (struct iovec){p, len};
    }
    o->pos += len;
    o->left -= len;
    return o->left == 0;
}

/* Pieces of `count` elements of dt at buf from stream byte `off` on, in type-map order;
 * nested runs recurse into their sub type. Returns 1 when put() says stop. */
static int walk(iter_out_t *o, char *buf, size_t count, const rmpi_dtype_t *dt, size_t off)
{
    if (!dt->size)
        return 0;
    size_t elem = off / dt->size, within = off % dt->size;
    for (; elem < count; elem++, within = 0) {
        char *base = buf + (MPI_Aint)elem * dt->extent;
        size_t s = within ? rmpi_dtype_seg_find(dt, within) : 0;
        size_t rel = within - dt->segs[s].pos;
        size_t k = rel / dt->segs[s].len, inner = rel % dt->segs[s].len;
        for (; s < dt->nseg; s++, k = 0) {
            const rmpi_dtype_seg_t *g = &dt->segs[s];
            for (; k < g->count; k++, inner = 0) {
                char *p = base + g->off + (MPI_Aint)k * g->stride;
                if (g->sub ? walk(o, p, 1, g->sub, inner) : put(o, p + inner, g->len - inner))
                    return 1;
            }
        }
    }
    return 0;
}

void rmpi_dtype_iter_init(rmpi_dtype_iter_t *it, const void *buf, size_t count, const rmpi_dtype_t *dt, size_t offset,
                          size_t len)
{
    size_t total = count * dt->size;
    it->buf = (char *)(uintptr_t)buf;
    it->count = count;
    it->dt = dt;
    it->offset = offset < total ? offset : total;
    it->end = len < total - it->offset ? it->offset + len : total;
}

int rmpi_dtype_iter_next(rmpi_dtype_iter_t *it, struct iovec *iov, int max)
{
    if (it->offset >= it->end || max <= 0)
        return 0;
    iter_out_t o = {iov, 0, max, it->offset, it->end - it->offset};
    if (it->dt->contig)
        put(&o, (char *)rmpi_dtype_contig_ptr(it->buf, it->dt) + it->offset, o.left);
    else
        walk(&o, it->buf, it->count, it->dt, it->offset);
    it->offset = o.pos;
    return o.n;
}

static size_t pieces(const rmpi_dtype_t *dt)
{
    size_t n = 0;
    for (size_t s = 0; s < dt->nseg; s++)
        n += dt->segs[s].count * (dt->segs[s].sub ? pieces(dt->segs[s].sub) : 1);
    return n;
}

size_t rmpi_dtype_mean_piece(const rmpi_dtype_t *dt)
{
    size_t n = dt->size ? pieces(dt) : 0;
    return n ? dt->size / n : 0;
}

/* The core's view of a datatype (core.h rmpi_core_type_ops_t): it decides how typed data
 * travels and calls these to list, pack and unpack it. */
static void core_pack(const void *buf, size_t count, const void *type, size_t off, void *out, size_t len)
{
    rmpi_dtype_pack(buf, count, type, off, out, len);
}

static void core_unpack(const void *in, size_t len, void *buf, size_t count, const void *type, size_t off)
{
    rmpi_dtype_unpack(in, len, buf, count, type, off);
}

static int core_pieces(const void *buf, size_t count, const void *type, size_t off, size_t len, struct iovec *iov,
                       int max, size_t *reached)
{
    rmpi_dtype_iter_t it;
    rmpi_dtype_iter_init(&it, buf, count, type, off, len);
    int n = rmpi_dtype_iter_next(&it, iov, max);
    *reached = it.offset;
    return n;
}

static size_t core_mean_piece(const void *type) { return rmpi_dtype_mean_piece(type); }

const rmpi_core_type_ops_t rmpi_dtype_core_ops = {core_pack, core_unpack, core_pieces, core_mean_piece};
