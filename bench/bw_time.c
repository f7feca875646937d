/*
 * Bandwidth over time between ranks 0 and 1: rank 0 streams messages to rank 1 in
 * windows of non-blocking sends, each window answered by a small ack, for a fixed
 * duration, and prints the bandwidth of every interval as it goes. Made to watch a
 * multirail library re-balance while another flow loads one rail. Plain MPI only.
 *
 * Rank 0 counts a message's bytes in the interval in which its send completes (for
 * rendezvous-sized messages that is when the data has left, bar the socket buffers).
 * Rank 0 alone watches the clock; the first byte of every message of the last window
 * is 1, so rank 1 learns when to stop without another message and no request is left
 * open. Ranks >= 2 only wait at the final barrier. A first line gives the wall-clock
 * time of t = 0 and a last line the average over the whole run.
 *
 * With -p 1 there are no windows: rank 0 keeps WINDOW sends in flight, posting a new one as
 * each completes, and rank 1 keeps as many receives posted, so the rails never drain between
 * windows (the windows' drain and ack made regular dips in 50 ms bins). When the time is
 * up, the next WINDOW messages carry the stop flag; rank 1 posts a receive again only for a
 * message without it, so its receives match rank 0's sends one for one.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <mpi.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TAG_DATA 11
#define TAG_ACK 12
#define MAX_SIZE (1L << 30)
#define MAX_WINDOW 4096

struct options {
    long size;
    int window;
    double seconds;
    double interval;
    int check;  /* every message's bytes, not only the first window's */
    int stream; /* -p 1: no windows, WINDOW messages always in flight */
    int spread; /* -a 1: a completion's bytes spread over the time since the one before */
};

static int world_rank;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: bw_time [-s SIZE] [-w WINDOW] [-t SECONDS] [-i INTERVAL]\n"
            "  -s  message size in bytes, k/m/g suffixes allowed (default 4m)\n"
            "  -w  messages in flight per window (default 16)\n"
            "  -t  how long to stream, in seconds (default 30)\n"
            "  -i  reporting interval in seconds (default 0.5)\n"
            "  -c  1: check every byte of every message, and spoil one byte per 4 KiB of the\n"
            "      receive buffer before each receive so data that never arrived is caught too\n"
            "      (default 0: the first window only)\n"
            "  -p  1: no windows: WINDOW messages always in flight, each completed one replaced\n"
            "      at once (default 0: windows, each answered by an ack)\n"
            "  -a  1: spread each completion's bytes evenly over the time since the completion\n"
            "      before it, instead of counting them whole in the interval they complete in\n"
            "      (short intervals then move by less than a message; default 0)\n"
            "Rank 0 streams to rank 1 and prints {\"test\":\"bw_time\",\"t\":T,\"mb_s\":X} per interval\n"
            "(T: end of the interval, seconds since the start; MB = 10^6 bytes), then one summary line.\n");
}

static int parse_size(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || v < 1)
        return -1;
    long mult = 1;
    switch (*end) {
    case '\0': break;
    case 'k': case 'K': mult = 1L << 10; end++; break;
    case 'm': case 'M': mult = 1L << 20; end++; break;
    case 'g': case 'G': mult = 1L << 30; end++; break;
    default: return -1;
    }
    if (*end != '\0' || v > MAX_SIZE / mult)
        return -1;
    *out = v * mult;
    return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= lo && v <= hi))
        return -1;
    *out = v;
    return 0;
}

/* Every rank parses the same argv, so all reach the same verdict without talking. */
static int parse_options(int argc, char **argv, struct options *o)
{
    o->size = 4L << 20;
    o->window = 16;
    o->seconds = 30.0;
    o->interval = 0.5;
    o->check = 0;
    o->stream = 0;
    o->spread = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return 1;
        if (a[0] != '-' || a[1] == '\0' || a[2] != '\0' || i + 1 >= argc)
            return -1;
        const char *v = argv[++i];
        double d;
        switch (a[1]) {
        case 's':
            if (parse_size(v, &o->size) != 0)
                return -1;
            break;
        case 'w':
            if (parse_double(v, 1, MAX_WINDOW, &d) != 0 || d != (double)(int)d)
                return -1;
            o->window = (int)d;
            break;
        case 't':
            if (parse_double(v, 0.001, 86400.0, &o->seconds) != 0)
                return -1;
            break;
        case 'i':
            if (parse_double(v, 0.001, 3600.0, &o->interval) != 0)
                return -1;
            break;
        case 'c':
        case 'p':
        case 'a':
            if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
                return -1;
            *(a[1] == 'c' ? &o->check : a[1] == 'p' ? &o->stream : &o->spread) = v[0] == '1';
            break;
        default:
            return -1;
        }
    }
    return 0;
}

static void *page_alloc(size_t bytes)
{
    long page = sysconf(_SC_PAGESIZE);
    void *p = NULL;
    if (page <= 0)
        page = 4096;
    if (posix_memalign(&p, (size_t)page, bytes) != 0) {
        fprintf(stderr, "bw_time: rank %d: cannot allocate %zu bytes\n", world_rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Fault the pages in now so first-touch cost stays out of the timeline. */
    memset(p, 0, bytes);
    return p;
}

static unsigned char pattern(long i)
{
    return (unsigned char)((i * 131 + 7) & 0xff);
}

/* Byte 0 carries the stop flag; the rest is a pattern checked on the first window. */
static void fill(unsigned char *buf, long size, unsigned char last)
{
    buf[0] = last;
    for (long i = 1; i < size; i++)
        buf[i] = pattern(i);
}

static void check(const unsigned char *buf, long size)
{
    for (long i = 1; i < size; i++) {
        if (buf[i] != pattern(i)) {
            fprintf(stderr,
                    "bw_time: rank %d: data from rank 0 is wrong at byte %ld of a %ld-byte message "
                    "(got 0x%02x, expected 0x%02x)\n",
                    world_rank, i, size, buf[i], pattern(i));
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    }
}

/* One byte per 4 KiB made wrong before a receive: a check then also catches data that never
 * arrived (the buffer kept an earlier message's bytes). */
static void spoil(unsigned char *buf, long size)
{
    for (long i = 1; i < size; i += 4096)
        buf[i] = (unsigned char)~pattern(i);
}

struct timeline {
    double t0;
    double interval;
    long next;        /* index of the interval not yet printed */
    double bytes;     /* bytes completed in that interval */
    double total;
    int spread;       /* -a 1 */
    double last;      /* the previous completion (t0 before the first) */
};

static void print_interval(struct timeline *tl, double bytes)
{
    double t = (double)(tl->next + 1) * tl->interval;
    printf("{\"test\":\"bw_time\",\"t\":%.3f,\"mb_s\":%.1f}\n", t, bytes / tl->interval / 1e6);
    fflush(stdout);
    tl->next++;
}

/* Closes every interval that ended before now (empty ones print 0), then counts the bytes.
 * With -a 1 the bytes are spread evenly from the previous completion to now, so each interval
 * that closes on the way gets its part. */
static void account(struct timeline *tl, double now, double bytes)
{
    double from = tl->last, rate = tl->spread && now > from ? bytes / (now - from) : 0.0;
    tl->last = now;
    for (double edge; now - tl->t0 >= (edge = (double)(tl->next + 1) * tl->interval);) {
        double part = rate * (tl->t0 + edge - from);
        if (part > 0.0) {
            tl->bytes += part;
            tl->total += part;
            bytes -= part;
            from = tl->t0 + edge;
        }
        print_interval(tl, tl->bytes);
        tl->bytes = 0.0;
    }
    tl->bytes += bytes;
    tl->total += bytes;
}

static void run_sender(const struct options *o, MPI_Comm pair)
{
    int n = (int)o->size, ack = 0, window = o->window;
    unsigned char *sbuf = page_alloc((size_t)o->size);
    unsigned char *sbuf_last = page_alloc((size_t)o->size);
    MPI_Request *reqs = malloc((size_t)window * sizeof *reqs);
    int *idx = malloc((size_t)window * sizeof *idx);
    /* A real array rather than MPI_STATUSES_IGNORE: GCC's -Wstringop-overflow misreads
     * MPICH's (MPI_Status *)1 as a zero-size buffer (as in pt2pt.c). */
    MPI_Status *stats = malloc((size_t)window * sizeof *stats);
    if (reqs == NULL || idx == NULL || stats == NULL) {
        fprintf(stderr, "bw_time: rank 0: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    fill(sbuf, o->size, 0);
    fill(sbuf_last, o->size, 1);

    struct timeline tl = { 0 };
    tl.interval = o->interval;
    long windows = 0;
    MPI_Barrier(pair);
    tl.t0 = tl.last = MPI_Wtime();
    tl.spread = o->spread;
    /* Wall-clock start, so a script can line up outside events (a competing flow) with t. */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    printf("{\"test\":\"bw_time_start\",\"unix\":%.3f,\"size\":%ld,\"window\":%d,\"interval\":%g,\"spread\":%d}\n",
           (double)now.tv_sec + (double)now.tv_nsec / 1e9, o->size, window, o->interval, o->spread);
    fflush(stdout);
    if (o->stream) { /* -p 1: every completed send replaced at once, then WINDOW stop messages */
        int stops = 0;
        for (int w = 0; w < window; w++)
            MPI_Isend(sbuf, n, MPI_BYTE, 1, TAG_DATA, pair, &reqs[w]);
        for (;;) {
            int done = 0;
            MPI_Waitsome(window, reqs, &done, idx, stats);
            if (done == MPI_UNDEFINED)
                break;
            account(&tl, MPI_Wtime(), (double)done * (double)o->size);
            int up = stops > 0 || MPI_Wtime() - tl.t0 >= o->seconds;
            for (int k = 0; k < done && (!up || stops < window); k++) {
                stops += up;
                MPI_Isend(up ? sbuf_last : sbuf, n, MPI_BYTE, 1, TAG_DATA, pair, &reqs[idx[k]]);
            }
        }
        MPI_Recv(&ack, 1, MPI_INT, 1, TAG_ACK, pair, MPI_STATUS_IGNORE);
    }
    for (int last = o->stream; !last;) {
        last = MPI_Wtime() - tl.t0 >= o->seconds;
        const unsigned char *buf = last ? sbuf_last : sbuf;
        for (int w = 0; w < window; w++)
            MPI_Isend(buf, n, MPI_BYTE, 1, TAG_DATA, pair, &reqs[w]);
        for (int left = window; left > 0;) {
            int done = 0;
            MPI_Waitsome(window, reqs, &done, idx, stats);
            if (done == MPI_UNDEFINED)
                break;
            account(&tl, MPI_Wtime(), (double)done * (double)o->size);
            left -= done;
        }
        MPI_Recv(&ack, 1, MPI_INT, 1, TAG_ACK, pair, MPI_STATUS_IGNORE);
        windows++;
    }
    double elapsed = MPI_Wtime() - tl.t0;
    /* The partial last interval is rated over its own length and marked: a few messages
     * over a short tail make a noisy number. */
    double tail = elapsed - (double)tl.next * tl.interval;
    if (tl.bytes > 0.0 && tail > 0.0)
        printf("{\"test\":\"bw_time\",\"t\":%.3f,\"mb_s\":%.1f,\"partial\":true}\n", elapsed,
               tl.bytes / tail / 1e6);
    printf("{\"test\":\"bw_time_total\",\"size\":%ld,\"window\":%d,\"windows\":%ld,\"seconds\":%.3f,"
           "\"mb_s\":%.1f}\n",
           o->size, window, windows, elapsed, elapsed > 0.0 ? tl.total / elapsed / 1e6 : 0.0);
    fflush(stdout);
    free(stats);
    free(idx);
    free(reqs);
    free(sbuf_last);
    free(sbuf);
}

static void run_receiver(const struct options *o, MPI_Comm pair)
{
    int n = (int)o->size, ack = 0, window = o->window;
    unsigned char *rbuf = page_alloc((size_t)o->size * (size_t)window);
    MPI_Request *reqs = malloc((size_t)window * sizeof *reqs);
    MPI_Status *stats = malloc((size_t)window * sizeof *stats);
    int *idx = malloc((size_t)window * sizeof *idx);
    if (reqs == NULL || stats == NULL || idx == NULL) {
        fprintf(stderr, "bw_time: rank 1: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Barrier(pair);
    if (o->stream) { /* -p 1: a receive posted again for every message without the stop flag */
        long got = 0;
        for (int w = 0; w < window; w++)
            MPI_Irecv(rbuf + (size_t)w * (size_t)o->size, n, MPI_BYTE, 0, TAG_DATA, pair, &reqs[w]);
        for (;;) {
            int done = 0;
            MPI_Waitsome(window, reqs, &done, idx, stats);
            if (done == MPI_UNDEFINED)
                break;
            for (int k = 0; k < done; k++) {
                unsigned char *slot = rbuf + (size_t)idx[k] * (size_t)o->size;
                if (got++ < window || o->check)
                    check(slot, o->size);
                if (slot[0] != 0)
                    continue;
                if (o->check)
                    spoil(slot, o->size);
                MPI_Irecv(slot, n, MPI_BYTE, 0, TAG_DATA, pair, &reqs[idx[k]]);
            }
        }
        MPI_Send(&ack, 1, MPI_INT, 0, TAG_ACK, pair);
    }
    for (long it = 0; !o->stream; it++) {
        if (o->check && it > 0)
            for (int w = 0; w < window; w++)
                spoil(rbuf + (size_t)w * (size_t)o->size, o->size);
        for (int w = 0; w < window; w++)
            MPI_Irecv(rbuf + (size_t)w * (size_t)o->size, n, MPI_BYTE, 0, TAG_DATA, pair, &reqs[w]);
        MPI_Waitall(window, reqs, stats);
        if (it == 0 || o->check)
            for (int w = 0; w < window; w++)
                check(rbuf + (size_t)w * (size_t)o->size, o->size);
        int last = rbuf[0] != 0;
        MPI_Send(&ack, 1, MPI_INT, 0, TAG_ACK, pair);
        if (last)
            break;
    }
    free(idx);
    free(stats);
    free(reqs);
    free(rbuf);
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
                fprintf(stderr, "bw_time: needs at least 2 ranks, got %d (run with -n 2)\n", nranks);
            usage(rc > 0 ? stdout : stderr);
        }
        MPI_Finalize();
        return rc > 0 ? 0 : 2;
    }

    MPI_Comm pair = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank < 2 ? 0 : MPI_UNDEFINED, world_rank, &pair);
    if (world_rank == 0)
        run_sender(&o, pair);
    else if (world_rank == 1)
        run_receiver(&o, pair);
    MPI_Barrier(MPI_COMM_WORLD);

    if (pair != MPI_COMM_NULL)
        MPI_Comm_free(&pair);
    MPI_Finalize();
    return 0;
}
