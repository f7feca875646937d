/*
 * Warm-up benchmark: is the first measurement of a run as fast as the same measurement
 * repeated? OSU-style runs report the first size right after MPI_Init; a library whose
 * first thousands of messages are slow (memory faulted in on first use, lazily built
 * state) shows it there and nowhere else. Plain MPI, so bench/warmup.sh builds the same
 * source with MPICH and Open MPI.
 *
 * warmup -t latency|bw|bcast|allreduce|allgather|alltoall|put|acc [-s SIZE] [-r REPEATS]
 * One test per process (the point is the state right after MPI_Init). The test runs
 * REPEATS times (default 6) with OSU 7's default iteration counts: latency 10000
 * ping-pongs after 1000 untimed, bw 100 windows of 64 Isends after 10, the collectives
 * 1000 calls after 200 (allgather/alltoall: SIZE bytes per block, at most 64 ranks), each
 * call timed alone and followed by a barrier; put and acc (one-sided, rank 0 to rank 1 on a
 * Win_allocate window made after MPI_Init, under lock_all): 10000 MPI_Put or MPI_Accumulate
 * (MPI_SUM of ints) each followed by MPI_Win_flush, after 1000, as osc.c's put_lat and
 * acc_lat. Output from rank 0, one JSON line: the first repeat, the median of the others,
 * and their ratio
 * ({"test":"bcast","size":1,"first":0.61,"steady":0.55,"ratio":1.11,"unit":"us"};
 * bw in MB/s, where the ratio is steady/first so that above 1 is always "first slower").
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LATENCY, BW, BCAST, ALLREDUCE, ALLGATHER, ALLTOALL, PUT, ACC, NTESTS };
static const char *const names[] = {"latency", "bw", "bcast", "allreduce", "allgather", "alltoall", "put", "acc"};
#define WINDOW 64

static int rank;
static char *sbuf, *rbuf;
static MPI_Win win; /* put, acc */

static double latency(long size)
{
    double t0 = 0;
    for (int i = 0; i < 11000; i++) {
        if (i == 1000)
            t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(sbuf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(rbuf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(rbuf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / 10000 / 2;
}

static double bw(long size)
{
    MPI_Request req[WINDOW];
    MPI_Status st[WINDOW];
    double t0 = 0;
    for (int i = 0; i < 110; i++) {
        if (i == 10)
            t0 = MPI_Wtime();
        if (rank == 0) {
            for (int w = 0; w < WINDOW; w++)
                MPI_Isend(sbuf + (size_t)w * (size_t)size, (int)size, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(WINDOW, req, st);
            MPI_Recv(rbuf, 4, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int w = 0; w < WINDOW; w++)
                MPI_Irecv(rbuf + (size_t)w * (size_t)size, (int)size, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req[w]);
            MPI_Waitall(WINDOW, req, st);
            MPI_Send(sbuf, 4, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        }
    }
    double t = MPI_Wtime() - t0;
    return (double)size * WINDOW * 100 / t / 1e6;
}

static double coll(int test, long size)
{
    double sum = 0;
    for (int i = 0; i < 1200; i++) {
        double t = MPI_Wtime();
        if (test == BCAST)
            MPI_Bcast(sbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
        else if (test == ALLGATHER)
            MPI_Allgather(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, MPI_COMM_WORLD);
        else if (test == ALLTOALL)
            MPI_Alltoall(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, MPI_COMM_WORLD);
        else
            MPI_Allreduce(sbuf, rbuf, (int)(size / (long)sizeof(float)), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        if (i >= 200)
            sum += MPI_Wtime() - t;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double avg = sum * 1e6 / 1000, max;
    MPI_Reduce(&avg, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return max;
}

/* Rank 0 puts or accumulates into rank 1's window, each operation flushed. */
static double onesided(int test, long size)
{
    double t0 = 0;
    int ints = (int)(size / (long)sizeof(int));
    for (int i = 0; rank == 0 && i < 11000; i++) {
        if (i == 1000)
            t0 = MPI_Wtime();
        if (test == PUT)
            MPI_Put(sbuf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
        else
            MPI_Accumulate(sbuf, ints, MPI_INT, 1, 0, ints, MPI_INT, MPI_SUM, win);
        MPI_Win_flush(1, win);
    }
    double us = (MPI_Wtime() - t0) * 1e6 / 10000;
    MPI_Barrier(MPI_COMM_WORLD);
    return us;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int test = -1, reps = 6;
    long size = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-t")) {
            for (int k = 0; k < NTESTS; k++)
                if (!strcmp(argv[i + 1], names[k]))
                    test = k;
        } else if (!strcmp(argv[i], "-s"))
            size = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "-r"))
            reps = atoi(argv[i + 1]);
    }
    if (test < 0 || reps < 2 || reps > 64 || size < 0 || size > (1L << 22) || (test == ACC && size % 4)) {
        fprintf(stderr,
                "usage: warmup -t latency|bw|bcast|allreduce|allgather|alltoall|put|acc [-s SIZE<=4M, acc: of ints]"
                " [-r REPEATS 2..64]\n");
        return 2;
    }
    if (!size)
        size = test == ALLREDUCE || test == PUT || test == ACC ? 8 : 1;
    MPI_Init(&argc, &argv);
    int n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n < 2 || n > WINDOW) {
        if (!rank)
            fprintf(stderr, "warmup needs 2 to %d ranks\n", WINDOW);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t len = (size_t)size * WINDOW + 64;
    sbuf = malloc(len);
    rbuf = malloc(len);
    if (!sbuf || !rbuf)
        MPI_Abort(MPI_COMM_WORLD, 3);
    memset(sbuf, 1, len); /* the user's pages are touched: only the library's state is cold */
    memset(rbuf, 0, len);
    if (test == PUT || test == ACC) {
        char *base;
        MPI_Win_allocate((MPI_Aint)size, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        MPI_Win_lock_all(0, win);
    }
    double v[64];
    for (int r = 0; r < reps; r++)
        v[r] = test == LATENCY ? latency(size)
               : test == BW    ? bw(size)
               : test >= PUT   ? onesided(test, size)
                               : coll(test, size);
    if (test == PUT || test == ACC) {
        MPI_Win_unlock_all(win);
        MPI_Win_free(&win);
    }
    if (rank == 0) {
        double first = v[0];
        qsort(v + 1, (size_t)reps - 1, sizeof *v, cmp);
        double steady = reps % 2 ? (v[reps / 2] + v[reps / 2 + 1]) / 2 : v[reps / 2];
        double ratio = test == BW ? steady / first : first / steady;
        printf(
            "{\"test\":\"%s\",\"size\":%ld,\"nranks\":%d,\"first\":%.3f,\"steady\":%.3f,\"ratio\":%.2f,\"unit\":\"%s\"}\n",
            names[test], size, n, first, steady, ratio, test == BW ? "MB/s" : "us");
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
