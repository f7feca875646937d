/* Channel-kind patterns of the adaptive-transport-selection seed (Sec. V), 1-byte messages:
 *   onetoall: rank 0 ping-pongs with rank 1, 2, ..., n-1 in turn, ITER rounds;
 *   alltoone: every other rank ping-pongs with rank 0 at once (rank 0 answers any source);
 *   repeat:   rank 0 ping-pongs BURST times with one peer, then BURST times with the next.
 * One JSON line per pattern on stdout: {"pattern", "ranks", "us_per_pingpong"} (rank 0's
 * clock). Usage: channels [onetoall|alltoone|repeat|all] [iterations]. bench/channels.sh
 * runs it per policy and adds each rank's channel memory from RMPI_REPORT=json.
 * channels idle N: rank 0 makes N MPI_Iprobe calls that find nothing while every other rank
 * waits in a barrier (bench/channels.sh --idle counts instructions per call with callgrind). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BURST 100

static int me, n;

static void pingpong_as_zero(int peer, char *b)
{
    MPI_Send(b, 1, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
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
                MPI_Recv(b, 1, MPI_CHAR, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &st);
                MPI_Send(b, 1, MPI_CHAR, st.MPI_SOURCE, 0, MPI_COMM_WORLD);
            }
        } else {
            for (int i = 0; i < iter; i++) {
                MPI_Send(b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
                MPI_Recv(b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
    } else { /* repeat: bursts with one peer at a time; iter rounds cover the peers */
        int rounds = iter * (n - 1) / BURST;
        if (rounds < n - 1)
            rounds = n - 1;
        if (me == 0) {
            for (int r = 0; r < rounds; r++)
                for (int i = 0; i < BURST; i++, pp++)
                    pingpong_as_zero(1 + r % (n - 1), b);
        } else {
            int mine = 0;
            for (int r = 0; r < rounds; r++)
                mine += 1 + r % (n - 1) == me;
            echo(mine * BURST, b);
        }
    }
    t = MPI_Wtime() - t;
    MPI_Barrier(MPI_COMM_WORLD);
    return pp ? t * 1e6 / (double)pp : 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *which = argc > 1 ? argv[1] : "all";
    int iter = argc > 2 ? atoi(argv[2]) : 200;
    const char *pats[] = {"onetoall", "alltoone", "repeat"};
    if (n < 2) {
        MPI_Finalize();
        return 0;
    }
    if (!strcmp(which, "idle")) {
        int flag;
        for (int i = 0; me == 0 && i < iter; i++)
            MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
        return 0;
    }
    for (int i = 0; i < 3; i++) {
        if (strcmp(which, "all") && strcmp(which, pats[i]))
            continue;
        run(pats[i], iter / 10 + 1); /* warm-up */
        double us = run(pats[i], iter);
        if (me == 0)
            printf("{\"pattern\": \"%s\", \"ranks\": %d, \"us_per_pingpong\": %.3f}\n", pats[i], n, us);
    }
    MPI_Finalize();
    return 0;
}
