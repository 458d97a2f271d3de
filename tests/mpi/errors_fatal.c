/* The default handler, MPI_ERRORS_ARE_FATAL: a send to an invalid rank ends the job with
 * a message naming the function and the argument. */
/* tests/mpi/CMakeLists.txt reads the marker lines as they are: */
/* clang-format off */
/* SLUICE_TEST_RANKS: 3 */
/* SLUICE_TEST_EXPECT_FAILURE: MPI_Send: invalid rank 7 \(communicator MPI_COMM_WORLD has 3 ranks\) */
/* clang-format on */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, x = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) MPI_Send(&x, 1, MPI_INT, 7, 0, MPI_COMM_WORLD);
  /* the others wait for a message that never comes: the job must still end */
  MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
