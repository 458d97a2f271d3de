! Built by tests/install with the installed mpif77 (include 'mpif.h').
      PROGRAM HELLOF
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NPROCS, TOTAL
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      CALL MPI_ALLREDUCE(RANK, TOTAL, 1, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) PRINT '(A,I0,A,I0)', 'mpif ok: size ', NPROCS,
     &                                       ' sum ', TOTAL
      CALL MPI_FINALIZE(IERR)
      END
