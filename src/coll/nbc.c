/* Collective schedules: building, running round by round, progress hook (coll.h, "schedules"). */
#include "coll_impl.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum { NBC_SEND, NBC_RECV, NBC_COPY, NBC_REDUCE, NBC_PACK, NBC_UNPACK, NBC_SHM };

typedef struct nbc_step {
    uint8_t kind;
    uint8_t local; /* peer is a rank of the local group (intercommunicators) */
    int peer;
    int tag; /* point-to-point schedules: the transfer's own tag */
    const void *src;
    void *dst;
    size_t n; /* bytes, or elements for reduce/pack/unpack */
    MPI_Op op;
    MPI_Datatype type;
    rmpi_dtype_t *dt;
} nbc_step_t;

struct rmpi_nbc {
    rmpi_comm_t *comm;
    int tag;
    size_t nsteps;
    size_t nrounds;
    size_t ntmp;       /* scratch blocks that did not fit in the arena (in tmp) */
    size_t arena_used; /* bytes of the arena handed out */
    size_t tmp_bytes;  /* all scratch asked for, arena or not (sizes the next arena) */
    /* run state */
    size_t cur;      /* round running now */
    size_t nxfer;    /* transfers of the running round (in xfer) */
    rmpi_req_t *req; /* NULL for rmpi_nbc_run */
    int err, keep, done;
    int p2p;            /* rmpi_nbc_new_p2p: point-to-point context, per-step tags */
    int local;          /* rmpi_nbc_local: transfers added now address the local group */
    int st_src, st_tag; /* p2p: status of the last receive */
    size_t st_bytes, st_msglen;
    int sealed;       /* rounds closed by the first start */
    int nshm;         /* shared-memory steps of the current round not finished yet */
    rmpi_list_t link; /* in the active list while running */
    /* Memory kept when the object goes back to the spare list (see nbc_recycle); the
     * members above are reset for every schedule. */
    nbc_step_t *steps;
    size_t capsteps;
    size_t *round_start; /* first step of each round */
    size_t caprounds;
    rmpi_req_t **xfer;
    size_t capxfer;
    void **tmp;
    size_t captmp;
    char *arena; /* scratch: one block handed out in pieces */
    size_t arena_cap;
    /* first pieces of the arrays above (most schedules need no other allocation) */
    nbc_step_t steps_inl[12];
    size_t round_inl[8];
    rmpi_req_t *xfer_inl[8];
    void *tmp_inl[4];
};

/* Freed schedules kept for reuse with their arrays' capacity and scratch arena, so that a
 * small blocking collective allocates nothing. A schedule is on this list only while no
 * call owns it: a running non-blocking or persistent schedule never shares memory with
 * another one. Library lock held, like everything here. */
#define NBC_SPARE_MAX 4
#define NBC_ARENA_MAX ((size_t)64 << 10) /* largest scratch arena kept */
#define NBC_KEEP_STEPS 256               /* larger step arrays are freed, not kept */
static rmpi_nbc_t *spare[NBC_SPARE_MAX];
static int nspare;

static rmpi_list_t active = {&active, &active};
static int nactive;
/* Set while schedules are being advanced or started: a send posted by a schedule may run
 * progress, which must not advance a half-posted round. */
static int busy;

static int nbc_progress(void);

/* Double an array that may still be the schedule's inline piece (which is not freed). */
static void *grow(void *arr, const void *inl, size_t *cap, size_t elem)
{
    void *p;
    if (arr == inl) {
        p = rmpi_xmalloc(2 * *cap * elem);
        memcpy(p, arr, *cap * elem);
    } else {
        p = rmpi_xrealloc(arr, 2 * *cap * elem);
    }
    *cap *= 2;
    return p;
}

static rmpi_nbc_t *nbc_alloc(rmpi_comm_t *c)
{
    rmpi_nbc_t *s;
    if (nspare > 0) {
        s = spare[--nspare];
    } else {
        s = rmpi_xmalloc(sizeof *s);
        s->steps = s->steps_inl, s->capsteps = RMPI_ARRAY_LEN(s->steps_inl);
        s->round_start = s->round_inl, s->caprounds = RMPI_ARRAY_LEN(s->round_inl);
        s->xfer = s->xfer_inl, s->capxfer = RMPI_ARRAY_LEN(s->xfer_inl);
        s->tmp = s->tmp_inl, s->captmp = RMPI_ARRAY_LEN(s->tmp_inl);
        s->arena = NULL, s->arena_cap = 0;
    }
    memset(s, 0, offsetof(rmpi_nbc_t, steps));
    s->comm = c;
    if (!c->predefined)
        c->refcount++;
    s->nrounds = 1;
    s->round_start[0] = 0;
    rmpi_list_init(&s->link);
    return s;
}

rmpi_nbc_t *rmpi_nbc_new(rmpi_comm_t *c)
{
    rmpi_nbc_t *s = nbc_alloc(c);
    s->tag = RMPI_NBC_TAG(c->coll_seq);
    c->coll_seq++;
    return s;
}

rmpi_nbc_t *rmpi_nbc_new_p2p(rmpi_comm_t *c)
{
    rmpi_nbc_t *s = nbc_alloc(c);
    s->p2p = 1;
    return s;
}

void *rmpi_nbc_tmp(rmpi_nbc_t *s, size_t bytes)
{
    if (!bytes)
        return NULL;
    /* pieces keep malloc's alignment; one larger than any arena goes to malloc at once
     * (and cannot overflow the rounding) */
    const size_t align = _Alignof(max_align_t);
    size_t need = bytes <= NBC_ARENA_MAX ? (bytes + align - 1) & ~(align - 1) : NBC_ARENA_MAX + 1;
    s->tmp_bytes = s->tmp_bytes + need < s->tmp_bytes ? SIZE_MAX : s->tmp_bytes + need;
    if (need <= s->arena_cap - s->arena_used) {
        void *p = s->arena + s->arena_used;
        s->arena_used += need;
        return p;
    }
    if (s->ntmp == s->captmp)
        s->tmp = grow(s->tmp, s->tmp_inl, &s->captmp, sizeof *s->tmp);
    return s->tmp[s->ntmp++] = rmpi_xmalloc(bytes);
}

static nbc_step_t *add(rmpi_nbc_t *s, int kind)
{
    if (s->nsteps == s->capsteps)
        s->steps = grow(s->steps, s->steps_inl, &s->capsteps, sizeof *s->steps);
    nbc_step_t *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    st->kind = (uint8_t)kind;
    st->local = (uint8_t)s->local;
    return st;
}

void rmpi_nbc_send(rmpi_nbc_t *s, const void *buf, size_t bytes, int peer)
{
    if (peer == MPI_PROC_NULL)
        return;
    nbc_step_t *st = add(s, NBC_SEND);
    st->src = buf, st->n = bytes, st->peer = peer;
}

void rmpi_nbc_recv(rmpi_nbc_t *s, void *buf, size_t bytes, int peer)
{
    if (peer == MPI_PROC_NULL)
        return;
    nbc_step_t *st = add(s, NBC_RECV);
    st->dst = buf, st->n = bytes, st->peer = peer;
}

void rmpi_nbc_send_tag(rmpi_nbc_t *s, const void *buf, size_t bytes, int peer, int tag)
{
    rmpi_nbc_send(s, buf, bytes, peer);
    if (peer != MPI_PROC_NULL)
        s->steps[s->nsteps - 1].tag = tag;
}

void rmpi_nbc_recv_tag(rmpi_nbc_t *s, void *buf, size_t bytes, int peer, int tag)
{
    rmpi_nbc_recv(s, buf, bytes, peer);
    if (peer != MPI_PROC_NULL)
        s->steps[s->nsteps - 1].tag = tag;
}

void rmpi_nbc_copy(rmpi_nbc_t *s, const void *src, void *dst, size_t bytes)
{
    if (!bytes || src == dst)
        return;
    nbc_step_t *st = add(s, NBC_COPY);
    st->src = src, st->dst = dst, st->n = bytes;
}

void rmpi_nbc_reduce(rmpi_nbc_t *s, MPI_Op op, MPI_Datatype type, const void *in, void *inout, size_t count)
{
    if (!count)
        return;
    nbc_step_t *st = add(s, NBC_REDUCE);
    st->src = in, st->dst = inout, st->n = count, st->op = op, st->type = type;
    /* a persistent schedule outlives MPI_Op_free / MPI_Type_free of its arguments */
    rmpi_coll_op_retain(op);
    if ((st->dt = rmpi_dtype_get(type)))
        rmpi_dtype_retain(st->dt);
}

/* A call in the communicator's shared segment (shm.c): started with its round, which ends
 * when it has finished as well as the round's transfers. */
void rmpi_nbc_shm(rmpi_nbc_t *s, coll_shm_op_t *op)
{
    nbc_step_t *st = add(s, NBC_SHM);
    st->dst = op;
}

static void add_pack(rmpi_nbc_t *s, int kind, const void *src, void *dst, size_t count, rmpi_dtype_t *dt)
{
    if (!count || !dt->size)
        return;
    nbc_step_t *st = add(s, kind);
    st->src = src, st->dst = dst, st->n = count, st->dt = dt;
    rmpi_dtype_retain(dt);
}

void rmpi_nbc_pack(rmpi_nbc_t *s, const void *ubuf, size_t count, rmpi_dtype_t *dt, void *packed)
{
    add_pack(s, NBC_PACK, ubuf, packed, count, dt);
}

void rmpi_nbc_unpack(rmpi_nbc_t *s, const void *packed, void *ubuf, size_t count, rmpi_dtype_t *dt)
{
    add_pack(s, NBC_UNPACK, packed, ubuf, count, dt);
}

void rmpi_nbc_round(rmpi_nbc_t *s)
{
    if (s->round_start[s->nrounds - 1] == s->nsteps)
        return;
    if (s->nrounds == s->caprounds)
        s->round_start = grow(s->round_start, s->round_inl, &s->caprounds, sizeof *s->round_start);
    s->round_start[s->nrounds++] = s->nsteps;
}

int rmpi_nbc_local(rmpi_nbc_t *s, int on)
{
    int was = s->local;
    s->local = on && s->comm->local;
    return was;
}

static void post(rmpi_nbc_t *s, const nbc_step_t *st)
{
    /* within the local group of an intercommunicator: its local intracommunicator's
     * collective context; the sender's rank is the same local rank either way */
    rmpi_comm_t *c = st->local ? s->comm->local : s->comm;
    rmpi_req_t *r = rmpi_req_alloc(st->kind == NBC_SEND ? RMPI_REQ_SEND : RMPI_REQ_RECV);
    r->ctx = s->p2p ? c->ctx : c->ctx + 1;
    r->tag = s->p2p ? st->tag : s->tag;
    r->len = st->n;
    if (s->nxfer == s->capxfer)
        s->xfer = grow(s->xfer, s->xfer_inl, &s->capxfer, sizeof *s->xfer);
    s->xfer[s->nxfer++] = r;
    int err;
    static char none; /* zero-byte transfers may name no buffer */
    if (st->kind == NBC_SEND) {
        r->buf = st->src ? (void *)(uintptr_t)st->src : &none;
        r->rank = rmpi_comm_world_rank(c, st->peer);
        r->src = c->rank;
        err = rmpi_core_isend(r);
    } else {
        r->buf = st->dst ? st->dst : &none;
        r->rank = st->peer;
        err = rmpi_core_irecv(r);
    }
    if (err && !s->err)
        s->err = err;
}

/* Local steps of round k, then its receives, then its sends. */
static void start_round(rmpi_nbc_t *s)
{
    size_t b = s->round_start[s->cur];
    size_t e = s->cur + 1 < s->nrounds ? s->round_start[s->cur + 1] : s->nsteps;
    for (size_t i = b; i < e; i++) {
        const nbc_step_t *st = &s->steps[i];
        switch (st->kind) {
        case NBC_COPY: memcpy(st->dst, st->src, st->n); break;
        case NBC_REDUCE: rmpi_coll_op_apply(st->op, st->type, st->src, st->dst, st->n); break;
        case NBC_PACK: rmpi_dtype_pack(st->src, st->n, st->dt, 0, st->dst, st->n * st->dt->size); break;
        case NBC_UNPACK: rmpi_dtype_unpack(st->src, st->n * st->dt->size, st->dst, st->n, st->dt, 0); break;
        case NBC_SHM:
            coll_shm_op_start(st->dst);
            s->nshm++;
            break;
        }
    }
    for (size_t i = b; i < e; i++)
        if (s->steps[i].kind == NBC_RECV)
            post(s, &s->steps[i]);
    for (size_t i = b; i < e; i++)
        if (s->steps[i].kind == NBC_SEND)
            post(s, &s->steps[i]);
}

static void finish(rmpi_nbc_t *s)
{
    s->done = 1;
    rmpi_list_remove(&s->link);
    if (--nactive == 0)
        rmpi_core_hook_remove(nbc_progress);
    rmpi_req_t *req = s->req;
    if (!req)
        return;
    req->st_err = s->err;
    if (s->p2p) {
        req->st_src = s->st_src, req->st_tag = s->st_tag;
        req->st_bytes = s->st_bytes, req->st_msglen = s->st_msglen;
    }
    if (!s->keep || (req->flags & RMPI_RF_FREED)) {
        req->user = NULL;
        rmpi_nbc_free(s);
    }
    rmpi_req_complete(req);
}

/* Whether the shared-memory steps of the current round have finished (each polled, which
 * advances its communicator's queue; *moved set when a step was taken); their errors are
 * kept. */
static int shm_finished(rmpi_nbc_t *s, int *moved)
{
    size_t b = s->round_start[s->cur];
    size_t e = s->cur + 1 < s->nrounds ? s->round_start[s->cur + 1] : s->nsteps;
    int left = 0, err;
    for (size_t i = b; i < e; i++)
        if (s->steps[i].kind == NBC_SHM) {
            if (!coll_shm_op_test(s->steps[i].dst, &err, moved))
                left++;
            else if (err && !s->err)
                s->err = err;
        }
    s->nshm = left;
    return left == 0;
}

/* Advance s as far as completed transfers allow; returns nonzero when something moved. */
static int advance(rmpi_nbc_t *s)
{
    int moved = 0;
    for (;;) {
        if (RMPI_UNLIKELY(s->nshm) && !shm_finished(s, &moved))
            return moved;
        for (size_t i = 0; i < s->nxfer; i++)
            if (!s->xfer[i]->done)
                return moved;
        for (size_t i = 0; i < s->nxfer; i++) {
            rmpi_req_t *r = s->xfer[i];
            if (r->kind == RMPI_REQ_RECV && !r->st_err && r->st_msglen > r->len)
                r->st_err = MPI_ERR_TRUNCATE;
            if (r->kind == RMPI_REQ_RECV && s->p2p) {
                s->st_src = r->st_src, s->st_tag = r->st_tag;
                s->st_bytes = r->st_bytes, s->st_msglen = r->st_msglen;
            }
            if (r->st_err && !s->err)
                s->err = r->st_err;
            rmpi_req_release(r);
        }
        s->nxfer = 0;
        moved = 1;
        if (++s->cur == s->nrounds) {
            finish(s);
            return moved;
        }
        start_round(s);
    }
}

static int nbc_progress(void)
{
    if (busy)
        return 0;
    busy = 1;
    int moved = 0;
    rmpi_list_t *pos, *tmp;
    rmpi_list_for_each_safe(pos, tmp, &active) moved |= advance(RMPI_CONTAINER_OF(pos, rmpi_nbc_t, link));
    busy = 0;
    return moved;
}

static void launch(rmpi_nbc_t *s, rmpi_req_t *req, int keep)
{
    if (!s->sealed) {
        rmpi_nbc_round(s);
        if (s->round_start[s->nrounds - 1] == s->nsteps) /* drop the empty last round */
            s->nrounds--;
        s->sealed = 1;
    }
    s->req = req;
    s->keep = keep;
    s->err = 0;
    s->done = 0;
    s->cur = 0;
    s->nshm = 0;
    if (s->p2p) { /* a receive's status unless a receive completes it (PROC_NULL source) */
        s->st_src = MPI_PROC_NULL, s->st_tag = MPI_ANY_TAG;
        s->st_bytes = s->st_msglen = 0;
    }
    if (req) {
        req->kind = s->p2p ? RMPI_REQ_RECV : RMPI_REQ_COLL;
        req->user = s;
        req->st_err = 0;
        req->done = 0;
    }
    rmpi_list_push_back(&active, &s->link);
    if (nactive++ == 0)
        rmpi_core_hook_add(nbc_progress);
    if (s->nrounds == 0) {
        finish(s);
        return;
    }
    int was_busy = busy;
    busy = 1;
    start_round(s);
    advance(s);
    busy = was_busy;
}

int rmpi_nbc_run(rmpi_nbc_t *s)
{
    launch(s, NULL, 1);
    unsigned idle = 0;
    while (!s->done)
        rmpi_core_wait_step(&idle);
    int err = s->err;
    rmpi_nbc_free(s);
    rmpi_core_throttle();
    return err;
}

void rmpi_nbc_start(rmpi_nbc_t *s, rmpi_req_t *req, int keep) { launch(s, req, keep); }

/* Give back the heap memory of s and s itself. */
static void nbc_destroy(rmpi_nbc_t *s)
{
    free(s->arena);
    if (s->tmp != s->tmp_inl)
        free(s->tmp);
    if (s->steps != s->steps_inl)
        free(s->steps);
    if (s->round_start != s->round_inl)
        free(s->round_start);
    if (s->xfer != s->xfer_inl)
        free(s->xfer);
    free(s);
}

/* s no longer runs and holds no references: keep it on the spare list with its arrays and
 * a scratch arena big enough for all the scratch it needed (up to NBC_ARENA_MAX), or free
 * it when the list is full or its arrays are large. */
static void nbc_recycle(rmpi_nbc_t *s)
{
    if (nspare == NBC_SPARE_MAX || s->capsteps > NBC_KEEP_STEPS || s->caprounds > NBC_KEEP_STEPS ||
        s->capxfer > NBC_KEEP_STEPS || s->captmp > NBC_KEEP_STEPS) {
        nbc_destroy(s);
        return;
    }
    if (s->tmp_bytes > s->arena_cap && s->tmp_bytes <= NBC_ARENA_MAX) {
        free(s->arena);
        s->arena = rmpi_xmalloc(s->tmp_bytes);
        s->arena_cap = s->tmp_bytes;
    }
    spare[nspare++] = s;
}

void rmpi_nbc_free(rmpi_nbc_t *s)
{
    for (size_t i = 0; i < s->nsteps; i++) {
        if (s->steps[i].kind == NBC_REDUCE)
            rmpi_coll_op_release(s->steps[i].op);
        if (s->steps[i].kind == NBC_SHM)
            coll_shm_op_free(s->steps[i].dst);
        if (s->steps[i].dt)
            rmpi_dtype_release(s->steps[i].dt);
    }
    for (size_t i = 0; i < s->ntmp; i++)
        free(s->tmp[i]);
    rmpi_comm_release(s->comm);
    nbc_recycle(s);
}

int rmpi_nbc_active(void) { return nactive; }

/* MPI-4 non-blocking sendrecv (and its _replace form) as one point-to-point schedule: the
 * receive and the send are posted together and the returned request, a receive, completes
 * with the receive's status when both are done. Contiguous data moves from and into the
 * user's buffers; non-contiguous data is packed into the schedule's scratch and unpacked
 * after the round; for _replace the outgoing data is packed first and the received data
 * unpacked into buf in a later round, so the two never overlap. */
rmpi_req_t *rmpi_nbc_sendrecv(rmpi_comm_t *c, const void *sbuf, size_t scount, rmpi_dtype_t *sdt, int dest, int sendtag,
                              void *rbuf, size_t rcount, rmpi_dtype_t *rdt, int source, int recvtag, int replace)
{
    rmpi_nbc_t *s = rmpi_nbc_new_p2p(c);
    size_t sbytes = scount * sdt->size, rbytes = rcount * rdt->size;
    const void *out = sbuf;
    if (replace || !rmpi_dtype_is_contig(sdt, scount)) {
        void *tmp = rmpi_nbc_tmp(s, sbytes);
        rmpi_nbc_pack(s, sbuf, scount, sdt, tmp);
        out = tmp;
    } else {
        out = rmpi_dtype_contig_ptr(sbuf, sdt);
    }
    int direct = !replace && rmpi_dtype_is_contig(rdt, rcount);
    void *in = direct ? rmpi_dtype_contig_ptr(rbuf, rdt) : rmpi_nbc_tmp(s, rbytes);
    rmpi_nbc_recv_tag(s, in, rbytes, source, recvtag);
    rmpi_nbc_send_tag(s, out, sbytes, dest, sendtag);
    rmpi_nbc_round(s);
    if (!direct && source != MPI_PROC_NULL)
        rmpi_nbc_unpack(s, in, rbuf, rcount, rdt);
    rmpi_req_t *r = rmpi_req_alloc(RMPI_REQ_RECV);
    r->ucomm = c;
    rmpi_nbc_start(s, r, 0);
    return r;
}
