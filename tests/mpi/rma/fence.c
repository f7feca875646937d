/* Fence epochs: put, get and accumulate between every pair of ranks with contiguous and
 * derived datatypes (a vector at the origin, an indexed type with a negative lower bound
 * at the target), large messages (rendezvous), every result checked against a reference
 * computed locally. Window flavors create and allocate. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define N 64          /* ints per peer slot */
#define BIG (1 << 17) /* bytes of the large put/get */

static int rank, size;

static int val(int src, int dst, int i) { return src * 100000 + dst * 1000 + i; }

static void run(int allocate)
{
    int slots = (size < 2 ? 2 : size) * N; /* slot 1 takes the MAX accumulate */
    int *mem;
    MPI_Win win;
    if (allocate)
        MTEST_OK(
            MPI_Win_allocate((MPI_Aint)slots * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    else {
        mem = mtest_malloc((size_t)slots * sizeof(int));
        MTEST_OK(MPI_Win_create(mem, (MPI_Aint)slots * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    }
    for (int i = 0; i < slots; i++)
        mem[i] = -1;
    int flavor = 0, *pflavor, flag;
    MTEST_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &pflavor, &flag));
    flavor = *pflavor;
    MTEST_CHECK(flag && flavor == (allocate ? MPI_WIN_FLAVOR_ALLOCATE : MPI_WIN_FLAVOR_CREATE), "flavor %d", flavor);

    /* 1. contiguous put of my values into my slot at every rank */
    int src[N];
    MTEST_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
    for (int t = 0; t < size; t++) {
        for (int i = 0; i < N; i++)
            src[i] = val(rank, t, i);
        MTEST_OK(MPI_Put(src, N, MPI_INT, t, (MPI_Aint)rank * N, N, MPI_INT, win));
        /* the data was copied: reusing the buffer at once is allowed after a put only
         * once complete, but our puts complete locally when issued */
    }
    MTEST_OK(MPI_Win_fence(0, win));
    for (int s = 0; s < size; s++)
        for (int i = 0; i < N; i++)
            MTEST_CHECK(mem[s * N + i] == val(s, rank, i), "put: slot %d[%d] = %d, expected %d", s, i, mem[s * N + i],
                        val(s, rank, i));

    /* 2. get everything back from the next rank */
    int next = (rank + 1) % size, *got = mtest_malloc((size_t)slots * sizeof(int));
    MTEST_OK(MPI_Get(got, slots, MPI_INT, next, 0, slots, MPI_INT, win));
    MTEST_OK(MPI_Win_fence(0, win));
    for (int s = 0; s < size; s++)
        for (int i = 0; i < N; i++)
            MTEST_CHECK(got[s * N + i] == val(s, next, i), "get: slot %d[%d]", s, i);

    /* 3. accumulate (SUM) 1..N from every rank into slot 0 of every rank, and MAX into slot 1 */
    for (int i = 0; i < slots; i++)
        mem[i] = 0;
    MTEST_OK(MPI_Win_fence(0, win));
    for (int t = 0; t < size; t++) {
        for (int i = 0; i < N; i++)
            src[i] = i + rank;
        MTEST_OK(MPI_Accumulate(src, N, MPI_INT, t, 0, N, MPI_INT, MPI_SUM, win));
        MTEST_OK(MPI_Accumulate(src, N, MPI_INT, t, N, N, MPI_INT, MPI_MAX, win));
    }
    MTEST_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < N; i++) {
        int sum = 0;
        for (int r = 0; r < size; r++)
            sum += i + r;
        MTEST_CHECK(mem[i] == sum, "acc sum [%d] = %d, expected %d", i, mem[i], sum);
        MTEST_CHECK(mem[N + i] == i + size - 1, "acc max [%d] = %d", i, mem[N + i]);
    }

    /* 4. derived: origin vector (every other int of 2N), target indexed with a negative
     * displacement: blocks of 2 ints at -4, 6, 20 (units of int) from target_disp */
    MPI_Datatype vec, idx;
    MTEST_OK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vec));
    MTEST_OK(MPI_Type_commit(&vec));
    int bl[3] = {2, 2, 2}, dp[3] = {-4, 6, 20};
    MTEST_OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &idx));
    MTEST_OK(MPI_Type_commit(&idx));
    int ref[N], tmp[N];
    for (int i = 0; i < slots; i++)
        mem[i] = -1;
    MTEST_OK(MPI_Win_fence(0, win));
    int ov[N];
    for (int i = 0; i < N; i++)
        ov[i] = val(rank, next, i);
    /* 6 ints go: ov[0], ov[2], ..., ov[10] (vector count 6/ (N/2) elements... use count 1 of a 6-element vector) */
    MPI_Datatype vec6;
    MTEST_OK(MPI_Type_vector(6, 1, 2, MPI_INT, &vec6));
    MTEST_OK(MPI_Type_commit(&vec6));
    MTEST_OK(MPI_Put(ov, 1, vec6, next, (MPI_Aint)rank * N + 8, 1, idx, win));
    MTEST_OK(MPI_Win_fence(0, win));
    int prev = (rank - 1 + size) % size;
    for (int i = 0; i < N; i++)
        ref[i] = -1;
    int pos[6] = {4, 5, 14, 15, 28, 29};
    for (int k = 0; k < 6; k++)
        ref[pos[k]] = val(prev, rank, 2 * k);
    for (int i = 0; i < N; i++)
        MTEST_CHECK(mem[prev * N + i] == ref[i], "derived put: [%d] = %d, expected %d", i, mem[prev * N + i], ref[i]);
    /* get it back through the same types */
    memset(tmp, 0, sizeof tmp);
    MTEST_OK(MPI_Get(tmp, 1, vec6, next, (MPI_Aint)rank * N + 8, 1, idx, win));
    MTEST_OK(MPI_Win_fence(0, win));
    for (int k = 0; k < 6; k++) {
        MTEST_CHECK(tmp[2 * k] == val(rank, next, 2 * k), "derived get [%d] = %d", 2 * k, tmp[2 * k]);
        MTEST_CHECK(tmp[2 * k + 1] == 0, "derived get touched the gap [%d]", 2 * k + 1);
    }
    /* accumulate through the derived target type: +1 on those 6 ints */
    int ones[6] = {1, 1, 1, 1, 1, 1};
    MTEST_OK(MPI_Accumulate(ones, 6, MPI_INT, next, (MPI_Aint)rank * N + 8, 1, idx, MPI_SUM, win));
    MTEST_OK(MPI_Win_fence(0, win));
    for (int k = 0; k < 6; k++)
        MTEST_CHECK(mem[prev * N + pos[k]] == ref[pos[k]] + 1, "derived acc [%d]", pos[k]);
    MTEST_OK(MPI_Type_free(&vec));
    MTEST_OK(MPI_Type_free(&vec6));
    MTEST_OK(MPI_Type_free(&idx));

    MTEST_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    MTEST_OK(MPI_Win_free(&win));
    MTEST_CHECK(win == MPI_WIN_NULL, "Win_free did not set MPI_WIN_NULL");
    if (!allocate)
        free(mem);
    free(got);
}

/* Large transfers go by rendezvous inside the core: a put and a get of BIG bytes. */
static void big(void)
{
    unsigned char *mem = mtest_malloc(BIG), *src = mtest_malloc(BIG), *dst = mtest_malloc(BIG);
    MPI_Win win;
    MTEST_OK(MPI_Win_create(mem, BIG, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    int next = (rank + 1) % size, prev = (rank - 1 + size) % size;
    mtest_fill(src, BIG, mtest_seed(rank, next, 7));
    MTEST_OK(MPI_Win_fence(0, win));
    MTEST_OK(MPI_Put(src, BIG, MPI_BYTE, next, 0, BIG, MPI_BYTE, win));
    MTEST_OK(MPI_Win_fence(0, win));
    mtest_check_buf(mem, BIG, mtest_seed(prev, rank, 7), "big put");
    MTEST_OK(MPI_Get(dst, BIG, MPI_BYTE, prev, 0, BIG, MPI_BYTE, win));
    MTEST_OK(MPI_Win_fence(0, win));
    int pp = (prev - 1 + size) % size;
    mtest_check_buf(dst, BIG, mtest_seed(pp, prev, 7), "big get");
    /* a large accumulate and get_accumulate (rendezvous both ways): doubles */
    size_t nd = BIG / sizeof(double);
    double *dm = (double *)(void *)mem, *ds = (double *)(void *)src, *dr = (double *)(void *)dst;
    for (size_t i = 0; i < nd; i++)
        dm[i] = 1.0, ds[i] = (double)i;
    MTEST_OK(MPI_Win_fence(0, win));
    MTEST_OK(MPI_Accumulate(ds, (int)nd, MPI_DOUBLE, next, 0, (int)nd, MPI_DOUBLE, MPI_SUM, win));
    MTEST_OK(MPI_Win_fence(0, win));
    MTEST_OK(MPI_Get_accumulate(ds, (int)nd, MPI_DOUBLE, dr, (int)nd, MPI_DOUBLE, prev, 0, (int)nd, MPI_DOUBLE,
                                MPI_PROD, win));
    MTEST_OK(MPI_Win_fence(0, win));
    int bad = 0;
    for (size_t i = 0; i < nd && bad < 5; i++) {
        double after_acc = 1.0 + (double)i;
        if (dr[i] != after_acc || dm[i] != after_acc * (double)i) {
            MTEST_CHECK(0, "big accumulate [%zu]: fetched %g, now %g", i, dr[i], dm[i]);
            bad++;
        }
    }
    /* MAXLOC on pairs: every rank offers (rank % 2, rank) at element 0 of rank 0 */
    struct {
        int v, i;
    } pr = {rank % 2, rank}, *pm = (void *)mem;
    MTEST_OK(MPI_Win_fence(0, win));
    if (rank == 0)
        pm->v = -1, pm->i = -1;
    MTEST_OK(MPI_Win_fence(0, win));
    MTEST_OK(MPI_Accumulate(&pr, 1, MPI_2INT, 0, 0, 1, MPI_2INT, MPI_MAXLOC, win));
    MTEST_OK(MPI_Win_fence(0, win));
    if (rank == 0)
        MTEST_CHECK(pm->v == (size > 1) && pm->i == (size > 1), "maxloc (%d, %d)", pm->v, pm->i);
    MTEST_OK(MPI_Win_free(&win));
    free(mem);
    free(src);
    free(dst);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    run(0);
    run(1);
    big();
    return mtest_finalize();
}
