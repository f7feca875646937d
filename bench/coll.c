/*
 * Collective latency micro-benchmark (OSU style): Barrier, Bcast, Reduce, Allreduce,
 * Allgather and Alltoall over message sizes, every rank taking part; on request (-c) the
 * non-blocking Ibarrier, Ibcast, Ireduce, Iallreduce, Iallgather and Ialltoall, each call
 * followed by MPI_Wait (osu_ibcast's latency without the overlapped compute). Plain MPI only, so the
 * same source measures RailMPI, MPICH and Open MPI (bench/coll_compare.sh).
 *
 * Size: bytes per rank (Bcast/Reduce/Allreduce: the vector, of MPI_FLOAT for the
 * reductions with MPI_SUM, at least one float; Allgather/Alltoall: the block each rank
 * sends to each rank).
 * Latency: calls back to back, then a barrier; the figure is the slowest rank's mean time
 * per call, in microseconds. Calls per size scale with the size and are capped at about
 * a second of calls (estimated from the warm-up) so that a slow MPI still finishes. A
 * collective that fails (under MPI_ERRORS_RETURN) on its first call is skipped and
 * reported as such.
 * Output from rank 0: a table on stdout, then one JSON line per collective and size
 * ({"coll":"allreduce","size":8,"nranks":4,"lat_us":3.1}) and per skipped collective.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    BARRIER,
    BCAST,
    REDUCE,
    ALLREDUCE,
    ALLGATHER,
    ALLTOALL,
    IBARRIER,
    IBCAST,
    IREDUCE,
    IALLREDUCE,
    IALLGATHER,
    IALLTOALL,
    NCOLL
};
static const char *const names[NCOLL] = {"barrier",  "bcast",  "reduce",  "allreduce",  "allgather",  "alltoall",
                                         "ibarrier", "ibcast", "ireduce", "iallreduce", "iallgather", "ialltoall"};
#define NBLOCKING IBARRIER /* the default list; the I* forms (each call then MPI_Wait) on request */
#define MAX_SIZES 32

static int rank, nranks, root; /* root: of Bcast and Reduce (-r) */
static char *sbuf, *rbuf;

static int call(int coll, long size)
{
    int n = (int)size, nf = size < (long)sizeof(float) ? 1 : (int)(size / (long)sizeof(float));
    switch (coll) {
    case BARRIER: return MPI_Barrier(MPI_COMM_WORLD);
    case BCAST: return MPI_Bcast(sbuf, n, MPI_BYTE, root, MPI_COMM_WORLD);
    case REDUCE: return MPI_Reduce(sbuf, rbuf, nf, MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD);
    case ALLREDUCE: return MPI_Allreduce(sbuf, rbuf, nf, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    case ALLGATHER: return MPI_Allgather(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, MPI_COMM_WORLD);
    case ALLTOALL: return MPI_Alltoall(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, MPI_COMM_WORLD);
    default: break;
    }
    MPI_Request req;
    int rc = coll == IBARRIER     ? MPI_Ibarrier(MPI_COMM_WORLD, &req)
             : coll == IBCAST     ? MPI_Ibcast(sbuf, n, MPI_BYTE, root, MPI_COMM_WORLD, &req)
             : coll == IREDUCE    ? MPI_Ireduce(sbuf, rbuf, nf, MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD, &req)
             : coll == IALLREDUCE ? MPI_Iallreduce(sbuf, rbuf, nf, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req)
             : coll == IALLGATHER ? MPI_Iallgather(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, MPI_COMM_WORLD, &req)
                                  : MPI_Ialltoall(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, MPI_COMM_WORLD, &req);
    return rc != MPI_SUCCESS ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* Many calls for small sizes, a constant byte budget for large ones. */
static long iterations(long size, long fixed)
{
    if (fixed > 0)
        return fixed;
    long it = size <= 8192 ? 2000 : (64L << 20) / size;
    return it < 30 ? 30 : it;
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: coll [-m MIN:MAX | -s SIZE,SIZE...] [-i ITERS] [-r ROOT] [-c LIST]\n"
                        "  -m  sizes in bytes, MIN doubling up to MAX (default 8:1048576, MIN >= 1)\n"
                        "  -s  these sizes in bytes (each >= 1; reductions move at least one float)\n"
                        "  -i  timed calls per size (default: by size)\n"
                        "  -r  root of Bcast and Reduce (default 0)\n"
                        "  -c  comma list of barrier,bcast,reduce,allreduce,allgather,alltoall (default: these),\n"
                        "      ibarrier,ibcast,ireduce,iallreduce,iallgather,ialltoall (each call, then MPI_Wait)\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    long min = 8, max = 1L << 20, fixed = 0;
    const char *list = NULL; /* -s: explicit sizes */
    int want[NCOLL];
    for (int c = 0; c < NCOLL; c++)
        want[c] = c < NBLOCKING;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc) {
            if (sscanf(argv[++i], "%ld:%ld", &min, &max) != 2 || min < 1 || max < min) {
                usage();
                MPI_Finalize();
                return 2;
            }
        } else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
            list = argv[++i];
        } else if (!strcmp(argv[i], "-r") && i + 1 < argc) {
            root = atoi(argv[++i]);
            if (root < 0 || root >= nranks) {
                usage();
                MPI_Finalize();
                return 2;
            }
        } else if (!strcmp(argv[i], "-i") && i + 1 < argc) {
            fixed = strtol(argv[++i], NULL, 10);
        } else if (!strcmp(argv[i], "-c") && i + 1 < argc) {
            char *list = argv[++i];
            for (int c = 0; c < NCOLL; c++) {
                size_t l = strlen(names[c]);
                want[c] = 0;
                /* whole words only: "reduce" must not match inside "allreduce" */
                for (const char *p = list; (p = strstr(p, names[c])); p += l)
                    if ((p == list || p[-1] == ',') && (p[l] == ',' || p[l] == 0))
                        want[c] = 1;
            }
        } else {
            usage();
            MPI_Finalize();
            return 2;
        }
    }
    long sizes[MAX_SIZES];
    int nsizes = 0;
    if (list) {
        min = max = 0;
        for (char *p = (char *)list, *end; *p && nsizes < MAX_SIZES; p = *end ? end + 1 : end) {
            long v = strtol(p, &end, 10);
            if (end == p || v < 1 || (*end && *end != ',')) {
                usage();
                MPI_Finalize();
                return 2;
            }
            sizes[nsizes++] = v;
            min = min && min < v ? min : v;
            max = max > v ? max : v;
        }
    } else {
        for (long s = min; s <= max && nsizes < MAX_SIZES; s *= 2)
            sizes[nsizes++] = s;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    size_t bytes = (size_t)(max < 4 ? 4 : max) * (size_t)nranks;
    sbuf = malloc(bytes);
    rbuf = malloc(bytes);
    if (!sbuf || !rbuf) {
        fprintf(stderr, "coll: cannot allocate %zu bytes\n", 2 * bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 1, bytes);
    memset(rbuf, 0, bytes);

    static double lat[NCOLL][MAX_SIZES];
    char skipped[NCOLL][MPI_MAX_ERROR_STRING];
    for (int c = 0; c < NCOLL; c++) {
        skipped[c][0] = 0;
        if (!want[c])
            continue;
        /* the first call decides; every rank learns whether any rank failed */
        int rc = call(c, min), bad = rc != MPI_SUCCESS, anybad = 0;
        MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (anybad) {
            int len = 0;
            if (bad)
                MPI_Error_string(rc, skipped[c], &len);
            else
                snprintf(skipped[c], sizeof skipped[c], "failed on another rank");
            continue;
        }
        for (int k = 0; k < nsizes; k++) {
            int nodata = c == BARRIER || c == IBARRIER;
            long size = nodata ? 0 : sizes[k];
            if (nodata && k > 0) {
                lat[c][k] = lat[c][0];
                continue;
            }
            long it = iterations(size, fixed), warm = it / 10 + 1;
            double tw = MPI_Wtime();
            for (long i = 0; i < warm; i++)
                call(c, size);
            /* a slow MPI (spinning ranks on shared cores) gets fewer calls: about a second
             * per size; every rank must make the same number of calls */
            double per = (MPI_Wtime() - tw) / (double)warm, slowest = 0;
            MPI_Allreduce(&per, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            if (!fixed && slowest * (double)it > 1.0)
                it = (long)(1.0 / slowest) > 5 ? (long)(1.0 / slowest) : 5;
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (long i = 0; i < it; i++)
                call(c, size);
            double mine = (MPI_Wtime() - t0) / (double)it * 1e6, worst = 0;
            MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            lat[c][k] = worst;
        }
    }
    if (rank == 0) {
        printf("# coll: latency in us (slowest rank's mean), %d ranks\n%10s", nranks, "bytes");
        for (int c = 0; c < NCOLL; c++)
            if (want[c] && !skipped[c][0])
                printf(" %10s", names[c]);
        printf("\n");
        for (int k = 0; k < nsizes; k++) {
            printf("%10ld", sizes[k]);
            for (int c = 0; c < NCOLL; c++)
                if (want[c] && !skipped[c][0])
                    printf(" %10.2f", lat[c][k]);
            printf("\n");
        }
        for (int c = 0; c < NCOLL; c++)
            if (want[c] && skipped[c][0])
                printf("# %s skipped: the first call failed (%s)\n", names[c], skipped[c]);
        for (int c = 0; c < NCOLL; c++) {
            if (!want[c])
                continue;
            if (skipped[c][0]) {
                printf("{\"coll\":\"%s\",\"nranks\":%d,\"skipped\":\"", names[c], nranks);
                for (const char *p = skipped[c]; *p; p++)
                    if (*p != '"' && *p != '\\' && *p >= ' ')
                        putchar(*p);
                printf("\"}\n");
                continue;
            }
            for (int k = 0; k < (c == BARRIER || c == IBARRIER ? 1 : nsizes); k++)
                printf("{\"coll\":\"%s\",\"size\":%ld,\"nranks\":%d,\"lat_us\":%.3f}\n", names[c],
                       c == BARRIER || c == IBARRIER ? 0 : sizes[k], nranks, lat[c][k]);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
