#include "mem/invalidation_monitor.hpp"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define SLUICE_HAVE_VALGRIND_H 1
#endif

namespace sluice::mem {

namespace {

constexpr uintptr_t kPage = 4096;

// Bumped in every forked child: a monitor made before the fork has no thread there and
// its watches were not inherited.
std::atomic<int> g_fork_generation{0};
void on_fork_child() {
  g_fork_generation.fetch_add(1, std::memory_order_relaxed);
}
int fork_generation() {
  static const bool installed = [] {
    pthread_atfork(nullptr, nullptr, on_fork_child);
    return true;
  }();
  (void)installed;
  return g_fork_generation.load(std::memory_order_relaxed);
}

}  // namespace

bool running_under_valgrind() {
#ifdef SLUICE_HAVE_VALGRIND_H
  if (RUNNING_ON_VALGRIND) return true;
#endif
  const char* preload = std::getenv("LD_PRELOAD");
  return preload && (std::strstr(preload, "vgpreload") || std::strstr(preload, "valgrind"));
}

InvalidationMonitor::InvalidationMonitor(Mode mode) {
  fork_generation_ = fork_generation();
  if (mode == Mode::off) {
    status_ = "off (configured): registration caches run uncached";
    return;
  }
  if (running_under_valgrind()) {
    status_ =
        "off under valgrind (it does not model userfaultfd): registration caches run uncached";
    return;
  }
  // User-mode-only: needs no privilege even with vm.unprivileged_userfaultfd=0.
  const int fd =
      static_cast<int>(::syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY));
  if (fd < 0) {
    const int err = errno;
    status_ = std::string("off: userfaultfd unavailable (") + std::strerror(err) +
              (err == EPERM    ? "; vm.unprivileged_userfaultfd=0 and no CAP_SYS_PTRACE"
               : err == ENOSYS ? "; kernel built without it"
                               : "") +
              "): registration caches run uncached";
    return;
  }
  uffd_.reset(fd);
  uffdio_api api{};
  api.api = UFFD_API;
  api.features = UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_REMAP;
  if (::ioctl(uffd_.get(), UFFDIO_API, &api) != 0) {
    status_ = std::string("off: userfaultfd lacks the unmap/remove/remap events (") +
              std::strerror(errno) + "): registration caches run uncached";
    uffd_.reset();
    return;
  }
  stop_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!stop_) {
    status_ = "off: eventfd failed: registration caches run uncached";
    uffd_.reset();
    return;
  }
  running_.store(true, std::memory_order_release);
  thread_ = std::thread([this] { run(); });
  status_ = "userfaultfd (write-protect mode, user-mode only; unmap, remove and remap events)";
}

InvalidationMonitor::~InvalidationMonitor() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(stop_.get(), &one, sizeof one);
    thread_.join();
  }
}

InvalidationMonitor& InvalidationMonitor::shared() {
  // Never destroyed: caches (and the threads blocked on unmaps) may outlive static teardown.
  static InvalidationMonitor* monitor = new InvalidationMonitor(Mode::uffd);
  return *monitor;
}

bool InvalidationMonitor::working() const {
  return running_.load(std::memory_order_acquire) &&
         fork_generation_ == g_fork_generation.load(std::memory_order_relaxed);
}

InvalidationMonitor::Watch InvalidationMonitor::watch(uintptr_t start, std::size_t length) {
  if (!working()) return Watch::off;
  const uintptr_t a = start & ~(kPage - 1);
  const uintptr_t b = (start + length + kPage - 1) & ~(kPage - 1);
  uffdio_register reg{};
  reg.range.start = a;
  reg.range.len = b - a;
  reg.mode = UFFDIO_REGISTER_MODE_WP;
  if (::ioctl(uffd_.get(), UFFDIO_REGISTER, &reg) == 0) return Watch::ok;
  return errno == EBUSY ? Watch::busy : Watch::unsupported;
}

InvalidationMonitor::Check InvalidationMonitor::check(uintptr_t start, std::size_t length) const {
  if (!working()) return Check::off;
  const uintptr_t a = start & ~(kPage - 1);
  const uintptr_t b = (start + length + kPage - 1) & ~(kPage - 1);
  uffdio_writeprotect wp{};
  wp.range.start = a;
  wp.range.len = b - a;
  wp.mode = 0;  // "un-protect": nothing is protected, so it only reports
  if (::ioctl(uffd_.get(), UFFDIO_WRITEPROTECT, &wp) == 0) return Check::ok;
  return errno == EAGAIN ? Check::changing : Check::unwatched;
}

bool InvalidationMonitor::subscribe(InvalidationSink* sink) {
  std::lock_guard lk(sinks_mu_);
  for (InvalidationSink*& s : sinks_)
    if (!s) {
      s = sink;
      return true;
    }
  return false;
}

void InvalidationMonitor::unsubscribe(InvalidationSink* sink) {
  std::lock_guard lk(sinks_mu_);
  for (InvalidationSink*& s : sinks_)
    if (s == sink) s = nullptr;
}

void InvalidationMonitor::wait_phase_change(uint64_t seen) const {
  // The window is one read plus one delivery: short, and rare on any lookup.
  while (phase_.load(std::memory_order_seq_cst) == seen) sched_yield();
}

void InvalidationMonitor::deliver(uintptr_t start, uintptr_t end) {
  for (InvalidationSink* s : sinks_)
    if (s) s->invalidate(start, end);
}

// The monitor thread. Between a read and the next poll nothing here allocates, frees,
// logs or unmaps (see the header): messages land in a stack array.
void InvalidationMonitor::run() {
  constexpr int kBatch = 32;
  uffd_msg msgs[kBatch];
  for (;;) {
    pollfd fds[2] = {{uffd_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents) {
      uint64_t v = 0;  // consumed, so the stop request is a visible handoff (TSan)
      [[maybe_unused]] ssize_t r = ::read(stop_.get(), &v, sizeof v);
      running_.store(false, std::memory_order_release);
      return;  // the destructor closes the descriptor
    }
    if (!(fds[0].revents & POLLIN)) {
      if (fds[0].revents & (POLLERR | POLLHUP | POLLNVAL)) break;
      continue;
    }
    phase_.fetch_add(1, std::memory_order_seq_cst);  // odd: read, not yet delivered
    const ssize_t n = ::read(uffd_.get(), msgs, sizeof msgs);
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      phase_.fetch_add(1, std::memory_order_seq_cst);
      break;
    }
    const int count = n > 0 ? static_cast<int>(n / static_cast<ssize_t>(sizeof(uffd_msg))) : 0;
    {
      std::lock_guard lk(sinks_mu_);
      for (int i = 0; i < count; ++i) {
        const uffd_msg& m = msgs[i];
        switch (m.event) {
          case UFFD_EVENT_UNMAP:
          case UFFD_EVENT_REMOVE:
            deliver(m.arg.remove.start, m.arg.remove.end);
            break;
          case UFFD_EVENT_REMAP:
            deliver(m.arg.remap.from, m.arg.remap.from + m.arg.remap.len);
            break;
          case UFFD_EVENT_PAGEFAULT: {
            // Nothing is write-protected, so none is expected; never leave a thread stuck.
            uffdio_writeprotect wp{};
            wp.range.start = m.arg.pagefault.address & ~(kPage - 1);
            wp.range.len = kPage;
            wp.mode = 0;  // clear protection and wake the faulting thread
            ::ioctl(uffd_.get(), UFFDIO_WRITEPROTECT, &wp);
            break;
          }
          default:
            break;
        }
      }
    }
    events_.fetch_add(static_cast<uint64_t>(count), std::memory_order_relaxed);
    phase_.fetch_add(1, std::memory_order_seq_cst);  // even: delivered
  }
  // The reader failed: caches stop trusting their entries first, then the userfaultfd is
  // released, which wakes every thread still waiting on an unread event and drops every
  // watch. dup2 keeps the descriptor number valid (now /dev/null: every ioctl fails, so
  // lookups go uncached) for threads that may still use it.
  running_.store(false, std::memory_order_release);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd >= 0) {
    ::dup3(null_fd, uffd_.get(), O_CLOEXEC);
    ::close(null_fd);
  }
}

}  // namespace sluice::mem
