/* Allreduce: recursive doubling, Rabenseifner (reduce-scatter by recursive halving +
 * allgather by recursive doubling), ring, and node-aware two-level. The halving machinery
 * (coll_rsag) also serves Rabenseifner's Reduce.
 *
 * Non-powers of two: the first 2 * rem members (rem = n - pof2) fold in pairs, the even one
 * handing its vector to the odd one, so pof2 "virtual" members remain, in rank order; at
 * the end the odd ones hand the result back. Partners at distance 1, 2, 4... (masks
 * ascending) always join two adjacent blocks of ranks, lower one on the left, so
 * recursive doubling and halving keep the order non-commutative operations need. */
#include "coll_impl.h"

/* Member of virtual rank v after the fold. */
static int vmember(int v, int rem) { return v < rem ? 2 * v + 1 : v + rem; }

/* Fold: returns my virtual rank, or -1 when I handed my vector on. */
static int fold(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, void *w, void *t, size_t count)
{
    int me = g->me, rem = g->n - coll_pof2(g->n);
    if (me >= 2 * rem)
        return me - rem;
    size_t bytes = count * r->esize;
    if (me % 2 == 0) {
        rmpi_nbc_send(s, w, bytes, coll_peer(g, me + 1));
        rmpi_nbc_round(s);
        return -1;
    }
    rmpi_nbc_recv(s, t, bytes, coll_peer(g, me - 1));
    rmpi_nbc_round(s);
    coll_combine(s, r, t, w, w, count);
    return me / 2;
}

static void unfold(rmpi_nbc_t *s, const coll_grp_t *g, void *w, size_t bytes)
{
    int me = g->me, rem = g->n - coll_pof2(g->n);
    if (me >= 2 * rem)
        return;
    if (me % 2)
        rmpi_nbc_send(s, w, bytes, coll_peer(g, me - 1));
    else
        rmpi_nbc_recv(s, w, bytes, coll_peer(g, me + 1));
    rmpi_nbc_round(s);
}

void coll_allreduce_recursive_doubling(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, void *buf, size_t count)
{
    size_t bytes = count * r->esize;
    void *t = rmpi_nbc_tmp(s, bytes);
    int p = coll_pof2(g->n), rem = g->n - p;
    int v = fold(s, g, r, buf, t, count);
    for (int m = 1; v >= 0 && m < p; m <<= 1) {
        int partner = v ^ m;
        rmpi_nbc_recv(s, t, bytes, coll_peer(g, vmember(partner, rem)));
        rmpi_nbc_send(s, buf, bytes, coll_peer(g, vmember(partner, rem)));
        rmpi_nbc_round(s);
        if (v < partner)
            coll_combine(s, r, buf, t, buf, count);
        else
            coll_combine(s, r, t, buf, buf, count);
    }
    rmpi_nbc_round(s);
    unfold(s, g, buf, bytes);
}

/* Element ranges of the halving: before step k (mask 1 << k) virtual rank v holds
 * [lo[k], hi[k]); it keeps the upper half when bit k of v is set. */
static void halves(size_t count, int v, int steps, size_t *lo, size_t *hi)
{
    lo[0] = 0, hi[0] = count;
    for (int k = 0; k < steps; k++) {
        size_t mid = lo[k] + (hi[k] - lo[k]) / 2;
        lo[k + 1] = (v >> k & 1) ? mid : lo[k];
        hi[k + 1] = (v >> k & 1) ? hi[k] : mid;
    }
}

/* Reduce-scatter by recursive halving, then either allgather by recursive doubling
 * (root < 0) or a binomial gather to member root, whose w then holds the result. w: my
 * vector, overwritten. */
void coll_rsag(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, void *w, size_t count, int root)
{
    int n = g->n, me = g->me, p = coll_pof2(n), rem = n - p, steps = 0;
    while (1 << steps < p)
        steps++;
    size_t es = r->esize;
    char *wb = w;
    int folds = me < 2 * rem && me % 2;
    void *t = rmpi_nbc_tmp(s, (folds ? count : count - count / 2) * es);
    int v = fold(s, g, r, w, t, count);
    size_t lo[33], hi[33];
    if (v >= 0) {
        halves(count, v, steps, lo, hi);
        for (int k = 0; k < steps; k++) {
            int partner = v ^ (1 << k), peer = coll_peer(g, vmember(partner, rem));
            size_t keep = hi[k + 1] - lo[k + 1];
            /* the partner keeps the other half of [lo[k], hi[k]) */
            size_t olo = lo[k + 1] == lo[k] ? hi[k + 1] : lo[k], ohi = lo[k + 1] == lo[k] ? hi[k] : lo[k + 1];
            rmpi_nbc_recv(s, t, keep * es, peer);
            rmpi_nbc_send(s, wb + olo * es, (ohi - olo) * es, peer);
            rmpi_nbc_round(s);
            char *mine = wb + lo[k + 1] * es;
            if (v < partner)
                coll_combine(s, r, mine, t, mine, keep);
            else
                coll_combine(s, r, t, mine, mine, keep);
        }
        /* virtual rank holding the result, and where root gets it from */
        int vroot = root < 0 ? 0 : root < 2 * rem ? root / 2 : root - rem;
        for (int k = steps - 1; k >= 0; k--) {
            int partner = v ^ (1 << k), peer = coll_peer(g, vmember(partner, rem));
            size_t olo = lo[k + 1] == lo[k] ? hi[k + 1] : lo[k], ohi = lo[k + 1] == lo[k] ? hi[k] : lo[k + 1];
            size_t mlo = lo[k + 1], mhi = hi[k + 1];
            if (root < 0) {
                rmpi_nbc_recv(s, wb + olo * es, (ohi - olo) * es, peer);
                rmpi_nbc_send(s, wb + mlo * es, (mhi - mlo) * es, peer);
            } else if ((v ^ vroot) >> k & 1) {
                rmpi_nbc_send(s, wb + mlo * es, (mhi - mlo) * es, peer);
                rmpi_nbc_round(s);
                break;
            } else {
                rmpi_nbc_recv(s, wb + olo * es, (ohi - olo) * es, peer);
            }
            rmpi_nbc_round(s);
        }
        rmpi_nbc_round(s);
    }
    if (root < 0) {
        unfold(s, g, w, count * es);
    } else if (root < 2 * rem && root % 2 == 0) { /* root folded: its partner has the result */
        if (me == root)
            rmpi_nbc_recv(s, w, count * es, coll_peer(g, root + 1));
        else if (me == root + 1)
            rmpi_nbc_send(s, w, count * es, coll_peer(g, root));
        rmpi_nbc_round(s);
    }
}

void coll_allreduce_rabenseifner(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, void *buf, size_t count)
{
    coll_rsag(s, g, r, buf, count, -1);
}

/* Ring (commutative operations only: a block's partial result wraps around the ring):
 * n - 1 reduce-scatter steps, then n - 1 allgather steps, each moving one block of
 * count / n elements (coll_block_off) to the right neighbour. in: my vector; when it is
 * not buf, blocks arrive straight in buf and are combined with in there (each block but
 * mine is combined exactly once), so buf needs no copy of in first. After the
 * reduce-scatter member me holds block (me + 1) % n of the result. */
void coll_ring_reduce_scatter(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, const void *in, void *buf,
                              size_t count)
{
    int n = g->n, me = g->me;
    size_t es = r->esize;
    char *w = buf, *t = in == buf ? rmpi_nbc_tmp(s, (count / (size_t)n + 1) * es) : NULL;
    const char *mine = in;
    int left = coll_peer(g, (me - 1 + n) % n), right = coll_peer(g, (me + 1) % n);
    for (int k = 0; k < n - 1; k++) {
        int sb = (me - k + n) % n, rb = (me - k - 1 + n) % n;
        size_t rlen = coll_block_len(count, n, rb);
        char *dst = w + coll_block_off(count, n, rb) * es;
        rmpi_nbc_recv(s, t ? t : dst, rlen * es, left);
        rmpi_nbc_send(s, (k == 0 ? mine : w) + coll_block_off(count, n, sb) * es, coll_block_len(count, n, sb) * es,
                      right);
        rmpi_nbc_round(s);
        if (t)
            coll_combine(s, r, t, dst, dst, rlen);
        else
            rmpi_nbc_reduce(s, r->op, r->type, mine + coll_block_off(count, n, rb) * es, dst, rlen);
    }
}

/* Member me starts with block (me + 1) % n of buf (count elements of es bytes) and ends
 * with all n. */
void coll_ring_allgather(rmpi_nbc_t *s, const coll_grp_t *g, size_t es, void *buf, size_t count)
{
    int n = g->n, me = g->me;
    char *w = buf;
    int left = coll_peer(g, (me - 1 + n) % n), right = coll_peer(g, (me + 1) % n);
    for (int k = 0; k < n - 1; k++) {
        int sb = (me - k + 1 + n) % n, rb = (me - k + n) % n;
        rmpi_nbc_recv(s, w + coll_block_off(count, n, rb) * es, coll_block_len(count, n, rb) * es, left);
        rmpi_nbc_send(s, w + coll_block_off(count, n, sb) * es, coll_block_len(count, n, sb) * es, right);
        rmpi_nbc_round(s);
    }
}

void coll_allreduce_ring(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, const void *in, void *buf,
                         size_t count)
{
    coll_ring_reduce_scatter(s, g, r, in, buf, count);
    coll_ring_allgather(s, g, r->esize, buf, count);
}

void coll_allreduce_flat(rmpi_nbc_t *s, const coll_grp_t *g, const coll_red_t *r, void *buf, size_t count)
{
    if (coll_allreduce_large(g->n, count, count * r->esize))
        coll_allreduce_rabenseifner(s, g, r, buf, count);
    else
        coll_allreduce_recursive_doubling(s, g, r, buf, count);
}

/* Reduce within each node to its leader, allreduce among leaders, broadcast within nodes.
 * Member order stays rank order only when nodes hold consecutive ranks: otherwise a
 * non-commutative operation takes the flat path. */
void coll_allreduce_two_level(rmpi_nbc_t *s, rmpi_comm_t *c, const coll_red_t *r, void *buf, size_t count)
{
    coll_nodes_t h;
    coll_nodes_get(c, -1, &h);
    if (!r->commute && !h.contiguous) {
        coll_grp_t g = coll_grp_all(c);
        coll_allreduce_recursive_doubling(s, &g, r, buf, count);
    } else {
        coll_grp_t ng = {h.nlocal, h.my_local_idx, h.local};
        coll_reduce_binomial(s, &ng, r, buf, buf, count, h.my_leader_idx);
        if (h.my_local_idx == h.my_leader_idx && h.nnodes > 1) {
            coll_grp_t lg = {h.nnodes, h.my_node_idx, h.leaders};
            coll_allreduce_flat(s, &lg, r, buf, count);
        }
        coll_bcast_binomial(s, &ng, buf, count * r->esize, h.my_leader_idx);
    }
    coll_nodes_free(&h);
}

rmpi_nbc_t *rmpi_coll_allreduce_sched(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt,
                                      MPI_Op op)
{
    if (c->inter)
        return coll_inter_allreduce(c, sbuf, rbuf, count, dt, op);
    rmpi_nbc_t *s = rmpi_nbc_new(c);
    size_t bytes = count * dt->size;
    if (bytes == 0)
        return s;
    int contig = rmpi_dtype_is_contig(dt, count);
    void *w = coll_output(s, rbuf, count, dt);
    coll_red_t r = {op, dt->handle, dt->size, rmpi_coll_op_commutative(op)};
    int alg = c->size > 1 ? coll_select(COLL_ALLREDUCE, c, bytes, count, r.commute) : 0;
    /* my vector, packed: the ring reads it where it is, the others start from a copy in w */
    const void *in = w;
    if (alg == RMPI_COLL_ALLREDUCE_RING)
        in = coll_input(s, sbuf, rbuf, w, count, dt);
    else if (contig)
        rmpi_nbc_copy(s, rmpi_dtype_contig_ptr(sbuf == MPI_IN_PLACE ? rbuf : sbuf, dt), w, bytes);
    else
        rmpi_nbc_pack(s, sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, dt, w);
    coll_grp_t g = coll_grp_all(c);
    switch (alg) {
    case 0: break;
    case RMPI_COLL_ALLREDUCE_RABENSEIFNER: coll_allreduce_rabenseifner(s, &g, &r, w, count); break;
    case RMPI_COLL_ALLREDUCE_RING: coll_allreduce_ring(s, &g, &r, in, w, count); break;
    case RMPI_COLL_ALLREDUCE_TWO_LEVEL: coll_allreduce_two_level(s, c, &r, w, count); break;
    case RMPI_COLL_ALLREDUCE_SITE: coll_allreduce_site(s, c, &r, w, count); break;
    default: coll_allreduce_recursive_doubling(s, &g, &r, w, count);
    }
    if (!contig)
        rmpi_nbc_unpack(s, w, rbuf, count, dt);
    return s;
}
