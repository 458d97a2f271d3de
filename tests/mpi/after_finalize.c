/* A call after MPI_Finalize says that MPI was already finalized (not "not initialized"),
   and ends the program with an error. */
/* SLUICE_TEST_RANKS: 2 */
/* SLUICE_TEST_EXPECT_FAILURE: MPI_Send: .*MPI was already finalized */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Finalize();
  int flag = 0;
  MPI_Finalized(&flag); /* allowed after finalize */
  if (!flag) return 3;
  int x = rank;
  MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  printf("MPI_Send after MPI_Finalize returned\n");
  return 0;
}
