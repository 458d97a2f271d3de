/* The 16-byte Fortran kinds from C: MPI_REAL16 (gfortran's REAL(16), IEEE binary128, GCC's
 * __float128), MPI_COMPLEX32 (a pair of them) and MPI_INTEGER16 (__int128). Their names and
 * sizes, MPI_Type_match_size and MPI_Type_create_f90_* reaching them, point-to-point of
 * values that a double cannot hold, and reductions computed in binary128 / 128-bit
 * arithmetic. MPICH 4.0.2 defines MPI_INTEGER16 as MPI_DATATYPE_NULL, and its MPI_SUM on
 * MPI_REAL16 gives wrong values here (1.5 + 1.5 is inf, for __float128 and for long double
 * data alike): those checks run under Sluice only. */
/* SLUICE_TEST_RANKS: 1 2 3 4 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static int type_size(MPI_Datatype t) {
  int s = -1;
  MPI_Type_size(t, &s);
  return s;
}

static void check_name(MPI_Datatype t, const char* expected) {
  char name[MPI_MAX_OBJECT_NAME];
  int len = 0;
  MPI_Type_get_name(t, name, &len);
  CHECK(strcmp(name, expected) == 0 && len == (int)strlen(expected), "name %s, expected %s", name,
        expected);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  CHECK(MPI_REAL16 != MPI_DATATYPE_NULL && MPI_COMPLEX32 != MPI_DATATYPE_NULL, "%s",
        "REAL16/COMPLEX32 defined");
  CHECK(type_size(MPI_REAL16) == 16 && type_size(MPI_COMPLEX32) == 32, "sizes %d %d",
        type_size(MPI_REAL16), type_size(MPI_COMPLEX32));
  check_name(MPI_REAL16, "MPI_REAL16");
  check_name(MPI_COMPLEX32, "MPI_COMPLEX32");
  MPI_Datatype m = MPI_DATATYPE_NULL;
  CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 16, &m) == MPI_SUCCESS && type_size(m) == 16, "%s",
        "match_size real 16");
  CHECK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 32, &m) == MPI_SUCCESS && type_size(m) == 32,
        "%s", "match_size complex 32");

  /* 1 + 2^-100 needs binary128's 113-bit significand: a double rounds it to 1. */
  const __float128 tiny = (__float128)1 / ((__float128)((unsigned long long)1 << 50) *
                                           (__float128)((unsigned long long)1 << 50));
  __float128 out[2] = {1 + tiny * (rank + 1), -(__float128)rank}, in[2] = {0, 0};
  MPI_Sendrecv(out, 2, MPI_REAL16, right, 1, in, 2, MPI_REAL16, left, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  CHECK(in[0] == 1 + tiny * (left + 1) && in[1] == -(__float128)left, "%s", "real16 sendrecv");
  __float128 zout[2] = {tiny * rank, 2}, zin[2] = {0, 0};
  MPI_Sendrecv(zout, 1, MPI_COMPLEX32, right, 2, zin, 1, MPI_COMPLEX32, left, 2, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  CHECK(zin[0] == tiny * left && zin[1] == 2, "%s", "complex32 sendrecv");

#ifdef SLUICE_MPI
  /* The sum of 1 + (r+1) 2^-100 over the ranks keeps the small parts exactly. */
  __float128 sum = 0, max = 0;
  MPI_Allreduce(&out[0], &sum, 1, MPI_REAL16, MPI_SUM, MPI_COMM_WORLD);
  CHECK(sum == size + tiny * (size * (size + 1) / 2), "%s", "real16 sum");
  MPI_Allreduce(&out[0], &max, 1, MPI_REAL16, MPI_MAX, MPI_COMM_WORLD);
  CHECK(max == 1 + tiny * size, "%s", "real16 max");
  /* The complex product of 1 (even ranks) and i (odd ranks): i^k, k the number of odd ranks. */
  __float128 z[2] = {rank % 2 ? 0 : 1, rank % 2 ? 1 : 0}, zprod[2] = {0, 0};
  MPI_Allreduce(z, zprod, 1, MPI_COMPLEX32, MPI_PROD, MPI_COMM_WORLD);
  const int k = size / 2;
  const __float128 re = k % 4 == 0 ? 1 : k % 4 == 2 ? -1 : 0;
  const __float128 im = k % 4 == 1 ? 1 : k % 4 == 3 ? -1 : 0;
  CHECK(zprod[0] == re && zprod[1] == im, "%s", "complex32 prod");

  CHECK(MPI_INTEGER16 != MPI_DATATYPE_NULL && type_size(MPI_INTEGER16) == 16, "%s",
        "INTEGER16 defined, 16 bytes");
  check_name(MPI_INTEGER16, "MPI_INTEGER16");
  CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 16, &m) == MPI_SUCCESS && m == MPI_INTEGER16,
        "%s", "match_size integer 16");
  MPI_Datatype t;
  CHECK(MPI_Type_create_f90_integer(30, &t) == MPI_SUCCESS && type_size(t) == 16, "%s",
        "f90 integer r 30");
  CHECK(MPI_Type_create_f90_real(30, MPI_UNDEFINED, &t) == MPI_SUCCESS && type_size(t) == 16, "%s",
        "f90 real p 30");
  CHECK(MPI_Type_create_f90_complex(33, 4931, &t) == MPI_SUCCESS && type_size(t) == 32, "%s",
        "f90 complex p 33");
  /* REAL(10), gfortran's x87 kind, is C's long double. */
  CHECK(MPI_Type_create_f90_real(18, MPI_UNDEFINED, &t) == MPI_SUCCESS && type_size(t) == 16, "%s",
        "f90 real p 18");
  long double ld = 1.0L + (long double)rank / 1024, ldsum = 0;
  MPI_Allreduce(&ld, &ldsum, 1, t, MPI_SUM, MPI_COMM_WORLD);
  CHECK(ldsum == size + (long double)(size * (size - 1) / 2) / 1024, "real(10) sum %Lg", ldsum);

  /* 2^100 + rank: beyond 64 bits. */
  const __int128 big = (__int128)1 << 100;
  __int128 iv = big + rank, isum = 0, imax = 0, iand = 0;
  MPI_Allreduce(&iv, &isum, 1, MPI_INTEGER16, MPI_SUM, MPI_COMM_WORLD);
  CHECK(isum == big * size + size * (size - 1) / 2, "%s", "integer16 sum");
  MPI_Allreduce(&iv, &imax, 1, MPI_INTEGER16, MPI_MAX, MPI_COMM_WORLD);
  CHECK(imax == big + size - 1, "%s", "integer16 max");
  MPI_Allreduce(&iv, &iand, 1, MPI_INTEGER16, MPI_BAND, MPI_COMM_WORLD);
  CHECK(iand == big, "%s", "integer16 band"); /* rank 0 contributes 2^100 alone */
  __int128 iout = -big - rank, iin = 0;
  MPI_Sendrecv(&iout, 1, MPI_INTEGER16, right, 3, &iin, 1, MPI_INTEGER16, left, 3, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  CHECK(iin == -big - left, "%s", "integer16 sendrecv");
#endif
  MPI_Finalize();
  return check_exit("quad_types");
}
