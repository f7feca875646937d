#include "vc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(RMPI_NET_RTT_HANDSHAKE == 0 && RMPI_NET_RTT_NSRC == RMPI_PATH_NSRC,
               "path.c numbers its sources as net.h does, the handshake first");

rmpi_vc_t **rmpi_vc_table;
static int vc_size, vc_rank;
static rmpi_vc_deliver_fn vc_deliver;
static rmpi_vc_place_fn vc_place;
static rmpi_vc_placed_fn vc_placed;
static size_t vc_core_size;
static rmpi_sched_cfg_t sched_cfg;
size_t rmpi_vc_big_frame = SIZE_MAX;
int rmpi_vc_nwatch;
static rmpi_vc_t **watch_list;
static double fail_k, fail_floor_ns, probe_ns, probe_max_ns;

/* A rail's delivery rate to the peer: bytes it took (frames and RDMA) minus its backlog,
 * over time, sampled only across intervals in which it stayed busy (an idle rail says
 * nothing about its speed) and at least RATE_NS long (shorter ones are clock and queue
 * noise); smoothed. */
#define RATE_NS 1000000u
static void rate_sample(rmpi_subchan_t *sc, size_t backlog, uint64_t now)
{
    uint64_t taken = sc->bytes + sc->rdma_posted;
    uint64_t done = taken > backlog ? taken - backlog : 0;
    if (sc->est_t && now - sc->est_t < RATE_NS && backlog)
        return; /* keep the interval open */
    if (sc->est_t && sc->est_backlog && backlog && done > sc->est_done) {
        double r = (double)(done - sc->est_done) / (double)(now - sc->est_t);
        sc->rate = sc->rate > 0 ? 0.7 * sc->rate + 0.3 * r : r;
    }
    sc->est_t = now;
    sc->est_done = done;
    sc->est_backlog = backlog;
}

int rmpi_vc_pick_big(rmpi_vc_t *vc, size_t len)
{
    const rmpi_sched_t *s = &vc->sched;
    double q[RMPI_VC_MAX_SUB], fastest = 0;
    int rates = 1, explore = 0;
    uint64_t now = rmpi_time_ns();
    vc->big_t = now;
    for (int i = 0; i < vc->nsub; i++) {
        if (!s->up[i])
            continue;
        rmpi_rail_t *rail = vc->sub[i].rail;
        if (!rail->ops->backlog)
            return rmpi_sched_small(&vc->sched);
        size_t b = rail->ops->backlog(rail, vc->peer);
        rate_sample(&vc->sub[i], b, now);
        q[i] = (double)b;
        rates &= vc->sub[i].rate > 0;
        if (vc->sub[i].rate > fastest)
            fastest = vc->sub[i].rate;
    }
    /* Measured rates once every rail has one, else the striping weights once they mean
     * something (adaptive: after a striped message fed them back; weighted: the hints). With
     * neither but a rail measured (the small-frame policy's, busy with a stream of eager
     * frames), a rail not yet measured is taken to be as fast as the fastest measured one:
     * it gets frames only while the measured rails hold more bytes than it does, which makes
     * it busy, and so measured, after which its own rate decides. A stream of eager frames
     * never feeds the striping weights, so without this its second rail was never used (64
     * KiB on two equal rails: one rail's rate). A slow rail over-measured at first (a
     * shaper's burst) is corrected by the rate's smoothing within a few busy intervals.
     * With no rail measured, the small-frame policy: splitting by equal guesses halved a 4:1
     * pair. */
    if (!rates && !(s->cfg.stripe_policy == RMPI_STRIPE_POLICY_WEIGHTED ||
                    (s->cfg.stripe_policy == RMPI_STRIPE_POLICY_ADAPTIVE && s->learned > 0))) {
        if (!(fastest > 0) || s->cfg.stripe_policy != RMPI_STRIPE_POLICY_ADAPTIVE)
            return rmpi_sched_small(&vc->sched);
        explore = 1;
    }
    int best = -1;
    double best_t = 0;
    for (int i = 0; i < vc->nsub; i++) {
        if (!s->up[i])
            continue;
        double w = rates              ? vc->sub[i].rate
                   : explore          ? (vc->sub[i].rate > 0 ? vc->sub[i].rate : fastest)
                   : s->weight[i] > 0 ? s->weight[i]
                                      : 1e-6;
        double t = (q[i] + (double)len) / w;
        if (best < 0 || t < best_t) {
            best = i;
            best_t = t;
        }
    }
    return best >= 0 ? best : rmpi_sched_small(&vc->sched);
}

void rmpi_vc_stripe_seen(rmpi_vc_t *vc)
{
    if (vc->nup < 2 || vc->sched.cfg.stripe_policy != RMPI_STRIPE_POLICY_ADAPTIVE)
        return;
    for (int i = 0; i < vc->nsub; i++) {
        rmpi_rail_t *rail = vc->sub[i].rail;
        if (vc->sched.up[i] && rail->ops->backlog)
            rmpi_sched_seen(&vc->sched, i, rail->ops->backlog(rail, vc->peer));
    }
}

int rmpi_vc_init(int rank, int size, rmpi_vc_deliver_fn deliver, size_t core_size)
{
    vc_core_size = core_size;
    sched_cfg.small_policy = rmpi_knobs.SMALL_POLICY;
    sched_cfg.stripe_policy = rmpi_knobs.STRIPE_POLICY;
    sched_cfg.window = rmpi_knobs.WINDOW > 0 ? (unsigned)rmpi_knobs.WINDOW : 1;
    sched_cfg.alpha = rmpi_knobs.ADAPT_ALPHA;
    if (!(sched_cfg.alpha > 0 && sched_cfg.alpha <= 1))
        rmpi_fatal("RMPI_ADAPT_ALPHA=%g is outside (0, 1].", sched_cfg.alpha);
    sched_cfg.floor = rmpi_knobs.WEIGHT_FLOOR;
    if (!(sched_cfg.floor >= 0 && sched_cfg.floor < 0.5))
        rmpi_fatal("RMPI_WEIGHT_FLOOR=%g is outside [0, 0.5).", sched_cfg.floor);
    sched_cfg.min_stripe = (size_t)rmpi_knobs.STRIPE_MIN;
    sched_cfg.whole_slack = rmpi_knobs.STRIPE_SLACK;
    if (!(sched_cfg.whole_slack >= 0 && sched_cfg.whole_slack <= 1))
        rmpi_fatal("RMPI_STRIPE_SLACK=%g is outside [0, 1].", sched_cfg.whole_slack);
    fail_k = rmpi_knobs.RAIL_FAIL_RTO;
    if (!(fail_k >= 0 && fail_k < 1e6))
        rmpi_fatal("RMPI_RAIL_FAIL_RTO=%g is not a number of round-trip timeouts (0 .. 1e6).", fail_k);
    fail_floor_ns = rmpi_knobs.RAIL_FAIL_MIN * 1e9;
    if (!(fail_floor_ns > 0 && fail_floor_ns < 3600e9))
        rmpi_fatal("RMPI_RAIL_FAIL_MIN=%g is not a number of seconds above 0.", rmpi_knobs.RAIL_FAIL_MIN);
    probe_ns = rmpi_knobs.RAIL_PROBE * 1e9;
    probe_max_ns = rmpi_knobs.RAIL_PROBE_MAX * 1e9;
    if (!(probe_ns >= 0 && probe_ns < 3600e9) || !(probe_max_ns >= probe_ns && probe_max_ns < 3600e9))
        rmpi_fatal("RMPI_RAIL_PROBE=%g and RMPI_RAIL_PROBE_MAX=%g must be seconds with 0 <= RMPI_RAIL_PROBE <= "
                   "RMPI_RAIL_PROBE_MAX < 3600.",
                   rmpi_knobs.RAIL_PROBE, rmpi_knobs.RAIL_PROBE_MAX);
    rmpi_vc_big_frame = rmpi_knobs.BIG_FRAME > 0 ? (size_t)rmpi_knobs.BIG_FRAME : SIZE_MAX;
    /* binding spreads the processes of a node over the rails */
    sched_cfg.bind = rmpi_topo_local_rank(rank);
    vc_rank = rank;
    vc_size = size;
    vc_deliver = deliver;
    rmpi_vc_table = rmpi_xcalloc((size_t)size, sizeof *rmpi_vc_table);
    return 0;
}

/* RMPI_RAIL_BW=name:rate,... (the rate after the last ':'), else the provider's hint. */
static double rail_hint(const rmpi_rail_t *rail)
{
    const char *spec = rmpi_knobs.RAIL_BW;
    size_t nl = strlen(rail->hints.name);
    for (const char *p = spec; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > nl + 1 && !strncmp(p, rail->hints.name, nl) && p[nl] == ':') {
            char rate[32];
            snprintf(rate, sizeof rate, "%.*s", (int)(len - nl - 1), p + nl + 1);
            long long v = rmpi_parse_size(rate);
            if (v <= 0)
                rmpi_fatal("RMPI_RAIL_BW: '%s' is not a rate for rail %s (use e.g. %s:1g).", rate, rail->hints.name,
                           rail->hints.name);
            return (double)v;
        }
        p = end ? end + 1 : NULL;
    }
    return (double)rail->hints.bw;
}

void rmpi_vc_grow(int n)
{
    if (n <= vc_size)
        return;
    rmpi_vc_table = rmpi_xrealloc(rmpi_vc_table, (size_t)n * sizeof *rmpi_vc_table);
    memset(rmpi_vc_table + vc_size, 0, (size_t)(n - vc_size) * sizeof *rmpi_vc_table);
    vc_size = n;
}

/* Subchannels whose rail's link was down when its provider opened it (hints.down) start
 * failed, as if they had failed at this moment: never chosen, probed with the failed rails'
 * backoff (RMPI_RAIL_PROBE), re-admitted by rmpi_vc_on_up when a connection is made (by
 * either side). Without this such a rail was never used, even after its link came up.
 * Only while another rail is live: with none, sending on it is the only way to learn. The
 * peer is not told (RAIL_DOWN): a peer whose own end is up finds out by its first connect,
 * which its detector fails like any stalled rail. Spares follow their interface's first
 * stream, which rmpi_vc_streams wakes them from. */
static void launch_down(rmpi_vc_t *vc)
{
    int down[RMPI_VC_MAX_SUB] = {0}, live = 0;
    for (int i = 0; i < vc->nsub; i++) {
        down[i] = vc->sub[i].rail->hints.down && !vc->sched.asleep[i];
        live += vc->sched.up[i] && !down[i];
    }
    if (live == 0)
        return;
    uint64_t now = rmpi_time_ns();
    for (int i = 0; i < vc->nsub; i++) {
        if (!down[i])
            continue;
        rmpi_subchan_t *sc = &vc->sub[i];
        vc->nup = rmpi_sched_fail(&vc->sched, i);
        sc->failures++;
        sc->t_down = now;
        rmpi_probe_start(&sc->probe, now, probe_ns);
        rmpi_log(1, "rail %s to rank %d: its link was down at launch; it is probed and used once it answers.",
                 sc->rail->hints.name, vc->peer);
    }
}

rmpi_vc_t *rmpi_vc_open(int peer)
{
    rmpi_vc_t *vc = rmpi_xcalloc(1, sizeof *vc + vc_core_size);
    vc->core = vc + 1;
    rmpi_rail_t *rails[RMPI_VC_MAX_SUB];
    vc->peer = peer;
    vc->nsub = rmpi_net_rails_for(peer, rails, RMPI_VC_MAX_SUB);
    if (vc->nsub == 0)
        rmpi_fatal("no rail reaches rank %d (RMPI_NET=%s); with RMPI_NET=shm every rank must share the node, "
                   "otherwise check RMPI_TCP_IFACES.",
                   peer, rmpi_knob_text("NET"));
    double hints[RMPI_VC_MAX_SUB];
    /* A large frame is large for its rails: libfabric's ofi_rxm tops frames out near 16 KiB
     * (src/net/ofi/README.md), so RMPI_BIG_FRAME's 16 KiB alone left nearly every eager
     * frame to the small-frame policy there and the other rails carried no eager bytes. */
    vc->big_frame = rmpi_vc_big_frame;
    for (int i = 0; i < vc->nsub; i++) {
        vc->sub[i].rail = rails[i];
        hints[i] = rail_hint(rails[i]);
        if (rmpi_vc_big_frame != SIZE_MAX && rails[i]->hints.max_frame / 2 < vc->big_frame)
            vc->big_frame = rails[i]->hints.max_frame / 2;
    }
    rmpi_sched_init(&vc->sched, &sched_cfg, vc->nsub, hints);
    /* Spare streams sleep until rmpi_vc_streams wakes them; RMPI_WAN_TUNE=0 opens none. */
    for (int i = 1; i < vc->nsub; i++)
        if (rails[i]->hints.spare) {
            rmpi_sched_sleep(&vc->sched, i);
            vc->nspare += vc->sched.asleep[i];
        }
    vc->nup = vc->nsub - vc->nspare;
    vc->ack_peer = vc->nup > 1;
    launch_down(vc);
    rmpi_vc_tx_update(vc);
    rmpi_vc_table[peer] = vc;
    int watch = vc->nsub > 1 && (fail_k > 0 || probe_ns > 0);
    for (int i = 0; i < vc->nsub && watch; i++)
        watch = rails[i]->ops->watch != NULL;
    if (watch) {
        watch_list = rmpi_xrealloc(watch_list, (size_t)(rmpi_vc_nwatch + 1) * sizeof *watch_list);
        watch_list[rmpi_vc_nwatch++] = vc;
        vc->watched = 1;
    }
    return vc;
}

/* A buffer for a frame of len bytes kept for resending, queued behind the unacknowledged
 * ones (the caller fills its frame and time). */
static inline __attribute__((always_inline)) rmpi_vc_txbuf_t *txbuf_take(rmpi_vc_t *vc, int sub, uint16_t psn,
                                                                         size_t len)
{
    rmpi_vc_txbuf_t *t;
    if (len <= RMPI_VC_TXBUF_SMALL && vc->txfree) {
        t = vc->txfree;
        vc->txfree = t->next;
        vc->txfree_n--;
    } else if (len > RMPI_VC_TXBUF_SMALL && len <= RMPI_VC_TXBUF_MID && vc->txmid) {
        t = vc->txmid;
        vc->txmid = t->next;
        vc->txmid_n--;
    } else {
        size_t cap = len <= RMPI_VC_TXBUF_SMALL ? RMPI_VC_TXBUF_SMALL
                     : len <= RMPI_VC_TXBUF_MID ? RMPI_VC_TXBUF_MID
                                                : len;
        t = rmpi_xmalloc(sizeof *t + RMPI_VC_TXBUF_ROOM + cap);
        t->cap = cap;
    }
    t->next = NULL;
    t->sub = sub;
    t->psn = psn;
    t->len = len;
    *vc->unacked_tail = t;
    vc->unacked_tail = &t->next;
    vc->unacked_n++;
    return t;
}

void rmpi_vc_keep(rmpi_vc_t *vc, int sub, const struct iovec *iov, int n, size_t len)
{
    rmpi_vc_txbuf_t *t = txbuf_take(vc, sub, ((const rmpi_vc_hdr_t *)iov[0].iov_base)->psn, len);
    t->t = rmpi_time_ns();
    rmpi_iov_gather(t->data + RMPI_VC_TXBUF_ROOM, iov, n);
}

/* rmpi_iov_gather for the pieces of a small frame (a 4-byte cached header and 8 bytes of
 * data in an 8 B message): pieces of 4 to 16 bytes as two overlapping loads and stores
 * each, not a call to memcpy. */
static inline __attribute__((always_inline)) void gather_small(char *d, const struct iovec *iov, int n)
{
    for (int i = 0; i < n; i++) {
        const char *s = iov[i].iov_base;
        size_t l = iov[i].iov_len;
        if (l >= 8 && l <= 16) {
            uint64_t a, b;
            memcpy(&a, s, 8);
            memcpy(&b, s + l - 8, 8);
            memcpy(d, &a, 8);
            memcpy(d + l - 8, &b, 8);
        } else if (l >= 4 && l < 8) {
            uint32_t a, b;
            memcpy(&a, s, 4);
            memcpy(&b, s + l - 4, 4);
            memcpy(d, &a, 4);
            memcpy(d + l - 4, &b, 4);
        } else if (l) {
            memcpy(d, s, l);
        }
        d += l;
    }
}

static inline __attribute__((always_inline)) void send_bound(rmpi_vc_t *vc, const struct iovec *iov, int n, size_t len)
{
    int sub = vc->tx_sub;
    rmpi_subchan_t *sc = rmpi_vc_stamp(vc, sub, iov, len);
    uint16_t psn = (uint16_t)(vc->psn_next - 1);
    rmpi_vc_txbuf_t *t = txbuf_take(vc, sub, psn, len);
    /* Only the frame the peer's next ACK frame answers as it arrives is timed (on_data sends
     * one when its expected PSN reaches a multiple of RMPI_VC_ACK_EVERY): the ACK's round
     * trip needs no clock read on the other frames. */
    t->t = (uint16_t)(psn + 1) & (RMPI_VC_ACK_EVERY - 1) ? 0 : rmpi_time_ns();
    char *f = t->data + RMPI_VC_TXBUF_ROOM;
    gather_small(f, iov, n);
    struct iovec v = {f, len};
    if (vc->ack_peer && vc->psn_expect != vc->ack_sent) {
        rmpi_vc_hdr_t h = {vc->psn_expect, RMPI_VC_ACKED, 0};
        memcpy(t->data, &h, sizeof h);
        v.iov_base = t->data;
        v.iov_len += sizeof h;
        vc->ack_sent = vc->psn_expect;
        vc->acks_carried++;
    }
    sc->rail->ops->send(sc->rail, vc->peer, &v, 1);
}

static int first_live(const rmpi_vc_t *vc)
{
    for (int i = 0; i < vc->nsub; i++)
        if (vc->sched.up[i])
            return i;
    return -1;
}

void (*rmpi_vc_on_path)(rmpi_vc_t *vc);

static double sub_rate(const rmpi_vc_t *vc, int i);

/* What the stream count and the core's tuning read besides round trips: the live
 * subchannels' summed delivery rate and their number. */
static double tune_rates(const rmpi_vc_t *vc)
{
    double sum = vc->nup;
    for (int i = 0; i < vc->nsub; i++)
        if (vc->sched.up[i])
            sum += sub_rate(vc, i) * 1e3;
    return sum;
}

static void path_sample(rmpi_vc_t *vc, int sub, double ns, int src)
{
    rmpi_path_t *p = &vc->sub[sub].path;
    double base = rmpi_path_base(p);
    int measured = p->measured;
    if (!rmpi_path_sample(p, ns, src, rmpi_time_ns()))
        return;
    /* The stream count and the core's tuning read the path's base (windowed minimum), not
     * SRTT: an ACK sample that left the base, the measured flag and the rates as they were
     * at the last tuning changes nothing they read. Re-tuning at every ACK frame was about
     * 1,000 instructions, 35 per message of an 8 B ping-pong over two rails (callgrind). */
    double rates = tune_rates(vc);
    if (src == RMPI_NET_RTT_ACK && measured && rmpi_path_base(p) == base && rates == vc->tuned_rates)
        return;
    vc->tuned_rates = rates;
    if (vc->nspare)
        rmpi_vc_streams(vc);
    if (rmpi_vc_on_path)
        rmpi_vc_on_path(vc);
}

void rmpi_vc_on_rtt(rmpi_rail_t *rail, int peer, uint64_t rtt_ns, int src)
{
    if (!rmpi_vc_table || peer < 0 || peer >= vc_size || peer == vc_rank)
        return; /* before rmpi_vc_init: the next sample will do */
    rmpi_vc_t *vc = rmpi_vc_get(peer);
    int sub = rmpi_vc_sub_of(vc, rail);
    if (sub < 0)
        return;
    /* The kernel's estimate only where the VC's own ACKs give none: they travel through the
     * same queues and progress loops as a rendezvous handshake, which is what is priced. */
    rmpi_path_t *p = &vc->sub[sub].path;
    /* The kernel's minimum keeps the windowed base (rmpi_vc_rtt) the path's own: its
     * smoothed estimate under a stream carries the stream's queue (a lab rail of about
     * 20 us read 276 us with 64 KiB eager messages streaming, enough for RMPI_WAN_TUNE to
     * raise the eager limit to 539 KiB on a LAN). */
    if (src == RMPI_NET_RTT_KERNEL_MIN) {
        if (rmpi_path_observe(p, (double)rtt_ns, RMPI_NET_RTT_KERNEL, rmpi_time_ns()) && rmpi_vc_on_path)
            rmpi_vc_on_path(vc);
        return;
    }
    if (src == RMPI_NET_RTT_KERNEL && p->n[RMPI_NET_RTT_ACK] > vc->sub[sub].acks_seen) {
        vc->sub[sub].acks_seen = p->n[RMPI_NET_RTT_ACK];
        /* still the cleanest view of the path itself: its minimum counts */
        if (rmpi_path_observe(p, (double)rtt_ns, src, rmpi_time_ns()) && rmpi_vc_on_path)
            rmpi_vc_on_path(vc);
        return;
    }
    path_sample(vc, sub, (double)rtt_ns, src);
}

double rmpi_vc_rtt(const rmpi_vc_t *vc)
{
    double best = 0;
    for (int i = 0; i < vc->nsub; i++) {
        double r = rmpi_path_base(&vc->sub[i].path);
        if (vc->sched.up[i] && vc->sub[i].path.measured && r > 0 && (best == 0 || r < best))
            best = r;
    }
    return best;
}

/* The group of subchannel i: the rail it belongs to (the nearest one at or before it that
 * is no further stream over the path of the one before it) and the subchannels up to the
 * next such rail. A spare is always such a stream (hints.stream > 0). */
static int group_of(const rmpi_vc_t *vc, int i, int *end)
{
    int b = i;
    while (b > 0 && vc->sub[b].rail->hints.stream > 0)
        b--;
    int e = b + 1;
    while (e < vc->nsub && vc->sub[e].rail->hints.stream > 0)
        e++;
    *end = e;
    return b;
}

/* The completion filter's stripe rate, else the busy-interval rate of rmpi_vc_pick_big. */
static double sub_rate(const rmpi_vc_t *vc, int i)
{
    return vc->sched.rate[i] > 0 ? vc->sched.rate[i] : vc->sub[i].rate;
}

int rmpi_vc_rates(const rmpi_vc_t *vc, double *one, double *all)
{
    *one = *all = 0;
    int rails = 0, measured = 1, guessed = 0;
    for (int b = 0, end; b < vc->nsub; b = end) {
        group_of(vc, b, &end);
        /* A rail's streams are one rail: they share its link. One stream carries at most its
         * window per round trip (the rate a message left whole on one stream sees); the
         * rail, striping, the sum of its streams. A stream not measured yet (a spare the
         * peer woke; a sender whose peer reads measures no stripes) counts at that bound.
         * Taking each stream for a rail of its own kept the base limit from the wake on, and
         * 1 MiB at 10 ms went by rendezvous again (75 against 94 MB/s, docs/results/wan.md). */
        double rtt = 0, r = 0;
        int live = 0;
        for (int i = b; i < end; i++) {
            double x = rmpi_path_base(&vc->sub[i].path);
            if (vc->sched.up[i] && vc->sub[i].path.measured && x > 0 && (rtt == 0 || x < rtt))
                rtt = x;
        }
        double w = (double)vc->sub[b].rail->hints.window, bound = w > 0 && rtt > 0 ? w / rtt : 0;
        for (int i = b; i < end; i++) {
            if (!vc->sched.up[i])
                continue;
            double x = sub_rate(vc, i);
            if (!(x > 0) && bound > 0) {
                x = bound;
                guessed = 1;
            }
            live++;
            measured &= x > 0;
            r += x;
        }
        if (!live)
            continue;
        rails++;
        *all += r;
        double single = live > 1 && bound > 0 && bound < r ? bound : r;
        if (single > *one)
            *one = single;
    }
    /* Window bounds stand in for the streams of one rail only: rails of their own must be
     * measured (their rates decide the split and the crossover). */
    if (!measured || (guessed && rails > 1))
        *one = *all = 0;
    return rails;
}

static void txlist_free(rmpi_vc_txbuf_t *t)
{
    while (t) {
        rmpi_vc_txbuf_t *next = t->next;
        free(t);
        t = next;
    }
}

static void txbuf_free(rmpi_vc_t *vc, rmpi_vc_txbuf_t *t)
{
    if (t->cap == RMPI_VC_TXBUF_SMALL && vc->txfree_n < RMPI_VC_TXFREE_MAX) {
        t->next = vc->txfree;
        vc->txfree = t;
        vc->txfree_n++;
    } else if (t->cap == RMPI_VC_TXBUF_MID && vc->txmid_n < RMPI_VC_TXMID_MAX) {
        t->next = vc->txmid;
        vc->txmid = t;
        vc->txmid_n++;
    } else {
        free(t);
    }
}

/* An acknowledgement names the next PSN its sender expects: never one this side has not
 * sent yet (one further ahead than 2^15 reads as behind, an old one, and changes nothing). */
static int ack_ok(rmpi_vc_t *vc, uint16_t next_expected)
{
    if ((int16_t)(next_expected - vc->psn_next) <= 0)
        return 1;
    char why[160];
    snprintf(why, sizeof why, "rank %d acknowledged frames up to PSN %u, but only PSNs before %u were sent to it",
             vc->peer, next_expected, vc->psn_next);
    rmpi_vc_cut(vc, why);
    return 0;
}

static inline __attribute__((always_inline)) void on_ack(rmpi_vc_t *vc, int ack_sub, uint16_t next_expected)
{
    /* The ACK was sent when the frame before next_expected was delivered: if that frame
     * went on the rail the ACK came back on, the two make one round trip of that rail. Once
     * frames were resent, which copy an ACK answers is unknown (Karn's rule): no samples. */
    while (vc->unacked && (int16_t)(vc->unacked->psn - next_expected) < 0) {
        rmpi_vc_txbuf_t *t = vc->unacked;
        if (t->t && ack_sub >= 0 && t->sub == ack_sub && (uint16_t)(t->psn + 1) == next_expected &&
            vc->resent_frames == 0) {
            path_sample(vc, ack_sub, (double)(rmpi_time_ns() - t->t), RMPI_NET_RTT_ACK);
        }
        vc->unacked = t->next;
        txbuf_free(vc, t);
        vc->unacked_n--;
    }
    if (!vc->unacked)
        vc->unacked_tail = &vc->unacked;
}

static void send_ack_on(rmpi_vc_t *vc, int sub, uint8_t flags)
{
    rmpi_vc_hdr_t h = {vc->psn_expect, RMPI_VC_ACK, flags};
    struct iovec iov = {&h, sizeof h};
    vc->ack_sent = vc->ack_plain = vc->psn_expect;
    vc->ack_plain_t = rmpi_time_ns();
    vc->acks_out++;
    vc->sub[sub].rail->ops->send(vc->sub[sub].rail, vc->peer, &iov, 1);
}

void rmpi_vc_send_acked(rmpi_vc_t *vc, rmpi_subchan_t *sc, const struct iovec *iov, int n)
{
    rmpi_vc_hdr_t h = {vc->psn_expect, RMPI_VC_ACKED, 0};
    struct iovec v[8];
    if (n >= (int)RMPI_ARRAY_LEN(v)) { /* more pieces than the core ever sends: as it is */
        sc->rail->ops->send(sc->rail, vc->peer, iov, n);
        return;
    }
    v[0] = (struct iovec){&h, sizeof h};
    for (int i = 0; i < n; i++) /* one or two pieces: a loop, not a call */
        v[i + 1] = iov[i];
    vc->ack_sent = vc->psn_expect;
    vc->acks_carried++;
    sc->rail->ops->send(sc->rail, vc->peer, v, n + 1);
}

static void send_ack(rmpi_vc_t *vc, uint8_t flags)
{
    int sub = first_live(vc);
    if (sub >= 0)
        send_ack_on(vc, sub, flags);
}

int rmpi_vc_sub_of(const rmpi_vc_t *vc, const rmpi_rail_t *rail)
{
    for (int i = 0; i < vc->nsub; i++)
        if (vc->sub[i].rail == rail)
            return i;
    return -1;
}

/* tell: send RMPI_VC_RAIL_DOWN first (not when the peer told us). */
static int sub_failed(rmpi_vc_t *vc, int sub, const char *why, int tell)
{
    if (sub >= 0 && vc->sched.asleep[sub]) {
        rmpi_sched_fail(&vc->sched, sub); /* never woken now */
        vc->nspare--;
    }
    if (sub < 0 || !vc->sched.up[sub])
        return first_live(vc) < 0 ? 0 : 1;
    int live = rmpi_sched_fail(&vc->sched, sub);
    rmpi_subchan_t *sc = &vc->sub[sub];
    sc->failures++;
    sc->t_down = rmpi_time_ns();
    rmpi_probe_start(&sc->probe, sc->t_down, probe_ns);
    vc->nup = live;
    rmpi_vc_tx_update(vc);
    if (live == 0)
        return 0;
    if (tell) {
        int s2 = first_live(vc);
        rmpi_vc_hdr_t h = {(uint16_t)sub, RMPI_VC_RAIL_DOWN, vc->sub[sub].epoch};
        struct iovec iov = {&h, sizeof h};
        vc->sub[s2].rail->ops->send(vc->sub[s2].rail, vc->peer, &iov, 1);
    }
    rmpi_warn("rail %s to rank %d failed (%s); going on over %d other rail(s), resending %llu unacknowledged "
              "frame(s).",
              vc->sub[sub].rail->hints.name, vc->peer, why, live, (unsigned long long)vc->unacked_n);
    /* The peer drops what it already has (PSN behind its expected one), so resending every
     * unacknowledged frame is safe whichever rail each of them took. */
    for (rmpi_vc_txbuf_t *t = vc->unacked; t; t = t->next) {
        int s2 = rmpi_sched_small(&vc->sched);
        struct iovec iov = {t->data + RMPI_VC_TXBUF_ROOM, t->len};
        vc->sub[s2].rail->ops->send(vc->sub[s2].rail, vc->peer, &iov, 1);
        vc->resent_frames++;
    }
    return live;
}

int rmpi_vc_rail_failed(rmpi_vc_t *vc, int sub, const char *why) { return sub_failed(vc, sub, why, 1); }

/* The peer stopped using its subchannel sub to us: so do we, and the connection is dropped
 * unread (its epoch must be the current one: a late word about an older connection is not
 * about this one). */
static void on_rail_down(rmpi_vc_t *vc, uint16_t sub, uint8_t epoch)
{
    if (sub >= vc->nsub || !vc->sched.up[sub] || epoch != vc->sub[sub].epoch)
        return;
    char why[96];
    snprintf(why, sizeof why, "rank %d stopped using it", vc->peer);
    rmpi_rail_t *rail = vc->sub[sub].rail;
    if (sub_failed(vc, sub, why, 0) > 0 && rail->ops->abandon)
        rail->ops->abandon(rail, vc->peer, why);
}

/* The detector found sub stalled while rail `other` moved: out of service at once (its
 * unacknowledged frames go to the others now), then its connection is abandoned, whose
 * failed operations (stripes) the core moves when the provider reports them. */
static void watch_failed(rmpi_vc_t *vc, int sub, uint64_t now, double tmo)
{
    int other = -1;
    for (int j = 0; j < vc->nsub; j++)
        if (j != sub && vc->sched.up[j] && (other < 0 || vc->sub[j].det.t_moved > vc->sub[other].det.t_moved))
            other = j;
    char why[256];
    snprintf(why, sizeof why,
             "nothing acknowledged for %.0f ms while rail %s moved data; the limit is %.0f ms "
             "(RMPI_RAIL_FAIL_RTO round-trip timeouts, at least RMPI_RAIL_FAIL_MIN)",
             (double)(now - vc->sub[sub].det.t_since) * 1e-6, vc->sub[other].rail->hints.name, tmo * 1e-6);
    rmpi_rail_t *rail = vc->sub[sub].rail;
    if (rmpi_vc_rail_failed(vc, sub, why) > 0)
        rail->ops->abandon(rail, vc->peer, why);
}

/* A failed subchannel whose wait is over: try its connection again (rejoin), each try
 * bounded by the wait before the next, which doubles up to RMPI_RAIL_PROBE_MAX. A try
 * ends when the next is due, so the provider often still holds the last one (not yet
 * failed, or its failure not yet reported) when the next comes: then the schedule is left
 * as it was and the next look asks again. Measured before (rail cut 3 s on the lab): that
 * try was dropped and the one after it, 2 s later, found the rail 1.4 s after it was back. */
static void probe(rmpi_vc_t *vc, rmpi_subchan_t *sc, uint64_t now)
{
    uint64_t tmo;
    rmpi_probe_t before = sc->probe;
    if (probe_ns > 0 && sc->rail->ops->rejoin && (tmo = rmpi_probe_due(&sc->probe, now, probe_max_ns)) > 0 &&
        sc->rail->ops->rejoin(sc->rail, vc->peer, tmo) != 0)
        sc->probe = before;
}

void rmpi_vc_on_up(rmpi_rail_t *rail, int peer, uint32_t epoch)
{
    if (!rmpi_vc_table || peer < 0 || peer >= vc_size || peer == vc_rank)
        return;
    rmpi_vc_t *vc = rmpi_vc_get(peer);
    int sub = rmpi_vc_sub_of(vc, rail);
    if (sub < 0)
        return;
    rmpi_subchan_t *sc = &vc->sub[sub];
    sc->epoch = (uint8_t)epoch;
    /* a spare stream asleep is not a failed rail: rmpi_vc_streams wakes it */
    if (vc->sched.up[sub] || vc->sched.asleep[sub] || vc->cut)
        return;
    uint64_t now = rmpi_time_ns();
    vc->nup = rmpi_sched_readmit(&vc->sched, sub);
    rmpi_vc_tx_update(vc);
    sc->readmits++;
    sc->rdma_at_up = sc->rdma_bytes;
    sc->down_ns += now - sc->t_down;
    sc->rate = 0;
    sc->est_t = 0;
    /* As long as the last try was given (the probe's backoff), at least the detector's floor,
     * before a new connection not heard yet can fail (detect.h). */
    rmpi_detect_readmit(&sc->det, now, (double)sc->probe.wait > fail_floor_ns ? (double)sc->probe.wait : fail_floor_ns);
    for (int i = 0; i < vc->nsub; i++)
        vc->sub[i].rate = 0; /* shares are learned anew from the striping weights */
    rmpi_warn("rail %s to rank %d is back after %.2f s (connection epoch %u); striping over it again.",
              rail->hints.name, peer, (double)(now - sc->t_down) * 1e-9, epoch);
}

/* A window of eager frames is picked in a burst and then drains for many milliseconds with
 * no pick: rmpi_vc_pick_big's own samples never span a busy interval of it, so while a VC
 * picked big frames lately the watch samples its rails' rates as well. */
#define BIG_RECENT_NS 100000000u

static void watch_vc(rmpi_vc_t *vc, uint64_t now, int fresh)
{
    double tmo[RMPI_VC_MAX_SUB];
    rmpi_detect_t det[RMPI_VC_MAX_SUB];
    int rates = vc->big_t && now - vc->big_t < BIG_RECENT_NS;
    for (int i = 0; i < vc->nsub; i++) {
        rmpi_subchan_t *sc = &vc->sub[i];
        if (!vc->sched.up[i])
            probe(vc, sc, now);
        else if (rates && sc->rail->ops->backlog)
            rate_sample(sc, sc->rail->ops->backlog(sc->rail, vc->peer), now);
        if (vc->sched.up[i] && fail_k > 0) {
            uint64_t moved;
            size_t out = sc->rail->ops->watch(sc->rail, vc->peer, &moved);
            rmpi_detect_observe(&sc->det, out, moved, now, fresh);
            tmo[i] = rmpi_detect_timeout(&sc->path, fail_k, fail_floor_ns);
        }
        det[i] = sc->det;
    }
    if (fail_k <= 0)
        return;
    int f = rmpi_detect_failed(det, vc->nsub, vc->sched.up, tmo, now);
    if (f >= 0) {
        watch_failed(vc, f, now, tmo[f]);
        return;
    }
    /* Nothing else moves (the peer may be waiting for what the stalled rail holds): a plain
     * ACK on each other live subchannel, which the peer's host acknowledges if it is there. */
    f = rmpi_detect_nudge(det, vc->nsub, vc->sched.up, tmo, now);
    if (f < 0)
        return;
    vc->sub[f].det.t_nudged = det[f].t_nudged;
    for (int j = 0; j < vc->nsub; j++)
        if (j != f && vc->sched.up[j]) /* spares asleep are not up */
            send_ack_on(vc, j, 0);
    vc->nudges++;
}

void rmpi_vc_watch(void)
{
    static unsigned calls;
    static uint64_t last;
    if (++calls & 15) /* the clock once per 16 progress calls */
        return;
    uint64_t now = rmpi_time_ns();
    if (now - last < RMPI_VC_WATCH_NS)
        return;
    /* looks further apart than half the least timeout (progress did not run) prove nothing */
    int fresh = last == 0 || (double)(now - last) > fail_floor_ns / 2;
    last = now;
    for (int k = 0; k < rmpi_vc_nwatch; k++)
        if (!watch_list[k]->cut)
            watch_vc(watch_list[k], now, fresh);
}

void rmpi_vc_stream_count(const rmpi_vc_t *vc, int sub, int *live, int *total)
{
    int end, b = group_of(vc, sub, &end);
    *live = *total = 0;
    for (int i = b; i < end; i++) {
        *live += vc->sched.up[i] != 0;
        *total += vc->sched.up[i] || vc->sched.asleep[i];
    }
}

void rmpi_vc_streams(rmpi_vc_t *vc)
{
    for (int b = 0; b < vc->nsub && vc->nspare;) {
        int end;
        group_of(vc, b, &end);
        int live, total;
        rmpi_vc_stream_count(vc, b, &live, &total);
        /* the path as its live streams see it: the smallest round trip, the summed rate
         * (every live stream measured, else wait for the next feedback) */
        double rtt = 0, rate = 0;
        int measured = live > 0;
        for (int i = b; i < end; i++) {
            if (!vc->sched.up[i])
                continue;
            double r = rmpi_path_base(&vc->sub[i].path), x = sub_rate(vc, i);
            if (vc->sub[i].path.measured && r > 0 && (rtt == 0 || r < rtt))
                rtt = r;
            measured &= x > 0;
            rate += x;
        }
        int want = measured && live < total
                       ? rmpi_path_streams(rate, rtt, (double)vc->sub[b].rail->hints.window, 0, live, total)
                       : live;
        for (int i = b; i < end && live < want; i++) {
            if (!vc->sched.asleep[i])
                continue;
            vc->nup = rmpi_sched_wake(&vc->sched, i);
            vc->nspare--;
            rmpi_vc_tx_update(vc);
            live++;
            rmpi_log(1, "vc: rank %d -> %d: woke stream %s (%d of %d; round trip %.0f us, rate %.1f MB/s, window %zu)",
                     vc_rank, vc->peer, vc->sub[i].rail->hints.name, live, total, rtt * 1e-3, rate * 1e3,
                     vc->sub[b].rail->hints.window);
            /* The peer must now acknowledge our frames (kept for resending from here on). */
            send_ack(vc, RMPI_VC_ACK_WAKE);
        }
        b = end;
    }
}

void (*rmpi_vc_on_cut)(rmpi_vc_t *vc, const char *why);
size_t rmpi_vc_ooo_max = SIZE_MAX;

void rmpi_vc_cut(rmpi_vc_t *vc, const char *why)
{
    if (vc->cut)
        return;
    vc->cut = 1;
    if (rmpi_vc_on_cut)
        rmpi_vc_on_cut(vc, why);
    else
        rmpi_fatal("%s; rank %d is cut off.", why, vc->peer);
}

static inline __attribute__((always_inline)) void deliver_in_order(rmpi_vc_t *vc, const void *frame, size_t len)
{
    vc->psn_expect++;
    vc->rx_frames++;
    vc_deliver(vc, frame, len);
    while (vc->ooo && vc->ooo->psn == vc->psn_expect && !vc->cut) {
        rmpi_ooo_t *o = vc->ooo;
        vc->ooo = o->next;
        vc->psn_expect++;
        vc->rx_frames++;
        vc->ooo_bytes -= sizeof *o + o->len;
        vc_deliver(vc, o->data, o->len);
        free(o);
    }
}

static void on_bundle(rmpi_vc_t *vc, const char *b, size_t len);
static void on_acked(rmpi_vc_t *vc, const char *frame, size_t len, rmpi_vc_hdr_t h);
static inline __attribute__((always_inline)) void on_data(rmpi_vc_t *vc, const void *frame, size_t len, uint16_t psn);

void rmpi_vc_on_frame(rmpi_rail_t *rail, int peer, const void *frame, size_t len)
{
    rmpi_vc_t *vc = rmpi_vc_get(peer);
    rmpi_vc_hdr_t h;
    if (RMPI_UNLIKELY(len < sizeof h || vc->cut)) {
        if (!vc->cut) {
            char why[96];
            snprintf(why, sizeof why, "rank %d sent a frame of %zu bytes, shorter than its 4-byte header", peer, len);
            rmpi_vc_cut(vc, why);
        }
        return;
    }
    memcpy(&h, frame, sizeof h);
    if (RMPI_UNLIKELY(h.type >= RMPI_VC_ACKED)) {
        if (h.type == RMPI_VC_ACKED) {
            on_acked(vc, frame, len, h);
            return;
        }
        if (h.type == RMPI_VC_BUNDLE) {
            on_bundle(vc, frame, len);
            return;
        }
        if (h.type == RMPI_VC_RAIL_DOWN) {
            on_rail_down(vc, h.psn, h.flags);
            return;
        }
        if (h.flags & RMPI_VC_ACK_WAKE)
            vc->ack_peer = 1;
        if (ack_ok(vc, h.psn))
            on_ack(vc, rmpi_vc_sub_of(vc, rail), h.psn);
        return;
    }
    on_data(vc, frame, len, h.psn);
}

static void cut_malformed(rmpi_vc_t *vc, const char *what, size_t len, const char *with, const char *bad)
{
    char why[192];
    snprintf(why, sizeof why, "rank %d sent %s of %zu bytes %s%s", vc->peer, what, len, with, bad);
    rmpi_vc_cut(vc, why);
}

/* An acknowledgement and the frame behind it. Carried acknowledgements are no round-trip
 * samples: the frame left when the core had something to say, not when the acknowledged one
 * arrived. */
static void on_acked(rmpi_vc_t *vc, const char *frame, size_t len, rmpi_vc_hdr_t h)
{
    rmpi_vc_hdr_t in;
    const char *bad = NULL;
    if (len < 2 * sizeof in)
        bad = "with no frame behind it";
    else if (h.flags != 0)
        bad = "with flags set";
    if (!bad) {
        memcpy(&in, frame + sizeof h, sizeof in);
        if (in.type >= RMPI_VC_ACKED)
            bad = "in front of an acknowledgement, bundle or rail notice";
    }
    if (bad) {
        cut_malformed(vc, "an acknowledgement", len, "", bad);
        return;
    }
    if (!ack_ok(vc, h.psn))
        return;
    on_ack(vc, -1, h.psn);
    on_data(vc, frame + sizeof h, len - sizeof h, in.psn);
}

/* An ACK frame of its own is due when the expected PSN entered another block of
 * RMPI_VC_ACK_EVERY since the last one: in order, at each multiple, whose frame before it
 * is the one the sender timed (send_bound); parked frames delivered at once may step
 * over a multiple, and nudges send ACKs in between. */
static inline int ack_due(const rmpi_vc_t *vc)
{
    return ((vc->psn_expect ^ vc->ack_plain) & (uint16_t) ~(RMPI_VC_ACK_EVERY - 1)) != 0;
}

/* A due ACK frame, unless the answers carry the acknowledgements (the last one went within
 * half a block) and the last ACK frame, a round-trip sample, is younger than
 * RMPI_VC_ACK_SAMPLE_NS: then the block is passed over (ack_plain moves on) and the sender's
 * kept frames are freed by the next answer as they were by this one. */
static void ack_block(rmpi_vc_t *vc)
{
    if ((uint16_t)(vc->psn_expect - vc->ack_sent) <= RMPI_VC_ACK_EVERY / 2 && vc->ack_plain_t &&
        rmpi_time_ns() - vc->ack_plain_t < RMPI_VC_ACK_SAMPLE_NS) {
        vc->ack_plain = vc->psn_expect;
        return;
    }
    send_ack(vc, 0);
}

void rmpi_vc_set_place(rmpi_vc_place_fn place, rmpi_vc_placed_fn placed)
{
    vc_place = place;
    vc_placed = placed;
}

/* net env->frame_dst. Only on a VC of one subchannel, for the frame due next (its PSN): one
 * rail delivers in order and nothing is resent on it, so the core can match the frame now,
 * while its payload is still coming, and the match is the one delivery would have made.
 * Acknowledgements, bundles and frames of several subchannels go the usual way. */
void *rmpi_vc_frame_dst(rmpi_rail_t *rail, int peer, const void *head, size_t hlen, size_t len, size_t *off)
{
    (void)rail;
    rmpi_vc_hdr_t h;
    if (!vc_place || hlen < sizeof h)
        return NULL;
    rmpi_vc_t *vc = rmpi_vc_get(peer);
    if (vc->cut || vc->nsub != 1)
        return NULL;
    memcpy(&h, head, sizeof h);
    if (h.type >= RMPI_VC_ACKED || h.psn != vc->psn_expect)
        return NULL;
    return vc_place(vc, head, hlen, len, off);
}

/* net env->on_frame_placed: the frame rmpi_vc_frame_dst placed is all there; it counts as
 * delivered in order (deliver_in_order). */
void rmpi_vc_on_frame_placed(rmpi_rail_t *rail, int peer, const void *head, size_t off, size_t len)
{
    (void)rail;
    rmpi_vc_t *vc = rmpi_vc_get(peer);
    vc->frames_in++;
    vc->psn_expect++;
    vc->rx_frames++;
    vc_placed(vc, head, off, len);
    if (RMPI_UNLIKELY(vc->ack_peer) && ack_due(vc))
        ack_block(vc);
}

/* One frame of the core, alone or out of a bundle, by its PSN: delivered, parked or dropped. */
static inline __attribute__((always_inline)) void on_data(rmpi_vc_t *vc, const void *frame, size_t len, uint16_t psn)
{
    vc->frames_in++;
    if (RMPI_LIKELY(psn == vc->psn_expect)) {
        deliver_in_order(vc, frame, len);
        /* An ACK frame of its own every RMPI_VC_ACK_EVERY frames even while acknowledgements
         * ride on the answers: it leaves as the frame arrives, so it is the path's round-trip
         * sample (on_ack); carried ones leave when the core has something to say and are no
         * samples, and without these the only samples left were the detector's nudges,
         * late by up to its timeout (netns/wan/two: ACK round trips 20% above the lab's). */
        if (RMPI_UNLIKELY(vc->ack_peer) && ack_due(vc))
            ack_block(vc);
        return;
    }
    if (RMPI_UNLIKELY(vc->nsub == 1)) {
        /* One rail delivers in order and nothing is ever resent: a PSN out of sequence is a
         * broken peer, and parking its frames would let it fill our memory. */
        char why[128];
        snprintf(why, sizeof why, "rank %d sent a frame with PSN %u where %u was due on its only rail", vc->peer, psn,
                 vc->psn_expect);
        rmpi_vc_cut(vc, why);
        return;
    }
    int16_t ahead = (int16_t)(psn - vc->psn_expect);
    if (ahead < 0) {
        vc->dup_frames++; /* already delivered (a resent frame): drop */
        return;
    }
    rmpi_ooo_t **pp = &vc->ooo;
    while (*pp && (int16_t)((*pp)->psn - psn) < 0)
        pp = &(*pp)->next;
    if (*pp && (*pp)->psn == psn) {
        vc->dup_frames++;
        return;
    }
    rmpi_ooo_t *o = rmpi_xmalloc(sizeof *o + len);
    o->psn = psn;
    o->len = len;
    memcpy(o->data, frame, len);
    o->next = *pp;
    *pp = o;
    vc->ooo_frames++;
    vc->ooo_bytes += sizeof *o + len;
    if (RMPI_UNLIKELY(vc->ooo_bytes > rmpi_vc_ooo_max)) {
        char why[224];
        snprintf(why, sizeof why,
                 "rank %d has %zu bytes of frames waiting for an earlier one (PSN %u) that does not "
                 "come, more than RMPI_UNEXP_MAX=%zu",
                 vc->peer, vc->ooo_bytes, vc->psn_expect, rmpi_vc_ooo_max);
        rmpi_vc_cut(vc, why);
    }
}

static void on_bundle(rmpi_vc_t *vc, const char *b, size_t len)
{
    /* Every record is checked before any is taken: a malformed bundle delivers nothing. */
    size_t p = sizeof(rmpi_vc_hdr_t), n = 0;
    const char *bad = NULL;
    while (!bad && p < len) {
        uint32_t l;
        rmpi_vc_hdr_t h;
        if (len - p < sizeof l) {
            bad = "a record length cut short";
            break;
        }
        memcpy(&l, b + p, sizeof l);
        if (l < sizeof h || l > len - p - sizeof l) {
            bad = "a record shorter than a frame header or running past its end";
            break;
        }
        memcpy(&h, b + p + sizeof l, sizeof h);
        if (h.type >= RMPI_VC_ACKED)
            bad = "an ACK, a bundle or a rail notice inside";
        p += sizeof l + l;
        n++;
    }
    if (!bad && n == 0)
        bad = "no record";
    if (bad) {
        cut_malformed(vc, "a bundle", len, "with ", bad);
        return;
    }
    vc->bundles_in++;
    for (p = sizeof(rmpi_vc_hdr_t); p < len && !vc->cut;) {
        uint32_t l;
        rmpi_vc_hdr_t h;
        memcpy(&l, b + p, sizeof l);
        memcpy(&h, b + p + sizeof l, sizeof h);
        on_data(vc, b + p + sizeof l, l, h.psn);
        p += sizeof l + l;
    }
}

void rmpi_vc_tx_update(rmpi_vc_t *vc)
{
    if (!vc->unacked_tail) /* every VC passes here before its first frame */
        vc->unacked_tail = &vc->unacked;
    vc->tx_sub = 0;
    int slow = vc->nup != 1 || !vc->sched.up[0] || vc->held_n ? RMPI_VC_TX_GENERIC : 0;
    /* The binding policy's pick changes only with the subchannels' states, after which this
     * runs again: small frames go straight to it (send_bound). Coalescing leaves it bound:
     * the hold policy is asked first, and what it does not hold goes there. Before, it made
     * every small frame take the generic choice (the small-frame pick, the gathered kept
     * copy, three pieces to the rail): once the core turned coalescing on for a peer on
     * another node (its first path measurement), two lab rails' 8 B MPI_Send cost 775
     * instructions against 573 on one (callgrind; docs/results/multirail.md). */
    if (vc->nup > 1 && !vc->held_n && vc->sched.cfg.small_policy == RMPI_SMALL_POLICY_BINDING) {
        int sub = rmpi_sched_small(&vc->sched);
        if (sub >= 0) {
            vc->tx_sub = sub;
            slow = RMPI_VC_TX_BOUND;
        }
    }
    vc->tx_slow = slow | (vc->coal ? RMPI_VC_TX_COAL : 0);
}

int (*rmpi_vc_hold_policy)(rmpi_vc_t *vc, size_t len);

void rmpi_vc_set_coal(rmpi_vc_t *vc, int on)
{
    vc->coal = on;
    rmpi_vc_tx_update(vc);
}

void rmpi_vc_send_slow(rmpi_vc_t *vc, const struct iovec *iov, int n, size_t len, int may_hold)
{
    int slow = vc->tx_slow;
    if (RMPI_UNLIKELY(slow & RMPI_VC_TX_COAL) && may_hold && rmpi_vc_hold_policy && rmpi_vc_hold_policy(vc, len)) {
        rmpi_vc_hold(vc, iov, n, len);
        return;
    }
    if ((slow & RMPI_VC_TX_BOUND) && len <= RMPI_VC_TXBUF_MID) {
        send_bound(vc, iov, n, len);
        return;
    }
    if (!(slow & (RMPI_VC_TX_GENERIC | RMPI_VC_TX_BOUND))) { /* coalescing alone: one live subchannel, the first */
        rmpi_subchan_t *sc = rmpi_vc_stamp(vc, 0, iov, len);
        sc->rail->ops->send(sc->rail, vc->peer, iov, n);
        return;
    }
    int sub = vc->nup > 1 ? (len >= vc->big_frame ? rmpi_vc_pick_big(vc, len) : rmpi_sched_small(&vc->sched))
                          : first_live(vc);
    if (sub < 0)
        return; /* no live subchannel: the peer is lost and the core has been told */
    rmpi_vc_send_on(vc, sub, iov, n, len);
}

void rmpi_vc_flush(rmpi_vc_t *vc)
{
    unsigned n = vc->held_n;
    if (!n)
        return;
    vc->held_n = 0;
    rmpi_vc_tx_update(vc);
    int sub = vc->sched.up[vc->held_sub] ? vc->held_sub : first_live(vc);
    if (sub < 0)
        return; /* the peer is lost: nothing reaches it any more */
    rmpi_rail_t *rail = vc->sub[sub].rail;
    struct iovec iov;
    if (n == 1) { /* a lone frame goes as itself */
        iov.iov_base = vc->held + sizeof(rmpi_vc_hdr_t) + sizeof(uint32_t);
        iov.iov_len = vc->held_len - sizeof(rmpi_vc_hdr_t) - sizeof(uint32_t);
    } else {
        rmpi_vc_hdr_t h = {0, RMPI_VC_BUNDLE, 0};
        memcpy(vc->held, &h, sizeof h);
        iov.iov_base = vc->held;
        iov.iov_len = vc->held_len;
        vc->bundles_out++;
        vc->bundled_frames += n;
    }
    rail->ops->send(rail, vc->peer, &iov, 1);
}

void rmpi_vc_hold(rmpi_vc_t *vc, const struct iovec *iov, int n, size_t len)
{
    const size_t rec = sizeof(uint32_t) + len;
    if (rec > RMPI_VC_BUNDLE_MAX - sizeof(rmpi_vc_hdr_t)) {
        rmpi_vc_send_slow(vc, iov, n, len, 0);
        return;
    }
    if (vc->held_n && vc->held_len + rec > RMPI_VC_BUNDLE_MAX)
        rmpi_vc_flush(vc);
    if (!vc->held)
        vc->held = rmpi_xmalloc(RMPI_VC_BUNDLE_MAX);
    if (!vc->held_n) {
        int sub = vc->nup > 1 ? rmpi_sched_small(&vc->sched) : first_live(vc);
        vc->held_sub = sub < 0 ? 0 : sub;
        vc->held_len = sizeof(rmpi_vc_hdr_t);
        vc->held_t0 = rmpi_time_ns();
    }
    rmpi_vc_stamp(vc, vc->held_sub, iov, len);
    if (vc->nup > 1)
        rmpi_vc_keep(vc, vc->held_sub, iov, n, len);
    uint32_t l = (uint32_t)len;
    memcpy(vc->held + vc->held_len, &l, sizeof l);
    rmpi_iov_gather(vc->held + vc->held_len + sizeof l, iov, n);
    vc->held_len += rec;
    if (vc->held_n++ == 0)
        rmpi_vc_tx_update(vc);
}

static void report_rail(FILE *f, const rmpi_vc_t *vc, int i)
{
    const rmpi_subchan_t *sc = &vc->sub[i];
    fprintf(f,
            "[rmpi report]   rail %s: %s, weight %.3f, frames %llu, frame bytes %llu, rdma bytes %llu, failures "
            "%llu, readmitted %llu, down %.2f s, rdma bytes since back %llu\n",
            sc->rail->hints.name,
            vc->sched.up[i]       ? "up"
            : vc->sched.asleep[i] ? "asleep"
                                  : "DOWN",
            vc->sched.weight[i], (unsigned long long)sc->frames, (unsigned long long)sc->bytes,
            (unsigned long long)sc->rdma_bytes, (unsigned long long)sc->failures, (unsigned long long)sc->readmits,
            (double)(sc->down_ns + (vc->sched.up[i] || vc->sched.asleep[i] ? 0 : rmpi_time_ns() - sc->t_down)) * 1e-9,
            (unsigned long long)(sc->rdma_bytes - sc->rdma_at_up));
    char facts[256] = "";
    if (sc->rail->ops->peer_facts)
        sc->rail->ops->peer_facts(sc->rail, vc->peer, 0, facts, sizeof facts);
    if (*facts)
        fprintf(f, "[rmpi report] rank %d -> %d: connection %s: %s\n", vc_rank, vc->peer, sc->rail->hints.name, facts);
}

void rmpi_vc_report_json(void *file)
{
    FILE *f = file;
    int sep = 0;
    fputs(", \"connections\": [", f);
    for (int p = 0; p < vc_size; p++) {
        const rmpi_vc_t *vc = rmpi_vc_table[p];
        for (int i = 0; vc && p != vc_rank && i < vc->nsub; i++) {
            const rmpi_subchan_t *sc = &vc->sub[i];
            char facts[512] = "";
            if (sc->rail->ops->peer_facts)
                sc->rail->ops->peer_facts(sc->rail, p, 1, facts, sizeof facts);
            if (*facts)
                fprintf(f, "%s{\"peer\": %d, \"rail\": \"%s\", %s}", sep++ ? ", " : "", p, sc->rail->hints.name, facts);
        }
    }
    fputs("]", f);
}

void rmpi_vc_report(void *file)
{
    FILE *f = file;
    for (int p = 0; p < vc_size; p++) {
        rmpi_vc_t *vc = rmpi_vc_table[p];
        if (!vc || p == vc_rank)
            continue;
        /* Spare streams still asleep are counted apart and listed last, so the rails that
         * carried traffic come first as they did before spares existed. */
        fprintf(
            f,
            "[rmpi report] rank %d -> %d: %d subchannel(s), frames in %llu, out of order %llu, duplicates %llu, "
            "resent %llu, adaptive updates %llu, messages striped %llu (split %llu), spare streams asleep %d, bundles out "
            "%llu (%llu frames) in "
            "%llu, detector nudges %llu, acks sent %llu carried %llu\n",
            vc_rank, p, vc->nsub - vc->nspare, (unsigned long long)vc->frames_in, (unsigned long long)vc->ooo_frames,
            (unsigned long long)vc->dup_frames, (unsigned long long)vc->resent_frames,
            (unsigned long long)vc->sched.updates, (unsigned long long)vc->sched.cuts,
            (unsigned long long)vc->sched.split, vc->nspare, (unsigned long long)vc->bundles_out,
            (unsigned long long)vc->bundled_frames, (unsigned long long)vc->bundles_in, (unsigned long long)vc->nudges,
            (unsigned long long)vc->acks_out, (unsigned long long)vc->acks_carried);
        for (int i = 0; i < vc->nsub; i++)
            if (!vc->sched.asleep[i])
                report_rail(f, vc, i);
        for (int i = 0; i < vc->nsub; i++)
            if (vc->sched.asleep[i])
                report_rail(f, vc, i);
        for (int i = 0; i < vc->nsub; i++) {
            int live, total;
            rmpi_vc_stream_count(vc, i, &live, &total);
            if (total > 1 && !(vc->sub[i].rail->hints.stream > 0))
                fprintf(f, "[rmpi report]   streams %s: %d of %d (window %zu bytes)\n", vc->sub[i].rail->hints.name,
                        live, total, vc->sub[i].rail->hints.window);
        }
        for (int i = 0; i < vc->nsub; i++) {
            const rmpi_path_t *pa = &vc->sub[i].path;
            if (vc->sched.asleep[i])
                continue;
            enum { H = RMPI_NET_RTT_HANDSHAKE, A = RMPI_NET_RTT_ACK, K = RMPI_NET_RTT_KERNEL };
            fprintf(f,
                    "[rmpi report]   path %s: srtt %.1f us, rttvar %.1f us, min %.1f us, samples handshake %llu "
                    "acks %llu kernel %llu, last handshake %.1f us acks %.1f us kernel %.1f us, min handshake %.1f "
                    "us acks %.1f us kernel %.1f us, rate %.1f MB/s%s\n",
                    vc->sub[i].rail->hints.name, pa->srtt * 1e-3, pa->rttvar * 1e-3, pa->min_rtt * 1e-3,
                    (unsigned long long)pa->n[H], (unsigned long long)pa->n[A], (unsigned long long)pa->n[K],
                    pa->last[H] * 1e-3, pa->last[A] * 1e-3, pa->last[K] * 1e-3, pa->min[H] * 1e-3, pa->min[A] * 1e-3,
                    pa->min[K] * 1e-3, sub_rate(vc, i) * 1e3,
                    /* alone, a rail's put completes when written (net.h): the kernel's intake */
                    vc->nup == 1 && sub_rate(vc, i) > 0 ? " (written, one rail)" : "");
        }
    }
}

static rmpi_vc_totals_t vc_retired; /* counted by channels already finalized */

static void live_totals(rmpi_vc_totals_t *t)
{
    for (int p = 0; p < vc_size && rmpi_vc_table; p++) {
        const rmpi_vc_t *vc = rmpi_vc_table[p];
        if (!vc || p == vc_rank) /* as rmpi_vc_report: frames to self are no traffic */
            continue;
        t->frames_in += vc->frames_in;
        t->ooo_frames += vc->ooo_frames;
        t->dup_frames += vc->dup_frames;
        t->resent_frames += vc->resent_frames;
        t->adapt_updates += vc->sched.updates;
        for (int i = 0; i < vc->nsub; i++) {
            t->frames_out += vc->sub[i].frames;
            t->frame_bytes += vc->sub[i].bytes;
            t->rdma_bytes += vc->sub[i].rdma_bytes;
        }
    }
}

void rmpi_vc_totals(rmpi_vc_totals_t *t)
{
    *t = vc_retired;
    live_totals(t);
}

void rmpi_vc_finalize(void)
{
    live_totals(&vc_retired);
    for (int p = 0; p < vc_size; p++) {
        rmpi_vc_t *vc = rmpi_vc_table[p];
        if (!vc)
            continue;
        while (vc->ooo) {
            rmpi_ooo_t *o = vc->ooo;
            vc->ooo = o->next;
            free(o);
        }
        on_ack(vc, -1, vc->psn_next);
        txlist_free(vc->txfree);
        txlist_free(vc->txmid);
        free(vc->held);
        free(vc);
    }
    free(rmpi_vc_table);
    rmpi_vc_table = NULL;
    free(watch_list);
    watch_list = NULL;
    rmpi_vc_nwatch = 0;
}
