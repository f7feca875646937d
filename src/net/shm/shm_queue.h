/* shm provider, private header: the shared channel's receive queue (inline, so the unit
 * tests and the hot path share one implementation).
 *
 * One per receiving process, in its segment, written by every local sender (the shared
 * receive pool of the xrc-scalable seed, Sec. "multiple SRQs", on shared memory):
 *  - buffers in size classes (default 256 B, 1, 2, 4, 8 KiB); the sender takes the smallest
 *    class its frame fits (a 900-byte frame a 1 KiB buffer), a larger one when that class is
 *    empty. Each class is a lock-free stack of free buffer indices whose head word carries a
 *    tag against ABA (a pop reads next[] of a buffer another sender may just have taken; the
 *    tag makes its CAS fail).
 *  - a descriptor queue (bounded MPSC, Vyukov's sequence-numbered slots): a sender takes a
 *    position by fetch-add on the tail, fills the slot and publishes it by its sequence word;
 *    the receiver takes slots in position order, so each sender's frames stay in its order.
 *    The queue has at least as many slots as buffers and every slot in use holds a buffer, so
 *    a position taken is always free: a fetch-add never waits for room.
 * The receiver returns a buffer to its class stack after the frame was handled.
 * Frames larger than the biggest class travel as fragments (flag MORE on all but the last),
 * consecutive in the sender's order and reassembled by the receiver per sender.
 *
 * A sender that dies holding buffers leaks them (the pool shrinks; frames wait for other
 * classes). One that dies between its fetch-add and its publish leaves a slot the receiver
 * can never pass: the receiver then notices, after RMPI_SHM_QUEUE_STUCK_NS, which local
 * process is gone and ends the job naming it (mpiexec normally ends it first). */
#ifndef RMPI_SHM_QUEUE_H
#define RMPI_SHM_QUEUE_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "../../util/util.h"

#define RMPI_SHM_MAX_CLASSES 8
#define RMPI_SHM_QUEUE_STUCK_NS 2000000000ull
enum { RMPI_SHM_Q_MORE = 1 };

typedef struct rmpi_shm_qslot {
    _Atomic uint64_t seq;
    uint32_t buf; /* buffer index (all classes numbered together) */
    uint32_t len;
    uint16_t from; /* sender's local index */
    uint8_t type, flags;
    uint32_t pad[3];
} rmpi_shm_qslot_t;

/* Shared part, at the start of the queue area of the segment. */
typedef struct rmpi_shm_qhdr {
    _Atomic uint64_t tail RMPI_ALIGNED(RMPI_CACHELINE);
    char pad0[RMPI_CACHELINE - sizeof(uint64_t)];
    _Atomic uint64_t free_head[RMPI_SHM_MAX_CLASSES] RMPI_ALIGNED(RMPI_CACHELINE); /* tag << 32 | (index + 1) */
} rmpi_shm_qhdr_t;

/* Where everything is, the same in every process (offsets from the queue area). */
typedef struct rmpi_shm_qlayout {
    int nclass;
    uint32_t csize[RMPI_SHM_MAX_CLASSES];      /* buffer bytes of each class, ascending */
    uint32_t cfirst[RMPI_SHM_MAX_CLASSES + 1]; /* first buffer index of each class; cfirst[nclass] = nbuf */
    size_t coff[RMPI_SHM_MAX_CLASSES];         /* offset of each class's first buffer */
    uint32_t qcap;                             /* slots, power of two, >= nbuf */
    uint32_t pad;                              /* no implicit padding: peers compare layouts bytewise */
    size_t slots_off, next_off, bytes;
} rmpi_shm_qlayout_t;

/* A view of one queue in this process's address space. */
typedef struct rmpi_shm_queue {
    rmpi_shm_qhdr_t *hdr;
    rmpi_shm_qslot_t *slot;
    uint32_t *next;
    char *base;
    const rmpi_shm_qlayout_t *lay;
    uint64_t head; /* receiver only */
} rmpi_shm_queue_t;

/* Lay out classes of csize[] bytes, each taking about class_bytes (at least min_top buffers
 * of the largest class). */
static inline void rmpi_shm_qlayout(rmpi_shm_qlayout_t *l, const uint32_t *csize, int nclass, size_t class_bytes,
                                    uint32_t min_top)
{
    memset(l, 0, sizeof *l);
    l->nclass = nclass;
    uint32_t nbuf = 0;
    for (int c = 0; c < nclass; c++) {
        uint32_t n = (uint32_t)(class_bytes / csize[c]);
        if (n < 1)
            n = 1;
        if (c == nclass - 1 && n < min_top)
            n = min_top;
        l->csize[c] = csize[c];
        l->cfirst[c] = nbuf;
        nbuf += n;
    }
    l->cfirst[nclass] = nbuf;
    l->qcap = 1;
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
        off += (size_t)(l->cfirst[c + 1] - l->cfirst[c]) * csize[c];
    }
    l->bytes = (off + 4095) & ~(size_t)4095;
}

static inline void rmpi_shm_queue_attach(rmpi_shm_queue_t *q, void *area, const rmpi_shm_qlayout_t *l)
{
    q->base = area;
    q->hdr = area;
    q->slot = (rmpi_shm_qslot_t *)((char *)area + l->slots_off);
    q->next = (uint32_t *)((char *)area + l->next_off);
    q->lay = l;
    q->head = 0;
}

static inline void rmpi_shm_qpush_free(rmpi_shm_queue_t *q, int c, uint32_t buf)
{
    _Atomic uint64_t *h = &q->hdr->free_head[c];
    uint64_t old = atomic_load_explicit(h, memory_order_relaxed), nw;
    do {
        q->next[buf] = (uint32_t)old;
        nw = ((old >> 32) + 1) << 32 | (uint64_t)(buf + 1);
    } while (!atomic_compare_exchange_weak_explicit(h, &old, nw, memory_order_release, memory_order_relaxed));
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
            uint64_t nw = ((old >> 32) + 1) << 32 | q->next[buf];
            if (atomic_compare_exchange_weak_explicit(h, &old, nw, memory_order_acquire, memory_order_acquire))
                return buf;
        }
    }
    return UINT32_MAX;
}

/* Publish a filled buffer as the sender's next frame. */
static inline void rmpi_shm_qenqueue(rmpi_shm_queue_t *q, uint32_t buf, uint32_t len, uint16_t from, uint8_t type,
                                     uint8_t flags)
{
    uint64_t pos = atomic_fetch_add_explicit(&q->hdr->tail, 1, memory_order_relaxed);
    rmpi_shm_qslot_t *s = &q->slot[pos & (q->lay->qcap - 1)];
    /* free by construction (slots >= buffers); the receiver may still be storing its seq */
    while (atomic_load_explicit(&s->seq, memory_order_acquire) != pos)
        rmpi_cpu_relax();
    s->buf = buf;
    s->len = len;
    s->from = from;
    s->type = type;
    s->flags = flags;
    atomic_store_explicit(&s->seq, pos + 1, memory_order_release);
}

/* Receiver: the next published slot, or NULL. */
static inline const rmpi_shm_qslot_t *rmpi_shm_qpeek(rmpi_shm_queue_t *q)
{
    rmpi_shm_qslot_t *s = &q->slot[q->head & (q->lay->qcap - 1)];
    return atomic_load_explicit(&s->seq, memory_order_acquire) == q->head + 1 ? s : NULL;
}

/* Receiver: done with the slot from rmpi_shm_qpeek and its buffer. */
static inline void rmpi_shm_qconsume(rmpi_shm_queue_t *q, const rmpi_shm_qslot_t *s)
{
    uint32_t buf = s->buf;
    int c;
    rmpi_shm_qbuf(q, buf, &c);
    atomic_store_explicit(&((rmpi_shm_qslot_t *)s)->seq, q->head + q->lay->qcap, memory_order_release);
    q->head++;
    rmpi_shm_qpush_free(q, c, buf);
}

/* Receiver: whether a sender took a position it has not published yet. */
static inline int rmpi_shm_qreserved(rmpi_shm_queue_t *q)
{
    return atomic_load_explicit(&q->hdr->tail, memory_order_relaxed) != q->head;
}

/* Receiver with the doorbell (src/net/shm/shm.h, docs/wire/shm.md: a sender sets the queue's
 * bit after each slot it publishes, and a pass reads the queue only when it takes the bit):
 * after a poll that read n slots of at most max, whether to read the queue at the next pass
 * without its bit: the poll stopped at its bound, or found nothing while a position is taken
 * and not published (its sender rings once it publishes; reading on keeps watch on a sender
 * that died in between). */
static inline int rmpi_shm_qbell_again(rmpi_shm_queue_t *q, int n, int max)
{
    return n == max || (n == 0 && rmpi_shm_qreserved(q));
}

#endif
