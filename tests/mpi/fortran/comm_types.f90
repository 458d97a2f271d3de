! Communicators, groups, datatypes, error handling and topologies through `use mpi`:
! MPI_COMM_DUP/SPLIT/COMPARE/FREE (handles back to MPI_COMM_NULL, many created and freed),
! MPI_COMM_SET_NAME/GET_NAME (blank-padded strings), groups, MPI_TYPE_CONTIGUOUS/VECTOR/
! CREATE_STRUCT with MPI_GET_ADDRESS and MPI_BOTTOM, the Fortran datatypes (sizes and
! transfers of CHARACTER, LOGICAL, COMPLEX, DOUBLE COMPLEX, INTEGER8, REAL8),
! MPI_ERRORS_RETURN with MPI_ERROR_CLASS/STRING, an error handler written in Fortran,
! MPI_COMM_GET_ATTR(MPI_TAG_UB), MPI_GET_PROCESSOR_NAME and a Cartesian topology.
! SLUICE_TEST_RANKS: 1 2 3 4
module comm_types_handler
  implicit none
  integer :: calls = 0, last_code = 0, last_comm = -12345
contains
  subroutine on_error(comm, code)
    integer :: comm, code
    calls = calls + 1
    last_comm = comm
    last_code = code
  end subroutine on_error
end module comm_types_handler

program comm_types
  use mpi
  use comm_types_handler
  implicit none
  integer :: ierr, rank, nprocs, i, k, res, dup, half, hrank, hsize, len, cls
  integer :: wgroup, g, ranks(1), out(1), vec, contig, st, rst, errh, cart
  integer :: sizes(9), dims(2), coords(2), src, dst, blocklens(2), types(2)
  integer(kind=MPI_ADDRESS_KIND) :: lb, extent, disps(2), tag_ub
  logical :: flag, periods(2)
  character(len=MPI_MAX_OBJECT_NAME) :: name
  character(len=MPI_MAX_ERROR_STRING) :: errstr
  character(len=MPI_MAX_PROCESSOR_NAME) :: host
  integer :: m(4, 5), col(4), row(5)
  ! Reached through MPI_BOTTOM only: VOLATILE, or an optimizing compiler keeps them in
  ! registers across the transfer (MPI-3.1 17.1.17).
  integer, volatile :: sk, rk
  double precision, volatile :: sdv(2), rdv(2)
  character(len=5) :: word
  complex :: c(2)
  double complex :: z
  integer(kind=8) :: i8
  real(kind=8) :: r8
  logical :: lv(3)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  ! ---- communicators ----
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call check(dup /= MPI_COMM_NULL .and. dup /= MPI_COMM_WORLD, 'MPI_Comm_dup handle')
  call MPI_Comm_compare(MPI_COMM_WORLD, dup, res, ierr)
  call check(res == MPI_CONGRUENT, 'MPI_Comm_compare congruent')
  call MPI_Comm_compare(dup, dup, res, ierr)
  call check(res == MPI_IDENT, 'MPI_Comm_compare ident')
  call MPI_Comm_set_name(dup, 'my dup  ', ierr)
  name = 'garbage'
  call MPI_Comm_get_name(dup, name, len, ierr)
  call check(name == 'my dup' .and. len == 6, 'MPI_Comm_get_name (trailing blanks dropped)')
  call MPI_Comm_get_name(MPI_COMM_WORLD, name, len, ierr)
  call check(name == 'MPI_COMM_WORLD', 'name of MPI_COMM_WORLD')
  ! split into even and odd ranks, key reverses the order
  call MPI_Comm_split(dup, mod(rank, 2), -rank, half, ierr)
  call MPI_Comm_rank(half, hrank, ierr)
  call MPI_Comm_size(half, hsize, ierr)
  call check(hsize == (nprocs + 1 - mod(rank, 2)) / 2, 'MPI_Comm_split size')
  call check(hrank == hsize - 1 - rank / 2, 'MPI_Comm_split rank order by key')
  k = rank
  call MPI_Allreduce(MPI_IN_PLACE, k, 1, MPI_INTEGER, MPI_MIN, half, ierr)
  call check(k == mod(rank, 2), 'Allreduce on the split communicator')
  call MPI_Comm_split(dup, MPI_UNDEFINED, 0, k, ierr)
  call check(k == MPI_COMM_NULL, 'MPI_Comm_split MPI_UNDEFINED gives MPI_COMM_NULL')
  call MPI_Comm_free(half, ierr)
  call check(half == MPI_COMM_NULL, 'MPI_Comm_free nulls the handle')
  ! Many communicators created and freed: the handles stay distinct and usable
  do i = 1, 50
    call MPI_Comm_dup(dup, half, ierr)
    call check(half /= dup .and. half /= MPI_COMM_WORLD, 'repeated dup')
    call MPI_Barrier(half, ierr)
    call MPI_Comm_free(half, ierr)
  end do
  call MPI_Comm_free(dup, ierr)

  ! ---- groups ----
  call MPI_Comm_group(MPI_COMM_WORLD, wgroup, ierr)
  ranks(1) = nprocs - 1
  call MPI_Group_incl(wgroup, 1, ranks, g, ierr)
  call MPI_Group_size(g, k, ierr)
  call check(k == 1, 'MPI_Group_incl size')
  ranks(1) = 0
  call MPI_Group_translate_ranks(g, 1, ranks, wgroup, out, ierr)
  call check(out(1) == nprocs - 1, 'MPI_Group_translate_ranks')
  call MPI_Group_free(g, ierr)
  call MPI_Group_free(wgroup, ierr)
  call check(g == MPI_GROUP_NULL .and. wgroup == MPI_GROUP_NULL, 'MPI_Group_free')

  ! ---- derived datatypes ----
  ! A column of a 4x5 matrix is contiguous, a row is a vector of stride 4.
  m = reshape([(i, i = 1, 20)], [4, 5])
  call MPI_Type_vector(5, 1, 4, MPI_INTEGER, vec, ierr)
  call MPI_Type_commit(vec, ierr)
  call MPI_Type_size(vec, k, ierr)
  call check(k == 20, 'MPI_Type_size of the vector')
  call MPI_Type_get_extent(vec, lb, extent, ierr)
  call check(lb == 0 .and. extent == 4 * (4 * 4 + 1), 'MPI_Type_get_extent of the vector')
  call MPI_Type_contiguous(4, MPI_INTEGER, contig, ierr)
  call MPI_Type_commit(contig, ierr)
  ! row 2 of the left neighbour's matrix arrives as 5 contiguous integers
  m(2, :) = m(2, :) + 100 * rank
  row = -1
  call MPI_Sendrecv(m(2, 1), 1, vec, mod(rank + 1, nprocs), 1, row, 5, MPI_INTEGER, &
                    mod(rank - 1 + nprocs, nprocs), 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(all(row == [2, 6, 10, 14, 18] + 100 * mod(rank - 1 + nprocs, nprocs)), &
             'MPI_Type_vector transfer')
  m = reshape([(i, i = 1, 20)], [4, 5])
  call MPI_Type_free(vec, ierr)
  call check(vec == MPI_DATATYPE_NULL, 'MPI_Type_free nulls the handle')
  ! column 3 sent as one contiguous type, received as 4 integers
  call MPI_Sendrecv(m(1, 3), 1, contig, rank, 2, col, 4, MPI_INTEGER, rank, 2, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(all(col == [9, 10, 11, 12]), 'MPI_Type_contiguous transfer')
  call MPI_Type_free(contig, ierr)
  ! Structs of absolute addresses (an INTEGER and two DOUBLE PRECISION), sent from and
  ! received into MPI_BOTTOM around the ring.
  call MPI_Get_address(sk, disps(1), ierr)
  call MPI_Get_address(sdv, disps(2), ierr)
  blocklens = [1, 2]
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  call MPI_Type_create_struct(2, blocklens, disps, types, st, ierr)
  call MPI_Type_commit(st, ierr)
  call MPI_Type_size(st, k, ierr)
  call check(k == 4 + 16, 'MPI_Type_create_struct size')
  call MPI_Get_address(rk, disps(1), ierr)
  call MPI_Get_address(rdv, disps(2), ierr)
  call MPI_Type_create_struct(2, blocklens, disps, types, rst, ierr)
  call MPI_Type_commit(rst, ierr)
  sk = 42 + rank
  sdv = [1.5d0 * rank, -2.0d0]
  rk = 0
  rdv = 0
  call MPI_Sendrecv(MPI_BOTTOM, 1, st, mod(rank + 1, nprocs), 3, MPI_BOTTOM, 1, rst, &
                    mod(rank - 1 + nprocs, nprocs), 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  k = mod(rank - 1 + nprocs, nprocs)
  call check(rk == 42 + k .and. rdv(1) == 1.5d0 * k .and. rdv(2) == -2.0d0, &
             'structs from and into MPI_BOTTOM')
  call MPI_Type_free(st, ierr)
  call MPI_Type_free(rst, ierr)

  ! ---- Fortran datatypes ----
  call MPI_Type_size(MPI_INTEGER, sizes(1), ierr)
  call MPI_Type_size(MPI_REAL, sizes(2), ierr)
  call MPI_Type_size(MPI_DOUBLE_PRECISION, sizes(3), ierr)
  call MPI_Type_size(MPI_LOGICAL, sizes(4), ierr)
  call MPI_Type_size(MPI_CHARACTER, sizes(5), ierr)
  call MPI_Type_size(MPI_COMPLEX, sizes(6), ierr)
  call MPI_Type_size(MPI_DOUBLE_COMPLEX, sizes(7), ierr)
  call MPI_Type_size(MPI_INTEGER8, sizes(8), ierr)
  call MPI_Type_size(MPI_REAL8, sizes(9), ierr)
  call check(all(sizes == [4, 4, 8, 4, 1, 8, 16, 8, 8]), 'sizes of the Fortran datatypes')
  call MPI_Type_size(MPI_INTEGER4, k, ierr)
  call check(k == 4, 'MPI_INTEGER4')
  call MPI_Type_size(MPI_REAL4, k, ierr)
  call check(k == 4, 'MPI_REAL4')
  word = 'xxxxx'
  c = (0.0, 0.0)
  z = (0.0d0, 0.0d0)
  i8 = 0
  r8 = 0
  lv = .false.
  if (rank == 0) then
    word = 'hello'
    c = [(1.0, -1.0), (2.5, 3.0)]
    z = (1.0d100, -3.0d-5)
    i8 = 2_8**40 + 7
    r8 = 0.1d0
    lv = [.true., .false., .true.]
  end if
  call MPI_Bcast(word, 5, MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(c, 2, MPI_COMPLEX, 0, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(z, 1, MPI_DOUBLE_COMPLEX, 0, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(i8, 1, MPI_INTEGER8, 0, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(r8, 1, MPI_REAL8, 0, MPI_COMM_WORLD, ierr)
  call MPI_Bcast(lv, 3, MPI_LOGICAL, 0, MPI_COMM_WORLD, ierr)
  call check(word == 'hello', 'MPI_CHARACTER')
  call check(c(1) == (1.0, -1.0) .and. c(2) == (2.5, 3.0), 'MPI_COMPLEX')
  call check(z == (1.0d100, -3.0d-5), 'MPI_DOUBLE_COMPLEX')
  call check(i8 == 2_8**40 + 7, 'MPI_INTEGER8')
  call check(r8 == 0.1d0, 'MPI_REAL8')
  call check(lv(1) .and. .not. lv(2) .and. lv(3), 'MPI_LOGICAL')
  z = dcmplx(rank, 1)
  call MPI_Allreduce(MPI_IN_PLACE, z, 1, MPI_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(z == dcmplx(nprocs * (nprocs - 1) / 2, nprocs), 'MPI_SUM on MPI_DOUBLE_COMPLEX')

  ! ---- errors ----
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_Send(k, 1, MPI_INTEGER, nprocs + 5, 0, MPI_COMM_WORLD, ierr)
  call check(ierr /= MPI_SUCCESS, 'send to a bad rank fails')
  call MPI_Error_class(ierr, cls, ierr)
  call check(cls == MPI_ERR_RANK, 'MPI_Error_class is MPI_ERR_RANK')
  errstr = ''
  call MPI_Error_string(cls, errstr, len, ierr)
  call check(len > 0 .and. len_trim(errstr) == len, 'MPI_Error_string')
  call MPI_Comm_create_errhandler(on_error, errh, ierr)
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, errh, ierr)
  call MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER, ierr)
  call check(calls == 1 .and. last_code == MPI_ERR_OTHER .and. last_comm == MPI_COMM_WORLD, &
             'Fortran error handler called with the communicator and code')
  call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  call MPI_Errhandler_free(errh, ierr)
  call check(errh == MPI_ERRHANDLER_NULL, 'MPI_Errhandler_free')

  ! ---- attributes, processor name ----
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tag_ub, flag, ierr)
  call check(flag .and. tag_ub >= 32767, 'MPI_TAG_UB')
  host = ''
  call MPI_Get_processor_name(host, len, ierr)
  call check(len > 0 .and. len_trim(host) == len, 'MPI_Get_processor_name')

  ! ---- Cartesian topology: a ring of nprocs x 1, periodic in the first dimension ----
  dims = [nprocs, 1]
  periods = [.true., .false.]
  call MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, .false., cart, ierr)
  call MPI_Cart_coords(cart, rank, 2, coords, ierr)
  call check(coords(1) == rank .and. coords(2) == 0, 'MPI_Cart_coords')
  call MPI_Cart_shift(cart, 0, 1, src, dst, ierr)
  call check(src == mod(rank - 1 + nprocs, nprocs) .and. dst == mod(rank + 1, nprocs), &
             'MPI_Cart_shift periodic')
  call MPI_Cart_shift(cart, 1, 1, src, dst, ierr)
  call check(src == MPI_PROC_NULL .and. dst == MPI_PROC_NULL, 'MPI_Cart_shift not periodic')
  periods = [.false., .true.]
  call MPI_Cart_get(cart, 2, dims, periods, coords, ierr)
  call check(periods(1) .and. .not. periods(2), 'MPI_Cart_get periods (LOGICAL)')
  call MPI_Comm_free(cart, ierr)

  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'comm_types: ok'

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

end program comm_types
