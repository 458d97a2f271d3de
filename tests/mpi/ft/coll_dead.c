/* A rank SIGKILLed in the middle of a loop of collectives on MPI_COMM_WORLD, under
   `sluicerun -n 4 --enable-recovery` (ULFM semantics, see docs/MPI.md "Process failure"):
   - every survivor's collective on MPI_COMM_WORLD ends with MPIX_ERR_PROC_FAILED, also on
     ranks that never exchange a message with the dead rank in that collective (they would
     otherwise wait for a live partner that stopped when its own exchange with it failed);
     blocking and nonblocking collectives, small (eager) and 64 KiB (rendezvous) messages;
   - later collectives on MPI_COMM_WORLD fail at once, on every survivor;
   - a communicator without the dead rank still works (its result is checked).
   Rank 0 prints "coll_dead: ok" once every survivor reported success; the job's exit
   status is the killed rank's. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"

enum { kBig = 16384, kMaxIters = 1000000 };

static const char* op_name[] = {"MPI_Bcast",     "MPI_Allreduce",           "MPI_Barrier",
                                "MPI_Ialltoall", "MPI_Iallreduce (64 KiB)", "MPI_Ibcast (64 KiB)"};

/* One collective of the loop; returns the MPI error code. */
static int one(int kind, int i, int size, int* small, int* big, int* big2, int* a2a_in,
               int* a2a_out) {
  MPI_Request req;
  int rc;
  switch (kind) {
    case 0:
      return MPI_Bcast(small, 4, MPI_INT, i % size, MPI_COMM_WORLD);
    case 1:
      return MPI_Allreduce(MPI_IN_PLACE, small, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    case 2:
      return MPI_Barrier(MPI_COMM_WORLD);
    case 3:
      rc = MPI_Ialltoall(a2a_in, 1024, MPI_INT, a2a_out, 1024, MPI_INT, MPI_COMM_WORLD, &req);
      return rc != MPI_SUCCESS ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE);
    case 4:
      rc = MPI_Iallreduce(big, big2, kBig, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
      return rc != MPI_SUCCESS ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE);
    default:
      rc = MPI_Ibcast(big, kBig, MPI_INT, (i / 6) % size, MPI_COMM_WORLD, &req);
      return rc != MPI_SUCCESS ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 3) {
    fprintf(stderr, "coll_dead: needs at least 3 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int victim = size - 1;
  /* The iteration the victim dies at (argv[1], default 40): i % 6 picks the collective the
     survivors are in. */
  const int kill_at = argc > 1 ? atoi(argv[1]) : 40;
  MPI_Comm live; /* every rank but the victim */
  MPI_Comm_split(MPI_COMM_WORLD, rank != victim ? 0 : MPI_UNDEFINED, rank, &live);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  static int big[kBig], big2[kBig];
  int small[4] = {rank, 0, 0, 0};
  int* a2a_in = malloc(sizeof(int) * 1024 * (size_t)size);
  int* a2a_out = malloc(sizeof(int) * 1024 * (size_t)size);
  memset(a2a_in, 0, sizeof(int) * 1024 * (size_t)size);
  int i = 0, rc = MPI_SUCCESS, kind = 0;
  for (; i < kMaxIters; ++i) {
    /* Dies at the top of an iteration: the others are inside collective kill_at. */
    if (rank == victim && i == kill_at) kill(getpid(), SIGKILL);
    kind = i % 6;
    rc = one(kind, i, size, small, big, big2, a2a_in, a2a_out);
    if (rc != MPI_SUCCESS) break;
  }
  int cls = MPI_SUCCESS;
  MPI_Error_class(rc, &cls);
  CHECK(i < kMaxIters, "no collective failed in %d iterations", i);
  /* The victim left the last barrier before kill_at: every rank is there or later. */
  CHECK(i >= kill_at - 6, "a collective failed at iteration %d, before the kill", i);
  CHECK(cls == MPIX_ERR_PROC_FAILED, "%s at iteration %d: class %d", op_name[kind], i, cls);
  fprintf(stderr, "rank %d: %s failed with MPIX_ERR_PROC_FAILED at iteration %d\n", rank,
          op_name[kind], i);

  /* Later collectives on the world fail at once (no rank waits for another). */
  for (int k = 0; k < 6; ++k) {
    rc = one(k, i, size, small, big, big2, a2a_in, a2a_out);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPIX_ERR_PROC_FAILED, "later %s: class %d", op_name[k], cls);
  }

  /* A communicator without the dead rank is unaffected. */
  int n = size - 1, sum = 0, one_ok = check_failures == 0, all_ok = 0;
  rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, live);
  CHECK(rc == MPI_SUCCESS && sum == n * (n - 1) / 2, "allreduce on the live ranks: rc %d, %d", rc,
        sum);
  one_ok = check_failures == 0;
  rc = MPI_Allreduce(&one_ok, &all_ok, 1, MPI_INT, MPI_LAND, live);
  CHECK(rc == MPI_SUCCESS, "verdict allreduce: rc %d", rc);
  MPI_Comm_free(&live);
  free(a2a_in);
  free(a2a_out);
  MPI_Finalize();
  if (rank == 0 && all_ok && !check_failures) fprintf(stderr, "coll_dead: ok\n");
  return check_exit("coll_dead");
}
