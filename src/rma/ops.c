/* Origin side of the communication calls: put, get, accumulate, get_accumulate (and
 * fetch_and_op), compare_and_swap, request-based or not. On a target of this node they are
 * loads and stores (direct.c); elsewhere each is one active message;
 * the origin data is packed into it, the target datatype travels as its flattened
 * segment list (offsets from the target address), answers land in a receive posted
 * first. */
#include "rma_impl.h"

#include <stdio.h>

/* An operation waiting for its answer. */
typedef struct pending {
    rmpi_win_t *win;
    int target;
    void *tmp; /* answer landed here when the result buffer is not contiguous */
    void *rbuf;
    size_t rcount;
    rmpi_dtype_t *rdt;
    rmpi_req_t *ureq;
} pending_t;

int rmpi_rma_can_access(const rmpi_win_t *w, int target)
{
    if (w->lock_all || w->locked[target] || w->fence_open)
        return 1;
    if (w->start_group)
        for (int i = 0; i < w->start_group->size; i++)
            if (w->start_ranks[i] == target)
                return 1;
    return 0;
}

/* An answer of 0 bytes where some were asked for: a dynamic window's target found the range
 * outside its attached regions (target.c), reported at the next synchronisation with the
 * RDMA errors (rma_rdma_error). 0: not such an answer. */
static int answer_refused(rmpi_win_t *w, size_t got, size_t asked)
{
    if (got || !asked || w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return 0;
    w->ans_err = MPI_ERR_RMA_RANGE;
    return 1;
}

static void answered(rmpi_req_t *r)
{
    pending_t *p = r->user;
    answer_refused(p->win, r->st_bytes, r->len);
    if (p->tmp) {
        rmpi_dtype_unpack(p->tmp, r->st_bytes, p->rbuf, p->rcount, p->rdt, 0);
        free(p->tmp);
    }
    if (p->rdt)
        rmpi_dtype_release(p->rdt);
    p->win->gets[p->target]--;
    p->win->ngets--;
    if (p->ureq)
        rmpi_req_complete(p->ureq);
    free(p);
}

/* The answer of a short path's operation (its result contiguous, no user request): only
 * the counts to settle, no pending record to allocate and free. */
static void answered_plain(rmpi_req_t *r)
{
    rmpi_win_t *w = r->user;
    int t = (int)(intptr_t)r->user2;
    answer_refused(w, r->st_bytes, r->len);
    w->gets[t]--;
    w->ngets--;
}

/* Answers expected where they land (w->ans, rma.h): a short path's fetching operation
 * posts no receive. Its answer is an eager message on the window's context with the
 * operation's tag, which the window's eager handler (target.c rma_eager) hands here as it
 * is delivered: copied into the result buffer, counted, the slot freed, with no receive
 * request, no matching and no completion callback (a posted receive was about 180 of the
 * 503 instructions of a compare-and-swap on Win_create, callgrind). Answers that the core
 * queued as unexpected (something of the context was queued before them, or the answer
 * came by rendezvous) are received from the queue by the progress hook
 * (rma_answers_queued). */
int rma_answer_landed(rmpi_win_t *w, int peer, int src, int tag, const char *data, size_t len)
{
    rmpi_win_ans_t *a = &w->ans[tag & (RMPI_WIN_ANS - 1)];
    if (a->tag != tag || a->from != src)
        return 0; /* not expected here: queued, for a posted receive or none */
    if (RMPI_UNLIKELY(len != a->len) && !answer_refused(w, len, a->len)) {
        char why[160];
        snprintf(why, sizeof why,
                 "rank %d answered a one-sided operation with %zu bytes where %zu were asked for "
                 "(docs/wire/rma.md)",
                 peer, len, a->len);
        rmpi_core_peer_cut(peer, why);
        return 1;
    }
    if (len == 8)
        memcpy(a->land, data, 8); /* a fixed-size copy: the usual atomic's word */
    else if (len == a->len)
        memcpy(a->land, data, len);
    a->tag = 0;
    w->nans--;
    if (!a->ack) {
        w->gets[src]--;
        w->ngets--;
    }
    return 1;
}

static void answer_received(rmpi_req_t *r)
{
    rmpi_win_t *w = r->user;
    int t = (int)(intptr_t)r->user2;
    answer_refused(w, r->st_bytes, r->len);
    rmpi_win_ans_t *a = &w->ans[r->tag & (RMPI_WIN_ANS - 1)];
    a->tag = 0;
    w->nans--;
    if (!a->ack) {
        w->gets[t]--;
        w->ngets--;
    }
}

int rma_answers_queued(rmpi_win_t *w)
{
    uint32_t ctx = w->comm->ctx;
    int n = 0;
    for (int i = 0; i < RMPI_WIN_ANS; i++) {
        rmpi_win_ans_t *a = &w->ans[i];
        rmpi_unexp_t *u;
        if (!a->tag || a->from < 0 || !(u = rmpi_core_probe_find(ctx, a->from, a->tag)))
            continue;
        rmpi_core_unexp_take(u);
        rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_RECV);
        r->buf = a->land;
        r->len = a->len;
        r->rank = a->from;
        r->ctx = ctx;
        r->tag = a->tag;
        r->user = w;
        r->user2 = (void *)(intptr_t)a->from;
        r->on_complete = answer_received;
        r->flags |= RMPI_RF_FREED;
        a->from = -1; /* taken: the receive frees the slot when it completes */
        rmpi_core_mrecv(r, u);
        n++;
    }
    return n;
}

/* Expect the answer of a short path's operation (bytes into land, contiguous) where it
 * lands, under a fresh tag named in h; when that tag's slot still waits for an older
 * answer (64 or more in flight), by a posted receive as before. */
static inline __attribute__((always_inline)) void expect_landed(rmpi_win_t *w, int t, rma_shdr_t *h, void *land,
                                                                size_t bytes)
{
    int32_t tag = rma_tag(w);
    rmpi_win_ans_t *a = &w->ans[tag & (RMPI_WIN_ANS - 1)];
    if (RMPI_UNLIKELY(a->tag != 0)) {
        h->reply_tag = tag;
        rmpi_req_t *r = rma_post_answer(w, t, tag, land, bytes);
        r->user = w;
        r->user2 = (void *)(intptr_t)t;
        r->on_complete = answered_plain;
        r->flags |= RMPI_RF_FREED;
        w->gets[t]++;
        w->ngets++;
        return;
    }
    *a = (rmpi_win_ans_t){.tag = tag, .from = t, .land = land, .len = bytes};
    h->reply_tag = tag;
    w->nans++;
    w->gets[t]++;
    w->ngets++;
}

/* Posts the receive of an operation's answer (into land; done(r) runs at its completion
 * with user, user2 in r) and names its tag in the request h. */
static inline __attribute__((always_inline)) void expect_answer(rmpi_win_t *w, int t, rma_hdr_t *h, void *land,
                                                                size_t tbytes, void (*done)(rmpi_req_t *), void *user,
                                                                void *user2)
{
    h->reply_tag = rma_tag(w);
    rmpi_req_t *r = rma_post_answer(w, t, h->reply_tag, land, tbytes);
    w->gets[t]++;
    w->ngets++;
    r->user = user;
    r->user2 = user2;
    r->on_complete = done;
    r->flags |= RMPI_RF_FREED; /* the answer is asked for after this, so it cannot be done yet */
}

/* The target datatype's layout as segments from the target address. */
static rma_seg_t *target_segs(const rmpi_rma_op_t *op, uint32_t *nseg)
{
    /* addresses as offsets from an arbitrary origin in the middle of the address range,
     * so negative lower bounds stay representable */
    char *fake = (char *)(uintptr_t)((uintptr_t)1 << 62);
    size_t bytes = op->tcount * op->tdt->size, cap = 16, n = 0;
    rma_seg_t *s = rmpi_xmalloc(cap * sizeof *s);
    rmpi_dtype_iter_t it;
    rmpi_dtype_iter_init(&it, fake, op->tcount, op->tdt, 0, bytes);
    struct iovec iov[64];
    int k;
    while ((k = rmpi_dtype_iter_next(&it, iov, 64)) > 0)
        for (int i = 0; i < k; i++) {
            if (n == cap)
                s = rmpi_xrealloc(s, (cap *= 2) * sizeof *s);
            s[n++] = (rma_seg_t){(int64_t)((char *)iov[i].iov_base - fake), iov[i].iov_len};
        }
    *nseg = (uint32_t)n;
    return s;
}

/* An operation's message header (and the target's segments after it, then freed). */
static void am_hdr(rma_hdr_t *h, int kind, const rmpi_rma_op_t *op, uint64_t disp, size_t tbytes, rma_seg_t *segs,
                   uint32_t nseg)
{
    memset(h, 0, sizeof *h);
    h->kind = (uint8_t)kind;
    h->version = RMA_WIRE_VERSION;
    h->disp = disp;
    h->bytes = tbytes;
    h->nseg = nseg;
    if (kind == AM_ACC || kind == AM_GACC) {
        h->op = (uint64_t)(uintptr_t)op->op;
        h->basic = (uint64_t)(uintptr_t)op->tdt->basic;
    }
    if (nseg)
        memcpy(h + 1, segs, nseg * sizeof(rma_seg_t));
    free(segs);
}

/* A put or accumulate of at least this many bytes from contiguous origin memory is not
 * packed into its message (am_gathered). Puts from 256 KiB: dynamic windows' put_bw of 64
 * KiB puts sent that way was slower than packed in every job of two runs (tcp 1,012-1,986
 * against 1,141-2,313 MB/s; tcp;ofi_rxm 2,005-2,039 against 2,330-2,646), of 256 KiB and
 * 1 MiB faster over tcp in every job (1,431-1,510 against 763-831 MB/s at 256 KiB). */
#define RMA_AM_GATHER_MIN ((size_t)64 << 10)
#define RMA_AM_GATHER_PUT_MIN ((size_t)256 << 10)

/* The state of a gathered put's or accumulate's send: freed with its request. */
typedef struct gathered {
    rmpi_win_t *w;
    int t;
    rma_hdr_t hdr[]; /* the message's header and segments */
} gathered_t;

static void gathered_sent(rmpi_req_t *r)
{
    gathered_t *g = r->ext;
    rmpi_dtype_free(r->udt);
    g->w->gets[g->t]--;
    g->w->ngets--;
}

/* A large put or accumulate sent as a message (no user request) whose origin data is
 * contiguous goes as its header and the user's buffer, a two-block datatype over absolute addresses that the core sends
 * as a segment list (its rendezvous writes each block from where it lies), instead of a
 * packed copy: a 1 MiB copy was about 23 us on the measured machine, a ninth of acc_lat 1
 * MiB over tcp, and a fresh 1 MiB buffer for each put of a window of them faulted its pages
 * in (a dynamic window's put_bw 1 MiB over tcp, where puts are messages). The user's buffer is read after the call returns, so the send counts in
 * gets[t] (as an RDMA op does) until it completed: flush, flush_local, unlock, fence and
 * complete wait for it. -1: nothing done (the datatype was refused), pack it.
 * An accumulate sent instead as eager pieces of at most the eager limit, each reduced by
 * the target straight from its frame as it arrived (no RTS/CTS round trip, no reduction
 * of the whole message after its last byte), was slower over loopback tcp: acc_lat 1 MiB
 * 238-273 us against 165-198 for this message (6 alternated jobs, mostly in the machine's
 * fast state; docs/results/osc.md, 2026-12-01): 16 writes of 62 KiB where the rendezvous
 * gathers its data into few writes, and each further write of a stream costs about 20 us
 * on loopback (src/net/tcp/README.md, RMPI_TCP_GATHER). */
static int am_gathered(rmpi_win_t *w, const rmpi_rma_op_t *op, int kind, uint64_t disp, rma_seg_t *segs, uint32_t nseg,
                       size_t hlen, size_t dbytes)
{
    int t = op->target;
    gathered_t *g = rmpi_xmalloc(sizeof *g + hlen);
    MPI_Count len[2] = {(MPI_Count)hlen, (MPI_Count)dbytes};
    MPI_Aint at[2] = {(MPI_Aint)(uintptr_t)g->hdr, (MPI_Aint)(uintptr_t)rmpi_dtype_contig_ptr(op->obuf, op->odt)};
    rmpi_dtype_t *dt;
    if (rmpi_dtype_hindexed(2, len, at, MPI_BYTE, 0, &dt) != MPI_SUCCESS) {
        free(g);
        return -1;
    }
    if (rmpi_dtype_commit(dt) != MPI_SUCCESS) {
        rmpi_dtype_free(dt);
        free(g);
        return -1;
    }
    rma_am_send(w, t); /* what was queued goes first */
    w->batch[t].rdma_puts = 0;
    g->w = w;
    g->t = t;
    am_hdr(g->hdr, kind, op, disp, dbytes, segs, nseg);
    rmpi_req_t *r = rma_send_req(w, t, RMA_TAG_AM, g, hlen + dbytes);
    r->flags |= RMPI_RF_TYPED;
    r->user = NULL; /* MPI_BOTTOM: the blocks' addresses are absolute */
    r->ucount = 1;
    r->udt = dt;
    r->on_complete = gathered_sent;
    w->gets[t]++;
    w->ngets++;
    w->dirty[t] = 1;
    w->tail_answered[t] = 0;
    rmpi_core_isend(r);
    return 0;
}

int rmpi_rma_issue(rmpi_win_t *w, const rmpi_rma_op_t *op, rmpi_req_t *ureq)
{
    int t = op->target;
    rmpi_rma_before_load(); /* of every kind: a get by RDMA or a message is a load too */
    if (w->rdma)
        rma_rdma_lone_before(w, op->target,
                             op->kind == RMPI_RMA_GET); /* deferred gets before anything else: issue order holds */
    const rmpi_win_peer_t *peer = &w->peers[t];
    size_t tbytes = op->tcount * op->tdt->size;
    /* a displacement whose product or sum overflows is outside every window: computed
     * wrapped, it could land inside one */
    int64_t sdisp = op->tdisp;
    int ovf = w->flavor != MPI_WIN_FLAVOR_DYNAMIC && __builtin_mul_overflow(sdisp, peer->disp_unit, &sdisp);
    rma_seg_t *segs = NULL;
    uint32_t nseg = 0;
    int64_t lo = 0, hi = (int64_t)tbytes, a, b;
    if (tbytes && rmpi_dtype_is_contig(op->tdt, op->tcount)) {
        ovf |= __builtin_add_overflow(sdisp, (int64_t)op->tdt->true_lb, &sdisp);
    } else if (tbytes) {
        segs = target_segs(op, &nseg);
        lo = INT64_MAX, hi = INT64_MIN;
        for (uint32_t i = 0; i < nseg; i++) {
            lo = segs[i].off < lo ? segs[i].off : lo;
            hi = segs[i].off + (int64_t)segs[i].len > hi ? segs[i].off + (int64_t)segs[i].len : hi;
        }
    }
    if (tbytes && w->flavor != MPI_WIN_FLAVOR_DYNAMIC &&
        (ovf || __builtin_add_overflow(sdisp, lo, &a) || __builtin_add_overflow(sdisp, hi, &b) || a < 0 ||
         b > (int64_t)peer->size)) {
        free(segs);
        return MPI_ERR_RMA_RANGE;
    }
    uint64_t disp = (uint64_t)sdisp;
    if (rmpi_rma_direct(w, t)) {
        if (rma_fence_gated(w, t)) /* its memory is still the last epoch's */
            rma_fence_wait_done(w, t);
        int rc = rma_direct_issue(w, op, disp, segs, nseg, tbytes, ureq);
        free(segs);
        return rc;
    }
    /* a dynamic window's region that is an MPI_Alloc_mem file, mapped here: direct too, in
     * a lock, lock_all or fence epoch (a PSCW target may not have posted yet), and only with
     * nothing of ours still on its way to t (an accumulate must not pass an earlier one
     * to the same place: messages and RDMA first) */
    char *dp;
    if (w->rtab && tbytes && (w->locked[t] || w->lock_all || w->fence_open) && !rma_fence_gated(w, t) && !w->dirty[t] &&
        !w->batch[t].len && !w->gets[t] &&
        (dp = rma_dyn_direct(w, t, disp + (uint64_t)lo, (uint64_t)(hi - lo))) != NULL) {
        int rc = rma_direct_issue_at(op, dp - lo, w->lsync[t], segs, nseg, tbytes, ureq);
        free(segs);
        return rc;
    }
    size_t hlen = sizeof(rma_hdr_t) + nseg * sizeof(rma_seg_t);
    int rw = op->kind == RMPI_RMA_PUT || op->kind == RMPI_RMA_GET;
    /* small puts on RDMA the target's progress serves (tcp's emulation, libfabric software
     * providers such as tcp;ofi_rxm) or on shm's cross-memory attach go batched as active
     * messages: one frame for many; so do small gets after the first in flight where the
     * rail's reads are served one by one (tcp;ofi_rxm), and a small put or get to a
     * target whose fence may not be over (it holds the message; RDMA would have to wait
     * for its FENCE_DONE) */
    int small = hlen + (op->kind == RMPI_RMA_PUT ? tbytes : 0) <= RMA_BATCH_OP_MAX;
    /* on this node, a message round trip is cheaper than a cross-memory copy's system call */
    int by_msg = rw && tbytes && rma_rdma_by_msg(w, t, tbytes);
    int batched =
        rw && small && (by_msg || rma_fence_gated(w, t) || rma_rdma_small_am(w, t, op->kind == RMPI_RMA_GET, tbytes));
    int rdma = tbytes && rw && !batched && !by_msg && rma_rdma_keys(w, t);
    /* accumulates as the provider's atomics (atomic.c): under the same conditions as RDMA,
     * and within their size limit (one element always), decided here because a native
     * operation takes a lazy lock as RDMA does, by its own round trip, where a message
     * carries the request along. (acc_lat 64 KiB over tcp;ofi_rxm with RMPI_OFI_ATOMIC=on,
     * a message either way, is still 63.2 us against 54.1 with atomics off, quiet machine:
     * that gap has another cause, docs/results/osc.md.) */
    int native = !rw && tbytes && !nseg && rma_atomic_to(w, t) &&
                 (op->kind == RMPI_RMA_CAS || tbytes <= 8 || (long long)tbytes <= rmpi_knobs.RMA_ATOMIC_MAX);
    /* A batch of such puts alone, begun when nothing to t was unacknowledged (so no
     * message of ours can still be handled after them) under a granted lock, may yet be
     * posted as RDMA by a flush (rma_rdma_batch_puts): a lone put + flush then needs no
     * round trip through the target's progress. */
    rmpi_win_batch_t *bt = &w->batch[t];
    int prev_puts = bt->rdma_puts;
    size_t prev_len = bt->len;
    int rdma_later = batched && !by_msg && tbytes && !nseg && op->kind == RMPI_RMA_PUT && !w->lazy[t] &&
                     rma_rdma_keys(w, t) && !rma_fence_gated(w, t) &&
                     (prev_len ? prev_puts > 0 : rma_rdma_to(w, t) && !w->dirty[t]);
    if ((rdma || native) && rma_fence_gated(w, t))
        rma_fence_wait_done(w, t); /* an active message would be held by the target; RDMA would not */
    if (w->lazy[t])
        rma_lock_for_op(w, t, rdma || native);
    if (native && rma_rdma_to(w, t) && rma_atomic_issue(w, op, disp, tbytes, ureq) == 0)
        return 0;
    if (rdma && rma_rdma_to(w, t) && !nseg && op->kind == RMPI_RMA_GET &&
        rma_rdma_lone_get(w, op, disp, tbytes, ureq) == 0)
        return 0;
    if (rdma && rma_rdma_to(w, t) && !nseg && op->kind == RMPI_RMA_PUT &&
        rma_rdma_put_now(w, op, disp, tbytes, ureq) == 0)
        return 0;
    if (rdma && rma_rdma_to(w, t) && rma_rdma_issue(w, op, disp, segs, nseg, tbytes, ureq) == 0) {
        free(segs);
        return 0;
    }
    rma_rdma_before_am(w, t);
    int kind = op->kind == RMPI_RMA_PUT    ? AM_PUT
               : op->kind == RMPI_RMA_GET  ? AM_GET
               : op->kind == RMPI_RMA_ACC  ? AM_ACC
               : op->kind == RMPI_RMA_GACC ? AM_GACC
                                           : AM_CAS;
    /* only the target knows whether a dynamic window's range is attached: it says so in
     * the answer of an operation that has one, else in the ack of a FLUSH */
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC && (kind == AM_PUT || kind == AM_ACC))
        w->unchecked[t] = 1;
    int sends_data = kind == AM_PUT || kind == AM_CAS || ((kind == AM_ACC || kind == AM_GACC) && op->op != MPI_NO_OP);
    size_t dbytes = sends_data ? (kind == AM_CAS ? 2 * tbytes : tbytes) : 0;
    if ((kind == AM_ACC || kind == AM_PUT) && !ureq &&
        dbytes >= (kind == AM_PUT ? RMA_AM_GATHER_PUT_MIN : RMA_AM_GATHER_MIN) &&
        rmpi_dtype_is_contig(op->odt, op->ocount) && am_gathered(w, op, kind, disp, segs, nseg, hlen, dbytes) == 0)
        return 0;
    /* a contiguous put as a message under the short header (a put of 8 bytes and a FLUSH fit
     * a slot of shm's queue); not one a flush may yet post as RDMA (rma_rdma_batch_puts
     * reads full headers) */
    int sput = kind == AM_PUT && !nseg && tbytes && tbytes <= UINT16_MAX && !rdma_later;
    if (sput)
        hlen = sizeof(rma_shdr_t);
    char *msg = rma_am_begin(w, t, hlen + dbytes);
    rdma_later &= !prev_len || bt->len > 0; /* the batch before it went as a message when full */
    rma_hdr_t *h = (rma_hdr_t *)(void *)msg;
    if (sput) {
        *(rma_shdr_t *)(void *)msg =
            (rma_shdr_t){.kind = AM_SPUT, .version = RMA_WIRE_VERSION, .pbytes = (uint16_t)tbytes, .disp = disp};
        free(segs);
    } else
        am_hdr(h, kind, op, disp, tbytes, segs, nseg);
    if (kind == AM_CAS) {
        memcpy(msg + hlen, op->obuf, tbytes);
        memcpy(msg + hlen + tbytes, op->cbuf, tbytes);
    } else if (dbytes)
        rmpi_dtype_pack(op->obuf, op->ocount, op->odt, 0, msg + hlen, dbytes);
    if (kind == AM_GET || kind == AM_GACC || kind == AM_CAS) {
        pending_t *p = rmpi_xmalloc(sizeof *p);
        *p = (pending_t){w, t, NULL, op->rbuf, op->rcount, NULL, ureq};
        void *land;
        if (rmpi_dtype_is_contig(op->rdt, op->rcount))
            land = rmpi_dtype_contig_ptr(op->rbuf, op->rdt);
        else {
            land = p->tmp = rmpi_xmalloc(tbytes ? tbytes : 1);
            p->rdt = op->rdt;
            rmpi_dtype_retain(op->rdt);
        }
        expect_answer(w, t, h, land, tbytes, answered, p, NULL);
    }
    /* answers are waited for in rma_wait_gets or a synchronisation, which send the batch
     * first; a request's answer may be waited for by MPI_Wait: sent now */
    int answered_op = kind == AM_GET || kind == AM_GACC || kind == AM_CAS;
    rma_am_end(w, t, msg, hlen + dbytes, ureq && answered_op);
    if (rdma_later)
        bt->rdma_puts = prev_puts + 1;
    w->dirty[t] = 1;
    w->tail_answered[t] = (unsigned char)answered_op;
    if (ureq && kind != AM_GET && kind != AM_GACC && kind != AM_CAS)
        rmpi_req_complete(ureq); /* the data is in the message: locally complete */
    return 0;
}

/* The message short paths' checks (rma.h): target t reached by messages, an open lock,
 * lock_all or finished fence epoch to it, bytes at tdisp inside its window; *disp: their
 * byte offset there. 0: the general path decides, every error included. */
static inline __attribute__((always_inline)) int msg_short_ok(const rmpi_win_t *w, int t, MPI_Aint tdisp,
                                                              uint64_t bytes, uint64_t *disp)
{
    if (rmpi_thread_multiple || (unsigned)t >= (unsigned)w->size || rmpi_rma_direct(w, t) ||
        !(w->lock_all || w->locked[t] || w->fence_open) || rma_fence_gated(w, t) || tdisp < 0)
        return 0;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) { /* an address: the answer says if it is attached */
        *disp = (uint64_t)tdisp;
        return !rma_dyn_shared(w, t); /* a region mapped here, maybe: the general path */
    }
    const rmpi_win_peer_t *peer = &w->peers[t];
    return !__builtin_mul_overflow((uint64_t)tdisp, (uint64_t)peer->disp_unit, disp) && *disp <= peer->size &&
           bytes <= peer->size - *disp;
}

/* Begins an answered request of kind (len bytes with its data, after the short header) as
 * rmpi_rma_issue does: deferred gets, a lazy lock, RDMA in flight first. */
static inline __attribute__((always_inline)) rma_shdr_t *msg_begin(rmpi_win_t *w, int t, int kind, uint64_t disp,
                                                                   size_t len)
{
    rmpi_rma_before_load();
    if (w->rdma)
        rma_rdma_lone_before(w, t, kind == AM_SGET);
    if (w->lazy[t])
        rma_lock_for_op(w, t, 0);
    rma_rdma_before_am(w, t);
    rma_shdr_t *h = (rma_shdr_t *)(void *)rma_am_begin(w, t, len);
    *h = (rma_shdr_t){.kind = (uint8_t)kind, .version = RMA_WIRE_VERSION, .disp = disp};
    return h;
}

/* Ends it: its answer (bytes) lands in rbuf; it waits in the batch (nobody waits for it by
 * MPI_Wait: a flush or synchronisation sends it). */
static inline __attribute__((always_inline)) void msg_end(rmpi_win_t *w, int t, rma_shdr_t *h, void *rbuf, size_t bytes,
                                                          size_t len)
{
    expect_landed(w, t, h, rbuf, bytes);
    rma_am_end(w, t, (char *)h, len, 0);
    w->dirty[t] = 1;
    w->tail_answered[t] = 1;
}

/* The message path's short path for Fetch_and_op and Compare_and_swap (rma.h): the checks
 * of the binding and of rmpi_rma_issue such an operation can meet, then the request
 * rmpi_rma_issue would send, under the short header (rma_shdr_t). callgrind, rank 0,
 * cas_lat 8 B on Win_create: the general checks (two operation checks, datatype lookups,
 * the range of any datatype) were about 400 of the call's 980 instructions. */
int rmpi_rma_msg_atomic(rmpi_win_t *w, const rmpi_rma_op_t *op, MPI_Datatype type)
{
    int cas = op->kind == RMPI_RMA_CAS;
    if (RMPI_UNLIKELY(w->atom) && rma_atomic_to(w, op->target))
        return 1; /* the provider's atomics, by the general path */
    /* integer types with the operations every one of them has (MPI_BYTE: no arithmetic) */
    size_t es = rma_int_atomic_size(type, cas ? MPI_REPLACE : op->op);
    uint64_t disp;
    if (!es || (!cas && type == MPI_BYTE) || !msg_short_ok(w, op->target, op->tdisp, es, &disp))
        return 1;
    int data = cas || op->op != MPI_NO_OP;
    size_t len = sizeof(rma_shdr_t) + (cas ? 2 * es : data ? es : 0);
    rma_shdr_t *h = msg_begin(w, op->target, cas ? AM_SCAS : AM_SFOP, disp, len);
    h->type = (uint8_t)((uintptr_t)type - RMA_TYPE_BASE); /* rma_int_atomic_size: a handle of that range */
    if (!cas)
        h->op = (uint8_t)((uintptr_t)op->op - RMA_OP_BASE);
    if (data)
        rma_elem_copy(h + 1, op->obuf, es);
    if (cas)
        rma_elem_copy((char *)(h + 1) + es, op->cbuf, es);
    msg_end(w, op->target, h, op->rbuf, es, len);
    return 0;
}

/* Get's: a get rmpi_rma_issue would send as a batched message (a target of this node
 * reached by cross-memory attach, at most RMPI_RMA_SHM_MSG_MAX bytes). */
/* A dynamic window's small put or get to an MPI_Alloc_mem region of a target of this node,
 * mapped here (direct.c): with msg_short_ok's epoch checks, a plain copy; 1: not taken */
static int dyn_mapped(rmpi_win_t *w, int t, MPI_Aint tdisp, void *buf, uint64_t bytes, int put)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC || rmpi_thread_multiple || (unsigned)t >= (unsigned)w->size ||
        !rma_dyn_shared(w, t) || !(w->lock_all || w->locked[t] || w->fence_open) || rma_fence_gated(w, t) ||
        tdisp < 0 || !bytes)
        return 1;
    return rma_dyn_copy(w, t, buf, (uint64_t)tdisp, bytes, put);
}

int rmpi_rma_msg_get(rmpi_win_t *w, void *buf, MPI_Datatype type, MPI_Count count, int t, MPI_Aint tdisp)
{
    size_t es = rmpi_dtype_predef_contig_size(type);
    uint64_t disp, bytes = (uint64_t)count * es;
    if (RMPI_UNLIKELY(w->rtab) && es && count > 0 && count <= (MPI_Count)(SIZE_MAX >> 8) &&
        !dyn_mapped(w, t, tdisp, buf, bytes, 0))
        return 0;
    if (!es || count <= 0 || count > (MPI_Count)(SIZE_MAX >> 8) || !msg_short_ok(w, t, tdisp, bytes, &disp) ||
        !rma_rdma_by_msg(w, t, bytes))
        return 1;
    size_t len = sizeof(rma_shdr_t) + sizeof bytes;
    rma_shdr_t *h = msg_begin(w, t, AM_SGET, disp, len);
    memcpy(h + 1, &bytes, sizeof bytes);
    msg_end(w, t, h, buf, bytes, len);
    return 0;
}

/* Put's: a put rmpi_rma_issue would send as a batched message under the short header (a
 * target of this node reached by cross-memory attach, at most RMPI_RMA_SHM_MSG_MAX bytes).
 * callgrind, rank 0, put_lat 8 B on Win_create: the binding's checks, the datatype lookups
 * and the general issue path were about 500 of the call's 700 instructions. */
int rmpi_rma_msg_put(rmpi_win_t *w, const void *buf, MPI_Datatype type, MPI_Count count, int t, MPI_Aint tdisp)
{
    size_t es = rmpi_dtype_predef_contig_size(type);
    uint64_t disp, bytes = (uint64_t)count * es;
    if (RMPI_UNLIKELY(w->rtab) && es && count > 0 && count <= (MPI_Count)(SIZE_MAX >> 8) &&
        !dyn_mapped(w, t, tdisp, (void *)(uintptr_t)buf, bytes, 1))
        return 0;
    if (!es || count <= 0 || count > (MPI_Count)(UINT16_MAX) || bytes > UINT16_MAX ||
        !msg_short_ok(w, t, tdisp, bytes, &disp) || !rma_rdma_by_msg(w, t, bytes))
        return 1;
    size_t len = sizeof(rma_shdr_t) + bytes;
    rma_shdr_t *h = msg_begin(w, t, AM_SPUT, disp, len);
    h->pbytes = (uint16_t)bytes;
    memcpy(h + 1, buf, bytes);
    rma_am_end(w, t, (char *)h, len, 0);
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) /* only the target knows whether it is attached */
        w->unchecked[t] = 1;
    w->dirty[t] = 1;
    w->tail_answered[t] = 0;
    return 0;
}
