// memcpy for the few bytes of a small message's header and payload, inline.
//
// A call to libc's memcpy with a length unknown at compile time costs a call, its size
// dispatch and a return: more than the copy itself for the 8-64 bytes of a message-rate
// message. Up to 64 bytes this copies with overlapping 8-byte (or 4-byte, 1-byte) moves;
// beyond that it is memcpy.
#pragma once

#include <cstddef>
#include <cstring>

namespace sluice::util {

inline void copy_small(void* dst, const void* src, std::size_t n) {
  auto* d = static_cast<std::byte*>(dst);
  const auto* s = static_cast<const std::byte*>(src);
  if (n > 64) [[unlikely]] {
    std::memcpy(d, s, n);
  } else if (n >= 8) {
    // Whole words, then the last word again (overlapping whatever the loop left).
    for (std::size_t i = 0; i + 8 < n; i += 8) std::memcpy(d + i, s + i, 8);
    std::memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(d, s, 4);
    std::memcpy(d + n - 4, s + n - 4, 4);
  } else {
    for (std::size_t i = 0; i < n; ++i) d[i] = s[i];
  }
}

}  // namespace sluice::util
