/* io-internal: agreement among the ranks of a file, the shared-pointer file. */
#ifndef RMPI_IO_IMPL_H
#define RMPI_IO_IMPL_H

#include "io.h"

/* Every rank's `len` bytes in rank order at `all` (gathered at rank 0, broadcast). */
void rmpi_io_allgather(rmpi_comm_t *c, const void *mine, size_t len, void *all);
/* Collective: the first nonzero code of any rank (0 when all succeeded). */
int rmpi_io_agree(rmpi_comm_t *c, int rc);

/* Shared file pointer: *old = its value, then it becomes (set ? v : old + v); under an
 * fcntl write lock on the shared-pointer file (an empty file reads as shfp_init). */
int rmpi_io_shfp_update(rmpi_file_t *f, MPI_Offset v, int set, MPI_Offset *old);

#endif
