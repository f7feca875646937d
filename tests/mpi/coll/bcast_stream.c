/* Streams of back-to-back Bcasts and a forwarding chain, every call's data checked. A
 * root that only sends runs ahead of everyone, so the ranks below it find its messages
 * queued unexpected and forward them while behind: frames they send to peers on other
 * nodes may then be held and leave in bundles (core coalescing, RMPI_COALESCE_WAIT). Each
 * call carries its own pattern, so a held frame delivered late, twice, out of order or to
 * the wrong call shows as a mismatch. Sizes on both sides of the coalescing limit (2 KiB),
 * of the site tree's chunk (64 KiB) and of the eager limits. The chain: rank r receives
 * from r - 1 and forwards to r + 1 (one tag, so order is MPI's non-overtaking rule), small
 * messages with a large one every 16th, which must push the held small ones out first. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>

static const size_t sizes[] = {1, 8, 64, 1024, 2048, 2100, 16384, 65539, 300001};

static int calls_for(size_t bytes) { return bytes <= 2100 ? 3000 : bytes <= 16384 ? 300 : 20; }

static void stream(size_t bytes, int root, unsigned salt)
{
    char *b = mtest_malloc(bytes);
    int calls = calls_for(bytes);
    for (int i = 0; i < calls; i++) {
        unsigned seed = salt * 10007u + (unsigned)i;
        mtest_fill(b, bytes, mtest_rank == root ? seed : 0xdeadu);
        MTEST_OK(MPI_Bcast(b, (int)bytes, MPI_BYTE, root, MPI_COMM_WORLD));
        char what[80];
        snprintf(what, sizeof what, "bcast stream %zu B from %d, call %d", bytes, root, i);
        if (mtest_check_buf(b, bytes, seed, what))
            break; /* one report per stream is enough */
    }
    free(b);
}

static void chain(int msgs)
{
    int me = mtest_rank, n = mtest_size;
    const size_t big = 100000;
    char *b = mtest_malloc(big);
    for (int i = 0; i < msgs; i++) {
        size_t len = i % 16 == 15 ? big : (size_t)(1 + i % 64);
        unsigned seed = 5000u + (unsigned)i;
        if (me == 0) {
            mtest_fill(b, len, seed);
        } else {
            MPI_Status st;
            int got = -1;
            MTEST_OK(MPI_Recv(b, (int)big, MPI_BYTE, me - 1, 7, MPI_COMM_WORLD, &st));
            MPI_Get_count(&st, MPI_BYTE, &got);
            MTEST_CHECK(got == (int)len, "chain message %d at rank %d: %d bytes, expected %zu", i, me, got, len);
            char what[64];
            snprintf(what, sizeof what, "chain message %d at rank %d", i, me);
            if (got != (int)len || mtest_check_buf(b, len, seed, what))
                break;
        }
        if (me + 1 < n)
            MTEST_OK(MPI_Send(b, (int)len, MPI_BYTE, me + 1, 7, MPI_COMM_WORLD));
    }
    free(b);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    unsigned salt = 1;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        stream(sizes[i], 0, salt++);
        stream(sizes[i], mtest_size - 1, salt++);
    }
    chain(2000);
    return mtest_finalize();
}
