// Engine progress: the polling pass, sleeping in a driver, progress-thread support.
#include "core/engine.hpp"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "core/progress/progress_thread.hpp"
#include "drivers/loopback.hpp"
#include "drivers/net/net.hpp"
#include "proto/reliable/reliable_channel.hpp"
#include "util/cpu.hpp"
#include "util/futex.hpp"
#include "util/log.hpp"

namespace sluice::detail {

bool Engine::progress() {
  ++stats_.polls;
  int n = 0;
  // The launcher's failure notices: a clock read every 64 passes, a recv every 10 ms.
  if ((stats_.polls & 63) == 0) [[unlikely]] {
    const uint64_t now = drivers::net::monotonic_ns();
    if (now - last_notice_poll_ns_ >= 10'000'000) {
      last_notice_poll_ns_ = now;
      poll_launcher_notices();
    }
  }
  drivers::PacketSink& sink = demux_.entry();
  // drivers_[0] is the loopback, almost always idle: look before calling it.
  if (!loopback_->idle()) [[unlikely]]
    n += loopback_->poll(sink, 64);
  // (This file is built without speculative devirtualization, src/core/CMakeLists.txt: GCC
  // guessed the loopback for these calls, which never are, and paid a compare and spilled
  // registers on every pass.)
  for (std::size_t i = 1; i < drivers_.size(); ++i) n += drivers_[i]->poll(sink, 64);
  if (!dead_pending_.empty()) {
    drain_drivers();
    std::vector<int> dead;
    dead.swap(dead_pending_);
    for (int peer : dead) fail_peer(peer);
    ++n;
  }
  if (p2p_->has_outbound()) n += p2p_->progress_outbound() ? 1 : 0;
  if (!hooks_.empty())
    for (std::size_t i = 0; i < hooks_.size(); ++i) n += hooks_[i]->progress() ? 1 : 0;
  return n > 0;
}

void Engine::sleep_for(uint64_t ns) {
  // A shared-memory doorbell only hears local peers; with other drivers present, a short sleep
  // keeps them polled.
  // A send waiting for room may miss the peer's wake-up if the room appeared just before
  // we went to sleep (the peer only rings sleepers): keep such sleeps short.
  if (p2p_->has_outbound()) ns = std::min<uint64_t>(ns, 50000);
  if (rel_) ns = std::min<uint64_t>(ns, rel_->next_timer_ns());  // don't sleep past an RTO
  if (blocking_driver_ && drivers_.size() == 2 && blocking_driver_->block(ns)) return;
  timespec ts{static_cast<time_t>(ns / 1000000000u), static_cast<long>(ns % 1000000000u)};
  nanosleep(&ts, nullptr);
}

bool Engine::needs_progress() const {
  if (active_sends_ > 0 || active_recvs_ > 0 || p2p_->has_outbound()) return true;
  // An eager send under the reliability layer completes at once, but its packets wait for acks (and
  // may need a retransmission); an arrival may owe a delayed ack: the reliability timers need a
  // pass.
  if (rel_ && !rel_->quiescent()) return true;
  for (const ProgressHook* h : hooks_)
    if (h->busy()) return true;
  return false;
}

bool Engine::network_quiescent() const {
  return !rel_ || rel_->quiescent();
}

bool Engine::park_if_idle(uint32_t& bell) {
  if (needs_progress()) return false;
  for (const ProgressHook* h : hooks_)
    if (h->linger()) return false;
  bell = work_bell_.load(std::memory_order_acquire);
  thread_parked_ = true;
  return true;
}

void Engine::wake_parked_thread() {
  thread_parked_ = false;
  engine_lock().ring_on_unlock(&work_bell_);
}

void Engine::keep_parked_if_idle() {
  if (needs_progress()) return;
  engine_lock().cancel_ring();
  thread_parked_ = true;
}

void EngineLock::ring(std::atomic<uint32_t>* bell) {
  bell->fetch_add(1, std::memory_order_release);
  util::futex_wake(*bell, 1, util::FutexScope::private_);
}

void Engine::thread_pass_done() {
  // Read by thread_sleep() without the lock: when the next reliability timer is due.
  const uint64_t due = rel_ ? rel_->next_timer_ns() : UINT64_MAX;
  thread_timer_due_.store(due == UINT64_MAX ? UINT64_MAX : util::now_ns() + due,
                          std::memory_order_relaxed);
}

bool Engine::thread_sleep_wakes() const {
  if (drivers_.size() != 2) return false;
  return rel_ ? rel_->rails() == 1 && rel_blocker_ != nullptr : blocking_driver_ != nullptr;
}

void Engine::thread_sleep(uint64_t ns) {
  if (rel_) {
    // Wake for the nearest retransmission / delayed-ack / probe deadline, not later.
    const uint64_t due = thread_timer_due_.load(std::memory_order_relaxed);
    if (due != UINT64_MAX) {
      const uint64_t now = util::now_ns();
      if (due <= now) return;
      ns = std::min(ns, due - now);
    }
    // ReliableChannel::block (and a decorator's under it) read engine state: sleep in the
    // one rail the component says may be blocked in without the lock (a ppoll on a fixed fd).
    if (drivers_.size() == 2 && rel_->rails() == 1 && rel_blocker_ && rel_blocker_->block(ns))
      return;
  } else if (blocking_driver_ && drivers_.size() == 2 && blocking_driver_->block(ns)) {
    return;
  }
  timespec ts{static_cast<time_t>(ns / 1000000000u), static_cast<long>(ns % 1000000000u)};
  nanosleep(&ts, nullptr);
}

void Engine::start_progress_thread(int local_ranks) {
  const std::string mode = config_.get_string("PROGRESS_THREAD");
  std::vector<unsigned> cpus;
  const std::string cpu_text = config_.get_string("PROGRESS_CPUS");
  // (A list that does not parse was refused at start-up.)
  if (!cpu_text.empty() && !parse_cpu_list(cpu_text, cpus)) cpus.clear();
  const std::vector<unsigned> mine = current_thread_cpus();
  bool on = mode == "on";
  if (mode == "auto") {
    // A free core for the thread: the launcher's placement gave it CPUs other than the
    // rank's; without a placement, fewer local ranks than CPUs.
    const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    on = !cpus.empty() ? cpus != mine : local_ranks < ncpu;
  }
  if (on) {
    // Sharing a CPU with the rank (or with anyone, on an oversubscribed host), every
    // nanosecond the thread spins is taken from the application's computation: it sleeps at
    // once and relies on the doorbell. On a CPU of its own a short spin costs nothing.
    const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    bool shares = 2L * local_ranks > ncpu || (cpus.empty() && mine.size() == 1);
    for (unsigned c : cpus) shares |= std::find(mine.begin(), mine.end(), c) != mine.end();
    const auto spin = static_cast<uint64_t>(config_.get_seconds("PROGRESS_SPIN") * 1e9);
    engine_lock().enable(true);
    progress_thread_ = std::make_unique<ProgressThread>(*this, progress_stats_, cpus,
                                                        config_.is_set("PROGRESS_SPIN") ? spin
                                                        : shares                        ? 0
                                                                                        : spin,
                                                        max_sleep_ns_, shares);
  }
  if (config_.get_bool("REPORT_BINDINGS")) {
    // Read back from the kernel: what runs where, not what was planned.
    std::printf("rank %d: cpus %s | progress thread: %s\n", rank_, cpu_list_text(mine).c_str(),
                progress_thread_ ? ("cpus " + progress_thread_->cpus_text()).c_str() : "off");
    std::fflush(stdout);
  }
}

}  // namespace sluice::detail
