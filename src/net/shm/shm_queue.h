/* shm provider, private header: the shared channel's receive queue (inline, so the unit
 * tests and the hot path share one implementation).
 *
 * One per receiving process, in its segment, written by every local sender (the shared
 * receive pool of the xrc-scalable seed, Sec. "multiple SRQs", on shared memory):
 *  - a descriptor queue (bounded MPMC, Vyukov's sequence-numbered slots of one cache line):
 *    a sender takes a position by compare-and-swap on the tail once the slot there is free,
 *    fills the slot and publishes it by its sequence word; the receiver takes slots in
 *    position order, so each sender's frames stay in its order. A full queue (every slot
 *    published and not yet read) refuses the position: the frame waits in the sender's FIFO.
 *  - a frame of at most RMPI_SHM_Q_INLINE bytes is carried in its slot: one atomic update to
 *    send (the tail's) and one line to read, as a ring frame. Small frames are most of the
 *    traffic (5-37 bytes: a header and a few bytes of payload), and a class buffer for them
 *    cost the sender a pop from a free stack and the receiver a push back, both CAS on lines
 *    every sender writes.
 *  - larger frames take buffers in size classes (default 256 B, 1, 2, 4, 8 KiB; the seed's
 *    receive queues per size); the sender takes the smallest class its frame fits (a
 *    900-byte frame a 1 KiB buffer), a larger one when that class is empty. A buffer holds
 *    its class's bytes and RMPI_SHM_Q_ROOM more, the frame's header: a message of 4 KiB
 *    (a frame of 4 KiB + 4 B) takes a 4 KiB buffer, not one of 8 KiB (buffer efficiency
 *    ~1.0 instead of 0.5 for the power-of-two sizes applications send most, and an 8 KiB
 *    message is one frame, not two fragments). Each class is a lock-free stack of free
 *    buffer indices whose head word carries a tag against ABA (a pop reads next[] of a buffer
 *    another sender may just have taken; the tag makes its CAS fail).
 *  - the receiver returns buffers in batches: those it read are chained per class (through
 *    next[], privately) and pushed with one CAS per class at the end of its pass
 *    (rmpi_shm_qrelease), or sooner (below). A push per frame was a locked
 *    read-modify-write on the line every sender's pop writes, and it waited for the
 *    receiver's copy of the frame out of the buffer to leave its store buffer; with the
 *    batches 64-512 B frames (which the room does not change) streamed 1.01-1.3x faster
 *    (docs/results/channels.md, "Streaming on the queue"). A class's chain goes back as soon as it holds an eighth of the class (at most
 *    8): 2 of the 16 largest buffers, so a stream of large frames does not find its class dry.
 * Frames larger than the biggest class travel as fragments (flag MORE on all but the last),
 * consecutive in the sender's order and reassembled by the receiver per sender.
 *
 * A sender that dies holding buffers leaks them (the pool shrinks; frames wait for other
 * classes). One that dies between taking a position and publishing it leaves a slot the
 * receiver can never pass: the receiver then notices, after RMPI_SHM_QUEUE_STUCK_NS, which
 * local process is gone and ends the job naming it (mpiexec normally ends it first). */
#ifndef RMPI_SHM_QUEUE_H
#define RMPI_SHM_QUEUE_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "../../util/util.h"

#define RMPI_SHM_MAX_CLASSES 8
#define RMPI_SHM_QUEUE_STUCK_NS 2000000000ull
#define RMPI_SHM_QCAP_MIN 64 /* slots at least (small frames need no buffer, only a slot) */
enum { RMPI_SHM_Q_MORE = 1 };
#define RMPI_SHM_Q_INLINE 48       /* frames of at most this many bytes travel in their slot */
#define RMPI_SHM_Q_ROOM 64         /* a buffer's bytes beyond its class: room for the frame's header */
#define RMPI_SHM_Q_RELEASE_BATCH 8 /* buffers of a class the receiver holds back, at most */

typedef struct rmpi_shm_qslot {
    _Atomic uint64_t seq;
    uint32_t len;
    uint16_t from; /* sender's local index */
    uint8_t type, flags;
    union {
        uint32_t buf;                 /* len > RMPI_SHM_Q_INLINE: buffer index (all classes numbered together) */
        char data[RMPI_SHM_Q_INLINE]; /* else the frame itself */
    };
} rmpi_shm_qslot_t;
_Static_assert(sizeof(rmpi_shm_qslot_t) == 64, "a queue slot is one cache line");

/* Shared part, at the start of the queue area of the segment. */
typedef struct rmpi_shm_qhdr {
    _Atomic uint64_t tail RMPI_ALIGNED(RMPI_CACHELINE);
    char pad0[RMPI_CACHELINE - sizeof(uint64_t)];
    _Atomic uint64_t free_head[RMPI_SHM_MAX_CLASSES] RMPI_ALIGNED(RMPI_CACHELINE); /* tag << 32 | (index + 1) */
} rmpi_shm_qhdr_t;

/* Where everything is, the same in every process (offsets from the queue area). */
typedef struct rmpi_shm_qlayout {
    int nclass;
    uint32_t csize[RMPI_SHM_MAX_CLASSES];      /* buffer bytes of each class (class + RMPI_SHM_Q_ROOM), ascending */
    uint32_t cfirst[RMPI_SHM_MAX_CLASSES + 1]; /* first buffer index of each class; cfirst[nclass] = nbuf */
    size_t coff[RMPI_SHM_MAX_CLASSES];         /* offset of each class's first buffer */
    uint32_t qcap;                             /* slots, power of two, >= nbuf and >= RMPI_SHM_QCAP_MIN */
    uint32_t pad;                              /* no implicit padding: peers compare layouts bytewise */
    size_t slots_off, next_off, bytes;
} rmpi_shm_qlayout_t;

/* A view of one queue in this process's address space. */
typedef struct rmpi_shm_queue {
    rmpi_shm_qhdr_t *hdr;
    rmpi_shm_qslot_t *slot;
    _Atomic uint32_t *next; /* relaxed: a pop may read a link while its buffer is pushed again (the tag decides) */
    char *base;
    const rmpi_shm_qlayout_t *lay;
    uint64_t head; /* receiver only */
    /* receiver only: buffers read and not given back yet, a chain per class (first: index +
     * 1, 0 none; linked through next[] as on the stack), pushed by rmpi_shm_qrelease */
    uint32_t rel_first[RMPI_SHM_MAX_CLASSES], rel_last[RMPI_SHM_MAX_CLASSES];
    uint32_t rel_n[RMPI_SHM_MAX_CLASSES], rel_max[RMPI_SHM_MAX_CLASSES]; /* held, and at most */
    uint32_t rel_mask;
} rmpi_shm_queue_t;

/* Lay out classes for frames of csize[] bytes (buffers of csize[] + RMPI_SHM_Q_ROOM), each
 * taking about class_bytes (at least min_top buffers of the largest class). */
static inline void rmpi_shm_qlayout(rmpi_shm_qlayout_t *l, const uint32_t *csize, int nclass, size_t class_bytes,
                                    uint32_t min_top)
{
    memset(l, 0, sizeof *l);
    l->nclass = nclass;
    uint32_t nbuf = 0;
    for (int c = 0; c < nclass; c++) {
        uint32_t size = csize[c] + RMPI_SHM_Q_ROOM;
        uint32_t n = (uint32_t)(class_bytes / size);
        if (n < 1)
            n = 1;
        if (c == nclass - 1 && n < min_top)
            n = min_top;
        l->csize[c] = size;
        l->cfirst[c] = nbuf;
        nbuf += n;
    }
    l->cfirst[nclass] = nbuf;
    l->qcap = RMPI_SHM_QCAP_MIN;
    while (l->qcap < nbuf)
        l->qcap *= 2;
    size_t off = (sizeof(rmpi_shm_qhdr_t) + RMPI_CACHELINE - 1) & ~(size_t)(RMPI_CACHELINE - 1);
    l->slots_off = off;
    off += (size_t)l->qcap * sizeof(rmpi_shm_qslot_t);
    l->next_off = off;
    off += (size_t)nbuf * sizeof(uint32_t);
    off = (off + RMPI_CACHELINE - 1) & ~(size_t)(RMPI_CACHELINE - 1);
    for (int c = 0; c < nclass; c++) {
        l->coff[c] = off;
        off += (size_t)(l->cfirst[c + 1] - l->cfirst[c]) * l->csize[c];
    }
    l->bytes = (off + 4095) & ~(size_t)4095;
}

static inline void rmpi_shm_queue_attach(rmpi_shm_queue_t *q, void *area, const rmpi_shm_qlayout_t *l)
{
    q->base = area;
    q->hdr = area;
    q->slot = (rmpi_shm_qslot_t *)((char *)area + l->slots_off);
    q->next = (_Atomic uint32_t *)(void *)((char *)area + l->next_off);
    q->lay = l;
    q->head = 0;
    memset(q->rel_first, 0, sizeof q->rel_first);
    memset(q->rel_n, 0, sizeof q->rel_n);
    q->rel_mask = 0;
    for (int c = 0; c < l->nclass; c++) { /* an eighth of the class at most: 2 of the 16 largest */
        uint32_t n = (l->cfirst[c + 1] - l->cfirst[c]) / 8;
        q->rel_max[c] = n < 1 ? 1 : n > RMPI_SHM_Q_RELEASE_BATCH ? RMPI_SHM_Q_RELEASE_BATCH : n;
    }
}

/* Push the buffers first .. last, already linked through next[] (last's link is set here),
 * on class c's stack with one compare-and-swap. */
static inline void rmpi_shm_qpush_chain(rmpi_shm_queue_t *q, int c, uint32_t first, uint32_t last)
{
    _Atomic uint64_t *h = &q->hdr->free_head[c];
    uint64_t old = atomic_load_explicit(h, memory_order_relaxed), nw;
    do {
        atomic_store_explicit(&q->next[last], (uint32_t)old, memory_order_relaxed);
        nw = ((old >> 32) + 1) << 32 | (uint64_t)(first + 1);
    } while (!atomic_compare_exchange_weak_explicit(h, &old, nw, memory_order_release, memory_order_relaxed));
}

static inline void rmpi_shm_qpush_free(rmpi_shm_queue_t *q, int c, uint32_t buf)
{
    rmpi_shm_qpush_chain(q, c, buf, buf);
}

/* Owner, once: every buffer free, every slot empty. */
static inline void rmpi_shm_queue_init(rmpi_shm_queue_t *q)
{
    const rmpi_shm_qlayout_t *l = q->lay;
    atomic_store_explicit(&q->hdr->tail, 0, memory_order_relaxed);
    for (uint32_t i = 0; i < l->qcap; i++)
        atomic_store_explicit(&q->slot[i].seq, i, memory_order_relaxed);
    for (int c = 0; c < l->nclass; c++) {
        atomic_store_explicit(&q->hdr->free_head[c], 0, memory_order_relaxed);
        for (uint32_t b = l->cfirst[c + 1]; b-- > l->cfirst[c];)
            rmpi_shm_qpush_free(q, c, b);
    }
    atomic_thread_fence(memory_order_release);
}

/* The class a frame of len bytes belongs in (nclass when larger than every class). */
static inline int rmpi_shm_qclass(const rmpi_shm_qlayout_t *l, size_t len)
{
    int c = 0;
    while (c < l->nclass && len > l->csize[c])
        c++;
    return c;
}

static inline char *rmpi_shm_qbuf(const rmpi_shm_queue_t *q, uint32_t buf, int *cls)
{
    const rmpi_shm_qlayout_t *l = q->lay;
    int c = 0;
    while (buf >= l->cfirst[c + 1])
        c++;
    if (cls)
        *cls = c;
    return q->base + l->coff[c] + (size_t)(buf - l->cfirst[c]) * l->csize[c];
}

/* A free buffer of class c or larger: its index, or UINT32_MAX when all are taken. */
static inline uint32_t rmpi_shm_qalloc(rmpi_shm_queue_t *q, int c)
{
    for (; c < q->lay->nclass; c++) {
        _Atomic uint64_t *h = &q->hdr->free_head[c];
        uint64_t old = atomic_load_explicit(h, memory_order_acquire);
        while ((uint32_t)old) {
            uint32_t buf = (uint32_t)old - 1;
            uint64_t nw = ((old >> 32) + 1) << 32 | atomic_load_explicit(&q->next[buf], memory_order_relaxed);
            if (atomic_compare_exchange_weak_explicit(h, &old, nw, memory_order_acquire, memory_order_acquire))
                return buf;
        }
    }
    return UINT32_MAX;
}

/* Back to its class stack: a buffer taken for a frame that found the queue full, or read. */
static inline void rmpi_shm_qfree(rmpi_shm_queue_t *q, uint32_t buf)
{
    int c;
    rmpi_shm_qbuf(q, buf, &c);
    rmpi_shm_qpush_free(q, c, buf);
}

/* Sender: take the next position if its slot is free (the receiver has read what it held
 * qcap positions ago): the slot, its position in *pos; NULL when the queue is full. The
 * compare-and-swap on the tail is sequentially consistent: the queue's doorbell
 * (rmpi_shm_qbell, shm.h) relies on it preceding the sender's look at the bit. */
static inline rmpi_shm_qslot_t *rmpi_shm_qreserve(rmpi_shm_queue_t *q, uint64_t *pos)
{
    uint64_t p = atomic_load_explicit(&q->hdr->tail, memory_order_relaxed);
    for (;;) {
        rmpi_shm_qslot_t *s = &q->slot[p & (q->lay->qcap - 1)];
        int64_t d = (int64_t)(atomic_load_explicit(&s->seq, memory_order_acquire) - p);
        if (d == 0) {
            if (atomic_compare_exchange_weak_explicit(&q->hdr->tail, &p, p + 1, memory_order_seq_cst,
                                                      memory_order_relaxed)) {
                *pos = p;
                return s;
            }
        } else if (d < 0) {
            return NULL; /* still holds the frame of position p - qcap */
        } else {
            p = atomic_load_explicit(&q->hdr->tail, memory_order_relaxed); /* another sender took p */
        }
    }
}

/* Sender: publish the slot taken at pos (its data or buf filled) as the sender's next frame. */
static inline void rmpi_shm_qpublish(rmpi_shm_qslot_t *s, uint64_t pos, uint32_t len, uint16_t from, uint8_t type,
                                     uint8_t flags)
{
    s->len = len;
    s->from = from;
    s->type = type;
    s->flags = flags;
    atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
}

/* Sender: a filled buffer (a frame of more than RMPI_SHM_Q_INLINE bytes) as the next frame:
 * 1, or 0 when the queue is full (the buffer stays the caller's). */
static inline int rmpi_shm_qenqueue(rmpi_shm_queue_t *q, uint32_t buf, uint32_t len, uint16_t from, uint8_t type,
                                    uint8_t flags)
{
    uint64_t pos;
    rmpi_shm_qslot_t *s = rmpi_shm_qreserve(q, &pos);
    if (!s)
        return 0;
    s->buf = buf;
    rmpi_shm_qpublish(s, pos, len, from, type, flags);
    return 1;
}

/* Receiver: the next published slot, or NULL. */
static inline const rmpi_shm_qslot_t *rmpi_shm_qpeek(rmpi_shm_queue_t *q)
{
    rmpi_shm_qslot_t *s = &q->slot[q->head & (q->lay->qcap - 1)];
    return atomic_load_explicit(&s->seq, memory_order_acquire) == q->head + 1 ? s : NULL;
}

/* Receiver: the buffers read since the last call back on their class stacks, one
 * compare-and-swap per class. Called whenever it stops reading (a pass's end), so no buffer
 * is held back while the receiver waits. */
static inline void rmpi_shm_qrelease(rmpi_shm_queue_t *q)
{
    uint32_t m = q->rel_mask;
    if (!m) /* inline frames only: a load and a test per pass */
        return;
    while (m) {
        int c = __builtin_ctz(m);
        m &= m - 1;
        rmpi_shm_qpush_chain(q, c, q->rel_first[c] - 1, q->rel_last[c]);
        q->rel_first[c] = q->rel_n[c] = 0;
    }
    q->rel_mask = 0;
}

/* Receiver: done with the slot from rmpi_shm_qpeek and its buffer, if it had one (the frame
 * was handled: nothing reads the buffer after this). The buffer goes back with the next
 * rmpi_shm_qrelease, or here with its class's chain once that holds rel_max[c] (an eighth
 * of the class, 1 to RMPI_SHM_Q_RELEASE_BATCH). */
static inline void rmpi_shm_qconsume(rmpi_shm_queue_t *q, const rmpi_shm_qslot_t *s)
{
    uint32_t len = s->len, buf = s->buf; /* read before the slot goes back to the senders */
    atomic_store_explicit(&((rmpi_shm_qslot_t *)s)->seq, q->head + q->lay->qcap, memory_order_release);
    q->head++;
    if (len > RMPI_SHM_Q_INLINE) {
        int c;
        rmpi_shm_qbuf(q, buf, &c);
        atomic_store_explicit(&q->next[buf], q->rel_first[c], memory_order_relaxed);
        if (!q->rel_first[c])
            q->rel_last[c] = buf;
        q->rel_first[c] = buf + 1;
        q->rel_mask |= 1u << c;
        if (++q->rel_n[c] == q->rel_max[c]) { /* this class's batch back now */
            rmpi_shm_qpush_chain(q, c, buf, q->rel_last[c]);
            q->rel_first[c] = q->rel_n[c] = 0;
            q->rel_mask &= ~(1u << c);
        }
    }
}

/* Receiver: whether a sender took a position it has not published yet (or published after
 * the receiver looked). Sequentially consistent: rmpi_shm_qbell's proof reads it. */
static inline int rmpi_shm_qreserved(rmpi_shm_queue_t *q)
{
    return atomic_load_explicit(&q->hdr->tail, memory_order_seq_cst) != q->head;
}

/* Receiver with the doorbell (src/net/shm/shm.h, docs/wire/shm.md: a sender sets the queue's
 * bit after the slot it publishes unless the bit is set already, and a pass reads the queue
 * only when it takes the bit): after a poll that read n slots of at most max, whether to read
 * the queue at the next pass without its bit: the poll stopped at its bound, or a position
 * is taken that it did not read (its sender may have found the bit still set and not rung:
 * rmpi_shm_qbell's proof; reading on also keeps watch on a sender that died in between). */
static inline int rmpi_shm_qbell_again(rmpi_shm_queue_t *q, int n, int max)
{
    return n == max || rmpi_shm_qreserved(q);
}

#endif
