/*
 * vc: virtual channels. One per peer, made of subchannels (one per rail, later one per
 * stream too). Every frame the core sends starts with rmpi_vc_hdr_t; the VC stamps its
 * packet sequence number (PSN), picks a subchannel, and on receipt delivers frames to the
 * core strictly in PSN order, parking early frames in the out-of-order queue.
 *
 * Who calls: core (send side), net providers through env->on_frame (receive side).
 * Ownership: VCs live from rmpi_vc_init to rmpi_vc_finalize; rails belong to net.
 * Threading: caller holds the library lock. Progress: rmpi_vc_on_frame runs inside
 * rmpi_net_progress and calls the deliver function registered by the core.
 */
#ifndef RMPI_VC_H
#define RMPI_VC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "../net/net.h"
#include "detect.h"
#include "path.h"
#include "sched.h"

#define RMPI_VC_MAX_SUB RMPI_SCHED_MAX

/* First 4 bytes of every frame. type and flags belong to the core. */
typedef struct rmpi_vc_hdr {
    uint16_t psn;
    uint8_t type;
    uint8_t flags;
} rmpi_vc_hdr_t;

typedef struct rmpi_subchan {
    rmpi_rail_t *rail;
    uint64_t frames, bytes; /* sent on this subchannel */
    uint64_t rdma_bytes;
    uint64_t rdma_posted; /* RDMA bytes handed to the rail (the core counts them at post) */
    /* delivery rate of the rail to this peer, measured by rmpi_vc_pick_big while it was busy */
    uint64_t est_t, est_done; /* last sample: time (ns) and bytes delivered by then */
    size_t est_backlog;
    double rate;              /* bytes/ns, 0 until measured */
    rmpi_path_t path;         /* round trip to the peer on this rail (rmpi_vc_on_rtt, acks) */
    uint64_t acks_seen;       /* ACK samples when the kernel's estimate last came */
    rmpi_detect_t det;        /* failure detector (rmpi_vc_watch) */
    uint64_t failures;        /* times this subchannel failed (RMPI_REPORT) */
    uint64_t readmits;        /* times it came back (a new connection) */
    uint64_t rdma_at_up;      /* rdma_bytes when it last came back */
    uint64_t t_down, down_ns; /* when it last failed; time spent down before that */
    rmpi_probe_t probe;       /* tries to connect it again (rmpi_vc_watch) */
    uint8_t epoch;            /* low byte of its connection's epoch (RMPI_VC_RAIL_DOWN) */
} rmpi_subchan_t;

typedef struct rmpi_ooo {
    struct rmpi_ooo *next;
    uint16_t psn;
    size_t len;
    char data[];
} rmpi_ooo_t;

/* A frame sent on a VC with several subchannels, kept until the peer acknowledges its PSN
 * so it can be sent again on a surviving rail if its own rail fails. */
typedef struct rmpi_vc_txbuf {
    struct rmpi_vc_txbuf *next;
    uint16_t psn;
    int sub; /* where it went, and when: the ACK that covers it is a round-trip sample */
    uint64_t t;
    size_t len;
    size_t cap; /* bytes of the frame's room: RMPI_VC_TXBUF_SMALL and _MID ones are reused (txfree, txmid) */
    /* RMPI_VC_TXBUF_ROOM bytes, then the frame: send_bound (vc.c) writes an RMPI_VC_ACKED
     * header into the room and sends header and frame as one piece */
    char data[];
} rmpi_vc_txbuf_t;
#define RMPI_VC_TXBUF_ROOM 4
/* Kept frames up to this size come from, and go back to, a per-VC list of spare buffers
 * (at most RMPI_VC_TXFREE_MAX): a malloc and a free per small frame were a third of what a
 * second rail added to an 8 B ping-pong (callgrind). */
#define RMPI_VC_TXBUF_SMALL 256
#define RMPI_VC_TXFREE_MAX 64
/* Kept frames of RMPI_VC_TXBUF_SMALL..RMPI_VC_TXBUF_MID bytes reuse buffers of that room from
 * a second list of at most RMPI_VC_TXMID_MAX (16 KiB a VC): a 1 KiB ping-pong over two lab
 * rails paid a malloc and a free per message, 460 of the 950 instructions the second rail
 * added (callgrind). Frames up to RMPI_VC_TXBUF_MID take the bound path. */
#define RMPI_VC_TXBUF_MID 2048
#define RMPI_VC_TXMID_MAX 8

/* VC-internal frame type (never delivered to the core): cumulative acknowledgement, psn =
 * the next PSN the sender of the ACK expects. With flags RMPI_VC_ACK_WAKE it also says that
 * its sender now spreads frames over several subchannels (it woke a spare stream): the
 * receiver acknowledges from then on. */
#define RMPI_VC_ACK 0xff
#define RMPI_VC_ACK_WAKE 0x01
/* VC-internal frame type: a bundle of whole frames, each with its own PSN (coalescing, seed
 * infiniband-wan 3.4): after the 4-byte header (psn unused, flags 0), records of u32 length
 * (LE) and that many bytes of one frame; at least one record. The receiver takes each frame
 * as if it had come alone. */
#define RMPI_VC_BUNDLE 0xfe
/* Largest bundle: a few records of small messages; far below every rail's max_frame. */
#define RMPI_VC_BUNDLE_MAX ((size_t)16384)
#define RMPI_VC_ACK_EVERY 32
/* While the answers carry the acknowledgements (the peer's frames answered within half a
 * block of RMPI_VC_ACK_EVERY), an ACK frame of its own frees nothing the next answer would
 * not, and is only a round-trip sample: one goes at a due multiple at most every
 * RMPI_VC_ACK_SAMPLE_NS. In an 8 B ping-pong over two lab rails each was a system call on
 * the answer's path (sent before it) every 32 frames, and a read at the other end. */
#define RMPI_VC_ACK_SAMPLE_NS 10000000u
/* VC-internal: the sender stopped using one of its subchannels to us (psn = its index,
 * flags = the low byte of that connection's epoch), sent on a live one before anything it
 * moves off the failed one, so we stop reading the old connection before the moved data can
 * complete a request whose memory the old one could still write. */
#define RMPI_VC_RAIL_DOWN 0xfd
/* VC-internal: an acknowledgement carried in front of a frame going the other way (psn = the
 * next PSN its sender expects, as in RMPI_VC_ACK; flags 0), followed by one whole core frame
 * with its own header and PSN, taken as if it had come alone. Traffic in both directions
 * (a ping-pong, a reply) then acknowledges every frame without an ACK frame of its own and
 * frees the kept copies at once. Only frames of at most RMPI_VC_BUNDLE_MAX bytes carry one,
 * so the 4 more bytes never push a frame past a rail's max_frame. */
#define RMPI_VC_ACKED 0xfc

typedef struct rmpi_vc rmpi_vc_t;
struct rmpi_vc {
    int peer;
    int nsub;
    /* frames of at least this many bytes go to rmpi_vc_pick_big */
    size_t big_frame;
    int nup;      /* live subchannels (not failed, not asleep): several keep frames and pick */
    int nspare;   /* spare streams still asleep (rmpi_vc_streams may wake them) */
    int ack_peer; /* the peer sends on several subchannels: acknowledge its frames */
    /* rmpi_vc_tx_update: 0 one live subchannel, the first, no coalescing (straight to the
     * rail); else rmpi_vc_send_slow, by the bits RMPI_VC_TX_* (below) */
    int tx_slow;
    int tx_sub;
    int coal; /* small frames may be held for a bundle (rmpi_vc_set_coal) */
    /* Frames held for a bundle (rmpi_vc_hold): stamped, not yet sent; any other frame to
     * the peer sends them first (rmpi_vc_flush), so PSN order is issue order on the wire. */
    unsigned held_n;
    int held_sub;
    size_t held_len;  /* bytes of held (header and records) */
    uint64_t held_t0; /* when the first was held (ns) */
    char *held;       /* RMPI_VC_BUNDLE_MAX bytes, allocated on first use */
    uint64_t bundles_out, bundled_frames, bundles_in;
    uint16_t psn_next;   /* next PSN this side sends */
    uint16_t psn_expect; /* next PSN to deliver */
    rmpi_subchan_t sub[RMPI_VC_MAX_SUB];
    rmpi_sched_t sched;                       /* subchannel choice for frames and stripes */
    rmpi_ooo_t *ooo;                          /* early frames, sorted by PSN */
    rmpi_vc_txbuf_t *unacked, **unacked_tail; /* several subchannels only */
    uint64_t unacked_n, resent_frames;
    uint64_t nudges;                 /* ACKs sent on the other rails for a stalled one (rmpi_detect_nudge) */
    uint16_t ack_sent;               /* psn_expect when we last acknowledged */
    uint16_t ack_plain;              /* psn_expect at our last ACK frame of its own (not carried) */
    uint64_t ack_plain_t;            /* when it went (ns); 0: none yet */
    uint64_t acks_out, acks_carried; /* ACK frames sent; acknowledgements carried by frames */
    rmpi_vc_txbuf_t *txfree;         /* spare small buffers for kept frames */
    unsigned txfree_n;
    rmpi_vc_txbuf_t *txmid; /* spare buffers of RMPI_VC_TXBUF_MID bytes */
    unsigned txmid_n;
    uint64_t ooo_frames, dup_frames, frames_in;
    /* Frames sent / delivered in PSN order since the VC began: the unwrapped PSN, which
     * names one frame on both sides (a send's cancel names its message by it). */
    uint64_t tx_frames, rx_frames;
    int cut;            /* the peer sent a malformed frame: nothing it sends is read any more */
    size_t ooo_bytes;   /* memory held by the out-of-order queue (rmpi_vc_ooo_max) */
    uint64_t big_t;     /* last rmpi_vc_pick_big: its rails' rates are sampled by the watch too */
    int watched;        /* in the failure detector's list (rmpi_vc_watch) */
    double tuned_rates; /* live count and summed rates at the last re-tuning by an RTT sample */
    void *core;         /* the core's per-peer state */
};

typedef void (*rmpi_vc_deliver_fn)(rmpi_vc_t *vc, const void *frame, size_t len);

/* Placement of a frame's payload (net env->frame_dst): the core's answer for a frame due
 * next, of len bytes of which hlen are at frame: where bytes [*off, len) go, or NULL. Once
 * they are there, placed(vc, frame's first off bytes, off, len) finishes the frame. */
typedef void *(*rmpi_vc_place_fn)(rmpi_vc_t *vc, const void *frame, size_t hlen, size_t len, size_t *off);
typedef void (*rmpi_vc_placed_fn)(rmpi_vc_t *vc, const void *head, size_t off, size_t len);
void rmpi_vc_set_place(rmpi_vc_place_fn place, rmpi_vc_placed_fn placed);
void *rmpi_vc_frame_dst(rmpi_rail_t *rail, int peer, const void *head, size_t hlen, size_t len, size_t *off);
void rmpi_vc_on_frame_placed(rmpi_rail_t *rail, int peer, const void *head, size_t off, size_t len);

/* core_size: bytes of zeroed per-peer space for the core, reached through vc->core. */
int rmpi_vc_init(int rank, int size, rmpi_vc_deliver_fn deliver, size_t core_size);
void rmpi_vc_finalize(void);

/* Room for peers 0..n-1 (dynamic peers added by net extend the world's table). */
void rmpi_vc_grow(int n);
/* The VC of a peer, built on first use from the rails that reach it. */
rmpi_vc_t *rmpi_vc_open(int peer);
extern rmpi_vc_t **rmpi_vc_table;
static inline rmpi_vc_t *rmpi_vc_get(int peer)
{
    rmpi_vc_t *vc = rmpi_vc_table[peer];
    return RMPI_LIKELY(vc != NULL) ? vc : rmpi_vc_open(peer);
}

void rmpi_vc_keep(rmpi_vc_t *vc, int sub, const struct iovec *iov, int n, size_t len);

/* Send the held frames now: one bundle (a lone frame as itself). */
void rmpi_vc_flush(rmpi_vc_t *vc);
/* Like rmpi_vc_send, but the frame (len <= RMPI_VC_BUNDLE_MAX - 8) may wait, stamped, to
 * leave in one bundle with the frames held after it until rmpi_vc_flush (the caller's
 * policy: the core's coalescing) or until any other frame goes to the peer. */
void rmpi_vc_hold(rmpi_vc_t *vc, const struct iovec *iov, int n, size_t len);

/* Send one frame on subchannel `sub` (iov[0] begins with rmpi_vc_hdr_t; the VC fills psn). */
/* The next PSN into the frame's header, counted as sent on subchannel sub. */
static inline rmpi_subchan_t *rmpi_vc_stamp(rmpi_vc_t *vc, int sub, const struct iovec *iov, size_t len)
{
    rmpi_vc_hdr_t *h = (rmpi_vc_hdr_t *)iov[0].iov_base;
    h->psn = vc->psn_next++;
    vc->tx_frames++;
    rmpi_subchan_t *sc = &vc->sub[sub];
    sc->frames++;
    sc->bytes += len;
    return sc;
}

/* Frames of at least this many bytes on a VC of several subchannels: rmpi_vc_pick_big. */
extern size_t rmpi_vc_big_frame;

/* Send a small frame with the acknowledgement of the peer's frames in front of it
 * (RMPI_VC_ACKED). */
void rmpi_vc_send_acked(rmpi_vc_t *vc, rmpi_subchan_t *sc, const struct iovec *iov, int n);

static inline void rmpi_vc_send_on(rmpi_vc_t *vc, int sub, const struct iovec *iov, int n, size_t len)
{
    if (RMPI_UNLIKELY(vc->held_n))
        rmpi_vc_flush(vc);
    rmpi_subchan_t *sc = rmpi_vc_stamp(vc, sub, iov, len);
    if (RMPI_UNLIKELY(vc->nup > 1))
        rmpi_vc_keep(vc, sub, iov, n, len);
    if (RMPI_UNLIKELY(vc->ack_peer) && vc->psn_expect != vc->ack_sent && len <= RMPI_VC_BUNDLE_MAX) {
        rmpi_vc_send_acked(vc, sc, iov, n);
        return;
    }
    sc->rail->ops->send(sc->rail, vc->peer, iov, n);
}

/* Frames of at least this many bytes on a VC of several subchannels: rmpi_vc_pick_big
 * (RMPI_BIG_FRAME; a VC takes at most half its rails' smallest largest frame, vc.big_frame). */
extern size_t rmpi_vc_big_frame;
/* The live subchannel expected to deliver len more bytes first: least (backlog + len) /
 * weight, the backlog as its rail reports it; the small-frame policy's pick when a rail
 * cannot tell. */
int rmpi_vc_pick_big(rmpi_vc_t *vc, size_t len);

/* Everything rmpi_vc_send(_small) does besides the one-rail case: the subchannel choice,
 * keeping frames, held frames, coalescing (may_hold: the frame may wait for a bundle). */
void rmpi_vc_send_slow(rmpi_vc_t *vc, const struct iovec *iov, int n, size_t len, int may_hold);
/* vc->tx_slow, bits: GENERIC: the subchannel choice, keeping, held frames (no bound pick);
 * BOUND: small frames bound to one of several live subchannels: rmpi_vc_send_slow sends a
 * frame of at most RMPI_VC_TXBUF_MID bytes stamped, kept for resending and as one piece
 * from the kept copy, the acknowledgement for the peer in front; COAL: coalescing is on, the
 * hold policy is asked first (with neither of the others: one live subchannel, the first). */
#define RMPI_VC_TX_GENERIC 1
#define RMPI_VC_TX_BOUND 2
#define RMPI_VC_TX_COAL 4
/* Recompute vc->tx_slow after nup, held_n, coal or a subchannel's state changed. */
void rmpi_vc_tx_update(rmpi_vc_t *vc);
/* Coalescing policy (the core's): whether a frame of len bytes that may wait should be held
 * on vc (rmpi_vc_hold) rather than sent; asked only while vc->coal is set. */
extern int (*rmpi_vc_hold_policy)(rmpi_vc_t *vc, size_t len);
/* Turn coalescing on or off for vc (frames already held stay until flushed). */
void rmpi_vc_set_coal(rmpi_vc_t *vc, int on);

/* One live subchannel, the first, and nothing held: one test, then straight to the rail
 * (the shared-memory path); anything else takes rmpi_vc_send_slow. The bound case's test
 * stays out of line too: in it, the inline body grew enough that the compiler stopped
 * inlining the core's eager send, 26 instructions more per 8 B message on one rail. */
static inline __attribute__((always_inline)) void rmpi_vc_send_frame(rmpi_vc_t *vc, const struct iovec *iov, int n,
                                                                     size_t len, int may_hold)
{
    if (RMPI_UNLIKELY(vc->tx_slow)) {
        rmpi_vc_send_slow(vc, iov, n, len, may_hold);
        return;
    }
    rmpi_subchan_t *sc = rmpi_vc_stamp(vc, 0, iov, len);
    sc->rail->ops->send(sc->rail, vc->peer, iov, n);
}

/* Send one frame on the subchannel the small-message policy picks (large frames: the one
 * expected to deliver them first). */
static inline void rmpi_vc_send(rmpi_vc_t *vc, const struct iovec *iov, int n, size_t len)
{
    rmpi_vc_send_frame(vc, iov, n, len, 0);
}

/* The same for a frame that may wait to be coalesced with the ones after it (a small eager
 * message: its order among the peer's frames is kept, its departure may be delayed). */
static inline void rmpi_vc_send_small(rmpi_vc_t *vc, const struct iovec *iov, int n, size_t len)
{
    rmpi_vc_send_frame(vc, iov, n, len, 1);
}

/* Rendezvous data over the VC's subchannels, by the striping policy (the scheduler's rules
 * are in the vc-private sched.h; the core reaches them only through these). Cut [0, len)
 * into at most max stripes (returns how many; 0 when no subchannel is live); report each
 * stripe delivered with rmpi_vc_stripe_done; a stripe whose rail failed moves to the
 * subchannel the small-frame policy picks; the delivery times (ns since each stripe was cut)
 * feed adaptive striping. */
/* Before cutting stripes this side will push (RDMA writes leave through this side's
 * providers): tell the scheduler what each live rail still holds (its backlog), so the cut
 * sees the queues as they are, not as the completions that have come back say. Stripes the
 * peer reads move through its providers, which only it sees. */
void rmpi_vc_stripe_seen(rmpi_vc_t *vc);
static inline int rmpi_vc_stripe(rmpi_vc_t *vc, size_t len, rmpi_stripe_t *out, int max)
{
    return rmpi_sched_stripe(&vc->sched, len, out, max);
}
static inline void rmpi_vc_stripe_done(rmpi_vc_t *vc, const rmpi_stripe_t *st)
{
    rmpi_sched_stripe_done(&vc->sched, st);
}
static inline void rmpi_vc_stripe_move(rmpi_vc_t *vc, rmpi_stripe_t *st)
{
    rmpi_sched_stripe_move(&vc->sched, st, rmpi_sched_small(&vc->sched));
}
void rmpi_vc_streams(rmpi_vc_t *vc);
static inline void rmpi_vc_stripe_feedback(rmpi_vc_t *vc, const rmpi_stripe_t *st, int n, const uint64_t *t_ns)
{
    rmpi_sched_feedback(&vc->sched, st, n, t_ns);
    if (RMPI_UNLIKELY(vc->nspare))
        rmpi_vc_streams(vc);
}

/* The smallest frame a VC sends from the caller's memory (rmpi_vc_send_zc); SIZE_MAX: none.
 * Only VCs of one live subchannel (the first): with several, every frame is copied for
 * resending anyway. */
static inline size_t rmpi_vc_zc_min(const rmpi_vc_t *vc)
{
    const rmpi_rail_t *rail = vc->sub[0].rail;
    return vc->nup == 1 && vc->sched.up[0] && rail->ops->send_zc && rail->hints.zc_min ? rail->hints.zc_min : SIZE_MAX;
}

/* A frame of len >= rmpi_vc_zc_min(vc) bytes whose iov[1..n) the provider reads until op
 * completes (iov[0]: the VC/core header, copied; n <= RMPI_NET_ZC_IOV). */
static inline void rmpi_vc_send_zc(rmpi_vc_t *vc, const struct iovec *iov, int n, size_t len, rmpi_net_op_t *op)
{
    if (RMPI_UNLIKELY(vc->held_n))
        rmpi_vc_flush(vc);
    rmpi_subchan_t *sc = rmpi_vc_stamp(vc, 0, iov, len);
    sc->rail->ops->send_zc(sc->rail, vc->peer, iov, n, op);
}

static inline rmpi_rail_t *rmpi_vc_rail(rmpi_vc_t *vc, int sub) { return vc->sub[sub].rail; }

/* A subchannel's rail broke or stalled: stop using it and send every unacknowledged frame
 * again on the others. Returns the number of live subchannels left (0: the peer is lost). */
int rmpi_vc_rail_failed(rmpi_vc_t *vc, int sub, const char *why);
/* The failure detector (detect.h): VCs of several subchannels whose rails all offer
 * watch/abandon are looked at every RMPI_VC_WATCH_NS of progress; a subchannel that waits
 * for acknowledgement longer than RMPI_RAIL_FAIL_RTO round-trip timeouts (at least
 * RMPI_RAIL_FAIL_MIN) while another moves is failed and its connection abandoned.
 * rmpi_vc_nwatch: how many such VCs exist (the core calls rmpi_vc_watch only then, so a
 * job of single-rail peers pays one load per progress call). */
#define RMPI_VC_WATCH_NS 5000000u
extern int rmpi_vc_nwatch;
void rmpi_vc_watch(void);
/* net env->on_peer_up target: a connection of rail to peer was established with epoch (the
 * first, or one that replaces a lost one): a failed subchannel is used again, its striping
 * weights and rates learned anew. */
void rmpi_vc_on_up(rmpi_rail_t *rail, int peer, uint32_t epoch);
/* Index of rail in vc's subchannels, -1 if none. */
int rmpi_vc_sub_of(const rmpi_vc_t *vc, const rmpi_rail_t *rail);

/* net env->on_frame target. Frames may start at any address (a provider delivers them
 * where they lie in its receive buffer): the VC and the core read them with memcpy. */
void rmpi_vc_on_frame(rmpi_rail_t *rail, int peer, const void *frame, size_t len);

/* The peer sent a frame that breaks docs/wire/core.md: from now on nothing it sends reaches
 * the core (its frames are dropped unread), and rmpi_vc_on_cut reports it (the core's
 * policy; it may end the job). why: a sentence naming what was wrong. */
void rmpi_vc_cut(rmpi_vc_t *vc, const char *why);
extern void (*rmpi_vc_on_cut)(rmpi_vc_t *vc, const char *why);
/* Most memory a peer's early frames may hold in the out-of-order queue; past it the peer is
 * cut off (the core sets it from RMPI_UNEXP_MAX; SIZE_MAX: no bound). */
extern size_t rmpi_vc_ooo_max;

/* ---- path measurements (seed: infiniband-wan) ----
 * Per subchannel: round trips from the provider (env->on_rtt: its handshake, the kernel's
 * estimate) and, on VCs of several subchannels, from the VC's own ACKs (a frame's send time
 * to the ACK that covers it, when both went on the same rail); delivery rates from the
 * completion filter (sched.rate) and from busy intervals (rmpi_subchan_t.rate). */
void rmpi_vc_on_rtt(rmpi_rail_t *rail, int peer, uint64_t rtt_ns, int src);
/* Called after a subchannel's round-trip estimate changed (the core re-tunes its threshold). */
extern void (*rmpi_vc_on_path)(rmpi_vc_t *vc);
/* The peer's round trip without queueing, in ns: the smallest path base (rmpi_path_base)
 * over the live subchannels measured by more than their handshake (which includes the
 * peer's delay); 0: none yet. Not SRTT: under bulk load SRTT holds the queues (measured at
 * 1gbit@2ms: 4.1 ms path, SRTT 6-12 ms, single ACK samples up to 36 ms), and on a loaded
 * LAN it would cross the 100 us below which thresholds must not move. */
double rmpi_vc_rtt(const rmpi_vc_t *vc);
/* Parallel streams (seed infiniband-wan, 3.4): a rail's spare streams (hints.spare, the
 * subchannels right after it) start asleep; after each striped message's feedback and each
 * round-trip update, a rail whose measured bandwidth-delay product exceeds what its live
 * streams' windows carry (rmpi_path_streams) gets spares woken, and the peer is told to
 * acknowledge (RMPI_VC_ACK_WAKE). Declared above rmpi_vc_stripe_feedback. */
/* Streams in use and opened on the rail of subchannel `sub` (its group: the rail and its
 * spares); for reports and tests. */
void rmpi_vc_stream_count(const rmpi_vc_t *vc, int sub, int *live, int *total);
/* Delivery rates, bytes/ns, for the eager/rendezvous crossover. A rail and the further
 * streams over its path (hints.stream > 0) are one rail, its rate their sum. *one: what one
 * message left whole on one subchannel gets on the fastest rail (with several live streams
 * at most one stream's window per round trip); *all: every live rail together. On a VC of
 * one rail a stream not measured yet counts at its window bound; otherwise both are 0 when
 * some live subchannel has no measurement yet. Returns the number of rails with a live
 * subchannel. */
int rmpi_vc_rates(const rmpi_vc_t *vc, double *one, double *all);

/* For RMPI_REPORT and tests. */
void rmpi_vc_report(void *file);
/* RMPI_REPORT=json's "connections" key (", " first): per peer and subchannel whose provider
 * has facts about the connection (tcp: its congestion control, the choice and the round trip
 * it came from), the same facts rmpi_vc_report's "connection" lines print. */
void rmpi_vc_report_json(void *file);
/* The per-peer and per-rail counters rmpi_vc_report prints, summed over every other peer
 * (MPI_T performance variables). Monotonic over the process's life: what finalized channels had
 * counted stays in the sums. */
typedef struct rmpi_vc_totals {
    uint64_t frames_in, ooo_frames, dup_frames, resent_frames, adapt_updates;
    uint64_t frames_out, frame_bytes, rdma_bytes;
} rmpi_vc_totals_t;
void rmpi_vc_totals(rmpi_vc_totals_t *t);

#endif
