/* Private header of the libfabric provider (src/net/ofi). See README.md for the objects and
 * their invariants; net.h for the contract this provider keeps. */
#ifndef RMPI_OFI_H
#define RMPI_OFI_H

#include "ofi_dl.h" /* first: it renames the libfabric functions the headers declare */

#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "../chan_switch.h"
#include "../net.h"
#include "ofi_link.h"
#include "../shm/shm.h" /* the ring's cell layout, shared with the shm provider (docs/wire/shm.md) */

/* Every frame starts with this header (docs/wire/ofi.md): the sender's rank, since an RDM
 * receive does not say who sent it without FI_SOURCE, and the frame's sequence number on
 * this (rail, sender -> receiver): FI_ORDER_SAS orders matching, not completions
 * (comp_order is FI_ORDER_NONE in ofi_rxm), so the receiver restores issue order. */
typedef struct rmpi_ofi_hdr {
    uint32_t src;
    uint32_t seq;
    /* The job's cookie (docs/wire/auth.md): these endpoints take messages from anyone who
     * can reach them, so a frame without it is dropped, never trusted with a rank. */
    uint64_t cookie;
} rmpi_ofi_hdr_t;
/* Bit 31 of src: a control frame of emulated RDMA (ofi_emul.c), never given to on_frame.
 * It shares the sequence numbers of ordinary frames, so put data keeps its place. */
#define RMPI_OFI_CTRL 0x80000000u
/* Bit 30 of src: a link frame (HELLO, HELLO_ACK: a connection made again after a failure,
 * docs/wire/ofi.md), outside the sequence numbers. Bits 24..29: the low bits of the
 * connection epoch the frame was sent in; frames of another epoch are dropped. Bits 0..23:
 * the sender's rank (jobs of at most 2^24 ranks). */
#define RMPI_OFI_LINK 0x40000000u
#define RMPI_OFI_EPOCH_SHIFT 24
#define RMPI_OFI_EPOCH_MASK 0x3fu
#define RMPI_OFI_RANK_MASK 0xffffffu
/* A frame header from this rail: our rank (| RMPI_OFI_CTRL for control), seq and epoch set at post. */
#define RMPI_OFI_HDR(r, flag) ((rmpi_ofi_hdr_t){htole32((uint32_t)(r)->env.rank | (flag)), 0, htole64((r)->cookie)})
#define RMPI_OFI_BUF_SIZE 65536 /* one receive / send buffer: header + largest frame */
/* Multi-receive buffers (FI_MULTI_RECV) per rail, so the provider always has one to fill
 * while the others wait to be reposted; RMPI_OFI_MRECV bytes are split among them. */
#define RMPI_OFI_MRECV_BUFS 4
/* Size classes of shared receive buffers (RMPI_OFI_CLASSES): RMPI_CHAN_CLASSES, and one of
 * the largest frame's size when the classes stop below it. */
#define RMPI_OFI_MAX_CLASSES RMPI_NET_MAX_CLASSES /* RMPI_SHM_MAX_CLASSES + 1 (ofi_ops.c checks) */
#define RMPI_OFI_TOMBS 256                        /* retired keys kept per rail (rmpi_ofi_mr_retire) */
#define RMPI_OFI_SINKS 48                         /* their sinks: powers of two from 4 KiB */
#define RMPI_OFI_STASH 256
/* How long send/get/put drive the provider when it refuses a post (-FI_EAGAIN, e.g. while
 * ofi_rxm sets up the connection) before queueing the post for progress(). */
#define RMPI_OFI_PUSH_NS 20000000ull

/* Offset addressing (no FI_MR_VIRT_ADDR) with keys we choose: the low 48 bits of a key
 * are the region's base address, so the initiator turns the core's virtual raddr into an
 * offset; the high 16 bits are a generation that keeps keys unique. */
#define RMPI_OFI_KEY_ADDR_BITS 48
#define RMPI_OFI_KEY_ADDR_MASK ((UINT64_C(1) << RMPI_OFI_KEY_ADDR_BITS) - 1)

/* RMPI_OFI_RING: a pool buffer holding a frame for the peer's dedicated ring (ofi_chan.c),
 * waiting in the pending queue; once its write is posted it completes as RMPI_OFI_TX. */
enum { RMPI_OFI_RX, RMPI_OFI_TX, RMPI_OFI_RDMA, RMPI_OFI_EMUL, RMPI_OFI_TXZ, RMPI_OFI_RING };

/* What a completion's op_context points to. fctx comes first: FI_CONTEXT2 scratch space. */
typedef struct rmpi_ofi_ctx {
    struct fi_context2 fctx;
    int kind;
    uint32_t gen;              /* sends and RDMA: the peer's connection generation when issued */
    struct rmpi_ofi_ctx *next; /* pending queue, deferred list or free list */
} rmpi_ofi_ctx_t;

/* A registered region: made by mr_reg (rmpi_mr_t.desc points here) or for a pool slab or
 * an unregistered local buffer of a get/put when the domain needs FI_MR_LOCAL. */
typedef struct rmpi_ofi_reg {
    struct rmpi_ofi_reg *next, *prev; /* the rail's list, searched for FI_MR_LOCAL */
    char *addr;
    size_t len;
    struct fid_mr *mr;
    void *desc;
} rmpi_ofi_reg_t;

typedef struct rmpi_ofi_buf {
    rmpi_ofi_ctx_t ctx;
    void *desc;  /* the slab's local descriptor (FI_MR_LOCAL) */
    int peer;    /* send: destination rank */
    int piece;   /* send: a piece of an emulated put or get answer (counts in emul_out) */
    int link;    /* send: a link frame (HELLO, HELLO_ACK): no sequence number */
    size_t len;  /* header + frame (send) */
    size_t size; /* bytes at data: RMPI_OFI_BUF_SIZE, or a multi-receive buffer's */
    size_t hi;   /* multi-receive: end of the furthest frame the provider put in it */
    int cls;     /* receive, size classes: the class (the tag it is posted with) */
    size_t held; /* send: len while queued in pend, counted in rmpi_net_held (the core's backpressure) */
    /* RMPI_OFI_RING: data holds the ring cell's 8-byte header, then the frame header and
     * frame (len counts all three) */
    char *data; /* 64-aligned */
} rmpi_ofi_buf_t;

/* A frame that completed before an earlier one of its sender: copied out, so the receive
 * buffer (a multi-receive buffer holds frames of every peer) goes back to the provider. */
typedef struct rmpi_ofi_park {
    struct rmpi_ofi_park *next;
    uint32_t seq;
    size_t len; /* header + frame */
    char data[];
} rmpi_ofi_park_t;

/* A frame sent from the caller's memory (send_zc): our header and the caller's are copied
 * into hdr; iov[1..iovcnt) point at the caller's data until the send completes. */
typedef struct rmpi_ofi_zc {
    rmpi_ofi_ctx_t ctx;
    rmpi_net_op_t *op;
    int peer, iovcnt, status;
    struct rmpi_ofi_zc *all; /* every one allocated, freed at close */
    struct iovec iov[RMPI_NET_ZC_IOV];
    char hdr[sizeof(rmpi_ofi_hdr_t) + RMPI_NET_ZC_HDR];
} rmpi_ofi_zc_t;

typedef struct rmpi_ofi_rdma {
    rmpi_ofi_ctx_t ctx;
    rmpi_net_op_t *op;
    int peer, write, posted;
    int chunked; /* a write longer than max_rma: goes in chunks, one after the other */
    int split;   /* chunked and its first chunk posted: counted in the rail's split_writes */
    size_t wait; /* bytes of the op still counted as waiting for the peer (peer.out) */
    fi_addr_t dest;
    char *local;
    size_t len;           /* bytes left, the chunk in flight included */
    size_t cur;           /* bytes of the chunk in flight (at most the rail's max_rma) */
    uint64_t raddr, rkey; /* raddr already in the domain's addressing (virtual or offset) */
    void *desc;
    rmpi_mr_t lmr; /* FI_MR_LOCAL: the local buffer's registration, from the cache */
    int has_lmr;
    /* Emulated (ofi_emul.c): a put or get answer being cut into frames (ctx.kind
     * RMPI_OFI_EMUL, in the pending queue), or a get waiting for its data. */
    uint64_t id;
    size_t done;               /* bytes cut into frames (put, answer) or arrived (get) */
    struct rmpi_ofi_buf *held; /* a piece built but refused (-FI_EAGAIN), posted first */
    /* A read through a bounce buffer (rail.bounce): each chunk lands in `bounce` and is
     * copied to local when it completes. Given up with its connection, the op completes
     * with -ECONNRESET at once while this record, now an orphan (op NULL), keeps the
     * bounce buffer for libfabric until the read ends, however late (README.md). */
    char *bounce;
    size_t bounce_len; /* the first chunk's length, which chose the buffer (bounce_get) */
    int orphan;
    struct rmpi_ofi_rdma *fnext, *fprev; /* the rail's reads holding a bounce buffer */
    /* An atomic (rmpi_ofi_atomic): at_kind 1 + RMPI_NET_ATOMIC_*, 0 for a read or write;
     * local holds the operand (CSWAP: then the compare values), len its bytes. */
    int at_kind, at_type, at_op;
    size_t at_count;
    void *at_res;
} rmpi_ofi_rdma_t;

typedef struct rmpi_ofi_peer {
    int state; /* 0 not looked up, 1 reachable, -1 not reachable */
    fi_addr_t addr;
    /* Failure and re-admission (the VC's watch/abandon/rejoin, README.md): ln: the
     * connection epochs (ofi_link.h; ln.down: the connection was given up, its queued
     * posts failed, frames of it dropped from then on; ln.hello, a HELLO of ours, is given
     * up at hello_dl); report: on_peer_lost(why) is due at the next progress; up_due:
     * on_peer_up; gen: grows at every loss, so the completions of ops issued before it
     * move no counter. out: bytes issued and not completed; moved: bytes completed plus
     * bytes received (watch). */
    rmpi_ofi_link_t ln;
    int report, up_due;
    uint32_t gen;
    uint64_t hello_dl;
    size_t out;
    uint64_t moved;
    /* Frame bytes sent (any path) and how many of them the peer is known to have: a PONG
     * answers a PING sent after them on the same connection. tcp;ofi_rxm completes a send
     * once the kernel took it, so only this tells a frame stuck in a socket buffer behind a
     * cut link from one delivered. t_ping: the last PING. */
    uint64_t sent, acked, t_ping;
    char *why;               /* why the connection was lost: allocated when it is, freed once reported */
    uint32_t tx_seq, rx_seq; /* next frame sequence to send / to deliver */
    rmpi_ofi_park_t *parked; /* frames that completed early, by seq */
    rmpi_ofi_rdma_t *gets;   /* emulated gets waiting for data, in request order */
    uint64_t refused_put;    /* emulated put of this peer last refused (one PUT_ERR each) */
    int bounce;              /* reads from it take bounce buffers: 1 yes, -1 no, 0 not decided yet */
    int touched;             /* contacted (rmpi_ofi_peer_touch), counted in the rail's peers_touched */
    /* Channel kinds (ofi_chan.c). Receive side: sw, the channel this peer's frames to us
     * take (our choice) and whether its CHAN_MARK is awaited (../chan_switch.h); ring: our
     * ring for it (polled while it exists). Send side: tx_kind, the channel we write to it
     * on (its choice), and its ring: id, cells, where (already in the domain's addressing),
     * key, our write position and its read position (cells). */
    struct rmpi_ofi_ring *ring;
    rmpi_net_chsw_t sw;
    int tx_kind, credit_due;
    uint32_t tx_ring_id, tx_ncells;
    uint64_t tx_raddr, tx_rkey, tx_w, tx_r;
} rmpi_ofi_peer_t;

/* A dedicated ring in this process's memory, written by one peer with fi_write (the
 * adaptive-transport-selection seed's RDMA fast path): shm.h's cells, registered for remote
 * writes. credited: the read position last sent back (LINK_CREDIT); retire: its CHAN_MARK
 * came, freed after the poll that read it. */
typedef struct rmpi_ofi_ring {
    rmpi_shm_reader_t rd;
    rmpi_ofi_reg_t *reg;
    size_t bytes;
    uint64_t credited;
    uint32_t id;
    int peer, retire;
} rmpi_ofi_ring_t;

/* A ring frame's stamp whose fi_inject_write was refused after its bytes were written:
 * posted before anything else (the rail is fenced meanwhile). */
typedef struct rmpi_ofi_stamp {
    int peer;
    uint32_t gen, stamp;
    uint64_t raddr;
} rmpi_ofi_stamp_t;

typedef struct rmpi_ofi_rail {
    rmpi_rail_t pub;
    rmpi_net_env_t env;
    uint64_t cookie;      /* from the job key: every frame's header carries it */
    struct fi_info *info; /* this domain's entry (own copy) */
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_ep *ep;
    struct fid_av *av;
    struct fid_cq *cq;
    uint64_t mr_mode;
    int saw;        /* FI_ORDER_SAW: a send after a write is delivered after its data */
    int local_only; /* reaches only ranks on this node (shm, loopback) */
    int loopback;   /* a loopback fabric (127.x, ::1) */
    int idle;       /* reaches nobody (every rank is on this node and talks over the
                           * loopback domain, or the rail serves this node alone and no
                           * other rank is on it): progress does not poll it */
    int emul;       /* no FI_RMA (or RMPI_OFI_RMA=emulate): get/put over messages */
    /* Atomics (rmpi_ofi_atomic_max): offered at all (FI_ATOMIC, manual progress, a software
     * provider, no FI_MR_LOCAL, RMPI_OFI_ATOMIC not off and FI_ATOMIC
     * taken by ofi_open), and per kind, type and operation the
     * elements one op may carry (fi_atomicvalid and its siblings), asked once: 0 not yet. */
    int atomics;
    uint32_t at_max[RMPI_NET_ATOMIC_KINDS][RMPI_NET_AT_TYPES][RMPI_NET_AOPS];
    size_t inject;  /* fi_inject limit, header included */
    size_t max_rma; /* largest single fi_read/fi_write (RMPI_OFI_MAX_RMA, max_msg_size) */
    size_t key_size;
    int bounce;        /* reads may land in bounce buffers: they can be given up (README.md) */
    void *bounce_free; /* kept bounce buffers of max_rma bytes, linked through the first word */
    int nbounce_free;
    rmpi_ofi_rdma_t *flying; /* reads holding a bounce buffer, orphans included */
    long orphans;            /* reads given up that libfabric has not finished */

    char card[512]; /* published "fabric|domain|hexaddr" */
    /* Peer state, sparse (README.md, "Peer table"): peer i is peer_chunk[i >> SHIFT][i & MASK],
     * a chunk of RMPI_OFI_PEER_CHUNK peers allocated (zeroed) when any of them is first
     * touched (send, receive, RMA, link event). npeer_chunks index entries, NULL until then;
     * peers_touched counts the peers that were; peer_chunks the chunks allocated. */
    rmpi_ofi_peer_t **peer_chunk;
    int npeer_chunks, peer_chunks, peers_touched;
    rmpi_ofi_buf_t *rx; /* pre-posted receive buffers */
    int nrx;
    int mrecv;      /* rx are FI_MULTI_RECV buffers shared by every peer, filled back to back */
    size_t rx_size; /* bytes of each receive buffer (size classes: of the largest class) */
    /* Size classes (RMPI_OFI_CLASSES, ncls > 0): rx are ncls runs of cls_n[k] buffers of
     * cls_size[k] bytes (header + frame), posted as tagged receives with tag k for every
     * peer; a sender tags a frame with the smallest class it fits (rmpi_ofi_class). st
     * counts frames and bytes per class. */
    int ncls;
    size_t cls_size[RMPI_OFI_MAX_CLASSES];
    int cls_n[RMPI_OFI_MAX_CLASSES];
    rmpi_net_chan_stats_t st; /* the shared receive buffers' accounting (src/chan) */
    rmpi_ofi_ctx_t *rx_wait;  /* receive buffers whose repost got -FI_EAGAIN */
    rmpi_ofi_buf_t *tx_free;
    rmpi_ofi_zc_t *zc_free, *zc_all;
    size_t tx_slabs;     /* send buffer slabs allocated (bounded by RMPI_OFI_TX_MAX) */
    rmpi_ofi_reg_t regs; /* list head (sentinel) of registrations */
    /* retired keys (rmpi_ofi_mr_retire): tombs in a ring, on sinks of growing size */
    rmpi_ofi_reg_t *tombs[RMPI_OFI_TOMBS];
    unsigned tomb_next;
    struct {
        void *mem;
        size_t len;
    } sinks[RMPI_OFI_SINKS];
    int nsinks;
    size_t sink_len;
    struct slab {
        struct slab *next;
        rmpi_ofi_reg_t *reg;
        void *mem;
        struct rmpi_ofi_buf *bufs;
    } * slabs;
    rmpi_ofi_ctx_t *pend, **pend_tail; /* posts refused with -FI_EAGAIN, in issue order */
    rmpi_ofi_ctx_t *deferred;          /* RDMA ops completed at post time (len 0, errors), failed send_zc */
    rmpi_ofi_rdma_t *rdma_free;
    int lost_due;        /* peers with on_peer_lost due (peer.report) */
    int up_due;          /* peers with on_peer_up due */
    int hellos;          /* peers with a HELLO of ours in flight */
    uint64_t stat_stale; /* frames of an older connection dropped */
    long tx_out;         /* sends and RDMA ops posted, not completed */
    long writes_out;     /* writes posted, not completed: without FI_ORDER_SAW, sends wait */
    long split_writes;   /* chunked writes posted, not completed: sends wait (rest not posted yet) */
    int closing;
    /* A listed domain whose link was down at launch, built by ofi_iface.c (hints.down until
     * its first connection): the lower rank of a pair proposes the first connection only
     * while the interface is up. */
    int opened_down;
    int iface_up;        /* its interface was seen up (opened_down rails; looked at every 20 ms) */
    uint64_t iface_look; /* when */
    uint64_t stat_eagain;
    rmpi_net_mrtab_t emr; /* emulated registrations */
    uint64_t emul_id;     /* last emulated op id */
    long emul_out;        /* pieces of emulated puts / get answers posted, not completed */
    /* Completions read while send/get/put pushed a refused post (rmpi_ofi_push): handled
     * by the next progress(), before anything newer, since callbacks wait for it. */
    /* Channel kinds (ofi_chan.c, src/chan): policy (RMPI_CHANNELS_*); ring_ok: this rail
     * can carry dedicated rings (native RDMA, writes ordered); rings: peers whose ring we
     * poll (only those: a quiet shared peer costs the idle poll nothing). */
    int policy, ring_ok, nrings, rings_cap, nretire, credits_due, nstamp, stamp_cap; /* nretire: rings to free */
    uint32_t ring_ncells, ring_ids;
    size_t ring_bytes, ring_max_frame;
    int *rings;
    rmpi_ofi_stamp_t *stamps;
    rmpi_net_chsw_force_t force;
    const char *ring_why; /* why this rail has no rings (rmpi_info), or NULL */
    int xrc;              /* per-node XRC connections (ofi_xrc.c) */
    char xrc_why[200];    /* "yes (...)" / "no (...)" for rmpi_info and RMPI_REPORT */
    struct fi_cq_data_entry stash[RMPI_OFI_STASH];
    unsigned stash_head, stash_n;
    char scratch[]; /* inject staging, inject bytes */
} rmpi_ofi_rail_t;

/* Peers per chunk of the peer table: 16 x 208 B = 3.3 KB a chunk, and an index of 8 B per 16
 * ranks (32 KiB at 2^16): a process talking to a few scattered peers pays a chunk each, one
 * talking to all pays 1/26 more than a flat array (bench/scalesim models both). */
#define RMPI_OFI_PEER_SHIFT 4
#define RMPI_OFI_PEER_CHUNK (1 << RMPI_OFI_PEER_SHIFT)

/* Peer i's state, which must exist (touched before: the hot paths come after
 * rmpi_ofi_peer_addr or a received frame): two loads, the index entry and the field. */
static inline rmpi_ofi_peer_t *rmpi_ofi_peer(const rmpi_ofi_rail_t *r, int i)
{
    return &r->peer_chunk[i >> RMPI_OFI_PEER_SHIFT][i & (RMPI_OFI_PEER_CHUNK - 1)];
}
/* Peer i's state, or NULL when it was never touched (queries: nothing to say about it). */
static inline rmpi_ofi_peer_t *rmpi_ofi_peer_find(const rmpi_ofi_rail_t *r, int i)
{
    rmpi_ofi_peer_t *c = r->peer_chunk[i >> RMPI_OFI_PEER_SHIFT];
    return c ? &c[i & (RMPI_OFI_PEER_CHUNK - 1)] : NULL;
}
/* Peer i's state, allocated at its first contact (0 <= i < env.size); NULL without memory. */
rmpi_ofi_peer_t *rmpi_ofi_peer_touch(rmpi_ofi_rail_t *r, int i);
/* Visit the allocated peers only: for (int i = -1; (i = rmpi_ofi_peer_next(r, i)) >= 0;).
 * Untouched peers of an allocated chunk are visited too (zeroed: nothing to do for them). */
static inline int rmpi_ofi_peer_next(const rmpi_ofi_rail_t *r, int i)
{
    for (i++; i < r->env.size; i = (i | (RMPI_OFI_PEER_CHUNK - 1)) + 1)
        if (r->peer_chunk[i >> RMPI_OFI_PEER_SHIFT])
            return i;
    return -1;
}
/* Bytes of the peer table held (index and chunks allocated): what rmpi_ofi_peer_bytes costs
 * per peer, paid only for the chunks touched. */
size_t rmpi_ofi_peer_table_bytes(const rmpi_ofi_rail_t *r);
/* Peer table setup and teardown (rail open/close). */
int rmpi_ofi_peer_table_init(rmpi_ofi_rail_t *r);
void rmpi_ofi_peer_table_free(rmpi_ofi_rail_t *r);

/* The size class (tag) of a frame of total bytes, header included: the smallest that holds
 * it (the largest class holds the largest frame). 0 without classes. */
static inline uint64_t rmpi_ofi_class(const rmpi_ofi_rail_t *r, size_t total)
{
    int k = 0;
    while (k + 1 < r->ncls && r->cls_size[k] < total)
        k++;
    return (uint64_t)k;
}

/* Frames sent now would overtake a write still in flight: wait in the pending queue. */
static inline int rmpi_ofi_fenced(const rmpi_ofi_rail_t *r)
{
    return (r->writes_out && !r->saw) || r->split_writes || r->nstamp;
}

extern const struct rmpi_net_ops rmpi_ofi_ops;

static inline rmpi_ofi_rail_t *rmpi_ofi_rail_of(rmpi_rail_t *r) { return (rmpi_ofi_rail_t *)r; }

/* ofi_caps.c */
/* Pick the provider: RMPI_OFI_PROVIDER if set, else the first row of the capability table
 * that this host offers (auto_mode: hardware only unless RMPI_OFI_AUTO=any). Writes the
 * provider name and a sentence saying why; returns 0 when none qualifies. */
int rmpi_ofi_choose(int auto_mode, char *prov, size_t len, char *why, size_t wlen);
/* From the table: whether the provider reaches other nodes (unknown providers: yes). */
int rmpi_ofi_reaches_nodes(const char *prov_name);
/* From the table: whether a connection outlives a cut link, so an RDMA op libfabric
 * accepted may finish any time later instead of failing (unknown providers: yes). */
int rmpi_ofi_lingers(const char *prov_name);
/* From the table: whether the provider drives a NIC (unknown providers: yes); a software
 * one (tcp;ofi_rxm) serves RDMA in the target's progress. */
int rmpi_ofi_hardware(const char *prov_name);
/* From the table: whether the target rejects RDMA under a key it did not issue. */
int rmpi_ofi_checks_keys(const char *prov_name);
/* Eager bound of the provider's utility layer (ofi_rxm's buffers): rmpi_ofi_eager_env sets
 * its variable unless the user did (before the first fi_getinfo); rmpi_ofi_eager_max gives
 * the bytes in force for a provider, 0 when the table knows none. Frames stay within it, so
 * bigger messages take RailMPI's rendezvous instead of the layer's segmentation. */
void rmpi_ofi_eager_env(void);
size_t rmpi_ofi_eager_max(const char *prov_name);
/* From the table: the smallest frame worth sending from the caller's memory (send_zc) over
 * the provider when it needs no local registration (0: always copy). */
size_t rmpi_ofi_zcopy(const char *prov_name);
/* From the table: whether multi-receive buffers work with the provider (unknown ones: yes,
 * if fi_getinfo offers FI_MULTI_RECV). */
int rmpi_ofi_mrecv(const char *prov_name);
/* From the table: whether size classes as tagged receives work with the provider (unknown
 * ones: yes, if fi_getinfo offers FI_TAGGED). */
int rmpi_ofi_tagged(const char *prov_name);
/* From the table: the fi_inject limit to ask of the provider (0: its default). */
size_t rmpi_ofi_inject(const char *prov_name);
/* Longest single RDMA the table advises for a provider (0: no advice). */
size_t rmpi_ofi_max_rma(const char *prov_name);
/* rmpi_info: providers found, their capabilities, and what RMPI_NET would use. */
void rmpi_ofi_report(void *file);
/* From the table: prov (as fi_info names it, core;utility) runs over per-node XRC
 * connections when its core provider lists an XRC domain (verbs;ofi_rxm). */
int rmpi_ofi_xrc_mode(const char *prov_name);

/* A native RDMA post to peer refused for good (rc: not -FI_EAGAIN): the status to complete
 * the op with. -FI_EACCES (a key refused here) is -EFAULT; anything else means the provider
 * could not reach the peer on this rail: ofi_rxm returns the connect's error at the post
 * (ENETUNREACH while the local link is down, EINVAL through a blackhole route), and the
 * connection is then given up (on_peer_lost at the next progress, before the op completes)
 * so that the channel's probes can make it again (rejoin needs it given up): -ECONNRESET,
 * which moves the stripe to another rail. */
int rmpi_ofi_rdma_refused(rmpi_ofi_rail_t *r, int peer, int rc, int write);

/* ofi_iface.c: a listed domain whose interface's link is down at launch. net_name: the
 * network of addr/mask as libfabric's IP providers name a fabric ("10.201.1.0/24"), 0 or
 * -1. iface: interface name's IPv4 address, network name and whether its link is up
 * (IFF_UP and IFF_RUNNING); any output may be NULL; 0, or -1 without such an address.
 * down_info: the domain the provider would list for interface name, built from tmpl (a
 * domain of the same provider it does list, named after its interface), or NULL when tmpl
 * is not named so, name has no IPv4 address or its link is up. */
int rmpi_ofi_net_name(struct in_addr addr, struct in_addr mask, char *buf, size_t len);
int rmpi_ofi_iface(const char *name, struct sockaddr_in *addr, char *net, size_t len, int *up);
struct fi_info *rmpi_ofi_down_info(const struct fi_info *tmpl, const char *name);

/* ofi_xrc.c: per-node connections (verbs XRC under ofi_rxm, seed xrc-scalable). */
typedef struct rmpi_ofi_xrc_in {
    const char *prov;    /* fi_info prov_name of the rail */
    const char *domain;  /* its domain name ("<device>" or "<device>-xrc") */
    int mode;            /* RMPI_OFI_XRC */
    int dev_xrc;         /* the device's IBV_DEVICE_XRC: 1, 0, -1 unknown */
    const char *dev_why; /* why unknown */
    const char *prefer;  /* FI_VERBS_PREFER_XRC in the environment (NULL: unset) */
    const char *srx;     /* FI_OFI_RXM_USE_SRX in the environment (NULL: unset) */
} rmpi_ofi_xrc_in_t;
/* Whether the rail got XRC (1) and why or why not, "yes (...)" / "no (...)", into why. */
int rmpi_ofi_xrc_judge(const rmpi_ofi_xrc_in_t *in, char *why, size_t len);
/* Length of domain without its "-xrc" suffix; whether it has one; whether two domains
 * name the same device (its RC and XRC domains make one rail, the first listed). */
size_t rmpi_ofi_xrc_base(const char *domain);
int rmpi_ofi_xrc_is(const char *domain);
int rmpi_ofi_xrc_same_device(const char *a, const char *b);
/* Whether open makes a rail of domain (RMPI_OFI_XRC=off: not of XRC domains). */
int rmpi_ofi_xrc_keep(const char *prov, const char *domain, int mode);
/* Whether open makes a new rail of domain after the n domains made: one rail per device
 * (its RC and XRC domains are one NIC; the first listed wins), none of an XRC domain
 * under RMPI_OFI_XRC=off. */
int rmpi_ofi_xrc_new_rail(const char *prov, const char *domain, const char *const *made, int n, int mode);
/* Before the process's first fi_getinfo: ask libibverbs which devices have XRC and set
 * FI_VERBS_PREFER_XRC / FI_OFI_RXM_USE_SRX (unless set) as RMPI_OFI_XRC says. */
void rmpi_ofi_xrc_env(void);
/* IBV_DEVICE_XRC of the device behind domain: 1, 0, -1 unknown. */
int rmpi_ofi_xrc_device(const char *domain);
/* rmpi_ofi_xrc_judge for an opened rail, with this process's devices and environment. */
void rmpi_ofi_xrc_note(const char *prov, const char *domain, int *yes, char *why, size_t len);
/* rmpi_info: the devices' XRC capability and whether XRC was requested. */
void rmpi_ofi_xrc_report(void *file);

/* ofi_ops.c */
/* A connection's bytes (watch): issued to peer, or completed. Only a completion that
 * brought the peer's data (a read) is evidence of the peer (moved); a send or write
 * completes once the kernel took it: its bytes count in `sent` and wait for a PONG. */
static inline void rmpi_ofi_issued(rmpi_ofi_rail_t *r, int peer, size_t n) { rmpi_ofi_peer(r, peer)->out += n; }
static inline void rmpi_ofi_done(rmpi_ofi_rail_t *r, int peer, uint32_t gen, size_t n, int from_peer)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, peer);
    if (gen == p->gen) {
        p->out -= n < p->out ? n : p->out;
        if (from_peer)
            p->moved += n;
    }
}
/* fi_getinfo hints for what RailMPI needs (prov NULL: any provider; rma 0: FI_MSG only, 1:
 * FI_RMA too, 2: FI_RMA and FI_ATOMIC). */
struct fi_info *rmpi_ofi_hints(const char *prov, int manual, int rma);
int rmpi_ofi_peer_addr(rmpi_ofi_rail_t *r, int peer, fi_addr_t *addr);
/* Queue c behind every earlier post (refused: counted in the EAGAIN statistic). */
void rmpi_ofi_pend(rmpi_ofi_rail_t *r, rmpi_ofi_ctx_t *c);
void rmpi_ofi_pend_front(rmpi_ofi_rail_t *r, rmpi_ofi_ctx_t *c);
void rmpi_ofi_pend_add(rmpi_ofi_rail_t *r, rmpi_ofi_ctx_t *c);
/* Send a frame (flag: 0 or RMPI_OFI_CTRL); the sequence number is taken when libfabric
 * accepts the post, so frames queued behind a put get numbers after its pieces. */
int rmpi_ofi_frame_send(rmpi_ofi_rail_t *r, int peer, const struct iovec *iov, int iovcnt, uint32_t flag);
rmpi_ofi_buf_t *rmpi_ofi_tx_get(rmpi_ofi_rail_t *r);
void rmpi_ofi_tx_put(rmpi_ofi_rail_t *r, rmpi_ofi_buf_t *b);
/* Post a pool buffer (header + frame in b->data, b->len): 0, -FI_EAGAIN or an error. */
int rmpi_ofi_tx_post(rmpi_ofi_rail_t *r, rmpi_ofi_buf_t *b);
/* Drive the provider once without callbacks (completions go to the stash); 0 when the
 * stash is full or the push has lasted RMPI_OFI_PUSH_NS since *t0 (0: start now). */
int rmpi_ofi_push(rmpi_ofi_rail_t *r, uint64_t *t0);
const char *rmpi_ofi_prov(const rmpi_ofi_rail_t *r);

/* ofi_rdma.c */
/* Before libfabric's first call: keep its memory monitor from hiding munmap & co from the
 * registration cache's hooks (sets FI_MR_CACHE_MONITOR=disabled unless already set). */
void rmpi_ofi_mr_env(void);
/* Register [addr, addr+len) with a key of our choosing unless FI_MR_PROV_KEY; binds and
 * enables it when FI_MR_ENDPOINT. Returns 0 or a negative fi_errno. */
int rmpi_ofi_reg(rmpi_ofi_rail_t *r, void *addr, size_t len, uint64_t access, rmpi_ofi_reg_t **out);
void rmpi_ofi_dereg(rmpi_ofi_rail_t *r, rmpi_ofi_reg_t *reg);
int rmpi_ofi_mr_reg(rmpi_rail_t *rail, void *addr, size_t len, rmpi_mr_t *mr);
void rmpi_ofi_mr_dereg(rmpi_rail_t *rail, rmpi_mr_t *mr);
void rmpi_ofi_mr_retire(rmpi_rail_t *rail, rmpi_mr_t *mr);
int rmpi_ofi_get(rmpi_rail_t *rail, int peer, void *local, size_t len, uint64_t raddr, uint64_t rkey,
                 rmpi_net_op_t *op);
int rmpi_ofi_put(rmpi_rail_t *rail, int peer, const void *local, size_t len, uint64_t raddr, uint64_t rkey,
                 rmpi_net_op_t *op);
/* net.h atomic_max and atomic (ofi_rdma.c). */
size_t rmpi_ofi_atomic_max(rmpi_rail_t *rail, int kind, int type, int op);
int rmpi_ofi_atomic(rmpi_rail_t *rail, int peer, int kind, int type, int op, const void *buf, void *res, size_t count,
                    uint64_t raddr, uint64_t rkey, rmpi_net_op_t *netop);
rmpi_ofi_rdma_t *rmpi_ofi_rdma_new(rmpi_ofi_rail_t *r);
void rmpi_ofi_rdma_release(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d);
/* Complete the op at the next progress (the contract's rule for completions found early). */
void rmpi_ofi_rdma_defer(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d, int status);
/* Post an RDMA op: 0, -FI_EAGAIN (caller queues it) or another negative error. */
int rmpi_ofi_rdma_post(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d);
/* A chunk of an RDMA op completed: post the next chunk, or finish the op. */
void rmpi_ofi_rdma_chunk_done(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d);
/* An RDMA op finished (status 0 or negative errno): stamp, release, call op->complete. */
void rmpi_ofi_rdma_done(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d, int status);
void rmpi_ofi_rdma_free_all(rmpi_ofi_rail_t *r);
/* The connection to peer was given up: its reads in libfabric's hands that hold bounce
 * buffers complete with -ECONNRESET at the next progress and stay behind as orphans. */
void rmpi_ofi_rdma_orphan(rmpi_ofi_rail_t *r, int peer);
/* A completion (or error) of an orphan: it ends here; 1 if d was one. */
int rmpi_ofi_rdma_orphan_end(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d);

/* ofi_ops.c, for ofi_chan.c */
/* One frame (header included) at data, from a receive buffer (ch SHARED) or a ring (DEDICATED). */
void rmpi_ofi_rx_frame(rmpi_ofi_rail_t *r, const char *data, size_t len, int ch);
/* The header's epoch and sequence number, set when the post is accepted. */
void rmpi_ofi_set_seq(char *data, const rmpi_ofi_peer_t *p);
/* fi_inject of a whole frame (header included), tagged with its size class under RMPI_OFI_CLASSES. */
ssize_t rmpi_ofi_inject_frame(rmpi_ofi_rail_t *r, const void *buf, size_t len, fi_addr_t dest);
/* A link frame (kind, a, b) posted at once with fi_inject, outside the pending queue: 0 or
 * -FI_EAGAIN (the caller tries again later). */
int rmpi_ofi_link_inject(rmpi_ofi_rail_t *r, int peer, uint32_t kind, uint32_t a, uint32_t b);
#define RMPI_OFI_LINK_CREDIT 5

/* ofi_chan.c: the dedicated kind over libfabric, and the switch (src/chan/README.md). */
void rmpi_ofi_chan_open(rmpi_ofi_rail_t *r);
void rmpi_ofi_chan_close(rmpi_ofi_rail_t *r);
/* Write a frame (frame header and frame at b->data + 8, b->len counting the 8) into the
 * peer's ring: 0; 1: no room until its credit; -FI_EAGAIN: the provider refused (nothing
 * sent); or another error. */
int rmpi_ofi_ring_post(rmpi_ofi_rail_t *r, rmpi_ofi_buf_t *b);
/* The same from the inject staging area (frame header + frame in scratch + 8). */
int rmpi_ofi_ring_inject(rmpi_ofi_rail_t *r, int peer, size_t total);
/* A CHAN_REQ / CHAN_MARK control frame, in order (inside progress). */
void rmpi_ofi_chan_rx(rmpi_ofi_rail_t *r, int src, const char *frame, size_t len);
/* LINK_CREDIT from peer: its ring's id and read position (low 32 bits, in cells). */
void rmpi_ofi_chan_credit(rmpi_ofi_rail_t *r, int src, uint32_t id, uint32_t pos);
/* progress: read the rings in use, send credits due, post refused stamps, forced switches. */
int rmpi_ofi_chan_progress(rmpi_ofi_rail_t *r);
/* The first frame from peer was delivered (RMPI_CHANNELS=dedicated asks for its ring then). */
void rmpi_ofi_chan_first(rmpi_ofi_rail_t *r, int peer);
/* The connection to peer was given up: both directions go back to shared, the ring is freed. */
void rmpi_ofi_chan_down(rmpi_ofi_rail_t *r, int peer);
int rmpi_ofi_chan_kind(rmpi_rail_t *rail, int peer);
int rmpi_ofi_chan_switch(rmpi_rail_t *rail, int peer, int to);
void rmpi_ofi_chan_stats(rmpi_rail_t *rail, rmpi_net_chan_stats_t *st);
/* Control frames of the switch share the emulated-RDMA flag (bit 31 of src) and its kind
 * byte (docs/wire/ofi.md): kinds from this one on are the switch's. */
#define RMPI_OFI_CHAN_REQ 6
#define RMPI_OFI_CHAN_MARK 7

/* ofi_emul.c: get/put emulated with control frames on rails without FI_RMA. */
/* d is set up (op, peer, local, len > 0, raddr, rkey, write): send the request or queue the put. */
void rmpi_ofi_emul_start(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d);
/* Cut pieces of the stream at the head of the pending queue: 1 when it is all out (the
 * caller unlinks it), 0 when it must wait (window full, post refused). */
int rmpi_ofi_emul_drain(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d);
/* The stream left the pending queue: a put completes at the next progress, an answer is freed. */
void rmpi_ofi_emul_sent(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d);
/* A control frame arrived (after the 8-byte header), in order; inside progress. */
void rmpi_ofi_emul_rx(rmpi_ofi_rail_t *r, int src, const char *frame, size_t len);
/* close(): free the registrations, waiting gets and unsent streams. */
void rmpi_ofi_emul_close(rmpi_ofi_rail_t *r);

#endif
