/* Derived datatypes: size, bounds, flattening and Get_elements against hand-computed values. */
#include <stdio.h>
#include <string.h>

#include "../unit_check.h"
#include "datatype/datatype.h"

#define H(dt) rmpi_dtype_handle(dt)

static void expect(const char *what, rmpi_dtype_t *dt, size_t size, MPI_Aint lb, MPI_Aint extent, MPI_Aint true_lb,
                   MPI_Aint true_extent)
{
    CHECK(dt != NULL, "%s: not created", what);
    if (!dt)
        return;
    CHECK(dt->size == size, "%s: size %zu, expected %zu", what, dt->size, size);
    CHECK(dt->lb == lb && dt->extent == extent && dt->ub == lb + extent, "%s: lb %ld extent %ld, expected %ld %ld",
          what, (long)dt->lb, (long)dt->extent, (long)lb, (long)extent);
    CHECK(dt->true_lb == true_lb && dt->true_extent == true_extent, "%s: true lb %ld extent %ld, expected %ld %ld",
          what, (long)dt->true_lb, (long)dt->true_extent, (long)true_lb, (long)true_extent);
    MPI_Aint a, b;
    rmpi_dtype_get_extent(dt, &a, &b);
    CHECK(a == lb && b == extent, "%s: get_extent", what);
    rmpi_dtype_get_true_extent(dt, &a, &b);
    CHECK(a == true_lb && b == true_extent, "%s: get_true_extent", what);
}

static rmpi_dtype_t *contiguous(MPI_Count n, MPI_Datatype t)
{
    rmpi_dtype_t *dt = NULL;
    CHECK(rmpi_dtype_contiguous(n, t, 0, &dt) == MPI_SUCCESS, "contiguous(%lld)", (long long)n);
    return dt;
}

static rmpi_dtype_t *vector(MPI_Count n, MPI_Count bl, MPI_Count stride, MPI_Datatype t)
{
    rmpi_dtype_t *dt = NULL;
    CHECK(rmpi_dtype_vector(n, bl, stride, t, 0, &dt) == MPI_SUCCESS, "vector");
    return dt;
}

static rmpi_dtype_t *resized(MPI_Datatype t, MPI_Aint lb, MPI_Aint ext)
{
    rmpi_dtype_t *dt = NULL;
    CHECK(rmpi_dtype_resized(t, lb, ext, 0, &dt) == MPI_SUCCESS, "resized");
    return dt;
}

static rmpi_dtype_t *struct2(MPI_Count bl0, MPI_Aint d0, MPI_Datatype t0, MPI_Count bl1, MPI_Aint d1, MPI_Datatype t1)
{
    MPI_Count bl[2] = {bl0, bl1};
    MPI_Aint d[2] = {d0, d1};
    MPI_Datatype t[2] = {t0, t1};
    rmpi_dtype_t *dt = NULL;
    CHECK(rmpi_dtype_struct(2, bl, d, t, 0, &dt) == MPI_SUCCESS, "struct");
    return dt;
}

static void elements(const char *what, rmpi_dtype_t *dt, size_t bytes, MPI_Count want)
{
    MPI_Count got = rmpi_dtype_elements(dt, bytes);
    CHECK(got == want, "%s: elements(%zu) = %lld, expected %lld", what, bytes, (long long)got, (long long)want);
}

int main(void)
{
    rmpi_dtype_t *dt, *t2, *t3;

    dt = contiguous(3, MPI_INT);
    expect("contiguous(3, INT)", dt, 12, 0, 12, 0, 12);
    CHECK(dt->contig && dt->nseg == 1 && dt->combiner == MPI_COMBINER_CONTIGUOUS && !dt->committed, "contig flags");
    CHECK(dt->nbasic == 3 && dt->basic_size == 4, "basic elements");
    rmpi_dtype_commit(dt);
    CHECK(dt->committed, "commit");
    rmpi_dtype_free(dt);

    dt = vector(3, 2, 4, MPI_INT);
    expect("vector(3,2,4,INT)", dt, 24, 0, 40, 0, 40);
    CHECK(!dt->contig && dt->nseg == 1 && dt->segs[0].count == 3 && dt->segs[0].len == 8 && dt->segs[0].stride == 16,
          "vector flattens to one strided run");
    elements("vector", dt, 12, 3);
    elements("vector", dt, 10, MPI_UNDEFINED);
    CHECK(rmpi_dtype_count(dt, 48) == 2 && rmpi_dtype_count(dt, 30) == MPI_UNDEFINED, "count");
    rmpi_dtype_free(dt);

    dt = vector(5, 2, 2, MPI_INT);
    expect("vector(5,2,2,INT)", dt, 40, 0, 40, 0, 40);
    CHECK(dt->contig && dt->nseg == 1, "a vector with stride == blocklength is contiguous");
    rmpi_dtype_free(dt);

    dt = vector(4, 1, -2, MPI_DOUBLE);
    expect("vector(4,1,-2,DOUBLE)", dt, 32, -48, 56, -48, 56);
    rmpi_dtype_free(dt);

    CHECK(rmpi_dtype_hvector(2, 3, 100, MPI_CHAR, 0, &dt) == MPI_SUCCESS, "hvector");
    expect("hvector(2,3,100,CHAR)", dt, 6, 0, 103, 0, 103);
    rmpi_dtype_free(dt);

    MPI_Count ibl[3] = {2, 0, 1}, idisp[3] = {5, 1, 0};
    CHECK(rmpi_dtype_indexed(3, ibl, idisp, MPI_INT, 0, &dt) == MPI_SUCCESS, "indexed");
    expect("indexed", dt, 12, 0, 28, 0, 28);
    CHECK(dt->nseg == 2 && dt->segs[0].off == 20 && dt->segs[0].len == 8 && dt->segs[1].off == 0 &&
              dt->segs[1].pos == 8,
          "indexed keeps type-map order");
    CHECK(dt->ints[0] == 3 && dt->ints[1] == 2 && dt->ints[4] == 5 && dt->nints == 7, "indexed contents");
    rmpi_dtype_free(dt);

    MPI_Count bdisp[3] = {4, 0, 2};
    CHECK(rmpi_dtype_indexed_block(3, 2, bdisp, MPI_SHORT, 0, &dt) == MPI_SUCCESS, "indexed_block");
    expect("indexed_block", dt, 12, 0, 12, 0, 12);
    CHECK(!dt->contig && dt->nseg == 2 && dt->segs[0].stride == -8, "indexed_block out of order is not contiguous");
    rmpi_dtype_free(dt);

    MPI_Aint hdisp[2] = {16, -8};
    MPI_Count hbl[2] = {1, 2};
    CHECK(rmpi_dtype_hindexed(2, hbl, hdisp, MPI_FLOAT, 0, &dt) == MPI_SUCCESS, "hindexed");
    expect("hindexed", dt, 12, -8, 28, -8, 28);
    rmpi_dtype_free(dt);
    CHECK(rmpi_dtype_hindexed_block(2, 3, hdisp, MPI_CHAR, 0, &dt) == MPI_SUCCESS, "hindexed_block");
    expect("hindexed_block", dt, 6, -8, 27, -8, 27);
    rmpi_dtype_free(dt);

    /* Struct padding follows the C compiler: the extent rounds up to the largest alignment. */
    dt = struct2(1, 0, MPI_CHAR, 1, 8, MPI_DOUBLE);
    expect("struct{char;double}", dt, 9, 0, 16, 0, 16);
    CHECK(dt->align == 8 && dt->nseg == 2, "align %zu nseg %zu", dt->align, dt->nseg);
    rmpi_dtype_free(dt);
    dt = struct2(1, 0, MPI_DOUBLE, 1, 8, MPI_CHAR);
    expect("struct{double;char}", dt, 9, 0, 16, 0, 9);
    CHECK(dt->nseg == 1 && !dt->contig, "adjacent members merge; padding breaks contiguity");
    rmpi_dtype_free(dt);
    dt = struct2(1, 0, MPI_INT, 1, 4, MPI_CHAR);
    expect("struct{int;char}", dt, 5, 0, 8, 0, 5);
    rmpi_dtype_free(dt);

    /* Get_elements across heterogeneous members. */
    dt = struct2(1, 0, MPI_INT, 1, 8, MPI_DOUBLE);
    elements("struct{int;double}", dt, 4, 1);
    elements("struct{int;double}", dt, 12, 2);
    elements("struct{int;double}", dt, 16, 3);
    elements("struct{int;double}", dt, 24, 4);
    elements("struct{int;double}", dt, 8, MPI_UNDEFINED);
    elements("struct{int;double}", dt, 0, 0);
    CHECK(dt->basic_size == 0 && dt->nbasic == 2, "mixed basic sizes");
    rmpi_dtype_free(dt);

    t2 = contiguous(3, MPI_INT);
    dt = struct2(2, 0, H(t2), 1, 40, MPI_CHAR);
    expect("struct{int[3] x2; char}", dt, 25, 0, 44, 0, 41);
    elements("nested", dt, 16, 4);
    elements("nested", dt, 24, 6);
    elements("nested", dt, 25, 7);
    elements("nested", dt, 26, MPI_UNDEFINED);
    elements("nested", dt, 25 + 12, 10);
    rmpi_dtype_free(dt);
    rmpi_dtype_free(t2);

    dt = contiguous(2, MPI_DOUBLE_INT);
    expect("contiguous(2, DOUBLE_INT)", dt, 24, 0, 32, 0, 28);
    CHECK(dt->nseg == 1 && dt->segs[0].count == 2 && dt->segs[0].len == 12, "pair run");
    elements("DOUBLE_INT[2]", dt, 8, 1);
    elements("DOUBLE_INT[2]", dt, 12, 2);
    elements("DOUBLE_INT[2]", dt, 20, 3);
    elements("DOUBLE_INT[2]", dt, 24, 4);
    elements("DOUBLE_INT[2]", dt, 14, MPI_UNDEFINED);
    rmpi_dtype_free(dt);

    /* Resize markers are sticky: they set the bounds of every type built on top. */
    t2 = resized(MPI_INT, -4, 12);
    expect("resized(INT,-4,12)", t2, 4, -4, 12, 0, 4);
    CHECK(!t2->contig, "resized with holes");
    dt = contiguous(2, H(t2));
    expect("contiguous(2, resized)", dt, 8, -4, 24, 0, 16);
    CHECK(dt->nseg == 1 && dt->segs[0].count == 2 && dt->segs[0].stride == 12, "resized run");
    rmpi_dtype_free(dt);
    dt = struct2(1, 0, H(t2), 1, 100, MPI_CHAR);
    expect("struct{resized; char@100}", dt, 5, -4, 12, 0, 101);
    rmpi_dtype_free(dt);
    rmpi_dtype_free(t2);
    t2 = resized(MPI_DOUBLE, 0, 4);
    dt = contiguous(3, H(t2));
    expect("overlapping resized", dt, 24, 0, 12, 0, 16);
    rmpi_dtype_free(dt);
    rmpi_dtype_free(t2);
    t2 = resized(MPI_INT, 0, 4);
    expect("resized to its own extent", t2, 4, 0, 4, 0, 4);
    CHECK(t2->contig, "resize to the natural bounds stays contiguous");
    rmpi_dtype_free(t2);

    /* Empty types. */
    dt = contiguous(0, MPI_INT);
    expect("contiguous(0)", dt, 0, 0, 0, 0, 0);
    CHECK(dt->contig && dt->nseg == 0, "empty is contiguous");
    elements("empty", dt, 0, 0);
    CHECK(rmpi_dtype_count(dt, 0) == 0, "count of empty");
    rmpi_dtype_free(dt);
    dt = struct2(0, 0, MPI_INT, 0, 8, MPI_DOUBLE);
    expect("struct of empty blocks", dt, 0, 0, 0, 0, 0);
    rmpi_dtype_free(dt);

    /* Flattening stays compact for nested strided types (3-D subarray shape). */
    t2 = vector(4, 2, 8, MPI_DOUBLE);
    CHECK(rmpi_dtype_hvector(3, 1, 8 * 8 * 8, H(t2), 0, &dt) == MPI_SUCCESS, "hvector of vector");
    expect("hvector of vector", dt, 3 * 4 * 16, 0, 2 * 512 + 26 * 8, 0, 2 * 512 + 26 * 8);
    CHECK(dt->nseg == 3 && dt->segs[2].count == 4 && dt->segs[2].pos == 128, "nseg %zu", dt->nseg);
    rmpi_dtype_free(dt);
    t3 = resized(H(t2), 0, 4 * 64);
    dt = contiguous(5, H(t3));
    CHECK(dt->nseg == 1 && dt->segs[0].count == 20, "resized vectors chain into one run (nseg %zu)", dt->nseg);
    rmpi_dtype_free(dt);
    rmpi_dtype_free(t3);
    rmpi_dtype_free(t2);
    dt = vector(100000, 1, 2, MPI_DOUBLE);
    CHECK(dt->nseg == 1, "large vector is one segment");
    rmpi_dtype_free(dt);
    /* Repeated structs stay nested rather than expanding to millions of segments. */
    t2 = struct2(1, 0, MPI_INT, 1, 8, MPI_DOUBLE);
    dt = contiguous(1000000, H(t2));
    expect("contiguous(1e6, struct{int;double})", dt, 12000000, 0, 16000000, 0, 16000000);
    CHECK(dt->nseg == 1 && dt->segs[0].sub == t2 && dt->segs[0].count == 1000000, "nested run (nseg %zu)", dt->nseg);
    elements("contiguous of struct", dt, 12000000 + 12 * 5 + 4, 2000000 + 11);
    rmpi_dtype_free(dt);
    dt = vector(1000000, 1, 3, H(t2));
    CHECK(dt->nseg == 1 && dt->segs[0].sub == t2 && dt->segs[0].stride == 48, "vector of struct (nseg %zu)", dt->nseg);
    rmpi_dtype_free(dt);
    dt = contiguous(100, H(t2));
    CHECK(dt->nseg <= 200 && !dt->segs[0].sub, "small repeats are expanded (nseg %zu)", dt->nseg);
    rmpi_dtype_free(dt);
    rmpi_dtype_free(t2);
    dt = contiguous(1000000000, MPI_BYTE);
    expect("contiguous(1e9, BYTE)", dt, 1000000000, 0, 1000000000, 0, 1000000000);
    CHECK(dt->contig, "huge contiguous is built in O(1)");
    rmpi_dtype_free(dt);

    /* Dup copies everything, commit state included. */
    t2 = vector(3, 1, 2, MPI_INT);
    rmpi_dtype_commit(t2);
    CHECK(rmpi_dtype_dup(H(t2), &dt) == MPI_SUCCESS, "dup");
    expect("dup", dt, t2->size, t2->lb, t2->extent, t2->true_lb, t2->true_extent);
    CHECK(dt->committed && dt->combiner == MPI_COMBINER_DUP && dt->types[0] == t2, "dup");
    rmpi_dtype_free(dt);
    rmpi_dtype_free(t2);
    CHECK(rmpi_dtype_dup(MPI_INT, &dt) == MPI_SUCCESS && dt->committed && !dt->predefined && dt->contig, "dup INT");
    rmpi_dtype_free(dt);

    rmpi_dtype_set_name(rmpi_dtype_get(MPI_INT), "MPI_INT");
    dt = contiguous(1, MPI_INT);
    CHECK(rmpi_dtype_name(dt)[0] == '\0', "user types start unnamed");
    char longname[300];
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    rmpi_dtype_set_name(dt, longname);
    CHECK(strlen(rmpi_dtype_name(dt)) == MPI_MAX_OBJECT_NAME - 1, "name truncated");
    rmpi_dtype_free(dt);

    return finish("dtype_bounds");
}
