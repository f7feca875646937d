/* Single-copy (cross-memory attach) Allgather(v) and Alltoall(v) of coll/shm.c against
 * local references: predefined types of several sizes (1 to 32 bytes an element, pairs),
 * blocks on both sides of the single-copy thresholds (the testlist moves them), in place,
 * a vector type with gaps on the receive side (gaps untouched), uneven v counts with
 * zeros. With `refuse`, rank 1 installs a seccomp filter that makes process_vm_readv and
 * process_vm_writev fail with EPERM (as a ptrace policy would) after MPI_Init, so the
 * members must agree to copy through shared memory instead; the results must not change.
 * With `late`, the last rank sleeps 5 ms before each call of 1000 elements or more, so the
 * others, done with what they receive, claim the pieces meant for it and write them into
 * its buffers (process_vm_writev) while it sleeps (the testlist makes pieces 4k, so blocks
 * have many, the last one partial).
 * On 2 ranks, Reduce too (the two ranks combining straight from each other's buffers,
 * RMPI_COLL_SHM_REDUCE_CMA): INT SUM, DOUBLE MAX, 2INT MINLOC, SHORT_INT MAXLOC (6-byte
 * packed pairs, so pieces end inside no element), DOUBLE_COMPLEX PROD, and SUM on an int
 * vector with gaps (untouched), each to both roots, in place at the root, checked against
 * MPI_Reduce_local of the two inputs; with `order` (the line forcing single copy at every
 * size) some DOUBLE MAX elements are +0.0 against -0.0 and NaN against a number, whose
 * bits depend on the operands' order: every piece must be x0 op x1, whichever rank combined
 * it. */
#include "mtest.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#define GAP 0x5a

static void refuse_cma(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof f / sizeof f[0]), f};
    MTEST_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0,
                "seccomp filter: %s", strerror(errno));
}

static const struct {
    MPI_Datatype t;
    const char *name;
} types[] = {{MPI_CHAR, "MPI_CHAR"},
             {MPI_SHORT, "MPI_SHORT"},
             {MPI_INT, "MPI_INT"},
             {MPI_DOUBLE, "MPI_DOUBLE"},
             {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE"},
             {MPI_2INT, "MPI_2INT"},
             {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX"}};
#define NTYPES (int)(sizeof types / sizeof types[0])

/* Byte j of the block rank src sends to rank dst (allgather: dst 0). */
static unsigned char byte(int src, int dst, size_t j)
{
    return (unsigned char)(src * 131 + dst * 17 + j * 7 + j / 251);
}

static int me, n, late;

/* `late`: the last rank arrives 5 ms after the others at calls with many pieces. */
static void arrive(int cnt)
{
    if (late && me == n - 1 && cnt >= 1000)
        nanosleep(&(struct timespec){0, 5000000}, NULL);
}

/* Elements rank src sends rank dst: cnt in the regular forms; in the v forms uneven, with
 * zeros, and symmetric (an in-place Alltoallv sends what it receives). */
static int count_of(int v, int cnt, int src, int dst) { return !v ? cnt : (src + dst) % n == 1 ? 0 : cnt + src + dst; }

/* Compare what arrived at b (element size es, step elements apart: 1 dense, 2 gaps) with
 * the bytes src sent dst. */
static int check(const unsigned char *b, size_t es, int step, int cnt, int src, int dst)
{
    int bad = 0;
    for (int i = 0; i < cnt; i++)
        for (size_t k = 0; k < es; k++) {
            bad += b[(size_t)i * step * es + k] != byte(src, dst, (size_t)i * es + k);
            if (step == 2)
                bad += b[((size_t)i * 2 + 1) * es + k] != GAP;
        }
    return bad;
}

static void fill(unsigned char *b, size_t es, int cnt, int src, int dst)
{
    for (size_t j = 0; j < (size_t)cnt * es; j++)
        b[j] = byte(src, dst, j);
}

static void run(MPI_Datatype t, const char *name, int cnt)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    size_t es = (size_t)ext;
    MPI_Datatype one, gap;
    MPI_Type_vector(1, 1, 2, t, &one);
    MPI_Type_create_resized(one, 0, 2 * ext, &gap);
    MPI_Type_commit(&gap);
    MPI_Type_free(&one);
    size_t most = (size_t)cnt + 2 * (size_t)n;
    unsigned char *s = malloc(most * es * (size_t)n + 1), *r = malloc(most * 2 * es * (size_t)n + 1);
    int sc[64], sd[64], rc[64], rd[64];
    for (int v = 0; v < 2; v++)
        for (int mode = 0; mode < 3; mode++) { /* 0 dense, 1 in place, 2 gaps on the receive side */
            int inplace = mode == 1, step = mode == 2 ? 2 : 1;
            MPI_Datatype rt = step == 2 ? gap : t;
            /* room per block, in elements: regular blocks lie back to back */
            size_t per = v ? most : (size_t)cnt, sblk = per * es, rblk = per * step * es;
            const void *sb = inplace ? MPI_IN_PLACE : s;
            for (int q = 0; q < n; q++)
                rc[q] = count_of(v, cnt, q, 0), rd[q] = (int)((size_t)q * per);
            memset(r, GAP, rblk * (size_t)n);
            fill(inplace ? r + (size_t)me * rblk : s, es, rc[me], me, 0);
            arrive(cnt);
            if (v)
                MTEST_OK(MPI_Allgatherv(sb, rc[me], t, r, rc, rd, rt, MPI_COMM_WORLD));
            else
                MTEST_OK(MPI_Allgather(sb, cnt, t, r, cnt, rt, MPI_COMM_WORLD));
            int bad = 0;
            for (int q = 0; q < n; q++)
                bad += check(r + (size_t)q * rblk, es, step, rc[q], q, 0);
            MTEST_CHECK(!bad, "Allgather%s of %d %s%s: %d bytes wrong", v ? "v" : "", cnt, name,
                        inplace     ? " in place"
                        : step == 2 ? " into gaps"
                                    : "",
                        bad);
            for (int q = 0; q < n; q++) {
                sc[q] = count_of(v, cnt, me, q), sd[q] = (int)((size_t)q * per);
                rc[q] = count_of(v, cnt, q, me), rd[q] = (int)((size_t)q * per);
            }
            memset(r, GAP, rblk * (size_t)n);
            for (int q = 0; q < n; q++)
                fill(inplace ? r + (size_t)q * rblk : s + (size_t)q * sblk, es, sc[q], me, q);
            arrive(cnt);
            if (v)
                MTEST_OK(MPI_Alltoallv(sb, sc, sd, t, r, rc, rd, rt, MPI_COMM_WORLD));
            else
                MTEST_OK(MPI_Alltoall(sb, cnt, t, r, cnt, rt, MPI_COMM_WORLD));
            bad = 0;
            for (int q = 0; q < n; q++)
                bad += check(r + (size_t)q * rblk, es, step, rc[q], q, me);
            MTEST_CHECK(!bad, "Alltoall%s of %d %s%s: %d bytes wrong", v ? "v" : "", cnt, name,
                        inplace     ? " in place"
                        : step == 2 ? " into gaps"
                                    : "",
                        bad);
        }
    MPI_Type_free(&gap);
    free(s), free(r);
}

static int order;

/* Element i of rank r's Reduce input of type k (of the table below), as bytes at p. */
static void red_gen(int k, int r, size_t i, void *p)
{
    int v = (int)((i * 7 + (size_t)r * 13) % 1000) - 500;
    switch (k) {
    case 0: memcpy(p, &v, sizeof v); break;
    case 1: {
        double d = v * 0.5;
        if (order && i % 3 == 0)
            d = r ? -0.0 : 0.0;
        else if (order && i % 5 == 1 && r == 0)
            d = __builtin_nan("");
        memcpy(p, &d, sizeof d);
        break;
    }
    case 2: {
        int pr[2] = {v % 7, (int)(i % 5) + r};
        memcpy(p, pr, sizeof pr);
        break;
    }
    case 3: {
        struct {
            short s;
            int i;
        } x = {(short)(v % 9), r};
        memcpy(p, &x, sizeof x);
        break;
    }
    default: {
        double c[2] = {(double)(v % 3), (double)((int)(i % 4) - r)};
        memcpy(p, c, sizeof c);
    }
    }
}

static void run_reduce(int cnt)
{
    static const struct {
        MPI_Datatype t;
        MPI_Op op;
        const char *name;
    } rt[] = {{MPI_INT, MPI_SUM, "INT SUM"},
              {MPI_DOUBLE, MPI_MAX, "DOUBLE MAX"},
              {MPI_2INT, MPI_MINLOC, "2INT MINLOC"},
              {MPI_SHORT_INT, MPI_MAXLOC, "SHORT_INT MAXLOC"},
              {MPI_C_DOUBLE_COMPLEX, MPI_PROD, "DOUBLE_COMPLEX PROD"},
              {MPI_INT, MPI_SUM, "INT SUM into a vector with gaps"}};
    for (int k = 0; k < (int)(sizeof rt / sizeof rt[0]); k++) {
        int gaps = k == 5;
        MPI_Aint lb, ext;
        MPI_Type_get_extent(rt[k].t, &lb, &ext);
        size_t es = (size_t)ext, room = ((size_t)cnt + 1) * es * 2;
        MPI_Datatype t = rt[k].t, gap = MPI_DATATYPE_NULL;
        if (gaps) {
            MPI_Type_vector(cnt ? cnt : 1, 1, 2, MPI_INT, &gap);
            MPI_Type_commit(&gap);
        }
        unsigned char *x[2], *ref = malloc(room), *s = malloc(room), *out = malloc(room);
        for (int r = 0; r < 2; r++) {
            x[r] = malloc(room);
            memset(x[r], 0, room);
            for (int i = 0; i < cnt; i++)
                red_gen(gaps ? 0 : k, r, (size_t)i, x[r] + (size_t)i * es * (gaps ? 2 : 1));
        }
        /* the reference: x0 op x1 (MPI_Reduce_local: inout = in op inout) */
        memcpy(ref, x[1], room);
        if (gaps)
            MTEST_OK(MPI_Reduce_local(x[0], ref, 1, gap, MPI_SUM));
        else
            MTEST_OK(MPI_Reduce_local(x[0], ref, cnt, t, rt[k].op));
        for (int root = 0; root < 2; root++)
            for (int inplace = 0; inplace < 2; inplace++) {
                memcpy(s, x[me], room);
                memset(out, GAP, room);
                if (inplace && me == root)
                    memcpy(out, s, room);
                const void *sb = inplace && me == root ? MPI_IN_PLACE : s;
                arrive(cnt);
                if (gaps)
                    MTEST_OK(MPI_Reduce(sb, out, cnt ? 1 : 0, gap, MPI_SUM, root, MPI_COMM_WORLD));
                else
                    MTEST_OK(MPI_Reduce(sb, out, cnt, t, rt[k].op, root, MPI_COMM_WORLD));
                if (me != root)
                    continue;
                int bad = 0;
                for (size_t b = 0; b < (size_t)cnt * es * (gaps ? 2 : 1); b++) {
                    int in_gap = gaps && (b / es) % 2;
                    if (k == 3 && b % es >= 2 && b % es < 4)
                        continue; /* SHORT_INT's padding: not part of the type */
                    /* the gaps keep what was there: GAP, or the input in place */
                    bad += out[b] != (in_gap ? (inplace ? x[me][b] : GAP) : ref[b]);
                }
                MTEST_CHECK(!bad, "Reduce %s of %d to %d%s: %d bytes wrong", rt[k].name, cnt, root,
                            inplace ? " in place" : "", bad);
            }
        for (int r = 0; r < 2; r++)
            free(x[r]);
        free(ref), free(s), free(out);
        if (gaps)
            MPI_Type_free(&gap);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc > 1 && !strcmp(argv[1], "refuse") && me == 1)
        refuse_cma();
    late = argc > 1 && !strcmp(argv[1], "late");
    order = argc > 1 && !strcmp(argv[1], "order");
    static const int counts[] = {0, 1, 100, 1000, 5000};
    for (int k = 0; k < NTYPES; k++)
        for (int c = 0; c < (int)(sizeof counts / sizeof counts[0]); c++)
            run(types[k].t, types[k].name, counts[c]);
    static const int rcounts[] = {0, 1, 100, 1000, 5000, 70001};
    for (int c = 0; n == 2 && c < (int)(sizeof rcounts / sizeof rcounts[0]); c++)
        run_reduce(rcounts[c]);
    return mtest_finalize();
}
