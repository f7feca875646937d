/*
 * Channel selection (seed adaptive-transport-selection, secs. 3.2 and 3.4): receive counts
 * and bytes per source in a bounded table of time slots, FIND_MAP (Fig. 6) over a window of
 * it, and the driver that runs FIND_MAP every interval or after a number of receives and
 * reports each change of kind to a callback.
 *
 * Who calls: whoever receives frames calls rmpi_chan_note_recv for each (the core, in
 * rmpi_core_deliver); whoever drives progress calls rmpi_chan_sel_tick now and then (it
 * reads no clock: the caller passes the time). The scale simulator calls the same
 * functions with simulated time.
 * Ownership: a selector owns its table; rmpi_chan_find_map owns nothing (pure).
 * Threading: none inside; the caller serialises (the library holds its big lock).
 * Dependencies: libc only, so select.c links alone (CMake target rmpi_chan_select).
 * The library's one selector (parameters from the knob table, cadence, report) is the part
 * at the end, defined in select_run.c.
 */
#ifndef RMPI_CHAN_SELECT_H
#define RMPI_CHAN_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "kind.h"

/* FIND_MAP's cost model of one class of peers, in nanoseconds (Fig. 6, Appendix A). */
typedef struct rmpi_chan_cost {
    double r, p, c, s, rho, q, w; /* as in rmpi_chan_params_t */
} rmpi_chan_cost_t;

typedef struct rmpi_chan_params {
    /* FIND_MAP's cost model in nanoseconds, the letters of Fig. 6 and Table 2: sources of
     * class 0 (in the library: peers of this node over shared memory) */
    double r;   /* latency saved per message received on a dedicated channel instead of the shared one */
    double p;   /* one failed poll of one dedicated channel */
    double c;   /* one credit message (0: credits need no message, as in a shared-memory ring) */
    double s;   /* receives per credit message (ring entries); read only when c > 0 */
    double rho; /* setting up one dedicated channel */
    double q;   /* one empty poll of one dedicated channel in a progress pass: the receiver's own time, paid
                 * by every ring in the poll list at each pass, one per receive (from any source) and one per
                 * idle poll (0: the seed's model, polling as the busiest source's delay alone) */
    double w;   /* saved per message that arrived behind an earlier one of its source still unconsumed (a
                 * stream: throughput, not latency); such a message saves the larger of r and w (0: r alone,
                 * the seed's model) */
    /* the same for sources of class 1, whose dedicated channel is of another kind (in the
     * library: peers over libfabric, a ring written with fi_write); read only for them */
    rmpi_chan_cost_t net;
    double gamma; /* least gain per received message for which a new mapping is applied */
    int h;        /* most dedicated channels at once */
    int tau;      /* most dedicated channels one new mapping may set up */
    /* windows (sec. 3.4) */
    uint64_t interval_ns; /* u: FIND_MAP runs this long after the last run */
    uint64_t slot_ns;     /* one row of the table; also the least gap after a run that changed the mapping */
    int sigma;            /* rows kept: no window reaches further back */
    int sources;          /* most sources with a column (0: rmpi_chan_default_sources) */
    uint64_t trigger;     /* a run also starts once this many receives came since the last; 0: never */
    int skips;            /* most interval runs in a row skipped by the check (rmpi_chan_sel_tick); 0: none */
} rmpi_chan_params_t;

/* q on shared memory when RMPI_CHAN_IDLE_POLL_COST is -1 (ns): 0. A progress pass reads the
 * receiver's doorbell words (src/net/shm/shm.h), not the rings, so a ring with nothing to read
 * costs no instruction per pass: the dedicated idle probe of `bench/channels.sh --callgrind
 * --ranks 32 --patterns repeat` is 308 Ir with 31 rings and 305 with none (it was 538 when a
 * pass read every ring's next stamp, 8 Ir per empty ring, and q was 0.75 ns). */
#define RMPI_CHAN_SHM_IDLE_POLL_NS 0.0

/* Whether p can drive a selector; else -1 and a sentence in why naming the field. */
int rmpi_chan_params_check(const rmpi_chan_params_t *p, char *why, size_t len);

/* Defaults that depend on the job (see src/chan/README.md, "Defaults"). */
int rmpi_chan_default_h(int nprocs, int node_size);
int rmpi_chan_default_sigma(int nprocs, uint64_t interval_ns, uint64_t slot_ns);
/* Columns of the statistics table for npeers peers and h dedicated channels. */
int rmpi_chan_default_sources(int npeers, int h);

/* ---- FIND_MAP (Fig. 6) ---- */

/* One source of a window: its receives, and whether it is dedicated now. Sources absent
 * from the list are shared and silent. An entry with peer -1 stands for sources the
 * statistics table has no column for: its receives count in the window's total (the gain
 * per message), it is never dedicated and is not in the polling term's largest n. */
typedef struct rmpi_chan_src {
    int peer;
    int dedicated;
    uint64_t n;
    int cls;    /* its costs: 0 the parameters' r, p, c, s, rho, w; 1 their `net` */
    uint64_t b; /* of the n, those that arrived behind an earlier one still unconsumed (at most n) */
} rmpi_chan_src_t;

typedef struct rmpi_chan_plan {
    int nup, ndown; /* peers written to up[] (to make dedicated) and down[] (to release) */
    int ndedicated; /* dedicated channels of the chosen mapping */
    double x_new;   /* benefit of the chosen mapping over all-shared, set-ups paid (ns) */
    double x_cur;   /* benefit of the current mapping over the same window (ns) */
    double gain;    /* (x_new - x_cur) / receives in the window (ns per message) */
    int apply;      /* gain > gamma: up and down are the change; else both are empty */
} rmpi_chan_plan_t;

/* The best mapping for the receives in src[0..nsrc) under p's caps (at most h dedicated,
 * at most tau of them new), compared with the current one. up and down must hold nsrc
 * peers each. Pure: reads its inputs only, ties go to the lower rank. -1 on ENOMEM. */
int rmpi_chan_find_map(const rmpi_chan_src_t *src, int nsrc, const rmpi_chan_params_t *p, int *up, int *down,
                       rmpi_chan_plan_t *plan);
/* The same for a window in which the receiver also made idle polls (progress passes that
 * found nothing): each dedicated channel of class k costs q_k at every one of them, and at
 * every receive from another source. */
int rmpi_chan_find_map_idle(const rmpi_chan_src_t *src, int nsrc, uint64_t idle, const rmpi_chan_params_t *p, int *up,
                            int *down, rmpi_chan_plan_t *plan);

/* ---- the statistics table and the driver ---- */

/* One source in one slot: the seed's 8 bytes (sec. 4.2; bytes saturate), and b, the receives
 * that came in a progress pass that had already delivered one of the same source (the frame
 * was there, unconsumed, behind the earlier one: the source streams). */
typedef struct rmpi_chan_cell {
    uint32_t n, bytes, b;
} rmpi_chan_cell_t;
/* A row of a column: its cell, and the column's receives and b before that slot (running
 * counts, so that a window's are two reads each; select.c, col_alloc). */
#define RMPI_CHAN_ROW_BYTES (sizeof(rmpi_chan_cell_t) + 2 * sizeof(uint32_t))

/* Told each change of kind; 0 accepted (the selector's map follows), else refused (the
 * peer keeps its kind). */
typedef int (*rmpi_chan_apply_fn)(void *ctx, int peer, rmpi_chan_kind_t kind);

typedef struct rmpi_chan_sel {
    /* read by every rmpi_chan_note_recv */
    rmpi_chan_cell_t **cur; /* per peer: its cell of the current slot, NULL until the first receive of
                             * the slot finds it out of line (the row is thus computed once per slot
                             * and source, not per receive; a new slot clears every entry) */
    uint64_t slot_end_ns;   /* the current slot ends here */
    int npeers;
    uint16_t *pass; /* the receiver's progress passes, modulo 2^16: own_pass (rmpi_chan_sel_pass), or the
                     * library's counter (rmpi_chan_passes) */
    uint16_t *seen; /* per peer: its last receive's pass, modulo 2^16 (a second one in the same pass counts in b) */
    uint32_t left;  /* the library's entry: receives until its next tick (rmpi_chan_lib_count) */
    uint32_t batch; /* what left started from: batch - left receives are not in total yet */
    uint64_t total; /* receives noted (the library's: those of its ticks) */
    rmpi_chan_cell_t **col; /* per peer: its column of sigma cells; NULL before its first receive,
                             * spill while the table has no column free for it */
    uint32_t row;           /* the current slot's row */
    uint64_t now_ns;        /* the latest time seen */
    /* the rest */
    rmpi_chan_params_t prm;
    uint64_t t0_ns, slot; /* slot k covers [t0 + k * slot_ns, t0 + (k + 1) * slot_ns) */
    uint8_t *kind;        /* rmpi_chan_kind_t per peer */
    uint8_t *fixed;       /* 1: the peer is never selected (self, a provider with one kind) */
    uint8_t *cls;         /* the peer's cost class (rmpi_chan_src_t.cls), 0 unless set */
    int *active;          /* peers with a column, in order of their first receive */
    int nactive, ndedicated;
    int maxcols;             /* most columns (prm.sources or its default) */
    rmpi_chan_cell_t *sink;  /* the column of fixed peers: counted, never read */
    rmpi_chan_cell_t *spill; /* the receives of sources without a column (no room, or evicted with their counts):
                              * only their total per slot is read */
    uint64_t idle_total;     /* idle polls noted (rmpi_chan_sel_note_idle) */
    uint64_t *idle_at;       /* idle_total when each slot began, a ring of sigma as the columns: a window's
                              * idle polls are one subtraction, not a walk of its rows */
    int full;                /* a source found no column since the last eviction */
    uint64_t beta, eps;      /* the current mapping's window [beta, eps), in slots */
    int have_cur;
    uint64_t next_run_ns, last_run_ns, total_at_run;
    uint64_t trigger_now;  /* receives that start a run early: before the first run, the fewest that can repay
                           * a set-up if below prm.trigger, again after each run that changed nothing
                           * until prm.trigger receives came in all; later doubled by each early run that
                           * changed nothing (a run walks every column's window); prm.trigger after a change */
    int changed;           /* the last run changed the mapping: the next early one waits a slot */
    int refused_last;      /* the last run had a change refused: the next one must propose it again */
    uint64_t check_slot;   /* the interval check reads the slots from here (the last run's or check's) */
    int nskip;             /* interval runs skipped in a row */
    uint64_t ext_n;        /* receives in T2's window at the last run, with the frames checked since */
    double ext_d;          /* its best x(M) - x(D) then (ns; not above gamma * ext_n), with what they may add */
    rmpi_chan_src_t *srcs; /* scratch of the runs */
    int *up, *down;
    /* counters */
    uint64_t runs, trigger_runs, applied, to_dedicated, to_shared, refused;
    uint64_t skipped;  /* interval runs the check skipped (not in runs) */
    uint64_t evicted;  /* columns given back (silent for sigma slots, or the least active of a full table) */
    double last_gain;  /* of the last mapping applied, ns per message */
    uint16_t own_pass; /* the pass counter of a selector not the library's (the simulator, tests) */
} rmpi_chan_sel_t;

/* A selector for peers 0..npeers-1, all shared and selectable, its first slot starting at
 * now_ns. NULL when p fails rmpi_chan_params_check or memory runs out. */
rmpi_chan_sel_t *rmpi_chan_sel_create(int npeers, const rmpi_chan_params_t *p, uint64_t now_ns);
void rmpi_chan_sel_destroy(rmpi_chan_sel_t *s);
/* peer keeps kind and is never selected (its receives are not kept). */
void rmpi_chan_sel_fix(rmpi_chan_sel_t *s, int peer, rmpi_chan_kind_t kind);
/* peer's kind is now kind (a start other than all-shared, or a switch that failed). */
void rmpi_chan_sel_set(rmpi_chan_sel_t *s, int peer, rmpi_chan_kind_t kind);
rmpi_chan_kind_t rmpi_chan_sel_kind(const rmpi_chan_sel_t *s, int peer);
/* peer's costs are those of class cls (0 or 1, rmpi_chan_src_t.cls). */
void rmpi_chan_sel_class(rmpi_chan_sel_t *s, int peer, int cls);

void rmpi_chan_note_slow(rmpi_chan_sel_t *s, int src, size_t bytes, uint64_t now_ns);
/* polls idle polls (progress passes that found nothing) made up to now_ns: FIND_MAP charges
 * every dedicated channel q for each (rmpi_chan_params_t.q). */
void rmpi_chan_sel_note_idle(rmpi_chan_sel_t *s, uint64_t polls, uint64_t now_ns);

/* One received frame of bytes from src counted in its cell of the current slot, for a caller
 * whose clock moves only through rmpi_chan_sel_tick (which moves the table too), without the
 * total: in the common case the cell's increment, a saturating add of its bytes and b's test
 * against the source's last pass, with one
 * compare that sends the first receive of a source in a slot, or an unknown source, out of
 * line. Sources outside 0..npeers-1 are not counted. */
static inline void rmpi_chan_bump_recv(rmpi_chan_sel_t *s, int src, size_t bytes)
{
    if (__builtin_expect((unsigned)src >= (unsigned)s->npeers || !s->cur[src], 0)) {
        rmpi_chan_note_slow(s, src, bytes, s->now_ns);
        return;
    }
    rmpi_chan_cell_t *c = s->cur[src];
    uint64_t b = (uint64_t)c->bytes + bytes;
    c->n++;
    c->bytes = b > UINT32_MAX ? UINT32_MAX : (uint32_t)b;
    uint16_t now = *s->pass;
    c->b += s->seen[src] == now;
    s->seen[src] = now;
}

/* A new progress pass of the receiver: a receive from a source that already had one in the
 * same pass counts in b (the source's frames wait behind one another). */
static inline void rmpi_chan_sel_pass(rmpi_chan_sel_t *s) { ++*s->pass; }

/* The same, and the total's increment. */
static inline void rmpi_chan_count_recv(rmpi_chan_sel_t *s, int src, size_t bytes)
{
    rmpi_chan_bump_recv(s, src, bytes);
    s->total += (unsigned)src < (unsigned)s->npeers;
}

/* The same at now_ns (times never go back): one more compare moves the table to a new slot
 * out of line. */
static inline void rmpi_chan_note_recv(rmpi_chan_sel_t *s, int src, size_t bytes, uint64_t now_ns)
{
    if (__builtin_expect(now_ns >= s->slot_end_ns, 0)) {
        rmpi_chan_note_slow(s, src, bytes, now_ns);
        s->total += (unsigned)src < (unsigned)s->npeers;
        return;
    }
    rmpi_chan_count_recv(s, src, bytes);
}

/* Moves the table to now_ns, and runs FIND_MAP when the interval has passed since the last
 * run, or early when p.trigger receives came since it (either unless the check finds that
 * the receives and idle polls since the last run call for no change: src/chan/README.md,
 * "Driver"; at most p.skips times in a row; a skipped run counts as one that changed nothing) (the first run: since the start, and as
 * soon as enough came to repay a set-up if that is fewer; after a run that changed nothing,
 * twice the count before; after a change, p.trigger again, and one slot since it). Each change goes
 * to apply (releases first, so a cap is never exceeded). After a run, columns of shared
 * sources silent for sigma slots are given back, and if a source found the table full, the
 * least active shared sources' columns too, down to half the table. Returns the changes
 * accepted. */
int rmpi_chan_sel_tick(rmpi_chan_sel_t *s, uint64_t now_ns, rmpi_chan_apply_fn apply, void *ctx);

/* Receives until the count trigger is reached (0: reached; UINT64_MAX: no trigger). */
uint64_t rmpi_chan_sel_until_trigger(const rmpi_chan_sel_t *s);

/* Receives and bytes from peer in the last nslots slots, the current one included. */
void rmpi_chan_sel_sum(const rmpi_chan_sel_t *s, int peer, int nslots, uint64_t *n, uint64_t *bytes);
/* Of them, those counted in b (a receive behind an earlier one of the same pass). */
uint64_t rmpi_chan_sel_backlog(const rmpi_chan_sel_t *s, int peer, int nslots);
/* Bytes the selector holds (table, per-peer arrays, scratch). */
size_t rmpi_chan_sel_bytes(const rmpi_chan_sel_t *s);

/* ---- the library's selector (select_run.c, not part of rmpi_chan_select) ---- */

/* NULL when this process selects nothing (no peer can change kind). */
extern rmpi_chan_sel_t *rmpi_chan_lib;
/* rmpi_chan_lib while no trace is written, else NULL: the one load of the common entry. */
extern rmpi_chan_sel_t *rmpi_chan_lib_fast;

/* Parameters from the knob table for a job of nprocs with node_size ranks on this node:
 * 0, or -1 with a sentence naming the knob in why. */
int rmpi_chan_params_from_knobs(rmpi_chan_params_t *p, int nprocs, int node_size, char *why, size_t len);
/* r for peers whose dedicated channel is a ring written with fi_write (RMPI_NET=ofi):
 * gain_ofi (RMPI_CHAN_GAIN_OFI) when it is 0 or more; else gain (RMPI_CHAN_GAIN, measured
 * on shm) when the rings are written by hardware, and 0 when by_target (the receiver's own
 * progress serves the writes: a ring frame then costs more to send than a shared one and
 * saves the receiver nothing, docs/results/channels.md). With r = 0 every dedicated channel
 * only costs (polls, set-up), so FIND_MAP keeps every libfabric peer shared. */
double rmpi_chan_ofi_gain(double gain_ofi, double gain, int by_target);
/* Creates rmpi_chan_lib for this rank (ends the job on a bad knob value): peers of this
 * node over shm get class 0's costs, peers over libfabric class 1's (params.net), every
 * other peer (tcp) and this rank are fixed. After rmpi_net_ready: which rails reach a peer,
 * and r over ofi (rmpi_chan_ofi_gain), depend on the rails. */
void rmpi_chan_lib_init(int rank, int nprocs);
/* The start under RMPI_CHANNELS=adaptive, before the rails open (rmpi_net_env_t.chan_small):
 * 1 when this rank's peers that could hold a ring (its node's over shm, and under
 * RMPI_NET=auto every other node's, which libfabric may reach) number at most
 * RMPI_CHAN_SMALL_JOB (-1: h), so every local peer starts on its ring and the shared queue
 * waits for a switch; 0 otherwise. *why: the sentence saying so (static). Ends the job on a
 * bad knob value, as rmpi_chan_lib_init would. */
int rmpi_chan_small_job(int rank, int nprocs, const char **why);
void rmpi_chan_lib_tick(void);
/* The idle path's tick: polls idle polls made since the last (noted), then the tick. */
void rmpi_chan_lib_idle(unsigned polls);
void rmpi_chan_lib_report(void *file, int rank);
void rmpi_chan_lib_finalize(void);

/* The counts of RMPI_REPORT's selection line, for MPI_T (what a finalized selector
 * counted is kept, so they never go down). */
typedef struct rmpi_chan_totals {
    uint64_t runs, trigger_runs, to_dedicated, to_shared;
    uint64_t skipped; /* interval runs skipped by the check (not in runs) */
} rmpi_chan_totals_t;
void rmpi_chan_lib_totals(rmpi_chan_totals_t *t);

/* RMPI_CHAN_TRACE (docs/trace.md): the open trace of this rank, NULL when off. */
extern struct rmpi_chan_trace *rmpi_chan_trace;

/* The library's count of one frame: a countdown to the next tick, which adds the frames to the
 * total and reads the clock. The tick sets it to 256 frames, or fewer when the count
 * trigger falls due sooner, so the trigger's run comes at its frame wherever the idle
 * path's ticks fell before it (rmpi_chan_lib_tick). */
static inline void rmpi_chan_lib_count(rmpi_chan_sel_t *s, int src, size_t bytes)
{
    rmpi_chan_bump_recv(s, src, bytes);
    if (__builtin_expect(!--s->left, 0))
        rmpi_chan_lib_tick();
}
void rmpi_chan_lib_note_traced(int src, size_t bytes);

/* A frame of src ready and left unread by a pass that ended early (rmpi_net_rx_enough): had
 * the pass read on it would have counted in b when src had a frame earlier in the pass, so
 * it counts in b when the next pass takes it. */
void rmpi_chan_lib_left(int src);

/* The library's progress passes, modulo 2^16: rmpi_chan_lib's pass counter. A global of its
 * own, so that the core's pass is one increment whether a selector exists or not (the
 * selector's own counter behind its pointer took a load and a test more at every pass:
 * 5 instructions, 3-4 passes per ping-pong where the receiver waits). */
extern uint16_t rmpi_chan_passes;
/* The core's progress pass (rmpi_core_progress). */
static inline void rmpi_chan_lib_pass(void) { rmpi_chan_passes++; }

/* The core's frame entry: one frame from src (while a trace is written, out of line, which
 * also reads the clock for each frame). */
static inline void rmpi_chan_lib_note(int src, size_t bytes)
{
    rmpi_chan_sel_t *s = rmpi_chan_lib_fast;
    if (__builtin_expect(!s, 0)) {
        if (__builtin_expect(rmpi_chan_trace != NULL, 0))
            rmpi_chan_lib_note_traced(src, bytes);
        return;
    }
    rmpi_chan_lib_count(s, src, bytes);
}

#endif
