/* shm provider, private header. The ring is here (inline) so the unit tests and the hot
 * path share one implementation.
 *
 * Ring: single producer, single consumer, in shared memory. C cells of 16 bytes; a frame
 * starts at a cell with an 8-byte header {stamp, len|type<<24} followed by its bytes, and
 * takes ceil((8+len)/16) contiguous cells (a SKIP frame pads to the end instead of wrapping).
 * Frames of one or two cells (up to 24 bytes: a message of 1-20 bytes with its cached
 * header) share cache lines, so a stream of them moves a line between the cores per two to
 * four messages, not per message (docs/results/pt2pt.md, 2026-12-01: 1-16 B windowed
 * bandwidth 1.2x in the machine's fast state, 2x in its slow one). A larger frame ends at a
 * line's end (rmpi_shm_frame_cells: padding cells), so it keeps its lines to itself and the
 * next frame starts a line, as with the 64-byte cells before.
 *
 * The writer publishes a frame by storing stamp = rmpi_shm_stamp(position) with release
 * order after the bytes; the reader polls only that word, so a small message costs one cache
 * line transfer. The reader polls a cell only once it has consumed the frame before it, and
 * must never take stale bytes of an earlier lap there for a fresh stamp. A cell inside a
 * line is cleared by the writer before it publishes the frame that ends there (a store to
 * the line it is writing anyway); a line's first cell is a frame's first cell, which holds
 * an earlier lap's stamp, or lies inside a padded frame or a SKIP, whose reader zeroes it.
 * So the reader writes nothing into the lines of small frames, which the writer may be
 * filling with the next ones (it zeroed every stamp it consumed). Into each line of a padded
 * frame it writes that one word, which is also faster: measured, a writer streaming 64 B-8
 * KiB frames into lines the reader last read, not wrote, ran at 0.2-0.9x the rate. A reader
 * whose writer neither clears nor pads (ofi's, written by RDMA: rmpi_shm_reader_t.rdma)
 * zeroes every stamp it consumes. The reader publishes its position (r_pub) lazily for the
 * writer's flow control. */
#ifndef RMPI_SHM_H
#define RMPI_SHM_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "../net.h"

#define RMPI_SHM_CELL 16u
#define RMPI_SHM_LINE_CELLS (RMPI_CACHELINE / RMPI_SHM_CELL)
/* Frames of at most this many cells (24 bytes: messages of up to 20 bytes with a cached
 * header) share lines; larger ones, and any that would cross a line's end, end at a line's
 * end. */
#define RMPI_SHM_PACK_CELLS 2u
#define RMPI_SHM_HDR 8u
/* Frame types (docs/wire/shm.md). CHAN_REQ (1 byte: the kind to use) asks the peer to send
 * to this process on another channel; CHAN_MARK is the last frame it sends on the old one. */
enum {
    RMPI_SHM_DATA = 0,
    RMPI_SHM_SKIP,
    RMPI_SHM_GET_REQ,
    RMPI_SHM_GET_RESP,
    RMPI_SHM_PUT,
    RMPI_SHM_CHAN_REQ,
    RMPI_SHM_CHAN_MARK
};

typedef struct rmpi_shm_cellhdr {
    _Atomic uint32_t stamp;
    uint32_t lentype;
} rmpi_shm_cellhdr_t;

typedef struct rmpi_shm_ring {
    _Atomic uint64_t r_pub RMPI_ALIGNED(RMPI_CACHELINE); /* written by the reader only */
    char pad[RMPI_CACHELINE - sizeof(uint64_t)];
    char cells[] RMPI_ALIGNED(RMPI_CACHELINE);
} rmpi_shm_ring_t;

typedef struct rmpi_shm_writer {
    rmpi_shm_ring_t *ring;
    uint64_t w, r_cached;
    uint32_t ncells; /* power of two */
    uint32_t need;   /* cells of the frame the last reserve made room for */
} rmpi_shm_writer_t;

typedef struct rmpi_shm_reader {
    rmpi_shm_ring_t *ring;
    uint64_t r, r_pub_last;
    uint32_t ncells;
    int rdma; /* ofi's ring, written by RDMA: no padding and no cell cleared after a frame, so
               * the reader zeroes every stamp it consumes */
} rmpi_shm_reader_t;

static inline size_t rmpi_shm_ring_bytes(uint32_t ncells)
{
    return sizeof(rmpi_shm_ring_t) + (size_t)ncells * RMPI_SHM_CELL;
}
/* Largest frame a ring of ncells accepts (a quarter of it, so the writer never deadlocks
 * against a reader that publishes its position lazily; with the cleared cell after it and a
 * SKIP before it, a frame needs at most half the ring free, which a reader that has read
 * everything publishes). */
static inline size_t rmpi_shm_ring_max_frame(uint32_t ncells)
{
    return (size_t)ncells / 4 * RMPI_SHM_CELL - RMPI_SHM_HDR;
}
/* The stamp published for a frame at position pos: low 32 bits of pos + 1, never 0 (a
 * consumed cell holds 0; every 2^32 positions pos + 1 wraps to 0, which would match it). */
static inline uint32_t rmpi_shm_stamp(uint64_t pos)
{
    uint32_t s = (uint32_t)(pos + 1);
    return s + !s;
}

static inline rmpi_shm_cellhdr_t *rmpi_shm_cell(rmpi_shm_ring_t *ring, uint32_t ncells, uint64_t pos)
{
    return (rmpi_shm_cellhdr_t *)(ring->cells + (size_t)(pos & (ncells - 1)) * RMPI_SHM_CELL);
}

/* Cells the frame of len bytes at position pos takes: its own, and for a frame of more than
 * RMPI_SHM_PACK_CELLS or one that would cross a line's end the padding to the end of its last
 * line (the ring's cells start a line, and its end is a line's end). So a line's first cell
 * is a frame's first cell or lies in a padded frame (or a SKIP), whose reader zeroes it. */
static inline uint64_t rmpi_shm_frame_cells_of(uint64_t pos, uint64_t n)
{
    uint64_t end = pos + n, lm = RMPI_SHM_LINE_CELLS - 1;
    if (n > RMPI_SHM_PACK_CELLS || ((pos ^ (end - 1)) & ~lm))
        n = ((end + lm) & ~lm) - pos;
    return n;
}
static inline uint64_t rmpi_shm_frame_cells(uint64_t pos, size_t len)
{
    return rmpi_shm_frame_cells_of(pos, (RMPI_SHM_HDR + len + RMPI_SHM_CELL - 1) / RMPI_SHM_CELL);
}

/* Reader: zero the first stamp of every line that starts inside cells [from, to) (a padded
 * frame's or a SKIP's: rmpi_shm_frame_cells). */
static inline void rmpi_shm_ring_zero_lines(rmpi_shm_reader_t *rd, uint64_t from, uint64_t to)
{
    for (uint64_t p = (from + RMPI_SHM_LINE_CELLS - 1) & ~(uint64_t)(RMPI_SHM_LINE_CELLS - 1); p < to;
         p += RMPI_SHM_LINE_CELLS)
        atomic_store_explicit(&rmpi_shm_cell(rd->ring, rd->ncells, p)->stamp, 0, memory_order_relaxed);
}

/* Writer: the frame of n cells at w is ready; publish it. A next frame starting inside this
 * line gets its stamp word cleared first (the reader polls it once it has consumed this
 * frame; reserve asked room for it); one starting a line needs no clearing (its reader zeroed
 * it or it holds an earlier lap's stamp: rmpi_shm_frame_cells), and the store would take
 * that line, likely still the reader's, before this frame's stamp could be seen. */
static inline void rmpi_shm_ring_publish(rmpi_shm_writer_t *wr, uint64_t n, uint32_t lentype)
{
    rmpi_shm_cellhdr_t *h = rmpi_shm_cell(wr->ring, wr->ncells, wr->w);
    h->lentype = lentype;
    if ((wr->w + n) & (RMPI_SHM_LINE_CELLS - 1))
        atomic_store_explicit(&rmpi_shm_cell(wr->ring, wr->ncells, wr->w + n)->stamp, 0, memory_order_relaxed);
    atomic_store_explicit(&h->stamp, rmpi_shm_stamp(wr->w), memory_order_release);
    wr->w += n;
}

/* Room for a frame of len bytes: returns where its bytes go, or NULL when the ring is full.
 * The room includes the cell after the frame, which commit clears. */
static inline __attribute__((always_inline)) void *rmpi_shm_ring_reserve(rmpi_shm_writer_t *wr, size_t len)
{
    /* padding never crosses the ring's end, a line's end: the frame wraps or not as without */
    uint64_t pos = wr->w & (wr->ncells - 1), n = (RMPI_SHM_HDR + len + RMPI_SHM_CELL - 1) / RMPI_SHM_CELL;
    uint64_t skip = pos + n > wr->ncells ? wr->ncells - pos : 0;
    uint64_t need = rmpi_shm_frame_cells_of(wr->w + skip, n);
    wr->need = (uint32_t)need;
    if (wr->w + skip + need + 1 - wr->r_cached > wr->ncells) {
        wr->r_cached = atomic_load_explicit(&wr->ring->r_pub, memory_order_acquire);
        if (wr->w + skip + need + 1 - wr->r_cached > wr->ncells)
            return NULL;
    }
    if (skip)
        rmpi_shm_ring_publish(wr, skip, (uint32_t)(skip * RMPI_SHM_CELL - RMPI_SHM_HDR) | (RMPI_SHM_SKIP << 24));
    return (char *)rmpi_shm_cell(wr->ring, wr->ncells, wr->w) + RMPI_SHM_HDR;
}

/* Publish the frame of len bytes that the last reserve (of the same len) made room for. */
static inline void rmpi_shm_ring_commit(rmpi_shm_writer_t *wr, size_t len, unsigned type)
{
    rmpi_shm_ring_publish(wr, wr->need, (uint32_t)len | (type << 24));
}

/* Next frame, or NULL. Skips padding. The frame stays valid until rmpi_shm_ring_consume. */
static inline const void *rmpi_shm_ring_peek(rmpi_shm_reader_t *rd, size_t *len, unsigned *type)
{
    for (;;) {
        rmpi_shm_cellhdr_t *h = rmpi_shm_cell(rd->ring, rd->ncells, rd->r);
        if (atomic_load_explicit(&h->stamp, memory_order_acquire) != rmpi_shm_stamp(rd->r)) {
            if (rd->r != rd->r_pub_last) { /* idle: let the writer see everything we freed */
                atomic_store_explicit(&rd->ring->r_pub, rd->r, memory_order_release);
                rd->r_pub_last = rd->r;
            }
            return NULL;
        }
        *len = h->lentype & 0xffffffu;
        *type = h->lentype >> 24;
        if (*type != RMPI_SHM_SKIP)
            return (char *)h + RMPI_SHM_HDR;
        uint64_t n = (RMPI_SHM_HDR + *len) / RMPI_SHM_CELL;
        if (rd->rdma)
            for (uint64_t i = 0; i < n; i++)
                atomic_store_explicit(&rmpi_shm_cell(rd->ring, rd->ncells, rd->r + i)->stamp, 0, memory_order_relaxed);
        else
            rmpi_shm_ring_zero_lines(rd, rd->r, rd->r + n);
        rd->r += n;
    }
}

/* Done with the frame from peek, of n cells (rmpi_shm_frame_cells; ofi's: without padding). */
static inline void rmpi_shm_ring_consume_cells(rmpi_shm_reader_t *rd, uint64_t n)
{
    if (RMPI_UNLIKELY(rd->rdma)) {
        for (uint64_t i = 0; i < n; i++)
            atomic_store_explicit(&rmpi_shm_cell(rd->ring, rd->ncells, rd->r + i)->stamp, 0, memory_order_relaxed);
    } else if (n > RMPI_SHM_PACK_CELLS) {
        rmpi_shm_ring_zero_lines(rd, rd->r, rd->r + n); /* needed, and faster: the file's header */
    }
    rd->r += n;
    if (rd->r - rd->r_pub_last >= rd->ncells / 4) {
        atomic_store_explicit(&rd->ring->r_pub, rd->r, memory_order_release);
        rd->r_pub_last = rd->r;
    }
}

static inline void rmpi_shm_ring_consume(rmpi_shm_reader_t *rd, size_t len)
{
    rmpi_shm_ring_consume_cells(rd, RMPI_UNLIKELY(rd->rdma) ? (RMPI_SHM_HDR + len + RMPI_SHM_CELL - 1) / RMPI_SHM_CELL
                                                            : rmpi_shm_frame_cells(rd->r, len));
}

/* Doorbell: a word of bits in the receiver's segment, one per local sender (docs/wire/shm.md).
 * A sender sets its bit after each frame it writes into its ring; the receiver's pass takes
 * the word and reads only the rings whose bits were set, so a ring with nothing to read costs
 * no load per pass. The sender's fetch-or is a release read-modify-write after the frame's
 * stamp: a take (exchange, acquire) that returns the bit sees the frame, and a take before
 * the fetch-or leaves the bit for the next one, so no frame is left unannounced. A plain
 * load of the word before the sender's store of its bit would not do: store then load on the
 * sender against exchange then load on the receiver can both read the old values (the
 * store-buffering case), and a frame would wait for the next one's bit. */
static inline void rmpi_shm_bell(_Atomic uint64_t *word, uint64_t bit)
{
    atomic_fetch_or_explicit(word, bit, memory_order_release);
}

/* The shared queue's bit (the receiver's own index; every sender on the queue sets it): set
 * it after the slot's publish unless it is set already. A sender that finds it set skips the
 * read-modify-write on a line every sender and the receiver write. No slot is left
 * unannounced, by the single order S of sequentially consistent operations:
 *   sender:   (a) CAS on the queue's tail taking pos (rmpi_shm_qreserve); publish;
 *             (b) load the word, bit set: skip.
 *   receiver: (x) exchange the word with 0 (rmpi_shm_bell_take), the bit among the taken;
 *             poll the queue; (t) load the tail (rmpi_shm_qreserved, in qbell_again).
 * (b) read a value with the bit set; the receiver alone clears it, so some exchange x later
 * in the word's modification order is the first to clear it, and x takes the bit (its pass
 * polls the queue, then reads t). (b) reads before x in modification order, so (b) precedes x
 * in S; (a) precedes (b) and x precedes t in program order, so (a) < (b) < x < t in S and t
 * reads a tail past pos. Either the poll read pos, or the tail is past its head and
 * rmpi_shm_qbell_again keeps the bit for the next pass, which polls again (and checks again)
 * until the slot's release store is seen. A sender that finds the bit clear rings it as a
 * ring's sender does (release, after the publish). On x86 none of this costs an instruction:
 * the seq_cst load and tail load are plain loads, CAS and exchange are locked either way. */
static inline void rmpi_shm_qbell(_Atomic uint64_t *word, uint64_t bit)
{
    if (!(atomic_load_explicit(word, memory_order_seq_cst) & bit))
        atomic_fetch_or_explicit(word, bit, memory_order_release);
}

/* The bits set since the last take: one relaxed load while none are (a stale 0 only delays
 * the take: bits are cleared by this exchange alone). Sequentially consistent for
 * rmpi_shm_qbell's proof. */
static inline uint64_t rmpi_shm_bell_take(_Atomic uint64_t *word)
{
    if (atomic_load_explicit(word, memory_order_relaxed) == 0)
        return 0;
    return atomic_exchange_explicit(word, 0, memory_order_seq_cst);
}

#endif
