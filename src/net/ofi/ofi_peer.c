/* The rail's peer table, sparse (README.md, "Peer table"): an index of one pointer per
 * RMPI_OFI_PEER_CHUNK ranks, each chunk allocated when one of its peers is first touched, so
 * a process's memory grows with the peers it talks to, not with the job (the
 * adaptive-transport-selection seed's goal, sec. 1: 273 MB against 93 GB at 2^16 processes,
 * applies to the library's own state as much as to its channels). */
#include "ofi.h"
#include "../net_mem.h"

#include <stdlib.h>

int rmpi_ofi_peer_table_init(rmpi_ofi_rail_t *r)
{
    r->npeer_chunks = (r->env.size + RMPI_OFI_PEER_CHUNK - 1) >> RMPI_OFI_PEER_SHIFT;
    r->peer_chunk = calloc((size_t)(r->npeer_chunks ? r->npeer_chunks : 1), sizeof *r->peer_chunk);
    if (!r->peer_chunk)
        rmpi_fatal("ofi: rank %d: no memory for the peer index of %s (%zu bytes for %d ranks): MPI_ERR_NO_MEM.",
                   r->env.rank, r->pub.hints.name, (size_t)r->npeer_chunks * sizeof *r->peer_chunk, r->env.size);
    r->peer_chunks = r->peers_touched = 0;
    return 0;
}

rmpi_ofi_peer_t *rmpi_ofi_peer_touch(rmpi_ofi_rail_t *r, int i)
{
    rmpi_ofi_peer_t **c = &r->peer_chunk[i >> RMPI_OFI_PEER_SHIFT];
    if (RMPI_UNLIKELY(!*c)) {
        *c = calloc(RMPI_OFI_PEER_CHUNK, sizeof **c);
        /* The callers cannot return it (the VC does not look at send's result, a frame
         * already arrived): the job ends with the reason, as for any allocation here. */
        if (!*c)
            rmpi_fatal("ofi: rank %d: no memory for the state of rank %d on %s (%zu bytes): MPI_ERR_NO_MEM.",
                       r->env.rank, i, r->pub.hints.name, RMPI_OFI_PEER_CHUNK * sizeof **c);
        r->peer_chunks++;
    }
    rmpi_ofi_peer_t *p = &(*c)[i & (RMPI_OFI_PEER_CHUNK - 1)];
    if (!p->touched) {
        p->touched = 1;
        r->peers_touched++;
    }
    return p;
}

size_t rmpi_ofi_peer_table_bytes(const rmpi_ofi_rail_t *r)
{
    return rmpi_ofi_peer_table_model(r->env.size, r->peer_chunks);
}

void rmpi_ofi_peer_table_free(rmpi_ofi_rail_t *r)
{
    for (int k = 0; k < r->npeer_chunks; k++)
        free(r->peer_chunk[k]);
    free(r->peer_chunk);
    r->peer_chunk = NULL;
    r->npeer_chunks = r->peer_chunks = r->peers_touched = 0;
}
