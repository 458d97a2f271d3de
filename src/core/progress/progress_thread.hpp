// The progress thread: drives Engine::progress() — every driver, the outbound
// queues and the progress hooks (collective schedules) — while the application computes.
//
// Locking: the thread try-locks the engine lock around one progress pass and never waits
// for it, so an application call is never stalled behind the thread for more than one pass.
// Idle: after a pass that moved nothing it spins briefly, then sleeps in the driver's
// doorbell (woken by a peer's packet); when the engine has no work in flight at all it
// parks on a futex that the application rings when it posts work (Engine::note_work), so
// an idle thread costs no CPU.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace sluice::detail {

class Engine;

struct ProgressThreadStats {
  std::atomic<uint64_t> passes{0};     // progress passes it ran
  std::atomic<uint64_t> moved{0};      // ... that moved something
  std::atomic<uint64_t> lock_busy{0};  // times the application held the engine
  std::atomic<uint64_t> parks{0};      // times it parked (no work in flight)
  std::atomic<uint64_t> doorbell{0};   // sleeps in the driver's doorbell
};

class ProgressThread {
 public:
  // Starts the thread, bound to the given CPUs (OS indices; empty: not bound). Returns
  // once the thread runs and has applied its binding. spin_ns: polling before a doorbell
  // sleep; short_slice: it shares a CPU with the computation (see request_short_slice).
  ProgressThread(Engine& engine, std::vector<unsigned> cpus, uint64_t spin_ns,
                 uint64_t max_sleep_ns, bool short_slice);
  ~ProgressThread();  // stops and joins
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

  // The CPUs the thread runs on, read back from the kernel after binding ("0-1", "3").
  const std::string& cpus_text() const { return cpus_text_; }
  const ProgressThreadStats& stats() const { return stats_; }
  std::string stats_text() const;

 private:
  void run();

  Engine& engine_;
  std::vector<unsigned> cpus_;
  uint64_t spin_ns_;
  uint64_t max_sleep_ns_;
  bool short_slice_;
  std::string cpus_text_;
  std::string bind_error_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> started_{false};
  ProgressThreadStats stats_;
  std::thread thread_;
};

// "0-3,6" for a set of CPUs (OS indices); the inverse parses such a list (false if bad).
std::string cpu_list_text(const std::vector<unsigned>& cpus);
bool parse_cpu_list(const std::string& text, std::vector<unsigned>& out);
// The CPUs the calling thread may run on.
std::vector<unsigned> current_thread_cpus();

}  // namespace sluice::detail
