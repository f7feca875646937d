/*
 * net: the provider contract. A provider (src/net/<name>/) exposes rails; a rail is one
 * independent path to peers (shared memory, one TCP interface, one libfabric domain/port).
 *
 * Who calls: vc/core through rmpi_net_* below; providers never see MPI tags, communicators
 * or requests. Frames are opaque bytes to a provider.
 * Initialisation: rmpi_net_open() before the PMI fence (providers publish their addresses
 * with rmpi_pmi_put), rmpi_net_ready(0) after it, rmpi_net_ready(1) after a second fence.
 * Connections open on first use.
 * Dynamic peers (MPI_Comm_connect/accept, spawn, join): a process is named across jobs by
 * rmpi_net_id_t (its world's tag, a hash of the process manager's job name, and its rank
 * there). Peers 0..size-1 are this process's world; rmpi_net_peer_add appends others
 * (indices size, size+1, ...) from their business card (rmpi_net_card). Only providers
 * with card/peer_add (tcp) reach dynamic peers; the first rmpi_net_card opens tcp when it
 * was not opened at init (then on the interfaces it would choose, without a PMI card).
 * Progress: manual. Nothing happens unless rmpi_net_progress() runs; callbacks
 * (env->on_frame, op->complete, env->on_peer_lost, env->on_rtt) are made only from inside a provider's
 * progress() (never from send/send_zc/get/put themselves, never from another thread), so callers
 * may post operations while holding half-updated state.
 * Threading: not thread-safe; the caller holds the library lock.
 *
 * Guarantees every provider keeps:
 *  - send(): the frame is copied or transmitted before return; the iov may be reused at once.
 *    It never fails for lack of resources (the provider queues); errors are fatal conditions.
 *  - send_zc() (optional, offered when hints.zc_min > 0): the same frame, in the same order
 *    among send()'s frames, but only iov[0] (the caller's header, at most RMPI_NET_ZC_HDR
 *    bytes) is copied; the memory of iov[1..iovcnt) (iovcnt <= RMPI_NET_ZC_IOV) is read
 *    until op->complete runs (status 0; or negative when the frame was not sent, and the
 *    peer is then reported lost on that rail; t_post/t_done are not stamped). Frames
 *    shorter than hints.zc_min take send().
 *  - Per (rail, peer): frames and put data are delivered in the order they were issued, and
 *    a put's data is in the target buffer before any later frame on that rail is delivered.
 *  - get()/put() complete through op->complete with op->t_done stamped (rmpi_time_ns) when the
 *    data is in place at the initiator (get) or has left the local buffer (put).
 *  - A put that completed is in the target buffer before any frame sent to that peer after
 *    its completion, on any rail, is delivered (one-sided flush and unlock rely on it): tcp
 *    completes a put when written on a lone connection (later frames follow it) and on
 *    PUT_ACK when the peer has several; ofi writes with FI_DELIVERY_COMPLETE; shm writes by
 *    cross-memory attach before returning, or queues the ring copies ahead of later frames
 *    (then op->by_target says the copy lands only when the target polls).
 *  - RDMA is native or emulated (hints.rdma_native); emulation lands data straight in the
 *    registered target buffer and checks the access against the target's registrations.
 *  - A remote access error (bad rkey, out of bounds) completes the op with -EFAULT when the
 *    op is still pending; when it is reported after the op completed locally (a put whose
 *    bytes had all left), the provider calls env->on_peer_lost, as a verbs QP would go to
 *    the error state.
 */
#ifndef RMPI_NET_H
#define RMPI_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "../rt/rt.h"

/* The version of struct rmpi_net_ops (and of the rail hints a provider fills) a provider was
 * written against: raise it whenever a member is added, removed or changes meaning;
 * rmpi_net_open refuses a provider whose version differs (rmpi_net_ops_check). 7: hints.down and hints.stream;
 * 11: wait_fd; 12: rmpi_net_op_t.landed. */
#define RMPI_NET_OPS_VERSION 12
#define RMPI_NET_MAX_RAILS 16
/* Most size classes of shared receive buffers a provider reports (shm's RMPI_SHM_MAX_CLASSES, and
 * one class of the largest frame over libfabric). */
#define RMPI_NET_MAX_CLASSES 9

typedef struct rmpi_rail rmpi_rail_t;
typedef struct rmpi_net_op rmpi_net_op_t;
struct rmpi_net_ranges; /* a range list (below, mrtab.c) */

typedef enum { RMPI_SCOPE_SELF, RMPI_SCOPE_INTRA, RMPI_SCOPE_INTER } rmpi_scope_t;

typedef struct rmpi_net_hints {
    char name[64];       /* e.g. "shm", "tcp:eth0" */
    uint64_t bw;         /* bytes/s; 0 = unknown */
    uint32_t latency_ns; /* one-way; 0 = unknown */
    int rdma_native;     /* 1: hardware RDMA; 0: emulated by the provider */
    int rdma_by_target;  /* 1: the target's progress engine serves RDMA (tcp's emulation,
                          * libfabric software providers): small ops gain by going batched
                          * in one message; 0: the NIC or the origin does it (or unknown) */
    int reads_by_msg;    /* 1: small reads in flight cost more than one message asking for
                          * them all (libfabric software providers: tcp;ofi_rxm's fi_reads) */
    size_t rdma_whole;   /* get/put of at most this many bytes are posted at once as one
                          * operation, served at the target before any get posted after it
                          * to that peer on this rail; 0: not promised. Version 9. */
    size_t max_frame;    /* largest frame send() accepts */
    size_t max_inline;   /* frames up to this size go out without an extra copy */
    int max_iov;         /* most iov entries send() gathers from without first copying them
                              * into a buffer of its own; 0: any number (it copies anyway) */
    size_t mem_per_peer; /* bytes of connection state per connected peer */
    int node_conn;       /* 1: one connection serves every process of a remote node */
    rmpi_scope_t scope;  /* which peers this rail is for */
    int mr_cache;        /* 1: registering is costly (pins pages): go through the cache */
    int lingers;         /* 1: a connection given up still carries the ops it had accepted,
                          * whenever its link returns (ofi where connections outlive a cut and
                          * a second rail takes over): a put given up may land after the
                          * target handed its memory back, so the core never asks a peer of
                          * several subchannels to write (it reads, or takes DATA frames) */
    int tier;            /* of the rails reaching a peer, only those of the highest tier are used */
    int put_landed;      /* 1: with another rail of this provider to the peer, a put completes
                          * only once the target landed its bytes (tcp's PUT_ACK), so a frame
                          * sent after it need not follow it on its rail */
    size_t zc_min;       /* send_zc pays off for frames of this many bytes on; 0: no send_zc */
    /* Parallel streams (seed infiniband-wan, 3.4): spare = 1 for an extra connection over
     * the same path as the rail before it, which a virtual channel leaves idle until that
     * path's bandwidth-delay product asks for it; window: bytes one connection of this rail
     * keeps in flight (its socket buffers), 0 when unknown or unbounded. stream: the
     * connection's index over its path, > 0 for every further connection over the same path
     * as the rail before it, spare or opened in use (RMPI_TCP_STREAMS=N): a virtual
     * channel counts a rail and such streams after it as one rail. */
    int spare;
    int stream;
    size_t window;
    /* 1: the rail's link was not up when the provider opened it (listed by the user, so
     * expected to come up). A virtual channel starts such a subchannel failed and probes it
     * with the failed rails' backoff (rejoin), so it is used once its link answers; the
     * provider clears it once a connection on the rail is established. */
    int down;
} rmpi_net_hints_t;

/* send_zc: most bytes of iov[0] (copied) and most iov entries in all. */
#define RMPI_NET_ZC_HDR 64
#define RMPI_NET_ZC_IOV 2

struct rmpi_rail {
    const struct rmpi_net_ops *ops;
    rmpi_net_hints_t hints;
    int index; /* position in the job-wide rail table, set by rmpi_net_open */
};

/* A registered region. rkey names it to peers; desc is the provider's local handle. */
typedef struct rmpi_mr {
    void *addr;
    size_t len;
    uint64_t rkey;
    void *desc;
    void *cache; /* registration cache entry (mrcache.c), NULL if uncached */
} rmpi_mr_t;

/* An RDMA operation or a send_zc, owned by the caller (embedded in a request) until complete() runs. */
struct rmpi_net_op {
    void (*complete)(rmpi_net_op_t *op);
    int status;              /* 0 or a negative errno */
    uint64_t t_post, t_done; /* stamped by the provider: post and completion time */
    rmpi_rail_t *rail;
    void *ctx; /* for the caller */
    /* put() on a rail whose hints say rdma_native sets it to 1 when the data lands only
     * once the target's progress handles it (shm's ring copies when the kernel refuses
     * cross-memory attach; ofi software providers' writes completed when sent, under
     * FI_ORDER_SAW): completion then means sent, not landed, and only a later frame the
     * target answers tells the data is there (as on emulated rails). Read it when put()
     * returns; 0 from every other put. */
    int by_target;
    /* put() sets it to 1 when the op will complete only once the target has landed the data
     * (tcp's PUT_ACK, asked for a range list's key), so its completion is remote completion
     * and a flush need not ask the target. The caller zeroes it before put(); read it when
     * put() returns. */
    int landed;
};

/* Channel kinds as providers number them (src/chan/chan.h's rmpi_chan_kind_t, same values). */
enum { RMPI_NET_CHAN_SHARED = 0, RMPI_NET_CHAN_DEDICATED = 1 };
/* What a provider's channels cost and carried, for this process (index: RMPI_NET_CHAN_*). */
typedef struct rmpi_net_chan_stats {
    uint64_t rx_bytes[2], tx_bytes[2]; /* frame bytes received / sent on each kind */
    uint64_t rx_frames[2];
    uint64_t buf_bytes[2];      /* receive-buffer bytes those frames consumed (class buffers, ring cells) */
    uint64_t switches;          /* switches of this process's receive channels completed */
    uint64_t switch_ns;         /* time spent mapping and giving back rings for switches, either end */
    size_t mem[2], mem_peak[2]; /* receive memory set up now / at most, by kind */
    int dedicated_now;          /* peers sending to this process on a dedicated channel now */
    int rings_asked;            /* dedicated channels asked for whose first frame has not come yet */
    size_t ring_bytes;          /* the receive memory of one dedicated ring of this rail (0: none) */
    /* Shared buffers in size classes chosen by the sender, where the provider counts them per
     * class (ofi with RMPI_OFI_CLASSES): class bytes (header included), frames, frame bytes. */
    int ncls;
    uint32_t cls_size[RMPI_NET_MAX_CLASSES];
    uint64_t cls_frames[RMPI_NET_MAX_CLASSES], cls_bytes[RMPI_NET_MAX_CLASSES];
} rmpi_net_chan_stats_t;
typedef struct rmpi_net_id {
    uint32_t world; /* hash of the world's job name (env->jobid) */
    int rank;       /* rank in that world */
} rmpi_net_id_t;

/* Where a round-trip sample comes from (env->on_rtt; RMPI_NET_RTT_ACK is the VC's own).
 * RMPI_NET_RTT_KERNEL_MIN is no source of its own: the kernel's smallest round trip of the
 * connection (TCP_INFO tcpi_min_rtt), which counts toward the path's smallest round trip
 * only, never its smoothed one. */
enum { RMPI_NET_RTT_HANDSHAKE, RMPI_NET_RTT_KERNEL, RMPI_NET_RTT_ACK, RMPI_NET_RTT_NSRC, RMPI_NET_RTT_KERNEL_MIN };

/* Most header bytes a frame_dst answer keeps back (env->frame_dst's *off). */
#define RMPI_NET_PLACE_HEAD 64

typedef struct rmpi_net_env {
    int rank, size;
    const char *jobid; /* unique per job on a host (names shared-memory segments) */
    /* A frame arrived; valid only during the call. */
    void (*on_frame)(rmpi_rail_t *rail, int peer, const void *frame, size_t len);
    /* A peer's connection broke or stalled; the caller decides whether the job goes on. */
    void (*on_peer_lost)(rmpi_rail_t *rail, int peer, const char *why);
    /* A round-trip time to peer on rail (ns), measured by the provider: src is
     * RMPI_NET_RTT_HANDSHAKE (its connection handshake, peer processing included) or
     * RMPI_NET_RTT_KERNEL (the kernel's smoothed estimate, e.g. TCP_INFO) or
     * RMPI_NET_RTT_KERNEL_MIN (the kernel's minimum). May be NULL. */
    void (*on_rtt)(rmpi_rail_t *rail, int peer, uint64_t rtt_ns, int src);
    /* A connection to peer on rail was established (each time: the first, and every one
     * that replaces a lost one), with its epoch, which both ends agree on and which grows
     * with every new connection. Called after the completions of the old connection's
     * failed ops. May be NULL. */
    void (*on_peer_up)(rmpi_rail_t *rail, int peer, uint32_t epoch);
    /* Placement of a frame's payload (optional on both sides; tcp asks). A frame of len
     * bytes of which only the first hlen have arrived (head, valid during the call): the
     * answer is where its bytes [*off, len) go (the matched receive's buffer; *off, the
     * frame's headers, at most RMPI_NET_PLACE_HEAD), or NULL: the frame is delivered whole
     * through on_frame as usual. A non-NULL answer commits both sides: the provider reads
     * those bytes there, delivers no other frame of that peer on that rail meanwhile, and
     * then calls on_frame_placed with the frame's first *off bytes instead of on_frame. */
    void *(*frame_dst)(rmpi_rail_t *rail, int peer, const void *head, size_t hlen, size_t len, size_t *off);
    void (*on_frame_placed)(rmpi_rail_t *rail, int peer, const void *head, size_t off, size_t len);
    /* A pass ended at rmpi_net_rx_enough with a frame of peer ready and left unread (it
     * would have been taken behind the one before it): the channel statistics count it as
     * such. May be NULL. */
    void (*on_rx_left)(rmpi_rail_t *rail, int peer);
    /* The channel kinds' start under RMPI_CHANNELS=adaptive (src/chan, RMPI_CHAN_SMALL_JOB),
     * decided before the rails open: chan_small 1 when every peer that could hold a ring
     * fits within the cap h, so shm starts every local peer on its ring and makes its
     * shared queue only when a switch first asks for it; chan_why says which start and why,
     * for rmpi_info and RMPI_REPORT (NULL: not decided, as in rmpi_info). */
    int chan_small;
    const char *chan_why;
    /* Set by rmpi_net_open for the providers: */
    uint32_t world; /* this process's world tag (rmpi_net_id_t.world) */
    int late;       /* opened after init for dynamic peers: publish nothing via PMI */
} rmpi_net_env_t;

/* Atomics at the target (version 10: atomic_max and atomic, below): element types, operations
 * (READ: fetch only; CSWAP: compare-and-swap) and kinds (WRITE: no result; FETCH: the
 * target's old values come back; CSWAP: buf holds the new values, then the compare values). */
enum {
    RMPI_NET_AT_I8,
    RMPI_NET_AT_U8,
    RMPI_NET_AT_I16,
    RMPI_NET_AT_U16,
    RMPI_NET_AT_I32,
    RMPI_NET_AT_U32,
    RMPI_NET_AT_I64,
    RMPI_NET_AT_U64,
    RMPI_NET_AT_F32,
    RMPI_NET_AT_F64,
    RMPI_NET_AT_TYPES
};
enum {
    RMPI_NET_AOP_SUM,
    RMPI_NET_AOP_PROD,
    RMPI_NET_AOP_MIN,
    RMPI_NET_AOP_MAX,
    RMPI_NET_AOP_LAND,
    RMPI_NET_AOP_LOR,
    RMPI_NET_AOP_LXOR,
    RMPI_NET_AOP_BAND,
    RMPI_NET_AOP_BOR,
    RMPI_NET_AOP_BXOR,
    RMPI_NET_AOP_REPLACE,
    RMPI_NET_AOP_READ,
    RMPI_NET_AOP_CSWAP,
    RMPI_NET_AOPS
};
enum { RMPI_NET_ATOMIC_WRITE, RMPI_NET_ATOMIC_FETCH, RMPI_NET_ATOMIC_CSWAP, RMPI_NET_ATOMIC_KINDS };

struct rmpi_net_ops {
    unsigned version; /* RMPI_NET_OPS_VERSION */
    const char *name;
    /* Open the rails this process can use; publish addresses (rmpi_pmi_put). Returns the
     * number of rails written (0: provider unusable here, not an error), or -1. */
    int (*open)(const rmpi_net_env_t *env, rmpi_rail_t **rails, int max);
    /* After the address fence (phase 0) and once more after a second fence (phase 1):
     * map/connect what must be set up eagerly (may be NULL). */
    int (*ready)(rmpi_rail_t *rail, int phase);
    /* After the fence: whether this rail reaches peer. Deterministic and symmetric. */
    int (*reaches)(rmpi_rail_t *rail, int peer);
    int (*send)(rmpi_rail_t *rail, int peer, const struct iovec *iov, int iovcnt);
    /* send() without copying iov[1..): op completes when that memory may be reused (may be NULL). */
    int (*send_zc)(rmpi_rail_t *rail, int peer, const struct iovec *iov, int iovcnt, rmpi_net_op_t *op);
    int (*mr_reg)(rmpi_rail_t *rail, void *addr, size_t len, rmpi_mr_t *mr);
    void (*mr_dereg)(rmpi_rail_t *rail, rmpi_mr_t *mr);
    /* One registration (freed by mr_dereg) whose key covers whatever ranges holds at the
     * time of each access, its owner adding and removing ranges while it lives (MPI's
     * dynamic windows: memory attached later, at any address; the key is sent once). Only
     * where the target checks every access itself (emulated RDMA, mrtab.c); version 8.
     * May be NULL: such memory is not reached by RDMA. */
    int (*mr_reg_ranges)(rmpi_rail_t *rail, const struct rmpi_net_ranges *ranges, rmpi_mr_t *mr);
    /* mr_dereg of a registration whose key a peer may still use though its memory is no
     * longer to be reached (a region detached from a dynamic window, an origin's epoch
     * still open): an access with the key must then neither touch that memory nor cost the
     * connection; the data a late write brings goes nowhere, a late read gets any bytes
     * (the caller learns of such accesses otherwise). Version 9. May be NULL: mr_dereg. */
    void (*mr_retire)(rmpi_rail_t *rail, rmpi_mr_t *mr);
    /* Read len bytes at the peer's (raddr, rkey) into local / write local there. */
    int (*get)(rmpi_rail_t *rail, int peer, void *local, size_t len, uint64_t raddr, uint64_t rkey, rmpi_net_op_t *op);
    int (*put)(rmpi_rail_t *rail, int peer, const void *local, size_t len, uint64_t raddr, uint64_t rkey,
               rmpi_net_op_t *op);
    /* Write n pieces local[i] to the peer's remote[i] (registration rkey), or with write 0
     * read them from there, before returning, after every get and put posted to that peer
     * before: 0 done (as a completed native put or get), 1 not possible now (nothing
     * moved that put()/get() would not move again alike: the caller posts those), -errno
     * an access error. May be NULL. */
    int (*copy_now)(rmpi_rail_t *rail, int peer, const struct iovec *local, const struct iovec *remote, int n,
                    uint64_t rkey, int write);
    /* Atomics on registered memory (version 10; both NULL or both set). atomic_max: elements
     * one atomic() of that kind, type and operation may carry on this rail, 0 when not
     * offered. A provider offers them only where the target applies them in its own
     * process, inside its progress() (libfabric software providers under manual progress:
     * tcp;ofi_rxm), so they are serialised with everything that process does to the memory
     * itself, and with each other; never atomic against other processes' loads and stores
     * (the caller keeps such memory off this path). atomic: count elements from buf
     * (nothing read for READ) applied at the peer's (raddr, rkey); FETCH and CSWAP land the
     * old values in res. buf and res stay the caller's until op completes, which is once the
     * target applied it (res filled); atomics to one peer on one rail are applied in the
     * order posted, except that one posted after a FETCH or CSWAP may pass it (libfabric
     * promises no FI_ORDER_ATOMIC_WAR on tcp;ofi_rxm): the caller waits for those first. */
    size_t (*atomic_max)(rmpi_rail_t *rail, int kind, int type, int op);
    int (*atomic)(rmpi_rail_t *rail, int peer, int kind, int type, int op, const void *buf, void *res, size_t count,
                  uint64_t raddr, uint64_t rkey, rmpi_net_op_t *netop);
    /* Poll: deliver frames and completions. Returns the number of events handled. */
    int (*progress)(rmpi_rail_t *rail);
    /* Flush queued frames (best effort, bounded time) and release everything. */
    void (*close)(rmpi_rail_t *rail);
    /* Print provider-specific facts for rmpi_info (may be NULL). */
    void (*describe)(rmpi_rail_t *rail, void *file);
    /* Provider facts about this rail's connection to peer for RMPI_REPORT, as text without a
     * newline in buf, or with json as the members of a JSON object (no braces) for
     * RMPI_REPORT=json ("" when there is nothing to say; may be NULL). */
    void (*peer_facts)(rmpi_rail_t *rail, int peer, int json, char *buf, size_t len);
    /* The same for facts of the whole rail (its domain: ofi's per-node XRC connections or
     * not), said once per rail and process in RMPI_REPORT rather than once per peer (may be
     * NULL). */
    void (*rail_facts)(rmpi_rail_t *rail, int json, char *buf, size_t len);
    /* Dynamic peers (NULL: the provider reaches only its world). card: this process's
     * addresses as text without ';' (length, or -1); peer_add: peer (an index >= size) is
     * the process id with this provider's card text; same_node as told by the caller.
     * Afterwards reaches(peer) says whether a rail of the provider pairs with it. Called
     * for one rail of the provider (its rails share the answer). */
    int (*card)(rmpi_rail_t *rail, char *buf, size_t len);
    int (*peer_add)(rmpi_rail_t *rail, int peer, const rmpi_net_id_t *id, int same_node, const char *card,
                    const uint8_t key[RMPI_AUTH_KEY_BYTES]);
    /* Bytes this rail still has to move to peer: accepted by send/put and not yet delivered
     * (in the provider's queue or the kernel's, unacknowledged). May be NULL (unknown). */
    size_t (*backlog)(rmpi_rail_t *rail, int peer);
    /* Posts this rail accepted that wait in its own queue (refused by the layer below and
     * not handed on yet): only this process's progress moves them. May be NULL (none). */
    int (*queued)(rmpi_rail_t *rail);
    /* Channel kinds (optional, src/chan drives them; NULL: every peer has a dedicated
     * channel, as on tcp). kind: which channel peer's eager frames to this process travel
     * on (RMPI_NET_CHAN_*); the receiver owns that choice. chan_switch: start moving peer's
     * frames to this process onto kind to (0 started, 1 already there or a switch of that
     * peer still in progress, -1 not possible: fixed RMPI_CHANNELS policy or no such peer);
     * it completes in progress, keeping every frame's order. chan_stats: accounting into
     * *st, which the caller zeroes first, so a provider writes only what it counts
     * (ring_bytes, the size classes may stay 0). Version 5: ring_bytes and the size classes
     * joined the struct. */
    int (*chan_kind)(rmpi_rail_t *rail, int peer);
    int (*chan_switch)(rmpi_rail_t *rail, int peer, int to);
    void (*chan_stats)(rmpi_rail_t *rail, struct rmpi_net_chan_stats *st);
    /* The VC's failure detector (both NULL, or both set: then the VC fails a rail that stops
     * while others move; without them only the provider's own timeouts do). watch: bytes
     * sent to peer on this rail that wait for its acknowledgement (0 when nothing is in
     * flight, e.g. the peer's window is closed because it does not read: that is no fault of
     * the rail), and in *moved a counter that grows whenever the peer acknowledged or sent
     * bytes on it. abandon: stop using the connection to peer as if it broke: within the
     * next progress, on_peer_lost(why) and then its pending ops complete with -ECONNRESET. */
    size_t (*watch)(rmpi_rail_t *rail, int peer, uint64_t *moved);
    void (*abandon)(rmpi_rail_t *rail, int peer, const char *why);
    /* A connection to peer that was lost (on_peer_lost reported) is tried again, giving up
     * after timeout_ns (then on_peer_lost once more); on success on_peer_up reports it.
     * Returns 0 when an attempt started, -1 when there is nothing to try (not lost, or
     * still being reported). May be NULL: lost stays lost. */
    int (*rejoin)(rmpi_rail_t *rail, int peer, uint64_t timeout_ns);
    /* A descriptor that polls readable (POLLIN) whenever progress on this rail may find
     * something (a frame, a completion, a connection), so a thread with nothing to do can
     * sleep in poll(2) on it instead of calling progress (the core's asynchronous progress
     * thread, RMPI_ASYNC_PROGRESS). -1, or the op NULL: no such descriptor, the rail must
     * be polled. The descriptor stays the rail's (never closed nor read by the caller). */
    int (*wait_fd)(rmpi_rail_t *rail);
};

extern const struct rmpi_net_ops rmpi_self_ops, rmpi_shm_ops, rmpi_tcp_ops;
/* The documented example provider (template/template.c): not in the provider table, so
 * RMPI_NET never selects it; tests/unit/net/template.c runs it. */
extern const struct rmpi_net_ops rmpi_template_ops;
#ifdef RMPI_HAVE_OFI
extern const struct rmpi_net_ops rmpi_ofi_ops;
/* rmpi_info: the libfabric providers found and what RMPI_NET would use (ofi/ofi_caps.c). */
void rmpi_ofi_report(void *file);
#endif

/* ---- the net layer's own API (net.c): provider table, rail table, progress ---- */
/* Whether ops may be used: its version is RMPI_NET_OPS_VERSION, it has a name and every
 * operation that is not marked optional above, and card/peer_add come together. 0, or -1
 * with the reason in why. rmpi_net_open checks every provider of the table and stops the
 * job naming the provider when one fails. */
int rmpi_net_ops_check(const struct rmpi_net_ops *ops, char *why, size_t len);
int rmpi_net_open(const rmpi_net_env_t *env);
/* Call after the fence that follows rmpi_net_open: phase 0, fence, phase 1. */
int rmpi_net_ready(int phase);
/* After the fence: rails that reach peer (self, shm, tcp, ofi by RMPI_NET), only those of
 * the highest tier among them (hints.tier: ofi over tcp when both reach it). */
int rmpi_net_rails_for(int peer, rmpi_rail_t **rails, int max);
int rmpi_net_progress(void);
/* The rails' wait descriptors (ops->wait_fd) for poll(2), at most max of them: their
 * number, or -1 when some rail has none and must be polled instead (self's frames to this
 * process come only from its own calls and need no descriptor). */
int rmpi_net_wait_fds(int *fds, int max);
/* ---- dynamic peers ---- */
/* This process's business card: "world.rank.node:provider=card;..." (opens tcp if needed).
 * Returns its length, or -1. */
int rmpi_net_card(char *buf, size_t len);
/* The local peer index of the process a card describes: its world rank for a process of
 * this world, the index it got before, or a new one (size, size+1, ...). -1: unusable card
 * or no provider reaches it. *id receives its identity (may be NULL). */
/* key: what connections with that process prove (agreed by the connect/accept exchange,
 * docs/wire/auth.md); kept from the first add of a process. */
int rmpi_net_peer_add(const char *card, rmpi_net_id_t *id, const uint8_t key[RMPI_AUTH_KEY_BYTES]);
/* Connections refused because they did not prove they belong to the job, and peers cut
 * off for a malformed frame: counted by the providers, printed by RMPI_REPORT. */
typedef struct rmpi_net_sec_stats {
    uint64_t refused, malformed;
} rmpi_net_sec_stats_t;
extern rmpi_net_sec_stats_t rmpi_net_sec_stats;
/* Cross-memory copies split between origin and target (shm, RMPI_SHM_CMA_SPLIT): as origin,
 * tails the target copied and tails taken back; as target, tails copied for an origin.
 * MPI_T counters rmpi_split_*, RMPI_REPORT. */
typedef struct rmpi_net_split_stats {
    uint64_t served, claimed, took;
} rmpi_net_split_stats_t;
extern rmpi_net_split_stats_t rmpi_net_split_stats;
/* Number of peer indices in use (world size + dynamic peers). */
int rmpi_net_npeers(void);
rmpi_net_id_t rmpi_net_id_of(int peer);
int rmpi_net_nrails(void);
/* Whether some rail holds posts that only this process's progress hands on (ops->queued):
 * a caller about to block outside progress (a process-manager fence) drives progress
 * until this is 0, or its peers could wait for those frames forever. */
int rmpi_net_queued(void);
/* Bytes of frames the rails copied into queues of their own because the layer below had no
 * room for them (shm: its pending frames, waiting for ring or queue space the receiver
 * frees). A sender that outruns its receiver grows this; the core's blocking sends and
 * collectives wait while it exceeds RMPI_SEND_HELD_MAX (rmpi_core_throttle). */
extern size_t rmpi_net_held;
/* Set by the layer above from inside on_frame when the frame it was given left no receive of
 * its context posted (the one a blocking receive waited for, typically); cleared at the start
 * of each rmpi_net_progress (and by a provider that honours it, at the start of its own
 * progress, so that another rail's frame does not stop it). A provider whose frames wait in shared memory (shm's rings and
 * queue) ends its pass at the next frame while it is set: the frames after it stay where they
 * are until a receive is posted for them and are copied once, straight into that receive,
 * instead of twice through an unexpected-message record (a stream of MPI_Send against one
 * MPI_Recv at a time). Never needed for correctness: every pass still takes at least the
 * frames before it was set, and the next pass reads on. */
extern int rmpi_net_rx_enough;
rmpi_rail_t *rmpi_net_rail(int index);
/* RMPI_REPORT's facts of each rail (ops->rail_facts), one line per rail, or with json the
 * member "rails": [{"rail": name, facts...}] of the rank's object. */
void rmpi_net_report(void *file, int rank, int json);
void rmpi_net_close(void);

/* What the memory-release hooks run before they know the cache holds anything: under
 * AddressSanitizer or ThreadSanitizer that code may run inside the sanitizer's own start-up
 * (its dlsym frees memory), before the shadow memory or thread state that instrumented code
 * uses exists. */
#if defined(__SANITIZE_ADDRESS__)
#define RMPI_NET_HOOK_SAFE __attribute__((no_sanitize_address))
#elif defined(__SANITIZE_THREAD__)
#define RMPI_NET_HOOK_SAFE __attribute__((no_sanitize_thread))
#else
#define RMPI_NET_HOOK_SAFE
#endif

/* ---- registration cache (mrcache.c; hooks in mrcache_hooks.c) ----
 * Callers register through these instead of ops->mr_reg/mr_dereg. On rails whose hints ask
 * for it (and RMPI_MR_CACHE_SIZE > 0), a region that covers [addr, addr + len), is still
 * mapped and was registered before on the same rail is reused; otherwise the page-aligned
 * range is registered and cached. mr->addr/len then describe the cached region. */
int rmpi_net_mr_get(rmpi_rail_t *rail, void *addr, size_t len, rmpi_mr_t *mr);
void rmpi_net_mr_put(rmpi_rail_t *rail, rmpi_mr_t *mr);
/* [addr, addr + len) is going away (any thread, any time). */
void rmpi_net_mr_invalidate(const void *addr, size_t len);
/* Whether the cache holds any entry (the free() hook's fast exit). */
int rmpi_net_mr_cached(void) RMPI_NET_HOOK_SAFE;
/* Deregister every unused entry (before the providers close). */
void rmpi_net_mr_flush(void);
typedef struct rmpi_net_mr_stats {
    uint64_t hits, misses, evictions, invalidations;
    size_t entries, unused_bytes;
} rmpi_net_mr_stats_t;
rmpi_net_mr_stats_t rmpi_net_mr_stats(void);
/* Tests: how the cache finds the rail of an index (default rmpi_net_rail). */
void rmpi_net_mr_cache_set_rails(rmpi_rail_t *(*lookup)(int index));

/* ---- range lists (mrtab.c): disjoint [addr, addr + len), sorted by addr ----
 * A range-list registration (ops->mr_reg_ranges) accepts an access inside one range, or
 * running over ranges that touch each other (MPICH's rule for attached regions, which the
 * message path keeps too), and nothing that meets a gap. A zeroed list is empty. */
typedef struct rmpi_net_range {
    uint64_t addr, len;
} rmpi_net_range_t;
typedef struct rmpi_net_ranges {
    rmpi_net_range_t *r;
    int n, cap;
} rmpi_net_ranges_t;
/* 0 added, -1 when it overlaps one there (or wraps around the address space). */
int rmpi_net_ranges_add(rmpi_net_ranges_t *s, uint64_t addr, uint64_t len);
/* Remove the range starting at addr: 0, or -1 when none starts there. */
int rmpi_net_ranges_remove(rmpi_net_ranges_t *s, uint64_t addr);
/* Whether [addr, addr + len) is covered as above (a binary search, then touching ranges). */
int rmpi_net_ranges_covers(const rmpi_net_ranges_t *s, uint64_t addr, uint64_t len);
void rmpi_net_ranges_free(rmpi_net_ranges_t *s);
/* Register ranges for RDMA on rail (ops->mr_reg_ranges, never cached): 0, or -1 when the
 * rail cannot (native registration: every attached region would need a key of its own). */
int rmpi_net_mr_get_ranges(rmpi_rail_t *rail, const rmpi_net_ranges_t *ranges, rmpi_mr_t *mr);
/* Register exactly [addr, addr + len) (ops->mr_reg, never cached): rmpi_net_mr_put closes
 * it at once, so remote access with its key ends there (a dynamic window's attached region,
 * closed at Win_detach; a cached registration would outlive it). */
int rmpi_net_mr_get_exact(rmpi_rail_t *rail, void *addr, size_t len, rmpi_mr_t *mr);
/* Close such a registration with ops->mr_retire where the rail has it (net.h's contract). */
void rmpi_net_mr_retire(rmpi_rail_t *rail, rmpi_mr_t *mr);

/* ---- registration table of providers that emulate RDMA (mrtab.c) ----
 * Registering is a table entry; the target checks every access with rmpi_net_mrtab_check
 * (0, or -EFAULT when [raddr, raddr + len) is not inside the registration rkey names).
 * A zeroed table is empty. */
typedef struct rmpi_net_mrtab {
    struct rmpi_net_mrslot *slot;
    int n, free; /* free: first free slot + 1; 0: none */
} rmpi_net_mrtab_t;
void rmpi_net_mrtab_reg(rmpi_net_mrtab_t *t, void *addr, size_t len, rmpi_mr_t *mr);
/* A slot that names the range list (owned by the caller, alive until the dereg); checks
 * read it at each access. Its keys carry RMPI_NET_KEY_RANGES. */
void rmpi_net_mrtab_reg_ranges(rmpi_net_mrtab_t *t, const rmpi_net_ranges_t *ranges, rmpi_mr_t *mr);
/* Set in every key of a range-list registration, never in another: only the target can
 * tell whether an access is inside, so an origin's provider asks for the answer of a write
 * with such a key (a refused write must fail the op, not arrive after it completed). */
#define RMPI_NET_KEY_RANGES (UINT64_C(1) << 63)
void rmpi_net_mrtab_dereg(rmpi_net_mrtab_t *t, rmpi_mr_t *mr);
int rmpi_net_mrtab_check(const rmpi_net_mrtab_t *t, uint64_t rkey, uint64_t raddr, uint64_t len);
void rmpi_net_mrtab_free(rmpi_net_mrtab_t *t);
/* A nonzero random key of bits bits (1..64) for a registration: remote keys are never a
 * counter a stranger could guess (docs/wire/auth.md). Batched getrandom. */
uint64_t rmpi_net_random_key(int bits);

#endif
