/* A Sluice MPI program for the PMIx bootstrap tests: started by Open MPI's mpirun (no
 * sluicerun), it must see the job's size, the right ranks, and talk to every rank.
 *   pmix_mpi N     checks that MPI_COMM_WORLD has N ranks */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0, failures = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int expected = argc > 1 ? atoi(argv[1]) : -1;
  if (size != expected) {
    fprintf(stderr, "pmix_mpi: rank %d sees %d ranks, expected %d\n", rank, size, expected);
    ++failures;
  }
  /* Every rank's number reaches every other rank (ring), and a reduction over all. */
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int token = -1;
  for (int step = 0; step < size; ++step) {
    int out = (rank + size - step) % size * 1000 + step, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, right, step, &in, 1, MPI_INT, left, step, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    int want = (left + size - step) % size * 1000 + step;
    if (in != want) {
      fprintf(stderr, "pmix_mpi: rank %d step %d got %d, expected %d\n", rank, step, in, want);
      ++failures;
    }
    token = in;
  }
  (void)token;
  long mine = rank + 1, sum = 0;
  MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (sum != (long)size * (size + 1) / 2) {
    fprintf(stderr, "pmix_mpi: rank %d allreduce %ld\n", rank, sum);
    ++failures;
  }
  MPI_Finalize();
  printf("pmix_mpi: rank %d of %d %s\n", rank, size, failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
