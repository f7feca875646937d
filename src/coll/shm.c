/* Collectives in a node's shared memory: Barrier, Bcast, Reduce, Allreduce, Allgather and
 * Alltoall, blocking, I* and persistent (single copy: the blocking calls only), on a
 * communicator whose ranks all share one node. Data is copied into the
 * segment once and out by each reader (one copy per side instead of a message per tree
 * edge), and reductions are done in the segment, each rank combining a slice of every
 * chunk, so no byte crosses a process more often than the data needs (the memory-system
 * path of Huang et al., 'Design Alternatives and Performance Trade-offs for Implementing
 * MPI-2 over InfiniBand', sec. 3.3, applied to collectives).
 *
 * Segment (rmpi_comm_node_segment, made at the first such call on the communicator): a
 * control line per rank, per rank a ring of SHM_NLINE lines for steps of a few bytes, then
 * per rank SHM_NBUF buffers of RMPI_COLL_SHM_CHUNK bytes.
 * Every call is a sequence of steps; all members run the same steps, numbered by
 * c->coll_shm_step. In step t a rank writes its buffer t % SHM_NBUF and publishes
 * ready = t (release); readers wait for ready >= t (acquire). `red` = t publishes the
 * rank's reduced slice of step t, `done` = t that the rank no longer reads anything of step
 * t, and a buffer is rewritten (step t + SHM_NBUF) only when every done >= t: the writer of
 * the next chunk never overwrites what a slower reader still copies. */
#include "coll_impl.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../core/core.h"
#include "../rt/rt.h"

#define SHM_NBUF 4       /* steps a writer may run ahead of the slowest reader */
#define SHM_NPAIR 2      /* the buffers of Allgather/Alltoall steps, which no member runs ahead in */
#define SHM_NLINE 64     /* the same for steps whose data fits a slot of the line ring (line_data) */
#define SHM_LINE 128     /* a control line: two cache lines (the adjacent-line prefetcher) */
#define SHM_MAX_RANKS 64 /* more keep the point-to-point schedules (Alltoall parts stay >= 64 bytes) */

typedef struct shm_ctl {
    _Atomic uint64_t ready, red, done;
    uint64_t probe, sink;    /* addresses of a known word and of one to write in this rank (cma_agree) */
    int32_t pid, cma;        /* this rank's process; whether it could read and write every other member */
    _Atomic uint64_t yields; /* oversubscribed: this rank's yields in the calls rank 0 measures (over_measure) */
    _Atomic uint64_t arrive; /* oversubscribed: the first step of the measured Reduce this rank is in (reduce_arrived) */
    char pad[SHM_LINE - 7 * sizeof(uint64_t) - 2 * sizeof(int32_t)];
} shm_ctl_t;

typedef struct shm {
    rmpi_comm_t *c;
    shm_ctl_t *ctl;
    char *lines; /* SHM_NLINE lines of 64 bytes per rank, after the control lines */
    char *cells; /* 2 ranks with a core each: the cell rings (cells_put), else NULL */
    char *data;
    size_t chunk, slot; /* bytes of a step buffer, of a slot of the line ring */
    size_t cellmax;     /* steps of at most this many bytes go in the cell rings (0: none) */
    char *lf;           /* 2 ranks with a core each: the rings of line frames (lines_put), else NULL */
    size_t lfmax;       /* steps of 17 bytes up to this many go in line frames (0: none) */
    int n, me;
} shm_t;

/* The data a slot of the line ring holds: after the step number and a Bcast's total. */
static size_t line_data(const shm_t *h) { return h->slot - 16; }

/* A slot of the line ring: one line, or on an oversubscribed node (over) the knob's bytes.
 * There a writer of steps above a line but within a slot runs SHM_NLINE steps ahead of a
 * descheduled reader instead of SHM_NBUF; with a core each, the four buffers' steps were
 * as fast (their 64-byte aligned data stays in cache; docs/results/coll.md run 17).
 * The knobs are fixed at MPI_Init and checked once, when a segment is made (knobs_check):
 * the view is rebuilt at every call, where a range check per knob cost the small Bcast
 * and Reduce about 23 instructions a call (docs/results/coll.md). */
static size_t slot_bytes(int over) { return over ? (size_t)rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_SLOT : 64; }

/* The cell rings of a 2-rank communicator with a core each (cells_put): 16-byte cells, 8
 * bytes of data each; a frame carries up to CELL_MAX bytes (RMPI_COLL_SHM_CELLS's ceiling)
 * and may be moved to the next line's start (3 cells of padding at most). A frame is
 * rewritten once every member is done with the step SHM_NCELL before it (as a slot of the
 * line ring SHM_NLINE before): two frames that write one cell start at least CELL_RING -
 * (CELL_FRAME - 1) cells apart, and a frame with its padding takes at most CELL_FRAME + 3,
 * so (static assertion below) at least SHM_NCELL frames lie from the first to the second,
 * which is thus at least SHM_NCELL steps later. After the ring a largest frame's worth of
 * cells, where a frame that starts near the end goes on (no frame wraps). 256-byte frames
 * (half of each cell is a stamp word) lost to the step buffers in both states (2 ranks,
 * every kind, docs/results/coll.md run 28), so the largest is 128. */
#define CELL 16
#define CELL_MAX 128
#define CELL_FRAME (CELL_MAX / 8)
#define CELL_RING 2048 /* a power of two: the position is a mask */
#define SHM_NCELL 64   /* steps a writer of frames may run ahead of the slowest reader */
_Static_assert(CELL_RING - (CELL_FRAME - 1) >= SHM_NCELL * (CELL_FRAME + 3) && !(CELL_RING & (CELL_RING - 1)),
               "the cell ring holds SHM_NCELL frames of the largest size");
#define CELL_RING_BYTES ((size_t)(CELL_RING + CELL_FRAME) * CELL)
#define CELL_BIG 0x8000u /* a Bcast's first step whose data goes in a step buffer: the frame holds the total */

/* The rings of line frames (lines_put), after the cell rings: lines of 7 data words and a
 * stamp word (the last), LF_RING lines per rank. A frame is a header word and up to LF_MAX
 * bytes, LF_FW words at most; frames follow each other word by word across lines. A line
 * that frame t writes was last written (a lap before) by a frame that ends at least
 * 7 * LF_RING - 5 - 2 * LF_FW words before t's start, so (static assertion) at least
 * SHM_NCELL - 1 frames lie between the two, which is thus at least SHM_NCELL steps earlier:
 * rewritten once every `done` >= t - SHM_NCELL, as a frame of cells. */
#define LF_WORDS 7
#define LF_MAX 256
#define LF_FW (1 + LF_MAX / 8)
#define LF_RING 512 /* a power of two: the line is a mask */
_Static_assert(LF_WORDS *LF_RING - 5 - 2 * LF_FW >= (SHM_NCELL - 1) * LF_FW && !(LF_RING & (LF_RING - 1)),
               "the line-frame ring holds SHM_NCELL frames of the largest size");
#define LF_RING_BYTES ((size_t)LF_RING * 64)
static size_t cells_bytes(int n, int over) { return n == 2 && !over ? 2 * (CELL_RING_BYTES + LF_RING_BYTES) : 0; }

/* The control lines, the line rings, two lines of the state probe (state_probe), the cell rings. */
static size_t ctl_bytes(int n, int over)
{
    return ((size_t)n * (sizeof(shm_ctl_t) + SHM_NLINE * slot_bytes(over)) + 2 * SHM_LINE + cells_bytes(n, over) +
            4095) &
           ~(size_t)4095;
}

static size_t chunk_bytes(void) { return (size_t)rmpi_knobs.COLL_SHM_CHUNK; }

static void knobs_check(void)
{
    long long v = rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_SLOT;
    /* at most the smallest step buffer's data (4k - 64) plus the 16 bytes of the header,
     * so a step that fits a slot is always one step */
    if (v < 64 || v > 4032 || v % 64)
        rmpi_fatal("RMPI_COLL_SHM_OVERSUBSCRIBED_SLOT=%lld: expected a multiple of 64 bytes from 64 to 4032.", v);
    v = rmpi_knobs.COLL_SHM_CHUNK;
    if (v < 4096 || v > (64ll << 20) || v % 64)
        rmpi_fatal("RMPI_COLL_SHM_CHUNK=%lld: expected a multiple of 64 bytes from 4k to 64m.", v);
}

static int cma_agree(shm_t *h);

static void shm_view(rmpi_comm_t *c, shm_t *h)
{
    h->c = c;
    h->ctl = c->coll_shm;
    h->lines = (char *)c->coll_shm + (size_t)c->size * sizeof(shm_ctl_t);
    h->data = (char *)c->coll_shm + ctl_bytes(c->size, c->coll_shm_over);
    h->chunk = chunk_bytes();
    h->slot = slot_bytes(c->coll_shm_over);
    h->n = c->size;
    h->me = c->rank;
    h->cells = cells_bytes(c->size, c->coll_shm_over) ? h->lines + 2 * SHM_NLINE * h->slot + 2 * SHM_LINE : NULL;
    h->cellmax = h->cells ? RMPI_MIN((size_t)rmpi_knobs.COLL_SHM_CELLS, (size_t)CELL_MAX) : 0;
    h->lf = h->cells ? h->cells + 2 * CELL_RING_BYTES : NULL;
    h->lfmax = h->lf ? RMPI_MIN((size_t)rmpi_knobs.COLL_SHM_LINES, (size_t)LF_MAX) : 0;
}

/* Flag looks (with a pause between) before each of the core's wait steps: 32, about 1 us
 * here, so a flag that the peer's next few instructions set costs no progress call; on a
 * node with more ranks than CPUs 1, so the core's wait yields at its second idle step:
 * the awaited rank may need this CPU to run at all, and two of those spins before every
 * yield were most of a small call's time slot (4 ranks on 2 cores, docs/results/coll.md
 * run 21: 2.4 context switches a Barrier at 5.1 us, about 2 us of each slot spent
 * spinning). Set from the node's figures at the segment's making (equal on all ranks of
 * a node, so every communicator of the process sets the same). */
static int shm_spin = 32;

/* On an oversubscribed node, whether a Barrier or Allreduce (blocking or not), or a
 * blocking Allgather or Alltoall, of this many bytes (the vector; one block) takes the
 * segment as on a node with a CPU per rank: every rank combines or copies what it needs as
 * soon as the others have published it, and with the short spin above each rank runs about
 * once per call (4 ranks on 2 cores: fewer context switches than the schedules' two rounds,
 * in which a rank runs again for each partner's message; docs/results/coll.md run 21;
 * Ibarrier 1.68 us against the schedule's 2.79, Iallreduce 8 B 1.76 against 3.04: an I*
 * call's rank need not run more often in the segment than in the rounds). */
static int over_small(size_t bytes) { return bytes < (size_t)rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_SMALL; }

/* Whether the calls on c may use the segment; makes it at the first call with create set
 * (collective: every member decides the same from the same inputs, and agrees on the
 * segment). */
static int shm_get(rmpi_comm_t *c, shm_t *h, int create)
{
    if (RMPI_UNLIKELY(c->coll_shm_state != 1)) {
        if (c->coll_shm_state == 2 || !create || !rmpi_knobs.COLL_SHM || c->inter || c->size < 2 ||
            c->size > SHM_MAX_RANKS)
            return 0;
        /* More ranks on the node than CPUs: a step that waits for all members stalls for a
         * descheduled one's time slice, where the point-to-point schedules wait for one
         * partner at a time (measured: 4 ranks on 2 cores, 8 B Allreduce 13x slower in
         * shared memory). Bcast (each reader waits for the root alone) and single copy
         * (a rank moves a late peer's pieces itself) keep the segment there: both were
         * faster than the schedules at 4 ranks on 2 cores (docs/results/coll.md, run 13),
         * and so do small blocking calls of the other kinds (`over_small`), where every
         * rank runs once per call either way and the segment's waits yield at once.
         * The kernel's figures (rt.h) are equal on all the node's ranks. */
        int over = rmpi_topo_oversubscribed();
        shm_spin = over ? 1 : 32;
        if (!rmpi_knobs.COLL_SHM_OVERSUBSCRIBED && over) {
            if (!rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_SOME) {
                c->coll_shm_state = 2;
                return 0;
            }
            c->coll_shm_over = 1;
        }
        knobs_check();
        int node = rmpi_comm_node_of(c, 0);
        for (int i = 1; i < c->size && node >= 0; i++)
            if (rmpi_comm_node_of(c, i) != node)
                node = -1;
        size_t len = ctl_bytes(c->size, c->coll_shm_over) + (size_t)c->size * SHM_NBUF * chunk_bytes();
        void *p = NULL;
        /* populated now: a first collective paying page faults would be slower than the next */
        if (node < 0 || coll_multi_site(c) ||
            rmpi_comm_node_segment(c, len, RMPI_COMM_TAG_NODESEG, "collectives use point-to-point", 1, &p)) {
            c->coll_shm_state = 2;
            return 0;
        }
        c->coll_shm = p;
        c->coll_shm_len = len;
        c->coll_shm_state = 1;
        shm_view(c, h);
        c->coll_shm_cma = (int8_t)cma_agree(h);
    }
    shm_view(c, h);
    return 1;
}

static char *buf_of(const shm_t *h, int r, uint64_t t)
{
    return h->data + ((size_t)r * SHM_NBUF + t % SHM_NBUF) * h->chunk;
}

/* A buffer's data: after its first line, which holds the step number of the steps that
 * publish with it (SEQ below) and is never written by the others, so what it holds is
 * always a step number, never data that happens to look like one. Each step carries
 * h->chunk - 64 bytes. */
static char *data_of(const shm_t *h, int r, uint64_t t) { return buf_of(h, r, t) + 64; }

/* Steps whose data fits a slot (line_data bytes) go through a ring of SHM_NLINE slots of
 * RMPI_COLL_SHM_SLOT bytes per rank instead: the step number (written last, release), then
 * the data, 8 B in the same cache line, so a reader waits on the line it then reads (one
 * miss where a flag in the control line and data in a buffer cost two), and a writer of
 * small steps runs up to SHM_NLINE steps ahead of the slowest reader, as a stream of eager
 * messages would, where a step buffer's writer runs SHM_NBUF ahead. */
static char *line_of(const shm_t *h, int r, uint64_t t)
{
    return h->lines + ((size_t)r * SHM_NLINE + t % SHM_NLINE) * h->slot;
}
#define SEQ(p) ((_Atomic uint64_t *)(void *)(p))

/* The most data a step of one line's kind carries: a frame of the cell rings (2 ranks) or
 * a slot of the line ring. */
static size_t line_max(const shm_t *h) { return RMPI_MAX(h->cellmax, line_data(h)); }

/* The same for a step of a Bcast or Reduce (rooted), which may go in a line frame. */
static size_t rooted_max(const shm_t *h) { return RMPI_MAX(line_max(h), h->lfmax); }

/* Whether a step of that kind with this many bytes goes in a frame of cells (else a slot,
 * or a line frame: lines_step, checked first): up to two cells' data, where several frames
 * share a line, and above a slot's data. 17-48 bytes take a line either way in cells, and
 * there the slot was faster (2 ranks, 32 B: Bcast 0.177
 * us in frames against 0.174 in slots in the slow state, 0.096 against 0.093 in the fast
 * one, 0 of 5 rounds lower in each; docs/results/coll.md run 28). */
#define CELL_SMALL 16
static int cell_step(const shm_t *h, size_t bytes)
{
    return h->cellmax && bytes <= h->cellmax && (bytes <= CELL_SMALL || bytes > line_data(h));
}

/* Whether a step of a Bcast or Reduce (only those: one rank writes, the other reads) with
 * this many bytes goes in a line frame (lines_put): from 17 bytes (up to 16 the cells,
 * when on) to RMPI_COLL_SHM_LINES. */
static int lines_step(const shm_t *h, size_t bytes)
{
    return h->lfmax && bytes <= h->lfmax && (bytes > CELL_SMALL || !h->cellmax);
}

/* The depth (step_free) of a step of that kind that writes: its ring's. */
static uint64_t line_depth(const shm_t *h, size_t bytes, int rooted)
{
    return cell_step(h, bytes) || (rooted && lines_step(h, bytes)) ? SHM_NCELL : SHM_NLINE;
}

/* ---- 2 ranks: frames of 16-byte cells ----
 * On two ranks every frame a rank writes is read by the other, in step order, so both know
 * where each frame starts (coll_shm_cw, coll_shm_cr: cells written, read) and frames of
 * different sizes follow each other without gaps: four 8-byte steps share a line where
 * the line ring gives each step a line of its own. A line passed between the CPUs costs
 * 150-180 ns one way in the machine's slow state (25-30 in the fast one; docs/results/
 * coll.md run 27), so a stream of small steps (a root running ahead of its reader) moves a
 * line per four steps instead of one per step. Each cell is a stamp word and 8 bytes of
 * data, and data goes only in the second word: a stamp word holds a stamp or 0, never user
 * data that could look like one. A frame's stamp (its step's low 48 bits, its length) is
 * written into its first cell last (release), after all its data: the reader looks at that
 * one word. */
static char *cell_at(const shm_t *h, int r, uint64_t pos)
{
    return h->cells + (size_t)r * CELL_RING_BYTES + (size_t)(pos & (CELL_RING - 1)) * CELL;
}

static uint64_t cell_count(unsigned len)
{
    len &= ~CELL_BIG;
    return len > 8 ? (len + 7) / 8 : 1;
}

/* A frame of step t in this rank's ring: len bytes of src (flag: CELL_BIG or 0). A frame
 * that would cross a line where it could fit one (or, from 4 cells, start inside one)
 * starts at the next line instead: a step read across two lines costs two line transfers
 * where its data fits one (2 ranks, slow state, 32-byte Bcast unaligned: 0.30 us against
 * the slots' 0.19). The reader looks at both places (cells_get). */
static void cells_put(shm_t *h, uint64_t t, const char *src, size_t len, unsigned flag)
{
    uint64_t p = h->c->coll_shm_cw, c = cell_count((unsigned)len);
    if ((p & 3) + RMPI_MIN(c, 4) > 4)
        p = (p + 3) & ~(uint64_t)3;
    char *f = cell_at(h, h->me, p);
    size_t i = 0;
    for (; i + 8 <= len; i += 8)
        memcpy(f + 2 * i + 8, src + i, 8);
    if (i < len) {
        uint64_t w = 0;
        memcpy(&w, src + i, len - i);
        memcpy(f + 2 * i + 8, &w, 8);
    }
    h->c->coll_shm_cw = p + c;
    atomic_store_explicit(SEQ(f), t << 16 | flag | len, memory_order_release);
}

/* Whether cell p of the other rank's ring starts its frame of step t (*len: its length). */
static int cell_is(const shm_t *h, uint64_t p, uint64_t t, unsigned *len)
{
    uint64_t s = atomic_load_explicit(SEQ(cell_at(h, 1 - h->me, p)), memory_order_acquire);
    *len = (unsigned)(s & 0xffff);
    return s >> 16 == (t << 16) >> 16;
}

/* The other rank's frame of step t, or NULL while it is not published; *len: its length
 * and flag. It starts where the last one ended or at the next line (cells_put), and only
 * one of the two ever holds step t's stamp, so the reader needs neither the frame's size
 * (a Bcast's receivers learn it from the frame) nor the writer's choice. */
static const char *cells_get(const shm_t *h, uint64_t t, unsigned *len)
{
    uint64_t p = h->c->coll_shm_cr;
    if (!cell_is(h, p, t, len) && (!(p & 3) || !cell_is(h, p = (p + 3) & ~(uint64_t)3, t, len)))
        return NULL;
    h->c->coll_shm_cr = p; /* cells_next goes past it */
    return cell_at(h, 1 - h->me, p);
}

/* The first len bytes of frame f's data into dst. */
static void cells_take(const char *f, char *dst, size_t len)
{
    size_t i = 0;
    for (; i + 8 <= len; i += 8)
        memcpy(dst + i, f + 2 * i + 8, 8);
    if (i < len) {
        uint64_t w;
        memcpy(&w, f + 2 * i + 8, 8);
        memcpy(dst + i, &w, len - i);
    }
}

/* Past the frame just read (len as cells_get gave it). */
static void cells_next(shm_t *h, unsigned len) { h->c->coll_shm_cr += cell_count(len); }

/* ---- 2 ranks: line frames ----
 * Half of a cell is its stamp word, so a step of 17-48 bytes took a line in cells as in a
 * slot, and one of 129-256 bytes 8 lines in cells against a stamp line and 4 data lines in
 * a step buffer, read one after the other. A line frame instead packs the data densely:
 * each line of the ring is 7 data words and a stamp word (the step of the last frame that
 * wrote into it, stored with release after that frame's words in it), and a frame is a
 * header word (its step's low 48 bits and its length) followed by its data, word after
 * word across lines, right after the frame before (as NCCL's LL128 keeps a flag word per
 * line so that no data word can pass for a flag: a stamp word never holds user data, and
 * the header is read only once its line's stamp says the frame is there). A 32-byte step
 * takes 5/7 of a line, four of them 20 words: 3 lines where the slots take 4. Positions
 * count data words (coll_shm_lw, coll_shm_lr): word p lies in line p / 7 at p % 7. Both
 * ranks follow the positions as they do the cells' (every frame is read by the other, in
 * step order). A line with stamp >= t was written by a frame of step t or later in this
 * lap (a lap before, every step was below t), and the writer stores the stamps in order,
 * so frame t is complete once any line it or a later frame wrote shows >= t: the reader
 * looks at the line where it expects the frame to end (its own size: signatures match)
 * and at the header's line, so a wrong guess (an erroneous call) costs a second look, not
 * a hang. */
static _Atomic uint64_t *lf_stamp(char *l) { return SEQ(l + 8 * LF_WORDS); }

static char *lf_line(const shm_t *h, int r, uint64_t line)
{
    return h->lf + (size_t)r * LF_RING_BYTES + (size_t)(line & (LF_RING - 1)) * 64;
}

/* Words of a frame of len bytes (its header and data). */
static uint64_t lf_words(size_t len) { return 1 + (len + 7) / 8; }

/* A frame of step t in this rank's ring: len bytes of src. */
static void lines_put(shm_t *h, uint64_t t, const char *src, size_t len)
{
    uint64_t p = h->c->coll_shm_lw, line = p / LF_WORDS;
    size_t w = (size_t)(p % LF_WORDS);
    char *l = lf_line(h, h->me, line);
    uint64_t hdr = t << 16 | len;
    memcpy(l + 8 * w++, &hdr, 8);
    for (size_t i = 0; i < len;) {
        if (w == LF_WORDS) {
            atomic_store_explicit(lf_stamp(l), t, memory_order_release);
            l = lf_line(h, h->me, ++line);
            w = 0;
        }
        size_t k = RMPI_MIN(len - i, (LF_WORDS - w) * 8);
        memcpy(l + 8 * w, src + i, k);
        i += k;
        w += (k + 7) / 8;
    }
    atomic_store_explicit(lf_stamp(l), t, memory_order_release);
    h->c->coll_shm_lw = p + lf_words(len);
}

/* The other rank's frame of step t: its data's first position (*len: its length), or 0
 * while it is not published; expect: the bytes this rank expects. */
static uint64_t lines_get(const shm_t *h, uint64_t t, unsigned *len, size_t expect)
{
    /* within a largest frame of the header: every line there that shows >= t was written in
     * this lap by a frame of step t or later */
    uint64_t p = h->c->coll_shm_lr, first = p / LF_WORDS;
    uint64_t end = (p + lf_words(RMPI_MIN(expect, (size_t)LF_MAX)) - 1) / LF_WORDS;
    int o = 1 - h->me;
    if (atomic_load_explicit(lf_stamp(lf_line(h, o, end)), memory_order_acquire) < t) {
        if (end == first || atomic_load_explicit(lf_stamp(lf_line(h, o, first)), memory_order_acquire) < t)
            return 0;
        end = first; /* only the header's line is known written */
    }
    uint64_t hdr = atomic_load_explicit(SEQ(lf_line(h, o, first) + 8 * (p % LF_WORDS)), memory_order_relaxed);
    if (hdr >> 16 != (t << 16) >> 16)
        return 0; /* a later step's frame: step t went elsewhere (a Bcast's other places) */
    *len = (unsigned)(hdr & 0xffff);
    uint64_t last = (p + lf_words(*len) - 1) / LF_WORDS;
    if (last > end && atomic_load_explicit(lf_stamp(lf_line(h, o, last)), memory_order_acquire) < t)
        return 0;
    return p + 1;
}

/* The first len bytes of the other rank's frame whose data starts at position p into dst. */
static void lines_take(const shm_t *h, uint64_t p, char *dst, size_t len)
{
    uint64_t line = p / LF_WORDS;
    size_t w = (size_t)(p % LF_WORDS);
    for (size_t i = 0; i < len; w = 0) {
        size_t k = RMPI_MIN(len - i, (LF_WORDS - w) * 8);
        memcpy(dst + i, lf_line(h, 1 - h->me, line++) + 8 * w, k);
        i += k;
    }
}

/* Past the frame whose data starts at p (len as lines_get gave it). */
static void lines_next(shm_t *h, uint64_t p, unsigned len) { h->c->coll_shm_lr = p - 1 + lf_words(len); }

/* Wait for *f >= v (returns what it saw): a short spin on the flag, then the core's wait
 * step, which progresses other traffic (non-blocking collectives, sends peers wait for) and
 * gives the CPU away when ranks outnumber cores or the wait is long. While a layer has work
 * that advances with progress (rmpi_core_hook: one-sided windows, non-blocking schedules)
 * every look at the flag is followed by a step: a one-sided target waiting here serves an
 * origin's request at its next step, and 31 pauses between steps (about 1.5 us) were most
 * of a fetch-and-op's round trip (bench/osc_compare.sh --flavor create: 2.33 -> 1.38 us). */
static uint64_t wait_ge(_Atomic uint64_t *f, uint64_t v)
{
    unsigned idle = 0;
    for (;;) {
        for (int i = 0, n = rmpi_core_hook ? 1 : shm_spin; i < n; i++) {
            uint64_t x = atomic_load_explicit(f, memory_order_acquire);
            if (x >= v)
                return x;
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
        rmpi_core_wait_step(&idle);
    }
}

/* Whether every member is done with every step up to need. The least done step seen is
 * kept (coll_shm_free), so the other members' control lines, which they write at every
 * step (a cache miss each), are read about once in a ring's depth of steps rather than at
 * every step. */
static int done_upto(shm_t *h, uint64_t need)
{
    if (h->c->coll_shm_free >= need)
        return 1;
    uint64_t least = UINT64_MAX;
    for (int r = 0; r < h->n; r++) {
        uint64_t d = atomic_load_explicit(&h->ctl[r].done, memory_order_acquire);
        if (d < need)
            return 0;
        least = d < least ? d : least;
    }
    h->c->coll_shm_free = least;
    return 1;
}

/* The steps a step t that writes (depth) needs every member done with: buffer t % SHM_NBUF
 * of a rank is free once all are done with step t - SHM_NBUF, line t % SHM_NLINE once all
 * are done with t - SHM_NLINE (depth: which of the two the step writes; a step that writes
 * nothing passes SHM_NLINE). A rank's buffers may also have held a step of the deep ring
 * (deep_of) since: all must be done with the last of those. */
static uint64_t step_need(shm_t *h, uint64_t t, uint64_t depth)
{
    uint64_t need = t > depth ? t - depth : 0;
    if (depth == SHM_NBUF || depth == SHM_NPAIR) {
        h->c->coll_shm_own = t;
        need = RMPI_MAX(need, h->c->coll_shm_deep);
        /* a step of the first two buffers (pair_of) may have written this one since */
        if (depth == SHM_NPAIR)
            h->c->coll_shm_pair = t;
        else
            need = RMPI_MAX(need, h->c->coll_shm_pair);
    }
    return need;
}

static int step_free(shm_t *h, uint64_t t, uint64_t depth) { return done_upto(h, step_need(h, t, depth)); }

/* The next step, once its writes may go where they go (step_free). */
static uint64_t step_begin(shm_t *h, uint64_t depth)
{
    uint64_t t = ++h->c->coll_shm_step;
    uint64_t need = step_need(h, t, depth);
    for (int r = 0; !done_upto(h, need); r++) /* all n waited for: free (done only grows) */
        wait_ge(&h->ctl[r].done, need);
    return t;
}

/* The deep ring: the members' step buffers taken as one ring of deep_slots steps, which
 * the root fills while the readers copy out. Oversubscribed (any size above a line):
 * slots of a step buffer, RMPI_COLL_SHM_OVERSUBSCRIBED_BCAST_DEEP of them (at most n x
 * SHM_NBUF), so a descheduled reader stalls the root only after that many steps instead
 * of SHM_NBUF (the others' buffers are idle in a Bcast). Two ranks with a core each, up to
 * RMPI_COLL_SHM_BCAST_DEEP bytes (below): slots of DEEP_SLOT, as many as the buffers hold (at most
 * SHM_NLINE, the ring of the lines that publish them; 56 of 16 KiB on 2 ranks). A reader
 * that copies out data the root wrote 4-16 steps before paid about twice what it paid 30-60
 * steps behind (a ring between two threads, 4 KiB: 0.50 us a message 4-16 deep, 0.25 from
 * 32 deep; 16 KiB 1.55 against 0.80; why is not settled: the root's lines may have left
 * its first-level cache by then). 2 ranks, 4 KiB Bcast 0.37 us against 0.52 in the four
 * buffers (docs/results/coll_rest.md, "The deep Bcast ring"). Step t's slot is rewritten once
 * all are done with step t - deep_slots and with the last step that wrote a rank's own
 * buffers (its slot may lie in any of them: a member that wrote none at a step only read
 * there, and is past it). Every member notes the deep steps (coll_shm_deep) so that its
 * own next buffer step waits for the readers of the last one. */
#define DEEP_SLOT (16384 + 64) /* 16 KiB of data after a line the slot leaves unwritten */
static size_t deep_slot(const shm_t *h) { return h->c->coll_shm_over ? h->chunk : RMPI_MIN(h->chunk, DEEP_SLOT); }

static uint64_t deep_slots(const shm_t *h)
{
    if (!h->c->coll_shm_over)
        return RMPI_MIN((uint64_t)h->n * SHM_NBUF * (h->chunk / deep_slot(h)), SHM_NLINE);
    uint64_t d = RMPI_MIN((uint64_t)h->n * SHM_NBUF, SHM_NLINE);
    return RMPI_MIN(d, (uint64_t)rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_BCAST_DEEP);
}

/* Slots lie inside the step buffers, the first of each at the buffer's start: the data
 * (from a slot's second line) never covers a buffer's first line, which stays a step
 * number (SEQ). A small slot's own first line is in a buffer's data, so steps of small
 * slots publish on the root's line ring (bcast_pub), never there. */
static char *deep_of(const shm_t *h, uint64_t t)
{
    size_t slot = deep_slot(h), per = h->chunk / slot, s = (size_t)(t % deep_slots(h));
    return h->data + s / per * h->chunk + s % per * slot;
}

static int deep_free(shm_t *h, uint64_t t)
{
    uint64_t d = deep_slots(h), need = t > d ? t - d : 0;
    return done_upto(h, RMPI_MAX(need, h->c->coll_shm_own));
}

static void post(_Atomic uint64_t *f, uint64_t t) { atomic_store_explicit(f, t, memory_order_release); }

/* ---- the machine's state (2 ranks): segment or single copy ----
 *
 * Between two CPUs a cache line may cost about three times more in one state of a machine
 * than in the other (vCPUs on different core complexes of the host, sockets or dies of a
 * node; the state can change within seconds: docs/results/coll.md, "two states"). The
 * segment's steps are lines one core writes and the other reads (the data and the flags),
 * single copy reads the sender's untouched buffer with one system call: at 16-32 KiB the
 * segment is 1.7-2.6x faster in the fast state and single copy 1.8-2.7x faster in the slow
 * one, so each such threshold has a row per state (RMPI_COLL_SHM_*_CMA, *_CMA_SLOW).
 *
 * Rank 0 times a line's round trip to rank 1 (state_probe) inside a blocking call both
 * take, and writes the state in the probe's last line, which rank 1 reads before it goes
 * on: both change their state at the same call, so both choose the same path in every
 * call. The call that probes is the first one whose path depends on the state
 * (state_from: the size lies between the state's two thresholds) once the segment's step
 * count has reached c->coll_shm_rt_at, which rank 0 publishes with each probe: the step
 * count at a blocking call's start (after the queue drained) is equal on every member,
 * and so are the size and the knobs, so both probe in the same call. */
typedef struct rt_line {
    _Atomic uint64_t seq;
    uint64_t ns, at;       /* rank 0's: the least round trip, the step of the next probe */
    int64_t slow;          /* rank 0's: bit 0 the state, bit 1 the 2-rank choice of single copy (two_choose) */
    _Atomic uint64_t pick; /* rank 0's: the oversubscribed Reduce's state (over_slow) */
} rt_line_t;

/* Round trips of a probe: the first one meets, then RT_BATCHES timed batches of RT_BATCH
 * (a clock read, about 20-50 ns here, would be a third of a single fast round trip) */
#define RT_BATCH 8
#define RT_BATCHES 3
#define RT_ROUNDS (1 + RT_BATCH * RT_BATCHES)
#define RT_GAP_MIN 8
#define RT_GAP_MAX (1u << 24)

static rt_line_t *rt_of(const shm_t *h, int r)
{
    return (rt_line_t *)(void *)(h->lines + (size_t)h->n * SHM_NLINE * h->slot + (size_t)r * SHM_LINE);
}

static uint64_t wait_ge(_Atomic uint64_t *f, uint64_t v);

/* A timed wait: a tight loop (a pause would add its latency to the figure), then wait_ge. */
static void rt_wait(_Atomic uint64_t *f, uint64_t v)
{
    for (int i = 0; i < 100000; i++)
        if (atomic_load_explicit(f, memory_order_acquire) >= v)
            return;
    wait_ge(f, v);
}

/* Probe statistics for RMPI_REPORT (this process, every communicator). */
static coll_state_stats_t rt_stats = {0, 0, 0, UINT64_MAX, 0, 0, 0, 0, 0};

void coll_shm_state_stats(coll_state_stats_t *s) { *s = rt_stats; }

/* ---- 2 ranks in the fast state: the segment or single copy, by their measured times ----
 * Which of the two is faster for large blocks differs between days of the same machine in
 * the same probed state: on 1 Dec the segment's Allgather was 1.4-1.75x single copy's time
 * (the writer's stores into lines the reader had just read ran at about 3 GB/s;
 * docs/results/coll.md run 34), on 2 Dec 0.5x (docs/results/coll_rest.md, "Two copies
 * against single copy on 2 ranks"). So rank 0 times its Allgathers and Alltoalls of 64 KiB blocks or more
 * on each path (two_note) and at each probe (state_probe, where both ranks meet) chooses
 * the faster per byte once each path has TWO_DECIDE_BYTES measured; the other path is tried
 * at the first probe with the current one measured and then every RMPI_COLL_SHM_TWO_TRIAL probes
 * (a probe is RMPI_COLL_SHM_STATE_MS apart while calls come). The choice travels with the
 * state in the probe's last line, so both ranks change path in the same call. */
static int two_allowed(const rmpi_comm_t *c);
#define TWO_MEASURE_MIN 65536
#define TWO_DECIDE_BYTES (4u << 20)

static int two_choose(rmpi_comm_t *c)
{
    int cur = c->coll_shm_two_cma, other = !cur;
    uint64_t *ns = c->coll_shm_two_ns, *by = c->coll_shm_two_bytes;
    if (by[cur] < TWO_DECIDE_BYTES)
        return cur;
    if (by[other] >= TWO_DECIDE_BYTES) {
        double pc = (double)ns[cur] / (double)by[cur], po = (double)ns[other] / (double)by[other];
        rt_stats.two_seg_ns = (cur ? po : pc) * 1024, rt_stats.two_cma_ns = (cur ? pc : po) * 1024;
        int pick = po < pc ? other : cur;
        ns[!pick] = by[!pick] = 0;             /* measured again at its next trial */
        if (by[pick] >= 16 * TWO_DECIDE_BYTES) /* older calls weigh less */
            ns[pick] /= 2, by[pick] /= 2;
        c->coll_shm_two_probes = 1;
        return pick;
    }
    long long every = rmpi_knobs.COLL_SHM_TWO_TRIAL > 0 ? rmpi_knobs.COLL_SHM_TWO_TRIAL : 32; /* 0: auto */
    if (c->coll_shm_two_probes++ % (uint64_t)every)
        return cur;
    rt_stats.two_trials++;
    return other;
}

/* Rank 0 at a probe: whether the next probe should come soon (TWO_SOON steps), because the
 * path just chosen has calls to measure before two_choose can compare (a trial, or the
 * first calls): at the usual gap a trial of the slower path could last seconds. Not before
 * any call was measured, so small calls alone keep the usual gap. */
#define TWO_SOON 64
static int two_soon(const rmpi_comm_t *c)
{
    const uint64_t *by = c->coll_shm_two_bytes;
    return by[c->coll_shm_two_cma] < TWO_DECIDE_BYTES && by[0] + by[1] > 0;
}

/* Rank 0, after a blocking Allgather or Alltoall of 2 ranks in the fast state that could
 * take either path: its time on the path taken (way: 1 single copy, 0 the segment). */
static int two_measures(const rmpi_comm_t *c, const shm_t *h, int regular, size_t bb)
{
    return h->me == 0 && regular && two_allowed(c) && c->coll_shm_cma && bb >= TWO_MEASURE_MIN &&
           bb < (size_t)rmpi_knobs.COLL_SHM_TWO_SEGMENT;
}

static void two_note(rmpi_comm_t *c, int way, uint64_t ns, size_t bb)
{
    c->coll_shm_two_ns[way != 0] += ns;
    c->coll_shm_two_bytes[way != 0] += bb;
}

static void state_probe(rmpi_comm_t *c, shm_t *h)
{
    rt_line_t *mine = rt_of(h, h->me), *peer = rt_of(h, 1 - h->me);
    uint64_t base = c->coll_shm_rt_n++ * (RT_ROUNDS + 1), step = c->coll_shm_step;
    if (h->me) {
        wait_ge(&peer->seq, base + 1);
        post(&mine->seq, base + 1);
        for (uint64_t i = 2; i <= RT_ROUNDS; i++) {
            rt_wait(&peer->seq, base + i);
            post(&mine->seq, base + i);
        }
        wait_ge(&peer->seq, base + RT_ROUNDS + 1);
        c->coll_shm_slow = (int8_t)(peer->slow & 1);
        c->coll_shm_two_cma = (int8_t)(peer->slow >> 1 & 1);
        c->coll_shm_rt_at = peer->at;
        rt_stats.last = peer->ns;
    } else {
        post(&mine->seq, base + 1);
        wait_ge(&peer->seq, base + 1); /* both here: the rounds after are timed */
        uint64_t best = UINT64_MAX;
        for (uint64_t b = 0, i = 2; b < RT_BATCHES; b++) {
            uint64_t t0 = rmpi_time_ns();
            for (int k = 0; k < RT_BATCH; k++, i++) {
                post(&mine->seq, base + i);
                rt_wait(&peer->seq, base + i);
            }
            /* the least batch: a preempted or interrupted one only adds */
            best = RMPI_MIN(best, (rmpi_time_ns() - t0) / RT_BATCH);
        }
        /* the next probe RMPI_COLL_SHM_STATE_MS from now at the rate steps went since the last */
        uint64_t now = rmpi_time_ns(), gap = 64;
        if (c->coll_shm_rt_n > 1 && now > c->coll_shm_rt_ns) {
            double g = (double)(step - c->coll_shm_rt_step) * rmpi_knobs.COLL_SHM_STATE_MS * 1e6 /
                       (double)(now - c->coll_shm_rt_ns);
            gap = g < RT_GAP_MIN ? RT_GAP_MIN : g > RT_GAP_MAX ? RT_GAP_MAX : (uint64_t)g;
        }
        c->coll_shm_rt_step = step, c->coll_shm_rt_ns = now;
        c->coll_shm_slow = (int8_t)((double)best >= rmpi_knobs.COLL_SHM_STATE_RT);
        c->coll_shm_two_cma = (int8_t)two_choose(c);
        if (two_soon(c))
            gap = RMPI_MIN(gap, (uint64_t)TWO_SOON);
        c->coll_shm_rt_at = step + gap;
        rt_stats.two_cma += (unsigned long long)c->coll_shm_two_cma;
        mine->ns = best, mine->at = c->coll_shm_rt_at, mine->slow = c->coll_shm_slow | c->coll_shm_two_cma << 1;
        post(&mine->seq, base + RT_ROUNDS + 1);
        rt_stats.last = best;
    }
    rt_stats.probes++;
    rt_stats.slow += (unsigned long long)c->coll_shm_slow;
    rt_stats.min = RMPI_MIN(rt_stats.min, rt_stats.last);
    rt_stats.max = RMPI_MAX(rt_stats.max, rt_stats.last);
}

/* A threshold of the form "single copy from this many bytes": fast's below the state's
 * window, and there (bytes between fast and slow) the state's, probing first when one is
 * due. Called by blocking calls after the queue drained, with the segment (h) and CMA
 * agreed; every input is equal on every member. */
/* The state as the thresholds read it: the last probe's, or RMPI_COLL_SHM_STATE's. */
static int state_slow(const rmpi_comm_t *c)
{
    int k = (int)rmpi_knobs.COLL_SHM_STATE;
    return k == RMPI_COLL_SHM_STATE_AUTO ? c->coll_shm_slow : k == RMPI_COLL_SHM_STATE_SLOW;
}

/* A probe when one is due (RMPI_COLL_SHM_STATE=auto), from a blocking call after the queue
 * drained, on 2 ranks with a core each. */
static void state_due(rmpi_comm_t *c, shm_t *h)
{
    if (rmpi_knobs.COLL_SHM_STATE == RMPI_COLL_SHM_STATE_AUTO && c->coll_shm_step >= c->coll_shm_rt_at)
        state_probe(c, h);
}

static size_t state_from(rmpi_comm_t *c, shm_t *h, size_t bytes, size_t fast, size_t slow)
{
    if (c->size != 2 || c->coll_shm_over || !c->coll_shm_cma || bytes < RMPI_MIN(fast, slow) ||
        bytes >= RMPI_MAX(fast, slow))
        return fast;
    state_due(c, h);
    return state_slow(c) ? slow : fast;
}

/* ---- the oversubscribed node's state: the Reduce through the segment or root-reads-all ----
 *
 * With more ranks than CPUs (4 ranks on 2 cores) the segment's Reduce (root_whole) has a
 * bad mode in the machine's slow state: the root finds no operand published, yields to
 * the rank sharing its CPU, which waits for the root's done and yields back, about 450
 * context switches a 1 MiB call against 35, and 2-6x the time (docs/results/coll.md run
 * 27); the root reading every operand with process_vm_readv (reduce_cma_all) is not hurt
 * there but is 2.3x the segment's time in the fast state. The 2-rank probe cannot tell
 * (with two ranks per CPU a round trip is a context switch half the time), so rank 0
 * counts what the bad mode is: the yields of its own waits (rmpi_core_yields, core.c) per
 * MiB of the Reduces it roots through the segment, over windows of RMPI_COLL_SHM_
 * OVERSUBSCRIBED_WINDOW bytes. At
 * RMPI_COLL_SHM_OVERSUBSCRIBED_YIELDS or more it publishes slow; RMPI_COLL_SHM_
 * OVERSUBSCRIBED_TRIAL_MS later it publishes fast for a trial, and the next window decides
 * again.
 *
 * The word (rank 0's probe line): from << 2 | prev << 1 | next, the state a call takes
 * being next when the step count at its start (equal on every member after the queue
 * drained) is >= from, else prev. Rank 0 writes it with from OVER_AHEAD steps past its
 * own step count: no member runs more than a ring's depth (SHM_NLINE) of steps past the
 * slowest one's done, which is at most rank 0's step, so none has started a call at
 * `from` yet, and a member that starts one there has seen rank 0's done of a later step,
 * posted (release) after the word. Rank 0 writes a new word only once its own step count
 * is OVER_AHEAD past the last from: every member's next call starts after that from then,
 * so the new word's prev is what each of them would have taken. */
#define OVER_AHEAD 128

static coll_over_stats_t over_stats = {0, 0, 0, 0, 0, 0, 0, 0};

/* The kinds of call rank 0 measures the state in, each with a window of its own (their
 * yields per MiB differ) */
enum { OVER_REDUCE, OVER_BCAST, OVER_ALLREDUCE, OVER_KINDS };
static uint64_t over_win_ns[OVER_KINDS]; /* rank 0's time in the window's calls */

void coll_shm_over_stats(coll_over_stats_t *s) { *s = over_stats; }

/* Whether bytes lie in [lo, hi), the window where the state decides (lo 0: none). */
static int over_in(size_t bytes, long long lo, long long hi)
{
    return lo > 0 && bytes >= (size_t)lo && bytes < (size_t)hi;
}

/* Whether a Reduce of this many bytes lies in the window where the state decides. */
static int over_window(size_t bytes)
{
    return over_in(bytes, rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA_SLOW,
                   rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA_SLOW_MAX);
}

/* The same for a Bcast and an Allreduce. */
static int over_bcast_window(size_t bytes)
{
    return over_in(bytes, rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_BCAST_CMA_SLOW,
                   rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_BCAST_CMA_SLOW_MAX);
}

static int over_allreduce_window(size_t bytes)
{
    return over_in(bytes, rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_ALLREDUCE_CMA_SLOW,
                   rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_ALLREDUCE_CMA_SLOW_MAX);
}

/* The state a blocking call starting now takes (1: slow); every input is equal on all members. */
static int over_slow(const shm_t *h)
{
    int k = (int)rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_STATE;
    if (k != RMPI_COLL_SHM_OVERSUBSCRIBED_STATE_AUTO)
        return k == RMPI_COLL_SHM_OVERSUBSCRIBED_STATE_SLOW;
    uint64_t w = atomic_load_explicit(&rt_of(h, 0)->pick, memory_order_acquire);
    return (int)(h->c->coll_shm_step >= w >> 2 ? w & 1 : w >> 1 & 1);
}

/* Rank 0: the state `slow` from OVER_AHEAD steps on, if the last word holds for everyone. */
static void over_publish(shm_t *h, int slow)
{
    rt_line_t *l = rt_of(h, 0);
    uint64_t w = atomic_load_explicit(&l->pick, memory_order_relaxed), s = h->c->coll_shm_step;
    if (s < (w >> 2) + OVER_AHEAD || (uint64_t)slow == (w & 1))
        return;
    atomic_store_explicit(&l->pick, (s + OVER_AHEAD) << 2 | (w & 1) << 1 | (uint64_t)slow, memory_order_release);
    h->c->coll_shm_pick_ns = rmpi_time_ns();
    over_stats.picks++;
    over_stats.trials += (unsigned long long)!slow;
}

/* Every member after a call of kind k that rank 0 rooted through the segment in the kind's
 * window (over_measures): rank 0 adds the yields and bytes to the kind's window, and at its
 * end decides the state; in a Bcast the others publish their yields for it. */
static void over_measure(shm_t *h, int k, size_t bytes, uint64_t yields, uint64_t ns)
{
    rmpi_comm_t *c = h->c;
    if (h->me) {
        if (k == OVER_BCAST) {
            c->coll_shm_yields_in += yields;
            atomic_store_explicit(&h->ctl[h->me].yields, c->coll_shm_yields_in, memory_order_relaxed);
        }
        return;
    }
    if (k == OVER_BCAST) { /* every rank's yields: the readers wait in the bad mode, not the root */
        uint64_t others = 0;
        for (int r = 1; r < h->n; r++)
            others += atomic_load_explicit(&h->ctl[r].yields, memory_order_relaxed);
        yields += others - c->coll_shm_yields_in;
        c->coll_shm_yields_in = others;
    }
    c->coll_shm_win_bytes[k] += bytes;
    c->coll_shm_win_yields[k] += yields;
    over_win_ns[k] += ns;
    if (c->coll_shm_win_bytes[k] < (uint64_t)rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_WINDOW)
        return;
    double mib = (double)c->coll_shm_win_bytes[k] / 1048576.0, per = (double)c->coll_shm_win_yields[k] / mib;
    over_stats.us_mib = (double)over_win_ns[k] / 1e3 / mib;
    c->coll_shm_win_bytes[k] = c->coll_shm_win_yields[k] = over_win_ns[k] = 0;
    over_stats.last = per;
    over_stats.min = over_stats.windows ? RMPI_MIN(over_stats.min, per) : per;
    over_stats.max = over_stats.windows ? RMPI_MAX(over_stats.max, per) : per;
    over_stats.windows++;
    int slow = per >= (k == OVER_BCAST       ? rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_BCAST_YIELDS
                       : k == OVER_ALLREDUCE ? rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_ALLREDUCE_YIELDS
                                             : rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_YIELDS);
    over_stats.slow += (unsigned long long)slow;
    if (slow)
        over_publish(h, 1);
}

/* Rank 0, rooting a Reduce in the window in the slow state (auto): the segment again for
 * a trial once RMPI_COLL_SHM_OVERSUBSCRIBED_TRIAL_MS passed since the last word. */
static void over_trial(shm_t *h)
{
    if (rmpi_time_ns() - h->c->coll_shm_pick_ns >= (uint64_t)(rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_TRIAL_MS * 1e6))
        over_publish(h, 0);
}

/* The least call of kind k that feeds its window (over_measures). Reduce and Bcast from
 * 16 KiB: their windows' yields per MiB at 16-32 KiB lie as far apart as at 64 KiB (4 ranks
 * on 2 cores, 4 MiB windows of 16 or 32 KiB calls: Reduce 352-763 in the bad mode, at most
 * 131 in good-mode jobs; Bcast, every rank's, 396-480 against at most 146; docs/results/
 * coll.md run 33), so a job of such calls alone finds the state. Allreduce from 64 KiB: its
 * 16-64 KiB windows overlap (bad 161-828, good up to 657), so smaller ones follow the state
 * and do not feed it (run 30). */
#define OVER_MEASURE_MIN 65536
#define OVER_MEASURE_MIN_ROOTED 16384
static size_t over_measure_min(int k) { return k == OVER_ALLREDUCE ? OVER_MEASURE_MIN : OVER_MEASURE_MIN_ROOTED; }

/* Whether a blocking call in its kind's state window takes the slow state's path: the
 * word read at the call's start, after the queue drained (over_slow); trial: rank 0 roots
 * the call (a Reduce to 0, a Bcast from 0, an Allreduce) and, had it taken the segment, it
 * would have fed the kind's window (over_measure_min): in the slow state rank 0 then tries
 * the segment again once RMPI_COLL_SHM_OVERSUBSCRIBED_TRIAL_MS passed (state auto). A trial
 * in a call that does not measure would leave the segment in place in the bad mode until
 * a call that measures comes (4 ranks on 2 cores, Allreduce 32 KiB after 16 KiB ones: 52-75
 * us against single copy's 22-26, docs/results/coll.md run 33). */
static int over_pick(shm_t *h, int trial)
{
    if (!over_slow(h))
        return 0;
    if (h->me == 0 && trial && rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_STATE == RMPI_COLL_SHM_OVERSUBSCRIBED_STATE_AUTO)
        over_trial(h);
    return 1;
}

/* Whether the state is measured in a call of kind k that rank 0 roots through the segment
 * (zero_roots) in its kind's window (win), of at least over_measure_min(k) bytes: state
 * auto, single copy agreed. Smaller calls follow the state but do not feed it. */
static int over_measures(const shm_t *h, int k, int zero_roots, int win, size_t bytes)
{
    return h->c->coll_shm_over && zero_roots && win && bytes >= over_measure_min(k) && h->c->coll_shm_cma &&
           rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_STATE == RMPI_COLL_SHM_OVERSUBSCRIBED_STATE_AUTO;
}

/* A size knob as such a threshold where 0 means never (RMPI_COLL_SHM_BCAST_CMA). */
static size_t from_knob(long long v) { return v > 0 ? (size_t)v : SIZE_MAX; }

/* ---- packed views of user buffers ---- */

/* The packed bytes of (buf, count, dt): buf itself when contiguous, else a packed copy
 * (*tmp, freed by the caller). */
static const char *packed_in(const void *buf, size_t count, const rmpi_dtype_t *dt, void **tmp)
{
    if (!dt)
        return buf;
    if (rmpi_dtype_is_contig(dt, count))
        return rmpi_dtype_contig_ptr(buf, dt);
    size_t bytes = count * dt->size;
    *tmp = rmpi_xmalloc(bytes ? bytes : 1);
    rmpi_dtype_pack(buf, count, dt, 0, *tmp, bytes);
    return *tmp;
}

/* Where packed results for (buf, count, dt) go: buf itself when contiguous, else scratch
 * (*tmp) that packed_done unpacks. */
static char *packed_out(void *buf, size_t count, const rmpi_dtype_t *dt, void **tmp)
{
    if (!dt)
        return buf;
    if (rmpi_dtype_is_contig(dt, count))
        return rmpi_dtype_contig_ptr(buf, dt);
    size_t bytes = count * dt->size;
    *tmp = rmpi_xmalloc(bytes ? bytes : 1);
    return *tmp;
}

static void packed_done(void *tmp, void *buf, size_t count, const rmpi_dtype_t *dt)
{
    if (tmp)
        rmpi_dtype_unpack(tmp, count * dt->size, buf, count, dt, 0);
}

/* The n receive blocks' scratch unpacked and freed, with the array. */
static void blocks_done(void **tout, const rmpi_coll_blk_t *recv, int n)
{
    for (int r = 0; r < n; r++) {
        packed_done(tout[r], recv[r].buf, recv[r].count, recv[r].dt);
        free(tout[r]);
    }
}

/* what RMPI_REPORT calls a call run here (coll_note) */
static const char shm_choice[] = "shm";
static const char shm_cma_choice[] = "shm_cma";     /* single copy (process_vm_readv) */
static const char shm_two_msg_choice[] = "shm_msg"; /* 2 ranks: the root's one message, announced in the segment */

/* ---- a call as a resumable sequence of steps (Barrier, Bcast, Reduce, Allreduce, and
 * Allgather and Alltoall through the segment) ----
 * A call is an op that op_run advances as far as the others' flags allow; where it must
 * wait it returns and keeps its place (phase), so the same steps serve the blocking call
 * (op_block polls until done) and the non-blocking and persistent ones (the schedule
 * engine polls from progress: nbc.c's NBC_SHM step). Non-blocking calls of a communicator
 * wait in c->coll_shm_queue and take their steps one call after another, in the order
 * they were started; MPI has every member start its collectives on a communicator in the
 * same order, so every member gives a call the same step numbers. A blocking call first
 * lets the queue drain (the progress engine keeps the others' queues moving meanwhile). */

enum { OP_BARRIER, OP_BCAST, OP_REDUCE, OP_MOVE };

/* Allgather/Alltoall, per member r of a start: the packed block for r (Allgather: the own
 * block, at index me) and where r's block lands, with their scratch. */
typedef struct move_blk {
    const char *in;
    char *out;
    void *tin, *tout;
} move_blk_t;

struct rmpi_coll_shm_op {
    struct rmpi_coll_shm_op *next; /* in c->coll_shm_queue */
    shm_t h;
    int kind, root, phase, err, done, out_here;
    int deep;       /* Bcast: steps through the deep ring (deep_of) */
    int cma;        /* non-blocking Reduce on 2 ranks: in single copy (reduce_nb_single) */
    int two;        /* Bcast reader: the root's step was a 2-rank move's point-to-point marker (TWO_P2P) */
    int then_bcast; /* Reduce to rank 0 of an oversubscribed Allreduce: a Bcast follows */
    int prefix;     /* Scan: every step whole, rank r combining x_r .. x_0 (scan_op) */
    /* the call's arguments (a persistent op keeps dt and op retained) */
    void *buf; /* Bcast: the buffer; Reduce: rbuf */
    const void *sbuf;
    size_t count, bytes;
    rmpi_dtype_t *dt;
    MPI_Op op;
    MPI_Datatype basic;
    rmpi_coll_kernel_t kern; /* Reduce: the op's kernel on basic, looked up once per call */
    size_t es, elems;        /* Reduce: basic element size and count */
    /* this start */
    const char *in;
    char *out;
    void *tin, *tout;
    size_t off, total; /* Bcast: bytes done, the root's total; Reduce: elements done */
    size_t k;          /* Reduce: elements of this step */
    uint64_t t;
    /* Allgather (gather) and Alltoall through the segment: bytes = a receive block, sb the
     * send block, part the bytes per block and step; sblk NULL in place; own: the block
     * arrays (and their datatypes) belong to the op (I*, persistent) */
    int gather, own, i; /* i: the next member to copy out of (Reduce: to combine) in this step */
    int line; /* Allgather/Alltoall: the call is one step in the line ring (1) or a frame of cells (2; move_line) */
    const rmpi_coll_blk_t *sblk, *rblk;
    size_t sb, part;
    move_blk_t *mv;
    move_blk_t mv_few[4];            /* mv of up to 4 members: no allocation per small call */
    _Alignas(16) char stash[LF_MAX]; /* Reduce in frames: an operand (reduce_cells) */
};

static int ge(_Atomic uint64_t *f, uint64_t v) { return atomic_load_explicit(f, memory_order_acquire) >= v; }

/* Whether every member's flag (at byte offset field of its control line) reached t. */
static int all_ge(const shm_t *h, size_t field, uint64_t t)
{
    for (int r = 0; r < h->n; r++)
        if (!ge((_Atomic uint64_t *)((char *)&h->ctl[r] + field), t))
            return 0;
    return 1;
}

static int barrier_run(coll_shm_op_t *o)
{
    shm_t *h = &o->h;
    switch (o->phase) {
    case 0:
        o->t = ++h->c->coll_shm_step;
        o->phase = 1;
        /* fallthrough */
    case 1:
        if (!step_free(h, o->t, SHM_NLINE))
            return 0;
        post(&h->ctl[h->me].ready, o->t);
        o->phase = 2;
        /* fallthrough */
    default:
        /* Oversubscribed, rank 0 alone waits for every ready and releases the others by
         * its done, so it leaves first. Leaving together, a root 0 that had yielded its
         * CPU at the release wrote a Bcast after its readers had started waiting (4 ranks
         * on 2 cores, a barrier then an 8 B Bcast: readers 0.9-4.9 us each for the root's
         * 0.2) and with them waiting every rank yields more; released by rank 0, a round
         * of both was 4.4 us against 5.2-6.3 (docs/results/coll_rest.md, "The
         * oversubscribed Barrier"). With a core each, leaving together is one line
         * transfer sooner. */
        if (h->c->coll_shm_over && h->me &&
            rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_BARRIER == RMPI_COLL_SHM_OVERSUBSCRIBED_BARRIER_ROOT) {
            if (!ge(&h->ctl[0].done, o->t))
                return 0;
        } else if (!all_ge(h, offsetof(shm_ctl_t, ready), o->t))
            return 0;
        post(&h->ctl[h->me].done, o->t);
        return 1;
    }
}

/* Bcast step t's buffer: the root's (SHM_NBUF deep), or with o->deep a slot of the deep
 * ring; the data after its first line, which publishes the later steps. */
static int bcast_deep(const coll_shm_op_t *o);
static char *bcast_buf(const coll_shm_op_t *o, uint64_t t)
{
    return bcast_deep(o) ? deep_of(&o->h, t) : buf_of(&o->h, o->root, t);
}

/* Bytes of each step of a Bcast of total bytes (equal on all members: the receivers know
 * the total from the first step, before its data). From 4 KiB up to
 * RMPI_COLL_SHM_BCAST_HALVES, two halves: the reader copies the first out while the root copies the second in, and the
 * step buffers' lines in flight are half as many (2 ranks, 8 KiB: 0.6 us against 0.9 in
 * one step, the four 8 KiB steps the root runs ahead filling a 32 KiB L1). Not measured
 * on an oversubscribed node, which keeps one step. */
#define BCAST_HALF_MIN 2048 /* smaller halves lost: 512 B-1 KiB up to 1.4x the one step's time */
static int bcast_halves(const rmpi_comm_t *c, size_t total)
{
    return total >= 2 * BCAST_HALF_MIN && total <= (size_t)rmpi_knobs.COLL_SHM_BCAST_HALVES && !c->coll_shm_over;
}
/* On 2 ranks in the slow state (a line round trip 3x the fast one's: state_probe) one step:
 * the halves' second publish-and-read costs a round trip more than their overlap saves
 * (2 ranks, both inside one job, line round trip 268-288 ns: 4 KiB 0.53 us in one step
 * against 0.73 in halves, 8 KiB 0.85 against 0.96, 6 of 6 rounds each). Equal on both
 * ranks: the state changes only at a probe, which both reach in the same blocking call
 * with nothing queued. */
/* Whether a Bcast takes the deep ring (deep_of): oversubscribed (o->deep), or on 2 ranks
 * with a core each the root's total above a line's kinds and below RMPI_COLL_SHM_BCAST_DEEP
 * (the readers take the total from the first step's line or frame before its data, so
 * all choose alike). */
/* Whether a Bcast of this many bytes is below the 2-rank deep ring's limit (above a line's
 * kinds it takes the ring: bcast_deep), so single copy and the tree leave it alone. */
/* ---- 2 ranks with a core each: two copies through the segment, or single copy ----
 * Below RMPI_COLL_SHM_TWO_SEGMENT bytes a blocking Bcast (after its marker step: the deep
 * ring) and Allgather and Alltoall blocks (the step buffers, past their _MAX limits) go
 * through the segment while rank 0's measured times say it is the faster (two_choose,
 * above), ahead of the state's single-copy rows and the tree; a forced slow row
 * (RMPI_COLL_SHM_STATE=slow) keeps those. On 2 Dec two memcpy through lines the other core
 * pulls beat one process_vm_readv, which pins and walks the pages (64 KiB: memcpy 0.7 us,
 * process_vm_readv 6.2-7.2), in both probed states: 2 ranks, each call timed alone after a
 * barrier, inside one job, 6 of 6 rounds lower each: Bcast 16 KiB 0.57 us against 3.16,
 * 1 MiB 22.3 against 55.3 (probe slow), 4 MiB 99.9 against 221; Allgather 16 KiB 0.75
 * against 2.95, 4 MiB 235 against 445; Alltoall 16 KiB 0.86 against 2.98, 4 MiB 326 against
 * 590 (docs/results/coll_rest.md, "Two copies against single copy on 2 ranks"); on 1 Dec
 * the segment lost (above). The choice is equal on both ranks (it changes only at a probe,
 * which both reach in the same blocking call after the queue drained), so both lay a
 * Bcast's steps out alike. */
static size_t two_segment_max(void) { return (size_t)rmpi_knobs.COLL_SHM_TWO_SEGMENT; }

static int two_allowed(const rmpi_comm_t *c)
{
    return c->size == 2 && !c->coll_shm_over && rmpi_knobs.COLL_SHM_STATE != RMPI_COLL_SHM_STATE_SLOW;
}

static int two_segment(const rmpi_comm_t *c, size_t bytes)
{
    return two_allowed(c) && bytes < two_segment_max() && !c->coll_shm_two_cma;
}

static int bcast_deep_size(const rmpi_comm_t *c, size_t bytes)
{
    return c->size == 2 && !c->coll_shm_over && bytes < (size_t)rmpi_knobs.COLL_SHM_BCAST_DEEP;
}

static int bcast_deep(const coll_shm_op_t *o)
{
    const shm_t *h = &o->h;
    return o->deep || (h->n == 2 && !h->c->coll_shm_over && o->total > rooted_max(h) &&
                       (o->total < (size_t)rmpi_knobs.COLL_SHM_BCAST_DEEP || two_segment(h->c, o->total)));
}

static size_t bcast_step(const coll_shm_op_t *o)
{
    const shm_t *h = &o->h;
    if (bcast_deep(o) && !o->deep)
        return deep_slot(h) - 64;
    if (bcast_halves(h->c, o->total) && !(h->n == 2 && state_slow(h->c)))
        return RMPI_MIN((o->total / 2 + 63) / 64 * 64, h->chunk - 64);
    return h->chunk - 64;
}

/* The line that publishes the step: the first step's on the root's line ring (with the
 * total), later steps' on their buffer's first line; every step of the small slots on
 * the line ring (deep_of: their first lines lie in buffers' data). */
static char *bcast_pub(const coll_shm_op_t *o)
{
    int small = bcast_deep(o) && !o->deep;
    return o->off && !small ? bcast_buf(o, o->t) : line_of(&o->h, o->root, o->t);
}

/* A first step whose total has this bit is no Bcast's: the root of a 2-rank move
 * (rmpi_coll_shm_two_move) sends the block as a point-to-point message, the rest of the
 * total its bytes. */
#define TWO_P2P (1ull << 63)
#define TWO_CMA (1ull << 62) /* ... in single copy instead (rmpi_coll_shm_two_cma) */
#define TWO_BIG \
    (1ull       \
     << 61) /* a 2-rank Bcast's root above the segment's small paths: the reader takes its path from the root's bytes (bcast_two) */
#define TWO_MARKS (TWO_P2P | TWO_CMA | TWO_BIG)
#define TWO_BIG_PATH 3 /* o->two of TWO_BIG (1 and 2: RMPI_COLL_TWO_P2P, _CMA) */

/* The first step is published on the root's line, with the total (so receivers know how
 * many steps follow) and the data when it fits there, else in the buffer; later steps in
 * the buffer, published on its first line. */
static int bcast_run(coll_shm_op_t *o)
{
    shm_t *h = &o->h;
    int root = o->root;
    for (;;) {
        switch (o->phase) {
        case 0:
            o->t = ++h->c->coll_shm_step;
            o->phase = 1;
            /* fallthrough */
        case 1:
            if (h->me == root) {
                /* the root writes its line, or a buffer too; receivers write nothing */
                int big = o->total > rooted_max(h);
                if (big && bcast_deep(o)) {
                    if (!deep_free(h, o->t))
                        return 0;
                    h->c->coll_shm_deep = o->t;
                } else if (!step_free(h, o->t, big ? SHM_NBUF : line_depth(h, o->total, 1)))
                    return 0;
                size_t k = RMPI_MIN(bcast_step(o), o->total - o->off);
                if (o->off == 0 && !big && lines_step(h, o->total)) { /* a line frame: the data */
                    lines_put(h, o->t, o->in, k);
                    post(&h->ctl[root].done, o->t);
                    o->off += k;
                    break;
                }
                if (o->off == 0 && h->cellmax &&
                    (big || cell_step(h, o->total))) { /* a frame: the data, or the total */
                    if (big)
                        memcpy(bcast_buf(o, o->t) + 64, o->in, k);
                    cells_put(h, o->t, big ? (const char *)&o->total : o->in, big ? sizeof o->total : k,
                              big ? CELL_BIG : 0);
                    post(&h->ctl[root].done, o->t);
                    o->off += k;
                    break;
                }
                char *l = bcast_pub(o);
                if (o->off == 0)
                    memcpy(l + 8, &o->total, sizeof o->total);
                memcpy(big ? bcast_buf(o, o->t) + 64 : l + 16, o->in + o->off, k);
                post(SEQ(l), o->t);
                post(&h->ctl[root].done, o->t);
                o->off += k;
                break;
            }
            if (!step_free(h, o->t, SHM_NLINE))
                return 0;
            o->phase = 2;
            /* fallthrough */
        default: {
            unsigned len;
            const char *f;
            uint64_t p;
            /* the root's size decides line frame, cells or slot: any of them may hold the step */
            if (o->off == 0 && h->lfmax && (p = lines_get(h, o->t, &len, o->bytes))) {
                o->total = len;
                if (len > o->bytes)
                    o->err = MPI_ERR_TRUNCATE;
                lines_take(h, p, o->out, RMPI_MIN(len, o->bytes));
                lines_next(h, p, len);
                post(&h->ctl[h->me].done, o->t);
                o->off += len;
                break;
            }
            if (o->off == 0 && h->cellmax && (f = cells_get(h, o->t, &len))) {
                if (len & CELL_BIG)
                    cells_take(f, (char *)&o->total, sizeof o->total);
                else
                    o->total = len;
                size_t k = RMPI_MIN(bcast_step(o), o->total);
                if (k > o->bytes)
                    o->err = MPI_ERR_TRUNCATE;
                if ((len & CELL_BIG) && bcast_deep(o))
                    h->c->coll_shm_deep = o->t;
                if (len & CELL_BIG)
                    memcpy(o->out, bcast_buf(o, o->t) + 64, RMPI_MIN(k, o->bytes));
                else
                    cells_take(f, o->out, RMPI_MIN(k, o->bytes));
                cells_next(h, len);
                post(&h->ctl[h->me].done, o->t);
                o->off += k;
                break;
            }
            const char *l = bcast_pub(o);
            if (!ge(SEQ(l), o->t))
                return 0;
            if (o->off == 0)
                memcpy(&o->total, l + 8, sizeof o->total);
            if (RMPI_UNLIKELY(o->off == 0 && (o->total & TWO_MARKS))) {
                /* the root moves the data another way (rmpi_coll_shm_two_move, bcast_two) */
                o->two = o->total & TWO_CMA ? RMPI_COLL_TWO_CMA : o->total & TWO_P2P ? RMPI_COLL_TWO_P2P : TWO_BIG_PATH;
                o->total &= ~TWO_MARKS;
                post(&h->ctl[h->me].done, o->t);
                return 1;
            }
            size_t k = RMPI_MIN(bcast_step(o), o->total - o->off);
            const char *from = o->total <= line_data(h) ? l + 16 : bcast_buf(o, o->t) + 64;
            if (o->total > line_data(h) && bcast_deep(o))
                h->c->coll_shm_deep = o->t;
            /* a root sending more than fits is reported here, as a receive would be */
            if (o->off + k > o->bytes)
                o->err = MPI_ERR_TRUNCATE;
            if (o->off < o->bytes)
                memcpy(o->out + o->off, from, RMPI_MIN(k, o->bytes - o->off));
            post(&h->ctl[h->me].done, o->t);
            o->off += k;
        }
        }
        o->phase = 0;
        if (o->off >= o->total)
            return 1;
    }
}

/* A step's operand of rank r when the step is combined whole (in its line or its buffer). */
static const char *small_of(const shm_t *h, int r, uint64_t t, int in_line)
{
    return in_line ? line_of(h, r, t) + 16 : data_of(h, r, t);
}

/* A Reduce whose root combines every step whole: on two ranks (below), and when the node
 * has more ranks than CPUs. There the other ranks copy their step in and go on, waiting
 * for nobody but a buffer's last reader, and the root takes each operand when its owner
 * has run: no step waits for a descheduled rank's turn in a chain, as a tree's messages
 * do (every rendezvous handoff a time slice of the receiver, 4 ranks on 2 cores). */
static int root_whole(const coll_shm_op_t *o) { return o->root >= 0 && (o->h.n == 2 || o->h.c->coll_shm_over); }

/* The root of a Reduce combined whole (root_whole) combines the others' steps with its own
 * input where it lies, so it copies nothing into the segment (no one else reads it); not
 * in place, where the output overwrites that input before the combine reads it. */
static int root_reads_own(const coll_shm_op_t *o) { return root_whole(o) && o->out_here && o->in != o->out; }

/* Rank r's operand of a step combined whole (own: the root's input where it lies, else
 * NULL), or NULL while r has not published it. */
static inline const char *whole_operand(const coll_shm_op_t *o, const char *own, int r, int in_line)
{
    const shm_t *h = &o->h;
    if (own && r == h->me)
        return own;
    if (!ge(SEQ(in_line ? line_of(h, r, o->t) : buf_of(h, r, o->t)), o->t))
        return NULL;
    return small_of(h, r, o->t, in_line);
}

/* dst = y op x, a block of COPY_BLOCK bytes at a time: the block copied from x is still in
 * L1 when y is combined into it, where copying the whole step first (up to 128 KiB) and then
 * combining reads it back from L2. The first two operands of a step combined whole (x: rank
 * n-1's, y: rank n-2's), so the bits are those of the copy followed by the combine; steps
 * of one block keep the plain copy (no loop around it). */
#define COPY_BLOCK 8192
static void copy_combine(const coll_shm_op_t *o, char *dst, const char *x, const char *y)
{
    size_t es = o->es, b = RMPI_MAX(COPY_BLOCK / es, 1);
    for (size_t i = 0; i < o->k; i += b) {
        size_t m = RMPI_MIN(b, o->k - i);
        memcpy(dst + i * es, x + i * es, m * es);
        o->kern(y + i * es, dst + i * es, m);
    }
}

/* Slice s of k elements of es bytes: 64-byte aligned boundaries where the element size allows. */
static void slice(size_t k, size_t es, int n, int s, size_t *lo, size_t *hi)
{
    size_t q = k / (size_t)n, g = 64 % es ? 1 : 64 / es;
    q = q / g * g;
    *lo = (size_t)s * q;
    *hi = s == n - 1 ? k : *lo + q;
}

/* A step of a 2-rank Reduce or Allreduce in the cell rings, once the other's frame is
 * there: out = x0 op x1, the bits of the line ring's order (x1 copied, x0 combined into
 * it) on both ranks. The own operand is read where it lies (in place on rank 0: saved
 * first, as x1 lands on it). */
static int reduce_cells(coll_shm_op_t *o)
{
    shm_t *h = &o->h;
    unsigned len;
    size_t b = o->k * o->es;
    const char *f = NULL;
    uint64_t p = 0;
    if (o->root >= 0 && lines_step(h, b) ? !(p = lines_get(h, o->t, &len, b)) : !(f = cells_get(h, o->t, &len)))
        return 0;
    size_t got = RMPI_MIN(b, len); /* sizes differ only in erroneous calls */
    const char *mine = o->in + o->off * o->es;
    char *dst = o->out + o->off * o->es;
    if (h->me == 0) {
        if (dst == mine) {
            memcpy(o->stash, mine, b);
            mine = o->stash;
        }
        if (f)
            cells_take(f, dst, got);
        else
            lines_take(h, p, dst, got);
        o->kern(mine, dst, o->k);
    } else {
        if (f)
            cells_take(f, o->stash, got);
        else
            lines_take(h, p, o->stash, got);
        if (dst != mine)
            memcpy(dst, mine, b);
        o->kern(o->stash, dst, o->k);
    }
    if (f)
        cells_next(h, len);
    else
        lines_next(h, p, len);
    return 1;
}

/* Steps up to RMPI_COLL_SHM_SMALL, and every step of a Reduce on two ranks: every rank
 * that wants the result combines it all; the others go on (their buffers are safe until
 * the root's done); published on the line or the buffer's first line. Larger: each rank
 * combines its slice of every buffer into its own buffer, and the ranks that want the
 * result copy every slice out. Why two ranks: there the slices save the root half a
 * combine but cost a flag round and the copy-out of the peer's slice (4-16 KiB Reduce:
 * whole about half the time of the slices or the tree, docs/results/coll.md run 12). An
 * Allreduce on an oversubscribed node (below RMPI_COLL_SHM_OVERSUBSCRIBED_SMALL) is
 * combined whole by every rank too: the slices' second flag round runs every rank once
 * more per step (4 ranks on 2 cores, 4-8 KiB: 9.0 us against 13.8-15.2 sliced, run 21).
 * So is a 2-rank Allreduce step up to RMPI_COLL_SHM_SMALL_TWO: each rank reads a vector's
 * worth of the other's data either way, and the slices add a wait for the reduced slice, a
 * flag's trip between the cores (4 KiB: 0.73x the sliced time, run 25); from 32 KiB the
 * halved combine is worth that trip. */
/* A 2-rank Reduce (root_whole) above a line's kinds below RMPI_COLL_SHM_REDUCE_DEEP goes
 * through the deep ring (deep_of), as the Bcast does: the other rank copies its operand
 * into step t's slot, publishes on its line ring and goes on, up to 56 steps ahead of the
 * root, which combines from the slot (reduce_deep_combine) and writes nothing; its steps
 * are of a slot's data. Equal on both ranks (the total bytes, the knob). */
static int reduce_deep(const coll_shm_op_t *o)
{
    const shm_t *h = &o->h;
    size_t bytes = o->elems * o->es;
    return o->root >= 0 && h->n == 2 && !h->c->coll_shm_over && !o->then_bcast && bytes > rooted_max(h) &&
           bytes < (size_t)rmpi_knobs.COLL_SHM_REDUCE_DEEP;
}

/* The root's step of a deep Reduce: out = x0 op x1 (the order of reduce_run's combine, so
 * the bits are the same), the other's operand in the slot, a block at a time so the copy is
 * still in L1 when combined. Rank 0 in place (its operand is the output) keeps each block of
 * its own operand aside first, on the stack. */
#define DEEP_TMP 2048
static void reduce_deep_combine(const coll_shm_op_t *o, const char *other)
{
    size_t es = o->es, b = RMPI_MAX(DEEP_TMP / es, 1), at;
    const char *own = o->in + o->off * es;
    char *dst = o->out + o->off * es, tmp[DEEP_TMP];
    const char *x0 = o->h.me ? other : own, *x1 = o->h.me ? own : other;
    for (size_t i = 0; i < o->k; i += b) {
        size_t m = RMPI_MIN(b, o->k - i);
        at = i * es;
        if (dst == x0) {
            memcpy(tmp, x0 + at, m * es);
            memcpy(dst + at, x1 + at, m * es);
            o->kern(tmp, dst + at, m);
            continue;
        }
        if (dst != x1)
            memcpy(dst + at, x1 + at, m * es);
        o->kern(x0 + at, dst + at, m);
    }
}

static int reduce_nb_cma(coll_shm_op_t *o);

static int reduce_run(coll_shm_op_t *o)
{
    shm_t *h = &o->h;
    size_t es = o->es;
    size_t lmax = o->root >= 0 ? rooted_max(h) : line_max(h);
    if (o->cma)
        return reduce_nb_cma(o);
    for (;;) {
        int in_line = o->k * es <= lmax;
        switch (o->phase) {
        case 0:
            o->k = RMPI_MIN(((reduce_deep(o) ? deep_slot(h) : h->chunk) - 64) / es, o->elems - o->off);
            in_line = o->k * es <= lmax;
            o->t = ++h->c->coll_shm_step;
            o->phase = 1;
            /* fallthrough */
        case 1: {
            int whole = o->k * es <= (size_t)rmpi_knobs.COLL_SHM_SMALL || root_whole(o) || h->c->coll_shm_over ||
                        (h->n == 2 && o->k * es <= (size_t)rmpi_knobs.COLL_SHM_SMALL_TWO);
            if (whole && !in_line && reduce_deep(o)) {
                h->c->coll_shm_deep = o->t;
                if (o->root == h->me) {
                    o->phase = 6;
                    continue;
                }
                if (!deep_free(h, o->t))
                    return 0;
                memcpy(deep_of(h, o->t) + 64, o->in + o->off * es, o->k * es);
                post(SEQ(line_of(h, h->me, o->t)), o->t);
                break;
            }
            /* sliced steps go through the step buffers whatever their size */
            if (!step_free(h, o->t, whole && in_line ? line_depth(h, o->k * es, o->root >= 0) : SHM_NBUF))
                return 0;
            if (whole) {
                int lf = in_line && o->root >= 0 && lines_step(h, o->k * es);
                if (lf || (in_line && cell_step(h, o->k * es))) { /* 2 ranks: the root's operand stays where it is */
                    if (o->root != h->me && lf)
                        lines_put(h, o->t, o->in + o->off * es, o->k * es);
                    else if (o->root != h->me)
                        cells_put(h, o->t, o->in + o->off * es, o->k * es, 0);
                    if (!o->out_here)
                        break;
                    o->phase = 5;
                    continue;
                }
                /* the root of a Reduce combined whole reads its own operand where it is */
                o->i = o->prefix ? h->me : h->n - 1;
                if (root_reads_own(o)) {
                    o->phase = 2;
                    continue;
                }
                char *l = in_line ? line_of(h, h->me, o->t) : buf_of(h, h->me, o->t);
                memcpy((char *)small_of(h, h->me, o->t, in_line), o->in + o->off * es, o->k * es);
                post(SEQ(l), o->t);
                if (!o->out_here)
                    break;
                o->phase = 2;
            } else {
                memcpy(data_of(h, h->me, o->t), o->in + o->off * es, o->k * es);
                post(&h->ctl[h->me].ready, o->t);
                o->phase = 3;
            }
            continue;
        }
        case 2: {
            /* out = x_{n-1} op ... op x_0 in this order on every rank, so all ranks of an
             * Allreduce get the same bits: rank n-1's operand first, then the others from
             * the top, each as soon as its owner has published it (o->i: the next one) */
            const char *own = root_reads_own(o) ? o->in + o->off * es : NULL;
            char *dst = o->out + o->off * es;
            int top = o->prefix ? h->me : h->n - 1; /* a Scan's prefix: x_me first */
            for (; o->i >= 0; o->i--) {
                int r = o->i;
                const char *x = whole_operand(o, own, r, in_line), *y;
                if (!x)
                    return 0;
                if (r < top)
                    o->kern(x, dst, o->k);
                else if (o->k * es > COPY_BLOCK && r > 0 && (y = whole_operand(o, own, r - 1, in_line))) {
                    copy_combine(o, dst, x, y);
                    o->i--;
                } else
                    memcpy(dst, x, o->k * es);
            }
            break;
        }
        case 5:
            if (!reduce_cells(o))
                return 0;
            break;
        case 6: /* the root of a deep Reduce */
            if (!ge(SEQ(line_of(h, 1 - h->me, o->t)), o->t))
                return 0;
            reduce_deep_combine(o, deep_of(h, o->t) + 64);
            break;
        case 3: {
            if (!all_ge(h, offsetof(shm_ctl_t, ready), o->t))
                return 0;
            size_t lo, hi;
            slice(o->k, es, h->n, h->me, &lo, &hi);
            char *mine = data_of(h, h->me, o->t) + lo * es;
            for (int r = h->n - 1; r >= 0; r--)
                if (r != h->me && hi > lo)
                    o->kern(data_of(h, r, o->t) + lo * es, mine, hi - lo);
            post(&h->ctl[h->me].red, o->t);
            o->phase = 4;
        }
            /* fallthrough */
        default:
            if (o->out_here) {
                if (!all_ge(h, offsetof(shm_ctl_t, red), o->t))
                    return 0;
                for (int s = 0; s < h->n; s++) {
                    size_t lo, hi;
                    slice(o->k, es, h->n, s, &lo, &hi);
                    memcpy(o->out + (o->off + lo) * es, data_of(h, s, o->t) + lo * es, (hi - lo) * es);
                }
            }
        }
        post(&h->ctl[h->me].done, o->t);
        o->off += o->k;
        o->phase = 0;
        if (o->off >= o->elems)
            return 1;
    }
}

/* The data of an Allgather or Alltoall step t of rank r: buffer t % 2. Every member reads
 * every other's step before it finishes its own, and publishes a step only after it has
 * finished the one before, so a member that writes step t has seen everyone done with
 * t - 2: two buffers serve as four do (step_free checks it all the same, since the step
 * before may have been a Bcast's, whose root waits for nobody), and the data of the calls
 * in flight is half as much. 2 ranks, alternated inside each job: 4 KiB Allgather 0.82x
 * the time with four (43 of 45 rounds), 8 KiB 0.97x (36 of 45), Alltoall 4-8 KiB lower in
 * 34 and 32 of 45 (docs/results/coll.md run 25). */
static char *pair_of(const shm_t *h, int r, uint64_t t) { return data_of(h, r, t & 1); }

/* Where writer w's part for member d lies in its step of an Alltoall: at d in a buffer; in
 * a slot of the line ring (o->line) the n - 1 parts for the others only, so that 2 ranks
 * fit a 48-byte block in one line. */
static size_t move_at(const coll_shm_op_t *o, int w, int d) { return (size_t)(o->line && d > w ? d - 1 : d) * o->part; }

/* Allgather/Alltoall: per step every rank copies its part of each outgoing block in
 * (Alltoall: part bytes per destination), posts ready, copies its own block straight across,
 * then copies out each member's part for it, starting at the next member (everyone reads a
 * different buffer first). A call whose step fits a slot of the line ring (o->line) puts it
 * there, published by the step number in the same line, as small Reduce steps do. */
static int move_run(coll_shm_op_t *o)
{
    shm_t *h = &o->h;
    int n = h->n, me = h->me;
    for (;;) {
        size_t k = RMPI_MIN(o->part, o->bytes - o->off);
        switch (o->phase) {
        case 0:
            o->t = ++h->c->coll_shm_step;
            o->phase = 1;
            /* fallthrough */
        case 1: {
            if (!step_free(h, o->t, o->line == 2 ? SHM_NCELL : o->line ? SHM_NLINE : SHM_NPAIR))
                return 0;
            size_t kin = o->off < o->sb ? RMPI_MIN(k, o->sb - o->off) : 0;
            char *mine = o->line ? line_of(h, me, o->t) + 16 : pair_of(h, me, o->t);
            if (o->line == 2) /* 2 ranks: one frame, the block (for the other) */
                cells_put(h, o->t, o->mv[o->gather ? me : 1 - me].in + o->off, kin, 0);
            else if (o->gather)
                memcpy(mine, o->mv[me].in + o->off, kin);
            else
                for (int d = 0; d < n; d++)
                    if (d != me)
                        memcpy(mine + move_at(o, me, d), o->mv[d].in + o->off, kin);
            if (o->line != 2)
                post(o->line ? SEQ(line_of(h, me, o->t)) : &h->ctl[me].ready, o->t);
            /* in place it is where it belongs already */
            if (o->mv[me].out != o->mv[me].in)
                memcpy(o->mv[me].out + o->off, o->mv[me].in + o->off, kin);
            o->i = 1;
            o->phase = 2;
        }
            /* fallthrough */
        default:
            for (; o->i < n; o->i++) {
                int r = me + o->i < n ? me + o->i : me + o->i - n; /* no division in a poll */
                const char *from;
                if (o->line == 2) {
                    unsigned len;
                    const char *f = cells_get(h, o->t, &len);
                    if (!f)
                        return 0;
                    cells_take(f, o->mv[r].out + o->off, RMPI_MIN(k, len));
                    cells_next(h, len);
                    continue;
                }
                if (o->line) {
                    from = line_of(h, r, o->t);
                    if (!ge(SEQ(from), o->t))
                        return 0;
                    from += 16;
                } else {
                    if (!ge(&h->ctl[r].ready, o->t))
                        return 0;
                    from = pair_of(h, r, o->t);
                }
                memcpy(o->mv[r].out + o->off, from + (o->gather ? 0 : move_at(o, r, me)), k);
            }
            post(&h->ctl[me].done, o->t);
        }
        o->phase = 0;
        o->off += o->part;
        if (o->off >= o->bytes)
            return 1;
    }
}

/* Allgather/Alltoall at a start: outgoing blocks packed (in place: read from the receive
 * blocks, whole, before anything arrives), receive blocks where they go or scratch. */
static void move_begin(coll_shm_op_t *o)
{
    int n = o->h.n, me = o->h.me;
    move_blk_t *mv = o->mv = n <= 4 ? o->mv_few : rmpi_xmalloc((size_t)n * sizeof *mv);
    memset(mv, 0, (size_t)n * sizeof *mv);
    const rmpi_coll_blk_t *sb = o->sblk ? o->sblk : o->rblk;
    for (int r = 0; r < n; r++) {
        mv[r].out = packed_out(o->rblk[r].buf, o->rblk[r].count, o->rblk[r].dt, &mv[r].tout);
        if (!o->gather)
            mv[r].in = packed_in(sb[r].buf, sb[r].count, sb[r].dt, &mv[r].tin);
    }
    if (o->gather) {
        const rmpi_coll_blk_t *mine = o->sblk ? o->sblk : &o->rblk[me];
        mv[me].in = packed_in(mine->buf, mine->count, mine->dt, &mv[me].tin);
    }
    /* a send block larger than the receive blocks does not fit anywhere */
    if (o->sb > o->bytes)
        o->err = MPI_ERR_TRUNCATE;
}

static void move_end(coll_shm_op_t *o)
{
    for (int r = 0; r < o->h.n; r++) {
        packed_done(o->mv[r].tout, o->rblk[r].buf, o->rblk[r].count, o->rblk[r].dt);
        free(o->mv[r].tout);
        free(o->mv[r].tin);
    }
    if (o->mv != o->mv_few)
        free(o->mv);
    o->mv = NULL;
}

/* A start: the input packed now (a persistent call reads the buffer as it is at MPI_Start). */
static void op_begin(coll_shm_op_t *o)
{
    o->next = NULL;
    o->phase = o->err = o->done = 0;
    o->off = o->total = 0;
    o->tin = o->tout = NULL;
    o->in = o->out = NULL;
    if (o->kind == OP_BCAST && o->h.me == o->root) {
        o->in = packed_in(o->buf, o->count, o->dt, &o->tin);
        o->total = o->bytes;
    } else if (o->kind == OP_BCAST) {
        o->two = 0;
        o->out = packed_out(o->buf, o->count, o->dt, &o->tout);
    } else if (o->kind == OP_REDUCE) {
        o->in = packed_in(o->sbuf == MPI_IN_PLACE ? o->buf : o->sbuf, o->count, o->dt, &o->tin);
        o->out = o->out_here ? packed_out(o->buf, o->count, o->dt, &o->tout) : NULL;
    } else if (o->kind == OP_MOVE) {
        move_begin(o);
    }
}

/* A finished op: results unpacked, scratch (only non-contiguous types have any) freed. */
static void op_end(coll_shm_op_t *o)
{
    if (RMPI_UNLIKELY(o->kind == OP_MOVE))
        move_end(o);
    else if (RMPI_UNLIKELY(o->tin || o->tout)) {
        packed_done(o->tout, o->buf, o->count, o->dt);
        free(o->tin);
        free(o->tout);
        o->tin = o->tout = NULL;
    }
    o->done = 1;
}

/* Advance o; 1 when it has finished. */
static int op_run(coll_shm_op_t *o)
{
    if (!(o->kind == OP_BARRIER  ? barrier_run(o)
          : o->kind == OP_BCAST  ? bcast_run(o)
          : o->kind == OP_REDUCE ? reduce_run(o)
                                 : move_run(o)))
        return 0;
    op_end(o);
    return 1;
}

/* Run c's queued calls, oldest first, as far as they go; 1 when the queue is empty.
 * *moved is set when a call took a step or passed a wait. */
static int queue_run(rmpi_comm_t *c, int *moved)
{
    coll_shm_op_t *o;
    while ((o = c->coll_shm_queue)) {
        uint64_t t = o->t;
        int phase = o->phase;
        if (!op_run(o)) {
            *moved |= o->t != t || o->phase != phase;
            break;
        }
        *moved = 1;
        c->coll_shm_queue = o->next;
    }
    return c->coll_shm_queue == NULL;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Before a blocking call takes its steps: the non-blocking ones started before it finish. */
static void queue_drain(rmpi_comm_t *c)
{
    unsigned idle = 0;
    int moved = 0;
    while (!queue_run(c, &moved))
        rmpi_core_wait_step(&idle);
}

/* A blocking call: after the non-blocking ones started before it, polled to its end (a
 * short spin on the flags, then the core's wait step, as wait_ge). Inlined into each
 * blocking entry, which passes its kind's steps (a direct call per poll, no dispatch), with
 * the queue checked in place: a small Bcast's root only writes a line, and the calls
 * around it set how many calls a second it streams to the readers. */
static inline __attribute__((always_inline)) int op_block(coll_shm_op_t *o, int (*steps)(coll_shm_op_t *))
{
    if (RMPI_UNLIKELY(o->h.c->coll_shm_queue != NULL))
        queue_drain(o->h.c);
    op_begin(o);
    unsigned idle = 0, i = 0;
    uint64_t t = 0;
    int phase = 0;
    while (!steps(o)) {
        /* every wait starts its own spin count, as wait_ge's: counted over the whole
         * call, a large one would give the CPU away at every poll after its first waits */
        if (o->t != t || o->phase != phase)
            t = o->t, phase = o->phase, idle = 0, i = 0;
        if (++i >= (unsigned)shm_spin || rmpi_core_hook) { /* as wait_ge */
            i = 0;
            rmpi_core_wait_step(&idle);
        } else
            cpu_relax();
    }
    op_end(o);
    return o->err;
}

/* The op of a call, or NULL when the call does not run here. create: a blocking call,
 * which may make the segment; a non-blocking or persistent one only uses a segment that an
 * earlier blocking call made, since making it is an agreement among the members that
 * would block the call (a rank may start an I* call and then wait for a message that a
 * peer sends only before its own I* call). The segment's state is the same on every
 * member at a given call, as every member makes its calls in the same order. */
static coll_shm_op_t *op_fields(coll_shm_op_t *o, int kind);

static coll_shm_op_t *op_make(coll_shm_op_t *o, rmpi_comm_t *c, int kind, int create)
{
    if ((!create && !rmpi_knobs.COLL_SHM_NB) || !shm_get(c, &o->h, create) ||
        RMPI_UNLIKELY(c->coll_shm_over && kind != OP_BCAST && kind != OP_REDUCE &&
                      !(kind == OP_BARRIER && over_small(0)) && !(create && kind == OP_MOVE)))
        return NULL;
    return op_fields(o, kind);
}

/* The fields every kind reads; the kind's constructor sets its own and op_begin the
 * start's (zeroing all of the op was a tenth of a small blocking call's instructions). */
static coll_shm_op_t *op_fields(coll_shm_op_t *o, int kind)
{
    o->kind = kind;
    o->root = o->out_here = 0;
    o->buf = NULL;
    o->sbuf = NULL;
    o->count = o->bytes = 0;
    o->dt = NULL;
    o->t = 0;
    return o;
}

/* A Bcast op's own fields (o made by op_make, OP_BCAST). */
static void bcast_set(coll_shm_op_t *o, void *buf, size_t count, rmpi_dtype_t *dt, int root)
{
    o->buf = buf, o->count = count, o->dt = dt, o->root = root, o->bytes = dt ? count * dt->size : 0;
    /* oversubscribed: a descheduled reader would stall the root every SHM_NBUF steps */
    o->deep = o->h.c->coll_shm_over && rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_BCAST_DEEP > 0;
}

static coll_shm_op_t *bcast_op(coll_shm_op_t *o, rmpi_comm_t *c, void *buf, size_t count, rmpi_dtype_t *dt, int root,
                               int create)
{
    size_t bytes = dt ? count * dt->size : 0;
    if (rmpi_knobs.COLL_BCAST || bytes >= (size_t)rmpi_knobs.COLL_SHM_BCAST_MAX || !op_make(o, c, OP_BCAST, create))
        return NULL;
    /* oversubscribed: a step of the four buffers (above a line) makes the root wait for the
     * slowest reader every fourth call, which the tree's eager sends do not; from the size
     * where the tree's messages wait for their receiver too, the segment is faster again */
    if (RMPI_UNLIKELY(c->coll_shm_over) && bytes > line_data(&o->h) &&
        bytes < (size_t)rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_BCAST)
        return NULL;
    /* two members that can read each other's memory: in this window the tree's single
     * copy beats copy-in/copy-out, whose two copies only overlap well over more steps */
    if (o->h.n == 2 && c->coll_shm_cma && bytes >= (size_t)rmpi_knobs.COLL_SHM_BCAST_TREE_MIN &&
        bytes < (size_t)rmpi_knobs.COLL_SHM_BCAST_TREE_MAX && !bcast_deep_size(c, bytes))
        return NULL;
    bcast_set(o, buf, count, dt, root);
    coll_note(COLL_BCAST, shm_choice, 0, bytes);
    return o;
}

/* A Reduce-kind op's own fields (o made by op_make, OP_REDUCE). */
static coll_shm_op_t *reduce_set(coll_shm_op_t *o, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt,
                                 MPI_Op op, int root, rmpi_coll_kernel_t kern)
{
    o->sbuf = sbuf, o->buf = rbuf, o->count = count, o->dt = dt, o->op = op, o->root = root;
    o->out_here = root < 0 || o->h.me == root;
    /* the kernels work on the basic elements (a vector of 3 ints: 3 ints per element) */
    o->basic = dt->basic;
    o->kern = kern;
    o->es = dt->basic == dt->handle ? dt->size : rmpi_dtype_get(o->basic)->size;
    o->elems = count * dt->size / o->es;
    return o;
}

/* Whether a non-blocking (or persistent) Reduce of this many bytes runs in single copy
 * (reduce_nb_cma): on 2 ranks with a core each that read each other's memory, from where
 * the blocking call takes single copy in the machine's current state (reduce_single,
 * without a probe, which a non-blocking call cannot run: the state changes only at a probe
 * in a blocking call, so both ranks see the same) and above the deep ring, up to what the
 * root's step buffer holds as scratch. Below RMPI_COLL_SHM_REDUCE_MAX only (from there the
 * tree, reduce_op). Every input is equal on both ranks. */
static int reduce_nb_single(const shm_t *h, size_t bytes, MPI_Op op, int root)
{
    rmpi_comm_t *c = h->c;
    size_t fast = (size_t)rmpi_knobs.COLL_SHM_REDUCE_CMA, slow = (size_t)rmpi_knobs.COLL_SHM_REDUCE_CMA_SLOW;
    if (root < 0 || c->size != 2 || c->coll_shm_over || !c->coll_shm_cma || !rmpi_coll_op_predefined(op) ||
        !rmpi_coll_op_commutative(op) || bytes > h->chunk - 64)
        return 0;
    /* the state decides here: the next blocking Barrier probes it when one is due */
    if (bytes >= RMPI_MIN(fast, slow) && bytes < RMPI_MAX(fast, slow))
        c->coll_shm_nb_state = 1;
    return bytes >= RMPI_MAX(state_slow(c) ? slow : fast, (size_t)rmpi_knobs.COLL_SHM_REDUCE_DEEP);
}

static coll_shm_op_t *reduce_op(coll_shm_op_t *o, rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count,
                                rmpi_dtype_t *dt, MPI_Op op, int root, int create)
{
    /* a predefined op's kernel on the type's basic elements, NULL for user ops: one table
     * read here instead of the op and type look-ups of rmpi_coll_op_apply at every operand
     * (a 2-rank 8 B Reduce's root runs one combine, and the look-ups were a tenth of it) */
    rmpi_coll_kernel_t kern = dt && dt->size ? rmpi_coll_op_kernel(op, dt->basic) : NULL;
    if ((root < 0 ? rmpi_knobs.COLL_ALLREDUCE : rmpi_knobs.COLL_REDUCE) || !kern || !count ||
        !op_make(o, c, OP_REDUCE, create))
        return NULL;
    /* oversubscribed: Reduce (root_whole), up to its own limit; Allreduce below
     * over_small, and blocking from RMPI_COLL_SHM_OVERSUBSCRIBED_ALLREDUCE on, as a Reduce
     * to rank 0 that a Bcast follows (then_bcast, rmpi_coll_shm_reduce): reduced in the
     * shared segment, seed mpi2-layering sec. 3.3 */
    long long max = root < 0                          ? rmpi_knobs.COLL_SHM_ALLREDUCE_MAX
                    : RMPI_UNLIKELY(c->coll_shm_over) ? rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_REDUCE
                                                      : rmpi_knobs.COLL_SHM_REDUCE_MAX;
    size_t bytes = count * dt->size;
    if (bytes >= (size_t)max)
        return NULL;
    if (root < 0 && RMPI_UNLIKELY(c->coll_shm_over) && !over_small(bytes)) {
        long long from = rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_ALLREDUCE;
        if (!create || from <= 0 || bytes < (size_t)from)
            return NULL;
        root = 0;
        o->then_bcast = 1;
    } else
        o->then_bcast = 0;
    /* a blocking call's single copy was decided before (reduce_single) */
    o->cma = !create && reduce_nb_single(&o->h, bytes, op, root);
    coll_note(root < 0 || o->then_bcast ? COLL_ALLREDUCE : COLL_REDUCE, o->cma ? shm_cma_choice : shm_choice, 0, bytes);
    o->prefix = 0;
    return reduce_set(o, sbuf, rbuf, count, dt, op, root, kern);
}

/* Scan on a node of 3 or more ranks, in the segment: each rank publishes its operand in its
 * line (a small step) and combines x_me op ... op x_0 from the lines as soon as their owners
 * have published them, the whole-step Allreduce's combine stopped at its own rank, so no
 * rank waits for a later one and each runs about once per call, where the chain passes a
 * message down each link (4 ranks on 2 cores, 8 B: 0.30 us against the chain's 0.53 and
 * Open MPI's 0.26-0.44, docs/results/coll_rest.md). Whole steps only: up to
 * RMPI_COLL_SHM_SCAN_MAX bytes and, with a CPU per rank, RMPI_COLL_SHM_SMALL (larger steps
 * are sliced over all ranks, which a prefix cannot use). Every input of the choice is equal
 * on all members. */
static coll_shm_op_t *scan_op(coll_shm_op_t *o, rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count,
                              rmpi_dtype_t *dt, MPI_Op op)
{
    rmpi_coll_kernel_t kern = dt && dt->size ? rmpi_coll_op_kernel(op, dt->basic) : NULL;
    size_t bytes = kern ? count * dt->size : 0;
    if (!bytes || c->size < 3 || bytes > (size_t)rmpi_knobs.COLL_SHM_SCAN_MAX || !op_make(o, c, OP_REDUCE, 1) ||
        o->h.cellmax || (!c->coll_shm_over && bytes > (size_t)rmpi_knobs.COLL_SHM_SMALL))
        return NULL;
    coll_note(COLL_SCAN, shm_choice, 0, bytes);
    o->then_bcast = o->cma = 0;
    o->prefix = 1;
    return reduce_set(o, sbuf, rbuf, count, dt, op, -1, kern);
}

static coll_shm_op_t *barrier_op(coll_shm_op_t *o, rmpi_comm_t *c, int create)
{
    if (rmpi_knobs.COLL_BARRIER || !op_make(o, c, OP_BARRIER, create))
        return NULL;
    coll_note(COLL_BARRIER, shm_choice, 0, 0);
    return o;
}

int rmpi_coll_shm_barrier(rmpi_comm_t *c)
{
    coll_shm_op_t o;
    if (!barrier_op(&o, c, 1))
        return RMPI_COLL_SHM_DECLINED;
    /* non-blocking calls whose path depends on the 2-rank state cannot probe it (a probe
     * is a meeting): a blocking Barrier after them does, when one is due. The flag is set
     * by the same calls on both ranks, and the step count after the queue drained is equal,
     * so both probe in the same Barrier (an application of I* calls and Barriers, as OSU's
     * osu_ireduce, would otherwise keep the state the segment was made in). */
    if (RMPI_UNLIKELY(c->coll_shm_nb_state)) {
        queue_drain(c);
        c->coll_shm_nb_state = 0;
        state_due(c, &o.h);
    }
    return op_block(&o, barrier_run);
}

static size_t piece_knob(long long v, const char *name);
static size_t cma_piece(const rmpi_comm_t *c);
static int cma_move(shm_t *h, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int gather, size_t piece);

/* A large Bcast on two ranks with a core each that can read each other's memory: an
 * Allgatherv in single copy whose only non-empty block is the root's (cma_move). The reader
 * claims pieces from the front and reads them, the root claims the same counter and writes
 * them, so the one copy of the vector is split over both CPUs, where the tree's
 * rendezvous leaves all of it to the reader while the root waits, and the segment copies
 * every byte twice (in at the root, out at the reader): the copy through the memory system
 * is the cost (mpi2-layering sec. 3.3). Below RMPI_COLL_SHM_BCAST_CMA the publish-and-
 * finish handshake of every call costs more than half a copy saves. */
/* The 2-rank single-copy Bcast of the root's `bytes` (equal on both: the pieces are cut
 * from it); each rank's own buffer, so a reader's smaller one is a truncation. */
static int bcast_cma_run(shm_t *h, void *buf, size_t count, rmpi_dtype_t *dt, int root, size_t bytes)
{
    coll_note(COLL_BCAST, shm_cma_choice, 0, bytes);
    rmpi_coll_blk_t blk[2] = {{buf, 0, dt}, {buf, 0, dt}};
    blk[root].count = count; /* my own block: the vector at the root, nothing at the other */
    /* at least two pieces, so both take part (2 ranks on 2 cores, 128 KiB: 64 KiB pieces
     * 7.6 us, one piece 14.6; docs/results/coll.md run 22) */
    size_t half = (bytes / 2 + 4095) / 4096 * 4096;
    return cma_move(h, NULL, blk, 1,
                    RMPI_MIN(piece_knob(rmpi_knobs.COLL_SHM_BCAST_CMA_PIECE, "COLL_SHM_BCAST_CMA_PIECE"), half));
}

static int bcast_cma(rmpi_comm_t *c, void *buf, size_t count, rmpi_dtype_t *dt, int root)
{
    shm_t h;
    size_t bytes = dt ? count * dt->size : 0;
    size_t fast = from_knob(rmpi_knobs.COLL_SHM_BCAST_CMA), slow = from_knob(rmpi_knobs.COLL_SHM_BCAST_CMA_SLOW);
    if (c->size != 2 || !bytes || rmpi_knobs.COLL_BCAST || bytes < RMPI_MIN(fast, slow) || bcast_deep_size(c, bytes) ||
        !shm_get(c, &h, 1) || !c->coll_shm_cma || c->coll_shm_over)
        return RMPI_COLL_SHM_DECLINED;
    queue_drain(c);
    if (bytes < state_from(c, &h, bytes, fast, slow))
        return RMPI_COLL_SHM_DECLINED;
    return bcast_cma_run(&h, buf, count, dt, root, bytes);
}

/* Bcast on an oversubscribed node in single copy: in the slow state's window (the
 * segment's bad mode, "the oversubscribed node's state" above), or from
 * RMPI_COLL_SHM_OVERSUBSCRIBED_BCAST_CMA in both states. An Allgatherv in single copy whose
 * only non-empty block is the root's (cma_move): each reader reads the root's buffer with
 * process_vm_readv, and the root writes the vector to a reader that has not claimed it
 * yet, so a descheduled reader's copy is done by whoever runs. Through the segment the
 * root runs ahead of its readers (the deep ring), but every step is lines one rank writes
 * and others read, and in the bad mode every reader's wait hands the CPU to a rank that
 * waits too. Every input of the choice is equal on all members. */
static int bcast_cma_over(rmpi_comm_t *c, void *buf, size_t count, rmpi_dtype_t *dt, int root)
{
    shm_t h;
    size_t bytes = dt ? count * dt->size : 0, all = from_knob(rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_BCAST_CMA);
    int win = bytes < all && over_bcast_window(bytes);
    if (!bytes || rmpi_knobs.COLL_BCAST || (bytes < all && !win) || !shm_get(c, &h, 1) || !c->coll_shm_over ||
        !c->coll_shm_cma)
        return RMPI_COLL_SHM_DECLINED;
    queue_drain(c);
    if (win && !over_pick(&h, root == 0 && bytes >= over_measure_min(OVER_BCAST)))
        return RMPI_COLL_SHM_DECLINED;
    coll_note(COLL_BCAST, shm_cma_choice, 0, bytes);
    rmpi_coll_blk_t few[4], *blk = h.n <= 4 ? few : rmpi_xmalloc((size_t)h.n * sizeof *blk);
    for (int r = 0; r < h.n; r++)
        blk[r] = (rmpi_coll_blk_t){buf, r == root ? count : 0, dt};
    int rc = cma_move(&h, NULL, blk, 1, cma_piece(c));
    if (blk != few)
        free(blk);
    return rc;
}

static int bcast_two(rmpi_comm_t *c, void *buf, size_t count, rmpi_dtype_t *dt, int root);

int rmpi_coll_shm_bcast(rmpi_comm_t *c, void *buf, size_t count, rmpi_dtype_t *dt, int root)
{
    if (c->size == 2) {
        int r2 = bcast_two(c, buf, count, dt, root);
        if (r2 != RMPI_COLL_SHM_DECLINED)
            return r2;
    }
    int rc = bcast_cma(c, buf, count, dt, root);
    if (rc == RMPI_COLL_SHM_DECLINED)
        rc = bcast_cma_over(c, buf, count, dt, root);
    if (rc != RMPI_COLL_SHM_DECLINED)
        return rc;
    coll_shm_op_t o;
    if (!bcast_op(&o, c, buf, count, dt, root, 1))
        return RMPI_COLL_SHM_DECLINED;
    if (c->size == 2 && bcast_halves(c, o.bytes) && !bcast_deep_size(c, o.bytes)) {
        /* halves or one step: the state decides */
        queue_drain(c);
        state_due(c, &o.h);
    }
    if (!over_measures(&o.h, OVER_BCAST, root == 0, over_bcast_window(o.bytes), o.bytes))
        return op_block(&o, bcast_run);
    /* rank 0 roots a Bcast in the window through the segment: the state is measured */
    uint64_t y = rmpi_core_yields, t0 = rmpi_time_ns();
    rc = op_block(&o, bcast_run);
    over_measure(&o.h, OVER_BCAST, o.bytes, rmpi_core_yields - y, rmpi_time_ns() - t0);
    return rc;
}

/* A marker step on this rank's line (after the queue drained): the first step of a Bcast
 * whose total carries a TWO_* bit, which the reader's bcast_run returns with (o->two). */
static void two_mark(shm_t *h, uint64_t mark)
{
    uint64_t t = ++h->c->coll_shm_step;
    unsigned idle = 0;
    while (!step_free(h, t, SHM_NLINE))
        rmpi_core_wait_step(&idle);
    char *l = line_of(h, h->me, t);
    memcpy(l + 8, &mark, sizeof mark);
    post(SEQ(l), t);
    post(&h->ctl[h->me].done, t);
}

/* ---- the 2-rank Bcast: the root's count decides ----
 * Every path of a Bcast used to be chosen by each rank from its own count, so a Bcast
 * whose counts differ (an erroneous call) hung whenever they fell on different paths
 * (1 MiB against 8 B, 20000 against 8000 B), where MPICH and Open MPI report a truncation.
 * On 2 ranks with a core each the root alone decides: its small paths (line frames,
 * cells, the deep ring) go as they did, and the reader's bcast_run takes whatever the
 * root published; above them the root first posts a marker step with its bytes (TWO_BIG),
 * and the reader, having read it, takes the path the root's bytes choose (bcast_two_big:
 * single copy, the message, or the segment's step buffers) with its own buffer, so a
 * count that differs is a truncation there. The state probe of that choice is the root's
 * bytes' too, so both probe in the same call. */
static int bcast_two_big(shm_t *h, void *buf, size_t count, rmpi_dtype_t *dt, int root, size_t bytes)
{
    rmpi_comm_t *c = h->c;
    size_t fast = from_knob(rmpi_knobs.COLL_SHM_BCAST_CMA), slow = from_knob(rmpi_knobs.COLL_SHM_BCAST_CMA_SLOW);
    if (bytes < two_segment_max()) {
        state_due(c, h); /* both know the root's bytes here */
        if (two_segment(c, bytes)) {
            coll_shm_op_t o;
            o.h = *h;
            op_fields(&o, OP_BCAST);
            bcast_set(&o, buf, count, dt, root);
            coll_note(COLL_BCAST, shm_choice, 0, bytes);
            return op_block(&o, bcast_run); /* the deep ring: bcast_deep */
        }
    }
    if (c->coll_shm_cma && bytes >= RMPI_MIN(fast, slow) && bytes >= state_from(c, h, bytes, fast, slow))
        return bcast_cma_run(h, buf, count, dt, root, bytes);
    if (bytes >= (size_t)rmpi_knobs.COLL_SHM_BCAST_MAX ||
        (c->coll_shm_cma && bytes >= (size_t)rmpi_knobs.COLL_SHM_BCAST_TREE_MIN &&
         bytes < (size_t)rmpi_knobs.COLL_SHM_BCAST_TREE_MAX)) {
        /* the tree's one message (its rendezvous a single copy) */
        coll_note(COLL_BCAST, shm_two_msg_choice, 0, bytes);
        int tag = RMPI_NBC_TAG(c->coll_seq), err = 0;
        c->coll_seq++;
        rmpi_coll_blk_t b = {buf, count, dt};
        char *tmp;
        rmpi_req_t *r = coll_msg_start(c, tag, &b, 1 - h->me, h->me == root, &tmp);
        coll_msg_end(r, &b, tmp, &err);
        rmpi_core_throttle();
        return err;
    }
    coll_shm_op_t o;
    o.h = *h;
    op_fields(&o, OP_BCAST);
    bcast_set(&o, buf, count, dt, root);
    coll_note(COLL_BCAST, shm_choice, 0, bytes);
    if (bcast_halves(c, bytes)) /* halves or one step: the state decides */
        state_due(c, h);
    return op_block(&o, bcast_run);
}

static int bcast_two(rmpi_comm_t *c, void *buf, size_t count, rmpi_dtype_t *dt, int root)
{
    coll_shm_op_t o;
    if (rmpi_knobs.COLL_BCAST || !op_make(&o, c, OP_BCAST, 1) || c->coll_shm_over)
        return RMPI_COLL_SHM_DECLINED;
    bcast_set(&o, buf, count, dt, root);
    shm_t *h = &o.h;
    size_t bytes = o.bytes;
    if (h->me == root && bytes > rooted_max(h) && !bcast_deep_size(c, bytes)) {
        queue_drain(c);
        two_mark(h, TWO_BIG | bytes);
        return bcast_two_big(h, buf, count, dt, root, bytes);
    }
    if (h->me == root)
        coll_note(COLL_BCAST, shm_choice, 0, bytes);
    int rc = op_block(&o, bcast_run);
    if (h->me == root || !o.two)
        return rc;
    if (o.two != TWO_BIG_PATH) /* a Gather's or Scatter's marker: not this call's */
        return MPI_ERR_TRUNCATE;
    return bcast_two_big(h, buf, count, dt, root, o.total);
}

/* One block from `writer` to the other rank of a 2-rank communicator with a core each (the
 * 2-rank Gather and Scatter, coll/gather.c): a Bcast through the segment below
 * RMPI_COLL_SHM_BCAST_DEEP bytes, or below RMPI_COLL_SHM_TWO_SEGMENT while two_choose keeps
 * the segment (line frames, cells, the deep ring; each call timed alone, inside one job,
 * Gather 1 MiB 40.5 us against 76.1, Scatter 1 MiB 35.5 against 101.2), where the writer
 * goes on once it wrote; from there a marker step (one line on the writer's ring: the
 * path and the writer's bytes) and then the block in single copy (*path RMPI_COLL_TWO_CMA,
 * from cma_min bytes on ranks that agreed on cross-memory attach: rmpi_coll_shm_two_cma) or as a point-to-point message (RMPI_COLL_TWO_P2P), which the
 * caller then runs with *wbytes, the writer's bytes, on both ranks. Only the writer's size
 * decides: the reader always runs the Bcast's reader, which takes the data or the marker,
 * so counts that differ (an erroneous call) end in a truncation error, never in the two
 * ranks waiting in different places. Declined alike on both ranks (the communicator's
 * size, its segment). */
int rmpi_coll_shm_two_move(rmpi_comm_t *c, void *buf, size_t count, rmpi_dtype_t *dt, int writer, size_t cma_min,
                           int *path, size_t *wbytes)
{
    coll_shm_op_t o;
    *path = 0;
    if (c->size != 2 || !op_make(&o, c, OP_BCAST, 1) || c->coll_shm_over)
        return RMPI_COLL_SHM_DECLINED;
    bcast_set(&o, buf, count, dt, writer);
    shm_t *h = &o.h;
    if (h->me == writer && o.bytes >= (size_t)rmpi_knobs.COLL_SHM_BCAST_DEEP && !two_segment(c, o.bytes)) {
        queue_drain(c);
        int cma = c->coll_shm_cma && o.bytes >= cma_min;
        two_mark(h, (cma ? TWO_CMA : TWO_P2P) | o.bytes);
        *path = cma ? RMPI_COLL_TWO_CMA : RMPI_COLL_TWO_P2P;
        *wbytes = o.bytes;
        return MPI_SUCCESS;
    }
    int rc = op_block(&o, bcast_run);
    if (o.two && h->me != writer) {
        *path = o.two;
        *wbytes = o.total;
    }
    return rc;
}

/* The single copy of a 2-rank move (RMPI_COLL_TWO_CMA): the Alltoallv of the two ranks'
 * blocks (each rank's send[d] to d, recv[d] from d; the root's own block from itself to
 * itself), every member's piece size from the writer's bytes, so both cut alike. The root
 * copies its own block while the other rank takes pieces of the moved one. */
int rmpi_coll_shm_two_cma(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, size_t wbytes)
{
    shm_t h;
    if (!shm_get(c, &h, 1))
        return MPI_ERR_INTERN; /* the marker's writer had it: not reached */
    size_t half = (wbytes / 2 + 4095) / 4096 * 4096;
    size_t piece = piece_knob(rmpi_knobs.COLL_SHM_BCAST_CMA_PIECE, "COLL_SHM_BCAST_CMA_PIECE");
    return cma_move(&h, send, recv, 0, RMPI_MAX(RMPI_MIN(piece, half), (size_t)4096));
}

/* A Reduce or Allreduce that measures the state (over_measures): every member posts that it is in the
 * call and rank 0 waits for all of them before it counts, so that only the waits of the
 * bad mode (operands that members in the call publish late, the root yielding to a rank
 * that waits for it) are counted, not those for a member that has not reached the call.
 * Each call timed alone after a Barrier (OSU's way), rank 0 leaves the Barrier first
 * (barrier_run) and waited for the others' arrival in every call: 4 ranks on 2 cores,
 * whole jobs counted the slow state and took single copy, Reduce 256 KiB 71-97 us against
 * the segment's 11 inside one job, Allreduce 1 MiB 399 against 169 (docs/results/
 * coll_rest.md, "The oversubscribed Barrier"). */
static void reduce_arrived(shm_t *h)
{
    queue_drain(h->c);
    uint64_t t = h->c->coll_shm_step + 1; /* the call's first step, equal on all members */
    if (h->me) {
        post(&h->ctl[h->me].arrive, t);
        return;
    }
    for (int r = 1; r < h->n; r++)
        wait_ge(&h->ctl[r].arrive, t);
}

static int reduce_single(rmpi_comm_t *c, shm_t *h, size_t count, const rmpi_dtype_t *dt, MPI_Op op, int root);
static int reduce_cma(shm_t *h, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt, MPI_Op op, int root);
static int reduce_cma_all(shm_t *h, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt, MPI_Op op, int root);
static int reduce_cma_split(shm_t *h, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt, MPI_Op op,
                            int root);

static int allreduce_single(rmpi_comm_t *c, shm_t *h, size_t count, const rmpi_dtype_t *dt, MPI_Op op);
static int allreduce_two(rmpi_comm_t *c, shm_t *h, size_t count, const rmpi_dtype_t *dt, MPI_Op op);
static int reduce_scatter_two(rmpi_comm_t *c, const void *sbuf, void *rbuf, const size_t *counts, size_t total,
                              const rmpi_dtype_t *dt, MPI_Op op);

int rmpi_coll_shm_reduce(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt, MPI_Op op,
                         int root)
{
    coll_shm_op_t o;
    if (root < 0 && (allreduce_single(c, &o.h, count, dt, op) || allreduce_two(c, &o.h, count, dt, op)))
        /* reduce_cma_split with no root */
        return reduce_cma_split(&o.h, sbuf, rbuf, count, dt, op, -1);
    if (root >= 0 && reduce_single(c, &o.h, count, dt, op, root))
        return (!c->coll_shm_over ? reduce_cma
                : count * dt->size >= (size_t)rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA_SPLIT
                    ? reduce_cma_split
                    : reduce_cma_all)(&o.h, sbuf, rbuf, count, dt, op, root);
    if (!reduce_op(&o, c, sbuf, rbuf, count, dt, op, root, 1))
        return RMPI_COLL_SHM_DECLINED;
    /* the Reduce half of then_bcast in single copy as a Reduce's (reduce_single; the
     * members' inputs stay untouched until rank 0 posted that it read them all) */
    size_t bytes = count * dt->size;
    if (!o.then_bcast &&
        over_measures(&o.h, OVER_REDUCE, root == 0, over_window(bytes) && rmpi_coll_op_commutative(op), bytes)) {
        /* rank 0 roots a Reduce in the window through the segment: the state is measured */
        reduce_arrived(&o.h);
        uint64_t y = rmpi_core_yields, t0 = rmpi_time_ns();
        int rc = op_block(&o, reduce_run);
        over_measure(&o.h, OVER_REDUCE, bytes, rmpi_core_yields - y, rmpi_time_ns() - t0);
        return rc;
    }
    /* an Allreduce in its window through the segment: rank 0 measures the state (both halves) */
    int ar_measure = o.then_bcast && over_measures(&o.h, OVER_ALLREDUCE, 1,
                                                   over_allreduce_window(bytes) && rmpi_coll_op_commutative(op), bytes);
    if (ar_measure)
        reduce_arrived(&o.h);
    uint64_t ar_y = rmpi_core_yields, ar_t0 = ar_measure ? rmpi_time_ns() : 0;
    int rc = o.then_bcast && c->coll_shm_cma && rmpi_coll_op_commutative(op) &&
                     bytes >= from_knob(rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA)
                 ? (queue_drain(c), reduce_cma_all(&o.h, sbuf, rbuf, count, dt, op, 0))
                 : op_block(&o, reduce_run);
    if (!o.then_bcast)
        return rc;
    /* Allreduce on an oversubscribed node: rank 0 combined every operand whole as each
     * owner ran (no step waited for all members, as the sliced steps do); now it streams
     * the result through the deep ring, whose readers wait for it alone. Every member
     * takes both steps whatever rc (all count the same steps); the Bcast cannot fail. */
    o.kind = OP_BCAST;
    bcast_set(&o, rbuf, count, dt, 0);
    int rb = op_block(&o, bcast_run);
    if (ar_measure)
        over_measure(&o.h, OVER_ALLREDUCE, bytes, rmpi_core_yields - ar_y, rmpi_time_ns() - ar_t0);
    return rc ? rc : rb;
}

/* Reduce_scatter of a short vector: the shm Allreduce of it into scratch, then this rank's
 * part copied out. Every rank decides alike: the total and the type are the same on all
 * (the counts are), and the Allreduce declines alike. In place, the input is rbuf. */
int rmpi_coll_shm_reduce_scatter(rmpi_comm_t *c, const void *sbuf, void *rbuf, const size_t *counts, size_t total,
                                 rmpi_dtype_t *dt, MPI_Op op)
{
    size_t bytes = total * dt->size;
    int two = reduce_scatter_two(c, sbuf, rbuf, counts, total, dt, op);
    if (two != RMPI_COLL_SHM_DECLINED)
        return two;
    /* 2 ranks: recursive halving is one exchange of half the vector, and the Allreduce won
     * only for the shortest (16 and 128 B total: 0.22-0.26 and 0.35 us against 0.41-0.52;
     * 1-4 KiB slower, 0.78-1.49 against 0.65-1.18) */
    /* one byte range of plain elements (not the padded pair types, whose size is not their
     * extent), so the scratch holds the vector as bytes and a part starts at its bytes */
    if (c->inter || rmpi_knobs.COLL_REDUCE_SCATTER || dt->basic != dt->handle || !dt->contig || dt->true_lb || !bytes ||
        bytes >= (size_t)rmpi_knobs.COLL_SHM_REDUCE_SCATTER_MAX || (c->size == 2 && bytes > 128))
        return RMPI_COLL_SHM_DECLINED;
    char tmp[4096], *t = bytes <= sizeof tmp ? tmp : rmpi_xmalloc(bytes);
    int rc = rmpi_coll_shm_reduce(c, sbuf == MPI_IN_PLACE ? rbuf : sbuf, t, total, dt, op, -1);
    if (rc != RMPI_COLL_SHM_DECLINED && counts[c->rank]) { /* a rank with no part may name no buffer */
        size_t at = 0;
        for (int i = 0; i < c->rank; i++)
            at += counts[i];
        memcpy(rbuf, t + at * dt->size, counts[c->rank] * dt->size);
    }
    if (t != tmp)
        free(t);
    return rc;
}

/* Scan on 2 ranks is a Reduce to rank 1 (every path here combines rank 0's operand on the
 * left, and only predefined ops are taken) with rank 0's own input as its result: the
 * Reduce's single copy and segment paths instead of the chain's message, receive buffer and
 * combine (1 MiB: 374 us against Open MPI's 232 before). Rank 0 copies its input after the
 * Reduce, so rank 1 does not wait for that copy (copying first was no faster at 8 B-4 MiB,
 * 2 ranks: the split Reduce hands the late rank fewer pieces). In place on rank 0 the input
 * is the result already. On 3 or more ranks a short vector is scan_op's. */
int rmpi_coll_shm_scan(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt, MPI_Op op)
{
    if (c->inter || rmpi_knobs.COLL_SCAN)
        return RMPI_COLL_SHM_DECLINED;
    if (c->size > 2) {
        coll_shm_op_t o;
        return scan_op(&o, c, sbuf, rbuf, count, dt, op) ? op_block(&o, reduce_run) : RMPI_COLL_SHM_DECLINED;
    }
    const void *in = sbuf == MPI_IN_PLACE && c->rank == 0 ? rbuf : sbuf;
    int rc = rmpi_coll_shm_reduce(c, in, rbuf, count, dt, op, 1);
    if (rc == RMPI_COLL_SHM_DECLINED || c->rank != 0 || sbuf == MPI_IN_PLACE)
        return rc;
    void *tin = NULL, *tout = NULL;
    const char *p = packed_in(sbuf, count, dt, &tin);
    memcpy(packed_out(rbuf, count, dt, &tout), p, count * dt->size);
    packed_done(tout, rbuf, count, dt);
    free(tin);
    free(tout);
    return rc;
}

/* Non-blocking and persistent: a schedule of one step, the op (nbc.c starts and polls it,
 * and frees it with the schedule); the op holds the datatype and operation as long. */
static rmpi_nbc_t *op_sched(rmpi_comm_t *c, const coll_shm_op_t *o)
{
    if (!o)
        return NULL;
    coll_shm_op_t *p = rmpi_xmalloc(sizeof *p);
    *p = *o;
    if (p->dt)
        rmpi_dtype_retain(p->dt);
    if (p->kind == OP_REDUCE)
        rmpi_coll_op_retain(p->op);
    rmpi_nbc_t *s = rmpi_nbc_new(c);
    rmpi_nbc_shm(s, p);
    return s;
}

rmpi_nbc_t *rmpi_coll_shm_barrier_sched(rmpi_comm_t *c)
{
    coll_shm_op_t o;
    return op_sched(c, barrier_op(&o, c, 0));
}

rmpi_nbc_t *rmpi_coll_shm_bcast_sched(rmpi_comm_t *c, void *buf, size_t count, rmpi_dtype_t *dt, int root)
{
    coll_shm_op_t o;
    return op_sched(c, bcast_op(&o, c, buf, count, dt, root, 0));
}

rmpi_nbc_t *rmpi_coll_shm_reduce_sched(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt,
                                       MPI_Op op, int root)
{
    coll_shm_op_t o;
    return op_sched(c, reduce_op(&o, c, sbuf, rbuf, count, dt, op, root, 0));
}

void coll_shm_op_start(coll_shm_op_t *o)
{
    op_begin(o);
    coll_shm_op_t **p = (coll_shm_op_t **)&o->h.c->coll_shm_queue;
    while (*p)
        p = &(*p)->next;
    *p = o;
}

int coll_shm_op_test(coll_shm_op_t *o, int *err, int *moved)
{
    if (!o->done)
        queue_run(o->h.c, moved);
    *err = o->err;
    return o->done;
}

/* What blk_dup made (b may be NULL: in place). */
static void blk_release(const rmpi_coll_blk_t *b, int n)
{
    for (int i = 0; b && i < n; i++)
        if (b[i].dt)
            rmpi_dtype_release(b[i].dt);
    free((void *)b);
}

void coll_shm_op_free(coll_shm_op_t *o)
{
    if (o->dt)
        rmpi_dtype_release(o->dt);
    if (o->kind == OP_REDUCE)
        rmpi_coll_op_release(o->op);
    if (o->kind == OP_MOVE && o->own) {
        blk_release(o->sblk, o->gather ? 1 : o->h.n);
        blk_release(o->rblk, o->h.n);
    }
    free(o);
}

/* ---- Allgather, Alltoall (regular forms) ---- */

/* Packed bytes of block b. */
static size_t blk_bytes(const rmpi_coll_blk_t *b) { return b->dt ? b->count * b->dt->size : 0; }

static int cma_move(shm_t *h, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int gather, size_t piece);

/* Which way a data-movement call goes: 1 single copy, 0 through the segment, -1 declined.
 * Single copy when forced (the v and w forms) or from size bytes (Allgather: the total;
 * Alltoall: a block) on, the threshold fast's or, in the slow state, slow's (state_from);
 * through: the segment may take it otherwise. */
static int movement_way(rmpi_comm_t *c, shm_t *h, int force, size_t size, size_t fast, size_t slow, int regular,
                        size_t max, size_t bb)
{
    int single = force || size >= RMPI_MIN(fast, slow), through = regular && bb < max;
    int two = regular && !force && c->size == 2 && bb < two_segment_max();
    if (!(single || through || two) || !shm_get(c, h, 1))
        return -1;
    if (RMPI_UNLIKELY(c->coll_shm_over))
        single = force || size >= fast; /* no state there (state_from) */
    if (RMPI_UNLIKELY(c->coll_shm_over) && !(single && c->coll_shm_cma)) {
        if (!through || !over_small(bb))
            return -1;
        single = 0;
    }
    queue_drain(c);
    if (two && !c->coll_shm_over) { /* 2 ranks with a core each: the state and two_choose decide first */
        state_due(c, h);
        if (two_segment(c, bb))
            return 0;
    }
    if (single && c->coll_shm_cma && (force || size >= state_from(c, h, size, fast, slow)))
        return 1;
    return through ? 0 : -1;
}

/* Whether an Allgather (gather) or Alltoall of blocks of bb bytes is one step in a slot of
 * the line ring (1: its block, or its n - 1 outgoing blocks, within RMPI_COLL_SHM_MOVE_LINE
 * and a slot's data) or, on 2 ranks, above a slot's data, in a frame of the cell rings (2:
 * within RMPI_COLL_SHM_CELLS): each reader then waits on the line it reads, one cache miss
 * where the control line's flag and the step buffer's data cost two. Blocks of a slot keep
 * it: both ranks write and read each step, so frames sharing lines save nothing there (2
 * ranks, 8-32 B: even in the slow state, 3-6% slower in the fast one; docs/results/coll.md
 * run 28). Equal on every member (sizes by the signature rule, the knobs, the layout). */
static int move_line(const shm_t *h, size_t bb, int gather)
{
    size_t need = gather ? bb : bb * (size_t)(h->n - 1);
    if (!bb || need > (size_t)rmpi_knobs.COLL_SHM_MOVE_LINE)
        return 0;
    return need <= line_data(h) ? 1 : need <= h->cellmax ? 2 : 0;
}

/* The op of an Allgather (gather) or Alltoall through the segment, or NULL (no segment, or
 * Alltoall parts under 64 bytes: 64 ranks with 4 KiB steps; every member sees the same).
 * view: the segment's view that a blocking call's movement_way already took (so the op
 * need not look the segment up again: its checks passed there), or NULL. */
static coll_shm_op_t *move_op(coll_shm_op_t *o, rmpi_comm_t *c, const rmpi_coll_blk_t *send,
                              const rmpi_coll_blk_t *recv, int gather, int create, const shm_t *view)
{
    if (view) {
        o->h = *view;
        op_fields(o, OP_MOVE);
    } else if (!op_make(o, c, OP_MOVE, create))
        return NULL;
    size_t bb = blk_bytes(&recv[0]), cap = o->h.chunk - 64;
    o->part = gather ? cap : cap / (size_t)o->h.n / 64 * 64;
    if (!o->part)
        return NULL;
    o->line = move_line(&o->h, bb, gather);
    if (o->line)
        o->part = bb;
    o->gather = gather, o->own = 0, o->sblk = send, o->rblk = recv, o->mv = NULL;
    o->bytes = bb;
    o->sb = send ? blk_bytes(&send[0]) : bb;
    coll_note(gather ? COLL_CALL_ALLGATHER : COLL_CALL_ALLTOALL, shm_choice, 0, gather ? bb * (size_t)o->h.n : bb);
    return o;
}

/* A copy of n blocks whose datatypes stay alive with it (blk_release). */
static rmpi_coll_blk_t *blk_dup(const rmpi_coll_blk_t *b, int n)
{
    rmpi_coll_blk_t *d = rmpi_xmalloc((size_t)n * sizeof *d);
    memcpy(d, b, (size_t)n * sizeof *d);
    for (int i = 0; i < n; i++)
        if (d[i].dt)
            rmpi_dtype_retain(d[i].dt);
    return d;
}

/* The blocking Allgather's or Alltoall's path (way from movement_way), timed for
 * two_choose where it measures. */
static int move_timed(rmpi_comm_t *c, shm_t *h, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int gather,
                      int way, int regular, size_t bb);

int rmpi_coll_shm_allgather(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int form)
{
    shm_t h;
    if (c->inter || (form != RMPI_COLL_REGULAR ? rmpi_knobs.COLL_ALLGATHERV : rmpi_knobs.COLL_ALLGATHER))
        return RMPI_COLL_SHM_DECLINED;
    /* the total is equal on every member (recvcounts are), so all choose alike */
    size_t bb = blk_bytes(&recv[0]), total = 0;
    for (int r = 0; r < c->size; r++)
        total += blk_bytes(&recv[r]);
    size_t n = (size_t)c->size;
    int way = movement_way(c, &h, 0, total, n * (size_t)rmpi_knobs.COLL_SHM_ALLGATHER_CMA,
                           n * (size_t)rmpi_knobs.COLL_SHM_ALLGATHER_CMA_SLOW, form == RMPI_COLL_REGULAR,
                           (size_t)rmpi_knobs.COLL_SHM_ALLGATHER_MAX, bb);
    if (way < 0)
        return RMPI_COLL_SHM_DECLINED;
    return move_timed(c, &h, send, recv, 1, way, form == RMPI_COLL_REGULAR, bb);
}

int rmpi_coll_shm_alltoall(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int form)
{
    shm_t h;
    if (c->inter || (form != RMPI_COLL_REGULAR ? rmpi_knobs.COLL_ALLTOALLV : rmpi_knobs.COLL_ALLTOALL))
        return RMPI_COLL_SHM_DECLINED;
    /* v and w forms: block sizes differ per rank, so no size can decide alike everywhere;
     * they take single copy whenever every member can */
    size_t bb = blk_bytes(&recv[0]);
    int way = movement_way(c, &h, form != RMPI_COLL_REGULAR, bb, (size_t)rmpi_knobs.COLL_SHM_ALLTOALL_CMA,
                           (size_t)rmpi_knobs.COLL_SHM_ALLTOALL_CMA_SLOW, form == RMPI_COLL_REGULAR,
                           (size_t)rmpi_knobs.COLL_SHM_ALLTOALL_MAX, bb);
    if (way < 0)
        return RMPI_COLL_SHM_DECLINED;
    return move_timed(c, &h, send, recv, 0, way, form == RMPI_COLL_REGULAR, bb);
}

static int move_timed(rmpi_comm_t *c, shm_t *h, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int gather,
                      int way, int regular, size_t bb)
{
    int measure = two_measures(c, h, regular, bb), rc;
    uint64_t t0 = measure ? rmpi_time_ns() : 0;
    if (way) {
        coll_note(gather ? COLL_CALL_ALLGATHER : COLL_CALL_ALLTOALL, shm_cma_choice, 0,
                  gather ? bb * (size_t)h->n : bb);
        rc = cma_move(h, send, recv, gather, cma_piece(c));
    } else {
        coll_shm_op_t o;
        rc = move_op(&o, c, send, recv, gather, 1, h) ? op_block(&o, move_run) : RMPI_COLL_SHM_DECLINED;
    }
    if (measure)
        two_note(c, way, rmpi_time_ns() - t0, bb);
    return rc;
}

/* Iallgather, Ialltoall and their *_init forms through the segment, under the blocking
 * calls' rules for it (regular form, a block below the kind's RMPI_COLL_SHM_*_MAX, the
 * segment made by an earlier blocking call). Single copy stays with the blocking calls: a
 * rank there moves a late peer's pieces itself, a wait the progress engine cannot split. */
static rmpi_nbc_t *move_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int form,
                              int gather)
{
    coll_shm_op_t o;
    size_t bb = blk_bytes(&recv[0]);
    if (c->inter || form != RMPI_COLL_REGULAR || (gather ? rmpi_knobs.COLL_ALLGATHER : rmpi_knobs.COLL_ALLTOALL) ||
        bb >= (size_t)(gather ? rmpi_knobs.COLL_SHM_ALLGATHER_MAX : rmpi_knobs.COLL_SHM_ALLTOALL_MAX) ||
        !move_op(&o, c, send, recv, gather, 0, NULL))
        return NULL;
    /* the caller's block arrays live only as long as the call */
    o.sblk = send ? blk_dup(send, gather ? 1 : o.h.n) : NULL;
    o.rblk = blk_dup(recv, o.h.n);
    o.own = 1;
    return op_sched(c, &o);
}

rmpi_nbc_t *rmpi_coll_shm_allgather_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv,
                                          int form)
{
    return move_sched(c, send, recv, form, 1);
}

rmpi_nbc_t *rmpi_coll_shm_alltoall_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv,
                                         int form)
{
    return move_sched(c, send, recv, form, 0);
}

/* ---- single copy (cross-memory attach) ----
 * Large Allgather and Alltoall blocks go straight from the sender's buffer to the
 * receiver's with one process_vm_readv/writev (rt's rmpi_cma_copy), where the segment costs
 * a copy in and a copy out. Each rank publishes, in its step buffer, one entry per member:
 * where its block for that member lies, where the block from that member goes, and for the
 * pair (me -> member) a claim and a finish counter. A pair's bytes are cut into pieces
 * (cma_piece), and either end may claim the next piece: the receiver reads it (readv, the faster
 * of the two here), the sender writes it (writev) once it has read everything it receives.
 * So when one rank is late (descheduled on a loaded node, still copying its own block), the
 * other moves the pieces between them instead of waiting; only a rank's own block is copied
 * by itself alone. A rank returns when every piece of the pairs it is in has finished:
 * nothing reads or writes its buffers after that. */

/* Bytes per claimed piece (RMPI_COLL_SHM_CMA_PIECE; 0, the default: a whole block with a
 * core per rank, 1 MiB pieces on an oversubscribed node). Each piece costs a system call
 * and a claim on a line both ranks write: 2 ranks on 2 cores moved 512 KiB-4 MiB blocks
 * faster whole than in 256 KiB pieces (docs/results/coll.md run 23). Where ranks outnumber
 * cores, a rank that is ahead takes over a descheduled peer's block in parts: 4 ranks on 2
 * cores were not faster with whole 1 MiB Allgather blocks (run 23), but 1 MiB pieces beat
 * 256 KiB ones at 512 KiB-1 MiB blocks, both ways alternated inside each job (Allgather
 * 512 KiB 0.95x in 21 of 24 rounds, Alltoall 1 MiB in 30 of 40; 2-4 MiB even; run 25).
 * Equal on all members (the same environment and node): both ends of a pair count its
 * pieces. */
static size_t piece_knob(long long v, const char *name)
{
    if (v < 4096)
        rmpi_fatal("RMPI_%s=%lld: expected at least 4k bytes.", name, v);
    return (size_t)v;
}

static size_t cma_piece(const rmpi_comm_t *c)
{
    long long v = rmpi_knobs.COLL_SHM_CMA_PIECE;
    return v ? piece_knob(v, "COLL_SHM_CMA_PIECE") : c->coll_shm_over ? 1024 * 1024 : SIZE_MAX;
}

typedef struct cma_ent {
    uint64_t saddr, slen;        /* my block for this member (packed) */
    uint64_t raddr, rcap;        /* where its block to me goes (packed) */
    _Atomic uint64_t claim, fin; /* pair me -> member: pieces claimed, pieces copied */
    uint64_t inl;                /* 1: my block for it is in my step buffer (cma_inline) */
} cma_ent_t;
/* 64 ranks x 56 bytes fit a step buffer of the smallest RMPI_COLL_SHM_CHUNK (4k - 64). */
_Static_assert(SHM_MAX_RANKS * sizeof(cma_ent_t) <= 4096 - 64, "single-copy table exceeds a step buffer");

/* At the segment's first use: whether every member can read and write every other's memory.
 * Each rank reads a known word of each other rank and writes one; the answers are combined
 * through the control lines, so all members decide alike (a refusal seen by one rank only,
 * under a ptrace or seccomp policy of its own, turns single copy off for all). */
static int cma_agree(shm_t *h)
{
    static const uint64_t probe = 0x31414d4349504d52ull; /* "RMPICMA1" */
    static uint64_t sink; /* what the others write (the same value, so their races are harmless) */
    shm_ctl_t *mine = &h->ctl[h->me];
    mine->pid = (int32_t)getpid();
    mine->probe = (uintptr_t)&probe;
    mine->sink = (uintptr_t)&sink;
    uint64_t t = step_begin(h, SHM_NLINE);
    post(&mine->ready, t);
    int ok = rmpi_knobs.SHM_CMA != RMPI_SHM_CMA_OFF;
    for (int i = 1; i < h->n && ok; i++) {
        int r = (h->me + i) % h->n, wr = rmpi_comm_world_rank(h->c, r);
        uint64_t v = 0, w = probe;
        wait_ge(&h->ctl[r].ready, t);
        ok = rmpi_cma_copy(h->ctl[r].pid, &v, sizeof v, h->ctl[r].probe, 0, wr) == 0 && v == probe &&
             rmpi_cma_copy(h->ctl[r].pid, &w, sizeof w, h->ctl[r].sink, 1, wr) == 0;
    }
    mine->cma = ok;
    post(&mine->red, t);
    int all = 1;
    for (int r = 0; r < h->n; r++) {
        wait_ge(&h->ctl[r].red, t);
        all = all && h->ctl[r].cma;
    }
    post(&mine->done, t);
    if (!all && rmpi_knobs.SHM_CMA != RMPI_SHM_CMA_OFF)
        rmpi_log(1,
                 "rank %d: a member of a communicator of %d ranks cannot read another's memory; its "
                 "Allgather and Alltoall copy through shared memory.",
                 rmpi_comm_world_rank(h->c, h->me), h->n);
    return all;
}

static cma_ent_t *cma_table(const shm_t *h, int r, uint64_t t) { return (cma_ent_t *)(void *)data_of(h, r, t); }

/* Small blocks travel in the sender's step buffer, after its table: a memcpy there and one
 * by the reader cost less than a process_vm_readv (Alltoallv, always single copy since no
 * size decides alike on every rank, took 1.6 us for 8-byte blocks on 2 ranks against Open
 * MPI's 0.41). The sender decides per block (its size is all it needs) and says so in the
 * block's entry. Each member has a slot of cma_inline_max bytes (at most CMA_INLINE), the
 * one block of an Allgather slot 0. 4 KiB: 2 ranks, Alltoallv 4 KiB blocks 1.27-1.31 us
 * inline against 1.59-1.64 by process_vm_readv, alternated builds; 8 KiB inline was slower
 * (2.2-2.4 against 1.8). */
#define CMA_INLINE 4096
static size_t cma_inline_at(const shm_t *h) { return ((size_t)h->n * sizeof(cma_ent_t) + 63) / 64 * 64; }
static size_t cma_inline_max(const shm_t *h)
{
    size_t room = h->chunk - 64 - cma_inline_at(h);
    return RMPI_MIN((size_t)CMA_INLINE, room / (size_t)h->n / 64 * 64);
}
static char *cma_inline_of(const shm_t *h, int r, uint64_t t, int slot)
{
    return data_of(h, r, t) + cma_inline_at(h) + (size_t)slot * cma_inline_max(h);
}

/* Claim the next of np pieces on a claim counter: its number, or -1 when all are taken. */
static int64_t cma_claim(_Atomic uint64_t *claim, uint64_t np)
{
    uint64_t c = atomic_load_explicit(claim, memory_order_relaxed);
    while (c < np)
        if (atomic_compare_exchange_weak_explicit(claim, &c, c + 1, memory_order_relaxed, memory_order_relaxed))
            return (int64_t)c;
    return -1;
}

/* One cross-memory copy with a peer (write: local -> peer). A refusal here, after the
 * members agreed that single copy works (cma_agree), is a policy changed mid-run. */
static void cma_copy(const shm_t *h, int peer, void *local, size_t k, uint64_t remote, int write)
{
    int rc = rmpi_cma_copy(h->ctl[peer].pid, local, k, remote, write, rmpi_comm_world_rank(h->c, peer));
    if (rc)
        rmpi_fatal("rank %d: %s %zu bytes of rank %d's buffer in a collective failed (%s) after cross-memory "
                   "attach had worked on this communicator; set RMPI_SHM_CMA=off to copy through shared memory.",
                   rmpi_comm_world_rank(h->c, h->me), write ? "writing" : "reading", k,
                   rmpi_comm_world_rank(h->c, peer), rc == RMPI_CMA_REFUSED ? "refused" : strerror(-rc));
}

static uint64_t cma_npieces(const cma_ent_t *e, const cma_ent_t *to, size_t piece)
{
    uint64_t len = RMPI_MIN(e->slen, to->rcap);
    return len ? (len - 1) / piece + 1 : 0; /* piece may be SIZE_MAX (whole blocks) */
}

/* Move the pieces of pair (src -> dst) that this rank can claim; it is src (writes) or dst
 * (reads). e: the pair's entry in src's table; to: dst's entry for src. */
static void cma_pieces(const shm_t *h, int peer, uint64_t t, cma_ent_t *e, const cma_ent_t *to, int write, size_t piece)
{
    size_t len = (size_t)RMPI_MIN(e->slen, to->rcap);
    uint64_t np = cma_npieces(e, to, piece);
    int64_t j;
    if (e->inl) { /* in the sender's step buffer: the reader alone copies it, nothing to claim */
        if (!write)
            memcpy((void *)(uintptr_t)to->raddr, cma_inline_of(h, peer, t, (int)e->inl - 1), len);
        return;
    }
    while ((j = cma_claim(&e->claim, np)) >= 0) {
        size_t off = (size_t)j * piece, k = RMPI_MIN(piece, len - off);
        void *local = (void *)(uintptr_t)((write ? e->saddr : to->raddr) + off);
        cma_copy(h, peer, local, k, (write ? to->raddr : e->saddr) + off, write);
        atomic_fetch_add_explicit(&e->fin, 1, memory_order_release);
    }
}

/* n bytes from s to d with non-temporal stores (SSE2 streams: write-combined, not read
 * into the cache first and not left in it), for a rank's own block of a large single-copy
 * call (RMPI_COLL_SHM_CMA_NT): once the buffers of the call no longer fit the L3 (2 ranks:
 * Alltoall 4 MiB blocks, 16 MiB of send and receive buffers a rank, 32 MiB for both ranks,
 * this machine's L3), a cached copy reads every destination line first and evicts lines
 * the peer's read still needs; where they fit (Alltoall 2-3 MiB, Allgather 4 MiB: 12 MiB a
 * rank) the cached copy is faster (docs/results/coll.md run 26). */
static void nt_copy(char *d, const char *s, size_t n)
{
#if defined(__SSE2__)
    size_t head = (16 - ((uintptr_t)d & 15)) & 15, i = 0;
    head = RMPI_MIN(head, n);
    memcpy(d, s, head);
    d += head, s += head, n -= head;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 32));
        __m128i e = _mm_loadu_si128((const __m128i *)(const void *)(s + i + 48));
        _mm_stream_si128((__m128i *)(void *)(d + i), a);
        _mm_stream_si128((__m128i *)(void *)(d + i + 16), b);
        _mm_stream_si128((__m128i *)(void *)(d + i + 32), c);
        _mm_stream_si128((__m128i *)(void *)(d + i + 48), e);
    }
    _mm_sfence(); /* the streams are weakly ordered: visible before this rank posts done */
    memcpy(d + i, s + i, n - i);
#else
    memcpy(d, s, n);
#endif
}

/* The exchange of step t after this rank published its table: my own block, then what the
 * others send me (read), then what I send them (written where they have not taken it), then
 * the wait for every piece of my pairs. MPI_ERR_TRUNCATE when a block sent to me exceeds
 * its receive block (the fitting part is copied, as a receive would). */
static int cma_exchange(shm_t *h, uint64_t t, size_t piece, int nt)
{
    int n = h->n, me = h->me, err = 0;
    cma_ent_t *mine = cma_table(h, me, t);
    size_t own = (size_t)RMPI_MIN(mine[me].slen, mine[me].rcap);
    if (mine[me].saddr != mine[me].raddr) {
        if (nt)
            nt_copy((char *)(uintptr_t)mine[me].raddr, (const char *)(uintptr_t)mine[me].saddr, own);
        else
            memcpy((void *)(uintptr_t)mine[me].raddr, (const void *)(uintptr_t)mine[me].saddr, own);
    }
    if (mine[me].slen > mine[me].rcap)
        err = MPI_ERR_TRUNCATE;
    /* the pairs with every peer that has published its table: what it sends me (read),
     * then what I send it (written where it has not taken it); a peer not there yet is
     * passed over and looked at again after the others, so one descheduled peer does not
     * hold up the pairs with the rest (ranks outnumbering cores) */
    uint64_t pending = (n == 64 ? ~0ull : (1ull << n) - 1) & ~(1ull << me);
    unsigned idle = 0;
    for (int spins = 0; pending;) {
        int any = 0;
        for (int i = 1; i < n; i++) {
            int r = (me + i) % n; /* everyone starts at a different rank */
            if (!(pending >> r & 1) || !ge(SEQ(buf_of(h, r, t)), t))
                continue;
            cma_ent_t *e = &cma_table(h, r, t)[me];
            if (e->slen > mine[r].rcap)
                err = MPI_ERR_TRUNCATE;
            cma_pieces(h, r, t, e, &mine[r], 0, piece);
            cma_pieces(h, r, t, &mine[r], &cma_table(h, r, t)[me], 1, piece);
            pending &= ~(1ull << r);
            any = 1;
        }
        if (any || !pending)
            spins = 0;
        else if (++spins >= (rmpi_core_hook ? 1 : shm_spin)) { /* as wait_ge */
            spins = 0;
            rmpi_core_wait_step(&idle);
        } else
            cpu_relax();
    }
    for (int i = 1; i < n; i++) {
        int r = (me + i) % n;
        cma_ent_t *in = &cma_table(h, r, t)[me];
        /* an inline block: copied by me, and a block of mine in my step buffer needs no wait:
         * that buffer is not written again before every member has posted this step done
         * (step_begin) */
        if (!in->inl)
            wait_ge(&in->fin, cma_npieces(in, &mine[r], piece));
        if (!mine[r].inl)
            wait_ge(&mine[r].fin, cma_npieces(&mine[r], in, piece));
    }
    post(&h->ctl[me].done, t);
    return err;
}

/* Allgather(v) and Alltoall(v/w): the table (send: my block per member, one for all in an
 * Allgather; in place, the receive blocks), published, exchanged. In place, an Alltoall's
 * outgoing blocks are copied aside first: the receive blocks they lie in are overwritten
 * while the others may still read them. */
static int cma_move(shm_t *h, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int gather, size_t piece)
{
    int n = h->n, me = h->me;
    void *few[2][8] = {{0}}; /* the scratch pointers of up to 8 members without a calloc */
    void **tin = n <= 8 ? few[0] : rmpi_xcalloc((size_t)n, sizeof *tin);
    void **tout = n <= 8 ? few[1] : rmpi_xcalloc((size_t)n, sizeof *tout);
    uint64_t t = step_begin(h, SHM_NBUF);
    cma_ent_t *mine = cma_table(h, me, t);
    size_t inl_max = cma_inline_max(h);
    int inl_done = 0;
    for (int d = 0; d < n; d++) {
        const rmpi_coll_blk_t *b = gather ? (send ? send : &recv[me]) : send ? &send[d] : &recv[d];
        size_t k = blk_bytes(b);
        const char *p =
            gather && d ? (const char *)(uintptr_t)mine[0].saddr : packed_in(b->buf, b->count, b->dt, &tin[d]);
        if (!gather && !send && !tin[d] && d != me) {
            tin[d] = rmpi_xmalloc(k ? k : 1);
            memcpy(tin[d], p, k);
            p = tin[d];
        }
        mine[d].saddr = (uintptr_t)p;
        mine[d].slen = k;
        mine[d].inl = 0;
        if (d != me && k && k <= inl_max) { /* an Allgather's one block: one copy, slot 0 */
            if (!gather || !inl_done)
                memcpy(cma_inline_of(h, me, t, gather ? 0 : d), p, k);
            inl_done = 1;
            mine[d].inl = (uint64_t)(gather ? 0 : d) + 1;
        }
        mine[d].raddr = (uintptr_t)packed_out(recv[d].buf, recv[d].count, recv[d].dt, &tout[d]);
        mine[d].rcap = blk_bytes(&recv[d]);
        atomic_store_explicit(&mine[d].claim, 0, memory_order_relaxed);
        atomic_store_explicit(&mine[d].fin, 0, memory_order_relaxed);
    }
    /* the own block with non-temporal stores when this rank's send and receive buffers of the
     * call, together, reach RMPI_COLL_SHM_CMA_NT (a local choice: nobody else sees how) */
    size_t call = 0, nt = (size_t)rmpi_knobs.COLL_SHM_CMA_NT;
    for (int d = 0; d < n; d++)
        call += (size_t)mine[d].rcap + (gather && d != me ? 0 : (size_t)mine[d].slen);
    post(SEQ(buf_of(h, me, t)), t);
    int err = cma_exchange(h, t, piece, nt && call >= nt);
    blocks_done(tout, recv, n);
    for (int d = 0; d < n; d++)
        free(tin[d]);
    if (n > 8) {
        free(tin);
        free(tout);
    }
    return err;
}

/* ---- single-copy Reduce on two ranks ----
 * Each rank publishes in its step buffer where its packed input lies (the root also its
 * packed output), and the two combine the vector together, piece by piece, each piece
 * claimed by whichever rank is free (red_claim: the root from the front, the other from
 * the back). The rank that takes a piece reads the other's operand of it straight from
 * the other's buffer (process_vm_readv) into the piece's destination or its scratch and
 * combines; the non-root writes the combined piece into the root's output
 * (process_vm_writev). So every input byte crosses between the processes once and the
 * result is written once, and the combining is split over both CPUs, where the tree's root
 * first receives the whole vector (a copy) and then combines it alone: the copy through
 * the memory system is the cost (mpi2-layering sec. 3.3). A piece is at most a step
 * buffer (the call takes two steps; this rank's two buffers are its scratch), so the
 * operands it combines are still in cache. A descheduled peer takes no pieces and the root does them
 * all. Whoever combines a piece computes x0 op x1 (rank 0's operand on the left), so no bit
 * of the result depends on who claimed what. */
typedef struct red_ent {
    uint64_t in, out, len;       /* packed input; the root's packed output; bytes */
    _Atomic uint64_t claim, fin; /* in the root's entry: pieces taken, pieces finished */
} red_ent_t;

typedef struct red_call {
    const shm_t *h;
    int root;
    MPI_Op op;
    MPI_Datatype basic;
    size_t es, pe;          /* element bytes, elements per piece */
    const char *in;         /* my packed input */
    char *out;              /* the root's packed output (root only) */
    const red_ent_t *other; /* the peer's entry */
    char *s1, *s2;          /* scratch: two pieces in my step buffer */
    rmpi_coll_kernel_t rev; /* rank 1 as root combining alone: the op as out = out op in */
    _Atomic uint64_t *read; /* the root combining alone: counted once the other's operand is read */
} red_call_t;

/* Piece j of `elems`: d receives rank 1's operand, then d = x0 op d; the root's output is d
 * where nothing of its own input is still to be read there. */
static void red_piece(const red_call_t *r, uint64_t j, size_t elems)
{
    const shm_t *h = r->h;
    int me = h->me, peer = 1 - me;
    size_t lo = (size_t)j * r->pe, k = RMPI_MIN(r->pe, elems - lo), off = lo * r->es, kb = k * r->es;
    char *mine_out = me == r->root ? r->out + off : NULL;
    const char *left;
    char *d;
    if (r->rev) { /* rank 1 as root, alone, not in place: x0 lands in the output, out = x0 op x1 */
        cma_copy(h, peer, mine_out, kb, r->other->in + off, 0);
        atomic_fetch_add_explicit(r->read, 1, memory_order_release);
        r->rev(r->in + off, mine_out, k);
        return;
    }
    if (me == 1) { /* I hold x1: a copy of it takes x0 */
        d = mine_out ? mine_out : r->s1;
        if (d != r->in + off)
            memcpy(d, r->in + off, kb);
        cma_copy(h, peer, r->s2, kb, r->other->in + off, 0);
        left = r->s2;
    } else { /* I hold x0: x1 lands where the result goes, unless that is my input (in place) */
        d = mine_out && mine_out != r->in + off ? mine_out : r->s1;
        cma_copy(h, peer, d, kb, r->other->in + off, 0);
        if (r->read)
            atomic_fetch_add_explicit(r->read, 1, memory_order_release);
        left = r->in + off;
    }
    rmpi_coll_op_apply(r->op, r->basic, left, d, k);
    if (mine_out && d != mine_out)
        memcpy(mine_out, d, kb);
    else if (!mine_out)
        cma_copy(h, peer, d, kb, r->other->out + off, 1);
}

/* The next piece of np: the root takes them from the front, the other rank from the back
 * (claim: taken from the front in the low half, from the back in the high half). A piece
 * costs the non-root two cross-memory copies (its partner's operand in, the result out)
 * and the root one, so the root does most of a short vector alone and the other rank
 * joins from the far end as the vector grows, or when the root is late. */
static int64_t red_claim(_Atomic uint64_t *claim, uint64_t np, int front)
{
    uint64_t c = atomic_load_explicit(claim, memory_order_relaxed);
    for (;;) {
        uint64_t f = c & 0xffffffffu, b = c >> 32;
        if (f + b >= np)
            return -1;
        uint64_t next = front ? c + 1 : c + (1ull << 32);
        if (atomic_compare_exchange_weak_explicit(claim, &c, next, memory_order_relaxed, memory_order_relaxed))
            return front ? (int64_t)f : (int64_t)(np - 1 - b);
    }
}

/* The end of a single-copy Reduce in pieces: every piece finished (the root's output is
 * complete, no input is read any more), my steps done, the output unpacked. */
static int red_end(shm_t *h, red_ent_t *re, uint64_t np, uint64_t t2, void *tin, void *tout, void *rbuf, size_t count,
                   rmpi_dtype_t *dt)
{
    wait_ge(&re->fin, np);
    post(&h->ctl[h->me].done, t2);
    packed_done(tout, rbuf, count, dt);
    free(tin);
    free(tout);
    return MPI_SUCCESS;
}

/* A non-blocking Reduce on 2 ranks in single copy (reduce_nb_single), the blocking call's
 * root-alone case (reduce_cma) as steps of the op: the other rank publishes where its
 * operand lies in its step buffer and is done once the root has read it (the root's red);
 * the root reads it with process_vm_readv into its output (or into its own step buffer,
 * in place or as rank 1 without the reversed kernel), posts red, and combines x0 op x1,
 * the bits of every other path. Neither blocks: each step returns 0 until its flag is up. */
static int reduce_nb_cma(coll_shm_op_t *o)
{
    shm_t *h = &o->h;
    int me = h->me, peer = 1 - me;
    switch (o->phase) {
    case 0:
        o->t = ++h->c->coll_shm_step;
        o->k = o->elems;
        o->phase = 1;
        /* fallthrough */
    case 1:
        /* both: the step buffer is the non-root's table, the root's scratch */
        if (!step_free(h, o->t, SHM_NBUF))
            return 0;
        if (me != o->root) {
            red_ent_t *mine = (red_ent_t *)(void *)data_of(h, me, o->t);
            mine->in = (uintptr_t)o->in;
            mine->len = o->elems * o->es;
            post(SEQ(buf_of(h, me, o->t)), o->t);
        }
        o->phase = 2;
        /* fallthrough */
    default:
        if (me != o->root) {
            if (!ge(&h->ctl[o->root].red, o->t))
                return 0;
            break;
        }
        if (!ge(SEQ(buf_of(h, peer, o->t)), o->t))
            return 0;
        const red_ent_t *e = (const red_ent_t *)(const void *)data_of(h, peer, o->t);
        /* equal counts are the standard's rule; a mismatch combines the common part */
        size_t bytes = RMPI_MIN((size_t)e->len, o->elems * o->es), k = bytes / o->es;
        rmpi_coll_kernel_t rev = me == 1 && o->in != o->out ? rmpi_coll_op_kernel_rev(o->op, o->basic) : NULL;
        if ((me == 0 && o->in != o->out) || rev) { /* the other's operand into the output */
            cma_copy(h, peer, o->out, bytes, e->in, 0);
            post(&h->ctl[me].red, o->t);
            if (rev)
                rev(o->in, o->out, k); /* out = out op x1 */
            else
                o->kern(o->in, o->out, k); /* out = x0 op out */
            break;
        }
        char *x = data_of(h, me, o->t); /* in place, or rank 1 without rev */
        cma_copy(h, peer, x, bytes, e->in, 0);
        post(&h->ctl[me].red, o->t);
        if (me == 1) { /* x holds x0 */
            if (o->out != o->in)
                memcpy(o->out, o->in, bytes);
            o->kern(x, o->out, k);
        } else { /* rank 0 in place: the output holds x0 */
            o->kern(o->out, x, k);
            memcpy(o->out, x, bytes);
        }
    }
    post(&h->ctl[me].done, o->t);
    o->off = o->elems;
    return 1;
}

static int reduce_cma(shm_t *h, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt, MPI_Op op, int root)
{
    int me = h->me, peer = 1 - me;
    void *tin = NULL, *tout = NULL;
    red_call_t r = {h, root, op, dt->basic, rmpi_dtype_get(dt->basic)->size, 0, NULL, NULL, NULL, NULL, NULL, NULL};
    r.in = packed_in(sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, dt, &tin);
    r.out = me == root ? packed_out(rbuf, count, dt, &tout) : NULL;
    /* two steps: the table and a scratch piece in the first buffer, a second piece in the next */
    uint64_t t = step_begin(h, SHM_NBUF), t2 = step_begin(h, SHM_NBUF);
    red_ent_t *mine = (red_ent_t *)(void *)data_of(h, me, t);
    mine->in = (uintptr_t)r.in;
    mine->out = (uintptr_t)r.out;
    mine->len = count * dt->size;
    atomic_store_explicit(&mine->claim, 0, memory_order_relaxed);
    atomic_store_explicit(&mine->fin, 0, memory_order_relaxed);
    r.s1 = data_of(h, me, t) + 64;
    r.s2 = data_of(h, me, t2);
    post(SEQ(buf_of(h, me, t)), t);
    wait_ge(SEQ(buf_of(h, peer, t)), t);
    r.other = (const red_ent_t *)(const void *)data_of(h, peer, t);
    red_ent_t *re = me == root ? mine : (red_ent_t *)(void *)data_of(h, peer, t);
    /* equal counts are the standard's rule; a mismatch combines the common part. Pieces of
     * at most a scratch buffer and RMPI_COLL_SHM_CMA_PIECE, all about equal. Below
     * RMPI_COLL_SHM_REDUCE_CMA_SPLIT the root combines alone (the other rank's piece costs
     * it two system calls), and reads the whole operand into its output at once where that
     * is not its input: one system call, as the tree's rendezvous, without the messages
     * around it. Both ranks see the root's entry, so they count alike. */
    size_t elems = (size_t)RMPI_MIN(mine->len, r.other->len) / r.es;
    int split = elems * r.es >= (size_t)rmpi_knobs.COLL_SHM_REDUCE_CMA_SPLIT;
    /* rank 1 as root reads x0 into its output the same way and combines x1 into it on the
     * right (the kernel in the other orientation: x0 op x1, the bits of every other path) */
    rmpi_coll_kernel_t rev = root == 1 ? rmpi_coll_op_kernel_rev(op, dt->basic) : NULL;
    int whole = !split && re->in != re->out && (root == 0 || rev);
    if (whole && root == 1 && me == 1)
        r.rev = rev;
    /* the root alone in one piece: the other rank is released (fin) once its operand is
     * read, not after the combine, as a rendezvous send completes when the receiver has
     * pulled the data (each call timed alone after a barrier, OSU's way, 64 KiB: the
     * other rank's wait was the root's combine too) */
    if (whole && me == root)
        r.read = &re->fin;
    size_t most = whole ? elems : RMPI_MIN(h->chunk - 128, cma_piece(h->c)) / r.es;
    most = RMPI_MAX(most, 1);
    uint64_t np = (elems + most - 1) / most;
    r.pe = np ? (elems + np - 1) / np : 1;
    int64_t j;
    while ((split || me == root) && (j = red_claim(&re->claim, np, me == root)) >= 0) {
        red_piece(&r, (uint64_t)j, elems);
        if (!r.read)
            atomic_fetch_add_explicit(&re->fin, 1, memory_order_release);
    }
    /* the root's output is complete, and nobody reads the non-root's input any more */
    return red_end(h, re, np, t2, tin, tout, rbuf, count, dt);
}

/* Reduce on an oversubscribed node (reduce_single): the root reads every other rank's
 * packed operand straight from that rank's memory with process_vm_readv and combines it
 * into its output; the others publish where their operand lies and wait for the root's
 * `red`. Through the segment each rank first copies its operand into segment lines that
 * the root then reads: lines another core just wrote, which cost about 3x more in the
 * machine's slow state (docs/results/coll.md: 4 ranks on 2 cores, 1 MiB 944 us through
 * the segment in the slow state against 144 in the fast one), where a buffer the owner
 * has not written since is read like any memory, and whether its owner runs or not. The
 * first operand read lands in the output (not in place), the others in a scratch that
 * the communicator keeps; the root's own operand is combined last. */
static int reduce_cma_all(shm_t *h, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt, MPI_Op op, int root)
{
    rmpi_comm_t *c = h->c;
    int me = h->me, n = h->n;
    void *tin = NULL, *tout = NULL;
    const char *in = packed_in(sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, dt, &tin);
    char *out = me == root ? packed_out(rbuf, count, dt, &tout) : NULL;
    size_t bytes = count * dt->size;
    uint64_t t = step_begin(h, SHM_NBUF);
    red_ent_t *mine = (red_ent_t *)(void *)data_of(h, me, t);
    mine->in = (uintptr_t)in;
    mine->len = bytes;
    post(SEQ(buf_of(h, me, t)), t);
    if (me == root) {
        rmpi_coll_kernel_t kern = rmpi_coll_op_kernel(op, dt->basic);
        size_t es = rmpi_dtype_get(dt->basic)->size;
        int into_out = in != out; /* in place the output holds my operand already */
        if ((n > 2 || !into_out) && c->coll_shm_scratch_len < bytes) {
            free(c->coll_shm_scratch);
            c->coll_shm_scratch = rmpi_xmalloc(bytes);
            c->coll_shm_scratch_len = bytes;
        }
        for (int i = 1; i < n; i++) {
            int r = (root + i) % n;
            wait_ge(SEQ(buf_of(h, r, t)), t);
            const red_ent_t *e = (const red_ent_t *)(const void *)data_of(h, r, t);
            size_t k = RMPI_MIN((size_t)e->len, bytes); /* equal by the standard; else the common part */
            if (into_out) {
                cma_copy(h, r, out, k, e->in, 0);
                into_out = 0;
            } else {
                cma_copy(h, r, c->coll_shm_scratch, k, e->in, 0);
                kern(c->coll_shm_scratch, out, k / es);
            }
        }
        if (in != out)
            kern(in, out, bytes / es);
        post(&h->ctl[me].red, t);
    } else
        wait_ge(&h->ctl[root].red, t);
    post(&h->ctl[me].done, t);
    packed_done(tout, rbuf, count, dt);
    free(tin);
    free(tout);
    return MPI_SUCCESS;
}

/* Reduce on an oversubscribed node in single copy from RMPI_COLL_SHM_OVERSUBSCRIBED_REDUCE_
 * CMA_SPLIT bytes: every rank takes pieces (one counter in the root's entry) whenever it
 * runs, reads the others' operands of the piece with process_vm_readv, combines them,
 * and writes the result into the root's output (the root: in place), so the work is spread
 * over the CPUs where reduce_cma_all leaves it all to the root; a descheduled rank's
 * operand is still read by the others. Every piece is x_{n-1} op ... op x_0, whoever takes
 * it: the bits of the segment's path. Scratch: a piece in each of my two step buffers.
 * root < 0: an Allreduce on 2 ranks with a core each (allreduce_two) or on an
 * oversubscribed node in the slow state (allreduce_single):
 * every rank publishes its output too and whoever takes a piece writes it into every
 * output, so each input is read once and each output written once with one handshake,
 * where the split Reduce and a single-copy Bcast took two and read the result again
 * (1.36-1.72x the time, docs/results/coll.md run 30). In place, a piece's result
 * overwrites a rank's input of that piece only after the rank that took it has read them
 * all, and nobody else reads that piece. */
static int reduce_cma_split(shm_t *h, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt, MPI_Op op, int root)
{
    int me = h->me, n = h->n;
    void *tin = NULL, *tout = NULL;
    const char *in = packed_in(sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, dt, &tin);
    char *out = me == root || root < 0 ? packed_out(rbuf, count, dt, &tout) : NULL;
    size_t es = rmpi_dtype_get(dt->basic)->size, bytes = count * dt->size;
    rmpi_coll_kernel_t kern = rmpi_coll_op_kernel(op, dt->basic);
    uint64_t t = step_begin(h, SHM_NBUF), t2 = step_begin(h, SHM_NBUF);
    red_ent_t *mine = (red_ent_t *)(void *)data_of(h, me, t);
    mine->in = (uintptr_t)in;
    mine->out = (uintptr_t)out;
    mine->len = bytes;
    atomic_store_explicit(&mine->claim, 0, memory_order_relaxed);
    atomic_store_explicit(&mine->fin, 0, memory_order_relaxed);
    post(SEQ(buf_of(h, me, t)), t);
    const red_ent_t *e[SHM_MAX_RANKS];
    size_t len = bytes;
    for (int r = 0; r < n; r++) {
        wait_ge(SEQ(buf_of(h, r, t)), t);
        e[r] = (const red_ent_t *)(const void *)data_of(h, r, t);
        len = RMPI_MIN(len, (size_t)e[r]->len); /* equal by the standard; else the common part */
    }
    red_ent_t *re = (red_ent_t *)(void *)data_of(h, root < 0 ? 0 : root, t);
    size_t piece = RMPI_MIN(h->chunk - 128, cma_piece(h->c));
    /* an Allreduce in at least two pieces (4 KiB multiples), so two ranks combine at once:
     * 4 ranks on 2 cores, 64-128 KiB 0.70x the time of one piece (128 KiB), 6 of 6 rounds */
    if (root < 0)
        piece = RMPI_MIN(piece, (len / 2 + 4095) / 4096 * 4096);
    size_t elems = len / es, pe = RMPI_MAX(piece / es, 1);
    uint64_t np = (elems + pe - 1) / pe;
    char *s1 = data_of(h, me, t) + 64, *s2 = data_of(h, me, t2);
    uint64_t j;
    while ((j = atomic_fetch_add_explicit(&re->claim, 1, memory_order_relaxed)) < np) {
        size_t lo = (size_t)j * pe, k = RMPI_MIN(pe, elems - lo), off = lo * es, kb = k * es;
        /* the root's output unless that holds its operand (in place) */
        char *d = out && out != in ? out + off : s1;
        for (int r = n - 1; r >= 0; r--) {
            const char *x = r == me ? in + off : NULL;
            if (!x) {
                cma_copy(h, r, r == n - 1 ? d : s2, kb, e[r]->in + off, 0);
                x = r == n - 1 ? d : s2;
            }
            if (r == n - 1) {
                if (x != d)
                    memcpy(d, x, kb);
            } else
                kern(x, d, k);
        }
        if (out && d != out + off)
            memcpy(out + off, d, kb);
        if (root < 0) { /* an Allreduce: the piece into every other rank's output too */
            for (int i = 1; i < n; i++) {
                int r = (me + i) % n;
                cma_copy(h, r, d, kb, e[r]->out + off, 1);
            }
        } else if (!out)
            cma_copy(h, root, d, kb, re->out + off, 1);
        atomic_fetch_add_explicit(&re->fin, 1, memory_order_release);
    }
    /* the root's output is complete, and nobody reads any input any more */
    return red_end(h, re, np, t2, tin, tout, rbuf, count, dt);
}

/* Whether a blocking Allreduce on an oversubscribed node takes single copy (reduce_cma_split
 * with no root): in the slow state's window (RMPI_COLL_SHM_OVERSUBSCRIBED_ALLREDUCE_CMA_SLOW), where it would
 * otherwise take the segment (then_bcast: from RMPI_COLL_SHM_OVERSUBSCRIBED_ALLREDUCE, below
 * RMPI_COLL_SHM_ALLREDUCE_MAX), a predefined commutative op, members that agreed on
 * cross-memory attach. Every input is equal on all members, so all decide alike. */
static int allreduce_single(rmpi_comm_t *c, shm_t *h, size_t count, const rmpi_dtype_t *dt, MPI_Op op)
{
    size_t bytes = dt ? count * dt->size : 0;
    long long from = rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_ALLREDUCE;
    if (!over_allreduce_window(bytes) || from <= 0 || bytes < (size_t)from ||
        bytes >= (size_t)rmpi_knobs.COLL_SHM_ALLREDUCE_MAX || rmpi_knobs.COLL_ALLREDUCE ||
        !rmpi_coll_op_predefined(op) || !rmpi_coll_op_commutative(op) || !rmpi_coll_op_kernel(op, dt->basic) ||
        !shm_get(c, h, 1) || !c->coll_shm_over || !c->coll_shm_cma)
        return 0;
    queue_drain(c);
    if (!over_pick(h, bytes >= over_measure_min(OVER_ALLREDUCE)))
        return 0;
    coll_note(COLL_ALLREDUCE, shm_cma_choice, 0, bytes);
    return 1;
}

/* Whether a blocking Allreduce on 2 ranks with a core each takes single copy (reduce_cma_split
 * with no root: both ranks take pieces, each read once from the other's input and written
 * once into both outputs), from RMPI_COLL_SHM_ALLREDUCE_CMA bytes up to below _CMA_MAX in
 * the fast state, from _CMA_SLOW in the slow one (state_from), below
 * RMPI_COLL_SHM_ALLREDUCE_MAX; a predefined commutative op,
 * members that agreed on cross-memory attach. Every input is equal on both, so both decide
 * alike. */
static int allreduce_two(rmpi_comm_t *c, shm_t *h, size_t count, const rmpi_dtype_t *dt, MPI_Op op)
{
    size_t bytes = dt ? count * dt->size : 0;
    size_t fast = from_knob(rmpi_knobs.COLL_SHM_ALLREDUCE_CMA),
           slow = from_knob(rmpi_knobs.COLL_SHM_ALLREDUCE_CMA_SLOW);
    if (c->size != 2 || !bytes || bytes < RMPI_MIN(fast, slow) || bytes >= (size_t)rmpi_knobs.COLL_SHM_ALLREDUCE_MAX ||
        rmpi_knobs.COLL_ALLREDUCE || !rmpi_coll_op_predefined(op) || !rmpi_coll_op_commutative(op) ||
        !rmpi_coll_op_kernel(op, dt->basic) || !shm_get(c, h, 1) || c->coll_shm_over || !c->coll_shm_cma)
        return 0;
    queue_drain(c);
    /* from RMPI_COLL_SHM_ALLREDUCE_CMA_MAX the fast row ends: single copy in the slow state only */
    size_t end = from_knob(rmpi_knobs.COLL_SHM_ALLREDUCE_CMA_MAX);
    if (bytes <
        (bytes >= end ? state_from(c, h, bytes, SIZE_MAX, RMPI_MAX(slow, end)) : state_from(c, h, bytes, fast, slow)))
        return 0;
    coll_note(COLL_ALLREDUCE, shm_cma_choice, 0, bytes);
    return 1;
}

/* Reduce_scatter on 2 ranks with a core each, in single copy from
 * RMPI_COLL_SHM_REDUCE_SCATTER_CMA bytes of vector: each rank reads its part of the other's
 * input with process_vm_readv straight into its output, a piece at a time, and combines its
 * own input's part into the piece while the piece is still in cache. Each input part is read
 * once and each output written once (mpi2-layering sec. 3.3: the copy through the memory
 * system is the cost), where the pairwise exchange copies the part into a temporary buffer
 * through a rendezvous, reads it back and then combines (1 MiB a rank: 287 us against
 * MPICH's 265, docs/results/coll_rest.md). Two operands, so the one op gives the bits of
 * every other path (a predefined commutative op); a plain contiguous type, so a part starts
 * at its bytes. In place my output is the start of my input, which the other rank may
 * still be reading: my part is combined where it lies and moved to the front once the
 * other is done. Every input of the choice is equal on both ranks. */
#define RS_PIECE (64 * 1024) /* three pieces (peer's, mine, the output) stay in a core's L2 */

static int reduce_scatter_two(rmpi_comm_t *c, const void *sbuf, void *rbuf, const size_t *counts, size_t total,
                              const rmpi_dtype_t *dt, MPI_Op op)
{
    shm_t hh, *h = &hh;
    size_t bytes = total * dt->size, from = from_knob(rmpi_knobs.COLL_SHM_REDUCE_SCATTER_CMA);
    if (c->inter || c->size != 2 || bytes < from || rmpi_knobs.COLL_REDUCE_SCATTER || dt->basic != dt->handle ||
        !dt->contig || dt->true_lb || !rmpi_coll_op_predefined(op) || !rmpi_coll_op_commutative(op) ||
        !rmpi_coll_op_kernel(op, dt->basic) || !shm_get(c, h, 1) || c->coll_shm_over || !c->coll_shm_cma)
        return RMPI_COLL_SHM_DECLINED;
    queue_drain(c);
    coll_note(COLL_REDUCE_SCATTER, shm_cma_choice, 0, bytes);
    int me = h->me, peer = 1 - me;
    rmpi_coll_kernel_t kern = rmpi_coll_op_kernel(op, dt->basic);
    size_t es = dt->size, off = me ? counts[0] * es : 0, kb = counts[me] * es;
    int in_place = sbuf == MPI_IN_PLACE;
    char *in = in_place ? (char *)rbuf : (char *)(uintptr_t)sbuf;
    uint64_t t = step_begin(h, SHM_NBUF);
    red_ent_t *mine = (red_ent_t *)(void *)data_of(h, me, t);
    mine->in = (uintptr_t)in;
    mine->len = bytes;
    post(SEQ(buf_of(h, me, t)), t);
    wait_ge(SEQ(buf_of(h, peer, t)), t);
    const red_ent_t *other = (const red_ent_t *)(const void *)data_of(h, peer, t);
    /* equal vectors by the standard; else the part the other's input covers */
    size_t have = (size_t)other->len > off ? (size_t)other->len - off : 0;
    kb = RMPI_MIN(kb, have) / es * es;
    /* in place the other's piece goes to my step buffer (after my entry, which the other
     * reads) and my part is combined where it lies, which the other never reads */
    size_t piece = in_place ? RMPI_MIN((size_t)RS_PIECE, h->chunk - 128) : RS_PIECE;
    for (size_t at = 0; at < kb; at += piece) {
        size_t k = RMPI_MIN(piece, kb - at);
        char *x = in_place ? data_of(h, me, t) + 64 : (char *)rbuf + at;
        cma_copy(h, peer, x, k, other->in + off + at, 0);
        if (in_place)
            kern(x, in + off + at, k / es);
        else
            kern(in + off + at, x, k / es);
    }
    /* my reads of the other's input are over; mine may be read until it says the same */
    post(&h->ctl[me].done, t);
    wait_ge(&h->ctl[peer].done, t);
    /* in place rank 1's result moves to the front, over the part the other has read */
    if (in_place && off && kb)
        memmove(rbuf, in + off, kb);
    return MPI_SUCCESS;
}

/* Whether a blocking Reduce takes single copy: members that agreed on cross-memory attach,
 * a predefined commutative op, and either two with a core each from RMPI_COLL_SHM_REDUCE_CMA
 * bytes (reduce_cma) or an oversubscribed node from RMPI_COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA
 * (reduce_cma_all). Every input is equal on all members, so all decide alike. */
static int reduce_single(rmpi_comm_t *c, shm_t *h, size_t count, const rmpi_dtype_t *dt, MPI_Op op, int root)
{
    size_t bytes = dt ? count * dt->size : 0;
    /* 0: every size (the Bcast's 0 is never: from_knob) */
    size_t fast = (size_t)rmpi_knobs.COLL_SHM_REDUCE_CMA, slow = (size_t)rmpi_knobs.COLL_SHM_REDUCE_CMA_SLOW;
    /* oversubscribed: from the fast row, or in the slow row's window (over_window) */
    size_t over = from_knob(rmpi_knobs.COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA);
    int win = bytes < over && over_window(bytes);
    if (root < 0 || !bytes || (bytes < RMPI_MIN(RMPI_MIN(fast, slow), over) && !win) ||
        (c->size == 2 && bytes < (size_t)rmpi_knobs.COLL_SHM_REDUCE_DEEP && !c->coll_shm_over) ||
        (c->size != 2 && bytes < over && !win) || rmpi_knobs.COLL_REDUCE || !rmpi_coll_op_predefined(op) ||
        !rmpi_coll_op_commutative(op) || !rmpi_coll_op_kernel(op, dt->basic) || !shm_get(c, h, 1) || !c->coll_shm_cma ||
        (c->coll_shm_over ? bytes < over && !win : c->size != 2 || bytes < RMPI_MIN(fast, slow)))
        return 0;
    queue_drain(c);
    if (c->coll_shm_over && win) {
        if (!over_pick(h, root == 0 && bytes >= over_measure_min(OVER_REDUCE)))
            return 0;
    } else if (!c->coll_shm_over && bytes < state_from(c, h, bytes, fast, slow))
        return 0;
    coll_note(COLL_REDUCE, shm_cma_choice, 0, bytes);
    return 1;
}
