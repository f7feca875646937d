/* Senders that outrun their receiver (rmpi_core_throttle, RMPI_SEND_HELD_MAX).
 *
 * held: every rank but 0 sends 4,000 eager messages of 4 KiB (16 MB each) with MPI_Send while
 * rank 0 sleeps 300 ms before its first receive. The ring to rank 0 holds far less than that,
 * so with backpressure no sender can have finished before rank 0 woke: a sender's loop ends
 * after rank 0's wake-up (MPI_Wtime: RailMPI's reads CLOCK_MONOTONIC, one clock for the
 * node). Without it the frames pile up in the sender's own queue and its loop ends while
 * rank 0 still sleeps. With RMPI_SEND_HELD_MAX=0 (no backpressure) only the data are
 * checked.
 *
 * both: every pair of ranks floods each other at once with blocking sends before either
 * receives (unsafe by the standard, but every MPI buffers eager messages): each waiting
 * sender must keep receiving, or the two wait for each other for ever. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>
#include <time.h> /* nanosleep */

#define NMSG 4000
#define MSG 4096

/* message i from rank r: its first and last 8 bytes say so, the rest is the pattern */
static void fill(char *b, int r, int i)
{
    mtest_fill(b, MSG, (unsigned)(r * NMSG + i));
    long v = (long)r * NMSG + i;
    memcpy(b, &v, sizeof v);
    memcpy(b + MSG - sizeof v, &v, sizeof v);
}

static int check(const char *b, int r, int i)
{
    long v = (long)r * NMSG + i, a, z;
    memcpy(&a, b, sizeof a);
    memcpy(&z, b + MSG - sizeof z, sizeof z);
    return a == v && z == v && b[MSG / 2] == (char)mtest_pattern((unsigned)(r * NMSG + i), MSG / 2);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* every rail counts what it holds (rmpi_net_held: shm's pending frames, tcp's copies,
     * ofi's refused posts) */
    const char *held = getenv("RMPI_SEND_HELD_MAX");
    int expect_wait = !held || strcmp(held, "0");
    char *b = malloc(MSG);

    /* held */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        struct timespec nap = {0, 300 * 1000 * 1000};
        nanosleep(&nap, NULL);
        double woke = MPI_Wtime();
        int bad = 0;
        for (int s = 1; s < size; s++)
            for (int i = 0; i < NMSG; i++) {
                MTEST_OK(MPI_Recv(b, MSG, MPI_BYTE, s, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                bad += !check(b, s, i);
            }
        MTEST_CHECK(!bad, "held: %d of %d messages wrong or out of order", bad, NMSG * (size - 1));
        for (int s = 1; s < size; s++) {
            double done;
            MTEST_OK(MPI_Recv(&done, 1, MPI_DOUBLE, s, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MTEST_CHECK(!expect_wait || done > woke,
                        "held: rank %d finished sending %d x %d bytes %.3f s before rank 0 received anything "
                        "(its frames were queued without bound)",
                        s, NMSG, MSG, woke - done);
        }
    } else {
        for (int i = 0; i < NMSG; i++) {
            fill(b, rank, i);
            MTEST_OK(MPI_Send(b, MSG, MPI_BYTE, 0, 5, MPI_COMM_WORLD));
        }
        double done = MPI_Wtime();
        MTEST_OK(MPI_Send(&done, 1, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD));
    }

    /* both: pairs (0,1), (2,3), ...; an odd last rank sits out */
    int peer = rank ^ 1;
    if (peer < size) {
        int bad = 0;
        for (int i = 0; i < NMSG; i++) {
            fill(b, rank, i);
            MTEST_OK(MPI_Send(b, MSG, MPI_BYTE, peer, 7, MPI_COMM_WORLD));
        }
        for (int i = 0; i < NMSG; i++) {
            MTEST_OK(MPI_Recv(b, MSG, MPI_BYTE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            bad += !check(b, peer, i);
        }
        MTEST_CHECK(!bad, "both: %d of %d messages from rank %d wrong or out of order", bad, NMSG, peer);
    }
    free(b);
    return mtest_finalize();
}
