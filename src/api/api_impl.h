/*
 * api: the MPI C bindings. Each binding: check the library state and arguments (before
 * taking the lock), convert handles to objects, take the lock, call the layer below, drop
 * the lock, and report errors through the communicator's error handler.
 *
 * Conventions for a binding:
 *     int MPI_Foo(..., MPI_Comm comm)
 *     {
 *         RMPI_API_INIT_CHECK();
 *         rmpi_comm_t *c = rmpi_comm_get(comm);
 *         RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator");
 *         RMPI_CHECK(count >= 0, c, MPI_ERR_COUNT, "count %d is negative", count);
 *         RMPI_LOCK();
 *         int rc = ...;
 *         RMPI_UNLOCK();
 *         return rc ? RMPI_ERROR(c, rc, "what failed, in a sentence") : MPI_SUCCESS;
 *     }
 * RMPI_CHECK/RMPI_ERROR prefix the message with the function name, invoke the error
 * handler (NULL comm: MPI_COMM_WORLD's, the standard's default for calls without a
 * communicator) and evaluate to the error code. Never call them with the lock held.
 * Codes are error classes (MPI_ERR_*), so Error_class is the identity on them.
 */
#ifndef RMPI_API_IMPL_H
#define RMPI_API_IMPL_H

#include <mpi.h>

#include "../comm/comm.h"
#include "../core/core.h"

/* rmpi_api_state: whether the runtime is up (MPI calls allowed), started by MPI_Init or the
 * first MPI_Session_init and ended when neither the world model nor a session uses it. */
enum { RMPI_STATE_PRE_INIT = 0, RMPI_STATE_INIT, RMPI_STATE_FINALIZED };
extern int rmpi_api_state;
/* Sessions (api_session.c) hold the runtime: 0, or an MPI error class with a message
 * printed (the runtime cannot start again once it has ended). */
int rmpi_api_runtime_acquire(int thread_level);
void rmpi_api_runtime_release(void);

int rmpi_api_error(rmpi_comm_t *comm, int code, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int rmpi_api_not_initialized(const char *func);
/* Called by the generated stubs of functions RailMPI does not implement yet. */
int rmpi_api_unsupported(const char *fname);

#define RMPI_ERROR(comm, code, ...) rmpi_api_error((comm), (code), __func__, __VA_ARGS__)
#define RMPI_CHECK(cond, comm, code, ...)                                 \
    do {                                                                  \
        if (RMPI_UNLIKELY(!(cond)))                                       \
            return rmpi_api_error((comm), (code), __func__, __VA_ARGS__); \
    } while (0)
#define RMPI_API_INIT_CHECK()                                 \
    do {                                                      \
        if (RMPI_UNLIKELY(rmpi_api_state != RMPI_STATE_INIT)) \
            return rmpi_api_not_initialized(__func__);        \
    } while (0)

/* Status <-> request. MPI_internal[0..1] hold the byte count, MPI_internal[2] the cancel flag. */
static inline void rmpi_status_set(MPI_Status *st, int src, int tag, int err, size_t bytes, int cancelled)
{
    st->MPI_SOURCE = src;
    st->MPI_TAG = tag;
    st->MPI_ERROR = err;
    st->MPI_internal[0] = (int)(uint32_t)(bytes & 0xffffffffu);
    st->MPI_internal[1] = (int)(uint32_t)((uint64_t)bytes >> 32);
    st->MPI_internal[2] = cancelled;
}
static inline size_t rmpi_status_bytes(const MPI_Status *st)
{
    return (size_t)(uint32_t)st->MPI_internal[0] | ((size_t)(uint32_t)st->MPI_internal[1] << 32);
}
/* Fill st (unless MPI_STATUS_IGNORE) from a completed request. */
void rmpi_api_req_status(const rmpi_req_t *r, MPI_Status *st);
/* The empty status of the standard (PROC_NULL, inactive persistent request). */
void rmpi_api_status_empty(MPI_Status *st);

/* Request handles (core.h rmpi_req_handle: slot and generation, not an address). */
static inline MPI_Request rmpi_api_req_handle(const rmpi_req_t *r) { return (MPI_Request)r->handle; }
/* Validate a request handle: NULL when it is not a live request. */
static inline rmpi_req_t *rmpi_api_req(MPI_Request h)
{
    rmpi_req_t *r = rmpi_req_handle((uintptr_t)h);
    return r && r->magic == RMPI_REQ_MAGIC ? r : NULL;
}

const char *rmpi_api_err_name(int code);
/* MPI_ERR_COUNT for count elements of dt whose bytes or span overflow (datatype.h
 * rmpi_dtype_count_ok), through c's handler. */
struct rmpi_dtype;
int rmpi_api_count_error(const char *func, rmpi_comm_t *c, MPI_Count count, const struct rmpi_dtype *dt);
/* Hand a new communicator (NULL: MPI_COMM_NULL) to the user: it takes the parent's error
 * handler, a copy of info (may be NULL) and, when dup, the parent's attributes through
 * their copy callbacks (on a failing callback it is freed and the code returned). */
/* MPI_Comm_free, or MPI_Comm_disconnect (disconnect = 1: a barrier over comm first). */
int rmpi_api_comm_free(const char *func, MPI_Comm *comm, int disconnect);
int rmpi_api_comm_adopt(rmpi_comm_t *parent, rmpi_comm_t *n, int dup, rmpi_info_t *info, MPI_Comm *out);
/* Error handler objects: reference counts of user handlers (no-ops on predefined ones),
 * validity, and invoking a session's or a file's handler (returns code unless the handler ends
 * the job). */
void rmpi_api_errh_retain(MPI_Errhandler eh);
void rmpi_api_errh_release(MPI_Errhandler eh);
/* An object's handler slot takes eh (a reference on it; the old one's dropped). */
void rmpi_api_errh_replace(MPI_Errhandler *slot, MPI_Errhandler eh);
int rmpi_api_errh_valid(MPI_Errhandler eh);
int rmpi_api_errh_call_session(MPI_Errhandler eh, MPI_Session s, int code, const char *msg);
/* A file's error (f may be MPI_FILE_NULL) through handler eh, message as rmpi_api_error's. */
int rmpi_api_file_error(MPI_Errhandler eh, MPI_File f, int code, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A window's error through its handler eh (MPI_ERRORS_ARE_FATAL by default), and
 * MPI_Win_call_errhandler. */
int rmpi_api_win_error(MPI_Errhandler eh, MPI_Win w, int code, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
int rmpi_api_win_call_errhandler(MPI_Errhandler eh, MPI_Win w, int code);
/* The largest error code or class in use (MPI_LASTUSEDCODE). */
int rmpi_api_last_used_code(void);

/* Communicator-side state set up by MPI_Init (appnum, MPI_INFO_ENV) and attributes torn
 * down first thing in MPI_Finalize (MPI_COMM_SELF's, then MPI_COMM_WORLD's). */
void rmpi_api_attr_init(int appnum);
void rmpi_api_info_env_init(int maxprocs, int thread_level);
int rmpi_api_attr_finalize(void);
/* Dynamic processes (api_dpm.c): connect to the parent at init (a spawned process), forget
 * the parent communicator when it is freed. */
int rmpi_api_dpm_init(int singleton);
void rmpi_api_dpm_forget(rmpi_comm_t *c);
/* Datatype attributes: copied by MPI_Type_dup, deleted by MPI_Type_free (callbacks run). */
int rmpi_api_type_attr_dup(MPI_Datatype oldtype, MPI_Datatype newtype);
int rmpi_api_type_attr_free(MPI_Datatype type);
/* Window attributes: deleted by MPI_Win_free (callbacks run). */
int rmpi_api_win_attr_free(MPI_Win win);

#endif
