/* The Fortran kind types from C (MPI-3.1 §17.2.5): MPI_Type_create_f90_integer/real/complex give
 * the type of the kind SELECTED_INT_KIND / SELECTED_REAL_KIND would choose (its size, its
 * envelope with the F90 combiner and the arguments), usable in point-to-point and reductions;
 * MPI_Type_match_size finds the type of a class and size; MPI_Status_c2f08 / f082c convert a
 * status to the mpi_f08 form and back. */
/* SLUICE_TEST_RANKS: 1 2 3 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static int type_size(MPI_Datatype t) {
  int s = -1;
  MPI_Type_size(t, &s);
  return s;
}

static void check_envelope(MPI_Datatype t, int combiner, int ni, int a, int b, const char* what) {
  int n_int, n_addr, n_type, comb;
  MPI_Type_get_envelope(t, &n_int, &n_addr, &n_type, &comb);
  CHECK(comb == combiner && n_int == ni && n_addr == 0 && n_type == 0,
        "%s: combiner %d with %d/%d/%d arguments", what, comb, n_int, n_addr, n_type);
  if (comb == combiner && n_int == ni) {
    int ints[2] = {-7, -7};
    MPI_Type_get_contents(t, ni, 0, 0, ints, NULL, NULL);
    CHECK(ints[0] == a && (ni < 2 || ints[1] == b), "%s: contents %d %d", what, ints[0], ints[1]);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* SELECTED_INT_KIND(r): 1 byte up to 2 digits, 2 up to 4, 4 up to 9, 8 up to 18. */
  const int ranges[] = {1, 2, 3, 4, 5, 9, 10, 18};
  const int bytes[] = {1, 1, 2, 2, 4, 4, 8, 8};
  for (int i = 0; i < 8; ++i) {
    MPI_Datatype t;
    CHECK(MPI_Type_create_f90_integer(ranges[i], &t) == MPI_SUCCESS, "r %d", ranges[i]);
    CHECK(type_size(t) == bytes[i], "f90 integer r %d: %d bytes, expected %d", ranges[i],
          type_size(t), bytes[i]);
    check_envelope(t, MPI_COMBINER_F90_INTEGER, 1, ranges[i], 0, "f90 integer");
  }
  /* SELECTED_REAL_KIND(p, r): 4 bytes up to 6 digits and range 37, else 8 up to 15 and 307. */
  MPI_Datatype r4, r8, r8b, c8, c16;
  MPI_Type_create_f90_real(6, 37, &r4);
  MPI_Type_create_f90_real(7, MPI_UNDEFINED, &r8);
  MPI_Type_create_f90_real(MPI_UNDEFINED, 300, &r8b);
  MPI_Type_create_f90_complex(5, MPI_UNDEFINED, &c8);
  MPI_Type_create_f90_complex(15, 307, &c16);
  CHECK(type_size(r4) == 4 && type_size(r8) == 8 && type_size(r8b) == 8, "reals %d %d %d",
        type_size(r4), type_size(r8), type_size(r8b));
  CHECK(type_size(c8) == 8 && type_size(c16) == 16, "complexes %d %d", type_size(c8),
        type_size(c16));
  check_envelope(r8, MPI_COMBINER_F90_REAL, 2, 7, MPI_UNDEFINED, "f90 real");
  check_envelope(c16, MPI_COMBINER_F90_COMPLEX, 2, 15, 307, "f90 complex");

  /* They carry data and reduce as their kinds: a sum of 8-byte integers beyond 2^32, of doubles
     and of complex pairs. */
  MPI_Datatype i8;
  MPI_Type_create_f90_integer(18, &i8);
  int64_t big[2] = {((int64_t)1 << 40) + rank, -rank}, bigsum[2];
  MPI_Allreduce(big, bigsum, 2, i8, MPI_SUM, MPI_COMM_WORLD);
  const int64_t ranksum = (int64_t)size * (size - 1) / 2;
  CHECK(bigsum[0] == ((int64_t)size << 40) + ranksum && bigsum[1] == -ranksum,
        "integer*8 sum %lld %lld", (long long)bigsum[0], (long long)bigsum[1]);
  double d = 0.5 * (rank + 1), dsum = 0;
  MPI_Allreduce(&d, &dsum, 1, r8, MPI_SUM, MPI_COMM_WORLD);
  CHECK(dsum == 0.25 * size * (size + 1), "real*8 sum %g", dsum);
  float z[2] = {1.0f, (float)rank}, zsum[2];
  MPI_Allreduce(z, zsum, 1, c8, MPI_SUM, MPI_COMM_WORLD);
  CHECK(zsum[0] == (float)size && zsum[1] == (float)ranksum, "complex sum %g %g", zsum[0], zsum[1]);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int64_t out[3] = {rank, (int64_t)rank << 33, -1}, in[3] = {0, 0, 0};
  MPI_Sendrecv(out, 3, i8, right, 1, in, 3, i8, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(in[0] == left && in[1] == (int64_t)left << 33 && in[2] == -1, "sendrecv %lld",
        (long long)in[0]);

  /* MPI_Type_match_size: a type of the class and size, the same size. */
  const int classes[] = {MPI_TYPECLASS_INTEGER, MPI_TYPECLASS_INTEGER, MPI_TYPECLASS_INTEGER,
                         MPI_TYPECLASS_INTEGER, MPI_TYPECLASS_REAL,    MPI_TYPECLASS_REAL,
                         MPI_TYPECLASS_COMPLEX, MPI_TYPECLASS_COMPLEX};
  const int sizes[] = {1, 2, 4, 8, 4, 8, 8, 16};
  for (int i = 0; i < 8; ++i) {
    MPI_Datatype t = MPI_DATATYPE_NULL;
    CHECK(MPI_Type_match_size(classes[i], sizes[i], &t) == MPI_SUCCESS && t != MPI_DATATYPE_NULL &&
              type_size(t) == sizes[i],
          "class %d size %d", classes[i], sizes[i]);
  }
  MPI_Datatype m;
  MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m);
  double two[2] = {1.5, (double)rank}, twosum[2];
  MPI_Allreduce(two, twosum, 2, m, MPI_SUM, MPI_COMM_WORLD);
  CHECK(twosum[0] == 1.5 * size && twosum[1] == (double)ranksum, "match_size real 8 sum %g",
        twosum[0]);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &m) != MPI_SUCCESS, "%s",
        "no 3-byte integer");

  /* MPICH 4.0.2 defines these two in libmpichfort only (its mpicc does not link it); with
     -lmpichfort the checks below pass there too. */
#ifdef SLUICE_MPI
  /* MPI_Status_c2f08 / f082c: the public fields and the hidden count survive the round trip. */
  int payload[5] = {1, 2, 3, 4, 5}, recv[5];
  MPI_Status st, back;
  MPI_Sendrecv(payload, 5, MPI_INT, rank, 42, recv, 5, MPI_INT, rank, 42, MPI_COMM_WORLD, &st);
  MPI_F08_status f08;
  CHECK(MPI_Status_c2f08(&st, &f08) == MPI_SUCCESS, "%s", "c2f08");
  CHECK(f08.MPI_SOURCE == rank && f08.MPI_TAG == 42 && f08.MPI_ERROR == st.MPI_ERROR,
        "f08 status %d %d %d", f08.MPI_SOURCE, f08.MPI_TAG, f08.MPI_ERROR);
  memset(&back, 0, sizeof back);
  CHECK(MPI_Status_f082c(&f08, &back) == MPI_SUCCESS, "%s", "f082c");
  int count = -1;
  MPI_Get_count(&back, MPI_INT, &count);
  CHECK(back.MPI_SOURCE == rank && back.MPI_TAG == 42 && count == 5, "back: %d %d count %d",
        back.MPI_SOURCE, back.MPI_TAG, count);
#endif
  MPI_Finalize();
  return check_exit("f90_types");
}
