/* shm provider: one rail for every rank on the same node.
 * Each rank owns one segment holding its shared receive queue (shm_queue.h: size-class
 * buffers written by every local sender) and address space for one ring per local sender
 * (the dedicated channel); a sender writes frames straight into the receiver's segment
 * (one copy in, one copy out). Which of the two a sender uses is the receiver's choice
 * (RMPI_CHANNELS, src/chan), changed by the switch below (the J1-J5 protocol of the
 * adaptive-transport-selection seed, Sec. IV-C) without reordering frames. RDMA is
 * single-copy with process_vm_readv/writev (cross-memory attach); where the kernel refuses
 * that (ptrace policy, seccomp, RMPI_SHM_CMA=off), get/put are emulated by GET_REQ/GET_RESP
 * and PUT frames through the channels, checked against the target's registrations. */
#include "shm.h"
#include "shm_queue.h"

#include "../chan_switch.h"
#include "../net_mem.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define SEG_HDR RMPI_SHM_SEG_HDR
#define SEG_MAGIC 0x524d5049534d3039ull /* "RMPISM09" (docs/wire/shm.md) */
/* The doorbell words (shm.h), in the header after its fields, a cache line of their own:
 * a bit per local sender, so at most (4096 - 512) * 8 local ranks */
#define BELL_OFF 512u
#define BELL_MAX_WORDS ((SEG_HDR - BELL_OFF) / sizeof(uint64_t))
#define SHARED RMPI_NET_CHAN_SHARED
#define DEDICATED RMPI_NET_CHAN_DEDICATED

typedef struct seg_hdr {
    uint64_t magic;
    int32_t pid, nlocal;
    uint64_t ring_stride;
    uint32_t ncells;
    rmpi_shm_qlayout_t qlay; /* the shared queue, at SEG_HDR; rings follow it */
    /* how many times the owner made its queue (0: not made yet); a sender moving to the
     * queue faults its pages in again when this changed since it last did: a queue given
     * back was punched out of its page tables too (queue_give_back) */
    _Atomic uint32_t q_gen;
} seg_hdr_t;
_Static_assert(sizeof(seg_hdr_t) <= BELL_OFF, "the segment header's fields overlap its doorbell");

/* The split copy (RMPI_SHM_CMA_SPLIT, docs/wire/shm.md version 9): the last line of the
 * owner's header before the doorbell. A large cross-memory copy to the owner (copy_now: a
 * one-sided put or get) is cut in two: the origin posts the tail here, copies the head, and
 * the owner, if it polls inside MPI meanwhile, copies the tail from its progress (a put: it
 * reads from the origin with process_vm_readv; a get: it writes into the origin), so both
 * cores copy (bench/cma_split.c: 64 KiB 6.0 -> 3.9 us, 1 MiB 80 -> 41 us). The origin then
 * takes the tail back with one compare-and-swap if the owner has not started it, so an owner
 * computing outside MPI costs the origin a second system call, once: the claim clears
 * `polling`, which the owner sets again only after SPLIT_ARM idle passes. States: IDLE,
 * SETUP (an origin owns the line and fills it), POSTED, TAKEN (the owner copies), DONE (err
 * says how it went), CLAIMED (the origin copies); only the owning origin moves it back to
 * IDLE. */
#define SPLIT_OFF (BELL_OFF - 64u)
#define SPLIT_ARM 16u
enum { SPLIT_IDLE, SPLIT_SETUP, SPLIT_POSTED, SPLIT_TAKEN, SPLIT_DONE, SPLIT_CLAIMED };
typedef struct split_slot {
    _Atomic uint32_t polling; /* the owner was idle in its progress since the last claim-back */
    _Atomic uint32_t state;
    int32_t from;  /* the origin's local index */
    int32_t write; /* 1 a put (the owner reads the tail from the origin), 0 a get */
    int32_t err;   /* the owner's copy: 0 or an errno */
    uint32_t pad;
    uint64_t oaddr, taddr, len; /* the tail: at the origin, at the owner, its bytes */
} split_slot_t;
_Static_assert(sizeof(seg_hdr_t) <= SPLIT_OFF && sizeof(split_slot_t) <= 64,
               "the split line overlaps the header's fields or the doorbell");

/* A frame waiting for room, with the channel it was posted on (frames leave in post order,
 * whatever channel each takes, so a switch never lets a later frame pass an earlier one).
 * off: bytes already sent as fragments on the shared channel. */
typedef struct pending {
    struct pending *next;
    unsigned type;
    int ch;
    size_t len, off;
    char data[];
} pending_t;

/* A shared-queue frame held back while the sender's ring is drained up to its marker (J5). */
typedef struct parked {
    struct parked *next;
    unsigned type, flags;
    size_t len;
    char data[];
} parked_t;

/* Where a ring's next frame will be published and the stamp it will carry (the cell holds 0
 * or an older lap's stamp until then: shm.h). */
typedef struct stamp_poll {
    const _Atomic uint32_t *at;
    uint32_t want;
} stamp_poll_t;

static inline stamp_poll_t stamp_poll(const rmpi_shm_reader_t *rd)
{
    return (stamp_poll_t){&rmpi_shm_cell(rd->ring, rd->ncells, rd->r)->stamp, rmpi_shm_stamp(rd->r)};
}

/* Receive side of one local sender. */
typedef struct shm_rx {
    int rank;
    rmpi_net_chsw_t sw; /* the channel it writes on (our choice), waiting for its marker */
    int active;         /* its ring is in the active list */
    int ai;             /* its index there while active */
    rmpi_shm_reader_t rd;
    parked_t *park, **park_tail;
    char *frag; /* a frame arriving in fragments through the shared queue */
    size_t frag_len, frag_cap;
} shm_rx_t;

typedef struct shm_peer {
    int rank;
    pid_t pid;
    int cma;        /* 1 usable, 0 untried, -1 refused */
    int lidx;       /* its local index */
    int tx_kind;    /* the channel this process writes to it on (its choice) */
    uint32_t q_gen; /* the generation of its shared queue whose pages we faulted in (seg_hdr_t) */
    rmpi_shm_writer_t wr;
    _Atomic uint64_t *bell; /* our doorbell word in its segment, and our bit there */
    uint64_t bell_bit;
    _Atomic uint64_t *qbell; /* its shared queue's bit there (its own index: docs/wire/shm.md) */
    uint64_t qbell_bit;
    rmpi_shm_queue_t txq; /* its shared receive queue */
    pending_t *pend, **pend_tail;
    void *seg;
    size_t seg_len;
    struct cma_batch *cb; /* small get/put waiting to go as one system call (NULL: none yet) */
    int ncb;              /* ops in it */
} shm_peer_t;

/* Small gets or puts to one peer (all one direction) that leave together in one
 * process_vm_readv/writev: a call costs about 1 us of kernel entry and page lookup
 * whatever it moves, so 64 puts of 8 B then a flush were 64 calls (0.5-0.7 us per op in
 * one call, 1.0-1.6 us alone; MPICH's active messages about 0.9). They leave at this
 * process's next progress, before any later frame to that peer (post), before a get or
 * put that does not join them, or when full; their ops complete after, at a progress as
 * before, so nothing above sees the difference but the time. */
#define CMA_BATCH_OPS 64
#define CMA_BATCH_LEN 4096 /* longer ops go alone: copying, not the call, sets their time */
typedef struct cma_batch {
    int write;
    struct iovec l[CMA_BATCH_OPS], r[CMA_BATCH_OPS];
    rmpi_net_op_t *op[CMA_BATCH_OPS];
} cma_batch_t;

/* A get being served (target side) or awaited (initiator side, emulated path). */
typedef struct get_resp {
    struct get_resp *next;
    shm_peer_t *peer;
    uint64_t cookie;
    const char *src;
    size_t len, off;
    int32_t status;
} get_resp_t;

typedef struct emu_get {
    rmpi_net_op_t *op;
    char *local;
    size_t len, got;
} emu_get_t;

typedef struct wire_get_req {
    uint64_t cookie, raddr, rkey, len;
} wire_get_req_t;
typedef struct wire_get_resp {
    uint64_t cookie, off;
    int32_t status, pad;
} wire_get_resp_t;
typedef struct wire_put {
    uint64_t raddr, rkey;
} wire_put_t;

typedef struct mr_ent {
    uint64_t rkey;
    char *addr;
    size_t len;
} mr_ent_t;

typedef struct shm_rail {
    rmpi_rail_t base;
    const rmpi_net_env_t *env;
    char segname[128];
    void *seg;
    size_t seg_len, ring_stride;
    uint32_t ncells;
    size_t max_frame;
    int my_local, nlocal, cma_mode; /* RMPI_SHM_CMA_* */
    int *local_rank;                /* local index -> world rank */
    shm_peer_t **peer;              /* world rank -> peer (NULL if not on this node) */
    shm_rx_t *rx;                   /* local index -> receive state */
    shm_rx_t **act;                 /* the rings in use (dedicated, set up) */
    /* The doorbell (shm.h): with more than RING_POLL_MAX rings in use a pass reads the nbell
     * words, not the rings, so a ring with nothing to read costs nothing (the seed's polling
     * term, sec. 3.2 A.1, charges every dedicated channel at every poll;
     * RMPI_CHAN_IDLE_POLL_COST is what one costs). bell_left: rings to read at the next such
     * pass although their bits were taken (more frames than a pass reads, or frames written
     * before the ring was active). With fewer rings a pass reads each one's next stamp
     * (`stamp`, per act[i]: the next cell and the stamp it will get; until then it holds 0
     * or an older lap's, so one load and a compare find a ring empty), and nobody reads the words: a frame then costs one cache line between the
     * two processes, not two (the busy pair's latency). Senders set their bit either way,
     * so the bits a pass of stamps left in the words are there when the bells take over. */
    stamp_poll_t *stamp;
    _Atomic uint64_t *bell;
    uint64_t *bell_left;
    int nbell, any_left;
    uint64_t qbit;              /* the queue's bit in word my_local / 64: senders set it after each slot */
    int nact, npending, policy; /* policy: RMPI_CHANNELS_* */
    int start_ded;              /* every local sender started on its ring (dedicated, or a small job) */
    int q_made;                 /* the shared queue is initialized and populated (not yet in a small job) */
    int q_ever;                 /* it was made at some time (RMPI_REPORT's shared_queue) */
    int nqueue_from;            /* local senders without a ring in act: while 0 nobody writes
                                     * to the shared queue and the poll skips it */
    /* The queue given back (queue_give_back): since when no sender writes to it (every local
     * sender on a settled ring; 0: someone may), after how long it goes, passes counted
     * between looks at the clock, and how many times it went */
    uint64_t q_unused_since, q_keep_ns, q_returns;
    uint32_t q_check;
    int chores; /* CHORE_*: work a pass checks for, one test for all (the idle probe's instructions) */
    rmpi_shm_qlayout_t qlay;
    rmpi_shm_queue_t rxq; /* my shared receive queue */
    uint64_t stuck_since, idle_polls;
    rmpi_net_chsw_force_t force;
    rmpi_net_chan_stats_t st;
    get_resp_t *resp;     /* gets this rank serves */
    rmpi_net_op_t **done; /* completions to report at the next progress */
    int ndone, done_cap;
    mr_ent_t *mr;
    int nmr, mr_cap;
    uint64_t next_rkey;
    int ncb;             /* peers with a cross-memory batch waiting */
    split_slot_t *split; /* my header's split line (SPLIT_OFF) */
    size_t split_min;    /* RMPI_SHM_CMA_SPLIT, 0 off */
    unsigned split_idle; /* idle passes since `polling` was found clear */
} shm_rail_t;

static shm_rail_t shm;

enum { CHORE_FORCE = 1, CHORE_QUEUE = 2 }; /* forced switches armed; the queue's give-back armed */

/* since: when the queue's last sender left it, 0 when a sender may write to it */
static void queue_arm(shm_rail_t *s, uint64_t since)
{
    s->q_unused_since = since;
    s->chores = since ? s->chores | CHORE_QUEUE : s->chores & ~CHORE_QUEUE;
}

static void push_done(rmpi_net_op_t *op, int status)
{
    op->status = status;
    if (shm.ndone == shm.done_cap) {
        shm.done_cap = shm.done_cap ? 2 * shm.done_cap : 64;
        shm.done = rmpi_xrealloc(shm.done, (size_t)shm.done_cap * sizeof *shm.done);
    }
    shm.done[shm.ndone++] = op;
}

/* A rank that aborts (a peer lost in MPI_Init, the launcher gone) removes its segment's
 * name if it still has one; mpiexec removes the rest (rmpi_shm_job_prefix). */
static void shm_unlink_on_abort(void)
{
    if (shm.segname[0])
        shm_unlink(shm.segname);
}

/* RMPI_CHAN_CLASSES: ascending buffer sizes, e.g. "256,1k,2k,4k,8k". */
static int parse_classes(uint32_t *csize)
{
    const char *text = rmpi_knobs.CHAN_CLASSES;
    int n = rmpi_shm_parse_classes(text, csize);
    if (n < 0)
        rmpi_fatal("RMPI_CHAN_CLASSES=%s: expected 1 to %d ascending buffer sizes from 64 bytes to 1m, "
                   "separated by commas (e.g. 256,1k,2k,4k,8k).",
                   text, RMPI_SHM_MAX_CLASSES);
    return n;
}

static rmpi_shm_ring_t *ring_of(void *seg, int l)
{
    const seg_hdr_t *h = seg;
    return (rmpi_shm_ring_t *)((char *)seg + SEG_HDR + h->qlay.bytes + (size_t)l * h->ring_stride);
}

static void ring_activate(shm_rx_t *x)
{
    x->active = 1;
    x->ai = shm.nact;
    shm.stamp[shm.nact] = stamp_poll(&x->rd);
    shm.act[shm.nact++] = x;
    /* its sender wrote frames after its marker and may have rung before the ring was
     * active, when a pass took the bit and read nothing: read it at the next pass */
    int l = (int)(x - shm.rx);
    shm.bell_left[l / 64] |= 1ull << (l % 64);
    shm.any_left = 1;
    if (!--shm.nqueue_from && shm.q_made) /* the queue's last sender left it: give it back later */
        queue_arm(&shm, rmpi_time_ns());
    shm.st.mem[DEDICATED] += shm.ring_stride;
    shm.st.mem_peak[DEDICATED] = RMPI_MAX(shm.st.mem_peak[DEDICATED], shm.st.mem[DEDICATED]);
}

static int shm_open_rail(const rmpi_net_env_t *env, rmpi_rail_t **out, int max)
{
    if (max < 1)
        return 0;
    shm_rail_t *s = &shm;
    memset(s, 0, sizeof *s);
    s->env = env;
    s->cma_mode = rmpi_knobs.SHM_CMA;
    int node = rmpi_topo_my_node();
    s->nlocal = rmpi_topo_local_size(node);
    if ((size_t)s->nlocal > BELL_MAX_WORDS * 64)
        rmpi_fatal("%d ranks on one node: shared memory carries at most %zu (set RMPI_NET=tcp to run more).", s->nlocal,
                   BELL_MAX_WORDS * 64);
    s->my_local = rmpi_topo_local_rank(env->rank);
    s->local_rank = rmpi_xcalloc((size_t)s->nlocal, sizeof *s->local_rank);
    s->peer = rmpi_xcalloc((size_t)env->size, sizeof *s->peer);
    for (int r = 0; r < env->size; r++)
        if (rmpi_topo_node_of(r) == node)
            s->local_rank[rmpi_topo_local_rank(r)] = r;

    /* the sizes come from src/net/net_mem.c, which the scale simulator models with too */
    uint32_t ncells;
    s->ring_stride = rmpi_shm_ring_stride((size_t)rmpi_knobs.SHM_RING_SIZE, &ncells, &s->max_frame);
    s->ncells = ncells;
    s->policy = rmpi_knobs.CHANNELS;
    uint32_t csize[RMPI_SHM_MAX_CLASSES];
    int ncls = parse_classes(csize);
    size_t shared = rmpi_shm_shared_layout(&s->qlay, csize, ncls, (size_t)rmpi_knobs.CHAN_CLASS_BYTES, s->max_frame);
    s->seg_len = shared + (size_t)s->nlocal * s->ring_stride;

    /* Segment names must be unique per job and rank; the job id comes from the PM. mpiexec
     * removes leftovers by the same prefix (rmpi_shm_job_prefix). */
    char prefix[RMPI_SHM_PREFIX_MAX];
    rmpi_shm_job_prefix(env->jobid, prefix, sizeof prefix);
    snprintf(s->segname, sizeof s->segname, "/%s%d-%d", prefix, (int)getpid(), env->rank);
    int fd = shm_open(s->segname, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* The name holds our pid, so its owner is dead: a killed job whose pid came back. */
        rmpi_log(1, "removing stale shared memory segment %s.", s->segname);
        shm_unlink(s->segname);
        fd = shm_open(s->segname, O_RDWR | O_CREAT | O_EXCL, 0600);
    }
    if (fd < 0)
        rmpi_fatal("cannot create shared memory segment %s: %s (is /dev/shm full? set RMPI_NET=tcp to avoid it).",
                   s->segname, strerror(errno));
    static int hooked;
    if (!hooked) {
        hooked = 1;
        rmpi_rt_at_abort(shm_unlink_on_abort);
    }
    if (ftruncate(fd, (off_t)s->seg_len))
        rmpi_fatal("cannot size shared memory segment %s to %zu bytes: %s (lower RMPI_SHM_RING_SIZE).", s->segname,
                   s->seg_len, strerror(errno));
    s->seg = mmap(NULL, s->seg_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (s->seg == MAP_FAILED)
        rmpi_fatal("cannot map shared memory segment %s: %s.", s->segname, strerror(errno));
    /* The file is sparse: only what is touched costs memory. The header and the shared queue
     * are populated now; a ring when its sender gets it (all of them now under
     * RMPI_CHANNELS=dedicated, and under adaptive in a small job, env->chan_small: every
     * local sender may hold a ring within h, so the queue is made only when a switch first
     * asks for it, queue_make). */
    int ded = s->policy == RMPI_CHANNELS_DEDICATED ||
              (s->policy == RMPI_CHANNELS_ADAPTIVE && env->chan_small && s->nlocal > 1);
    s->start_ded = ded;
    s->q_made = s->q_ever = !ded;
    /* RMPI_CHAN_QUEUE_KEEP_MS, -1: the selection interval (a bad value ends MPI_Init in
     * rmpi_chan_params_from_knobs; until then it is taken as -1) */
    s->q_keep_ns = (uint64_t)(rmpi_knobs.CHAN_QUEUE_KEEP_MS >= 0 ? rmpi_knobs.CHAN_QUEUE_KEEP_MS
                                                                 : RMPI_MAX(rmpi_knobs.CHAN_INTERVAL, 1)) *
                   1000000ull;
    rmpi_shm_prefault(s->seg, SEG_HDR + (ded ? 0 : s->qlay.bytes));
    seg_hdr_t *h = s->seg;
    h->pid = getpid();
    h->nlocal = s->nlocal;
    h->ring_stride = s->ring_stride;
    h->ncells = ncells;
    h->qlay = s->qlay;
    atomic_store_explicit(&h->q_gen, !ded, memory_order_relaxed);
    rmpi_shm_queue_attach(&s->rxq, (char *)s->seg + SEG_HDR, &s->qlay);
    if (!ded) {
        rmpi_shm_queue_init(&s->rxq);
        s->st.mem[SHARED] = s->st.mem_peak[SHARED] = SEG_HDR + s->qlay.bytes;
    }
    h->magic = SEG_MAGIC;
    s->split = (split_slot_t *)((char *)s->seg + SPLIT_OFF);
    /* more ranks than CPUs: no idle core to copy with, and a target off its CPU cannot take
     * its half before the origin finished its own (3 ranks on 2 cores: no half served in 3
     * of 12 jobs, each offer then a second system call) */
    s->split_min = s->cma_mode == RMPI_SHM_CMA_OFF || rmpi_topo_oversubscribed() ? 0 : (size_t)rmpi_knobs.SHM_CMA_SPLIT;

    s->rx = rmpi_xcalloc((size_t)s->nlocal, sizeof *s->rx);
    s->act = rmpi_xcalloc((size_t)s->nlocal, sizeof *s->act);
    s->nbell = (s->nlocal + 63) / 64;
    s->bell = (_Atomic uint64_t *)((char *)s->seg + BELL_OFF);
    s->bell_left = rmpi_xcalloc((size_t)s->nbell, sizeof *s->bell_left);
    s->qbit = 1ull << (s->my_local % 64);
    s->stamp = rmpi_xcalloc((size_t)s->nlocal, sizeof *s->stamp);
    s->nqueue_from = s->nlocal - 1;
    for (int l = 0; l < s->nlocal; l++) {
        shm_rx_t *x = &s->rx[l];
        x->rank = s->local_rank[l];
        x->sw.kind = ded ? DEDICATED : SHARED;
        x->park_tail = &x->park;
        x->rd.ring = ring_of(s->seg, l);
        x->rd.ncells = ncells;
        if (ded && l != s->my_local) {
            rmpi_shm_prefault(x->rd.ring, s->ring_stride);
            ring_activate(x);
            s->st.dedicated_now++;
        }
    }
    rmpi_net_chsw_force_init(&s->force, env->rank, 1);
    s->chores = s->force.ns ? CHORE_FORCE : 0;

    char key[64], val[256];
    snprintf(key, sizeof key, "shm-%d", env->rank);
    if (snprintf(val, sizeof val, "%s,%d", s->segname, (int)getpid()) >= (int)sizeof val || rmpi_pmi_put(key, val))
        return -1;

    s->base.ops = &rmpi_shm_ops;
    snprintf(s->base.hints.name, sizeof s->base.hints.name, "shm");
    s->base.hints.rdma_native = 1;
    s->base.hints.max_frame = s->max_frame;
    s->base.hints.max_inline = s->max_frame;
    s->base.hints.mem_per_peer = ded ? s->ring_stride : 0; /* shared: one queue for all, a ring per busy peer */
    s->base.hints.scope = RMPI_SCOPE_INTRA;
    s->base.hints.latency_ns = 200;
    out[0] = &s->base;
    return 1;
}

static int shm_ready(rmpi_rail_t *rail, int phase)
{
    shm_rail_t *s = &shm;
    if (phase == 1) {
        /* every local peer has mapped us: the name is no longer needed, nothing can leak */
        shm_unlink(s->segname);
        return 0;
    }
    for (int l = 0; l < s->nlocal; l++) {
        int r = s->local_rank[l];
        if (l == s->my_local)
            continue;
        char key[64], val[256], name[160];
        int pid;
        snprintf(key, sizeof key, "shm-%d", r);
        if (rmpi_pmi_get(key, val, sizeof val))
            rmpi_fatal("rank %d published no shared-memory address; is it running RailMPI?", r);
        char *comma = strrchr(val, ',');
        if (!comma || sscanf(comma + 1, "%d", &pid) != 1)
            rmpi_fatal("rank %d published a malformed shared-memory address '%s'.", r, val);
        snprintf(name, sizeof name, "%.*s", (int)(comma - val), val);
        int fd = shm_open(name, O_RDWR, 0);
        if (fd < 0)
            rmpi_fatal("cannot open rank %d's shared memory %s: %s (set RMPI_NET=tcp to avoid shared memory).", r, name,
                       strerror(errno));
        struct stat st;
        if (fstat(fd, &st))
            rmpi_fatal("cannot stat rank %d's shared memory %s: %s.", r, name, strerror(errno));
        void *seg = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (seg == MAP_FAILED)
            rmpi_fatal("cannot map rank %d's shared memory %s: %s.", r, name, strerror(errno));
        seg_hdr_t *h = seg;
        if (h->magic != SEG_MAGIC || h->nlocal != s->nlocal || h->ncells != s->ncells ||
            memcmp(&h->qlay, &s->qlay, sizeof s->qlay))
            rmpi_fatal("rank %d's shared memory %s has another layout; are both ranks the same RailMPI build "
                       "with the same RMPI_SHM_RING_SIZE, RMPI_CHAN_CLASSES and RMPI_CHAN_CLASS_BYTES?",
                       r, name);
        shm_peer_t *p = rmpi_xcalloc(1, sizeof *p);
        p->rank = r;
        p->pid = pid;
        p->seg = seg;
        p->seg_len = (size_t)st.st_size;
        p->cma = s->cma_mode == RMPI_SHM_CMA_OFF ? -1 : 0;
        p->lidx = l;
        p->tx_kind = s->start_ded ? DEDICATED : SHARED;
        p->wr.ring = ring_of(seg, s->my_local);
        p->wr.ncells = s->ncells;
        p->bell = (_Atomic uint64_t *)((char *)seg + BELL_OFF) + s->my_local / 64;
        p->bell_bit = 1ull << (s->my_local % 64);
        p->qbell = (_Atomic uint64_t *)((char *)seg + BELL_OFF) + p->lidx / 64;
        p->qbell_bit = 1ull << (p->lidx % 64);
        rmpi_shm_queue_attach(&p->txq, (char *)seg + SEG_HDR, &s->qlay);
        /* only what we write: our ring, or the peer's shared queue */
        if (p->tx_kind == DEDICATED)
            rmpi_shm_prefault(p->wr.ring, h->ring_stride);
        else
            rmpi_shm_prefault((char *)seg + SEG_HDR, s->qlay.bytes);
        p->q_gen = p->tx_kind == SHARED ? atomic_load_explicit(&h->q_gen, memory_order_relaxed) : 0;
        p->pend_tail = &p->pend;
        s->peer[r] = p;
    }
    return 0;
}

static int shm_reaches(rmpi_rail_t *rail, int peer) { return shm.peer[peer] != NULL; }

static size_t iov_total(const struct iovec *iov, int n)
{
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += iov[i].iov_len;
    return len;
}

/* A frame of more than RMPI_SHM_Q_INLINE bytes into a class buffer of p's shared queue (1),
 * or 0: the queue is full, no buffer is free, or the frame is larger than the largest class
 * (it then goes in fragments, tx_pending). Out of line: the small frames' path below needs
 * none of its registers (called from it, every frame paid 20 instructions of saves). */
static __attribute__((noinline)) int tx_shared_buf(shm_peer_t *p, unsigned type, const struct iovec *iov, int n,
                                                   size_t len)
{
    int c = rmpi_shm_qclass(&shm.qlay, len);
    if (RMPI_UNLIKELY(c == shm.qlay.nclass))
        return 0;
    uint32_t b = rmpi_shm_qalloc(&p->txq, c);
    if (RMPI_UNLIKELY(b == UINT32_MAX))
        return 0;
    rmpi_iov_gather(rmpi_shm_qbuf(&p->txq, b, NULL), iov, n);
    if (RMPI_UNLIKELY(!rmpi_shm_qenqueue(&p->txq, b, (uint32_t)len, (uint16_t)shm.my_local, (uint8_t)type, 0))) {
        rmpi_shm_qfree(&p->txq, b);
        return 0;
    }
    rmpi_shm_qbell(p->qbell, p->qbell_bit); /* after the slot's seq: as a ring's stamp */
    return 1;
}

/* The whole frame into p's shared queue now (1), or 0 (tx_shared_buf's reasons, or the queue
 * is full). A small frame travels in its slot: one atomic update, the tail's, as a ring
 * frame's fetch-or. */
static inline __attribute__((always_inline)) int tx_shared(shm_peer_t *p, unsigned type, const struct iovec *iov, int n,
                                                           size_t len)
{
    if (RMPI_UNLIKELY(len > RMPI_SHM_Q_INLINE))
        return tx_shared_buf(p, type, iov, n, len);
    uint64_t pos;
    rmpi_shm_qslot_t *sl = rmpi_shm_qreserve(&p->txq, &pos);
    if (RMPI_UNLIKELY(!sl))
        return 0;
    rmpi_iov_gather(sl->data, iov, n);
    rmpi_shm_qpublish(sl, pos, (uint32_t)len, (uint16_t)shm.my_local, (uint8_t)type, 0);
    rmpi_shm_qbell(p->qbell, p->qbell_bit); /* after the slot's seq: as a ring's stamp */
    return 1;
}

/* Write one frame on channel ch now if there is room: 1 written, 0 not. */
static int tx_now(shm_peer_t *p, int ch, unsigned type, const struct iovec *iov, int n, size_t len)
{
    if (ch == DEDICATED) {
        void *dst = rmpi_shm_ring_reserve(&p->wr, len);
        if (!dst)
            return 0;
        rmpi_iov_gather(dst, iov, n);
        rmpi_shm_ring_commit(&p->wr, len, type);
        rmpi_shm_bell(p->bell, p->bell_bit);
    } else if (!tx_shared(p, type, iov, n, len)) {
        return 0;
    }
    shm.st.tx_bytes[ch] += len;
    return 1;
}

/* The rest of a queued frame: whole on the ring, or through the shared queue, in fragments
 * of the largest class when it is larger (q->off keeps how far it got). 1: all sent. */
static int tx_pending(shm_peer_t *p, pending_t *q)
{
    size_t top = shm.qlay.csize[shm.qlay.nclass - 1];
    struct iovec iov = {q->data, q->len};
    if (q->ch == DEDICATED || q->len <= top)
        return tx_now(p, q->ch, q->type, &iov, 1, q->len);
    while (q->off < q->len) {
        size_t n = RMPI_MIN(top, q->len - q->off);
        if (n <= RMPI_SHM_Q_INLINE) { /* a last fragment that fits a slot */
            struct iovec v = {q->data + q->off, n};
            if (!tx_shared(p, q->type, &v, 1, n))
                return 0;
            q->off += n;
            break;
        }
        uint32_t b = rmpi_shm_qalloc(&p->txq, rmpi_shm_qclass(&shm.qlay, n));
        if (b == UINT32_MAX)
            return 0;
        memcpy(rmpi_shm_qbuf(&p->txq, b, NULL), q->data + q->off, n);
        if (!rmpi_shm_qenqueue(&p->txq, b, (uint32_t)n, (uint16_t)shm.my_local, (uint8_t)q->type,
                               q->off + n < q->len ? RMPI_SHM_Q_MORE : 0)) {
            rmpi_shm_qfree(&p->txq, b);
            return 0;
        }
        q->off += n;
        /* each fragment: the receiver must free the buffers of the first ones for the rest */
        rmpi_shm_qbell(p->qbell, p->qbell_bit);
    }
    shm.st.tx_bytes[SHARED] += q->len;
    return 1;
}

static void cma_flush(shm_peer_t *p);

/* Post one frame of the given type on p's current channel; queue a copy when there is no
 * room or others wait (frames leave in post order, whichever channel each was posted on). */
static void post(shm_peer_t *p, unsigned type, const struct iovec *iov, int n)
{
    size_t len = iov_total(iov, n);
    if (RMPI_UNLIKELY(p->ncb)) /* a frame after a put must find its data in place */
        cma_flush(p);
    if (RMPI_LIKELY(!p->pend)) {
        if (p->tx_kind == DEDICATED) { /* the busy pair's path: tx_now inlined by hand */
            void *dst = rmpi_shm_ring_reserve(&p->wr, len);
            if (RMPI_LIKELY(dst != NULL)) {
                rmpi_iov_gather(dst, iov, n);
                rmpi_shm_ring_commit(&p->wr, len, type);
                rmpi_shm_bell(p->bell, p->bell_bit);
                shm.st.tx_bytes[DEDICATED] += len;
                return;
            }
        } else if (RMPI_LIKELY(tx_shared(p, type, iov, n, len))) { /* and the queue's, inlined */
            shm.st.tx_bytes[SHARED] += len;
            return;
        }
    }
    pending_t *q = rmpi_xmalloc(sizeof *q + len);
    q->next = NULL;
    q->type = type;
    q->ch = p->tx_kind;
    q->len = len;
    q->off = 0;
    rmpi_iov_gather(q->data, iov, n);
    if (!p->pend) {
        if (tx_pending(p, q)) { /* a frame to fragment, and the pool had the buffers */
            free(q);
            return;
        }
        shm.npending++;
    }
    rmpi_net_held += len;
    *p->pend_tail = q;
    p->pend_tail = &q->next;
}

/* shm_send's other frames, a tail call: its small-message path then keeps its values in
 * registers that need no saving */
static __attribute__((noinline)) int post_data(shm_peer_t *p, const struct iovec *iov, int iovcnt)
{
    post(p, RMPI_SHM_DATA, iov, iovcnt);
    return 0;
}

static int shm_send(rmpi_rail_t *rail, int peer, const struct iovec *iov, int iovcnt)
{
    shm_peer_t *p = shm.peer[peer];
    /* A small message on its ring (a header and a payload of at most 32 bytes each: the busy
     * pair's ping-pong): post's path without a call, copies inline, nothing to save. */
    size_t l0 = iov[0].iov_len, l1 = iovcnt == 2 ? iov[1].iov_len : SIZE_MAX;
    if (RMPI_LIKELY(l0 <= 32 && l1 <= 32 && !p->pend && !p->ncb)) {
        const void *b0 = iov[0].iov_base, *b1 = iov[1].iov_base;
        size_t len = l0 + l1;
        if (p->tx_kind == DEDICATED) {
            char *dst = rmpi_shm_ring_reserve(&p->wr, len);
            if (RMPI_LIKELY(dst != NULL)) {
                rmpi_copy(dst, b0, l0); /* at most 32 bytes each: no call */
                rmpi_copy(dst + l0, b1, l1);
                rmpi_shm_ring_commit(&p->wr, len, RMPI_SHM_DATA);
                rmpi_shm_bell(p->bell, p->bell_bit);
                shm.st.tx_bytes[DEDICATED] += len;
                return 0;
            }
        } else if (len <= RMPI_SHM_Q_INLINE) { /* tx_shared's slot path, likewise */
            uint64_t pos;
            rmpi_shm_qslot_t *sl = rmpi_shm_qreserve(&p->txq, &pos);
            if (RMPI_LIKELY(sl != NULL)) {
                rmpi_copy(sl->data, b0, l0);
                rmpi_copy(sl->data + l0, b1, l1);
                rmpi_shm_qpublish(sl, pos, (uint32_t)len, (uint16_t)shm.my_local, RMPI_SHM_DATA, 0);
                rmpi_shm_qbell(p->qbell, p->qbell_bit); /* after the slot's seq: as a ring's stamp */
                shm.st.tx_bytes[SHARED] += len;
                return 0;
            }
        }
    }
    return post_data(p, iov, iovcnt);
}

static void flush_pending(void)
{
    for (int l = 0; l < shm.nlocal; l++) {
        shm_peer_t *p = shm.peer[shm.local_rank[l]];
        if (!p || !p->pend)
            continue;
        while (p->pend) {
            pending_t *q = p->pend;
            if (!tx_pending(p, q))
                break;
            p->pend = q->next;
            rmpi_net_held -= q->len;
            free(q);
        }
        if (!p->pend) {
            p->pend_tail = &p->pend;
            shm.npending--;
        }
    }
}

static int shm_mr_reg(rmpi_rail_t *rail, void *addr, size_t len, rmpi_mr_t *mr)
{
    if (shm.nmr == shm.mr_cap) {
        shm.mr_cap = shm.mr_cap ? 2 * shm.mr_cap : 32;
        shm.mr = rmpi_xrealloc(shm.mr, (size_t)shm.mr_cap * sizeof *shm.mr);
    }
    mr->addr = addr;
    mr->len = len;
    mr->rkey = ++shm.next_rkey;
    mr->desc = NULL;
    shm.mr[shm.nmr++] = (mr_ent_t){mr->rkey, addr, len};
    return 0;
}

static void shm_mr_dereg(rmpi_rail_t *rail, rmpi_mr_t *mr)
{
    for (int i = 0; i < shm.nmr; i++)
        if (shm.mr[i].rkey == mr->rkey) {
            shm.mr[i] = shm.mr[--shm.nmr];
            return;
        }
}

/* Emulated access check: [raddr, raddr+len) must lie inside the registration rkey. */
static char *mr_check(uint64_t rkey, uint64_t raddr, uint64_t len)
{
    for (int i = 0; i < shm.nmr; i++) {
        mr_ent_t *m = &shm.mr[i];
        if (m->rkey == rkey)
            return raddr >= (uintptr_t)m->addr && len <= m->len && raddr - (uintptr_t)m->addr <= m->len - len
                       ? (char *)(uintptr_t)raddr
                       : NULL;
    }
    return NULL;
}

/* Cross-memory attach (rt's rmpi_cma_copy); returns 0, -errno, or 1 when refused (the peer
 * is then marked so and served through the channels). */
static int cma(shm_peer_t *p, void *local, size_t len, uint64_t raddr, int write)
{
    int rc = rmpi_cma_copy(p->pid, local, len, raddr, write, p->rank);
    p->cma = rc == RMPI_CMA_REFUSED ? -1 : rc == 0 ? 1 : p->cma;
    return rc;
}

/* The batch leaves in one call. Anything short of all of it (a range the peer has not
 * mapped, a kernel that changed its mind) sends every op again alone, so each gets its
 * own answer: an op that the call did write is written again with the same bytes. */
static void cma_flush(shm_peer_t *p)
{
    cma_batch_t *b = p->cb;
    int n = p->ncb;
    p->ncb = 0;
    shm.ncb--;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += b->l[i].iov_len;
    ssize_t got = b->write ? process_vm_writev(p->pid, b->l, (unsigned long)n, b->r, (unsigned long)n, 0)
                           : process_vm_readv(p->pid, b->l, (unsigned long)n, b->r, (unsigned long)n, 0);
    for (int i = 0; i < n; i++) {
        int rc = 0;
        if ((size_t)got != total) {
            rc = cma(p, b->l[i].iov_base, b->l[i].iov_len, (uintptr_t)b->r[i].iov_base, b->write);
            rc = rc == RMPI_CMA_REFUSED ? -EPERM : rc;
        }
        push_done(b->op[i], rc);
    }
}

/* A get or put by cross-memory attach: 0 done or batched (its completion is queued), 1
 * refused (the caller emulates it). Only a peer known to accept (p->cma 1) batches. */
static int cma_op(shm_peer_t *p, void *local, size_t len, uint64_t raddr, int write, rmpi_net_op_t *op)
{
    if (p->ncb && (p->cb->write != write || p->ncb == CMA_BATCH_OPS || len > CMA_BATCH_LEN))
        cma_flush(p); /* ops reach the peer in the order they were posted */
    if (p->cma > 0 && len <= CMA_BATCH_LEN) {
        if (!p->cb)
            p->cb = rmpi_xmalloc(sizeof *p->cb);
        cma_batch_t *b = p->cb;
        if (p->ncb++ == 0) {
            shm.ncb++;
            b->write = write;
        }
        int i = p->ncb - 1;
        b->l[i] = (struct iovec){local, len};
        b->r[i] = (struct iovec){(void *)(uintptr_t)raddr, len};
        b->op[i] = op;
        return 0;
    }
    int rc = cma(p, local, len, raddr, write);
    if (rc > 0)
        return 1;
    push_done(op, rc);
    return 0;
}

static void cma_flush_all(void)
{
    for (int l = 0; l < shm.nlocal && shm.ncb; l++) {
        shm_peer_t *p = shm.peer[shm.local_rank[l]];
        if (p && p->ncb)
            cma_flush(p);
    }
}

static int shm_get(rmpi_rail_t *rail, int peer, void *local, size_t len, uint64_t raddr, uint64_t rkey,
                   rmpi_net_op_t *op)
{
    shm_peer_t *p = shm.peer[peer];
    op->rail = rail;
    op->t_post = rmpi_time_ns();
    if (p->cma >= 0 && cma_op(p, local, len, raddr, 0, op) == 0)
        return 0;
    emu_get_t *eg = rmpi_xmalloc(sizeof *eg);
    *eg = (emu_get_t){op, local, len, 0};
    wire_get_req_t req = {(uintptr_t)eg, raddr, rkey, len};
    struct iovec iov = {&req, sizeof req};
    post(p, RMPI_SHM_GET_REQ, &iov, 1);
    return 0;
}

static int shm_put(rmpi_rail_t *rail, int peer, const void *local, size_t len, uint64_t raddr, uint64_t rkey,
                   rmpi_net_op_t *op)
{
    shm_peer_t *p = shm.peer[peer];
    op->rail = rail;
    op->t_post = rmpi_time_ns();
    op->by_target = 0;
    if (p->cma >= 0 && cma_op(p, (void *)local, len, raddr, 1, op) == 0)
        return 0;
    op->by_target = 1; /* the ring copies land when the target polls (net.h) */
    /* All chunks are posted (or copied to the pending queue) now, so later frames on this
     * rail cannot overtake the data and the local buffer is free at once. */
    size_t chunk = shm.max_frame - sizeof(wire_put_t);
    size_t off = 0;
    do {
        size_t n = RMPI_MIN(chunk, len - off);
        wire_put_t hdr = {raddr + off, rkey};
        struct iovec iov[2] = {{&hdr, sizeof hdr}, {(char *)local + off, n}};
        post(p, RMPI_SHM_PUT, iov, 2);
        off += n;
    } while (off < len);
    push_done(op, 0);
    return 0;
}

/* One cross-memory copy whole, as rmpi_cma_copy but never fatal and without its refusal
 * rule: the owner's part of a split copy, whose failure the origin answers by copying the
 * part itself (0 or an errno). */
static int split_move(pid_t pid, void *local, size_t len, uint64_t raddr, int write)
{
    size_t done = 0;
    while (done < len) {
        struct iovec l = {(char *)local + done, len - done}, r = {(void *)(uintptr_t)(raddr + done), len - done};
        ssize_t n = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (n > 0)
            done += (size_t)n;
        else if (n == 0 || errno != EINTR)
            return n ? errno : EIO;
    }
    return 0;
}

/* The owner's side: a tail posted in our split line, copied now unless its origin took it
 * back first. The line's bytes come from a process of this job (which could write our
 * memory by cross-memory attach anyway); the origin's index is checked all the same. */
static __attribute__((noinline)) int split_serve(shm_rail_t *s)
{
    split_slot_t *sl = s->split;
    uint32_t e = SPLIT_POSTED;
    if (!atomic_compare_exchange_strong_explicit(&sl->state, &e, SPLIT_TAKEN, memory_order_acquire,
                                                 memory_order_relaxed))
        return 0;
    int from = sl->from, err = EINVAL;
    shm_peer_t *p = from >= 0 && from < s->nlocal && from != s->my_local ? s->peer[s->local_rank[from]] : NULL;
    if (p) /* a put: we read the tail from the origin; a get: we write it into the origin */
        err = split_move(p->pid, (void *)(uintptr_t)sl->taddr, sl->len, sl->oaddr, !sl->write);
    if (err == EPERM || err == EACCES || err == ENOSYS)
        s->split_min = 0; /* we may not reach it: stop offering (the origin copies the tail) */
    sl->err = err;
    rmpi_net_split_stats.took++;
    atomic_store_explicit(&sl->state, SPLIT_DONE, memory_order_release);
    return 1;
}

/* Called on a pass that found nothing: this process polls inside MPI, so origins may post. */
static __attribute__((noinline)) void split_arm(shm_rail_t *s)
{
    if (++s->split_idle >= SPLIT_ARM) {
        s->split_idle = 0;
        atomic_store_explicit(&s->split->polling, 1, memory_order_relaxed);
    }
}

/* The owner took the tail: wait for its done word (its copy is a system call already
 * running; oversubscribed, the owner may be off its core, so we yield). An owner that died
 * meanwhile leaves the tail to us (ESRCH then comes from our own copy). */
static int split_wait(shm_peer_t *p, split_slot_t *sl)
{
    for (unsigned i = 1;; i++) {
        if (atomic_load_explicit(&sl->state, memory_order_acquire) == SPLIT_DONE)
            return sl->err;
        if (i > 256)
            sched_yield();
        if ((i & 4095) == 0 && kill(p->pid, 0) && errno == ESRCH)
            return ESRCH;
    }
}

/* A copy of one piece of at least RMPI_SHM_CMA_SPLIT bytes: split with the owner when it
 * polls and its line is free, else whole; the result is cma()'s. */
static int split_copy(shm_rail_t *s, shm_peer_t *p, void *local, size_t len, uint64_t raddr, int write)
{
    split_slot_t *sl = (split_slot_t *)((char *)p->seg + SPLIT_OFF);
    uint32_t e = SPLIT_IDLE;
    if (!atomic_load_explicit(&sl->polling, memory_order_relaxed) ||
        !atomic_compare_exchange_strong_explicit(&sl->state, &e, SPLIT_SETUP, memory_order_acquire,
                                                 memory_order_relaxed))
        return cma(p, local, len, raddr, write);
    size_t head = (len / 2) & ~(size_t)63, tail = len - head;
    sl->from = s->my_local;
    sl->write = write;
    sl->oaddr = (uintptr_t)local + head;
    sl->taddr = raddr + head;
    sl->len = tail;
    atomic_store_explicit(&sl->state, SPLIT_POSTED, memory_order_release);
    int rc = cma(p, local, head, raddr, write);
    e = SPLIT_POSTED;
    int self = 1;
    if (atomic_compare_exchange_strong_explicit(&sl->state, &e, SPLIT_CLAIMED, memory_order_relaxed,
                                                memory_order_relaxed)) {
        /* it was not polling after all (computing, off its core): no split until it is again */
        atomic_store_explicit(&sl->polling, 0, memory_order_relaxed);
        rmpi_net_split_stats.claimed++;
    } else {
        self = split_wait(p, sl) != 0; /* the owner failed: the tail by us, for our own answer */
        rmpi_net_split_stats.served += (uint64_t)!self;
    }
    atomic_store_explicit(&sl->state, SPLIT_IDLE, memory_order_release);
    if (self) {
        int rc2 = cma(p, (char *)local + head, tail, raddr + head, write);
        rc = rc ? rc : rc2;
    }
    return rc;
}

/* Synchronous writes or reads by cross-memory attach (net.h copy_now): a one-sided flush of
 * a few small puts or gets then needs no progress pass to see them complete. Not to a peer
 * whose kernel refused one (our puts to it go through the rings, which this would
 * overtake); to one never tried, the first piece alone learns whether the kernel lets us
 * (a dynamic window's origin has no other way: its target memory has no key to emulate
 * with). */
static int shm_copy_now(rmpi_rail_t *rail, int peer, const struct iovec *local, const struct iovec *remote, int n,
                        uint64_t rkey, int write)
{
    (void)rail;
    (void)rkey; /* the origin range-checked against the window; the kernel checks the mapping */
    shm_peer_t *p = shm.peer[peer];
    if (p->cma < 0)
        return 1;
    if (p->cma == 0) {
        int rc = cma(p, local[0].iov_base, local[0].iov_len, (uintptr_t)remote[0].iov_base, write);
        if (rc)
            return rc;
        if (--n == 0)
            return 0;
        local++, remote++;
    }
    if (p->ncb) /* in post order */
        cma_flush(p);
    size_t total = 0, least = SIZE_MAX;
    for (int i = 0; i < n; i++) {
        total += local[i].iov_len;
        least = RMPI_MIN(least, local[i].iov_len);
    }
    if (shm.split_min && least >= shm.split_min) {
        /* each piece split (one-sided gets read at a flush: get_bw's window of them) */
        for (int i = 0; i < n; i++) {
            int rc = split_copy(&shm, p, local[i].iov_base, local[i].iov_len, (uintptr_t)remote[i].iov_base, write);
            if (rc)
                return rc;
        }
        return 0;
    }
    ssize_t got = write ? process_vm_writev(p->pid, local, (unsigned long)n, remote, (unsigned long)n, 0)
                        : process_vm_readv(p->pid, local, (unsigned long)n, remote, (unsigned long)n, 0);
    if (got == (ssize_t)total)
        return 0;
    for (int i = 0; i < n; i++) { /* each alone, as cma_flush does, to learn what failed */
        int rc = cma(p, local[i].iov_base, local[i].iov_len, (uintptr_t)remote[i].iov_base, write);
        if (rc)
            return rc;
    }
    return 0;
}

static void serve_gets(void)
{
    get_resp_t **pp = &shm.resp;
    while (*pp) {
        get_resp_t *g = *pp;
        shm_peer_t *p = g->peer;
        if (p->ncb) /* as in post: our puts before any later frame */
            cma_flush(p);
        while (!p->pend) {
            size_t room = p->tx_kind == DEDICATED ? shm.max_frame : shm.qlay.csize[shm.qlay.nclass - 1];
            size_t n = g->status ? 0 : RMPI_MIN(room - sizeof(wire_get_resp_t), g->len - g->off);
            wire_get_resp_t h = {g->cookie, g->off, g->status, 0};
            struct iovec iov[2] = {{&h, sizeof h}, {(char *)g->src + g->off, n}};
            if (!tx_now(p, p->tx_kind, RMPI_SHM_GET_RESP, iov, 2, sizeof h + n))
                break;
            g->off += n;
            if (g->off == g->len || g->status)
                break;
        }
        if (g->off == g->len || g->status) {
            *pp = g->next;
            free(g);
        } else {
            pp = &g->next;
        }
    }
}

static void handle(shm_rail_t *s, int rank, unsigned type, const char *buf, size_t len)
{
    switch (type) {
    case RMPI_SHM_DATA: s->env->on_frame(&s->base, rank, buf, len); break;
    case RMPI_SHM_GET_REQ: {
        wire_get_req_t req;
        memcpy(&req, buf, sizeof req);
        get_resp_t *g = rmpi_xcalloc(1, sizeof *g);
        g->peer = s->peer[rank];
        g->cookie = req.cookie;
        g->len = req.len;
        g->src = mr_check(req.rkey, req.raddr, req.len);
        g->status = g->src ? 0 : -EFAULT;
        if (!g->src)
            rmpi_warn("rank %d asked to read %llu bytes at %#llx outside any registered region.", rank,
                      (unsigned long long)req.len, (unsigned long long)req.raddr);
        g->next = s->resp;
        s->resp = g;
        break;
    }
    case RMPI_SHM_GET_RESP: {
        wire_get_resp_t h;
        memcpy(&h, buf, sizeof h);
        emu_get_t *eg = (emu_get_t *)(uintptr_t)h.cookie;
        size_t n = len - sizeof h;
        if (h.status == 0 && h.off + n <= eg->len) {
            memcpy(eg->local + h.off, buf + sizeof h, n);
            eg->got += n;
        }
        if (h.status || eg->got == eg->len) {
            eg->op->status = h.status;
            eg->op->t_done = rmpi_time_ns();
            eg->op->complete(eg->op);
            free(eg);
        }
        break;
    }
    case RMPI_SHM_PUT: {
        wire_put_t h;
        memcpy(&h, buf, sizeof h);
        size_t n = len - sizeof h;
        char *dst = mr_check(h.rkey, h.raddr, n);
        if (dst)
            memcpy(dst, buf + sizeof h, n);
        else
            rmpi_warn("rank %d wrote %zu bytes at %#llx outside any registered region; dropped.", rank, n,
                      (unsigned long long)h.raddr);
        break;
    }
    case RMPI_SHM_CHAN_REQ: {
        /* J2-J4: the receiver has its new channel ready; the marker is our last frame on the
         * old one (it follows whatever is still queued), the next frames take the new one. */
        shm_peer_t *p = s->peer[rank];
        int to = len == 1 ? (unsigned char)buf[0] : -1;
        if (to != SHARED && to != DEDICATED)
            rmpi_fatal("corrupt shared-memory channel request from rank %d.", rank);
        if (to == p->tx_kind)
            break;
        post(p, RMPI_SHM_CHAN_MARK, NULL, 0);
        if (to == DEDICATED) { /* the receiver emptied the ring: start it over */
            uint64_t t0 = rmpi_time_ns();
            p->wr.w = p->wr.r_cached = 0;
            rmpi_shm_prefault(p->wr.ring, s->ring_stride);
            s->st.switch_ns += rmpi_time_ns() - t0;
        } else {
            /* a queue made since we last faulted it in (a small job's first move to it, or
             * made again after it was given back: its pages left our page tables then); the
             * request's stamp (acquire) orders the receiver's count before this load */
            uint32_t g = atomic_load_explicit(&((seg_hdr_t *)p->seg)->q_gen, memory_order_relaxed);
            if (g != p->q_gen) {
                uint64_t t0 = rmpi_time_ns();
                rmpi_shm_prefault((char *)p->seg + SEG_HDR, s->qlay.bytes);
                p->q_gen = g;
                s->st.switch_ns += rmpi_time_ns() - t0;
            }
        }
        p->tx_kind = to;
        break;
    }
    default: rmpi_fatal("corrupt shared-memory frame (type %u) from rank %d.", type, rank);
    }
}

/* A frame of sender x from the shared queue (or replayed after its ring's marker). */
static void shared_frame(shm_rail_t *s, shm_rx_t *x, unsigned type, unsigned flags, const char *buf, size_t len)
{
    if ((flags & RMPI_SHM_Q_MORE) || x->frag_len) {
        if (x->frag_len + len > s->max_frame)
            rmpi_fatal("corrupt shared-memory frame: rank %d sent fragments of more than %zu bytes.", x->rank,
                       s->max_frame);
        if (x->frag_len + len > x->frag_cap) {
            x->frag_cap = s->max_frame;
            x->frag = rmpi_xrealloc(x->frag, x->frag_cap);
        }
        memcpy(x->frag + x->frag_len, buf, len);
        x->frag_len += len;
        if (flags & RMPI_SHM_Q_MORE)
            return;
        buf = x->frag;
        len = x->frag_len;
        x->frag_len = 0;
    }
    if (type == RMPI_SHM_CHAN_MARK) {
        /* J5 done for shared -> dedicated: every frame before the switch is in; read the ring */
        rmpi_net_chsw_marked(&x->sw, DEDICATED, &s->st, x->rank, s->env->rank);
        ring_activate(x);
        return;
    }
    handle(s, x->rank, type, buf, len);
}

/* A ring's marker was read (J5 for dedicated -> shared): frames held back from the shared
 * queue go on in order, the ring leaves the poll list and gives its memory back. */
static void ring_retire(shm_rail_t *s, shm_rx_t *x)
{
    int i = x->ai;
    s->act[i] = s->act[--s->nact];
    s->act[i]->ai = i;
    s->stamp[i] = s->stamp[s->nact];
    s->nqueue_from++;
    x->active = 0;
    s->st.mem[DEDICATED] -= s->ring_stride;
    uint64_t t0 = rmpi_time_ns();
#ifdef MADV_REMOVE
    if (madvise(x->rd.ring, s->ring_stride, MADV_REMOVE))
#endif
        memset(x->rd.ring, 0, s->ring_stride);
    s->st.switch_ns += rmpi_time_ns() - t0;
    while (x->park) {
        parked_t *k = x->park;
        x->park = k->next;
        shared_frame(s, x, k->type, k->flags, k->data, k->len);
        free(k);
    }
    x->park_tail = &x->park;
}

/* A slot taken and never published for seconds: if its sender is dead, say which. */
static void queue_stuck(shm_rail_t *s)
{
    uint64_t now = rmpi_time_ns();
    if (!s->stuck_since) {
        s->stuck_since = now;
        return;
    }
    if (now - s->stuck_since < RMPI_SHM_QUEUE_STUCK_NS)
        return;
    for (int l = 0; l < s->nlocal; l++) {
        shm_peer_t *p = s->peer[s->local_rank[l]];
        if (p && kill(p->pid, 0) && errno == ESRCH)
            rmpi_fatal("rank %d (pid %d) died while writing to rank %d's shared receive queue.", p->rank, (int)p->pid,
                       s->env->rank);
    }
    s->stuck_since = now;
}

#define POLL_SHARED_MAX 64 /* frames a pass reads from the queue */
/* inlined in both callers: called, the queue-only pass (RMPI_CHANNELS=shared) cost 19 Ir more
 * per empty MPI_Iprobe (bench/channels.sh --callgrind idle: 324 against 305) */
/* A frame of rank ready and left unread at rmpi_net_rx_enough: the channel statistics' count
 * of frames that wait behind another of their sender (net.h on_rx_left). */
static __attribute__((noinline, cold)) void rx_left(shm_rail_t *s, int rank)
{
    if (s->env->on_rx_left)
        s->env->on_rx_left(&s->base, rank);
}

static inline __attribute__((always_inline)) int poll_shared(shm_rail_t *s)
{
    int ev = 0;
    const rmpi_shm_qslot_t *sl;
    while (ev < POLL_SHARED_MAX && (sl = rmpi_shm_qpeek(&s->rxq))) {
        if (sl->from >= s->nlocal || sl->from == s->my_local)
            rmpi_fatal("corrupt entry in rank %d's shared receive queue (sender %u).", s->env->rank, sl->from);
        shm_rx_t *x = &s->rx[sl->from];
        if (RMPI_UNLIKELY(rmpi_net_rx_enough)) { /* left in the queue for the next receive */
            rx_left(s, x->rank);
            break;
        }
        const char *buf = sl->data;
        uint32_t used = sizeof *sl; /* an inline frame takes its slot */
        if (sl->len > RMPI_SHM_Q_INLINE) {
            int c;
            if (sl->buf >= s->qlay.cfirst[s->qlay.nclass])
                rmpi_fatal("corrupt entry in rank %d's shared receive queue (sender %u, buffer %u).", s->env->rank,
                           sl->from, sl->buf);
            buf = rmpi_shm_qbuf(&s->rxq, sl->buf, &c);
            if (sl->len > s->qlay.csize[c])
                rmpi_fatal("corrupt shared-memory frame: rank %d wrote %u bytes into a %u-byte buffer.", x->rank,
                           sl->len, s->qlay.csize[c]);
            used = s->qlay.csize[c];
        }
        s->st.rx_bytes[SHARED] += sl->len;
        s->st.buf_bytes[SHARED] += used;
        s->st.rx_frames[SHARED]++;
        if (RMPI_LIKELY(sl->type == RMPI_SHM_DATA && !sl->flags && !x->frag_len && !x->sw.waiting)) {
            /* shared_frame's and handle's common case, without their calls */
            s->env->on_frame(&s->base, x->rank, buf, sl->len);
        } else if (x->sw.waiting && x->sw.kind == SHARED) {
            /* the sender already left its ring, whose last frames are not all read (J5) */
            parked_t *k = rmpi_xmalloc(sizeof *k + sl->len);
            *k = (parked_t){NULL, sl->type, sl->flags, sl->len};
            memcpy(k->data, buf, sl->len);
            *x->park_tail = k;
            x->park_tail = &k->next;
        } else {
            shared_frame(s, x, sl->type, sl->flags, buf, sl->len);
        }
        rmpi_shm_qconsume(&s->rxq, sl);
        ev++;
    }
    if (ev) {
        rmpi_shm_qrelease(&s->rxq); /* the buffers of this pass's frames, a CAS per class */
        s->stuck_since = 0;
    } else if (RMPI_UNLIKELY((++s->idle_polls & 1023) == 0) && rmpi_shm_qreserved(&s->rxq))
        queue_stuck(s);
    return ev;
}

/* Reads x's frames (its bit was set: it may have none). 1: it may have more than one
 * pass reads. A marker retires the ring (it leaves the active list). */
static inline __attribute__((always_inline)) int drain_ring(shm_rail_t *s, shm_rx_t *x, int *ev)
{
    /* rmpi_shm_ring_peek and _consume_cells for a ring this process's peer writes (never
     * rdma), written out: the stamp due at a cell is computed once and kept for the next
     * poll, and an empty ring does not publish the reader's position (peek's idle store):
     * consume publishes it every quarter ring, and with at most a quarter unpublished a
     * writer still finds the half ring a frame may need once everything is read
     * (rmpi_shm_ring_max_frame). */
    rmpi_shm_reader_t *rd = &x->rd;
    int got = 0;
    /* bounded per ring so one busy sender cannot starve the others */
    for (int k = 0; k < 32;) {
        rmpi_shm_cellhdr_t *h = rmpi_shm_cell(rd->ring, rd->ncells, rd->r);
        uint32_t want = rmpi_shm_stamp(rd->r);
        if (atomic_load_explicit(&h->stamp, memory_order_acquire) != want) {
            s->stamp[x->ai] = (stamp_poll_t){&h->stamp, want};
            *ev += got;
            return 0;
        }
        if (RMPI_UNLIKELY(rmpi_net_rx_enough)) { /* left in the ring for the next receive */
            rx_left(s, x->rank);
            break;
        }
        uint32_t lt = h->lentype;
        size_t len = lt & 0xffffffu;
        unsigned type = lt >> 24;
        const char *f = (const char *)h + RMPI_SHM_HDR;
        if (RMPI_UNLIKELY(type == RMPI_SHM_SKIP)) {
            uint64_t n = (RMPI_SHM_HDR + len) / RMPI_SHM_CELL;
            rmpi_shm_ring_zero_lines(rd, rd->r, rd->r + n);
            rd->r += n;
            continue;
        }
        uint64_t n = rmpi_shm_frame_cells(rd->r, len);
        s->st.rx_bytes[DEDICATED] += len;
        s->st.buf_bytes[DEDICATED] += n * RMPI_SHM_CELL;
        s->st.rx_frames[DEDICATED]++;
        if (RMPI_LIKELY(type == RMPI_SHM_DATA)) { /* the core's frames: handle's first case, without its call */
            s->env->on_frame(&s->base, x->rank, f, len);
        } else if (type == RMPI_SHM_CHAN_MARK) {
            rmpi_net_chsw_marked(&x->sw, SHARED, &s->st, x->rank, s->env->rank);
            rmpi_shm_ring_consume_cells(rd, n);
            ring_retire(s, x);
            *ev += got;
            return 0;
        } else {
            handle(s, x->rank, type, f, len);
        }
        if (RMPI_UNLIKELY(n > RMPI_SHM_PACK_CELLS)) /* consume_cells without its rdma case */
            rmpi_shm_ring_zero_lines(rd, rd->r, rd->r + n);
        rd->r += n;
        if (RMPI_UNLIKELY(rd->r - rd->r_pub_last >= rd->ncells / 4)) {
            atomic_store_explicit(&rd->ring->r_pub, rd->r, memory_order_release);
            rd->r_pub_last = rd->r;
        }
        got++;
        k++;
    }
    s->stamp[x->ai] = stamp_poll(rd);
    *ev += got;
    return 1;
}

/* A pass reads the doorbell words (one load each while no bit is set), the shared queue if
 * its bit (this process's own index) was set or left, and the rings whose bits were set or
 * left from the last pass; a ring that is not active (retired, or its marker on the queue not
 * read yet: ring_activate sets its bit again) is skipped. The queue is read whenever its bit
 * comes, even while no sender is on it: a sender leaving its ring rings it after its marker,
 * and the ring may retire in this very pass. Its bit is left for the next pass when the poll
 * stopped at its bound, or a sender holds a position the poll did not read (it may have found
 * the bit set and not rung: rmpi_shm_qbell, shm.h; polling on keeps queue_stuck's watch on a
 * dead one). */
static __attribute__((noinline)) int poll_bells(shm_rail_t *s)
{
    int ev = 0, left = s->any_left;
    s->any_left = 0;
    for (int w = 0; w < s->nbell; w++) {
        uint64_t b = rmpi_shm_bell_take(&s->bell[w]);
        if (RMPI_UNLIKELY(left)) {
            b |= s->bell_left[w];
            s->bell_left[w] = 0;
        }
        if (w == s->my_local / 64 && (b & s->qbit)) {
            b &= ~s->qbit;
            /* a queue given back has nothing to read (the bell of its last sender, rung after
             * its marker) and its pages must stay out of memory */
            if (RMPI_LIKELY(s->q_made)) {
                int n = poll_shared(s);
                if (rmpi_shm_qbell_again(&s->rxq, n, POLL_SHARED_MAX)) {
                    s->bell_left[w] |= s->qbit;
                    s->any_left = 1;
                }
                ev += n;
            }
        }
        while (b) {
            int l = w * 64 + __builtin_ctzll(b);
            b &= b - 1;
            shm_rx_t *x = &s->rx[l];
            if (x->active && drain_ring(s, x, &ev)) {
                s->bell_left[w] |= 1ull << (l % 64);
                s->any_left = 1;
            }
        }
    }
    return ev;
}

/* Up to RING_POLL_MAX rings and nobody on the queue, a pass reads the rings' stamps: an empty
 * ring is a load, a test and the loop (the stamps in an array of their own, in registers while
 * nothing is found; 8 instructions a ring); the words cost about 16 a pass and a cache line
 * more per frame. */
#define RING_POLL_MAX 2
/* From ring i on, whose stamp came: out of line, so the scan below saves no registers. */
static __attribute__((noinline)) int drain_stamps(shm_rail_t *s, int i)
{
    int ev = 0, n;
    const stamp_poll_t *st = s->stamp;
    for (;;) {
        shm_rx_t *x = s->act[i];
        drain_ring(s, x, &ev);
        i += x->active; /* retired: its place holds another ring, read it next */
        n = RMPI_MIN(s->nact, RING_POLL_MAX);
        /* empty; drain_ring's acquire load orders the frame's bytes once it is not */
        while (i < n && atomic_load_explicit(st[i].at, memory_order_relaxed) != st[i].want)
            i++;
        if (i >= n)
            return ev;
    }
}

static inline int poll_stamps(shm_rail_t *s)
{
    int n = s->nact;
    const stamp_poll_t *st = s->stamp;
    for (int i = 0; i < n; i++)
        if (RMPI_UNLIKELY(atomic_load_explicit(st[i].at, memory_order_relaxed) == st[i].want))
            return drain_stamps(s, i);
    return 0;
}

/* The shared queue at a switch to it while it is not there: a small job's first, or the first
 * after it was given back (the senders write to it only after the CHAN_REQ that follows: its
 * release store publishes the queue's initialization and q_gen, as a ring's stamp publishes
 * a frame); its memory is counted from now on. */
static void queue_make(shm_rail_t *s)
{
    uint64_t t0 = rmpi_time_ns();
    rmpi_shm_prefault((char *)s->seg + SEG_HDR, s->qlay.bytes);
    rmpi_shm_queue_attach(&s->rxq, (char *)s->seg + SEG_HDR, &s->qlay); /* read position 0 again */
    rmpi_shm_queue_init(&s->rxq);
    seg_hdr_t *h = s->seg;
    atomic_store_explicit(&h->q_gen, atomic_load_explicit(&h->q_gen, memory_order_relaxed) + 1, memory_order_relaxed);
    s->q_made = s->q_ever = 1;
    queue_arm(s, 0);
    s->st.mem[SHARED] = SEG_HDR + s->qlay.bytes;
    s->st.mem_peak[SHARED] = RMPI_MAX(s->st.mem_peak[SHARED], s->st.mem[SHARED]);
    s->st.switch_ns += rmpi_time_ns() - t0;
}

/* No sender can write to the queue again without a CHAN_REQ to it first (J1 makes the queue
 * again before that request): every local sender is on its ring with its marker read from
 * the queue (J5, which proves every earlier queue frame of it read), none is moving back,
 * no position is taken and unread, and every buffer read went back to its class. */
static int queue_unused(shm_rail_t *s)
{
    if (!s->q_made || s->nqueue_from || rmpi_shm_qreserved(&s->rxq) || s->rxq.rel_mask)
        return 0;
    for (int l = 0; l < s->nlocal; l++)
        if (l != s->my_local && (s->rx[l].sw.kind != DEDICATED || s->rx[l].sw.waiting || !s->rx[l].active))
            return 0;
    return 1;
}

/* The queue's last sender left it q_keep_ns ago (RMPI_CHAN_QUEUE_KEEP_MS): give its pages
 * back (punched out, MADV_REMOVE, as a retired ring), so that the process holds only the
 * rings of its busy peers; the next switch to shared makes it again (queue_make). The seed
 * (adaptive-transport-selection sec. 3.1) keeps its shared DC channel for good: a DC target
 * costs little there, a queue 712 KiB here. Not at once: a peer released by the next
 * selection run would pay the queue's making (0.4-0.5 ms) beside its switch. */
static __attribute__((noinline)) void queue_give_back(shm_rail_t *s)
{
    uint64_t t0 = rmpi_time_ns();
    if (t0 - s->q_unused_since < s->q_keep_ns)
        return;
    queue_arm(s, 0); /* armed again by the next ring_activate that empties the queue */
    if (!queue_unused(s))
        return;
#ifdef MADV_REMOVE
    if (madvise((char *)s->seg + SEG_HDR, s->qlay.bytes, MADV_REMOVE))
#endif
        return; /* the pages cannot go: keep the queue as it is */
    s->q_made = 0;
    s->q_returns++;
    s->st.mem[SHARED] = 0; /* the header (the doorbell) stays, uncounted as before the first make */
    s->st.switch_ns += rmpi_time_ns() - t0;
}

/* J1: make the new channel ready and ask the sender to move. Its frames keep arriving on
 * the old channel until its marker, which poll_shared/drain_ring wait for (J5). */
static int shm_chan_switch(rmpi_rail_t *rail, int peer, int to)
{
    shm_rail_t *s = &shm;
    shm_peer_t *p = peer >= 0 && peer < s->env->size ? s->peer[peer] : NULL;
    if (!p || s->policy != RMPI_CHANNELS_ADAPTIVE || (to != SHARED && to != DEDICATED))
        return -1;
    shm_rx_t *x = &s->rx[p->lidx];
    if (rmpi_net_chsw_start(&x->sw, to))
        return 1;
    if (to == DEDICATED) {
        /* retired rings were given back zeroed: touch the pages now, not on the hot path */
        uint64_t t0 = rmpi_time_ns();
        rmpi_shm_prefault(x->rd.ring, s->ring_stride);
        s->st.switch_ns += rmpi_time_ns() - t0;
        atomic_store_explicit(&x->rd.ring->r_pub, 0, memory_order_relaxed);
        x->rd.r = x->rd.r_pub_last = 0;
        s->st.rings_asked++;
    } else {
        queue_arm(s, 0); /* a sender comes back to the queue */
        if (!s->q_made)
            queue_make(s);
    }
    unsigned char k = (unsigned char)to;
    struct iovec iov = {&k, 1};
    post(p, RMPI_SHM_CHAN_REQ, &iov, 1);
    return 0;
}

static int shm_chan_kind(rmpi_rail_t *rail, int peer)
{
    shm_peer_t *p = peer >= 0 && peer < shm.env->size ? shm.peer[peer] : NULL;
    return p ? shm.rx[p->lidx].sw.kind : -1;
}

static void shm_chan_stats(rmpi_rail_t *rail, rmpi_net_chan_stats_t *st)
{
    *st = shm.st;
    st->ring_bytes = shm.ring_stride;
}

/* RMPI_CHAN_FORCE_SWITCH_MS (tests): every few ms, one random local sender changes channel. */
static void force_switch(shm_rail_t *s)
{
    int l = rmpi_net_chsw_force_pick(&s->force, s->nlocal, s->my_local);
    if (l >= 0)
        shm_chan_switch(&s->base, s->local_rank[l], !s->rx[l].sw.kind);
}

/* The queue alone: its empty poll inline, the frames out of line (poll_shared). */
static __attribute__((noinline)) int drain_shared(shm_rail_t *s) { return poll_shared(s); }

static inline int poll_queue(shm_rail_t *s)
{
    if (RMPI_LIKELY(!rmpi_shm_qpeek(&s->rxq))) {
        if (RMPI_UNLIKELY((++s->idle_polls & 1023) == 0) && rmpi_shm_qreserved(&s->rxq))
            queue_stuck(s);
        return 0;
    }
    return drain_shared(s);
}

static __attribute__((noinline)) int progress_rare(shm_rail_t *s);

/* A pass. Whatever it finds is handled out of line (poll_bells, drain_stamps, drain_shared,
 * progress_rare), so the pass that finds nothing saves and restores no registers: with the
 * handling inlined here it pushed and popped six and kept a 576-byte frame, 16 instructions
 * of every pass, the busy pair's included. */
static int shm_progress(rmpi_rail_t *rail)
{
    shm_rail_t *s = &shm;
    int ev = 0;
    /* only a frame of this pass stops it: one another rail matched earlier in the same pass
     * (self, tcp) must not keep the rings unread while that rail has a frame every pass */
    rmpi_net_rx_enough = 0;
    /* Rings and the queue both in use, or more than RING_POLL_MAX rings: the doorbell words.
     * The common pass, one word with nothing left over and no bit set, is a load and a test
     * whatever the rings and the queue hold. The queue alone (no ring: RMPI_CHANNELS=shared,
     * adaptive before its first ring) is read at its next slot, and up to RING_POLL_MAX rings
     * alone by their stamps: either is one load too, and the word would cost the only
     * busy channel a second cache line per frame (the busy pair's latency). */
    if (s->nact && (s->nqueue_from || s->nact > RING_POLL_MAX)) {
        if (RMPI_UNLIKELY(s->nbell != 1 || s->any_left) || atomic_load_explicit(&s->bell[0], memory_order_relaxed))
            ev += poll_bells(s);
    } else if (s->nact) {
        ev += poll_stamps(s);
    } else if (s->nqueue_from) {
        ev += poll_queue(s);
    }
    if (RMPI_UNLIKELY(s->chores | s->npending | s->ncb | s->ndone) || RMPI_UNLIKELY(s->resp != NULL))
        ev += progress_rare(s);
    /* the split line (split_copy), on a pass that found nothing (the pass that handles a frame
     * pays one test): a tail posted, or no origin told yet that we poll */
    if (!ev) {
        if (RMPI_UNLIKELY(atomic_load_explicit(&s->split->state, memory_order_relaxed) == SPLIT_POSTED))
            return split_serve(s);
        if (s->split_min && RMPI_UNLIKELY(!atomic_load_explicit(&s->split->polling, memory_order_relaxed)))
            split_arm(s);
    }
    return ev;
}

static int progress_rare(shm_rail_t *s)
{
    int ev = 0;
    if (RMPI_UNLIKELY(s->chores)) {
        if (s->force.ns)
            force_switch(s);
        /* the clock every 64 passes; at RMPI_CHAN_QUEUE_KEEP_MS=0 at once (the tests' way) */
        if (s->q_unused_since && (!s->q_keep_ns || (++s->q_check & 63) == 0))
            queue_give_back(s);
    }
    if (RMPI_UNLIKELY(s->npending))
        flush_pending();
    if (RMPI_UNLIKELY(s->resp != NULL))
        serve_gets();
    if (RMPI_UNLIKELY(s->ncb))
        cma_flush_all();
    if (RMPI_UNLIKELY(s->ndone)) {
        /* completions may post new operations that add to the list: take a snapshot */
        int n = s->ndone;
        rmpi_net_op_t *local[64], **ops = n <= 64 ? local : rmpi_xmalloc((size_t)n * sizeof *ops);
        memcpy(ops, s->done, (size_t)n * sizeof *ops);
        memmove(s->done, s->done + n, (size_t)(s->ndone - n) * sizeof *ops);
        s->ndone -= n;
        uint64_t now = rmpi_time_ns();
        for (int i = 0; i < n; i++) {
            ops[i]->t_done = now;
            ops[i]->complete(ops[i]);
        }
        if (ops != local)
            free(ops);
        ev += n;
    }
    return ev;
}

static void shm_close(rmpi_rail_t *rail)
{
    shm_rail_t *s = &shm;
    /* bounded flush: peers are in finalize too and drain their rings */
    uint64_t deadline = rmpi_time_ns() + 2000000000ull;
    cma_flush_all();
    while ((s->npending || s->resp) && rmpi_time_ns() < deadline) {
        flush_pending();
        serve_gets();
    }
    for (int r = 0; r < s->env->size; r++) {
        shm_peer_t *p = s->peer[r];
        if (!p)
            continue;
        while (p->pend) {
            pending_t *q = p->pend;
            p->pend = q->next;
            rmpi_net_held -= q->len;
            free(q);
        }
        munmap(p->seg, p->seg_len);
        free(p->cb);
        free(p);
    }
    for (int l = 0; l < s->nlocal; l++) {
        while (s->rx[l].park) {
            parked_t *k = s->rx[l].park;
            s->rx[l].park = k->next;
            free(k);
        }
        free(s->rx[l].frag);
    }
    munmap(s->seg, s->seg_len);
    shm_unlink(s->segname);
    free(s->peer);
    free(s->local_rank);
    free(s->rx);
    free(s->act);
    free(s->bell_left);
    free(s->stamp);
    free(s->done);
    free(s->mr);
    memset(s, 0, sizeof *s);
}

static void shm_describe(rmpi_rail_t *rail, void *file)
{
    fprintf(file, "    ring %u cells of %u bytes per local sender, max frame %zu, cross-memory attach %s\n", shm.ncells,
            RMPI_SHM_CELL, shm.max_frame, rmpi_knob_text("SHM_CMA"));
    fprintf(file, "    channels %s: shared receive queue %zu bytes (classes", rmpi_knob_text("CHANNELS"),
            shm.qlay.bytes);
    for (int c = 0; c < shm.qlay.nclass; c++)
        fprintf(file, " %u x %u B", shm.qlay.cfirst[c + 1] - shm.qlay.cfirst[c], shm.qlay.csize[c]);
    fprintf(file, "), dedicated ring %zu bytes per peer that has one; now %zu bytes shared + %zu dedicated\n",
            shm.ring_stride, shm.st.mem[SHARED], shm.st.mem[DEDICATED]);
    fprintf(file,
            "    shared queue given back %.0f ms after its last sender moved to a ring (RMPI_CHAN_QUEUE_KEEP_MS), made "
            "again at the next switch to it\n",
            (double)shm.q_keep_ns / 1e6);
    if (shm.env->chan_why)
        fprintf(file, "    start: %s\n", shm.env->chan_why);
    else /* rmpi_info: no job, so the rule (rmpi_chan_small_job) with this host's sizes */
        fprintf(file,
                "    start under adaptive: every local peer on its ring, no queue until a switch asks for one, when "
                "they number at most min(h, %zu rings in the queue's %zu bytes) (RMPI_CHAN_SMALL_JOB); else every "
                "peer shared\n",
                (SEG_HDR + shm.qlay.bytes) / shm.ring_stride, SEG_HDR + shm.qlay.bytes);
}

/* RMPI_REPORT: which start this process took and why (rmpi_chan_small_job's sentence), and
 * whether the shared queue was made. */
static void shm_rail_facts(rmpi_rail_t *rail, int json, char *buf, size_t len)
{
    (void)rail;
    const char *why = shm.env->chan_why ? shm.env->chan_why : "";
    char split_text[160];
    snprintf(split_text, sizeof split_text,
             "split copies (RMPI_SHM_CMA_SPLIT): %llu halves copied by the target, %llu taken back, %llu copied for "
             "others",
             (unsigned long long)rmpi_net_split_stats.served, (unsigned long long)rmpi_net_split_stats.claimed,
             (unsigned long long)rmpi_net_split_stats.took);
    if (json) /* the sentence holds no quote or backslash */
        snprintf(buf, len,
                 "\"start\": \"%s\", \"start_why\": \"%s\", \"shared_queue\": %s, \"shared_queue_now\": %s, "
                 "\"shared_queue_returns\": %llu, \"split_served\": %llu, \"split_claimed\": %llu, \"split_took\": %llu",
                 shm.start_ded ? "dedicated" : "shared", why, shm.q_ever ? "true" : "false",
                 shm.q_made ? "true" : "false", (unsigned long long)shm.q_returns,
                 (unsigned long long)rmpi_net_split_stats.served, (unsigned long long)rmpi_net_split_stats.claimed,
                 (unsigned long long)rmpi_net_split_stats.took);
    else if (!shm.q_ever)
        snprintf(buf, len, "start: %s; shared queue not made (no switch asked for it); %s", why, split_text);
    else
        snprintf(buf, len, "start: %s; shared queue made, given back %llu times (no sender on it), %s at the end; %s",
                 why, (unsigned long long)shm.q_returns, shm.q_made ? "held" : "not held", split_text);
}

const struct rmpi_net_ops rmpi_shm_ops = {
    .version = RMPI_NET_OPS_VERSION,
    .name = "shm",
    .open = shm_open_rail,
    .ready = shm_ready,
    .reaches = shm_reaches,
    .send = shm_send,
    .mr_reg = shm_mr_reg,
    .mr_dereg = shm_mr_dereg,
    .get = shm_get,
    .put = shm_put,
    .copy_now = shm_copy_now,
    .progress = shm_progress,
    .close = shm_close,
    .describe = shm_describe,
    .rail_facts = shm_rail_facts,
    .chan_kind = shm_chan_kind,
    .chan_switch = shm_chan_switch,
    .chan_stats = shm_chan_stats,
};
