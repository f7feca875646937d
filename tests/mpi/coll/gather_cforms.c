/* The large-count (_c) forms take MPI_Count counts and MPI_Aint displacements: every
 * collective of the family through them, blocking, MPI_I*_c and *_init_c, with irregular
 * counts; and Alltoallw from MPI_BOTTOM with absolute addresses (gtest.h for the data). */
#include "gtest.h"

#define MAXN 64

static int me, n;

static int check(const int *got, const int *exp, int len, const char *what)
{
    for (int i = 0; i < len; i++)
        if (got[i] != exp[i]) {
            MTEST_CHECK(0, "%s: int %d is %d, expected %d", what, i, got[i], exp[i]);
            return 1;
        }
    return 0;
}

/* Finish a call made in mode m: nothing (blocking), Wait (I*), or Start + Wait + free. */
static void finish(int m, MPI_Request *req)
{
    if (m == NONBLOCKING)
        MTEST_OK(MPI_Wait(req, MPI_STATUS_IGNORE));
    if (m == PERSISTENT) {
        MTEST_OK(MPI_Start(req));
        MTEST_OK(MPI_Wait(req, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Request_free(req));
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    me = mtest_rank, n = mtest_size;
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info ni = MPI_INFO_NULL;
    MPI_Count cnt[MAXN], scnt[MAXN], rcnt[MAXN];
    MPI_Aint dsp[MAXN], sdsp[MAXN], rdsp[MAXN];
    int sb[4 * MAXN * 8], rb[4 * MAXN * 8], exp[4 * MAXN * 8];
    int total = 0;
    for (int i = 0; i < n; i++) /* counts 0..3, blocks in reverse order with a gap */
        cnt[i] = irregular_count(i, 1) % 4;
    for (int k = n - 1; k >= 0; k--) {
        dsp[k] = total;
        total += (int)cnt[k] + 1;
    }
    MPI_Request req;
    for (int m = 0; m < NMODES; m++) {
        MPI_Request *rq = m == BLOCKING ? NULL : &req;
        int root = m % n;
        char what[64];

        /* Gather_c / Gatherv_c */
        for (int j = 0; j < 3; j++)
            sb[j] = val(me, root, j);
        for (int x = 0; x < n * 3; x++)
            rb[x] = SENT, exp[x] = SENT;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < 3; j++)
                exp[i * 3 + j] = val(i, root, j);
        if (m == BLOCKING)
            MTEST_OK(MPI_Gather_c(sb, 3, MPI_INT, rb, 3, MPI_INT, root, w));
        else if (m == NONBLOCKING)
            MTEST_OK(MPI_Igather_c(sb, 3, MPI_INT, rb, 3, MPI_INT, root, w, rq));
        else
            MTEST_OK(MPI_Gather_init_c(sb, 3, MPI_INT, rb, 3, MPI_INT, root, w, ni, rq));
        finish(m, rq);
        snprintf(what, sizeof what, "gather_c %s", mode_name[m]);
        if (me == root)
            check(rb, exp, n * 3, what);

        for (int x = 0; x < total; x++)
            rb[x] = SENT, exp[x] = SENT;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < cnt[i]; j++)
                exp[dsp[i] + j] = val(i, root, j);
        if (m == BLOCKING)
            MTEST_OK(MPI_Gatherv_c(sb, cnt[me], MPI_INT, rb, cnt, dsp, MPI_INT, root, w));
        else if (m == NONBLOCKING)
            MTEST_OK(MPI_Igatherv_c(sb, cnt[me], MPI_INT, rb, cnt, dsp, MPI_INT, root, w, rq));
        else
            MTEST_OK(MPI_Gatherv_init_c(sb, cnt[me], MPI_INT, rb, cnt, dsp, MPI_INT, root, w, ni, rq));
        finish(m, rq);
        snprintf(what, sizeof what, "gatherv_c %s", mode_name[m]);
        if (me == root)
            check(rb, exp, total, what);

        /* Scatter_c / Scatterv_c: the root's blocks as the gather results were laid out */
        for (int i = 0; i < n; i++)
            for (int j = 0; j < 3; j++)
                sb[i * 3 + j] = val(root, i, j);
        for (int j = 0; j < 4; j++)
            rb[j] = SENT, exp[j] = j < 3 ? val(root, me, j) : SENT;
        if (m == BLOCKING)
            MTEST_OK(MPI_Scatter_c(sb, 3, MPI_INT, rb, 3, MPI_INT, root, w));
        else if (m == NONBLOCKING)
            MTEST_OK(MPI_Iscatter_c(sb, 3, MPI_INT, rb, 3, MPI_INT, root, w, rq));
        else
            MTEST_OK(MPI_Scatter_init_c(sb, 3, MPI_INT, rb, 3, MPI_INT, root, w, ni, rq));
        finish(m, rq);
        snprintf(what, sizeof what, "scatter_c %s", mode_name[m]);
        check(rb, exp, 4, what);

        for (int i = 0; i < n; i++)
            for (int j = 0; j < cnt[i]; j++)
                sb[dsp[i] + j] = val(root, i, j);
        for (int j = 0; j < 4; j++)
            rb[j] = SENT, exp[j] = j < cnt[me] ? val(root, me, j) : SENT;
        if (m == BLOCKING)
            MTEST_OK(MPI_Scatterv_c(sb, cnt, dsp, MPI_INT, rb, cnt[me], MPI_INT, root, w));
        else if (m == NONBLOCKING)
            MTEST_OK(MPI_Iscatterv_c(sb, cnt, dsp, MPI_INT, rb, cnt[me], MPI_INT, root, w, rq));
        else
            MTEST_OK(MPI_Scatterv_init_c(sb, cnt, dsp, MPI_INT, rb, cnt[me], MPI_INT, root, w, ni, rq));
        finish(m, rq);
        snprintf(what, sizeof what, "scatterv_c %s", mode_name[m]);
        check(rb, exp, 4, what);

        /* Allgather_c / Allgatherv_c */
        for (int j = 0; j < 3; j++)
            sb[j] = val(me, 0, j);
        for (int x = 0; x < n * 3; x++)
            rb[x] = SENT, exp[x] = val(x / 3, 0, x % 3);
        if (m == BLOCKING)
            MTEST_OK(MPI_Allgather_c(sb, 3, MPI_INT, rb, 3, MPI_INT, w));
        else if (m == NONBLOCKING)
            MTEST_OK(MPI_Iallgather_c(sb, 3, MPI_INT, rb, 3, MPI_INT, w, rq));
        else
            MTEST_OK(MPI_Allgather_init_c(sb, 3, MPI_INT, rb, 3, MPI_INT, w, ni, rq));
        finish(m, rq);
        snprintf(what, sizeof what, "allgather_c %s", mode_name[m]);
        check(rb, exp, n * 3, what);

        for (int x = 0; x < total; x++)
            rb[x] = SENT, exp[x] = SENT;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < cnt[i]; j++)
                exp[dsp[i] + j] = val(i, 0, j);
        if (m == BLOCKING)
            MTEST_OK(MPI_Allgatherv_c(sb, cnt[me], MPI_INT, rb, cnt, dsp, MPI_INT, w));
        else if (m == NONBLOCKING)
            MTEST_OK(MPI_Iallgatherv_c(sb, cnt[me], MPI_INT, rb, cnt, dsp, MPI_INT, w, rq));
        else
            MTEST_OK(MPI_Allgatherv_init_c(sb, cnt[me], MPI_INT, rb, cnt, dsp, MPI_INT, w, ni, rq));
        finish(m, rq);
        snprintf(what, sizeof what, "allgatherv_c %s", mode_name[m]);
        check(rb, exp, total, what);

        /* Alltoall_c / Alltoallv_c / Alltoallw_c */
        for (int x = 0; x < n * 2; x++)
            sb[x] = val(me, x / 2, x % 2), rb[x] = SENT, exp[x] = val(x / 2, me, x % 2);
        if (m == BLOCKING)
            MTEST_OK(MPI_Alltoall_c(sb, 2, MPI_INT, rb, 2, MPI_INT, w));
        else if (m == NONBLOCKING)
            MTEST_OK(MPI_Ialltoall_c(sb, 2, MPI_INT, rb, 2, MPI_INT, w, rq));
        else
            MTEST_OK(MPI_Alltoall_init_c(sb, 2, MPI_INT, rb, 2, MPI_INT, w, ni, rq));
        finish(m, rq);
        snprintf(what, sizeof what, "alltoall_c %s", mode_name[m]);
        check(rb, exp, n * 2, what);

        /* pair (src, dst) moves (src + dst) % 3 ints; blocks in reverse order with gaps */
        int st = 0, rt = 0;
        for (int k = n - 1; k >= 0; k--) {
            scnt[k] = (me + k) % 3, rcnt[k] = (k + me) % 3;
            sdsp[k] = st, rdsp[k] = rt;
            st += (int)scnt[k] + 1, rt += (int)rcnt[k] + 1;
        }
        for (int x = 0; x < rt; x++)
            rb[x] = SENT, exp[x] = SENT;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < scnt[i]; j++)
                sb[sdsp[i] + j] = val(me, i, j);
            for (int j = 0; j < rcnt[i]; j++)
                exp[rdsp[i] + j] = val(i, me, j);
        }
        if (m == BLOCKING)
            MTEST_OK(MPI_Alltoallv_c(sb, scnt, sdsp, MPI_INT, rb, rcnt, rdsp, MPI_INT, w));
        else if (m == NONBLOCKING)
            MTEST_OK(MPI_Ialltoallv_c(sb, scnt, sdsp, MPI_INT, rb, rcnt, rdsp, MPI_INT, w, rq));
        else
            MTEST_OK(MPI_Alltoallv_init_c(sb, scnt, sdsp, MPI_INT, rb, rcnt, rdsp, MPI_INT, w, ni, rq));
        finish(m, rq);
        snprintf(what, sizeof what, "alltoallv_c %s", mode_name[m]);
        check(rb, exp, rt, what);

        /* w form from MPI_BOTTOM: displacements are absolute addresses */
        MPI_Datatype ty[MAXN];
        MPI_Aint sabs[MAXN], rabs[MAXN];
        for (int i = 0; i < n; i++) {
            ty[i] = MPI_INT;
            MPI_Get_address(&sb[sdsp[i]], &sabs[i]);
            MPI_Get_address(&rb[rdsp[i]], &rabs[i]);
        }
        for (int x = 0; x < rt; x++)
            rb[x] = SENT;
        if (m == BLOCKING)
            MTEST_OK(MPI_Alltoallw_c(MPI_BOTTOM, scnt, sabs, ty, MPI_BOTTOM, rcnt, rabs, ty, w));
        else if (m == NONBLOCKING)
            MTEST_OK(MPI_Ialltoallw_c(MPI_BOTTOM, scnt, sabs, ty, MPI_BOTTOM, rcnt, rabs, ty, w, rq));
        else
            MTEST_OK(MPI_Alltoallw_init_c(MPI_BOTTOM, scnt, sabs, ty, MPI_BOTTOM, rcnt, rabs, ty, w, ni, rq));
        finish(m, rq);
        snprintf(what, sizeof what, "alltoallw_c from MPI_BOTTOM %s", mode_name[m]);
        check(rb, exp, rt, what);
    }
    return mtest_finalize();
}
