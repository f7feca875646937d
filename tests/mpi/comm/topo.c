/* Topologies: Dims_create against known balanced answers; a 2-D Cartesian grid (one
 * periodic dimension) with every query checked against row-major coordinates computed here;
 * shifts, Cart_sub rows used for messages, Cart_map, a grid smaller than the job, dup
 * keeping the topology; a ring graph with every query; distributed graphs (adjacent and
 * general, weighted, an edge named by a third process) against a local simulation of the
 * standard's rules; bad input classes. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

static void dims_case(int nnodes, int ndims, const int *in, const int *expect)
{
    int d[8];
    memcpy(d, in, (size_t)ndims * sizeof *d);
    MTEST_OK(MPI_Dims_create(nnodes, ndims, d));
    for (int i = 0; i < ndims; i++)
        MTEST_CHECK(d[i] == expect[i], "Dims_create(%d, %d): dims[%d] = %d, expected %d", nnodes, ndims, i, d[i],
                    expect[i]);
}

static void check_cart(MPI_Comm cart, int nd, const int *dims, const int *periods, const int *world_of)
{
    int r, s, status, ndims;
    MPI_Comm_rank(cart, &r);
    MPI_Comm_size(cart, &s);
    MTEST_OK(MPI_Topo_test(cart, &status));
    MTEST_CHECK(status == MPI_CART, "Topo_test %d", status);
    MTEST_OK(MPI_Cartdim_get(cart, &ndims));
    MTEST_CHECK(ndims == nd, "Cartdim_get %d, expected %d", ndims, nd);
    int gd[4], gp[4], gc[4], c[4];
    MTEST_OK(MPI_Cart_get(cart, nd, gd, gp, gc));
    for (int i = 0, rest = r; i < nd; i++) {
        int stride = 1;
        for (int j = i + 1; j < nd; j++)
            stride *= dims[j];
        c[i] = rest / stride;
        rest %= stride;
        MTEST_CHECK(gd[i] == dims[i] && !!gp[i] == !!periods[i] && gc[i] == c[i],
                    "Cart_get dim %d: %d/%d/%d, expected %d/%d/%d", i, gd[i], gp[i], gc[i], dims[i], periods[i], c[i]);
    }
    int back;
    MTEST_OK(MPI_Cart_rank(cart, gc, &back));
    MTEST_CHECK(back == r, "Cart_rank(my coords) %d, expected %d", back, r);
    for (int q = 0; q < s; q++) {
        int qc[4];
        MTEST_OK(MPI_Cart_coords(cart, q, nd, qc));
        MTEST_OK(MPI_Cart_rank(cart, qc, &back));
        MTEST_CHECK(back == q, "Cart_rank(Cart_coords(%d)) = %d", q, back);
    }
    for (int dir = 0; dir < nd; dir++)
        for (int disp = -2; disp <= 2; disp++) {
            int src, dst, esrc, edst, cc[4];
            MTEST_OK(MPI_Cart_shift(cart, dir, disp, &src, &dst));
            for (int sign = -1; sign <= 1; sign += 2) {
                memcpy(cc, c, sizeof cc);
                cc[dir] += sign * disp;
                int ok = 1;
                if (cc[dir] < 0 || cc[dir] >= dims[dir]) {
                    if (periods[dir])
                        cc[dir] = ((cc[dir] % dims[dir]) + dims[dir]) % dims[dir];
                    else
                        ok = 0;
                }
                int rr = MPI_PROC_NULL;
                if (ok)
                    MPI_Cart_rank(cart, cc, &rr);
                if (sign > 0)
                    edst = rr;
                else
                    esrc = rr;
            }
            MTEST_CHECK(src == esrc && dst == edst, "Cart_shift(dir %d, disp %d) = %d/%d, expected %d/%d", dir, disp,
                        src, dst, esrc, edst);
        }
    /* the shift neighbours are real: send along dimension 0 */
    int src, dst, got = -2;
    MPI_Cart_shift(cart, 0, 1, &src, &dst);
    MTEST_OK(MPI_Sendrecv(&mtest_rank, 1, MPI_INT, dst, 1, &got, 1, MPI_INT, src, 1, cart, MPI_STATUS_IGNORE));
    MTEST_CHECK(src == MPI_PROC_NULL || got == world_of[src], "shift message from %d: %d, expected %d", src, got,
                src == MPI_PROC_NULL ? -1 : world_of[src]);
}

/* Dist_graph_create declarations of process p (sources, degrees, destinations, weights). */
static int declare(int p, int n, int *srcs, int *degs, int *dsts, int *w)
{
    srcs[0] = p, degs[0] = 1, dsts[0] = (p + 1) % n, w[0] = p;
    if (p != 0)
        return 1;
    srcs[1] = n - 1, degs[1] = 1, dsts[1] = 0, w[1] = 1000; /* an edge named by a third process */
    return 2;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int n = mtest_size, me = mtest_rank;
    int ident[64];
    for (int i = 0; i < n; i++)
        ident[i] = i;

    dims_case(6, 2, (int[]){0, 0}, (int[]){3, 2});
    dims_case(12, 3, (int[]){0, 0, 0}, (int[]){3, 2, 2});
    dims_case(16, 3, (int[]){0, 0, 0}, (int[]){4, 2, 2});
    dims_case(7, 2, (int[]){0, 0}, (int[]){7, 1});
    dims_case(24, 3, (int[]){0, 3, 0}, (int[]){4, 3, 2});
    dims_case(64, 3, (int[]){0, 0, 0}, (int[]){4, 4, 4});
    dims_case(36, 2, (int[]){0, 0}, (int[]){6, 6});
    dims_case(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    dims_case(8, 2, (int[]){2, 4}, (int[]){2, 4});
    /* As close as possible: equal spreads are told apart by the larger smallest factors
     * (MPICH's answers), and numbers with many divisors are answered at once. */
    dims_case(5616, 4, (int[]){0, 0, 0, 0}, (int[]){13, 9, 8, 6});
    dims_case(7344, 4, (int[]){0, 0, 0, 0}, (int[]){17, 9, 8, 6});
    dims_case(8208, 4, (int[]){0, 0, 0, 0}, (int[]){19, 9, 8, 6});
    dims_case(9936, 4, (int[]){0, 0, 0, 0}, (int[]){23, 9, 8, 6});
    dims_case(360, 3, (int[]){0, 0, 0}, (int[]){10, 6, 6});
    dims_case(2160, 4, (int[]){0, 0, 0, 0}, (int[]){10, 6, 6, 6});
    dims_case(1073741824, 4, (int[]){0, 0, 0, 0}, (int[]){256, 256, 128, 128});
    dims_case(2095133040, 8, (int[]){0, 0, 0, 0, 0, 0, 0, 0}, (int[]){19, 18, 17, 15, 14, 13, 12, 11});

    /* 2-D grid over everyone, periodic in dimension 1 */
    int dims[2] = {0, 0}, periods[2] = {0, 1};
    MTEST_OK(MPI_Dims_create(n, 2, dims));
    MPI_Comm cart, dup, row;
    MTEST_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart));
    check_cart(cart, 2, dims, periods, ident);
    MTEST_OK(MPI_Comm_dup(cart, &dup));
    check_cart(dup, 2, dims, periods, ident);
    MTEST_OK(MPI_Comm_free(&dup));
    int newrank;
    MTEST_OK(MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &newrank));
    MTEST_CHECK(newrank == me, "Cart_map %d", newrank);

    /* rows: keep dimension 1 */
    MTEST_OK(MPI_Cart_sub(cart, (int[]){0, 1}, &row));
    int rs, rr, rowworld[64];
    MPI_Comm_size(row, &rs);
    MPI_Comm_rank(row, &rr);
    MTEST_CHECK(rs == dims[1] && rr == me % dims[1], "row: rank %d size %d", rr, rs);
    for (int i = 0; i < rs; i++)
        rowworld[i] = me - me % dims[1] + i;
    check_cart(row, 1, &dims[1], &periods[1], rowworld);
    MTEST_OK(MPI_Comm_free(&row));
    /* nothing kept: a 0-dimensional grid of one process */
    MTEST_OK(MPI_Cart_sub(cart, (int[]){0, 0}, &row));
    MPI_Comm_size(row, &rs);
    int nd = -1;
    MTEST_OK(MPI_Cartdim_get(row, &nd));
    MTEST_CHECK(rs == 1 && nd == 0, "empty sub-grid: size %d ndims %d", rs, nd);
    MTEST_OK(MPI_Comm_free(&row));
    MTEST_OK(MPI_Comm_free(&cart));

    /* a grid smaller than the job: the last rank is left out */
    if (n > 1) {
        int d1 = n - 1, p1 = 0;
        MTEST_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &d1, &p1, 0, &cart));
        MTEST_CHECK((cart == MPI_COMM_NULL) == (me == n - 1), "grid of %d: COMM_NULL on rank %d", d1, me);
        if (cart != MPI_COMM_NULL) {
            check_cart(cart, 1, &d1, &p1, ident);
            MTEST_OK(MPI_Comm_free(&cart));
        }
    }

    /* ring graph */
    int *index = malloc((size_t)n * sizeof *index), *edges = malloc((size_t)2 * n * sizeof *edges);
    for (int i = 0; i < n; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + n - 1) % n;
        edges[2 * i + 1] = (i + 1) % n;
    }
    MPI_Comm graph;
    MTEST_OK(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &graph));
    int status, nn, ne;
    MTEST_OK(MPI_Topo_test(graph, &status));
    MTEST_CHECK(status == MPI_GRAPH, "graph Topo_test %d", status);
    MTEST_OK(MPI_Graphdims_get(graph, &nn, &ne));
    MTEST_CHECK(nn == n && ne == 2 * n, "Graphdims_get %d %d", nn, ne);
    int *gi = malloc((size_t)n * sizeof *gi), *ge = malloc((size_t)2 * n * sizeof *ge);
    MTEST_OK(MPI_Graph_get(graph, n, 2 * n, gi, ge));
    MTEST_CHECK(memcmp(gi, index, (size_t)n * sizeof *gi) == 0 && memcmp(ge, edges, (size_t)2 * n * sizeof *ge) == 0,
                "Graph_get differs");
    for (int q = 0; q < n; q++) {
        int cnt, nb[2];
        MTEST_OK(MPI_Graph_neighbors_count(graph, q, &cnt));
        MTEST_OK(MPI_Graph_neighbors(graph, q, 2, nb));
        MTEST_CHECK(cnt == 2 && nb[0] == (q + n - 1) % n && nb[1] == (q + 1) % n, "neighbours of %d: %d: %d %d", q, cnt,
                    nb[0], nb[1]);
    }
    MTEST_OK(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &newrank));
    MTEST_CHECK(newrank == me, "Graph_map %d", newrank);
    MTEST_OK(MPI_Comm_free(&graph));

    /* adjacent distributed graph: in from the left, out to right and right+1, weighted */
    MPI_Comm dg;
    int asrc[1] = {(me + n - 1) % n}, aw[1] = {7}, adst[2] = {(me + 1) % n, (me + 2) % n}, adw[2] = {1, 2};
    MTEST_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, asrc, aw, 2, adst, adw, MPI_INFO_NULL, 0, &dg));
    int indeg, outdeg, weighted, s[4], sw[4], d[4], dw[4];
    MTEST_OK(MPI_Topo_test(dg, &status));
    MTEST_CHECK(status == MPI_DIST_GRAPH, "dist graph Topo_test %d", status);
    MTEST_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    MTEST_CHECK(indeg == 1 && outdeg == 2 && weighted, "adjacent counts %d %d %d", indeg, outdeg, weighted);
    MTEST_OK(MPI_Dist_graph_neighbors(dg, 1, s, sw, 2, d, dw));
    MTEST_CHECK(s[0] == asrc[0] && sw[0] == 7 && d[0] == adst[0] && d[1] == adst[1] && dw[0] == 1 && dw[1] == 2,
                "adjacent neighbours differ");
    MTEST_OK(MPI_Comm_free(&dg));
    MTEST_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                            MPI_INFO_NULL, 0, &dg));
    MTEST_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    MTEST_CHECK(indeg == 0 && outdeg == 0 && !weighted, "empty adjacent counts %d %d %d", indeg, outdeg, weighted);
    MTEST_OK(MPI_Comm_free(&dg));

    /* general distributed graph */
    int srcs[2], degs[2], dsts[2], w[2];
    int k = declare(me, n, srcs, degs, dsts, w);
    MTEST_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, k, srcs, degs, dsts, w, MPI_INFO_NULL, 0, &dg));
    int ein[8], einw[8], eout[8], eoutw[8], nin = 0, nout = 0;
    for (int p = 0; p < n; p++) {
        int ps[2], pd[2], pds[2], pw[2], pk = declare(p, n, ps, pd, pds, pw);
        for (int i = 0; i < pk; i++) {
            if (ps[i] == me)
                eout[nout] = pds[i], eoutw[nout++] = pw[i];
            if (pds[i] == me)
                ein[nin] = ps[i], einw[nin++] = pw[i];
        }
    }
    MTEST_OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    MTEST_CHECK(indeg == nin && outdeg == nout && weighted, "general counts %d/%d %d/%d %d", indeg, nin, outdeg, nout,
                weighted);
    if (indeg == nin && outdeg == nout) {
        MTEST_OK(MPI_Dist_graph_neighbors(dg, 4, s, sw, 4, d, dw));
        for (int i = 0; i < nin; i++)
            MTEST_CHECK(s[i] == ein[i] && sw[i] == einw[i], "in %d: %d (w %d), expected %d (w %d)", i, s[i], sw[i],
                        ein[i], einw[i]);
        for (int i = 0; i < nout; i++)
            MTEST_CHECK(d[i] == eout[i] && dw[i] == eoutw[i], "out %d: %d (w %d), expected %d (w %d)", i, d[i], dw[i],
                        eout[i], eoutw[i]);
    }
    MTEST_OK(MPI_Comm_free(&dg));

    /* bad input */
    mtest_errors_return(MPI_COMM_WORLD);
    MTEST_ERR(MPI_Cart_get(MPI_COMM_WORLD, 2, dims, periods, s), MPI_ERR_TOPOLOGY);
    MTEST_ERR(MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &ne), MPI_ERR_TOPOLOGY);
    MTEST_ERR(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &indeg, &outdeg, &weighted), MPI_ERR_TOPOLOGY);
    MTEST_ERR(MPI_Cart_create(MPI_COMM_WORLD, 1, (int[]){n + 1}, periods, 0, &cart), MPI_ERR_TOPOLOGY);
    MTEST_ERR(MPI_Cart_create(MPI_COMM_WORLD, 1, (int[]){-1}, periods, 0, &cart), MPI_ERR_DIMS);
    MTEST_ERR(MPI_Dims_create(7, 2, (int[]){2, 0}), MPI_ERR_DIMS);
    MTEST_ERR(MPI_Dims_create(6, 2, (int[]){-1, 0}), MPI_ERR_DIMS);
    MTEST_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, &n, periods, 0, &cart));
    MTEST_OK(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
    MTEST_ERR(MPI_Cart_shift(cart, 1, 1, &s[0], &d[0]), MPI_ERR_ARG);
    MTEST_ERR(MPI_Cart_coords(cart, n, 1, s), MPI_ERR_RANK);
    MTEST_ERR(MPI_Cart_rank(cart, (int[]){n}, &newrank), MPI_ERR_ARG);
    MTEST_ERR(MPI_Graph_neighbors_count(cart, 0, &nn), MPI_ERR_TOPOLOGY);
    MTEST_OK(MPI_Comm_free(&cart));
    MTEST_ERR(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, (int[]){n}, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                             MPI_INFO_NULL, 0, &dg),
              MPI_ERR_RANK);
    MTEST_ERR(MPI_Graph_create(MPI_COMM_WORLD, n + 1, index, edges, 0, &graph), MPI_ERR_ARG);
    free(index), free(edges), free(gi), free(ge);
    return mtest_finalize();
}
