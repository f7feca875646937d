! The Alltoallw family, whose per-peer datatype arrays the bindings size from the
! communicator (its group, or the topology's degrees), through use mpi, mpif.h
! (-DRMPI_MPIF_H) or mpi_f08 (-DRMPI_F08): MPI_Alltoallw with MPI_INTEGER to every rank,
! MPI_Alltoallw with MPI_IN_PLACE, MPI_Neighbor_alltoallw on a periodic ring.
! Prints "fortran ok" on rank 0.
program alltoallw
#include "binding.inc"
    integer, parameter :: maxp = 16
    integer :: ierr, rank, nprocs, errs, j
    integer :: sbuf(maxp), rbuf(maxp), counts(maxp), displs(maxp), nbuf(2), nrecv(2), ncounts(2)
    integer(kind=MPI_ADDRESS_KIND) :: ndispls(2)
    DATATYPE_T :: types(maxp), ntypes(2)
    COMM_T :: ring

    errs = 0
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    if (nprocs > maxp) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
    do j = 1, nprocs
        sbuf(j) = rank * 100 + j - 1
        counts(j) = 1
        displs(j) = 4 * (j - 1)
        types(j) = MPI_INTEGER
    end do
    rbuf = -1
    call MPI_Alltoallw(sbuf, counts, displs, types, rbuf, counts, displs, types, MPI_COMM_WORLD, ierr)
    do j = 1, nprocs
        if (rbuf(j) /= (j - 1) * 100 + rank) errs = errs + 1
    end do
    if (ierr /= MPI_SUCCESS) errs = errs + 1

    ! in place: sendcounts, sdispls and sendtypes are ignored (here one element each)
    call MPI_Alltoallw(MPI_IN_PLACE, counts, displs, types(nprocs:nprocs), rbuf, counts, displs, &
                       types, MPI_COMM_WORLD, ierr)
    do j = 1, nprocs
        if (rbuf(j) /= rank * 100 + j - 1) errs = errs + 1
    end do

    ! a periodic ring: left neighbour first, then right
    call MPI_Cart_create(MPI_COMM_WORLD, 1, [nprocs], [.true.], .false., ring, ierr)
    nbuf = [rank * 10 + 1, rank * 10 + 2]
    ncounts = 1
    ndispls = [0_MPI_ADDRESS_KIND, 4_MPI_ADDRESS_KIND]
    ntypes = MPI_INTEGER
    nrecv = -1
    call MPI_Neighbor_alltoallw(nbuf, ncounts, ndispls, ntypes, nrecv, ncounts, ndispls, ntypes, ring, ierr)
    ! from the left neighbour its "right" block, from the right one its "left" block
    if (nrecv(1) /= mod(rank + nprocs - 1, nprocs) * 10 + 2) errs = errs + 1
    if (nrecv(2) /= mod(rank + 1, nprocs) * 10 + 1) errs = errs + 1
    call MPI_Comm_free(ring, ierr)
    include 'report.inc'
end program alltoallw
