/*
 * scalesim: receive-side connection and buffer memory of MPI channel designs for a job of N
 * processes on N/C nodes of C cores, N up to 2^16 and beyond, without running the job.
 *
 * Each simulated process is fed the receive events (time, source, bytes) of a traffic pattern.
 * RailMPI's design and the adaptive-transport-selection seed's AQPS are decided by RailMPI's
 * real channel selector (src/chan/select.c, linked as rmpi_chan_select: the same statistics
 * table, FIND_MAP, caps and driver as the library); the memory of RailMPI's channels comes from
 * the providers' own formulas (src/net/net_mem.c, linked as rmpi_net_mem) and the knob table's
 * defaults (src/rt/knobs.def). The other designs are counted from the peers and nodes a process
 * talks to, with the per-QP and per-buffer sizes of the seeds (docs/results/scale.md names and
 * sources every parameter).
 *
 * Patterns are symmetric under rotation of the nodes, so only representative ranks are
 * simulated (rank 0, a rank on rank 0's node, a rank on another node, ... each with the weight
 * of the ranks it stands for); see sample_ranks().
 *
 *   scalesim --design NAME|all --pattern NAME|all --procs N --cores C [--trace PREFIX] [--series]
 *   scalesim --sweep [--trace PREFIX] [--series]      every design x pattern x N = 2^6..2^16
 *   scalesim --replay PREFIX                          replay a recorded trace exactly (calibration)
 * One JSON line per result on stdout (bench/README.md lists the keys).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chan/select.h"
#include "net/net_mem.h"

/* ---- the library's defaults, from its knob table (src/rt/knobs.def) ---- */

#define KNOB(name, type, def, layer, choices, doc) static const char *const dflt_##name = def;
#include "rt/knobs.def"
#undef KNOB

static double num(const char *s) { return strtod(s, NULL); }

/* "128k" -> bytes (the knob table's SIZE values) */
static long long size_of(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    return v << (*end == 'k' ? 10 : *end == 'm' ? 20 : *end == 'g' ? 30 : 0);
}

/* ---- parameters of the seeds' designs (docs/results/scale.md, "Memory model") ---- */

/* adaptive-transport-selection, Table 4 (KB read as 1000 bytes: 65535 x 1424 KB = 93 GB, the
 * text's RC-RDMA-OD figure at 2^16) */
#define KB 1000.0
static const double ATS_DC_CREDIT = 296 * KB;  /* DC-sendrecv for credit messages, its QPs */
static const double ATS_DC_SETUP = 512 * KB;   /* DC-sendrecv for establishing channels */
static const double ATS_DC_DATA28 = 3464 * KB; /* DC-RDMA-OD's data channel, 28 DC-QPs */
static const double ATS_DC_DATA4 = 1340 * KB;  /* RC-RDMA-OD's and AQPS's data channel, 4 DC-QPs */
static const double ATS_RC_QP = 1424 * KB;     /* one RC-QP of an RC-RDMA channel */
static const double ATS_RING = 64 * KB;        /* one ring buffer: 16 entries */
static const double ATS_ENTRY = 4096;          /* one ring entry, one data read command */
static const double ATS_CTRL_CMD = 256;        /* one read command of a control channel */
static const int ATS_POOL = 128;               /* pi: RC-QPs AQPS creates at most (Table 2) */
/* not in the seed (assumed): read commands posted per channel */
static const int ATS_DATA_CMDS = 64, ATS_CTRL_CMDS = 16;

/* xrc-scalable: per-QP connection memory, not given by the seed; derived from its one RC-SRQ
 * point (Fig. 4: 400 MB per process fully connected at 32K processes = 32768 QPs) */
static const double XRC_QP = 400e6 / 32768;
static const uint32_t MSRQ_CLASS[6] = {256, 512, 1024, 2048, 4096, 8192}; /* sec. VI-B */
/* not in the seed (assumed): receive buffers posted per SRQ */
static const int SRQ_BUFS = 256;

/* RailMPI over libfabric between nodes (the ofi-* designs). The provider's connection state is
 * what the library cannot see: counted at XRC_QP per connection, in two models:
 *  - rc: ofi_rxm over verbs as today, an RC connection per peer talked to, whatever the kind;
 *  - xrc (mem_per_proc_bytes): the design, shared traffic on one connectionless
 *    endpoint (UD/DC-like: one QP in all) and a dedicated ring's writes on an XRC connection
 *    per remote node holding a dedicated peer (xrc-scalable's SXRC, per node, not per process).
 * The largest frame is tcp;ofi_rxm's (16 KiB + 64, measured), assumed for verbs;ofi_rxm; any
 * frame up to 64 KiB gives the same 256 KiB ring. */
#define OFI_FRAME (16384 + 64)

/* ---- designs and patterns ---- */

/* railmpi: shm on the node, tcp between nodes (a connection per peer, no channel kinds);
 * ofi-*: shm on the node, libfabric between nodes, under RMPI_CHANNELS=adaptive, dedicated
 * and shared: the policies of one library, every peer's kind chosen as the library does */
enum {
    RC_SRQ,
    RC_MSRQ,
    EXRC,
    SXRC,
    RC_RDMA_OD,
    DC_RDMA_OD,
    AQPS,
    RAILMPI,
    OFI_ADAPTIVE,
    OFI_DEDICATED,
    OFI_SHARED,
    NDESIGN
};
static const char *const design_name[NDESIGN] = {"rc-srq",       "rc-msrq",       "exrc",      "sxrc",
                                                 "rc-rdma-od",   "dc-rdma-od",    "aqps",      "railmpi",
                                                 "ofi-adaptive", "ofi-dedicated", "ofi-shared"};
#define IS_OFI(d) ((d) >= OFI_ADAPTIVE)
enum { ONETOALL, ALLTOONE, REPEAT, STENCIL2D, STENCIL3D, ALLTOALL, RANDOM, TRACE, NPATTERN };
static const char *const pattern_name[NPATTERN] = {"onetoall",  "alltoone", "repeat", "stencil2d",
                                                   "stencil3d", "alltoall", "random", "trace"};

#define SIM_NS 4000000000ull /* simulated seconds of traffic per pattern */
#define GAP_NS 1000ull       /* one message per microsecond at the busiest end */
#define US 1000ull

/* message sizes (frame bytes) of the patterns */
#define SMALL 64        /* the seed's 1-byte messages with RailMPI's headers */
#define HALO 2048       /* a stencil face */
#define A2A 900         /* xrc-scalable sec. V: a 900-byte message */
#define RANDOM_PEERS 32 /* xrc-scalable sec. VI-D: 32 random peers, 8 messages each */
#define RANDOM_MSGS 8

/* ---- a recorded trace (docs/trace.md) ---- */

typedef struct trace_ev {
    uint64_t t;
    int peer; /* -1: a selector tick */
    uint32_t bytes; /* a tick's: the idle polls noted with it (`k t idle`; 0: a count tick, or an older trace) */
    int refused; /* -1; else the kind the library refused to switch peer to (an `x` line) */
} trace_ev_t;

typedef struct trace {
    int rank, nprocs, node, selector;
    int *local, nlocal;
    rmpi_chan_params_t prm;
    long long ring_size, class_bytes;
    char classes[256];
    /* the libfabric class (an `ofi` line): its costs, a dedicated peer's rings, its peers */
    int ofi;
    rmpi_chan_cost_t net;
    unsigned long long ofi_ring;
    uint8_t *ofi_peer;
    long long shared_bytes; /* -1: not in the trace (older traces): the shm queue's size */
    trace_ev_t *ev;
    size_t nev, cap;
    uint64_t end;
} trace_t;

static int read_trace(const char *path, trace_t *t)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    memset(t, 0, sizeof *t);
    t->shared_bytes = -1;
    char line[8192];
    int ok = fgets(line, sizeof line, f) && !strcmp(line, "rmpi-chan-trace 1\n");
    while (ok && fgets(line, sizeof line, f)) {
        rmpi_chan_params_t *p = &t->prm;
        unsigned long long a, b;
        int peer;
        char *s;
        if ((line[0] == 'r' || line[0] == 'k' || line[0] == 'x') && line[1] == ' ') {
            if (t->nev == t->cap) {
                t->cap = t->cap ? 2 * t->cap : 4096;
                t->ev = realloc(t->ev, t->cap * sizeof *t->ev);
                if (!t->ev)
                    ok = 0;
            }
            if (!ok)
                break;
            trace_ev_t *e = &t->ev[t->nev++];
            if (line[0] == 'k') {
                int nk = sscanf(line, "k %llu %llu", &a, &b);
                ok = nk >= 1 && (nk == 1 || b <= UINT32_MAX);
                *e = (trace_ev_t){a, -1, nk == 2 ? (uint32_t)b : 0, -1};
            } else if (line[0] == 'x') {
                ok = sscanf(line, "x %llu %d %llu", &a, &peer, &b) == 3 && peer >= 0 && b <= 1;
                *e = (trace_ev_t){a, peer, 0, (int)b};
            } else {
                ok = sscanf(line, "r %llu %d %llu", &a, &peer, &b) == 3 && peer >= 0;
                *e = (trace_ev_t){a, peer, (uint32_t)b, -1};
            }
        } else if (sscanf(line, "rank %d nprocs %d node %d", &t->rank, &t->nprocs, &t->node) == 3) {
            ok = t->nprocs > 0 && t->rank >= 0 && t->rank < t->nprocs;
            t->local = ok ? calloc((size_t)t->nprocs, sizeof *t->local) : NULL;
            ok = ok && t->local;
        } else if (!strncmp(line, "local", 5) && t->local) {
            s = line + 5;
            int n, r;
            while (sscanf(s, "%d%n", &r, &n) == 1 && t->nlocal < t->nprocs) {
                t->local[t->nlocal++] = r;
                s += n;
            }
        } else if (sscanf(line, "selector %d", &t->selector) == 1) {
        } else if (!strncmp(line, "params ", 7)) {
            unsigned long long iv, sl, tr;
            int end = 0;
            ok = sscanf(line,
                        "params r %lg p %lg c %lg s %lg rho %lg gamma %lg h %d tau %d interval_ns %llu slot_ns %llu "
                        "sigma %d trigger %llu%n",
                        &p->r, &p->p, &p->c, &p->s, &p->rho, &p->gamma, &p->h, &p->tau, &iv, &sl, &p->sigma, &tr,
                        &end) == 12;
            p->interval_ns = iv, p->slot_ns = sl, p->trigger = tr;
            /* the table's columns: traces before the bound have none (0: the default); the idle
             * ring's poll cost and the skip count, none before them (0: the seed's model, every
             * interval in full) */
            int end2 = 0;
            if (ok && sscanf(line + end, " sources %d%n", &p->sources, &end2) != 1)
                p->sources = 0;
            if (ok && sscanf(line + end + end2, " q %lg skips %d", &p->q, &p->skips) != 2)
                p->q = 0, p->skips = 0;
        } else if (sscanf(line, "shm ring_size %lld class_bytes %lld classes %255s", &t->ring_size, &t->class_bytes,
                          t->classes) == 3) {
        } else if (!strncmp(line, "ofi ", 4)) {
            rmpi_chan_cost_t *c = &t->net;
            int nf = sscanf(line, "ofi r %lg p %lg c %lg s %lg rho %lg ring_bytes %llu q %lg", &c->r, &c->p, &c->c,
                            &c->s, &c->rho, &t->ofi_ring, &c->q);
            ok = nf >= 6;
            if (nf == 6)
                c->q = 0;
            t->ofi = 1;
        } else if (!strncmp(line, "ofi_peers", 9) && t->local && !t->ofi_peer) {
            t->ofi_peer = calloc((size_t)t->nprocs, 1);
            ok = t->ofi_peer != NULL;
            s = line + 9;
            int n, r;
            while (ok && sscanf(s, "%d%n", &r, &n) == 1) {
                ok = r >= 0 && r < t->nprocs;
                if (ok)
                    t->ofi_peer[r] = 1;
                s += n;
            }
        } else if (sscanf(line, "shared_bytes %llu", &a) == 1) {
            t->shared_bytes = (long long)a;
        } else if (sscanf(line, "end %llu", &a) == 1) {
            t->end = a;
        } else
            ok = 0;
    }
    fclose(f);
    return ok && t->local && t->classes[0] && (!t->ofi || t->ofi_peer) ? 0 : -1;
}

static void free_trace(trace_t *t)
{
    free(t->ev);
    free(t->local);
    free(t->ofi_peer);
}

/* ---- what one simulated process saw ---- */

/* A selector's dedicated channels: in use, being given back (until the next tick), the most at
 * once, and their bytes (peak_bytes counting rings being given back, low_bytes not: the two
 * ends of what the run can reach, see acct_apply); those over libfabric; remote nodes holding
 * one (an XRC connection each; node_ded NULL: not counted) */
typedef struct acct {
    int ded, leaving, peak, ofi, ofi_peak, nodes, nodes_peak, shm_peak;
    size_t bytes, leaving_bytes, peak_bytes, low_bytes;
    int *node_ded;
} acct_t;

typedef struct sim {
    int n, c, me;       /* job, cores per node, this rank */
    uint8_t *src, *dst; /* per rank: 1 heard from / sent to */
    uint8_t *node_seen; /* per node: 1 talked to */
    uint64_t peers_off, nodes_off, srcs_off, events, bytes, shm_bytes;
    /* buffer bytes the received messages consumed, per scheme */
    double buf_srq, buf_msrq, buf_ring4k, buf_rmpi;
    /* the selectors: RailMPI over shm and tcp (its node peers), AQPS, RailMPI over shm and
     * libfabric (every peer: node peers class 0, the others class 1) */
    rmpi_chan_sel_t *rm, *aq, *ro;
    acct_t rma, roa;
    int aq_ded, aq_peak, aq_pool;
    uint8_t *aq_in_pool;
    uint64_t ticks_at;
    /* RailMPI's channel sizes */
    size_t ring_stride, shared_bytes, ofi_ring;
    /* the ofi-* designs: buffer bytes consumed under adaptive, dedicated, shared; remote nodes
     * heard from (ofi-dedicated: an XRC connection each) */
    double buf_ofi[3];
    uint8_t *node_src;
    uint64_t nodes_src;
    int ncls;
    uint32_t csize[RMPI_SHM_MAX_CLASSES];
    /* tcp receive buffers of the peers off the node (railmpi): a peer heard from within
     * the hold time (RMPI_TCP_BUF_IDLE plus the sweep) keeps the buffer its largest frame
     * since it was quiet grew; quiet peers are in an LRU list by last frame, oldest first */
    uint64_t hold_ns, *tcp_last;
    uint32_t *tcp_frame;
    int *lru_prev, *lru_next, lru_head, lru_tail;
    double tcp_live, tcp_peak;
    /* series of dedicated channels (railmpi), for --series */
    int series;
    double *ser_t;
    int *ser_n, nser, capser;
    /* replay: the switches the traced run refused at the tick being replayed */
    const trace_ev_t *refused;
    size_t nrefused;
    /* replay: each peer's dedicated ring bytes (shm ring or libfabric rings), and the
     * bytes held by rings in use or being left, now and at the peak */
    size_t *ring_of;
} sim_t;

static int node_of(const sim_t *s, int r) { return r / s->c; }

/* A ring given back is freed when its switch completes (J1-J5, src/chan), after the rings
 * the same run sets up are made: until the next tick it still counts toward the peak. In the
 * library both ends are asynchronous (a ring counts when the receiver reads the marker that
 * makes it active and stops counting when it reads the one that retires it), so a run whose
 * old ring's marker arrives first never holds both: low_bytes is that peak. */
static int acct_apply(sim_t *s, acct_t *a, int peer, rmpi_chan_kind_t kind)
{
    /* a replay refuses what the traced run's mechanism refused at this tick (docs/trace.md) */
    for (size_t i = 0; i < s->nrefused; i++)
        if (s->refused[i].peer == peer && s->refused[i].refused == (int)kind)
            return 1;
    int off = !s->ring_of && node_of(s, peer) != node_of(s, s->me);
    size_t ring = s->ring_of ? s->ring_of[peer] : off ? s->ofi_ring : s->ring_stride;
    int up = kind == RMPI_CHAN_DEDICATED;
    if (up)
        a->ded++, a->bytes += ring;
    else
        a->ded--, a->leaving++, a->bytes -= ring, a->leaving_bytes += ring;
    a->ofi += off ? (up ? 1 : -1) : 0;
    if (off && a->node_ded) {
        int *nd = &a->node_ded[node_of(s, peer)];
        a->nodes += up ? !(*nd)++ : !--(*nd) ? -1 : 0;
    }
    if (a->ded + a->leaving > a->peak)
        a->peak = a->ded + a->leaving;
    if (a->bytes + a->leaving_bytes > a->peak_bytes)
        a->peak_bytes = a->bytes + a->leaving_bytes;
    if (a->bytes > a->low_bytes)
        a->low_bytes = a->bytes;
    if (a->ofi > a->ofi_peak)
        a->ofi_peak = a->ofi;
    if (a->ded - a->ofi > a->shm_peak)
        a->shm_peak = a->ded - a->ofi;
    if (a->nodes > a->nodes_peak)
        a->nodes_peak = a->nodes;
    return 0;
}

static int rm_apply(void *ctx, int peer, rmpi_chan_kind_t kind)
{
    sim_t *s = ctx;
    return acct_apply(s, &s->rma, peer, kind);
}

static int ro_apply(void *ctx, int peer, rmpi_chan_kind_t kind)
{
    sim_t *s = ctx;
    return acct_apply(s, &s->roa, peer, kind);
}

static void acct_tick(sim_t *s, acct_t *a, rmpi_chan_sel_t *sel, uint64_t t,
                      int (*apply)(void *, int, rmpi_chan_kind_t))
{
    a->leaving = 0;
    a->leaving_bytes = 0;
    rmpi_chan_sel_tick(sel, t, apply, s);
}

static void rm_tick(sim_t *s, rmpi_chan_sel_t *sel, uint64_t t) { acct_tick(s, &s->rma, sel, t, rm_apply); }

/* AQPS keeps the RC-QPs it created in a pool of pi and creates no more once it is full
 * (adaptive-transport-selection sec. 3.4): a peer outside a full pool is refused. */
static int aq_apply(void *ctx, int peer, rmpi_chan_kind_t kind)
{
    sim_t *s = ctx;
    if (kind == RMPI_CHAN_DEDICATED && !s->aq_in_pool[peer]) {
        if (s->aq_pool == ATS_POOL)
            return 1;
        s->aq_in_pool[peer] = 1;
        s->aq_pool++;
    }
    s->aq_ded += kind == RMPI_CHAN_DEDICATED ? 1 : -1;
    if (s->aq_ded > s->aq_peak)
        s->aq_peak = s->aq_ded;
    return 0;
}

/* RailMPI's selector parameters for a job of n with c per node: the library's knob defaults
 * (what rmpi_chan_params_from_knobs gives without RMPI_CHAN_* set). */
static void railmpi_params(rmpi_chan_params_t *p, int n, int c)
{
    *p = (rmpi_chan_params_t){0};
    p->r = num(dflt_CHAN_GAIN);
    p->p = num(dflt_CHAN_POLL_COST);
    p->c = 0;
    p->s = 1;
    p->rho = num(dflt_CHAN_SETUP_COST);
    p->q = num(dflt_CHAN_IDLE_POLL_COST) >= 0 ? num(dflt_CHAN_IDLE_POLL_COST) : RMPI_CHAN_SHM_IDLE_POLL_NS;
    p->gamma = num(dflt_CHAN_GAMMA);
    p->h = rmpi_chan_default_h(n, c);
    p->tau = p->h > 0 ? p->h : 1;
    p->interval_ns = (uint64_t)num(dflt_CHAN_INTERVAL) * 1000000ull;
    p->slot_ns = (uint64_t)num(dflt_CHAN_SLOT) * 1000000ull;
    p->sigma = rmpi_chan_default_sigma(n, p->interval_ns, p->slot_ns);
    p->trigger = (uint64_t)num(dflt_CHAN_TRIGGER);
    p->skips = (int)num(dflt_CHAN_SKIPS);
}

/* The libfabric class (class 1) as rmpi_chan_lib_init's ofi_costs sets it on one rail of
 * RDMA hardware (verbs, where the ring's writes need no progress at the target): r is
 * RMPI_CHAN_GAIN (what RMPI_CHAN_GAIN_OFI = -1 gives there), p and rho the _OFI knobs, c the
 * credit frame every quarter ring of one-cell frames. */
static void railmpi_ofi_params(rmpi_chan_params_t *p, int n, int c, size_t ofi_ring)
{
    railmpi_params(p, n, c);
    p->net = (rmpi_chan_cost_t){num(dflt_CHAN_GAIN), num(dflt_CHAN_POLL_COST_OFI), num(dflt_CHAN_CREDIT_COST_OFI),
                                (double)(ofi_ring / (4 * 64)), num(dflt_CHAN_SETUP_COST_OFI),
                                num(dflt_CHAN_IDLE_POLL_COST) >= 0 ? num(dflt_CHAN_IDLE_POLL_COST)
                                                                    : num(dflt_CHAN_POLL_COST_OFI)};
}

/* AQPS's, Table 2 of the seed (the slot is not given: RailMPI's 50 ms is assumed; no count
 * trigger: the seed runs every interval) */
static void aqps_params(rmpi_chan_params_t *p, int n)
{
    *p = (rmpi_chan_params_t){.r = 150, .p = 10, .c = 300, .s = 16, .rho = 10000, .gamma = 25, .h = 26, .tau = 256};
    p->interval_ns = 1000000000ull;
    p->slot_ns = 50000000ull;
    int lg = 0;
    while ((1 << lg) < n)
        lg++;
    p->sigma = n <= 1024 ? 2048 : 2048 / ((lg - 10) * 2);
    p->trigger = 0;
}

static int aqps_sigma(int n)
{
    rmpi_chan_params_t p;
    aqps_params(&p, n);
    return p.sigma;
}

static void sim_fail(const char *what)
{
    fprintf(stderr, "scalesim: %s\n", what);
    exit(1);
}

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p)
        sim_fail("out of memory");
    return p;
}

/* shm sizes from the library's formulas with the given knob values */
static void shm_sizes(sim_t *s, long long ring_size, const char *classes, long long class_bytes)
{
    uint32_t ncells;
    size_t max_frame;
    s->ring_stride = rmpi_shm_ring_stride((size_t)ring_size, &ncells, &max_frame);
    s->ncls = rmpi_shm_parse_classes(classes, s->csize);
    if (s->ncls < 1)
        sim_fail("bad RMPI_CHAN_CLASSES value");
    s->shared_bytes = rmpi_shm_shared_bytes(s->csize, s->ncls, (size_t)class_bytes, max_frame);
    s->ofi_ring = rmpi_ofi_ring_bytes((size_t)size_of(dflt_OFI_RING_SIZE), OFI_FRAME, NULL);
}

static void sim_init(sim_t *s, int n, int c, int me, int series)
{
    memset(s, 0, sizeof *s);
    s->n = n, s->c = c, s->me = me, s->series = series;
    s->src = xcalloc((size_t)n, 1);
    s->dst = xcalloc((size_t)n, 1);
    s->node_seen = xcalloc((size_t)(n / c + 1), 1);
    s->aq_in_pool = xcalloc((size_t)n, 1);
    s->hold_ns = rmpi_tcp_buf_hold_ns((uint64_t)num(dflt_TCP_BUF_IDLE) * 1000000ull);
    s->tcp_last = xcalloc((size_t)n, sizeof *s->tcp_last);
    s->tcp_frame = xcalloc((size_t)n, sizeof *s->tcp_frame);
    s->lru_prev = xcalloc((size_t)n, sizeof *s->lru_prev);
    s->lru_next = xcalloc((size_t)n, sizeof *s->lru_next);
    s->lru_head = s->lru_tail = -1;
    shm_sizes(s, size_of(dflt_SHM_RING_SIZE), dflt_CHAN_CLASSES, size_of(dflt_CHAN_CLASS_BYTES));
    rmpi_chan_params_t p;
    railmpi_params(&p, n, c);
    /* the library selects only among the peers of its node over shared memory */
    if (c > 1 && p.h > 0) {
        s->rm = rmpi_chan_sel_create(n, &p, 0);
        if (!s->rm)
            sim_fail("cannot create RailMPI's selector");
        for (int r = 0; r < n; r++)
            if (r == me || node_of(s, r) != node_of(s, me))
                rmpi_chan_sel_fix(s->rm, r, RMPI_CHAN_DEDICATED);
    }
    aqps_params(&p, n);
    s->aq = rmpi_chan_sel_create(n, &p, 0);
    if (!s->aq)
        sim_fail("cannot create AQPS's selector");
    rmpi_chan_sel_fix(s->aq, me, RMPI_CHAN_DEDICATED);
    /* over libfabric the library selects among every peer (RMPI_NET=auto with an ofi rail of
     * RDMA hardware between nodes): this node's in class 0, the others in class 1 */
    railmpi_ofi_params(&p, n, c, s->ofi_ring);
    if (p.h > 0) {
        s->ro = rmpi_chan_sel_create(n, &p, 0);
        if (!s->ro)
            sim_fail("cannot create RailMPI's selector over libfabric");
        rmpi_chan_sel_fix(s->ro, me, RMPI_CHAN_DEDICATED);
        for (int r = 0; r < n; r++)
            if (r != me && node_of(s, r) != node_of(s, me))
                rmpi_chan_sel_class(s->ro, r, 1);
    }
    s->roa.node_ded = xcalloc((size_t)(n / c + 1), sizeof *s->roa.node_ded);
    s->node_src = xcalloc((size_t)(n / c + 1), 1);
}

static void sim_free(sim_t *s)
{
    free(s->src), free(s->dst), free(s->node_seen), free(s->aq_in_pool);
    free(s->tcp_last), free(s->tcp_frame), free(s->lru_prev), free(s->lru_next);
    free(s->ser_t), free(s->ser_n), free(s->roa.node_ded), free(s->node_src);
    rmpi_chan_sel_destroy(s->rm);
    rmpi_chan_sel_destroy(s->aq);
    rmpi_chan_sel_destroy(s->ro);
}

static void talk(sim_t *s, int peer)
{
    if (node_of(s, peer) == node_of(s, s->me))
        return;
    if (!s->src[peer] && !s->dst[peer])
        s->peers_off++;
    if (!s->node_seen[node_of(s, peer)]) {
        s->node_seen[node_of(s, peer)] = 1;
        s->nodes_off++;
    }
}

static void sent_to(sim_t *s, int peer)
{
    if (peer == s->me || s->dst[peer])
        return;
    talk(s, peer);
    s->dst[peer] = 1;
}

static double class_buf(const uint32_t *cls, int n, uint32_t bytes)
{
    for (int i = 0; i < n; i++)
        if (bytes <= cls[i])
            return cls[i];
    return ceil((double)bytes / cls[n - 1]) * cls[n - 1];
}

static void series_point(sim_t *s, uint64_t t)
{
    if (!s->series || (s->nser && s->ser_n[s->nser - 1] == s->rma.ded))
        return;
    if (s->nser == s->capser) {
        s->capser = s->capser ? 2 * s->capser : 64;
        s->ser_t = realloc(s->ser_t, (size_t)s->capser * sizeof *s->ser_t);
        s->ser_n = realloc(s->ser_n, (size_t)s->capser * sizeof *s->ser_n);
        if (!s->ser_t || !s->ser_n)
            sim_fail("out of memory");
    }
    s->ser_t[s->nser] = (double)t / 1e9;
    s->ser_n[s->nser++] = s->rma.ded;
}

static void tick(sim_t *s, uint64_t t)
{
    if (s->rm) {
        rm_tick(s, s->rm, t);
        series_point(s, t);
    }
    rmpi_chan_sel_tick(s->aq, t, aq_apply, s);
    if (s->ro)
        acct_tick(s, &s->roa, s->ro, t, ro_apply);
}

static double tcp_buf(uint32_t frame) { return (double)(rmpi_tcp_peer_bytes(frame) - rmpi_tcp_peer_bytes(0)); }

static void lru_unlink(sim_t *s, int p)
{
    int a = s->lru_prev[p], b = s->lru_next[p];
    if (a >= 0)
        s->lru_next[a] = b;
    else
        s->lru_head = b;
    if (b >= 0)
        s->lru_prev[b] = a;
    else
        s->lru_tail = a;
}

/* A frame of bytes from the off-node peer src at time t: the buffers of peers quiet for the
 * hold time are freed first, then src's grows to fit the frame (rmpi_tcp_rx_cap: frames
 * that fit; a peer that streams faster than it is read grows further, which the pattern
 * cannot say). */
static void tcp_recv(sim_t *s, uint64_t t, int src, uint32_t bytes)
{
    while (s->lru_head >= 0 && s->tcp_last[s->lru_head] + s->hold_ns <= t) {
        int p = s->lru_head;
        s->tcp_live -= tcp_buf(s->tcp_frame[p]);
        s->tcp_frame[p] = 0;
        lru_unlink(s, p);
    }
    uint32_t f = s->tcp_frame[src];
    if (f)
        lru_unlink(s, src);
    uint32_t g = bytes > f ? bytes : f;
    s->tcp_live += tcp_buf(g ? g : 1) - (f ? tcp_buf(f) : 0);
    s->tcp_frame[src] = g ? g : 1;
    s->tcp_last[src] = t;
    s->lru_prev[src] = s->lru_tail, s->lru_next[src] = -1;
    if (s->lru_tail >= 0)
        s->lru_next[s->lru_tail] = src;
    else
        s->lru_head = src;
    s->lru_tail = src;
    if (s->tcp_live > s->tcp_peak)
        s->tcp_peak = s->tcp_live;
}

/* One received message of bytes from src at time t. */
static void recv_ev(sim_t *s, uint64_t t, int src, uint32_t bytes)
{
    if (src == s->me)
        return;
    int off = node_of(s, src) != node_of(s, s->me);
    if (!s->src[src]) {
        talk(s, src);
        s->src[src] = 1;
        s->srcs_off += off;
        if (off && !s->node_src[node_of(s, src)])
            s->node_src[node_of(s, src)] = 1, s->nodes_src++;
    }
    s->events++;
    s->bytes += bytes;
    s->buf_srq += ceil(bytes / 8192.0) * 8192;
    s->buf_msrq += class_buf(MSRQ_CLASS, 6, bytes);
    s->buf_ring4k += ceil(bytes / ATS_ENTRY) * ATS_ENTRY;
    if (node_of(s, src) == node_of(s, s->me))
        s->shm_bytes += bytes;
    if (node_of(s, src) != node_of(s, s->me))
        tcp_recv(s, t, src, bytes); /* a byte stream read into the peer's buffer: not a buffer per message */
    else if (s->rm && rmpi_chan_sel_kind(s->rm, src) == RMPI_CHAN_DEDICATED)
        s->buf_rmpi += ceil((8.0 + bytes) / 64) * 64; /* ring cells: 64 bytes, 8-byte header */
    else
        s->buf_rmpi += class_buf(s->csize, s->ncls, bytes);
    /* the ofi-* designs: a ring's 64-byte cells, shm's size classes, or libfabric's
     * multi-receive buffers where each frame takes its own size (the tail a released buffer
     * leaves is not modelled) */
    double cells = ceil((8.0 + bytes) / 64) * 64, shared = off ? bytes : class_buf(s->csize, s->ncls, bytes);
    s->buf_ofi[0] += s->ro && rmpi_chan_sel_kind(s->ro, src) == RMPI_CHAN_DEDICATED ? cells : shared;
    s->buf_ofi[1] += cells;
    s->buf_ofi[2] += shared;
    if (s->rm)
        rmpi_chan_note_recv(s->rm, src, bytes, t);
    rmpi_chan_note_recv(s->aq, src, bytes, t);
    if (s->ro)
        rmpi_chan_note_recv(s->ro, src, bytes, t);
    if ((s->events & 255) == 0)
        tick(s, t);
}

/* ---- the patterns: the receive events of rank s->me ---- */

/* the most even grid of n ranks in dims dimensions: d[0] * ... * d[dims-1] = n */
static void grid_dim(int n, int dims, int *d)
{
    for (int i = 0; i < dims - 1; i++) {
        int k = dims - i, best = 1;
        for (int f = 1; f <= n; f++) {
            if (pow(f, k) > n * 1.000001)
                break;
            if (n % f == 0)
                best = f;
        }
        d[i] = best;
        n /= best;
    }
    d[dims - 1] = n;
}

/* the neighbours of r on a periodic grid of dims dimensions, row-major */
static int neighbours(int n, int dims, int r, int *nb)
{
    int d[3], co[3], k = 0;
    grid_dim(n, dims, d);
    int rest = r;
    for (int i = dims - 1; i >= 0; i--)
        co[i] = rest % d[i], rest /= d[i];
    for (int i = 0; i < dims; i++)
        for (int dir = -1; dir <= 1; dir += 2) {
            int c2[3] = {co[0], co[1], co[2]};
            c2[i] = (c2[i] + dir + d[i]) % d[i];
            int q = 0;
            for (int j = 0; j < dims; j++)
                q = q * d[j] + c2[j];
            if (q != r)
                nb[k++] = q;
        }
    return k;
}

static uint64_t rng_next(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

/* onetoall / alltoone phase from t0 to t1 */
static void phase(sim_t *s, int which, uint64_t t0, uint64_t t1)
{
    int n = s->n, me = s->me;
    if (which == ONETOALL) {
        /* rank 0 sends to 1..n-1 in turn, one message per microsecond */
        if (me == 0) {
            for (int p = 1; p < n; p++)
                sent_to(s, p);
            return;
        }
        for (uint64_t t = t0 + (uint64_t)(me - 1) * GAP_NS; t < t1; t += (uint64_t)(n - 1) * GAP_NS)
            recv_ev(s, t, 0, SMALL);
    } else {
        if (me != 0) {
            sent_to(s, 0);
            return;
        }
        int p = 1;
        for (uint64_t t = t0; t < t1; t += GAP_NS, p = p == n - 1 ? 1 : p + 1)
            recv_ev(s, t, p, SMALL);
    }
}

static void run_trace(sim_t *s, const trace_t *tr, int ntr);

static void run_pattern(sim_t *s, int pat, const trace_t *tr, int ntr)
{
    int n = s->n, me = s->me, nb[6];
    uint64_t t = 0;
    switch (pat) {
    case ONETOALL:
    case ALLTOONE: phase(s, pat, 0, SIM_NS); break;
    case REPEAT:
        /* onetoall then alltoone, five times (the seed's repeat) */
        for (int i = 0; i < 10; i++)
            phase(s, i % 2 ? ALLTOONE : ONETOALL, SIM_NS / 10 * (uint64_t)i, SIM_NS / 10 * (uint64_t)(i + 1));
        break;
    case STENCIL2D:
    case STENCIL3D: {
        int k = neighbours(n, pat == STENCIL2D ? 2 : 3, me, nb);
        for (int i = 0; i < k; i++)
            sent_to(s, nb[i]);
        for (int i = 0; t < SIM_NS; t += GAP_NS, i = (i + 1) % k)
            recv_ev(s, t, nb[i], HALO);
        break;
    }
    case ALLTOALL:
        for (int p = 0; p < n; p++)
            sent_to(s, p);
        for (int k = 1; t < SIM_NS; t += GAP_NS, k = k == n - 1 ? 1 : k + 1)
            recv_ev(s, t, (me - k + n) % n, A2A);
        break;
    case RANDOM: {
        /* every iteration: messages from 32 random peers, 8 each, sizes 64 B .. 8 KiB; sends to
         * as many (the same distribution by symmetry) */
        uint64_t x = 0x9e3779b97f4a7c15ull ^ (uint64_t)me * 0x100000001b3ull;
        int peers[RANDOM_PEERS];
        while (t < SIM_NS) {
            for (int i = 0; i < RANDOM_PEERS; i++) {
                peers[i] = (int)(rng_next(&x) % (uint64_t)(n - 1));
                peers[i] += peers[i] >= me;
                int d = (int)(rng_next(&x) % (uint64_t)(n - 1));
                sent_to(s, d + (d >= me));
            }
            for (int m = 0; m < RANDOM_MSGS; m++)
                for (int i = 0; i < RANDOM_PEERS && t < SIM_NS; i++, t += GAP_NS)
                    recv_ev(s, t, peers[i], (uint32_t)(64 + rng_next(&x) % 8129));
        }
        break;
    }
    case TRACE: run_trace(s, tr, ntr); break;
    }
    tick(s, SIM_NS + 1);
}

/* A trace of ntr ranks replayed at n: rank me plays the trace of rank me / (n / ntr) (its
 * block); each recorded peer stands for the block of n / ntr ranks at the same distance,
 * whose members are used in turn, so all-to-all traffic stays all-to-all and a neighbour
 * stays a neighbour block. Times are kept. */
static void run_trace(sim_t *s, const trace_t *tr, int ntr)
{
    int scale = s->n / ntr, r0 = s->me / scale;
    const trace_t *t = &tr[r0];
    uint32_t *turn = xcalloc((size_t)ntr, sizeof *turn);
    for (size_t i = 0; i < t->nev; i++) {
        const trace_ev_t *e = &t->ev[i];
        if (e->peer < 0 || e->peer >= ntr || e->refused >= 0)
            continue;
        int d = (e->peer - r0 + ntr) % ntr;
        int p = (s->me + d * scale + (int)(turn[e->peer]++ % (uint32_t)scale)) % s->n;
        if (p == s->me)
            p = (p + 1) % s->n;
        sent_to(s, p); /* traffic is taken as symmetric */
        recv_ev(s, e->t, p, e->bytes);
    }
    free(turn);
}

/* ---- memory of each design for one simulated process ---- */

typedef struct mem {
    double conn, buf; /* bytes set up: connection state, receive buffers */
    double got, used; /* bytes received, and receive-buffer bytes they took */
} mem_t;

static double railmpi_table(const sim_t *s) { return s->rm ? (double)rmpi_chan_sel_bytes(s->rm) : 0; }

static double railmpi_tcp(const sim_t *s)
{
    return (double)s->peers_off * (double)rmpi_tcp_peer_bytes(0) + s->tcp_peak;
}

/* RailMPI with libfabric between nodes, under one policy (OFI_ADAPTIVE, _DEDICATED, _SHARED):
 * the parts of its receive-side memory */
typedef struct ofi_parts {
    double per_rank;                 /* the library's peer table (peer_table) and the selector's per-peer arrays */
    double peer_table;               /* the provider's sparse peer table: index and the chunks of the peers talked to */
    double table;                    /* the statistics' columns (adaptive) */
    double rx;                       /* one rail's shared receive buffers (multi-receive) */
    double queue;                    /* this node's shared queue (none under dedicated: shm.c) */
    double rings;                    /* the most ring bytes held at once, shm rings and rings written with fi_write */
    int rings_shm, rings_ofi, nodes; /* the most rings of each kind in use; remote nodes holding one */
    double conn_xrc, conn_rc;        /* the provider's connections in the two models (OFI_FRAME's comment) */
} ofi_parts_t;

/* The provider's peer table (src/net/ofi/ofi_peer.c): its index, and a chunk for each block
 * of rmpi_ofi_peer_chunk() ranks holding a peer off the node that this process sent to or
 * heard from (all: every peer off the node, the design's worst case). Node peers go over
 * shm and never touch it. */
static double ofi_peer_table(const sim_t *s, int all)
{
    int k = rmpi_ofi_peer_chunk(), chunks = 0;
    for (int first = 0; first < s->n; first += k) {
        int used = 0;
        for (int r = first; r < first + k && r < s->n && !used; r++)
            used = node_of(s, r) != node_of(s, s->me) && (all || s->src[r] || s->dst[r]);
        chunks += used;
    }
    return (double)rmpi_ofi_peer_table_model(s->n, chunks);
}

static ofi_parts_t ofi_parts(const sim_t *s, int d)
{
    ofi_parts_t o = {0};
    o.peer_table = ofi_peer_table(s, 0);
    o.per_rank = o.peer_table;
    o.rx = (double)rmpi_ofi_rail_rx_bytes(size_of(dflt_OFI_MRECV), (long long)num(dflt_OFI_RX_BUFS));
    o.conn_rc = (double)s->peers_off * XRC_QP;
    double queue = s->c > 1 ? (double)s->shared_bytes : 0;
    switch (d) {
    case OFI_ADAPTIVE: {
        /* the selector's bytes: its per-peer arrays in per_rank, its columns in table */
        rmpi_chan_sel_t empty = {0};
        double sel = s->ro ? (double)rmpi_chan_sel_bytes(s->ro) : 0;
        if (s->ro) {
            empty.npeers = s->ro->npeers, empty.prm = s->ro->prm;
            o.per_rank += (double)rmpi_chan_sel_bytes(&empty);
            o.table = sel - (double)rmpi_chan_sel_bytes(&empty);
        }
        o.queue = queue;
        o.rings = (double)s->roa.peak_bytes;
        o.rings_ofi = s->roa.ofi_peak, o.rings_shm = s->roa.shm_peak;
        o.nodes = s->roa.nodes_peak;
        break;
    }
    case OFI_DEDICATED:
        /* every node peer's shm ring from the start, no shared queue (shm.c); a libfabric peer's
         * ring at its first frame, which comes through the shared buffers */
        o.rings_shm = s->c - 1;
        o.rings_ofi = (int)s->srcs_off;
        o.rings = (double)(s->c - 1) * (double)s->ring_stride + (double)s->srcs_off * (double)s->ofi_ring;
        o.nodes = (int)s->nodes_src;
        break;
    case OFI_SHARED: o.queue = queue; break;
    }
    o.conn_xrc = (1.0 + o.nodes) * XRC_QP;
    return o;
}

static mem_t design_mem(const sim_t *s, int d)
{
    if (IS_OFI(d)) {
        ofi_parts_t o = ofi_parts(s, d);
        return (mem_t){o.per_rank + o.table + o.conn_xrc, o.rx + o.queue + o.rings, (double)s->bytes,
                       s->buf_ofi[d - OFI_ADAPTIVE]};
    }
    double srq = SRQ_BUFS * 8192.0, msrq = 0;
    for (int i = 0; i < 6; i++)
        msrq += SRQ_BUFS * (double)MSRQ_CLASS[i];
    double posted = ATS_DATA_CMDS * ATS_ENTRY + 2 * ATS_CTRL_CMDS * ATS_CTRL_CMD;
    double table = (double)aqps_sigma(s->n) * 8 * s->n; /* the seed's table: sigma x 8 bytes x n (sec. 4.2) */
    double b = (double)s->bytes, ats = ATS_DC_CREDIT + ATS_DC_SETUP;
    switch (d) {
    case RC_SRQ: return (mem_t){s->peers_off * XRC_QP, srq, b, s->buf_srq};
    case RC_MSRQ: return (mem_t){6 * s->peers_off * XRC_QP, msrq, b, s->buf_msrq};
    case EXRC: return (mem_t){s->peers_off * XRC_QP, msrq, b, s->buf_msrq};
    case SXRC: return (mem_t){s->nodes_off * XRC_QP, msrq, b, s->buf_msrq};
    case RC_RDMA_OD:
        /* an RC connection has a QP at both ends; the ring is the receiver's */
        return (mem_t){ats + ATS_DC_DATA4 + s->peers_off * ATS_RC_QP, s->srcs_off * ATS_RING + posted, b,
                       s->buf_ring4k};
    case DC_RDMA_OD: return (mem_t){ats + ATS_DC_DATA28, s->srcs_off * ATS_RING + posted, b, s->buf_ring4k};
    case AQPS:
        /* counted as the seed does: the RC-QPs of the channels this process receives on */
        return (mem_t){ats + ATS_DC_DATA4 + s->aq_pool * ATS_RC_QP + table, s->aq_peak * ATS_RING + posted, b,
                       s->buf_ring4k};
    }
    /* RAILMPI: tcp's state per peer talked to and the most its receive buffers held at once,
     * the statistics, the shared queue and the rings; efficiency over the frames shared
     * memory carried (tcp reads a byte stream) */
    return (mem_t){railmpi_tcp(s) + railmpi_table(s),
                   (s->c > 1 ? (double)s->shared_bytes : 0) + (double)s->rma.peak * (double)s->ring_stride,
                   (double)s->shm_bytes, s->buf_rmpi};
}

/* The same over libfabric between nodes: its peer table (the peers off the node talked to)
 * and one rail's receive buffers instead of tcp's per peer; the provider's own is not counted. */
static double railmpi_ofi_mem(const sim_t *s)
{
    mem_t m = design_mem(s, RAILMPI);
    return m.conn - railmpi_tcp(s) + m.buf + ofi_peer_table(s, 0) +
           (double)rmpi_ofi_rail_rx_bytes(size_of(dflt_OFI_MRECV), (long long)num(dflt_OFI_RX_BUFS));
}

/* The design's worst case whatever the pattern, connection part (*conn) and all: every peer
 * off the node talks to this process (the seeds' fully connected figures), AQPS with its
 * pool of pi RC-QPs created, RailMPI with h rings. */
static double design_bound(const sim_t *s, int d, double *conn)
{
    int n = s->n, c = s->c;
    double nodes = n / c - 1, peers = (double)n - c;
    double posted = ATS_DATA_CMDS * ATS_ENTRY + 2 * ATS_CTRL_CMDS * ATS_CTRL_CMD;
    double msrq = 0, buf = 0;
    for (int i = 0; i < 6; i++)
        msrq += SRQ_BUFS * (double)MSRQ_CLASS[i];
    rmpi_chan_params_t p;
    switch (d) {
    case RC_SRQ: *conn = peers * XRC_QP, buf = SRQ_BUFS * 8192.0; break;
    case EXRC: *conn = peers * XRC_QP, buf = msrq; break;
    case RC_MSRQ: *conn = 6 * peers * XRC_QP, buf = msrq; break;
    case SXRC: *conn = nodes * XRC_QP, buf = msrq; break;
    case RC_RDMA_OD:
        *conn = ATS_DC_CREDIT + ATS_DC_SETUP + ATS_DC_DATA4 + peers * ATS_RC_QP, buf = peers * ATS_RING + posted;
        break;
    case DC_RDMA_OD: *conn = ATS_DC_CREDIT + ATS_DC_SETUP + ATS_DC_DATA28, buf = peers * ATS_RING + posted; break;
    case AQPS:
        aqps_params(&p, n);
        *conn = ATS_DC_CREDIT + ATS_DC_SETUP + ATS_DC_DATA4 + ATS_POOL * ATS_RC_QP + (double)p.sigma * 8 * n;
        buf = p.h * ATS_RING + posted;
        break;
    case RAILMPI:
        railmpi_params(&p, n, c);
        *conn = peers * (double)rmpi_tcp_peer_bytes_max() + railmpi_table(s); /* every peer streaming */
        buf = c > 1 ? (double)s->shared_bytes + (p.h < c - 1 ? p.h : c - 1) * (double)s->ring_stride : 0;
        break;
    default: {
        /* over libfabric (xrc model): adaptive with h rings in use and as many being given back,
         * each on its own node; dedicated with every peer's ring */
        ofi_parts_t o = ofi_parts(s, d);
        o.per_rank += ofi_peer_table(s, 1) - o.peer_table; /* every peer off the node talks */
        double big = s->ring_stride > s->ofi_ring ? (double)s->ring_stride : (double)s->ofi_ring;
        railmpi_params(&p, n, c);
        int h2 = 2 * p.h < n - 1 ? 2 * p.h : n - 1;
        double rings = d == OFI_ADAPTIVE    ? h2 * big
                       : d == OFI_DEDICATED ? (c - 1) * (double)s->ring_stride + peers * (double)s->ofi_ring
                                            : 0;
        double nd = d == OFI_ADAPTIVE ? (h2 < nodes ? h2 : nodes) : d == OFI_DEDICATED ? nodes : 0;
        *conn = o.per_rank + o.table + (1 + nd) * XRC_QP;
        buf = o.rx + (d == OFI_DEDICATED || c < 2 ? 0 : (double)s->shared_bytes) + rings;
        break;
    }
    }
    return *conn + buf;
}

/* ---- representative ranks ---- */

typedef struct sample {
    int rank;
    double weight; /* ranks it stands for */
} sample_t;

/* Every pattern is the same seen from any node but rank 0's (onetoall, alltoone, repeat) and
 * the same for every rank of a node up to where its neighbours fall (stencils): these ranks
 * stand for all (the weights sum to n). */
static int sample_ranks(int pat, int n, int c, int ntr, sample_t *out)
{
    int k = 0;
    switch (pat) {
    case ONETOALL:
    case ALLTOONE:
    case REPEAT:
        out[k++] = (sample_t){0, 1};
        if (c > 1)
            out[k++] = (sample_t){1, c - 1};
        if (n > c)
            out[k++] = (sample_t){c, n - c};
        break;
    case STENCIL2D:
    case STENCIL3D:
        /* the first and last rank of a node have a row neighbour on another node, the others
         * do not; node 0's ranks stand for every node's (the grid is periodic) */
        out[k++] = (sample_t){0, c > 1 ? 2.0 * n / c : n};
        if (c > 2)
            out[k++] = (sample_t){1, (double)(c - 2) * n / c};
        break;
    case ALLTOALL: out[k++] = (sample_t){0, n}; break;
    case RANDOM:
        out[k++] = (sample_t){0, n / 2.0};
        out[k++] = (sample_t){n / 2 + 1 < n ? n / 2 + 1 : 0, n / 2.0};
        break;
    case TRACE:
        for (int i = 0; i < ntr; i++)
            out[k++] = (sample_t){i * (n / ntr), (double)n / ntr};
        break;
    }
    return k;
}

/* ---- one pattern at one size: a JSON line per design ---- */

typedef struct result {
    double mem_max, mem_mean, conn_max, buf_max, got, used, ded_peak, table, bound, bound_conn, ofi_max, tcp_peak;
    ofi_parts_t ofi; /* the ofi-* designs: the parts of the busiest sample */
    double mem_rc;   /* ... and its memory with an RC connection per peer talked to */
} result_t;

static void print_series(const sim_t *s, int pat)
{
    printf("{\"series\": \"dedicated_channels\", \"design\": \"railmpi\", \"pattern\": \"%s\", \"procs\": %d, "
           "\"cores\": %d, \"rank\": %d, \"points\": [",
           pattern_name[pat], s->n, s->c, s->me);
    for (int i = 0; i < s->nser; i++)
        printf("%s[%.3f, %d]", i ? ", " : "", s->ser_t[i], s->ser_n[i]);
    printf("]}\n");
}

static void run_one(int pat, int n, int c, const int *designs, const trace_t *tr, int ntr, int series)
{
    sample_t smp[64];
    int ns = sample_ranks(pat, n, c, ntr, smp);
    result_t res[NDESIGN] = {0};
    double wsum = 0, events = 0, aq_pool = 0, rm_runs = 0;
    size_t shm_shared = 0, shm_ring = 0, ofi_ring = 0;
    for (int i = 0; i < ns; i++) {
        sim_t s;
        sim_init(&s, n, c, smp[i].rank, series);
        run_pattern(&s, pat, tr, ntr);
        wsum += smp[i].weight;
        events += (double)s.events;
        shm_shared = s.shared_bytes, shm_ring = s.ring_stride, ofi_ring = s.ofi_ring;
        if (s.aq_pool > aq_pool)
            aq_pool = s.aq_pool;
        if (s.rm && (double)s.rm->runs > rm_runs)
            rm_runs = (double)s.rm->runs;
        for (int d = 0; d < NDESIGN; d++) {
            mem_t m = design_mem(&s, d);
            ofi_parts_t o = IS_OFI(d) ? ofi_parts(&s, d) : (ofi_parts_t){0};
            result_t *r = &res[d];
            double tot = m.conn + m.buf;
            if (tot > r->mem_max)
                r->mem_max = tot, r->conn_max = m.conn, r->buf_max = m.buf, r->ofi = o,
                r->mem_rc = tot - o.conn_xrc + o.conn_rc;
            r->mem_mean += smp[i].weight * tot;
            r->got += smp[i].weight * m.got;
            r->used += smp[i].weight * m.used;
            if (d == RAILMPI && s.tcp_peak > r->tcp_peak)
                r->tcp_peak = s.tcp_peak;
            if (d == RAILMPI && railmpi_ofi_mem(&s) > r->ofi_max)
                r->ofi_max = railmpi_ofi_mem(&s);
            int peak = d == RAILMPI        ? s.rma.peak
                       : d == AQPS         ? s.aq_peak
                       : d == OFI_ADAPTIVE ? s.roa.peak
                       : IS_OFI(d)         ? o.rings_shm + o.rings_ofi
                                           : -1;
            if (peak > r->ded_peak)
                r->ded_peak = peak;
            double tb = d == RAILMPI ? railmpi_table(&s) : d == AQPS ? (double)aqps_sigma(n) * 8 * n : o.table;
            if (tb > r->table)
                r->table = tb;
            double bc, b = design_bound(&s, d, &bc);
            if (b > r->bound)
                r->bound = b, r->bound_conn = bc;
        }
        if (series && s.rm && i < 2)
            print_series(&s, pat);
        sim_free(&s);
    }
    for (int d = 0; d < NDESIGN; d++) {
        if (!designs[d])
            continue;
        const result_t *r = &res[d];
        printf(
            "{\"design\": \"%s\", \"pattern\": \"%s\", \"procs\": %d, \"cores\": %d, \"nodes\": %d, "
            "\"mem_per_proc_bytes\": %.0f, \"mem_mean_bytes\": %.0f, \"conn_bytes\": %.0f, \"buf_bytes\": %.0f, "
            "\"bound_bytes\": %.0f, \"bound_conn_bytes\": %.0f, \"buffer_efficiency\": %.4f, \"dedicated_peak\": %.0f, \"table_bytes\": %.0f, "
            "\"sampled_ranks\": %d, \"events\": %.0f",
            design_name[d], pattern_name[pat], n, c, n / c, r->mem_max, r->mem_mean / wsum, r->conn_max, r->buf_max,
            r->bound, r->bound_conn, r->used > 0 ? r->got / r->used : 1.0, r->ded_peak, r->table, ns, events);
        if (d == AQPS)
            printf(", \"rc_qps_created\": %.0f", aq_pool);
        if (d == RAILMPI)
            printf(
                ", \"mem_ofi_bytes\": %.0f, \"selector_runs\": %.0f, \"shm_shared_bytes\": %zu, \"shm_ring_bytes\": %zu, "
                "\"tcp_peer_bytes\": %zu, \"tcp_peer_bytes_quiet\": %zu, \"tcp_peer_bytes_small\": %zu, "
                "\"tcp_buf_peak_bytes\": %.0f, \"ofi_peer_bytes\": %zu, \"ofi_peer_chunk\": %d, \"ofi_rail_rx_bytes\": %zu",
                r->ofi_max, rm_runs, shm_shared, shm_ring, rmpi_tcp_peer_bytes_max(), rmpi_tcp_peer_bytes(0),
                rmpi_tcp_peer_bytes(1), r->tcp_peak, rmpi_ofi_peer_bytes(), rmpi_ofi_peer_chunk(),
                rmpi_ofi_rail_rx_bytes(size_of(dflt_OFI_MRECV), (long long)num(dflt_OFI_RX_BUFS)));
        if (IS_OFI(d)) {
            const ofi_parts_t *o = &r->ofi;
            printf(
                ", \"mem_rc_bytes\": %.0f, \"conn_xrc_bytes\": %.0f, \"conn_rc_bytes\": %.0f, \"per_rank_bytes\": %.0f, "
                "\"rx_bytes\": %.0f, \"shm_queue_bytes\": %.0f, \"rings_bytes\": %.0f, \"rings_shm\": %d, "
                "\"rings_ofi\": %d, \"xrc_nodes\": %d, \"ofi_ring_bytes\": %zu, \"shm_ring_bytes\": %zu, "
                "\"qp_bytes\": %.0f, \"h\": %d, \"peer_table_bytes\": %.0f",
                r->mem_rc, o->conn_xrc, o->conn_rc, o->per_rank, o->rx, o->queue, o->rings, o->rings_shm, o->rings_ofi,
                o->nodes, ofi_ring, shm_ring, XRC_QP, rmpi_chan_default_h(n, c), o->peer_table);
        }
        printf("}\n");
    }
    fflush(stdout);
}

/* ---- exact replay of recorded traces (calibration) ---- */

static int replay(const char *prefix)
{
    char path[4200];
    for (int r = 0;; r++) {
        snprintf(path, sizeof path, "%s.%d", prefix, r);
        trace_t t;
        if (read_trace(path, &t)) {
            if (r == 0) {
                fprintf(stderr, "scalesim: --replay %s: cannot read %s as an RMPI_CHAN_TRACE file (docs/trace.md)\n",
                        prefix, path);
                return 1;
            }
            return 0;
        }
        sim_t s;
        memset(&s, 0, sizeof s);
        s.n = t.nprocs, s.me = t.rank;
        shm_sizes(&s, t.ring_size, t.classes, t.class_bytes);
        char why[256];
        if (t.selector && rmpi_chan_params_check(&t.prm, why, sizeof why)) {
            fprintf(stderr, "scalesim: %s: %s\n", path, why);
            return 1;
        }
        /* the library's selector: created at t0 = 0, every peer off this node and the rank
         * itself fixed; each frame counted without the clock, the recorded ticks move it */
        if (t.ofi)
            t.prm.net = t.net;
        rmpi_chan_sel_t *sel = t.selector ? rmpi_chan_sel_create(t.nprocs, &t.prm, 0) : NULL;
        s.ring_of = xcalloc((size_t)t.nprocs, sizeof *s.ring_of);
        if (sel) {
            uint8_t *loc = xcalloc((size_t)t.nprocs, 1);
            for (int i = 0; i < t.nlocal; i++)
                if (t.local[i] >= 0 && t.local[i] < t.nprocs)
                    loc[t.local[i]] = 1;
            /* this node's peers over shm have
             * class 0, libfabric peers class 1 with the trace's costs, the rest are fixed */
            for (int p = 0; p < t.nprocs; p++) {
                if (p != t.rank && t.ofi_peer && t.ofi_peer[p]) {
                    rmpi_chan_sel_class(sel, p, 1);
                    s.ring_of[p] = (size_t)t.ofi_ring;
                } else if (p == t.rank || !loc[p]) {
                    rmpi_chan_sel_fix(sel, p, RMPI_CHAN_DEDICATED);
                } else {
                    s.ring_of[p] = s.ring_stride;
                }
            }
            free(loc);
            for (size_t i = 0; i < t.nev; i++) {
                if (t.ev[i].peer < 0) {
                    size_t j = i + 1;
                    while (j < t.nev && t.ev[j].refused >= 0)
                        j++;
                    s.refused = &t.ev[i + 1], s.nrefused = j - i - 1;
                    if (t.ev[i].bytes)
                        rmpi_chan_sel_note_idle(sel, t.ev[i].bytes, t.ev[i].t);
                    rm_tick(&s, sel, t.ev[i].t);
                    s.nrefused = 0;
                    i = j - 1;
                } else {
                    rmpi_chan_count_recv(sel, t.ev[i].peer, t.ev[i].bytes);
                }
            }
        }
        printf("{\"replay\": \"%s\", \"rank\": %d, \"channel_bytes\": {\"dedicated\": %zu, \"shared\": %zu}, "
               "\"dedicated_bytes_low\": %zu, \"dedicated_peak\": %d, \"dedicated_ranks\": [",
               path, t.rank, s.rma.peak_bytes,
               t.shared_bytes >= 0 ? (size_t)t.shared_bytes
               : t.nlocal > 1      ? s.shared_bytes
                                   : 0,
               s.rma.low_bytes, s.rma.peak);
        int sep = 0;
        for (int p = 0; sel && p < t.nprocs; p++)
            if (!sel->fixed[p] && rmpi_chan_sel_kind(sel, p) == RMPI_CHAN_DEDICATED)
                printf("%s%d", sep++ ? ", " : "", p);
        printf("], \"runs\": %llu, \"events\": %zu}\n", sel ? (unsigned long long)sel->runs : 0ull, t.nev);
        rmpi_chan_sel_destroy(sel);
        free(s.ring_of);
        free_trace(&t);
    }
}

/* ---- command line ---- */

static int usage(const char *why)
{
    fprintf(stderr,
            "scalesim: %s\n"
            "usage: scalesim --design NAME|all --pattern NAME|all --procs N --cores C [--trace PREFIX] [--series]\n"
            "       scalesim --sweep [--cores C] [--trace PREFIX] [--series]\n"
            "       scalesim --replay PREFIX\n"
            "designs: rc-srq rc-msrq exrc sxrc rc-rdma-od dc-rdma-od aqps railmpi ofi-adaptive ofi-dedicated ofi-shared\n"
            "patterns: onetoall alltoone repeat stencil2d stencil3d alltoall random trace (trace needs --trace)\n"
            "N: 2 .. 1048576, a multiple of C; C: 1 .. N\n",
            why);
    return 2;
}

static int lookup(const char *v, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i]))
            return i;
    return !strcmp(v, "all") ? n : -1;
}

static int int_arg(const char *v, long lo, long hi, int *out)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (!*v || *end || x < lo || x > hi)
        return -1;
    *out = (int)x;
    return 0;
}

static int load_traces(const char *prefix, trace_t **out)
{
    char path[4200];
    trace_t *tr = NULL;
    int n = 0;
    for (;; n++) {
        snprintf(path, sizeof path, "%s.%d", prefix, n);
        trace_t t;
        if (read_trace(path, &t))
            break;
        trace_t *nt = realloc(tr, (size_t)(n + 1) * sizeof *tr);
        if (!nt)
            sim_fail("out of memory");
        tr = nt;
        tr[n] = t;
    }
    *out = tr;
    return n;
}

int main(int argc, char **argv)
{
    int design = -1, pattern = -1, procs = 0, cores = 0, sweep = 0, series = 0;
    const char *trace = NULL, *rep = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--sweep"))
            sweep = 1;
        else if (!strcmp(a, "--series"))
            series = 1;
        else if (!v)
            return usage("an option is missing its value, or is unknown");
        else if (i++, !strcmp(a, "--design")) {
            if ((design = lookup(v, design_name, NDESIGN)) < 0)
                return usage("unknown design");
        } else if (!strcmp(a, "--pattern")) {
            if ((pattern = lookup(v, pattern_name, NPATTERN)) < 0)
                return usage("unknown pattern");
        } else if (!strcmp(a, "--procs")) {
            if (int_arg(v, 2, 1 << 20, &procs))
                return usage("--procs wants a number of processes from 2 to 1048576");
        } else if (!strcmp(a, "--cores")) {
            if (int_arg(v, 1, 1 << 20, &cores))
                return usage("--cores wants a number of cores per node from 1 to 1048576");
        } else if (!strcmp(a, "--trace"))
            trace = v;
        else if (!strcmp(a, "--replay"))
            rep = v;
        else
            return usage("unknown option");
    }
    if (rep)
        return replay(rep);
#ifdef SCALESIM_TRACE
    /* the sweep's trace pattern: the collective trace recorded in the source tree */
    if (sweep && !trace)
        trace = SCALESIM_TRACE;
#endif
    trace_t *tr = NULL;
    int ntr = trace ? load_traces(trace, &tr) : 0;
    if (trace && !ntr)
        return usage("--trace: no readable trace file PREFIX.0 (docs/trace.md)");
    int designs[NDESIGN];
    if (sweep) {
        if (design >= 0 || pattern >= 0 || procs)
            return usage("--sweep runs every design, pattern and size: give none of them");
        for (int d = 0; d < NDESIGN; d++)
            designs[d] = 1;
        int c = cores ? cores : 16;
        for (int p = 0; p < NPATTERN; p++) {
            if (p == TRACE && !ntr) {
                fprintf(stderr, "scalesim: no --trace given: the trace pattern is left out of the sweep\n");
                continue;
            }
            for (int lg = 6; lg <= 16; lg++) {
                int n = 1 << lg;
                if (n % c == 0 && (p != TRACE || n % ntr == 0))
                    run_one(p, n, c, designs, tr, ntr, series && p == REPEAT);
            }
        }
    } else {
        if (design < 0 || pattern < 0 || !procs || !cores)
            return usage("give --design, --pattern, --procs and --cores (or --sweep)");
        if (procs % cores)
            return usage("--procs must be a multiple of --cores (the nodes are full)");
        if (pattern == TRACE && !ntr)
            return usage("the trace pattern needs --trace PREFIX");
        if (pattern == TRACE && procs % ntr)
            return usage("--procs must be a multiple of the traced job's size");
        for (int d = 0; d < NDESIGN; d++)
            designs[d] = design == NDESIGN || design == d;
        for (int p = 0; p < NPATTERN; p++)
            if ((pattern == NPATTERN && (p != TRACE || (ntr && procs % ntr == 0))) || pattern == p)
                run_one(p, procs, cores, designs, tr, ntr, series);
    }
    for (int i = 0; i < ntr; i++)
        free_trace(&tr[i]);
    free(tr);
    return 0;
}
