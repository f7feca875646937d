/* Point-to-point protocols: eager (with header caching and sync acks), rendezvous (RTS,
 * then RDMA read + FIN, or CTS + RDMA write + FIN), and tag matching. */
#include "core_impl.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ctxq_t **rmpi_ctxq;
size_t rmpi_nctxq;
int rmpi_rndv_mode, rmpi_hdr_cache;
size_t rmpi_core_unexp_max = SIZE_MAX;
rmpi_core_stats_t rmpi_core_stats;
/* Unexpected messages on contexts this process has no queues for yet (the sender created
 * its communicator first), in arrival order; they move to the context's queue when it is
 * made. Counted in their peer's RMPI_UNEXP_MAX like any unexpected message. */
static rmpi_list_t early = {&early, &early};

static rmpi_list_t *src_list(ctxq_t *q, int src) { return &q->by_src[(unsigned)src % CTXQ_SRC_BUCKETS]; }

ctxq_t *rmpi_core_ctxq_grow(uint32_t ctx)
{
    if (ctx >= RMPI_CTX_MAX)
        rmpi_fatal("context id %#x is beyond RMPI_CTX_MAX (a bug in the layer that made it).", ctx);
    if (ctx >= rmpi_nctxq) {
        size_t n = rmpi_nctxq ? rmpi_nctxq : 16; /* size_t: doubling past 2^31 must not wrap */
        while (n <= ctx)
            n *= 2;
        rmpi_ctxq = rmpi_xrealloc(rmpi_ctxq, n * sizeof *rmpi_ctxq);
        memset(rmpi_ctxq + rmpi_nctxq, 0, (n - rmpi_nctxq) * sizeof *rmpi_ctxq);
        rmpi_nctxq = n;
    }
    if (!rmpi_ctxq[ctx]) {
        ctxq_t *q = rmpi_xmalloc(sizeof *q);
        rmpi_list_init(&q->posted);
        rmpi_list_init(&q->unexp);
        for (int b = 0; b < CTXQ_SRC_BUCKETS; b++)
            rmpi_list_init(&q->by_src[b]);
        q->eager_fn = NULL;
        q->eager_arg = NULL;
        rmpi_ctxq[ctx] = q;
        rmpi_list_t *e, *t;
        rmpi_list_for_each_safe(e, t, &early)
        {
            rmpi_unexp_t *u = RMPI_CONTAINER_OF(e, rmpi_unexp_t, link);
            if (u->ctx == ctx) {
                rmpi_list_remove(e);
                rmpi_list_push_back(&q->unexp, e);
                rmpi_list_push_back(src_list(q, u->src), &u->slink);
            }
        }
    }
    return rmpi_ctxq[ctx];
}

/* The queues of a context a frame names; NULL when this process has not made them and
 * the table does not reach that far (the frame's id is the peer's word, not ours). */
static inline ctxq_t *ctxq_of_frame(uint32_t ctx)
{
    if (RMPI_LIKELY(ctx < rmpi_nctxq && rmpi_ctxq[ctx]))
        return rmpi_ctxq[ctx];
    return ctx < rmpi_nctxq ? rmpi_core_ctxq_grow(ctx) : NULL;
}

/* What an unexpected message holds against its peer's RMPI_UNEXP_MAX. */
static size_t unexp_cost(const rmpi_unexp_t *u) { return sizeof *u + (u->is_rts ? 0 : u->len); }

/* Records of RTS and of eager messages are kept for reuse by size class (data of at most
 * 64 B, 512 B, 2 KiB, 8 KiB: shm's eager limit), a few of each, LIFO, under the core's lock.
 * When many senders run ahead of the receives (31 ranks sending to one, the alltoone
 * pattern), more records are live at once than glibc's thread cache keeps per size (7):
 * malloc and free then went through the bins, 220-380 instructions a message and varying
 * from job to job (docs/results/channels.md). When one sender streams KiB-sized messages
 * ahead of the receives, the records of a ringful are freed together, glibc gives the top of
 * its heap back to the kernel and faults it in again for the next ringful (8 KiB messages:
 * a third of the receiver's time in page faults). */
#define UNEXP_NCLASS 4
static const size_t unexp_class_data[UNEXP_NCLASS] = {64, 512, 2048, 8192};
static const int unexp_class_max[UNEXP_NCLASS] = {64, 64, 64, 32};
static rmpi_unexp_t *unexp_pool[UNEXP_NCLASS]; /* linked through link.next */
static int unexp_pool_n[UNEXP_NCLASS];

/* A zeroed record for an eager payload of len bytes (0 for an RTS). */
static rmpi_unexp_t *unexp_alloc(size_t len)
{
    rmpi_unexp_t *u;
    int c = 0;
    while (c < UNEXP_NCLASS && len > unexp_class_data[c])
        c++;
    if (c == UNEXP_NCLASS) {
        u = rmpi_xmalloc(sizeof *u + len);
    } else if (unexp_pool[c]) {
        u = unexp_pool[c];
        unexp_pool[c] = (rmpi_unexp_t *)u->link.next;
        unexp_pool_n[c]--;
    } else {
        /* malloc + memset: glibc's calloc skips the thread cache (about 380 instructions here) */
        u = rmpi_xmalloc(sizeof *u + unexp_class_data[c]);
    }
    memset(u, 0, sizeof *u);
    rmpi_list_init(&u->slink);
    u->pool = c < UNEXP_NCLASS ? c + 1 : 0;
    return u;
}

static void unexp_release(rmpi_unexp_t *u)
{
    u->magic = 0;
    int c = u->pool - 1;
    if (c >= 0 && unexp_pool_n[c] < unexp_class_max[c]) {
        u->link.next = (rmpi_list_t *)unexp_pool[c];
        unexp_pool[c] = u;
        unexp_pool_n[c]++;
        return;
    }
    free(u);
}

/* Off both lists (an early message is on no bucket's: its slink links to itself). */
static void unexp_unlink(rmpi_unexp_t *u)
{
    rmpi_list_remove(&u->link);
    rmpi_list_remove(&u->slink);
}

/* Queue an unexpected message of vc's peer (on q, or early when NULL), within RMPI_UNEXP_MAX. */
static void unexp_queue(rmpi_vc_t *vc, ctxq_t *q, rmpi_unexp_t *u)
{
    core_peer_t *cp = vc->core;
    u->seq = vc->rx_frames - 1; /* the frame being delivered */
    rmpi_list_push_back(q ? &q->unexp : &early, &u->link);
    if (q)
        rmpi_list_push_back(src_list(q, u->src), &u->slink);
    rmpi_core_stats.unexpected++;
    rmpi_core_unexp_n++;
    cp->unexp_bytes += unexp_cost(u);
    if (RMPI_UNLIKELY(cp->unexp_bytes > rmpi_core_unexp_max)) {
        char why[320];
        snprintf(why, sizeof why,
                 "rank %d holds %zu bytes of unexpected messages from rank %d (no receive posted "
                 "for them), more than RMPI_UNEXP_MAX=%zu: post the receives sooner or raise RMPI_UNEXP_MAX",
                 rmpi_core_rank, cp->unexp_bytes, vc->peer, rmpi_core_unexp_max);
        rmpi_vc_cut(vc, why);
    }
}

int rmpi_core_unexp_withdraw(rmpi_vc_t *vc, uint32_t ctx, uint64_t seq)
{
    ctxq_t *q = ctxq_of_frame(ctx);
    rmpi_list_t *l = q ? &q->unexp : &early, *e;
    rmpi_list_for_each(e, l)
    {
        rmpi_unexp_t *u = RMPI_CONTAINER_OF(e, rmpi_unexp_t, link);
        if (u->vc == vc && u->seq == seq && u->ctx == ctx) {
            unexp_unlink(u);
            ((core_peer_t *)vc->core)->unexp_bytes -= unexp_cost(u);
            rmpi_core_unexp_n--;
            unexp_release(u);
            return 1;
        }
    }
    return 0;
}

int rmpi_core_cancel_send(rmpi_req_t *r)
{
    rmpi_vc_t *vc = r->vc;
    if (!vc || (r->flags & (RMPI_RF_CANCELLING | RMPI_RF_CANCELLED)))
        return 0;
    core_peer_t *cp = rmpi_core_peer(vc);
    /* Done and synchronous or rendezvous: it was matched. */
    if (r->done && (r->mode == RMPI_MODE_SYNC || r->len > cp->eager_limit))
        return 0;
    r->flags |= RMPI_RF_CANCELLING;
    if (r->done) { /* a standard eager send, complete on this side: held until the answer */
        r->done = 0;
        r->flags |= RMPI_RF_HELD;
    }
    uint64_t id = r->wire_id;
    if (id)
        rmpi_core_wire_want(r, RMPI_WANT_CANCEL_ACK);
    else
        id = rmpi_core_wire_id(r, vc, RMPI_WANT_CANCEL_ACK);
    wire_cancel_t f = {{0, RMPI_F_CANCEL, 0}, r->ctx, r->seq, id};
    struct iovec iov = {&f, sizeof f};
    rmpi_vc_send(vc, &iov, 1, sizeof f);
    /* The answer is awaited here, as MPICH does: a program may ask MPI_Request_get_status
     * (or Test) once right after MPI_Cancel and take "not complete" for "not cancelled"
     * (mpi4py's suite does). The receiver answers from its progress engine. */
    while (r->flags & RMPI_RF_CANCELLING)
        if (!rmpi_core_progress())
            sched_yield();
    return 1;
}

static void unexp_free_all(rmpi_list_t *l)
{
    while (!rmpi_list_empty(l)) {
        rmpi_unexp_t *u = RMPI_CONTAINER_OF(l->next, rmpi_unexp_t, link);
        unexp_unlink(u);
        unexp_release(u);
    }
}

void rmpi_core_unexp_finalize(void)
{
    unexp_free_all(&early);
    for (size_t c = 0; c < rmpi_nctxq; c++)
        if (rmpi_ctxq[c])
            unexp_free_all(&rmpi_ctxq[c]->unexp);
    for (int c = 0; c < UNEXP_NCLASS; c++) {
        while (unexp_pool[c]) {
            rmpi_unexp_t *u = unexp_pool[c];
            unexp_pool[c] = (rmpi_unexp_t *)u->link.next;
            free(u);
        }
        unexp_pool_n[c] = 0;
    }
}

void rmpi_core_peer_init(rmpi_vc_t *vc)
{
    core_peer_t *cp = vc->core;
    rmpi_rail_t *rail = vc->sub[0].rail;
    const char *scope = rail->hints.scope == RMPI_SCOPE_INTER ? "inter" : "intra";
    long long lim = rmpi_knob_scoped_size("EAGER_LIMIT", rmpi_knobs.EAGER_LIMIT, scope,
                                          rail->hints.scope == RMPI_SCOPE_INTER ? 65536 : 16384);
    size_t max = rail->hints.max_frame - sizeof(wire_match_t) - sizeof(uint64_t);
    cp->eager_limit = (size_t)lim < max ? (size_t)lim : max;
    cp->eager_base = cp->eager_limit;
    cp->eager_max = max;
    /* DATA frames (core_frag.c); RMPI_FRAG_SIZE was checked at init. Over tcp more bytes
     * in flight pay: 128 KiB fragments moved 4 MiB of 1 KiB blocks in 4.3-5.4 ms on
     * loopback where 32 KiB took 6.5-6.8 (docs/results/noncontig.md). */
    size_t frag = (size_t)rmpi_knob_scoped_size("FRAG_SIZE", rmpi_knobs.FRAG_SIZE, scope, 32768);
    cp->frag_size = frag < max ? frag : max;
    /* Pieces by RDMA op pay where an op is a kernel copy or a NIC's; where it is a message
     * of its own (tcp), frames gather the pieces in fewer sends: 16-64 KiB pieces of 1-4 MiB
     * moved 2.2x faster as frames on loopback, and 128 KiB pieces as fast
     * (docs/results/noncontig.md, 2026-12-01). */
    int native = 1;
    for (int i = 0; i < vc->nsub; i++)
        native &= vc->sub[i].rail->hints.rdma_native;
    cp->seg_min = (size_t)rmpi_knob_scoped_size("RNDV_SEG_MIN", rmpi_knobs.RNDV_SEG_MIN, native ? "native" : "emulated",
                                                native ? 8192 : 131072);
    /* Only between nodes: within one (tcp on loopback too), a round trip is the
     * scheduler's delay, not a path. */
    int inter = vc->peer >= rmpi_core_size || rmpi_topo_node_of(vc->peer) != rmpi_topo_my_node();
    for (int i = 0; i < vc->nsub; i++)
        inter &= vc->sub[i].rail->hints.scope == RMPI_SCOPE_INTER;
    cp->eager_auto = inter && rmpi_knobs.WAN_TUNE && !rmpi_knob_given("EAGER_LIMIT");
    cp->coal_ok = inter && rmpi_knobs.WAN_TUNE && rmpi_knobs.COALESCE_WAIT > 0;
    /* Emulated RDMA (TCP) streams a put as soon as the CTS arrives; a read would first
     * send a request the target serves in turns with its other output. Both peers see the
     * same rails, so they agree on the mode. */
    cp->rndv_write =
        rmpi_rndv_mode == RMPI_RNDV_MODE_WRITE || (rmpi_rndv_mode == RMPI_RNDV_MODE_AUTO && !rail->hints.rdma_native);
    /* A write given up with its connection (net.h `lingers`) lands whenever the link
     * returns, maybe in memory the application has taken back: the stripe written again
     * on another rail completed the message long before. Closing the target's
     * registration instead made tcp;ofi_rxm drop the whole connection at the late write,
     * under the rejoin that was reusing it (src/net/ofi/README.md). Reads land in bounce
     * buffers there and are safe to give up, so this receiver reads. */
    cp->no_writes = 0;
    for (int i = 0; i < vc->nsub && vc->nsub > 1; i++) /* one subchannel: no stripe moves, none lands late */
        cp->no_writes |= vc->sub[i].rail->hints.lingers;
    if (cp->no_writes && cp->rndv_write) {
        cp->rndv_write = 0;
        rmpi_log(1,
                 "rendezvous data from rank %d is read, not written (RMPI_RNDV_MODE): a write given up with a "
                 "rail's connection could still land later",
                 vc->peer);
    }
    /* Only the receiver chooses (a sender serves a read or answers a CTS alike), so the
     * choice may differ per peer and change with the round trip. */
    cp->rndv_far_read =
        cp->rndv_write && !cp->no_writes && inter && rmpi_knobs.WAN_TUNE && rmpi_rndv_mode == RMPI_RNDV_MODE_AUTO;
    /* One iov goes to the header; any subchannel may carry the frame. */
    long long segs = rmpi_knobs.SEG_MAX < RMPI_CORE_SEG_CAP ? rmpi_knobs.SEG_MAX : RMPI_CORE_SEG_CAP;
    for (int i = 0; i < vc->nsub; i++) {
        int m = vc->sub[i].rail->hints.max_iov;
        if (m && m - 1 < segs)
            segs = m - 1;
    }
    cp->seg_max = segs > 0 ? (int)segs : 0;
    cp->zc_min = rmpi_vc_zc_min(vc);
    cp->ready = 1;
    rmpi_core_wan_tune(vc);
}

/* Paper (infiniband-wan) 3.4 and Fig. 5: every protocol absorbs delays up to about 100 us;
 * below that round trip the fixed thresholds stay exactly as they are. */
#define WAN_RTT_MIN_NS 100000.0
/* Bytes/ns at which a receiver copies an eager message out of its receive buffer: a single
 * core's memcpy of data not in cache, on the low side so that the crossover errs toward
 * rendezvous. */
#define WAN_COPY_RATE 2.0
/* Eager messages are buffered whole when no receive waits for them: at most 1 MiB, and at
 * most 1/256 of the receiver's unexpected budget (RMPI_UNEXP_MAX), so a sender must run
 * hundreds of messages ahead of its receiver before it is cut off, as with 64 KiB and 4096. */
#define WAN_EAGER_CAP ((size_t)1 << 20)
#define WAN_UNEXP_SHARE 256

size_t rmpi_core_wan_limit(size_t base, double rtt, double one, double all, size_t unexp_max, size_t max_frame)
{
    if (!(rtt >= WAN_RTT_MIN_NS))
        return base;
    double s = rmpi_path_crossover(rtt, WAN_COPY_RATE, one, all);
    size_t cap = RMPI_MIN(WAN_EAGER_CAP, max_frame);
    if (unexp_max != SIZE_MAX)
        cap = RMPI_MIN(cap, unexp_max / WAN_UNEXP_SHARE);
    size_t lim = s >= (double)cap ? cap : (size_t)s;
    lim &= ~(size_t)1023; /* whole KiB: the report stays readable as the estimate moves */
    return lim > base ? lim : base;
}

/* ---- coalescing ---- */
static rmpi_vc_t **coal_vcs; /* VCs that held frames, until the poll sends them */
static int coal_n, coal_cap;
size_t rmpi_core_unexp_n;
int rmpi_core_coal_near;

static uint64_t coal_wait_ns(void) { return (uint64_t)(rmpi_knobs.COALESCE_WAIT * 1e3); }

static int coal_hook(void)
{
    rmpi_core_coal_poll(0);
    return 0;
}

/* rmpi_vc_hold_policy: hold a small frame when the VC already holds some (their order); to
 * a far peer when the link is busy with it, to a near one when this process runs behind
 * (seed infiniband-wan 3.4: small messages leave together). A frame that would leave at
 * once waits for nothing (a lone ping-pong never waits). Why near peers too: a process
 * that forwards what reached it in bundles (the far site leader of a site-aware Bcast
 * streamed by its root) otherwise pays a frame and a system call per message on each end
 * of its site's LAN, and its site fell behind a flat tree whose second hop crossed the
 * long link in bundles (2x2 sites, cyclic, 64 B: 2-5x slower, docs/results/wan.md). */
static int coal_policy(rmpi_vc_t *vc, size_t len)
{
    if (len > RMPI_CORE_COAL_SMALL + sizeof(wire_match_t))
        return 0;
    if (vc->held_n)
        return 1;
    core_peer_t *cp = vc->core;
    int busy = 0;
    if (!cp->coal_far)
        busy = rmpi_core_unexp_n > 0;
    for (int i = 0; i < vc->nsub && !busy && cp->coal_far; i++) {
        rmpi_rail_t *rail = vc->sub[i].rail;
        busy = vc->sched.up[i] && rail->ops->backlog && rail->ops->backlog(rail, vc->peer) > 0;
    }
    if (!busy)
        return 0;
    if (coal_n == coal_cap) {
        coal_cap = coal_cap ? 2 * coal_cap : 8;
        coal_vcs = rmpi_xrealloc(coal_vcs, (size_t)coal_cap * sizeof *coal_vcs);
    }
    coal_vcs[coal_n++] = vc;
    rmpi_core_coal_near |= !cp->coal_far;
    if (coal_n == 1)
        rmpi_core_hook_add(coal_hook);
    return 1;
}

/* Send what VCs hold: all, or what waited long enough, or (near only) what a process that
 * caught up or waits holds. */
static void coal_send(int all, int near_now)
{
    uint64_t now = rmpi_time_ns(), wait = coal_wait_ns();
    rmpi_core_coal_near = 0;
    for (int i = 0; i < coal_n;) {
        rmpi_vc_t *vc = coal_vcs[i];
        int near = !((core_peer_t *)vc->core)->coal_far;
        if (vc->held_n && !all && now - vc->held_t0 < wait && !(near && near_now)) {
            rmpi_core_coal_near |= near;
            i++;
            continue;
        }
        rmpi_vc_flush(vc); /* nothing when another frame already took them */
        coal_vcs[i] = coal_vcs[--coal_n];
    }
    if (coal_n == 0)
        rmpi_core_hook_remove(coal_hook);
    if (all) {
        free(coal_vcs);
        coal_vcs = NULL;
        coal_cap = 0;
    }
}

void rmpi_core_coal_poll(int all) { coal_send(all, rmpi_core_coal_near && rmpi_core_unexp_n == 0); }

void rmpi_core_coal_idle(void) { coal_send(0, 1); }

void rmpi_core_wan_tune(rmpi_vc_t *vc)
{
    core_peer_t *cp = vc->core;
    /* A wait of 1/20 of a round trip or less is lost in it: such (far) peers hold while the
     * link is busy, the others while this process runs behind (coal_policy). */
    if (cp->coal_ok) {
        rmpi_vc_hold_policy = coal_policy;
        cp->coal_far = rmpi_vc_rtt(vc) >= RMPI_CORE_COAL_RTT * (double)coal_wait_ns();
        if (!vc->coal)
            rmpi_vc_set_coal(vc, 1);
    }
    /* A far peer's rendezvous reads (seed infiniband-wan, 3.4: control messages must be
     * re-evaluated against the delay). In write mode a put over emulated RDMA on a peer with
     * spare streams completes on the target's PUT_ACK (net.h: a completed put must precede
     * later frames on any rail), and only then does the FIN leave: one round trip more than
     * a read, whose data completes at the receiver as it lands. 1gbit@10ms, 8 x 2 MiB
     * windows: 67 MB/s written, 76 read. */
    if (cp->rndv_far_read)
        cp->rndv_write = !(rmpi_vc_rtt(vc) >= WAN_RTT_MIN_NS);
    if (!cp->ready || !cp->eager_auto)
        return;
    double one, all;
    int rails = rmpi_vc_rates(vc, &one, &all);
    /* Several rails whose rates are not measured yet: keep the base limit. Raising it now
     * would send every message eagerly on one rail, so no rendezvous would ever be striped
     * and the rates the crossover needs would never be measured (two unequal rails at 2 ms
     * stayed at the faster rail's speed). Striped rendezvous measures them first. A rail
     * and its streams are one rail (rmpi_vc_rates: a stream not measured yet counts at its
     * window per round trip). */
    if (rails > 1 && !(one > 0)) {
        cp->eager_limit = cp->eager_base;
        return;
    }
    cp->eager_limit =
        rmpi_core_wan_limit(cp->eager_base, rmpi_vc_rtt(vc), one, all, rmpi_core_unexp_max, cp->eager_max);
}

static void send_req_frame(rmpi_vc_t *vc, int type, uint64_t req)
{
    wire_req_t f = {{0, (uint8_t)type, 0}, 1, req};
    struct iovec iov = {&f, sizeof f};
    rmpi_vc_send(vc, &iov, 1, sizeof f);
}

/* ---- send side ---- */

/* An eager frame: iov[0] gets the header, iov[1..n) hold the len data bytes (one
 * contiguous buffer, or the segments of a non-contiguous one). */
static inline void send_eager_v(rmpi_vc_t *vc, core_peer_t *cp, uint32_t ctx, int src, int tag, struct iovec *iov,
                                int n, size_t len)
{
    if (cp->tx_valid && cp->tx_ctx == ctx && cp->tx_tag == tag && cp->tx_src == src && rmpi_hdr_cache) {
        rmpi_vc_hdr_t h = {0, RMPI_F_EAGER_SHORT, 0};
        iov[0] = (struct iovec){&h, sizeof h};
        rmpi_vc_send_small(vc, iov, n, sizeof h + len);
        rmpi_core_stats.eager_short++;
    } else {
        wire_match_t m = {{0, RMPI_F_EAGER, 0}, ctx, src, tag};
        iov[0] = (struct iovec){&m, sizeof m};
        rmpi_vc_send_small(vc, iov, n, sizeof m + len);
        cp->tx_ctx = ctx, cp->tx_src = src, cp->tx_tag = tag, cp->tx_valid = 1;
        rmpi_core_stats.eager_full++;
    }
}

static inline void send_eager(rmpi_vc_t *vc, core_peer_t *cp, uint32_t ctx, int src, int tag, const void *buf,
                              size_t len)
{
    struct iovec iov[2]; /* iov[0]: the header, filled once by send_eager_v */
    iov[1] = (struct iovec){(void *)buf, len};
    send_eager_v(vc, cp, ctx, src, tag, iov, 2, len);
}

/* A synchronous eager frame (the full header and the sender's request); it completes at
 * SYNC_ACK. iov as for send_eager_v. */
static void send_sync(rmpi_vc_t *vc, core_peer_t *cp, rmpi_req_t *r, struct iovec *iov, int n)
{
    struct {
        wire_match_t m;
        uint64_t sreq;
    } f = {{{0, RMPI_F_EAGER, RMPI_FF_SYNC}, r->ctx, r->src, r->tag}, rmpi_core_wire_id(r, vc, RMPI_WANT_SYNC_ACK)};
    iov[0] = (struct iovec){&f, sizeof f};
    rmpi_vc_send(vc, iov, n, sizeof f + r->len);
    cp->tx_ctx = r->ctx, cp->tx_src = r->src, cp->tx_tag = r->tag, cp->tx_valid = 1;
    rmpi_core_stats.eager_full++;
}

int rmpi_core_send_eager(int dest, uint32_t ctx, int src, int tag, const void *buf, size_t len)
{
    rmpi_vc_t *vc = rmpi_vc_get(dest);
    core_peer_t *cp = rmpi_core_peer(vc);
    if (RMPI_UNLIKELY(len > cp->eager_limit))
        return 0;
    send_eager(vc, cp, ctx, src, tag, buf, len);
    return 1;
}

static void zc_done(rmpi_net_op_t *op)
{
    rmpi_req_t *r = op->ctx;
    r->flags &= (uint16_t)~RMPI_RF_ZC;
    rmpi_req_complete(r);
}

/* An eager frame the provider sends from r->buf: r completes when it is done with it. */
static void send_eager_zc(rmpi_vc_t *vc, core_peer_t *cp, rmpi_req_t *r)
{
    struct iovec iov[2] = {{NULL, 0}, {r->buf, r->len}};
    r->zop.complete = zc_done;
    r->zop.ctx = r;
    r->flags |= RMPI_RF_ZC;
    r->zop.status = 0;
    rmpi_core_stats.zc_sends++;
    if (cp->tx_valid && cp->tx_ctx == r->ctx && cp->tx_tag == r->tag && cp->tx_src == r->src && rmpi_hdr_cache) {
        rmpi_vc_hdr_t h = {0, RMPI_F_EAGER_SHORT, 0};
        iov[0] = (struct iovec){&h, sizeof h};
        rmpi_vc_send_zc(vc, iov, 2, sizeof h + r->len, &r->zop);
        rmpi_core_stats.eager_short++;
        return;
    }
    wire_match_t m = {{0, RMPI_F_EAGER, 0}, r->ctx, r->src, r->tag};
    iov[0] = (struct iovec){&m, sizeof m};
    rmpi_vc_send_zc(vc, iov, 2, sizeof m + r->len, &r->zop);
    cp->tx_ctx = r->ctx, cp->tx_src = r->src, cp->tx_tag = r->tag, cp->tx_valid = 1;
    rmpi_core_stats.eager_full++;
}

/* The send of len bytes at buf; inlined into both entries, so rmpi_core_isend costs no
 * call more than before typed data came down to the core. */
static inline __attribute__((always_inline)) int isend_bytes(rmpi_req_t *r)
{
    rmpi_vc_t *vc = rmpi_vc_get(r->rank);
    core_peer_t *cp = rmpi_core_peer(vc);
    r->vc = vc;
    r->done = 0;
    r->seq = vc->tx_frames; /* its first frame's unwrapped PSN, for a cancel */
    if (RMPI_LIKELY(r->len <= cp->eager_limit)) {
        if (r->len >= cp->zc_min && r->mode != RMPI_MODE_SYNC) {
            send_eager_zc(vc, cp, r);
            return 0;
        }
        if (RMPI_LIKELY(r->mode != RMPI_MODE_SYNC)) {
            send_eager(vc, cp, r->ctx, r->src, r->tag, r->buf, r->len);
            rmpi_req_complete(r);
            return 0;
        }
        struct iovec iov[2] = {{NULL, 0}, {r->buf, r->len}};
        send_sync(vc, cp, r, iov, 2);
        return 0;
    }
    uint64_t sreq = rmpi_core_wire_id(r, vc, RMPI_WANT_CTS | RMPI_WANT_FIN);
    wire_rts_t f =
        {{{0, RMPI_F_RTS, 0}, r->ctx, r->src, r->tag}, sreq, r->len, (uintptr_t)r->buf, (uint32_t)vc->nsub, 0, {0}};
    if (RMPI_UNLIKELY(r->flags & (RMPI_RF_SEGS | RMPI_RF_FRAGS))) {
        /* Nothing to register for the peer: it never reads a segment list, it sends a CTS
         * and this side writes the segments (the provider registers each one it needs) or
         * sends them as DATA frames (short pieces: core_frag.c). */
        f.m.h.flags = r->flags & RMPI_RF_SEGS ? RMPI_FF_GATHER : RMPI_FF_FRAGS;
        f.addr = 0;
        if (r->flags & RMPI_RF_SEGS)
            rmpi_core_stats.seg_rndv_sends++;
    } else {
        rmpi_rndv_register(r, vc, r->buf, r->len, f.rkey);
    }
    size_t flen = RMPI_WIRE_KEYS_LEN(wire_rts_t, vc->nsub);
    struct iovec iov = {&f, flen};
    rmpi_vc_send(vc, &iov, 1, flen);
    rmpi_core_stats.rndv++;
    return 0; /* completes at FIN */
}

int rmpi_core_isend(rmpi_req_t *r)
{
    if (RMPI_UNLIKELY(r->flags & RMPI_RF_TYPED))
        return rmpi_core_typed_send(r);
    return isend_bytes(r);
}

int rmpi_core_isend_bytes(rmpi_req_t *r) { return isend_bytes(r); }

void rmpi_core_isend_segs(rmpi_req_t *r, struct iovec *iov, int n)
{
    rmpi_vc_t *vc = rmpi_vc_get(r->rank);
    core_peer_t *cp = rmpi_core_peer(vc);
    r->vc = vc;
    r->done = 0;
    r->seq = vc->tx_frames;
    rmpi_core_stats.seg_sends++;
    if (r->mode == RMPI_MODE_SYNC) {
        send_sync(vc, cp, r, iov, n + 1);
        return;
    }
    send_eager_v(vc, cp, r->ctx, r->src, r->tag, iov, n + 1, r->len);
    rmpi_req_complete(r);
}

/* ---- receive side ---- */

/* Eager data of a matched receive: st_bytes of it (the part that fits) into the buffer. */
static inline void copy_out(rmpi_req_t *r, const void *data)
{
    if (RMPI_LIKELY(!(r->flags & RMPI_RF_SCATTER))) {
        rmpi_copy(r->buf, data, r->st_bytes); /* copies nothing at 0: a 0-byte receive may have no buffer */
        return;
    }
    rmpi_core_scatter(r, data, r->st_bytes);
    rmpi_core_stats.scattered_recvs++;
}

static inline void set_status(rmpi_req_t *r, int src, int tag, size_t msglen)
{
    r->st_src = src;
    r->st_tag = tag;
    r->st_msglen = msglen;
    if (RMPI_UNLIKELY(msglen > r->len)) {
        r->st_bytes = r->len;
        r->st_err = MPI_ERR_TRUNCATE; /* the data that fits is delivered */
    } else {
        r->st_bytes = msglen;
        r->st_err = 0;
    }
}

/* Receiver in pieces, sender in pieces: a CTS listing the pieces, inside one registration
 * of the range they span, so the sender writes each piece straight into place. Only over
 * rails that register without pinning (a span may hold unmapped holes) and for at most
 * RMPI_CTS_PIECES_MAX pieces in a frame the peer takes eagerly; returns 0 otherwise. */
static int cts_pieces(rmpi_req_t *r, rmpi_vc_t *vc, uint64_t sreq)
{
    core_peer_t *cp = rmpi_core_peer(vc);
    for (int i = 0; i < vc->nsub; i++)
        if (rmpi_vc_rail(vc, i)->hints.mr_cache)
            return 0;
    struct iovec iov[RMPI_CTS_PIECES_MAX + 1];
    int n = rmpi_core_segs(r, 0, r->st_bytes, iov, RMPI_CTS_PIECES_MAX + 1);
    size_t keys = RMPI_WIRE_KEYS_LEN(wire_cts_t, vc->nsub);
    size_t flen = keys + sizeof(wire_cts_pieces_t) + (size_t)n * sizeof(rmpi_rndv_piece_t);
    if (n > RMPI_CTS_PIECES_MAX || n <= 0 || flen > cp->eager_limit)
        return 0;
    char frame[RMPI_WIRE_KEYS_LEN(wire_cts_t, RMPI_VC_MAX_SUB) + sizeof(wire_cts_pieces_t) +
               RMPI_CTS_PIECES_MAX * sizeof(rmpi_rndv_piece_t)];
    wire_cts_t *f = (wire_cts_t *)(void *)frame;
    wire_cts_pieces_t *ph = (wire_cts_pieces_t *)(void *)(frame + keys);
    rmpi_rndv_piece_t *pc = (rmpi_rndv_piece_t *)(void *)(ph + 1);
    /* the struct first: it spans every possible rkey, where the pieces go for fewer rails */
    *f = (wire_cts_t){{0, RMPI_F_CTS, RMPI_FF_PIECES}, (uint32_t)vc->nsub, sreq, 0, 0, r->st_bytes, {0}};
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        uintptr_t a = (uintptr_t)iov[i].iov_base;
        pc[i] = (rmpi_rndv_piece_t){a, iov[i].iov_len};
        lo = a < lo ? a : lo;
        hi = a + iov[i].iov_len > hi ? a + iov[i].iov_len : hi;
        total += iov[i].iov_len;
    }
    if (total != r->st_bytes)
        return 0;
    f->addr = lo;
    f->rreq = rmpi_core_wire_id(r, vc, RMPI_WANT_FIN);
    *ph = (wire_cts_pieces_t){(uint32_t)n, 0};
    rmpi_rndv_register(r, vc, (void *)lo, hi - lo, f->rkey);
    struct iovec fi = {frame, flen};
    rmpi_vc_send(vc, &fi, 1, flen);
    rmpi_core_stats.seg_rndv_recvs++;
    return 1;
}

/* A matched RTS (its GATHER and FRAGS flags in how): pull the data (read mode), invite the
 * sender to push it (write mode), or ask it for DATA frames. */
static void rndv_start(rmpi_req_t *r, rmpi_vc_t *vc, int src, int tag, uint64_t sreq, size_t len, unsigned how,
                       uint64_t raddr, const uint64_t *rkeys, uint32_t nkeys)
{
    int gather = how & RMPI_FF_GATHER;
    set_status(r, src, tag, len);
    r->vc = vc;
    r->peer_req = sreq;
    if (r->st_bytes == 0) {
        send_req_frame(vc, RMPI_F_FIN, sreq);
        rmpi_req_complete(r);
        return;
    }
    if (r->flags & RMPI_RF_SCATTER) {
        if ((r->flags & RMPI_RF_SEGS) && !rmpi_core_long_pieces(r, rmpi_core_peer(vc)))
            r->flags &= (uint16_t)~RMPI_RF_SEGS; /* short for this peer's rails: frames */
        if ((r->flags & RMPI_RF_SEGS) && !(how & (RMPI_FF_GATHER | RMPI_FF_FRAGS))) {
            /* contiguous source: read it straight into the pieces of the user's memory */
            rmpi_core_stats.seg_rndv_recvs++;
            rmpi_rndv_pull(r, vc, raddr, rkeys, nkeys, r->st_bytes);
            return;
        }
        if (!(how & RMPI_FF_FRAGS) && (r->flags & RMPI_RF_SEGS) && cts_pieces(r, vc, sreq))
            return;
        /* Pieces too short or too many for one RDMA op each: DATA frames, each scattered
         * as it arrives (no landing buffer of the whole message). */
        r->flags &= (uint16_t)~RMPI_RF_SEGS;
        how |= RMPI_FF_FRAGS;
    }
    /* A sender in pieces can only write them, or send them as frames: frames where a write
     * may outlive its connection (core_peer.no_writes). */
    if ((how & RMPI_FF_FRAGS) || (gather && rmpi_core_peer(vc)->no_writes)) {
        rmpi_core_frag_cts(r, vc);
        return;
    }
    if (!gather && !rmpi_core_peer(vc)->rndv_write) {
        rmpi_rndv_pull(r, vc, raddr, rkeys, nkeys, r->st_bytes);
        return;
    }
    wire_cts_t f = {{0, RMPI_F_CTS, 0}, (uint32_t)vc->nsub, sreq, rmpi_core_wire_id(r, vc, RMPI_WANT_FIN),
                    (uintptr_t)r->buf,  r->st_bytes,        {0}};
    rmpi_rndv_register(r, vc, r->buf, r->st_bytes, f.rkey);
    size_t flen = RMPI_WIRE_KEYS_LEN(wire_cts_t, vc->nsub);
    struct iovec iov = {&f, flen};
    rmpi_vc_send(vc, &iov, 1, flen);
}

static inline int match(int want_src, int want_tag, int src, int tag)
{
    return (want_src == src || want_src == RMPI_ANY_SOURCE) && (want_tag == tag || want_tag == RMPI_ANY_TAG);
}

/* The oldest unexpected message of q that a receive of (src, tag) takes: from one source
 * on that source's bucket list (other sources sharing the bucket are passed over), from
 * any on the list of all. */
static rmpi_unexp_t *unexp_find(ctxq_t *q, int src, int tag)
{
    rmpi_list_t *e;
    if (src == RMPI_ANY_SOURCE) {
        rmpi_list_for_each(e, &q->unexp)
        {
            rmpi_unexp_t *u = RMPI_CONTAINER_OF(e, rmpi_unexp_t, link);
            if (match(src, tag, u->src, u->tag))
                return u;
        }
        return NULL;
    }
    rmpi_list_t *l = src_list(q, src);
    rmpi_list_for_each(e, l)
    {
        rmpi_unexp_t *u = RMPI_CONTAINER_OF(e, rmpi_unexp_t, slink);
        if (match(src, tag, u->src, u->tag))
            return u;
    }
    return NULL;
}

static rmpi_req_t *match_posted(ctxq_t *q, int src, int tag)
{
    rmpi_list_t *e;
    rmpi_list_for_each(e, &q->posted)
    {
        rmpi_req_t *r = RMPI_CONTAINER_OF(e, rmpi_req_t, link);
        if (match(r->rank, r->tag, src, tag)) {
            rmpi_list_remove(e);
            r->flags &= (uint16_t)~RMPI_RF_POSTED;
            return r;
        }
    }
    return NULL;
}

void rmpi_core_eager_arrived(rmpi_vc_t *vc, uint32_t ctx, int src, int tag, const char *data, size_t len, int sync,
                             uint64_t sreq)
{
    ctxq_t *q = ctxq_of_frame(ctx);
    rmpi_req_t *r = q ? match_posted(q, src, tag) : NULL;
    if (RMPI_LIKELY(r != NULL)) {
        set_status(r, src, tag, len);
        copy_out(r, data);
        if (sync)
            send_req_frame(vc, RMPI_F_SYNC_ACK, sreq);
        rmpi_req_complete(r);
        if (rmpi_list_empty(&q->posted)) /* the frames after this one stay in the rail for now */
            rmpi_net_rx_enough = 1;
        return;
    }
    /* served where it landed, unless something of the context waits before it (its order
     * is the arrival order) */
    if (q && q->eager_fn && !sync && rmpi_list_empty(&q->unexp) &&
        q->eager_fn(q->eager_arg, vc->peer, src, tag, data, len))
        return;
    rmpi_unexp_t *u = unexp_alloc(len);
    u->magic = RMPI_REQ_MAGIC;
    u->ctx = ctx, u->src = src, u->tag = tag, u->vc = vc, u->len = len, u->sync = sync, u->sreq = sreq;
    if (len)
        memcpy(u->data, data, len);
    unexp_queue(vc, q, u);
}

/* The first posted receive of q matching (src, tag), left posted. */
static rmpi_req_t *first_posted(ctxq_t *q, int src, int tag)
{
    rmpi_list_t *e;
    rmpi_list_for_each(e, &q->posted)
    {
        rmpi_req_t *r = RMPI_CONTAINER_OF(e, rmpi_req_t, link);
        if (match(r->rank, r->tag, src, tag))
            return r;
    }
    return NULL;
}

/* An eager frame (not synchronous) of len bytes, hlen of them at frame, the rest still on
 * its way: when a posted receive matches it and takes it whole into contiguous memory, the
 * match is made now (the receive leaves the posted queue, so it can no longer be cancelled,
 * as at delivery) and the payload goes to its buffer, saving the copy out of the provider's
 * receive buffer (and that buffer's growth to the frame's size). Everything else (no such
 * receive, truncation, a receive in pieces, a malformed header, which delivery reports)
 * answers NULL and is delivered whole. */
void *rmpi_core_place(rmpi_vc_t *vc, const void *frame, size_t hlen, size_t len, size_t *off)
{
    core_peer_t *cp = vc->core;
    rmpi_vc_hdr_t h;
    memcpy(&h, frame, sizeof h);
    uint32_t ctx;
    int32_t src, tag;
    size_t hl;
    if (h.type == RMPI_F_EAGER_SHORT && !h.flags && cp->rx_valid) {
        ctx = cp->rx_ctx, src = cp->rx_src, tag = cp->rx_tag;
        hl = sizeof h;
    } else if (h.type == RMPI_F_EAGER && !h.flags && hlen >= sizeof(wire_match_t)) {
        wire_match_t m;
        memcpy(&m, frame, sizeof m);
        if (m.ctx >= RMPI_CTX_MAX || m.src < 0 || m.tag == RMPI_ANY_TAG)
            return NULL;
        ctx = m.ctx, src = m.src, tag = m.tag;
        hl = sizeof m;
    } else {
        return NULL;
    }
    if (len <= hl || cp->placing)
        return NULL;
    ctxq_t *q = ctxq_of_frame(ctx);
    rmpi_req_t *r = q ? first_posted(q, src, tag) : NULL;
    if (!r || (r->flags & RMPI_RF_SCATTER) || len - hl > r->len)
        return NULL;
    rmpi_list_remove(&r->link);
    r->flags &= (uint16_t)~RMPI_RF_POSTED;
    if (h.type == RMPI_F_EAGER)
        cp->rx_ctx = ctx, cp->rx_src = src, cp->rx_tag = tag, cp->rx_valid = 1;
    set_status(r, src, tag, len - hl);
    rmpi_chan_lib_note(vc->peer, len); /* as rmpi_core_deliver counts every frame */
    cp->placing = r;
    *off = hl;
    return r->buf;
}

void rmpi_core_placed(rmpi_vc_t *vc, const void *head, size_t off, size_t len)
{
    (void)head, (void)off, (void)len;
    core_peer_t *cp = vc->core;
    rmpi_req_t *r = cp->placing;
    cp->placing = NULL;
    rmpi_core_stats.placed_recvs++;
    rmpi_req_complete(r);
}

void rmpi_core_rts_arrived(rmpi_vc_t *vc, const wire_rts_t *f)
{
    ctxq_t *q = ctxq_of_frame(f->m.ctx);
    rmpi_req_t *r = q ? match_posted(q, f->m.src, f->m.tag) : NULL;
    if (r) {
        rndv_start(r, vc, f->m.src, f->m.tag, f->sreq, f->len, f->m.h.flags, f->addr, f->rkey, f->nkeys);
        return;
    }
    rmpi_unexp_t *u = unexp_alloc(0);
    u->magic = RMPI_REQ_MAGIC;
    u->ctx = f->m.ctx, u->src = f->m.src, u->tag = f->m.tag, u->vc = vc, u->len = f->len;
    u->is_rts = 1, u->sreq = f->sreq, u->raddr = f->addr, u->gather = f->m.h.flags & (RMPI_FF_GATHER | RMPI_FF_FRAGS);
    u->nkeys = f->nkeys;
    memcpy(u->rkeys, f->rkey, u->nkeys * sizeof *u->rkeys);
    unexp_queue(vc, q, u);
}

void rmpi_core_cts_arrived(rmpi_vc_t *vc, rmpi_req_t *r, const wire_cts_t *f, const void *pieces, uint32_t npieces)
{
    r->peer_req = f->rreq;
    r->st_bytes = f->len;
    if (RMPI_UNLIKELY(f->h.flags & RMPI_FF_FRAGS))
        rmpi_core_frag_start(r, vc, f->len, f->addr);
    else if (RMPI_UNLIKELY(pieces != NULL))
        rmpi_rndv_push_pieces(r, vc, pieces, npieces, f->rkey, f->nkeys, f->len);
    else
        rmpi_rndv_push(r, vc, f->addr, f->rkey, f->nkeys, f->len);
}

/* ---- posting receives, probe, cancel ---- */

static void consume_unexp(rmpi_req_t *r, rmpi_unexp_t *u)
{
    if (u->is_rts) {
        rndv_start(r, u->vc, u->src, u->tag, u->sreq, u->len, (unsigned)u->gather, u->raddr, u->rkeys, u->nkeys);
    } else {
        set_status(r, u->src, u->tag, u->len);
        copy_out(r, u->data);
        if (u->sync)
            send_req_frame(u->vc, RMPI_F_SYNC_ACK, u->sreq);
        rmpi_req_complete(r);
    }
    ((core_peer_t *)u->vc->core)->unexp_bytes -= unexp_cost(u);
    rmpi_core_unexp_n--;
    unexp_release(u);
}

int rmpi_core_irecv(rmpi_req_t *r)
{
    if (RMPI_UNLIKELY(r->flags & RMPI_RF_TYPED))
        rmpi_core_typed_recv(r);
    ctxq_t *q = rmpi_core_ctxq(r->ctx);
    r->done = 0;
    rmpi_unexp_t *u = unexp_find(q, r->rank, r->tag);
    if (u) {
        unexp_unlink(u);
        consume_unexp(r, u);
        return 0;
    }
    r->flags |= RMPI_RF_POSTED;
    rmpi_list_push_back(&q->posted, &r->link);
    return 0;
}

int rmpi_core_cancel_recv(rmpi_req_t *r)
{
    if (!(r->flags & RMPI_RF_POSTED))
        return 0;
    rmpi_list_remove(&r->link);
    r->flags = (uint16_t)((r->flags & ~RMPI_RF_POSTED) | RMPI_RF_CANCELLED);
    r->st_bytes = 0;
    r->st_err = 0;
    rmpi_req_complete(r);
    return 1;
}

rmpi_unexp_t *rmpi_core_probe_find(uint32_t ctx, int src, int tag) { return unexp_find(rmpi_core_ctxq(ctx), src, tag); }

void rmpi_core_unexp_take(rmpi_unexp_t *u) { unexp_unlink(u); }

void rmpi_core_eager_handler(uint32_t ctx, rmpi_core_eager_fn fn, void *arg)
{
    ctxq_t *q = rmpi_core_ctxq(ctx);
    q->eager_fn = fn;
    q->eager_arg = arg;
}

int rmpi_core_mrecv(rmpi_req_t *r, rmpi_unexp_t *u)
{
    if (RMPI_UNLIKELY(r->flags & RMPI_RF_TYPED))
        rmpi_core_typed_recv(r);
    r->done = 0;
    consume_unexp(r, u);
    return 0;
}
