/* Allgather and Allgatherv against a local reference: sizes 0, small and 256 KiB per rank,
 * contiguous and strided (non-contiguous) types on either side, MPI_IN_PLACE, irregular
 * counts with zeros and out-of-order displacements; blocking, non-blocking and
 * persistent (gtest.h). The testlist forces every algorithm. */
#include "gtest.h"

static int me, n, in_place, vform;
static lay_t S, R; /* this rank's block / the n blocks everyone receives */

static int f_allgather(int mode, MPI_Request *req)
{
    const void *sb = in_place ? MPI_IN_PLACE : S.buf;
    MPI_Datatype st = type_of(S.st[0]), rt = type_of(R.st[0]);
    MPI_Comm w = MPI_COMM_WORLD;
    int displs[64];
    lay_displs(&R, displs, 0);
    if (vform) {
        if (mode == BLOCKING)
            return MPI_Allgatherv(sb, S.cnt[0], st, R.buf, R.cnt, displs, rt, w);
        if (mode == NONBLOCKING)
            return MPI_Iallgatherv(sb, S.cnt[0], st, R.buf, R.cnt, displs, rt, w, req);
        return MPI_Allgatherv_init(sb, S.cnt[0], st, R.buf, R.cnt, displs, rt, w, MPI_INFO_NULL, req);
    }
    if (mode == BLOCKING)
        return MPI_Allgather(sb, S.cnt[0], st, R.buf, R.cnt[0], rt, w);
    if (mode == NONBLOCKING)
        return MPI_Iallgather(sb, S.cnt[0], st, R.buf, R.cnt[0], rt, w, req);
    return MPI_Allgather_init(sb, S.cnt[0], st, R.buf, R.cnt[0], rt, w, MPI_INFO_NULL, req);
}

static void reset(void)
{
    lay_clear(&S);
    lay_set_block(&S, S.buf, 0, me, 0);
    lay_clear(&R);
    if (in_place)
        lay_set_block(&R, R.buf, me, me, 0);
}

static void one(int size, int ss, int rs, int mode)
{
    int cnt[64], st[64], mine = vform ? irregular_count(me, size) : size;
    for (int i = 0; i < n; i++) {
        cnt[i] = vform ? irregular_count(i, size) : size;
        st[i] = rs;
    }
    lay_make(&R, n, cnt, st, vform);
    lay_make(&S, 1, &mine, &ss, 0);
    char what[160];
    snprintf(what, sizeof what, "allgather%s size %d strides %d/%d %s%s", vform ? "v" : "", size, ss, rs,
             mode_name[mode], in_place ? " in place" : "");
    run_mode(mode, f_allgather, reset);
    lay_set(&R, R.exp, 0, 0);
    lay_check(&R, what);
    lay_free(&S);
    lay_free(&R);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    me = mtest_rank, n = mtest_size;
    for (vform = 0; vform < 2; vform++)
        each_case(3, &in_place, one);
    return mtest_finalize();
}
