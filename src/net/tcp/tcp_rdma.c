/* Emulated RDMA: the registration table, get (GET_REQ / GET_RESP chunks / GET_ERR) and put
 * (PUT frames landing in the target buffer, answered PUT_ACK after the last or PUT_ERR). */
#include "tcp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int rmpi_tcp_mr_reg(rmpi_rail_t *rail, void *addr, size_t len, rmpi_mr_t *mr)
{
    rmpi_net_mrtab_reg(&rmpi_tcp_rail_of(rail)->mr, addr, len, mr);
    return 0;
}

int rmpi_tcp_mr_reg_ranges(rmpi_rail_t *rail, const rmpi_net_ranges_t *ranges, rmpi_mr_t *mr)
{
    rmpi_net_mrtab_reg_ranges(&rmpi_tcp_rail_of(rail)->mr, ranges, mr);
    return 0;
}

void rmpi_tcp_mr_dereg(rmpi_rail_t *rail, rmpi_mr_t *mr) { rmpi_net_mrtab_dereg(&rmpi_tcp_rail_of(rail)->mr, mr); }

/* Puts, gets and read answers of fewer bytes are queued rather than written at once, so a
 * burst of them (one-sided operations, the pieces of a non-contiguous rendezvous) leaves in
 * one writev at the next progress instead of one system call each: on loopback every write
 * also runs the receiver's TCP stack. Larger ones go at once (their data dwarfs the call). */
#define TCP_RDMA_BATCH 4096

/* A header-only frame in the ordered queue: written at once when nothing waits before it. */
static void emit_ctrl(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, const uint8_t *hdr, size_t hlen)
{
    size_t off = 0;
    if (rmpi_tcp_can_write_now(p)) {
        ssize_t w = rmpi_tcp_writev(p->conn->fd, hdr, hlen, NULL, 0);
        if (w < 0) {
            rmpi_tcp_peer_fail(r, p, "%s",
                               w == -EPIPE || w == -ECONNRESET ? "connection reset by peer" : strerror((int)-w));
            return;
        }
        rmpi_tcp_count_tx(r, p->conn, (size_t)w);
        if ((size_t)w == hlen) {
            r->stat_frames_tx++;
            return;
        }
        off = (size_t)w;
    }
    rmpi_tcp_tx_t *t = rmpi_tcp_tx_new(0);
    memcpy(t->hdr, hdr, hlen);
    t->hlen = hlen;
    t->off = off;
    rmpi_tcp_queue_tx(r, p, t);
}

static void op_start(rmpi_rail_t *rail, rmpi_net_op_t *op)
{
    op->status = 0;
    op->rail = rail;
    op->t_post = rmpi_time_ns();
    op->t_done = 0;
}

/* The peer an op goes to, or NULL when the op has already been dealt with: on a lost (or
 * closed) connection it completes with an error at the next progress, as a work request
 * posted to a verbs QP in the error state is flushed, so the caller's completion path sees
 * every op it posted. */
static rmpi_tcp_peer_t *op_peer(rmpi_tcp_rail_t *r, int peer, rmpi_net_op_t *op)
{
    op_start(&r->pub, op);
    rmpi_tcp_peer_t *p = rmpi_tcp_peer_get(r, peer);
    if (p->state == RMPI_TCP_PEER_LOST || p->state == RMPI_TCP_PEER_CLOSED) {
        rmpi_tcp_op_done(r, op, p->state == RMPI_TCP_PEER_LOST ? -ECONNRESET : -EPIPE);
        return NULL;
    }
    return p;
}

int rmpi_tcp_get(rmpi_rail_t *rail, int peer, void *local, size_t len, uint64_t raddr, uint64_t rkey, rmpi_net_op_t *op)
{
    rmpi_tcp_rail_t *r = rmpi_tcp_rail_of(rail);
    if (peer < 0 || peer >= r->prov->npeers || peer == r->env.rank)
        return -EINVAL;
    rmpi_tcp_peer_t *p = op_peer(r, peer, op);
    if (!p)
        return 0;
    rmpi_tcp_get_t *g = rmpi_xmalloc(sizeof(*g));
    g->id = ++r->next_id;
    g->local = local;
    g->len = len;
    g->got = 0;
    g->op = op;
    rmpi_list_push_back(&p->gets, &g->link);
    uint8_t h[RMPI_TCP_HDR_MAX];
    size_t hl = rmpi_tcp_hdr(h, RMPI_TCP_GET_REQ, 0);
    uint8_t *e = h + RMPI_TCP_BASE_HDR;
    rmpi_tcp_st64(e, g->id);
    rmpi_tcp_st64(e + 8, raddr);
    rmpi_tcp_st64(e + 16, rkey);
    rmpi_tcp_st64(e + 24, len);
    if (len < TCP_RDMA_BATCH) {
        rmpi_tcp_tx_t *t = rmpi_tcp_tx_new(0);
        memcpy(t->hdr, h, hl);
        t->hlen = hl;
        rmpi_tcp_queue_soon(r, p, t);
    } else {
        emit_ctrl(r, p, h, hl);
    }
    return 0;
}

/* c becomes one PUT frame of n bytes of data for (raddr, rkey) of put id. */
static void put_frame(rmpi_tcp_tx_t *c, uint64_t id, uint64_t raddr, uint64_t rkey, const void *data, size_t n)
{
    c->hlen = rmpi_tcp_hdr(c->hdr, RMPI_TCP_PUT, 0);
    uint8_t *e = c->hdr + RMPI_TCP_BASE_HDR;
    rmpi_tcp_st64(e, id);
    rmpi_tcp_st64(e + 8, raddr);
    rmpi_tcp_st64(e + 16, rkey);
    rmpi_tcp_st64(e + 24, n);
    c->data = data;
    c->dlen = n;
    c->put_id = id;
}

int rmpi_tcp_put(rmpi_rail_t *rail, int peer, const void *local, size_t len, uint64_t raddr, uint64_t rkey,
                 rmpi_net_op_t *op)
{
    rmpi_tcp_rail_t *r = rmpi_tcp_rail_of(rail);
    if (peer < 0 || peer >= r->prov->npeers || peer == r->env.rank)
        return -EINVAL;
    rmpi_tcp_peer_t *p = op_peer(r, peer, op);
    if (!p)
        return 0;
    rmpi_tcp_tx_t *t = rmpi_tcp_tx_new(0);
    /* With another rail to this peer, a put completes only once the target has it (see
     * rmpi_tcp_put_written); alone, it completes when written, which saves a frame per put. */
    const rmpi_tcp_link_t *l = rmpi_tcp_link(r->prov, peer);
    /* A key of a range list (MPI's dynamic windows): only the target knows whether the
     * range is attached, and a refusal can fail only a put still waiting for its answer. */
    t->put_ack = (l && l->npairs > 1) || (rkey & RMPI_NET_KEY_RANGES);
    op->landed = t->put_ack;
    t->op = op;
    if (len < TCP_RDMA_BATCH && len <= r->chunk) {
        /* one whole PUT frame in the queue at once, so the writer gathers a burst of them
         * like any frames instead of cutting one chunk per writev */
        put_frame(t, ++r->next_id, raddr, rkey, local, len);
        t->hdr[1] = t->put_ack ? RMPI_TCP_F_ACK : 0;
        rmpi_tcp_queue_soon(r, p, t);
        return 0;
    }
    t->is_put = 1;
    t->put_id = ++r->next_id;
    t->data = local;
    t->dlen = len;
    t->raddr = raddr;
    t->rkey = rkey;
    if (rmpi_tcp_can_write_now(p)) {
        /* Nothing queued before it: written at once, and EPOLLOUT asked (by the flush) only
         * for what the socket did not take, instead of an epoll_ctl to ask and another to
         * take it back around a write that took it all (two system calls per 1 MiB put). */
        rmpi_list_push_back(&p->txq, &t->link);
        rmpi_tcp_flush(r, p);
        return 0;
    }
    rmpi_tcp_queue_tx(r, p, t);
    if (p->state == RMPI_TCP_PEER_ESTABLISHED)
        rmpi_tcp_flush(r, p);
    return 0;
}

rmpi_tcp_tx_t *rmpi_tcp_put_next_chunk(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, rmpi_tcp_tx_t *t)
{
    if (t->put_failed) {
        rmpi_list_remove(&t->link);
        rmpi_tcp_op_done(r, t->op, t->op->status);
        rmpi_tcp_tx_free(t);
        return NULL;
    }
    size_t n = RMPI_MIN(r->chunk, t->dlen - t->psent);
    rmpi_tcp_tx_t *c = rmpi_tcp_tx_new(0);
    put_frame(c, t->put_id, t->raddr + t->psent, t->rkey, t->data + t->psent, n);
    t->psent += n;
    if (t->psent == t->dlen) {
        c->hdr[1] = t->put_ack ? RMPI_TCP_F_ACK : 0;
        c->put_ack = t->put_ack;
        c->op = t->op; /* the put completes with its last frame, or on PUT_ACK */
        rmpi_list_remove(&t->link);
        rmpi_tcp_tx_free(t);
    }
    return c;
}

/* The next frame of read rd's answer: a GET_RESP chunk from where it stands, or GET_ERR.
 * rd is freed (and left its list) once its last frame is cut. */
static rmpi_tcp_tx_t *rd_chunk(rmpi_tcp_rail_t *r, rmpi_tcp_rd_t *rd)
{
    rmpi_tcp_tx_t *t = rmpi_tcp_tx_new(0);
    uint8_t *e = t->hdr + RMPI_TCP_BASE_HDR;
    rmpi_tcp_st64(e, rd->id);
    size_t n = RMPI_MIN(r->chunk, rd->len - rd->sent);
    /* Checked again per chunk: a region deregistered mid-read ends the read with EFAULT
     * instead of sending freed memory. */
    if (!rd->err)
        rd->err = rmpi_net_mrtab_check(&r->mr, rd->rkey, (uint64_t)(uintptr_t)(rd->base + rd->sent), n);
    if (rd->err) {
        t->hlen = rmpi_tcp_hdr(t->hdr, RMPI_TCP_GET_ERR, 0);
        rmpi_tcp_st32(e + 8, (uint32_t)rd->err);
        rmpi_tcp_st32(e + 12, 0);
        rd->sent = rd->len;
    } else {
        t->hlen = rmpi_tcp_hdr(t->hdr, RMPI_TCP_GET_RESP, (uint32_t)n);
        rmpi_tcp_st64(e + 8, rd->sent);
        t->data = rd->base + rd->sent;
        t->dlen = n;
        rd->sent += n;
    }
    if (rd->sent == rd->len) {
        rmpi_list_remove(&rd->link);
        free(rd);
    }
    return t;
}

rmpi_tcp_tx_t *rmpi_tcp_rd_next_chunk(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p)
{
    return rmpi_list_empty(&p->rdq) ? NULL : rd_chunk(r, (rmpi_tcp_rd_t *)p->rdq.next);
}

void rmpi_tcp_on_get_req(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, const uint8_t *e)
{
    rmpi_tcp_rd_t *rd = rmpi_xmalloc(sizeof(*rd));
    rd->id = rmpi_tcp_ld64(e);
    uint64_t raddr = rmpi_tcp_ld64(e + 8);
    rd->rkey = rmpi_tcp_ld64(e + 16);
    uint64_t len = rmpi_tcp_ld64(e + 24);
    rd->base = (const char *)(uintptr_t)raddr;
    rd->len = (size_t)len;
    rd->sent = 0;
    rd->err = len > SIZE_MAX ? -EFAULT : rmpi_net_mrtab_check(&r->mr, rd->rkey, raddr, (size_t)len);
    if (rd->err)
        rmpi_log(1,
                 "tcp: rank %d asked to read %llu bytes at %#llx with rkey %#llx, which no "
                 "registration of rank %d covers; the read fails with EFAULT.",
                 p->rank, (unsigned long long)len, (unsigned long long)raddr, (unsigned long long)rd->rkey,
                 r->env.rank);
    if (len >= TCP_RDMA_BATCH || len > r->chunk) {
        rmpi_list_push_back(&p->rdq, &rd->link);
        rmpi_tcp_flush(r, p);
        return;
    }
    /* The whole answer as one frame among the acknowledgements, which the writer gathers,
     * even while larger answers are owed: the initiator matches answers by their id, so a
     * small read need not wait behind a large one's chunks. */
    rmpi_list_init(&rd->link);
    rmpi_list_push_back(&p->ackq, &rd_chunk(r, rd)->link);
    rmpi_tcp_write_soon(r, p);
}

/* The get or put of p's list (gets or puts) with this id, or NULL. Answers to different
 * reads may come in any order (docs/wire/tcp.md), but nearly always in request order, so
 * the search nearly always stops at the head. */
static rmpi_tcp_get_t *waiting(rmpi_list_t *list, uint64_t id)
{
    rmpi_list_t *pos;
    rmpi_list_for_each(pos, list)
    {
        rmpi_tcp_get_t *w = (rmpi_tcp_get_t *)pos;
        if (w->id == id)
            return w;
    }
    return NULL;
}

int rmpi_tcp_on_get_resp(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, const uint8_t *e, size_t len)
{
    rmpi_tcp_peer_t *p = c->peer;
    uint64_t id = rmpi_tcp_ld64(e), off = rmpi_tcp_ld64(e + 8);
    rmpi_tcp_get_t *g = waiting(&p->gets, id);
    if (!g || off != g->got || len > g->len - g->got) {
        rmpi_tcp_peer_fail(r, p,
                           "protocol error on the TCP connection from rank %d: read response %llu "
                           "(%zu bytes at offset %llu) %s",
                           p->rank, (unsigned long long)id, len, (unsigned long long)off,
                           !g ? "answers no outstanding read" : "does not continue its read");
        return -1;
    }
    c->rx_get = g;
    c->rx_dst = g->local + off;
    return 0;
}

void rmpi_tcp_get_data_done(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c)
{
    rmpi_tcp_get_t *g = c->rx_get;
    c->rx_get = NULL;
    g->got += c->rx_plen;
    if (g->got < g->len)
        return;
    rmpi_list_remove(&g->link);
    rmpi_net_op_t *op = g->op;
    free(g);
    rmpi_tcp_op_done(r, op, 0);
}

void rmpi_tcp_on_get_err(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, const uint8_t *e)
{
    uint64_t id = rmpi_tcp_ld64(e);
    int err = (int32_t)rmpi_tcp_ld32(e + 8);
    rmpi_tcp_get_t *g = waiting(&p->gets, id);
    if (!g) {
        rmpi_tcp_peer_fail(r, p,
                           "protocol error on the TCP connection from rank %d: read error for "
                           "unknown read %llu",
                           p->rank, (unsigned long long)id);
        return;
    }
    rmpi_list_remove(&g->link);
    rmpi_net_op_t *op = g->op;
    free(g);
    rmpi_tcp_op_done(r, op, err < 0 ? err : -EFAULT);
}

void rmpi_tcp_put_answer(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, unsigned type, uint64_t id, int err)
{
    rmpi_tcp_tx_t *t = rmpi_tcp_tx_new(0);
    t->hlen = rmpi_tcp_hdr(t->hdr, type, 0);
    uint8_t *e = t->hdr + RMPI_TCP_BASE_HDR;
    rmpi_tcp_st64(e, id);
    rmpi_tcp_st32(e + 8, (uint32_t)err);
    rmpi_tcp_st32(e + 12, 0);
    rmpi_list_push_back(&p->ackq, &t->link);
    /* A PUT_ACK leaves at the end of this progress pass (tcp_progress), with whatever the
     * frames read behind the put made us send: a put to a dynamic window is followed by the
     * FLUSH whose answer then shares the ack's write (put_lat 64 KiB over loopback, fast
     * state: 33.7-35.4 us with two writes and two wake-ups of the origin, 26.0-28.3 with
     * one). A refusal goes at once: the origin may still be cutting the put's frames. */
    if (type == RMPI_TCP_PUT_ACK)
        rmpi_tcp_write_soon(r, p);
    else
        rmpi_tcp_flush(r, p);
}

void rmpi_tcp_on_put_hdr(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, const uint8_t *e)
{
    rmpi_tcp_peer_t *p = c->peer;
    uint64_t id = rmpi_tcp_ld64(e), raddr = rmpi_tcp_ld64(e + 8), rkey = rmpi_tcp_ld64(e + 16);
    uint64_t len = rmpi_tcp_ld64(e + 24);
    c->rx_plen = (size_t)len;
    c->rx_discard = len > SIZE_MAX || rmpi_net_mrtab_check(&r->mr, rkey, raddr, (size_t)len) != 0;
    c->rx_dst = c->rx_discard ? NULL : (char *)(uintptr_t)raddr;
    /* One refusal per put: its remaining frames (it may be cut in several) are dropped. */
    if (c->rx_discard && c->rx_refused_put != id) {
        c->rx_refused_put = id;
        /* a range list's key (a dynamic window): the origin could not check the range, and
         * the error reaches the user as MPI_ERR_RMA_RANGE, as a message's would */
        if (rkey & RMPI_NET_KEY_RANGES)
            rmpi_log(1,
                     "tcp: rank %d tried to write %llu bytes at %#llx, outside the range list of rkey %#llx; "
                     "the write fails.",
                     p->rank, (unsigned long long)len, (unsigned long long)raddr, (unsigned long long)rkey);
        else
            rmpi_warn("tcp: rank %d tried to write %llu bytes at %#llx with rkey %#llx, which no "
                      "registration of rank %d covers; the data is dropped and the write fails.",
                      p->rank, (unsigned long long)len, (unsigned long long)raddr, (unsigned long long)rkey,
                      r->env.rank);
        rmpi_tcp_put_answer(r, p, RMPI_TCP_PUT_ERR, id, -EFAULT);
    }
}

void rmpi_tcp_put_written(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, rmpi_tcp_tx_t *t)
{
    if (t->op->status || !t->put_ack) { /* refused while being written, or no answer asked */
        rmpi_tcp_op_done(r, t->op, t->op->status);
        return;
    }
    /* Complete only once the target has the data, as a verbs write completes on the
     * responder's ACK: if this rail fails first, the caller still sees the put fail and
     * sends it again on another rail, instead of trusting bytes that died in a socket
     * buffer (the FIN that follows would be sent again elsewhere and arrive without them). */
    rmpi_tcp_get_t *w = rmpi_xmalloc(sizeof(*w));
    w->id = t->put_id;
    w->op = t->op;
    w->local = NULL;
    w->len = w->got = 0;
    rmpi_list_push_back(&p->puts, &w->link);
}

void rmpi_tcp_on_put_ack(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, const uint8_t *e)
{
    uint64_t id = rmpi_tcp_ld64(e);
    rmpi_tcp_get_t *w = waiting(&p->puts, id);
    if (!w) {
        rmpi_tcp_peer_fail(r, p,
                           "protocol error on the TCP connection from rank %d: write acknowledgement "
                           "for unknown write %llu",
                           p->rank, (unsigned long long)id);
        return;
    }
    rmpi_list_remove(&w->link);
    rmpi_net_op_t *op = w->op;
    free(w);
    rmpi_tcp_op_done(r, op, 0);
}

void rmpi_tcp_on_put_err(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, const uint8_t *e)
{
    uint64_t id = rmpi_tcp_ld64(e);
    int err = (int32_t)rmpi_tcp_ld32(e + 8);
    err = err < 0 ? err : -EFAULT;
    /* Still sending: stop cutting frames and complete with the error once the frame being
     * written is out. */
    rmpi_tcp_tx_t *cur = p->cur_chunk;
    if (cur && cur->put_id == id && cur->op) {
        cur->op->status = err;
        return;
    }
    rmpi_list_t *pos;
    rmpi_list_for_each(pos, &p->cutq)
    {
        rmpi_tcp_tx_t *t = (rmpi_tcp_tx_t *)pos;
        if (t->put_id == id && t->op) { /* its last frame is cut, not yet written */
            t->op->status = err;
            return;
        }
    }
    rmpi_list_for_each(pos, &p->txq)
    {
        rmpi_tcp_tx_t *t = (rmpi_tcp_tx_t *)pos;
        if (t->is_put && t->put_id == id) {
            t->op->status = err;
            t->put_failed = 1;
            return;
        }
    }
    rmpi_tcp_get_t *w = waiting(&p->puts, id);
    if (w) {
        rmpi_list_remove(&w->link);
        rmpi_net_op_t *op = w->op;
        free(w);
        rmpi_tcp_op_done(r, op, err);
        return;
    }
    /* The put already completed (written out, no PUT_ACK asked): nothing can carry the error
     * to the caller any more, so it ends the connection with a clear reason, as a verbs
     * connection goes to the error state on a remote access error. */
    rmpi_tcp_peer_fail(r, p,
                       "rank %d refused an emulated RDMA write (put %llu): the target range is "
                       "not inside a registration there",
                       p->rank, (unsigned long long)id);
}
