/* Output queues and the gathered writer; the buffered reader, frame parser and dispatch. */
#include "tcp.h"

#include "../net_mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static const int8_t ext_len_tab[RMPI_TCP_NTYPES] = {
    [RMPI_TCP_HELLO] = RMPI_TCP_HELLO_EXT,
    [RMPI_TCP_HELLO_ACK] = 8,
    [RMPI_TCP_DATA] = 0,
    [RMPI_TCP_GET_REQ] = 32,
    [RMPI_TCP_GET_RESP] = 16,
    [RMPI_TCP_GET_ERR] = 16,
    [RMPI_TCP_PUT] = 32,
    [RMPI_TCP_PUT_ERR] = 16,
    [RMPI_TCP_GOODBYE] = 0,
    [RMPI_TCP_PUT_ACK] = 16,
    [RMPI_TCP_CHALLENGE] = RMPI_AUTH_NONCE_BYTES + RMPI_AUTH_MAC_BYTES,
    [RMPI_TCP_AUTH] = RMPI_AUTH_MAC_BYTES,
};

int rmpi_tcp_ext_len(unsigned type) { return type == 0 || type >= RMPI_TCP_NTYPES ? -1 : ext_len_tab[type]; }

size_t rmpi_tcp_hdr(uint8_t *hdr, unsigned type, uint32_t len)
{
    hdr[0] = (uint8_t)type;
    hdr[1] = 0;
    rmpi_tcp_st16(hdr + 2, 0);
    rmpi_tcp_st32(hdr + 4, len);
    return RMPI_TCP_BASE_HDR + (size_t)rmpi_tcp_ext_len(type);
}

rmpi_tcp_tx_t *rmpi_tcp_tx_new(size_t copy_len)
{
    rmpi_tcp_tx_t *t = rmpi_xmalloc(sizeof(*t) + copy_len);
    rmpi_list_init(&t->link);
    t->hlen = t->dlen = t->off = 0;
    t->data = NULL;
    t->op = NULL;
    t->put_id = 0;
    t->is_put = t->put_failed = t->started = t->put_ack = 0;
    t->raddr = t->rkey = 0;
    t->psent = 0;
    t->held = copy_len;
    rmpi_net_held += copy_len;
    return t;
}

void rmpi_tcp_tx_free(rmpi_tcp_tx_t *t)
{
    if (t)
        rmpi_net_held -= t->held;
    free(t);
}

int rmpi_tcp_has_output(const rmpi_tcp_peer_t *p)
{
    return !rmpi_list_empty(&p->txq) || !rmpi_list_empty(&p->rdq) || !rmpi_list_empty(&p->ackq) || p->cur_chunk ||
           !rmpi_list_empty(&p->cutq);
}

int rmpi_tcp_has_work(const rmpi_tcp_peer_t *p)
{
    return rmpi_tcp_has_output(p) || !rmpi_list_empty(&p->gets) || !rmpi_list_empty(&p->puts);
}

int rmpi_tcp_can_write_now(const rmpi_tcp_peer_t *p)
{
    return p->state == RMPI_TCP_PEER_ESTABLISHED && p->conn && !p->conn->shut_wr && rmpi_list_empty(&p->txq) &&
           rmpi_list_empty(&p->ackq) && !p->cur_chunk && rmpi_list_empty(&p->cutq);
}

void rmpi_tcp_want_output(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p)
{
    rmpi_tcp_conn_t *c = p->conn;
    if (c && c->state == RMPI_TCP_CONN_ESTABLISHED)
        rmpi_tcp_set_events(r, c, EPOLLIN | (rmpi_tcp_has_output(p) ? EPOLLOUT : 0));
}

void rmpi_tcp_queue_tx(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, rmpi_tcp_tx_t *t)
{
    rmpi_list_push_back(&p->txq, &t->link);
    if (p->state == RMPI_TCP_PEER_ESTABLISHED)
        rmpi_tcp_want_output(r, p);
    else
        rmpi_tcp_peer_kick(r, p);
}

void rmpi_tcp_queue_frame(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, rmpi_tcp_tx_t *t)
{
    rmpi_list_t *at = &p->txq; /* the frame goes in before `at` */
    while (at->prev != &p->txq) {
        const rmpi_tcp_tx_t *q = (const rmpi_tcp_tx_t *)at->prev;
        if (!q->is_put || !q->put_ack)
            break;
        at = at->prev;
    }
    if (t->started || at == &p->txq || p->state != RMPI_TCP_PEER_ESTABLISHED) {
        if (p->soon)
            rmpi_tcp_queue_soon(r, p, t);
        else
            rmpi_tcp_queue_tx(r, p, t);
        return;
    }
    t->link.next = at;
    t->link.prev = at->prev;
    at->prev->next = &t->link;
    at->prev = &t->link;
    rmpi_tcp_want_output(r, p);
}

void rmpi_tcp_write_soon(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p)
{
    if (p->state != RMPI_TCP_PEER_ESTABLISHED) {
        rmpi_tcp_want_output(r, p);
        return;
    }
    if (p->soon)
        return;
    if (r->nsoon == r->capsoon) {
        r->capsoon = r->capsoon ? 2 * r->capsoon : 8;
        r->soon = rmpi_xrealloc(r->soon, (size_t)r->capsoon * sizeof *r->soon);
    }
    p->soon = 1;
    r->soon[r->nsoon++] = p;
}

void rmpi_tcp_queue_soon(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, rmpi_tcp_tx_t *t)
{
    if (p->state != RMPI_TCP_PEER_ESTABLISHED) {
        rmpi_tcp_queue_tx(r, p, t);
        return;
    }
    rmpi_list_push_back(&p->txq, &t->link);
    rmpi_tcp_write_soon(r, p);
}

void rmpi_tcp_drain_soon(rmpi_tcp_rail_t *r)
{
    for (int i = 0; i < r->nsoon; i++) { /* flush may not add to the list: it never queues */
        r->soon[i]->soon = 0;
        rmpi_tcp_flush(r, r->soon[i]);
    }
    r->nsoon = 0;
}

void rmpi_tcp_queue_ctrl(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, const uint8_t *hdr, size_t hlen, int front)
{
    rmpi_tcp_tx_t *t = rmpi_tcp_tx_new(0);
    memcpy(t->hdr, hdr, hlen);
    t->hlen = hlen;
    if (front) {
        rmpi_list_push_front(&p->txq, &t->link);
        rmpi_tcp_want_output(r, p);
    } else {
        rmpi_tcp_queue_tx(r, p, t);
    }
}

ssize_t rmpi_tcp_writev(int fd, const void *hdr, size_t hlen, const struct iovec *iov, int iovcnt)
{
    struct iovec v[RMPI_TCP_IOV_MAX + 1];
    int n = 0;
    if (hlen)
        v[n++] = (struct iovec){(void *)hdr, hlen};
    for (int i = 0; i < iovcnt && n < (int)RMPI_ARRAY_LEN(v); i++)
        if (iov[i].iov_len)
            v[n++] = iov[i];
    struct msghdr m = {.msg_iov = v, .msg_iovlen = (size_t)n};
    for (;;) {
        ssize_t w = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w >= 0)
            return w;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        return -errno;
    }
}

/* Append the unsent part of item t to the iov list; returns the bytes added. */
static size_t add_iov(struct iovec *iov, int *n, const rmpi_tcp_tx_t *t)
{
    size_t added = 0;
    if (t->off < t->hlen) {
        iov[(*n)++] = (struct iovec){(void *)(t->hdr + t->off), t->hlen - t->off};
        added += t->hlen - t->off;
    }
    if (t->dlen) {
        size_t doff = t->off > t->hlen ? t->off - t->hlen : 0;
        iov[(*n)++] = (struct iovec){(void *)(t->data + doff), t->dlen - doff};
        added += t->dlen - doff;
    }
    return added;
}

/* A put's or read's last piece of at most RMPI_TCP_TAIL bytes joins the write that carries
 * the piece before it, even past RMPI_TCP_GATHER: a message of 1 MiB and a header (a
 * rendezvous of 1 MiB + 48 bytes) otherwise left its last 48 bytes for the next progress,
 * an epoll_wait and a sendmsg of their own before the FIN could follow. */
static int short_tail(const rmpi_tcp_peer_t *p, int from_put)
{
    if (from_put) {
        const rmpi_tcp_tx_t *head = rmpi_list_empty(&p->txq) ? NULL : (const rmpi_tcp_tx_t *)p->txq.next;
        return head && head->is_put && head->dlen - head->psent <= RMPI_TCP_TAIL;
    }
    const rmpi_tcp_rd_t *rd = rmpi_list_empty(&p->rdq) ? NULL : (const rmpi_tcp_rd_t *)p->rdq.next;
    return rd && rd->len - rd->sent <= RMPI_TCP_TAIL;
}

/* The chunk being written, the frames cut after it (cutq), then further frames cut from the
 * same kind of source while the write stays under RMPI_TCP_GATHER: more of the put at the
 * head of txq while no read is owed (reads get their turn between chunks), more get data
 * while txq is empty. Returns the number of items in items[]. */
static int more_chunks(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, rmpi_tcp_tx_t **items, int nit, int max,
                       struct iovec *iov, int *niov, size_t *bytes)
{
    items[nit++] = p->cur_chunk;
    *bytes += add_iov(iov, niov, p->cur_chunk);
    rmpi_list_t *pos;
    rmpi_list_for_each(pos, &p->cutq)
    {
        if (nit == max || *niov + 2 > RMPI_TCP_IOV_MAX || *bytes >= RMPI_TCP_GATHER)
            return nit;
        items[nit] = (rmpi_tcp_tx_t *)pos;
        *bytes += add_iov(iov, niov, items[nit++]);
    }
    int from_put = p->cur_chunk->put_id != 0;
    while (nit < max && *niov + 2 <= RMPI_TCP_IOV_MAX && (*bytes < RMPI_TCP_GATHER || short_tail(p, from_put))) {
        rmpi_tcp_tx_t *c;
        if (from_put) {
            rmpi_tcp_tx_t *head = rmpi_list_empty(&p->txq) ? NULL : (rmpi_tcp_tx_t *)p->txq.next;
            if (!head || !head->is_put || !rmpi_list_empty(&p->rdq))
                break;
            c = rmpi_tcp_put_next_chunk(r, p, head);
            if (!c)
                continue; /* a refused put was dropped: look again */
        } else {
            if (!rmpi_list_empty(&p->txq) || rmpi_list_empty(&p->rdq))
                break;
            c = rmpi_tcp_rd_next_chunk(r, p);
        }
        items[nit] = c;
        *bytes += add_iov(iov, niov, items[nit++]);
    }
    return nit;
}

/* Choose what the next write carries: put answers first (header-only, so the initiator's
 * puts complete without waiting behind bulk data), then the frame in progress, get data or
 * the ordered queue, alternating so get data is not held back by this rank's own traffic
 * for longer than one chunk. Nothing goes before a frame already partly on the wire.
 * Returns the number of items in items[]. */
static int next_items(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, rmpi_tcp_tx_t **items, int max, struct iovec *iov,
                      int *niov, size_t *bytes)
{
    int nit = 0;
    rmpi_tcp_tx_t *head = rmpi_list_empty(&p->txq) ? NULL : (rmpi_tcp_tx_t *)p->txq.next;
    int mid_frame = (p->cur_chunk && p->cur_chunk->off) || (head && (head->off || head->started));
    if (!mid_frame) {
        rmpi_list_t *pos;
        rmpi_list_for_each(pos, &p->ackq)
        {
            if (nit == max / 2)
                break;
            items[nit] = (rmpi_tcp_tx_t *)pos;
            *bytes += add_iov(iov, niov, items[nit]);
            nit++;
        }
    }
    if (!p->cur_chunk && !rmpi_list_empty(&p->cutq)) {
        p->cur_chunk = (rmpi_tcp_tx_t *)p->cutq.next;
        rmpi_list_remove(&p->cur_chunk->link);
    }
    for (;;) {
        head = rmpi_list_empty(&p->txq) ? NULL : (rmpi_tcp_tx_t *)p->txq.next;
        if (!p->cur_chunk && !rmpi_list_empty(&p->rdq) && (!head || (p->rd_turn && head->off == 0 && !head->started))) {
            p->cur_chunk = rmpi_tcp_rd_next_chunk(r, p);
            p->rd_turn = 0;
        } else if (!p->cur_chunk && head && head->is_put) {
            p->cur_chunk = rmpi_tcp_put_next_chunk(r, p, head);
            p->rd_turn = 1;
            if (!p->cur_chunk)
                continue; /* a refused put was dropped: look again */
        }
        break;
    }
    if (p->cur_chunk)
        return more_chunks(r, p, items, nit, max, iov, niov, bytes);
    rmpi_list_t *pos;
    int first = nit;
    rmpi_list_for_each(pos, &p->txq)
    {
        rmpi_tcp_tx_t *t = (rmpi_tcp_tx_t *)pos;
        if (t->is_put || nit == max || (nit > first && *bytes >= r->chunk))
            break;
        items[nit++] = t;
        *bytes += add_iov(iov, niov, t);
    }
    p->rd_turn = 1;
    return nit;
}

/* items[i] is the first item the write did not finish; items[k] was the chunk being written
 * (k < 0: none). If that chunk went out whole, items[i] (the next cut one) is now the chunk
 * being written; chunks cut by this write's more_chunks that did not begin join the tail of
 * cutq, behind those cut before (still there: rmpi_tcp_flush takes finished ones off). */
static void keep_cut(rmpi_tcp_peer_t *p, rmpi_tcp_tx_t **items, int k, int i, int nit)
{
    if (k < 0)
        return;
    if (i > k) {
        rmpi_list_remove(&items[i]->link); /* off cutq, or linked to itself: cut by this write */
        p->cur_chunk = items[i];
    }
    for (int j = RMPI_MAX(i, k) + 1; j < nit; j++)
        if (items[j]->link.next == &items[j]->link)
            rmpi_list_push_back(&p->cutq, &items[j]->link);
}

void rmpi_tcp_flush(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p)
{
    /* At most about one chunk per call: progress reads between writes, so replies from the
     * peer (a PUT_ERR, get data) are not left unread while a large put streams out. */
    size_t budget = r->chunk;
    for (;;) {
        rmpi_tcp_conn_t *c = p->conn;
        if (p->state != RMPI_TCP_PEER_ESTABLISHED || !c || c->shut_wr)
            return;
        struct iovec iov[RMPI_TCP_IOV_MAX];
        rmpi_tcp_tx_t *items[RMPI_TCP_IOV_MAX / 2];
        int niov = 0;
        size_t bytes = 0;
        int nit = next_items(r, p, items, (int)RMPI_ARRAY_LEN(items), iov, &niov, &bytes);
        if (!nit)
            break;
        int k = nit - 1;
        while (k >= 0 && items[k] != p->cur_chunk)
            k--;
        ssize_t w = rmpi_tcp_writev(c->fd, NULL, 0, iov, niov);
        if (w < 0) {
            rmpi_tcp_peer_fail(r, p, "%s",
                               w == -EPIPE || w == -ECONNRESET ? "connection reset by peer" : strerror((int)-w));
            return;
        }
        rmpi_tcp_count_tx(r, c, (size_t)w);
        size_t left = (size_t)w;
        int i = 0;
        for (; i < nit; i++) {
            rmpi_tcp_tx_t *t = items[i];
            size_t rest = t->hlen + t->dlen - t->off;
            if (left < rest) {
                t->off += left;
                break;
            }
            left -= rest;
            if (t == p->cur_chunk)
                p->cur_chunk = NULL;
            else
                rmpi_list_remove(&t->link); /* cut in this write (linked to itself), or of a queue */
            r->stat_frames_tx++;
            if (t->op)
                rmpi_tcp_put_written(r, p, t);
            rmpi_tcp_tx_free(t);
        }
        if (i < nit)
            keep_cut(p, items, k, i, nit);
        if ((size_t)w < bytes || (size_t)w >= budget)
            break;
        budget -= (size_t)w;
    }
    rmpi_tcp_want_output(r, p);
}

void rmpi_tcp_op_done(rmpi_tcp_rail_t *r, rmpi_net_op_t *op, int status)
{
    op->status = status;
    op->t_done = rmpi_time_ns();
    if (r->ndone == r->capdone) {
        r->capdone = r->capdone ? 2 * r->capdone : 64;
        r->done = rmpi_xrealloc(r->done, (size_t)r->capdone * sizeof(*r->done));
    }
    r->done[r->ndone++] = op;
}

void rmpi_tcp_run_completions(rmpi_tcp_rail_t *r)
{
    /* A callback may post operations that complete at once: they join this same pass. */
    for (int i = 0; i < r->ndone; i++)
        r->done[i]->complete(r->done[i]);
    r->ndone = 0;
}

void rmpi_tcp_fail_ops(rmpi_tcp_rail_t *r, rmpi_tcp_peer_t *p, int status)
{
    while (!rmpi_list_empty(&p->txq)) {
        rmpi_tcp_tx_t *t = (rmpi_tcp_tx_t *)p->txq.next;
        rmpi_list_remove(&t->link);
        rmpi_net_op_t *op = t->op;
        rmpi_tcp_tx_free(t);
        if (op)
            rmpi_tcp_op_done(r, op, status);
    }
    if (p->cur_chunk && p->cur_chunk->op)
        rmpi_tcp_op_done(r, p->cur_chunk->op, status);
    rmpi_tcp_tx_free(p->cur_chunk);
    p->cur_chunk = NULL;
    while (!rmpi_list_empty(&p->cutq)) {
        rmpi_tcp_tx_t *t = (rmpi_tcp_tx_t *)p->cutq.next;
        rmpi_list_remove(&t->link);
        if (t->op)
            rmpi_tcp_op_done(r, t->op, status);
        rmpi_tcp_tx_free(t);
    }
    rmpi_list_t *lists[] = {&p->rdq, &p->ackq};
    for (size_t i = 0; i < RMPI_ARRAY_LEN(lists); i++)
        while (!rmpi_list_empty(lists[i])) {
            rmpi_list_t *e = lists[i]->next;
            rmpi_list_remove(e);
            free(e);
        }
    rmpi_list_t *waits[] = {&p->gets, &p->puts};
    for (size_t i = 0; i < RMPI_ARRAY_LEN(waits); i++)
        while (!rmpi_list_empty(waits[i])) {
            rmpi_tcp_get_t *g = (rmpi_tcp_get_t *)waits[i]->next;
            rmpi_list_remove(&g->link);
            rmpi_net_op_t *op = g->op;
            free(g);
            rmpi_tcp_op_done(r, op, status);
        }
}

/* Still ours to read: open, and not handed to a sibling rail by its HELLO. */
static int conn_alive(const rmpi_tcp_rail_t *r, const rmpi_tcp_conn_t *c)
{
    return c->state != RMPI_TCP_CONN_DEAD && c->rail == r;
}

static void protocol_error(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, const char *what)
{
    if (c->peer && c->state == RMPI_TCP_CONN_ESTABLISHED)
        rmpi_tcp_peer_fail(r, c->peer, "protocol error on the TCP connection from rank %d: %s", c->peer->rank, what);
    else {
        /* During the handshake: drop it (a connector may retry). An accepted socket that
         * sends anything but the handshake is a refused stranger. */
        if (c->state == RMPI_TCP_CONN_ACCEPTED || c->state == RMPI_TCP_CONN_CHALLENGED)
            rmpi_net_sec_stats.refused++;
        rmpi_tcp_conn_broken(r, c, EPROTO);
    }
}

static int types_allowed(const rmpi_tcp_conn_t *c, unsigned type)
{
    switch (c->state) {
    case RMPI_TCP_CONN_ACCEPTED: return type == RMPI_TCP_HELLO;
    case RMPI_TCP_CONN_CHALLENGED: return type == RMPI_TCP_AUTH;
    /* A refusal (HELLO_ACK other than accept) may come before any challenge. */
    case RMPI_TCP_CONN_HELLO_SENT: return type == RMPI_TCP_CHALLENGE || type == RMPI_TCP_HELLO_ACK;
    case RMPI_TCP_CONN_AUTH_SENT: return type == RMPI_TCP_HELLO_ACK;
    case RMPI_TCP_CONN_ESTABLISHED:
        return type != RMPI_TCP_HELLO && type != RMPI_TCP_HELLO_ACK && type != RMPI_TCP_CHALLENGE &&
               type != RMPI_TCP_AUTH;
    default: return 0;
    }
}

static void payload_start(rmpi_tcp_conn_t *c, unsigned type, char *dst, size_t len)
{
    c->rx_phase = RMPI_TCP_RX_PAYLOAD;
    c->rx_type = type;
    c->rx_dst = dst;
    c->rx_plen = len;
    c->rx_pgot = 0;
}

static void payload_done(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c)
{
    if (c->rx_type == RMPI_TCP_GET_RESP)
        rmpi_tcp_get_data_done(r, c);
    else if (c->rx_type == RMPI_TCP_PUT && c->rx_put_ack && c->rx_refused_put != c->rx_put_id)
        rmpi_tcp_put_answer(r, c->peer, RMPI_TCP_PUT_ACK, c->rx_put_id, 0); /* all of it landed */
    else if (c->rx_type == RMPI_TCP_DATA) {
        r->stat_frames_rx++;
        c->rx_last = RMPI_TCP_BASE_HDR + c->rx_head_len + c->rx_plen;
        if (!r->closing)
            r->env.on_frame_placed(&r->pub, c->peer->rank, c->rx_head, c->rx_head_len, c->rx_head_len + c->rx_plen);
    }
    c->rx_put_ack = 0;
    c->rx_phase = RMPI_TCP_RX_FRAME;
    c->rx_dst = NULL;
    c->rx_plen = c->rx_pgot = 0;
    c->rx_discard = 0;
}

/* Header (base + extension, at h) parsed: act on control frames, or aim the payload. */
static void header_done(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, unsigned type, const uint8_t *h)
{
    uint32_t len = rmpi_tcp_ld32(h + 4);
    const uint8_t *ext = h + RMPI_TCP_BASE_HDR;
    rmpi_tcp_peer_t *p = c->peer;
    switch (type) {
    case RMPI_TCP_HELLO: rmpi_tcp_on_hello(r, c, ext); break;
    case RMPI_TCP_HELLO_ACK: rmpi_tcp_on_hello_ack(r, c, ext); break;
    case RMPI_TCP_CHALLENGE: rmpi_tcp_on_challenge(r, c, ext); break;
    case RMPI_TCP_AUTH: rmpi_tcp_on_auth(r, c, ext); break;
    case RMPI_TCP_GET_REQ: rmpi_tcp_on_get_req(r, p, ext); break;
    case RMPI_TCP_GET_RESP:
        if (rmpi_tcp_on_get_resp(r, c, ext, len) == 0)
            payload_start(c, type, c->rx_dst, len);
        break;
    case RMPI_TCP_GET_ERR: rmpi_tcp_on_get_err(r, p, ext); break;
    case RMPI_TCP_PUT:
        c->rx_put_id = rmpi_tcp_ld64(ext);
        c->rx_put_ack = (h[1] & RMPI_TCP_F_ACK) != 0;
        rmpi_tcp_on_put_hdr(r, c, ext);
        payload_start(c, type, c->rx_dst, c->rx_plen);
        break;
    case RMPI_TCP_PUT_ERR: rmpi_tcp_on_put_err(r, p, ext); break;
    case RMPI_TCP_PUT_ACK: rmpi_tcp_on_put_ack(r, p, ext); break;
    case RMPI_TCP_GOODBYE: rmpi_tcp_peer_closed(r, p); break;
    default: break; /* DATA is delivered by rx_parse */
    }
}

/* Bytes the frame starting at rx_pos needs in the buffer (DATA: all of it; others: the
 * header, their payload goes to its destination); 0 while its base header is incomplete. */
static size_t frame_need(const rmpi_tcp_conn_t *c)
{
    if (c->rx_end - c->rx_pos < RMPI_TCP_BASE_HDR)
        return 0;
    const uint8_t *h = (const uint8_t *)c->rxbuf + c->rx_pos;
    if (h[0] == RMPI_TCP_DATA)
        return RMPI_TCP_BASE_HDR + rmpi_tcp_ld32(h + 4);
    return RMPI_TCP_BASE_HDR + (size_t)rmpi_tcp_ext_len(h[0]);
}

/* A DATA frame of len bytes, got of them at f: when at least RMPI_TCP_PLACE more are to
 * come and the layer above has a receive for it (env.frame_dst), the rest of its payload
 * is read straight into that receive's buffer, as a PUT's is into its target: the buffered
 * part is copied there by rx_parse, the remainder by rmpi_tcp_read's direct readv. A frame
 * refused is not offered again (rx_noplace). Returns 1 when the frame became a payload. */
static int place(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c, const uint8_t *f, size_t got, size_t len)
{
    if (c->rx_noplace || !r->place_min || len - got < r->place_min || r->closing || !r->env.frame_dst ||
        !r->env.on_frame_placed)
        return 0;
    size_t off = 0;
    char *dst = r->env.frame_dst(&r->pub, c->peer->rank, f, got, len, &off);
    if (!dst) {
        c->rx_noplace = 1;
        return 0;
    }
    if (off > got || off > sizeof c->rx_head)
        rmpi_fatal("tcp: the layer above placed a frame after %zu bytes of headers (at most %zu)", off,
                   RMPI_MIN(got, sizeof c->rx_head));
    memcpy(c->rx_head, f, off);
    c->rx_head_len = off;
    c->rx_pos = (size_t)(f - (const uint8_t *)c->rxbuf) + off;
    payload_start(c, RMPI_TCP_DATA, dst, len - off);
    return 1;
}

/* Deliver what the buffer holds: whole DATA frames in place, control frames, and the
 * buffered start of a PUT / GET_RESP payload (copied to its destination: never more than
 * one read-ahead). Stops at an incomplete frame, leaving it at rx_pos. */
static void rx_parse(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c)
{
    while (conn_alive(r, c)) {
        size_t avail = c->rx_end - c->rx_pos;
        if (c->rx_phase == RMPI_TCP_RX_PAYLOAD) {
            size_t take = RMPI_MIN(avail, c->rx_plen - c->rx_pgot);
            if (take && !c->rx_discard)
                memcpy(c->rx_dst + c->rx_pgot, c->rxbuf + c->rx_pos, take);
            c->rx_pos += take;
            c->rx_pgot += take;
            if (c->rx_pgot < c->rx_plen)
                return;
            payload_done(r, c);
            continue;
        }
        if (avail < RMPI_TCP_BASE_HDR)
            return;
        const uint8_t *h = (const uint8_t *)c->rxbuf + c->rx_pos;
        unsigned type = h[0];
        int ext = rmpi_tcp_ext_len(type);
        if (ext < 0 || !types_allowed(c, type)) {
            protocol_error(r, c, "unexpected frame type");
            return;
        }
        size_t hl = RMPI_TCP_BASE_HDR + (size_t)ext;
        if (type == RMPI_TCP_DATA) {
            uint32_t len = rmpi_tcp_ld32(h + 4);
            if (len > RMPI_TCP_MAX_FRAME) {
                protocol_error(r, c, "frame larger than the largest frame (max_frame)");
                return;
            }
            if (avail < hl + len) {
                if (place(r, c, h + hl, avail - hl, len))
                    continue;
                return;
            }
            c->rx_pos += hl + len;
            c->rx_noplace = 0;
            c->rx_last = hl + len;
            r->stat_frames_rx++;
            /* During close() nobody above is listening any more. */
            if (!r->closing && r->env.on_frame)
                r->env.on_frame(&r->pub, c->peer->rank, h + hl, len);
            continue;
        }
        if (avail < hl)
            return;
        c->rx_pos += hl;
        header_done(r, c, type, h);
    }
}

/* Make the frame at rx_pos (need bytes) fit. Its partial bytes move to the buffer start
 * only when it would run past the end (they came with one read-ahead, so they are few) or
 * when they are just a header. The buffer grows by doubling (rmpi_tcp_rx_cap): a quiet
 * peer's is freed, a peer that sends small frames now and then keeps RX_MIN, one that
 * streams doubles it with every read that filled it up to RXBUF (where it always was
 * before buffers shrank), so reads take a whole read-ahead again. */
static void rx_room(rmpi_tcp_conn_t *c, size_t need)
{
    size_t have = c->rx_end - c->rx_pos;
    if (c->rx_pos && (c->rx_pos + need > c->rxcap || have < RMPI_TCP_HDR_MAX)) {
        memmove(c->rxbuf, c->rxbuf + c->rx_pos, have);
        c->rx_pos = 0;
        c->rx_end = have;
    }
    size_t want = c->rx_pos + need;
    if (RMPI_UNLIKELY(c->rx_grow)) {
        c->rx_grow = 0;
        want = RMPI_MAX(want, RMPI_MIN(2 * c->rxcap, (size_t)RMPI_TCP_RXBUF));
    }
    if (want > c->rxcap || !c->rxbuf) {
        size_t cap = rmpi_tcp_rx_cap(c->rxcap, want);
        c->rxbuf = rmpi_xrealloc(c->rxbuf, cap);
        rmpi_tcp_mem_add(c->rail->prov, cap, c->rxcap);
        c->rxcap = cap;
    }
}

void rmpi_tcp_rx_free(rmpi_tcp_conn_t *c)
{
    rmpi_tcp_mem_add(c->rail->prov, 0, c->rxcap);
    free(c->rxbuf);
    c->rxbuf = NULL;
    c->rxcap = c->rx_pos = c->rx_end = 0;
    c->rx_grow = 0;
}

void rmpi_tcp_buf_sweep(rmpi_tcp_rail_t *r, uint64_t now)
{
    r->last_sweep = now;
    rmpi_list_t *pos;
    rmpi_list_for_each(pos, &r->estab)
    {
        rmpi_tcp_conn_t *c = RMPI_CONTAINER_OF(pos, rmpi_tcp_conn_t, link);
        if (c->rxb != c->rx_mark) {
            c->rx_mark = c->rxb;
            c->rx_mark_ns = now;
        } else if (c->rxbuf && c->rx_pos == c->rx_end && now - c->rx_mark_ns >= r->buf_idle_ns) {
            rmpi_tcp_rx_free(c); /* a PUT / GET_RESP payload still coming is read into its target */
        }
    }
}

/* How far a read goes past the bytes still missing: after a long payload just the next
 * header (a bulk stream then moves or copies almost nothing), after a short one a whole
 * read-ahead and a header (small frames come with it, and an 8 KiB message's frame, 8204-8220
 * bytes with the VC's and the core's headers, takes one read: with RX_AHEAD alone every one
 * cost a second readv for its last 12 bytes, strace). */
static size_t read_ahead(size_t missing)
{
    return missing >= RMPI_TCP_RX_AHEAD ? RMPI_TCP_HDR_MAX : RMPI_TCP_RX_AHEAD + RMPI_TCP_HDR_MAX;
}

/* A read at a frame boundary (nothing buffered) asks for the read-ahead, or for as much as
 * the last DATA frame and a header when that was longer, up to a LAN frame: in a ping-pong
 * or a stream of one size each frame then takes one readv and one copy out of the buffer,
 * as MPICH's and Open MPI's tcp paths do (one recvfrom / readv of the whole message, strace).
 * Placing its payload after a read-ahead's worth (RMPI_TCP_PLACE) costs a second readv: at
 * 64 KiB on loopback 35.0 us (first quartile of 10 jobs) against 29.5 in one read and a
 * copy, 8-32 KiB level (docs/results/pt2pt.md). A frame longer than the last one is still
 * placed; a PUT or read answer after a long DATA frame has at most this much of its payload
 * copied from the buffer. */
static size_t boundary_ahead(const rmpi_tcp_conn_t *c)
{
    size_t last = RMPI_MIN(c->rx_last, (size_t)RMPI_TCP_BASE_HDR + RMPI_TCP_LAN_FRAME);
    return RMPI_MAX(last, (size_t)RMPI_TCP_RX_AHEAD) + RMPI_TCP_HDR_MAX;
}

int rmpi_tcp_read(rmpi_tcp_rail_t *r, rmpi_tcp_conn_t *c)
{
    uint64_t before = r->stat_frames_rx;
    /* Small frames: one read takes what is there (up to a read-ahead) and rx_parse
     * delivers every whole frame in it. PUT / GET_RESP payloads are read straight into
     * their destination, with the frames behind them read ahead into the buffer. */
    for (int iter = 0; iter < 256 && conn_alive(r, c); iter++) {
        struct iovec iov[2];
        int n = 1, direct = 0;
        size_t want = 0;
        if (c->rx_pos == c->rx_end)
            c->rx_pos = c->rx_end = 0;
        if (c->rx_phase == RMPI_TCP_RX_PAYLOAD && !c->rx_discard) {
            rx_room(c, 0); /* the buffer is empty: rx_parse took what it held */
            size_t missing = c->rx_plen - c->rx_pgot;
            iov[0] = (struct iovec){c->rx_dst + c->rx_pgot, missing};
            iov[1] = (struct iovec){c->rxbuf, RMPI_MIN(read_ahead(missing), c->rxcap)};
            n = 2;
            direct = 1;
        } else if (c->rx_phase == RMPI_TCP_RX_PAYLOAD) {
            rx_room(c, 0); /* a refused payload: read it a buffer at a time, drop it */
            size_t missing = c->rx_plen - c->rx_pgot;
            iov[0] = (struct iovec){c->rxbuf, RMPI_MIN(missing + read_ahead(missing), c->rxcap)};
        } else {
            size_t need = frame_need(c);
            rx_room(c, need ? need : RMPI_TCP_HDR_MAX);
            size_t missing = need ? c->rx_pos + need - c->rx_end : 0;
            want = missing + (missing ? read_ahead(missing) : boundary_ahead(c));
            iov[0] = (struct iovec){c->rxbuf + c->rx_end, RMPI_MIN(want, c->rxcap - c->rx_end)};
        }
        size_t asked = iov[0].iov_len + (n > 1 ? iov[1].iov_len : 0);
        int cut = !direct && asked < want; /* the read-ahead did not fit in the buffer */
        ssize_t got = readv(c->fd, iov, n);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            rmpi_tcp_conn_broken(r, c, errno);
            break;
        }
        if (got == 0) {
            rmpi_tcp_conn_broken(r, c, 0);
            break;
        }
        rmpi_tcp_count_rx(r, c, (size_t)got);
        if (direct) {
            size_t first = RMPI_MIN((size_t)got, iov[0].iov_len);
            c->rx_pgot += first;
            c->rx_end = (size_t)got - first;
        } else {
            c->rx_end += (size_t)got;
        }
        if (cut && (size_t)got == asked && c->rxcap < RMPI_TCP_RXBUF)
            c->rx_grow = 1; /* the peer streams faster than we read: double the buffer */
        rx_parse(r, c);
        if (RMPI_UNLIKELY(c->rx_hs) && c->state == RMPI_TCP_CONN_ESTABLISHED && c->rx_pos == c->rx_end) {
            c->rx_hs = 0; /* a peer we only send to keeps no buffer for its handshake frames */
            rmpi_tcp_rx_free(c);
        }
        if ((size_t)got < asked)
            break; /* the socket is drained: skip the read that would say EAGAIN */
    }
    return (int)(r->stat_frames_rx - before);
}
