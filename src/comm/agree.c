/* Context agreement as a non-blocking state machine, the one way intracommunicator
 * creation picks a context (dup, idup, split, create_group).
 *
 * A round gathers one 32-bit value per member at the first member and sends the combined
 * value back. Rounds alternate: a candidate round (the maximum of every member's next free
 * context id) and a confirm round (the AND of "the candidate is still free here"). While
 * a member waits for a candidate round, its progress may finish other agreements (idups
 * pending on overlapping communicators, a blocking creation beside them) that reserve
 * the same id; such a member answers "no" and every member starts again from a larger
 * candidate. A member that answers "yes" reserves the candidate at once, so nothing that
 * finishes later can take it; the ids of a failed confirm round are lost (the space is
 * 2^24 ids and only ever grows). No member ever waits on a lock or on another agreement,
 * so a program whose members finish their idups in any order cannot deadlock here. */
#include "comm_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct agree_msg {
    uint32_t round, val;
} agree_msg_t;

struct rmpi_agree {
    rmpi_comm_t *c;      /* held */
    rmpi_comm_t *across; /* held; intercommunicator whose local group is c: the first
                              member swaps each round's value with the remote one's */
    int n, me, tag;
    int *ranks; /* c-rank of member i; NULL: all of c */
    unsigned span;
    uint32_t round;        /* even: candidate round, odd: confirm round */
    uint32_t cand;         /* candidate of the last candidate round */
    agree_msg_t mine, res; /* my contribution; the combined value */
    agree_msg_t far;       /* first member: the remote group's value (across) */
    agree_msg_t *in;       /* first member: contributions, one per member */
    rmpi_req_t **rq;       /* transfers of the current step */
    int nrq, sending;      /* first member: 1 while swapping across, 2 once the result is on its way */
    int done;
    void (*on_done)(rmpi_agree_t *a, uint32_t ctx, void *arg);
    void *arg;
    rmpi_agree_t *next;
};

static rmpi_agree_t *active;

static int agree_rank(const rmpi_agree_t *a, int i) { return a->ranks ? a->ranks[i] : i; }

/* A transfer with rank r of c on c's collective context. */
static rmpi_req_t *post_on(rmpi_agree_t *a, rmpi_comm_t *c, int send, void *buf, int r)
{
    rmpi_req_t *q = rmpi_req_alloc(send ? RMPI_REQ_SEND : RMPI_REQ_RECV);
    q->buf = buf, q->len = sizeof(agree_msg_t), q->ctx = c->ctx + 1, q->tag = a->tag;
    if (send) {
        q->rank = rmpi_comm_world_rank(c, r), q->src = c->rank;
        rmpi_core_isend(q);
    } else {
        q->rank = r;
        rmpi_core_irecv(q);
    }
    return q;
}

static rmpi_req_t *post(rmpi_agree_t *a, int send, void *buf, int member)
{
    return post_on(a, a->c, send, buf, agree_rank(a, member));
}

static uint32_t combine(const rmpi_agree_t *a, uint32_t x, uint32_t y)
{
    return (a->round & 1) ? (x && y) : (x > y ? x : y);
}

/* Start round a->round with my contribution. */
static void round_start(rmpi_agree_t *a, uint32_t val)
{
    a->mine = (agree_msg_t){a->round, val};
    a->nrq = 0, a->sending = 0;
    if (a->me == 0) {
        a->in[0] = a->mine;
        for (int i = 1; i < a->n; i++)
            a->rq[a->nrq++] = post(a, 0, &a->in[i], i);
    } else {
        a->rq[a->nrq++] = post(a, 0, &a->res, 0);
        a->rq[a->nrq++] = post(a, 1, &a->mine, 0);
    }
}

/* After a failed confirm round: how far above this member's next free id to propose. Two
 * agreements on the same members that claim the same candidate in opposite orders on two
 * members both fail, and from the same next free id they would propose the same candidate
 * again and could fail the same way for ever (seen: two idups of overlapping pairs and a
 * Comm_dup of WORLD on 2 ranks used up the 2^24 ids in 11 s once frames arrived in another
 * order). A claim fails only where something at or above its candidate was reserved since,
 * so of concurrent agreements with different candidates the highest succeeds on every
 * member: the gap, the same on every member of one agreement (its communicator's context,
 * its tag and the round), differs between agreements and rounds. At most 16 spans of ids
 * are skipped per failed round. */
static uint32_t retry_gap(const rmpi_agree_t *a)
{
    uint32_t h = a->c->ctx * 2654435761u ^ (uint32_t)a->tag * 40503u ^ a->round * 2246822519u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return a->span * (h % 16u);
}

/* The combined value of the round is in a->res: go on or finish. */
static void round_end(rmpi_agree_t *a)
{
    if (!(a->round & 1)) {
        a->cand = a->res.val;
        int ok = rmpi_comm_ctx_claim(a->cand, a->span);
        a->round++;
        round_start(a, (uint32_t)ok);
    } else if (a->res.val) {
        a->done = 1;
    } else {
        a->round++;
        round_start(a, rmpi_comm_next_ctx() + retry_gap(a));
    }
}

/* Advance a as far as its transfers allow; 1 if it moved. */
static int agree_step(rmpi_agree_t *a)
{
    int moved = 0;
    while (!a->done) {
        for (int i = 0; i < a->nrq; i++)
            if (!a->rq[i]->done)
                return moved;
        for (int i = 0; i < a->nrq; i++) {
            rmpi_req_t *q = a->rq[i];
            /* the peers are members running this same code: anything else is malformed */
            if (q->kind == RMPI_REQ_RECV && (q->st_err || q->st_bytes != sizeof(agree_msg_t)))
                rmpi_core_peer_cut(rmpi_comm_world_rank(a->c, q->st_src),
                                   "a context agreement message of the wrong size");
            rmpi_req_release(q);
        }
        a->nrq = 0;
        moved = 1;
        if (a->me == 0 && a->sending == 0) {
            uint32_t v = a->in[0].val;
            for (int i = 1; i < a->n; i++) {
                if (a->in[i].round != a->round)
                    rmpi_core_peer_cut(rmpi_comm_world_rank(a->c, agree_rank(a, i)),
                                       "a context agreement message out of its round");
                v = combine(a, v, a->in[i].val);
            }
            a->res = (agree_msg_t){a->round, v};
            if (a->across) { /* the leaders (rank 0 of each group) swap */
                a->sending = 1;
                a->rq[a->nrq++] = post_on(a, a->across, 0, &a->far, 0);
                a->rq[a->nrq++] = post_on(a, a->across, 1, &a->res, 0);
                continue;
            }
        } else if (a->me == 0 && a->sending == 1) {
            if (a->far.round != a->round)
                rmpi_core_peer_cut(rmpi_comm_world_rank(a->across, 0), "a context agreement message out of its round");
            a->res.val = combine(a, a->res.val, a->far.val);
        }
        if (a->me == 0 && a->sending < 2) {
            a->sending = 2;
            for (int i = 1; i < a->n; i++)
                a->rq[a->nrq++] = post(a, 1, &a->res, i);
            continue;
        }
        if (a->me != 0 && a->res.round != a->round)
            rmpi_core_peer_cut(rmpi_comm_world_rank(a->c, agree_rank(a, 0)),
                               "a context agreement message out of its round");
        round_end(a);
    }
    return moved;
}

static void agree_finish(rmpi_agree_t *a)
{
    if (a->on_done)
        a->on_done(a, a->cand, a->arg);
    rmpi_comm_release(a->c);
    if (a->across)
        rmpi_comm_release(a->across);
    free(a->ranks);
    free(a->in);
    free(a->rq);
    free(a);
}

static int agree_progress(void)
{
    static int busy; /* a send posted from here may run progress again: not twice at once */
    if (busy)
        return 0;
    busy = 1;
    int moved = 0;
    for (rmpi_agree_t **p = &active; *p;) {
        rmpi_agree_t *a = *p;
        moved += agree_step(a);
        if (a->done && a->on_done) {
            *p = a->next;
            agree_finish(a);
        } else {
            p = &a->next;
        }
    }
    if (!active)
        rmpi_core_hook_remove(agree_progress);
    busy = 0;
    return moved;
}

rmpi_agree_t *rmpi_agree_start(const rmpi_mset_t *m, rmpi_comm_t *across, unsigned span,
                               void (*on_done)(rmpi_agree_t *a, uint32_t ctx, void *arg), void *arg)
{
    rmpi_agree_t *a = rmpi_xcalloc(1, sizeof *a);
    a->c = m->c;
    if (!a->c->predefined)
        a->c->refcount++;
    a->across = across;
    if (across)
        across->refcount++;
    a->n = m->n, a->me = m->me, a->tag = m->tag, a->span = span;
    if (m->ranks) {
        a->ranks = rmpi_xmalloc((size_t)m->n * sizeof *a->ranks);
        memcpy(a->ranks, m->ranks, (size_t)m->n * sizeof *a->ranks);
    }
    a->in = rmpi_xcalloc((size_t)m->n, sizeof *a->in);
    a->rq = rmpi_xcalloc((size_t)(m->n > 2 ? m->n : 2), sizeof *a->rq);
    a->on_done = on_done, a->arg = arg;
    if (m->n == 1 && !across) { /* nobody to agree with */
        a->cand = rmpi_comm_next_ctx();
        rmpi_comm_reserve_ctx(a->cand, span);
        a->done = 1;
    } else {
        round_start(a, rmpi_comm_next_ctx());
    }
    if (!a->done || on_done) {
        a->next = active;
        active = a;
        rmpi_core_hook_add(agree_progress);
    }
    return a;
}

uint32_t rmpi_mset_agree_ctx(const rmpi_mset_t *m, unsigned span)
{
    rmpi_agree_t *a = rmpi_agree_start(m, NULL, span, NULL, NULL);
    unsigned idle = 0;
    while (!a->done)
        rmpi_core_wait_step(&idle);
    for (rmpi_agree_t **p = &active; *p; p = &(*p)->next)
        if (*p == a) {
            *p = a->next;
            break;
        }
    if (!active)
        rmpi_core_hook_remove(agree_progress);
    uint32_t ctx = a->cand;
    agree_finish(a);
    return ctx;
}
