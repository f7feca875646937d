/* Each rank talks to its pair (rank ^ 1) alone: eager messages, a rendezvous message and an
 * any-source receive both ways, then MPI_Finalize with no collective before it (mtest's
 * finalize reduces to rank 0, which would contact every rank). Over libfabric the testlist
 * reads RMPI_REPORT=json: the provider's peer table must hold that one peer whatever the
 * number of ranks, since a rank's state is allocated at its first contact only. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG (256 * 1024) /* above every provider's eager limit: rendezvous */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    if (peer < size) {
        char *out = malloc(BIG), *in = malloc(BIG);
        for (int i = 0; i < BIG; i++)
            out[i] = (char)(rank * 31 + i * 7);
        for (int k = 0; k < 100; k++) {
            int v = rank * 1000 + k, got = -1;
            MPI_Sendrecv(&v, 1, MPI_INT, peer, k, &got, 1, MPI_INT, peer, k, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            errs += got != peer * 1000 + k;
        }
        MPI_Request rq;
        MPI_Status st;
        MPI_Irecv(in, BIG, MPI_CHAR, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &rq);
        MPI_Send(out, BIG, MPI_CHAR, peer, 7, MPI_COMM_WORLD);
        MPI_Wait(&rq, &st);
        errs += st.MPI_SOURCE != peer;
        for (int i = 0; i < BIG; i++)
            errs += in[i] != (char)(peer * 31 + i * 7);
        free(out);
        free(in);
    }
    if (errs)
        fprintf(stderr, "[rank %d] Found %d errors\n", rank, errs);
    MPI_Finalize();
    return errs != 0;
}
