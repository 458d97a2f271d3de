! Built by tests/install with the installed mpifort (`use mpi`), run with the installed
! mpirun: the same checks as hello_mpi.c.
program hello_mpi
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, one, total, token
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  one = 1
  call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  token = rank
  if (nprocs > 1) then
    if (rank == 0) then
      call MPI_Send(token, 1, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, ierr)
      call MPI_Recv(token, 1, MPI_INTEGER, nprocs - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    else
      call MPI_Recv(token, 1, MPI_INTEGER, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
      token = token + rank
      call MPI_Send(token, 1, MPI_INTEGER, mod(rank + 1, nprocs), 7, MPI_COMM_WORLD, ierr)
    end if
  end if
  if (rank == 0) print '(a,i0,a,i0,a,i0)', 'fortran ok: size ', nprocs, ' sum ', total, &
                                           ' ring ', token
  call MPI_Finalize(ierr)
  if (total /= nprocs) error stop 1
end program hello_mpi
