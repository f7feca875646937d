/*
 * The shm provider's SPSC ring (src/net/shm/shm.h), in plain memory (the shm segment starts
 * zeroed, so these rings do too).
 *  a) one thread, random interleaving of writes and reads against a model: every frame comes
 *     back once, in order, with its length, type, bytes and address; SKIP padding at the end
 *     of the ring is invisible; reserve returns NULL exactly when the frame (plus padding)
 *     does not fit in front of the reader's published position, never hands out a cell the
 *     reader has not consumed, and succeeds once the reader has drained and published;
 *     frames of rmpi_shm_ring_max_frame fit; an exactly full ring refuses even 0 bytes.
 *  b) stale stamps: payload words at every cell boundary hold the stamp a frame starting
 *     there would carry on this or a later lap; the reader must never report a frame that
 *     was not committed (checked while frames are reserved but uncommitted, and whenever
 *     the model says the ring is empty), including runs across the 2^32 stamp wrap.
 *  c) two threads, 1e6 frames of random sizes through the smallest ring (64 cells), with
 *     the same adversarial payload words: order, lengths, every byte, checksum.
 *  d) the doorbell: three writer threads, a ring each, set their bit after every frame; the
 *     reader reads a ring only when its bit comes back from a take. Every frame arrives in
 *     order, and a ring found holding a frame while its bit stays clear for 200 ms (checked
 *     whenever the reader has taken nothing for a while) is a frame left unannounced.
 */
#include <pthread.h>
#include <time.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/shm/shm.h"

#include "../unit_check.h"

#define TYPES_N 4
static const unsigned data_types[TYPES_N] = {RMPI_SHM_DATA, RMPI_SHM_GET_REQ, RMPI_SHM_GET_RESP, RMPI_SHM_PUT};

static uint64_t cells_for(size_t len) { return (RMPI_SHM_HDR + len + RMPI_SHM_CELL - 1) / RMPI_SHM_CELL; }
/* What a frame at absolute cell pos takes: more than half a line's cells, or a frame that
 * would cross a line's end, end at a line's end. */
static uint64_t cells_at(uint64_t pos, size_t len)
{
    uint64_t n = cells_for(len), line = 64 / RMPI_SHM_CELL;
    if (n > line / 2 || pos / line != (pos + n - 1) / line)
        while ((pos + n) % line)
            n++;
    return n;
}

static rmpi_shm_ring_t *ring_new(uint32_t ncells)
{
    size_t bytes = (rmpi_shm_ring_bytes(ncells) + 63) & ~(size_t)63;
    rmpi_shm_ring_t *r = aligned_alloc(64, bytes);
    if (!r) {
        perror("aligned_alloc");
        exit(2);
    }
    memset(r, 0, bytes);
    return r;
}

/* Both ends start at cell position start (0 in the provider; later values test the wrap of
 * the 32-bit stamp). */
static void ends_init(rmpi_shm_ring_t *ring, uint32_t ncells, uint64_t start, rmpi_shm_writer_t *wr,
                      rmpi_shm_reader_t *rd)
{
    atomic_store(&ring->r_pub, start);
    *wr = (rmpi_shm_writer_t){ring, start, start, ncells};
    *rd = (rmpi_shm_reader_t){ring, start, start, ncells};
}

/* Payload of a frame: bytes from seed, then at every cell boundary inside the frame the
 * little-endian stamp rmpi_shm_stamp(q + lap * ncells) of the cell q it lands in, for lap 0..2
 * chosen by the seed: exactly what a header written at q now or on a later lap would show. */
static void payload(char *dst, size_t len, uint64_t seed, uint64_t pos, uint32_t ncells, int adversarial)
{
    unit_rng_t g = unit_seed(seed);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t v = unit_rand(&g);
        memcpy(dst + i, &v, 8);
    }
    if (i < len) {
        uint64_t v = unit_rand(&g);
        memcpy(dst + i, &v, len - i);
    }
    if (!adversarial)
        return;
    uint64_t lap = seed % 3;
    for (size_t o = RMPI_SHM_CELL - RMPI_SHM_HDR; o < len; o += RMPI_SHM_CELL) {
        uint64_t q = pos + (RMPI_SHM_HDR + o) / RMPI_SHM_CELL;
        uint32_t st = rmpi_shm_stamp(q + lap * ncells);
        unsigned char b[4] = {(unsigned char)st, (unsigned char)(st >> 8), (unsigned char)(st >> 16),
                              (unsigned char)(st >> 24)};
        memcpy(dst + o, b, len - o < 4 ? len - o : 4);
    }
}

/* ---------------- a) and b): one thread against a model ---------------- */

typedef struct mframe {
    uint64_t pos; /* header cell (absolute) */
    size_t len;
    unsigned type;
    uint64_t seed;
    char *addr; /* what reserve returned */
} mframe_t;

typedef struct model {
    rmpi_shm_ring_t *ring;
    rmpi_shm_writer_t wr;
    rmpi_shm_reader_t rd;
    uint32_t ncells;
    size_t max;
    uint64_t w, r; /* model positions: next header cell, reader position */
    uint64_t wc;   /* end of what is committed (frames and SKIP padding) */
    mframe_t *q;   /* FIFO of committed frames, capacity ncells */
    size_t qh, qn;
    uint64_t seq;
    int adversarial;
    char *scratch;
    /* coverage */
    uint64_t skips, fulls, frames, maxframes, zeroframes;
} model_t;

static void model_init(model_t *m, uint32_t ncells, uint64_t start, int adversarial)
{
    memset(m, 0, sizeof *m);
    m->ring = ring_new(ncells);
    m->ncells = ncells;
    m->max = rmpi_shm_ring_max_frame(ncells);
    ends_init(m->ring, ncells, start, &m->wr, &m->rd);
    m->w = m->r = m->wc = start;
    m->q = calloc(ncells, sizeof *m->q);
    m->scratch = malloc(m->max + 8);
    m->adversarial = adversarial;
}

static void model_free(model_t *m)
{
    free(m->ring);
    free(m->q);
    free(m->scratch);
}

static uint64_t r_pub(model_t *m) { return atomic_load(&m->ring->r_pub); }

/* The reader, when the model has no committed frame left, sees nothing, and has passed and
 * published any SKIP padding the writer committed in front of a frame it is still filling. */
static void check_reader_empty(model_t *m, const char *when)
{
    m->r = m->wc;
    size_t len = 0;
    unsigned type = 0;
    const void *f = rmpi_shm_ring_peek(&m->rd, &len, &type);
    CHECK(f == NULL, "ncells %u pos %llu (%s): reader reports a frame (len %zu type %u) that was never committed",
          m->ncells, (unsigned long long)m->r, when, len, type);
    CHECK(m->rd.r == m->r && r_pub(m) == m->r,
          "ncells %u: an idle reader must be at and publish %llu (reader at %llu, r_pub %llu)", m->ncells,
          (unsigned long long)m->r, (unsigned long long)m->rd.r, (unsigned long long)r_pub(m));
}

/* Read one frame and check it against the head of the model. Returns 0 when the model is empty. */
static int model_read(model_t *m)
{
    if (m->qn == 0) {
        check_reader_empty(m, "ring empty");
        return 0;
    }
    mframe_t *e = &m->q[m->qh];
    size_t len = ~(size_t)0;
    unsigned type = ~0u;
    const char *f = rmpi_shm_ring_peek(&m->rd, &len, &type);
    CHECK(f != NULL, "ncells %u: committed frame #%llu at pos %llu not seen", m->ncells, (unsigned long long)e->seed,
          (unsigned long long)e->pos);
    if (!f)
        return -1;
    CHECK(len <= m->max, "ncells %u frame at pos %llu: len %zu is larger than any frame (max %zu)", m->ncells,
          (unsigned long long)e->pos, len, m->max);
    if (len > m->max)
        return -1;
    CHECK(f == e->addr, "ncells %u frame at pos %llu: peek returned %p, reserve gave %p (order or skip broken)",
          m->ncells, (unsigned long long)e->pos, (const void *)f, (void *)e->addr);
    CHECK(len == e->len, "ncells %u frame at pos %llu: len %zu, committed %zu", m->ncells, (unsigned long long)e->pos,
          len, e->len);
    CHECK(type == e->type, "ncells %u frame at pos %llu: type %u, committed %u", m->ncells, (unsigned long long)e->pos,
          type, e->type);
    if (f == e->addr && len == e->len) {
        payload(m->scratch, len, e->seed, e->pos, m->ncells, m->adversarial);
        if (memcmp(f, m->scratch, len) != 0) {
            size_t i = 0;
            while (f[i] == m->scratch[i])
                i++;
            CHECK(0, "ncells %u frame at pos %llu len %zu: byte %zu is %#x, wrote %#x", m->ncells,
                  (unsigned long long)e->pos, len, i, (unsigned char)f[i], (unsigned char)m->scratch[i]);
        }
    }
    rmpi_shm_ring_consume(&m->rd, len);
    m->r = e->pos + cells_at(e->pos, e->len);
    CHECK(m->rd.r == m->r, "ncells %u: reader at %llu after consuming the frame at %llu, expected %llu", m->ncells,
          (unsigned long long)m->rd.r, (unsigned long long)e->pos, (unsigned long long)m->r);
    m->qh = (m->qh + 1) % m->ncells;
    m->qn--;
    uint64_t pub = r_pub(m);
    CHECK(pub <= m->r, "r_pub %llu ahead of the reader %llu", (unsigned long long)pub, (unsigned long long)m->r);
    CHECK(m->r - pub < m->ncells / 4, "ncells %u: reader consumed to %llu but published only %llu (lazy by >= 1/4)",
          m->ncells, (unsigned long long)m->r, (unsigned long long)pub);
    return 1;
}

/* Where a frame of len bytes must go, and whether it fits in front of the published reader. */
static uint64_t model_place(const model_t *m, size_t len, uint64_t *skip)
{
    uint64_t off = m->w % m->ncells;
    *skip = off + cells_for(len) > m->ncells ? m->ncells - off : 0;
    return m->w + *skip;
}

/* Try to write a frame. Returns 1 written, 0 refused (ring full). */
static int model_write(model_t *m, size_t len, unsigned type, int probe)
{
    uint64_t skip, at = model_place(m, len, &skip), need = cells_at(at, len);
    uint64_t pub = r_pub(m);
    int fits = at + need + 1 - pub <= m->ncells; /* and the cell after it, which the writer clears */
    char *p = rmpi_shm_ring_reserve(&m->wr, len);
    CHECK((p != NULL) == fits,
          "ncells %u: reserve(%zu) at w %llu (skip %llu, need %llu) with r_pub %llu returned %p, expected %s",
          m->ncells, len, (unsigned long long)m->w, (unsigned long long)skip, (unsigned long long)need,
          (unsigned long long)pub, (void *)p, fits ? "room" : "NULL");
    if (!p) {
        m->fulls++;
        return 0;
    }
    CHECK(at + need + 1 - m->r <= m->ncells,
          "ncells %u: reserve(%zu) handed out cells up to %llu (and the one after), reader still at %llu", m->ncells,
          len, (unsigned long long)(at + need), (unsigned long long)m->r);
    char *want = m->ring->cells + (at % m->ncells) * RMPI_SHM_CELL + RMPI_SHM_HDR;
    CHECK(p == want, "ncells %u: reserve(%zu) at w %llu returned cell %lld, expected cell %llu", m->ncells, len,
          (unsigned long long)m->w, (long long)((p - m->ring->cells) / RMPI_SHM_CELL),
          (unsigned long long)(at % m->ncells));
    if (p != want)
        return 0;
    if (skip)
        m->skips++;
    m->wc = at;
    uint64_t seed = m->seq++;
    payload(p, len, seed, at, m->ncells, m->adversarial);
    if (probe) /* reserved and filled, not committed: the reader must not see it */
        for (int k = 0; k < 2; k++) {
            if (m->qn == 0)
                check_reader_empty(m, "frame reserved, not committed");
        }
    rmpi_shm_ring_commit(&m->wr, len, type);
    m->q[(m->qh + m->qn) % m->ncells] = (mframe_t){at, len, type, seed, p};
    m->qn++;
    m->w = m->wc = at + need;
    m->frames++;
    m->maxframes += len == m->max;
    m->zeroframes += len == 0;
    return 1;
}

static size_t pick_len(unit_rng_t *g, size_t max)
{
    switch (unit_range(g, 0, 9)) {
    case 0:
    case 1:
    case 2: return (size_t)unit_range(g, 0, 64);
    case 3: {
        const size_t edge[] = {0, 1, 55, 56, 57, 119, 120, 121, max - 1, max, max, max - 64, max - 63};
        return edge[unit_range(g, 0, sizeof edge / sizeof *edge - 1)];
    }
    default: return (size_t)unit_range(g, 0, max);
    }
}

/* Random interleaving of nops operations on a ring of ncells starting at cell start. */
static void run_random(uint32_t ncells, uint64_t start, int adversarial, uint64_t seed, int nops)
{
    model_t m;
    model_init(&m, ncells, start, adversarial);
    unit_rng_t g = unit_seed(seed);
    /* Bias phases: writer-heavy stretches fill the ring, reader-heavy ones drain it. */
    int wbias = 50;
    for (int op = 0; op < nops && unit_failures < UNIT_MAX_FAILURES; op++) {
        if (op % 200 == 0)
            wbias = (int)unit_range(&g, 20, 80);
        if ((int)unit_range(&g, 1, 100) <= wbias) {
            size_t len = pick_len(&g, m.max);
            unsigned type = data_types[unit_range(&g, 0, TYPES_N - 1)];
            if (!model_write(&m, len, type, unit_range(&g, 0, 3) == 0)) {
                /* Full: reading must make room; at the latest once the reader has drained
                 * and published (reserve re-reads r_pub when its cached value says full). */
                int guard = 0;
                while (!model_write(&m, len, type, 0) && unit_failures < UNIT_MAX_FAILURES) {
                    if (model_read(&m) == 0)
                        CHECK(++guard < 2, "ncells %u: reserve(%zu) refused on a drained ring", ncells, len);
                    if (guard >= 2)
                        break;
                }
            }
        } else {
            model_read(&m);
        }
    }
    while (m.qn && unit_failures < UNIT_MAX_FAILURES)
        model_read(&m);
    check_reader_empty(&m, "end");
    /* the run must have exercised what it claims to test */
    if (unit_failures == 0)
        CHECK(m.skips > 10 && m.fulls > 10 && m.maxframes > 5 && m.zeroframes > 5,
              "ncells %u start %llu: weak coverage: %llu skips, %llu full, %llu max-size, %llu empty frames", ncells,
              (unsigned long long)start, (unsigned long long)m.skips, (unsigned long long)m.fulls,
              (unsigned long long)m.maxframes, (unsigned long long)m.zeroframes);
    model_free(&m);
}

/* Exactly full: from a lap boundary three frames of max_frame, one of a quarter less a line
 * and three of one cell fill a ring but the cell the writer clears after the last; then not
 * even an empty frame fits; consuming one max frame (a quarter: the reader publishes) makes
 * room for a large frame (after a SKIP of the lap's last cell) and then for exactly as many
 * one-cell frames as the model says. */
static void run_exact_full(uint32_t ncells, uint64_t start)
{
    model_t m;
    model_init(&m, ncells, start, 1);
    size_t line = 64 / RMPI_SHM_CELL;
    for (int i = 0; i < 7; i++)
        CHECK(model_write(&m,
                          i < 3    ? m.max
                          : i == 3 ? m.max - line * RMPI_SHM_CELL
                                   : 0,
                          RMPI_SHM_DATA, 0) == 1,
              "ncells %u: frame %d of 7 refused", ncells, i);
    CHECK(m.w - m.r == ncells - 1, "ncells %u: seven frames take %llu cells", ncells, (unsigned long long)(m.w - m.r));
    CHECK(rmpi_shm_ring_reserve(&m.wr, 0) == NULL, "ncells %u: reserve(0) on a full ring succeeded", ncells);
    CHECK(rmpi_shm_ring_reserve(&m.wr, m.max) == NULL, "ncells %u: reserve(max) on a full ring succeeded", ncells);
    CHECK(model_read(&m) == 1, "read");
    CHECK(r_pub(&m) == m.r, "ncells %u: consuming a quarter of the ring did not publish (r_pub %llu, r %llu)", ncells,
          (unsigned long long)r_pub(&m), (unsigned long long)m.r);
    CHECK(model_write(&m, m.max - line * RMPI_SHM_CELL, RMPI_SHM_PUT, 0) == 1,
          "ncells %u: frame refused after consuming a max frame", ncells);
    for (int k = 0; k < 8 && model_write(&m, 0, RMPI_SHM_DATA, 0); k++)
        ;
    CHECK(rmpi_shm_ring_reserve(&m.wr, 0) == NULL, "ncells %u: reserve(0) on a full ring succeeded", ncells);
    /* a max frame must fit an empty ring wherever the reader is (the steps of ncells/4 + 1
     * cells are odd, so they visit every offset of rings up to 256 cells) */
    while (m.qn && unit_failures < UNIT_MAX_FAILURES)
        model_read(&m);
    for (uint32_t k = 0; k < ncells && k < 256; k++) {
        CHECK(model_write(&m, m.max, RMPI_SHM_DATA, 0) == 1, "ncells %u: max frame refused on an empty ring at %llu",
              ncells, (unsigned long long)m.w);
        model_read(&m);
        CHECK(model_write(&m, 0, RMPI_SHM_DATA, 0) == 1, "ncells %u: empty frame refused", ncells);
        model_read(&m);
        check_reader_empty(&m, "after exact-full drain");
        CHECK_BAIL();
    }
    model_free(&m);
}

/* b) Direct stale-stamp probe: lap after lap, fill the ring with multi-cell frames whose
 * every interior cell carries the stamp the next lap's header there will have, read them,
 * then check nothing is reported before the next lap's frames are committed. Frame sizes
 * shift by one cell per lap so headers land on former interior cells. */
static void run_stale(uint32_t ncells, uint64_t start)
{
    model_t m;
    model_init(&m, ncells, start, 1);
    for (int lap = 0; lap < 3 * (int)ncells && unit_failures < UNIT_MAX_FAILURES; lap++) {
        size_t cells = 1 + (size_t)lap % (ncells / 4);
        size_t len = cells * RMPI_SHM_CELL - RMPI_SHM_HDR;
        while (model_write(&m, len, RMPI_SHM_DATA, 1))
            ;
        while (m.qn && unit_failures < UNIT_MAX_FAILURES)
            model_read(&m);
        check_reader_empty(&m, "lap drained");
        /* one more single-cell frame reserved at every position of the next lap, probed
         * before its commit */
        CHECK(model_write(&m, 0, RMPI_SHM_GET_REQ, 1) == 1, "reserve(0) on an empty ring");
        model_read(&m);
    }
    model_free(&m);
}

/* The 32-bit stamp of cell position p is (uint32)(p + 1), which is 0 at p = 2^32 - 1: the
 * value the writer leaves in the cell after each frame (and the provider in every fresh one). An
 * empty ring whose reader sits there must still read as empty. */
static void run_wrap_probe(uint32_t ncells)
{
    for (uint64_t start = 0xffffffffull - 3; start <= 0xffffffffull + 1; start++) {
        model_t m;
        model_init(&m, ncells, start, 1);
        for (int i = 0; i < 6; i++) {
            check_reader_empty(&m, "empty ring near the 2^32 stamp wrap");
            CHECK(model_write(&m, 0, RMPI_SHM_DATA, 1) == 1, "reserve(0) on an empty ring");
            model_read(&m);
        }
        model_free(&m);
    }
}

/* ---------------- c) two threads ---------------- */

#define MT_FRAMES 1000000u
#define MT_CELLS 64u

typedef struct mt {
    rmpi_shm_ring_t *ring;
    rmpi_shm_writer_t wr;
    rmpi_shm_reader_t rd;
    uint64_t sum_w, sum_r;
    uint64_t waits_w, waits_r;
} mt_t;

static size_t mt_len(unit_rng_t *g, size_t max)
{
    uint64_t k = unit_range(g, 0, 7);
    if (k < 5)
        return (size_t)unit_range(g, 0, 56); /* at most a cache line: the common case */
    if (k < 6)
        return (size_t)unit_range(g, 57, max < 250 ? max : 250);
    return (size_t)unit_range(g, 0, max);
}

/* FNV-1a over 8-byte words (then the tail bytes): order- and position-sensitive, cheap. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return (h ^ n) * 0x100000001b3ull;
}

static void *mt_writer(void *arg)
{
    mt_t *t = arg;
    size_t max = rmpi_shm_ring_max_frame(MT_CELLS);
    unit_rng_t g = unit_seed(4242);
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint32_t i = 0; i < MT_FRAMES; i++) {
        size_t len = mt_len(&g, max);
        unsigned type = data_types[i % TYPES_N];
        char *p;
        unsigned spins = 0;
        while (!(p = rmpi_shm_ring_reserve(&t->wr, len))) {
            t->waits_w++;
            if (++spins > 64)
                sched_yield();
        }
        uint64_t pos = t->wr.w; /* the header cell (after any SKIP) */
        payload(p, len, i, pos, MT_CELLS, 1);
        h = fnv(h, p, len);
        rmpi_shm_ring_commit(&t->wr, len, type);
    }
    t->sum_w = h;
    return NULL;
}

static void *mt_reader(void *arg)
{
    mt_t *t = arg;
    size_t max = rmpi_shm_ring_max_frame(MT_CELLS);
    unit_rng_t g = unit_seed(4242);
    uint64_t h = 0xcbf29ce484222325ull;
    char *want = malloc(max);
    int failed0 = unit_failures;
    for (uint32_t i = 0; i < MT_FRAMES && unit_failures - failed0 < 20; i++) {
        size_t elen = mt_len(&g, max);
        unsigned etype = data_types[i % TYPES_N];
        size_t len;
        unsigned type;
        const char *f;
        unsigned spins = 0;
        while (!(f = rmpi_shm_ring_peek(&t->rd, &len, &type))) {
            t->waits_r++;
            if (++spins > 64)
                sched_yield();
        }
        CHECK(len == elen && type == etype, "frame %u: len %zu type %u, sent len %zu type %u", i, len, type, elen,
              etype);
        if (len > max)
            break;
        if (len == elen) {
            payload(want, len, i, t->rd.r, MT_CELLS, 1);
            if (memcmp(f, want, len) != 0) {
                size_t k = 0;
                while (f[k] == want[k])
                    k++;
                CHECK(0, "frame %u len %zu: byte %zu is %#x, sent %#x", i, len, k, (unsigned char)f[k],
                      (unsigned char)want[k]);
            }
        }
        h = fnv(h, f, len);
        rmpi_shm_ring_consume(&t->rd, len);
    }
    size_t len;
    unsigned type;
    if (unit_failures == failed0)
        CHECK(rmpi_shm_ring_peek(&t->rd, &len, &type) == NULL, "a frame after the last one (len %zu)", len);
    t->sum_r = h;
    free(want);
    return NULL;
}

static void run_threads(void)
{
    mt_t t;
    memset(&t, 0, sizeof t);
    t.ring = ring_new(MT_CELLS);
    ends_init(t.ring, MT_CELLS, 0, &t.wr, &t.rd);
    int failed0 = unit_failures;
    pthread_t a, b;
    if (pthread_create(&a, NULL, mt_writer, &t) || pthread_create(&b, NULL, mt_reader, &t)) {
        CHECK(0, "pthread_create failed");
        return;
    }
    pthread_join(b, NULL);
    if (unit_failures != failed0) { /* the writer may be stuck on a reader that gave up */
        fprintf(stderr, "shm_ring: reader failed; not waiting for the writer\n");
        return;
    }
    pthread_join(a, NULL);
    CHECK(t.sum_w == t.sum_r, "checksum: writer %#llx, reader %#llx", (unsigned long long)t.sum_w,
          (unsigned long long)t.sum_r);
    /* both sides must have had to wait, or the ring was never full/empty under contention */
    CHECK(t.waits_w > 0 && t.waits_r > 0, "no contention: writer waited %llu times, reader %llu",
          (unsigned long long)t.waits_w, (unsigned long long)t.waits_r);
    free(t.ring);
}

#define BELL_W 3
#define BELL_FRAMES 300000u

typedef struct bell_test {
    _Atomic uint64_t word;
    rmpi_shm_ring_t *ring[BELL_W];
    rmpi_shm_writer_t wr[BELL_W];
    rmpi_shm_reader_t rd[BELL_W];
    int idx[BELL_W];
} bell_test_t;
static bell_test_t bt;

static void *bell_writer(void *arg)
{
    int w = *(int *)arg;
    for (uint32_t i = 0; i < BELL_FRAMES; i++) {
        char *p;
        while (!(p = rmpi_shm_ring_reserve(&bt.wr[w], sizeof i)))
            sched_yield();
        memcpy(p, &i, sizeof i);
        rmpi_shm_ring_commit(&bt.wr[w], sizeof i, RMPI_SHM_DATA);
        rmpi_shm_bell(&bt.word, 1ull << (2 * w + 1)); /* not bit w: any bit of the word */
    }
    return NULL;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void run_bells(void)
{
    memset(&bt, 0, sizeof bt);
    pthread_t th[BELL_W];
    for (int w = 0; w < BELL_W; w++) {
        bt.ring[w] = ring_new(64);
        ends_init(bt.ring[w], 64, 0, &bt.wr[w], &bt.rd[w]);
        bt.idx[w] = w;
    }
    for (int w = 0; w < BELL_W; w++)
        if (pthread_create(&th[w], NULL, bell_writer, &bt.idx[w])) {
            CHECK(0, "pthread_create failed");
            return;
        }
    uint32_t next[BELL_W] = {0};
    uint64_t total = 0, idle = 0;
    int lost = 0;
    while (total < (uint64_t)BELL_W * BELL_FRAMES && !lost) {
        uint64_t b = rmpi_shm_bell_take(&bt.word);
        if (!b) {
            if (++idle % 100000)
                continue;
            /* a while with nothing: does a ring hold a frame that no bit announces? */
            for (int w = 0; w < BELL_W && !lost; w++) {
                size_t len;
                unsigned type;
                if (!rmpi_shm_ring_peek(&bt.rd[w], &len, &type))
                    continue;
                uint64_t t0 = now_ns();
                while (!(atomic_load(&bt.word) & (1ull << (2 * w + 1))) && now_ns() - t0 < 200000000u)
                    sched_yield();
                lost = !(atomic_load(&bt.word) & (1ull << (2 * w + 1)));
                CHECK(!lost, "ring %d holds frame %u and its bit stayed clear for 200 ms", w, next[w]);
            }
            continue;
        }
        for (int w = 0; w < BELL_W; w++) {
            if (!(b & (1ull << (2 * w + 1))))
                continue;
            size_t len;
            unsigned type;
            const char *f;
            while ((f = rmpi_shm_ring_peek(&bt.rd[w], &len, &type))) {
                uint32_t v;
                memcpy(&v, f, sizeof v);
                if (v != next[w] || len != sizeof v) {
                    CHECK(0, "ring %d: frame %u (len %zu) where %u was next", w, v, len, next[w]);
                    lost = 1;
                    break;
                }
                next[w]++;
                total++;
                rmpi_shm_ring_consume(&bt.rd[w], len);
            }
        }
    }
    if (lost) { /* the writers may wait on rings nobody reads */
        fprintf(stderr, "shm_ring: doorbell failed; not waiting for the writers\n");
        return;
    }
    for (int w = 0; w < BELL_W; w++) {
        pthread_join(th[w], NULL);
        free(bt.ring[w]);
    }
    CHECK(total == (uint64_t)BELL_W * BELL_FRAMES, "%llu frames of %u", (unsigned long long)total,
          BELL_W * BELL_FRAMES);
}

int main(void)
{
    unit_watchdog("shm_ring", 60, "ring deadlock?"); /* generous: two spinning sides on a loaded machine */
    static const uint32_t sizes[] = {64, 128, 1024};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        uint32_t n = sizes[i];
        run_exact_full(n, 0);
        run_random(n, 0, 0, 1000 + n, 60000);
        run_random(n, 0, 1, 2000 + n, 60000);
        run_stale(n, 0);
        /* 64-bit positions, 32-bit stamps: runs that cross 2^32 (the stamp wraps to 0) */
        run_stale(n, 0xffffffffull - 2 * n);
        run_random(n, 0xffffffffull - 700, 1, 3000 + n, 20000);
        run_exact_full(n, 0x100000000ull - 2 * n);
        run_wrap_probe(n);
    }
    /* a ring whose frames need more than 16 bits of length */
    run_exact_full(8192, 0);
    run_random(8192, 0, 1, 9000, 2000);
    if (!unit_failures) /* a broken ring can deadlock two threads: report what we have */
        run_threads();
    if (!unit_failures)
        run_bells();
    return finish("shm_ring");
}
