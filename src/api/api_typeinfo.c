/* Datatype decoding and portable packing: Type_get_envelope/contents (and _c),
 * Pack_external/Unpack_external/Pack_external_size ("external32"), Type_match_size,
 * Type_create_f90_integer/real/complex (cached predefined objects with an F90 combiner),
 * Type_get_value_index. */
#include "api_impl.h"

#include "../datatype/datatype.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define FCHECK(cond, code, ...)                                     \
    do {                                                            \
        if (RMPI_UNLIKELY(!(cond)))                                 \
            return rmpi_api_error(NULL, (code), func, __VA_ARGS__); \
    } while (0)

static int get_type(const char *func, MPI_Datatype h, rmpi_dtype_t **dt)
{
    *dt = rmpi_dtype_get(h);
    FCHECK(*dt, MPI_ERR_TYPE, "datatype %p is not a valid datatype (null, already freed, or not a datatype handle)",
           (void *)h);
    return MPI_SUCCESS;
}

int MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes,
                          int *combiner)
{
    RMPI_API_INIT_CHECK();
    rmpi_dtype_t *dt;
    int rc = get_type(__func__, datatype, &dt);
    if (rc)
        return rc;
    RMPI_CHECK(num_integers && num_addresses && num_datatypes && combiner, NULL, MPI_ERR_ARG,
               "the output arguments must not be NULL");
    rmpi_dtype_envelope_t env;
    rmpi_dtype_envelope(dt, 0, &env);
    RMPI_CHECK(env.ni <= INT_MAX && env.na <= INT_MAX && env.nd <= INT_MAX, NULL, MPI_ERR_TYPE,
               "the datatype has more arguments than an int can count; use MPI_Type_get_envelope_c");
    *num_integers = (int)env.ni;
    *num_addresses = (int)env.na;
    *num_datatypes = (int)env.nd;
    *combiner = env.combiner;
    return MPI_SUCCESS;
}

int MPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers, MPI_Count *num_addresses,
                            MPI_Count *num_large_counts, MPI_Count *num_datatypes, int *combiner)
{
    RMPI_API_INIT_CHECK();
    rmpi_dtype_t *dt;
    int rc = get_type(__func__, datatype, &dt);
    if (rc)
        return rc;
    RMPI_CHECK(num_integers && num_addresses && num_large_counts && num_datatypes && combiner, NULL, MPI_ERR_ARG,
               "the output arguments must not be NULL");
    rmpi_dtype_envelope_t env;
    rmpi_dtype_envelope(dt, 1, &env);
    *num_integers = env.ni;
    *num_addresses = env.na;
    *num_large_counts = env.nl;
    *num_datatypes = env.nd;
    *combiner = env.combiner;
    return MPI_SUCCESS;
}

/* Both flavours: ints go out as int (checked), derived argument types as new handles the
 * caller must free (clones), predefined ones as themselves. */
static int contents(const char *func, MPI_Datatype datatype, int large_api, MPI_Count max_ints, MPI_Count max_addrs,
                    MPI_Count max_large, MPI_Count max_types, int *ints, MPI_Aint *addrs, MPI_Count *large,
                    MPI_Datatype *types)
{
    if (RMPI_UNLIKELY(rmpi_api_state != RMPI_STATE_INIT))
        return rmpi_api_not_initialized(func);
    rmpi_dtype_t *dt;
    int rc = get_type(func, datatype, &dt);
    if (rc)
        return rc;
    FCHECK(dt->combiner != MPI_COMBINER_NAMED, MPI_ERR_TYPE,
           "%s is a predefined datatype: it has no contents (check the combiner with MPI_Type_get_envelope)",
           rmpi_dtype_name(dt));
    rmpi_dtype_envelope_t env;
    rmpi_dtype_envelope(dt, large_api, &env);
    FCHECK(max_ints >= env.ni && max_addrs >= env.na && max_large >= env.nl && max_types >= env.nd, MPI_ERR_ARG,
           "the arrays are too small: the datatype has %lld integers, %lld addresses, %lld large counts and %lld "
           "datatypes",
           (long long)env.ni, (long long)env.na, (long long)env.nl, (long long)env.nd);
    FCHECK((!env.ni || ints) && (!env.na || addrs) && (!env.nl || large) && (!env.nd || types), MPI_ERR_ARG,
           "an output array the datatype needs is NULL");
    MPI_Count *wide = rmpi_xmalloc((size_t)(env.ni + 1) * sizeof(*wide));
    rmpi_dtype_t **objs = rmpi_xmalloc((size_t)(env.nd + 1) * sizeof(*objs));
    rmpi_dtype_contents(dt, large_api, wide, addrs, large, objs);
    for (MPI_Count i = 0; i < env.ni; i++)
        if (wide[i] < INT_MIN || wide[i] > INT_MAX) {
            free(wide);
            free(objs);
            return rmpi_api_error(NULL, MPI_ERR_TYPE, func,
                                  "integer argument %lld does not fit in an int; use MPI_Type_get_contents_c",
                                  (long long)i);
        }
    for (MPI_Count i = 0; i < env.ni; i++)
        ints[i] = (int)wide[i];
    RMPI_LOCK();
    for (MPI_Count i = 0; i < env.nd; i++) {
        rmpi_dtype_t *c = objs[i];
        if (!c->predefined && rmpi_dtype_clone(objs[i], &c) != MPI_SUCCESS)
            c = NULL;
        types[i] = c ? rmpi_dtype_handle(c) : MPI_DATATYPE_NULL;
    }
    RMPI_UNLOCK();
    free(wide);
    free(objs);
    return MPI_SUCCESS;
}

int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
                          int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    return contents(__func__, datatype, 0, max_integers, max_addresses, 0, max_datatypes, array_of_integers,
                    array_of_addresses, NULL, array_of_datatypes);
}

int MPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                            MPI_Count max_large_counts, MPI_Count max_datatypes, int array_of_integers[],
                            MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                            MPI_Datatype array_of_datatypes[])
{
    return contents(__func__, datatype, 1, max_integers, max_addresses, max_large_counts, max_datatypes,
                    array_of_integers, array_of_addresses, array_of_large_counts, array_of_datatypes);
}

/* ---- external32 ---- */

static int check_datarep(const char *func, const char *datarep)
{
    FCHECK(datarep && strcmp(datarep, "external32") == 0, MPI_ERR_ARG,
           "data representation \"%s\" is not supported (only \"external32\")", datarep ? datarep : "(null)");
    return MPI_SUCCESS;
}

/* Both the native and the external32 bytes of count elements must be addressable. */
static int external_count_ok(const char *func, MPI_Count count, const rmpi_dtype_t *dt)
{
    MPI_Count bytes;
    if (!rmpi_dtype_count_ok(dt, count) ||
        __builtin_mul_overflow(count, (MPI_Count)rmpi_dtype_external_size(dt), &bytes))
        return rmpi_api_count_error(func, NULL, count, dt);
    return MPI_SUCCESS;
}

static int external_common(const char *func, const char *datarep, MPI_Count count, MPI_Datatype datatype,
                           rmpi_dtype_t **dt)
{
    int rc = check_datarep(func, datarep);
    if (rc || (rc = get_type(func, datatype, dt)))
        return rc;
    FCHECK(count >= 0, MPI_ERR_COUNT, "count %lld is negative", (long long)count);
    FCHECK((*dt)->committed, MPI_ERR_TYPE, "datatype %p is not committed (call MPI_Type_commit)", (void *)datatype);
    return external_count_ok(func, count, *dt);
}

/* Both directions (MPI_Pack_external, MPI_Unpack_external and their _c forms, generated
 * from src/api/forms.txt at the end of this file): `user` holds `count` elements of the datatype in its own layout, `buf`
 * the external32 stream of `bufsize` bytes with the data at *position. */
static int external_move(const char *func, int pack, const char *datarep, void *user, MPI_Count count,
                         MPI_Datatype datatype, void *buf, MPI_Count bufsize, MPI_Count *position)
{
    rmpi_dtype_t *dt = NULL;
    int rc = external_common(func, datarep, count, datatype, &dt);
    if (rc)
        return rc;
    FCHECK(position && *position >= 0 && bufsize >= 0, MPI_ERR_ARG,
           "position must be non-NULL and position and the buffer size non-negative");
    size_t n = (size_t)count, bytes = n * rmpi_dtype_size(dt), ext = n * rmpi_dtype_external_size(dt);
    FCHECK(*position <= bufsize && ext <= (size_t)(bufsize - *position), MPI_ERR_TRUNCATE,
           "%s %zu bytes at position %lld does not fit in the packed buffer of %lld bytes",
           pack ? "packing" : "unpacking", ext, (long long)*position, (long long)bufsize);
    FCHECK(!bytes || (buf && (user || dt->true_lb > 0)), MPI_ERR_BUFFER, "inbuf and outbuf must not be NULL");
    char *tmp = rmpi_xmalloc(bytes + 1), *stream = (char *)buf + *position;
    if (pack) {
        rmpi_dtype_pack(user, n, dt, 0, tmp, bytes);
        rmpi_dtype_to_external(dt, n, tmp, stream);
    } else {
        rmpi_dtype_from_external(dt, n, stream, tmp);
        rmpi_dtype_unpack(tmp, bytes, user, n, dt, 0);
    }
    free(tmp);
    *position += (MPI_Count)ext;
    return MPI_SUCCESS;
}

static int external_size(const char *func, const char *datarep, MPI_Count incount, MPI_Datatype datatype,
                         MPI_Count *size)
{
    rmpi_dtype_t *dt;
    int rc = check_datarep(func, datarep);
    if (rc || (rc = get_type(func, datatype, &dt)))
        return rc;
    FCHECK(incount >= 0, MPI_ERR_COUNT, "count %lld is negative", (long long)incount);
    FCHECK(size, MPI_ERR_ARG, "size must not be NULL");
    if ((rc = external_count_ok(func, incount, dt)))
        return rc;
    *size = incount * (MPI_Count)rmpi_dtype_external_size(dt);
    return MPI_SUCCESS;
}

/* ---- predefined types by description ---- */

int MPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    RMPI_CHECK(datatype, NULL, MPI_ERR_ARG, "datatype must not be NULL");
    MPI_Datatype t = rmpi_dtype_match_size(typeclass, size);
    RMPI_CHECK(t != MPI_DATATYPE_NULL, NULL, MPI_ERR_ARG, "no predefined type of class %d has %d bytes", typeclass,
               size);
    *datatype = t;
    return MPI_SUCCESS;
}

static int f90_type(int combiner, int p, int r, MPI_Datatype match, MPI_Datatype *newtype)
{
    rmpi_dtype_t *dt = NULL;
    RMPI_LOCK();
    int rc = rmpi_dtype_f90(combiner, p, r, match, &dt);
    RMPI_UNLOCK();
    if (rc == MPI_SUCCESS)
        *newtype = rmpi_dtype_handle(dt);
    return rc;
}

/* The Fortran kinds gfortran offers: INTEGER(1,2,4,8,16), REAL(4,8,16). */
int MPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(newtype, NULL, MPI_ERR_ARG, "newtype must not be NULL");
    static const struct {
        int r;
        MPI_Datatype t;
    } kinds[] = {
        {2, MPI_INTEGER1}, {4, MPI_INTEGER2}, {9, MPI_INTEGER4}, {18, MPI_INTEGER8}, {38, MPI_INTEGER16},
    };
    for (size_t i = 0; i < RMPI_ARRAY_LEN(kinds); i++)
        if (r <= kinds[i].r)
            return f90_type(MPI_COMBINER_F90_INTEGER, 0, r, kinds[i].t, newtype);
    return RMPI_ERROR(NULL, MPI_ERR_ARG, "no integer kind has a decimal range of %d digits", r);
}

static int f90_real(const char *func, int p, int r, int cplx, MPI_Datatype *newtype)
{
    if (RMPI_UNLIKELY(rmpi_api_state != RMPI_STATE_INIT))
        return rmpi_api_not_initialized(func);
    FCHECK(newtype, MPI_ERR_ARG, "newtype must not be NULL");
    FCHECK(p != MPI_UNDEFINED || r != MPI_UNDEFINED, MPI_ERR_ARG, "p and r must not both be MPI_UNDEFINED");
    static const struct {
        int p, r;
        MPI_Datatype re, cx;
    } kinds[] = {
        {6, 37, MPI_REAL4, MPI_COMPLEX8},
        {15, 307, MPI_REAL8, MPI_COMPLEX16},
        {33, 4931, MPI_REAL16, MPI_COMPLEX32},
    };
    int pp = p == MPI_UNDEFINED ? 0 : p, rr = r == MPI_UNDEFINED ? 0 : r;
    for (size_t i = 0; i < RMPI_ARRAY_LEN(kinds); i++)
        if (pp <= kinds[i].p && rr <= kinds[i].r)
            return f90_type(cplx ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL, p, r,
                            cplx ? kinds[i].cx : kinds[i].re, newtype);
    return rmpi_api_error(NULL, MPI_ERR_ARG, func, "no %s kind has precision %d and range %d",
                          cplx ? "complex" : "real", p, r);
}

int MPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype) { return f90_real(__func__, p, r, 0, newtype); }

int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype) { return f90_real(__func__, p, r, 1, newtype); }

/* MPI-4.1: the predefined pair type for MINLOC/MAXLOC, MPI_DATATYPE_NULL when none; C
 * values pair with an MPI_INT index, the Fortran pairs with an index of their own type. */
int MPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type, MPI_Datatype *pair_type)
{
    RMPI_API_INIT_CHECK();
    rmpi_dtype_t *dt;
    int rc = get_type(__func__, value_type, &dt);
    if (rc || (rc = get_type(__func__, index_type, &dt)))
        return rc;
    RMPI_CHECK(pair_type, NULL, MPI_ERR_ARG, "pair_type must not be NULL");
    static const struct {
        MPI_Datatype v, i, pair;
    } pairs[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},      {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},      {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_REAL, MPI_REAL, MPI_2REAL},          {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
    };
    *pair_type = MPI_DATATYPE_NULL;
    for (size_t i = 0; i < RMPI_ARRAY_LEN(pairs); i++)
        if (pairs[i].v == value_type && pairs[i].i == index_type)
            *pair_type = pairs[i].pair;
    return MPI_SUCCESS;
}

#include "api/api_typeinfo.forms.h"
