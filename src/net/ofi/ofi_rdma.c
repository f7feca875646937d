/* ofi: memory registration (fi_mr_reg; the net layer caches regions, mrcache.c) and RDMA get/put with
 * fi_read/fi_write (rails without FI_RMA go to ofi_emul.c instead), following the domain's mr_mode:
 *   FI_MR_VIRT_ADDR  remote addresses are virtual (as the core sends them); without it they
 *                    are offsets, and the region's base travels in the key we choose
 *   FI_MR_PROV_KEY   the provider picks keys (fi_mr_key); without it we request unique ones
 *   FI_MR_LOCAL      local buffers need a descriptor: the covering registration, or one
 *                    made for the op and dropped at its completion
 *   FI_MR_ENDPOINT   regions are bound to the endpoint and enabled before use
 *   FI_MR_ALLOCATED  nothing to do: only allocated memory is ever registered */
#include "ofi.h"

#include <rdma/fi_atomic.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void rmpi_ofi_mr_env(void)
{
    /* libfabric's default memory monitor (memhooks) rewrites the munmap/madvise/mremap
     * entries of every loaded object's GOT, so the application's munmap no longer reaches
     * mrcache_hooks.c and our cache would hand out a registration whose pinned pages are
     * gone (seen on verbs: the peer read the old pages). We cache above libfabric, so its
     * cache (and monitor) is redundant: off, unless the user chose a monitor. */
    rmpi_rt_setenv_default("FI_MR_CACHE_MONITOR", "disabled");
}

/* Keys we request are random (a clash with a live one is -FI_ENOKEY: the caller draws
 * again). With offset addressing the region's base fills the low 48 bits, leaving 16. */
static uint64_t next_key(rmpi_ofi_rail_t *r, const void *addr)
{
    if (!(r->mr_mode & FI_MR_VIRT_ADDR))
        return (rmpi_net_random_key(64 - RMPI_OFI_KEY_ADDR_BITS) << RMPI_OFI_KEY_ADDR_BITS) |
               ((uintptr_t)addr & RMPI_OFI_KEY_ADDR_MASK);
    return rmpi_net_random_key(r->key_size && r->key_size < 8 ? 8 * (int)r->key_size : 64);
}

/* key 0: one of ours (next_key), else exactly that one */
static int reg_key(rmpi_ofi_rail_t *r, void *addr, size_t len, uint64_t access, uint64_t key, rmpi_ofi_reg_t **out)
{
    if (!key && !(r->mr_mode & FI_MR_VIRT_ADDR) && ((uintptr_t)addr & ~RMPI_OFI_KEY_ADDR_MASK))
        return -FI_EINVAL;
    struct fid_mr *mr = NULL;
    int rc = -FI_ENOKEY;
    for (int tries = 0; tries < 8 && rc == -FI_ENOKEY; tries++)
        rc = fi_mr_reg(r->domain, addr, len, access, 0, key ? key : next_key(r, addr), 0, &mr, NULL);
    if (rc)
        return rc;
    if (r->mr_mode & FI_MR_ENDPOINT) {
        rc = fi_mr_bind(mr, &r->ep->fid, 0);
        if (rc == 0)
            rc = fi_mr_enable(mr);
        if (rc) {
            fi_close(&mr->fid);
            return rc;
        }
    }
    rmpi_ofi_reg_t *g = rmpi_xcalloc(1, sizeof *g);
    g->addr = addr;
    g->len = len;
    g->mr = mr;
    g->desc = fi_mr_desc(mr);
    g->next = r->regs.next;
    g->prev = &r->regs;
    r->regs.next->prev = g;
    r->regs.next = g;
    *out = g;
    return 0;
}

int rmpi_ofi_reg(rmpi_ofi_rail_t *r, void *addr, size_t len, uint64_t access, rmpi_ofi_reg_t **out)
{
    return reg_key(r, addr, len, access, 0, out);
}

void rmpi_ofi_dereg(rmpi_ofi_rail_t *r, rmpi_ofi_reg_t *g)
{
    g->prev->next = g->next;
    g->next->prev = g->prev;
    fi_close(&g->mr->fid);
    free(g);
}

int rmpi_ofi_mr_reg(rmpi_rail_t *rail, void *addr, size_t len, rmpi_mr_t *mr)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    if (r->emul) {
        rmpi_net_mrtab_reg(&r->emr, addr, len, mr);
        return 0;
    }
    mr->addr = addr;
    mr->len = len;
    mr->rkey = 0;
    mr->desc = NULL;
    if (len == 0)
        return 0;
    rmpi_ofi_reg_t *g;
    int rc = rmpi_ofi_reg(r, addr, len, FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE, &g);
    if (rc) {
        rmpi_warn("RMPI_OFI_PROVIDER=%s: registering %zu bytes at %p on %s failed (fi_mr_reg: %s).", rmpi_ofi_prov(r),
                  len, addr, rail->hints.name, fi_strerror(-rc));
        return -1;
    }
    mr->rkey = fi_mr_key(g->mr);
    mr->desc = g;
    return 0;
}

void rmpi_ofi_mr_dereg(rmpi_rail_t *rail, rmpi_mr_t *mr)
{
    if (rmpi_ofi_rail_of(rail)->emul)
        rmpi_net_mrtab_dereg(&rmpi_ofi_rail_of(rail)->emr, mr);
    else if (mr->desc)
        rmpi_ofi_dereg(rmpi_ofi_rail_of(rail), mr->desc);
    mr->desc = NULL;
}

/* A key a peer may still hold (a region detached from a dynamic window while an origin's
 * epoch, which read it, is open: the user's error): tcp;ofi_rxm answers an access with a
 * closed key by dropping the connection (tcpx "invalid rma iov received"; nothing tells
 * either end, and every frame after it is lost). Where keys are ours and addresses offsets
 * (mr_mode without FI_MR_VIRT_ADDR and FI_MR_PROV_KEY: tcp;ofi_rxm), the key moves to a
 * tomb: the same length of a sink mapping (MAP_NORESERVE: only pages written take memory),
 * so a late access lands there and the origin learns of it from the window's region table
 * (src/rma/rdma.c). The last RMPI_OFI_TOMBS tombs are kept (an origin that accesses an
 * older one in the same epoch costs the connection); elsewhere the key is closed. */
void rmpi_ofi_mr_retire(rmpi_rail_t *rail, rmpi_mr_t *mr)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    uint64_t key = mr->rkey;
    size_t len = mr->len;
    int tomb = !r->emul && mr->desc && len && !(r->mr_mode & (FI_MR_VIRT_ADDR | FI_MR_PROV_KEY));
    rmpi_ofi_mr_dereg(rail, mr);
    if (!tomb)
        return;
    if (len > r->sink_len) { /* a larger sink (a power of two: few of them); the old ones stay under their tombs */
        size_t n = 4096;
        while (n < len && n < SIZE_MAX / 2)
            n *= 2;
        void *m = r->nsinks < RMPI_OFI_SINKS
                      ? mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                      : MAP_FAILED;
        if (m == MAP_FAILED)
            return;
        r->sinks[r->nsinks].mem = m;
        r->sinks[r->nsinks++].len = n;
        r->sink_len = n;
    }
    rmpi_ofi_reg_t *g;
    if (reg_key(r, r->sinks[r->nsinks - 1].mem, len, FI_REMOTE_READ | FI_REMOTE_WRITE, key, &g)) {
        rmpi_log(1, "ofi: no tomb for a retired key on %s: a late access costs the connection", rail->hints.name);
        return;
    }
    rmpi_ofi_reg_t **slot = &r->tombs[r->tomb_next++ % RMPI_OFI_TOMBS];
    if (*slot)
        rmpi_ofi_dereg(r, *slot);
    *slot = g;
}

/* Bounce buffers only toward a peer reached by a second rail, where a stripe can move
 * (rmpi_ofi_rdma_orphan): with one rail the job ends when it fails, and the bounce copy,
 * with an mmap, 128 page faults and an munmap for every 512 KiB chunk, was most of what a
 * 1 MiB read rendezvous over tcp;ofi_rxm cost beyond RailMPI's own tcp. The VC's
 * subchannels are rmpi_net_rails_for's rails, fixed when the VC is made. */
static int bounce_to(rmpi_ofi_rail_t *r, int peer)
{
    if (peer < 0 || peer >= r->env.size || peer == r->env.rank)
        return 0; /* rdma_start turns it down */
    rmpi_ofi_peer_t *p = rmpi_ofi_peer_find(r, peer);
    if (RMPI_UNLIKELY(!p || !p->touched)) /* asked before rmpi_ofi_peer_addr: may be the first contact */
        p = rmpi_ofi_peer_touch(r, peer);
    if (RMPI_UNLIKELY(p->bounce == 0)) {
        rmpi_rail_t *rails[2];
        p->bounce = rmpi_net_rails_for(peer, rails, 2) > 1 ? 1 : -1;
    }
    return p->bounce > 0;
}

/* Chunks of at least BOUNCE_KEEP_MIN bytes take a bounce buffer of max_rma bytes kept by
 * the rail (at most BOUNCE_KEEP of them), so that even with two rails a chunk costs the copy
 * alone, not fresh pages from the kernel. */
#define BOUNCE_KEEP 4
#define BOUNCE_KEEP_MIN ((size_t)64 << 10)
#define BOUNCE_KEEP_MAX ((size_t)4 << 20)

static int bounce_kept(const rmpi_ofi_rail_t *r, size_t n)
{
    return n >= BOUNCE_KEEP_MIN && r->max_rma <= BOUNCE_KEEP_MAX;
}

static char *bounce_get(rmpi_ofi_rail_t *r, size_t n)
{
    if (!bounce_kept(r, n) || !r->bounce_free)
        return rmpi_xmalloc(bounce_kept(r, n) ? r->max_rma : n);
    char *b = r->bounce_free;
    memcpy(&r->bounce_free, b, sizeof r->bounce_free);
    r->nbounce_free--;
    return b;
}

static void bounce_put(rmpi_ofi_rail_t *r, char *b, size_t n)
{
    if (!bounce_kept(r, n) || r->nbounce_free == BOUNCE_KEEP) {
        free(b);
        return;
    }
    memcpy(b, &r->bounce_free, sizeof r->bounce_free);
    r->bounce_free = b;
    r->nbounce_free++;
}

/* net.h's atomic types and operations as libfabric's */
static const enum fi_datatype at_types[RMPI_NET_AT_TYPES] = {FI_INT8,   FI_UINT8, FI_INT16,  FI_UINT16, FI_INT32,
                                                             FI_UINT32, FI_INT64, FI_UINT64, FI_FLOAT,  FI_DOUBLE};
static const enum fi_op at_ops[RMPI_NET_AOPS] = {FI_SUM,          FI_PROD,        FI_MIN,  FI_MAX, FI_LAND,
                                                 FI_LOR,          FI_LXOR,        FI_BAND, FI_BOR, FI_BXOR,
                                                 FI_ATOMIC_WRITE, FI_ATOMIC_READ, FI_CSWAP};

/* One atomic, never in chunks (its count is within atomic_max); no local descriptors
 * (atomics are offered only without FI_MR_LOCAL). */
static ssize_t atomic_post(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d)
{
    enum fi_datatype dt = at_types[d->at_type];
    enum fi_op op = at_ops[d->at_op];
    size_t n = d->at_count;
    void *ctx = &d->ctx.fctx;
    switch (d->at_kind - 1) {
    case RMPI_NET_ATOMIC_WRITE: return fi_atomic(r->ep, d->local, n, NULL, d->dest, d->raddr, d->rkey, dt, op, ctx);
    case RMPI_NET_ATOMIC_FETCH:
        return fi_fetch_atomic(r->ep, op == FI_ATOMIC_READ ? NULL : d->local, n, NULL, d->at_res, NULL, d->dest,
                               d->raddr, d->rkey, dt, op, ctx);
    default:
        return fi_compare_atomic(r->ep, d->local, n, NULL, d->local + d->len / 2, NULL, d->at_res, NULL, d->dest,
                                 d->raddr, d->rkey, dt, op, ctx);
    }
}

int rmpi_ofi_rdma_post(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d)
{
    ssize_t rc;
    /* Longer than the provider takes in one operation: chunks, one after the other. */
    size_t n = d->cur = d->len < r->max_rma || d->at_kind ? d->len : r->max_rma;
    if (d->at_kind) {
        rc = atomic_post(r, d);
    } else if (d->write && !r->saw) {
        /* Without FI_ORDER_SAW a later send could overtake the data: complete the write
         * only when it is in the target buffer. */
        struct iovec iov = {d->local, n};
        struct fi_rma_iov riov = {d->raddr, n, d->rkey};
        void *desc = d->desc;
        struct fi_msg_rma msg = {.msg_iov = &iov,
                                 .desc = &desc,
                                 .iov_count = 1,
                                 .addr = d->dest,
                                 .rma_iov = &riov,
                                 .rma_iov_count = 1,
                                 .context = &d->ctx.fctx};
        rc = fi_writemsg(r->ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE);
    } else if (d->write) {
        rc = fi_write(r->ep, d->local, n, d->desc, d->dest, d->raddr, d->rkey, &d->ctx.fctx);
    } else if (r->bounce && (d->bounce || bounce_to(r, d->peer))) {
        if (!d->bounce) {
            d->bounce = bounce_get(r, n);
            d->bounce_len = n;
            d->fprev = NULL;
            d->fnext = r->flying;
            if (r->flying)
                r->flying->fprev = d;
            r->flying = d;
        }
        rc = fi_read(r->ep, d->bounce, n, NULL, d->dest, d->raddr, d->rkey, &d->ctx.fctx);
    } else {
        rc = fi_read(r->ep, d->local, n, d->desc, d->dest, d->raddr, d->rkey, &d->ctx.fctx);
    }
    if (rc == 0) {
        r->tx_out++;
        r->writes_out += d->write;
        d->posted = 1;
        /* Frames fence from the first chunk on, not from the write's start: a write still
         * in the pending queue is behind every frame queued before it, and counted
         * there it fenced them while they held it back (neither was ever posted: 64
         * rendezvous writes of 1 MiB over tcp;ofi_rxm hung once a CTS came in while an
         * RTS was queued). Frames queued after it stay behind it in the queue. */
        if (d->chunked && !d->split) {
            d->split = 1;
            r->split_writes++;
        }
    }
    return (int)rc;
}

void rmpi_ofi_rdma_chunk_done(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d)
{
    rmpi_ofi_done(r, d->peer, d->ctx.gen, d->cur, !d->write);
    if (d->write && d->ctx.gen == rmpi_ofi_peer(r, d->peer)->gen)
        rmpi_ofi_peer(r, d->peer)->sent += d->cur; /* delivered once a later PING is answered */
    d->wait -= d->cur < d->wait ? d->cur : d->wait;
    if (d->bounce)
        memcpy(d->local, d->bounce, d->cur);
    d->local += d->cur;
    d->raddr += d->cur;
    d->len -= d->cur;
    if (d->len == 0) {
        rmpi_ofi_rdma_done(r, d, 0);
        return;
    }
    r->writes_out -= d->write;
    d->posted = 0;
    if (!r->pend) {
        int rc = rmpi_ofi_rdma_post(r, d);
        if (rc == 0)
            return;
        if (rc != -FI_EAGAIN) {
            rmpi_ofi_rdma_done(r, d, rmpi_ofi_rdma_refused(r, d->peer, rc, d->write));
            return;
        }
    }
    rmpi_ofi_pend_front(r, &d->ctx);
}

static void bounce_free(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d)
{
    if (d->fprev)
        d->fprev->fnext = d->fnext;
    else
        r->flying = d->fnext;
    if (d->fnext)
        d->fnext->fprev = d->fprev;
    bounce_put(r, d->bounce, d->bounce_len);
    d->bounce = NULL;
}

/* Why a bounce buffer at all: tcp;ofi_rxm keeps a connection through a cut and a read it
 * accepted lands whenever the link returns (README.md: closing one peer's connection
 * crashes libfabric 1.17). Into the user's buffer that could be after the request was
 * completed by the same stripe read again on another rail, and the buffer reused. Into a
 * buffer of ours, the read can be given up at once: the stripe moves now instead of
 * waiting out the cut, for one copy per chunk. */
void rmpi_ofi_rdma_orphan(rmpi_ofi_rail_t *r, int peer)
{
    for (rmpi_ofi_rdma_t *d = r->flying; d; d = d->fnext) {
        if (d->peer != peer || !d->posted || d->orphan)
            continue;
        rmpi_ofi_rdma_t *e = rmpi_ofi_rdma_new(r);
        e->ctx.kind = RMPI_OFI_RDMA;
        e->ctx.gen = d->ctx.gen;
        e->op = d->op;
        e->peer = peer;
        e->lmr = d->lmr;
        e->has_lmr = d->has_lmr;
        rmpi_ofi_rdma_defer(r, e, -ECONNRESET);
        d->op = NULL;
        d->has_lmr = 0;
        d->wait = 0;
        d->orphan = 1;
        r->tx_out--; /* close() does not wait for it: it may never end */
        r->orphans++;
    }
}

int rmpi_ofi_rdma_orphan_end(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d)
{
    if (!d->orphan)
        return 0;
    bounce_free(r, d);
    r->orphans--;
    rmpi_ofi_rdma_release(r, d);
    return 1;
}

void rmpi_ofi_rdma_done(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d, int status)
{
    rmpi_net_op_t *op = d->op;
    if (d->wait) {
        rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, d->peer);
        if (status == 0)
            rmpi_ofi_done(r, d->peer, d->ctx.gen, d->wait, !d->write);
        else if (d->ctx.gen == p->gen)
            p->out -= d->wait < p->out ? d->wait : p->out;
        d->wait = 0;
    }
    if (d->posted)
        r->writes_out -= d->write;
    r->split_writes -= d->split;
    if (d->bounce)
        bounce_free(r, d);
    op->t_done = rmpi_time_ns();
    op->status = status;
    if (d->has_lmr)
        rmpi_net_mr_put(&r->pub, &d->lmr);
    rmpi_ofi_rdma_release(r, d);
    op->complete(op);
}

rmpi_ofi_rdma_t *rmpi_ofi_rdma_new(rmpi_ofi_rail_t *r)
{
    rmpi_ofi_rdma_t *d = r->rdma_free;
    if (d)
        r->rdma_free = (rmpi_ofi_rdma_t *)d->ctx.next;
    else
        d = rmpi_xmalloc(sizeof *d);
    memset(d, 0, sizeof *d);
    return d;
}

void rmpi_ofi_rdma_release(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d)
{
    d->ctx.next = (rmpi_ofi_ctx_t *)r->rdma_free;
    r->rdma_free = d;
}

void rmpi_ofi_rdma_free_all(rmpi_ofi_rail_t *r)
{
    while (r->bounce_free) {
        char *b = r->bounce_free;
        memcpy(&r->bounce_free, b, sizeof r->bounce_free);
        free(b);
    }
    r->nbounce_free = 0;
    while (r->rdma_free) {
        rmpi_ofi_rdma_t *d = r->rdma_free;
        r->rdma_free = (rmpi_ofi_rdma_t *)d->ctx.next;
        free(d);
    }
}

void rmpi_ofi_rdma_defer(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d, int status)
{
    d->op->status = status;
    d->ctx.next = r->deferred;
    r->deferred = &d->ctx;
}

static rmpi_ofi_rdma_t *rdma_rec(rmpi_rail_t *rail, int peer, char *local, size_t len, uint64_t raddr, uint64_t rkey,
                                 rmpi_net_op_t *op, int write)
{
    op->rail = rail;
    op->status = 0;
    op->t_post = rmpi_time_ns();
    rmpi_ofi_rdma_t *d = rmpi_ofi_rdma_new(rmpi_ofi_rail_of(rail));
    d->ctx.kind = RMPI_OFI_RDMA;
    d->op = op;
    d->peer = peer;
    d->write = write;
    d->local = local;
    d->len = len;
    d->rkey = rkey;
    d->raddr = raddr;
    return d;
}

static int rdma_go(rmpi_rail_t *rail, rmpi_ofi_rdma_t *d)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    int peer = d->peer, write = d->write;
    size_t len = d->len;
    char *local = d->local;
    if (len == 0) {
        rmpi_ofi_rdma_defer(r, d, 0);
        return 0;
    }
    int rc = rmpi_ofi_peer_addr(r, peer, &d->dest);
    if (rc) {
        rmpi_ofi_rdma_defer(r, d, rc);
        return 0;
    }
    d->ctx.gen = rmpi_ofi_peer(r, peer)->gen;
    if (r->emul) { /* its frames count as they go (watch) */
        rmpi_ofi_emul_start(r, d);
        return 0;
    }
    d->wait = len;
    rmpi_ofi_issued(r, peer, len);
    d->chunked = write && len > r->max_rma; /* frames sent after it must wait for its last chunk */
    if (!(r->mr_mode & FI_MR_VIRT_ADDR)) {
        uint64_t base = d->rkey & RMPI_OFI_KEY_ADDR_MASK;
        if (d->raddr < base) {
            rmpi_ofi_rdma_defer(r, d, -EFAULT);
            return 0;
        }
        d->raddr -= base;
    }
    if (r->mr_mode & FI_MR_LOCAL) {
        /* Through the registration cache, holding a reference until completion: the
         * receiver's buffer of a read rendezvous is registered once, not per message, and
         * an unused cached region cannot be evicted under the op. */
        if (rmpi_net_mr_get(rail, local, len, &d->lmr)) {
            rmpi_warn("RMPI_OFI_PROVIDER=%s: registering the local %zu bytes of an RDMA %s on %s failed.",
                      rmpi_ofi_prov(r), len, write ? "write" : "read", rail->hints.name);
            rmpi_ofi_rdma_defer(r, d, -ENOMEM);
            return 0;
        }
        d->has_lmr = 1;
        d->desc = ((rmpi_ofi_reg_t *)d->lmr.desc)->desc;
    }
    if (!r->pend) {
        uint64_t t0 = 0;
        while ((rc = rmpi_ofi_rdma_post(r, d)) == -FI_EAGAIN && rmpi_ofi_push(r, &t0))
            ;
        if (rc == 0)
            return 0;
        if (rc != -FI_EAGAIN) {
            rmpi_ofi_rdma_defer(r, d, rmpi_ofi_rdma_refused(r, peer, rc, write));
            return 0;
        }
    }
    rmpi_ofi_pend(r, &d->ctx);
    return 0;
}

static int rdma_start(rmpi_rail_t *rail, int peer, char *local, size_t len, uint64_t raddr, uint64_t rkey,
                      rmpi_net_op_t *op, int write)
{
    return rdma_go(rail, rdma_rec(rail, peer, local, len, raddr, rkey, op, write));
}

size_t rmpi_ofi_atomic_max(rmpi_rail_t *rail, int kind, int type, int op)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    if (!r->atomics || (unsigned)kind >= RMPI_NET_ATOMIC_KINDS || (unsigned)type >= RMPI_NET_AT_TYPES ||
        (unsigned)op >= RMPI_NET_AOPS || (op == RMPI_NET_AOP_CSWAP) != (kind == RMPI_NET_ATOMIC_CSWAP) ||
        (op == RMPI_NET_AOP_READ && kind != RMPI_NET_ATOMIC_FETCH))
        return 0;
    uint32_t *m = &r->at_max[kind][type][op];
    if (!*m) { /* asked once: UINT32_MAX for "not offered" */
        size_t count = 0;
        int rc = kind == RMPI_NET_ATOMIC_WRITE   ? fi_atomicvalid(r->ep, at_types[type], at_ops[op], &count)
                 : kind == RMPI_NET_ATOMIC_FETCH ? fi_fetch_atomicvalid(r->ep, at_types[type], at_ops[op], &count)
                                                 : fi_compare_atomicvalid(r->ep, at_types[type], at_ops[op], &count);
        *m = rc || !count ? UINT32_MAX : (uint32_t)RMPI_MIN(count, (size_t)UINT32_MAX - 1);
    }
    return *m == UINT32_MAX ? 0 : *m;
}

int rmpi_ofi_atomic(rmpi_rail_t *rail, int peer, int kind, int type, int op, const void *buf, void *res, size_t count,
                    uint64_t raddr, uint64_t rkey, rmpi_net_op_t *netop)
{
    static const unsigned char at_size[RMPI_NET_AT_TYPES] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};
    size_t es = (unsigned)type < RMPI_NET_AT_TYPES ? at_size[type] : 0;
    size_t len = count * es * (kind == RMPI_NET_ATOMIC_CSWAP ? 2 : 1);
    rmpi_ofi_rdma_t *d = rdma_rec(rail, peer, (char *)buf, len, raddr, rkey, netop, 0);
    d->at_kind = 1 + kind;
    d->at_type = type;
    d->at_op = op;
    d->at_count = count;
    d->at_res = res;
    return rdma_go(rail, d);
}

/* A read longer than max_rma goes as up to SPLIT_MAX reads of equal shares, all posted
 * at once (each still in chunks of max_rma, one after the other), completing the caller's
 * op when the last ends: in turn, every chunk after the first waited a round trip for its
 * request to reach the target. Not toward a peer whose reads take bounce buffers (a
 * second rail to move to: one read per op keeps giving up a cut one simple). */
#define SPLIT_MAX 4
typedef struct split_read {
    rmpi_net_op_t part[SPLIT_MAX];
    rmpi_net_op_t *op; /* the caller's */
    int left, status;
} split_read_t;

static void split_part_done(rmpi_net_op_t *part)
{
    split_read_t *s = part->ctx;
    rmpi_net_op_t *op = s->op;
    if (part->status && !s->status)
        s->status = part->status;
    if (part->t_done > op->t_done)
        op->t_done = part->t_done;
    if (--s->left)
        return;
    op->status = s->status;
    free(s);
    op->complete(op);
}

int rmpi_ofi_get(rmpi_rail_t *rail, int peer, void *local, size_t len, uint64_t raddr, uint64_t rkey, rmpi_net_op_t *op)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    if (len <= r->max_rma || r->emul || (r->bounce && bounce_to(r, peer)))
        return rdma_start(rail, peer, local, len, raddr, rkey, op, 0);
    size_t nchunks = (len + r->max_rma - 1) / r->max_rma;
    int n = nchunks < SPLIT_MAX ? (int)nchunks : SPLIT_MAX;
    /* shares in whole chunks, so no part ends in a short chunk but the last */
    size_t share = (nchunks + (size_t)n - 1) / (size_t)n * r->max_rma;
    split_read_t *s = rmpi_xmalloc(sizeof *s);
    s->op = op;
    s->status = 0;
    op->rail = rail;
    op->status = 0;
    op->t_post = rmpi_time_ns();
    op->t_done = 0;
    n = (int)((len + share - 1) / share);
    s->left = n;
    for (int i = 0; i < n; i++) {
        size_t off = (size_t)i * share;
        rmpi_net_op_t *p = &s->part[i];
        p->complete = split_part_done;
        p->ctx = s;
        rdma_start(rail, peer, (char *)local + off, RMPI_MIN(share, len - off), raddr + off, rkey, p, 0);
    }
    return 0;
}

int rmpi_ofi_put(rmpi_rail_t *rail, int peer, const void *local, size_t len, uint64_t raddr, uint64_t rkey,
                 rmpi_net_op_t *op)
{
    /* Ordered before later sends (FI_ORDER_SAW), a write completes when it has left; on a
     * software provider (tcp;ofi_rxm) it lands only when the target's progress reads it:
     * remote completion needs a later frame the target answers (net.h). */
    op->by_target = rmpi_ofi_rail_of(rail)->saw && rail->hints.rdma_by_target;
    return rdma_start(rail, peer, (char *)local, len, raddr, rkey, op, 1);
}
