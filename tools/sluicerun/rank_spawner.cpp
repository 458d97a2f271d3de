#include "rank_spawner.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "coll/placement.hpp"

namespace sluicerun {

RankSpawner::RankSpawner(const Options& options, EventLoop& loop) : options_(options), loop_(loop) {
  children_.reserve(options_.nranks);
  for (int r = 0; r < options_.nranks; ++r)
    children_.emplace_back(options_.tag_output ? "[" + std::to_string(r) + "] " : "");
}

RankSpawner::~RankSpawner() {
  // Never leave ranks behind.
  for (Child& child : children_) {
    if (child.pid > 0 && !child.reaped) ::kill(child.pid, SIGKILL);
    stop_stdin_copier(child);
  }
  if (signals_taken_) {
    ::sigaction(SIGPIPE, &original_sigpipe_action_, nullptr);
    ::sigprocmask(SIG_SETMASK, &original_signal_mask_, nullptr);
  }
}

// ---- setup ----

bool RankSpawner::set_up(std::string& error) {
  // Signals arrive through a signalfd, so the loop handles them like any other event.
  sigset_t handled;
  sigemptyset(&handled);
  for (int signo : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2})
    sigaddset(&handled, signo);
  sigprocmask(SIG_BLOCK, &handled, &original_signal_mask_);
  // A reader that went away must not kill the launcher; ranks get the default back.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &original_sigpipe_action_);
  signals_taken_ = true;
  signal_fd_.reset(::signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!signal_fd_.valid()) {
    error = std::string("signalfd: ") + std::strerror(errno);
    return false;
  }
  loop_.watch(signal_fd_.get(), EPOLLIN, event_tag(Source::signals, 0));

  if (options_.bind != BindPolicy::none) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &allowed)) bind_cpus_.push_back(cpu);
    if (bind_cpus_.empty() && options_.bind == BindPolicy::core)
      report("warning: cannot read the CPU set; --bind core ignored");
    // Unbound ranks that poll may start on one core and hand it back and forth for a
    // whole time slice per message; with a core each, binding is always better.
    if (options_.bind == BindPolicy::automatic &&
        bind_cpus_.size() < static_cast<std::size_t>(options_.nranks))
      bind_cpus_.clear();
  }
  if (options_.bind == BindPolicy::numa || options_.bind == BindPolicy::scatter) {
    bind_cpus_.clear();
    if (!plan_placement(error)) return false;
  }
  return true;
}

// [MPC-Threads]' placement (src/coll/placement.hpp) over the CPUs we may use: each rank's
// CPU set, applied between fork and exec, and its progress thread's CPUs, passed as
// SLUICE_PROGRESS_CPUS (the rank binds its thread itself).
bool RankSpawner::plan_placement(std::string& error) {
  try {
    sluice::coll::Topology topology = sluice::coll::Topology::this_machine();
    topology.restrict_to_process_binding();
    const sluice::coll::Placement placement =
        sluice::coll::place(topology, options_.nranks,
                            options_.bind == BindPolicy::numa ? sluice::coll::Policy::numa
                                                              : sluice::coll::Policy::bind);
    for (int r = 0; r < options_.nranks; ++r) {
      cpu_set_t set;
      CPU_ZERO(&set);
      for (unsigned pu : topology.core_pus(placement.rank_core[r])) CPU_SET(pu, &set);
      rank_cpu_sets_.push_back(set);
      std::string text;
      for (unsigned pu : topology.core_pus(placement.thread_core[r]))
        text += (text.empty() ? "" : ",") + std::to_string(pu);
      thread_cpus_.push_back(text);
    }
    if (options_.report_bindings)
      std::fprintf(stderr, "sluicerun: placement %s (planned):\n%s",
                   std::string(sluice::coll::policy_name(placement.policy)).c_str(),
                   sluice::coll::describe(topology, placement).c_str());
    return true;
  } catch (const std::exception& e) {
    error = std::string("--bind: cannot place the ranks: ") + e.what();
    return false;
  }
}

std::optional<std::string> RankSpawner::progress_cpus(int rank) const {
  if (thread_cpus_.empty()) return std::nullopt;
  return thread_cpus_[rank];
}

// ---- starting ranks ----

std::optional<SpawnFailure> RankSpawner::start(int r, std::vector<std::string> argv_storage,
                                               std::vector<std::string> env_storage,
                                               const std::string& stdin_text) {
  Child& child = children_[r];
  std::vector<char*> envp;
  for (std::string& entry : env_storage) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (std::string& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);

  int out_pipe[2], err_pipe[2], exec_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(exec_pipe, O_CLOEXEC) != 0)
    return SpawnFailure{startup_failure_status, std::string("cannot create pipes: ") +
                                                    std::strerror(errno) + "; terminating the job"};
  UniqueFd out_read(out_pipe[0]), out_write(out_pipe[1]);
  UniqueFd err_read(err_pipe[0]), err_write(err_pipe[1]);
  UniqueFd exec_read(exec_pipe[0]), exec_write(exec_pipe[1]);
  const pid_t launcher_pid = ::getpid();

  // The launch token goes on a pipe as the rank's standard input: a few bytes, which a
  // fresh pipe always takes without blocking.
  UniqueFd in_read, in_write;
  if (!stdin_text.empty()) {
    int in_pipe[2];
    if (::pipe2(in_pipe, O_CLOEXEC) != 0)
      return SpawnFailure{
          startup_failure_status,
          std::string("cannot create pipes: ") + std::strerror(errno) + "; terminating the job"};
    in_read.reset(in_pipe[0]);
    in_write.reset(in_pipe[1]);
    if (::write(in_write.get(), stdin_text.data(), stdin_text.size()) !=
        static_cast<ssize_t>(stdin_text.size()))
      return SpawnFailure{startup_failure_status, std::string("cannot write the launch token: ") +
                                                      std::strerror(errno) +
                                                      "; terminating the job"};
    if (r == 0) child.stdin_copier = start_stdin_copier(in_write.get());
    in_write.reset();  // the others' input ends after the token
  }

  pid_t pid = ::fork();
  if (pid < 0)
    return SpawnFailure{startup_failure_status, std::string("cannot fork: ") +
                                                    std::strerror(errno) + "; terminating the job"};
  if (pid == 0) {
    exec_rank(r, out_write.get(), err_write.get(), in_read.get(), exec_write.get(), launcher_pid,
              argv.data(), envp.data());
  }
  in_read.reset();

  // The exec pipe closes (read returns 0) when exec succeeds; else it carries errno.
  exec_write.reset();
  int exec_errno = 0;
  ssize_t n;
  do n = ::read(exec_read.get(), &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  child.pid = pid;
  pid_to_rank_[pid] = r;
  ++unreaped_;

  set_nonblocking(out_read.get());
  set_nonblocking(err_read.get());
  child.stdout_pipe = std::move(out_read);
  child.stderr_pipe = std::move(err_read);
  loop_.watch(child.stdout_pipe.get(), EPOLLIN, event_tag(Source::rank_stdout, r));
  loop_.watch(child.stderr_pipe.get(), EPOLLIN, event_tag(Source::rank_stderr, r));

  if (n == sizeof exec_errno) {
    // The child exits 127 right away; its exit is then expected, not reported again.
    return SpawnFailure{exec_errno == ENOENT ? 127 : 126, "cannot execute '" + options_.command[0] +
                                                              "': " + std::strerror(exec_errno)};
  }
  return std::nullopt;
}

// In the child between fork and exec: only async-signal-safe calls.
void RankSpawner::exec_rank(int r, int out_fd, int err_fd, int in_fd, int exec_fd,
                            pid_t launcher_pid, char** argv, char** envp) {
  auto give_to = [](int fd, int target) {
    if (fd == target)
      ::fcntl(fd, F_SETFD, 0);  // dup2 onto itself would keep FD_CLOEXEC
    else
      ::dup2(fd, target);
  };
  give_to(out_fd, STDOUT_FILENO);
  give_to(err_fd, STDERR_FILENO);
  // Like mpirun: rank 0 reads the launcher's stdin, the others read nothing (with a launch
  // token: the token first, see start()).
  if (in_fd >= 0) {
    give_to(in_fd, STDIN_FILENO);
  } else if (r != 0) {
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) give_to(null_fd, STDIN_FILENO);
  }
  ::sigaction(SIGPIPE, &original_sigpipe_action_, nullptr);
  ::sigprocmask(SIG_SETMASK, &original_signal_mask_, nullptr);
  // If the launcher dies (even by SIGKILL), its ranks must not live on.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != launcher_pid) ::_exit(startup_failure_status);
  if (!rank_cpu_sets_.empty()) ::sched_setaffinity(0, sizeof(cpu_set_t), &rank_cpu_sets_[r]);
  if (!bind_cpus_.empty()) {
    cpu_set_t one_cpu;
    CPU_ZERO(&one_cpu);
    CPU_SET(bind_cpus_[r % bind_cpus_.size()], &one_cpu);
    ::sched_setaffinity(0, sizeof one_cpu, &one_cpu);
  }
  ::execvpe(argv[0], argv, envp);
  int exec_errno = errno;
  (void)!::write(exec_fd, &exec_errno, sizeof exec_errno);
  ::_exit(127);
}

// A helper process that copies the launcher's standard input to rank 0's, after its launch
// token: the launcher's event loop never blocks on either. It holds no other descriptor of
// the launcher (so it keeps no connection or pipe open), dies with the launcher, and is
// killed when rank 0 is reaped.
pid_t RankSpawner::start_stdin_copier(int pipe_write_fd) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;  // (fork failed: rank 0's input ends after the token)
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ::sigprocmask(SIG_SETMASK, &original_signal_mask_, nullptr);
  ::dup2(pipe_write_fd, STDOUT_FILENO);
  ::syscall(SYS_close_range, 3u, ~0u, 0u);
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(0);
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(STDOUT_FILENO, buffer + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) ::_exit(0);  // rank 0 is gone (SIGPIPE is ignored here)
      done += w;
    }
  }
}

void RankSpawner::stop_stdin_copier(Child& child) {
  if (child.stdin_copier <= 0) return;
  ::kill(child.stdin_copier, SIGKILL);
  ::waitpid(child.stdin_copier, nullptr, 0);
  child.stdin_copier = -1;
}

// ---- signals and child exits ----

std::optional<int> RankSpawner::next_signal() {
  signalfd_siginfo info;
  if (::read(signal_fd_.get(), &info, sizeof info) != sizeof info) return std::nullopt;
  return static_cast<int>(info.ssi_signo);
}

void RankSpawner::reap(const std::function<void(int rank, int status)>& on_exit) {
  int status = 0;
  pid_t pid;
  while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
    auto it = pid_to_rank_.find(pid);
    if (it == pid_to_rank_.end()) {
      for (Child& child : children_)  // a stdin copier that ended by itself
        if (child.stdin_copier == pid) child.stdin_copier = -1;
      continue;
    }
    children_[it->second].reaped = true;
    stop_stdin_copier(children_[it->second]);
    --unreaped_;
    on_exit(it->second, status);
  }
}

void RankSpawner::signal_all(int signo) {
  for (Child& child : children_)
    if (child.pid > 0 && !child.reaped) ::kill(child.pid, signo);
}

void RankSpawner::signal(int rank, int signo) {
  ::kill(children_[rank].pid, signo);
}

// ---- output ----

void RankSpawner::read_output(int rank, bool is_stderr) {
  Child& child = children_[rank];
  UniqueFd& pipe = is_stderr ? child.stderr_pipe : child.stdout_pipe;
  OutputForwarder& forwarder = is_stderr ? child.stderr_forwarder : child.stdout_forwarder;
  if (!pipe.valid()) return;
  char buffer[65536];
  ssize_t n = ::read(pipe.get(), buffer, sizeof buffer);
  if (n > 0) {
    forwarder.consume(std::string_view(buffer, static_cast<std::size_t>(n)));
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    forwarder.finish();
    loop_.unwatch(pipe.get());
    pipe.reset();
  }
}

void RankSpawner::drain_output(int rank) {
  Child& child = children_[rank];
  for (bool is_stderr : {false, true}) {
    UniqueFd& pipe = is_stderr ? child.stderr_pipe : child.stdout_pipe;
    OutputForwarder& forwarder = is_stderr ? child.stderr_forwarder : child.stdout_forwarder;
    char buffer[65536];
    ssize_t n = -1;
    while (pipe.valid() && (n = ::read(pipe.get(), buffer, sizeof buffer)) != 0) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      forwarder.consume(std::string_view(buffer, static_cast<std::size_t>(n)));
    }
    if (pipe.valid() && n == 0) {
      forwarder.finish();
      loop_.unwatch(pipe.get());
      pipe.reset();
    }
  }
}

void RankSpawner::finish_output() {
  for (int r = 0; r < static_cast<int>(children_.size()); ++r) {
    drain_output(r);
    children_[r].stdout_forwarder.finish();
    children_[r].stderr_forwarder.finish();
  }
}

}  // namespace sluicerun
