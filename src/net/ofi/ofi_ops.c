/* ofi: libfabric provider. open (one rail per domain of RMPI_OFI_PROVIDER, publish
 * `ofi-<rank>-<rail>`), reaches (match the peer's card, insert it in the AV), send (inject,
 * or a copy in a pool buffer; queued on -FI_EAGAIN), progress (fi_cq_read), close, describe,
 * and the ops table. RDMA and registration live in ofi_rdma.c. */
#include "ofi.h"

#include "../net_mem.h"

#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TX_SLAB_BUFS 16

static char chosen[64]; /* the provider this process opened (ofi_caps.c chose it) */

const char *rmpi_ofi_prov(const rmpi_ofi_rail_t *r) { return chosen; }

/* ---- buffer pools ---- */

static rmpi_ofi_buf_t *slab_new(rmpi_ofi_rail_t *r, int n, int kind, uint64_t access, size_t size)
{
    void *mem = NULL;
    if (posix_memalign(&mem, 4096, (size_t)n * size))
        rmpi_fatal("ofi: out of memory for %d %s buffers.", n, kind == RMPI_OFI_RX ? "receive" : "send");
    rmpi_ofi_buf_t *b = rmpi_xcalloc((size_t)n, sizeof *b);
    struct slab *s = rmpi_xcalloc(1, sizeof *s);
    s->mem = mem;
    s->bufs = b;
    if (r->mr_mode & FI_MR_LOCAL) {
        int rc = rmpi_ofi_reg(r, mem, (size_t)n * size, access, &s->reg);
        if (rc)
            rmpi_fatal("RMPI_OFI_PROVIDER=%s: registering %d frame buffers on %s failed (fi_mr_reg: %s).",
                       rmpi_ofi_prov(r), n, r->pub.hints.name, fi_strerror(-rc));
    }
    for (int i = 0; i < n; i++) {
        b[i].ctx.kind = kind;
        b[i].data = (char *)mem + (size_t)i * size;
        b[i].size = size;
        b[i].desc = s->reg ? s->reg->desc : NULL;
    }
    s->next = r->slabs;
    r->slabs = s;
    return b;
}

rmpi_ofi_buf_t *rmpi_ofi_tx_get(rmpi_ofi_rail_t *r)
{
    if (!r->tx_free) {
        /* Sends never fail for lack of room (the contract), so frames the provider has not
         * taken pile up here; past RMPI_OFI_TX_MAX the job ends with a clear message. */
        size_t next = (r->tx_slabs + 1) * TX_SLAB_BUFS * (size_t)RMPI_OFI_BUF_SIZE;
        if (rmpi_knobs.OFI_TX_MAX > 0 && next > (size_t)rmpi_knobs.OFI_TX_MAX)
            rmpi_fatal("ofi: rank %d holds %zu MiB of frames on %s that the provider has not taken (posts refused "
                       "%llu times, %ld in flight): a peer may have stopped calling MPI. RMPI_OFI_TX_MAX=%lld "
                       "bounds this memory.",
                       r->env.rank, (next >> 20) - (TX_SLAB_BUFS * RMPI_OFI_BUF_SIZE >> 20), r->pub.hints.name,
                       (unsigned long long)r->stat_eagain, r->tx_out, rmpi_knobs.OFI_TX_MAX);
        r->tx_slabs++;
        rmpi_ofi_buf_t *b = slab_new(r, TX_SLAB_BUFS, RMPI_OFI_TX, FI_SEND, RMPI_OFI_BUF_SIZE);
        for (int i = 0; i < TX_SLAB_BUFS; i++) {
            b[i].ctx.next = (rmpi_ofi_ctx_t *)r->tx_free;
            r->tx_free = &b[i];
        }
    }
    rmpi_ofi_buf_t *b = r->tx_free;
    r->tx_free = (rmpi_ofi_buf_t *)b->ctx.next;
    return b;
}

/* A frame the provider refused waits in pend as a copy the core does not see: its bytes
 * count in rmpi_net_held until it is posted or dropped, so blocking senders stop queueing
 * more while a receiver is not taking them (src/core/README.md, backpressure). */
static void buf_hold(rmpi_ofi_buf_t *b)
{
    b->held = b->len;
    rmpi_net_held += b->len;
}

static void buf_unhold(rmpi_ofi_buf_t *b)
{
    rmpi_net_held -= b->held;
    b->held = 0;
}

void rmpi_ofi_tx_put(rmpi_ofi_rail_t *r, rmpi_ofi_buf_t *b)
{
    buf_unhold(b);
    b->ctx.next = (rmpi_ofi_ctx_t *)r->tx_free;
    r->tx_free = b;
}

static int rx_post(rmpi_ofi_rail_t *r, rmpi_ofi_buf_t *b)
{
    ssize_t rc;
    b->hi = 0;
    if (r->mrecv) {
        struct iovec iov = {b->data, b->size};
        struct fi_msg msg = {.msg_iov = &iov,
                             .desc = &b->desc,
                             .iov_count = 1,
                             .addr = FI_ADDR_UNSPEC,
                             .context = &b->ctx.fctx};
        rc = fi_recvmsg(r->ep, &msg, FI_MULTI_RECV);
    } else if (r->ncls) {
        rc = fi_trecv(r->ep, b->data, b->size, b->desc, FI_ADDR_UNSPEC, (uint64_t)b->cls, 0, &b->ctx.fctx);
    } else {
        rc = fi_recv(r->ep, b->data, b->size, b->desc, FI_ADDR_UNSPEC, &b->ctx.fctx);
    }
    if (rc == -FI_EAGAIN) {
        b->ctx.next = r->rx_wait;
        r->rx_wait = &b->ctx;
        return 0;
    }
    return (int)rc;
}

/* ---- peers ---- */

static void hex_encode(const unsigned char *in, size_t n, char *out)
{
    static const char d[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = d[in[i] >> 4];
        out[2 * i + 1] = d[in[i] & 15];
    }
    out[2 * n] = 0;
}

static int hex_decode(const char *in, unsigned char *out, size_t max)
{
    size_t n = strlen(in);
    if (n % 2 || n / 2 > max)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(in + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (unsigned char)v;
    }
    return (int)(n / 2);
}

/* The part of a card that must match for two rails to talk: "fabric|domain|". */
static size_t card_prefix(const char *card)
{
    const char *p = strrchr(card, '|');
    return p ? (size_t)(p - card + 1) : 0;
}

/* The card of peer whose "fabric|domain|kind|" prefix is the first pre bytes of mine, into
 * card (sizeof r->card bytes); 0 when found. */
static int peer_card(rmpi_ofi_rail_t *r, int peer, const char *mine, size_t pre, char *card)
{
    for (int k = 0; k < RMPI_NET_MAX_RAILS; k++) {
        char key[48];
        snprintf(key, sizeof key, "ofi-%d-%d", peer, k);
        if (rmpi_pmi_get(key, card, sizeof r->card))
            return -1;
        rmpi_log(2, "ofi: rail %s: rank %d card %s", r->pub.hints.name, peer, card);
        if (card_prefix(card) == pre && !strncmp(card, mine, pre))
            return 0;
    }
    return -1;
}

/* This process's rail on a loopback fabric, when RMPI_OFI_DOMAINS leaves the choice to us:
 * ranks of this node that have one too talk over it alone (see peer_lookup). */
static char loop_card[sizeof((rmpi_ofi_rail_t *)0)->card];

/* Whether this rail reaches peer, and its card (pre: *pre bytes of prefix) when it does: 0. */
static int peer_where(rmpi_ofi_rail_t *r, int peer, char *card, size_t *pre)
{
    int same_node = rmpi_topo_node_of(peer) == rmpi_topo_my_node();
    if (r->local_only && !same_node)
        return -1;
    /* Within a node, as RailMPI's tcp provider does: the loopback domain only. Striping over
     * lo and eth0 moves the same bytes through the same kernel loopback, and a second
     * subchannel costs every frame a copy kept for failover plus acknowledgements
     * (tcp;ofi_rxm, 16 KiB stream: 36.5k -> 19.2k instructions a message on the sender). */
    if (same_node && !r->loopback && loop_card[0] && !peer_card(r, peer, loop_card, card_prefix(loop_card), card)) {
        rmpi_log(2, "ofi: rail %s: rank %d is reached over the loopback domain instead", r->pub.hints.name, peer);
        return -1;
    }
    *pre = card_prefix(r->card);
    if (peer_card(r, peer, r->card, *pre, card)) {
        rmpi_log(2, "ofi: rail %s: no card of rank %d matches %.*s", r->pub.hints.name, peer, (int)*pre, r->card);
        return -1;
    }
    return 0;
}

static void peer_lookup(rmpi_ofi_rail_t *r, int peer)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, peer);
    p->state = -1;
    char card[sizeof r->card];
    size_t pre;
    if (peer_where(r, peer, card, &pre))
        return;
    unsigned char addr[256];
    int n = hex_decode(card + pre, addr, sizeof addr);
    if (n <= 0)
        rmpi_fatal("ofi: rank %d published a malformed address card '%s'.", peer, card);
    int rc = fi_av_insert(r->av, addr, 1, &p->addr, 0, NULL);
    if (rc != 1)
        rmpi_fatal("RMPI_OFI_PROVIDER=%s: cannot insert rank %d's address into the address vector of %s "
                   "(fi_av_insert: %s).",
                   rmpi_ofi_prov(r), peer, r->pub.hints.name, fi_strerror(rc < 0 ? -rc : FI_EINVAL));
    p->state = 1;
}

/* The state of a peer to send to (its address in p->addr), or NULL with *rc. The first
 * contact with a peer (send, RDMA; a frame from it: rmpi_ofi_rx_frame) allocates it. */
static inline rmpi_ofi_peer_t *peer_to(rmpi_ofi_rail_t *r, int peer, int *rc)
{
    if (peer < 0 || peer >= r->env.size || peer == r->env.rank) {
        *rc = -EINVAL;
        return NULL;
    }
    rmpi_ofi_peer_t *p = rmpi_ofi_peer_find(r, peer);
    if (RMPI_UNLIKELY(!p || !p->state)) {
        p = rmpi_ofi_peer_touch(r, peer);
        if (!p->state)
            peer_lookup(r, peer);
    }
    *rc = p->state < 0                ? -EHOSTUNREACH
          : RMPI_UNLIKELY(p->ln.down) ? -ECONNRESET /* given up, not connected again yet (ofi_rejoin) */
                                      : 0;
    return *rc ? NULL : p;
}

int rmpi_ofi_peer_addr(rmpi_ofi_rail_t *r, int peer, fi_addr_t *addr)
{
    int rc;
    const rmpi_ofi_peer_t *p = peer_to(r, peer, &rc);
    if (p)
        *addr = p->addr;
    return rc;
}

/* After the address fence: a rail that can carry nothing is not polled. When every rank is
 * on this node and has a loopback card like ours, the other domains reach nobody, and
 * polling one (ofi_rxm over tcp, idle) cost about 1000 instructions each progress. */
static int ofi_ready(rmpi_rail_t *rail, int phase)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    if (phase != 0)
        return 0;
    /* A rail of this node alone (loopback, shm) where no other rank shares the node (one
     * rank a node, or RMPI_TOPO_FAKE_NODES on one host): peer_lookup turns every peer away.
     * Polled anyway, its idle rxm endpoint cost a second poll() each progress (1 MiB
     * ping-pong between two pretend nodes over tcp;ofi_rxm: 49 -> 28 poll() per round trip,
     * 1530-2120 -> 830-1280 instructions a progress call, callgrind). */
    if (r->local_only && rmpi_topo_local_size(rmpi_topo_my_node()) == 1) {
        r->idle = 1;
        rmpi_log(1, "ofi: rail %s reaches no rank (no other rank on this node): not polled", rail->hints.name);
        return 0;
    }
    if (r->loopback || !loop_card[0] || rmpi_topo_local_size(rmpi_topo_my_node()) != r->env.size)
        return 0;
    char card[sizeof r->card];
    for (int p = 0; p < r->env.size; p++)
        if (p != r->env.rank && peer_card(r, p, loop_card, card_prefix(loop_card), card))
            return 0;
    r->idle = 1;
    rmpi_log(1, "ofi: rail %s reaches no rank (all talk over the loopback domain): not polled", rail->hints.name);
    return 0;
}

/* Asked of every rank by rmpi_chan_report and of each peer a VC is made for: a peer not
 * contacted yet is judged from its card alone, so asking allocates nothing; a contacted one
 * is looked up once (AV insert) and answered from its state after that. */
static int ofi_reaches(rmpi_rail_t *rail, int peer)
{
    fi_addr_t a;
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    const rmpi_ofi_peer_t *p =
        peer >= 0 && peer < r->env.size && peer != r->env.rank ? rmpi_ofi_peer_find(r, peer) : NULL;
    if (peer >= 0 && peer < r->env.size && peer != r->env.rank && (!p || !p->touched)) {
        char card[sizeof r->card];
        size_t pre;
        return !peer_where(r, peer, card, &pre);
    }
    int rc = rmpi_ofi_peer_addr(r, peer, &a);
    return rc == 0 || rc == -ECONNRESET;
}

/* ---- send and the pending queue ---- */

void rmpi_ofi_pend_add(rmpi_ofi_rail_t *r, rmpi_ofi_ctx_t *c)
{
    c->next = NULL;
    *r->pend_tail = c;
    r->pend_tail = &c->next;
}

/* The rest of a chunked write goes before everything queued after the write was posted. */
void rmpi_ofi_pend_front(rmpi_ofi_rail_t *r, rmpi_ofi_ctx_t *c)
{
    c->next = r->pend;
    r->pend = c;
    if (!c->next)
        r->pend_tail = &c->next;
}

void rmpi_ofi_pend(rmpi_ofi_rail_t *r, rmpi_ofi_ctx_t *c)
{
    rmpi_ofi_pend_add(r, c);
    r->stat_eagain++;
}

/* The sequence number goes in when the post is accepted: posts are matched in that order
 * (FI_ORDER_SAS), and a frame queued behind an emulated put is numbered after its pieces. */
void rmpi_ofi_set_seq(char *data, const rmpi_ofi_peer_t *p)
{
    uint32_t w[2];
    memcpy(w, data, sizeof w);
    uint32_t src = le32toh(w[0]) & ~(RMPI_OFI_EPOCH_MASK << RMPI_OFI_EPOCH_SHIFT);
    w[0] = htole32(src | (p->ln.epoch & RMPI_OFI_EPOCH_MASK) << RMPI_OFI_EPOCH_SHIFT);
    w[1] = htole32(p->tx_seq);
    memcpy(data, w, sizeof w);
}

int rmpi_ofi_tx_post(rmpi_ofi_rail_t *r, rmpi_ofi_buf_t *b)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, b->peer);
    rmpi_ofi_set_seq(b->data, p);
    ssize_t rc = r->ncls ? fi_tsend(r->ep, b->data, b->len, b->desc, p->addr, rmpi_ofi_class(r, b->len), &b->ctx.fctx)
                         : fi_send(r->ep, b->data, b->len, b->desc, p->addr, &b->ctx.fctx);
    if (rc == 0) {
        r->tx_out++;
        r->emul_out += b->piece;
        p->tx_seq += !b->link; /* link frames stand outside the sequence */
    }
    return (int)rc;
}

ssize_t rmpi_ofi_inject_frame(rmpi_ofi_rail_t *r, const void *buf, size_t len, fi_addr_t dest)
{
    return r->ncls ? fi_tinject(r->ep, buf, len, dest, rmpi_ofi_class(r, len)) : fi_inject(r->ep, buf, len, dest);
}

/* ---- frames sent from the caller's memory (send_zc) ---- */

static rmpi_ofi_zc_t *zc_get(rmpi_ofi_rail_t *r)
{
    rmpi_ofi_zc_t *z = r->zc_free;
    if (RMPI_LIKELY(z != NULL)) {
        r->zc_free = (rmpi_ofi_zc_t *)z->ctx.next;
        return z;
    }
    z = rmpi_xcalloc(1, sizeof *z);
    z->ctx.kind = RMPI_OFI_TXZ;
    z->all = r->zc_all;
    r->zc_all = z;
    return z;
}

static int zc_post(rmpi_ofi_rail_t *r, rmpi_ofi_zc_t *z)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, z->peer);
    rmpi_ofi_set_seq(z->hdr, p);
    ssize_t rc;
    if (r->ncls) {
        size_t n = 0;
        for (int i = 0; i < z->iovcnt; i++)
            n += z->iov[i].iov_len;
        rc = fi_tsendv(r->ep, z->iov, NULL, (size_t)z->iovcnt, p->addr, rmpi_ofi_class(r, n), &z->ctx.fctx);
    } else {
        rc = fi_sendv(r->ep, z->iov, NULL, (size_t)z->iovcnt, p->addr, &z->ctx.fctx);
    }
    if (rc == 0) {
        r->tx_out++;
        p->tx_seq++;
    }
    return (int)rc;
}

/* The send is over (status 0 or a negative errno): give the caller its memory back. */
static void zc_done(rmpi_ofi_rail_t *r, rmpi_ofi_zc_t *z, int status)
{
    rmpi_net_op_t *op = z->op;
    if (status == 0) {
        size_t n = 0;
        for (int i = 0; i < z->iovcnt; i++)
            n += z->iov[i].iov_len;
        rmpi_ofi_done(r, z->peer, z->ctx.gen, n, 0);
    }
    z->ctx.next = (rmpi_ofi_ctx_t *)r->zc_free;
    r->zc_free = z;
    op->status = status;
    op->complete(op);
}

/* A post refused for good: the op completes (with the error) at the next progress, which
 * then reports the peer lost, as for a failed send. */
static void zc_fail(rmpi_ofi_rail_t *r, rmpi_ofi_zc_t *z, int rc)
{
    z->status = rc;
    z->ctx.next = r->deferred;
    r->deferred = &z->ctx;
}

/* At progress: the failed send_zc completes with its error, then the peer is lost. */
static void zc_failed(rmpi_ofi_rail_t *r, rmpi_ofi_zc_t *z)
{
    int peer = z->peer, rc = z->status;
    if (rc == 1) { /* copied into the peer's dedicated ring: the caller's memory is free */
        rmpi_net_op_t *op = z->op;
        z->ctx.next = (rmpi_ofi_ctx_t *)r->zc_free;
        r->zc_free = z;
        op->status = 0;
        op->complete(op);
        return;
    }
    zc_done(r, z, rc < 0 ? rc : -EIO);
    if (rc == -ECONNRESET) /* its connection was given up, and that was reported */
        return;
    char why[160];
    snprintf(why, sizeof why, "fi_sendv on %s failed: %s", r->pub.hints.name,
             rc == -EHOSTUNREACH ? "the rail does not reach it" : fi_strerror(-rc));
    r->env.on_peer_lost(&r->pub, peer, why);
}

static int ofi_send_zc(rmpi_rail_t *rail, int peer, const struct iovec *iov, int iovcnt, rmpi_net_op_t *op)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (iovcnt < 1 || iovcnt > RMPI_NET_ZC_IOV || iov[0].iov_len > RMPI_NET_ZC_HDR || len > rail->hints.max_frame)
        rmpi_fatal("ofi: send_zc of %zu bytes in %d pieces (header %zu) on %s is outside the contract.", len, iovcnt,
                   iov[0].iov_len, rail->hints.name);
    op->rail = rail;
    rmpi_ofi_zc_t *z = zc_get(r);
    const rmpi_ofi_peer_t *known = peer >= 0 && peer < r->env.size ? rmpi_ofi_peer_find(r, peer) : NULL;
    if (known && known->tx_kind == RMPI_NET_CHAN_DEDICATED) {
        /* A dedicated peer's frames are written into its ring, which takes a copy: the op
         * completes at the next progress (the contract's rule for completions found early). */
        int rc = rmpi_ofi_frame_send(r, peer, iov, iovcnt, 0);
        z->op = op;
        z->peer = peer;
        zc_fail(r, z, rc ? rc : 1);
        return rc;
    }
    r->st.tx_bytes[RMPI_NET_CHAN_SHARED] += len;
    z->op = op;
    z->peer = peer;
    z->iovcnt = iovcnt;
    rmpi_ofi_hdr_t h = RMPI_OFI_HDR(r, 0);
    memcpy(z->hdr, &h, sizeof h);
    memcpy(z->hdr + sizeof h, iov[0].iov_base, iov[0].iov_len);
    z->iov[0] = (struct iovec){z->hdr, sizeof h + iov[0].iov_len};
    for (int i = 1; i < iovcnt; i++)
        z->iov[i] = iov[i];
    int rc;
    rmpi_ofi_peer_t *p = peer_to(r, peer, &rc);
    if (!p) {
        zc_fail(r, z, rc);
        return rc;
    }
    z->ctx.gen = p->gen;
    p->out += len + sizeof(rmpi_ofi_hdr_t); /* rmpi_ofi_issued */
    p->sent += len + sizeof(rmpi_ofi_hdr_t);
    if (!r->pend && !rmpi_ofi_fenced(r)) {
        uint64_t t0 = 0;
        while ((rc = zc_post(r, z)) == -FI_EAGAIN && rmpi_ofi_push(r, &t0))
            ;
        if (rc == 0)
            return 0;
        if (rc != -FI_EAGAIN) {
            zc_fail(r, z, rc);
            return rc;
        }
    }
    rmpi_ofi_pend(r, &z->ctx);
    return 0;
}

static void peer_down(rmpi_ofi_rail_t *r, int peer, const char *why);

/* No connection to peer was ever made or tried on this rail and no frame went either way
 * (ofi_link.h, rmpi_ofi_link_fresh): a rail down at launch, before its first connection. */
static int never_made(const rmpi_ofi_peer_t *p)
{
    return rmpi_ofi_link_fresh(&p->ln) && !p->sent && !p->tx_seq && !p->rx_seq;
}

static int ctx_peer(const rmpi_ofi_ctx_t *c)
{
    return c->kind == RMPI_OFI_TXZ                              ? ((const rmpi_ofi_zc_t *)c)->peer
           : c->kind == RMPI_OFI_TX || c->kind == RMPI_OFI_RING ? ((const rmpi_ofi_buf_t *)c)->peer
                                                                : ((const rmpi_ofi_rdma_t *)c)->peer;
}

/* Peers passed over in one drain before it stops: a refusal for every peer is the rail's
 * queue, not one connection, and each try costs a call into the provider. */
#define PEND_SKIP 4

/* Posts go in issue order per peer, which is all that sequence numbers and FI_ORDER_SAS
 * need: a post refused for one peer (-FI_EAGAIN: its ofi_rxm connection being set up, or
 * its socket full behind a cut link, as a HELLO waits there for the probe's deadline)
 * holds that peer's later posts, not the other peers' (it held them for up to 4 s). */
static void pend_drain(rmpi_ofi_rail_t *r)
{
    int skip[PEND_SKIP], nskip = 0;
    rmpi_ofi_ctx_t **pp = &r->pend;
    while (*pp) {
        rmpi_ofi_ctx_t *c = *pp;
        if ((c->kind == RMPI_OFI_TX || c->kind == RMPI_OFI_TXZ || c->kind == RMPI_OFI_RING) && rmpi_ofi_fenced(r))
            return;
        int peer = ctx_peer(c), held = 0;
        for (int i = 0; i < nskip; i++)
            held |= skip[i] == peer;
        if (held) {
            pp = &c->next;
            continue;
        }
        int rc = c->kind == RMPI_OFI_TX     ? rmpi_ofi_tx_post(r, (rmpi_ofi_buf_t *)c)
                 : c->kind == RMPI_OFI_RING ? rmpi_ofi_ring_post(r, (rmpi_ofi_buf_t *)c)
                 : c->kind == RMPI_OFI_TXZ  ? zc_post(r, (rmpi_ofi_zc_t *)c)
                 : c->kind == RMPI_OFI_EMUL ? (rmpi_ofi_emul_drain(r, (rmpi_ofi_rdma_t *)c) ? 0 : -FI_EAGAIN)
                                            : rmpi_ofi_rdma_post(r, (rmpi_ofi_rdma_t *)c);
        if (rc == -FI_EAGAIN || rc == 1) { /* 1: the peer's ring is full until its credit */
            if (nskip == PEND_SKIP)
                return;
            skip[nskip++] = peer;
            pp = &c->next;
            continue;
        }
        *pp = c->next;
        if (!*pp)
            r->pend_tail = pp;
        if (c->kind == RMPI_OFI_TX || c->kind == RMPI_OFI_RING)
            buf_unhold((rmpi_ofi_buf_t *)c);
        if (rc == 0 && c->kind == RMPI_OFI_EMUL)
            rmpi_ofi_emul_sent(r, (rmpi_ofi_rdma_t *)c);
        if (rc == 0)
            continue;
        if (c->kind == RMPI_OFI_TXZ) {
            zc_fail(r, (rmpi_ofi_zc_t *)c, rc);
        } else if (c->kind == RMPI_OFI_TX || c->kind == RMPI_OFI_RING) {
            rmpi_ofi_buf_t *b = (rmpi_ofi_buf_t *)c;
            char why[160];
            snprintf(why, sizeof why, "%s on %s failed: %s", c->kind == RMPI_OFI_TX ? "fi_send" : "a ring fi_write",
                     r->pub.hints.name, fi_strerror(-rc));
            rmpi_ofi_tx_put(r, b);
            peer_down(r, peer, why); /* unlinks this peer's posts: start over */
            pp = &r->pend;
            nskip = 0;
        } else {
            rmpi_ofi_rdma_t *d = (rmpi_ofi_rdma_t *)c;
            rmpi_ofi_rdma_done(r, d, rmpi_ofi_rdma_refused(r, peer, rc, d->write));
            pp = &r->pend; /* the op's callback, or the connection given up, may have queued or dropped posts */
        }
    }
}

int rmpi_ofi_push(rmpi_ofi_rail_t *r, uint64_t *t0)
{
    uint64_t now = rmpi_time_ns();
    if (!*t0)
        *t0 = now;
    else if (now - *t0 > RMPI_OFI_PUSH_NS)
        return 0;
    unsigned room = RMPI_OFI_STASH - r->stash_n;
    if (room == 0)
        return 0;
    unsigned tail = (r->stash_head + r->stash_n) % RMPI_OFI_STASH;
    if (room > RMPI_OFI_STASH - tail)
        room = RMPI_OFI_STASH - tail;
    ssize_t n = fi_cq_read(r->cq, r->stash + tail, room);
    if (n > 0)
        r->stash_n += (unsigned)n;
    /* An error entry stays in the CQ for progress(); the push ends there. */
    return n > 0 || n == -FI_EAGAIN;
}

/* A frame for a peer that receives from us on a dedicated ring (ofi_chan.c): written into
 * it now (small ones with fi_inject_write, no completion), else from a pool buffer, queued
 * behind earlier posts or until the ring has room. */
static int ring_send(rmpi_ofi_rail_t *r, int peer, const rmpi_ofi_hdr_t *h, const struct iovec *iov, int iovcnt,
                     size_t total, int fenced)
{
    int rc;
    if (!r->pend && !fenced && RMPI_SHM_HDR + total <= r->inject) {
        memcpy(r->scratch + RMPI_SHM_HDR, h, sizeof *h);
        rmpi_iov_gather(r->scratch + RMPI_SHM_HDR + sizeof *h, iov, iovcnt);
        /* refused (no room, -FI_EAGAIN, a provider whose RMA inject limit is lower than
         * its messages'): the frame goes from a pool buffer */
        if (rmpi_ofi_ring_inject(r, peer, total) == 0)
            return 0;
    }
    rmpi_ofi_buf_t *b = rmpi_ofi_tx_get(r);
    b->ctx.kind = RMPI_OFI_RING;
    b->peer = peer;
    b->piece = 0;
    b->link = 0;
    b->len = RMPI_SHM_HDR + total;
    b->ctx.gen = rmpi_ofi_peer(r, peer)->gen;
    rmpi_ofi_issued(r, peer, b->len);
    memcpy(b->data + RMPI_SHM_HDR, h, sizeof *h);
    rmpi_iov_gather(b->data + RMPI_SHM_HDR + sizeof *h, iov, iovcnt);
    if (!r->pend && !fenced) {
        uint64_t t0 = 0;
        while ((rc = rmpi_ofi_ring_post(r, b)) == -FI_EAGAIN && rmpi_ofi_push(r, &t0))
            ;
        if (rc == 0)
            return 0;
        if (rc < 0 && rc != -FI_EAGAIN) {
            rmpi_ofi_tx_put(r, b);
            return rc;
        }
    }
    buf_hold(b);
    rmpi_ofi_pend_add(r, &b->ctx);
    return 0;
}

int rmpi_ofi_frame_send(rmpi_ofi_rail_t *r, int peer, const struct iovec *iov, int iovcnt, uint32_t flag)
{
    int rc;
    rmpi_ofi_peer_t *p = peer_to(r, peer, &rc); /* one lookup: chunks never move until close */
    if (!p)
        return rc;
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (len > r->pub.hints.max_frame)
        return -EMSGSIZE;
    rmpi_ofi_hdr_t h = RMPI_OFI_HDR(r, flag);
    size_t total = sizeof h + len;
    p->sent += total;
    /* Without FI_ORDER_SAW a frame must not overtake an earlier put's data: it waits. */
    int fenced = rmpi_ofi_fenced(r);
    if (RMPI_UNLIKELY(p->tx_kind == RMPI_NET_CHAN_DEDICATED) && !flag && RMPI_SHM_HDR + total <= r->ring_max_frame)
        return ring_send(r, peer, &h, iov, iovcnt, total, fenced);
    r->st.tx_bytes[RMPI_NET_CHAN_SHARED] += len;
    if (!r->pend && !fenced && total <= r->inject) {
        memcpy(r->scratch, &h, sizeof h);
        rmpi_iov_gather(r->scratch + sizeof h, iov, iovcnt);
        ssize_t irc;
        uint64_t t0 = 0;
        rmpi_ofi_set_seq(r->scratch, p);
        while ((irc = rmpi_ofi_inject_frame(r, r->scratch, total, p->addr)) == -FI_EAGAIN && rmpi_ofi_push(r, &t0))
            ;
        if (irc == 0) {
            p->tx_seq++;
            return 0;
        }
        if (irc != -FI_EAGAIN)
            return (int)irc;
    }
    rmpi_ofi_buf_t *b = rmpi_ofi_tx_get(r);
    b->peer = peer;
    b->piece = 0;
    b->link = 0;
    b->len = total;
    b->ctx.gen = p->gen;
    p->out += total; /* rmpi_ofi_issued */
    memcpy(b->data, &h, sizeof h);
    rmpi_iov_gather(b->data + sizeof h, iov, iovcnt);
    if (!r->pend && !fenced) {
        uint64_t t0 = 0;
        while ((rc = rmpi_ofi_tx_post(r, b)) == -FI_EAGAIN && rmpi_ofi_push(r, &t0))
            ;
        if (rc == 0)
            return 0;
        if (rc != -FI_EAGAIN) {
            rmpi_ofi_tx_put(r, b);
            return rc;
        }
    }
    buf_hold(b);
    rmpi_ofi_pend(r, &b->ctx);
    return 0;
}

static int ofi_send(rmpi_rail_t *rail, int peer, const struct iovec *iov, int iovcnt)
{
    return rmpi_ofi_frame_send(rmpi_ofi_rail_of(rail), peer, iov, iovcnt, 0);
}

/* ---- progress ---- */

static void rx_repost(rmpi_ofi_rail_t *r, rmpi_ofi_buf_t *b)
{
    int rc = rx_post(r, b);
    if (rc)
        rmpi_fatal("RMPI_OFI_PROVIDER=%s: reposting a receive on %s failed (fi_recv: %s).", rmpi_ofi_prov(r),
                   r->pub.hints.name, fi_strerror(-rc));
}

static void rx_deliver(rmpi_ofi_rail_t *r, const char *data, int src, size_t len)
{
    uint32_t flag;
    memcpy(&flag, data, sizeof flag);
    const char *frame = data + sizeof(rmpi_ofi_hdr_t);
    if (!r->closing && (le32toh(flag) & RMPI_OFI_CTRL) && len > sizeof(rmpi_ofi_hdr_t) &&
        (unsigned char)frame[0] >= RMPI_OFI_CHAN_REQ)
        rmpi_ofi_chan_rx(r, src, frame, len - sizeof(rmpi_ofi_hdr_t));
    else if (!r->closing && (le32toh(flag) & RMPI_OFI_CTRL))
        rmpi_ofi_emul_rx(r, src, frame, len - sizeof(rmpi_ofi_hdr_t));
    else if (!r->closing)
        r->env.on_frame(&r->pub, src, frame, len - sizeof(rmpi_ofi_hdr_t));
}

static void link_rx(rmpi_ofi_rail_t *r, int src, const char *body, size_t len);
static int frame_epoch(rmpi_ofi_rail_t *r, int peer, uint32_t bits);

void rmpi_ofi_rx_frame(rmpi_ofi_rail_t *r, const char *data, size_t len, int ch)
{
    rmpi_ofi_hdr_t h;
    uint32_t word = 0;
    if (len >= sizeof h) {
        memcpy(&h, data, sizeof h);
        word = le32toh(h.src);
    }
    h.src = word & RMPI_OFI_RANK_MASK;
    h.seq = len >= sizeof h ? le32toh(h.seq) : 0;
    if (RMPI_UNLIKELY(len < sizeof h || le64toh(h.cookie) != r->cookie || h.src >= (uint32_t)r->env.size ||
                      (int)h.src == r->env.rank)) {
        /* Not from this job (or corrupt): dropped and counted, the job goes on. */
        if (rmpi_net_sec_stats.refused++ < 3)
            rmpi_warn("ofi: rank %d dropped a %zu-byte message on %s that does not carry the job's cookie or "
                      "names no other rank of the job (%u): another program talks to this endpoint.",
                      r->env.rank, len, r->pub.hints.name, h.src);
        return;
    }
    rmpi_ofi_peer_t *p = rmpi_ofi_peer_find(r, (int)h.src);
    if (RMPI_UNLIKELY(!p || !p->state)) {
        /* The first frame from it: answers (PONG, CHAN_MARK, credits, an emulated read's
         * data) go to its address, which nothing else may have looked up on this rail. */
        p = rmpi_ofi_peer_touch(r, (int)h.src);
        if (!p->state)
            peer_lookup(r, (int)h.src);
    }
    if (RMPI_UNLIKELY(word & RMPI_OFI_LINK)) {
        link_rx(r, (int)h.src, data + sizeof h, len - sizeof h);
        return;
    }
    uint32_t epoch = word >> RMPI_OFI_EPOCH_SHIFT & RMPI_OFI_EPOCH_MASK;
    if (RMPI_UNLIKELY(p->ln.down || p->ln.unconfirmed || epoch != (p->ln.epoch & RMPI_OFI_EPOCH_MASK)) &&
        frame_epoch(r, (int)h.src, epoch) == RMPI_OFI_LINK_STALE) {
        /* a frame of a connection given up (still in the queue, or parked) */
        r->stat_stale++;
        return;
    }
    p->moved += len;
    r->st.rx_bytes[ch] += len - sizeof h;
    r->st.rx_frames[ch]++;
    if (RMPI_UNLIKELY(h.seq != p->rx_seq)) {
        /* Completed before an earlier frame: copied out and parked in seq order, so that
         * the buffer (shared by every peer) is not held for it. */
        rmpi_ofi_park_t *k = rmpi_xmalloc(sizeof *k + len);
        k->seq = h.seq;
        k->len = len;
        memcpy(k->data, data, len);
        rmpi_ofi_park_t **pp = &p->parked;
        while (*pp && (int32_t)((*pp)->seq - h.seq) < 0)
            pp = &(*pp)->next;
        k->next = *pp;
        *pp = k;
        return;
    }
    p->rx_seq++;
    rx_deliver(r, data, (int)h.src, len);
    if (RMPI_UNLIKELY(p->rx_seq == 1))
        rmpi_ofi_chan_first(r, (int)h.src);
    while (p->parked && p->parked->seq == p->rx_seq) {
        rmpi_ofi_park_t *q = p->parked;
        p->parked = q->next;
        p->rx_seq++;
        rx_deliver(r, q->data, (int)h.src, q->len);
        free(q);
    }
}

/* A receive completed. A plain buffer holds one frame and goes back at once; a
 * multi-receive buffer holds frames back to back (e->buf) and goes back when the provider
 * releases it (FI_MULTI_RECV: less than a largest frame left), its bytes all consumed. */
static void on_rx(rmpi_ofi_rail_t *r, rmpi_ofi_buf_t *b, const struct fi_cq_data_entry *e)
{
    if (!r->mrecv) {
        r->st.buf_bytes[RMPI_NET_CHAN_SHARED] += b->size;
        if (r->ncls) {
            r->st.cls_frames[b->cls]++;
            r->st.cls_bytes[b->cls] += e->len - RMPI_MIN(e->len, sizeof(rmpi_ofi_hdr_t));
        }
        rmpi_ofi_rx_frame(r, b->data, e->len, RMPI_NET_CHAN_SHARED);
        rx_repost(r, b);
        return;
    }
    if (e->len) {
        const char *data = e->buf;
        size_t off = (size_t)(data - b->data);
        if (RMPI_UNLIKELY(!data || data < b->data || off > b->size || e->len > b->size - off))
            rmpi_fatal("RMPI_OFI_PROVIDER=%s: a multi-receive completion on %s names no place in its buffer (offset %zu, "
                       "%zu bytes); set RMPI_OFI_MRECV=0.",
                       rmpi_ofi_prov(r), r->pub.hints.name, off, (size_t)e->len);
        b->hi = RMPI_MAX(b->hi, off + e->len);
        rmpi_ofi_rx_frame(r, data, e->len, RMPI_NET_CHAN_SHARED);
    }
    if (e->flags & FI_MULTI_RECV) {
        r->st.buf_bytes[RMPI_NET_CHAN_SHARED] += b->size;
        rx_repost(r, b);
    }
}

static void cq_error(rmpi_ofi_rail_t *r)
{
    struct fi_cq_err_entry e;
    memset(&e, 0, sizeof e);
    if (fi_cq_readerr(r->cq, &e, 0) != 1)
        return;
    char buf[256];
    const char *what = fi_cq_strerror(r->cq, e.prov_errno, e.err_data, buf, sizeof buf);
    rmpi_ofi_ctx_t *c = e.op_context;
    if (!c)
        rmpi_fatal("RMPI_OFI_PROVIDER=%s: an error without context on %s: %s (%s).", rmpi_ofi_prov(r),
                   r->pub.hints.name, fi_strerror(e.err), what ? what : "");
    if (c->kind == RMPI_OFI_RX) {
        if (e.err == FI_ECANCELED || r->closing)
            return;
        rmpi_fatal("RMPI_OFI_PROVIDER=%s: a receive on %s failed: %s (%s; a %zu-byte buffer%s, %zu bytes left over).",
                   rmpi_ofi_prov(r), r->pub.hints.name, fi_strerror(e.err), what ? what : "",
                   ((rmpi_ofi_buf_t *)c)->size, r->ncls ? " of a size class" : "", (size_t)e.olen);
    }
    if (c->kind == RMPI_OFI_RDMA && rmpi_ofi_rdma_orphan_end(r, (rmpi_ofi_rdma_t *)c))
        return; /* given up with its connection, its op completed then */
    r->tx_out--;
    /* An op of a connection given up already: the loss was reported then. */
    int peer = ctx_peer(c);
    int stale = c->gen != rmpi_ofi_peer(r, peer)->gen;
    char why[320];
    snprintf(why, sizeof why, "a send on %s failed: %s (%s)", r->pub.hints.name, fi_strerror(e.err), what ? what : "");
    if (c->kind == RMPI_OFI_TXZ) {
        zc_done(r, (rmpi_ofi_zc_t *)c, e.err == FI_ECANCELED ? -ECANCELED : -EIO);
        if (!stale)
            peer_down(r, peer, why);
        return;
    }
    if (c->kind == RMPI_OFI_TX) {
        rmpi_ofi_buf_t *b = (rmpi_ofi_buf_t *)c;
        r->emul_out -= b->piece;
        rmpi_ofi_tx_put(r, b);
        if (!stale)
            peer_down(r, peer, why);
        return;
    }
    int err = (int)e.err;
    /* tcp;ofi_rxm reports a key the target rejects as FI_ECANCELED: nobody cancels RDMA. */
    int remote = err == FI_EACCES || err == FI_EINVAL || err == FI_EKEYREJECTED || err == FI_EFAULT ||
                 err == FI_EREMOTEIO || err == FI_EIO || err == FI_ECANCELED;
    rmpi_log(1, "ofi: RDMA on %s failed: %s (%s)", r->pub.hints.name, fi_strerror(err), what ? what : "");
    snprintf(why, sizeof why, "an RDMA %s on %s failed: %s (%s)", ((rmpi_ofi_rdma_t *)c)->write ? "write" : "read",
             r->pub.hints.name, fi_strerror(err), what ? what : "");
    rmpi_ofi_rdma_done(r, (rmpi_ofi_rdma_t *)c, remote ? -EFAULT : -err);
    /* As a verbs QP goes to the error state: after a failed RDMA the provider's connection
     * may drop later frames without a word (tcp;ofi_rxm does), so the connection is given
     * up (reported at the end of this progress) and used again only after a rejoin. */
    if (!stale)
        peer_down(r, peer, why);
}

static void on_entry(rmpi_ofi_rail_t *r, const struct fi_cq_data_entry *e)
{
    rmpi_ofi_ctx_t *c = e->op_context;
    if (c->kind == RMPI_OFI_RX) {
        on_rx(r, (rmpi_ofi_buf_t *)c, e);
    } else if (c->kind == RMPI_OFI_TX) {
        rmpi_ofi_buf_t *b = (rmpi_ofi_buf_t *)c;
        r->tx_out--;
        r->emul_out -= b->piece;
        rmpi_ofi_done(r, b->peer, c->gen, b->link ? 0 : b->len, 0);
        rmpi_ofi_tx_put(r, b);
    } else if (c->kind == RMPI_OFI_TXZ) {
        r->tx_out--;
        zc_done(r, (rmpi_ofi_zc_t *)c, 0);
    } else if (!rmpi_ofi_rdma_orphan_end(r, (rmpi_ofi_rdma_t *)c)) {
        r->tx_out--;
        rmpi_ofi_rdma_chunk_done(r, (rmpi_ofi_rdma_t *)c);
    }
}

/* ---- failure and re-admission (the VC's watch, abandon, rejoin) ---- */

enum { LINK_HELLO = 1, LINK_ACK = 2, LINK_PING = 3, LINK_PONG = 4, LINK_UP = 6 };
/* A PING at most this often per (rail, peer) while frames wait for an answer. */
#define PING_NS 20000000ull

/* A link frame (kind and two words, docs/wire/ofi.md), outside the sequence numbers; it
 * bypasses the down state (a HELLO is what ends it). Posted once, else queued. */
static void link_send(rmpi_ofi_rail_t *r, int peer, uint32_t kind, uint32_t epoch, uint32_t prev)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, peer);
    rmpi_ofi_buf_t *b = rmpi_ofi_tx_get(r);
    rmpi_ofi_hdr_t h = RMPI_OFI_HDR(r, RMPI_OFI_LINK);
    uint32_t body[3] = {htole32(kind), htole32(epoch), htole32(prev)};
    memcpy(b->data, &h, sizeof h);
    memcpy(b->data + sizeof h, body, sizeof body);
    b->peer = peer;
    b->piece = 0;
    b->link = 1;
    b->len = sizeof h + sizeof body;
    b->ctx.gen = p->gen;
    int rc = r->pend || rmpi_ofi_fenced(r) ? -FI_EAGAIN : rmpi_ofi_tx_post(r, b);
    if (rc == -FI_EAGAIN) {
        rmpi_ofi_pend_add(r, &b->ctx);
    } else if (rc) {
        rmpi_ofi_tx_put(r, b);
        rmpi_log(1, "ofi: rank %d: a link frame to rank %d on %s failed: %s", r->env.rank, peer, r->pub.hints.name,
                 fi_strerror(-rc));
    }
}

int rmpi_ofi_link_inject(rmpi_ofi_rail_t *r, int peer, uint32_t kind, uint32_t a, uint32_t b)
{
    rmpi_ofi_hdr_t h = RMPI_OFI_HDR(r, RMPI_OFI_LINK);
    uint32_t body[3] = {htole32(kind), htole32(a), htole32(b)};
    char buf[sizeof h + sizeof body];
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, body, sizeof body);
    return (int)rmpi_ofi_inject_frame(r, buf, sizeof buf, rmpi_ofi_peer(r, peer)->addr);
}

/* The connection to peer is given up (logically: see README.md on why ofi_rxm's own
 * connection stays): posts not yet accepted by libfabric fail (frames are dropped: the VC
 * resends its copies; zero-copy sends and RDMA ops complete with -ECONNRESET at the next
 * progress, after on_peer_lost(why)), so do reads in bounce buffers that libfabric holds
 * (orphans: their late data lands in the bounce buffer, never in the caller's), emulated
 * reads waiting for data fail, early frames go, and frames of this epoch are dropped from
 * now on. Other ops libfabric accepted complete when it completes them: a read without a
 * bounce buffer stays safe to finish late (the peer keeps its buffer until our FIN), one
 * completed early could land after the buffer was reused. */
static void peer_down(rmpi_ofi_rail_t *r, int peer, const char *why)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, peer);
    if (p->state != 1)
        return;
    if (!p->report) {
        free(p->why);
        p->why = strdup(why); /* NULL without memory: report() says so in general words */
        p->report = 1;
        r->lost_due++;
    }
    if (p->ln.hello)
        r->hellos--;
    if (rmpi_ofi_link_lost(&p->ln)) {
        p->gen++;
        p->out = 0;
        p->acked = p->sent;
        rmpi_log(1, "ofi: rank %d gave up its connection to rank %d on %s (epoch %u): %s", r->env.rank, peer,
                 r->pub.hints.name, p->ln.epoch, why);
    }
    rmpi_ofi_ctx_t **pp = &r->pend;
    r->pend_tail = &r->pend;
    while (*pp) {
        rmpi_ofi_ctx_t *c = *pp;
        if (ctx_peer(c) != peer) {
            r->pend_tail = &c->next;
            pp = &c->next;
            continue;
        }
        *pp = c->next;
        if (c->kind == RMPI_OFI_TX || c->kind == RMPI_OFI_RING) {
            rmpi_ofi_tx_put(r, (rmpi_ofi_buf_t *)c);
        } else if (c->kind == RMPI_OFI_TXZ) {
            zc_fail(r, (rmpi_ofi_zc_t *)c, -ECONNRESET);
        } else {
            rmpi_ofi_rdma_t *d = (rmpi_ofi_rdma_t *)c;
            if (d->held) {
                rmpi_ofi_tx_put(r, d->held);
                d->held = NULL;
            }
            if (d->op)
                rmpi_ofi_rdma_defer(r, d, -ECONNRESET);
            else
                rmpi_ofi_rdma_release(r, d); /* an emulated read's answer */
        }
    }
    if (r->flying)
        rmpi_ofi_rdma_orphan(r, peer);
    while (p->gets) { /* emulated reads waiting for data */
        rmpi_ofi_rdma_t *g = p->gets;
        p->gets = (rmpi_ofi_rdma_t *)g->ctx.next;
        rmpi_ofi_rdma_defer(r, g, -ECONNRESET);
    }
    while (p->parked) {
        rmpi_ofi_park_t *q = p->parked;
        p->parked = q->next;
        free(q);
    }
    rmpi_ofi_chan_down(r, peer);
}

int rmpi_ofi_rdma_refused(rmpi_ofi_rail_t *r, int peer, int rc, int write)
{
    if (rc == -FI_EACCES)
        return -EFAULT;
    char why[160];
    snprintf(why, sizeof why, "an RDMA %s on %s was refused: %s", write ? "write" : "read", r->pub.hints.name,
             fi_strerror(-rc));
    rmpi_log(1, "ofi: rank %d: %s", r->env.rank, why);
    peer_down(r, peer, why);
    return -ECONNRESET;
}

/* Epoch ln.epoch is up (ofi_link.h: both ends heard each other in it): on_peer_up at the end
 * of progress; the lower rank tells the higher one with UP, which it waits for. */
static void connected(rmpi_ofi_rail_t *r, int peer)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, peer);
    r->pub.hints.down = 0; /* its link is up now: channels opened from here on start it live */
    if (r->env.rank < peer)
        link_send(r, peer, LINK_UP, p->ln.epoch, 0);
    if (!p->up_due) {
        p->up_due = 1;
        r->up_due++;
    }
}

/* A connection adopted (ln.epoch; hello: the HELLO we had out before): numbering starts
 * again; up: both ends heard each other in it. */
static void adopted(rmpi_ofi_rail_t *r, int peer, uint32_t hello, int up)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, peer);
    if (hello)
        r->hellos--;
    p->tx_seq = p->rx_seq = 0;
    p->out = 0;
    p->acked = p->sent;
    if (up)
        connected(r, peer);
}

/* A frame of peer's whose epoch bits are not simply the current connection's: the first
 * one in the epoch our HELLO proposed (the peer took the HELLO; its answer may complete
 * after this frame: completions come in any order), the first one in our unconfirmed
 * epoch, or a stale one (RMPI_OFI_LINK_STALE). */
static int frame_epoch(rmpi_ofi_rail_t *r, int peer, uint32_t bits)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, peer);
    uint32_t hello = p->ln.hello;
    int k = rmpi_ofi_link_frame(&p->ln, bits, RMPI_OFI_EPOCH_MASK);
    if (k == RMPI_OFI_LINK_ADOPTED)
        adopted(r, peer, hello, 1);
    else if (k == RMPI_OFI_LINK_CONFIRMED)
        connected(r, peer);
    return k;
}

static void link_rx(rmpi_ofi_rail_t *r, int src, const char *body, size_t len)
{
    uint32_t w[3];
    if (len < sizeof w) {
        rmpi_warn("ofi: rank %d sent a %zu-byte link frame on %s; dropped.", src, len, r->pub.hints.name);
        return;
    }
    memcpy(w, body, sizeof w);
    uint32_t kind = le32toh(w[0]), epoch = le32toh(w[1]), prev = le32toh(w[2]);
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, src);
    if (!p->state)
        peer_lookup(r, src);
    if (p->state != 1)
        return;
    /* Anything from the peer on this rail shows the rail is not cut; under a flow that
     * fills it one way, our PINGs wait behind that flow's data while the peer's come the
     * other way at once (an iperf3 flow on a rail failed it when only PONGs counted). */
    if (!p->ln.down)
        p->moved += len;
    if (kind == LINK_PING) {
        /* A PONG says the frames before the PING arrived; on a connection given up here
         * they were dropped. Answered anyway, it let the lower rank use an epoch this one
         * had given up (its HELLO_ACK came late, behind TCP's backed-off retransmission):
         * its frames went nowhere, its detector saw them answered, and the job hung
         * (netns/multirail/adaptive-binding-cycles-ofi, 1 run in 6 at load 16, read from
         * the ranks' warnings). Unanswered, the detector fails that epoch and the next
         * HELLO follows it. */
        if (!p->ln.down)
            link_send(r, src, LINK_PONG, epoch, 0);
        return;
    }
    if (kind == RMPI_OFI_LINK_CREDIT) {
        rmpi_ofi_chan_credit(r, src, epoch, prev);
        return;
    }
    if (kind == LINK_PONG) {
        /* every frame sent before the PING (its sent count, low 32 bits) has arrived */
        uint64_t had = p->sent - (uint32_t)((uint32_t)p->sent - epoch);
        if (!p->ln.down && had > p->acked && had <= p->sent) {
            p->moved += had - p->acked;
            p->acked = had;
        }
        return;
    }
    if (kind == LINK_ACK) {
        uint32_t hello = p->ln.hello;
        if (rmpi_ofi_link_ack(&p->ln, epoch))
            adopted(r, src, hello, 1);
        return;
    }
    if (kind == LINK_UP) {
        if (rmpi_ofi_link_up(&p->ln, epoch))
            connected(r, src);
        return;
    }
    if (kind != LINK_HELLO) {
        rmpi_warn("ofi: rank %d sent a link frame of unknown kind %u on %s; dropped.", src, kind, r->pub.hints.name);
        return;
    }
    /* A try made from another epoch than ours is an older one, overtaken (the lower rank
     * adopts the first try answered, and its later ones still name the epoch before). */
    if (!rmpi_ofi_link_hello(&p->ln, epoch, prev))
        return;
    if (!p->ln.down && !never_made(p)) {
        char why[160];
        snprintf(why, sizeof why, "rank %d connected again (epoch %u) in place of this connection (epoch %u)", src,
                 epoch, p->ln.epoch);
        peer_down(r, src, why);
    }
    adopted(r, src, 0, rmpi_ofi_link_take(&p->ln, epoch)); /* up when the lower rank says so */
    link_send(r, src, LINK_ACK, epoch, prev);
}

/* The pending queue (posts refused with -FI_EAGAIN) and ring stamps refused after their
 * bytes went: drained only by this process's progress. */
static int ofi_queued(rmpi_rail_t *rail)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    return r->pend != NULL || r->nstamp > 0 || r->credits_due > 0;
}

static size_t ofi_watch(rmpi_rail_t *rail, int peer, uint64_t *moved)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    *moved = 0;
    rmpi_ofi_peer_t *p = peer < 0 || peer >= r->env.size || peer == r->env.rank ? NULL : rmpi_ofi_peer_find(r, peer);
    if (!p || p->state != 1)
        return 0;
    *moved = p->moved;
    if (p->ln.down)
        return 0;
    /* Frames not yet answered for wait too; a PING asks for the answer, and tells the peer
     * this rail still carries our words while we wait for anything (the detector looks every
     * few ms, so a PING goes at most every PING_NS). */
    uint64_t unacked = p->sent - p->acked;
    if (unacked || p->out) {
        uint64_t now = rmpi_time_ns();
        if (now - p->t_ping > PING_NS) {
            p->t_ping = now;
            link_send(r, peer, LINK_PING, (uint32_t)p->sent, 0);
        }
    }
    return p->out + (size_t)unacked;
}

/* Bytes still to move to peer (the VC's pick of a rail for a large frame): frames (queued
 * ones included) and completed writes not yet answered by a PONG; reads move bytes the
 * other way. The PONGs answer the PINGs of watch, which the detector calls every few ms. */
static size_t ofi_backlog(rmpi_rail_t *rail, int peer)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    rmpi_ofi_peer_t *p = peer < 0 || peer >= r->env.size || peer == r->env.rank ? NULL : rmpi_ofi_peer_find(r, peer);
    if (!p || p->state != 1 || p->ln.down)
        return 0;
    return (size_t)(p->sent - p->acked);
}

static void ofi_abandon(rmpi_rail_t *rail, int peer, const char *why)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    if (peer < 0 || peer >= r->env.size || peer == r->env.rank || !rmpi_ofi_peer_find(r, peer))
        return; /* never touched: nothing to give up */
    peer_down(r, peer, why);
}

/* The lower rank of the pair proposes the new connection (HELLO with an epoch above every
 * one either side used, docs/wire/ofi.md); the higher one answers, so two tries never
 * cross. Its own rejoin has nothing to send: it waits for that HELLO (returns 0). */
/* How often a rail down at launch looks at its interface's link while a probe waits for it. */
#define IFACE_LOOK_NS 20000000ull

static int ofi_rejoin(rmpi_rail_t *rail, int peer, uint64_t timeout_ns)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    if (peer < 0 || peer >= r->env.size || peer == r->env.rank || r->closing)
        return -1;
    rmpi_ofi_peer_t *p = rmpi_ofi_peer_find(r, peer);
    if (r->opened_down && (!p || !p->state)) { /* the first try of a rail down at launch */
        p = rmpi_ofi_peer_touch(r, peer);
        if (!p->state)
            peer_lookup(r, peer);
    }
    if (r->opened_down && p && p->state == 1 && !p->ln.down && !p->report) {
        if (r->env.rank > peer)
            return 0; /* the lower rank proposes; a connection in use is failed by its HELLO */
        /* A connect while our link is down fails at once (ENETUNREACH), and ofi_rxm then
         * did not connect that peer again (docs/results/multirail.md): nothing is tried
         * until the interface is up. Meanwhile the probe is not counted as made (-1), so
         * the channel asks again at its next look and the HELLO goes within IFACE_LOOK_NS
         * of the link coming up; counted, the next try waited for the next backoff step
         * (re-admitted 0.95 s after the link came up in the lab, against 0.04-0.24 s over tcp,
         * whose connect attempt spans its whole try). */
        uint64_t now = rmpi_time_ns();
        if (!r->iface_up && now - r->iface_look >= IFACE_LOOK_NS) {
            r->iface_look = now;
            int up = 0;
            r->iface_up = rmpi_ofi_iface(r->info->domain_attr->name, NULL, NULL, 0, &up) != 0 || up;
        }
        if (!r->iface_up)
            return -1;
        if (!never_made(p)) { /* in use since the peer's channel found it up: fail it first */
            peer_down(r, peer, "a rail down at launch is connected anew");
            return -1;
        }
        rmpi_ofi_link_lost(&p->ln); /* epoch 0 never carried anything: given up unreported */
    }
    if (!p || p->state != 1 || !p->ln.down || p->report || p->ln.hello)
        return -1;
    if (r->env.rank > peer)
        return 0;
    rmpi_ofi_link_propose(&p->ln);
    p->hello_dl = rmpi_time_ns() + timeout_ns;
    r->hellos++;
    link_send(r, peer, LINK_HELLO, p->ln.hello, p->ln.epoch);
    return 0;
}

/* At the end of progress: tries without an answer by their deadline are given up. */
static void hellos_expire(rmpi_ofi_rail_t *r)
{
    uint64_t now = rmpi_time_ns();
    for (int i = -1; r->hellos && (i = rmpi_ofi_peer_next(r, i)) >= 0;) {
        rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, i);
        if (!p->ln.hello || now < p->hello_dl)
            continue;
        char why[160];
        snprintf(why, sizeof why, "no answer to a new connection (epoch %u) on %s", p->ln.hello, r->pub.hints.name);
        peer_down(r, i, why);
    }
}

/* Due reports (up 0: losses, before the ops they failed complete; 1: new connections,
 * after those completions). */
static void report(rmpi_ofi_rail_t *r, int up)
{
    int *due = up ? &r->up_due : &r->lost_due;
    for (int i = -1; *due && (i = rmpi_ofi_peer_next(r, i)) >= 0;) {
        rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, i);
        int *flag = up ? &p->up_due : &p->report;
        if (!*flag)
            continue;
        *flag = 0;
        (*due)--;
        if (!up) {
            if (!r->closing)
                r->env.on_peer_lost(&r->pub, i, p->why ? p->why : "its libfabric connection was given up");
            free(p->why);
            p->why = NULL;
            continue;
        }
        if (r->closing)
            continue;
        rmpi_log(1, "ofi: rank %d connected to rank %d again on %s (epoch %u)", r->env.rank, i, r->pub.hints.name,
                 p->ln.epoch);
        if (r->env.on_peer_up)
            r->env.on_peer_up(&r->pub, i, p->ln.epoch);
    }
}

static int ofi_progress(rmpi_rail_t *rail)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    struct fi_cq_data_entry ent[16];
    int ev = 0;
    if (RMPI_UNLIKELY(r->idle) && !r->deferred)
        return 0;
    if (RMPI_UNLIKELY(r->stash_n)) {
        /* Handlers may push more into the stash; those wait for the next call. */
        for (unsigned k = r->stash_n; k > 0; k--) {
            struct fi_cq_data_entry e = r->stash[r->stash_head];
            r->stash_head = (r->stash_head + 1) % RMPI_OFI_STASH;
            r->stash_n--;
            on_entry(r, &e);
            ev++;
        }
        return ev;
    }
    ssize_t n = fi_cq_read(r->cq, ent, RMPI_ARRAY_LEN(ent));
    if (n > 0) {
        for (ssize_t i = 0; i < n; i++)
            on_entry(r, &ent[i]);
        ev += (int)n;
    } else if (n == -FI_EAVAIL) {
        cq_error(r);
        ev++;
    } else if (n != -FI_EAGAIN) {
        rmpi_fatal("RMPI_OFI_PROVIDER=%s: fi_cq_read on %s failed: %s.", rmpi_ofi_prov(r), r->pub.hints.name,
                   fi_strerror((int)-n));
    }
    if (r->nrings || RMPI_UNLIKELY(r->nstamp || r->force.ns))
        ev += rmpi_ofi_chan_progress(r);
    if (RMPI_UNLIKELY(r->pend != NULL))
        pend_drain(r);
    if (RMPI_UNLIKELY(r->rx_wait != NULL)) {
        rmpi_ofi_ctx_t *c = r->rx_wait;
        r->rx_wait = NULL;
        while (c) {
            rmpi_ofi_ctx_t *next = c->next;
            int rc = rx_post(r, (rmpi_ofi_buf_t *)c);
            if (rc)
                rmpi_fatal("RMPI_OFI_PROVIDER=%s: reposting a receive on %s failed (fi_recv: %s).", rmpi_ofi_prov(r),
                           r->pub.hints.name, fi_strerror(-rc));
            c = next;
        }
    }
    if (RMPI_UNLIKELY(r->hellos))
        hellos_expire(r);
    if (RMPI_UNLIKELY(r->lost_due))
        report(r, 0);
    if (RMPI_UNLIKELY(r->deferred != NULL)) {
        rmpi_ofi_ctx_t *c = r->deferred;
        r->deferred = NULL;
        while (c) {
            rmpi_ofi_ctx_t *next = c->next;
            if (c->kind == RMPI_OFI_TXZ)
                zc_failed(r, (rmpi_ofi_zc_t *)c);
            else
                rmpi_ofi_rdma_done(r, (rmpi_ofi_rdma_t *)c, ((rmpi_ofi_rdma_t *)c)->op->status);
            ev++;
            c = next;
        }
    }
    if (RMPI_UNLIKELY(r->up_due))
        report(r, 1);
    return ev;
}

/* ---- open ---- */

struct fi_info *rmpi_ofi_hints(const char *prov, int manual, int rma)
{
    struct fi_info *h = fi_allocinfo();
    if (!h)
        rmpi_fatal("ofi: fi_allocinfo failed (out of memory).");
    h->caps = rma == 2 ? FI_MSG | FI_RMA | FI_ATOMIC : rma ? FI_MSG | FI_RMA : FI_MSG;
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->addr_format = FI_FORMAT_UNSPEC;
    h->ep_attr->type = FI_EP_RDM;
    /* Every mr_mode bit this provider handles; the domain answers with those it needs. */
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    h->domain_attr->av_type = FI_AV_TABLE;
    if (manual)
        h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    h->tx_attr->msg_order = FI_ORDER_SAS;
    h->rx_attr->msg_order = FI_ORDER_SAS;
    if (prov)
        h->fabric_attr->prov_name = strdup(prov);
    if (rmpi_knobs.OFI_TX_SIZE > 0)
        h->tx_attr->size = (size_t)rmpi_knobs.OFI_TX_SIZE;
    if (prov)
        h->tx_attr->inject_size = rmpi_ofi_inject(prov);
    if (rmpi_knobs.OFI_RX_SIZE > 0)
        h->rx_attr->size = (size_t)rmpi_knobs.OFI_RX_SIZE;
    return h;
}

/* fi_getinfo for prov, with manual progress and tagged messages (RMPI_OFI_CLASSES: the
 * size class in the tag) or multi-receive buffers (unless RMPI_OFI_MRECV is 0) if offered:
 * preferred, not required. */
static int getinfo(const char *prov, int rma, struct fi_info **list)
{
    uint64_t extra[3];
    int ne = 0;
    if (rmpi_knobs.OFI_CLASSES && rmpi_ofi_tagged(prov))
        extra[ne++] = FI_TAGGED;
    if (rmpi_knobs.OFI_MRECV > 0 && rmpi_ofi_mrecv(prov))
        extra[ne++] = FI_MULTI_RECV;
    extra[ne++] = 0;
    int rc = -FI_ENODATA;
    for (int k = 0; k < ne && rc == -FI_ENODATA; k++)
        for (int manual = 1; manual >= 0 && rc == -FI_ENODATA; manual--) {
            struct fi_info *hints = rmpi_ofi_hints(prov, manual, rma);
            hints->caps |= extra[k];
            rc = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), NULL, NULL, 0, hints, list);
            fi_freeinfo(hints);
        }
    return rc;
}

/* Whether list's first domain orders writes after writes and sends after writes (the
 * dedicated rings' and r->saw's conditions, ofi_chan.c). */
static int writes_ordered(const struct fi_info *list)
{
    uint64_t order = list->tx_attr->msg_order & list->rx_attr->msg_order;
    return (order & FI_ORDER_WAW) && (order & FI_ORDER_SAW);
}

static void ofi_fail(const rmpi_net_env_t *env, const char *what, int rc)
{
    rmpi_fatal("RMPI_OFI_PROVIDER=%s: %s on rank %d (%s). Set RMPI_OFI_PROVIDER to a provider `fi_info -t FI_EP_RDM` "
               "lists, or RMPI_NET to shm or tcp.",
               chosen, what, env->rank, fi_strerror(rc < 0 ? -rc : rc));
}

/* Queues sized from the job: a refusal names the sizes and the knobs that set them. */
static void ofi_fail_sized(const rmpi_net_env_t *env, const char *what, int rc, long long cq)
{
    char buf[320];
    snprintf(buf, sizeof buf,
             "%s with universe size %s (FI_UNIVERSE_SIZE; RMPI_OFI_UNIVERSE_SIZE, default the job "
             "size, sets it) and a completion queue of %lld entries (RMPI_OFI_CQ_SIZE, 0 = the "
             "provider's default): the provider may refuse queues that large; lower them",
             what, rmpi_rt_env("FI_UNIVERSE_SIZE") ? rmpi_rt_env("FI_UNIVERSE_SIZE") : "?", cq);
    ofi_fail(env, buf, rc);
}

static int domain_wanted(const char *name)
{
    const char *list = rmpi_knobs.OFI_DOMAINS;
    if (!list || !*list || !strcmp(list, "*"))
        return 1;
    /* A device's XRC domain ("mlx5_0-xrc") is wanted under the device's name too. */
    size_t n = strlen(name), b = rmpi_ofi_xrc_base(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if ((len == n || len == b) && !strncmp(p, name, len))
            return 1;
        p = end ? end + 1 : p + len;
    }
    return 0;
}

static rmpi_ofi_rail_t *rail_open(const rmpi_net_env_t *env, struct fi_info *fi, int emul);

/* Whether one of the n rails carries the domain named by the len bytes at p (a device's
 * XRC domain answers to the device's name too). */
static int rail_named(rmpi_ofi_rail_t *const *made, int n, const char *p, size_t len)
{
    for (int i = 0; i < n; i++) {
        const char *dom = made[i]->info->domain_attr->name;
        size_t dn = strlen(dom), b = rmpi_ofi_xrc_base(dom);
        if ((len == dn || len == b) && !strncmp(p, dom, len))
            return 1;
    }
    return 0;
}

/* Each name of RMPI_OFI_DOMAINS that no listed domain carries: where the provider names its
 * domains after interfaces and that interface has its IPv4 address but no link yet, the
 * domain is built from a listed one (ofi_iface.c) and opened as a rail marked down
 * (hints.down), which the virtual channels probe and use once a connection is made; its
 * card is published with the others. list: the provider's answer; returns the new count. */
static int open_down(const rmpi_net_env_t *env, const char *prov, int emul, const struct fi_info *list,
                     rmpi_ofi_rail_t **made, int n, int max)
{
    const char *names = rmpi_knobs.OFI_DOMAINS;
    if (!names || !*names || !strcmp(names, "*"))
        return n;
    for (const char *p = names; *p && n < max && n < RMPI_NET_MAX_RAILS;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char name[64];
        int skip = len == 0 || len >= sizeof name || rail_named(made, n, p, len);
        if (!skip) {
            memcpy(name, p, len);
            name[len] = 0;
        }
        p = end ? end + 1 : p + len;
        struct fi_info *fi = NULL;
        for (const struct fi_info *t = list; t && !skip && !fi; t = t->next)
            fi = rmpi_ofi_down_info(t, name);
        if (!fi)
            continue;
        made[n] = rail_open(env, fi, emul);
        fi_freeinfo(fi);
        rmpi_ofi_rail_t *r = made[n++];
        rmpi_ofi_xrc_note(prov, name, &r->xrc, r->xrc_why, sizeof r->xrc_why);
        r->opened_down = 1;
        r->pub.hints.down = 1;
        rmpi_warn("RMPI_OFI_DOMAINS names '%s', whose link is not up on rank %d of host %s; RMPI_OFI_PROVIDER=%s "
                  "does not list it, so it is opened on its address and used once it comes up (tried after "
                  "RMPI_RAIL_PROBE seconds, then less often up to every RMPI_RAIL_PROBE_MAX).",
                  name, env->rank, rmpi_topo_hostname(), prov);
    }
    return n;
}

/* Each name of RMPI_OFI_DOMAINS that no opened rail carries gets a warning naming it: the
 * provider lists only the domains usable now (tcp;ofi_rxm: interfaces whose link is up),
 * and open_down builds one only for an interface with an IPv4 address, so without a word
 * the job quietly ran on fewer rails than asked for. */
static void domains_missing(rmpi_ofi_rail_t *const *made, int n, const char *prov, int rank)
{
    const char *list = rmpi_knobs.OFI_DOMAINS;
    if (!list || !*list || !strcmp(list, "*"))
        return;
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len && !rail_named(made, n, p, len))
            rmpi_warn("RMPI_OFI_DOMAINS names '%.*s', which RMPI_OFI_PROVIDER=%s does not offer (or cannot use) on "
                      "rank %d of host %s (nor is it an interface with an IPv4 address that a listed domain of "
                      "the provider could stand for until its link comes up); the job runs without it "
                      "(`fi_info -p '%s'` lists the domains).",
                      (int)len, p, prov, rank, rmpi_topo_hostname(), prov);
        p = end ? end + 1 : p + len;
    }
}

static void rx_post_all(rmpi_ofi_rail_t *r, rmpi_ofi_buf_t *b, int n)
{
    for (int i = 0; i < n; i++) {
        int rc = rx_post(r, &b[i]);
        if (rc)
            rmpi_fatal("RMPI_OFI_PROVIDER=%s: posting receive buffers on domain %s failed on rank %d (%s).",
                       rmpi_ofi_prov(r), r->pub.hints.name, r->env.rank, fi_strerror(-rc));
    }
}

/* RMPI_OFI_CLASSES: the shared receive buffers in the size classes of RMPI_CHAN_CLASSES
 * (seed xrc-scalable sec. 3.2, one receive queue per size, the sender picking the smallest
 * that fits), each posted as a tagged receive for any peer with its class as the tag: the
 * provider has one untagged receive queue per endpoint (no fi_srx_context or scalable
 * endpoint with ofi_rxm or ofi_rxd here), so the tag is what lets the sender aim. Classes
 * stop at the largest frame (top: header + frame), and one of its size is added when they
 * stop below it. A class gets RMPI_CHAN_CLASS_BYTES of buffers, at least 4, and all of them
 * fit the provider's receive queue. The classes go in the card's kind: a peer with other
 * classes would send frames our buffers cannot hold, so the rails do not match. */
static void rx_classes(rmpi_ofi_rail_t *r, const struct fi_info *fi, size_t top, char *kind, size_t klen)
{
    uint32_t csize[RMPI_SHM_MAX_CLASSES];
    _Static_assert(RMPI_OFI_MAX_CLASSES == RMPI_SHM_MAX_CLASSES + 1, "room for the largest frame's class");
    int n = rmpi_shm_parse_classes(rmpi_knobs.CHAN_CLASSES, csize);
    if (n < 0)
        rmpi_fatal("RMPI_CHAN_CLASSES=%s: expected 1 to %d ascending buffer sizes from 64 bytes to 1m, "
                   "separated by commas (e.g. 256,1k,2k,4k,8k).",
                   rmpi_knobs.CHAN_CLASSES, RMPI_SHM_MAX_CLASSES);
    top = rmpi_ofi_rx_buf_bytes(top);
    r->ncls = 0;
    for (int k = 0; k < n && csize[k] < top; k++)
        r->cls_size[r->ncls++] = csize[k];
    r->cls_size[r->ncls++] = top;
    size_t qmax = fi->rx_attr->size ? fi->rx_attr->size / (size_t)r->ncls : 4096;
    size_t used = strlen(kind);
    r->st.ncls = r->ncls;
    for (int k = 0; k < r->ncls; k++) {
        r->st.cls_size[k] = (uint32_t)r->cls_size[k];
        size_t want = (size_t)rmpi_knobs.CHAN_CLASS_BYTES / r->cls_size[k];
        r->cls_n[k] = (int)RMPI_MIN(RMPI_MAX(want, (size_t)4), RMPI_MAX(qmax, (size_t)1));
        if (used < klen)
            used += (size_t)snprintf(kind + used, klen - used, "%c%zu", k ? ',' : '/', r->cls_size[k]);
    }
}

static rmpi_ofi_rail_t *rail_open(const rmpi_net_env_t *env, struct fi_info *fi, int emul)
{
    size_t inject = fi->tx_attr->inject_size;
    if (inject > 4096)
        inject = 4096;
    rmpi_ofi_rail_t *r = rmpi_xcalloc(1, sizeof *r + inject);
    r->pub.ops = &rmpi_ofi_ops;
    r->env = *env;
    const uint8_t *jk = rmpi_rt_job_key();
    if (!jk)
        rmpi_fatal("ofi: no job key (the process manager layer did not start).");
    uint8_t mac[RMPI_AUTH_MAC_BYTES];
    rmpi_auth_mac(jk, "rmpi-ofi-cookie", &env->world, sizeof env->world, mac);
    memcpy(&r->cookie, mac, sizeof r->cookie);
    r->info = fi_dupinfo(fi);
    r->inject = inject;
    r->mr_mode = fi->domain_attr->mr_mode;
    r->key_size = fi->domain_attr->mr_key_size;
    r->saw = (fi->tx_attr->msg_order & FI_ORDER_SAW) && (fi->rx_attr->msg_order & FI_ORDER_SAW);
    /* FI_REMOTE_COMM is a secondary capability, reported only when asked for, so whether
     * a provider reaches other nodes comes from the capability table. */
    r->loopback = fi->fabric_attr->name &&
                  (!strncmp(fi->fabric_attr->name, "127.", 4) || !strncmp(fi->fabric_attr->name, "::1", 3));
    r->local_only = !rmpi_ofi_reaches_nodes(fi->fabric_attr->prov_name) || r->loopback;
    r->regs.next = r->regs.prev = &r->regs;
    r->pend_tail = &r->pend;
    rmpi_ofi_peer_table_init(r);
    rmpi_net_hints_t *h = &r->pub.hints;
    snprintf(h->name, sizeof h->name, "ofi:%s", fi->domain_attr->name);
    if (fi->nic && fi->nic->link_attr && fi->nic->link_attr->speed)
        h->bw = fi->nic->link_attr->speed / 8;
    /* Emulated RDMA is write-mode rendezvous for the core's RMPI_RNDV_MODE=auto, as over tcp. */
    r->emul = emul;
    h->rdma_native = !emul;
    /* tcp;ofi_rxm's fi_write/fi_read are served by the target's progress, as tcp's are */
    h->rdma_by_target = emul || !rmpi_ofi_hardware(fi->fabric_attr->prov_name);
    /* tcp;ofi_rxm, 64 reads of 8 B-4 KiB in flight then a flush: 22-86 us a read against
     * 10-32 us as GETs in one message; one read alone 8.6-11.8 us against 11.6-15.6 */
    h->reads_by_msg = !emul && h->rdma_by_target;
    /* Atomics only where the target applies them inside its own progress (manual data
     * progress on a software provider: rxm runs them in our fi_cq_read), serialised with
     * what that process does to its window itself (net.h atomic_max). */
    r->atomics = !emul && (fi->caps & FI_ATOMIC) && fi->domain_attr->data_progress == FI_PROGRESS_MANUAL &&
                 h->rdma_by_target && !(r->mr_mode & FI_MR_LOCAL) && rmpi_knobs.OFI_ATOMIC != RMPI_OFI_ATOMIC_OFF;
    h->mr_cache = 1;
    h->tier = 1; /* chosen over RailMPI's tcp when both reach a peer */
    r->max_rma = fi->ep_attr->max_msg_size;
    size_t advised =
        rmpi_knobs.OFI_MAX_RMA > 0 ? (size_t)rmpi_knobs.OFI_MAX_RMA : rmpi_ofi_max_rma(fi->fabric_attr->prov_name);
    if (advised > 0 && advised < r->max_rma)
        r->max_rma = advised;
    /* one fi_read/fi_write (longer ones go in chunks, each posted as the one before
     * completes); a connection serves its requests in order */
    h->rdma_whole = emul ? 0 : r->max_rma;
    size_t maxmsg = fi->ep_attr->max_msg_size < RMPI_OFI_BUF_SIZE ? fi->ep_attr->max_msg_size : RMPI_OFI_BUF_SIZE;
    size_t eager = rmpi_ofi_eager_max(fi->fabric_attr->prov_name);
    if (eager > 1024 && eager - 64 < maxmsg) /* 64: room for the layer's own header */
        maxmsg = eager - 64;
    h->max_frame = maxmsg - sizeof(rmpi_ofi_hdr_t);
    h->max_inline = inject > sizeof(rmpi_ofi_hdr_t) ? inject - sizeof(rmpi_ofi_hdr_t) : 0;
    /* Frames from the caller's memory: unregistered buffers need a domain without FI_MR_LOCAL. */
    size_t zc = rmpi_knobs.OFI_ZCOPY >= 0 ? (size_t)rmpi_knobs.OFI_ZCOPY : rmpi_ofi_zcopy(fi->fabric_attr->prov_name);
    if (zc && !(r->mr_mode & FI_MR_LOCAL) && fi->tx_attr->iov_limit >= RMPI_NET_ZC_IOV)
        h->zc_min = zc > inject ? zc : inject + 1;
    h->scope = RMPI_SCOPE_INTER;
    /* src/net/net_mem.c, which the scale simulator reads too; the provider's own state per
     * peer is not known here */
    h->mem_per_peer = rmpi_ofi_peer_bytes();

    char what[160];
    int rc = fi_fabric(fi->fabric_attr, &r->fabric, NULL);
    if (rc) {
        snprintf(what, sizeof what, "fi_fabric failed for fabric %s", fi->fabric_attr->name);
        ofi_fail(env, what, rc);
    }
    rc = fi_domain(r->fabric, fi, &r->domain, NULL);
    if (rc) {
        snprintf(what, sizeof what, "fi_domain failed for domain %s", fi->domain_attr->name);
        ofi_fail(env, what, rc);
    }
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_DATA, /* buf: where a multi-receive frame lies */
                             .wait_obj = FI_WAIT_NONE,
                             .size = rmpi_knobs.OFI_CQ_SIZE > 0 ? (size_t)rmpi_knobs.OFI_CQ_SIZE : 0};
    rc = fi_cq_open(r->domain, &cqa, &r->cq, NULL);
    if (rc) {
        snprintf(what, sizeof what, "fi_cq_open failed on domain %s", fi->domain_attr->name);
        ofi_fail_sized(env, what, rc, rmpi_knobs.OFI_CQ_SIZE);
    }
    struct fi_av_attr ava = {.type = FI_AV_TABLE, .count = (size_t)env->size};
    rc = fi_av_open(r->domain, &ava, &r->av, NULL);
    if (rc) {
        snprintf(what, sizeof what, "fi_av_open failed on domain %s", fi->domain_attr->name);
        ofi_fail(env, what, rc);
    }
    rc = fi_endpoint(r->domain, fi, &r->ep, NULL);
    if (rc == 0)
        rc = fi_ep_bind(r->ep, &r->av->fid, 0);
    if (rc == 0)
        rc = fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV);
    int classes = rmpi_knobs.OFI_CLASSES && (fi->caps & FI_TAGGED) && rmpi_ofi_tagged(fi->fabric_attr->prov_name);
    r->mrecv = rc == 0 && !classes && rmpi_knobs.OFI_MRECV > 0 && (fi->caps & FI_MULTI_RECV) &&
               rmpi_ofi_mrecv(fi->fabric_attr->prov_name);
    if (r->mrecv) {
        /* A buffer is released once it cannot take a largest frame, so every frame fits. */
        size_t min = h->max_frame + sizeof(rmpi_ofi_hdr_t);
        if (fi_setopt(&r->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV, &min, sizeof min)) {
            rmpi_log(1, "ofi: %s refused FI_OPT_MIN_MULTI_RECV: single receive buffers", h->name);
            r->mrecv = 0;
        }
    }
    if (rc == 0)
        rc = fi_enable(r->ep);
    if (rc) {
        snprintf(what, sizeof what, "creating an RDM endpoint on domain %s failed", fi->domain_attr->name);
        ofi_fail_sized(env, what, rc, rmpi_knobs.OFI_CQ_SIZE);
    }
    unsigned char addr[200];
    size_t alen = sizeof addr;
    rc = fi_getname(&r->ep->fid, addr, &alen);
    if (rc) {
        snprintf(what, sizeof what, "fi_getname on domain %s failed", fi->domain_attr->name);
        ofi_fail(env, what, rc);
    }
    /* How RDMA is done is part of what must match: keys of one kind mean nothing to the other. */
    char kind[160];
    snprintf(kind, sizeof kind, "%s", emul ? "msg" : "rma");
    if (classes)
        rx_classes(r, fi, h->max_frame + sizeof(rmpi_ofi_hdr_t), kind, sizeof kind);
    int pre = snprintf(r->card, sizeof r->card, "%s|%s|%s|", fi->fabric_attr->name, fi->domain_attr->name, kind);
    if (pre < 0 || (size_t)pre + 2 * alen + 1 > sizeof r->card)
        rmpi_fatal("ofi: the address card of domain %s is too long.", fi->domain_attr->name);
    hex_encode(addr, alen, r->card + pre);

    if (r->ncls) {
        r->nrx = 0;
        for (int k = 0; k < r->ncls; k++)
            r->nrx += r->cls_n[k];
        r->rx_size = r->cls_size[r->ncls - 1];
    } else if (r->mrecv) {
        r->nrx = RMPI_OFI_MRECV_BUFS;
        r->rx_size = rmpi_ofi_mrecv_buf_bytes((size_t)rmpi_knobs.OFI_MRECV, h->max_frame + sizeof(rmpi_ofi_hdr_t));
    } else {
        long long want = rmpi_knobs.OFI_RX_BUFS;
        r->nrx = (int)(want < 1 ? 1 : want > 4096 ? 4096 : want);
        if (fi->rx_attr->size && (size_t)r->nrx > fi->rx_attr->size)
            r->nrx = (int)fi->rx_attr->size;
        /* one class, the largest frame's size: every frame fits, none needs more (16 KiB
         * + 64 on tcp;ofi_rxm, whose eager bound caps frames, instead of 64 KiB) */
        r->rx_size = rmpi_ofi_rx_buf_bytes(h->max_frame + sizeof(rmpi_ofi_hdr_t));
    }
    if (r->ncls) {
        r->st.mem[RMPI_NET_CHAN_SHARED] = 0;
        for (int k = 0; k < r->ncls; k++) {
            rmpi_ofi_buf_t *b = slab_new(r, r->cls_n[k], RMPI_OFI_RX, FI_RECV, r->cls_size[k]);
            for (int i = 0; i < r->cls_n[k]; i++)
                b[i].cls = k;
            r->rx = r->rx ? r->rx : b;
            r->st.mem[RMPI_NET_CHAN_SHARED] += (size_t)r->cls_n[k] * r->cls_size[k];
            rx_post_all(r, b, r->cls_n[k]);
        }
        r->st.mem_peak[RMPI_NET_CHAN_SHARED] = r->st.mem[RMPI_NET_CHAN_SHARED];
    } else {
        r->rx = slab_new(r, r->nrx, RMPI_OFI_RX, FI_RECV, r->rx_size);
        r->st.mem[RMPI_NET_CHAN_SHARED] = r->st.mem_peak[RMPI_NET_CHAN_SHARED] = (size_t)r->nrx * r->rx_size;
        rx_post_all(r, r->rx, r->nrx);
    }
    rmpi_ofi_chan_open(r);
    return r;
}

static int rail_cmp(const void *a, const void *b)
{
    const rmpi_ofi_rail_t *x = *(rmpi_ofi_rail_t *const *)a, *y = *(rmpi_ofi_rail_t *const *)b;
    return strncmp(x->card, y->card,
                   card_prefix(x->card) > card_prefix(y->card) ? card_prefix(x->card) : card_prefix(y->card));
}

static int ofi_open(const rmpi_net_env_t *env, rmpi_rail_t **out, int max)
{
    /* Providers size their queues from the universe size, read at their first fi_getinfo. */
    char usz[24];
    snprintf(usz, sizeof usz, "%lld",
             rmpi_knobs.OFI_UNIVERSE_SIZE > 0 ? rmpi_knobs.OFI_UNIVERSE_SIZE : (long long)env->size);
    rmpi_rt_setenv_default("FI_UNIVERSE_SIZE", usz);
    rmpi_ofi_eager_env();
    rmpi_ofi_mr_env();
    rmpi_ofi_xrc_env();
    if (env->size > (int)RMPI_OFI_RANK_MASK + 1)
        rmpi_fatal("ofi: %d ranks; the frame header names at most %u (RMPI_NET=tcp has no such limit).", env->size,
                   RMPI_OFI_RANK_MASK + 1);
#ifdef __GLIBC__
    /* ofi_rxm/tcp allocate and free per message; at the top of the heap glibc gave those
     * pages back to the kernel each time (128 KiB threshold) and the next message faulted
     * them in again: 3 page faults per 16 KiB ping-pong, 11.4 us where 8.0 us without. */
    if (rmpi_knobs.OFI_MALLOC_TRIM > 0 && !rmpi_rt_env("MALLOC_TRIM_THRESHOLD_"))
        mallopt(M_TRIM_THRESHOLD, rmpi_knobs.OFI_MALLOC_TRIM > INT_MAX ? INT_MAX : (int)rmpi_knobs.OFI_MALLOC_TRIM);
    /* Setting a threshold turns off glibc's dynamic mmap threshold (which rises to the size
     * of each mmapped block freed), so every block of 128 KiB or more was an mmap, its pages
     * faulted in and an munmap again: a 1 MiB accumulate over tcp;ofi_rxm paid that for its
     * message on the origin and on the target (159 munmaps per 108 operations, each 100-170
     * us). The heap serves them up to what the dynamic threshold would have reached. */
    if (rmpi_knobs.OFI_MALLOC_TRIM > 0 && !rmpi_rt_env("MALLOC_MMAP_THRESHOLD_"))
        mallopt(M_MMAP_THRESHOLD, (int)RMPI_MIN(rmpi_knobs.OFI_MALLOC_TRIM, 32ll << 20));
#endif
    int auto_mode = rmpi_knobs.NET == RMPI_NET_AUTO;
    char why[512];
    if (!rmpi_ofi_choose(auto_mode, chosen, sizeof chosen, why, sizeof why)) {
        rmpi_log(1, "ofi: not used between nodes: %s", why);
        if (auto_mode)
            return 0;
        rmpi_fatal("RMPI_NET=ofi on rank %d: %s. `fi_info -t FI_EP_RDM` lists the providers; set "
                   "RMPI_OFI_PROVIDER or RMPI_NET=tcp.",
                   env->rank, why);
    }
    rmpi_log(1, "ofi: using %s (%s)", chosen, why);
    const char *prov = chosen;
    /* FI_RMA when the provider has it (and RMPI_OFI_RMA allows), else messages only: get/put
     * are then emulated with control frames (ofi_emul.c). */
    int emul = rmpi_knobs.OFI_RMA == RMPI_OFI_RMA_EMULATE;
    struct fi_info *list = NULL;
    /* FI_ATOMIC too when offered (MPI accumulates as libfabric atomics, src/rma/atomic.c),
     * unless (auto) the provider then drops the write orderings it has without it:
     * tcp;ofi_rxm with FI_ATOMIC no longer reports FI_ORDER_WAW and FI_ORDER_SAW, which the
     * dedicated rings (ofi_chan.c) and a put's order before our next message (r->saw) need;
     * the rings are the per-peer channels, worth more than atomics that are already ahead of
     * Open MPI as messages (docs/results/osc.md). RMPI_OFI_ATOMIC=on takes them anyway. */
    int rc = emul || rmpi_knobs.OFI_ATOMIC == RMPI_OFI_ATOMIC_OFF ? -FI_ENODATA : getinfo(prov, 2, &list);
    if (rc == 0 && rmpi_knobs.OFI_ATOMIC == RMPI_OFI_ATOMIC_AUTO && !writes_ordered(list)) {
        struct fi_info *plain = NULL;
        if (getinfo(prov, 1, &plain) == 0 && writes_ordered(plain)) {
            rmpi_log(1,
                     "ofi: %s without FI_ATOMIC: with it the provider drops FI_ORDER_WAW/SAW "
                     "(RMPI_OFI_ATOMIC=on takes atomics without the dedicated rings)",
                     prov);
            fi_freeinfo(list);
            list = plain;
        } else {
            fi_freeinfo(plain);
        }
    }
    if (rc == -FI_ENODATA && !emul)
        rc = getinfo(prov, 1, &list);
    if (rc == -FI_ENODATA) {
        rc = getinfo(prov, 0, &list);
        emul = 1;
    }
    if (rc) {
        /* Tell "no such provider" from "provider without what we need". */
        struct fi_info *any = fi_allocinfo(), *l2 = NULL;
        any->fabric_attr->prov_name = strdup(prov);
        int rc2 = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), NULL, NULL, 0, any, &l2);
        fi_freeinfo(any);
        fi_freeinfo(l2);
        if (rc2)
            rmpi_fatal("RMPI_OFI_PROVIDER=%s: no such provider on this host (fi_getinfo: %s); rank %d cannot use "
                       "RMPI_NET=ofi. `fi_info -l` lists the providers.",
                       prov, fi_strerror(-rc), env->rank);
        rmpi_fatal("RMPI_OFI_PROVIDER=%s: the provider offers no reliable-datagram endpoint (FI_EP_RDM) with "
                   "FI_MSG and in-order sends (FI_ORDER_SAS) on rank %d (fi_getinfo: %s); for tcp use "
                   "\"tcp;ofi_rxm\".",
                   prov, env->rank, fi_strerror(-rc));
    }
    rmpi_ofi_rail_t *made[RMPI_NET_MAX_RAILS];
    int n = 0;
    for (struct fi_info *fi = list; fi && n < max && n < RMPI_NET_MAX_RAILS; fi = fi->next) {
        const char *dom = fi->domain_attr->name ? fi->domain_attr->name : "?";
        /* One rail per domain; per device where verbs lists its RC and XRC domains
         * ("-xrc") apart: the first listed is the one asked for (ofi_xrc.c). */
        const char *names[RMPI_NET_MAX_RAILS];
        for (int i = 0; i < n; i++)
            names[i] = made[i]->info->domain_attr->name;
        if (!rmpi_ofi_xrc_new_rail(prov, dom, names, n, rmpi_knobs.OFI_XRC) || !domain_wanted(dom))
            continue;
        uint64_t mm = fi->domain_attr->mr_mode;
        if (!emul && !(mm & FI_MR_VIRT_ADDR) && ((mm & FI_MR_PROV_KEY) || fi->domain_attr->mr_key_size < 8)) {
            rmpi_warn("ofi: domain %s of %s wants offset addressing with %s; not supported yet, skipped.", dom, prov,
                      (mm & FI_MR_PROV_KEY) ? "provider keys" : "keys shorter than 8 bytes");
            continue;
        }
        made[n] = rail_open(env, fi, emul);
        rmpi_ofi_xrc_note(prov, dom, &made[n]->xrc, made[n]->xrc_why, sizeof made[n]->xrc_why);
        rmpi_log(1, "ofi: rail %s xrc: %s", made[n]->pub.hints.name, made[n]->xrc_why);
        n++;
    }
    n = open_down(env, prov, emul, list, made, n, max);
    fi_freeinfo(list);
    domains_missing(made, n, prov, env->rank);
    if (n == 0)
        rmpi_fatal("RMPI_OFI_PROVIDER=%s: no usable domain on rank %d%s%s.", prov, env->rank,
                   *rmpi_knobs.OFI_DOMAINS ? " among RMPI_OFI_DOMAINS=" : "", rmpi_knobs.OFI_DOMAINS);
    /* With a second rail to move a stripe to, reads go through bounce buffers where a
     * connection outlives a cut (rmpi_ofi_rdma_orphan says why); with one there is nowhere
     * to move it, and verbs-like providers fail the read themselves. Whether a given peer
     * has a second rail is decided at its first read (ofi_rdma.c bounce_to). */
    for (int i = 0; i < n; i++) {
        made[i]->bounce = n > 1 && !emul && !(made[i]->mr_mode & FI_MR_LOCAL) && rmpi_ofi_lingers(prov);
        made[i]->pub.hints.lingers = made[i]->bounce;
    }
    /* Sorted by card, so two peers list their common rails in the same order. */
    qsort(made, (size_t)n, sizeof *made, rail_cmp);
    loop_card[0] = 0;
    for (int i = 0; i < n && !*rmpi_knobs.OFI_DOMAINS; i++)
        if (made[i]->loopback && !loop_card[0])
            memcpy(loop_card, made[i]->card, sizeof loop_card);
    for (int i = 0; i < n; i++) {
        char key[48];
        snprintf(key, sizeof key, "ofi-%d-%d", env->rank, i);
        if (rmpi_pmi_put(key, made[i]->card))
            rmpi_fatal("ofi: rank %d could not publish its libfabric address (%s) through PMI.", env->rank, key);
        rmpi_log(1, "ofi: rank %d rail %s card %s mr_mode %#llx%s", env->rank, made[i]->pub.hints.name, made[i]->card,
                 (unsigned long long)made[i]->mr_mode, emul ? ", RDMA emulated with messages" : "");
        out[i] = &made[i]->pub;
    }
    return n;
}

/* ---- close, describe ---- */

static void ofi_close(rmpi_rail_t *rail)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    r->closing = 1;
    uint64_t until = rmpi_time_ns() + 2000000000ull;
    while ((r->pend || r->tx_out > 0 || r->stash_n) && rmpi_time_ns() < until)
        ofi_progress(rail);
    /* ofi_rxm closes a connection's endpoint before flushing the CQ, and a receive still
     * queued there is reposted on the closed endpoint (a crash in fi_close, seen on verbs;
     * github.com/ofiwg/libfabric issue #11828): let its own progress take in what peers still send first. */
    for (uint64_t calm = rmpi_time_ns(); rmpi_time_ns() - calm < 50000000ull && rmpi_time_ns() < until;)
        if (ofi_progress(rail) > 0)
            calm = rmpi_time_ns();
    for (rmpi_ofi_ctx_t *c = r->pend; c; c = c->next) /* frames never posted leave the count with the rail */
        if (c->kind == RMPI_OFI_TX || c->kind == RMPI_OFI_RING)
            buf_unhold((rmpi_ofi_buf_t *)c);
    if (r->stat_stale)
        rmpi_log(1, "ofi: rank %d dropped %llu frame(s) of connections given up on %s", r->env.rank,
                 (unsigned long long)r->stat_stale, r->pub.hints.name);
    if (r->orphans) {
        /* libfabric 1.17 crashed in fi_close(ep) with a read in flight on a cut link (the
         * same flush as fi_av_remove's, README.md), so the rail's libfabric objects and
         * every buffer they may still write (bounce buffers, receive slabs) are left to the
         * process's exit. */
        rmpi_log(1, "ofi: rank %d leaves %s open: %ld read(s) given up are not finished by libfabric", r->env.rank,
                 r->pub.hints.name, r->orphans);
        return;
    }
    fi_close(&r->ep->fid);
    rmpi_ofi_emul_close(r);
    rmpi_ofi_chan_close(r);
    while (r->regs.next != &r->regs)
        rmpi_ofi_dereg(r, r->regs.next);
    for (int i = 0; i < r->nsinks; i++)
        munmap(r->sinks[i].mem, r->sinks[i].len);
    fi_close(&r->av->fid);
    fi_close(&r->cq->fid);
    fi_close(&r->domain->fid);
    fi_close(&r->fabric->fid);
    while (r->slabs) {
        struct slab *s = r->slabs;
        r->slabs = s->next;
        free(s->mem);
        free(s->bufs);
        free(s);
    }
    rmpi_ofi_rdma_free_all(r);
    while (r->zc_all) {
        rmpi_ofi_zc_t *z = r->zc_all;
        r->zc_all = z->all;
        free(z);
    }
    fi_freeinfo(r->info);
    for (int i = -1; (i = rmpi_ofi_peer_next(r, i)) >= 0;) {
        rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, i);
        free(p->why);
        while (p->parked) {
            rmpi_ofi_park_t *k = p->parked;
            p->parked = k->next;
            free(k);
        }
    }
    rmpi_ofi_peer_table_free(r);
    free(r);
}

static void ofi_describe(rmpi_rail_t *rail, void *file)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    struct fi_info *fi = r->info;
    uint64_t m = r->mr_mode;
    fprintf(file, "    provider %s, fabric %s, domain %s, %s progress\n", fi->fabric_attr->prov_name,
            fi->fabric_attr->name, fi->domain_attr->name,
            fi->domain_attr->data_progress == FI_PROGRESS_MANUAL ? "manual" : "auto");
    fprintf(file, "    mr_mode%s%s%s%s%s%s, key %zu bytes, inject %zu\n", m ? "" : " none",
            (m & FI_MR_LOCAL) ? " LOCAL" : "", (m & FI_MR_VIRT_ADDR) ? " VIRT_ADDR" : " (offsets)",
            (m & FI_MR_ALLOCATED) ? " ALLOCATED" : "", (m & FI_MR_PROV_KEY) ? " PROV_KEY" : "",
            (m & FI_MR_ENDPOINT) ? " ENDPOINT" : "", r->key_size, r->inject);
    /* src/chan: the shared kind is these buffers; the dedicated kind a ring per peer that
     * has one (ofi_chan.c), which RMPI_CHANNELS and the selector give out. */
    if (r->ncls) {
        fprintf(file, "    channels %s: shared by every peer: size classes chosen by the sender (tagged receives):",
                rmpi_knob_text("CHANNELS"));
        for (int k = 0; k < r->ncls; k++)
            fprintf(file, "%s %d x %zu bytes", k ? "," : "", r->cls_n[k], r->cls_size[k]);
    } else if (r->mrecv)
        fprintf(file,
                "    channels %s: shared by every peer: %d multi-receive buffers (FI_MULTI_RECV) of %zu bytes, "
                "each frame taking its own size",
                rmpi_knob_text("CHANNELS"), r->nrx, r->rx_size);
    else
        fprintf(file, "    channels %s: shared by every peer: %d receive buffers of %zu bytes, one frame each%s",
                rmpi_knob_text("CHANNELS"), r->nrx, r->rx_size,
                rmpi_knobs.OFI_CLASSES     ? " (RMPI_OFI_CLASSES: no working FI_TAGGED with this provider)"
                : rmpi_knobs.OFI_MRECV > 0 ? " (no FI_MULTI_RECV with this provider)"
                                           : " (RMPI_OFI_MRECV=0)");
    if (r->ring_ok)
        fprintf(file,
                "; dedicated: a %zu-byte ring (%u cells) per peer that has one, written with fi_write; now %zu "
                "bytes shared + %zu dedicated\n",
                r->ring_bytes, r->ring_ncells, r->st.mem[RMPI_NET_CHAN_SHARED], r->st.mem[RMPI_NET_CHAN_DEDICATED]);
    else
        fprintf(file, "; no dedicated channels (%s)\n", r->ring_why);
    if (rail->hints.zc_min)
        fprintf(file, "    nonblocking eager sends of %zu bytes and more go from the user's buffer (send_zc)\n",
                rail->hints.zc_min);
    else
        fprintf(file, "    every frame is copied (no send_zc: %s)\n",
                (m & FI_MR_LOCAL) ? "FI_MR_LOCAL" : "RMPI_OFI_ZCOPY or the capability table says so");
    fprintf(file, "    xrc: %s\n", r->xrc_why);
    if (r->idle)
        fprintf(file, "    reaches no rank (%s): not polled\n",
                r->local_only ? "no other rank on this node" : "all talk over the loopback domain");
    if (r->emul)
        fprintf(file, "    RDMA emulated with messages (%s); %s\n",
                rmpi_knobs.OFI_RMA == RMPI_OFI_RMA_EMULATE ? "RMPI_OFI_RMA=emulate" : "no FI_RMA",
                r->local_only ? "reaches ranks of this node only" : "reaches other nodes");
    else
        fprintf(file, "    writes %s; %s\n",
                r->saw ? "ordered before later sends (FI_ORDER_SAW)" : "delivery-complete (no FI_ORDER_SAW)",
                r->local_only ? "reaches ranks of this node only" : "reaches other nodes");
}

/* RMPI_REPORT: whether the rail's connections are per node (XRC) or per process, and why:
 * a fact of the domain, the same for every peer; and the peer table's size, which grows
 * with the peers contacted (rmpi_ofi_peer_touch), never with the job. */
static void ofi_rail_facts(rmpi_rail_t *rail, int json, char *buf, size_t len)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    if (json) /* domain names and reasons hold no quote or backslash */
        snprintf(buf, len,
                 "\"xrc\": %s, \"xrc_why\": \"%s\", \"peers_touched\": %d, \"peer_chunks\": %d, "
                 "\"peer_table_bytes\": %zu",
                 r->xrc ? "true" : "false", r->xrc_why, r->peers_touched, r->peer_chunks, rmpi_ofi_peer_table_bytes(r));
    else
        snprintf(buf, len, "xrc: %s; peer state: %d of %d ranks contacted, %zu bytes (%d chunks of %d)", r->xrc_why,
                 r->peers_touched, r->env.size, rmpi_ofi_peer_table_bytes(r), r->peer_chunks, RMPI_OFI_PEER_CHUNK);
}

const struct rmpi_net_ops rmpi_ofi_ops = {
    .version = RMPI_NET_OPS_VERSION,
    .name = "ofi",
    .open = ofi_open,
    .ready = ofi_ready,
    .reaches = ofi_reaches,
    .send = ofi_send,
    .send_zc = ofi_send_zc,
    .mr_reg = rmpi_ofi_mr_reg,
    .mr_dereg = rmpi_ofi_mr_dereg,
    .mr_retire = rmpi_ofi_mr_retire,
    .get = rmpi_ofi_get,
    .put = rmpi_ofi_put,
    .atomic_max = rmpi_ofi_atomic_max,
    .atomic = rmpi_ofi_atomic,
    .progress = ofi_progress,
    .close = ofi_close,
    .describe = ofi_describe,
    .rail_facts = ofi_rail_facts,
    .chan_kind = rmpi_ofi_chan_kind,
    .chan_switch = rmpi_ofi_chan_switch,
    .chan_stats = rmpi_ofi_chan_stats,
    .watch = ofi_watch,
    .queued = ofi_queued,
    .backlog = ofi_backlog,
    .abandon = ofi_abandon,
    .rejoin = ofi_rejoin,
};
