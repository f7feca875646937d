/* Kernels of the predefined reduction operations: inout[i] = in[i] op inout[i] on packed
 * elements of one predefined type. Which (op, type) pairs exist follows the standard's
 * groups (MPI-4.1 6.9.2); MPI_CHAR is accepted as a C integer, as MPICH does. */
#include "op_impl.h"

#include "../util/util.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* Element kinds: integers (logical types reuse the unsigned ones), floating, complex
 * (two floating parts), value/index pairs. */
enum {
    K_NONE,
    K_I8,
    K_U8,
    K_I16,
    K_U16,
    K_I32,
    K_U32,
    K_I64,
    K_U64,
    K_I128,
    K_U128,
    K_F16,
    K_F32,
    K_F64,
    K_FLD,
    K_F128,
    K_C16,
    K_C32,
    K_C64,
    K_CLD,
    K_C128,
    K_FI,
    K_DI,
    K_LI,
    K_II,
    K_SI,
    K_LDI,
    K_FF,
    K_DD,
};

enum { G_CINT = 1, G_FINT = 2, G_FLOAT = 4, G_COMPLEX = 8, G_LOGICAL = 16, G_BYTE = 32, G_PAIR = 64 };

#define SKIND(T) (sizeof(T) == 1 ? K_I8 : sizeof(T) == 2 ? K_I16 : sizeof(T) == 4 ? K_I32 : K_I64)
#define UKIND(T) (sizeof(T) == 1 ? K_U8 : sizeof(T) == 2 ? K_U16 : sizeof(T) == 4 ? K_U32 : K_U64)

static const struct {
    MPI_Datatype h;
    uint8_t kind, groups;
} type_table[] = {
    {MPI_CHAR, CHAR_MIN < 0 ? K_I8 : K_U8, G_CINT},
    {MPI_SIGNED_CHAR, K_I8, G_CINT},
    {MPI_UNSIGNED_CHAR, K_U8, G_CINT},
    {MPI_SHORT, SKIND(short), G_CINT},
    {MPI_UNSIGNED_SHORT, UKIND(unsigned short), G_CINT},
    {MPI_INT, SKIND(int), G_CINT},
    {MPI_UNSIGNED, UKIND(unsigned), G_CINT},
    {MPI_LONG, SKIND(long), G_CINT},
    {MPI_UNSIGNED_LONG, UKIND(unsigned long), G_CINT},
    {MPI_LONG_LONG, SKIND(long long), G_CINT},
    {MPI_UNSIGNED_LONG_LONG, UKIND(unsigned long long), G_CINT},
    {MPI_INT8_T, K_I8, G_CINT},
    {MPI_UINT8_T, K_U8, G_CINT},
    {MPI_INT16_T, K_I16, G_CINT},
    {MPI_UINT16_T, K_U16, G_CINT},
    {MPI_INT32_T, K_I32, G_CINT},
    {MPI_UINT32_T, K_U32, G_CINT},
    {MPI_INT64_T, K_I64, G_CINT},
    {MPI_UINT64_T, K_U64, G_CINT},
    {MPI_AINT, SKIND(MPI_Aint), G_CINT | G_FINT},
    {MPI_COUNT, SKIND(MPI_Count), G_CINT | G_FINT},
    {MPI_OFFSET, SKIND(MPI_Offset), G_CINT | G_FINT},
    {MPI_INTEGER, SKIND(int), G_FINT},
    {MPI_INTEGER1, K_I8, G_FINT},
    {MPI_INTEGER2, K_I16, G_FINT},
    {MPI_INTEGER4, K_I32, G_FINT},
    {MPI_INTEGER8, K_I64, G_FINT},
    {MPI_INTEGER16, K_I128, G_FINT},
    {MPI_FLOAT, K_F32, G_FLOAT},
    {MPI_DOUBLE, K_F64, G_FLOAT},
    {MPI_LONG_DOUBLE, K_FLD, G_FLOAT},
    {MPI_REAL, K_F32, G_FLOAT},
    {MPI_DOUBLE_PRECISION, K_F64, G_FLOAT},
    {MPI_REAL2, K_F16, G_FLOAT},
    {MPI_REAL4, K_F32, G_FLOAT},
    {MPI_REAL8, K_F64, G_FLOAT},
    {MPI_REAL16, K_F128, G_FLOAT},
    {MPI_C_FLOAT_COMPLEX, K_C32, G_COMPLEX},
    {MPI_CXX_FLOAT_COMPLEX, K_C32, G_COMPLEX},
    {MPI_C_DOUBLE_COMPLEX, K_C64, G_COMPLEX},
    {MPI_CXX_DOUBLE_COMPLEX, K_C64, G_COMPLEX},
    {MPI_C_LONG_DOUBLE_COMPLEX, K_CLD, G_COMPLEX},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, K_CLD, G_COMPLEX},
    {MPI_COMPLEX, K_C32, G_COMPLEX},
    {MPI_DOUBLE_COMPLEX, K_C64, G_COMPLEX},
    {MPI_COMPLEX4, K_C16, G_COMPLEX},
    {MPI_COMPLEX8, K_C32, G_COMPLEX},
    {MPI_COMPLEX16, K_C64, G_COMPLEX},
    {MPI_COMPLEX32, K_C128, G_COMPLEX},
    {MPI_C_BOOL, UKIND(_Bool), G_LOGICAL},
    {MPI_CXX_BOOL, K_U8, G_LOGICAL},
    {MPI_LOGICAL, UKIND(int), G_LOGICAL},
    {MPI_LOGICAL1, K_U8, G_LOGICAL},
    {MPI_LOGICAL2, K_U16, G_LOGICAL},
    {MPI_LOGICAL4, K_U32, G_LOGICAL},
    {MPI_LOGICAL8, K_U64, G_LOGICAL},
    {MPI_LOGICAL16, K_U128, G_LOGICAL},
    {MPI_BYTE, K_U8, G_BYTE},
    {MPI_FLOAT_INT, K_FI, G_PAIR},
    {MPI_DOUBLE_INT, K_DI, G_PAIR},
    {MPI_LONG_INT, K_LI, G_PAIR},
    {MPI_2INT, K_II, G_PAIR},
    {MPI_SHORT_INT, K_SI, G_PAIR},
    {MPI_LONG_DOUBLE_INT, K_LDI, G_PAIR},
    {MPI_2REAL, K_FF, G_PAIR},
    {MPI_2DOUBLE_PRECISION, K_DD, G_PAIR},
    {MPI_2INTEGER, K_II, G_PAIR},
};

static const uint8_t op_groups[RMPI_OP_NPREDEF] = {
    [RMPI_OP_SUM] = G_CINT | G_FINT | G_FLOAT | G_COMPLEX,
    [RMPI_OP_PROD] = G_CINT | G_FINT | G_FLOAT | G_COMPLEX,
    [RMPI_OP_MAX] = G_CINT | G_FINT | G_FLOAT,
    [RMPI_OP_MIN] = G_CINT | G_FINT | G_FLOAT,
    [RMPI_OP_LAND] = G_CINT | G_LOGICAL,
    [RMPI_OP_LOR] = G_CINT | G_LOGICAL,
    [RMPI_OP_LXOR] = G_CINT | G_LOGICAL,
    [RMPI_OP_BAND] = G_CINT | G_FINT | G_BYTE,
    [RMPI_OP_BOR] = G_CINT | G_FINT | G_BYTE,
    [RMPI_OP_BXOR] = G_CINT | G_FINT | G_BYTE,
    [RMPI_OP_MAXLOC] = G_PAIR,
    [RMPI_OP_MINLOC] = G_PAIR,
    [RMPI_OP_REPLACE] = 0xff,
    [RMPI_OP_NO_OP] = 0xff,
};

/* Handle value (0x200..0x2ff) -> row of type_table + 1; 0 for types no operation takes. */
static uint8_t type_row[256];

/* Element types as the kernels dereference them: aligned(1), so an operand at any address
 * (a stream from the network, a user's origin buffer, a window at any displacement) is
 * read in place with unaligned loads; the compiler may not assume alignment for the
 * vector code (an aligned load on a misaligned pointer would fault). */
typedef __int128 i128_t;
typedef unsigned __int128 u128_t;
/* Half and quad floats as the compiler has them: GCC and clang 15+ define _Float16 on
 * x86-64 (__FLT16_MAX__); clang 14 only has the storage type __fp16, whose arithmetic is
 * done in float and rounded at the store, as GCC does for _Float16 without AVX512-FP16 (one
 * operation in float then rounded to half is the correctly rounded half result). _Float128
 * is __float128 in clang (__SIZEOF_FLOAT128__). */
#ifdef __FLT16_MAX__
typedef _Float16 f16_t;
#else
typedef __fp16 f16_t;
#endif
typedef long double fld_t;
#ifdef __FLT128_MAX__
typedef _Float128 f128_t;
#else
typedef __float128 f128_t;
#endif
#define UA(T) typedef T T##_ua __attribute__((aligned(1)));
UA(int8_t)
UA(uint8_t)
UA(int16_t)
UA(uint16_t)
UA(int32_t)
UA(uint32_t)
UA(int64_t)
UA(uint64_t)
UA(i128_t)
UA(u128_t)
UA(f16_t)
UA(float)
UA(double)
UA(fld_t)
UA(f128_t)
#undef UA

/* One function per (kind, op): inout[i] = in[i] op inout[i], with a = in[i], o = inout[i].
 * Each result depends only on its own two elements, so vector width and alignment never
 * change a result (no reassociation, and no FMA: the vector variant enables AVX2 only).
 * KSFX/KATTR name and target the variant being built. */
#define KNAME(kn, opn) KNAME_(kn, opn, KSFX)
#define KNAME_(kn, opn, sfx) KNAME__(kn, opn, sfx)
#define KNAME__(kn, opn, sfx) kn##_##opn##sfx
#define KERN(kn, opn, T, expr) KLOOP(KATTR, KNAME(kn, opn), T, expr, 1)
/* left_in: in is the left operand a (else inout is), o the other */
#define KLOOP(attr, fname, T, expr, left_in)                            \
    static attr void fname(const void *in, void *inout, size_t n)       \
    {                                                                   \
        const T##_ua *restrict pa = in;                                 \
        T##_ua *restrict po = inout;                                    \
        for (size_t i = 0; i < n; i++) {                                \
            T a = left_in ? pa[i] : po[i], o = left_in ? po[i] : pa[i]; \
            po[i] = (expr);                                             \
        }                                                               \
    }
/* Arithmetic in UT (the unsigned type) so signed overflow wraps instead of being UB. The
 * product goes through 1u: two uint8_t or uint16_t promote to int, whose product can
 * overflow (UB); with 1u it is computed in unsigned int. */
#define INT_KERNS(kn, T, UT)                    \
    KERN(kn, sum, T, (T)((UT)a + (UT)o))        \
    KERN(kn, prod, T, (T)((UT)a * 1u * (UT)o))  \
    KERN(kn, max, T, a > o ? a : o)             \
    KERN(kn, min, T, a < o ? a : o)             \
    KERN(kn, land, T, (T)((a != 0) & (o != 0))) \
    KERN(kn, lor, T, (T)((a != 0) | (o != 0)))  \
    KERN(kn, lxor, T, (T)((a != 0) ^ (o != 0))) \
    KERN(kn, band, T, (T)(a & o))               \
    KERN(kn, bor, T, (T)(a | o))                \
    KERN(kn, bxor, T, (T)(a ^ o))
#define FLT_KERNS(kn, T)            \
    KERN(kn, sum, T, a + o)         \
    KERN(kn, prod, T, a *o)         \
    KERN(kn, max, T, a > o ? a : o) \
    KERN(kn, min, T, a < o ? a : o)
/* Complex numbers as (re, im) pairs of T, so the Fortran half and quad kinds work too:
 * the sum is the real kernel on 2n parts. */
#define CPLX_KERNS(kn, T)                                                    \
    static KATTR void KNAME(kn, sum)(const void *in, void *inout, size_t n)  \
    {                                                                        \
        const T##_ua *restrict a = in;                                       \
        T##_ua *restrict o = inout;                                          \
        for (size_t i = 0; i < 2 * n; i++)                                   \
            o[i] = a[i] + o[i];                                              \
    }                                                                        \
    static KATTR void KNAME(kn, prod)(const void *in, void *inout, size_t n) \
    {                                                                        \
        const T##_ua *restrict a = in;                                       \
        T##_ua *restrict o = inout;                                          \
        for (size_t i = 0; i < 2 * n; i += 2) {                              \
            T ar = a[i], ai = a[i + 1], br = o[i], bi = o[i + 1];            \
            o[i] = ar * br - ai * bi;                                        \
            o[i + 1] = ar * bi + ai * br;                                    \
        }                                                                    \
    }

#define INT_ROW(kn)                                                                                         \
    {                                                                                                       \
        [RMPI_OP_SUM] = KNAME(kn, sum), [RMPI_OP_PROD] = KNAME(kn, prod), [RMPI_OP_MAX] = KNAME(kn, max),   \
        [RMPI_OP_MIN] = KNAME(kn, min), [RMPI_OP_LAND] = KNAME(kn, land), [RMPI_OP_LOR] = KNAME(kn, lor),   \
        [RMPI_OP_LXOR] = KNAME(kn, lxor), [RMPI_OP_BAND] = KNAME(kn, band), [RMPI_OP_BOR] = KNAME(kn, bor), \
        [RMPI_OP_BXOR] = KNAME(kn, bxor),                                                                   \
    }
#define FLT_ROW(kn)                                                                                       \
    {                                                                                                     \
        [RMPI_OP_SUM] = KNAME(kn, sum), [RMPI_OP_PROD] = KNAME(kn, prod), [RMPI_OP_MAX] = KNAME(kn, max), \
        [RMPI_OP_MIN] = KNAME(kn, min),                                                                   \
    }
#define CPLX_ROW(kn)                                                     \
    {                                                                    \
        [RMPI_OP_SUM] = KNAME(kn, sum), [RMPI_OP_PROD] = KNAME(kn, prod) \
    }

typedef rmpi_coll_kernel_t kernel_row_t[RMPI_OP_NPREDEF];

/* The portable variant of every kernel (SSE2 on x86-64, whatever the build targets
 * elsewhere). */
#define KSFX
#define KATTR
/* The kinds whose loops the compiler vectorises, built in both variants. */
#define VECTOR_KERNS                     \
    INT_KERNS(k_i8, int8_t, uint8_t)     \
    INT_KERNS(k_u8, uint8_t, uint8_t)    \
    INT_KERNS(k_i16, int16_t, uint16_t)  \
    INT_KERNS(k_u16, uint16_t, uint16_t) \
    INT_KERNS(k_i32, int32_t, uint32_t)  \
    INT_KERNS(k_u32, uint32_t, uint32_t) \
    INT_KERNS(k_i64, int64_t, uint64_t)  \
    INT_KERNS(k_u64, uint64_t, uint64_t) \
    FLT_KERNS(k_f32, float)              \
    FLT_KERNS(k_f64, double)             \
    CPLX_KERNS(k_c32, float)             \
    CPLX_KERNS(k_c64, double)
#define VECTOR_ROWS                                                                                         \
    [K_I8] = INT_ROW(k_i8), [K_U8] = INT_ROW(k_u8), [K_I16] = INT_ROW(k_i16), [K_U16] = INT_ROW(k_u16),     \
    [K_I32] = INT_ROW(k_i32), [K_U32] = INT_ROW(k_u32), [K_I64] = INT_ROW(k_i64), [K_U64] = INT_ROW(k_u64), \
    [K_F32] = FLT_ROW(k_f32), [K_F64] = FLT_ROW(k_f64), [K_C32] = CPLX_ROW(k_c32), [K_C64] = CPLX_ROW(k_c64)
VECTOR_KERNS
INT_KERNS(k_i128, i128_t, u128_t)
INT_KERNS(k_u128, u128_t, u128_t)
FLT_KERNS(k_f16, f16_t)
FLT_KERNS(k_fld, fld_t)
FLT_KERNS(k_f128, f128_t)
CPLX_KERNS(k_c16, f16_t)
CPLX_KERNS(k_cld, fld_t)
CPLX_KERNS(k_c128, f128_t)

/* Value/index pairs, packed (no padding), so members are copied, not dereferenced. Ties
 * keep the smaller index (MPI-4.1 6.9.4). */
#define PAIR_KERN(kn, opn, V, I, WINS) PAIR_LOOP(kn##_##opn, V, I, WINS, 1)
/* left_in: in holds the left operand (a, ai), else inout does; the result (the left when
 * it wins, on a tie the right's value with the smaller index, else the right) goes to inout */
#define PAIR_LOOP(fname, V, I, WINS, left_in)                          \
    static void fname(const void *in, void *inout, size_t n)           \
    {                                                                  \
        const char *pa = in;                                           \
        char *po = inout;                                              \
        const size_t sz = sizeof(V) + sizeof(I);                       \
        for (size_t k = 0; k < n; k++, pa += sz, po += sz) {           \
            const char *l = left_in ? pa : po, *r = left_in ? po : pa; \
            V a, o;                                                    \
            I ai, oi;                                                  \
            memcpy(&a, l, sizeof(V));                                  \
            memcpy(&o, r, sizeof(V));                                  \
            memcpy(&ai, l + sizeof(V), sizeof(I));                     \
            memcpy(&oi, r + sizeof(V), sizeof(I));                     \
            if (WINS) {                                                \
                if (l != po)                                           \
                    memcpy(po, l, sz);                                 \
            } else {                                                   \
                I idx = a == o && ai < oi ? ai : oi;                   \
                if (r != po)                                           \
                    memcpy(po, r, sizeof(V));                          \
                memcpy(po + sizeof(V), &idx, sizeof(I));               \
            }                                                          \
        }                                                              \
    }
#define PAIR_RKERN(kn, opn, V, I, WINS) PAIR_LOOP(kn##_##opn##_rev, V, I, WINS, 0)
/* both orientations (the other one: `reversed` below) */
#define PAIR_KERNS(kn, V, I)           \
    PAIR_KERN(kn, maxloc, V, I, a > o) \
    PAIR_KERN(kn, minloc, V, I, a < o) PAIR_RKERN(kn, maxloc, V, I, a > o) PAIR_RKERN(kn, minloc, V, I, a < o)
#define PAIR_ROW(kn)                                                   \
    {                                                                  \
        [RMPI_OP_MAXLOC] = kn##_maxloc, [RMPI_OP_MINLOC] = kn##_minloc \
    }
PAIR_KERNS(k_fi, float, int)
PAIR_KERNS(k_di, double, int)
PAIR_KERNS(k_li, long, int)
PAIR_KERNS(k_ii, int, int)
PAIR_KERNS(k_si, short, int)
PAIR_KERNS(k_ldi, long double, int)
PAIR_KERNS(k_ff, float, float)
PAIR_KERNS(k_dd, double, double)

static const kernel_row_t portable[] = {
    VECTOR_ROWS,
    [K_I128] = INT_ROW(k_i128),
    [K_U128] = INT_ROW(k_u128),
    [K_F16] = FLT_ROW(k_f16),
    [K_FLD] = FLT_ROW(k_fld),
    [K_F128] = FLT_ROW(k_f128),
    [K_C16] = CPLX_ROW(k_c16),
    [K_CLD] = CPLX_ROW(k_cld),
    [K_C128] = CPLX_ROW(k_c128),
    [K_FI] = PAIR_ROW(k_fi),
    [K_DI] = PAIR_ROW(k_di),
    [K_LI] = PAIR_ROW(k_li),
    [K_II] = PAIR_ROW(k_ii),
    [K_SI] = PAIR_ROW(k_si),
    [K_LDI] = PAIR_ROW(k_ldi),
    [K_FF] = PAIR_ROW(k_ff),
    [K_DD] = PAIR_ROW(k_dd),
};
#undef KSFX
#undef KATTR

/* The other orientation, inout[i] = inout[i] op in[i], where the result's bits depend on
 * the operands' order for a commutative op: floating MAX and MIN (+0.0 against -0.0, a NaN
 * against a number) and the pairs (a tie keeps the right value's bits). Every other kernel is
 * its own reverse: integer and logical results, and floating sums and products (IEEE
 * addition and multiplication commute exactly; which NaN's payload survives is left to
 * the compiler's operand order in both), do not depend on the order. */
#define RKERN(kn, opn, T, expr) KLOOP(, kn##_##opn##_rev, T, expr, 0)
#define FLT_RKERNS(kn, T) RKERN(kn, max, T, a > o ? a : o) RKERN(kn, min, T, a < o ? a : o)
#define FLT_RROW(kn)                                               \
    {                                                              \
        [RMPI_OP_MAX] = kn##_max_rev, [RMPI_OP_MIN] = kn##_min_rev \
    }
FLT_RKERNS(k_f16, f16_t)
FLT_RKERNS(k_f32, float)
FLT_RKERNS(k_f64, double)
FLT_RKERNS(k_fld, fld_t)
FLT_RKERNS(k_f128, f128_t)
#define PAIR_RROW(kn)                                                          \
    {                                                                          \
        [RMPI_OP_MAXLOC] = kn##_maxloc_rev, [RMPI_OP_MINLOC] = kn##_minloc_rev \
    }
static const kernel_row_t reversed[] = {
    [K_F16] = FLT_RROW(k_f16),   [K_F32] = FLT_RROW(k_f32), [K_F64] = FLT_RROW(k_f64),  [K_FLD] = FLT_RROW(k_fld),
    [K_F128] = FLT_RROW(k_f128), [K_FI] = PAIR_RROW(k_fi),  [K_DI] = PAIR_RROW(k_di),   [K_LI] = PAIR_RROW(k_li),
    [K_II] = PAIR_RROW(k_ii),    [K_SI] = PAIR_RROW(k_si),  [K_LDI] = PAIR_RROW(k_ldi), [K_FF] = PAIR_RROW(k_ff),
    [K_DD] = PAIR_RROW(k_dd),
};

/* The same loops built for AVX2 (256-bit integer and floating vectors), for the kinds whose
 * loops the compiler vectorises; chosen once, at the first look-up, when the CPU has AVX2. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RMPI_OP_AVX2 1
#define KSFX _avx2
#define KATTR __attribute__((target("avx2")))
VECTOR_KERNS
static const kernel_row_t wide[] = {VECTOR_ROWS};
#undef KSFX
#undef KATTR
#endif

/* The kernels in use, by type_row value (row + 1; 0: no operation takes the type) and
 * op_code value (code + 1; 0: not a predefined op), NULL where the standard defines none
 * and for REPLACE / NO_OP; filled once, so a look-up is two byte loads and one index. */
#define NROW (RMPI_ARRAY_LEN(type_table) + 1)
static rmpi_coll_kernel_t live[NROW][RMPI_OP_NPREDEF + 1];
/* Operation handle - MPI_OP_NULL (include/mpi.h: predefined ops are 0x21..0x3d) -> code + 1. */
static uint8_t op_code[64];
static _Atomic int tables_ready;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static int wide_available(void)
{
#ifdef RMPI_OP_AVX2
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

static void fill_live(int use_wide)
{
#ifndef RMPI_OP_AVX2
    (void)use_wide;
#endif
    for (size_t row = 0; row < RMPI_ARRAY_LEN(type_table); row++) {
        int kind = type_table[row].kind;
        for (int c = 0; c < RMPI_OP_NPREDEF; c++) {
            rmpi_coll_kernel_t fn = NULL;
            if (c != RMPI_OP_REPLACE && c != RMPI_OP_NO_OP && (type_table[row].groups & op_groups[c])) {
                fn = portable[kind][c];
#ifdef RMPI_OP_AVX2
                if (use_wide && kind < (int)RMPI_ARRAY_LEN(wide) && wide[kind][c])
                    fn = wide[kind][c];
#endif
            }
            live[row + 1][c + 1] = fn;
        }
    }
}

static void tables_init(void)
{
    _Static_assert(NROW <= 256, "type_row holds row + 1 in a byte");
    for (size_t i = 0; i < RMPI_ARRAY_LEN(type_table); i++)
        type_row[((uintptr_t)type_table[i].h - 0x200u) & 0xff] = (uint8_t)(i + 1);
    static const MPI_Op ops[RMPI_OP_NPREDEF] = {
        [RMPI_OP_SUM] = MPI_SUM,         [RMPI_OP_PROD] = MPI_PROD,     [RMPI_OP_MAX] = MPI_MAX,
        [RMPI_OP_MIN] = MPI_MIN,         [RMPI_OP_LAND] = MPI_LAND,     [RMPI_OP_LOR] = MPI_LOR,
        [RMPI_OP_LXOR] = MPI_LXOR,       [RMPI_OP_BAND] = MPI_BAND,     [RMPI_OP_BOR] = MPI_BOR,
        [RMPI_OP_BXOR] = MPI_BXOR,       [RMPI_OP_MAXLOC] = MPI_MAXLOC, [RMPI_OP_MINLOC] = MPI_MINLOC,
        [RMPI_OP_REPLACE] = MPI_REPLACE, [RMPI_OP_NO_OP] = MPI_NO_OP,
    };
    for (int i = 0; i < RMPI_OP_NPREDEF; i++)
        op_code[((uintptr_t)ops[i] - (uintptr_t)MPI_OP_NULL) & 63] = (uint8_t)(i + 1);
    fill_live(wide_available());
    atomic_store_explicit(&tables_ready, 1, memory_order_release);
}

static inline void tables(void)
{
    if (RMPI_UNLIKELY(!atomic_load_explicit(&tables_ready, memory_order_acquire)))
        pthread_once(&tables_once, tables_init);
}

static inline int type_lookup(MPI_Datatype t)
{
    uintptr_t v = (uintptr_t)t - 0x200u;
    return v < 256 ? (int)type_row[v] - 1 : -1;
}

int rmpi_op_predef_code(MPI_Op op)
{
    uintptr_t v = (uintptr_t)op - (uintptr_t)MPI_OP_NULL;
    if (v >= 64)
        return -1;
    tables();
    return (int)op_code[v] - 1;
}

int rmpi_op_kernel_defined(int code, MPI_Datatype basic)
{
    if (code < 0 || code >= RMPI_OP_NPREDEF)
        return 0;
    if (code == RMPI_OP_REPLACE || code == RMPI_OP_NO_OP)
        return 1;
    tables();
    int row = type_lookup(basic);
    return row >= 0 && (type_table[row].groups & op_groups[code]);
}

rmpi_coll_kernel_t rmpi_op_kernel_fn(int code, MPI_Datatype basic)
{
    uintptr_t t = (uintptr_t)basic - 0x200u;
    if (code < 0 || code >= RMPI_OP_NPREDEF || t >= 256)
        return NULL;
    tables();
    return live[type_row[t]][code + 1];
}

/* The first look-up fills the tables; out of line, so the others need no stack frame. */
static __attribute__((noinline, cold)) rmpi_coll_kernel_t first_kernel(MPI_Op op, MPI_Datatype basic)
{
    tables();
    return rmpi_coll_op_kernel(op, basic);
}

rmpi_coll_kernel_t rmpi_coll_op_kernel(MPI_Op op, MPI_Datatype basic)
{
    uintptr_t o = (uintptr_t)op - (uintptr_t)MPI_OP_NULL, t = (uintptr_t)basic - 0x200u;
    if (o >= 64 || t >= 256)
        return NULL;
    if (RMPI_UNLIKELY(!atomic_load_explicit(&tables_ready, memory_order_acquire)))
        return first_kernel(op, basic);
    return live[type_row[t]][op_code[o]];
}

rmpi_coll_kernel_t rmpi_coll_op_kernel_rev(MPI_Op op, MPI_Datatype basic)
{
    rmpi_coll_kernel_t fn = rmpi_coll_op_kernel(op, basic);
    if (!fn)
        return NULL;
    int row = type_lookup(basic), code = rmpi_op_predef_code(op), kind = type_table[row].kind;
    rmpi_coll_kernel_t rev = kind < (int)RMPI_ARRAY_LEN(reversed) ? reversed[kind][code] : NULL;
    return rev ? rev : fn;
}

int rmpi_op_kernels_wide(int on)
{
    tables();
    on = on && wide_available();
    fill_live(on);
    return on;
}
