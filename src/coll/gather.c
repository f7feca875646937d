/* Gather(v) and Scatter(v), mirror images of each other: binomial tree (regular form, small
 * blocks) and linear (coll.h). */
#include "coll_impl.h"
#include "gather_sched.h"

#include <stdlib.h>
#include <string.h>

/* Non-root ranks forward their subtree's blocks packed, in relative order, to the parent. */
static void gather_binomial(gx_t *g, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int root)
{
    int n = g->n, me = g->me, vr = (me - root + n) % n, size = gx_subtree(vr, n);
    int parent = (me - (vr & -vr) + n) % n;
    if (vr && size == 1) {
        gx_send(g, send, parent);
        return;
    }
    size_t b = vr ? gx_bytes(send) : gx_bytes(&recv[root]);
    char *w = root == 0 && vr == 0 ? gx_contig_all(recv, n) : NULL;
    if (!w)
        w = rmpi_nbc_tmp(g->s, (size_t)size * b + 1);
    if (vr)
        gx_pack(g, send, w);
    else if (send)
        gx_copy(g, send, &recv[root]);
    for (int m = 1; m < size; m <<= 1) {
        int cs = m < size - m ? m : size - m;
        rmpi_nbc_recv(g->s, w + (size_t)m * b, (size_t)cs * b, (me + m) % n);
    }
    gx_round(g);
    if (vr) {
        rmpi_nbc_send(g->s, w, (size_t)size * b, parent);
        return;
    }
    if (w == gx_contig_all(recv, n))
        return;
    for (int j = 1; j < n; j++)
        gx_unpack(g, w + (size_t)j * b, &recv[(j + root) % n]);
}

/* The same tree run backwards: a rank receives its subtree's blocks, packed in
 * relative order, from its parent and passes each child its part, largest first. */
static void scatter_binomial(gx_t *g, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int root)
{
    int n = g->n, me = g->me, vr = (me - root + n) % n, size = gx_subtree(vr, n);
    int parent = (me - (vr & -vr) + n) % n;
    if (vr && size == 1) {
        gx_recv(g, recv, parent);
        return;
    }
    size_t b = vr ? gx_bytes(recv) : gx_bytes(&send[root]);
    char *w = root == 0 && vr == 0 ? gx_contig_all(send, n) : NULL;
    if (!w) {
        w = rmpi_nbc_tmp(g->s, (size_t)size * b + 1);
        if (!vr)
            for (int j = 1; j < n; j++)
                gx_pack(g, &send[(j + root) % n], w + (size_t)j * b);
    }
    if (vr) {
        rmpi_nbc_recv(g->s, w, (size_t)size * b, parent);
        gx_round(g);
        gx_unpack(g, w, recv);
    } else if (recv) {
        gx_copy(g, &send[root], recv);
    }
    int top = 1;
    while (top * 2 < size)
        top *= 2;
    for (int m = top; m >= 1; m >>= 1) {
        int cs = m < size - m ? m : size - m;
        rmpi_nbc_send(g->s, w + (size_t)m * b, (size_t)cs * b, (me + m) % n);
    }
}

/* The root exchanges with every other rank directly; the v forms always take this path,
 * since only the root knows every count. */
static void rooted_linear(gx_t *g, const rmpi_coll_blk_t *one, const rmpi_coll_blk_t *many, int root, int scatter)
{
    int n = g->n;
    if (g->me != root) {
        if (scatter)
            gx_recv(g, one, root);
        else
            gx_send(g, one, root);
        return;
    }
    if (one && scatter)
        gx_copy(g, &many[root], one);
    else if (one)
        gx_copy(g, one, &many[root]);
    for (int i = 1; i < n; i++) {
        int peer = (root + i) % n;
        if (scatter)
            gx_send(g, &many[peer], peer);
        else
            gx_recv(g, &many[peer], peer);
    }
}

/* one: a rank's block (NULL: in place at the root); many: the root's n blocks. */
static rmpi_nbc_t *rooted(rmpi_comm_t *c, const rmpi_coll_blk_t *one, const rmpi_coll_blk_t *many, int root, int form,
                          int scatter)
{
    if (c->inter)
        return coll_inter_rooted(c, one, many, root, scatter);
    gx_t g;
    gx_init(&g, c);
    size_t block = c->rank == root ? gx_bytes(&many[root]) : gx_bytes(one);
    if (gx_pick_rooted(scatter, form, c->size, block) == GX_LINEAR)
        rooted_linear(&g, one, many, root, scatter);
    else if (scatter)
        scatter_binomial(&g, many, one, root);
    else
        gather_binomial(&g, one, many, root);
    return gx_end(&g);
}

rmpi_nbc_t *rmpi_coll_gather_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int root,
                                   int form)
{
    return rooted(c, send, recv, root, form, 0);
}

rmpi_nbc_t *rmpi_coll_scatter_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int root,
                                    int form)
{
    return rooted(c, recv, send, root, form, 1);
}

/* ---- blocking linear, without a schedule ----
 * A 2-rank Gather of 8 bytes cost 0.17 us through the schedule (its allocation, rounds and
 * requests) against Open MPI's 0.08, while the message itself costs 0.04 (bench/pt2pt -t
 * stream). The same transfers as rooted_linear's, on the collective context with the tag
 * the schedule would have taken, so a rank here and a rank on the schedule still match. */

static int direct_ok(const rmpi_coll_blk_t *b) { return gx_contig(b) != NULL; }

/* One transfer with peer started: an eager send goes at once (NULL), else a request. */
static rmpi_req_t *direct_start(rmpi_comm_t *c, int tag, const rmpi_coll_blk_t *b, int peer, int send)
{
    static char none; /* zero-byte transfers may name no buffer */
    char *p = gx_contig(b);
    size_t len = gx_bytes(b);
    if (send && rmpi_core_send_eager(rmpi_comm_world_rank(c, peer), c->ctx + 1, c->rank, tag, p, len))
        return NULL;
    rmpi_req_t *r = rmpi_req_alloc(send ? RMPI_REQ_SEND : RMPI_REQ_RECV);
    r->ctx = c->ctx + 1;
    r->tag = tag;
    r->len = len;
    r->buf = len ? p : &none;
    if (send) {
        r->rank = rmpi_comm_world_rank(c, peer);
        r->src = c->rank;
        rmpi_core_isend(r);
    } else {
        r->rank = peer;
        rmpi_core_irecv(r);
    }
    return r;
}

/* Wait for r (NULL: done), its error or a truncation into err, and release it. */
static void direct_end(rmpi_req_t *r, int *err)
{
    if (!r)
        return;
    rmpi_core_wait(r);
    if (r->kind == RMPI_REQ_RECV && !r->st_err && r->st_msglen > r->len)
        r->st_err = MPI_ERR_TRUNCATE;
    if (r->st_err && !*err)
        *err = r->st_err;
    rmpi_req_release(r);
}

/* ---- 2 ranks: the other rank's block through the segment ----
 * On 2 ranks a Scatter(v) moves one block from the root to the other rank and a Gather(v)
 * one block the other way: below RMPI_COLL_SHM_BCAST_DEEP it goes as a Bcast through the
 * segment between the two (line frames, cells, the deep ring: the writer goes on once it
 * wrote), where a point-to-point message cost the reader about twice as much (2 ranks,
 * each call timed alone after a barrier: Scatter 8 B 0.31 us against MPICH's 0.19,
 * docs/results/coll_rest.md); larger blocks as the message, announced in the segment
 * (rmpi_coll_shm_two_move), the root's own block copied while it is in flight. Only the
 * writer's size decides, so counts that differ end in a truncation error. */
static const char rooted_shm[] = "shm";

/* The root's own block from -> to, of any layout; a source longer than the destination is
 * a truncation, as the schedule's self transfer reports it. */
static int own_copy(const rmpi_coll_blk_t *from, const rmpi_coll_blk_t *to)
{
    size_t n = gx_bytes(from), m = gx_bytes(to), k = RMPI_MIN(n, m);
    char *s = gx_contig(from), *d = gx_contig(to);
    if (k && s && d)
        memcpy(d, s, k);
    else if (k) {
        char *tmp = rmpi_xmalloc(n);
        rmpi_dtype_pack(from->buf, from->count, from->dt, 0, tmp, n);
        rmpi_dtype_unpack(tmp, k, to->buf, to->count, to->dt, 0);
        free(tmp);
    }
    return n > m ? MPI_ERR_TRUNCATE : 0;
}

/* The block as one message with peer (coll_impl.h), through a packed temporary (*tmp) when
 * its layout is not contiguous; coll_msg_end waits for it and unpacks what came. */
rmpi_req_t *coll_msg_start(rmpi_comm_t *c, int tag, const rmpi_coll_blk_t *b, int peer, int send, char **tmp)
{
    *tmp = NULL;
    if (direct_ok(b))
        return direct_start(c, tag, b, peer, send);
    size_t n = gx_bytes(b);
    *tmp = rmpi_xmalloc(n ? n : 1);
    if (send)
        rmpi_dtype_pack(b->buf, b->count, b->dt, 0, *tmp, n);
    rmpi_coll_blk_t p = gx_bytes_blk(*tmp, n);
    return direct_start(c, tag, &p, peer, send);
}

void coll_msg_end(rmpi_req_t *r, const rmpi_coll_blk_t *b, char *tmp, int *err)
{
    size_t got = 0;
    if (r && tmp && r->kind == RMPI_REQ_RECV) {
        rmpi_core_wait(r);
        got = RMPI_MIN(r->st_msglen, r->len);
    }
    direct_end(r, err);
    if (got)
        rmpi_dtype_unpack(tmp, got, b->buf, b->count, b->dt, 0);
    free(tmp);
}

/* The single copy of a 2-rank move: the two ranks' blocks as an Alltoallv (shm.c), the
 * root's own block from itself to itself (in place: where it lies), the moved block from
 * the writer to the reader, the rest empty. */
static int rooted_two_cma(rmpi_comm_t *c, const rmpi_coll_blk_t *one, const rmpi_coll_blk_t *many, int root,
                          int scatter, const rmpi_coll_blk_t *b, size_t wbytes)
{
    int me = c->rank, other = 1 - root;
    rmpi_coll_blk_t none = {b->buf, 0, b->dt}, s[2] = {none, none}, r[2] = {none, none};
    if (me == root) {
        const rmpi_coll_blk_t *own = one ? one : &many[root]; /* in place: the root's block where it lies */
        s[root] = scatter ? many[root] : *own;
        r[root] = scatter ? *own : many[root];
        if (scatter)
            s[other] = many[other];
        else
            r[other] = many[other];
    } else if (scatter)
        r[root] = *one;
    else
        s[root] = *one;
    return rmpi_coll_shm_two_cma(c, s, r, wbytes);
}

static int rooted_two(rmpi_comm_t *c, const rmpi_coll_blk_t *one, const rmpi_coll_blk_t *many, int root, int form,
                      int scatter)
{
    if (c->size != 2 || !rmpi_knobs.COLL_SHM_ROOTED ||
        (form == RMPI_COLL_REGULAR && (scatter ? rmpi_knobs.COLL_SCATTER != RMPI_COLL_SCATTER_AUTO
                                               : rmpi_knobs.COLL_GATHER != RMPI_COLL_GATHER_AUTO)))
        return RMPI_COLL_SHM_DECLINED;
    int me = c->rank, other = 1 - root, writer = scatter ? root : other, path, err = 0;
    size_t wbytes = 0;
    const rmpi_coll_blk_t *b = me == root ? &many[other] : one;
    coll_note_muted++;
    /* a Gather's block in single copy from RMPI_COLL_SHM_ROOTED_CMA (the other rank writes
     * pieces while the root copies its own block: 1 MiB 51.8 us against 132.9 as the
     * message); a Scatter's stays the message, whose reader's read overlaps the root's own
     * copy as well (64-256 KiB 0 of 6 rounds lower in single copy, 1 MiB even) */
    size_t cma_min = scatter ? SIZE_MAX : (size_t)rmpi_knobs.COLL_SHM_ROOTED_CMA;
    int rc = rmpi_coll_shm_two_move(c, b->buf, b->count, b->dt, writer, cma_min, &path, &wbytes);
    coll_note_muted--;
    if (rc == RMPI_COLL_SHM_DECLINED)
        return rc;
    coll_note(scatter ? COLL_CALL_SCATTER : COLL_CALL_GATHER, rooted_shm, 0, gx_bytes(b));
    int tag = RMPI_NBC_TAG(c->coll_seq);
    c->coll_seq++;
    if (path == RMPI_COLL_TWO_CMA) /* the root's own block inside */
        rc = rooted_two_cma(c, one, many, root, scatter, b, wbytes);
    else {
        char *tmp = NULL;
        rmpi_req_t *r = path ? coll_msg_start(c, tag, b, 1 - me, me == writer, &tmp) : NULL;
        if (me == root && one) /* while the message is in flight */
            err = own_copy(scatter ? &many[root] : one, scatter ? one : &many[root]);
        if (path)
            coll_msg_end(r, b, tmp, &rc);
    }
    rmpi_core_throttle();
    return rc ? rc : err;
}

int rmpi_coll_rooted_now(rmpi_comm_t *c, const rmpi_coll_blk_t *one, const rmpi_coll_blk_t *many, int root, int form,
                         int scatter)
{
    int n = c->size, me = c->rank, err = 0;
    if (c->inter)
        return RMPI_COLL_SHM_DECLINED;
    if ((err = rooted_two(c, one, many, root, form, scatter)) != RMPI_COLL_SHM_DECLINED)
        return err;
    err = 0;
    if (one && !direct_ok(one))
        return RMPI_COLL_SHM_DECLINED;
    if (me == root) {
        for (int i = 0; i < n; i++)
            if (!direct_ok(&many[i]))
                return RMPI_COLL_SHM_DECLINED;
        /* mismatched own blocks: the schedule's self transfer judges them */
        if (one && gx_bytes(one) != gx_bytes(&many[root]))
            return RMPI_COLL_SHM_DECLINED;
    }
    size_t block = me == root ? gx_bytes(&many[root]) : gx_bytes(one);
    if (gx_pick_rooted(scatter, form, n, block) != GX_LINEAR)
        return RMPI_COLL_SHM_DECLINED;
    int tag = RMPI_NBC_TAG(c->coll_seq);
    c->coll_seq++;
    if (me != root) {
        direct_end(direct_start(c, tag, one, root, !scatter), &err);
    } else {
        rmpi_req_t *few[8], **reqs = n <= 8 ? few : rmpi_xmalloc((size_t)n * sizeof *reqs);
        for (int i = 1; i < n; i++) /* the schedule's order: root + 1 first */
            reqs[i] = direct_start(c, tag, &many[(root + i) % n], (root + i) % n, scatter);
        /* the root's own block after the others' transfers started, so they wait for no copy
         * (2 ranks, each call timed alone after a barrier: the Scatter's reader waited for it) */
        if (one && gx_bytes(one))
            memcpy(scatter ? gx_contig(one) : gx_contig(&many[root]), scatter ? gx_contig(&many[root]) : gx_contig(one),
                   gx_bytes(one));
        for (int i = 1; i < n; i++)
            direct_end(reqs[i], &err);
        if (reqs != few)
            free(reqs);
    }
    rmpi_core_throttle();
    return err;
}
