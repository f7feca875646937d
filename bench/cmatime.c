/*
 * An LD_PRELOAD shim that times every process_vm_readv / process_vm_writev and every
 * memcpy / memmove of at least CMATIME_MIN bytes (64 KiB) a process makes, for any MPI
 * (RailMPI, MPICH, Open MPI): where the time of a large single-copy collective goes, and
 * in which order each rank copies (the peer's block, its own). CLOCK_MONOTONIC is one clock
 * for every process, so the events of the two ranks line up.
 *
 *   gcc -O2 -shared -fPIC -o cmatime.so bench/cmatime.c -ldl
 *   LD_PRELOAD=$PWD/cmatime.so CMATIME_OUT=/tmp/ct mpiexec -n 2 ...
 *
 * Each process writes CMATIME_OUT.PID at exit: per kind (readv, writev, memcpy) the calls,
 * bytes per call (p50), time per call (p50, us) and GB/s, then the last CMATIME_TAIL (24)
 * events as "kind start_us end_us bytes iov_local iov_remote" with start relative to the
 * first event recorded. Calls from inside the C library (its own memcpy) are not seen, and
 * memcpy calls the compiler inlined are not either.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define NEV 65536
enum { K_READ, K_WRITE, K_COPY, NK };
static const char *const kname[NK] = {"readv", "writev", "memcpy"};
typedef struct {
    int kind, nl, nr;
    size_t bytes;
    double t0, t1;
} ev_t;
static ev_t ev[NEV];
static unsigned long nev;
static size_t min_bytes = 64 * 1024;
static int on;

typedef ssize_t (*pvm_t)(pid_t, const struct iovec *, unsigned long, const struct iovec *, unsigned long,
                         unsigned long);
typedef void *(*cpy_t)(void *, const void *, size_t);
static pvm_t real_read, real_write;
static cpy_t real_memcpy, real_memmove;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* memcpy before the constructor ran (the loader, dlsym itself): a plain loop */
static void *slow_copy(void *d, const void *s, size_t n)
{
    char *dd = d;
    const char *ss = s;
    if (dd < ss)
        for (size_t i = 0; i < n; i++)
            dd[i] = ss[i];
    else
        for (size_t i = n; i-- > 0;)
            dd[i] = ss[i];
    return d;
}

__attribute__((constructor)) static void init(void)
{
    real_read = (pvm_t)dlsym(RTLD_NEXT, "process_vm_readv");
    real_write = (pvm_t)dlsym(RTLD_NEXT, "process_vm_writev");
    real_memcpy = (cpy_t)dlsym(RTLD_NEXT, "memcpy");
    real_memmove = (cpy_t)dlsym(RTLD_NEXT, "memmove");
    const char *m = getenv("CMATIME_MIN");
    if (m)
        min_bytes = strtoull(m, NULL, 0);
    on = getenv("CMATIME_OUT") != NULL;
}

static void note(int kind, size_t bytes, int nl, int nr, double t0, double t1)
{
    unsigned long i = __atomic_fetch_add(&nev, 1, __ATOMIC_RELAXED);
    ev_t *e = &ev[i % NEV];
    e->kind = kind, e->bytes = bytes, e->nl = nl, e->nr = nr, e->t0 = t0, e->t1 = t1;
}

static size_t iov_bytes(const struct iovec *v, unsigned long n)
{
    size_t b = 0;
    for (unsigned long i = 0; i < n; i++)
        b += v[i].iov_len;
    return b;
}

static ssize_t pvm(int kind, pid_t pid, const struct iovec *l, unsigned long nl, const struct iovec *r,
                   unsigned long nr, unsigned long flags)
{
    pvm_t f = kind == K_READ ? real_read : real_write;
    if (!on)
        return f(pid, l, nl, r, nr, flags);
    double t0 = now_us();
    ssize_t rc = f(pid, l, nl, r, nr, flags);
    double t1 = now_us();
    note(kind, iov_bytes(l, nl), (int)nl, (int)nr, t0, t1);
    return rc;
}

ssize_t process_vm_readv(pid_t pid, const struct iovec *l, unsigned long nl, const struct iovec *r, unsigned long nr,
                         unsigned long flags)
{
    return pvm(K_READ, pid, l, nl, r, nr, flags);
}

ssize_t process_vm_writev(pid_t pid, const struct iovec *l, unsigned long nl, const struct iovec *r, unsigned long nr,
                          unsigned long flags)
{
    return pvm(K_WRITE, pid, l, nl, r, nr, flags);
}

static void *copy(cpy_t f, void *d, const void *s, size_t n)
{
    if (!f)
        return slow_copy(d, s, n);
    if (!on || n < min_bytes)
        return f(d, s, n);
    double t0 = now_us();
    void *rc = f(d, s, n);
    note(K_COPY, n, 1, 1, t0, now_us());
    return rc;
}

void *memcpy(void *d, const void *s, size_t n) { return copy(real_memcpy, d, s, n); }
void *memmove(void *d, const void *s, size_t n) { return copy(real_memmove, d, s, n); }

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

__attribute__((destructor)) static void fini(void)
{
    const char *out = getenv("CMATIME_OUT");
    if (!out || !nev)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", out, (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    unsigned long n = nev < NEV ? nev : NEV, first = nev - n;
    static double dur[NEV], by[NEV];
    for (int k = 0; k < NK; k++) {
        unsigned long m = 0;
        double tb = 0, tt = 0;
        for (unsigned long i = 0; i < n; i++) {
            const ev_t *e = &ev[(first + i) % NEV];
            if (e->kind != k)
                continue;
            dur[m] = e->t1 - e->t0, by[m] = (double)e->bytes, m++;
            tb += (double)e->bytes, tt += e->t1 - e->t0;
        }
        if (!m)
            continue;
        qsort(dur, m, sizeof *dur, cmp_d);
        qsort(by, m, sizeof *by, cmp_d);
        fprintf(f, "%s: %lu calls (of the last %lu events), bytes p50 %.0f, us p50 %.2f p10 %.2f p90 %.2f, %.2f GB/s\n",
                kname[k], m, n, by[m / 2], dur[m / 2], dur[m / 10], dur[m * 9 / 10], tt > 0 ? tb / tt / 1e3 : 0);
    }
    const char *tl = getenv("CMATIME_TAIL");
    unsigned long tail = tl ? strtoul(tl, NULL, 0) : 24;
    if (tail > n)
        tail = n;
    double base = ev[(nev - tail) % NEV].t0;
    for (unsigned long i = nev - tail; i < nev; i++) {
        const ev_t *e = &ev[i % NEV];
        fprintf(f, "%s %.2f %.2f %zu %d %d abs %.2f\n", kname[e->kind], e->t0 - base, e->t1 - base, e->bytes, e->nl,
                e->nr, e->t0);
    }
    fclose(f);
}
