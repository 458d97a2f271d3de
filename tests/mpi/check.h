/* Shared helpers for the MPI tests: CHECK(cond, ...) records a failure with a message. */
#ifndef SLUICE_TESTS_MPI_CHECK_H
#define SLUICE_TESTS_MPI_CHECK_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int check_failures = 0;

#define CHECK(cond, ...)                                                                      \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      int check_rank_ = -1;                                                                   \
      MPI_Comm_rank(MPI_COMM_WORLD, &check_rank_);                                            \
      fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", check_rank_, __FILE__, __LINE__, \
              #cond);                                                                         \
      fprintf(stderr, __VA_ARGS__);                                                           \
      fprintf(stderr, "\n");                                                                  \
      ++check_failures;                                                                       \
    }                                                                                         \
  } while (0)

/* Call at the end, after MPI_Finalize: exit status reflects the checks. */
static int check_exit(const char* name) {
  if (check_failures) fprintf(stderr, "%s: %d checks failed\n", name, check_failures);
  return check_failures ? 1 : 0;
}
#endif
