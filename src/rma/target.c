/* The target side: a core progress hook, registered while any window exists, receives
 * each window's active messages and handles them one at a time in arrival order
 * (docs/wire/rma.md); the lock manager queues lock requests that cannot be granted. */
#include "rma_impl.h"

#include <stdio.h>

typedef struct incoming {
    rmpi_list_t link;
    rmpi_req_t *req; /* receive of the message (eager: complete at once) */
    void *buf;
    size_t len, pos; /* landed bytes; the next active message in it starts at pos */
    size_t cap;      /* bytes of buf when it came from the spare buffers (big_take) */
    int peer;        /* the sender's peer index (cut off if the message is malformed) */
    int origin;      /* its window rank */
} incoming_t;

struct rmpi_win_lockq {
    rmpi_win_lockq_t *next;
    int origin, type;
    int32_t tag;
};

static rmpi_list_t wins = {&wins, &wins};
static int nwins;
/* Handlers send, and sending may progress: the hook must not run inside itself (messages
 * would be handled out of order). */
static int serving;

static int rma_progress(void);
static int rma_eager(void *arg, int peer, int src, int tag, const char *data, size_t len);

void rma_serve_add(rmpi_win_t *w)
{
    rmpi_core_eager_handler(w->comm->ctx, rma_eager, w);
    rmpi_list_push_back(&wins, &w->link);
    if (nwins++ == 0)
        rmpi_core_hook_add(rma_progress);
}

/* Receive buffers of large messages kept for the next ones: a window of 1 MiB puts sent
 * as messages (dynamic windows over tcp) took a fresh heap buffer each, whose pages
 * faulted in at the receive and went back to the kernel at the free (glibc's trim). */
#define BIG_MIN ((size_t)64 << 10)
#define BIG_KEEP 8
#define BIG_KEEP_BYTES ((size_t)64 << 20)
static struct {
    void *buf;
    size_t cap;
} spare[BIG_KEEP];
static int nspare;
static size_t spare_bytes;

static void *big_take(size_t len, size_t *cap)
{
    int best = -1;
    for (int i = 0; i < nspare; i++)
        if (spare[i].cap >= len && (best < 0 || spare[i].cap < spare[best].cap))
            best = i;
    if (best < 0) {
        *cap = len;
        return rmpi_xmalloc(len);
    }
    void *p = spare[best].buf;
    *cap = spare[best].cap;
    spare_bytes -= *cap;
    spare[best] = spare[--nspare];
    return p;
}

static void big_give(void *p, size_t cap)
{
    /* full: the smallest kept buffer makes room for a larger one (a run of 64 KiB
     * messages must not keep 1 MiB ones from being reused after it) */
    int small = 0;
    for (int i = 1; i < nspare; i++)
        small = spare[i].cap < spare[small].cap ? i : small;
    if (nspare == BIG_KEEP && spare[small].cap < cap) {
        free(spare[small].buf);
        spare_bytes -= spare[small].cap;
        spare[small] = spare[--nspare];
    }
    if (nspare == BIG_KEEP || spare_bytes + cap > BIG_KEEP_BYTES) {
        free(p);
        return;
    }
    spare[nspare].buf = p;
    spare[nspare++].cap = cap;
    spare_bytes += cap;
}

static void incoming_free(incoming_t *m)
{
    if (m->req) /* none for a message taken where it landed (rma_eager) */
        rmpi_req_release(m->req);
    if (m->cap)
        big_give(m->buf, m->cap);
    else
        free(m->buf);
    free(m);
}

void rma_serve_remove(rmpi_win_t *w)
{
    rmpi_core_eager_handler(w->comm->ctx, NULL, NULL);
    rmpi_list_remove(&w->link);
    for (int o = 0; o < w->size; o++) /* none after Win_free's barrier, unless the user erred */
        while (!rmpi_list_empty(&w->held[o])) {
            incoming_t *m = RMPI_CONTAINER_OF(w->held[o].next, incoming_t, link);
            rmpi_list_remove(&m->link);
            incoming_free(m);
        }
    while (w->lockq) {
        rmpi_win_lockq_t *q = w->lockq;
        w->lockq = q->next;
        free(q);
    }
    if (--nwins == 0) {
        rmpi_core_hook_remove(rma_progress);
        while (nspare)
            free(spare[--nspare].buf);
        spare_bytes = 0;
    }
}

/* Send an answer of len bytes at buf (heap: malloc'd, the caller gives it up): eagerly from
 * buf when it fits the origin's eager limit (the core copies it into the frame: no request,
 * no copy of our own), else as a message that owns a heap copy. */
static void answer(rmpi_win_t *w, int origin, int32_t tag, void *buf, size_t len, int heap)
{
    if (rmpi_core_send_eager(rmpi_comm_world_rank(w->comm, origin), w->comm->ctx, w->rank, tag, buf, len)) {
        if (heap)
            free(buf);
        return;
    }
    if (!heap) {
        void *c = rmpi_xmalloc(len ? len : 1);
        memcpy(c, buf, len);
        buf = c;
    }
    rma_send(w, origin, tag, buf, len);
}

typedef struct in_place {
    rmpi_win_t *w;
    int origin;
} in_place_t;

static void in_place_sent(rmpi_req_t *r)
{
    const in_place_t *a = r->ext;
    a->w->lockwait[a->origin] &= (unsigned char)~RMA_WAIT_ANSWER;
    a->w->nanswering--;
}

/* A large contiguous get answered from the window memory itself, no heap copy (a 1 MiB
 * get's answer faulted in a fresh buffer each time). The send may read the memory later (a
 * rendezvous), so the origin's later messages wait until it has (an origin's operations
 * take effect in issue order: a put behind the get must not change what it reads); the
 * origin's flush waits for the data, so the memory cannot go before (Win_detach, Win_free
 * after the origin's synchronisation; Win_free waits for nanswering anyway). */
static void answer_in_place(rmpi_win_t *w, int origin, int32_t tag, void *base, size_t len)
{
    in_place_t *a = rmpi_xmalloc(sizeof *a);
    *a = (in_place_t){w, origin};
    rmpi_req_t *r = rma_send_req(w, origin, tag, a, len);
    r->buf = base;
    r->on_complete = in_place_sent;
    w->lockwait[origin] |= RMA_WAIT_ANSWER;
    w->nanswering++;
    rmpi_core_isend(r);
}

/* seq: a FLUSH's table seq + 1 (0: none), RMA_ACK_TABLE_CHANGED when ours moved since */
static void ack(rmpi_win_t *w, int origin, int32_t tag, uint64_t seq)
{
    int32_t e = w->errs[origin];
    w->errs[origin] = 0;
    if (!e && seq && rma_rdma_table_changed(w, seq))
        e = RMA_ACK_TABLE_CHANGED;
    answer(w, origin, tag, &e, sizeof e, 0);
}

/* ---- lock manager: shared locks coexist, an exclusive one is alone; exclusive requests in
 * arrival order, shared ones granted whenever no exclusive one holds. When
 * origins of this node lock through our lock word (direct.c; Win_allocate's direct
 * targets, and Win_create windows' lock words), remote origins' requests take the same
 * word. ---- */
static int lock_try(rmpi_win_t *w, int type)
{
    if (rmpi_rma_lockword(w, w->rank))
        return rma_rw_try(w->lsync[w->rank], type == RMA_LOCK_EXCL);
    if (type == RMA_LOCK_EXCL ? w->lock_excl || w->lock_shared : w->lock_excl)
        return 0;
    if (type == RMA_LOCK_EXCL)
        w->lock_excl = 1;
    else
        w->lock_shared++;
    return 1;
}

/* Grant the queued requests that can be, in order (the lock word may have been released
 * by an origin of this node without any message: retried at every progress). A shared
 * request is granted while only shared holders hold the lock, even behind a waiting
 * exclusive one: a Lock_all holder takes its shared locks one target at a time (lazily,
 * or through lock words) and waits at the next target while holding the others, so with
 * writers first two exclusive requests and two Lock_all epochs across two nodes wait for
 * each other in a cycle (tests/mpi/rma/createlock hung so over fake nodes). Origins of
 * this node taking the lock word pass a waiting exclusive request the same way. */
static int lock_grant_queued(rmpi_win_t *w)
{
    int n = 0;
    for (rmpi_win_lockq_t **p = &w->lockq; *p;) {
        rmpi_win_lockq_t *q = *p;
        if (!lock_try(w, q->type)) {
            p = &q->next;
            continue;
        }
        *p = q->next;
        if (q->tag)
            ack(w, q->origin, q->tag, 0);
        else
            w->lockwait[q->origin] &= (unsigned char)~RMA_WAIT_LOCK; /* its operations held behind it may go */
        free(q);
        n++;
    }
    return n;
}

/* tag 0: a lock requested with operations (no answer): the origin's later messages wait
 * until it is granted. An exclusive request waits behind those queued before it. */
static void lock_request(rmpi_win_t *w, int origin, int type, int32_t tag)
{
    if ((type == RMA_LOCK_SHARED || !w->lockq) && lock_try(w, type)) {
        if (tag)
            ack(w, origin, tag, 0);
        return;
    }
    if (!tag)
        w->lockwait[origin] |= RMA_WAIT_LOCK;
    rmpi_win_lockq_t *q = rmpi_xmalloc(sizeof *q), **p = &w->lockq;
    *q = (rmpi_win_lockq_t){NULL, origin, type, tag};
    while (*p)
        p = &(*p)->next;
    *p = q;
}

static void lock_release(rmpi_win_t *w, int type)
{
    if (rmpi_rma_lockword(w, w->rank))
        rma_rw_release(w->lsync[w->rank], type == RMA_LOCK_EXCL);
    else if (type == RMA_LOCK_EXCL)
        w->lock_excl = 0;
    else if (w->lock_shared > 0)
        w->lock_shared--;
    lock_grant_queued(w);
}

/* ---- data access ---- */

/* The target memory of a message, or NULL when the range is outside the window (the
 * origin checks windows it knows the size of; dynamic windows are checked here). The
 * segments were checked by am_check: off + len does not overflow, their lengths add up to
 * bytes. */
static char *target_base(rmpi_win_t *w, const rma_hdr_t *h, const rma_seg_t *segs)
{
    int64_t lo = 0, hi = (int64_t)h->bytes;
    if (h->nseg) {
        lo = INT64_MAX, hi = INT64_MIN;
        for (uint32_t i = 0; i < h->nseg; i++) {
            if (segs[i].off < lo)
                lo = segs[i].off;
            int64_t end;
            if (__builtin_add_overflow(segs[i].off, (int64_t)segs[i].len, &end))
                return NULL; /* no window reaches past INT64_MAX */
            if (end > hi)
                hi = end;
        }
    }
    if (!h->bytes)
        return (char *)w->base;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* [a, b) may run over attached regions that touch each other (MPICH accepts such
         * accesses): follow them from a until b is covered or a gap shows. */
        uintptr_t a = (uintptr_t)(h->disp + (uint64_t)lo), b = (uintptr_t)(h->disp + (uint64_t)hi);
        if (b < a)
            return NULL;
        const rmpi_net_ranges_t *rs = &w->regions;
        for (int step = 0; step <= rs->n; step++) {
            int i = 0;
            while (i < rs->n && !(a >= rs->r[i].addr && a < rs->r[i].addr + rs->r[i].len))
                i++;
            if (i == rs->n)
                return NULL;
            a = rs->r[i].addr + rs->r[i].len;
            if (b <= a)
                return (char *)(uintptr_t)h->disp;
        }
        return NULL;
    }
    int64_t a, b;
    if (h->disp > w->bytes || __builtin_add_overflow((int64_t)h->disp, lo, &a) ||
        __builtin_add_overflow((int64_t)h->disp, hi, &b) || a < 0 || (uint64_t)b > w->bytes)
        return NULL;
    return (char *)w->base + h->disp;
}

/* Answers of at most this many bytes are made on the stack: gets up to
 * RMPI_RMA_SHM_MSG_MAX's default come as messages from origins of this node (a 512 B get
 * answered from the heap paid a malloc and a free). */
#define RMA_SMALL_ANSWER 4096

static int wants_reply(int kind) { return kind == AM_GET || kind == AM_GACC || kind == AM_CAS || kind == AM_FLUSH; }

/* Everything an active message says, checked before anything acts on it
 * (docs/wire/rma.md): NULL, or what is wrong with it. msg holds len bytes from its start;
 * h gets the header, *amlen its length (more active messages may follow it), *kern the
 * coll kernel of an accumulate's predefined contiguous type and op when it has one (NULL
 * otherwise: accumulate() then takes the general path), so the handler need not look
 * it up again. */
/* A short header (rma_shdr_t) as the full one it stands for: NULL, or what is wrong with it.
 * msg holds len >= sizeof(rma_shdr_t) bytes; *hlen: the header's bytes (an SGET's size
 * included). */
static const char *short_hdr(const char *msg, size_t len, rma_hdr_t *h, size_t *hlen)
{
    rma_shdr_t s;
    memcpy(&s, msg, sizeof s);
    memset(h, 0, sizeof *h);
    h->kind = s.kind == AM_SFOP   ? AM_GACC
              : s.kind == AM_SCAS ? AM_CAS
              : s.kind == AM_SGET ? AM_GET
              : s.kind == AM_SPUT ? AM_PUT
                                  : AM_FLUSH;
    h->version = s.version;
    h->reply_tag = s.reply_tag;
    h->disp = s.disp;
    *hlen = sizeof s;
    if (s.kind == AM_SPUT) {
        h->bytes = s.pbytes;
        return s.reply_tag || !s.pbytes ? "of a short put with an answer tag or no data" : NULL;
    }
    if (s.kind == AM_SFLUSH) /* disp: 0, or the origin's copy of our table's seq + 1 */
        return s.type || s.op ? "of a short flush with a type or operation" : NULL;
    if (s.kind == AM_SGET) {
        if (len < sizeof s + sizeof h->bytes)
            return "shorter than the header";
        memcpy(&h->bytes, msg + sizeof s, sizeof h->bytes);
        *hlen += sizeof h->bytes;
        return s.type || s.op ? "of a short get with a type or operation" : NULL;
    }
    MPI_Datatype type = (MPI_Datatype)(RMA_TYPE_BASE + s.type);
    MPI_Op op = s.kind == AM_SCAS ? MPI_REPLACE : (MPI_Op)(RMA_OP_BASE + s.op);
    /* the origin's short path sends these only (ops.c rmpi_rma_msg_atomic) */
    h->bytes = rma_int_atomic_size(type, op);
    if (!h->bytes || (s.kind == AM_SCAS && s.op) || (s.kind == AM_SFOP && type == MPI_BYTE))
        return "with a type or operation the short atomics do not take";
    h->op = (uint64_t)(uintptr_t)op;
    h->basic = (uint64_t)(uintptr_t)type;
    return NULL;
}

static const char *am_check(const rmpi_win_t *w, int origin, const char *msg, size_t len, rma_hdr_t *h, size_t *hlen,
                            size_t *amlen, rmpi_coll_kernel_t *kern)
{
    *kern = NULL;
    *hlen = sizeof *h;
    if (len >= sizeof(rma_shdr_t) && (uint8_t)msg[0] >= AM_SFOP && (uint8_t)msg[0] <= AM_SFLUSH) {
        const char *bad = short_hdr(msg, len, h, hlen);
        if (bad)
            return bad;
    } else if (len < sizeof *h)
        return "shorter than the header";
    else
        memcpy(h, msg, sizeof *h);
    if (h->version != RMA_WIRE_VERSION)
        return "of another wire version (mixed RailMPI builds?)";
    if (h->kind < AM_PUT || h->kind > AM_FENCE_DONE)
        return "of an unknown kind";
    if (origin < 0 || origin >= w->comm->size)
        return "from a rank outside the window's group";
    if (wants_reply(h->kind) && (h->reply_tag < 1 || h->reply_tag > RMA_TAG_MAX))
        return "with an answer tag outside 1..0x3fffffff";
    if ((h->kind == AM_LOCK || h->kind == AM_UNLOCK) && (h->reply_tag < 0 || h->reply_tag > RMA_TAG_MAX))
        return "with an answer tag outside 0..0x3fffffff";
    if ((h->kind == AM_LOCK || h->kind == AM_UNLOCK) && h->lock_type != RMA_LOCK_EXCL &&
        h->lock_type != RMA_LOCK_SHARED)
        return "with an unknown lock type";
    *amlen = *hlen;
    if (h->kind > AM_CAS)
        return h->nseg || h->bytes ? "of a control kind with data" : NULL;
    size_t rest = len - *hlen;
    if (h->nseg > rest / sizeof(rma_seg_t))
        return "listing more segments than it holds";
    rest -= h->nseg * sizeof(rma_seg_t);
    if (h->bytes > INT64_MAX / 2)
        return "of an impossible size";
    uint64_t sum = 0;
    for (uint32_t i = 0; i < h->nseg; i++) {
        rma_seg_t s;
        memcpy(&s, msg + *hlen + i * sizeof s, sizeof s);
        if (s.len > h->bytes || s.off > INT64_MAX - (int64_t)s.len)
            return "with a segment out of range";
        sum += s.len;
    }
    if (h->nseg && sum != h->bytes)
        return "whose segments do not add up to its size";
    MPI_Op op = (MPI_Op)(uintptr_t)h->op;
    int acc = h->kind == AM_ACC || h->kind == AM_GACC;
    uint64_t data = h->kind == AM_PUT        ? h->bytes
                    : h->kind == AM_CAS      ? 2 * h->bytes
                    : acc && op != MPI_NO_OP ? h->bytes
                                             : 0;
    if (rest < data)
        return "whose data does not match its size";
    *amlen = len - rest + data;
    if (acc && h->bytes) {
        /* handles from the wire: only predefined ones (small constants), never pointers */
        MPI_Datatype basic = (MPI_Datatype)(uintptr_t)h->basic;
        /* the usual case in two table reads: a contiguous predefined element type whose
         * size divides the data, and a kernel for it and the op (so both are predefined and
         * the pair is defined); anything else takes the full checks */
        size_t es = h->basic < 4096 ? rmpi_dtype_predef_contig_size(basic) : 0;
        if (es && h->op < 4096 && h->bytes % es == 0 && (*kern = rmpi_coll_op_kernel(op, basic)) != NULL)
            return NULL;
        const rmpi_dtype_t *dt = h->basic < 4096 ? rmpi_dtype_get(basic) : NULL;
        if (h->op >= 4096 || !rmpi_coll_op_predefined(op))
            return "with an operation that is not a predefined one";
        if (op != MPI_NO_OP && op != MPI_REPLACE &&
            (!dt || dt->size == 0 || h->bytes % dt->size || rmpi_coll_op_check(op, basic)))
            return "with an element type the operation does not take";
    }
    return NULL;
}

static void gather(const char *base, const rma_hdr_t *h, const rma_seg_t *segs, char *out)
{
    if (!h->nseg) {
        memcpy(out, base, h->bytes);
        return;
    }
    rma_seg_t one = {0, h->bytes};
    rma_segs_gather(base, h->nseg ? segs : &one, h->nseg ? h->nseg : 1, out);
}

static void scatter(char *base, const rma_hdr_t *h, const rma_seg_t *segs, const char *in)
{
    rma_seg_t one = {0, h->bytes};
    rma_segs_scatter(base, h->nseg ? segs : &one, h->nseg ? h->nseg : 1, in);
}

/* fn: am_check's kernel (set only for a predefined contiguous element type) */
static void accumulate(char *base, const rma_hdr_t *h, const rma_seg_t *segs, const char *data, rmpi_coll_kernel_t fn)
{
    MPI_Op op = (MPI_Op)(uintptr_t)h->op;
    MPI_Datatype basic = (MPI_Datatype)(uintptr_t)h->basic;
    if (op == MPI_NO_OP || !h->bytes)
        return;
    if (op == MPI_REPLACE) {
        scatter(base, h, segs, data);
        return;
    }
    if (!h->nseg && fn) {
        fn(data, base, h->bytes / rmpi_dtype_predef_contig_size(basic)); /* bit for bit rmpi_coll_op_apply */
        return;
    }
    size_t n = h->bytes / rmpi_dtype_size(rmpi_dtype_get(basic));
    if (!h->nseg) {
        rmpi_coll_op_apply(op, basic, data, base, n);
        return;
    }
    char *tmp = rmpi_xmalloc(h->bytes);
    gather(base, h, segs, tmp);
    rmpi_coll_op_apply(op, basic, data, tmp, n);
    scatter(base, h, segs, tmp);
    free(tmp);
}

static void direct_update(rmpi_win_t *w, char *base, const rma_hdr_t *h, const rma_seg_t *segs, const char *data,
                          char *reply)
{
    rma_seg_t one = {0, h->bytes};
    MPI_Op op = (MPI_Op)(uintptr_t)h->op;
    if (h->kind == AM_CAS) /* origin value, then compare value */
        rma_direct_cas(w->lsync[w->rank], base, h->bytes, data, data + h->bytes, reply);
    else
        rma_direct_acc(w->lsync[w->rank], base, h->nseg ? segs : &one, h->nseg ? h->nseg : 1, h->bytes, op,
                       (MPI_Datatype)(uintptr_t)h->basic, op == MPI_NO_OP ? NULL : data,
                       h->kind == AM_GACC ? reply : NULL);
}

/* A malformed message: its sender is cut off (the job ends, naming it). */
static void am_bad(const rmpi_win_t *w, int peer, int origin, size_t len, const char *what)
{
    char why[256];
    snprintf(why, sizeof why,
             "rank %d sent a one-sided message of %zu bytes (as rank %d of a window) %s "
             "(docs/wire/rma.md)",
             peer, len, origin, what);
    rmpi_core_peer_cut(peer, why);
}

/* Handle the active message at msg (len bytes left in its message): the bytes it took
 * with its padding, 0 when it was malformed (its sender is cut off). */
static size_t handle(rmpi_win_t *w, int peer, int origin, char *msg, size_t len)
{
    rma_hdr_t hdr, *h = &hdr;
    size_t hlen, amlen = 0;
    rmpi_coll_kernel_t kern;
    const char *bad = am_check(w, origin, msg, len, h, &hlen, &amlen, &kern);
    if (bad) {
        am_bad(w, peer, origin, len, bad);
        return 0;
    }
    size_t took = rma_pad8(amlen) < len ? rma_pad8(amlen) : len;
    /* the receive buffer is malloc'd: the segments after the 48-byte header are aligned */
    const rma_seg_t *segs = (const rma_seg_t *)(void *)(msg + hlen);
    const char *data = msg + hlen + h->nseg * sizeof(rma_seg_t);
    char *base = NULL, *reply = NULL;
    size_t rlen = 0;
    uint64_t small[RMA_SMALL_ANSWER / 8]; /* answers of fetch-and-op, CAS, small gets */
    switch (h->kind) {
    case AM_PUT:
    case AM_ACC:
    case AM_GET:
    case AM_GACC:
    case AM_CAS:
        rmpi_rma_before_load(); /* our flushed stores before the loads we make for another origin */
        base = target_base(w, h, segs);
        if (!base && h->bytes && w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
            /* the origin checks the ranges of windows whose size it knows */
            am_bad(w, peer, origin, len, "aimed outside the window");
            return 0;
        }
        /* Outside a dynamic window's attached regions (the user's error, which only we can
         * see): an operation with an answer says so by an answer of 0 bytes, so the origin
         * needs no FLUSH round trip to learn it; the others report it in the next ack. */
        int unattached = !base && h->bytes;
        if (unattached && h->kind != AM_GET && h->kind != AM_GACC && h->kind != AM_CAS)
            w->errs[origin] = MPI_ERR_RMA_RANGE;
        if (h->kind == AM_GET && !h->nseg && base && h->bytes > sizeof small) {
            answer_in_place(w, origin, h->reply_tag, base, h->bytes);
            return took;
        }
        /* a small contiguous get answered from the window memory itself, as short_get: the
         * eager send copies it into the frame before it returns, so no copy on the stack
         * first (a window of 512 B gets paid three copies of each answer, not two) */
        if (h->kind == AM_GET && !h->nseg && base && h->bytes &&
            rmpi_core_send_eager(rmpi_comm_world_rank(w->comm, origin), w->comm->ctx, w->rank, h->reply_tag, base,
                                 h->bytes))
            return took;
        if (h->kind == AM_GET || h->kind == AM_GACC || h->kind == AM_CAS) {
            rlen = unattached ? 0 : h->bytes;
            reply = rlen <= sizeof small ? (char *)small : rmpi_xmalloc(rlen);
        }
        /* nothing moves for 0 bytes, and its segments' offsets were never checked (an
         * empty access may name any displacement). Every other path below writes the whole
         * reply. */
        if (!base || !h->bytes) {
            if (reply)
                memset(reply, 0, rlen);
            break;
        }
        if (h->kind != AM_PUT && h->kind != AM_GET && rma_atomics_here(w)) {
            /* origins of this node update the same memory with atomics: so must we */
            direct_update(w, base, h, segs, data, reply);
            break;
        }
        if (reply)
            gather(base, h, segs, reply);
        if (h->kind == AM_PUT)
            scatter(base, h, segs, data);
        else if (h->kind == AM_ACC || h->kind == AM_GACC)
            accumulate(base, h, segs, data, kern);
        else if (h->kind == AM_CAS && memcmp(reply, data + h->bytes, h->bytes) == 0) /* origin, then compare value */
            scatter(base, h, segs, data);
        break;
    case AM_LOCK: lock_request(w, origin, h->lock_type, h->reply_tag); return took;
    case AM_UNLOCK:
        if (h->reply_tag) /* 0: the origin saw its operations complete itself (sync.c) */
            ack(w, origin, h->reply_tag, 0);
        lock_release(w, h->lock_type);
        return took;
    case AM_FLUSH: ack(w, origin, h->reply_tag, h->disp); return took;
    case AM_POST: w->posts[origin]++; return took;
    case AM_COMPLETE: w->completes++; return took;
    case AM_FENCE:
        w->marks[origin]++;
        w->mclean[origin] = h->lock_type == 1; /* held_back: no second one before our fence ends */
        return took;
    case AM_FENCE_DONE: w->fdone[origin]++; return took;
    default: return took; /* am_check admits no other kind */
    }
    if (reply)
        answer(w, origin, h->reply_tag, reply, rlen, reply != (char *)small);
    return took;
}

/* Whether the origin's next message must wait: for the lock it requested with its
 * operations, or, past its FENCE marker, for our own fence to end. */
static int held_back(const rmpi_win_t *w, int o) { return w->lockwait[o] || w->marks[o] > w->fences; }

/* Handle m's active messages from m->pos until its end (1) or until its origin must wait (0). */
static int run(rmpi_win_t *w, incoming_t *m)
{
    while (m->pos < m->len) {
        if (held_back(w, m->origin))
            return 0;
        size_t n = handle(w, m->peer, m->origin, (char *)m->buf + m->pos, m->len - m->pos);
        if (!n)
            return 1; /* malformed: the rest is not believed either */
        m->pos += n;
    }
    return 1;
}

static int release_held(rmpi_win_t *w)
{
    int n = 0, again = w->nheld > 0;
    while (again) {
        again = 0;
        for (int o = 0; o < w->size; o++)
            while (!rmpi_list_empty(&w->held[o]) && !held_back(w, o)) {
                incoming_t *m = RMPI_CONTAINER_OF(w->held[o].next, incoming_t, link);
                if (!run(w, m))
                    break;
                rmpi_list_remove(&m->link);
                incoming_free(m);
                w->nheld--;
                n++;
                again = 1;
            }
    }
    return n;
}

/* An eager message of the window's context as it is delivered (rmpi_core_eager_handler):
 * a request message of at most RMA_SERVE_INPLACE bytes (a whole batch) is handled now, from a copy on the
 * stack (the frame may lie at any alignment, and checking bytes that a peer on shared
 * memory could still change would prove nothing), with no unexpected copy, probe, receive
 * or heap buffer. It is left to serve (0) when it would pass a message of the same window
 * not handled yet: one being received, or one its origin has waiting; or when we are
 * handling already (an answer's send may run progress). The core hands us a message only
 * when nothing of the context waits unexpected before it. */
#define RMA_SERVE_INPLACE RMA_BATCH_MAX

/* An element of es bytes (1, 2, 4 or 8) at any alignment, as the low bytes of a word. */
static inline uint64_t elem_load(const void *p, size_t es)
{
    uint8_t b;
    uint16_t h;
    uint32_t i;
    uint64_t l;
    switch (es) {
    case 1: memcpy(&b, p, 1); return b;
    case 2: memcpy(&h, p, 2); return h;
    case 4: memcpy(&i, p, 4); return i;
    default: memcpy(&l, p, 8); return l;
    }
}

static inline void elem_store(void *p, uint64_t v, size_t es)
{
    uint8_t b = (uint8_t)v;
    uint16_t h = (uint16_t)v;
    uint32_t i = (uint32_t)v;
    switch (es) {
    case 1: memcpy(p, &b, 1); break;
    case 2: memcpy(p, &h, 2); break;
    case 4: memcpy(p, &i, 4); break;
    default: memcpy(p, &v, 8); break;
    }
}

/* The target memory of es bytes at a dynamic window's address a when one attached region
 * holds them all, else NULL (target_base then decides: regions that touch, or none). */
static inline char *dyn_range(const rmpi_win_t *w, uint64_t a, size_t es)
{
    const rmpi_net_ranges_t *rs = &w->regions;
    for (int i = 0; i < rs->n; i++)
        if (a - rs->r[i].addr < rs->r[i].len)
            return es <= rs->r[i].addr + rs->r[i].len - a ? (char *)(uintptr_t)a : NULL;
    return NULL;
}

/* A short get (rma_shdr_t, bytes in v): answered from the window memory itself (the eager
 * send copies it into the frame before it returns), 1; 0 with nothing done as for
 * short_request. */
static int short_get(rmpi_win_t *w, int origin, const rma_shdr_t *h, uint64_t bytes)
{
    if (h->type || h->op || !bytes || bytes > RMA_SMALL_ANSWER)
        return 0;
    char *base;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        base = dyn_range(w, h->disp, bytes);
    else
        base = h->disp <= w->bytes && bytes <= w->bytes - h->disp ? (char *)w->base + h->disp : NULL;
    if (!base)
        return 0;
    rmpi_rma_before_load(); /* our flushed stores before the loads we make for another origin */
    return rmpi_core_send_eager(rmpi_comm_world_rank(w->comm, origin), w->comm->ctx, w->rank, h->reply_tag, base,
                                bytes);
}

/* A message that is one short fetch-and-op, compare-and-swap or get (rma_shdr_t) and
 * nothing more, served here from its bytes, with the checks handle() would make and the
 * same effect and answer: no incoming record, full header, segment walk, stack copy of a
 * whole batch or reply buffer (callgrind, rank 1, cas_lat 8 B on Win_create: the one-sided
 * part of a request's delivery was about 400 of its 810 instructions). 0: not such a
 * message, or anything unusual (its origin held back, a node segment whose origins use
 * atomics on this memory, a range outside the window, a malformed header): handle() takes
 * it, and reports the error. */
static int short_request(rmpi_win_t *w, int origin, const char *data, size_t len)
{
    struct {
        rma_shdr_t h;
        uint64_t v[2];
    } m;
    if (len < sizeof m.h || len > sizeof m || len % 8 || held_back(w, origin) || rma_atomics_here(w))
        return 0;
    /* a peer on shared memory could still change the frame's bytes: checked in a copy, by
     * words of fixed size (16, 24 or 32 bytes; a memcpy of a variable size is a call) */
    memcpy(&m.h, data, sizeof m.h);
    if (len > 16)
        memcpy(&m.v[0], data + 16, 8);
    if (len > 24)
        memcpy(&m.v[1], data + 24, 8);
    int cas = m.h.kind == AM_SCAS;
    if ((!cas && m.h.kind != AM_SFOP && m.h.kind != AM_SGET) || m.h.version != RMA_WIRE_VERSION || m.h.reply_tag < 1 ||
        m.h.reply_tag > RMA_TAG_MAX || (cas && m.h.op))
        return 0;
    if (m.h.kind == AM_SGET)
        return len == sizeof m.h + sizeof m.v[0] && short_get(w, origin, &m.h, m.v[0]);
    MPI_Datatype type = (MPI_Datatype)(RMA_TYPE_BASE + m.h.type);
    MPI_Op op = cas ? MPI_REPLACE : (MPI_Op)(RMA_OP_BASE + m.h.op);
    size_t es = rma_int_atomic_size(type, op);
    if (!es || (!cas && type == MPI_BYTE) || rma_pad8(sizeof m.h + (cas ? 2 * es : op != MPI_NO_OP ? es : 0)) != len)
        return 0;
    rmpi_coll_kernel_t fn = NULL;
    if (!cas && op != MPI_NO_OP && op != MPI_REPLACE && !(fn = rmpi_coll_op_kernel(op, type)))
        return 0;
    char *base;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        base = dyn_range(w, m.h.disp, es);
    else
        base = m.h.disp <= w->bytes && es <= w->bytes - m.h.disp ? (char *)w->base + m.h.disp : NULL;
    if (!base)
        return 0;
    rmpi_rma_before_load();                    /* our flushed stores before the loads we make for another origin */
    uint64_t old = elem_load(base, es), reply; /* the answer: the element's bytes as they were */
    elem_store(&reply, old, es);
    const char *v = (const char *)m.v;
    if (cas ? old == elem_load(v + es, es) : op == MPI_REPLACE) /* origin value, then compare value */
        elem_store(base, elem_load(v, es), es);
    else if (fn)
        fn(v, base, 1); /* bit for bit rmpi_coll_op_apply, as accumulate() */
    if (!rmpi_core_send_eager(rmpi_comm_world_rank(w->comm, origin), w->comm->ctx, w->rank, m.h.reply_tag, &reply, es))
        answer(w, origin, m.h.reply_tag, &reply, es, 0); /* past an eager limit below 8 bytes */
    return 1;
}

/* Largest put short_put serves (with its FLUSH, a 16-byte header each). */
#define SHORT_PUT_MAX 256

/* A message that is one short put (SPUT) of at most SHORT_PUT_MAX bytes, alone or followed
 * by a short flush (SFLUSH), served here with handle()'s checks and effect: the data copied
 * into the window, the flush acknowledged (callgrind, rank 1, put_lat 8 B on Win_create:
 * the expansion into the full header, handle's walk and scatter and the second header's
 * pass were about 330 of the request's 920 instructions). 0: not such a message, or
 * anything unusual, as short_request. */
static int short_put(rmpi_win_t *w, int origin, const char *data, size_t len)
{
    rma_shdr_t h, f;
    if (len < sizeof h || held_back(w, origin) || rma_atomics_here(w))
        return 0;
    memcpy(&h, data, sizeof h); /* checked in a copy: a peer on shared memory could still change the frame */
    size_t put = sizeof h + rma_pad8(h.pbytes);
    if (h.kind != AM_SPUT || h.version != RMA_WIRE_VERSION || h.reply_tag || !h.pbytes || h.pbytes > SHORT_PUT_MAX ||
        (len != put && len != put + sizeof f))
        return 0;
    int flush = len > put;
    if (flush) {
        memcpy(&f, data + put, sizeof f);
        if (f.kind != AM_SFLUSH || f.version != RMA_WIRE_VERSION || f.type || f.op || f.reply_tag < 1 ||
            f.reply_tag > RMA_TAG_MAX)
            return 0;
    }
    char *base;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        base = dyn_range(w, h.disp, h.pbytes);
    else
        base = h.disp <= w->bytes && h.pbytes <= w->bytes - h.disp ? (char *)w->base + h.disp : NULL;
    if (!base)
        return 0;
    memcpy(base, data + sizeof h, h.pbytes);
    if (flush)
        ack(w, origin, f.reply_tag, f.disp);
    return 1;
}

static int rma_eager(void *arg, int peer, int src, int tag, const char *data, size_t len)
{
    rmpi_win_t *w = arg;
    if (tag != RMA_TAG_AM) /* an answer to one of our operations: no order to keep with requests */
        return w->nans ? rma_answer_landed(w, peer, src, tag, data, len) : 0;
    if (serving || len > RMA_SERVE_INPLACE || src < 0 || src >= w->size || !rmpi_list_empty(&w->incoming) ||
        !rmpi_list_empty(&w->held[src]))
        return 0;
    /* an empty message (a peer's bytes, fuzz/rma_am) has no kind byte to look at: run() refuses it */
    if (len && (len <= 32 || (len <= 2 * sizeof(rma_shdr_t) + SHORT_PUT_MAX && (uint8_t)data[0] == AM_SPUT))) {
        serving = 1;
        int done = (uint8_t)data[0] == AM_SPUT ? short_put(w, src, data, len) : short_request(w, src, data, len);
        serving = 0;
        if (done)
            return 1;
    }
    uint64_t buf[RMA_SERVE_INPLACE / 8];
    memcpy(buf, data, len);
    incoming_t m = {.buf = buf, .len = len, .pos = 0, .peer = peer, .origin = src};
    serving = 1;
    if (!run(w, &m)) {
        /* its origin must wait (lock, fence) from m.pos on: it waits with a copy */
        incoming_t *k = rmpi_xmalloc(sizeof *k);
        *k = m;
        k->buf = rmpi_xmalloc(len);
        memcpy(k->buf, buf, len);
        rmpi_list_push_back(&w->held[src], &k->link);
        w->nheld++;
    }
    serving = 0;
    return 1;
}

/* Receive the window's requests the core queued as unexpected, in arrival order. */
static int take_queued(rmpi_win_t *w)
{
    int n = 0;
    rmpi_unexp_t *u;
    while ((u = rmpi_core_probe_find(w->comm->ctx, MPI_ANY_SOURCE, RMA_TAG_AM)) != NULL) {
        rmpi_core_unexp_take(u);
        incoming_t *m = rmpi_xcalloc(1, sizeof *m);
        if (u->len >= BIG_MIN)
            m->buf = big_take(u->len, &m->cap);
        else
            m->buf = rmpi_xmalloc(u->len ? u->len : 1);
        m->req = rmpi_req_alloc(RMPI_REQ_RECV);
        m->req->buf = m->buf;
        m->req->len = u->len;
        m->req->ctx = w->comm->ctx;
        m->req->rank = u->src;
        m->req->tag = RMA_TAG_AM;
        m->peer = u->vc->peer;
        rmpi_list_push_back(&w->incoming, &m->link);
        rmpi_core_mrecv(m->req, u);
        n++;
    }
    return n;
}

/* Take the window's new messages in arrival order; handle those at the head that have
 * fully landed (a rendezvous message holds back the ones behind it). */
static int serve(rmpi_win_t *w)
{
    int n = 0;
    /* one look at the context's unexpected queue, usually empty (requests and answers were
     * taken where they landed), for both kinds */
    if (rmpi_core_probe_find(w->comm->ctx, MPI_ANY_SOURCE, MPI_ANY_TAG)) {
        if (w->nans)
            n += rma_answers_queued(w);
        n += take_queued(w);
    }
    while (!rmpi_list_empty(&w->incoming)) {
        incoming_t *m = RMPI_CONTAINER_OF(w->incoming.next, incoming_t, link);
        if (!m->req->done)
            break;
        rmpi_list_remove(&m->link);
        m->origin = m->req->st_src;
        m->len = m->req->st_bytes;
        m->pos = 0;
        n++;
        if (m->origin < 0 || m->origin >= w->size) {
            am_bad(w, m->peer, m->origin, m->len, "from a rank outside the window's group");
            incoming_free(m);
        } else if (!rmpi_list_empty(&w->held[m->origin]) || !run(w, m)) {
            rmpi_list_push_back(&w->held[m->origin], &m->link); /* behind what waits already */
            w->nheld++;
        } else
            incoming_free(m);
    }
    if (w->lockq && rmpi_rma_lockword(w, w->rank))
        n += lock_grant_queued(w);
    /* requests wait in batches only until the next progress: a process that spins on its
     * window memory (MPI_Win_sync, a flush of itself) must see what others put there
     * without their flushing, as MCS-style locks (mpi4py.util.sync) rely on */
    if (w->nbatched && !w->building)
        for (int t = 0; t < w->size && w->nbatched; t++)
            rma_am_send(w, t);
    if (w->nheld)
        n += release_held(w);
    return n;
}

static int rma_progress(void)
{
    if (serving)
        return 0;
    serving = 1;
    int n = 0;
    rmpi_list_t *e;
    rmpi_list_for_each(e, &wins) n += serve(RMPI_CONTAINER_OF(e, rmpi_win_t, link));
    serving = 0;
    return n;
}

int rma_release_held(rmpi_win_t *w)
{
    if (serving || !w->nheld)
        return 0;
    serving = 1;
    int n = release_held(w);
    serving = 0;
    return n;
}
