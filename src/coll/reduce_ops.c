/* Reduction kernels for the predefined operations on the predefined C integer and
 * floating types: inout[i] = in[i] op inout[i]. */
#include "coll.h"

#include "../datatype/datatype.h"

#include <stdint.h>

#define ARITH(T)                                                          \
    case 0: for (size_t i = 0; i < n; i++) o[i] = (T)(a[i] + o[i]); break; \
    case 1: for (size_t i = 0; i < n; i++) o[i] = (T)(a[i] * o[i]); break; \
    case 2: for (size_t i = 0; i < n; i++) o[i] = a[i] > o[i] ? a[i] : o[i]; break; \
    case 3: for (size_t i = 0; i < n; i++) o[i] = a[i] < o[i] ? a[i] : o[i]; break; \
    case 4: for (size_t i = 0; i < n; i++) o[i] = (T)(a[i] && o[i]); break; \
    case 5: for (size_t i = 0; i < n; i++) o[i] = (T)(a[i] || o[i]); break; \
    case 6: for (size_t i = 0; i < n; i++) o[i] = (T)(!a[i] != !o[i]); break;
#define BITS(T)                                                           \
    case 7: for (size_t i = 0; i < n; i++) o[i] = (T)(a[i] & o[i]); break; \
    case 8: for (size_t i = 0; i < n; i++) o[i] = (T)(a[i] | o[i]); break; \
    case 9: for (size_t i = 0; i < n; i++) o[i] = (T)(a[i] ^ o[i]); break;
#define INT_KERNEL(name, T)                                               \
    static int name(int op, const void *in, void *inout, size_t n)       \
    {                                                                     \
        const T *a = in;                                                  \
        T *o = inout;                                                     \
        switch (op) { ARITH(T) BITS(T) default: return -1; }              \
        return 0;                                                         \
    }
#define FLT_KERNEL(name, T)                                               \
    static int name(int op, const void *in, void *inout, size_t n)       \
    {                                                                     \
        const T *a = in;                                                  \
        T *o = inout;                                                     \
        switch (op) { ARITH(T) default: return -1; }                      \
        return 0;                                                         \
    }
INT_KERNEL(k_i8, int8_t)
INT_KERNEL(k_u8, uint8_t)
INT_KERNEL(k_i16, int16_t)
INT_KERNEL(k_u16, uint16_t)
INT_KERNEL(k_i32, int32_t)
INT_KERNEL(k_u32, uint32_t)
INT_KERNEL(k_i64, int64_t)
INT_KERNEL(k_u64, uint64_t)
FLT_KERNEL(k_f32, float)
FLT_KERNEL(k_f64, double)
FLT_KERNEL(k_f128, long double)

typedef int (*kernel_t)(int, const void *, void *, size_t);

static kernel_t kernel_of(MPI_Datatype t)
{
    if (t == MPI_CHAR || t == MPI_SIGNED_CHAR || t == MPI_INT8_T || t == MPI_INTEGER1)
        return k_i8;
    if (t == MPI_UNSIGNED_CHAR || t == MPI_UINT8_T || t == MPI_BYTE || t == MPI_C_BOOL)
        return k_u8;
    if (t == MPI_SHORT || t == MPI_INT16_T || t == MPI_INTEGER2)
        return k_i16;
    if (t == MPI_UNSIGNED_SHORT || t == MPI_UINT16_T)
        return k_u16;
    if (t == MPI_INT || t == MPI_INT32_T || t == MPI_INTEGER || t == MPI_INTEGER4 || t == MPI_LOGICAL)
        return k_i32;
    if (t == MPI_UNSIGNED || t == MPI_UINT32_T)
        return k_u32;
    if (t == MPI_LONG || t == MPI_LONG_LONG || t == MPI_INT64_T || t == MPI_INTEGER8 || t == MPI_AINT ||
        t == MPI_OFFSET || t == MPI_COUNT)
        return k_i64;
    if (t == MPI_UNSIGNED_LONG || t == MPI_UNSIGNED_LONG_LONG || t == MPI_UINT64_T)
        return k_u64;
    if (t == MPI_FLOAT || t == MPI_REAL || t == MPI_REAL4)
        return k_f32;
    if (t == MPI_DOUBLE || t == MPI_DOUBLE_PRECISION || t == MPI_REAL8)
        return k_f64;
    if (t == MPI_LONG_DOUBLE)
        return k_f128;
    return NULL;
}

static int op_index(MPI_Op op)
{
    static const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR,
                                 MPI_BAND, MPI_BOR, MPI_BXOR};
    for (int i = 0; i < (int)RMPI_ARRAY_LEN(ops); i++)
        if (ops[i] == op)
            return i;
    return -1;
}

/* Stand-in until the ops branch lands: a derived type reduces as its basic elements when
 * they are all one predefined type (a vector of MPI_INT). Returns that type, or NULL. */
static MPI_Datatype basic_of(MPI_Datatype t)
{
    rmpi_dtype_t *dt = rmpi_dtype_get(t);
    /* a persistent collective holds a reference on a type the user has freed since */
    if (!dt && (uintptr_t)t >= 4096 && ((rmpi_dtype_t *)t)->magic == RMPI_DTYPE_MAGIC)
        dt = (rmpi_dtype_t *)t;
    while (dt && !dt->predefined) {
        if (!dt->ntypes)
            return NULL;
        for (size_t i = 1; i < dt->ntypes; i++)
            if (basic_of(dt->types[i]->handle) != basic_of(dt->types[0]->handle))
                return NULL;
        dt = dt->types[0];
    }
    return dt ? dt->handle : NULL;
}

int rmpi_coll_op_check(MPI_Op op, MPI_Datatype type)
{
    MPI_Datatype b = basic_of(type);
    kernel_t k = b ? kernel_of(b) : NULL;
    int i = op_index(op);
    if (i < 0)
        return MPI_ERR_OP;
    if (!k)
        return MPI_ERR_TYPE;
    if (i >= 7 && (k == k_f32 || k == k_f64 || k == k_f128))
        return MPI_ERR_OP; /* bitwise operations are not defined on floating types */
    return 0;
}

void rmpi_coll_op_apply(MPI_Op op, MPI_Datatype type, const void *in, void *inout, size_t n)
{
    MPI_Datatype b = basic_of(type);
    rmpi_dtype_t *dt = rmpi_dtype_get(type);
    n *= (dt ? dt->size : ((rmpi_dtype_t *)type)->size) / rmpi_dtype_get(b)->size;
    kernel_of(b)(op_index(op), in, inout, n);
}

/* TODO(merge): the ops branch defines these for user operations. */
int rmpi_coll_op_commutative(MPI_Op op) { return 1; }
void rmpi_coll_op_retain(MPI_Op op) {}
void rmpi_coll_op_release(MPI_Op op) {}
