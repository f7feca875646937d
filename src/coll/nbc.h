/*
 * coll/nbc: collective schedules. An algorithm is written once as a schedule, rounds of
 * point-to-point transfers and local steps, and the same schedule serves the blocking call
 * (rmpi_nbc_run), the non-blocking one (MPI_I*: rmpi_nbc_start) and the persistent one
 * (*_init: rmpi_nbc_start with keep, again at every MPI_Start).
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
 * Threading: caller holds the library lock.
 */
#ifndef RMPI_NBC_H
#define RMPI_NBC_H

#include "../comm/comm.h"
#include "../datatype/datatype.h"

/* Tag of schedule messages: bit 24 set; fixed internal tags (communicator creation) stay
 * below 1 << 24. */
#define RMPI_NBC_TAG(seq) ((int)((1u << 24) | ((seq)&0xffffffu)))

typedef struct rmpi_nbc rmpi_nbc_t;

rmpi_nbc_t *rmpi_nbc_new(rmpi_comm_t *c);
/* A schedule of point-to-point operations on c's point-to-point context (MPI_Isendrecv):
 * it takes no collective sequence number (only the caller's rank runs it); each transfer
 * carries its own tag (rmpi_nbc_send_tag/recv_tag; the receive may use MPI_ANY_SOURCE and
 * MPI_ANY_TAG), and the request it completes is a receive whose status is that of the
 * schedule's last receive. */
rmpi_nbc_t *rmpi_nbc_new_p2p(rmpi_comm_t *c);
void rmpi_nbc_send_tag(rmpi_nbc_t *s, const void *buf, size_t bytes, int peer, int tag);
void rmpi_nbc_recv_tag(rmpi_nbc_t *s, void *buf, size_t bytes, int peer, int tag);
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

#endif
