! Fixed-form Fortran 77 style with include 'mpif.h': init, rank and size, a ring of
! MPI_SEND/MPI_RECV with a status, MPI_BCAST, MPI_REDUCE, MPI_ALLREDUCE, MPI_BARRIER,
! MPI_WTIME, each result checked against the value computed here.
! SLUICE_TEST_RANKS: 1 2 3 4
      PROGRAM MPIFBASIC
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NPROCS, LEFT, RIGHT, I, N
      INTEGER STATUS(MPI_STATUS_SIZE), COUNT
      INTEGER IBUF(10), IOUT(10), ISUM
      DOUBLE PRECISION DBUF(4), DSUM(4), T0, T1
      LOGICAL FLAG
      CALL MPI_INIT(IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS, 'MPI_INIT')
      CALL MPI_INITIALIZED(FLAG, IERR)
      CALL CHECK(FLAG, 'MPI_INITIALIZED')
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROCS, IERR)
      CALL CHECK(RANK .GE. 0 .AND. RANK .LT. NPROCS, 'rank')
      T0 = MPI_WTIME()
!     Ring: each rank sends 10 integers to the right, receives from the left.
      RIGHT = MOD(RANK + 1, NPROCS)
      LEFT = MOD(RANK - 1 + NPROCS, NPROCS)
      DO I = 1, 10
        IBUF(I) = RANK * 100 + I
        IOUT(I) = -1
      END DO
      IF (NPROCS .GT. 1) THEN
        IF (MOD(RANK, 2) .EQ. 0) THEN
          CALL MPI_SEND(IBUF, 10, MPI_INTEGER, RIGHT, 7, MPI_COMM_WORLD,
     &                  IERR)
          CALL MPI_RECV(IOUT, 10, MPI_INTEGER, LEFT, 7, MPI_COMM_WORLD,
     &                  STATUS, IERR)
        ELSE
          CALL MPI_RECV(IOUT, 10, MPI_INTEGER, LEFT, 7, MPI_COMM_WORLD,
     &                  STATUS, IERR)
          CALL MPI_SEND(IBUF, 10, MPI_INTEGER, RIGHT, 7, MPI_COMM_WORLD,
     &                  IERR)
        END IF
        CALL CHECK(IERR .EQ. MPI_SUCCESS, 'MPI_RECV ierror')
        CALL CHECK(STATUS(MPI_SOURCE) .EQ. LEFT, 'status MPI_SOURCE')
        CALL CHECK(STATUS(MPI_TAG) .EQ. 7, 'status MPI_TAG')
        CALL MPI_GET_COUNT(STATUS, MPI_INTEGER, COUNT, IERR)
        CALL CHECK(COUNT .EQ. 10, 'MPI_GET_COUNT')
        DO I = 1, 10
          CALL CHECK(IOUT(I) .EQ. LEFT * 100 + I, 'ring data')
        END DO
      END IF
!     Broadcast from the last rank.
      DO I = 1, 4
        DBUF(I) = 0.0D0
        IF (RANK .EQ. NPROCS - 1) DBUF(I) = 1.5D0 * I
      END DO
      CALL MPI_BCAST(DBUF, 4, MPI_DOUBLE_PRECISION, NPROCS - 1,
     &               MPI_COMM_WORLD, IERR)
      DO I = 1, 4
        CALL CHECK(DBUF(I) .EQ. 1.5D0 * I, 'MPI_BCAST')
      END DO
!     Reduce to rank 0, allreduce everywhere.
      N = RANK + 1
      ISUM = -1
      CALL MPI_REDUCE(N, ISUM, 1, MPI_INTEGER, MPI_SUM, 0,
     &                MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) THEN
        CALL CHECK(ISUM .EQ. NPROCS * (NPROCS + 1) / 2, 'MPI_REDUCE')
      END IF
      DO I = 1, 4
        DBUF(I) = RANK + I
      END DO
      CALL MPI_ALLREDUCE(DBUF, DSUM, 4, MPI_DOUBLE_PRECISION, MPI_MAX,
     &                   MPI_COMM_WORLD, IERR)
      DO I = 1, 4
        CALL CHECK(DSUM(I) .EQ. DBLE(NPROCS - 1 + I), 'MPI_ALLREDUCE')
      END DO
      CALL MPI_BARRIER(MPI_COMM_WORLD, IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS, 'MPI_BARRIER')
      T1 = MPI_WTIME()
      CALL CHECK(T1 .GE. T0, 'MPI_WTIME')
      CALL CHECK(MPI_WTICK() .GT. 0.0D0, 'MPI_WTICK')
      CALL MPI_FINALIZE(IERR)
      CALL CHECK(IERR .EQ. MPI_SUCCESS, 'MPI_FINALIZE')
      IF (RANK .EQ. 0) PRINT '(A)', 'mpif_basic: ok'
      END

      SUBROUTINE CHECK(COND, WHAT)
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      LOGICAL COND
      CHARACTER*(*) WHAT
      INTEGER IERR
      IF (.NOT. COND) THEN
        PRINT '(A,A)', 'FAILED: ', WHAT
        CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      END IF
      END
