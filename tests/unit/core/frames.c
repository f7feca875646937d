/*
 * Malformed and hostile frames at the core's entry (rmpi_vc_on_frame -> rmpi_core_deliver),
 * on a singleton's self virtual channel: each must cut the peer off (reported through
 * rmpi_vc_on_cut, which the job's default turns into an error that ends it) and never crash,
 * hang or touch memory a frame names:
 *  - frames shorter than their header: a 6-byte EAGER, a 2-byte frame, a short FIN;
 *  - a FIN or SYNC_ACK naming a request this rank does not have, naming a live request by
 *    its address (ids are table entries, never pointers), or naming one twice;
 *  - a CTS asking for more bytes than the message has; an RTS with the wrong number of rkeys;
 *  - rendezvous by frames: CTS FRAGS without credit or beyond the message, with PIECES too;
 *    CREDIT not above the last, beyond the message, short, for a receive or a completed
 *    send; DATA of 0 bytes, out of order, beyond the credit, for a send (and valid ones
 *    complete both sides, bytes in order);
 *  - EAGER_SHORT before any EAGER; an unknown type; unknown flags; wildcard source or tag;
 *  - a context id of 0x80000000 (the queue table's growth wrapped and spun forever): cut
 *    off (ids stop at RMPI_CTX_MAX), at once and without growing the table; one beyond the
 *    table but below RMPI_CTX_MAX: queued, not grown into, matched once the context exists;
 *  - a flood of unexpected messages: the peer is cut off past RMPI_UNEXP_MAX, naming it;
 *  - a PSN out of sequence on a virtual channel of one rail (nothing to park it for).
 * Every frame is fed at an odd address, as tcp delivers them (under UBSan, a misaligned
 * read in the core fails this test).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core_impl.h"

#include "../unit_check.h"

static rmpi_vc_t *vc;
static int cuts;
static char last_why[512];

static void on_cut(rmpi_vc_t *v, const char *why)
{
    cuts++;
    snprintf(last_why, sizeof last_why, "%s", why);
}

/* Deliver len bytes at an odd address with the next PSN. Returns 1 when it cut the peer. */
static int feed(const void *frame, size_t len)
{
    static char buf[1 + 4096 + 70000];
    int before = cuts;
    memcpy(buf + 1, frame, len);
    if (len >= sizeof(rmpi_vc_hdr_t)) {
        uint16_t psn = vc->psn_expect;
        memcpy(buf + 1, &psn, sizeof psn);
    }
    vc->cut = 0;
    rmpi_vc_on_frame(vc->sub[0].rail, 0, buf + 1, len);
    return cuts > before;
}

static int mustcut(const void *frame, size_t len, const char *what)
{
    int cut = feed(frame, len);
    CHECK(cut, "%s: the peer was not cut off", what);
    return cut;
}

static void progress(void)
{
    for (int i = 0; i < 10; i++)
        rmpi_core_progress();
}

static rmpi_req_t *isend(uint32_t ctx, int tag, void *buf, size_t len, int mode)
{
    rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_SEND);
    r->buf = buf, r->len = len, r->rank = 0, r->ctx = ctx, r->tag = tag, r->src = 0, r->mode = (uint8_t)mode;
    rmpi_core_isend(r);
    return r;
}

static void short_frames(void)
{
    wire_match_t m = {{0, RMPI_F_EAGER, 0}, 8, 0, 1};
    mustcut(&m, 6, "6-byte EAGER");
    mustcut(&m, 2, "2-byte frame");
    wire_req_t f = {{0, RMPI_F_FIN, 0}, 1, 1};
    mustcut(&f, 10, "10-byte FIN");
    struct {
        wire_match_t m;
        uint32_t half;
    } s = {{{0, RMPI_F_EAGER, RMPI_FF_SYNC}, 8, 0, 1}, 0};
    mustcut(&s, sizeof s, "sync EAGER without its whole request id");
}

static void request_ids(void)
{
    wire_req_t f = {{0, RMPI_F_FIN, 0}, 1, 0x1234};
    mustcut(&f, sizeof f, "FIN naming an unknown request");
    f.req = 0;
    mustcut(&f, sizeof f, "FIN naming request 0");
    f.h.type = RMPI_F_SYNC_ACK;
    f.req = ~0ull;
    mustcut(&f, sizeof f, "SYNC_ACK naming request ~0");

    /* A rendezvous send waiting for its FIN: its address is not its name. */
    static char big[100000];
    rmpi_req_t *r = isend(20, 5, big, sizeof big, RMPI_MODE_STD);
    progress();
    CHECK(!r->done && r->wire_id != 0, "rendezvous send done %d id %#llx", r->done, (unsigned long long)r->wire_id);
    f = (wire_req_t){{0, RMPI_F_FIN, 0}, 1, (uintptr_t)r};
    mustcut(&f, sizeof f, "FIN naming a live request by its address");
    CHECK(!r->done, "a FIN naming the request's address completed it");
    f.req = r->wire_id;
    f.h.type = RMPI_F_SYNC_ACK;
    mustcut(&f, sizeof f, "SYNC_ACK naming a rendezvous send");
    f.h.type = RMPI_F_FIN;
    f.count = RMPI_VC_MAX_SUB + 1;
    mustcut(&f, sizeof f, "FIN with a count above the subchannels");
    f.count = 2;
    CHECK(!feed(&f, sizeof f) && !r->done, "first of two FINs: cut or completed");
    f.count = 3;
    mustcut(&f, sizeof f, "second FIN announcing another count");
    f.count = 2;
    uint64_t id = r->wire_id;
    CHECK(!feed(&f, sizeof f) && r->done, "second of two FINs: cut %s or not complete", last_why);
    CHECK(r->wire_id == 0, "the id outlived the request's last FIN");
    f.req = id;
    mustcut(&f, sizeof f, "a third FIN for a completed request");

    /* CTS: at most the message, once, with one rkey per subchannel. */
    rmpi_req_t *s = isend(20, 6, big, sizeof big, RMPI_MODE_STD);
    progress();
    wire_cts_t c = {{0, RMPI_F_CTS, 0}, 1, s->wire_id, 0, 0, sizeof big + 1, {0}};
    size_t clen = RMPI_WIRE_KEYS_LEN(wire_cts_t, 1);
    mustcut(&c, clen, "CTS for more bytes than the message");
    c.len = 0;
    mustcut(&c, clen, "CTS for 0 bytes");
    c.len = 100;
    c.nkeys = 1000;
    mustcut(&c, clen, "CTS with 1000 rkeys");
    c.nkeys = 1;
    mustcut(&c, clen - 1, "CTS one byte short");
    c.h.flags = RMPI_FF_PIECES;
    mustcut(&c, clen + 8, "CTS with PIECES for a contiguous send");
    c.h.flags = 0x80;
    mustcut(&c, clen, "CTS with an unknown flag");

    /* A synchronous send is acknowledged once. */
    char b8[8] = {0};
    rmpi_req_t *y = isend(21, 7, b8, sizeof b8, RMPI_MODE_SYNC);
    progress();
    CHECK(!y->done && y->wire_id, "sync send done %d before its ack", y->done);
    f = (wire_req_t){{0, RMPI_F_SYNC_ACK, 0}, 1, y->wire_id};
    CHECK(!feed(&f, sizeof f) && y->done, "SYNC_ACK: cut (%s) or not complete", last_why);
    mustcut(&f, sizeof f, "a second SYNC_ACK");
    rmpi_req_release(y);
}

/* Rendezvous by frames: CTS FRAGS and CREDIT to a send, DATA to a receive, each checked. */
static void frags(void)
{
    static char big[100000], got[50000];
    rmpi_req_t *s = isend(22, 8, big, sizeof big, RMPI_MODE_STD);
    progress();
    wire_cts_t c = {{0, RMPI_F_CTS, RMPI_FF_FRAGS}, 1, s->wire_id, 77, 0, sizeof big, {0}};
    size_t clen = RMPI_WIRE_KEYS_LEN(wire_cts_t, 1);
    mustcut(&c, clen, "CTS FRAGS with no credit");
    c.addr = sizeof big + 1;
    mustcut(&c, clen, "CTS FRAGS with credit beyond the message");
    c.addr = 1000;
    c.h.flags = RMPI_FF_FRAGS | RMPI_FF_PIECES;
    mustcut(&c, clen + 8, "CTS with both FRAGS and PIECES");
    c.h.flags = RMPI_FF_FRAGS;
    CHECK(!feed(&c, clen) && !s->done && s->frag_done == 1000, "CTS FRAGS: cut (%s), done %d, sent %zu", last_why,
          s->done, s->frag_done);
    progress(); /* the DATA frames went to this process itself, naming no receive of its own: cut there */
    wire_frag_t k = {{0, RMPI_F_CREDIT, 0}, 0, s->wire_id, 1000};
    mustcut(&k, sizeof k, "CREDIT not above the last one");
    k.at = sizeof big + 1;
    mustcut(&k, sizeof k, "CREDIT beyond the message");
    k.at = 5000;
    mustcut(&k, sizeof k - 1, "CREDIT one byte short");
    struct {
        wire_frag_t f;
        char data[4];
    } kd = {k, "abc"};
    kd.f.h.type = RMPI_F_DATA;
    mustcut(&kd, sizeof kd, "DATA naming a send");
    CHECK(!feed(&k, sizeof k) && !s->done && s->frag_done == 5000, "CREDIT: cut (%s), sent %zu", last_why,
          s->frag_done);
    progress();
    k.at = sizeof big;
    uint64_t id = s->wire_id;
    CHECK(!feed(&k, sizeof k) && s->done && s->wire_id == 0, "last CREDIT: cut (%s), done %d", last_why, s->done);
    progress();
    k.at = sizeof big + 1;
    k.req = id;
    mustcut(&k, sizeof k, "CREDIT for a completed send");
    rmpi_req_release(s);

    /* A receive matched by an RTS FRAGS asks for DATA and takes it in order, within credit. */
    rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_RECV);
    r->buf = got, r->len = sizeof got, r->rank = RMPI_ANY_SOURCE, r->ctx = 22, r->tag = 9;
    rmpi_core_irecv(r);
    wire_rts_t t = {{{0, RMPI_F_RTS, RMPI_FF_FRAGS | RMPI_FF_GATHER}, 22, 0, 9}, 5, sizeof got, 0, 1, 0, {0}};
    mustcut(&t, RMPI_WIRE_KEYS_LEN(wire_rts_t, 1), "RTS with GATHER and FRAGS");
    t.m.h.flags = RMPI_FF_FRAGS;
    CHECK(!feed(&t, RMPI_WIRE_KEYS_LEN(wire_rts_t, 1)) && r->wire_id && r->frag_limit == sizeof got,
          "RTS FRAGS: cut (%s), id %#llx, credit %zu", last_why, (unsigned long long)r->wire_id, r->frag_limit);
    progress(); /* its CTS FRAGS came back here naming send 5, which does not exist: cut there */
    static struct {
        wire_frag_t f;
        char data[sizeof got + 1];
    } d;
    for (size_t i = 0; i < sizeof d.data; i++)
        d.data[i] = (char)(i * 7);
    d.f = (wire_frag_t){{0, RMPI_F_DATA, 0}, 0, r->wire_id, 0};
    mustcut(&d, sizeof d.f, "DATA of 0 bytes");
    d.f.at = 10;
    mustcut(&d, sizeof d.f + 100, "DATA at an offset not yet reached");
    d.f.at = 0;
    mustcut(&d, sizeof d, "DATA beyond the credit");
    d.f.h.type = RMPI_F_CREDIT;
    mustcut(&d, sizeof d.f, "CREDIT naming a receive");
    d.f.h.type = RMPI_F_DATA;
    CHECK(!feed(&d, sizeof d.f + 30000) && !r->done && r->frag_done == 30000, "first DATA: cut (%s), got %zu", last_why,
          r->frag_done);
    memmove(d.data, d.data + 30000, sizeof got - 30000);
    d.f.at = 30000;
    CHECK(!feed(&d, sizeof d.f + sizeof got - 30000) && r->done && r->st_bytes == sizeof got,
          "last DATA: cut (%s), done %d", last_why, r->done);
    int same = 1;
    for (size_t i = 0; i < sizeof got; i++)
        same &= got[i] == (char)(i * 7);
    CHECK(same, "the DATA frames' bytes did not land in order");
    rmpi_req_release(r);
}

static void envelopes(void)
{
    /* a fresh peer state: EAGER_SHORT may only repeat an EAGER's header */
    ((core_peer_t *)vc->core)->rx_valid = 0;
    rmpi_vc_hdr_t h = {0, RMPI_F_EAGER_SHORT, 0};
    mustcut(&h, sizeof h, "EAGER_SHORT before any EAGER");
    h.type = 77;
    mustcut(&h, sizeof h, "type 77");
    h.type = 0;
    mustcut(&h, sizeof h, "type 0");
    wire_match_t m = {{0, RMPI_F_EAGER, 0x40}, 8, 0, 1};
    mustcut(&m, sizeof m, "EAGER with an unknown flag");
    m.h.flags = 0;
    m.src = -1;
    mustcut(&m, sizeof m, "EAGER from source ANY_SOURCE");
    m.src = 0;
    m.tag = RMPI_ANY_TAG;
    mustcut(&m, sizeof m, "EAGER with tag ANY_TAG");
    wire_rts_t t = {{{0, RMPI_F_RTS, 0}, 8, 0, 1}, 1, 10, 0, 0, 0, {0}};
    mustcut(&t, RMPI_WIRE_KEYS_LEN(wire_rts_t, 0), "RTS without rkeys");
    t.nkeys = 0x10000000;
    mustcut(&t, RMPI_WIRE_KEYS_LEN(wire_rts_t, 1), "RTS claiming 2^28 rkeys");
    t.nkeys = 1;
    mustcut(&t, RMPI_WIRE_KEYS_LEN(wire_rts_t, 1) + 1, "RTS with a trailing byte");
}

static void contexts(void)
{
    size_t table = rmpi_nctxq;
    struct {
        wire_match_t m;
        char data[4];
    } e = {{{0, RMPI_F_EAGER, 0}, 0x80000000u, 0, 3}, "abc"};
    unit_watchdog("core_frames", 10, "a frame on context 0x80000000 made the core spin");
    CHECK(feed(&e, sizeof e), "EAGER on context 0x80000000: not cut off");
    unit_watchdog("core_frames", 60, "a frame made the core spin");
    CHECK(rmpi_nctxq == table, "a frame grew the context table from %zu to %zu", table, rmpi_nctxq);
    /* a context beyond the table: queued, and received once this process makes it */
    uint32_t ctx = (uint32_t)rmpi_nctxq + 1000;
    e.m.ctx = ctx;
    memcpy(e.data, "xyz", 4);
    CHECK(!feed(&e, sizeof e), "EAGER on a context beyond the table: cut (%s)", last_why);
    char got[4] = {0};
    rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_RECV);
    r->buf = got, r->len = sizeof got, r->rank = RMPI_ANY_SOURCE, r->ctx = ctx, r->tag = 3;
    rmpi_core_irecv(r);
    CHECK(r->done && !memcmp(got, "xyz", 4), "the early message was not received (done %d, '%.4s')", r->done, got);
    rmpi_req_release(r);
}

static void flood(void)
{
    core_peer_t *cp = vc->core;
    size_t before = cp->unexp_bytes;
    rmpi_core_unexp_max = before + 64 * 1024;
    static struct {
        wire_match_t m;
        char data[1024];
    } e = {{{0, RMPI_F_EAGER, 0}, 30, 0, 9}, {0}};
    int cut_at = -1;
    for (int i = 0; i < 1000 && cut_at < 0; i++)
        if (feed(&e, sizeof e))
            cut_at = i;
    CHECK(cut_at > 0 && cut_at < 70, "flood of 1 KiB messages cut after %d", cut_at);
    CHECK(strstr(last_why, "RMPI_UNEXP_MAX") && strstr(last_why, "from rank 0"),
          "the flood's report names neither the knob nor the peer: %s", last_why);
    CHECK(cp->unexp_bytes <= rmpi_core_unexp_max + sizeof(rmpi_unexp_t) + sizeof e,
          "%zu bytes queued past a bound of %zu", cp->unexp_bytes, rmpi_core_unexp_max);
    /* the bound counts what is queued: receiving frees it */
    for (int i = 0; i <= cut_at; i++) {
        char sink[1024];
        rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_RECV);
        r->buf = sink, r->len = sizeof sink, r->rank = 0, r->ctx = 30, r->tag = 9;
        rmpi_core_irecv(r);
        CHECK(r->done, "flood message %d not received", i);
        rmpi_req_release(r);
    }
    CHECK(cp->unexp_bytes == before, "%zu bytes still counted after receiving them all (%zu before)", cp->unexp_bytes,
          before);
    rmpi_core_unexp_max = SIZE_MAX;
}

int main(void)
{
    unit_watchdog("core_frames", 60, "a frame made the core spin");
    unit_singleton();
    rmpi_core_info_t info;
    if (rmpi_core_init(&info)) {
        fprintf(stderr, "core_frames: rmpi_core_init failed on a singleton\n");
        return 1;
    }
    rmpi_vc_on_cut = on_cut;
    vc = rmpi_vc_get(0);
    rmpi_core_peer(vc);
    short_frames();
    request_ids();
    frags();
    envelopes();
    contexts();
    flood();
    /* one rail delivers in order: a PSN ahead of the expected one is not parked */
    struct {
        wire_match_t m;
        char data[64];
    } e = {{{(uint16_t)(vc->psn_expect + 5), RMPI_F_EAGER, 0}, 32, 0, 1}, {0}};
    vc->cut = 0;
    int c0 = cuts;
    rmpi_vc_on_frame(vc->sub[0].rail, 0, &e, sizeof e);
    CHECK(cuts == c0 + 1 && vc->ooo == NULL, "a frame 5 PSNs early on a one-rail VC: cut %d, parked %d", cuts - c0,
          vc->ooo != NULL);
    /* a cut peer's frames are dropped unread: even a valid one */
    wire_match_t m = {{vc->psn_expect, RMPI_F_EAGER, 0}, 31, 0, 1};
    vc->cut = 1;
    uint64_t before = rmpi_core_stats.unexpected;
    rmpi_vc_on_frame(vc->sub[0].rail, 0, &m, sizeof m);
    CHECK(rmpi_core_stats.unexpected == before, "a cut-off peer's frame was delivered");
    vc->cut = 0;
    return finish("core_frames");
}
