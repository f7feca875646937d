/* Reduce: binomial tree, Rabenseifner (reduce-scatter + binomial gather, allreduce.c's
 * coll_rsag) for large vectors, and node-aware two-level. */
#include "coll_impl.h"

/* Children of member rel are rel + 1, rel + 2, rel + 4 ... below lowbit(rel); child
 * rel + m brings the reduction of members [rel + m, rel + 2m), so combining children in
 * that order keeps rank order. With a non-commutative operation the tree is rooted at
 * member 0 (ranges stay in rank order) and 0 forwards the result to root. */
void coll_reduce_binomial(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, const void *in, void *out,
                          size_t count, int root)
{
    int n = g->n, me = g->me, top = r->commute ? root : 0, rel = (me - top + n) % n;
    size_t bytes = count * r->esize;
    int child[32], nchild = 0, mask = 1;
    for (; mask < n && !(rel & mask); mask <<= 1)
        if (rel + mask < n)
            child[nchild++] = rel + mask;
    void *buf[32];
    for (int i = 0; i < nchild; i++) {
        /* the last child of the root lands in out, where the result goes */
        buf[i] = me == root && i == nchild - 1 && out != in ? out : rmpi_nbc_tmp(s, bytes);
        rmpi_nbc_recv(s, buf[i], bytes, coll_peer(g, (child[i] + top) % n));
    }
    rmpi_nbc_round(s);
    const void *acc = in;
    for (int i = 0; i < nchild; i++) {
        void *dst = me == root && i == nchild - 1 ? out : buf[i];
        coll_combine(s, r, acc, buf[i], dst, count);
        acc = dst;
    }
    if (rel) {
        rmpi_nbc_send(s, acc, bytes, coll_peer(g, (rel - mask + top) % n));
    } else if (me == root) {
        rmpi_nbc_copy(s, acc, out, bytes);
    } else {
        rmpi_nbc_send(s, acc, bytes, coll_peer(g, root));
    }
    rmpi_nbc_round(s);
    if (me == root && top != root) {
        rmpi_nbc_recv(s, out, bytes, coll_peer(g, top));
        rmpi_nbc_round(s);
    }
}

void coll_reduce_rabenseifner(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, const void *in, void *out,
                              size_t count, int root)
{
    size_t bytes = count * r->esize;
    void *w = g->me == root ? out : rmpi_nbc_tmp(s, bytes);
    rmpi_nbc_copy(s, in, w, bytes);
    coll_rsag(s, g, r, w, count, root);
}

void coll_reduce_flat(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, const void *in, void *out, size_t count,
                      int root)
{
    if (coll_reduce_large(g->n, count, count * r->esize))
        coll_reduce_rabenseifner(s, g, r, in, out, count, root);
    else
        coll_reduce_binomial(s, g, r, in, out, count, root);
}

/* Each node reduces to its leader (root on root's node), then the leaders to root. */
void coll_reduce_two_level(rmpi_nbc_t *s, rmpi_comm_t *c, const coll_red_t *r, const void *in, void *out, size_t count,
                           int root)
{
    coll_nodes_t h;
    coll_nodes_get(c, root, &h);
    if (!r->commute && !h.contiguous) {
        coll_grp_t g = coll_grp_all(c);
        coll_reduce_binomial(s, &g, r, in, out, count, root);
    } else {
        int leader = h.my_local_idx == h.my_leader_idx;
        void *w = !leader ? NULL : c->rank == root ? out : rmpi_nbc_tmp(s, count * r->esize);
        coll_grp_t ng = {h.nlocal, h.my_local_idx, h.local};
        coll_reduce_binomial(s, &ng, r, in, w, count, h.my_leader_idx);
        if (leader && h.nnodes > 1) {
            coll_grp_t lg = {h.nnodes, h.my_node_idx, h.leaders};
            coll_reduce_flat(s, &lg, r, w, w, count, h.root_node_idx);
        }
    }
    coll_nodes_free(&h);
}

rmpi_nbc_t *rmpi_coll_reduce_sched(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt,
                                   MPI_Op op, int root)
{
    if (c->inter)
        return coll_inter_reduce(c, sbuf, rbuf, count, dt, op, root);
    rmpi_nbc_t *s = rmpi_nbc_new(c);
    size_t bytes = count * dt->size;
    if (bytes == 0)
        return s;
    int contig = rmpi_dtype_is_contig(dt, count), me = c->rank;
    void *out = me == root ? coll_output(s, rbuf, count, dt) : NULL;
    const void *in = coll_input(s, sbuf, rbuf, out, count, dt);
    coll_red_t r = {op, dt->handle, dt->size, rmpi_coll_op_commutative(op)};
    coll_grp_t g = coll_grp_all(c);
    int alg = c->size == 1 ? RMPI_COLL_REDUCE_BINOMIAL : coll_select(COLL_REDUCE, c, bytes, count, r.commute);
    switch (alg) {
    case RMPI_COLL_REDUCE_SITE: coll_reduce_site(s, c, &r, in, out, count, root); break;
    case RMPI_COLL_REDUCE_RABENSEIFNER: coll_reduce_rabenseifner(s, &g, &r, in, out, count, root); break;
    case RMPI_COLL_REDUCE_TWO_LEVEL: coll_reduce_two_level(s, c, &r, in, out, count, root); break;
    default: coll_reduce_binomial(s, &g, &r, in, out, count, root);
    }
    if (me == root && !contig)
        rmpi_nbc_unpack(s, out, rbuf, count, dt);
    return s;
}
