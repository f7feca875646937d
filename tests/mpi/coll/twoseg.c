/* 2 ranks with a core each, large blocks (coll/shm.c two_choose, RMPI_COLL_SHM_TWO_SEGMENT):
 * Allgather, Alltoall, and Bcast, Gather and Scatter (both roots) of 64 KiB to 1 MiB and an
 * odd size, many times in a row, every byte checked, while the path between the segment and
 * single copy is chosen from rank 0's measured times and tried again at every probe (the
 * testlist makes probes frequent and trials constant), so calls alternate between the two
 * paths: a rank that took another path than its peer would hang or take wrong bytes. The
 * Bcast follows the same choice through its marker step, Gather and Scatter through their
 * move's (rmpi_coll_shm_two_move). */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

static const size_t sizes[] = {65536, 65536 * 3 + 8, 262144, 1 << 20};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])
#define ROUNDS 60

/* Byte j of the block from rank src to dst (Allgather and Bcast: dst -1) in call s. */
static unsigned char val(int src, int dst, unsigned s, size_t j)
{
    return (unsigned char)(j * 7 + (size_t)src * 101 + (size_t)(dst + 1) * 29 + s * 13 + 1);
}

static void fill(unsigned char *p, int src, int dst, unsigned s, size_t n)
{
    for (size_t j = 0; j < n; j++)
        p[j] = val(src, dst, s, j);
}

static int check(const unsigned char *p, int src, int dst, unsigned s, size_t n, const char *what)
{
    for (size_t j = 0; j < n; j++)
        if (p[j] != val(src, dst, s, j)) {
            MTEST_CHECK(0, "%s of %zu bytes, call %u: byte %zu from rank %d is %u, expected %u", what, n, s, j, src,
                        p[j], val(src, dst, s, j));
            return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank, n = mtest_size;
    size_t max = sizes[NSIZES - 1];
    unsigned char *sb = malloc(2 * max), *rb = malloc(2 * max);
    unsigned s = 0;
    for (int round = 0; round < ROUNDS; round++)
        for (int k = 0; k < NSIZES; k++, s++) {
            size_t b = sizes[(k + round) % NSIZES];
            /* Allgather: each rank's block at its place */
            fill(sb, me, -1, s, b);
            memset(rb, 0, (size_t)n * b);
            MTEST_OK(MPI_Allgather(sb, (int)b, MPI_BYTE, rb, (int)b, MPI_BYTE, MPI_COMM_WORLD));
            for (int r = 0; r < n; r++)
                check(rb + (size_t)r * b, r, -1, s, b, "Allgather");
            /* Alltoall: the block from r to me */
            for (int d = 0; d < n; d++)
                fill(sb + (size_t)d * b, me, d, s, b);
            memset(rb, 0, (size_t)n * b);
            MTEST_OK(MPI_Alltoall(sb, (int)b, MPI_BYTE, rb, (int)b, MPI_BYTE, MPI_COMM_WORLD));
            for (int r = 0; r < n; r++)
                check(rb + (size_t)r * b, r, me, s, b, "Alltoall");
            /* Bcast from each root in turn */
            int root = (int)(s % (unsigned)n);
            if (me == root)
                fill(rb, root, -1, s, b);
            else
                memset(rb, 0, b);
            MTEST_OK(MPI_Bcast(rb, (int)b, MPI_BYTE, root, MPI_COMM_WORLD));
            check(rb, root, -1, s, b, "Bcast");
            /* Gather to that root and Scatter from it (the other rank's block moves as the Bcast does) */
            fill(sb, me, -1, s, b);
            memset(rb, 0, (size_t)n * b);
            MTEST_OK(MPI_Gather(sb, (int)b, MPI_BYTE, rb, (int)b, MPI_BYTE, root, MPI_COMM_WORLD));
            for (int r = 0; me == root && r < n; r++)
                check(rb + (size_t)r * b, r, -1, s, b, "Gather");
            for (int d = 0; me == root && d < n; d++)
                fill(sb + (size_t)d * b, root, d, s, b);
            memset(rb, 0, b);
            MTEST_OK(MPI_Scatter(sb, (int)b, MPI_BYTE, rb, (int)b, MPI_BYTE, root, MPI_COMM_WORLD));
            check(rb, root, me, s, b, "Scatter");
        }
    free(sb);
    free(rb);
    return mtest_finalize();
}
