/*
 * Multi-pair message rate (seed infiniband-wan, Fig. 6; in the manner of OSU's
 * osu_mbw_mr): the first half of the ranks send to the second half, rank i to rank
 * i + n/2, every pair at once. Each sender posts a window of nonblocking sends, its
 * receiver a window of receives and a 4-byte ack per window. With the hosts placed in
 * blocks (mpiexec --host A:P,B:P) every pair crosses the link between A and B.
 * The aggregate rate is the messages of all pairs over the slowest sender's time.
 * -T SECONDS: each size runs until its measured time is at least that long (more windows
 * after the first -i, all ranks agreeing on the count), so a cell is not shorter than a
 * time slice of a loaded machine whatever the size, pair count or delay.
 * Plain MPI only, so the same source measures RailMPI, MPICH and Open MPI.
 * Rank 0 prints one JSON line per size:
 *   {"test":"mr","pairs":2,"size":8,"msg_s":123456.0,"mb_s":0.99}
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE (1L << 26)
#define TAG_DATA 1
#define TAG_ACK 2

/* "N" or "N:M" with nothing after; every rank parses the same argv, so every rank reaches
 * the same verdict. */
static int numbers(const char *v, long *a, long *b)
{
    char extra;
    return b ? sscanf(v, "%ld:%ld%c", a, b, &extra) == 2 : sscanf(v, "%ld%c", a, &extra) == 1;
}

static int parse(int argc, char **argv, long *lo, long *hi, long *iters, long *window, double *min_s)
{
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *o = argv[i], *v = argv[i + 1];
        if (!strcmp(o, "-m")) {
            if (!numbers(v, lo, hi) || *lo < 1 || *hi > MAX_SIZE || *lo > *hi)
                return -1;
        } else if (!strcmp(o, "-i")) {
            if (!numbers(v, iters, NULL) || *iters < 1)
                return -1;
        } else if (!strcmp(o, "-T")) {
            char extra;
            if (sscanf(v, "%lf%c", min_s, &extra) != 1 || !(*min_s >= 0 && *min_s <= 60))
                return -1;
        } else if (!strcmp(o, "-w")) {
            if (!numbers(v, window, NULL) || *window < 1 || *window > 1 << 14)
                return -1;
        } else {
            return -1;
        }
    }
    return argc % 2 ? 0 : -1;
}

static unsigned char pattern(long i, long size, int from)
{
    return (unsigned char)((i * 131 + size * 7 + from * 59 + 1) & 0xff);
}

/* One window: the sender's w sends against the receiver's w receives, then the receiver's
 * ack; with check, the receiver compares every byte with the pattern. */
static void window_once(unsigned char *buf, MPI_Request *req, MPI_Status *st, int w, long size, int sender, int peer,
                        int me, int check)
{
    int ack = 0;
    for (int k = 0; k < w; k++) {
        if (sender)
            MPI_Isend(buf, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[k]);
        else
            MPI_Irecv(buf + (size_t)k * (size_t)size, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[k]);
    }
    MPI_Waitall(w, req, st);
    if (sender)
        MPI_Recv(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
        MPI_Send(&ack, 1, MPI_INT, peer, TAG_ACK, MPI_COMM_WORLD);
    if (check && !sender)
        for (long k = 0; k < (long)w * size; k++)
            if (buf[k] != pattern(k % size, size, peer)) {
                fprintf(stderr, "mpair: rank %d: byte %ld of a %ld-byte message from rank %d is wrong\n", me, k % size,
                        size, peer);
                MPI_Abort(MPI_COMM_WORLD, 3);
            }
}

int main(int argc, char **argv)
{
    int me, n;
    long lo = 1, hi = 65536, iters = 20, window = 64;
    double min_s = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (parse(argc, argv, &lo, &hi, &iters, &window, &min_s) != 0 || n < 2 || n % 2) {
        if (me == 0)
            fprintf(stderr,
                    "usage: mpair [-m MIN:MAX] [-i WINDOWS] [-w WINDOW] [-T MIN_SECONDS] (an even number of ranks: "
                    "rank i sends to rank i + n/2)\n");
        MPI_Finalize();
        return 2;
    }
    int pairs = n / 2, sender = me < pairs, peer = sender ? me + pairs : me - pairs;
    unsigned char *buf = malloc((size_t)hi * (size_t)window);
    MPI_Request *req = malloc((size_t)window * sizeof *req);
    /* a real array: GCC's -Wstringop-overflow misreads MPICH's MPI_STATUSES_IGNORE */
    MPI_Status *st = malloc((size_t)window * sizeof *st);
    if (!buf || !req || !st) {
        fprintf(stderr, "mpair: rank %d: out of memory\n", me);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (long size = lo; size <= hi; size *= 2) {
        int w = (int)window;
        if (sender)
            for (long i = 0; i < size; i++)
                buf[i] = pattern(i, size, me);
        else
            memset(buf, 0xa5, (size_t)size * (size_t)w);
        window_once(buf, req, st, w, size, sender, peer, me, 1); /* warm-up, its data checked */
        /* Rounds of windows, each timed between a barrier and the senders' slowest end, until
         * the time summed is at least min_s: the first round has iters windows, the next as
         * many as the rate so far says fill the rest. */
        long done = 0, round = iters;
        double tmax = 0;
        while (round > 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (long it = 0; it < round; it++)
                window_once(buf, req, st, w, size, sender, peer, me, 0);
            double t = sender ? MPI_Wtime() - t0 : 0, tr;
            MPI_Allreduce(&t, &tr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            tmax += tr, done += round;
            double more = tmax < min_s && tmax > 0 ? (min_s - tmax) / (tmax / (double)done) : 0;
            round = more < 1 ? (tmax < min_s ? 1 : 0) : more > 1e7 ? 10000000L : (long)more + 1;
        }
        if (me == 0) {
            double msgs = (double)pairs * (double)done * (double)w;
            printf("{\"test\":\"mr\",\"pairs\":%d,\"size\":%ld,\"msg_s\":%.1f,\"mb_s\":%.2f}\n", pairs, size,
                   msgs / tmax, msgs * (double)size / tmax / 1e6);
            fflush(stdout);
        }
    }
    free(buf), free(req), free(st);
    MPI_Finalize();
    return 0;
}
