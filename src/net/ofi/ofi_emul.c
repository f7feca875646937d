/* ofi: RDMA emulated with messages, on domains without FI_RMA (or RMPI_OFI_RMA=emulate).
 * Registrations are a table of (addr, len) under keys this provider chooses. A get is a
 * GET_REQ control frame answered by GET_DATA pieces (or GET_ERR); a put is a stream of
 * PUT_DATA pieces that the target copies into the registered region, refused once with
 * PUT_ERR. Control frames carry RMPI_OFI_CTRL in the header's src and share the sequence
 * numbers of ordinary frames, so a put's data is in place before any later frame on the
 * same (rail, peer) is delivered. Wire format: docs/wire/ofi.md. */
#include "ofi.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GET_REQ = 1, GET_DATA, GET_ERR, PUT_DATA, PUT_ERR };
#define F_LAST 1
/* The control header after the frame header: kind, flags, errno, id, raddr, rkey, off. */
#define CTL_SIZE 40
/* Pieces of puts and get answers in flight per rail: a long put does not take a pool
 * buffer for every 64 KiB of it at once. */
#define WINDOW 32

typedef struct ctl {
    unsigned kind, flags;
    int err;
    uint64_t id, raddr, rkey, off; /* off: of the piece's bytes in the op; GET_REQ: length */
} ctl_t;

static void ctl_store(char *p, const ctl_t *c)
{
    uint32_t w[2] = {htole32(c->kind | c->flags << 8), htole32((uint32_t)c->err)};
    uint64_t q[4] = {htole64(c->id), htole64(c->raddr), htole64(c->rkey), htole64(c->off)};
    memcpy(p, w, sizeof w);
    memcpy(p + sizeof w, q, sizeof q);
}

static void ctl_load(const char *p, ctl_t *c)
{
    uint32_t w[2];
    uint64_t q[4];
    memcpy(w, p, sizeof w);
    memcpy(q, p + sizeof w, sizeof q);
    c->kind = le32toh(w[0]) & 0xff;
    c->flags = le32toh(w[0]) >> 8 & 0xff;
    c->err = (int)le32toh(w[1]);
    c->id = le64toh(q[0]);
    c->raddr = le64toh(q[1]);
    c->rkey = le64toh(q[2]);
    c->off = le64toh(q[3]);
}

/* A control frame without bytes, in order with everything sent before it. */
static int ctl_send(rmpi_ofi_rail_t *r, int peer, const ctl_t *c)
{
    char buf[CTL_SIZE];
    ctl_store(buf, c);
    struct iovec iov = {buf, sizeof buf};
    return rmpi_ofi_frame_send(r, peer, &iov, 1, RMPI_OFI_CTRL);
}

/* ---- initiator ---- */

void rmpi_ofi_emul_start(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d)
{
    d->id = ++r->emul_id;
    if (d->write) {
        /* Cut into PUT_DATA pieces by progress (rmpi_ofi_emul_drain), behind earlier posts. */
        d->ctx.kind = RMPI_OFI_EMUL;
        rmpi_ofi_pend_add(r, &d->ctx);
        return;
    }
    rmpi_ofi_rdma_t **pp = &rmpi_ofi_peer(r, d->peer)->gets;
    while (*pp)
        pp = (rmpi_ofi_rdma_t **)&(*pp)->ctx.next;
    d->ctx.next = NULL;
    *pp = d;
    ctl_t c = {.kind = GET_REQ, .id = d->id, .raddr = d->raddr, .rkey = d->rkey, .off = d->len};
    int rc = ctl_send(r, d->peer, &c);
    if (rc) {
        *pp = NULL;
        rmpi_ofi_rdma_defer(r, d, rc);
    }
}

static rmpi_ofi_rdma_t *get_take(rmpi_ofi_rail_t *r, int src, uint64_t id, int unlink)
{
    for (rmpi_ofi_rdma_t **pp = &rmpi_ofi_peer(r, src)->gets; *pp; pp = (rmpi_ofi_rdma_t **)&(*pp)->ctx.next) {
        rmpi_ofi_rdma_t *g = *pp;
        if (g->id != id)
            continue;
        if (unlink)
            *pp = (rmpi_ofi_rdma_t *)g->ctx.next;
        return g;
    }
    rmpi_fatal("ofi: rank %d answered emulated read %llu on %s, which rank %d never asked for or has finished; "
               "the control frames are corrupt.",
               src, (unsigned long long)id, r->pub.hints.name, r->env.rank);
}

/* The target refused a put: fail it while pending; once completed, only losing the peer is left. */
static void put_refused(rmpi_ofi_rail_t *r, int src, uint64_t id, int err)
{
    rmpi_ofi_ctx_t *lists[2] = {r->pend, r->deferred};
    for (int k = 0; k < 2; k++)
        for (rmpi_ofi_ctx_t *c = lists[k]; c; c = c->next) {
            rmpi_ofi_rdma_t *d = (rmpi_ofi_rdma_t *)c;
            if (c->kind != RMPI_OFI_EMUL || !d->write || d->peer != src || d->id != id)
                continue;
            d->op->status = err;
            d->len = d->done; /* stop cutting: the stream ends at its next drain */
            if (d->held) {
                rmpi_ofi_tx_put(r, d->held);
                d->held = NULL;
            }
            return;
        }
    char why[200];
    snprintf(why, sizeof why,
             "rank %d refused an emulated RDMA write (put %llu) on %s: the target range is not "
             "inside a registration there",
             src, (unsigned long long)id, r->pub.hints.name);
    r->env.on_peer_lost(&r->pub, src, why);
}

/* ---- streams: puts and get answers, cut into pieces at the head of the pending queue ---- */

static rmpi_ofi_buf_t *piece(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d)
{
    size_t n = r->pub.hints.max_frame - CTL_SIZE;
    if (n > d->len - d->done)
        n = d->len - d->done;
    ctl_t c = {.kind = d->write ? PUT_DATA : GET_DATA, .id = d->id, .raddr = d->raddr, .rkey = d->rkey, .off = d->done};
    /* An answer checks the region again per piece: one deregistered meanwhile ends the read
     * with GET_ERR instead of sending memory that is no longer the peer's to read. */
    if (!d->write && rmpi_net_mrtab_check(&r->emr, d->rkey, (uintptr_t)(d->local + d->done), n)) {
        c.kind = GET_ERR;
        c.err = -EFAULT;
        n = 0;
        d->len = d->done;
    }
    d->done += n;
    if (d->write && d->done == d->len)
        c.flags = F_LAST;
    rmpi_ofi_buf_t *b = rmpi_ofi_tx_get(r);
    rmpi_ofi_hdr_t h = RMPI_OFI_HDR(r, RMPI_OFI_CTRL);
    memcpy(b->data, &h, sizeof h);
    ctl_store(b->data + sizeof h, &c);
    memcpy(b->data + sizeof h + CTL_SIZE, d->local + c.off, n);
    b->peer = d->peer;
    b->piece = 1;
    b->link = 0;
    b->len = sizeof h + CTL_SIZE + n;
    b->ctx.gen = rmpi_ofi_peer(r, d->peer)->gen;
    rmpi_ofi_issued(r, d->peer, b->len);
    return b;
}

int rmpi_ofi_emul_drain(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d)
{
    for (;;) {
        if (d->held) {
            int rc = rmpi_ofi_tx_post(r, d->held);
            if (rc == -FI_EAGAIN)
                return 0;
            if (rc) {
                rmpi_warn("ofi: rank %d could not send an emulated RDMA %s to rank %d on %s (fi_send: %s).",
                          r->env.rank, d->write ? "write" : "read answer", d->peer, r->pub.hints.name,
                          fi_strerror(-rc));
                rmpi_ofi_tx_put(r, d->held);
                if (d->op)
                    d->op->status = -EIO;
                d->len = d->done;
            }
            d->held = NULL;
        }
        if (d->done == d->len)
            return 1;
        if (r->emul_out >= WINDOW)
            return 0;
        d->held = piece(r, d);
    }
}

void rmpi_ofi_emul_sent(rmpi_ofi_rail_t *r, rmpi_ofi_rdma_t *d)
{
    if (d->write)
        rmpi_ofi_rdma_defer(r, d, d->op->status);
    else
        rmpi_ofi_rdma_release(r, d);
}

/* ---- target and initiator: control frames, in order, inside progress ---- */

void rmpi_ofi_emul_rx(rmpi_ofi_rail_t *r, int src, const char *frame, size_t len)
{
    ctl_t c;
    if (!r->emul || len < CTL_SIZE)
        rmpi_fatal("ofi: rank %d sent a %zu-byte control frame to rank %d on %s, which %s.", src, len, r->env.rank,
                   r->pub.hints.name, r->emul ? "is too short" : "does RDMA natively (the address cards differ)");
    ctl_load(frame, &c);
    const char *bytes = frame + CTL_SIZE;
    size_t n = len - CTL_SIZE;
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, src);
    if (c.kind == GET_REQ) {
        int err = rmpi_net_mrtab_check(&r->emr, c.rkey, c.raddr, c.off);
        if (err || c.off == 0) {
            rmpi_log(1,
                     "ofi: rank %d asked to read %llu bytes at %#llx with rkey %#llx on %s, which no "
                     "registration of rank %d covers; the read fails with EFAULT.",
                     src, (unsigned long long)c.off, (unsigned long long)c.raddr, (unsigned long long)c.rkey,
                     r->pub.hints.name, r->env.rank);
            ctl_t e = {.kind = GET_ERR, .err = -EFAULT, .id = c.id};
            ctl_send(r, src, &e);
            return;
        }
        rmpi_ofi_rdma_t *d = rmpi_ofi_rdma_new(r);
        d->ctx.kind = RMPI_OFI_EMUL;
        d->peer = src;
        d->id = c.id;
        d->local = (char *)(uintptr_t)c.raddr;
        d->raddr = c.raddr;
        d->rkey = c.rkey;
        d->len = (size_t)c.off;
        rmpi_ofi_pend_add(r, &d->ctx);
    } else if (c.kind == GET_DATA) {
        rmpi_ofi_rdma_t *g = get_take(r, src, c.id, 0);
        if (c.off != g->done || n > g->len - g->done)
            rmpi_fatal("ofi: rank %d sent %zu bytes at offset %llu of emulated read %llu on %s, which expects "
                       "offset %zu of %zu; the control frames are corrupt.",
                       src, n, (unsigned long long)c.off, (unsigned long long)c.id, r->pub.hints.name, g->done, g->len);
        memcpy(g->local + g->done, bytes, n);
        g->done += n;
        if (g->done == g->len)
            rmpi_ofi_rdma_done(r, get_take(r, src, c.id, 1), 0);
    } else if (c.kind == GET_ERR) {
        rmpi_ofi_rdma_done(r, get_take(r, src, c.id, 1), c.err < 0 ? c.err : -EFAULT);
    } else if (c.kind == PUT_DATA) {
        uint64_t at = c.raddr + c.off;
        if (at >= c.raddr && !rmpi_net_mrtab_check(&r->emr, c.rkey, at, n)) {
            memcpy((char *)(uintptr_t)at, bytes, n);
        } else if (p->refused_put != c.id) {
            /* One refusal per put: its later pieces are dropped without a word. */
            p->refused_put = c.id;
            rmpi_warn("ofi: rank %d tried to write %zu bytes at %#llx with rkey %#llx on %s, which no registration "
                      "of rank %d covers; the data is dropped and the write fails.",
                      src, n, (unsigned long long)at, (unsigned long long)c.rkey, r->pub.hints.name, r->env.rank);
            ctl_t e = {.kind = PUT_ERR, .err = -EFAULT, .id = c.id};
            ctl_send(r, src, &e);
        }
    } else if (c.kind == PUT_ERR) {
        put_refused(r, src, c.id, c.err < 0 ? c.err : -EFAULT);
    } else {
        rmpi_fatal("ofi: rank %d sent a control frame of unknown kind %u on %s (wire version mismatch?).", src, c.kind,
                   r->pub.hints.name);
    }
}

void rmpi_ofi_emul_close(rmpi_ofi_rail_t *r)
{
    for (rmpi_ofi_ctx_t *c = r->pend, *next; c; c = next) {
        next = c->next;
        if (c->kind == RMPI_OFI_EMUL)
            rmpi_ofi_rdma_release(r, (rmpi_ofi_rdma_t *)c);
    }
    r->pend = NULL;
    r->pend_tail = &r->pend;
    for (int i = -1; (i = rmpi_ofi_peer_next(r, i)) >= 0;)
        for (rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, i); p->gets;) {
            rmpi_ofi_rdma_t *g = p->gets;
            p->gets = (rmpi_ofi_rdma_t *)g->ctx.next;
            rmpi_ofi_rdma_release(r, g);
        }
    rmpi_net_mrtab_free(&r->emr);
}
