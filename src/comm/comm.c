#include "comm_impl.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

rmpi_comm_t rmpi_comm_world, rmpi_comm_self;
rmpi_addrset_t rmpi_comm_live = RMPI_ADDRSET_INIT;
rmpi_addrset_t rmpi_comm_pending = RMPI_ADDRSET_INIT;
static int self_world_rank;
static uint32_t next_ctx = RMPI_CTX_FIRST_FREE;

int rmpi_comm_init(int rank, int size)
{
    rmpi_comm_world = (rmpi_comm_t){.magic = RMPI_COMM_MAGIC,
                                    .ctx = 0,
                                    .rank = rank,
                                    .size = size,
                                    .rsize = size,
                                    .refcount = 1,
                                    .predefined = 1,
                                    .handle = MPI_COMM_WORLD,
                                    .errh = MPI_ERRORS_ARE_FATAL,
                                    .name = "MPI_COMM_WORLD"};
    self_world_rank = rank;
    rmpi_comm_self = (rmpi_comm_t){.magic = RMPI_COMM_MAGIC,
                                   .ctx = 2,
                                   .rank = 0,
                                   .size = 1,
                                   .rsize = 1,
                                   .world = &self_world_rank,
                                   .lworld = &self_world_rank,
                                   .refcount = 1,
                                   .predefined = 1,
                                   .handle = MPI_COMM_SELF,
                                   .errh = MPI_ERRORS_ARE_FATAL,
                                   .name = "MPI_COMM_SELF"};
    return 0;
}

void rmpi_comm_finalize(void)
{
    for (rmpi_comm_t *c = &rmpi_comm_world; c; c = c == &rmpi_comm_world ? &rmpi_comm_self : NULL) {
        if (c->topo)
            rmpi_comm_topo_release(c->topo);
        rmpi_info_free(c->info);
        if (c->coll_shm)
            munmap(c->coll_shm, c->coll_shm_len);
        free(c->coll_site_layout);
        free(c->coll_shm_scratch);
        c->coll_shm_scratch = NULL, c->coll_shm_scratch_len = 0;
        c->topo = NULL, c->info = NULL, c->coll_shm = NULL, c->coll_shm_state = 0, c->coll_shm_cma = 0,
        c->coll_shm_over = 0, c->coll_shm_step = 0, c->coll_shm_free = 0, c->coll_shm_deep = 0, c->coll_shm_own = 0,
        c->coll_shm_pair = 0, c->coll_shm_queue = NULL, c->coll_site_layout = NULL, c->coll_shm_rt_at = 0,
        c->coll_shm_rt_step = 0, c->coll_shm_rt_ns = 0, c->coll_shm_rt_n = 0, c->coll_shm_slow = 0, c->coll_shm_cw = 0,
        c->coll_shm_cr = 0, c->coll_shm_lw = 0, c->coll_shm_lr = 0;
    }
    next_ctx = RMPI_CTX_FIRST_FREE;
}

static int coll_xfer(rmpi_comm_t *c, const void *sbuf, size_t slen, int dest, void *rbuf, size_t rlen, int src, int tag)
{
    rmpi_req_t *s = NULL, *r = NULL;
    if (rbuf) {
        r = rmpi_req_alloc(RMPI_REQ_RECV);
        r->buf = rbuf, r->len = rlen, r->rank = src, r->ctx = c->ctx + 1, r->tag = tag;
        rmpi_core_irecv(r);
    }
    if (sbuf) {
        s = rmpi_req_alloc(RMPI_REQ_SEND);
        s->buf = (void *)sbuf, s->len = slen, s->rank = rmpi_comm_world_rank(c, dest), s->ctx = c->ctx + 1;
        s->tag = tag, s->src = c->rank;
        rmpi_core_isend(s);
        rmpi_core_wait(s);
        rmpi_req_release(s);
    }
    int err = 0;
    if (r) {
        rmpi_core_wait(r);
        err = r->st_err;
        rmpi_req_release(r);
    }
    return err;
}

int rmpi_comm_coll_send(rmpi_comm_t *c, const void *buf, size_t len, int dest, int tag)
{
    return coll_xfer(c, buf ? buf : "", len, dest, NULL, 0, 0, tag);
}

int rmpi_comm_coll_recv(rmpi_comm_t *c, void *buf, size_t len, int src, int tag)
{
    char dummy;
    return coll_xfer(c, NULL, 0, 0, buf ? buf : &dummy, len, src, tag);
}

int rmpi_comm_coll_sendrecv(rmpi_comm_t *c, const void *sbuf, size_t slen, int dest, void *rbuf, size_t rlen, int src,
                            int tag)
{
    return coll_xfer(c, sbuf, slen, dest, rbuf, rlen, src, tag);
}

/* ---- member sets: creation is not hot, so gather to the first member and send back ---- */

static int mset_rank(const rmpi_mset_t *m, int i) { return m->ranks ? m->ranks[i] : i; }

void rmpi_mset_allgather(const rmpi_mset_t *m, const void *mine, size_t len, void *all)
{
    memcpy((char *)all + (size_t)m->me * len, mine, len);
    if (m->n == 1)
        return;
    if (m->me == 0) {
        for (int i = 1; i < m->n; i++)
            rmpi_comm_coll_recv(m->c, (char *)all + (size_t)i * len, len, mset_rank(m, i), m->tag);
        for (int i = 1; i < m->n; i++)
            rmpi_comm_coll_send(m->c, all, (size_t)m->n * len, mset_rank(m, i), m->tag);
    } else {
        rmpi_comm_coll_send(m->c, mine, len, mset_rank(m, 0), m->tag);
        rmpi_comm_coll_recv(m->c, all, (size_t)m->n * len, mset_rank(m, 0), m->tag);
    }
}

void rmpi_mset_bcast(const rmpi_mset_t *m, void *buf, size_t len, int root)
{
    int n = m->n, rel = (m->me - root + n) % n, mask = 1;
    while (mask < n) {
        if (rel & mask) {
            rmpi_comm_coll_recv(m->c, buf, len, mset_rank(m, (rel - mask + root) % n), m->tag);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n)
            rmpi_comm_coll_send(m->c, buf, len, mset_rank(m, (rel + mask + root) % n), m->tag);
}

int rmpi_comm_bcast_small(rmpi_comm_t *c, void *buf, size_t len, int root)
{
    rmpi_mset_t m = rmpi_mset_all(c, 0x7ff1);
    rmpi_mset_bcast(&m, buf, len, root);
    return 0;
}

uint32_t rmpi_mset_max_ctx(const rmpi_mset_t *m)
{
    uint32_t *all = rmpi_xmalloc((size_t)m->n * sizeof *all), v = next_ctx;
    rmpi_mset_allgather(m, &v, sizeof v, all);
    for (int i = 0; i < m->n; i++)
        v = all[i] > v ? all[i] : v;
    free(all);
    return v;
}

void rmpi_comm_reserve_ctx(uint32_t ctx, unsigned span)
{
    if (ctx > RMPI_CTX_MAX - span)
        rmpi_fatal("no context id is left for a new communicator (RMPI_CTX_MAX, %u, reached): free communicators "
                   "instead of creating new ones.",
                   RMPI_CTX_MAX);
    if (ctx + span > next_ctx)
        next_ctx = ctx + span;
}

uint32_t rmpi_comm_next_ctx(void) { return next_ctx; }

int rmpi_comm_ctx_claim(uint32_t ctx, unsigned span)
{
    if (ctx < next_ctx) /* something took ids from here up since the candidate was made */
        return 0;
    rmpi_comm_reserve_ctx(ctx, span);
    return 1;
}

/* ---- objects ---- */

static int *copy_ints(const int *a, int n)
{
    int *p = rmpi_xmalloc((size_t)(n > 0 ? n : 1) * sizeof *p);
    if (a)
        memcpy(p, a, (size_t)n * sizeof *p);
    else
        for (int i = 0; i < n; i++)
            p[i] = i;
    return p;
}

rmpi_comm_t *rmpi_comm_alloc(uint32_t ctx, int rank, int n, const int *world)
{
    rmpi_comm_t *c = rmpi_xcalloc(1, sizeof *c);
    c->magic = RMPI_COMM_MAGIC;
    c->ctx = ctx;
    c->rank = rank;
    c->size = c->rsize = n;
    c->world = c->lworld = copy_ints(world, n);
    c->refcount = 1;
    c->handle = (MPI_Comm)c;
    rmpi_addrset_add(&rmpi_comm_live, c);
    c->errh = MPI_ERRORS_ARE_FATAL;
    return c;
}

rmpi_comm_t *rmpi_comm_alloc_inter(uint32_t ctx, int rank, int lsize, const int *lworld, int rsize, const int *rworld)
{
    rmpi_comm_t *c = rmpi_comm_alloc(ctx, rank, lsize, lworld);
    c->inter = 1;
    c->rsize = rsize;
    c->world = copy_ints(rworld, rsize);
    c->local = rmpi_comm_alloc(ctx + 2, rank, lsize, lworld);
    c->local->handle = MPI_COMM_NULL; /* internal: never handed to the user */
    return c;
}

/* A copy of parent's members (and topology) on context ctx. */
static rmpi_comm_t *dup_object(rmpi_comm_t *parent, uint32_t ctx)
{
    rmpi_comm_t *c = rmpi_comm_alloc(ctx, parent->rank, parent->size, parent->world);
    if (!parent->world) { /* a copy of WORLD keeps the identity map */
        free(c->world);
        c->world = c->lworld = NULL;
    }
    if (parent->topo) {
        c->topo = parent->topo;
        c->topo->refcount++;
    }
    return c;
}

int rmpi_comm_dup(rmpi_comm_t *parent, rmpi_comm_t **out)
{
    rmpi_comm_t *c;
    if (parent->inter) {
        int r_unused;
        uint32_t ctx = rmpi_comm_inter_agree(parent, 0, NULL, 0, &r_unused, NULL, NULL);
        c = rmpi_comm_alloc_inter(ctx, parent->rank, parent->size, parent->lworld, parent->rsize, parent->world);
        if (parent->topo) {
            c->topo = parent->topo;
            c->topo->refcount++;
        }
    } else {
        rmpi_mset_t m = rmpi_mset_all(parent, 0x7ff0);
        c = dup_object(parent, rmpi_mset_agree_ctx(&m, 2));
    }
    *out = c;
    return 0;
}

rmpi_comm_t *rmpi_comm_idup_object(rmpi_comm_t *parent)
{
    if (!parent->inter)
        return dup_object(parent, 0);
    rmpi_comm_t *c = rmpi_comm_alloc_inter(0, parent->rank, parent->size, parent->lworld, parent->rsize, parent->world);
    if (parent->topo) {
        c->topo = parent->topo;
        c->topo->refcount++;
    }
    return c;
}

static void idup_done(rmpi_agree_t *a, uint32_t ctx, void *arg)
{
    (void)a;
    rmpi_comm_t *n = arg;
    rmpi_req_t *req = n ? n->pending : NULL;
    if (!n)
        return;
    n->ctx = ctx;
    if (n->inter)
        n->local->ctx = ctx + 2;
    n->pending = NULL;
    rmpi_addrset_del(&rmpi_comm_pending, n);
    rmpi_addrset_add(&rmpi_comm_live, n);
    rmpi_req_complete(req);
}

void rmpi_comm_idup_start(rmpi_comm_t *parent, rmpi_comm_t *n, rmpi_req_t *req)
{
    /* its own tag per idup of parent: the members start them in the same order, and no
     * other traffic of the collective context uses tags from RMPI_COMM_TAG_IDUP up */
    int tag = RMPI_COMM_TAG_IDUP | (int)(parent->idup_seq++ & (RMPI_COMM_TAG_IDUP - 1));
    if (n) {
        n->pending = req;
        rmpi_addrset_del(&rmpi_comm_live, n);    /* not a communicator before completion */
        rmpi_addrset_add(&rmpi_comm_pending, n); /* but its error handler may be set */
    }
    /* an intercommunicator: its local group agrees on `local`'s collective context, the
     * leaders swap on the intercommunicator's, ids ctx..ctx+3 (both pairs) */
    rmpi_mset_t m = rmpi_mset_all(parent->inter ? parent->local : parent, tag);
    rmpi_agree_start(&m, parent->inter ? parent : NULL, parent->inter ? 4 : 2, idup_done, n);
}

int rmpi_keyrank_cmp(const void *a, const void *b)
{
    const rmpi_keyrank_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank - y->rank;
}

typedef struct split_ent {
    rmpi_keyrank_t kr; /* first: sorted with rmpi_keyrank_cmp */
    int color;
} split_ent_t;

int rmpi_comm_split(rmpi_comm_t *parent, int color, int key, rmpi_comm_t **out)
{
    /* everyone learns every (color, key) and next free context in one exchange */
    int n = parent->size;
    split_ent_t *all = rmpi_xmalloc((size_t)n * sizeof *all);
    split_ent_t me = {{key, parent->rank}, color};
    rmpi_mset_t m = rmpi_mset_all(parent, 0x7ff2);
    rmpi_mset_allgather(&m, &me, sizeof me, all);
    /* one context for all the new communicators: they are disjoint */
    m.tag = 0x7ff3;
    uint32_t ctx = rmpi_mset_agree_ctx(&m, 2);
    *out = NULL;
    if (color == MPI_UNDEFINED) {
        free(all);
        return 0;
    }
    int k = 0;
    for (int r = 0; r < n; r++)
        if (all[r].color == color)
            all[k++] = all[r];
    qsort(all, (size_t)k, sizeof *all, rmpi_keyrank_cmp);
    int *world = rmpi_xmalloc((size_t)k * sizeof *world), myrank = 0;
    for (int i = 0; i < k; i++) {
        world[i] = rmpi_comm_world_rank(parent, all[i].kr.rank);
        if (all[i].kr.rank == parent->rank)
            myrank = i;
    }
    *out = rmpi_comm_alloc(ctx, myrank, k, world);
    free(world);
    free(all);
    return 0;
}

int rmpi_comm_create_group(rmpi_comm_t *parent, const int *world, int n, int tag, rmpi_comm_t **out)
{
    int *ranks = rmpi_xmalloc((size_t)n * sizeof *ranks), me = -1;
    for (int i = 0; i < n; i++) {
        ranks[i] = -1;
        for (int r = 0; r < parent->size && ranks[i] < 0; r++)
            if (rmpi_comm_local_world_rank(parent, r) == world[i])
                ranks[i] = r;
        if (ranks[i] == parent->rank)
            me = i;
        if (ranks[i] < 0) {
            free(ranks);
            return MPI_ERR_GROUP;
        }
    }
    if (me < 0) {
        free(ranks);
        return MPI_ERR_GROUP;
    }
    rmpi_mset_t m = {parent, n, me, ranks, RMPI_COMM_TAG_USER | (tag & (RMPI_COMM_TAG_USER - 1))};
    uint32_t ctx = rmpi_mset_agree_ctx(&m, 2);
    free(ranks);
    *out = rmpi_comm_alloc(ctx, me, n, world);
    return 0;
}

void rmpi_comm_release(rmpi_comm_t *c)
{
    if (c->predefined || --c->refcount > 0)
        return;
    c->magic = 0;
    rmpi_addrset_del(&rmpi_comm_live, c);
    if (c->inter) {
        free(c->lworld);
        rmpi_comm_release(c->local);
    }
    if (c->topo)
        rmpi_comm_topo_release(c->topo);
    if (c->coll_shm)
        munmap(c->coll_shm, c->coll_shm_len);
    free(c->coll_site_layout);
    free(c->coll_shm_scratch);
    rmpi_info_free(c->info);
    free(c->world);
    free(c);
}

/* IDENT/SIMILAR/UNEQUAL of two rank maps (NULL = identity). */
static int map_compare(const int *a, int na, const int *b, int nb)
{
    if (na != nb)
        return MPI_UNEQUAL;
    int same = 1;
    for (int r = 0; r < na && same; r++)
        same = (a ? a[r] : r) == (b ? b[r] : r);
    if (same)
        return MPI_IDENT;
    for (int r = 0; r < na; r++) {
        int found = 0;
        for (int q = 0; q < nb && !found; q++)
            found = (a ? a[r] : r) == (b ? b[q] : q);
        if (!found)
            return MPI_UNEQUAL;
    }
    return MPI_SIMILAR;
}

int rmpi_comm_compare(const rmpi_comm_t *a, const rmpi_comm_t *b)
{
    if (a == b)
        return MPI_IDENT;
    if (a->inter != b->inter)
        return MPI_UNEQUAL;
    int l = map_compare(a->lworld, a->size, b->lworld, b->size);
    int r = a->inter ? map_compare(a->world, a->rsize, b->world, b->rsize) : MPI_IDENT;
    int worst = l > r ? l : r; /* IDENT < SIMILAR < UNEQUAL in value (201, 203, 204) */
    return worst == MPI_IDENT ? MPI_CONGRUENT : worst;
}
