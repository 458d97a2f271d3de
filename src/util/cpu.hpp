// Tiny CPU helpers shared by every layer.
#pragma once

#include <time.h>

#include <cstddef>
#include <cstdint>

namespace sluice::util {

inline constexpr std::size_t kCacheLine = 64;

// Tell the core we are spinning (lower power, lets the sibling hyperthread run).
inline void cpu_relax() {
  __builtin_ia32_pause();
}

inline uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace sluice::util
