/* ofi: the dedicated channel kind over libfabric and the switch between kinds (src/chan).
 *
 * Shared: every peer's frames land in the rail's multi-receive buffers (ofi_ops.c).
 * Dedicated: the receiver gives a peer a ring in its own memory (shm.h's 16-byte cells),
 * registered for remote writes; the peer writes each frame into it with fi_write and then
 * publishes it by a second write of the cell's stamp (one write's bytes may land in any
 * order; FI_ORDER_WAW, required, puts the stamp after them). The receiver polls the stamps
 * of its rings only and gives its read position back with LINK_CREDIT link frames every
 * quarter ring (outside the pending queue, so two peers with full rings cannot wait on each
 * other's credits). This is the adaptive-transport-selection seed's RDMA fast path (sec.
 * 3.1, RC-RDMA); its J1-J5 switch (sec. 3.4) runs as on shm: the receiver readies the new
 * channel and sends CHAN_REQ (J1-J2), the sender answers CHAN_MARK as its last frame on the
 * old one and moves (J3-J4), the receiver frees the old ring once the marker is delivered
 * (J5); the receiver's state per sender and the counting are ../chan_switch.c's, shared
 * with shm. Order needs no holding back here: ring frames carry the same per-(rail, peer)
 * sequence numbers as messages, and the receiver already delivers in that order (parking
 * early frames), so a frame of the new channel that arrives first waits for the marker. */
#include "ofi.h"
#include "../net_mem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHARED RMPI_NET_CHAN_SHARED
#define DEDICATED RMPI_NET_CHAN_DEDICATED
#define CELL RMPI_SHM_CELL

/* CHAN_REQ (32 bytes) and CHAN_MARK (8 bytes), docs/wire/ofi.md. */
typedef struct wire_chan {
    uint8_t kind, to;
    uint16_t zero;
    uint32_t id, ncells, zero2;
    uint64_t raddr, rkey;
} wire_chan_t;

static uint64_t cells_of(size_t bytes) { return (bytes + CELL - 1) / CELL; }

void rmpi_ofi_chan_open(rmpi_ofi_rail_t *r)
{
    r->policy = rmpi_knobs.CHANNELS;
    /* rings grows with the rings in use (chan_start), not with the job; a peer's state is
     * zeroed when first touched: SHARED both ways */
    _Static_assert(SHARED == 0, "a new peer's channel is shared");
    /* A ring frame with its cell header fits a quarter ring (the writer never waits on a
     * reader that gives credit every quarter) and a pool buffer. Longer frames (udp;ofi_rxd's
     * reach 64 KiB) go through the shared buffers even for a dedicated peer: they carry the
     * same sequence numbers as ring frames, which the receiver delivers in. */
    size_t frame = RMPI_MIN(RMPI_SHM_HDR + sizeof(rmpi_ofi_hdr_t) + r->pub.hints.max_frame, (size_t)RMPI_OFI_BUF_SIZE);
    r->ring_max_frame = frame;
    r->ring_bytes = rmpi_ofi_ring_bytes((size_t)rmpi_knobs.OFI_RING_SIZE, frame, &r->ring_ncells);
    uint64_t order = r->info->tx_attr->msg_order & r->info->rx_attr->msg_order;
    r->ring_why = r->emul ? "RDMA emulated with messages"
                  : !(order & FI_ORDER_WAW) || !(order & FI_ORDER_SAW)
                      ? "writes not ordered (FI_ORDER_WAW, FI_ORDER_SAW)"
                  : r->inject < sizeof(uint32_t) ? "no fi_inject_write"
                                                 : NULL;
    r->ring_ok = !r->ring_why;
    rmpi_net_chsw_force_init(&r->force, r->env.rank, 7);
}

static void ring_free(rmpi_ofi_rail_t *r, rmpi_ofi_ring_t *g)
{
    uint64_t t0 = rmpi_time_ns();
    rmpi_ofi_dereg(r, g->reg);
    free(g->rd.ring);
    r->st.mem[DEDICATED] -= g->bytes;
    r->st.switch_ns += rmpi_time_ns() - t0;
    free(g);
}

void rmpi_ofi_chan_close(rmpi_ofi_rail_t *r)
{
    for (int i = 0; i < r->nrings; i++) {
        rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, r->rings[i]);
        ring_free(r, p->ring);
        p->ring = NULL;
    }
    r->nrings = 0;
    free(r->rings);
    free(r->stamps);
    r->rings = NULL;
    r->rings_cap = 0;
    r->stamps = NULL;
}

/* ---- send side ---- */

static uint64_t cell_addr(const rmpi_ofi_peer_t *p, uint64_t pos)
{
    return p->tx_raddr + (pos & (p->tx_ncells - 1)) * CELL;
}

/* A 4-byte word into the peer's ring: 0 or -FI_EAGAIN. */
static int put_word(rmpi_ofi_rail_t *r, rmpi_ofi_peer_t *p, uint64_t raddr, uint32_t v)
{
    uint32_t w = htole32(v);
    uint64_t t0 = 0;
    ssize_t rc;
    while ((rc = fi_inject_write(r->ep, &w, sizeof w, p->addr, raddr, p->tx_rkey)) == -FI_EAGAIN &&
           rmpi_ofi_push(r, &t0))
        ;
    return (int)rc;
}

/* A stamp that must follow bytes already written: posted now, or first thing later. */
static void put_stamp(rmpi_ofi_rail_t *r, int peer, uint64_t pos)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, peer);
    uint64_t raddr = cell_addr(p, pos);
    uint32_t stamp = rmpi_shm_stamp(pos);
    if (!r->nstamp) {
        int rc = put_word(r, p, raddr, stamp);
        if (rc == 0)
            return;
        if (rc != -FI_EAGAIN) {
            rmpi_log(1, "ofi: a ring stamp to rank %d on %s failed: %s", peer, r->pub.hints.name, fi_strerror(-rc));
            return; /* the connection fails: its CQ reports the write before it */
        }
    }
    if (r->nstamp == r->stamp_cap) {
        r->stamp_cap = r->stamp_cap ? 2 * r->stamp_cap : 8;
        r->stamps = rmpi_xrealloc(r->stamps, (size_t)r->stamp_cap * sizeof *r->stamps);
    }
    r->stamps[r->nstamp++] = (rmpi_ofi_stamp_t){peer, p->gen, stamp, raddr};
}

static void stamps_flush(rmpi_ofi_rail_t *r)
{
    int i = 0;
    while (i < r->nstamp) {
        rmpi_ofi_stamp_t *s = &r->stamps[i];
        rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, s->peer);
        if (s->gen == p->gen && put_word(r, p, s->raddr, s->stamp) == -FI_EAGAIN)
            break;
        i++;
    }
    memmove(r->stamps, r->stamps + i, (size_t)(r->nstamp - i) * sizeof *r->stamps);
    r->nstamp -= i;
}

/* Room for a frame of need cells at the write position, padding to the ring's end first
 * when it would wrap (a SKIP cell, as on shm). 0; 1: no room until the reader's credit;
 * -FI_EAGAIN: the provider refused the padding (nothing written). */
static int ring_reserve(rmpi_ofi_rail_t *r, int peer, uint64_t need)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, peer);
    uint64_t pos = p->tx_w & (p->tx_ncells - 1);
    uint64_t skip = pos + need > p->tx_ncells ? p->tx_ncells - pos : 0;
    if (p->tx_w + skip + need - p->tx_r > p->tx_ncells)
        return 1;
    if (skip) {
        int rc = put_word(r, p, cell_addr(p, p->tx_w) + 4,
                          (uint32_t)(skip * CELL - RMPI_SHM_HDR) | ((uint32_t)RMPI_SHM_SKIP << 24));
        if (rc)
            return rc;
        put_stamp(r, peer, p->tx_w);
        p->tx_w += skip;
    }
    return 0;
}

/* After the frame's bytes are posted: its sequence number is used, its stamp follows. */
static void ring_commit(rmpi_ofi_rail_t *r, int peer, uint64_t need, size_t frame)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, peer);
    p->tx_seq++;
    put_stamp(r, peer, p->tx_w);
    p->tx_w += need;
    r->st.tx_bytes[DEDICATED] += frame;
}

int rmpi_ofi_ring_inject(rmpi_ofi_rail_t *r, int peer, size_t total)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, peer);
    uint64_t need = cells_of(RMPI_SHM_HDR + total);
    int rc = ring_reserve(r, peer, need);
    if (rc)
        return rc;
    char *c = r->scratch;
    uint32_t lt = htole32((uint32_t)total | ((uint32_t)RMPI_SHM_DATA << 24));
    memcpy(c + 4, &lt, sizeof lt);
    rmpi_ofi_set_seq(c + RMPI_SHM_HDR, p);
    uint64_t t0 = 0;
    ssize_t w;
    while ((w = fi_inject_write(r->ep, c + 4, 4 + total, p->addr, cell_addr(p, p->tx_w) + 4, p->tx_rkey)) ==
               -FI_EAGAIN &&
           rmpi_ofi_push(r, &t0))
        ;
    if (w)
        return (int)w;
    ring_commit(r, peer, need, total - sizeof(rmpi_ofi_hdr_t));
    return 0;
}

int rmpi_ofi_ring_post(rmpi_ofi_rail_t *r, rmpi_ofi_buf_t *b)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, b->peer);
    size_t total = b->len - RMPI_SHM_HDR;
    uint64_t need = cells_of(b->len);
    int rc = ring_reserve(r, b->peer, need);
    if (rc)
        return rc;
    uint32_t lt = htole32((uint32_t)total | ((uint32_t)RMPI_SHM_DATA << 24));
    memcpy(b->data + 4, &lt, sizeof lt);
    rmpi_ofi_set_seq(b->data + RMPI_SHM_HDR, p);
    b->ctx.kind = RMPI_OFI_TX; /* completes as a send: the buffer goes back */
    ssize_t w =
        fi_write(r->ep, b->data + 4, b->len - 4, b->desc, p->addr, cell_addr(p, p->tx_w) + 4, p->tx_rkey, &b->ctx.fctx);
    if (w) {
        b->ctx.kind = RMPI_OFI_RING;
        return (int)w;
    }
    r->tx_out++;
    ring_commit(r, b->peer, need, total - sizeof(rmpi_ofi_hdr_t));
    return 0;
}

/* ---- receive side ---- */

static void send_ctl(rmpi_ofi_rail_t *r, int peer, const wire_chan_t *c, size_t len)
{
    struct iovec iov = {(void *)c, len};
    int rc = rmpi_ofi_frame_send(r, peer, &iov, 1, RMPI_OFI_CTRL);
    if (rc)
        rmpi_log(1, "ofi: rank %d: a channel control frame to rank %d on %s failed: %s", r->env.rank, peer,
                 r->pub.hints.name, fi_strerror(-rc));
}

/* J1: ready the new channel and ask the peer to move; it completes when the peer's
 * CHAN_MARK is delivered. */
static int chan_start(rmpi_ofi_rail_t *r, int peer, int to)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, peer);
    if ((to == DEDICATED && p->ring) /* the last one is not freed yet */ || rmpi_net_chsw_start(&p->sw, to))
        return 1;
    wire_chan_t c = {.kind = RMPI_OFI_CHAN_REQ, .to = (uint8_t)to};
    if (to == DEDICATED) {
        uint64_t t0 = rmpi_time_ns();
        rmpi_ofi_ring_t *g = rmpi_xcalloc(1, sizeof *g);
        void *mem = NULL;
        if (posix_memalign(&mem, 4096, r->ring_bytes)) {
            free(g);
            p->sw = (rmpi_net_chsw_t){SHARED, 0};
            return -1;
        }
        memset(mem, 0, r->ring_bytes); /* zero stamps, and the pages in place before the peer writes */
        int rc = rmpi_ofi_reg(r, mem, r->ring_bytes, FI_REMOTE_WRITE, &g->reg);
        if (rc) {
            rmpi_log(1, "ofi: registering a %zu-byte ring for rank %d on %s failed: %s; it stays shared.",
                     r->ring_bytes, peer, r->pub.hints.name, fi_strerror(-rc));
            free(mem);
            free(g);
            p->sw = (rmpi_net_chsw_t){SHARED, 0};
            return -1;
        }
        g->rd.ring = mem;
        g->rd.ncells = r->ring_ncells;
        g->rd.rdma = 1; /* the peer writes by RDMA: no padding, no cell cleared ahead (shm.h) */
        g->bytes = r->ring_bytes;
        g->id = ++r->ring_ids;
        g->peer = peer;
        if (r->nrings == r->rings_cap) {
            int cap = r->rings_cap ? 2 * r->rings_cap : 8;
            int *rings = realloc(r->rings, (size_t)cap * sizeof *rings);
            if (!rings) {
                rmpi_ofi_dereg(r, g->reg);
                free(mem);
                free(g);
                p->sw = (rmpi_net_chsw_t){SHARED, 0};
                return -1;
            }
            r->rings = rings;
            r->rings_cap = cap;
        }
        p->ring = g;
        r->rings[r->nrings++] = peer;
        r->st.mem[DEDICATED] += g->bytes;
        r->st.mem_peak[DEDICATED] = RMPI_MAX(r->st.mem_peak[DEDICATED], r->st.mem[DEDICATED]);
        r->st.rings_asked++;
        r->st.switch_ns += rmpi_time_ns() - t0;
        c.id = htole32(g->id);
        c.ncells = htole32(r->ring_ncells);
        c.raddr = htole64((uint64_t)(uintptr_t)g->rd.ring->cells);
        c.rkey = htole64(fi_mr_key(g->reg->mr));
    }
    send_ctl(r, peer, &c, sizeof c);
    return 0;
}

/* J3-J4 at the sender: the marker closes the old channel, every later frame takes the new
 * one. The marker is a message whichever way the frames went: its sequence number is what
 * orders it. */
static void chan_move(rmpi_ofi_rail_t *r, int src, const wire_chan_t *c)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, src);
    int to = c->to;
    if (to == DEDICATED) {
        uint32_t ncells = le32toh(c->ncells);
        if (!r->ring_ok || ncells < 16 || (ncells & (ncells - 1)) || (uint64_t)ncells / 4 * CELL < r->ring_max_frame)
            rmpi_fatal("rank %d offered rank %d a ring of %u cells on %s, which it cannot write (rings need the same "
                       "RailMPI build and provider on both sides).",
                       src, r->env.rank, ncells, r->pub.hints.name);
        p->tx_ring_id = le32toh(c->id);
        p->tx_ncells = ncells;
        p->tx_raddr = le64toh(c->raddr);
        p->tx_rkey = le64toh(c->rkey);
        if (!(r->mr_mode & FI_MR_VIRT_ADDR))
            p->tx_raddr -= p->tx_rkey & RMPI_OFI_KEY_ADDR_MASK;
        p->tx_w = p->tx_r = 0;
    }
    wire_chan_t m = {.kind = RMPI_OFI_CHAN_MARK, .to = (uint8_t)to, .id = c->id};
    send_ctl(r, src, &m, 8);
    p->tx_kind = to;
}

/* J5 at the receiver: every frame before the marker is delivered. */
static void chan_marked(rmpi_ofi_rail_t *r, int src, const wire_chan_t *c)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, src);
    rmpi_net_chsw_marked(&p->sw, c->to, &r->st, src, r->env.rank);
    if (c->to == SHARED && p->ring) {
        p->ring->retire = 1; /* freed after the poll that may be reading it */
        r->nretire++;
    }
}

void rmpi_ofi_chan_rx(rmpi_ofi_rail_t *r, int src, const char *frame, size_t len)
{
    wire_chan_t c = {0};
    if (len != sizeof c && len != 8)
        rmpi_fatal("ofi: rank %d sent a %zu-byte channel control frame to rank %d on %s.", src, len, r->env.rank,
                   r->pub.hints.name);
    memcpy(&c, frame, len);
    if (c.to != SHARED && c.to != DEDICATED)
        rmpi_fatal("ofi: rank %d sent a corrupt channel control frame (kind %u, channel %u) to rank %d on %s.", src,
                   c.kind, c.to, r->env.rank, r->pub.hints.name);
    if (c.kind == RMPI_OFI_CHAN_REQ && len == sizeof c)
        chan_move(r, src, &c);
    else if (c.kind == RMPI_OFI_CHAN_MARK)
        chan_marked(r, src, &c);
    else
        rmpi_fatal("ofi: rank %d sent a channel control frame of kind %u to rank %d on %s.", src, c.kind, r->env.rank,
                   r->pub.hints.name);
}

void rmpi_ofi_chan_credit(rmpi_ofi_rail_t *r, int src, uint32_t id, uint32_t pos)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, src);
    /* Not the ring we write to: one left since (credits travel outside the frames' order).
     * The one being left still counts: frames queued for it before its CHAN_MARK wait for
     * room in it after tx_kind moved to shared. */
    if (id != p->tx_ring_id)
        return;
    uint64_t at = p->tx_w - (uint32_t)((uint32_t)p->tx_w - pos);
    if (at > p->tx_r && at <= p->tx_w)
        p->tx_r = at;
}

static void credit(rmpi_ofi_rail_t *r, rmpi_ofi_ring_t *g)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, g->peer);
    if (rmpi_ofi_link_inject(r, g->peer, RMPI_OFI_LINK_CREDIT, g->id, (uint32_t)g->rd.r) == 0) {
        g->credited = g->rd.r;
        if (p->credit_due) {
            p->credit_due = 0;
            r->credits_due--;
        }
    } else if (!p->credit_due) {
        p->credit_due = 1;
        r->credits_due++;
    }
}

static int poll_ring(rmpi_ofi_rail_t *r, rmpi_ofi_ring_t *g)
{
    int ev = 0;
    size_t len;
    unsigned type;
    const char *f;
    /* bounded per ring so one busy sender cannot starve the others */
    for (int k = 0; k < 32 && !g->retire && (f = rmpi_shm_ring_peek(&g->rd, &len, &type)); k++) {
        if (type != RMPI_SHM_DATA || len < sizeof(rmpi_ofi_hdr_t) ||
            (g->rd.r & (g->rd.ncells - 1)) + cells_of(RMPI_SHM_HDR + len) > g->rd.ncells)
            rmpi_fatal("ofi: rank %d wrote a corrupt frame (type %u, %zu bytes) into rank %d's ring on %s.", g->peer,
                       type, len, r->env.rank, r->pub.hints.name);
        r->st.buf_bytes[DEDICATED] += cells_of(RMPI_SHM_HDR + len) * CELL;
        rmpi_ofi_rx_frame(r, f, len, DEDICATED);
        if (g->retire) /* its marker was parked behind this frame: nothing follows in it */
            break;
        rmpi_shm_ring_consume(&g->rd, len);
        ev++;
    }
    if (!g->retire && g->rd.r - g->credited >= g->rd.ncells / 4)
        credit(r, g);
    return ev;
}

static void rings_sweep(rmpi_ofi_rail_t *r)
{
    for (int i = 0; i < r->nrings;) {
        rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, r->rings[i]);
        if (!p->ring->retire) {
            i++;
            continue;
        }
        if (p->credit_due) {
            p->credit_due = 0;
            r->credits_due--;
        }
        ring_free(r, p->ring);
        p->ring = NULL;
        r->rings[i] = r->rings[--r->nrings];
    }
    r->nretire = 0;
}

/* RMPI_CHAN_FORCE_SWITCH_MS (tests): every few ms, one random connected peer changes channel. */
static void force_switch(rmpi_ofi_rail_t *r)
{
    int peer = rmpi_net_chsw_force_pick(&r->force, r->env.size, r->env.rank);
    rmpi_ofi_peer_t *p = peer >= 0 ? rmpi_ofi_peer_find(r, peer) : NULL; /* untouched: not connected */
    if (p && p->state == 1 && !p->ln.down && r->ring_ok)
        chan_start(r, peer, !p->sw.kind);
}

int rmpi_ofi_chan_progress(rmpi_ofi_rail_t *r)
{
    int ev = 0;
    if (RMPI_UNLIKELY(r->nstamp))
        stamps_flush(r);
    for (int i = 0; i < r->nrings; i++) {
        rmpi_ofi_ring_t *g = rmpi_ofi_peer(r, r->rings[i])->ring;
        ev += poll_ring(r, g);
        if (RMPI_UNLIKELY(rmpi_ofi_peer(r, g->peer)->credit_due) && !g->retire)
            credit(r, g);
    }
    if (RMPI_UNLIKELY(r->nretire))
        rings_sweep(r);
    if (RMPI_UNLIKELY(r->force.ns))
        force_switch(r);
    return ev;
}

void rmpi_ofi_chan_first(rmpi_ofi_rail_t *r, int peer)
{
    if (r->policy == RMPI_CHANNELS_DEDICATED && r->ring_ok && !rmpi_ofi_peer(r, peer)->ln.down)
        chan_start(r, peer, DEDICATED);
}

void rmpi_ofi_chan_down(rmpi_ofi_rail_t *r, int peer)
{
    rmpi_ofi_peer_t *p = rmpi_ofi_peer(r, peer);
    if (p->sw.waiting && p->sw.kind == DEDICATED)
        r->st.rings_asked--;
    else if (p->ring && !p->ring->retire) /* in use, or being left */
        r->st.dedicated_now--;
    if (p->ring && !p->ring->retire) {
        p->ring->retire = 1; /* freed by the next progress (this may run inside a poll of it) */
        r->nretire++;
    }
    p->sw = (rmpi_net_chsw_t){SHARED, 0};
    p->tx_kind = SHARED;
    for (int i = 0; i < r->nstamp; i++)
        if (r->stamps[i].peer == peer)
            r->stamps[i].gen = p->gen - 1; /* not posted: the connection is gone */
}

int rmpi_ofi_chan_kind(rmpi_rail_t *rail, int peer)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    if (peer < 0 || peer >= r->env.size)
        return -1;
    const rmpi_ofi_peer_t *p = rmpi_ofi_peer_find(r, peer);
    return p ? p->sw.kind : SHARED; /* never touched: where its first frame would land */
}

int rmpi_ofi_chan_switch(rmpi_rail_t *rail, int peer, int to)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    if (peer < 0 || peer >= r->env.size || peer == r->env.rank || r->policy != RMPI_CHANNELS_ADAPTIVE || !r->ring_ok ||
        (to != SHARED && to != DEDICATED))
        return -1;
    /* A contact: CHAN_REQ goes to the peer. The VC may have sent it nothing on this rail yet
     * (its frames took the other), so the peer is looked up here if need be. */
    fi_addr_t a;
    if (rmpi_ofi_peer_addr(r, peer, &a))
        return -1;
    return chan_start(r, peer, to);
}

void rmpi_ofi_chan_stats(rmpi_rail_t *rail, rmpi_net_chan_stats_t *st)
{
    rmpi_ofi_rail_t *r = rmpi_ofi_rail_of(rail);
    *st = r->st;
    st->ring_bytes = r->ring_ok ? r->ring_bytes : 0;
    /* the multi-receive buffers still posted count the bytes frames took in them so far */
    for (int i = 0; r->mrecv && i < r->nrx; i++)
        st->buf_bytes[SHARED] += r->rx[i].hi;
}
