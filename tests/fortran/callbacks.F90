! Callbacks written in Fortran, through use mpi, mpif.h (-DRMPI_MPIF_H) or mpi_f08
! (-DRMPI_F08). Attributes: a keyval whose copy adds one to the value (when extra_state came
! through) and whose delete counts its calls, and one with the predefined MPI_COMM_DUP_FN
! and MPI_COMM_NULL_DELETE_FN; MPI_Comm_dup copies, MPI_Comm_free and MPI_Comm_delete_attr
! delete. MPI-1's MPI_Keyval_create with MPI_DUP_FN (not in mpi_f08). A generalized request
! whose query fills the status and whose free is called once.
! Prints "fortran ok" on rank 0.
program callbacks
#include "binding.inc"
    integer :: ierr, rank, errs, key, key2, ndeleted, nfreed, cnt
    common /callbacks_n/ ndeleted, nfreed
    STATUS_T :: status
    REQUEST_T :: req
#ifndef RMPI_F08
    integer :: ival
#endif
    integer(kind=MPI_ADDRESS_KIND) :: extra, aval
    logical :: flag
    COMM_T :: dup
#ifdef RMPI_F08
    procedure(MPI_Comm_copy_attr_function) :: copy_plus1
    procedure(MPI_Comm_delete_attr_function) :: count_delete
    procedure(MPI_Grequest_query_function) :: greq_query
    procedure(MPI_Grequest_free_function) :: greq_free
    procedure(MPI_Grequest_cancel_function) :: greq_cancel
#else
    external :: copy_plus1, count_delete, greq_query, greq_free, greq_cancel
#endif

    errs = 0
    ndeleted = 0
    nfreed = 0
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    extra = 7
    call MPI_Comm_create_keyval(copy_plus1, count_delete, key, extra, ierr)
    call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key2, extra, ierr)
    aval = 41
    call MPI_Comm_set_attr(MPI_COMM_WORLD, key, aval, ierr)
    call MPI_Comm_set_attr(MPI_COMM_WORLD, key2, aval, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPI_Comm_get_attr(dup, key, aval, flag, ierr)
    if (.not. flag .or. aval /= 42) errs = errs + 1
    call MPI_Comm_get_attr(dup, key2, aval, flag, ierr)
    if (.not. flag .or. aval /= 41) errs = errs + 1
    call MPI_Comm_free(dup, ierr)
    if (ndeleted /= 1) errs = errs + 1
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, key, ierr)
    if (ndeleted /= 2 .or. ierr /= MPI_SUCCESS) errs = errs + 1
    call MPI_Comm_delete_attr(MPI_COMM_WORLD, key2, ierr)
    call MPI_Comm_free_keyval(key, ierr)
    call MPI_Comm_free_keyval(key2, ierr)
    if (key /= MPI_KEYVAL_INVALID) errs = errs + 1
#ifndef RMPI_F08
    call MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, key, 0, ierr)
    call MPI_Attr_put(MPI_COMM_WORLD, key, 5, ierr)
    call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
    call MPI_Attr_get(dup, key, ival, flag, ierr)
    if (.not. flag .or. ival /= 5 .or. ierr /= MPI_SUCCESS) errs = errs + 1
    call MPI_Comm_free(dup, ierr)
    call MPI_Attr_delete(MPI_COMM_WORLD, key, ierr)
    call MPI_Keyval_free(key, ierr)
#endif

    call MPI_Grequest_start(greq_query, greq_free, greq_cancel, extra, req, ierr)
    call MPI_Grequest_complete(req, ierr)
    call MPI_Wait(req, status, ierr)
    call MPI_Get_count(status, MPI_BYTE, cnt, ierr)
    if (STATUS_TAG(status) /= 77 .or. cnt /= 0 .or. nfreed /= 1) errs = errs + 1
    if (req /= MPI_REQUEST_NULL .or. ierr /= MPI_SUCCESS) errs = errs + 1
    include 'report.inc'
end program callbacks

subroutine copy_plus1(oldcomm, keyval, extra_state, val_in, val_out, flag, ierr)
#include "binding.inc"
    COMM_T :: oldcomm
    integer :: keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, val_in, val_out
    logical :: flag
    flag = extra_state == 7
    val_out = val_in + 1
    ierr = MPI_SUCCESS
end subroutine copy_plus1

subroutine count_delete(comm, keyval, val, extra_state, ierr)
#include "binding.inc"
    COMM_T :: comm
    integer :: keyval, ierr, ndeleted, nfreed
    common /callbacks_n/ ndeleted, nfreed
    integer(kind=MPI_ADDRESS_KIND) :: val, extra_state
    ndeleted = ndeleted + 1
    ierr = MPI_SUCCESS
end subroutine count_delete

subroutine greq_query(extra_state, status, ierr)
#include "binding.inc"
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    STATUS_T :: status
    integer :: ierr
    call MPI_Status_set_elements(status, MPI_BYTE, 0, ierr)
    call MPI_Status_set_cancelled(status, .false., ierr)
    STATUS_TAG(status) = 77
    if (extra_state /= 7) STATUS_TAG(status) = -1
    ierr = MPI_SUCCESS
end subroutine greq_query

subroutine greq_free(extra_state, ierr)
#include "binding.inc"
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierr, ndeleted, nfreed
    common /callbacks_n/ ndeleted, nfreed
    nfreed = nfreed + 1
    ierr = MPI_SUCCESS
end subroutine greq_free

subroutine greq_cancel(extra_state, complete, ierr)
#include "binding.inc"
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    logical :: complete
    integer :: ierr
    ierr = MPI_SUCCESS
end subroutine greq_cancel
