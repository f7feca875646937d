/* Neighbourhood collectives on real topologies, against what every rank computes locally:
 * a periodic ring and a non-periodic 2-D grid (Cartesian pairing: the block received from
 * the -1 neighbour of a dimension is what it sent to its +1 side), a distributed graph
 * (each rank sends to the next two ranks), in blocking, non-blocking and persistent form;
 * Neighbor_allgather and Neighbor_alltoall, with MPI_PROC_NULL blocks left untouched. */
#include "mtest.h"

#include <stdlib.h>

#define K 3 /* ints per block */

static int val(int from, int slot, int k) { return from * 1000 + slot * 10 + k; }

/* nb_in: the neighbours this rank receives from (in order); for alltoall, sender `from`
 * fills block j for its j-th destination; slot_of[i] says which of the sender's
 * destination slots faces us. */
static void check(MPI_Comm comm, int indeg, const int *src, const int *slot_of, int outdeg, const char *what)
{
    int me;
    MPI_Comm_rank(comm, &me);
    int *sb = malloc(sizeof(int) * K * (size_t)(outdeg ? outdeg : 1));
    int *rb = malloc(sizeof(int) * K * (size_t)(indeg ? indeg : 1));
    int mine[K];
    for (int k = 0; k < K; k++)
        mine[k] = val(me, 99, k);
    for (int j = 0; j < outdeg; j++)
        for (int k = 0; k < K; k++)
            sb[j * K + k] = val(me, j, k);
    for (int mode = 0; mode < 3; mode++) {
        for (int coll = 0; coll < 2; coll++) {
            for (int i = 0; i < indeg * K; i++)
                rb[i] = -7;
            MPI_Request r;
            if (coll == 0) {
                if (mode == 0)
                    MPI_Neighbor_allgather(mine, K, MPI_INT, rb, K, MPI_INT, comm);
                else if (mode == 1)
                    MPI_Ineighbor_allgather(mine, K, MPI_INT, rb, K, MPI_INT, comm, &r);
                else
                    MPI_Neighbor_allgather_init(mine, K, MPI_INT, rb, K, MPI_INT, comm, MPI_INFO_NULL, &r);
            } else {
                if (mode == 0)
                    MPI_Neighbor_alltoall(sb, K, MPI_INT, rb, K, MPI_INT, comm);
                else if (mode == 1)
                    MPI_Ineighbor_alltoall(sb, K, MPI_INT, rb, K, MPI_INT, comm, &r);
                else
                    MPI_Neighbor_alltoall_init(sb, K, MPI_INT, rb, K, MPI_INT, comm, MPI_INFO_NULL, &r);
            }
            if (mode == 2)
                MPI_Start(&r);
            if (mode)
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            if (mode == 2)
                MPI_Request_free(&r);
            for (int i = 0; i < indeg; i++)
                for (int k = 0; k < K; k++) {
                    int want = src[i] == MPI_PROC_NULL ? -7 : val(src[i], coll == 0 ? 99 : slot_of[i], k);
                    MTEST_CHECK(rb[i * K + k] == want, "%s %s mode %d: block %d int %d is %d, expected %d", what,
                                coll ? "alltoall" : "allgather", mode, i, k, rb[i * K + k], want);
                }
        }
    }
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int n = mtest_size, me = mtest_rank;

    /* periodic ring: sources/dests are (left, right); left's block for us is its slot 1 */
    MPI_Comm ring;
    int dims1[1] = {n}, per1[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims1, per1, 0, &ring);
    int rsrc[2] = {(me - 1 + n) % n, (me + 1) % n}, rslot[2] = {1, 0};
    check(ring, 2, rsrc, rslot, 2, "ring");
    MPI_Comm_free(&ring);

    /* non-periodic 2-D grid */
    int dims[2] = {0, 0}, per[2] = {0, 0};
    MPI_Dims_create(n, 2, dims);
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, per, 0, &grid);
    int coords[2];
    MPI_Cart_coords(grid, me, 2, coords);
    int gsrc[4], gslot[4];
    for (int d = 0; d < 2; d++) {
        int lo, hi;
        MPI_Cart_shift(grid, d, 1, &lo, &hi);
        gsrc[2 * d] = lo, gslot[2 * d] = 2 * d + 1;     /* lo's +1 side faces us */
        gsrc[2 * d + 1] = hi, gslot[2 * d + 1] = 2 * d; /* hi's -1 side faces us */
    }
    check(grid, 4, gsrc, gslot, 4, "grid");
    MPI_Comm_free(&grid);

    /* distributed graph: me -> me+1, me+2 (mod n), given adjacently */
    if (n >= 3) {
        int dst[2] = {(me + 1) % n, (me + 2) % n}, src[2] = {(me - 2 + n) % n, (me - 1 + n) % n};
        MPI_Comm g;
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, MPI_UNWEIGHTED, 2, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                       &g);
        int slot[2] = {1, 0}; /* me-2 sends to me as its slot 1 (me-2+2), me-1 as its slot 0 */
        check(g, 2, src, slot, 2, "dist graph");
        MPI_Comm_free(&g);
    }
    return mtest_finalize();
}
