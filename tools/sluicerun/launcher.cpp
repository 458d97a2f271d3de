#include "launcher.hpp"

#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/boot_client.hpp"
#include "event_loop.hpp"
#include "posix.hpp"
#include "rank_spawner.hpp"
#include "remote_launch.hpp"
#include "store_server.hpp"
#include "util/stats.hpp"

extern char** environ;

namespace sluicerun {

namespace {

// Between SIGTERM and SIGKILL when ending a job: short, so a failed job is gone in < 2 s.
constexpr auto kill_grace = std::chrono::milliseconds(1000);
// A rank whose connection closed without finalize but which has not exited yet gets this
// long to exit (so its real fate, e.g. a signal, is what gets reported).
constexpr auto disconnect_grace = std::chrono::milliseconds(1000);

std::string job_id_for_this_run() {
  std::uint64_t random = 0;
  if (getrandom(&random, sizeof random, 0) != sizeof random)
    random = static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
  auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  char id[80];
  std::snprintf(id, sizeof id, "%ld-%llx-%016llx", static_cast<long>(getpid()),
                static_cast<unsigned long long>(now_ms), static_cast<unsigned long long>(random));
  return id;
}

// The job: starts the ranks (RankSpawner, RemoteLaunch), serves them the store
// (StoreServer), runs the event loop and its deadlines, and decides what a rank's fate
// means for the job and its exit status.
class Launcher final : public StoreServer::Job {
 public:
  Launcher(const Options& options, std::string job_id, std::string job_key)
      : options_(options),
        job_id_(std::move(job_id)),
        job_key_(std::move(job_key)),
        remote_(options),
        store_(options, job_id_, job_key_, loop_, *this),
        spawner_(options, loop_),
        disconnect_deadlines_(static_cast<std::size_t>(options.nranks)) {}

  ~Launcher() { remove_leftover_segments(); }

  int run() {
    std::string error;
    if (!set_up(error)) {
      report(error);
      return startup_failure_status;
    }
    for (int r = 0; r < options_.nranks && !terminating_; ++r) start_rank(r);
    if (options_.timeout_seconds)
      job_deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(*options_.timeout_seconds));
    while (spawner_.unreaped() > 0) {
      wait_and_dispatch();
      check_deadlines();
    }
    spawner_.finish_output();
    remove_leftover_segments();
    store_.report_stranger_summary();
    report_stats();
    return exit_status_.value_or(0);
  }

  // ---- StoreServer::Job ----

  std::string who(int rank) const override {
    return "rank " + std::to_string(rank) + " (pid " + std::to_string(spawner_.pid(rank)) + ")";
  }

  bool has_exited(int rank) const override { return spawner_.reaped(rank); }

  void rank_aborted(int status, const std::string& message) override { fail_job(status, message); }

  void connection_lost(int rank) override {
    if (spawner_.reaped(rank) || terminating_) return;
    disconnect_deadlines_[rank] = Clock::now() + disconnect_grace;
    if (options_.recovery) store_.notify_failure(rank);
  }

 private:
  // A rank killed between creating its shared-memory segment and unlinking its name (the
  // shm driver unlinks right after every local rank attached) would leave the segment in
  // /dev/shm. The names follow ShmDriver::segment_name: /sluice-<job id>-<rank>.
  void remove_leftover_segments() {
    for (int r = 0; r < options_.nranks; ++r)
      ::shm_unlink(("/sluice-" + job_id_ + "-" + std::to_string(r)).c_str());
  }

  // --stats: the launcher's counters, as a rank's SLUICE_STATS reports them (rank -1).
  void report_stats() const {
    if (options_.stats == Options::Stats::none) return;
    sluice::util::StatsRegistry registry;
    store_.register_stats(registry);
    const std::string text = options_.stats == Options::Stats::json
                                 ? registry.json(-1) + "\n"
                                 : registry.text("sluicerun: launcher statistics");
    write_all(STDERR_FILENO, text);
  }

  // ---- setup ----

  bool set_up(std::string& error) {
    if (!loop_.open(error)) return false;
    if (!store_.listen(error)) return false;
    if (!spawner_.set_up(error)) return false;
    if (!remote_.issue_tokens(error)) return false;
    for (int r = 0; r < options_.nranks; ++r)
      if (!remote_.launch_token(r).empty()) store_.accept_launch_token(r, remote_.launch_token(r));
    return remote_.check_environment(environment_for(0), error);
  }

  // Every variable passes through except stale launcher variables, which are replaced.
  std::vector<std::string> environment_for(int rank) const {
    std::vector<std::string> env;
    for (char** entry = environ; *entry != nullptr; ++entry) {
      std::string_view text(*entry);
      std::string_view name = text.substr(0, text.find('='));
      if (name.starts_with("SLUICE_") &&
          sluice::detail::is_launcher_variable(name.substr(std::strlen("SLUICE_"))))
        continue;
      env.emplace_back(text);
    }
    const RankLocation& location = remote_.location(rank);
    env.push_back("SLUICE_RANK=" + std::to_string(rank));
    env.push_back("SLUICE_SIZE=" + std::to_string(options_.nranks));
    env.push_back("SLUICE_LOCAL_RANK=" + std::to_string(location.local_rank));
    env.push_back("SLUICE_LOCAL_SIZE=" + std::to_string(location.local_size));
    env.push_back("SLUICE_JOB_ID=" + job_id_);
    env.push_back("SLUICE_JOB_KEY=" + job_key_);
    env.push_back("SLUICE_BOOT_ADDR=" + store_.address());
    // Namespaces share the hostname and /dev/shm: the launcher names the host.
    if (location.host >= 0)
      env.push_back("SLUICE_HOST_ID=" + options_.hosts[location.host].name);
    else if (const char* host_id = std::getenv("SLUICE_HOST_ID"))
      env.push_back(std::string("SLUICE_HOST_ID=") + host_id);  // the user's, kept
    // Placement for the rank's progress thread, and the binding report; these replace the
    // user's own values (getenv returns the first).
    auto set_env = [&env](const std::string& name, const std::string& value) {
      std::erase_if(env, [&](const std::string& e) { return e.starts_with(name + "="); });
      env.push_back(name + "=" + value);
    };
    if (std::optional<std::string> cpus = spawner_.progress_cpus(rank))
      set_env("SLUICE_PROGRESS_CPUS", *cpus);
    if (options_.report_bindings) set_env("SLUICE_REPORT_BINDINGS", "1");
    for (const std::string& entry : options_.exports)  // -x / -genv, in the order given
      set_env(entry.substr(0, entry.find('=')), entry.substr(entry.find('=') + 1));
    return env;
  }

  void start_rank(int rank) {
    std::vector<std::string> env = environment_for(rank);
    std::vector<std::string> argv = remote_.argv_for(rank, env);
    if (std::optional<SpawnFailure> failure =
            spawner_.start(rank, std::move(argv), std::move(env), remote_.stdin_text(rank)))
      fail_job(failure->exit_status, failure->message);
  }

  // ---- event loop ----

  void wait_and_dispatch() {
    epoll_event events[64];
    int count = loop_.wait(events, milliseconds_to_next_deadline());
    if (count < 0) {
      if (errno == EINTR) return;
      report(std::string("epoll_wait: ") + std::strerror(errno));
      std::abort();
    }
    for (int i = 0; i < count; ++i) {
      const std::uint32_t id = id_of(events[i].data.u64);
      switch (source_of(events[i].data.u64)) {
        case Source::listener:
          store_.accept_connections();
          break;
        case Source::signals:
          handle_signals();
          break;
        case Source::rank_stdout:
          spawner_.read_output(static_cast<int>(id), false);
          break;
        case Source::rank_stderr:
          spawner_.read_output(static_cast<int>(id), true);
          break;
        case Source::connection:
          store_.on_connection_event(id, events[i].events);
          break;
      }
    }
  }

  int milliseconds_to_next_deadline() const {
    std::optional<Clock::time_point> next;
    auto consider = [&](const std::optional<Clock::time_point>& deadline) {
      if (deadline && (!next || *deadline < *next)) next = deadline;
    };
    if (!terminating_) consider(job_deadline_);
    consider(kill_deadline_);
    consider(store_.next_hello_deadline());
    for (int r = 0; r < options_.nranks; ++r)
      if (!spawner_.reaped(r)) consider(disconnect_deadlines_[r]);
    if (!next) return -1;
    auto wait = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now()).count();
    return wait < 0 ? 0 : static_cast<int>(wait);
  }

  void check_deadlines() {
    auto now = Clock::now();
    if (job_deadline_ && now >= *job_deadline_ && !terminating_) {
      job_deadline_.reset();
      begin_termination(124,
                        "job timed out after " + options_.timeout_text + " s; killing " +
                            std::to_string(spawner_.unreaped()) + " ranks",
                        SIGTERM);
    }
    if (kill_deadline_ && now >= *kill_deadline_) {
      kill_deadline_.reset();
      spawner_.signal_all(SIGKILL);
    }
    store_.close_silent_connections(now);
    for (int r = 0; r < options_.nranks; ++r) {
      std::optional<Clock::time_point>& deadline = disconnect_deadlines_[r];
      if (deadline && now >= *deadline) {
        deadline.reset();
        if (!spawner_.reaped(r) && options_.recovery) {
          // Cut off from the job (the others were told): it must not run on alone.
          report(who(r) + " closed its bootstrap connection without calling finalize; killing it");
          if (!exit_status_) exit_status_ = 1;
          spawner_.signal(r, SIGKILL);
        } else if (!spawner_.reaped(r)) {
          fail_job(1, who(r) +
                          " closed its bootstrap connection without calling finalize; "
                          "terminating the job");
        }
      }
    }
  }

  // ---- signals and rank exits ----

  void handle_signals() {
    while (std::optional<int> received = spawner_.next_signal()) {
      const int signo = *received;
      if (signo == SIGCHLD) {
        spawner_.reap([this](int rank, int status) { on_rank_exit(rank, status); });
      } else if (signo == SIGUSR1 || signo == SIGUSR2) {
        spawner_.signal_all(signo);  // user signals are for the ranks, like mpirun does
      } else if (terminating_) {
        spawner_.signal_all(SIGKILL);  // asked again while ending: stop waiting
      } else {
        begin_termination(128 + signo,
                          "received signal " + std::to_string(signo) + " (" + signal_name(signo) +
                              "); terminating " + std::to_string(spawner_.unreaped()) + " ranks",
                          signo);
      }
    }
  }

  // `rank` was reaped (the spawner counts it as such already).
  void on_rank_exit(int rank, int status) {
    disconnect_deadlines_[rank].reset();
    // Whatever the rank sent before it died is queued already: read it before judging
    // (a finalize or abort just before exit must count), and show its last output first.
    store_.read_what_rank_left(rank);
    spawner_.drain_output(rank);
    if (terminating_) return;

    if (WIFSIGNALED(status)) {
      int signo = WTERMSIG(status);
      rank_failed(rank, 128 + signo,
                  who(rank) + " was killed by signal " + std::to_string(signo) + " (" +
                      signal_name(signo) + ")");
      if (!terminating_) store_.fail_fence_if_stuck();
      return;
    }
    int code = WEXITSTATUS(status);
    std::string code_text = std::to_string(code);
    if (store_.finalized(rank)) {
      if (code != 0) {
        // After finalize the others may finish their work: record, don't kill.
        report(who(rank) + " exited with status " + code_text + " after finalize");
        if (!exit_status_) exit_status_ = code;
      }
    } else if (store_.joined(rank)) {
      rank_failed(rank, code != 0 ? code : 1,
                  who(rank) + " exited with status " + code_text + " before calling finalize");
    } else if (code != 0) {
      rank_failed(rank, code, who(rank) + " exited with status " + code_text);
    }
    if (!terminating_) store_.fail_fence_if_stuck();
  }

  // A rank died: end the job, or with --enable-recovery tell the others and go on.
  void rank_failed(int rank, int status, const std::string& what) {
    if (!options_.recovery) return fail_job(status, what + "; terminating the job");
    report(what + "; the job continues (--enable-recovery)");
    if (!exit_status_) exit_status_ = status;
    store_.notify_failure(rank);
  }

  // Ends the job because of `message`; the first failure decides the exit status.
  void fail_job(int status, const std::string& message) {
    begin_termination(status, message, SIGTERM);
  }

  void begin_termination(int status, const std::string& message, int signo) {
    if (terminating_) return;
    terminating_ = true;
    exit_status_ = status;
    report(message);
    spawner_.signal_all(signo);
    kill_deadline_ = Clock::now() + kill_grace;
  }

  const Options& options_;
  const std::string job_id_;
  const std::string job_key_;
  // Declared in dependency order: destroyed spawner first (no rank outlives the launcher),
  // then the store (connections, socket directory), then the event loop.
  EventLoop loop_;
  RemoteLaunch remote_;
  StoreServer store_;
  RankSpawner spawner_;

  // A rank whose connection closed without finalize: when it must have exited.
  std::vector<std::optional<Clock::time_point>> disconnect_deadlines_;
  bool terminating_ = false;
  std::optional<int> exit_status_;
  std::optional<Clock::time_point> job_deadline_, kill_deadline_;
};

}  // namespace

int run_job(const Options& options) {
  std::string job_id = job_id_for_this_run();
  std::optional<std::string> job_key = random_secret();
  if (!job_key) {
    report("cannot read random bytes for the job key");
    return startup_failure_status;
  }
  Launcher launcher(options, std::move(job_id), std::move(*job_key));
  return launcher.run();
}

}  // namespace sluicerun
