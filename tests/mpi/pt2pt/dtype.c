/* Derived datatypes on the wire: vector (a matrix column, and a rendezvous-size strided
 * array), indexed, struct with padding (resized to the C struct), contiguous of a derived
 * type, MPI_DOUBLE_INT with count > 1; sent non-contiguous into contiguous and back.
 * Every value is checked, and so are the gaps of the receive layout, which must stay
 * untouched. Get_count/Get_elements, Type_size/extent; a type freed while a send using it
 * is pending; a persistent send of a derived type reused with new data. Pairs of ranks:
 * the even rank sends, the odd one receives. */
#include "mtest.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R 100
#define C 7

static int peer, sender;

static double val(int i, int j) { return i * 1000.0 + j + 0.25; }

static void column(void)
{
    MPI_Datatype col;
    MTEST_OK(MPI_Type_vector(R, 1, C, MPI_DOUBLE, &col));
    MTEST_OK(MPI_Type_commit(&col));
    int size = -1;
    MPI_Aint lb = -1, ext = -1;
    MTEST_OK(MPI_Type_size(col, &size));
    MTEST_OK(MPI_Type_get_extent(col, &lb, &ext));
    MTEST_CHECK(size == R * 8 && lb == 0 && ext == ((R - 1) * C + 1) * 8, "column type: size %d lb %ld extent %ld",
                size, (long)lb, (long)ext);
    static double a[R][C], v[R];
    if (sender) {
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++)
                a[i][j] = val(i, j);
        /* column 3 -> contiguous; contiguous -> column 5 */
        MTEST_OK(MPI_Send(&a[0][3], 1, col, peer, 1, MPI_COMM_WORLD));
        for (int i = 0; i < R; i++)
            v[i] = -val(i, 0);
        MTEST_OK(MPI_Send(v, R, MPI_DOUBLE, peer, 2, MPI_COMM_WORLD));
    } else {
        MPI_Status st;
        MTEST_OK(MPI_Recv(v, R, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &st));
        for (int i = 0; i < R; i++)
            if (v[i] != val(i, 3)) {
                MTEST_CHECK(0, "column -> contiguous: v[%d] = %g, expected %g", i, v[i], val(i, 3));
                break;
            }
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++)
                a[i][j] = 42.0;
        MTEST_OK(MPI_Recv(&a[0][5], 1, col, peer, 2, MPI_COMM_WORLD, &st));
        int cnt = -1, el = -1;
        MPI_Get_count(&st, col, &cnt);
        MPI_Get_elements(&st, col, &el);
        MTEST_CHECK(cnt == 1 && el == R, "contiguous -> column: Get_count %d Get_elements %d", cnt, el);
        int bad = 0;
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++) {
                double want = j == 5 ? -val(i, 0) : 42.0;
                if (a[i][j] != want && !bad++)
                    MTEST_CHECK(0, "contiguous -> column: a[%d][%d] = %g, expected %g", i, j, a[i][j], want);
            }
    }
    MTEST_OK(MPI_Type_free(&col));
    MTEST_CHECK(col == MPI_DATATYPE_NULL, "Type_free did not set the handle to MPI_DATATYPE_NULL");
}

/* 3 of every 5 doubles, 30000 blocks (720 KB of data): rendezvous. Sent with Isend, the
 * type freed before Wait; received by Irecv into the same layout. */
static void big_vector(void)
{
    enum { NB = 30000, BL = 3, STRIDE = 5 };
    double *x = mtest_malloc(sizeof(double) * NB * STRIDE);
    MPI_Datatype t;
    MTEST_OK(MPI_Type_vector(NB, BL, STRIDE, MPI_DOUBLE, &t));
    MTEST_OK(MPI_Type_commit(&t));
    MPI_Request rq;
    if (sender) {
        for (int i = 0; i < NB * STRIDE; i++)
            x[i] = i * 0.5;
        MTEST_OK(MPI_Isend(x, 1, t, peer, 3, MPI_COMM_WORLD, &rq));
        MTEST_OK(MPI_Type_free(&t));
        MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        for (int i = 0; i < NB * STRIDE; i++)
            x[i] = -1.0;
        MPI_Status st;
        MTEST_OK(MPI_Irecv(x, 1, t, peer, 3, MPI_COMM_WORLD, &rq));
        MTEST_OK(MPI_Type_free(&t));
        MTEST_OK(MPI_Wait(&rq, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_DOUBLE, &cnt);
        MTEST_CHECK(cnt == NB * BL, "big vector: Get_count(MPI_DOUBLE) %d", cnt);
        for (int i = 0; i < NB * STRIDE; i++) {
            double want = (i % STRIDE) < BL ? i * 0.5 : -1.0;
            if (x[i] != want) {
                MTEST_CHECK(0, "big vector: x[%d] = %g, expected %g", i, x[i], want);
                break;
            }
        }
    }
    free(x);
}

/* indexed {3,1,4,2} at {0,5,7,15} ints, count 2 (extent 17 ints): sent into 20 ints. */
static void indexed(void)
{
    const int bl[4] = {3, 1, 4, 2}, dp[4] = {0, 5, 7, 15};
    MPI_Datatype t;
    MTEST_OK(MPI_Type_indexed(4, bl, dp, MPI_INT, &t));
    MTEST_OK(MPI_Type_commit(&t));
    int size = -1;
    MPI_Aint lb, ext;
    MPI_Type_size(t, &size);
    MPI_Type_get_extent(t, &lb, &ext);
    MTEST_CHECK(size == 40 && lb == 0 && ext == 17 * 4, "indexed: size %d lb %ld extent %ld", size, (long)lb,
                (long)ext);
    int src[34], dst[34];
    int expect[20], n = 0;
    for (int c = 0; c < 2; c++)
        for (int b = 0; b < 4; b++)
            for (int k = 0; k < bl[b]; k++)
                expect[n++] = c * 17 + dp[b] + k;
    if (sender) {
        for (int i = 0; i < 34; i++)
            src[i] = i;
        MTEST_OK(MPI_Send(src, 2, t, peer, 4, MPI_COMM_WORLD));
        /* and the reverse: 20 contiguous ints into the indexed layout */
        for (int i = 0; i < 20; i++)
            src[i] = 500 + i;
        MTEST_OK(MPI_Send(src, 20, MPI_INT, peer, 5, MPI_COMM_WORLD));
    } else {
        MPI_Status st;
        for (int i = 0; i < 34; i++)
            dst[i] = -1;
        MTEST_OK(MPI_Recv(dst, 34, MPI_INT, peer, 4, MPI_COMM_WORLD, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_INT, &cnt);
        MTEST_CHECK(cnt == 20, "indexed -> ints: count %d", cnt);
        for (int i = 0; i < 20; i++)
            if (dst[i] != expect[i]) {
                MTEST_CHECK(0, "indexed -> ints: dst[%d] = %d, expected %d", i, dst[i], expect[i]);
                break;
            }
        for (int i = 0; i < 34; i++)
            dst[i] = -1;
        MTEST_OK(MPI_Recv(dst, 2, t, peer, 5, MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, t, &cnt);
        MTEST_CHECK(cnt == 2, "ints -> indexed: Get_count(indexed) %d", cnt);
        int want[34];
        for (int i = 0; i < 34; i++)
            want[i] = -1;
        for (int i = 0; i < 20; i++)
            want[expect[i]] = 500 + i;
        for (int i = 0; i < 34; i++)
            if (dst[i] != want[i]) {
                MTEST_CHECK(0, "ints -> indexed: dst[%d] = %d, expected %d", i, dst[i], want[i]);
                break;
            }
    }
    MTEST_OK(MPI_Type_free(&t));
}

struct rec {
    int a;
    double b;
    char c[3];
};

/* struct with padding, resized to sizeof(struct rec); 2000 records (rendezvous). The
 * padding of the receive buffer must stay untouched. */
static void structs(void)
{
    enum { N = 2000 };
    const int bl[3] = {1, 1, 3};
    const MPI_Aint dp[3] = {offsetof(struct rec, a), offsetof(struct rec, b), offsetof(struct rec, c)};
    const MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
    MPI_Datatype t0, t;
    MTEST_OK(MPI_Type_create_struct(3, bl, dp, ty, &t0));
    MTEST_OK(MPI_Type_create_resized(t0, 0, sizeof(struct rec), &t));
    MTEST_OK(MPI_Type_free(&t0));
    MTEST_OK(MPI_Type_commit(&t));
    int size = -1;
    MPI_Aint lb, ext;
    MPI_Type_size(t, &size);
    MPI_Type_get_extent(t, &lb, &ext);
    MTEST_CHECK(size == 4 + 8 + 3 && ext == (MPI_Aint)sizeof(struct rec), "struct: size %d extent %ld", size,
                (long)ext);
    struct rec *r = mtest_malloc(N * sizeof *r);
    if (sender) {
        memset(r, 0, N * sizeof *r);
        for (int i = 0; i < N; i++) {
            r[i].a = i;
            r[i].b = i * 1.5;
            r[i].c[0] = (char)i, r[i].c[1] = (char)(i >> 8), r[i].c[2] = 'z';
        }
        MTEST_OK(MPI_Send(r, N, t, peer, 6, MPI_COMM_WORLD));
    } else {
        memset(r, 0x77, N * sizeof *r);
        MPI_Status st;
        MTEST_OK(MPI_Recv(r, N, t, peer, 6, MPI_COMM_WORLD, &st));
        int cnt = -1, el = -1;
        MPI_Get_count(&st, t, &cnt);
        MPI_Get_elements(&st, t, &el);
        MTEST_CHECK(cnt == N && el == N * 5, "struct: Get_count %d Get_elements %d", cnt, el);
        for (int i = 0; i < N; i++) {
            if (r[i].a != i || r[i].b != i * 1.5 || r[i].c[0] != (char)i || r[i].c[1] != (char)(i >> 8) ||
                r[i].c[2] != 'z') {
                MTEST_CHECK(0, "struct record %d wrong: a %d b %g", i, r[i].a, r[i].b);
                break;
            }
            const unsigned char *p = (const unsigned char *)&r[i];
            int pad_ok = 1;
            for (size_t k = sizeof(int); k < offsetof(struct rec, b); k++)
                pad_ok &= p[k] == 0x77;
            for (size_t k = offsetof(struct rec, c) + 3; k < sizeof(struct rec); k++)
                pad_ok &= p[k] == 0x77;
            if (!pad_ok) {
                MTEST_CHECK(0, "struct record %d: padding bytes were written", i);
                break;
            }
        }
    }
    free(r);
    MTEST_OK(MPI_Type_free(&t));
}

static void double_int(void)
{
    struct di {
        double d;
        int i;
    } v[5];
    if (sender) {
        for (int k = 0; k < 5; k++)
            v[k].d = k + 0.5, v[k].i = -k;
        MTEST_OK(MPI_Send(v, 5, MPI_DOUBLE_INT, peer, 7, MPI_COMM_WORLD));
    } else {
        memset(v, 0, sizeof v);
        MPI_Status st;
        MTEST_OK(MPI_Recv(v, 5, MPI_DOUBLE_INT, peer, 7, MPI_COMM_WORLD, &st));
        int cnt = -1, el = -1;
        MPI_Get_count(&st, MPI_DOUBLE_INT, &cnt);
        MPI_Get_elements(&st, MPI_DOUBLE_INT, &el);
        MTEST_CHECK(cnt == 5 && el == 10, "MPI_DOUBLE_INT x5: Get_count %d Get_elements %d", cnt, el);
        for (int k = 0; k < 5; k++)
            MTEST_CHECK(v[k].d == k + 0.5 && v[k].i == -k, "MPI_DOUBLE_INT[%d] = {%g, %d}", k, v[k].d, v[k].i);
    }
}

/* contiguous(4, INT): 7 ints arrive as 1.75 elements of it */
static void partial(void)
{
    MPI_Datatype t;
    MTEST_OK(MPI_Type_contiguous(4, MPI_INT, &t));
    MTEST_OK(MPI_Type_commit(&t));
    int x[8];
    if (sender) {
        for (int i = 0; i < 8; i++)
            x[i] = i + 1;
        MTEST_OK(MPI_Send(x, 7, MPI_INT, peer, 8, MPI_COMM_WORLD));
    } else {
        for (int i = 0; i < 8; i++)
            x[i] = 0;
        MPI_Status st;
        MTEST_OK(MPI_Recv(x, 2, t, peer, 8, MPI_COMM_WORLD, &st));
        int cnt = -5, el = -5;
        MPI_Get_count(&st, t, &cnt);
        MPI_Get_elements(&st, t, &el);
        MTEST_CHECK(cnt == MPI_UNDEFINED && el == 7, "7 ints into contiguous(4): Get_count %d Get_elements %d", cnt,
                    el);
        for (int i = 0; i < 8; i++)
            MTEST_CHECK(x[i] == (i < 7 ? i + 1 : 0), "partial: x[%d] = %d", i, x[i]);
    }
    MTEST_OK(MPI_Type_free(&t));
}

/* A persistent send and receive of a vector type, started several times with new data. */
static void persistent_vector(void)
{
    enum { NB = 5000 };
    static int buf[NB * 2];
    MPI_Datatype t;
    MTEST_OK(MPI_Type_vector(NB, 1, 2, MPI_INT, &t));
    MTEST_OK(MPI_Type_commit(&t));
    MPI_Request rq;
    if (sender)
        MTEST_OK(MPI_Send_init(buf, 1, t, peer, 9, MPI_COMM_WORLD, &rq));
    else
        MTEST_OK(MPI_Recv_init(buf, 1, t, peer, 9, MPI_COMM_WORLD, &rq));
    MTEST_OK(MPI_Type_free(&t));
    for (int it = 0; it < 5; it++) {
        for (int i = 0; i < NB * 2; i++)
            buf[i] = sender ? it * 100000 + i : -7;
        MTEST_OK(MPI_Start(&rq));
        MTEST_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        if (!sender)
            for (int i = 0; i < NB * 2; i++) {
                int want = i % 2 ? -7 : it * 100000 + i;
                if (buf[i] != want) {
                    MTEST_CHECK(0, "persistent vector round %d: buf[%d] = %d, expected %d", it, i, buf[i], want);
                    break;
                }
            }
    }
    MTEST_OK(MPI_Request_free(&rq));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    peer = mtest_rank ^ 1;
    sender = !(mtest_rank & 1);
    if (peer < mtest_size) {
        column();
        big_vector();
        indexed();
        structs();
        double_int();
        partial();
        persistent_vector();
    }
    return mtest_finalize();
}
