/* Allgather, Alltoall and Bcast on every predefined datatype, and Reduce (int sum, a
 * vector type with gaps, double max, unsigned xor), while collective knobs are switched
 * through MPI_T between calls (their scope is MPI_T_SCOPE_ALL_EQ: every rank writes the
 * same value at the same point), as bench/coll.c's A/B mode does: the 2-rank frames of
 * cells (RMPI_COLL_SHM_CELLS 0, 16, 128; Bcast, Reduce, Allgather, Alltoall), the 2-rank
 * line frames of Bcast and Reduce (RMPI_COLL_SHM_LINES 256, 0, 40 with the cells off, so
 * line frames take 1-40 bytes, and 40 with them on), the 2-rank deep ring of Bcast and
 * Reduce (RMPI_COLL_SHM_BCAST_DEEP / _REDUCE_DEEP 0, then 32 KiB), the line-ring
 * steps (RMPI_COLL_SHM_MOVE_LINE 256, 48, 0 and the largest slot), the step buffers, single copy
 * (RMPI_COLL_SHM_ALLGATHER_CMA / _ALLTOALL_CMA 0 and back, with the 2-rank fast state's
 * segment (RMPI_COLL_SHM_TWO_SEGMENT) off then on again unless the environment sets it,
 * the own block copied with
 * non-temporal stores, RMPI_COLL_SHM_CMA_NT 1, and cached, 0) and the point-to-point
 * algorithms (RMPI_COLL_ALLGATHER / RMPI_COLL_ALLTOALL by item name), the oversubscribed
 * Reduce in single copy at every size (RMPI_COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA 1, then 0:
 * 4 ranks on this machine's 2 cores), its state, in pieces every rank takes
 * (RMPI_COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA_SPLIT 0), the oversubscribed Bcast in single copy
 * at every size (RMPI_COLL_SHM_OVERSUBSCRIBED_BCAST_CMA 1, then 0), the state that moves the
 * oversubscribed Reduce, Bcast and Allreduce (with their windows at every size) between the
 * segment and single copy (RMPI_COLL_SHM_OVERSUBSCRIBED_STATE slow, fast, and auto with rank
 * 0's yield thresholds switched before every call, so that the state it publishes flips
 * while calls run), Allreduce (the kinds of Reduce, in place at odd calls), and the 2-rank
 * state that picks the segment or single copy (RMPI_COLL_SHM_STATE slow, fast, auto with a
 * probe every 8 steps, and auto with RMPI_COLL_SHM_STATE_RT switched between 0 and 1e12
 * before every call, so that the probes flip the decision while calls run: a rank that
 * took another path than its peer would hang or corrupt a result; the 2-rank single-copy
 * Allreduce meanwhile at every size in the fast state up to 4 KiB and from 16 KiB in the
 * slow one, RMPI_COLL_SHM_ALLREDUCE_CMA 1 and _CMA_MAX 4096), each call against a
 * local reference. Counts 1 to 24 elements, so a block is below, at and above a line
 * slot's 48 bytes; types with holes (MPI_LONG_DOUBLE_INT, MPI_SHORT_INT ...) are compared
 * packed. On WORLD and a split in reversed rank order. With the argument `keep`, the
 * point-to-point Allgather and Alltoall algorithms are left as the environment forced them. */
#include "collcheck.h"
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

static const MPI_Datatype types[] = {MPI_CHAR,
                                     MPI_SIGNED_CHAR,
                                     MPI_UNSIGNED_CHAR,
                                     MPI_BYTE,
                                     MPI_WCHAR,
                                     MPI_SHORT,
                                     MPI_UNSIGNED_SHORT,
                                     MPI_INT,
                                     MPI_UNSIGNED,
                                     MPI_LONG,
                                     MPI_UNSIGNED_LONG,
                                     MPI_LONG_LONG,
                                     MPI_UNSIGNED_LONG_LONG,
                                     MPI_FLOAT,
                                     MPI_DOUBLE,
                                     MPI_LONG_DOUBLE,
                                     MPI_C_BOOL,
                                     MPI_INT8_T,
                                     MPI_INT16_T,
                                     MPI_INT32_T,
                                     MPI_INT64_T,
                                     MPI_UINT8_T,
                                     MPI_UINT16_T,
                                     MPI_UINT32_T,
                                     MPI_UINT64_T,
                                     MPI_AINT,
                                     MPI_OFFSET,
                                     MPI_COUNT,
                                     MPI_C_FLOAT_COMPLEX,
                                     MPI_C_DOUBLE_COMPLEX,
                                     MPI_C_LONG_DOUBLE_COMPLEX,
                                     MPI_FLOAT_INT,
                                     MPI_DOUBLE_INT,
                                     MPI_LONG_INT,
                                     MPI_2INT,
                                     MPI_SHORT_INT,
                                     MPI_LONG_DOUBLE_INT,
                                     MPI_PACKED};
#define NTYPES (int)(sizeof types / sizeof types[0])
static const int counts[] = {1, 2, 3, 5, 8, 24, 700};
#define NCOUNTS (int)(sizeof counts / sizeof counts[0])

/* One setting: a control variable and the value every rank writes (an integer, or an item
 * of the variable's enumeration when item is set). */
typedef struct setting {
    const char *cvar, *item;
    long long value;
} setting_t;

static const setting_t settings[] = {{"RMPI_COLL_SHM_MOVE_LINE", NULL, 256},
                                     {"RMPI_COLL_SHM_CELLS", NULL, 0},
                                     {"RMPI_COLL_SHM_CELLS", NULL, 16},
                                     {"RMPI_COLL_SHM_CELLS", NULL, 128},
                                     {"RMPI_COLL_SHM_LINES", NULL, 256},
                                     {"RMPI_COLL_SHM_LINES", NULL, 0},
                                     {"RMPI_COLL_SHM_CELLS", NULL, 0},
                                     {"RMPI_COLL_SHM_LINES", NULL, 40},
                                     {"RMPI_COLL_SHM_CELLS", NULL, 128},
                                     {"RMPI_COLL_SHM_BCAST_DEEP", NULL, 0},
                                     {"RMPI_COLL_SHM_REDUCE_DEEP", NULL, 0},
                                     {"RMPI_COLL_SHM_MOVE_LINE", NULL, 48},
                                     {"RMPI_COLL_SHM_BCAST_DEEP", NULL, 32768},
                                     {"RMPI_COLL_SHM_REDUCE_DEEP", NULL, 32768},
                                     {"RMPI_COLL_SHM_MOVE_LINE", NULL, 0},
                                     {"RMPI_COLL_SHM_MOVE_LINE", NULL, 4096},
                                     {"RMPI_COLL_SHM_CMA_NT", NULL, 1},
                                     {"RMPI_COLL_SHM_ALLGATHER_CMA", NULL, 0},
                                     {"RMPI_COLL_SHM_ALLTOALL_CMA", NULL, 0},
                                     {"RMPI_COLL_SHM_TWO_SEGMENT", NULL, 0},
                                     {"RMPI_COLL_SHM_ALLGATHER_CMA", NULL, 16384},
                                     {"RMPI_COLL_SHM_ALLTOALL_CMA", NULL, 16384},
                                     {"RMPI_COLL_SHM_TWO_SEGMENT", NULL, 8388608},
                                     {"RMPI_COLL_SHM_CMA_NT", NULL, 0},
                                     {"RMPI_COLL_SHM_ALLGATHER_CMA", NULL, 0},
                                     {"RMPI_COLL_SHM_ALLTOALL_CMA", NULL, 0},
                                     {"RMPI_COLL_SHM_CMA_NT", NULL, 16777216},
                                     {"RMPI_COLL_SHM_ALLGATHER_CMA", NULL, 16384},
                                     {"RMPI_COLL_SHM_ALLTOALL_CMA", NULL, 16384},
                                     {"RMPI_COLL_ALLGATHER", "ring", 0},
                                     {"RMPI_COLL_ALLTOALL", "pairwise", 0},
                                     {"RMPI_COLL_ALLGATHER", "bruck", 0},
                                     {"RMPI_COLL_ALLTOALL", "bruck", 0},
                                     {"RMPI_COLL_ALLGATHER", "auto", 0},
                                     {"RMPI_COLL_ALLTOALL", "auto", 0},
                                     {"RMPI_COLL_SHM_MOVE_LINE", NULL, 48},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA", NULL, 1},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA", NULL, 0},
                                     {"RMPI_COLL_SHM_ALLREDUCE_CMA", NULL, 1},
                                     {"RMPI_COLL_SHM_ALLREDUCE_CMA_MAX", NULL, 4096},
                                     {"RMPI_COLL_SHM_STATE", "slow", 0},
                                     {"RMPI_COLL_SHM_STATE", "fast", 0},
                                     {"RMPI_COLL_SHM_STATE_MS", NULL, 0},
                                     {"RMPI_COLL_SHM_STATE", "auto", 0},
                                     {"flip", NULL, 1},
                                     {"flip", NULL, 0},
                                     {"RMPI_COLL_SHM_STATE_RT", NULL, 200},
                                     {"RMPI_COLL_SHM_STATE_MS", NULL, 20},
                                     {"RMPI_COLL_SHM_ALLREDUCE_CMA", NULL, 32768},
                                     {"RMPI_COLL_SHM_ALLREDUCE_CMA_MAX", NULL, 2097152},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_BCAST_CMA", NULL, 1},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_BCAST_CMA", NULL, 0},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA_SLOW", NULL, 1},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_BCAST_CMA_SLOW", NULL, 1},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_ALLREDUCE_CMA_SLOW", NULL, 1},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_ALLREDUCE", NULL, 1},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA_SPLIT", NULL, 0},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_STATE", "slow", 0},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_STATE", "fast", 0},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_WINDOW", NULL, 1},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_TRIAL_MS", NULL, 0},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_STATE", "auto", 0},
                                     {"flipover", NULL, 1},
                                     {"flipover", NULL, 0},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_YIELDS", NULL, 150},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_TRIAL_MS", NULL, 500},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_WINDOW", NULL, 4194304},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA_SPLIT", NULL, 262144},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_REDUCE_CMA_SLOW", NULL, 65536},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_BCAST_YIELDS", NULL, 160},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_ALLREDUCE_YIELDS", NULL, 250},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_BCAST_CMA_SLOW", NULL, 65536},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_ALLREDUCE_CMA_SLOW", NULL, 65536},
                                     {"RMPI_COLL_SHM_OVERSUBSCRIBED_ALLREDUCE", NULL, 16384}};
#define NSETTINGS (int)(sizeof settings / sizeof settings[0])

/* Writes setting s on this rank; 0 when done. */
static int apply(const setting_t *s)
{
    int idx, count, nl = 0, dl = 0, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum en;
    MPI_T_cvar_handle h;
    if (MTEST_OK(MPI_T_cvar_get_index(s->cvar, &idx)) != MPI_SUCCESS ||
        MTEST_OK(MPI_T_cvar_get_info(idx, NULL, &nl, &verb, &dt, &en, NULL, &dl, &bind, &scope)) != MPI_SUCCESS)
        return -1;
    MTEST_CHECK(scope == MPI_T_SCOPE_ALL_EQ, "%s: scope %d, expected MPI_T_SCOPE_ALL_EQ", s->cvar, scope);
    if (MTEST_OK(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count)) != MPI_SUCCESS)
        return -1;
    union {
        int i;
        long long ll;
        double d;
    } v, back;
    if (s->item) {
        int num = 0;
        char name[64];
        int len = sizeof name;
        v.i = -1;
        MTEST_OK(MPI_T_enum_get_info(en, &num, name, &len));
        for (int j = 0; j < num; j++) {
            char item[64];
            int il = sizeof item, iv;
            MTEST_OK(MPI_T_enum_get_item(en, j, &iv, item, &il));
            if (!strcmp(item, s->item))
                v.i = iv;
        }
        MTEST_CHECK(v.i >= 0, "%s has no item %s", s->cvar, s->item);
    } else if (dt == MPI_INT) {
        v.i = (int)s->value;
    } else if (dt == MPI_DOUBLE) {
        v.d = (double)s->value;
    } else {
        v.ll = s->value;
    }
    MTEST_OK(MPI_T_cvar_write(h, &v));
    MTEST_OK(MPI_T_cvar_read(h, &back));
    MTEST_CHECK(dt == MPI_INT      ? back.i == v.i
                : dt == MPI_DOUBLE ? back.d == v.d
                                   : back.ll == v.ll,
                "%s did not take the written value", s->cvar);
    MTEST_OK(MPI_T_cvar_handle_free(&h));
    return 0;
}

/* byte i of the block from src to dst (Allgather: dst -1) in round seed */
static unsigned char pat(int src, int dst, size_t i, int seed)
{
    return (unsigned char)(src * 131 + (dst + 1) * 17 + (int)(i % 251) * 7 + seed * 29 + 1);
}

/* One call of type t, cnt elements a block, checked packed against the blocks its sources
 * sent (rebuilt here from the pattern). */
static void one(MPI_Comm c, int gather, MPI_Datatype t, int cnt, int seed, const char *what)
{
    int n, me, psize;
    MPI_Aint lb, ext;
    MPI_Comm_size(c, &n);
    MPI_Comm_rank(c, &me);
    MPI_Type_get_extent(t, &lb, &ext);
    size_t blk = (size_t)ext * (size_t)cnt; /* bytes a block spans */
    MPI_Pack_size(cnt, t, c, &psize);
    unsigned char *s = malloc(blk * (size_t)n), *r = malloc(blk * (size_t)n), *ref = malloc(blk);
    unsigned char *p1 = malloc((size_t)psize), *p2 = malloc((size_t)psize);
    for (int d = 0; d < n; d++)
        for (size_t i = 0; i < blk; i++)
            s[(size_t)d * blk + i] = pat(me, gather ? -1 : d, i, seed);
    memset(r, 0xEE, blk * (size_t)n);
    if (gather)
        MTEST_OK(MPI_Allgather(s, cnt, t, r, cnt, t, c));
    else
        MTEST_OK(MPI_Alltoall(s, cnt, t, r, cnt, t, c));
    int bad = 0;
    for (int q = 0; q < n; q++) {
        for (size_t i = 0; i < blk; i++)
            ref[i] = pat(q, gather ? -1 : me, i, seed);
        int a = 0, b = 0;
        MPI_Pack(ref, cnt, t, p1, psize, &a, c);
        MPI_Pack(r + (size_t)q * blk, cnt, t, p2, psize, &b, c);
        bad += a != b || memcmp(p1, p2, (size_t)a);
    }
    int tl = 0;
    char tn[MPI_MAX_OBJECT_NAME];
    MPI_Type_get_name(t, tn, &tl);
    MTEST_CHECK(!bad, "%s %s of %d %s (seed %d): %d blocks wrong", what, gather ? "Allgather" : "Alltoall", cnt, tn,
                seed, bad);
    free(s);
    free(r);
    free(ref);
    free(p1);
    free(p2);
}

/* A Bcast of cnt elements of t from root, checked packed against the root's pattern. */
static void one_bcast(MPI_Comm c, MPI_Datatype t, int cnt, int root, int seed, const char *what)
{
    int me, psize;
    MPI_Aint lb, ext;
    MPI_Comm_rank(c, &me);
    MPI_Type_get_extent(t, &lb, &ext);
    size_t blk = (size_t)ext * (size_t)cnt;
    MPI_Pack_size(cnt, t, c, &psize);
    unsigned char *b = malloc(blk), *ref = malloc(blk), *p1 = malloc((size_t)psize), *p2 = malloc((size_t)psize);
    for (size_t i = 0; i < blk; i++)
        ref[i] = pat(root, -1, i, seed);
    if (me == root)
        memcpy(b, ref, blk);
    else
        memset(b, 0xEE, blk);
    MTEST_OK(MPI_Bcast(b, cnt, t, root, c));
    int a = 0, z = 0;
    MPI_Pack(ref, cnt, t, p1, psize, &a, c);
    MPI_Pack(b, cnt, t, p2, psize, &z, c);
    int tl = 0;
    char tn[MPI_MAX_OBJECT_NAME];
    MPI_Type_get_name(t, tn, &tl);
    MTEST_CHECK(a == z && !memcmp(p1, p2, (size_t)a), "%s Bcast of %d %s from %d (seed %d) wrong", what, cnt, tn, root,
                seed);
    free(b);
    free(ref);
    free(p1);
    free(p2);
}

/* A Reduce of count elements of kind k to root (in place at the root on odd seeds). */
static void one_reduce(MPI_Comm c, const ck_t *k, size_t count, int root, int seed, const char *what)
{
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    void *sb = ck_alloc(k, count), *rb = ck_alloc(k, count);
    ck_fill(k, sb, count, me, seed);
    int inplace = me == root && seed % 2;
    if (inplace)
        ck_fill(k, rb, count, me, seed);
    MTEST_OK(MPI_Reduce(inplace ? MPI_IN_PLACE : sb, rb, (int)count, k->type, k->op, root, c));
    if (me == root)
        ck_check(k, rb, count, 0, 0, n - 1, seed, what);
    free(sb);
    free(rb);
}

/* An Allreduce of count elements of kind k (in place on odd seeds), checked on every rank. */
static void one_allreduce(MPI_Comm c, const ck_t *k, size_t count, int seed, const char *what)
{
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    void *sb = ck_alloc(k, count), *rb = ck_alloc(k, count);
    int inplace = seed % 2;
    ck_fill(k, inplace ? rb : sb, count, me, seed);
    MTEST_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : sb, rb, (int)count, k->type, k->op, c));
    ck_check(k, rb, count, 0, 0, n - 1, seed, what);
    free(sb);
    free(rb);
}

/* With flip set, before every call every rank writes RMPI_COLL_SHM_STATE_RT 0 or 1e12 in
 * turn: each probe (RMPI_COLL_SHM_STATE_MS 0: every 8 steps) then says the opposite of the
 * one before. */
static int flip;

static void flip_rt(int seed)
{
    if (!flip)
        return;
    setting_t rt = {"RMPI_COLL_SHM_STATE_RT", NULL, seed % 2 ? 0 : 1000000000000ll};
    apply(&rt);
}

/* With flipover set (an oversubscribed node, its state auto, every call rank 0 roots a
 * window, trials at once), before every Reduce, Bcast and Allreduce every rank writes
 * RMPI_COLL_SHM_OVERSUBSCRIBED_YIELDS, _BCAST_YIELDS and _ALLREDUCE_YIELDS 0 or 1e12 in turn, so rank 0's
 * windows say slow and fast alternately and it publishes a new state as often as the steps
 * allow (every 128): a rank that took another path than the others would hang or corrupt
 * a result. */
static int flipover;

static void flip_over(int seed)
{
    if (!flipover)
        return;
    setting_t y = {"RMPI_COLL_SHM_OVERSUBSCRIBED_YIELDS", NULL, seed % 2 ? 0 : 1000000000000ll};
    apply(&y);
    y.cvar = "RMPI_COLL_SHM_OVERSUBSCRIBED_BCAST_YIELDS";
    apply(&y);
    y.cvar = "RMPI_COLL_SHM_OVERSUBSCRIBED_ALLREDUCE_YIELDS";
    apply(&y);
}

static int keep; /* leave RMPI_COLL_ALLGATHER and RMPI_COLL_ALLTOALL alone */

static void run(MPI_Comm c, const char *what)
{
    int seed = 0, n;
    MPI_Comm_size(c, &n);
    for (int k = 0; k < NSETTINGS; k++) {
        if (keep &&
            (!strcmp(settings[k].cvar, "RMPI_COLL_ALLGATHER") || !strcmp(settings[k].cvar, "RMPI_COLL_ALLTOALL")))
            continue;
        /* a testlist line that sets the 2-rank segment's limit keeps it for the whole run */
        if (!strcmp(settings[k].cvar, "RMPI_COLL_SHM_TWO_SEGMENT") && getenv(settings[k].cvar))
            continue;
        if (!strcmp(settings[k].cvar, "flip"))
            flip = (int)settings[k].value;
        else if (!strcmp(settings[k].cvar, "flipover"))
            flipover = (int)settings[k].value;
        else
            apply(&settings[k]);
        /* many Reduces, Bcasts (half of each rooted at rank 0) and Allreduces while the
         * state flips: enough steps for several published states, each call checked */
        for (int i = 0; flipover && i < 1800; i++) {
            ck_t ck = ck_make(i % K_NKINDS);
            static const size_t fcounts[] = {1, 700, 20000}; /* the last from 64 KiB: measured */
            size_t cnt = fcounts[i / K_NKINDS % 3];
            int root = i / 3 % 2 ? 0 : (i / 6) % n;
            flip_over(++seed);
            if (i % 3 == 0)
                one_reduce(c, &ck, cnt, root, seed, what);
            else if (i % 3 == 1)
                one_bcast(c, types[i % NTYPES], (int)cnt, root, seed, what);
            else
                one_allreduce(c, &ck, cnt, seed, what);
            ck_free(&ck);
        }
        for (int ti = 0; ti < NTYPES; ti++)
            for (int ci = 0; ci < NCOUNTS; ci++) {
                flip_rt(++seed);
                one(c, 1, types[ti], counts[ci], seed, what);
                flip_rt(++seed);
                one(c, 0, types[ti], counts[ci], seed, what);
                flip_rt(++seed);
                one_bcast(c, types[ti], counts[ci], seed % n, seed, what);
            }
        /* Reduce: in the 2-rank cell frames (1-30 elements), below, in and above the
         * state's windows of 4 to 64 KiB */
        static const size_t rcounts[] = {1, 3, 30, 700, 1500, 5000, 12000};
        for (int kind = 0; kind < K_NKINDS; kind++) {
            ck_t ck = ck_make(kind);
            for (size_t ci = 0; ci < sizeof rcounts / sizeof rcounts[0]; ci++) {
                flip_rt(++seed);
                one_reduce(c, &ck, rcounts[ci], seed % n, seed, what);
                flip_rt(++seed);
                one_allreduce(c, &ck, rcounts[ci], seed, what);
            }
            ck_free(&ck);
        }
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    keep = argc > 1 && !strcmp(argv[1], "keep");
    int provided;
    MTEST_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    run(MPI_COMM_WORLD, "world");
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, mtest_size - mtest_rank, &rev);
    run(rev, "reversed");
    MPI_Comm_free(&rev);
    MTEST_OK(MPI_T_finalize());
    return mtest_finalize();
}
