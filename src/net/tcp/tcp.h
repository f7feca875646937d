/*
 * tcp: private header of the TCP provider (src/net/tcp/). Nothing outside this folder
 * includes it; the provider's only export is rmpi_tcp_ops (net.h).
 *
 * Objects: the provider instance (rmpi_tcp_prov_t) owns this process's address card and
 * what it learnt of each peer (its card and the rail pairing, rmpi_tcp_link_t). It opens
 * one rail (rmpi_tcp_rail_t) per chosen interface and stream, each with its own listening
 * socket, epoll set, table of peers (allocated on first use) and registration table. A
 * peer owns the ordered send queue (txq), the get data it owes (rdq), the put answers it
 * owes (ackq), the gets and puts it is waiting for, and at most two sockets: the
 * established one (conn) and our own connect attempt (pending). Queues live in the peer,
 * not the socket, so abandoning a connect attempt in the handshake race moves nothing:
 * frames are only written once a socket is established.
 * Wire format: docs/wire/tcp.md. Threading: none (the caller holds the library lock).
 */
#ifndef RMPI_TCP_H
#define RMPI_TCP_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "../net.h"

#define RMPI_TCP_MAGIC 0x43544d52u /* the bytes "RMTC" on the wire */
#define RMPI_TCP_WIRE_VERSION 6
#define RMPI_TCP_MAX_IFACES 16
#define RMPI_TCP_MAX_RAILS RMPI_NET_MAX_RAILS
#define RMPI_TCP_MAX_STREAMS 8
/* RMPI_TCP_STREAMS=auto: connections per non-loopback interface (the first and its spares),
 * and the rails they may take in all: a virtual channel holds at most 8 subchannels
 * (RMPI_VC_MAX_SUB), so every interface must still find room there. */
#define RMPI_TCP_AUTO_STREAMS 4
#define RMPI_TCP_AUTO_RAILS 8
/* The largest DATA frame: 1 MiB of eager payload plus the core's header, for the eager
 * limit RMPI_WAN_TUNE raises on long links (src/core/README.md); within a node and on short
 * links the core's frames stay at most RMPI_TCP_LAN_FRAME. */
#define RMPI_TCP_MAX_FRAME (1024 * 1024 + 256)
#define RMPI_TCP_LAN_FRAME (64 * 1024 + 256)
#define RMPI_TCP_BASE_HDR 8
#define RMPI_TCP_MAX_EXT 48
#define RMPI_TCP_HELLO_EXT 48 /* HELLO's extension: identities and the connector's nonce */
#define RMPI_TCP_HDR_MAX (RMPI_TCP_BASE_HDR + RMPI_TCP_MAX_EXT)
#define RMPI_TCP_IOV_MAX 64
/* Receive read-ahead: a read that completes a short frame (or starts a new one) also asks
 * for up to this much more, so a small frame, or a run of them, takes one read; after a
 * long payload only the next header is read ahead. It bounds what reaches a PUT /
 * GET_RESP destination through the receive buffer (a copy) and what is moved to the
 * buffer start when a partial DATA frame would run past its end. */
#define RMPI_TCP_RX_AHEAD 8192
/* Receive buffer (README.md, "Receive buffer"): none while a connection is quiet, RX_MIN
 * from its first read after that (a header and a small eager frame, or a run of small
 * frames), doubled on demand: to fit a frame, and once for each read that filled it (the
 * peer streams faster than we read) up to RXBUF (a LAN-sized frame and its read-ahead),
 * never past RX_MAX (the largest frame). A buffer that stayed empty for RMPI_TCP_BUF_IDLE
 * is freed. */
#define RMPI_TCP_RX_MIN 4096
/* DATA frames at least this long, queued behind output, write that output once they add up
 * to a chunk (tcp_send). */
#define RMPI_TCP_PUSH_MIN 4096
/* Bytes of PUT or GET_RESP frames one write gathers: a put or read longer than a chunk is cut
 * into frames of rail->chunk bytes (so that answers and other frames can pass between them),
 * but several of them leave in one sendmsg as long as the socket takes them. On loopback each
 * write of a stream cost about 20 us on top of its copy (a 1 MiB ping-pong: 4 writes of one
 * chunk 191-221 us median, 1 write of 4 chunks 120-131, Open MPI's one writev 118-149;
 * docs/results/pt2pt.md). */
#define RMPI_TCP_GATHER ((size_t)1 << 20)
/* A put's or read's last piece this short rides in the write before it (tcp_io.c short_tail). */
#define RMPI_TCP_TAIL ((size_t)4096)
#define RMPI_TCP_RXBUF (RMPI_TCP_BASE_HDR + RMPI_TCP_LAN_FRAME + RMPI_TCP_RX_AHEAD)
#define RMPI_TCP_RX_MAX (RMPI_TCP_BASE_HDR + RMPI_TCP_MAX_FRAME + RMPI_TCP_RX_AHEAD)

/* Frame types (docs/wire/tcp.md); values are part of the wire format. */
enum {
    RMPI_TCP_HELLO = 1,
    RMPI_TCP_HELLO_ACK = 2,
    RMPI_TCP_DATA = 3,
    RMPI_TCP_GET_REQ = 4,
    RMPI_TCP_GET_RESP = 5,
    RMPI_TCP_GET_ERR = 6,
    RMPI_TCP_PUT = 7,
    RMPI_TCP_PUT_ERR = 8,
    RMPI_TCP_GOODBYE = 9,
    RMPI_TCP_PUT_ACK = 10,
    RMPI_TCP_CHALLENGE = 11,
    RMPI_TCP_AUTH = 12,
    RMPI_TCP_NTYPES
};

/* Base header flags. */
#define RMPI_TCP_F_ACK 0x01 /* PUT: the put's last frame, and the initiator waits for PUT_ACK */

/* HELLO_ACK status values. */
enum {
    RMPI_TCP_ACK_ACCEPT = 0,
    RMPI_TCP_ACK_RACE = 1,  /* acceptor's own connection wins */
    RMPI_TCP_ACK_DUP = 2,   /* already connected (or closed) */
    RMPI_TCP_ACK_NOTME = 3, /* HELLO meant for another process (rank, size or job differ) */
    RMPI_TCP_ACK_BADVER = 4,
    RMPI_TCP_ACK_LATER = 5 /* a dynamic peer this process has not added yet: retry */
};

/* Little-endian stores and loads: the wire is little-endian whatever the host. */
static inline void rmpi_tcp_st16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void rmpi_tcp_st32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void rmpi_tcp_st64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t rmpi_tcp_ld16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t rmpi_tcp_ld32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}
static inline uint64_t rmpi_tcp_ld64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* Bytes of type-specific header after the 8-byte base header; -1 for unknown types. */
int rmpi_tcp_ext_len(unsigned type);
/* Write base header (+ ext bytes follow at hdr + 8); returns the header length. */
size_t rmpi_tcp_hdr(uint8_t *hdr, unsigned type, uint32_t len);

/* ---- interfaces (tcp_iface.c) ---- */
typedef struct rmpi_tcp_iface {
    char name[32];
    struct in_addr addr, mask;
    int loopback;
    int down; /* listed, but its link was not up (hints.down) */
} rmpi_tcp_iface_t;

/* Interfaces chosen by RMPI_TCP_IFACES (names or addresses; *listed = 1), else by default:
 * loopback alone when every rank shares this node, otherwise every up non-loopback IPv4
 * interface, plus loopback when RMPI_NET=tcp and other ranks share this node. One address
 * per interface, sorted by interface name. Returns the count (0: none usable). */
int rmpi_tcp_iface_choose(rmpi_tcp_iface_t *ifs, int max, int size, int *listed);
/* Bytes one connection keeps in flight: sndbuf (RMPI_TCP_SNDBUF) when set, else half the
 * smaller of net.ipv4.tcp_wmem and tcp_rmem's maximum (the kernel counts its bookkeeping
 * in the buffers: tcp_adv_win_scale); 0 when unknown. */
size_t rmpi_tcp_window(int sndbuf);
/* Link speed in bytes/s from /sys/class/net/<name>/speed; 0 when unknown. */
uint64_t rmpi_tcp_iface_speed(const char *name);
/* SO_SNDBUF for a far peer's socket (RMPI_TCP_FAR_SNDBUF): twice the bandwidth-delay product
 * of a path of round trip rtt_ns at rate bytes/s (rate 0: unknown, cap), at most cap; 0 (keep
 * the kernel's autotuning) below 64 KiB, for a cap <= 0, an unknown round trip, or when the
 * kernel would grant less (grant: net.core.wmem_max, 0 unknown). */
int rmpi_tcp_far_sndbuf(double rtt_ns, double rate, long long cap, long long grant);
/* net.core.wmem_max (what SO_SNDBUF may ask for), bytes; 0 when unknown. */
long long rmpi_tcp_wmem_max(void);

/* ---- address cards and rail matching (tcp_match.c) ---- */
/* One rail of some rank as its card lists it. */
typedef struct rmpi_tcp_entry {
    char name[24]; /* "eth0", or "eth0#1" for stream 1: the rail is "tcp:<name>" */
    int stream;
    struct in_addr addr, mask;
    uint16_t port; /* host order */
    int loopback;
} rmpi_tcp_entry_t;

/* A rank's address card (PMI key tcp-<rank>): its rails in rail order (sorted by interface
 * name, then stream), and whether RMPI_TCP_IFACES chose them. */
typedef struct rmpi_tcp_card {
    int listed;
    int n;
    rmpi_tcp_entry_t e[RMPI_TCP_MAX_RAILS];
} rmpi_tcp_card_t;

/* "L,eth0@10.0.0.1/24:4000,lo@127.0.0.1/8:4001" (L listed, A automatic). Returns the
 * length written, or -1 if it does not fit. */
int rmpi_tcp_card_format(const rmpi_tcp_card_t *card, char *buf, size_t len);
int rmpi_tcp_card_parse(const char *text, rmpi_tcp_card_t *card);
/* Pair the rails of two ranks, a being the lower rank (both sides compute the same pairs
 * from the same two cards). Two rails pair when they carry the same stream number and
 * their addresses share a subnet (under both masks); loopback rails never pair across
 * nodes, identical addresses only within a node; within a node, unless both cards were
 * listed, only loopback rails pair. The pairing keeps both rail orders (the longest such
 * matching, ties broken the same way on both sides), so subchannel k of one rank talks to
 * subchannel k of the other. Without any pair, the first eligible rails of both pair as a
 * routed pair (*routed = 1: the kernel picks the path). pa[i] = the rail of b paired with
 * a's rail i, pb[j] likewise, -1 for none. Returns the number of pairs. */
int rmpi_tcp_match(const rmpi_tcp_card_t *a, const rmpi_tcp_card_t *b, int same_node, int *pa, int *pb, int *routed);

/* ---- objects ---- */
typedef struct rmpi_tcp_rail rmpi_tcp_rail_t;
typedef struct rmpi_tcp_peer rmpi_tcp_peer_t;
typedef struct rmpi_tcp_prov rmpi_tcp_prov_t;

enum { RMPI_TCP_OBJ_LISTENER = 1, RMPI_TCP_OBJ_CONN = 2 };

typedef struct rmpi_tcp_listener {
    int kind; /* RMPI_TCP_OBJ_LISTENER; first: epoll data points here */
    int fd;
    struct sockaddr_in addr;
} rmpi_tcp_listener_t;

/* A queued piece of output: header bytes then data (borrowed, or the copy[] tail).
 * A put waits in txq as a put source (is_put) that the writer cuts into PUT frames of at
 * most rail->chunk bytes, so get data (rdq) and put answers (ackq) can pass between them. */
typedef struct rmpi_tcp_tx {
    rmpi_list_t link;
    size_t hlen, dlen, off; /* off counts over hdr then data */
    const char *data;
    rmpi_net_op_t *op; /* put: completes when its last byte is in the kernel */
    uint64_t put_id;   /* put source and its PUT frames: the put's id */
    int is_put, put_failed;
    int put_ack;          /* put: complete on PUT_ACK (another rail could take it over) */
    int started;          /* part of this frame is already on the wire (a send() remainder) */
    uint64_t raddr, rkey; /* put source: target range still to send */
    size_t psent;
    size_t held; /* bytes of copy[], counted in rmpi_net_held while t lives */
    uint8_t hdr[RMPI_TCP_HDR_MAX];
    char copy[];
} rmpi_tcp_tx_t;

/* A get this process serves (GET_RESP chunks of rail->chunk bytes, or GET_ERR). Replies
 * are not ordered with frames. */
typedef struct rmpi_tcp_rd {
    rmpi_list_t link;
    uint64_t id, rkey;
    const char *base;
    size_t len, sent;
    int err; /* nonzero: answer GET_ERR instead */
} rmpi_tcp_rd_t;

/* A get this process initiated (its answer's frames carry its id: answers to different
 * gets may pass each other), or a put whose bytes are all written and that waits for the
 * target's PUT_ACK (len, got unused). */
typedef struct rmpi_tcp_get {
    rmpi_list_t link;
    uint64_t id;
    char *local;
    size_t len, got;
    rmpi_net_op_t *op;
} rmpi_tcp_get_t;

enum {
    RMPI_TCP_CONN_CONNECTING, /* our non-blocking connect() is in flight */
    RMPI_TCP_CONN_HELLO_SENT, /* connected, HELLO sent, waiting for CHALLENGE */
    RMPI_TCP_CONN_AUTH_SENT,  /* AUTH sent, waiting for HELLO_ACK */
    RMPI_TCP_CONN_ACCEPTED,   /* accepted, waiting for HELLO */
    RMPI_TCP_CONN_CHALLENGED, /* accepted, CHALLENGE sent, waiting for AUTH */
    RMPI_TCP_CONN_ESTABLISHED,
    RMPI_TCP_CONN_DEAD /* fd closed; freed at the end of progress */
};

enum { RMPI_TCP_RX_FRAME, RMPI_TCP_RX_PAYLOAD };

/* A socket's congestion control as settled at the handshake (tcp_conn.c: far_congestion),
 * for RMPI_REPORT: the kernel's smallest round trip then (ns, 0: unknown), whether
 * RMPI_TCP_FAR_CONGESTION was set (1), not wanted (0) or refused (-errno), and the name read
 * back from the socket ("" if unread). */
typedef struct rmpi_tcp_cc {
    uint64_t rtt;
    int far;
    int near;   /* RMPI_TCP_NEAR_CONGESTION set on a near socket (1), not wanted (0), refused (-errno) */
    int sndbuf; /* SO_SNDBUF read back after a far socket's buffer was set; 0: autotuned */
    char name[16];
} rmpi_tcp_cc_t;

typedef struct rmpi_tcp_conn {
    int kind; /* RMPI_TCP_OBJ_CONN; first: epoll data points here */
    int fd, state;
    uint32_t events; /* current epoll interest */
    rmpi_tcp_rail_t *rail;
    rmpi_tcp_peer_t *peer; /* NULL for an accepted socket before its HELLO */
    rmpi_list_t link;      /* rail->handshaking, rail->estab or rail->dead */
    uint64_t deadline;     /* connect attempt or HELLO wait gives up at this time */
    /* Handshake transcript (docs/wire/auth.md): HELLO's extension, then the acceptor's
     * nonce; both MACs cover it. hs_peer: the peer an accepted socket's HELLO named. */
    uint8_t hs[RMPI_TCP_HELLO_EXT + RMPI_AUTH_NONCE_BYTES];
    int hs_peer;
    uint64_t hs_t;    /* when our handshake frame that the peer answers left (HELLO or CHALLENGE) */
    rmpi_tcp_cc_t cc; /* its congestion control, settled at the handshake */
    int shut_wr;      /* close(): GOODBYE written and write side shut */

    /* Receive side: frames are parsed from rxbuf[rx_pos, rx_end); a PUT / GET_RESP payload
     * (RX_PAYLOAD) is read straight into rx_dst, or read and dropped (rx_discard). */
    int rx_phase;
    unsigned rx_type; /* RX_PAYLOAD: the frame whose payload it is */
    char *rxbuf;      /* DATA frames are delivered in place from here */
    size_t rxcap, rx_pos, rx_end;
    char *rx_dst; /* where the payload goes */
    size_t rx_plen, rx_pgot;
    int rx_discard;               /* payload of a refused put: read and drop */
    int rx_grow;                  /* a read filled the buffer: double it (up to RXBUF) once */
    int rx_hs;                    /* the buffer holds handshake frames: freed once established */
    uint64_t rx_mark, rx_mark_ns; /* rxb at the last buffer sweep that saw it move, and when */
    uint64_t rx_refused_put;      /* id of the last refused put: its later frames are dropped quietly */
    uint64_t rx_put_id;           /* RX_PAYLOAD of a PUT: its put, and whether to answer PUT_ACK */
    int rx_put_ack;
    rmpi_tcp_get_t *rx_get; /* GET_RESP target */
    /* A DATA frame placed (env.frame_dst): its headers, kept for on_frame_placed. rx_noplace:
     * the frame at rx_pos was offered and refused (it is read whole), so it is not offered
     * again at every read. */
    uint8_t rx_head[RMPI_NET_PLACE_HEAD];
    size_t rx_head_len;
    int rx_noplace;
    size_t rx_last; /* the last DATA frame's bytes */

    /* Stall detection (established sockets): bytes moved either way, and the count and
     * time at the last check that saw the socket idle or moving. */
    uint64_t moved, mark_moved, mark_ns;
    uint64_t path_moved; /* moved at the last TCP_INFO round-trip poll */
    uint64_t txb, rxb;   /* bytes written / read: the VC's failure detector (rmpi_tcp_watch) */
    int wrote;           /* bytes written since the kernel's send queue was last seen empty */
    int keepalive;       /* SO_KEEPALIVE is on (only while waiting) */
} rmpi_tcp_conn_t;

enum {
    RMPI_TCP_PEER_IDLE,       /* never used */
    RMPI_TCP_PEER_CONNECTING, /* attempt in flight or waiting to retry */
    RMPI_TCP_PEER_ESTABLISHED,
    RMPI_TCP_PEER_CLOSED, /* orderly GOODBYE seen (or sent and answered) */
    RMPI_TCP_PEER_LOST
};

struct rmpi_tcp_peer {
    int rank, state;
    rmpi_tcp_conn_t *conn;    /* established socket */
    rmpi_tcp_conn_t *pending; /* our own connect attempt, if any */
    rmpi_tcp_cc_t cc;         /* the last established socket's congestion control */
    rmpi_list_t txq;          /* ordered frames and put data */
    rmpi_list_t rdq;          /* get data we owe, interleaved with txq */
    rmpi_list_t ackq;         /* PUT_ACK / PUT_ERR and whole small-read answers we owe, ahead of the rest */
    rmpi_list_t gets;         /* gets we wait for, in request order */
    rmpi_list_t puts;         /* puts written out, waiting for PUT_ACK */
    rmpi_tcp_tx_t *cur_chunk; /* a GET_RESP or PUT frame being written: finish it first */
    rmpi_list_t cutq;         /* further frames cut from put or read sources with it, not yet begun:
                               * they follow it on the wire before anything else is cut */
    int rd_turn;              /* alternation between txq and rdq */
    int soon;                 /* in the rail's soon list (rmpi_tcp_write_soon) */
    size_t push_due;          /* DATA bytes queued by send since it last wrote the queue (tcp_send) */

    int have_card, naddr, addr_next;
    int target; /* the peer's rail this rail is paired with (its card index) */
    struct sockaddr_in addr[RMPI_TCP_MAX_RAILS];
    struct sockaddr_in src; /* source to bind (sin_family 0: none, a routed pair) */

    rmpi_list_t timer_link; /* in rail->timed while a retry or attempt timeout is due */
    uint64_t deadline;      /* give up connecting at this time */
    uint64_t retry_at;      /* start the next attempt at this time (0: none) */
    unsigned backoff_ms;

    rmpi_list_t lost_link; /* in rail->lostq until on_peer_lost is reported */
    char lost_why[256];
    int goodbye_sent;
    /* Connection epochs (docs/wire/tcp.md): the current (or last) connection's, and the
     * last one this side proposed in a HELLO; each proposal is higher than both. */
    uint32_t epoch, try_epoch;
    rmpi_list_t back_link; /* in rail->backq until on_peer_up is reported */
};

/* What this process knows of one peer: its card and which of its rails pairs with each
 * of ours (same on every rail, so it lives in the provider). */
typedef struct rmpi_tcp_link {
    int ok;           /* 1: card read and matched; -1: no usable card */
    rmpi_net_id_t id; /* the peer's identity (world tag, rank in its world) */
    int routed, npairs;
    int partner[RMPI_TCP_MAX_RAILS]; /* our rail i -> the peer's card index, -1: none */
    rmpi_tcp_card_t card;
    int has_key; /* dynamic peer: key is what its connections prove */
    uint8_t key[RMPI_AUTH_KEY_BYTES];
} rmpi_tcp_link_t;

/* The provider in this process: the rails it opened, indexed like its card. */
struct rmpi_tcp_prov {
    rmpi_net_env_t env;
    rmpi_tcp_card_t me;
    rmpi_tcp_rail_t *rails[RMPI_TCP_MAX_RAILS]; /* NULL once closed */
    int nrails, open_rails;
    int dynamic;             /* opened after init for dynamic peers: no PMI card */
    int npeers;              /* entries of links and of every rail's peers (grows) */
    rmpi_tcp_link_t **links; /* npeers entries: world peers filled on first use, dynamic
                                 * peers by peer_add */
    /* Memory per peer (peers, sockets, receive buffers of every rail) now and at most: the
     * channel accounting (chan_stats, RMPI_REPORT). */
    size_t mem, mem_peak;
    /* The gate (tcp_ops.c): one epoll set holding every rail's epoll fd, so the rails that
     * sleep (quiet ones while another carries the traffic, spare streams nobody woke) are
     * looked at by one epoll_wait for all, every QUIET_EVERY calls of the gate rail. */
    int gate_fd;         /* -1: no gate, each sleeping rail polls for itself */
    int gate_idx;        /* the rail whose progress runs the gate (the first open one) */
    unsigned gate_calls; /* progress calls of the gate rail */
    int gate_busy;       /* at the last gate: some rail found something lately */
};

static inline void rmpi_tcp_mem_add(rmpi_tcp_prov_t *prov, size_t add, size_t sub)
{
    prov->mem = prov->mem + add - sub;
    if (prov->mem > prov->mem_peak)
        prov->mem_peak = prov->mem;
}

/* Grow links and every rail's peers to n entries. */
void rmpi_tcp_grow(rmpi_tcp_prov_t *prov, int n);
/* Whether this process orders before peer (world tag, then rank): the pairing's "a" side
 * and the winner of a connect race. */
int rmpi_tcp_lower(rmpi_tcp_prov_t *prov, int peer);
/* A dynamic peer (net.h peer_add): its identity and TCP card; 0, or -1 when unusable. */
int rmpi_tcp_peer_add(rmpi_tcp_prov_t *prov, int peer, const rmpi_net_id_t *id, int same_node, const char *card,
                      const uint8_t key[RMPI_AUTH_KEY_BYTES]);
/* Local index of the dynamic peer with identity id, -1 when not added. */
int rmpi_tcp_find(const rmpi_tcp_prov_t *prov, uint32_t world, int rank);

/* The pairing with peer (reads and matches its card on first use); NULL if it has none. */
const rmpi_tcp_link_t *rmpi_tcp_link(rmpi_tcp_prov_t *prov, int peer);

struct rmpi_tcp_rail {
    rmpi_rail_t pub; /* first: rmpi_rail_t * converts back */
    rmpi_tcp_prov_t *prov;
    int idx;                    /* index in prov->rails and in our card */
    const rmpi_tcp_entry_t *me; /* our card entry for this rail */
    rmpi_net_env_t env;
    int epfd;
    rmpi_tcp_listener_t lis;
    rmpi_tcp_peer_t **peers; /* prov->npeers entries, allocated on first use */
    rmpi_tcp_peer_t **soon;  /* peers whose queued output the next progress writes */
    int nsoon, capsoon;
    rmpi_list_t handshaking; /* accepted sockets waiting for HELLO */
    rmpi_list_t estab;       /* established sockets */
    int nestab, nconn;       /* established / all live sockets */
    unsigned direct_polls;   /* progress calls since the last epoll_wait */
    unsigned quiet;          /* progress calls in a row that found nothing */
    rmpi_list_t timed;       /* peers with a connect timer */
    rmpi_list_t dead;        /* closed sockets, freed at the end of progress */
    rmpi_list_t lostq;       /* peers whose loss is not yet reported */
    rmpi_list_t backq;       /* peers whose new connection is not yet reported (on_peer_up) */
    uint64_t next_id;
    uint32_t job_tag; /* hash of env.jobid, checked in HELLO */
    size_t chunk;
    size_t place_min; /* RMPI_TCP_PLACE (0: never) */
    int sndbuf;
    uint64_t speed;     /* the interface's speed, bytes/s (0: unknown): far sockets' buffers */
    long long wmem_max; /* net.core.wmem_max in this rank's namespace (0: unknown) */
    uint64_t timeout_ns;
    int in_progress, closing;
    unsigned idle_polls; /* a spare rail without sockets: progress calls since its last epoll_wait */
    int gate_ready;      /* the gate saw this rail's epoll fd ready (or its sweep is due) */

    /* Stall detection: RMPI_RAIL_TIMEOUT, looked at every STALL_CHECK_NS of progress. */
    uint64_t stall_ns, last_check;
    uint64_t last_path; /* last rmpi_tcp_path_poll */
    /* Receive buffers empty for buf_idle_ns (RMPI_TCP_BUF_IDLE, 0: kept) are freed by a
     * sweep every rmpi_tcp_buf_sweep_ns(buf_idle_ns) (src/net/net_mem.c). */
    uint64_t buf_idle_ns, buf_sweep_ns, last_sweep;
    unsigned check_calls;

    rmpi_net_mrtab_t mr; /* registrations (../mrtab.c): rkeys never carry an address */

    /* Completions wait here until the end of progress: net.h allows callbacks only there. */
    rmpi_net_op_t **done;
    int ndone, capdone;

    uint64_t stat_frames_tx, stat_frames_rx, stat_bytes_tx, stat_bytes_rx;
};

static inline rmpi_tcp_rail_t *rmpi_tcp_rail_of(rmpi_rail_t *rail) { return (rmpi_tcp_rail_t *)rail; }

/* ---- peers and connections (tcp_conn.c) ---- */
rmpi_tcp_peer_t *rmpi_tcp_peer_get(rmpi_tcp_rail_t *r, int rank);
/* Start connecting if nothing is in flight (first use). */
void rmpi_tcp_peer_kick(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p);
/* The connection to p broke: close its sockets now, report and fail its ops later. */
void rmpi_tcp_peer_fail(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Orderly end: GOODBYE received, or our GOODBYE answered by EOF. */
void rmpi_tcp_peer_closed(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p);
void rmpi_tcp_conn_kill(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c);
/* A read or write on c failed (err = errno, 0 for EOF): retry, drop or fail per state. */
void rmpi_tcp_conn_broken(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, int err);
void rmpi_tcp_accept(rmpi_tcp_rail_t *r, rmpi_tcp_listener_t *l);
/* Handle epoll events of a socket in any state; returns frames delivered. */
int rmpi_tcp_conn_event(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, uint32_t ev);
void rmpi_tcp_on_hello(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, const uint8_t *ext);
void rmpi_tcp_on_hello_ack(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, const uint8_t *ext);
void rmpi_tcp_on_challenge(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, const uint8_t *ext);
void rmpi_tcp_on_auth(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, const uint8_t *ext);
void rmpi_tcp_timers(rmpi_tcp_rail_t *r);
/* Report deferred losses and free dead sockets: only at the end of progress. */
void rmpi_tcp_reap(rmpi_tcp_rail_t *r);
/* Set c's epoll interest (in the epoll set of c's rail). */
void rmpi_tcp_set_events(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, uint32_t events);
/* Break established sockets that had work waiting and moved nothing for RMPI_RAIL_TIMEOUT
 * while the peer's host stayed silent (progress calls it every STALL_CHECK_NS at most). */
void rmpi_tcp_stall_check(rmpi_tcp_rail_t *r, uint64_t now);
#define RMPI_TCP_STALL_CHECK_NS 100000000ull
/* ops->watch / ops->abandon (net.h) for the VC's failure detector. */
size_t rmpi_tcp_watch(rmpi_rail_t *rail, int peer, uint64_t *moved);
/* The peer's advertised window of socket fd (bytes), or -1 when the kernel does not say
 * (tcp_info.c). */
long rmpi_tcp_snd_wnd(int fd);
/* The kernel's smallest round-trip sample on the socket (tcpi_min_rtt), ns; 0 when unknown. */
uint64_t rmpi_tcp_min_rtt_ns(int fd);
void rmpi_tcp_abandon(rmpi_rail_t *rail, int peer, const char *why);
int rmpi_tcp_rejoin(rmpi_rail_t *rail, int peer, uint64_t timeout_ns);
/* p's loss, if not reported yet: its ops fail, then env.on_peer_lost (inside progress). */
void rmpi_tcp_report_lost(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p);
/* env.on_peer_up for every connection established since the last call (after the
 * progress's completions, so the old connection's failed ops are seen first). */
void rmpi_tcp_report_up(rmpi_tcp_rail_t *r);
/* Round trips: the kernel's estimate of every socket that moved bytes since the last look,
 * reported (env.on_rtt) at most this often; an idle socket's estimate does not change. */
#define RMPI_TCP_PATH_NS 100000000ull
void rmpi_tcp_path_poll(rmpi_tcp_rail_t *r, uint64_t now);
void rmpi_tcp_sockopts(rmpi_tcp_rail_t *r, int fd);
void rmpi_tcp_peer_free(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p);

/* ---- output and input (tcp_io.c) ---- */
rmpi_tcp_tx_t *rmpi_tcp_tx_new(size_t copy_len);
/* Frees t, taking a copy's bytes off rmpi_net_held. */
void rmpi_tcp_tx_free(rmpi_tcp_tx_t *t);
/* Queue a header-only control frame at the tail (or the head, for HELLO_ACK). */
void rmpi_tcp_queue_ctrl(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, const uint8_t *hdr, size_t hlen, int front);
void rmpi_tcp_queue_tx(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, rmpi_tcp_tx_t *t);
int rmpi_tcp_has_output(const rmpi_tcp_peer_t *p);
/* Output queued, or gets / puts waiting for the peer's answer. */
int rmpi_tcp_has_work(const rmpi_tcp_peer_t *p);
/* Bytes written to / read from c's socket: statistics and stall detection. */
static inline void rmpi_tcp_count_tx(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, size_t n)
{
    r->stat_bytes_tx += n;
    c->moved += n;
    c->txb += n;
    c->wrote = 1;
}
static inline void rmpi_tcp_count_rx(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, size_t n)
{
    r->stat_bytes_rx += n;
    c->moved += n;
    c->rxb += n;
}
/* Queue t (established peer: written by the next progress without asking epoll for
 * EPOLLOUT, so a burst of small frames costs one writev and no epoll_ctl), else as
 * rmpi_tcp_queue_tx. rmpi_tcp_write_soon: the same for output already queued. */
void rmpi_tcp_queue_soon(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, rmpi_tcp_tx_t *t);
/* A DATA frame's place in txq: behind every frame queued before it, but ahead of the put
 * sources at the tail that complete on PUT_ACK (hints.put_landed: nothing sent after such a
 * put needs to follow it). Otherwise the VC's control frames (RTS, CTS, FIN) waited behind
 * every stripe queued on the rail: at 10:1 with 8 x 4 MiB in flight, 20 MB on the fast rail,
 * 170 ms, and the window drained (rmpi_tcp_queue_soon when small frames wait there). */
void rmpi_tcp_queue_frame(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, rmpi_tcp_tx_t *t);
void rmpi_tcp_write_soon(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p);
/* Write the output of the soon list (start of every progress). */
void rmpi_tcp_drain_soon(rmpi_tcp_rail_t *r);
/* Have progress write p's queued output once the socket takes it (EPOLLOUT interest). */
void rmpi_tcp_want_output(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p);
/* Write queued output: about one chunk, less if the socket fills; failures mark the peer lost. */
void rmpi_tcp_flush(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p);
/* True when p's socket takes new output directly (established, nothing queued before it). */
int rmpi_tcp_can_write_now(const rmpi_tcp_peer_t *p);
/* One sendmsg of hdr + iov (MSG_NOSIGNAL). Returns bytes written, 0 on EAGAIN, -errno. */
ssize_t rmpi_tcp_writev(int fd, const void *hdr, size_t hlen, const struct iovec *iov, int iovcnt);
/* Read and dispatch frames; returns frames handled (stops at EAGAIN or a budget). */
int rmpi_tcp_read(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c);
/* Free the receive buffers of established sockets that read nothing for buf_idle_ns. */
void rmpi_tcp_buf_sweep(rmpi_tcp_rail_t *r, uint64_t now);
/* Free c's receive buffer (and count it). */
void rmpi_tcp_rx_free(rmpi_tcp_conn_t *c);
/* Fail every op still queued or outstanding for p with status (after a loss or close). */
void rmpi_tcp_fail_ops(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, int status);

/* ---- registrations and emulated RDMA (tcp_rdma.c) ---- */
int rmpi_tcp_mr_reg(rmpi_rail_t *rail, void *addr, size_t len, rmpi_mr_t *mr);
int rmpi_tcp_mr_reg_ranges(rmpi_rail_t *rail, const rmpi_net_ranges_t *ranges, rmpi_mr_t *mr);
void rmpi_tcp_mr_dereg(rmpi_rail_t *rail, rmpi_mr_t *mr);
int rmpi_tcp_get(rmpi_rail_t *rail, int peer, void *local, size_t len, uint64_t raddr, uint64_t rkey,
                 rmpi_net_op_t *op);
int rmpi_tcp_put(rmpi_rail_t *rail, int peer, const void *local, size_t len, uint64_t raddr, uint64_t rkey,
                 rmpi_net_op_t *op);
/* Target side: a GET_REQ arrived (queue the response) / a PUT header arrived (set rx_dst). */
void rmpi_tcp_on_get_req(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, const uint8_t *ext);
void rmpi_tcp_on_put_hdr(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, const uint8_t *ext);
/* Initiator side: a GET_RESP header (sets rx_dst), its payload done, errors from the target. */
int rmpi_tcp_on_get_resp(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, const uint8_t *ext, size_t len);
void rmpi_tcp_get_data_done(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c);
void rmpi_tcp_on_get_err(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, const uint8_t *ext);
void rmpi_tcp_on_put_err(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, const uint8_t *ext);
void rmpi_tcp_on_put_ack(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, const uint8_t *ext);
/* Target side: a put's last frame landed (answer PUT_ACK) or a put was refused (PUT_ERR). */
void rmpi_tcp_put_answer(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, unsigned type, uint64_t id, int err);
/* Initiator side: the last frame of a put is written; it completes now, or on PUT_ACK. */
void rmpi_tcp_put_written(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, rmpi_tcp_tx_t *t);
/* Next get data frame from p's rdq as a tx item (NULL if none). */
rmpi_tcp_tx_t *rmpi_tcp_rd_next_chunk(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p);
/* Next PUT frame cut from the put source t at the head of txq (removes t after the last;
 * a refused put is completed instead and NULL returned). */
rmpi_tcp_tx_t *rmpi_tcp_put_next_chunk(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, rmpi_tcp_tx_t *t);

/* Stamp op complete now; its callback runs from rmpi_tcp_run_completions. */
void rmpi_tcp_op_done(rmpi_tcp_rail_t *r, rmpi_net_op_t *op, int status);
void rmpi_tcp_run_completions(rmpi_tcp_rail_t *r);

#endif
