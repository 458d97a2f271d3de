// futex(2) on a 32-bit atomic word: the one wrapper for the shm doorbells (shared between
// processes) and the progress thread's work bell (private to the process).
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <ctime>

namespace sluice::util {

// `shared` when the word lives in memory other processes map (a shm segment); `private_`
// otherwise, which lets the kernel skip the shared-mapping lookup.
enum class FutexScope { private_, shared };

namespace futex_detail {
inline int op(int base, FutexScope scope) {
  return scope == FutexScope::private_ ? (base | FUTEX_PRIVATE_FLAG) : base;
}
}  // namespace futex_detail

// Sleeps while `word` holds `expected`, at most `timeout` (nullptr: until woken). Returns
// at once when the word differs; spurious returns happen, so callers re-check their state.
inline void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected,
                       const timespec* timeout, FutexScope scope) {
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), futex_detail::op(FUTEX_WAIT, scope),
          expected, timeout, nullptr, 0);
}

// Wakes up to `waiters` threads sleeping on `word`.
inline void futex_wake(std::atomic<std::uint32_t>& word, int waiters, FutexScope scope) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), futex_detail::op(FUTEX_WAKE, scope),
          waiters, nullptr, nullptr, 0);
}

}  // namespace sluice::util
