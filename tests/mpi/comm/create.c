/* Communicator construction: Comm_create (one group, disjoint groups, non-members),
 * Comm_create_group (only members call, two concurrent tags), split_type (SHARED, HW_GUIDED,
 * HW_UNGUIDED, UNDEFINED), dup_with_info, idup, compare, get_parent, set/get_info; each
 * new communicator is used (ring exchange) to prove its context and rank map. */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

/* Exchange with both ring neighbours and check who answered. world[] maps comm ranks. */
static void ring_check(MPI_Comm c, const int *world, const char *what)
{
    int r, s;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &s);
    int right = (r + 1) % s, left = (r - 1 + s) % s, got = -1;
    int me = mtest_rank;
    MTEST_OK(MPI_Sendrecv(&me, 1, MPI_INT, right, 7, &got, 1, MPI_INT, left, 7, c, MPI_STATUS_IGNORE));
    MTEST_CHECK(got == world[left], "%s: left neighbour (rank %d) is world %d, expected %d", what, left, got,
                world[left]);
    MTEST_OK(MPI_Barrier(c));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int n = mtest_size, me = mtest_rank;
    MPI_Group world;
    MTEST_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));

    /* Comm_create with the reversed group */
    int rev[64], ident[64];
    for (int i = 0; i < n; i++)
        rev[i] = n - 1 - i, ident[i] = i;
    MPI_Group g;
    MPI_Comm c;
    MTEST_OK(MPI_Group_incl(world, n, rev, &g));
    MTEST_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    int r, s, res;
    MTEST_OK(MPI_Comm_rank(c, &r));
    MTEST_OK(MPI_Comm_size(c, &s));
    MTEST_CHECK(r == n - 1 - me && s == n, "create reversed: rank %d size %d", r, s);
    ring_check(c, rev, "create reversed");
    MTEST_OK(MPI_Comm_compare(MPI_COMM_WORLD, c, &res));
    MTEST_CHECK(res == (n > 1 ? MPI_SIMILAR : MPI_CONGRUENT), "compare WORLD/reversed: %d", res);
    MTEST_OK(MPI_Comm_free(&c));
    MTEST_OK(MPI_Group_free(&g));

    /* disjoint groups: the first half and the rest, each process passes its own */
    int half = n / 2, lo[64], nlo = 0, hi[64], nhi = 0;
    for (int i = 0; i < n; i++) {
        if (i < half)
            lo[nlo++] = i;
        else
            hi[nhi++] = i;
    }
    MTEST_OK(MPI_Group_incl(world, me < half ? nlo : nhi, me < half ? lo : hi, &g));
    MTEST_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    MTEST_CHECK(c != MPI_COMM_NULL, "disjoint create: got MPI_COMM_NULL");
    if (c != MPI_COMM_NULL) {
        MTEST_OK(MPI_Comm_size(c, &s));
        MTEST_CHECK(s == (me < half ? nlo : nhi), "disjoint create: size %d", s);
        ring_check(c, me < half ? lo : hi, "disjoint create");
        MTEST_OK(MPI_Comm_free(&c));
    }
    MTEST_OK(MPI_Group_free(&g));

    /* non-members get MPI_COMM_NULL */
    int evens[64], ne = 0;
    for (int i = 0; i < n; i += 2)
        evens[ne++] = i;
    MTEST_OK(MPI_Group_incl(world, ne, evens, &g));
    MTEST_OK(MPI_Comm_create(MPI_COMM_WORLD, g, &c));
    MTEST_CHECK((c == MPI_COMM_NULL) == (me % 2 == 1), "create evens: COMM_NULL %d on rank %d", c == MPI_COMM_NULL, me);
    if (c != MPI_COMM_NULL) {
        ring_check(c, evens, "create evens");
        MTEST_OK(MPI_Comm_free(&c));
    }

    /* create_group: only evens call; the odd ones do the same with another tag meanwhile */
    int odds[64], no = 0;
    for (int i = 1; i < n; i += 2)
        odds[no++] = i;
    MPI_Group og;
    MTEST_OK(MPI_Group_incl(world, no, odds, &og));
    if (me % 2 == 0) {
        MTEST_OK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 11, &c));
        ring_check(c, evens, "create_group evens");
    } else {
        MTEST_OK(MPI_Comm_create_group(MPI_COMM_WORLD, og, 12, &c));
        ring_check(c, odds, "create_group odds");
    }
    MTEST_OK(MPI_Comm_free(&c));
    /* the session-model constructor over the same groups (string tags name the call) */
    MTEST_OK(MPI_Comm_create_from_group(me % 2 ? og : g, me % 2 ? "rmpi-odd" : "rmpi-even", MPI_INFO_NULL,
                                        MPI_ERRORS_RETURN, &c));
    ring_check(c, me % 2 ? odds : evens, "create_from_group");
    MPI_Errhandler eh;
    MTEST_OK(MPI_Comm_get_errhandler(c, &eh));
    MTEST_CHECK(eh == MPI_ERRORS_RETURN, "create_from_group did not set the error handler");
    MTEST_OK(MPI_Comm_free(&c));
    /* a process outside the group gets MPI_COMM_NULL without communication */
    MTEST_OK(MPI_Comm_create_group(MPI_COMM_WORLD, me % 2 ? g : og, 13, &c));
    MTEST_CHECK(c == MPI_COMM_NULL, "create_group as a non-member did not give MPI_COMM_NULL");
    MTEST_OK(MPI_Group_free(&og));
    MTEST_OK(MPI_Group_free(&g));

    /* split_type: all ranks run on this host */
    MTEST_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -me, MPI_INFO_NULL, &c));
    MTEST_OK(MPI_Comm_size(c, &s));
    MTEST_OK(MPI_Comm_rank(c, &r));
    MTEST_CHECK(s == n && r == n - 1 - me, "split_type shared: size %d rank %d", s, r);
    ring_check(c, rev, "split_type shared");
    MTEST_OK(MPI_Comm_free(&c));
    MTEST_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    MTEST_CHECK(c == MPI_COMM_NULL, "split_type MPI_UNDEFINED did not give MPI_COMM_NULL");
    MPI_Info info;
    MTEST_OK(MPI_Info_create(&info));
    MTEST_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    MTEST_CHECK(c == MPI_COMM_NULL, "split_type HW_GUIDED without a resource type did not give MPI_COMM_NULL");
    MTEST_OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    MTEST_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &c));
    MTEST_CHECK(c != MPI_COMM_NULL, "split_type HW_GUIDED mpi_shared_memory gave MPI_COMM_NULL");
    if (c != MPI_COMM_NULL) {
        MTEST_OK(MPI_Comm_size(c, &s));
        MTEST_CHECK(s == n, "HW_GUIDED size %d", s);
        ring_check(c, ident, "split_type hw_guided");
        MTEST_OK(MPI_Comm_free(&c));
    }
    /* unguided: a strict subset or nothing; one node here, so nothing */
    MTEST_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &c));
    MTEST_CHECK(c == MPI_COMM_NULL, "HW_UNGUIDED on one node must give MPI_COMM_NULL");

    /* dup_with_info: the hints are the given ones; dup keeps the parent's */
    MPI_Comm d, d2;
    MTEST_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MTEST_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &d));
    MPI_Info used;
    char val[MPI_MAX_INFO_VAL];
    int flag;
    MTEST_OK(MPI_Comm_get_info(d, &used));
    MTEST_OK(MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL - 1, val, &flag));
    MTEST_CHECK(flag && strcmp(val, "true") == 0, "dup_with_info: hint lost (flag %d)", flag);
    MTEST_OK(MPI_Info_free(&used));
    MTEST_OK(MPI_Comm_dup(d, &d2));
    MTEST_OK(MPI_Comm_get_info(d2, &used));
    MTEST_OK(MPI_Info_get(used, "mpi_assert_no_any_tag", MPI_MAX_INFO_VAL - 1, val, &flag));
    MTEST_CHECK(flag, "Comm_dup did not keep the parent's hints");
    MTEST_OK(MPI_Info_free(&used));
    MTEST_OK(MPI_Comm_set_info(d2, MPI_INFO_NULL));
    MTEST_OK(MPI_Comm_get_info(d2, &used));
    int nkeys;
    MTEST_OK(MPI_Info_get_nkeys(used, &nkeys));
    MTEST_CHECK(nkeys == 0, "set_info(MPI_INFO_NULL) left %d keys", nkeys);
    MTEST_OK(MPI_Info_free(&used));
    MTEST_OK(MPI_Comm_compare(d, d2, &res));
    MTEST_CHECK(res == MPI_CONGRUENT, "compare dup/dup: %d", res);
    ring_check(d2, ident, "dup of dup_with_info");
    MTEST_OK(MPI_Comm_free(&d2));
    MTEST_OK(MPI_Comm_free(&d));
    MTEST_OK(MPI_Info_free(&info));

    /* idup: the request completes and the copy works; traffic on the parent does not mix */
    MPI_Request req;
    MTEST_OK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &req));
    MTEST_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    MTEST_CHECK(req == MPI_REQUEST_NULL, "idup request not freed by Wait");
    MTEST_OK(MPI_Comm_idup_with_info(d, MPI_INFO_NULL, &d2, &req));
    MTEST_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    int x = me, y = -1;
    MPI_Request rr;
    MTEST_OK(MPI_Irecv(&y, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d2, &rr));
    MTEST_OK(MPI_Send(&x, 1, MPI_INT, (me + 1) % n, 5, MPI_COMM_WORLD));
    MTEST_OK(MPI_Send(&x, 1, MPI_INT, (me + 1) % n, 6, d));
    MTEST_OK(MPI_Send(&x, 1, MPI_INT, (me + 1) % n, 7, d2));
    MTEST_OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    MTEST_CHECK(y == (me - 1 + n) % n, "idup copy received %d", y);
    MTEST_OK(MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d, MPI_STATUS_IGNORE));
    MTEST_CHECK(y == (me - 1 + n) % n, "idup parent received %d", y);
    MTEST_OK(MPI_Recv(&y, 1, MPI_INT, (me - 1 + n) % n, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MTEST_OK(MPI_Comm_free(&d2));
    MTEST_OK(MPI_Comm_free(&d));

    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MTEST_OK(MPI_Comm_get_name(MPI_COMM_NULL, name, &len));
    MTEST_CHECK(strcmp(name, "MPI_COMM_NULL") == 0 && len == 13, "name of MPI_COMM_NULL: \"%s\"", name);
    MPI_Info hw;
    MTEST_OK(MPI_Get_hw_resource_info(&hw));
    MTEST_OK(MPI_Info_get(hw, "mpi_hw_resource_type", MPI_MAX_INFO_VAL - 1, val, &flag));
    MTEST_CHECK(flag && strcmp(val, "mpi_shared_memory") == 0, "Get_hw_resource_info: %d", flag);
    MTEST_OK(MPI_Info_free(&hw));
    MPI_Comm parent = MPI_COMM_WORLD;
    MTEST_OK(MPI_Comm_get_parent(&parent));
    MTEST_CHECK(parent == MPI_COMM_NULL, "Comm_get_parent is not MPI_COMM_NULL");
    MTEST_OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
    MTEST_CHECK(!flag, "WORLD tests as an intercommunicator");
    MTEST_OK(MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_SELF, &res));
    MTEST_CHECK(res == (n == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare WORLD/SELF: %d", res);

    /* bad input */
    mtest_errors_return(MPI_COMM_WORLD);
    mtest_errors_return(MPI_COMM_SELF);
    MTEST_ERR(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_NULL, &c), MPI_ERR_GROUP);
    MTEST_ERR(MPI_Comm_create(MPI_COMM_NULL, world, &c), MPI_ERR_COMM);
    MPI_Group selfg;
    MTEST_OK(MPI_Comm_group(MPI_COMM_SELF, &selfg));
    if (n > 1)
        MTEST_ERR(MPI_Comm_create(MPI_COMM_SELF, world, &c), MPI_ERR_GROUP); /* members outside SELF */
    MTEST_ERR(MPI_Comm_create_group(MPI_COMM_WORLD, selfg, -1, &c), MPI_ERR_TAG);
    MTEST_ERR(MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG);
    MTEST_ERR(MPI_Comm_dup_with_info(MPI_COMM_WORLD, (MPI_Info)(void *)&res, &c), MPI_ERR_INFO);
    MTEST_ERR(MPI_Comm_remote_size(MPI_COMM_WORLD, &s), MPI_ERR_COMM);
    MTEST_ERR(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &c), MPI_ERR_COMM);
    MTEST_ERR(MPI_Comm_free(&(MPI_Comm){MPI_COMM_WORLD}), MPI_ERR_COMM);
    MTEST_OK(MPI_Group_free(&selfg));
    MTEST_OK(MPI_Group_free(&world));
    return mtest_finalize();
}
