/* rma/target.c, the checks a target makes before it touches memory for a one-sided
 * message (docs/wire/rma.md): am_check (header, kinds, tags, lock types, segment lists,
 * data sizes, predefined op and element type), target_base (the range against a window of
 * known size, with negative segment offsets and overflowing displacements; against the
 * attached regions of a dynamic window, which may touch but not leave gaps), accumulate
 * through a segment list, and the lock manager's grant rule (lock_try takes what it grants). Every answer is compared with
 * a model computed here (128-bit arithmetic, a byte map of the attached regions).
 * These functions are static: the file is included, and the archive's copy of target.o is
 * then never linked (this unit defines every symbol it exports). */
#include "rma/target.c"

#include "../unit_check.h"

static rmpi_comm_t comm4 = {.size = 4};

/* A window of `bytes` at base (flavor create) or dynamic with regions. */
static rmpi_win_t mkwin(int flavor, void *base, size_t bytes)
{
    rmpi_win_t w;
    memset(&w, 0, sizeof w);
    w.flavor = flavor;
    w.base = base;
    w.bytes = bytes;
    w.comm = &comm4;
    return w;
}

/* ---- target_base ---- */

static int model_fixed(uint64_t disp, uint64_t bytes, const rma_seg_t *s, uint32_t nseg, size_t winbytes)
{
    if (!bytes)
        return 1;
    __int128 lo = 0, hi = (__int128)bytes;
    if (nseg) {
        lo = s[0].off, hi = (__int128)s[0].off + s[0].len;
        for (uint32_t i = 1; i < nseg; i++) {
            if (s[i].off < lo)
                lo = s[i].off;
            if ((__int128)s[i].off + s[i].len > hi)
                hi = (__int128)s[i].off + s[i].len;
        }
    }
    __int128 a = (__int128)disp + lo, b = (__int128)disp + hi;
    /* the displacement itself must lie in the window; then every byte touched */
    return disp <= winbytes && a >= 0 && b <= (__int128)winbytes && b <= INT64_MAX;
}

static void fixed_window(void)
{
    static char mem[4096];
    rmpi_win_t w = mkwin(MPI_WIN_FLAVOR_CREATE, mem, sizeof mem);
    rma_hdr_t h = {0};
    /* contiguous ranges at the edges */
    static const struct {
        uint64_t disp, bytes;
        int ok;
    } c[] = {{0, 4096, 1},      {1, 4096, 0},       {4095, 1, 1},
             {4096, 1, 0},      {4096, 0, 1},       {5000, 0, 1} /* zero bytes: no memory is touched */,
             {0, 4097, 0},      {UINT64_MAX, 1, 0}, {1ull << 63, 8, 0},
             {INT64_MAX, 2, 0}, {2048, 2048, 1},    {2048, 2049, 0}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        h.disp = c[i].disp;
        h.bytes = c[i].bytes;
        h.nseg = 0;
        char *p = target_base(&w, &h, NULL);
        CHECK((p != NULL) == c[i].ok, "disp %llu bytes %llu: %s", (unsigned long long)c[i].disp,
              (unsigned long long)c[i].bytes, p ? "accepted" : "refused");
        if (p && c[i].bytes)
            CHECK(p == mem + c[i].disp, "disp %llu: base %p, expected %p", (unsigned long long)c[i].disp, (void *)p,
                  (void *)(mem + c[i].disp));
    }
    /* segments: negative offsets reach below disp, never below the window */
    rma_seg_t s[3] = {{-100, 10}, {0, 10}, {50, 6}};
    h.bytes = 26;
    h.nseg = 3;
    h.disp = 100;
    CHECK(target_base(&w, &h, s) == mem + 100, "segments from disp-100 accepted");
    h.disp = 99;
    CHECK(target_base(&w, &h, s) == NULL, "a segment one byte below the window accepted");
    h.disp = 4096 - 56;
    CHECK(target_base(&w, &h, s) == mem + 4040, "segments ending at the window's end refused");
    h.disp = 4096 - 55;
    CHECK(target_base(&w, &h, s) == NULL, "a segment one byte past the end accepted");

    /* random segment lists against the model */
    unit_rng_t r = unit_seed(11);
    for (int t = 0; t < 200000; t++) {
        rma_seg_t seg[4];
        uint32_t n = (uint32_t)unit_range(&r, 0, 4);
        uint64_t total = 0;
        for (uint32_t i = 0; i < n; i++) {
            int far = unit_range(&r, 0, 20) == 0;
            seg[i].off = far ? (int64_t)(unit_rand(&r) >> 2) * (unit_range(&r, 0, 1) ? 1 : -1)
                             : (int64_t)unit_range(&r, 0, 9000) - 4500;
            seg[i].len = unit_range(&r, 0, 600);
            if (seg[i].off > INT64_MAX - (int64_t)seg[i].len)
                seg[i].len = 0; /* am_check refuses those before target_base runs */
            total += seg[i].len;
        }
        h.nseg = n;
        h.bytes = n ? total : unit_range(&r, 0, 5000);
        int farout = unit_range(&r, 0, 50) == 0;
        h.disp = farout ? unit_rand(&r) : unit_range(&r, 0, 5000);
        if (!h.bytes)
            continue; /* zero bytes: the window's base, wherever disp points (see above) */
        int want = model_fixed(h.disp, h.bytes, seg, n, sizeof mem);
        char *p = target_base(&w, &h, seg);
        CHECK((p != NULL) == want, "case %d: disp %llu, %u segments, %llu bytes: %s, the model says %s", t,
              (unsigned long long)h.disp, n, (unsigned long long)h.bytes, p ? "accepted" : "refused",
              want ? "inside" : "outside");
        CHECK_BAIL();
    }
}

/* ---- dynamic windows ---- */

#define SPACE 1024
static unsigned char covered[SPACE];

static void dyn_case(rmpi_win_t *w, char *space, uint64_t a, uint64_t len, const char *what)
{
    rma_hdr_t h = {0};
    h.disp = (uint64_t)(uintptr_t)(space + a);
    h.bytes = len;
    int want = 1;
    for (uint64_t i = a; i < a + len; i++)
        if (i >= SPACE || !covered[i])
            want = 0;
    if (!len)
        return; /* zero bytes touch no memory: any base will do (handle() checks only when bytes > 0) */
    char *p = target_base(w, &h, NULL);
    CHECK((p != NULL) == want, "%s: [%llu, +%llu): %s, the regions say %s", what, (unsigned long long)a,
          (unsigned long long)len, p ? "accepted" : "refused", want ? "covered" : "not covered");
    if (p && len)
        CHECK(p == space + a, "%s: address %p, expected %p", what, (void *)p, (void *)(space + a));
}

static void dynamic_window(void)
{
    static char space[SPACE + 64];
    rmpi_win_t w = mkwin(MPI_WIN_FLAVOR_DYNAMIC, NULL, 0);
    rmpi_net_range_t reg[8];
    w.regions.r = reg;
    /* regions [100,200) [200,300) touch, then a gap, [400,500); attached out of order */
    reg[0] = (rmpi_net_range_t){(uintptr_t)(space + 400), 100};
    reg[1] = (rmpi_net_range_t){(uintptr_t)(space + 200), 100};
    reg[2] = (rmpi_net_range_t){(uintptr_t)(space + 100), 100};
    w.regions.n = 3;
    memset(covered, 0, sizeof covered);
    memset(covered + 100, 1, 200);
    memset(covered + 400, 1, 100);
    dyn_case(&w, space, 150, 100, "across two touching regions");
    dyn_case(&w, space, 100, 200, "both touching regions whole");
    dyn_case(&w, space, 250, 100, "into the gap");
    dyn_case(&w, space, 99, 2, "from below the first region");
    dyn_case(&w, space, 299, 102, "across the gap");
    dyn_case(&w, space, 499, 1, "the last byte");
    dyn_case(&w, space, 499, 2, "past the last region");
    dyn_case(&w, space, 600, 0, "zero bytes anywhere");
    /* a range whose end wraps around the address space */
    rma_hdr_t h = {0};
    h.disp = (uint64_t)(uintptr_t)(space + 150);
    h.bytes = UINT64_MAX - h.disp + 10;
    CHECK(target_base(&w, &h, NULL) == NULL, "a range wrapping around the address space accepted");

    /* random region sets (disjoint, some touching) against the byte map */
    unit_rng_t r = unit_seed(5);
    for (int t = 0; t < 3000; t++) {
        memset(covered, 0, sizeof covered);
        int n = 0;
        uint64_t at = unit_range(&r, 0, 60);
        while (n < 8 && at < SPACE - 1) {
            uint64_t len = unit_range(&r, 1, 150);
            if (at + len > SPACE)
                len = SPACE - at;
            reg[n++] = (rmpi_net_range_t){(uintptr_t)(space + at), len};
            memset(covered + at, 1, len);
            at += len + (unit_range(&r, 0, 2) ? 0 : unit_range(&r, 1, 80));
        }
        /* attach order is not address order */
        for (int i = n - 1; i > 0; i--) {
            int j = (int)unit_range(&r, 0, (uint64_t)i);
            rmpi_net_range_t x = reg[i];
            reg[i] = reg[j];
            reg[j] = x;
        }
        w.regions.n = n;
        for (int k = 0; k < 20; k++) {
            uint64_t a = unit_range(&r, 0, SPACE - 1), len = unit_range(&r, 0, 400);
            if (a + len > SPACE + 64)
                len = SPACE + 64 - a;
            dyn_case(&w, space, a, len, "random regions");
        }
        CHECK_BAIL();
    }
}

/* ---- am_check ---- */

static size_t msg_of(char *buf, const rma_hdr_t *h, const rma_seg_t *segs, uint32_t nseg, size_t data)
{
    memcpy(buf, h, sizeof *h);
    if (nseg) /* segs may be NULL then, and memcpy's pointers must be valid even for 0 bytes */
        memcpy(buf + sizeof *h, segs, nseg * sizeof *segs);
    memset(buf + sizeof *h + nseg * sizeof *segs, 0, data);
    return sizeof *h + nseg * sizeof *segs + data;
}

static void expect_check(const rmpi_win_t *w, int origin, const char *msg, size_t len, const char *want,
                         const char *what)
{
    /* as the target reads a message: active messages back to back, each padded to 8 */
    rma_hdr_t h;
    const char *got = NULL;
    for (size_t pos = 0; pos < len && !got;) {
        size_t amlen = 0;
        rmpi_coll_kernel_t kern;
        size_t hlen;
        got = am_check(w, origin, msg + pos, len - pos, &h, &hlen, &amlen, &kern);
        pos += rma_pad8(amlen) < len - pos ? rma_pad8(amlen) : len - pos;
    }
    int ok = want ? got && strstr(got, want) : got == NULL;
    CHECK(ok, "%s: am_check says '%s', expected %s%s%s", what, got ? got : "(fine)", want ? "'" : "",
          want ? want : "fine", want ? "'" : "");
}

/* A short request (rma_shdr_t) at buf with data bytes (zeros) after it; its length. */
static size_t short_of(char *buf, int kind, MPI_Datatype type, MPI_Op op, int32_t tag, size_t data)
{
    rma_shdr_t s = {.kind = (uint8_t)kind, .version = RMA_WIRE_VERSION, .reply_tag = tag, .disp = 64};
    s.type = type ? (uint8_t)((uintptr_t)type - RMA_TYPE_BASE) : 0;
    s.op = op ? (uint8_t)((uintptr_t)op - RMA_OP_BASE) : 0;
    memcpy(buf, &s, sizeof s);
    memset(buf + sizeof s, 0, data);
    return sizeof s + data;
}

/* The short paths' requests: what the origin sends (ops.c) passes, with the full header
 * they stand for; anything else a short header could say is refused. */
static void short_checks(void)
{
    rmpi_win_t w = mkwin(MPI_WIN_FLAVOR_CREATE, NULL, 0);
    char m[256];
    size_t n = short_of(m, AM_SCAS, MPI_LONG, NULL, 7, 16);
    expect_check(&w, 0, m, n, NULL, "a short compare-and-swap of a long");
    rma_hdr_t h;
    size_t hlen, amlen;
    rmpi_coll_kernel_t kern;
    CHECK(!am_check(&w, 0, m, n, &h, &hlen, &amlen, &kern) && h.kind == AM_CAS && h.bytes == 8 && h.disp == 64 &&
              h.reply_tag == 7 && !h.nseg && hlen == sizeof(rma_shdr_t) && amlen == n,
          "a short compare-and-swap read as kind %d, %llu bytes at %llu, tag %d", h.kind, (unsigned long long)h.bytes,
          (unsigned long long)h.disp, h.reply_tag);
    expect_check(&w, 0, m, n - 1, "does not match its size", "a short compare-and-swap one byte short");
    expect_check(&w, 0, m, sizeof(rma_shdr_t) - 1, "shorter than the header", "a cut short header");
    expect_check(&w, 4, m, n, "outside the window's group", "a short request from origin 4 of 4");
    static const struct {
        int kind;
        MPI_Datatype type;
        MPI_Op op;
        size_t data;
        const char *want, *what;
    } cases[] = {
        {AM_SCAS, MPI_BYTE, NULL, 2, NULL, "a short compare-and-swap of a byte"},
        {AM_SCAS, MPI_LONG, MPI_SUM, 16, "do not take", "a short compare-and-swap with an operation"},
        {AM_SCAS, MPI_DOUBLE, NULL, 16, "do not take", "a short compare-and-swap of a double"},
        {AM_SFOP, MPI_UNSIGNED_SHORT, MPI_NO_OP, 0, NULL, "a short fetch of an unsigned short (no operand)"},
        {AM_SFOP, MPI_UNSIGNED_SHORT, MPI_NO_OP, 2, "shorter than the header", "a short fetch with an operand"},
        {AM_SFOP, MPI_BYTE, MPI_SUM, 1, "do not take", "a short fetch-and-add of a byte"},
        {AM_SFOP, MPI_INT, MPI_PROD, 4, "do not take", "a short fetch-and-multiply"},
        {AM_SFOP, MPI_FLOAT, MPI_SUM, 4, "do not take", "a short fetch-and-add of a float"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        n = short_of(m, cases[i].kind, cases[i].type, cases[i].op, 1, cases[i].data);
        expect_check(&w, 0, m, n, cases[i].want, cases[i].what);
    }
    n = short_of(m, AM_SFOP, MPI_INT, MPI_SUM, 1, 4);
    CHECK(!am_check(&w, 0, m, n, &h, &hlen, &amlen, &kern) && h.kind == AM_GACC && h.bytes == 4 &&
              (MPI_Op)(uintptr_t)h.op == MPI_SUM && (MPI_Datatype)(uintptr_t)h.basic == MPI_INT && amlen == n,
          "a short fetch-and-add of an int read as kind %d, %llu bytes", h.kind, (unsigned long long)h.bytes);
    for (int32_t tag = -1; tag <= 1; tag++) {
        n = short_of(m, AM_SFOP, MPI_INT, MPI_SUM, tag, 4);
        expect_check(&w, 0, m, n, tag == 1 ? NULL : "answer tag", "a short fetch-and-add with each answer tag");
    }
    uint64_t bytes = 512;
    n = short_of(m, AM_SGET, NULL, NULL, 1, 0);
    memcpy(m + n, &bytes, sizeof bytes);
    n += sizeof bytes;
    CHECK(!am_check(&w, 0, m, n, &h, &hlen, &amlen, &kern) && h.kind == AM_GET && h.bytes == 512 &&
              hlen == sizeof(rma_shdr_t) + 8 && amlen == n,
          "a short get read as kind %d, %llu bytes", h.kind, (unsigned long long)h.bytes);
    expect_check(&w, 0, m, n - 1, "shorter than the header", "a short get without its whole size");
    m[2] = 1;
    expect_check(&w, 0, m, n, "type or operation", "a short get with a type");
    m[2] = 0;
    bytes = UINT64_MAX;
    memcpy(m + sizeof(rma_shdr_t), &bytes, sizeof bytes);
    expect_check(&w, 0, m, n, "impossible size", "a short get of 2^64 - 1 bytes");
    m[1] = RMA_WIRE_VERSION + 1;
    expect_check(&w, 0, m, n, "another wire version", "a short get of version + 1");
    /* a short put (its size in the header) and a short flush */
    rma_shdr_t p = {.kind = AM_SPUT, .version = RMA_WIRE_VERSION, .pbytes = 8, .disp = 64};
    memcpy(m, &p, sizeof p);
    memset(m + sizeof p, 0, 8);
    n = sizeof p + 8;
    CHECK(!am_check(&w, 0, m, n, &h, &hlen, &amlen, &kern) && h.kind == AM_PUT && h.bytes == 8 && h.disp == 64 &&
              amlen == n,
          "a short put read as kind %d, %llu bytes", h.kind, (unsigned long long)h.bytes);
    expect_check(&w, 0, m, n - 1, "does not match its size", "a short put one byte short");
    rma_shdr_t f = {.kind = AM_SFLUSH, .version = RMA_WIRE_VERSION, .reply_tag = 9};
    memcpy(m + n, &f, sizeof f);
    expect_check(&w, 0, m, n + sizeof f, NULL, "a short put and a short flush");
    CHECK(!am_check(&w, 0, m + n, sizeof f, &h, &hlen, &amlen, &kern) && h.kind == AM_FLUSH && h.reply_tag == 9 &&
              amlen == sizeof f,
          "a short flush read as kind %d, tag %d", h.kind, h.reply_tag);
    p.reply_tag = 3;
    memcpy(m, &p, sizeof p);
    expect_check(&w, 0, m, sizeof p + 8, "short put with an answer tag", "a short put with an answer tag");
    p.reply_tag = 0;
    p.pbytes = 0;
    memcpy(m, &p, sizeof p);
    expect_check(&w, 0, m, sizeof p, "no data", "a short put of 0 bytes");
    f.reply_tag = 0;
    memcpy(m, &f, sizeof f);
    expect_check(&w, 0, m, sizeof f, "answer tag", "a short flush without an answer tag");
    f.reply_tag = 1;
    f.op = 1;
    memcpy(m, &f, sizeof f);
    expect_check(&w, 0, m, sizeof f, "short flush with", "a short flush with an operation");
    f.op = 0;
    f.disp = 9; /* the origin's copy of a region table's seq + 1 */
    memcpy(m, &f, sizeof f);
    CHECK(!am_check(&w, 0, m, sizeof f, &h, &hlen, &amlen, &kern) && h.kind == AM_FLUSH && h.disp == 9,
          "a short flush with a table seq read as kind %d, disp %llu", h.kind, (unsigned long long)h.disp);
    /* back to back in one message, each padded to 8: fetch-and-add (20 bytes), compare-and-swap, get */
    n = short_of(m, AM_SFOP, MPI_INT, MPI_SUM, 1, 4);
    memset(m + n, 0, 4);
    n = rma_pad8(n);
    n += short_of(m + n, AM_SCAS, MPI_INT, NULL, 2, 8);
    size_t g = short_of(m + n, AM_SGET, NULL, NULL, 3, 0);
    bytes = 8;
    memcpy(m + n + g, &bytes, sizeof bytes);
    n += g + sizeof bytes;
    expect_check(&w, 0, m, n, NULL, "three short requests in one message");
    expect_check(&w, 0, m, n - 8, "shorter than the header", "three short requests, the last one cut");
}

/* The message of header h, nseg segments and data bytes (zeros), checked; it stays in
 * msgbuf (msglen bytes) for checks of its cut or relabelled forms. */
static char msgbuf[4096];
static size_t msglen;

static void expect_msg(const rmpi_win_t *w, int origin, const rma_hdr_t *h, const rma_seg_t *segs, uint32_t nseg,
                       size_t data, const char *want, const char *what)
{
    msglen = msg_of(msgbuf, h, segs, nseg, data);
    expect_check(w, origin, msgbuf, msglen, want, what);
}

static void checks(void)
{
    rmpi_win_t w = mkwin(MPI_WIN_FLAVOR_CREATE, NULL, 0);
    rma_hdr_t h = {0};
    h.version = RMA_WIRE_VERSION;
    rma_seg_t segs[4] = {{0, 8}, {16, 8}, {-8, 4}};

    h.kind = AM_PUT;
    h.bytes = 16;
    expect_msg(&w, 1, &h, NULL, 0, 16, NULL, "a 16-byte put");
    expect_check(&w, 1, msgbuf, sizeof h - 1, "shorter than the header", "a cut header");
    expect_check(&w, 1, msgbuf, msglen - 1, "does not match its size", "a put one byte short");
    expect_check(&w, 4, msgbuf, msglen, "outside the window's group", "origin 4 of 4");
    expect_check(&w, -1, msgbuf, msglen, "outside the window's group", "origin -1");
    h.version = RMA_WIRE_VERSION + 1;
    expect_msg(&w, 1, &h, NULL, 0, 16, "another wire version", "version + 1");
    h.version = RMA_WIRE_VERSION;
    for (int k = 0; k <= 19; k++) {
        if (k >= AM_SFOP && k <= AM_SFLUSH)
            continue; /* short headers: short_checks */
        h.kind = (uint8_t)k;
        h.reply_tag = 1;
        h.lock_type = RMA_LOCK_SHARED;
        h.bytes = 0;
        int known = k >= AM_PUT && k <= AM_FENCE_DONE;
        expect_msg(&w, 0, &h, NULL, 0, 0, known ? NULL : "unknown kind", "an empty message of each kind");
    }
    /* answer tags only where an answer is wanted */
    h.kind = AM_GET;
    h.bytes = 8;
    static const int32_t tags[] = {0, 1, RMA_TAG_MAX, RMA_TAG_MAX + 1, -1};
    for (size_t i = 0; i < sizeof tags / sizeof *tags; i++) {
        h.reply_tag = tags[i];
        int ok = tags[i] >= 1 && tags[i] <= RMA_TAG_MAX;
        expect_msg(&w, 0, &h, NULL, 0, 0, ok ? NULL : "answer tag", "get with each answer tag");
    }
    h.kind = AM_PUT;
    h.reply_tag = 0;
    expect_msg(&w, 0, &h, NULL, 0, 8, NULL, "a put needs no answer tag");
    /* lock types */
    h.kind = AM_LOCK;
    h.bytes = 0;
    h.reply_tag = 5;
    for (int t = 0; t < 4; t++) {
        h.lock_type = (uint16_t)t;
        expect_msg(&w, 0, &h, NULL, 0, 0, t == RMA_LOCK_EXCL || t == RMA_LOCK_SHARED ? NULL : "unknown lock type",
                   "lock of each type");
    }
    h.lock_type = RMA_LOCK_EXCL;
    expect_msg(&w, 0, &h, NULL, 0, 1, "shorter than the header", "a lock with a data byte after it");
    h.bytes = 8;
    expect_msg(&w, 0, &h, NULL, 0, 0, "control kind with data", "a lock with a size");
    h.bytes = 0;
    /* a lock asked for with operations has no answer tag; no other tag below 0 */
    h.reply_tag = 0;
    expect_msg(&w, 0, &h, NULL, 0, 0, NULL, "a lock without an answer");
    h.reply_tag = -1;
    expect_msg(&w, 0, &h, NULL, 0, 0, "answer tag", "a lock with answer tag -1");
    /* an unlock after RDMA alone goes without an answer tag (sync.c); a flush never does */
    h.kind = AM_UNLOCK;
    h.reply_tag = 0;
    expect_msg(&w, 0, &h, NULL, 0, 0, NULL, "an unlock without an answer");
    h.reply_tag = -1;
    expect_msg(&w, 0, &h, NULL, 0, 0, "answer tag", "an unlock with answer tag -1");
    h.kind = AM_FLUSH;
    h.reply_tag = 0;
    expect_msg(&w, 0, &h, NULL, 0, 0, "answer tag", "a flush without an answer tag");
    h.kind = AM_LOCK;
    /* several active messages in one message: a lock, a put of 5 bytes (padded to 8), a
     * flush; then the same with the put's padding missing in the middle */
    {
        char batch[256];
        size_t n = 0;
        rma_hdr_t b = {0};
        b.version = RMA_WIRE_VERSION;
        b.kind = AM_LOCK;
        b.lock_type = RMA_LOCK_SHARED;
        n += msg_of(batch + n, &b, NULL, 0, 0);
        b.kind = AM_PUT;
        b.lock_type = 0;
        b.bytes = 5;
        n += rma_pad8(msg_of(batch + n, &b, NULL, 0, 5));
        memset(batch + n - 3, 0, 3);
        b.kind = AM_FLUSH;
        b.bytes = 0;
        b.reply_tag = 9;
        n += msg_of(batch + n, &b, NULL, 0, 0);
        expect_check(&w, 1, batch, n, NULL, "lock, put, flush in one message");
        memmove(batch + 48 + 53, batch + 48 + 56, 48);
        expect_check(&w, 1, batch, n - 3, "shorter than the header", "a batch whose put lacks its padding");
    }
    h.reply_tag = 5;

    /* segment lists */
    h.kind = AM_PUT;
    h.reply_tag = 0;
    h.nseg = 3;
    h.bytes = 20;
    expect_msg(&w, 0, &h, segs, 3, 20, NULL, "a put through three segments");
    expect_check(&w, 0, msgbuf, sizeof h + 2 * sizeof *segs, "more segments than it holds", "a list cut short");
    h.bytes = 21;
    expect_msg(&w, 0, &h, segs, 3, 21, "do not add up", "segments two bytes short of the size");
    h.bytes = 20;
    rma_seg_t wrap[2] = {{INT64_MAX - 4, 8}, {0, 12}};
    expect_msg(&w, 0, &h, wrap, 2, 20, "segment out of range", "a segment whose end overflows");
    rma_seg_t big[2] = {{0, 21}, {0, (uint64_t)-1}};
    expect_msg(&w, 0, &h, big, 2, 20, "segment out of range", "segments longer than the size");
    h.nseg = 0;
    h.bytes = (uint64_t)INT64_MAX;
    expect_msg(&w, 0, &h, NULL, 0, 0, "impossible size", "a size of 2^63 - 1");
    h.nseg = UINT32_MAX;
    h.bytes = 8;
    expect_msg(&w, 0, &h, NULL, 0, 8, "more segments than it holds", "nseg 2^32 - 1");
    h.nseg = 0;

    /* data sizes by kind: put carries bytes, compare-and-swap twice, get none */
    h.bytes = 8;
    h.reply_tag = 3;
    h.kind = AM_CAS;
    h.basic = (uint64_t)(uintptr_t)MPI_INT64_T;
    expect_msg(&w, 0, &h, NULL, 0, 16, NULL, "compare-and-swap with both values");
    expect_msg(&w, 0, &h, NULL, 0, 8, "does not match its size", "compare-and-swap with one value");
    h.kind = AM_GET;
    expect_msg(&w, 0, &h, NULL, 0, 8, "shorter than the header", "a get carrying data");

    /* accumulates: predefined op, element type it takes, whole elements */
    h.kind = AM_ACC;
    h.reply_tag = 0;
    h.bytes = 16;
    static const struct {
        MPI_Op op;
        MPI_Datatype type;
        uint64_t bytes;
        const char *want;
    } acc[] = {
        {MPI_SUM, MPI_INT, 16, NULL},
        {MPI_SUM, MPI_DOUBLE, 16, NULL},
        {MPI_BXOR, MPI_DOUBLE, 16, "element type the operation does not take"},
        {MPI_MAXLOC, MPI_INT, 16, "element type the operation does not take"},
        {MPI_MAXLOC, MPI_2INT, 16, NULL},
        {MPI_SUM, MPI_INT, 14, "element type the operation does not take"}, /* not whole ints */
        {MPI_REPLACE, MPI_BYTE, 16, NULL},
        {MPI_OP_NULL, MPI_INT, 16, "not a predefined one"},
        {(MPI_Op)(uintptr_t)0x12345678, MPI_INT, 16, "not a predefined one"},
        {MPI_SUM, (MPI_Datatype)(uintptr_t)0x12345678, 16, "element type the operation does not take"},
    };
    for (size_t i = 0; i < sizeof acc / sizeof *acc; i++) {
        h.op = (uint64_t)(uintptr_t)acc[i].op;
        h.basic = (uint64_t)(uintptr_t)acc[i].type;
        h.bytes = acc[i].bytes;
        char what[64];
        snprintf(what, sizeof what, "accumulate case %zu", i);
        expect_msg(&w, 0, &h, NULL, 0, acc[i].bytes, acc[i].want, what);
    }
    /* a get_accumulate with MPI_NO_OP carries no data (a fetch) */
    h.kind = AM_GACC;
    h.reply_tag = 9;
    h.op = (uint64_t)(uintptr_t)MPI_NO_OP;
    h.basic = (uint64_t)(uintptr_t)MPI_INT;
    h.bytes = 16;
    expect_msg(&w, 0, &h, NULL, 0, 0, NULL, "a NO_OP fetch without data");
    expect_msg(&w, 0, &h, NULL, 0, 16, "shorter than the header", "a NO_OP fetch with data");
}

/* ---- accumulate through a segment list ---- */

static void accumulate_segments(void)
{
    int target[16], model[16], data[6] = {1, 2, 3, 4, 5, 6};
    for (int i = 0; i < 16; i++)
        target[i] = model[i] = 100 * i;
    /* ints 2,3 then 9 then 12,13,14 (offsets from disp, which points at int 4) */
    rma_seg_t segs[3] = {{-2 * 4, 8}, {5 * 4, 4}, {8 * 4, 12}};
    static const int at[6] = {2, 3, 9, 12, 13, 14};
    rma_hdr_t h = {0};
    h.kind = AM_ACC;
    h.op = (uint64_t)(uintptr_t)MPI_SUM;
    h.basic = (uint64_t)(uintptr_t)MPI_INT;
    h.bytes = 24;
    h.nseg = 3;
    accumulate((char *)(target + 4), &h, segs, (const char *)data,
               rmpi_coll_op_kernel((MPI_Op)(uintptr_t)h.op, MPI_INT));
    for (int i = 0; i < 6; i++)
        model[at[i]] += data[i];
    for (int i = 0; i < 16; i++)
        CHECK(target[i] == model[i], "SUM through segments: int %d is %d, expected %d", i, target[i], model[i]);
    h.op = (uint64_t)(uintptr_t)MPI_REPLACE;
    accumulate((char *)(target + 4), &h, segs, (const char *)data,
               rmpi_coll_op_kernel((MPI_Op)(uintptr_t)h.op, MPI_INT));
    for (int i = 0; i < 6; i++)
        model[at[i]] = data[i];
    for (int i = 0; i < 16; i++)
        CHECK(target[i] == model[i], "REPLACE through segments: int %d is %d, expected %d", i, target[i], model[i]);
    h.op = (uint64_t)(uintptr_t)MPI_NO_OP;
    accumulate((char *)(target + 4), &h, segs, (const char *)data,
               rmpi_coll_op_kernel((MPI_Op)(uintptr_t)h.op, MPI_INT));
    for (int i = 0; i < 16; i++)
        CHECK(target[i] == model[i], "NO_OP changed int %d", i);
    int out[6];
    gather((const char *)(target + 4), &h, segs, (char *)out);
    for (int i = 0; i < 6; i++)
        CHECK(out[i] == model[at[i]], "gather: element %d is %d, expected %d", i, out[i], model[at[i]]);
}

/* ---- lock manager's rule: shared locks together, an exclusive one alone ---- */

static void locks(void)
{
    rmpi_win_t w = mkwin(MPI_WIN_FLAVOR_CREATE, NULL, 0);
    CHECK(lock_try(&w, RMA_LOCK_SHARED) && lock_try(&w, RMA_LOCK_SHARED), "two shared holders");
    CHECK(!lock_try(&w, RMA_LOCK_EXCL) && w.lock_shared == 2, "exclusive refused while shared held");
    w.lockq = NULL;
    lock_release(&w, RMA_LOCK_SHARED);
    CHECK(!lock_try(&w, RMA_LOCK_EXCL), "one shared holder left");
    lock_release(&w, RMA_LOCK_SHARED);
    CHECK(w.lock_shared == 0, "all shared released");
    lock_release(&w, RMA_LOCK_SHARED);
    CHECK(w.lock_shared == 0, "a release without a holder went negative");
    CHECK(lock_try(&w, RMA_LOCK_EXCL), "free window: exclusive granted");
    CHECK(!lock_try(&w, RMA_LOCK_EXCL) && !lock_try(&w, RMA_LOCK_SHARED), "exclusive holder is alone");
    lock_release(&w, RMA_LOCK_EXCL);
    CHECK(lock_try(&w, RMA_LOCK_EXCL), "exclusive released");
}

/* Locks requested with operations (answer tag 0): a request that cannot be granted holds
 * its origin back (lockwait) until a release grants it, first come first served; one that
 * can is granted at once. No answer is sent for either. And the fence rule of held_back. */
static void lazy_locks(void)
{
    rmpi_win_t w = mkwin(MPI_WIN_FLAVOR_CREATE, NULL, 0);
    unsigned char wait[4] = {0};
    int marks[4] = {0};
    w.lockwait = wait;
    w.marks = marks;
    lock_request(&w, 1, RMA_LOCK_EXCL, 0);
    CHECK(w.lock_excl == 1 && !wait[1] && !w.lockq, "a free window: the exclusive lock granted at once");
    lock_request(&w, 2, RMA_LOCK_SHARED, 0);
    lock_request(&w, 3, RMA_LOCK_SHARED, 0);
    CHECK(wait[2] && wait[3] && w.lock_shared == 0, "shared requests behind an exclusive holder wait");
    CHECK(held_back(&w, 2) && !held_back(&w, 1), "a waiting origin is held back, the holder is not");
    lock_release(&w, RMA_LOCK_EXCL);
    CHECK(!wait[2] && !wait[3] && w.lock_shared == 2 && !w.lockq, "the release grants both shared requests");
    lock_request(&w, 1, RMA_LOCK_EXCL, 0);
    CHECK(wait[1] && w.lockq, "an exclusive request waits for two shared holders");
    /* shared requests pass a waiting exclusive one while shared holders hold: a Lock_all
     * epoch holding this lock may wait at another target behind that exclusive one's
     * origin (with writers first, such epochs across two nodes deadlocked) */
    lock_request(&w, 0, RMA_LOCK_SHARED, 0);
    CHECK(!wait[0] && w.lock_shared == 3 && wait[1], "a shared request passes a waiting exclusive one");
    lock_release(&w, RMA_LOCK_SHARED);
    lock_release(&w, RMA_LOCK_SHARED);
    CHECK(wait[1], "one shared holder left: the exclusive request still waits");
    lock_request(&w, 2, RMA_LOCK_EXCL, 0);
    lock_release(&w, RMA_LOCK_SHARED);
    CHECK(!wait[1] && wait[2] && w.lock_excl == 1, "the first exclusive request is granted, the second waits");
    lock_request(&w, 3, RMA_LOCK_SHARED, 0);
    CHECK(wait[3], "a shared request waits while an exclusive one holds");
    lock_release(&w, RMA_LOCK_EXCL);
    CHECK(!wait[2] && wait[3] && w.lock_excl == 1, "then the second exclusive one, in arrival order");
    lock_release(&w, RMA_LOCK_EXCL);
    CHECK(!wait[3] && w.lock_shared == 1 && !w.lockq, "then the shared one");
    lock_release(&w, RMA_LOCK_SHARED);
    /* past its FENCE marker an origin waits for our own fence */
    marks[2] = 1;
    CHECK(held_back(&w, 2) && !held_back(&w, 3), "an origin past its marker is held back before our fence ends");
    w.fences = 1;
    CHECK(!held_back(&w, 2), "our fence over: the origin's next epoch may be handled");
}

/* ---- messages taken where they land (rma_eager) ---- */

static size_t put_ctl(char *at, int kind)
{
    rma_hdr_t h;
    memset(&h, 0, sizeof h);
    h.kind = (uint8_t)kind;
    h.version = RMA_WIRE_VERSION;
    memcpy(at, &h, sizeof h);
    return sizeof h;
}

/* Declined (left to the unexpected queue and serve) when not a request, too large, from a
 * rank outside the group, while handling already, or when it would pass a message of the
 * window not handled yet; else handled at once from a frame at any alignment, and the rest
 * of a message whose origin must wait is kept, with a copy of its own, in order. */
static void inplace(void)
{
    rmpi_win_t w = mkwin(MPI_WIN_FLAVOR_CREATE, NULL, 0);
    rmpi_list_t held[4];
    unsigned char wait[4] = {0};
    int marks[4] = {0}, posts[4] = {0}, fdone[4] = {0};
    unsigned char mclean[4] = {0};
    for (int i = 0; i < 4; i++)
        rmpi_list_init(&held[i]);
    rmpi_list_init(&w.incoming);
    w.size = 4;
    w.held = held, w.lockwait = wait, w.marks = marks, w.posts = posts, w.fdone = fdone;
    w.mclean = mclean;
    static char frame[RMA_SERVE_INPLACE + 64];
    char *f = frame + 3; /* frames lie at any alignment */
    size_t n = put_ctl(f, AM_FENCE);
    uint16_t complete = 1; /* the sender's operations complete (sync.c epoch_complete) */
    memcpy(f + offsetof(rma_hdr_t, lock_type), &complete, sizeof complete);
    n += put_ctl(f + n, AM_POST);
    n += put_ctl(f + n, AM_FENCE_DONE);
    char post[sizeof(rma_hdr_t) + 1];
    size_t pn = put_ctl(post + 1, AM_POST);

    CHECK(!rma_eager(&w, 1, 1, 5, f, n) && !marks[1], "an answer (tag 5) taken as a request");
    CHECK(!rma_eager(&w, 1, 4, 0, f, n) && !rma_eager(&w, 1, -1, 0, f, n), "a rank outside the group taken");
    CHECK(!rma_eager(&w, 1, 1, 0, frame, RMA_SERVE_INPLACE + 8), "a message larger than the stack copy taken");
    serving = 1;
    CHECK(!rma_eager(&w, 1, 1, 0, f, n) && !marks[1], "a message taken while handling another");
    serving = 0;
    CHECK(rma_eager(&w, 1, 1, 0, f, n), "FENCE, POST, FENCE_DONE not taken");
    CHECK(marks[1] == 1 && posts[1] == 0 && fdone[1] == 0, "the marker handled, what follows it waits for our fence");
    CHECK(mclean[1] == 1 && mclean[2] == 0, "the FENCE's flag not recorded for its origin");
    CHECK(w.nheld == 1 && !rmpi_list_empty(&held[1]), "the rest kept (%d held)", w.nheld);
    memset(f, 0xee, n); /* the frame's memory is the transport's again */
    CHECK(!rma_eager(&w, 1, 1, 0, post + 1, pn) && posts[1] == 0, "a later message passed the held one");
    CHECK(rma_eager(&w, 1, 2, 0, post + 1, pn) && posts[2] == 1, "another origin's message waited");
    w.fences = 1;
    release_held(&w);
    CHECK(posts[1] == 1 && fdone[1] == 1 && w.nheld == 0 && rmpi_list_empty(&held[1]),
          "the kept rest not handled from its own copy once our fence ended (posts %d, fence_done %d)", posts[1],
          fdone[1]);
    incoming_t landing;
    rmpi_list_push_back(&w.incoming, &landing.link);
    CHECK(!rma_eager(&w, 1, 3, 0, post + 1, pn) && posts[3] == 0, "a message passed one still being received");
    rmpi_list_remove(&landing.link);
    CHECK(rma_eager(&w, 1, 3, 0, post + 1, pn) && posts[3] == 1, "nothing waits: not handled at once");
}

/* A short put (alone, or with its short flush) served where it lands: the bytes written in
 * the window when everything checks, else nothing done and the message left to handle()
 * (which reports it). The accepted flush's ack needs the core: not run here. */
static void short_puts(void)
{
    static unsigned char mem[512];
    rmpi_win_t w = mkwin(MPI_WIN_FLAVOR_CREATE, mem, 300);
    unsigned char wait[4] = {0};
    int marks[4] = {0};
    w.size = 4;
    w.lockwait = wait, w.marks = marks;
    static char frame[2 * sizeof(rma_shdr_t) + SHORT_PUT_MAX + 16];
    char *f = frame + 5; /* frames lie at any alignment */
    struct {
        uint64_t disp;
        unsigned pbytes, version, tag, flushkind, flushtag, flushop, cut;
        int ok;
        const char *what;
    } c[] = {
        {64, 8, RMA_WIRE_VERSION, 0, 0, 0, 0, 0, 1, "8 bytes at 64"},
        {292, 8, RMA_WIRE_VERSION, 0, 0, 0, 0, 0, 1, "8 bytes at the window's end"},
        {0, SHORT_PUT_MAX, RMA_WIRE_VERSION, 0, 0, 0, 0, 0, 1, "the largest short put"},
        {293, 8, RMA_WIRE_VERSION, 0, 0, 0, 0, 0, 0, "a byte past the window's end"},
        {UINT64_MAX - 3, 8, RMA_WIRE_VERSION, 0, 0, 0, 0, 0, 0, "a displacement that wraps"},
        {0, SHORT_PUT_MAX + 1, RMA_WIRE_VERSION, 0, 0, 0, 0, 0, 0, "a put past SHORT_PUT_MAX"},
        {0, 0, RMA_WIRE_VERSION, 0, 0, 0, 0, 0, 0, "a put of no bytes"},
        {64, 8, RMA_WIRE_VERSION - 1, 0, 0, 0, 0, 0, 0, "another wire version"},
        {64, 8, RMA_WIRE_VERSION, 3, 0, 0, 0, 0, 0, "a put with an answer tag"},
        {64, 8, RMA_WIRE_VERSION, 0, 0, 0, 0, 1, 0, "a message one byte short"},
        {64, 8, RMA_WIRE_VERSION, 0, AM_SFOP, 5, 0, 0, 0, "a put followed by a fetch-and-op"},
        {64, 8, RMA_WIRE_VERSION, 0, AM_SFLUSH, 0, 0, 0, 0, "a flush with answer tag 0"},
        {64, 8, RMA_WIRE_VERSION, 0, AM_SFLUSH, RMA_TAG_MAX + 1u, 0, 0, 0, "a flush with a tag past the range"},
        {64, 8, RMA_WIRE_VERSION, 0, AM_SFLUSH, 5, 1, 0, 0, "a flush with an operation"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        rma_shdr_t h = {.kind = AM_SPUT,
                        .version = (uint8_t)c[i].version,
                        .pbytes = (uint16_t)c[i].pbytes,
                        .reply_tag = (int32_t)c[i].tag,
                        .disp = c[i].disp};
        if (c[i].pbytes > UINT16_MAX)
            h.pbytes = 0;
        memcpy(f, &h, sizeof h);
        size_t n = sizeof h, pb = c[i].pbytes <= SHORT_PUT_MAX + 1 ? c[i].pbytes : 0;
        for (size_t j = 0; j < pb; j++)
            f[n + j] = (char)(1 + (i + j) % 255); /* never 0: written bytes are counted */
        n += rma_pad8(pb);
        if (c[i].flushkind) {
            rma_shdr_t fl = {.kind = (uint8_t)c[i].flushkind,
                             .version = RMA_WIRE_VERSION,
                             .reply_tag = (int32_t)c[i].flushtag};
            fl.op = (uint8_t)c[i].flushop;
            memcpy(f + n, &fl, sizeof fl);
            n += sizeof fl;
        }
        memset(mem, 0, sizeof mem);
        int took = short_put(&w, 1, f, n - c[i].cut);
        int wrote = 0;
        for (size_t j = 0; j < sizeof mem; j++)
            wrote += mem[j] != 0;
        int right = 1;
        for (size_t j = 0; took && j < pb; j++)
            right &= mem[c[i].disp + j] == (unsigned char)(1 + (i + j) % 255);
        CHECK(took == c[i].ok && right && wrote == (took ? (int)pb : 0), "%s: taken %d, %d bytes written%s", c[i].what,
              took, wrote, right ? "" : ", not the put's");
    }
    rma_shdr_t h = {.kind = AM_SPUT, .version = RMA_WIRE_VERSION, .pbytes = 8, .disp = 64};
    memcpy(f, &h, sizeof h);
    wait[1] = 1;
    CHECK(!short_put(&w, 1, f, sizeof h + 8), "a put taken while its origin waits for its lock");
    wait[1] = 0;
    static uint64_t line[64]; /* stands for a sync line: only its address is looked at */
    rmpi_win_sync_t *dsync[4] = {NULL, NULL, NULL, (rmpi_win_sync_t *)(void *)line};
    w.rank = 3, w.dsync = dsync;
    CHECK(!short_put(&w, 1, f, sizeof h + 8), "a put taken where node origins use atomics on the memory");
}

int main(void)
{
    fixed_window();
    dynamic_window();
    checks();
    short_checks();
    accumulate_segments();
    locks();
    lazy_locks();
    inplace();
    short_puts();
    return finish("rma_target_checks");
}
