/* Dynamic windows with more regions than fit in the control block (200 per rank, some
   detached and attached again in between), memory attached after an origin last read the
   target's directory (the origin learns of it by a message, as MPICH's
   win_dynamic_rma_flush_get does), and MPI_Win_get_info's hints: the standard's defaults,
   the creator's and MPI_Win_set_info's keys. Every get and put is checked. */
/* SLUICE_TEST_RANKS: 2 3 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define NREG 200
#define REG_INTS 16

static int value(int owner, int reg, int i) {
  return owner * 100000 + reg * 100 + i;
}

static void expect_info(MPI_Win win, const char* key, const char* want) {
  MPI_Info used;
  char buf[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  MPI_Win_get_info(win, &used);
  MPI_Info_get(used, key, MPI_MAX_INFO_VAL, buf, &flag);
  CHECK(flag, "hint %s missing", key);
  if (flag) CHECK(strcmp(buf, want) == 0, "hint %s is \"%s\", not \"%s\"", key, buf, want);
  MPI_Info_free(&used);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  MPI_Win win;
  MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  int* regs[NREG];
  MPI_Aint addrs[NREG];
  for (int r = 0; r < NREG; ++r) {
    regs[r] = malloc(REG_INTS * sizeof(int));
    for (int i = 0; i < REG_INTS; ++i) regs[r][i] = value(rank, r, i);
    MPI_Win_attach(win, regs[r], REG_INTS * sizeof(int));
  }
  /* Detach every third and attach it again: slots are reused, the directory stays right. */
  for (int r = 0; r < NREG; r += 3) MPI_Win_detach(win, regs[r]);
  for (int r = 0; r < NREG; r += 3) MPI_Win_attach(win, regs[r], REG_INTS * sizeof(int));
  for (int r = 0; r < NREG; ++r) MPI_Get_address(regs[r], &addrs[r]);
  MPI_Aint theirs[NREG];
  MPI_Sendrecv(addrs, NREG, MPI_AINT, left, 0, theirs, NREG, MPI_AINT, right, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Every region of the right neighbour: get, check, put a new value. */
  MPI_Win_lock_all(0, win);
  int got[REG_INTS];
  for (int r = 0; r < NREG; ++r) {
    MPI_Get(got, REG_INTS, MPI_INT, right, theirs[r], REG_INTS, MPI_INT, win);
    MPI_Win_flush(right, win);
    for (int i = 0; i < REG_INTS; ++i)
      if (got[i] != value(right, r, i)) {
        CHECK(0, "region %d of rank %d: int %d is %d, not %d", r, right, i, got[i],
              value(right, r, i));
        break;
      }
    const int mark = -r - 1;
    MPI_Put(&mark, 1, MPI_INT, right, theirs[r], 1, MPI_INT, win);
  }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int r = 0; r < NREG; ++r) CHECK(regs[r][0] == -r - 1, "region %d: put not seen", r);

  /* Attach after the origin read the directory: the origin is inside a lock_all epoch and
     has used the directory; it learns of the new memory by a message only. */
  int* late = malloc(REG_INTS * sizeof(int));
  for (int i = 0; i < REG_INTS; ++i) late[i] = value(rank, 999, i);
  MPI_Win_lock_all(0, win);
  MPI_Get(got, 1, MPI_INT, right, theirs[1], 1, MPI_INT, win);
  MPI_Win_flush(right, win);
  MPI_Win_attach(win, late, REG_INTS * sizeof(int));
  MPI_Aint late_addr, their_late;
  MPI_Get_address(late, &late_addr);
  MPI_Sendrecv(&late_addr, 1, MPI_AINT, left, 1, &their_late, 1, MPI_AINT, right, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Get(got, REG_INTS, MPI_INT, right, their_late, REG_INTS, MPI_INT, win);
  MPI_Win_flush(right, win);
  for (int i = 0; i < REG_INTS; ++i)
    if (got[i] != value(right, 999, i)) {
      CHECK(0, "late region of rank %d: int %d is %d, not %d", right, i, got[i],
            value(right, 999, i));
      break;
    }
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Hints: the defaults, then a set one. */
  expect_info(win, "accumulate_ordering", "rar,raw,war,waw");
  expect_info(win, "accumulate_ops", "same_op_no_op");
  expect_info(win, "no_locks", "false");
  MPI_Info in;
  MPI_Info_create(&in);
  MPI_Info_set(in, "accumulate_ordering", "none");
  MPI_Win_set_info(win, in);
  MPI_Info_free(&in);
  expect_info(win, "accumulate_ordering", "none");

  MPI_Win_detach(win, late);
  for (int r = 0; r < NREG; ++r) MPI_Win_detach(win, regs[r]);
  MPI_Win_free(&win);

  /* A hint given at creation. */
  MPI_Info_create(&in);
  MPI_Info_set(in, "no_locks", "true");
  int* base = NULL;
  MPI_Win_allocate(sizeof(int), sizeof(int), in, MPI_COMM_WORLD, &base, &win);
  MPI_Info_free(&in);
  expect_info(win, "no_locks", "true");
  expect_info(win, "accumulate_ops", "same_op_no_op");
  MPI_Win_free(&win);

  free(late);
  for (int r = 0; r < NREG; ++r) free(regs[r]);
  MPI_Finalize();
  return check_exit("rma_dynamic_many");
}
