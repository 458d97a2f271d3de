/* Every way a rank can leave an MPI job, under sluicerun -n 3 (tests/mpi/CMakeLists.txt
   runs each with and without --enable-recovery through tests/mp/boot/expect.sh):

     leave <how>

   Rank 1 leaves after MPI_Init, without MPI_Finalize, while rank 0 waits in MPI_Recv for a
   message from it that never comes, and rank 2 is in an exchange with rank 0 that does not
   involve rank 1:
     return  rank 1 returns 5 from main       exit   rank 1 calls exit(6)
     _exit   rank 1 calls _exit(7)             signal rank 1 raises SIGABRT
     abort   rank 1 calls MPI_Abort(MPI_COMM_WORLD, 9)
   Without recovery the job must end promptly with rank 1's status and the launcher's message
   (expect.sh checks both). Under --enable-recovery rank 0's receive from rank 1 must fail
   with MPIX_ERR_PROC_FAILED, its exchange with rank 2 must succeed, and rank 0 prints
   "leave: rank 0: ..." and finalizes; except after MPI_Abort, which ends the job anyway:
   then rank 0 sleeps 60 s after its failed receive, so a job that runs on is seen to. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: leave return|exit|_exit|signal|abort\n");
    return 2;
  }
  const char* how = argv[1];
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 3) {
    fprintf(stderr, "leave: needs 3 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  /* Every rank is connected to every other before rank 1 leaves (tcp connects lazily). */
  MPI_Barrier(MPI_COMM_WORLD);
  int v = 0, w = 0;
  if (rank == 1) {
    usleep(200 * 1000); /* rank 0 is waiting by now */
    fflush(stdout);
    if (!strcmp(how, "return")) return 5;
    if (!strcmp(how, "exit")) exit(6);
    if (!strcmp(how, "_exit")) _exit(7);
    if (!strcmp(how, "signal")) raise(SIGABRT);
    if (!strcmp(how, "abort")) MPI_Abort(MPI_COMM_WORLD, 9);
    fprintf(stderr, "leave: unknown way '%s'\n", how);
    return 2;
  }
  if (rank == 2) {
    /* Talks to rank 0 only, once rank 1 has left. */
    usleep(500 * 1000);
    v = 22;
    int rc = MPI_Send(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS) rc = MPI_Recv(&w, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || w != 33) {
      fprintf(stderr, "leave: rank 2: exchange with rank 0 failed (rc %d, got %d)\n", rc, w);
      return 1;
    }
    MPI_Finalize();
    return 0;
  }
  MPI_Request from2;
  MPI_Irecv(&w, 1, MPI_INT, 2, 2, MPI_COMM_WORLD, &from2);
  const int rc = MPI_Recv(&v, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  int cls = MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  if (cls != MPIX_ERR_PROC_FAILED) {
    fprintf(stderr,
            "leave: rank 0: the receive from rank 1 returned class %d, not "
            "MPIX_ERR_PROC_FAILED\n",
            cls);
    return 1;
  }
  if (!strcmp(how, "abort")) {
    fprintf(stderr, "leave: rank 0: running on after rank 1 called MPI_Abort\n");
    sleep(60);
  }
  int rc2 = MPI_Wait(&from2, MPI_STATUS_IGNORE);
  v = 33;
  if (rc2 == MPI_SUCCESS) rc2 = MPI_Send(&v, 1, MPI_INT, 2, 3, MPI_COMM_WORLD);
  if (rc2 != MPI_SUCCESS || w != 22) {
    fprintf(stderr, "leave: rank 0: the exchange with rank 2 failed (rc %d, got %d)\n", rc2, w);
    return 1;
  }
  fprintf(stderr,
          "leave: rank 0: the receive from rank 1 failed with MPIX_ERR_PROC_FAILED, "
          "the exchange with rank 2 succeeded\n");
  MPI_Finalize();
  return 0;
}
