/* Streams of small messages of mixed sizes (src/net/shm/shm.h: frames of up to two 16-byte
 * cells share cache lines, larger ones and line-crossing ones are padded to a line's end, the
 * writer clears the cell after a frame that ends inside a line, the reader zeroes the lines of
 * padded frames): every rank sends windows of nonblocking messages to the next rank while it
 * receives the previous rank's, so with a small ring (RMPI_SHM_RING_SIZE=4k) the ring wraps
 * every few dozen frames, fills, and is given back by the reader's lazy position, at every
 * offset within a line. Each message's bytes, count and order are checked. Round 1 posts the
 * receives late (the frames wait in the ring and the unexpected queue; the sender finds the
 * ring full and queues), round 2 posts them first, round 3 takes them one by one with
 * blocking receives. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>

#define W 64
#define ROUNDS 30
/* frames of 1 and 2 cells (a 4-byte header: up to 4 and 20 bytes), 3-4 cells, lines, more */
static const size_t cycle[] = {1,  0,  4, 5,  12, 20,  2,  21,  3, 36,   8,  44,
                               16, 52, 1, 60, 13, 100, 19, 250, 7, 1000, 24, 9};
#define NCYCLE (sizeof cycle / sizeof cycle[0])
#define MAXSZ 1000

static size_t sz(int round, int i) { return cycle[(size_t)(round * 7 + i) % NCYCLE]; }

static unsigned char *sbuf[W], *rbuf[W];

static void check(int from, int round, int i, const MPI_Status *st)
{
    char what[96];
    size_t n = sz(round, i);
    snprintf(what, sizeof what, "round %d message %d (%zu bytes) from %d", round, i, n, from);
    int cnt = -1;
    MPI_Get_count(st, MPI_BYTE, &cnt);
    MTEST_CHECK(cnt == (int)n, "%s: count %d (a message lost or overtaken?)", what, cnt);
    if (cnt == (int)n)
        mtest_check_buf(rbuf[i], n, mtest_seed(from, mtest_rank, round * W + i), what);
}

static void round_once(int round, int to, int from, int mode)
{
    MPI_Request sr[W], rr[W];
    MPI_Status st[W];
    for (int i = 0; i < W; i++)
        mtest_fill(sbuf[i], sz(round, i), mtest_seed(mtest_rank, to, round * W + i));
    if (mode == 2)
        for (int i = 0; i < W; i++)
            MTEST_OK(MPI_Irecv(rbuf[i], MAXSZ, MPI_BYTE, from, round, MPI_COMM_WORLD, &rr[i]));
    for (int i = 0; i < W; i++)
        MTEST_OK(MPI_Isend(sbuf[i], (int)sz(round, i), MPI_BYTE, to, round, MPI_COMM_WORLD, &sr[i]));
    if (mode == 1) {
        mtest_sleep(0.002);
        for (int i = 0; i < W; i++)
            MTEST_OK(MPI_Irecv(rbuf[i], MAXSZ, MPI_BYTE, from, round, MPI_COMM_WORLD, &rr[i]));
    }
    if (mode == 3) {
        for (int i = 0; i < W; i++) {
            MTEST_OK(MPI_Recv(rbuf[i], MAXSZ, MPI_BYTE, from, round, MPI_COMM_WORLD, &st[i]));
            check(from, round, i, &st[i]);
        }
    } else {
        MTEST_OK(MPI_Waitall(W, rr, st));
        for (int i = 0; i < W; i++)
            check(from, round, i, &st[i]);
    }
    MTEST_OK(MPI_Waitall(W, sr, MPI_STATUSES_IGNORE));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    for (int i = 0; i < W; i++) {
        sbuf[i] = mtest_malloc(MAXSZ);
        rbuf[i] = mtest_malloc(MAXSZ);
    }
    int to = (mtest_rank + 1) % mtest_size, from = (mtest_rank + mtest_size - 1) % mtest_size;
    for (int round = 0; round < ROUNDS && mtest_error_count() == 0; round++)
        round_once(round, to, from, 1 + round % 3);
    for (int i = 0; i < W; i++) {
        free(sbuf[i]);
        free(rbuf[i]);
    }
    return mtest_finalize();
}
