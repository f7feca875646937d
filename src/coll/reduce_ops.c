/* Kernels of the predefined reduction operations: inout[i] = in[i] op inout[i] on packed
 * elements of one predefined type. Which (op, type) pairs exist follows the standard's
 * groups (MPI-4.1 6.9.2); MPI_CHAR is accepted as a C integer, as MPICH does. */
#include "op_impl.h"

#include "../util/util.h"

#include <limits.h>
#include <pthread.h>
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
static pthread_once_t type_once = PTHREAD_ONCE_INIT;

static void type_index_init(void)
{
    for (size_t i = 0; i < RMPI_ARRAY_LEN(type_table); i++)
        type_row[((uintptr_t)type_table[i].h - 0x200u) & 0xff] = (uint8_t)(i + 1);
}

static int type_lookup(MPI_Datatype t)
{
    uintptr_t v = (uintptr_t)t - 0x200u;
    if (v >= 256)
        return -1;
    pthread_once(&type_once, type_index_init);
    return (int)type_row[v] - 1;
}

int rmpi_op_predef_code(MPI_Op op)
{
    static const MPI_Op ops[RMPI_OP_NPREDEF] = {
        [RMPI_OP_SUM] = MPI_SUM,         [RMPI_OP_PROD] = MPI_PROD,     [RMPI_OP_MAX] = MPI_MAX,
        [RMPI_OP_MIN] = MPI_MIN,         [RMPI_OP_LAND] = MPI_LAND,     [RMPI_OP_LOR] = MPI_LOR,
        [RMPI_OP_LXOR] = MPI_LXOR,       [RMPI_OP_BAND] = MPI_BAND,     [RMPI_OP_BOR] = MPI_BOR,
        [RMPI_OP_BXOR] = MPI_BXOR,       [RMPI_OP_MAXLOC] = MPI_MAXLOC, [RMPI_OP_MINLOC] = MPI_MINLOC,
        [RMPI_OP_REPLACE] = MPI_REPLACE, [RMPI_OP_NO_OP] = MPI_NO_OP,
    };
    if ((uintptr_t)op > 0xff)
        return -1;
    for (int i = 0; i < RMPI_OP_NPREDEF; i++)
        if (ops[i] == op)
            return i;
    return -1;
}

int rmpi_op_kernel_defined(int code, MPI_Datatype basic)
{
    if (code < 0 || code >= RMPI_OP_NPREDEF)
        return 0;
    if (code == RMPI_OP_REPLACE || code == RMPI_OP_NO_OP)
        return 1;
    int row = type_lookup(basic);
    return row >= 0 && (type_table[row].groups & op_groups[code]);
}

#define EACH(expr)                 \
    for (size_t i = 0; i < n; i++) \
        o[i] = (expr);             \
    break
/* Arithmetic in UT (the unsigned type for integers) so signed overflow wraps instead of
 * being UB; EXTRA adds the cases of the type's other groups. The product goes through
 * 1u: two uint8_t or uint16_t promote to int, whose product can overflow (UB); with 1u it
 * is computed in unsigned int (and unchanged for the wider and floating types). */
#define ARITH_KERNEL(name, T, UT, EXTRA)                              \
    static void name(int code, const void *in, void *inout, size_t n) \
    {                                                                 \
        const T *restrict a = in;                                     \
        T *restrict o = inout;                                        \
        switch (code) {                                               \
        case RMPI_OP_SUM: EACH((T)((UT)a[i] + (UT)o[i]));             \
        case RMPI_OP_PROD: EACH((T)((UT)a[i] * 1u * (UT)o[i]));       \
        case RMPI_OP_MAX: EACH(a[i] > o[i] ? a[i] : o[i]);            \
        case RMPI_OP_MIN: EACH(a[i] < o[i] ? a[i] : o[i]); EXTRA      \
        }                                                             \
    }
#define LOGIC_BITS(T)                             \
    case RMPI_OP_LAND: EACH((T)(a[i] && o[i]));   \
    case RMPI_OP_LOR: EACH((T)(a[i] || o[i]));    \
    case RMPI_OP_LXOR: EACH((T)(!a[i] != !o[i])); \
    case RMPI_OP_BAND: EACH((T)(a[i] & o[i]));    \
    case RMPI_OP_BOR: EACH((T)(a[i] | o[i]));     \
    case RMPI_OP_BXOR:                            \
        EACH((T)(a[i] ^ o[i]));
#define INT_KERNEL(name, T, UT) ARITH_KERNEL(name, T, UT, LOGIC_BITS(T))
#define FLT_KERNEL(name, T) ARITH_KERNEL(name, T, T, )

/* Complex numbers as (re, im) pairs of T, so the Fortran half and quad kinds work too. One
 * loop per op, so each is a plain loop the compiler vectorises. */
#define CPLX_KERNEL(name, T)                                          \
    static void name(int code, const void *in, void *inout, size_t n) \
    {                                                                 \
        const T *restrict a = in;                                     \
        T *restrict o = inout;                                        \
        if (code == RMPI_OP_SUM) {                                    \
            for (size_t i = 0; i < 2 * n; i++)                        \
                o[i] = a[i] + o[i];                                   \
            return;                                                   \
        }                                                             \
        for (size_t i = 0; i < 2 * n; i += 2) {                       \
            T ar = a[i], ai = a[i + 1], br = o[i], bi = o[i + 1];     \
            o[i] = ar * br - ai * bi;                                 \
            o[i + 1] = ar * bi + ai * br;                             \
        }                                                             \
    }

/* Value/index pairs, packed (no padding), so members are copied, not dereferenced. Ties
 * keep the smaller index (MPI-4.1 6.9.4). */
#define PAIR_KERNEL(name, V, I)                                       \
    static void name(int code, const void *in, void *inout, size_t n) \
    {                                                                 \
        const char *a = in;                                           \
        char *o = inout;                                              \
        const size_t sz = sizeof(V) + sizeof(I);                      \
        for (size_t k = 0; k < n; k++, a += sz, o += sz) {            \
            V av, ov;                                                 \
            I ai, oi;                                                 \
            memcpy(&av, a, sizeof(V));                                \
            memcpy(&ov, o, sizeof(V));                                \
            memcpy(&ai, a + sizeof(V), sizeof(I));                    \
            memcpy(&oi, o + sizeof(V), sizeof(I));                    \
            if (code == RMPI_OP_MAXLOC ? av > ov : av < ov)           \
                memcpy(o, a, sz);                                     \
            else if (av == ov && ai < oi)                             \
                memcpy(o + sizeof(V), &ai, sizeof(I));                \
        }                                                             \
    }

INT_KERNEL(k_i8, int8_t, uint8_t)
INT_KERNEL(k_u8, uint8_t, uint8_t)
INT_KERNEL(k_i16, int16_t, uint16_t)
INT_KERNEL(k_u16, uint16_t, uint16_t)
INT_KERNEL(k_i32, int32_t, uint32_t)
INT_KERNEL(k_u32, uint32_t, uint32_t)
INT_KERNEL(k_i64, int64_t, uint64_t)
INT_KERNEL(k_u64, uint64_t, uint64_t)
INT_KERNEL(k_i128, __int128, unsigned __int128)
INT_KERNEL(k_u128, unsigned __int128, unsigned __int128)
FLT_KERNEL(k_f16, _Float16)
FLT_KERNEL(k_f32, float)
FLT_KERNEL(k_f64, double)
FLT_KERNEL(k_fld, long double)
FLT_KERNEL(k_f128, _Float128)
CPLX_KERNEL(k_c16, _Float16)
CPLX_KERNEL(k_c32, float)
CPLX_KERNEL(k_c64, double)
CPLX_KERNEL(k_cld, long double)
CPLX_KERNEL(k_c128, _Float128)
PAIR_KERNEL(k_fi, float, int)
PAIR_KERNEL(k_di, double, int)
PAIR_KERNEL(k_li, long, int)
PAIR_KERNEL(k_ii, int, int)
PAIR_KERNEL(k_si, short, int)
PAIR_KERNEL(k_ldi, long double, int)
PAIR_KERNEL(k_ff, float, float)
PAIR_KERNEL(k_dd, double, double)

typedef void (*kernel_t)(int, const void *, void *, size_t);

static const kernel_t kernels[] = {
    [K_I8] = k_i8,   [K_U8] = k_u8,     [K_I16] = k_i16,   [K_U16] = k_u16,   [K_I32] = k_i32, [K_U32] = k_u32,
    [K_I64] = k_i64, [K_U64] = k_u64,   [K_I128] = k_i128, [K_U128] = k_u128, [K_F16] = k_f16, [K_F32] = k_f32,
    [K_F64] = k_f64, [K_FLD] = k_fld,   [K_F128] = k_f128, [K_C16] = k_c16,   [K_C32] = k_c32, [K_C64] = k_c64,
    [K_CLD] = k_cld, [K_C128] = k_c128, [K_FI] = k_fi,     [K_DI] = k_di,     [K_LI] = k_li,   [K_II] = k_ii,
    [K_SI] = k_si,   [K_LDI] = k_ldi,   [K_FF] = k_ff,     [K_DD] = k_dd,
};

/* Bytes of one element and of the scalar the kernel dereferences (pairs use memcpy). */
static const struct {
    uint8_t size, align;
} kind_layout[] = {
    [K_I8] = {1, 1},
    [K_U8] = {1, 1},
    [K_I16] = {2, 2},
    [K_U16] = {2, 2},
    [K_I32] = {4, 4},
    [K_U32] = {4, 4},
    [K_I64] = {8, 8},
    [K_U64] = {8, 8},
    [K_I128] = {16, 16},
    [K_U128] = {16, 16},
    [K_F16] = {2, 2},
    [K_F32] = {4, 4},
    [K_F64] = {8, 8},
    [K_FLD] = {sizeof(long double), 16},
    [K_F128] = {16, 16},
    [K_C16] = {4, 2},
    [K_C32] = {8, 4},
    [K_C64] = {16, 8},
    [K_CLD] = {2 * sizeof(long double), 16},
    [K_C128] = {32, 16},
};

/* Streams from the network may sit at any offset; the typed kernels need their scalars
 * aligned (the compiler vectorises them), so misaligned operands go through a bounce. */
void rmpi_op_kernel(int code, MPI_Datatype basic, const void *in, void *inout, size_t n)
{
    int row = type_lookup(basic);
    if (row < 0 || !n)
        return;
    int kind = type_table[row].kind;
    size_t al = kind < (int)RMPI_ARRAY_LEN(kind_layout) ? kind_layout[kind].align : 1;
    if (al <= 1 || (((uintptr_t)in | (uintptr_t)inout) & (al - 1)) == 0) {
        kernels[kind](code, in, inout, n);
        return;
    }
    enum { BOUNCE = 4096 };
    _Alignas(16) unsigned char a[BOUNCE], b[BOUNCE];
    size_t es = kind_layout[kind].size, per = BOUNCE / es;
    for (size_t done = 0; done < n; done += per) {
        size_t k = n - done < per ? n - done : per;
        memcpy(a, (const char *)in + done * es, k * es);
        memcpy(b, (char *)inout + done * es, k * es);
        kernels[kind](code, a, b, k);
        memcpy((char *)inout + done * es, b, k * es);
    }
}
