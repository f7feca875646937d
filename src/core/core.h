/*
 * core: requests, progress engine, tag matching, eager and rendezvous protocols, header
 * caching, synchronous-mode acknowledgements.
 *
 * Who calls: comm/coll/api. Ranks given to the core are world ranks for destinations and
 * communicator ranks for the source field carried in the header (the receiver matches on
 * it); contexts come from the comm layer. Data is a byte range, or the user's (buf, count,
 * datatype) as the bindings got it (RMPI_RF_TYPED): the core alone chooses how a message
 * travels, and reads datatypes only through rmpi_core_types (set before rmpi_core_init).
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
#include <stdio.h>
#include <stdint.h>

#include <mpi.h> /* ABI constants only: wildcards, error classes */

#include "../vc/vc.h"

#define RMPI_ANY_SOURCE MPI_ANY_SOURCE
#define RMPI_ANY_TAG MPI_ANY_TAG
#define RMPI_REQ_MAGIC 0x52514d50u
/* Context ids: WORLD 0/1, SELF 2/3, the finalize barrier 4, the site probe 5;
 * communicators from 8 on. */
#define RMPI_CTX_FINALIZE 4u
#define RMPI_CTX_SITES 5u /* the site probe at MPI_Init (core_sites.c) */
#define RMPI_CTX_FIRST_FREE 8u
/* Context ids are below this (2^24: 8 million communicators; the queue table of the
 * largest costs 128 MiB). A frame naming a larger one is malformed; a dynamic-process
 * partner that proposes one is refused; a process that would reserve one stops. */
#define RMPI_CTX_MAX (1u << 24)

enum {
    RMPI_REQ_SEND = 1,
    RMPI_REQ_RECV,
    RMPI_REQ_NULLOP,
    RMPI_REQ_COLL,
    RMPI_REQ_GREQ /* completed by the application */
};
enum { RMPI_MODE_STD = 0, RMPI_MODE_SYNC, RMPI_MODE_READY, RMPI_MODE_BUFFERED };
enum {
    RMPI_RF_PERSISTENT = 1, /* survives completion; Start re-arms it */
    RMPI_RF_ACTIVE = 2,     /* posted and not yet waited on */
    RMPI_RF_FREED = 4,      /* user freed it while active: release at completion */
    RMPI_RF_CANCELLED = 8,
    RMPI_RF_POSTED = 16,      /* in a posted-receive queue */
    RMPI_RF_SCATTER = 32,     /* TYPED receive: data goes to the user's memory by unpacking (core_data.c) */
    RMPI_RF_PARTITIONED = 64, /* Psend_init/Precv_init (core_part.c, state in req->ext) */
    RMPI_RF_SEGS = 128,       /* a rendezvous moves the data piece by piece of the user's memory
                             * (send: gathered; receive: scattered; core_data.c) */
    RMPI_RF_CANCELLING = 256, /* send: CANCEL sent, its answer not in yet (completion waits) */
    RMPI_RF_HELD = 512,       /* send: completed while CANCELLING; completes at the answer */
    RMPI_RF_ZC = 1024,        /* send: the provider still reads the user's buffer (send_zc) */
    RMPI_RF_TYPED = 2048,     /* the data is ucount elements of the datatype udt at user, not one
                             * byte range: the core lists, packs or scatters it (core_data.c) */
    RMPI_RF_FRAGS = 4096,     /* send: a rendezvous of short pieces, asking the receiver for DATA
                             * frames (RTS with FRAGS; core_frag.c) */
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
    int rank; /* send: destination world rank; recv: source comm rank or ANY */
    int tag;
    int src; /* send: my rank in the communicator (goes in the header) */
    void *buf;
    size_t len; /* bytes */
    /* result */
    int st_src, st_tag, st_err;
    size_t st_bytes;  /* bytes delivered */
    size_t st_msglen; /* bytes the sender sent (larger than st_bytes when truncated) */
    /* protocol state */
    rmpi_list_t link;
    rmpi_vc_t *vc;
    struct rmpi_rndv *rv; /* rendezvous in progress: registrations, stripes (core_rndv.c) */
    rmpi_net_op_t zop;    /* an eager send from the user's buffer (send_zc): completes the request */
    uint64_t peer_req;
    uint64_t wire_id;             /* how frames of the peer name this request (core_frame.c); 0: none */
    uint64_t seq;                 /* send: the VC's unwrapped PSN of its first frame (a cancel names it) */
    size_t frag_done, frag_limit; /* rendezvous by DATA frames (core_frag.c): bytes sent or
                                   * received, and the receiver's credit (bytes it allows) */
    /* for the layers above: run at completion (e.g. releasing the datatype, bsend space) */
    void (*on_complete)(rmpi_req_t *req);
    void *user, *user2; /* RMPI_RF_TYPED: the user's buffer in user */
    size_t ucount;      /* RMPI_RF_TYPED: elements */
    void *udt;          /* datatype object (RMPI_RF_TYPED: read through rmpi_core_types); the api
                          * layer holds the reference */
    void *ucomm;        /* communicator object (api layer) */
    void *ext;          /* more state of the layers above (malloc'd; freed with the request) */
    rmpi_req_t *next_free;
    /* The handle the user holds: generation << 32 | slot, 0 when released (rmpi_req_handle). */
    uintptr_t handle;
    uint32_t slot, gen;
};

/* A message that arrived before its receive was posted (also an MPI_Message). */
struct rmpi_unexp {
    rmpi_list_t link;
    rmpi_list_t slink; /* on its context's list of its source's bucket (ctxq_t by_src) */
    uint32_t magic, ctx;
    int src, tag;
    int is_rts;
    int pool; /* its record size class + 1 (unexp_alloc), 0: not pooled */
    rmpi_vc_t *vc;
    size_t len;    /* message bytes */
    uint64_t sreq; /* sync eager or RTS: the sender's request */
    uint64_t seq;  /* the VC's unwrapped PSN of the frame that brought it */
    int sync;
    int gather; /* RTS: its RMPI_FF_GATHER and RMPI_FF_FRAGS flags */
    uint64_t raddr;
    uint32_t nkeys; /* RTS: one rkey per subchannel of the sender's buffer */
    uint64_t rkeys[RMPI_VC_MAX_SUB];
    char data[]; /* eager payload */
};

/* ---- lock ---- */
extern int rmpi_thread_multiple;
extern pthread_mutex_t rmpi_big_lock;
#define RMPI_LOCK()                              \
    do {                                         \
        if (RMPI_UNLIKELY(rmpi_thread_multiple)) \
            pthread_mutex_lock(&rmpi_big_lock);  \
    } while (0)
#define RMPI_UNLOCK()                             \
    do {                                          \
        if (RMPI_UNLIKELY(rmpi_thread_multiple))  \
            pthread_mutex_unlock(&rmpi_big_lock); \
    } while (0)

/* The asynchronous progress thread (RMPI_ASYNC_PROGRESS, core_async.c). wanted: the knob
 * (read after rmpi_core_init); then rmpi_thread_multiple must be set before start, whatever
 * thread level the user asked for. start: once everything progress touches exists (after
 * the layers above are initialised); the thread passes progress under rmpi_big_lock and
 * releases it between passes. stop: joins it; call without the lock held and before
 * anything it touches is torn down (rmpi_core_finalize). Both are idempotent. */
int rmpi_core_async_wanted(void);
/* Idle polls of application threads' waits under rmpi_thread_multiple (written under the
 * lock, read by the progress thread without it): while it grows, an application thread
 * drives progress itself and the progress thread sleeps instead of contending for the lock. */
extern unsigned rmpi_core_app_polls;
int rmpi_core_async_start(void);
void rmpi_core_async_stop(void);

/* ---- life cycle ---- */
typedef struct rmpi_core_info {
    int rank, size;
    int singleton;
    int appnum; /* from the process manager (MPI_APPNUM) */
} rmpi_core_info_t;

int rmpi_core_init(rmpi_core_info_t *info);
/* Completes everything still queued, synchronises with every rank, closes the providers. */
int rmpi_core_finalize(void);
/* Keys a layer above adds to this rank's RMPI_REPORT=json object (docs/report.md), each
 * written as `, "key": value`; called by rmpi_core_finalize when set. */
extern void (*rmpi_core_report_json)(FILE *f);
/* RMPI_SITES=auto on several nodes (rmpi_topo_sites_pending): measure the round trips
 * between nodes and give them to rmpi_topo_sites_measured; every rank calls it (a PMI
 * fence). Called at the end of rmpi_core_init. */
int rmpi_core_sites_probe(void);
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

/* How the core reads the data of a datatype it does not know (the datatype layer, above,
 * fills the table: rmpi_dtype_core_ops; set before rmpi_core_init). The core decides what
 * to do with the data of an RMPI_RF_TYPED request (a segment list, pieces, a packed copy,
 * a scatter on arrival) and calls these only to move or list the bytes. Positions are byte
 * offsets of the packed stream of count elements of type at buf. */
typedef struct rmpi_core_type_ops {
    /* Copy stream bytes [off, off + len) to out. */
    void (*pack)(const void *buf, size_t count, const void *type, size_t off, void *out, size_t len);
    /* Scatter len stream bytes, starting at stream byte off, from in into buf. */
    void (*unpack)(const void *in, size_t len, void *buf, size_t count, const void *type, size_t off);
    /* The pieces of buf holding stream bytes [off, off + len), in order, at most max;
     * returns how many and sets *reached to the stream offset they cover up to. */
    int (*pieces)(const void *buf, size_t count, const void *type, size_t off, size_t len, struct iovec *iov, int max,
                  size_t *reached);
    /* Mean length of the type's pieces (whether a rendezvous goes piece by piece). */
    size_t (*mean_piece)(const void *type);
} rmpi_core_type_ops_t;
extern const rmpi_core_type_ops_t *rmpi_core_types;

/* Post a send: req->rank/ctx/tag/src/mode filled in, and the data: len bytes at buf, or
 * with RMPI_RF_TYPED ucount elements of udt at user (len = their bytes). The core chooses
 * the protocol: eager or rendezvous by the peer's limits; typed data as a segment list
 * the provider gathers, as pieces moved one RDMA op each, or packed (core_data.c). Never
 * blocks. A persistent request is posted again as it is (the caller resets st_err and
 * RMPI_RF_CANCELLED). */
int rmpi_core_isend(rmpi_req_t *req);
/* Post a receive: req->rank/ctx/tag filled in, the data as for rmpi_core_isend (typed
 * data is unpacked into the user's memory as it arrives, or read piece by piece). */
int rmpi_core_irecv(rmpi_req_t *req);
/* Remove a posted receive; returns 1 if it was cancelled (then it is complete). */
int rmpi_core_cancel_recv(rmpi_req_t *req);

/* ---- probe and matched probe ---- */
rmpi_unexp_t *rmpi_core_probe_find(uint32_t ctx, int src, int tag);
/* Take a probed message out of the queue (MPI_Mprobe). */
void rmpi_core_unexp_take(rmpi_unexp_t *u);
/* Receive a message taken with rmpi_core_unexp_take into req (its data as for rmpi_core_irecv). */
int rmpi_core_mrecv(rmpi_req_t *req, rmpi_unexp_t *u);

/* ---- messages served where they land ---- */
/* A layer above may take the eager messages of one context as they are delivered, with no
 * unexpected copy, probe or receive (the one-sided target, rma/target.c). fn(arg, peer,
 * src, tag, data, len) runs during progress for each eager message on ctx that matched no
 * posted receive, is not synchronous, and finds nothing of ctx in the unexpected queue
 * (so messages are still taken in arrival order, whichever way); data is the frame's
 * payload (any alignment, valid during the call only; bytes from the network, unchecked),
 * peer its sender's peer index (for rmpi_core_peer_cut). fn returns 1 when it took the
 * message, 0 to queue it as unexpected as before. fn NULL: none (set it back before the
 * context is released). */
typedef int (*rmpi_core_eager_fn)(void *arg, int peer, int src, int tag, const char *data, size_t len);
void rmpi_core_eager_handler(uint32_t ctx, rmpi_core_eager_fn fn, void *arg);

/* ---- buffered mode (core_bsend.c) ---- */
/* A buffer attached to the process (rmpi_core_bpool_proc), a communicator or a session
 * (slots the layers above keep). A buffered send packs the message into it (first fit)
 * and sends from the copy; the space is free again when the copy is delivered. With
 * MPI_BUFFER_AUTOMATIC each message gets a heap copy of its own. Every call below but
 * flush needs the library lock; errors come back as MPI_ERR_BUFFER and a reason. */
typedef struct rmpi_bpool rmpi_bpool_t;
extern rmpi_bpool_t *rmpi_core_bpool_proc;
int rmpi_core_bpool_attach(rmpi_bpool_t **slot, void *buf, size_t size, const char **why);
/* Waits until the pool's messages are sent (takes the lock), completes its pending
 * iflush requests, returns the buffer and its size and empties the slot. */
int rmpi_core_bpool_detach(rmpi_bpool_t **slot, void **buf, size_t *size, const char **why);
void rmpi_core_bpool_flush(rmpi_bpool_t *p); /* takes the lock; p may be NULL */
/* MPI_*_iflush_buffer: 0 when nothing is in flight (req untouched), else 1 and req (made
 * by the caller, not done) completes as the last message older than the call is sent. */
int rmpi_core_bpool_iflush(rmpi_bpool_t *p, rmpi_req_t *req);
/* Buffered send of count elements of type at buf (packed through rmpi_core_types) to
 * world rank dest: into pool, else the process's pool. MPI_ERR_BUFFER when neither has
 * room; *size is then the size of the pool tried (0: none). */
int rmpi_core_bsend(rmpi_bpool_t *pool, int dest, uint32_t ctx, int src, int tag, const void *buf, size_t count,
                    const void *type, size_t bytes, size_t *size);

/* ---- partitioned communication (core_part.c) ---- */
/* r: a send or receive request as for rmpi_core_isend/irecv (or a NULLOP one for
 * MPI_PROC_NULL) on a communicator's point-to-point context: it becomes a persistent
 * partitioned request of n partitions on the collective context (ctx + 1) with a tag of
 * its own, so it matches only a partitioned peer. */
void rmpi_core_part_init(rmpi_req_t *r, int n, int send);
/* MPI_Start (request marked active): a receive is posted now, a send waits for its
 * partitions. */
void rmpi_core_part_start(rmpi_req_t *r);
int rmpi_core_part_is_send(const rmpi_req_t *r);
int rmpi_core_part_count(const rmpi_req_t *r);
int rmpi_core_part_is_ready(const rmpi_req_t *r, int i); /* marked since the last Start */
/* Mark partitions lo..hi ready, or with list the lo partitions it names (checked by the
 * caller); when all are, the message goes out as one. */
void rmpi_core_part_ready(rmpi_req_t *r, int lo, int hi, const int *list);

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
/* Backpressure for a sender that outruns its receiver: eager sends complete locally, and
 * without it a loop of them (a stream of MPI_Send, the non-roots of a Gather) leaves the
 * rails copying every frame into a queue of their own that grows without bound, each copy
 * into freshly faulted heap pages (4 KiB messages: 2.2 us each against MPICH's 0.43, whose
 * sender waits for a free cell). Called where a blocking call ends (point-to-point send,
 * collective schedule), outside progress: while the rails hold more than
 * RMPI_SEND_HELD_MAX bytes (rmpi_net_held) it drives progress, which hands them on as the
 * receivers free room and receives meanwhile, so two ranks flooding each other both drain. */
extern size_t rmpi_core_held_max;
void rmpi_core_throttle_wait(void);
static inline void rmpi_core_throttle(void)
{
    if (__builtin_expect(rmpi_net_held > rmpi_core_held_max, 0))
        rmpi_core_throttle_wait();
}
/* The CPU given away by those waits so far (sched_yield calls; under the library lock):
 * coll/shm.c counts them over the oversubscribed Reduces rank 0 roots, where a wait that
 * finds nothing yields to the rank sharing its CPU (a getrusage call for the context
 * switches costs about 0.8 us here, a tenth of a 64 KiB call's two reads). */
extern unsigned long long rmpi_core_yields;

/* ---- for reports and tests ---- */
typedef struct rmpi_core_stats {
    uint64_t eager_full, eager_short, rndv, unexpected;
    uint64_t zc_sends; /* eager frames the provider sent from the user's buffer (send_zc) */
    /* non-contiguous data: eager sends as segments, eager sends packed, eager receives
     * scattered from the frame, rendezvous receives and sends by DATA frames (core_frag.c) */
    uint64_t seg_sends, packed_sends, scattered_recvs, frag_recvs, frag_sends;
    /* rendezvous moved segment by segment: sends gathered, receives read into segments */
    uint64_t seg_rndv_sends, seg_rndv_recvs;
    /* eager receives whose payload the provider read straight into the receive's buffer */
    uint64_t placed_recvs;
} rmpi_core_stats_t;
extern rmpi_core_stats_t rmpi_core_stats;

#endif
