! Collectives through `use mpi`: MPI_BCAST, MPI_REDUCE and MPI_ALLREDUCE (also with
! MPI_IN_PLACE), MPI_GATHER(V), MPI_SCATTER(V), MPI_ALLGATHER(V), MPI_ALLTOALL(V),
! MPI_SCAN, MPI_REDUCE_SCATTER_BLOCK, MPI_IALLREDUCE + MPI_WAIT, MPI_MAXLOC on
! MPI_2INTEGER, and a user operation (MPI_OP_CREATE with a Fortran procedure); every
! result checked against the value computed here.
! SLUICE_TEST_RANKS: 1 2 3 4
module coll_user_op
  implicit none
contains
  ! Concatenation of decimal digit strings held as (value, 10**length) pairs (MPI_2INTEGER):
  ! associative but not commutative, so the rank order of the reduction is checked too.
  subroutine concat(invec, inoutvec, len, datatype)
    integer :: len, datatype
    integer :: invec(2, len), inoutvec(2, len)
    integer :: i
    do i = 1, len
      inoutvec(1, i) = invec(1, i) * inoutvec(2, i) + inoutvec(1, i)
      inoutvec(2, i) = invec(2, i) * inoutvec(2, i)
    end do
  end subroutine concat
end module coll_user_op

program coll
  use mpi
  use coll_user_op
  implicit none
  integer :: ierr, rank, nprocs, i, j, root, req, op, expect
  integer, allocatable :: a(:), b(:), counts(:), displs(:), rcounts(:), rdispls(:)
  real :: r(3), rsum(3)
  double precision :: d(5)
  integer :: pair(2), best(2)
  logical :: l, lall

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  allocate(a(4 * nprocs * nprocs), b(4 * nprocs * nprocs), counts(nprocs), displs(nprocs), &
           rcounts(nprocs), rdispls(nprocs))

  do root = 0, nprocs - 1
    ! Bcast
    d = -1
    if (rank == root) d = [(root * 10.0d0 + i, i = 1, 5)]
    call MPI_Bcast(d, 5, MPI_DOUBLE_PRECISION, root, MPI_COMM_WORLD, ierr)
    do i = 1, 5
      call check(d(i) == root * 10.0d0 + i, 'MPI_Bcast')
    end do
    ! Reduce (MPI_REAL, MPI_SUM), then in place at the root
    r = [real(rank), 1.0, -real(rank)]
    rsum = 0
    call MPI_Reduce(r, rsum, 3, MPI_REAL, MPI_SUM, root, MPI_COMM_WORLD, ierr)
    if (rank == root) then
      call check(rsum(1) == real(nprocs * (nprocs - 1) / 2) .and. rsum(2) == real(nprocs) &
                 .and. rsum(3) == -real(nprocs * (nprocs - 1) / 2), 'MPI_Reduce')
      call MPI_Reduce(MPI_IN_PLACE, r, 3, MPI_REAL, MPI_MAX, root, MPI_COMM_WORLD, ierr)
      call check(r(1) == real(nprocs - 1) .and. r(2) == 1.0 .and. r(3) == 0.0, &
                 'MPI_Reduce MPI_IN_PLACE')
    else
      call MPI_Reduce(r, rsum, 3, MPI_REAL, MPI_MAX, root, MPI_COMM_WORLD, ierr)
    end if
    ! Gather: rank k contributes [k, k+root]
    a(1:2) = [rank, rank + root]
    b = -1
    call MPI_Gather(a, 2, MPI_INTEGER, b, 2, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    if (rank == root) then
      do i = 0, nprocs - 1
        call check(b(2 * i + 1) == i .and. b(2 * i + 2) == i + root, 'MPI_Gather')
      end do
    end if
    ! Gatherv: rank k contributes k+1 copies of k, at displacement k*(k+1)/2 + k (a gap)
    a(1:rank + 1) = rank
    do i = 1, nprocs
      counts(i) = i
      displs(i) = (i - 1) * i / 2 + (i - 1)
    end do
    b = -1
    call MPI_Gatherv(a, rank + 1, MPI_INTEGER, b, counts, displs, MPI_INTEGER, root, &
                     MPI_COMM_WORLD, ierr)
    if (rank == root) then
      do i = 1, nprocs
        do j = 1, i
          call check(b(displs(i) + j) == i - 1, 'MPI_Gatherv data')
        end do
        if (i > 1) call check(b(displs(i)) == -1, 'MPI_Gatherv leaves the gaps')
      end do
    end if
    ! Scatter: the root's [100*k+1, 100*k+2] goes to rank k
    if (rank == root) b(1:2 * nprocs) = [((100 * i + j, j = 1, 2), i = 0, nprocs - 1)]
    a(1:2) = -1
    call MPI_Scatter(b, 2, MPI_INTEGER, a, 2, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
    call check(a(1) == 100 * rank + 1 .and. a(2) == 100 * rank + 2, 'MPI_Scatter')
    ! Scatterv with the Gatherv layout
    if (rank == root) then
      do i = 1, nprocs
        b(displs(i) + 1:displs(i) + i) = 7 * i
      end do
    end if
    a = -1
    call MPI_Scatterv(b, counts, displs, MPI_INTEGER, a, rank + 1, MPI_INTEGER, root, &
                      MPI_COMM_WORLD, ierr)
    call check(all(a(1:rank + 1) == 7 * (rank + 1)) .and. a(rank + 2) == -1, 'MPI_Scatterv')
  end do

  ! Allreduce: MPI_LOGICAL with MPI_LAND / MPI_LOR, MPI_INTEGER in place with MPI_PROD
  l = rank == 0
  call MPI_Allreduce(l, lall, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD, ierr)
  call check(lall, 'MPI_Allreduce MPI_LOR')
  call MPI_Allreduce(l, lall, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  call check(lall .eqv. (nprocs == 1), 'MPI_Allreduce MPI_LAND')
  a(1) = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, a, 1, MPI_INTEGER, MPI_PROD, MPI_COMM_WORLD, ierr)
  expect = product([(i, i = 1, nprocs)])
  call check(a(1) == expect, 'MPI_Allreduce MPI_IN_PLACE MPI_PROD')

  ! Allgather, Allgatherv
  a(1) = rank * 3
  call MPI_Allgather(a, 1, MPI_INTEGER, b, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(b(1:nprocs) == [(3 * i, i = 0, nprocs - 1)]), 'MPI_Allgather')
  a(1:rank + 1) = rank
  b = -1
  call MPI_Allgatherv(a, rank + 1, MPI_INTEGER, b, counts, displs, MPI_INTEGER, &
                      MPI_COMM_WORLD, ierr)
  do i = 1, nprocs
    call check(all(b(displs(i) + 1:displs(i) + i) == i - 1), 'MPI_Allgatherv')
  end do

  ! Alltoall: element for rank j is 1000*rank + j
  a(1:nprocs) = [(1000 * rank + j, j = 0, nprocs - 1)]
  call MPI_Alltoall(a, 1, MPI_INTEGER, b, 1, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call check(all(b(1:nprocs) == [(1000 * j + rank, j = 0, nprocs - 1)]), 'MPI_Alltoall')
  ! Alltoallv: rank r sends j+1 copies of 10*r+j to rank j; receives r+1 from each
  do j = 1, nprocs
    counts(j) = j
    displs(j) = (j - 1) * j / 2
    rcounts(j) = rank + 1
    rdispls(j) = (j - 1) * (rank + 1)
    a(displs(j) + 1:displs(j) + j) = 10 * rank + (j - 1)
  end do
  b = -1
  call MPI_Alltoallv(a, counts, displs, MPI_INTEGER, b, rcounts, rdispls, MPI_INTEGER, &
                     MPI_COMM_WORLD, ierr)
  do j = 1, nprocs
    call check(all(b(rdispls(j) + 1:rdispls(j) + rank + 1) == 10 * (j - 1) + rank), &
               'MPI_Alltoallv')
  end do

  ! Scan and reduce_scatter_block
  a(1) = rank + 1
  call MPI_Scan(a, b, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(b(1) == (rank + 1) * (rank + 2) / 2, 'MPI_Scan')
  a(1:2 * nprocs) = [(i, i = 1, 2 * nprocs)]
  call MPI_Reduce_scatter_block(a, b, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(b(1) == nprocs * (2 * rank + 1) .and. b(2) == nprocs * (2 * rank + 2), &
             'MPI_Reduce_scatter_block')

  ! Nonblocking allreduce
  a(1) = rank
  call MPI_Iallreduce(a, b, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call check(b(1) == nprocs - 1 .and. req == MPI_REQUEST_NULL, 'MPI_Iallreduce')

  ! MAXLOC on pairs: value (rank*7) mod nprocs, location rank
  pair = [mod(rank * 7, nprocs), rank]
  call MPI_Allreduce(pair, best, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  expect = maxval([(mod(i * 7, nprocs), i = 0, nprocs - 1)])
  call check(best(1) == expect, 'MPI_MAXLOC value')
  call check(mod(best(2) * 7, nprocs) == expect, 'MPI_MAXLOC location')
  do i = 0, nprocs - 1
    if (mod(i * 7, nprocs) == expect) exit
  end do
  call check(best(2) == i, 'MPI_MAXLOC lowest location')

  ! User operation, not commutative: rank k contributes the digit k+1, so the result is
  ! 1, 12, 123, 1234 ... (rank order), twice (two pairs).
  call MPI_Op_create(concat, .false., op, ierr)
  call check(ierr == MPI_SUCCESS .and. op /= MPI_OP_NULL, 'MPI_Op_create')
  a(1:4) = [rank + 1, 10, rank + 1, 10]
  b(1:4) = -1
  call MPI_Allreduce(a, b, 2, MPI_2INTEGER, op, MPI_COMM_WORLD, ierr)
  expect = 0
  do i = 1, nprocs
    expect = 10 * expect + i
  end do
  call check(b(1) == expect .and. b(2) == 10**nprocs .and. b(3) == expect, &
             'user operation (MPI_Op_create)')
  call MPI_Op_free(op, ierr)
  call check(op == MPI_OP_NULL, 'MPI_Op_free')

  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'coll: ok'

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

end program coll
