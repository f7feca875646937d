/* Channel-kind patterns of the adaptive-transport-selection seed (Sec. V), 1-byte messages:
 *   onetoall: rank 0 ping-pongs with rank 1, 2, ..., n-1 in turn, ITER rounds;
 *   alltoone: every other rank ping-pongs with rank 0 at once (rank 0 answers any source);
 *   repeat:   the pattern changes: 5 phases of 8 x ITER ping-pongs, in each rank 0 takes turns
 *             with a different pair of peers (the seed's repeat alternates onetoall and
 *             alltoone for the same purpose: a mapping that must follow the traffic).
 *   random:   xrc-scalable Fig. 5: every rank exchanges a message with 8 random peers (the
 *             same random permutations on every rank, so each send has its receive), ITER
 *             exchanges in all; throughput = 1 / us_per_pingpong messages per us per rank.
 *   streamsK: ranks 1..K stream to rank 0 at once, ITER windows of 64 1-byte messages each
 *             (the other ranks wait): K busy peers among n - 1, for the memory a policy holds
 *             per busy peer (adaptive: a ring per stream up to h, the queue given back once
 *             every local peer of a process holds one); us_per_pingpong is per message there.
 * One JSON line per pattern on stdout: {"pattern", "ranks", "us_per_pingpong", "pingpongs"}
 * (rank 0's clock; "pingpongs" counts rank 0's ping-pongs including the warm-up, which
 * bench/channels.sh --callgrind divides instruction counts by). Usage: channels
 * [onetoall|alltoone|repeat|random|streamsK|all] [iterations] [settle_us]. bench/channels.sh runs
 * it per policy and adds each rank's channel memory from RMPI_REPORT=json.
 * settle_us > 0 (bench/channels.sh --callgrind): in onetoall, alltoone and repeat rank 0 sleeps
 * that long before each receive, so the answer is there when it looks and its instructions per
 * ping-pong count the path, not the empty polls spent waiting for a peer the scheduler has not
 * run yet (4-32 ranks share 2 cores here); the sleep's own instructions are in settle(), which
 * bench/channels_cg.py takes off. Timed runs leave it 0.
 * channels idle N: rank 0 makes N MPI_Iprobe calls that find nothing while every other rank
 * waits in a barrier, and prints {"ns_per_idle_poll"} (bench/channels.sh --callgrind counts
 * instructions per call). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <mpi.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

static int me, n;

#define PHASES 5
#define GROUP 2

static int repeat_peer(int phase, int j) { return 1 + (phase * GROUP + j) % (n - 1); }

static long total_pp; /* rank 0's ping-pongs, warm-up included */
static long settle_us;

/* Out of line: its inclusive count is what callgrind's reader subtracts. */
__attribute__((noinline)) static void settle(void)
{
    if (settle_us <= 0)
        return;
    struct timespec ts = {settle_us / 1000000, (settle_us % 1000000) * 1000};
    clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
}

static void pingpong_as_zero(int peer, char *b)
{
    MPI_Send(b, 1, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
    settle();
    MPI_Recv(b, 1, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void echo(int count, char *b)
{
    for (int i = 0; i < count; i++) {
        MPI_Recv(b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
    }
}

static double run(const char *pat, int iter)
{
    char b[1] = {1};
    long pp = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    if (!strcmp(pat, "onetoall")) {
        if (me == 0)
            for (int i = 0; i < iter; i++)
                for (int p = 1; p < n; p++, pp++)
                    pingpong_as_zero(p, b);
        else
            echo(iter, b);
    } else if (!strcmp(pat, "alltoone")) {
        if (me == 0) {
            for (long i = 0; i < (long)iter * (n - 1); i++, pp++) {
                MPI_Status st;
                settle();
                MPI_Recv(b, 1, MPI_CHAR, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
                MPI_Send(b, 1, MPI_CHAR, st.MPI_SOURCE, 0, MPI_COMM_WORLD);
            }
        } else {
            for (int i = 0; i < iter; i++) {
                MPI_Send(b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
                MPI_Recv(b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
    } else if (!strcmp(pat, "random")) {
        /* 8 rounds per iteration; in round k every rank sends to perm_k[me] and receives
         * from perm_k^-1[me]; the permutations come from one seed, so all ranks agree */
        enum { FAN = 8 };
        int *to = malloc(sizeof(int) * (size_t)n * 2), *from = to + n;
        unsigned seed = 12345;
        char rb[1];
        for (int i = 0; i < (iter + FAN - 1) / FAN; i++) {
            for (int k = 0; k < FAN; k++) {
                for (int j = 0; j < n; j++)
                    to[j] = j;
                for (int j = n - 1; j > 0; j--) { /* Fisher-Yates with a common LCG */
                    seed = seed * 1103515245u + 12345u;
                    int r = (int)((seed >> 8) % (unsigned)(j + 1)), x = to[j];
                    to[j] = to[r];
                    to[r] = x;
                }
                for (int j = 0; j < n; j++)
                    from[to[j]] = j;
                MPI_Sendrecv(b, 1, MPI_CHAR, to[me], 1, rb, 1, MPI_CHAR, from[me], 1, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                pp++;
            }
        }
        free(to);
    } else if (!strncmp(pat, "streams", 7)) {
        enum { W = 64 };
        int k = atoi(pat + 7);
        k = k < 1 ? 1 : k > n - 1 ? n - 1 : k;
        char wb[W] = {0};
        MPI_Request rq[W];
        if (me == 0) {
            for (long i = 0; i < (long)iter * W * k; i++, pp++)
                MPI_Recv(b, 1, MPI_CHAR, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (me <= k) {
            for (int i = 0; i < iter; i++) {
                for (int j = 0; j < W; j++)
                    MPI_Isend(&wb[j], 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, &rq[j]);
                MPI_Waitall(W, rq, MPI_STATUSES_IGNORE);
            }
        }
    } else { /* repeat: PHASES phases; in phase k rank 0 ping-pongs with GROUP peers (the
                * k-th group of consecutive ranks, round-robin), 8 * iter ping-pongs in all */
        long per = 8L * iter;
        if (me == 0) {
            for (int k = 0; k < PHASES; k++)
                for (long i = 0; i < per; i++, pp++)
                    pingpong_as_zero(repeat_peer(k, (int)(i % GROUP)), b);
        } else {
            long mine = 0;
            for (int k = 0; k < PHASES; k++)
                for (int j = 0; j < GROUP; j++)
                    mine += repeat_peer(k, j) == me ? (per - j + GROUP - 1) / GROUP : 0;
            echo((int)mine, b);
        }
    }
    t = MPI_Wtime() - t;
    MPI_Barrier(MPI_COMM_WORLD);
    total_pp += pp;
    return pp ? t * 1e6 / (double)pp : 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *which = argc > 1 ? argv[1] : "all";
    int iter = argc > 2 ? atoi(argv[2]) : 200;
    settle_us = argc > 3 ? atol(argv[3]) : 0;
    const char *pats[] = {"onetoall", "alltoone", "repeat", "random"};
    if (n < 2) {
        MPI_Finalize();
        return 0;
    }
    if (!strcmp(which, "idle")) {
        int flag;
        double t = MPI_Wtime();
        for (int i = 0; me == 0 && i < iter; i++)
            MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        t = MPI_Wtime() - t;
        if (me == 0)
            printf("{\"pattern\": \"idle\", \"ranks\": %d, \"ns_per_idle_poll\": %.1f}\n", n,
                   iter ? t * 1e9 / iter : 0);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    }
    if (!strncmp(which, "streams", 7)) {
        run(which, iter / 10 + 1);
        double us = run(which, iter);
        if (me == 0)
            printf("{\"pattern\": \"%s\", \"ranks\": %d, \"us_per_pingpong\": %.3f, \"pingpongs\": %ld}\n", which, n,
                   us, total_pp);
    }
    for (int i = 0; i < 4; i++) {
        if (strcmp(which, "all") && strcmp(which, pats[i]))
            continue;
        total_pp = 0;
        run(pats[i], iter / 10 + 1); /* warm-up */
        double us = run(pats[i], iter);
        if (me == 0)
            printf("{\"pattern\": \"%s\", \"ranks\": %d, \"us_per_pingpong\": %.3f, \"pingpongs\": %ld}\n", pats[i], n,
                   us, total_pp);
    }
    MPI_Finalize();
    return 0;
}
