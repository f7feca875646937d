/*
 * coll: collective operations over a communicator's collective context (ctx + 1), built on
 * the core's point-to-point. This issue has Barrier only; the algorithm table comes later.
 * Who calls: api. Threading: caller holds the library lock; calls block in the core.
 */
#ifndef RMPI_COLL_H
#define RMPI_COLL_H

#include "../comm/comm.h"

/* Dissemination barrier: ceil(log2 n) rounds of zero-byte exchanges. */
int rmpi_coll_barrier(rmpi_comm_t *c);

#endif
