/* Which network libraries a rank has loaded once MPI_Init and a message to its neighbour
 * are done. libfabric is loaded on first use (src/net/ofi/ofi_dl.c), since Debian's pulls in
 * PSM libraries whose constructors cost 0.2 s at every start: with RMPI_NET=tcp or shm, or
 * auto with every rank on this node (no provider to look for), neither libfabric nor a PSM
 * library may be in /proc/self/maps; with RMPI_NET=ofi libfabric must be. Auto across
 * nodes looks for a provider and may load it: not checked. */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mapped(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, name) != NULL;
    if (f)
        fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size, v = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MTEST_OK(MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 0, &v, 1, MPI_INT, (rank + size - 1) % size, 0,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MTEST_CHECK(v == (rank + size - 1) % size, "received %d", v);
    const char *net = getenv("RMPI_NET");
    MPI_Comm node;
    int nnode;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nnode);
    MPI_Comm_free(&node);
    int ofi = net && !strcmp(net, "ofi");
    int none =
        net ? !strcmp(net, "tcp") || !strcmp(net, "shm") || (!strcmp(net, "auto") && nnode == size) : nnode == size;
    int in = mapped("libfabric.so");
    MTEST_CHECK(!ofi || in, "RMPI_NET=ofi: libfabric is not loaded");
    MTEST_CHECK(!none || !in, "RMPI_NET=%s, %d of %d ranks on this node: libfabric is loaded", net ? net : "auto",
                nnode, size);
    MTEST_CHECK(!none || (!mapped("libpsm2") && !mapped("libinfinipath")), "a PSM library is loaded");
    if (rank == 0)
        printf("libfabric %s\n", in ? "loaded" : "not loaded");
    return mtest_finalize();
}
