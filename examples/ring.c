/* Pass a token around the ring of ranks several times; every hop adds 1, so after
 * LAPS laps rank 0 must get back LAPS * size. */
#include <mpi.h>

#include <stdio.h>

#define LAPS 10

int main(int argc, char **argv)
{
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    long token = 0;
    int bad = 0;

    for (int lap = 0; lap < LAPS; lap++) {
        if (rank == 0) {
            long out = token + 1;
            /* Sendrecv rather than Send then Recv: with one rank the token goes to itself. */
            MPI_Sendrecv(&out, 1, MPI_LONG, next, lap, &token, 1, MPI_LONG, prev, lap, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            if (token != (long)(lap + 1) * size) {
                fprintf(stderr, "ring: lap %d: token came back as %ld, expected %ld\n", lap, token,
                        (long)(lap + 1) * size);
                bad = 1;
            }
        } else {
            MPI_Status st;
            MPI_Recv(&token, 1, MPI_LONG, prev, lap, MPI_COMM_WORLD, &st);
            /* Each rank knows what it must see: lap * size from earlier laps plus one hop per rank before it. */
            long want = (long)lap * size + rank;
            if (token != want || st.MPI_SOURCE != prev || st.MPI_TAG != lap) {
                fprintf(stderr, "ring: rank %d lap %d: got token %ld from %d tag %d, expected %ld from %d tag %d\n",
                        rank, lap, token, st.MPI_SOURCE, st.MPI_TAG, want, prev, lap);
                bad = 1;
            }
            token++;
            MPI_Send(&token, 1, MPI_LONG, next, lap, MPI_COMM_WORLD);
        }
    }

    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ring: %d laps over %d ranks, token %ld: %s\n", LAPS, size, token, anybad ? "FAILED" : "ok");

    MPI_Finalize();
    return anybad ? 1 : 0;
}
