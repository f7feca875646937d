/* Both ranks of each pair send and receive at once: messages of random sizes (seeded, the
 * same sequence on both sides) from 0 B to 8 MiB, every byte checked. Run across rails with
 * every striping and small-frame policy (tests/netns/multirail.sh).
 *   bidir [SECONDS]   with SECONDS, keep going for that long (the rail-failure test cuts a
 *                     rail while this runs); without, a fixed 60 messages each way.
 *   bidir SECONDS STOPFILE   keep going until the file STOPFILE exists (rank 0 looks each
 *                     round), at most SECONDS: the cycles test stops the run once it saw
 *                     what it waits for (tests/netns/multirail.sh).
 *   bidir SECONDS WINDOW MAXBYTES   WINDOW messages in flight each way per round, sizes
 *                     from 1 to MAXBYTES (many frames queued at once: the rail choice of
 *                     large eager frames, tests/netns/multirail.sh bigframes). */
#include <mpi.h>
#include <stdlib.h>
#include <unistd.h>

#include "mtest.h"

static size_t pick_size(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    unsigned r = (*state >> 8) % 100;
    unsigned x = (*state >> 4); /* 28 bits: enough for sizes up to 8 MiB */
    if (r < 40)
        return x % 2048; /* eager */
    if (r < 70)
        return 16384 + x % (256 * 1024); /* around the thresholds */
    return (size_t)(x % (8u << 20)) + 1; /* striped rendezvous */
}

/* window messages of 1..wmax bytes each way per round, every byte checked */
static int windows(double seconds, int window, size_t wmax, int peer)
{
    unsigned char *sbuf = mtest_malloc((size_t)window * wmax);
    unsigned char *rbuf = mtest_malloc((size_t)window * (wmax + MTEST_GUARD));
    MPI_Request *req = mtest_malloc(2 * (size_t)window * sizeof *req);
    size_t *nr = mtest_malloc((size_t)window * sizeof *nr);
    unsigned st_send = 11u + (unsigned)mtest_rank, st_recv = 11u + (unsigned)peer;
    double t0 = MPI_Wtime();
    int done = 0;
    for (int i = 0; !done; i++) {
        for (int w = 0; w < window; w++) {
            st_recv = st_recv * 1103515245u + 12345u;
            nr[w] = (st_recv >> 4) % wmax + 1;
            unsigned char *rb = rbuf + (size_t)w * (wmax + MTEST_GUARD);
            mtest_guard_set(rb, nr[w]);
            MTEST_OK(MPI_Irecv(rb, (int)nr[w], MPI_BYTE, peer, w, MPI_COMM_WORLD, &req[w]));
        }
        for (int w = 0; w < window; w++) {
            st_send = st_send * 1103515245u + 12345u;
            size_t ns = (st_send >> 4) % wmax + 1;
            unsigned char *sb = sbuf + (size_t)w * wmax;
            mtest_fill(sb, ns, mtest_seed(mtest_rank, peer, i * window + w));
            MTEST_OK(MPI_Isend(sb, (int)ns, MPI_BYTE, peer, w, MPI_COMM_WORLD, &req[window + w]));
        }
        MTEST_OK(MPI_Waitall(2 * window, req, MPI_STATUSES_IGNORE));
        for (int w = 0; w < window; w++) {
            unsigned char *rb = rbuf + (size_t)w * (wmax + MTEST_GUARD);
            mtest_check_buf(rb, nr[w], mtest_seed(peer, mtest_rank, i * window + w), "bidir window message");
            mtest_guard_check(rb, nr[w], "bidir window message");
        }
        int stop = MPI_Wtime() - t0 > seconds, any;
        MPI_Allreduce(&stop, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        done = any || mtest_error_count() > 0;
    }
    free(sbuf);
    free(rbuf);
    free(req);
    free(nr);
    return mtest_finalize();
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    double seconds = argc > 1 ? atof(argv[1]) : 0;
    int window = argc > 3 ? atoi(argv[2]) : 1;
    size_t wmax = argc > 3 ? (size_t)atol(argv[3]) : 0;
    const char *stopfile = argc == 3 ? argv[2] : NULL;
    int peer = mtest_rank ^ 1;
    if (peer >= mtest_size)
        return mtest_finalize();
    if (window > 1 && wmax > 0)
        return windows(seconds, window, wmax, peer);
    size_t max = (8u << 20) + 1;
    unsigned char *sbuf = mtest_malloc(max), *rbuf = mtest_malloc(max + MTEST_GUARD);
    unsigned st_send = 7u + (unsigned)mtest_rank, st_recv = 7u + (unsigned)peer;
    double t0 = MPI_Wtime();
    int done = 0;
    for (int i = 0; !done; i++) {
        size_t ns = pick_size(&st_send), nr = pick_size(&st_recv);
        mtest_fill(sbuf, ns, mtest_seed(mtest_rank, peer, i));
        mtest_guard_set(rbuf, nr);
        MPI_Request req[2];
        MPI_Status st;
        MTEST_OK(MPI_Irecv(rbuf, (int)nr, MPI_BYTE, peer, i, MPI_COMM_WORLD, &req[0]));
        MTEST_OK(MPI_Isend(sbuf, (int)ns, MPI_BYTE, peer, i, MPI_COMM_WORLD, &req[1]));
        MTEST_OK(MPI_Wait(&req[0], &st));
        MTEST_OK(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        MTEST_CHECK((size_t)count == nr, "message %d: %d bytes, expected %zu", i, count, nr);
        mtest_check_buf(rbuf, nr, mtest_seed(peer, mtest_rank, i), "bidir message");
        mtest_guard_check(rbuf, nr, "bidir message");
        /* both sides decide to stop at the same message: rank 0's clock, shared each round */
        int stop = seconds > 0 ? MPI_Wtime() - t0 > seconds : i + 1 >= 60;
        if (stopfile && mtest_rank == 0 && access(stopfile, F_OK) == 0)
            stop = 1;
        int any;
        MPI_Allreduce(&stop, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        done = any || mtest_error_count() > 0;
    }
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
