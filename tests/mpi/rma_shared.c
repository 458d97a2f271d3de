/* Shared-memory windows (MPI_Win_allocate_shared over MPI_Comm_split_type(SHARED)): each rank
   stores into its own segment with plain stores, MPI_Win_sync + a barrier make them visible,
   and every rank reads every other rank's segment through the pointer MPI_Win_shared_query
   gives, with loads. Default (contiguous) layout: rank r's memory follows rank r-1's. Also a
   lock-protected counter updated with plain loads and stores through the pointers. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#define N 1000

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int rank, size;
  MPI_Comm_rank(node, &rank);
  MPI_Comm_size(node, &size);

  /* Rank r holds N + r ints (sizes differ on purpose). */
  int* mine = NULL;
  MPI_Win win;
  MPI_Win_allocate_shared((MPI_Aint)sizeof(int) * (N + rank), sizeof(int), MPI_INFO_NULL, node,
                          &mine, &win);
  MPI_Win_lock_all(0, win);
  for (int i = 0; i < N + rank; ++i) mine[i] = rank * 100000 + i;
  MPI_Win_sync(win);
  MPI_Barrier(node);
  MPI_Win_sync(win);
  for (int r = 0; r < size; ++r) {
    MPI_Aint sz;
    int unit;
    int* p = NULL;
    MPI_Win_shared_query(win, r, &sz, &unit, &p);
    CHECK(sz == (MPI_Aint)sizeof(int) * (N + r), "rank %d segment size %ld", r, (long)sz);
    CHECK(unit == sizeof(int), "rank %d disp_unit %d", r, unit);
    for (int i = 0; i < N + r; ++i)
      if (p[i] != r * 100000 + i) {
        CHECK(0, "rank %d's [%d] = %d", r, i, p[i]);
        break;
      }
    if (r > 0) {
      int* prev = NULL;
      MPI_Win_shared_query(win, r - 1, &sz, &unit, &prev);
      CHECK(prev + (N + r - 1) == p, "rank %d's memory does not follow rank %d's", r, r - 1);
    }
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(node);

  /* A counter at rank 0 updated with loads and stores under an exclusive lock. */
  int* counter = NULL;
  MPI_Aint sz;
  int unit;
  MPI_Win_shared_query(win, 0, &sz, &unit, &counter);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    counter[0] = 0;
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(node);
  for (int i = 0; i < 200; ++i) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Win_sync(win);
    counter[0] = counter[0] + 1;
    MPI_Win_sync(win);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(node);
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  MPI_Win_sync(win);
  CHECK(counter[0] == 200 * size, "counter %d, expected %d", counter[0], 200 * size);
  MPI_Win_unlock(0, win);
  MPI_Barrier(node);

  MPI_Win_free(&win);
  MPI_Comm_free(&node);
  MPI_Finalize();
  return check_exit("rma_shared");
}
