/* The large-count (_c) forms of the collectives, blocking, I* and *_init, each checked
 * on a small vector: they share the int forms' builders, so this checks the bindings. */
#include "mtest.h"

#include <string.h>

#define N 5

static MPI_Request req;

/* run the request handed out by an I* or *_init call */
static void complete(int persistent)
{
    if (persistent) {
        MTEST_OK(MPI_Start(&req));
        MTEST_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Request_free(&req));
    } else {
        MTEST_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank, n = mtest_size;
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info in = MPI_INFO_NULL;
    long long s[N * 64], r[N * 64];
    MPI_Count counts[64];
    for (int i = 0; i < n; i++)
        counts[i] = N;
    for (int flavour = 0; flavour < 3; flavour++) {
        for (int i = 0; i < N * n; i++)
            s[i] = me * 100 + i + flavour;
            /* element i summed over ranks 0..hi */
#define SUM(i) ((long long)n * (n - 1) / 2 * 100 + (long long)n * ((i) + flavour))
#define PREFIX(i, hi) ((long long)(hi) * ((hi) + 1) / 2 * 100 + (long long)((hi) + 1) * ((i) + flavour))

        memset(r, 0, sizeof r);
        if (me == 0)
            memcpy(r, s, sizeof s);
        if (flavour == 0)
            MTEST_OK(MPI_Bcast_c(r, N, MPI_LONG_LONG, 0, w));
        else if (flavour == 1)
            MTEST_OK(MPI_Ibcast_c(r, N, MPI_LONG_LONG, 0, w, &req)), complete(0);
        else
            MTEST_OK(MPI_Bcast_init_c(r, N, MPI_LONG_LONG, 0, w, in, &req)), complete(1);
        for (int i = 0; i < N; i++)
            MTEST_CHECK(r[i] == i + flavour, "bcast_c flavour %d [%d] = %lld", flavour, i, r[i]);

        memset(r, 0, sizeof r);
        if (flavour == 0)
            MTEST_OK(MPI_Reduce_c(s, r, N, MPI_LONG_LONG, MPI_SUM, n - 1, w));
        else if (flavour == 1)
            MTEST_OK(MPI_Ireduce_c(s, r, N, MPI_LONG_LONG, MPI_SUM, n - 1, w, &req)), complete(0);
        else
            MTEST_OK(MPI_Reduce_init_c(s, r, N, MPI_LONG_LONG, MPI_SUM, n - 1, w, in, &req)), complete(1);
        for (int i = 0; me == n - 1 && i < N; i++)
            MTEST_CHECK(r[i] == SUM(i), "reduce_c flavour %d [%d] = %lld", flavour, i, r[i]);

        memset(r, 0, sizeof r);
        if (flavour == 0)
            MTEST_OK(MPI_Allreduce_c(s, r, N, MPI_LONG_LONG, MPI_SUM, w));
        else if (flavour == 1)
            MTEST_OK(MPI_Iallreduce_c(s, r, N, MPI_LONG_LONG, MPI_SUM, w, &req)), complete(0);
        else
            MTEST_OK(MPI_Allreduce_init_c(s, r, N, MPI_LONG_LONG, MPI_SUM, w, in, &req)), complete(1);
        for (int i = 0; i < N; i++)
            MTEST_CHECK(r[i] == SUM(i), "allreduce_c flavour %d [%d] = %lld", flavour, i, r[i]);

        memset(r, 0, sizeof r);
        if (flavour == 0)
            MTEST_OK(MPI_Scan_c(s, r, N, MPI_LONG_LONG, MPI_SUM, w));
        else if (flavour == 1)
            MTEST_OK(MPI_Iscan_c(s, r, N, MPI_LONG_LONG, MPI_SUM, w, &req)), complete(0);
        else
            MTEST_OK(MPI_Scan_init_c(s, r, N, MPI_LONG_LONG, MPI_SUM, w, in, &req)), complete(1);
        for (int i = 0; i < N; i++)
            MTEST_CHECK(r[i] == PREFIX(i, me), "scan_c flavour %d [%d] = %lld", flavour, i, r[i]);

        memset(r, 0, sizeof r);
        if (flavour == 0)
            MTEST_OK(MPI_Exscan_c(s, r, N, MPI_LONG_LONG, MPI_SUM, w));
        else if (flavour == 1)
            MTEST_OK(MPI_Iexscan_c(s, r, N, MPI_LONG_LONG, MPI_SUM, w, &req)), complete(0);
        else
            MTEST_OK(MPI_Exscan_init_c(s, r, N, MPI_LONG_LONG, MPI_SUM, w, in, &req)), complete(1);
        for (int i = 0; me > 0 && i < N; i++)
            MTEST_CHECK(r[i] == PREFIX(i, me - 1), "exscan_c flavour %d [%d] = %lld", flavour, i, r[i]);

        memset(r, 0, sizeof r);
        if (flavour == 0)
            MTEST_OK(MPI_Reduce_scatter_c(s, r, counts, MPI_LONG_LONG, MPI_SUM, w));
        else if (flavour == 1)
            MTEST_OK(MPI_Ireduce_scatter_c(s, r, counts, MPI_LONG_LONG, MPI_SUM, w, &req)), complete(0);
        else
            MTEST_OK(MPI_Reduce_scatter_init_c(s, r, counts, MPI_LONG_LONG, MPI_SUM, w, in, &req)), complete(1);
        for (int i = 0; i < N; i++)
            MTEST_CHECK(r[i] == SUM(me * N + i), "reduce_scatter_c flavour %d [%d] = %lld", flavour, i, r[i]);

        memset(r, 0, sizeof r);
        if (flavour == 0)
            MTEST_OK(MPI_Reduce_scatter_block_c(s, r, N, MPI_LONG_LONG, MPI_SUM, w));
        else if (flavour == 1)
            MTEST_OK(MPI_Ireduce_scatter_block_c(s, r, N, MPI_LONG_LONG, MPI_SUM, w, &req)), complete(0);
        else
            MTEST_OK(MPI_Reduce_scatter_block_init_c(s, r, N, MPI_LONG_LONG, MPI_SUM, w, in, &req)), complete(1);
        for (int i = 0; i < N; i++)
            MTEST_CHECK(r[i] == SUM(me * N + i), "reduce_scatter_block_c flavour %d [%d] = %lld", flavour, i, r[i]);
    }
    return mtest_finalize();
}
