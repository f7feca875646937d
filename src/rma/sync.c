/* Synchronisation: fence, post/start/complete/wait/test, passive-target locks, flushes.
 * Remote completion always comes from an acknowledged message that the target handles
 * after every earlier one from this origin (FLUSH, UNLOCK), or, for targets of this node
 * whose operations are loads and stores, from a full memory barrier; their passive-target
 * locks are lock words in the node segment. */
#include "rma_impl.h"

#include <stdatomic.h>

static void wait_until(const int *value, int at_least)
{
    unsigned idle = 0;
    while (*value < at_least)
        rmpi_core_wait_step(&idle);
}

static int wire_lock(int type) { return type == MPI_LOCK_EXCLUSIVE ? RMA_LOCK_EXCL : RMA_LOCK_SHARED; }

/* Fence by markers, one round instead of a FLUSH round trip and a barrier: each rank sends
 * every rank a FENCE marker behind its operations (RDMA puts ordered before it as before a
 * FLUSH, RDMA gets complete), and a rank's fence is over once it has handled every rank's
 * marker, hence every operation before it. Messages an origin sends after its marker
 * belong to the next epoch: the target holds them until its own fence is over. Direct and
 * RDMA operations bypass the target's handler, so after a fence they wait for the
 * target's FENCE_DONE (most small operations go as messages meanwhile). Windows whose
 * ranks are all direct use the barrier in the node segment; dynamic windows, whose
 * targets report errors in acknowledgements, and shared windows keep FLUSH and a barrier. */
static int fence_by_markers(const rmpi_win_t *w)
{
    /* shared windows: ranks load and store each other's parts after a fence, so every
     * rank's exposure must be over when any fence returns: a barrier */
    return w->flavor != MPI_WIN_FLAVOR_DYNAMIC && w->flavor != MPI_WIN_FLAVOR_SHARED && !w->all_direct;
}

static int markers_in(const rmpi_win_t *w)
{
    for (int o = 0; o < w->size; o++)
        if (w->marks[o] <= w->fences)
            return 0;
    return 1;
}

void rma_fence_wait_done(rmpi_win_t *w, int t)
{
    rma_am_send(w, t);
    unsigned idle = 0;
    while (rma_fence_gated(w, t))
        rmpi_core_wait_step(&idle);
}

/* Whether every operation of ours since the last fence is complete at its target: none
 * went as a message (nothing unacknowledged) and no RDMA op or answer is still due (puts
 * by cross-memory attach are written before they return). The FENCE flag (docs/wire/rma.md). */
static int epoch_complete(const rmpi_win_t *w)
{
    if (w->ngets)
        return 0;
    for (int t = 0; t < w->size; t++)
        if (w->dirty[t])
            return 0;
    return 1;
}

int rmpi_rma_fence(rmpi_win_t *w, int assert)
{
    rma_rdma_epoch(w);
    if (!fence_by_markers(w)) {
        /* every rank direct and nothing of ours due (direct operations are complete when
         * issued): the flush of every rank has nothing to do, and its steps per rank were
         * about 250 of the 465 instructions of a fence on rank 0 (put_fence 8 B,
         * Win_allocate, callgrind); a full barrier orders our stores before the node's */
        int err = 0;
        if (w->all_direct && !w->nbatched && epoch_complete(w) && !rma_rdma_err_pending(w))
            atomic_thread_fence(memory_order_seq_cst);
        else
            err = rma_flush_ranks(w, NULL, w->size);
        rma_wait_gets(w, -1);
        if (!rma_node_barrier(w)) /* every target direct: a barrier in shared memory will do */
            rmpi_coll_barrier(w->comm);
        w->fence_open = !(assert &MPI_MODE_NOSUCCEED);
        return err;
    }
    atomic_thread_fence(memory_order_seq_cst); /* direct stores before the markers */
    int clean = epoch_complete(w);
    if (!(assert &MPI_MODE_NOPRECEDE)) /* NOPRECEDE: no operation of ours to order */
        for (int i = 1; i <= w->size; i++)
            rma_rdma_before_release(w, (w->rank + i) % w->size);
    /* Every other rank's FENCE handled already and nothing of ours to ourselves unhandled:
     * our fence is over once our own marker is, so FENCE_DONE may leave in the same write as
     * our FENCE (the target holds the rest of a message behind a FENCE until its own fence
     * ends). An origin that puts 1 MiB over tcp before each fence is usually last; its
     * FENCE_DONE alone was one more write on the stream ahead of the next put's data, and
     * loopback charges each further write of a stream about 20 us (src/net/tcp/README.md). */
    int last = !w->dirty[w->rank], done_early = 0;
    for (int o = 0; o < w->size && last; o++)
        last = o == w->rank || w->marks[o] > w->fences;
    if (last) {
        done_early = clean; /* the final flag below: ours and every other rank's */
        for (int o = 0; o < w->size && done_early; o++)
            done_early = o == w->rank || w->mclean[o];
        done_early = !done_early;
    }
    for (int i = 1; i <= w->size; i++) {
        int t = (w->rank + i) % w->size; /* ourselves last */
        if (!done_early || t == w->rank) {
            rma_note(w, t, AM_FENCE, clean);
            continue;
        }
        char *m = rma_am_begin(w, t, 2 * sizeof(rma_hdr_t));
        rma_ctl_hdr(m, AM_FENCE, clean, 0);
        rma_ctl_hdr(m + sizeof(rma_hdr_t), AM_FENCE_DONE, 0, 0);
        rma_am_end(w, t, m, 2 * sizeof(rma_hdr_t), 1);
    }
    unsigned idle = 0;
    while (!markers_in(w))
        rmpi_core_wait_step(&idle);
    /* read before the held messages are released: an origin's next FENCE may be among them */
    for (int o = 0; o < w->size && clean; o++)
        clean = w->mclean[o];
    w->fences++;
    w->fdone[w->rank] = w->fences;
    rma_release_held(w);
    atomic_thread_fence(memory_order_seq_cst); /* the origins' direct stores before our accesses */
    /* Every rank's FENCE said that all its operations of the epoch were complete at their
     * targets when it was sent, after its own accesses: nothing of the epoch can still
     * touch any window memory, so every rank's fence is as good as over for the next
     * epoch's RDMA and direct operations, and no FENCE_DONE is needed. Every rank saw the
     * same flags and decides alike: none sends FENCE_DONE. (The barrier fence of Open MPI's
     * osc rdma has the same property: a put right after it waits for no further message.
     * With markers alone, a 64 KiB put by cross-memory attach after each fence waited for
     * the target's FENCE_DONE, a round trip on every epoch.) */
    if (clean)
        for (int t = 0; t < w->size; t++)
            w->fdone[t] = w->fences;
    /* Else FENCE_DONE waits in the batch: it leaves with our next message to that rank
     * (often our next FENCE) or at our next progress (target.c), so a fence costs one
     * message each way; ranks of this node may wait for it before a direct store: sent at
     * once */
    for (int t = 0; t < w->size && !clean && !done_early; t++)
        if (t != w->rank) {
            char *m = rma_am_begin(w, t, sizeof(rma_hdr_t));
            rma_ctl_hdr(m, AM_FENCE_DONE, 0, 0);
            rma_am_end(w, t, m, sizeof(rma_hdr_t), rmpi_rma_direct(w, t));
        }
    rma_wait_gets(w, -1);
    for (int t = 0; t < w->size; t++) {
        w->dirty[t] = 0; /* everything before our marker is handled before its fence ends */
        rma_rdma_acked(w, t);
    }
    w->fence_open = !(assert &MPI_MODE_NOSUCCEED);
    return rma_rdma_error(w);
}

/* Window ranks of a group's members; NULL when one is not in the window. */
static int *group_ranks(rmpi_win_t *w, const rmpi_group_t *g)
{
    int *r = rmpi_xmalloc((size_t)(g->size ? g->size : 1) * sizeof *r);
    rmpi_group_t *wg = rmpi_group_of_comm(w->comm, 0);
    for (int i = 0; i < g->size; i++)
        r[i] = rmpi_group_rank_of(wg, g->world[i]);
    rmpi_group_release(wg);
    for (int i = 0; i < g->size; i++)
        if (r[i] == MPI_UNDEFINED) {
            free(r);
            return NULL;
        }
    return r;
}

int rmpi_rma_post(rmpi_win_t *w, rmpi_group_t *g)
{
    int *ranks = w->post_group ? NULL : group_ranks(w, g);
    if (!ranks)
        return MPI_ERR_RMA_SYNC;
    atomic_thread_fence(memory_order_seq_cst); /* our stores before their accesses */
    for (int i = 0; i < g->size; i++)
        rma_note(w, ranks[i], AM_POST, 0);
    free(ranks);
    if (g != &rmpi_group_empty)
        g->refcount++;
    w->post_group = g;
    w->post_n = g->size;
    return 0;
}

int rmpi_rma_start(rmpi_win_t *w, rmpi_group_t *g)
{
    int *ranks = w->start_group ? NULL : group_ranks(w, g);
    if (!ranks)
        return MPI_ERR_RMA_SYNC;
    /* wait for every target's POST: after it, our operations may touch its memory */
    for (int i = 0; i < g->size; i++) {
        wait_until(&w->posts[ranks[i]], 1);
        w->posts[ranks[i]]--;
        rma_rdma_acked(w, ranks[i]); /* POST came after it handled our last COMPLETE */
    }
    atomic_thread_fence(memory_order_seq_cst);
    rma_rdma_epoch(w);
    if (g != &rmpi_group_empty)
        g->refcount++;
    w->start_group = g;
    w->start_ranks = ranks;
    return 0;
}

int rmpi_rma_complete(rmpi_win_t *w)
{
    if (!w->start_group)
        return MPI_ERR_RMA_SYNC;
    int n = w->start_group->size, err = 0;
    /* Only a dynamic window's target can tell whether a range was attached; it reports that
     * in the ack of a FLUSH (or an operation's answer), so the epoch's operations are
     * flushed first and their error returned here, as Unlock would (the COMPLETE itself is
     * not answered). Other flavors' ranges are checked by the origin when it issues. */
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        err = rma_flush_ranks(w, w->start_ranks, n);
    atomic_thread_fence(memory_order_seq_cst); /* direct stores before COMPLETE */
    for (int i = 0; i < n; i++) {
        int t = w->start_ranks[i];
        rma_wait_gets(w, t);
        /* handled after our operations, so the target's Wait returns only when they are done */
        rma_note(w, t, AM_COMPLETE, 0);
        w->dirty[t] = 0;
    }
    rmpi_group_release(w->start_group);
    w->start_group = NULL;
    free(w->start_ranks);
    w->start_ranks = NULL;
    return err;
}

static void end_exposure(rmpi_win_t *w)
{
    atomic_thread_fence(memory_order_seq_cst); /* the origins' direct stores before ours */
    w->completes -= w->post_n;
    rmpi_group_release(w->post_group);
    w->post_group = NULL;
    w->post_n = 0;
}

int rmpi_rma_wait(rmpi_win_t *w)
{
    if (!w->post_group)
        return MPI_ERR_RMA_SYNC;
    wait_until(&w->completes, w->post_n);
    end_exposure(w);
    return 0;
}

int rmpi_rma_test(rmpi_win_t *w, int *flag)
{
    if (!w->post_group)
        return MPI_ERR_RMA_SYNC;
    if (w->completes < w->post_n)
        rmpi_core_progress();
    *flag = w->completes >= w->post_n;
    if (*flag)
        end_exposure(w);
    return 0;
}

/* Locks on other processes' memory reached by messages are lazy (as MPICH does): Win_lock
 * and Win_lock_all send nothing, the LOCK request goes with the first operation, in the same message, and
 * the target holds that origin's later messages until it grants it; Unlock's UNLOCK then
 * ends lock + operations + unlock in one round trip, and a lock without operations costs
 * no message. Our own memory is locked at once (local loads and stores need it held). */
static int lazy_ok(const rmpi_win_t *w, int t) { return t != w->rank && !rmpi_rma_lockword(w, t); }

void rma_lock_for_op(rmpi_win_t *w, int t, int rdma)
{
    int type = w->lock_all ? RMA_LOCK_SHARED : wire_lock(w->locked[t]);
    if (w->lazy[t] == RMA_LAZY_PENDING && !rdma) {
        rma_rdma_before_am(w, t);
        char *m = rma_am_begin(w, t, sizeof(rma_hdr_t));
        rma_ctl_hdr(m, AM_LOCK, type, 0); /* no answer: the operations behind it wait at the target */
        rma_am_end(w, t, m, sizeof(rma_hdr_t), 0);
        w->lazy[t] = RMA_LAZY_SENT;
        w->dirty[t] = 1;
    } else if (w->lazy[t] == RMA_LAZY_PENDING) {
        rma_ack_t a;
        rma_ctl(w, t, AM_LOCK, type, &a);
        rma_ack_wait(&a, 1);
        w->lazy[t] = 0;
    } else if (rdma) {
        rma_flush_ranks(w, &t, 1); /* its answer comes after the grant */
    }
}

/* The progress poll of a lock or flush that waits for nothing, on every 8th such call: a
 * loop of them still serves the others' requests to this process (MPI's progress rule for
 * passive target), while a lock + put + unlock or put + flush on a direct target, where
 * a poll of every rail (a system call per tcp socket) would cost more than the operation,
 * pays one eighth of it. */
void rma_idle_poll(void)
{
    static unsigned calls;
    if ((++calls & 7) == 0)
        rmpi_core_progress();
}

/* The direct paths' progress poll (Lock and the direct flush, rma.h): a poll of every rail
 * (about 220 instructions on shm alone) against about 80 for lock + put + unlock of a
 * direct target, so every RMPI_RMA_FLUSH_POLL-th call; a loop of them still serves the
 * others' requests to this process. */
static void direct_poll(void)
{
    if (RMPI_UNLIKELY(++rmpi_rma_flush_calls % RMPI_RMA_FLUSH_POLL == 0))
        rmpi_core_progress();
}

int rmpi_rma_lock(rmpi_win_t *w, int type, int target, int assert)
{
    if (w->locked[target] || w->lock_all)
        return MPI_ERR_RMA_SYNC;
    w->nocheck[target] = !!(assert &MPI_MODE_NOCHECK);
    /* Only a lock request's round trip waits (and so progresses): a process looping on
     * epochs of its own direct memory (Lock(self), loads and stores, Unlock(self)) would
     * otherwise never serve others' requests to it. One poll per epoch, as Win_lock_all,
     * before our lock word is taken, so a waiting origin's lock can be granted in it. */
    if (rmpi_rma_lockword(w, target) && !w->nocheck[target])
        direct_poll();
    else if (w->nocheck[target] || lazy_ok(w, target))
        rma_idle_poll();
    if (!w->nocheck[target] && lazy_ok(w, target))
        w->lazy[target] = RMA_LAZY_PENDING;
    else if (!w->nocheck[target] && rmpi_rma_lockword(w, target))
        rma_rw_lock(w->lsync[target], type == MPI_LOCK_EXCLUSIVE);
    else if (!w->nocheck[target]) {
        rma_ack_t a;
        rma_ctl(w, target, AM_LOCK, wire_lock(type), &a);
        rma_ack_wait(&a, 1);
    }
    w->locked[target] = type;
    w->nlocked++;
    rma_rdma_epoch(w);
    return 0;
}

int rmpi_rma_lock_direct(rmpi_win_t *w, int type, int target, int assert)
{
    if (rmpi_thread_multiple || assert || (unsigned)target >= (unsigned)w->size || !rmpi_rma_lockword(w, target) ||
        w->locked[target] || w->lock_all || (type != MPI_LOCK_EXCLUSIVE && type != MPI_LOCK_SHARED))
        return 1;
    direct_poll();
    if (!rma_rw_try(w->lsync[target], type == MPI_LOCK_EXCLUSIVE))
        return 1; /* held: rmpi_rma_lock waits for it, with progress */
    w->nocheck[target] = 0;
    w->locked[target] = type;
    w->nlocked++;
    rma_rdma_epoch(w);
    return 0;
}

/* Whether everything this origin did to target (a lock word's, not direct) under the lock
 * is complete there: nothing sent since its last acknowledgement or waiting in its batch,
 * no answer or RDMA op due (cross-memory attach puts past 4 KiB are written before they
 * return), no RDMA error to report. Its lock word may then be released at once. */
static int lockword_idle(const rmpi_win_t *w, int t)
{
    return !w->dirty[t] && !w->gets[t] && !w->batch[t].len && !rma_rdma_err_pending(w);
}

int rmpi_rma_unlock_direct(rmpi_win_t *w, int target)
{
    if (rmpi_thread_multiple || (unsigned)target >= (unsigned)w->size || !w->lsync || !w->locked[target] ||
        w->nocheck[target])
        return 1;
    if (!rmpi_rma_direct(w, target) && (!w->lsync[target] || !lockword_idle(w, target)))
        return 1;
    atomic_thread_fence(memory_order_seq_cst); /* MPI_WIN_UNIFIED: our stores before the release */
    rma_rw_release(w->lsync[target], w->locked[target] == MPI_LOCK_EXCLUSIVE);
    w->locked[target] = 0;
    w->nlocked--;
    return 0;
}

/* Release the locks on ranks[0..n) (acknowledged, so our operations are complete at the
 * targets); the first error a target reported. */
static int unlock_ranks(rmpi_win_t *w, const int *ranks, const int *types, int n)
{
    rma_ack_t one[RMA_ACKS_STACK]; /* a flush or unlock of one target: no malloc and free */
    rma_ack_t *acks = n <= RMA_ACKS_STACK ? one : rmpi_xmalloc((size_t)n * sizeof *acks);
    int na = 0;
    for (int i = 0; i < n; i++) {
        int t = ranks ? ranks[i] : i;
        rma_rdma_before_release(w, t);
        if (w->lazy[t] == RMA_LAZY_PENDING) {
            /* never requested: no operation went to it */
        } else if (rmpi_rma_direct(w, t)) {
            atomic_thread_fence(memory_order_seq_cst);
            if (!w->nocheck[t])
                rma_rw_release(w->dsync[t], types[i] == MPI_LOCK_EXCLUSIVE);
        } else if (rmpi_rma_lockword(w, t) && !w->nocheck[t]) {
            /* its lock word is released below, once what we sent it is complete there (a
             * flush: a FLUSH, or the answer to our last request), never before */
            if (rma_flush_start(w, t, &acks[na]))
                na++;
        } else if (!w->nocheck[t] && !w->dirty[t] && w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
            /* Nothing since its last answer but RDMA ops (they complete below, before we
             * return: MPI-4.1 12.5.3 asks no more of Unlock), and no error can be waiting
             * there (a target reports errors only of active messages, which make it dirty):
             * the UNLOCK only releases the lock, so it goes without an answer, one round
             * trip less (lock + 64 KiB put + unlock by cross-memory attach). A next lock of
             * ours is granted after it (the channel keeps order); Win_free flushes it. */
            char *m = rma_am_begin(w, t, sizeof(rma_hdr_t));
            rma_ctl_hdr(m, AM_UNLOCK, wire_lock(types[i]), 0);
            rma_am_end(w, t, m, sizeof(rma_hdr_t), 1);
            w->quiet[t] = 1;
        } else if (!w->nocheck[t])
            rma_ctl(w, t, AM_UNLOCK, wire_lock(types[i]), &acks[na++]);
        else if (w->dirty[t])
            rma_ctl(w, t, AM_FLUSH, 0, &acks[na++]);
        w->dirty[t] = 0;
        w->lazy[t] = 0;
    }
    int err = rma_ack_wait(acks, na);
    if (acks != one)
        free(acks);
    for (int i = 0; i < n; i++) {
        /* answers and RDMA ops: the target took them before the UNLOCK it acknowledged */
        int t = ranks ? ranks[i] : i;
        rma_wait_gets(w, t);
        rma_rdma_acked(w, t);
        if (rmpi_rma_lockword(w, t) && !rmpi_rma_direct(w, t) && !w->nocheck[t]) {
            atomic_thread_fence(memory_order_seq_cst);
            rma_rw_release(w->lsync[t], types[i] == MPI_LOCK_EXCLUSIVE);
        }
        w->nocheck[t] = 0;
    }
    int rerr = rma_rdma_error(w);
    return err ? err : rerr;
}

int rmpi_rma_unlock(rmpi_win_t *w, int target)
{
    if (!w->locked[target])
        return MPI_ERR_RMA_SYNC;
    int type = w->locked[target], err = 0;
    if (rmpi_rma_direct(w, target)) { /* what unlock_ranks does for it, without its arrays */
        atomic_thread_fence(memory_order_seq_cst);
        if (!w->nocheck[target])
            rma_rw_release(w->dsync[target], type == MPI_LOCK_EXCLUSIVE);
        w->nocheck[target] = 0;
    } else
        err = unlock_ranks(w, &target, &type, 1);
    w->locked[target] = 0;
    w->nlocked--;
    return err;
}

int rmpi_rma_lock_all(rmpi_win_t *w, int assert)
{
    if (w->lock_all || w->nlocked)
        return MPI_ERR_RMA_SYNC;
    rma_rdma_epoch(w);
    int nocheck = !!(assert &MPI_MODE_NOCHECK);
    rma_ack_t a;
    int na = 0;
    for (int t = 0; t < w->size; t++) {
        w->nocheck[t] = (unsigned char)nocheck;
        if (!nocheck && lazy_ok(w, t))
            w->lazy[t] = RMA_LAZY_PENDING;
        else if (!nocheck && !rmpi_rma_lockword(w, t)) /* ourselves, reached by messages */
            rma_ctl(w, t, AM_LOCK, RMA_LOCK_SHARED, &a), na = 1;
    }
    /* shared lock words after the request is out, so a remote grant overlaps the wait */
    for (int t = 0; t < w->size; t++)
        if (!nocheck && rmpi_rma_lockword(w, t))
            rma_rw_lock(w->lsync[t], 0);
    rma_ack_wait(&a, na);
    /* A lazy lock_all waits for nothing, and a process whose epochs touch only its own
     * (direct) memory would then never run the progress engine: others' requests to it
     * would wait forever (mpi4py.util.sync's Condition: rank 0 loops on lock_all, its
     * own counters and unlock_all while rank 1 waits for a fetch-and-op answer from it).
     * One poll per epoch serves them, as the eager request's round trip did. */
    if (!na)
        rmpi_core_progress();
    w->lock_all = 1;
    return 0;
}

int rmpi_rma_unlock_all(rmpi_win_t *w)
{
    if (!w->lock_all)
        return MPI_ERR_RMA_SYNC;
    int *types = rmpi_xmalloc((size_t)w->size * sizeof *types);
    for (int t = 0; t < w->size; t++)
        types[t] = MPI_LOCK_SHARED;
    int err = unlock_ranks(w, NULL, types, w->size);
    free(types);
    w->lock_all = 0;
    return err;
}

/* Whether a flush of target (-1: all) has anything to wait for. */
static int flush_waits(const rmpi_win_t *w, int target)
{
    if (target >= 0)
        return w->dirty[target] || w->gets[target];
    for (int t = 0; t < w->size; t++)
        if (w->dirty[t])
            return 1;
    return w->ngets > 0;
}

unsigned rmpi_rma_flush_calls; /* rma.h: the direct flush's polls */

int rmpi_rma_flush(rmpi_win_t *w, int target, int local)
{
    if (target >= 0 ? !w->locked[target] && !w->lock_all : !w->nlocked && !w->lock_all)
        return MPI_ERR_RMA_SYNC;
    if (target >= 0 && w->batch[target].len && w->tail_answered[target] && w->dirty[target] && !w->unchecked[target]) {
        /* the batch ends with a request whose answer is the flush (rma_flush_start sends no
         * FLUSH then): it leaves now, and the checks below run while the target serves it,
         * not before (cas_lat: about 200 instructions of the flush ahead of the send) */
        if (w->ngets)
            rma_rdma_lone_drain(w); /* as rma_wait_gets before its send */
        rma_am_send(w, target);
    }
    int direct = (target >= 0 && rmpi_rma_direct(w, target)) || (target < 0 && w->all_direct);
    /* A flush that waits for nothing (direct targets; nothing issued since the last one)
     * polls once, as Win_lock does: a process looping on flushes of its own memory and
     * loads of it must still serve the others' requests to it. */
    int idle = !flush_waits(w, target);
    if (direct || idle)
        rma_idle_poll();
    rmpi_rma_flush_stores(); /* direct operations are complete when issued (and direct targets of a flush_all) */
    if (direct)
        return 0;
    if (target >= 0 && idle && !w->batch[target].len) /* e.g. puts written by cross-memory attach */
        return rma_rdma_error(w);
    if (target >= 0 && rma_rdma_lone_only(w, target)) { /* gets read by the origin: nothing to ask */
        rma_rdma_lone_drain(w);
        /* a rail that refuses the read now (shm with cross-memory attach refused) had them
         * posted as gets its target serves: they are waited for below */
        if (!w->gets[target])
            return rma_rdma_error(w);
    }
    if (local) { /* puts and accumulates complete locally when issued: only answers to wait for */
        rma_wait_gets(w, target);
        return 0;
    }
    return target >= 0 ? rma_flush_ranks(w, &target, 1) : rma_flush_ranks(w, NULL, w->size);
}
