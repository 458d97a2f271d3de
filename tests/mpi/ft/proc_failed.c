/* MPI view of a rank SIGKILLed mid-run, under `sluicerun -n 3 --enable-recovery` (ULFM
   semantics, not a plain MPI-3.1 program, so it is not among the peer-checked tests/mpi/<name>.c):
   - a pending any-source MPI_Irecv on MPI_COMM_WORLD completes with MPIX_ERR_PROC_FAILED;
   - a blocking any-source MPI_Recv raises it through the communicator's (user) handler;
   - a message that already arrived from a live rank still matches an any-source receive;
   - a communicator without the dead rank is unaffected;
   - after MPIX_Comm_failure_ack, any-source receives work again and
     MPIX_Comm_failure_get_acked names the dead rank.
   Rank 0 prints "proc_failed: ok"; the job's exit status is the killed rank's. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "../check.h"

static int handler_calls = 0, handler_class = MPI_SUCCESS;

static void record(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  ++handler_calls;
  MPI_Error_class(*code, &handler_class);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, v = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 3) {
    fprintf(stderr, "proc_failed: needs 3 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm pair; /* ranks 0 and 1 */
  MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
  MPI_Comm with_dead; /* ranks 0 and 2: rank 0's collective sends there go to the dead rank */
  MPI_Comm_split(MPI_COMM_WORLD, rank != 1 ? 0 : MPI_UNDEFINED, rank, &with_dead);
  if (with_dead != MPI_COMM_NULL) MPI_Comm_set_errhandler(with_dead, MPI_ERRORS_RETURN);
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(record, &eh);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);

  if (rank == 2) {
    MPI_Recv(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* go */
    kill(getpid(), SIGKILL);
    return 1;
  }
  if (rank == 1) {
    v = 7;
    MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    v = 8;
    MPI_Send(&v, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
    v = 11;
    MPI_Send(&v, 1, MPI_INT, 0, 11, pair);
    MPI_Recv(&v, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* rank 0 acked */
    v = 10;
    MPI_Send(&v, 1, MPI_INT, 0, 10, MPI_COMM_WORLD);
    MPI_Comm_free(&pair);
    MPI_Finalize();
    return check_exit("proc_failed");
  }

  int in = 0, rc, cls;
  MPI_Status st;
  rc = MPI_Recv(&in, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(rc == MPI_SUCCESS && in == 8, "marker from rank 1: rc %d", rc);

  MPI_Request req;
  MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &req);
  v = 1;
  MPI_Send(&v, 1, MPI_INT, 2, 1, MPI_COMM_WORLD);
  rc = MPI_Wait(&req, &st);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPIX_ERR_PROC_FAILED, "pending any-source MPI_Irecv: class %d", cls);

  handler_calls = 0;
  rc = MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPIX_ERR_PROC_FAILED, "later any-source MPI_Recv: class %d", cls);
  CHECK(handler_calls == 1 && handler_class == MPIX_ERR_PROC_FAILED,
        "the error handler saw %d calls, class %d", handler_calls, handler_class);
  rc = MPI_Probe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPIX_ERR_PROC_FAILED, "any-source MPI_Probe: class %d", cls);
  int flag = 1;
  rc = MPI_Iprobe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &flag, &st);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPIX_ERR_PROC_FAILED && !flag, "any-source MPI_Iprobe: class %d", cls);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  CHECK(MPI_Error_string(MPIX_ERR_PROC_FAILED, text, &len) == MPI_SUCCESS && len > 0,
        "MPI_Error_string(MPIX_ERR_PROC_FAILED)");

  rc = MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st);
  CHECK(rc == MPI_SUCCESS && in == 7 && st.MPI_SOURCE == 1,
        "arrived message: rc %d, value %d, source %d", rc, in, st.MPI_SOURCE);
  rc = MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 11, pair, &st);
  CHECK(rc == MPI_SUCCESS && in == 11 && st.MPI_SOURCE == 1,
        "any-source on a communicator without the dead rank: rc %d", rc);
  rc = MPI_Send(&v, 1, MPI_INT, 2, 3, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPIX_ERR_PROC_FAILED, "send to the dead rank: class %d", cls);
  /* A collective whose (eager, request-free) sends go to the dead rank fails too. */
  rc = MPI_Bcast(&v, 1, MPI_INT, 0, with_dead);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPIX_ERR_PROC_FAILED, "MPI_Bcast to the dead rank: class %d", cls);

  MPI_Group acked;
  CHECK(MPIX_Comm_failure_ack(MPI_COMM_WORLD) == MPI_SUCCESS, "MPIX_Comm_failure_ack");
  CHECK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &acked) == MPI_SUCCESS, "get_acked");
  int n = 0, r0 = 0, r_world = -1;
  MPI_Group world_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_size(acked, &n);
  if (n == 1) MPI_Group_translate_ranks(acked, 1, &r0, world_group, &r_world);
  CHECK(n == 1 && r_world == 2, "acked group: %d members, first is world rank %d", n, r_world);
  MPI_Group_free(&world_group);
  if (acked != MPI_GROUP_EMPTY) MPI_Group_free(&acked);

  MPI_Send(&v, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
  rc = MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, 10, MPI_COMM_WORLD, &st);
  CHECK(rc == MPI_SUCCESS && in == 10 && st.MPI_SOURCE == 1, "any-source after the ack: rc %d", rc);
  MPI_Comm_free(&pair);
  MPI_Errhandler_free(&eh);
  MPI_Finalize();
  if (!check_failures) fprintf(stderr, "proc_failed: ok\n");
  return check_exit("proc_failed");
}
