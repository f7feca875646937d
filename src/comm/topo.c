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

static rmpi_topo_t *topo_new(int kind)
{
    rmpi_topo_t *t = rmpi_xcalloc(1, sizeof *t);
    t->kind = kind;
    t->refcount = 1;
    return t;
}

rmpi_topo_t *rmpi_topo_cart(int ndims, const int *dims, const int *periods, int rank)
{
    rmpi_topo_t *t = topo_new(MPI_CART);
    t->ndims = ndims;
    t->dims = dup_ints(dims, ndims);
    t->periods = rmpi_xmalloc((size_t)(ndims > 0 ? ndims : 1) * sizeof *t->periods);
    for (int i = 0; i < ndims; i++)
        t->periods[i] = periods && periods[i] ? 1 : 0;
    t->coords = dup_ints(NULL, ndims);
    rmpi_topo_cart_coords(t, rank, t->coords);
    t->indeg = t->outdeg = 2 * ndims;
    t->srcs = dup_ints(NULL, 2 * ndims);
    for (int d = 0; d < ndims; d++)
        rmpi_topo_cart_shift(t, t->coords, d, 1, &t->srcs[2 * d], &t->srcs[2 * d + 1]);
    t->dsts = dup_ints(t->srcs, 2 * ndims);
    return t;
}

rmpi_topo_t *rmpi_topo_graph(int nnodes, const int *index, const int *edges, int rank)
{
    rmpi_topo_t *t = topo_new(MPI_GRAPH);
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

rmpi_topo_t *rmpi_topo_dist_graph(int indeg, const int *srcs, const int *srcw, int outdeg, const int *dsts,
                                  const int *dstw, int weighted)
{
    rmpi_topo_t *t = topo_new(MPI_DIST_GRAPH);
    t->weighted = weighted;
    t->indeg = indeg;
    t->outdeg = outdeg;
    t->srcs = dup_ints(srcs, indeg);
    t->dsts = dup_ints(dsts, outdeg);
    t->srcw = weighted && srcw ? dup_ints(srcw, indeg) : NULL;
    t->dstw = weighted && dstw ? dup_ints(dstw, outdeg) : NULL;
    return t;
}

void rmpi_topo_release(rmpi_topo_t *t)
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

int rmpi_topo_cart_rank(const rmpi_topo_t *t, const int *coords)
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

void rmpi_topo_cart_coords(const rmpi_topo_t *t, int rank, int *coords)
{
    for (int d = t->ndims - 1; d >= 0; d--) {
        coords[d] = rank % t->dims[d];
        rank /= t->dims[d];
    }
}

void rmpi_topo_cart_shift(const rmpi_topo_t *t, const int *coords, int dir, int disp, int *src, int *dst)
{
    int c[t->ndims > 0 ? t->ndims : 1];
    memcpy(c, coords, (size_t)t->ndims * sizeof *c);
    int at = coords[dir], r;
    c[dir] = at + disp;
    *dst = (r = rmpi_topo_cart_rank(t, c)) < 0 ? MPI_PROC_NULL : r;
    c[dir] = at - disp;
    *src = (r = rmpi_topo_cart_rank(t, c)) < 0 ? MPI_PROC_NULL : r;
}

/* Best non-increasing factorisation of n into k factors, each <= maxf: smallest spread
 * (first minus last), searched over divisors with pruning (the first factor is at least
 * the k-th root of n). cur[] holds the factors chosen so far. */
static void dims_search(int n, int k, int maxf, int *cur, int depth, int *best, int *best_spread)
{
    if (k == 0) {
        if (n == 1) {
            int spread = cur[0] - cur[depth - 1];
            if (*best_spread < 0 || spread < *best_spread) {
                *best_spread = spread;
                memcpy(best, cur, (size_t)depth * sizeof *cur);
            }
        }
        return;
    }
    for (int f = maxf < n ? maxf : n; f >= 1; f--) {
        if (n % f)
            continue;
        /* f^k must reach n, else the remaining factors (all <= f) cannot */
        long long p = 1;
        for (int i = 0; i < k && p < n; i++)
            p *= f;
        if (p < n)
            break;
        cur[depth] = f;
        dims_search(n / f, k - 1, f, cur, depth + 1, best, best_spread);
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
    int *cur = rmpi_xmalloc((size_t)nfree * sizeof *cur), *best = rmpi_xmalloc((size_t)nfree * sizeof *best);
    int spread = -1;
    dims_search(rest, nfree, rest, cur, 0, best, &spread);
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = best[k++];
    free(cur);
    free(best);
    return MPI_SUCCESS;
}

int rmpi_comm_neighbors(rmpi_comm_t *c, int *indegree, const int **sources, int *outdegree,
                        const int **destinations)
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
int rmpi_comm_dist_graph_build(rmpi_comm_t *c, int n, const int *srcs, const int *degs, const int *dsts,
                               const int *w, int weighted, rmpi_topo_t **out)
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
    *out = rmpi_topo_dist_graph(nin, in, inw, nout, outl, outw, any_weighted);
    free(in), free(inw), free(outl), free(outw), free(from), free(cnt), free(buf);
    return 0;
}
