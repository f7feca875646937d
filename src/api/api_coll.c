/* Collective bindings available so far: Bcast, Reduce, Allreduce (predefined operations on
 * predefined types). The rest of the collectives are generated stubs. */
#include "api_pt2pt.h"

#include "../coll/coll.h"

#include <stdlib.h>
#include <string.h>

#define COLL_COMM(c)                                                            \
    RMPI_API_INIT_CHECK();                                                      \
    rmpi_comm_t *c = rmpi_comm_get(comm);                                       \
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator %p", (void *)comm)

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    COLL_COMM(c);
    rmpi_dtype_t *dt;
    int rc = rmpi_api_check_buf(__func__, c, buffer, count, datatype, &dt);
    if (rc)
        return rc;
    RMPI_CHECK(root >= 0 && root < c->size, c, MPI_ERR_ROOT, "root %d is not a rank of the communicator (size %d)",
               root, c->size);
    size_t bytes = (size_t)count * dt->size;
    int contig = rmpi_dtype_is_contig(dt, (size_t)count);
    void *tmp = contig ? rmpi_dtype_contig_ptr(buffer, dt) : rmpi_xmalloc(bytes);
    if (!contig && c->rank == root)
        rmpi_dtype_pack(buffer, (size_t)count, dt, 0, tmp, bytes);
    RMPI_LOCK();
    rc = rmpi_coll_bcast(c, tmp, bytes, root);
    RMPI_UNLOCK();
    if (!contig) {
        if (c->rank != root)
            rmpi_dtype_unpack(tmp, bytes, buffer, (size_t)count, dt, 0);
        free(tmp);
    }
    return rc ? RMPI_ERROR(c, rc, "broadcast failed") : MPI_SUCCESS;
}

static int reduce(const char *func, const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  int root, rmpi_comm_t *c, int all)
{
    rmpi_dtype_t *dt;
    if (count < 0)
        return rmpi_api_error(c, MPI_ERR_COUNT, func, "count %d is negative", count);
    int rc = rmpi_api_check_buf(func, c, recvbuf == MPI_IN_PLACE ? NULL : recvbuf, 0, datatype, &dt);
    if (rc)
        return rc;
    if (!all && (root < 0 || root >= c->size))
        return rmpi_api_error(c, MPI_ERR_ROOT, func, "root %d is not a rank of the communicator (size %d)", root,
                              c->size);
    rc = rmpi_coll_op_check(op, datatype);
    if (rc)
        return rmpi_api_error(c, rc, func, "%s", rc == MPI_ERR_OP ? "the operation is not defined on this datatype"
                                                                   : "reductions on this datatype are not supported yet");
    int in_place = sendbuf == MPI_IN_PLACE;
    const void *src = in_place ? recvbuf : sendbuf;
    RMPI_LOCK();
    rc = rmpi_coll_reduce(c, src, recvbuf, (size_t)count, dt->size, datatype, op, all ? 0 : root);
    if (!rc && all)
        rc = rmpi_coll_bcast(c, recvbuf, (size_t)count * dt->size, 0);
    RMPI_UNLOCK();
    return rc ? rmpi_api_error(c, rc, func, "reduction failed") : MPI_SUCCESS;
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm)
{
    COLL_COMM(c);
    return reduce(__func__, sendbuf, recvbuf, count, datatype, op, root, c, 0);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    COLL_COMM(c);
    return reduce(__func__, sendbuf, recvbuf, count, datatype, op, 0, c, 1);
}
