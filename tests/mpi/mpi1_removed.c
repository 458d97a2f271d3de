/* The MPI-1 functions MPI-3.0 removed, which old code still calls (MPICH 4 still defines
 * them): MPI_Address,
 * MPI_Type_hvector/hindexed/struct, MPI_Type_extent/lb/ub, MPI_Errhandler_create/set/get,
 * each giving what its MPI-2 replacement gives. */
/* SLUICE_TEST_RANKS: 1 2 */
#include <mpi.h>

#include "check.h"

static int handled = 0;
static void on_error(MPI_Comm* comm, int* code, ...) {
  (void)comm, (void)code;
  ++handled;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  double d[8];
  MPI_Aint a1 = 0, a2 = 0;
  MPI_Address(&d[3], &a1);
  MPI_Get_address(&d[3], &a2);
  CHECK(a1 == a2 && a1 != 0, "%s", "MPI_Address");

  /* hvector: 3 blocks of 2 doubles, 4 doubles apart: extent 10 doubles, size 6. */
  MPI_Datatype hv, hi, st;
  MPI_Type_hvector(3, 2, 4 * sizeof(double), MPI_DOUBLE, &hv);
  MPI_Type_commit(&hv);
  int sz = 0;
  MPI_Aint ext = 0, lb = -1, ub = 0;
  MPI_Type_size(hv, &sz);
  MPI_Type_extent(hv, &ext);
  CHECK(sz == 6 * (int)sizeof(double) && ext == 10 * (MPI_Aint)sizeof(double),
        "hvector size %d extent %ld", sz, (long)ext);

  /* hindexed: doubles 1 and 5..6, so lb 1 double, ub 7 doubles. */
  int lens[2] = {1, 2};
  MPI_Aint disps[2] = {1 * sizeof(double), 5 * sizeof(double)};
  MPI_Type_hindexed(2, lens, disps, MPI_DOUBLE, &hi);
  MPI_Type_commit(&hi);
  MPI_Type_lb(hi, &lb);
  MPI_Type_ub(hi, &ub);
  CHECK(lb == (MPI_Aint)sizeof(double) && ub == 7 * (MPI_Aint)sizeof(double), "lb %ld ub %ld",
        (long)lb, (long)ub);

  /* struct {int; double} through MPI_Type_struct, sent around the ring. */
  struct {
    int i;
    double x;
  } out = {rank, 0.5 + rank}, in = {-1, -1};
  int slens[2] = {1, 1};
  MPI_Aint base, sd[2];
  MPI_Address(&out, &base);
  MPI_Address(&out.i, &sd[0]);
  MPI_Address(&out.x, &sd[1]);
  sd[0] -= base, sd[1] -= base;
  MPI_Datatype stypes[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_struct(2, slens, sd, stypes, &st);
  MPI_Type_commit(&st);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Sendrecv(&out, 1, st, right, 0, &in, 1, st, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(in.i == left && in.x == 0.5 + left, "struct %d %g", in.i, in.x);

  /* The MPI-1 error handler calls on a communicator. */
  MPI_Errhandler eh, got;
  MPI_Errhandler_create(on_error, &eh);
  MPI_Errhandler_set(MPI_COMM_WORLD, eh);
  MPI_Errhandler_get(MPI_COMM_WORLD, &got);
  CHECK(got == eh, "%s", "MPI_Errhandler_get");
  MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
  CHECK(handled == 1, "handler ran %d times", handled);
  MPI_Errhandler_set(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&got);
  MPI_Errhandler_free(&eh);

  MPI_Type_free(&hv);
  MPI_Type_free(&hi);
  MPI_Type_free(&st);
  MPI_Finalize();
  return check_exit("mpi1_removed");
}
