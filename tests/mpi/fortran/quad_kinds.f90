! gfortran's 16-byte kinds through `use mpi`: REAL(16) as MPI_REAL16, COMPLEX(16) as
! MPI_COMPLEX32, INTEGER(16) as MPI_INTEGER16, moved and reduced with values that need
! them (1 + 2**-100 is 1 in double precision; 2**100 is beyond 64 bits), and the kinds
! MPI_TYPE_CREATE_F90_REAL/INTEGER choose for SELECTED_REAL_KIND(30)/SELECTED_INT_KIND(30).
! SLUICE_TEST_RANKS: 1 2 3 4
! SLUICE_TEST_NO_PEER: MPICH 4.0.2 has MPI_INTEGER16 = MPI_DATATYPE_NULL, and its MPI_SUM on
! MPI_REAL16 gives wrong values here (1.5 + 1.5 is inf).
program quad_kinds
  use mpi
  implicit none
  integer, parameter :: qp = 16, qi = 16
  integer :: ierr, rank, nprocs, right, left, t, tsize, k
  real(kind=qp) :: tiny, r(2), rin(2), rsum, rmax
  complex(kind=qp) :: z, zin, zprod, expected
  integer(kind=qi) :: big, iv, isum, imax
  integer :: status(MPI_STATUS_SIZE)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  tiny = 2.0_qp**(-100)
  big = 2_qi**100

  call MPI_Type_size(MPI_REAL16, tsize, ierr)
  call check(tsize == 16, 'MPI_REAL16 size')
  call MPI_Type_size(MPI_COMPLEX32, tsize, ierr)
  call check(tsize == 32, 'MPI_COMPLEX32 size')
  call MPI_Type_size(MPI_INTEGER16, tsize, ierr)
  call check(tsize == 16, 'MPI_INTEGER16 size')

  r = [1.0_qp + tiny * (rank + 1), -real(rank, qp)]
  call MPI_Sendrecv(r, 2, MPI_REAL16, right, 1, rin, 2, MPI_REAL16, left, 1, MPI_COMM_WORLD, &
                    status, ierr)
  call check(rin(1) == 1.0_qp + tiny * (left + 1) .and. rin(2) == -real(left, qp), &
             'REAL(16) sendrecv')
  call MPI_Allreduce(r(1), rsum, 1, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(rsum == nprocs + tiny * (nprocs * (nprocs + 1) / 2), 'REAL(16) sum')
  call MPI_Allreduce(r(1), rmax, 1, MPI_REAL16, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(rmax == 1.0_qp + tiny * nprocs, 'REAL(16) max')

  z = cmplx(tiny * rank, 2.0_qp, kind=qp)
  call MPI_Sendrecv(z, 1, MPI_COMPLEX32, right, 2, zin, 1, MPI_COMPLEX32, left, 2, &
                    MPI_COMM_WORLD, status, ierr)
  call check(zin == cmplx(tiny * left, 2.0_qp, kind=qp), 'COMPLEX(16) sendrecv')
  ! 1 on even ranks, i on odd ones: the product is i**(number of odd ranks).
  if (mod(rank, 2) == 0) then
    z = (1.0_qp, 0.0_qp)
  else
    z = (0.0_qp, 1.0_qp)
  end if
  call MPI_Allreduce(z, zprod, 1, MPI_COMPLEX32, MPI_PROD, MPI_COMM_WORLD, ierr)
  expected = (0.0_qp, 1.0_qp)**(nprocs / 2)
  call check(zprod == expected, 'COMPLEX(16) product')

  iv = big + rank
  call MPI_Allreduce(iv, isum, 1, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(isum == big * nprocs + nprocs * (nprocs - 1) / 2, 'INTEGER(16) sum')
  call MPI_Allreduce(iv, imax, 1, MPI_INTEGER16, MPI_MAX, MPI_COMM_WORLD, ierr)
  call check(imax == big + nprocs - 1, 'INTEGER(16) max')

  ! The kinds SELECTED_REAL_KIND / SELECTED_INT_KIND choose, and their types' sizes.
  k = selected_real_kind(30)
  call check(k == qp, 'SELECTED_REAL_KIND(30) is 16')
  call MPI_Type_create_f90_real(30, MPI_UNDEFINED, t, ierr)
  call MPI_Type_size(t, tsize, ierr)
  call check(tsize == 16, 'MPI_Type_create_f90_real(30) size')
  call MPI_Allreduce(r(1), rsum, 1, t, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(rsum == nprocs + tiny * (nprocs * (nprocs + 1) / 2), 'f90 real(30) sum')
  call MPI_Type_create_f90_integer(30, t, ierr)
  call MPI_Type_size(t, tsize, ierr)
  call check(tsize == 16, 'MPI_Type_create_f90_integer(30) size')

  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'quad_kinds: ok'

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

end program quad_kinds
