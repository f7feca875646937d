/* template: the smallest complete provider, to copy when writing a new one (see
 * src/net/README.md, "Writing a provider", and the contract in net.h).
 *
 * Its "network" is this process: every open() makes the rail of rank env->rank, and the
 * ranks opened in one process reach each other. A frame sent to peer p is copied into p's
 * inbox and handed to p's on_frame when p's rail progresses; RDMA is emulated by memcpy
 * after checking p's registration table, as tcp emulates it over a socket. The provider
 * is not in net.c's table, so RMPI_NET never selects it; tests/unit/net/template.c opens
 * two ranks in one process and drives them through the contract, so it cannot rot.
 *
 * What every provider must keep, and where this one does it:
 *   - send() copies the frame before it returns (template_send) and never fails for lack of
 *     room: it queues;
 *   - callbacks (on_frame, op->complete) run only inside progress(), never inside the
 *     posting call, so the caller may post while its state is half updated (template_progress);
 *   - per (rail, peer), frames and put data arrive in the order issued, and a put's data
 *     is in place before a later frame is delivered (one FIFO inbox per rank; the put's
 *     memcpy happens before it returns);
 *   - get/put stamp op->t_post and op->t_done (the completion filter needs them) and
 *     complete with -EFAULT when the target's registrations do not cover the access;
 *   - reaches() is deterministic and symmetric: both peers must agree on their rails. */
#include "../net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ranks one process can hold: a test needs two. */
#define TEMPLATE_MAX_RANKS 8

/* An arrived frame (op == NULL) or a finished RDMA operation waiting for progress(). */
typedef struct template_event {
    struct template_event *next;
    rmpi_net_op_t *op;
    int from; /* frame: the sending rank */
    size_t len;
    char data[];
} template_event_t;

typedef struct template_rail {
    rmpi_rail_t base;   /* first: the library only sees &base */
    rmpi_net_env_t env; /* a copy: the caller's may not outlive open() */
    template_event_t *head, **tail;
    rmpi_net_mrtab_t mr; /* this rank's registrations, checked by every access */
} template_rail_t;

/* The "fabric": the rail of every rank opened in this process. */
static template_rail_t *template_world[TEMPLATE_MAX_RANKS];

static template_rail_t *template_of(rmpi_rail_t *rail) { return (template_rail_t *)rail; }

static void template_push(template_rail_t *t, template_event_t *ev)
{
    ev->next = NULL;
    *t->tail = ev;
    t->tail = &ev->next;
}

/* Open the rails this process can use here; 0 rails means "not usable", not an error. A
 * real provider also publishes its address with rmpi_pmi_put here (unless env->late) and
 * reads its peers' after the fence, in ready() or on first use. */
static int template_open(const rmpi_net_env_t *env, rmpi_rail_t **rails, int max)
{
    if (max < 1 || env->rank < 0 || env->rank >= TEMPLATE_MAX_RANKS || template_world[env->rank])
        return 0;
    template_rail_t *t = rmpi_xcalloc(1, sizeof *t);
    t->base.ops = &rmpi_template_ops;
    /* Hints steer the VC: bandwidth and latency weight the striping, rdma_native picks the
     * rendezvous mode, max_frame bounds eager frames, scope and tier which rails are used. */
    snprintf(t->base.hints.name, sizeof t->base.hints.name, "template");
    t->base.hints.rdma_native = 0;
    t->base.hints.max_frame = (size_t)1 << 20;
    t->base.hints.scope = RMPI_SCOPE_INTRA;
    t->env = *env;
    t->tail = &t->head;
    template_world[env->rank] = t;
    rails[0] = &t->base;
    return 1;
}

static int template_reaches(rmpi_rail_t *rail, int peer)
{
    template_rail_t *t = template_of(rail);
    return peer != t->env.rank && peer >= 0 && peer < t->env.size && peer < TEMPLATE_MAX_RANKS && template_world[peer];
}

static int template_send(rmpi_rail_t *rail, int peer, const struct iovec *iov, int iovcnt)
{
    if (!template_reaches(rail, peer))
        return -1;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    template_event_t *ev = rmpi_xmalloc(sizeof *ev + len);
    ev->op = NULL;
    ev->from = template_of(rail)->env.rank;
    ev->len = len;
    rmpi_iov_gather(ev->data, iov, iovcnt); /* the caller may reuse iov once we return */
    template_push(template_world[peer], ev);
    return 0;
}

/* Registration: emulated RDMA only needs a table entry with a random key; a provider on
 * real hardware pins and registers here (and sets hints.mr_cache). */
static int template_mr_reg(rmpi_rail_t *rail, void *addr, size_t len, rmpi_mr_t *mr)
{
    rmpi_net_mrtab_reg(&template_of(rail)->mr, addr, len, mr);
    return 0;
}

static void template_mr_dereg(rmpi_rail_t *rail, rmpi_mr_t *mr) { rmpi_net_mrtab_dereg(&template_of(rail)->mr, mr); }

/* get (pull) or put (push) of len bytes at the peer's (raddr, rkey). The copy happens now;
 * the completion waits for this rail's progress(). */
static int template_rdma(rmpi_rail_t *rail, int peer, void *local, size_t len, uint64_t raddr, uint64_t rkey,
                         rmpi_net_op_t *op, int push)
{
    if (!template_reaches(rail, peer))
        return -1;
    op->rail = rail;
    op->t_post = rmpi_time_ns();
    op->status = rmpi_net_mrtab_check(&template_world[peer]->mr, rkey, raddr, len);
    void *remote = (void *)(uintptr_t)raddr; /* one address space: the target's address is ours */
    if (op->status == 0 && len)
        memcpy(push ? remote : local, push ? local : remote, len);
    template_event_t *ev = rmpi_xmalloc(sizeof *ev);
    ev->op = op;
    template_push(template_of(rail), ev);
    return 0;
}

static int template_get(rmpi_rail_t *rail, int peer, void *local, size_t len, uint64_t raddr, uint64_t rkey,
                        rmpi_net_op_t *op)
{
    return template_rdma(rail, peer, local, len, raddr, rkey, op, 0);
}

static int template_put(rmpi_rail_t *rail, int peer, const void *local, size_t len, uint64_t raddr, uint64_t rkey,
                        rmpi_net_op_t *op)
{
    return template_rdma(rail, peer, (void *)local, len, raddr, rkey, op, 1);
}

static int template_progress(rmpi_rail_t *rail)
{
    template_rail_t *t = template_of(rail);
    /* Detach the list first: what the callbacks send lands on a fresh list, for next time. */
    template_event_t *ev = t->head;
    t->head = NULL;
    t->tail = &t->head;
    int n = 0;
    for (template_event_t *next; ev; ev = next, n++) {
        next = ev->next;
        if (ev->op) {
            ev->op->t_done = rmpi_time_ns();
            ev->op->complete(ev->op);
        } else {
            t->env.on_frame(rail, ev->from, ev->data, ev->len);
        }
        free(ev);
    }
    return n;
}

/* Release everything. A network provider first flushes what it still has queued. */
static void template_close(rmpi_rail_t *rail)
{
    template_rail_t *t = template_of(rail);
    for (template_event_t *ev = t->head, *next; ev; ev = next) {
        next = ev->next;
        free(ev);
    }
    rmpi_net_mrtab_free(&t->mr);
    template_world[t->env.rank] = NULL;
    free(t);
}

static void template_describe(rmpi_rail_t *rail, void *file)
{
    fprintf(file, "    example provider: ranks of one process, RDMA emulated by memcpy\n");
}

/* Optional members left NULL: ready (nothing to set up after the fence), send_zc (frames
 * read from the caller's memory until an op completes), card/peer_add (dynamic processes),
 * backlog (bytes not yet delivered, for large-frame rail choice). */
const struct rmpi_net_ops rmpi_template_ops = {
    .version = RMPI_NET_OPS_VERSION,
    .name = "template",
    .open = template_open,
    .reaches = template_reaches,
    .send = template_send,
    .mr_reg = template_mr_reg,
    .mr_dereg = template_mr_dereg,
    .get = template_get,
    .put = template_put,
    .progress = template_progress,
    .close = template_close,
    .describe = template_describe,
};
