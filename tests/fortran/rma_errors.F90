! One-sided communication and error codes through `use mpi`, with -DRMPI_MPIF_H through
! include 'mpif.h', with -DRMPI_F08 through `use mpi_f08` (one source, so every binding
! answers the same questions): fence
! epochs with put and get, lock/unlock, MPI_ERR_RANK under MPI_ERRORS_RETURN on a
! communicator and on a window, MPI_Error_string, an error handler written in Fortran
! (MPI_Comm_create_errhandler). Prints "fortran ok" on rank 0.
program rma_errors
#include "binding.inc"
    integer :: ierr, rank, nprocs, to, from, cls, slen, errs, ierr2
    WIN_T :: win
    integer, asynchronous :: wbuf(64)
    integer :: sbuf(2), got(1), ncalls, lastcode
    common /rma_errors_eh/ ncalls, lastcode
    ERRHANDLER_T :: eh
#ifdef RMPI_F08
    procedure(MPI_Comm_errhandler_function) :: on_error
#else
    external :: on_error
#endif
    integer(kind=MPI_ADDRESS_KIND) :: wsize, disp
    character(len=MPI_MAX_ERROR_STRING) :: estr

    errs = 0
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    to = mod(rank + 1, nprocs)
    from = mod(rank + nprocs - 1, nprocs)
    sbuf(1) = rank * 100 + 1
    sbuf(2) = rank * 100 + 2

    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call MPI_Send(sbuf, 1, MPI_INTEGER, nprocs, 0, MPI_COMM_WORLD, ierr)
    call MPI_Error_class(ierr, cls, ierr2)
    if (cls /= MPI_ERR_RANK .or. ierr2 /= MPI_SUCCESS) errs = errs + 1
    estr = '?'
    call MPI_Error_string(ierr, estr, slen, ierr2)
    if (ierr2 /= MPI_SUCCESS .or. slen <= 0 .or. len_trim(estr) /= slen) errs = errs + 1
    call MPI_Recv(got, 1, MPI_INTEGER, 0, -5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Error_class(ierr, cls, ierr2)
    if (cls /= MPI_ERR_TAG) errs = errs + 1

    ! a handler written in Fortran: called once with the error code, then the call returns it
    ncalls = 0
    lastcode = MPI_SUCCESS
    call MPI_Comm_create_errhandler(on_error, eh, ierr)
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh, ierr)
    call MPI_Send(sbuf, 1, MPI_INTEGER, nprocs, 0, MPI_COMM_WORLD, ierr)
    call MPI_Error_class(lastcode, cls, ierr2)
    if (ncalls /= 1 .or. cls /= MPI_ERR_RANK .or. ierr /= lastcode) errs = errs + 1
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call MPI_Errhandler_free(eh, ierr)
    if (eh /= MPI_ERRHANDLER_NULL) errs = errs + 1

    wbuf = -1
    wsize = 64 * 4
    call MPI_Win_create(wbuf, wsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
    if (ierr /= MPI_SUCCESS) errs = errs + 1
    call MPI_Win_fence(0, win, ierr)
    disp = rank
    call MPI_Put(sbuf(1), 1, MPI_INTEGER, to, disp, 1, MPI_INTEGER, win, ierr)
    call MPI_Win_fence(0, win, ierr)
    if (wbuf(from + 1) /= from * 100 + 1) errs = errs + 1
    got(1) = -7
    call MPI_Get(got, 1, MPI_INTEGER, to, disp, 1, MPI_INTEGER, win, ierr)
    call MPI_Win_fence(0, win, ierr)
    if (got(1) /= rank * 100 + 1) errs = errs + 1
    call MPI_Win_lock(MPI_LOCK_SHARED, to, 0, win, ierr)
    call MPI_Put(sbuf(2), 1, MPI_INTEGER, to, disp + 32, 1, MPI_INTEGER, win, ierr)
    call MPI_Win_unlock(to, win, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win, ierr)
    if (wbuf(33 + from) /= from * 100 + 2) errs = errs + 1
    call MPI_Win_unlock(rank, win, ierr)
    call MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN, ierr)
    call MPI_Win_lock(MPI_LOCK_SHARED, to, 0, win, ierr)
    call MPI_Put(sbuf, 1, MPI_INTEGER, nprocs, disp, 1, MPI_INTEGER, win, ierr)
    call MPI_Error_class(ierr, cls, ierr2)
    if (cls /= MPI_ERR_RANK) errs = errs + 1
    call MPI_Win_unlock(to, win, ierr)
    call MPI_Win_free(win, ierr)
    if (win /= MPI_WIN_NULL) errs = errs + 1

    include 'report.inc'
end program rma_errors

! The error handler of the test: counts its calls and keeps the last code.
subroutine on_error(comm, code)
#include "binding.inc"
    COMM_T :: comm
    integer :: code, ncalls, lastcode
    common /rma_errors_eh/ ncalls, lastcode
    if (comm /= MPI_COMM_WORLD) return
    ncalls = ncalls + 1
    lastcode = code
end subroutine on_error
