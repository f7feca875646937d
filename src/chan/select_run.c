/* The library's channel selector: its parameters from the knob table and the job. */
#include "select.h"

#include <stdio.h>

#include "../rt/rt.h"
#include "chan.h"

#define MS 1000000ull

/* A value the knob's type accepts but its meaning does not: the value, what is allowed. */
static int refuse(char *why, size_t len, const char *knob, double value, const char *allowed)
{
    snprintf(why, len, "RMPI_%s=%.15g: expected %s.", knob, value, allowed);
    return -1;
}

static int cost_ok(double v) { return v >= 0 && v <= 1e15; }

int rmpi_chan_params_from_knobs(rmpi_chan_params_t *p, int nprocs, int node_size, char *why, size_t len)
{
    const struct rmpi_knobs *k = &rmpi_knobs;
    char allowed[96];
    if (k->CHAN_INTERVAL < 1 || k->CHAN_INTERVAL > 86400000)
        return refuse(why, len, "CHAN_INTERVAL", (double)k->CHAN_INTERVAL, "milliseconds from 1 to 86400000 (a day)");
    if (k->CHAN_SLOT < 1 || k->CHAN_SLOT > k->CHAN_INTERVAL) {
        snprintf(allowed, sizeof allowed, "milliseconds from 1 to RMPI_CHAN_INTERVAL (%lld)", k->CHAN_INTERVAL);
        return refuse(why, len, "CHAN_SLOT", (double)k->CHAN_SLOT, allowed);
    }
    if (k->CHAN_SLOTS != -1 && (k->CHAN_SLOTS < 2 || k->CHAN_SLOTS > 2048))
        return refuse(why, len, "CHAN_SLOTS", (double)k->CHAN_SLOTS,
                      "-1 or a number of slots from 2 to 2048 (the seed's Table 2)");
    if (k->CHAN_TRIGGER < 0)
        return refuse(why, len, "CHAN_TRIGGER", (double)k->CHAN_TRIGGER, "a number of received frames, 0 or more");
    static const char *const cost[] = {"CHAN_GAMMA", "CHAN_GAIN", "CHAN_POLL_COST", "CHAN_SETUP_COST"};
    const double v[] = {k->CHAN_GAMMA, k->CHAN_GAIN, k->CHAN_POLL_COST, k->CHAN_SETUP_COST};
    for (int i = 0; i < 4; i++)
        if (!cost_ok(v[i]))
            return refuse(why, len, cost[i], v[i], "nanoseconds from 0 to 1e15");
    if (k->CHAN_MAX_DEDICATED < -1 || k->CHAN_MAX_DEDICATED > 1000000)
        return refuse(why, len, "CHAN_MAX_DEDICATED", (double)k->CHAN_MAX_DEDICATED,
                      "-1 or a number of channels from 0 to 1000000");
    if (k->CHAN_MAX_SETUP == 0 || k->CHAN_MAX_SETUP < -1 || k->CHAN_MAX_SETUP > 1000000)
        return refuse(why, len, "CHAN_MAX_SETUP", (double)k->CHAN_MAX_SETUP,
                      "-1 or a number of channels from 1 to 1000000 (RMPI_CHAN_MAX_DEDICATED=0 sets none up)");
    *p = (rmpi_chan_params_t){0};
    p->r = k->CHAN_GAIN;
    p->p = k->CHAN_POLL_COST;
    p->c = 0; /* a shm ring returns credit through shared memory, not in messages */
    p->s = 1;
    p->rho = k->CHAN_SETUP_COST;
    p->gamma = k->CHAN_GAMMA;
    p->h = k->CHAN_MAX_DEDICATED >= 0 ? (int)k->CHAN_MAX_DEDICATED : rmpi_chan_default_h(nprocs, node_size);
    p->tau = k->CHAN_MAX_SETUP > 0 ? (int)k->CHAN_MAX_SETUP : p->h > 0 ? p->h : 1;
    p->interval_ns = (uint64_t)k->CHAN_INTERVAL * MS;
    p->slot_ns = (uint64_t)k->CHAN_SLOT * MS;
    p->sigma = k->CHAN_SLOTS > 0 ? (int)k->CHAN_SLOTS : rmpi_chan_default_sigma(nprocs, p->interval_ns, p->slot_ns);
    p->trigger = (uint64_t)k->CHAN_TRIGGER;
    return rmpi_chan_params_check(p, why, len);
}

rmpi_chan_sel_t *rmpi_chan_lib;

/* A decision becomes a switch (J1-J5, chan.c): accepted once the peer is there or on its
 * way; refused while another switch of the peer is still in progress, so the selector keeps
 * the old kind in its map and proposes the change again at its next run. A set-up is also
 * refused while h rings still hold memory: a released ring is given back only when its
 * sender's marker is read (J5), so without this a mapping that trades peers held up to
 * 2h rings for a moment (measured: 6 rings with h = 4 at 8 ranks, bench/channels repeat). */
static int switch_peer(void *ctx, int peer, rmpi_chan_kind_t kind)
{
    (void)ctx;
    if (kind == RMPI_CHAN_DEDICATED && (int)rmpi_chan_kind(peer) != (int)kind) {
        rmpi_net_chan_stats_t st = rmpi_chan_stats();
        if (st.dedicated_now + st.rings_asked >= rmpi_chan_lib->prm.h)
            return 1;
    }
    int rc = rmpi_chan_switch(peer, kind);
    return rc == 0 || (rc == 1 && (int)rmpi_chan_kind(peer) == (int)kind) ? 0 : 1;
}

void rmpi_chan_lib_init(int rank, int nprocs)
{
    rmpi_chan_params_t p;
    char why[256];
    int node = rmpi_topo_my_node();
    if (rmpi_chan_params_from_knobs(&p, nprocs, rmpi_topo_local_size(node), why, sizeof why))
        rmpi_fatal("%s", why);
    /* Only peers on shared memory can change kind yet: those of this node, unless tcp or
     * libfabric carries them. The others keep their connection per peer. */
    int shm = (rmpi_knobs.NET == RMPI_NET_AUTO || rmpi_knobs.NET == RMPI_NET_SHM) &&
              rmpi_knobs.CHANNELS == RMPI_CHANNELS_ADAPTIVE,
        local = 0;
    for (int r = 0; r < nprocs; r++)
        local += shm && r != rank && rmpi_topo_node_of(r) == node;
    if (!local || p.h == 0)
        return; /* nothing to decide: no frame is counted */
    rmpi_chan_lib = rmpi_chan_sel_create(nprocs, &p, rmpi_time_ns());
    if (!rmpi_chan_lib)
        rmpi_fatal("no memory for the channel statistics of %d ranks; RMPI_CHAN_SLOTS lowers it.", nprocs);
    for (int r = 0; r < nprocs; r++)
        if (r == rank || rmpi_topo_node_of(r) != node)
            rmpi_chan_sel_fix(rmpi_chan_lib, r, RMPI_CHAN_DEDICATED);
}

void rmpi_chan_lib_tick(void)
{
    if (rmpi_chan_lib)
        rmpi_chan_sel_tick(rmpi_chan_lib, rmpi_time_ns(), switch_peer, NULL);
}

void rmpi_chan_lib_report(void *file, int rank)
{
    FILE *f = file;
    const rmpi_chan_sel_t *s = rmpi_chan_lib;
    if (!s) {
        fprintf(f,
                "[rmpi report] rank %d: channel selection: off (no peer on this node over shared memory, "
                "RMPI_CHANNELS not adaptive, or RMPI_CHAN_MAX_DEDICATED=0)\n",
                rank);
        return;
    }
    fprintf(f,
            "[rmpi report] rank %d: channel selection: %llu runs (%llu by the count trigger), channel decisions %llu "
            "to dedicated and %llu to shared (each one a switch), %d of h %d dedicated:",
            rank, (unsigned long long)s->runs, (unsigned long long)s->trigger_runs, (unsigned long long)s->to_dedicated,
            (unsigned long long)s->to_shared, s->ndedicated, s->prm.h);
    for (int r = 0; r < s->npeers; r++)
        if (!s->fixed[r] && s->kind[r] == RMPI_CHAN_DEDICATED)
            fprintf(f, " %d", r);
    fprintf(
        f,
        "; the last mapping applied saved %.1f ns per message; statistics %zu bytes (%d slots of %llu ms, %d sources heard from)\n",
        s->last_gain, rmpi_chan_sel_bytes(s), s->prm.sigma, (unsigned long long)(s->prm.slot_ns / MS), s->nactive);
}

static rmpi_chan_totals_t finalized;

void rmpi_chan_lib_totals(rmpi_chan_totals_t *t)
{
    *t = finalized;
    const rmpi_chan_sel_t *s = rmpi_chan_lib;
    if (s) {
        t->runs += s->runs;
        t->trigger_runs += s->trigger_runs;
        t->to_dedicated += s->to_dedicated;
        t->to_shared += s->to_shared;
    }
}

void rmpi_chan_lib_finalize(void)
{
    rmpi_chan_lib_totals(&finalized);
    rmpi_chan_sel_destroy(rmpi_chan_lib);
    rmpi_chan_lib = NULL;
}
