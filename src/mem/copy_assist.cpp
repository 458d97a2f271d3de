#include "mem/copy_assist.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

#include "util/futex.hpp"

namespace sluice::mem {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// After its last chunk the helper polls this long for the next copy, then sleeps.
constexpr uint64_t kSpinNs = 200'000;

}  // namespace

// ---- CopyAssistSlot -------------------------------------------------------------------------

bool CopyAssistSlot::open(std::byte* d, const std::byte* s, uint64_t n, uint64_t chunk_bytes) {
  if (n == 0 || chunk_bytes == 0) return false;
  uint32_t free_slot = 0;
  if (!owner.compare_exchange_strong(free_slot, 1, std::memory_order_acquire)) return false;
  uint64_t c = std::max(chunk_bytes, (n + kMaxChunks - 1) / kMaxChunks);
  c = (c + 63) & ~uint64_t{63};
  const auto count = static_cast<uint32_t>((n + c - 1) / c);
  // Close: a helper's claim with the old generation fails from here on, so the fields below
  // may change under a helper still reading them (it will not use what it read).
  gen = (claim.load(std::memory_order_relaxed) >> 32) + 1;
  if (gen > 0xffffffffu) gen = 1;
  claim.store(gen << 32 | kClosed, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  dst.store(reinterpret_cast<uint64_t>(d), std::memory_order_relaxed);
  src.store(reinterpret_cast<uint64_t>(s), std::memory_order_relaxed);
  len.store(n, std::memory_order_relaxed);
  chunk.store(c, std::memory_order_relaxed);
  nchunks.store(count, std::memory_order_relaxed);
  helped.store(0, std::memory_order_relaxed);
  helped_bytes.store(0, std::memory_order_relaxed);
  mine = 0;
  claim.store(gen << 32 | uint64_t{count} << 16, std::memory_order_release);
  return true;
}

uint64_t CopyAssistSlot::finish() {
  const uint32_t count = nchunks.load(std::memory_order_relaxed);
  const uint64_t c = chunk.load(std::memory_order_relaxed), n = len.load(std::memory_order_relaxed);
  auto* d = reinterpret_cast<std::byte*>(dst.load(std::memory_order_relaxed));
  const auto* s = reinterpret_cast<const std::byte*>(src.load(std::memory_order_relaxed));
  const auto copy_chunk = [&](uint32_t i) {
    const uint64_t at = uint64_t{i} * c;
    std::memcpy(d + at, s + at, std::min(c, n - at));
    ++mine;
  };
  // The front.
  uint64_t cur = claim.load(std::memory_order_acquire);
  for (;;) {
    const auto front = static_cast<uint32_t>(cur & 0xffff);
    if (front >= static_cast<uint32_t>(cur >> 16 & 0xffff)) break;
    if (!claim.compare_exchange_weak(cur, cur + 1, std::memory_order_acq_rel)) continue;
    copy_chunk(front);
    cur = claim.load(std::memory_order_acquire);
  }
  // Then what the helper claimed and has not started, from its low end. (A helper between
  // its claim and publishing it is not seen here: it copies all of that itself.)
  uint64_t h = held.load(std::memory_order_acquire);
  while ((h >> 32) == gen) {
    const auto lo = static_cast<uint32_t>(h & 0xffff);
    if (lo >= static_cast<uint32_t>(h >> 16 & 0xffff)) break;
    if (!held.compare_exchange_weak(h, h + 1, std::memory_order_acq_rel)) continue;
    copy_chunk(lo);
    h = held.load(std::memory_order_acquire);
  }
  // The helper's chunks in progress.
  while (mine + helped.load(std::memory_order_acquire) < count) cpu_relax();
  claim.store(gen << 32 | kClosed, std::memory_order_relaxed);
  const uint64_t by_helper = helped_bytes.load(std::memory_order_relaxed);
  owner.store(0, std::memory_order_release);
  return by_helper;
}

uint64_t CopyAssistSlot::serve() {
  uint64_t done = 0;
  for (;;) {
    uint64_t cur = claim.load(std::memory_order_acquire);
    const uint64_t g = cur >> 32;
    const auto front = static_cast<uint32_t>(cur & 0xffff);
    const auto back = static_cast<uint32_t>(cur >> 16 & 0xffff);
    if (g == 0 || front >= back) return done;
    const uint32_t count = nchunks.load(std::memory_order_relaxed);
    auto* d = reinterpret_cast<std::byte*>(dst.load(std::memory_order_relaxed));
    const auto* s = reinterpret_cast<const std::byte*>(src.load(std::memory_order_relaxed));
    const uint64_t n = len.load(std::memory_order_relaxed),
                   c = chunk.load(std::memory_order_relaxed);
    if (back > count) return done;
    // Half of what is left, at least one chunk. The claim succeeds only if the generation
    // (hence what was read above) still holds.
    const uint32_t k = std::max<uint32_t>(1, (back - front + 1) / 2);
    if (!claim.compare_exchange_weak(cur, cur - (uint64_t{k} << 16), std::memory_order_acq_rel))
      continue;
    held.store(g << 32 | uint64_t{back} << 16 | (back - k), std::memory_order_release);
    // From the top down, while the caller has not taken them from below.
    uint64_t h = held.load(std::memory_order_acquire);
    while ((h >> 32) == g) {
      const auto lo = static_cast<uint32_t>(h & 0xffff);
      const auto hi = static_cast<uint32_t>(h >> 16 & 0xffff);
      if (lo >= hi) break;
      if (!held.compare_exchange_weak(h, h - (uint64_t{1} << 16), std::memory_order_acq_rel))
        continue;
      const uint64_t at = uint64_t{hi - 1} * c;
      const uint64_t m = std::min(c, n - at);
      std::memcpy(d + at, s + at, m);
      done += m;
      helped_bytes.fetch_add(m, std::memory_order_relaxed);
      helped.fetch_add(1, std::memory_order_release);
      h = held.load(std::memory_order_acquire);
    }
  }
}

// ---- CopyHelper -----------------------------------------------------------------------------

std::unique_ptr<CopyHelper> CopyHelper::start() {
  // Another CPU than the ones the caller may run on (it is bound to one when ranks are
  // bound to cores), else any CPU of the caller's set but the one it runs on now.
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) return nullptr;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online < 2) return nullptr;
  cpu_set_t where;
  CPU_ZERO(&where);
  for (int c = 0; c < online && c < CPU_SETSIZE; ++c)
    if (!CPU_ISSET(c, &mine)) {
      CPU_SET(c, &where);
      break;
    }
  if (CPU_COUNT(&where) == 0) {
    if (CPU_COUNT(&mine) < 2) return nullptr;
    where = mine;
    CPU_CLR(sched_getcpu(), &where);
  }
  // The thread starts on its CPU: created on the caller's, it would first wait there for
  // the caller, which is busy copying (measured: up to 5 ms before the first help).
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return nullptr;
  pthread_attr_setaffinity_np(&attr, sizeof where, &where);
  std::unique_ptr<CopyHelper> helper(new CopyHelper);
  const int rc = pthread_create(
      &helper->thread_, &attr,
      [](void* self) -> void* {
        static_cast<CopyHelper*>(self)->run();
        return nullptr;
      },
      helper.get());
  pthread_attr_destroy(&attr);
  if (rc != 0) return nullptr;
  helper->running_ = true;
  return helper;
}

CopyHelper::~CopyHelper() {
  stop_.store(true, std::memory_order_relaxed);
  bell_.fetch_add(1, std::memory_order_release);
  util::futex_wake(bell_, 1, util::FutexScope::private_);
  if (running_) pthread_join(thread_, nullptr);
}

void CopyHelper::run() {
  pthread_setname_np(pthread_self(), "sluice-copy");
  // Asleep until the first copy: started with the first shared window, it would otherwise
  // poll on another rank's CPU while the program may be timing small operations.
  uint64_t last = now_ns() - kSpinNs;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (slot_.posted()) {
      slot_.serve();
      last = now_ns();
      continue;
    }
    if (now_ns() - last < kSpinNs) {
      for (int i = 0; i < 64 && !slot_.posted(); ++i) cpu_relax();
      continue;
    }
    const uint32_t bell = bell_.load(std::memory_order_acquire);
    sleeping_.store(1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!slot_.posted() && !stop_.load(std::memory_order_relaxed)) {
      const timespec timeout{0, 100'000'000};
      util::futex_wait(bell_, bell, &timeout, util::FutexScope::private_);
    }
    sleeping_.store(0, std::memory_order_relaxed);
    // Woken for a copy: poll again for a while. After a timeout with nothing to do (it only
    // bounds a lost wake-up), sleep again at once.
    if (bell_.load(std::memory_order_acquire) != bell || slot_.posted()) last = now_ns();
  }
}

uint64_t CopyHelper::copy(std::byte* dst, const std::byte* src, std::size_t n, std::size_t chunk) {
  if (!slot_.open(dst, src, n, chunk)) {
    std::memcpy(dst, src, n);
    return 0;
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_relaxed)) {
    bell_.fetch_add(1, std::memory_order_release);
    util::futex_wake(bell_, 1, util::FutexScope::private_);
  }
  return slot_.finish();
}

}  // namespace sluice::mem
