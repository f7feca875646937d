/*
 * coll: collective operations over a communicator's collective context (ctx + 1). Every
 * collective is a schedule (nbc.h): a builder here returns it, and the caller runs it
 * (rmpi_nbc_run: blocking), starts it (MPI_I*) or keeps it (persistent *_init).
 * Algorithms are chosen per call by select.c from the message size, the process count,
 * the node layout (rmpi_topo_node_of) and the RMPI_COLL_* knobs.
 *
 * Buffers: count elements of dt (any committed type; non-contiguous data is packed into
 * schedule scratch and unpacked at the end). sbuf == MPI_IN_PLACE means the input is in
 * rbuf, where the standard allows it. User buffers are referenced, not copied, so they must
 * stay valid until the schedule completes. Arguments are checked by the caller (api):
 * op valid on dt, root in range, counts non-negative.
 * Reductions combine in rank order (lower ranks' data is the left operand), so
 * non-commutative operations give the standard's result; algorithms that cannot keep that
 * order are only chosen for commutative operations.
 * Who calls: api. Threading: caller holds the library lock.
 */
#ifndef RMPI_COLL_H
#define RMPI_COLL_H

#include "../comm/comm.h"
#include "../datatype/datatype.h"

typedef struct rmpi_nbc rmpi_nbc_t;

/* Dissemination barrier, or node-aware (fan-in to node leaders, dissemination among them,
 * fan-out). */
int rmpi_coll_barrier(rmpi_comm_t *c);
rmpi_nbc_t *rmpi_coll_barrier_sched(rmpi_comm_t *c);

rmpi_nbc_t *rmpi_coll_bcast_sched(rmpi_comm_t *c, void *buf, size_t count, rmpi_dtype_t *dt, int root);
/* rbuf is significant at root only. */
rmpi_nbc_t *rmpi_coll_reduce_sched(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt,
                                   MPI_Op op, int root);
rmpi_nbc_t *rmpi_coll_allreduce_sched(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt,
                                      MPI_Op op);
/* Inclusive (MPI_Scan) or exclusive (MPI_Exscan: rbuf of rank 0 is left untouched). */
rmpi_nbc_t *rmpi_coll_scan_sched(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt,
                                 MPI_Op op, int exclusive);
/* counts[c->size] elements per rank; the input is their sum (in rbuf when in place). */
rmpi_nbc_t *rmpi_coll_reduce_scatter_sched(rmpi_comm_t *c, const void *sbuf, void *rbuf, const size_t *counts,
                                           rmpi_dtype_t *dt, MPI_Op op);

/* Reduction operations (reduce_ops.c; the ops branch owns them).
 * rmpi_coll_op_check returns 0, MPI_ERR_OP or MPI_ERR_TYPE.
 * rmpi_coll_op_apply: inout[i] = in[i] op inout[i] on count elements of type, both PACKED;
 * in is the left operand. rmpi_coll_op_commutative: 0 only for user operations created
 * non-commutative. retain/release: a schedule holding op keeps it alive (persistent
 * collectives). */
int rmpi_coll_op_check(MPI_Op op, MPI_Datatype type);
void rmpi_coll_op_apply(MPI_Op op, MPI_Datatype type, const void *in, void *inout, size_t count);
int rmpi_coll_op_commutative(MPI_Op op);
void rmpi_coll_op_retain(MPI_Op op);
void rmpi_coll_op_release(MPI_Op op);

#endif
