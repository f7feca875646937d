/* Process topologies: Cartesian grids, graphs, distributed graphs, Dims_create, and the
 * neighbour lists the neighbourhood collectives walk. Only the distributed-graph build
 * communicates (on the parent's collective context). */
#include "comm.h"

#include <stdlib.h>
#include <string.h>

static int *dup_ints(const int *a, int n)
{
    int *p = rmpi_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (a && n > 0)
        memcpy(p, a, (size_t)n * sizeof *p);
    return p;
}

static rmpi_comm_topo_t *topo_new(int kind)
{
    rmpi_comm_topo_t *t = rmpi_xcalloc(1, sizeof *t);
    t->kind = kind;
    t->refcount = 1;
    return t;
}

rmpi_comm_topo_t *rmpi_comm_cart(int ndims, const int *dims, const int *periods, int rank)
{
    rmpi_comm_topo_t *t = topo_new(MPI_CART);
    t->ndims = ndims;
    t->dims = dup_ints(dims, ndims);
    t->periods = rmpi_xmalloc((size_t)(ndims > 0 ? ndims : 1) * sizeof *t->periods);
    for (int i = 0; i < ndims; i++)
        t->periods[i] = periods && periods[i] ? 1 : 0;
    t->coords = dup_ints(NULL, ndims);
    rmpi_comm_cart_coords(t, rank, t->coords);
    t->indeg = t->outdeg = 2 * ndims;
    t->srcs = dup_ints(NULL, 2 * ndims);
    for (int d = 0; d < ndims; d++)
        rmpi_comm_cart_shift(t, t->coords, d, 1, &t->srcs[2 * d], &t->srcs[2 * d + 1]);
    t->dsts = dup_ints(t->srcs, 2 * ndims);
    return t;
}

rmpi_comm_topo_t *rmpi_comm_graph(int nnodes, const int *index, const int *edges, int rank)
{
    rmpi_comm_topo_t *t = topo_new(MPI_GRAPH);
    t->nnodes = nnodes;
    t->nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    t->index = dup_ints(index, nnodes);
    t->edges = dup_ints(edges, t->nedges);
    int first = rank > 0 ? index[rank - 1] : 0;
    t->indeg = t->outdeg = index[rank] - first;
    t->srcs = dup_ints(edges + first, t->indeg);
    t->dsts = dup_ints(edges + first, t->indeg);
    return t;
}

rmpi_comm_topo_t *rmpi_comm_dist_graph(int indeg, const int *srcs, const int *srcw, int outdeg, const int *dsts,
                                       const int *dstw, int weighted)
{
    rmpi_comm_topo_t *t = topo_new(MPI_DIST_GRAPH);
    t->weighted = weighted;
    t->indeg = indeg;
    t->outdeg = outdeg;
    t->srcs = dup_ints(srcs, indeg);
    t->dsts = dup_ints(dsts, outdeg);
    t->srcw = weighted && srcw ? dup_ints(srcw, indeg) : NULL;
    t->dstw = weighted && dstw ? dup_ints(dstw, outdeg) : NULL;
    return t;
}

void rmpi_comm_topo_release(rmpi_comm_topo_t *t)
{
    if (--t->refcount > 0)
        return;
    free(t->dims);
    free(t->periods);
    free(t->coords);
    free(t->index);
    free(t->edges);
    free(t->srcs);
    free(t->dsts);
    free(t->srcw);
    free(t->dstw);
    free(t);
}

int rmpi_comm_cart_rank(const rmpi_comm_topo_t *t, const int *coords)
{
    int r = 0;
    for (int d = 0; d < t->ndims; d++) {
        int c = coords[d], n = t->dims[d];
        if (c < 0 || c >= n) {
            if (!t->periods[d])
                return -1;
            c = ((c % n) + n) % n;
        }
        r = r * n + c;
    }
    return r;
}

void rmpi_comm_cart_coords(const rmpi_comm_topo_t *t, int rank, int *coords)
{
    for (int d = t->ndims - 1; d >= 0; d--) {
        coords[d] = rank % t->dims[d];
        rank /= t->dims[d];
    }
}

void rmpi_comm_cart_shift(const rmpi_comm_topo_t *t, const int *coords, int dir, int disp, int *src, int *dst)
{
    int c[t->ndims > 0 ? t->ndims : 1];
    memcpy(c, coords, (size_t)t->ndims * sizeof *c);
    int at = coords[dir], r;
    c[dir] = at + disp;
    *dst = (r = rmpi_comm_cart_rank(t, c)) < 0 ? MPI_PROC_NULL : r;
    c[dir] = at - disp;
    *src = (r = rmpi_comm_cart_rank(t, c)) < 0 ? MPI_PROC_NULL : r;
}

/* MPI_Dims_create: the factorisation of n into k non-increasing factors that are as close
 * to each other as possible: the smallest spread (largest minus smallest), ties broken by
 * the largest smallest factor, then the next (13x9x8x6 before 13x12x6x6 for 5616 in 4,
 * 10x6x6 before 9x8x5 for 360 in 3, as MPICH answers). The search walks the divisors of n
 * (found once), each factor upward from the k-th root of what remains, and leaves a branch
 * when even its best case, the remaining factors all at the (k-1)-th root of what would
 * remain, spreads more than the best found (that bound only grows with the factor). */
typedef struct dims_ctx {
    const int *div; /* divisors of the original n, ascending */
    int ndiv;
    int *cur, *best;
    int best_spread; /* -1: none yet */
} dims_ctx_t;

/* Largest r with r^k <= n (binary search: n < 2^31). */
static long long dims_root(long long n, int k)
{
    long long lo = 1, hi = n;
    while (lo < hi) {
        long long mid = (lo + hi + 1) / 2, p = 1;
        for (int i = 0; i < k && p <= n; i++)
            p *= mid;
        if (p <= n)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static void dims_search(dims_ctx_t *x, int n, int k, int maxf, int depth)
{
    if (k == 1) {
        if (n > maxf)
            return;
        x->cur[depth] = n;
        int spread = x->cur[0] - n, cmp = 0;
        for (int i = depth; i >= 0 && !cmp && x->best_spread >= 0; i--)
            cmp = (x->cur[i] > x->best[i]) - (x->cur[i] < x->best[i]);
        if (x->best_spread < 0 || spread < x->best_spread || (spread == x->best_spread && cmp > 0)) {
            x->best_spread = spread;
            memcpy(x->best, x->cur, (size_t)(depth + 1) * sizeof *x->cur);
        }
        return;
    }
    long long lo = dims_root(n, k); /* the largest factor is at least the k-th root */
    for (int i = 0; i < x->ndiv; i++) {
        int f = x->div[i];
        if (f < lo || n % f)
            continue;
        if (f > maxf)
            break;
        int top = depth ? x->cur[0] : f;
        if (x->best_spread >= 0 && top - dims_root(n / f, k - 1) > x->best_spread)
            break;
        x->cur[depth] = f;
        dims_search(x, n / f, k - 1, f, depth + 1);
    }
}

int rmpi_dims_create(int nnodes, int ndims, int *dims)
{
    if (nnodes <= 0 || ndims < 0)
        return MPI_ERR_DIMS;
    int fixed = 1, nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return MPI_ERR_DIMS;
        if (dims[i] > 0)
            fixed *= dims[i];
        else
            nfree++;
    }
    if (nfree == 0)
        return fixed == nnodes ? MPI_SUCCESS : MPI_ERR_DIMS;
    if (fixed == 0 || nnodes % fixed)
        return MPI_ERR_DIMS;
    int rest = nnodes / fixed;
    int ndiv = 0, *div = rmpi_xmalloc(1600 * sizeof *div); /* no int has more divisors */
    for (int d = 1; (long long)d * d <= rest; d++)
        if (rest % d == 0) {
            div[ndiv++] = d;
            if (d != rest / d)
                div[ndiv++] = rest / d;
        }
    for (int a = 1; a < ndiv; a++) /* ascending (insertion sort: 1600 at most) */
        for (int b = a; b > 0 && div[b] < div[b - 1]; b--) {
            int t = div[b];
            div[b] = div[b - 1];
            div[b - 1] = t;
        }
    dims_ctx_t x = {div, ndiv, rmpi_xmalloc((size_t)nfree * sizeof(int)), rmpi_xmalloc((size_t)nfree * sizeof(int)),
                    -1};
    dims_search(&x, rest, nfree, rest, 0);
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = x.best[k++];
    free(x.cur);
    free(x.best);
    free(div);
    return MPI_SUCCESS;
}

int rmpi_comm_neighbors(rmpi_comm_t *c, int *indegree, const int **sources, int *outdegree, const int **destinations)
{
    if (!c->topo)
        return MPI_ERR_TOPOLOGY;
    *indegree = c->topo->indeg;
    *outdegree = c->topo->outdeg;
    *sources = c->topo->srcs;
    *destinations = c->topo->dsts;
    return 0;
}

/* MPI_Dist_graph_create: every process may name any edge, so each one sends every peer the
 * edges that touch it ({source, destination, weight} triples), in one round per peer. A
 * process's lists are ordered by the process that named the edge, then as named there,
 * which keeps the two ends of every edge in the same order. */
int rmpi_comm_dist_graph_build(rmpi_comm_t *c, int n, const int *srcs, const int *degs, const int *dsts, const int *w,
                               int weighted, rmpi_comm_topo_t **out)
{
    int size = c->size, me = c->rank, nedges = 0;
    const int tag = 0x7ff8;
    for (int i = 0; i < n; i++)
        nedges += degs[i];
    int **from = rmpi_xcalloc((size_t)size, sizeof *from), *cnt = rmpi_xcalloc((size_t)size, sizeof *cnt);
    int *buf = rmpi_xmalloc((size_t)(3 * nedges + 1) * sizeof *buf);
    int any_weighted = weighted;
    for (int step = 0; step < size; step++) {
        int to = (me + step) % size, fr = (me - step + size) % size, k = 0, e = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < degs[i]; j++, e++)
                if (srcs[i] == to || dsts[e] == to) {
                    buf[3 * k] = srcs[i], buf[3 * k + 1] = dsts[e], buf[3 * k + 2] = weighted ? w[e] : 1;
                    k++;
                }
        int hdr[2] = {k, weighted}, rhdr[2];
        rmpi_comm_coll_sendrecv(c, hdr, sizeof hdr, to, rhdr, sizeof rhdr, fr, tag);
        from[fr] = rmpi_xmalloc((size_t)(3 * rhdr[0] + 1) * sizeof *from[fr]);
        cnt[fr] = rhdr[0];
        any_weighted |= rhdr[1];
        rmpi_comm_coll_sendrecv(c, buf, (size_t)(3 * k) * sizeof *buf, to, from[fr],
                                (size_t)(3 * rhdr[0]) * sizeof *buf, fr, tag);
    }
    int total = 0;
    for (int p = 0; p < size; p++)
        total += cnt[p];
    size_t bytes = (size_t)(total + 1) * sizeof(int);
    int *in = rmpi_xmalloc(bytes), *inw = rmpi_xmalloc(bytes), *outl = rmpi_xmalloc(bytes), *outw = rmpi_xmalloc(bytes);
    int nin = 0, nout = 0;
    for (int p = 0; p < size; p++) {
        for (int k = 0; k < cnt[p]; k++) {
            int s = from[p][3 * k], d = from[p][3 * k + 1], wt = from[p][3 * k + 2];
            if (s == me)
                outl[nout] = d, outw[nout++] = wt;
            if (d == me)
                in[nin] = s, inw[nin++] = wt;
        }
        free(from[p]);
    }
    *out = rmpi_comm_dist_graph(nin, in, inw, nout, outl, outw, any_weighted);
    free(in), free(inw), free(outl), free(outw), free(from), free(cnt), free(buf);
    return 0;
}
