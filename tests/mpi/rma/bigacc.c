/* Accumulates past 1 MiB with every predefined operation, from two origins at once.
 * Across nodes (RMPI_TOPO_FAKE_NODES) such an accumulate is one message gathered from the
 * user's buffer (a rendezvous over tcp; src/rma/ops.c am_gathered) that the target reduces
 * into its window; on one node it runs under the target's accumulate lock (direct.c) or,
 * with RMPI_RMA_DIRECT=0, as a message. Rank 0 is the target; the others are origins.
 * - every predefined op on a type it takes (int, double, unsigned char, MPI_2INT pairs for
 *   MAXLOC/MINLOC), 1 MiB of data and a few elements, at a displacement past
 *   the window's start: every origin accumulates the whole range at once under lock_all;
 *   the result is exactly the initial values reduced with every origin's data (the ops are
 *   commutative and the values exact), computed by MPI_Reduce_local; REPLACE leaves every
 *   element equal to one origin's value (element-wise atomicity);
 * - ordering of one origin's accumulates (MPI's default accumulate_ordering): each origin
 *   REPLACEs its own range, then SUMs into it, three times; the target checks replace + sum (a
 *   sum applied before the replace it follows would be lost);
 * - the origin buffer is overwritten right after the flush: data still read after the
 *   flush returned would add the new values. */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define OFF 8 /* bytes: the target range starts past the window's start */

typedef struct {
    int v, i;
} int2_t;

typedef struct {
    MPI_Op op;
    MPI_Datatype type;
    const char *name;
} acc_case_t;

static size_t type_size(MPI_Datatype t)
{
    int s;
    MPI_Type_size(t, &s);
    return (size_t)s;
}

/* Element k of rank r's data (r 0: the window's initial values) for case c. */
static void fill(const acc_case_t *c, int r, void *buf, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        unsigned h = (unsigned)(k * 2654435761u) ^ (unsigned)(r * 40503u);
        if (c->type == MPI_DOUBLE)
            ((double *)buf)[k] = (double)(h % 1000) - 500.0; /* sums of these stay exact */
        else if (c->type == MPI_UNSIGNED_CHAR)
            ((unsigned char *)buf)[k] = (unsigned char)(h >> 8);
        else if (c->type == MPI_2INT)
            ((int2_t *)buf)[k] = (int2_t){(int)(h % 7), r * 1000003 + (int)(k % 1000)};
        else if (c->op == MPI_PROD)
            ((int *)buf)[k] = 1 + (int)(h % 3);
        else if (c->op == MPI_LAND || c->op == MPI_LOR || c->op == MPI_LXOR)
            ((int *)buf)[k] = (int)((h >> 5) & 1) * (int)(1 + h % 5);
        else if (c->op == MPI_SUM)
            ((int *)buf)[k] = (int)(h % 100000) - 50000;
        else
            ((int *)buf)[k] = (int)h;
    }
}

static void one_case(const acc_case_t *c, int rank, int size, char *mem, MPI_Win win)
{
    size_t es = type_size(c->type), n = ((size_t)1 << 20) / es + 3, bytes = n * es;
    char *src = malloc(bytes);
    if (rank == 0) {
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        fill(c, 0, mem + OFF, n);
        MTEST_OK(MPI_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank > 0) {
        fill(c, rank, src, n);
        MTEST_OK(MPI_Win_lock_all(0, win));
        MTEST_OK(MPI_Accumulate(src, (int)n, c->type, 0, OFF, (int)n, c->type, c->op, win));
        MTEST_OK(MPI_Win_flush(0, win));
        memset(src, 0x5a, bytes); /* complete: nothing may read these */
        MTEST_OK(MPI_Win_unlock_all(win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char *want = malloc(bytes), **data = calloc((size_t)size, sizeof *data);
        fill(c, 0, want, n);
        for (int r = 1; r < size; r++) {
            data[r] = malloc(bytes);
            fill(c, r, data[r], n);
            if (c->op != MPI_REPLACE && c->op != MPI_NO_OP)
                MTEST_OK(MPI_Reduce_local(data[r], want, (int)n, c->type, c->op));
        }
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        int bad = 0;
        for (size_t k = 0; k < n && bad < 3; k++) {
            const char *got = mem + OFF + k * es;
            int ok = memcmp(got, want + k * es, es) == 0;
            if (c->op == MPI_REPLACE) /* one origin's element, whole */
                for (int r = 1; r < size && !ok; r++)
                    ok = memcmp(got, data[r] + k * es, es) == 0;
            if (!ok) {
                MTEST_CHECK(0, "%s: element %zu of %zu differs from the reference", c->name, k, n);
                bad++;
            }
        }
        MTEST_OK(MPI_Win_unlock(0, win));
        for (int r = 1; r < size; r++)
            free(data[r]);
        free(data);
        free(want);
    }
    free(src);
}

/* Each origin r owns [OFF + (r - 1) * bytes, + bytes): REPLACE, then SUM, in one epoch. */
static void ordered(int rank, int size, char *mem, MPI_Win win)
{
    size_t n = ((size_t)1 << 20) / sizeof(int) + 5, bytes = n * sizeof(int);
    int *a = malloc(bytes), *b = malloc(bytes);
    for (size_t k = 0; k < n; k++) {
        a[k] = rank * 100000 + (int)(k % 4099);
        b[k] = (int)(k % 7) + 1;
    }
    MPI_Aint at = OFF + (MPI_Aint)(rank - 1) * (MPI_Aint)bytes;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank > 0) {
        MTEST_OK(MPI_Win_lock_all(0, win));
        for (int round = 0; round < 3; round++) {
            MTEST_OK(MPI_Accumulate(a, (int)n, MPI_INT, 0, at, (int)n, MPI_INT, MPI_REPLACE, win));
            MTEST_OK(MPI_Accumulate(b, (int)n, MPI_INT, 0, at, (int)n, MPI_INT, MPI_SUM, win));
        }
        MTEST_OK(MPI_Win_unlock_all(win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MTEST_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        for (int r = 1; r < size; r++) {
            const int *got = (const int *)(void *)(mem + OFF + (size_t)(r - 1) * bytes);
            int bad = 0;
            for (size_t k = 0; k < n && bad < 3; k++) {
                int want = r * 100000 + (int)(k % 4099) + (int)(k % 7) + 1;
                int v;
                memcpy(&v, got + k, sizeof v);
                if (v != want) {
                    MTEST_CHECK(0, "ordering: origin %d element %zu is %d, expected %d", r, k, v, want);
                    bad++;
                }
            }
        }
        MTEST_OK(MPI_Win_unlock(0, win));
    }
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const acc_case_t cases[] = {
        {MPI_SUM, MPI_INT, "SUM int"},
        {MPI_SUM, MPI_DOUBLE, "SUM double"},
        {MPI_PROD, MPI_INT, "PROD int"},
        {MPI_MAX, MPI_INT, "MAX int"},
        {MPI_MIN, MPI_DOUBLE, "MIN double"},
        {MPI_MAX, MPI_UNSIGNED_CHAR, "MAX unsigned char"},
        {MPI_LAND, MPI_INT, "LAND int"},
        {MPI_LOR, MPI_INT, "LOR int"},
        {MPI_LXOR, MPI_INT, "LXOR int"},
        {MPI_BAND, MPI_INT, "BAND int"},
        {MPI_BOR, MPI_UNSIGNED_CHAR, "BOR unsigned char"},
        {MPI_BXOR, MPI_INT, "BXOR int"},
        {MPI_MAXLOC, MPI_2INT, "MAXLOC 2int"},
        {MPI_MINLOC, MPI_2INT, "MINLOC 2int"},
        {MPI_REPLACE, MPI_INT, "REPLACE int"},
        {MPI_NO_OP, MPI_INT, "NO_OP int"},
    };
    size_t wbytes = OFF + ((size_t)1 << 20) * 2 + 64;
    size_t obytes = OFF + (size > 1 ? (size_t)(size - 1) : 1) * (((size_t)1 << 20) + 5 * sizeof(int));
    wbytes = obytes > wbytes ? obytes : wbytes;
    char *mem;
    MPI_Win win;
    MTEST_OK(MPI_Win_allocate(rank == 0 ? (MPI_Aint)wbytes : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        one_case(&cases[i], rank, size, mem, win);
    ordered(rank, size, mem, win);
    MTEST_OK(MPI_Win_free(&win));
    return mtest_finalize();
}
