/*
 * Ping-pong of non-contiguous data (plain MPI, builds with any mpicc): a vector of
 * blocks of B bytes, one block every 2B bytes, on both sides, for messages of 64 KiB to
 * 16 MiB. It shows what an MPI does with strided rendezvous data: pack and unpack, or move
 * the pieces directly. Prints one JSON line per (block, size) on rank 0 and checks the
 * data of the first iteration.
 *
 *   vector [-b BLOCK[,BLOCK...]] [-m MIN:MAX] [-i ITERS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

static void fail(const char *what)
{
    fprintf(stderr, "vector: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static double pingpong(long block, long size, long iters, char *sbuf, char *rbuf)
{
    MPI_Datatype t;
    MPI_Type_vector((int)(size / block), (int)block, (int)(2 * block), MPI_BYTE, &t);
    MPI_Type_commit(&t);
    int peer = 1 - rank;
    for (long i = 0; i < 2 * size; i++)
        sbuf[i] = (char)(i * 7 + rank);
    memset(rbuf, 0, (size_t)(2 * size));
    double t0 = 0;
    long warm = iters / 10 + 1;
    MPI_Barrier(MPI_COMM_WORLD);
    for (long it = 0; it < warm + iters; it++) {
        if (it == warm)
            t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(sbuf, 1, t, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, 1, t, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, 1, t, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, 1, t, peer, 1, MPI_COMM_WORLD);
        }
        if (it == 0)
            for (long i = 0; i < 2 * size; i++) {
                char want = (i / block) % 2 ? 0 : (char)(i * 7 + peer);
                if (rbuf[i] != want)
                    fail("received data is wrong");
            }
    }
    double us = (MPI_Wtime() - t0) * 1e6 / (2.0 * (double)iters);
    MPI_Type_free(&t);
    return us;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *blocks = "64,1024,16384,131072";
    long min = 65536, max = 16 << 20, iters = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-b"))
            blocks = argv[i + 1];
        else if (!strcmp(argv[i], "-m") && sscanf(argv[i + 1], "%ld:%ld", &min, &max) == 2)
            ;
        else if (!strcmp(argv[i], "-i"))
            iters = atol(argv[i + 1]);
        else
            fail("usage: vector [-b BLOCK[,BLOCK...]] [-m MIN:MAX] [-i ITERS]");
    }
    if (n != 2 || min <= 0 || max < min)
        fail("needs 2 ranks and 0 < MIN <= MAX");
    char *sbuf = malloc((size_t)(2 * max)), *rbuf = malloc((size_t)(2 * max));
    if (!sbuf || !rbuf)
        fail("out of memory");
    char list[256];
    snprintf(list, sizeof list, "%s", blocks);
    for (char *b = strtok(list, ","); b; b = strtok(NULL, ",")) {
        long block = atol(b);
        if (block <= 0)
            fail("a block must be > 0 bytes");
        for (long size = min; size <= max; size *= 2) {
            if (size % block)
                continue;
            long it = iters > 0 ? iters : (long)(2e8 / (double)size) + 10;
            double us = pingpong(block, size, it, sbuf, rbuf);
            if (rank == 0)
                printf("{\"test\":\"vector\",\"block\":%ld,\"size\":%ld,\"iters\":%ld,\"lat_us\":%.2f,\"mbps\":%.1f}\n",
                       block, size, it, us, (double)size / us);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
