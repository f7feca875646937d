/*
 * Helpers shared by the data-movement programs of tests/mpi/coll (rooted, allgather, alltoall, gather_*).
 *
 * Data: int element j of the block that rank src sends to rank dst is val(src, dst, j),
 * so a block from the wrong rank, for the wrong rank, shifted or truncated is caught.
 * Layouts: a buffer of blocks; block i holds cnt[i] elements of ints at stride st[i]
 * (st 1: MPI_INT, st 2: a resized vector taking every other int, so the receive or send
 * side is non-contiguous) starting at int offset off[i]. Regular layouts are what the
 * regular collectives expect (one extent of cnt elements apart, rank order); irregular
 * ones put the blocks in reverse rank order with a spare slot between them. Every int
 * that no block covers holds SENT and must keep it.
 * Modes: each collective runs blocking, as MPI_I* + Wait, and as *_init + three
 * Start/Wait rounds with the receive buffer reset before each (a restart must redo it).
 */
#ifndef GTEST_H
#define GTEST_H

#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENT (-7)

enum { BLOCKING, NONBLOCKING, PERSISTENT, NMODES };
static const char *const mode_name[] = {"blocking", "nonblocking", "persistent"};

static inline int val(int src, int dst, int j)
{
    unsigned h = (unsigned)src * 2654435761u ^ ((unsigned)dst + 7u) * 40503u ^ ((unsigned)j + 1u) * 2246822519u;
    return (int)(h & 0x7fffffff);
}

static inline MPI_Datatype strided_int(void)
{
    static MPI_Datatype t = MPI_DATATYPE_NULL;
    if (t == MPI_DATATYPE_NULL) {
        MPI_Datatype v;
        MPI_Type_vector(1, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, 2 * (MPI_Aint)sizeof(int), &t);
        MPI_Type_commit(&t);
        MPI_Type_free(&v);
    }
    return t;
}

static inline MPI_Datatype type_of(int stride) { return stride == 1 ? MPI_INT : strided_int(); }

typedef struct lay {
    int n;
    int cnt[64], st[64], off[64];
    size_t len;
    int *buf, *exp;
} lay_t;

/* Blocks of cnt[i] elements at stride st[i]; irregular: reverse order with gaps. */
static inline void lay_make(lay_t *L, int n, const int *cnt, const int *st, int irregular)
{
    memset(L, 0, sizeof *L);
    L->n = n;
    size_t at = 0;
    for (int k = 0; k < n; k++) {
        int i = irregular ? n - 1 - k : k;
        L->cnt[i] = cnt[i];
        L->st[i] = st[i];
        if (irregular)
            at = (at + 1 + (size_t)st[i] - 1) / (size_t)st[i] * (size_t)st[i]; /* a gap, aligned */
        L->off[i] = (int)at;
        at += (size_t)cnt[i] * (size_t)st[i];
    }
    L->len = at + 1;
    L->buf = mtest_malloc(L->len * sizeof(int));
    L->exp = mtest_malloc(L->len * sizeof(int));
}

static inline void lay_free(lay_t *L)
{
    free(L->buf);
    free(L->exp);
}

/* Set every covered int of `b` (buf or exp) to val(src(i), dst(i), j), the rest to SENT:
 * block i is from `src` to i when to_blocks, else from i to `src`. */
static inline void lay_set(lay_t *L, int *b, int me, int to_blocks)
{
    for (size_t x = 0; x < L->len; x++)
        b[x] = SENT;
    for (int i = 0; i < L->n; i++)
        for (int j = 0; j < L->cnt[i]; j++)
            b[L->off[i] + j * L->st[i]] = to_blocks ? val(me, i, j) : val(i, me, j);
}

/* Block i alone (the rest untouched). */
static inline void lay_set_block(lay_t *L, int *b, int i, int src, int dst)
{
    for (int j = 0; j < L->cnt[i]; j++)
        b[L->off[i] + j * L->st[i]] = val(src, dst, j);
}

static inline void lay_clear(lay_t *L)
{
    for (size_t x = 0; x < L->len; x++)
        L->buf[x] = SENT;
}

static inline int lay_check(const lay_t *L, const char *what)
{
    for (size_t x = 0; x < L->len; x++)
        if (L->buf[x] != L->exp[x]) {
            size_t bad = 0;
            for (size_t y = x; y < L->len; y++)
                bad += L->buf[y] != L->exp[y];
            MTEST_CHECK(0, "%s: int %zu is %d, expected %d (%zu of %zu wrong)", what, x, L->buf[x], L->exp[x], bad,
                        L->len);
            return 1;
        }
    return 0;
}

/* Displacements in extents of a common stride (v form) or in bytes (w form). */
static inline void lay_displs(const lay_t *L, int *displs, int bytes)
{
    for (int i = 0; i < L->n; i++)
        displs[i] = bytes ? L->off[i] * (int)sizeof(int) : L->off[i] / L->st[i];
}

/* Run a collective in a mode: f(mode, &req) issues the call (mode BLOCKING completes
 * it), reset() prepares the receive buffers before every (re)start. */
static inline void run_mode(int mode, int (*f)(int mode, MPI_Request *req), void (*reset)(void))
{
    MPI_Request req = MPI_REQUEST_NULL;
    reset();
    if (mode == BLOCKING) {
        MTEST_OK(f(mode, NULL));
        return;
    }
    MTEST_OK(f(mode, &req));
    if (mode == NONBLOCKING) {
        MTEST_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        MTEST_CHECK(req == MPI_REQUEST_NULL, "request not freed by Wait");
        return;
    }
    for (int rep = 0; rep < 3; rep++) {
        if (rep)
            reset();
        MTEST_OK(MPI_Start(&req));
        MTEST_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    }
    MTEST_OK(MPI_Request_free(&req));
}

/* Element counts: the regular size, and irregular per-rank counts with zeros. */
static inline int irregular_count(int i, int base) { return i % 3 == 1 ? 0 : base + i; }

/* Sizes the programs run: 0, small, and 256 KiB per rank (left out when the environment
 * has GTEST_SIZES=small, for the lines of the testlist that only vary the transport). */
static inline int nsizes(void)
{
    const char *e = getenv("GTEST_SIZES");
    return e && !strcmp(e, "small") ? 2 : 3;
}
static const int sizes[] = {0, 5, 65536};

/* Every case of a program: each size, the first nstrides (send, receive) stride pairs of
 * {1,1}, {2,1}, {1,2}, each mode, in place or not (*in_place). The large size runs a
 * subset: contiguous in every mode, strided sides blocking only. */
static inline void each_case(int nstrides, int *in_place, void (*one)(int size, int ss, int rs, int mode))
{
    static const int strides[][2] = {{1, 1}, {2, 1}, {1, 2}};
    for (int z = 0; z < nsizes(); z++)
        for (int s = 0; s < nstrides; s++)
            for (int mode = 0; mode < NMODES; mode++)
                for (*in_place = 0; *in_place < 2; ++*in_place)
                    if (!(z == 2 && s && mode != BLOCKING))
                        one(sizes[z], strides[s][0], strides[s][1], mode);
}

#endif
