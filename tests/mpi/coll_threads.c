/* MPI_THREAD_MULTIPLE with collectives: two threads per process run collectives at the
 * same time, each on its own duplicate of MPI_COMM_WORLD (the standard requires distinct
 * communicators for concurrent collectives), blocking and nonblocking, checking results. */
/* SLUICE_TEST_RANKS: 1 2 3 4 */
#include <pthread.h>

#include "check.h"

#define ITERS 200

static int me, P;
static MPI_Comm comms[2];

static void* worker(void* arg) {
  const int t = (int)(long)arg;
  MPI_Comm comm = comms[t];
  for (int it = 0; it < ITERS; ++it) {
    long long in[3] = {me + it, t, 1}, out[3];
    MPI_Allreduce(in, out, 3, MPI_LONG_LONG, MPI_SUM, comm);
    CHECK(out[0] == (long long)P * (P - 1) / 2 + (long long)P * it && out[1] == (long long)P * t &&
              out[2] == P,
          "thread %d iteration %d: allreduce (%lld, %lld, %lld)", t, it, out[0], out[1], out[2]);
    int b = me == it % P ? 1000 * t + it : -1;
    MPI_Request r;
    MPI_Ibcast(&b, 1, MPI_INT, it % P, comm, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(b == 1000 * t + it, "thread %d iteration %d: ibcast gave %d", t, it, b);
    if (it % 50 == 0) MPI_Barrier(comm);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
  if (provided == MPI_THREAD_MULTIPLE) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    pthread_t th[2];
    for (long t = 0; t < 2; ++t) pthread_create(&th[t], NULL, worker, (void*)t);
    for (int t = 0; t < 2; ++t) pthread_join(th[t], NULL);
    MPI_Comm_free(&comms[0]);
    MPI_Comm_free(&comms[1]);
  }
  MPI_Finalize();
  return check_exit("coll_threads");
}
