/* The ofi provider's connection epochs (src/net/ofi/ofi_link.c) on synthetic traces, with
 * the VC's failure detector and probe schedule (src/vc/detect.c) on top, as ofi_ops.c and
 * vc.c use them: two ranks, a rail1 that is cut and comes back, a rail0 that always moves.
 * ofi_rxm keeps its TCP connection through a cut, so after the link returns each direction
 * resumes at its own retransmission, up to seconds apart. With the higher rank's direction
 * still backed off when the lower rank's HELLO reached it, the higher rank used to report
 * the connection up at once: its VC streamed into the dead direction and its detector
 * failed the rail again 0.4 s later (netns/multirail/adaptive-binding-cycles-ofi: 4
 * failures for 3 cuts). Checked: every cut counts one failure and one re-admission per
 * rank, whichever direction backs off and for how long, over several cuts in a run; a
 * rank reports the connection up only once both directions have carried (the higher rank
 * never before its own direction resumed); both ranks end in the same epoch and streaming;
 * and, directly, stale frames, the first frame of a proposal, a frame that confirms
 * before UP, and HELLOs of older tries; and the first connection of a rail whose link was
 * down at launch (`first`). */
#include "net/ofi/ofi_link.h"

#include <string.h>

#include "../unit_check.h"
#include "vc/detect.h"

#define MS 1000000ull
#define STEP (5 * MS)      /* the detector's looks */
#define DELAY (1 * MS)     /* one way */
#define FLOOR (400.0 * MS) /* RMPI_RAIL_FAIL_MIN */
#define PROBE (250.0 * MS) /* RMPI_RAIL_PROBE */
#define PROBE_MAX (4000.0 * MS)
#define MASK 0x3fu
#define QMAX 4096

enum { HELLO = 1, ACK, UP, DATA, PONG };

typedef struct msg {
    int kind;
    uint32_t a, b;
    uint64_t at; /* sent */
} msg_t;

/* One direction of rail1's TCP connection: in order; nothing passes while cut, and after a
 * cut only from `open` on (the sender's next retransmission). */
typedef struct dir {
    msg_t q[QMAX];
    int head, tail;
    uint64_t open;
    uint64_t hold_from, hold_to; /* after the cut, nothing passes again in [hold_from, hold_to) */
} dir_t;

typedef struct end {
    int lower;
    rmpi_ofi_link_t ln;
    int vc_up;         /* the VC's subchannel on rail1 is live */
    int rail_down_due; /* RAIL_DOWN from the peer (rail0, next look): its epoch */
    uint32_t rail_down_epoch;
    rmpi_detect_t det[2];
    uint64_t moved[2];
    rmpi_probe_t probe;
    uint64_t hello_dl;
    int failures, readmits;
    uint64_t t_up; /* last re-admission */
} end_t;

static dir_t d01, d10; /* rank 0 -> 1, 1 -> 0 */
static end_t e[2];
static int cut;
static int sent_data_up_unheard; /* DATA a rank sent before it had heard its peer in that epoch */

static void put(dir_t *d, int kind, uint32_t a, uint32_t b, uint64_t t)
{
    if (d->tail - d->head >= QMAX) /* the socket buffer is full: the VC waits */
        return;
    d->q[d->tail++ % QMAX] = (msg_t){kind, a, b, t};
}

static dir_t *out_of(int r) { return r == 0 ? &d01 : &d10; }

static void fail(end_t *x, uint64_t t)
{
    x->failures++;
    x->vc_up = 0;
    rmpi_ofi_link_lost(&x->ln);
    rmpi_probe_start(&x->probe, t, PROBE);
}

static void readmit(end_t *x, uint64_t t)
{
    x->vc_up = 1;
    x->readmits++;
    x->t_up = t;
    /* rmpi_vc_on_up: the grace is the probe's backoff, at least the floor */
    rmpi_detect_readmit(&x->det[1], t, (double)x->probe.wait > FLOOR ? (double)x->probe.wait : FLOOR);
}

static void deliver(int r, const msg_t *m, uint64_t t)
{
    end_t *x = &e[r];
    dir_t *back = out_of(r);
    switch (m->kind) {
    case HELLO:
        if (!rmpi_ofi_link_hello(&x->ln, m->a, m->b))
            break;
        if (!x->ln.down) /* connected again in place of this one: lost, as peer_down reports */
            fail(x, t);
        if (rmpi_ofi_link_take(&x->ln, m->a))
            readmit(x, t);
        put(back, ACK, m->a, m->b, t);
        break;
    case ACK:
        if (rmpi_ofi_link_ack(&x->ln, m->a)) {
            put(back, UP, m->a, 0, t);
            readmit(x, t);
        }
        break;
    case UP:
        if (rmpi_ofi_link_up(&x->ln, m->a))
            readmit(x, t);
        break;
    case DATA: {
        int k = rmpi_ofi_link_frame(&x->ln, m->a, MASK);
        if (k == RMPI_OFI_LINK_STALE)
            break;
        if (k == RMPI_OFI_LINK_ADOPTED)
            put(back, UP, x->ln.epoch, 0, t);
        if (k > 0)
            readmit(x, t);
        put(back, PONG, 0, 0, t); /* what the sender's watch counts as moved */
        break;
    }
    case PONG:
        if (!x->ln.down)
            x->moved[1]++;
        break;
    }
}

static void drain(dir_t *d, int to, uint64_t t)
{
    if (t >= d->hold_from && t < d->hold_to)
        return;
    while (!cut && d->head < d->tail && t >= d->open && t >= d->q[d->head % QMAX].at + DELAY) {
        msg_t m = d->q[d->head++ % QMAX];
        deliver(to, &m, t);
    }
}

static void look(int r, uint64_t t)
{
    end_t *x = &e[r], *peer = &e[1 - r];
    if (x->rail_down_due) { /* the peer's RAIL_DOWN (on_rail_down: its epoch must be ours) */
        x->rail_down_due = 0;
        if (x->vc_up && x->rail_down_epoch == x->ln.epoch)
            fail(x, t);
    }
    x->moved[0]++; /* rail0 always moves */
    if (x->vc_up) {
        if (x->ln.unconfirmed)
            sent_data_up_unheard++;
        put(out_of(r), DATA, x->ln.epoch & MASK, 0, t);
    }
    if (x->lower && x->ln.hello && t >= x->hello_dl) /* hellos_expire */
        rmpi_ofi_link_lost(&x->ln);
    if (!x->vc_up) { /* probe: the lower rank proposes, the higher waits */
        rmpi_probe_t before = x->probe;
        uint64_t tmo = rmpi_probe_due(&x->probe, t, PROBE_MAX);
        if (tmo && x->lower) {
            if (!x->ln.down || x->ln.hello) {
                x->probe = before; /* rejoin refused: asked again at the next look */
            } else {
                uint32_t prev = x->ln.epoch, a = rmpi_ofi_link_propose(&x->ln);
                x->hello_dl = t + tmo;
                put(out_of(r), HELLO, a, prev, t);
            }
        }
        return;
    }
    int up[2] = {1, 1};
    double tmo[2] = {FLOOR, FLOOR};
    rmpi_detect_observe(&x->det[0], 1 << 20, x->moved[0], t, 0);
    rmpi_detect_observe(&x->det[1], 1 << 20, x->moved[1], t, 0);
    if (rmpi_detect_failed(x->det, 2, up, tmo, t) == 1) {
        peer->rail_down_due = 1;
        peer->rail_down_epoch = x->ln.epoch;
        fail(x, t);
    }
}

/* Cuts of rail1: [from, to) with both directions blocked, then direction 0->1 passes again
 * from to + back01 and 1->0 from to + back10 (their next retransmission); 0->1 then carries
 * nothing again in [to + hold01, to + hold01 + hold01_len) (what the lower rank's provider
 * still sends of the old connection ahead of the new one's frames). */
typedef struct cutspec {
    uint64_t from, to, back01, back10, hold01, hold01_len;
} cutspec_t;

static void run(const char *name, const cutspec_t *cuts, int ncuts, uint64_t end_ns)
{
    memset(&d01, 0, sizeof d01);
    memset(&d10, 0, sizeof d10);
    memset(e, 0, sizeof e);
    e[0].lower = 1;
    e[0].vc_up = e[1].vc_up = 1; /* epoch 0, up from the start */
    sent_data_up_unheard = 0;
    int c = 0;
    uint64_t resume10 = 0; /* when 1->0 last resumed after a cut */
    uint64_t early = 0, early_resume = 0;
    for (uint64_t t = STEP; t <= end_ns; t += STEP) {
        cut = c < ncuts && t >= cuts[c].from && t < cuts[c].to;
        if (c < ncuts && t >= cuts[c].to) {
            d01.open = cuts[c].to + cuts[c].back01;
            d01.hold_from = cuts[c].to + cuts[c].hold01;
            d01.hold_to = d01.hold_from + cuts[c].hold01_len;
            d10.open = resume10 = cuts[c].to + cuts[c].back10;
            c++;
        }
        drain(&d01, 1, t);
        drain(&d10, 0, t);
        look(0, t);
        look(1, t);
        /* The higher rank is never up again before its own direction carries. */
        if (!early && c > 0 && e[1].vc_up && e[1].t_up > cuts[c - 1].from && e[1].t_up < resume10)
            early = e[1].t_up, early_resume = resume10;
    }
    CHECK(!early, "%s: rank 1 re-admitted rail1 at %.3f s, its direction resumed at %.3f s", name, (double)early * 1e-9,
          (double)early_resume * 1e-9);
    for (int r = 0; r < 2; r++) {
        CHECK(e[r].failures == ncuts && e[r].readmits == ncuts,
              "%s: rank %d counted %d failures, %d re-admissions for %d cuts", name, r, e[r].failures, e[r].readmits,
              ncuts);
        CHECK(e[r].vc_up && !e[r].ln.down && !e[r].ln.unconfirmed, "%s: rank %d ends with rail1 %s", name, r,
              e[r].vc_up ? "live, its connection not up" : "failed");
    }
    CHECK(e[0].ln.epoch == e[1].ln.epoch, "%s: the ranks end in epochs %u and %u", name, e[0].ln.epoch, e[1].ln.epoch);
    CHECK(sent_data_up_unheard == 0, "%s: %d frames streamed on a connection not yet confirmed", name,
          sent_data_up_unheard);
    CHECK(d01.tail - d01.head < 64 && d10.tail - d10.head < 64, "%s: rail1 does not move at the end (%d, %d queued)",
          name, d01.tail - d01.head, d10.tail - d10.head);
}

static void traces(void)
{
    uint64_t s = 1000 * MS;
    /* The false alarm: the lower rank's HELLO gets through at once, the higher rank's
     * direction (its ACK, and before the fix its stripes) only 1.5 s later. */
    cutspec_t back10[] = {{3 * s, 4500 * MS, 0, 1500 * MS}};
    run("higher rank's direction backed off 1.5 s", back10, 1, 10 * s);
    cutspec_t back10s[] = {{3 * s, 4500 * MS, 0, 300 * MS}};
    run("higher rank's direction backed off 0.3 s", back10s, 1, 10 * s);
    cutspec_t back01[] = {{3 * s, 4500 * MS, 1500 * MS, 0}};
    run("lower rank's direction backed off 1.5 s", back01, 1, 10 * s);
    cutspec_t none[] = {{3 * s, 4500 * MS, 0, 0}};
    run("both directions at once", none, 1, 10 * s);
    /* as the netns test: three cuts of 1.5 s, 3 s apart, the backed-off side alternating */
    cutspec_t three[] = {{3 * s, 4500 * MS, 0, 1500 * MS},
                         {7500 * MS, 9 * s, 1200 * MS, 0},
                         {12 * s, 13500 * MS, 0, 2400 * MS}};
    run("three cuts", three, 3, 22 * s);
    /* netns/multirail/adaptive-binding-cycles-ofi at load 28: both directions carried the
     * handshake (HELLO at 0.20 s, HELLO_ACK at 0.25 s after the return), then the lower
     * rank's UP and frames waited 0.6 s behind the old connection's bytes; the lower rank's
     * detector failed the rail again after 0.4 s of nothing acknowledged (4 failures for 3
     * cuts) unless a connection not heard in yet gets the probe's wait. */
    cutspec_t held[] = {{3 * s, 4500 * MS, 200 * MS, 250 * MS, 210 * MS, 600 * MS}};
    run("lower rank's frames held 0.6 s after the handshake", held, 1, 10 * s);
    cutspec_t held3[] = {{3 * s, 4500 * MS, 200 * MS, 250 * MS, 210 * MS, 600 * MS},
                         {7500 * MS, 9 * s, 1200 * MS, 0, 1210 * MS, 900 * MS},
                         {12 * s, 13500 * MS, 0, 1500 * MS, 1400 * MS, 450 * MS}};
    run("three cuts, the lower rank's frames held after each", held3, 3, 22 * s);
}

/* The state machine's answers one by one. */
static void steps(void)
{
    rmpi_ofi_link_t lo = {0}, hi = {0};
    CHECK(rmpi_ofi_link_frame(&hi, 0, MASK) == RMPI_OFI_LINK_CURRENT, "a frame of epoch 0");
    CHECK(rmpi_ofi_link_lost(&lo) == 1 && rmpi_ofi_link_lost(&lo) == 0, "given up once");
    CHECK(rmpi_ofi_link_frame(&lo, 0, MASK) == RMPI_OFI_LINK_STALE, "a frame of a connection given up");
    uint32_t a = rmpi_ofi_link_propose(&lo);
    CHECK(a == 1 && lo.hello == 1, "the first proposal is epoch %u", a);
    /* the higher rank has not noticed the cut: the HELLO gives its connection up */
    CHECK(rmpi_ofi_link_hello(&hi, 1, 0), "HELLO(1, 0) taken");
    CHECK(!rmpi_ofi_link_hello(&hi, 1, 1) && !rmpi_ofi_link_hello(&hi, 0, 0), "HELLOs of another epoch ignored");
    rmpi_ofi_link_lost(&hi);
    CHECK(rmpi_ofi_link_take(&hi, 1) == 0 && hi.unconfirmed && !hi.down, "taken, not up before the lower rank");
    CHECK(rmpi_ofi_link_frame(&hi, 0, MASK) == RMPI_OFI_LINK_STALE, "a frame of epoch 0 after the take");
    CHECK(rmpi_ofi_link_up(&hi, 2) == 0 && hi.unconfirmed, "UP of another epoch");
    /* the lower rank's first frame in epoch 1 comes before its UP (completions in any order) */
    CHECK(rmpi_ofi_link_frame(&hi, 1, MASK) == RMPI_OFI_LINK_CONFIRMED && !hi.unconfirmed, "confirmed by a frame");
    CHECK(rmpi_ofi_link_up(&hi, 1) == 0, "UP after the frame: already up");
    CHECK(rmpi_ofi_link_frame(&hi, 1, MASK) == RMPI_OFI_LINK_CURRENT, "then frames are current");
    /* lower rank: a second try, then the peer's first frame in the first one before its ACK */
    lo.hello = 0; /* the first try expired */
    CHECK(rmpi_ofi_link_propose(&lo) == 2, "the second proposal");
    CHECK(rmpi_ofi_link_frame(&lo, 1, MASK) == RMPI_OFI_LINK_ADOPTED && lo.epoch == 1 && !lo.down && !lo.hello,
          "adopted from the peer's frame in epoch 1");
    CHECK(rmpi_ofi_link_ack(&lo, 1) == 0 && rmpi_ofi_link_ack(&lo, 2) == 0, "ACKs once up: ignored");
    /* a late ACK of an older try is taken while down (the try after it is still out) */
    rmpi_ofi_link_lost(&lo);
    uint32_t b = rmpi_ofi_link_propose(&lo);
    CHECK(b == 3, "a proposal above every earlier one: %u", b);
    CHECK(rmpi_ofi_link_ack(&lo, 1) == 0, "an ACK of the current epoch");
    CHECK(rmpi_ofi_link_ack(&lo, 3) == 1 && lo.epoch == 3 && !lo.unconfirmed, "the ACK of the try out");
    /* epoch bits wrap: epoch 65 is 1 on the wire */
    rmpi_ofi_link_t w = {.epoch = 64, .try_epoch = 64};
    rmpi_ofi_link_lost(&w);
    CHECK(rmpi_ofi_link_propose(&w) == 65, "proposal 65");
    CHECK(rmpi_ofi_link_frame(&w, 0, MASK) == RMPI_OFI_LINK_STALE, "epoch 64's bits after it was given up");
    CHECK(rmpi_ofi_link_frame(&w, 1, MASK) == RMPI_OFI_LINK_ADOPTED && w.epoch == 65, "65 from its bits");
}

/* A rail whose link was down at launch (src/net/ofi/ofi_iface.c): no connection was ever
 * made, and the first one is made like one made again. The lower rank gives epoch 0 up
 * unreported (rmpi_ofi_link_fresh says there is nothing to give up) and proposes 1
 * following 0; the higher rank, fresh too, takes it without giving anything up and is up
 * only at UP; neither end is fresh afterwards, so a later cut goes the usual way. */
static void first(void)
{
    rmpi_ofi_link_t lo = {0}, hi = {0};
    CHECK(rmpi_ofi_link_fresh(&lo) && rmpi_ofi_link_fresh(&hi), "both ends start fresh");
    rmpi_ofi_link_lost(&lo);
    CHECK(!rmpi_ofi_link_fresh(&lo), "not fresh once given up");
    CHECK(rmpi_ofi_link_propose(&lo) == 1 && lo.hello == 1, "the first connection proposes epoch 1");
    CHECK(rmpi_ofi_link_hello(&hi, 1, 0), "a fresh higher rank takes HELLO(1, 0)");
    CHECK(rmpi_ofi_link_take(&hi, 1) == 0 && hi.unconfirmed && !rmpi_ofi_link_fresh(&hi), "taken, not up yet");
    CHECK(rmpi_ofi_link_ack(&lo, 1) == 1 && lo.epoch == 1 && !lo.down, "the lower rank is up at the ACK");
    CHECK(rmpi_ofi_link_up(&hi, 1) == 1 && hi.epoch == 1 && !hi.unconfirmed, "the higher rank is up at UP");
    CHECK(!rmpi_ofi_link_fresh(&lo) && !rmpi_ofi_link_fresh(&hi), "neither fresh after the first connection");
    /* a proposal out, then expired, is no fresh start either */
    rmpi_ofi_link_t x = {0};
    rmpi_ofi_link_lost(&x);
    rmpi_ofi_link_propose(&x);
    rmpi_ofi_link_lost(&x);
    CHECK(!rmpi_ofi_link_fresh(&x) && rmpi_ofi_link_propose(&x) == 2, "a second try proposes 2");
    /* a higher rank that adopted an epoch and then lost it is not fresh */
    rmpi_ofi_link_t y = {0};
    rmpi_ofi_link_take(&y, 1);
    rmpi_ofi_link_up(&y, 1);
    CHECK(!rmpi_ofi_link_fresh(&y), "an adopted epoch");
}

int main(void)
{
    unit_watchdog("ofi_link", 60, "a trace that never ends");
    steps();
    first();
    traces();
    return finish("ofi_link");
}
