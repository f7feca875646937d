! mpi_f08 users: point-to-point (status components, MPI_ANY_SOURCE, nonblocking with
! MPI_STATUSES_IGNORE), collectives (MPI_IN_PLACE, a rank-2 array), derived types, ierror
! left out, handles compared, strided sections copied by blocking calls and refused with
! MPI_ERR_BUFFER by nonblocking ones, large counts, a user reduction (MPI_Op_create with an
! f08 MPI_User_function). One-sided, error codes and keyvals through mpi_f08: rma_errors.F90
! and keyvals.F90.
! Prints "fortran ok" on rank 0; exits 1 on any error.
module f08_ops
    use mpi_f08
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    implicit none
contains
    ! element-wise maximum of absolute values; -1e9 everywhere if the datatype is not the one used
    subroutine absmax(invec, inoutvec, len, datatype)
        type(c_ptr), value :: invec, inoutvec
        integer :: len
        type(MPI_Datatype) :: datatype
        double precision, pointer :: a(:), b(:)
        call c_f_pointer(invec, a, [len])
        call c_f_pointer(inoutvec, b, [len])
        if (datatype /= MPI_DOUBLE_PRECISION) then
            b = -1d9
        else
            b = max(abs(a), abs(b))
        end if
    end subroutine absmax
end module f08_ops

program f08
    use mpi_f08
    use f08_ops
    implicit none
    integer :: ierr, rank, nprocs, i, errs, to, from, cls, cnt, tsize
    type(MPI_Status) :: status
    type(MPI_Request) :: reqs(2)
    type(MPI_Datatype) :: vec
    type(MPI_Comm) :: half
    type(MPI_Op) :: myop
    type(MPI_Info) :: info
    integer :: sbuf(10), rbuf(10), got(64)
    double precision :: x(6), y(3), m(3, 2), msum(3, 2), w(4, 3)
    logical :: flag
    integer(kind=MPI_COUNT_KIND) :: bigcnt

    errs = 0
    call MPI_Init()
    call MPI_Initialized(flag)
    if (.not. flag) errs = errs + 1
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
    to = mod(rank + 1, nprocs)
    from = mod(rank + nprocs - 1, nprocs)

    ! ring exchange: the status components
    sbuf = [(rank * 100 + i, i = 1, 10)]
    call MPI_Sendrecv(sbuf, 10, MPI_INTEGER, to, 5, rbuf, 10, MPI_INTEGER, from, 5, &
                      MPI_COMM_WORLD, status, ierr)
    if (status%MPI_SOURCE /= from .or. status%MPI_TAG /= 5 .or. ierr /= MPI_SUCCESS) errs = errs + 1
    if (any(rbuf /= [(from * 100 + i, i = 1, 10)])) errs = errs + 1
    call MPI_Get_count(status, MPI_INTEGER, cnt)
    if (cnt /= 10) errs = errs + 1

    ! large counts: the _c forms answer under the same generic names
    bigcnt = 4
    rbuf = -1
    call MPI_Sendrecv(sbuf, bigcnt, MPI_INTEGER, to, 9, rbuf, bigcnt, MPI_INTEGER, from, 9, &
                      MPI_COMM_WORLD, status)
    bigcnt = -1
    call MPI_Get_count(status, MPI_INTEGER, bigcnt)
    if (bigcnt /= 4 .or. rbuf(4) /= from * 100 + 4 .or. rbuf(5) /= -1) errs = errs + 1
    call MPI_Type_size(MPI_DOUBLE_PRECISION, bigcnt)
    if (bigcnt /= 8) errs = errs + 1

    ! MPI_ANY_SOURCE: rank 0 hears from everyone, in any order, and the status says who
    if (rank == 0) then
        do i = 1, nprocs - 1
            call MPI_Recv(rbuf, 10, MPI_INTEGER, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, status)
            if (status%MPI_SOURCE /= rbuf(1) .or. status%MPI_TAG /= 30) errs = errs + 1
            call MPI_Get_count(status, MPI_INTEGER, cnt)
            if (cnt /= 2) errs = errs + 1
        end do
    else
        call MPI_Send([rank, rank], 2, MPI_INTEGER, 0, 30, MPI_COMM_WORLD)
    end if

    ! nonblocking: requests become MPI_REQUEST_NULL
    rbuf = -1
    call MPI_Irecv(rbuf, 3, MPI_INTEGER, from, 6, MPI_COMM_WORLD, reqs(1))
    call MPI_Isend(sbuf, 3, MPI_INTEGER, to, 6, MPI_COMM_WORLD, reqs(2))
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
    if (any(reqs /= MPI_REQUEST_NULL) .or. rbuf(3) /= from * 100 + 3) errs = errs + 1

    ! collectives
    i = 0
    if (rank == 0) i = 42
    call MPI_Bcast(i, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
    if (i /= 42) errs = errs + 1
    got(1:4) = rank
    call MPI_Allreduce(MPI_IN_PLACE, got, 4, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (got(3) /= nprocs * (nprocs - 1) / 2) errs = errs + 1
    m = dble(rank + 1)
    call MPI_Allreduce(m, msum, 6, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    if (any(msum /= dble(nprocs * (nprocs + 1) / 2))) errs = errs + 1
    call MPI_Allgather(rank, 1, MPI_INTEGER, got, 1, MPI_INTEGER, MPI_COMM_WORLD)
    if (any(got(1:nprocs) /= [(i, i = 0, nprocs - 1)])) errs = errs + 1
    call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half)
    call MPI_Allreduce(1, i, 1, MPI_INTEGER, MPI_SUM, half)
    if (i /= (nprocs + 1 - mod(rank, 2)) / 2) errs = errs + 1
    call MPI_Comm_free(half)
    if (half /= MPI_COMM_NULL) errs = errs + 1
    call MPI_Op_create(absmax, .true., myop)
    x(1:2) = dble(rank + 1)
    if (mod(rank, 2) == 1) x(1:2) = -x(1:2)
    call MPI_Allreduce(x, y, 2, MPI_DOUBLE_PRECISION, myop, MPI_COMM_WORLD)
    if (any(y(1:2) /= dble(nprocs))) errs = errs + 1
    call MPI_Op_free(myop)
    if (myop /= MPI_OP_NULL) errs = errs + 1

    ! a derived type: every other double of x
    call MPI_Type_vector(3, 1, 2, MPI_DOUBLE_PRECISION, vec)
    call MPI_Type_commit(vec)
    call MPI_Type_size(vec, tsize)
    if (tsize /= 24) errs = errs + 1
    x = [(dble(rank * 10 + i), i = 1, 6)]
    call MPI_Sendrecv(x, 1, vec, to, 7, y, 3, MPI_DOUBLE_PRECISION, from, 7, MPI_COMM_WORLD, status)
    if (any(y /= [dble(from * 10 + 1), dble(from * 10 + 3), dble(from * 10 + 5)])) errs = errs + 1
    call MPI_Type_free(vec)
    if (vec /= MPI_DATATYPE_NULL) errs = errs + 1

    ! array sections: a blocking call sends and receives a strided one element by element
    ! (also with a negative stride, and into a row of a matrix, leaving the rest alone); a
    ! nonblocking call refuses it with MPI_ERR_BUFFER; a contiguous section goes as is
    call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
    w = -1d0
    call MPI_Sendrecv(x(1:6:2), 3, MPI_DOUBLE_PRECISION, to, 8, w(2, :), 3, MPI_DOUBLE_PRECISION, &
                      from, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    if (ierr /= MPI_SUCCESS .or. any(w(2, :) /= [(dble(from * 10 + i), i = 1, 5, 2)])) errs = errs + 1
    if (any(w(1, :) /= -1d0) .or. any(w(3:4, :) /= -1d0)) errs = errs + 1
    call MPI_Sendrecv(x(6:1:-2), 3, MPI_DOUBLE_PRECISION, to, 8, y, 3, MPI_DOUBLE_PRECISION, from, 8, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    if (any(y /= [(dble(from * 10 + i), i = 6, 1, -2)])) errs = errs + 1
    call MPI_Isend(m(1, :), 2, MPI_DOUBLE_PRECISION, to, 8, MPI_COMM_WORLD, reqs(1), ierr)
    if (ierr /= MPI_ERR_BUFFER) errs = errs + 1
    call MPI_Sendrecv(x(2:4), 3, MPI_DOUBLE_PRECISION, to, 8, y, 3, MPI_DOUBLE_PRECISION, from, 8, &
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    if (y(3) /= dble(from * 10 + 4)) errs = errs + 1

    ! MPI_Info_create_env takes no argument list from Fortran
    call MPI_Info_create_env(info, ierr)
    call MPI_Info_get_nkeys(info, cnt)
    if (ierr /= MPI_SUCCESS .or. cnt < 0) errs = errs + 1
    call MPI_Info_free(info)
    if (info /= MPI_INFO_NULL) errs = errs + 1

    if (MPI_Wtime() <= 0d0) errs = errs + 1
    include 'report.inc'
end program f08
