/* Predefined datatypes: one static object per handle value, handle <-> object. */
#include "dtype_impl.h"

#include "../core/core.h" /* rmpi_thread_multiple: whether handle lookups must lock */

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

/* The C layouts that define the extent of the pair types (MPI_MINLOC/MAXLOC operands). */
struct float_int {
    float a;
    int b;
};
struct double_int {
    double a;
    int b;
};
struct long_int {
    long a;
    int b;
};
struct short_int {
    short a;
    int b;
};
struct long_double_int {
    long double a;
    int b;
};
struct int_int {
    int a;
    int b;
};
struct float_float {
    float a;
    float b;
};
struct double_double {
    double a;
    double b;
};

typedef struct predef_spec {
    MPI_Datatype h;
    const char *name;
    size_t size; /* first member for pairs */
    size_t align;
    size_t second_off; /* pairs only: offset and size of the second member, and the C extent */
    size_t second_size;
    size_t extent;
} predef_spec_t;

#define BASIC(h, sz, al)        \
    {                           \
        h, #h, sz, al, 0, 0, sz \
    }
#define CTYPE(h, T)                                    \
    {                                                  \
        h, #h, sizeof(T), _Alignof(T), 0, 0, sizeof(T) \
    }
#define PAIR(h, S, T1, T2)                                                                         \
    {                                                                                              \
        h, #h, sizeof(T1), _Alignof(struct S), offsetof(struct S, b), sizeof(T2), sizeof(struct S) \
    }

/* Fortran sizes follow the usual compiler defaults (default INTEGER and REAL of 4 bytes);
 * the alignments are those of the matching C types. */
static const predef_spec_t predef_specs[] = {
    CTYPE(MPI_AINT, MPI_Aint),
    CTYPE(MPI_COUNT, MPI_Count),
    CTYPE(MPI_OFFSET, MPI_Offset),
    BASIC(MPI_PACKED, 1, 1),
    CTYPE(MPI_SHORT, short),
    CTYPE(MPI_INT, int),
    CTYPE(MPI_LONG, long),
    CTYPE(MPI_LONG_LONG, long long),
    CTYPE(MPI_UNSIGNED_SHORT, unsigned short),
    CTYPE(MPI_UNSIGNED, unsigned),
    CTYPE(MPI_UNSIGNED_LONG, unsigned long),
    CTYPE(MPI_UNSIGNED_LONG_LONG, unsigned long long),
    CTYPE(MPI_FLOAT, float),
    CTYPE(MPI_C_FLOAT_COMPLEX, float _Complex),
    CTYPE(MPI_CXX_FLOAT_COMPLEX, float _Complex),
    CTYPE(MPI_DOUBLE, double),
    CTYPE(MPI_C_DOUBLE_COMPLEX, double _Complex),
    CTYPE(MPI_CXX_DOUBLE_COMPLEX, double _Complex),
    CTYPE(MPI_INTEGER, int),
    CTYPE(MPI_LOGICAL, int),
    CTYPE(MPI_REAL, float),
    CTYPE(MPI_COMPLEX, float _Complex),
    CTYPE(MPI_DOUBLE_PRECISION, double),
    CTYPE(MPI_DOUBLE_COMPLEX, double _Complex),
    CTYPE(MPI_LONG_DOUBLE, long double),
    CTYPE(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex),
    CTYPE(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex),
    PAIR(MPI_FLOAT_INT, float_int, float, int),
    PAIR(MPI_DOUBLE_INT, double_int, double, int),
    PAIR(MPI_LONG_INT, long_int, long, int),
    PAIR(MPI_2INT, int_int, int, int),
    PAIR(MPI_SHORT_INT, short_int, short, int),
    PAIR(MPI_LONG_DOUBLE_INT, long_double_int, long double, int),
    PAIR(MPI_2REAL, float_float, float, float),
    PAIR(MPI_2DOUBLE_PRECISION, double_double, double, double),
    PAIR(MPI_2INTEGER, int_int, int, int),
    CTYPE(MPI_C_BOOL, _Bool),
    BASIC(MPI_CXX_BOOL, 1, 1),
    CTYPE(MPI_WCHAR, wchar_t),
    CTYPE(MPI_INT8_T, int8_t),
    CTYPE(MPI_UINT8_T, uint8_t),
    CTYPE(MPI_CHAR, char),
    CTYPE(MPI_SIGNED_CHAR, signed char),
    CTYPE(MPI_UNSIGNED_CHAR, unsigned char),
    BASIC(MPI_BYTE, 1, 1),
    CTYPE(MPI_INT16_T, int16_t),
    CTYPE(MPI_UINT16_T, uint16_t),
    CTYPE(MPI_INT32_T, int32_t),
    CTYPE(MPI_UINT32_T, uint32_t),
    CTYPE(MPI_INT64_T, int64_t),
    CTYPE(MPI_UINT64_T, uint64_t),
    BASIC(MPI_INTEGER1, 1, 1),
    BASIC(MPI_CHARACTER, 1, 1),
    BASIC(MPI_INTEGER2, 2, 2),
    BASIC(MPI_INTEGER4, 4, 4),
    BASIC(MPI_REAL4, 4, 4),
    BASIC(MPI_INTEGER8, 8, 8),
    BASIC(MPI_REAL8, 8, 8),
    BASIC(MPI_COMPLEX8, 8, 4),
    BASIC(MPI_INTEGER16, 16, 16),
    BASIC(MPI_REAL16, 16, 16),
    BASIC(MPI_COMPLEX16, 16, 8),
    BASIC(MPI_COMPLEX32, 32, 16),
#ifdef MPIX_LOGICAL1
    BASIC(MPIX_LOGICAL1, 1, 1),
#endif
#ifdef MPIX_REAL1
    BASIC(MPIX_REAL1, 1, 1),
#endif
#ifdef MPIX_LOGICAL2
    BASIC(MPIX_LOGICAL2, 2, 2),
#endif
#ifdef MPIX_REAL2
    BASIC(MPIX_REAL2, 2, 2),
#endif
#ifdef MPIX_LOGICAL4
    BASIC(MPIX_LOGICAL4, 4, 4),
#endif
#ifdef MPIX_COMPLEX4
    BASIC(MPIX_COMPLEX4, 4, 2),
#endif
#ifdef MPIX_LOGICAL8
    BASIC(MPIX_LOGICAL8, 8, 8),
#endif
#ifdef MPI_LOGICAL1
    BASIC(MPI_LOGICAL1, 1, 1),
#endif
#ifdef MPI_LOGICAL2
    BASIC(MPI_LOGICAL2, 2, 2),
#endif
#ifdef MPI_LOGICAL4
    BASIC(MPI_LOGICAL4, 4, 4),
#endif
#ifdef MPI_LOGICAL8
    BASIC(MPI_LOGICAL8, 8, 8),
#endif
#ifdef MPI_LOGICAL16
    BASIC(MPI_LOGICAL16, 16, 16),
#endif
#ifdef MPI_REAL2
    BASIC(MPI_REAL2, 2, 2),
#endif
#ifdef MPI_COMPLEX4
    BASIC(MPI_COMPLEX4, 4, 2),
#endif
};

rmpi_addrset_t rmpi_dtype_live = RMPI_ADDRSET_INIT;
static rmpi_dtype_t predef[RMPI_DTYPE_PREDEF_COUNT];
static rmpi_dtype_seg_t predef_segs[RMPI_DTYPE_PREDEF_COUNT][2];
static pthread_once_t predef_once = PTHREAD_ONCE_INIT;
static atomic_bool predef_ready;

unsigned char rmpi_dtype_predef_csize[RMPI_DTYPE_PREDEF_COUNT];

static void predef_init(void)
{
    for (size_t i = 0; i < RMPI_ARRAY_LEN(predef_specs); i++) {
        const predef_spec_t *s = &predef_specs[i];
        size_t idx = (uintptr_t)s->h - RMPI_DTYPE_PREDEF_BASE;
        rmpi_dtype_t *dt = &predef[idx];
        rmpi_dtype_seg_t *segs = predef_segs[idx];
        memset(dt, 0, sizeof(*dt));
        dt->magic = RMPI_DTYPE_MAGIC;
        dt->predefined = 1;
        dt->committed = 1;
        dt->refcount = 1;
        dt->handle = s->h;
        dt->combiner = MPI_COMBINER_NAMED;
        dt->basic = s->h;
        dt->align = s->align;
        dt->lb = 0;
        dt->ub = dt->extent = (MPI_Aint)s->extent;
        dt->true_lb = 0;
        dt->segs = segs;
        segs[0] = (rmpi_dtype_seg_t){.off = 0, .len = s->size, .count = 1};
        dt->nseg = 1;
        if (s->second_size) {
            dt->size = s->size + s->second_size;
            dt->nbasic = 2;
            dt->pair_first = s->size;
            dt->basic_size = s->size == s->second_size ? s->size : 0;
            dt->true_ub = (MPI_Aint)(s->second_off + s->second_size);
            if (s->second_off == s->size)
                segs[0].len += s->second_size;
            else
                segs[dt->nseg++] = (rmpi_dtype_seg_t){.off = (MPI_Aint)s->second_off,
                                                      .len = s->second_size,
                                                      .count = 1,
                                                      .pos = s->size};
        } else {
            dt->size = s->size;
            dt->nbasic = 1;
            dt->basic_size = s->size;
            dt->true_ub = (MPI_Aint)s->size;
        }
        dt->true_extent = dt->true_ub - dt->true_lb;
        dt->contig = dt->nseg == 1 && (MPI_Aint)dt->size == dt->extent;
        if (dt->contig && dt->size <= UCHAR_MAX)
            rmpi_dtype_predef_csize[idx] = (unsigned char)dt->size;
        rmpi_dtype_set_max_count(dt);
        strncpy(dt->name, s->name, sizeof(dt->name) - 1);
    }
    atomic_store_explicit(&predef_ready, true, memory_order_release);
}

void rmpi_dtype_set_max_count(rmpi_dtype_t *dt)
{
    size_t ext = dt->extent < 0 ? 0 - (size_t)dt->extent : (size_t)dt->extent;
    size_t big = ext > dt->size ? ext : dt->size;
    dt->max_count = big ? (MPI_Count)(PTRDIFF_MAX / big) : INT64_MAX;
}

/* Apart, so that the predefined path of rmpi_dtype_get saves no registers. */
static __attribute__((noinline)) rmpi_dtype_t *dtype_user(MPI_Datatype h)
{
    /* Other small values are handles of other kinds; user objects are live heap objects. */
    if ((uintptr_t)h < 4096 || !rmpi_addrset_has(&rmpi_dtype_live, h, rmpi_thread_multiple))
        return NULL;
    rmpi_dtype_t *dt = (rmpi_dtype_t *)h;
    return dt->magic == RMPI_DTYPE_MAGIC && !dt->user_freed ? dt : NULL;
}

rmpi_dtype_t *rmpi_dtype_get(MPI_Datatype h)
{
    uintptr_t v = (uintptr_t)h;
    if (v - RMPI_DTYPE_PREDEF_BASE < RMPI_DTYPE_PREDEF_COUNT) {
        if (RMPI_UNLIKELY(!atomic_load_explicit(&predef_ready, memory_order_acquire)))
            pthread_once(&predef_once, predef_init);
        rmpi_dtype_t *dt = &predef[v - RMPI_DTYPE_PREDEF_BASE];
        return dt->magic == RMPI_DTYPE_MAGIC ? dt : NULL;
    }
    return dtype_user(h);
}

rmpi_dtype_t *rmpi_dtype_held(MPI_Datatype h)
{
    uintptr_t v = (uintptr_t)h;
    if (v - RMPI_DTYPE_PREDEF_BASE < RMPI_DTYPE_PREDEF_COUNT || v < 4096 ||
        !rmpi_addrset_has(&rmpi_dtype_live, h, rmpi_thread_multiple))
        return rmpi_dtype_get(h);
    rmpi_dtype_t *dt = (rmpi_dtype_t *)h;
    return dt->magic == RMPI_DTYPE_MAGIC ? dt : NULL;
}

void rmpi_dtype_set_name(rmpi_dtype_t *dt, const char *name)
{
    size_t n = strnlen(name, sizeof(dt->name) - 1);
    memcpy(dt->name, name, n);
    dt->name[n] = '\0';
}

/* The fixed-size Fortran types: every size a class has on this machine. */
MPI_Datatype rmpi_dtype_match_size(int typeclass, int size)
{
    static const struct {
        int cls, size;
        MPI_Datatype t;
    } table[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INTEGER1},   {MPI_TYPECLASS_INTEGER, 2, MPI_INTEGER2},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INTEGER4},   {MPI_TYPECLASS_INTEGER, 8, MPI_INTEGER8},
        {MPI_TYPECLASS_INTEGER, 16, MPI_INTEGER16}, {MPI_TYPECLASS_REAL, 2, MPI_REAL2},
        {MPI_TYPECLASS_REAL, 4, MPI_REAL4},         {MPI_TYPECLASS_REAL, 8, MPI_REAL8},
        {MPI_TYPECLASS_REAL, 16, MPI_REAL16},       {MPI_TYPECLASS_COMPLEX, 4, MPI_COMPLEX4},
        {MPI_TYPECLASS_COMPLEX, 8, MPI_COMPLEX8},   {MPI_TYPECLASS_COMPLEX, 16, MPI_COMPLEX16},
        {MPI_TYPECLASS_COMPLEX, 32, MPI_COMPLEX32}, {MPIX_TYPECLASS_LOGICAL, 1, MPI_LOGICAL1},
        {MPIX_TYPECLASS_LOGICAL, 2, MPI_LOGICAL2},  {MPIX_TYPECLASS_LOGICAL, 4, MPI_LOGICAL4},
        {MPIX_TYPECLASS_LOGICAL, 8, MPI_LOGICAL8},  {MPIX_TYPECLASS_LOGICAL, 16, MPI_LOGICAL16},
    };
    for (size_t i = 0; i < RMPI_ARRAY_LEN(table); i++)
        if (table[i].cls == typeclass && table[i].size == size)
            return table[i].t;
    return MPI_DATATYPE_NULL;
}

/* One object per (combiner, p, r) for the whole run: the standard makes these types
 * predefined (never freed, the same handle for the same arguments), but they report
 * their F90 combiner and arguments. Their layout is the matching fixed-size type. */
int rmpi_dtype_f90(int combiner, int p, int r, MPI_Datatype match, rmpi_dtype_t **newtype)
{
    static rmpi_dtype_t **cache;
    static size_t ncache;
    int integer = combiner == MPI_COMBINER_F90_INTEGER;
    MPI_Count key0 = integer ? r : p;
    for (size_t i = 0; i < ncache; i++) {
        rmpi_dtype_t *c = cache[i];
        if (c->combiner == combiner && c->ints[0] == key0 && (integer || c->ints[1] == r)) {
            *newtype = c;
            return MPI_SUCCESS;
        }
    }
    rmpi_dtype_t *m = rmpi_dtype_get(match), *dt = rmpi_dtype_new(combiner, 0, integer ? 1 : 2, 0, 0);
    dt->ints[0] = key0;
    if (!integer)
        dt->ints[1] = r;
    dt->inner = m;
    int rc = rmpi_dtype_finish(dt, &dt);
    if (rc)
        return rc;
    dt->predefined = 1;
    dt->committed = 1;
    rmpi_dtype_set_name(dt, m->name);
    cache = rmpi_xrealloc(cache, (ncache + 1) * sizeof(*cache));
    cache[ncache++] = dt;
    *newtype = dt;
    return MPI_SUCCESS;
}
