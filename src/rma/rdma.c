/* Put and Get on the providers' RDMA (Huang et al., 'Design Alternatives and Performance
 * Trade-offs for Implementing MPI-2 over InfiniBand', sec. 3.3: one-sided operations
 * mapped straight onto RDMA and scheduled by the progress engine, not sent through
 * point-to-point). Every rank registers its window memory on the rails of its virtual
 * channels to the other ranks when the window is created and sends each of them its base
 * and one key per subchannel; an origin then moves Put and Get data itself with the
 * rail's get/put (native fi_read/fi_write, tcp's emulated RDMA, cross-memory attach on
 * shm), as many operations in flight as it issues, completed by the core's progress.
 * Accumulates, locks and the other control messages stay active messages (target.c).
 *
 * Remote completion (net.h): an RDMA op that completed locally is in the target's memory
 * before any frame the origin sends to that target afterwards is delivered. So a FLUSH,
 * UNLOCK or COMPLETE sent after the window's ops completed reaches the target after the
 * data, and on rails whose RDMA is native (completion is delivery) a flush needs no
 * message at all. */
#include "rma_impl.h"

#include <errno.h>
#include <stddef.h>

#include "../rt/rt.h"
#include "../vc/vc.h"

/* A target's window as this origin reaches it; nkeys 0: no RDMA to it. */
typedef struct rma_rkeys {
    uint64_t base;
    uint32_t nkeys, pad;
    uint64_t key[RMPI_VC_MAX_SUB];
} rma_rkeys_t;

/* How small operations to a target go (rma_rdma_small_am): puts batched as active
 * messages where the target's progress serves the rail's RDMA anyway (tcp, libfabric
 * software providers) or where it polls the same rings (shm: a cross-memory-attach call
 * pins the target page once per put, about 0.3-0.5 us an op in a batch of 64, against
 * 0.11-0.14 us as one message the target applies); gets, where reads in flight cost more
 * than one message asking for them all (net.h reads_by_msg). */
enum {
    BY_PUTS = 1,
    BY_GETS = 2,
    LONE_COPIES = 4, /* lone puts a flush may post as RDMA itself (rma_rdma_batch_puts) */
    GETS_NOW = 8,    /* the rail has copy_now: gets wait for one read (rma_rdma_lone_get) */
    NODE_MSG = 16,   /* a target of this node by copy_now: small puts and gets as messages */
    /* a dynamic window's target of this node: no keys (its memory is attached, never
     * registered), so only copy_now, synchronous, once its region table covers the range;
     * everything else goes as messages */
    DYN_NOW = 32,
    /* a dynamic window's target whose rails register natively (libfabric): one registration
     * per attached region, found in the target's region table (rma_dtab_t), read by RDMA */
    DYN_TAB = 64,
};

/* A dynamic window's region table on rails that register natively (ofi's fi_mr_reg,
 * tcp;ofi_rxm included): a registration covers one region, so the owner registers each
 * region it attaches on each such rail and lists (address, length, one key per rail) here;
 * an origin reads the table by RDMA (Open MPI's osc rdma does the same), keeps the copy and
 * reads it again at its first access to the target in every access epoch (lock, lock_all,
 * fence, start: a region detached before the synchronisation that started the epoch is
 * never written with its closed key, which tcp;ofi_rxm answers by dropping the
 * connection), and after a miss (a region attached since). Docs: docs/wire/rma.md. */
#define DTAB_MAX 64  /* regions listed; more: the rest by messages (over set) */
#define DTAB_RAILS 4 /* rails in table mode per window */
typedef struct rma_dtab_ent {
    uint64_t addr, len, key[DTAB_RAILS];
} rma_dtab_ent_t;
typedef struct rma_dtab {
    uint64_t seq; /* odd while the owner rewrites it; equal to seq_end in a whole copy */
    uint32_t n;   /* entries in use */
    uint16_t nrails, over;
    rma_dtab_ent_t r[DTAB_MAX];
    uint64_t seq_end;
} rma_dtab_t;
/* rma_rkeys_t.pad of a table-mode record: the flag, and per subchannel (2 bits) the column
 * of the table's keys that is its rail's */
#define DTAB_FLAG (UINT32_C(1) << 31)
#define DTAB_COL(pad, s) (((pad) >> (2 * (s))) & 3u)
/* An origin's copy of a target's table: valid in the epoch it was read in. */
typedef struct rma_dsnap {
    unsigned epoch;
    int ok;
    rma_dtab_t t;
} rma_dsnap_t;
/* The owner's registrations of one attached region (same order as its table entry). */
typedef struct rma_dreg {
    uint64_t addr, len;
    rmpi_mr_t mr[DTAB_RAILS];
} rma_dreg_t;
/* Table keys an origin used toward one target since the last check of its table's seq
 * (seq_check): the subchannels that carried them, the seq of the copy they came from. */
typedef struct rma_dused {
    unsigned subs;
    int mixed;   /* from copies of different seqs (or the check found seq changed) */
    int chunked; /* an op not posted whole at once (hints.rdma_whole): its ops must end first */
    int gets;    /* some were gets (a FLUSH does not order them: a read checks) */
    int flushed; /* a FLUSH carries the check (rma_rdma_flush_seq): its ack decides */
    uint64_t seq;
    int nkeys, cap;
    uint64_t *keys; /* each region's key of subchannel 0, once */
} rma_dused_t;
#define GET_AM_MAX ((size_t)4096) /* the largest size measured */
#define LONE_GETS_MAX 64          /* gets read by one copy_now (shm's cross-memory batch) */

struct rma_rdma {
    rma_rkeys_t *rk;          /* per window rank */
    int *out;                 /* per target: operations whose RDMA ops are not all complete */
    unsigned char *am;        /* per target: active messages sent since it last acknowledged */
    int *outget;              /* per target: gets among out */
    unsigned char *by_target; /* per target: BY_PUTS, BY_GETS */
    int err;                  /* first error of a completed op (MPI class), reported at the next sync */
    int nreg;                 /* registrations of our window memory, one per rail */
    int lone_t, nlone;        /* gets waiting to be read by one copy_now (rma_rdma_lone_get) */
    struct iovec lone_l[LONE_GETS_MAX], lone_r[LONE_GETS_MAX];
    rmpi_rail_t *rail[RMPI_NET_MAX_RAILS];
    rmpi_mr_t mr[RMPI_NET_MAX_RAILS];
    /* dynamic windows on native registrations (DYN_TAB): ours, then the origin's copies */
    rma_dtab_t *dtab;               /* our region table (registered on trail[]) */
    rmpi_rail_t *trail[DTAB_RAILS]; /* rails in table mode, column order */
    int ntrail;
    rma_dreg_t *dreg;   /* our regions in the table, dtab->n of them */
    rma_dsnap_t **snap; /* per target: its table as last read */
    unsigned epoch;     /* access epochs started (rma_rdma_epoch) */
    rma_dused_t *used;  /* per target: table keys used since its last seq check (seq_check;
                         * w->rdma_unchecked counts the targets with some) */
    /* keys used while the target's table changed (seq_check): (target, key of subchannel
     * 0) to look up in its table at the next synchronisation (dyn_verify) */
    struct {
        int t;
        uint64_t key;
    } * sus;
    int nsus, capsus;
};

/* Pieces of at least this many bytes are striped over the VC's live subchannels. */
#define RDMA_STRIPE_MIN ((size_t)64 << 10)
/* Puts up to this size are copied and complete locally when issued (the early completion
 * of Huang et al. sec. 3.2): the origin buffer is free at once, as on the message path;
 * larger ones are read from it until the operation completes (at the next flush, unlock
 * or fence, as MPI allows). */
#define RDMA_COPY_MAX ((size_t)8 << 10)
/* A non-contiguous target whose pieces average fewer bytes than this is cheaper packed into
 * one active message than moved as one RDMA op per piece. */
#define RDMA_SEG_MIN ((size_t)1024)

/* One MPI operation (put or get) in flight: its ops, then what completion does. */
typedef struct rdma_batch {
    rmpi_win_t *w;
    rmpi_vc_t *vc;
    int target, pending, nops, get;
    char *tmp; /* origin data packed (put), or landed before unpacking (get) */
    void *rbuf;
    size_t rcount, bytes;
    rmpi_dtype_t *rdt; /* get into a non-contiguous buffer: unpack at completion */
    rmpi_req_t *ureq;
    size_t alloc;                   /* bytes allocated with it (batch_free) */
    const uint64_t *key;            /* per subchannel: the window's keys, or dkey */
    uint64_t dkey[RMPI_VC_MAX_SUB]; /* a dynamic window region's keys (DYN_TAB) */
    unsigned subs;                  /* DYN_TAB: the subchannels that carried it */
    int chunked;                    /* DYN_TAB: an op longer than its rail posts whole (hints.rdma_whole) */
} rdma_batch_t;

typedef struct rdma_op {
    rmpi_net_op_t op;
    rdma_batch_t *b;
    rmpi_stripe_t st;
} rdma_op_t;

/* Batches of one op with at most SMALL_COPY bytes inline are kept for reuse while RDMA
 * windows exist: a malloc and a free were about 370 of the 1300 instructions of a small put
 * by cross-memory attach (callgrind, put_bw of 8 B on a Win_create window). */
#define SMALL_COPY ((size_t)1024)
#define SMALL_SIZE (sizeof(rdma_batch_t) + sizeof(rdma_op_t) + SMALL_COPY)
#define SMALL_KEEP 256
static void *small_free; /* linked through the first word */
static int nsmall, nrdma_wins;

static rdma_batch_t *batch_alloc(size_t size)
{
    if (size > SMALL_SIZE)
        return rmpi_xmalloc(size);
    void *p = small_free;
    if (!p)
        return rmpi_xmalloc(SMALL_SIZE);
    memcpy(&small_free, p, sizeof small_free);
    nsmall--;
    return p;
}

static void batch_free(rdma_batch_t *b)
{
    if (b->alloc > SMALL_SIZE || nsmall == SMALL_KEEP) {
        free(b);
        return;
    }
    memcpy(b, &small_free, sizeof small_free);
    small_free = b;
    nsmall++;
}

static int reg_index(struct rma_rdma *d, rmpi_rail_t *rail)
{
    for (int i = 0; i < d->nreg; i++)
        if (d->rail[i] == rail)
            return i;
    return -1;
}

/* Our keys for origin o: one per subchannel of our VC to it (the rendezvous's rule: both
 * ends number the subchannels between them alike); none when a rail cannot register. */
/* A rail whose registrations are native (libfabric, not emulated) and which has no range
 * lists: a dynamic window lists its regions in a table for it (DYN_TAB). */
static int table_rail(const rmpi_rail_t *rail)
{
    return !rail->ops->mr_reg_ranges && rail->hints.rdma_native && rail->hints.scope == RMPI_SCOPE_INTER;
}

/* The column of rail in our region table, registering the table on it first; -1 when it
 * cannot be (more than DTAB_RAILS rails, or the registration failed). */
static int table_col(struct rma_rdma *d, rmpi_rail_t *rail, rmpi_mr_t *mr)
{
    for (int j = 0; j < d->ntrail; j++)
        if (d->trail[j] == rail)
            return j;
    if (d->ntrail == DTAB_RAILS)
        return -1;
    if (!d->dtab) {
        d->dtab = rmpi_xcalloc(1, sizeof *d->dtab);
        d->dreg = rmpi_xcalloc(DTAB_MAX, sizeof *d->dreg);
    }
    if (mr && rmpi_net_mr_get_exact(rail, d->dtab, sizeof *d->dtab, mr))
        return -1;
    d->trail[d->ntrail] = rail;
    d->dtab->nrails = (uint16_t)(d->ntrail + 1);
    return d->ntrail++;
}

static void keys_for(rmpi_win_t *w, int o, rma_rkeys_t *k)
{
    struct rma_rdma *d = w->rdma;
    int dyn = w->flavor == MPI_WIN_FLAVOR_DYNAMIC;
    memset(k, 0, sizeof *k);
    k->base = (uint64_t)(uintptr_t)w->base; /* dynamic: 0, displacements are addresses */
    /* a direct o reaches us directly too, except on Win_create: there o's memory may be
     * mapped here while ours is malloc'd, or not mapped by o (direct.c rma_node_map) */
    if (o == w->rank || (rmpi_rma_direct(w, o) && w->flavor != MPI_WIN_FLAVOR_CREATE) ||
        (!dyn && (!w->bytes || !w->base)))
        return;
    rmpi_vc_t *vc = rmpi_vc_get(rmpi_comm_world_rank(w->comm, o));
    for (int s = 0; s < vc->nsub; s++) {
        rmpi_rail_t *rail = rmpi_vc_rail(vc, s);
        int i = reg_index(d, rail);
        /* a dynamic window's key names the list of its attached regions, which Win_attach
         * and Win_detach keep current: the target's check reads it at every access */
        /* native registrations (libfabric): the key of the region table, whose entries hold
         * a key per attached region (DYN_TAB) */
        int tab = dyn && table_rail(rail);
        if (i < 0 && d->nreg < RMPI_NET_MAX_RAILS &&
            (tab   ? (table_col(d, rail, &d->mr[d->nreg]) < 0 ? -1 : 0)
             : dyn ? rmpi_net_mr_get_ranges(rail, &w->regions, &d->mr[d->nreg])
                   : rmpi_net_mr_get(rail, w->base, w->bytes, &d->mr[d->nreg])) == 0) {
            d->rail[d->nreg] = rail;
            i = d->nreg++;
        }
        if (i >= 0 && s > 0 && !(k->pad & DTAB_FLAG) != !tab)
            i = -1; /* a table on one subchannel, a range list on another: messages */
        if (i >= 0 && tab) {
            k->base = (uint64_t)(uintptr_t)d->dtab;
            k->pad |= DTAB_FLAG | (uint32_t)table_col(d, rail, NULL) << (2 * s);
        }
        if (i < 0) {
            rmpi_log(1, "one-sided: window memory not registered on rail %s; rank %d reaches it by messages.",
                     rail->hints.name, o);
            k->nkeys = 0;
            k->pad = 0;
            k->base = 0;
            return;
        }
        k->key[s] = d->mr[i].rkey;
        k->nkeys = (uint32_t)(s + 1);
    }
}

static struct rma_rdma *rdma_new(rmpi_win_t *w)
{
    struct rma_rdma *d = rmpi_xcalloc(1, sizeof *d);
    d->rk = rmpi_xcalloc((size_t)w->size, sizeof *d->rk);
    d->out = rmpi_xcalloc((size_t)w->size, sizeof *d->out);
    d->am = rmpi_xcalloc((size_t)w->size, 1);
    d->outget = rmpi_xcalloc((size_t)w->size, sizeof *d->outget);
    d->by_target = rmpi_xcalloc((size_t)w->size, 1);
    w->rdma = d;
    nrdma_wins++;
    return d;
}

/* Dynamic windows: the targets of this node whose only rail has copy_now (shm's
 * cross-memory attach) are written and read by the origin, as Win_create's, addressed by
 * the absolute addresses MPI gives (base 0), once their region table covers the range
 * (they registered no range list: shm has none). */
static void dyn_setup(rmpi_win_t *w)
{
    struct rma_rdma *d = w->rdma;
    for (int t = 0; w->rtab && t < w->size; t++) {
        if (t == w->rank || !w->rtab[t])
            continue;
        rmpi_vc_t *vc = rmpi_vc_get(rmpi_comm_world_rank(w->comm, t));
        const rmpi_rail_t *r0 = vc->nsub == 1 ? rmpi_vc_rail(vc, 0) : NULL;
        if (!r0 || r0->hints.scope != RMPI_SCOPE_INTRA || !r0->ops->copy_now)
            continue;
        d->rk[t] = (rma_rkeys_t){.nkeys = 1};
        d->by_target[t] = BY_PUTS | NODE_MSG | DYN_NOW;
    }
}

int rma_rdma_setup(rmpi_win_t *w)
{
    /* the same answer on every rank, so the exchange below is collective; a dynamic window
     * exchanges keys of its range lists (rails that emulate RDMA: tcp) or of its region
     * table (native registrations: libfabric) */
    if (!rmpi_knobs.RMA_RDMA || (w->all_direct && w->flavor != MPI_WIN_FLAVOR_DYNAMIC))
        return 0;
    struct rma_rdma *d = rdma_new(w);
    int n = w->size, me = w->rank;
    for (int s = 1; s < n; s++) {
        int to = (me + s) % n, from = (me - s + n) % n;
        rma_rkeys_t mine;
        keys_for(w, to, &mine);
        rmpi_comm_coll_sendrecv(w->comm, &mine, sizeof mine, to, &d->rk[from], sizeof d->rk[from], from,
                                RMA_TAG_SETUP + 2);
        rma_rkeys_t *k = &d->rk[from];
        rmpi_vc_t *fvc = rmpi_vc_get(rmpi_comm_world_rank(w->comm, from));
        const rmpi_rail_t *r0 = fvc->nsub > 0 ? rmpi_vc_rail(fvc, 0) : NULL;
        if (r0)
            d->by_target[from] =
                (unsigned char)((r0->hints.rdma_by_target || r0->hints.scope == RMPI_SCOPE_INTRA ? BY_PUTS : 0) |
                                (r0->hints.reads_by_msg ? BY_GETS : 0) |
                                (r0->hints.rdma_native && !r0->hints.rdma_by_target ? LONE_COPIES : 0) |
                                (r0->hints.rdma_native && !r0->hints.rdma_by_target && r0->ops->copy_now ? GETS_NOW
                                                                                                         : 0) |
                                (r0->hints.scope == RMPI_SCOPE_INTRA && r0->ops->copy_now ? NODE_MSG : 0));
        if (k->nkeys > RMPI_VC_MAX_SUB ||
            (k->nkeys && k->nkeys != (uint32_t)rmpi_vc_get(rmpi_comm_world_rank(w->comm, from))->nsub)) {
            rmpi_log(1, "one-sided: rank %d offers %u RDMA key(s), this rank has other rails to it; using messages.",
                     from, k->nkeys);
            k->nkeys = 0;
        }
        if (k->nkeys && (k->pad & DTAB_FLAG)) {
            /* a region table: bytes from another process, checked (its columns exist) */
            int ok = w->flavor == MPI_WIN_FLAVOR_DYNAMIC && k->base;
            for (uint32_t s2 = 0; s2 < k->nkeys; s2++)
                ok &= rmpi_vc_rail(fvc, (int)s2)->hints.scope == RMPI_SCOPE_INTER;
            if (ok)
                d->by_target[from] = (unsigned char)((d->by_target[from] & ~(LONE_COPIES | GETS_NOW)) | DYN_TAB);
            else
                k->nkeys = 0;
        }
    }
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        dyn_setup(w);
    rma_atomic_setup(w);
    return 0;
}

void rma_rdma_free(rmpi_win_t *w)
{
    struct rma_rdma *d = w->rdma;
    if (!d)
        return;
    rma_atomic_free(w);
    for (int i = 0; i < d->nreg; i++)
        rmpi_net_mr_put(d->rail[i], &d->mr[i]);
    for (uint32_t e = 0; d->dtab && e < d->dtab->n; e++)
        for (int j = 0; j < d->ntrail; j++)
            rmpi_net_mr_put(d->trail[j], &d->dreg[e].mr[j]);
    free(d->dtab);
    free(d->dreg);
    for (int t = 0; d->snap && t < w->size; t++)
        free(d->snap[t]);
    free(d->snap);
    for (int t = 0; d->used && t < w->size; t++)
        free(d->used[t].keys);
    free(d->used);
    free(d->sus);
    free(d->rk);
    free(d->out);
    free(d->am);
    free(d->outget);
    free(d->by_target);
    free(d);
    w->rdma = NULL;
    if (--nrdma_wins == 0)
        while (small_free) {
            void *p = small_free;
            memcpy(&small_free, p, sizeof small_free);
            free(p);
            nsmall--;
        }
}

/* Our table rewritten (seq odd meanwhile: a reader on a NIC that reads while we write
 * takes another copy); over: attached regions the table does not list. */
static void dtab_begin(rma_dtab_t *t)
{
    t->seq++;
    atomic_thread_fence(memory_order_release);
}

static void dtab_end(rmpi_win_t *w, rma_dtab_t *t)
{
    t->over = (uint16_t)(w->regions.n > (int)t->n);
    atomic_thread_fence(memory_order_release);
    t->seq_end = t->seq + 1;
    atomic_thread_fence(memory_order_release);
    t->seq = t->seq_end;
}

void rma_rdma_attached(rmpi_win_t *w, void *base, size_t len)
{
    struct rma_rdma *d = w->rdma;
    if (!d || !d->ntrail)
        return;
    rma_dtab_t *t = d->dtab;
    dtab_begin(t);
    if (len && t->n < DTAB_MAX) {
        rma_dreg_t *g = &d->dreg[t->n];
        int j = 0;
        for (; j < d->ntrail; j++)
            if (rmpi_net_mr_get_exact(d->trail[j], base, len, &g->mr[j]))
                break;
        if (j == d->ntrail) {
            g->addr = (uint64_t)(uintptr_t)base;
            g->len = len;
            rma_dtab_ent_t *e = &t->r[t->n];
            memset(e, 0, sizeof *e);
            e->addr = g->addr;
            e->len = len;
            for (j = 0; j < d->ntrail; j++)
                e->key[j] = g->mr[j].rkey;
            t->n++;
        } else { /* not listed: reached by messages, which the target checks */
            rmpi_log(1, "one-sided: a dynamic window region of %zu bytes not registered on rail %s; messages reach it.",
                     len, d->trail[j]->hints.name);
            while (j-- > 0)
                rmpi_net_mr_put(d->trail[j], &g->mr[j]);
        }
    }
    dtab_end(w, t);
}

void rma_rdma_detached(rmpi_win_t *w, const void *base)
{
    struct rma_rdma *d = w->rdma;
    if (!d || !d->ntrail)
        return;
    rma_dtab_t *t = d->dtab;
    dtab_begin(t);
    for (uint32_t e = 0; e < t->n; e++) {
        if (d->dreg[e].addr != (uint64_t)(uintptr_t)base)
            continue;
        /* closed before Win_detach returns: no key of the region reaches it any more; an
         * origin's copy of the table may still list it until its epoch ends (the user's
         * error), so the key is retired, not just closed: tcp;ofi_rxm dropped the
         * connection on a write with a closed key, and the job hung */
        for (int j = 0; j < d->ntrail; j++)
            rmpi_net_mr_retire(d->trail[j], &d->dreg[e].mr[j]);
        t->n--;
        d->dreg[e] = d->dreg[t->n];
        t->r[e] = t->r[t->n];
        memset(&t->r[t->n], 0, sizeof t->r[t->n]);
        break;
    }
    dtab_end(w, t);
}

void rma_rdma_epoch_new(rmpi_win_t *w) { w->rdma->epoch++; }

typedef struct dtab_read {
    rmpi_net_op_t op; /* first: the completion's argument */
    int done;
} dtab_read_t;

static void dtab_read_done(rmpi_net_op_t *op) { ((dtab_read_t *)(void *)op)->done = 1; }

/* A copy read from another process: whole (both counters equal and even), every entry a
 * region that does not wrap, every subchannel's column present. */
static int dtab_check(const rma_dtab_t *t, uint32_t pad, uint32_t nsub)
{
    if (t->seq != t->seq_end || (t->seq & 1) || t->n > DTAB_MAX || t->nrails > DTAB_RAILS)
        return 0;
    for (uint32_t s = 0; s < nsub; s++)
        if (DTAB_COL(pad, s) >= t->nrails)
            return 0;
    for (uint32_t i = 0; i < t->n; i++)
        if (!t->r[i].len || t->r[i].addr + t->r[i].len < t->r[i].addr)
            return 0;
    return 1;
}

/* Read target t's table into our copy: one RDMA read on its first subchannel, waited for. */
static void dtab_read(rmpi_win_t *w, int t, rma_dsnap_t *sn)
{
    const rma_rkeys_t *k = &w->rdma->rk[t];
    rmpi_vc_t *vc = rmpi_vc_get(rmpi_comm_world_rank(w->comm, t));
    rmpi_rail_t *rail = rmpi_vc_rail(vc, 0);
    sn->epoch = w->rdma->epoch;
    sn->ok = 0;
    for (int tries = 0; tries < 4 && !sn->ok; tries++) {
        dtab_read_t r = {.op = {.complete = dtab_read_done}};
        r.op.ctx = &r;
        rail->ops->get(rail, vc->peer, &sn->t, sizeof sn->t, k->base, k->key[0], &r.op);
        unsigned idle = 0;
        while (!r.done)
            rmpi_core_wait_step(&idle);
        if (r.op.status)
            return; /* messages this epoch */
        sn->ok = dtab_check(&sn->t, k->pad, k->nkeys);
    }
}

static const rma_dtab_ent_t *dtab_find(const rma_dtab_t *t, uint64_t a, uint64_t len)
{
    for (uint32_t i = 0; i < t->n; i++) {
        const rma_dtab_ent_t *e = &t->r[i];
        if (a >= e->addr && a - e->addr <= e->len && len <= e->len - (a - e->addr))
            return e;
    }
    return NULL;
}

/* The keys (per subchannel) of the region of target t that holds [a, a + len): 0, or 1
 * when no listed region holds it (the operation goes as a message; the target checks). */
static int dyn_keys(rmpi_win_t *w, int t, uint64_t a, uint64_t len, uint64_t *key, uint64_t *seq)
{
    struct rma_rdma *d = w->rdma;
    if (!d->snap)
        d->snap = rmpi_xcalloc((size_t)w->size, sizeof *d->snap);
    rma_dsnap_t *sn = d->snap[t];
    int fresh = 0;
    if (!sn) {
        sn = d->snap[t] = rmpi_xmalloc(sizeof *sn);
        sn->epoch = d->epoch - 1;
    }
    if (sn->epoch != d->epoch) {
        dtab_read(w, t, sn);
        fresh = 1;
    }
    const rma_dtab_ent_t *e = sn->ok ? dtab_find(&sn->t, a, len) : NULL;
    if (!e && sn->ok && !fresh && !sn->t.over) { /* attached since we read it? */
        dtab_read(w, t, sn);
        e = sn->ok ? dtab_find(&sn->t, a, len) : NULL;
    }
    if (!e)
        return 1;
    const rma_rkeys_t *k = &d->rk[t];
    for (uint32_t s = 0; s < k->nkeys; s++)
        key[s] = e->key[DTAB_COL(k->pad, s)];
    *seq = sn->t.seq;
    return 0;
}

/* Whether each key recorded by seq_check is still in its target's table (read again now):
 * MPI_ERR_RMA_RANGE when one is not (its region was detached while the operation was
 * pending: the access went to the provider's tomb, net.h mr_retire), else 0. */
static int dyn_verify(rmpi_win_t *w)
{
    struct rma_rdma *d = w->rdma;
    int err = 0;
    for (int i = 0; i < d->nsus; i++) {
        int t = d->sus[i].t;
        rma_dsnap_t *sn = d->snap[t];
        if (i == 0 || t != d->sus[i - 1].t)
            dtab_read(w, t, sn);
        uint32_t col = DTAB_COL(d->rk[t].pad, 0), n = sn->ok ? sn->t.n : 0, j = 0;
        while (j < n && sn->t.r[j].key[col] != d->sus[i].key)
            j++;
        if (j == n)
            err = MPI_ERR_RMA_RANGE;
    }
    d->nsus = 0;
    return err;
}

int rma_rdma_to(const rmpi_win_t *w, int target)
{
    return w->rdma && w->rdma->rk[target].nkeys && !w->rdma->am[target];
}

int rma_rdma_keys(const rmpi_win_t *w, int target) { return w->rdma && w->rdma->rk[target].nkeys; }

static void dyn_used(rmpi_win_t *w, int t, unsigned subs, uint64_t seq, uint64_t key, int chunked, int get);

const rmpi_rail_t *rma_rdma_atomic_rail(const rmpi_win_t *w, int t)
{
    const struct rma_rdma *d = w->rdma;
    if (t == w->rank || !d->rk[t].nkeys || (d->by_target[t] & DYN_NOW) || rmpi_rma_direct(w, t))
        return NULL;
    return rmpi_vc_rail(rmpi_vc_get(rmpi_comm_world_rank(w->comm, t)), 0);
}

int rma_rdma_atomic_addr(rmpi_win_t *w, int t, uint64_t disp, size_t len, uint64_t *raddr, uint64_t *key)
{
    struct rma_rdma *d = w->rdma;
    if (!(d->by_target[t] & DYN_TAB)) {
        *raddr = d->rk[t].base + disp;
        *key = d->rk[t].key[0];
        return 0;
    }
    uint64_t dkey[RMPI_VC_MAX_SUB], seq = 0;
    if (dyn_keys(w, t, disp, len, dkey, &seq))
        return 1;                           /* no listed region holds it: a message the target checks */
    dyn_used(w, t, 1u, seq, dkey[0], 0, 1); /* checked by a read at the synchronisation */
    *raddr = disp;
    *key = dkey[0];
    return 0;
}

void rma_rdma_count(rmpi_win_t *w, int t, int n, int status)
{
    struct rma_rdma *d = w->rdma;
    d->out[t] += n;
    w->gets[t] += n;
    w->ngets += n;
    if (RMPI_UNLIKELY(status)) { /* as op_done: the origin checked the range */
        if (status != -EFAULT)
            rmpi_fatal("one-sided atomic to rank %d failed (error %d); RMPI_OFI_ATOMIC=off sends accumulates as "
                       "messages.",
                       t, -status);
        if (!d->err)
            d->err = MPI_ERR_RMA_RANGE;
    }
}

int rma_rdma_small_am(const rmpi_win_t *w, int target, int get, size_t bytes)
{
    const struct rma_rdma *d = w->rdma;
    if (!d)
        return 0;
    /* a get goes as a message once one is in flight: a lone get (latency) stays a read */
    return get ? (d->by_target[target] & BY_GETS) && d->outget[target] > 0 && bytes <= GET_AM_MAX
               : (d->by_target[target] & BY_PUTS) != 0;
}

/* A process_vm_writev or _readv of 8 B cost 3.2 us on the measured machine (a system
 * call alone 0.3 us), a fetch-and-op round trip through the target's eager handler
 * 0.3-1 us: on this node small puts and gets go as messages, as MPICH's shm active
 * messages for Win_create windows (docs/results/osc.md, 2026-11-30). The price: they wait
 * for the target's progress, where the copy did not. */
int rma_rdma_by_msg(const rmpi_win_t *w, int target, size_t bytes)
{
    const struct rma_rdma *d = w->rdma;
    return d && (d->by_target[target] & NODE_MSG) && (long long)bytes <= rmpi_knobs.RMA_SHM_MSG_MAX;
}

static void lone_drain_now(rmpi_win_t *w, struct rma_rdma *d);

void rma_rdma_before_am(rmpi_win_t *w, int target)
{
    struct rma_rdma *d = w->rdma;
    if (!d)
        return;
    /* every operation sent as a message passes here: the calls only when there is work
     * (callgrind, a put of put_bw on Win_create: 709 -> 681 instructions) */
    if (d->nlone)
        lone_drain_now(w, d);
    if (d->out[target] > 0)
        rma_rdma_wait(w, target);
    d->am[target] = 1;
}

/* Puts of a batch a flush posts as RDMA instead of sending it: with one or two the
 * round trip through the target's progress costs more than the writes (shm, 8 B put +
 * flush under load 9-15: 1.1-2.3 us by cross-memory attach against 3.3-4.1 as a
 * message); a window of them stays a message the target applies (put_bw 8 B twice as
 * fast: the kernel pins the target page once per written piece). */
#define BATCH_PUTS_MAX 4

/* n pieces moved by the rail's copy_now before returning (net.h; shm's process_vm_writev
 * or _readv), so nothing waits for an operation to complete and no progress pass runs for
 * it (callgrind, put_lat 8 B on Win_create: the pass was about a third of the flush); 0
 * when the rail cannot now (the caller then posts ops), 1 done (an access error is kept
 * for the next synchronisation). */
static int copy_now(rmpi_win_t *w, int target, const struct iovec *l, const struct iovec *r, int n, int write)
{
    rmpi_vc_t *vc = rmpi_vc_get(rmpi_comm_world_rank(w->comm, target));
    rmpi_rail_t *rail = vc->nsub == 1 ? rmpi_vc_rail(vc, 0) : NULL;
    if (!rail || !rail->ops->copy_now)
        return 0;
    size_t bytes = 0;
    for (int i = 0; i < n; i++)
        bytes += l[i].iov_len;
    int rc = rail->ops->copy_now(rail, vc->peer, l, r, n, w->rdma->rk[target].key[0], write);
    if (rc > 0)
        return 0;
    if (rc == 0) {
        vc->sub[0].rdma_posted += bytes;
        vc->sub[0].rdma_bytes += bytes;
    } else if (rc != -EFAULT) { /* as op_done: the origin checked the range */
        rmpi_fatal("one-sided RDMA %s of %zu bytes to rank %d on rail %s failed (error %d); RMPI_RMA_RDMA=0 "
                   "sends one-sided operations as messages.",
                   write ? "write" : "read", bytes, vc->peer, rail->hints.name, -rc);
    } else if (!w->rdma->err) {
        w->rdma->err = MPI_ERR_RMA_RANGE;
    }
    return 1;
}

/* The batch's puts written before returning by copy_now; 0 when the rail cannot now. */
static int write_now(rmpi_win_t *w, int target)
{
    rmpi_win_batch_t *b = &w->batch[target];
    const rma_rkeys_t *k = &w->rdma->rk[target];
    struct iovec l[BATCH_PUTS_MAX], r[BATCH_PUTS_MAX];
    int n = 0;
    for (size_t at = 0; at < b->len && n < BATCH_PUTS_MAX; n++) {
        rma_hdr_t h;
        memcpy(&h, b->buf + at, sizeof h);
        l[n] = (struct iovec){b->buf + at + sizeof h, h.bytes};
        r[n] = (struct iovec){(void *)(uintptr_t)(k->base + h.disp), h.bytes};
        at += rma_pad8(sizeof h + h.bytes);
    }
    return copy_now(w, target, l, r, n, 1);
}

/* Out of line, so that the test every operation and flush makes with no get waiting costs a
 * few instructions: with the body in the same function gcc saved six registers and built a
 * 168-byte frame before the test (callgrind: 21 instructions per empty call, two calls per
 * fetch_and_op). */
static __attribute__((noinline)) void lone_drain_now(rmpi_win_t *w, struct rma_rdma *d)
{
    int t = d->lone_t, n = d->nlone;
    d->nlone = 0;
    w->gets[t] -= n;
    w->ngets -= n;
    if (copy_now(w, t, d->lone_l, d->lone_r, n, 0)) {
        rma_idle_poll(); /* no progress pass waits for them: a loop of get + flush still serves others */
        return;
    }
    rmpi_dtype_t *byte = rmpi_dtype_get(MPI_BYTE); /* the rail refused: posted as ops, still in issue order */
    for (int i = 0; i < n; i++) {
        rmpi_rma_op_t op = {.kind = RMPI_RMA_GET,
                            .rbuf = d->lone_l[i].iov_base,
                            .rcount = d->lone_l[i].iov_len,
                            .rdt = byte,
                            .target = t};
        rma_rdma_issue(w, &op, (uintptr_t)d->lone_r[i].iov_base - d->rk[t].base, NULL, 0, d->lone_l[i].iov_len, NULL);
    }
}

void rma_rdma_lone_drain(rmpi_win_t *w)
{
    struct rma_rdma *d = w->rdma;
    if (d && d->nlone)
        lone_drain_now(w, d);
}

int rma_rdma_lone_only(const rmpi_win_t *w, int target)
{
    const struct rma_rdma *d = w->rdma;
    return d && d->nlone && d->lone_t == target && w->gets[target] == d->nlone && !w->dirty[target] &&
           !w->batch[target].len;
}

void rma_rdma_lone_before(rmpi_win_t *w, int target, int get)
{
    const struct rma_rdma *d = w->rdma;
    if (d->nlone && (!get || target != d->lone_t))
        rma_rdma_lone_drain(w);
}

/* A dynamic window's put or get to a target of this node, moved before returning when its
 * attached regions cover the range (0: done, ureq complete), else 1 with nothing done (a
 * message, which the target checks; gets are not deferred as rma_rdma_lone_get's: a read
 * the kernel refuses at the drain could not go back to being a message). */
static int dyn_now(rmpi_win_t *w, const rmpi_rma_op_t *op, uint64_t disp, size_t tbytes, rmpi_req_t *ureq, int put)
{
    const void *buf = put ? op->obuf : op->rbuf;
    MPI_Count count = put ? op->ocount : op->rcount;
    rmpi_dtype_t *dt = put ? op->odt : op->rdt;
    if (!rmpi_dtype_is_contig(dt, count) || !rma_rtab_covers(w, op->target, disp, tbytes))
        return 1;
    struct iovec l = {rmpi_dtype_contig_ptr(buf, dt), tbytes};
    struct iovec r = {(void *)(uintptr_t)disp, tbytes};
    if (!copy_now(w, op->target, &l, &r, 1, put))
        return 1;
    if (ureq)
        rmpi_req_complete(ureq);
    return 0;
}

int rma_rdma_lone_get(rmpi_win_t *w, const rmpi_rma_op_t *op, uint64_t disp, size_t tbytes, rmpi_req_t *ureq)
{
    struct rma_rdma *d = w->rdma;
    int t = op->target;
    if (d->by_target[t] & DYN_NOW)
        return dyn_now(w, op, disp, tbytes, ureq, 0);
    if (d->nlone && (d->lone_t != t || d->nlone == LONE_GETS_MAX))
        rma_rdma_lone_drain(w);
    if (ureq || !(d->by_target[t] & GETS_NOW) || !rmpi_dtype_is_contig(op->rdt, op->rcount))
        return 1;
    d->lone_t = t;
    d->lone_l[d->nlone] = (struct iovec){rmpi_dtype_contig_ptr(op->rbuf, op->rdt), tbytes};
    d->lone_r[d->nlone++] = (struct iovec){(void *)(uintptr_t)(d->rk[t].base + disp), tbytes};
    w->gets[t]++;
    w->ngets++;
    return 0;
}

/* Smaller puts stay ops: shm gathers a run of them into one cross-memory call. */
#define PUT_NOW_MIN ((size_t)4096)

/* Larger ones were already one process_vm_writev each, made when posted; the op around it
 * (a batch record, the rail's completion queue, a progress pass in the flush to run it)
 * was the rest of their cost: callgrind, rank 0, put_lat 64 KiB on Win_create, 1,203
 * instructions per put and 725 per flush against Open MPI's osc rdma 382 and 239. */
int rma_rdma_put_now(rmpi_win_t *w, const rmpi_rma_op_t *op, uint64_t disp, size_t tbytes, rmpi_req_t *ureq)
{
    struct rma_rdma *d = w->rdma;
    int t = op->target;
    if (d->by_target[t] & DYN_NOW)
        return dyn_now(w, op, disp, tbytes, ureq, 1);
    if (tbytes <= PUT_NOW_MIN || !(d->by_target[t] & GETS_NOW) || !rmpi_dtype_is_contig(op->odt, op->ocount))
        return 1;
    struct iovec l = {rmpi_dtype_contig_ptr(op->obuf, op->odt), tbytes};
    struct iovec r = {(void *)(uintptr_t)(d->rk[t].base + disp), tbytes};
    if (!copy_now(w, t, &l, &r, 1, 1))
        return 1;
    if (ureq)
        rmpi_req_complete(ureq);
    return 0;
}

/* A dynamic window's put or get of the short paths (rmpi_rma_rdma_put, rmpi_rma_rdma_get)
 * to a target of this node: as dyn_now, from the binding's arguments. callgrind, rank 0,
 * put_lat 64 KiB on a dynamic window: the general path (the binding's checks, datatype
 * lookups, rmpi_rma_issue) was about 500 of the put's 834 instructions. */
static int dyn_short(rmpi_win_t *w, void *buf, uint64_t addr, uint64_t bytes, int t, int put)
{
    if (!rma_rtab_covers(w, t, addr, bytes))
        return 1;           /* a message: the target checks it, and answers the error */
    rmpi_rma_before_load(); /* as rmpi_rma_issue: a get or put on any path is a load too */
    struct iovec l = {buf, bytes};
    struct iovec r = {(void *)(uintptr_t)addr, bytes};
    return !copy_now(w, t, &l, &r, 1, put);
}

/* The binding's short path to rma_rdma_put_now (rma.h): the checks of the general path
 * that such a put can meet, in a few instructions (callgrind, put_lat 64 KiB on Win_create:
 * the binding's checks and rmpi_rma_issue were about 430 of the put's 780). */
int rmpi_rma_rdma_put(rmpi_win_t *w, const void *buf, MPI_Datatype type, MPI_Count count, int t, MPI_Aint tdisp)
{
    struct rma_rdma *d = w->rdma;
    size_t es = rmpi_dtype_predef_contig_size(type);
    if (!es || count <= 0 || count > (MPI_Count)(SIZE_MAX >> 8))
        return 1;
    uint64_t bytes = (uint64_t)count * es, disp;
    if (bytes <= PUT_NOW_MIN || (long long)bytes <= rmpi_knobs.RMA_SHM_MSG_MAX)
        return rmpi_rma_msg_put(w, buf, type, count, t, tdisp); /* messages */
    if (rmpi_thread_multiple || !d || (unsigned)t >= (unsigned)w->size || tdisp < 0 || !d->rk[t].nkeys ||
        !(d->by_target[t] & (GETS_NOW | DYN_NOW)) || d->am[t] || d->nlone || w->lazy[t] ||
        !(w->lock_all || w->locked[t] || w->fence_open) || rma_fence_gated(w, t))
        return 1;
    if (d->by_target[t] & DYN_NOW) /* an address, written once the region table covers it */
        return dyn_short(w, (void *)(uintptr_t)buf, (uint64_t)tdisp, bytes, t, 1);
    const rmpi_win_peer_t *peer = &w->peers[t];
    if (__builtin_mul_overflow((uint64_t)tdisp, (uint64_t)peer->disp_unit, &disp) || disp > peer->size ||
        bytes > peer->size - disp)
        return 1; /* the general path's error */
    rmpi_rma_before_load();
    struct iovec l = {(void *)(uintptr_t)buf, bytes};
    struct iovec r = {(void *)(uintptr_t)(d->rk[t].base + disp), bytes};
    return !copy_now(w, t, &l, &r, 1, 1);
}

/* Get's (rma.h): as rma_rdma_lone_get from the binding's arguments. callgrind, rank 0,
 * get_lat 64 KiB: the binding's checks, datatype lookups and rmpi_rma_issue were about 500
 * instructions of a get. */
int rmpi_rma_rdma_get(rmpi_win_t *w, void *buf, MPI_Datatype type, MPI_Count count, int t, MPI_Aint tdisp)
{
    struct rma_rdma *d = w->rdma;
    size_t es = rmpi_dtype_predef_contig_size(type);
    if (!es || count <= 0 || count > (MPI_Count)(SIZE_MAX >> 8))
        return 1;
    uint64_t bytes = (uint64_t)count * es, disp;
    if (rmpi_thread_multiple || !d || (unsigned)t >= (unsigned)w->size || tdisp < 0 || !d->rk[t].nkeys ||
        !(d->by_target[t] & (GETS_NOW | DYN_NOW)) || (d->by_target[t] & BY_GETS) || d->am[t] || w->lazy[t] ||
        (long long)bytes <= rmpi_knobs.RMA_SHM_MSG_MAX || !(w->lock_all || w->locked[t] || w->fence_open) ||
        rma_fence_gated(w, t))
        return 1;
    if (d->by_target[t] & DYN_NOW) /* never deferred (dyn_now) */
        return d->nlone ? 1 : dyn_short(w, buf, (uint64_t)tdisp, bytes, t, 0);
    const rmpi_win_peer_t *peer = &w->peers[t];
    if (__builtin_mul_overflow((uint64_t)tdisp, (uint64_t)peer->disp_unit, &disp) || disp > peer->size ||
        bytes > peer->size - disp)
        return 1; /* the general path's error */
    rmpi_rma_before_load();
    if (d->nlone && (d->lone_t != t || d->nlone == LONE_GETS_MAX))
        rma_rdma_lone_drain(w);
    d->lone_t = t;
    d->lone_l[d->nlone] = (struct iovec){buf, bytes};
    d->lone_r[d->nlone++] = (struct iovec){(void *)(uintptr_t)(d->rk[t].base + disp), bytes};
    w->gets[t]++;
    w->ngets++;
    return 0;
}

int rma_rdma_batch_puts(rmpi_win_t *w, int target)
{
    rmpi_win_batch_t *b = &w->batch[target];
    /* where the target's progress serves the writes anyway (tcp;ofi_rxm), they would still
     * need the FLUSH round trip: the batch goes as it is */
    if (!b->rdma_puts || b->rdma_puts > BATCH_PUTS_MAX || !(w->rdma->by_target[target] & LONE_COPIES))
        return 0;
    /* nothing but these puts was sent or queued since the last acknowledgement */
    w->rdma->am[target] = 0;
    w->dirty[target] = 0;
    if (write_now(w, target)) {
        b->len = 0;
        b->rdma_puts = 0;
        w->nbatched--;
        rma_idle_poll(); /* no progress pass waits for them: a loop of put + flush still serves others */
        return 1;
    }
    rmpi_dtype_t *byte = rmpi_dtype_get(MPI_BYTE);
    for (size_t at = 0; at < b->len;) {
        rma_hdr_t h;
        memcpy(&h, b->buf + at, sizeof h);
        rmpi_rma_op_t op = {.kind = RMPI_RMA_PUT,
                            .obuf = b->buf + at + sizeof h,
                            .ocount = h.bytes,
                            .odt = byte,
                            .target = target};
        rma_rdma_issue(w, &op, h.disp, NULL, 0, h.bytes, NULL); /* copied: the batch is free again */
        at += rma_pad8(sizeof h + h.bytes);
    }
    b->len = 0;
    b->rdma_puts = 0;
    w->nbatched--;
    return 1;
}

void rma_rdma_acked(rmpi_win_t *w, int target)
{
    if (w->rdma)
        w->rdma->am[target] = 0;
}

void rma_rdma_wait(rmpi_win_t *w, int target)
{
    rma_rdma_lone_drain(w);
    unsigned idle = 0;
    while (w->rdma && w->rdma->out[target] > 0)
        rmpi_core_wait_step(&idle);
}

void rma_rdma_order(rmpi_win_t *w, int target)
{
    rma_rdma_lone_drain(w); /* read before the FLUSH or UNLOCK that follows, under the lock */
    if (w->rdma && w->rdma->out[target] && rmpi_vc_get(rmpi_comm_world_rank(w->comm, target))->nsub > 1)
        rma_rdma_wait(w, target);
}

void rma_rdma_before_release(rmpi_win_t *w, int target)
{
    rma_rdma_lone_drain(w); /* read while the lock or epoch still holds */
    if (w->rdma && w->rdma->outget[target])
        rma_rdma_wait(w, target); /* a provider may read the target memory when it answers */
    else
        rma_rdma_order(w, target);
}

int rma_rdma_error(rmpi_win_t *w)
{
    int err = w->ans_err; /* ops.c answer_refused: the same kind of error, by message */
    w->ans_err = 0;
    if (!w->rdma)
        return err;
    if (RMPI_UNLIKELY(w->rdma->nsus)) {
        int verr = dyn_verify(w);
        if (!w->rdma->err)
            w->rdma->err = verr;
    }
    if (!err)
        err = w->rdma->err;
    w->rdma->err = 0;
    return err;
}

int rma_rdma_err_pending(const rmpi_win_t *w)
{
    return w->ans_err || w->rdma_unchecked || (w->rdma && (w->rdma->err || w->rdma->nsus));
}

static void seq_check(rmpi_win_t *w, int t);

void rma_rdma_check_now(rmpi_win_t *w, int target)
{
    struct rma_rdma *d = w->rdma;
    for (int t = target < 0 ? 0 : target; w->rdma_unchecked && t < (target < 0 ? w->size : target + 1); t++)
        if (d->used[t].subs && !d->used[t].flushed)
            seq_check(w, t);
}

/* Puts alone since the last check: the FLUSH, handled at the target after them (they land
 * only when its progress reads them, before later frames: FI_ORDER_SAW), carries the seq
 * of their copy, and the ack says whether the table is still that one. No read: a read
 * over tcp;ofi_rxm cost about 10 us more than the FLUSH's round trip it ran beside
 * (put_lat 4 KiB 21.4 -> 31.1 us). */
uint64_t rma_rdma_flush_seq(rmpi_win_t *w, int t)
{
    rma_dused_t *u = w->rdma && w->rdma->used ? &w->rdma->used[t] : NULL;
    if (!u || !u->subs || u->gets || u->mixed || u->flushed)
        return 0;
    u->flushed = 1;
    return u->seq + 1;
}

static void sus_add(struct rma_rdma *d, int t, uint64_t key)
{
    if (d->nsus == d->capsus) {
        d->capsus = d->capsus ? 2 * d->capsus : 8;
        d->sus = rmpi_xrealloc(d->sus, (size_t)d->capsus * sizeof *d->sus);
    }
    d->sus[d->nsus].t = t;
    d->sus[d->nsus++].key = key;
}

void rma_rdma_flush_acked(rmpi_win_t *w, int t, int changed)
{
    rma_dused_t *u = &w->rdma->used[t];
    for (int i = 0; changed && i < u->nkeys; i++) /* is each key still in the table? */
        sus_add(w->rdma, t, u->keys[i]);
    free(u->keys);
    memset(u, 0, sizeof *u);
    w->rdma_unchecked--;
}

int rma_rdma_table_changed(const rmpi_win_t *w, uint64_t seq)
{
    return !w->rdma || !w->rdma->dtab || w->rdma->dtab->seq + 1 != seq;
}

static void batch_done(rdma_batch_t *b)
{
    rmpi_win_t *w = b->w;
    if (b->rdt) {
        rmpi_dtype_unpack(b->tmp, b->bytes, b->rbuf, b->rcount, b->rdt, 0);
        rmpi_dtype_release(b->rdt);
    }
    free(b->tmp);
    w->rdma->out[b->target]--;
    w->rdma->outget[b->target] -= b->get;
    w->gets[b->target]--;
    w->ngets--;
    if (b->ureq)
        rmpi_req_complete(b->ureq);
    batch_free(b);
}

static void op_done(rmpi_net_op_t *nop)
{
    rdma_op_t *o = (rdma_op_t *)nop;
    rdma_batch_t *b = o->b;
    rmpi_vc_stripe_done(b->vc, &o->st);
    if (RMPI_LIKELY(!nop->status))
        b->vc->sub[o->st.sub].rdma_bytes += o->st.len;
    if (RMPI_UNLIKELY(nop->status)) {
        /* The origin checked the range against the window, so a refused access means the
         * target's registration and our view of it disagree: an error for the next sync. */
        if (nop->status != -EFAULT)
            rmpi_fatal("one-sided RDMA %s of %zu bytes to rank %d on rail %s failed (error %d); one-sided "
                       "operations do not move to another rail. RMPI_RMA_RDMA=0 sends them as messages.",
                       b->get ? "read" : "write", o->st.len, b->vc->peer, nop->rail->hints.name, -nop->status);
        if (!b->w->rdma->err)
            b->w->rdma->err = MPI_ERR_RMA_RANGE;
    }
    if (--b->pending == 0)
        batch_done(b);
}

/* One check of a target's table seq: a read per subchannel, counted in gets[t]. */
typedef struct seq_rd {
    rmpi_net_op_t op; /* first: the completion's argument */
    struct seq_chk *c;
} seq_rd_t;
typedef struct seq_chk {
    rmpi_win_t *w;
    int t, pending;
    rma_dused_t u;
    uint64_t v[RMPI_VC_MAX_SUB];
    seq_rd_t rd[RMPI_VC_MAX_SUB];
} seq_chk_t;

static void seq_done(rmpi_net_op_t *nop)
{
    seq_rd_t *r = (seq_rd_t *)(void *)nop;
    seq_chk_t *c = r->c;
    if (nop->status || c->v[r - c->rd] != c->u.seq) /* changed (or odd: being rewritten) */
        c->u.mixed = 1;
    if (--c->pending)
        return;
    rmpi_win_t *w = c->w;
    struct rma_rdma *d = w->rdma;
    for (int i = 0; c->u.mixed && i < c->u.nkeys; i++) /* is each key still in the table? */
        sus_add(d, c->t, c->u.keys[i]);
    w->gets[c->t]--;
    w->ngets--;
    free(c->u.keys);
    free(c);
}

/* A dynamic window's target t to which RDMA ops on table keys went since the last check:
 * the table's seq read behind them on each subchannel that carried them (reads and writes
 * are served in the order posted on a connection, hints.rdma_whole; an op posted in chunks
 * is waited for first), so a region detached before an op was served shows as a changed
 * seq, checked at the end of the synchronisation (dyn_verify). Posted by the
 * synchronisation, once for every op since the last, before its FLUSH or its wait: the
 * read's round trip runs beside the FLUSH's, or beside the gets still in flight. */
static void seq_check(rmpi_win_t *w, int t)
{
    struct rma_rdma *d = w->rdma;
    if (d->used[t].chunked)
        rma_rdma_wait(w, t);
    rmpi_vc_t *vc = rmpi_vc_get(rmpi_comm_world_rank(w->comm, t));
    const rma_rkeys_t *k = &d->rk[t];
    seq_chk_t *c = rmpi_xcalloc(1, sizeof *c);
    c->w = w;
    c->t = t;
    c->u = d->used[t];
    memset(&d->used[t], 0, sizeof d->used[t]);
    w->rdma_unchecked--;
    for (unsigned s = 0; s < k->nkeys; s++)
        c->pending += (int)(c->u.subs >> s & 1);
    w->gets[t]++;
    w->ngets++;
    for (unsigned s = 0; s < k->nkeys; s++) {
        if (!(c->u.subs >> s & 1))
            continue;
        seq_rd_t *r = &c->rd[s];
        r->c = c;
        r->op.complete = seq_done;
        r->op.ctx = c;
        rmpi_rail_t *rail = rmpi_vc_rail(vc, (int)s);
        rail->ops->get(rail, vc->peer, &c->v[s], sizeof c->v[s], k->base + offsetof(rma_dtab_t, seq), k->key[s],
                       &r->op);
    }
}

/* Note table keys used toward t (seq_check checks them once its ops completed). */
static void dyn_used(rmpi_win_t *w, int t, unsigned subs, uint64_t seq, uint64_t key, int chunked, int get)
{
    struct rma_rdma *d = w->rdma;
    if (!d->used)
        d->used = rmpi_xcalloc((size_t)w->size, sizeof *d->used);
    rma_dused_t *u = &d->used[t];
    if (!u->subs)
        w->rdma_unchecked++;
    if (u->nkeys && u->seq != seq)
        u->mixed = 1;
    u->chunked |= chunked;
    u->gets |= get;
    u->seq = seq;
    u->subs |= subs;
    for (int i = 0; i < u->nkeys; i++)
        if (u->keys[i] == key)
            return;
    if (u->nkeys == u->cap) {
        u->cap = u->cap ? 2 * u->cap : 4;
        u->keys = rmpi_xrealloc(u->keys, (size_t)u->cap * sizeof *u->keys);
    }
    u->keys[u->nkeys++] = key;
}

/* Post [local, local + len) <-> the target's raddr as one op per stripe. */
static void post_piece(rdma_batch_t *b, rdma_op_t *ops, int get, char *local, size_t len, uint64_t raddr)
{
    const uint64_t *key = b->key;
    rmpi_stripe_t st[RMPI_VC_MAX_SUB];
    int n = rmpi_vc_stripe(b->vc, len, st, len >= RDMA_STRIPE_MIN ? RMPI_VC_MAX_SUB : 1);
    if (n <= 0)
        rmpi_fatal("one-sided: no rail to rank %d is left for an RDMA %s.", b->vc->peer, get ? "read" : "write");
    for (int i = 0; i < n; i++) {
        rdma_op_t *o = &ops[b->nops++];
        o->b = b;
        o->st = st[i];
        b->subs |= (unsigned)(b->key == b->dkey) << st[i].sub;
        b->chunked |= st[i].len > rmpi_vc_rail(b->vc, st[i].sub)->hints.rdma_whole;
        o->op.complete = op_done;
        o->op.ctx = b;
        o->op.status = 0;
        o->op.by_target = 0;
        o->op.landed = 0;
        rmpi_rail_t *rail = rmpi_vc_rail(b->vc, st[i].sub);
        b->vc->sub[st[i].sub].rdma_posted += st[i].len;
        if (get)
            rail->ops->get(rail, b->vc->peer, local + st[i].off, st[i].len, raddr + st[i].off, key[st[i].sub], &o->op);
        else
            rail->ops->put(rail, b->vc->peer, local + st[i].off, st[i].len, raddr + st[i].off, key[st[i].sub], &o->op);
        /* read before any progress: completions run only there. A get is complete when its
         * data is here, whoever served it: nothing for a FLUSH to ask (over tcp the FLUSH
         * after a get was a second round trip, 18.5 us get + flush against 10.4 put + flush) */
        /* a put that completes once landed (tcp's PUT_ACK on a dynamic window's range list)
         * is its own remote completion: waiting for it (gets[t]) is the flush, no FLUSH */
        if (!get && (!rail->hints.rdma_native || o->op.by_target) && !o->op.landed) {
            b->w->dirty[b->target] = 1; /* landed only once the target handled it: FLUSH asks */
            b->w->tail_answered[b->target] = 0;
        }
    }
}

int rma_rdma_issue(rmpi_win_t *w, const rmpi_rma_op_t *op, uint64_t disp, const rma_seg_t *segs, uint32_t nseg,
                   size_t tbytes, rmpi_req_t *ureq)
{
    int t = op->target, get = op->kind == RMPI_RMA_GET;
    if ((nseg && tbytes / nseg < RDMA_SEG_MIN) || (w->rdma->by_target[t] & DYN_NOW))
        return 1;
    uint64_t base = w->rdma->rk[t].base, dkey[RMPI_VC_MAX_SUB], seq = 0;
    const uint64_t *key = w->rdma->rk[t].key;
    if (w->rdma->by_target[t] & DYN_TAB) { /* the region that holds every target byte */
        int64_t lo = 0, hi = (int64_t)tbytes;
        for (uint32_t i = 0; i < nseg; i++) {
            lo = i == 0 || segs[i].off < lo ? segs[i].off : lo;
            hi = i == 0 || segs[i].off + (int64_t)segs[i].len > hi ? segs[i].off + (int64_t)segs[i].len : hi;
        }
        if ((lo < 0 && (uint64_t)-lo > disp) || dyn_keys(w, t, disp + (uint64_t)lo, (uint64_t)(hi - lo), dkey, &seq))
            return 1;
        base = 0; /* displacements are addresses */
        key = NULL;
    }
    rmpi_vc_t *vc = rmpi_vc_get(rmpi_comm_world_rank(w->comm, t));
    size_t npieces = nseg ? nseg : 1, maxops = 0;
    for (size_t i = 0; i < npieces; i++)
        maxops += (nseg ? segs[i].len : tbytes) >= RDMA_STRIPE_MIN ? (size_t)vc->nsub : 1;
    const void *obuf = get ? op->rbuf : op->obuf;
    size_t ocount = get ? op->rcount : op->ocount;
    rmpi_dtype_t *odt = get ? op->rdt : op->odt;
    int contig = rmpi_dtype_is_contig(odt, ocount), inline_copy = !get && tbytes <= RDMA_COPY_MAX;
    /* one allocation: the batch, its ops, and a small put's copy */
    size_t head = sizeof(rdma_batch_t) + maxops * sizeof(rdma_op_t);
    size_t alloc = head + (inline_copy ? tbytes : 0);
    rdma_batch_t *b = batch_alloc(alloc);
    rdma_op_t *ops = (rdma_op_t *)(void *)(b + 1);
    *b = (rdma_batch_t){w, vc, t, 0, 0, get, NULL, NULL, 0, tbytes, NULL, ureq, alloc, key, {0}};
    if (!key) {
        memcpy(b->dkey, dkey, sizeof dkey);
        b->key = b->dkey;
    }
    char *local;
    if (inline_copy) {
        local = (char *)b + head;
        if (contig)
            memcpy(local, rmpi_dtype_contig_ptr(obuf, odt), tbytes);
        else
            rmpi_dtype_pack(op->obuf, op->ocount, op->odt, 0, local, tbytes);
    } else if (contig) {
        local = rmpi_dtype_contig_ptr(obuf, odt);
    } else {
        local = b->tmp = rmpi_xmalloc(tbytes);
        if (get) {
            b->rbuf = op->rbuf;
            b->rcount = op->rcount;
            b->rdt = op->rdt;
            rmpi_dtype_retain(op->rdt);
        } else {
            rmpi_dtype_pack(op->obuf, op->ocount, op->odt, 0, local, tbytes);
        }
    }
    uint64_t raddr = base + disp;
    w->rdma->out[t]++;
    w->rdma->outget[t] += get;
    w->gets[t]++;
    w->ngets++;
    if (!nseg) {
        post_piece(b, ops, get, local, tbytes, raddr);
    } else {
        size_t at = 0;
        for (uint32_t i = 0; i < nseg; i++) {
            post_piece(b, ops, get, local + at, segs[i].len, raddr + (uint64_t)segs[i].off);
            at += segs[i].len;
        }
    }
    b->pending = b->nops; /* none has completed yet: completions run only inside progress */
    if (b->subs)
        dyn_used(w, t, b->subs, seq, dkey[0], b->chunked, get);
    return 0;
}
