/* Scatter and Scatterv: binomial tree (small blocks, regular form) and linear (coll.h). */
#include "gather_sched.h"

/* The tree of gather.c run backwards: a rank receives its subtree's blocks, packed in
 * relative order, from its parent and passes each child its part, largest first. */
static void scatter_binomial(gx_t *g, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int root)
{
    int n = g->n, me = g->me, vr = (me - root + n) % n, size = gx_subtree(vr, n);
    int parent = (me - (vr & -vr) + n) % n;
    if (vr && size == 1) {
        gx_recv(g, recv, parent);
        return;
    }
    size_t b = vr ? gx_bytes(recv) : gx_bytes(&send[root]);
    char *w = root == 0 && vr == 0 ? gx_contig_all(send, n) : NULL;
    if (!w) {
        w = rmpi_nbc_tmp(g->s, (size_t)size * b + 1);
        if (!vr)
            for (int j = 1; j < n; j++)
                gx_pack(g, &send[(j + root) % n], w + (size_t)j * b);
    }
    if (vr) {
        rmpi_nbc_recv(g->s, w, (size_t)size * b, parent);
        gx_round(g);
        gx_unpack(g, w, recv);
    } else if (recv) {
        gx_copy(g, &send[root], recv);
    }
    int top = 1;
    while (top * 2 < size)
        top *= 2;
    for (int m = top; m >= 1; m >>= 1) {
        int cs = m < size - m ? m : size - m;
        rmpi_nbc_send(g->s, w + (size_t)m * b, (size_t)cs * b, (me + m) % n);
    }
}

static void scatter_linear(gx_t *g, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int root)
{
    if (g->me != root) {
        gx_recv(g, recv, root);
        return;
    }
    if (recv)
        gx_copy(g, &send[root], recv);
    for (int i = 1; i < g->n; i++)
        gx_send(g, &send[(root + i) % g->n], (root + i) % g->n);
}

rmpi_nbc_t *rmpi_coll_scatter_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv,
                                    int root, int form)
{
    gx_t g;
    gx_init(&g, c);
    size_t block = c->rank == root ? gx_bytes(&send[root]) : gx_bytes(recv);
    if (form == RMPI_COLL_REGULAR && gx_pick_scatter(c->size, block) == GX_BINOMIAL)
        scatter_binomial(&g, send, recv, root);
    else
        scatter_linear(&g, send, recv, root);
    return gx_end(&g);
}
