/* Accumulates on the provider's atomics (net.h atomic, libfabric's FI_ATOMIC): Accumulate,
 * Get_accumulate, Fetch_and_op and Compare_and_swap of a predefined type on a contiguous
 * target range go as fi_atomic, fi_fetch_atomic or fi_compare_atomic on the window's
 * registration, the keys and addresses rdma.c uses for fi_write (Huang et al., 'Design
 * Alternatives and Performance Trade-offs for Implementing MPI-2 over InfiniBand', sec.
 * 3.3: one-sided operations on the network's own operations, not through the target's
 * MPI progress), counted as RDMA operations so flush, unlock, fence and complete wait for
 * them. Everything else (pair types for MINLOC/MAXLOC, non-contiguous targets, pairs the
 * provider does not validate) stays an active message the target applies (target.c).
 *
 * Atomicity: tcp;ofi_rxm applies an atomic with plain loads and stores in the target
 * process, inside its fi_cq_read (manual data progress), so it is atomic against the
 * target's own applies (same thread) and other atomics, never against another process
 * touching the memory directly. A target gets native atomics only when no other rank of
 * the window is on its node (rma_atomic_setup): this node's origins would use C11 atomics
 * or the accumulate lock on the node segment (direct.c). Ordering (MPI's default
 * accumulate_ordering rar,raw,war,waw, one origin to one target): a native atomic is
 * issued only when nothing sent to that target as a message is unacknowledged
 * (rma_rdma_to), and a message waits for the RDMA and atomic ops before it
 * (rma_rdma_before_am); native atomics to one target are applied in posting order, except
 * that one posted after a fetching one may pass it (no FI_ORDER_ATOMIC_WAR), so it waits
 * for the fetching ones first. */
#include "rma_impl.h"

#include <errno.h>
#include <stdlib.h>

#include "../rt/rt.h"
#include "../vc/vc.h"

/* One MPI operation as provider atomics: its pieces (each at most atomic_max elements),
 * then its operand (Compare_and_swap: the new value, then the compare value) and, for a
 * result buffer that is not contiguous, the landed results. */
typedef struct at_rec {
    rmpi_win_t *w;
    int t, pending, fetch, err;
    rmpi_req_t *ureq;
    char *res; /* where results land */
    void *rbuf;
    MPI_Count rcount;
    rmpi_dtype_t *rdt; /* results unpacked into rbuf at completion; NULL: landed in place */
    size_t rbytes;
} at_rec_t;

typedef struct at_op {
    rmpi_net_op_t op; /* first: the completion's argument */
    at_rec_t *r;
} at_op_t;

static const unsigned char at_size[RMPI_NET_AT_TYPES] = {1, 1, 2, 2, 4, 4, 8, 8, 4, 8};

/* net.h's type of a predefined MPI type, -1 when it has none. */
static int at_type(MPI_Datatype t)
{
    if (t == MPI_FLOAT || t == MPI_REAL || t == MPI_REAL4)
        return RMPI_NET_AT_F32;
    if (t == MPI_DOUBLE || t == MPI_DOUBLE_PRECISION || t == MPI_REAL8)
        return RMPI_NET_AT_F64;
    int k = rma_int_kind(t); /* 1 signed, 2 unsigned or byte */
    if (!k)
        return -1;
    switch (rma_int_size[(uintptr_t)t & 0xff]) {
    case 1: return k == 1 ? RMPI_NET_AT_I8 : RMPI_NET_AT_U8;
    case 2: return k == 1 ? RMPI_NET_AT_I16 : RMPI_NET_AT_U16;
    case 4: return k == 1 ? RMPI_NET_AT_I32 : RMPI_NET_AT_U32;
    case 8: return k == 1 ? RMPI_NET_AT_I64 : RMPI_NET_AT_U64;
    default: return -1;
    }
}

/* net.h's operation of each predefined MPI operation, and whether MPI allows it on floating
 * point and on MPI_BYTE (no bit or logical operations on the first, only bit ones on the
 * second). */
static const struct {
    MPI_Op op;
    signed char aop, fp, byte;
} at_ops[] = {
    {MPI_SUM, RMPI_NET_AOP_SUM, 1, 0},         {MPI_PROD, RMPI_NET_AOP_PROD, 1, 0},
    {MPI_MIN, RMPI_NET_AOP_MIN, 1, 0},         {MPI_MAX, RMPI_NET_AOP_MAX, 1, 0},
    {MPI_LAND, RMPI_NET_AOP_LAND, 0, 0},       {MPI_LOR, RMPI_NET_AOP_LOR, 0, 0},
    {MPI_LXOR, RMPI_NET_AOP_LXOR, 0, 0},       {MPI_BAND, RMPI_NET_AOP_BAND, 0, 1},
    {MPI_BOR, RMPI_NET_AOP_BOR, 0, 1},         {MPI_BXOR, RMPI_NET_AOP_BXOR, 0, 1},
    {MPI_REPLACE, RMPI_NET_AOP_REPLACE, 1, 1}, {MPI_NO_OP, RMPI_NET_AOP_READ, 1, 1},
};

/* -1 when op has no atomic on type (t: the MPI type). */
static int at_op(MPI_Op op, int type, MPI_Datatype t)
{
    for (size_t i = 0; i < sizeof at_ops / sizeof at_ops[0]; i++)
        if (at_ops[i].op == op)
            return (type >= RMPI_NET_AT_F32 && !at_ops[i].fp) || (t == MPI_BYTE && !at_ops[i].byte) ? -1
                                                                                                    : at_ops[i].aop;
    return -1;
}

void rma_atomic_setup(rmpi_win_t *w)
{
    int n = w->size, nn = rmpi_topo_nnodes();
    if (nn <= 0)
        return;
    int *per = rmpi_xcalloc((size_t)nn, sizeof *per);
    for (int r = 0; r < n; r++) {
        int node = rmpi_comm_node_of(w->comm, r);
        if (node >= 0 && node < nn)
            per[node]++;
    }
    unsigned char *ok = NULL;
    for (int t = 0; t < n; t++) {
        const rmpi_rail_t *rail = rma_rdma_atomic_rail(w, t);
        int node = rmpi_comm_node_of(w->comm, t);
        /* alone on its node: no origin there touches its memory with loads and stores */
        if (!rail || !rail->ops->atomic || node < 0 || node >= nn || per[node] != 1)
            continue;
        if (!ok)
            ok = rmpi_xcalloc((size_t)n, 1);
        ok[t] = 1;
    }
    free(per);
    if (!ok)
        return;
    w->atom = rmpi_xcalloc(1, sizeof *w->atom);
    w->atom->ok = ok;
    w->atom->fetching = rmpi_xcalloc((size_t)n, sizeof *w->atom->fetching);
}

void rma_atomic_free(rmpi_win_t *w)
{
    rma_atomic_t *a = w->atom;
    if (!a)
        return;
    /* the tests' proof that this path ran (tests/mpi/rma/testlist, RMPI_DEBUG=1) */
    if (a->native)
        rmpi_log(1, "one-sided: %llu operations as provider atomics on this window.", (unsigned long long)a->native);
    free(a->ok);
    free(a->fetching);
    free(a);
    w->atom = NULL;
}

static void rec_done(at_rec_t *r)
{
    rmpi_win_t *w = r->w;
    if (r->rdt) {
        rmpi_dtype_unpack(r->res, r->rbytes, r->rbuf, r->rcount, r->rdt, 0);
        rmpi_dtype_release(r->rdt);
    }
    w->atom->fetching[r->t] -= r->fetch;
    rma_rdma_count(w, r->t, -1, r->err);
    if (r->ureq)
        rmpi_req_complete(r->ureq);
    free(r);
}

static void op_done(rmpi_net_op_t *nop)
{
    at_rec_t *r = ((at_op_t *)(void *)nop)->r;
    if (nop->status && !r->err)
        r->err = nop->status;
    if (--r->pending == 0)
        rec_done(r);
}

int rma_atomic_issue(rmpi_win_t *w, const rmpi_rma_op_t *op, uint64_t disp, size_t tbytes, rmpi_req_t *ureq)
{
    int t = op->target, cas = op->kind == RMPI_RMA_CAS;
    MPI_Datatype bt = op->tdt->basic;
    int type = bt == MPI_DATATYPE_NULL ? -1 : at_type(bt);
    int aop = type < 0 ? -1 : cas ? RMPI_NET_AOP_CSWAP : at_op(op->op, type, bt);
    int kind = cas ? RMPI_NET_ATOMIC_CSWAP : op->kind == RMPI_RMA_GACC ? RMPI_NET_ATOMIC_FETCH : RMPI_NET_ATOMIC_WRITE;
    if (aop < 0 || (aop == RMPI_NET_AOP_READ && kind != RMPI_NET_ATOMIC_FETCH) ||
        (!cas && (long long)tbytes > rmpi_knobs.RMA_ATOMIC_MAX && tbytes > at_size[type]))
        return 1;
    rmpi_vc_t *vc = rmpi_vc_get(rmpi_comm_world_rank(w->comm, t));
    rmpi_rail_t *rail = rmpi_vc_rail(vc, 0);
    size_t max = rail->ops->atomic_max(rail, kind, type, aop), es = at_size[type], nel = tbytes / es;
    uint64_t raddr, key;
    if (!max || nel * es != tbytes || rma_rdma_atomic_addr(w, t, disp, tbytes, &raddr, &key))
        return 1;
    rma_atomic_t *a = w->atom;
    unsigned idle = 0;
    while (a->fetching[t]) /* no FI_ORDER_ATOMIC_WAR: the fetching ones first */
        rmpi_core_wait_step(&idle);
    int fetch = kind != RMPI_NET_ATOMIC_WRITE, npieces = (int)((nel + max - 1) / max);
    size_t dbytes = aop == RMPI_NET_AOP_READ ? 0 : cas ? 2 * tbytes : tbytes;
    int contig_res = !fetch || rmpi_dtype_is_contig(op->rdt, op->rcount);
    size_t head = sizeof(at_rec_t) + (size_t)npieces * sizeof(at_op_t);
    at_rec_t *r = rmpi_xmalloc(head + dbytes + (contig_res ? 0 : tbytes));
    at_op_t *ops = (at_op_t *)(void *)(r + 1);
    char *data = (char *)r + head;
    *r = (at_rec_t){.w = w, .t = t, .pending = npieces, .fetch = fetch, .ureq = ureq};
    if (cas) {
        memcpy(data, op->obuf, tbytes);
        memcpy(data + tbytes, op->cbuf, tbytes);
    } else if (dbytes) {
        rmpi_dtype_pack(op->obuf, (size_t)op->ocount, op->odt, 0, data, dbytes);
    }
    if (fetch && contig_res) {
        r->res = rmpi_dtype_contig_ptr(op->rbuf, op->rdt);
    } else if (fetch) {
        r->res = data + dbytes;
        r->rbuf = op->rbuf;
        r->rcount = op->rcount;
        r->rdt = op->rdt;
        r->rbytes = tbytes;
        rmpi_dtype_retain(op->rdt);
    }
    a->fetching[t] += fetch;
    a->native++;
    rma_rdma_count(w, t, 1, 0);
    for (int i = 0; i < npieces; i++) {
        size_t first = (size_t)i * max, cnt = RMPI_MIN(max, nel - first);
        at_op_t *o = &ops[i];
        o->r = r;
        o->op.complete = op_done;
        o->op.ctx = r;
        o->op.status = 0;
        o->op.by_target = 0;
        rail->ops->atomic(rail, vc->peer, kind, type, aop, data + (dbytes ? first * es : 0),
                          fetch ? r->res + first * es : NULL, cnt, raddr + first * es, key, &o->op);
    }
    return 0;
}
