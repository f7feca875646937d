/* Reduce_scatter (and _block): recursive halving for commutative operations on small and
 * medium vectors, pairwise exchange otherwise (every rank gets its block from every other
 * one and combines them in rank order, so any operation works). */
#include "coll_impl.h"

#include <stdlib.h>

/* Recursive halving with masks descending, so virtual rank v ends with virtual block v.
 * Fold as in allreduce.c; virtual block v is the blocks of ranks 2v and 2v + 1 for
 * v < rem, else block v + rem; the odd rank passes the even one its block at the end. */
static void rs_recursive_halving(rmpi_nbc_t *s, rmpi_comm_t *c, const coll_red_t *r, const void *in, void *out,
                                 const size_t *counts, const size_t *disp)
{
    int n = c->size, me = c->rank, p = coll_pof2(n), rem = n - p;
    size_t es = r->esize, total = disp[n];
    if (me < 2 * rem && me % 2 == 0) {
        rmpi_nbc_send(s, in, total * es, me + 1);
        rmpi_nbc_round(s);
        rmpi_nbc_recv(s, out, counts[me] * es, me + 1);
        rmpi_nbc_round(s);
        return;
    }
    char *w = rmpi_nbc_tmp(s, total * es), *t = rmpi_nbc_tmp(s, total * es); /* blocks may be unequal */
    rmpi_nbc_copy(s, in, w, total * es);
    int v;
    if (me < 2 * rem) {
        rmpi_nbc_recv(s, t, total * es, me - 1);
        rmpi_nbc_round(s);
        coll_combine(s, r, t, w, w, total);
        v = me / 2;
    } else {
        v = me - rem;
    }
#define VDISP(x) ((x) >= p ? total : disp[(x) < rem ? 2 * (x) : (x) + rem])
#define VMEMBER(x) ((x) < rem ? 2 * (x) + 1 : (x) + rem)
    int blo = 0, bhi = p;
    for (int m = p / 2; m >= 1; m >>= 1) {
        int partner = v ^ m, mid = blo + m;
        int klo = v & m ? mid : blo, khi = v & m ? bhi : mid, slo = v & m ? blo : mid, shi = v & m ? mid : bhi;
        rmpi_nbc_recv(s, t, (VDISP(khi) - VDISP(klo)) * es, VMEMBER(partner));
        rmpi_nbc_send(s, w + VDISP(slo) * es, (VDISP(shi) - VDISP(slo)) * es, VMEMBER(partner));
        rmpi_nbc_round(s);
        coll_combine(s, r, t, w + VDISP(klo) * es, w + VDISP(klo) * es, VDISP(khi) - VDISP(klo));
        blo = klo, bhi = khi;
    }
    if (v < rem)
        rmpi_nbc_send(s, w + disp[me - 1] * es, counts[me - 1] * es, me - 1);
    rmpi_nbc_copy(s, w + disp[me] * es, out, counts[me] * es);
    rmpi_nbc_round(s);
#undef VDISP
#undef VMEMBER
}

static void rs_pairwise(rmpi_nbc_t *s, rmpi_comm_t *c, const coll_red_t *r, const void *in, void *out,
                        const size_t *counts, const size_t *disp)
{
    int n = c->size, me = c->rank;
    size_t es = r->esize, blk = counts[me] * es;
    char *t = rmpi_nbc_tmp(s, (size_t)n * blk);
    const char *src = in;
    rmpi_nbc_copy(s, src + disp[me] * es, t + (size_t)me * blk, blk);
    for (int k = 1; k < n; k++) {
        int from = (me - k + n) % n;
        rmpi_nbc_recv(s, t + (size_t)from * blk, blk, from);
    }
    for (int k = 1; k < n; k++) {
        int to = (me + k) % n;
        rmpi_nbc_send(s, src + disp[to] * es, counts[to] * es, to);
    }
    rmpi_nbc_round(s);
    void *acc = t;
    for (int j = 1; j < n; j++) {
        void *dst = j == n - 1 ? out : t + (size_t)j * blk;
        coll_combine(s, r, acc, t + (size_t)j * blk, dst, counts[me]);
        acc = dst;
    }
    rmpi_nbc_round(s);
}

rmpi_nbc_t *rmpi_coll_reduce_scatter_sched(rmpi_comm_t *c, const void *sbuf, void *rbuf, const size_t *counts,
                                           rmpi_dtype_t *dt, MPI_Op op)
{
    if (c->inter)
        return coll_inter_reduce_scatter(c, sbuf, rbuf, counts, dt, op);
    rmpi_nbc_t *s = rmpi_nbc_new(c);
    int n = c->size, me = c->rank;
    size_t *disp = rmpi_xmalloc((size_t)(n + 1) * sizeof *disp);
    disp[0] = 0;
    for (int i = 0; i < n; i++)
        disp[i + 1] = disp[i] + counts[i];
    size_t total = disp[n], es = dt->size;
    if (total * es == 0) {
        free(disp);
        return s;
    }
    const void *in = coll_input(s, sbuf == MPI_IN_PLACE ? rbuf : sbuf, NULL, NULL, total, dt);
    int contig = rmpi_dtype_is_contig(dt, counts[me]);
    void *out = coll_output(s, rbuf, counts[me], dt);
    coll_red_t r = {op, dt->handle, es, rmpi_coll_op_commutative(op)};
    if (n == 1) {
        rmpi_nbc_copy(s, in, out, total * es);
    } else if (coll_select(COLL_REDUCE_SCATTER, c, total * es, total, r.commute) ==
               RMPI_COLL_REDUCE_SCATTER_RECURSIVE_HALVING) {
        rs_recursive_halving(s, c, &r, in, out, counts, disp);
    } else {
        rs_pairwise(s, c, &r, in, out, counts, disp);
    }
    if (!contig && counts[me])
        rmpi_nbc_unpack(s, out, rbuf, counts[me], dt);
    free(disp);
    return s;
}
