// Local spawning: the ranks as child processes of this launcher (with --hosts, the child
// runs the launch command). It owns the children (fork/exec, their pids, reaping), their
// stdout/stderr pipes and forwarders, CPU binding (--bind), and the launcher's signals (a
// signalfd; the children get the original mask and SIGPIPE action back). When it goes away
// no child is left running.
#pragma once

#include <sched.h>
#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "event_loop.hpp"
#include "options.hpp"
#include "output_forwarder.hpp"
#include "posix.hpp"

namespace sluicerun {

// sluicerun's exit status when the job cannot be set up or a rank cannot be started.
constexpr int startup_failure_status = 1;

// Why a rank did not start, and the exit status the job ends with.
struct SpawnFailure {
  int exit_status;
  std::string message;
};

class RankSpawner {
 public:
  RankSpawner(const Options& options, EventLoop& loop);
  RankSpawner(const RankSpawner&) = delete;
  RankSpawner& operator=(const RankSpawner&) = delete;
  // SIGKILLs every rank not yet reaped (only reached early, on a setup failure) and
  // restores the signal mask and SIGPIPE action.
  ~RankSpawner();

  // Takes the signals over (signalfd) and plans the CPU binding.
  bool set_up(std::string& error);

  // --bind numa|scatter: the CPUs of rank `rank`'s progress thread (SLUICE_PROGRESS_CPUS).
  std::optional<std::string> progress_cpus(int rank) const;

  // Forks and execs `argv` with environment `env` as rank `rank`. A rank whose exec failed
  // is still started (its exit 127 follows) and the failure returned. A non-empty
  // `stdin_text` is what the rank reads first on its standard input (its launch token);
  // rank 0 then reads the launcher's input, copied by a helper process, the others nothing.
  std::optional<SpawnFailure> start(int rank, std::vector<std::string> argv,
                                    std::vector<std::string> env, const std::string& stdin_text);

  // The next signal the launcher received, if any is pending.
  std::optional<int> next_signal();
  // Reaps every exited child, calling on_exit(rank, wait status) for each rank (already
  // counted as reaped).
  void reap(const std::function<void(int rank, int status)>& on_exit);

  pid_t pid(int rank) const { return children_[rank].pid; }
  bool reaped(int rank) const { return children_[rank].reaped; }
  int unreaped() const { return unreaped_; }
  void signal_all(int signo);
  void signal(int rank, int signo);

  // A pipe event; reads what the rank's pipes hold now (a grandchild may still hold them
  // open, so not until end of file); at the end of the job, ends partial lines.
  void read_output(int rank, bool is_stderr);
  void drain_output(int rank);
  void finish_output();

 private:
  struct Child {
    explicit Child(const std::string& prefix)
        : stdout_forwarder(STDOUT_FILENO, prefix), stderr_forwarder(STDERR_FILENO, prefix) {}
    pid_t pid = -1;
    bool reaped = false;
    pid_t stdin_copier = -1;  // copies the launcher's input after the launch token
    UniqueFd stdout_pipe, stderr_pipe;
    OutputForwarder stdout_forwarder, stderr_forwarder;
  };

  bool plan_placement(std::string& error);
  [[noreturn]] void exec_rank(int rank, int out_fd, int err_fd, int in_fd, int exec_fd,
                              pid_t launcher_pid, char** argv, char** envp);
  pid_t start_stdin_copier(int pipe_write_fd);
  void stop_stdin_copier(Child& child);

  const Options& options_;
  EventLoop& loop_;
  UniqueFd signal_fd_;
  bool signals_taken_ = false;
  sigset_t original_signal_mask_{};
  struct sigaction original_sigpipe_action_ {};
  std::vector<int> bind_cpus_;  // CPUs ranks are bound to, round robin (empty: no binding)
  std::vector<cpu_set_t> rank_cpu_sets_;  // --bind numa|scatter: each rank's CPUs
  std::vector<std::string> thread_cpus_;  // ... and its progress thread's (SLUICE_PROGRESS_CPUS)
  std::vector<Child> children_;
  std::unordered_map<pid_t, int> pid_to_rank_;
  int unreaped_ = 0;
};

}  // namespace sluicerun
