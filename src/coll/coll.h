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
 * Intercommunicators (inter.c): every builder below except scan and neighbour takes one
 * with MPI-4.1 semantics: root is MPI_ROOT at the root, MPI_PROC_NULL at the rest of its
 * group (dt may then be NULL) and the root's remote rank across; per-rank block arrays
 * and results name the remote group (c->rsize), Reduce_scatter's counts the local group;
 * reductions combine the other group's data; no MPI_IN_PLACE (the api rejects it).
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

/* Data-movement collectives (gather.c: gather and scatter, allgather.c, alltoall.c, neighbor.c).
 * A rank's part of a user buffer is a block: its address (displacement applied), element
 * count and datatype. The api turns the regular, v and w argument forms into block arrays
 * (one block per rank or per neighbour); a builder reads the arrays only while it builds,
 * the buffers when the schedule runs. send == NULL means MPI_IN_PLACE. Each side moves
 * packed bytes, so send and receive types may differ where their signatures match.
 * Algorithms are chosen by size and process count (gather_select.c, knobs COLL_GATHER...);
 * every rank must build with the same form and matching sizes. */
typedef struct rmpi_dtype rmpi_dtype_t;
typedef struct rmpi_coll_blk {
    void *buf;
    size_t count;
    rmpi_dtype_t *dt;
} rmpi_coll_blk_t;
enum { RMPI_COLL_REGULAR, RMPI_COLL_V, RMPI_COLL_W }; /* v, w: counts (and types) differ per rank */

/* Rooted: recv (gather) / send (scatter) are n blocks at the root and ignored elsewhere. */
rmpi_nbc_t *rmpi_coll_gather_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv,
                                   int root, int form);
rmpi_nbc_t *rmpi_coll_scatter_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv,
                                    int root, int form);
/* send: 1 block; recv: n blocks. */
rmpi_nbc_t *rmpi_coll_allgather_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv,
                                      int form);
/* send, recv: n blocks each. */
rmpi_nbc_t *rmpi_coll_alltoall_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv,
                                     int form);
/* Neighbourhood: recv[i] comes from sources[i], send[j] goes to dests[j] (MPI_PROC_NULL:
 * that block is left alone); cart: c has a Cartesian topology (pairing rule, neighbor.c). */
rmpi_nbc_t *rmpi_coll_neighbor_sched(rmpi_comm_t *c, int indegree, const int *sources, const rmpi_coll_blk_t *recv,
                                     int outdegree, const int *dests, const rmpi_coll_blk_t *send, int cart);

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

/* Reduction-family collectives (bcast.c, reduce.c, allreduce.c, scan.c, reduce_scatter.c). */
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


#endif
