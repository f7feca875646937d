/* VC failover: two VCs (a -> b) joined by two recording fake rails (scheduling logic only;
 * the real providers are tested elsewhere). Frames are sent, some are "lost" with rail 1,
 * the rail is declared failed, and the receiver must end up with every frame exactly once,
 * in PSN order; ACKs must free the sender's copies. */
#include <stdlib.h>
#include <string.h>

#include "vc_unit.h"

#define NFRAMES 500

typedef struct wire {
    int rail;
    size_t len;
    char data[64];
} wire_t;

static wire_t inflight[4 * NFRAMES];
static int ninflight;
static int delivered[NFRAMES], ndelivered, next_expected;

static int fake_send(rmpi_rail_t *rail, int peer, const struct iovec *iov, int n)
{
    wire_t *w = &inflight[ninflight++];
    w->rail = rail->index;
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
    int k;
    memcpy(&k, (const char *)frame + 4, sizeof k);
    CHECK(k == next_expected, "delivered frame %d, expected %d", k, next_expected);
    next_expected = k + 1;
    if (k >= 0 && k < NFRAMES)
        delivered[k]++;
    ndelivered++;
}

static rmpi_vc_t *make_vc(int peer)
{
    rmpi_vc_t *vc = calloc(1, sizeof *vc + 64);
    vc->core = vc + 1;
    vc->peer = peer;
    vc->nsub = vc->nup = 2;
    vc->ack_peer = 1;
    vc->sub[0].rail = &rails[0];
    vc->sub[1].rail = &rails[1];
    rmpi_sched_cfg_t cfg = {RMPI_SMALL_POLICY_RR, RMPI_STRIPE_POLICY_EVEN, 1, 0.5, 0.0, 1, 0};
    rmpi_sched_init(&vc->sched, &cfg, 2, NULL);
    rmpi_vc_tx_update(vc);
    rmpi_vc_table[peer] = vc;
    return vc;
}

int main(void)
{
    /* one process plays both ends: its VC to "peer 1" sends, its VC to "peer 0" receives */
    if (vc_unit_init(rails, 2, &fake_ops, deliver))
        return 1;
    rmpi_vc_t *tx = make_vc(1), *rx = make_vc(0);
    (void)rx;
    for (int k = 0; k < NFRAMES; k++) {
        char f[8] = {0};
        rmpi_vc_hdr_t h = {0, 1, 0};
        memcpy(f, &h, sizeof h);
        memcpy(f + 4, &k, sizeof k);
        struct iovec iov = {f, sizeof f};
        rmpi_vc_send(tx, &iov, 1, sizeof f);
    }
    CHECK(ninflight == NFRAMES, "%d frames on the wire, sent %d", ninflight, NFRAMES);
    CHECK(tx->unacked_n == NFRAMES, "%llu kept", (unsigned long long)tx->unacked_n);
    /* rail 1 dies: its frames never arrive; rail 0's arrive (out of order, since every
     * other PSN is missing) and are acknowledged up to the first gap */
    int sent = ninflight;
    int acks = 0;
    for (int i = 0; i < sent; i++) {
        if (inflight[i].rail == 1)
            continue;
        int before = ninflight;
        rmpi_vc_on_frame(&rails[0], 0, inflight[i].data, inflight[i].len);
        acks += ninflight - before;
    }
    CHECK(ndelivered == 1, "only frame 0 can be delivered before the gap, got %d", ndelivered);
    CHECK(rx->ooo_frames > 0, "frames after the gap wait in the out-of-order queue");
    int live = rmpi_vc_rail_failed(tx, 1, "test: rail 1 cut");
    CHECK(live == 1, "one rail left, got %d", live);
    CHECK(tx->resent_frames == NFRAMES, "every unacknowledged frame is resent (%llu)",
          (unsigned long long)tx->resent_frames);
    /* the first frame after the failure tells the peer (RAIL_DOWN on rail 0, naming
     * subchannel 1), ahead of every resent frame */
    const rmpi_vc_hdr_t *down = (const void *)inflight[sent].data;
    CHECK(inflight[sent].rail == 0 && down->type == RMPI_VC_RAIL_DOWN && down->psn == 1,
          "RAIL_DOWN first on rail 0 (rail %d type %#x psn %u)", inflight[sent].rail, down->type, down->psn);
    /* deliver everything sent since the failure (all on rail 0), and the ACKs back */
    for (int i = sent; i < ninflight; i++) {
        CHECK(inflight[i].rail == 0, "frame %d resent on failed rail 1", i);
        const rmpi_vc_hdr_t *h = (const void *)inflight[i].data;
        if (h->type == RMPI_VC_ACK)
            rmpi_vc_on_frame(&rails[0], 1, inflight[i].data, inflight[i].len);
        else
            rmpi_vc_on_frame(&rails[0], 0, inflight[i].data, inflight[i].len);
    }
    CHECK(ndelivered == NFRAMES, "delivered %d of %d", ndelivered, NFRAMES);
    for (int k = 0; k < NFRAMES; k++)
        CHECK(delivered[k] == 1, "frame %d delivered %d times", k, delivered[k]);
    CHECK(rx->dup_frames > 0, "the resent copies of frames already held were dropped as duplicates");
    CHECK(rx->ooo == NULL, "out-of-order queue drained");
    CHECK(!rx->sched.up[1] && rx->sched.up[0], "the peer stopped using subchannel 1 too");
    /* a RAIL_DOWN about another epoch of a connection is stale: ignored */
    rmpi_vc_t *rx2 = make_vc(0);
    rmpi_vc_hdr_t stale = {1, RMPI_VC_RAIL_DOWN, 7};
    rmpi_vc_on_frame(&rails[0], 0, &stale, sizeof stale);
    CHECK(rx2->sched.up[1], "a RAIL_DOWN of epoch 7 failed the subchannel of epoch 0");
    rmpi_vc_hdr_t bad = {9, RMPI_VC_RAIL_DOWN, 0};
    rmpi_vc_on_frame(&rails[0], 0, &bad, sizeof bad);
    CHECK(rx2->sched.up[0] && rx2->sched.up[1] && !rx2->cut, "a RAIL_DOWN for subchannel 9 of 2 is ignored");
    CHECK(tx->unacked_n < RMPI_VC_ACK_EVERY, "ACKs freed the kept frames (%llu left)",
          (unsigned long long)tx->unacked_n);
    CHECK(rmpi_vc_rail_failed(tx, 0, "test: last rail") == 0, "losing the last rail leaves none");
    (void)acks;
    return finish("vc_failover");
}
