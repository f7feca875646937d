/* Communicator bindings for this issue: size/rank/dup/free/compare/names. */
#include "api_impl.h"

#include <stdio.h>
#include <string.h>

#define GET_COMM(c, comm)                                                      \
    RMPI_API_INIT_CHECK();                                                     \
    rmpi_comm_t *c = rmpi_comm_get(comm);                                      \
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator %p", (void *)(comm))

int MPI_Comm_size(MPI_Comm comm, int *size)
{
    GET_COMM(c, comm);
    RMPI_CHECK(size, c, MPI_ERR_ARG, "size must not be NULL");
    *size = c->size;
    return MPI_SUCCESS;
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    GET_COMM(c, comm);
    RMPI_CHECK(rank, c, MPI_ERR_ARG, "rank must not be NULL");
    *rank = c->rank;
    return MPI_SUCCESS;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    GET_COMM(c, comm);
    RMPI_CHECK(newcomm, c, MPI_ERR_ARG, "newcomm must not be NULL");
    rmpi_comm_t *n;
    RMPI_LOCK();
    int rc = rmpi_comm_dup(c, &n);
    RMPI_UNLOCK();
    if (rc)
        return RMPI_ERROR(c, rc, "could not agree on a new context id");
    /* the copy inherits the error handler (MPI semantics) and keeps no name */
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(comm, &eh);
    n->errh = MPI_ERRORS_ARE_FATAL;
    MPI_Comm_set_errhandler((MPI_Comm)n, eh);
    MPI_Errhandler_free(&eh);
    *newcomm = (MPI_Comm)n;
    return MPI_SUCCESS;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    GET_COMM(c, comm);
    RMPI_CHECK(newcomm, c, MPI_ERR_ARG, "newcomm must not be NULL");
    RMPI_CHECK(color >= 0 || color == MPI_UNDEFINED, c, MPI_ERR_ARG, "color %d is negative", color);
    rmpi_comm_t *n;
    RMPI_LOCK();
    int rc = rmpi_comm_split(c, color, key, &n);
    RMPI_UNLOCK();
    if (rc)
        return RMPI_ERROR(c, rc, "could not build the new communicator");
    if (n && (uintptr_t)n->errh >= 4096) { /* the new communicator shares the parent's handler */
        n->errh = MPI_ERRORS_ARE_FATAL;
        MPI_Errhandler eh;
        MPI_Comm_get_errhandler(comm, &eh);
        MPI_Comm_set_errhandler((MPI_Comm)n, eh);
        MPI_Errhandler_free(&eh);
    }
    *newcomm = n ? (MPI_Comm)n : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_free(MPI_Comm *comm)
{
    RMPI_API_INIT_CHECK();
    RMPI_CHECK(comm, NULL, MPI_ERR_ARG, "comm must not be NULL");
    rmpi_comm_t *c = rmpi_comm_get(*comm);
    RMPI_CHECK(c, NULL, MPI_ERR_COMM, "invalid communicator");
    RMPI_CHECK(!c->predefined, c, MPI_ERR_COMM, "%s cannot be freed", c->name);
    MPI_Comm_set_errhandler(*comm, MPI_ERRORS_ARE_FATAL); /* drop our reference to a user handler */
    RMPI_LOCK();
    rmpi_comm_release(c);
    RMPI_UNLOCK();
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    RMPI_API_INIT_CHECK();
    rmpi_comm_t *a = rmpi_comm_get(comm1), *b = rmpi_comm_get(comm2);
    RMPI_CHECK(a && b, NULL, MPI_ERR_COMM, "invalid communicator");
    RMPI_CHECK(result, a, MPI_ERR_ARG, "result must not be NULL");
    *result = rmpi_comm_compare(a, b);
    return MPI_SUCCESS;
}

int MPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    GET_COMM(c, comm);
    RMPI_CHECK(name, c, MPI_ERR_ARG, "name must not be NULL");
    snprintf(c->name, sizeof c->name, "%s", name);
    return MPI_SUCCESS;
}

int MPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    GET_COMM(c, comm);
    RMPI_CHECK(name && resultlen, c, MPI_ERR_ARG, "name and resultlen must not be NULL");
    *resultlen = snprintf(name, MPI_MAX_OBJECT_NAME, "%s", c->name);
    return MPI_SUCCESS;
}
