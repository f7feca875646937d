/* Site-aware collectives (seed infiniband-wan 3.4: a broadcast done hierarchically over
 * connected clusters keeps traffic off the long link). Three tiers: the ranks of a node
 * group, the group leaders of a site, the site leaders; only the last crosses long links,
 * once per pair of sites (tree algorithms: once per site). Barrier, Bcast, Reduce and
 * Allreduce here; Allgather and Alltoall in site_gather.c. */
#include "coll_impl.h"

#include "../rt/rt.h"

#include <stdlib.h>

static int multi_site(const rmpi_comm_t *c)
{
    if (rmpi_topo_nsites() < 2)
        return 0;
    int first = rmpi_topo_site_of(rmpi_comm_world_rank(c, 0));
    for (int r = 0; r < c->size; r++) {
        int w = rmpi_comm_world_rank(c, r);
        /* processes of other worlds: no shared map (as coll_multi_node) */
        if (w >= rmpi_comm_world.size)
            return 0;
        if (rmpi_topo_site_of(w) != first)
            return 2;
    }
    return 0;
}

int coll_multi_site(rmpi_comm_t *c)
{
    if (!rmpi_knobs.COLL_SITES)
        return 0;
    if (RMPI_UNLIKELY(!c->coll_sites))
        c->coll_sites = (int8_t)(multi_site(c) ? 2 : 1);
    return c->coll_sites == 2;
}

/* Index of key in keys[0..n), appended when absent. */
static int intern(long long *keys, int *n, long long key)
{
    for (int i = 0; i < *n; i++)
        if (keys[i] == key)
            return i;
    keys[*n] = key;
    return (*n)++;
}

void coll_sites_get(rmpi_comm_t *c, int root, coll_sites_t *t)
{
    int n = c->size;
    long long *skey = rmpi_xmalloc((size_t)n * sizeof *skey), *gkey = rmpi_xmalloc((size_t)n * sizeof *gkey);
    int *gsite = rmpi_xmalloc((size_t)n * sizeof *gsite), *graw = rmpi_xmalloc((size_t)n * sizeof *graw);
    int *renum = rmpi_xmalloc((size_t)n * sizeof *renum);
    t->nsites = t->ngroups = 0;
    t->order = rmpi_xmalloc((size_t)n * sizeof *t->order);
    t->pos = rmpi_xmalloc((size_t)n * sizeof *t->pos);
    t->group_of = rmpi_xmalloc((size_t)n * sizeof *t->group_of);
    t->site_of = rmpi_xmalloc((size_t)n * sizeof *t->site_of);
    for (int r = 0; r < n; r++) {
        int w = rmpi_comm_world_rank(c, r), site = rmpi_topo_site_of(w);
        t->site_of[r] = intern(skey, &t->nsites, site);
        int ng = t->ngroups;
        graw[r] = intern(gkey, &t->ngroups, (long long)site << 32 | (unsigned)rmpi_topo_node_of(w));
        if (t->ngroups > ng)
            gsite[graw[r]] = t->site_of[r];
    }
    /* groups renumbered so that a site's groups are consecutive (each kept in order of
     * its lowest rank) */
    t->site_group0 = rmpi_xcalloc((size_t)t->nsites + 1, sizeof *t->site_group0);
    t->group_start = rmpi_xcalloc((size_t)t->ngroups + 1, sizeof *t->group_start);
    t->site_start = rmpi_xcalloc((size_t)t->nsites + 1, sizeof *t->site_start);
    t->group_leader = rmpi_xmalloc((size_t)t->ngroups * sizeof *t->group_leader);
    t->site_leader = rmpi_xmalloc((size_t)t->nsites * sizeof *t->site_leader);
    int k = 0;
    for (int s = 0; s < t->nsites; s++) {
        t->site_group0[s] = k;
        for (int g = 0; g < t->ngroups; g++)
            if (gsite[g] == s)
                renum[g] = k++;
    }
    t->site_group0[t->nsites] = k;
    for (int r = 0; r < n; r++) {
        t->group_of[r] = renum[graw[r]];
        t->group_start[t->group_of[r] + 1]++;
    }
    for (int g = 0; g < t->ngroups; g++)
        t->group_start[g + 1] += t->group_start[g];
    int *fill = renum; /* next free slot per group */
    for (int g = 0; g < t->ngroups; g++)
        fill[g] = t->group_start[g];
    for (int r = 0; r < n; r++) {
        t->pos[r] = fill[t->group_of[r]]++;
        t->order[t->pos[r]] = r;
    }
    for (int s = 0; s <= t->nsites; s++)
        t->site_start[s] = t->group_start[t->site_group0[s]];
    for (int g = 0; g < t->ngroups; g++)
        t->group_leader[g] = t->order[t->group_start[g]];
    for (int s = 0; s < t->nsites; s++)
        t->site_leader[s] = t->order[t->site_start[s]];
    if (root >= 0) {
        t->group_leader[t->group_of[root]] = root;
        t->site_leader[t->site_of[root]] = root;
    }
    free(skey), free(gkey), free(gsite), free(graw), free(renum);
}

void coll_sites_free(coll_sites_t *t)
{
    free(t->order), free(t->pos), free(t->site_start), free(t->group_start), free(t->site_group0);
    free(t->group_leader), free(t->site_leader), free(t->group_of), free(t->site_of);
}

static int index_of(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return i;
    return -1;
}

coll_grp_t coll_sites_tier(const coll_sites_t *t, int tier, int me, int *lead)
{
    int g = t->group_of[me], s = t->site_of[me];
    const int *m;
    int n, leader;
    if (tier == 0) {
        m = t->order + t->group_start[g], n = t->group_start[g + 1] - t->group_start[g], leader = t->group_leader[g];
    } else if (tier == 1) {
        m = t->group_leader + t->site_group0[s], n = t->site_group0[s + 1] - t->site_group0[s];
        leader = t->site_leader[s];
    } else {
        m = t->site_leader, n = t->nsites, leader = -1;
    }
    *lead = leader >= 0 ? index_of(m, n, leader) : 0;
    return (coll_grp_t){n, index_of(m, n, me), m};
}

/* in: members check in with the leader, which hears from all of them; out: the leader
 * releases them. */
static void fan(rmpi_nbc_t *s, const coll_grp_t *g, int lead, int in)
{
    if (g->me < 0 || g->n < 2)
        return;
    for (int i = 0; i < g->n; i++) {
        if (i == lead || (g->me != lead && i != g->me))
            continue;
        int peer = coll_peer(g, g->me == lead ? i : lead);
        if (in == (g->me != lead))
            rmpi_nbc_send(s, NULL, 0, peer);
        else
            rmpi_nbc_recv(s, NULL, 0, peer);
    }
    rmpi_nbc_round(s);
}

void coll_barrier_site(rmpi_nbc_t *s, rmpi_comm_t *c)
{
    coll_sites_t t;
    coll_sites_get(c, -1, &t);
    int l0, l1, l2;
    coll_grp_t g0 = coll_sites_tier(&t, 0, c->rank, &l0), g1 = coll_sites_tier(&t, 1, c->rank, &l1),
               g2 = coll_sites_tier(&t, 2, c->rank, &l2);
    fan(s, &g0, l0, 1);
    fan(s, &g1, l1, 1);
    if (g2.me >= 0)
        coll_barrier_dissemination(s, &g2);
    fan(s, &g1, l1, 0);
    fan(s, &g0, l0, 0);
    coll_sites_free(&t);
}

/* Root leads its group and site: site leaders first, then each site's group leaders,
 * then each group. */
void coll_bcast_site(rmpi_nbc_t *s, rmpi_comm_t *c, void *buf, size_t bytes, int root)
{
    coll_sites_t t;
    coll_sites_get(c, root, &t);
    int l0, l1, l2;
    coll_grp_t g0 = coll_sites_tier(&t, 0, c->rank, &l0), g1 = coll_sites_tier(&t, 1, c->rank, &l1),
               g2 = coll_sites_tier(&t, 2, c->rank, &l2);
    if (g2.me >= 0)
        coll_bcast_flat(s, &g2, buf, bytes, t.site_of[root]);
    if (g1.me >= 0 && g1.n > 1)
        coll_bcast_binomial(s, &g1, buf, bytes, l1);
    if (g0.n > 1)
        coll_bcast_binomial(s, &g0, buf, bytes, l0);
    coll_sites_free(&t);
}

/* Each group reduces to its leader, each site's leaders to the site leader, the site
 * leaders to root (commutative operations: member order is not rank order). */
void coll_reduce_site(rmpi_nbc_t *s, rmpi_comm_t *c, const coll_red_t *r, const void *in, void *out, size_t count,
                      int root)
{
    coll_sites_t t;
    coll_sites_get(c, root, &t);
    int l0, l1, l2;
    coll_grp_t g0 = coll_sites_tier(&t, 0, c->rank, &l0), g1 = coll_sites_tier(&t, 1, c->rank, &l1),
               g2 = coll_sites_tier(&t, 2, c->rank, &l2);
    void *w = g1.me < 0 ? NULL : c->rank == root ? out : rmpi_nbc_tmp(s, count * r->esize);
    coll_reduce_binomial(s, &g0, r, in, w, count, l0);
    if (g1.me >= 0 && g1.n > 1)
        coll_reduce_binomial(s, &g1, r, w, w, count, l1);
    if (g2.me >= 0)
        coll_reduce_flat(s, &g2, r, w, w, count, t.site_of[root]);
    coll_sites_free(&t);
}

/* Up the tiers as Reduce, an allreduce among the site leaders, down as Bcast. */
void coll_allreduce_site(rmpi_nbc_t *s, rmpi_comm_t *c, const coll_red_t *r, void *buf, size_t count)
{
    coll_sites_t t;
    coll_sites_get(c, -1, &t);
    int l0, l1, l2;
    size_t bytes = count * r->esize;
    coll_grp_t g0 = coll_sites_tier(&t, 0, c->rank, &l0), g1 = coll_sites_tier(&t, 1, c->rank, &l1),
               g2 = coll_sites_tier(&t, 2, c->rank, &l2);
    if (g0.n > 1)
        coll_reduce_binomial(s, &g0, r, buf, buf, count, l0);
    if (g1.me >= 0 && g1.n > 1)
        coll_reduce_binomial(s, &g1, r, buf, buf, count, l1);
    if (g2.me >= 0)
        coll_allreduce_flat(s, &g2, r, buf, count);
    if (g1.me >= 0 && g1.n > 1)
        coll_bcast_binomial(s, &g1, buf, bytes, l1);
    if (g0.n > 1)
        coll_bcast_binomial(s, &g0, buf, bytes, l0);
    coll_sites_free(&t);
}
