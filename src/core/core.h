/*
 * core: requests, progress engine, tag matching, eager and rendezvous protocols, header
 * caching, synchronous-mode acknowledgements.
 *
 * Who calls: comm/coll/api. Ranks given to the core are world ranks for destinations and
 * communicator ranks for the source field carried in the header (the receiver matches on
 * it); contexts come from the comm layer.
 * Ownership: requests come from rmpi_req_alloc and go back with rmpi_req_release; a request
 * that the user freed while active is released by the core when it completes.
 * Progress: only inside rmpi_core_progress (called by every blocking/test call). Many
 * rendezvous may be in flight at once; eager sends complete at once (the provider buffers),
 * but nonblocking ones of at least the rail's zc_min bytes when the provider sends them from
 * the user's buffer (send_zc).
 * Threading: every entry point requires the library lock (RMPI_LOCK); wait loops drop it
 * between polls when MPI_THREAD_MULTIPLE is active.
 */
#ifndef RMPI_CORE_H
#define RMPI_CORE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h> /* ABI constants only: wildcards, error classes */

#include "../vc/vc.h"

#define RMPI_ANY_SOURCE MPI_ANY_SOURCE
#define RMPI_ANY_TAG MPI_ANY_TAG
#define RMPI_REQ_MAGIC 0x52514d50u
/* Context ids: WORLD 0/1, SELF 2/3, the finalize barrier 4; communicators from 8 on. */
#define RMPI_CTX_FINALIZE 4u
#define RMPI_CTX_FIRST_FREE 8u
/* Context ids are below this (2^24: 8 million communicators; the queue table of the
 * largest costs 128 MiB). A frame naming a larger one is malformed; a dynamic-process
 * partner that proposes one is refused; a process that would reserve one stops. */
#define RMPI_CTX_MAX (1u << 24)

enum { RMPI_REQ_SEND = 1, RMPI_REQ_RECV, RMPI_REQ_NULLOP, RMPI_REQ_COLL, RMPI_REQ_GREQ /* completed by the application */ };
enum { RMPI_MODE_STD = 0, RMPI_MODE_SYNC, RMPI_MODE_READY, RMPI_MODE_BUFFERED };
enum {
    RMPI_RF_PERSISTENT = 1, /* survives completion; Start re-arms it */
    RMPI_RF_ACTIVE = 2,     /* posted and not yet waited on */
    RMPI_RF_FREED = 4,      /* user freed it while active: release at completion */
    RMPI_RF_CANCELLED = 8,
    RMPI_RF_POSTED = 16,    /* in a posted-receive queue */
    RMPI_RF_SCATTER = 32,   /* receive into non-contiguous memory: data goes through req->scatter */
    RMPI_RF_PARTITIONED = 64, /* Psend_init/Precv_init (api layer, state in req->ext) */
    RMPI_RF_SEGS = 128,     /* req->segs lists the user's memory: a rendezvous moves the data
                             * segment by segment (send: gathered; receive: scattered) */
    RMPI_RF_CANCELLING = 256, /* send: CANCEL sent, its answer not in yet (completion waits) */
    RMPI_RF_HELD = 512,     /* send: completed while CANCELLING; completes at the answer */
    RMPI_RF_ZC = 1024,      /* send: the provider still reads the user's buffer (send_zc) */
};

/* Most data segments a non-contiguous eager send may have (stack room of the caller). */
#define RMPI_CORE_SEG_CAP 128

typedef struct rmpi_req rmpi_req_t;
typedef struct rmpi_unexp rmpi_unexp_t;

struct rmpi_req {
    uint32_t magic;
    uint8_t kind, mode;
    uint16_t flags;
    volatile int done;
    /* what was posted */
    uint32_t ctx;
    int rank;            /* send: destination world rank; recv: source comm rank or ANY */
    int tag;
    int src;             /* send: my rank in the communicator (goes in the header) */
    void *buf;
    size_t len;          /* bytes */
    /* result */
    int st_src, st_tag, st_err;
    size_t st_bytes;     /* bytes delivered */
    size_t st_msglen;    /* bytes the sender sent (larger than st_bytes when truncated) */
    /* protocol state */
    rmpi_list_t link;
    rmpi_vc_t *vc;
    struct rmpi_rndv *rv;  /* rendezvous in progress: registrations, stripes (core_rndv.c) */
    rmpi_net_op_t zop;     /* an eager send from the user's buffer (send_zc): completes the request */
    uint64_t peer_req;
    uint64_t wire_id;      /* how frames of the peer name this request (core_frame.c); 0: none */
    uint64_t seq;          /* send: the VC's unwrapped PSN of its first frame (a cancel names it) */
    /* for the layers above: run at completion (e.g. unpack, bsend space) */
    void (*on_complete)(rmpi_req_t *req);
    /* RMPI_RF_SCATTER receives: deliver n bytes of the message (from the frame, the
     * unexpected copy or a rendezvous landing buffer) into the user's memory. buf is
     * unused; a rendezvous lands in a buffer the core allocates and frees. */
    void (*scatter)(rmpi_req_t *req, const void *data, size_t n);
    /* RMPI_RF_SEGS: the pieces of the user's memory that hold message bytes [off, off + len),
     * in order, at most max of them; returns how many (they may cover less than len). */
    int (*segs)(rmpi_req_t *req, size_t off, size_t len, struct iovec *iov, int max);
    void *user, *user2;
    size_t ucount;
    void *udt;           /* datatype object held by the request (api layer) */
    void *ucomm;         /* communicator object (api layer) */
    void *ext;           /* more state of the layers above (malloc'd; freed with the request) */
    rmpi_req_t *next_free;
    /* The handle the user holds: generation << 32 | slot, 0 when released (rmpi_req_handle). */
    uintptr_t handle;
    uint32_t slot, gen;
};

/* A message that arrived before its receive was posted (also an MPI_Message). */
struct rmpi_unexp {
    rmpi_list_t link;
    uint32_t magic, ctx;
    int src, tag;
    int is_rts;
    rmpi_vc_t *vc;
    size_t len;          /* message bytes */
    uint64_t sreq;       /* sync eager or RTS: the sender's request */
    uint64_t seq;        /* the VC's unwrapped PSN of the frame that brought it */
    int sync;
    int gather;          /* RTS: the sender's data is a segment list (RMPI_FF_GATHER) */
    uint64_t raddr;
    uint32_t nkeys;      /* RTS: one rkey per subchannel of the sender's buffer */
    uint64_t rkeys[RMPI_VC_MAX_SUB];
    char data[];         /* eager payload */
};

/* ---- lock ---- */
extern int rmpi_thread_multiple;
extern pthread_mutex_t rmpi_big_lock;
#define RMPI_LOCK()                                 \
    do {                                            \
        if (RMPI_UNLIKELY(rmpi_thread_multiple))    \
            pthread_mutex_lock(&rmpi_big_lock);     \
    } while (0)
#define RMPI_UNLOCK()                               \
    do {                                            \
        if (RMPI_UNLIKELY(rmpi_thread_multiple))    \
            pthread_mutex_unlock(&rmpi_big_lock);   \
    } while (0)

/* ---- life cycle ---- */
typedef struct rmpi_core_info {
    int rank, size;
    int singleton;
    int appnum;      /* from the process manager (MPI_APPNUM) */
} rmpi_core_info_t;

int rmpi_core_init(rmpi_core_info_t *info);
/* Completes everything still queued, synchronises with every rank, closes the providers. */
int rmpi_core_finalize(void);
extern int rmpi_core_rank, rmpi_core_size;

/* ---- dynamic peers (connect/accept, spawn, join) ---- */
/* This process's business card (net.h rmpi_net_card): length, or -1. */
int rmpi_core_card(char *buf, size_t len);
/* Peer index ("world rank" in groups and communicators) of the process a card names: its
 * rank for this world's processes, else an index >= the world size. -1: unusable card. */
int rmpi_core_peer_add(const char *card, const uint8_t key[RMPI_AUTH_KEY_BYTES]);

/* A layer above found a message of peer (a world or dynamic peer index) malformed: the
 * peer is cut off like one that sent a malformed frame (the job ends, naming it). */
void rmpi_core_peer_cut(int peer, const char *why);

/* ---- requests ---- */
/* Requests live in chunks of RMPI_REQ_CHUNK that are never freed before finalize; slot i is
 * request i % RMPI_REQ_CHUNK of chunk i / RMPI_REQ_CHUNK. A user's request handle is
 * generation << 32 | slot (never below 2^32, so a small made-up value is no request); the
 * generation changes each time the slot is reused, so a stale handle never names the
 * request now in its slot. */
#define RMPI_REQ_CHUNK_BITS 8
#define RMPI_REQ_CHUNK (1u << RMPI_REQ_CHUNK_BITS)
#define RMPI_REQ_CHUNKS_MAX (1u << 16)
extern rmpi_req_t *rmpi_req_chunks[RMPI_REQ_CHUNKS_MAX];
extern uint32_t rmpi_req_nchunks; /* published with release order after the chunk pointer */
/* The live request a handle names, or NULL; callable without the lock. */
static inline rmpi_req_t *rmpi_req_handle(uintptr_t h)
{
    uint32_t i = (uint32_t)h;
    if (RMPI_UNLIKELY(!(h >> 32) || (i >> RMPI_REQ_CHUNK_BITS) >= __atomic_load_n(&rmpi_req_nchunks, __ATOMIC_ACQUIRE)))
        return NULL;
    rmpi_req_t *r = &rmpi_req_chunks[i >> RMPI_REQ_CHUNK_BITS][i & (RMPI_REQ_CHUNK - 1)];
    return r->handle == h ? r : NULL;
}
rmpi_req_t *rmpi_req_alloc(int kind);
void rmpi_req_release(rmpi_req_t *req);
/* Mark done, run the completion hook, release if the user freed it. */
void rmpi_req_complete(rmpi_req_t *req);
/* MPI_Cancel of a send: asks the receiver to withdraw the message while it is unmatched
 * (docs/wire/core.md CANCEL); the request completes at the answer, with RMPI_RF_CANCELLED
 * when it was withdrawn. 0 when nothing can be asked (already matched, or a send from the
 * user's buffer still in the provider's hands). */
int rmpi_core_cancel_send(rmpi_req_t *r);

/* Blocking standard-mode send without a request: sends eagerly and returns 1 when len fits
 * the peer's eager limit, else returns 0 and does nothing (use a request). */
int rmpi_core_send_eager(int dest, uint32_t ctx, int src, int tag, const void *buf, size_t len);
/* A request on the caller's stack for blocking calls (released by simply going out of scope
 * once done; never handed to the user). */
static inline void rmpi_req_init_stack(rmpi_req_t *r, int kind)
{
    r->magic = RMPI_REQ_MAGIC;
    r->kind = (uint8_t)kind;
    r->mode = 0;
    r->flags = 0;
    r->done = 0;
    r->rv = NULL;
    r->wire_id = 0;
    r->on_complete = NULL;
    r->user2 = NULL;
    r->udt = NULL;
    r->link.next = r->link.prev = &r->link;
}

/* Post a send: req->buf/len/rank/ctx/tag/src/mode filled in. Never blocks. */
int rmpi_core_isend(rmpi_req_t *req);
/* Non-contiguous eager sends as a list of segments (the provider gathers them; nothing is
 * packed). rmpi_core_seg_room: how many data segments an eager send of len bytes to world
 * rank dest may have, 0 when it must go by rendezvous (then pack and use rmpi_core_isend).
 * rmpi_core_isend_segs: req as for rmpi_core_isend (len = sum of the segments), iov[0]
 * left for the core's header, iov[1..n] the data, n <= rmpi_core_seg_room(...). */
int rmpi_core_seg_room(int dest, size_t len);
void rmpi_core_isend_segs(rmpi_req_t *req, struct iovec *iov, int n);
/* Rendezvous of non-contiguous data without packing: a send with RMPI_RF_SEGS and
 * req->segs (only when rmpi_core_is_rndv(dest, len); buf unused)
 * hands its segments to the provider's RDMA one run at a time; a receive with
 * RMPI_RF_SCATTER | RMPI_RF_SEGS reads straight into its segments when the sender's data
 * is contiguous (else it lands and is scattered). Worth it only for long pieces: the layer
 * above packs when the mean piece is shorter than rmpi_core_seg_min (RMPI_RNDV_SEG_MIN). */
extern size_t rmpi_core_seg_min;
/* 1 when a message of len bytes to world rank dest goes by rendezvous. */
int rmpi_core_is_rndv(int dest, size_t len);
/* Post a receive: req->buf/len/rank/ctx/tag filled in (or RMPI_RF_SCATTER and req->scatter
 * instead of buf). Never blocks. */
int rmpi_core_irecv(rmpi_req_t *req);
/* Remove a posted receive; returns 1 if it was cancelled (then it is complete). */
int rmpi_core_cancel_recv(rmpi_req_t *req);

/* ---- probe and matched probe ---- */
rmpi_unexp_t *rmpi_core_probe_find(uint32_t ctx, int src, int tag);
/* Take a probed message out of the queue (MPI_Mprobe). */
void rmpi_core_unexp_take(rmpi_unexp_t *u);
/* Receive a message taken with rmpi_core_unexp_take into req (req->buf/len set). */
int rmpi_core_mrecv(rmpi_req_t *req, rmpi_unexp_t *u);

/* ---- progress ---- */
int rmpi_core_progress(void);
/* Work of the layers above that advances with progress (collective schedules, one-sided
 * targets): while set, every progress call runs the hook after the network; it returns
 * nonzero when it advanced something. NULL when idle, so point-to-point pays one
 * predictable branch. Layers register with rmpi_core_hook_add while they have work and
 * remove themselves when idle: with one registered hook rmpi_core_hook is that function,
 * with several a dispatcher that runs each in registration order. */
extern int (*rmpi_core_hook)(void);
#define RMPI_CORE_HOOK_MAX 4
void rmpi_core_hook_add(int (*fn)(void));
void rmpi_core_hook_remove(int (*fn)(void));
/* One step of a blocking wait: progress, and yield the CPU after RMPI_SPIN_COUNT idle polls or RMPI_SPIN_TIME. */
void rmpi_core_wait_step(unsigned *idle);
void rmpi_core_wait(rmpi_req_t *req);

/* ---- for reports and tests ---- */
typedef struct rmpi_core_stats {
    uint64_t eager_full, eager_short, rndv, unexpected;
    uint64_t zc_sends;   /* eager frames the provider sent from the user's buffer (send_zc) */
    /* non-contiguous data: eager sends as segments, sends packed by the layer above,
     * eager receives scattered from the frame, rendezvous receives through a landing buffer */
    uint64_t seg_sends, packed_sends, scattered_recvs, landed_recvs;
    /* rendezvous moved segment by segment: sends gathered, receives read into segments */
    uint64_t seg_rndv_sends, seg_rndv_recvs;
} rmpi_core_stats_t;
extern rmpi_core_stats_t rmpi_core_stats;

#endif
