// The engine lock: serializes the Engine between the application thread(s) and the
// progress thread. The Engine itself is single-threaded; with a progress thread, every API
// entry (Session calls, collective calls, MPI calls) holds this lock, and the progress
// thread only try-locks it around one progress pass, so it never stalls the application.
//
// Off (no progress thread): lock() is one relaxed load and a branch.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace sluice::detail {

class EngineLock {
 public:
  // Only while no other thread uses the engine (before the progress thread starts, after
  // it stopped). A guard that took the lock still releases it after disable().
  void enable(bool on) { enabled_.store(on, std::memory_order_relaxed); }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }

  // Re-entrant. Returns whether it locked (pass that to unlock()).
  bool lock() {
    if (!enabled()) return false;
    if (owner_.load(std::memory_order_relaxed) == thread_tag()) {
      ++depth_;
      return true;
    }
    // The holder is a progress pass (short) or another API call: spin a little, then let
    // the mutex block (the holder may be descheduled on an oversubscribed host).
    bool got = false;
    for (int i = 0; i < 64 && !got; ++i) got = mutex_.try_lock();
    if (!got) mutex_.lock();
    owner_.store(thread_tag(), std::memory_order_relaxed);
    depth_ = 1;
    return true;
  }
  // For the progress thread: never waits.
  bool try_lock() {
    if (!mutex_.try_lock()) return false;
    owner_.store(thread_tag(), std::memory_order_relaxed);
    depth_ = 1;
    return true;
  }
  void unlock(bool locked = true) {
    if (!locked) return;
    if (--depth_ > 0) return;
    owner_.store(nullptr, std::memory_order_relaxed);
    std::atomic<uint32_t>* bell = ring_;
    ring_ = nullptr;
    mutex_.unlock();
    if (bell) [[unlikely]]
      ring(bell);
  }
  // The owner posted work for a parked progress thread: wake it when the lock is released,
  // not now (it would only find the lock taken).
  void ring_on_unlock(std::atomic<uint32_t>* bell) { ring_ = bell; }
  bool ring_pending() const { return ring_ != nullptr; }
  void cancel_ring() { ring_ = nullptr; }
  static void ring(std::atomic<uint32_t>* bell);
  // Drops every level this thread holds (a blocking wait letting others in); returns how
  // many, for relock().
  int unlock_all() {
    if (owner_.load(std::memory_order_relaxed) != thread_tag()) return 0;
    const int d = depth_;
    depth_ = 1;
    unlock();
    return d;
  }
  void relock(int depth) {
    if (depth == 0) return;
    lock();
    depth_ = depth;
  }

 private:
  static const void* thread_tag() {
    static thread_local char tag;
    return &tag;
  }
  std::atomic<bool> enabled_{false};
  std::atomic<const void*> owner_{nullptr};
  int depth_ = 0;                          // only touched by the owner
  std::atomic<uint32_t>* ring_ = nullptr;  // ... as this
  std::mutex mutex_;
};

// The process's engine lock (it outlives every Engine, so a guard taken before
// MPI_Finalize deleted the engine still releases it). Inline: every API entry takes it,
// and with the progress thread off that must be a load and a branch, not a call.
inline EngineLock& engine_lock() {
  static EngineLock lock;
  return lock;
}

// Holds the engine lock for a scope when the progress thread is on.
class EngineGuard {
 public:
  EngineGuard() : locked_(engine_lock().lock()) {}
  ~EngineGuard() { engine_lock().unlock(locked_); }
  EngineGuard(const EngineGuard&) = delete;
  EngineGuard& operator=(const EngineGuard&) = delete;

 private:
  bool locked_;
};

}  // namespace sluice::detail
