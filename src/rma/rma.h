/*
 * rma: MPI one-sided communication (MPI-4.1 chapter 12) over the core's point-to-point.
 *
 * A window owns a private duplicate of its communicator: RMA traffic travels on that
 * duplicate's point-to-point context, so it never matches user messages. Every request
 * to a target (put, get, accumulate, lock, flush, post, complete...) is one active
 * message on tag 0 (docs/wire/rma.md); the target's progress engine (a core hook that is
 * registered while any window exists) probes each window's context, receives the
 * messages and handles them in arrival order, one at a time, which makes accumulates
 * element-wise atomic and keeps each origin's operations in issue order. Answers (get
 * data, fetched values, lock grants, flush and unlock acknowledgements) come back on a
 * fresh tag per operation into a receive the origin posted before asking.
 *
 * Completion: origin data is copied into the message when the operation is issued, so
 * put and accumulate complete locally at once; gets complete when their answer lands.
 * Small requests to one target wait in a batch and go as one message (with the next
 * answered request or synchronisation). Remote completion comes from ordering: a flush or
 * unlock is acknowledged only after every earlier message of that origin was handled.
 * Locks on other processes are lazy: requested with the first operation. Fence = a FENCE
 * marker to every rank behind the operations; a rank's fence ends once it has handled
 * every rank's marker (sync.c).
 * Who calls: the api bindings (which check handles, ranks, types and epochs before
 * calling; the functions here return MPI error classes for what only they can see).
 * Threading: caller holds the library lock; blocking calls progress the core.
 * Ownership: rmpi_rma_win_free releases everything the window allocated (not memory given
 * to Win_create or Win_attach).
 */
#ifndef RMPI_RMA_H
#define RMPI_RMA_H

#include <mpi.h>
#include <stdatomic.h>

#include "../comm/comm.h"
#include "../datatype/datatype.h"
#include "../net/net.h"

#define RMPI_WIN_MAGIC 0x57494e44u /* "WIND" */

typedef struct rmpi_win_peer {
    uint64_t base; /* address in the peer's process (dynamic windows: 0) */
    uint64_t size;
    int64_t disp_unit;
} rmpi_win_peer_t;

typedef struct rmpi_win_lockq rmpi_win_lockq_t;
/* Active messages to one target not sent yet: several go as one message (rma_am_begin). */
typedef struct rmpi_win_batch {
    char *buf;
    size_t len, cap;
    int rdma_puts; /* every record a contiguous put that a flush may still post as RDMA
                    * (rma_rdma_batch_puts): how many; else 0 */
} rmpi_win_batch_t;

/* An answer expected where it lands (ops.c rma_answer_landed): the short paths' fetching
 * operations name no posted receive; the answer, an eager message on the window's context
 * with the operation's tag, is written into land by the window's eager handler. */
typedef struct rmpi_win_ans {
    int32_t tag; /* 0: free */
    int from;    /* the target's window rank; -1: taken by a receive (rma_answers_queued) */
    int ack;     /* an acknowledgement of a control message (win.c rma_ctl): not in w->gets */
    void *land;
    size_t len;
} rmpi_win_ans_t;
#define RMPI_WIN_ANS 64 /* slots, by tag modulo: a slot in use sends the next one to a receive */
/* Per target on this node: its passive-target lock word and accumulate lock, one cache
 * line each, at the head of the node's window segment (direct.c). */
typedef struct rmpi_win_sync rmpi_win_sync_t;

typedef struct rmpi_win {
    uint32_t magic;
    int flavor;        /* MPI_WIN_FLAVOR_* */
    rmpi_comm_t *comm; /* private duplicate: its context carries the RMA traffic */
    int rank, size;
    void *base;
    size_t bytes;
    MPI_Aint disp_unit;
    rmpi_win_peer_t *peers; /* every rank's base, size and displacement unit */
    /* shared-memory windows (allocate_shared, and allocate with RMPI_RMA_DIRECT): this
     * node's segment mapped here, its sync lines first, then the node's parts */
    void *shm;
    size_t shm_len;
    char *shm_data;          /* first part in the segment */
    char **dptr;             /* per target on this node: its window memory mapped here */
    rmpi_win_sync_t **dsync; /* per target on this node: its sync line; NULL: remote target */
    /* per target on this node: the sync line whose word is its passive-target lock (direct
     * targets: dsync; Win_create windows: a segment of lock words alone, the memory reached
     * by cross-memory attach or messages); NULL: locked through its lock manager by messages */
    rmpi_win_sync_t **lsync;
    int nlocal; /* window ranks sharing the segment */
    /* every rank of the window on this node and direct (Win_allocate, Win_allocate_shared):
     * fence may be a barrier in the segment, a flush of every target has nothing to wait for */
    int all_direct;
    /* Put/Get on the providers' RDMA (rdma.c): per target its base and keys, our
     * registrations; NULL when no target is reached that way */
    struct rma_rdma *rdma;
    struct rma_atomic *atom; /* accumulates as provider atomics (atomic.c); NULL: none */
    int rdma_unchecked;      /* dynamic windows: targets reached on region-table keys since their
                         * table's seq was last checked (rdma.c seq_check) */
    uint32_t bar_sense;      /* this rank's sense in the segment's barrier */
    /* dynamic windows: attached regions; per target on this node its table of them in the
     * node segment (direct.c), NULL elsewhere or when no segment could be mapped */
    rmpi_net_ranges_t regions; /* sorted: a range-list registration's (rdma.c) */
    struct rma_rtab **rtab;
    struct rma_rtab_hit *rtab_hit; /* per target: the range its table covered at a seq */
    void *own_mem;                 /* Win_allocate's memory (freed with the window) */

    /* origin side: epochs */
    int fence_open;            /* a fence opened an epoch (no MPI_MODE_NOSUCCEED) */
    rmpi_group_t *start_group; /* PSCW access epoch (window ranks) */
    int *start_ranks;
    rmpi_group_t *post_group; /* PSCW exposure epoch */
    int post_n;
    int *locked;            /* per target: 0, MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE */
    unsigned char *nocheck; /* lock taken with MPI_MODE_NOCHECK (no lock message) */
    int nlocked;
    int lock_all;
    unsigned char *lazy;          /* per target: lock not requested yet (1), requested, grant not seen (2) */
    rmpi_win_batch_t *batch;      /* per target: active messages waiting to go as one message */
    unsigned char *dirty;         /* per target: messages since its last acknowledgement */
    unsigned char *tail_answered; /* per target: the last thing sent to it is answered (its
                                   * answer shows everything before it handled: no FLUSH) */
    unsigned char *unchecked;     /* per target of a dynamic window: a message went whose range only
                                   * the target could check (its errors come in the next ack) */
    unsigned char *quiet;         /* per target: an UNLOCK went to it without an answer (sync.c
                                   * unlock_ranks); Win_free asks it for one before its barrier */
    int *gets;                    /* per target: answers not yet landed */
    int ngets;
    int *posts;    /* POST messages received, per origin of the exposure */
    int completes; /* COMPLETE messages received */
    int32_t next_tag;
    rmpi_win_ans_t ans[RMPI_WIN_ANS]; /* answers expected where they land, by tag */
    int nans;                         /* slots in use */
    /* fence by markers (sync.c): fences this rank completed; per rank the FENCE_DONEs seen
     * (its fence is over: our direct and RDMA operations may touch it again) */
    int fences;
    int *fdone;
    int nbatched; /* targets whose batch is not empty: the progress hook sends them */
    int ans_err;  /* a dynamic window's answer of 0 bytes (range not attached), for the next sync */
    int building; /* an active message is being written into a batch (rma_am_begin) */

    /* target side */
    rmpi_list_t incoming; /* received (or arriving) messages, handled in this order */
    int lock_excl, lock_shared;
    rmpi_win_lockq_t *lockq; /* waiting lock requests, FIFO */
    int *errs;               /* per origin: error seen handling its operations, sent with the next ack */
    int *marks;              /* per origin: FENCE markers handled */
    unsigned char *mclean;   /* per origin: its last FENCE said all its operations were complete */
    /* per origin: its lock, requested with its operations, is not granted yet (RMA_WAIT_LOCK);
     * a get answered from the window memory is not read yet (RMA_WAIT_ANSWER): either holds
     * its later messages back */
    unsigned char *lockwait;
    int nanswering;    /* such answers in flight (Win_free waits for them) */
    rmpi_list_t *held; /* per origin: its messages that wait for that lock or for our fence */
    int nheld;
    rmpi_list_t link; /* in the list of windows the progress hook serves */

    /* for the api layer */
    MPI_Errhandler errh;
    MPI_Aint attr_size; /* values the predefined attributes point to */
    int attr_disp_unit, attr_flavor, attr_model;
    void *attrs;
    rmpi_info_t *info;
    char name[MPI_MAX_OBJECT_NAME];
} rmpi_win_t;

/* Windows handed out (util.h): a handle is looked up before it is read. */
extern rmpi_addrset_t rmpi_win_live;
static inline rmpi_win_t *rmpi_win_get(MPI_Win h)
{
    if ((uintptr_t)h < 4096 || !rmpi_addrset_has(&rmpi_win_live, h, rmpi_thread_multiple))
        return NULL;
    rmpi_win_t *w = (rmpi_win_t *)h;
    return w->magic == RMPI_WIN_MAGIC ? w : NULL;
}

/* ---- creation and destruction (win.c); collective over comm (an intracommunicator) ----
 * base/size: Win_create's memory; for allocate and allocate_shared, size bytes are
 * allocated (*base set). Errors: MPI_ERR_RMA_SHARED (shared window over ranks of several
 * nodes), MPI_ERR_NO_MEM, MPI_ERR_OTHER (shared memory could not be mapped). */
int rmpi_rma_win_create(rmpi_comm_t *comm, int flavor, void **base, size_t size, MPI_Aint disp_unit, rmpi_win_t **out);
/* Waits for this process's outstanding operations, then a barrier; frees the window. */
int rmpi_rma_win_free(rmpi_win_t *w);
/* Dynamic windows. MPI_ERR_RMA_ATTACH on overlap (attach) or an unknown base (detach). */
int rmpi_rma_attach(rmpi_win_t *w, void *base, size_t len);
int rmpi_rma_detach(rmpi_win_t *w, const void *base);
/* Whether operations on target are direct loads and stores (target on this node, window
 * memory in the node segment, or Win_create memory from MPI_Alloc_mem mapped here). */
static inline int rmpi_rma_direct(const rmpi_win_t *w, int target) { return w->dsync && w->dsync[target]; }
/* Whether target's passive-target lock is a lock word in shared memory taken by this
 * process (every target of this node when the window has lock words). */
static inline int rmpi_rma_lockword(const rmpi_win_t *w, int target) { return w->lsync && w->lsync[target]; }
/* Win_shared_query: rank's part (MPI_PROC_NULL: the lowest rank with a non-empty part).
 * Windows not from allocate_shared answer for this process's own part only (size 0,
 * NULL elsewhere, MPI-4.1). */
void rmpi_rma_shared_query(rmpi_win_t *w, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void **base);

/* ---- MPI_Alloc_mem and MPI_Free_mem (mem.c) ----
 * With RMPI_RMA_ALLOC_MEM_SHM, a shared-memory file mapped here, so that Win_create windows
 * over it are direct targets for the node's origins; else (and for size 0) malloc.
 * MPI_ERR_NO_MEM when neither could allocate. Free takes either. Thread safe. */
int rmpi_rma_mem_alloc(size_t size, void **p);
void rmpi_rma_mem_free(void *p);

/* ---- operations (ops.c) ----
 * target: a window rank (not MPI_PROC_NULL); tdisp in displacement units (dynamic: an
 * address). Datatypes are committed, sizes checked by the caller (origin bytes == target
 * bytes; result bytes == target bytes). op: a predefined operation valid on the target's
 * basic type (MPI_REPLACE, MPI_NO_OP included). ureq: completed as the standard says
 * for request-based operations (NULL: none). Errors: MPI_ERR_RMA_RANGE (target range
 * outside the target's window). */
enum { RMPI_RMA_PUT = 1, RMPI_RMA_GET, RMPI_RMA_ACC, RMPI_RMA_GACC, RMPI_RMA_CAS };
typedef struct rmpi_rma_op {
    int kind;
    const void *obuf; /* origin data (PUT, ACC, GACC, CAS) */
    size_t ocount;
    rmpi_dtype_t *odt;
    void *rbuf; /* result (GET: the origin buffer; GACC, CAS) */
    size_t rcount;
    rmpi_dtype_t *rdt;
    const void *cbuf; /* CAS: compare value (one element of odt) */
    int target;
    MPI_Aint tdisp;
    size_t tcount;
    rmpi_dtype_t *tdt;
    MPI_Op op;
} rmpi_rma_op_t;
int rmpi_rma_issue(rmpi_win_t *w, const rmpi_rma_op_t *op, rmpi_req_t *ureq);
/* Short paths for the bindings, called before their own checks (direct.c): an operation
 * on a target of this node (the window memory in the node segment), in an access epoch
 * opened by a lock, lock_all or fence whose fence is over, inside the target's window,
 * without a request. Done at once: 0. Anything else, every error included, returns 1
 * with nothing done, and the caller checks everything and takes rmpi_rma_issue. They
 * need no library lock (each touches only the target's memory and sync line).
 * Put and Get: count elements of one contiguous predefined type on both sides, a copy.
 * Small: an accumulate, get_accumulate (fetch_and_op) or compare_and_swap of count
 * elements of one predefined integer type on every side (origin, result and target
 * counts equal) with an operation the hardware has (SUM, MIN, MAX, BAND, BOR, BXOR,
 * REPLACE, NO_OP): one element as a hardware atomic, several under the target's
 * accumulate lock. */
int rmpi_rma_direct_put(rmpi_win_t *w, const void *buf, MPI_Datatype type, MPI_Count count, int target, MPI_Aint tdisp);
int rmpi_rma_direct_get(rmpi_win_t *w, void *buf, MPI_Datatype type, MPI_Count count, int target, MPI_Aint tdisp);
int rmpi_rma_direct_small(rmpi_win_t *w, const rmpi_rma_op_t *op, MPI_Datatype type, MPI_Count count);
/* Fetch_and_op's and Compare_and_swap's short path to a target reached by messages (not
 * direct, not a dynamic window: Win_create on shm, any target elsewhere): one element of
 * an integer type, an operation of rma_int_atomic_size, a lock, lock_all or fence epoch
 * whose fence is over, inside the target's window: queued as rmpi_rma_issue queues it, 0;
 * else 1 with nothing done. Never with MPI_THREAD_MULTIPLE (it uses the batch). */
int rmpi_rma_msg_atomic(rmpi_win_t *w, const rmpi_rma_op_t *op, MPI_Datatype type);
/* Get's, on the same conditions, for count elements of a contiguous predefined type that
 * rmpi_rma_issue would send as a batched message (rdma.c rma_rdma_by_msg: a target of
 * this node reached by cross-memory attach, at most RMPI_RMA_SHM_MSG_MAX bytes). */
int rmpi_rma_msg_get(rmpi_win_t *w, void *buf, MPI_Datatype type, MPI_Count count, int target, MPI_Aint tdisp);
/* Put's, on the same conditions, for at most 65535 bytes (from rmpi_rma_rdma_put). */
int rmpi_rma_msg_put(rmpi_win_t *w, const void *buf, MPI_Datatype type, MPI_Count count, int target, MPI_Aint tdisp);
/* Put's short path to a target of this node reached by cross-memory attach (Win_create
 * windows on shm; dynamic windows once the target's region table covers the range: rdma.c):
 * count elements of one contiguous predefined type, more than 4 KiB and more than
 * RMPI_RMA_SHM_MSG_MAX, in a lock, lock_all or fence epoch whose lock was granted and fence
 * is over, with nothing of ours to that target unacknowledged or deferred, inside its
 * window: written before returning (one process_vm_writev), 0; else 1 with nothing done, as
 * the direct short paths; smaller ones go to rmpi_rma_msg_put. Needs the library lock (it
 * uses the rail), so never with MPI_THREAD_MULTIPLE. */
int rmpi_rma_rdma_put(rmpi_win_t *w, const void *buf, MPI_Datatype type, MPI_Count count, int target, MPI_Aint tdisp);
/* Get's, on the same conditions, for more than RMPI_RMA_SHM_MSG_MAX bytes: on a Win_create
 * window deferred as rmpi_rma_issue defers it (read by one process_vm_readv with the gets
 * after it, at the flush or the next other operation), 0; on a dynamic window read before
 * returning once the target's region table covers the range, 0; else 1 with nothing done. */
int rmpi_rma_rdma_get(rmpi_win_t *w, void *buf, MPI_Datatype type, MPI_Count count, int target, MPI_Aint tdisp);
/* Whether an access epoch to target is open (lock, lock_all, fence, start group). */
int rmpi_rma_can_access(const rmpi_win_t *w, int target);

/* ---- synchronisation (sync.c) ----
 * Errors: MPI_ERR_RMA_SYNC for calls in the wrong state (unlock without lock...), or the
 * error a target reported for earlier operations (dynamic windows: MPI_ERR_RMA_RANGE). */
int rmpi_rma_fence(rmpi_win_t *w, int assert);
int rmpi_rma_post(rmpi_win_t *w, rmpi_group_t *g);
int rmpi_rma_start(rmpi_win_t *w, rmpi_group_t *g);
int rmpi_rma_complete(rmpi_win_t *w);
int rmpi_rma_wait(rmpi_win_t *w);
int rmpi_rma_test(rmpi_win_t *w, int *flag);
int rmpi_rma_lock(rmpi_win_t *w, int type, int target, int assert);
int rmpi_rma_unlock(rmpi_win_t *w, int target);
/* Lock and Unlock's short paths for the binding: a target with a lock word (rmpi_rma_lockword),
 * no assert, the lock word free now, no other thread may call; Unlock of a target that is
 * not direct only with nothing outstanding there (nothing sent since its last
 * acknowledgement, no answer or RDMA op due); else 1 with nothing done (the full checks
 * and rmpi_rma_lock / rmpi_rma_unlock decide, errors included). */
int rmpi_rma_lock_direct(rmpi_win_t *w, int type, int target, int assert);
int rmpi_rma_unlock_direct(rmpi_win_t *w, int target);
int rmpi_rma_lock_all(rmpi_win_t *w, int assert);
int rmpi_rma_unlock_all(rmpi_win_t *w);
/* target -1: every target. local: only local completion (Flush_local). */
int rmpi_rma_flush(rmpi_win_t *w, int target, int local);
/* Flush and the direct paths' plain stores. MPI-4.1 12.5.4: a flush completes the
 * operations at the target, so no later access of this process may be ordered before
 * them. Direct puts and locked accumulates are plain stores (the accumulate lock's
 * release too); set rmpi_rma_stores after them. What else is owed depends on the memory model:
 * - x86 (TSO): stores become visible to the other processes in program order, with
 *   nothing issued, so every store or message this process makes after the flush is
 *   seen after them; the one reordering TSO allows is a later load passing them (a
 *   put + flush + get to two targets, as in Dekker's algorithm, could read before the put
 *   is visible). So a flush only notes the debt (rmpi_rma_owed) and the next load of window
 *   memory made by MPI (a get, a gather for a get-accumulate, a get served for another
 *   origin) pays it with a full barrier first. Locked instructions (the accumulate lock's
 *   exchange, the element atomics, the lock words' compare-exchange) are full barriers
 *   already. The user's own loads of a shared window need MPI_Win_sync (MPI-4.1 12.7,
 *   the unified model), which is a full barrier. A loop of accumulates and flushes thus
 *   issues no barrier of its own (an mfence waits for the store buffer to drain: about
 *   13 ns here, the 512 B accumulate's gap to Open MPI).
 * - weaker models (Arm, POWER, RISC-V): stores may become visible out of order and an
 *   acquire/release lock exchange does not order a store before a later load, so the
 *   flush issues the portable full barrier itself, as before.
 * Process-wide, not per window: a load of another window's memory must not pass them
 * either. */
extern int rmpi_rma_stores, rmpi_rma_owed;
#if defined(__x86_64__) || defined(__i386__)
#define RMPI_RMA_TSO 1
#else
#define RMPI_RMA_TSO 0
#endif
static inline void rmpi_rma_flush_stores(void)
{
    if (RMPI_RMA_TSO)
        rmpi_rma_owed |= rmpi_rma_stores;
    else if (rmpi_rma_stores) {
        atomic_thread_fence(memory_order_seq_cst);
        rmpi_rma_stores = 0;
    }
}
static inline void rmpi_rma_before_load(void)
{
    if (RMPI_RMA_TSO && RMPI_UNLIKELY(rmpi_rma_owed)) {
        atomic_thread_fence(memory_order_seq_cst);
        rmpi_rma_owed = rmpi_rma_stores = 0;
    }
}

/* Flush's short path for the binding, inline in it (a call and the register saves around
 * it were a third of a direct flush): a direct target (0 <= target < size) in a
 * passive-target epoch: done, 0 (its operations completed when issued; what their stores
 * owe is noted or paid above); else 1 with nothing done (rmpi_rma_flush decides, errors
 * included). Without MPI_THREAD_MULTIPLE, or under the library lock.
 * Progress: a process looping on flushes of direct targets and loads must still serve
 * the others' requests to it (MPI's progress rule for passive target), so every
 * RMPI_RMA_FLUSH_POLL-th such flush polls once. A poll of every rail (about 220
 * instructions on shm alone, a system call per tcp socket) is several times the flush's
 * own work, so it is spread thin; any finite period keeps the rule. */
#define RMPI_RMA_FLUSH_POLL 64
extern unsigned rmpi_rma_flush_calls;
static inline int rmpi_rma_flush_direct(rmpi_win_t *w, int target)
{
    if ((unsigned)target >= (unsigned)w->size || !w->dsync || !w->dsync[target] || !(w->locked[target] || w->lock_all))
        return 1;
    if (RMPI_UNLIKELY(++rmpi_rma_flush_calls % RMPI_RMA_FLUSH_POLL == 0))
        rmpi_core_progress();
    rmpi_rma_flush_stores();
    return 0;
}

#endif
