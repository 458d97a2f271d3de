! Attributes on datatypes and windows from Fortran, the MPI-1 keyval routines, and the
! external32 routines (what MPICH's f77/f90 attr, rma, datatype and info tests call):
! MPI_TYPE_CREATE_KEYVAL/SET_ATTR/GET_ATTR with Fortran copy and delete procedures
! (MPI_TYPE_DUP copies, MPI_TYPE_FREE deletes) and MPI_TYPE_NULL_COPY_FN/TYPE_DUP_FN;
! MPI_WIN_CREATE_KEYVAL/SET_ATTR/GET_ATTR, the predefined window attributes as values, and
! MPI_WIN_FREE calling the delete procedure; MPI_KEYVAL_CREATE/ATTR_PUT/ATTR_GET with
! INTEGER values and MPI_DUP_FN/MPI_NULL_COPY_FN/MPI_NULL_DELETE_FN;
! MPI_PACK_EXTERNAL(_SIZE)/MPI_UNPACK_EXTERNAL with the bytes checked; MPI_INFO_CREATE_ENV;
! MPI_WIN_CREATE_ERRHANDLER with a Fortran procedure, called by MPI_WIN_CALL_ERRHANDLER;
! MPI_INFO_GET_STRING's Fortran BUFLEN (characters, no terminator) and MPI_INFO_GET(_STRING)
! leaving VALUE alone for a key that is not set.
! SLUICE_TEST_RANKS: 1 2 3
module kinds_callbacks
  implicit none
  integer :: copies = 0, deletes = 0, deletes1 = 0
  integer(kind=8) :: last_deleted = -1
  integer :: errh_calls = 0, errh_win = -1, errh_code = -1
contains
  subroutine win_errh(win, code)
    integer :: win, code
    errh_calls = errh_calls + 1
    errh_win = win
    errh_code = code
  end subroutine win_errh

  subroutine plus_one(old, keyval, extra_state, val_in, val_out, flag, ierror)
    integer :: old, keyval, ierror
    integer(kind=8) :: extra_state, val_in, val_out
    logical :: flag
    if (old == 0 .or. keyval < 0) ierror = 1
    copies = copies + 1
    val_out = val_in + extra_state
    flag = .true.
    ierror = 0
  end subroutine plus_one

  subroutine count_delete(h, keyval, val, extra_state, ierror)
    integer :: h, keyval, ierror
    integer(kind=8) :: val, extra_state
    if (h == 0 .or. keyval < 0 .or. extra_state < 0) ierror = 1
    deletes = deletes + 1
    last_deleted = val
    ierror = 0
  end subroutine count_delete

  ! The MPI-1 form: every argument a default INTEGER.
  subroutine delete1(comm, keyval, val, extra_state, ierror)
    integer :: comm, keyval, val, extra_state, ierror
    if (comm == 0 .or. keyval < 0) ierror = 1
    if (val == 41 .and. extra_state == 9) deletes1 = deletes1 + 1
    ierror = 0
  end subroutine delete1
end module kinds_callbacks

program attr_kinds
  use mpi
  use kinds_callbacks
  implicit none
  integer :: ierr, rank, key, key2, t1, t2, win, c1, k1, k2, k3, ival, info, errh
  integer(kind=MPI_ADDRESS_KIND) :: val, extra, size, position
  integer :: mem(4), ints(2), back(2)
  integer(kind=1) :: bytes(8)
  character(len=20) :: sval
  integer :: buflen
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)

  ! ---- datatypes
  extra = 10
  call MPI_Type_create_keyval(plus_one, count_delete, key, extra, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Type_create_keyval')
  call MPI_Type_contiguous(2, MPI_INTEGER, t1, ierr)
  val = 2_MPI_ADDRESS_KIND**40 + rank
  call MPI_Type_set_attr(t1, key, val, ierr)
  val = 0
  call MPI_Type_get_attr(t1, key, val, flag, ierr)
  call check(flag .and. val == 2_MPI_ADDRESS_KIND**40 + rank, 'MPI_Type_get_attr after set')
  call MPI_Type_dup(t1, t2, ierr)
  call check(copies == 1, 'type copy procedure called')
  call MPI_Type_get_attr(t2, key, val, flag, ierr)
  call check(flag .and. val == 2_MPI_ADDRESS_KIND**40 + rank + 10, 'copied type attribute')
  call MPI_Type_free(t2, ierr)
  call check(deletes == 1 .and. last_deleted == 2_MPI_ADDRESS_KIND**40 + rank + 10, &
             'type delete procedure on MPI_Type_free')
  call MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, key2, extra, ierr)
  val = 3
  call MPI_Type_set_attr(t1, key2, val, ierr)
  call MPI_Type_dup(t1, t2, ierr)
  call MPI_Type_get_attr(t2, key2, val, flag, ierr)
  call check(.not. flag, 'MPI_TYPE_NULL_COPY_FN does not copy')
  call MPI_Type_free(t2, ierr)
  call MPI_Type_free_keyval(key2, ierr)
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, key2, extra, ierr)
  val = 4
  call MPI_Type_set_attr(t1, key2, val, ierr)
  call MPI_Type_dup(t1, t2, ierr)
  call MPI_Type_get_attr(t2, key2, val, flag, ierr)
  call check(flag .and. val == 4, 'MPI_TYPE_DUP_FN copies the value')
  call MPI_Type_free(t2, ierr)
  call MPI_Type_free(t1, ierr)
  call check(deletes == 4 .and. copies == 3, 'type copy and delete procedures on every dup and free')
  call MPI_Type_free_keyval(key2, ierr)
  call MPI_Type_free_keyval(key, ierr)
  call check(key == MPI_KEYVAL_INVALID, 'MPI_Type_free_keyval')

  ! ---- windows
  deletes = 0
  call MPI_Win_create(mem, 16_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_get_attr(win, MPI_WIN_SIZE, val, flag, ierr)
  call check(flag .and. val == 16, 'MPI_WIN_SIZE')
  call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, val, flag, ierr)
  call check(flag .and. val == 4, 'MPI_WIN_DISP_UNIT')
  call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, val, flag, ierr)
  call check(flag .and. val == MPI_WIN_FLAVOR_CREATE, 'MPI_WIN_CREATE_FLAVOR')
  call MPI_Win_get_attr(win, MPI_WIN_MODEL, val, flag, ierr)
  call check(flag .and. (val == MPI_WIN_UNIFIED .or. val == MPI_WIN_SEPARATE), 'MPI_WIN_MODEL')
  call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, count_delete, key, extra, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Win_create_keyval')
  val = 2_MPI_ADDRESS_KIND**41 + rank
  call MPI_Win_set_attr(win, key, val, ierr)
  val = 0
  call MPI_Win_get_attr(win, key, val, flag, ierr)
  call check(flag .and. val == 2_MPI_ADDRESS_KIND**41 + rank, 'MPI_Win_get_attr after set')
  call MPI_Win_create_errhandler(win_errh, errh, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Win_create_errhandler')
  call MPI_Win_set_errhandler(win, errh, ierr)
  call MPI_Win_call_errhandler(win, MPI_ERR_OTHER, ierr)
  call check(errh_calls == 1 .and. errh_win == win .and. errh_code == MPI_ERR_OTHER, &
             'Fortran window error handler called with the window and the code')
  call MPI_Errhandler_free(errh, ierr)
  call MPI_Win_free(win, ierr)
  call check(deletes == 1 .and. last_deleted == 2_MPI_ADDRESS_KIND**41 + rank, &
             'window delete procedure on MPI_Win_free')
  call MPI_Win_free_keyval(key, ierr)

  ! ---- the MPI-1 keyvals
  call MPI_Keyval_create(MPI_DUP_FN, delete1, k1, 9, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Keyval_create')
  call MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, k2, 0, ierr)
  call MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, k3, 0, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, c1, ierr)
  call MPI_Attr_put(c1, k1, 41, ierr)
  call MPI_Attr_put(c1, k2, 42, ierr)
  call MPI_Attr_put(c1, k3, -43, ierr)
  call MPI_Attr_get(c1, k3, ival, flag, ierr)
  call check(flag .and. ival == -43, 'MPI_Attr_get after MPI_Attr_put (negative)')
  call MPI_Comm_dup(c1, t1, ierr)
  call MPI_Attr_get(t1, k1, ival, flag, ierr)
  call check(flag .and. ival == 41, 'MPI_DUP_FN copies the value')
  call MPI_Attr_get(t1, k2, ival, flag, ierr)
  call check(.not. flag, 'MPI_NULL_COPY_FN does not copy')
  call MPI_Comm_free(t1, ierr)
  call MPI_Comm_free(c1, ierr)
  call check(deletes1 == 2, 'MPI-1 delete procedure with INTEGER value and extra_state')
  call MPI_Keyval_free(k1, ierr)
  call MPI_Keyval_free(k2, ierr)
  call MPI_Keyval_free(k3, ierr)

  ! ---- external32: big-endian 4-byte INTEGERs
  ints(1) = 1
  ints(2) = 258
  call MPI_Pack_external_size('external32', 2, MPI_INTEGER, size, ierr)
  call check(ierr == MPI_SUCCESS .and. size == 8, 'MPI_Pack_external_size')
  position = 0
  call MPI_Pack_external('external32', ints, 2, MPI_INTEGER, bytes, 8_MPI_ADDRESS_KIND, &
                         position, ierr)
  call check(position == 8 .and. all(bytes == [0_1, 0_1, 0_1, 1_1, 0_1, 0_1, 1_1, 2_1]), &
             'MPI_Pack_external bytes')
  position = 0
  back = 0
  call MPI_Unpack_external('external32', bytes, 8_MPI_ADDRESS_KIND, position, back, 2, &
                           MPI_INTEGER, ierr)
  call check(position == 8 .and. back(1) == 1 .and. back(2) == 258, 'MPI_Unpack_external')

  ! ---- MPI_INFO_CREATE_ENV
  call MPI_Info_create_env(info, ierr)
  call check(ierr == MPI_SUCCESS .and. info /= MPI_INFO_NULL, 'MPI_Info_create_env')
  call MPI_Info_free(info, ierr)
  call check(info == MPI_INFO_NULL, 'MPI_Info_free of the environment info')

  ! ---- MPI_INFO_GET_STRING, MPI_INFO_GET
  call MPI_Info_create(info, ierr)
  call MPI_Info_set(info, 'file', '123456', ierr)
  sval = 'canary'
  buflen = 10
  call MPI_Info_get_string(info, 'nokey', buflen, sval, flag, ierr)
  call check(.not. flag .and. sval == 'canary', 'MPI_Info_get_string of a key not set')
  buflen = 0
  call MPI_Info_get_string(info, 'file', buflen, sval, flag, ierr)
  call check(flag .and. buflen == 6 .and. sval == 'canary', 'MPI_Info_get_string, BUFLEN 0')
  buflen = 2
  call MPI_Info_get_string(info, 'file', buflen, sval, flag, ierr)
  call check(flag .and. buflen == 6 .and. sval == '12', 'MPI_Info_get_string, BUFLEN 2')
  buflen = 20
  call MPI_Info_get_string(info, 'file', buflen, sval, flag, ierr)
  call check(flag .and. buflen == 6 .and. sval == '123456', 'MPI_Info_get_string, BUFLEN 20')
  call MPI_Info_get(info, 'nokey', 20, sval, flag, ierr)
  call check(.not. flag .and. sval == '123456', 'MPI_Info_get of a key not set')
  call MPI_Info_free(info, ierr)

  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'attr_kinds: ok'

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

end program attr_kinds
