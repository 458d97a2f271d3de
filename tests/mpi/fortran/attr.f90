! Communicator attributes from Fortran: MPI_COMM_CREATE_KEYVAL with Fortran copy and delete
! procedures (and extra_state), MPI_COMM_SET_ATTR/GET_ATTR with address-sized values,
! MPI_COMM_DUP calling the copy procedure, MPI_COMM_FREE and MPI_COMM_DELETE_ATTR calling the
! delete procedure, and the predefined MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN and
! MPI_COMM_NULL_DELETE_FN; every value checked.
! SLUICE_TEST_RANKS: 1 2 3
module attr_callbacks
  implicit none
  integer :: copies = 0, deletes = 0
  integer(kind=8) :: last_deleted = -1, seen_extra = -1
contains
  ! Copies value + 1 (so the copy is visible), records extra_state.
  subroutine plus_one(oldcomm, keyval, extra_state, val_in, val_out, flag, ierror)
    integer :: oldcomm, keyval, ierror
    integer(kind=8) :: extra_state, val_in, val_out
    logical :: flag
    if (oldcomm == 0 .or. keyval < 0) ierror = 1
    copies = copies + 1
    seen_extra = extra_state
    val_out = val_in + 1
    flag = .true.
    ierror = 0
  end subroutine plus_one

  subroutine count_delete(comm, keyval, val, extra_state, ierror)
    integer :: comm, keyval, ierror
    integer(kind=8) :: val, extra_state
    if (comm == 0 .or. keyval < 0 .or. extra_state < 0) ierror = 1
    deletes = deletes + 1
    last_deleted = val
    ierror = 0
  end subroutine count_delete
end module attr_callbacks

program attr
  use mpi
  use attr_callbacks
  implicit none
  integer :: ierr, rank, key, key_null, key_dup, c1, c2
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)

  extra = 77
  call MPI_Comm_create_keyval(plus_one, count_delete, key, extra, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Comm_create_keyval')
  call MPI_Comm_dup(MPI_COMM_WORLD, c1, ierr)
  val = 2_MPI_ADDRESS_KIND**40 + rank
  call MPI_Comm_set_attr(c1, key, val, ierr)
  val = 0
  call MPI_Comm_get_attr(c1, key, val, flag, ierr)
  call check(flag .and. val == 2_MPI_ADDRESS_KIND**40 + rank, 'MPI_Comm_get_attr after set')
  call MPI_Comm_dup(c1, c2, ierr)
  call check(copies == 1 .and. seen_extra == 77, 'copy procedure called with extra_state')
  call MPI_Comm_get_attr(c2, key, val, flag, ierr)
  call check(flag .and. val == 2_MPI_ADDRESS_KIND**40 + rank + 1, 'copied value')
  call MPI_Comm_free(c2, ierr)
  call check(deletes == 1 .and. last_deleted == 2_MPI_ADDRESS_KIND**40 + rank + 1, &
             'delete procedure on MPI_Comm_free')
  call MPI_Comm_delete_attr(c1, key, ierr)
  call check(deletes == 2 .and. last_deleted == 2_MPI_ADDRESS_KIND**40 + rank, &
             'delete procedure on MPI_Comm_delete_attr')
  call MPI_Comm_get_attr(c1, key, val, flag, ierr)
  call check(.not. flag, 'deleted attribute is gone')

  ! The predefined procedures: NULL_COPY does not copy, DUP_FN copies the value itself.
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, key_null, &
                              extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, key_dup, extra, ierr)
  val = 5
  call MPI_Comm_set_attr(c1, key_null, val, ierr)
  val = 6
  call MPI_Comm_set_attr(c1, key_dup, val, ierr)
  call MPI_Comm_dup(c1, c2, ierr)
  call MPI_Comm_get_attr(c2, key_null, val, flag, ierr)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN does not copy')
  call MPI_Comm_get_attr(c2, key_dup, val, flag, ierr)
  call check(flag .and. val == 6, 'MPI_COMM_DUP_FN copies the value')
  call MPI_Comm_free(c2, ierr)
  call MPI_Comm_free(c1, ierr)
  call check(deletes == 2, 'no delete procedure of ours for the other keyvals')
  call MPI_Comm_free_keyval(key, ierr)
  call MPI_Comm_free_keyval(key_null, ierr)
  call MPI_Comm_free_keyval(key_dup, ierr)
  call check(key == MPI_KEYVAL_INVALID, 'MPI_Comm_free_keyval')

  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'attr: ok'

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

end program attr
