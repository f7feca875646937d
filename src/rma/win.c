/* Windows: creation (create, allocate, allocate_shared, create_dynamic), free, attach and
 * detach, shared-memory queries, and the message helpers the other files share. */
#include "rma_impl.h"

#include <stdatomic.h>
#include <sys/mman.h>

#include "../rt/rt.h"

rmpi_addrset_t rmpi_win_live = RMPI_ADDRSET_INIT;

void rma_serve_add(rmpi_win_t *w);
void rma_serve_remove(rmpi_win_t *w);

rmpi_req_t *rma_send_req(rmpi_win_t *w, int to, int tag, void *ext, size_t len)
{
    rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_SEND);
    r->len = len;
    r->ext = ext; /* freed with the request */
    r->rank = rmpi_comm_world_rank(w->comm, to);
    r->ctx = w->comm->ctx;
    r->tag = tag;
    r->src = w->rank;
    r->flags |= RMPI_RF_FREED; /* the core releases it once sent */
    return r;
}

void rma_send(rmpi_win_t *w, int to, int tag, void *msg, size_t len)
{
    rmpi_req_t *r = rma_send_req(w, to, tag, msg, len);
    r->buf = msg;
    rmpi_core_isend(r);
}

rmpi_req_t *rma_post_answer(rmpi_win_t *w, int from, int tag, void *buf, size_t len)
{
    rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_RECV);
    r->buf = buf;
    r->len = len;
    r->rank = from;
    r->ctx = w->comm->ctx;
    r->tag = tag;
    rmpi_core_irecv(r);
    return r;
}

void rma_ctl_hdr(void *msg, int kind, int lock_type, int32_t tag)
{
    rma_hdr_t *h = msg;
    memset(h, 0, sizeof *h);
    h->kind = (uint8_t)kind;
    h->version = RMA_WIRE_VERSION;
    h->lock_type = (uint16_t)lock_type;
    h->reply_tag = tag;
}

char *rma_am_begin(rmpi_win_t *w, int t, size_t len)
{
    rmpi_win_batch_t *b = &w->batch[t];
    w->building = 1;
    b->rdma_puts = 0; /* a put that keeps the batch's puts-only state sets it again */
    if (len > RMA_BATCH_OP_MAX) {
        rma_am_send(w, t); /* what was queued goes first */
        return rmpi_xmalloc(len);
    }
    if (b->len + len > RMA_BATCH_MAX)
        rma_am_send(w, t);
    if (b->len + rma_pad8(len) > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 512;
        while (cap < b->len + rma_pad8(len))
            cap *= 2;
        b->cap = cap;
        b->buf = rmpi_xrealloc(b->buf, cap);
    }
    return b->buf + b->len;
}

void rma_am_end(rmpi_win_t *w, int t, char *msg, size_t len, int send)
{
    w->building = 0;
    if (len > RMA_BATCH_OP_MAX) {
        w->tail_answered[t] = 0;
        rma_send(w, t, RMA_TAG_AM, msg, len);
        return;
    }
    rmpi_win_batch_t *b = &w->batch[t];
    w->tail_answered[t] = 0; /* the caller of an answered request sets it again */
    if (len & 7)             /* a call even for 0 bytes */
        memset(msg + len, 0, rma_pad8(len) - len);
    if (!b->len)
        w->nbatched++;
    b->len += rma_pad8(len);
    if (send)
        rma_am_send(w, t);
}

void rma_am_send(rmpi_win_t *w, int t)
{
    rmpi_win_batch_t *b = &w->batch[t];
    if (!b->len)
        return;
    /* Eagerly from the batch's buffer (the core copies it into the frame), kept for the next
     * batch when it is small: no allocation, request or free per message on the way to an
     * answer. Else the message owns the buffer. */
    if (!rmpi_core_send_eager(rmpi_comm_world_rank(w->comm, t), w->comm->ctx, w->rank, RMA_TAG_AM, b->buf, b->len)) {
        rma_send(w, t, RMA_TAG_AM, b->buf, b->len); /* the message owns the buffer now */
        b->buf = NULL;
        b->cap = 0;
    } else if (b->cap > RMA_BATCH_OP_MAX) {
        free(b->buf);
        b->buf = NULL;
        b->cap = 0;
    }
    b->len = 0;
    w->nbatched--;
    b->rdma_puts = 0;
}

void rma_ctl(rmpi_win_t *w, int target, int kind, int lock_type, rma_ack_t *ack)
{
    int32_t tag = rma_tag(w);
    ack->err = 0;
    ack->t = target;
    ack->w = w;
    uint64_t seq = kind == AM_FLUSH && w->rdma_unchecked ? rma_rdma_flush_seq(w, target) : 0;
    ack->seq = seq != 0;
    rmpi_win_ans_t *a = &w->ans[tag & (RMPI_WIN_ANS - 1)];
    if (!rmpi_thread_multiple && !a->tag) {
        /* into an answer slot as the short paths' answers (ops.c expect_landed): no receive
         * request to post, match, complete and release */
        *a = (rmpi_win_ans_t){.tag = tag, .from = target, .ack = 1, .land = &ack->err, .len = sizeof ack->err};
        w->nans++;
        ack->req = NULL;
        ack->tag = tag;
    } else
        ack->req = rma_post_answer(w, target, tag, &ack->err, sizeof ack->err);
    if (kind == AM_FLUSH) { /* the short header: a small put and its FLUSH fit a slot of shm's queue */
        char *m = rma_am_begin(w, target, sizeof(rma_shdr_t));
        *(rma_shdr_t *)(void *)m =
            (rma_shdr_t){.kind = AM_SFLUSH, .version = RMA_WIRE_VERSION, .reply_tag = tag, .disp = seq};
        rma_am_end(w, target, m, sizeof(rma_shdr_t), 1);
        return;
    }
    char *m = rma_am_begin(w, target, sizeof(rma_hdr_t));
    rma_ctl_hdr(m, kind, lock_type, tag);
    rma_am_end(w, target, m, sizeof(rma_hdr_t), 1);
}

void rma_note(rmpi_win_t *w, int target, int kind, int lock_type)
{
    char *m = rma_am_begin(w, target, sizeof(rma_hdr_t));
    rma_ctl_hdr(m, kind, lock_type, 0);
    rma_am_end(w, target, m, sizeof(rma_hdr_t), 1);
}

int rma_ack_wait(rma_ack_t *acks, int n)
{
    int err = 0;
    for (int i = 0; i < n; i++) {
        if (!acks[i].req) {
            unsigned idle = 0;
            while (acks[i].w->ans[acks[i].tag & (RMPI_WIN_ANS - 1)].tag == acks[i].tag)
                rmpi_core_wait_step(&idle);
        } else {
            rmpi_core_wait(acks[i].req);
            rmpi_req_release(acks[i].req);
        }
        if (RMPI_UNLIKELY(acks[i].seq))
            rma_rdma_flush_acked(acks[i].w, acks[i].t, acks[i].err == RMA_ACK_TABLE_CHANGED);
        if (acks[i].err == RMA_ACK_TABLE_CHANGED)
            acks[i].err = 0; /* a check of ours, not an error yet (rma_rdma_error) */
        if (acks[i].err && !err)
            err = acks[i].err;
    }
    return err;
}

void rma_wait_gets(rmpi_win_t *w, int target)
{
    rma_rdma_check(w, target);
    if (w->ngets)
        rma_rdma_lone_drain(w);
    if (target >= 0 && w->gets[target])
        rma_am_send(w, target); /* the requests of the answers waited for */
    else if (target < 0 && w->ngets)
        for (int t = 0; t < w->size; t++)
            rma_am_send(w, t);
    unsigned idle = 0;
    while (target < 0 ? w->ngets > 0 : w->gets[target] > 0)
        rmpi_core_wait_step(&idle);
}

int rma_flush_ranks(rmpi_win_t *w, const int *ranks, int n)
{
    /* direct operations are done when issued: a full barrier orders them before what the
     * caller does next (the fence, unlock or flush that asked for remote completion) */
    atomic_thread_fence(memory_order_seq_cst);
    rma_ack_t one[RMA_ACKS_STACK]; /* a flush or unlock of one target: no malloc and free */
    rma_ack_t *acks = n <= RMA_ACKS_STACK ? one : rmpi_xmalloc((size_t)n * sizeof *acks);
    int na = 0;
    for (int i = 0; i < n; i++)
        na += rma_flush_start(w, ranks ? ranks[i] : i, &acks[na]);
    int err = rma_ack_wait(acks, na);
    for (int i = 0; i < n; i++) {
        int t = ranks ? ranks[i] : i;
        rma_rdma_acked(w, t);
        if (w->lazy[t] == RMA_LAZY_SENT) /* the FLUSH was handled after the lock's grant */
            w->lazy[t] = 0;
    }
    if (acks != one)
        free(acks);
    for (int i = 0; i < n; i++)
        rma_wait_gets(w, ranks ? ranks[i] : i);
    int rerr = rma_rdma_error(w);
    return err ? err : rerr;
}

void rma_ring_allgather(rmpi_win_t *w, void *arr, size_t el)
{
    int n = w->size, me = w->rank;
    char *a = arr;
    for (int s = 1; s < n; s++) {
        int sb = (me - s + 1 + n) % n, rb = (me - s + n) % n;
        rmpi_comm_coll_sendrecv(w->comm, a + (size_t)sb * el, el, (me + 1) % n, a + (size_t)rb * el, el,
                                (me - 1 + n) % n, RMA_TAG_SETUP);
    }
}

static int all_on_my_node(const rmpi_comm_t *c)
{
    int node = rmpi_topo_my_node();
    for (int i = 0; i < c->size; i++)
        if (rmpi_topo_node_of(rmpi_comm_local_world_rank(c, i)) != node)
            return 0;
    return 1;
}

static rmpi_win_t *win_new(rmpi_comm_t *dup, int flavor)
{
    rmpi_win_t *w = rmpi_xmalloc(sizeof *w);
    memset(w, 0, sizeof *w);
    w->magic = RMPI_WIN_MAGIC;
    rmpi_addrset_add(&rmpi_win_live, w);
    w->flavor = flavor;
    w->comm = dup;
    w->rank = dup->rank;
    w->size = dup->size;
    size_t n = (size_t)w->size;
    w->peers = rmpi_xmalloc(n * sizeof *w->peers);
    memset(w->peers, 0, n * sizeof *w->peers);
    w->locked = rmpi_xmalloc(n * sizeof(int));
    memset(w->locked, 0, n * sizeof(int));
    w->gets = rmpi_xmalloc(n * sizeof(int));
    memset(w->gets, 0, n * sizeof(int));
    w->posts = rmpi_xmalloc(n * sizeof(int));
    memset(w->posts, 0, n * sizeof(int));
    w->errs = rmpi_xmalloc(n * sizeof(int));
    memset(w->errs, 0, n * sizeof(int));
    w->dirty = rmpi_xmalloc(n);
    memset(w->dirty, 0, n);
    w->nocheck = rmpi_xmalloc(n);
    memset(w->nocheck, 0, n);
    w->lazy = rmpi_xcalloc(n, 1);
    w->tail_answered = rmpi_xcalloc(n, 1);
    w->quiet = rmpi_xcalloc(n, 1);
    w->unchecked = rmpi_xcalloc(n, 1);
    w->batch = rmpi_xcalloc(n, sizeof *w->batch);
    w->fdone = rmpi_xcalloc(n, sizeof(int));
    w->marks = rmpi_xcalloc(n, sizeof(int));
    w->mclean = rmpi_xcalloc(n, 1);
    w->lockwait = rmpi_xcalloc(n, 1);
    w->held = rmpi_xmalloc(n * sizeof *w->held);
    for (size_t i = 0; i < n; i++)
        rmpi_list_init(&w->held[i]);
    w->next_tag = 1;
    rmpi_list_init(&w->incoming);
    w->errh = MPI_ERRORS_ARE_FATAL;
    return w;
}

static void win_delete(rmpi_win_t *w)
{
    rma_node_unmap(w); /* reads the peers' sizes */
    free(w->peers);
    free(w->locked);
    free(w->gets);
    free(w->posts);
    free(w->errs);
    free(w->dirty);
    free(w->nocheck);
    for (int i = 0; i < w->size; i++)
        free(w->batch[i].buf);
    free(w->batch);
    free(w->lazy);
    free(w->tail_answered);
    free(w->quiet);
    free(w->unchecked);
    free(w->fdone);
    free(w->marks);
    free(w->mclean);
    free(w->lockwait);
    free(w->held);
    rmpi_net_ranges_free(&w->regions);
    free(w->start_ranks);
    if (w->start_group)
        rmpi_group_release(w->start_group);
    if (w->post_group)
        rmpi_group_release(w->post_group);
    if (w->shm)
        munmap(w->shm, w->shm_len);
    free(w->lsync);
    free(w->rtab);
    free(w->rtab_hit);
    free(w->own_mem);
    w->magic = 0;
    rmpi_addrset_del(&rmpi_win_live, w);
    free(w);
}

int rmpi_rma_win_create(rmpi_comm_t *comm, int flavor, void **base, size_t size, MPI_Aint disp_unit, rmpi_win_t **out)
{
    if (flavor == MPI_WIN_FLAVOR_SHARED && !all_on_my_node(comm))
        return MPI_ERR_RMA_SHARED;
    rmpi_comm_t *dup;
    int rc = rmpi_comm_dup(comm, &dup);
    if (rc)
        return rc;
    rmpi_win_t *w = win_new(dup, flavor);
    w->bytes = size;
    w->disp_unit = disp_unit;
    w->peers[w->rank] = (rmpi_win_peer_t){0, size, disp_unit};
    /* Win_create: each rank also says whether its memory lies in an MPI_Alloc_mem file
     * the node's ranks may map (mem.c), in the same exchange */
    struct create_peer {
        rmpi_win_peer_t p;
        rma_share_t sh;
    } *cp = NULL;
    rma_share_t *sh = NULL;
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        cp = rmpi_xmalloc((size_t)w->size * sizeof *cp);
        cp[w->rank].p = w->peers[w->rank];
        if (!rmpi_knobs.RMA_DIRECT || !size || !rma_mem_share(*base, size, &cp[w->rank].sh))
            cp[w->rank].sh = (rma_share_t){.fd = -1};
        rma_ring_allgather(w, cp, sizeof cp[0]);
        sh = rmpi_xmalloc((size_t)w->size * sizeof *sh);
        for (int i = 0; i < w->size; i++) {
            w->peers[i] = cp[i].p;
            sh[i] = cp[i].sh;
        }
        free(cp);
    } else
        rma_ring_allgather(w, w->peers, sizeof w->peers[0]);
    rc = 0;
    if (flavor == MPI_WIN_FLAVOR_SHARED)
        rc = rma_node_segment(w, 1, rmpi_knobs.RMA_DIRECT);
    else if (flavor == MPI_WIN_FLAVOR_ALLOCATE && rmpi_knobs.RMA_DIRECT)
        rc = rma_node_segment(w, 0, 1) ? -1 : 0; /* every rank failed to map: private memory */
    else if ((flavor == MPI_WIN_FLAVOR_CREATE || flavor == MPI_WIN_FLAVOR_DYNAMIC) && rmpi_knobs.RMA_DIRECT)
        (void)rma_node_locks(w); /* when no segment could be mapped, the lock manager's messages */
    if (flavor == MPI_WIN_FLAVOR_CREATE) {
        w->base = *base;
        rma_node_map(w, sh);
        free(sh);
    } else if (flavor == MPI_WIN_FLAVOR_ALLOCATE && !w->shm && posix_memalign(&w->own_mem, 64, size ? size : 1))
        rc = MPI_ERR_NO_MEM; /* on this rank only: the others have their windows */
    else if (flavor == MPI_WIN_FLAVOR_ALLOCATE && !w->shm)
        w->base = w->own_mem;
    if (rc > 0) {
        rmpi_comm_release(dup);
        win_delete(w);
        return rc;
    }
    w->peers[w->rank].base = (uint64_t)(uintptr_t)w->base; /* only ever read here */
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED)
        *base = w->base;
    rma_rdma_setup(w);
    rma_serve_add(w);
    *out = w;
    return 0;
}

int rmpi_rma_win_free(rmpi_win_t *w)
{
    /* What this process issued must be done before the barrier: after it, no message for
     * this window is in flight anywhere. */
    for (int t = 0; t < w->size; t++)
        if (w->quiet[t]) /* an UNLOCK without an answer may still be on its way */
            w->dirty[t] = 1;
    int err = rma_flush_ranks(w, NULL, w->size);
    rma_wait_gets(w, -1);
    rmpi_coll_barrier(w->comm);
    unsigned idle = 0;
    while (w->nanswering) /* gets answered from our memory (target.c): read before it goes */
        rmpi_core_wait_step(&idle);
    rma_serve_remove(w);
    rma_rdma_free(w);
    rmpi_comm_release(w->comm);
    win_delete(w);
    return err;
}

int rmpi_rma_attach(rmpi_win_t *w, void *base, size_t len)
{
    /* the list is the one the window's range-list registrations name (rdma.c): from here
     * on, other nodes' RDMA may reach the region, and after Win_detach no longer */
    if (rmpi_net_ranges_add(&w->regions, (uint64_t)(uintptr_t)base, len))
        return MPI_ERR_RMA_ATTACH;
    rma_rdma_attached(w, base, len); /* native registrations: one per region (rdma.c) */
    rma_rtab_publish(w);
    return 0;
}

int rmpi_rma_detach(rmpi_win_t *w, const void *base)
{
    if (rmpi_net_ranges_remove(&w->regions, (uint64_t)(uintptr_t)base))
        return MPI_ERR_RMA_ATTACH;
    rma_rdma_detached(w, base);
    rma_rtab_publish(w);
    return 0;
}

void rmpi_rma_shared_query(rmpi_win_t *w, int rank, MPI_Aint *size, MPI_Aint *disp_unit, void **base)
{
    if (rank == MPI_PROC_NULL) {
        rank = 0;
        for (int i = 0; i < w->size; i++)
            if (w->peers[i].size) {
                rank = i;
                break;
            }
    }
    *size = 0;
    *disp_unit = w->peers[rank].disp_unit;
    *base = NULL;
    if (w->flavor == MPI_WIN_FLAVOR_SHARED) {
        size_t off = 0;
        for (int i = 0; i < rank; i++)
            off += w->peers[i].size;
        *size = (MPI_Aint)w->peers[rank].size;
        /* A rank that gave no memory has no segment address (MPI-4.1 12.2.3: size 0, NULL). */
        *base = *size ? w->shm_data + off : NULL;
    } else if (rank == w->rank) {
        *size = (MPI_Aint)w->bytes;
        *base = w->base;
    } else if (rmpi_rma_direct(w, rank) && w->dptr[rank] && w->peers[rank].size) {
        /* another rank's memory mapped here (Win_allocate's node segment, Win_create over
         * MPI_Alloc_mem's files): loads and stores reach it, as MPI-4.1 12.2.3 lets
         * Win_shared_query say for windows of every flavor; elsewhere 0 and NULL */
        *size = (MPI_Aint)w->peers[rank].size;
        *base = w->dptr[rank];
    }
}
