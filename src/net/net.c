#include "net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Provider table, best first. Adding a provider = one row here plus its folder. */
static const struct rmpi_net_ops *const providers[] = {
    &rmpi_self_ops,
    &rmpi_shm_ops,
    &rmpi_tcp_ops,
#ifdef RMPI_HAVE_OFI
    &rmpi_ofi_ops,
#endif
};

static rmpi_rail_t *rails[RMPI_NET_MAX_RAILS];
static int nrails;
static int my_rank;
static rmpi_net_env_t net_env; /* the caller's, with world set */
static rmpi_net_id_t *dyn;     /* identities of dynamic peers (index - size) */
static int ndyn;

static uint32_t fnv32(const char *s)
{
    uint32_t h = 2166136261u;
    for (; s && *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

int rmpi_net_ops_check(const struct rmpi_net_ops *ops, char *why, size_t len)
{
    const char *name = ops->name ? ops->name : "(unnamed)";
    if (ops->version != RMPI_NET_OPS_VERSION) {
        snprintf(why, len,
                 "provider %s was written for version %u of struct rmpi_net_ops, this library has "
                 "version %u (src/net/net.h); update the provider to the current contract",
                 name, ops->version, RMPI_NET_OPS_VERSION);
        return -1;
    }
    const char *missing = !ops->name                         ? "name"
                          : !ops->open                       ? "open"
                          : !ops->reaches                    ? "reaches"
                          : !ops->send                       ? "send"
                          : !ops->mr_reg                     ? "mr_reg"
                          : !ops->mr_dereg                   ? "mr_dereg"
                          : !ops->get                        ? "get"
                          : !ops->put                        ? "put"
                          : !ops->progress                   ? "progress"
                          : !ops->close                      ? "close"
                          : !ops->card != !ops->peer_add     ? "card/peer_add (one without the other)"
                          : !ops->watch != !ops->abandon     ? "watch/abandon (one without the other)"
                          : !ops->atomic != !ops->atomic_max ? "atomic/atomic_max (one without the other)"
                                                             : NULL;
    if (missing) {
        snprintf(why, len, "provider %s lacks %s, which struct rmpi_net_ops requires (src/net/net.h)", name, missing);
        return -1;
    }
    return 0;
}

static int open_provider(const struct rmpi_net_ops *ops)
{
    int n = ops->open(&net_env, rails + nrails, RMPI_NET_MAX_RAILS - nrails);
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++)
        rails[nrails + i]->index = nrails + i;
    nrails += n;
    return n;
}

static int provider_wanted(const struct rmpi_net_ops *ops, int size)
{
    if (ops == &rmpi_shm_ops)
        return rmpi_knobs.NET != RMPI_NET_TCP && rmpi_knobs.NET != RMPI_NET_OFI && size > 1;
    int remote = 0; /* some rank lives on another node */
    for (int r = 0; r < size && !remote; r++)
        remote = rmpi_topo_node_of(r) != rmpi_topo_my_node();
#ifdef RMPI_HAVE_OFI
    /* RMPI_NET=ofi: ofi serves every peer but self and tcp is not opened. auto: between
     * nodes, ofi opens when the capability table finds a provider worth it (ofi_caps.c;
     * it opens no rail otherwise), and rails_for prefers it over tcp. */
    if (ops == &rmpi_ofi_ops)
        return size > 1 && (rmpi_knobs.NET == RMPI_NET_OFI ||
                            (rmpi_knobs.NET == RMPI_NET_AUTO && remote && rmpi_knobs.OFI_AUTO != RMPI_OFI_AUTO_NEVER));
#endif
    if (ops == &rmpi_tcp_ops && rmpi_knobs.NET == RMPI_NET_OFI)
        return 0;
    if (ops == &rmpi_tcp_ops) /* auto: only with ranks on other nodes (keeps shm polling cheap) */
        return rmpi_knobs.NET == RMPI_NET_TCP ? size > 1 : remote;
    return 1;
}

int rmpi_net_open(const rmpi_net_env_t *env)
{
#ifndef RMPI_HAVE_OFI
    if (rmpi_knobs.NET == RMPI_NET_OFI)
        rmpi_fatal("RMPI_NET=ofi: this RailMPI was built without libfabric (install libfabric-dev and "
                   "pkg-config, then rebuild); set RMPI_NET to auto, shm or tcp.");
#endif
    for (size_t p = 0; p < RMPI_ARRAY_LEN(providers); p++) {
        char why[256];
        if (rmpi_net_ops_check(providers[p], why, sizeof why))
            rmpi_fatal("%s.", why);
    }
    my_rank = env->rank;
    net_env = *env;
    net_env.world = fnv32(env->jobid);
    for (size_t p = 0; p < RMPI_ARRAY_LEN(providers); p++)
        if (provider_wanted(providers[p], env->size) && open_provider(providers[p]) < 0)
            return -1;
    return 0;
}

/* The first rail that takes dynamic peers; tcp is opened for it when init did not. */
static rmpi_rail_t *dyn_rail(void)
{
    for (int i = 0; i < nrails; i++)
        if (rails[i]->ops->card)
            return rails[i];
    net_env.late = 1;
    int first = nrails;
    if (open_provider(&rmpi_tcp_ops) <= 0)
        return NULL;
    return rails[first];
}

int rmpi_net_card(char *buf, size_t len)
{
    rmpi_rail_t *r = dyn_rail();
    if (!r)
        return -1;
    int n = snprintf(buf, len, "%08x.%d.%08x:%s=", (unsigned)net_env.world, net_env.rank,
                     (unsigned)rmpi_topo_node_tag(), r->ops->name);
    if (n < 0 || (size_t)n >= len)
        return -1;
    int m = r->ops->card(r, buf + n, len - (size_t)n);
    return m < 0 ? -1 : n + m;
}

rmpi_net_sec_stats_t rmpi_net_sec_stats;
rmpi_net_split_stats_t rmpi_net_split_stats;
size_t rmpi_net_held;
int rmpi_net_rx_enough;

int rmpi_net_peer_add(const char *card, rmpi_net_id_t *idp, const uint8_t key[RMPI_AUTH_KEY_BYTES])
{
    unsigned world, node;
    int rank, off = 0;
    if (sscanf(card, "%8x.%d.%8x:%n", &world, &rank, &node, &off) != 3 || off == 0 || rank < 0)
        return -1;
    rmpi_net_id_t id = {world, rank};
    if (idp)
        *idp = id;
    if (world == net_env.world)
        return rank < net_env.size ? rank : -1;
    for (int i = 0; i < ndyn; i++)
        if (dyn[i].world == world && dyn[i].rank == rank)
            return net_env.size + i;
    rmpi_rail_t *r = dyn_rail();
    const char *eq = strchr(card + off, '=');
    if (!r || !eq || strncmp(card + off, r->ops->name, (size_t)(eq - card - off)) != 0)
        return -1;
    int peer = net_env.size + ndyn;
    if (r->ops->peer_add(r, peer, &id, node == rmpi_topo_node_tag(), eq + 1, key) != 0)
        return -1;
    dyn = rmpi_xrealloc(dyn, (size_t)(ndyn + 1) * sizeof *dyn);
    dyn[ndyn++] = id;
    return peer;
}

int rmpi_net_npeers(void) { return net_env.size + ndyn; }

rmpi_net_id_t rmpi_net_id_of(int peer)
{
    return peer < net_env.size ? (rmpi_net_id_t){net_env.world, peer} : dyn[peer - net_env.size];
}

int rmpi_net_ready(int phase)
{
    for (int i = 0; i < nrails; i++)
        if (rails[i]->ops->ready && rails[i]->ops->ready(rails[i], phase))
            return -1;
    return 0;
}

int rmpi_net_rails_for(int peer, rmpi_rail_t **out, int max)
{
    rmpi_scope_t want = peer == my_rank ? RMPI_SCOPE_SELF
                        : ((rmpi_knobs.NET == RMPI_NET_AUTO || rmpi_knobs.NET == RMPI_NET_SHM) && peer < net_env.size &&
                           rmpi_topo_node_of(peer) == rmpi_topo_my_node())
                            ? RMPI_SCOPE_INTRA
                            : RMPI_SCOPE_INTER;
    int n = 0, tier = -1;
    for (int i = 0; i < nrails; i++) {
        if (rails[i]->hints.scope != want || (peer >= net_env.size && !rails[i]->ops->peer_add) ||
            !rails[i]->ops->reaches(rails[i], peer))
            continue;
        if (rails[i]->hints.tier > tier) {
            tier = rails[i]->hints.tier;
            n = 0;
        }
        if (rails[i]->hints.tier == tier && n < max)
            out[n++] = rails[i];
    }
    return n;
}

int rmpi_net_progress(void)
{
    int ev = 0;
    rmpi_net_rx_enough = 0;
    for (int i = 0; i < nrails; i++)
        ev += rails[i]->ops->progress(rails[i]);
    return ev;
}

int rmpi_net_wait_fds(int *fds, int max)
{
    int n = 0;
    for (int i = 0; i < nrails; i++) {
        if (rails[i]->ops == &rmpi_self_ops)
            continue;
        int fd = rails[i]->ops->wait_fd ? rails[i]->ops->wait_fd(rails[i]) : -1;
        if (fd < 0 || n == max)
            return -1;
        fds[n++] = fd;
    }
    return n;
}

int rmpi_net_nrails(void) { return nrails; }

int rmpi_net_queued(void)
{
    for (int i = 0; i < nrails; i++)
        if (rails[i]->ops->queued && rails[i]->ops->queued(rails[i]))
            return 1;
    return 0;
}
rmpi_rail_t *rmpi_net_rail(int index) { return index < nrails ? rails[index] : NULL; }

void rmpi_net_report(void *file, int rank, int json)
{
    FILE *f = file;
    int sep = 0;
    if (json)
        fputs(", \"rails\": [", f);
    for (int i = 0; i < nrails; i++) {
        char facts[512] = "";
        if (rails[i]->ops->rail_facts)
            rails[i]->ops->rail_facts(rails[i], json, facts, sizeof facts);
        if (!*facts)
            continue;
        if (json)
            fprintf(f, "%s{\"rail\": \"%s\", %s}", sep++ ? ", " : "", rails[i]->hints.name, facts);
        else
            fprintf(f, "[rmpi report] rank %d: rail %s: %s\n", rank, rails[i]->hints.name, facts);
    }
    if (json)
        fputs("]", f);
}

void rmpi_net_close(void)
{
    rmpi_net_mr_flush();
    for (int i = nrails - 1; i >= 0; i--)
        rails[i]->ops->close(rails[i]);
    nrails = 0;
    free(dyn);
    dyn = NULL;
    ndyn = 0;
}
