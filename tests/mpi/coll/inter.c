/* Collectives on intercommunicators: WORLD split into a low group of a ranks and a high
 * group of the rest (1+2 at 3 ranks, 2+2 at 4, 3+5 at 8, and (n-1)+1), joined by
 * Intercomm_create. Every collective of MPI-4.1 on intercommunicators (Barrier, Bcast,
 * Gather(v), Scatter(v), Allgather(v), Alltoall(v/w), Reduce, Allreduce, Reduce_scatter
 * (_block)) runs blocking, MPI_I*, persistent (started twice) and, where it has one, as its
 * _c form, with every rank of both groups as root (MPI_ROOT / MPI_PROC_NULL / remote
 * rank), against results computed locally; a vector type with gaps for the packed paths;
 * a non-commutative user operation (rank order);
 * several outstanding at once around point-to-point on the same intercommunicator; and the
 * errors: bad root (MPI_ERR_ROOT), MPI_IN_PLACE (MPI_ERR_BUFFER), Scan, Exscan and
 * neighbourhood collectives (MPI_ERR_COMM). Needs 2 or more ranks. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

enum { BLOCKING, NONBLOCKING, PERSISTENT, LARGE, NMODES };
static const char *const mode_name[NMODES] = {"blocking", "nonblocking", "persistent", "_c"};

/* One collective in a mode: plain, I* + Wait, *_init + 2 x (Start, Wait) + free, _c. */
#define COLL(mode, f, fi, finit, fc, ...)                      \
    do {                                                       \
        MPI_Request rq_;                                       \
        if ((mode) == BLOCKING) {                              \
            MTEST_OK(f(__VA_ARGS__));                          \
        } else if ((mode) == NONBLOCKING) {                    \
            MTEST_OK(fi(__VA_ARGS__, &rq_));                   \
            MTEST_OK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));       \
        } else if ((mode) == PERSISTENT) {                     \
            MTEST_OK(finit(__VA_ARGS__, MPI_INFO_NULL, &rq_)); \
            for (int k_ = 0; k_ < 2; k_++) {                   \
                MTEST_OK(MPI_Start(&rq_));                     \
                MTEST_OK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));   \
            }                                                  \
            MTEST_OK(MPI_Request_free(&rq_));                  \
        } else {                                               \
            MTEST_OK(fc(__VA_ARGS__));                         \
        }                                                      \
    } while (0)
/* Collectives whose _c form takes other array types: the _c mode runs the plain call. */
#define COLLV(mode, f, fi, finit, ...) COLL(mode, f, fi, finit, f, __VA_ARGS__)

#define SENT (-5)

typedef struct {
    MPI_Comm ic;
    int color, lrank, lsize, rsize, lbase, rbase; /* world rank = base + group rank */
} ictx_t;

/* Element j of world rank w's contribution (to: the destination's world rank, -1: any). */
static int val(int w, int to, int j) { return w * 100003 + (to + 1) * 1009 + j * 7 + 1; }

static void fill(int *b, int n, int v)
{
    for (int i = 0; i < n; i++)
        b[i] = v;
}

static int expect(const int *got, int n, int w, int to, int off, const char *what, const char *mode)
{
    for (int j = 0; j < n; j++)
        if (got[j] != val(w, to, off + j)) {
            mtest_error(__FILE__, __LINE__, "%s (%s): element %d is %d, expected %d (from world %d)", what, mode, j,
                        got[j], val(w, to, off + j), w);
            return 1;
        }
    return 0;
}

static int untouched(const int *b, int n, const char *what, const char *mode)
{
    for (int j = 0; j < n; j++)
        if (b[j] != SENT) {
            mtest_error(__FILE__, __LINE__, "%s (%s): element %d written at a rank that takes nothing", what, mode, j);
            return 1;
        }
    return 0;
}

/* Root argument for a root at rank rr of group g, and my role: 2 root, 1 PROC_NULL, 0 across. */
static int root_arg(const ictx_t *x, int g, int rr, int *role)
{
    if (x->color != g) {
        *role = 0;
        return rr;
    }
    *role = x->lrank == rr ? 2 : 1;
    return x->lrank == rr ? MPI_ROOT : MPI_PROC_NULL;
}

static void check_barrier(const ictx_t *x, int me)
{
    for (int m = BLOCKING; m < LARGE; m++)
        COLLV(m, MPI_Barrier, MPI_Ibarrier, MPI_Barrier_init, x->ic);
    /* the last rank of the high group arrives late; nobody may leave before it entered */
    double t0 = MPI_Wtime(), entered;
    if (me == mtest_size - 1)
        while (MPI_Wtime() - t0 < 0.2)
            ;
    entered = MPI_Wtime();
    MTEST_OK(MPI_Barrier(x->ic));
    double left = MPI_Wtime();
    MPI_Bcast(&entered, 1, MPI_DOUBLE, mtest_size - 1, MPI_COMM_WORLD);
    MTEST_CHECK(left >= entered, "left the intercomm barrier %.6f s before the last rank entered", entered - left);
}

static void check_bcast_reduce(const ictx_t *x, int me, int count)
{
    int *buf = mtest_malloc((size_t)count * sizeof(int) + 1), *out = mtest_malloc((size_t)count * sizeof(int) + 1);
    for (int g = 0; g < 2; g++) {
        int gsize = x->color == g ? x->lsize : x->rsize, gbase = x->color == g ? x->lbase : x->rbase;
        int obase = x->color == g ? x->rbase : x->lbase, osize = x->color == g ? x->rsize : x->lsize;
        for (int rr = 0; rr < gsize; rr++) {
            int role, root = root_arg(x, g, rr, &role), rw = gbase + rr;
            for (int m = 0; m < NMODES; m++) {
                const char *mn = mode_name[m];
                for (int j = 0; j < count; j++)
                    buf[j] = role == 2 ? val(rw, -1, j) : SENT;
                COLL(m, MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, MPI_Bcast_c, buf, count, MPI_INT, root, x->ic);
                if (role == 1)
                    untouched(buf, count, "Bcast at MPI_PROC_NULL", mn);
                else
                    expect(buf, count, rw, -1, 0, "Bcast", mn);

                for (int j = 0; j < count; j++)
                    buf[j] = val(me, -1, j);
                fill(out, count, SENT);
                COLL(m, MPI_Reduce, MPI_Ireduce, MPI_Reduce_init, MPI_Reduce_c, buf, out, count, MPI_INT, MPI_SUM, root,
                     x->ic);
                if (role == 2) {
                    for (int j = 0; j < count; j++) {
                        int sum = 0;
                        for (int i = 0; i < osize; i++)
                            sum += val(obase + i, -1, j);
                        if (out[j] != sum) {
                            mtest_error(__FILE__, __LINE__, "Reduce (%s) root world %d: element %d is %d, expected %d",
                                        mn, rw, j, out[j], sum);
                            break;
                        }
                    }
                } else {
                    untouched(out, count, "Reduce away from the root", mn);
                }
            }
        }
    }
    free(buf);
    free(out);
}

static void check_allreduce(const ictx_t *x, int me, int count)
{
    int *in = mtest_malloc((size_t)count * sizeof(int) + 1), *out = mtest_malloc((size_t)count * sizeof(int) + 1);
    for (int j = 0; j < count; j++)
        in[j] = val(me, -1, j);
    for (int m = 0; m < NMODES; m++) {
        fill(out, count, SENT);
        COLL(m, MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, MPI_Allreduce_c, in, out, count, MPI_INT, MPI_SUM,
             x->ic);
        for (int j = 0; j < count; j++) {
            int sum = 0;
            for (int i = 0; i < x->rsize; i++)
                sum += val(x->rbase + i, -1, j);
            if (out[j] != sum) {
                mtest_error(__FILE__, __LINE__, "Allreduce (%s): element %d is %d, expected %d", mode_name[m], j,
                            out[j], sum);
                break;
            }
        }
    }
    free(in);
    free(out);
}

/* Reduce_scatter(_block): both groups reduce total = lsize_low * lsize_high * k elements. */
static void check_reduce_scatter(const ictx_t *x, int me, int k)
{
    int total = x->lsize * x->rsize * k, block = x->rsize * k;
    int *in = mtest_malloc((size_t)total * sizeof(int)), *out = mtest_malloc((size_t)total * sizeof(int) + 4);
    int *counts = mtest_malloc((size_t)x->lsize * sizeof(int)), first = 0;
    for (int j = 0; j < total; j++)
        in[j] = val(me, -1, j);
    for (int i = 0, left = total; i < x->lsize; i++) { /* uneven: 0, 1, 2, 0, ... and the rest last */
        counts[i] = i == x->lsize - 1 ? left : (i % 3 < left ? i % 3 : left);
        left -= counts[i];
        if (i < x->lrank)
            first += counts[i];
    }
    for (int m = 0; m < NMODES; m++) {
        for (int blk = 0; blk < 2; blk++) {
            int n = blk ? block : counts[x->lrank], off = blk ? x->lrank * block : first;
            fill(out, n, SENT);
            if (blk)
                COLL(m, MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init,
                     MPI_Reduce_scatter_block_c, in, out, block, MPI_INT, MPI_SUM, x->ic);
            else
                COLLV(m, MPI_Reduce_scatter, MPI_Ireduce_scatter, MPI_Reduce_scatter_init, in, out, counts, MPI_INT,
                      MPI_SUM, x->ic);
            for (int j = 0; j < n; j++) {
                int sum = 0;
                for (int i = 0; i < x->rsize; i++)
                    sum += val(x->rbase + i, -1, off + j);
                if (out[j] != sum) {
                    mtest_error(__FILE__, __LINE__, "Reduce_scatter%s (%s): element %d is %d, expected %d",
                                blk ? "_block" : "", mode_name[m], j, out[j], sum);
                    break;
                }
            }
        }
    }
    free(in);
    free(out);
    free(counts);
}

/* Gather(v) and Scatter(v) with every root; v forms: remote rank i moves i + 1 blocks of
 * cnt, one block of gap after each (gaps stay untouched). */
static void check_rooted(const ictx_t *x, int me, int cnt)
{
    int n = (x->lsize > x->rsize ? x->lsize : x->rsize), big = 2 * n * (n + 1) * cnt + 1;
    int *one = mtest_malloc((size_t)big * sizeof(int)), *many = mtest_malloc((size_t)big * sizeof(int));
    int *counts = mtest_malloc((size_t)n * sizeof(int)), *displs = mtest_malloc((size_t)n * sizeof(int));
    for (int g = 0; g < 2; g++) {
        int gsize = x->color == g ? x->lsize : x->rsize, gbase = x->color == g ? x->lbase : x->rbase;
        for (int rr = 0; rr < gsize; rr++) {
            int role, root = root_arg(x, g, rr, &role), rw = gbase + rr;
            for (int i = 0; i < x->rsize; i++)
                counts[i] = (i + 1) * cnt, displs[i] = i ? displs[i - 1] + counts[i - 1] + cnt : 0;
            for (int m = 0; m < NMODES; m++) {
                const char *mn = mode_name[m];
                for (int v = 0; v < 2; v++) {
                    int mine = v ? (x->lrank + 1) * cnt : cnt;
                    /* gather: across sends `mine` elements to the root */
                    fill(many, big, SENT);
                    for (int j = 0; j < mine; j++)
                        one[j] = val(me, rw, j);
                    if (v)
                        COLLV(m, MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init, one, mine, MPI_INT, many, counts, displs,
                              MPI_INT, root, x->ic);
                    else
                        COLL(m, MPI_Gather, MPI_Igather, MPI_Gather_init, MPI_Gather_c, one, cnt, MPI_INT, many, cnt,
                             MPI_INT, root, x->ic);
                    if (role == 2) {
                        for (int i = 0; i < x->rsize; i++) {
                            int at = v ? displs[i] : i * cnt, len = v ? counts[i] : cnt;
                            expect(many + at, len, x->rbase + i, rw, 0, v ? "Gatherv" : "Gather", mn);
                            if (v)
                                untouched(many + at + len, cnt, "Gatherv gap", mn);
                        }
                    } else {
                        untouched(many, big, "Gather receive buffer away from the root", mn);
                    }
                    /* scatter: the root sends remote rank i its block */
                    if (role == 2)
                        for (int i = 0; i < x->rsize; i++) {
                            int at = v ? displs[i] : i * cnt, len = v ? counts[i] : cnt;
                            for (int j = 0; j < len; j++)
                                many[at + j] = val(rw, x->rbase + i, j);
                        }
                    fill(one, big, SENT);
                    if (v)
                        COLLV(m, MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init, many, counts, displs, MPI_INT, one,
                              mine, MPI_INT, root, x->ic);
                    else
                        COLL(m, MPI_Scatter, MPI_Iscatter, MPI_Scatter_init, MPI_Scatter_c, many, cnt, MPI_INT, one,
                             cnt, MPI_INT, root, x->ic);
                    if (role == 0)
                        expect(one, mine, rw, me, 0, v ? "Scatterv" : "Scatter", mn);
                    else
                        untouched(one, big, "Scatter receive buffer in the root's group", mn);
                }
            }
        }
    }
    free(one);
    free(many);
    free(counts);
    free(displs);
}

/* Allgather(v), Alltoall(v/w); v forms: Allgatherv's rank s sends s % 3 + 1 blocks of cnt,
 * Alltoallv's rank s sends rank r (s + r) % 3 + 1, placed at 4 * i * cnt for remote rank i. */
static int vcount(int s, int r, int cnt) { return ((s + r) % 3 + 1) * cnt; }

static void check_all(const ictx_t *x, int me, int cnt)
{
    int rs = x->rsize, big = 4 * rs * 3 * cnt + 1;
    int *sbuf = mtest_malloc((size_t)big * sizeof(int)), *rbuf = mtest_malloc((size_t)big * sizeof(int));
    int *sc = mtest_malloc((size_t)rs * sizeof(int)), *sd = mtest_malloc((size_t)rs * sizeof(int));
    int *rc = mtest_malloc((size_t)rs * sizeof(int)), *rd = mtest_malloc((size_t)rs * sizeof(int));
    int *sdb = mtest_malloc((size_t)rs * sizeof(int)), *rdb = mtest_malloc((size_t)rs * sizeof(int));
    MPI_Datatype *types = mtest_malloc((size_t)rs * sizeof(MPI_Datatype));
    for (int i = 0; i < rs; i++) {
        types[i] = MPI_INT;
        sd[i] = rd[i] = 4 * i * cnt;
        sdb[i] = rdb[i] = sd[i] * (int)sizeof(int);
    }
    for (int m = 0; m < NMODES; m++) {
        const char *mn = mode_name[m];
        /* Allgather: my block to everyone across */
        for (int j = 0; j < cnt; j++)
            sbuf[j] = val(me, -1, j);
        fill(rbuf, big, SENT);
        COLL(m, MPI_Allgather, MPI_Iallgather, MPI_Allgather_init, MPI_Allgather_c, sbuf, cnt, MPI_INT, rbuf, cnt,
             MPI_INT, x->ic);
        for (int i = 0; i < rs; i++)
            expect(rbuf + i * cnt, cnt, x->rbase + i, -1, 0, "Allgather", mn);
        int mine = (x->lrank % 3 + 1) * cnt;
        for (int j = 0; j < mine; j++)
            sbuf[j] = val(me, -1, j);
        for (int i = 0; i < rs; i++)
            rc[i] = (i % 3 + 1) * cnt;
        fill(rbuf, big, SENT);
        COLLV(m, MPI_Allgatherv, MPI_Iallgatherv, MPI_Allgatherv_init, sbuf, mine, MPI_INT, rbuf, rc, rd, MPI_INT,
              x->ic);
        for (int i = 0; i < rs; i++) {
            expect(rbuf + rd[i], rc[i], x->rbase + i, -1, 0, "Allgatherv", mn);
            untouched(rbuf + rd[i] + rc[i], 4 * cnt - rc[i], "Allgatherv gap", mn);
        }
        /* Alltoall */
        for (int i = 0; i < rs; i++)
            for (int j = 0; j < cnt; j++)
                sbuf[i * cnt + j] = val(me, x->rbase + i, j);
        fill(rbuf, big, SENT);
        COLL(m, MPI_Alltoall, MPI_Ialltoall, MPI_Alltoall_init, MPI_Alltoall_c, sbuf, cnt, MPI_INT, rbuf, cnt, MPI_INT,
             x->ic);
        for (int i = 0; i < rs; i++)
            expect(rbuf + i * cnt, cnt, x->rbase + i, me, 0, "Alltoall", mn);
        /* Alltoallv and Alltoallw (byte displacements) */
        for (int i = 0; i < rs; i++) {
            sc[i] = vcount(x->lrank, i, cnt), rc[i] = vcount(i, x->lrank, cnt);
            for (int j = 0; j < sc[i]; j++)
                sbuf[sd[i] + j] = val(me, x->rbase + i, j);
        }
        for (int w = 0; w < 2; w++) {
            fill(rbuf, big, SENT);
            if (w)
                COLLV(m, MPI_Alltoallw, MPI_Ialltoallw, MPI_Alltoallw_init, sbuf, sc, sdb, types, rbuf, rc, rdb, types,
                      x->ic);
            else
                COLLV(m, MPI_Alltoallv, MPI_Ialltoallv, MPI_Alltoallv_init, sbuf, sc, sd, MPI_INT, rbuf, rc, rd,
                      MPI_INT, x->ic);
            for (int i = 0; i < rs; i++) {
                expect(rbuf + rd[i], rc[i], x->rbase + i, me, 0, w ? "Alltoallw" : "Alltoallv", mn);
                untouched(rbuf + rd[i] + rc[i], 4 * cnt - rc[i], w ? "Alltoallw gap" : "Alltoallv gap", mn);
            }
        }
    }
    free(sbuf);
    free(rbuf);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(sdb);
    free(rdb);
    free(types);
}

/* A vector type with gaps (2 ints at offsets 0 and 2, extent 3 ints): packed paths. */
static void check_noncontig(const ictx_t *x, int me)
{
    enum { N = 50 };
    MPI_Datatype vt;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vt);
    MPI_Type_commit(&vt);
    int in[3 * N], out[3 * N], gat[3 * N * 8];
    for (int i = 0; i < 3 * N; i++)
        in[i] = i % 3 == 1 ? SENT : val(me, -1, i);
    fill(out, 3 * N, SENT);
    MTEST_OK(MPI_Allreduce(in, out, N, vt, MPI_SUM, x->ic));
    for (int i = 0; i < 3 * N; i++) {
        int sum = 0;
        for (int r = 0; r < x->rsize; r++)
            sum += val(x->rbase + r, -1, i);
        if (out[i] != (i % 3 == 1 ? SENT : sum)) {
            mtest_error(__FILE__, __LINE__, "Allreduce on a vector type: int %d is %d, expected %d", i, out[i],
                        i % 3 == 1 ? SENT : sum);
            break;
        }
    }
    /* Bcast from the low group's rank 0 and Gather to it */
    int role, root = root_arg(x, 0, 0, &role);
    for (int i = 0; i < 3 * N; i++)
        out[i] = role == 2 ? in[i] : SENT;
    MTEST_OK(MPI_Bcast(out, N, vt, root, x->ic));
    if (role == 0)
        for (int i = 0; i < 3 * N; i++)
            if (out[i] != (i % 3 == 1 ? SENT : val(0, -1, i))) {
                mtest_error(__FILE__, __LINE__, "Bcast on a vector type: int %d is %d", i, out[i]);
                break;
            }
    fill(gat, 3 * N * 8, SENT);
    MTEST_OK(MPI_Gather(in, N, vt, gat, 2 * N, MPI_INT, root, x->ic));
    if (role == 2)
        for (int r = 0; r < x->rsize; r++)
            for (int e = 0; e < 2 * N; e++) {
                int i = e / 2 * 3 + e % 2 * 2;
                if (gat[r * 2 * N + e] != val(x->rbase + r, -1, i)) {
                    mtest_error(__FILE__, __LINE__, "Gather of a vector type: from remote %d int %d is %d", r, e,
                                gat[r * 2 * N + e]);
                    r = x->rsize;
                    break;
                }
            }
    MPI_Type_free(&vt);
}

/* 2x2 matrix product mod a prime: associative, not commutative; in is the left factor. */
enum { PRIME = 10007 };
static void matmul(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const int *a = in;
    int *b = inout;
    for (int k = 0; k + 4 <= *len; k += 4, a += 4, b += 4) {
        int r[4] = {(a[0] * b[0] + a[1] * b[2]) % PRIME, (a[0] * b[1] + a[1] * b[3]) % PRIME,
                    (a[2] * b[0] + a[3] * b[2]) % PRIME, (a[2] * b[1] + a[3] * b[3]) % PRIME};
        memcpy(b, r, sizeof r);
    }
}

static void mat_of(int w, int j, int *m)
{
    m[0] = (w * 7 + j + 1) % PRIME, m[1] = (w + 3 * j + 2) % PRIME, m[2] = (5 * w + j) % PRIME, m[3] = w % 3 + 1;
}

/* Reduce and Allreduce with a non-commutative operation: the other group's matrices must
 * multiply in rank order. */
static void check_noncomm(const ictx_t *x, int me)
{
    enum { NM = 3 };
    int in[4 * NM], out[4 * NM], ref[4 * NM];
    MPI_Op op;
    MTEST_OK(MPI_Op_create(matmul, 0, &op));
    for (int j = 0; j < NM; j++)
        mat_of(me, j, in + 4 * j);
    for (int j = 0; j < NM; j++) {
        int *r = ref + 4 * j, m[4], len = 4;
        mat_of(x->rbase, j, r);
        for (int i = 1; i < x->rsize; i++) {
            mat_of(x->rbase + i, j, m);
            matmul(r, m, &len, NULL);
            memcpy(r, m, sizeof m);
        }
    }
    fill(out, 4 * NM, SENT);
    MTEST_OK(MPI_Allreduce(in, out, 4 * NM, MPI_INT, op, x->ic));
    MTEST_CHECK(!memcmp(out, ref, sizeof ref), "Allreduce with a non-commutative op: not the rank-order product");
    int role, root = root_arg(x, 1, 0, &role);
    fill(out, 4 * NM, SENT);
    MTEST_OK(MPI_Reduce(in, out, 4 * NM, MPI_INT, op, root, x->ic));
    if (role == 2)
        MTEST_CHECK(!memcmp(out, ref, sizeof ref), "Reduce with a non-commutative op: not the rank-order product");
    MPI_Op_free(&op);
}

/* Several collectives outstanding at once, with point-to-point on the same intercomm. */
static void check_overlap(const ictx_t *x, int me)
{
    enum { N = 1000 };
    static int a[N], ra[N], b[N], tok;
    MPI_Request rq[5];
    for (int j = 0; j < N; j++)
        a[j] = val(me, -1, j);
    int role, root = root_arg(x, 1, 0, &role);
    for (int j = 0; j < N; j++)
        b[j] = role == 2 ? val(me, -1, j) : SENT;
    MTEST_OK(MPI_Ibarrier(x->ic, &rq[0]));
    MTEST_OK(MPI_Iallreduce(a, ra, N, MPI_INT, MPI_SUM, x->ic, &rq[1]));
    MTEST_OK(MPI_Ibcast(b, N, MPI_INT, root, x->ic, &rq[2]));
    /* point-to-point with the remote rank of my index, when it exists, both ways */
    int peer = x->lrank < x->rsize ? x->lrank : MPI_PROC_NULL, mine = me;
    tok = -1;
    MTEST_OK(MPI_Irecv(&tok, 1, MPI_INT, peer, 0, x->ic, &rq[3]));
    MTEST_OK(MPI_Isend(&mine, 1, MPI_INT, peer, 0, x->ic, &rq[4]));
    MTEST_OK(MPI_Waitall(5, rq, MPI_STATUSES_IGNORE));
    if (peer != MPI_PROC_NULL)
        MTEST_CHECK(tok == x->rbase + peer, "point-to-point beside collectives: got %d, expected %d", tok,
                    x->rbase + peer);
    for (int j = 0; j < N; j++) {
        int sum = 0;
        for (int i = 0; i < x->rsize; i++)
            sum += val(x->rbase + i, -1, j);
        if (ra[j] != sum) {
            mtest_error(__FILE__, __LINE__, "overlapped Iallreduce: element %d is %d, expected %d", j, ra[j], sum);
            break;
        }
    }
    if (role == 0)
        expect(b, N, x->rbase, -1, 0, "overlapped Ibcast", "nonblocking");
}

static void check_errors(const ictx_t *x)
{
    int buf[4] = {0}, out[4] = {0}, cnt[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    MPI_Request rq;
    MPI_Comm_set_errhandler(x->ic, MPI_ERRORS_RETURN);
    MTEST_ERR(MPI_Bcast(buf, 1, MPI_INT, x->rsize, x->ic), MPI_ERR_ROOT);
    MTEST_ERR(MPI_Ibcast(buf, 1, MPI_INT, -7, x->ic, &rq), MPI_ERR_ROOT);
    MTEST_ERR(MPI_Reduce(buf, out, 1, MPI_INT, MPI_SUM, x->rsize + 3, x->ic), MPI_ERR_ROOT);
    MTEST_ERR(MPI_Gather(buf, 1, MPI_INT, out, 1, MPI_INT, x->rsize, x->ic), MPI_ERR_ROOT);
    MTEST_ERR(MPI_Scatterv(buf, cnt, cnt, MPI_INT, out, 1, MPI_INT, -9, x->ic), MPI_ERR_ROOT);
    MTEST_ERR(MPI_Allreduce(MPI_IN_PLACE, out, 1, MPI_INT, MPI_SUM, x->ic), MPI_ERR_BUFFER);
    MTEST_ERR(MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, out, 1, MPI_INT, x->ic), MPI_ERR_BUFFER);
    MTEST_ERR(MPI_Reduce_scatter_block(MPI_IN_PLACE, out, 1, MPI_INT, MPI_SUM, x->ic), MPI_ERR_BUFFER);
    MTEST_ERR(MPI_Scan(buf, out, 1, MPI_INT, MPI_SUM, x->ic), MPI_ERR_COMM);
    MTEST_ERR(MPI_Exscan_init(buf, out, 1, MPI_INT, MPI_SUM, x->ic, MPI_INFO_NULL, &rq), MPI_ERR_COMM);
    MTEST_ERR(MPI_Neighbor_allgather(buf, 1, MPI_INT, out, 1, MPI_INT, x->ic), MPI_ERR_COMM);
    /* nothing was started: a collective after the errors still matches */
    MTEST_OK(MPI_Allreduce(buf, out, 1, MPI_INT, MPI_SUM, x->ic));
}

static void run(int a)
{
    int me = mtest_rank, n = mtest_size;
    ictx_t x;
    x.color = me >= a;
    x.lbase = x.color ? a : 0;
    x.rbase = x.color ? 0 : a;
    x.lsize = x.color ? n - a : a;
    x.rsize = n - x.lsize;
    x.lrank = me - x.lbase;
    MPI_Comm local;
    MTEST_OK(MPI_Comm_split(MPI_COMM_WORLD, x.color, me, &local));
    MTEST_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, x.rbase, 42, &x.ic));
    check_barrier(&x, me);
    check_bcast_reduce(&x, me, 5);
    check_bcast_reduce(&x, me, 70000); /* rendezvous-sized */
    check_allreduce(&x, me, 3);
    check_allreduce(&x, me, 40000);
    check_reduce_scatter(&x, me, 2);
    check_rooted(&x, me, 3);
    check_all(&x, me, 2);
    check_all(&x, me, 3000);
    check_noncontig(&x, me);
    check_noncomm(&x, me);
    check_overlap(&x, me);
    check_errors(&x);
    MPI_Comm_free(&x.ic);
    MPI_Comm_free(&local);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int n = mtest_size;
    if (n < 2)
        return mtest_finalize();
    int a = n == 3 ? 1 : n == 8 ? 3 : n / 2;
    run(a);
    if (n - 1 != a)
        run(n - 1);
    return mtest_finalize();
}
