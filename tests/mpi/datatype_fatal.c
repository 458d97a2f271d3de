/* A bad datatype argument under the default MPI_ERRORS_ARE_FATAL ends the job with a
 * message naming the function and the argument. */
/* SLUICE_TEST_RANKS: 2 */
/* SLUICE_TEST_EXPECT_FAILURE: MPI_Type_create_subarray: array_of_starts\[1\] = 3 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int sizes[2] = {4, 4}, subs[2] = {2, 2}, starts[2] = {0, 3};
  MPI_Datatype t;
  MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t);
  fprintf(stderr, "datatype_fatal: the bad subarray was accepted\n");
  MPI_Finalize();
  return 0;
}
