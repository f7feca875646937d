/* Small frames bound to one of several subchannels (vc.c, send_bound): which VCs take
 * that path and on which subchannel, what goes on the wire (one piece, the acknowledgement
 * in front), which kept frames are timed, and when the receiver sends an ACK frame of its
 * own (at each multiple of RMPI_VC_ACK_EVERY, or once a drain of parked frames steps over
 * one). Two VCs in one process joined by recording fake rails; pure logic. */
#include <stdlib.h>
#include <string.h>

#include "vc_unit.h"

typedef struct wire {
    int rail, pieces;
    size_t len;
    char data[1100];
} wire_t;

static wire_t wire[1024];
static int nwire, ndelivered, last_k = -1;
static int pingpong; /* deliver: the frames of each direction counted apart (pp_last) */
static int pp_last[2] = {-1, -1};

static int fake_send(rmpi_rail_t *rail, int peer, const struct iovec *iov, int n)
{
    (void)peer;
    wire_t *w = &wire[nwire++];
    w->rail = rail->index;
    w->pieces = n;
    w->len = 0;
    for (int i = 0; i < n; i++) {
        memcpy(w->data + w->len, iov[i].iov_base, iov[i].iov_len);
        w->len += iov[i].iov_len;
    }
    return 0;
}

static const struct rmpi_net_ops fake_ops = {.version = RMPI_NET_OPS_VERSION, .name = "fake", .send = fake_send};
static rmpi_rail_t rails[2];

static void deliver(rmpi_vc_t *vc, const void *frame, size_t len)
{
    (void)vc;
    int k;
    CHECK(len == 8, "delivered a frame of %zu bytes", len);
    memcpy(&k, (const char *)frame + 4, sizeof k);
    if (pingpong) {
        CHECK(k == pp_last[vc->peer] + 1, "from rank %d: delivered %d after %d", vc->peer, k, pp_last[vc->peer]);
        pp_last[vc->peer] = k;
        ndelivered++;
        return;
    }
    CHECK(k == last_k + 1, "delivered %d after %d", k, last_k);
    last_k = k;
    ndelivered++;
}

static rmpi_vc_t *make_vc(int peer, int policy)
{
    rmpi_vc_t *vc = calloc(1, sizeof *vc + 64);
    vc->core = vc + 1;
    vc->peer = peer;
    vc->nsub = vc->nup = 2;
    vc->ack_peer = 1;
    vc->sub[0].rail = &rails[0];
    vc->sub[1].rail = &rails[1];
    rmpi_sched_cfg_t cfg = {policy, RMPI_STRIPE_POLICY_EVEN, 1, 0.5, 0.0, 1, 1};
    rmpi_sched_init(&vc->sched, &cfg, 2, NULL);
    rmpi_vc_tx_update(vc);
    rmpi_vc_table[peer] = vc;
    return vc;
}

static void send_k(rmpi_vc_t *vc, int k)
{
    char f[8] = {0};
    rmpi_vc_hdr_t h = {0, 1, 0};
    memcpy(f, &h, sizeof h);
    memcpy(f + 4, &k, sizeof k);
    /* the cached-header shape of an 8 B message: a 4-byte header and the data apart */
    struct iovec iov[2] = {{f, 4}, {f + 4, 4}};
    rmpi_vc_send_small(vc, iov, 2, sizeof f);
}

/* Deliver the frames sent from wire[from] on to the VC of peer to_peer, then the ACK
 * frames its delivery sent back to the other; *acks counts the ACK frames of their own. */
static void exchange(int from, int to_peer, int *acks)
{
    int end = nwire;
    for (int i = from; i < end; i++)
        rmpi_vc_on_frame(&rails[wire[i].rail], to_peer, wire[i].data, wire[i].len);
    for (int i = from; i < nwire; i++) {
        rmpi_vc_hdr_t h;
        memcpy(&h, wire[i].data, sizeof h);
        if (h.type == RMPI_VC_ACK && acks)
            ++*acks;
        if (i >= end)
            rmpi_vc_on_frame(&rails[wire[i].rail], 1 - to_peer, wire[i].data, wire[i].len);
    }
}

static int hold_yes;
static int test_hold(rmpi_vc_t *vc, size_t len)
{
    (void)vc;
    (void)len;
    return hold_yes;
}

static int kept_timed(const rmpi_vc_t *vc, uint16_t psn)
{
    for (const rmpi_vc_txbuf_t *t = vc->unacked; t; t = t->next)
        if (t->psn == psn)
            return t->t != 0;
    return -1;
}

int main(void)
{
    if (vc_unit_init(rails, 2, &fake_ops, deliver))
        return 1;

    /* Which VCs are bound: binding with several live subchannels, nothing held, no
     * coalescing; the subchannel is the binding policy's pick (bind 1 of 2: the second). */
    rmpi_vc_t *tx = make_vc(1, RMPI_SMALL_POLICY_BINDING);
    CHECK(tx->tx_slow == RMPI_VC_TX_BOUND && tx->tx_sub == 1, "binding over two: tx_slow %d sub %d", tx->tx_slow,
          tx->tx_sub);
    rmpi_vc_set_coal(tx, 1);
    CHECK(tx->tx_slow == (RMPI_VC_TX_BOUND | RMPI_VC_TX_COAL) && tx->tx_sub == 1,
          "coalescing on: still bound, the hold policy asked first (%d, sub %d)", tx->tx_slow, tx->tx_sub);
    /* What the policy holds waits for a bundle; what it does not goes the bound way. */
    rmpi_vc_hold_policy = test_hold;
    hold_yes = 1;
    send_k(tx, 0);
    CHECK(nwire == 0 && tx->held_n == 1 && tx->tx_slow == (RMPI_VC_TX_GENERIC | RMPI_VC_TX_COAL),
          "held: %d sent, %u held, tx_slow %d", nwire, tx->held_n, tx->tx_slow);
    rmpi_vc_flush(tx);
    CHECK(nwire == 1 && tx->held_n == 0 && tx->tx_slow == (RMPI_VC_TX_BOUND | RMPI_VC_TX_COAL),
          "flushed: %d sent, %u held, tx_slow %d", nwire, tx->held_n, tx->tx_slow);
    hold_yes = 0;
    send_k(tx, 1);
    CHECK(nwire == 2 && wire[1].rail == 1 && wire[1].pieces == 1 && tx->unacked_n == 2,
          "not held: sent on rail %d in %d piece(s), %llu kept", wire[1].rail, wire[1].pieces,
          (unsigned long long)tx->unacked_n);
    nwire = 0;
    rmpi_vc_hold_policy = NULL;
    rmpi_vc_set_coal(tx, 0);
    CHECK(tx->tx_slow == RMPI_VC_TX_BOUND, "coalescing off again: bound (%d)", tx->tx_slow);
    rmpi_vc_t *rr = make_vc(1, RMPI_SMALL_POLICY_RR);
    CHECK(rr->tx_slow == 1, "round robin is never bound (%d)", rr->tx_slow);
    free(rr);

    /* Frames of 1 KiB take the bound path too, and their kept copies' buffers are reused:
     * the second frame, after an ACK freed the first, is kept in the first one's buffer. */
    tx = make_vc(1, RMPI_SMALL_POLICY_BINDING);
    {
        static char big[1024];
        rmpi_vc_hdr_t bh = {0, 1, 0};
        memcpy(big, &bh, sizeof bh);
        struct iovec biov[2] = {{big, 4}, {big + 4, sizeof big - 4}};
        rmpi_vc_send_small(tx, biov, 2, sizeof big);
        const rmpi_vc_txbuf_t *first = tx->unacked;
        CHECK(nwire == 1 && wire[0].pieces == 1 && wire[0].rail == 1 && wire[0].len == sizeof big && first,
              "1 KiB bound: %d sent, %d piece(s) on rail %d, %zu bytes", nwire, wire[0].pieces, wire[0].rail,
              wire[0].len);
        rmpi_vc_hdr_t ack = {1, RMPI_VC_ACK, 0};
        rmpi_vc_on_frame(&rails[1], 1, &ack, sizeof ack);
        CHECK(tx->unacked_n == 0 && tx->txmid_n == 1, "acknowledged: %llu kept, %u spare",
              (unsigned long long)tx->unacked_n, tx->txmid_n);
        rmpi_vc_send_small(tx, biov, 2, sizeof big);
        CHECK(tx->unacked == first && tx->txmid_n == 0,
              "the second 1 KiB frame kept in the first one's buffer (%p, %p)", (const void *)tx->unacked,
              (const void *)first);
        nwire = 0;
    }
    tx = make_vc(1, RMPI_SMALL_POLICY_BINDING);
    rmpi_vc_t *rx = make_vc(0, RMPI_SMALL_POLICY_BINDING);

    /* 100 frames: each on subchannel 1 in one piece, kept; only the frames the peer's ACK
     * frames answer (PSN + 1 a multiple of RMPI_VC_ACK_EVERY) are timed. */
    enum { N = 100 };
    for (int k = 0; k < N; k++)
        send_k(tx, k);
    CHECK(nwire == N && tx->unacked_n == N, "%d frames sent, %llu kept", nwire, (unsigned long long)tx->unacked_n);
    int pieces = 0, on1 = 0;
    for (int i = 0; i < N; i++) {
        pieces += wire[i].pieces == 1;
        on1 += wire[i].rail == 1;
    }
    CHECK(pieces == N && on1 == N, "%d of %d in one piece, %d on the bound subchannel", pieces, N, on1);
    for (int p = 0; p < N; p++) {
        int want = (p + 1) % RMPI_VC_ACK_EVERY == 0;
        CHECK(kept_timed(tx, (uint16_t)p) == want, "PSN %d timed %d, want %d", p, kept_timed(tx, (uint16_t)p), want);
    }

    /* The receiver acknowledges with a frame of its own at PSN 32, 64 and 96 exactly. */
    int sent = nwire;
    for (int i = 0; i < sent; i++)
        rmpi_vc_on_frame(&rails[wire[i].rail], 0, wire[i].data, wire[i].len);
    CHECK(ndelivered == N, "delivered %d of %d", ndelivered, N);
    int acks = 0;
    for (int i = sent; i < nwire; i++) {
        rmpi_vc_hdr_t h;
        memcpy(&h, wire[i].data, sizeof h);
        CHECK(h.type == RMPI_VC_ACK && h.psn == (uint16_t)((acks + 1) * RMPI_VC_ACK_EVERY),
              "ACK frame %d: type %#x psn %u", acks, h.type, h.psn);
        acks++;
    }
    CHECK(acks == N / RMPI_VC_ACK_EVERY, "%d ACK frames for %d frames", acks, N);
    for (int i = sent; i < nwire; i++)
        rmpi_vc_on_frame(&rails[wire[i].rail], 1, wire[i].data, wire[i].len);
    CHECK(tx->unacked_n == N % RMPI_VC_ACK_EVERY, "the ACK frames freed all but %llu",
          (unsigned long long)tx->unacked_n);

    /* The answer carries the acknowledgement in front, in the same piece; it frees the rest. */
    sent = nwire;
    last_k = -1;
    ndelivered = 0;
    send_k(rx, 0);
    rmpi_vc_hdr_t h;
    memcpy(&h, wire[sent].data, sizeof h);
    CHECK(nwire == sent + 1 && wire[sent].pieces == 1 && wire[sent].len == 12 && h.type == RMPI_VC_ACKED && h.psn == N,
          "answer: %d frames, %d pieces, %zu bytes, type %#x, psn %u", nwire - sent, wire[sent].pieces, wire[sent].len,
          h.type, h.psn);
    rmpi_vc_on_frame(&rails[wire[sent].rail], 1, wire[sent].data, wire[sent].len);
    CHECK(tx->unacked_n == 0 && ndelivered == 1, "after the answer: %llu kept, %d delivered",
          (unsigned long long)tx->unacked_n, ndelivered);
    send_k(rx, 1);
    memcpy(&h, wire[nwire - 1].data, sizeof h);
    CHECK(wire[nwire - 1].len == 8 && h.type == 1, "nothing new to acknowledge: the frame alone (%zu bytes, type %#x)",
          wire[nwire - 1].len, h.type);

    /* The bound subchannel fails: the VC is left with the first, which takes the one-rail
     * path, and the kept frame was resent there. */
    sent = nwire;
    send_k(tx, N);
    CHECK(rmpi_vc_rail_failed(tx, 1, "test: bound rail cut") == 1, "one rail left");
    CHECK(tx->tx_slow == 0, "one live subchannel, the first: the one-rail path (%d)", tx->tx_slow);
    send_k(tx, N + 1);
    for (int i = sent + 1; i < nwire; i++)
        CHECK(wire[i].rail == 0, "frame %d after the failure on rail %d", i, wire[i].rail);

    /* Parked frames delivered at once step over a multiple: one ACK frame at the end. */
    rmpi_vc_t *r2 = make_vc(0, RMPI_SMALL_POLICY_BINDING);
    rmpi_vc_t *t2 = make_vc(1, RMPI_SMALL_POLICY_BINDING);
    sent = nwire;
    for (int k = 0; k < 40; k++)
        send_k(t2, k);
    last_k = -1;
    ndelivered = 0;
    for (int i = sent + 1; i < sent + 40; i++)
        rmpi_vc_on_frame(&rails[1], 0, wire[i].data, wire[i].len);
    int before = nwire;
    CHECK(ndelivered == 0 && r2->ooo_frames == 39, "39 parked (%llu), none delivered (%d)",
          (unsigned long long)r2->ooo_frames, ndelivered);
    rmpi_vc_on_frame(&rails[1], 0, wire[sent].data, wire[sent].len);
    memcpy(&h, wire[nwire - 1].data, sizeof h);
    CHECK(ndelivered == 40 && nwire == before + 1 && h.type == RMPI_VC_ACK && h.psn == 40,
          "drain: %d delivered, %d frames sent, last type %#x psn %u", ndelivered, nwire - before, h.type, h.psn);

    /* A ping-pong: every answer carries the acknowledgement, so the kept copy of each frame
     * is freed by the answer and an ACK frame of its own goes only as a round-trip sample,
     * the first due one and then at most one per RMPI_VC_ACK_SAMPLE_NS. */
    rmpi_vc_t *a = make_vc(1, RMPI_SMALL_POLICY_BINDING); /* rank 0's VC to rank 1 */
    rmpi_vc_t *b = make_vc(0, RMPI_SMALL_POLICY_BINDING); /* rank 1's VC to rank 0 */
    pingpong = 1;
    ndelivered = 0;
    int acks_ab = 0, most_kept = 0;
    enum { R = 150 };
    uint64_t t0 = rmpi_time_ns();
    for (int k = 0; k < R; k++) {
        for (int dir = 0; dir < 2; dir++) {
            rmpi_vc_t *from = dir ? b : a;
            int to_peer = dir ? 1 : 0; /* the VC the frames are delivered to: table[to_peer] */
            sent = nwire;
            send_k(from, k);
            exchange(sent, to_peer, &acks_ab);
            if ((int)from->unacked_n > most_kept)
                most_kept = (int)from->unacked_n;
        }
    }
    uint64_t el = rmpi_time_ns() - t0;
    CHECK(ndelivered == 2 * R, "ping-pong: %d of %d delivered", ndelivered, 2 * R);
    CHECK(most_kept <= 1, "ping-pong: at most the frame in flight kept (%d)", most_kept);
    int acks_max = 2 * (1 + (int)(el / RMPI_VC_ACK_SAMPLE_NS) + 1);
    CHECK(acks_ab >= 2 && acks_ab <= acks_max,
          "ping-pong of %d frames in %.1f ms: %d ACK frames of their own (want 2..%d, one per block of %d "
          "was %d)",
          2 * R, (double)el * 1e-6, acks_ab, acks_max, RMPI_VC_ACK_EVERY, 2 * R / RMPI_VC_ACK_EVERY);

    /* The bound rail dies with a small frame on it: the kept copy goes again on the other
     * rail, after the word that the rail is down, and the ping-pong goes on there. */
    sent = nwire;
    send_k(a, R); /* lost with its rail: never delivered */
    CHECK(a->unacked_n == 1 && wire[sent].rail == 1, "the lost frame kept (%llu), sent on rail %d",
          (unsigned long long)a->unacked_n, wire[sent].rail);
    CHECK(rmpi_vc_rail_failed(a, 1, "test: bound rail cut under a ping-pong") == 1, "one rail left");
    int resent = 0;
    for (int i = sent + 1; i < nwire; i++) {
        CHECK(wire[i].rail == 0, "after the cut: a frame on rail %d", wire[i].rail);
        int before_n = ndelivered;
        rmpi_vc_on_frame(&rails[wire[i].rail], 0, wire[i].data, wire[i].len);
        resent += ndelivered - before_n;
    }
    CHECK(resent == 1 && pp_last[0] == R, "the lost frame delivered once from the other rail (%d, last %d)", resent,
          pp_last[0]);
    CHECK(b->tx_slow == 0 && a->tx_slow == 0, "both ends on the one-rail path (%d %d)", b->tx_slow, a->tx_slow);
    for (int k = R; k < R + 40; k++) {
        for (int dir = 0; dir < 2; dir++) {
            if (k == R && dir == 0)
                continue; /* delivered above */
            rmpi_vc_t *from = dir ? b : a;
            sent = nwire;
            send_k(from, k);
            exchange(sent, dir ? 1 : 0, NULL);
            for (int i = sent; i < nwire; i++)
                CHECK(wire[i].rail == 0, "after the cut: a frame on rail %d", wire[i].rail);
        }
    }
    CHECK(pp_last[0] == R + 39 && pp_last[1] == R + 39, "after the cut: delivered up to %d and %d", pp_last[0],
          pp_last[1]);
    return finish("vc_bound");
}
