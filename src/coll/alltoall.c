/* Alltoall, Alltoallv, Alltoallw: Bruck (small blocks, regular form), linear with every
 * transfer posted at once, and pairwise exchange (coll.h). */
#include "gather_sched.h"

#include <stdlib.h>

/* Bruck: rotate so slot j holds the block for me + j; in round k send every slot with bit k
 * set to me + 2^k and take the same slots from me - 2^k; slot j then holds the block from
 * me - j. log2(n) rounds of n/2 blocks: for small blocks, where latency dominates. */
static void alltoall_bruck(gx_t *g, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv)
{
    int n = g->n, me = g->me;
    size_t b = gx_bytes(&recv[me]), half = (size_t)(n / 2 + 1) * b + 1;
    char *w = rmpi_nbc_tmp(g->s, (size_t)n * b + 1), *sb = rmpi_nbc_tmp(g->s, half), *rb = rmpi_nbc_tmp(g->s, half);
    for (int j = 0; j < n; j++)
        gx_put(g, &send[(me + j) % n], w + (size_t)j * b, b);
    for (int dist = 1; dist < n; dist <<= 1) {
        size_t cnt = 0;
        for (int j = 1; j < n; j++)
            if (j & dist)
                rmpi_nbc_copy(g->s, w + (size_t)j * b, sb + cnt++ * b, b);
        rmpi_nbc_recv(g->s, rb, cnt * b, (me - dist + n) % n);
        rmpi_nbc_send(g->s, sb, cnt * b, (me + dist) % n);
        gx_round(g);
        cnt = 0;
        for (int j = 1; j < n; j++)
            if (j & dist)
                rmpi_nbc_copy(g->s, rb + cnt++ * b, w + (size_t)j * b, b);
    }
    for (int i = 0; i < n; i++)
        gx_unpack(g, w + (size_t)((me - i + n) % n) * b, &recv[i]);
}

static void alltoall_linear(gx_t *g, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv)
{
    int n = g->n, me = g->me;
    for (int i = 1; i < n; i++)
        gx_recv(g, &recv[(me - i + n) % n], (me - i + n) % n);
    for (int i = 1; i < n; i++)
        gx_send(g, &send[(me + i) % n], (me + i) % n);
}

/* n - 1 rounds, one partner each: me xor k when n is a power of two (both directions with
 * one peer), else send to me + k and receive from me - k. */
static void alltoall_pairwise(gx_t *g, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv)
{
    int n = g->n, me = g->me, pow2 = !(n & (n - 1));
    for (int k = 1; k < n; k++) {
        int to = pow2 ? me ^ k : (me + k) % n, from = pow2 ? me ^ k : (me - k + n) % n;
        gx_recv(g, &recv[from], from);
        gx_send(g, &send[to], to);
        gx_round(g);
    }
}

rmpi_nbc_t *rmpi_coll_alltoall_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int form)
{
    if (c->inter)
        return coll_inter_exchange(c, send, 0, recv);
    gx_t g;
    gx_init(&g, c);
    int n = c->size, me = c->rank, in_place = !send;
    rmpi_coll_blk_t *copy = NULL;
    if (in_place) {
        /* what goes out is packed before anything comes in (local steps open the round) */
        size_t total = 0;
        for (int i = 0; i < n; i++)
            total += gx_bytes(&recv[i]);
        char *tmp = rmpi_nbc_tmp(g.s, total + 1);
        copy = rmpi_xmalloc((size_t)n * sizeof *copy);
        for (int i = 0; i < n; i++) {
            copy[i] = gx_bytes_blk(tmp, gx_bytes(&recv[i]));
            if (i != me)
                gx_pack(&g, &recv[i], tmp);
            tmp += gx_bytes(&recv[i]);
        }
        send = copy;
    }
    int alg = gx_pick_alltoall(c, gx_bytes(&recv[me]), form);
    if (alg == GX_SITE) {
        if (in_place)
            gx_pack(&g, &recv[me], copy[me].buf);
        coll_alltoall_site(&g, c, send, recv);
    } else if (alg == GX_BRUCK) {
        if (in_place)
            gx_pack(&g, &recv[me], copy[me].buf);
        alltoall_bruck(&g, send, recv);
    } else {
        if (!in_place)
            gx_copy(&g, &send[me], &recv[me]);
        if (alg == GX_PAIRWISE)
            alltoall_pairwise(&g, send, recv);
        else
            alltoall_linear(&g, send, recv);
    }
    free(copy);
    return gx_end(&g);
}
