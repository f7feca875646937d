/* Helpers of the reduction tests: every rank's contribution is a pattern of (rank, element),
 * so each rank computes locally what any reduction over any range of ranks must give.
 * Kinds: int with MPI_SUM (contiguous, or a vector type with gaps that must stay
 * untouched), double with MPI_MAX, unsigned with MPI_BXOR. */
#ifndef COLLCHECK_H
#define COLLCHECK_H

#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_INT, K_VEC, K_DBL, K_XOR, K_NKINDS };
static const char *const kind_name[K_NKINDS] = {"int/sum", "vector/sum", "double/max", "unsigned/bxor"};
#define GAP_SENTINEL (-77777)

typedef struct {
    int kind;
    MPI_Datatype type; /* K_VEC: 2 ints at int offsets 0 and 2, extent 3 ints */
    MPI_Op op;
    size_t per;  /* basic elements per element */
    size_t slot; /* bytes of buffer per element */
} ck_t;

static inline ck_t ck_make(int kind)
{
    ck_t k = {kind, MPI_INT, MPI_SUM, 1, sizeof(int)};
    if (kind == K_VEC) {
        MPI_Type_vector(2, 1, 2, MPI_INT, &k.type);
        MPI_Type_commit(&k.type);
        k.per = 2, k.slot = 3 * sizeof(int);
    } else if (kind == K_DBL) {
        k.type = MPI_DOUBLE, k.op = MPI_MAX, k.slot = sizeof(double);
    } else if (kind == K_XOR) {
        k.type = MPI_UNSIGNED, k.op = MPI_BXOR, k.slot = sizeof(unsigned);
    }
    return k;
}

static inline void ck_free(ck_t *k)
{
    if (k->kind == K_VEC)
        MPI_Type_free(&k->type);
}

/* Contribution of rank r to basic element i; salt tells calls apart. */
static inline long ck_val(int r, size_t i, int salt)
{
    return (long)((r * 7919u + i * 31u + (unsigned)salt * 101u) % 2001u) - 1000;
}

/* Expected value of basic element i reduced over ranks lo..hi. */
static inline double ck_expect(const ck_t *k, int lo, int hi, size_t i, int salt)
{
    long acc = ck_val(lo, i, salt);
    for (int r = lo + 1; r <= hi; r++) {
        long v = ck_val(r, i, salt);
        acc = k->kind == K_DBL ? (v > acc ? v : acc) : k->kind == K_XOR ? (long)((unsigned)acc ^ (unsigned)v) : acc + v;
    }
    return k->kind == K_XOR ? (double)(unsigned)acc : (double)acc;
}

/* Address of basic element i in a buffer of elements of k. */
static inline void *ck_at(const ck_t *k, void *buf, size_t i)
{
    if (k->kind == K_VEC)
        return (int *)buf + (i / 2) * 3 + (i % 2) * 2;
    return (char *)buf + i * k->slot;
}

static inline void *ck_alloc(const ck_t *k, size_t count)
{
    void *b = mtest_malloc(count * k->slot + 16);
    if (k->kind == K_VEC)
        for (size_t j = 0; j < count; j++)
            ((int *)b)[3 * j + 1] = GAP_SENTINEL;
    return b;
}

/* Fill count elements with rank r's contribution. */
static inline void ck_fill(const ck_t *k, void *buf, size_t count, int r, int salt)
{
    for (size_t i = 0; i < count * k->per; i++) {
        long v = ck_val(r, i, salt);
        void *p = ck_at(k, buf, i);
        if (k->kind == K_DBL)
            *(double *)p = (double)v;
        else if (k->kind == K_XOR)
            *(unsigned *)p = (unsigned)v;
        else
            *(int *)p = (int)v;
    }
}

static inline double ck_get(const ck_t *k, void *buf, size_t i)
{
    void *p = ck_at(k, buf, i);
    return k->kind == K_DBL ? *(double *)p : k->kind == K_XOR ? (double)*(unsigned *)p : (double)*(int *)p;
}

/* Check count elements starting at basic element first of the reduction over lo..hi;
 * reports the first mismatch only. Returns the number of bad elements. */
static inline size_t ck_check(const ck_t *k, void *buf, size_t count, size_t first, int lo, int hi, int salt,
                              const char *what)
{
    size_t bad = 0, at = 0;
    double got = 0, want = 0;
    for (size_t i = 0; i < count * k->per; i++) {
        double g = ck_get(k, buf, i), w = ck_expect(k, lo, hi, first + i, salt);
        if (g != w && !bad++)
            at = i, got = g, want = w;
    }
    if (k->kind == K_VEC)
        for (size_t j = 0; j < count; j++)
            if (((int *)buf)[3 * j + 1] != GAP_SENTINEL && !bad++)
                at = j, got = ((int *)buf)[3 * j + 1], want = GAP_SENTINEL;
    MTEST_CHECK(!bad, "%s %s count %zu: %zu bad, first at %zu: got %g, expected %g (ranks %d..%d)", what,
                kind_name[k->kind], count, bad, at, got, want, lo, hi);
    return bad;
}

/* Algorithms are chosen from the size: these cover 0, 1, small, every threshold region
 * and 1 MiB of ints. */
static const size_t ck_counts[] = {0, 1, 7, 100, 3000, 40000, 262144};
#define CK_NCOUNTS (sizeof ck_counts / sizeof ck_counts[0])

/* ---- one reduction collective, checked ---- */
enum { C_REDUCE, C_ALLREDUCE, C_SCAN, C_EXSCAN, C_REDSCAT, C_REDSCAT_BLOCK };
enum { M_BLOCKING, M_NONBLOCKING, M_PERSISTENT };

/* Start (or run) coll; counts[] for C_REDSCAT, counts[0] the block for C_REDSCAT_BLOCK. */
static inline int ck_call(int coll, int mode, const void *sb, void *rb, int count, const int *counts, const ck_t *k,
                          int root, MPI_Comm comm, MPI_Request *req)
{
    MPI_Datatype t = k->type;
    MPI_Op op = k->op;
    MPI_Info in = MPI_INFO_NULL;
    switch (coll) {
    case C_REDUCE:
        return mode == M_BLOCKING      ? MPI_Reduce(sb, rb, count, t, op, root, comm)
               : mode == M_NONBLOCKING ? MPI_Ireduce(sb, rb, count, t, op, root, comm, req)
                                       : MPI_Reduce_init(sb, rb, count, t, op, root, comm, in, req);
    case C_ALLREDUCE:
        return mode == M_BLOCKING      ? MPI_Allreduce(sb, rb, count, t, op, comm)
               : mode == M_NONBLOCKING ? MPI_Iallreduce(sb, rb, count, t, op, comm, req)
                                       : MPI_Allreduce_init(sb, rb, count, t, op, comm, in, req);
    case C_SCAN:
        return mode == M_BLOCKING      ? MPI_Scan(sb, rb, count, t, op, comm)
               : mode == M_NONBLOCKING ? MPI_Iscan(sb, rb, count, t, op, comm, req)
                                       : MPI_Scan_init(sb, rb, count, t, op, comm, in, req);
    case C_EXSCAN:
        return mode == M_BLOCKING      ? MPI_Exscan(sb, rb, count, t, op, comm)
               : mode == M_NONBLOCKING ? MPI_Iexscan(sb, rb, count, t, op, comm, req)
                                       : MPI_Exscan_init(sb, rb, count, t, op, comm, in, req);
    case C_REDSCAT:
        return mode == M_BLOCKING      ? MPI_Reduce_scatter(sb, rb, counts, t, op, comm)
               : mode == M_NONBLOCKING ? MPI_Ireduce_scatter(sb, rb, counts, t, op, comm, req)
                                       : MPI_Reduce_scatter_init(sb, rb, counts, t, op, comm, in, req);
    default:
        return mode == M_BLOCKING      ? MPI_Reduce_scatter_block(sb, rb, counts[0], t, op, comm)
               : mode == M_NONBLOCKING ? MPI_Ireduce_scatter_block(sb, rb, counts[0], t, op, comm, req)
                                       : MPI_Reduce_scatter_block_init(sb, rb, counts[0], t, op, comm, in, req);
    }
}

static const char *const coll_name[] = {"reduce", "allreduce",      "scan",
                                        "exscan", "reduce_scatter", "reduce_scatter_block"};

/* A call in flight: buffers and what to check when it completes. */
typedef struct {
    int coll, root, salt, inplace;
    size_t count, in_count, out_count, out_first;
    int counts[64];
    void *sb, *rb;
    MPI_Request req;
} ck_call_t;

/* Prepare and start (or run) coll on count elements; for the reduce-scatters count is the
 * whole vector, split unevenly (some ranks get nothing). */
static inline void ck_start(ck_call_t *x, int coll, const ck_t *k, size_t count, int mode, int inplace, int root,
                            int salt)
{
    int me = mtest_rank, n = mtest_size;
    memset(x, 0, sizeof *x);
    x->coll = coll, x->root = root, x->salt = salt, x->count = count, x->inplace = inplace;
    x->in_count = x->out_count = count;
    if (coll == C_REDSCAT) {
        size_t total = 0, first = 0;
        for (int i = 0; i < n; i++) {
            x->counts[i] = (int)(count / (size_t)n) + (i % 3 == 1) * (int)(count % 5);
            if (i < me)
                first += (size_t)x->counts[i];
            total += (size_t)x->counts[i];
        }
        x->in_count = total, x->out_count = (size_t)x->counts[me], x->out_first = first;
    } else if (coll == C_REDSCAT_BLOCK) {
        x->counts[0] = (int)((count + (size_t)n - 1) / (size_t)n);
        x->in_count = (size_t)x->counts[0] * (size_t)n, x->out_count = (size_t)x->counts[0];
        x->out_first = (size_t)me * x->out_count;
    }
    int use_inplace = inplace && (coll != C_REDUCE || me == root);
    x->sb = ck_alloc(k, x->in_count);
    x->rb = ck_alloc(k, x->in_count);
    ck_fill(k, use_inplace ? x->rb : x->sb, x->in_count, me, salt);
    MTEST_OK(ck_call(coll, mode, use_inplace ? MPI_IN_PLACE : x->sb, x->rb, (int)count, x->counts, k, root,
                     MPI_COMM_WORLD, &x->req));
}

static inline void ck_finish(ck_call_t *x, const ck_t *k)
{
    int me = mtest_rank, n = mtest_size;
    char what[96];
    snprintf(what, sizeof what, "%s%s root %d", coll_name[x->coll], x->inplace ? " in place" : "", x->root);
    size_t first = x->out_first * k->per;
    switch (x->coll) {
    case C_REDUCE:
        if (me == x->root)
            ck_check(k, x->rb, x->count, 0, 0, n - 1, x->salt, what);
        break;
    case C_SCAN: ck_check(k, x->rb, x->count, 0, 0, me, x->salt, what); break;
    case C_EXSCAN:
        if (me > 0)
            ck_check(k, x->rb, x->count, 0, 0, me - 1, x->salt, what);
        break;
    default: ck_check(k, x->rb, x->out_count, first, 0, n - 1, x->salt, what);
    }
}

static inline void ck_free_call(ck_call_t *x)
{
    free(x->sb);
    free(x->rb);
}

/* Blocking, non-blocking and persistent (started 3 times with new data) on one size. */
static inline void ck_one(int coll, const ck_t *k, size_t count, int mode, int inplace, int root, int salt)
{
    ck_call_t x;
    ck_start(&x, coll, k, count, mode, inplace, root, salt);
    if (mode == M_NONBLOCKING)
        MTEST_OK(MPI_Wait(&x.req, MPI_STATUS_IGNORE));
    if (mode != M_PERSISTENT) {
        ck_finish(&x, k);
        ck_free_call(&x);
        return;
    }
    int use_inplace = inplace && (coll != C_REDUCE || mtest_rank == root);
    for (int rep = 0; rep < 3; rep++) {
        x.salt = salt + 1 + rep;
        ck_fill(k, use_inplace ? x.rb : x.sb, x.in_count, mtest_rank, x.salt);
        MTEST_OK(MPI_Start(&x.req));
        MTEST_OK(MPI_Wait(&x.req, MPI_STATUS_IGNORE));
        ck_finish(&x, k);
    }
    MTEST_OK(MPI_Request_free(&x.req));
    ck_free_call(&x);
}

/* Four calls of coll outstanding at once (sizes 1 .. 1 MiB) with a point-to-point ring
 * in between, completed in reverse order. */
static inline void ck_overlap(int coll, int root)
{
    ck_t k = ck_make(K_INT);
    ck_call_t x[4];
    static const size_t cnt[4] = {1, 100, 40000, 262144};
    for (int i = 0; i < 4; i++)
        ck_start(&x[i], coll, &k, cnt[i], M_NONBLOCKING, i == 1, (root + i) % mtest_size, 500 + i);
    int me = mtest_rank, n = mtest_size, token = me, got = -1;
    MTEST_OK(MPI_Sendrecv(&token, 1, MPI_INT, (me + 1) % n, 3, &got, 1, MPI_INT, (me - 1 + n) % n, 3, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    MTEST_CHECK(got == (me - 1 + n) % n, "ring token %d", got);
    for (int i = 3; i >= 0; i--) {
        MTEST_OK(MPI_Wait(&x[i].req, MPI_STATUS_IGNORE));
        ck_finish(&x[i], &k);
        ck_free_call(&x[i]);
    }
}

/* The whole matrix for one collective: every count up to max_count with int/sum (all
 * modes, in place or not, vector type), other kinds on a few counts, then overlap. */
static inline void ck_matrix(int coll, int root, size_t max_count)
{
    int salt = 1;
    for (int kind = 0; kind < K_NKINDS; kind++) {
        ck_t k = ck_make(kind);
        for (size_t c = 0; c < CK_NCOUNTS; c++) {
            size_t count = ck_counts[c];
            if (count > max_count)
                continue;
            int big = count > 100000;
            if (kind == K_VEC && big)
                count /= 4;
            if (kind >= K_DBL && (c % 2 || big))
                continue;
            for (int mode = 0; mode < 3; mode++)
                for (int inplace = 0; inplace < 2; inplace++) {
                    if ((big || kind >= K_DBL) && mode != inplace)
                        continue; /* large and extra kinds: three of the six combinations */
                    ck_one(coll, &k, count, mode, inplace, root, salt++);
                }
        }
        ck_free(&k);
    }
    ck_overlap(coll, root);
}

#endif
