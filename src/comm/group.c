/* Groups: ordered sets of world ranks and their algebra. Pure logic (no communication). */
#include "comm.h"

#include <stdlib.h>
#include <string.h>

rmpi_addrset_t rmpi_group_live = RMPI_ADDRSET_INIT;
rmpi_group_t rmpi_group_empty = {RMPI_GROUP_MAGIC, 1, 0, MPI_UNDEFINED, NULL};

rmpi_group_t *rmpi_group_new(const int *world, int n, int me)
{
    if (n <= 0)
        return &rmpi_group_empty;
    rmpi_group_t *g = rmpi_xmalloc(sizeof *g);
    g->magic = RMPI_GROUP_MAGIC;
    rmpi_addrset_add(&rmpi_group_live, g);
    g->refcount = 1;
    g->size = n;
    g->world = rmpi_xmalloc((size_t)n * sizeof *g->world);
    g->rank = MPI_UNDEFINED;
    for (int i = 0; i < n; i++) {
        g->world[i] = world ? world[i] : i;
        if (g->world[i] == me)
            g->rank = i;
    }
    return g;
}

rmpi_group_t *rmpi_group_of_comm(const rmpi_comm_t *c, int remote)
{
    return remote ? rmpi_group_new(c->world, c->rsize, rmpi_core_rank)
                  : rmpi_group_new(c->lworld, c->size, rmpi_core_rank);
}

void rmpi_group_release(rmpi_group_t *g)
{
    if (g == &rmpi_group_empty || --g->refcount > 0)
        return;
    g->magic = 0;
    rmpi_addrset_del(&rmpi_group_live, g);
    free(g->world);
    free(g);
}

int rmpi_group_rank_of(const rmpi_group_t *g, int w)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == w)
            return i;
    return MPI_UNDEFINED;
}

int rmpi_group_compare(const rmpi_group_t *a, const rmpi_group_t *b)
{
    if (a->size != b->size)
        return MPI_UNEQUAL;
    int same = 1;
    for (int i = 0; i < a->size && same; i++)
        same = a->world[i] == b->world[i];
    if (same)
        return MPI_IDENT;
    for (int i = 0; i < a->size; i++)
        if (rmpi_group_rank_of(b, a->world[i]) == MPI_UNDEFINED)
            return MPI_UNEQUAL;
    return MPI_SIMILAR;
}

void rmpi_group_translate(const rmpi_group_t *a, int n, const int *ranks, const rmpi_group_t *b, int *out)
{
    for (int i = 0; i < n; i++)
        out[i] = ranks[i] == MPI_PROC_NULL ? MPI_PROC_NULL : rmpi_group_rank_of(b, a->world[ranks[i]]);
}

/* Union (keep < 0): all of a, then b's members not in a. Else the members of a that are
 * (keep 1) or are not (keep 0) in b, in a's order. */
static rmpi_group_t *combine(const rmpi_group_t *a, const rmpi_group_t *b, int keep, int me)
{
    int *w = rmpi_xmalloc((size_t)(a->size + b->size + 1) * sizeof *w), n = 0;
    for (int i = 0; i < a->size; i++)
        if (keep < 0 || (rmpi_group_rank_of(b, a->world[i]) != MPI_UNDEFINED) == keep)
            w[n++] = a->world[i];
    if (keep < 0)
        for (int i = 0; i < b->size; i++)
            if (rmpi_group_rank_of(a, b->world[i]) == MPI_UNDEFINED)
                w[n++] = b->world[i];
    rmpi_group_t *g = rmpi_group_new(w, n, me);
    free(w);
    return g;
}

rmpi_group_t *rmpi_group_union(const rmpi_group_t *a, const rmpi_group_t *b, int me) { return combine(a, b, -1, me); }
rmpi_group_t *rmpi_group_intersection(const rmpi_group_t *a, const rmpi_group_t *b, int me)
{
    return combine(a, b, 1, me);
}
rmpi_group_t *rmpi_group_difference(const rmpi_group_t *a, const rmpi_group_t *b, int me)
{
    return combine(a, b, 0, me);
}

/* Ranks listed for incl/excl: each valid and distinct. */
static int check_ranks(const rmpi_group_t *g, int n, const int *ranks, char *seen)
{
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size || seen[ranks[i]])
            return MPI_ERR_RANK;
        seen[ranks[i]] = 1;
    }
    return MPI_SUCCESS;
}

int rmpi_group_incl(const rmpi_group_t *g, int n, const int *ranks, int me, rmpi_group_t **out)
{
    if (n < 0 || n > g->size)
        return n < 0 ? MPI_ERR_ARG : MPI_ERR_RANK;
    char *seen = rmpi_xcalloc((size_t)g->size + 1, 1);
    int rc = check_ranks(g, n, ranks, seen);
    free(seen);
    if (rc)
        return rc;
    int *w = rmpi_xmalloc((size_t)(n + 1) * sizeof *w);
    for (int i = 0; i < n; i++)
        w[i] = g->world[ranks[i]];
    *out = rmpi_group_new(w, n, me);
    free(w);
    return MPI_SUCCESS;
}

/* Members whose flag in `drop` is clear, in g's order. */
static rmpi_group_t *keep_unmarked(const rmpi_group_t *g, const char *drop, int me)
{
    int *w = rmpi_xmalloc((size_t)(g->size + 1) * sizeof *w), n = 0;
    for (int i = 0; i < g->size; i++)
        if (!drop[i])
            w[n++] = g->world[i];
    rmpi_group_t *r = rmpi_group_new(w, n, me);
    free(w);
    return r;
}

int rmpi_group_excl(const rmpi_group_t *g, int n, const int *ranks, int me, rmpi_group_t **out)
{
    if (n < 0 || n > g->size)
        return n < 0 ? MPI_ERR_ARG : MPI_ERR_RANK;
    char *seen = rmpi_xcalloc((size_t)g->size + 1, 1);
    int rc = check_ranks(g, n, ranks, seen);
    if (!rc)
        *out = keep_unmarked(g, seen, me);
    free(seen);
    return rc;
}

/* Expand ranges into a rank list (NULL on an invalid range). */
static int *expand_ranges(const rmpi_group_t *g, int n, const int (*ranges)[3], int *count, int *err)
{
    int total = 0;
    *err = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0) {
            *err = MPI_ERR_ARG;
            return NULL;
        }
        if (first < 0 || first >= g->size || last < 0 || last >= g->size) {
            *err = MPI_ERR_RANK;
            return NULL;
        }
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            continue; /* empty range */
        total += (last - first) / stride + 1;
        if (total > g->size) {
            *err = MPI_ERR_RANK;
            return NULL;
        }
    }
    int *r = rmpi_xmalloc((size_t)(total + 1) * sizeof *r), k = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        for (int x = first; stride > 0 ? x <= last : x >= last; x += stride)
            r[k++] = x;
    }
    *count = k;
    return r;
}

static int range_op(const rmpi_group_t *g, int n, const int (*ranges)[3], int me, rmpi_group_t **out, int incl)
{
    if (n < 0)
        return MPI_ERR_ARG;
    int cnt = 0, rc;
    int *ranks = expand_ranges(g, n, ranges, &cnt, &rc);
    if (!ranks)
        return rc;
    rc = incl ? rmpi_group_incl(g, cnt, ranks, me, out) : rmpi_group_excl(g, cnt, ranks, me, out);
    free(ranks);
    return rc;
}

int rmpi_group_range_incl(const rmpi_group_t *g, int n, const int (*ranges)[3], int me, rmpi_group_t **out)
{
    return range_op(g, n, ranges, me, out, 1);
}

int rmpi_group_range_excl(const rmpi_group_t *g, int n, const int (*ranges)[3], int me, rmpi_group_t **out)
{
    return range_op(g, n, ranges, me, out, 0);
}
