/* Many rendezvous at once: every rank posts about 64 receives and 64 sends of 70000 bytes
 * (above both eager limits) spread over all the other ranks, then one Waitall. Three rounds:
 * receives first, sends first, and interleaved with alternating tags. Every message is
 * checked. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>

#define SZ 70000
#define TARGET 64

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    const int me = mtest_rank, np = mtest_size;
    const int peers = np > 1 ? np - 1 : 1;
    const int per = TARGET / peers < 2 ? 2 : TARGET / peers;
    const int n = per * peers;
    unsigned char *sb = mtest_malloc((size_t)n * SZ), *rb = mtest_malloc((size_t)n * SZ);
    MPI_Request *rq = mtest_malloc(sizeof(MPI_Request) * 2 * (size_t)n);
    MPI_Status *st = mtest_malloc(sizeof(MPI_Status) * 2 * (size_t)n);

    for (int round = 0; round < 3; round++) {
        int q = 0;
        /* message j to/from peer p: slot p_index*per + j; tag j (round 2: tag j%2) */
        for (int pass = 0; pass < 2; pass++) {
            int do_recv = (round == 1) ? pass == 1 : pass == 0;
            for (int pi = 0; pi < peers; pi++) {
                int p = np > 1 ? (me + 1 + pi) % np : me;
                for (int j = 0; j < per; j++) {
                    int slot = pi * per + j;
                    int tag = round == 2 ? j % 2 : j;
                    if (round == 2 && pass == 1)
                        break;
                    if (do_recv || round == 2) {
                        MTEST_OK(MPI_Irecv(rb + (size_t)slot * SZ, SZ, MPI_BYTE, p, tag, MPI_COMM_WORLD, &rq[q++]));
                    }
                    if (!do_recv || round == 2) {
                        mtest_fill(sb + (size_t)slot * SZ, SZ, mtest_seed(me, p, round * 1000 + j));
                        MTEST_OK(MPI_Isend(sb + (size_t)slot * SZ, SZ, MPI_BYTE, p, tag, MPI_COMM_WORLD, &rq[q++]));
                    }
                }
            }
        }
        MTEST_CHECK(q == 2 * n, "round %d posted %d requests, expected %d", round, q, 2 * n);
        MTEST_OK(MPI_Waitall(q, rq, st));
        for (int pi = 0; pi < peers; pi++) {
            int p = np > 1 ? (me + 1 + pi) % np : me;
            for (int j = 0; j < per; j++) {
                char what[80];
                snprintf(what, sizeof what, "round %d message %d from rank %d", round, j, p);
                mtest_check_buf(rb + (size_t)(pi * per + j) * SZ, SZ, mtest_seed(p, me, round * 1000 + j), what);
            }
        }
        MTEST_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    free(sb);
    free(rb);
    free(rq);
    free(st);
    return mtest_finalize();
}
