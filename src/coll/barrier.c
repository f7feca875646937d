/* Barrier: dissemination, or node-aware two-level. */
#include "coll_impl.h"

/* Dissemination: in round k every member sends to me + 2^k and receives from me - 2^k. */
void coll_barrier_dissemination(rmpi_nbc_t *s, const coll_grp_t *g)
{
    int n = g->n, me = g->me;
    for (int k = 1; k < n; k <<= 1) {
        rmpi_nbc_recv(s, NULL, 0, coll_peer(g, (me - k + n) % n));
        rmpi_nbc_send(s, NULL, 0, coll_peer(g, (me + k) % n));
        rmpi_nbc_round(s);
    }
}

/* Every rank checks in with its node leader, leaders run a dissemination, leaders release
 * their nodes: one network message pattern among nodes instead of among all ranks. */
static void two_level(rmpi_nbc_t *s, rmpi_comm_t *c)
{
    coll_nodes_t h;
    coll_nodes_get(c, -1, &h);
    int leader = h.local[h.my_leader_idx];
    if (h.my_local_idx != h.my_leader_idx) {
        rmpi_nbc_send(s, NULL, 0, leader);
        rmpi_nbc_round(s);
        rmpi_nbc_recv(s, NULL, 0, leader);
        rmpi_nbc_round(s);
    } else {
        for (int i = 0; i < h.nlocal; i++)
            if (i != h.my_leader_idx)
                rmpi_nbc_recv(s, NULL, 0, h.local[i]);
        rmpi_nbc_round(s);
        coll_grp_t lg = {h.nnodes, h.my_node_idx, h.leaders};
        coll_barrier_dissemination(s, &lg);
        for (int i = 0; i < h.nlocal; i++)
            if (i != h.my_leader_idx)
                rmpi_nbc_send(s, NULL, 0, h.local[i]);
        rmpi_nbc_round(s);
    }
    coll_nodes_free(&h);
}

rmpi_nbc_t *rmpi_coll_barrier_sched(rmpi_comm_t *c)
{
    if (c->inter)
        return coll_inter_barrier(c);
    rmpi_nbc_t *s = rmpi_nbc_new(c);
    int alg = c->size > 1 ? coll_select(COLL_BARRIER, c, 0, 0, 1) : 0;
    if (alg == RMPI_COLL_BARRIER_SITE) {
        coll_barrier_site(s, c);
    } else if (alg == RMPI_COLL_BARRIER_TWO_LEVEL) {
        two_level(s, c);
    } else {
        coll_grp_t g = coll_grp_all(c);
        coll_barrier_dissemination(s, &g);
    }
    return s;
}

int rmpi_coll_barrier(rmpi_comm_t *c) { return rmpi_nbc_run(rmpi_coll_barrier_sched(c)); }
