! The `use mpi` module of RailMPI: the constants of mpif.h (generated at build time from
! mpi.h) in a module. Routines are external procedures (libmpifort), called with implicit
! interfaces as from mpif.h; explicit interfaces are not provided yet (bindings/fortran/README.md).
module mpi
    implicit none
    include 'mpif.h'
end module mpi
