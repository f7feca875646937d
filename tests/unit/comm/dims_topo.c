/*
 * Pure topology logic of the comm layer:
 *  - rmpi_dims_create for every nnodes 1..360 and ndims 1..4, with and without a fixed
 *    dimension: the product is right, free dimensions are non-increasing, fixed ones are
 *    kept, and the spread (largest minus smallest free dimension) equals the best one
 *    found by brute force over all factorisations; MPI_ERR_DIMS when it cannot fit.
 *  - Cartesian neighbours (rmpi_comm_neighbors): for each dimension -1 then +1, periodic
 *    wrap or MPI_PROC_NULL, against coordinates computed here; coords/rank round trip.
 *  - graph neighbours are the adjacency list; dist graph lists as given; no topology ->
 *    MPI_ERR_TOPOLOGY.
 */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"

#include "../unit_check.h"

/* Brute force: enumerate all non-increasing factorisations, return the minimal spread. */
static void enum_fact(int n, int k, int maxf, int *cur, int depth, int *best)
{
    if (k == 0) {
        if (n == 1) {
            int s = cur[0] - cur[depth - 1];
            if (*best < 0 || s < *best)
                *best = s;
        }
        return;
    }
    for (int f = 1; f <= maxf && f <= n; f++)
        if (n % f == 0) {
            cur[depth] = f;
            enum_fact(n / f, k - 1, f, cur, depth + 1, best);
        }
}

static void test_dims(void)
{
    for (int n = 1; n <= 360; n++)
        for (int k = 1; k <= 4; k++) {
            int dims[4] = {0, 0, 0, 0};
            CHECK(rmpi_dims_create(n, k, dims) == MPI_SUCCESS, "dims_create(%d, %d) failed", n, k);
            int prod = 1;
            for (int i = 0; i < k; i++) {
                prod *= dims[i];
                if (i)
                    CHECK(dims[i] <= dims[i - 1], "dims_create(%d, %d): increasing at %d", n, k, i);
            }
            CHECK(prod == n, "dims_create(%d, %d): product %d", n, k, prod);
            int cur[4], best = -1;
            enum_fact(n, k, n, cur, 0, &best);
            CHECK(dims[0] - dims[k - 1] == best, "dims_create(%d, %d): spread %d, best %d", n, k, dims[0] - dims[k - 1],
                  best);
            CHECK_BAIL();
        }
    /* a fixed middle dimension */
    for (int n = 1; n <= 120; n++) {
        int dims[3] = {0, 2, 0};
        int rc = rmpi_dims_create(n, 3, dims);
        if (n % 2) {
            CHECK(rc == MPI_ERR_DIMS, "dims_create(%d, {0,2,0}) should fail", n);
            continue;
        }
        CHECK(rc == MPI_SUCCESS && dims[1] == 2 && dims[0] * dims[1] * dims[2] == n && dims[0] >= dims[2],
              "dims_create(%d, {0,2,0}) = %d %d %d", n, dims[0], dims[1], dims[2]);
    }
    int bad[2] = {-1, 0};
    CHECK(rmpi_dims_create(6, 2, bad) == MPI_ERR_DIMS, "negative dimension accepted");
    int full[2] = {2, 3};
    CHECK(rmpi_dims_create(6, 2, full) == MPI_SUCCESS, "fully given dims rejected");
    CHECK(rmpi_dims_create(7, 2, full) == MPI_ERR_DIMS, "fully given dims of the wrong product accepted");
}

static void test_cart(void)
{
    int dims[3] = {3, 4, 2}, periods[3] = {1, 0, 1};
    int n = 24;
    for (int r = 0; r < n; r++) {
        rmpi_comm_topo_t *t = rmpi_comm_cart(3, dims, periods, r);
        rmpi_comm_t c = {.topo = t};
        int indeg, outdeg;
        const int *src, *dst;
        CHECK(rmpi_comm_neighbors(&c, &indeg, &src, &outdeg, &dst) == 0, "cart neighbours failed");
        CHECK(indeg == 6 && outdeg == 6, "cart degrees %d %d", indeg, outdeg);
        int co[3] = {r / 8, (r / 2) % 4, r % 2};
        CHECK(memcmp(co, t->coords, sizeof co) == 0, "rank %d coords %d %d %d", r, t->coords[0], t->coords[1],
              t->coords[2]);
        CHECK(rmpi_comm_cart_rank(t, co) == r, "rank of my coords");
        for (int d = 0; d < 3; d++)
            for (int s = 0; s < 2; s++) {
                int cc[3] = {co[0], co[1], co[2]};
                cc[d] += s ? 1 : -1;
                int expect;
                if (cc[d] < 0 || cc[d] >= dims[d]) {
                    if (!periods[d]) {
                        expect = MPI_PROC_NULL;
                        goto check;
                    }
                    cc[d] = (cc[d] + dims[d]) % dims[d];
                }
                expect = cc[0] * 8 + cc[1] * 2 + cc[2];
            check:
                CHECK(src[2 * d + s] == expect && dst[2 * d + s] == expect, "rank %d dim %d %s: %d/%d, expected %d", r,
                      d, s ? "+1" : "-1", src[2 * d + s], dst[2 * d + s], expect);
            }
        rmpi_comm_topo_release(t);
    }
}

static void test_graph(void)
{
    int index[4] = {2, 3, 4, 6}, edges[6] = {1, 3, 0, 3, 0, 2};
    for (int r = 0; r < 4; r++) {
        rmpi_comm_topo_t *t = rmpi_comm_graph(4, index, edges, r);
        rmpi_comm_t c = {.topo = t};
        int indeg, outdeg;
        const int *src, *dst;
        CHECK(rmpi_comm_neighbors(&c, &indeg, &src, &outdeg, &dst) == 0, "graph neighbours failed");
        int first = r ? index[r - 1] : 0, deg = index[r] - first;
        CHECK(indeg == deg && outdeg == deg, "graph node %d degree %d/%d", r, indeg, outdeg);
        for (int i = 0; i < deg && i < indeg; i++)
            CHECK(src[i] == edges[first + i] && dst[i] == edges[first + i], "graph node %d neighbour %d", r, i);
        rmpi_comm_topo_release(t);
    }
    int s[2] = {4, 1}, sw[2] = {5, 6}, d[3] = {0, 0, 2};
    rmpi_comm_topo_t *t = rmpi_comm_dist_graph(2, s, sw, 3, d, NULL, 0);
    rmpi_comm_t c = {.topo = t};
    int indeg, outdeg;
    const int *src, *dst;
    CHECK(rmpi_comm_neighbors(&c, &indeg, &src, &outdeg, &dst) == 0 && indeg == 2 && outdeg == 3 && src[0] == 4 &&
              src[1] == 1 && dst[0] == 0 && dst[2] == 2,
          "dist graph lists not as given");
    rmpi_comm_topo_release(t);
    rmpi_comm_t none = {0};
    CHECK(rmpi_comm_neighbors(&none, &indeg, &src, &outdeg, &dst) == MPI_ERR_TOPOLOGY, "no topology accepted");
}

int main(void)
{
    test_dims();
    test_cart();
    test_graph();
    return finish("comm/dims_topo");
}
