/* Alltoall, Alltoallv, Alltoallw against a local reference: sizes 0, small and 256 KiB per
 * pair, contiguous and strided (non-contiguous) types on either side (per block in the
 * w form), MPI_IN_PLACE, irregular counts with zeros and out-of-order displacements
 * (bytes in the w form); blocking, non-blocking and persistent (gtest.h). */
#include "gtest.h"

enum { REGULAR, VFORM, WFORM };
static int me, n, in_place, form;
static lay_t S, R;

static int f_alltoall(int mode, MPI_Request *req)
{
    const void *sb = in_place ? MPI_IN_PLACE : S.buf;
    MPI_Comm w = MPI_COMM_WORLD;
    int sd[64], rd[64];
    MPI_Datatype sts[64], rts[64];
    lay_displs(&S, sd, form == WFORM);
    lay_displs(&R, rd, form == WFORM);
    for (int i = 0; i < n; i++)
        sts[i] = type_of(S.st[i]), rts[i] = type_of(R.st[i]);
    if (form == WFORM) {
        if (mode == BLOCKING)
            return MPI_Alltoallw(sb, S.cnt, sd, sts, R.buf, R.cnt, rd, rts, w);
        if (mode == NONBLOCKING)
            return MPI_Ialltoallw(sb, S.cnt, sd, sts, R.buf, R.cnt, rd, rts, w, req);
        return MPI_Alltoallw_init(sb, S.cnt, sd, sts, R.buf, R.cnt, rd, rts, w, MPI_INFO_NULL, req);
    }
    if (form == VFORM) {
        if (mode == BLOCKING)
            return MPI_Alltoallv(sb, S.cnt, sd, sts[0], R.buf, R.cnt, rd, rts[0], w);
        if (mode == NONBLOCKING)
            return MPI_Ialltoallv(sb, S.cnt, sd, sts[0], R.buf, R.cnt, rd, rts[0], w, req);
        return MPI_Alltoallv_init(sb, S.cnt, sd, sts[0], R.buf, R.cnt, rd, rts[0], w, MPI_INFO_NULL, req);
    }
    if (mode == BLOCKING)
        return MPI_Alltoall(sb, S.cnt[0], sts[0], R.buf, R.cnt[0], rts[0], w);
    if (mode == NONBLOCKING)
        return MPI_Ialltoall(sb, S.cnt[0], sts[0], R.buf, R.cnt[0], rts[0], w, req);
    return MPI_Alltoall_init(sb, S.cnt[0], sts[0], R.buf, R.cnt[0], rts[0], w, MPI_INFO_NULL, req);
}

static void reset(void)
{
    lay_set(&S, S.buf, me, 1);
    if (in_place)
        lay_set(&R, R.buf, me, 1); /* what goes out is read from the receive buffer */
    else
        lay_clear(&R);
}

/* Irregular counts of the pair (src, dst); symmetric when in place (one set of counts). */
static int pair_count(int src, int dst, int size)
{
    if (in_place)
        return (src + dst) % 3 == 1 ? 0 : size + (src ^ dst);
    return (src + 2 * dst) % 4 == 1 ? 0 : size + (src + dst) % 3;
}

static void one(int size, int ss, int rs, int mode)
{
    int sc[64], rc[64], sst[64], rst[64];
    for (int i = 0; i < n; i++) {
        sc[i] = form == REGULAR ? size : pair_count(me, i, size);
        rc[i] = form == REGULAR ? size : pair_count(i, me, size);
        /* w form: the strides alternate per block, differently on the two sides */
        sst[i] = form == WFORM ? 1 + (i + me) % 2 : ss;
        rst[i] = form == WFORM ? 1 + i % 2 : rs;
    }
    if (in_place) /* one buffer, described by the receive arguments */
        for (int i = 0; i < n; i++)
            sst[i] = rst[i];
    lay_make(&S, n, sc, sst, form != REGULAR);
    lay_make(&R, n, rc, rst, form != REGULAR);
    char what[160];
    snprintf(what, sizeof what, "alltoall%s size %d strides %d/%d %s%s",
             form == WFORM ? "w"
             : form        ? "v"
                           : "",
             size, ss, rs, mode_name[mode], in_place ? " in place" : "");
    run_mode(mode, f_alltoall, reset);
    lay_set(&R, R.exp, me, 0);
    lay_check(&R, what);
    if (!in_place) {
        lay_set(&S, S.exp, me, 1);
        lay_check(&S, what);
    }
    lay_free(&S);
    lay_free(&R);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    me = mtest_rank, n = mtest_size;
    for (form = 0; form < 3; form++) /* the w form has its own strides per block */
        each_case(form == WFORM ? 1 : 3, &in_place, one);
    return mtest_finalize();
}
