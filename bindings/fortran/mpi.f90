! The `use mpi` module of RailMPI: the constants of mpif.h and the explicit interfaces of
! every routine (both generated at build time from mpi.h by tools/gen_fortran.py); the
! routines are the external procedures of libmpifort that mpif.h users call, except
! MPI_Sizeof, a generic whose specifics are this module's (linked into libmpifort).
module mpi
    implicit none
    include 'mpif.h'
    include 'mpi_interfaces.h'
contains
    include 'mpi_procedures.h'
end module mpi
