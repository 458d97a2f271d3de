#include "core/progress/progress_thread.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>

#include "core/engine.hpp"
#include "util/backoff.hpp"
#include "util/futex.hpp"
#include "util/log.hpp"

namespace sluice::detail {

namespace {

// The thread's sleep between idle passes: the engine's driver doorbell.
class DoorbellSleeper final : public util::Sleeper {
 public:
  explicit DoorbellSleeper(Engine& e, ProgressThreadStats& s) : engine_(e), stats_(s) {}
  void sleep_for(uint64_t ns) override {
    stats_.doorbell.fetch_add(1, std::memory_order_relaxed);
    engine_.thread_sleep(ns);
  }

 private:
  Engine& engine_;
  ProgressThreadStats& stats_;
};

// Sharing a CPU with a computing rank, the thread must run as soon as a peer wakes it, not
// when the computation's time slice ends: ask EEVDF (Linux 6.12+) for the shortest slice
// (0.1 ms), which lets a waking task with a shorter slice preempt the running one. Older
// kernels refuse (EINVAL) and the thread keeps the default; no privilege is needed.
void request_short_slice() {
  struct {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
  } attr{};
  attr.size = sizeof attr;
  attr.policy = SCHED_OTHER;
  attr.runtime = 100000;  // ns: the kernel's minimum custom slice
  syscall(SYS_sched_setattr, 0, &attr, 0);
}

}  // namespace

std::string cpu_list_text(const std::vector<unsigned>& cpus) {
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out.empty() ? "none" : out;
}

bool parse_cpu_list(const std::string& text, std::vector<unsigned>& out) {
  out.clear();
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    unsigned a = 0, b = 0;
    char dash = 0;
    std::istringstream is(item);
    if (!(is >> a)) return false;
    b = a;
    if (is >> dash) {
      if (dash != '-' || !(is >> b) || b < a) return false;
    }
    if (!is.eof() && is.peek() != EOF) return false;
    for (unsigned c = a; c <= b && c < CPU_SETSIZE; ++c) out.push_back(c);
  }
  return !out.empty();
}

std::vector<unsigned> current_thread_cpus() {
  std::vector<unsigned> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) != 0) return out;
  for (unsigned c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

ProgressThread::ProgressThread(Engine& engine, std::vector<unsigned> cpus, uint64_t spin_ns,
                               uint64_t max_sleep_ns, bool short_slice)
    : engine_(engine),
      cpus_(std::move(cpus)),
      spin_ns_(spin_ns),
      max_sleep_ns_(max_sleep_ns),
      short_slice_(short_slice) {
  thread_ = std::thread([this] { run(); });
  started_.wait(false);
  if (!bind_error_.empty()) util::log(util::LogLevel::warn, "%s", bind_error_.c_str());
}

ProgressThread::~ProgressThread() {
  stop_.store(true);
  // Unpark it (a parked thread sleeps on the work bell with no timeout).
  EngineLock::ring(&engine_.work_bell());
  thread_.join();
}

std::string ProgressThread::stats_text() const {
  std::ostringstream o;
  o << "  progress thread (cpus " << cpus_text_ << "): " << stats_.passes.load() << " passes, "
    << stats_.moved.load() << " moved something, engine busy " << stats_.lock_busy.load()
    << "x, parked " << stats_.parks.load() << "x, doorbell sleeps " << stats_.doorbell.load()
    << "\n";
  return o.str();
}

void ProgressThread::run() {
  if (!cpus_.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (unsigned c : cpus_) CPU_SET(c, &set);
    if (int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set); rc != 0)
      bind_error_ = "cannot bind the progress thread to cpus " + cpu_list_text(cpus_) + ": " +
                    std::strerror(rc);
  }
  if (short_slice_) request_short_slice();
  cpus_text_ = cpu_list_text(current_thread_cpus());
  started_.store(true);
  started_.notify_all();

  EngineLock& lock = engine_lock();
  DoorbellSleeper sleeper(engine_, stats_);
  util::Backoff bo(spin_ns_, max_sleep_ns_, &sleeper, 0);
  uint64_t busy_ns = 0;  // sleep while the application holds the engine (it progresses)
  while (!stop_.load()) {
    bool moved = false, parked = false;
    uint32_t bell = 0;
    if (lock.try_lock()) {
      busy_ns = 0;
      engine_.set_in_thread_pass(true);
      moved = engine_.progress();
      engine_.set_in_thread_pass(false);
      if (!moved) parked = engine_.park_if_idle(bell);
      if (!parked) engine_.thread_pass_done();
      lock.unlock();
      stats_.passes.fetch_add(1, std::memory_order_relaxed);
      if (moved) stats_.moved.fetch_add(1, std::memory_order_relaxed);
    } else {
      // The application is inside the engine, typically blocked in a wait that progresses
      // by itself: back off with plain sleeps (the doorbell would return at once, since the
      // packets it waits for are the application's to take).
      stats_.lock_busy.fetch_add(1, std::memory_order_relaxed);
      busy_ns = busy_ns == 0 ? 10000 : std::min(busy_ns * 2, max_sleep_ns_);
      timespec ts{0, static_cast<long>(busy_ns)};
      nanosleep(&ts, nullptr);
      continue;
    }
    if (parked) {
      // Nothing in flight: sleep until the application posts work (Engine::note_work).
      stats_.parks.fetch_add(1, std::memory_order_relaxed);
      if (!stop_.load())
        util::futex_wait(engine_.work_bell(), bell, nullptr, util::FutexScope::private_);
      bo.reset();
      continue;
    }
    if (moved) {
      bo.reset();
    } else if (short_slice_ && engine_.thread_sleep_wakes()) {
      // On the computation's core every wake-up is two context switches taken from it: wait
      // for the doorbell (a peer's packet) with the longest timeout, not Backoff's 20 us,
      // 40 us, ... ramp, whose timer wake-ups mostly found nothing to do (trace of a 64 KiB
      // Igather loop: several per collective). A lost wake-up costs the timeout, and the
      // application's wait then finishes the work.
      sleeper.sleep_for(max_sleep_ns_);
    } else {
      bo.pause();
    }
  }
}

}  // namespace sluice::detail
