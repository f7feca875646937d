/*
 * coll: collective operations over a communicator's collective context (ctx + 1), built on
 * the core's point-to-point. This issue has Barrier only; Bcast, Reduce and Allreduce
 * with binomial trees; the algorithm table comes later.
 * Who calls: api. Threading: caller holds the library lock; calls block in the core.
 */
#ifndef RMPI_COLL_H
#define RMPI_COLL_H

#include "../comm/comm.h"

typedef struct rmpi_nbc rmpi_nbc_t;

/* Dissemination barrier: ceil(log2 n) rounds of zero-byte exchanges. */
int rmpi_coll_barrier(rmpi_comm_t *c);
rmpi_nbc_t *rmpi_coll_barrier_sched(rmpi_comm_t *c);

/* Predefined operations on predefined contiguous types (user ops come later).
 * rmpi_coll_op_check returns 0, MPI_ERR_OP or MPI_ERR_TYPE. */
int rmpi_coll_op_check(MPI_Op op, MPI_Datatype type);
void rmpi_coll_op_apply(MPI_Op op, MPI_Datatype type, const void *in, void *inout, size_t n);

/* Binomial-tree broadcast and reduction of contiguous bytes (count elements of type for
 * reduce). Allreduce = reduce to 0 + broadcast. */
int rmpi_coll_bcast(rmpi_comm_t *c, void *buf, size_t bytes, int root);
int rmpi_coll_reduce(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, size_t esize, MPI_Datatype type,
                     MPI_Op op, int root);

#endif
