/* Site-aware Allgather and Alltoall (regular forms; site.c has the tiers). Data is packed
 * in the tiers' rank order (coll_sites_t.order), where every group's and every site's
 * blocks are one byte range: gathering up the tiers lands each range in place, and the
 * site leaders send each other one message per pair of sites. */
#include "coll_impl.h"
#include "gather_sched.h"

#include <stdlib.h>

/* Tier 0, my node group: up, each member sends its range (own, unit bytes) to the leader,
 * which receives member i's at base + i * unit; down, the reverse. */
static void group_members(gx_t *x, const coll_grp_t *g0, int l0, char *base, char *own, size_t unit, int up)
{
    if (g0->n < 2)
        return;
    for (int i = 0; i < g0->n; i++) {
        if (i == l0 || (g0->me != l0 && i != g0->me))
            continue;
        int leader = g0->me == l0;
        char *at = leader ? base + (size_t)i * unit : own;
        int peer = coll_peer(g0, leader ? i : l0);
        if (up == leader)
            rmpi_nbc_recv(x->s, at, unit, peer);
        else
            rmpi_nbc_send(x->s, at, unit, peer);
    }
    gx_round(x);
}

/* Tier 1 of my site: up, each group leader sends its group's range (own) to the site
 * leader, which receives it in place in site (the site's ranges, unit bytes per rank);
 * down, the reverse. */
static void site_groups(gx_t *x, const coll_sites_t *t, int site, const coll_grp_t *g1, int l1, char *all, char *own,
                        size_t own_len, size_t unit, int up)
{
    if (g1->me != l1) {
        if (up)
            rmpi_nbc_send(x->s, own, own_len, coll_peer(g1, l1));
        else
            rmpi_nbc_recv(x->s, own, own_len, coll_peer(g1, l1));
    } else {
        for (int i = 0; i < g1->n; i++) {
            int gg = t->site_group0[site] + i;
            if (i == l1)
                continue;
            char *at = all + (size_t)(t->group_start[gg] - t->site_start[site]) * unit;
            size_t len = (size_t)(t->group_start[gg + 1] - t->group_start[gg]) * unit;
            if (up)
                rmpi_nbc_recv(x->s, at, len, coll_peer(g1, i));
            else
                rmpi_nbc_send(x->s, at, len, coll_peer(g1, i));
        }
    }
    gx_round(x);
}

/* Blocks of B bytes in order[]: each group leader gathers its group's, each site leader
 * its groups', the site leaders swap whole sites, and the result (n * B) goes down the
 * tiers by binomial broadcast. */
void coll_allgather_site(gx_t *x, rmpi_comm_t *c, const rmpi_coll_blk_t *mine, const rmpi_coll_blk_t *recv,
                         int in_place)
{
    rmpi_nbc_t *s = x->s;
    coll_sites_t t;
    coll_sites_get(c, -1, &t);
    int n = c->size, me = c->rank, l0, l1, l2;
    size_t b = gx_bytes(&recv[me]);
    char *all = rmpi_nbc_tmp(s, (size_t)n * b + 1);
    coll_grp_t g0 = coll_sites_tier(&t, 0, me, &l0), g1 = coll_sites_tier(&t, 1, me, &l1),
               g2 = coll_sites_tier(&t, 2, me, &l2);
    gx_put(x, mine, all + (size_t)t.pos[me] * b, b);
    group_members(x, &g0, l0, all + (size_t)t.group_start[t.group_of[me]] * b, all + (size_t)t.pos[me] * b, b, 1);
    if (g1.me >= 0 && g1.n > 1) {
        int g = t.group_of[me], site = t.site_of[me];
        site_groups(x, &t, site, &g1, l1, all + (size_t)t.site_start[site] * b, all + (size_t)t.group_start[g] * b,
                    (size_t)g0.n * b, b, 1);
    }
    if (g2.me >= 0) {
        size_t mlo = (size_t)t.site_start[g2.me] * b, mhi = (size_t)t.site_start[g2.me + 1] * b;
        for (int i = 0; i < g2.n; i++) {
            if (i == g2.me)
                continue;
            size_t lo = (size_t)t.site_start[i] * b, hi = (size_t)t.site_start[i + 1] * b;
            rmpi_nbc_recv(s, all + lo, hi - lo, coll_peer(&g2, i));
            rmpi_nbc_send(s, all + mlo, mhi - mlo, coll_peer(&g2, i));
        }
        gx_round(x);
    }
    coll_site_bcast_down(s, &t, me, all, (size_t)n * b);
    for (int r = 0; r < n; r++)
        if (r != me || !in_place)
            gx_unpack(x, all + (size_t)t.pos[r] * b, &recv[r]);
    coll_sites_free(&t);
}

/* Rows up, columns down. Every rank packs its n blocks in order[] (one row); a group
 * leader gathers its members' rows, a site leader its groups' (rows of the site's ranks
 * in order[]); site leaders exchange, for each pair of sites, the blocks from one's ranks
 * to the other's in one message, build for each of their ranks the column of its n
 * incoming blocks (in order[]), and send those columns down the way the rows came. */
void coll_alltoall_site(gx_t *x, rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv)
{
    rmpi_nbc_t *s = x->s;
    coll_sites_t t;
    coll_sites_get(c, -1, &t);
    int n = c->size, me = c->rank, l0, l1, l2;
    size_t b = gx_bytes(&recv[me]), row = (size_t)n * b;
    coll_grp_t g0 = coll_sites_tier(&t, 0, me, &l0), g1 = coll_sites_tier(&t, 1, me, &l1),
               g2 = coll_sites_tier(&t, 2, me, &l2);
    int g = t.group_of[me], site = t.site_of[me];
    int gfirst = t.group_start[g], sfirst = t.site_start[site], ns = t.site_start[site + 1] - sfirst;
    /* rows: the site leader's holds its site's, a group leader's its group's, slot pos - first */
    char *rows, *mine;
    if (g2.me >= 0)
        rows = rmpi_nbc_tmp(s, (size_t)ns * row + 1);
    else if (g1.me >= 0)
        rows = rmpi_nbc_tmp(s, (size_t)g0.n * row + 1);
    else
        rows = rmpi_nbc_tmp(s, row + 1);
    char *grows = g2.me >= 0 ? rows + (size_t)(gfirst - sfirst) * row : rows; /* my group's rows */
    mine = g1.me >= 0 ? grows + (size_t)(t.pos[me] - gfirst) * row : rows;
    for (int d = 0; d < n; d++)
        gx_put(x, &send[d], mine + (size_t)t.pos[d] * b, b);
    group_members(x, &g0, l0, grows, mine, row, 1);
    if (g1.me >= 0 && g1.n > 1)
        site_groups(x, &t, site, &g1, l1, rows, grows, (size_t)g0.n * row, row, 1);
    /* cols: for each rank of the site, its n incoming blocks in order[] (site leader);
     * a group leader's holds its group's columns, a rank's its own */
    char *cols;
    if (g2.me >= 0) {
        cols = rmpi_nbc_tmp(s, (size_t)ns * row + 1);
        char **out = rmpi_xmalloc((size_t)g2.n * sizeof *out), **in = rmpi_xmalloc((size_t)g2.n * sizeof *in);
        for (int u = 0; u < g2.n; u++) {
            if (u == site)
                continue;
            int nu = t.site_start[u + 1] - t.site_start[u];
            out[u] = rmpi_nbc_tmp(s, (size_t)ns * (size_t)nu * b + 1);
            in[u] = rmpi_nbc_tmp(s, (size_t)ns * (size_t)nu * b + 1);
            /* [i][j]: from my site's i-th rank to site u's j-th: one range per row */
            for (int i = 0; i < ns; i++)
                rmpi_nbc_copy(s, rows + (size_t)i * row + (size_t)t.site_start[u] * b,
                              out[u] + (size_t)i * (size_t)nu * b, (size_t)nu * b);
            rmpi_nbc_recv(s, in[u], (size_t)ns * (size_t)nu * b, coll_peer(&g2, u));
            rmpi_nbc_send(s, out[u], (size_t)ns * (size_t)nu * b, coll_peer(&g2, u));
        }
        gx_round(x);
        for (int j = 0; j < ns; j++) { /* column of my site's j-th rank */
            char *col = cols + (size_t)j * row;
            for (int i = 0; i < ns; i++)
                rmpi_nbc_copy(s, rows + (size_t)i * row + (size_t)(sfirst + j) * b, col + (size_t)(sfirst + i) * b, b);
            for (int u = 0; u < g2.n; u++) {
                if (u == site)
                    continue;
                int nu = t.site_start[u + 1] - t.site_start[u];
                for (int i = 0; i < nu; i++) /* in[u][i][j]: from site u's i-th rank */
                    rmpi_nbc_copy(s, in[u] + ((size_t)i * (size_t)ns + (size_t)j) * b,
                                  col + (size_t)(t.site_start[u] + i) * b, b);
            }
        }
        free(out);
        free(in);
    } else {
        cols = rows; /* the rows are sent: their memory takes the columns */
    }
    char *gcols = g2.me >= 0 ? cols + (size_t)(gfirst - sfirst) * row : cols;
    if (g1.me >= 0 && g1.n > 1)
        site_groups(x, &t, site, &g1, l1, cols, gcols, (size_t)g0.n * row, row, 0);
    char *mycol = g1.me >= 0 ? gcols + (size_t)(t.pos[me] - gfirst) * row : cols;
    group_members(x, &g0, l0, gcols, mycol, row, 0);
    for (int r = 0; r < n; r++)
        gx_unpack(x, mycol + (size_t)t.pos[r] * b, &recv[r]);
    coll_sites_free(&t);
}
