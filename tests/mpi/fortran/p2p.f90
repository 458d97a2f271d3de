! Point-to-point through `use mpi`: MPI_ISEND/IRECV with MPI_WAITALL, MPI_WAITANY (1-based
! index), MPI_TEST, MPI_SENDRECV, MPI_PROBE/IPROBE with MPI_ANY_SOURCE, MPI_GET_COUNT, the
! status array and MPI_STATUS(ES)_IGNORE, MPI_PROC_NULL, persistent requests, and the
! request handles going back to MPI_REQUEST_NULL; every value checked.
! SLUICE_TEST_RANKS: 1 2 3 4
program p2p
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, left, right, i, idx, count, k
  integer :: st(MPI_STATUS_SIZE), sts(MPI_STATUS_SIZE, 4), reqs(4)
  ! Buffers of nonblocking calls are VOLATILE: otherwise an optimizing compiler may move
  ! their stores and loads across MPI_Wait (MPI-3.1 17.1.17; the peers' wrappers use -O2).
  integer, volatile :: sbuf(100), rbuf(100), r2(100)
  double precision :: dsend(8), drecv(8)
  logical :: flag
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)

  ! Nonblocking ring in both directions, two messages each way.
  do i = 1, 100
    sbuf(i) = rank * 1000 + i
  end do
  rbuf = -1
  r2 = -1
  call MPI_Irecv(rbuf, 100, MPI_INTEGER, left, 1, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Irecv(r2, 50, MPI_INTEGER, right, 2, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Isend(sbuf, 100, MPI_INTEGER, right, 1, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Isend(sbuf(51), 50, MPI_INTEGER, left, 2, MPI_COMM_WORLD, reqs(4), ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Isend ierror')
  call check(all(reqs /= MPI_REQUEST_NULL), 'requests are not null')
  call MPI_Waitall(4, reqs, sts, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Waitall ierror')
  call check(all(reqs == MPI_REQUEST_NULL), 'MPI_Waitall nulls the requests')
  call check(sts(MPI_SOURCE, 1) == left .and. sts(MPI_TAG, 1) == 1, 'status 1')
  call check(sts(MPI_SOURCE, 2) == right .and. sts(MPI_TAG, 2) == 2, 'status 2')
  call MPI_Get_count(sts(:, 2), MPI_INTEGER, count, ierr)
  call check(count == 50, 'MPI_Get_count of the second receive')
  do i = 1, 100
    call check(rbuf(i) == left * 1000 + i, 'Irecv data from the left')
  end do
  do i = 1, 50
    call check(r2(i) == right * 1000 + 50 + i, 'Irecv data from the right')
  end do

  ! Waitany: only the second request can complete first (the first is from MPI_PROC_NULL,
  ! which completes at once too): both indices must come back 1-based, then MPI_UNDEFINED.
  call MPI_Irecv(rbuf, 1, MPI_INTEGER, MPI_PROC_NULL, 3, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(sbuf, 1, MPI_INTEGER, MPI_PROC_NULL, 3, MPI_COMM_WORLD, reqs(2), ierr)
  k = 0
  do i = 1, 2
    call MPI_Waitany(2, reqs, idx, st, ierr)
    call check(idx == 1 .or. idx == 2, 'MPI_Waitany index is 1-based')
    k = k + idx
  end do
  call check(k == 3, 'MPI_Waitany gave each index once')
  call MPI_Waitany(2, reqs, idx, st, ierr)
  ! MPICH 4.0's Fortran binding adds 1 to MPI_UNDEFINED as well (its bug; the standard, and
  ! Sluice, return MPI_UNDEFINED): tolerated only when the library says it is MPICH.
  call MPI_Get_library_version(version, count, ierr)
  call check(count > 0 .and. count <= MPI_MAX_LIBRARY_VERSION_STRING, 'library version length')
  if (index(version, 'MPICH') > 0 .and. idx == MPI_UNDEFINED + 1) idx = MPI_UNDEFINED
  call check(idx == MPI_UNDEFINED, 'MPI_Waitany on null requests: MPI_UNDEFINED')

  ! Sendrecv of doubles around the ring, status ignored.
  do i = 1, 8
    dsend(i) = rank + 0.25d0 * i
  end do
  call MPI_Sendrecv(dsend, 8, MPI_DOUBLE_PRECISION, right, 4, drecv, 8, &
                    MPI_DOUBLE_PRECISION, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  do i = 1, 8
    call check(drecv(i) == left + 0.25d0 * i, 'MPI_Sendrecv data')
  end do

  ! Probe: rank 0 receives one message from every other rank, in arrival order.
  if (rank /= 0) then
    sbuf(1:rank) = rank
    call MPI_Send(sbuf, rank, MPI_INTEGER, 0, 5, MPI_COMM_WORLD, ierr)
  else
    k = 0
    do i = 1, nprocs - 1
      call MPI_Probe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, st, ierr)
      call MPI_Get_count(st, MPI_INTEGER, count, ierr)
      call check(count == st(MPI_SOURCE), 'MPI_Probe count is the sender')
      call MPI_Recv(rbuf, count, MPI_INTEGER, st(MPI_SOURCE), 5, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
      call check(all(rbuf(1:count) == st(MPI_SOURCE)), 'probed message data')
      k = k + st(MPI_SOURCE)
    end do
    call check(k == nprocs * (nprocs - 1) / 2, 'every sender probed once')
    call MPI_Iprobe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, flag, st, ierr)
    call check(.not. flag, 'MPI_Iprobe finds nothing left')
  end if

  ! Test polling and a self message found by Iprobe.
  call MPI_Isend(sbuf, 3, MPI_INTEGER, rank, 6, MPI_COMM_WORLD, reqs(1), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Iprobe(rank, 6, MPI_COMM_WORLD, flag, st, ierr)
  end do
  call check(st(MPI_SOURCE) == rank .and. st(MPI_TAG) == 6, 'MPI_Iprobe status')
  call MPI_Irecv(rbuf, 3, MPI_INTEGER, rank, 6, MPI_COMM_WORLD, reqs(2), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(reqs(2), flag, st, ierr)
  end do
  call check(reqs(2) == MPI_REQUEST_NULL, 'MPI_Test nulls the request')
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
  call check(reqs(1) == MPI_REQUEST_NULL, 'MPI_Wait nulls the request')

  ! Persistent requests: the handle survives MPI_Wait and is freed by MPI_Request_free.
  call MPI_Send_init(sbuf, 2, MPI_INTEGER, right, 8, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Recv_init(rbuf, 2, MPI_INTEGER, left, 8, MPI_COMM_WORLD, reqs(2), ierr)
  do k = 1, 3
    sbuf(1) = rank + k
    sbuf(2) = -k
    call MPI_Startall(2, reqs, ierr)
    call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
    call check(reqs(1) /= MPI_REQUEST_NULL .and. reqs(2) /= MPI_REQUEST_NULL, &
               'persistent requests stay')
    call check(rbuf(1) == left + k .and. rbuf(2) == -k, 'persistent transfer data')
  end do
  call MPI_Request_free(reqs(1), ierr)
  call MPI_Request_free(reqs(2), ierr)
  call check(reqs(1) == MPI_REQUEST_NULL .and. reqs(2) == MPI_REQUEST_NULL, 'MPI_Request_free')

  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'p2p: ok'

contains

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. cond) then
      print '(a,i0,a,a)', 'FAILED on rank ', rank, ': ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check

end program p2p
