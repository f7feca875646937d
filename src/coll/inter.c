/* Collectives on intercommunicators (MPI-4.1 semantics; coll.h). A rooted call names the
 * root with MPI_ROOT at the root, MPI_PROC_NULL at the rest of the root's group and the
 * root's rank in the remote group across. Transfers across travel on the
 * intercommunicator's collective context, those inside one group on its local
 * intracommunicator's (rmpi_nbc_local), all with the schedule's one tag. Each group's
 * leader is its local rank 0. As in MPICH: a group that gives data reduces it at its
 * leader, the leaders swap, a group that takes data gets it by broadcast from its leader;
 * the data-movement collectives exchange with every remote rank directly. */
#include "coll_impl.h"
#include "gather_sched.h"

/* The call's schedule (every member takes one); *bytes is what this rank moves, 0 when
 * it takes no part (MPI_PROC_NULL of a rooted call, where dt may be NULL). */
static rmpi_nbc_t *sched_new(rmpi_comm_t *c, int part, size_t count, const rmpi_dtype_t *dt, size_t *bytes)
{
    *bytes = part ? count * dt->size : 0;
    return rmpi_nbc_new(c);
}

static coll_red_t red_of(const rmpi_dtype_t *dt, MPI_Op op)
{
    return (coll_red_t){op, dt->handle, dt->size, rmpi_coll_op_commutative(op)};
}

/* The local group's reduction of count packed elements (in) at the leader: the leader's
 * buffer holding it, NULL elsewhere. Binomial from rank 0 keeps rank order. */
static void *reduce_to_leader(rmpi_nbc_t *s, rmpi_comm_t *c, const coll_red_t *r, const void *in, size_t count)
{
    void *acc = c->rank == 0 ? rmpi_nbc_tmp(s, count * r->esize + 1) : NULL;
    coll_grp_t g = coll_grp_all(c);
    rmpi_nbc_local(s, 1);
    coll_reduce_binomial(s, &g, r, in, acc, count, 0);
    rmpi_nbc_local(s, 0);
    return acc;
}

static void bcast_from_leader(rmpi_nbc_t *s, rmpi_comm_t *c, void *buf, size_t bytes)
{
    coll_grp_t g = coll_grp_all(c);
    rmpi_nbc_local(s, 1);
    coll_bcast_binomial(s, &g, buf, bytes, 0);
    rmpi_nbc_local(s, 0);
}

/* The leaders swap n bytes (mine out, theirs in). */
static void leaders_swap(rmpi_nbc_t *s, rmpi_comm_t *c, const void *mine, void *theirs, size_t n)
{
    if (c->rank != 0)
        return;
    rmpi_nbc_recv(s, theirs, n, 0);
    rmpi_nbc_send(s, mine, n, 0);
    rmpi_nbc_round(s);
}

/* Local barrier, the leaders swap, each leader releases its group: nobody leaves before
 * every member of both groups has entered. */
rmpi_nbc_t *coll_inter_barrier(rmpi_comm_t *c)
{
    rmpi_nbc_t *s = rmpi_nbc_new(c);
    coll_grp_t g = coll_grp_all(c);
    rmpi_nbc_local(s, 1);
    coll_barrier_dissemination(s, &g);
    rmpi_nbc_local(s, 0);
    leaders_swap(s, c, NULL, NULL, 0);
    bcast_from_leader(s, c, NULL, 0);
    return s;
}

rmpi_nbc_t *coll_inter_bcast(rmpi_comm_t *c, void *buf, size_t count, rmpi_dtype_t *dt, int root)
{
    size_t bytes;
    rmpi_nbc_t *s = sched_new(c, root != MPI_PROC_NULL, count, dt, &bytes);
    if (!bytes)
        return s;
    if (root == MPI_ROOT) {
        rmpi_nbc_send(s, coll_input(s, buf, NULL, NULL, count, dt), bytes, 0);
        return s;
    }
    void *p = coll_output(s, buf, count, dt);
    if (c->rank == 0) {
        rmpi_nbc_recv(s, p, bytes, root);
        rmpi_nbc_round(s);
    }
    bcast_from_leader(s, c, p, bytes);
    if (!rmpi_dtype_is_contig(dt, count))
        rmpi_nbc_unpack(s, p, buf, count, dt);
    return s;
}

rmpi_nbc_t *coll_inter_reduce(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt, MPI_Op op,
                              int root)
{
    size_t bytes;
    rmpi_nbc_t *s = sched_new(c, root != MPI_PROC_NULL, count, dt, &bytes);
    if (!bytes)
        return s;
    if (root == MPI_ROOT) {
        void *out = coll_output(s, rbuf, count, dt);
        rmpi_nbc_recv(s, out, bytes, 0);
        rmpi_nbc_round(s);
        if (!rmpi_dtype_is_contig(dt, count))
            rmpi_nbc_unpack(s, out, rbuf, count, dt);
        return s;
    }
    coll_red_t r = red_of(dt, op);
    void *acc = reduce_to_leader(s, c, &r, coll_input(s, sbuf, NULL, NULL, count, dt), count);
    if (acc)
        rmpi_nbc_send(s, acc, bytes, root);
    return s;
}

/* Each group reduces at its leader, the leaders swap, each leader broadcasts the other
 * group's result. */
rmpi_nbc_t *coll_inter_allreduce(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt,
                                 MPI_Op op)
{
    size_t bytes;
    rmpi_nbc_t *s = sched_new(c, 1, count, dt, &bytes);
    if (!bytes)
        return s;
    coll_red_t r = red_of(dt, op);
    void *out = coll_output(s, rbuf, count, dt);
    void *acc = reduce_to_leader(s, c, &r, coll_input(s, sbuf, NULL, NULL, count, dt), count);
    leaders_swap(s, c, acc, out, bytes);
    bcast_from_leader(s, c, out, bytes);
    if (!rmpi_dtype_is_contig(dt, count))
        rmpi_nbc_unpack(s, out, rbuf, count, dt);
    return s;
}

/* As Allreduce, but each leader scatters the other group's result by counts (local group). */
rmpi_nbc_t *coll_inter_reduce_scatter(rmpi_comm_t *c, const void *sbuf, void *rbuf, const size_t *counts,
                                      rmpi_dtype_t *dt, MPI_Op op)
{
    rmpi_nbc_t *s = rmpi_nbc_new(c);
    size_t total = 0, esize = dt->size, mine = counts[c->rank];
    for (int i = 0; i < c->size; i++)
        total += counts[i];
    if (total * esize == 0)
        return s;
    coll_red_t r = red_of(dt, op);
    void *out = coll_output(s, rbuf, mine, dt);
    void *acc = reduce_to_leader(s, c, &r, coll_input(s, sbuf, NULL, NULL, total, dt), total);
    char *theirs = acc ? rmpi_nbc_tmp(s, total * esize) : NULL;
    leaders_swap(s, c, acc, theirs, total * esize);
    rmpi_nbc_local(s, 1);
    if (theirs) {
        rmpi_nbc_copy(s, theirs, out, mine * esize);
        size_t off = mine * esize;
        for (int i = 1; i < c->size; off += counts[i++] * esize)
            rmpi_nbc_send(s, theirs + off, counts[i] * esize, i);
    } else {
        rmpi_nbc_recv(s, out, mine * esize, 0);
    }
    rmpi_nbc_local(s, 0);
    rmpi_nbc_round(s);
    if (!rmpi_dtype_is_contig(dt, mine))
        rmpi_nbc_unpack(s, out, rbuf, mine, dt);
    return s;
}

rmpi_nbc_t *coll_inter_rooted(rmpi_comm_t *c, const rmpi_coll_blk_t *one, const rmpi_coll_blk_t *many, int root,
                              int scatter)
{
    gx_t g;
    gx_init(&g, c);
    if (root == MPI_ROOT) {
        for (int i = 0; i < c->rsize; i++) {
            if (scatter)
                gx_send(&g, &many[i], i);
            else
                gx_recv(&g, &many[i], i);
        }
    } else if (root != MPI_PROC_NULL) {
        if (scatter)
            gx_recv(&g, one, root);
        else
            gx_send(&g, one, root);
    }
    return gx_end(&g);
}

rmpi_nbc_t *coll_inter_exchange(rmpi_comm_t *c, const rmpi_coll_blk_t *send, int one, const rmpi_coll_blk_t *recv)
{
    gx_t g;
    gx_init(&g, c);
    for (int i = 0; i < c->rsize; i++) {
        gx_recv(&g, &recv[i], i);
        gx_send(&g, &send[one ? 0 : i], i);
    }
    return gx_end(&g);
}
