// CHECK for multi-process test programs: on failure, print the rank, place and condition
// and exit non-zero, which makes sluicerun end the job and report the failing rank.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace sluice::test {
inline int g_rank = -1;  // set once the Session exists
}  // namespace sluice::test

#define CHECK(cond, ...)                                                                   \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "rank %d: CHECK failed at %s:%d: %s: ", ::sluice::test::g_rank, \
                   __FILE__, __LINE__, #cond);                                             \
      std::fprintf(stderr, __VA_ARGS__);                                                   \
      std::fprintf(stderr, "\n");                                                          \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)
