/* Intercommunicators: WORLD split into evens and odds joined by Intercomm_create (leaders
 * 0 and 1 over WORLD); sizes, remote groups, point-to-point across in both directions
 * (ranks name the remote group, status sources are remote ranks, wildcards), large
 * (rendezvous) messages, dup of the intercomm (isolated context), Comm_create and Comm_split on it,
 * merge with each high ordering, and bad ranks. Needs 2 or more ranks. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int n = mtest_size, me = mtest_rank, color = me % 2;
    if (n < 2)
        return mtest_finalize();
    MPI_Comm local, inter;
    MTEST_OK(MPI_Comm_split(MPI_COMM_WORLD, color, me, &local));
    int lrank, lsize;
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_size(local, &lsize);
    int nodd = n / 2, neven = n - nodd, rsize_ref = color ? neven : nodd;
    MTEST_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color ? 0 : 1, 99, &inter));

    int flag, rsize, size, rank;
    MTEST_OK(MPI_Comm_test_inter(inter, &flag));
    MTEST_CHECK(flag, "Comm_test_inter false on an intercommunicator");
    MTEST_OK(MPI_Comm_size(inter, &size));
    MTEST_OK(MPI_Comm_rank(inter, &rank));
    MTEST_OK(MPI_Comm_remote_size(inter, &rsize));
    MTEST_CHECK(size == lsize && rank == lrank && rsize == rsize_ref, "size %d rank %d remote size %d", size, rank,
                rsize);
    MPI_Group rg, wg;
    MTEST_OK(MPI_Comm_remote_group(inter, &rg));
    MTEST_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    for (int i = 0; i < rsize; i++) {
        int w;
        MTEST_OK(MPI_Group_translate_ranks(rg, 1, &i, wg, &w));
        MTEST_CHECK(w == 2 * i + !color, "remote rank %d is world %d, expected %d", i, w, 2 * i + !color);
    }
    MPI_Group_free(&rg);

    /* each process sends to remote rank (lrank % rsize), with its world rank as data */
    int dst = lrank % rsize, msg = me;
    MPI_Request sreq;
    MTEST_OK(MPI_Isend(&msg, 1, MPI_INT, dst, 3, inter, &sreq));
    /* receivers: remote ranks q with q % lsize... i.e. those whose dst is me */
    for (int q = 0; q < rsize; q++) {
        if (q % lsize != lrank)
            continue;
        int got = -1;
        MPI_Status st;
        MTEST_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 3, inter, &st));
        int q_world = 2 * st.MPI_SOURCE + !color;
        MTEST_CHECK(got == q_world, "received %d from remote rank %d (world %d)", got, st.MPI_SOURCE, q_world);
    }
    MTEST_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));

    /* leaders exchange 1 MiB both ways (rendezvous), with Sendrecv */
    if (lrank == 0) {
        size_t bytes = 1 << 20;
        char *sb = malloc(bytes), *rb = malloc(bytes);
        mtest_fill(sb, bytes, mtest_seed(me, !color, 1));
        MPI_Status st;
        MTEST_OK(MPI_Sendrecv(sb, (int)bytes, MPI_BYTE, 0, 4, rb, (int)bytes, MPI_BYTE, 0, 4, inter, &st));
        mtest_check_buf(rb, bytes, mtest_seed(!color, color, 1), "1 MiB across the intercommunicator");
        MTEST_CHECK(st.MPI_SOURCE == 0, "status source %d", st.MPI_SOURCE);
        free(sb);
        free(rb);
    }

    /* a dup has its own context: a message on inter is not received on the dup */
    MPI_Comm dup;
    MTEST_OK(MPI_Comm_dup(inter, &dup));
    MTEST_OK(MPI_Comm_test_inter(dup, &flag));
    MTEST_CHECK(flag, "dup of an intercommunicator is not one");
    int res;
    MTEST_OK(MPI_Comm_compare(inter, dup, &res));
    MTEST_CHECK(res == MPI_CONGRUENT, "compare inter/dup: %d", res);
    MTEST_OK(MPI_Comm_compare(inter, local, &res));
    MTEST_CHECK(res == MPI_UNEQUAL, "compare inter/local: %d", res);
    if (lrank == 0) {
        int a = 1, b = 2, x = 0, y = 0;
        MPI_Request r[2];
        MTEST_OK(MPI_Irecv(&x, 1, MPI_INT, 0, 5, dup, &r[0]));
        MTEST_OK(MPI_Irecv(&y, 1, MPI_INT, 0, 5, inter, &r[1]));
        MTEST_OK(MPI_Send(&a, 1, MPI_INT, 0, 5, inter));
        MTEST_OK(MPI_Send(&b, 1, MPI_INT, 0, 5, dup));
        MTEST_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        MTEST_CHECK(x == 2 && y == 1, "dup isolation: dup got %d, inter got %d", x, y);
    }
    MTEST_OK(MPI_Comm_free(&dup));

    /* Comm_create on the intercomm: local rank 0 of each side is left out */
    MPI_Group lg, sub;
    MTEST_OK(MPI_Comm_group(inter, &lg));
    int zero = 0;
    MTEST_OK(MPI_Group_excl(lg, 1, &zero, &sub));
    MPI_Comm ic2;
    MTEST_OK(MPI_Comm_create(inter, sub, &ic2));
    int expect_null = lrank == 0 || lsize == 1 || rsize == 1;
    MTEST_CHECK((ic2 == MPI_COMM_NULL) == expect_null, "Comm_create on intercomm: null %d, expected %d",
                ic2 == MPI_COMM_NULL, expect_null);
    if (ic2 != MPI_COMM_NULL) {
        int s2, r2, rs2;
        MPI_Comm_size(ic2, &s2);
        MPI_Comm_rank(ic2, &r2);
        MPI_Comm_remote_size(ic2, &rs2);
        MTEST_CHECK(s2 == lsize - 1 && r2 == lrank - 1 && rs2 == rsize - 1, "sub-intercomm %d/%d remote %d", r2, s2,
                    rs2);
        if (r2 == 0) {
            int v = me, got = -1;
            MTEST_OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 6, &got, 1, MPI_INT, 0, 6, ic2, MPI_STATUS_IGNORE));
            MTEST_CHECK(got == 2 + !color, "sub-intercomm leader got %d, expected %d", got, 2 + !color);
        }
        MTEST_OK(MPI_Comm_free(&ic2));
    }
    MPI_Group_free(&sub);
    MPI_Group_free(&lg);

    /* split by parity of the local rank, reversed keys: parity classes face each other */
    {
        int par = lrank % 2, nl = 0, nr = 0, top_remote = -1;
        for (int i = 0; i < lsize; i++)
            nl += i % 2 == par;
        for (int q = 0; q < rsize; q++)
            if (q % 2 == par)
                nr++, top_remote = q;
        MPI_Comm sp;
        MTEST_OK(MPI_Comm_split(inter, par, -lrank, &sp));
        MTEST_CHECK((sp == MPI_COMM_NULL) == (nr == 0), "inter split: null %d with %d remote members",
                    sp == MPI_COMM_NULL, nr);
        if (sp != MPI_COMM_NULL) {
            int s2, r2, rs2, top_local = lsize - 1 - ((lsize - 1 - par) % 2);
            MPI_Comm_size(sp, &s2);
            MPI_Comm_rank(sp, &r2);
            MPI_Comm_remote_size(sp, &rs2);
            MTEST_CHECK(s2 == nl && rs2 == nr && r2 == (top_local - lrank) / 2, "inter split: %d/%d remote %d", r2, s2,
                        rs2);
            if (r2 == 0) {
                int got = -1;
                MTEST_OK(MPI_Sendrecv(&me, 1, MPI_INT, 0, 9, &got, 1, MPI_INT, 0, 9, sp, MPI_STATUS_IGNORE));
                MTEST_CHECK(got == 2 * top_remote + !color, "inter split: remote top is world %d, expected %d", got,
                            2 * top_remote + !color);
            }
            MTEST_OK(MPI_Comm_free(&sp));
        }
        MTEST_OK(MPI_Comm_split(inter, MPI_UNDEFINED, 0, &sp));
        MTEST_CHECK(sp == MPI_COMM_NULL, "inter split with MPI_UNDEFINED gave a communicator");
    }

    /* merge: odds high -> evens first (world order); then evens high -> odds first */
    for (int pass = 0; pass < 2; pass++) {
        MPI_Comm merged;
        int high = pass == 0 ? color : !color;
        MTEST_OK(MPI_Intercomm_merge(inter, high, &merged));
        int mr, ms;
        MPI_Comm_rank(merged, &mr);
        MPI_Comm_size(merged, &ms);
        int first_n = pass == 0 ? neven : nodd;
        int expect = high ? first_n + lrank : lrank;
        MTEST_CHECK(ms == n && mr == expect, "merge pass %d: rank %d size %d, expected rank %d", pass, mr, ms, expect);
        /* everyone learns everyone's world rank through a ring of Sendrecv on the merged comm */
        int left = (mr - 1 + ms) % ms, got = -1;
        MTEST_OK(MPI_Sendrecv(&me, 1, MPI_INT, (mr + 1) % ms, 8, &got, 1, MPI_INT, left, 8, merged, MPI_STATUS_IGNORE));
        int lc = pass == 0 ? (left < neven ? 0 : 1) : (left < nodd ? 1 : 0);
        int li = pass == 0 ? (left < neven ? left : left - neven) : (left < nodd ? left : left - nodd);
        MTEST_CHECK(got == 2 * li + lc, "merge pass %d: left neighbour %d is world %d, expected %d", pass, left, got,
                    2 * li + lc);
        MTEST_OK(MPI_Barrier(merged));
        MTEST_OK(MPI_Comm_free(&merged));
    }

    /* leaders other than rank 0: the last local rank of each side, named through WORLD */
    {
        MPI_Comm ic, merged;
        int other_last = color ? 2 * (neven - 1) : 2 * (nodd - 1) + 1;
        MTEST_OK(MPI_Intercomm_create(local, lsize - 1, MPI_COMM_WORLD, other_last, 77, &ic));
        MTEST_OK(MPI_Comm_remote_size(ic, &rsize));
        MTEST_CHECK(rsize == rsize_ref, "last-leader intercomm: remote size %d", rsize);
        MTEST_OK(MPI_Intercomm_merge(ic, color, &merged));
        int mr, got = -1;
        MPI_Comm_rank(merged, &mr);
        MTEST_CHECK(mr == (color ? neven : 0) + lrank, "last-leader merge: rank %d", mr);
        MTEST_OK(MPI_Allreduce(&me, &got, 1, MPI_INT, MPI_SUM, merged));
        MTEST_CHECK(got == n * (n - 1) / 2, "sum of world ranks over the merged comm: %d", got);
        MTEST_OK(MPI_Comm_free(&merged));
        MTEST_OK(MPI_Comm_free(&ic));
    }

    /* split_type on an intercomm splits the local group; the group-based constructor */
    {
        MPI_Comm sh, ic;
        MTEST_OK(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sh));
        int s2, fl;
        MPI_Comm_size(sh, &s2);
        MPI_Comm_test_inter(sh, &fl);
        MTEST_CHECK(s2 == lsize && !fl, "split_type of an intercomm: size %d inter %d", s2, fl);
        MTEST_OK(MPI_Comm_free(&sh));
        MPI_Group mine, theirs, all;
        MPI_Comm_group(MPI_COMM_WORLD, &all);
        MPI_Comm_group(local, &mine);
        MPI_Comm_remote_group(inter, &theirs);
        MTEST_OK(MPI_Intercomm_create_from_groups(mine, 0, theirs, 0, "rmpi-test-pair", MPI_INFO_NULL,
                                                  MPI_ERRORS_RETURN, &ic));
        MTEST_OK(MPI_Comm_remote_size(ic, &s2));
        MTEST_CHECK(s2 == rsize_ref, "Intercomm_create_from_groups: remote size %d", s2);
        if (lrank == 0) {
            int got = -1;
            MTEST_OK(MPI_Sendrecv(&me, 1, MPI_INT, 0, 1, &got, 1, MPI_INT, 0, 1, ic, MPI_STATUS_IGNORE));
            MTEST_CHECK(got == !color, "from_groups leaders: got %d", got);
        }
        MTEST_OK(MPI_Comm_free(&ic));
        MPI_Group_free(&mine), MPI_Group_free(&theirs), MPI_Group_free(&all);
    }

    /* bad input */
    MTEST_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    MTEST_OK(MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN));
    mtest_errors_return(MPI_COMM_WORLD);
    MTEST_ERR(MPI_Send(&msg, 1, MPI_INT, rsize, 0, inter), MPI_ERR_RANK);
    MTEST_ERR(MPI_Recv(&msg, 1, MPI_INT, rsize, 0, inter, MPI_STATUS_IGNORE), MPI_ERR_RANK);
    MTEST_ERR(MPI_Cart_create(inter, 1, &n, &zero, 0, &dup), MPI_ERR_COMM);
    MTEST_ERR(MPI_Intercomm_create(inter, 0, MPI_COMM_WORLD, 0, 1, &dup), MPI_ERR_COMM);
    MTEST_ERR(MPI_Intercomm_create(local, lsize, MPI_COMM_WORLD, 0, 1, &dup), MPI_ERR_RANK);
    MTEST_OK(MPI_Comm_free(&inter));
    MTEST_OK(MPI_Comm_free(&local));
    MPI_Group_free(&wg);
    return mtest_finalize();
}
