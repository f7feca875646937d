/* Neighbourhood collectives: one round, every receive from a source and every send to a
 * destination posted at once (coll.h). Several edges between one pair of ranks match in
 * the order of the neighbour lists. */
#include "gather_sched.h"

rmpi_nbc_t *rmpi_coll_neighbor_sched(rmpi_comm_t *c, int indegree, const int *sources, const rmpi_coll_blk_t *recv,
                                     int outdegree, const int *dests, const rmpi_coll_blk_t *send)
{
    gx_t g;
    gx_init(&g, c);
    for (int i = 0; i < indegree; i++)
        gx_recv(&g, &recv[i], sources[i]);
    for (int j = 0; j < outdegree; j++)
        gx_send(&g, &send[j], dests[j]);
    return gx_end(&g);
}
