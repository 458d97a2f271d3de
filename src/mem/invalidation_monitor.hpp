// InvalidationMonitor: tells registration caches that memory they hold was unmapped or
// replaced, from the kernel, with no malloc hooks and no symbol interposition: the
// user-space counterpart of the MMU notifiers of [Open-MX].
//
// A userfaultfd in write-protect mode (UFFD_USER_MODE_ONLY, so no privilege is needed even
// with vm.unprivileged_userfaultfd=0) watches each range a cache registers; nothing is ever
// write-protected, so no access faults. The features UNMAP, REMOVE and REMAP make the kernel
// queue an event for munmap (and mmap MAP_FIXED over, brk shrinking, mremap shrinking),
// madvise(MADV_DONTNEED / MADV_FREE / MADV_REMOVE) and mremap moving the pages. One thread
// reads them and passes each range to the subscribed caches.
//
// Rules, as probed on this kernel (the report of the cache's first landing has the probe):
//  - The thread that unmaps blocks in the kernel until its event has been *read*. So the
//    monitor thread reads first and only then takes locks, and nothing it does between
//    reading and the next read allocates, frees, logs through malloc or unmaps: a free that
//    trims the heap (or a munmap) of a watched range would wait for the monitor itself.
//    Likewise no lock the monitor takes (a cache's mutex, the sink table's) may be held
//    across an operation that can unmap; the caches defer every free to after unlocking.
//  - Because the unmapper is released by the read, not by our processing, a lookup racing
//    with the processing could still return the stale entry: `phase()` is odd from before
//    a read until its events are delivered, and a cache that sees it odd waits for the
//    delivery before it trusts its map (wait_phase_change).
//  - munmap frees the address range *before* it queues its event and blocks: another thread
//    can map the same addresses and look them up while the event is not even queued. Two
//    kernel answers close that window (check()): UFFDIO_WRITEPROTECT (mode 0, a no-op here)
//    fails with EAGAIN while any unmap/remove/remap event of this descriptor is in flight
//    (the kernel's mmap_changing), and with ENOENT on a range that is not watched, i.e. a
//    fresh mapping. A cache checks the buffer before trusting an entry for it.
//  - A range another userfaultfd already watches gives EBUSY: that registration is made
//    uncached (Watch::busy). File-backed private mappings give EINVAL (Watch::unsupported).
//  - Closing the userfaultfd wakes any thread still blocked on an unread event and drops
//    every watch, so a monitor that stops closes its descriptor at once.
//
// The monitor turns itself off under valgrind (which does not model userfaultfd) and in a
// forked child (watches are not inherited without EVENT_FORK). When it is off, or the
// kernel refuses userfaultfd (ENOSYS, EPERM), caches fail closed: every registration is
// made uncached, and the cache says so once.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "util/unique_fd.hpp"

namespace sluice::mem {

// A subscriber: told of every address range whose pages changed. Called on the monitor
// thread; must not allocate, free, log or unmap (see above), only mark and unlink.
class InvalidationSink {
 public:
  virtual void invalidate(uintptr_t start, uintptr_t end) = 0;

 protected:
  ~InvalidationSink() = default;
};

class InvalidationMonitor {
 public:
  enum class Mode {
    uffd,  // userfaultfd events (off where unavailable)
    off,   // no monitor (tests: the caches must turn themselves off)
  };
  enum class Watch {
    ok,
    busy,         // EBUSY: another userfaultfd watches part of the range
    unsupported,  // EINVAL/ENOMEM: not anonymous or shmem memory, or not mapped
    off,          // the monitor does not run
  };

  explicit InvalidationMonitor(Mode mode = Mode::uffd);
  ~InvalidationMonitor();
  InvalidationMonitor(const InvalidationMonitor&) = delete;
  InvalidationMonitor& operator=(const InvalidationMonitor&) = delete;

  // The process-wide monitor every cache shares by default (one descriptor, so caches never
  // make each other's ranges busy). Started on first use and never destroyed.
  static InvalidationMonitor& shared();

  // Whether events are being delivered (false after fork, or if the reader failed).
  bool working() const;
  // One line: what runs, or why nothing does and which fallback applies.
  const std::string& status() const { return status_; }

  // Starts watching the pages of [start, start + length). Idempotent for this monitor.
  Watch watch(uintptr_t start, std::size_t length);

  enum class Check {
    ok,         // watched, no change in flight: entries for it are current once settled
    changing,   // an unmap/remove/remap event is in flight: ask again
    unwatched,  // (part of) the range is a mapping made since: entries for it are stale
    off,
  };
  Check check(uintptr_t start, std::size_t length) const;

  // At most kMaxSinks subscribers; false if the table is full.
  bool subscribe(InvalidationSink* sink);
  // After it returns the sink is not called any more (waits for a delivery in progress).
  void unsubscribe(InvalidationSink* sink);

  // Odd while events read from the kernel are not yet delivered (see above).
  uint64_t phase() const { return phase_.load(std::memory_order_seq_cst); }
  // Returns once phase() differs from `seen` (an odd value read earlier).
  void wait_phase_change(uint64_t seen) const;

  uint64_t events() const { return events_.load(std::memory_order_relaxed); }

  static constexpr std::size_t kMaxSinks = 16;

 private:
  void run();
  void deliver(uintptr_t start, uintptr_t end);

  util::UniqueFd uffd_;
  util::UniqueFd stop_;  // eventfd: wakes the thread to exit
  std::thread thread_;
  std::atomic<bool> running_{false};
  int fork_generation_ = 0;
  std::string status_;
  std::atomic<uint64_t> phase_{0};
  std::atomic<uint64_t> events_{0};
  std::mutex sinks_mu_;  // never held across anything that can unmap
  std::array<InvalidationSink*, kMaxSinks> sinks_{};
};

// Whether this process runs under valgrind (client request, else LD_PRELOAD of its core).
bool running_under_valgrind();

}  // namespace sluice::mem
