/*
 * Point-to-point micro-benchmark between ranks 0 and 1, in the manner of the OSU
 * benchmarks: latency (ping-pong), bw (windowed one-way) and bibw (windowed, both
 * directions); on request (-t stream) blocking MPI_Send back to back against MPI_Recv one
 * at a time, no receive posted ahead: the sender runs ahead and the messages arrive
 * unexpected, as at a Gather's root or any consumer of a producer (us per message). Plain
 * MPI only, so the same source measures RailMPI, MPICH and Open MPI.
 * Rank 0 prints one JSON line per test and size; ranks >= 2 only wait at a barrier.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mpi.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { TEST_LATENCY = 1, TEST_BW = 2, TEST_BIBW = 4, TEST_STREAM = 8 };

/* Small messages are timed over many iterations; large ones are bandwidth bound, so fewer do. */
#define SMALL_LIMIT 8192
#define MAX_SIZE (1L << 30)
#define TAG_DATA 1
#define TAG_ACK 2

struct options {
    int tests;
    long min_size;
    long max_size;
    long iters;   /* 0: scale with size */
    long warmup;  /* -1: scale with iterations */
    int window;
};

static int world_rank;
/* Ranks 0 and 1 only, so their per-size barrier never waits for the idle ranks. */
static MPI_Comm pair = MPI_COMM_NULL;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: pt2pt [-t latency|bw|bibw|all|stream] [-m MIN:MAX] [-i ITERS] [-x WARMUP] [-w WINDOW]\n"
            "  -t  test to run (default all: latency, bw, bibw)\n"
            "  -m  message sizes in bytes, MIN doubling up to MAX (default 1:4194304; MIN may be 0)\n"
            "  -i  timed iterations per size; for bw/bibw, windows per size (default: by size)\n"
            "  -x  untimed warm-up iterations per size (default: a tenth of -i, at least 1)\n"
            "  -w  messages in flight per window for bw/bibw (default 64)\n"
            "Runs between ranks 0 and 1; prints one JSON line per test and size on rank 0.\n");
}

/* Every rank parses the same argv, so every rank reaches the same verdict without talking. */
static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    o->tests = TEST_LATENCY | TEST_BW | TEST_BIBW;
    o->min_size = 1;
    o->max_size = 4194304;
    o->iters = 0;
    o->warmup = -1;
    o->window = 64;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return 1;
        if (a[0] != '-' || a[1] == '\0' || a[2] != '\0' || i + 1 >= argc)
            return -1;
        const char *v = argv[++i];
        long n;
        switch (a[1]) {
        case 't':
            if (strcmp(v, "latency") == 0) o->tests = TEST_LATENCY;
            else if (strcmp(v, "bw") == 0) o->tests = TEST_BW;
            else if (strcmp(v, "bibw") == 0) o->tests = TEST_BIBW;
            else if (strcmp(v, "all") == 0) o->tests = TEST_LATENCY | TEST_BW | TEST_BIBW;
            else if (strcmp(v, "stream") == 0) o->tests = TEST_STREAM;
            else return -1;
            break;
        case 'm': {
            char buf[64];
            if (strlen(v) >= sizeof buf)
                return -1;
            strcpy(buf, v);
            char *colon = strchr(buf, ':');
            if (colon == NULL)
                return -1;
            *colon = '\0';
            if (parse_long(buf, 0, MAX_SIZE, &o->min_size) != 0 ||
                parse_long(colon + 1, 0, MAX_SIZE, &o->max_size) != 0 ||
                o->min_size > o->max_size)
                return -1;
            break;
        }
        case 'i':
            if (parse_long(v, 1, LONG_MAX / 2, &o->iters) != 0)
                return -1;
            break;
        case 'x':
            if (parse_long(v, 0, LONG_MAX / 2, &o->warmup) != 0)
                return -1;
            break;
        case 'w':
            if (parse_long(v, 1, 1 << 16, &n) != 0)
                return -1;
            o->window = (int)n;
            break;
        default:
            return -1;
        }
    }
    return 0;
}

static long next_size(long s)
{
    return s == 0 ? 1 : 2 * s;
}

/* OSU-like defaults: 10000 ping-pongs / 100 windows for small sizes, then a constant
 * byte budget so that each large size takes a similar, short time. */
static long timed_iters(const struct options *o, int test, long size)
{
    if (o->iters > 0)
        return o->iters;
    long small = test == TEST_LATENCY ? 10000 : test == TEST_STREAM ? 100000 : 100;
    long least = test == TEST_LATENCY ? 100 : test == TEST_STREAM ? 1000 : 20;
    if (size <= SMALL_LIMIT)
        return small;
    long n = small * SMALL_LIMIT / size;
    return n > least ? n : least;
}

/* At least one warm-up iteration always runs: it is the one whose data is checked. */
static long warmup_iters(const struct options *o, long iters)
{
    if (o->warmup >= 0)
        return o->warmup > 0 ? o->warmup : 1;
    long w = iters / 10;
    if (w > 1000)
        w = 1000;
    return w > 0 ? w : 1;
}

static unsigned char pattern(long i, long size, int from)
{
    return (unsigned char)((i * 131 + size * 7 + from * 59 + 1) & 0xff);
}

static void fill(unsigned char *buf, long size, int from)
{
    for (long i = 0; i < size; i++)
        buf[i] = pattern(i, size, from);
}

static void check(const unsigned char *buf, long size, int from, const char *test)
{
    for (long i = 0; i < size; i++) {
        if (buf[i] != pattern(i, size, from)) {
            fprintf(stderr,
                    "pt2pt: rank %d: %s: data from rank %d is wrong at byte %ld of a %ld-byte message "
                    "(got 0x%02x, expected 0x%02x)\n",
                    world_rank, test, from, i, size, buf[i], pattern(i, size, from));
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
}

static void *page_alloc(size_t bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    void *p = NULL;
    if (page <= 0)
        page = 4096;
    if (posix_memalign(&p, (size_t)page, bytes > 0 ? bytes : 1) != 0) {
        fprintf(stderr, "pt2pt: rank %d: cannot allocate %zu bytes\n", world_rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Fault the pages in now so first-touch cost never lands inside a timed loop. */
    memset(p, 0, bytes);
    return p;
}

/* Before a size: this rank's pattern in sbuf, rlen bytes of rbuf poisoned, both ranks there. */
static void prologue(long size, unsigned char *sbuf, unsigned char *rbuf, size_t rlen)
{
    fill(sbuf, size, world_rank);
    memset(rbuf, 0xa5, rlen);
    MPI_Barrier(pair);
}

/* At the first timed iteration: the warm-up checks its data after the last message; without
 * this barrier one rank's check would overlap the other's first timed iteration. */
static void timing_start(long it, long warmup, double *t0)
{
    if (it != warmup)
        return;
    MPI_Barrier(pair);
    *t0 = MPI_Wtime();
}

static double run_latency(long size, long iters, long warmup, unsigned char *sbuf, unsigned char *rbuf)
{
    int me = world_rank, peer = 1 - me;
    int n = (int)size;
    double t0 = 0.0;

    prologue(size, sbuf, rbuf, (size_t)size);
    for (long it = 0; it < warmup + iters; it++) {
        timing_start(it, warmup, &t0);
        if (me == 0) {
            MPI_Send(sbuf, n, MPI_BYTE, peer, TAG_DATA, pair);
            MPI_Recv(rbuf, n, MPI_BYTE, peer, TAG_DATA, pair, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, n, MPI_BYTE, peer, TAG_DATA, pair, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, n, MPI_BYTE, peer, TAG_DATA, pair);
        }
        if (it == 0)
            check(rbuf, size, peer, "latency");
    }
    double t = MPI_Wtime() - t0;
    return t * 1e6 / (2.0 * (double)iters);
}

/* Rank 0 sends iters messages with MPI_Send, rank 1 receives them one MPI_Recv at a time;
 * an ack closes the run, so the time covers every message received. */
static double run_stream(long size, long iters, long warmup, unsigned char *sbuf, unsigned char *rbuf)
{
    int me = world_rank, peer = 1 - me, n = (int)size, ack = 0;
    double t0 = 0.0;
    prologue(size, sbuf, rbuf, (size_t)size);
    for (long it = 0; it < warmup + iters; it++) {
        timing_start(it, warmup, &t0);
        if (me == 0)
            MPI_Send(sbuf, n, MPI_BYTE, peer, TAG_DATA, pair);
        else
            MPI_Recv(rbuf, n, MPI_BYTE, peer, TAG_DATA, pair, MPI_STATUS_IGNORE);
        if (it == 0 && me == 1)
            check(rbuf, size, peer, "stream");
    }
    if (me == 0)
        MPI_Recv(&ack, 1, MPI_INT, peer, TAG_ACK, pair, MPI_STATUS_IGNORE);
    else
        MPI_Send(&ack, 1, MPI_INT, peer, TAG_ACK, pair);
    return (MPI_Wtime() - t0) * 1e6 / (double)iters;
}

/* rbuf holds one slot per message of the window: receives in flight never share memory. */
static double run_bw(long size, long iters, long warmup, int window, int both,
                     unsigned char *sbuf, unsigned char *rbuf, MPI_Request *reqs, MPI_Status *stats)
{
    int me = world_rank, peer = 1 - me;
    int n = (int)size;
    int ack = 0;
    double t0 = 0.0;
    const char *name = both ? "bibw" : "bw";

    prologue(size, sbuf, rbuf, (size_t)size * (size_t)window);
    for (long it = 0; it < warmup + iters; it++) {
        timing_start(it, warmup, &t0);
        int nreq = 0;
        if (me == 1 || both)
            for (int w = 0; w < window; w++)
                MPI_Irecv(rbuf + (size_t)w * (size_t)size, n, MPI_BYTE, peer, TAG_DATA, pair,
                          &reqs[nreq++]);
        if (me == 0 || both)
            for (int w = 0; w < window; w++)
                MPI_Isend(sbuf, n, MPI_BYTE, peer, TAG_DATA, pair, &reqs[nreq++]);
        MPI_Waitall(nreq, reqs, stats);
        if (!both) {
            if (me == 0)
                MPI_Recv(&ack, 1, MPI_INT, peer, TAG_ACK, pair, MPI_STATUS_IGNORE);
            else
                MPI_Send(&ack, 1, MPI_INT, peer, TAG_ACK, pair);
        }
        if (it == 0 && (me == 1 || both))
            for (int w = 0; w < window; w++)
                check(rbuf + (size_t)w * (size_t)size, size, peer, name);
    }
    double t = MPI_Wtime() - t0;
    double bytes = (double)size * (double)window * (double)iters * (both ? 2.0 : 1.0);
    return t > 0.0 ? bytes / t / 1e6 : 0.0;
}

int main(int argc, char **argv)
{
    struct options o;
    int nranks;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    int rc = parse_options(argc, argv, &o);
    if (rc != 0 || nranks < 2) {
        if (world_rank == 0) {
            if (nranks < 2 && rc == 0)
                fprintf(stderr, "pt2pt: needs at least 2 ranks, got %d (run with -n 2)\n", nranks);
            usage(rc > 0 ? stdout : stderr);
        }
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }

    MPI_Comm_split(MPI_COMM_WORLD, world_rank < 2 ? 0 : MPI_UNDEFINED, world_rank, &pair);

    size_t slots = (size_t)o.window;
    unsigned char *sbuf = NULL, *rbuf = NULL;
    MPI_Request *reqs = NULL;
    /* A real array rather than MPI_STATUSES_IGNORE: GCC's -Wstringop-overflow misreads
     * MPICH's (MPI_Status *)1 as a zero-size buffer. */
    MPI_Status *stats = NULL;
    if (world_rank < 2) {
        sbuf = page_alloc((size_t)o.max_size);
        rbuf = page_alloc((size_t)o.max_size * slots);
        reqs = malloc(2 * slots * sizeof *reqs);
        stats = malloc(2 * slots * sizeof *stats);
        if (reqs == NULL || stats == NULL) {
            fprintf(stderr, "pt2pt: rank %d: out of memory\n", world_rank);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }

    static const struct { int bit; const char *name; } tests[] = {
        { TEST_LATENCY, "latency" }, { TEST_BW, "bw" }, { TEST_BIBW, "bibw" }, { TEST_STREAM, "stream" },
    };
    for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++) {
        if (!(o.tests & tests[t].bit))
            continue;
        for (long size = o.min_size; size <= o.max_size; size = next_size(size)) {
            long iters = timed_iters(&o, tests[t].bit, size);
            long warmup = warmup_iters(&o, iters);
            double v = 0.0;
            if (world_rank < 2) {
                if (tests[t].bit == TEST_LATENCY)
                    v = run_latency(size, iters, warmup, sbuf, rbuf);
                else if (tests[t].bit == TEST_STREAM)
                    v = run_stream(size, iters, warmup, sbuf, rbuf);
                else
                    v = run_bw(size, iters, warmup, o.window, tests[t].bit == TEST_BIBW, sbuf, rbuf, reqs,
                               stats);
            }
            /* Idle ranks wait here; it also keeps one size's traffic out of the next one's timing. */
            MPI_Barrier(MPI_COMM_WORLD);
            if (world_rank == 0) {
                if (tests[t].bit == TEST_LATENCY)
                    printf("{\"test\":\"latency\",\"size\":%ld,\"latency_us\":%.2f}\n", size, v);
                else if (tests[t].bit == TEST_STREAM)
                    printf("{\"test\":\"stream\",\"size\":%ld,\"us_per_msg\":%.3f}\n", size, v);
                else
                    printf("{\"test\":\"%s\",\"size\":%ld,\"mb_s\":%.1f}\n", tests[t].name, size, v);
                fflush(stdout);
            }
        }
    }

    if (pair != MPI_COMM_NULL)
        MPI_Comm_free(&pair);
    free(stats);
    free(reqs);
    free(rbuf);
    free(sbuf);
    MPI_Finalize();
    return 0;
}
