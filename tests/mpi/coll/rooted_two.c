/* Gather, Gatherv, Scatter and Scatterv on 2 ranks, where the other rank's block moves as
 * one shared-memory Bcast (coll/gather.c rooted_two): block sizes across every Bcast path
 * (line frames, cells, the deep ring and its limit, step buffers, the tree's single copy,
 * single copy, several steps), both roots, in place and not, a strided type on the root's
 * side and on the other's, every block checked byte for byte. Then bad calls under
 * MPI_ERRORS_RETURN: the root's own blocks of different lengths (a truncation at the root,
 * the other rank served), a Gather whose other rank sends more than the root takes and a
 * Scatter whose other rank takes less than it is sent (MPI_ERR_TRUNCATE there, small and
 * in single copy), each followed by a correct call that must still work. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

static const int sizes[] = {1, 8, 40, 64, 300, 2048, 4096, 16000, 16384, 40000, 131072, 1 << 20};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

enum { GATHER, SCATTER, GATHERV, SCATTERV, NKINDS };
static const char *const kname[NKINDS] = {"Gather", "Scatter", "Gatherv", "Scatterv"};

/* Byte j of rank r's block in call seed s. */
static unsigned char val(int r, unsigned s, size_t j) { return (unsigned char)(j * 7 + r * 101 + s * 13 + 1); }

static void fill(unsigned char *p, int r, unsigned s, size_t n)
{
    for (size_t j = 0; j < n; j++)
        p[j] = val(r, s, j);
}

static size_t bad_at(const unsigned char *p, int r, unsigned s, size_t n)
{
    for (size_t j = 0; j < n; j++)
        if (p[j] != val(r, s, j))
            return j;
    return (size_t)-1;
}

/* One call of kind k with blocks of `bytes`; strided: the root's n blocks as a vector of
 * 1-byte elements every second byte (so the root's buffer holds 2x), on the root's side
 * (side 1) or the other rank's one block (side 2). */
static void one_call(int k, int root, int bytes, int inplace, int strided, unsigned seed)
{
    int me = mtest_rank, other = 1 - root;
    size_t b = (size_t)bytes, span = strided ? 2 * b : b;
    unsigned char *mine = mtest_malloc(span), *all = mtest_malloc(2 * span);
    MPI_Datatype vec = MPI_BYTE;
    if (strided) {
        MTEST_OK(MPI_Type_vector(bytes, 1, 2, MPI_BYTE, &vec));
        MPI_Datatype r;
        MTEST_OK(MPI_Type_create_resized(vec, 0, (MPI_Aint)span, &r));
        MPI_Type_free(&vec);
        vec = r;
        MTEST_OK(MPI_Type_commit(&vec));
    }
    /* strided 1: the root's blocks are vec (count 1 each); strided 2: the other rank's */
    MPI_Datatype root_t = strided == 1 ? vec : MPI_BYTE, one_t = strided == 2 ? vec : MPI_BYTE;
    int root_c = strided == 1 ? 1 : bytes, one_c = strided == 2 ? 1 : bytes;
    size_t root_span = strided == 1 ? span : b;
    int counts[2] = {root_c, root_c}, displs[2] = {0, 1}; /* in extents of root_t */
    if (root_t == MPI_BYTE)
        displs[1] = bytes;
    int scatter = k == SCATTER || k == SCATTERV;
    int ip = inplace && me == root;
    /* inputs: the other rank's block in its pattern; the root's n blocks (Scatter) or own block */
    memset(all, 0, 2 * span);
    memset(mine, 0, span);
    if (scatter && me == root)
        for (int r = 0; r < 2; r++)
            for (size_t j = 0; j < b; j++)
                all[(size_t)r * root_span + (strided == 1 ? 2 * j : j)] = val(r, seed, j);
    if (!scatter) {
        if (ip)
            for (size_t j = 0; j < b; j++)
                all[(size_t)root * root_span + (strided == 1 ? 2 * j : j)] = val(root, seed, j);
        else
            for (size_t j = 0; j < b; j++)
                mine[me == root ? j : (strided == 2 ? 2 * j : j)] = val(me, seed, j);
    }
    /* the root's one block is plain bytes (strided 2 only strides the other rank's) */
    MPI_Datatype my_one_t = me == root ? MPI_BYTE : one_t;
    int my_one_c = me == root ? bytes : one_c;
    const void *sb = ip ? MPI_IN_PLACE : (scatter ? (void *)all : (void *)mine);
    void *rb = ip ? MPI_IN_PLACE : (scatter ? (void *)mine : (void *)all);
    switch (k) {
    case GATHER: MTEST_OK(MPI_Gather(sb, my_one_c, my_one_t, all, root_c, root_t, root, MPI_COMM_WORLD)); break;
    case SCATTER: MTEST_OK(MPI_Scatter(all, root_c, root_t, rb, my_one_c, my_one_t, root, MPI_COMM_WORLD)); break;
    case GATHERV:
        MTEST_OK(MPI_Gatherv(sb, my_one_c, my_one_t, all, counts, displs, root_t, root, MPI_COMM_WORLD));
        break;
    default: MTEST_OK(MPI_Scatterv(all, counts, displs, root_t, rb, my_one_c, my_one_t, root, MPI_COMM_WORLD));
    }
    /* check: the Gather's root holds both blocks; the Scatter's ranks their own */
    unsigned char *got = mtest_malloc(b);
    if (!scatter && me == root)
        for (int r = 0; r < 2; r++) {
            for (size_t j = 0; j < b; j++)
                got[j] = all[(size_t)r * root_span + (strided == 1 ? 2 * j : j)];
            size_t at = bad_at(got, r, seed, b);
            MTEST_CHECK(at == (size_t)-1, "%s %d B root %d%s strided %d: rank %d's block wrong at byte %zu", kname[k],
                        bytes, root, inplace ? " in place" : "", strided, r, at);
        }
    if (scatter && !ip) {
        for (size_t j = 0; j < b; j++)
            got[j] = mine[me == other && strided == 2 ? 2 * j : j];
        size_t at = bad_at(got, me, seed, b);
        MTEST_CHECK(at == (size_t)-1, "%s %d B root %d%s strided %d: rank %d's block wrong at byte %zu", kname[k],
                    bytes, root, inplace ? " in place" : "", strided, me, at);
    }
    if (strided)
        MPI_Type_free(&vec);
    free(got);
    free(mine);
    free(all);
}

/* Bad calls: each rank's error class, then a correct Scatter that must still work. */
static void bad_calls(void)
{
    int me = mtest_rank;
    mtest_errors_return(MPI_COMM_WORLD);
    for (int big = 0; big < 2; big++) {
        int n = big ? 1 << 20 : 64; /* single copy / a line frame */
        unsigned char *a = mtest_malloc((size_t)n * 2), *one = mtest_malloc((size_t)n);
        fill(a, 0, 1, (size_t)n * 2);
        /* the root's own blocks differ: it sends n, takes n / 2 (root 0): only the root errs */
        int rc = MPI_Scatter(a, n, MPI_BYTE, one, me == 0 ? n / 2 : n, MPI_BYTE, 0, MPI_COMM_WORLD);
        int cls = MPI_SUCCESS;
        if (rc)
            MPI_Error_class(rc, &cls);
        MTEST_CHECK(me == 0 ? cls == MPI_ERR_TRUNCATE : rc == MPI_SUCCESS,
                    "Scatter of %d B, root's own block short: rank %d got class %d", n, me, cls);
        if (me == 1)
            MTEST_CHECK(!memcmp(one, a + n, (size_t)n), "Scatter of %d B, root's own block short: rank 1's block wrong",
                        n);
        /* the other rank sends more than the root takes: the root reports the truncation */
        fill(one, me, 2, (size_t)n);
        rc = MPI_Gather(one, me == 1 ? n : n / 2, MPI_BYTE, a, n / 2, MPI_BYTE, 0, MPI_COMM_WORLD);
        cls = MPI_SUCCESS;
        if (rc)
            MPI_Error_class(rc, &cls);
        MTEST_CHECK(me == 0 ? cls == MPI_ERR_TRUNCATE : rc == MPI_SUCCESS,
                    "Gather of %d B into %d: rank %d got class %d", n, n / 2, me, cls);
        /* the other rank takes less than it is sent: it reports the truncation */
        rc = MPI_Scatter(a, n, MPI_BYTE, one, me == 1 ? n / 2 : n, MPI_BYTE, 0, MPI_COMM_WORLD);
        cls = MPI_SUCCESS;
        if (rc)
            MPI_Error_class(rc, &cls);
        MTEST_CHECK(me == 1 ? cls == MPI_ERR_TRUNCATE : rc == MPI_SUCCESS,
                    "Scatter of %d B into %d: rank %d got class %d", n, n / 2, me, cls);
        /* and the communicator still works */
        fill(a, 0, 3, (size_t)n * 2);
        MTEST_OK(MPI_Scatter(a, n, MPI_BYTE, one, n, MPI_BYTE, 0, MPI_COMM_WORLD));
        MTEST_CHECK(!memcmp(one, a + (size_t)me * (size_t)n, (size_t)n), "Scatter after the bad calls: rank %d wrong",
                    me);
        free(a);
        free(one);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    if (mtest_size != 2) {
        MTEST_CHECK(0, "rooted_two runs on 2 ranks, not %d", mtest_size);
        return mtest_finalize();
    }
    unsigned seed = 0;
    for (int s = 0; s < NSIZES; s++)
        for (int k = 0; k < NKINDS; k++)
            for (int root = 0; root < 2; root++)
                for (int inplace = 0; inplace < 2; inplace++)
                    for (int strided = 0; strided < 3; strided++) {
                        if (strided && sizes[s] > 65536)
                            continue;
                        one_call(k, root, sizes[s], inplace, strided, seed++);
                    }
    bad_calls();
    return mtest_finalize();
}
