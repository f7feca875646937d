/*
 * An MPI job that never ends by itself, for the launcher's failure tests: each rank prints
 * "spin: rank R pid P up" after MPI_Init, then
 *   wait   waits in MPI_Recv for a message nobody sends (the progress engine spins idle);
 *   ring   passes a token around the ring forever (traffic on every connection);
 *   abort  rank 1 (0 of a single rank) calls MPI_Abort with code 5 after a barrier, the
 *          others wait.
 */
#include <mpi.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("spin: rank %d pid %d up\n", rank, (int)getpid());
    fflush(stdout);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    long token = 0;
    if (argc > 1 && strcmp(argv[1], "abort") == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == (size > 1))
            MPI_Abort(MPI_COMM_WORLD, 5);
    }
    if (argc > 1 && strcmp(argv[1], "ring") == 0) {
        for (;;)
            MPI_Sendrecv(&token, 1, MPI_LONG, next, 0, &token, 1, MPI_LONG, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Recv(&token, 1, MPI_LONG, next, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
