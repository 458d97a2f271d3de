! MPI-4.0 sessions through `use mpi`, without MPI_INIT (the Sessions Model alone):
! MPI_SESSION_INIT with MPI_ERRORS_RETURN, MPI_SESSION_GET_NUM_PSETS and
! MPI_SESSION_GET_NTH_PSET (the length query, then the blank-padded name) find mpi://WORLD and
! mpi://SELF; MPI_SESSION_GET_PSET_INFO gives mpi_size; MPI_SESSION_GET_INFO;
! MPI_GROUP_FROM_SESSION_PSET and MPI_COMM_CREATE_FROM_GROUP make a working communicator
! (an MPI_ALLREDUCE checked against the ranks); MPI_INTERCOMM_CREATE_FROM_GROUPS joins the two
! halves of the processes (remote size, a value from the other side); a session error handler
! written in Fortran (MPI_SESSION_CREATE/SET/GET/CALL_ERRHANDLER) receives the session's own
! integer and the code; an invalid process set name returns an error; MPI_SESSION_FINALIZE
! sets the handle to MPI_SESSION_NULL.
! SLUICE_TEST_RANKS: 1 2 3 4
! SLUICE_TEST_NO_PEER: the `mpi` module of Debian's MPICH 4.0.2 has no sessions (no MPI_SESSION_NULL)
module session_handler
  implicit none
  integer :: calls = 0, last_code = 0, last_session = -12345
contains
  subroutine on_session_error(session, code)
    integer :: session, code
    calls = calls + 1
    last_session = session
    last_code = code
  end subroutine on_session_error
end module session_handler

program session
  use mpi
  use session_handler
  implicit none
  integer :: ierr, sess, npsets, i, plen, info, group, comm, rank, nprocs, total, eh, eh2
  integer :: wsize, half, lgroup, rgroup, inter, rsize, mine, theirs, lrank
  integer :: ranges(3, 1)
  logical :: flag, found_world, found_self
  character(len=64) :: pname
  character(len=MPI_MAX_INFO_VAL) :: value

  rank = -1
  call MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, sess, ierr)
  call check(ierr == MPI_SUCCESS .and. sess /= MPI_SESSION_NULL, 'MPI_Session_init')

  call MPI_Session_get_num_psets(sess, MPI_INFO_NULL, npsets, ierr)
  call check(ierr == MPI_SUCCESS .and. npsets >= 2, 'MPI_Session_get_num_psets')
  found_world = .false.
  found_self = .false.
  do i = 0, npsets - 1
    plen = 0
    call MPI_Session_get_nth_pset(sess, MPI_INFO_NULL, i, plen, pname, ierr)
    call check(ierr == MPI_SUCCESS .and. plen > 1 .and. plen <= len(pname), &
               'MPI_Session_get_nth_pset length query')
    plen = len(pname)
    pname = 'garbage'
    call MPI_Session_get_nth_pset(sess, MPI_INFO_NULL, i, plen, pname, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Session_get_nth_pset')
    if (lower(trim(pname)) == 'mpi://world') found_world = .true.
    if (lower(trim(pname)) == 'mpi://self') found_self = .true.
  end do
  call check(found_world .and. found_self, 'process sets mpi://WORLD and mpi://SELF')

  call MPI_Session_get_pset_info(sess, 'mpi://WORLD', info, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Session_get_pset_info')
  call MPI_Info_get(info, 'mpi_size', MPI_MAX_INFO_VAL, value, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag, 'mpi_size in the process set info')
  read (value, *) wsize
  call MPI_Info_free(info, ierr)
  call check(info == MPI_INFO_NULL, 'MPI_Info_free')

  call MPI_Session_get_info(sess, info, ierr)
  call check(ierr == MPI_SUCCESS .and. info /= MPI_INFO_NULL, 'MPI_Session_get_info')
  call MPI_Info_free(info, ierr)

  call MPI_Group_from_session_pset(sess, 'mpi://WORLD', group, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Group_from_session_pset')
  call MPI_Comm_create_from_group(group, 'org.sluice.tests.fortran.session', MPI_INFO_NULL, &
                                  MPI_ERRORS_RETURN, comm, ierr)
  call check(ierr == MPI_SUCCESS .and. comm /= MPI_COMM_NULL, 'MPI_Comm_create_from_group')
  call MPI_Comm_rank(comm, rank, ierr)
  call MPI_Comm_size(comm, nprocs, ierr)
  call check(nprocs == wsize, 'communicator size is the process set''s mpi_size')
  call MPI_Allreduce(rank + 1, total, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
  call check(ierr == MPI_SUCCESS .and. total == nprocs * (nprocs + 1) / 2, 'MPI_Allreduce')

  ! The two halves of the processes, as an intercommunicator.
  if (nprocs >= 2) then
    half = nprocs / 2
    if (rank < half) then
      ranges(:, 1) = [0, half - 1, 1]
      call MPI_Group_range_incl(group, 1, ranges, lgroup, ierr)
      ranges(:, 1) = [half, nprocs - 1, 1]
      call MPI_Group_range_incl(group, 1, ranges, rgroup, ierr)
    else
      ranges(:, 1) = [half, nprocs - 1, 1]
      call MPI_Group_range_incl(group, 1, ranges, lgroup, ierr)
      ranges(:, 1) = [0, half - 1, 1]
      call MPI_Group_range_incl(group, 1, ranges, rgroup, ierr)
    end if
    call MPI_Intercomm_create_from_groups(lgroup, 0, rgroup, 0, 'org.sluice.tests.fortran.inter', &
                                          MPI_INFO_NULL, MPI_ERRORS_RETURN, inter, ierr)
    call check(ierr == MPI_SUCCESS .and. inter /= MPI_COMM_NULL, &
               'MPI_Intercomm_create_from_groups')
    call MPI_Comm_remote_size(inter, rsize, ierr)
    if (rank < half) then
      call check(rsize == nprocs - half, 'remote size of the lower half')
    else
      call check(rsize == half, 'remote size of the upper half')
    end if
    ! Local rank 0 of each side exchanges its side's size with the other's.
    call MPI_Comm_rank(inter, lrank, ierr)
    if (lrank == 0) then
      mine = nprocs - rsize
      call MPI_Sendrecv(mine, 1, MPI_INTEGER, 0, 7, theirs, 1, MPI_INTEGER, 0, 7, inter, &
                        MPI_STATUS_IGNORE, ierr)
      call check(ierr == MPI_SUCCESS .and. theirs == rsize, 'exchange over the intercommunicator')
    end if
    call MPI_Comm_free(inter, ierr)
    call MPI_Group_free(lgroup, ierr)
    call MPI_Group_free(rgroup, ierr)
  end if

  ! A session error handler written in Fortran.
  call MPI_Session_create_errhandler(on_session_error, eh, ierr)
  call check(ierr == MPI_SUCCESS .and. eh /= MPI_ERRHANDLER_NULL, 'MPI_Session_create_errhandler')
  call MPI_Session_set_errhandler(sess, eh, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Session_set_errhandler')
  call MPI_Session_get_errhandler(sess, eh2, ierr)
  call check(ierr == MPI_SUCCESS .and. eh2 /= MPI_ERRHANDLER_NULL, 'MPI_Session_get_errhandler')
  call MPI_Errhandler_free(eh2, ierr)
  call MPI_Session_call_errhandler(sess, MPI_ERR_OTHER, ierr)
  call check(calls == 1 .and. last_session == sess .and. last_code == MPI_ERR_OTHER, &
             'the Fortran handler got the session and the code')
  call MPI_Session_set_errhandler(sess, MPI_ERRORS_RETURN, ierr)
  call MPI_Errhandler_free(eh, ierr)
  call check(eh == MPI_ERRHANDLER_NULL, 'MPI_Errhandler_free')

  ! An unknown process set: an error returned (MPI_ERRORS_RETURN).
  call MPI_Group_from_session_pset(sess, 'mpi://no-such-set', lgroup, ierr)
  call check(ierr /= MPI_SUCCESS, 'MPI_Group_from_session_pset of an unknown set fails')

  call MPI_Comm_free(comm, ierr)
  call check(comm == MPI_COMM_NULL, 'MPI_Comm_free')
  call MPI_Group_free(group, ierr)
  call MPI_Session_finalize(sess, ierr)
  call check(ierr == MPI_SUCCESS .and. sess == MPI_SESSION_NULL, 'MPI_Session_finalize')
  if (rank == 0) print '(a)', 'session: ok'

contains

  function lower(s) result(out)
    character(len=*), intent(in) :: s
    character(len=len(s)) :: out
    integer :: k
    out = s
    do k = 1, len(s)
      if (out(k:k) >= 'A' .and. out(k:k) <= 'Z') out(k:k) = achar(iachar(out(k:k)) + 32)
    end do
  end function lower

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (.not. cond) then
      print '(a,i0,a,a)', 'FAILED on rank ', rank, ': ', what
      error stop 1
    end if
  end subroutine check

end program session
