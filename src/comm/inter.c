/* Intercommunicators: creation from two intracommunicators, merge, Comm_create, the
 * agreement of both groups. Leaders (local rank 0, or the named leaders) talk across. */
#include "comm_impl.h"

#include <stdlib.h>
#include <string.h>

enum { TAG_LEADERS = 0x7ff4, TAG_LOCAL = 0x7ff5 };

typedef struct swap_hdr {
    uint32_t ctx;
    int mine, n;
} swap_hdr_t;

/* Whether ctx..ctx+span is free at every member of both groups (claimed where it is): each
 * group ANDs its members' answers, the leaders swap theirs, the group learns the result. A
 * member's idup may finish while this agreement waits and take the candidate there. */
static int both_claim(const rmpi_mset_t *m, int leader, int is_leader, rmpi_comm_t *over, int peer, int tag,
                      uint32_t ctx, unsigned span)
{
    int ok = rmpi_comm_ctx_claim(ctx, span), theirs = 0;
    int *all = rmpi_xmalloc((size_t)m->n * sizeof *all);
    rmpi_mset_allgather(m, &ok, sizeof ok, all);
    for (int i = 0; i < m->n; i++)
        ok &= all[i];
    free(all);
    if (is_leader) {
        rmpi_comm_coll_sendrecv(over, &ok, sizeof ok, peer, &theirs, sizeof theirs, peer, tag);
        ok &= theirs;
    }
    rmpi_mset_bcast(m, &ok, sizeof ok, leader);
    return ok;
}

/* The leaders swap {ctx candidate, mine, n} and the lists over `over` (send/recv through fn
 * on the given ranks); then the local group learns the outcome by broadcast. */
static uint32_t swap_and_share(rmpi_comm_t *local, int leader, int is_leader, rmpi_comm_t *over, int peer, int tag,
                               int mine, const int *list, int n, int *theirs, int **rlist, int *rn)
{
    rmpi_mset_t m = rmpi_mset_all(local, TAG_LOCAL);
    swap_hdr_t me = {rmpi_mset_max_ctx(&m), mine, list ? n : 0}, other = {0, 0, 0};
    if (is_leader) {
        rmpi_comm_coll_sendrecv(over, &me, sizeof me, peer, &other, sizeof other, peer, tag);
        other.ctx = other.ctx > me.ctx ? other.ctx : me.ctx;
    }
    rmpi_mset_bcast(&m, &other, sizeof other, leader);
    int *rl = NULL;
    if (rlist) {
        rl = rmpi_xmalloc((size_t)(other.n > 0 ? other.n : 1) * sizeof *rl);
        if (is_leader)
            rmpi_comm_coll_sendrecv(over, list ? list : (const int *)"", (size_t)me.n * sizeof *list, peer, rl,
                                    (size_t)other.n * sizeof *rl, peer, tag);
        rmpi_mset_bcast(&m, rl, (size_t)other.n * sizeof *rl, leader);
        *rlist = rl;
        *rn = other.n;
    }
    *theirs = other.mine;
    while (!both_claim(&m, leader, is_leader, over, peer, tag, other.ctx, 4)) {
        swap_hdr_t again = {rmpi_mset_max_ctx(&m), 0, 0};
        if (is_leader) {
            rmpi_comm_coll_sendrecv(over, &again, sizeof again, peer, &other, sizeof other, peer, tag);
            other.ctx = other.ctx > again.ctx ? other.ctx : again.ctx;
        }
        rmpi_mset_bcast(&m, &other, sizeof other, leader);
    }
    return other.ctx;
}

uint32_t rmpi_comm_inter_agree(rmpi_comm_t *c, int mine, const int *list, int n, int *theirs, int **rlist, int *rn)
{
    return swap_and_share(c->local, 0, c->rank == 0, c, 0, TAG_LEADERS, mine, list, n, theirs, rlist, rn);
}

int rmpi_comm_intercomm_create(rmpi_comm_t *local, int local_leader, rmpi_comm_t *peer, int remote_leader, int tag,
                               rmpi_comm_t **out)
{
    int *lw = rmpi_xmalloc((size_t)local->size * sizeof *lw), *rw = NULL, rn = 0, unused;
    for (int r = 0; r < local->size; r++)
        lw[r] = rmpi_comm_local_world_rank(local, r);
    uint32_t ctx =
        swap_and_share(local, local_leader, local->rank == local_leader, peer, remote_leader,
                       RMPI_COMM_TAG_USER | (tag & (RMPI_COMM_TAG_USER - 1)), 0, lw, local->size, &unused, &rw, &rn);
    *out = rmpi_comm_alloc_inter(ctx, local->rank, local->size, lw, rn, rw);
    free(lw);
    free(rw);
    return 0;
}

int rmpi_comm_intercomm_merge(rmpi_comm_t *c, int high, rmpi_comm_t **out)
{
    int rhigh;
    high = !!high;
    uint32_t ctx = rmpi_comm_inter_agree(c, high, NULL, 0, &rhigh, NULL, NULL);
    int first = high != rhigh ? !high : c->lworld[0] < c->world[0];
    int n = c->size + c->rsize, *w = rmpi_xmalloc((size_t)n * sizeof *w);
    int *a = first ? w : w + c->rsize, *b = first ? w + c->size : w;
    memcpy(a, c->lworld, (size_t)c->size * sizeof *w);
    memcpy(b, c->world, (size_t)c->rsize * sizeof *w);
    *out = rmpi_comm_alloc(ctx, (first ? 0 : c->rsize) + c->rank, n, w);
    free(w);
    return 0;
}

int rmpi_comm_inter_create(rmpi_comm_t *c, const int *world, int n, rmpi_comm_t **out)
{
    int *rw = NULL, rn = 0, unused, me = -1;
    uint32_t ctx = rmpi_comm_inter_agree(c, n, world, n, &unused, &rw, &rn);
    for (int i = 0; i < n; i++)
        if (world[i] == c->lworld[c->rank])
            me = i;
    *out = me >= 0 && rn > 0 ? rmpi_comm_alloc_inter(ctx, me, n, world, rn, rw) : NULL;
    free(rw);
    return 0;
}

typedef struct split_ent {
    rmpi_keyrank_t kr; /* first: sorted with rmpi_keyrank_cmp */
    int world;
} split_ent_t;

/* Members of one side (triples color, key, world rank) with the given colour, in (key,
 * rank) order; returns their count, *idx the position of world rank `me` (-1 if absent). */
static int pick_color(const int *ckw, int n, int color, int me, int *world, int *idx)
{
    split_ent_t *e = rmpi_xmalloc((size_t)(n + 1) * sizeof *e);
    int k = 0;
    for (int r = 0; r < n; r++)
        if (ckw[3 * r] == color)
            e[k++] = (split_ent_t){{ckw[3 * r + 1], r}, ckw[3 * r + 2]};
    qsort(e, (size_t)k, sizeof *e, rmpi_keyrank_cmp);
    *idx = -1;
    for (int i = 0; i < k; i++) {
        world[i] = e[i].world;
        if (e[i].world == me)
            *idx = i;
    }
    free(e);
    return k;
}

int rmpi_comm_inter_split(rmpi_comm_t *c, int color, int key, rmpi_comm_t **out)
{
    int n = c->size, mine[3] = {color, key, c->lworld[c->rank]}, *ckw = rmpi_xmalloc((size_t)n * sizeof mine);
    rmpi_mset_t m = rmpi_mset_all(c->local, TAG_LOCAL);
    rmpi_mset_allgather(&m, mine, sizeof mine, ckw);
    int *rckw = NULL, rn = 0, unused;
    /* one context for every new intercommunicator: they are disjoint */
    uint32_t ctx = rmpi_comm_inter_agree(c, 0, ckw, 3 * n, &unused, &rckw, &rn);
    *out = NULL;
    if (color != MPI_UNDEFINED) {
        int *lw = rmpi_xmalloc((size_t)n * sizeof *lw), idx, ridx;
        int *rw = rmpi_xmalloc((size_t)(rn / 3 + 1) * sizeof *rw);
        int nl = pick_color(ckw, n, color, mine[2], lw, &idx);
        int nr = pick_color(rckw, rn / 3, color, -1, rw, &ridx);
        if (nr > 0)
            *out = rmpi_comm_alloc_inter(ctx, idx, nl, lw, nr, rw);
        free(lw);
        free(rw);
    }
    free(ckw);
    free(rckw);
    return 0;
}
