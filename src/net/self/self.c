/* self: the loopback rail a rank uses to talk to itself. Frames are copied into a FIFO
 * and delivered at the next progress; RDMA is a memcpy whose completion is deferred to
 * progress, as the contract requires, after the same registration check as any emulated
 * RDMA (net.h): an rkey and range that no registration covers complete with -EFAULT. */
#include "../net.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct self_item {
    struct self_item *next;
    rmpi_net_op_t *op; /* NULL: a frame of len bytes follows */
    size_t len;
    char data[];
} self_item_t;

typedef struct self_rail {
    rmpi_rail_t base;
    const rmpi_net_env_t *env;
    self_item_t *head, **tail;
    rmpi_net_mrtab_t mr;
} self_rail_t;

static self_rail_t self_rail;

static void enqueue(self_rail_t *s, self_item_t *it)
{
    it->next = NULL;
    *s->tail = it;
    s->tail = &it->next;
}

static int self_open(const rmpi_net_env_t *env, rmpi_rail_t **out, int max)
{
    if (max < 1)
        return 0;
    self_rail_t *s = &self_rail;
    memset(s, 0, sizeof *s);
    s->base.ops = &rmpi_self_ops;
    snprintf(s->base.hints.name, sizeof s->base.hints.name, "self");
    s->base.hints.rdma_native = 1;
    s->base.hints.max_frame = (size_t)1 << 30;
    s->base.hints.scope = RMPI_SCOPE_SELF;
    s->env = env;
    s->tail = &s->head;
    out[0] = &s->base;
    return 1;
}

static int self_reaches(rmpi_rail_t *rail, int peer) { return peer == self_rail.env->rank; }

static int self_send(rmpi_rail_t *rail, int peer, const struct iovec *iov, int iovcnt)
{
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    self_item_t *it = rmpi_xmalloc(sizeof *it + len);
    it->op = NULL;
    it->len = len;
    rmpi_iov_gather(it->data, iov, iovcnt);
    enqueue(&self_rail, it);
    return 0;
}

static int self_mr_reg(rmpi_rail_t *rail, void *addr, size_t len, rmpi_mr_t *mr)
{
    rmpi_net_mrtab_reg(&self_rail.mr, addr, len, mr);
    return 0;
}

static void self_mr_dereg(rmpi_rail_t *rail, rmpi_mr_t *mr) { rmpi_net_mrtab_dereg(&self_rail.mr, mr); }

/* remote: the registered side (raddr, rkey), checked before anything is copied. */
static int self_rdma(rmpi_net_op_t *op, void *dst, const void *src, size_t len, uint64_t raddr, uint64_t rkey)
{
    op->status = rmpi_net_mrtab_check(&self_rail.mr, rkey, raddr, len);
    if (op->status == 0 && len)
        memmove(dst, src, len);
    op->t_post = rmpi_time_ns();
    self_item_t *it = rmpi_xmalloc(sizeof *it);
    it->op = op;
    it->len = 0;
    enqueue(&self_rail, it);
    return 0;
}

static int self_get(rmpi_rail_t *rail, int peer, void *local, size_t len, uint64_t raddr, uint64_t rkey,
                    rmpi_net_op_t *op)
{
    op->rail = rail;
    return self_rdma(op, local, (const void *)(uintptr_t)raddr, len, raddr, rkey);
}

static int self_put(rmpi_rail_t *rail, int peer, const void *local, size_t len, uint64_t raddr, uint64_t rkey,
                    rmpi_net_op_t *op)
{
    op->rail = rail;
    return self_rdma(op, (void *)(uintptr_t)raddr, local, len, raddr, rkey);
}

static __attribute__((noinline)) int self_deliver(rmpi_rail_t *rail);

/* Every pass calls this; the test alone stays here, so an empty pass saves no registers (with
 * the loop below in the same function the compiler pushed and popped six: 16 instructions). */
static int self_progress(rmpi_rail_t *rail)
{
    if (RMPI_LIKELY(!self_rail.head))
        return 0;
    return self_deliver(rail);
}

static int self_deliver(rmpi_rail_t *rail)
{
    self_rail_t *s = &self_rail;
    /* Take the current list: frames sent by the handlers below wait for the next call. */
    self_item_t *it = s->head;
    s->head = NULL;
    s->tail = &s->head;
    int n = 0;
    while (it) {
        self_item_t *next = it->next;
        if (it->op) {
            it->op->t_done = rmpi_time_ns();
            it->op->complete(it->op);
        } else {
            s->env->on_frame(rail, s->env->rank, it->data, it->len);
        }
        free(it);
        it = next;
        n++;
    }
    return n;
}

static void self_close(rmpi_rail_t *rail)
{
    self_item_t *it = self_rail.head;
    while (it) {
        self_item_t *next = it->next;
        free(it);
        it = next;
    }
    self_rail.head = NULL;
    self_rail.tail = &self_rail.head;
    rmpi_net_mrtab_free(&self_rail.mr);
}

const struct rmpi_net_ops rmpi_self_ops = {
    .version = RMPI_NET_OPS_VERSION,
    .name = "self",
    .open = self_open,
    .reaches = self_reaches,
    .send = self_send,
    .mr_reg = self_mr_reg,
    .mr_dereg = self_mr_dereg,
    .get = self_get,
    .put = self_put,
    .progress = self_progress,
    .close = self_close,
};
