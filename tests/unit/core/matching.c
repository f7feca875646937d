/*
 * Tag matching through the real core on a singleton (no process manager: size 1, the self
 * rail; frames sent before a progress call arrive, in order, during it). Every case runs in
 * the four combinations of rendezvous mode (read, write) and header caching (on, off), with
 * eager and rendezvous sizes:
 *  - receive posted before the message arrives, and message arriving first (unexpected);
 *  - MPI_ANY_SOURCE / MPI_ANY_TAG, and source selectivity (the header's source field);
 *  - non-overtaking: same envelope, different payloads and sizes (eager and rendezvous mixed),
 *    received in send order whether the receives were posted before or after;
 *  - a tag-selective receive takes a later message first; earlier-posted receives win;
 *  - different contexts never match; probe finds without removing;
 *  - truncation: st_err MPI_ERR_TRUNCATE, st_bytes = buffer size, the prefix delivered and
 *    not a byte beyond the buffer written;
 *  - cancel of a posted receive (and not of a matched one);
 *  - synchronous mode completes only after the receive matched;
 *  - random stress: 2000 sends and receives (random ctx, tag, source, size, wildcards, sync)
 *    posted in random order with random progress, against a model of MPI matching: which
 *    message each receive gets, status, truncation, data; sync and rendezvous sends never
 *    complete before they are matched; leftover receives cancel, leftover messages drain.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core_impl.h"

#include "../unit_check.h"

#define CTX 8u
#define EAGER_SZ 1000
#define RNDV_SZ 100000 /* above any default eager limit (intra 16 KiB, inter 64 KiB) */
#define GUARD 0xee

static const char *mode_name = "";

/* ---- helpers ---- */

static size_t eager_lim; /* the self rail's eager limit, read from the core */

/* Byte i of message id: differs between messages from the first byte on (almost always). */
static unsigned char pattern_byte(uint32_t id, size_t i)
{
    uint32_t h = id * 0x9e3779b1u;
    h ^= h >> 15;
    return (unsigned char)(h + (uint32_t)i * ((h >> 8) | 1u) + (uint32_t)(i >> 8));
}

static unsigned char *payload_new(uint32_t id, size_t len)
{
    unsigned char *p = malloc(len ? len : 1);
    for (size_t i = 0; i < len; i++)
        p[i] = pattern_byte(id, i);
    return p;
}

/* A receive buffer of cap bytes followed by 64 guard bytes. */
static unsigned char *rbuf_new(size_t cap)
{
    unsigned char *p = malloc(cap + 64);
    memset(p, GUARD, cap + 64);
    return p;
}

/* The first n bytes hold message id's payload and nothing after them (up to the end of the
 * guard) was touched. Returns the offset of the first wrong byte or -1. */
static long rbuf_bad(const unsigned char *p, size_t cap, uint32_t id, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern_byte(id, i))
            return (long)i;
    for (size_t i = n; i < cap + 64; i++)
        if (p[i] != GUARD)
            return (long)i;
    return -1;
}

static rmpi_req_t *isend(uint32_t ctx, int src, int tag, void *buf, size_t len, int mode)
{
    rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_SEND);
    r->buf = buf;
    r->len = len;
    r->rank = 0;
    r->ctx = ctx;
    r->tag = tag;
    r->src = src;
    r->mode = (uint8_t)mode;
    CHECK(rmpi_core_isend(r) == 0, "%s: isend failed", mode_name);
    return r;
}

static rmpi_req_t *irecv(uint32_t ctx, int src, int tag, void *buf, size_t len)
{
    rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_RECV);
    r->buf = buf;
    r->len = len;
    r->rank = src;
    r->ctx = ctx;
    r->tag = tag;
    CHECK(rmpi_core_irecv(r) == 0, "%s: irecv failed", mode_name);
    return r;
}

static void progress(int rounds)
{
    for (int i = 0; i < rounds; i++)
        rmpi_core_progress();
}

/* Progress until r completes; a bounded rmpi_core_wait. */
static int wait_req(rmpi_req_t *r, const char *what)
{
    for (int i = 0; i < 1000 && !r->done; i++)
        rmpi_core_progress();
    CHECK(r->done, "%s: %s never completed", mode_name, what);
    return r->done;
}

/* Check a completed receive got message id (len bytes, tag, src) into a buffer of cap. */
static void check_recv(rmpi_req_t *r, const unsigned char *buf, size_t cap, uint32_t id, size_t len, int src, int tag,
                       const char *what)
{
    if (!wait_req(r, what))
        return;
    size_t n = len < cap ? len : cap;
    CHECK(r->st_src == src && r->st_tag == tag, "%s: %s: status source %d tag %d, expected %d %d", mode_name, what,
          r->st_src, r->st_tag, src, tag);
    CHECK(r->st_bytes == n && r->st_msglen == len, "%s: %s: st_bytes %zu st_msglen %zu, expected %zu %zu", mode_name,
          what, r->st_bytes, r->st_msglen, n, len);
    CHECK(r->st_err == (len > cap ? MPI_ERR_TRUNCATE : 0), "%s: %s: st_err %d (message %zu bytes, buffer %zu)",
          mode_name, what, r->st_err, len, cap);
    long bad = rbuf_bad(buf, cap, id, n);
    CHECK(bad < 0, "%s: %s: byte %ld of the buffer is %#x (message %u, %zu of %zu bytes delivered, buffer %zu)",
          mode_name, what, bad, bad >= 0 ? buf[bad] : 0, id, n, len, cap);
}

/* ---- cases ---- */

/* One message, receive posted first or message first, exact or wildcard envelope. */
static void case_single(size_t len, size_t cap, int unexpected, int wsrc, int wtag)
{
    char what[128];
    snprintf(what, sizeof what, "single len %zu cap %zu %s src %d tag %d", len, cap,
             unexpected ? "unexpected" : "posted", wsrc, wtag);
    uint32_t id = (uint32_t)(len * 3 + cap + (size_t)unexpected);
    unsigned char *sb = payload_new(id, len), *rb = rbuf_new(cap);
    rmpi_req_t *s, *r;
    if (unexpected) {
        s = isend(CTX, 3, 42, sb, len, RMPI_MODE_STD);
        progress(1);
        rmpi_unexp_t *u = rmpi_core_probe_find(CTX, wsrc, wtag);
        CHECK(u && u->len == len && u->src == 3 && u->tag == 42, "%s: probe: %p", what, (void *)u);
        CHECK(rmpi_core_probe_find(CTX, wsrc, wtag) == u, "%s: probe is not idempotent", what);
        r = irecv(CTX, wsrc, wtag, rb, cap);
        CHECK(rmpi_core_probe_find(CTX, RMPI_ANY_SOURCE, RMPI_ANY_TAG) == NULL, "%s: message still queued", what);
    } else {
        r = irecv(CTX, wsrc, wtag, rb, cap);
        CHECK(!r->done, "%s: receive done before any send", what);
        s = isend(CTX, 3, 42, sb, len, RMPI_MODE_STD);
    }
    check_recv(r, rb, cap, id, len, 3, 42, what);
    wait_req(s, "send");
    CHECK(rmpi_core_probe_find(CTX, RMPI_ANY_SOURCE, RMPI_ANY_TAG) == NULL, "%s: a message left over", what);
    rmpi_req_release(r);
    rmpi_req_release(s);
    free(sb);
    free(rb);
}

/* Source and tag selectivity: messages (src, tag) = (1,5) (2,5) (1,6); receives that name a
 * source or tag skip the others. */
static void case_selective(size_t len, int unexpected)
{
    char what[96];
    snprintf(what, sizeof what, "selective len %zu %s", len, unexpected ? "unexpected" : "posted");
    const int msrc[3] = {1, 2, 1}, mtag[3] = {5, 5, 6};
    /* receive order: tag 6 (takes the last message), src 2 (the middle), then ANY/ANY */
    const int rsrc[3] = {RMPI_ANY_SOURCE, 2, RMPI_ANY_SOURCE}, rtag[3] = {6, RMPI_ANY_TAG, RMPI_ANY_TAG};
    const int want[3] = {2, 1, 0};
    unsigned char *sb[3], *rb[3];
    rmpi_req_t *s[3], *r[3];
    for (int i = 0; i < 3; i++) {
        sb[i] = payload_new(100 + (uint32_t)i, len);
        rb[i] = rbuf_new(len);
    }
    if (!unexpected)
        for (int i = 0; i < 3; i++)
            r[i] = irecv(CTX, rsrc[i], rtag[i], rb[i], len);
    for (int i = 0; i < 3; i++)
        s[i] = isend(CTX, msrc[i], mtag[i], sb[i], len, RMPI_MODE_STD);
    progress(1);
    if (unexpected) {
        CHECK(rmpi_core_probe_find(CTX, 2, 6) == NULL, "%s: probe (2, 6) found a message", what);
        rmpi_unexp_t *u = rmpi_core_probe_find(CTX, 1, RMPI_ANY_TAG);
        CHECK(u && u->tag == 5, "%s: probe (1, ANY) should find tag 5 first", what);
        u = rmpi_core_probe_find(CTX, RMPI_ANY_SOURCE, 6);
        CHECK(u && u->src == 1, "%s: probe (ANY, 6)", what);
        for (int i = 0; i < 3; i++)
            r[i] = irecv(CTX, rsrc[i], rtag[i], rb[i], len);
    }
    for (int i = 0; i < 3; i++) {
        char w[128];
        snprintf(w, sizeof w, "%s receive %d", what, i);
        check_recv(r[i], rb[i], len, 100 + (uint32_t)want[i], len, msrc[want[i]], mtag[want[i]], w);
    }
    for (int i = 0; i < 3; i++) {
        wait_req(s[i], "send");
        rmpi_req_release(s[i]);
        rmpi_req_release(r[i]);
        free(sb[i]);
        free(rb[i]);
    }
}

/* Non-overtaking: n messages with one envelope, sizes mixing eager and rendezvous. */
static void case_order(int unexpected, int wild)
{
    enum { N = 24 };
    char what[96];
    snprintf(what, sizeof what, "order %s%s", unexpected ? "unexpected" : "posted", wild ? " wildcard" : "");
    size_t len[N];
    unsigned char *sb[N], *rb[N];
    rmpi_req_t *s[N], *r[N];
    for (int i = 0; i < N; i++) {
        len[i] = (i % 5 == 3) ? RNDV_SZ + (size_t)i : (size_t)(i * 37 % 300);
        sb[i] = payload_new(200 + (uint32_t)i, len[i]);
        rb[i] = rbuf_new(RNDV_SZ + N);
    }
    int src = wild ? RMPI_ANY_SOURCE : 7, tag = wild ? RMPI_ANY_TAG : 9;
    if (!unexpected)
        for (int i = 0; i < N; i++)
            r[i] = irecv(CTX, src, tag, rb[i], RNDV_SZ + N);
    for (int i = 0; i < N; i++) {
        s[i] = isend(CTX, 7, 9, sb[i], len[i], RMPI_MODE_STD);
        if (i % 7 == 6)
            progress(1); /* some arrive while others are still being sent */
    }
    progress(1);
    if (unexpected)
        for (int i = 0; i < N; i++)
            r[i] = irecv(CTX, src, tag, rb[i], RNDV_SZ + N);
    for (int i = 0; i < N; i++) {
        char w[128];
        snprintf(w, sizeof w, "%s receive %d", what, i);
        check_recv(r[i], rb[i], RNDV_SZ + N, 200 + (uint32_t)i, len[i], 7, 9, w);
    }
    for (int i = 0; i < N; i++) {
        wait_req(s[i], "send");
        rmpi_req_release(s[i]);
        rmpi_req_release(r[i]);
        free(sb[i]);
        free(rb[i]);
    }
}

/* Earlier-posted receives win: ANY_TAG posted before tag 4 takes the first tag-4 message. */
static void case_posted_order(size_t len)
{
    unsigned char *sb0 = payload_new(300, len), *sb1 = payload_new(301, len);
    unsigned char *rb0 = rbuf_new(len), *rb1 = rbuf_new(len);
    rmpi_req_t *r0 = irecv(CTX, RMPI_ANY_SOURCE, RMPI_ANY_TAG, rb0, len);
    rmpi_req_t *r1 = irecv(CTX, 0, 4, rb1, len);
    rmpi_req_t *s0 = isend(CTX, 0, 4, sb0, len, RMPI_MODE_STD);
    rmpi_req_t *s1 = isend(CTX, 0, 4, sb1, len, RMPI_MODE_STD);
    check_recv(r0, rb0, len, 300, len, 0, 4, "posted order: first posted");
    check_recv(r1, rb1, len, 301, len, 0, 4, "posted order: second posted");
    wait_req(s0, "send");
    wait_req(s1, "send");
    rmpi_req_release(r0), rmpi_req_release(r1), rmpi_req_release(s0), rmpi_req_release(s1);
    free(sb0), free(sb1), free(rb0), free(rb1);
}

/* Contexts never match, even with wildcards; a message waits for a receive on its context. */
static void case_contexts(size_t len)
{
    unsigned char *sb = payload_new(400, len), *rb9 = rbuf_new(len), *rb8 = rbuf_new(len);
    rmpi_req_t *r9 = irecv(CTX + 1, RMPI_ANY_SOURCE, RMPI_ANY_TAG, rb9, len);
    rmpi_req_t *s = isend(CTX, 0, 1, sb, len, RMPI_MODE_STD);
    progress(5);
    CHECK(!r9->done, "%s: a receive on context %u took a message sent on %u", mode_name, CTX + 1, CTX);
    CHECK(rmpi_core_probe_find(CTX + 1, RMPI_ANY_SOURCE, RMPI_ANY_TAG) == NULL, "probe on the wrong context");
    CHECK(rmpi_core_probe_find(CTX, 0, 1) != NULL, "probe on the right context");
    CHECK(rmpi_core_cancel_recv(r9) == 1, "cancel");
    rmpi_req_t *r8 = irecv(CTX, RMPI_ANY_SOURCE, RMPI_ANY_TAG, rb8, len);
    check_recv(r8, rb8, len, 400, len, 0, 1, "contexts: right context");
    CHECK(rbuf_bad(rb9, len, 0, 0) < 0, "the wrong context's buffer was written");
    wait_req(s, "send");
    rmpi_req_release(r9), rmpi_req_release(r8), rmpi_req_release(s);
    free(sb), free(rb9), free(rb8);
}

/* Cancel a posted receive: it completes as cancelled; a later message is not delivered to
 * it; a matched receive cannot be cancelled. */
static void case_cancel(size_t len)
{
    unsigned char *sb = payload_new(500, len), *rb = rbuf_new(len), *rb2 = rbuf_new(len);
    rmpi_req_t *r = irecv(CTX, 0, 77, rb, len);
    CHECK(rmpi_core_cancel_recv(r) == 1, "%s: cancel of a posted receive returned 0", mode_name);
    CHECK(r->done && (r->flags & RMPI_RF_CANCELLED) && !(r->flags & RMPI_RF_POSTED),
          "cancelled receive: done %d flags %#x", r->done, r->flags);
    CHECK(rmpi_core_cancel_recv(r) == 0, "a second cancel returned 1");
    rmpi_req_t *s = isend(CTX, 0, 77, sb, len, RMPI_MODE_STD);
    progress(3);
    CHECK(rb[0] == GUARD, "%s: the message went into the cancelled receive", mode_name);
    CHECK(rmpi_core_probe_find(CTX, 0, 77) != NULL, "%s: the message is not in the unexpected queue", mode_name);
    rmpi_req_t *r2 = irecv(CTX, 0, 77, rb2, len);
    check_recv(r2, rb2, len, 500, len, 0, 77, "after cancel");
    CHECK(rmpi_core_cancel_recv(r2) == 0, "%s: cancel of a matched receive returned 1", mode_name);
    wait_req(s, "send");
    rmpi_req_release(r), rmpi_req_release(r2), rmpi_req_release(s);
    free(sb), free(rb), free(rb2);
}

/* Truncation, posted and unexpected. */
static void case_truncate(size_t len, size_t cap)
{
    for (int unexpected = 0; unexpected < 2; unexpected++) {
        char what[96];
        snprintf(what, sizeof what, "truncate %zu into %zu %s", len, cap, unexpected ? "unexpected" : "posted");
        uint32_t id = 600 + (uint32_t)unexpected;
        unsigned char *sb = payload_new(id, len), *rb = rbuf_new(cap);
        rmpi_req_t *s, *r;
        if (unexpected) {
            s = isend(CTX, 2, 3, sb, len, RMPI_MODE_STD);
            progress(1);
            r = irecv(CTX, 2, 3, rb, cap);
        } else {
            r = irecv(CTX, 2, 3, rb, cap);
            s = isend(CTX, 2, 3, sb, len, RMPI_MODE_STD);
        }
        check_recv(r, rb, cap, id, len, 2, 3, what);
        wait_req(s, "truncated send");
        rmpi_req_release(r), rmpi_req_release(s);
        free(sb), free(rb);
    }
}

/* Synchronous mode: not complete until matched, however long the progress. */
static void case_sync(size_t len, int posted)
{
    char what[64];
    snprintf(what, sizeof what, "sync len %zu %s", len, posted ? "posted" : "unexpected");
    unsigned char *sb = payload_new(700, len), *rb = rbuf_new(len);
    rmpi_req_t *r = NULL;
    if (posted)
        r = irecv(CTX, 0, 11, rb, len);
    rmpi_req_t *s = isend(CTX, 0, 11, sb, len, RMPI_MODE_SYNC);
    progress(20);
    if (!posted) {
        CHECK(!s->done, "%s: %s: the send completed before any receive was posted", mode_name, what);
        CHECK(rmpi_core_probe_find(CTX, 0, 11) != NULL, "%s: not queued", what);
        r = irecv(CTX, 0, 11, rb, len);
    }
    check_recv(r, rb, len, 700, len, 0, 11, what);
    wait_req(s, what);
    rmpi_req_release(r), rmpi_req_release(s);
    free(sb), free(rb);
}

/* ---- random stress against a model of MPI matching ---- */

#define NMSG 2000
#define NCTX 3
#define NSRC 3
#define NTAG 5

typedef struct smsg {
    uint32_t ctx;
    int src, tag, mode;
    size_t len;
    unsigned char *buf;
    rmpi_req_t *req;
    int sent, arrived, matched_by; /* model: -1 none */
} smsg_t;

typedef struct srecv {
    uint32_t ctx;
    int src, tag;
    size_t cap;
    unsigned char *buf;
    rmpi_req_t *req;
    int posted, matched; /* model: message index or -1 */
    int cancelled, checked;
} srecv_t;

static smsg_t msgs[NMSG];
static srecv_t recvs[NMSG];
static int m_posted[NCTX][NMSG], m_nposted[NCTX]; /* model: pending receives, posting order */
static int m_unexp[NCTX][NMSG], m_nunexp[NCTX];   /* model: unexpected messages, arrival order */
static int m_flight[NMSG], m_nflight;             /* sent, not yet arrived */

static int env_match(int wsrc, int wtag, int src, int tag)
{
    return (wsrc == RMPI_ANY_SOURCE || wsrc == src) && (wtag == RMPI_ANY_TAG || wtag == tag);
}

static void list_remove(int *a, int *n, int k)
{
    memmove(a + k, a + k + 1, (size_t)(*n - k - 1) * sizeof *a);
    (*n)--;
}

static void model_match(int m, int r)
{
    msgs[m].matched_by = r;
    recvs[r].matched = m;
}

static void model_post(int r)
{
    srecv_t *x = &recvs[r];
    int c = (int)(x->ctx - CTX);
    for (int k = 0; k < m_nunexp[c]; k++) {
        smsg_t *m = &msgs[m_unexp[c][k]];
        if (env_match(x->src, x->tag, m->src, m->tag)) {
            model_match(m_unexp[c][k], r);
            list_remove(m_unexp[c], &m_nunexp[c], k);
            return;
        }
    }
    m_posted[c][m_nposted[c]++] = r;
}

static void model_progress(void)
{
    for (int i = 0; i < m_nflight; i++) {
        int mi = m_flight[i];
        smsg_t *m = &msgs[mi];
        int c = (int)(m->ctx - CTX), hit = 0;
        m->arrived = 1;
        for (int k = 0; k < m_nposted[c]; k++) {
            srecv_t *x = &recvs[m_posted[c][k]];
            if (env_match(x->src, x->tag, m->src, m->tag)) {
                model_match(mi, m_posted[c][k]);
                list_remove(m_posted[c], &m_nposted[c], k);
                hit = 1;
                break;
            }
        }
        if (!hit)
            m_unexp[c][m_nunexp[c]++] = mi;
    }
    m_nflight = 0;
}

static void stress_progress(void)
{
    rmpi_core_progress();
    model_progress();
    /* a synchronous or rendezvous send never completes before its message is matched */
    for (int i = 0; i < NMSG; i++) {
        smsg_t *m = &msgs[i];
        if (m->sent && m->req && m->req->done && m->matched_by < 0)
            CHECK(m->mode != RMPI_MODE_SYNC && m->len <= eager_lim,
                  "%s: stress: message %d (%zu bytes, %s) completed before it was matched", mode_name, i, m->len,
                  m->mode == RMPI_MODE_SYNC ? "sync" : "standard");
    }
}

static void stress_check_recv(int r)
{
    srecv_t *x = &recvs[r];
    if (x->checked)
        return;
    x->checked = 1;
    smsg_t *m = &msgs[x->matched];
    char what[96];
    snprintf(what, sizeof what, "stress receive %d (ctx %u src %d tag %d cap %zu) = message %d", r, x->ctx, x->src,
             x->tag, x->cap, x->matched);
    check_recv(x->req, x->buf, x->cap, 10000 + (uint32_t)x->matched, m->len, m->src, m->tag, what);
}

static void case_stress(uint64_t seed)
{
    unit_rng_t g = unit_seed(seed);
    memset(m_nposted, 0, sizeof m_nposted);
    memset(m_nunexp, 0, sizeof m_nunexp);
    m_nflight = 0;
    uint64_t rndv0 = rmpi_core_stats.rndv, short0 = rmpi_core_stats.eager_short;
    for (int i = 0; i < NMSG; i++) {
        smsg_t *m = &msgs[i];
        uint64_t k = unit_range(&g, 0, 99);
        m->len = k < 60   ? (size_t)unit_range(&g, 0, 64)
                 : k < 90 ? (size_t)unit_range(&g, 65, 16000)
                          : (size_t)unit_range(&g, 70000, 150000);
        m->ctx = CTX + (uint32_t)unit_range(&g, 0, NCTX - 1);
        /* runs of one envelope so header caching has something to cache */
        if (i > 0 && unit_range(&g, 0, 2) == 0) {
            m->ctx = msgs[i - 1].ctx, m->src = msgs[i - 1].src, m->tag = msgs[i - 1].tag;
        } else {
            m->src = (int)unit_range(&g, 0, NSRC - 1);
            m->tag = (int)unit_range(&g, 0, NTAG - 1);
        }
        m->mode = unit_range(&g, 0, 9) == 0 ? RMPI_MODE_SYNC : RMPI_MODE_STD;
        m->buf = payload_new(10000 + (uint32_t)i, m->len);
        m->req = NULL;
        m->sent = m->arrived = 0;
        m->matched_by = -1;
        /* the receive made for this message: same context, wildcards sometimes, a buffer
         * that is sometimes too small */
        srecv_t *x = &recvs[i];
        x->ctx = m->ctx;
        x->src = unit_range(&g, 0, 3) == 0 ? RMPI_ANY_SOURCE : m->src;
        x->tag = unit_range(&g, 0, 3) == 0 ? RMPI_ANY_TAG : m->tag;
        x->cap = unit_range(&g, 0, 9) == 0 ? m->len / 2 : m->len + (size_t)unit_range(&g, 0, 100);
        x->buf = rbuf_new(x->cap);
        x->req = NULL;
        x->posted = x->cancelled = x->checked = 0;
        x->matched = -1;
    }
    /* Events: the sends in message order (their envelopes are random already, with runs for
     * the header cache) randomly merged with the receives in a random order. ev[] holds
     * 2*i for the send of message i, 2*i+1 for receive i. */
    int *rord = malloc(NMSG * sizeof *rord), *ev = malloc(2 * NMSG * sizeof *ev);
    for (int i = 0; i < NMSG; i++)
        rord[i] = i;
    for (int i = NMSG; i > 1; i--) {
        int j = (int)unit_range(&g, 0, (uint64_t)i - 1), t = rord[i - 1];
        rord[i - 1] = rord[j];
        rord[j] = t;
    }
    for (int e = 0, ns = 0, nr = 0; e < 2 * NMSG; e++) {
        if (nr == NMSG || (ns < NMSG && unit_range(&g, 0, 1)))
            ev[e] = 2 * ns++;
        else
            ev[e] = 2 * rord[nr++] + 1;
    }
    free(rord);
    for (int e = 0; e < 2 * NMSG && !unit_failures; e++) {
        int i = ev[e] / 2;
        if (ev[e] % 2 == 0) {
            smsg_t *m = &msgs[i];
            m->req = isend(m->ctx, m->src, m->tag, m->buf, m->len, m->mode);
            m->sent = 1;
            m_flight[m_nflight++] = i;
        } else {
            srecv_t *x = &recvs[i];
            x->req = irecv(x->ctx, x->src, x->tag, x->buf, x->cap);
            x->posted = 1;
            model_post(i);
            if (x->matched >= 0 && !(x->req->done || msgs[x->matched].len > eager_lim))
                CHECK(0, "%s: stress receive %d matched an unexpected eager message but is not complete", mode_name, i);
        }
        if (unit_range(&g, 0, 4) == 0)
            stress_progress();
        /* now and then check the receives the model says are matched */
        if (e % 97 == 0)
            for (int r = 0; r < NMSG; r++)
                if (recvs[r].posted && recvs[r].matched >= 0 && recvs[r].req->done)
                    stress_check_recv(r);
    }
    stress_progress();
    if (unit_failures)
        return;
    /* receives the model says can never match are still pending: cancel them */
    int ncancel = 0, nleft = 0;
    for (int r = 0; r < NMSG; r++) {
        srecv_t *x = &recvs[r];
        if (x->matched < 0) {
            CHECK(!x->req->done, "%s: stress receive %d completed, but the model matched nothing to it", mode_name, r);
            CHECK(rmpi_core_cancel_recv(x->req) == 1, "%s: stress receive %d could not be cancelled", mode_name, r);
            x->cancelled = 1;
            ncancel++;
        }
    }
    for (int r = 0; r < NMSG; r++)
        if (!recvs[r].cancelled)
            stress_check_recv(r);
    /* messages the model left unexpected: drain them per context in arrival order */
    for (int c = 0; c < NCTX; c++) {
        for (int k = 0; k < m_nunexp[c]; k++) {
            int mi = m_unexp[c][k];
            smsg_t *m = &msgs[mi];
            unsigned char *rb = rbuf_new(m->len);
            rmpi_req_t *r = irecv(CTX + (uint32_t)c, RMPI_ANY_SOURCE, RMPI_ANY_TAG, rb, m->len);
            char what[64];
            snprintf(what, sizeof what, "stress drain message %d", mi);
            check_recv(r, rb, m->len, 10000 + (uint32_t)mi, m->len, m->src, m->tag, what);
            rmpi_req_release(r);
            free(rb);
            nleft++;
        }
        CHECK(rmpi_core_probe_find(CTX + (uint32_t)c, RMPI_ANY_SOURCE, RMPI_ANY_TAG) == NULL,
              "%s: stress: context %u has messages the model does not know", mode_name, CTX + c);
    }
    CHECK(ncancel == nleft, "cancelled %d, left %d", ncancel, nleft);
    if (unit_failures)
        return;
    for (int i = 0; i < NMSG; i++) {
        wait_req(msgs[i].req, "stress send");
        rmpi_req_release(msgs[i].req);
        rmpi_req_release(recvs[i].req);
        free(msgs[i].buf);
        free(recvs[i].buf);
    }
    free(ev);
    CHECK(rmpi_core_stats.rndv - rndv0 > 100, "%s: stress: only %llu rendezvous sends", mode_name,
          (unsigned long long)(rmpi_core_stats.rndv - rndv0));
    if (rmpi_hdr_cache)
        CHECK(rmpi_core_stats.eager_short - short0 > 100, "%s: stress: only %llu cached-header frames", mode_name,
              (unsigned long long)(rmpi_core_stats.eager_short - short0));
    else
        CHECK(rmpi_core_stats.eager_short == short0, "%s: cached-header frames with caching off", mode_name);
    printf("%s: stress: %d cancelled receives / drained messages\n", mode_name, ncancel);
}

/* Stop at the first case that failed: later cases would trip over its leftovers (posted
 * receives, queued messages) and only add noise. */
#define STEP(call)         \
    do {                   \
        call;              \
        if (unit_failures) \
            return;        \
    } while (0)

static void run_all(uint64_t seed)
{
    static const size_t sizes[] = {0, 1, 8, EAGER_SZ, 16383, 16384, 16385, 65536, 65537, RNDV_SZ, 1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        for (int unexp = 0; unexp < 2; unexp++) {
            STEP(case_single(sizes[i], sizes[i], unexp, 3, 42));
            STEP(case_single(sizes[i], sizes[i] + 10, unexp, RMPI_ANY_SOURCE, 42));
            STEP(case_single(sizes[i], sizes[i], unexp, 3, RMPI_ANY_TAG));
            STEP(case_single(sizes[i], sizes[i], unexp, RMPI_ANY_SOURCE, RMPI_ANY_TAG));
        }
    for (int unexp = 0; unexp < 2; unexp++) {
        STEP(case_selective(EAGER_SZ, unexp));
        STEP(case_selective(RNDV_SZ, unexp));
        STEP(case_order(unexp, 0));
        STEP(case_order(unexp, 1));
    }
    STEP(case_posted_order(16));
    STEP(case_posted_order(RNDV_SZ));
    STEP(case_contexts(16));
    STEP(case_contexts(RNDV_SZ));
    STEP(case_cancel(16));
    STEP(case_cancel(RNDV_SZ));
    STEP(case_truncate(100, 60));
    STEP(case_truncate(100, 0));
    STEP(case_truncate(RNDV_SZ * 2, 70000));
    STEP(case_truncate(RNDV_SZ * 2, 100));
    STEP(case_truncate(RNDV_SZ * 2, 0));
    for (int posted = 0; posted < 2; posted++) {
        STEP(case_sync(0, posted));
        STEP(case_sync(EAGER_SZ, posted));
        STEP(case_sync(RNDV_SZ, posted));
    }
    STEP(case_stress(seed));
}

int main(void)
{
    unit_watchdog("core_matching", 20, "a request never completed?");
    unit_singleton();
    /* The sizes below straddle a 16k eager limit (the intra default is smaller). */
    setenv("RMPI_EAGER_LIMIT", "16k", 1);
    rmpi_core_info_t info;
    if (rmpi_core_init(&info)) {
        fprintf(stderr, "core_matching: rmpi_core_init failed on a singleton\n");
        return 1;
    }
    CHECK(info.rank == 0 && info.size == 1 && info.singleton, "singleton: rank %d size %d singleton %d", info.rank,
          info.size, info.singleton);
    eager_lim = rmpi_core_peer(rmpi_vc_get(0))->eager_limit;
    CHECK(EAGER_SZ <= eager_lim && 16000 <= eager_lim && 70000 > eager_lim && RNDV_SZ > eager_lim,
          "the sizes here assume an eager limit between 16000 and 70000 bytes; the core has %zu", eager_lim);
    static const struct {
        int write, cache;
        const char *name;
    } modes[] = {{0, 1, "rndv read, header cache"},
                 {1, 1, "rndv write, header cache"},
                 {0, 0, "rndv read, no header cache"},
                 {1, 0, "rndv write, no header cache"}};
    for (size_t i = 0; i < sizeof modes / sizeof *modes && !unit_failures; i++) {
        /* the mode is decided per peer; set it on the self VC these tests use */
        rmpi_core_peer(rmpi_vc_get(0))->rndv_write = modes[i].write;
        rmpi_hdr_cache = modes[i].cache;
        mode_name = modes[i].name;
        run_all(77 + i);
    }
    if (!unit_failures) /* after a failure requests may still be queued: do not finalize */
        CHECK(rmpi_core_finalize() == 0, "rmpi_core_finalize failed");
    return finish("core_matching");
}
