/* Ping-pong between ranks 0 and 1 from 8 B to 4 MiB, so both the eager path (small)
 * and the rendezvous path (large) are crossed. Every message is checked: the pattern
 * changes with the size, the iteration and the direction, so a stale or misplaced
 * buffer shows up. Other ranks only wait at the final barrier. */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SIZE 8
#define MAX_SIZE (4 << 20)

static unsigned char pattern(long i, long size, int iter, int from)
{
    return (unsigned char)(i * 31 + size + iter * 7 + from * 101);
}

static void fill(unsigned char *buf, long size, int iter, int from)
{
    for (long i = 0; i < size; i++)
        buf[i] = pattern(i, size, iter, from);
}

static int check(int rank, const unsigned char *buf, long size, int iter, int from, const MPI_Status *st)
{
    int count;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (count != size || st->MPI_SOURCE != from) {
        fprintf(stderr, "pingpong: rank %d: size %ld iteration %d: got %d bytes from rank %d, expected %ld from %d\n",
                rank, size, iter, count, st->MPI_SOURCE, size, from);
        return 1;
    }
    for (long i = 0; i < size; i++) {
        if (buf[i] != pattern(i, size, iter, from)) {
            fprintf(stderr, "pingpong: rank %d: size %ld iteration %d: byte %ld is 0x%02x, expected 0x%02x\n",
                    rank, size, iter, i, buf[i], pattern(i, size, iter, from));
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "pingpong: needs at least 2 ranks, got %d\n", size);
        MPI_Finalize();
        return 1;
    }

    int bad = 0;
    if (rank < 2) {
        int peer = 1 - rank;
        unsigned char *sbuf = malloc(MAX_SIZE), *rbuf = malloc(MAX_SIZE);
        if (sbuf == NULL || rbuf == NULL) {
            fprintf(stderr, "pingpong: rank %d: out of memory\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (rank == 0)
            printf("%10s %8s %12s\n", "bytes", "iters", "latency_us");
        for (long n = MIN_SIZE; n <= MAX_SIZE && !bad; n *= 2) {
            int iters = n <= 65536 ? 100 : 10;
            double t0 = MPI_Wtime();
            for (int it = 0; it < iters && !bad; it++) {
                MPI_Status st;
                MPI_Request req;
                fill(sbuf, n, it, rank);
                memset(rbuf, 0, (size_t)n);
                if (rank == 0) {
                    MPI_Send(sbuf, (int)n, MPI_BYTE, peer, it, MPI_COMM_WORLD);
                    MPI_Recv(rbuf, (int)n, MPI_BYTE, peer, it, MPI_COMM_WORLD, &st);
                } else {
                    /* The non-blocking calls on this side exercise the request path too. */
                    MPI_Irecv(rbuf, (int)n, MPI_BYTE, peer, it, MPI_COMM_WORLD, &req);
                    MPI_Wait(&req, &st);
                    MPI_Isend(sbuf, (int)n, MPI_BYTE, peer, it, MPI_COMM_WORLD, &req);
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                }
                bad = check(rank, rbuf, n, it, peer, &st);
                /* Both sides must agree to go on, or one would wait forever for a peer that stopped. */
                int peerbad = 0;
                MPI_Sendrecv(&bad, 1, MPI_INT, peer, 999, &peerbad, 1, MPI_INT, peer, 999, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                bad |= peerbad;
            }
            /* The timing includes filling and checking: it shows progress, it is not a benchmark. */
            double us = (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
            int shown = n == MIN_SIZE || n == 1024 || n == 65536 || n == (1 << 20) || n == MAX_SIZE;
            if (rank == 0 && !bad && shown)
                printf("%10ld %8d %12.2f\n", n, iters, us);
        }
        free(sbuf);
        free(rbuf);
    }

    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("pingpong: %s\n", anybad ? "FAILED" : "ok");
    MPI_Finalize();
    return anybad ? 1 : 0;
}
