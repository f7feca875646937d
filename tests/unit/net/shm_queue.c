/*
 * The shm shared channel's receive queue (src/net/shm/shm_queue.h), in plain memory.
 *  a) layout and class choice: the default classes (256 B .. 8 KiB) get about the bytes
 *     asked per class in buffers of the class + RMPI_SHM_Q_ROOM, at least the largest-class
 *     minimum, slots of one cache line, slots >= buffers and >= RMPI_SHM_QCAP_MIN; a frame of
 *     n bytes maps to the smallest buffer >= n (900 -> 1 KiB, 1024 and 1088 -> 1 KiB, 1089 ->
 *     2 KiB, a 4 KiB message's 4100-byte frame -> 4 KiB, 8256 -> 8 KiB, 8257 -> none); buffers
 *     of different classes never overlap.
 *  b) one thread: a class that runs dry hands out the next larger one, then UINT32_MAX when
 *     every larger class is dry too; buffers read come back only with rmpi_shm_qrelease (two
 *     classes in one batch, each buffer once), or by themselves at the
 *     RMPI_SHM_Q_RELEASE_BATCH-th read, not before; every buffer comes out once. A
 *     frame of RMPI_SHM_Q_INLINE bytes travels in its slot and takes no buffer; a full queue
 *     refuses a position (and the buffer's frame stays the caller's) until the receiver reads
 *     one, over several laps of the slots.
 *  c) four producer threads, each 100,000 frames of random sizes across the inline limit and
 *     the classes (0, 8, 40, 48 inline; 49 .. 4096 in buffers; 8192 as two fragments flagged
 *     MORE), one consumer: per producer every frame arrives once, in order, intact; no buffer
 *     is handed to two frames at once (a per-buffer owner word); producers wait while the
 *     queue is full; the consumer gives buffers back after each read of at most 64 slots.
 *  d) c) with the doorbell (docs/wire/shm.md, version 5): each producer sets the queue's bit
 *     after each slot it publishes unless it finds it set (rmpi_shm_qbell), and the consumer
 *     reads the queue only when it takes the bit, or when the last read left it
 *     (rmpi_shm_qbell_again: its bound of 8 slots reached, or a position taken that it did
 *     not read). The same checks, and a published slot found while the bit stays clear for
 *     200 ms (checked whenever the consumer took nothing for a while) is a frame left
 *     unannounced: a reader that drops the bit when its bound stops it fails.
 *  e) d) with four producer processes (fork) over a shared mapping, as the provider's ranks.
 *  f) the check of d) can fail: producer processes that ring once and then always skip (as if
 *     covered) leave frames unannounced, and d)'s check must see it within 20 s.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net/shm/shm.h"
#include "net/shm/shm_queue.h"

#include "../unit_check.h"

#define PRODUCERS 4
#define FRAMES 100000

enum { NO_BELL, BELL, BELL_BROKEN };

/* what producers and the consumer share: in a MAP_SHARED mapping, so processes can (e, f) */
typedef struct shared {
    _Atomic int owner[1 << 16];
    _Atomic uint64_t qword; /* d): the doorbell word */
} shared_t;

static rmpi_shm_qlayout_t lay;
static rmpi_shm_queue_t q;
static shared_t *sh;
static int bell; /* NO_BELL, or how producers ring and the consumer reads on the bit */
#define QBIT (1ull << 5)
#define BELL_BOUND 8

static void *shared_new(size_t bytes)
{
    void *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    return a;
}

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
    CHECK(lay.csize[0] == 256 + RMPI_SHM_Q_ROOM && lay.csize[4] == 8192 + RMPI_SHM_Q_ROOM, "buffers of %u .. %u B",
          lay.csize[0], lay.csize[4]);
    CHECK(lay.cfirst[1] - lay.cfirst[0] == 128 * 1024 / (256 + RMPI_SHM_Q_ROOM), "256 B class has %u buffers",
          lay.cfirst[1] - lay.cfirst[0]);
    CHECK(lay.cfirst[5] - lay.cfirst[4] == 16, "8 KiB class has %u buffers", lay.cfirst[5] - lay.cfirst[4]);
    CHECK(lay.qcap >= lay.cfirst[5] && lay.qcap >= RMPI_SHM_QCAP_MIN && !(lay.qcap & (lay.qcap - 1)),
          "qcap %u for %u buffers", lay.qcap, lay.cfirst[5]);
    CHECK(sizeof(rmpi_shm_qslot_t) == 64 && lay.slots_off % 64 == 0, "slots of %zu bytes at %zu",
          sizeof(rmpi_shm_qslot_t), lay.slots_off);
    CHECK(rmpi_shm_qclass(&lay, 900) == 1, "900 B -> class %d", rmpi_shm_qclass(&lay, 900));
    CHECK(rmpi_shm_qclass(&lay, 0) == 0, "0 B -> class %d", rmpi_shm_qclass(&lay, 0));
    CHECK(rmpi_shm_qclass(&lay, 256) == 0, "256 B -> class %d", rmpi_shm_qclass(&lay, 256));
    CHECK(rmpi_shm_qclass(&lay, 1024) == 1, "1024 B -> class %d", rmpi_shm_qclass(&lay, 1024));
    CHECK(rmpi_shm_qclass(&lay, 1088) == 1, "1088 B -> class %d", rmpi_shm_qclass(&lay, 1088));
    CHECK(rmpi_shm_qclass(&lay, 1089) == 2, "1089 B -> class %d", rmpi_shm_qclass(&lay, 1089));
    CHECK(rmpi_shm_qclass(&lay, 4100) == 3, "4100 B -> class %d", rmpi_shm_qclass(&lay, 4100));
    CHECK(rmpi_shm_qclass(&lay, 8256) == 4, "8256 B -> class %d", rmpi_shm_qclass(&lay, 8256));
    CHECK(rmpi_shm_qclass(&lay, 8257) == 5, "8257 B -> class %d", rmpi_shm_qclass(&lay, 8257));
    rmpi_shm_qlayout_t big;
    rmpi_shm_qlayout(&big, cs, 5, 8192, 40);
    CHECK(big.cfirst[5] - big.cfirst[4] == 40, "largest-class minimum: %u", big.cfirst[5] - big.cfirst[4]);
    CHECK(big.cfirst[1] - big.cfirst[0] == 8192 / (256 + RMPI_SHM_Q_ROOM), "8 KiB per class of 256 B: %u",
          big.cfirst[1] - big.cfirst[0]);
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
    rmpi_shm_qlayout(&l, cs, 2, 4 * (256 + RMPI_SHM_Q_ROOM), 1); /* 4 x 256, 1 x 1024 */
    CHECK(l.cfirst[1] == 4 && l.cfirst[2] == 5, "%u and %u buffers", l.cfirst[1], l.cfirst[2] - l.cfirst[1]);
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
    CHECK(rmpi_shm_qenqueue(&t, got[2], 100, 3, 0, 0), "an empty queue refuses a frame");
    const rmpi_shm_qslot_t *s = rmpi_shm_qpeek(&t);
    CHECK(s && s->buf == got[2] && s->len == 100 && s->from == 3, "slot does not hold what was enqueued");
    if (s)
        rmpi_shm_qconsume(&t, s);
    CHECK(!rmpi_shm_qpeek(&t), "consumed slot seen again");
    /* a class of 4 buffers: none is held back (an eighth at most), so it is back at once */
    CHECK(rmpi_shm_qalloc(&t, 0) == got[2], "the freed buffer does not come back");
    CHECK(rmpi_shm_qalloc(&t, 0) == UINT32_MAX, "an inline frame's consume freed a buffer");

    /* buffers of two classes read together come back once each */
    for (int i = 0; i < 5; i++)
        CHECK(rmpi_shm_qenqueue(&t, got[i], i == 4 ? 300 : 100, 2, 0, 0), "frame %d refused", i);
    for (int i = 0; i < 5 && (s = rmpi_shm_qpeek(&t)); i++) {
        CHECK(s->buf == got[i], "frame %d holds buffer %u", i, s->buf);
        rmpi_shm_qconsume(&t, s);
    }
    rmpi_shm_qrelease(&t); /* nothing held: a no-op */
    int back[5] = {0};
    uint32_t b;
    while ((b = rmpi_shm_qalloc(&t, 0)) != UINT32_MAX)
        CHECK(b < 5 && ++back[b] == 1, "buffer %u came back twice", b);
    for (int i = 0; i < 5; i++)
        CHECK(back[i] == 1, "buffer %d came back %d times", i, back[i]);
    got[0] = 0; /* every buffer is the test's again; buffer 0 stands for a sender's below */

    /* inline frames: slots only; a full queue refuses, over several laps of the slots */
    CHECK(l.qcap == RMPI_SHM_QCAP_MIN, "qcap %u for 5 buffers", l.qcap);
    uint64_t sent = 6, read = 6; /* positions 0 .. 5 held the buffers' frames */
    for (int lap = 0; lap < 5; lap++) {
        uint64_t pos;
        rmpi_shm_qslot_t *w;
        while ((w = rmpi_shm_qreserve(&t, &pos))) {
            CHECK(pos == sent, "position %llu where %llu was due", (unsigned long long)pos, (unsigned long long)sent);
            memset(w->data, (int)(sent & 0xff), RMPI_SHM_Q_INLINE);
            rmpi_shm_qpublish(w, pos, RMPI_SHM_Q_INLINE, 1, 0, 0);
            sent++;
        }
        CHECK(sent - read == l.qcap, "lap %d: full after %llu slots in use, not %u", lap,
              (unsigned long long)(sent - read), l.qcap);
        CHECK(!rmpi_shm_qenqueue(&t, got[0], 100, 1, 0, 0), "a full queue takes a buffer's frame");
        CHECK(rmpi_shm_qreserved(&t), "a full queue looks empty");
        for (int k = 0; k < 40 && (s = rmpi_shm_qpeek(&t)); k++) {
            int ok = s->len == RMPI_SHM_Q_INLINE;
            for (int b = 0; ok && b < RMPI_SHM_Q_INLINE; b++)
                ok = (unsigned char)s->data[b] == (read & 0xff);
            CHECK(ok, "inline frame %llu corrupt", (unsigned long long)read);
            rmpi_shm_qconsume(&t, s);
            read++;
        }
    }
    while ((s = rmpi_shm_qpeek(&t))) {
        rmpi_shm_qconsume(&t, s);
        read++;
    }
    CHECK(read == sent && !rmpi_shm_qreserved(&t), "%llu of %llu inline frames read", (unsigned long long)read,
          (unsigned long long)sent);
    rmpi_shm_qfree(&t, got[0]);
    CHECK(rmpi_shm_qalloc(&t, 0) == got[0], "the buffer of a refused frame was not the caller's");
    free(a);
}

/* Batches: a class of 64 buffers holds back RMPI_SHM_Q_RELEASE_BATCH read buffers, one of
 * 18 two (an eighth); the batch's last read gives that class's back, rmpi_shm_qrelease the
 * rest; each buffer comes back once. */
static void release_batch(void)
{
    const uint32_t cs[] = {256, 1024};
    enum { SMALL = 64, LARGE = 18 }; /* 64 x 320 B of 1088-byte buffers */
    rmpi_shm_qlayout_t l;
    rmpi_shm_qlayout(&l, cs, 2, SMALL * (256 + RMPI_SHM_Q_ROOM), LARGE);
    CHECK(l.cfirst[1] == SMALL && l.cfirst[2] == SMALL + LARGE, "%u and %u buffers", l.cfirst[1],
          l.cfirst[2] - l.cfirst[1]);
    void *a = area_new(l.bytes);
    rmpi_shm_queue_t t;
    rmpi_shm_queue_attach(&t, a, &l);
    rmpi_shm_queue_init(&t);
    CHECK(t.rel_max[0] == RMPI_SHM_Q_RELEASE_BATCH && t.rel_max[1] == 2, "batches of %u and %u", t.rel_max[0],
          t.rel_max[1]);
    uint32_t held[RMPI_SHM_Q_RELEASE_BATCH + 1];
    for (int k = 0; k <= RMPI_SHM_Q_RELEASE_BATCH; k++) { /* the last: a 1 KiB frame */
        held[k] = rmpi_shm_qalloc(&t, k == RMPI_SHM_Q_RELEASE_BATCH);
        CHECK(held[k] != UINT32_MAX &&
                  rmpi_shm_qenqueue(&t, held[k], k == RMPI_SHM_Q_RELEASE_BATCH ? 1000 : 100, 1, 0, 0),
              "frame %d of the batch", k);
    }
    const rmpi_shm_qslot_t *s;
    for (int k = 0; k < RMPI_SHM_Q_RELEASE_BATCH && (s = rmpi_shm_qpeek(&t)); k++) {
        rmpi_shm_qconsume(&t, s);
        CHECK(t.rel_n[0] == (uint32_t)(k + 1) % RMPI_SHM_Q_RELEASE_BATCH, "read %d: %u held", k + 1, t.rel_n[0]);
    }
    CHECK((s = rmpi_shm_qpeek(&t)) && s->len == 1000, "the 1 KiB frame");
    if (s)
        rmpi_shm_qconsume(&t, s);
    CHECK(t.rel_n[1] == 1 && t.rel_mask == 2u, "the 1 KiB buffer not held (%u, mask %#x)", t.rel_n[1], t.rel_mask);
    rmpi_shm_qrelease(&t);
    CHECK(t.rel_mask == 0 && t.rel_n[1] == 0, "buffers held after rmpi_shm_qrelease");
    int back[SMALL + LARGE] = {0};
    uint32_t b;
    while ((b = rmpi_shm_qalloc(&t, 0)) != UINT32_MAX)
        CHECK(b < SMALL + LARGE && ++back[b] == 1, "buffer %u came back twice", b);
    for (int i = 0; i < SMALL + LARGE; i++)
        CHECK(back[i] == 1, "buffer %d came back %d times", i, back[i]);
    free(a);
}

static size_t frame_len(unit_rng_t *g)
{
    static const size_t sz[] = {0, 8, 40, 48, 49, 200, 256, 900, 1024, 2000, 4000, 4096, 8192};
    return sz[unit_rand(g) % (sizeof sz / sizeof sz[0])];
}

/* A frame's bytes: its number and fragment, then a fill both derive from. */
static void fill(char *p, size_t n, uint32_t i, int f, int me)
{
    if (n >= 8) {
        memcpy(p, &i, 4);
        memcpy(p + 4, &f, 4);
        memset(p + 8, (int)(i + (uint32_t)me), n - 8);
    }
}

static void *producer(void *arg)
{
    int me = (int)(intptr_t)arg;
    unit_rng_t g = unit_seed(100 + (uint64_t)me);
    int rang = 0;
    for (uint32_t i = 0; i < FRAMES; i++) {
        size_t len = frame_len(&g);
        int frags = len == 8192 ? 2 : 1; /* the largest: two fragments of 4096 */
        for (int f = 0; f < frags; f++) {
            size_t n = frags == 2 ? 4096 : len;
            uint8_t flags = f + 1 < frags ? RMPI_SHM_Q_MORE : 0;
            if (n <= RMPI_SHM_Q_INLINE) {
                uint64_t pos;
                rmpi_shm_qslot_t *w;
                while (!(w = rmpi_shm_qreserve(&q, &pos)))
                    sched_yield();
                fill(w->data, n, i, f, me);
                rmpi_shm_qpublish(w, pos, (uint32_t)n, (uint16_t)me, 0, flags);
            } else {
                uint32_t b;
                while ((b = rmpi_shm_qalloc(&q, rmpi_shm_qclass(&lay, n))) == UINT32_MAX)
                    sched_yield();
                int zero = 0;
                if (!atomic_compare_exchange_strong(&sh->owner[b], &zero, me + 1))
                    CHECK(0, "buffer %u handed to producer %d while producer %d holds it", b, me, zero - 1);
                fill(rmpi_shm_qbuf(&q, b, NULL), n, i, f, me);
                while (!rmpi_shm_qenqueue(&q, b, (uint32_t)n, (uint16_t)me, 0, flags))
                    sched_yield();
            }
            if (bell == BELL)
                rmpi_shm_qbell(&sh->qword, QBIT);
            else if (bell == BELL_BROKEN && !rang++) /* rings once, then believes itself covered */
                rmpi_shm_qbell(&sh->qword, QBIT);
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
    const char *b = s->len <= RMPI_SHM_Q_INLINE ? s->data : rmpi_shm_qbuf(&q, s->buf, NULL);
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
    if (s->len > RMPI_SHM_Q_INLINE)
        atomic_store(&sh->owner[s->buf], 0);
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

/* The consumer until every frame came (1) or one was lost or wrong (0); idle_ns: how long
 * a published slot may wait with the queue's bit clear. */
static int consume_all(void)
{
    static consumer_t c;
    memset(&c, 0, sizeof c);
    for (int i = 0; i < PRODUCERS; i++) {
        c.g[i] = unit_seed(100 + (uint64_t)i);
        c.cur[i] = frame_len(&c.g[i]);
    }
    int left = 0;
    uint64_t idle = 0;
    while (c.total < (uint64_t)PRODUCERS * FRAMES) {
        int bound = 64;
        if (bell != NO_BELL) {
            if (!(rmpi_shm_bell_take(&sh->qword) & QBIT) && !left) {
                if (++idle % 100000)
                    continue;
                /* a while with nothing: does a published slot wait with its bit clear? */
                if (rmpi_shm_qpeek(&q)) {
                    uint64_t t0 = now_ns();
                    while (!(atomic_load(&sh->qword) & QBIT) && now_ns() - t0 < 200000000u)
                        sched_yield();
                    if (!(atomic_load(&sh->qword) & QBIT)) {
                        if (bell == BELL)
                            CHECK(0, "a published slot (producer %u) waits and the queue's bit stayed clear for 200 ms",
                                  rmpi_shm_qpeek(&q)->from);
                        return 0;
                    }
                }
                continue;
            }
            bound = BELL_BOUND;
        }
        int n = 0;
        const rmpi_shm_qslot_t *s;
        while (n < bound && (s = rmpi_shm_qpeek(&q))) {
            if (!consume(&c, s))
                return 0;
            n++;
        }
        rmpi_shm_qrelease(&q); /* as the provider's pass ends */
        if (bell != NO_BELL)
            left = rmpi_shm_qbell_again(&q, n, bound);
        else if (!n)
            sched_yield();
    }
    return 1;
}

/* c) to f): producers as threads or processes, the consumer here. 1: every frame came. */
static int run(int how, int procs)
{
    const uint32_t cs[] = {256, 1024, 2048, 4096};
    rmpi_shm_qlayout(&lay, cs, 4, 16384, 4);
    void *a = shared_new(lay.bytes);
    rmpi_shm_queue_attach(&q, a, &lay);
    rmpi_shm_queue_init(&q);
    memset(sh, 0, sizeof *sh);
    bell = how;
    pthread_t t[PRODUCERS];
    pid_t pid[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) {
        if (!procs) {
            pthread_create(&t[i], NULL, producer, (void *)(intptr_t)i);
            continue;
        }
        fflush(stderr);
        if ((pid[i] = fork()) == 0) {
            producer((void *)(intptr_t)i);
            _exit(unit_failures ? 1 : 0);
        }
        CHECK(pid[i] > 0, "fork failed");
    }
    int ok = consume_all();
    const char *what = how == NO_BELL ? "queue" : how == BELL ? "doorbell" : "doorbell left unrung";
    if (!ok) { /* the producers may wait for room nobody makes */
        if (procs) {
            for (int i = 0; i < PRODUCERS; i++) {
                kill(pid[i], SIGKILL);
                waitpid(pid[i], NULL, 0);
            }
            munmap(a, lay.bytes);
        }
        if (how != BELL_BROKEN)
            fprintf(stderr, "shm_queue: %s (%s) failed; not waiting for the producers\n", what,
                    procs ? "processes" : "threads");
        return 0;
    }
    for (int i = 0; i < PRODUCERS; i++) {
        if (!procs) {
            pthread_join(t[i], NULL);
            continue;
        }
        int st = 0;
        waitpid(pid[i], &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: producer process %d failed (status %#x)", what, i, st);
    }
    CHECK(!rmpi_shm_qpeek(&q) && !rmpi_shm_qreserved(&q), "%s: a slot left over", what);
    munmap(a, lay.bytes);
    return 1;
}

int main(void)
{
    unit_watchdog("shm_queue", 200, "a producer or the consumer is stuck");
    sh = shared_new(sizeof *sh);
    layout_and_classes();
    dry_classes();
    release_batch();
    run(NO_BELL, 0);
    if (!unit_failures)
        run(BELL, 0);
    if (!unit_failures)
        run(BELL, 1);
    if (!unit_failures) {
        uint64_t t0 = now_ns();
        int came = run(BELL_BROKEN, 1);
        CHECK(!came, "producers that stop ringing after their first frame: every frame came anyway");
        CHECK(now_ns() - t0 < 20000000000ull, "the lost frame was seen only after %.1f s", (now_ns() - t0) / 1e9);
    }
    return finish("shm_queue");
}
