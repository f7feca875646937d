C     The oldest form users still bring: fixed source form with include 'mpif.h', a
C     broadcast and a reduction; MPI_F_SYNC_REG keeps N, and MPI_REGISTER_DATAREP takes
C     the EXTERNAL MPI_CONVERSION_FN_NULL. Prints "fortran ok" on rank 0.
      PROGRAM FIXED
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, IERR2, RANK, NPROCS, N, ISUM
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      N = 0
      IF (RANK .EQ. 0) N = 42
      CALL MPI_BCAST(N, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, IERR)
      CALL MPI_REDUCE(RANK, ISUM, 1, MPI_INTEGER, MPI_SUM, 0,
     &                MPI_COMM_WORLD, IERR)
      CALL MPI_F_SYNC_REG(N)
      CALL MPI_REGISTER_DATAREP('rmpi_fixed', MPI_CONVERSION_FN_NULL,
     &     MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
     &     0_MPI_ADDRESS_KIND, IERR2)
      IF (RANK .EQ. 0) THEN
         IF (N .EQ. 42 .AND. ISUM .EQ. NPROCS*(NPROCS-1)/2 .AND.
     &       IERR2 .EQ. MPI_SUCCESS) THEN
            PRINT '(A)', 'fortran ok'
         ELSE
            PRINT '(A)', 'fortran FAILED'
         END IF
      END IF
      CALL MPI_FINALIZE(IERR)
      END
