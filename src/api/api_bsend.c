/* Buffered mode bindings: Buffer_attach/detach/flush/iflush, the communicator's buffer
 * calls and Bsend. The pools and the sends from them are the core's (core_bsend.c); here
 * the arguments are checked, the slots named and the errors reported. */
#include "api_pt2pt.h"

int rmpi_api_bpool_attach(rmpi_bpool_t **slot, void *buf, size_t size, const char **why)
{
    return rmpi_core_bpool_attach(slot, buf, size, why);
}

void rmpi_api_bpool_flush(rmpi_bpool_t *p) { rmpi_core_bpool_flush(p); }

MPI_Request rmpi_api_bpool_iflush(rmpi_bpool_t *p, rmpi_comm_t *c)
{
    RMPI_LOCK();
    rmpi_req_t *r = rmpi_api_greq_new(NULL, NULL, NULL, NULL, c);
    if (!rmpi_core_bpool_iflush(p, r)) {
        rmpi_api_greq_release(r);
        RMPI_UNLOCK();
        return rmpi_api_done_req(c);
    }
    RMPI_UNLOCK();
    return rmpi_api_req_handle(r);
}

int rmpi_api_bpool_detach(rmpi_bpool_t **slot, void *addr, MPI_Count *size, const char **why)
{
    void *buf = NULL;
    size_t n = 0;
    int rc = rmpi_core_bpool_detach(slot, &buf, &n, why);
    if (rc == MPI_SUCCESS) {
        *(void **)addr = buf;
        *size = (MPI_Count)n;
    }
    return rc;
}

/* Attach and detach for the process (c NULL: errors go to MPI_COMM_WORLD's handler) and for
 * a communicator (its handler); the int and _c forms of MPI_Buffer_attach/detach and
 * MPI_Comm_attach/detach_buffer come from src/api/forms.txt (the end of this file). */
static int buffer_attach(const char *func, rmpi_comm_t *c, rmpi_bpool_t **slot, void *buffer, MPI_Count size)
{
    if (RMPI_UNLIKELY(size < 0))
        return rmpi_api_error(c, MPI_ERR_ARG, func, "size %lld is negative", (long long)size);
    const char *why = NULL;
    int rc = rmpi_api_bpool_attach(slot, buffer, (size_t)size, &why);
    return rc ? rmpi_api_error(c, rc, func, "%s", why) : MPI_SUCCESS;
}

/* An int form narrows *size unchecked: its buffer was attached through the int form, or
 * through a _c form with a size that fits. */
static int buffer_detach(const char *func, rmpi_comm_t *c, rmpi_bpool_t **slot, void *buffer_addr, MPI_Count *size)
{
    if (RMPI_UNLIKELY(!buffer_addr || !size))
        return rmpi_api_error(c, MPI_ERR_ARG, func, "buffer_addr and size must not be NULL");
    const char *why = NULL;
    int rc = rmpi_api_bpool_detach(slot, buffer_addr, size, &why);
    return rc ? rmpi_api_error(c, rc, func, "%s", why) : MPI_SUCCESS;
}

int MPI_Buffer_flush(void)
{
    RMPI_API_INIT_CHECK();
    rmpi_api_bpool_flush(rmpi_core_bpool_proc);
    return MPI_SUCCESS;
}

int MPI_Buffer_iflush(MPI_Request *request)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(request, NULL, MPI_ERR_ARG, "request must not be NULL");
    *request = rmpi_api_bpool_iflush(rmpi_core_bpool_proc, NULL);
    return MPI_SUCCESS;
}

/* ---- per communicator (MPI-4.1) ---- */

#define GET_COMM(c, h)                 \
    RMPI_API_INIT_CHECK();             \
    rmpi_comm_t *c = rmpi_comm_get(h); \
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator")

int MPI_Comm_flush_buffer(MPI_Comm comm)
{
    GET_COMM(c, comm);
    rmpi_api_bpool_flush(c->bsend);
    return MPI_SUCCESS;
}

int MPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    GET_COMM(c, comm);
    RMPI_CHECK(request, c, MPI_ERR_ARG, "request must not be NULL");
    *request = rmpi_api_bpool_iflush(c->bsend, c);
    return MPI_SUCCESS;
}

/* MPI_Comm_free: the buffer goes with the communicator, once its messages are sent. */
void rmpi_api_bsend_comm_free(rmpi_comm_t *c)
{
    if (!c->bsend)
        return;
    void *addr;
    MPI_Count n;
    const char *why;
    rmpi_api_bpool_detach(&c->bsend, &addr, &n, &why);
}

int rmpi_api_bsend(const char *func, const void *buf, int count, rmpi_dtype_t *dt, int dest, int tag, rmpi_comm_t *c)
{
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    size_t bytes = (size_t)count * dt->size, size = 0;
    RMPI_LOCK();
    int rc = rmpi_core_bsend(c->bsend, rmpi_comm_world_rank(c, dest), c->ctx, c->rank, tag, buf, (size_t)count, dt,
                             bytes, &size);
    RMPI_UNLOCK();
    if (rc)
        return rmpi_api_error(c, MPI_ERR_BUFFER, func,
                              "the attached buffer (%zu bytes) has no room for %zu bytes plus MPI_BSEND_OVERHEAD; "
                              "attach a larger one with MPI_Buffer_attach or MPI_Comm_attach_buffer",
                              size, bytes);
    return MPI_SUCCESS;
}

#include "api/api_bsend.forms.h"
