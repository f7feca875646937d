/* Gather, Gatherv, Scatter, Scatterv against a local reference: every root, sizes 0, small
 * and 256 KiB per rank, contiguous and strided (non-contiguous) types on either side,
 * MPI_IN_PLACE at the root, irregular counts with zeros and out-of-order displacements
 * in the v forms; blocking, non-blocking and persistent (gtest.h). */
#include "gtest.h"

static int me, n, root, in_place, vform, scatter;
static lay_t S, R; /* the one block of a rank / the n blocks of the root */

static int f_gather(int mode, MPI_Request *req)
{
    const void *sb = in_place && me == root ? MPI_IN_PLACE : S.buf;
    MPI_Datatype st = type_of(S.st[0]), rt = type_of(R.st[0]);
    int displs[64];
    lay_displs(&R, displs, 0);
    if (vform) {
        if (mode == BLOCKING)
            return MPI_Gatherv(sb, S.cnt[0], st, R.buf, R.cnt, displs, rt, root, MPI_COMM_WORLD);
        if (mode == NONBLOCKING)
            return MPI_Igatherv(sb, S.cnt[0], st, R.buf, R.cnt, displs, rt, root, MPI_COMM_WORLD, req);
        return MPI_Gatherv_init(sb, S.cnt[0], st, R.buf, R.cnt, displs, rt, root, MPI_COMM_WORLD, MPI_INFO_NULL, req);
    }
    if (mode == BLOCKING)
        return MPI_Gather(sb, S.cnt[0], st, R.buf, R.cnt[0], rt, root, MPI_COMM_WORLD);
    if (mode == NONBLOCKING)
        return MPI_Igather(sb, S.cnt[0], st, R.buf, R.cnt[0], rt, root, MPI_COMM_WORLD, req);
    return MPI_Gather_init(sb, S.cnt[0], st, R.buf, R.cnt[0], rt, root, MPI_COMM_WORLD, MPI_INFO_NULL, req);
}

static void reset_gather(void)
{
    lay_clear(&S);
    lay_set_block(&S, S.buf, 0, me, root);
    lay_clear(&R);
    if (in_place)
        lay_set_block(&R, R.buf, root, root, root);
}

/* Scatter: S holds the root's n blocks, R a rank's one block. */
static int f_scatter(int mode, MPI_Request *req)
{
    void *rb = in_place && me == root ? MPI_IN_PLACE : R.buf;
    MPI_Datatype st = type_of(S.st[0]), rt = type_of(R.st[0]);
    int displs[64];
    lay_displs(&S, displs, 0);
    if (vform) {
        if (mode == BLOCKING)
            return MPI_Scatterv(S.buf, S.cnt, displs, st, rb, R.cnt[0], rt, root, MPI_COMM_WORLD);
        if (mode == NONBLOCKING)
            return MPI_Iscatterv(S.buf, S.cnt, displs, st, rb, R.cnt[0], rt, root, MPI_COMM_WORLD, req);
        return MPI_Scatterv_init(S.buf, S.cnt, displs, st, rb, R.cnt[0], rt, root, MPI_COMM_WORLD, MPI_INFO_NULL, req);
    }
    if (mode == BLOCKING)
        return MPI_Scatter(S.buf, S.cnt[0], st, rb, R.cnt[0], rt, root, MPI_COMM_WORLD);
    if (mode == NONBLOCKING)
        return MPI_Iscatter(S.buf, S.cnt[0], st, rb, R.cnt[0], rt, root, MPI_COMM_WORLD, req);
    return MPI_Scatter_init(S.buf, S.cnt[0], st, rb, R.cnt[0], rt, root, MPI_COMM_WORLD, MPI_INFO_NULL, req);
}

static void reset_scatter(void)
{
    lay_set(&S, S.buf, root, 1);
    lay_clear(&R);
}

static void one_root(int size, int ss, int rs, int mode)
{
    int many_cnt[64], many_st[64], one_cnt = vform ? irregular_count(me, size) : size;
    for (int i = 0; i < n; i++) {
        many_cnt[i] = vform ? irregular_count(i, size) : size;
        many_st[i] = scatter ? ss : rs;
    }
    int one_st = scatter ? rs : ss;
    lay_t *many = scatter ? &S : &R, *single = scatter ? &R : &S;
    lay_make(many, n, many_cnt, many_st, vform);
    lay_make(single, 1, &one_cnt, &one_st, 0);
    char what[160];
    snprintf(what, sizeof what, "%s%s size %d strides %d/%d root %d %s%s", scatter ? "scatter" : "gather",
             vform ? "v" : "", size, ss, rs, root, mode_name[mode], in_place ? " in place" : "");
    if (scatter) {
        run_mode(mode, f_scatter, reset_scatter);
        if (!(in_place && me == root)) {
            for (size_t x = 0; x < R.len; x++)
                R.exp[x] = SENT;
            lay_set_block(&R, R.exp, 0, root, me);
            lay_check(&R, what);
        }
        if (me == root) { /* the send buffer is left alone */
            lay_set(&S, S.exp, root, 1);
            lay_check(&S, what);
        }
    } else {
        run_mode(mode, f_gather, reset_gather);
        if (me == root) {
            lay_set(&R, R.exp, root, 0);
            lay_check(&R, what);
        }
    }
    lay_free(&S);
    lay_free(&R);
}

/* Every root for the small sizes, the first and the last for the large one. */
static void one(int size, int ss, int rs, int mode)
{
    for (root = 0; root < n; root++)
        if (size < sizes[2] || root == 0 || root == n - 1)
            one_root(size, ss, rs, mode);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    me = mtest_rank, n = mtest_size;
    for (scatter = 0; scatter < 2; scatter++)
        for (vform = 0; vform < 2; vform++)
            each_case(3, &in_place, one);
    return mtest_finalize();
}
