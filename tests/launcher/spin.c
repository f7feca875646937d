/*
 * An MPI job that never ends by itself, for the launcher's failure tests: each rank prints
 * "spin: rank R pid P up" after MPI_Init, then
 *   wait   waits in MPI_Recv for a message nobody sends (the progress engine spins idle);
 *   ring   passes a token around the ring forever (traffic on every connection);
 *   abort  rank 1 (0 of a single rank) calls MPI_Abort with code 5 after a barrier, the
 *          others wait;
 *   segkill rank 0 calls the first collective on a new communicator, which makes its node
 *          segment and waits for rank 1 to map it; rank 1 instead waits until the segment
 *          shows in /dev/shm, prints "spin: segment seen", SIGKILLs rank 0 (a creator killed
 *          before the unlink) and waits.
 */
#include <mpi.h>

#include <dirent.h>
#include <signal.h>
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
    if (argc > 1 && strcmp(argv[1], "segkill") == 0 && size > 1) {
        int pid0 = (int)getpid();
        MPI_Comm dup;
        MPI_Bcast(&pid0, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        if (rank == 0)
            MPI_Barrier(dup);
        if (rank == 1) {
            /* the node segment's name holds its creator's pid: "...-s<pid>-" (with the job's
             * prefix) or "rmpi-seg-<pid>-" (without) */
            char with[32], without[32];
            snprintf(with, sizeof with, "-s%d-", pid0);
            snprintf(without, sizeof without, "rmpi-seg-%d-", pid0);
            int seen = 0;
            for (int i = 0; i < 500 && !seen; i++) {
                DIR *d = opendir("/dev/shm");
                for (struct dirent *e; d && (e = readdir(d)) && !seen;)
                    seen = strstr(e->d_name, with) || strncmp(e->d_name, without, strlen(without)) == 0;
                if (d)
                    closedir(d);
                if (!seen)
                    usleep(10000);
            }
            if (seen) {
                printf("spin: segment seen\n");
                fflush(stdout);
            }
            kill(pid0, SIGKILL);
        }
    }
    if (argc > 1 && strcmp(argv[1], "ring") == 0) {
        for (;;)
            MPI_Sendrecv(&token, 1, MPI_LONG, next, 0, &token, 1, MPI_LONG, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Recv(&token, 1, MPI_LONG, next, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
