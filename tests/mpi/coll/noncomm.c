/* Non-commutative user operation: 2x2 integer matrices multiplied modulo a prime (in on the
 * left), so any reordering of ranks changes the result. Allreduce, Reduce (two roots), Scan,
 * Exscan and Reduce_scatter_block against the product in rank order, small and large.
 * Until MPI_Op_create is implemented (ops branch) the program says so and passes. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>

#define P 7919

typedef struct {
    int a, b, c, d;
} mat_t;

static void matmul(void *in, void *inout, int *len, MPI_Datatype *type)
{
    mat_t *x = in, *y = inout;
    for (int i = 0; i < *len; i++) {
        mat_t l = x[i], r = y[i];
        y[i].a = (l.a * r.a + l.b * r.c) % P;
        y[i].b = (l.a * r.b + l.b * r.d) % P;
        y[i].c = (l.c * r.a + l.d * r.c) % P;
        y[i].d = (l.c * r.b + l.d * r.d) % P;
    }
}

static mat_t mine(int r, int i, int salt)
{
    mat_t m = {1 + (r * 3 + i + salt) % 5, (r + 2 * i) % 7, (r * 5 + salt) % 3, 1 + (i + r) % 4};
    return m;
}

/* product of ranks lo..hi for element i */
static mat_t expect(int lo, int hi, int i, int salt)
{
    mat_t acc = mine(hi, i, salt);
    for (int r = hi - 1; r >= lo; r--) {
        mat_t l = mine(r, i, salt);
        int one = 1;
        matmul(&l, &acc, &one, NULL);
    }
    return acc;
}

static void check(const mat_t *got, int count, int first, int lo, int hi, int salt, const char *what)
{
    int bad = 0;
    for (int i = 0; i < count; i++) {
        mat_t w = expect(lo, hi, first + i, salt);
        if ((got[i].a != w.a || got[i].b != w.b || got[i].c != w.c || got[i].d != w.d) && !bad++)
            mtest_error(__FILE__, __LINE__, "%s count %d: element %d is (%d %d %d %d), expected (%d %d %d %d)", what,
                        count, i, got[i].a, got[i].b, got[i].c, got[i].d, w.a, w.b, w.c, w.d);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank, n = mtest_size;
    MPI_Op op;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (MPI_Op_create(matmul, 0, &op) != MPI_SUCCESS) {
        if (me == 0)
            printf("noncomm: MPI_Op_create is not available yet; skipped\n");
        return mtest_finalize();
    }
    MPI_Datatype mt;
    MPI_Type_contiguous(4, MPI_INT, &mt);
    MPI_Type_commit(&mt);
    static const int counts[] = {1, 3, 1000, 40000};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int count = counts[k], salt = (int)k;
        mat_t *s = malloc((size_t)count * n * sizeof *s), *r = malloc((size_t)count * n * sizeof *r);
        for (int i = 0; i < count * n; i++)
            s[i] = mine(me, i, salt);
        MTEST_OK(MPI_Allreduce(s, r, count, mt, op, MPI_COMM_WORLD));
        check(r, count, 0, 0, n - 1, salt, "allreduce");
        for (int root = 0; root<n; root += n - 1> 0 ? n - 1 : 1) {
            MTEST_OK(MPI_Reduce(s, r, count, mt, op, root, MPI_COMM_WORLD));
            if (me == root)
                check(r, count, 0, 0, n - 1, salt, "reduce");
        }
        MTEST_OK(MPI_Scan(s, r, count, mt, op, MPI_COMM_WORLD));
        check(r, count, 0, 0, me, salt, "scan");
        MTEST_OK(MPI_Exscan(s, r, count, mt, op, MPI_COMM_WORLD));
        if (me > 0)
            check(r, count, 0, 0, me - 1, salt, "exscan");
        MTEST_OK(MPI_Reduce_scatter_block(s, r, count, mt, op, MPI_COMM_WORLD));
        check(r, count, me * count, 0, n - 1, salt, "reduce_scatter_block");
        free(s);
        free(r);
    }
    MPI_Type_free(&mt);
    MPI_Op_free(&op);
    return mtest_finalize();
}
