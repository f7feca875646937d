/* The predefined reduction kernels (reduce_ops.c) against a scalar model written here:
 * every predefined op on every predefined type the standard allows it for, lengths 0-300
 * (every length to 96: every tail of every vector width), operands at misaligned offsets, with guard
 * bytes around the output, for both the portable kernels and the wide (AVX2) ones where the
 * CPU has them. Integer results are compared bit for bit; floating ones too (each result
 * is one correctly rounded operation on its own two elements, whatever the vector width),
 * except the padding bytes of x87 long doubles. Values are finite (NaN payloads may
 * depend on operand order). Also: the kernel handle (rmpi_coll_op_kernel) and
 * rmpi_coll_op_apply give the same bytes, and so does the other orientation
 * (rmpi_coll_op_kernel_rev: inout = inout op in) with the operands swapped. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../unit_check.h"
#include "coll/coll.h"
#include "coll/op_impl.h"

/* Model classes: signed / unsigned integers of a size, floating and complex of a kind,
 * value/index pairs. */
enum { C_SINT, C_UINT, C_FLT, C_CPLX, C_PAIR };
enum { F_16, F_32, F_64, F_LD, F_128 }; /* floating kinds */
enum { P_FI, P_DI, P_LI, P_II, P_SI, P_LDI, P_FF, P_DD };

typedef struct {
    MPI_Datatype h;
    const char *name;
    int cls, size, sub; /* sub: floating kind or pair kind */
} mtype_t;

#define SI(h, T)                    \
    {                               \
        h, #h, C_SINT, sizeof(T), 0 \
    }
#define UI(h, T)                    \
    {                               \
        h, #h, C_UINT, sizeof(T), 0 \
    }
static const mtype_t types[] = {
    {MPI_CHAR, "MPI_CHAR", CHAR_MIN < 0 ? C_SINT : C_UINT, 1, 0},
    SI(MPI_SIGNED_CHAR, signed char),
    UI(MPI_UNSIGNED_CHAR, unsigned char),
    SI(MPI_SHORT, short),
    UI(MPI_UNSIGNED_SHORT, unsigned short),
    SI(MPI_INT, int),
    UI(MPI_UNSIGNED, unsigned),
    SI(MPI_LONG, long),
    UI(MPI_UNSIGNED_LONG, unsigned long),
    SI(MPI_LONG_LONG, long long),
    UI(MPI_UNSIGNED_LONG_LONG, unsigned long long),
    SI(MPI_INT8_T, int8_t),
    UI(MPI_UINT8_T, uint8_t),
    SI(MPI_INT16_T, int16_t),
    UI(MPI_UINT16_T, uint16_t),
    SI(MPI_INT32_T, int32_t),
    UI(MPI_UINT32_T, uint32_t),
    SI(MPI_INT64_T, int64_t),
    UI(MPI_UINT64_T, uint64_t),
    SI(MPI_AINT, MPI_Aint),
    SI(MPI_COUNT, MPI_Count),
    SI(MPI_OFFSET, MPI_Offset),
    SI(MPI_INTEGER, int),
    SI(MPI_INTEGER1, int8_t),
    SI(MPI_INTEGER2, int16_t),
    SI(MPI_INTEGER4, int32_t),
    SI(MPI_INTEGER8, int64_t),
    SI(MPI_INTEGER16, __int128),
    UI(MPI_C_BOOL, _Bool),
    UI(MPI_CXX_BOOL, uint8_t),
    UI(MPI_LOGICAL, int),
    UI(MPI_LOGICAL1, uint8_t),
    UI(MPI_LOGICAL2, uint16_t),
    UI(MPI_LOGICAL4, uint32_t),
    UI(MPI_LOGICAL8, uint64_t),
    UI(MPI_LOGICAL16, unsigned __int128),
    UI(MPI_BYTE, uint8_t),
    {MPI_FLOAT, "MPI_FLOAT", C_FLT, 4, F_32},
    {MPI_DOUBLE, "MPI_DOUBLE", C_FLT, 8, F_64},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", C_FLT, sizeof(long double), F_LD},
    {MPI_REAL, "MPI_REAL", C_FLT, 4, F_32},
    {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", C_FLT, 8, F_64},
    {MPI_REAL2, "MPI_REAL2", C_FLT, 2, F_16},
    {MPI_REAL4, "MPI_REAL4", C_FLT, 4, F_32},
    {MPI_REAL8, "MPI_REAL8", C_FLT, 8, F_64},
    {MPI_REAL16, "MPI_REAL16", C_FLT, 16, F_128},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", C_CPLX, 8, F_32},
    {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", C_CPLX, 8, F_32},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", C_CPLX, 16, F_64},
    {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", C_CPLX, 16, F_64},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", C_CPLX, 2 * sizeof(long double), F_LD},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", C_CPLX, 2 * sizeof(long double), F_LD},
    {MPI_COMPLEX, "MPI_COMPLEX", C_CPLX, 8, F_32},
    {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", C_CPLX, 16, F_64},
    {MPI_COMPLEX4, "MPI_COMPLEX4", C_CPLX, 4, F_16},
    {MPI_COMPLEX8, "MPI_COMPLEX8", C_CPLX, 8, F_32},
    {MPI_COMPLEX16, "MPI_COMPLEX16", C_CPLX, 16, F_64},
    {MPI_COMPLEX32, "MPI_COMPLEX32", C_CPLX, 32, F_128},
    {MPI_FLOAT_INT, "MPI_FLOAT_INT", C_PAIR, 8, P_FI},
    {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", C_PAIR, 12, P_DI},
    {MPI_LONG_INT, "MPI_LONG_INT", C_PAIR, sizeof(long) + 4, P_LI},
    {MPI_2INT, "MPI_2INT", C_PAIR, 8, P_II},
    {MPI_SHORT_INT, "MPI_SHORT_INT", C_PAIR, sizeof(short) + 4, P_SI},
    {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", C_PAIR, sizeof(long double) + 4, P_LDI},
    {MPI_2REAL, "MPI_2REAL", C_PAIR, 8, P_FF},
    {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", C_PAIR, 16, P_DD},
    {MPI_2INTEGER, "MPI_2INTEGER", C_PAIR, 8, P_II},
};

static const MPI_Op ops[] = {MPI_SUM,  MPI_PROD, MPI_MAX, MPI_MIN,  MPI_LAND,   MPI_LOR,
                             MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};

/* ---- the model: one element at a time through memcpy ---- */

static __int128 load_int(const char *p, int size, int sgn)
{
    unsigned char b[16];
    memset(b, sgn && (p[size - 1] & 0x80) ? 0xff : 0, sizeof b); /* sign extension */
    memcpy(b, p, (size_t)size);                                  /* little endian (x86, arm64) */
    __int128 v;
    memcpy(&v, b, sizeof v);
    return v;
}

static void model_int(int code, const mtype_t *t, const char *a, char *o)
{
    int sgn = t->cls == C_SINT;
    __int128 x = load_int(a, t->size, sgn), y = load_int(o, t->size, sgn);
    unsigned __int128 ux = (unsigned __int128)x, uy = (unsigned __int128)y, r;
    switch (code) {
    case RMPI_OP_SUM: r = ux + uy; break;
    case RMPI_OP_PROD: r = ux * uy; break; /* modulo 2^128, so modulo 2^(8 size) too */
    case RMPI_OP_MAX: r = (sgn ? x > y : ux > uy) ? ux : uy; break;
    case RMPI_OP_MIN: r = (sgn ? x < y : ux < uy) ? ux : uy; break;
    case RMPI_OP_LAND: r = x != 0 && y != 0; break;
    case RMPI_OP_LOR: r = x != 0 || y != 0; break;
    case RMPI_OP_LXOR: r = (x != 0) != (y != 0); break;
    case RMPI_OP_BAND: r = ux & uy; break;
    case RMPI_OP_BOR: r = ux | uy; break;
    default: r = ux ^ uy; break;
    }
    memcpy(o, &r, (size_t)t->size);
}

#define MODEL_FLT(T)                                                          \
    static void model_##T(int code, int cplx, const char *pa, char *po)       \
    {                                                                         \
        T a[2], o[2];                                                         \
        memcpy(a, pa, (cplx ? 2 : 1) * sizeof(T));                            \
        memcpy(o, po, (cplx ? 2 : 1) * sizeof(T));                            \
        if (cplx && code == RMPI_OP_PROD) {                                   \
            T re = a[0] * o[0] - a[1] * o[1], im = a[0] * o[1] + a[1] * o[0]; \
            o[0] = re;                                                        \
            o[1] = im;                                                        \
        } else                                                                \
            for (int k = 0; k < (cplx ? 2 : 1); k++)                          \
                o[k] = code == RMPI_OP_SUM    ? a[k] + o[k]                   \
                       : code == RMPI_OP_PROD ? a[k] * o[k]                   \
                       : code == RMPI_OP_MAX  ? (a[k] > o[k] ? a[k] : o[k])   \
                                              : (a[k] < o[k] ? a[k] : o[k]);   \
        memcpy(po, o, (cplx ? 2 : 1) * sizeof(T));                            \
    }
typedef _Float16 f16_t;
typedef long double ld_t;
typedef _Float128 f128_t;
MODEL_FLT(f16_t)
MODEL_FLT(float)
MODEL_FLT(double)
MODEL_FLT(ld_t)
MODEL_FLT(f128_t)

#define MODEL_PAIR(name, V, I)                                      \
    static void name(int code, const char *pa, char *po)            \
    {                                                               \
        V a, o;                                                     \
        I ai, oi;                                                   \
        memcpy(&a, pa, sizeof a);                                   \
        memcpy(&o, po, sizeof o);                                   \
        memcpy(&ai, pa + sizeof(V), sizeof ai);                     \
        memcpy(&oi, po + sizeof(V), sizeof oi);                     \
        if (code == RMPI_OP_MAXLOC ? a > o : a < o)                 \
            memcpy(po, pa, sizeof(V) + sizeof(I));                  \
        else if (a == o)                                            \
            memcpy(po + sizeof(V), ai < oi ? &ai : &oi, sizeof(I)); \
    }
MODEL_PAIR(mp_fi, float, int)
MODEL_PAIR(mp_di, double, int)
MODEL_PAIR(mp_li, long, int)
MODEL_PAIR(mp_ii, int, int)
MODEL_PAIR(mp_si, short, int)
MODEL_PAIR(mp_ldi, long double, int)
MODEL_PAIR(mp_ff, float, float)
MODEL_PAIR(mp_dd, double, double)

static void model(int code, const mtype_t *t, const char *a, char *o, size_t n)
{
    static void (*const flt[])(int, int, const char *, char *) = {model_f16_t, model_float, model_double, model_ld_t,
                                                                  model_f128_t};
    static void (*const pair[])(int, const char *, char *) = {mp_fi, mp_di, mp_li, mp_ii, mp_si, mp_ldi, mp_ff, mp_dd};
    for (size_t i = 0; i < n; i++, a += t->size, o += t->size) {
        if (t->cls == C_SINT || t->cls == C_UINT)
            model_int(code, t, a, o);
        else if (t->cls == C_PAIR)
            pair[t->sub](code, a, o);
        else
            flt[t->sub](code, t->cls == C_CPLX, a, o);
    }
}

/* ---- operands ---- */

/* A finite value of floating kind `kind` at p: small integers over 8 (exact sums and
 * products, ties for MAX/MIN and the pairs), signed zeros, now and then a large one
 * (overflow to infinity in PROD) or an infinity. */
static void put_flt(unit_rng_t *r, int kind, char *p)
{
    uint64_t u = unit_rand(r);
    double v = (double)((int)(u % 33) - 16) / 8;
    if (u % 97 == 0)
        v = -0.0;
    else if (u % 89 == 0)
        v = (u & 1 ? 1 : -1) * 6e4; /* above half precision's range in a product */
    else if (u % 83 == 0)
        v = (u & 1 ? 1 : -1) * (double)INFINITY;
    switch (kind) {
    case F_16: {
        f16_t x = (f16_t)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case F_32: {
        float x = (float)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    case F_64: memcpy(p, &v, sizeof v); break;
    case F_LD: {
        long double x = v;
        memset(p, 0, sizeof x);
        memcpy(p, &x, sizeof x);
        break;
    }
    default: {
        f128_t x = (f128_t)v;
        memcpy(p, &x, sizeof x);
        break;
    }
    }
}

static void fill(unit_rng_t *r, const mtype_t *t, char *p, size_t n)
{
    static const int fsize[] = {2, 4, 8, sizeof(long double), 16};
    for (size_t i = 0; i < n; i++, p += t->size) {
        if (t->cls == C_SINT || t->cls == C_UINT) {
            for (int b = 0; b < t->size; b++) /* every bit pattern, a zero now and then */
                p[b] = (char)(unit_rand(r) % 7 == 0 ? 0 : unit_rand(r));
            if (t->h == MPI_C_BOOL)
                p[0] = (char)(p[0] & 1); /* a _Bool holds 0 or 1 */
        } else if (t->cls == C_FLT)
            put_flt(r, t->sub, p);
        else if (t->cls == C_CPLX) {
            put_flt(r, t->sub, p);
            put_flt(r, t->sub, p + fsize[t->sub]);
        } else {
            static const int vkind[] = {F_32, F_64, -1, -1, -1, F_LD, F_32, F_64};
            static const int vsize[] = {4, 8, sizeof(long), 4, sizeof(short), sizeof(long double), 4, 8};
            int sub = t->sub, vs = vsize[sub];
            if (vkind[sub] >= 0)
                put_flt(r, vkind[sub], p);
            else { /* integer values in a small range, so ties happen */
                long long v = (long long)(unit_rand(r) % 9) - 4;
                memcpy(p, &v, (size_t)vs); /* little endian: the low bytes */
            }
            if (sub == P_FF || sub == P_DD)
                put_flt(r, vkind[sub], p + vs);
            else {
                int idx = (int)(unit_rand(r) % 5);
                memcpy(p + vs, &idx, sizeof idx);
            }
        }
    }
}

/* Whether the byte at offset b of an element of t carries data (x87 long doubles have 6
 * padding bytes that a store through the type may leave as they were or not). */
static int data_byte(const mtype_t *t, int b)
{
#if LDBL_MANT_DIG == 64
    int ld = sizeof(long double);
    if (t->sub == F_LD && (t->cls == C_FLT || t->cls == C_CPLX))
        return b % ld < 10;
    if (t->cls == C_PAIR && t->sub == P_LDI)
        return b >= ld || b < 10;
#endif
    (void)t;
    (void)b;
    return 1;
}

enum { MAXN = 300, GUARD = 64 };

/* One variant: every op x type, lengths 0..MAXN, four offset pairs. Returns pairs run. */
static int run_variant(const char *variant, unit_rng_t *r)
{
    static const int offs[][2] = {{0, 0}, {1, 0}, {0, 5}, {3, 7}};
    enum { BUF = GUARD + 8 + MAXN * 32 + GUARD + 8 };
    static char in[BUF], got[BUF], want[BUF], rev_in[BUF];
    int pairs = 0;
    for (size_t ti = 0; ti < RMPI_ARRAY_LEN(types); ti++) {
        const mtype_t *t = &types[ti];
        int ops_on_type = 0;
        for (size_t oi = 0; oi < RMPI_ARRAY_LEN(ops); oi++) {
            int code = rmpi_op_predef_code(ops[oi]);
            if (!rmpi_op_kernel_defined(code, t->h))
                continue;
            ops_on_type++;
            pairs++;
            rmpi_coll_kernel_t fn = rmpi_coll_op_kernel(ops[oi], t->h);
            CHECK(fn != NULL, "%s: no kernel for op %d on %s", variant, code, t->name);
            if (!fn)
                continue;
            int bad = 0;
            /* every length to 96 (three 32-element vectors of bytes and every tail), then
             * every 11th to MAXN */
            for (size_t n = 0; n <= MAXN && !bad; n += n < 96 ? 1 : 11)
                for (size_t k = 0; k < RMPI_ARRAY_LEN(offs) && !bad; k++) {
                    char *a = in + GUARD + offs[k][0], *g = got + GUARD + offs[k][1], *w = want + GUARD + offs[k][1];
                    size_t bytes = n * (size_t)t->size;
                    /* the result with GUARD bytes either side: garbage, then the operand */
                    size_t lo = (size_t)(g - got) - GUARD, hi = (size_t)(g - got) + bytes + GUARD;
                    for (size_t b = lo; b < hi; b += 8) {
                        uint64_t x = unit_rand(r);
                        memcpy(got + b, &x, sizeof x);
                    }
                    fill(r, t, a, n);
                    fill(r, t, g, n);
                    memcpy(want + lo, got + lo, hi - lo);
                    model(code, t, a, w, n);
                    if (n % 4 == 3) { /* the other orientation on swapped operands: the same bits */
                        char *y = rev_in + GUARD + offs[k][0];
                        memcpy(y, g, bytes);
                        memcpy(g, a, bytes);
                        rmpi_coll_op_kernel_rev(ops[oi], t->h)(y, g, n);
                    } else if (n % 2) /* the handle and the packed-stream interface give the same */
                        fn(a, g, n);
                    else
                        rmpi_coll_op_apply(ops[oi], t->h, a, g, n);
                    for (size_t b = lo; b < hi && !bad; b++) {
                        size_t rel = b - (size_t)(g - got);
                        int inside = b >= (size_t)(g - got) && rel < bytes;
                        if (got[b] != want[b] && (!inside || data_byte(t, (int)(rel % (size_t)t->size)))) {
                            CHECK(0,
                                  "%s: op %d on %s, n %zu, offsets %d/%d: byte %zd %s differs (0x%02x, model 0x%02x)",
                                  variant, code, t->name, n, offs[k][0], offs[k][1], (ssize_t)rel,
                                  inside ? "of the result" : "OUTSIDE the result", (unsigned char)got[b],
                                  (unsigned char)want[b]);
                            bad = 1;
                        }
                    }
                }
            CHECK_BAIL(pairs);
        }
        CHECK(ops_on_type > 0, "%s: no operation is defined on %s", variant, t->name);
    }
    return pairs;
}

int main(void)
{
    unit_rng_t r = unit_seed(0x6b65726e);
    CHECK(rmpi_coll_op_kernel(MPI_REPLACE, MPI_INT) == NULL && rmpi_coll_op_kernel(MPI_NO_OP, MPI_INT) == NULL,
          "REPLACE and NO_OP have no kernel");
    CHECK(rmpi_coll_op_kernel(MPI_SUM, MPI_BYTE) == NULL && rmpi_coll_op_kernel(MPI_MAXLOC, MPI_INT) == NULL &&
              rmpi_coll_op_kernel(MPI_BAND, MPI_DOUBLE) == NULL,
          "no kernel where the standard defines none");
    CHECK(rmpi_coll_op_kernel(MPI_OP_NULL, MPI_INT) == NULL &&
              rmpi_coll_op_kernel((MPI_Op)(uintptr_t)0x7ff0, MPI_INT) == NULL,
          "no kernel for MPI_OP_NULL or a non-predefined handle");

    rmpi_op_kernels_wide(0);
    int pairs = run_variant("portable", &r);
    /* 36 integer types x 10 ops (fewer for logical and byte), 9 floating x 4, 14 complex x 2, 9 pairs x 2 */
    CHECK(pairs >= 250, "only %d (op, type) pairs tested", pairs);
    if (rmpi_op_kernels_wide(1)) {
        int wide = run_variant("avx2", &r);
        CHECK(wide == pairs, "avx2 tested %d pairs, portable %d", wide, pairs);
        printf("op_kernels: %d (op, type) pairs, portable and avx2 kernels\n", pairs);
    } else
        printf("op_kernels: %d (op, type) pairs, portable kernels (this CPU or build has no wide ones)\n", pairs);
    return finish("op_kernels");
}
