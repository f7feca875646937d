/* Post/start/complete/wait: a ring (each rank exposes to its left neighbour and accesses
 * its right one), then everyone accessing rank 0; Win_test polls until the exposure ends. */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *mem;
    MPI_Win win;
    MTEST_OK(
        MPI_Win_allocate((MPI_Aint)(size + 1) * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    for (int i = 0; i <= size; i++)
        mem[i] = -1;
    MPI_Group world, left, right, zero, others;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int l = (rank - 1 + size) % size, r = (rank + 1) % size, z = 0;
    MPI_Group_incl(world, 1, &l, &left);
    MPI_Group_incl(world, 1, &r, &right);
    MPI_Group_incl(world, 1, &z, &zero);
    MPI_Group_excl(world, 1, &z, &others);
    MPI_Barrier(MPI_COMM_WORLD);

    for (int round = 0; round < 3; round++) {
        MTEST_OK(MPI_Win_post(left, 0, win));
        MTEST_OK(MPI_Win_start(right, 0, win));
        int v = rank * 10 + round;
        MTEST_OK(MPI_Put(&v, 1, MPI_INT, r, 0, 1, MPI_INT, win));
        int g = -2;
        MTEST_OK(MPI_Get(&g, 1, MPI_INT, r, size, 1, MPI_INT, win));
        MTEST_OK(MPI_Win_complete(win));
        MTEST_CHECK(g == (round ? 1000 + round - 1 : -1), "round %d: got %d", round, g);
        MTEST_OK(MPI_Win_wait(win));
        MTEST_CHECK(mem[0] == l * 10 + round, "round %d: mem %d, expected %d", round, mem[0], l * 10 + round);
        mem[size] = 1000 + round;
        MPI_Barrier(MPI_COMM_WORLD);
    }

    /* everyone accesses rank 0, which tests until done */
    if (rank == 0) {
        for (int i = 0; i < size; i++)
            mem[i] = 0;
        MTEST_OK(MPI_Win_post(others, 0, win));
        int flag = 0, polls = 0;
        while (!flag) {
            MTEST_OK(MPI_Win_test(win, &flag));
            polls++;
        }
        for (int i = 1; i < size; i++)
            MTEST_CHECK(mem[i] == i + 7, "from rank %d: %d", i, mem[i]);
    } else {
        MTEST_OK(MPI_Win_start(zero, 0, win));
        int v = rank + 7;
        MTEST_OK(MPI_Accumulate(&v, 1, MPI_INT, 0, rank, 1, MPI_INT, MPI_SUM, win));
        MTEST_OK(MPI_Win_complete(win));
    }
    /* the empty group */
    MTEST_OK(MPI_Win_post(MPI_GROUP_EMPTY, 0, win));
    MTEST_OK(MPI_Win_start(MPI_GROUP_EMPTY, 0, win));
    MTEST_OK(MPI_Win_complete(win));
    MTEST_OK(MPI_Win_wait(win));
    MPI_Group_free(&world);
    MPI_Group_free(&left);
    MPI_Group_free(&right);
    MPI_Group_free(&zero);
    MPI_Group_free(&others);
    MTEST_OK(MPI_Win_free(&win));
    return mtest_finalize();
}
