/* "external32" (MPI-4.1 13.5.2) conversion of packed streams: every basic element big
 * endian in the standard's size. Natively this machine already uses those sizes except
 * for MPI_WCHAR (external 2 bytes), MPI_LONG and MPI_UNSIGNED_LONG (external 4 bytes, as
 * the standard's table says and MPICH does: values beyond 32 bits do not survive, as
 * between a 64-bit and a 32-bit host) and long double (x87 extended here, IEEE binary128
 * there). Homogeneous types convert as one run of their basic type; others walk their
 * pieces in type-map order (the order of the packed stream). */
#include "dtype_impl.h"

#include <string.h>
#include <wchar.h>

enum { U_SWAP, U_LDBL, U_WCHAR, U_LONG, U_ULONG };

typedef struct unit {
    uint8_t kind;
    uint8_t native; /* bytes in the native packed stream */
} unit_t;

/* A predefined type as at most two units (complex numbers and pairs have two). */
static int units_of(const rmpi_dtype_t *b, unit_t u[2])
{
    MPI_Datatype h = b->handle;
    if (h == MPI_LONG_DOUBLE) {
        u[0] = (unit_t){U_LDBL, sizeof(long double)};
        return 1;
    }
    if (h == MPI_C_LONG_DOUBLE_COMPLEX || h == MPI_CXX_LONG_DOUBLE_COMPLEX) {
        u[0] = u[1] = (unit_t){U_LDBL, sizeof(long double)};
        return 2;
    }
    if (h == MPI_WCHAR) {
        u[0] = (unit_t){U_WCHAR, sizeof(wchar_t)};
        return 1;
    }
    if (h == MPI_LONG || h == MPI_UNSIGNED_LONG) {
        u[0] = (unit_t){h == MPI_LONG ? U_LONG : U_ULONG, sizeof(long)};
        return 1;
    }
    if (h == MPI_LONG_INT) {
        u[0] = (unit_t){U_LONG, sizeof(long)};
        u[1] = (unit_t){U_SWAP, (uint8_t)(b->size - b->pair_first)};
        return 2;
    }
    if (b->pair_first) {
        u[0] = (unit_t){h == MPI_LONG_DOUBLE_INT ? U_LDBL : U_SWAP, (uint8_t)b->pair_first};
        u[1] = (unit_t){U_SWAP, (uint8_t)(b->size - b->pair_first)};
        return 2;
    }
    if (h == MPI_C_FLOAT_COMPLEX || h == MPI_CXX_FLOAT_COMPLEX || h == MPI_C_DOUBLE_COMPLEX ||
        h == MPI_CXX_DOUBLE_COMPLEX || h == MPI_COMPLEX || h == MPI_DOUBLE_COMPLEX || h == MPI_COMPLEX4 ||
        h == MPI_COMPLEX8 || h == MPI_COMPLEX16 || h == MPI_COMPLEX32) {
        u[0] = u[1] = (unit_t){U_SWAP, (uint8_t)(b->size / 2)};
        return 2;
    }
    u[0] = (unit_t){U_SWAP, (uint8_t)b->size};
    return 1;
}

static size_t unit_ext(const unit_t *u)
{
    return u->kind == U_LDBL ? 16 : u->kind == U_WCHAR ? 2 : u->kind == U_LONG || u->kind == U_ULONG ? 4 : u->native;
}

static void swap_copy(unsigned char *dst, const unsigned char *src, size_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (size_t i = 0; i < n; i++)
        dst[i] = src[n - 1 - i];
#else
    memcpy(dst, src, n);
#endif
}

static void unit_conv(const unit_t *u, const unsigned char *src, unsigned char *dst, int to_ext)
{
    switch (u->kind) {
    case U_SWAP: swap_copy(dst, src, u->native); break;
    case U_LDBL: {
        long double x;
        _Float128 q;
        unsigned char be[16];
        if (to_ext) {
            memcpy(&x, src, sizeof x);
            q = (_Float128)x;
            memcpy(be, &q, 16);
            swap_copy(dst, be, 16);
        } else {
            swap_copy(be, src, 16);
            memcpy(&q, be, 16);
            x = (long double)q;
            memcpy(dst, &x, sizeof x);
        }
        break;
    }
    case U_LONG:
    case U_ULONG: {
        long v;
        unsigned char be[4];
        if (to_ext) {
            memcpy(&v, src, sizeof v);
            uint32_t w = (uint32_t)v;
            memcpy(be, &w, 4);
            swap_copy(dst, be, 4);
        } else {
            uint32_t w;
            swap_copy(be, src, 4);
            memcpy(&w, be, 4);
            v = u->kind == U_LONG ? (long)(int32_t)w : (long)w;
            memcpy(dst, &v, sizeof v);
        }
        break;
    }
    case U_WCHAR: {
        wchar_t w;
        uint16_t v;
        if (to_ext) {
            memcpy(&w, src, sizeof w);
            v = (uint16_t)w;
            dst[0] = (unsigned char)(v >> 8);
            dst[1] = (unsigned char)v;
        } else {
            w = (wchar_t)((src[0] << 8) | src[1]);
            memcpy(dst, &w, sizeof w);
        }
        break;
    }
    }
}

size_t rmpi_dtype_external_size(const rmpi_dtype_t *dt)
{
    if (!dt->size)
        return 0;
    const rmpi_dtype_t *b = dt->basic != MPI_DATATYPE_NULL ? rmpi_dtype_get(dt->basic) : NULL;
    if (b) {
        unit_t u[2];
        int nu = units_of(b, u);
        size_t e = 0;
        for (int i = 0; i < nu; i++)
            e += unit_ext(&u[i]);
        return dt->size / b->size * e;
    }
    size_t total = 0, np = rmpi_dtype_npieces(dt);
    for (size_t i = 0; i < np; i++) {
        rmpi_dtype_piece_t p;
        rmpi_dtype_piece(dt, i, &p);
        if (p.bl > 0)
            total += (size_t)p.bl * rmpi_dtype_external_size(p.t);
    }
    return total;
}

/* Convert `count` elements of dt, advancing both stream pointers. */
static void conv(const rmpi_dtype_t *dt, size_t count, const unsigned char **src, unsigned char **dst, int to_ext)
{
    if (!dt->size || !count)
        return;
    const rmpi_dtype_t *b = dt->basic != MPI_DATATYPE_NULL ? rmpi_dtype_get(dt->basic) : NULL;
    if (b) {
        unit_t u[2];
        int nu = units_of(b, u);
        for (size_t n = count * (dt->size / b->size); n; n--)
            for (int i = 0; i < nu; i++) {
                size_t in = to_ext ? u[i].native : unit_ext(&u[i]), out = to_ext ? unit_ext(&u[i]) : u[i].native;
                unit_conv(&u[i], *src, *dst, to_ext);
                *src += in;
                *dst += out;
            }
        return;
    }
    size_t np = rmpi_dtype_npieces(dt);
    for (size_t e = 0; e < count; e++)
        for (size_t i = 0; i < np; i++) {
            rmpi_dtype_piece_t p;
            rmpi_dtype_piece(dt, i, &p);
            if (p.bl > 0)
                conv(p.t, (size_t)p.bl, src, dst, to_ext);
        }
}

void rmpi_dtype_to_external(const rmpi_dtype_t *dt, size_t count, const void *packed, void *ext)
{
    const unsigned char *s = packed;
    unsigned char *d = ext;
    conv(dt, count, &s, &d, 1);
}

void rmpi_dtype_from_external(const rmpi_dtype_t *dt, size_t count, const void *ext, void *packed)
{
    const unsigned char *s = ext;
    unsigned char *d = packed;
    conv(dt, count, &s, &d, 0);
}
