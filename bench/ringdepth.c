/*
 * A ring of message slots between two threads pinned to CPUs 0 and 1, no MPI: how the
 * cost of a message copied in by one CPU and out by the other depends on how many slots
 * the writer may run ahead (the depth of the segment's Bcast ring, coll/shm.c deep_of).
 *
 * The writer copies SIZE bytes into slot k % DEPTH (slots STRIDE bytes apart, the data
 * after a 64-byte line) and stores k in the slot's flag (a line of its own, release); the
 * reader waits for the flag, copies the data out and stores k in one acknowledgement line;
 * the writer reuses a slot once the acknowledgement reached k - DEPTH. The time per
 * message over N messages is what a stream of back-to-back Bcasts from one root costs.
 *
 * ringdepth [-d DEPTH,...] [-s SIZE,...] [-e STRIDE] [-n MESSAGES] [-r REPEATS]
 * One JSON line per depth, size and repeat: {"depth":..,"size":..,"stride":..,"us":..}.
 * STRIDE 0 (default): the size plus a line, rounded up to 4 KiB. Exit status 2 on bad
 * arguments or when the CPUs cannot be pinned.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct ring {
    char *slots, *src, *dst;
    _Atomic uint64_t *flags; /* one 128-byte pair of lines per slot */
    size_t size, stride;
    uint64_t depth, n;
    _Alignas(128) _Atomic uint64_t ack;
} ring_t;

static int pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return sched_setaffinity(0, sizeof s, &s);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static _Atomic uint64_t *flag_of(ring_t *r, uint64_t k) { return r->flags + (k % r->depth) * 16; }

static void *reader(void *arg)
{
    ring_t *r = arg;
    if (pin(1))
        return (void *)1;
    for (uint64_t k = 1; k <= r->n; k++) {
        while (atomic_load_explicit(flag_of(r, k), memory_order_acquire) < k)
            __builtin_ia32_pause();
        memcpy(r->dst, r->slots + (k % r->depth) * r->stride + 64, r->size);
        atomic_store_explicit(&r->ack, k, memory_order_release);
    }
    return NULL;
}

static double run(ring_t *r)
{
    memset(r->slots, 0, r->depth * r->stride);
    memset((void *)r->flags, 0, r->depth * 128);
    atomic_store(&r->ack, 0);
    pthread_t t;
    if (pthread_create(&t, NULL, reader, r))
        return -1;
    double t0 = now();
    uint64_t seen = 0;
    for (uint64_t k = 1; k <= r->n; k++) {
        while (k > r->depth && seen < k - r->depth) {
            seen = atomic_load_explicit(&r->ack, memory_order_acquire);
            if (seen < k - r->depth)
                __builtin_ia32_pause();
        }
        memcpy(r->slots + (k % r->depth) * r->stride + 64, r->src, r->size);
        atomic_store_explicit(flag_of(r, k), k, memory_order_release);
    }
    void *rc;
    pthread_join(t, &rc);
    return rc ? -1 : (now() - t0) / (double)r->n * 1e6;
}

static int parse_list(char *s, long *out, int max)
{
    int n = 0;
    for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ",")) {
        char *end;
        out[n] = strtol(tok, &end, 10);
        if (*end || out[n] <= 0)
            return -1;
        n++;
    }
    return n;
}

int main(int argc, char **argv)
{
    long depths[32] = {4, 8, 16, 32, 64}, sizes[32] = {1024, 4096, 16384};
    int nd = 5, ns = 3, reps = 3;
    long stride = 0, n = 200000;
    for (int i = 1; i < argc; i++) {
        int more = i + 1 < argc;
        if (!strcmp(argv[i], "-d") && more)
            nd = parse_list(argv[++i], depths, 32);
        else if (!strcmp(argv[i], "-s") && more)
            ns = parse_list(argv[++i], sizes, 32);
        else if (!strcmp(argv[i], "-e") && more)
            stride = atol(argv[++i]);
        else if (!strcmp(argv[i], "-n") && more)
            n = atol(argv[++i]);
        else if (!strcmp(argv[i], "-r") && more)
            reps = atoi(argv[++i]);
        else
            nd = -1;
        if (nd <= 0 || ns <= 0 || stride < 0 || n <= 0 || reps <= 0) {
            fprintf(stderr, "usage: ringdepth [-d DEPTH,...] [-s SIZE,...] [-e STRIDE] [-n MESSAGES] [-r REPEATS]\n");
            return 2;
        }
    }
    if (pin(0)) {
        perror("ringdepth: pinning to CPU 0");
        return 2;
    }
    for (int s = 0; s < ns; s++)
        for (int d = 0; d < nd; d++) {
            ring_t *r = aligned_alloc(128, sizeof *r);
            size_t size = (size_t)sizes[s], st = stride ? (size_t)stride : (size + 64 + 4095) / 4096 * 4096;
            if (!r || st < size + 64) {
                fprintf(stderr, "ringdepth: stride %zu below the size %zu plus a line\n", st, size);
                return 2;
            }
            *r = (ring_t){.size = size, .stride = st, .depth = (uint64_t)depths[d], .n = (uint64_t)n};
            r->slots = aligned_alloc(4096, r->depth * st);
            r->flags = aligned_alloc(4096, (r->depth * 128 + 4095) / 4096 * 4096);
            r->src = aligned_alloc(64, (size + 63) / 64 * 64);
            r->dst = aligned_alloc(64, (size + 63) / 64 * 64);
            if (!r->slots || !r->flags || !r->src || !r->dst)
                return 2;
            memset(r->src, 1, size);
            for (int k = 0; k < reps; k++) {
                double us = run(r);
                if (us < 0) {
                    fprintf(stderr, "ringdepth: the reader could not be pinned to CPU 1\n");
                    return 2;
                }
                printf("{\"depth\":%ld,\"size\":%zu,\"stride\":%zu,\"us\":%.3f}\n", depths[d], size, st, us);
                fflush(stdout);
            }
            free(r->slots);
            free((void *)r->flags);
            free(r->src);
            free(r->dst);
            free(r);
        }
    return 0;
}
