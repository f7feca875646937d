! Built through use mpi and use mpi_f08 (-DRMPI_F08): MPI_Sizeof of every intrinsic type
! and kind it covers, on scalars and arrays of rank 1 and 2, equals storage_size()/8 (one
! character for CHARACTER); MPI_F_sync_reg leaves the buffer as it was. Through mpi_f08
! also the status conversions (MPI-4.0 sec. 19.3.5): a received status crosses
! TYPE(MPI_Status) -> INTEGER array -> TYPE(MPI_Status) and C -> f08 -> C keeping
! MPI_SOURCE, MPI_TAG, MPI_ERROR and the count, and a NULL status is MPI_ERR_ARG. Through
! both, MPI_Register_datarep takes MPI_CONVERSION_FN_NULL (the name is then taken:
! MPI_ERR_DUP_DATAREP the second time) and answers a Fortran conversion function with
! MPI_ERR_UNSUPPORTED_OPERATION.
! Prints "fortran ok" on rank 0; exits 1 on any error.
! callbacks of MPI_Register_datarep: the library must never call them
module extras_cb
#if defined(RMPI_F08)
    use mpi_f08
    use, intrinsic :: iso_c_binding, only: c_ptr
#else
    use mpi
#endif
    implicit none
contains
    subroutine conv(userbuf, datatype, count, filebuf, position, extra_state, ierror)
#if defined(RMPI_F08)
        type(c_ptr), value :: userbuf, filebuf
        type(MPI_Datatype) :: datatype
#else
        integer :: userbuf, filebuf, datatype
#endif
        integer :: count, ierror
        integer(kind=MPI_OFFSET_KIND) :: position
        integer(kind=MPI_ADDRESS_KIND) :: extra_state
        print '(a)', 'a conversion function was called'
        ierror = MPI_ERR_OTHER
    end subroutine conv
    subroutine extent(datatype, file_extent, extra_state, ierror)
#if defined(RMPI_F08)
        type(MPI_Datatype) :: datatype
#else
        integer :: datatype
#endif
        integer(kind=MPI_ADDRESS_KIND) :: file_extent, extra_state
        integer :: ierror
        print '(a)', 'an extent function was called'
        file_extent = 0
        ierror = MPI_ERR_OTHER
    end subroutine extent
end module extras_cb

#if defined(RMPI_F08)
module extras_c
    use mpi_f08
    use, intrinsic :: iso_c_binding, only: c_int, c_ptr
    implicit none
    ! The C library's conversions; mpi_f08 has no Fortran form of these two (C only).
    interface
        integer(c_int) function status_c2f08(c_status, f08_status) bind(C, name="MPI_Status_c2f08")
            import
            type(MPI_Status), intent(in) :: c_status
            type(MPI_Status), intent(out) :: f08_status
        end function status_c2f08
        integer(c_int) function status_f082c(f08_status, c_status) bind(C, name="MPI_Status_f082c")
            import
            type(MPI_Status), intent(in) :: f08_status
            type(MPI_Status), intent(out) :: c_status
        end function status_f082c
        integer(c_int) function status_f082c_null(f08_status, c_status) bind(C, name="MPI_Status_f082c")
            import
            type(MPI_Status), intent(in) :: f08_status
            type(c_ptr), value :: c_status
        end function status_f082c_null
    end interface
end module extras_c
#endif

program extras
    use extras_cb
#if defined(RMPI_F08)
    use extras_c
    use, intrinsic :: iso_c_binding, only: c_null_ptr
#endif
#include "binding.inc"
    integer :: ierr, rank, nprocs, errs, sz(20), want(20)
    integer(1) :: i1, i1a(3)
    integer(2) :: i2, i2a(2, 2)
    integer(4) :: i4, i4a(5)
    integer(8) :: i8, i8a(2)
    real(4) :: r4, r4a(2, 3)
    real(8) :: r8, r8a(4)
    complex(4) :: c4, c4a(2)
    complex(8) :: c8, c8a(2, 2)
    logical :: l, la(3)
    character(len=1) :: ch
    character(len=7) :: cha(2)
    integer :: buf(4)
#if defined(RMPI_F08)
    type(MPI_Status) :: status, back, viac
    integer :: fstat(MPI_STATUS_SIZE), cnt, to, from, i, got(5)
#endif

    errs = 0
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    i1 = 0; i1a = 0; i2 = 0; i2a = 0; i4 = 0; i4a = 0; i8 = 0; i8a = 0
    r4 = 0; r4a = 0; r8 = 0; r8a = 0; c4 = 0; c4a = 0; c8 = 0; c8a = 0
    l = .true.; la = .false.; ch = 'x'; cha = 'railmpi'

    ! MPI_Sizeof: the bytes of one element, scalar or array of any rank; storage_size is in bits
    call MPI_Sizeof(i1, sz(1), ierr); call MPI_Sizeof(i1a, sz(2), ierr)
    call MPI_Sizeof(i2, sz(3), ierr); call MPI_Sizeof(i2a, sz(4), ierr)
    call MPI_Sizeof(i4, sz(5), ierr); call MPI_Sizeof(i4a, sz(6), ierr)
    call MPI_Sizeof(i8, sz(7), ierr); call MPI_Sizeof(i8a, sz(8), ierr)
    call MPI_Sizeof(r4, sz(9), ierr); call MPI_Sizeof(r4a, sz(10), ierr)
    call MPI_Sizeof(r8, sz(11), ierr); call MPI_Sizeof(r8a, sz(12), ierr)
    call MPI_Sizeof(c4, sz(13), ierr); call MPI_Sizeof(c4a, sz(14), ierr)
    call MPI_Sizeof(c8, sz(15), ierr); call MPI_Sizeof(c8a, sz(16), ierr)
    call MPI_Sizeof(l, sz(17), ierr); call MPI_Sizeof(la, sz(18), ierr)
    call MPI_Sizeof(ch, sz(19), ierr); call MPI_Sizeof(cha, sz(20), ierr)
    want = [storage_size(i1), storage_size(i1a), storage_size(i2), storage_size(i2a), storage_size(i4), &
            storage_size(i4a), storage_size(i8), storage_size(i8a), storage_size(r4), storage_size(r4a), &
            storage_size(r8), storage_size(r8a), storage_size(c4), storage_size(c4a), storage_size(c8), &
            storage_size(c8a), storage_size(l), storage_size(la), storage_size(ch), storage_size(ch)] / 8
    if (any(sz /= want)) then
        print '(a,20i3)', 'MPI_Sizeof gave ', sz
        errs = errs + 1
    end if
    ! and the kinds are the bytes they say (complex: two of them)
    if (any(sz(1:15:2) /= [1, 2, 4, 8, 4, 8, 8, 16])) errs = errs + 1
    if (ierr /= MPI_SUCCESS) errs = errs + 1

    ! MPI_F_sync_reg only makes the compiler assume buf changed: its values stay
    buf = [1, 2, 3, 4] * (rank + 1)
    call MPI_F_sync_reg(buf)
    if (any(buf /= [1, 2, 3, 4] * (rank + 1))) errs = errs + 1

    ! MPI_Register_datarep: null conversions register the name; a Fortran one is refused
    call MPI_Register_datarep('rmpi_fnull', MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent, &
                              0_MPI_ADDRESS_KIND, ierr)
    if (ierr /= MPI_SUCCESS) errs = errs + 1
    call MPI_Register_datarep('rmpi_fnull', MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, extent, &
                              0_MPI_ADDRESS_KIND, ierr)
    if (ierr /= MPI_ERR_DUP_DATAREP) errs = errs + 1
    call MPI_Register_datarep('rmpi_fconv', conv, MPI_CONVERSION_FN_NULL, extent, 0_MPI_ADDRESS_KIND, ierr)
    if (ierr /= MPI_ERR_UNSUPPORTED_OPERATION) errs = errs + 1
    call MPI_Register_datarep('rmpi_fconv', MPI_CONVERSION_FN_NULL, conv, extent, 0_MPI_ADDRESS_KIND, ierr)
    if (ierr /= MPI_ERR_UNSUPPORTED_OPERATION) errs = errs + 1

#if defined(RMPI_F08)
    ! status conversions on a real status of a message of 5 integers, tag 70 + rank
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
    call MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN)
    to = mod(rank + 1, nprocs)
    from = mod(rank + nprocs - 1, nprocs)
    got = -1
    call MPI_Sendrecv([(rank * 10 + i, i = 1, 5)], 5, MPI_INTEGER, to, 70 + rank, got, 5, MPI_INTEGER, &
                      MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, status)
    if (status%MPI_SOURCE /= from .or. status%MPI_TAG /= 70 + from .or. got(5) /= from * 10 + 5) errs = errs + 1
    status%MPI_ERROR = MPI_ERR_TAG   ! a value that survives the copy only if copied
    fstat = -1
    call MPI_Status_f082f(status, fstat, ierr)
    if (ierr /= MPI_SUCCESS) errs = errs + 1
    ! 1, 2, 3: mpif.h's MPI_SOURCE, MPI_TAG, MPI_ERROR (mpi_f08 names components instead)
    if (fstat(1) /= from .or. fstat(2) /= 70 + from .or. fstat(3) /= MPI_ERR_TAG) &
        errs = errs + 1
    call MPI_Status_f2f08(fstat, back)
    if (back%MPI_SOURCE /= from .or. back%MPI_TAG /= 70 + from .or. back%MPI_ERROR /= MPI_ERR_TAG) errs = errs + 1
    call MPI_Get_count(back, MPI_INTEGER, cnt, ierr)
    if (ierr /= MPI_SUCCESS .or. cnt /= 5) errs = errs + 1
    if (status_f082c(back, viac) /= MPI_SUCCESS) errs = errs + 1
    back%MPI_TAG = -5
    if (status_c2f08(viac, back) /= MPI_SUCCESS) errs = errs + 1
    call MPI_Get_count(back, MPI_INTEGER, cnt, ierr)
    if (back%MPI_SOURCE /= from .or. back%MPI_TAG /= 70 + from .or. back%MPI_ERROR /= MPI_ERR_TAG .or. cnt /= 5) &
        errs = errs + 1
    if (status_f082c_null(back, c_null_ptr) /= MPI_ERR_ARG) errs = errs + 1
#endif
    include 'report.inc'
end program extras
