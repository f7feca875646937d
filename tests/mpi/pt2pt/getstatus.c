/* MPI-4.1 Request_get_status_all/any/some: report completion without freeing or
 * deactivating anything, null and inactive requests count as complete with an empty
 * status, and no active request gives index / outcount MPI_UNDEFINED. */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int me = mtest_rank, peer = (me + 1) % mtest_size, from = (me - 1 + mtest_size) % mtest_size;
    int a = -1, b = -1, v = me;
    MPI_Request r[3];
    MPI_Irecv(&a, 1, MPI_INT, from, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&b, 1, MPI_INT, from, 2, MPI_COMM_WORLD, &r[1]);
    r[2] = MPI_REQUEST_NULL;
    int flag = -1, idx = -2, out = -2, ind[3];
    MPI_Status st[3];
    MPI_Request_get_status_all(3, r, &flag, st); /* nobody sends before the barrier */
    MTEST_CHECK(flag == 0, "get_status_all says done before anything was sent");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Send(&v, 1, MPI_INT, peer, 1, MPI_COMM_WORLD);
    flag = 0;
    while (!flag)
        MPI_Request_get_status_any(3, r, &idx, &flag, &st[0]);
    MTEST_CHECK(idx == 0 && st[0].MPI_SOURCE == from && st[0].MPI_TAG == 1, "any: index %d source %d tag %d", idx,
                st[0].MPI_SOURCE, st[0].MPI_TAG);
    MTEST_CHECK(r[0] != MPI_REQUEST_NULL, "get_status_any freed the request");
    MPI_Request_get_status_some(3, r, &out, ind, st);
    MTEST_CHECK(out == 1 && ind[0] == 0, "some: %d done, first index %d", out, ind[0]);
    MPI_Barrier(MPI_COMM_WORLD); /* the tag 2 messages go out only now */
    MPI_Send(&v, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
    flag = 0;
    while (!flag)
        MPI_Request_get_status_all(3, r, &flag, st);
    MTEST_CHECK(st[1].MPI_TAG == 2 && st[2].MPI_TAG == MPI_ANY_TAG, "all: tags %d %d", st[1].MPI_TAG, st[2].MPI_TAG);
    MPI_Waitall(3, r, MPI_STATUSES_IGNORE);
    MTEST_CHECK(a == from && b == from, "received %d %d, expected %d", a, b, from);
    MPI_Request_get_status_any(3, r, &idx, &flag, MPI_STATUS_IGNORE);
    MTEST_CHECK(flag == 1 && idx == MPI_UNDEFINED, "any on null requests: flag %d index %d", flag, idx);
    MPI_Request_get_status_some(3, r, &out, ind, MPI_STATUSES_IGNORE);
    MTEST_CHECK(out == MPI_UNDEFINED, "some on null requests: outcount %d", out);
    return mtest_finalize();
}
