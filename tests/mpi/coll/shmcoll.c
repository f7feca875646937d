/* The shared-memory collectives (coll/shm.c) against locally computed references: Bcast,
 * Reduce, Allreduce, Allgather and Alltoall, sizes on both sides of the step and slice
 * boundaries (the testlist sets RMPI_COLL_SHM_CHUNK small), in place or not, contiguous
 * and with a vector type with gaps, every root, on WORLD, on a split communicator in
 * reversed rank order (not the whole node) and on a dup. With `threads`: MPI_THREAD_MULTIPLE,
 * two threads running the same on two communicators at once. With `onecpu`: every rank pins
 * itself to the first CPU it may use before MPI_Init, so the node has more ranks than CPUs
 * on any machine (the oversubscribed choice: Bcast, Reduce and single copy in the
 * segment, and below RMPI_COLL_SHM_OVERSUBSCRIBED_SMALL Barrier, Allreduce, Allgather and
 * Alltoall too; the testlist checks RMPI_REPORT's counts). Barrier on WORLD (not with
 * `threads`): every rank's store before it is seen after it, through a shared window. Every predefined
 * (type, op) pair: tests/mpi/datatype/ops with -n. */
#include "mtest.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const int sizes[] = {0, 1, 2, 15, 16, 17, 1000, 1007, 1008, 1024, 1025, 2047, 4096, 5000, 12345};
#define NSIZES (int)(sizeof sizes / sizeof sizes[0])

static int val(int r, int i) { return (r * 7919 + i * 31) % 10007 - 5000; }

static void reductions(MPI_Comm c, int me, int n, int cnt, int *in, int *out, int *ref)
{
    for (int i = 0; i < cnt; i++) {
        in[i] = val(me, i);
        ref[i] = 0;
        for (int r = 0; r < n; r++)
            ref[i] += val(r, i);
    }
    for (int inplace = 0; inplace < 2; inplace++) {
        memcpy(out, in, (size_t)cnt * sizeof *out);
        MTEST_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, cnt, MPI_INT, MPI_SUM, c));
        int bad = 0;
        for (int i = 0; i < cnt; i++)
            bad += out[i] != ref[i];
        MTEST_CHECK(!bad, "Allreduce SUM of %d ints%s: %d wrong", cnt, inplace ? " in place" : "", bad);
        for (int root = 0; root<n; root += n> 1 ? n - 1 : 1) {
            memcpy(out, in, (size_t)cnt * sizeof *out);
            const void *s = inplace && me == root ? MPI_IN_PLACE : in;
            MTEST_OK(MPI_Reduce(s, out, cnt, MPI_INT, MPI_SUM, root, c));
            bad = 0;
            for (int i = 0; me == root && i < cnt; i++)
                bad += out[i] != ref[i];
            MTEST_CHECK(!bad, "Reduce SUM of %d ints to %d%s: %d wrong", cnt, root, inplace ? " in place" : "", bad);
        }
    }
    /* MAX on doubles, MINLOC on pairs: other kernels and element sizes */
    double *d = malloc((size_t)(cnt + 1) * sizeof *d), *dr = malloc((size_t)(cnt + 1) * sizeof *dr);
    for (int i = 0; i < cnt; i++)
        d[i] = val(me, i) * 0.5;
    MTEST_OK(MPI_Allreduce(d, dr, cnt, MPI_DOUBLE, MPI_MAX, c));
    int bad = 0;
    for (int i = 0; i < cnt; i++) {
        double m = val(0, i) * 0.5;
        for (int r = 1; r < n; r++)
            m = val(r, i) * 0.5 > m ? val(r, i) * 0.5 : m;
        bad += dr[i] != m;
    }
    MTEST_CHECK(!bad, "Allreduce MAX of %d doubles: %d wrong", cnt, bad);
    struct {
        int v, i;
    } *p = malloc((size_t)(cnt + 1) * sizeof *p), *pr = malloc((size_t)(cnt + 1) * sizeof *pr);
    for (int i = 0; i < cnt; i++)
        p[i].v = val(me, i) % 3, p[i].i = me;
    MTEST_OK(MPI_Allreduce(p, pr, cnt, MPI_2INT, MPI_MINLOC, c));
    bad = 0;
    for (int i = 0; i < cnt; i++) {
        int mv = val(0, i) % 3, mi = 0;
        for (int r = 1; r < n; r++)
            if (val(r, i) % 3 < mv)
                mv = val(r, i) % 3, mi = r;
        bad += pr[i].v != mv || pr[i].i != mi;
    }
    MTEST_CHECK(!bad, "Allreduce MINLOC of %d pairs: %d wrong", cnt, bad);
    free(d), free(dr), free(p), free(pr);
}

/* A vector with gaps: cnt elements of 1 int every 2; the gaps must stay untouched. */
static void gaps(MPI_Comm c, int me, int n, int cnt, MPI_Datatype vec)
{
    int *b = malloc((size_t)(2 * cnt + 1) * sizeof *b);
    for (int i = 0; i < 2 * cnt; i++)
        b[i] = i % 2 ? -1 : val(me, i / 2);
    MTEST_OK(MPI_Allreduce(MPI_IN_PLACE, b, cnt, vec, MPI_SUM, c));
    int bad = 0;
    for (int i = 0; i < cnt; i++) {
        int want = 0;
        for (int r = 0; r < n; r++)
            want += val(r, i);
        bad += b[2 * i] != want || b[2 * i + 1] != -1;
    }
    MTEST_CHECK(!bad, "Allreduce in place on a vector of %d: %d wrong", cnt, bad);
    int root = n - 1;
    for (int i = 0; i < 2 * cnt; i++)
        b[i] = i % 2 ? -1 : me == root ? val(root, i) : 0;
    MTEST_OK(MPI_Bcast(b, cnt, vec, root, c));
    bad = 0;
    for (int i = 0; i < cnt; i++)
        bad += b[2 * i] != val(root, 2 * i) || b[2 * i + 1] != -1;
    MTEST_CHECK(!bad, "Bcast of a vector of %d from %d: %d wrong", cnt, root, bad);
    free(b);
}

static void movement(MPI_Comm c, int me, int n, int cnt)
{
    size_t blk = (size_t)cnt;
    int *s = malloc((n * blk + 1) * sizeof *s), *r = malloc((n * blk + 1) * sizeof *r);
    for (int root = 0; root < n; root++) {
        for (size_t i = 0; i < blk; i++)
            r[i] = me == root ? val(root, (int)i) : 0;
        MTEST_OK(MPI_Bcast(r, cnt, MPI_INT, root, c));
        int bad = 0;
        for (size_t i = 0; i < blk; i++)
            bad += r[i] != val(root, (int)i);
        MTEST_CHECK(!bad, "Bcast of %d ints from %d: %d wrong", cnt, root, bad);
    }
    for (int inplace = 0; inplace < 2; inplace++) {
        for (size_t i = 0; i < blk; i++)
            s[i] = val(me, (int)i);
        memset(r, 0, n * blk * sizeof *r);
        if (inplace)
            memcpy(r + (size_t)me * blk, s, blk * sizeof *s);
        MTEST_OK(MPI_Allgather(inplace ? MPI_IN_PLACE : s, cnt, MPI_INT, r, cnt, MPI_INT, c));
        int bad = 0;
        for (int q = 0; q < n; q++)
            for (size_t i = 0; i < blk; i++)
                bad += r[(size_t)q * blk + i] != val(q, (int)i);
        MTEST_CHECK(!bad, "Allgather of %d ints%s: %d wrong", cnt, inplace ? " in place" : "", bad);
        /* block to q from me: val(me * n + q, i) */
        int *a = inplace ? r : s;
        for (int q = 0; q < n; q++)
            for (size_t i = 0; i < blk; i++)
                a[(size_t)q * blk + i] = val(me * n + q, (int)i);
        MTEST_OK(MPI_Alltoall(inplace ? MPI_IN_PLACE : s, cnt, MPI_INT, r, cnt, MPI_INT, c));
        bad = 0;
        for (int q = 0; q < n; q++)
            for (size_t i = 0; i < blk; i++)
                bad += r[(size_t)q * blk + i] != val(q * n + me, (int)i);
        MTEST_CHECK(!bad, "Alltoall of %d ints%s: %d wrong", cnt, inplace ? " in place" : "", bad);
    }
    free(s), free(r);
}

/* Barrier: nobody leaves before every rank has entered. Round k: each rank stores k in its
 * word of a shared window and enters, the round's late rank after a pause; after it every
 * word must read k (an early exit reads the late rank's k - 1). */
static void barriers(MPI_Comm c, int me, int n)
{
    MPI_Comm node;
    MPI_Comm_split_type(c, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nn;
    MPI_Comm_size(node, &nn);
    int *mine, bad = 0;
    MPI_Win w;
    MTEST_OK(MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &w));
    MPI_Win_lock_all(MPI_MODE_NOCHECK, w);
    *mine = 0;
    MPI_Win_sync(w);
    MTEST_OK(MPI_Barrier(c));
    for (int k = 1; k <= 8 && nn == n; k++) {
        if (me == k % n)
            usleep(2000);
        __atomic_store_n(mine, k, __ATOMIC_RELEASE);
        MPI_Win_sync(w);
        MTEST_OK(MPI_Barrier(c));
        MPI_Win_sync(w);
        for (int r = 0; r < nn; r++) {
            MPI_Aint sz;
            int du, *p;
            MPI_Win_shared_query(w, r, &sz, &du, &p);
            if (__atomic_load_n(p, __ATOMIC_ACQUIRE) < k)
                bad++;
        }
        MTEST_OK(MPI_Barrier(c)); /* nobody stores k + 1 before all have read k */
    }
    MTEST_CHECK(!bad, "Barrier: %d words of earlier rounds seen after it", bad);
    MPI_Win_unlock_all(w);
    MPI_Win_free(&w);
    MPI_Comm_free(&node);
}

static void suite(MPI_Comm c)
{
    int me, n;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    MPI_Datatype one, vec;
    MPI_Type_vector(1, 1, 2, MPI_INT, &one);
    MPI_Type_create_resized(one, 0, 2 * sizeof(int), &vec);
    MPI_Type_free(&one);
    MPI_Type_commit(&vec);
    int max = sizes[NSIZES - 1];
    int *in = malloc((size_t)max * sizeof *in), *out = malloc((size_t)max * sizeof *out);
    int *ref = malloc((size_t)max * sizeof *ref);
    for (int k = 0; k < NSIZES; k++) {
        reductions(c, me, n, sizes[k], in, out, ref);
        gaps(c, me, n, sizes[k], vec);
        movement(c, me, n, sizes[k] / (k % 2 ? 1 : 3));
    }
    MPI_Type_free(&vec);
    free(in), free(out), free(ref);
}

static void *thread_main(void *arg)
{
    suite(*(MPI_Comm *)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 && !strcmp(argv[1], "threads"), provided;
    if (argc > 1 && !strcmp(argv[1], "onecpu") && mtest_pin_one_cpu("shmcoll"))
        return 1;
    if (threads)
        mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    else
        mtest_init(&argc, &argv);
    MPI_Comm half, dup, dup2;
    MPI_Comm_split(MPI_COMM_WORLD, mtest_rank % 2, -mtest_rank, &half);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup2);
    if (threads) {
        MTEST_CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
        pthread_t t;
        pthread_create(&t, NULL, thread_main, &dup2);
        suite(dup);
        pthread_join(t, NULL);
    } else {
        suite(MPI_COMM_WORLD);
        barriers(MPI_COMM_WORLD, mtest_rank, mtest_size);
        suite(half);
        suite(dup);
        /* a collective on one communicator between two on another */
        suite(half);
    }
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&dup2);
    return mtest_finalize();
}
