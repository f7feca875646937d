/* Rendezvous buffers that are reused, freed, re-allocated and unmapped between messages:
 * whatever the registration cache keeps, every message must carry the bytes of its own
 * buffer (a stale registration would deliver old memory on providers that pin pages). */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define LEN (1 << 20)

static void fill(unsigned char *b, size_t n, int seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 7 + (size_t)seed * 13 + (i >> 12));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    if (mtest_size < 2)
        return mtest_finalize();
    int me = mtest_rank;
    unsigned char *fixed = malloc(LEN), *expect = malloc(LEN), *rbuf = malloc(LEN);
    for (int it = 0; it < 24; it++) {
        if (me == 0) {
            unsigned char *b;
            int how = it % 3;
            if (how == 0) {
                b = fixed; /* the same buffer again: a cache hit */
            } else if (how == 1) {
                b = malloc(LEN); /* malloc/free: often the same address, new pages */
            } else {
                b = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            }
            fill(b, LEN, it);
            MPI_Send(b, LEN, MPI_BYTE, 1, it, MPI_COMM_WORLD);
            if (how == 1)
                free(b);
            else if (how == 2)
                munmap(b, LEN);
        } else if (me == 1) {
            /* the receiver side registers too (read rendezvous: its own buffer for the get) */
            unsigned char *b = it % 2 ? rbuf : malloc(LEN);
            memset(b, 0, LEN);
            MPI_Recv(b, LEN, MPI_BYTE, 0, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            fill(expect, LEN, it);
            size_t bad = 0;
            for (size_t i = 0; i < LEN; i++)
                bad += b[i] != expect[i];
            MTEST_CHECK(bad == 0, "message %d: %zu bytes differ", it, bad);
            if (b != rbuf)
                free(b);
        }
    }
    free(fixed);
    free(expect);
    free(rbuf);
    return mtest_finalize();
}
