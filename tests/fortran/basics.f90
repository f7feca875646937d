! Fortran users (use mpi): point-to-point with status fields, MPI_STATUS_IGNORE, Waitany's
! 1-based index, collectives with MPI_IN_PLACE, a derived type, Comm_split, a string out
! (processor name, blank padded), the MPI_TAG_UB attribute as a value, error classes under
! MPI_ERRORS_RETURN, a user reduction (MPI_Op_create), MPI_Wtime. Prints "fortran ok" on
! rank 0; exits 1 on any error.
program basics
    use mpi
    implicit none
    integer :: ierr, rank, size, i, errs, to, from, idx, cls, vec, half, nlen, flag2, myop
    external :: absmax
    integer :: status(MPI_STATUS_SIZE), reqs(2)
    integer :: sbuf(10), rbuf(10), total(4)
    double precision :: t0, x(6), y(3)
    character(len=MPI_MAX_PROCESSOR_NAME) :: pname
    integer(kind=MPI_ADDRESS_KIND) :: tagub
    logical :: flag

    errs = 0
    call MPI_Init(ierr)
    t0 = MPI_Wtime()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
    to = mod(rank + 1, size)
    from = mod(rank + size - 1, size)

    do i = 1, 10
        sbuf(i) = rank * 100 + i
    end do
    call MPI_Sendrecv(sbuf, 10, MPI_INTEGER, to, 5, rbuf, 10, MPI_INTEGER, from, 5, &
                      MPI_COMM_WORLD, status, ierr)
    if (status(MPI_SOURCE) /= from .or. status(MPI_TAG) /= 5) errs = errs + 1
    do i = 1, 10
        if (rbuf(i) /= from * 100 + i) errs = errs + 1
    end do
    call MPI_Sendrecv(sbuf, 1, MPI_INTEGER, to, 6, rbuf, 1, MPI_INTEGER, from, 6, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)

    ! Waitany: the index is 1-based; the second request is a receive from MPI_PROC_NULL
    call MPI_Irecv(rbuf, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, reqs(2), ierr)
    reqs(1) = MPI_REQUEST_NULL
    call MPI_Waitany(2, reqs, idx, status, ierr)
    if (idx /= 2 .or. reqs(2) /= MPI_REQUEST_NULL) errs = errs + 1

    total = rank
    call MPI_Allreduce(MPI_IN_PLACE, total, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (total(3) /= size * (size - 1) / 2) errs = errs + 1

    ! every other double of x, sent as one derived type
    call MPI_Type_vector(3, 1, 2, MPI_DOUBLE_PRECISION, vec, ierr)
    call MPI_Type_commit(vec, ierr)
    x = (/ (dble(rank * 10 + i), i = 1, 6) /)
    call MPI_Sendrecv(x, 1, vec, to, 7, y, 3, MPI_DOUBLE_PRECISION, from, 7, MPI_COMM_WORLD, &
                      status, ierr)
    if (y(2) /= dble(from * 10 + 3)) errs = errs + 1
    call MPI_Type_free(vec, ierr)

    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
    call MPI_Allreduce(1, i, 1, MPI_INTEGER, MPI_SUM, half, ierr)
    if (i /= (size + 1 - mod(rank, 2)) / 2) errs = errs + 1
    call MPI_Comm_free(half, ierr)

    call MPI_Get_processor_name(pname, nlen, ierr)
    if (nlen <= 0 .or. len_trim(pname) /= nlen) errs = errs + 1

    call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tagub, flag, ierr)
    if (.not. flag .or. tagub < 32767) errs = errs + 1

    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
    call MPI_Send(sbuf, 1, MPI_INTEGER, size, 0, MPI_COMM_WORLD, ierr)
    call MPI_Error_class(ierr, cls, flag2)
    if (cls /= MPI_ERR_RANK) errs = errs + 1

    ! a user reduction: element-wise maximum of absolute values, through MPI_Op_create
    call MPI_Op_create(absmax, .true., myop, ierr)
    if (ierr /= MPI_SUCCESS) errs = errs + 1
    x(1) = dble(rank + 1)
    if (mod(rank, 2) == 1) x(1) = -x(1)
    call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, myop, MPI_COMM_WORLD, ierr)
    if (y(1) /= dble(size)) errs = errs + 1
    call MPI_Op_free(myop, ierr)
    if (myop /= MPI_OP_NULL) errs = errs + 1

    if (MPI_Wtime() < t0) errs = errs + 1
    include 'report.inc'
end program basics

! The user reduction: an external subroutine, as MPI_Op_create takes one (an internal one
! would need an executable stack for its trampoline).
subroutine absmax(invec, inoutvec, n, datatype)
    use mpi
    implicit none
    integer :: n, datatype, k
    double precision :: invec(n), inoutvec(n)
    if (datatype /= MPI_DOUBLE_PRECISION) then
        inoutvec = -1d9
        return
    end if
    do k = 1, n
        inoutvec(k) = max(abs(invec(k)), abs(inoutvec(k)))
    end do
end subroutine absmax
