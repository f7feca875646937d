/* Pack/unpack over the flattened segments, restartable at any byte; Get_elements. */
#include "dtype_impl.h"

#include <string.h>

enum { DIR_PACK, DIR_UNPACK };

/* memcpy with a constant length compiles to a single move; most blocks are one basic
 * element of 4 or 8 bytes, so those get their own loops. */
#define BLOCK_LOOP(LEN)                                                \
    for (size_t i = 0; i < nb; i++, user += stride, packed += (LEN)) { \
        if (dir == DIR_PACK)                                           \
            memcpy(packed, user, (LEN));                               \
        else                                                           \
            memcpy(user, packed, (LEN));                               \
    }

static inline void copy_blocks(char *user, MPI_Aint stride, size_t len, size_t nb, char *packed, const int dir)
{
    switch (len) {
    case 4: BLOCK_LOOP(4); break;
    case 8: BLOCK_LOOP(8); break;
    case 16: BLOCK_LOOP(16); break;
    default: BLOCK_LOOP(len); break;
    }
}

static inline void copy_bytes(char *user, char *packed, size_t n, const int dir)
{
    if (dir == DIR_PACK)
        memcpy(packed, user, n);
    else
        memcpy(user, packed, n);
}

static void whole(char *base, const rmpi_dtype_t *dt, char *packed, const int dir);
static size_t walk(char *buf, const rmpi_dtype_t *dt, size_t offset, char *packed, size_t n, const int dir);

/* nb whole blocks of run g starting at user address p. */
static inline void copy_run(const rmpi_dtype_seg_t *g, char *p, size_t nb, char *packed, const int dir)
{
    if (RMPI_LIKELY(!g->sub)) {
        copy_blocks(p, g->stride, g->len, nb, packed, dir);
        return;
    }
    for (size_t i = 0; i < nb; i++, p += g->stride, packed += g->len)
        whole(p, g->sub, packed, dir);
}

/* Bytes [inner, inner + c) of the block of run g at user address p. */
static inline void copy_part(const rmpi_dtype_seg_t *g, char *p, size_t inner, size_t c, char *packed, const int dir)
{
    if (RMPI_LIKELY(!g->sub))
        copy_bytes(p + inner, packed, c, dir);
    else
        walk(p, g->sub, inner, packed, c, dir);
}

/* One whole element at base, without any offset bookkeeping. */
static inline void whole_flat(char *base, const rmpi_dtype_t *dt, char *packed, const int dir)
{
    for (size_t j = 0; j < dt->nseg; j++) {
        const rmpi_dtype_seg_t *g = &dt->segs[j];
        copy_blocks(base + g->off, g->stride, g->len, g->count, packed, dir);
        packed += g->len * g->count;
    }
}

static void whole(char *base, const rmpi_dtype_t *dt, char *packed, const int dir)
{
    if (!dt->nested) {
        whole_flat(base, dt, packed, dir);
        return;
    }
    for (size_t j = 0; j < dt->nseg; j++) {
        const rmpi_dtype_seg_t *g = &dt->segs[j];
        copy_run(g, base + g->off, g->count, packed, dir);
        packed += g->len * g->count;
    }
}

/* Move n packed bytes starting at stream offset `offset` between buf and packed;
 * the caller has clipped n to the stream. */
static size_t walk(char *buf, const rmpi_dtype_t *dt, size_t offset, char *packed, size_t n, const int dir)
{
    size_t elem = offset / dt->size, within = offset % dt->size;
    char *base = buf + (MPI_Aint)elem * dt->extent;
    size_t left = n;

    /* One plain block per element: the elements themselves form a strided run. */
    if (dt->nseg == 1 && dt->segs[0].count == 1 && !dt->segs[0].sub) {
        const size_t len = dt->segs[0].len;
        char *p = base + dt->segs[0].off;
        if (within) {
            size_t c = RMPI_MIN(len - within, left);
            copy_bytes(p + within, packed, c, dir);
            packed += c;
            left -= c;
            p += dt->extent;
        }
        size_t nb = left / len;
        copy_blocks(p, dt->extent, len, nb, packed, dir);
        p += (MPI_Aint)nb * dt->extent;
        packed += nb * len;
        left -= nb * len;
        if (left)
            copy_bytes(p, packed, left, dir);
        return n;
    }

    size_t s = rmpi_dtype_seg_find(dt, within);
    size_t rel = within - dt->segs[s].pos;
    size_t k = rel / dt->segs[s].len, inner = rel % dt->segs[s].len;
    while (left) {
        const rmpi_dtype_seg_t *g = &dt->segs[s];
        char *p = base + g->off + (MPI_Aint)k * g->stride;
        if (inner) {
            size_t c = RMPI_MIN(g->len - inner, left);
            copy_part(g, p, inner, c, packed, dir);
            packed += c;
            left -= c;
            if (!left)
                break;
            inner = 0;
            k++;
            p += g->stride;
        }
        size_t nb = RMPI_MIN(g->count - k, left / g->len);
        copy_run(g, p, nb, packed, dir);
        packed += nb * g->len;
        left -= nb * g->len;
        k += nb;
        if (k < g->count) {
            /* Less than a block left: its head ends the request. */
            if (left)
                copy_part(g, p + (MPI_Aint)nb * g->stride, 0, left, packed, dir);
            break;
        }
        k = 0;
        if (++s == dt->nseg) {
            s = 0;
            base += dt->extent;
            /* Whole elements: no bookkeeping of where inside the element we are. */
            if (!dt->nested)
                for (; left >= dt->size; left -= dt->size, base += dt->extent, packed += dt->size)
                    whole_flat(base, dt, packed, dir);
            else
                for (; left >= dt->size; left -= dt->size, base += dt->extent, packed += dt->size)
                    whole(base, dt, packed, dir);
        }
    }
    return n;
}

size_t rmpi_dtype_pack(const void *inbuf, size_t count, const rmpi_dtype_t *dt, size_t offset, void *out, size_t outlen)
{
    size_t total = count * dt->size;
    if (offset >= total)
        return 0;
    if (outlen > total - offset)
        outlen = total - offset;
    if (dt->contig) {
        memcpy(out, (const char *)inbuf + dt->true_lb + offset, outlen);
        return outlen;
    }
    return walk((char *)(uintptr_t)inbuf, dt, offset, out, outlen, DIR_PACK);
}

size_t rmpi_dtype_unpack(const void *in, size_t inlen, void *outbuf, size_t count, const rmpi_dtype_t *dt,
                         size_t offset)
{
    size_t total = count * dt->size;
    if (offset >= total)
        return 0;
    if (inlen > total - offset)
        inlen = total - offset;
    if (dt->contig) {
        memcpy((char *)outbuf + dt->true_lb + offset, in, inlen);
        return inlen;
    }
    return walk(outbuf, dt, offset, (char *)(uintptr_t)in, inlen, DIR_UNPACK);
}

static MPI_Count elements_partial(const rmpi_dtype_t *dt, size_t rem);

/* Whole elements, then the basic elements of the partial one; -1 when undefined. */
static MPI_Count elements(const rmpi_dtype_t *dt, size_t bytes)
{
    if (!bytes)
        return 0;
    if (!dt->size)
        return -1;
    if (dt->basic_size)
        return bytes % dt->basic_size ? -1 : (MPI_Count)(bytes / dt->basic_size);
    MPI_Count n = (MPI_Count)(bytes / dt->size) * dt->nbasic;
    size_t rem = bytes % dt->size;
    if (!rem)
        return n;
    MPI_Count r = elements_partial(dt, rem);
    return r < 0 ? -1 : n + r;
}

/* rem < dt->size bytes of one element, in type-map order. */
static MPI_Count elements_partial(const rmpi_dtype_t *dt, size_t rem)
{
    if (dt->predefined)
        return dt->pair_first && rem == dt->pair_first ? 1 : -1;
    size_t np = rmpi_dtype_npieces(dt);
    rmpi_dtype_piece_t p;
    MPI_Count n = 0;
    if (rmpi_dtype_uniform_pieces(dt) && np) {
        rmpi_dtype_piece(dt, 0, &p);
        size_t psize = (size_t)p.bl * p.t->size; /* > 0: rem < size */
        n = (MPI_Count)(rem / psize) * p.bl * p.t->nbasic;
        MPI_Count r = elements(p.t, rem % psize);
        return r < 0 ? -1 : n + r;
    }
    for (size_t i = 0; i < np && rem; i++) {
        rmpi_dtype_piece(dt, i, &p);
        if (p.bl <= 0 || !p.t->size)
            continue;
        size_t psize = (size_t)p.bl * p.t->size;
        if (rem >= psize) {
            n += p.bl * p.t->nbasic;
            rem -= psize;
            continue;
        }
        MPI_Count r = elements(p.t, rem);
        return r < 0 ? -1 : n + r;
    }
    return n;
}

MPI_Count rmpi_dtype_elements(const rmpi_dtype_t *dt, size_t bytes)
{
    MPI_Count n = elements(dt, bytes);
    return n < 0 ? MPI_UNDEFINED : n;
}

MPI_Count rmpi_dtype_count(const rmpi_dtype_t *dt, size_t bytes)
{
    if (!dt->size)
        return 0;
    return bytes % dt->size ? MPI_UNDEFINED : (MPI_Count)(bytes / dt->size);
}

static size_t elements_bytes_partial(const rmpi_dtype_t *dt, MPI_Count n);

static size_t elements_bytes(const rmpi_dtype_t *dt, MPI_Count n)
{
    if (n <= 0 || !dt->nbasic)
        return 0;
    if (dt->basic_size)
        return (size_t)n * dt->basic_size;
    return (size_t)(n / dt->nbasic) * dt->size + elements_bytes_partial(dt, n % dt->nbasic);
}

/* n < dt->nbasic basic elements of one element, in type-map order. */
static size_t elements_bytes_partial(const rmpi_dtype_t *dt, MPI_Count n)
{
    if (!n)
        return 0;
    if (dt->predefined)
        return dt->pair_first; /* n == 1 of a pair */
    size_t np = rmpi_dtype_npieces(dt), bytes = 0;
    rmpi_dtype_piece_t p;
    if (rmpi_dtype_uniform_pieces(dt) && np) {
        rmpi_dtype_piece(dt, 0, &p);
        MPI_Count per = p.bl * p.t->nbasic;
        return (size_t)(n / per) * (size_t)p.bl * p.t->size + elements_bytes(p.t, n % per);
    }
    for (size_t i = 0; i < np && n; i++) {
        rmpi_dtype_piece(dt, i, &p);
        if (p.bl <= 0 || !p.t->nbasic)
            continue;
        MPI_Count per = p.bl * p.t->nbasic;
        if (n >= per) {
            bytes += (size_t)p.bl * p.t->size;
            n -= per;
            continue;
        }
        return bytes + elements_bytes(p.t, n);
    }
    return bytes;
}

size_t rmpi_dtype_elements_bytes(const rmpi_dtype_t *dt, MPI_Count n) { return elements_bytes(dt, n); }
