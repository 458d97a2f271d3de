// Walks the whole configuration table (sluice/introspect.hpp) and starts a real 2-rank
// job for every numeric key at its minimum, its maximum, one below and one above, with
// garbage ("abc") and with an empty value; boolean and choice keys get the garbage and
// the empty value (and 0 and -1 where they are outside the range). Each job must either work (the
// values inside the range) or stop with the error that names the key, the value and the range (the
// others), in bounded time and without a signal. String keys (interface names, CPU lists,
// paths, fault specifications) get garbage and the empty value: each job works or stops with
// an error that names the key and the value; SLUICE_STATS_FILE in a directory that does not
// exist must be refused at start-up.
//
//   mp_config_ranges [--launcher SLUICERUN] [--program PROG [ARGS]] [--jobs N] [--only KEY]
//                                       the walk; default: this build's sluicerun and
//                                       this program's job mode
//   sluicerun -n 2 mp_config_ranges job one job: a few messages both ways (eager,
//                                       rendezvous, pipelined), contents checked
// --launcher/--program run the walk against another build (e.g. the code before the
// ranges: a negative SLUICE_SHM_RING_CELLS hangs there, SLUICE_TCP_QUEUE_LIMIT=0 deadlocks).
#include <sluice/introspect.hpp>
#include <sluice/sluice.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace is = sluice::introspect;

// One job: rank 0 and 1 exchange messages of several sizes, both ways, and check them.
int run_job() {
  std::unique_ptr<sluice::Session> session;
  try {
    session = std::make_unique<sluice::Session>();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mp_config_ranges: %s\n", e.what());
    return 3;
  }
  sluice::Session& s = *session;
  if (s.size() != 2) return 2;
  const int peer = 1 - s.rank();
  int bad = 0;
  for (std::size_t size :
       {std::size_t{8}, std::size_t{5000}, std::size_t{70000}, std::size_t{1} << 20}) {
    std::vector<unsigned char> out(size), in(size, 0);
    for (std::size_t i = 0; i < size; ++i)
      out[i] = static_cast<unsigned char>(i * 7 + static_cast<std::size_t>(s.rank()));
    std::vector<sluice::Request> reqs;
    reqs.push_back(s.irecv(std::as_writable_bytes(std::span(in)), peer, 5));
    reqs.push_back(s.isend(std::as_bytes(std::span(out)), peer, 5));
    if (s.waitall(reqs) != sluice::Errc::ok) ++bad;
    for (std::size_t i = 0; i < size; ++i)
      if (in[i] != static_cast<unsigned char>(i * 7 + static_cast<std::size_t>(peer))) {
        ++bad;
        break;
      }
  }
  s.barrier();
  if (bad) std::fprintf(stderr, "rank %d: %d exchanges failed\n", s.rank(), bad);
  return bad ? 1 : 0;
}

struct Case {
  std::string key;    // SLUICE_...
  std::string value;  // as set
  bool valid = false;
  bool either = false;  // a string key: works, or an error that names key and value
  std::string range;    // what the error must name ("" for keys without a range)
  std::string drivers;
};

struct Running {
  Case c;
  pid_t pid = -1;
  std::string out_path;
  std::chrono::steady_clock::time_point start;
};

// The drivers under which a component's keys take effect.
std::string drivers_for(const std::string& component) {
  if (component == "tcp" || component == "net") return "tcp";
  if (component == "udp" || component == "reliable") return "udp";
  return "";  // the default: shm between the two local ranks
}

std::string in_unit(const is::ConfigEntry& e, long long v) {
  return e.type == "time" ? std::to_string(v) + "ns" : std::to_string(v);
}

std::vector<Case> cases(const std::string& only) {
  std::vector<Case> out;
  for (const auto& comp : is::config()) {
    for (const auto& e : comp.keys) {
      if (!only.empty() && e.key != only) continue;
      auto add = [&](std::string value, bool valid) {
        out.push_back({e.key, std::move(value), valid, false, e.range, drivers_for(comp.name)});
      };
      if (e.has_range) {
        auto inside = [&](long long v) {
          return (v >= e.min && v <= e.max) || (e.or_zero && v == 0);
        };
        for (long long v : {static_cast<long long>(e.min), static_cast<long long>(e.max),
                            static_cast<long long>(e.min) - 1, static_cast<long long>(e.max) + 1})
          add(in_unit(e, v), inside(v));
        // The values that cannot work and hung the code before the ranges: a limit of 0
        // (SLUICE_TCP_QUEUE_LIMIT=0 deadlocked), a negative count (SLUICE_SHM_RING_CELLS=-1
        // spun forever).
        if (e.min > 1 && !e.or_zero) add(in_unit(e, 0), false);
        if (e.type == "int" && e.min > 0) add("-1", false);
      } else if (e.type != "bool" && e.type != "choice") {
        for (std::string value : {"abc", ""})
          out.push_back({e.key, value, false, true, "", drivers_for(comp.name)});
        if (e.key == "SLUICE_STATS_FILE")
          out.push_back({e.key, "/nonexistent-dir/stats.%r", false, false, "", ""});
        continue;
      }
      add("abc", false);
      add("", false);
    }
  }
  return out;
}

Running start(const Case& c, const std::string& launcher, const std::vector<std::string>& program,
              double timeout_s) {
  Running r;
  r.c = c;
  char tmpl[] = "/tmp/mp_config_ranges.XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd < 0) {
    std::perror("mkstemp");
    std::exit(2);
  }
  r.out_path = tmpl;
  r.start = std::chrono::steady_clock::now();
  r.pid = fork();
  if (r.pid == 0) {
    setpgid(0, 0);  // the whole job can be killed on a hang
    dup2(fd, 1);
    dup2(fd, 2);
    // A clean slate: only the case's key (and its drivers) set.
    std::vector<std::string> ours;
    for (char** e = environ; *e; ++e)
      if (!std::strncmp(*e, "SLUICE_", 7)) ours.emplace_back(*e, std::strcspn(*e, "="));
    for (const std::string& name : ours) unsetenv(name.c_str());
    setenv(c.key.c_str(), c.value.c_str(), 1);
    if (!c.drivers.empty() && c.key != "SLUICE_DRIVERS")
      setenv("SLUICE_DRIVERS", c.drivers.c_str(), 1);
    // The statistics file is written only with statistics on.
    if (c.key == "SLUICE_STATS_FILE" && c.value.starts_with("/nonexistent"))
      setenv("SLUICE_STATS", "1", 1);
    // The progress thread's own keys act only with it running.
    if (c.key.starts_with("SLUICE_PROGRESS_") && c.key != "SLUICE_PROGRESS_THREAD")
      setenv("SLUICE_PROGRESS_THREAD", "on", 1);
    std::vector<std::string> args = {launcher, "-n", "2", "--timeout",
                                     std::to_string(static_cast<int>(timeout_s))};
    args.insert(args.end(), program.begin(), program.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    std::perror("execv");
    _exit(127);
  }
  close(fd);
  return r;
}

std::string slurp(const std::string& path) {
  std::string text;
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    std::fclose(f);
  }
  return text;
}

// Judges a finished job; empty when it behaved.
std::string judge(const Running& r, int status, bool timed_out) {
  const std::string out = slurp(r.out_path);
  const std::string what = r.c.key + "=\"" + r.c.value + "\" (" +
                           (r.c.either  ? "string"
                            : r.c.valid ? "valid"
                                        : "invalid") +
                           (r.c.range.empty() ? "" : ", range " + r.c.range) + ")";
  auto fail = [&](const std::string& why) { return what + ": " + why + "\n--- output:\n" + out; };
  if (timed_out) return fail("did not end in time (hang)");
  if (WIFSIGNALED(status))
    return fail("the launcher was killed by signal " + std::to_string(WTERMSIG(status)));
  if (out.find("signal") != std::string::npos) return fail("a rank was killed by a signal");
  const int rc = WEXITSTATUS(status);
  if (rc == 124) return fail("the launcher's timeout killed the job (hang)");
  if (r.c.either) {
    if (rc == 0) return "";
    if (out.find(r.c.key) == std::string::npos || out.find(r.c.value) == std::string::npos)
      return fail("the error does not name " + r.c.key + " and the value");
    return "";
  }
  if (r.c.valid)
    return rc == 0 ? "" : fail("a valid value failed (status " + std::to_string(rc) + ")");
  if (rc == 0) return fail("an invalid value was accepted");
  const std::string named = r.c.key + "=\"" + r.c.value + "\"";
  if (out.find(named) == std::string::npos) return fail("the error does not name " + named);
  if (!r.c.range.empty() && out.find(r.c.range) == std::string::npos)
    return fail("the error does not name the range " + r.c.range);
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && !std::strcmp(argv[1], "job")) return run_job();
  std::string launcher, only;
  std::vector<std::string> program;
  int jobs = 3;
  double timeout_s = 60;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--launcher" && i + 1 < argc)
      launcher = argv[++i];
    else if (a == "--jobs" && i + 1 < argc)
      jobs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--only" && i + 1 < argc)
      only = argv[++i];
    else if (a == "--timeout" && i + 1 < argc)
      timeout_s = std::atof(argv[++i]);
    else if (a == "--program") {
      program.assign(argv + i + 1, argv + argc);
      break;
    } else {
      std::fprintf(stderr,
                   "usage: mp_config_ranges [--launcher SLUICERUN] [--jobs N] [--timeout S] "
                   "[--only SLUICE_KEY] [--program PROG ARGS...]\n");
      return 2;
    }
  }
  // This program's own directory holds sluicerun in the build (build/bin).
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 2;
  self[n] = '\0';
  if (launcher.empty()) {
    std::string dir(self);
    launcher = dir.substr(0, dir.rfind('/')) + "/sluicerun";
  }
  if (program.empty()) program = {self, "job"};

  const std::vector<Case> all = cases(only);
  if (all.empty()) {
    std::fprintf(stderr, "no keys to walk\n");
    return 2;
  }
  std::deque<Case> todo(all.begin(), all.end());
  std::vector<Running> running;
  std::vector<std::string> failures;
  int done = 0;
  // The launcher's own --timeout ends a hung job; this one is the backstop (+30 s).
  const auto backstop = std::chrono::duration<double>(timeout_s + 30);
  while (!todo.empty() || !running.empty()) {
    while (!todo.empty() && static_cast<int>(running.size()) < jobs) {
      running.push_back(start(todo.front(), launcher, program, timeout_s));
      todo.pop_front();
    }
    bool reaped = false;
    for (std::size_t i = 0; i < running.size();) {
      Running& r = running[i];
      int status = 0;
      const pid_t got = waitpid(r.pid, &status, WNOHANG);
      const bool late = std::chrono::steady_clock::now() - r.start > backstop;
      if (got == 0 && !late) {
        ++i;
        continue;
      }
      if (got == 0) {
        kill(-r.pid, SIGKILL);
        waitpid(r.pid, &status, 0);
      }
      const std::string verdict = judge(r, status, got == 0);
      ++done;
      if (!verdict.empty()) {
        failures.push_back(verdict);
        std::fprintf(stderr, "FAILED %s\n", verdict.c_str());
      }
      unlink(r.out_path.c_str());
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      reaped = true;
    }
    if (!reaped) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::printf("%d start-ups over %zu cases: %zu failed\n", done, all.size(), failures.size());
  return failures.empty() ? 0 : 1;
}
