/* MPI_Cancel of sends whose receiver dies, under `sluicerun -n 2 --enable-recovery`: the
   cancel request of an unanswered rendezvous goes to a peer that is dead (or dies before it
   answers), so no answer comes; the wait must still end, with MPIX_ERR_PROC_FAILED or as
   cancelled, never hang. Rank 1 takes rank 0's rendezvous request into its unexpected queue,
   receives "go" and kills itself; rank 0 cancels right away (the death not yet known), then
   starts and cancels a second send once the death is known. Rank 0 prints
   "send_cancel_dead: ok"; the job's exit status is the killed rank's. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "../check.h"

enum { BIG = 1 << 20 };

/* Waits for a cancelled send to rank 1: it ends cancelled or failed with the peer. */
static void wait_cancelled(MPI_Request* req, const char* what) {
  MPI_Status st;
  const int rc = MPI_Wait(req, &st);
  int cls = MPI_SUCCESS, flag = 0;
  MPI_Error_class(rc, &cls);
  if (rc == MPI_SUCCESS) MPI_Test_cancelled(&st, &flag);
  CHECK(cls == MPIX_ERR_PROC_FAILED || (rc == MPI_SUCCESS && flag),
        "%s: neither cancelled nor failed (class %d, cancelled %d)", what, cls, flag);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, v = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    fprintf(stderr, "send_cancel_dead: needs 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  static char big[BIG];
  if (rank == 1) {
    MPI_Recv(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* go */
    kill(getpid(), SIGKILL);
    return 1;
  }
  MPI_Request req;
  MPI_Isend(big, BIG, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &req); /* its rts goes first */
  MPI_Send(&v, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
  MPI_Cancel(&req);
  wait_cancelled(&req, "cancel racing the receiver's death");

  /* Once the death is known (a receive from rank 1 fails), a new send and its cancel. */
  int rc = MPI_Recv(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int cls;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPIX_ERR_PROC_FAILED, "receive from the dead rank: class %d", cls);
  rc = MPI_Isend(big, BIG, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &req);
  if (rc == MPI_SUCCESS) {
    MPI_Cancel(&req);
    wait_cancelled(&req, "cancel of a send to a rank known dead");
  }
  if (!check_failures) printf("send_cancel_dead: ok\n");
  fflush(stdout);
  MPI_Finalize();
  return check_exit("send_cancel_dead");
}
