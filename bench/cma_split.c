/*
 * One cross-memory copy by one process against the same copy split between two processes.
 *
 * A put of N bytes into a Win_create or dynamic window on this node is one process_vm_writev
 * by the origin (MPICH and Open MPI do the same). While it runs the target often sits inside
 * MPI with its core idle. This probe prices splitting the copy: the origin posts a descriptor
 * of the tail in shared memory, writes the head with process_vm_writev, and the target, which
 * polls the descriptor as a progress engine would, reads the tail from the origin's buffer
 * with process_vm_readv at the same time. The origin then takes the tail back with one
 * compare-and-swap if the target has not started it, else waits for its done word.
 *
 * Modes, each timed as a loop of complete copies (put_lat's shape), alternated per round:
 *   whole  one process_vm_writev of N bytes by the origin, the target spinning;
 *   split  the protocol above, the target polling the descriptor;
 *   claim  the protocol with the target not looking (busy outside MPI): the origin claims
 *          the tail back each time, so this is the protocol's cost when it cannot help;
 *   both   both halves started at once on a go word, no descriptor (the memory system's
 *          bound for two copiers).
 *
 * cma_split [-s SIZES] [-f TARGET_PERCENT] [-r ROUNDS] [-t MS_PER_ROUND] [-o OFFSET] [-a CPU] [-b CPU]
 * SIZES comma-separated bytes (default 16 KiB-1 MiB by powers of 2); TARGET_PERCENT the
 * target's share of a split (default 50); OFFSET added to both buffers' page-aligned
 * addresses (default 16, bench/osc's malloc'd buffers). One JSON line per (size, mode): the
 * per-copy time in us, min and median over the rounds. Exit 0, 1 when a copy fails or the
 * data is wrong, 2 on bad arguments.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXSIZES 32
#define MAXROUNDS 64
#define ALIGNED _Alignas(64)

enum { IDLE, POSTED, TAKEN, DONE, CLAIMED };
enum { M_WHOLE, M_SPLIT, M_CLAIM, M_BOTH, NMODES };
static const char *mode_name[NMODES] = {"whole", "split", "claim", "both"};

struct shared {
    ALIGNED _Atomic uint32_t state; /* descriptor: IDLE/POSTED/TAKEN/DONE/CLAIMED */
    uint64_t src, dst, len;
    int err;
    ALIGNED _Atomic uint32_t go; /* M_BOTH: a round number the target copies its half for */
    _Atomic uint32_t gone;       /* M_BOTH: the last round the target finished */
    ALIGNED _Atomic int look;    /* 0: the target ignores the descriptor (M_CLAIM) */
    _Atomic int quit;
    _Atomic int ready;
    uint64_t check; /* the target's sum of its buffer, on request */
    _Atomic int want_check;
};

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static int cma(pid_t pid, int write, void *local, uint64_t remote, size_t len)
{
    struct iovec l = {local, len}, r = {(void *)(uintptr_t)remote, len};
    ssize_t n = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);
    return n == (ssize_t)len ? 0 : (n < 0 ? errno : EIO);
}

static uint64_t sum(const unsigned char *p, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i++)
        s = s * 31 + p[i];
    return s;
}

/* The target: polls like a progress engine inside MPI. */
static void target(struct shared *sh, pid_t origin, unsigned char *dst, size_t maxlen, int half_pct)
{
    memset(dst, 0, maxlen);
    atomic_store(&sh->ready, 1);
    uint32_t seen = 0;
    while (!atomic_load_explicit(&sh->quit, memory_order_relaxed)) {
        if (atomic_load_explicit(&sh->look, memory_order_relaxed) &&
            atomic_load_explicit(&sh->state, memory_order_relaxed) == POSTED) {
            uint32_t e = POSTED;
            if (atomic_compare_exchange_strong_explicit(&sh->state, &e, TAKEN, memory_order_acquire,
                                                        memory_order_relaxed)) {
                sh->err = cma(origin, 0, (void *)(uintptr_t)sh->dst, sh->src, sh->len);
                atomic_store_explicit(&sh->state, DONE, memory_order_release);
            }
        }
        uint32_t g = atomic_load_explicit(&sh->go, memory_order_acquire);
        if (g != seen) {
            seen = g;
            size_t len = sh->len, t = len * half_pct / 100, off = len - t;
            sh->err = cma(origin, 0, (void *)(uintptr_t)(sh->dst + off), sh->src + off, t);
            atomic_store_explicit(&sh->gone, g, memory_order_release);
        }
        if (atomic_load_explicit(&sh->want_check, memory_order_acquire)) {
            sh->check = sum(dst, sh->len);
            atomic_store_explicit(&sh->want_check, 0, memory_order_release);
        }
        relax();
    }
}

/* One copy of len bytes by the origin in the given mode; 0 or an errno. */
static int copy_once(struct shared *sh, pid_t t, int mode, unsigned char *src, unsigned char *dst, size_t len, int pct,
                     uint32_t *round)
{
    size_t tl = len * pct / 100, off = len - tl;
    int rc;
    switch (mode) {
    case M_WHOLE: return cma(t, 1, src, (uint64_t)(uintptr_t)dst, len);
    case M_BOTH:
        sh->src = (uint64_t)(uintptr_t)src;
        sh->dst = (uint64_t)(uintptr_t)dst;
        sh->len = len;
        atomic_store_explicit(&sh->go, ++*round, memory_order_release);
        rc = cma(t, 1, src, (uint64_t)(uintptr_t)dst, off);
        while (atomic_load_explicit(&sh->gone, memory_order_acquire) != *round)
            relax();
        return rc ? rc : sh->err;
    default: /* M_SPLIT, M_CLAIM: post the tail, write the head, claim the tail or wait */
        sh->src = (uint64_t)(uintptr_t)(src + off);
        sh->dst = (uint64_t)(uintptr_t)(dst + off);
        sh->len = tl;
        atomic_store_explicit(&sh->state, POSTED, memory_order_release);
        rc = cma(t, 1, src, (uint64_t)(uintptr_t)dst, off);
        uint32_t e = POSTED;
        if (atomic_compare_exchange_strong_explicit(&sh->state, &e, CLAIMED, memory_order_relaxed,
                                                    memory_order_relaxed)) {
            int rc2 = cma(t, 1, src + off, (uint64_t)(uintptr_t)(dst + off), tl);
            rc = rc ? rc : rc2;
        } else {
            while (atomic_load_explicit(&sh->state, memory_order_acquire) != DONE)
                relax();
            rc = rc ? rc : sh->err;
        }
        atomic_store_explicit(&sh->state, IDLE, memory_order_relaxed);
        return rc;
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    size_t sizes[MAXSIZES];
    int nsizes = 0, pct = 50, rounds = 5, cpu_a = 0, cpu_b = 1;
    double ms = 60;
    size_t offset = 16;
    int c;
    while ((c = getopt(argc, argv, "s:f:r:t:o:a:b:")) != -1) {
        switch (c) {
        case 's':
            for (char *p = strtok(optarg, ","); p && nsizes < MAXSIZES; p = strtok(NULL, ","))
                sizes[nsizes++] = strtoull(p, NULL, 0);
            break;
        case 'f': pct = atoi(optarg); break;
        case 'r': rounds = atoi(optarg); break;
        case 't': ms = atof(optarg); break;
        case 'o': offset = strtoull(optarg, NULL, 0); break;
        case 'a': cpu_a = atoi(optarg); break;
        case 'b': cpu_b = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: cma_split [-s SIZES] [-f PCT] [-r ROUNDS] [-t MS] [-o OFFSET] [-a CPU] [-b CPU]\n");
            return 2;
        }
    }
    if (!nsizes)
        for (size_t s = 16384; s <= 1048576; s *= 2)
            sizes[nsizes++] = s;
    if (pct < 0 || pct > 100 || rounds < 1 || rounds > MAXROUNDS)
        return 2;
    size_t maxlen = 0;
    for (int i = 0; i < nsizes; i++)
        maxlen = sizes[i] > maxlen ? sizes[i] : maxlen;
    size_t maplen = maxlen + offset + 4096;

    struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    unsigned char *srcmap = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *dstmap = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED || srcmap == MAP_FAILED || dstmap == MAP_FAILED)
        return 1;
    unsigned char *src = srcmap + offset, *dst = dstmap + offset;
    atomic_store(&sh->look, 1);
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    pid_t origin = getpid();
    pid_t t = fork();
    if (t < 0)
        return 1;
    if (t == 0) {
        pin(cpu_b);
        target(sh, origin, dst, maxlen, pct);
        _exit(0);
    }
    pin(cpu_a);
    for (size_t i = 0; i < maxlen; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    while (!atomic_load(&sh->ready))
        relax();

    int bad = 0;
    uint32_t round = 0;
    for (int si = 0; si < nsizes && !bad; si++) {
        size_t len = sizes[si];
        /* data check per mode: clear the target's copy through a zero write, copy, compare sums */
        static unsigned char zero[1 << 21];
        for (int m = 0; m < NMODES; m++) {
            atomic_store(&sh->look, m != M_CLAIM);
            if (cma(t, 1, zero, (uint64_t)(uintptr_t)dst, len) || copy_once(sh, t, m, src, dst, len, pct, &round)) {
                fprintf(stderr, "cma_split: copy failed (%s)\n", strerror(errno));
                bad = 1;
                break;
            }
            sh->len = len;
            atomic_store_explicit(&sh->want_check, 1, memory_order_release);
            while (atomic_load_explicit(&sh->want_check, memory_order_acquire))
                relax();
            if (sh->check != sum(src, len)) {
                fprintf(stderr, "cma_split: %zu bytes, mode %s: target data wrong\n", len, mode_name[m]);
                bad = 1;
            }
        }
        /* iterations per round: ms worth of whole copies */
        atomic_store(&sh->look, 1);
        double t0 = now_us();
        int n = 0;
        while (now_us() - t0 < 5000)
            copy_once(sh, t, M_WHOLE, src, dst, len, pct, &round), n++;
        long iters = (long)(n * ms / 5.0) + 1;
        double per[NMODES][MAXROUNDS];
        for (int r = 0; r < rounds && !bad; r++)
            for (int m = 0; m < NMODES; m++) {
                atomic_store(&sh->look, m != M_CLAIM);
                double a = now_us();
                for (long i = 0; i < iters; i++)
                    if (copy_once(sh, t, m, src, dst, len, pct, &round)) {
                        bad = 1;
                        break;
                    }
                per[m][r] = (now_us() - a) / iters;
            }
        for (int m = 0; m < NMODES && !bad; m++) {
            double v[MAXROUNDS];
            memcpy(v, per[m], rounds * sizeof *v);
            qsort(v, rounds, sizeof *v, cmp_d);
            printf("{\"bytes\":%zu,\"mode\":\"%s\",\"target_pct\":%d,\"us_min\":%.3f,\"us_med\":%.3f,\"iters\":%ld}\n",
                   len, mode_name[m], pct, v[0], v[rounds / 2], iters);
        }
        fflush(stdout);
    }
    atomic_store(&sh->quit, 1);
    waitpid(t, NULL, 0);
    return bad;
}
