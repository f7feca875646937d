/* Private to src/rma/: the wire header (docs/wire/rma.md) and helpers shared by the
 * window, operation and synchronisation files. */
#ifndef RMPI_RMA_IMPL_H
#define RMPI_RMA_IMPL_H

#include "rma.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../coll/coll.h"

#define RMA_WIRE_VERSION 7
#define RMA_TAG_AM 0           /* active messages, handled by the target's progress hook */
#define RMA_TAG_MAX 0x3fffffff /* answers use tags 1..RMA_TAG_MAX, one per operation */
#define RMA_TAG_SETUP 0x7fe0   /* window creation exchanges (collective context) */

enum {
    AM_PUT = 1,
    AM_GET,
    AM_ACC,
    AM_GACC,
    AM_CAS,
    AM_LOCK,
    AM_UNLOCK,
    AM_FLUSH,
    AM_POST,
    AM_COMPLETE,
    AM_FENCE,
    AM_FENCE_DONE,
    /* the short paths' requests under a 16-byte header (rma_shdr_t) */
    AM_SFOP,
    AM_SCAS,
    AM_SGET,
    AM_SPUT,
    AM_SFLUSH,
};

typedef struct rma_hdr {
    uint8_t kind;
    uint8_t version;
    uint16_t lock_type; /* AM_LOCK: 1 exclusive, 2 shared; AM_FENCE: 1 the sender's operations complete */
    int32_t reply_tag;  /* tag of the answer; 0: none */
    uint64_t op;        /* MPI_Op of an accumulate (a predefined handle: the ABI constant) */
    uint64_t basic;     /* MPI_Datatype of its elements (predefined) */
    uint64_t disp;      /* bytes from the target's window base; dynamic windows: an address */
    uint64_t bytes;     /* data bytes at the target */
    uint32_t nseg;      /* 0: one contiguous range at disp */
    uint32_t pad;
} rma_hdr_t;

/* The header of the short paths' fetch-and-op, compare-and-swap and contiguous get
 * (docs/wire/rma.md, version 6): one predefined element or range at disp, no segments.
 * With its data a compare-and-swap of 8 bytes is 32 bytes and its frame fits a slot of
 * shm's queue (48 bytes: the frame travels in the slot, one cache line to read); under
 * rma_hdr_t it was 64, a class buffer: an atomic pop and push on the pool's lines and two
 * more lines to read (pt2pt latency 0.14 us at 32 bytes, 0.22 at 64 on this machine). */
typedef struct rma_shdr {
    uint8_t kind; /* AM_SFOP, AM_SCAS, AM_SGET, AM_SPUT, AM_SFLUSH */
    uint8_t version;
    union {
        struct {
            uint8_t type; /* SFOP, SCAS: the predefined datatype, handle - 0x200 (include/mpi.h); else 0 */
            uint8_t op;   /* SFOP: the predefined operation, handle - MPI_OP_NULL; else 0 */
        };
        uint16_t pbytes; /* SPUT: its data bytes (1..65535) */
    };
    int32_t reply_tag; /* tag of the answer (1..RMA_TAG_MAX; SPUT: 0) */
    uint64_t disp;     /* as rma_hdr_t's (SFLUSH: 0) */
} rma_shdr_t;          /* then SFOP: the operand (none for MPI_NO_OP); SCAS: origin value, compare value;
               * SGET: u64 bytes; SPUT: its data */
#define RMA_TYPE_BASE ((uintptr_t)0x200)
#define RMA_OP_BASE ((uintptr_t)MPI_OP_NULL)

typedef struct rma_seg {
    int64_t off; /* from disp */
    uint64_t len;
} rma_seg_t;

enum { RMA_LOCK_EXCL = 1, RMA_LOCK_SHARED = 2 };
/* w->lazy[t]: a lock taken by Win_lock/Win_lock_all is requested with the first operation */
enum { RMA_LAZY_PENDING = 1, RMA_LAZY_SENT = 2 };

/* One message carries several active messages back to back, each padded to 8 bytes: those
 * of at most RMA_BATCH_OP_MAX bytes wait in the target's batch (up to RMA_BATCH_MAX bytes,
 * under every eager limit) until one needs an answer or a synchronisation sends them. */
#define RMA_BATCH_OP_MAX ((size_t)1 << 10)
#define RMA_BATCH_MAX ((size_t)8 << 10)
static inline size_t rma_pad8(size_t n) { return (n + 7) & ~(size_t)7; }
/* Room for an active message of len bytes to target t (in its batch when small, else a
 * buffer of its own, the batch sent first); rma_am_end queues it, and with send set sends
 * the batch now. */
char *rma_am_begin(rmpi_win_t *w, int t, size_t len);
void rma_am_end(rmpi_win_t *w, int t, char *msg, size_t len, int send);
void rma_am_send(rmpi_win_t *w, int t);
/* A control header (kind, lock type, answer tag) at msg. */
void rma_ctl_hdr(void *msg, int kind, int lock_type, int32_t tag);
/* Before an operation on target t under a lock not requested yet or not known granted
 * (w->lazy[t]): ask for it with the operation, or wait for the grant when the operation
 * would go by RDMA (which the target's lock manager does not see). */
void rma_lock_for_op(rmpi_win_t *w, int t, int rdma);
/* Whether target t's last fence is not known over: direct and RDMA operations wait. */
static inline int rma_fence_gated(const rmpi_win_t *w, int t) { return w->fdone[t] < w->fences; }
void rma_fence_wait_done(rmpi_win_t *w, int t);
/* The target: handle parked messages whose origin no longer waits (target.c). */
int rma_release_held(rmpi_win_t *w);

/* A fresh answer tag. */
static inline int32_t rma_tag(rmpi_win_t *w)
{
    int32_t t = w->next_tag;
    w->next_tag = t == RMA_TAG_MAX ? 1 : t + 1;
    return t;
}
/* Send len bytes (malloc'd, freed once sent) to window rank `to` on tag. */
void rma_send(rmpi_win_t *w, int to, int tag, void *msg, size_t len);
/* A send request of len bytes to window rank `to` on tag, released by the core once sent
 * (with ext, freed then), its data still to be named; the caller posts it. */
rmpi_req_t *rma_send_req(rmpi_win_t *w, int to, int tag, void *ext, size_t len);
/* A posted receive of an answer from window rank `from` (released by the caller, or by
 * the core when the caller sets RMPI_RF_FREED). */
rmpi_req_t *rma_post_answer(rmpi_win_t *w, int from, int tag, void *buf, size_t len);

/* Answers expected where they land (w->ans, ops.c): the window's eager handler offers each
 * eager message of an answer tag (1: taken; the answer written, counted; 0: not one of
 * them); the progress hook receives those queued as unexpected instead (how many). */
int rma_answer_landed(rmpi_win_t *w, int peer, int src, int tag, const char *data, size_t len);
int rma_answers_queued(rmpi_win_t *w);

/* Control messages that are acknowledged: an int32 error code comes back. */
typedef struct rma_ack {
    rmpi_req_t *req; /* its posted receive; NULL: it lands in w's answer slot of tag */
    rmpi_win_t *w;
    int32_t tag;
    int32_t err;
    int t, seq; /* a FLUSH's target, and whether it carried our copy's table seq */
} rma_ack_t;
/* A FLUSH's acknowledgement when the seq it carried is not the target's table's now. */
#define RMA_ACK_TABLE_CHANGED (-1)
/* Acknowledgements a synchronisation of up to this many targets keeps on its stack. */
#define RMA_ACKS_STACK 4
void rma_ctl(rmpi_win_t *w, int target, int kind, int lock_type, rma_ack_t *ack);
/* Send a control message that has no answer (POST, COMPLETE, FENCE with its flag in
 * lock_type). */
void rma_note(rmpi_win_t *w, int target, int kind, int lock_type);
/* Wait for n acknowledgements; the first error they carry. */
int rma_ack_wait(rma_ack_t *acks, int n);
/* Wait until every answer from target (-1: any target) has landed. */
void rma_wait_gets(rmpi_win_t *w, int target);
/* Flush the targets in ranks (n of them; ranks NULL: every rank) that were written since
 * their last acknowledgement, and wait for their answers; the first error reported. */
int rma_flush_ranks(rmpi_win_t *w, const int *ranks, int n);

/* Every rank's element i of arr (el bytes each) from rank i: a ring over the window. */
void rma_ring_allgather(rmpi_win_t *w, void *arr, size_t el);

/* ---- Put and Get on the providers' RDMA (rdma.c) ---- */
/* Collective at creation (after w->base and the node segment are known): register the
 * window memory on the rails toward every rank not reached directly and exchange bases
 * and keys (docs/wire/rma.md). */
int rma_rdma_setup(rmpi_win_t *w);
/* Dynamic windows whose rails register natively (libfabric): Win_attach registers the
 * region on them and lists it in the window's region table, Win_detach closes its
 * registrations and takes it out (rdma.c, docs/wire/rma.md). */
void rma_rdma_attached(rmpi_win_t *w, void *base, size_t len);
void rma_rdma_detached(rmpi_win_t *w, const void *base);
/* An access epoch starts (lock, lock_all, fence, start): an origin reads a target's region
 * table again before its next RDMA to it, so a region detached before the synchronisation
 * that began the epoch is never written with its closed key. */
void rma_rdma_epoch_new(rmpi_win_t *w);
static inline void rma_rdma_epoch(rmpi_win_t *w)
{
    if (w->rdma && w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        rma_rdma_epoch_new(w);
}
void rma_rdma_free(rmpi_win_t *w);
/* Whether Put and Get to target go over RDMA now. One origin's operations on a target take
 * effect in issue order on every path (tests/mpi/rma/random relies on it, beyond what MPI
 * asks): an active message waits for the RDMA ops before it (rma_rdma_before_am), and
 * after one, puts and gets to that target are active messages too until the target
 * acknowledged everything (rma_rdma_acked: FLUSH or UNLOCK answered, or POST received). */
int rma_rdma_to(const rmpi_win_t *w, int target);
/* Gets to a target of this node (shm's cross-memory attach: the rail's copy_now) wait,
 * up to 64 of them to one target, to be read by one synchronous call, the mirror of the
 * lone puts a flush writes (rma_rdma_batch_puts): a get + flush then needs no op record
 * and no progress pass. rma_rdma_lone_get takes a contiguous blocking get issued under the
 * conditions of an RDMA get (rma_rdma_to: nothing to the target unacknowledged; lock
 * granted, fence over) and counts it in w->gets[t] (0), or declines (1, the caller posts it
 * as before). The reads happen, in issue order, before anything else this origin does to
 * the window: the next operation other than another such get to the same target
 * (rma_rdma_lone_before), an active message, a wait for answers (rma_wait_gets) and the
 * ordering before a FLUSH, UNLOCK, FENCE or COMPLETE (rma_rdma_order, _before_release,
 * _wait), so still under the lock or inside the epoch. */
int rma_rdma_lone_get(rmpi_win_t *w, const rmpi_rma_op_t *op, uint64_t disp, size_t tbytes, rmpi_req_t *ureq);
/* Bytes of an integer type (direct.c's tables: 1, 2, 4 or 8) when op is one of the
 * operations applied to it as element atomics (SUM, MIN, MAX, BAND, BOR, BXOR, REPLACE,
 * NO_OP); 0 for every other type or operation. */
extern unsigned char rma_int_size[256]; /* by predefined handle - 0x200 (include/mpi.h) */
extern uint64_t rma_atomic_ops;         /* a bit per predefined op handle - MPI_OP_NULL */
void rma_int_tables(void);              /* fills both (once, at the first window's segment) */
static inline size_t rma_int_atomic_size(MPI_Datatype type, MPI_Op op)
{
    if (RMPI_UNLIKELY(!rma_atomic_ops))
        rma_int_tables(); /* a window without a node segment */
    uintptr_t h = (uintptr_t)type - 0x200, v = (uintptr_t)op - (uintptr_t)MPI_OP_NULL;
    return h <= 0xff && v < 64 && (rma_atomic_ops >> v & 1) ? rma_int_size[h] : 0;
}
/* Copy one element of es bytes (1, 2, 4 or 8), at any alignment: fixed-size moves, where a
 * memcpy of a variable size is a call of about 17 instructions. */
static inline void rma_elem_copy(void *d, const void *s, size_t es)
{
    switch (es) {
    case 1: memcpy(d, s, 1); break;
    case 2: memcpy(d, s, 2); break;
    case 4: memcpy(d, s, 4); break;
    default: memcpy(d, s, 8); break;
    }
}
/* A contiguous put of more than PUT_NOW_MIN bytes on a rail with copy_now (shm's
 * cross-memory attach), issued where it would be RDMA: written before returning, complete
 * at both ends (ureq too), nothing counted or left for a flush (0); 1 with nothing done
 * when the rail cannot (the caller posts it). */
int rma_rdma_put_now(rmpi_win_t *w, const rmpi_rma_op_t *op, uint64_t disp, size_t tbytes, rmpi_req_t *ureq);
/* Before an operation on target (get: a contiguous get, which may join the deferred ones). */
void rma_rdma_lone_before(rmpi_win_t *w, int target, int get);
void rma_rdma_lone_drain(rmpi_win_t *w);
/* Whether all that a flush of target waits for is such gets (it then only reads them). */
int rma_rdma_lone_only(const rmpi_win_t *w, int target);
/* Whether target has RDMA keys at all, and whether a small put (get 0) or a get of at
 * most 4 KiB (get 1) to it is cheaper batched as an active message than as the rail's
 * RDMA: puts where the target's progress serves the rail's RDMA (tcp, libfabric software
 * providers) or polls the rings (shm); gets where the rail says reads_by_msg and a get is
 * already in flight. */
int rma_rdma_keys(const rmpi_win_t *w, int target);
/* Accumulates as provider atomics (atomic.c, net.h atomic): per window the targets they
 * may reach (alone on their node, reached by a rail with atomics), the fetching ones in
 * flight per target, and how many operations went that way. */
typedef struct rma_atomic {
    unsigned char *ok;
    int *fetching;
    uint64_t native;
} rma_atomic_t;
void rma_atomic_setup(rmpi_win_t *w); /* from rma_rdma_setup */
void rma_atomic_free(rmpi_win_t *w);  /* from rma_rdma_free */
/* Whether accumulates to t may go as provider atomics (then they take the general path). */
static inline int rma_atomic_to(const rmpi_win_t *w, int t)
{
    return w->atom && (unsigned)t < (unsigned)w->size && w->atom->ok[t];
}
/* An accumulate, get_accumulate or compare_and_swap of tbytes at disp (contiguous, inside
 * the window) to such a target, issued as provider atomics (0), or 1 with nothing done
 * (a type or operation the provider does not take, a dynamic range not listed). */
int rma_atomic_issue(rmpi_win_t *w, const rmpi_rma_op_t *op, uint64_t disp, size_t tbytes, rmpi_req_t *ureq);
/* For atomic.c: the rail of target t's first subchannel when t has RDMA keys and is not
 * reached directly (else NULL); the address and key of [disp, disp + len) there (1: a
 * dynamic window's range no listed region holds); n operations more (1) or one completed
 * (-1, status its error) in w->gets and the RDMA count rma_rdma_before_am waits for. */
const rmpi_rail_t *rma_rdma_atomic_rail(const rmpi_win_t *w, int t);
int rma_rdma_atomic_addr(rmpi_win_t *w, int t, uint64_t disp, size_t len, uint64_t *raddr, uint64_t *key);
void rma_rdma_count(rmpi_win_t *w, int t, int n, int status);
/* direct.c: 1 signed integer type, 2 unsigned (or MPI_BYTE), 0 another type. */
int rma_int_kind(MPI_Datatype t);
int rma_rdma_small_am(const rmpi_win_t *w, int target, int get, size_t bytes);
/* Whether a put or get of bytes to target goes as an active message because the
 * target is on this node and reached by cross-memory attach, whose system call costs more
 * than the message's round trip (RMPI_RMA_SHM_MSG_MAX). */
int rma_rdma_by_msg(const rmpi_win_t *w, int target, size_t bytes);

void rma_rdma_before_am(rmpi_win_t *w, int target);
/* At a flush: when target's batch holds only a few contiguous puts, begun when nothing
 * to it was unacknowledged (w->batch[target].rdma_puts), post them as RDMA ops instead
 * and drop the batch (1), as if they had never been messages; else 0, nothing done. */
int rma_rdma_batch_puts(rmpi_win_t *w, int target);
/* The progress poll of a lock or flush that waits for nothing, on every 8th call (sync.c). */
void rma_idle_poll(void);
void rma_rdma_acked(rmpi_win_t *w, int target);
/* Put or Get as RDMA ops (disp/segs/tbytes as for rma_direct_issue, tbytes > 0): 0 when
 * posted (counted in w->gets[target] until every op completed; ureq completes then), 1
 * when the target layout is better sent as one active message. */
int rma_rdma_issue(rmpi_win_t *w, const rmpi_rma_op_t *op, uint64_t disp, const rma_seg_t *segs, uint32_t nseg,
                   size_t tbytes, rmpi_req_t *ureq);
/* Wait until every RDMA op to target has completed locally (then a frame sent to it is
 * delivered after their data). */
void rma_rdma_wait(rmpi_win_t *w, int target);
/* Before a FLUSH or UNLOCK to target: its put data must land first. With one subchannel
 * to it the rail's order does that (net.h: put data before any later frame), so the frame
 * may follow at once, in the same write; with several, wait (rma_rdma_wait). */
void rma_rdma_order(rmpi_win_t *w, int target);
/* Before an UNLOCK or FENCE to target, after which it may write its memory: our puts
 * ordered before that frame (rma_rdma_order), our gets complete (tcp's emulated get is
 * answered from the target memory when its provider sends the answer, not when it reads
 * the request). */
void rma_rdma_before_release(rmpi_win_t *w, int target);
/* The first error RDMA ops met since the last call (MPI class), or 0. */
int rma_rdma_error(rmpi_win_t *w);
/* Whether such an error waits to be reported (rma_rdma_error would return it). */
int rma_rdma_err_pending(const rmpi_win_t *w);
/* A dynamic window's targets (target, or every one with -1) reached by RDMA on region-table
 * keys since their last check: read their table's seq behind those ops (counted in gets,
 * so the caller's wait covers it; rdma.c seq_check). Every synchronisation calls it before
 * its FLUSH or its wait for gets. */
void rma_rdma_check_now(rmpi_win_t *w, int target);
/* For a FLUSH to target: the seq + 1 of the table copy whose keys the RDMA ops since the
 * last check used, when the FLUSH can check them (puts only: the target handles it after
 * them), which then waits for its acknowledgement (rma_rdma_flush_acked); else 0. */
uint64_t rma_rdma_flush_seq(rmpi_win_t *w, int target);
void rma_rdma_flush_acked(rmpi_win_t *w, int target, int changed);
/* The target side: whether seq (a FLUSH's, nonzero) is not our table's seq + 1. */
int rma_rdma_table_changed(const rmpi_win_t *w, uint64_t seq);
static inline void rma_rdma_check(rmpi_win_t *w, int target)
{
    if (RMPI_UNLIKELY(w->rdma_unchecked))
        rma_rdma_check_now(w, target);
}

/* One target's part of a flush: a few lone puts written now (rma_rdma_batch_puts), or when
 * it was written since its last acknowledgement, a FLUSH whose answer lands in *ack (1), or
 * nothing when the answer to our last request to it will show everything handled (0; the
 * caller's rma_wait_gets waits for it). Inline: a call here was 20 instructions of a
 * compare-and-swap's flush (callgrind, cas_lat on Win_create). */
static inline int rma_flush_start(rmpi_win_t *w, int t, rma_ack_t *ack)
{
    rma_rdma_batch_puts(w, t); /* a few puts alone: written now, no round trip */
    if (w->dirty[t] && w->tail_answered[t] && !w->unchecked[t]) {
        /* the answer to the last request is sent after everything before it was handled:
         * waiting for it (rma_wait_gets) is the flush (a dynamic window's target reports a
         * range the origin could not check in the ack) */
        w->dirty[t] = 0;
        w->tail_answered[t] = 0;
        if (w->lazy[t] == RMA_LAZY_SENT)
            w->lazy[t] = 0;
    } else if (w->dirty[t]) {
        rma_rdma_order(w, t); /* its data ahead of the FLUSH */
        rma_ctl(w, t, AM_FLUSH, 0, ack);
        w->dirty[t] = 0;
        w->unchecked[t] = 0;
        rma_rdma_check(w, t); /* what the FLUSH did not take: beside its round trip */
        return 1;
    }
    rma_rdma_check(w, t);
    return 0;
}

/* ---- direct operations on targets of this node (direct.c) ---- */
/* Map the node segment holding the window memory of this node's ranks (w->peers' sizes
 * known): sets w->shm, w->shm_data, w->base, and with direct w->dptr, w->dsync and w->lsync.
 * packed: parts back to back (allocate_shared), else 64-byte aligned. Collective over
 * the window; MPI_ERR_NO_MEM on every rank when one could not map it. */
int rma_node_segment(rmpi_win_t *w, int packed, int direct);
/* Win_create windows: a node segment of lock words alone (w->lsync), so that origins of
 * this node lock a target with an atomic, not a message round trip. Collective over the
 * window; MPI_ERR_NO_MEM on every rank when one could not map it (locks stay messages). */
int rma_node_locks(rmpi_win_t *w);
/* Where a Win_create window's memory lies in an MPI_Alloc_mem file (mem.c): the owner's
 * pid and descriptor, the file's inode and length, the window's offset in it; fd -1: not
 * in one. Exchanged at creation; rma_node_map maps the node's ranks' memory from it. */
typedef struct rma_share {
    int32_t pid, fd;
    uint64_t ino, off, flen;
} rma_share_t;
/* 1 and *sh filled when [base, base + len) lies in one live MPI_Alloc_mem file, else 0. */
int rma_mem_share(const void *base, size_t len, rma_share_t *sh);
/* Win_create windows with lock words (w->lsync, rma_node_locks): every target of this node
 * whose memory came from MPI_Alloc_mem (sh[t].fd >= 0) is mapped here through
 * /proc/PID/fd and becomes direct (w->dptr, w->dsync), this rank too when its own is;
 * a target that cannot be mapped stays reached by cross-memory attach and messages, which
 * the target applies with the same atomics. Not collective. rma_node_unmap undoes it. */
void rma_node_map(rmpi_win_t *w, const rma_share_t *sh);
void rma_node_unmap(rmpi_win_t *w);
/* w->lockwait's bits (target.c) */
enum { RMA_WAIT_LOCK = 1, RMA_WAIT_ANSWER = 2 };
/* Dynamic windows (rma_node_locks maps them a table per node rank, w->rtab): the owner
 * publishes its attached regions after every attach and detach; an origin of its node
 * checks that an access lies inside them before it moves the data by cross-memory attach
 * (1), else 0 (it sends a message, checked by the target). */
void rma_rtab_publish(rmpi_win_t *w);
int rma_rtab_covers(const rmpi_win_t *w, int t, uint64_t a, uint64_t len);
/* An operation on a direct target; disp/segs/tbytes as rmpi_rma_issue computed and
 * range-checked them. Complete locally and remotely on return. */
int rma_direct_issue(rmpi_win_t *w, const rmpi_rma_op_t *op, uint64_t disp, const rma_seg_t *segs, uint32_t nseg,
                     size_t tbytes, rmpi_req_t *ureq);
/* Accumulate src into base's segments (atomic per element; result: the old values, may
 * be NULL; src NULL for MPI_NO_OP), and compare-and-swap of one element of es bytes
 * (hardware atomic at 1, 2, 4, 8 bytes aligned, whatever the type). */
void rma_direct_acc(rmpi_win_sync_t *s, char *base, const rma_seg_t *segs, uint32_t nseg, size_t bytes, MPI_Op op,
                    MPI_Datatype basic, const void *src, void *result);
void rma_direct_cas(rmpi_win_sync_t *s, char *p, size_t es, const void *v, const void *cmp, void *result);
void rma_segs_gather(const char *base, const rma_seg_t *segs, uint32_t nseg, char *out);
void rma_segs_scatter(char *base, const rma_seg_t *segs, uint32_t nseg, const char *in);
/* Fence's barrier in the segment when every rank of the window is on this node and
 * direct (1), else 0 and nothing done. */
int rma_node_barrier(rmpi_win_t *w);
/* Passive-target lock words: try (1: taken), take (progressing while it waits), release. */
int rma_rw_try(rmpi_win_sync_t *s, int excl);
void rma_rw_lock(rmpi_win_sync_t *s, int excl);
void rma_rw_release(rmpi_win_sync_t *s, int excl);

#endif
