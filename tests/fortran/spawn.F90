! MPI_Comm_spawn and MPI_Comm_spawn_multiple from Fortran through use mpi, mpif.h
! (-DRMPI_MPIF_H) or mpi_f08 (-DRMPI_F08): the job spawns two copies of this program with
! the argument "child" (ARGV ended by a blank entry), then two more as two commands of one
! spawn_multiple (ARRAY_OF_ARGV(2, 2)); each child checks its argument and sends its rank to
! the parents' root; the children print nothing. Prints "fortran ok" on rank 0 of the parents.
program spawn
#include "binding.inc"
    integer :: ierr, rank, errs, i, got, codes(2), nremote, round
    character(len=256) :: cmd, arg, cmds(2)
    character(len=8) :: args(2), argvs(2, 2)
    COMM_T :: parent, inter
    INFO_T :: infos(2)

    errs = 0
    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_get_parent(parent, ierr)
    if (parent /= MPI_COMM_NULL) then
        call get_command_argument(1, arg)
        i = rank
        if (arg /= 'child') i = -1
        if (rank == 0 .or. rank == 1) call MPI_Send(i, 1, MPI_INTEGER, 0, 3, parent, ierr)
        call MPI_Comm_disconnect(parent, ierr)
        call MPI_Finalize(ierr)
        stop
    end if
    call get_command_argument(0, cmd)
    args(1) = 'child'
    args(2) = ' '
    cmds = cmd
    argvs(:, 1) = 'child'
    argvs(:, 2) = ' '
    infos = MPI_INFO_NULL
    do round = 1, 2
        codes = -1
        if (round == 1) then
            call MPI_Comm_spawn(cmd, args, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, inter, codes, ierr)
        else
            call MPI_Comm_spawn_multiple(2, cmds, argvs, [1, 1], infos, 0, MPI_COMM_WORLD, inter, codes, ierr)
        end if
        if (ierr /= MPI_SUCCESS) errs = errs + 1
        call MPI_Comm_remote_size(inter, nremote, ierr)
        if (nremote /= 2) errs = errs + 1
        if (rank == 0) then
            if (any(codes /= MPI_SUCCESS)) errs = errs + 1
            do i = 0, 1
                call MPI_Recv(got, 1, MPI_INTEGER, i, 3, inter, MPI_STATUS_IGNORE, ierr)
                if (got /= i) errs = errs + 1
            end do
        end if
        call MPI_Comm_disconnect(inter, ierr)
    end do
    include 'report.inc'
end program spawn
