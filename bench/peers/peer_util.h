/*
 * peer_util.h - helpers shared by the peer benchmark programs (mpi_pingpong.c, mpi_coll.c,
 * mpi_nbc_overlap.c). Header-only so each program still builds from one command line with
 * any MPI's compiler wrapper.
 */
#ifndef SLUICE_BENCH_PEER_UTIL_H
#define SLUICE_BENCH_PEER_UTIL_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

/* "65536", "64K", "4M", "1G", also "64KiB"/"64KB" (binary multiples). 0 on success. */
static inline int parse_size(const char* s, size_t* out) {
  char* end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s || errno != 0 || *s == '-') return -1;
  unsigned long long mult = 1;
  if (*end == 'k' || *end == 'K') {
    mult = 1ULL << 10;
    ++end;
  } else if (*end == 'm' || *end == 'M') {
    mult = 1ULL << 20;
    ++end;
  } else if (*end == 'g' || *end == 'G') {
    mult = 1ULL << 30;
    ++end;
  }
  if (*end == 'i' && mult > 1) ++end;
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0') return -1;
  *out = (size_t)(v * mult);
  return 0;
}

/* qsort comparator for doubles (medians). */
static inline int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

#endif
