/* Address cards (PMI key tcp-<rank>) and rail matching: which rail of a peer each of our
 * rails talks to. Matching is pure logic, computed by both ranks of a pair from the same
 * two cards in the same order, so its result is symmetric by construction. */
#include "tcp.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int prefix_len(struct in_addr mask)
{
    uint32_t m = ntohl(mask.s_addr);
    int n = 0;
    while (n < 32 && (m & (0x80000000u >> n)))
        n++;
    return n;
}

int rmpi_tcp_card_format(const rmpi_tcp_card_t *card, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "%c", card->listed ? 'L' : 'A');
    for (int i = 0; i < card->n && n < len; i++) {
        const rmpi_tcp_entry_t *e = &card->e[i];
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &e->addr, ip, sizeof(ip));
        n += (size_t)snprintf(buf + n, len - n, ",%s@%s/%d:%u", e->name, ip, prefix_len(e->mask), e->port);
    }
    return n < len ? (int)n : -1;
}

/* name@ip/prefix:port ('=' would make PMI hex-encode the whole card) */
static int entry_parse(char *tok, rmpi_tcp_entry_t *e)
{
    memset(e, 0, sizeof(*e));
    char *eq = strchr(tok, '@'), *slash = strrchr(tok, '/'), *colon = strrchr(tok, ':');
    if (!eq || !slash || !colon || !(eq < slash && slash < colon) || eq == tok || (size_t)(eq - tok) >= sizeof(e->name))
        return -1;
    *eq = *slash = *colon = '\0';
    snprintf(e->name, sizeof(e->name), "%s", tok);
    char *hash = strchr(e->name, '#'), *end;
    if (hash) {
        long s = strtol(hash + 1, &end, 10);
        if (*end || s < 0 || s >= RMPI_TCP_MAX_STREAMS)
            return -1;
        e->stream = (int)s;
    }
    long pfx = strtol(slash + 1, &end, 10);
    if (*end || pfx < 0 || pfx > 32)
        return -1;
    long port = strtol(colon + 1, &end, 10);
    if (*end || port <= 0 || port > 65535)
        return -1;
    if (inet_pton(AF_INET, eq + 1, &e->addr) != 1)
        return -1;
    e->mask.s_addr = htonl(pfx ? 0xffffffffu << (32 - pfx) : 0);
    e->port = (uint16_t)port;
    e->loopback = (ntohl(e->addr.s_addr) >> 24) == 127;
    return 0;
}

int rmpi_tcp_card_parse(const char *text, rmpi_tcp_card_t *card)
{
    memset(card, 0, sizeof(*card));
    if (text[0] != 'L' && text[0] != 'A')
        return -1;
    card->listed = text[0] == 'L';
    char *copy = rmpi_xstrdup(text + 1), *save = NULL;
    int rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (card->n == RMPI_TCP_MAX_RAILS || entry_parse(tok, &card->e[card->n]) != 0) {
            rc = -1;
            break;
        }
        card->n++;
    }
    free(copy);
    return rc;
}

/* Which rails may pair with a peer at all: across nodes every rail but loopback; within a
 * node only loopback, unless both ranks listed their interfaces (then all of them). */
static int eligible(const rmpi_tcp_entry_t *e, int same_node, int all)
{
    return same_node ? all || e->loopback : !e->loopback;
}

static int pairs(const rmpi_tcp_entry_t *x, const rmpi_tcp_entry_t *y, int same_node, int all)
{
    if (!eligible(x, same_node, all) || !eligible(y, same_node, all) || x->stream != y->stream)
        return 0;
    /* An address both hosts have (a docker bridge, say) is no path between two hosts. */
    if (!same_node && x->addr.s_addr == y->addr.s_addr)
        return 0;
    return ((x->addr.s_addr ^ y->addr.s_addr) & x->mask.s_addr & y->mask.s_addr) == 0;
}

int rmpi_tcp_match(const rmpi_tcp_card_t *a, const rmpi_tcp_card_t *b, int same_node, int *pa, int *pb, int *routed)
{
    int na = a->n, nb = b->n, all = a->listed && b->listed;
    /* Longest order-preserving pairing: best[i][j] = pairs among a[i..], b[j..]. */
    int best[RMPI_TCP_MAX_RAILS + 1][RMPI_TCP_MAX_RAILS + 1];
    for (int i = na; i >= 0; i--)
        for (int j = nb; j >= 0; j--) {
            if (i == na || j == nb) {
                best[i][j] = 0;
                continue;
            }
            int v = RMPI_MAX(best[i + 1][j], best[i][j + 1]);
            if (pairs(&a->e[i], &b->e[j], same_node, all))
                v = RMPI_MAX(v, 1 + best[i + 1][j + 1]);
            best[i][j] = v;
        }
    for (int i = 0; i < na; i++)
        pa[i] = -1;
    for (int j = 0; j < nb; j++)
        pb[j] = -1;
    *routed = 0;
    int n = 0;
    for (int i = 0, j = 0; i < na && j < nb;) {
        if (pairs(&a->e[i], &b->e[j], same_node, all) && best[i][j] == 1 + best[i + 1][j + 1]) {
            pa[i] = j;
            pb[j] = i;
            n++;
            i++;
            j++;
        } else if (best[i + 1][j] == best[i][j]) {
            i++;
        } else {
            j++;
        }
    }
    if (n)
        return n;
    int i0 = -1, j0 = -1;
    for (int i = 0; i < na && i0 < 0; i++)
        if (eligible(&a->e[i], same_node, all))
            i0 = i;
    for (int j = 0; j < nb && j0 < 0; j++)
        if (eligible(&b->e[j], same_node, all))
            j0 = j;
    if (i0 < 0 || j0 < 0)
        return 0;
    pa[i0] = j0;
    pb[j0] = i0;
    *routed = 1;
    return 1;
}

static void link_match(rmpi_tcp_prov_t *prov, rmpi_tcp_link_t *l, int peer, int same_node)
{
    int mine[RMPI_TCP_MAX_RAILS], theirs[RMPI_TCP_MAX_RAILS];
    int n = rmpi_tcp_lower(prov, peer) ? rmpi_tcp_match(&prov->me, &l->card, same_node, mine, theirs, &l->routed)
                                       : rmpi_tcp_match(&l->card, &prov->me, same_node, theirs, mine, &l->routed);
    for (int i = 0; i < RMPI_TCP_MAX_RAILS; i++)
        l->partner[i] = i < prov->me.n ? mine[i] : -1;
    if (n == 0)
        return;
    l->npairs = n;
    l->ok = 1;
}

const rmpi_tcp_link_t *rmpi_tcp_link(rmpi_tcp_prov_t *prov, int peer)
{
    if (peer < 0 || peer >= prov->npeers || peer == prov->env.rank)
        return NULL;
    rmpi_tcp_link_t *l = prov->links[peer];
    if (l)
        return l->ok > 0 ? l : NULL;
    if (peer >= prov->env.size || prov->dynamic)
        return NULL; /* dynamic peers come through peer_add; a late-opened provider has no PMI cards */
    l = prov->links[peer] = rmpi_xcalloc(1, sizeof(*l));
    l->ok = -1;
    l->id = (rmpi_net_id_t){prov->env.world, peer};
    char key[32], val[1024];
    snprintf(key, sizeof(key), "tcp-%d", peer);
    if (rmpi_pmi_get(key, val, sizeof(val)) != 0)
        return NULL;
    if (rmpi_tcp_card_parse(val, &l->card) != 0) {
        rmpi_warn("tcp: rank %d cannot read rank %d's TCP address card '%s'; run the same RailMPI "
                  "build on every host.",
                  prov->env.rank, peer, val);
        return NULL;
    }
    link_match(prov, l, peer, rmpi_topo_node_of(peer) == rmpi_topo_my_node());
    return l->ok > 0 ? l : NULL;
}

int rmpi_tcp_lower(rmpi_tcp_prov_t *prov, int peer)
{
    if (peer < prov->env.size)
        return prov->env.rank < peer;
    const rmpi_net_id_t *id = &prov->links[peer]->id;
    return prov->env.world != id->world ? prov->env.world < id->world : prov->env.rank < id->rank;
}

int rmpi_tcp_find(const rmpi_tcp_prov_t *prov, uint32_t world, int rank)
{
    for (int i = prov->env.size; i < prov->npeers; i++) {
        const rmpi_tcp_link_t *l = prov->links[i];
        if (l && l->id.world == world && l->id.rank == rank)
            return i;
    }
    return -1;
}

void rmpi_tcp_grow(rmpi_tcp_prov_t *prov, int n)
{
    if (n <= prov->npeers)
        return;
    prov->links = rmpi_xrealloc(prov->links, (size_t)n * sizeof(*prov->links));
    memset(prov->links + prov->npeers, 0, (size_t)(n - prov->npeers) * sizeof(*prov->links));
    for (int i = 0; i < prov->nrails; i++) {
        rmpi_tcp_rail_t *r = prov->rails[i];
        if (!r)
            continue;
        r->peers = rmpi_xrealloc(r->peers, (size_t)n * sizeof(*r->peers));
        memset(r->peers + prov->npeers, 0, (size_t)(n - prov->npeers) * sizeof(*r->peers));
    }
    prov->npeers = n;
}

int rmpi_tcp_peer_add(rmpi_tcp_prov_t *prov, int peer, const rmpi_net_id_t *id, int same_node, const char *card,
                      const uint8_t key[RMPI_AUTH_KEY_BYTES])
{
    rmpi_tcp_grow(prov, peer + 1);
    if (prov->links[peer])
        return prov->links[peer]->ok > 0 ? 0 : -1;
    rmpi_tcp_link_t *l = prov->links[peer] = rmpi_xcalloc(1, sizeof(*l));
    l->ok = -1;
    l->id = *id;
    if (key) {
        memcpy(l->key, key, sizeof l->key);
        l->has_key = 1;
    }
    if (rmpi_tcp_card_parse(card, &l->card) != 0) {
        rmpi_warn("tcp: cannot read the TCP address card '%s' of process %d of job %#x; run the same "
                  "RailMPI build everywhere.",
                  card, id->rank, (unsigned)id->world);
        return -1;
    }
    link_match(prov, l, peer, same_node);
    return l->ok > 0 ? 0 : -1;
}
