/* Several non-blocking and persistent collectives of this family outstanding at once, of
 * different kinds and on two communicators, overlapped with point-to-point traffic and a
 * blocking collective, completed through Waitall and Test; persistent ones restarted with
 * new data each time. Results checked against the local reference (gtest.h). */
#include "gtest.h"

#define CNT 700

static int me, n;

static void fill(int *b, int blocks, int to_blocks, int iter)
{
    for (int i = 0; i < blocks; i++)
        for (int j = 0; j < CNT; j++)
            b[i * CNT + j] = to_blocks ? val(me, i, j + iter) : val(i, me, j + iter);
}

static int check(const int *b, int blocks, int (*expect)(int i, int j, int iter), int iter, const char *what)
{
    for (int i = 0; i < blocks; i++)
        for (int j = 0; j < CNT; j++)
            if (b[i * CNT + j] != expect(i, j, iter)) {
                MTEST_CHECK(0, "%s (iteration %d): block %d int %d is %d, expected %d", what, iter, i, j,
                            b[i * CNT + j], expect(i, j, iter));
                return 1;
            }
    return 0;
}

static int e_allgather(int i, int j, int iter) { return val(i, 0, j + iter); }
static int e_alltoall(int i, int j, int iter) { return val(i, me, j + iter); }
static int e_gather(int i, int j, int iter) { return val(i, 0, j + iter); }
static int e_scatter(int i, int j, int iter) { return val(n - 1, me, j + iter); }

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    me = mtest_rank, n = mtest_size;
    size_t all = (size_t)n * CNT * sizeof(int);
    int *ag_s = mtest_malloc(CNT * sizeof(int)), *ag_r = mtest_malloc(all);
    int *aa_s = mtest_malloc(all), *aa_r = mtest_malloc(all);
    int *g_s = mtest_malloc(CNT * sizeof(int)), *g_r = mtest_malloc(all);
    int *sc_s = mtest_malloc(all), *sc_r = mtest_malloc(CNT * sizeof(int));
    int small_s = me, *small_r = mtest_malloc((size_t)n * sizeof(int));
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);

    for (int iter = 0; iter < 4; iter++) {
        for (int j = 0; j < CNT; j++)
            ag_s[j] = val(me, 0, j + iter), g_s[j] = val(me, 0, j + iter);
        fill(aa_s, n, 1, iter);
        if (me == n - 1)
            fill(sc_s, n, 1, iter);
        MPI_Request r[5];
        MTEST_OK(MPI_Iallgather(ag_s, CNT, MPI_INT, ag_r, CNT, MPI_INT, MPI_COMM_WORLD, &r[0]));
        MTEST_OK(MPI_Ialltoall(aa_s, CNT, MPI_INT, aa_r, CNT, MPI_INT, dup, &r[1]));
        MTEST_OK(MPI_Igather(g_s, CNT, MPI_INT, g_r, CNT, MPI_INT, 0, MPI_COMM_WORLD, &r[2]));
        MTEST_OK(MPI_Iscatter(sc_s, CNT, MPI_INT, sc_r, CNT, MPI_INT, n - 1, dup, &r[3]));
        /* point-to-point and a blocking collective while they are in flight */
        int token = me * 10 + iter, got = -1;
        MPI_Sendrecv(&token, 1, MPI_INT, (me + 1) % n, 3, &got, 1, MPI_INT, (me - 1 + n) % n, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MTEST_CHECK(got == ((me - 1 + n) % n) * 10 + iter, "ring token %d", got);
        MTEST_OK(MPI_Allgather(&small_s, 1, MPI_INT, small_r, 1, MPI_INT, dup));
        for (int i = 0; i < n; i++)
            MTEST_CHECK(small_r[i] == i, "blocking allgather amid non-blocking ones: [%d] = %d", i, small_r[i]);
        MTEST_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r[4]));
        int flag = 0;
        while (!flag)
            MTEST_OK(MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Waitall(5, r, MPI_STATUSES_IGNORE));
        check(ag_r, n, e_allgather, iter, "iallgather");
        check(aa_r, n, e_alltoall, iter, "ialltoall");
        if (me == 0)
            check(g_r, n, e_gather, iter, "igather");
        check(sc_r, 1, e_scatter, iter, "iscatter");
    }

    /* persistent: two requests started together several times, new data before each start */
    MPI_Request p[2];
    MTEST_OK(MPI_Allgather_init(ag_s, CNT, MPI_INT, ag_r, CNT, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &p[0]));
    MTEST_OK(MPI_Alltoall_init(aa_s, CNT, MPI_INT, aa_r, CNT, MPI_INT, dup, MPI_INFO_NULL, &p[1]));
    for (int iter = 10; iter < 15; iter++) {
        for (int j = 0; j < CNT; j++)
            ag_s[j] = val(me, 0, j + iter);
        fill(aa_s, n, 1, iter);
        memset(ag_r, 0, all);
        memset(aa_r, 0, all);
        MTEST_OK(MPI_Startall(2, p));
        int token = iter, got = -1;
        MPI_Sendrecv(&token, 1, MPI_INT, (me + 1) % n, 4, &got, 1, MPI_INT, (me - 1 + n) % n, 4, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MTEST_OK(MPI_Waitall(2, p, MPI_STATUSES_IGNORE));
        MTEST_CHECK(p[0] != MPI_REQUEST_NULL && p[1] != MPI_REQUEST_NULL, "persistent requests freed by Waitall");
        check(ag_r, n, e_allgather, iter, "allgather_init");
        check(aa_r, n, e_alltoall, iter, "alltoall_init");
    }
    MPI_Request_free(&p[0]);
    MPI_Request_free(&p[1]);
    MPI_Comm_free(&dup);
    free(ag_s), free(ag_r), free(aa_s), free(aa_r), free(g_s), free(g_r), free(sc_s), free(sc_r), free(small_r);
    return mtest_finalize();
}
