/* Reduction operations. Every predefined op on every predefined type through
 * MPI_Reduce_local: MPI_SUCCESS exactly where the standard's table (written out here, by
 * group) allows the pair, MPI_ERR_OP elsewhere, and every result element against a
 * reference computed here. Predefined ops on derived types of one basic type (gaps of a
 * vector untouched, pairs inside a contiguous); a user non-commutative op (2x2 matrix
 * product: in is the left operand) on a contiguous and a vector type, MPI_Op_create_c,
 * Op_commutative; bad input (invalid, freed and predefined handles, op not defined on
 * the type, mixed struct). Across the ranks: every allowed pair through Allreduce and
 * Reduce against the inputs combined in rank order (the flat result); with `-s COUNT` also
 * through Reduce_scatter_block, Reduce_scatter, Scan and Exscan. A last argument
 * `onecpu` pins every rank to one CPU first (the oversubscribed algorithms). */
#include "mtest.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { G_CINT = 1, G_FINT = 2, G_FLOAT = 4, G_COMPLEX = 8, G_LOGICAL = 16, G_BYTE = 32, G_PAIR = 64 };
/* Element classes of the test's reference arithmetic. */
enum { C_SINT, C_UINT, C_FLT, C_CPLX, C_PAIR };
/* Floating kinds (also complex parts and pair values). */
enum { F_F16, F_F32, F_F64, F_FLD, F_F128, F_LONG, F_INT, F_SHORT };

typedef struct tinfo {
    MPI_Datatype t;
    const char *name;
    int groups, cls;
    int size;     /* integer size; floating kind for C_FLT/C_CPLX; value kind for pairs */
    int idx_kind; /* pairs: kind of the index (F_INT, F_F32, F_F64) */
} tinfo_t;

#define T(t, g, c, s)     \
    {                     \
        t, #t, g, c, s, 0 \
    }
#define P(t, v, i)                  \
    {                               \
        t, #t, G_PAIR, C_PAIR, v, i \
    }
static const tinfo_t types[] = {
    T(MPI_CHAR, G_CINT, CHAR_MIN < 0 ? C_SINT : C_UINT, 1),
    T(MPI_SIGNED_CHAR, G_CINT, C_SINT, 1),
    T(MPI_UNSIGNED_CHAR, G_CINT, C_UINT, 1),
    T(MPI_SHORT, G_CINT, C_SINT, sizeof(short)),
    T(MPI_UNSIGNED_SHORT, G_CINT, C_UINT, sizeof(short)),
    T(MPI_INT, G_CINT, C_SINT, sizeof(int)),
    T(MPI_UNSIGNED, G_CINT, C_UINT, sizeof(int)),
    T(MPI_LONG, G_CINT, C_SINT, sizeof(long)),
    T(MPI_UNSIGNED_LONG, G_CINT, C_UINT, sizeof(long)),
    T(MPI_LONG_LONG, G_CINT, C_SINT, sizeof(long long)),
    T(MPI_UNSIGNED_LONG_LONG, G_CINT, C_UINT, sizeof(long long)),
    T(MPI_INT8_T, G_CINT, C_SINT, 1),
    T(MPI_UINT8_T, G_CINT, C_UINT, 1),
    T(MPI_INT16_T, G_CINT, C_SINT, 2),
    T(MPI_UINT16_T, G_CINT, C_UINT, 2),
    T(MPI_INT32_T, G_CINT, C_SINT, 4),
    T(MPI_UINT32_T, G_CINT, C_UINT, 4),
    T(MPI_INT64_T, G_CINT, C_SINT, 8),
    T(MPI_UINT64_T, G_CINT, C_UINT, 8),
    T(MPI_AINT, G_CINT | G_FINT, C_SINT, sizeof(MPI_Aint)),
    T(MPI_COUNT, G_CINT | G_FINT, C_SINT, 8),
    T(MPI_OFFSET, G_CINT | G_FINT, C_SINT, 8),
    T(MPI_INTEGER, G_FINT, C_SINT, 4),
    T(MPI_INTEGER1, G_FINT, C_SINT, 1),
    T(MPI_INTEGER2, G_FINT, C_SINT, 2),
    T(MPI_INTEGER4, G_FINT, C_SINT, 4),
    T(MPI_INTEGER8, G_FINT, C_SINT, 8),
    T(MPI_INTEGER16, G_FINT, C_SINT, 16),
    T(MPI_FLOAT, G_FLOAT, C_FLT, F_F32),
    T(MPI_DOUBLE, G_FLOAT, C_FLT, F_F64),
    T(MPI_LONG_DOUBLE, G_FLOAT, C_FLT, F_FLD),
    T(MPI_REAL, G_FLOAT, C_FLT, F_F32),
    T(MPI_DOUBLE_PRECISION, G_FLOAT, C_FLT, F_F64),
    T(MPI_REAL2, G_FLOAT, C_FLT, F_F16),
    T(MPI_REAL4, G_FLOAT, C_FLT, F_F32),
    T(MPI_REAL8, G_FLOAT, C_FLT, F_F64),
    T(MPI_REAL16, G_FLOAT, C_FLT, F_F128),
    T(MPI_C_FLOAT_COMPLEX, G_COMPLEX, C_CPLX, F_F32),
    T(MPI_CXX_FLOAT_COMPLEX, G_COMPLEX, C_CPLX, F_F32),
    T(MPI_C_DOUBLE_COMPLEX, G_COMPLEX, C_CPLX, F_F64),
    T(MPI_CXX_DOUBLE_COMPLEX, G_COMPLEX, C_CPLX, F_F64),
    T(MPI_C_LONG_DOUBLE_COMPLEX, G_COMPLEX, C_CPLX, F_FLD),
    T(MPI_CXX_LONG_DOUBLE_COMPLEX, G_COMPLEX, C_CPLX, F_FLD),
    T(MPI_COMPLEX, G_COMPLEX, C_CPLX, F_F32),
    T(MPI_DOUBLE_COMPLEX, G_COMPLEX, C_CPLX, F_F64),
    T(MPI_COMPLEX4, G_COMPLEX, C_CPLX, F_F16),
    T(MPI_COMPLEX8, G_COMPLEX, C_CPLX, F_F32),
    T(MPI_COMPLEX16, G_COMPLEX, C_CPLX, F_F64),
    T(MPI_COMPLEX32, G_COMPLEX, C_CPLX, F_F128),
    T(MPI_C_BOOL, G_LOGICAL, C_UINT, sizeof(_Bool)),
    T(MPI_CXX_BOOL, G_LOGICAL, C_UINT, 1),
    T(MPI_LOGICAL, G_LOGICAL, C_UINT, 4),
    T(MPI_LOGICAL1, G_LOGICAL, C_UINT, 1),
    T(MPI_LOGICAL2, G_LOGICAL, C_UINT, 2),
    T(MPI_LOGICAL4, G_LOGICAL, C_UINT, 4),
    T(MPI_LOGICAL8, G_LOGICAL, C_UINT, 8),
    T(MPI_LOGICAL16, G_LOGICAL, C_UINT, 16),
    T(MPI_BYTE, G_BYTE, C_UINT, 1),
    T(MPI_WCHAR, 0, C_UINT, sizeof(wchar_t)),
    T(MPI_CHARACTER, 0, C_UINT, 1),
    T(MPI_PACKED, 0, C_UINT, 1),
    P(MPI_FLOAT_INT, F_F32, F_INT),
    P(MPI_DOUBLE_INT, F_F64, F_INT),
    P(MPI_LONG_INT, F_LONG, F_INT),
    P(MPI_2INT, F_INT, F_INT),
    P(MPI_SHORT_INT, F_SHORT, F_INT),
    P(MPI_LONG_DOUBLE_INT, F_FLD, F_INT),
    P(MPI_2REAL, F_F32, F_F32),
    P(MPI_2DOUBLE_PRECISION, F_F64, F_F64),
    P(MPI_2INTEGER, F_INT, F_INT),
};

static const struct {
    MPI_Op op;
    const char *name;
    int groups;
} ops[] = {
    {MPI_SUM, "MPI_SUM", G_CINT | G_FINT | G_FLOAT | G_COMPLEX},
    {MPI_PROD, "MPI_PROD", G_CINT | G_FINT | G_FLOAT | G_COMPLEX},
    {MPI_MAX, "MPI_MAX", G_CINT | G_FINT | G_FLOAT},
    {MPI_MIN, "MPI_MIN", G_CINT | G_FINT | G_FLOAT},
    {MPI_LAND, "MPI_LAND", G_CINT | G_LOGICAL},
    {MPI_LOR, "MPI_LOR", G_CINT | G_LOGICAL},
    {MPI_LXOR, "MPI_LXOR", G_CINT | G_LOGICAL},
    {MPI_BAND, "MPI_BAND", G_CINT | G_FINT | G_BYTE},
    {MPI_BOR, "MPI_BOR", G_CINT | G_FINT | G_BYTE},
    {MPI_BXOR, "MPI_BXOR", G_CINT | G_FINT | G_BYTE},
    {MPI_MAXLOC, "MPI_MAXLOC", G_PAIR},
    {MPI_MINLOC, "MPI_MINLOC", G_PAIR},
    {MPI_REPLACE, "MPI_REPLACE", 0},
    {MPI_NO_OP, "MPI_NO_OP", 0},
};

#define N 9

/* ---- reading and writing one number of a floating kind ---- */
static size_t kind_size(int k)
{
    static const size_t s[] = {2,  sizeof(float), sizeof(double), sizeof(long double),
                               16, sizeof(long),  sizeof(int),    sizeof(short)};
    return s[k];
}

static long double getf(const void *p, int k)
{
    switch (k) {
    case F_F16: {
        _Float16 v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    case F_F32: {
        float v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    case F_F64: {
        double v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    case F_FLD: {
        long double v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    case F_F128: {
        _Float128 v;
        memcpy(&v, p, sizeof v);
        return (long double)v;
    }
    case F_LONG: {
        long v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    case F_INT: {
        int v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    default: {
        short v;
        memcpy(&v, p, sizeof v);
        return v;
    }
    }
}

static void setf(void *p, int k, long double x)
{
    switch (k) {
    case F_F16: {
        _Float16 v = (_Float16)x;
        memcpy(p, &v, sizeof v);
        break;
    }
    case F_F32: {
        float v = (float)x;
        memcpy(p, &v, sizeof v);
        break;
    }
    case F_F64: {
        double v = (double)x;
        memcpy(p, &v, sizeof v);
        break;
    }
    case F_FLD: {
        long double v = x;
        memcpy(p, &v, sizeof v);
        break;
    }
    case F_F128: {
        _Float128 v = (_Float128)x;
        memcpy(p, &v, sizeof v);
        break;
    }
    case F_LONG: {
        long v = (long)x;
        memcpy(p, &v, sizeof v);
        break;
    }
    case F_INT: {
        int v = (int)x;
        memcpy(p, &v, sizeof v);
        break;
    }
    default: {
        short v = (short)x;
        memcpy(p, &v, sizeof v);
        break;
    }
    }
}

/* ---- integers of any size (1..16 bytes), little endian, values kept small ---- */
static long long geti(const unsigned char *p, int size, int sgn)
{
    unsigned long long u = 0;
    int n = size > 8 ? 8 : size;
    for (int i = n - 1; i >= 0; i--)
        u = u << 8 | p[i];
    if (sgn && n < 8 && (u >> (8 * n - 1) & 1))
        u |= ~0ull << (8 * n);
    return (long long)u;
}

static void seti(unsigned char *p, int size, long long v)
{
    for (int i = 0; i < size; i++)
        p[i] = i < 8 ? (unsigned char)((unsigned long long)v >> (8 * i)) : (v < 0 ? 0xff : 0);
}

/* Integer-class reference: in op inout, in the type's width. */
static long long iref(MPI_Op op, long long a, long long b)
{
    if (op == MPI_SUM)
        return (long long)((unsigned long long)a + (unsigned long long)b);
    if (op == MPI_PROD)
        return (long long)((unsigned long long)a * (unsigned long long)b);
    if (op == MPI_MAX)
        return a > b ? a : b;
    if (op == MPI_MIN)
        return a < b ? a : b;
    if (op == MPI_LAND)
        return a && b;
    if (op == MPI_LOR)
        return a || b;
    if (op == MPI_LXOR)
        return !a != !b;
    if (op == MPI_BAND)
        return a & b;
    if (op == MPI_BOR)
        return a | b;
    if (op == MPI_BXOR)
        return a ^ b;
    if (op == MPI_REPLACE)
        return a;
    return b; /* NO_OP */
}

/* Offset of the index in the C struct of a pair type (the index is aligned to its size). */
static size_t pair_off(const tinfo_t *ti)
{
    size_t v = kind_size(ti->size), a = kind_size(ti->idx_kind);
    return (v + a - 1) / a * a;
}

/* Element equality by value: long double has padding bytes nobody defines. */
static int elem_equal(const tinfo_t *ti, const unsigned char *p, const unsigned char *q)
{
    switch (ti->cls) {
    case C_FLT: return getf(p, ti->size) == getf(q, ti->size);
    case C_CPLX:
        return getf(p, ti->size) == getf(q, ti->size) &&
               getf(p + kind_size(ti->size), ti->size) == getf(q + kind_size(ti->size), ti->size);
    case C_PAIR:
        return getf(p, ti->size) == getf(q, ti->size) &&
               getf(p + pair_off(ti), ti->idx_kind) == getf(q + pair_off(ti), ti->idx_kind);
    default: return memcmp(p, q, (size_t)ti->size) == 0;
    }
}

/* One (op, type) pair: Reduce_local on N elements in the type's own layout (pairs keep
 * their C padding, which the library must leave alone). */
static void one_pair(int oi, const tinfo_t *ti)
{
    MPI_Op op = ops[oi].op;
    int allowed = op == MPI_REPLACE || op == MPI_NO_OP || (ops[oi].groups & ti->groups) != 0;
    MPI_Aint lb, ext;
    MPI_Type_get_extent(ti->t, &lb, &ext);
    unsigned char in[N * 48], io[N * 48], ref[N * 48];
    memset(in, 0x5a, sizeof in);
    memset(io, 0xa5, sizeof io);
    for (int i = 0; i < N; i++) {
        unsigned char *a = in + i * ext, *b = io + i * ext;
        long long va = (i * 7 + 3) % 11 - 5, vb = (i * 5 + 1) % 9 - 4;
        if (i == 2)
            va = 0;
        if (i == 4)
            vb = 0;
        switch (ti->cls) {
        case C_SINT:
        case C_UINT:
            if (ti->groups == G_LOGICAL) {
                va = va > 0;
                vb = vb > 0;
            }
            if (ti->cls == C_UINT && va < 0)
                va = -va * 13;
            if (ti->cls == C_UINT && vb < 0)
                vb = -vb * 29;
            seti(a, ti->size, va);
            seti(b, ti->size, vb);
            break;
        case C_FLT:
            setf(a, ti->size, (long double)va);
            setf(b, ti->size, (long double)vb);
            break;
        case C_CPLX:
            setf(a, ti->size, (long double)va);
            setf(a + kind_size(ti->size), ti->size, (long double)(vb + 1));
            setf(b, ti->size, (long double)vb);
            setf(b + kind_size(ti->size), ti->size, (long double)(va - 2));
            break;
        case C_PAIR: {
            size_t off = pair_off(ti);
            setf(a, ti->size, (long double)(i % 3));
            setf(b, ti->size, (long double)((i + i / 3) % 3));
            setf(a + off, ti->idx_kind, (long double)(10 + (i * 4) % 7));
            setf(b + off, ti->idx_kind, (long double)(10 + (i * 3) % 8));
            break;
        }
        }
    }
    memcpy(ref, io, sizeof io);
    for (int i = 0; allowed && i < N; i++) {
        const unsigned char *a = in + i * ext;
        unsigned char *r = ref + i * ext;
        if (op == MPI_REPLACE || op == MPI_NO_OP) {
            if (op == MPI_REPLACE)
                memcpy(r, a, (size_t)ext);
            continue;
        }
        switch (ti->cls) {
        case C_SINT:
        case C_UINT: {
            int sgn = ti->cls == C_SINT;
            long long x = geti(a, ti->size, sgn), y = geti(r, ti->size, sgn);
            seti(r, ti->size, iref(op, x, y));
            break;
        }
        case C_FLT: {
            long double x = getf(a, ti->size), y = getf(r, ti->size);
            setf(r, ti->size,
                 op == MPI_SUM    ? x + y
                 : op == MPI_PROD ? x * y
                 : op == MPI_MAX  ? (x > y ? x : y)
                                  : (x < y ? x : y));
            break;
        }
        case C_CPLX: {
            size_t h = kind_size(ti->size);
            long double ar = getf(a, ti->size), ai = getf(a + h, ti->size);
            long double br = getf(r, ti->size), bi = getf(r + h, ti->size);
            setf(r, ti->size, op == MPI_SUM ? ar + br : ar * br - ai * bi);
            setf(r + h, ti->size, op == MPI_SUM ? ai + bi : ar * bi + ai * br);
            break;
        }
        case C_PAIR: {
            size_t off = pair_off(ti);
            long double av = getf(a, ti->size), bv = getf(r, ti->size);
            long double ax = getf(a + off, ti->idx_kind), bx = getf(r + off, ti->idx_kind);
            int take = op == MPI_MAXLOC ? av > bv : av < bv;
            if (take || (av == bv && ax < bx)) {
                setf(r, ti->size, take ? av : bv);
                setf(r + off, ti->idx_kind, ax);
            }
            break;
        }
        }
    }
    int rc = MPI_Reduce_local(in, io, N, ti->t, op);
    if (!allowed) {
        MTEST_CHECK(rc == MPI_ERR_OP, "%s on %s: rc %d, expected MPI_ERR_OP", ops[oi].name, ti->name, rc);
        return;
    }
    MTEST_CHECK(rc == MPI_SUCCESS, "%s on %s: rc %d, expected MPI_SUCCESS", ops[oi].name, ti->name, rc);
    for (int i = 0; i < N; i++)
        if (!elem_equal(ti, io + i * ext, ref + i * ext)) {
            MTEST_CHECK(0, "%s on %s: element %d differs from the reference", ops[oi].name, ti->name, i);
            break;
        }
}

/* The pair offsets above assume C layouts; pin them so a wrong guess fails loudly. */
static void pair_layouts(void)
{
    struct {
        short v;
        int i;
    } si;
    struct {
        long double v;
        int i;
    } ldi;
    MTEST_CHECK(offsetof(
                    struct {
                        float v;
                        int i;
                    },
                    i) == 4 &&
                    (char *)&si.i - (char *)&si == sizeof(int) &&
                    (size_t)((char *)&ldi.i - (char *)&ldi) == sizeof(long double),
                "unexpected C layout of the pair structs");
}

/* ---- derived types of one basic type ---- */
static void derived(void)
{
    MPI_Datatype vec, ct, cp, mixed, same;
    int a[12], b[12];
    MTEST_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vec)); /* ints 0, 2, 4 */
    MTEST_OK(MPI_Type_commit(&vec));
    for (int i = 0; i < 12; i++) {
        a[i] = i + 1;
        b[i] = 100 * (i + 1);
    }
    /* 2 elements: extent 5 ints, so elements at 0 and 5: ints 0 2 4 5 7 9 */
    MTEST_OK(MPI_Reduce_local(a, b, 2, vec, MPI_MAX));
    for (int i = 0; i < 12; i++) {
        int in_type = i == 0 || i == 2 || i == 4 || i == 5 || i == 7 || i == 9;
        int want = in_type ? (a[i] > 100 * (i + 1) ? a[i] : 100 * (i + 1)) : 100 * (i + 1);
        MTEST_CHECK(b[i] == want, "MAX on vector of int: b[%d] = %d, expected %d", i, b[i], want);
    }
    for (int i = 0; i < 12; i++)
        b[i] = 100 * (i + 1);
    MTEST_OK(MPI_Reduce_local(a, b, 2, vec, MPI_SUM));
    for (int i = 0; i < 12; i++) {
        int in_type = i == 0 || i == 2 || i == 4 || i == 5 || i == 7 || i == 9;
        int want = 100 * (i + 1) + (in_type ? a[i] : 0);
        MTEST_CHECK(b[i] == want, "SUM on vector of int: b[%d] = %d, expected %d", i, b[i], want);
    }
    MTEST_ERR(MPI_Reduce_local(a, b, 1, vec, MPI_MAXLOC), MPI_ERR_OP);

    /* MAXLOC on a contiguous of MPI_DOUBLE_INT (padding in the layout) */
    struct {
        double v;
        int i;
    } x[4] = {{1, 3}, {5, 1}, {2, 7}, {2, 2}}, y[4] = {{1, 2}, {4, 9}, {3, 0}, {2, 5}};
    MTEST_OK(MPI_Type_contiguous(2, MPI_DOUBLE_INT, &ct));
    MTEST_OK(MPI_Type_commit(&ct));
    MTEST_OK(MPI_Reduce_local(x, y, 2, ct, MPI_MAXLOC));
    MTEST_CHECK(y[0].v == 1 && y[0].i == 2 && y[1].v == 5 && y[1].i == 1 && y[2].v == 3 && y[2].i == 0 && y[3].v == 2 &&
                    y[3].i == 2,
                "MAXLOC on contiguous(2, MPI_DOUBLE_INT): (%g,%d) (%g,%d) (%g,%d) (%g,%d)", y[0].v, y[0].i, y[1].v,
                y[1].i, y[2].v, y[2].i, y[3].v, y[3].i);
    MTEST_ERR(MPI_Reduce_local(x, y, 1, ct, MPI_SUM), MPI_ERR_OP);

    /* LXOR on a contiguous of C_BOOL */
    _Bool p[4] = {1, 1, 0, 0}, q[4] = {1, 0, 1, 0};
    MTEST_OK(MPI_Type_contiguous(4, MPI_C_BOOL, &cp));
    MTEST_OK(MPI_Type_commit(&cp));
    MTEST_OK(MPI_Reduce_local(p, q, 1, cp, MPI_LXOR));
    MTEST_CHECK(!q[0] && q[1] && q[2] && !q[3], "LXOR on contiguous(4, C_BOOL): %d %d %d %d", q[0], q[1], q[2], q[3]);

    /* a struct of two basic types is not reducible by predefined ops; of one, it is */
    struct {
        int i;
        double d;
    } s = {1, 2}, t = {3, 4};
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(__typeof__(s), i), offsetof(__typeof__(s), d)};
    MPI_Datatype tys[2] = {MPI_INT, MPI_DOUBLE}, tys2[2] = {MPI_INT, MPI_INT};
    MTEST_OK(MPI_Type_create_struct(2, bl, disp, tys, &mixed));
    MTEST_OK(MPI_Type_commit(&mixed));
    MTEST_ERR(MPI_Reduce_local(&s, &t, 1, mixed, MPI_SUM), MPI_ERR_OP);
    MTEST_OK(MPI_Reduce_local(&s, &t, 1, mixed, MPI_REPLACE));
    MTEST_CHECK(t.i == 1 && t.d == 2, "REPLACE on a struct: %d %g", t.i, t.d);
    MPI_Aint disp2[2] = {0, 8};
    int u[3] = {1, 2, 3}, w[3] = {10, 20, 30};
    MTEST_OK(MPI_Type_create_struct(2, bl, disp2, tys2, &same));
    MTEST_OK(MPI_Type_commit(&same));
    MTEST_OK(MPI_Reduce_local(u, w, 1, same, MPI_PROD));
    MTEST_CHECK(w[0] == 10 && w[1] == 20 && w[2] == 90, "PROD on struct{int@0, int@8}: %d %d %d", w[0], w[1], w[2]);

    MPI_Type_free(&vec);
    MPI_Type_free(&ct);
    MPI_Type_free(&cp);
    MPI_Type_free(&mixed);
    MPI_Type_free(&same);
}

/* ---- user operations ---- */
static MPI_Datatype mat_type;
static int mat_calls;

/* inout = in x inout for 2x2 int matrices; checks it is handed the user's type. */
static void matmul(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
    const int *a = invec;
    int *b = inoutvec;
    mat_calls++;
    MTEST_CHECK(*dt == mat_type, "user function got datatype %p, expected %p", (void *)*dt, (void *)mat_type);
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                    a[2] * b[1] + a[3] * b[3]};
        memcpy(b, r, sizeof r);
    }
}

static void matmul_c(void *invec, void *inoutvec, MPI_Count *len, MPI_Datatype *dt)
{
    int n = (int)*len;
    matmul(invec, inoutvec, &n, dt);
}

/* Doubles every element of a vector type (every other int), in its own layout. */
static void twice_plus(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
    const int *a = invec;
    int *b = inoutvec;
    for (int k = 0; k < *len * 2; k++)
        b[2 * k] = 2 * a[2 * k] + b[2 * k];
}

static void user_ops(void)
{
    MPI_Op mm, mmc, tp;
    int commute = -1;
    MTEST_OK(MPI_Type_contiguous(4, MPI_INT, &mat_type));
    MTEST_OK(MPI_Type_commit(&mat_type));
    MTEST_OK(MPI_Op_create(matmul, 0, &mm));
    MTEST_OK(MPI_Op_commutative(mm, &commute));
    MTEST_CHECK(commute == 0, "Op_commutative of a non-commutative op: %d", commute);
    int a[8] = {1, 2, 3, 4, 0, 1, 1, 0}, b[8] = {5, 6, 7, 8, 2, 0, 0, 3};
    MTEST_OK(MPI_Reduce_local(a, b, 2, mat_type, mm));
    /* [1 2;3 4] x [5 6;7 8] = [19 22;43 50]; [0 1;1 0] x [2 0;0 3] = [0 3;2 0] */
    int want[8] = {19, 22, 43, 50, 0, 3, 2, 0};
    MTEST_CHECK(memcmp(b, want, sizeof b) == 0 && mat_calls == 1,
                "matrix product through Reduce_local: %d %d %d %d / %d %d %d %d (%d calls)", b[0], b[1], b[2], b[3],
                b[4], b[5], b[6], b[7], mat_calls);

    MTEST_OK(MPI_Op_create_c(matmul_c, 0, &mmc));
    int c[4] = {1, 1, 0, 1}, d[4] = {1, 0, 1, 1};
    MTEST_OK(MPI_Reduce_local_c(c, d, 1, mat_type, mmc));
    MTEST_CHECK(d[0] == 2 && d[1] == 1 && d[2] == 1 && d[3] == 1, "Op_create_c matrix product: %d %d %d %d", d[0], d[1],
                d[2], d[3]);

    MPI_Datatype v;
    MTEST_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    MTEST_OK(MPI_Type_commit(&v));
    MTEST_OK(MPI_Op_create(twice_plus, 1, &tp));
    MTEST_OK(MPI_Op_commutative(tp, &commute));
    MTEST_CHECK(commute == 1, "Op_commutative of a commutative op: %d", commute);
    int e[6] = {1, 2, 3, 4, 5, 6}, f[6] = {10, 20, 30, 40, 50, 60};
    MTEST_OK(MPI_Reduce_local(e, f, 1, v, tp)); /* elements 0 and 2 */
    MTEST_CHECK(f[0] == 12 && f[1] == 20 && f[2] == 36 && f[3] == 40, "user op on a vector: %d %d %d %d", f[0], f[1],
                f[2], f[3]);

    MTEST_OK(MPI_Op_free(&mm));
    MTEST_CHECK(mm == MPI_OP_NULL, "Op_free did not reset the handle");
    MTEST_OK(MPI_Op_free(&mmc));
    MTEST_OK(MPI_Op_free(&tp));
    MPI_Type_free(&v);
    MPI_Type_free(&mat_type);
}

static void bad_input(void)
{
    int a[2] = {1, 2}, b[2] = {3, 4};
    float x[2] = {1, 2}, y[2] = {3, 4};
    MPI_Op sum = MPI_SUM, dead, copy;
    MTEST_ERR(MPI_Reduce_local(a, b, 2, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);
    MTEST_ERR(MPI_Reduce_local(a, b, 2, MPI_INT, (MPI_Op)(void *)0x77), MPI_ERR_OP);
    MTEST_ERR(MPI_Reduce_local(x, y, 2, MPI_FLOAT, MPI_BAND), MPI_ERR_OP);
    MTEST_ERR(MPI_Reduce_local(a, b, 2, MPI_INT, MPI_MAXLOC), MPI_ERR_OP);
    MTEST_ERR(MPI_Reduce_local(a, b, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
    MTEST_ERR(MPI_Reduce_local(a, b, 2, MPI_DATATYPE_NULL, MPI_SUM), MPI_ERR_TYPE);
    MTEST_CHECK(b[0] == 3 && b[1] == 4 && y[0] == 3, "a failed Reduce_local changed its buffer");
    MTEST_ERR(MPI_Op_free(&sum), MPI_ERR_OP);
    MTEST_CHECK(sum == MPI_SUM, "a failed Op_free changed the handle");
    MTEST_OK(MPI_Op_create(matmul, 1, &dead));
    copy = dead;
    MTEST_OK(MPI_Op_free(&dead));
    MTEST_ERR(MPI_Op_free(&copy), MPI_ERR_OP);
    MTEST_ERR(MPI_Reduce_local(a, b, 2, MPI_INT, copy), MPI_ERR_OP);
    int flag;
    MTEST_ERR(MPI_Op_commutative(MPI_OP_NULL, &flag), MPI_ERR_OP);
    MTEST_OK(MPI_Op_commutative(MPI_MAXLOC, &flag));
    MTEST_CHECK(flag == 1, "MPI_MAXLOC is commutative");
    MTEST_ERR(MPI_Op_create(NULL, 1, &dead), MPI_ERR_ARG);
}

/* Across ranks, predefined ops only (the collectives' own tests cover the algorithms). */
static void allreduce(void)
{
    long long s[3] = {mtest_rank, 1, -mtest_rank}, r[3];
    MTEST_OK(MPI_Allreduce(s, r, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    long long n = mtest_size, tot = n * (n - 1) / 2;
    MTEST_CHECK(r[0] == tot && r[1] == n && r[2] == -tot, "Allreduce SUM: %lld %lld %lld", r[0], r[1], r[2]);
    int p[2] = {mtest_rank % 2, mtest_rank}, q[2];
    MTEST_OK(MPI_Allreduce(p, q, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD));
    int wantv = mtest_size > 1, wanti = mtest_size > 1 ? 1 : 0;
    MTEST_CHECK(q[0] == wantv && q[1] == wanti, "Allreduce MAXLOC: (%d, %d), expected (%d, %d)", q[0], q[1], wantv,
                wanti);
}

/* Element i of rank r's input: 0 or 1 (pairs: index r), so that sums and products are
 * exact in every type and any order of combination gives the same result. */
static void across_input(const tinfo_t *ti, MPI_Aint ext, int r, unsigned char *buf, int n)
{
    memset(buf, 0, (size_t)(ext * n));
    for (int i = 0; i < n; i++) {
        unsigned char *p = buf + i * ext;
        int v = (r * 7 + i * 3) % 5 != 0, w = (r + i) % 3 != 0;
        switch (ti->cls) {
        case C_FLT: setf(p, ti->size, v); break;
        case C_CPLX:
            setf(p, ti->size, v);
            setf(p + kind_size(ti->size), ti->size, w);
            break;
        case C_PAIR:
            setf(p, ti->size, v);
            setf(p + pair_off(ti), ti->idx_kind, r);
            break;
        default: seti(p, ti->size, v);
        }
    }
}

/* A non-commutative user op (2x2 matrix product) through Allreduce, in place and not, and
 * Reduce at 0 and n-1 across the ranks of comm, n matrices each: the product must keep rank
 * order (the shared-memory paths take predefined ops only; the schedules keep the order). */
static void across_user(MPI_Comm comm, int n)
{
    int me, size;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    MPI_Op mm;
    MTEST_OK(MPI_Type_contiguous(4, MPI_INT, &mat_type));
    MTEST_OK(MPI_Type_commit(&mat_type));
    MTEST_OK(MPI_Op_create(matmul, 0, &mm));
    size_t len = (size_t)n * 4 * sizeof(int);
    int *in = malloc(len), *out = malloc(len), *ref = malloc(len), *x = malloc(len);
    /* rank r's matrix i: entries 0-2, so products of up to 8 stay far from overflow */
    for (int r = 0; r < size; r++) {
        int *m = r == 0 ? ref : x;
        for (int i = 0; i < 4 * n; i++)
            m[i] = (r * 7 + i * 3 + (i >> 2)) % 3;
        if (r == me)
            memcpy(in, m, len);
        if (r > 0) {
            MTEST_OK(MPI_Reduce_local(ref, x, n, mat_type, mm));
            memcpy(ref, x, len);
        }
    }
    for (int root = -2; root < 2; root++) {
        int at = root < 0 ? -1 : root == 0 ? 0 : size - 1;
        memset(out, 0x5a, len);
        if (root == -2) {
            memcpy(out, in, len);
            MTEST_OK(MPI_Allreduce(MPI_IN_PLACE, out, n, mat_type, mm, comm));
        } else if (at < 0)
            MTEST_OK(MPI_Allreduce(in, out, n, mat_type, mm, comm));
        else
            MTEST_OK(MPI_Reduce(in, out, n, mat_type, mm, at, comm));
        if (at >= 0 && at != me)
            continue;
        int bad = 0;
        for (int i = 0; i < 4 * n; i++)
            bad += out[i] != ref[i];
        MTEST_CHECK(!bad, "non-commutative user op, %s (root %d) of %d matrices: %d ints differ",
                    root == -2 ? "Allreduce in place"
                    : at < 0   ? "Allreduce"
                               : "Reduce",
                    at, n, bad);
    }
    free(in), free(out), free(ref), free(x);
    MTEST_OK(MPI_Op_free(&mm));
    MPI_Type_free(&mat_type);
}

/* Type k of the table when op oi is defined on it (its extent in *ext), else NULL. */
static const tinfo_t *allowed(size_t oi, size_t k, MPI_Aint *ext)
{
    const tinfo_t *ti = &types[k];
    if (!(ops[oi].groups & ti->groups))
        return NULL;
    MPI_Aint lb;
    MPI_Type_get_extent(ti->t, &lb, ext);
    return ti;
}

/* Every allowed (op, type) pair through Allreduce and Reduce across the ranks of comm,
 * n elements each, against the flat result: the ranks' inputs combined in rank order with
 * MPI_Reduce_local. The testlist runs it with several sites (RMPI_SITES), where the tiers
 * combine in another order and cross the pretend long links, and with `-n COUNT` on
 * WORLD and on a split communicator in reversed rank order across the shared-memory
 * collectives' step and slice boundaries (RMPI_COLL_SHM_CHUNK). */
static void across(MPI_Comm comm, int n)
{
    int me, size;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
        for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
            MPI_Aint ext;
            const tinfo_t *ti = allowed(oi, k, &ext);
            if (!ti)
                continue;
            unsigned char *in = malloc((size_t)(ext * n)), *out = malloc((size_t)(ext * n));
            unsigned char *ref = malloc((size_t)(ext * n)), *x = malloc((size_t)(ext * n));
            across_input(ti, ext, 0, ref, n);
            for (int r = 1; r < size; r++) {
                across_input(ti, ext, r, x, n);
                MTEST_OK(MPI_Reduce_local(ref, x, n, ti->t, ops[oi].op));
                memcpy(ref, x, (size_t)(ext * n));
            }
            across_input(ti, ext, me, in, n);
            /* root -2: Allreduce in place (the input in out), -1: Allreduce */
            for (int root = -2; root < 2; root++) {
                int at = root < 0 ? -1 : root == 0 ? 0 : size - 1;
                memset(out, 0x5a, (size_t)(ext * n));
                if (root == -2) {
                    memcpy(out, in, (size_t)(ext * n));
                    MTEST_OK(MPI_Allreduce(MPI_IN_PLACE, out, n, ti->t, ops[oi].op, comm));
                } else if (at < 0)
                    MTEST_OK(MPI_Allreduce(in, out, n, ti->t, ops[oi].op, comm));
                else
                    MTEST_OK(MPI_Reduce(in, out, n, ti->t, ops[oi].op, at, comm));
                if (at >= 0 && at != me)
                    continue;
                for (int i = 0; i < n; i++)
                    MTEST_CHECK(elem_equal(ti, out + i * ext, ref + i * ext),
                                "%s %s on %s (root %d): element %d differs",
                                root == -2 ? "Allreduce in place"
                                : at < 0   ? "Allreduce"
                                           : "Reduce",
                                ops[oi].name, ti->name, at, i);
            }
            free(in), free(out), free(ref), free(x);
        }
    across_user(comm, n);
}

/* Every allowed (op, type) pair through Reduce_scatter_block (n elements a rank),
 * Reduce_scatter (uneven counts, rank 1's zero), Scan and Exscan (n elements), in place and
 * not, against the ranks' inputs combined in rank order with MPI_Reduce_local: the whole
 * vector for the scatters (each rank checks its part), ranks 0..me for Scan, 0..me-1 for
 * Exscan (rank 0's result is undefined and not read). The testlist forces each algorithm
 * (RMPI_COLL_REDUCE_SCATTER, RMPI_COLL_SCAN). */
static void across_scatter_scan(MPI_Comm comm, int n)
{
    int me, size;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    int *counts = malloc(sizeof(int) * (size_t)size), total = 0, at = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = r == 1 ? 0 : n + r % 3;
        at += r < me ? counts[r] : 0;
        total += counts[r];
    }
    int len = total > n * size ? total : n * size; /* elements of a whole vector */
    const size_t nt = sizeof types / sizeof types[0];
    for (size_t pair = 0; pair < nt * (sizeof ops / sizeof ops[0]); pair++) {
        size_t oi = pair / nt;
        MPI_Aint ext;
        const tinfo_t *ti = allowed(oi, pair % nt, &ext);
        if (!ti)
            continue;
        size_t bytes = (size_t)(ext * len);
        unsigned char *in = malloc(bytes), *out = malloc(bytes), *x = malloc(bytes);
        unsigned char *full = malloc(bytes), *scan = malloc(bytes), *exscan = malloc(bytes);
        across_input(ti, ext, 0, full, len);
        for (int r = 1; r < size; r++) {
            if (r == me)
                memcpy(exscan, full, bytes);
            across_input(ti, ext, r, x, len);
            MTEST_OK(MPI_Reduce_local(full, x, len, ti->t, ops[oi].op));
            memcpy(full, x, bytes);
            if (r == me)
                memcpy(scan, full, bytes);
        }
        if (me == 0)
            across_input(ti, ext, 0, scan, len);
        across_input(ti, ext, me, in, len);
        for (int form = 0; form < 6; form++) {
            static const char *const what[] = {"Reduce_scatter_block",
                                               "Reduce_scatter_block in place",
                                               "Reduce_scatter",
                                               "Reduce_scatter in place",
                                               "Scan",
                                               "Exscan"};
            const unsigned char *want = form < 2    ? full + (size_t)(ext * n * me)
                                        : form < 4  ? full + (size_t)(ext * at)
                                        : form == 4 ? scan
                                                    : exscan;
            int cnt = form < 2 ? n : form < 4 ? counts[me] : n;
            memset(out, 0x5a, bytes);
            if (form % 2 && form < 4)
                memcpy(out, in, bytes);
            switch (form) {
            case 0: MTEST_OK(MPI_Reduce_scatter_block(in, out, n, ti->t, ops[oi].op, comm)); break;
            case 1: MTEST_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, out, n, ti->t, ops[oi].op, comm)); break;
            case 2: MTEST_OK(MPI_Reduce_scatter(in, out, counts, ti->t, ops[oi].op, comm)); break;
            case 3: MTEST_OK(MPI_Reduce_scatter(MPI_IN_PLACE, out, counts, ti->t, ops[oi].op, comm)); break;
            case 4: MTEST_OK(MPI_Scan(in, out, n, ti->t, ops[oi].op, comm)); break;
            default: MTEST_OK(MPI_Exscan(in, out, n, ti->t, ops[oi].op, comm));
            }
            if (form == 5 && me == 0)
                continue;
            int bad = 0, first = -1;
            for (int i = 0; i < cnt; i++)
                if (!elem_equal(ti, out + i * ext, want + i * ext)) {
                    bad++;
                    first = first < 0 ? i : first;
                }
            MTEST_CHECK(!bad, "%s %s on %s, %d elements: %d differ, the first %d", what[form], ops[oi].name, ti->name,
                        cnt, bad, first);
        }
        free(in), free(out), free(x), free(full), free(scan), free(exscan);
    }
    free(counts);
}

/* One non-blocking or persistent call of across_nb and what it must produce. */
typedef struct nbjob {
    MPI_Request req;
    const tinfo_t *ti;
    const char *what;
    unsigned char *out;       /* result (Bcast: the buffer) */
    const unsigned char *ref; /* expected there (NULL: nothing checked on this rank) */
    size_t len;               /* bytes of out */
    int n, persistent;
    int source; /* out is this rank's input (the root of a Bcast) */
} nbjob_t;

static void nb_check(const nbjob_t *j, const char *when)
{
    if (!j->ref)
        return;
    MPI_Aint lb, ext;
    MPI_Type_get_extent(j->ti->t, &lb, &ext);
    for (int i = 0; i < j->n; i++)
        MTEST_CHECK(elem_equal(j->ti, j->out + i * ext, j->ref + i * ext), "%s on %s (%s): element %d differs", j->what,
                    j->ti->name, when, i);
}

/* Blocking calls among the outstanding ones: results checked at once. */
static void nb_blocking(MPI_Comm comm, int me, int size, int p)
{
    int v = me + 1, sum = 0, b = me == p % size ? p : -1;
    MTEST_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm));
    MTEST_CHECK(sum == size * (size + 1) / 2, "blocking Allreduce among I* calls: %d", sum);
    MTEST_OK(MPI_Bcast(&b, 1, MPI_INT, p % size, comm));
    MTEST_CHECK(b == p, "blocking Bcast among I* calls: %d, expected %d", b, p);
    if (p % 3 == 0)
        MTEST_OK(MPI_Barrier(comm));
}

/* An I* call that must not block: rank 0 starts an Iallreduce, then sends rank 1 a
 * message large enough for a rendezvous; rank 1 receives it before starting its own
 * Iallreduce. A call that waited for its peers inside MPI_Iallreduce would deadlock. */
static void nb_inversion(MPI_Comm comm, int me, int size)
{
    enum { BIG = 1 << 20 };
    char *big = calloc(BIG, 1);
    int v = me + 1, sum = 0;
    MPI_Request r;
    if (me == 1)
        MTEST_OK(MPI_Recv(big, BIG, MPI_CHAR, 0, 7, comm, MPI_STATUS_IGNORE));
    MTEST_OK(MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm, &r));
    if (me == 0 && size > 1)
        MTEST_OK(MPI_Send(big, BIG, MPI_CHAR, 1, 7, comm));
    MTEST_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MTEST_CHECK(sum == size * (size + 1) / 2, "Iallreduce around a rendezvous: %d", sum);
    free(big);
}

/* Every allowed (op, type) pair through Iallreduce, Ireduce (roots 0 and size - 1) and
 * Ibcast of the reference (root by pair), some as persistent calls (started again after
 * their first completion), with Ibarriers among them, all outstanding at once on a fresh
 * communicator, with blocking Allreduce, Bcast and Barrier calls in between (the first of
 * them makes the shared-memory segment, so the calls before it take the point-to-point
 * schedules and those after it the segment). Completed in reverse order of issue, by
 * MPI_Wait, or (poll) by MPI_Test rounds, which also run between the issues. */
static void across_nb(MPI_Comm parent, int n, int poll)
{
    MPI_Comm comm;
    int me, size, njobs = 0, cap = 64;
    MTEST_OK(MPI_Comm_dup(parent, &comm));
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &size);
    nb_inversion(comm, me, size); /* point-to-point schedules: no segment yet */
    nbjob_t *jobs = malloc(sizeof *jobs * (size_t)cap);
    unsigned char **keep = malloc(sizeof *keep * (size_t)cap * 2);
    int nkeep = 0, p = 0;
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
        for (size_t k = 0; k < sizeof types / sizeof types[0]; k++, p++) {
            const tinfo_t *ti = &types[k];
            if (!(ops[oi].groups & ti->groups))
                continue;
            if (njobs + 5 > cap) {
                cap *= 2;
                jobs = realloc(jobs, sizeof *jobs * (size_t)cap);
                keep = realloc(keep, sizeof *keep * (size_t)cap * 2);
            }
            MPI_Aint lb, ext;
            MPI_Type_get_extent(ti->t, &lb, &ext);
            unsigned char *in = malloc((size_t)(ext * n)), *ref = malloc((size_t)(ext * n));
            unsigned char *x = malloc((size_t)(ext * n));
            across_input(ti, ext, 0, ref, n);
            for (int r = 1; r < size; r++) {
                across_input(ti, ext, r, x, n);
                MTEST_OK(MPI_Reduce_local(ref, x, n, ti->t, ops[oi].op));
                memcpy(ref, x, (size_t)(ext * n));
            }
            free(x);
            across_input(ti, ext, me, in, n);
            keep[nkeep++] = in, keep[nkeep++] = ref;
            for (int root = -2; root < 2; root++) {
                nbjob_t *j = &jobs[njobs++];
                int at = root < -1 ? p % size : root < 0 ? -1 : root == 0 ? 0 : size - 1;
                j->ti = ti, j->n = n, j->persistent = p % 7 == root + 3;
                j->len = (size_t)(ext * n), j->source = root < -1 && me == at;
                j->out = malloc(j->len);
                j->ref = at < 0 || at == me ? ref : NULL;
                memset(j->out, 0x5a, (size_t)(ext * n));
                if (root < -1) {
                    j->what = j->persistent ? "Bcast_init" : "Ibcast";
                    j->ref = ref;
                    if (me == at)
                        memcpy(j->out, ref, (size_t)(ext * n));
                    MTEST_OK(j->persistent ? MPI_Bcast_init(j->out, n, ti->t, at, comm, MPI_INFO_NULL, &j->req)
                                           : MPI_Ibcast(j->out, n, ti->t, at, comm, &j->req));
                } else if (at < 0) {
                    j->what = j->persistent ? "Allreduce_init" : "Iallreduce";
                    MTEST_OK(j->persistent
                                 ? MPI_Allreduce_init(in, j->out, n, ti->t, ops[oi].op, comm, MPI_INFO_NULL, &j->req)
                                 : MPI_Iallreduce(in, j->out, n, ti->t, ops[oi].op, comm, &j->req));
                } else {
                    j->what = j->persistent ? "Reduce_init" : "Ireduce";
                    MTEST_OK(j->persistent
                                 ? MPI_Reduce_init(in, j->out, n, ti->t, ops[oi].op, at, comm, MPI_INFO_NULL, &j->req)
                                 : MPI_Ireduce(in, j->out, n, ti->t, ops[oi].op, at, comm, &j->req));
                }
                if (j->persistent)
                    MTEST_OK(MPI_Start(&j->req));
            }
            if (p % 5 == 0) {
                nbjob_t *j = &jobs[njobs++];
                j->ti = ti, j->what = "Ibarrier", j->ref = NULL, j->out = NULL, j->persistent = 0, j->source = 0;
                MTEST_OK(MPI_Ibarrier(comm, &j->req));
            }
            if (p % 11 == 10)
                nb_blocking(comm, me, size, p);
            for (int i = njobs > 24 ? njobs - 24 : 0; poll && i < njobs; i++) {
                int done = 0;
                if (jobs[i].req != MPI_REQUEST_NULL && !jobs[i].persistent)
                    MTEST_OK(MPI_Test(&jobs[i].req, &done, MPI_STATUS_IGNORE));
                if (done)
                    nb_check(&jobs[i], "polled");
            }
        }
    /* the rest, newest first: each completion needs the older calls of the queue too */
    for (int left = 1; left;) {
        left = 0;
        for (int i = njobs - 1; i >= 0; i--) {
            nbjob_t *j = &jobs[i];
            int done = 1;
            if (j->req == MPI_REQUEST_NULL || (j->persistent && j->persistent > 1))
                continue;
            if (poll)
                MTEST_OK(MPI_Test(&j->req, &done, MPI_STATUS_IGNORE));
            else
                MTEST_OK(MPI_Wait(&j->req, MPI_STATUS_IGNORE));
            if (!done) {
                left = 1;
                continue;
            }
            nb_check(j, "first");
            if (j->persistent)
                j->persistent = 2;
        }
    }
    /* persistent calls again, in the order they were made (the same on every rank) */
    nb_blocking(comm, me, size, 0);
    nb_inversion(comm, me, size); /* in the segment */
    for (int i = 0; i < njobs; i++)
        if (jobs[i].persistent) {
            if (!jobs[i].source)
                memset(jobs[i].out, 0x5a, jobs[i].len);
            MTEST_OK(MPI_Start(&jobs[i].req));
        }
    for (int i = 0; i < njobs; i++)
        if (jobs[i].persistent) {
            MTEST_OK(MPI_Wait(&jobs[i].req, MPI_STATUS_IGNORE));
            nb_check(&jobs[i], "restarted");
            MTEST_OK(MPI_Request_free(&jobs[i].req));
        }
    for (int i = 0; i < njobs; i++)
        free(jobs[i].out);
    for (int i = 0; i < nkeep; i++)
        free(keep[i]);
    free(jobs), free(keep);
    MTEST_OK(MPI_Comm_free(&comm));
}

int main(int argc, char **argv)
{
    /* a last argument `onecpu`: every rank pinned to one CPU, so the node is oversubscribed
     * on any machine and the library takes its oversubscribed algorithms */
    if (argc > 1 && !strcmp(argv[argc - 1], "onecpu") && mtest_pin_one_cpu("ops"))
        return 1;
    argc -= argc > 1 && !strcmp(argv[argc - 1], "onecpu");
    mtest_init(&argc, &argv);
    mtest_errors_return(MPI_COMM_WORLD);
    pair_layouts();
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
            one_pair((int)oi, &types[ti]);
    derived();
    user_ops();
    bad_input();
    allreduce();
    if (argc > 3 && !strcmp(argv[1], "-nb")) {
        /* -nb COUNT wait|test: the non-blocking and persistent forms */
        int poll = !strcmp(argv[3], "test");
        across_nb(MPI_COMM_WORLD, atoi(argv[2]), poll);
        if (mtest_size > 2) {
            MPI_Comm half;
            MPI_Comm_split(MPI_COMM_WORLD, mtest_rank % 2, -mtest_rank, &half);
            across_nb(half, atoi(argv[2]), !poll);
            MPI_Comm_free(&half);
        }
        return mtest_finalize();
    }
    int n = argc > 2 && !strcmp(argv[1], "-n") ? atoi(argv[2]) : 0;
    /* -s COUNT: Reduce_scatter(_block), Scan and Exscan too, n elements each */
    int scat = argc > 2 && !strcmp(argv[1], "-s");
    n = scat ? atoi(argv[2]) : n;
    across(MPI_COMM_WORLD, n > 0 ? n : N);
    if (scat)
        across_scatter_scan(MPI_COMM_WORLD, n);
    if (n > 0 && mtest_size > 2) {
        MPI_Comm half;
        MPI_Comm_split(MPI_COMM_WORLD, mtest_rank % 2, -mtest_rank, &half);
        across(half, n);
        if (scat)
            across_scatter_scan(half, n);
        MPI_Comm_free(&half);
    }
    return mtest_finalize();
}
