/* An MPI_Put outside any access epoch is an error (MPI_ERR_RMA_SYNC) raised through the
   window's error handler, MPI_ERRORS_ARE_FATAL by default: the job ends with the message. */
/* SLUICE_TEST_RANKS: 2 */
/* SLUICE_TEST_EXPECT_FAILURE: no access epoch to rank 1.*RMA_SYNC.*rma-fatal-window */
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, buf[4] = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win win;
  MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_set_name(win, "rma-fatal-window");
  if (rank == 0) MPI_Put(buf, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
