/*
 * Pack/unpack and Get_elements of random nested derived types against a naive model:
 * the full type map (one entry per basic element, nothing merged) built straight from
 * the constructor arguments. Packing in pieces of 1..7 bytes and at random offsets
 * must give the same stream as one call. The external32 form of the stream is the same
 * entries byte-reversed. The segment iterator lists the model's pieces, merged where
 * adjacent, whole or resumed in calls of a few segments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit_check.h"
#include "datatype/datatype.h"
#include "util/util.h"

typedef struct ent {
    MPI_Aint disp;
    size_t len;
} ent_t;

typedef struct model {
    ent_t *e;
    size_t n;
} model_t;

typedef struct tnode {
    rmpi_dtype_t *dt;
    model_t m;
} tnode_t;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static long rrange(long lo, long hi) { return lo + (long)(rnd() % (uint64_t)(hi - lo + 1)); }

static void push(model_t *m, MPI_Aint disp, size_t len)
{
    m->e = realloc(m->e, (m->n + 1) * sizeof(*m->e));
    m->e[m->n++] = (ent_t){disp, len};
}

/* bl copies of child c, the first at disp. */
static void model_piece(model_t *m, MPI_Aint disp, MPI_Count bl, const tnode_t *c)
{
    for (MPI_Count j = 0; j < bl; j++)
        for (size_t k = 0; k < c->m.n; k++)
            push(m, disp + (MPI_Aint)j * c->dt->extent + c->m.e[k].disp, c->m.e[k].len);
}

#define MAX_NODES 4096
static tnode_t nodes[MAX_NODES];
static int nnodes;

static tnode_t *base_type(void)
{
    static const struct {
        MPI_Datatype h;
        ent_t e[2];
        int n;
    } bases[] = {
        {MPI_CHAR, {{0, 1}}, 1},
        {MPI_SHORT, {{0, 2}}, 1},
        {MPI_INT, {{0, 4}}, 1},
        {MPI_DOUBLE, {{0, 8}}, 1},
        {MPI_DOUBLE_INT, {{0, 8}, {8, 4}}, 2},
        {MPI_SHORT_INT, {{0, 2}, {4, 4}}, 2},
    };
    int i = (int)rrange(0, sizeof(bases) / sizeof(bases[0]) - 1);
    tnode_t *t = &nodes[nnodes++];
    t->dt = rmpi_dtype_get(bases[i].h);
    t->m.e = NULL;
    t->m.n = 0;
    for (int k = 0; k < bases[i].n; k++)
        push(&t->m, bases[i].e[k].disp, bases[i].e[k].len);
    return t;
}

/* A random type of nesting depth <= depth; NULL when the model would get too big. */
static tnode_t *random_type(int depth)
{
    if (depth == 0 || rnd() % 5 == 0)
        return base_type();
    tnode_t *c = random_type(depth - 1), *c2 = random_type(depth - 1);
    if (!c || !c2 || nnodes >= MAX_NODES - 1)
        return NULL;
    MPI_Datatype ch = rmpi_dtype_handle(c->dt);
    MPI_Aint ext = c->dt->extent;
    tnode_t *t = &nodes[nnodes];
    memset(t, 0, sizeof(*t));
    int rc = 0, kind = (int)rrange(0, 9);
    MPI_Count n = rrange(0, 4), bl = rrange(0, 3), stride = rrange(-4, 5);
    MPI_Count bls[4], disps[4];
    MPI_Aint adisps[4];
    MPI_Datatype types[4];
    for (int i = 0; i < 4; i++) {
        bls[i] = rrange(0, 3);
        disps[i] = rrange(-3, 6);
        adisps[i] = rrange(-40, 80);
        types[i] = rnd() & 1 ? ch : rmpi_dtype_handle(c2->dt);
    }
    switch (kind) {
    case 0:
        rc = rmpi_dtype_contiguous(n, ch, 0, &t->dt);
        model_piece(&t->m, 0, n, c);
        break;
    case 1:
        rc = rmpi_dtype_vector(n, bl, stride, ch, 0, &t->dt);
        for (MPI_Count i = 0; i < n; i++)
            model_piece(&t->m, (MPI_Aint)i * stride * ext, bl, c);
        break;
    case 2:
        stride = rrange(-30, 60);
        rc = rmpi_dtype_hvector(n, bl, stride, ch, 0, &t->dt);
        for (MPI_Count i = 0; i < n; i++)
            model_piece(&t->m, (MPI_Aint)i * stride, bl, c);
        break;
    case 3:
        rc = rmpi_dtype_indexed(n, bls, disps, ch, 0, &t->dt);
        for (MPI_Count i = 0; i < n; i++)
            model_piece(&t->m, (MPI_Aint)disps[i] * ext, bls[i], c);
        break;
    case 4:
        rc = rmpi_dtype_hindexed(n, bls, adisps, ch, 0, &t->dt);
        for (MPI_Count i = 0; i < n; i++)
            model_piece(&t->m, adisps[i], bls[i], c);
        break;
    case 5:
        rc = rmpi_dtype_indexed_block(n, bl, disps, ch, 0, &t->dt);
        for (MPI_Count i = 0; i < n; i++)
            model_piece(&t->m, (MPI_Aint)disps[i] * ext, bl, c);
        break;
    case 6:
        rc = rmpi_dtype_hindexed_block(n, bl, adisps, ch, 0, &t->dt);
        for (MPI_Count i = 0; i < n; i++)
            model_piece(&t->m, adisps[i], bl, c);
        break;
    case 7:
        rc = rmpi_dtype_struct(n, bls, adisps, types, 0, &t->dt);
        for (MPI_Count i = 0; i < n; i++)
            model_piece(&t->m, adisps[i], bls[i], types[i] == ch ? c : c2);
        break;
    case 8: {
        MPI_Aint lb = rrange(-16, 8), e = rrange(0, 40);
        if (rnd() & 1) {
            lb = c->dt->lb;
            e = c->dt->extent + rrange(0, 3) * 4;
        }
        rc = rmpi_dtype_resized(ch, lb, e, 0, &t->dt);
        model_piece(&t->m, 0, 1, c);
        break;
    }
    default:
        rc = rmpi_dtype_dup(ch, &t->dt);
        model_piece(&t->m, 0, 1, c);
        break;
    }
    CHECK(rc == MPI_SUCCESS, "constructor kind %d returned %d", kind, rc);
    if (rc)
        return NULL;
    nnodes++;
    if (t->m.n > 20000)
        return NULL;
    return t;
}

static void model_pack(const char *buf, size_t count, const tnode_t *t, char *out)
{
    for (size_t i = 0; i < count; i++)
        for (size_t k = 0; k < t->m.n; k++) {
            memcpy(out, buf + (MPI_Aint)i * t->dt->extent + t->m.e[k].disp, t->m.e[k].len);
            out += t->m.e[k].len;
        }
}

static void model_unpack(const char *in, char *buf, size_t count, const tnode_t *t)
{
    for (size_t i = 0; i < count; i++)
        for (size_t k = 0; k < t->m.n; k++) {
            memcpy(buf + (MPI_Aint)i * t->dt->extent + t->m.e[k].disp, in, t->m.e[k].len);
            in += t->m.e[k].len;
        }
}

static MPI_Count model_elements(const tnode_t *t, size_t bytes)
{
    MPI_Count n = 0;
    for (size_t i = 0; bytes; i++) {
        const ent_t *e = &t->m.e[i % t->m.n];
        if (bytes < e->len)
            return MPI_UNDEFINED;
        bytes -= e->len;
        n++;
    }
    return n;
}

/* The model's pieces of stream bytes [off, off + len), adjacent ones merged: what the
 * segment iterator must list. Returns the number of segments written to out. */
static size_t model_segs(const char *buf, size_t count, const tnode_t *t, size_t off, size_t len, struct iovec *out)
{
    size_t n = 0, pos = 0;
    for (size_t i = 0; i < count && len; i++)
        for (size_t k = 0; k < t->m.n && len; k++) {
            const ent_t *e = &t->m.e[k];
            size_t skip = off > pos ? RMPI_MIN(off - pos, e->len) : 0, take = RMPI_MIN(e->len - skip, len);
            pos += e->len;
            if (!take)
                continue;
            char *p = (char *)(uintptr_t)buf + (MPI_Aint)i * t->dt->extent + e->disp + skip;
            if (n && (char *)out[n - 1].iov_base + out[n - 1].iov_len == p)
                out[n - 1].iov_len += take;
            else
                out[n++] = (struct iovec){p, take};
            len -= take;
        }
    return n;
}

/* The segment iterator against the model: all at once, then resumed in calls of 1..5
 * segments, over the whole stream and over a random byte range. */
static int check_iter(const char *buf, size_t count, const tnode_t *t, int iter)
{
    size_t total = count * t->dt->size, nmodel = count * t->m.n + 1;
    struct iovec *want = malloc(nmodel * sizeof *want), *got = malloc((nmodel + 8) * sizeof *got);
    int bad = 0;
    for (int round = 0; round < 3 && !bad; round++) {
        size_t off = round < 2 ? 0 : (size_t)rrange(0, (long)total),
               len = round < 2 ? total : (size_t)rrange(0, (long)total);
        size_t nw = model_segs(buf, count, t, off, len, want), ng = 0;
        rmpi_dtype_iter_t it;
        rmpi_dtype_iter_init(&it, buf, count, t->dt, off, len);
        for (int calls = 0; !rmpi_dtype_iter_done(&it) && calls <= (int)nmodel; calls++) {
            int max = round == 0 ? (int)nmodel : (int)rrange(1, 5);
            int n = rmpi_dtype_iter_next(&it, got + ng, max);
            CHECK(n >= 1 && n <= max, "iter %d: iterator gave %d segments (max %d)", iter, n, max);
            if (n < 1 || n > max)
                break;
            ng += (size_t)n;
        }
        CHECK(rmpi_dtype_iter_done(&it) && rmpi_dtype_iter_next(&it, got, 1) == 0, "iter %d: iterator not at the end",
              iter);
        bad |= ng != nw;
        for (size_t k = 0; k < ng && !bad; k++)
            bad |= got[k].iov_base != want[k].iov_base || got[k].iov_len != want[k].iov_len;
        CHECK(!bad, "iter %d round %d: iterator lists %zu segments, the model %zu (stream [%zu, +%zu) of %zu)", iter,
              round, ng, nw, off, len, total);
    }
    free(want);
    free(got);
    return bad;
}

static int check_type(const tnode_t *t, int iter)
{
    const rmpi_dtype_t *dt = t->dt;
    size_t msize = 0;
    MPI_Aint lo = 0, hi = 0;
    for (size_t k = 0; k < t->m.n; k++) {
        msize += t->m.e[k].len;
        lo = k == 0 || t->m.e[k].disp < lo ? t->m.e[k].disp : lo;
        hi = k == 0 || t->m.e[k].disp + (MPI_Aint)t->m.e[k].len > hi ? t->m.e[k].disp + (MPI_Aint)t->m.e[k].len : hi;
    }
    CHECK(dt->size == msize, "iter %d: size %zu, model %zu", iter, dt->size, msize);
    if (dt->size != msize)
        return 1;
    if (msize) {
        CHECK(dt->true_lb == lo && dt->true_ub == hi, "iter %d: true bounds [%ld,%ld), model [%ld,%ld)", iter,
              (long)dt->true_lb, (long)dt->true_ub, (long)lo, (long)hi);
    }
    size_t count = (size_t)rrange(1, 3);
    MPI_Aint ext = dt->extent;
    MPI_Aint span_lo = lo + (ext < 0 ? (MPI_Aint)(count - 1) * ext : 0);
    MPI_Aint span_hi = hi + (ext > 0 ? (MPI_Aint)(count - 1) * ext : 0);
    size_t buflen = (size_t)(span_hi - span_lo) + 16;
    char *ubuf = malloc(buflen), *ubuf2 = malloc(buflen), *ubuf3 = malloc(buflen);
    char *origin = ubuf + 8 - span_lo, *origin2 = ubuf2 + 8 - span_lo, *origin3 = ubuf3 + 8 - span_lo;
    for (size_t i = 0; i < buflen; i++)
        ubuf[i] = (char)rnd();
    size_t total = count * msize;
    char *want = malloc(total + 1), *got = malloc(total + 1);
    int bad = 0;

    model_pack(origin, count, t, want);
    memset(got, 0x5a, total + 1);
    size_t n = rmpi_dtype_pack(origin, count, dt, 0, got, total + 10);
    CHECK(n == total && memcmp(got, want, total) == 0, "iter %d: pack in one call differs (n %zu of %zu)", iter, n,
          total);
    bad |= n != total || memcmp(got, want, total);

    memset(got, 0x5a, total + 1);
    for (size_t off = 0; off < total;) {
        size_t step = (size_t)rrange(1, 7);
        size_t c = rmpi_dtype_pack(origin, count, dt, off, got + off, step);
        CHECK(c == (step < total - off ? step : total - off), "iter %d: piece at %zu returned %zu", iter, off, c);
        if (!c)
            break;
        off += c;
    }
    CHECK(memcmp(got, want, total) == 0 && got[total] == 0x5a, "iter %d: pack in pieces differs", iter);
    bad |= memcmp(got, want, total) != 0;

    for (int r = 0; r < 8 && total; r++) {
        size_t off = (size_t)rrange(0, (long)total - 1), len = (size_t)rrange(1, (long)(total - off));
        size_t c = rmpi_dtype_pack(origin, count, dt, off, got, len);
        CHECK(c == len && memcmp(got, want + off, len) == 0, "iter %d: pack [%zu,+%zu) differs", iter, off, len);
    }
    CHECK(rmpi_dtype_pack(origin, count, dt, total, got, 4) == 0, "iter %d: pack past the end", iter);

    /* Unpack into buffers of the same background, whole and in pieces. */
    memset(ubuf2, 0x33, buflen);
    memset(ubuf3, 0x33, buflen);
    model_unpack(want, origin2, count, t);
    n = rmpi_dtype_unpack(want, total + 5, origin3, count, dt, 0);
    CHECK(n == total && memcmp(ubuf2, ubuf3, buflen) == 0, "iter %d: unpack in one call differs", iter);
    bad |= memcmp(ubuf2, ubuf3, buflen) != 0;
    memset(ubuf3, 0x33, buflen);
    for (size_t off = 0; off < total;) {
        size_t step = (size_t)rrange(1, 7);
        size_t c = rmpi_dtype_unpack(want + off, step, origin3, count, dt, off);
        if (!c)
            break;
        off += c;
    }
    CHECK(memcmp(ubuf2, ubuf3, buflen) == 0, "iter %d: unpack in pieces differs", iter);

    for (size_t b = 0; b <= total && b < 400; b++) {
        MPI_Count e = rmpi_dtype_elements(dt, b), me = model_elements(t, b);
        CHECK(e == me, "iter %d: elements(%zu) = %lld, model %lld", iter, b, (long long)e, (long long)me);
        if (e != me) {
            bad = 1;
            break;
        }
        if (e != MPI_UNDEFINED) {
            size_t back = rmpi_dtype_elements_bytes(dt, e);
            CHECK(back == b, "iter %d: elements_bytes(%lld) = %zu, expected %zu", iter, (long long)e, back, b);
        }
    }
    /* external32: these basic types keep their size there and each is byte-reversed
     * (one model entry per basic element), whether the type converts as one run of a
     * single basic type or piece by piece. */
    CHECK(rmpi_dtype_external_size(dt) == msize, "iter %d: external size %zu, expected %zu", iter,
          rmpi_dtype_external_size(dt), msize);
    char *x32 = malloc(total + 1), *wext = malloc(total + 1);
    for (size_t e = 0, pos = 0; e < count; e++)
        for (size_t k = 0; k < t->m.n; pos += t->m.e[k++].len)
            for (size_t b = 0; b < t->m.e[k].len; b++)
                wext[pos + b] = want[pos + t->m.e[k].len - 1 - b];
    rmpi_dtype_to_external(dt, count, want, x32);
    CHECK(memcmp(x32, wext, total) == 0, "iter %d: external32 stream differs", iter);
    rmpi_dtype_from_external(dt, count, x32, got);
    CHECK(memcmp(got, want, total) == 0, "iter %d: external32 round trip differs", iter);
    bad |= memcmp(x32, wext, total) != 0;
    free(x32);
    free(wext);
    bad |= check_iter(origin, count, t, iter);
    free(ubuf);
    free(ubuf2);
    free(ubuf3);
    free(want);
    free(got);
    return bad;
}

/* Vector-of-doubles pack: the shape the core meets most often. */
static void check_vector_columns(void)
{
    enum { N = 64 };
    static double a[N][N], col[N], back[N][N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            a[i][j] = i * 1000 + j;
    rmpi_dtype_t *dt;
    CHECK(rmpi_dtype_vector(N, 1, N, MPI_DOUBLE, 0, &dt) == MPI_SUCCESS, "column type");
    CHECK(rmpi_dtype_pack(&a[0][5], 1, dt, 0, col, sizeof(col)) == sizeof(col), "pack column");
    int ok = 1;
    for (int i = 0; i < N; i++)
        ok &= col[i] == i * 1000 + 5;
    CHECK(ok, "column values");
    CHECK(rmpi_dtype_unpack(col, sizeof(col), &back[0][7], 1, dt, 0) == sizeof(col), "unpack column");
    ok = 1;
    for (int i = 0; i < N; i++)
        ok &= back[i][7] == i * 1000 + 5 && back[i][6] == 0;
    CHECK(ok, "unpacked column");
    rmpi_dtype_free(dt);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 3000, tested = 0, nontrivial = 0, nested = 0;
    size_t bytes = 0;
    check_vector_columns();
    for (int it = 0; it < iters && unit_failures < 20; it++) {
        /* The second half keeps repeated multi-block children nested (dtype_create.c). */
        rmpi_dtype_flat_max = it < iters / 2 ? RMPI_DTYPE_FLAT_MAX : (size_t)rrange(0, 3);
        nnodes = 0;
        tnode_t *t = random_type(3);
        if (t && !t->dt->predefined && t->dt->size) {
            tested++;
            nontrivial += t->dt->nseg > 1 || !t->dt->contig;
            for (size_t k = 0; k < t->dt->nseg; k++)
                if (t->dt->segs[k].sub) {
                    nested++;
                    break;
                }
            bytes += t->dt->size;
            if (check_type(t, it)) {
                fprintf(stderr, "iter %d: failing type: combiner %d size %zu extent %ld nseg %zu\n", it,
                        t->dt->combiner, t->dt->size, (long)t->dt->extent, t->dt->nseg);
            }
        }
        for (int i = 0; i < nnodes; i++) {
            if (!nodes[i].dt->predefined)
                rmpi_dtype_free(nodes[i].dt);
            free(nodes[i].m.e);
        }
    }
    return finish("dtype_pack");
}
