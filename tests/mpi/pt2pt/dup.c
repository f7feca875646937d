/* Communicator duplication: Comm_compare (IDENT, CONGRUENT), size/rank preserved, the error
 * handler inherited, names not; messages on a duplicate never match receives on the parent
 * (or on another duplicate), even with wildcards; many duplicates alive at once each carry
 * their own traffic (unique context ids), also after other duplicates were freed and their
 * ids could be reused. */
#include "mtest.h"

#include <stdio.h>
#include <string.h>

#define ND 40

static int peer;

static void basics(void)
{
    MPI_Comm d, d2;
    int res = -1, sz, rk;
    MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    MTEST_CHECK(d != MPI_COMM_WORLD && d != MPI_COMM_NULL, "Comm_dup returned %p", (void *)d);
    MTEST_OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, &res));
    MTEST_CHECK(res == MPI_IDENT, "compare(WORLD, WORLD) = %d, expected MPI_IDENT", res);
    MTEST_OK(MPI_Comm_compare(MPI_COMM_WORLD, d, &res));
    MTEST_CHECK(res == MPI_CONGRUENT, "compare(WORLD, dup) = %d, expected MPI_CONGRUENT", res);
    MTEST_OK(MPI_Comm_dup(d, &d2));
    MTEST_OK(MPI_Comm_compare(d, d2, &res));
    MTEST_CHECK(res == MPI_CONGRUENT, "compare(dup, dup of dup) = %d, expected MPI_CONGRUENT", res);
    MTEST_OK(MPI_Comm_compare(d2, d2, &res));
    MTEST_CHECK(res == MPI_IDENT, "compare(d, d) = %d, expected MPI_IDENT", res);
    if (mtest_size > 1) {
        MTEST_OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &res));
        MTEST_CHECK(res == MPI_UNEQUAL, "compare(WORLD, SELF) = %d, expected MPI_UNEQUAL", res);
    }
    MPI_Comm_size(d2, &sz);
    MPI_Comm_rank(d2, &rk);
    MTEST_CHECK(sz == mtest_size && rk == mtest_rank, "dup: size %d rank %d", sz, rk);

    /* names: set on the parent, not inherited (MPI 4.1 section 7.8) */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MTEST_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    MTEST_CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == (int)strlen(name), "WORLD's name is \"%s\" (%d)", name,
                len);
    MTEST_OK(MPI_Comm_set_name(d, "parent"));
    MTEST_OK(MPI_Comm_get_name(d, name, &len));
    MTEST_CHECK(strcmp(name, "parent") == 0 && len == 6, "name after set: \"%s\" (%d)", name, len);
    MPI_Comm d3;
    MTEST_OK(MPI_Comm_dup(d, &d3));
    MTEST_OK(MPI_Comm_get_name(d3, name, &len));
    MTEST_CHECK(strcmp(name, "parent") != 0, "Comm_dup copied the name \"%s\"", name);

    /* the error handler is inherited */
    MPI_Errhandler eh;
    MTEST_OK(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    MPI_Comm d4;
    MTEST_OK(MPI_Comm_dup(d, &d4));
    MTEST_OK(MPI_Comm_get_errhandler(d4, &eh));
    MTEST_CHECK(eh == MPI_ERRORS_RETURN, "dup did not inherit MPI_ERRORS_RETURN (got %p)", (void *)eh);
    MTEST_OK(MPI_Errhandler_free(&eh));
    /* errors on d4 return instead of aborting */
    int rc = MPI_Send(NULL, 0, MPI_BYTE, mtest_size + 3, 0, d4);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    MTEST_CHECK(cls == MPI_ERR_RANK, "invalid rank on the dup: class %d", cls);

    MTEST_OK(MPI_Comm_free(&d4));
    MTEST_OK(MPI_Comm_free(&d3));
    MTEST_OK(MPI_Comm_free(&d2));
    MTEST_OK(MPI_Comm_free(&d));
    MTEST_CHECK(d == MPI_COMM_NULL && d2 == MPI_COMM_NULL, "Comm_free did not set MPI_COMM_NULL");
}

/* The receiver posts a wildcard receive on WORLD first; the sender sends on the dup, then
 * on WORLD. The WORLD receive must get the WORLD message. */
static void isolation(void)
{
    MPI_Comm d;
    MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    if (peer < mtest_size) {
        int x = -1, y = -1;
        if (mtest_rank & 1) {
            int a = 111, b = 222, c = 333;
            MTEST_OK(MPI_Recv(NULL, 0, MPI_BYTE, peer, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MTEST_OK(MPI_Send(&a, 1, MPI_INT, peer, 1, d));
            MTEST_OK(MPI_Send(&b, 1, MPI_INT, peer, 1, MPI_COMM_WORLD));
            /* rendezvous size on the dup, same tag, while a WORLD receive is pending */
            static int big[20000];
            for (int i = 0; i < 20000; i++)
                big[i] = i;
            MTEST_OK(MPI_Send(big, 20000, MPI_INT, peer, 2, d));
            MTEST_OK(MPI_Send(&c, 1, MPI_INT, peer, 2, MPI_COMM_WORLD));
        } else {
            MPI_Request rq;
            MPI_Status st;
            MTEST_OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq));
            MTEST_OK(MPI_Send(NULL, 0, MPI_BYTE, peer, 50, MPI_COMM_WORLD));
            MTEST_OK(MPI_Recv(&y, 1, MPI_INT, peer, 1, d, &st));
            MTEST_OK(MPI_Wait(&rq, &st));
            MTEST_CHECK(x == 222 && y == 111, "WORLD got %d (want 222), dup got %d (want 111)", x, y);
            static int big[20000];
            MTEST_OK(MPI_Irecv(&x, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &rq));
            MTEST_OK(MPI_Recv(big, 20000, MPI_INT, peer, 2, d, &st));
            MTEST_OK(MPI_Wait(&rq, &st));
            int cnt = -1;
            MPI_Get_count(&st, MPI_INT, &cnt);
            MTEST_CHECK(x == 333 && cnt == 1, "WORLD receive next to a rendezvous on the dup: x %d count %d", x, cnt);
            for (int i = 0; i < 20000; i++)
                if (big[i] != i) {
                    MTEST_CHECK(0, "rendezvous on the dup: big[%d] = %d", i, big[i]);
                    break;
                }
        }
    }
    MTEST_OK(MPI_Comm_free(&d));
}

/* ND duplicates alive; the sender sends message i on dup i in order, the receiver receives
 * them in reverse order of communicator. Then free the even ones, make new ones, repeat. */
static void many(void)
{
    MPI_Comm d[ND];
    for (int i = 0; i < ND; i++)
        MTEST_OK(MPI_Comm_dup(i % 3 ? MPI_COMM_WORLD : (i ? d[i - 1] : MPI_COMM_WORLD), &d[i]));
    for (int i = 0; i < ND; i++)
        for (int j = 0; j < i; j++)
            MTEST_CHECK(d[i] != d[j], "duplicates %d and %d have the same handle", i, j);
    for (int round = 0; round < 3; round++) {
        if (peer < mtest_size) {
            if (mtest_rank & 1) {
                for (int i = 0; i < ND; i++) {
                    int v = round * 1000 + i;
                    MTEST_OK(MPI_Send(&v, 1, MPI_INT, peer, 0, d[i]));
                }
            } else {
                for (int i = ND - 1; i >= 0; i--) {
                    int v = -1;
                    MTEST_OK(MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d[i], MPI_STATUS_IGNORE));
                    MTEST_CHECK(v == round * 1000 + i, "round %d: dup %d received %d", round, i, v);
                }
            }
        }
        for (int i = 0; i < ND; i += 2) {
            MTEST_OK(MPI_Comm_free(&d[i]));
            MTEST_OK(MPI_Comm_dup(d[i + 1], &d[i]));
        }
    }
    for (int i = 0; i < ND; i++)
        MTEST_OK(MPI_Comm_free(&d[i]));
    /* a long chain of dup/free must not run out of context ids */
    for (int i = 0; i < 2000; i++) {
        MPI_Comm c;
        MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        MTEST_OK(MPI_Comm_free(&c));
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    peer = mtest_rank ^ 1;
    basics();
    isolation();
    many();
    return mtest_finalize();
}
