/* Datatype bindings: constructors (subarray and darray too), commit/free, size and extent
 * queries, names, addresses, Alloc_mem/Free_mem, MPI_Pack/Unpack. One function per
 * constructor (and for Pack/Unpack/Pack_size) checks and works; its int and _c forms are
 * generated from src/api/forms.txt and included at the end (an int form widens its arrays
 * to MPI_Count with widen(), a _c form its displacements to MPI_Aint with count_to_aint()). */
#include "api_impl.h"

#include "../datatype/datatype.h"
#include "../rma/rma.h"

#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* For helpers that report on behalf of the binding named by `func`. */
#define FCHECK(cond, code, ...)                                     \
    do {                                                            \
        if (RMPI_UNLIKELY(!(cond)))                                 \
            return rmpi_api_error(NULL, (code), func, __VA_ARGS__); \
    } while (0)

#define GET_TYPE(dt, h, what)                                                  \
    rmpi_dtype_t *dt = rmpi_dtype_get(h);                                      \
    RMPI_CHECK(dt, NULL, MPI_ERR_TYPE,                                         \
               "%s %p is not a valid datatype (null, already freed, or not a " \
               "datatype handle)",                                             \
               what, (void *)(h))

static MPI_Count *widen(const int *a, int n)
{
    if (!a || n <= 0)
        return NULL;
    MPI_Count *w = rmpi_xmalloc((size_t)n * sizeof(*w));
    for (int i = 0; i < n; i++)
        w[i] = a[i];
    return w;
}

static MPI_Aint *count_to_aint(const MPI_Count *a, MPI_Count n)
{
    if (!a || n <= 0)
        return NULL;
    MPI_Aint *w = rmpi_xmalloc((size_t)n * sizeof(*w));
    for (MPI_Count i = 0; i < n; i++)
        w[i] = (MPI_Aint)a[i];
    return w;
}

static int check_old(const char *func, MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    FCHECK(count >= 0, MPI_ERR_COUNT, "count %lld is negative", (long long)count);
    FCHECK(newtype, MPI_ERR_ARG, "newtype must not be NULL");
    FCHECK(rmpi_dtype_get(oldtype), MPI_ERR_TYPE,
           "oldtype %p is not a valid datatype (null, already freed, or not a datatype handle)", (void *)oldtype);
    return MPI_SUCCESS;
}

static int check_blocklens(const char *func, MPI_Count count, const MPI_Count *bl)
{
    FCHECK(count == 0 || bl, MPI_ERR_ARG, "array_of_blocklengths must not be NULL when count is %lld",
           (long long)count);
    for (MPI_Count i = 0; i < count; i++)
        FCHECK(bl[i] >= 0, MPI_ERR_ARG, "array_of_blocklengths[%lld] = %lld is negative", (long long)i,
               (long long)bl[i]);
    return MPI_SUCCESS;
}

/* The layer's own checks duplicate ours except for address overflow. */
static int finish(const char *func, int rc, rmpi_dtype_t *dt, MPI_Datatype *newtype)
{
    if (rc == MPI_ERR_ARG)
        return rmpi_api_error(NULL, rc, func, "the displacements, stride or block lengths overflow the address range");
    if (rc)
        return rmpi_api_error(NULL, rc, func, "invalid arguments (%s)", rmpi_api_err_name(rc));
    *newtype = rmpi_dtype_handle(dt);
    return MPI_SUCCESS;
}

static int contiguous(const char *func, MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype, int large)
{
    int rc = check_old(func, count, oldtype, newtype);
    if (rc)
        return rc;
    rmpi_dtype_t *dt = NULL;
    RMPI_LOCK();
    rc = rmpi_dtype_contiguous(count, oldtype, large, &dt);
    RMPI_UNLOCK();
    return finish(func, rc, dt, newtype);
}

static int vector(const char *func, MPI_Count count, MPI_Count blocklen, MPI_Count stride, int bytes,
                  MPI_Datatype oldtype, MPI_Datatype *newtype, int large)
{
    int rc = check_old(func, count, oldtype, newtype);
    if (rc)
        return rc;
    FCHECK(blocklen >= 0, MPI_ERR_ARG, "blocklength %lld is negative", (long long)blocklen);
    rmpi_dtype_t *dt = NULL;
    RMPI_LOCK();
    rc = bytes ? rmpi_dtype_hvector(count, blocklen, (MPI_Aint)stride, oldtype, large, &dt)
               : rmpi_dtype_vector(count, blocklen, stride, oldtype, large, &dt);
    RMPI_UNLOCK();
    return finish(func, rc, dt, newtype);
}

/* indexed and hindexed: exactly one of disps / adisps is used. */
static int indexed(const char *func, MPI_Count count, const MPI_Count *bl, const MPI_Count *disps,
                   const MPI_Aint *adisps, int bytes, MPI_Datatype oldtype, MPI_Datatype *newtype, int large)
{
    int rc = check_old(func, count, oldtype, newtype);
    if (rc || (rc = check_blocklens(func, count, bl)))
        return rc;
    FCHECK(count == 0 || (bytes ? (const void *)adisps : (const void *)disps), MPI_ERR_ARG,
           "array_of_displacements must not be NULL when count is %lld", (long long)count);
    rmpi_dtype_t *dt = NULL;
    RMPI_LOCK();
    rc = bytes ? rmpi_dtype_hindexed(count, bl, adisps, oldtype, large, &dt)
               : rmpi_dtype_indexed(count, bl, disps, oldtype, large, &dt);
    RMPI_UNLOCK();
    return finish(func, rc, dt, newtype);
}

static int indexed_block(const char *func, MPI_Count count, MPI_Count blocklen, const MPI_Count *disps,
                         const MPI_Aint *adisps, int bytes, MPI_Datatype oldtype, MPI_Datatype *newtype, int large)
{
    int rc = check_old(func, count, oldtype, newtype);
    if (rc)
        return rc;
    FCHECK(blocklen >= 0, MPI_ERR_ARG, "blocklength %lld is negative", (long long)blocklen);
    FCHECK(count == 0 || (bytes ? (const void *)adisps : (const void *)disps), MPI_ERR_ARG,
           "array_of_displacements must not be NULL when count is %lld", (long long)count);
    rmpi_dtype_t *dt = NULL;
    RMPI_LOCK();
    rc = bytes ? rmpi_dtype_hindexed_block(count, blocklen, adisps, oldtype, large, &dt)
               : rmpi_dtype_indexed_block(count, blocklen, disps, oldtype, large, &dt);
    RMPI_UNLOCK();
    return finish(func, rc, dt, newtype);
}

static int create_struct(const char *func, MPI_Count count, const MPI_Count *bl, const MPI_Aint *disps,
                         const MPI_Datatype *types, MPI_Datatype *newtype, int large)
{
    FCHECK(count >= 0, MPI_ERR_COUNT, "count %lld is negative", (long long)count);
    FCHECK(newtype, MPI_ERR_ARG, "newtype must not be NULL");
    int rc = check_blocklens(func, count, bl);
    if (rc)
        return rc;
    FCHECK(count == 0 || (disps && types), MPI_ERR_ARG,
           "array_of_displacements and array_of_types must not be NULL when count is %lld", (long long)count);
    for (MPI_Count i = 0; i < count; i++)
        FCHECK(rmpi_dtype_get(types[i]), MPI_ERR_TYPE,
               "array_of_types[%lld] = %p is not a valid datatype (null, already freed, or not a datatype handle)",
               (long long)i, (void *)types[i]);
    rmpi_dtype_t *dt = NULL;
    RMPI_LOCK();
    rc = rmpi_dtype_struct(count, bl, disps, types, large, &dt);
    RMPI_UNLOCK();
    return finish(func, rc, dt, newtype);
}

static int resized(const char *func, MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype,
                   int large)
{
    int rc = check_old(func, 0, oldtype, newtype);
    if (rc)
        return rc;
    rmpi_dtype_t *dt = NULL;
    RMPI_LOCK();
    rc = rmpi_dtype_resized(oldtype, lb, extent, large, &dt);
    RMPI_UNLOCK();
    return finish(func, rc, dt, newtype);
}

/* Subarray and darray: the layer checks the shapes; one message covers its MPI_ERR_ARG. */
static int array_type(const char *func, int rc, rmpi_dtype_t *dt, MPI_Datatype *newtype, const char *what)
{
    if (rc == MPI_ERR_ARG)
        return rmpi_api_error(NULL, rc, func, "invalid %s", what);
    return finish(func, rc, dt, newtype);
}

static int subarray(const char *func, int ndims, const MPI_Count *sizes, const MPI_Count *subsizes,
                    const MPI_Count *starts, int order, MPI_Datatype oldtype, MPI_Datatype *newtype, int large)
{
    int rc = check_old(func, 0, oldtype, newtype);
    if (rc)
        return rc;
    FCHECK(ndims > 0, MPI_ERR_ARG, "ndims %d must be positive", ndims);
    rmpi_dtype_t *dt = NULL;
    RMPI_LOCK();
    rc = rmpi_dtype_subarray(ndims, sizes, subsizes, starts, order, oldtype, large, &dt);
    RMPI_UNLOCK();
    return array_type(func, rc, dt, newtype,
                      "subarray: need sizes > 0, 0 <= starts, starts + subsizes <= sizes, order MPI_ORDER_C or "
                      "MPI_ORDER_FORTRAN, and non-NULL arrays");
}

static int darray(const char *func, int size, int rank, int ndims, const MPI_Count *gsizes, const int *distribs,
                  const int *dargs, const int *psizes, int order, MPI_Datatype oldtype, MPI_Datatype *newtype,
                  int large)
{
    int rc = check_old(func, 0, oldtype, newtype);
    if (rc)
        return rc;
    FCHECK(ndims > 0, MPI_ERR_ARG, "ndims %d must be positive", ndims);
    FCHECK(size > 0 && rank >= 0 && rank < size, MPI_ERR_ARG, "rank %d is not in a group of size %d", rank, size);
    rmpi_dtype_t *dt = NULL;
    RMPI_LOCK();
    rc = rmpi_dtype_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, oldtype, large, &dt);
    RMPI_UNLOCK();
    return array_type(func, rc, dt, newtype,
                      "darray: need gsizes > 0, psizes whose product is size, MPI_DISTRIBUTE_BLOCK/CYCLIC/NONE (NONE "
                      "with psize 1), dargs > 0 or MPI_DISTRIBUTE_DFLT_DARG (a block darg must cover gsize over the "
                      "processes), order MPI_ORDER_C or MPI_ORDER_FORTRAN");
}

int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    RMPI_API_INIT_CHECK();
    int rc = check_old(__func__, 0, oldtype, newtype);
    if (rc)
        return rc;
    rmpi_dtype_t *dt = NULL;
    RMPI_LOCK();
    rc = rmpi_dtype_dup(oldtype, &dt);
    RMPI_UNLOCK();
    rc = finish(__func__, rc, dt, newtype);
    if (!rc && (rc = rmpi_api_type_attr_dup(oldtype, *newtype))) { /* a copy callback failed */
        MPI_Type_free(newtype);
        return RMPI_ERROR(NULL, rc, "an attribute copy callback returned error %d", rc);
    }
    return rc;
}

int MPI_Type_commit(MPI_Datatype *datatype)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(datatype, NULL, MPI_ERR_ARG, "datatype must not be NULL");
    GET_TYPE(dt, *datatype, "datatype");
    RMPI_LOCK();
    rmpi_dtype_commit(dt);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

int MPI_Type_free(MPI_Datatype *datatype)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(datatype, NULL, MPI_ERR_ARG, "datatype must not be NULL");
    GET_TYPE(dt, *datatype, "datatype");
    RMPI_CHECK(!dt->predefined, NULL, MPI_ERR_TYPE, "%s is a predefined datatype and cannot be freed",
               rmpi_dtype_name(dt));
    int rc = rmpi_api_type_attr_free(*datatype); /* delete callbacks, last set first */
    if (rc)
        return RMPI_ERROR(NULL, rc, "an attribute delete callback returned error %d", rc);
    RMPI_LOCK();
    rc = rmpi_dtype_free(dt);
    RMPI_UNLOCK();
    if (rc)
        return RMPI_ERROR(NULL, rc, "datatype %p was already freed", (void *)*datatype);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

int MPI_Type_size(MPI_Datatype datatype, int *size)
{
    RMPI_API_INIT_CHECK();
    GET_TYPE(dt, datatype, "datatype");
    RMPI_CHECK(size, NULL, MPI_ERR_ARG, "size must not be NULL");
    *size = dt->size > INT_MAX ? MPI_UNDEFINED : (int)dt->size;
    return MPI_SUCCESS;
}

int MPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    RMPI_API_INIT_CHECK();
    GET_TYPE(dt, datatype, "datatype");
    RMPI_CHECK(size, NULL, MPI_ERR_ARG, "size must not be NULL");
    *size = (MPI_Count)dt->size;
    return MPI_SUCCESS;
}

int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    RMPI_API_INIT_CHECK();
    GET_TYPE(dt, datatype, "datatype");
    RMPI_CHECK(size, NULL, MPI_ERR_ARG, "size must not be NULL");
    *size = (MPI_Count)dt->size;
    return MPI_SUCCESS;
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    RMPI_API_INIT_CHECK();
    GET_TYPE(dt, datatype, "datatype");
    RMPI_CHECK(lb && extent, NULL, MPI_ERR_ARG, "lb and extent must not be NULL");
    rmpi_dtype_get_extent(dt, lb, extent);
    return MPI_SUCCESS;
}

int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    RMPI_API_INIT_CHECK();
    GET_TYPE(dt, datatype, "datatype");
    RMPI_CHECK(true_lb && true_extent, NULL, MPI_ERR_ARG, "true_lb and true_extent must not be NULL");
    rmpi_dtype_get_true_extent(dt, true_lb, true_extent);
    return MPI_SUCCESS;
}

/* The MPI_Count flavours (_c and _x) of the extent queries: one body, the caller's name in
 * the error messages. */
static int count_extent(const char *func, MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent, int true_ext)
{
    if (RMPI_UNLIKELY(rmpi_api_state != RMPI_STATE_INIT))
        return rmpi_api_not_initialized(func);
    rmpi_dtype_t *dt = rmpi_dtype_get(datatype);
    if (!dt)
        return rmpi_api_error(NULL, MPI_ERR_TYPE, func,
                              "datatype %p is not a valid datatype (null, already freed, or not a datatype handle)",
                              (void *)datatype);
    if (!lb || !extent)
        return rmpi_api_error(NULL, MPI_ERR_ARG, func, "%s must not be NULL",
                              true_ext ? "true_lb and true_extent" : "lb and extent");
    *lb = true_ext ? dt->true_lb : dt->lb;
    *extent = true_ext ? dt->true_extent : dt->extent;
    return MPI_SUCCESS;
}

int MPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return count_extent(__func__, datatype, lb, extent, 0);
}

int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return count_extent(__func__, datatype, lb, extent, 0);
}

int MPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    return count_extent(__func__, datatype, true_lb, true_extent, 1);
}

int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    return count_extent(__func__, datatype, true_lb, true_extent, 1);
}

int MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(type_name && resultlen, NULL, MPI_ERR_ARG, "type_name and resultlen must not be NULL");
    if (datatype == MPI_DATATYPE_NULL) { /* MPI-4.1: the null handle has a name too */
        *resultlen = snprintf(type_name, MPI_MAX_OBJECT_NAME, "MPI_DATATYPE_NULL");
        return MPI_SUCCESS;
    }
    GET_TYPE(dt, datatype, "datatype");
    size_t n = strlen(rmpi_dtype_name(dt));
    memcpy(type_name, rmpi_dtype_name(dt), n + 1);
    *resultlen = (int)n;
    return MPI_SUCCESS;
}

int MPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    RMPI_API_INIT_CHECK();
    GET_TYPE(dt, datatype, "datatype");
    RMPI_CHECK(type_name, NULL, MPI_ERR_ARG, "type_name must not be NULL");
    RMPI_LOCK();
    rmpi_dtype_set_name(dt, type_name);
    RMPI_UNLOCK();
    return MPI_SUCCESS;
}

/* Usable before MPI_Init: plain address arithmetic. */
int MPI_Get_address(const void *location, MPI_Aint *address)
{
    RMPI_CHECK(address, NULL, MPI_ERR_ARG, "address must not be NULL");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}

/* Unsigned arithmetic: addresses above 2^63 must wrap, not overflow. */
MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp); }

MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) { return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2); }

/* Shared-memory files the node's ranks can map, for direct Win_create windows (rma's
 * mem.c, RMPI_RMA_ALLOC_MEM_SHM), else malloc; no provider needs a registration here. */
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    RMPI_CHECK(size >= 0, NULL, MPI_ERR_SIZE, "size %ld is negative", (long)size);
    RMPI_CHECK(baseptr, NULL, MPI_ERR_ARG, "baseptr must not be NULL");
    void *p = NULL;
    int rc = rmpi_rma_mem_alloc((size_t)size, &p);
    RMPI_CHECK(!rc, NULL, MPI_ERR_NO_MEM, "cannot allocate %ld bytes", (long)size);
    memcpy(baseptr, &p, sizeof p);
    return MPI_SUCCESS;
}

int MPI_Free_mem(void *base)
{
    rmpi_rma_mem_free(base);
    return MPI_SUCCESS;
}

static int pack_common(const char *func, MPI_Count count, MPI_Datatype datatype, rmpi_comm_t *c, rmpi_dtype_t **dtp)
{
    *dtp = NULL; /* set on every path: gcc -O3 cannot tell that the error paths return nonzero */
    if (RMPI_UNLIKELY(count < 0))
        return rmpi_api_error(c, MPI_ERR_COUNT, func, "count %lld is negative", (long long)count);
    rmpi_dtype_t *dt = rmpi_dtype_get(datatype);
    if (RMPI_UNLIKELY(!dt))
        return rmpi_api_error(c, MPI_ERR_TYPE, func, "datatype %p is not a valid datatype", (void *)datatype);
    if (RMPI_UNLIKELY(!dt->committed))
        return rmpi_api_error(c, MPI_ERR_TYPE, func, "datatype %p is not committed (call MPI_Type_commit)",
                              (void *)datatype);
    if (RMPI_UNLIKELY(!rmpi_dtype_count_ok(dt, count)))
        return rmpi_api_count_error(func, c, count, dt);
    *dtp = dt;
    return MPI_SUCCESS;
}

/* MPI_Pack and MPI_Unpack (and their _c forms, generated from src/api/forms.txt at the
 * end of this file), one function both ways: `user` holds count elements of the datatype,
 * `buf` the packed bytes, bufsize of them, with the data at *position. */
static int pack_move(const char *func, int pack, void *user, MPI_Count count, MPI_Datatype datatype, void *buf,
                     MPI_Count bufsize, MPI_Count *position, rmpi_comm_t *c)
{
    rmpi_dtype_t *dt;
    int rc = pack_common(func, count, datatype, c, &dt);
    if (rc)
        return rc;
    if (RMPI_UNLIKELY(!position || *position < 0 || bufsize < 0))
        return rmpi_api_error(c, MPI_ERR_ARG, func, "position must be non-NULL and position and %s non-negative",
                              pack ? "outsize" : "insize");
    size_t bytes = (size_t)count * dt->size;
    if (RMPI_UNLIKELY(*position > bufsize || bytes > (size_t)(bufsize - *position)))
        return rmpi_api_error(c, MPI_ERR_TRUNCATE, func, "%s %zu bytes at position %lld %s buffer of %lld bytes",
                              pack ? "packing" : "unpacking", bytes, (long long)*position,
                              pack ? "overruns the output" : "reads past the input", (long long)bufsize);
    if (RMPI_UNLIKELY(bytes && (!buf || (!user && dt->true_lb <= 0))))
        return rmpi_api_error(c, MPI_ERR_BUFFER, func, "inbuf and outbuf must not be NULL");
    if (pack)
        rmpi_dtype_pack(user, (size_t)count, dt, 0, (char *)buf + *position, bytes);
    else
        rmpi_dtype_unpack((const char *)buf + *position, bytes, user, (size_t)count, dt, 0);
    *position += (MPI_Count)bytes;
    return MPI_SUCCESS;
}

/* Packed data is the raw bytes of the type map: no header, no conversion. max: what the
 * form's size argument holds (an int form reports a larger size instead of cutting it). */
static int pack_size(const char *func, MPI_Count incount, MPI_Datatype datatype, rmpi_comm_t *c, MPI_Count *size,
                     MPI_Count max)
{
    rmpi_dtype_t *dt;
    int rc = pack_common(func, incount, datatype, c, &dt);
    if (rc)
        return rc;
    if (RMPI_UNLIKELY(!size))
        return rmpi_api_error(c, MPI_ERR_ARG, func, "size must not be NULL");
    size_t bytes = (size_t)incount * dt->size;
    if (RMPI_UNLIKELY(bytes > (size_t)max))
        return rmpi_api_error(c, MPI_ERR_VALUE_TOO_LARGE, func,
                              "%zu bytes do not fit in the int size argument; use MPI_Pack_size_c", bytes);
    *size = (MPI_Count)bytes;
    return MPI_SUCCESS;
}

#include "api/api_datatype.forms.h"
