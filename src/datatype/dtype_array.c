/* Subarray and darray: the arguments are recorded for Get_contents and the layout is an
 * equivalent type built from contiguous/hvector/hindexed/struct/resized (the `inner`
 * type), following the type maps of MPI-4.1 5.1.3-5.1.4. */
#include "dtype_impl.h"

#include <stdlib.h>
#include <string.h>

/* Replace *cur by the result of a constructor that used it (dropping our reference). */
static int chain(rmpi_dtype_t **cur, int rc, rmpi_dtype_t *const *next)
{
    if (*cur)
        rmpi_dtype_release(*cur);
    *cur = rc == MPI_SUCCESS ? *next : NULL;
    return rc;
}

/* The final step of both: place `t` at byte `disp` in a type of lb 0 and extent `ext`. */
static int place(rmpi_dtype_t **t, MPI_Aint disp, MPI_Aint ext)
{
    MPI_Count one = 1;
    rmpi_dtype_t *n = NULL;
    int rc = chain(t, rmpi_dtype_hindexed(1, &one, &disp, rmpi_dtype_handle(*t), 0, &n), &n);
    if (rc)
        return rc;
    return chain(t, rmpi_dtype_resized(rmpi_dtype_handle(*t), 0, ext, 0, &n), &n);
}

/* Wrap the equivalent type into an object that reports `combiner` and its arguments. */
static int wrap(int combiner, int large, MPI_Count *ints, size_t nints, rmpi_dtype_t *old, rmpi_dtype_t *inner,
                rmpi_dtype_t **newtype)
{
    rmpi_dtype_t *dt = rmpi_dtype_new(combiner, large, nints, 0, 1);
    memcpy(dt->ints, ints, nints * sizeof(*ints));
    dt->types[0] = old;
    dt->inner = inner; /* our reference moves to the wrapper */
    return rmpi_dtype_finish(dt, newtype);
}

/* The last steps of both: place t at disp in a type of lb 0 and extent ext, wrap it with
 * the recorded arguments. Consumes t and ints whatever happens. */
static int array_finish(int combiner, int large, int rc, rmpi_dtype_t *t, MPI_Aint disp, MPI_Aint ext, MPI_Count *ints,
                        size_t nints, rmpi_dtype_t *old, rmpi_dtype_t **newtype)
{
    if (!rc)
        rc = place(&t, disp, ext);
    if (!rc)
        rc = wrap(combiner, large, ints, nints, old, t, newtype);
    else if (t)
        rmpi_dtype_release(t);
    free(ints);
    return rc;
}

int rmpi_dtype_subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes, const MPI_Count *starts,
                        int order, MPI_Datatype oldtype, int large, rmpi_dtype_t **newtype)
{
    rmpi_dtype_t *old = rmpi_dtype_get(oldtype);
    if (!old)
        return MPI_ERR_TYPE;
    if (ndims <= 0 || !sizes || !subsizes || !starts || !newtype ||
        (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
        return MPI_ERR_ARG;
    for (int i = 0; i < ndims; i++)
        if (sizes[i] <= 0 || subsizes[i] < 0 || starts[i] < 0 || starts[i] > sizes[i] - subsizes[i])
            return MPI_ERR_ARG;
            /* k-th fastest varying dimension */
#define DIM(k) (order == MPI_ORDER_C ? ndims - 1 - (k) : (k))
    MPI_Aint ext = old->extent, stride = ext, disp = 0;
    rmpi_dtype_t *t = NULL, *n = NULL;
    int rc = chain(&t, rmpi_dtype_contiguous(subsizes[DIM(0)], oldtype, 0, &n), &n);
    for (int k = 0; k < ndims && !rc; k++) {
        if (k > 0)
            rc = chain(&t, rmpi_dtype_hvector(subsizes[DIM(k)], 1, stride, rmpi_dtype_handle(t), 0, &n), &n);
        disp += (MPI_Aint)starts[DIM(k)] * stride;
        if (__builtin_mul_overflow(stride, (MPI_Aint)sizes[DIM(k)], &stride))
            rc = MPI_ERR_ARG;
    }
#undef DIM
    size_t nd = (size_t)ndims;
    MPI_Count *ints = rmpi_xmalloc((3 * nd + 2) * sizeof(*ints));
    ints[0] = ndims;
    memcpy(ints + 1, sizes, nd * sizeof(*ints));
    memcpy(ints + 1 + nd, subsizes, nd * sizeof(*ints));
    memcpy(ints + 1 + 2 * nd, starts, nd * sizeof(*ints));
    ints[1 + 3 * nd] = order;
    return array_finish(MPI_COMBINER_SUBARRAY, large, rc, t, disp, stride, ints, 3 * nd + 2, old, newtype);
}

/* One dimension of a darray, block distribution: this process's block of `gsize`
 * elements as `count` copies of the previous type `stride` bytes apart; *start is the
 * index of its first element in the dimension. */
static int darray_block(MPI_Count gsize, int nprocs, int coord, int darg, MPI_Aint stride, int innermost,
                        rmpi_dtype_t **t, MPI_Count *start)
{
    MPI_Count blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + nprocs - 1) / nprocs : darg;
    if (blk <= 0 || blk * nprocs < gsize)
        return MPI_ERR_ARG;
    MPI_Count mine = gsize - blk * coord;
    mine = mine < 0 ? 0 : mine > blk ? blk : mine;
    rmpi_dtype_t *n = NULL;
    int rc = innermost ? rmpi_dtype_contiguous(mine, rmpi_dtype_handle(*t), 0, &n)
                       : rmpi_dtype_hvector(mine, 1, stride, rmpi_dtype_handle(*t), 0, &n);
    *start = mine ? blk * coord : 0;
    return chain(t, rc, &n);
}

/* Cyclic distribution with blocks of `darg` (default 1): blocks coord, coord + nprocs, ...
 * In the innermost dimension the offset of the first block is built in (with the
 * dimension's full extent), elsewhere it is returned in *start. */
static int darray_cyclic(MPI_Count gsize, int nprocs, int coord, int darg, MPI_Aint stride, MPI_Aint old_ext,
                         int innermost, rmpi_dtype_t **t, MPI_Count *start)
{
    MPI_Count blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg, first = (MPI_Count)coord * blk, mine = 0;
    if (blk <= 0)
        return MPI_ERR_ARG;
    if (first < gsize) {
        MPI_Count left = gsize - first, period = blk * nprocs;
        mine = left / period * blk + (left % period < blk ? left % period : blk);
    }
    MPI_Count nfull = mine / blk, rem = mine % blk;
    MPI_Aint bstride = (MPI_Aint)nprocs * (MPI_Aint)blk * stride;
    rmpi_dtype_t *n = NULL, *base = *t;
    rmpi_dtype_retain(base);
    int rc = chain(t, rmpi_dtype_hvector(nfull, blk, bstride, rmpi_dtype_handle(*t), 0, &n), &n);
    if (!rc && rem) {
        MPI_Count bl[2] = {1, rem};
        MPI_Aint disp[2] = {0, (MPI_Aint)nfull * bstride};
        MPI_Datatype ty[2] = {rmpi_dtype_handle(*t), rmpi_dtype_handle(base)};
        rc = chain(t, rmpi_dtype_struct(2, bl, disp, ty, 0, &n), &n);
    }
    rmpi_dtype_release(base);
    if (rc)
        return rc;
    if (innermost) {
        *start = 0;
        return place(t, (MPI_Aint)first * old_ext, (MPI_Aint)gsize * old_ext);
    }
    *start = mine ? first : 0;
    return MPI_SUCCESS;
}

int rmpi_dtype_darray(int size, int rank, int ndims, const MPI_Count *gsizes, const int *distribs, const int *dargs,
                      const int *psizes, int order, MPI_Datatype oldtype, int large, rmpi_dtype_t **newtype)
{
    rmpi_dtype_t *old = rmpi_dtype_get(oldtype);
    if (!old)
        return MPI_ERR_TYPE;
    if (size <= 0 || rank < 0 || rank >= size || ndims <= 0 || !gsizes || !distribs || !dargs || !psizes || !newtype ||
        (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
        return MPI_ERR_ARG;
    long long nprocs = 1;
    for (int i = 0; i < ndims; i++) {
        if (gsizes[i] <= 0 || psizes[i] <= 0 ||
            (distribs[i] != MPI_DISTRIBUTE_BLOCK && distribs[i] != MPI_DISTRIBUTE_CYCLIC &&
             distribs[i] != MPI_DISTRIBUTE_NONE) ||
            (distribs[i] == MPI_DISTRIBUTE_NONE && psizes[i] != 1) ||
            (distribs[i] != MPI_DISTRIBUTE_NONE && dargs[i] != MPI_DISTRIBUTE_DFLT_DARG && dargs[i] <= 0))
            return MPI_ERR_ARG;
        nprocs *= psizes[i];
        if (nprocs > size)
            return MPI_ERR_ARG;
    }
    if (nprocs != size)
        return MPI_ERR_ARG;
    /* Process coordinates are row-major whatever the array order (MPI-4.1 5.1.4). */
    int *coords = rmpi_xmalloc((size_t)ndims * sizeof(int));
    for (int i = 0, r = rank, left = size; i < ndims; i++) {
        left /= psizes[i];
        coords[i] = r / left;
        r %= left;
    }
    MPI_Count *start = rmpi_xcalloc((size_t)ndims, sizeof(*start));
    MPI_Aint ext = old->extent, stride = ext;
    rmpi_dtype_t *t = old;
    rmpi_dtype_retain(t);
    int rc = MPI_SUCCESS;
    for (int k = 0; k < ndims && !rc; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        if (distribs[d] == MPI_DISTRIBUTE_CYCLIC)
            rc = darray_cyclic(gsizes[d], psizes[d], coords[d], dargs[d], stride, ext, k == 0, &t, &start[d]);
        else if (distribs[d] == MPI_DISTRIBUTE_BLOCK)
            rc = darray_block(gsizes[d], psizes[d], coords[d], dargs[d], stride, k == 0, &t, &start[d]);
        else
            rc = darray_block(gsizes[d], 1, 0, MPI_DISTRIBUTE_DFLT_DARG, stride, k == 0, &t, &start[d]);
        /* Each dimension's type spans the whole dimension, so the next one can lay out
         * consecutive blocks of it (cyclic blocks of several rows) by its extent. */
        if (!rc && __builtin_mul_overflow(stride, (MPI_Aint)gsizes[d], &stride))
            rc = MPI_ERR_ARG;
        rmpi_dtype_t *n = NULL;
        if (!rc)
            rc = chain(&t, rmpi_dtype_resized(rmpi_dtype_handle(t), 0, stride, 0, &n), &n);
    }
    MPI_Aint disp = 0, mult = ext;
    for (int k = 0; k < ndims && !rc; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        disp += (MPI_Aint)start[d] * mult;
        mult *= (MPI_Aint)gsizes[d];
    }
    free(coords);
    free(start);
    size_t nd = (size_t)ndims;
    MPI_Count *ints = rmpi_xmalloc((4 * nd + 4) * sizeof(*ints));
    ints[0] = size;
    ints[1] = rank;
    ints[2] = ndims;
    for (size_t i = 0; i < nd; i++) {
        ints[3 + i] = gsizes[i];
        ints[3 + nd + i] = distribs[i];
        ints[3 + 2 * nd + i] = dargs[i];
        ints[3 + 3 * nd + i] = psizes[i];
    }
    ints[3 + 4 * nd] = order;
    return array_finish(MPI_COMBINER_DARRAY, large, rc, t, disp, stride, ints, 4 * nd + 4, old, newtype);
}
