/* core private declarations: wire format (docs/wire/core.md), per-peer state, queues. */
#ifndef RMPI_CORE_IMPL_H
#define RMPI_CORE_IMPL_H

#include "core.h"
#include "../chan/select.h" /* the receive statistics of channel selection */

/* Frame types (rmpi_vc_hdr_t.type). Version 2 of docs/wire/core.md. */
enum {
    RMPI_F_EAGER = 1,   /* full header: ctx, src, tag [, sreq if SYNC] + payload */
    RMPI_F_EAGER_SHORT, /* cached header: payload only */
    RMPI_F_RTS,         /* rendezvous request to send */
    RMPI_F_CTS,         /* clear to send (write mode) */
    RMPI_F_FIN,         /* rendezvous data is in place / has been read */
    RMPI_F_SYNC_ACK,    /* a synchronous send was matched */
    RMPI_F_CANCEL,      /* withdraw an unmatched message (MPI_Cancel of a send) */
    RMPI_F_CANCEL_ACK,  /* the answer: count 1 withdrawn, 0 already matched */
    RMPI_F_DATA,        /* rendezvous data as a frame (CTS with FRAGS): receiver's id, offset, bytes */
    RMPI_F_CREDIT,      /* the receiver allows DATA up to a message offset */
};
#define RMPI_FF_SYNC 1
#define RMPI_FF_GATHER 2 /* RTS: the data is a segment list; the receiver must answer with a CTS */
#define RMPI_FF_PIECES 4 /* CTS: the receiver's memory is in pieces, listed after the rkeys */
#define RMPI_FF_FRAGS 8  /* RTS: data in short pieces, answer with CTS FRAGS; CTS: send DATA frames */
/* Most pieces a CTS may list (else the receiver asks for DATA frames and scatters them). */
#define RMPI_CTS_PIECES_MAX 256

/* One piece of the receiver's memory in a CTS with PIECES (after wire_cts_pieces_t). */
typedef struct rmpi_rndv_piece {
    uint64_t addr, len;
} rmpi_rndv_piece_t;

typedef struct wire_match {
    rmpi_vc_hdr_t h;
    uint32_t ctx;
    int32_t src, tag;
} wire_match_t;

/* RTS and CTS carry one rkey per subchannel (the buffer is registered on every rail). */
typedef struct wire_rts {
    wire_match_t m;
    uint64_t sreq, len, addr;
    uint32_t nkeys, pad;
    uint64_t rkey[RMPI_VC_MAX_SUB];
} wire_rts_t;

typedef struct wire_cts {
    rmpi_vc_hdr_t h;
    uint32_t nkeys;
    uint64_t sreq, rreq, addr, len;
    uint64_t rkey[RMPI_VC_MAX_SUB];
} wire_cts_t;

/* Follows the nkeys rkeys of a CTS with PIECES; then n rmpi_rndv_piece_t. */
typedef struct wire_cts_pieces {
    uint32_t n, pad;
} wire_cts_pieces_t;

/* FIN: count = how many FINs (one per subchannel that carried data) complete req. */
typedef struct wire_req {
    rmpi_vc_hdr_t h;
    uint32_t count;
    uint64_t req;
} wire_req_t;

/* DATA: message bytes [off, off + payload) for the receiver's request req; CREDIT: the
 * sender's request req may send DATA up to message offset `at`. */
typedef struct wire_frag {
    rmpi_vc_hdr_t h;
    uint32_t pad;
    uint64_t req, at;
} wire_frag_t;

/* CANCEL: the message is the one whose first frame had unwrapped PSN seq on this VC. */
typedef struct wire_cancel {
    rmpi_vc_hdr_t h;
    uint32_t ctx;
    uint64_t seq, req;
} wire_cancel_t;

#define RMPI_WIRE_KEYS_LEN(type, n) (offsetof(type, rkey) + (size_t)(n) * sizeof(uint64_t))

/* Per-peer core state, lives right after the VC (rmpi_vc_t.core). */
typedef struct core_peer {
    uint32_t tx_ctx, rx_ctx;
    int32_t tx_src, tx_tag, rx_src, rx_tag;
    int tx_valid, ready;
    int rx_valid;       /* an EAGER frame set rx_*: EAGER_SHORT may follow */
    size_t unexp_bytes; /* memory held by this peer's unexpected messages (RMPI_UNEXP_MAX) */
    int rndv_write;     /* this peer's rendezvous pushes data (CTS + RDMA write) */
    int no_writes;      /* a rail to this peer lingers (net.h): never invite a write */
    int rndv_far_read;  /* write mode by default, read once the round trip is long (rmpi_core_wan_tune) */
    size_t eager_limit;
    size_t eager_base;   /* RMPI_EAGER_LIMIT's value for this peer; eager_limit when not tuned */
    size_t eager_max;    /* largest eager message the rails carry */
    int eager_auto;      /* RMPI_WAN_TUNE follows the peer's round trip (rmpi_core_wan_limit) */
    int seg_max;         /* data segments of a non-contiguous eager send (RMPI_SEG_MAX, rails' max_iov) */
    size_t frag_size;    /* payload of a DATA frame (RMPI_FRAG_SIZE for the peer's scope, within a frame) */
    size_t seg_min;      /* pieces this long on average move one RDMA op each (RMPI_RNDV_SEG_MIN, rails' kind) */
    size_t zc_min;       /* nonblocking eager sends of this many bytes on go from the user's buffer */
    int coal_ok;         /* coalescing may apply: between nodes, RMPI_WAN_TUNE, RMPI_COALESCE_WAIT > 0 */
    int coal_far;        /* round trip at least RMPI_CORE_COAL_RTT waits: hold while the link is busy;
                          else (near) hold only while this process runs behind its input */
    rmpi_req_t *placing; /* matched receive an eager frame's payload is being read into (rmpi_core_place) */
} core_peer_t;

/* Posted and unexpected queues of one context. Every unexpected message is also on the list
 * of its source's bucket (by_src[src % CTXQ_SRC_BUCKETS], through its slink), in arrival
 * order too: a receive from one source walks that list alone, not every other source's
 * messages (a Gather's root whose 3 senders ran hundreds of calls ahead spent 92% of its
 * time walking the one list). MPI_ANY_SOURCE walks unexp, the order of all. */
#define CTXQ_SRC_BUCKETS 32
typedef struct ctxq {
    rmpi_list_t posted, unexp;
    rmpi_list_t by_src[CTXQ_SRC_BUCKETS];
    rmpi_core_eager_fn eager_fn; /* takes eager messages where they land (rmpi_core_eager_handler) */
    void *eager_arg;
} ctxq_t;

/* Queues by context id. The table grows only for ids this process uses itself (posting,
 * probing): a frame names any 32-bit id, and one for an id beyond the table waits in the
 * early list (core_proto.c) until this process creates that context's queues. */
extern ctxq_t **rmpi_ctxq;
extern size_t rmpi_nctxq;
ctxq_t *rmpi_core_ctxq_grow(uint32_t ctx);
static inline ctxq_t *rmpi_core_ctxq(uint32_t ctx)
{
    if (RMPI_LIKELY(ctx < rmpi_nctxq && rmpi_ctxq[ctx]))
        return rmpi_ctxq[ctx];
    return rmpi_core_ctxq_grow(ctx);
}

/* Request ids on the wire (core_frame.c): a frame names a request of this process by the id
 * it was given, (generation << 32) | (slot + 1) in a table, never by its address. The id
 * admits only the frame types in `want` (RMPI_WANT_*), only from the peer of vc, and dies
 * with the request's last frame (or at release). */
enum {
    RMPI_WANT_CTS = 1,
    RMPI_WANT_FIN = 2,
    RMPI_WANT_SYNC_ACK = 4,
    RMPI_WANT_CANCEL_ACK = 8,
    RMPI_WANT_DATA = 16,
    RMPI_WANT_CREDIT = 32
};
uint64_t rmpi_core_wire_id(rmpi_req_t *r, rmpi_vc_t *vc, unsigned want);
/* r's live id also admits the frame types in want. */
void rmpi_core_wire_want(rmpi_req_t *r, unsigned want);
/* Receiver: withdraw the unexpected message of vc's peer whose first frame had unwrapped
 * PSN seq on context ctx; 1 when found (nothing of it remains), 0 when already matched. */
int rmpi_core_unexp_withdraw(rmpi_vc_t *vc, uint32_t ctx, uint64_t seq);
/* Rendezvous registrations of a send withdrawn before any CTS or read (core_rndv.c). */
void rmpi_rndv_drop(rmpi_req_t *r);
void rmpi_core_wire_id_free(rmpi_req_t *r);
void rmpi_core_wire_finalize(void);

/* Most memory one peer's unexpected messages may hold (RMPI_UNEXP_MAX; SIZE_MAX: no bound). */
extern size_t rmpi_core_unexp_max;
/* Frees the unexpected messages nobody received (MPI_Finalize). */
void rmpi_core_unexp_finalize(void);

/* RMPI_RNDV_MODE: 0 auto (per peer: read over native RDMA, write over emulated), 1 read, 2 write */
extern int rmpi_rndv_mode, rmpi_hdr_cache;

/* Rendezvous data movement over the subchannels (core_rndv.c). */
typedef struct rmpi_rndv rmpi_rndv_t;
/* Register [buf, len) on every subchannel of vc; rkeys[i] names it on subchannel i. */
void rmpi_rndv_register(rmpi_req_t *r, rmpi_vc_t *vc, void *buf, size_t len, uint64_t *rkeys);
/* Receiver, read mode: pull n bytes from the sender's (raddr, rkeys) in stripes; FINs and
 * completion follow when every stripe is in. */
void rmpi_rndv_pull(rmpi_req_t *r, rmpi_vc_t *vc, uint64_t raddr, const uint64_t *rkeys, uint32_t nkeys, size_t n);
/* Sender, write mode: push n bytes to the receiver's (raddr, rkeys) in stripes. */
void rmpi_rndv_push(rmpi_req_t *r, rmpi_vc_t *vc, uint64_t raddr, const uint64_t *rkeys, uint32_t nkeys, size_t n);
/* Write mode toward a receiver whose memory is in pieces (CTS with PIECES): np pieces
 * (rmpi_rndv_piece_t, at any alignment: they lie in the frame) in message order, inside the
 * range its rkeys register, covering at least n bytes. r must be an RMPI_RF_SEGS send. */
void rmpi_rndv_push_pieces(rmpi_req_t *r, rmpi_vc_t *vc, const void *p, uint32_t np, const uint64_t *rkeys,
                           uint32_t nkeys, size_t n);
/* A FIN for r arrived (count: FINs that complete it, 1..RMPI_VC_MAX_SUB). -1 when count
 * disagrees with the earlier FINs of r (nothing changes then), else 0. */
int rmpi_rndv_fin(rmpi_req_t *r, uint32_t count);
/* Frees the kept rendezvous states and those of requests that never completed
 * (MPI_Finalize, after rmpi_net_close). */
void rmpi_rndv_finalize(void);
void rmpi_core_send_fin(rmpi_vc_t *vc, int sub, uint64_t req, uint32_t count);
/* The one place frames enter the core (core_frame.c, the VC's deliver function): every
 * field is checked before anything acts on it; a frame that breaks docs/wire/core.md cuts
 * the peer off (rmpi_vc_cut). frame may lie at any alignment. */
void rmpi_core_deliver(rmpi_vc_t *vc, const void *frame, size_t len);
/* The VC's placement hooks (rmpi_vc_set_place): an eager frame whose receive is posted has
 * its payload read straight into the receive's buffer. */
void *rmpi_core_place(rmpi_vc_t *vc, const void *frame, size_t hlen, size_t len, size_t *off);
void rmpi_core_placed(rmpi_vc_t *vc, const void *head, size_t off, size_t len);
/* What the frame layer hands the protocols, every field checked (core_proto.c). */
void rmpi_core_eager_arrived(rmpi_vc_t *vc, uint32_t ctx, int src, int tag, const char *data, size_t len, int sync,
                             uint64_t sreq);
void rmpi_core_rts_arrived(rmpi_vc_t *vc, const wire_rts_t *f);
void rmpi_core_cts_arrived(rmpi_vc_t *vc, rmpi_req_t *r, const wire_cts_t *f, const void *pieces, uint32_t npieces);
void rmpi_core_peer_init(rmpi_vc_t *vc);

/* Rendezvous by DATA frames (core_frag.c): the pipelined pack of Sec. 3.2's alternatives
 * for data in short pieces. The receiver grants credit for RMPI_CORE_FRAG_WINDOW
 * fragments of the peer's frag_size bytes at a time; the sender gathers each fragment
 * from the user's pieces (or packs it into one reused fragment buffer when it has more
 * pieces than the rail gathers) and the receiver scatters each as it arrives. */
#define RMPI_CORE_FRAG_WINDOW 4
/* Receiver: a matched RTS is answered with CTS FRAGS (every field of r's status set). */
void rmpi_core_frag_cts(rmpi_req_t *r, rmpi_vc_t *vc);
/* Sender: the receiver's CTS FRAGS (len bytes wanted, credit up to `at`) or a CREDIT. */
void rmpi_core_frag_start(rmpi_req_t *r, rmpi_vc_t *vc, size_t len, size_t at);
void rmpi_core_frag_credit(rmpi_req_t *r, size_t at);
/* Receiver: n bytes of DATA for r at offset r->frag_done (checked: within the credit). */
void rmpi_core_frag_data(rmpi_req_t *r, const char *data, size_t n);
void rmpi_core_frag_finalize(void);
/* RMPI_WAN_TUNE: the eager limit for a peer at round trip rtt_ns whose rails deliver one
 * (the fastest) and all (together) bytes/ns (0: unknown), from the limit base the knob
 * gives, bounded by the receiver's unexpected-message budget unexp_max and by max_frame.
 * base itself below WAN_RTT_MIN_NS. Pure (tests/unit/core/wan_limit.c). */
size_t rmpi_core_wan_limit(size_t base, double rtt_ns, double one, double all, size_t unexp_max, size_t max_frame);
/* Re-tune vc's eager limit from its path measurements (rmpi_vc_on_path). */
void rmpi_core_wan_tune(rmpi_vc_t *vc);

/* Coalescing (seed infiniband-wan, 3.4; core_proto.c): an eager frame of at most
 * RMPI_CORE_COAL_SMALL bytes to a peer on another node (coal_ok), held by the VC
 * (rmpi_vc_hold) for at most RMPI_COALESCE_WAIT, leaves in one bundle with the ones after
 * it; any other frame to the peer sends them first. A far peer's (round trip at least
 * RMPI_CORE_COAL_RTT times the wait) is held while its rail still holds earlier bytes for
 * it; a near peer's only while this process runs behind its input (unexpected messages
 * queued: it forwards what arrived in bundles, e.g. a site leader's Bcast hop inside its
 * site), and those leave as soon as it has caught up or a wait finds nothing to do. A
 * progress hook sends what waited long enough while any VC holds frames;
 * rmpi_core_coal_poll(1) sends everything (finalize), rmpi_core_coal_idle the near ones. */
#define RMPI_CORE_COAL_SMALL ((size_t)2048)
#define RMPI_CORE_COAL_RTT 20
void rmpi_core_coal_poll(int all);
/* Messages queued unexpected (early ones included): more than 0 means this process runs
 * behind what its peers sent. */
extern size_t rmpi_core_unexp_n;
/* Some VC may hold frames for a near peer (rmpi_core_coal_idle has work). */
extern int rmpi_core_coal_near;
void rmpi_core_coal_idle(void);

/* Typed data (core_data.c): the protocol choice for data that is not one byte range. */
/* The smallest of RMPI_RNDV_SEG_MIN's values: a typed receive posted before its sender is
 * known keeps its pieces when they may be long enough for some peer (rmpi_core_long_pieces
 * decides at the match). */
extern size_t rmpi_core_seg_min;
/* r's pieces are long enough to move one RDMA op each to or from cp's peer. */
int rmpi_core_long_pieces(const rmpi_req_t *r, const core_peer_t *cp);
/* rmpi_core_isend of an RMPI_RF_TYPED request: a segment list, pieces or a packed copy. */
int rmpi_core_typed_send(rmpi_req_t *r);
/* Before an RMPI_RF_TYPED receive is posted or matched: scatter, pieces when long. */
void rmpi_core_typed_recv(rmpi_req_t *r);
/* An RMPI_RF_TYPED request completes: its packed copy goes. */
void rmpi_core_typed_done(rmpi_req_t *r);
/* RMPI_RF_SCATTER: deliver n message bytes (frame, unexpected copy, landing buffer). */
/* Unpack n stream bytes from data into r's typed buffer, from stream offset off. */
void rmpi_core_scatter_at(rmpi_req_t *r, const void *data, size_t n, size_t off);
static inline void rmpi_core_scatter(rmpi_req_t *r, const void *data, size_t n) { rmpi_core_scatter_at(r, data, n, 0); }
/* RMPI_RF_SEGS: the pieces of the user's memory holding message bytes [off, off + len),
 * at most max of them; how many (they may cover less than len). */
int rmpi_core_segs(rmpi_req_t *r, size_t off, size_t len, struct iovec *iov, int max);
/* rmpi_core_isend of len bytes at buf (typed data once packed). */
int rmpi_core_isend_bytes(rmpi_req_t *r);
/* An eager send of a segment list (core_proto.c): iov[0] left for the header, iov[1..n]
 * the data (n <= the peer's seg_max), len = their sum. */
void rmpi_core_isend_segs(rmpi_req_t *r, struct iovec *iov, int n);

static inline core_peer_t *rmpi_core_peer(rmpi_vc_t *vc)
{
    core_peer_t *cp = vc->core;
    if (RMPI_UNLIKELY(!cp->ready))
        rmpi_core_peer_init(vc);
    return cp;
}

#endif
