/* Counts beyond INT_MAX for real: a message of 2 GiB + 1 MiB (about 2.1 GB per rank, 4.3 GB in
 * all) moved by
 *   - MPI_Send_c / MPI_Recv_c with an MPI_BYTE count above INT_MAX, MPI_Get_count_c exact and
 *     MPI_Get_count MPI_UNDEFINED;
 *   - MPI_Isend_c / MPI_Irecv_c with an MPI_UINT64_T count, into a receive buffer shifted by one
 *     word;
 *   - MPI_Send / MPI_Recv with an int count of a 1 MiB contiguous type (count x size > INT_MAX);
 *   - MPI_Bcast_c from rank 1;
 * every word of every transfer checked. Ordinary sizes: large_count.c. */
/* SLUICE_TEST_RANKS: 2 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const MPI_Count kBytes = (MPI_Count)2147483648LL + 1048576; /* 2 GiB + 1 MiB */

static uint64_t word(uint64_t i, uint64_t seed) {
  return (i + seed) * 0x9E3779B97F4A7C15ULL ^ seed;
}

static void fill(uint64_t* w, MPI_Count n, uint64_t seed) {
  for (MPI_Count i = 0; i < n; ++i) w[i] = word((uint64_t)i, seed);
}

/* Number of words that differ from the pattern (the first bad index in *first). */
static MPI_Count verify(const uint64_t* w, MPI_Count n, uint64_t seed, MPI_Count* first) {
  MPI_Count bad = 0;
  *first = -1;
  for (MPI_Count i = 0; i < n; ++i)
    if (w[i] != word((uint64_t)i, seed)) {
      if (!bad) *first = i;
      ++bad;
    }
  return bad;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "large_count_huge: run with 2 ranks\n");
    MPI_Finalize();
    return 1;
  }
  const MPI_Count words = kBytes / 8;
  /* One spare word: the shifted receive below. */
  uint64_t* buf = malloc((size_t)(kBytes + 8));
  if (!buf) {
    fprintf(stderr, "large_count_huge: cannot allocate %lld bytes\n", (long long)kBytes + 8);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Status st;
  MPI_Count count, first;

  /* 1. MPI_BYTE count above INT_MAX. */
  if (rank == 0) {
    fill(buf, words, 1);
    CHECK(MPI_Send_c(buf, kBytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD) == MPI_SUCCESS, "%s", "send_c");
  } else {
    memset(buf, 0, (size_t)kBytes);
    CHECK(MPI_Recv_c(buf, kBytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st) == MPI_SUCCESS, "%s",
          "recv_c");
    MPI_Get_count_c(&st, MPI_BYTE, &count);
    CHECK(count == kBytes, "get_count_c %lld", (long long)count);
    int small = 0;
    MPI_Get_count(&st, MPI_BYTE, &small);
    CHECK(small == MPI_UNDEFINED, "get_count gave %d", small);
    const MPI_Count bad = verify(buf, words, 1, &first);
    CHECK(bad == 0, "send_c/recv_c: %lld bad words, first at %lld", (long long)bad,
          (long long)first);
  }

  /* 2. Nonblocking, MPI_UINT64_T count, other direction, into buf + 1. */
  const MPI_Count n2 = words - 1;
  MPI_Request r;
  if (rank == 1) {
    fill(buf, n2, 2);
    MPI_Isend_c(buf, n2, MPI_UINT64_T, 0, 2, MPI_COMM_WORLD, &r);
  } else {
    buf[0] = 12345;
    MPI_Irecv_c(buf + 1, n2, MPI_UINT64_T, 1, 2, MPI_COMM_WORLD, &r);
  }
  MPI_Wait(&r, &st);
  if (rank == 0) {
    MPI_Get_count_c(&st, MPI_UINT64_T, &count);
    CHECK(count == n2, "irecv_c count %lld", (long long)count);
    CHECK(buf[0] == 12345, "irecv_c wrote before its buffer: %llu", (unsigned long long)buf[0]);
    const MPI_Count bad = verify(buf + 1, n2, 2, &first);
    CHECK(bad == 0, "isend_c/irecv_c: %lld bad words, first at %lld", (long long)bad,
          (long long)first);
  }

  /* 3. An int count of a derived type: 2049 elements of 1 MiB. */
  MPI_Datatype mib;
  MPI_Type_contiguous(1 << 20, MPI_BYTE, &mib);
  MPI_Type_commit(&mib);
  const int elements = (int)(kBytes >> 20);
  if (rank == 0) {
    fill(buf, words, 3);
    MPI_Send(buf, elements, mib, 1, 3, MPI_COMM_WORLD);
  } else {
    memset(buf, 0, (size_t)kBytes);
    MPI_Recv(buf, elements, mib, 0, 3, MPI_COMM_WORLD, &st);
    int got = 0;
    MPI_Get_count(&st, mib, &got);
    CHECK(got == elements, "get_count of the 1 MiB type: %d", got);
    MPI_Get_elements_c(&st, mib, &count);
    CHECK(count == kBytes, "get_elements_c %lld", (long long)count);
    const MPI_Count bad = verify(buf, words, 3, &first);
    CHECK(bad == 0, "derived type: %lld bad words, first at %lld", (long long)bad,
          (long long)first);
  }
  MPI_Type_free(&mib);

  /* 4. A collective with a count above INT_MAX. */
  if (rank == 1)
    fill(buf, words, 4);
  else
    memset(buf, 0, (size_t)kBytes);
  CHECK(MPI_Bcast_c(buf, kBytes, MPI_BYTE, 1, MPI_COMM_WORLD) == MPI_SUCCESS, "%s", "bcast_c");
  const MPI_Count bad = verify(buf, words, 4, &first);
  CHECK(bad == 0, "bcast_c: %lld bad words, first at %lld", (long long)bad, (long long)first);

  free(buf);
  MPI_Finalize();
  return check_exit("large_count_huge");
}
