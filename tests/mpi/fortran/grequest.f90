! Generalized requests from Fortran: MPI_GREQUEST_START with Fortran query, free and cancel
! procedures; MPI_TEST before MPI_GREQUEST_COMPLETE says not complete; MPI_WAIT returns the
! status the query procedure set (MPI_STATUS_SET_ELEMENTS, the source and tag); the free
! procedure runs once per request and sees the EXTRA_STATE variable given to
! MPI_GREQUEST_START; MPI_CANCEL calls the cancel procedure with COMPLETE false.
! SLUICE_TEST_RANKS: 1 2
module greq_callbacks
  implicit none
  integer :: queries = 0, frees = 0, cancels = 0
  logical :: cancel_complete = .true.
contains
  subroutine query_fn(extra_state, status, ierror)
    use mpi
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: status(MPI_STATUS_SIZE), ierror
    queries = queries + 1
    status(MPI_SOURCE) = 3
    status(MPI_TAG) = int(extra_state)
    call MPI_Status_set_cancelled(status, .false., ierror)
    call MPI_Status_set_elements(status, MPI_INTEGER, 5, ierror)
    ierror = MPI_SUCCESS
  end subroutine query_fn

  subroutine free_fn(extra_state, ierror)
    use mpi
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierror
    frees = frees + 1
    extra_state = extra_state + 1000
    ierror = MPI_SUCCESS
  end subroutine free_fn

  subroutine cancel_fn(extra_state, complete, ierror)
    use mpi
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    logical :: complete
    integer :: ierror
    if (extra_state < 0) ierror = 1
    cancels = cancels + 1
    cancel_complete = complete
    ierror = MPI_SUCCESS
  end subroutine cancel_fn
end module greq_callbacks

program grequest
  use mpi
  use greq_callbacks
  implicit none
  integer :: ierr, rank, request, count
  integer :: status(MPI_STATUS_SIZE)
  integer(kind=MPI_ADDRESS_KIND) :: extra
  logical :: flag

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)

  extra = 7
  call MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, request, ierr)
  call check(ierr == MPI_SUCCESS .and. request /= MPI_REQUEST_NULL, 'MPI_Grequest_start')
  call MPI_Test(request, flag, MPI_STATUS_IGNORE, ierr)
  call check(.not. flag, 'not complete before MPI_Grequest_complete')
  call MPI_Grequest_complete(request, ierr)
  call MPI_Wait(request, status, ierr)
  call check(ierr == MPI_SUCCESS .and. request == MPI_REQUEST_NULL, 'MPI_Wait')
  call check(queries >= 1 .and. status(MPI_SOURCE) == 3 .and. status(MPI_TAG) == 7, &
             'status from the query procedure')
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  call check(count == 5, 'MPI_Status_set_elements in the query procedure')
  call check(frees == 1 .and. extra == 1007, 'free procedure on the EXTRA_STATE variable')

  extra = 1
  call MPI_Grequest_start(query_fn, free_fn, cancel_fn, extra, request, ierr)
  call MPI_Cancel(request, ierr)
  call check(cancels == 1 .and. .not. cancel_complete, 'cancel procedure, not complete')
  call MPI_Grequest_complete(request, ierr)
  call MPI_Wait(request, MPI_STATUS_IGNORE, ierr)
  call check(frees == 2, 'free procedure of the second request')

  call MPI_Finalize(ierr)
  if (rank == 0) print '(a)', 'grequest: ok'

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

end program grequest
