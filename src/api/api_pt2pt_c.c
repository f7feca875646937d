/*
 * Large-count (_c) point-to-point bindings.
 *
 * mpi4py built against the standard ABI (and any MPI-4 program using MPI_Count) calls
 * only the _c forms. The point-to-point path takes int counts, so these forward to the
 * int bindings and refuse a count above INT_MAX with MPI_ERR_COUNT; when the requests
 * carry an MPI_Count, they become the real bindings and the int ones forward to them.
 */
#include <limits.h>

#include "api_impl.h"

#define COUNT_FITS(n, comm)                                        \
    RMPI_CHECK((n) <= INT_MAX, rmpi_comm_get(comm), MPI_ERR_COUNT, \
               "count %lld is above INT_MAX, which RailMPI's point-to-point path cannot carry yet", (long long)(n))

#define SEND_C(name)                                                                                              \
    int MPI_##name##_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) \
    {                                                                                                             \
        COUNT_FITS(count, comm);                                                                                  \
        return MPI_##name(buf, (int)count, datatype, dest, tag, comm);                                            \
    }
#define ISEND_C(name)                                                                                             \
    int MPI_##name##_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, \
                       MPI_Request *request)                                                                      \
    {                                                                                                             \
        COUNT_FITS(count, comm);                                                                                  \
        return MPI_##name(buf, (int)count, datatype, dest, tag, comm, request);                                   \
    }

SEND_C(Send)
SEND_C(Ssend)
SEND_C(Rsend)
SEND_C(Bsend)
ISEND_C(Isend)
ISEND_C(Issend)
ISEND_C(Irsend)
ISEND_C(Ibsend)
ISEND_C(Send_init)
ISEND_C(Ssend_init)
ISEND_C(Rsend_init)
ISEND_C(Bsend_init)

int MPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Status *status)
{
    COUNT_FITS(count, comm);
    return MPI_Recv(buf, (int)count, datatype, source, tag, comm, status);
}

int MPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                MPI_Request *request)
{
    COUNT_FITS(count, comm);
    return MPI_Irecv(buf, (int)count, datatype, source, tag, comm, request);
}

int MPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                    MPI_Request *request)
{
    COUNT_FITS(count, comm);
    return MPI_Recv_init(buf, (int)count, datatype, source, tag, comm, request);
}

int MPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status)
{
    COUNT_FITS(count, MPI_COMM_WORLD);
    return MPI_Mrecv(buf, (int)count, datatype, message, status);
}

int MPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request)
{
    COUNT_FITS(count, MPI_COMM_WORLD);
    return MPI_Imrecv(buf, (int)count, datatype, message, request);
}

int MPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                   MPI_Status *status)
{
    COUNT_FITS(sendcount, comm);
    COUNT_FITS(recvcount, comm);
    return MPI_Sendrecv(sendbuf, (int)sendcount, sendtype, dest, sendtag, recvbuf, (int)recvcount, recvtype, source,
                        recvtag, comm, status);
}

int MPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                           int recvtag, MPI_Comm comm, MPI_Status *status)
{
    COUNT_FITS(count, comm);
    return MPI_Sendrecv_replace(buf, (int)count, datatype, dest, sendtag, source, recvtag, comm, status);
}

int MPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                    MPI_Request *request)
{
    COUNT_FITS(sendcount, comm);
    COUNT_FITS(recvcount, comm);
    return MPI_Isendrecv(sendbuf, (int)sendcount, sendtype, dest, sendtag, recvbuf, (int)recvcount, recvtype, source,
                         recvtag, comm, request);
}

int MPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source,
                            int recvtag, MPI_Comm comm, MPI_Request *request)
{
    COUNT_FITS(count, comm);
    return MPI_Isendrecv_replace(buf, (int)count, datatype, dest, sendtag, source, recvtag, comm, request);
}
