/* Subarray and darray layouts, envelope/contents of every combiner (int and _c layouts),
 * clones, and external32. Layouts are read back by packing an array of ints that hold
 * their own index: the packed stream is the list of global indices in type-map order,
 * compared with hand-written lists and, for darray, with a naive ownership model over
 * many random shapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../unit_check.h"
#include "datatype/datatype.h"

#define H(dt) rmpi_dtype_handle(dt)

/* Global indices (ints of the array) that one element of dt covers, in pack order. */
static size_t indices(const rmpi_dtype_t *dt, int *out, size_t max)
{
    size_t n = dt->size / sizeof(int);
    if (n > max)
        return 0;
    MPI_Aint span = dt->true_ub > dt->ub ? dt->true_ub : dt->ub;
    size_t cells = (size_t)span / sizeof(int) + 1;
    int *arr = malloc(cells * sizeof(int));
    for (size_t i = 0; i < cells; i++)
        arr[i] = (int)i;
    rmpi_dtype_pack(arr, 1, dt, 0, out, n * sizeof(int));
    free(arr);
    return n;
}

static void expect_list(const char *what, const rmpi_dtype_t *dt, const int *want, size_t n)
{
    int got[4096];
    size_t m = indices(dt, got, 4096);
    CHECK(m == n, "%s: %zu elements, expected %zu", what, m, n);
    for (size_t i = 0; i < n && i < m; i++)
        if (got[i] != want[i]) {
            CHECK(got[i] == want[i], "%s: element %zu is index %d, expected %d", what, i, got[i], want[i]);
            break;
        }
}

static rmpi_dtype_t *subarray(int nd, const MPI_Count *sz, const MPI_Count *sub, const MPI_Count *st, int order)
{
    rmpi_dtype_t *dt = NULL;
    int rc = rmpi_dtype_subarray(nd, sz, sub, st, order, MPI_INT, 0, &dt);
    CHECK(rc == MPI_SUCCESS, "subarray: rc %d", rc);
    return dt;
}

static void test_subarray(void)
{
    MPI_Count sz[3] = {4, 5}, sub[3] = {2, 3}, st[3] = {1, 2};
    rmpi_dtype_t *c = subarray(2, sz, sub, st, MPI_ORDER_C);
    int wc[] = {7, 8, 9, 12, 13, 14};
    expect_list("subarray 4x5 C", c, wc, 6);
    CHECK(c->lb == 0 && c->extent == 80 && c->size == 24 && c->true_lb == 28 && c->true_ub == 60,
          "subarray 4x5 C: lb %ld extent %ld size %zu true %ld..%ld", (long)c->lb, (long)c->extent, c->size,
          (long)c->true_lb, (long)c->true_ub);
    rmpi_dtype_t *f = subarray(2, sz, sub, st, MPI_ORDER_FORTRAN);
    int wf[] = {9, 10, 13, 14, 17, 18};
    expect_list("subarray 4x5 Fortran", f, wf, 6);
    CHECK(f->extent == 80, "subarray Fortran extent %ld", (long)f->extent);

    MPI_Count s3[3] = {3, 4, 5}, b3[3] = {2, 2, 2}, t3[3] = {1, 1, 3};
    rmpi_dtype_t *c3 = subarray(3, s3, b3, t3, MPI_ORDER_C);
    int w3[8], k = 0;
    for (int i = 1; i <= 2; i++)
        for (int j = 1; j <= 2; j++)
            for (int l = 3; l <= 4; l++)
                w3[k++] = i * 20 + j * 5 + l;
    expect_list("subarray 3x4x5 C", c3, w3, 8);
    CHECK(c3->extent == 240, "3-D extent %ld", (long)c3->extent);

    MPI_Count s1 = 10, b1 = 3, t1 = 4;
    rmpi_dtype_t *one = subarray(1, &s1, &b1, &t1, MPI_ORDER_C);
    int w1[] = {4, 5, 6};
    expect_list("subarray 1-D", one, w1, 3);

    /* a vector of subarrays steps by the whole array */
    rmpi_dtype_t *two = NULL;
    CHECK(rmpi_dtype_contiguous(2, H(one), 0, &two) == MPI_SUCCESS, "contiguous of subarray");
    int w2[] = {4, 5, 6, 14, 15, 16};
    expect_list("contiguous(2, subarray)", two, w2, 6);

    rmpi_dtype_t *bad = NULL;
    MPI_Count big = 3;
    CHECK(rmpi_dtype_subarray(1, &s1, &b1, &big, 7, MPI_INT, 0, &bad) == MPI_ERR_ARG, "bad order");
    CHECK(rmpi_dtype_subarray(1, &s1, &s1, &big, MPI_ORDER_C, MPI_INT, 0, &bad) == MPI_ERR_ARG, "start + sub > size");
    CHECK(rmpi_dtype_subarray(0, &s1, &b1, &t1, MPI_ORDER_C, MPI_INT, 0, &bad) == MPI_ERR_ARG, "ndims 0");
    CHECK(rmpi_dtype_subarray(1, &s1, &b1, &t1, MPI_ORDER_C, MPI_DATATYPE_NULL, 0, &bad) == MPI_ERR_TYPE, "null type");
    rmpi_dtype_free(two);
    rmpi_dtype_free(c);
    rmpi_dtype_free(f);
    rmpi_dtype_free(c3);
    rmpi_dtype_free(one);
}

/* Naive darray model: walk the global array in the given order, keep what this rank's
 * coordinates own. */
static size_t darray_model(int size, int rank, int nd, const MPI_Count *g, const int *dist, const int *darg,
                           const int *ps, int order, int *out)
{
    int coords[8];
    for (int i = 0, r = rank, left = size; i < nd; i++) {
        left /= ps[i];
        coords[i] = r / left;
        r %= left;
    }
    long total = 1;
    for (int i = 0; i < nd; i++)
        total *= (long)g[i];
    size_t n = 0;
    for (long lin = 0; lin < total; lin++) {
        /* lin enumerates in the order's storage order: decode into per-dimension indices */
        long rem = lin, idx[8];
        for (int k = 0; k < nd; k++) {
            int d = order == MPI_ORDER_C ? nd - 1 - k : k;
            idx[d] = rem % g[d];
            rem /= g[d];
        }
        int mine = 1;
        for (int d = 0; d < nd && mine; d++) {
            long owner;
            if (dist[d] == MPI_DISTRIBUTE_BLOCK) {
                long blk = darg[d] == MPI_DISTRIBUTE_DFLT_DARG ? (g[d] + ps[d] - 1) / ps[d] : darg[d];
                owner = idx[d] / blk;
            } else if (dist[d] == MPI_DISTRIBUTE_CYCLIC) {
                long blk = darg[d] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg[d];
                owner = idx[d] / blk % ps[d];
            } else {
                owner = 0;
            }
            mine = owner == coords[d];
        }
        if (mine)
            out[n++] = (int)lin;
    }
    return n;
}

static void test_darray(void)
{
    /* hand-checked: 4x6 C order, 2x2 processes, block x cyclic(2); rank 1 = coords (0, 1):
     * rows 0-1, columns 2,3 -> indices 2,3,8,9 */
    MPI_Count g[2] = {4, 6};
    int dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2},
        ps[2] = {2, 2};
    rmpi_dtype_t *dt = NULL;
    CHECK(rmpi_dtype_darray(4, 1, 2, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, 0, &dt) == MPI_SUCCESS, "darray");
    int w[] = {2, 3, 8, 9};
    expect_list("darray 4x6 block x cyclic(2) rank 1", dt, w, 4);
    CHECK(dt->lb == 0 && dt->extent == 96, "darray extent %ld", (long)dt->extent);
    rmpi_dtype_free(dt);

    unit_rng_t r = unit_seed(4);
    int model[4096];
    for (int iter = 0; iter < 400; iter++) {
        int nd = (int)unit_range(&r, 1, 3), order = unit_range(&r, 0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        MPI_Count gs[3];
        int ds[3], da[3], pz[3], size = 1;
        for (int d = 0; d < nd; d++) {
            gs[d] = (MPI_Count)unit_range(&r, 1, 9);
            int kind = (int)unit_range(&r, 0, 2);
            ds[d] = kind == 0 ? MPI_DISTRIBUTE_BLOCK : kind == 1 ? MPI_DISTRIBUTE_CYCLIC : MPI_DISTRIBUTE_NONE;
            pz[d] = ds[d] == MPI_DISTRIBUTE_NONE ? 1 : (int)unit_range(&r, 1, 3);
            da[d] = MPI_DISTRIBUTE_DFLT_DARG;
            if (ds[d] == MPI_DISTRIBUTE_CYCLIC && unit_range(&r, 0, 1))
                da[d] = (int)unit_range(&r, 1, 3);
            if (ds[d] == MPI_DISTRIBUTE_BLOCK && unit_range(&r, 0, 1))
                da[d] = (int)((gs[d] + pz[d] - 1) / pz[d] + unit_range(&r, 0, 2));
            size *= pz[d];
        }
        long covered = 0, total = 1;
        for (int d = 0; d < nd; d++)
            total *= (long)gs[d];
        for (int rank = 0; rank < size; rank++) {
            rmpi_dtype_t *t = NULL;
            int rc = rmpi_dtype_darray(size, rank, nd, gs, ds, da, pz, order, MPI_INT, 0, &t);
            CHECK(rc == MPI_SUCCESS, "random darray %d rank %d: rc %d", iter, rank, rc);
            if (rc)
                continue;
            size_t n = darray_model(size, rank, nd, gs, ds, da, pz, order, model);
            char what[64];
            snprintf(what, sizeof what, "random darray %d (nd %d) rank %d", iter, nd, rank);
            expect_list(what, t, model, n);
            CHECK(t->lb == 0 && t->extent == (MPI_Aint)(total * 4), "%s: lb %ld extent %ld", what, (long)t->lb,
                  (long)t->extent);
            covered += (long)n;
            rmpi_dtype_free(t);
        }
        CHECK(covered == total, "random darray %d: ranks cover %ld of %ld elements", iter, covered, total);
        CHECK_BAIL();
    }
    /* NONE ignores its distribution argument (as MPICH and ROMIO do) */
    int none1[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC}, odd[2] = {-7, 2}, ps1[2] = {1, 2};
    CHECK(rmpi_dtype_darray(2, 1, 2, g, none1, odd, ps1, MPI_ORDER_C, MPI_INT, 0, &dt) == MPI_SUCCESS,
          "NONE with darg -7");
    int wn[] = {2, 3, 8, 9, 14, 15, 20, 21};
    expect_list("darray NONE x cyclic(2) rank 1", dt, wn, 8);
    rmpi_dtype_free(dt);
    /* errors: product of psizes != size, NONE with psize 2, block too small */
    int none[2] = {MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_BLOCK}, small[2] = {1, MPI_DISTRIBUTE_DFLT_DARG};
    CHECK(rmpi_dtype_darray(3, 0, 2, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, 0, &dt) == MPI_ERR_ARG, "size 3 vs 2x2");
    CHECK(rmpi_dtype_darray(4, 0, 2, g, none, darg, ps, MPI_ORDER_C, MPI_INT, 0, &dt) == MPI_ERR_ARG, "NONE psize 2");
    int blk2[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK};
    CHECK(rmpi_dtype_darray(4, 0, 2, g, blk2, small, ps, MPI_ORDER_C, MPI_INT, 0, &dt) == MPI_ERR_ARG,
          "block darg 1 x 2 procs < 4");
}

static void expect_env(const char *what, const rmpi_dtype_t *dt, int large_api, MPI_Count ni, MPI_Count na,
                       MPI_Count nl, MPI_Count nd, int combiner)
{
    rmpi_dtype_envelope_t e;
    rmpi_dtype_envelope(dt, large_api, &e);
    CHECK(e.ni == ni && e.na == na && e.nl == nl && e.nd == nd && e.combiner == combiner,
          "%s (api %s): envelope %lld %lld %lld %lld comb %d, expected %lld %lld %lld %lld comb %d", what,
          large_api ? "_c" : "int", (long long)e.ni, (long long)e.na, (long long)e.nl, (long long)e.nd, e.combiner,
          (long long)ni, (long long)na, (long long)nl, (long long)nd, combiner);
}

static void test_envelope(void)
{
    rmpi_dtype_t *t;
    MPI_Count ints[32], large[32];
    MPI_Aint aints[32];
    rmpi_dtype_t *types[8];

    expect_env("MPI_INT", rmpi_dtype_get(MPI_INT), 1, 0, 0, 0, 0, MPI_COMBINER_NAMED);

    CHECK(rmpi_dtype_vector(3, 2, 5, MPI_INT, 0, &t) == 0, "vector");
    expect_env("vector", t, 0, 3, 0, 0, 1, MPI_COMBINER_VECTOR);
    expect_env("vector", t, 1, 3, 0, 0, 1, MPI_COMBINER_VECTOR);
    rmpi_dtype_contents(t, 0, ints, aints, large, types);
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && types[0] == rmpi_dtype_get(MPI_INT), "vector contents");
    rmpi_dtype_t *v = t;

    CHECK(rmpi_dtype_hvector(3, 2, 40, MPI_INT, 1, &t) == 0, "hvector_c");
    expect_env("hvector_c", t, 1, 0, 0, 3, 1, MPI_COMBINER_HVECTOR);
    expect_env("hvector_c", t, 0, 2, 1, 0, 1, MPI_COMBINER_HVECTOR);
    rmpi_dtype_contents(t, 1, ints, aints, large, types);
    CHECK(large[0] == 3 && large[1] == 2 && large[2] == 40, "hvector_c large contents %lld %lld %lld",
          (long long)large[0], (long long)large[1], (long long)large[2]);
    rmpi_dtype_free(t);

    MPI_Count bl[3] = {1, 2, 3};
    MPI_Aint d[3] = {0, 16, 64};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, H(v)};
    CHECK(rmpi_dtype_struct(3, bl, d, ty, 0, &t) == 0, "struct");
    expect_env("struct", t, 0, 4, 3, 0, 3, MPI_COMBINER_STRUCT);
    rmpi_dtype_contents(t, 0, ints, aints, large, types);
    CHECK(ints[0] == 3 && ints[3] == 3 && aints[2] == 64 && types[2] == v, "struct contents");
    rmpi_dtype_free(t);
    CHECK(rmpi_dtype_struct(3, bl, d, ty, 1, &t) == 0, "struct_c");
    expect_env("struct_c", t, 1, 0, 0, 7, 3, MPI_COMBINER_STRUCT);
    rmpi_dtype_contents(t, 1, ints, aints, large, types);
    CHECK(large[0] == 3 && large[1] == 1 && large[3] == 3 && large[4] == 0 && large[6] == 64,
          "struct_c large contents");
    rmpi_dtype_free(t);

    MPI_Count disps[2] = {4, 0}, bls[2] = {2, 1};
    CHECK(rmpi_dtype_indexed(2, bls, disps, MPI_INT, 0, &t) == 0, "indexed");
    expect_env("indexed", t, 0, 5, 0, 0, 1, MPI_COMBINER_INDEXED);
    rmpi_dtype_free(t);
    MPI_Aint ad[2] = {8, 0};
    CHECK(rmpi_dtype_hindexed(2, bls, ad, MPI_INT, 0, &t) == 0, "hindexed");
    expect_env("hindexed", t, 0, 3, 2, 0, 1, MPI_COMBINER_HINDEXED);
    rmpi_dtype_free(t);
    CHECK(rmpi_dtype_indexed_block(2, 3, disps, MPI_INT, 1, &t) == 0, "indexed_block_c");
    expect_env("indexed_block_c", t, 1, 0, 0, 4, 1, MPI_COMBINER_INDEXED_BLOCK);
    rmpi_dtype_free(t);
    CHECK(rmpi_dtype_hindexed_block(2, 3, ad, MPI_INT, 0, &t) == 0, "hindexed_block");
    expect_env("hindexed_block", t, 0, 2, 2, 0, 1, MPI_COMBINER_HINDEXED_BLOCK);
    rmpi_dtype_free(t);
    CHECK(rmpi_dtype_resized(MPI_INT, -4, 16, 1, &t) == 0, "resized_c");
    expect_env("resized_c", t, 1, 0, 0, 2, 1, MPI_COMBINER_RESIZED);
    rmpi_dtype_contents(t, 1, ints, aints, large, types);
    CHECK(large[0] == -4 && large[1] == 16, "resized_c contents");
    rmpi_dtype_free(t);
    CHECK(rmpi_dtype_contiguous(7, MPI_INT, 0, &t) == 0, "contiguous");
    expect_env("contiguous", t, 0, 1, 0, 0, 1, MPI_COMBINER_CONTIGUOUS);
    rmpi_dtype_free(t);
    CHECK(rmpi_dtype_dup(H(v), &t) == 0, "dup");
    expect_env("dup", t, 1, 0, 0, 0, 1, MPI_COMBINER_DUP);
    rmpi_dtype_free(t);

    MPI_Count sz[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 2};
    CHECK(rmpi_dtype_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, MPI_INT, 1, &t) == 0, "subarray_c");
    expect_env("subarray_c", t, 1, 2, 0, 6, 1, MPI_COMBINER_SUBARRAY);
    expect_env("subarray_c", t, 0, 8, 0, 0, 1, MPI_COMBINER_SUBARRAY);
    rmpi_dtype_contents(t, 1, ints, aints, large, types);
    CHECK(ints[0] == 2 && ints[1] == MPI_ORDER_FORTRAN && large[0] == 4 && large[2] == 2 && large[5] == 2,
          "subarray_c contents");
    rmpi_dtype_contents(t, 0, ints, aints, large, types);
    CHECK(ints[0] == 2 && ints[1] == 4 && ints[3] == 2 && ints[6] == 2 && ints[7] == MPI_ORDER_FORTRAN,
          "subarray contents");
    rmpi_dtype_free(t);

    int dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2},
        ps[2] = {2, 2};
    CHECK(rmpi_dtype_darray(4, 3, 2, sz, dist, darg, ps, MPI_ORDER_C, MPI_INT, 1, &t) == 0, "darray_c");
    expect_env("darray_c", t, 1, 10, 0, 2, 1, MPI_COMBINER_DARRAY);
    expect_env("darray_c", t, 0, 12, 0, 0, 1, MPI_COMBINER_DARRAY);
    rmpi_dtype_contents(t, 1, ints, aints, large, types);
    CHECK(ints[0] == 4 && ints[1] == 3 && ints[2] == 2 && ints[3] == MPI_DISTRIBUTE_BLOCK && ints[6] == 2 &&
              ints[7] == 2 && ints[9] == MPI_ORDER_C && large[0] == 4 && large[1] == 5,
          "darray_c contents");

    /* a clone reports the same constructor and has the same layout */
    rmpi_dtype_t *c = NULL;
    CHECK(rmpi_dtype_clone(t, &c) == 0 && c != t, "clone");
    expect_env("clone of darray_c", c, 1, 10, 0, 2, 1, MPI_COMBINER_DARRAY);
    CHECK(c->size == t->size && c->extent == t->extent && c->true_lb == t->true_lb, "clone layout");
    int a[8];
    size_t na = indices(t, a, 8);
    CHECK(na == 4 && a[0] == 12 && a[3] == 18, "darray_c rank 3 layout");
    rmpi_dtype_free(t);
    expect_list("clone after the original is freed", c, a, na);
    rmpi_dtype_free(c);
    rmpi_dtype_free(v);
}

static void test_external(void)
{
    struct rec {
        char c;
        short s;
        int i;
        long l;
        float f;
        double d;
        long double ld;
        wchar_t w;
    } x = {'A', 0x0102, 0x01020304, -0x05060708L, 1.0f, -2.0, 1.0L, L'Z'}, y;
    MPI_Count bl[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    MPI_Aint d[8] = {offsetof(struct rec, c),  offsetof(struct rec, s), offsetof(struct rec, i),
                     offsetof(struct rec, l),  offsetof(struct rec, f), offsetof(struct rec, d),
                     offsetof(struct rec, ld), offsetof(struct rec, w)};
    MPI_Datatype ty[8] = {MPI_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_WCHAR};
    rmpi_dtype_t *t = NULL;
    CHECK(rmpi_dtype_struct(8, bl, d, ty, 0, &t) == 0, "struct");
    size_t es = rmpi_dtype_external_size(t);
    /* long is 4 bytes in external32 (the standard's table), so x.l fits 32 bits */
    CHECK(es == 1 + 2 + 4 + 4 + 4 + 8 + 16 + 2, "external size %zu", es);
    unsigned char packed[128], ext[128], back[128];
    rmpi_dtype_pack(&x, 1, t, 0, packed, t->size);
    rmpi_dtype_to_external(t, 1, packed, ext);
    static const unsigned char want[] = {
        'A',  0x01, 0x02, 0x01, 0x02, 0x03, 0x04, 0xfa, 0xf9, 0xf8, 0xf8, 0x3f, 0x80, 0x00,
        0x00, 0xc0, 0x00, 0,    0,    0,    0,    0,    0,    0x3f, 0xff, 0,    0,    0,
        0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0x00, 'Z',
    };
    CHECK(sizeof want == es, "want table");
    for (size_t i = 0; i < es; i++)
        if (ext[i] != want[i]) {
            CHECK(ext[i] == want[i], "external32 byte %zu is %02x, expected %02x", i, ext[i], want[i]);
            break;
        }
    rmpi_dtype_from_external(t, 1, ext, back);
    memset(&y, 0, sizeof y);
    rmpi_dtype_unpack(back, t->size, &y, 1, t, 0);
    CHECK(y.c == x.c && y.s == x.s && y.i == x.i && y.l == x.l && y.f == x.f && y.d == x.d && y.ld == x.ld &&
              y.w == x.w,
          "external32 round trip of the struct");
    rmpi_dtype_free(t);

    /* pairs and complex numbers, and a long double that is not a round number */
    struct {
        double v;
        int i;
    } p[2] = {{0.5, 7}, {-3.25, -1}}, q[2];
    rmpi_dtype_t *dp = rmpi_dtype_get(MPI_DOUBLE_INT);
    CHECK(rmpi_dtype_external_size(dp) == 12, "DOUBLE_INT external size");
    rmpi_dtype_pack(p, 2, dp, 0, packed, 24);
    rmpi_dtype_to_external(dp, 2, packed, ext);
    CHECK(ext[0] == 0x3f && ext[1] == 0xe0 && ext[8] == 0 && ext[11] == 7 && ext[12] == 0xc0 && ext[23] == 0xff,
          "DOUBLE_INT external bytes");
    rmpi_dtype_from_external(dp, 2, ext, back);
    rmpi_dtype_unpack(back, 24, q, 2, dp, 0);
    CHECK(q[0].v == 0.5 && q[0].i == 7 && q[1].v == -3.25 && q[1].i == -1, "DOUBLE_INT round trip");
    long double lv[3] = {1.0L / 3, -0x1.8p1000L, 0}, lw[3];
    rmpi_dtype_t *ld = rmpi_dtype_get(MPI_LONG_DOUBLE);
    rmpi_dtype_to_external(ld, 3, lv, ext);
    rmpi_dtype_from_external(ld, 3, ext, lw);
    CHECK(lw[0] == lv[0] && lw[1] == lv[1] && lw[2] == 0, "long double round trip");
    CHECK(ext[16] == 0xc3 && ext[17] == 0xe7 && ext[18] == 0x80 && ext[32] == 0,
          "binary128 of -1.5 * 2^1000: %02x %02x", ext[16], ext[17]);
    rmpi_dtype_t *cx = rmpi_dtype_get(MPI_C_FLOAT_COMPLEX);
    float cv[2] = {1.0f, -1.0f};
    rmpi_dtype_to_external(cx, 1, cv, ext);
    CHECK(ext[0] == 0x3f && ext[4] == 0xbf && rmpi_dtype_external_size(cx) == 8, "float complex external");

    /* a vector of a struct with a padded pair: pieces walked in order, padding skipped */
    rmpi_dtype_t *vec = NULL;
    CHECK(rmpi_dtype_vector(3, 2, 3, MPI_SHORT_INT, 0, &vec) == 0, "vector of SHORT_INT");
    CHECK(rmpi_dtype_external_size(vec) == 6 * 6, "vector of SHORT_INT external size %zu",
          rmpi_dtype_external_size(vec));
    rmpi_dtype_free(vec);
}

int main(void)
{
    test_subarray();
    test_darray();
    test_envelope();
    test_external();
    return finish("dtype_array");
}
