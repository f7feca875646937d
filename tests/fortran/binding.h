! The first lines of every program unit of the tests built through all three bindings
! (cpp #include): -DRMPI_F08 for use mpi_f08, -DRMPI_MPIF_H for include 'mpif.h', neither
! for use mpi. Handles are declared as COMM_T, WIN_T, ERRHANDLER_T, DATATYPE_T, REQUEST_T, INFO_T,
! a status as STATUS_T, and STATUS_TAG(s) is its tag.
#if defined(RMPI_F08)
    use mpi_f08
    implicit none
#define COMM_T type(MPI_Comm)
#define WIN_T type(MPI_Win)
#define ERRHANDLER_T type(MPI_Errhandler)
#define DATATYPE_T type(MPI_Datatype)
#define REQUEST_T type(MPI_Request)
#define INFO_T type(MPI_Info)
#define STATUS_T type(MPI_Status)
#define STATUS_TAG(s) s%MPI_TAG
#elif defined(RMPI_MPIF_H)
    implicit none
    include 'mpif.h'
#else
    use mpi
    implicit none
#endif
#if !defined(RMPI_F08)
#define COMM_T integer
#define WIN_T integer
#define ERRHANDLER_T integer
#define DATATYPE_T integer
#define REQUEST_T integer
#define INFO_T integer
#define STATUS_T integer, dimension(MPI_STATUS_SIZE)
#define STATUS_TAG(s) s(MPI_TAG)
#endif
