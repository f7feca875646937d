/* Site-aware collectives (seed infiniband-wan 3.4: a broadcast done hierarchically over
 * connected clusters keeps traffic off the long link). Three tiers: the ranks of a node
 * group, the group leaders of a site, the site leaders; only the last crosses long links,
 * once per pair of sites (tree algorithms: once per site). Barrier, Bcast, Reduce and
 * Allreduce here; Allgather and Alltoall in site_gather.c. */
#include "coll_impl.h"

#include "../rt/rt.h"

#include <stdlib.h>
#include <string.h>

/* 0: one site (or processes of other worlds); 2: several, interleaved in the order of
 * the nodes' first ranks; 3: several, each site's nodes one run in that order. */
static int multi_site(const rmpi_comm_t *c)
{
    if (rmpi_topo_nsites() < 2)
        return 0;
    int n = c->size, first = rmpi_topo_site_of(rmpi_comm_world_rank(c, 0)), multi = 0;
    for (int r = 0; r < n; r++) {
        int w = rmpi_comm_world_rank(c, r);
        /* processes of other worlds: no shared map (as coll_multi_node) */
        if (w >= rmpi_comm_world.size)
            return 0;
        multi |= rmpi_topo_site_of(w) != first;
    }
    if (!multi)
        return 0;
    /* Nodes in the order of their first rank: the node leaders' order of the two-level
     * algorithms. */
    int *node = rmpi_xmalloc((size_t)n * sizeof *node), *site = rmpi_xmalloc((size_t)n * sizeof *site);
    for (int r = 0; r < n; r++) {
        int w = rmpi_comm_world_rank(c, r);
        node[r] = rmpi_topo_node_of(w);
        site[r] = rmpi_topo_site_of(w);
    }
    int runs = rmpi_site_runs(node, site, n);
    free(node);
    free(site);
    return runs ? 3 : 2;
}

int coll_multi_site(rmpi_comm_t *c)
{
    if (!rmpi_knobs.COLL_SITES)
        return 0;
    if (RMPI_UNLIKELY(!c->coll_sites)) {
        int m = multi_site(c);
        c->coll_sites = (int8_t)(m ? m : 1);
    }
    return c->coll_sites >= 2;
}

int coll_sites_in_runs(rmpi_comm_t *c) { return coll_multi_site(c) && c->coll_sites == 3; }

/* Index of key in keys[0..n), appended when absent. */
static int intern(long long *keys, int *n, long long key)
{
    for (int i = 0; i < *n; i++)
        if (keys[i] == key)
            return i;
    keys[*n] = key;
    return (*n)++;
}

/* The layout without a root in one block (the struct, then its arrays), so that the comm
 * layer frees it with free(). Why cached: built per call it cost the root of an 8-rank
 * Bcast about 2,000 instructions a call more than the node-aware tree (callgrind), paid
 * by every rank of a stream of small calls. */
static coll_sites_t *layout_build(rmpi_comm_t *c)
{
    int n = c->size;
    coll_sites_t *t = rmpi_xmalloc(sizeof *t + (9 * (size_t)n + 3) * sizeof(int));
    int *a = (int *)(t + 1);
    long long *skey = rmpi_xmalloc((size_t)n * sizeof *skey), *gkey = rmpi_xmalloc((size_t)n * sizeof *gkey);
    int *gsite = rmpi_xmalloc((size_t)n * sizeof *gsite), *graw = rmpi_xmalloc((size_t)n * sizeof *graw);
    int *renum = rmpi_xmalloc((size_t)n * sizeof *renum);
    t->nsites = t->ngroups = 0;
    t->order = a, t->pos = a + n, t->group_of = a + 2 * n, t->site_of = a + 3 * n;
    t->group_leader = a + 4 * n, t->site_leader = a + 5 * n;
    t->site_group0 = a + 6 * n, t->group_start = a + 7 * n + 1, t->site_start = a + 8 * n + 2;
    t->own = NULL;
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
    memset(t->group_start, 0, ((size_t)t->ngroups + 1) * sizeof *t->group_start);
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
    free(skey), free(gkey), free(gsite), free(graw), free(renum);
    return t;
}

void coll_sites_get(rmpi_comm_t *c, int root, coll_sites_t *t)
{
    if (RMPI_UNLIKELY(!c->coll_site_layout))
        c->coll_site_layout = layout_build(c);
    *t = *(const coll_sites_t *)c->coll_site_layout;
    t->own = rmpi_xmalloc(((size_t)t->ngroups + (size_t)t->nsites) * sizeof *t->own);
    memcpy(t->own, t->group_leader, (size_t)t->ngroups * sizeof *t->own);
    memcpy(t->own + t->ngroups, t->site_leader, (size_t)t->nsites * sizeof *t->own);
    t->group_leader = t->own, t->site_leader = t->own + t->ngroups;
    if (root >= 0) {
        t->group_leader[t->group_of[root]] = root;
        t->site_leader[t->site_of[root]] = root;
    }
}

void coll_sites_free(coll_sites_t *t) { free(t->own); }

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

/* The tiers from top down to 0 as one tree: my parent (-1: none) is in the highest tier
 * where I am a member other than its root, my children are those of every tier (binomial
 * in each: at a tier's root, the leader; tier 2's, root_site), the long links first. A
 * rank then receives once and sends to all its children in one round, so a site leader's
 * local sends do not wait for its sends across the long link to complete. */
typedef struct links {
    int parent, nchild, child[96];
} links_t;

static void tree_links(const coll_sites_t *t, int me, int top, int root_site, links_t *k)
{
    k->parent = -1;
    k->nchild = 0;
    for (int tier = top; tier >= 0; tier--) {
        int lead;
        coll_grp_t g = coll_sites_tier(t, tier, me, &lead);
        if (g.me < 0 || g.n < 2)
            continue;
        int n = g.n, root = tier == 2 ? root_site : lead, rel = (g.me - root + n) % n, mask = 1;
        while (mask < n && !(rel & mask))
            mask <<= 1;
        if (rel)
            k->parent = coll_peer(&g, (rel - mask + root) % n);
        for (mask >>= 1; mask > 0; mask >>= 1)
            if (rel + mask < n)
                k->child[k->nchild++] = coll_peer(&g, (rel + mask + root) % n);
    }
}

/* A vector larger than RMPI_COLL_SITE_CHUNK goes down in chunks, a rank forwarding chunk
 * i - 1 while chunk i arrives. Why: at the far end of the long link the vector arrives
 * eagerly, but the site's own hops (a LAN above its 64 KiB eager limit, shared memory
 * above 8 KiB) were rendezvous, each a handshake with a process that must be scheduled
 * first; with a site leader, a group leader and a rank in a chain, the far site's chain of
 * handshakes, not the link, set the time (2x2 sites, 2 ranks per host on 2 cores, 1 ms,
 * 128 KiB: every hop eager 1.4-1.9 ms a call, the single message 1.1-4.1 ms;
 * docs/results/wan.md). Up to SITE_CHUNKS_MAX chunks: a larger vector is bound by the long
 * link, and a chunk's shared-memory hop (above its 8 KiB eager limit) is a handshake of
 * its own (1 MiB in 16 chunks: 14.3 ms a call against 9.9 whole). */
enum { SITE_CHUNKS_MAX = 8 };
static void links_bcast(rmpi_nbc_t *s, const links_t *k, void *buf, size_t bytes, size_t chunk)
{
    size_t nch = bytes ? (bytes + chunk - 1) / chunk : 1;
    char *b = buf;
    for (size_t i = 0; i <= nch; i++) {
        if (i < nch && k->parent >= 0)
            rmpi_nbc_recv(s, b + i * chunk, RMPI_MIN(chunk, bytes - i * chunk), k->parent);
        for (int c = 0; i > 0 && c < k->nchild; c++)
            rmpi_nbc_send(s, b + (i - 1) * chunk, RMPI_MIN(chunk, bytes - (i - 1) * chunk), k->child[c]);
        if (i == nch || k->parent >= 0)
            rmpi_nbc_round(s);
    }
}

static void tree_bcast(rmpi_nbc_t *s, const coll_sites_t *t, int me, int top, int root_site, void *buf, size_t bytes)
{
    links_t k;
    tree_links(t, me, top, root_site, &k);
    size_t chunk = (size_t)rmpi_knobs.COLL_SITE_CHUNK;
    if (!chunk || chunk > bytes || bytes / chunk > SITE_CHUNKS_MAX)
        chunk = bytes;
    links_bcast(s, &k, buf, bytes, chunk ? chunk : 1);
}

/* Large vectors: one pipelined chain through every group leader, the root's site first
 * (from the root), then each further site from its leader, so that every port and each
 * long link carries the vector once (seed infiniband-wan 3.4: the long link should carry
 * each byte once), where the tree sends it through the root's port once per child. Each
 * group leader forwards chunk i - 1 to the next leader and down its group while chunk i
 * arrives, in chunks of RMPI_COLL_SITE_CHUNK (64 KiB: every LAN hop eager; 2 sites x 2 hosts x
 * 2 ranks, 1 ms, 2 MiB: 25.6-30.0 ms against 46.3-47.4 in 16 chunks of 128 KiB, each
 * LAN hop a rendezvous; docs/results/wan.md), or SITE_CHAIN_CHUNKS with RMPI_COLL_SITE_CHUNK=0. */
enum { SITE_CHAIN_CHUNKS = 16 };
static void chain_bcast(rmpi_nbc_t *s, const coll_sites_t *t, int me, int root, void *buf, size_t bytes)
{
    links_t k;
    tree_links(t, me, 0, 0, &k); /* my group's tree */
    if (t->group_leader[t->group_of[me]] == me) {
        int prev = -1, next = -1, last = -1, found = 0;
        for (int i = 0; i < t->nsites && next < 0; i++) {
            int site = (t->site_of[root] + i) % t->nsites, g0 = t->group_of[t->site_leader[site]];
            for (int j = -1; j < t->site_group0[site + 1] - t->site_group0[site] && next < 0; j++) {
                int g = j < 0 ? g0 : t->site_group0[site] + j;
                if (j >= 0 && g == g0)
                    continue;
                int l = t->group_leader[g];
                if (found)
                    next = l;
                else if (l == me)
                    found = 1, prev = last;
                last = l;
            }
        }
        k.parent = prev;
        if (next >= 0) { /* the next leader first: it feeds the rest of the chain */
            memmove(k.child + 1, k.child, (size_t)k.nchild * sizeof *k.child);
            k.child[0] = next, k.nchild++;
        }
    }
    size_t chunk = (size_t)rmpi_knobs.COLL_SITE_CHUNK;
    if (!chunk)
        chunk = (bytes + SITE_CHAIN_CHUNKS - 1) / SITE_CHAIN_CHUNKS;
    links_bcast(s, &k, buf, bytes, RMPI_MAX(RMPI_MIN(chunk, bytes), (size_t)1));
}

/* Children's partial results all at once, combined into acc (commutative operations:
 * any order), sent to the parent; at the top acc holds the result. in is read only
 * unless it is acc. */
static void tree_reduce(rmpi_nbc_t *s, const coll_sites_t *t, int me, int top, int root_site, const coll_red_t *r,
                        const void *in, void *acc, size_t count)
{
    links_t k;
    size_t bytes = count * r->esize;
    tree_links(t, me, top, root_site, &k);
    void *part[96];
    for (int i = 0; i < k.nchild; i++) {
        part[i] = rmpi_nbc_tmp(s, bytes);
        rmpi_nbc_recv(s, part[i], bytes, k.child[i]);
    }
    rmpi_nbc_round(s);
    if (k.parent >= 0 && !k.nchild) { /* a leaf sends its input as it is */
        rmpi_nbc_send(s, in, bytes, k.parent);
        rmpi_nbc_round(s);
        return;
    }
    if (acc != in)
        rmpi_nbc_copy(s, in, acc, bytes);
    for (int i = 0; i < k.nchild; i++)
        rmpi_nbc_reduce(s, r->op, r->type, part[i], acc, count);
    if (k.parent >= 0) {
        rmpi_nbc_send(s, acc, bytes, k.parent);
        rmpi_nbc_round(s);
    }
}

/* Node groups per site when every site has the same number m >= 2, else 0: the split
 * algorithms below pair the j-th group leader of each site. */
static int even_sites(const coll_sites_t *t)
{
    int m = t->site_group0[1] - t->site_group0[0];
    for (int k = 1; k < t->nsites; k++)
        if (t->site_group0[k + 1] - t->site_group0[k] != m)
            return 0;
    return m > 1 ? m : 0;
}

/* The j-th group leader of every site (j: my index among my site's group leaders). */
static coll_grp_t split_column(const coll_sites_t *t, int me, int j, int *col)
{
    for (int k = 0; k < t->nsites; k++)
        col[k] = t->group_leader[t->site_group0[k] + j];
    return (coll_grp_t){t->nsites, t->site_of[me], col};
}

/* Large vectors cross in m pieces, one per pair of group leaders, at once (seed
 * infiniband-wan 3.3 and 3.4: one stream does not fill a long pipe, parallel ones do, and
 * the long link should carry each byte once): the root sends piece (j + 1) % m of the
 * vector to the j-th group leader of every site, each site's group leaders swap pieces in
 * a ring, each group leader sends the vector down its group. Against the tree, whose far
 * site leader takes the whole vector through one connection and then forwards it, the far
 * site's leaders start forwarding after 1/m of the bytes. */
static void split_bcast(rmpi_nbc_t *s, const coll_sites_t *t, int me, int root, int m, char *buf, size_t bytes)
{
    int lead;
    coll_grp_t row = coll_sites_tier(t, 1, me, &lead);
    if (me == root) {
        for (int k = 0; k < t->nsites; k++)
            for (int j = 0; j < m; j++) {
                int to = t->group_leader[t->site_group0[k] + j], b = (j + 1) % m;
                if (to != root)
                    rmpi_nbc_send(s, buf + coll_block_off(bytes, m, b), coll_block_len(bytes, m, b), to);
            }
    } else if (row.me >= 0) {
        int b = (row.me + 1) % m;
        rmpi_nbc_recv(s, buf + coll_block_off(bytes, m, b), coll_block_len(bytes, m, b), root);
    }
    rmpi_nbc_round(s);
    if (row.me >= 0)
        coll_ring_allgather(s, &row, 1, buf, bytes);
    tree_bcast(s, t, me, 0, 0, buf, bytes);
}

/* Root leads its group and site: one tree over the site leaders (rooted at root's site),
 * each site's group leaders and each group; from COLL_SITE_SPLIT_BCAST bytes (default
 * never: on the lab the tree was as fast or faster, docs/results/wan.md) with the same
 * number of node groups on every site, split_bcast. */
void coll_bcast_site(rmpi_nbc_t *s, rmpi_comm_t *c, void *buf, size_t bytes, int root)
{
    coll_sites_t t;
    coll_sites_get(c, root, &t);
    int m = even_sites(&t);
    if (m && rmpi_knobs.COLL_SITE_SPLIT_BCAST && bytes >= (size_t)rmpi_knobs.COLL_SITE_SPLIT_BCAST &&
        bytes >= (size_t)m)
        split_bcast(s, &t, c->rank, root, m, buf, bytes);
    else
        tree_bcast(s, &t, c->rank, 2, t.site_of[root], buf, bytes);
    coll_sites_free(&t);
}

void coll_bcast_site_chain(rmpi_nbc_t *s, rmpi_comm_t *c, void *buf, size_t bytes, int root)
{
    coll_sites_t t;
    coll_sites_get(c, root, &t);
    chain_bcast(s, &t, c->rank, root, buf, bytes);
    coll_sites_free(&t);
}

/* The same tree upwards (commutative operations: member order is not rank order). */
void coll_reduce_site(rmpi_nbc_t *s, rmpi_comm_t *c, const coll_red_t *r, const void *in, void *out, size_t count,
                      int root)
{
    coll_sites_t t;
    coll_sites_get(c, root, &t);
    void *acc = c->rank == root ? out : rmpi_nbc_tmp(s, count * r->esize); /* a leaf leaves it unused */
    tree_reduce(s, &t, c->rank, 2, t.site_of[root], r, in, acc, count);
    coll_sites_free(&t);
}

/* Each site reduces to its leader (one tree over tiers 1 and 0), the site leaders
 * allreduce, each site broadcasts from its leader. From COLL_SITE_SPLIT bytes with the
 * same number m >= 2 of node groups on every site: each group reduces to its leader, a
 * ring reduce-scatter among each site's group leaders, the j-th group leaders of all
 * sites allreduce their piece (m pieces cross at once, each byte once each way between
 * two sites), a ring allgather among each site's group leaders, each group's tree down;
 * the leaders'
 * scheme sent the whole vector through one connection each way and left the other
 * ranks idle meanwhile (measured 0.75-0.82x flat at 4 MiB, docs/results/wan.md). */
void coll_allreduce_site(rmpi_nbc_t *s, rmpi_comm_t *c, const coll_red_t *r, void *buf, size_t count)
{
    coll_sites_t t;
    coll_sites_get(c, -1, &t);
    int m = even_sites(&t);
    if (m && count * r->esize >= (size_t)rmpi_knobs.COLL_SITE_SPLIT && count >= (size_t)m) {
        int lead, *col = rmpi_xmalloc((size_t)t.nsites * sizeof *col);
        tree_reduce(s, &t, c->rank, 0, 0, r, buf, buf, count);
        coll_grp_t row = coll_sites_tier(&t, 1, c->rank, &lead);
        if (row.me >= 0) {
            int b = (row.me + 1) % m;
            coll_grp_t cross = split_column(&t, c->rank, row.me, col);
            coll_ring_reduce_scatter(s, &row, r, buf, buf, count);
            coll_allreduce_flat(s, &cross, r, (char *)buf + coll_block_off(count, m, b) * r->esize,
                                coll_block_len(count, m, b));
            coll_ring_allgather(s, &row, r->esize, buf, count);
        }
        tree_bcast(s, &t, c->rank, 0, 0, buf, count * r->esize);
        free(col);
        coll_sites_free(&t);
        return;
    }
    int l2;
    coll_grp_t g2 = coll_sites_tier(&t, 2, c->rank, &l2);
    tree_reduce(s, &t, c->rank, 1, 0, r, buf, buf, count);
    if (g2.me >= 0)
        coll_allreduce_flat(s, &g2, r, buf, count);
    tree_bcast(s, &t, c->rank, 1, 0, buf, count * r->esize);
    coll_sites_free(&t);
}

/* Down the tiers of my site from its leader (site_gather.c's Allgather). */
void coll_site_bcast_down(rmpi_nbc_t *s, const coll_sites_t *t, int me, void *buf, size_t bytes)
{
    tree_bcast(s, t, me, 1, 0, buf, bytes);
}
