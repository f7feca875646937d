/* Helpers shared by the algorithms: ordered combine steps and the node layout. */
#include "coll_impl.h"

#include "../rt/rt.h"

#include <stdlib.h>

void coll_combine(rmpi_nbc_t *s, const coll_red_t *r, const void *left, void *right, void *dst, size_t count)
{
    if (dst == left && r->commute) {
        rmpi_nbc_reduce(s, r->op, r->type, right, dst, count);
        return;
    }
    rmpi_nbc_reduce(s, r->op, r->type, left, right, count);
    rmpi_nbc_copy(s, right, dst, count * r->esize);
}

const void *coll_input(rmpi_nbc_t *s, const void *sbuf, const void *rbuf, void *res, size_t count, rmpi_dtype_t *dt)
{
    int contig = rmpi_dtype_is_contig(dt, count);
    if (sbuf == MPI_IN_PLACE) {
        if (!contig)
            rmpi_nbc_pack(s, rbuf, count, dt, res);
        return res;
    }
    if (contig)
        return rmpi_dtype_contig_ptr(sbuf, dt);
    void *p = rmpi_nbc_tmp(s, count * dt->size);
    rmpi_nbc_pack(s, sbuf, count, dt, p);
    return p;
}

void *coll_output(rmpi_nbc_t *s, void *rbuf, size_t count, rmpi_dtype_t *dt)
{
    return rmpi_dtype_is_contig(dt, count) ? rmpi_dtype_contig_ptr(rbuf, dt) : rmpi_nbc_tmp(s, count * dt->size);
}

int coll_pof2(int n)
{
    /* the highest bit of n (1 for n < 1, as the loop it replaces gave) */
    return n < 1 ? 1 : 1 << (31 - __builtin_clz((unsigned)n));
}

static int node_of(const rmpi_comm_t *c, int r) { return rmpi_topo_node_of(rmpi_comm_world_rank(c, r)); }

static int multi_node(const rmpi_comm_t *c)
{
    /* Processes of other worlds (spawn, connect/accept) have no node number this process
     * shares with them; every member of such a communicator sees one, so all go flat. */
    for (int r = 0; r < c->size; r++)
        if (rmpi_comm_world_rank(c, r) >= rmpi_comm_world.size)
            return 0;
    int first = node_of(c, 0), other = 0, shared = 0;
    for (int r = 1; r < c->size && !(other && shared); r++) {
        int nd = node_of(c, r);
        if (nd != first)
            other = 1;
        /* a rank sharing a node with the rank before it, or with rank 0 */
        if (nd == first || nd == node_of(c, r - 1))
            shared = 1;
    }
    if (other && !shared) { /* nodes not in rank order: count ranks per node */
        unsigned char *seen = rmpi_xcalloc((size_t)rmpi_comm_world.size, 1);
        for (int r = 0; r < c->size && !shared; r++)
            shared = seen[node_of(c, r)]++ > 0;
        free(seen);
    }
    return other && shared;
}

/* Membership and node numbers never change, so the answer is kept in the communicator
 * (it costs a walk over the ranks, which a small collective would otherwise pay per call). */
int coll_multi_node(rmpi_comm_t *c)
{
    if (RMPI_UNLIKELY(!c->coll_nodes))
        c->coll_nodes = (int8_t)(multi_node(c) ? 2 : 1);
    return c->coll_nodes == 2;
}

void coll_nodes_get(rmpi_comm_t *c, int root, coll_nodes_t *h)
{
    int n = c->size, me = c->rank;
    int *node = rmpi_xmalloc((size_t)n * sizeof *node); /* node index (0..nnodes-1) of each rank */
    int *world_node = rmpi_xmalloc((size_t)n * sizeof *world_node);
    h->leaders = rmpi_xmalloc((size_t)n * sizeof *h->leaders);
    h->local = rmpi_xmalloc((size_t)n * sizeof *h->local);
    h->nnodes = 0;
    h->contiguous = 1;
    for (int r = 0; r < n; r++) {
        world_node[r] = node_of(c, r);
        int k = 0;
        while (k < h->nnodes && world_node[h->leaders[k]] != world_node[r])
            k++;
        if (k == h->nnodes)
            h->leaders[h->nnodes++] = r;
        else if (node[r - 1] != k)
            h->contiguous = 0;
        node[r] = k;
    }
    h->root_node_idx = root >= 0 ? node[root] : 0;
    if (root >= 0)
        h->leaders[node[root]] = root;
    h->my_node_idx = node[me];
    h->nlocal = 0;
    for (int r = 0; r < n; r++)
        if (node[r] == node[me]) {
            if (r == h->leaders[node[me]])
                h->my_leader_idx = h->nlocal;
            if (r == me)
                h->my_local_idx = h->nlocal;
            h->local[h->nlocal++] = r;
        }
    free(node);
    free(world_node);
}

void coll_nodes_free(coll_nodes_t *h)
{
    free(h->leaders);
    free(h->local);
}
