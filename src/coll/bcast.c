/* Broadcast: binomial tree, scatter + ring allgather (van de Geijn) for large messages,
 * and node-aware two-level (leaders, then each node). */
#include "coll_impl.h"

/* Lowest set bit of rel; for rel 0 (the root) the smallest power of two >= n. */
static int subtree(int rel, int n)
{
    int mask = 1;
    while (mask < n && !(rel & mask))
        mask <<= 1;
    return mask;
}

#define REL_PEER(g, rel, root) coll_peer((g), ((rel) + (root)) % (g)->n)

/* Member rel = me - root receives from rel - lowbit(rel), then sends to rel + mask for
 * every mask below lowbit(rel), largest subtree first. */
void coll_bcast_binomial(rmpi_nbc_t *s, const coll_grp_t *g, void *buf, size_t bytes, int root)
{
    int n = g->n, rel = (g->me - root + n) % n, mask = subtree(rel, n);
    if (rel) {
        rmpi_nbc_recv(s, buf, bytes, REL_PEER(g, rel - mask, root));
        rmpi_nbc_round(s);
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n)
            rmpi_nbc_send(s, buf, bytes, REL_PEER(g, rel + mask, root));
    rmpi_nbc_round(s);
}

/* Chunk i of n is bytes [off(i), off(i + 1)). */
static size_t chunk_off(size_t bytes, int n, int i)
{
    size_t chunk = (bytes + (size_t)n - 1) / (size_t)n, off = (size_t)i * chunk;
    return off < bytes ? off : bytes;
}

/* Binomial scatter of n chunks (each subtree gets its members' chunks), then n - 1 ring
 * steps in which every member passes on the chunk it got last: about 2 * bytes move per
 * member instead of log2(n) * bytes. */
void coll_bcast_scatter_allgather(rmpi_nbc_t *s, const coll_grp_t *g, void *buf, size_t bytes, int root)
{
    int n = g->n, rel = (g->me - root + n) % n, mask = subtree(rel, n);
    char *b = buf;
    if (rel) {
        int end = rel + (mask < n - rel ? mask : n - rel);
        size_t lo = chunk_off(bytes, n, rel);
        rmpi_nbc_recv(s, b + lo, chunk_off(bytes, n, end) - lo, REL_PEER(g, rel - mask, root));
        rmpi_nbc_round(s);
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        int child = rel + mask;
        if (child >= n)
            continue;
        int end = child + (mask < n - child ? mask : n - child);
        size_t lo = chunk_off(bytes, n, child);
        rmpi_nbc_send(s, b + lo, chunk_off(bytes, n, end) - lo, REL_PEER(g, child, root));
    }
    rmpi_nbc_round(s);
    int left = REL_PEER(g, rel - 1 + n, root), right = REL_PEER(g, rel + 1, root);
    for (int k = 0; k < n - 1; k++) {
        int sb = (rel - k + n) % n, rb = (rel - k - 1 + n) % n;
        size_t so = chunk_off(bytes, n, sb), ro = chunk_off(bytes, n, rb);
        rmpi_nbc_recv(s, b + ro, chunk_off(bytes, n, rb + 1) - ro, left);
        rmpi_nbc_send(s, b + so, chunk_off(bytes, n, sb + 1) - so, right);
        rmpi_nbc_round(s);
    }
}

void coll_bcast_flat(rmpi_nbc_t *s, const coll_grp_t *g, void *buf, size_t bytes, int root)
{
    if (coll_bcast_large(g->n, bytes))
        coll_bcast_scatter_allgather(s, g, buf, bytes, root);
    else
        coll_bcast_binomial(s, g, buf, bytes, root);
}

/* Root's node leader is root itself: leaders first, then every node from its leader. */
void coll_bcast_two_level(rmpi_nbc_t *s, rmpi_comm_t *c, void *buf, size_t bytes, int root)
{
    coll_nodes_t h;
    coll_nodes_get(c, root, &h);
    if (h.my_local_idx == h.my_leader_idx && h.nnodes > 1) {
        coll_grp_t lg = {h.nnodes, h.my_node_idx, h.leaders};
        coll_bcast_flat(s, &lg, buf, bytes, h.root_node_idx);
    }
    coll_grp_t ng = {h.nlocal, h.my_local_idx, h.local};
    coll_bcast_binomial(s, &ng, buf, bytes, h.my_leader_idx);
    coll_nodes_free(&h);
}

rmpi_nbc_t *rmpi_coll_bcast_sched(rmpi_comm_t *c, void *buf, size_t count, rmpi_dtype_t *dt, int root)
{
    if (c->inter)
        return coll_inter_bcast(c, buf, count, dt, root);
    rmpi_nbc_t *s = rmpi_nbc_new(c);
    size_t bytes = count * dt->size;
    if (c->size == 1 || bytes == 0)
        return s;
    int contig = rmpi_dtype_is_contig(dt, count);
    void *p = coll_output(s, buf, count, dt);
    if (!contig && c->rank == root)
        rmpi_nbc_pack(s, buf, count, dt, p);
    coll_grp_t g = coll_grp_all(c);
    switch (coll_select(COLL_BCAST, c, bytes, count, 1)) {
    case RMPI_COLL_BCAST_SCATTER_ALLGATHER: coll_bcast_scatter_allgather(s, &g, p, bytes, root); break;
    case RMPI_COLL_BCAST_TWO_LEVEL: coll_bcast_two_level(s, c, p, bytes, root); break;
    case RMPI_COLL_BCAST_SITE: coll_bcast_site(s, c, p, bytes, root); break;
    case RMPI_COLL_BCAST_SITE_CHAIN: coll_bcast_site_chain(s, c, p, bytes, root); break;
    default: coll_bcast_binomial(s, &g, p, bytes, root);
    }
    if (!contig && c->rank != root)
        rmpi_nbc_unpack(s, p, buf, count, dt);
    return s;
}
