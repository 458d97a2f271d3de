/* MPI-4.0's MPI_ERRORS_ABORT, set on a duplicate of MPI_COMM_WORLD: MPI_Comm_get_errhandler
 * returns it, freeing the returned handle leaves it in place, and an error on that
 * communicator ends the job (Sluice's MPI_Abort ends the whole job) naming the handler. */
/* tests/mpi/CMakeLists.txt reads the marker lines as they are: */
/* clang-format off */
/* SLUICE_TEST_RANKS: 2 */
/* SLUICE_TEST_EXPECT_FAILURE: MPI_Send: invalid rank 5 \(communicator .* has 2 ranks\) .*\(MPI_ERRORS_ABORT on */
/* clang-format on */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, x = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_ABORT);
  MPI_Errhandler h;
  MPI_Comm_get_errhandler(dup, &h);
  if (h != MPI_ERRORS_ABORT) {
    fprintf(stderr, "errors_abort: MPI_Comm_get_errhandler did not return MPI_ERRORS_ABORT\n");
    return 1; /* a clean exit without the expected message: the test fails */
  }
  MPI_Errhandler_free(&h);
  MPI_Barrier(dup);
  if (rank == 1) MPI_Send(&x, 1, MPI_INT, 5, 0, dup);
  MPI_Recv(&x, 1, MPI_INT, 1, 0, dup, MPI_STATUS_IGNORE); /* never comes */
  MPI_Finalize();
  return 0;
}
