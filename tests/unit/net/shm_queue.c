/*
 * The shm shared channel's receive queue (src/net/shm/shm_queue.h), in plain memory.
 *  a) layout and class choice: the default classes (256 B .. 8 KiB) get about the bytes
 *     asked per class, at least the largest-class minimum, slots >= buffers; a frame of n
 *     bytes maps to the smallest class >= n (900 -> 1 KiB, 1024 -> 1 KiB, 1025 -> 2 KiB,
 *     8193 -> none); buffers of different classes never overlap.
 *  b) one thread: a class that runs dry hands out the next larger one, then UINT32_MAX when
 *     every larger class is dry too; freed buffers come back; every buffer comes out once.
 *  c) four producer threads, each 100,000 frames of random class-spread sizes (fragments
 *     flagged MORE for the largest), one consumer: per producer every frame arrives once, in
 *     order, intact; no buffer is handed to two frames at once (a per-buffer owner word).
 *  d) c) with the doorbell (docs/wire/shm.md, version 4): each producer sets the queue's bit
 *     after each slot it publishes, and the consumer reads the queue only when it takes the
 *     bit, or when the last read left it (rmpi_shm_qbell_again: its bound of 8 slots reached,
 *     or nothing read while a position is taken and not published). The same checks, and
 *     a published slot found while the bit stays clear for 200 ms (checked whenever the
 *     consumer took nothing for a while) is a frame left unannounced: a reader that drops
 *     the bit when its bound stops it fails (ringing before the slot's seq is stored leaves
 *     a frame until the next one rings, a window too short for this test to see).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>

#include "net/shm/shm.h"
#include "net/shm/shm_queue.h"

#include "../unit_check.h"

#define PRODUCERS 4
#define FRAMES 100000

static rmpi_shm_qlayout_t lay;
static rmpi_shm_queue_t q;
static _Atomic int owner[1 << 16];
static _Atomic uint64_t qword; /* d): the doorbell word */
static int bell;               /* d): producers ring, the consumer reads on the bit */
#define QBIT (1ull << 5)
#define BELL_BOUND 8

static void *area_new(size_t bytes)
{
    void *a = aligned_alloc(4096, bytes);
    if (!a) {
        perror("aligned_alloc");
        exit(2);
    }
    memset(a, 0, bytes);
    return a;
}

static void layout_and_classes(void)
{
    const uint32_t cs[] = {256, 1024, 2048, 4096, 8192};
    rmpi_shm_qlayout(&lay, cs, 5, 128 * 1024, 16);
    CHECK(lay.nclass == 5, "nclass %d", lay.nclass);
    CHECK(lay.cfirst[1] - lay.cfirst[0] == 512, "256 B class has %u buffers", lay.cfirst[1] - lay.cfirst[0]);
    CHECK(lay.cfirst[5] - lay.cfirst[4] == 16, "8 KiB class has %u buffers", lay.cfirst[5] - lay.cfirst[4]);
    CHECK(lay.qcap >= lay.cfirst[5] && !(lay.qcap & (lay.qcap - 1)), "qcap %u for %u buffers", lay.qcap, lay.cfirst[5]);
    CHECK(rmpi_shm_qclass(&lay, 900) == 1, "900 B -> class %d", rmpi_shm_qclass(&lay, 900));
    CHECK(rmpi_shm_qclass(&lay, 0) == 0, "0 B -> class %d", rmpi_shm_qclass(&lay, 0));
    CHECK(rmpi_shm_qclass(&lay, 256) == 0, "256 B -> class %d", rmpi_shm_qclass(&lay, 256));
    CHECK(rmpi_shm_qclass(&lay, 1024) == 1, "1024 B -> class %d", rmpi_shm_qclass(&lay, 1024));
    CHECK(rmpi_shm_qclass(&lay, 1025) == 2, "1025 B -> class %d", rmpi_shm_qclass(&lay, 1025));
    CHECK(rmpi_shm_qclass(&lay, 8192) == 4, "8192 B -> class %d", rmpi_shm_qclass(&lay, 8192));
    CHECK(rmpi_shm_qclass(&lay, 8193) == 5, "8193 B -> class %d", rmpi_shm_qclass(&lay, 8193));
    rmpi_shm_qlayout_t big;
    rmpi_shm_qlayout(&big, cs, 5, 8192, 40);
    CHECK(big.cfirst[5] - big.cfirst[4] == 40, "largest-class minimum: %u", big.cfirst[5] - big.cfirst[4]);
    CHECK(big.cfirst[1] - big.cfirst[0] == 32, "8 KiB per class of 256 B: %u", big.cfirst[1] - big.cfirst[0]);
    for (int c = 0; c + 1 < lay.nclass; c++) {
        size_t end = lay.coff[c] + (size_t)(lay.cfirst[c + 1] - lay.cfirst[c]) * lay.csize[c];
        CHECK(end <= lay.coff[c + 1], "class %d overlaps class %d", c, c + 1);
    }
    CHECK(lay.coff[0] >= lay.next_off + lay.cfirst[5] * sizeof(uint32_t), "buffers overlap the free links");
}

static void dry_classes(void)
{
    const uint32_t cs[] = {256, 1024};
    rmpi_shm_qlayout_t l;
    rmpi_shm_qlayout(&l, cs, 2, 1024, 1); /* 4 x 256, 1 x 1024 */
    void *a = area_new(l.bytes);
    rmpi_shm_queue_t t;
    rmpi_shm_queue_attach(&t, a, &l);
    rmpi_shm_queue_init(&t);
    uint32_t got[5];
    int seen[5] = {0};
    for (int i = 0; i < 5; i++) {
        got[i] = rmpi_shm_qalloc(&t, 0);
        CHECK(got[i] < 5, "alloc %d: %u", i, got[i]);
        if (got[i] < 5)
            seen[got[i]]++;
    }
    for (int i = 0; i < 5; i++)
        CHECK(seen[i] == 1, "buffer %d handed out %d times", i, seen[i]);
    CHECK(got[4] == 4, "the fifth 256 B frame takes the 1 KiB buffer (got %u)", got[4]);
    CHECK(rmpi_shm_qalloc(&t, 0) == UINT32_MAX, "a dry pool gives a buffer");
    CHECK(rmpi_shm_qalloc(&t, 1) == UINT32_MAX, "a dry class gives a buffer");
    rmpi_shm_qenqueue(&t, got[2], 10, 3, 0, 0);
    const rmpi_shm_qslot_t *s = rmpi_shm_qpeek(&t);
    CHECK(s && s->buf == got[2] && s->len == 10 && s->from == 3, "slot does not hold what was enqueued");
    if (s)
        rmpi_shm_qconsume(&t, s);
    CHECK(!rmpi_shm_qpeek(&t), "consumed slot seen again");
    CHECK(rmpi_shm_qalloc(&t, 0) == got[2], "the freed buffer does not come back");
    free(a);
}

static size_t frame_len(unit_rng_t *g)
{
    static const size_t sz[] = {0, 8, 200, 256, 900, 1024, 2000, 4000, 4096, 8192};
    return sz[unit_rand(g) % 10];
}

static void *producer(void *arg)
{
    int me = (int)(intptr_t)arg;
    unit_rng_t g = unit_seed(100 + (uint64_t)me);
    for (uint32_t i = 0; i < FRAMES; i++) {
        size_t len = frame_len(&g);
        int frags = len == 8192 ? 2 : 1; /* the largest: two fragments of 4096 */
        for (int f = 0; f < frags; f++) {
            size_t n = frags == 2 ? 4096 : len;
            uint32_t b;
            while ((b = rmpi_shm_qalloc(&q, rmpi_shm_qclass(&lay, n))) == UINT32_MAX)
                sched_yield();
            int zero = 0;
            if (!atomic_compare_exchange_strong(&owner[b], &zero, me + 1))
                CHECK(0, "buffer %u handed to producer %d while producer %d holds it", b, me, zero - 1);
            char *p = rmpi_shm_qbuf(&q, b, NULL);
            if (n >= 8) {
                memcpy(p, &i, 4);
                memcpy(p + 4, &f, 4);
                memset(p + 8, (int)(i + (uint32_t)me), n - 8);
            }
            rmpi_shm_qenqueue(&q, b, (uint32_t)n, (uint16_t)me, 0, f + 1 < frags ? RMPI_SHM_Q_MORE : 0);
            if (bell)
                rmpi_shm_bell(&qword, QBIT);
        }
    }
    return NULL;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

typedef struct consumer {
    uint32_t next[PRODUCERS];
    int frag[PRODUCERS];
    unit_rng_t g[PRODUCERS];
    size_t cur[PRODUCERS];
    uint64_t total;
} consumer_t;

/* Checks and consumes slot s; 0 when it names no producer (the test ends). */
static int consume(consumer_t *c, const rmpi_shm_qslot_t *s)
{
    int p = s->from;
    if (p >= PRODUCERS) {
        CHECK(0, "slot names producer %d", p);
        return 0;
    }
    size_t want = c->cur[p] == 8192 ? 4096 : c->cur[p];
    int more = c->cur[p] == 8192 && c->frag[p] == 0;
    CHECK(s->len == want, "producer %d frame %u: %u bytes, expected %zu", p, c->next[p], s->len, want);
    CHECK(!!(s->flags & RMPI_SHM_Q_MORE) == more, "producer %d frame %u: MORE flag wrong", p, c->next[p]);
    const char *b = rmpi_shm_qbuf(&q, s->buf, NULL);
    if (s->len >= 8 && s->len == want) {
        uint32_t i;
        int f;
        memcpy(&i, b, 4);
        memcpy(&f, b + 4, 4);
        CHECK(i == c->next[p] && f == c->frag[p], "producer %d: frame %u/%d where %u/%d was due", p, i, f, c->next[p],
              c->frag[p]);
        for (size_t k = 8; k < s->len; k++)
            if ((unsigned char)b[k] != (unsigned char)(c->next[p] + (uint32_t)p)) {
                CHECK(0, "producer %d frame %u: byte %zu corrupt", p, c->next[p], k);
                break;
            }
    }
    atomic_store(&owner[s->buf], 0);
    rmpi_shm_qconsume(&q, s);
    if (more) {
        c->frag[p] = 1;
        return 1;
    }
    c->frag[p] = 0;
    c->next[p]++;
    c->total++;
    c->cur[p] = frame_len(&c->g[p]);
    return 1;
}

static void threads(int with_bell)
{
    const uint32_t cs[] = {256, 1024, 2048, 4096};
    rmpi_shm_qlayout(&lay, cs, 4, 16384, 4);
    void *a = area_new(lay.bytes);
    rmpi_shm_queue_attach(&q, a, &lay);
    rmpi_shm_queue_init(&q);
    memset(owner, 0, sizeof owner);
    bell = with_bell;
    atomic_store(&qword, 0);
    pthread_t t[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++)
        pthread_create(&t[i], NULL, producer, (void *)(intptr_t)i);
    static consumer_t c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < PRODUCERS; i++) {
        c.g[i] = unit_seed(100 + (uint64_t)i);
        c.cur[i] = frame_len(&c.g[i]);
    }
    int left = 0, lost = 0;
    uint64_t idle = 0;
    while (c.total < (uint64_t)PRODUCERS * FRAMES && !lost) {
        int bound = 64;
        if (bell) {
            if (!(rmpi_shm_bell_take(&qword) & QBIT) && !left) {
                if (++idle % 100000)
                    continue;
                /* a while with nothing: does a published slot wait with its bit clear? */
                if (rmpi_shm_qpeek(&q)) {
                    uint64_t t0 = now_ns();
                    while (!(atomic_load(&qword) & QBIT) && now_ns() - t0 < 200000000u)
                        sched_yield();
                    lost = !(atomic_load(&qword) & QBIT);
                    CHECK(!lost, "a published slot (producer %u) waits and the queue's bit stayed clear for 200 ms",
                          rmpi_shm_qpeek(&q)->from);
                }
                continue;
            }
            bound = BELL_BOUND;
        }
        int n = 0;
        const rmpi_shm_qslot_t *s;
        while (n < bound && (s = rmpi_shm_qpeek(&q))) {
            if (!consume(&c, s)) {
                lost = 1;
                break;
            }
            n++;
        }
        if (bell)
            left = rmpi_shm_qbell_again(&q, n, bound);
        else if (!n)
            sched_yield();
    }
    if (lost) { /* the producers may wait for buffers nobody frees */
        fprintf(stderr, "shm_queue: %s failed; not waiting for the producers\n", bell ? "doorbell" : "queue");
        return;
    }
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(t[i], NULL);
    CHECK(!rmpi_shm_qpeek(&q), "a slot left over");
    free(a);
}

int main(void)
{
    unit_watchdog("shm_queue", 100, "a producer or the consumer is stuck");
    layout_and_classes();
    dry_classes();
    threads(0);
    if (!unit_failures)
        threads(1);
    return finish("shm_queue");
}
