/* api-internal helpers shared by the point-to-point, request and probe bindings. */
#ifndef RMPI_API_PT2PT_H
#define RMPI_API_PT2PT_H

#include "api_impl.h"

#include "../datatype/datatype.h"

#define RMPI_TAG_UB 0x7fffffff

/* Checks shared by every send/receive flavour; evaluate to an error code or 0. */
int rmpi_api_check_buf(const char *func, rmpi_comm_t *c, const void *buf, MPI_Count count, MPI_Datatype type,
                       rmpi_dtype_t **dt);
/* The buffer part of it alone, for a second buffer of (count, dt) already checked. */
int rmpi_api_check_buf_of(const char *func, rmpi_comm_t *c, const void *buf, MPI_Count count, const rmpi_dtype_t *dt);
int rmpi_api_check_rank(const char *func, rmpi_comm_t *c, int rank, int any_ok);
int rmpi_api_check_tag(const char *func, rmpi_comm_t *c, int tag, int any_ok);

/* Build a request from user arguments (rmpi_core_isend/irecv post it): the datatype's
 * reference held for a user type, the data as one byte range or typed (RMPI_RF_TYPED). */
rmpi_req_t *rmpi_api_send_req(const void *buf, int count, rmpi_dtype_t *dt, int dest, int tag, rmpi_comm_t *c,
                              int mode);
rmpi_req_t *rmpi_api_recv_req(void *buf, int count, rmpi_dtype_t *dt, int src, int tag, rmpi_comm_t *c);
/* A request that is complete at once (MPI_PROC_NULL). */
rmpi_req_t *rmpi_api_null_req(int kind, rmpi_comm_t *c);
/* An active request already complete with an empty status (work done inside the call:
 * Ibsend, Comm_idup). Takes the lock. */
MPI_Request rmpi_api_done_req(rmpi_comm_t *c);

/* Complete-and-free bookkeeping of Wait/Test: status out, request released or deactivated,
 * handle reset. Returns the request's error code (MPI_ERR_TRUNCATE...). */
int rmpi_api_req_finish(MPI_Request *h, MPI_Status *st);

/* Buffered mode (api_bsend.c over core_bsend.c): Bsend copies into the communicator's
 * buffer, else the process's. A pool is attached to a slot (process, communicator or
 * session); detach waits until its messages are sent. Errors come back as a class and a
 * reason. */
int rmpi_api_bsend(const char *func, const void *buf, int count, rmpi_dtype_t *dt, int dest, int tag, rmpi_comm_t *c);
int rmpi_api_bpool_attach(rmpi_bpool_t **slot, void *buf, size_t size, const char **why);
int rmpi_api_bpool_detach(rmpi_bpool_t **slot, void *addr, MPI_Count *size, const char **why);
void rmpi_api_bpool_flush(rmpi_bpool_t *p);                         /* takes the lock */
MPI_Request rmpi_api_bpool_iflush(rmpi_bpool_t *p, rmpi_comm_t *c); /* takes the lock */
void rmpi_api_bsend_comm_free(rmpi_comm_t *c);

/* Generalized requests (api_greq.c), also used inside the library (Iflush). */
rmpi_req_t *rmpi_api_greq_new(MPI_Grequest_query_function *query, MPI_Grequest_free_function *free_fn,
                              MPI_Grequest_cancel_function *cancel, void *extra, rmpi_comm_t *c);
int rmpi_api_greq_status(rmpi_req_t *r, MPI_Status *st); /* the query function's code */
int rmpi_api_greq_finish(rmpi_req_t *r, MPI_Status *st); /* status, free function, release */
int rmpi_api_greq_release(rmpi_req_t *r);                /* free function, release */
int rmpi_api_greq_cancel(rmpi_req_t *r);

#endif
