/* Neighbourhood collectives: one round, every receive from a source and every send to a
 * destination posted at once (coll.h). Several edges between one pair of ranks match in
 * the order they are posted: list order for graphs (the k-th edge to a rank meets the k-th
 * edge from it, MPI-4.1 8.6); on a Cartesian topology block s of the sender must land in
 * block s ^ 1 of the receiver, so each dimension's two receives are posted swapped, which
 * matters where a periodic dimension has 1 or 2 processes (both neighbours are one). */
#include "gather_sched.h"

rmpi_nbc_t *rmpi_coll_neighbor_sched(rmpi_comm_t *c, int indegree, const int *sources, const rmpi_coll_blk_t *recv,
                                     int outdegree, const int *dests, const rmpi_coll_blk_t *send, int cart)
{
    gx_t g;
    gx_init(&g, c);
    for (int k = 0; k < indegree; k++) {
        int i = cart ? k ^ 1 : k;
        gx_recv(&g, &recv[i], sources[i]);
    }
    for (int j = 0; j < outdegree; j++)
        gx_send(&g, &send[j], dests[j]);
    return gx_end(&g);
}
