/* MPI_THREAD_MULTIPLE: several threads per rank communicate at once, and a thread blocked
 * in MPI_Recv does not keep another thread of the same rank from sending its message. */
/* SLUICE_TEST_RANKS: 2 3 4 */
#include <pthread.h>
#include <time.h>

#include "check.h"

enum { THREADS = 4, ITERS = 200 };
static int rank, size;
static int errors[THREADS];

static void* ring_worker(void* arg) {
  const int t = (int)(long)arg;
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  for (int i = 0; i < ITERS; ++i) {
    int out[8], in[8];
    for (int k = 0; k < 8; ++k) out[k] = rank * 1000000 + t * 10000 + i * 8 + k;
    MPI_Request r;
    MPI_Irecv(in, 8, MPI_INT, left, t, MPI_COMM_WORLD, &r);
    MPI_Send(out, 8, MPI_INT, right, t, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int k = 0; k < 8; ++k)
      if (in[k] != left * 1000000 + t * 10000 + i * 8 + k) ++errors[t];
  }
  return NULL;
}

static int blocked_value = -1;
static void* blocked_receiver(void* arg) {
  (void)arg;
  MPI_Recv(&blocked_value, 1, MPI_INT, rank, 1000, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return NULL;
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) printf("MPI_THREAD_MULTIPLE not provided (%d): skipped\n", provided);
    MPI_Finalize();
    return 0;
  }
  pthread_t th[THREADS];
  for (long t = 0; t < THREADS; ++t) pthread_create(&th[t], NULL, ring_worker, (void*)t);
  for (int t = 0; t < THREADS; ++t) pthread_join(th[t], NULL);
  for (int t = 0; t < THREADS; ++t)
    CHECK(errors[t] == 0, "thread %d: %d wrong values", t, errors[t]);

  /* a thread blocked in Recv; another thread of this rank sends the message later */
  pthread_t rx;
  pthread_create(&rx, NULL, blocked_receiver, NULL);
  struct timespec ts = {0, 50 * 1000 * 1000};
  nanosleep(&ts, NULL);
  int v = 4242 + rank;
  MPI_Send(&v, 1, MPI_INT, rank, 1000, MPI_COMM_WORLD);
  pthread_join(rx, NULL);
  CHECK(blocked_value == 4242 + rank, "blocked receiver got %d", blocked_value);

  MPI_Finalize();
  return check_exit("threads");
}
