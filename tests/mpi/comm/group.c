/* Groups: every Group_* call checked against a reference computed locally on world ranks;
 * Comm_group of WORLD/SELF/splits; bad handles and ranks give the right classes. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

static int n;

/* World ranks of a group (through translate_ranks to WORLD's group). */
static void members(MPI_Group g, MPI_Group world, int *out, int *size)
{
    MTEST_OK(MPI_Group_size(g, size));
    int *r = malloc((size_t)(*size + 1) * sizeof *r);
    for (int i = 0; i < *size; i++)
        r[i] = i;
    MTEST_OK(MPI_Group_translate_ranks(g, *size, r, world, out));
    free(r);
}

static void expect(MPI_Group g, MPI_Group world, const int *ref, int nref, const char *what)
{
    int got[64], size;
    members(g, world, got, &size);
    MTEST_CHECK(size == nref, "%s: size %d, expected %d", what, size, nref);
    for (int i = 0; i < size && i < nref; i++)
        MTEST_CHECK(got[i] == ref[i], "%s: member %d is world rank %d, expected %d", what, i, got[i], ref[i]);
    int rank, myref = MPI_UNDEFINED;
    for (int i = 0; i < nref; i++)
        if (ref[i] == mtest_rank)
            myref = i;
    MTEST_OK(MPI_Group_rank(g, &rank));
    MTEST_CHECK(rank == myref, "%s: Group_rank %d, expected %d", what, rank, myref);
    if (nref == 0)
        MTEST_CHECK(g == MPI_GROUP_EMPTY, "%s: an empty result must be MPI_GROUP_EMPTY", what);
}

static int contains(const int *a, int na, int x)
{
    for (int i = 0; i < na; i++)
        if (a[i] == x)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    n = mtest_size;
    MPI_Group world, self, a, b, g;
    MTEST_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MTEST_OK(MPI_Comm_group(MPI_COMM_SELF, &self));
    int all[64];
    for (int i = 0; i < n; i++)
        all[i] = i;
    expect(world, world, all, n, "WORLD group");
    expect(self, world, &mtest_rank, 1, "SELF group");

    /* a = evens (ascending), b = ranks >= n/2 in descending order */
    int ea[64], na = 0, eb[64], nb = 0;
    for (int i = 0; i < n; i += 2)
        ea[na++] = i;
    for (int i = n - 1; i >= n / 2; i--)
        eb[nb++] = i;
    MTEST_OK(MPI_Group_incl(world, na, ea, &a));
    MTEST_OK(MPI_Group_incl(world, nb, eb, &b));
    expect(a, world, ea, na, "incl evens");
    expect(b, world, eb, nb, "incl upper half reversed");

    int ref[64], nr = 0;
    for (int i = 0; i < na; i++)
        ref[nr++] = ea[i];
    for (int i = 0; i < nb; i++)
        if (!contains(ea, na, eb[i]))
            ref[nr++] = eb[i];
    MTEST_OK(MPI_Group_union(a, b, &g));
    expect(g, world, ref, nr, "union");
    MTEST_OK(MPI_Group_free(&g));
    MTEST_CHECK(g == MPI_GROUP_NULL, "Group_free did not null the handle");

    nr = 0;
    for (int i = 0; i < na; i++)
        if (contains(eb, nb, ea[i]))
            ref[nr++] = ea[i];
    MTEST_OK(MPI_Group_intersection(a, b, &g));
    expect(g, world, ref, nr, "intersection");
    MTEST_OK(MPI_Group_free(&g));

    nr = 0;
    for (int i = 0; i < na; i++)
        if (!contains(eb, nb, ea[i]))
            ref[nr++] = ea[i];
    MTEST_OK(MPI_Group_difference(a, b, &g));
    expect(g, world, ref, nr, "difference");
    if (g != MPI_GROUP_EMPTY)
        MTEST_OK(MPI_Group_free(&g));

    MTEST_OK(MPI_Group_difference(a, a, &g));
    expect(g, world, NULL, 0, "a minus a");
    MTEST_OK(MPI_Group_intersection(a, MPI_GROUP_EMPTY, &g));
    expect(g, world, NULL, 0, "a with the empty group");

    /* excl: everything but rank 0 and the last */
    nr = 0;
    for (int i = 1; i < n - 1; i++)
        ref[nr++] = i;
    int ex[2] = {0, n - 1};
    MTEST_OK(MPI_Group_excl(world, n > 1 ? 2 : 1, ex, &g));
    expect(g, world, ref, nr, "excl first and last");
    if (g != MPI_GROUP_EMPTY)
        MTEST_OK(MPI_Group_free(&g));

    /* ranges: (n-1 .. 0 step -2) and (0 .. n-1 step 3) */
    int ranges[2][3] = {{n - 1, 0, -2}, {0, n - 1, 3}};
    nr = 0;
    for (int i = n - 1; i >= 0; i -= 2)
        ref[nr++] = i;
    MTEST_OK(MPI_Group_range_incl(world, 1, ranges, &g));
    expect(g, world, ref, nr, "range_incl n-1..0/-2");
    MTEST_OK(MPI_Group_free(&g));
    nr = 0;
    for (int i = 0; i < n; i++)
        if (i % 3)
            ref[nr++] = i;
    MTEST_OK(MPI_Group_range_excl(world, 1, &ranges[1], &g));
    expect(g, world, ref, nr, "range_excl 0..n-1/3");
    if (g != MPI_GROUP_EMPTY)
        MTEST_OK(MPI_Group_free(&g));

    /* compare */
    int res;
    MTEST_OK(MPI_Group_compare(world, world, &res));
    MTEST_CHECK(res == MPI_IDENT, "compare world world: %d", res);
    int rev[64];
    for (int i = 0; i < n; i++)
        rev[i] = n - 1 - i;
    MTEST_OK(MPI_Group_incl(world, n, rev, &g));
    MTEST_OK(MPI_Group_compare(world, g, &res));
    MTEST_CHECK(res == (n > 1 ? MPI_SIMILAR : MPI_IDENT), "compare world reversed: %d", res);
    MTEST_OK(MPI_Group_compare(a, g, &res));
    MTEST_CHECK(res == (na == n ? MPI_SIMILAR : MPI_UNEQUAL) || n == 1, "compare evens reversed: %d", res);

    /* translate: reversed -> world, PROC_NULL passes through, non-members give UNDEFINED */
    int in[3] = {0, MPI_PROC_NULL, n - 1}, out[3];
    MTEST_OK(MPI_Group_translate_ranks(g, 3, in, world, out));
    MTEST_CHECK(out[0] == n - 1 && out[1] == MPI_PROC_NULL && out[2] == 0, "translate: %d %d %d", out[0], out[1],
                out[2]);
    MTEST_OK(MPI_Group_translate_ranks(world, 1, &in[2], a, out));
    MTEST_CHECK(out[0] == ((n - 1) % 2 == 0 ? (n - 1) / 2 : MPI_UNDEFINED), "translate last into evens: %d", out[0]);
    MTEST_OK(MPI_Group_free(&g));

    /* the group of a split communicator */
    MPI_Comm sub;
    MTEST_OK(MPI_Comm_split(MPI_COMM_WORLD, mtest_rank % 2, -mtest_rank, &sub));
    MTEST_OK(MPI_Comm_group(sub, &g));
    nr = 0;
    for (int i = n - 1; i >= 0; i--)
        if (i % 2 == mtest_rank % 2)
            ref[nr++] = i;
    expect(g, world, ref, nr, "group of a split (reversed keys)");
    MTEST_OK(MPI_Group_free(&g));
    MTEST_OK(MPI_Comm_free(&sub));

    /* bad input */
    mtest_errors_return(MPI_COMM_WORLD);
    int bad[2] = {0, 0};
    MTEST_ERR(MPI_Group_size(MPI_GROUP_NULL, &res), MPI_ERR_GROUP);
    MTEST_ERR(MPI_Group_incl(world, 1, &n, &g), MPI_ERR_RANK);
    MTEST_ERR(MPI_Group_incl(world, 2, bad, &g), MPI_ERR_RANK);
    MTEST_ERR(MPI_Group_excl(world, 1, (int[]){-1}, &g), MPI_ERR_RANK);
    int zero_stride[1][3] = {{0, 0, 0}};
    MTEST_ERR(MPI_Group_range_incl(world, 1, zero_stride, &g), MPI_ERR_ARG);
    int out_range[1][3] = {{0, n, 1}};
    MTEST_ERR(MPI_Group_range_incl(world, 1, out_range, &g), MPI_ERR_RANK);
    MTEST_ERR(MPI_Group_translate_ranks(world, 1, &n, self, out), MPI_ERR_RANK);
    MTEST_ERR(MPI_Group_union(world, (MPI_Group)(void *)&res, &g), MPI_ERR_GROUP);
    MTEST_ERR(MPI_Comm_group(MPI_COMM_NULL, &g), MPI_ERR_COMM);

    MTEST_OK(MPI_Group_free(&a));
    MTEST_OK(MPI_Group_free(&b));
    MTEST_OK(MPI_Group_free(&self));
    MTEST_OK(MPI_Group_free(&world));
    return mtest_finalize();
}
