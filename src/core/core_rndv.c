/* Rendezvous data over every subchannel (Liu et al., 'Building Multirail InfiniBand
 * Clusters: MPI-Level Designs and Performance Evaluation', secs. 4.3-4.5 and 5.3): the
 * buffer is registered on each rail, the data moves in stripes cut by the VC's scheduler,
 * the completion filter collects one completion per stripe with its delivery time (fed back
 * to adaptive striping), and one FIN travels on every subchannel that carried data; the
 * peer's request completes when all of them are in. */
#include "core_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A stripe of a message whose local side is a segment list (RMPI_RF_SEGS): it moves as
 * one RDMA op per piece, at most SEG_WINDOW in flight; `next` is the next message byte to
 * post; oloc/ooff/olen what each op in flight covers (to post it again if its rail fails). */
#define SEG_WINDOW 16
typedef struct seg_stripe {
    size_t next, end;
    int inflight;
    uint32_t busy; /* bit i: op[i] in flight */
    uint64_t t_post, t_done;
    void *oloc[SEG_WINDOW];
    size_t ooff[SEG_WINDOW], olen[SEG_WINDOW];
    uint64_t oraddr[SEG_WINDOW];
    rmpi_net_op_t op[SEG_WINDOW];
} seg_stripe_t;

struct rmpi_rndv {
    rmpi_req_t *req;
    rmpi_vc_t *vc;
    int nmr; /* registrations, index = subchannel */
    rmpi_mr_t mr[RMPI_VC_MAX_SUB];
    int nstripes, pending, pushing;
    rmpi_stripe_t stripe[RMPI_VC_MAX_SUB];
    rmpi_net_op_t op[RMPI_VC_MAX_SUB];
    uint32_t fins, fin_count; /* FINs received so far, and how many the first one announced */
    char *local;              /* where stripes start locally / remotely */
    uint64_t raddr;
    uint64_t rkeys[RMPI_VC_MAX_SUB];
    seg_stripe_t *seg;     /* per stripe, when the local side is a segment list */
    rmpi_rndv_piece_t *rp; /* the peer's memory in pieces (CTS with PIECES), or NULL */
    size_t *rp_at;         /* message offset where each of those pieces starts */
    uint32_t nrp;
    rmpi_rndv_t *live_next, **live_prev; /* the states in use (rndv_live) */
};

static void post_stripe(rmpi_rndv_t *rv, int k);
static void seg_post(rmpi_rndv_t *rv, int k);
static void seg_op_done(rmpi_net_op_t *op);

/* Rendezvous states are reused: a calloc of one (several hundred bytes, above glibc's
 * thread cache) cost about 440 instructions, three per shm ping-pong at 16 KiB. Only the
 * header fields need values; the arrays are written before they are read. */
#define RNDV_KEEP 64
static rmpi_rndv_t *rndv_free; /* linked through ->req */
static int rndv_nfree;
/* The states attached to requests: one whose request never completes (a send nobody
 * receives, a peer cut off mid-protocol) is still the core's to free at finalize, since
 * the requests themselves are then dropped without being released one by one. */
static rmpi_rndv_t *rndv_live;

static rmpi_rndv_t *rndv_of(rmpi_req_t *r, rmpi_vc_t *vc)
{
    if (!r->rv) {
        rmpi_rndv_t *rv = rndv_free;
        if (rv) {
            rndv_free = (rmpi_rndv_t *)rv->req;
            rndv_nfree--;
        } else {
            rv = rmpi_xmalloc(sizeof *rv);
        }
        rv->req = r;
        rv->vc = vc;
        rv->nmr = 0;
        rv->nstripes = rv->pending = rv->pushing = 0;
        rv->fins = 0;
        rv->local = NULL;
        rv->raddr = 0;
        rv->seg = NULL;
        rv->rp = NULL;
        rv->rp_at = NULL;
        rv->nrp = 0;
        rv->live_next = rndv_live;
        rv->live_prev = &rndv_live;
        if (rndv_live)
            rndv_live->live_prev = &rv->live_next;
        rndv_live = rv;
        r->rv = rv;
    }
    return r->rv;
}

/* After rmpi_net_close: no completion can reach a state any more, and the registrations
 * went with the rails. */
void rmpi_rndv_finalize(void)
{
    while (rndv_live) {
        rmpi_rndv_t *rv = rndv_live;
        rndv_live = rv->live_next;
        free(rv->seg);
        free(rv->rp);
        free(rv->rp_at);
        free(rv);
    }
    while (rndv_free) {
        rmpi_rndv_t *rv = rndv_free;
        rndv_free = (rmpi_rndv_t *)rv->req;
        free(rv);
    }
    rndv_nfree = 0;
}

static void rndv_release(rmpi_req_t *r)
{
    rmpi_rndv_t *rv = r->rv;
    if (!rv)
        return;
    for (int i = 0; i < rv->nmr; i++) {
        rmpi_rail_t *rail = rmpi_vc_rail(rv->vc, i);
        rmpi_net_mr_put(rail, &rv->mr[i]);
    }
    free(rv->seg);
    free(rv->rp);
    free(rv->rp_at);
    r->rv = NULL;
    *rv->live_prev = rv->live_next;
    if (rv->live_next)
        rv->live_next->live_prev = rv->live_prev;
    if (rndv_nfree < RNDV_KEEP) {
        rv->req = (rmpi_req_t *)rndv_free;
        rndv_free = rv;
        rndv_nfree++;
    } else {
        free(rv);
    }
}

/* Registrations go and the request completes. */
static void rndv_finish(rmpi_req_t *r)
{
    rmpi_core_wire_id_free(r); /* its last frame is in (or sent): no frame may name it any more */
    rndv_release(r);
    rmpi_req_complete(r);
}

void rmpi_rndv_drop(rmpi_req_t *r) { rndv_release(r); }

void rmpi_rndv_register(rmpi_req_t *r, rmpi_vc_t *vc, void *buf, size_t len, uint64_t *rkeys)
{
    rmpi_rndv_t *rv = rndv_of(r, vc);
    for (int i = 0; i < vc->nsub; i++) {
        rmpi_rail_t *rail = rmpi_vc_rail(vc, i);
        if (rmpi_net_mr_get(rail, buf, len, &rv->mr[i]))
            rmpi_fatal("cannot register %zu bytes on rail %s for a rendezvous with rank %d.", len, rail->hints.name,
                       vc->peer);
        rkeys[i] = rv->mr[i].rkey;
        rv->nmr = i + 1;
    }
}

void rmpi_core_send_fin(rmpi_vc_t *vc, int sub, uint64_t req, uint32_t count)
{
    wire_req_t f = {{0, RMPI_F_FIN, 0}, count, req};
    struct iovec iov = {&f, sizeof f};
    rmpi_vc_send_on(vc, sub, &iov, 1, sizeof f);
}

static void stripes_done(rmpi_rndv_t *rv);

/* An RDMA op of stripe k failed: take its rail out of service and give the stripe another
 * (fatal when none is left). -EFAULT is the peer's fault, not the rail's: the memory its
 * RTS or CTS named is not registered there; the peer is cut off, the stripe abandoned
 * (returns -1), else 0. */
static int stripe_move(rmpi_rndv_t *rv, int k, rmpi_net_op_t *op, size_t len)
{
    rmpi_vc_t *vc = rv->vc;
    int sub = rmpi_vc_sub_of(vc, op->rail);
    char why[160];
    if (op->status == -EFAULT) {
        snprintf(why, sizeof why,
                 "rank %d named memory for a rendezvous that it has not registered (RDMA %s of %zu "
                 "bytes refused)",
                 vc->peer, rv->pushing ? "write" : "read", len);
        rmpi_vc_cut(vc, why);
        return -1;
    }
    snprintf(why, sizeof why, "RDMA %s failed with error %d", rv->pushing ? "write" : "read", -op->status);
    if (vc->nsub < 2 || rmpi_vc_rail_failed(vc, sub, why) == 0)
        rmpi_fatal("RDMA %s of %zu bytes with rank %d on rail %s failed (error %d) and no other rail is left.",
                   rv->pushing ? "write" : "read", len, vc->peer, op->rail->hints.name, -op->status);
    if (rv->stripe[k].sub == sub) /* not yet moved by an earlier failed op of the stripe */
        rmpi_vc_stripe_move(vc, &rv->stripe[k]);
    return 0;
}

/* Completion filter: the request moves on only when the last stripe is in. */
static void stripe_done(rmpi_net_op_t *op)
{
    rmpi_rndv_t *rv = op->ctx;
    if (RMPI_UNLIKELY(op->status)) {
        /* The stripe's rail failed: take it out of service and move the stripe to another. */
        int k = (int)(op - rv->op);
        if (stripe_move(rv, k, op, rv->stripe[k].len) == 0)
            post_stripe(rv, k);
        return;
    }
    rmpi_vc_stripe_done(rv->vc, &rv->stripe[(int)(op - rv->op)]);
    if (--rv->pending)
        return;
    stripes_done(rv);
}

/* The last stripe is in: feed the scheduler, send the FINs, complete. */
static void stripes_done(rmpi_rndv_t *rv)
{
    rmpi_req_t *r = rv->req;
    rmpi_vc_t *vc = rv->vc;
    uint64_t t[RMPI_VC_MAX_SUB];
    int failed = 0; /* a stripe's rail failed while it ran: its time measured the failure */
    for (int k = 0; k < rv->nstripes; k++) {
        uint64_t post = rv->seg ? rv->seg[k].t_post : rv->op[k].t_post;
        t[k] = (rv->seg ? rv->seg[k].t_done : rv->op[k].t_done) - post;
        rmpi_subchan_t *sc = &vc->sub[rv->stripe[k].sub];
        sc->rdma_bytes += rv->stripe[k].len;
        failed |= sc->t_down > post;
    }
    if (!failed)
        rmpi_vc_stripe_feedback(vc, rv->stripe, rv->nstripes, t);
    /* One FIN per subchannel that carried data: in write mode it follows the data on the
     * same rail, so the receiver knows every stripe has landed. A read that finished after
     * its rail failed (ofi lets reads libfabric holds run out: src/net/ofi/README.md) has its
     * data in place, so its FIN takes a live subchannel instead of the lost one. A write
     * whose completion already says its bytes landed (hints.put_landed) has no data for its
     * FIN to follow: the FIN takes the small frames' subchannel. Sent behind the other
     * messages' stripes still queued on a slow rail, it held every later frame of the VC
     * (delivery is in PSN order): at 10:1 the first 0.65 s ran at twice the slow rail. */
    int fin_sub = -1;
    if (rv->pushing && vc->nup > 1)
        fin_sub = rmpi_sched_small(&vc->sched);
    for (int k = 0; k < rv->nstripes; k++) {
        int sub = rv->stripe[k].sub;
        if (RMPI_UNLIKELY(!vc->sched.up[sub]) && !rv->pushing && vc->nup > 0)
            sub = rmpi_sched_small(&vc->sched);
        else if (fin_sub >= 0 && sub != fin_sub && rmpi_vc_rail(vc, sub)->hints.put_landed &&
                 rmpi_vc_rail(vc, sub)->ops == rmpi_vc_rail(vc, fin_sub)->ops)
            sub = fin_sub;
        rmpi_core_send_fin(vc, sub, r->peer_req, (uint32_t)rv->nstripes);
    }
    rndv_finish(r);
}

static void start_stripes(rmpi_req_t *r, rmpi_vc_t *vc, int push, char *local, uint64_t raddr, const uint64_t *rkeys,
                          uint32_t nkeys, size_t n)
{
    if (nkeys != (uint32_t)vc->nsub)
        rmpi_fatal("rank %d offers %u rail(s) for a rendezvous but this rank has %d toward it; both peers must "
                   "see the same rails (check RMPI_TCP_IFACES on every host).",
                   vc->peer, nkeys, vc->nsub);
    rmpi_rndv_t *rv = rndv_of(r, vc);
    rv->pushing = push;
    rv->local = local;
    rv->raddr = raddr;
    memcpy(rv->rkeys, rkeys, nkeys * sizeof *rkeys);
    if (push)
        rmpi_vc_stripe_seen(vc);
    rv->nstripes = rmpi_vc_stripe(vc, n, rv->stripe, RMPI_VC_MAX_SUB);
    rv->pending = rv->nstripes;
    if (RMPI_UNLIKELY(r->flags & RMPI_RF_SEGS)) {
        rv->seg = rmpi_xcalloc((size_t)rv->nstripes, sizeof *rv->seg);
        for (int k = 0; k < rv->nstripes; k++) {
            rv->seg[k].next = rv->stripe[k].off;
            rv->seg[k].end = rv->stripe[k].off + rv->stripe[k].len;
            rv->seg[k].t_post = rmpi_time_ns();
        }
        for (int k = 0; k < rv->nstripes; k++)
            seg_post(rv, k);
        return;
    }
    for (int k = 0; k < rv->nstripes; k++)
        post_stripe(rv, k);
}

static void post_stripe(rmpi_rndv_t *rv, int k)
{
    const rmpi_stripe_t *s = &rv->stripe[k];
    rmpi_rail_t *rail = rmpi_vc_rail(rv->vc, s->sub);
    rmpi_net_op_t *op = &rv->op[k];
    op->complete = stripe_done;
    op->ctx = rv;
    op->status = 0;
    rv->vc->sub[s->sub].rdma_posted += s->len;
    if (rv->pushing)
        rail->ops->put(rail, rv->vc->peer, rv->local + s->off, s->len, rv->raddr + s->off, rv->rkeys[s->sub], op);
    else
        rail->ops->get(rail, rv->vc->peer, rv->local + s->off, s->len, rv->raddr + s->off, rv->rkeys[s->sub], op);
}

/* Post one piece of stripe k: local memory [local, local + len) = message bytes
 * [off, off + len), at the peer's raddr. */
static void seg_op_post(rmpi_rndv_t *rv, int k, void *local, size_t len, size_t off, uint64_t raddr)
{
    seg_stripe_t *ss = &rv->seg[k];
    int i = __builtin_ctz(~ss->busy);
    rmpi_net_op_t *op = &ss->op[i];
    ss->busy |= 1u << i;
    ss->inflight++;
    ss->oloc[i] = local;
    ss->ooff[i] = off;
    ss->olen[i] = len;
    ss->oraddr[i] = raddr;
    op->complete = seg_op_done;
    op->ctx = rv;
    op->status = 0;
    int sub = rv->stripe[k].sub;
    rmpi_rail_t *rail = rmpi_vc_rail(rv->vc, sub);
    rv->vc->sub[sub].rdma_posted += len;
    if (rv->pushing)
        rail->ops->put(rail, rv->vc->peer, local, len, raddr, rv->rkeys[sub], op);
    else
        rail->ops->get(rail, rv->vc->peer, local, len, raddr, rv->rkeys[sub], op);
}

/* The peer's address of message byte off; *len is cut to what stays in one of its pieces. */
static uint64_t remote_at(const rmpi_rndv_t *rv, size_t off, size_t *len)
{
    if (!rv->rp)
        return rv->raddr + off;
    uint32_t lo = 0, hi = rv->nrp; /* last piece starting at or before off */
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (rv->rp_at[mid] <= off)
            lo = mid;
        else
            hi = mid;
    }
    size_t in = off - rv->rp_at[lo];
    if (*len > rv->rp[lo].len - in)
        *len = rv->rp[lo].len - in;
    return rv->rp[lo].addr + in;
}

/* Keep stripe k's window of ops full with the next pieces of the user's memory (cut where
 * the peer's pieces end, when it sent them). */
static void seg_post(rmpi_rndv_t *rv, int k)
{
    seg_stripe_t *ss = &rv->seg[k];
    rmpi_req_t *r = rv->req;
    while (ss->next < ss->end && ss->inflight < SEG_WINDOW) {
        struct iovec iov[SEG_WINDOW];
        int n = rmpi_core_segs(r, ss->next, ss->end - ss->next, iov, SEG_WINDOW - ss->inflight);
        if (n <= 0)
            rmpi_fatal("the datatype of a rendezvous with rank %d lists no memory for message bytes %zu..%zu.",
                       rv->vc->peer, ss->next, ss->end);
        for (int j = 0; j < n && ss->inflight < SEG_WINDOW; j++) {
            char *p = iov[j].iov_base;
            size_t left = iov[j].iov_len;
            while (left && ss->inflight < SEG_WINDOW) {
                size_t len = left;
                uint64_t raddr = remote_at(rv, ss->next, &len);
                seg_op_post(rv, k, p, len, ss->next, raddr);
                p += len;
                left -= len;
                ss->next += len;
            }
        }
    }
}

/* One RDMA op of a segment-list stripe is done: post the next pieces, or close the stripe. */
static void seg_op_done(rmpi_net_op_t *op)
{
    rmpi_rndv_t *rv = op->ctx;
    int k = (int)(((char *)op - (char *)rv->seg) / (ptrdiff_t)sizeof *rv->seg);
    seg_stripe_t *ss = &rv->seg[k];
    int i = (int)(op - ss->op);
    ss->busy &= ~(1u << i);
    ss->inflight--;
    if (RMPI_UNLIKELY(op->status)) {
        if (stripe_move(rv, k, op, ss->olen[i]) == 0)
            seg_op_post(rv, k, ss->oloc[i], ss->olen[i], ss->ooff[i], ss->oraddr[i]);
        return;
    }
    if (op->t_done > ss->t_done)
        ss->t_done = op->t_done;
    seg_post(rv, k);
    if (ss->inflight == 0 && ss->next == ss->end) {
        rmpi_vc_stripe_done(rv->vc, &rv->stripe[k]);
        if (--rv->pending == 0)
            stripes_done(rv);
    }
}

void rmpi_rndv_pull(rmpi_req_t *r, rmpi_vc_t *vc, uint64_t raddr, const uint64_t *rkeys, uint32_t nkeys, size_t n)
{
    start_stripes(r, vc, 0, r->buf, raddr, rkeys, nkeys, n);
}

void rmpi_rndv_push(rmpi_req_t *r, rmpi_vc_t *vc, uint64_t raddr, const uint64_t *rkeys, uint32_t nkeys, size_t n)
{
    start_stripes(r, vc, 1, r->buf, raddr, rkeys, nkeys, n);
}

void rmpi_rndv_push_pieces(rmpi_req_t *r, rmpi_vc_t *vc, const void *p, uint32_t np, const uint64_t *rkeys,
                           uint32_t nkeys, size_t n)
{
    rmpi_rndv_t *rv = rndv_of(r, vc);
    size_t at = 0;
    rv->rp = rmpi_xmalloc((size_t)np * sizeof *rv->rp);
    rv->rp_at = rmpi_xmalloc((size_t)np * sizeof *rv->rp_at);
    memcpy(rv->rp, p, (size_t)np * sizeof *rv->rp); /* from the frame: any alignment */
    for (uint32_t i = 0; i < np; i++) {
        rv->rp_at[i] = at;
        at += rv->rp[i].len;
    }
    rv->nrp = np;
    start_stripes(r, vc, 1, NULL, 0, rkeys, nkeys, n);
}

int rmpi_rndv_fin(rmpi_req_t *r, uint32_t count)
{
    rmpi_rndv_t *rv = r->rv;
    if (!rv)
        return count == 1 ? (rndv_finish(r), 0) : -1; /* nothing moved: the one FIN of an empty message */
    if (rv->fins && count != rv->fin_count)
        return -1;
    rv->fin_count = count;
    if (++rv->fins < count)
        return 0;
    rndv_finish(r);
    return 0;
}
