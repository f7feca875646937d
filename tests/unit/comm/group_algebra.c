/*
 * Group algebra (src/comm/group.c) against straightforward references, over 3000 random
 * pairs of groups (sizes 0..12, members drawn from 16 world ranks, random order):
 * union (first group's order, then the second's new members), intersection and difference
 * (first group's order), rank of "me", compare (IDENT/SIMILAR/UNEQUAL), translate (with
 * MPI_PROC_NULL and non-members), incl/excl (valid, duplicate and out-of-range ranks),
 * range_incl/range_excl against an explicit expansion (negative strides, empty ranges,
 * zero stride). Empty results are rmpi_group_empty.
 */
#include <stdlib.h>
#include <string.h>

#include "comm/comm.h"

#include "../unit_check.h"

#define W 16

static rmpi_group_t *random_group(unit_rng_t *rng, int me)
{
    int perm[W], n = (int)unit_range(rng, 0, 12);
    for (int i = 0; i < W; i++)
        perm[i] = i;
    for (int i = W - 1; i > 0; i--) {
        int j = (int)unit_range(rng, 0, (uint64_t)i), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    return rmpi_group_new(perm, n, me);
}

static int has(const rmpi_group_t *g, int w)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == w)
            return 1;
    return 0;
}

static void expect(const rmpi_group_t *g, const int *ref, int n, int me, const char *what)
{
    CHECK(g->size == n, "%s: size %d, expected %d", what, g->size, n);
    if (n == 0)
        CHECK(g == &rmpi_group_empty, "%s: empty result is not MPI_GROUP_EMPTY", what);
    int myrank = MPI_UNDEFINED;
    for (int i = 0; i < n && i < g->size; i++) {
        CHECK(g->world[i] == ref[i], "%s: member %d is %d, expected %d", what, i, g->world[i], ref[i]);
        if (ref[i] == me)
            myrank = i;
    }
    CHECK(g->rank == myrank, "%s: rank %d, expected %d", what, g->rank, myrank);
}

int main(void)
{
    unit_rng_t rng = unit_seed(4);
    for (int iter = 0; iter < 3000; iter++) {
        int me = (int)unit_range(&rng, 0, W - 1);
        rmpi_group_t *a = random_group(&rng, me), *b = random_group(&rng, me), *g;
        int ref[2 * W], n = 0;

        for (int i = 0; i < a->size; i++)
            ref[n++] = a->world[i];
        for (int i = 0; i < b->size; i++)
            if (!has(a, b->world[i]))
                ref[n++] = b->world[i];
        g = rmpi_group_union(a, b, me);
        expect(g, ref, n, me, "union");
        rmpi_group_release(g);

        n = 0;
        for (int i = 0; i < a->size; i++)
            if (has(b, a->world[i]))
                ref[n++] = a->world[i];
        g = rmpi_group_intersection(a, b, me);
        expect(g, ref, n, me, "intersection");
        int inter_n = n;
        rmpi_group_release(g);

        n = 0;
        for (int i = 0; i < a->size; i++)
            if (!has(b, a->world[i]))
                ref[n++] = a->world[i];
        g = rmpi_group_difference(a, b, me);
        expect(g, ref, n, me, "difference");
        rmpi_group_release(g);

        int cmp = rmpi_group_compare(a, b), ecmp;
        if (a->size != b->size || inter_n != a->size)
            ecmp = MPI_UNEQUAL;
        else
            ecmp = a->size == 0 || memcmp(a->world, b->world, (size_t)a->size * sizeof(int)) == 0 ? MPI_IDENT
                                                                                                  : MPI_SIMILAR;
        CHECK(cmp == ecmp, "compare %d, expected %d", cmp, ecmp);

        int in[W + 1], out[W + 1];
        for (int i = 0; i < a->size; i++)
            in[i] = i;
        in[a->size] = MPI_PROC_NULL;
        rmpi_group_translate(a, a->size + 1, in, b, out);
        for (int i = 0; i < a->size; i++)
            CHECK(out[i] == rmpi_group_rank_of(b, a->world[i]) &&
                      (out[i] == MPI_UNDEFINED || b->world[out[i]] == a->world[i]),
                  "translate %d -> %d", i, out[i]);
        CHECK(out[a->size] == MPI_PROC_NULL, "translate of MPI_PROC_NULL gave %d", out[a->size]);

        /* incl of a random subset in random order, excl of the same */
        if (a->size > 0) {
            int k = (int)unit_range(&rng, 0, (uint64_t)a->size), pick[W], used[W] = {0};
            for (int i = 0; i < k; i++) {
                int r;
                do
                    r = (int)unit_range(&rng, 0, (uint64_t)a->size - 1);
                while (used[r]);
                used[r] = 1;
                pick[i] = r;
                ref[i] = a->world[r];
            }
            CHECK(rmpi_group_incl(a, k, pick, me, &g) == MPI_SUCCESS, "incl failed");
            expect(g, ref, k, me, "incl");
            rmpi_group_release(g);
            n = 0;
            for (int i = 0; i < a->size; i++)
                if (!used[i])
                    ref[n++] = a->world[i];
            CHECK(rmpi_group_excl(a, k, pick, me, &g) == MPI_SUCCESS, "excl failed");
            expect(g, ref, n, me, "excl");
            rmpi_group_release(g);
            int dupl[2] = {0, 0}, oob[1] = {a->size};
            CHECK(rmpi_group_incl(a, 2, dupl, me, &g) == MPI_ERR_RANK, "duplicate rank accepted by incl");
            CHECK(rmpi_group_excl(a, 1, oob, me, &g) == MPI_ERR_RANK, "out-of-range rank accepted by excl");

            /* one range (first, last, stride) with a random sign */
            int first = (int)unit_range(&rng, 0, (uint64_t)a->size - 1);
            int last = (int)unit_range(&rng, 0, (uint64_t)a->size - 1);
            int stride = (int)unit_range(&rng, 1, 3) * (unit_range(&rng, 0, 1) ? 1 : -1);
            int rg[1][3] = {{first, last, stride}}, mark[W] = {0};
            n = 0;
            for (int x = first; stride > 0 ? x <= last : x >= last; x += stride)
                ref[n++] = a->world[x], mark[x] = 1;
            CHECK(rmpi_group_range_incl(a, 1, (const int(*)[3])rg, me, &g) == MPI_SUCCESS, "range_incl failed");
            expect(g, ref, n, me, "range_incl");
            rmpi_group_release(g);
            n = 0;
            for (int i = 0; i < a->size; i++)
                if (!mark[i])
                    ref[n++] = a->world[i];
            CHECK(rmpi_group_range_excl(a, 1, (const int(*)[3])rg, me, &g) == MPI_SUCCESS, "range_excl failed");
            expect(g, ref, n, me, "range_excl");
            rmpi_group_release(g);
            int zero[1][3] = {{0, 0, 0}};
            CHECK(rmpi_group_range_incl(a, 1, (const int(*)[3])zero, me, &g) == MPI_ERR_ARG, "zero stride accepted");
        }
        rmpi_group_release(a);
        rmpi_group_release(b);
        CHECK_BAIL(1);
    }
    return finish("comm/group_algebra");
}
