/*
 * Collective latency micro-benchmark (OSU style): Barrier, Bcast, Reduce, Allreduce,
 * Allgather and Alltoall over message sizes, every rank taking part; on request (-c) the
 * non-blocking Ibarrier, Ibcast, Ireduce, Iallreduce, Iallgather and Ialltoall, each call
 * followed by MPI_Wait (osu_ibcast's latency without the overlapped compute). Plain MPI only, so the
 * same source measures RailMPI, MPICH and Open MPI (bench/coll_compare.sh).
 *
 * Size: bytes per rank (Bcast/Reduce/Allreduce/Scan: the vector, of MPI_FLOAT for the
 * reductions with MPI_SUM, at least one float; Allgather/Alltoall, Gather/Scatter and their
 * v forms: the block each rank sends to each rank, every count equal; Reduce_scatter: the
 * floats each rank receives, so the vector is the size times the ranks, where osu_reduce_scatter
 * counts the whole vector).
 * Latency: calls back to back, then a barrier; the figure is the slowest rank's mean time
 * per call, in microseconds. Calls per size scale with the size and are capped at about
 * a second of calls (estimated from the warm-up) so that a slow MPI still finishes. A
 * collective that fails (under MPI_ERRORS_RETURN) on its first call is skipped and
 * reported as such.
 * Output from rank 0: a table on stdout, then one JSON line per collective and size
 * ({"coll":"allreduce","size":8,"nranks":4,"lat_us":3.1}) and per skipped collective.
 *
 * With -B, OSU's way instead (osu_bcast and the others of OSU 7): a barrier before every call,
 * each call timed alone, and the figure the mean over ranks of each rank's mean time per
 * call. Back to back, a root that returns before its readers finished (a pipelined Bcast or
 * Reduce) is timed by its throughput; with -B by one call's latency from a common start.
 *
 * A/B mode (-k CVAR -v V1,V2[,...]): two or more settings of one MPI_T control variable
 * inside ONE job. This machine changes speed level between jobs and within them (periods of
 * a few hundred ms), so whole-job figures cannot separate variants a few percent apart;
 * here each round times a block of -i calls per value, the values in an order rotated
 * every round, so that every value sees the same periods. The variable is written on every
 * rank between blocks (its scope must allow that: RailMPI's collective knobs are
 * MPI_T_SCOPE_ALL_EQ, docs/mpit.md). Per collective, size and value: the median and
 * minimum of the rounds' block times (each the slowest rank's mean per call, as above) and
 * in how many rounds the value was below the first value of its round; one JSON line each
 * with every block's time in round order.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getcpu, madvise's advice for the -P probe */
#endif

#include <mpi.h>

#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

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
    GATHER, /* the rest of OSU's blocking collectives, on request (-c) */
    SCATTER,
    GATHERV,
    SCATTERV,
    ALLGATHERV,
    ALLTOALLV,
    REDUCE_SCATTER,
    SCAN,
    NCOLL
};
static const char *const names[NCOLL] = {
    "barrier",  "bcast",   "reduce",   "allreduce",  "allgather",  "alltoall",  "ibarrier",
    "ibcast",   "ireduce", "iallreduce", "iallgather", "ialltoall", "gather",   "scatter",
    "gatherv",  "scatterv", "allgatherv", "alltoallv", "reduce_scatter", "scan"};
#define NBLOCKING IBARRIER /* the default list; the I* forms (each call then MPI_Wait) on request */
#define MAX_SIZES 32

static int rank, nranks, root; /* root: of Bcast, Reduce, Gather(v) and Scatter(v) (-r) */
static char *sbuf, *rbuf;
static int *vcounts, *vdispls; /* the v forms: every rank's count set to the size, in rank order */

static void vset(int n)
{
    for (int r = 0; r < nranks; r++) {
        vcounts[r] = n;
        vdispls[r] = r * n;
    }
}

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
    case GATHER: return MPI_Gather(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, root, MPI_COMM_WORLD);
    case SCATTER: return MPI_Scatter(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, root, MPI_COMM_WORLD);
    case GATHERV: vset(n); return MPI_Gatherv(sbuf, n, MPI_BYTE, rbuf, vcounts, vdispls, MPI_BYTE, root, MPI_COMM_WORLD);
    case SCATTERV: vset(n); return MPI_Scatterv(sbuf, vcounts, vdispls, MPI_BYTE, rbuf, n, MPI_BYTE, root, MPI_COMM_WORLD);
    case ALLGATHERV: vset(n); return MPI_Allgatherv(sbuf, n, MPI_BYTE, rbuf, vcounts, vdispls, MPI_BYTE, MPI_COMM_WORLD);
    case ALLTOALLV:
        vset(n);
        return MPI_Alltoallv(sbuf, vcounts, vdispls, MPI_BYTE, rbuf, vcounts, vdispls, MPI_BYTE, MPI_COMM_WORLD);
    case REDUCE_SCATTER: vset(nf); return MPI_Reduce_scatter(sbuf, rbuf, vcounts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    case SCAN: return MPI_Scan(sbuf, rbuf, nf, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
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


/* ---- -P: what this rank's job ran on (docs/results/coll.md run 36) ----
 * A whole job of a 1-4 MiB single-copy Allgather/Alltoall can run in a slow mode (run 34).
 * Per rank and job: where the buffers' pages are (transparent huge pages of their mapping,
 * the physical frames from /proc/self/pagemap when readable: runs of consecutive frames,
 * spread over the 32 page colours of a 2 MiB 16-way L2), the CPUs the rank ran on, its
 * migrations and context switches (/proc/self/sched), and this job's own memcpy and
 * process_vm_readv speed over the same buffers with no MPI in between, at the start and
 * the end. One "# probe {...}" line per rank on stdout (coll_compare.sh logs it). */
static int probe;
static const char *pages_mode; /* -H huge|nohuge: buffers mmap'd 2 MiB-aligned, with that advice */
static int osu_mode; /* -B: a barrier before every call, each timed alone, the mean over ranks */

/* `it` timed calls of a collective and size after a barrier: the figure over ranks (the
 * slowest rank's mean per call, or with -B the mean over ranks of each call timed alone
 * after a barrier), us. */
static void cpu_sample(void);
static double timed_calls(int c, long size, long it)
{
    double mine = 0, all = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (osu_mode) {
        for (long i = 0; i < it; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            call(c, size);
            mine += MPI_Wtime() - t;
        }
        mine = mine / (double)it * 1e6;
        MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        return all / nranks;
    }
    double t0 = MPI_Wtime();
    for (long i = 0; i < it; i++) {
        if (probe)
            cpu_sample();
        call(c, size);
    }
    mine = (MPI_Wtime() - t0) / (double)it * 1e6;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return all;
}
static unsigned long cpu_seen, cpu_moves;
static int cpu_last = -1;

static void cpu_sample(void)
{
    int c = sched_getcpu();
    if (c >= 0 && c < 64)
        cpu_seen |= 1ul << c;
    cpu_moves += cpu_last >= 0 && c != cpu_last;
    cpu_last = c;
}

static char *buf_alloc(size_t bytes)
{
    if (!pages_mode)
        return malloc(bytes);
    size_t al = (size_t)2 << 20, len = (bytes + 16 + al - 1) / al * al + al;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    char *a = (char *)(((uintptr_t)p + al - 1) & ~(uintptr_t)(al - 1));
    madvise(a, len - al, strcmp(pages_mode, "huge") ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
    return a + 16; /* malloc's page offset, as run 34 saw in both MPIs */
}

static void buf_free(char *b)
{
    if (!pages_mode)
        free(b);
    /* else left to the exit: its mapping's start is not kept */
}

/* AnonHugePages (kB) and size (kB) of the mapping that holds p. */
static void vma_thp(const void *p, long *thp_kb, long *vma_kb)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0;
    *thp_kb = *vma_kb = -1;
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        long v;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            if (in)
                break;
            in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
            if (in)
                *vma_kb = (long)((hi - lo) >> 10);
        } else if (in && sscanf(line, "AnonHugePages: %ld", &v) == 1) {
            *thp_kb = v;
        }
    }
    fclose(f);
}

/* Huge-page-mapped kB of the whole process: AnonHugePages + ShmemPmdMapped + FilePmdMapped
 * (the MPI's own mappings included). */
static long thp_total(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long sum = -1, v;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %ld", &v) == 1 || sscanf(line, "ShmemPmdMapped: %ld", &v) == 1 ||
            sscanf(line, "FilePmdMapped: %ld", &v) == 1)
            sum = (sum < 0 ? 0 : sum) + v;
    if (f)
        fclose(f);
    return sum;
}

/* Physical frames of [p, p+n): runs of consecutive frames, fewest and most pages of one of
 * the 32 L2 page colours; -1 when pagemap gives no frame numbers (not root). */
static void frames(const char *p, size_t n, long *runs, long *cmin, long *cmax, double *gib)
{
    *runs = *cmin = *cmax = -1;
    *gib = -1;
    double sum = 0;
    long np = 0;
    int fd = open("/proc/self/pagemap", O_RDONLY);
    if (fd < 0)
        return;
    long pg = sysconf(_SC_PAGESIZE), colour[32] = {0}, r = 0;
    uint64_t prev = 0;
    for (uintptr_t a = (uintptr_t)p & ~(uintptr_t)(pg - 1); a < (uintptr_t)p + n; a += (uintptr_t)pg) {
        uint64_t e;
        if (pread(fd, &e, sizeof e, (off_t)(a / (uintptr_t)pg * sizeof e)) != (ssize_t)sizeof e ||
            !(e >> 63 & 1) || !(e & ((1ull << 55) - 1))) {
            close(fd);
            return;
        }
        uint64_t pfn = e & ((1ull << 55) - 1);
        r += !prev || pfn != prev + 1;
        prev = pfn;
        sum += (double)pfn * (double)pg / (double)(1 << 30);
        np++;
        colour[pfn & 31]++;
    }
    close(fd);
    *runs = r;
    *gib = np ? sum / (double)np : -1;
    *cmin = *cmax = colour[0];
    for (int i = 1; i < 32; i++) {
        *cmin = colour[i] < *cmin ? colour[i] : *cmin;
        *cmax = colour[i] > *cmax ? colour[i] : *cmax;
    }
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Median us of 7 memcpy and 7 process_vm_readv (from this process) of n bytes from sbuf
 * into rbuf, both ranks at once as in the collective. */
static void copy_speed(size_t n, double *memcpy_us, double *cma_us)
{
    double t[2][7];
    struct iovec l = {rbuf, n}, r = {sbuf, n};
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 7; i++) {
        double t0 = now_us();
        memcpy(rbuf, sbuf, n);
        t[0][i] = now_us() - t0;
        __asm__ volatile("" ::: "memory");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 7; i++) {
        double t0 = now_us();
        t[1][i] = process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)n ? now_us() - t0 : -1;
    }
    for (int k = 0; k < 2; k++)
        for (int i = 1; i < 7; i++)
            for (int j = i; j > 0 && t[k][j - 1] > t[k][j]; j--) {
                double x = t[k][j];
                t[k][j] = t[k][j - 1];
                t[k][j - 1] = x;
            }
    *memcpy_us = t[0][3];
    *cma_us = t[1][3];
}

/* /proc/self/sched counters: migrations, voluntary and involuntary switches. */
static void sched_counts(long c[3])
{
    static const char *const key[3] = {"se.nr_migrations", "nr_voluntary_switches", "nr_involuntary_switches"};
    FILE *f = fopen("/proc/self/sched", "r");
    char line[256];
    c[0] = c[1] = c[2] = -1;
    while (f && fgets(line, sizeof line, f))
        for (int k = 0; k < 3; k++)
            if (!strncmp(line, key[k], strlen(key[k])) && line[strlen(key[k])] == ' ')
                c[k] = atol(strchr(line, ':') + 1);
    if (f)
        fclose(f);
}

static int nthreads(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

static double probe_copy[2][2]; /* [start, end][memcpy, readv] us */
static long probe_sched0[3];

static void probe_start(size_t n)
{
    sched_counts(probe_sched0);
    copy_speed(n, &probe_copy[0][0], &probe_copy[0][1]);
}

static void probe_end(size_t n)
{
    long s1[3], thp[2], vma[2], runs[2], cmin[2], cmax[2];
    double gib[2];
    copy_speed(n, &probe_copy[1][0], &probe_copy[1][1]);
    sched_counts(s1);
    vma_thp(sbuf, &thp[0], &vma[0]);
    vma_thp(rbuf, &thp[1], &vma[1]);
    frames(sbuf, n, &runs[0], &cmin[0], &cmax[0], &gib[0]);
    frames(rbuf, n, &runs[1], &cmin[1], &cmax[1], &gib[1]);
    printf("# probe {\"rank\":%d,\"cpu\":%d,\"cpus_seen\":%lu,\"cpu_moves\":%lu,\"threads\":%d,"
           "\"migrations\":%ld,\"vol_sw\":%ld,\"invol_sw\":%ld,\"bytes\":%zu,"
           "\"memcpy_us\":[%.1f,%.1f],\"readv_us\":[%.1f,%.1f],"
           "\"sbuf\":\"%p\",\"rbuf\":\"%p\",\"thp_kb\":[%ld,%ld],\"thp_process_kb\":%ld,\"vma_kb\":[%ld,%ld],"
           "\"frame_runs\":[%ld,%ld],\"colour_min\":[%ld,%ld],\"colour_max\":[%ld,%ld],\"frame_gib\":[%.3f,%.3f]}\n",
           rank, sched_getcpu(), cpu_seen, cpu_moves, nthreads(), s1[0] - probe_sched0[0], s1[1] - probe_sched0[1],
           s1[2] - probe_sched0[2], n, probe_copy[0][0], probe_copy[1][0], probe_copy[0][1], probe_copy[1][1],
           (void *)sbuf, (void *)rbuf, thp[0], thp[1], thp_total(), vma[0], vma[1], runs[0], runs[1], cmin[0], cmin[1], cmax[0],
           cmax[1], gib[0], gib[1]);
    fflush(stdout);
}

/* Many calls for small sizes, a constant byte budget for large ones. */
static long iterations(long size, long fixed)
{
    if (fixed > 0)
        return fixed;
    long it = size <= 8192 ? 2000 : (64L << 20) / size;
    return it < 30 ? 30 : it;
}

/* ---- A/B mode: one control variable switched through MPI_T between blocks of calls ---- */
#define AB_MAX_VALUES 8
#define AB_MAX_ROUNDS 1000
static MPI_T_cvar_handle ab_handle;
static MPI_Datatype ab_type; /* MPI_INT (also enumerations), MPI_LONG_LONG, MPI_DOUBLE, ... */
static long long ab_values[AB_MAX_VALUES];
static const char *ab_names[AB_MAX_VALUES];
static int ab_nvalues, ab_rounds = 10;

/* A value of -v: an integer with an optional k, m or g suffix (powers of 1024), or the name
 * of an item of the variable's enumeration. -1 and a message when it is neither. */
static int ab_parse(const char *text, MPI_T_enum en, long long *out)
{
    char *end;
    long long v = strtoll(text, &end, 0);
    if (end != text) {
        int shift = *end == 'k' || *end == 'K'   ? 10
                    : *end == 'm' || *end == 'M' ? 20
                    : *end == 'g' || *end == 'G' ? 30
                                                 : 0;
        if (shift)
            end++;
        if (!*end) {
            *out = v << shift;
            return 0;
        }
    }
    int num = 0;
    char ename[256];
    int el = sizeof ename;
    if (en != MPI_T_ENUM_NULL && MPI_T_enum_get_info(en, &num, ename, &el) == MPI_SUCCESS)
        for (int j = 0; j < num; j++) {
            char item[256];
            int il = sizeof item, iv;
            if (MPI_T_enum_get_item(en, j, &iv, item, &il) == MPI_SUCCESS && !strcmp(item, text)) {
                *out = iv;
                return 0;
            }
        }
    if (rank == 0)
        fprintf(stderr, "coll: -v %s: not a number%s\n", text,
                en != MPI_T_ENUM_NULL ? " nor an item of the variable's enumeration" : "");
    return -1;
}

/* Looks up the variable and parses the values; 0 when usable. */
static int ab_setup(const char *cvar, char *values)
{
    int provided, idx, count;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    if (MPI_T_cvar_get_index(cvar, &idx) != MPI_SUCCESS) {
        if (rank == 0)
            fprintf(stderr, "coll: -k %s: no such control variable\n", cvar);
        return -1;
    }
    char name[256], desc[16];
    int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
    MPI_T_enum en;
    MPI_T_cvar_get_info(idx, name, &nl, &verb, &ab_type, &en, desc, &dl, &bind, &scope);
    if (bind != MPI_T_BIND_NO_OBJECT || scope == MPI_T_SCOPE_CONSTANT || scope == MPI_T_SCOPE_READONLY ||
        (ab_type != MPI_INT && ab_type != MPI_LONG_LONG && ab_type != MPI_LONG && ab_type != MPI_UNSIGNED &&
         ab_type != MPI_UNSIGNED_LONG && ab_type != MPI_UNSIGNED_LONG_LONG)) {
        if (rank == 0)
            fprintf(stderr, "coll: -k %s: not a writable integer variable bound to no object (scope %d)\n", cvar,
                    scope);
        return -1;
    }
    MPI_T_cvar_handle_alloc(idx, NULL, &ab_handle, &count);
    for (char *p = strtok(values, ","); p; p = strtok(NULL, ",")) {
        if (ab_nvalues == AB_MAX_VALUES || ab_parse(p, en, &ab_values[ab_nvalues]))
            return -1;
        ab_names[ab_nvalues++] = p;
    }
    if (ab_nvalues < 2) {
        if (rank == 0)
            fprintf(stderr, "coll: -v needs at least two values\n");
        return -1;
    }
    return 0;
}

/* Writes value v (in the variable's own datatype) on this rank; exits on a refusal. */
static void ab_write(long long v)
{
    union {
        int i;
        long l;
        long long ll;
    } u;
    if (ab_type == MPI_INT || ab_type == MPI_UNSIGNED)
        u.i = (int)v;
    else if (ab_type == MPI_LONG || ab_type == MPI_UNSIGNED_LONG)
        u.l = (long)v;
    else
        u.ll = v;
    int rc = MPI_T_cvar_write(ab_handle, &u);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "coll: rank %d: writing %lld to the control variable failed (error %d)\n", rank, v, rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static long long ab_read(void)
{
    union {
        int i;
        long l;
        long long ll;
    } u;
    MPI_T_cvar_read(ab_handle, &u);
    return ab_type == MPI_INT || ab_type == MPI_UNSIGNED         ? u.i
           : ab_type == MPI_LONG || ab_type == MPI_UNSIGNED_LONG ? u.l
                                                                 : u.ll;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One block of an in-job comparison: a few untimed calls (the first call of a setting may set
 * something up), then `it` timed calls (timed_calls), us. */
static double block_us(int coll, long size, long it)
{
    for (long i = 0; i < it / 10 + 1; i++)
        call(coll, size);
    return timed_calls(coll, size, it);
}

/* Median of n values (sorted into `sorted`). */
static double median_of(const double *v, int n, double *sorted)
{
    memcpy(sorted, v, (size_t)n * sizeof(double));
    qsort(sorted, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

/* One collective and size: ab_rounds rounds of a block of it calls per value. */
static void ab_size(int coll, long size, long it, const char *cvar)
{
    static double t[AB_MAX_VALUES][AB_MAX_ROUNDS];
    int nv = ab_nvalues;
    for (int r = 0; r < ab_rounds; r++)
        for (int j = 0; j < nv; j++) {
            int v = (r + j) % nv;
            ab_write(ab_values[v]);
            t[v][r] = block_us(coll, size, it);
        }
    if (rank != 0)
        return;
    for (int v = 0; v < nv; v++) {
        double sorted[AB_MAX_ROUNDS];
        int below = 0;
        double med = median_of(t[v], ab_rounds, sorted);
        for (int r = 0; r < ab_rounds; r++)
            below += t[v][r] < t[0][r];
        printf("%10s %10ld %12s %10.3f %10.3f", names[coll], coll == BARRIER || coll == IBARRIER ? 0 : size,
               ab_names[v], med, sorted[0]);
        if (v)
            printf("   %d of %d below %s", below, ab_rounds, ab_names[0]);
        printf("\n");
        printf("{\"coll\":\"%s\",\"size\":%ld,\"nranks\":%d,\"cvar\":\"%s\",\"value\":\"%s\",\"iters\":%ld,"
               "\"median_us\":%.3f,\"min_us\":%.3f,\"below_first\":%d,\"rounds\":%d,\"blocks_us\":[",
               names[coll], coll == BARRIER || coll == IBARRIER ? 0 : size, nranks, cvar, ab_names[v], it, med,
               sorted[0], v ? below : 0, ab_rounds);
        for (int r = 0; r < ab_rounds; r++)
            printf("%s%.3f", r ? "," : "", t[v][r]);
        printf("]}\n");
    }
    fflush(stdout);
}


/* ---- -S ROUNDS: two sets of buffers inside one job (docs/results/coll.md run 36) ----
 * Whether a job's slow mode belongs to its pages or to the time it ran: each round times a
 * block of calls on set A (the buffers allocated first) and one on set B (allocated beside
 * them, before either was touched), in an order rotated every round. Pages that decide the
 * mode make one set slower in every round; a mode of the machine moves both. */
static char *set_buf[2][2]; /* [set][send, receive] */

static void sets_size(int coll, long size, long it, int rounds)
{
    static double t[2][AB_MAX_ROUNDS];
    for (int r = 0; r < rounds; r++)
        for (int j = 0; j < 2; j++) {
            int v = (r + j) % 2;
            sbuf = set_buf[v][0];
            rbuf = set_buf[v][1];
            t[v][r] = block_us(coll, size, it);
        }
    sbuf = set_buf[0][0];
    rbuf = set_buf[0][1];
    if (rank != 0)
        return;
    double med[2];
    int below = 0;
    for (int v = 0; v < 2; v++) {
        double sorted[AB_MAX_ROUNDS];
        med[v] = median_of(t[v], rounds, sorted);
    }
    for (int r = 0; r < rounds; r++)
        below += t[1][r] < t[0][r];
    printf("%10s %10ld  set A %10.3f  set B %10.3f  B/A %.3f  B below A in %d of %d\n", names[coll], size, med[0],
           med[1], med[1] / med[0], below, rounds);
    printf("{\"coll\":\"%s\",\"size\":%ld,\"nranks\":%d,\"sets\":1,\"iters\":%ld,\"median_us\":[%.3f,%.3f],"
           "\"b_below\":%d,\"rounds\":%d,\"blocks_us\":[",
           names[coll], size, nranks, it, med[0], med[1], below, rounds);
    for (int v = 0; v < 2; v++)
        for (int r = 0; r < rounds; r++)
            printf("%s%.3f", v + r ? "," : "", t[v][r]);
    printf("]}\n");
    fflush(stdout);
}

/* The end of every mode: the probe line, the buffers, MPI_Finalize; main's exit status. */
static int finish(size_t probe_bytes)
{
    if (probe)
        probe_end(probe_bytes);
    buf_free(sbuf);
    buf_free(rbuf);
    if (set_buf[1][0]) {
        buf_free(set_buf[1][0]);
        buf_free(set_buf[1][1]);
    }
    MPI_Finalize();
    return 0;
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: coll [-m MIN:MAX | -s SIZE,SIZE...] [-i ITERS] [-r ROOT] [-c LIST]\n"
                        "       [-k CVAR -v V1,V2[,...] [-R ROUNDS]] [-B] [-P] [-H huge|nohuge] [-S ROUNDS] [-D MS]\n"
                        "  -m  sizes in bytes, MIN doubling up to MAX (default 8:1048576, MIN >= 1)\n"
                        "  -s  these sizes in bytes (each >= 1; reductions move at least one float)\n"
                        "  -i  timed calls per size (default: by size)\n"
                        "  -r  root of Bcast, Reduce, Gather(v), Scatter(v) (default 0)\n"
                        "  -c  comma list of barrier,bcast,reduce,allreduce,allgather,alltoall (default: these),\n"
                        "      ibarrier,ibcast,ireduce,iallreduce,iallgather,ialltoall (each call, then MPI_Wait),\n"
                        "      gather,scatter,gatherv,scatterv,allgatherv,alltoallv,reduce_scatter,scan\n"
                        "  -k  A/B mode: the MPI_T control variable to switch (e.g. RMPI_COLL_SHM_MOVE_LINE)\n"
                        "  -v  its values (integers with k|m|g, or enumeration items), one block each per round\n"
                        "  -R  rounds (default 10); -i: calls per block (default: a fifth of the usual count)\n"
                        "  -B  OSU's timing: a barrier before every call, each timed alone, the mean over ranks\n"
                        "  -P  per rank, a '# probe {...}' line: the buffers' huge pages and physical frames, the\n"
                        "      CPUs, migrations, switches, memcpy/process_vm_readv speed at start and end\n"
                        "  -H  the buffers mmap'd 2 MiB-aligned with MADV_HUGEPAGE (huge) or MADV_NOHUGEPAGE\n"
                        "  -S  two buffer sets inside one job, a block of calls on each per round (-S rounds)\n"
                        "  -D  sleep this many ms after MPI_Init, before the buffers are allocated\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    long min = 8, max = 1L << 20, fixed = 0;
    const char *list = NULL; /* -s: explicit sizes */
    const char *cvar = NULL; /* -k: A/B mode */
    int sets_rounds = 0;     /* -S: two buffer sets */
    long delay_ms = 0;       /* -D: idle this long after MPI_Init, before the buffers */
    char *values = NULL;
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
        } else if (!strcmp(argv[i], "-k") && i + 1 < argc) {
            cvar = argv[++i];
        } else if (!strcmp(argv[i], "-v") && i + 1 < argc) {
            values = argv[++i];
        } else if ((!strcmp(argv[i], "-R") || !strcmp(argv[i], "-S")) && i + 1 < argc) {
            int *rounds = argv[i][1] == 'R' ? &ab_rounds : &sets_rounds; /* A/B mode's or -S's */
            *rounds = atoi(argv[++i]);
            if (*rounds < 1 || *rounds > AB_MAX_ROUNDS) {
                usage();
                MPI_Finalize();
                return 2;
            }
        } else if (!strcmp(argv[i], "-D") && i + 1 < argc) {
            delay_ms = atol(argv[++i]);
        } else if (!strcmp(argv[i], "-P")) {
            probe = 1;
        } else if (!strcmp(argv[i], "-B")) {
            osu_mode = 1;
        } else if (!strcmp(argv[i], "-H") && i + 1 < argc) {
            pages_mode = argv[++i];
            if (strcmp(pages_mode, "huge") && strcmp(pages_mode, "nohuge")) {
                usage();
                MPI_Finalize();
                return 2;
            }
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
    if (delay_ms > 0) {
        struct timespec d = {delay_ms / 1000, delay_ms % 1000 * 1000000L};
        nanosleep(&d, NULL);
    }
    size_t bytes = (size_t)(max < 4 ? 4 : max) * (size_t)nranks;
    sbuf = buf_alloc(bytes);
    rbuf = buf_alloc(bytes);
    vcounts = malloc(2 * sizeof(int) * (size_t)nranks);
    vdispls = vcounts ? vcounts + nranks : NULL;
    if (!vcounts)
        sbuf = NULL;
    if (sets_rounds) {
        set_buf[0][0] = sbuf;
        set_buf[0][1] = rbuf;
        set_buf[1][0] = buf_alloc(bytes);
        set_buf[1][1] = buf_alloc(bytes);
        if (!set_buf[1][0] || !set_buf[1][1])
            sbuf = NULL;
        else {
            memset(set_buf[1][0], 1, bytes);
            memset(set_buf[1][1], 0, bytes);
        }
    }
    if (!sbuf || !rbuf) {
        fprintf(stderr, "coll: cannot allocate %zu bytes\n", 2 * bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(sbuf, 1, bytes);
    memset(rbuf, 0, bytes);
    size_t probe_bytes = (size_t)(max < 4 ? 4 : max); /* one block, as each rank copies per call */
    if (probe)
        probe_start(probe_bytes);

    if (cvar || values) {
        if (!cvar || !values || ab_setup(cvar, values)) {
            usage();
            MPI_Finalize();
            return 2;
        }
        long long keep = ab_read();
        if (rank == 0)
            printf(
                "# coll A/B: %s, %d rounds, us per call (%s per block), %d ranks\n%10s %10s %12s %10s %10s\n",
                cvar, ab_rounds, osu_mode ? "mean over ranks of calls timed alone" : "slowest rank's mean", nranks,
                "coll", "bytes", "value", "median", "min");
        for (int c = 0; c < NCOLL; c++)
            for (int k = 0; want[c] && k < (c == BARRIER || c == IBARRIER ? 1 : nsizes); k++) {
                long size = c == BARRIER || c == IBARRIER ? 0 : sizes[k], it = iterations(size, fixed);
                ab_size(c, size, fixed ? it : it / 5 > 5 ? it / 5 : 5, cvar);
            }
        ab_write(keep);
        MPI_T_cvar_handle_free(&ab_handle);
        MPI_T_finalize();
        return finish(probe_bytes);
    }

    if (sets_rounds) {
        if (rank == 0)
            printf("# coll two buffer sets: %d rounds, us per call (slowest rank's mean per block), %d ranks\n",
                   sets_rounds, nranks);
        for (int c = 0; c < NCOLL; c++)
            for (int k = 0; want[c] && k < (c == BARRIER || c == IBARRIER ? 1 : nsizes); k++) {
                long size = c == BARRIER || c == IBARRIER ? 0 : sizes[k], it = iterations(size, fixed);
                sets_size(c, size, fixed ? it : it / 5 > 5 ? it / 5 : 5, sets_rounds);
            }
        return finish(probe_bytes);
    }

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
            lat[c][k] = timed_calls(c, size, it);
        }
    }
    if (rank == 0) {
        printf("# coll: latency in us (%s), %d ranks\n%10s", osu_mode ? "mean over ranks, calls timed alone after a barrier" : "slowest rank's mean", nranks, "bytes");
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
    return finish(probe_bytes);
}
