/*
 * libFuzzer harness of the dynamic-process exchange (src/comm/dpm.c: recv_group, the
 * checks of the other side's header, the business cards through rmpi_core_peer_add to the
 * net layer's and the tcp provider's card parsers, the intercommunicator built from them),
 * reached the real way: MPI_Comm_join on one end of a socketpair whose other end sends the
 * input as the partner's message (docs/wire/dpm.md "The roots' exchange") and closes. A
 * bad message must make MPI_Comm_join fail (errors return here), never crash, hang or exit.
 * A card's node `ffffffff` is replaced by this host's node tag, so that the corpus's
 * loopback cards pair with this process's rails wherever it runs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mpi.h>

#include "rt/rt.h"
#include "fuzz_singleton.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_singleton();
    MPI_Init(argc, argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        abort();
    /* the input fits the socket buffer (libFuzzer's -max_len, 4 KiB by default) */
    char *msg = malloc(size + 1), node[16];
    memcpy(msg, data, size);
    msg[size] = 0;
    snprintf(node, sizeof node, ".%08x:", (unsigned)rmpi_topo_node_tag());
    for (char *p = msg; (p = memmem(p, size - (size_t)(p - msg), ".ffffffff:", 10)) != NULL; p += 10)
        memcpy(p, node, 10);
    if (size && write(sv[1], msg, size) != (ssize_t)size)
        abort();
    free(msg);
    shutdown(sv[1], SHUT_WR);
    MPI_Comm ic = MPI_COMM_NULL;
    if (MPI_Comm_join(sv[0], &ic) == MPI_SUCCESS && ic != MPI_COMM_NULL)
        MPI_Comm_free(&ic);
    close(sv[0]);
    close(sv[1]);
    return 0;
}
