/* Gather(v) and Scatter(v), mirror images of each other: binomial tree (regular form, small
 * blocks) and linear (coll.h). */
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

/* The same tree run backwards: a rank receives its subtree's blocks, packed in
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

/* The root exchanges with every other rank directly; the v forms always take this path,
 * since only the root knows every count. */
static void rooted_linear(gx_t *g, const rmpi_coll_blk_t *one, const rmpi_coll_blk_t *many, int root, int scatter)
{
    int n = g->n;
    if (g->me != root) {
        if (scatter)
            gx_recv(g, one, root);
        else
            gx_send(g, one, root);
        return;
    }
    if (one && scatter)
        gx_copy(g, &many[root], one);
    else if (one)
        gx_copy(g, one, &many[root]);
    for (int i = 1; i < n; i++) {
        int peer = (root + i) % n;
        if (scatter)
            gx_send(g, &many[peer], peer);
        else
            gx_recv(g, &many[peer], peer);
    }
}

/* one: a rank's block (NULL: in place at the root); many: the root's n blocks. */
static rmpi_nbc_t *rooted(rmpi_comm_t *c, const rmpi_coll_blk_t *one, const rmpi_coll_blk_t *many, int root, int form,
                          int scatter)
{
    if (c->inter)
        return coll_inter_rooted(c, one, many, root, scatter);
    gx_t g;
    gx_init(&g, c);
    size_t block = c->rank == root ? gx_bytes(&many[root]) : gx_bytes(one);
    if (gx_pick_rooted(scatter, form, c->size, block) == GX_LINEAR)
        rooted_linear(&g, one, many, root, scatter);
    else if (scatter)
        scatter_binomial(&g, many, one, root);
    else
        gather_binomial(&g, one, many, root);
    return gx_end(&g);
}

rmpi_nbc_t *rmpi_coll_gather_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int root,
                                   int form)
{
    return rooted(c, send, recv, root, form, 0);
}

rmpi_nbc_t *rmpi_coll_scatter_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int root,
                                    int form)
{
    return rooted(c, recv, send, root, form, 1);
}
