// Waiting policy for a blocked call: poll hot for a while, then yield, then sleep with
// growing intervals. Ranks may outnumber cores (4 ranks on 2 cores is a tested case), and
// a rank that spins forever starves the very peer it is waiting for.
#pragma once

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdint>

#include "util/cpu.hpp"

namespace sluice::util {

// What a long-blocked wait does instead of sleeping blindly: block until a peer signals
// work (e.g. a futex doorbell), at most `ns`.
class Sleeper {
 public:
  virtual void sleep_for(uint64_t ns) = 0;

 protected:
  ~Sleeper() = default;
};

class Backoff {
 public:
  // yield_rounds: sched_yield() calls between spinning and sleeping. Only useful when
  // ranks outnumber cores (the yield hands the core to the peer we wait for); otherwise 0:
  // under EEVDF a yield while any other task is runnable costs a whole time slice (4 ms
  // measured here), far more than a futex wake-up.
  Backoff(uint64_t spin_ns, uint64_t max_sleep_ns, Sleeper* sleeper = nullptr,
          uint32_t yield_rounds = 200)
      : spin_ns_(spin_ns),
        max_sleep_ns_(max_sleep_ns),
        sleeper_(sleeper),
        yield_rounds_(yield_rounds) {}

  // Call after each unsuccessful poll. Cheap while spinning (reads the clock every 64
  // calls only).
  void pause() {
    ++calls_;
    if (phase_ == Phase::spin) {
      // No PAUSE per poll: it costs ~140 cycles on Skylake and, under KVM, a long PAUSE
      // loop triggers pause-loop exits that deschedule the vCPU.
      // A zero spin time (ranks outnumber cores) goes straight to yielding: even the 64
      // polls between clock reads cost a few µs the descheduled peer needs.
      if (spin_ns_ != 0 && (calls_ & 63) != 0) return;
      uint64_t now = now_ns();
      if (start_ == 0) start_ = now;
      if (now - start_ < spin_ns_) return;
      phase_ = Phase::yield;
      calls_ = 0;
    }
    if (phase_ == Phase::yield && calls_ < yield_rounds_) {
      sched_yield();
      // Yielding is enough while the peer is runnable; after a few hundred fruitless
      // yields the wait is long, so stop burning the core.
      if (calls_ < yield_rounds_) return;
    }
    if (phase_ == Phase::yield) {
      phase_ = Phase::sleep;
      sleep_ns_ = 20000;
    }
    if (sleeper_) {
      // Woken by the peer when work arrives; the growing timeout only bounds a missed
      // wake-up (see ShmDriver::wake_if_sleeping).
      sleeper_->sleep_for(sleep_ns_);
      sleep_ns_ = std::min(sleep_ns_ * 2, max_sleep_ns_);
      return;
    }
    timespec ts{0, static_cast<long>(sleep_ns_)};
    nanosleep(&ts, nullptr);
    sleep_ns_ = std::min(sleep_ns_ * 2, max_sleep_ns_);
  }

  void reset() {
    phase_ = Phase::spin;
    calls_ = 0;
    start_ = 0;
  }

 private:
  enum class Phase { spin, yield, sleep };
  uint64_t spin_ns_;
  uint64_t max_sleep_ns_;
  Sleeper* sleeper_;
  uint32_t yield_rounds_;
  Phase phase_ = Phase::spin;
  uint64_t calls_ = 0;
  uint64_t start_ = 0;
  uint64_t sleep_ns_ = 1000;
};

}  // namespace sluice::util
