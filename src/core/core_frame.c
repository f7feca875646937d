/* Where frames enter the core: every field of every frame type (docs/wire/core.md) is
 * checked here before a protocol acts on it, and request ids carried on the wire are looked
 * up in a table, never turned into pointers. A peer whose frame breaks the format is cut off
 * (rmpi_vc_cut) and reported. Frames may lie at any alignment in a provider's receive
 * buffer (tcp delivers them where they follow the previous one), so headers are copied out
 * with memcpy: on x86-64 that is the same unaligned load a cast would make. */
#include "core_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- request ids ---- */

typedef struct wire_slot {
    rmpi_req_t *req;    /* NULL: free */
    rmpi_vc_t *vc;      /* the only peer whose frames may name it */
    uint32_t gen;       /* bumped at every free, so a stale id never matches */
    unsigned want;      /* RMPI_WANT_* still admitted */
    uint32_t next_free; /* free list: next free slot + 1; 0: end */
} wire_slot_t;

static wire_slot_t *slots;
static uint32_t nslots, free_head; /* free_head: first free slot + 1 */

uint64_t rmpi_core_wire_id(rmpi_req_t *r, rmpi_vc_t *vc, unsigned want)
{
    if (r->wire_id) {
        /* a persistent request restarted, or a send whose RTS went again: a fresh id */
        rmpi_core_wire_id_free(r);
    }
    if (!free_head) {
        uint32_t n = nslots ? 2 * nslots : 64;
        slots = rmpi_xrealloc(slots, (size_t)n * sizeof *slots);
        for (uint32_t i = nslots; i < n; i++)
            slots[i] = (wire_slot_t){NULL, NULL, 1, 0, i + 1 < n ? i + 2 : 0};
        free_head = nslots + 1;
        nslots = n;
    }
    uint32_t i = free_head - 1;
    wire_slot_t *s = &slots[i];
    free_head = s->next_free;
    s->req = r;
    s->vc = vc;
    s->want = want;
    r->wire_id = (uint64_t)s->gen << 32 | (i + 1);
    return r->wire_id;
}

void rmpi_core_wire_want(rmpi_req_t *r, unsigned want) { slots[(uint32_t)r->wire_id - 1].want |= want; }

void rmpi_core_wire_id_free(rmpi_req_t *r)
{
    uint32_t i = (uint32_t)r->wire_id - 1;
    if (!r->wire_id || i >= nslots || slots[i].req != r)
        return;
    wire_slot_t *s = &slots[i];
    if (RMPI_UNLIKELY(r->flags & RMPI_RF_CANCELLING)) {
        s->want &= RMPI_WANT_CANCEL_ACK; /* the protocol is over, the cancel's answer is still due */
        return;
    }
    s->req = NULL;
    s->vc = NULL;
    s->want = 0;
    s->gen = s->gen + 1 ? s->gen + 1 : 1;
    s->next_free = free_head;
    free_head = i + 1;
    r->wire_id = 0;
}

void rmpi_core_wire_finalize(void)
{
    free(slots);
    slots = NULL;
    nslots = free_head = 0;
}

/* r's id no longer admits the frame types in want. */
static void wire_unwant(rmpi_req_t *r, unsigned want) { slots[(uint32_t)r->wire_id - 1].want &= ~want; }

/* The request a frame of vc's peer names by id, if that id is live, belongs to that peer
 * and admits the frame type; else NULL. */
static rmpi_req_t *wire_req(rmpi_vc_t *vc, uint64_t id, unsigned want)
{
    uint32_t i = (uint32_t)id - 1;
    if (i >= nslots)
        return NULL;
    wire_slot_t *s = &slots[i];
    if (!s->req || s->gen != (uint32_t)(id >> 32) || s->vc != vc || !(s->want & want))
        return NULL;
    return s->req;
}

/* ---- checks ---- */

/* The checks below are inlined into the EAGER path (a few compares on the fast path); what
 * they do when a check fails, and the other frame types, stay out of line. */
#define INLINE static inline __attribute__((always_inline))
#define OUT_OF_LINE static __attribute__((noinline))

static void bad(rmpi_vc_t *vc, const char *fmt, ...) __attribute__((format(printf, 2, 3), cold, noinline));
static void bad(rmpi_vc_t *vc, const char *fmt, ...)
{
    char what[256], why[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(why, sizeof why, "rank %d sent a malformed frame: %s (docs/wire/core.md)", vc->peer, what);
    rmpi_vc_cut(vc, why);
}

static const char *const type_name[] = {"?",        "EAGER",  "EAGER_SHORT", "RTS",  "CTS",   "FIN",
                                        "SYNC_ACK", "CANCEL", "CANCEL_ACK",  "DATA", "CREDIT"};

/* A message's envelope: a context id below RMPI_CTX_MAX (one this process has not created
 * yet waits), a real rank and a real tag (never the wildcards a receive uses). */
INLINE int envelope_ok(rmpi_vc_t *vc, unsigned type, uint32_t ctx, int32_t src, int32_t tag)
{
    if (ctx >= RMPI_CTX_MAX || src < 0 || tag == RMPI_ANY_TAG) {
        bad(vc, "%s with context %#x, source %d and tag %d", type_name[type], ctx, (int)src, (int)tag);
        return 0;
    }
    return 1;
}

INLINE int flags_ok(rmpi_vc_t *vc, unsigned type, unsigned flags, unsigned allowed)
{
    if (flags & ~allowed) {
        bad(vc, "%s with flags %#x", type_name[type], flags);
        return 0;
    }
    return 1;
}

INLINE int length_ok(rmpi_vc_t *vc, unsigned type, size_t len, size_t want, int exact)
{
    if (exact ? len != want : len < want) {
        bad(vc, "%s of %zu bytes, %s %zu", type_name[type], len, exact ? "not" : "shorter than", want);
        return 0;
    }
    return 1;
}

/* The flags are the type's own and the frame holds its fixed part: copy that to dst. */
INLINE int fixed_part(rmpi_vc_t *vc, unsigned type, unsigned flags, unsigned allowed, const char *frame, size_t len,
                      void *dst, size_t fixed)
{
    if (!flags_ok(vc, type, flags, allowed) || !length_ok(vc, type, len, fixed, 0))
        return 0;
    memcpy(dst, frame, fixed);
    return 1;
}

/* RTS and CTS carry one rkey per subchannel, and both peers see the same subchannels. */
static int nkeys_ok(rmpi_vc_t *vc, unsigned type, uint32_t nkeys)
{
    if (nkeys != (uint32_t)vc->nsub) {
        bad(vc, "%s with %u rkey(s) on a virtual channel of %d subchannel(s)", type_name[type], nkeys, vc->nsub);
        return 0;
    }
    return 1;
}

static rmpi_req_t *req_ok(rmpi_vc_t *vc, unsigned type, uint64_t id, unsigned want)
{
    rmpi_req_t *r = wire_req(vc, id, want);
    if (!r)
        bad(vc, "%s naming request %#llx, which this rank does not expect it for", type_name[type],
            (unsigned long long)id);
    return r;
}

/* ---- frame types ---- */

INLINE void on_eager(rmpi_vc_t *vc, core_peer_t *cp, unsigned flags, const char *frame, size_t len)
{
    wire_match_t m;
    uint64_t sreq = 0;
    size_t hl = sizeof m;
    int sync = flags & RMPI_FF_SYNC;
    if (!fixed_part(vc, RMPI_F_EAGER, flags, RMPI_FF_SYNC, frame, len, &m, sizeof m) ||
        (sync && !length_ok(vc, RMPI_F_EAGER, len, hl + sizeof sreq, 0)) ||
        !envelope_ok(vc, RMPI_F_EAGER, m.ctx, m.src, m.tag))
        return;
    if (sync) {
        memcpy(&sreq, frame + hl, sizeof sreq);
        hl += sizeof sreq;
    }
    cp->rx_ctx = m.ctx, cp->rx_src = m.src, cp->rx_tag = m.tag, cp->rx_valid = 1;
    rmpi_core_eager_arrived(vc, m.ctx, m.src, m.tag, frame + hl, len - hl, sync, sreq);
}

OUT_OF_LINE void on_rts(rmpi_vc_t *vc, unsigned flags, const char *frame, size_t len)
{
    wire_rts_t f;
    size_t fixed = offsetof(wire_rts_t, rkey);
    if (!fixed_part(vc, RMPI_F_RTS, flags, RMPI_FF_GATHER | RMPI_FF_FRAGS, frame, len, &f, fixed) ||
        !flags_ok(vc, RMPI_F_RTS, flags, flags & RMPI_FF_GATHER ? RMPI_FF_GATHER : RMPI_FF_FRAGS) ||
        !envelope_ok(vc, RMPI_F_RTS, f.m.ctx, f.m.src, f.m.tag) || !nkeys_ok(vc, RMPI_F_RTS, f.nkeys) ||
        !length_ok(vc, RMPI_F_RTS, len, RMPI_WIRE_KEYS_LEN(wire_rts_t, f.nkeys), 1))
        return;
    if (f.len > SIZE_MAX) {
        bad(vc, "RTS of a %llu-byte message", (unsigned long long)f.len);
        return;
    }
    memcpy(f.rkey, frame + fixed, f.nkeys * sizeof *f.rkey);
    rmpi_core_rts_arrived(vc, &f);
}

OUT_OF_LINE void on_cts(rmpi_vc_t *vc, unsigned flags, const char *frame, size_t len)
{
    wire_cts_t f;
    size_t fixed = offsetof(wire_cts_t, rkey);
    if (!fixed_part(vc, RMPI_F_CTS, flags, RMPI_FF_PIECES | RMPI_FF_FRAGS, frame, len, &f, fixed) ||
        !flags_ok(vc, RMPI_F_CTS, flags, flags & RMPI_FF_PIECES ? RMPI_FF_PIECES : RMPI_FF_FRAGS))
        return;
    size_t keys = RMPI_WIRE_KEYS_LEN(wire_cts_t, f.nkeys);
    if (!nkeys_ok(vc, RMPI_F_CTS, f.nkeys) || !length_ok(vc, RMPI_F_CTS, len, keys, !(flags & RMPI_FF_PIECES)))
        return;
    memcpy(f.rkey, frame + fixed, f.nkeys * sizeof *f.rkey);
    rmpi_req_t *r = req_ok(vc, RMPI_F_CTS, f.sreq, RMPI_WANT_CTS);
    if (!r)
        return;
    /* The receiver takes at most what is sent: more would push bytes beyond the send buffer. */
    if (f.len == 0 || f.len > r->len) {
        bad(vc, "CTS asking for %llu bytes of a %zu-byte message", (unsigned long long)f.len, r->len);
        return;
    }
    if ((flags & RMPI_FF_FRAGS) && (f.addr == 0 || f.addr > f.len)) {
        bad(vc, "CTS FRAGS allowing %llu bytes of %llu", (unsigned long long)f.addr, (unsigned long long)f.len);
        return;
    }
    wire_cts_pieces_t ph = {0, 0};
    const char *pieces = NULL;
    if (flags & RMPI_FF_PIECES) {
        if (!length_ok(vc, RMPI_F_CTS, len, keys + sizeof ph, 0))
            return;
        memcpy(&ph, frame + keys, sizeof ph);
        pieces = frame + keys + sizeof ph;
        if (!(r->flags & RMPI_RF_SEGS) || ph.n == 0 || ph.n > RMPI_CTS_PIECES_MAX ||
            len - keys - sizeof ph != (size_t)ph.n * sizeof(rmpi_rndv_piece_t)) {
            bad(vc, "CTS of %zu bytes listing %u piece(s)%s", len, ph.n,
                r->flags & RMPI_RF_SEGS ? "" : " for a message that is not sent in pieces");
            return;
        }
        uint64_t total = 0;
        for (uint32_t i = 0; i < ph.n; i++) {
            rmpi_rndv_piece_t p;
            memcpy(&p, pieces + (size_t)i * sizeof p, sizeof p);
            if (p.len > UINT64_MAX - total) {
                bad(vc, "CTS whose pieces add up to more than 2^64 bytes");
                return;
            }
            total += p.len;
        }
        if (total < f.len) {
            bad(vc, "CTS whose %u pieces hold %llu bytes of %llu", ph.n, (unsigned long long)total,
                (unsigned long long)f.len);
            return;
        }
    }
    wire_unwant(r, RMPI_WANT_CTS); /* one CTS per rendezvous */
    if (flags & RMPI_FF_FRAGS) {   /* then CREDITs, and no FIN: the last DATA frame ends it */
        wire_unwant(r, RMPI_WANT_FIN);
        rmpi_core_wire_want(r, RMPI_WANT_CREDIT);
    }
    rmpi_core_cts_arrived(vc, r, &f, pieces, ph.n);
}

/* DATA: the next bytes of the message, within the credit given; CREDIT: more of it. */
OUT_OF_LINE void on_frag(rmpi_vc_t *vc, unsigned type, unsigned flags, const char *frame, size_t len)
{
    wire_frag_t f;
    if (!fixed_part(vc, type, flags, 0, frame, len, &f, sizeof f) ||
        (type == RMPI_F_CREDIT && !length_ok(vc, type, len, sizeof f, 1)))
        return;
    rmpi_req_t *r = req_ok(vc, type, f.req, type == RMPI_F_DATA ? RMPI_WANT_DATA : RMPI_WANT_CREDIT);
    if (!r)
        return;
    size_t n = len - sizeof f;
    if (type == RMPI_F_CREDIT) {
        if (f.at <= r->frag_limit || f.at > r->st_bytes) {
            bad(vc, "CREDIT up to byte %llu after %zu of a %zu-byte message", (unsigned long long)f.at, r->frag_limit,
                r->st_bytes);
            return;
        }
        rmpi_core_frag_credit(r, (size_t)f.at);
        return;
    }
    if (f.at != r->frag_done || n == 0 || n > r->frag_limit - r->frag_done) {
        bad(vc, "DATA of %zu bytes at byte %llu where %zu came in and %zu are allowed", n, (unsigned long long)f.at,
            r->frag_done, r->frag_limit);
        return;
    }
    rmpi_core_frag_data(r, frame + sizeof f, n);
}

/* The receiver's answer to a send's CANCEL: withdrawn (the message is gone, so is every
 * frame that could still name the request), or matched (the protocol goes on, or ended
 * while the answer was on its way and the request was held). */
static void cancel_answered(rmpi_req_t *r, uint32_t withdrawn)
{
    r->flags &= (uint16_t)~RMPI_RF_CANCELLING;
    wire_unwant(r, RMPI_WANT_CANCEL_ACK);
    if (withdrawn) {
        rmpi_core_wire_id_free(r);
        rmpi_rndv_drop(r);
        r->st_err = 0;
        r->flags |= RMPI_RF_CANCELLED;
        /* A send from the user's buffer completes when the provider lets go of it. */
        if (!(r->flags & RMPI_RF_ZC)) {
            r->flags &= (uint16_t)~RMPI_RF_HELD;
            rmpi_req_complete(r);
        }
        return;
    }
    if (r->flags & RMPI_RF_HELD) {
        r->flags &= (uint16_t)~RMPI_RF_HELD;
        rmpi_core_wire_id_free(r);
        rmpi_req_complete(r);
    }
}

/* A peer asks to withdraw its message; the answer names its request. */
OUT_OF_LINE void on_cancel(rmpi_vc_t *vc, unsigned flags, const char *frame, size_t len)
{
    wire_cancel_t f;
    if (!length_ok(vc, RMPI_F_CANCEL, len, sizeof f, 1) ||
        !fixed_part(vc, RMPI_F_CANCEL, flags, 0, frame, len, &f, sizeof f))
        return;
    if (f.seq >= vc->rx_frames) {
        bad(vc, "CANCEL of a message it has not sent yet (frame %llu of %llu)", (unsigned long long)f.seq,
            (unsigned long long)vc->rx_frames);
        return;
    }
    wire_req_t a = {{0, RMPI_F_CANCEL_ACK, 0}, (uint32_t)rmpi_core_unexp_withdraw(vc, f.ctx, f.seq), f.req};
    struct iovec iov = {&a, sizeof a};
    rmpi_vc_send(vc, &iov, 1, sizeof a);
}

OUT_OF_LINE void on_req_frame(rmpi_vc_t *vc, unsigned type, unsigned flags, const char *frame, size_t len)
{
    wire_req_t f;
    if (!length_ok(vc, type, len, sizeof f, 1) || !fixed_part(vc, type, flags, 0, frame, len, &f, sizeof f))
        return;
    uint32_t most = type == RMPI_F_FIN ? RMPI_VC_MAX_SUB : 1, least = type == RMPI_F_CANCEL_ACK ? 0 : 1;
    if (f.count < least || f.count > most) {
        bad(vc, "%s with count %u", type_name[type], f.count);
        return;
    }
    unsigned want = type == RMPI_F_FIN        ? RMPI_WANT_FIN
                    : type == RMPI_F_SYNC_ACK ? RMPI_WANT_SYNC_ACK
                                              : RMPI_WANT_CANCEL_ACK;
    rmpi_req_t *r = req_ok(vc, type, f.req, want);
    if (!r)
        return;
    if (type == RMPI_F_CANCEL_ACK) {
        cancel_answered(r, f.count);
        return;
    }
    if (type == RMPI_F_SYNC_ACK) {
        rmpi_core_wire_id_free(r);
        rmpi_req_complete(r);
        return;
    }
    if (rmpi_rndv_fin(r, f.count))
        bad(vc, "FIN with count %u for a request whose earlier FINs said otherwise", f.count);
}

void rmpi_core_deliver(rmpi_vc_t *vc, const void *frame, size_t len)
{
    rmpi_vc_hdr_t h;
    core_peer_t *cp = vc->core;
    rmpi_chan_lib_note(vc->peer, len); /* every frame in order from a peer, counted once */
    memcpy(&h, frame, sizeof h);       /* the VC checked len >= sizeof h */
    switch (h.type) {
    case RMPI_F_EAGER_SHORT:
        if (RMPI_UNLIKELY(h.flags || !cp->rx_valid)) {
            bad(vc, h.flags ? "EAGER_SHORT with flags %#x" : "EAGER_SHORT before any EAGER (flags %#x)", h.flags);
            return;
        }
        rmpi_core_eager_arrived(vc, cp->rx_ctx, cp->rx_src, cp->rx_tag, (const char *)frame + sizeof h, len - sizeof h,
                                0, 0);
        return;
    case RMPI_F_EAGER: on_eager(vc, cp, h.flags, frame, len); return;
    case RMPI_F_RTS: on_rts(vc, h.flags, frame, len); return;
    case RMPI_F_CTS: on_cts(vc, h.flags, frame, len); return;
    case RMPI_F_FIN:
    case RMPI_F_SYNC_ACK:
    case RMPI_F_CANCEL_ACK: on_req_frame(vc, h.type, h.flags, frame, len); return;
    case RMPI_F_CANCEL: on_cancel(vc, h.flags, frame, len); return;
    case RMPI_F_DATA:
    case RMPI_F_CREDIT: on_frag(vc, h.type, h.flags, frame, len); return;
    default: bad(vc, "unknown frame type %u (mixed RailMPI versions?)", h.type);
    }
}
