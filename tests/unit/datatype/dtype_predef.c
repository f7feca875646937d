/* Predefined datatypes: sizes, extents, names, handle lookup. */
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "../unit_check.h"
#include "datatype/datatype.h"

typedef struct expect {
    MPI_Datatype h;
    const char *name;
    size_t size;
    MPI_Aint extent;
    MPI_Count nbasic;
} expect_t;

#define E(h, size, extent, nbasic)  \
    {                               \
        h, #h, size, extent, nbasic \
    }

/* Hand-written for x86_64 / aarch64 Linux (LP64, 16-byte long double). */
static const expect_t expect[] = {
    E(MPI_AINT, 8, 8, 1),
    E(MPI_COUNT, 8, 8, 1),
    E(MPI_OFFSET, 8, 8, 1),
    E(MPI_PACKED, 1, 1, 1),
    E(MPI_SHORT, 2, 2, 1),
    E(MPI_INT, 4, 4, 1),
    E(MPI_LONG, 8, 8, 1),
    E(MPI_LONG_LONG, 8, 8, 1),
    E(MPI_UNSIGNED_SHORT, 2, 2, 1),
    E(MPI_UNSIGNED, 4, 4, 1),
    E(MPI_UNSIGNED_LONG, 8, 8, 1),
    E(MPI_UNSIGNED_LONG_LONG, 8, 8, 1),
    E(MPI_FLOAT, 4, 4, 1),
    E(MPI_C_FLOAT_COMPLEX, 8, 8, 1),
    E(MPI_CXX_FLOAT_COMPLEX, 8, 8, 1),
    E(MPI_DOUBLE, 8, 8, 1),
    E(MPI_C_DOUBLE_COMPLEX, 16, 16, 1),
    E(MPI_CXX_DOUBLE_COMPLEX, 16, 16, 1),
    E(MPI_INTEGER, 4, 4, 1),
    E(MPI_LOGICAL, 4, 4, 1),
    E(MPI_REAL, 4, 4, 1),
    E(MPI_COMPLEX, 8, 8, 1),
    E(MPI_DOUBLE_PRECISION, 8, 8, 1),
    E(MPI_DOUBLE_COMPLEX, 16, 16, 1),
    E(MPI_LONG_DOUBLE, 16, 16, 1),
    E(MPI_C_LONG_DOUBLE_COMPLEX, 32, 32, 1),
    E(MPI_CXX_LONG_DOUBLE_COMPLEX, 32, 32, 1),
    E(MPI_FLOAT_INT, 8, 8, 2),
    E(MPI_DOUBLE_INT, 12, 16, 2),
    E(MPI_LONG_INT, 12, 16, 2),
    E(MPI_2INT, 8, 8, 2),
    E(MPI_SHORT_INT, 6, 8, 2),
    E(MPI_LONG_DOUBLE_INT, 20, 32, 2),
    E(MPI_2REAL, 8, 8, 2),
    E(MPI_2DOUBLE_PRECISION, 16, 16, 2),
    E(MPI_2INTEGER, 8, 8, 2),
    E(MPI_C_BOOL, 1, 1, 1),
    E(MPI_CXX_BOOL, 1, 1, 1),
    E(MPI_WCHAR, sizeof(wchar_t), (MPI_Aint)sizeof(wchar_t), 1),
    E(MPI_INT8_T, 1, 1, 1),
    E(MPI_UINT8_T, 1, 1, 1),
    E(MPI_CHAR, 1, 1, 1),
    E(MPI_SIGNED_CHAR, 1, 1, 1),
    E(MPI_UNSIGNED_CHAR, 1, 1, 1),
    E(MPI_BYTE, 1, 1, 1),
    E(MPI_INT16_T, 2, 2, 1),
    E(MPI_UINT16_T, 2, 2, 1),
    E(MPI_INT32_T, 4, 4, 1),
    E(MPI_UINT32_T, 4, 4, 1),
    E(MPI_INT64_T, 8, 8, 1),
    E(MPI_UINT64_T, 8, 8, 1),
    E(MPI_INTEGER1, 1, 1, 1),
    E(MPI_CHARACTER, 1, 1, 1),
    E(MPI_INTEGER2, 2, 2, 1),
    E(MPI_INTEGER4, 4, 4, 1),
    E(MPI_REAL4, 4, 4, 1),
    E(MPI_INTEGER8, 8, 8, 1),
    E(MPI_REAL8, 8, 8, 1),
    E(MPI_COMPLEX8, 8, 8, 1),
    E(MPI_INTEGER16, 16, 16, 1),
    E(MPI_REAL16, 16, 16, 1),
    E(MPI_COMPLEX16, 16, 16, 1),
    E(MPI_COMPLEX32, 32, 32, 1),
#ifdef MPIX_LOGICAL1
    E(MPIX_LOGICAL1, 1, 1, 1),
#endif
#ifdef MPIX_REAL1
    E(MPIX_REAL1, 1, 1, 1),
#endif
#ifdef MPIX_LOGICAL2
    E(MPIX_LOGICAL2, 2, 2, 1),
#endif
#ifdef MPIX_REAL2
    E(MPIX_REAL2, 2, 2, 1),
#endif
#ifdef MPIX_LOGICAL4
    E(MPIX_LOGICAL4, 4, 4, 1),
#endif
#ifdef MPIX_COMPLEX4
    E(MPIX_COMPLEX4, 4, 4, 1),
#endif
#ifdef MPIX_LOGICAL8
    E(MPIX_LOGICAL8, 8, 8, 1),
#endif
#ifdef MPI_LOGICAL1
    E(MPI_LOGICAL1, 1, 1, 1),
#endif
#ifdef MPI_LOGICAL2
    E(MPI_LOGICAL2, 2, 2, 1),
#endif
#ifdef MPI_LOGICAL4
    E(MPI_LOGICAL4, 4, 4, 1),
#endif
#ifdef MPI_LOGICAL8
    E(MPI_LOGICAL8, 8, 8, 1),
#endif
#ifdef MPI_LOGICAL16
    E(MPI_LOGICAL16, 16, 16, 1),
#endif
#ifdef MPI_REAL2
    E(MPI_REAL2, 2, 2, 1),
#endif
#ifdef MPI_COMPLEX4
    E(MPI_COMPLEX4, 4, 4, 1),
#endif
};

/* Pair types: offset of the second member, from the C struct layout. */
static void check_pair(MPI_Datatype h, MPI_Aint second_off, size_t first, size_t second)
{
    rmpi_dtype_t *dt = rmpi_dtype_get(h);
    CHECK(dt->true_lb == 0 && dt->true_ub == second_off + (MPI_Aint)second, "%s true_ub %ld", dt->name,
          (long)dt->true_ub);
    CHECK(dt->pair_first == first, "%s pair_first %zu", dt->name, dt->pair_first);
    /* Get_elements on one member, one and a half pairs, two pairs. */
    CHECK(rmpi_dtype_elements(dt, first) == 1, "%s elements(first)", dt->name);
    CHECK(rmpi_dtype_elements(dt, dt->size + first) == 3, "%s elements(1.5)", dt->name);
    CHECK(rmpi_dtype_elements(dt, 2 * dt->size) == 4, "%s elements(2)", dt->name);
    if (first != 1)
        CHECK(rmpi_dtype_elements(dt, 1) == MPI_UNDEFINED, "%s elements(1 byte)", dt->name);
}

int main(void)
{
    for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
        const expect_t *e = &expect[i];
        rmpi_dtype_t *dt = rmpi_dtype_get(e->h);
        CHECK(dt != NULL, "%s not found", e->name);
        if (!dt)
            continue;
        CHECK(rmpi_dtype_handle(dt) == e->h, "%s handle", e->name);
        CHECK(strcmp(rmpi_dtype_name(dt), e->name) == 0, "name %s != %s", rmpi_dtype_name(dt), e->name);
        CHECK(dt->size == e->size, "%s size %zu, expected %zu", e->name, dt->size, e->size);
        CHECK(dt->extent == e->extent && dt->lb == 0 && dt->ub == e->extent, "%s extent %ld, expected %ld", e->name,
              (long)dt->extent, (long)e->extent);
        CHECK(dt->nbasic == e->nbasic, "%s nbasic %lld", e->name, (long long)dt->nbasic);
        CHECK(dt->predefined && dt->committed, "%s flags", e->name);
        CHECK(dt->contig == ((MPI_Aint)e->size == e->extent), "%s contig flag %d", e->name, dt->contig);
        CHECK(rmpi_dtype_count(dt, 3 * e->size) == 3, "%s count", e->name);
        CHECK(rmpi_dtype_free(dt) == MPI_ERR_TYPE, "%s: freeing a predefined type must fail", e->name);
    }
    /* Every slot of the table is a known type or empty, and names are unique. */
    int n = 0;
    for (uintptr_t v = 0x200; v < 0x300; v++) {
        rmpi_dtype_t *dt = rmpi_dtype_get((MPI_Datatype)v);
        if (!dt)
            continue;
        n++;
        int found = 0;
        for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
            found += expect[i].h == (MPI_Datatype)v;
        CHECK(found == 1, "handle %#lx (%s) not in the expected list", (unsigned long)v, dt->name);
        CHECK(dt->size > 0 && dt->name[0], "handle %#lx", (unsigned long)v);
    }
    CHECK(n == (int)(sizeof(expect) / sizeof(expect[0])), "%d predefined types, expected %zu", n,
          sizeof(expect) / sizeof(expect[0]));

    CHECK(rmpi_dtype_get(MPI_DATATYPE_NULL) == NULL, "MPI_DATATYPE_NULL");
    CHECK(rmpi_dtype_get((MPI_Datatype)0x201) != NULL, "MPI_AINT");
    CHECK(rmpi_dtype_get((MPI_Datatype)0x205) == NULL, "unused slot 0x205");
    CHECK(rmpi_dtype_get((MPI_Datatype)0x101) == NULL, "a communicator handle is not a datatype");
    CHECK(rmpi_dtype_get((MPI_Datatype)0) == NULL, "NULL");
    static uint64_t garbage[32];
    CHECK(rmpi_dtype_get((MPI_Datatype)garbage) == NULL, "zeroed memory is not a datatype");
    CHECK(rmpi_dtype_get((MPI_Datatype)((char *)garbage + 3)) == NULL, "misaligned pointer");

    check_pair(MPI_FLOAT_INT, 4, 4, 4);
    check_pair(MPI_DOUBLE_INT, 8, 8, 4);
    check_pair(MPI_LONG_INT, 8, 8, 4);
    check_pair(MPI_SHORT_INT, 4, 2, 4);
    check_pair(MPI_LONG_DOUBLE_INT, 16, 16, 4);
    check_pair(MPI_2INT, 4, 4, 4);
    check_pair(MPI_2DOUBLE_PRECISION, 8, 8, 8);

    /* A pair packs its two members back to back, without the hole. */
    struct {
        double d;
        int i;
    } di[2] = {{1.5, 7}, {2.5, 9}};
    char packed[24];
    rmpi_dtype_t *dint = rmpi_dtype_get(MPI_DOUBLE_INT);
    CHECK(!dint->contig, "MPI_DOUBLE_INT is not contiguous");
    CHECK(rmpi_dtype_pack(di, 2, dint, 0, packed, sizeof(packed)) == 24, "pack DOUBLE_INT");
    double d;
    int iv;
    memcpy(&d, packed + 12, 8);
    memcpy(&iv, packed + 20, 4);
    CHECK(d == 2.5 && iv == 9, "packed DOUBLE_INT[1] = %g %d", d, iv);

    rmpi_dtype_t *dbl = rmpi_dtype_get(MPI_DOUBLE);
    rmpi_dtype_set_name(dbl, "renamed");
    CHECK(strcmp(rmpi_dtype_name(dbl), "renamed") == 0, "set_name on a predefined type");
    rmpi_dtype_set_name(dbl, "MPI_DOUBLE");

    return finish("dtype_predef");
}
