#include "launcher.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "boot/boot_wire.hpp"
#include "coll/placement.hpp"
#include "core/boot_client.hpp"
#include "output_forwarder.hpp"
#include "posix.hpp"

extern char** environ;

namespace sluicerun {

namespace {

namespace wire = sluice::detail::bootwire;
using Clock = std::chrono::steady_clock;

// Between SIGTERM and SIGKILL when ending a job: short, so a failed job is gone in < 2 s.
constexpr auto kill_grace = std::chrono::milliseconds(1000);
// A rank whose connection closed without finalize but which has not exited yet gets this
// long to exit (so its real fate, e.g. a signal, is what gets reported).
constexpr auto disconnect_grace = std::chrono::milliseconds(1000);
constexpr int startup_failure_status = 1;
// A TCP bootstrap connection must say hello (with the job key) this soon, or it is closed:
// strangers cannot hold connections open.
constexpr auto hello_deadline = std::chrono::seconds(10);

void report(const std::string& message) {
  write_all(STDERR_FILENO, "sluicerun: " + message + "\n");
}

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

// 128 random bits, as 32 hex digits: the secret network drivers check on every
// handshake and datagram. It travels to the ranks in their environment only.
std::string job_key_for_this_run() {
  std::uint64_t random[2] = {0, 0};
  if (getrandom(random, sizeof random, 0) != sizeof random) {
    report("cannot read random bytes for the job key");
    std::exit(startup_failure_status);
  }
  char key[40];
  std::snprintf(key, sizeof key, "%016llx%016llx", static_cast<unsigned long long>(random[0]),
                static_cast<unsigned long long>(random[1]));
  return key;
}

// A private (0700) temporary directory holding the launcher's socket; both are removed
// when this object goes away.
class BootDirectory {
 public:
  BootDirectory() = default;
  BootDirectory(const BootDirectory&) = delete;
  BootDirectory& operator=(const BootDirectory&) = delete;
  ~BootDirectory() {
    if (!socket_path_.empty()) ::unlink(socket_path_.c_str());
    if (!directory_.empty()) ::rmdir(directory_.c_str());
  }

  bool create(std::string& error) {
    const char* tmpdir = std::getenv("TMPDIR");
    std::vector<std::string> bases;
    if (tmpdir != nullptr && *tmpdir == '/') bases.push_back(tmpdir);
    bases.push_back("/tmp");
    for (const std::string& base : bases) {
      std::string candidate = base + "/sluicerun-XXXXXX";
      // The socket path must fit sun_path; a long TMPDIR falls back to /tmp.
      if (candidate.size() + 16 >= sizeof(sockaddr_un::sun_path)) continue;
      if (::mkdtemp(candidate.data()) == nullptr) {
        error = "cannot create a temporary directory in " + base + ": " + std::strerror(errno);
        continue;
      }
      directory_ = candidate;
      socket_path_ = directory_ + "/boot.sock";
      return true;
    }
    if (error.empty()) error = "no temporary directory with a short enough path";
    return false;
  }

  const std::string& socket_path() const { return socket_path_; }

 private:
  std::string directory_;
  std::string socket_path_;
};

UniqueFd listen_on(const std::string& path, std::string& error) {
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!listener.valid()) {
    error = std::string("cannot create the bootstrap socket: ") + std::strerror(errno);
    return {};
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  // Created 0600 from the start (umask), not chmod-ed after a window of exposure.
  mode_t old_mask = ::umask(0177);
  int bound = ::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::umask(old_mask);
  if (bound != 0 || ::listen(listener.get(), SOMAXCONN) != 0) {
    error = "cannot listen on " + path + ": " + std::strerror(errno);
    return {};
  }
  return listener;
}

// The first non-loopback IPv4 address of an interface that is up: where hosts of a
// multi-host job can most likely reach this launcher. 127.0.0.1 if there is none.
std::string default_boot_ip() {
  ifaddrs* list = nullptr;
  std::string found = "127.0.0.1";
  if (::getifaddrs(&list) != 0) return found;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    if ((a->ifa_flags & IFF_UP) == 0 || (a->ifa_flags & IFF_LOOPBACK) != 0) continue;
    char text[INET_ADDRSTRLEN];
    auto* in = reinterpret_cast<sockaddr_in*>(a->ifa_addr);
    if (::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) != nullptr) {
      found = text;
      break;
    }
  }
  ::freeifaddrs(list);
  return found;
}

// Listens on TCP at "IP[:PORT]" (IPv4; port 0 or none: any free port). `advertised` becomes
// the rank's SLUICE_BOOT_ADDR, tcp:IP:PORT.
UniqueFd listen_on_tcp(const std::string& where, std::string& advertised, std::string& error) {
  std::string ip = where, port_text = "0";
  if (auto colon = where.find(':'); colon != std::string::npos) {
    ip = where.substr(0, colon);
    port_text = where.substr(colon + 1);
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  char* end = nullptr;
  unsigned long port = std::strtoul(port_text.c_str(), &end, 10);
  if (::inet_pton(AF_INET, ip.c_str(), &address.sin_addr) != 1 || *end != '\0' || port > 65535) {
    error = "--boot-addr " + where + " is not IPv4-ADDRESS[:PORT]";
    return {};
  }
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  int one = 1;
  if (!listener.valid() ||
      ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      ::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener.get(), SOMAXCONN) != 0) {
    error = "cannot listen on TCP " + where + ": " + std::strerror(errno);
    return {};
  }
  socklen_t length = sizeof address;
  ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length);
  advertised = "tcp:" + ip + ":" + std::to_string(ntohs(address.sin_port));
  return listener;
}

// Where an epoll event comes from: the kind in the high half, an id in the low half.
enum class Source : std::uint32_t { listener, signals, rank_stdout, rank_stderr, connection };

std::uint64_t event_tag(Source source, std::uint64_t id) {
  return (static_cast<std::uint64_t>(source) << 32) | (id & 0xffffffffu);
}

struct RankProcess {
  RankProcess(int rank_index, std::string prefix)
      : rank(rank_index),
        stdout_forwarder(STDOUT_FILENO, prefix),
        stderr_forwarder(STDERR_FILENO, prefix) {}

  std::string who() const {
    return "rank " + std::to_string(rank) + " (pid " + std::to_string(pid) + ")";
  }

  int rank;
  int host = -1;  // index in Options::hosts (-1: this host)
  int local_rank = 0, local_size = 1;
  pid_t pid = -1;
  bool reaped = false;
  bool joined = false;  // sent hello: it is a Sluice process, so it must finalize
  bool finalized = false;
  bool in_fence = false;
  bool failure_notified = false;  // --enable-recovery: the others were told it died
  // --hosts with a launch command that does not pass the environment: the one-time secret
  // this rank proves itself with in hello instead of the job key, which never goes on a
  // command line (ps shows those to every user); hello_ok then hands it the job key.
  std::string launch_token;
  std::optional<std::uint32_t> connection_id;
  std::optional<Clock::time_point> disconnect_deadline;
  UniqueFd stdout_pipe, stderr_pipe;
  OutputForwarder stdout_forwarder, stderr_forwarder;
};

struct Connection {
  UniqueFd socket;
  int rank = -1;  // -1 until hello
  wire::FrameReader reader;
  std::string outbox;  // reply bytes the socket could not take yet
  bool close_after_flush = false;
  Clock::time_point accepted_at;
};

class Launcher {
 public:
  explicit Launcher(const Options& options) : options_(options) {}

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
    while (unreaped_ranks_ > 0) {
      wait_and_dispatch();
      check_deadlines();
    }
    for (RankProcess& rank : ranks_) {
      drain_output(rank);
      rank.stdout_forwarder.finish();
      rank.stderr_forwarder.finish();
    }
    remove_leftover_segments();
    return exit_status_.value_or(0);
  }

  ~Launcher() {
    remove_leftover_segments();
    // Only reached early on a setup failure; never leave ranks behind.
    for (RankProcess& rank : ranks_)
      if (rank.pid > 0 && !rank.reaped) ::kill(rank.pid, SIGKILL);
    sigprocmask(SIG_SETMASK, &original_signal_mask_, nullptr);
  }

 private:
  // A rank killed between creating its shared-memory segment and unlinking its name (the
  // shm driver unlinks right after every local rank attached) would leave the segment in
  // /dev/shm. The names follow ShmDriver::segment_name: /sluice-<job id>-<rank>.
  void remove_leftover_segments() {
    if (job_id_.empty()) return;
    for (int r = 0; r < options_.nranks; ++r)
      ::shm_unlink(("/sluice-" + job_id_ + "-" + std::to_string(r)).c_str());
  }

  // ---- setup ----

  bool set_up(std::string& error) {
    job_id_ = job_id_for_this_run();
    job_key_ = job_key_for_this_run();
    if (options_.hosts.empty()) {
      if (!boot_directory_.create(error)) return false;
      listener_ = listen_on(boot_directory_.socket_path(), error);
      boot_address_ = boot_directory_.socket_path();
    } else {
      // Ranks on other hosts reach the store over TCP; the job key in hello keeps
      // everyone else out.
      listener_ = listen_on_tcp(options_.boot_addr.empty() ? default_boot_ip() : options_.boot_addr,
                                boot_address_, error);
    }
    if (!listener_.valid()) return false;

    // Signals arrive through a signalfd, so the loop handles them like any other event.
    sigset_t handled;
    sigemptyset(&handled);
    for (int signo : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2})
      sigaddset(&handled, signo);
    sigprocmask(SIG_BLOCK, &handled, &original_signal_mask_);
    signal_fd_.reset(::signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!signal_fd_.valid()) {
      error = std::string("signalfd: ") + std::strerror(errno);
      return false;
    }
    // A reader that went away must not kill the launcher; ranks get the default back.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &original_sigpipe_action_);

    epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_.valid()) {
      error = std::string("epoll_create1: ") + std::strerror(errno);
      return false;
    }
    watch(listener_.get(), EPOLLIN, event_tag(Source::listener, 0));
    watch(signal_fd_.get(), EPOLLIN, event_tag(Source::signals, 0));

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

    ranks_.reserve(options_.nranks);
    for (int r = 0; r < options_.nranks; ++r)
      ranks_.emplace_back(r, options_.tag_output ? "[" + std::to_string(r) + "] " : "");
    if (!options_.hosts.empty() && !options_.launch_keeps_env)
      for (RankProcess& rank : ranks_) rank.launch_token = job_key_for_this_run();
    place_ranks();
    return check_launch_environment(error);
  }

  // Blocks: each host's slots in order, then round again while ranks remain. Local ranks
  // count in rank order within a host. Without --hosts every rank is local.
  void place_ranks() {
    if (options_.hosts.empty()) {
      for (RankProcess& rank : ranks_) {
        rank.local_rank = rank.rank;
        rank.local_size = options_.nranks;
      }
      return;
    }
    std::vector<int> on_host(options_.hosts.size(), 0);
    std::size_t host = 0;
    int used = 0;
    for (RankProcess& rank : ranks_) {
      while (used >= options_.hosts[host].slots) {
        host = (host + 1) % options_.hosts.size();
        used = 0;
      }
      rank.host = static_cast<int>(host);
      rank.local_rank = on_host[host]++;
      ++used;
    }
    for (RankProcess& rank : ranks_) rank.local_size = on_host[rank.host];
  }

  // The rank's argv: the program, or with --hosts the launch command run by the shell
  //   /bin/sh -c 'exec <launch with {host}> env SLUICE_K=V... "$@"' sluicerun-launch prog args...
  // so the launch command may use shell syntax and the program's arguments stay intact.
  // The `env` prefix carries every SLUICE_* variable of the rank's environment (rank, store
  // address, the user's settings) on the command line itself: a launcher such as ssh starts
  // the program with the remote host's environment, not ours. The job key is the exception:
  // the rank gets a one-time launch token instead and the key over the store connection.
  std::vector<std::string> argv_for(const RankProcess& rank,
                                    const std::vector<std::string>& env) const {
    if (rank.host < 0) return options_.command;
    std::string launch = options_.launch;
    const std::string& host = options_.hosts[rank.host].name;
    for (auto at = launch.find("{host}"); at != std::string::npos;
         at = launch.find("{host}", at + host.size()))
      launch.replace(at, 6, host);
    std::string prefix;
    if (!options_.launch_keeps_env) {
      prefix = " env";
      for (const std::string& entry : env)
        if (entry.starts_with("SLUICE_") && !entry.starts_with("SLUICE_JOB_KEY="))
          prefix += " " + entry;  // shell-safe: set_up checked
      prefix += " SLUICE_LAUNCH_TOKEN=" + rank.launch_token;
    }
    std::vector<std::string> argv = {"/bin/sh", "-c", "exec " + launch + prefix + " \"$@\"",
                                     "sluicerun-launch"};
    argv.insert(argv.end(), options_.command.begin(), options_.command.end());
    return argv;
  }

  // A value passed on a launch command line may cross two shells (ours, and ssh's on the
  // remote host): only characters no shell interprets, so no quoting is needed anywhere.
  static bool shell_safe(std::string_view entry) {
    for (char c : entry)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            std::string_view("_.,:=/+@%-").find(c) != std::string_view::npos))
        return false;
    return !entry.empty();
  }

  // With --hosts, every SLUICE_* variable goes on the launch command line (argv_for).
  bool check_launch_environment(std::string& error) const {
    if (options_.hosts.empty() || options_.launch_keeps_env) return true;
    for (const std::string& entry : environment_for(0))
      if (entry.starts_with("SLUICE_") && !shell_safe(entry)) {
        error = "--launch: " + entry.substr(0, entry.find('=')) +
                " has characters a remote shell would interpret (allowed: letters, digits and "
                "_.,:=/+@%-); it cannot be passed on the launch command line";
        return false;
      }
    return true;
  }

  void watch(int fd, std::uint32_t events, std::uint64_t tag) {
    epoll_event event{};
    event.events = events;
    event.data.u64 = tag;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &event);
  }

  void rewatch(int fd, std::uint32_t events, std::uint64_t tag) {
    epoll_event event{};
    event.events = events;
    event.data.u64 = tag;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &event);
  }

  void unwatch(int fd) { ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr); }

  // [MPC-Threads]' placement (src/coll/placement.hpp) over the CPUs we may use: each rank's
  // CPU set, applied between fork and exec, and its progress thread's CPUs, passed as
  // SLUICE_PROGRESS_CPUS (the rank binds its thread itself).
  bool plan_placement(std::string& error) {
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
    const RankProcess& process = ranks_[rank];
    env.push_back("SLUICE_RANK=" + std::to_string(rank));
    env.push_back("SLUICE_SIZE=" + std::to_string(options_.nranks));
    env.push_back("SLUICE_LOCAL_RANK=" + std::to_string(process.local_rank));
    env.push_back("SLUICE_LOCAL_SIZE=" + std::to_string(process.local_size));
    env.push_back("SLUICE_JOB_ID=" + job_id_);
    env.push_back("SLUICE_JOB_KEY=" + job_key_);
    env.push_back("SLUICE_BOOT_ADDR=" + boot_address_);
    // Namespaces share the hostname and /dev/shm: the launcher names the host.
    if (process.host >= 0)
      env.push_back("SLUICE_HOST_ID=" + options_.hosts[process.host].name);
    else if (const char* host_id = std::getenv("SLUICE_HOST_ID"))
      env.push_back(std::string("SLUICE_HOST_ID=") + host_id);  // the user's, kept
    // Placement for the rank's progress thread, and the binding report; these replace the
    // user's own values (getenv returns the first).
    auto set_env = [&env](const std::string& name, const std::string& value) {
      std::erase_if(env, [&](const std::string& e) { return e.starts_with(name + "="); });
      env.push_back(name + "=" + value);
    };
    if (!thread_cpus_.empty()) set_env("SLUICE_PROGRESS_CPUS", thread_cpus_[rank]);
    if (options_.report_bindings) set_env("SLUICE_REPORT_BINDINGS", "1");
    return env;
  }

  // ---- starting ranks ----

  void start_rank(int r) {
    RankProcess& rank = ranks_[r];
    std::vector<std::string> env_storage = environment_for(r);
    std::vector<char*> envp;
    for (std::string& entry : env_storage) envp.push_back(entry.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv_storage = argv_for(rank, env_storage);
    std::vector<char*> argv;
    for (std::string& arg : argv_storage) argv.push_back(arg.data());
    argv.push_back(nullptr);

    int out_pipe[2], err_pipe[2], exec_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
        ::pipe2(exec_pipe, O_CLOEXEC) != 0) {
      fail_job(startup_failure_status, std::string("cannot create pipes: ") + std::strerror(errno) +
                                           "; terminating the job");
      return;
    }
    UniqueFd out_read(out_pipe[0]), out_write(out_pipe[1]);
    UniqueFd err_read(err_pipe[0]), err_write(err_pipe[1]);
    UniqueFd exec_read(exec_pipe[0]), exec_write(exec_pipe[1]);
    const pid_t launcher_pid = ::getpid();

    pid_t pid = ::fork();
    if (pid < 0) {
      fail_job(startup_failure_status,
               std::string("cannot fork: ") + std::strerror(errno) + "; terminating the job");
      return;
    }
    if (pid == 0) {
      exec_rank(r, out_write.get(), err_write.get(), exec_write.get(), launcher_pid, argv.data(),
                envp.data());
    }

    // The exec pipe closes (read returns 0) when exec succeeds; else it carries errno.
    exec_write.reset();
    int exec_errno = 0;
    ssize_t n;
    do n = ::read(exec_read.get(), &exec_errno, sizeof exec_errno);
    while (n < 0 && errno == EINTR);
    rank.pid = pid;
    pid_to_rank_[pid] = r;
    ++unreaped_ranks_;

    set_nonblocking(out_read.get());
    set_nonblocking(err_read.get());
    rank.stdout_pipe = std::move(out_read);
    rank.stderr_pipe = std::move(err_read);
    watch(rank.stdout_pipe.get(), EPOLLIN, event_tag(Source::rank_stdout, r));
    watch(rank.stderr_pipe.get(), EPOLLIN, event_tag(Source::rank_stderr, r));

    if (n == sizeof exec_errno) {
      // The child exits 127 right away; its exit is then expected, not reported again.
      fail_job(exec_errno == ENOENT ? 127 : 126,
               "cannot execute '" + options_.command[0] + "': " + std::strerror(exec_errno));
    }
  }

  // In the child between fork and exec: only async-signal-safe calls.
  [[noreturn]] void exec_rank(int r, int out_fd, int err_fd, int exec_fd, pid_t launcher_pid,
                              char** argv, char** envp) {
    auto give_to = [](int fd, int target) {
      if (fd == target)
        ::fcntl(fd, F_SETFD, 0);  // dup2 onto itself would keep FD_CLOEXEC
      else
        ::dup2(fd, target);
    };
    give_to(out_fd, STDOUT_FILENO);
    give_to(err_fd, STDERR_FILENO);
    // Like mpirun: rank 0 reads the launcher's stdin, the others read nothing.
    if (r != 0) {
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

  // ---- event loop ----

  void wait_and_dispatch() {
    epoll_event events[64];
    int count = ::epoll_wait(epoll_.get(), events, 64, milliseconds_to_next_deadline());
    if (count < 0) {
      if (errno == EINTR) return;
      report(std::string("epoll_wait: ") + std::strerror(errno));
      std::abort();
    }
    for (int i = 0; i < count; ++i) {
      auto source = static_cast<Source>(events[i].data.u64 >> 32);
      auto id = static_cast<std::uint32_t>(events[i].data.u64);
      switch (source) {
        case Source::listener:
          accept_connections();
          break;
        case Source::signals:
          handle_signals();
          break;
        case Source::rank_stdout:
          read_output(ranks_[id], false);
          break;
        case Source::rank_stderr:
          read_output(ranks_[id], true);
          break;
        case Source::connection:
          if (events[i].events & EPOLLOUT) flush_outbox(id);
          if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) read_connection(id, false);
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
    for (const auto& [id, connection] : connections_)
      if (connection.rank < 0) consider(connection.accepted_at + hello_deadline);
    for (const RankProcess& rank : ranks_)
      if (!rank.reaped) consider(rank.disconnect_deadline);
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
                            std::to_string(unreaped_ranks_) + " ranks",
                        SIGTERM);
    }
    if (kill_deadline_ && now >= *kill_deadline_) {
      kill_deadline_.reset();
      signal_ranks(SIGKILL);
    }
    std::vector<std::uint32_t> silent;
    for (const auto& [id, connection] : connections_)
      if (connection.rank < 0 && now >= connection.accepted_at + hello_deadline)
        silent.push_back(id);
    for (std::uint32_t id : silent) {
      report("closed a bootstrap connection that sent no hello");
      close_connection(id);
    }
    for (RankProcess& rank : ranks_) {
      if (rank.disconnect_deadline && now >= *rank.disconnect_deadline) {
        rank.disconnect_deadline.reset();
        if (!rank.reaped && options_.recovery) {
          // Cut off from the job (the others were told): it must not run on alone.
          report(rank.who() +
                 " closed its bootstrap connection without calling finalize; killing it");
          if (!exit_status_) exit_status_ = 1;
          ::kill(rank.pid, SIGKILL);
        } else if (!rank.reaped) {
          fail_job(1, rank.who() +
                          " closed its bootstrap connection without calling finalize; "
                          "terminating the job");
        }
      }
    }
  }

  // ---- signals and child exits ----

  void handle_signals() {
    signalfd_siginfo info;
    while (::read(signal_fd_.get(), &info, sizeof info) == sizeof info) {
      int signo = static_cast<int>(info.ssi_signo);
      if (signo == SIGCHLD) {
        reap_children();
      } else if (signo == SIGUSR1 || signo == SIGUSR2) {
        signal_ranks(signo);  // user signals are for the ranks, like mpirun does
      } else if (terminating_) {
        signal_ranks(SIGKILL);  // asked again while ending: stop waiting
      } else {
        begin_termination(128 + signo,
                          "received signal " + std::to_string(signo) + " (" + signal_name(signo) +
                              "); terminating " + std::to_string(unreaped_ranks_) + " ranks",
                          signo);
      }
    }
  }

  void reap_children() {
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      auto it = pid_to_rank_.find(pid);
      if (it != pid_to_rank_.end()) on_rank_exit(ranks_[it->second], status);
    }
  }

  void on_rank_exit(RankProcess& rank, int status) {
    rank.reaped = true;
    rank.disconnect_deadline.reset();
    --unreaped_ranks_;
    // Whatever the rank sent before it died is queued already: read it before judging
    // (a finalize or abort just before exit must count), and show its last output first.
    if (rank.connection_id) read_connection(*rank.connection_id, true);
    drain_output(rank);
    if (terminating_) return;

    if (WIFSIGNALED(status)) {
      int signo = WTERMSIG(status);
      rank_failed(rank, 128 + signo,
                  rank.who() + " was killed by signal " + std::to_string(signo) + " (" +
                      signal_name(signo) + ")");
      if (!terminating_) fail_fence_if_stuck();
      return;
    }
    int code = WEXITSTATUS(status);
    std::string code_text = std::to_string(code);
    if (rank.finalized) {
      if (code != 0) {
        // After finalize the others may finish their work: record, don't kill.
        report(rank.who() + " exited with status " + code_text + " after finalize");
        if (!exit_status_) exit_status_ = code;
      }
    } else if (rank.joined) {
      rank_failed(rank, code != 0 ? code : 1,
                  rank.who() + " exited with status " + code_text + " before calling finalize");
    } else if (code != 0) {
      rank_failed(rank, code, rank.who() + " exited with status " + code_text);
    }
    if (!terminating_) fail_fence_if_stuck();
  }

  // A rank died: end the job, or with --enable-recovery tell the others and go on.
  void rank_failed(RankProcess& rank, int status, const std::string& what) {
    if (!options_.recovery) return fail_job(status, what + "; terminating the job");
    report(what + "; the job continues (--enable-recovery)");
    if (!exit_status_) exit_status_ = status;
    notify_failure(rank);
  }

  // Sends proc_failed to every rank still connected (once per failed rank).
  void notify_failure(RankProcess& failed) {
    if (failed.failure_notified) return;
    failed.failure_notified = true;
    std::string payload;
    wire::append_u32(payload, static_cast<std::uint32_t>(failed.rank));
    const std::string frame = wire::make_frame(wire::MsgType::proc_failed, payload);
    for (RankProcess& rank : ranks_)
      if (&rank != &failed && rank.connection_id && !rank.finalized)
        send_frame(*rank.connection_id, frame);
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
    signal_ranks(signo);
    kill_deadline_ = Clock::now() + kill_grace;
  }

  void signal_ranks(int signo) {
    for (RankProcess& rank : ranks_)
      if (rank.pid > 0 && !rank.reaped) ::kill(rank.pid, signo);
  }

  // ---- output ----

  void read_output(RankProcess& rank, bool is_stderr) {
    UniqueFd& pipe = is_stderr ? rank.stderr_pipe : rank.stdout_pipe;
    OutputForwarder& forwarder = is_stderr ? rank.stderr_forwarder : rank.stdout_forwarder;
    if (!pipe.valid()) return;
    char buffer[65536];
    ssize_t n = ::read(pipe.get(), buffer, sizeof buffer);
    if (n > 0) {
      forwarder.consume(std::string_view(buffer, static_cast<std::size_t>(n)));
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      forwarder.finish();
      unwatch(pipe.get());
      pipe.reset();
    }
  }

  // Reads what the rank's pipes hold now, without waiting for end of file (a grandchild
  // may still hold them open).
  void drain_output(RankProcess& rank) {
    for (bool is_stderr : {false, true}) {
      UniqueFd& pipe = is_stderr ? rank.stderr_pipe : rank.stdout_pipe;
      OutputForwarder& forwarder = is_stderr ? rank.stderr_forwarder : rank.stdout_forwarder;
      char buffer[65536];
      ssize_t n = -1;
      while (pipe.valid() && (n = ::read(pipe.get(), buffer, sizeof buffer)) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        forwarder.consume(std::string_view(buffer, static_cast<std::size_t>(n)));
      }
      if (pipe.valid() && n == 0) {
        forwarder.finish();
        unwatch(pipe.get());
        pipe.reset();
      }
    }
  }

  // ---- bootstrap connections ----

  void accept_connections() {
    for (;;) {
      int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        if (errno == EINTR) continue;
        return;  // EAGAIN, or a transient error (EMFILE) that the next event retries
      }
      std::uint32_t id = next_connection_id_++;
      Connection& connection = connections_[id];
      connection.socket.reset(fd);
      connection.accepted_at = Clock::now();
      connection.reader.set_limit(wire::max_hello_size);
      if (!options_.hosts.empty()) {
        // A host that vanishes (link down, power) is noticed even without a child exit.
        int on = 1, idle = 10, interval = 5, probes = 3;
        ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
        ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
      }
      watch(fd, EPOLLIN, event_tag(Source::connection, id));
    }
  }

  // Reads and handles frames. Normally a bounded batch (level-triggered epoll calls again);
  // `until_closed` reads everything a dead rank left behind.
  void read_connection(std::uint32_t id, bool until_closed) {
    char buffer[65536];
    for (int batch = 0; until_closed || batch < 16; ++batch) {
      auto it = connections_.find(id);
      if (it == connections_.end()) return;
      ssize_t n = ::recv(it->second.socket.get(), buffer, sizeof buffer, 0);
      if (n < 0 && errno == EINTR) continue;
      // Nothing more for now (for a dead rank: a forked child may still hold the socket).
      if (n < 0 && errno == EAGAIN) return;
      if (n <= 0) {
        on_disconnect(id);
        return;
      }
      it->second.reader.feed(buffer, static_cast<std::size_t>(n));
      wire::Frame frame;
      for (;;) {
        auto found = connections_.find(id);  // a handler may close the connection
        if (found == connections_.end()) return;
        auto status = found->second.reader.next(frame);
        if (status == wire::FrameReader::Status::incomplete) break;
        if (status == wire::FrameReader::Status::oversized) {
          protocol_error(id, "message too large");
          return;
        }
        handle_frame(id, frame);
      }
    }
  }

  void handle_frame(std::uint32_t id, wire::Frame& frame) {
    Connection& connection = connections_.at(id);
    if (connection.rank < 0) {
      if (frame.type != wire::MsgType::hello) return protocol_error(id, "expected hello");
      return handle_hello(id, frame.payload);
    }
    RankProcess& rank = ranks_[connection.rank];
    std::string_view payload(frame.payload);
    switch (frame.type) {
      case wire::MsgType::put: {
        std::uint32_t key_size = 0;
        if (!wire::take_u32(payload, key_size) || key_size > payload.size() || key_size == 0)
          return protocol_error(id, "malformed put");
        pending_puts_.emplace_back(std::string(payload.substr(0, key_size)),
                                   std::string(payload.substr(key_size)));
        return;
      }
      case wire::MsgType::fence: {
        if (rank.in_fence) return protocol_error(id, "fence while already in a fence");
        rank.in_fence = true;
        if (++ranks_in_fence_ == options_.nranks)
          complete_fence();
        else
          fail_fence_if_stuck();
        return;
      }
      case wire::MsgType::get: {
        auto it = store_.find(frame.payload);
        if (it == store_.end())
          send_frame(id, wire::make_frame(wire::MsgType::get_missing));
        else
          send_frame(id, wire::make_frame(wire::MsgType::get_found, it->second));
        return;
      }
      case wire::MsgType::finalize:
        rank.finalized = true;
        send_frame(id, wire::make_frame(wire::MsgType::finalize_ok));
        fail_fence_if_stuck();
        return;
      case wire::MsgType::abort: {
        std::uint32_t code = 0;
        if (!wire::take_u32(payload, code)) return protocol_error(id, "malformed abort");
        int signed_code = static_cast<int>(code);
        send_frame(id, wire::make_frame(wire::MsgType::abort_ok));
        int status = signed_code & 0xff;
        fail_job(status == 0 ? 1 : status,
                 "rank " + std::to_string(rank.rank) + " called abort (code " +
                     std::to_string(signed_code) + "): " + std::string(payload));
        return;
      }
      default:
        return protocol_error(id, "unknown message type");
    }
  }

  void handle_hello(std::uint32_t id, std::string_view payload) {
    std::uint32_t rank_index = 0;
    if (!wire::take_u32(payload, rank_index) || payload.size() < wire::job_key_size)
      return protocol_error(id, "malformed hello");
    std::string_view key = payload.substr(0, wire::job_key_size);
    payload.remove_prefix(wire::job_key_size);
    // A launch token is good once, for its own rank: whoever shows it first gets the slot,
    // so a stolen token can at worst make the real rank fail (and the job end), never let a
    // stranger in unnoticed.
    const bool by_token = rank_index < static_cast<std::uint32_t>(options_.nranks) &&
                          !ranks_[rank_index].launch_token.empty() &&
                          wire::same_secret(key, ranks_[rank_index].launch_token);
    std::string problem;
    if (!by_token && !wire::same_secret(key, job_key_))
      problem = "wrong job key";  // says nothing about this job to a stranger
    else if (payload != job_id_)
      problem = "job id " + std::string(payload) + " is not this job's (" + job_id_ + ")";
    else if (rank_index >= static_cast<std::uint32_t>(options_.nranks))
      problem = "rank " + std::to_string(rank_index) + " is out of range";
    else if (ranks_[rank_index].joined)
      problem = "rank " + std::to_string(rank_index) + " has already connected once";
    if (!problem.empty()) {
      report("rejected a bootstrap connection: " + problem);
      Connection& connection = connections_.at(id);
      send_frame(id, wire::make_frame(wire::MsgType::reject, problem));
      connection.close_after_flush = true;
      if (connection.outbox.empty()) close_connection(id);
      return;
    }
    RankProcess& rank = ranks_[rank_index];
    connections_.at(id).rank = static_cast<int>(rank_index);
    connections_.at(id).reader.set_limit(wire::max_payload_size);
    rank.joined = true;
    rank.connection_id = id;
    rank.launch_token.clear();  // spent
    send_frame(id, wire::make_frame(wire::MsgType::hello_ok, job_key_));
  }

  void complete_fence() {
    for (auto& [key, value] : pending_puts_) store_[std::move(key)] = std::move(value);
    pending_puts_.clear();
    ranks_in_fence_ = 0;
    for (RankProcess& rank : ranks_) {
      rank.in_fence = false;
      if (rank.connection_id)
        send_frame(*rank.connection_id, wire::make_frame(wire::MsgType::fence_ok));
    }
  }

  // A fence needs every rank; one that finalized or exited will never come. Fail the fence
  // (the waiting ranks' fence() returns an error) rather than let them hang.
  void fail_fence_if_stuck() {
    if (ranks_in_fence_ == 0) return;
    const RankProcess* missing = nullptr;
    for (const RankProcess& rank : ranks_)
      if (!rank.in_fence && (rank.finalized || rank.reaped)) missing = &rank;
    if (missing == nullptr) return;
    std::string reason = missing->who() + (missing->finalized ? " finalized" : " exited") +
                         " while other ranks wait in a fence, so the fence can never complete";
    report(reason);
    ranks_in_fence_ = 0;
    for (RankProcess& rank : ranks_) {
      if (!rank.in_fence) continue;
      rank.in_fence = false;
      if (rank.connection_id)
        send_frame(*rank.connection_id, wire::make_frame(wire::MsgType::fence_failed, reason));
    }
  }

  void send_frame(std::uint32_t id, const std::string& frame) {
    Connection& connection = connections_.at(id);
    std::string_view rest(frame);
    if (connection.outbox.empty()) {
      ssize_t n =
          ::send(connection.socket.get(), frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno != EAGAIN && errno != EINTR) return;  // gone: the read side sees EOF
      if (n > 0) rest.remove_prefix(static_cast<std::size_t>(n));
      if (rest.empty()) return;
      rewatch(connection.socket.get(), EPOLLIN | EPOLLOUT, event_tag(Source::connection, id));
    }
    connection.outbox.append(rest);
  }

  void flush_outbox(std::uint32_t id) {
    auto it = connections_.find(id);
    if (it == connections_.end()) return;
    Connection& connection = it->second;
    while (!connection.outbox.empty()) {
      ssize_t n = ::send(connection.socket.get(), connection.outbox.data(),
                         connection.outbox.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      if (n < 0) {
        connection.outbox.clear();
        break;
      }
      connection.outbox.erase(0, static_cast<std::size_t>(n));
    }
    if (connection.close_after_flush) return close_connection(id);
    rewatch(connection.socket.get(), EPOLLIN, event_tag(Source::connection, id));
  }

  void protocol_error(std::uint32_t id, const std::string& what) {
    int rank = connections_.at(id).rank;
    report("protocol error on the bootstrap connection of " +
           (rank >= 0 ? "rank " + std::to_string(rank) : std::string("an unidentified process")) +
           ": " + what + "; closing it");
    on_disconnect(id);
  }

  void on_disconnect(std::uint32_t id) {
    int rank_index = connections_.at(id).rank;
    close_connection(id);
    if (rank_index < 0) return;
    RankProcess& rank = ranks_[rank_index];
    rank.connection_id.reset();
    if (!rank.finalized && !rank.reaped && !terminating_) {
      rank.disconnect_deadline = Clock::now() + disconnect_grace;
      if (options_.recovery) notify_failure(rank);
    }
  }

  void close_connection(std::uint32_t id) {
    auto it = connections_.find(id);
    if (it == connections_.end()) return;
    unwatch(it->second.socket.get());
    if (it->second.rank >= 0) ranks_[it->second.rank].connection_id.reset();
    connections_.erase(it);
  }

  const Options& options_;
  std::string job_id_;
  std::string job_key_;
  BootDirectory boot_directory_;
  std::string boot_address_;  // the ranks' SLUICE_BOOT_ADDR
  UniqueFd listener_, signal_fd_, epoll_;
  sigset_t original_signal_mask_{};
  struct sigaction original_sigpipe_action_ {};
  std::vector<int> bind_cpus_;  // CPUs ranks are bound to, round robin (empty: no binding)
  std::vector<cpu_set_t> rank_cpu_sets_;  // --bind numa|bind: each rank's CPUs
  std::vector<std::string> thread_cpus_;  // ... and its progress thread's (SLUICE_PROGRESS_CPUS)

  std::vector<RankProcess> ranks_;
  std::unordered_map<pid_t, int> pid_to_rank_;
  int unreaped_ranks_ = 0;
  std::unordered_map<std::uint32_t, Connection> connections_;
  std::uint32_t next_connection_id_ = 0;

  // The key-value store: puts wait in pending_puts_ until the fence that publishes them.
  std::unordered_map<std::string, std::string> store_;
  std::vector<std::pair<std::string, std::string>> pending_puts_;
  int ranks_in_fence_ = 0;

  bool terminating_ = false;
  std::optional<int> exit_status_;
  std::optional<Clock::time_point> job_deadline_, kill_deadline_;
};

}  // namespace

int run_job(const Options& options) {
  Launcher launcher(options);
  return launcher.run();
}

}  // namespace sluicerun
