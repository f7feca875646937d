/*
 * For knob_test.sh: MPI_Init, one message around the ring and an Allreduce (so the knobs
 * the job was given are used), then "knob_init: rank R ok". A bad RMPI_* value must stop
 * it inside MPI_Init.
 */
#include <mpi.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size, token = rank, sum = 0;
    MPI_Sendrecv_replace(&token, 1, MPI_INT, next, 0, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int ok = token == prev && sum == size * (size - 1) / 2;
    if (ok)
        printf("knob_init: rank %d ok\n", rank);
    MPI_Finalize();
    return ok ? 0 : 1;
}
