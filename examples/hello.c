/* Smallest useful MPI program: every rank reports where it runs. */
#include <mpi.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, len;
    char name[MPI_MAX_PROCESSOR_NAME];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);

    if (rank < 0 || rank >= size || len <= 0) {
        fprintf(stderr, "hello: impossible rank %d of %d (processor name length %d)\n", rank, size, len);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    printf("hello from rank %d of %d on %s\n", rank, size, name);

    /* A collective at the end proves every rank can reach every other one. */
    int sum = 0, one = 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size) {
        fprintf(stderr, "hello: rank %d: allreduce counted %d ranks, expected %d\n", rank, sum, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    MPI_Finalize();
    return 0;
}
