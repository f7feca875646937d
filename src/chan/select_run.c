/* The library's channel selector: its parameters from the knob table and the job. */
#include "select.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../rt/rt.h"
#include "../net/net_mem.h"
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
    static const char *const cost[] = {"CHAN_GAMMA",         "CHAN_GAIN",           "CHAN_GAIN_SHM",
                                       "CHAN_GAIN_STREAM",   "CHAN_POLL_COST",      "CHAN_SETUP_COST",
                                       "CHAN_POLL_COST_OFI", "CHAN_SETUP_COST_OFI", "CHAN_CREDIT_COST_OFI"};
    const double v[] = {k->CHAN_GAMMA,         k->CHAN_GAIN,           k->CHAN_GAIN_SHM,
                        k->CHAN_GAIN_STREAM,   k->CHAN_POLL_COST,      k->CHAN_SETUP_COST,
                        k->CHAN_POLL_COST_OFI, k->CHAN_SETUP_COST_OFI, k->CHAN_CREDIT_COST_OFI};
    for (int i = 0; i < (int)(sizeof v / sizeof *v); i++)
        if (!cost_ok(v[i]))
            return refuse(why, len, cost[i], v[i], "nanoseconds from 0 to 1e15");
    if (k->CHAN_IDLE_POLL_COST != -1 && !cost_ok(k->CHAN_IDLE_POLL_COST))
        return refuse(why, len, "CHAN_IDLE_POLL_COST", k->CHAN_IDLE_POLL_COST,
                      "-1 (each class's measured value) or nanoseconds from 0 to 1e15");
    if (k->CHAN_SKIPS < 0 || k->CHAN_SKIPS > 1000000)
        return refuse(why, len, "CHAN_SKIPS", (double)k->CHAN_SKIPS, "a number of intervals from 0 to 1000000");
    if (k->CHAN_GAIN_OFI != -1 && !cost_ok(k->CHAN_GAIN_OFI))
        return refuse(why, len, "CHAN_GAIN_OFI", k->CHAN_GAIN_OFI,
                      "-1 (from the provider) or nanoseconds from 0 to 1e15");
    if (k->CHAN_MAX_DEDICATED < -1 || k->CHAN_MAX_DEDICATED > 1000000)
        return refuse(why, len, "CHAN_MAX_DEDICATED", (double)k->CHAN_MAX_DEDICATED,
                      "-1 or a number of channels from 0 to 1000000");
    if (k->CHAN_MAX_SETUP == 0 || k->CHAN_MAX_SETUP < -1 || k->CHAN_MAX_SETUP > 1000000)
        return refuse(why, len, "CHAN_MAX_SETUP", (double)k->CHAN_MAX_SETUP,
                      "-1 or a number of channels from 1 to 1000000 (RMPI_CHAN_MAX_DEDICATED=0 sets none up)");
    if (k->CHAN_SMALL_JOB < -1 || k->CHAN_SMALL_JOB > 1000000)
        return refuse(why, len, "CHAN_SMALL_JOB", (double)k->CHAN_SMALL_JOB,
                      "-1 (h), 0 (never) or a number of peers up to 1000000");
    if (k->CHAN_QUEUE_KEEP_MS < -1 || k->CHAN_QUEUE_KEEP_MS > 86400000)
        return refuse(why, len, "CHAN_QUEUE_KEEP_MS", (double)k->CHAN_QUEUE_KEEP_MS,
                      "-1 (RMPI_CHAN_INTERVAL), 0 (at once) or milliseconds up to 86400000 (a day)");
    if (k->CHAN_SOURCES != -1 && (k->CHAN_SOURCES < 2 || k->CHAN_SOURCES > 1000000))
        return refuse(why, len, "CHAN_SOURCES", (double)k->CHAN_SOURCES,
                      "-1 or a number of peers from 2 to 1000000, at least 2 x (RMPI_CHAN_MAX_DEDICATED + 1)");
    *p = (rmpi_chan_params_t){0};
    /* shm: a ring saves its latency (0-10 ns since the queue carries small frames in its
     * slots) per message, and its throughput per message of a stream (README, FIND_MAP) */
    p->r = k->CHAN_GAIN_SHM;
    p->w = k->CHAN_GAIN_STREAM;
    p->p = k->CHAN_POLL_COST;
    p->c = 0; /* a shm ring returns credit through shared memory, not in messages */
    p->s = 1;
    p->rho = k->CHAN_SETUP_COST;
    p->q = k->CHAN_IDLE_POLL_COST >= 0 ? k->CHAN_IDLE_POLL_COST : RMPI_CHAN_SHM_IDLE_POLL_NS;
    p->gamma = k->CHAN_GAMMA;
    p->h = k->CHAN_MAX_DEDICATED >= 0 ? (int)k->CHAN_MAX_DEDICATED : rmpi_chan_default_h(nprocs, node_size);
    p->tau = k->CHAN_MAX_SETUP > 0 ? (int)k->CHAN_MAX_SETUP : p->h > 0 ? p->h : 1;
    p->interval_ns = (uint64_t)k->CHAN_INTERVAL * MS;
    p->slot_ns = (uint64_t)k->CHAN_SLOT * MS;
    p->sigma = k->CHAN_SLOTS > 0 ? (int)k->CHAN_SLOTS : rmpi_chan_default_sigma(nprocs, p->interval_ns, p->slot_ns);
    p->trigger = (uint64_t)k->CHAN_TRIGGER;
    p->skips = (int)k->CHAN_SKIPS;
    p->sources = k->CHAN_SOURCES > 0 ? (int)k->CHAN_SOURCES : 0;
    if (p->sources > 0 && p->sources < 2 * (p->h + 1)) {
        snprintf(allowed, sizeof allowed, "at least 2 x (RMPI_CHAN_MAX_DEDICATED + 1) = %d", 2 * (p->h + 1));
        return refuse(why, len, "CHAN_SOURCES", (double)p->sources, allowed);
    }
    return rmpi_chan_params_check(p, why, len);
}

double rmpi_chan_ofi_gain(double gain_ofi, double gain, int by_target)
{
    if (gain_ofi >= 0)
        return gain_ofi;
    return by_target ? 0 : gain;
}

rmpi_chan_sel_t *rmpi_chan_lib, *rmpi_chan_lib_fast;
uint16_t rmpi_chan_passes;

static void trace_refused(int peer, rmpi_chan_kind_t kind);

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
        if (rmpi_chan_rings_held() >= rmpi_chan_lib->prm.h) {
            trace_refused(peer, kind);
            return 1;
        }
    }
    int rc = rmpi_chan_switch(peer, kind) ? 1 : 0;
    if (rc)
        trace_refused(peer, kind);
    return rc;
}

/* ---- RMPI_CHAN_TRACE (docs/trace.md) ---- */

struct rmpi_chan_trace {
    FILE *f;
    uint64_t t0;
    char *buf;
};
struct rmpi_chan_trace *rmpi_chan_trace;
static struct rmpi_chan_trace trace;

/* rmpi_chan_lib_fast follows both: the common entry loads it alone. */
static void lib_fast_update(void) { rmpi_chan_lib_fast = rmpi_chan_trace ? NULL : rmpi_chan_lib; }

void rmpi_chan_lib_note_traced(int src, size_t bytes)
{
    if (rmpi_chan_trace)
        fprintf(trace.f, "r %llu %d %zu\n", (unsigned long long)(rmpi_time_ns() - trace.t0), src, bytes);
    if (rmpi_chan_lib)
        rmpi_chan_lib_count(rmpi_chan_lib, src, bytes);
}

void rmpi_chan_lib_left(int src)
{
    rmpi_chan_sel_t *s = rmpi_chan_lib;
    if (s && (unsigned)src < (unsigned)s->npeers && s->seen[src] == *s->pass)
        s->seen[src] = (uint16_t)(*s->pass + 1);
}

/* A switch the mechanism refused (a switch of the peer in progress, or h rings still held):
 * it depends on timing, not on the counts, so a replay must be told (docs/trace.md, `x`). */
static void trace_refused(int peer, rmpi_chan_kind_t kind)
{
    if (rmpi_chan_trace)
        fprintf(trace.f, "x %llu %d %d\n", (unsigned long long)(rmpi_time_ns() - trace.t0), peer, (int)kind);
}

/* Opens <prefix>.<rank> and writes the header: what a replay needs to run the same selector
 * (its parameters, which peers it may select with which costs: cls 0 shm, 1 libfabric, 2
 * fixed) and to size the same channels. */
static void trace_open(int rank, int nprocs, int node, const rmpi_chan_params_t *p, int selecting, uint64_t t0,
                       const uint8_t *cls)
{
    const char *prefix = rmpi_knobs.CHAN_TRACE;
    if (!prefix || !*prefix)
        return;
    char path[4096];
    if (snprintf(path, sizeof path, "%s.%d", prefix, rank) >= (int)sizeof path)
        rmpi_fatal("RMPI_CHAN_TRACE=%.64s...: the path prefix is longer than %zu bytes.", prefix, sizeof path - 16);
    trace.f = fopen(path, "w");
    if (!trace.f)
        rmpi_fatal("RMPI_CHAN_TRACE=%s: cannot write the trace file %s: %s.", prefix, path, strerror(errno));
    trace.buf = malloc(1 << 20);
    if (trace.buf)
        setvbuf(trace.f, trace.buf, _IOFBF, 1 << 20);
    trace.t0 = t0;
    fprintf(trace.f, "rmpi-chan-trace 1\nrank %d nprocs %d node %d\nlocal", rank, nprocs, node);
    for (int r = 0; r < nprocs; r++)
        if (rmpi_topo_node_of(r) == node)
            fprintf(trace.f, " %d", r);
    fprintf(trace.f,
            "\nselector %d\nparams r %.17g p %.17g c %.17g s %.17g rho %.17g gamma %.17g h %d tau %d interval_ns %llu "
            "slot_ns %llu sigma %d trigger %llu sources %d q %.17g skips %d\nshm ring_size %lld class_bytes %lld "
            "classes %s\n",
            selecting, p->r, p->p, p->c, p->s, p->rho, p->gamma, p->h, p->tau, (unsigned long long)p->interval_ns,
            (unsigned long long)p->slot_ns, p->sigma, (unsigned long long)p->trigger, p->sources, p->q, p->skips,
            (long long)rmpi_knobs.SHM_RING_SIZE, (long long)rmpi_knobs.CHAN_CLASS_BYTES, rmpi_knobs.CHAN_CLASSES);
    /* the libfabric class: its costs, a dedicated peer's rings (on each rail reaching it),
     * and the peers in it; then the shared receive memory of every provider */
    int first = -1;
    for (int r = 0; r < nprocs && first < 0; r++)
        first = cls[r] == 1 ? r : -1;
    if (first >= 0) {
        fprintf(trace.f, "ofi r %.17g p %.17g c %.17g s %.17g rho %.17g ring_bytes %zu q %.17g\nofi_peers", p->net.r,
                p->net.p, p->net.c, p->net.s, p->net.rho, rmpi_chan_ring_bytes(first), p->net.q);
        for (int r = 0; r < nprocs; r++)
            if (cls[r] == 1)
                fprintf(trace.f, " %d", r);
        fprintf(trace.f, "\n");
    }
    fprintf(trace.f, "shared_bytes %zu\n", rmpi_chan_stats().mem_peak[RMPI_NET_CHAN_SHARED]);
    rmpi_chan_trace = &trace;
    lib_fast_update();
}

static void trace_close(void)
{
    if (!rmpi_chan_trace)
        return;
    rmpi_chan_trace = NULL;
    lib_fast_update();
    fprintf(trace.f, "end %llu\n", (unsigned long long)(rmpi_time_ns() - trace.t0));
    int bad = ferror(trace.f);
    if (fclose(trace.f) || bad)
        rmpi_log(0, "RMPI_CHAN_TRACE=%s: the trace file could not be written completely.", rmpi_knobs.CHAN_TRACE);
    free(trace.buf);
    trace = (struct rmpi_chan_trace){0};
}

/* The costs of peers over libfabric (class 1): r from the provider (rmpi_chan_ofi_gain),
 * p and rho measured over tcp;ofi_rxm (knobs.def), each paid once per rail that gives the
 * peer a ring (a dedicated peer has one on each, chan.c). The credit term (Appendix A.2):
 * c per CREDIT link frame, one every quarter ring of one-cell frames, so s = the cells of a
 * quarter of one rail's ring (the rails share a peer's frames, and each ring's credits). */
static void ofi_costs(rmpi_chan_params_t *p, int rank, int nprocs, const uint8_t *cls)
{
    int by_target = 0, rails = 1;
    size_t ring = 0;
    for (int r = 0; r < nprocs; r++)
        if (r != rank && cls[r] == 1) {
            by_target |= rmpi_chan_by_target(r);
            rails = RMPI_MAX(rails, rmpi_chan_rails(r));
            ring = RMPI_MAX(ring, rmpi_chan_ring_bytes(r) / (size_t)RMPI_MAX(rmpi_chan_rails(r), 1));
        }
    double s = RMPI_MAX((double)(ring / (4 * 64)), 1.0);
    double q = rmpi_knobs.CHAN_IDLE_POLL_COST >= 0 ? rmpi_knobs.CHAN_IDLE_POLL_COST : rmpi_knobs.CHAN_POLL_COST_OFI;
    p->net = (rmpi_chan_cost_t){rmpi_chan_ofi_gain(rmpi_knobs.CHAN_GAIN_OFI, rmpi_knobs.CHAN_GAIN, by_target),
                                rmpi_knobs.CHAN_POLL_COST_OFI * rails,
                                rmpi_knobs.CHAN_CREDIT_COST_OFI,
                                s,
                                rmpi_knobs.CHAN_SETUP_COST_OFI * rails,
                                q * rails};
}

/* The frames the entry counted down since the last collection go to the total (modulo 2^32:
 * a frame counted while left was 0, inside a tick, is one more). */
static void lib_collect(rmpi_chan_sel_t *s)
{
    s->total += (uint32_t)(s->batch - s->left);
    s->batch = s->left;
}

/* The entry's next tick: after 256 frames, or at the frame that completes the count
 * trigger if that comes first. With a fixed 256 after every tick, an idle tick (core.c)
 * shifted the count ticks off the trigger's frame: at 1024 with an idle tick at frame 100,
 * the next looks came at 1124, past the ~1,100 frames a peer hears in a short job. */
static void lib_arm(rmpi_chan_sel_t *s)
{
    uint64_t until = rmpi_chan_sel_until_trigger(s);
    s->batch = s->left = (uint32_t)(until && until < 256 ? until : 256);
}

/* The start (rmpi_chan_small_job), said by RMPI_REPORT's selection line when it is off. */
static char start_why[320];

/* A small job starts its local peers on their rings, without the shared queue, when each
 * may hold one (at most h: FIND_MAP could never refuse one) and their rings together take no
 * more memory than the queue (default sizes: 2 peers, 520 KiB against 712 KiB), so the start
 * never holds more than the queue start's least. Measured (docs/results/channels.md, "Small
 * jobs start on their rings"): on the seed's ping-pong patterns adaptive keeps no ring since
 * shm's r is 10 ns (the queue alone, 712 KiB, at 2-8 ranks), a stream's receiver takes one
 * (972 KiB), and 3 rings (4 ranks) are 780 KiB: below the queue with any ring, above the queue
 * alone. The peers on other nodes under RMPI_NET=auto count toward h while libfabric may
 * carry them (built in, RMPI_OFI_AUTO not never): whether it does (its rings counted against
 * h) is known only once the rails are open; over tcp they hold no ring. */
int rmpi_chan_small_job(int rank, int nprocs, const char **why)
{
    rmpi_chan_params_t p;
    char bad[256];
    int node = rmpi_topo_my_node(), local = rmpi_topo_local_size(node) - 1;
    if (rmpi_chan_params_from_knobs(&p, nprocs, local + 1, bad, sizeof bad))
        rmpi_fatal("%s", bad);
    /* the sizes shm will open with (net_mem.c); a bad class list leaves queue 0 (shm refuses it) */
    uint32_t ncells, csize[RMPI_SHM_MAX_CLASSES];
    size_t max_frame, ring = rmpi_shm_ring_stride((size_t)rmpi_knobs.SHM_RING_SIZE, &ncells, &max_frame);
    int ncls = rmpi_shm_parse_classes(rmpi_knobs.CHAN_CLASSES, csize);
    size_t queue = ncls > 0 ? rmpi_shm_shared_bytes(csize, ncls, (size_t)rmpi_knobs.CHAN_CLASS_BYTES, max_frame) : 0;
    long long fit = ring ? (long long)(queue / ring) : 0;
    long long set = rmpi_knobs.CHAN_SMALL_JOB;
    long long lim = RMPI_MIN(set >= 0 ? set : fit, (long long)p.h);
    int ofi = 0; /* whether libfabric may carry the other nodes' peers (net.c's rule) */
#ifdef RMPI_HAVE_OFI
    ofi = rmpi_knobs.NET == RMPI_NET_AUTO && rmpi_knobs.OFI_AUTO != RMPI_OFI_AUTO_NEVER;
#endif
    int small = 0, remote = ofi ? nprocs - 1 - local : 0, n = local + remote;
    char peers[96], cap[112];
    if (remote)
        snprintf(peers, sizeof peers, "%d local + %d on other nodes = %d peers", local, remote, n);
    else
        snprintf(peers, sizeof peers, "%d local peer%s", local, local == 1 ? "" : "s");
    if (set >= 0)
        snprintf(cap, sizeof cap, "min(RMPI_CHAN_SMALL_JOB %lld, h %d)", set, p.h);
    else
        snprintf(cap, sizeof cap, "min(h %d, %lld rings in the queue's %zu bytes)", p.h, fit, queue);
    (void)rank;
    if (rmpi_knobs.CHANNELS != RMPI_CHANNELS_ADAPTIVE)
        snprintf(start_why, sizeof start_why, "RMPI_CHANNELS=%s: every peer fixed on it",
                 rmpi_knobs.CHANNELS == RMPI_CHANNELS_SHARED ? "shared" : "dedicated");
    else if (rmpi_knobs.NET != RMPI_NET_AUTO && rmpi_knobs.NET != RMPI_NET_SHM)
        snprintf(start_why, sizeof start_why, "adaptive: no peer over shared memory (RMPI_NET=%s): started shared",
                 rmpi_knob_text("NET"));
    else if (set == 0)
        snprintf(start_why, sizeof start_why, "adaptive: started shared (RMPI_CHAN_SMALL_JOB=0)");
    else if (local == 0)
        snprintf(start_why, sizeof start_why, "adaptive: no other rank on this node");
    else if ((small = n <= lim))
        snprintf(start_why, sizeof start_why,
                 "adaptive: %s <= %s: started dedicated, no shared queue until a switch asks for one", peers, cap);
    else
        snprintf(start_why, sizeof start_why, "adaptive: %s > %s: started shared", peers, cap);
    *why = start_why;
    return small;
}

void rmpi_chan_lib_init(int rank, int nprocs)
{
    rmpi_chan_params_t p;
    char why[256];
    int node = rmpi_topo_my_node();
    if (rmpi_chan_params_from_knobs(&p, nprocs, rmpi_topo_local_size(node), why, sizeof why))
        rmpi_fatal("%s", why);
    /* Peers that can change kind, each with the costs of its channels: those of this node
     * over shared memory (class 0, RMPI_NET auto or shm), and those over libfabric (class 1:
     * every peer under RMPI_NET=ofi, the peers on other nodes that ofi reaches under auto;
     * a ring written with fi_write, src/net/ofi). tcp keeps a connection per peer. */
    int adaptive = rmpi_knobs.CHANNELS == RMPI_CHANNELS_ADAPTIVE, selectable = 0;
    int shm = adaptive && (rmpi_knobs.NET == RMPI_NET_AUTO || rmpi_knobs.NET == RMPI_NET_SHM);
    int ofi = adaptive && (rmpi_knobs.NET == RMPI_NET_OFI || rmpi_knobs.NET == RMPI_NET_AUTO);
    uint8_t *cls = rmpi_xcalloc((size_t)nprocs, 1); /* 0 shm, 1 ofi, 2 fixed */
    for (int r = 0; r < nprocs; r++) {
        int local = rmpi_topo_node_of(r) == node && rmpi_knobs.NET != RMPI_NET_OFI;
        cls[r] = r == rank ? 2 : local ? (shm ? 0 : 2) : ofi && rmpi_chan_rails(r) ? 1 : 2;
        /* a small job's peers started on their rings (rmpi_chan_small_job): each may keep
         * one, so there is nothing to select, and a release would make the queue */
        if (cls[r] == 0 && rmpi_chan_rails(r) && rmpi_chan_kind(r) == RMPI_CHAN_DEDICATED)
            cls[r] = 2;
        selectable += cls[r] != 2;
    }
    ofi_costs(&p, rank, nprocs, cls);
    uint64_t t0 = rmpi_time_ns();
    trace_open(rank, nprocs, node, &p, selectable && p.h != 0, t0, cls);
    if (!selectable || p.h == 0) {
        free(cls);
        return; /* nothing to decide: no frame is counted */
    }
    rmpi_chan_lib = rmpi_chan_sel_create(nprocs, &p, t0);
    if (!rmpi_chan_lib)
        rmpi_fatal("no memory for the channel statistics of %d ranks; RMPI_CHAN_SLOTS lowers it.", nprocs);
    for (int r = 0; r < nprocs; r++) {
        if (cls[r] == 2)
            rmpi_chan_sel_fix(rmpi_chan_lib, r, RMPI_CHAN_DEDICATED);
        else
            rmpi_chan_sel_class(rmpi_chan_lib, r, cls[r]);
    }
    free(cls);
    rmpi_chan_passes = 1; /* as the selector's own count starts: no peer's last pass (0) */
    rmpi_chan_lib->pass = &rmpi_chan_passes;
    lib_arm(rmpi_chan_lib);
    lib_fast_update();
}

static void lib_tick(unsigned idle)
{
    rmpi_chan_sel_t *s = rmpi_chan_lib;
    if (!s)
        return;
    lib_collect(s);
    uint64_t now = rmpi_time_ns();
    if (rmpi_chan_trace)
        fprintf(trace.f, idle ? "k %llu %u\n" : "k %llu\n", (unsigned long long)(now - trace.t0), idle);
    if (idle)
        rmpi_chan_sel_note_idle(s, idle, now);
    rmpi_chan_sel_tick(s, now, switch_peer, NULL);
    lib_collect(s); /* frames the switches' progress delivered */
    lib_arm(s);
}

void rmpi_chan_lib_tick(void) { lib_tick(0); }

/* Idle polls are counted by the core's idle path, which ticks every 1024 of them: FIND_MAP
 * charges each ring in the poll list for them (rmpi_chan_params_t.q). */
void rmpi_chan_lib_idle(unsigned polls) { lib_tick(polls); }

void rmpi_chan_lib_report(void *file, int rank)
{
    FILE *f = file;
    const rmpi_chan_sel_t *s = rmpi_chan_lib;
    if (!s) {
        fprintf(f,
                "[rmpi report] rank %d: channel selection: off (no peer on this node over shared memory and none "
                "over libfabric, RMPI_CHANNELS not adaptive, RMPI_CHAN_MAX_DEDICATED=0, or every peer started "
                "dedicated); start: %s\n",
                rank, start_why[0] ? start_why : "not decided");
        return;
    }
    uint64_t held_n = 0, held_b = 0;
    for (int r = 0; r < s->npeers; r++) {
        uint64_t n, bytes;
        rmpi_chan_sel_sum(s, r, s->prm.sigma, &n, &bytes);
        held_n += n;
        held_b += rmpi_chan_sel_backlog(s, r, s->prm.sigma);
    }
    fprintf(f,
            "[rmpi report] rank %d: channel selection: %llu runs (%llu by the count trigger), channel decisions %llu "
            "to dedicated and %llu to shared (each one a switch), %llu runs skipped by the check, %d of h %d "
            "dedicated:",
            rank, (unsigned long long)s->runs, (unsigned long long)s->trigger_runs, (unsigned long long)s->to_dedicated,
            (unsigned long long)s->to_shared, (unsigned long long)s->skipped, s->ndedicated, s->prm.h);
    for (int r = 0; r < s->npeers; r++)
        if (!s->fixed[r] && s->kind[r] == RMPI_CHAN_DEDICATED)
            fprintf(f, " %d", r);
    fprintf(f,
            "; the last mapping applied saved %.1f ns per message; statistics %zu bytes (%d slots of %llu ms, %d of "
            "%d columns held, %llu given back); frames in the statistics %llu, %llu of them behind an earlier one of "
            "their sender in a progress pass\n",
            s->last_gain, rmpi_chan_sel_bytes(s), s->prm.sigma, (unsigned long long)(s->prm.slot_ns / MS), s->nactive,
            s->maxcols, (unsigned long long)s->evicted, (unsigned long long)held_n, (unsigned long long)held_b);
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
        t->skipped += s->skipped;
    }
}

void rmpi_chan_lib_finalize(void)
{
    rmpi_chan_lib_totals(&finalized);
    trace_close();
    rmpi_chan_sel_destroy(rmpi_chan_lib);
    rmpi_chan_lib = NULL;
    lib_fast_update();
}
