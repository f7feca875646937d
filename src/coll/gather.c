/* Gather and Gatherv: binomial tree (small blocks, regular form) and linear (coll.h). */
#include "gather_sched.h"

/* Non-root ranks forward their subtree's blocks packed, in relative order, to the parent. */
static void gather_binomial(gx_t *g, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int root)
{
    int n = g->n, me = g->me, vr = (me - root + n) % n, size = gx_subtree(vr, n);
    int parent = (me - (vr & -vr) + n) % n;
    if (vr && size == 1) {
        gx_send(g, send, parent);
        return;
    }
    size_t b = vr ? gx_bytes(send) : gx_bytes(&recv[root]);
    char *w = root == 0 && vr == 0 ? gx_contig_all(recv, n) : NULL;
    if (!w)
        w = rmpi_nbc_tmp(g->s, (size_t)size * b + 1);
    if (vr)
        gx_pack(g, send, w);
    else if (send)
        gx_copy(g, send, &recv[root]);
    for (int m = 1; m < size; m <<= 1) {
        int cs = m < size - m ? m : size - m;
        rmpi_nbc_recv(g->s, w + (size_t)m * b, (size_t)cs * b, (me + m) % n);
    }
    gx_round(g);
    if (vr) {
        rmpi_nbc_send(g->s, w, (size_t)size * b, parent);
        return;
    }
    if (w == gx_contig_all(recv, n))
        return;
    for (int j = 1; j < n; j++)
        gx_unpack(g, w + (size_t)j * b, &recv[(j + root) % n]);
}

static void gather_linear(gx_t *g, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int root)
{
    if (g->me != root) {
        gx_send(g, send, root);
        return;
    }
    if (send)
        gx_copy(g, send, &recv[root]);
    for (int i = 1; i < g->n; i++)
        gx_recv(g, &recv[(root + i) % g->n], (root + i) % g->n);
}

rmpi_nbc_t *rmpi_coll_gather_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv,
                                   int root, int form)
{
    gx_t g;
    gx_init(&g, c);
    size_t block = c->rank == root ? gx_bytes(&recv[root]) : gx_bytes(send);
    if (form == RMPI_COLL_REGULAR && gx_pick_gather(c->size, block) == GX_BINOMIAL)
        gather_binomial(&g, send, recv, root);
    else
        gather_linear(&g, send, recv, root);
    return gx_end(&g);
}
