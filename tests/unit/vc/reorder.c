/*
 * The virtual channel's receive-side PSN ordering (rmpi_vc_on_frame in src/vc/vc.c), without
 * the net layer: the VCs are made by hand (two dummy subchannels) and frames are fed straight
 * in. Frames arrive in random permutations of windows of 1..1000 frames, with duplicates
 * (of delivered, parked and not yet seen frames), for two peers at once, across the 16-bit
 * PSN wrap (65535 -> 0). The deliver callback must see every frame exactly once, in PSN order,
 * with its length and bytes (the caller's buffer is scribbled on after every call, so parked
 * frames must have been copied); frames_in, ooo_frames and dup_frames must match a model.
 * Early frames are bounded (rmpi_vc_ooo_max): a peer whose gap never fills is cut off.
 * The same orders again with arrivals packed into bundles of 1..5 frames (coalescing): each
 * frame of a bundle counts as if it had come alone; malformed bundles cut the peer off
 * before any of their frames is delivered. And once more with every frame behind a carried
 * acknowledgement (RMPI_VC_ACKED): the frame counts as if it had come alone, the kept frames
 * the acknowledgement covers are freed (their buffers reused), and hostile ones (beyond what
 * was sent, no frame or a VC frame behind them, flags, inside a bundle) cut the peer off
 * before their frame is delivered.
 */
#include <stdlib.h>
#include <string.h>

#include "rt/rt.h"
#include "vc/vc.h"

#include "../unit_check.h"

#define NPEERS 4
#define MAXPAY 200

/* Expected stream of one peer: frame k (k = 0..n-1) has PSN start + k and a payload from k. */
typedef struct stream {
    rmpi_vc_t *vc;
    uint16_t start;
    uint32_t n;
    uint32_t next; /* next k the deliver callback must see */
    /* model of the VC */
    unsigned char *parked; /* k arrived early and is waiting */
    uint32_t mnext;        /* next k the model delivers */
    uint64_t m_in, m_ooo, m_dup;
} stream_t;

static stream_t streams[NPEERS];
static rmpi_rail_t dummy_rail;
static unsigned char frame_buf[4 + MAXPAY + 8];
static int delivering = -1; /* peer whose on_frame call is in progress */

static size_t frame_len(uint32_t k) { return 4 + (size_t)((k * 2654435761u) >> 7) % (MAXPAY + 1); }

static void frame_fill(unsigned char *f, uint16_t psn, uint32_t k, int peer)
{
    /* any core type; RMPI_VC_ACKED, RMPI_VC_RAIL_DOWN, RMPI_VC_BUNDLE and RMPI_VC_ACK are
     * the VC's own, never delivered */
    rmpi_vc_hdr_t h = {psn, (uint8_t)(k % RMPI_VC_ACKED), (uint8_t)peer};
    memcpy(f, &h, sizeof h);
    unit_rng_t g = unit_seed(((uint64_t)peer << 32) | k);
    size_t len = frame_len(k);
    for (size_t i = 4; i < len; i++)
        f[i] = (unsigned char)unit_rand(&g);
}

static void deliver(rmpi_vc_t *vc, const void *frame, size_t len)
{
    int peer = -1;
    for (int p = 0; p < NPEERS; p++)
        if (streams[p].vc == vc)
            peer = p;
    CHECK(peer >= 0 && peer == delivering, "deliver for vc %p (peer %d) during on_frame for peer %d", (void *)vc, peer,
          delivering);
    if (peer < 0)
        return;
    stream_t *s = &streams[peer];
    CHECK(vc->peer == peer, "vc->peer %d", vc->peer);
    CHECK(s->next < s->n, "peer %d: frame delivered after all %u", peer, s->n);
    if (s->next >= s->n)
        return;
    uint32_t k = s->next++;
    uint16_t psn = (uint16_t)(s->start + k);
    rmpi_vc_hdr_t hdr; /* a frame out of a bundle may start at any address */
    memcpy(&hdr, frame, sizeof hdr);
    const rmpi_vc_hdr_t *h = &hdr;
    CHECK(h->psn == psn, "peer %d: delivered PSN %u, expected %u (frame %u of the stream)", peer, h->psn, psn, k);
    CHECK(len == frame_len(k), "peer %d PSN %u: len %zu, sent %zu", peer, psn, len, frame_len(k));
    if (h->psn == psn && len == frame_len(k)) {
        unsigned char want[sizeof frame_buf];
        frame_fill(want, psn, k, peer);
        CHECK(memcmp(frame, want, len) == 0, "peer %d PSN %u: payload differs from what was sent", peer, psn);
    }
}

static rmpi_vc_t *make_vc(int peer, uint16_t psn_expect)
{
    rmpi_vc_t *vc = calloc(1, sizeof *vc + 64);
    vc->core = vc + 1;
    vc->peer = peer;
    /* Two subchannels: only then may frames come out of order (one rail delivers in
     * order, and the VC cuts off a peer whose frames skip ahead on it). No subchannel is
     * up in the scheduler, so the VC sends no ACK through the dummy rails. */
    vc->nsub = 2;
    vc->sub[0].rail = vc->sub[1].rail = &dummy_rail;
    vc->psn_expect = psn_expect;
    rmpi_vc_tx_update(vc); /* as rmpi_vc_open: before any frame is kept */
    rmpi_vc_table[peer] = vc;
    return vc;
}

static void stream_init(int peer, uint16_t start, uint32_t n)
{
    stream_t *s = &streams[peer];
    free(s->parked);
    memset(s, 0, sizeof *s);
    s->vc = make_vc(peer, start);
    s->start = start;
    s->n = n;
    s->parked = calloc(n, 1);
}

static void model(stream_t *s, uint32_t k)
{
    s->m_in++;
    if (k < s->mnext || s->parked[k]) {
        s->m_dup++;
    } else if (k == s->mnext) {
        s->mnext++;
        while (s->mnext < s->n && s->parked[s->mnext])
            s->parked[s->mnext++] = 0;
    } else {
        s->parked[k] = 1;
        s->m_ooo++;
    }
}

/* Bundles: arrivals are packed in groups of 1..bundle_max (0: every frame alone). */
static unsigned bundle_max;
static unsigned char bundle_buf[4 + 5 * (4 + sizeof frame_buf)];

static void arrive_bundle(int peer, const uint32_t *ks, unsigned m)
{
    stream_t *s = &streams[peer];
    rmpi_vc_hdr_t h = {0, RMPI_VC_BUNDLE, 0};
    memcpy(bundle_buf, &h, sizeof h);
    size_t len = sizeof h;
    for (unsigned i = 0; i < m; i++) {
        model(s, ks[i]);
        uint32_t l = (uint32_t)frame_len(ks[i]);
        memcpy(bundle_buf + len, &l, sizeof l);
        frame_fill(bundle_buf + len + sizeof l, (uint16_t)(s->start + ks[i]), ks[i], peer);
        len += sizeof l + l;
    }
    delivering = peer;
    rmpi_vc_on_frame(&dummy_rail, peer, bundle_buf, len);
    delivering = -1;
    memset(bundle_buf, 0xa5, len);
    CHECK(s->next == s->mnext, "peer %d after a bundle of %u: delivered up to frame %u, expected %u", peer, m, s->next,
          s->mnext);
}

/* Arrivals behind a carried acknowledgement (RMPI_VC_ACKED) of what this side sent: none
 * was sent (psn_next 0), so the acknowledgement is 0 or an older PSN. */
static int acked_mode;
static unsigned char acked_buf[4 + sizeof frame_buf];

/* One arrival of frame k of peer's stream. */
static void arrive(int peer, uint32_t k)
{
    stream_t *s = &streams[peer];
    uint16_t psn = (uint16_t)(s->start + k);
    model(s, k);
    /* the real thing, from a buffer that is overwritten afterwards */
    frame_fill(frame_buf, psn, k, peer);
    delivering = peer;
    if (acked_mode) {
        rmpi_vc_hdr_t a = {(uint16_t)(0 - k % 5), RMPI_VC_ACKED, 0};
        memcpy(acked_buf, &a, sizeof a);
        memcpy(acked_buf + sizeof a, frame_buf, frame_len(k));
        rmpi_vc_on_frame(&dummy_rail, peer, acked_buf, sizeof a + frame_len(k));
        memset(acked_buf, 0xa5, sizeof acked_buf);
    } else {
        rmpi_vc_on_frame(&dummy_rail, peer, frame_buf, frame_len(k));
    }
    delivering = -1;
    memset(frame_buf, 0xa5, sizeof frame_buf);
    CHECK(s->next == s->mnext, "peer %d after PSN %u (frame %u) arrived: delivered up to frame %u, expected %u", peer,
          psn, k, s->next, s->mnext);
    CHECK(s->vc->psn_expect == (uint16_t)(s->start + s->mnext), "peer %d: psn_expect %u, expected %u", peer,
          s->vc->psn_expect, (uint16_t)(s->start + s->mnext));
}

static void stream_check_end(int peer, const char *what)
{
    stream_t *s = &streams[peer];
    CHECK(s->next == s->n, "%s: peer %d: %u of %u frames delivered", what, peer, s->next, s->n);
    CHECK(s->vc->ooo == NULL, "%s: peer %d: frames left in the out-of-order queue", what, peer);
    CHECK(s->vc->frames_in == s->m_in, "%s: peer %d: frames_in %llu, expected %llu", what, peer,
          (unsigned long long)s->vc->frames_in, (unsigned long long)s->m_in);
    CHECK(s->vc->ooo_frames == s->m_ooo, "%s: peer %d: ooo_frames %llu, expected %llu", what, peer,
          (unsigned long long)s->vc->ooo_frames, (unsigned long long)s->m_ooo);
    CHECK(s->vc->dup_frames == s->m_dup, "%s: peer %d: dup_frames %llu, expected %llu", what, peer,
          (unsigned long long)s->vc->dup_frames, (unsigned long long)s->m_dup);
}

static void shuffle(uint32_t *a, uint32_t n, unit_rng_t *g)
{
    for (uint32_t i = n; i > 1; i--) {
        uint32_t j = (uint32_t)unit_range(g, 0, i - 1), t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

/* The arrival order of one peer: 0..n-1 cut into windows of `window` frames, each window
 * shuffled; with dup_pct percent of arrivals followed by a copy of a random frame from the
 * last 2*window frames (delivered, parked or still to come). */
static uint32_t *arrival_order(uint32_t n, uint32_t window, unsigned dup_pct, unit_rng_t *g, uint32_t *count)
{
    uint32_t *base = malloc(n * sizeof *base);
    for (uint32_t i = 0; i < n; i++)
        base[i] = i;
    for (uint32_t i = 0; i < n; i += window)
        shuffle(base + i, n - i < window ? n - i : window, g);
    uint32_t *out = malloc(2 * n * sizeof *out), m = 0;
    for (uint32_t i = 0; i < n; i++) {
        out[m++] = base[i];
        if (unit_range(g, 1, 100) <= dup_pct) {
            uint32_t lo = base[i] > 2 * window ? base[i] - 2 * window : 0;
            uint32_t hi = base[i] + window < n ? base[i] + window : n - 1;
            out[m++] = (uint32_t)unit_range(g, lo, hi);
        }
    }
    free(base);
    *count = m;
    return out;
}

static void vc_setup(void) { rmpi_vc_init(0, NPEERS, deliver, 64); }

static void vc_teardown(void)
{
    rmpi_vc_finalize(); /* frees the VCs made here (calloc) and their parked frames */
    for (int p = 0; p < NPEERS; p++)
        streams[p].vc = NULL;
}

/* Two peers interleaved: peer 1 and peer 3, each with its own order and PSN start. */
static void run(uint32_t n, uint32_t window, unsigned dup_pct, uint16_t start1, uint16_t start3, uint64_t seed)
{
    char what[96];
    snprintf(what, sizeof what, "n %u window %u dups %u%% start %u/%u", n, window, dup_pct, start1, start3);
    vc_setup();
    unit_rng_t g = unit_seed(seed);
    stream_init(1, start1, n);
    stream_init(3, start3, n);
    uint32_t c1, c3;
    uint32_t *o1 = arrival_order(n, window, dup_pct, &g, &c1);
    uint32_t *o3 = arrival_order(n, window, dup_pct, &g, &c3);
    uint32_t i1 = 0, i3 = 0;
    while ((i1 < c1 || i3 < c3) && unit_failures < UNIT_MAX_FAILURES) {
        int one = i3 >= c3 || (i1 < c1 && unit_range(&g, 0, 1));
        uint32_t *o = one ? o1 : o3, *i = one ? &i1 : &i3, c = one ? c1 : c3;
        if (bundle_max) {
            unsigned m = (unsigned)unit_range(&g, 1, bundle_max);
            if (m > c - *i)
                m = c - *i;
            arrive_bundle(one ? 1 : 3, o + *i, m);
            *i += m;
        } else {
            arrive(one ? 1 : 3, o[(*i)++]);
        }
    }
    stream_check_end(1, what);
    stream_check_end(3, what);
    /* the run must have exercised what it claims to test */
    if (window > 1 && unit_failures == 0)
        CHECK(streams[1].m_ooo > 0, "%s: no frame arrived out of order", what);
    if (dup_pct && unit_failures == 0)
        CHECK(streams[1].m_dup > 0, "%s: no duplicate arrived", what);
    free(o1);
    free(o3);
    vc_teardown();
}

/* Hand-made cases with exact counters. */
static void run_fixed(void)
{
    vc_setup();
    stream_init(2, 65534, 6); /* PSNs 65534 65535 0 1 2 3 */
    /* 3 parked; 0 (PSN 65534) delivered, its second copy a duplicate; 5 parked, its second
     * copy a duplicate of a parked frame; 1 delivered alone (2 missing); 2 delivers 2 and 3
     * from the queue; 4 delivers 4 and 5; late copies of 3 and 0 are duplicates. */
    uint32_t order[] = {3, 0, 0, 5, 5, 1, 2, 4, 3, 0};
    for (size_t i = 0; i < sizeof order / sizeof *order; i++)
        arrive(2, order[i]);
    stream_check_end(2, "fixed");
    CHECK(streams[2].vc->ooo_frames == 2 && streams[2].vc->dup_frames == 4 && streams[2].vc->frames_in == 10,
          "fixed: ooo %llu dup %llu in %llu, expected 2 4 10", (unsigned long long)streams[2].vc->ooo_frames,
          (unsigned long long)streams[2].vc->dup_frames, (unsigned long long)streams[2].vc->frames_in);
    vc_teardown();

    /* the worst order of a 1000-frame window: last first, so 999 frames are parked and the
     * first one releases them all in one call */
    vc_setup();
    stream_init(1, 65000, 1000);
    for (uint32_t k = 999; k > 0; k--)
        arrive(1, k);
    CHECK(streams[1].next == 0, "reverse: %u frames delivered before the first arrived", streams[1].next);
    arrive(1, 0);
    stream_check_end(1, "reverse 1000");
    CHECK(streams[1].vc->ooo_frames == 999, "reverse: ooo_frames %llu", (unsigned long long)streams[1].vc->ooo_frames);
    vc_teardown();
}

/* Early frames hold at most rmpi_vc_ooo_max bytes: past it the peer is cut off (reported
 * once), its parked frames never reach the core, and later frames are dropped unread. */
static int ooo_cuts;
static char ooo_why[256];
static void on_cut(rmpi_vc_t *vc, const char *why)
{
    ooo_cuts++;
    snprintf(ooo_why, sizeof ooo_why, "%s", why);
}

static void run_ooo_bound(void)
{
    vc_setup();
    stream_init(0, 100, 1000);
    stream_t *s = &streams[0];
    rmpi_vc_on_cut = on_cut;
    rmpi_vc_ooo_max = 4096;
    int cut_at = -1;
    for (uint32_t k = 1; k < 1000 && cut_at < 0; k++) { /* frame 0 never comes */
        frame_fill(frame_buf, (uint16_t)(s->start + k), k, 0);
        delivering = 0;
        rmpi_vc_on_frame(&dummy_rail, 0, frame_buf, frame_len(k));
        if (ooo_cuts)
            cut_at = (int)k;
    }
    CHECK(cut_at > 0 && ooo_cuts == 1, "early frames never cut the peer off (%d cuts)", ooo_cuts);
    CHECK(s->vc->ooo_bytes <= 4096 + sizeof(rmpi_ooo_t) + MAXPAY + 4, "%zu bytes parked past a bound of 4096",
          s->vc->ooo_bytes);
    CHECK(strstr(ooo_why, "RMPI_UNEXP_MAX") != NULL, "the report does not name the knob: %s", ooo_why);
    /* the missing frame now comes: nothing of a cut-off peer is delivered */
    frame_fill(frame_buf, s->start, 0, 0);
    rmpi_vc_on_frame(&dummy_rail, 0, frame_buf, frame_len(0));
    CHECK(s->next == 0, "a cut-off peer's frames were delivered (%u)", s->next);
    delivering = -1;
    rmpi_vc_on_cut = NULL;
    rmpi_vc_ooo_max = SIZE_MAX;
    vc_teardown();
}

/* Malformed bundles: none of their frames reaches the core, the peer is cut off once. */
static void run_bad_bundles(void)
{
    rmpi_vc_on_cut = on_cut;
    static const struct {
        const char *what;
        unsigned char b[16];
        size_t len;
    } bad[] = {
        {"no record", {0, 0, RMPI_VC_BUNDLE, 0}, 4},
        {"a length cut short", {0, 0, RMPI_VC_BUNDLE, 0, 4, 0}, 6},
        {"a record shorter than a header", {0, 0, RMPI_VC_BUNDLE, 0, 3, 0, 0, 0, 0, 0, 1}, 11},
        {"a record past the end", {0, 0, RMPI_VC_BUNDLE, 0, 9, 0, 0, 0, 100, 0, 1, 0}, 12},
        {"a huge length", {0, 0, RMPI_VC_BUNDLE, 0, 0xff, 0xff, 0xff, 0xff, 100, 0, 1, 0}, 12},
        {"an ACK inside", {0, 0, RMPI_VC_BUNDLE, 0, 4, 0, 0, 0, 100, 0, RMPI_VC_ACK, 0}, 12},
        {"a bundle inside", {0, 0, RMPI_VC_BUNDLE, 0, 4, 0, 0, 0, 100, 0, RMPI_VC_BUNDLE, 0}, 12},
        /* a good record (PSN 100, delivered alone) then a bad one: neither is taken */
        {"a good record then garbage", {0, 0, RMPI_VC_BUNDLE, 0, 4, 0, 0, 0, 100, 0, 1, 0, 7}, 13},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        vc_setup();
        stream_init(0, 100, 10);
        ooo_cuts = 0;
        delivering = 0;
        rmpi_vc_on_frame(&dummy_rail, 0, bad[i].b, bad[i].len);
        delivering = -1;
        CHECK(ooo_cuts == 1 && streams[0].next == 0 && strstr(ooo_why, "bundle"), "%s: %d cuts, %u delivered (%s)",
              bad[i].what, ooo_cuts, streams[0].next, ooo_why);
        vc_teardown();
    }
    rmpi_vc_on_cut = NULL;
}

/* Every window size with 10% duplicates, in the current mode (bundles, acknowledgements). */
static void run_windows(const uint32_t *windows, size_t n, uint64_t seed)
{
    for (size_t w = 0; w < n && unit_failures < UNIT_MAX_FAILURES; w++)
        run(3000, windows[w], 10, 65500, 32768, seed + windows[w]);
}

/* Keep n frames with PSNs psn_next.. as rmpi_vc_send_on does on a VC of several rails. */
static void keep_frames(rmpi_vc_t *vc, int n)
{
    for (int i = 0; i < n; i++) {
        unsigned char f[40] = {0};
        rmpi_vc_hdr_t h = {vc->psn_next++, 1, 0};
        memcpy(f, &h, sizeof h);
        struct iovec iov = {f, sizeof f};
        rmpi_vc_keep(vc, 0, &iov, 1, sizeof f);
    }
}

/* One acknowledged arrival: header {ack, RMPI_VC_ACKED, flags}, then `in` (in_len bytes). */
static void arrive_acked(int peer, uint16_t ack, uint8_t flags, const unsigned char *in, size_t in_len)
{
    rmpi_vc_hdr_t a = {ack, RMPI_VC_ACKED, flags};
    memcpy(acked_buf, &a, sizeof a);
    memcpy(acked_buf + sizeof a, in, in_len);
    delivering = peer;
    rmpi_vc_on_frame(&dummy_rail, peer, acked_buf, sizeof a + in_len);
    delivering = -1;
}

static void run_acked(void)
{
    rmpi_vc_on_cut = on_cut;
    /* kept frames 7..11 (psn_next 12): an acknowledgement of 10 frees 7, 8 and 9 and their
     * buffers are reused; its frame is delivered */
    vc_setup();
    stream_init(0, 100, 10);
    rmpi_vc_t *vc = streams[0].vc;
    ooo_cuts = 0;
    vc->psn_next = 7;
    keep_frames(vc, 5);
    frame_fill(frame_buf, 100, 0, 0);
    streams[0].mnext = 1;
    arrive_acked(0, 10, 0, frame_buf, frame_len(0));
    CHECK(ooo_cuts == 0 && streams[0].next == 1, "acked: %d cuts (%s), %u delivered", ooo_cuts, ooo_why,
          streams[0].next);
    CHECK(vc->unacked_n == 2 && vc->unacked && vc->unacked->psn == 10 && vc->txfree_n == 3,
          "acked: %llu kept (first %d), %u spare buffers; want 2 (10), 3", (unsigned long long)vc->unacked_n,
          vc->unacked ? vc->unacked->psn : -1, vc->txfree_n);
    keep_frames(vc, 2);
    CHECK(vc->unacked_n == 4 && vc->txfree_n == 1, "acked: spare buffers not reused (%u left, %llu kept)", vc->txfree_n,
          (unsigned long long)vc->unacked_n);
    /* an old acknowledgement changes nothing and its frame is delivered */
    frame_fill(frame_buf, 101, 1, 0);
    streams[0].mnext = 2;
    arrive_acked(0, 3, 0, frame_buf, frame_len(1));
    CHECK(ooo_cuts == 0 && streams[0].next == 2 && vc->unacked_n == 4, "old ack: %d cuts, %u delivered, %llu kept",
          ooo_cuts, streams[0].next, (unsigned long long)vc->unacked_n);
    /* acknowledging PSN 15 when 14 is the next to send: cut, its frame not delivered */
    frame_fill(frame_buf, 102, 2, 0);
    arrive_acked(0, 15, 0, frame_buf, frame_len(2));
    CHECK(ooo_cuts == 1 && streams[0].next == 2 && strstr(ooo_why, "acknowledged"),
          "ack beyond what was sent: %d cuts, %u delivered (%s)", ooo_cuts, streams[0].next, ooo_why);
    vc_teardown();

    /* a plain ACK beyond what was sent cuts the peer off too */
    vc_setup();
    stream_init(0, 100, 10);
    ooo_cuts = 0;
    streams[0].vc->psn_next = 40000;
    unsigned char ack[4];
    rmpi_vc_hdr_t ah = {40001, RMPI_VC_ACK, 0};
    memcpy(ack, &ah, sizeof ah);
    rmpi_vc_on_frame(&dummy_rail, 0, ack, sizeof ack);
    CHECK(ooo_cuts == 1 && strstr(ooo_why, "acknowledged"), "ACK beyond what was sent: %d cuts (%s)", ooo_cuts,
          ooo_why);
    vc_teardown();

    static const struct {
        const char *what;
        unsigned char in[8];
        size_t len;
        uint8_t flags;
    } bad[] = {
        {"no frame behind it", {0}, 0, 0},
        {"a frame shorter than its header", {100, 0, 1}, 3, 0},
        {"flags set", {100, 0, 1, 0}, 4, 1},
        {"an ACK behind it", {100, 0, RMPI_VC_ACK, 0}, 4, 0},
        {"a bundle behind it", {0, 0, RMPI_VC_BUNDLE, 0, 4, 0, 0, 0}, 8, 0},
        {"a rail notice behind it", {1, 0, RMPI_VC_RAIL_DOWN, 0}, 4, 0},
        {"another acknowledgement behind it", {0, 0, RMPI_VC_ACKED, 0, 100, 0, 1, 0}, 8, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        vc_setup();
        stream_init(0, 100, 10);
        ooo_cuts = 0;
        arrive_acked(0, 0, bad[i].flags, bad[i].in, bad[i].len);
        CHECK(ooo_cuts == 1 && streams[0].next == 0 && strstr(ooo_why, "acknowledgement"),
              "%s: %d cuts, %u delivered (%s)", bad[i].what, ooo_cuts, streams[0].next, ooo_why);
        vc_teardown();
    }
    /* inside a bundle: a malformed bundle */
    vc_setup();
    stream_init(0, 100, 10);
    ooo_cuts = 0;
    static const unsigned char b[] = {0, 0, RMPI_VC_BUNDLE, 0, 8, 0, 0, 0, 0, 0, RMPI_VC_ACKED, 0, 100, 0, 1, 0};
    delivering = 0;
    rmpi_vc_on_frame(&dummy_rail, 0, b, sizeof b);
    delivering = -1;
    CHECK(ooo_cuts == 1 && streams[0].next == 0 && strstr(ooo_why, "bundle"),
          "acknowledgement in a bundle: %d cuts (%s)", ooo_cuts, ooo_why);
    vc_teardown();
    rmpi_vc_on_cut = NULL;
}

int main(void)
{
    /* rmpi_vc_init reads knobs and (with multirail) the node topology: a singleton has both */
    unit_singleton();
    rmpi_knobs_init();
    rmpi_pm_info_t pm;
    if (rmpi_pmi_init(&pm) || rmpi_topo_init(&pm)) {
        fprintf(stderr, "vc_reorder: singleton PMI/topology init failed\n");
        return 1;
    }
    snprintf(dummy_rail.hints.name, sizeof dummy_rail.hints.name, "dummy");
    dummy_rail.hints.max_frame = 1 << 20;

    run_fixed();
    static const uint32_t windows[] = {1, 2, 3, 7, 64, 333, 1000};
    for (size_t w = 0; w < sizeof windows / sizeof *windows && unit_failures < UNIT_MAX_FAILURES; w++) {
        uint32_t win = windows[w];
        run(3000, win, 0, 65500, 0, 100 + win);
        run(3000, win, 10, 65500, 32768, 200 + win);
        run(2500, win, 50, 65535 - win / 2, 65535, 300 + win);
    }
    run_ooo_bound();
    bundle_max = 5;
    run_windows(windows, sizeof windows / sizeof *windows, 400);
    bundle_max = 0;
    run_bad_bundles();
    acked_mode = 1;
    run_windows(windows, sizeof windows / sizeof *windows, 500);
    acked_mode = 0;
    run_acked();
    for (int p = 0; p < NPEERS; p++)
        free(streams[p].parked);
    rmpi_topo_finalize();
    rmpi_pmi_finalize();
    return finish("vc_reorder");
}
