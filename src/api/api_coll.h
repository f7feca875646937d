/* api-internal helpers shared by the collective bindings (blocking, I*, *_init). */
#ifndef RMPI_API_COLL_H
#define RMPI_API_COLL_H

#include "api_pt2pt.h"

#include "../coll/coll.h"

/* How a collective binding runs its schedule: blocking (MPI_X), started (MPI_Ix) or
 * persistent (MPI_X_init). The generated forms (src/api/forms.txt) pass it down. */
enum { RMPI_API_RUN, RMPI_API_START, RMPI_API_PERSIST };

/* Hand a built schedule to the user as a request: started now (MPI_I*, freed when it
 * completes) or inactive and persistent (*_init, run by every MPI_Start). Lock held. */
void rmpi_api_coll_request(rmpi_comm_t *c, rmpi_nbc_t *s, MPI_Request *request, int persistent);

/* Root argument: a rank of an intracommunicator; on an intercommunicator MPI_ROOT,
 * MPI_PROC_NULL or a rank of the remote group. MPI_ERR_ROOT (reported) otherwise. */
int rmpi_api_coll_check_root(const char *func, rmpi_comm_t *c, int root);
/* Scan, Exscan and the neighbourhood collectives: MPI_ERR_COMM (reported) on an
 * intercommunicator. */
int rmpi_api_coll_intra_only(const char *func, rmpi_comm_t *c);

#endif
