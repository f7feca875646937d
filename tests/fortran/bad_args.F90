! Explicit interfaces make a wrong argument list a compile error. fortran_test.sh builds
! each case with -DCASE=n: 0 (use mpi) and 5 (mpi_f08) are right and must compile, so a
! refusal of 1-4 is the compiler checking the call, not a missing module.
program bad_args
#if CASE < 3
    use mpi
#else
    use mpi_f08
#endif
    implicit none
    integer :: n, ierr
#if CASE == 0
    logical :: flag
    call MPI_Comm_test_inter(MPI_COMM_WORLD, flag, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
#elif CASE == 1
    call MPI_Comm_size(MPI_COMM_WORLD, n)             ! use mpi: ierror missing
#elif CASE == 2
    call MPI_Comm_test_inter(MPI_COMM_WORLD, n, ierr) ! use mpi: INTEGER for a LOGICAL
#elif CASE == 3
    call MPI_Comm_size(MPI_COMM_WORLD)                ! mpi_f08: size missing
#elif CASE == 4
    call MPI_Comm_size(0, n, ierr)                    ! mpi_f08: INTEGER for TYPE(MPI_Comm)
#else
    call MPI_Comm_size(MPI_COMM_WORLD, n)
    call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
#endif
end program bad_args
