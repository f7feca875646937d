/* Derived datatype constructors: record the arguments, compute bounds, flatten. */
#include "dtype_impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t rmpi_dtype_flat_max = RMPI_DTYPE_FLAT_MAX;

size_t rmpi_dtype_npieces(const rmpi_dtype_t *dt)
{
    switch (dt->combiner) {
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:
    case MPI_COMBINER_F90_INTEGER:
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX: return 1;
    case MPI_COMBINER_NAMED: return 0;
    default: return (size_t)dt->ints[0];
    }
}

int rmpi_dtype_uniform_pieces(const rmpi_dtype_t *dt)
{
    switch (dt->combiner) {
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_STRUCT:
    case MPI_COMBINER_NAMED: return 0;
    default: return 1;
    }
}

void rmpi_dtype_piece(const rmpi_dtype_t *dt, size_t i, rmpi_dtype_piece_t *p)
{
    const MPI_Count *in = dt->ints;
    if (dt->combiner == MPI_COMBINER_NAMED) {
        *p = (rmpi_dtype_piece_t){.disp = 0, .bl = 0, .t = dt};
        return;
    }
    if (dt->inner) {
        *p = (rmpi_dtype_piece_t){.disp = 0, .bl = 1, .t = dt->inner};
        return;
    }
    const rmpi_dtype_t *t = dt->types[0];
    size_t n = dt->nints ? (size_t)in[0] : 0;
    p->t = t;
    switch (dt->combiner) {
    case MPI_COMBINER_CONTIGUOUS:
        p->disp = 0;
        p->bl = in[0];
        break;
    case MPI_COMBINER_VECTOR:
        p->disp = (MPI_Aint)i * (MPI_Aint)in[2] * t->extent;
        p->bl = in[1];
        break;
    case MPI_COMBINER_HVECTOR:
        p->disp = (MPI_Aint)i * dt->aints[0];
        p->bl = in[1];
        break;
    case MPI_COMBINER_INDEXED:
        p->disp = (MPI_Aint)in[1 + n + i] * t->extent;
        p->bl = in[1 + i];
        break;
    case MPI_COMBINER_HINDEXED:
        p->disp = dt->aints[i];
        p->bl = in[1 + i];
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        p->disp = (MPI_Aint)in[2 + i] * t->extent;
        p->bl = in[1];
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        p->disp = dt->aints[i];
        p->bl = in[1];
        break;
    case MPI_COMBINER_STRUCT:
        p->disp = dt->aints[i];
        p->bl = in[1 + i];
        p->t = dt->types[i];
        break;
    default: /* DUP, RESIZED */
        p->disp = 0;
        p->bl = 1;
        break;
    }
}

typedef struct seg_vec {
    rmpi_dtype_seg_t *v;
    size_t n, cap;
} seg_vec_t;

/* Append a run, merging it into the previous one when the two form a single block or
 * a single strided run; this is what keeps a vector of a vector at one segment. Runs of
 * nested elements (sub) merge only into runs of the same sub type. */
static void seg_append(seg_vec_t *sv, MPI_Aint off, size_t len, size_t count, MPI_Aint stride, const rmpi_dtype_t *sub)
{
    if (!len || !count)
        return;
    if (count == 1)
        stride = 0;
    else if (stride == (MPI_Aint)len && !sub) {
        len *= count;
        count = 1;
        stride = 0;
    }
    if (sv->n) {
        rmpi_dtype_seg_t *l = &sv->v[sv->n - 1];
        if (!sub && !l->sub && l->count == 1 && count == 1 && l->off + (MPI_Aint)l->len == off) {
            l->len += len;
            return;
        }
        if (l->len == len && l->sub == sub) {
            if (l->count == 1 && count == 1) {
                l->stride = off - l->off;
                l->count = 2;
                return;
            }
            if (l->count > 1 && count == 1 && off == l->off + (MPI_Aint)l->count * l->stride) {
                l->count++;
                return;
            }
            if (l->count == 1 && count > 1 && off - l->off == stride) {
                l->count = count + 1;
                l->stride = stride;
                return;
            }
            if (l->count > 1 && count > 1 && stride == l->stride && off == l->off + (MPI_Aint)l->count * l->stride) {
                l->count += count;
                return;
            }
        }
    }
    if (sv->n == sv->cap) {
        sv->cap = sv->cap ? 2 * sv->cap : 4;
        sv->v = rmpi_xrealloc(sv->v, sv->cap * sizeof(*sv->v));
    }
    sv->v[sv->n++] = (rmpi_dtype_seg_t){.off = off, .len = len, .count = count, .stride = stride, .sub = sub};
}

/* Segments that `bl` copies of t add when expanded (1 when they fold into one run). */
static size_t seg_cost(size_t bl, const rmpi_dtype_t *t)
{
    if (t->nseg == 1) {
        const rmpi_dtype_seg_t *g = &t->segs[0];
        if (g->count == 1 || t->extent == (MPI_Aint)g->count * g->stride)
            return 1;
    }
    size_t c;
    return __builtin_mul_overflow(bl, t->nseg, &c) ? SIZE_MAX : c;
}

/* `bl` copies of t's segments, the first at disp, each next one an extent further;
 * with `nest`, copies that would not fold into one run become one nested run. */
static void seg_append_piece(seg_vec_t *sv, MPI_Aint disp, size_t bl, const rmpi_dtype_t *t, int nest)
{
    MPI_Aint ext = t->extent;
    if (t->nseg == 1) {
        const rmpi_dtype_seg_t *g = &t->segs[0];
        if (g->count == 1) {
            seg_append(sv, disp + g->off, g->len, bl, ext, g->sub);
            return;
        }
        if (ext == (MPI_Aint)g->count * g->stride) {
            seg_append(sv, disp + g->off, g->len, g->count * bl, g->stride, g->sub);
            return;
        }
    }
    if (nest && t->nseg) {
        seg_append(sv, disp, t->size, bl, ext, t);
        return;
    }
    for (size_t j = 0; j < bl; j++)
        for (size_t k = 0; k < t->nseg; k++) {
            const rmpi_dtype_seg_t *g = &t->segs[k];
            seg_append(sv, disp + (MPI_Aint)j * ext + g->off, g->len, g->count, g->stride, g->sub);
        }
}

/* Bounds, size, basic-element counts and segments from the pieces (MPI 5.1.7: markers
 * set by a resize are sticky and win over data bounds; a struct's extent is padded to
 * the largest alignment of its members unless an upper bound was set explicitly). */
static int dtype_build(rmpi_dtype_t *dt)
{
    size_t np = rmpi_dtype_npieces(dt), cost = 0;
    seg_vec_t sv = {0};
    for (size_t i = 0; i < np && cost <= rmpi_dtype_flat_max; i++) {
        rmpi_dtype_piece_t p;
        rmpi_dtype_piece(dt, i, &p);
        if (p.bl > 0) {
            size_t c = seg_cost((size_t)p.bl, p.t);
            cost = c > SIZE_MAX - cost ? SIZE_MAX : cost + c;
        }
    }
    int have_data = 0, have_nat_lb = 0, have_nat_ub = 0, mixed = 0, seen_basic = 0;
    MPI_Aint tlb = 0, tub = 0, slb = 0, sub = 0, nlb = 0, nub = 0;
    size_t size = 0;
    dt->align = 1;
    dt->basic_size = 0;
    dt->nbasic = 0;
    dt->sticky_lb = dt->sticky_ub = 0;
    dt->basic = MPI_DATATYPE_NULL;
    int basic_mixed = 0;
    for (size_t i = 0; i < np; i++) {
        rmpi_dtype_piece_t p;
        rmpi_dtype_piece(dt, i, &p);
        if (p.bl <= 0)
            continue;
        const rmpi_dtype_t *t = p.t;
        size_t bl = (size_t)p.bl, bytes;
        MPI_Aint span, lo, hi, c;
        if (__builtin_mul_overflow(bl, t->size, &bytes) || __builtin_add_overflow(size, bytes, &size) ||
            __builtin_mul_overflow((MPI_Aint)(bl - 1), t->extent, &span)) {
            free(sv.v);
            return MPI_ERR_ARG;
        }
        lo = span < 0 ? span : 0;
        hi = span > 0 ? span : 0;
        dt->nbasic += p.bl * t->nbasic;
        if (t->nbasic) {
            if (!seen_basic)
                dt->basic_size = t->basic_size;
            else if (t->basic_size != dt->basic_size)
                mixed = 1;
            seen_basic = 1;
        }
        if (t->size && !basic_mixed) {
            if (t->basic == MPI_DATATYPE_NULL || (dt->basic != MPI_DATATYPE_NULL && dt->basic != t->basic))
                basic_mixed = 1;
            dt->basic = t->basic;
        }
        if (t->align > dt->align)
            dt->align = t->align;
        if (t->size) {
            MPI_Aint a = p.disp + lo + t->true_lb, b = p.disp + hi + t->true_ub;
            tlb = have_data && tlb < a ? tlb : a;
            tub = have_data && tub > b ? tub : b;
            have_data = 1;
        }
        c = p.disp + lo + t->lb;
        if (t->sticky_lb) {
            slb = dt->sticky_lb && slb < c ? slb : c;
            dt->sticky_lb = 1;
        } else {
            nlb = have_nat_lb && nlb < c ? nlb : c;
            have_nat_lb = 1;
        }
        c = p.disp + hi + t->ub;
        if (t->sticky_ub) {
            sub = dt->sticky_ub && sub > c ? sub : c;
            dt->sticky_ub = 1;
        } else {
            nub = have_nat_ub && nub > c ? nub : c;
            have_nat_ub = 1;
        }
        seg_append_piece(&sv, p.disp, bl, t, cost > rmpi_dtype_flat_max);
    }
    dt->size = size;
    if (basic_mixed)
        dt->basic = MPI_DATATYPE_NULL;
    if (mixed)
        dt->basic_size = 0;
    dt->lb = dt->sticky_lb ? slb : nlb;
    dt->ub = dt->sticky_ub ? sub : nub;
    if (dt->combiner == MPI_COMBINER_RESIZED) {
        dt->lb = dt->aints[0];
        dt->ub = dt->aints[0] + dt->aints[1];
        dt->sticky_lb = dt->sticky_ub = 1;
    }
    if (dt->combiner == MPI_COMBINER_STRUCT && !dt->sticky_ub && dt->align > 1) {
        MPI_Aint al = (MPI_Aint)dt->align, rem = (dt->ub - dt->lb) % al;
        if (rem > 0)
            dt->ub += al - rem;
    }
    dt->extent = dt->ub - dt->lb;
    dt->true_lb = have_data ? tlb : 0;
    dt->true_ub = have_data ? tub : 0;
    dt->true_extent = dt->true_ub - dt->true_lb;

    size_t pos = 0;
    for (size_t k = 0; k < sv.n; k++) {
        sv.v[k].pos = pos;
        pos += sv.v[k].len * sv.v[k].count;
    }
    dt->segs = sv.n ? rmpi_xrealloc(sv.v, sv.n * sizeof(*sv.v)) : (free(sv.v), NULL);
    dt->nseg = sv.n;
    dt->nested = 0;
    for (size_t k = 0; k < sv.n; k++)
        dt->nested |= dt->segs[k].sub != NULL;
    dt->contig = sv.n == 0 || (sv.n == 1 && dt->segs[0].count == 1 && !dt->segs[0].sub && dt->extent == (MPI_Aint)size);
    rmpi_dtype_set_max_count(dt);
    return MPI_SUCCESS;
}

static void dtype_destroy(rmpi_dtype_t *dt)
{
    for (size_t i = 0; i < dt->ntypes; i++)
        if (dt->types[i])
            rmpi_dtype_release(dt->types[i]);
    if (dt->inner)
        rmpi_dtype_release(dt->inner);
    free(dt->ints);
    free(dt->aints);
    free(dt->types);
    free(dt->segs);
    dt->magic = 0;
    rmpi_addrset_del(&rmpi_dtype_live, dt);
    free(dt);
}

rmpi_dtype_t *rmpi_dtype_new(int combiner, int large, size_t nints, size_t naints, size_t ntypes)
{
    rmpi_dtype_t *dt = rmpi_xcalloc(1, sizeof(*dt));
    dt->magic = RMPI_DTYPE_MAGIC;
    rmpi_addrset_add(&rmpi_dtype_live, dt);
    dt->refcount = 1;
    dt->handle = (MPI_Datatype)dt;
    dt->combiner = combiner;
    dt->large = large;
    dt->nints = nints;
    dt->naints = naints;
    dt->ntypes = ntypes;
    dt->ints = nints ? rmpi_xmalloc(nints * sizeof(*dt->ints)) : NULL;
    dt->aints = naints ? rmpi_xmalloc(naints * sizeof(*dt->aints)) : NULL;
    dt->types = rmpi_xcalloc(ntypes ? ntypes : 1, sizeof(*dt->types));
    return dt;
}

int rmpi_dtype_finish(rmpi_dtype_t *dt, rmpi_dtype_t **newtype)
{
    for (size_t i = 0; i < dt->ntypes; i++)
        rmpi_dtype_retain(dt->types[i]);
    int rc = dtype_build(dt);
    if (rc != MPI_SUCCESS) {
        dtype_destroy(dt);
        return rc;
    }
    *newtype = dt;
    return MPI_SUCCESS;
}

/* Common checks; *t is the resolved oldtype. */
static int check_common(MPI_Count count, MPI_Datatype oldtype, rmpi_dtype_t **newtype, rmpi_dtype_t **t)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    if (!newtype)
        return MPI_ERR_ARG;
    if (!(*t = rmpi_dtype_get(oldtype)))
        return MPI_ERR_TYPE;
    return MPI_SUCCESS;
}

static int check_blocklens(MPI_Count count, const MPI_Count *bl)
{
    if (count && !bl)
        return MPI_ERR_ARG;
    for (MPI_Count i = 0; i < count; i++)
        if (bl[i] < 0)
            return MPI_ERR_ARG;
    return MPI_SUCCESS;
}

/* Index displacements are multiplied by the extent; reject what would overflow. */
static int check_scaled(MPI_Count v, MPI_Aint ext)
{
    MPI_Aint r;
    return __builtin_mul_overflow((MPI_Aint)v, ext, &r) ? MPI_ERR_ARG : MPI_SUCCESS;
}

int rmpi_dtype_contiguous(MPI_Count count, MPI_Datatype oldtype, int large, rmpi_dtype_t **newtype)
{
    rmpi_dtype_t *t;
    int rc = check_common(count, oldtype, newtype, &t);
    if (rc)
        return rc;
    rmpi_dtype_t *dt = rmpi_dtype_new(MPI_COMBINER_CONTIGUOUS, large, 1, 0, 1);
    dt->ints[0] = count;
    dt->types[0] = t;
    return rmpi_dtype_finish(dt, newtype);
}

int rmpi_dtype_vector(MPI_Count count, MPI_Count blocklen, MPI_Count stride, MPI_Datatype oldtype, int large,
                      rmpi_dtype_t **newtype)
{
    rmpi_dtype_t *t;
    MPI_Aint span;
    int rc = check_common(count, oldtype, newtype, &t);
    if (rc)
        return rc;
    if (blocklen < 0)
        return MPI_ERR_ARG;
    if (__builtin_mul_overflow((MPI_Aint)stride, t->extent, &span) ||
        __builtin_mul_overflow(span, (MPI_Aint)count, &span))
        return MPI_ERR_ARG;
    rmpi_dtype_t *dt = rmpi_dtype_new(MPI_COMBINER_VECTOR, large, 3, 0, 1);
    dt->ints[0] = count;
    dt->ints[1] = blocklen;
    dt->ints[2] = stride;
    dt->types[0] = t;
    return rmpi_dtype_finish(dt, newtype);
}

int rmpi_dtype_hvector(MPI_Count count, MPI_Count blocklen, MPI_Aint stride, MPI_Datatype oldtype, int large,
                       rmpi_dtype_t **newtype)
{
    rmpi_dtype_t *t;
    MPI_Aint span;
    int rc = check_common(count, oldtype, newtype, &t);
    if (rc)
        return rc;
    if (blocklen < 0)
        return MPI_ERR_ARG;
    if (__builtin_mul_overflow(stride, (MPI_Aint)count, &span))
        return MPI_ERR_ARG;
    rmpi_dtype_t *dt = rmpi_dtype_new(MPI_COMBINER_HVECTOR, large, 2, 1, 1);
    dt->ints[0] = count;
    dt->ints[1] = blocklen;
    dt->aints[0] = stride;
    dt->types[0] = t;
    return rmpi_dtype_finish(dt, newtype);
}

int rmpi_dtype_indexed(MPI_Count count, const MPI_Count *blocklens, const MPI_Count *disps, MPI_Datatype oldtype,
                       int large, rmpi_dtype_t **newtype)
{
    rmpi_dtype_t *t;
    int rc = check_common(count, oldtype, newtype, &t);
    if (rc || (rc = check_blocklens(count, blocklens)))
        return rc;
    if (count && !disps)
        return MPI_ERR_ARG;
    for (MPI_Count i = 0; i < count; i++)
        if ((rc = check_scaled(disps[i], t->extent)))
            return rc;
    size_t n = (size_t)count;
    rmpi_dtype_t *dt = rmpi_dtype_new(MPI_COMBINER_INDEXED, large, 1 + 2 * n, 0, 1);
    dt->ints[0] = count;
    if (n) {
        memcpy(dt->ints + 1, blocklens, n * sizeof(MPI_Count));
        memcpy(dt->ints + 1 + n, disps, n * sizeof(MPI_Count));
    }
    dt->types[0] = t;
    return rmpi_dtype_finish(dt, newtype);
}

int rmpi_dtype_hindexed(MPI_Count count, const MPI_Count *blocklens, const MPI_Aint *disps, MPI_Datatype oldtype,
                        int large, rmpi_dtype_t **newtype)
{
    rmpi_dtype_t *t;
    int rc = check_common(count, oldtype, newtype, &t);
    if (rc || (rc = check_blocklens(count, blocklens)))
        return rc;
    if (count && !disps)
        return MPI_ERR_ARG;
    size_t n = (size_t)count;
    rmpi_dtype_t *dt = rmpi_dtype_new(MPI_COMBINER_HINDEXED, large, 1 + n, n, 1);
    dt->ints[0] = count;
    if (n) {
        memcpy(dt->ints + 1, blocklens, n * sizeof(MPI_Count));
        memcpy(dt->aints, disps, n * sizeof(MPI_Aint));
    }
    dt->types[0] = t;
    return rmpi_dtype_finish(dt, newtype);
}

int rmpi_dtype_indexed_block(MPI_Count count, MPI_Count blocklen, const MPI_Count *disps, MPI_Datatype oldtype,
                             int large, rmpi_dtype_t **newtype)
{
    rmpi_dtype_t *t;
    int rc = check_common(count, oldtype, newtype, &t);
    if (rc)
        return rc;
    if (blocklen < 0 || (count && !disps))
        return MPI_ERR_ARG;
    for (MPI_Count i = 0; i < count; i++)
        if ((rc = check_scaled(disps[i], t->extent)))
            return rc;
    size_t n = (size_t)count;
    rmpi_dtype_t *dt = rmpi_dtype_new(MPI_COMBINER_INDEXED_BLOCK, large, 2 + n, 0, 1);
    dt->ints[0] = count;
    dt->ints[1] = blocklen;
    if (n)
        memcpy(dt->ints + 2, disps, n * sizeof(MPI_Count));
    dt->types[0] = t;
    return rmpi_dtype_finish(dt, newtype);
}

int rmpi_dtype_hindexed_block(MPI_Count count, MPI_Count blocklen, const MPI_Aint *disps, MPI_Datatype oldtype,
                              int large, rmpi_dtype_t **newtype)
{
    rmpi_dtype_t *t;
    int rc = check_common(count, oldtype, newtype, &t);
    if (rc)
        return rc;
    if (blocklen < 0 || (count && !disps))
        return MPI_ERR_ARG;
    size_t n = (size_t)count;
    rmpi_dtype_t *dt = rmpi_dtype_new(MPI_COMBINER_HINDEXED_BLOCK, large, 2, n, 1);
    dt->ints[0] = count;
    dt->ints[1] = blocklen;
    if (n)
        memcpy(dt->aints, disps, n * sizeof(MPI_Aint));
    dt->types[0] = t;
    return rmpi_dtype_finish(dt, newtype);
}

int rmpi_dtype_struct(MPI_Count count, const MPI_Count *blocklens, const MPI_Aint *disps, const MPI_Datatype *types,
                      int large, rmpi_dtype_t **newtype)
{
    int rc;
    if (count < 0)
        return MPI_ERR_COUNT;
    if (!newtype || (rc = check_blocklens(count, blocklens)) || (count && (!disps || !types)))
        return MPI_ERR_ARG;
    for (MPI_Count i = 0; i < count; i++)
        if (!rmpi_dtype_get(types[i]))
            return MPI_ERR_TYPE;
    size_t n = (size_t)count;
    rmpi_dtype_t *dt = rmpi_dtype_new(MPI_COMBINER_STRUCT, large, 1 + n, n, n);
    dt->ints[0] = count;
    for (size_t i = 0; i < n; i++) {
        dt->ints[1 + i] = blocklens[i];
        dt->aints[i] = disps[i];
        dt->types[i] = rmpi_dtype_get(types[i]);
    }
    return rmpi_dtype_finish(dt, newtype);
}

int rmpi_dtype_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, int large, rmpi_dtype_t **newtype)
{
    rmpi_dtype_t *t;
    MPI_Aint ub;
    int rc = check_common(0, oldtype, newtype, &t);
    if (rc)
        return rc;
    if (__builtin_add_overflow(lb, extent, &ub))
        return MPI_ERR_ARG;
    rmpi_dtype_t *dt = rmpi_dtype_new(MPI_COMBINER_RESIZED, large, 0, 2, 1);
    dt->aints[0] = lb;
    dt->aints[1] = extent;
    dt->types[0] = t;
    return rmpi_dtype_finish(dt, newtype);
}

int rmpi_dtype_dup(MPI_Datatype oldtype, rmpi_dtype_t **newtype)
{
    rmpi_dtype_t *t;
    int rc = check_common(0, oldtype, newtype, &t);
    if (rc)
        return rc;
    rmpi_dtype_t *dt = rmpi_dtype_new(MPI_COMBINER_DUP, 0, 0, 0, 1);
    dt->types[0] = t;
    rc = rmpi_dtype_finish(dt, newtype);
    if (rc == MPI_SUCCESS)
        dt->committed = t->committed;
    return rc;
}

int rmpi_dtype_clone(const rmpi_dtype_t *t, rmpi_dtype_t **newtype)
{
    rmpi_dtype_t *dt = rmpi_dtype_new(t->combiner, t->large, t->nints, t->naints, t->ntypes);
    if (t->nints)
        memcpy(dt->ints, t->ints, t->nints * sizeof(*dt->ints));
    if (t->naints)
        memcpy(dt->aints, t->aints, t->naints * sizeof(*dt->aints));
    for (size_t i = 0; i < t->ntypes; i++)
        dt->types[i] = t->types[i];
    if ((dt->inner = t->inner))
        rmpi_dtype_retain(dt->inner);
    int rc = rmpi_dtype_finish(dt, newtype);
    if (rc == MPI_SUCCESS)
        dt->committed = t->committed;
    return rc;
}

int rmpi_dtype_commit(rmpi_dtype_t *dt)
{
    dt->committed = 1;
    return MPI_SUCCESS;
}

int rmpi_dtype_free(rmpi_dtype_t *dt)
{
    if (dt->predefined || dt->user_freed)
        return MPI_ERR_TYPE;
    dt->user_freed = 1;
    rmpi_dtype_release(dt);
    return MPI_SUCCESS;
}

void rmpi_dtype_retain(rmpi_dtype_t *dt)
{
    if (!dt->predefined)
        dt->refcount++;
}

void rmpi_dtype_release(rmpi_dtype_t *dt)
{
    if (!dt->predefined && --dt->refcount == 0)
        dtype_destroy(dt);
}
