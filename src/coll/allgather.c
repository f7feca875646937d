/* Allgather and Allgatherv: Bruck, recursive doubling, ring and linear (coll.h). Every
 * algorithm takes per-rank block sizes, so the v form runs each of them too. */
#include "coll_impl.h"
#include "gather_sched.h"

#include <stdlib.h>

/* Prefix sums of the packed sizes of recv[(first + p) mod n], p = 0..n. */
static size_t *offsets(const rmpi_coll_blk_t *recv, int n, int first)
{
    size_t *off = rmpi_xmalloc(((size_t)n + 1) * sizeof *off);
    off[0] = 0;
    for (int p = 0; p < n; p++)
        off[p + 1] = off[p] + gx_bytes(&recv[(first + p) % n]);
    return off;
}

/* log2(n) rounds for any n: in round k a rank sends the first min(2^k, n - 2^k) blocks
 * it holds (its own, then the next ranks') to me - 2^k and appends what me + 2^k sends. */
static void allgather_bruck(gx_t *g, const rmpi_coll_blk_t *mine, const rmpi_coll_blk_t *recv, int in_place)
{
    int n = g->n, me = g->me;
    size_t *off = offsets(recv, n, me);
    char *w = rmpi_nbc_tmp(g->s, off[n] + 1);
    gx_put(g, mine, w, off[1]);
    if (!in_place)
        gx_copy(g, mine, &recv[me]);
    for (int dist = 1; dist < n; dist <<= 1) {
        int cnt = dist < n - dist ? dist : n - dist;
        rmpi_nbc_recv(g->s, w + off[dist], off[dist + cnt] - off[dist], (me + dist) % n);
        rmpi_nbc_send(g->s, w, off[cnt], (me - dist + n) % n);
        gx_round(g);
    }
    for (int p = 1; p < n; p++)
        gx_unpack(g, w + off[p], &recv[(me + p) % n]);
    free(off);
}

/* n a power of two: in round k partners me and me ^ 2^k swap the 2^k blocks each holds. */
static void allgather_recursive_doubling(gx_t *g, const rmpi_coll_blk_t *mine, const rmpi_coll_blk_t *recv,
                                         int in_place)
{
    int n = g->n, me = g->me;
    size_t *off = offsets(recv, n, 0);
    char *w = gx_contig_all(recv, n);
    int direct = w != NULL;
    if (!direct) {
        w = rmpi_nbc_tmp(g->s, off[n] + 1);
        gx_put(g, mine, w + off[me], off[me + 1] - off[me]);
    }
    if (!in_place)
        gx_copy(g, mine, &recv[me]);
    for (int dist = 1; dist < n; dist <<= 1) {
        int partner = me ^ dist, mg = me & ~(dist - 1), pg = partner & ~(dist - 1);
        rmpi_nbc_recv(g->s, w + off[pg], off[pg + dist] - off[pg], partner);
        rmpi_nbc_send(g->s, w + off[mg], off[mg + dist] - off[mg], partner);
        gx_round(g);
    }
    if (!direct)
        for (int i = 0; i < n; i++)
            if (i != me)
                gx_unpack(g, w + off[i], &recv[i]);
    free(off);
}

/* n - 1 rounds: pass to the right the block that came from the left in the last round.
 * Blocks that are one byte range travel in place; the others through scratch. */
static void allgather_ring(gx_t *g, const rmpi_coll_blk_t *mine, const rmpi_coll_blk_t *recv, int in_place)
{
    int n = g->n, me = g->me, right = (me + 1) % n, left = (me - 1 + n) % n;
    char **loc = rmpi_xmalloc((size_t)n * sizeof *loc);
    size_t scratch = 0;
    for (int i = 0; i < n; i++)
        if (i != me && !gx_contig(&recv[i]))
            scratch += gx_bytes(&recv[i]);
    char *tmp = rmpi_nbc_tmp(g->s, scratch);
    for (int i = 0; i < n; i++) {
        loc[i] = gx_contig(&recv[i]);
        if (i != me && !loc[i]) {
            loc[i] = tmp;
            tmp += gx_bytes(&recv[i]);
        }
    }
    if (!in_place)
        gx_copy(g, mine, &recv[me]);
    for (int k = 0; k < n - 1; k++) {
        int si = (me - k + n) % n, ri = (me - k - 1 + n) % n;
        gx_recv_at(g, &recv[ri], loc[ri], left);
        if (k == 0)
            gx_send(g, mine, right);
        else
            rmpi_nbc_send(g->s, loc[si], gx_bytes(&recv[si]), right);
        gx_round(g);
    }
    free(loc);
}

/* One round: every block straight to every rank. */
static void allgather_linear(gx_t *g, const rmpi_coll_blk_t *mine, const rmpi_coll_blk_t *recv, int in_place)
{
    int n = g->n, me = g->me;
    if (!in_place)
        gx_copy(g, mine, &recv[me]);
    for (int i = 1; i < n; i++)
        gx_recv(g, &recv[(me - i + n) % n], (me - i + n) % n);
    for (int i = 1; i < n; i++)
        gx_send(g, mine, (me + i) % n);
}

rmpi_nbc_t *rmpi_coll_allgather_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv,
                                      int form)
{
    if (c->inter)
        return coll_inter_exchange(c, send, 1, recv);
    gx_t g;
    gx_init(&g, c);
    int n = c->size, in_place = !send;
    const rmpi_coll_blk_t *mine = in_place ? &recv[c->rank] : send;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += gx_bytes(&recv[i]);
    switch (gx_pick_allgather(c, total, form)) {
    case GX_SITE: coll_allgather_site(&g, c, mine, recv, in_place); break;
    case GX_BRUCK: allgather_bruck(&g, mine, recv, in_place); break;
    case GX_RECURSIVE_DOUBLING: allgather_recursive_doubling(&g, mine, recv, in_place); break;
    case GX_LINEAR: allgather_linear(&g, mine, recv, in_place); break;
    default: allgather_ring(&g, mine, recv, in_place);
    }
    return gx_end(&g);
}
