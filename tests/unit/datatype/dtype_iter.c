/*
 * The segment iterator on hand-computed lists: vector, indexed with zero-length blocks,
 * struct with gaps, resized (elements that touch merge into one segment), subarray,
 * count > 1, adjacent blocks merged, a predefined type, a byte range that starts and
 * ends inside blocks, and a long list read in calls of N segments (resume). The random
 * nested types of dtype_pack.c check the iterator against a type-map model as well.
 */
#include <stdlib.h>
#include <string.h>

#include "../unit_check.h"
#include "datatype/datatype.h"

#define MAXSEG 64

/* want: pairs (offset from buf, length), nwant of them. */
static void expect(const char *what, const void *buf, size_t count, rmpi_dtype_t *dt, size_t off, size_t len,
                   const long *want, int nwant)
{
    rmpi_dtype_iter_t it;
    struct iovec iov[MAXSEG];
    rmpi_dtype_iter_init(&it, buf, count, dt, off, len);
    int n = rmpi_dtype_iter_next(&it, iov, MAXSEG);
    CHECK(n == nwant, "%s: %d segments, expected %d", what, n, nwant);
    CHECK(rmpi_dtype_iter_done(&it), "%s: not done after one call", what);
    for (int k = 0; k < n && k < nwant; k++) {
        long o = (long)((const char *)iov[k].iov_base - (const char *)buf);
        CHECK(o == want[2 * k] && (long)iov[k].iov_len == want[2 * k + 1],
              "%s: segment %d is (%ld, %zu), expected (%ld, %ld)", what, k, o, iov[k].iov_len, want[2 * k],
              want[2 * k + 1]);
    }
}

#define EXPECT(what, buf, count, dt, off, len, ...)                                      \
    do {                                                                                 \
        static const long w_[] = {__VA_ARGS__};                                          \
        expect(what, buf, count, dt, off, len, w_, (int)(sizeof w_ / sizeof w_[0] / 2)); \
    } while (0)

static rmpi_dtype_t *committed(rmpi_dtype_t *dt)
{
    rmpi_dtype_commit(dt);
    return dt;
}

int main(void)
{
    static char buf[1 << 16];
    char *b = buf + 4096; /* room for negative offsets */
    rmpi_dtype_t *t, *u, *v;

    /* vector: 3 blocks of 2 ints, stride 4 ints */
    rmpi_dtype_vector(3, 2, 4, MPI_INT, 0, &t);
    committed(t);
    EXPECT("vector", b, 1, t, 0, SIZE_MAX, 0, 8, 16, 8, 32, 8);
    /* count 2: the extent is 40, so the second element's first block touches the last one */
    EXPECT("vector x2", b, 2, t, 0, SIZE_MAX, 0, 8, 16, 8, 32, 16, 56, 8, 72, 8);
    /* a byte range starting and ending inside blocks */
    EXPECT("vector bytes [5, 21)", b, 2, t, 5, 16, 5, 3, 16, 8, 32, 5);
    EXPECT("vector empty range", b, 2, t, 7, 0, );
    EXPECT("vector range past the end", b, 1, t, 30, 100, );
    /* mean piece length (RMPI_RNDV_SEG_MIN): 24 bytes in 3 pieces */
    CHECK(rmpi_dtype_mean_piece(t) == 8, "vector mean piece %zu, expected 8", rmpi_dtype_mean_piece(t));
    {
        rmpi_dtype_t *lv2, *nest;
        rmpi_dtype_vector(6, 2048, 2560, MPI_DOUBLE, 0, &lv2);
        committed(lv2);
        CHECK(rmpi_dtype_mean_piece(lv2) == 16384, "long vector mean piece %zu", rmpi_dtype_mean_piece(lv2));
        /* 5 elements of t, each 3 pieces: nested or flattened, still 8 */
        rmpi_dtype_vector(5, 1, 2, t->handle, 0, &nest);
        committed(nest);
        CHECK(rmpi_dtype_mean_piece(nest) == 8, "vector of vectors mean piece %zu", rmpi_dtype_mean_piece(nest));
        rmpi_dtype_free(lv2);
        rmpi_dtype_free(nest);
    }

    /* resized to extent 8: elements touch, so count 3 is one segment */
    rmpi_dtype_resized(MPI_INT, 0, 4, 0, &u);
    committed(u);
    rmpi_dtype_vector(1, 2, 2, MPI_INT, 0, &v);
    rmpi_dtype_t *rv;
    rmpi_dtype_resized(v->handle, 0, 8, 0, &rv);
    committed(rv);
    EXPECT("resized touching", b, 3, rv, 0, SIZE_MAX, 0, 24);
    /* resized with a gap after each element: one segment per element */
    rmpi_dtype_t *rg;
    rmpi_dtype_resized(MPI_INT, -4, 12, 0, &rg);
    committed(rg);
    EXPECT("resized gaps", b, 3, rg, 0, SIZE_MAX, 0, 4, 12, 4, 24, 4);

    /* indexed with zero-length blocks and two adjacent blocks (merged) */
    MPI_Count bl[] = {1, 0, 2, 1, 0, 1}, dp[] = {0, 1, 3, 5, 6, 9};
    rmpi_dtype_t *ix;
    rmpi_dtype_indexed(6, bl, dp, MPI_INT, 0, &ix);
    committed(ix);
    EXPECT("indexed", b, 1, ix, 0, SIZE_MAX, 0, 4, 12, 12, 36, 4);
    /* count 2: extent is 40 (true_ub 40, lb 0), element 1 starts at 40 right after 36..40 */
    EXPECT("indexed x2 merges across elements", b, 2, ix, 0, SIZE_MAX, 0, 4, 12, 12, 36, 8, 52, 12, 76, 4);

    /* struct with gaps: char at 0, double at 8, int at 20; extent padded to 24 */
    MPI_Count sbl[] = {1, 1, 1};
    MPI_Aint sdp[] = {0, 8, 20};
    MPI_Datatype sty[] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    rmpi_dtype_t *st;
    rmpi_dtype_struct(3, sbl, sdp, sty, 0, &st);
    committed(st);
    /* the int (20..24) touches the next element's char (24) */
    EXPECT("struct", b, 2, st, 0, SIZE_MAX, 0, 1, 8, 8, 20, 5, 32, 8, 44, 4);
    /* struct whose members touch: one segment */
    MPI_Aint sdp2[] = {0, 1, 9};
    rmpi_dtype_t *st2;
    rmpi_dtype_struct(3, sbl, sdp2, sty, 0, &st2);
    committed(st2);
    EXPECT("struct packed members", b, 1, st2, 0, SIZE_MAX, 0, 13);

    /* subarray: 2x3 block at (1, 2) of a 4x6 int array (C order) */
    MPI_Count sz[] = {4, 6}, sub[] = {2, 3}, start[] = {1, 2};
    rmpi_dtype_t *sa;
    rmpi_dtype_subarray(2, sz, sub, start, MPI_ORDER_C, MPI_INT, 0, &sa);
    committed(sa);
    EXPECT("subarray", b, 1, sa, 0, SIZE_MAX, 32, 12, 56, 12);

    /* predefined and contiguous types: one segment at the true lb */
    EXPECT("predefined", b, 5, rmpi_dtype_get(MPI_DOUBLE), 0, SIZE_MAX, 0, 40);
    EXPECT("predefined range", b, 5, rmpi_dtype_get(MPI_DOUBLE), 3, 10, 3, 10);
    EXPECT("zero count", b, 0, t, 0, SIZE_MAX, );

    /* resume: 1000 blocks of 1 int, stride 2, read N segments at a time */
    rmpi_dtype_t *lv;
    rmpi_dtype_vector(1000, 1, 2, MPI_INT, 0, &lv);
    committed(lv);
    for (int max = 1; max <= 7; max++) {
        rmpi_dtype_iter_t it;
        struct iovec iov[8];
        rmpi_dtype_iter_init(&it, b, 1, lv, 0, SIZE_MAX);
        int seen = 0, calls = 0, ok = 1;
        while (!rmpi_dtype_iter_done(&it)) {
            int n = rmpi_dtype_iter_next(&it, iov, max);
            ok &= n == (seen + max <= 1000 ? max : 1000 - seen);
            for (int k = 0; k < n; k++)
                ok &= iov[k].iov_base == b + 8 * (seen + k) && iov[k].iov_len == 4;
            seen += n;
            calls++;
            CHECK(it.offset == (size_t)seen * 4, "resume max %d: offset %zu after %d segments", max, it.offset, seen);
            if (calls > 2000)
                break;
        }
        CHECK(ok && seen == 1000 && calls == (1000 + max - 1) / max, "resume max %d: %d segments in %d calls", max,
              seen, calls);
    }
    /* resume where the list is full and the next piece touches the last: it is merged, not cut */
    {
        rmpi_dtype_iter_t it;
        struct iovec iov[3];
        rmpi_dtype_iter_init(&it, b, 2, ix, 0, SIZE_MAX);
        int n = rmpi_dtype_iter_next(&it, iov, 3);
        CHECK(n == 3 && iov[2].iov_base == b + 36 && iov[2].iov_len == 8 && it.offset == 24,
              "full list merges the touching piece: n %d, last (%ld, %zu), offset %zu", n,
              (long)((char *)iov[2 < n ? 2 : 0].iov_base - b), iov[2 < n ? 2 : 0].iov_len, it.offset);
        n = rmpi_dtype_iter_next(&it, iov, 2);
        CHECK(n == 2 && iov[0].iov_base == b + 52 && iov[0].iov_len == 12 && iov[1].iov_base == b + 76,
              "resumed after the merge: n %d", n);
        CHECK(rmpi_dtype_iter_done(&it), "resumed list not done");
    }

    rmpi_dtype_t *all[] = {t, u, v, rv, rg, ix, st, st2, sa, lv};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        rmpi_dtype_free(all[i]);
    return finish("dtype_iter");
}
