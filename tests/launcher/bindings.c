/*
 * For the binding tests: after MPI_Init (where RMPI_BIND takes effect) each rank prints
 * "cpus: rank R LIST", LIST its Cpus_allowed_list from /proc/self/status.
 */
#include <mpi.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank;
    char line[512], cpus[512] = "?";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Cpus_allowed_list: %511s", cpus) == 1)
            break;
    if (f)
        fclose(f);
    printf("cpus: rank %d %s\n", rank, cpus);
    MPI_Finalize();
    return 0;
}
