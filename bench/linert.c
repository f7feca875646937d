/*
 * Line round trip between two CPUs: tells which state the machine is in before a timed run.
 *
 * The 2-vCPU machine the benchmarks run on switches, for seconds to minutes at a time,
 * between a state where a cache line passed between its CPUs costs about three times more
 * than in the other (8 B MPI ping-pong 0.11 against 0.30 us, for every MPI; see
 * docs/results/coll.md). A benchmark's figures mean little without the state they were
 * taken in, so this program passes one line between two threads pinned to two CPUs and
 * prints the round trip, without MPI, in well under a second.
 *
 * linert [-a CPU] [-b CPU] [-n ROUNDS] [-r REPEATS] [-i INTERVAL_MS]
 * One JSON line per repeat: {"rt_ns":..., "cpus":[a,b]} where rt_ns is the median of 9
 * batches of ROUNDS/9 round trips (default 90000 round trips, CPUs 0 and 1, 1 repeat).
 * Exit status 0, or 2 on bad arguments or when the CPUs cannot be pinned.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BATCHES 9

/* The ball and the echo live on one line: each side waits for the other's value. */
static _Alignas(64) _Atomic long line;
static long rounds_per_batch;
static int cpu_b;
static _Alignas(64) _Atomic int pin_failed; /* its own line, read-only unless pinning fails */

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *echo(void *arg)
{
    (void)arg;
    if (pin(cpu_b) != 0) {
        atomic_store(&pin_failed, 1);
        atomic_store_explicit(&line, -1, memory_order_release);
        return NULL;
    }
    long total = rounds_per_batch * BATCHES;
    for (long i = 0; i < total; i++) {
        long want = 2 * i + 1;
        while (atomic_load_explicit(&line, memory_order_acquire) != want) {
        }
        atomic_store_explicit(&line, want + 1, memory_order_release);
    }
    return NULL;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One measurement: BATCHES timed batches, the median batch's ns per round trip. */
static int measure(int cpu_a, double *rt_ns)
{
    atomic_store(&line, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, echo, NULL) != 0)
        return -1;
    if (pin(cpu_a) != 0) {
        atomic_store(&pin_failed, 1);
        /* let the echo thread run to its end so it can be joined */
    }
    double per[BATCHES];
    long v = 0;
    for (int b = 0; b < BATCHES; b++) {
        double t0 = now_ns();
        for (long i = 0; i < rounds_per_batch; i++) {
            atomic_store_explicit(&line, v + 1, memory_order_release);
            long got;
            while ((got = atomic_load_explicit(&line, memory_order_acquire)) != v + 2) {
                if (got < 0 || atomic_load_explicit(&pin_failed, memory_order_relaxed))
                    goto out;
            }
            v += 2;
        }
        per[b] = (now_ns() - t0) / (double)rounds_per_batch;
    }
out:
    pthread_join(t, NULL);
    if (atomic_load(&pin_failed))
        return -1;
    qsort(per, BATCHES, sizeof per[0], cmp_double);
    *rt_ns = per[BATCHES / 2];
    return 0;
}

int main(int argc, char **argv)
{
    int cpu_a = 0, repeats = 1, interval_ms = 0;
    long rounds = 90000;
    cpu_b = 1;
    int opt;
    while ((opt = getopt(argc, argv, "a:b:n:r:i:")) != -1) {
        char *end;
        long val = strtol(optarg, &end, 10);
        if (*end != '\0' || val < 0) {
            fprintf(stderr, "linert: bad value for -%c: %s\n", opt, optarg);
            return 2;
        }
        switch (opt) {
        case 'a': cpu_a = (int)val; break;
        case 'b': cpu_b = (int)val; break;
        case 'n': rounds = val; break;
        case 'r': repeats = (int)val; break;
        case 'i': interval_ms = (int)val; break;
        default:
            fprintf(stderr, "usage: linert [-a CPU] [-b CPU] [-n ROUNDS] [-r REPEATS] "
                            "[-i INTERVAL_MS]\n");
            return 2;
        }
    }
    if (rounds < BATCHES || repeats < 1 || cpu_a == cpu_b) {
        fprintf(stderr, "linert: need ROUNDS >= %d, REPEATS >= 1 and two different CPUs\n",
                BATCHES);
        return 2;
    }
    rounds_per_batch = rounds / BATCHES;
    for (int r = 0; r < repeats; r++) {
        double rt;
        if (measure(cpu_a, &rt) != 0) {
            fprintf(stderr, "linert: cannot pin threads to CPUs %d and %d\n", cpu_a, cpu_b);
            return 2;
        }
        printf("{\"rt_ns\":%.1f,\"cpus\":[%d,%d]}\n", rt, cpu_a, cpu_b);
        fflush(stdout);
        if (interval_ms > 0 && r + 1 < repeats)
            usleep((useconds_t)interval_ms * 1000);
    }
    return 0;
}
