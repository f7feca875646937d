/*
 * One-sided micro-benchmark: put and get latency and bandwidth, accumulate, fetch-and-op
 * and compare-and-swap, in passive (lock_all + flush, or lock/unlock per operation) and
 * active (fence) target modes, on a chosen window flavor. Plain MPI only, so the same
 * source measures RailMPI, MPICH and Open MPI (bench/osc_compare.sh).
 *
 * Rank 0 is the origin, rank 1 the target (it only synchronises). Latency: operations
 * back to back, each completed before the next (flush, unlock or fence), mean time per
 * operation in microseconds. Bandwidth: a window of 64 operations then one flush, in MB/s
 * (10^6 bytes). The number of operations per size is capped at about 0.2 s of them
 * (estimated from a warm-up) so a run stays short.
 *
 *   osc [-m MIN:MAX | -s S1,S2,...] [-t LIST] [-w allocate|create|create_mem|dynamic|shared] [-n N] [-b S] [-i S]
 *   create_mem: Win_create over memory from MPI_Alloc_mem (the MPI standard's advice for
 *   one-sided memory), create: over malloc'd memory.
 *   tests: put_lat, get_lat, put_bw, get_bw, acc_lat (MPI_SUM of MPI_INT), fop_lat
 *   (MPI_SUM of one long), cas_lat (one long), put_lock (lock/unlock per put),
 *   put_fence (a fence per put); -n N: exactly N operations (latency) or windows
 *   (bandwidth) per size after a warm-up of 20, for instruction counts (callgrind
 *   --toggle-collect=MPI_Put: instructions per call, bench/README.md); -b S: the target
 *   computes S seconds outside MPI (no MPI call) from the start of every run, warm-up
 *   included, so passive-target tests show whether operations progress without it
 *   (a progress thread: RMPI_ASYNC_PROGRESS, MPICH_ASYNC_PROGRESS) or wait for it;
 *   -i S: no test, every rank sleeps S seconds outside MPI with the window created (the
 *   CPU an idle progress thread costs: `time` the job)
 * Output from rank 0: a table on stdout, then one JSON line per test and size
 * ({"test":"put_lat","size":8,"value":0.1,"unit":"us","flavor":"allocate"}).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PUT_LAT, GET_LAT, PUT_BW, GET_BW, ACC_LAT, FOP_LAT, CAS_LAT, PUT_LOCK, PUT_FENCE, NTEST };
static const char *const names[NTEST] = {"put_lat", "get_lat", "put_bw",   "get_bw",   "acc_lat",
                                         "fop_lat", "cas_lat", "put_lock", "put_fence"};
#define MAX_SIZES 32
#define BW_WINDOW 64

static int rank;
static char *obuf, *tbuf;
static MPI_Win win;
static MPI_Aint tdisp; /* dynamic windows: the target's address */
static double busy;    /* -b: seconds the target computes outside MPI in each run */
static double idle;    /* -i: seconds every rank sleeps outside MPI instead of the tests */

static int sized(int t)
{
    return t == PUT_LAT || t == GET_LAT || t == PUT_BW || t == GET_BW || t == ACC_LAT || t == PUT_LOCK ||
           t == PUT_FENCE;
}

/* n operations of test t with size bytes, as rank 0; returns seconds. Rank 1 takes part
 * in the fences only. */
static double run(int t, long size, long n)
{
    int cnt = (int)size;
    long one = 1, cmp = 0, res = 0;
    double t0 = MPI_Wtime();
    if (t == PUT_FENCE) {
        for (long i = 0; i < n; i++) {
            if (rank == 0)
                MPI_Put(obuf, cnt, MPI_BYTE, 1, tdisp, cnt, MPI_BYTE, win);
            MPI_Win_fence(0, win);
        }
        return MPI_Wtime() - t0;
    }
    if (rank != 0) {
        /* a loop the compiler keeps, reading the clock and nothing of MPI's */
        volatile double x = 1;
        while (MPI_Wtime() - t0 < busy)
            for (int k = 0; k < 1000; k++)
                x = x * 1.0000001 + 1e-9;
        return 0;
    }
    if (t == PUT_LOCK) {
        for (long i = 0; i < n; i++) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            MPI_Put(obuf, cnt, MPI_BYTE, 1, tdisp, cnt, MPI_BYTE, win);
            MPI_Win_unlock(1, win);
        }
        return MPI_Wtime() - t0;
    }
    MPI_Win_lock_all(0, win);
    t0 = MPI_Wtime();
    for (long i = 0; i < n; i++) {
        switch (t) {
        case PUT_LAT: MPI_Put(obuf, cnt, MPI_BYTE, 1, tdisp, cnt, MPI_BYTE, win); break;
        case GET_LAT: MPI_Get(obuf, cnt, MPI_BYTE, 1, tdisp, cnt, MPI_BYTE, win); break;
        case ACC_LAT: MPI_Accumulate(obuf, cnt / 4, MPI_INT, 1, tdisp, cnt / 4, MPI_INT, MPI_SUM, win); break;
        case FOP_LAT: MPI_Fetch_and_op(&one, &res, MPI_LONG, 1, tdisp, MPI_SUM, win); break;
        case CAS_LAT: MPI_Compare_and_swap(&one, &cmp, &res, MPI_LONG, 1, tdisp, win); break;
        default: /* bandwidth: a window of operations, one flush */
            for (int k = 0; k < BW_WINDOW; k++)
                if (t == PUT_BW)
                    MPI_Put(obuf, cnt, MPI_BYTE, 1, tdisp, cnt, MPI_BYTE, win);
                else
                    MPI_Get(obuf, cnt, MPI_BYTE, 1, tdisp, cnt, MPI_BYTE, win);
        }
        MPI_Win_flush(1, win);
    }
    double dt = MPI_Wtime() - t0;
    MPI_Win_unlock_all(win);
    return dt;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    long sizes[MAX_SIZES], lo = 8, hi = 1 << 20;
    int nsizes = 0, want[NTEST];
    long fixed_n = 0;
    const char *flavor = "allocate";
    for (int t = 0; t < NTEST; t++)
        want[t] = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc && sscanf(argv[i + 1], "%ld:%ld", &lo, &hi) == 2)
            i++;
        else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
            for (char *p = strtok(argv[++i], ","); p && nsizes < MAX_SIZES; p = strtok(NULL, ","))
                sizes[nsizes++] = atol(p);
        } else if (!strcmp(argv[i], "-t") && i + 1 < argc) {
            for (int t = 0; t < NTEST; t++)
                want[t] = 0;
            for (char *p = strtok(argv[++i], ","); p; p = strtok(NULL, ","))
                for (int t = 0; t < NTEST; t++)
                    if (!strcmp(p, names[t]))
                        want[t] = 1;
        } else if (!strcmp(argv[i], "-w") && i + 1 < argc)
            flavor = argv[++i];
        else if (!strcmp(argv[i], "-n") && i + 1 < argc && (fixed_n = atol(argv[i + 1])) > 0)
            i++;
        else if (!strcmp(argv[i], "-b") && i + 1 < argc && (busy = atof(argv[i + 1])) >= 0)
            i++;
        else if (!strcmp(argv[i], "-i") && i + 1 < argc && (idle = atof(argv[i + 1])) >= 0)
            i++;
        else {
            if (rank == 0)
                fprintf(
                    stderr,
                    "usage: osc [-m MIN:MAX | -s S1,S2,...] [-t TESTS] [-w allocate|create|create_mem|dynamic|shared] "
                    "[-n N] "
                    "[-b SECONDS] [-i SECONDS]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (strcmp(flavor, "allocate") && strcmp(flavor, "create") && strcmp(flavor, "create_mem") &&
        strcmp(flavor, "dynamic") && strcmp(flavor, "shared")) {
        if (rank == 0)
            fprintf(stderr, "osc: unknown window flavor '%s' (allocate, create, create_mem, dynamic or shared)\n",
                    flavor);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (nranks != 2) {
        if (rank == 0)
            fprintf(stderr, "osc: run with 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (!nsizes)
        for (long s = lo; s <= hi && nsizes < MAX_SIZES; s *= 2)
            sizes[nsizes++] = s;
    long maxsize = 8;
    for (int i = 0; i < nsizes; i++)
        maxsize = sizes[i] > maxsize ? sizes[i] : maxsize;
    obuf = malloc((size_t)maxsize);
    memset(obuf, 1, (size_t)maxsize);
    MPI_Aint wbytes = (MPI_Aint)maxsize;
    if (!strcmp(flavor, "allocate"))
        MPI_Win_allocate(wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &tbuf, &win);
    else if (!strcmp(flavor, "shared")) /* both ranks on one node: the target's part, addressed from 0 */
        MPI_Win_allocate_shared(wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &tbuf, &win);
    else if (!strcmp(flavor, "create")) {
        tbuf = malloc((size_t)wbytes);
        MPI_Win_create(tbuf, wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else if (!strcmp(flavor, "create_mem")) {
        MPI_Alloc_mem(wbytes, MPI_INFO_NULL, &tbuf);
        MPI_Win_create(tbuf, wbytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    } else {
        tbuf = malloc((size_t)wbytes);
        MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        MPI_Win_attach(win, tbuf, wbytes);
        MPI_Aint a;
        MPI_Get_address(tbuf, &a);
        MPI_Bcast(&a, 1, MPI_AINT, 1, MPI_COMM_WORLD);
        tdisp = a;
    }
    memset(tbuf, 0, (size_t)wbytes);
    MPI_Win_fence(0, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    if (idle > 0) {
        struct timespec ts = {(time_t)idle, (long)((idle - (double)(time_t)idle) * 1e9)};
        nanosleep(&ts, NULL);
        for (int t = 0; t < NTEST; t++)
            want[t] = 0;
    }

    if (rank == 0)
        printf("# one-sided, window flavor %s, origin rank 0, target rank 1\n# %-10s %10s %12s\n", flavor, "test",
               "bytes", "value");
    for (int t = 0; t < NTEST; t++) {
        if (!want[t])
            continue;
        for (int si = 0; si < (sized(t) ? nsizes : 1); si++) {
            long size = sized(t) ? sizes[si] : 8;
            if (t == ACC_LAT && size < 4)
                continue;
            /* warm-up, then as many operations as fit in about 0.2 s (rank 0 decides) */
            MPI_Barrier(MPI_COMM_WORLD);
            if (t == PUT_FENCE) /* the epoch stays open from fence to fence */
                MPI_Win_fence(0, win);
            double w = run(t, size, 20);
            long n = w > 0 ? (long)(0.2 / (w / 20)) : 0;
            n = fixed_n ? fixed_n : n < 10 ? 10 : n > 100000 ? 100000 : n;
            MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            double dt = run(t, size, n);
            if (t == PUT_FENCE)
                MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
            if (rank != 0)
                continue;
            int bw = t == PUT_BW || t == GET_BW;
            double v = bw ? (double)size * BW_WINDOW * n / dt / 1e6 : dt / n * 1e6;
            printf("  %-10s %10ld %12.3f %s\n", names[t], size, v, bw ? "MB/s" : "us");
            printf("{\"test\":\"%s\",\"size\":%ld,\"value\":%.4f,\"unit\":\"%s\",\"flavor\":\"%s\"}\n", names[t], size,
                   v, bw ? "MB/s" : "us", flavor);
            fflush(stdout);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(flavor, "dynamic"))
        MPI_Win_detach(win, tbuf);
    MPI_Win_free(&win);
    if (!strcmp(flavor, "create") || !strcmp(flavor, "dynamic"))
        free(tbuf);
    if (!strcmp(flavor, "create_mem"))
        MPI_Free_mem(tbuf);
    free(obuf);
    MPI_Finalize();
    return 0;
}
