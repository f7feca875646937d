#include "comm.h"

#include <stdlib.h>
#include <string.h>

rmpi_comm_t rmpi_comm_world, rmpi_comm_self;
static int self_world_rank;
static uint32_t next_ctx = RMPI_CTX_FIRST_FREE;

int rmpi_comm_init(int rank, int size)
{
    rmpi_comm_world = (rmpi_comm_t){RMPI_COMM_MAGIC, 0, rank, size, NULL, 1, 1, MPI_COMM_WORLD,
                                    MPI_ERRORS_ARE_FATAL, "MPI_COMM_WORLD"};
    self_world_rank = rank;
    rmpi_comm_self = (rmpi_comm_t){RMPI_COMM_MAGIC, 2, 0, 1, &self_world_rank, 1, 1, MPI_COMM_SELF,
                                   MPI_ERRORS_ARE_FATAL, "MPI_COMM_SELF"};
    return 0;
}

void rmpi_comm_finalize(void) { next_ctx = RMPI_CTX_FIRST_FREE; }

static int coll_xfer(rmpi_comm_t *c, const void *sbuf, size_t slen, int dest, void *rbuf, size_t rlen, int src,
                     int tag)
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

int rmpi_comm_coll_sendrecv(rmpi_comm_t *c, const void *sbuf, size_t slen, int dest, void *rbuf, size_t rlen,
                            int src, int tag)
{
    return coll_xfer(c, sbuf, slen, dest, rbuf, rlen, src, tag);
}

/* Agree on max(next_ctx) over the members: recursive doubling when the size is a power of
 * two, else gather to rank 0 and broadcast back (communicator creation is not hot). */
static uint32_t agree_ctx(rmpi_comm_t *parent)
{
    uint32_t v = next_ctx;
    const int tag = 0x7ff0;
    int n = parent->size, me = parent->rank;
    if (n == 1)
        return v;
    if (me == 0) {
        for (int r = 1; r < n; r++) {
            uint32_t x;
            rmpi_comm_coll_recv(parent, &x, sizeof x, r, tag);
            v = x > v ? x : v;
        }
        for (int r = 1; r < n; r++)
            rmpi_comm_coll_send(parent, &v, sizeof v, r, tag + 1);
    } else {
        rmpi_comm_coll_send(parent, &v, sizeof v, 0, tag);
        rmpi_comm_coll_recv(parent, &v, sizeof v, 0, tag + 1);
    }
    return v;
}

int rmpi_comm_dup(rmpi_comm_t *parent, rmpi_comm_t **out)
{
    uint32_t ctx = agree_ctx(parent);
    next_ctx = ctx + 2;
    rmpi_comm_t *c = rmpi_xcalloc(1, sizeof *c);
    *c = *parent;
    c->magic = RMPI_COMM_MAGIC;
    c->ctx = ctx;
    c->refcount = 1;
    c->predefined = 0;
    c->handle = (MPI_Comm)c;
    c->name[0] = 0;
    c->coll_seq = 0;
    if (parent->world) {
        c->world = rmpi_xmalloc((size_t)c->size * sizeof *c->world);
        memcpy(c->world, parent->world, (size_t)c->size * sizeof *c->world);
    }
    *out = c;
    return 0;
}

typedef struct split_ent {
    int color, key, rank;
} split_ent_t;

static int split_cmp(const void *a, const void *b)
{
    const split_ent_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank - y->rank;
}

int rmpi_comm_split(rmpi_comm_t *parent, int color, int key, rmpi_comm_t **out)
{
    /* everyone learns every (color, key): gather to rank 0, broadcast back */
    int n = parent->size;
    const int tag = 0x7ff2;
    split_ent_t *all = rmpi_xmalloc((size_t)n * sizeof *all);
    split_ent_t me = {color, key, parent->rank};
    if (parent->rank == 0) {
        all[0] = me;
        for (int r = 1; r < n; r++)
            rmpi_comm_coll_recv(parent, &all[r], sizeof *all, r, tag);
        for (int r = 1; r < n; r++)
            rmpi_comm_coll_send(parent, all, (size_t)n * sizeof *all, r, tag + 1);
    } else {
        rmpi_comm_coll_send(parent, &me, sizeof me, 0, tag);
        rmpi_comm_coll_recv(parent, all, (size_t)n * sizeof *all, 0, tag + 1);
    }
    /* one context for all the new communicators: they are disjoint */
    uint32_t ctx = agree_ctx(parent);
    next_ctx = ctx + 2;
    *out = NULL;
    if (color == MPI_UNDEFINED) {
        free(all);
        return 0;
    }
    int m = 0;
    for (int r = 0; r < n; r++)
        if (all[r].color == color)
            all[m++] = all[r];
    qsort(all, (size_t)m, sizeof *all, split_cmp);
    rmpi_comm_t *c = rmpi_xcalloc(1, sizeof *c);
    c->magic = RMPI_COMM_MAGIC;
    c->ctx = ctx;
    c->size = m;
    c->refcount = 1;
    c->handle = (MPI_Comm)c;
    c->errh = parent->errh;
    c->world = rmpi_xmalloc((size_t)m * sizeof *c->world);
    for (int i = 0; i < m; i++) {
        c->world[i] = rmpi_comm_world_rank(parent, all[i].rank);
        if (all[i].rank == parent->rank)
            c->rank = i;
    }
    free(all);
    *out = c;
    return 0;
}

void rmpi_comm_release(rmpi_comm_t *c)
{
    if (c->predefined || --c->refcount > 0)
        return;
    c->magic = 0;
    free(c->world);
    free(c);
}

int rmpi_comm_compare(const rmpi_comm_t *a, const rmpi_comm_t *b)
{
    if (a == b)
        return MPI_IDENT;
    if (a->size != b->size)
        return MPI_UNEQUAL;
    int same_order = 1;
    for (int r = 0; r < a->size; r++)
        if (rmpi_comm_world_rank(a, r) != rmpi_comm_world_rank(b, r))
            same_order = 0;
    if (same_order)
        return MPI_CONGRUENT;
    for (int r = 0; r < a->size; r++) {
        int found = 0;
        for (int q = 0; q < b->size && !found; q++)
            found = rmpi_comm_world_rank(a, r) == rmpi_comm_world_rank(b, q);
        if (!found)
            return MPI_UNEQUAL;
    }
    return MPI_SIMILAR;
}

int rmpi_comm_neighbors(rmpi_comm_t *c, int *indegree, const int **sources, int *outdegree, const int **destinations)
{
    /* temporary: no communicator has a topology until topologies land */
    *indegree = *outdegree = 0;
    *sources = *destinations = NULL;
    return MPI_ERR_TOPOLOGY;
}
