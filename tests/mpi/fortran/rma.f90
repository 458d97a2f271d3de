! One-sided communication from Fortran: MPI_WIN_CREATE over an array, puts and gets checked
! under MPI_WIN_FENCE, a counter on rank 0 incremented by every rank with MPI_ACCUMULATE and
! MPI_FETCH_AND_OP under MPI_WIN_LOCK, MPI_WIN_ALLOCATE (the base address as an
! INTEGER(KIND=MPI_ADDRESS_KIND)), MPI_WIN_GET_GROUP and MPI_WIN_FREE.
! SLUICE_TEST_RANKS: 1 2 4
program rma
  use mpi
  implicit none
  integer, parameter :: n = 16, rounds = 20
  integer :: rank, size, ierr, win, win2, right, left, i, grp, gsize
  integer(kind=8), volatile :: mem(n)
  integer(kind=8) :: src(n), got(n), one, old
  integer(kind=MPI_ADDRESS_KIND) :: wsize, disp, base
  logical :: ok

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  right = mod(rank + 1, size)
  left = mod(rank + size - 1, size)

  mem = 0
  wsize = 8 * n
  call MPI_Win_create(mem, wsize, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call check(ierr == MPI_SUCCESS .and. win /= MPI_WIN_NULL, 'MPI_WIN_CREATE')

  do i = 1, n
    src(i) = rank * 100 + i
  end do
  call MPI_Win_fence(0, win, ierr)
  disp = 0
  call MPI_Put(src, n, MPI_INTEGER8, right, disp, n, MPI_INTEGER8, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  ok = .true.
  do i = 1, n
    if (mem(i) /= left * 100 + i) ok = .false.
  end do
  call check(ok, 'fence put')
  call MPI_Get(got, n, MPI_INTEGER8, left, disp, n, MPI_INTEGER8, win, ierr)
  call MPI_Win_fence(MPI_MODE_NOSUCCEED, win, ierr)
  ok = .true.
  do i = 1, n
    if (got(i) /= mod(left + size - 1, size) * 100 + i) ok = .false.
  end do
  call check(ok, 'fence get')

  ! Counters at rank 0: mem(1) by accumulate, mem(2) by fetch-and-op.
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win, ierr)
    mem(1) = 0
    mem(2) = 0
    call MPI_Win_unlock(0, win, ierr)
  end if
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  one = 1
  do i = 1, rounds
    call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
    disp = 0
    call MPI_Accumulate(one, 1, MPI_INTEGER8, 0, disp, 1, MPI_INTEGER8, MPI_SUM, win, ierr)
    disp = 1
    call MPI_Fetch_and_op(one, old, MPI_INTEGER8, 0, disp, MPI_SUM, win, ierr)
    call MPI_Win_unlock(0, win, ierr)
    call check(old >= 0 .and. old < size * rounds, 'fetch_and_op old value')
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win, ierr)
    call check(mem(1) == size * rounds, 'accumulate counter')
    call check(mem(2) == size * rounds, 'fetch_and_op counter')
    call MPI_Win_unlock(0, win, ierr)
  end if
  call MPI_Win_get_group(win, grp, ierr)
  call MPI_Group_size(grp, gsize, ierr)
  call check(gsize == size, 'MPI_WIN_GET_GROUP')
  call MPI_Group_free(grp, ierr)
  call MPI_Win_free(win, ierr)
  call check(win == MPI_WIN_NULL, 'MPI_WIN_FREE resets the handle')

  ! MPI_WIN_ALLOCATE: the base address comes back as an integer.
  call MPI_Win_allocate(wsize, 8, MPI_INFO_NULL, MPI_COMM_WORLD, base, win2, ierr)
  call check(ierr == MPI_SUCCESS .and. base /= 0, 'MPI_WIN_ALLOCATE')
  call MPI_Win_lock_all(0, win2, ierr)
  disp = 3
  call MPI_Put(src, 1, MPI_INTEGER8, right, disp, 1, MPI_INTEGER8, win2, ierr)
  call MPI_Win_flush(right, win2, ierr)
  call MPI_Get(got, 1, MPI_INTEGER8, right, disp, 1, MPI_INTEGER8, win2, ierr)
  call MPI_Win_unlock_all(win2, ierr)
  call check(got(1) == src(1), 'allocate put/get')
  call MPI_Win_free(win2, ierr)

  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'rma: ok'

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

end program rma
