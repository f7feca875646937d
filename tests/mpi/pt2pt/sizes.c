/* Every message size around the protocol thresholds, 0 B .. 16 MiB: eager (full and cached
 * header), the eager limit (8k intra default, 64k inter; shm cells of 64 B; the largest
 * frame of a 256k ring), rendezvous. Three patterns per size: pairs (rank i with i^1) in
 * both directions with blocking Send/Recv, a ring with the receive posted first, and the
 * reverse ring with the send first (unexpected path). Every byte, the guard bytes after the
 * buffer, the status and Get_count are checked. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const size_t sizes[] = {
    0,       1,
    7,       8,
    39,      40,
    41,      63,
    64,      65,
    1023,    1024,
    1025,    4063,
    4064,    4065, /* eager limit with RMPI_SHM_RING_SIZE=16k */
    4095,    4096,
    4097,    8167,
    8168,    8169, /* 8k minus the sync eager header (24) */
    8175,    8176,
    8177, /* 8k minus the eager header (16) */
    8188,    8191,
    8192,    8193, /* 8k minus the frame header (4); the intra eager limit */
    16359,   16360,
    16361, /* 16k minus the sync eager header (24) */
    16367,   16368,
    16369, /* 16k minus the eager header (16) */
    16380,   16383,
    16384,   16385, /* 16k minus the frame header (4); intra:16k in the testlist */
    65503,   65504,
    65505, /* largest eager frame of a 256k shm ring */
    65535,   65536,
    65537, /* the inter eager limit */
    262143,  262144,
    262145, /* the shm ring size and the TCP chunk */
    1 << 20, (1 << 20) + 3,
    4 << 20, 16 << 20,
};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static void check_recv(const char *phase, const unsigned char *buf, size_t n, size_t cap, unsigned seed,
                       const MPI_Status *st, int src, int tag)
{
    char what[128];
    snprintf(what, sizeof what, "%s: %zu bytes from rank %d", phase, n, src);
    mtest_check_buf(buf, n, seed, what);
    mtest_guard_check(buf, cap, what);
    MTEST_CHECK(st->MPI_SOURCE == src, "%s: status source %d", what, st->MPI_SOURCE);
    MTEST_CHECK(st->MPI_TAG == tag, "%s: status tag %d, expected %d", what, st->MPI_TAG, tag);
    int cnt = -7;
    MTEST_OK(MPI_Get_count(st, MPI_BYTE, &cnt));
    MTEST_CHECK(cnt == (int)n, "%s: Get_count(MPI_BYTE) = %d", what, cnt);
    MTEST_OK(MPI_Get_count(st, MPI_INT, &cnt));
    if (n % sizeof(int) == 0)
        MTEST_CHECK(cnt == (int)(n / sizeof(int)), "%s: Get_count(MPI_INT) = %d", what, cnt);
    else
        MTEST_CHECK(cnt == MPI_UNDEFINED, "%s: Get_count(MPI_INT) = %d, expected MPI_UNDEFINED", what, cnt);
}

/* Pre-fill a receive buffer with another seed so stale data is not mistaken for success. */
static void prep_recv(unsigned char *buf, size_t cap)
{
    mtest_fill(buf, cap, 0xdeadu);
    mtest_guard_set(buf, cap);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const int me = mtest_rank, np = mtest_size;
    const size_t max = sizes[NSIZES - 1];
    const size_t slack = 64; /* receive buffers larger than the message: Get_count reports the message */
    unsigned char *sbuf = mtest_malloc(max);
    unsigned char *rbuf = mtest_malloc(max + slack + MTEST_GUARD);

    for (size_t k = 0; k < NSIZES; k++) {
        const size_t n = sizes[k];
        const int tag = (int)k + 1;

        /* pairs: the even rank sends first, then both directions swap */
        int partner = me ^ 1;
        if (partner < np) {
            for (int dir = 0; dir < 2; dir++) {
                int sender = (dir == 0) ? (me & ~1) : (me | 1);
                MPI_Status st;
                if (me == sender) {
                    mtest_fill(sbuf, n, mtest_seed(me, partner, (int)k * 2 + dir));
                    MTEST_OK(MPI_Send(sbuf, (int)n, MPI_BYTE, partner, tag, MPI_COMM_WORLD));
                } else {
                    prep_recv(rbuf, n);
                    MTEST_OK(MPI_Recv(rbuf, (int)n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &st));
                    check_recv("pair", rbuf, n, n, mtest_seed(partner, me, (int)k * 2 + dir), &st, partner, tag);
                }
            }
        }

        /* ring, receive posted first; the buffer is larger than the message */
        int right = (me + 1) % np, left = (me - 1 + np) % np;
        {
            MPI_Request rq;
            MPI_Status st;
            prep_recv(rbuf, n + slack);
            MTEST_OK(MPI_Irecv(rbuf, (int)(n + slack), MPI_BYTE, left, tag, MPI_COMM_WORLD, &rq));
            MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
            mtest_fill(sbuf, n, mtest_seed(me, right, (int)k + 1000));
            MTEST_OK(MPI_Send(sbuf, (int)n, MPI_BYTE, right, tag, MPI_COMM_WORLD));
            MTEST_OK(MPI_Wait(&rq, &st));
            check_recv("ring", rbuf, n, n + slack, mtest_seed(left, me, (int)k + 1000), &st, left, tag);
            /* the slack after the message must be untouched */
            size_t bad = 0;
            for (size_t i = n; i < n + slack; i++)
                bad += rbuf[i] != mtest_pattern(0xdeadu, i);
            MTEST_CHECK(bad == 0, "ring: %zu bytes of the receive buffer past the %zu-byte message were written", bad,
                        n);
        }

        /* reverse ring, send first: the message waits in the unexpected queue */
        {
            MPI_Request sq;
            MPI_Status st;
            mtest_fill(sbuf, n, mtest_seed(me, left, (int)k + 2000));
            MTEST_OK(MPI_Isend(sbuf, (int)n, MPI_BYTE, left, tag, MPI_COMM_WORLD, &sq));
            MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
            prep_recv(rbuf, n);
            MTEST_OK(MPI_Recv(rbuf, (int)n, MPI_BYTE, right, tag, MPI_COMM_WORLD, &st));
            MTEST_OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
            check_recv("reverse ring", rbuf, n, n, mtest_seed(right, me, (int)k + 2000), &st, right, tag);
        }
    }
    free(sbuf);
    free(rbuf);
    return mtest_finalize();
}
