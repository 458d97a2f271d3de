/* Counts beyond 2^31: the int forms (MPI_Get_count, MPI_Get_elements, MPI_Type_size) give
   MPI_UNDEFINED when the value does not fit, the MPI_Count forms (_c, _x) the exact value.
   The large counts come from statuses set with MPI_Status_set_elements(_x) and from
   derived datatypes, not from multi-GiB buffers (the suite runs tests in parallel). */
/* SLUICE_TEST_RANKS: 1 2 */
#include "check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Status st;
  int n = 0;
  MPI_Count c = 0;

  /* 2^30 ints: 4 GiB, through the int interface only (as the code before the fix). */
  MPI_Status_set_elements(&st, MPI_INT, 1 << 30);
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK(n == 1 << 30, "count of 2^30 ints: %d", n);
  MPI_Get_count(&st, MPI_BYTE, &n);
  CHECK(n == MPI_UNDEFINED, "count of 2^32 bytes: %d, want MPI_UNDEFINED", n);
  MPI_Get_count(&st, MPI_SHORT, &n);
  CHECK(n == MPI_UNDEFINED, "count of 2^31 shorts: %d, want MPI_UNDEFINED", n);
  MPI_Get_elements(&st, MPI_BYTE, &n);
  CHECK(n == MPI_UNDEFINED, "elements of 2^32 bytes: %d, want MPI_UNDEFINED", n);
  MPI_Datatype mib; /* 1 MiB of ints */
  MPI_Type_contiguous(1 << 18, MPI_INT, &mib);
  MPI_Type_commit(&mib);
  MPI_Get_count(&st, mib, &n);
  CHECK(n == 4096, "count of 4 GiB in MiB: %d", n);
  MPI_Get_elements(&st, mib, &n);
  CHECK(n == 1 << 30, "elements of 4 GiB in MiB of ints: %d", n);

  /* Exactly 2^31 - 1 and 2^31 bytes: the edge of int. */
  MPI_Status_set_elements_x(&st, MPI_BYTE, (MPI_Count)2147483647);
  MPI_Get_count(&st, MPI_BYTE, &n);
  CHECK(n == 2147483647, "count of 2^31-1 bytes: %d", n);
  MPI_Status_set_elements_x(&st, MPI_BYTE, (MPI_Count)1 << 31);
  MPI_Get_count(&st, MPI_BYTE, &n);
  CHECK(n == MPI_UNDEFINED, "count of 2^31 bytes: %d, want MPI_UNDEFINED", n);
  MPI_Get_count_c(&st, MPI_BYTE, &c);
  CHECK(c == (MPI_Count)1 << 31, "count_c of 2^31 bytes: %lld", (long long)c);

  /* 3 GiB: exact in the MPI_Count forms. */
  const MPI_Count three = (MPI_Count)3 << 30;
  MPI_Status_set_elements_x(&st, MPI_BYTE, three);
  MPI_Get_count_c(&st, MPI_BYTE, &c);
  CHECK(c == three, "count_c: %lld", (long long)c);
  MPI_Get_elements_x(&st, MPI_BYTE, &c);
  CHECK(c == three, "elements_x: %lld", (long long)c);
  MPI_Get_elements_c(&st, MPI_BYTE, &c);
  CHECK(c == three, "elements_c: %lld", (long long)c);
  MPI_Get_count(&st, MPI_INT, &n);
  CHECK(n == 3 << 28, "count of 3 GiB in ints: %d", n);
  MPI_Get_count(&st, MPI_BYTE, &n);
  CHECK(n == MPI_UNDEFINED, "count of 3 GiB bytes: %d, want MPI_UNDEFINED", n);
  MPI_Get_count_c(&st, mib, &c);
  CHECK(c == 3072, "count_c in MiB: %lld", (long long)c);
  MPI_Get_count_c(&st, MPI_DOUBLE, &c);
  CHECK(c == three / 8, "count_c in doubles: %lld", (long long)c);
  /* A partial element stays MPI_UNDEFINED in both forms. */
  MPI_Status_set_elements_x(&st, MPI_BYTE, three + 1);
  MPI_Get_count_c(&st, MPI_INT, &c);
  CHECK(c == MPI_UNDEFINED, "count_c of a partial int: %lld", (long long)c);

  /* Datatype sizes beyond int. */
  MPI_Datatype big; /* 4 GiB */
  MPI_Type_contiguous(4096, mib, &big);
  MPI_Type_commit(&big);
  MPI_Type_size(big, &n);
  CHECK(n == MPI_UNDEFINED, "Type_size of 4 GiB: %d, want MPI_UNDEFINED", n);
  MPI_Type_size_x(big, &c);
  CHECK(c == (MPI_Count)1 << 32, "Type_size_x: %lld", (long long)c);
  MPI_Type_size_c(big, &c);
  CHECK(c == (MPI_Count)1 << 32, "Type_size_c: %lld", (long long)c);
  MPI_Count lb = -1, extent = 0;
  MPI_Type_get_extent_c(big, &lb, &extent);
  CHECK(lb == 0 && extent == (MPI_Count)1 << 32, "extent_c: %lld %lld", (long long)lb,
        (long long)extent);
  MPI_Type_get_true_extent_c(big, &lb, &extent);
  CHECK(lb == 0 && extent == (MPI_Count)1 << 32, "true_extent_c: %lld %lld", (long long)lb,
        (long long)extent);
  MPI_Pack_size_c(3, big, MPI_COMM_WORLD, &c);
  CHECK(c >= (MPI_Count)3 << 32, "Pack_size_c: %lld", (long long)c);

  /* A real message: the counts of a received status in both forms. */
  if (size > 1 && rank < 2) {
    int data[5] = {1, 2, 3, 4, 5};
    if (rank == 0) {
      MPI_Send(data, 5, MPI_INT, 1, 7, MPI_COMM_WORLD);
    } else {
      MPI_Recv(data, 5, MPI_INT, 0, 7, MPI_COMM_WORLD, &st);
      MPI_Get_count(&st, MPI_INT, &n);
      MPI_Get_count_c(&st, MPI_INT, &c);
      CHECK(n == 5 && c == 5, "received count %d / %lld", n, (long long)c);
      MPI_Get_count_c(&st, MPI_BYTE, &c);
      CHECK(c == 5 * (MPI_Count)sizeof(int), "received bytes %lld", (long long)c);
    }
  }

  MPI_Type_free(&big);
  MPI_Type_free(&mib);
  MPI_Finalize();
  return check_exit("count_large");
}
