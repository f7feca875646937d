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

/* Reduction operations (op.c, reduce_ops.c). Handles: predefined ops are the ABI
 * constants; user ops are heap objects (refcount: the user's handle plus holders).
 * Predefined ops apply to any type whose basic elements are all one predefined type the
 * standard allows for the op (a vector of MPI_INT, a contiguous of MPI_DOUBLE_INT...);
 * MPI_REPLACE / MPI_NO_OP (RMA) to any type. User functions may call MPI: do not hold
 * the library lock across rmpi_coll_op_apply / _reduce_local with a user op.
 *
 * rmpi_coll_op_check: 0, MPI_ERR_OP (invalid or freed handle, or op not defined on the
 *     type) or MPI_ERR_TYPE (invalid type).
 * rmpi_coll_op_apply: inout[i] = in[i] op inout[i] for `count` elements of type; both
 *     buffers hold the elements in PACKED form (as rmpi_dtype_pack produces). in is the
 *     LEFT operand (MPI's user fn(invec, inoutvec): inoutvec = invec op inoutvec), which
 *     non-commutative ops rely on. User ops with a non-contiguous type see temporary
 *     typed copies (unpack, call, repack). Buffers may sit at any address (misaligned
 *     operands of predefined ops go through a bounce buffer).
 * rmpi_coll_op_reduce_local: the same on buffers in the type's own layout (MPI_Reduce_local).
 * rmpi_coll_op_commutative: 1 for predefined ops (0 for REPLACE, NO_OP), the flag given
 *     to MPI_Op_create for user ops.
 * rmpi_coll_op_retain / release: a holder (persistent collective) keeps the op alive past
 *     MPI_Op_free; no-ops on predefined ops. Caller holds the library lock. */
int rmpi_coll_op_check(MPI_Op op, MPI_Datatype type);
void rmpi_coll_op_apply(MPI_Op op, MPI_Datatype type, const void *in, void *inout, size_t count);
void rmpi_coll_op_reduce_local(MPI_Op op, MPI_Datatype type, const void *in, void *inout, size_t count);
int rmpi_coll_op_commutative(MPI_Op op);
void rmpi_coll_op_retain(MPI_Op op);
void rmpi_coll_op_release(MPI_Op op);
/* For the bindings: a predefined or live user op; predefined; create (exactly one of fn,
 * fn_c); MPI_Op_free (MPI_ERR_OP for predefined, freed or invalid handles). */
int rmpi_coll_op_valid(MPI_Op op);
int rmpi_coll_op_predefined(MPI_Op op);
int rmpi_coll_op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute, MPI_Op *op);
int rmpi_coll_op_free(MPI_Op op);

/* Binomial-tree broadcast and reduction of contiguous bytes (count elements of type for
 * reduce). Allreduce = reduce to 0 + broadcast. */
int rmpi_coll_bcast(rmpi_comm_t *c, void *buf, size_t bytes, int root);
int rmpi_coll_reduce(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, size_t esize, MPI_Datatype type,
                     MPI_Op op, int root);

#endif
