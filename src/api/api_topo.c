/* Topology bindings: Cartesian, graph and distributed graph constructors and queries,
 * Dims_create, Topo_test. reorder is accepted and ignored (ranks keep their order). */
#include "api_impl.h"

#include <stdlib.h>

#define GET_INTRA(c, comm)                                                        \
    RMPI_API_INIT_CHECK();                                                        \
    rmpi_comm_t *c = rmpi_comm_get(comm);                                         \
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator %p", (void *)(comm)); \
    RMPI_CHECK(!c->inter, c, MPI_ERR_COMM, "topologies need an intracommunicator, not an intercommunicator")

#define GET_TOPO(t, c, comm, k, what)                                       \
    GET_INTRA(c, comm);                                                     \
    rmpi_comm_topo_t *t = c->topo && c->topo->kind == (k) ? c->topo : NULL; \
    RMPI_CHECK(t, c, MPI_ERR_TOPOLOGY, "the communicator has no %s topology", what)

/* Members with rank < n form the new communicator, with topology t built for each. */
static int make_topo_comm(const char *func, rmpi_comm_t *c, int n, rmpi_comm_topo_t *(*build)(const void *, int),
                          const void *arg, MPI_Comm *out)
{
    rmpi_comm_t *nc;
    RMPI_LOCK();
    int rc = rmpi_comm_split(c, c->rank < n ? 0 : MPI_UNDEFINED, c->rank, &nc);
    if (!rc && nc)
        nc->topo = build(arg, nc->rank);
    RMPI_UNLOCK();
    if (rc)
        return rmpi_api_error(c, rc, func, "could not build the new communicator");
    return rmpi_api_comm_adopt(c, nc, 0, NULL, out);
}

typedef struct cart_args {
    int ndims;
    const int *dims, *periods;
} cart_args_t;

static rmpi_comm_topo_t *build_cart(const void *arg, int rank)
{
    const cart_args_t *a = arg;
    return rmpi_comm_cart(a->ndims, a->dims, a->periods, rank);
}

/* Product of dims, or -1 when one is not positive or it overflows `limit`. */
static int dims_product(int ndims, const int *dims, int limit)
{
    long long p = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return -1;
        p *= dims[i];
        if (p > limit)
            return -1;
    }
    return (int)p;
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm *comm_cart)
{
    GET_INTRA(c, comm_old);
    (void)reorder;
    RMPI_CHECK(comm_cart, c, MPI_ERR_ARG, "comm_cart must not be NULL");
    RMPI_CHECK(ndims >= 0, c, MPI_ERR_DIMS, "ndims %d is negative", ndims);
    RMPI_CHECK(ndims == 0 || (dims && periods), c, MPI_ERR_ARG, "dims and periods must not be NULL");
    int n = dims_product(ndims, dims, c->size);
    RMPI_CHECK(n > 0, c, ndims && dims_product(ndims, dims, 1 << 30) < 0 ? MPI_ERR_DIMS : MPI_ERR_TOPOLOGY,
               "the grid needs every dimension positive and at most %d processes (the communicator's size)", c->size);
    cart_args_t a = {ndims, dims, periods};
    return make_topo_comm(__func__, c, n, build_cart, &a, comm_cart);
}

int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    GET_INTRA(c, comm);
    (void)periods;
    RMPI_CHECK(newrank, c, MPI_ERR_ARG, "newrank must not be NULL");
    RMPI_CHECK(ndims >= 0 && (ndims == 0 || dims), c, MPI_ERR_DIMS, "invalid ndims %d or dims", ndims);
    int n = dims_product(ndims, dims, c->size);
    RMPI_CHECK(n > 0, c, MPI_ERR_DIMS, "the grid needs every dimension positive and at most %d processes", c->size);
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int MPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    GET_TOPO(t, c, comm, MPI_CART, "Cartesian");
    RMPI_CHECK(ndims, c, MPI_ERR_ARG, "ndims must not be NULL");
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    GET_TOPO(t, c, comm, MPI_CART, "Cartesian");
    RMPI_CHECK(maxdims >= 0, c, MPI_ERR_ARG, "maxdims %d is negative", maxdims);
    int n = maxdims < t->ndims ? maxdims : t->ndims;
    RMPI_CHECK(n == 0 || (dims && periods && coords), c, MPI_ERR_ARG, "dims, periods and coords must not be NULL");
    for (int i = 0; i < n; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
        coords[i] = t->coords[i];
    }
    return MPI_SUCCESS;
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    GET_TOPO(t, c, comm, MPI_CART, "Cartesian");
    RMPI_CHECK(rank && (t->ndims == 0 || coords), c, MPI_ERR_ARG, "coords and rank must not be NULL");
    int r = rmpi_comm_cart_rank(t, coords);
    RMPI_CHECK(r >= 0, c, MPI_ERR_ARG, "the coordinates are off the grid in a non-periodic dimension");
    *rank = r;
    return MPI_SUCCESS;
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    GET_TOPO(t, c, comm, MPI_CART, "Cartesian");
    RMPI_CHECK(rank >= 0 && rank < c->size, c, MPI_ERR_RANK, "rank %d is not in 0..%d", rank, c->size - 1);
    RMPI_CHECK(maxdims >= t->ndims, c, MPI_ERR_ARG, "maxdims %d is smaller than the %d dimensions", maxdims, t->ndims);
    RMPI_CHECK(t->ndims == 0 || coords, c, MPI_ERR_ARG, "coords must not be NULL");
    rmpi_comm_cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    GET_TOPO(t, c, comm, MPI_CART, "Cartesian");
    RMPI_CHECK(direction >= 0 && direction < t->ndims, c, MPI_ERR_ARG, "direction %d is not in 0..%d", direction,
               t->ndims - 1);
    RMPI_CHECK(rank_source && rank_dest, c, MPI_ERR_ARG, "rank_source and rank_dest must not be NULL");
    rmpi_comm_cart_shift(t, t->coords, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}

typedef struct sub_args {
    const rmpi_comm_topo_t *t;
    const int *remain;
} sub_args_t;

static rmpi_comm_topo_t *build_sub(const void *arg, int rank)
{
    const sub_args_t *a = arg;
    int dims[a->t->ndims > 0 ? a->t->ndims : 1], periods[a->t->ndims > 0 ? a->t->ndims : 1], k = 0;
    for (int i = 0; i < a->t->ndims; i++)
        if (a->remain[i])
            dims[k] = a->t->dims[i], periods[k++] = a->t->periods[i];
    return rmpi_comm_cart(k, dims, periods, rank);
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    GET_TOPO(t, c, comm, MPI_CART, "Cartesian");
    RMPI_CHECK(newcomm && (t->ndims == 0 || remain_dims), c, MPI_ERR_ARG, "remain_dims and newcomm must not be NULL");
    /* colour: position along the dropped dimensions; key: along the kept ones (row-major) */
    int color = 0, key = 0;
    for (int i = 0; i < t->ndims; i++) {
        if (remain_dims[i])
            key = key * t->dims[i] + t->coords[i];
        else
            color = color * t->dims[i] + t->coords[i];
    }
    rmpi_comm_t *nc;
    RMPI_LOCK();
    int rc = rmpi_comm_split(c, color, key, &nc);
    if (!rc)
        nc->topo = build_sub(&(sub_args_t){t, remain_dims}, nc->rank);
    RMPI_UNLOCK();
    if (rc)
        return RMPI_ERROR(c, rc, "could not build the sub-grid communicator");
    return rmpi_api_comm_adopt(c, nc, 0, NULL, newcomm);
}

int MPI_Dims_create(int nnodes, int ndims, int dims[])
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(ndims >= 0, NULL, MPI_ERR_DIMS, "ndims %d is negative", ndims);
    RMPI_CHECK(ndims == 0 || dims, NULL, MPI_ERR_ARG, "dims must not be NULL");
    if (ndims == 0) {
        RMPI_CHECK(nnodes == 1, NULL, MPI_ERR_DIMS, "no dimensions can hold %d processes", nnodes);
        return MPI_SUCCESS;
    }
    int rc = rmpi_dims_create(nnodes, ndims, dims);
    return rc ? RMPI_ERROR(NULL, rc, "%d processes do not fit the given dimensions (or a dimension is negative)",
                           nnodes)
              : MPI_SUCCESS;
}

/* ---- graphs ---- */

typedef struct graph_args {
    int nnodes;
    const int *index, *edges;
} graph_args_t;

static rmpi_comm_topo_t *build_graph(const void *arg, int rank)
{
    const graph_args_t *a = arg;
    return rmpi_comm_graph(a->nnodes, a->index, a->edges, rank);
}

static int graph_check(const char *func, rmpi_comm_t *c, int nnodes, const int *index, const int *edges)
{
    if (nnodes < 0 || nnodes > c->size)
        return rmpi_api_error(c, MPI_ERR_ARG, func, "nnodes %d is not in 0..%d (the communicator's size)", nnodes,
                              c->size);
    if (nnodes > 0 && (!index || (index[nnodes - 1] > 0 && !edges)))
        return rmpi_api_error(c, MPI_ERR_ARG, func, "index and edges must not be NULL");
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return rmpi_api_error(c, MPI_ERR_ARG, func, "index[%d] = %d is smaller than the one before", i, index[i]);
    for (int e = 0; nnodes > 0 && e < index[nnodes - 1]; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return rmpi_api_error(c, MPI_ERR_ARG, func, "edges[%d] = %d is not a node (0..%d)", e, edges[e],
                                  nnodes - 1);
    return MPI_SUCCESS;
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                     MPI_Comm *comm_graph)
{
    GET_INTRA(c, comm_old);
    (void)reorder;
    RMPI_CHECK(comm_graph, c, MPI_ERR_ARG, "comm_graph must not be NULL");
    int rc = graph_check(__func__, c, nnodes, index, edges);
    if (rc)
        return rc;
    graph_args_t a = {nnodes, index, edges};
    return make_topo_comm(__func__, c, nnodes, build_graph, &a, comm_graph);
}

int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    GET_INTRA(c, comm);
    RMPI_CHECK(newrank, c, MPI_ERR_ARG, "newrank must not be NULL");
    int rc = graph_check(__func__, c, nnodes, index, edges);
    if (rc)
        return rc;
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int MPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    GET_TOPO(t, c, comm, MPI_GRAPH, "graph");
    RMPI_CHECK(nnodes && nedges, c, MPI_ERR_ARG, "nnodes and nedges must not be NULL");
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}

int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    GET_TOPO(t, c, comm, MPI_GRAPH, "graph");
    RMPI_CHECK(maxindex >= 0 && maxedges >= 0, c, MPI_ERR_ARG, "maxindex and maxedges must not be negative");
    for (int i = 0; i < maxindex && i < t->nnodes; i++)
        index[i] = t->index[i];
    for (int i = 0; i < maxedges && i < t->nedges; i++)
        edges[i] = t->edges[i];
    return MPI_SUCCESS;
}

int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    GET_TOPO(t, c, comm, MPI_GRAPH, "graph");
    RMPI_CHECK(rank >= 0 && rank < t->nnodes, c, MPI_ERR_RANK, "rank %d is not a node (0..%d)", rank, t->nnodes - 1);
    RMPI_CHECK(nneighbors, c, MPI_ERR_ARG, "nneighbors must not be NULL");
    *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}

int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    GET_TOPO(t, c, comm, MPI_GRAPH, "graph");
    RMPI_CHECK(rank >= 0 && rank < t->nnodes, c, MPI_ERR_RANK, "rank %d is not a node (0..%d)", rank, t->nnodes - 1);
    int first = rank ? t->index[rank - 1] : 0, n = t->index[rank] - first;
    RMPI_CHECK(maxneighbors >= 0 && (maxneighbors == 0 || n == 0 || neighbors), c, MPI_ERR_ARG,
               "invalid maxneighbors %d or neighbors", maxneighbors);
    for (int i = 0; i < n && i < maxneighbors; i++)
        neighbors[i] = t->edges[first + i];
    return MPI_SUCCESS;
}

/* ---- distributed graphs ---- */

static int weights_given(const int *w) { return w != MPI_UNWEIGHTED; }

static int real_weights(const int *w) { return w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY; }

/* A copy of c (fresh context) carrying topology t. */
static int attach_dist(const char *func, rmpi_comm_t *c, rmpi_comm_topo_t *t, rmpi_info_t *info, MPI_Comm *out)
{
    rmpi_comm_t *nc;
    RMPI_LOCK();
    int rc = rmpi_comm_dup(c, &nc);
    if (!rc) {
        if (nc->topo)
            rmpi_comm_topo_release(nc->topo);
        nc->topo = t;
    }
    RMPI_UNLOCK();
    if (rc)
        return rmpi_api_error(c, rc, func, "could not build the new communicator");
    return rmpi_api_comm_adopt(c, nc, 0, info, out);
}

static int check_ranks(const char *func, rmpi_comm_t *c, int n, const int *r, const char *what)
{
    for (int i = 0; i < n; i++)
        if (r[i] < 0 || r[i] >= c->size)
            return rmpi_api_error(c, MPI_ERR_RANK, func, "%s[%d] = %d is not a rank (0..%d)", what, i, r[i],
                                  c->size - 1);
    return MPI_SUCCESS;
}

#define GET_INFO_ARG(i, info, c)                                                  \
    rmpi_info_t *i = NULL;                                                        \
    if ((info) != MPI_INFO_NULL) {                                                \
        i = rmpi_info_get(info);                                                  \
        RMPI_CHECK(i, c, MPI_ERR_INFO, "invalid info object %p", (void *)(info)); \
    }

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm *comm_dist_graph)
{
    GET_INTRA(c, comm_old);
    GET_INFO_ARG(i, info, c);
    (void)reorder;
    RMPI_CHECK(comm_dist_graph, c, MPI_ERR_ARG, "comm_dist_graph must not be NULL");
    RMPI_CHECK(indegree >= 0 && outdegree >= 0, c, MPI_ERR_ARG, "negative degree (in %d, out %d)", indegree, outdegree);
    RMPI_CHECK((!indegree || sources) && (!outdegree || destinations), c, MPI_ERR_ARG,
               "sources and destinations must not be NULL");
    int rc = check_ranks(__func__, c, indegree, sources, "sources");
    if (rc || (rc = check_ranks(__func__, c, outdegree, destinations, "destinations")))
        return rc;
    int weighted = weights_given(sourceweights) && weights_given(destweights);
    RMPI_CHECK(!weighted || ((!indegree || real_weights(sourceweights)) && (!outdegree || real_weights(destweights))),
               c, MPI_ERR_ARG, "weights must be given for every edge or be MPI_UNWEIGHTED");
    rmpi_comm_topo_t *t = rmpi_comm_dist_graph(indegree, sources, weighted ? sourceweights : NULL, outdegree,
                                               destinations, weighted ? destweights : NULL, weighted);
    return attach_dist(__func__, c, t, i, comm_dist_graph);
}

int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[],
                          const int weights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    GET_INTRA(c, comm_old);
    GET_INFO_ARG(i, info, c);
    (void)reorder;
    RMPI_CHECK(comm_dist_graph, c, MPI_ERR_ARG, "comm_dist_graph must not be NULL");
    RMPI_CHECK(n >= 0 && (!n || (sources && degrees)), c, MPI_ERR_ARG, "invalid n %d, sources or degrees", n);
    int nedges = 0;
    for (int k = 0; k < n; k++) {
        RMPI_CHECK(degrees[k] >= 0, c, MPI_ERR_ARG, "degrees[%d] = %d is negative", k, degrees[k]);
        nedges += degrees[k];
    }
    RMPI_CHECK(!nedges || destinations, c, MPI_ERR_ARG, "destinations must not be NULL");
    int rc = check_ranks(__func__, c, n, sources, "sources");
    if (rc || (rc = check_ranks(__func__, c, nedges, destinations, "destinations")))
        return rc;
    int weighted = weights_given(weights);
    RMPI_CHECK(!weighted || !nedges || real_weights(weights), c, MPI_ERR_ARG,
               "weights must be given for every edge or be MPI_UNWEIGHTED");
    rmpi_comm_topo_t *t;
    RMPI_LOCK();
    rc = rmpi_comm_dist_graph_build(c, n, sources, degrees, destinations, weights, weighted && nedges > 0, &t);
    RMPI_UNLOCK();
    if (rc)
        return RMPI_ERROR(c, rc, "could not exchange the graph's edges");
    t->weighted |= weighted; /* weighted even where no edge touches this process */
    return attach_dist(__func__, c, t, i, comm_dist_graph);
}

int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    GET_TOPO(t, c, comm, MPI_DIST_GRAPH, "distributed graph");
    RMPI_CHECK(indegree && outdegree && weighted, c, MPI_ERR_ARG, "the outputs must not be NULL");
    *indegree = t->indeg;
    *outdegree = t->outdeg;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                             int destinations[], int destweights[])
{
    GET_TOPO(t, c, comm, MPI_DIST_GRAPH, "distributed graph");
    RMPI_CHECK(maxindegree >= t->indeg && maxoutdegree >= t->outdeg, c, MPI_ERR_ARG,
               "maxindegree %d / maxoutdegree %d are below the degrees %d / %d", maxindegree, maxoutdegree, t->indeg,
               t->outdeg);
    for (int k = 0; k < t->indeg; k++) {
        sources[k] = t->srcs[k];
        if (t->srcw && real_weights(sourceweights))
            sourceweights[k] = t->srcw[k];
    }
    for (int k = 0; k < t->outdeg; k++) {
        destinations[k] = t->dsts[k];
        if (t->dstw && real_weights(destweights))
            destweights[k] = t->dstw[k];
    }
    return MPI_SUCCESS;
}

int MPI_Topo_test(MPI_Comm comm, int *status)
{
    RMPI_API_INIT_CHECK();
    rmpi_comm_t *c = rmpi_comm_get(comm);
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator %p", (void *)comm);
    RMPI_CHECK(status, c, MPI_ERR_ARG, "status must not be NULL");
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
