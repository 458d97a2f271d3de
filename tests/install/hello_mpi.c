/* Built by tests/install with the installed mpicc, run with the installed mpirun. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int token = rank;
  if (size > 1) {
    if (rank == 0) {
      MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
      MPI_Recv(&token, 1, MPI_INT, size - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&token, 1, MPI_INT, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      token += rank;
      MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 7, MPI_COMM_WORLD);
    }
  }
  if (rank == 0) printf("mpi ok: size %d sum %d ring %d\n", size, sum, token);
  MPI_Finalize();
  return sum == size ? 0 : 1;
}
