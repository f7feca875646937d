/* Datatype breadth: Get_envelope/Get_contents (a decoder rebuilds every kind of type from
 * them and must get the same type map; returned derived types are new handles to free;
 * the _c layout of _c types), external32 packing (exact bytes, round trips, errors),
 * Get_elements with a partial last element (int, _x and _c), Status_set_elements_x/_c,
 * Get_count_c, darray scatter/gather of a global array from rank 0 over all ranks,
 * subarray to subarray of another shape, Type_match_size, f90 types,
 * Type_get_value_index, Alloc_mem/Free_mem, Get_address/Aint_add/Aint_diff. */
#include "mtest.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Type map of one element as global int indices (ints of an array filled with their own
 * index, packed). Returns the count. */
static int type_map(MPI_Datatype t, int *out, int max)
{
    MPI_Aint lb, ext, tlb, text;
    int size;
    MPI_Type_size(t, &size);
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    if (size / 4 > max || tlb < 0)
        return -1;
    int cells = (int)((tlb + text) / 4) + 1;
    int *arr = mtest_malloc((size_t)cells * sizeof(int));
    for (int i = 0; i < cells; i++)
        arr[i] = i;
    int pos = 0;
    MPI_Pack(arr, 1, t, out, max * 4, &pos, MPI_COMM_WORLD);
    free(arr);
    return size / 4;
}

/* Rebuild a type from its envelope and contents, recursively (the int API). */
static MPI_Datatype rebuild(MPI_Datatype t)
{
    int ni, na, nd, comb;
    MTEST_OK(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb));
    if (comb == MPI_COMBINER_NAMED)
        return t;
    int *in = mtest_malloc(sizeof(int) * (size_t)(ni + 1));
    MPI_Aint *ad = mtest_malloc(sizeof(MPI_Aint) * (size_t)(na + 1));
    MPI_Datatype *ty = mtest_malloc(sizeof(MPI_Datatype) * (size_t)(nd + 1)), *sub = ty;
    MTEST_OK(MPI_Type_get_contents(t, ni, na, nd, in, ad, ty));
    MPI_Datatype kids[16], r = MPI_DATATYPE_NULL;
    for (int i = 0; i < nd && i < 16; i++)
        kids[i] = rebuild(ty[i]);
    switch (comb) {
    case MPI_COMBINER_DUP: MPI_Type_dup(kids[0], &r); break;
    case MPI_COMBINER_CONTIGUOUS: MPI_Type_contiguous(in[0], kids[0], &r); break;
    case MPI_COMBINER_VECTOR: MPI_Type_vector(in[0], in[1], in[2], kids[0], &r); break;
    case MPI_COMBINER_HVECTOR: MPI_Type_create_hvector(in[0], in[1], ad[0], kids[0], &r); break;
    case MPI_COMBINER_INDEXED: MPI_Type_indexed(in[0], in + 1, in + 1 + in[0], kids[0], &r); break;
    case MPI_COMBINER_HINDEXED: MPI_Type_create_hindexed(in[0], in + 1, ad, kids[0], &r); break;
    case MPI_COMBINER_INDEXED_BLOCK: MPI_Type_create_indexed_block(in[0], in[1], in + 2, kids[0], &r); break;
    case MPI_COMBINER_HINDEXED_BLOCK: MPI_Type_create_hindexed_block(in[0], in[1], ad, kids[0], &r); break;
    case MPI_COMBINER_STRUCT: MPI_Type_create_struct(in[0], in + 1, ad, kids, &r); break;
    case MPI_COMBINER_RESIZED: MPI_Type_create_resized(kids[0], ad[0], ad[1], &r); break;
    case MPI_COMBINER_SUBARRAY: {
        int n = in[0];
        MPI_Type_create_subarray(n, in + 1, in + 1 + n, in + 1 + 2 * n, in[1 + 3 * n], kids[0], &r);
        break;
    }
    case MPI_COMBINER_DARRAY: {
        int n = in[2];
        MPI_Type_create_darray(in[0], in[1], n, in + 3, in + 3 + n, in + 3 + 2 * n, in + 3 + 3 * n, in[3 + 4 * n],
                               kids[0], &r);
        break;
    }
    default: MTEST_CHECK(0, "unexpected combiner %d", comb);
    }
    for (int i = 0; i < nd; i++) {
        int kni, kna, knd, kc;
        MPI_Type_get_envelope(sub[i], &kni, &kna, &knd, &kc);
        if (kc != MPI_COMBINER_NAMED) {
            MPI_Type_free(&sub[i]); /* the contents handed us a new handle */
            MPI_Type_free(&kids[i]);
        }
    }
    free(in);
    free(ad);
    free(ty);
    MTEST_CHECK(r != MPI_DATATYPE_NULL, "rebuilding combiner %d failed", comb);
    if (r != MPI_DATATYPE_NULL)
        MPI_Type_commit(&r);
    return r;
}

static void same_map(const char *what, MPI_Datatype a, MPI_Datatype b)
{
    static int ma[4096], mb[4096];
    int na = type_map(a, ma, 4096), nb = type_map(b, mb, 4096);
    MPI_Aint la, ea, lb2, eb;
    MPI_Type_get_extent(a, &la, &ea);
    MPI_Type_get_extent(b, &lb2, &eb);
    MTEST_CHECK(na == nb && na >= 0 && memcmp(ma, mb, sizeof(int) * (size_t)(na > 0 ? na : 0)) == 0 && la == lb2 &&
                    ea == eb,
                "%s: the rebuilt type differs (%d vs %d elements, extent %ld vs %ld)", what, na, nb, (long)ea,
                (long)eb);
}

static void decode(void)
{
    MPI_Datatype v, hv, idx, hidx, ib, hib, st, rs, sa, da, dup, top;
    int bl[3] = {2, 1, 3}, dp[3] = {5, 0, 9};
    MPI_Aint ad[3] = {40, 0, 72};
    MTEST_OK(MPI_Type_vector(3, 2, 4, MPI_INT, &v));
    MTEST_OK(MPI_Type_create_hvector(2, 1, 52, v, &hv));
    MTEST_OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &idx));
    MTEST_OK(MPI_Type_create_hindexed(3, bl, ad, MPI_INT, &hidx));
    MTEST_OK(MPI_Type_create_indexed_block(3, 2, dp, MPI_INT, &ib));
    MTEST_OK(MPI_Type_create_hindexed_block(3, 2, ad, MPI_INT, &hib));
    MPI_Datatype sty[3] = {v, MPI_INT, idx};
    MTEST_OK(MPI_Type_create_struct(3, bl, ad, sty, &st));
    MTEST_OK(MPI_Type_create_resized(st, -8, 400, &rs));
    int sz[3] = {4, 5, 6}, sub[3] = {2, 3, 2}, start[3] = {1, 0, 3};
    MTEST_OK(MPI_Type_create_subarray(3, sz, sub, start, MPI_ORDER_FORTRAN, MPI_INT, &sa));
    int gs[2] = {7, 5}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
        darg[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 2};
    MTEST_OK(MPI_Type_create_darray(4, 2, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &da));
    MTEST_OK(MPI_Type_dup(hv, &dup));
    MPI_Datatype tty[3] = {dup, sa, hib};
    MPI_Aint tad[3] = {0, 2000, 5000};
    int tbl[3] = {1, 1, 2};
    MTEST_OK(MPI_Type_create_struct(3, tbl, tad, tty, &top));
    MPI_Datatype all[] = {v, hv, idx, hidx, ib, hib, st, rs, sa, da, dup, top};
    const char *names[] = {"vector", "hvector", "indexed",  "hindexed", "indexed_block", "hindexed_block",
                           "struct", "resized", "subarray", "darray",   "dup",           "struct of all"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        MTEST_OK(MPI_Type_commit(&all[i]));
        MPI_Datatype r = rebuild(all[i]);
        same_map(names[i], all[i], r);
        MPI_Type_free(&r);
    }

    /* envelope details, predefined types, errors */
    int ni, na, nd, comb, ints[8];
    MPI_Aint addrs[8];
    MPI_Datatype types[8];
    MTEST_OK(MPI_Type_get_envelope(MPI_DOUBLE, &ni, &na, &nd, &comb));
    MTEST_CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0, "envelope of MPI_DOUBLE");
    MTEST_ERR(MPI_Type_get_contents(MPI_DOUBLE, 0, 0, 0, ints, addrs, types), MPI_ERR_TYPE);
    MTEST_ERR(MPI_Type_get_contents(v, 2, 0, 1, ints, addrs, types), MPI_ERR_ARG);
    MTEST_ERR(MPI_Type_get_envelope(MPI_DATATYPE_NULL, &ni, &na, &nd, &comb), MPI_ERR_TYPE);
    MTEST_OK(MPI_Type_get_contents(hv, 2, 1, 1, ints, addrs, types));
    MTEST_CHECK(ints[0] == 2 && ints[1] == 1 && addrs[0] == 52 && types[0] != v && types[0] != MPI_DATATYPE_NULL,
                "hvector contents: %d %d %ld, a new handle for the vector", ints[0], ints[1], (long)addrs[0]);
    MPI_Type_free(&types[0]);
    MTEST_OK(MPI_Type_get_contents(idx, 7, 0, 1, ints, addrs, types));
    MTEST_CHECK(types[0] == MPI_INT && ints[0] == 3 && ints[4] == 5, "indexed contents: predefined MPI_INT returned");

    /* the _c layout of a _c type */
    MPI_Datatype cv;
    MPI_Count cni, cna, cnl, cnd, large[4];
    MTEST_OK(MPI_Type_vector_c(3, 2, 7, MPI_INT, &cv));
    MTEST_OK(MPI_Type_get_envelope_c(cv, &cni, &cna, &cnl, &cnd, &comb));
    MTEST_CHECK(cni == 0 && cna == 0 && cnl == 3 && cnd == 1 && comb == MPI_COMBINER_VECTOR, "envelope_c of vector_c");
    MTEST_OK(MPI_Type_get_contents_c(cv, 0, 0, 3, 1, ints, addrs, large, types));
    MTEST_CHECK(large[0] == 3 && large[1] == 2 && large[2] == 7 && types[0] == MPI_INT, "contents_c of vector_c");
    MTEST_OK(MPI_Type_get_envelope(cv, &ni, &na, &nd, &comb));
    MTEST_CHECK(ni == 3 && na == 0 && nd == 1, "int envelope of vector_c: %d %d %d", ni, na, nd);
    MTEST_OK(MPI_Type_get_envelope_c(v, &cni, &cna, &cnl, &cnd, &comb));
    MTEST_CHECK(cni == 3 && cnl == 0, "envelope_c of an int vector");
    MPI_Type_free(&cv);

    /* subarray_c and darray_c: ndims/order (and the distribution) stay integers */
    MPI_Count csz[2] = {6, 4}, csub[2] = {2, 3}, cst[2] = {1, 1}, cl[8];
    MPI_Datatype cs, cd, sub1[1];
    int ci[16];
    MTEST_OK(MPI_Type_create_subarray_c(2, csz, csub, cst, MPI_ORDER_C, MPI_INT, &cs));
    MTEST_OK(MPI_Type_get_envelope_c(cs, &cni, &cna, &cnl, &cnd, &comb));
    MTEST_CHECK(comb == MPI_COMBINER_SUBARRAY && cni == 2 && cna == 0 && cnl == 6 && cnd == 1,
                "envelope_c of subarray_c");
    MTEST_OK(MPI_Type_get_contents_c(cs, 2, 0, 6, 1, ci, addrs, cl, sub1));
    MTEST_CHECK(ci[0] == 2 && ci[1] == MPI_ORDER_C && cl[0] == 6 && cl[2] == 2 && cl[5] == 1 && sub1[0] == MPI_INT,
                "contents_c of subarray_c");
    int cdist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE}, cdarg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 0},
        cps[2] = {2, 1};
    MTEST_OK(MPI_Type_create_darray_c(2, 1, 2, csz, cdist, cdarg, cps, MPI_ORDER_FORTRAN, MPI_INT, &cd));
    MTEST_OK(MPI_Type_get_envelope_c(cd, &cni, &cna, &cnl, &cnd, &comb));
    MTEST_OK(MPI_Type_get_contents_c(cd, 10, 0, 2, 1, ci, addrs, cl, sub1));
    MTEST_CHECK(comb == MPI_COMBINER_DARRAY && cni == 10 && cnl == 2 && ci[0] == 2 && ci[1] == 1 &&
                    ci[3] == MPI_DISTRIBUTE_BLOCK && ci[9] == MPI_ORDER_FORTRAN && cl[0] == 6 && cl[1] == 4,
                "envelope/contents_c of darray_c");
    int dsz;
    MPI_Type_size(cd, &dsz);
    MTEST_CHECK(dsz == 3 * 4 * 4, "darray_c rank 1 of a 6x4 block x none array: %d bytes", dsz);
    MPI_Type_free(&cs);
    MPI_Type_free(&cd);
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        MPI_Type_free(&all[i]);
}

static void external32(void)
{
    int a[3] = {1, -2, 0x01020304}, b[3] = {0, 0, 0};
    unsigned char buf[64];
    MPI_Aint pos = 0, size = 0;
    MTEST_OK(MPI_Pack_external_size("external32", 3, MPI_INT, &size));
    MTEST_CHECK(size == 12, "Pack_external_size of 3 MPI_INT: %ld", (long)size);
    MTEST_OK(MPI_Pack_external("external32", a, 3, MPI_INT, buf, sizeof buf, &pos));
    static const unsigned char want[12] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe, 1, 2, 3, 4};
    MTEST_CHECK(pos == 12 && memcmp(buf, want, 12) == 0, "external32 bytes of 1, -2, 0x01020304 (pos %ld)", (long)pos);
    pos = 0;
    MTEST_OK(MPI_Unpack_external("external32", buf, 12, &pos, b, 3, MPI_INT));
    MTEST_CHECK(pos == 12 && memcmp(a, b, sizeof a) == 0, "Unpack_external round trip");

    /* a vector of doubles and a wchar, appended after each other */
    double m[3][2] = {{1.5, -7}, {2.25, -7}, {-3, -7}}, n[3][2] = {{0, 9}, {0, 9}, {0, 9}};
    MPI_Datatype col;
    MTEST_OK(MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &col));
    MTEST_OK(MPI_Type_commit(&col));
    wchar_t w = L'\u00e9', w2 = 0;
    pos = 0;
    MTEST_OK(MPI_Pack_external("external32", m, 1, col, buf, sizeof buf, &pos));
    MTEST_OK(MPI_Pack_external("external32", &w, 1, MPI_WCHAR, buf, sizeof buf, &pos));
    MTEST_CHECK(pos == 26 && buf[0] == 0x3f && buf[1] == 0xf8 && buf[24] == 0x00 && buf[25] == 0xe9,
                "external32 of a column and a wchar (pos %ld)", (long)pos);
    MPI_Aint end = pos;
    pos = 0;
    MTEST_OK(MPI_Unpack_external("external32", buf, end, &pos, n, 1, col));
    MTEST_OK(MPI_Unpack_external("external32", buf, end, &pos, &w2, 1, MPI_WCHAR));
    MTEST_CHECK(n[0][0] == 1.5 && n[1][0] == 2.25 && n[2][0] == -3 && n[0][1] == 9 && n[2][1] == 9 && w2 == w,
                "external32 round trip of a column (gaps untouched) and a wchar");
    MPI_Count csize = 0;
    /* The standard's external32 MPI_LONG and MPI_UNSIGNED_LONG are 4 bytes (also in pairs). */
    long l[2] = {-5, 0x7fffffff}, l2[2];
    unsigned long ul = 0xfedcba98ul, ul2;
    MTEST_OK(MPI_Pack_external_size("external32", 2, MPI_LONG, &size));
    MTEST_CHECK(size == 8, "Pack_external_size of 2 MPI_LONG: %ld", (long)size);
    MTEST_OK(MPI_Pack_external_size("external32", 1, MPI_LONG_INT, &size));
    MTEST_CHECK(size == 8, "Pack_external_size of MPI_LONG_INT: %ld", (long)size);
    pos = 0;
    MTEST_OK(MPI_Pack_external("external32", l, 2, MPI_LONG, buf, sizeof buf, &pos));
    MTEST_OK(MPI_Pack_external("external32", &ul, 1, MPI_UNSIGNED_LONG, buf, sizeof buf, &pos));
    const unsigned char lw[12] = {0xff, 0xff, 0xff, 0xfb, 0x7f, 0xff, 0xff, 0xff, 0xfe, 0xdc, 0xba, 0x98};
    MTEST_CHECK(pos == 12 && memcmp(buf, lw, 12) == 0, "external32 bytes of longs -5, 2^31-1, 0xfedcba98ul (pos %ld)",
                (long)pos);
    pos = 0;
    MTEST_OK(MPI_Unpack_external("external32", buf, 12, &pos, l2, 2, MPI_LONG));
    MTEST_OK(MPI_Unpack_external("external32", buf, 12, &pos, &ul2, 1, MPI_UNSIGNED_LONG));
    MTEST_CHECK(l2[0] == -5 && l2[1] == 0x7fffffff && ul2 == ul, "external32 round trip of longs: %ld %ld %lx", l2[0],
                l2[1], ul2);
    MTEST_OK(MPI_Pack_external_size_c("external32", 2, MPI_LONG_DOUBLE_INT, &csize));
    MTEST_CHECK(csize == 40, "external size of 2 MPI_LONG_DOUBLE_INT: %lld", (long long)csize);

    pos = 0;
    MTEST_ERR(MPI_Pack_external("native", a, 3, MPI_INT, buf, sizeof buf, &pos), MPI_ERR_ARG);
    MTEST_ERR(MPI_Pack_external_size("internal", 3, MPI_INT, &size), MPI_ERR_ARG);
    MTEST_ERR(MPI_Pack_external("external32", a, 3, MPI_INT, buf, 8, &pos), MPI_ERR_TRUNCATE);
    MTEST_ERR(MPI_Unpack_external("external32", buf, 4, &pos, b, 3, MPI_INT), MPI_ERR_TRUNCATE);
    MPI_Type_free(&col);
}

/* A struct {3 ints, 1 double}; 2 elements received from a message of 3 ints, a double,
 * and 1 int: Get_count undefined, Get_elements 5. */
static void partial_elements(void)
{
    struct rec {
        int i[3];
        double d;
    } recs[2];
    int bl[2] = {3, 1};
    MPI_Aint disp[2] = {offsetof(struct rec, i), offsetof(struct rec, d)};
    MPI_Datatype tys[2] = {MPI_INT, MPI_DOUBLE}, t, s;
    MTEST_OK(MPI_Type_create_struct(2, bl, disp, tys, &t));
    MTEST_OK(MPI_Type_commit(&t));
    struct {
        int i[3];
        double d;
        int j;
    } src = {{1, 2, 3}, 4.5, 6};
    int sbl[3] = {3, 1, 1};
    MPI_Aint sdisp[3] = {0, offsetof(__typeof__(src), d), offsetof(__typeof__(src), j)};
    MPI_Datatype stys[3] = {MPI_INT, MPI_DOUBLE, MPI_INT};
    MTEST_OK(MPI_Type_create_struct(3, sbl, sdisp, stys, &s));
    MTEST_OK(MPI_Type_commit(&s));
    int to = (mtest_rank + 1) % mtest_size, from = (mtest_rank - 1 + mtest_size) % mtest_size;
    MPI_Status st;
    memset(recs, 0, sizeof recs);
    MTEST_OK(MPI_Sendrecv(&src, 1, s, to, 3, recs, 2, t, from, 3, MPI_COMM_WORLD, &st));
    int cnt = 0, el = 0;
    MPI_Count elx = 0, elc = 0;
    MTEST_OK(MPI_Get_count(&st, t, &cnt));
    MTEST_OK(MPI_Get_elements(&st, t, &el));
    MTEST_OK(MPI_Get_elements_x(&st, t, &elx));
    MTEST_OK(MPI_Get_elements_c(&st, t, &elc));
    MTEST_CHECK(cnt == MPI_UNDEFINED && el == 5 && elx == 5 && elc == 5,
                "partial struct: Get_count %d, Get_elements %d/%lld/%lld, expected UNDEFINED and 5", cnt, el,
                (long long)elx, (long long)elc);
    MTEST_CHECK(recs[0].i[2] == 3 && recs[0].d == 4.5 && recs[1].i[0] == 6 && recs[1].i[1] == 0,
                "partial struct: data");
    MTEST_OK(MPI_Get_elements(&st, MPI_INT, &el));
    MTEST_CHECK(el == 6, "24 bytes as MPI_INT: Get_elements %d, expected 6", el);
    MTEST_OK(MPI_Get_elements(&st, MPI_DOUBLE, &el));
    MTEST_CHECK(el == 3, "24 bytes as MPI_DOUBLE: Get_elements %d, expected 3", el);
    MTEST_OK(MPI_Get_elements(&st, MPI_DOUBLE_INT, &el));
    MTEST_CHECK(el == 4, "24 bytes as MPI_DOUBLE_INT (12 each): Get_elements %d, expected 4", el);

    MPI_Status fake;
    MTEST_OK(MPI_Status_set_elements_c(&fake, t, 6));
    MTEST_OK(MPI_Get_count(&fake, t, &cnt));
    MTEST_OK(MPI_Get_elements_c(&fake, t, &elc));
    MTEST_CHECK(cnt == MPI_UNDEFINED && elc == 6, "Status_set_elements_c(6): count %d elements %lld", cnt,
                (long long)elc);
    MTEST_OK(MPI_Status_set_elements_x(&fake, t, 8));
    MTEST_OK(MPI_Get_count(&fake, t, &cnt));
    MPI_Count cc = 0;
    MTEST_OK(MPI_Get_count_c(&fake, t, &cc));
    MTEST_CHECK(cnt == 2 && cc == 2, "Status_set_elements_x(8): count %d, Get_count_c %lld", cnt, (long long)cc);
    MPI_Type_free(&t);
    MPI_Type_free(&s);
}

/* Rank 0 scatters a G0 x G1 array (value = global index) with one darray type per rank
 * (cyclic(2) rows x block columns over a p0 x p1 grid), each rank checks its piece
 * against the ownership rule, adds 1000000 and sends it back into the same layout. */
static void darray_scatter(void)
{
    enum { G0 = 11, G1 = 9 };
    int p0 = 1;
    for (int d = 1; d * d <= mtest_size; d++)
        if (mtest_size % d == 0)
            p0 = d;
    int p1 = mtest_size / p0;
    int gs[2] = {G0, G1}, dist[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK},
        darg[2] = {2, MPI_DISTRIBUTE_DFLT_DARG}, ps[2] = {p0, p1};
    MPI_Datatype mine;
    MTEST_OK(MPI_Type_create_darray(mtest_size, mtest_rank, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &mine));
    MTEST_OK(MPI_Type_commit(&mine));
    int size;
    MPI_Aint lb, ext;
    MPI_Type_size(mine, &size);
    MPI_Type_get_extent(mine, &lb, &ext);
    MTEST_CHECK(lb == 0 && ext == G0 * G1 * 4, "darray extent %ld", (long)ext);
    int n = size / 4, *local = mtest_malloc(sizeof(int) * (size_t)(n + 1));
    static int global[G0 * G1];
    MPI_Request rq = MPI_REQUEST_NULL;
    MTEST_OK(MPI_Irecv(local, n, MPI_INT, 0, 7, MPI_COMM_WORLD, &rq));
    if (mtest_rank == 0) {
        for (int i = 0; i < G0 * G1; i++)
            global[i] = i;
        for (int r = 0; r < mtest_size; r++) {
            MPI_Datatype t;
            MTEST_OK(MPI_Type_create_darray(mtest_size, r, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t));
            MTEST_OK(MPI_Type_commit(&t));
            MTEST_OK(MPI_Send(global, 1, t, r, 7, MPI_COMM_WORLD));
            MPI_Type_free(&t);
        }
    }
    MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    int c0 = mtest_rank / p1, c1 = mtest_rank % p1, blk1 = (G1 + p1 - 1) / p1, k = 0, bad = 0;
    for (int i = 0; i < G0; i++)
        for (int j = 0; j < G1; j++)
            if ((i / 2) % p0 == c0 && j / blk1 == c1) {
                if (k >= n || local[k] != i * G1 + j)
                    bad++;
                k++;
            }
    MTEST_CHECK(!bad && k == n, "darray piece of rank %d: %d wrong, %d owned, %d received", mtest_rank, bad, k, n);
    for (int i = 0; i < n; i++)
        local[i] += 1000000;
    if (mtest_rank == 0) {
        memset(global, 0, sizeof global);
        MTEST_OK(MPI_Irecv(global, 1, mine, 0, 8, MPI_COMM_WORLD, &rq));
        MTEST_OK(MPI_Send(local, n, MPI_INT, 0, 8, MPI_COMM_WORLD));
        MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int r = 1; r < mtest_size; r++) {
            MPI_Datatype t;
            MTEST_OK(MPI_Type_create_darray(mtest_size, r, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t));
            MTEST_OK(MPI_Type_commit(&t));
            MTEST_OK(MPI_Recv(global, 1, t, r, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_Type_free(&t);
        }
        for (int i = 0; i < G0 * G1; i++)
            if (global[i] != i + 1000000) {
                MTEST_CHECK(0, "gathered array: [%d] = %d, expected %d", i, global[i], i + 1000000);
                break;
            }
    } else {
        MTEST_OK(MPI_Send(local, n, MPI_INT, 0, 8, MPI_COMM_WORLD));
    }
    free(local);
    MPI_Type_free(&mine);
}

/* A 3x4 block of a 5x6x7 array (C order) into a 3x4 block of an 8x9 array (Fortran). */
static void subarray_exchange(void)
{
    static double a[5][6][7], b[9][8];
    int sz[3] = {5, 6, 7}, sub[3] = {1, 3, 4}, st[3] = {2, 1, 3};
    int sz2[2] = {8, 9}, sub2[2] = {4, 3}, st2[2] = {3, 5};
    MPI_Datatype ta, tb;
    MTEST_OK(MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &ta));
    MTEST_OK(MPI_Type_create_subarray(2, sz2, sub2, st2, MPI_ORDER_FORTRAN, MPI_DOUBLE, &tb));
    MTEST_OK(MPI_Type_commit(&ta));
    MTEST_OK(MPI_Type_commit(&tb));
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 6; j++)
            for (int k = 0; k < 7; k++)
                a[i][j][k] = i * 100 + j * 10 + k + mtest_rank * 1000;
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 8; j++)
            b[i][j] = -1;
    int to = (mtest_rank + 1) % mtest_size, from = (mtest_rank - 1 + mtest_size) % mtest_size;
    MTEST_OK(MPI_Sendrecv(a, 1, ta, to, 9, b, 1, tb, from, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    /* b is Fortran 8x9: element (r, c) at b[c][r]; the block is r 3..6, c 5..7; the type
     * map walks r fastest, matching a's k fastest (4) then j (3). */
    int bad = 0;
    for (int c = 0; c < 9; c++)
        for (int r = 0; r < 8; r++) {
            int in = r >= 3 && r <= 6 && c >= 5 && c <= 7;
            double want = in ? 2 * 100 + (1 + c - 5) * 10 + (3 + r - 3) + from * 1000 : -1;
            bad += b[c][r] != want;
        }
    MTEST_CHECK(!bad, "subarray exchange: %d wrong elements", bad);
    MPI_Type_free(&ta);
    MPI_Type_free(&tb);
}

static void misc(void)
{
    MPI_Datatype t;
    int size;
    MTEST_OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &t));
    MPI_Type_size(t, &size);
    MTEST_CHECK(size == 8, "match_size INTEGER 8: %d bytes", size);
    MTEST_OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &t));
    MPI_Type_size(t, &size);
    MTEST_CHECK(size == 4, "match_size REAL 4: %d bytes", size);
    MTEST_OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t));
    MPI_Type_size(t, &size);
    MTEST_CHECK(size == 16, "match_size COMPLEX 16: %d bytes", size);
    MTEST_ERR(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t), MPI_ERR_ARG);
    MTEST_OK(MPI_Type_create_f90_integer(9, &t));
    MPI_Type_size(t, &size);
    MTEST_CHECK(size == 4, "f90_integer(9): %d bytes", size);
    MTEST_OK(MPI_Type_create_f90_real(10, MPI_UNDEFINED, &t));
    MPI_Type_size(t, &size);
    MTEST_CHECK(size == 8, "f90_real(10): %d bytes", size);
    MTEST_OK(MPI_Type_create_f90_complex(MPI_UNDEFINED, 30, &t));
    MPI_Type_size(t, &size);
    MTEST_CHECK(size == 8, "f90_complex(r=30): %d bytes", size);
    MTEST_ERR(MPI_Type_create_f90_real(40, 1, &t), MPI_ERR_ARG);

    /* f90 types: predefined (same handle again, not freeable) but with their combiner */
    MPI_Datatype f1, f2, fr, c2, back[2];
    int ni, na, nd, comb, ints[4];
    MPI_Aint ad[1];
    MTEST_OK(MPI_Type_create_f90_integer(9, &f1));
    MTEST_OK(MPI_Type_create_f90_integer(9, &f2));
    MTEST_CHECK(f1 == f2, "f90_integer(9) twice: two handles");
    MTEST_OK(MPI_Type_get_envelope(f1, &ni, &na, &nd, &comb));
    MTEST_CHECK(comb == MPI_COMBINER_F90_INTEGER && ni == 1 && na == 0 && nd == 0,
                "envelope of f90_integer: %d %d %d %d", comb, ni, na, nd);
    MTEST_OK(MPI_Type_get_contents(f1, 1, 0, 0, ints, ad, back));
    MTEST_CHECK(ints[0] == 9, "contents of f90_integer(9): %d", ints[0]);
    MTEST_ERR(MPI_Type_free(&f2), MPI_ERR_TYPE);
    MTEST_OK(MPI_Type_create_f90_real(15, 300, &fr));
    MTEST_OK(MPI_Type_get_envelope(fr, &ni, &na, &nd, &comb));
    MTEST_OK(MPI_Type_get_contents(fr, 2, 0, 0, ints, ad, back));
    MTEST_CHECK(comb == MPI_COMBINER_F90_REAL && ni == 2 && ints[0] == 15 && ints[1] == 300, "f90_real(15, 300)");
    double x[2] = {1.5, 2}, y[2] = {2, 3};
    MTEST_OK(MPI_Reduce_local(x, y, 2, fr, MPI_SUM));
    MTEST_CHECK(y[0] == 3.5 && y[1] == 5, "SUM on an f90 real type: %g %g", y[0], y[1]);
    MTEST_OK(MPI_Type_contiguous(2, fr, &c2));
    MTEST_OK(MPI_Type_get_contents(c2, 1, 0, 1, ints, ad, back));
    MTEST_CHECK(back[0] == fr, "contents of contiguous(f90 type) returns the f90 handle itself");
    MPI_Type_free(&c2);
    MTEST_OK(MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &t));
    MTEST_CHECK(t == MPI_DOUBLE_INT, "value_index(DOUBLE, INT)");
    MTEST_OK(MPI_Type_get_value_index(MPI_REAL, MPI_REAL, &t));
    MTEST_CHECK(t == MPI_2REAL, "value_index(REAL, REAL)");
    MTEST_OK(MPI_Type_get_value_index(MPI_FLOAT, MPI_FLOAT, &t));
    MTEST_CHECK(t == MPI_DATATYPE_NULL, "value_index(FLOAT, FLOAT) is MPI_DATATYPE_NULL");

    double *mem = NULL;
    MTEST_OK(MPI_Alloc_mem(1000 * sizeof(double), MPI_INFO_NULL, &mem));
    MTEST_CHECK(mem != NULL, "Alloc_mem returned NULL");
    if (mem) {
        for (int i = 0; i < 1000; i++)
            mem[i] = i;
        MTEST_CHECK(mem[999] == 999, "Alloc_mem memory");
        MTEST_OK(MPI_Free_mem(mem));
    }
    int arr[10];
    MPI_Aint a0, a5;
    MTEST_OK(MPI_Get_address(&arr[0], &a0));
    MTEST_OK(MPI_Get_address(&arr[5], &a5));
    MTEST_CHECK(MPI_Aint_diff(a5, a0) == 5 * (MPI_Aint)sizeof(int) && MPI_Aint_add(a0, 20) == a5,
                "Get_address / Aint_add / Aint_diff");
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    mtest_errors_return(MPI_COMM_WORLD);
    decode();
    external32();
    partial_elements();
    darray_scatter();
    subarray_exchange();
    misc();
    return mtest_finalize();
}
