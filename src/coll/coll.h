/*
 * coll: collective operations over a communicator's collective context (ctx + 1). Every
 * collective is a schedule (see "schedules" below): a builder here returns it, and the caller runs it
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

#include <stdio.h>

typedef struct rmpi_nbc rmpi_nbc_t;

/* ---- schedules (nbc.c) ----
 * An algorithm is written once as a schedule, rounds of point-to-point transfers and
 * local steps, and the same schedule serves the blocking call (rmpi_nbc_run), the
 * non-blocking one (MPI_I*: rmpi_nbc_start) and the persistent one (*_init:
 * rmpi_nbc_start with keep, again at every MPI_Start).
 *
 * Rounds: when a round starts, its local steps (copy, reduce, pack, unpack) run in the
 * order they were added, then its receives are posted, then its sends. The next round
 * starts when every transfer of this one has completed. So a round reads what earlier
 * rounds received and may not read what its own receives bring.
 * Tags: rmpi_nbc_new takes the communicator's next collective sequence number and every
 * message of the schedule carries RMPI_NBC_TAG(seq) on the collective context (ctx + 1).
 * MPI has every member start its collectives in the same order, so concurrent schedules
 * of one communicator never match each other's messages; within a schedule, messages of
 * one pair match in order (the core does not overtake). Every member must therefore call
 * rmpi_nbc_new exactly once per collective call, even when it has nothing to send.
 * Buffers: user buffers are referenced, not copied; rmpi_nbc_tmp gives scratch memory
 * that lives as long as the schedule (persistent schedules keep it across restarts).
 * Progress: active schedules advance inside the core's progress (rmpi_core_hook), so a
 * non-blocking collective moves while the user waits on anything.
 * Errors: the first error of a transfer (e.g. MPI_ERR_TRUNCATE) is kept, the schedule
 * still runs to its end (stopping early would leave peers waiting), and the error is the
 * result of rmpi_nbc_run or the request's st_err.
 */

/* Tag of schedule messages: bit 24 set; fixed internal tags (communicator creation) stay
 * below 1 << 24. */
#define RMPI_NBC_TAG(seq) ((int)((1u << 24) | ((seq)&0xffffffu)))

rmpi_nbc_t *rmpi_nbc_new(rmpi_comm_t *c);
/* A schedule of point-to-point operations on c's point-to-point context (MPI_Isendrecv):
 * it takes no collective sequence number (only the caller's rank runs it); each transfer
 * carries its own tag (rmpi_nbc_send_tag/recv_tag; the receive may use MPI_ANY_SOURCE and
 * MPI_ANY_TAG), and the request it completes is a receive whose status is that of the
 * schedule's last receive. */
rmpi_nbc_t *rmpi_nbc_new_p2p(rmpi_comm_t *c);
void rmpi_nbc_send_tag(rmpi_nbc_t *s, const void *buf, size_t bytes, int peer, int tag);
void rmpi_nbc_recv_tag(rmpi_nbc_t *s, void *buf, size_t bytes, int peer, int tag);
/* MPI_Isendrecv(_replace) whole: builds and starts that schedule, deciding how each side's
 * data travels (contiguous in place, else packed in the schedule's scratch); returns the
 * request (a receive, completed with the receive's status). replace: rbuf is sbuf. */
rmpi_req_t *rmpi_nbc_sendrecv(rmpi_comm_t *c, const void *sbuf, size_t scount, rmpi_dtype_t *sdt, int dest, int sendtag,
                              void *rbuf, size_t rcount, rmpi_dtype_t *rdt, int source, int recvtag, int replace);
/* Scratch memory owned by the schedule (NULL only for bytes == 0). */
void *rmpi_nbc_tmp(rmpi_nbc_t *s, size_t bytes);

/* Transfers of the current round; peer is a rank of s's communicator, MPI_PROC_NULL
 * makes the transfer a no-op. A receive of fewer bytes than sent is MPI_ERR_TRUNCATE. */
void rmpi_nbc_send(rmpi_nbc_t *s, const void *buf, size_t bytes, int peer);
void rmpi_nbc_recv(rmpi_nbc_t *s, void *buf, size_t bytes, int peer);
/* Intercommunicators: from now on (on = 1) transfers name ranks of the local group and
 * travel on the local intracommunicator's collective context (comm.h `local`, ctx + 3),
 * with the schedule's tag; on = 0 goes back to the remote group. Returns the previous
 * setting. A no-op on intracommunicators (their ranks are the local group already). */
int rmpi_nbc_local(rmpi_nbc_t *s, int on);
/* Local steps of the current round. */
void rmpi_nbc_copy(rmpi_nbc_t *s, const void *src, void *dst, size_t bytes);
/* inout = in op inout on count elements of type, both packed (coll.h rmpi_coll_op_apply). */
void rmpi_nbc_reduce(rmpi_nbc_t *s, MPI_Op op, MPI_Datatype type, const void *in, void *inout, size_t count);
/* Between a user buffer (count elements of dt) and its packed form; holds a reference on dt. */
void rmpi_nbc_pack(rmpi_nbc_t *s, const void *ubuf, size_t count, rmpi_dtype_t *dt, void *packed);
void rmpi_nbc_unpack(rmpi_nbc_t *s, const void *packed, void *ubuf, size_t count, rmpi_dtype_t *dt);
/* Close the current round (no-op when it is empty). */
void rmpi_nbc_round(rmpi_nbc_t *s);

/* Blocking: run to the end, free the schedule, return the first error (0 if none). */
int rmpi_nbc_run(rmpi_nbc_t *s);
/* Non-blocking: start running and complete req (kind RMPI_REQ_COLL, req->user = s) at the
 * end, with st_err = first error. keep = 0 frees the schedule at completion; keep = 1
 * keeps it for another start (persistent collectives; free it with rmpi_nbc_free). */
void rmpi_nbc_start(rmpi_nbc_t *s, rmpi_req_t *req, int keep);
/* Free a schedule that is not running. */
void rmpi_nbc_free(rmpi_nbc_t *s);

/* Schedules running now (for tests and reports). */
int rmpi_nbc_active(void);

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
 *     typed copies (unpack, call, repack). Buffers may sit at any address (the kernels
 *     of predefined ops load and store unaligned).
 * rmpi_coll_op_kernel: the kernel of a predefined op on a predefined basic type, for
 *     callers that apply one (op, type) often (one-sided accumulates): fn(in, inout, n)
 *     does inout[i] = in[i] op inout[i] on n elements of the basic type at any address,
 *     bit for bit what rmpi_coll_op_apply does. NULL for user ops, REPLACE, NO_OP and
 *     pairs the standard does not define. A table look-up: the kernels are chosen once
 *     per process (AVX2 ones where the CPU has them, reduce_ops.c).
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
rmpi_nbc_t *rmpi_coll_gather_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int root,
                                   int form);
rmpi_nbc_t *rmpi_coll_scatter_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int root,
                                    int form);
/* Blocking Gather(v) (scatter 0) or Scatter(v) taking the linear algorithm with one byte
 * range per block, run at once without a schedule: the same messages (context, tag, order)
 * as the schedule's, so ranks may differ in which of the two they take. one: this rank's
 * block (NULL in place at the root), many: the root's. The call's result, or
 * RMPI_COLL_SHM_DECLINED (then build the schedule). */
int rmpi_coll_rooted_now(rmpi_comm_t *c, const rmpi_coll_blk_t *one, const rmpi_coll_blk_t *many, int root, int form,
                         int scatter);
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
typedef void (*rmpi_coll_kernel_t)(const void *in, void *inout, size_t n);
rmpi_coll_kernel_t rmpi_coll_op_kernel(MPI_Op op, MPI_Datatype basic);
/* The same op in the other orientation, fn(in, inout, n): inout[i] = inout[i] op in[i]
 * (inout the left operand), for a commutative op whose result's bits depend on the order
 * (floating MAX/MIN, the pairs); NULL where rmpi_coll_op_kernel is. */
rmpi_coll_kernel_t rmpi_coll_op_kernel_rev(MPI_Op op, MPI_Datatype basic);
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

/* Blocking calls in a node's shared memory (shm.c; Barrier too): taken when the whole communicator is
 * on one node (an intracommunicator of 2..64 ranks), RMPI_COLL_SHM is on, the kind's
 * algorithm knob is auto, and for reductions the op is predefined; the same on every
 * member. Return RMPI_COLL_SHM_DECLINED when not taken (build and run the schedule
 * instead), else the call's result (0 or MPI_ERR_TRUNCATE). Arguments as for the _sched
 * builders (root < 0: Allreduce); the v and w forms of Allgather and Alltoall only when
 * single copy (cross-memory attach) is usable on the communicator. */
#define RMPI_COLL_SHM_DECLINED (-1)
/* RMPI_REPORT (at finalize, before the core closes): per call class, the algorithms this
 * process ran, each with its calls and range of bytes per rank (report.c). */
void rmpi_coll_report(FILE *f);
/* The same as the "collectives" key of RMPI_REPORT=json's object (`, "collectives": {...}`). */
void rmpi_coll_report_json(FILE *f);
int rmpi_coll_shm_barrier(rmpi_comm_t *c);
int rmpi_coll_shm_bcast(rmpi_comm_t *c, void *buf, size_t count, rmpi_dtype_t *dt, int root);
int rmpi_coll_shm_reduce(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt, MPI_Op op,
                         int root);
/* Blocking Reduce_scatter of a predefined type on a node: on 2 ranks from
 * RMPI_COLL_SHM_REDUCE_SCATTER_CMA bytes each rank's part read from the other in single copy
 * and combined; a short vector the shm Allreduce of the whole vector (total elements;
 * counts[i] for rank i) into scratch, each rank keeping its part
 * (RMPI_COLL_SHM_REDUCE_SCATTER_MAX). */
int rmpi_coll_shm_reduce_scatter(rmpi_comm_t *c, const void *sbuf, void *rbuf, const size_t *counts, size_t total,
                                 rmpi_dtype_t *dt, MPI_Op op);
/* Blocking Scan on a node: on 2 ranks a Reduce to rank 1, rank 0 keeping its own input; on
 * more, a short vector combined from the segment's lines (RMPI_COLL_SHM_SCAN_MAX). */
int rmpi_coll_shm_scan(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt, MPI_Op op);
int rmpi_coll_shm_allgather(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int form);
int rmpi_coll_shm_alltoall(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, int form);
/* Barrier, Bcast, Reduce and Allreduce (root < 0), and Allgather and Alltoall (regular
 * form, through the segment, not single copy), as schedules for MPI_I* and *_init, in
 * the segment: NULL when not taken (build the point-to-point schedule instead). Taken under
 * the rules above, and only once a blocking call made the segment (making it blocks, which
 * an I* call must not). Non-blocking calls of a communicator run in the segment one after
 * another in the order they were started, blocking calls after those started before them. */
/* 2 ranks: one block from writer to the other rank, through the segment or, as *path says,
 * from cma_min bytes in single copy (rmpi_coll_shm_two_cma) or as a point-to-point message the caller runs
 * with *wbytes, the writer's bytes (shm.c). */
enum { RMPI_COLL_TWO_P2P = 1, RMPI_COLL_TWO_CMA = 2 };
int rmpi_coll_shm_two_move(rmpi_comm_t *c, void *buf, size_t count, rmpi_dtype_t *dt, int writer, size_t cma_min,
                           int *path, size_t *wbytes);
int rmpi_coll_shm_two_cma(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv, size_t wbytes);
rmpi_nbc_t *rmpi_coll_shm_barrier_sched(rmpi_comm_t *c);
rmpi_nbc_t *rmpi_coll_shm_bcast_sched(rmpi_comm_t *c, void *buf, size_t count, rmpi_dtype_t *dt, int root);
rmpi_nbc_t *rmpi_coll_shm_reduce_sched(rmpi_comm_t *c, const void *sbuf, void *rbuf, size_t count, rmpi_dtype_t *dt,
                                       MPI_Op op, int root);
rmpi_nbc_t *rmpi_coll_shm_allgather_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv,
                                          int form);
rmpi_nbc_t *rmpi_coll_shm_alltoall_sched(rmpi_comm_t *c, const rmpi_coll_blk_t *send, const rmpi_coll_blk_t *recv,
                                         int form);

#endif
