/* A fixed sequence of collective calls on MPI_COMM_WORLD, each result checked, so that the
 * algorithms the selection table chose can be read from RMPI_REPORT's "collective" lines
 * (coll/report.c) and matched by the caller: the testlist lines with RMPI_SITES and
 * tests/netns/collchoice.sh. Per class the sizes are (bytes per rank):
 *   barrier; bcast 8 and 131072; reduce 8 (sum of doubles); allreduce 8, 1048576 and
 *   4194304 (sum of doubles); allgather 8 per rank; alltoall 8 per rank; scan 8. */
#include "../mtest.h"

#include <stdlib.h>

static void bcast(size_t bytes)
{
    unsigned char *b = mtest_malloc(bytes);
    mtest_fill(b, bytes, mtest_rank == 0 ? 7u : 9u);
    MTEST_OK(MPI_Bcast(b, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD));
    mtest_check_buf(b, bytes, 7u, "bcast");
    free(b);
}

/* Element i of rank r is r + i: the sum over ranks is n * i + n(n-1)/2, exact in doubles. */
static void reduce(size_t bytes, int all)
{
    size_t count = bytes / sizeof(double);
    int n = mtest_size;
    double *in = mtest_malloc(bytes), *out = mtest_malloc(bytes);
    for (size_t i = 0; i < count; i++)
        in[i] = mtest_rank + (double)(i % 1024);
    if (all)
        MTEST_OK(MPI_Allreduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    else
        MTEST_OK(MPI_Reduce(in, out, (int)count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    if (all || mtest_rank == 0)
        for (size_t i = 0; i < count; i++)
            MTEST_CHECK(out[i] == n * (double)(i % 1024) + n * (n - 1) / 2.0, "%s of %zu B: element %zu is %g",
                        all ? "allreduce" : "reduce", bytes, i, out[i]);
    free(in);
    free(out);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int n = mtest_size, me = mtest_rank;
    MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    bcast(8);
    bcast(131072);
    reduce(8, 0);
    reduce(8, 1);
    reduce(1048576, 1);
    reduce(4194304, 1);
    long long *blk = mtest_malloc(sizeof(long long) * (size_t)n), *got = mtest_malloc(sizeof(long long) * (size_t)n);
    long long mine = 1000 + me;
    MTEST_OK(MPI_Allgather(&mine, 1, MPI_LONG_LONG, got, 1, MPI_LONG_LONG, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++)
        MTEST_CHECK(got[i] == 1000 + i, "allgather: block %d is %lld", i, got[i]);
    for (int i = 0; i < n; i++)
        blk[i] = 100LL * me + i;
    MTEST_OK(MPI_Alltoall(blk, 1, MPI_LONG_LONG, got, 1, MPI_LONG_LONG, MPI_COMM_WORLD));
    for (int i = 0; i < n; i++)
        MTEST_CHECK(got[i] == 100LL * i + me, "alltoall: block %d is %lld", i, got[i]);
    long long sum = 0;
    MTEST_OK(MPI_Scan(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
    MTEST_CHECK(sum == 1000LL * (me + 1) + (long long)me * (me + 1) / 2, "scan: %lld", sum);
    free(blk);
    free(got);
    return mtest_finalize();
}
