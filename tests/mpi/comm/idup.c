/* MPI_Comm_idup(_with_info) is a non-blocking collective: it progresses while its members
 * sit in other calls, any number may be outstanding on one or on overlapping parents,
 * their requests complete in any Wait/Test order, and the new communicators have contexts
 * of their own. Each part below deadlocks when the context agreement blocks in the call. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define K 6

/* Messages sent on c[0..k) in order are received on c[k-1..0]: a shared context would
 * hand the first message to the wrong communicator. */
static void contexts_distinct(MPI_Comm *c, int k, const char *what)
{
    if (mtest_size < 2 || mtest_rank > 1)
        return;
    if (mtest_rank == 0) {
        for (int i = 0; i < k; i++)
            MTEST_OK(MPI_Send(&i, 1, MPI_INT, 1, 3, c[i]));
    } else {
        for (int i = k - 1; i >= 0; i--) {
            int v = -1;
            MTEST_OK(MPI_Recv(&v, 1, MPI_INT, 0, 3, c[i], MPI_STATUS_IGNORE));
            MTEST_CHECK(v == i, "%s: communicator %d received the message of communicator %d", what, i, v);
        }
    }
}

static void sum_check(MPI_Comm c, int expect, const char *what)
{
    int x = mtest_rank;
    MTEST_OK(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, c));
    MTEST_CHECK(x == expect, "%s: sum of world ranks %d, expected %d", what, x, expect);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int n = mtest_size, me = mtest_rank, all = n * (n - 1) / 2;
    MPI_Comm c[K];
    MPI_Request r[K + 1];

    /* 1. rank 0 starts its idup only after a message the others send while theirs are
     * pending; then each waits, in another order on each rank */
    int token = 0;
    if (me == 0) {
        for (int s = 1; s < n; s++)
            MTEST_OK(MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < K; i++)
            MTEST_OK(MPI_Comm_idup(MPI_COMM_WORLD, &c[i], &r[i]));
        MTEST_OK(MPI_Waitall(K, r, MPI_STATUSES_IGNORE));
    } else {
        for (int i = 0; i < K; i++)
            MTEST_OK(MPI_Comm_idup(MPI_COMM_WORLD, &c[i], &r[i]));
        MTEST_OK(MPI_Send(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
        if (me % 2) { /* reverse order, one Wait each */
            for (int i = K - 1; i >= 0; i--)
                MTEST_OK(MPI_Wait(&r[i], MPI_STATUS_IGNORE));
        } else { /* Test, then Waitany */
            int flag = 0, left = K;
            MTEST_OK(MPI_Test(&r[K / 2], &flag, MPI_STATUS_IGNORE));
            left -= flag;
            while (left > 0) {
                int idx;
                MTEST_OK(MPI_Waitany(K, r, &idx, MPI_STATUS_IGNORE));
                left--;
            }
        }
    }
    for (int i = 0; i < K; i++)
        MTEST_CHECK(r[i] == MPI_REQUEST_NULL, "request %d not freed at completion", i);
    for (int i = 0; i < K; i++)
        sum_check(c[i], all, "idup of WORLD");
    contexts_distinct(c, K, "idups of WORLD");
    for (int i = 0; i < K; i++)
        MTEST_OK(MPI_Comm_free(&c[i]));

    /* 2. overlapping parents: rank i idups the pair {i, i+1}, then the pair {i-1, i}; a
     * blocking Comm_dup of WORLD and an Ibarrier on WORLD run while they are pending */
    if (n >= 2) {
        MPI_Comm pair[2] = {MPI_COMM_NULL, MPI_COMM_NULL}, t, d[2], wd;
        int sum[2] = {-1, -1};
        for (int i = 0; i < n; i++) {
            int j = (i + 1) % n, in = me == i || me == j;
            MTEST_OK(MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, me == i ? 0 : 1, &t));
            if (me == i)
                pair[0] = t, sum[0] = i + j;
            else if (in)
                pair[1] = t, sum[1] = i + j;
        }
        MTEST_OK(MPI_Comm_idup(pair[0], &d[0], &r[0]));
        MTEST_OK(MPI_Comm_idup(pair[1], &d[1], &r[1]));
        MTEST_OK(MPI_Comm_dup(MPI_COMM_WORLD, &wd));
        MTEST_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r[2]));
        MTEST_OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
        /* non-blocking: the pairs form a ring, blocking calls in this order would not */
        int x[2] = {me, me};
        MTEST_OK(MPI_Iallreduce(MPI_IN_PLACE, &x[0], 1, MPI_INT, MPI_SUM, d[0], &r[0]));
        MTEST_OK(MPI_Iallreduce(MPI_IN_PLACE, &x[1], 1, MPI_INT, MPI_SUM, d[1], &r[1]));
        MTEST_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        MTEST_CHECK(x[0] == sum[0] && x[1] == sum[1], "pair sums %d %d, expected %d %d", x[0], x[1], sum[0], sum[1]);
        sum_check(wd, all, "dup of WORLD beside pending idups");
        for (int k = 0; k < 2; k++) {
            MTEST_OK(MPI_Comm_free(&d[k]));
            MTEST_OK(MPI_Comm_free(&pair[k]));
        }
        MTEST_OK(MPI_Comm_free(&wd));
    }

    /* 3. idup_with_info and create_group: the even ranks start an idup of WORLD, build a
     * communicator of the even ranks with Comm_create_group, and only then tell the odd
     * ranks to start theirs */
    MPI_Info info;
    MTEST_OK(MPI_Info_create(&info));
    MTEST_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MPI_Comm ci, evens = MPI_COMM_NULL;
    MPI_Group wg, eg;
    MTEST_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int ne = (n + 1) / 2, er[64];
    for (int i = 0; i < ne; i++)
        er[i] = 2 * i;
    MTEST_OK(MPI_Group_incl(wg, ne, er, &eg));
    if (me % 2 == 0) {
        MTEST_OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &ci, &r[0]));
        MTEST_OK(MPI_Comm_create_group(MPI_COMM_WORLD, eg, 9, &evens));
        if (me + 1 < n)
            MTEST_OK(MPI_Send(&token, 1, MPI_INT, me + 1, 6, MPI_COMM_WORLD));
    } else {
        MTEST_OK(MPI_Recv(&token, 1, MPI_INT, me - 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MTEST_OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &ci, &r[0]));
    }
    MTEST_OK(MPI_Info_free(&info));
    MTEST_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    MPI_Info got;
    char val[16] = "";
    int flag = 0;
    MTEST_OK(MPI_Comm_get_info(ci, &got));
    MTEST_OK(MPI_Info_get_string(got, "mpi_assert_no_any_tag", &(int){sizeof val}, val, &flag));
    MTEST_CHECK(flag && !strcmp(val, "true"), "idup_with_info: hint not on the new communicator (flag %d, '%s')", flag,
                val);
    MTEST_OK(MPI_Info_free(&got));
    sum_check(ci, all, "idup_with_info beside create_group");
    if (evens != MPI_COMM_NULL) {
        sum_check(evens, (ne - 1) * ne, "create_group of the even ranks");
        MTEST_OK(MPI_Comm_free(&evens));
    }
    MTEST_OK(MPI_Comm_free(&ci));
    MTEST_OK(MPI_Group_free(&eg));
    MTEST_OK(MPI_Group_free(&wg));

    /* 4. many outstanding, idups of idups, and a communicator used before its idup
     * completed is not a communicator yet */
    mtest_errors_return(MPI_COMM_WORLD);
    MPI_Comm many[32], sub;
    MPI_Request mr[33];
    for (int i = 0; i < 32; i++)
        MTEST_OK(MPI_Comm_idup(MPI_COMM_WORLD, &many[i], &mr[i]));
    int sz;
    if (n > 1 && me == 0)
        MTEST_ERR(MPI_Comm_size(many[31], &sz), MPI_ERR_COMM);
    /* ... except for its error handler, which mpi4py's Comm.Idup sets right after the call
     * (MPICH and Open MPI allow it); the handler stays after completion */
    MTEST_OK(MPI_Comm_set_errhandler(many[30], MPI_ERRORS_ARE_FATAL));
    for (int i = 31; i >= 0; i -= 2) { /* every other one by Test */
        int f = 0;
        while (!f)
            MTEST_OK(MPI_Test(&mr[i], &f, MPI_STATUS_IGNORE));
    }
    MTEST_OK(MPI_Waitall(32, mr, MPI_STATUSES_IGNORE));
    MPI_Errhandler eh;
    MTEST_OK(MPI_Comm_get_errhandler(many[30], &eh));
    MTEST_CHECK(eh == MPI_ERRORS_ARE_FATAL, "an error handler set while the idup was pending was lost");
    MTEST_OK(MPI_Errhandler_free(&eh));
    MTEST_OK(MPI_Comm_idup(many[7], &sub, &mr[0]));
    MTEST_OK(MPI_Wait(&mr[0], MPI_STATUS_IGNORE));
    sum_check(sub, all, "idup of an idup");
    contexts_distinct(many, 32, "32 idups");
    MTEST_OK(MPI_Comm_free(&sub));
    for (int i = 0; i < 32; i++)
        MTEST_OK(MPI_Comm_free(&many[i]));

    /* 5. intercommunicators built and merged while idups of WORLD are pending; an idup of
     * the intercommunicator that progresses while one leader sits in a receive */
    if (n >= 2) {
        MPI_Comm lc, inter, merged, idc;
        int low = me < n / 2;
        for (int i = 0; i < 4; i++)
            MTEST_OK(MPI_Comm_idup(MPI_COMM_WORLD, &many[i], &mr[i]));
        MTEST_OK(MPI_Comm_split(MPI_COMM_WORLD, low, me, &lc));
        MTEST_OK(MPI_Intercomm_create(lc, 0, MPI_COMM_WORLD, low ? n / 2 : 0, 11, &inter));
        /* the low group's leader starts its idup of the intercommunicator only after a
         * message the high leader sends while its own is pending */
        if (me == 0) {
            MTEST_OK(MPI_Recv(&token, 1, MPI_INT, n / 2, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MTEST_OK(MPI_Comm_idup(inter, &idc, &mr[4]));
        } else {
            MTEST_OK(MPI_Comm_idup(inter, &idc, &mr[4]));
            if (me == n / 2)
                MTEST_OK(MPI_Send(&token, 1, MPI_INT, 0, 8, MPI_COMM_WORLD));
        }
        MTEST_OK(MPI_Intercomm_merge(inter, !low, &merged));
        MTEST_OK(MPI_Waitall(5, mr, MPI_STATUSES_IGNORE));
        sum_check(merged, all, "merge beside pending idups");
        int rs = -1, peer = -1, mine = me;
        MTEST_OK(MPI_Comm_remote_size(idc, &rs));
        MTEST_CHECK(rs == (low ? n - n / 2 : n / 2), "idup of an intercommunicator: remote size %d", rs);
        int lr;
        MTEST_OK(MPI_Comm_rank(idc, &lr));
        if (lr == 0) /* the two leaders swap world ranks on the copy */
            MTEST_OK(MPI_Sendrecv(&mine, 1, MPI_INT, 0, 4, &peer, 1, MPI_INT, 0, 4, idc, MPI_STATUS_IGNORE));
        MTEST_CHECK(lr != 0 || peer == (low ? n / 2 : 0), "idup of an intercommunicator: leader %d", peer);
        for (int i = 0; i < 4; i++)
            sum_check(many[i], all, "idup beside intercommunicator creation");
        contexts_distinct(many, 4, "idups beside intercommunicator creation");
        for (int i = 0; i < 4; i++)
            MTEST_OK(MPI_Comm_free(&many[i]));
        MTEST_OK(MPI_Comm_free(&idc));
        MTEST_OK(MPI_Comm_free(&merged));
        MTEST_OK(MPI_Comm_free(&inter));
        MTEST_OK(MPI_Comm_free(&lc));
    }
    return mtest_finalize();
}
