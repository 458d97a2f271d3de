#include "remote_launch.hpp"

#include "posix.hpp"

namespace sluicerun {

namespace {

// A value passed on a launch command line may cross two shells (ours, and ssh's on the
// remote host): only characters no shell interprets, so no quoting is needed anywhere.
bool shell_safe(std::string_view entry) {
  for (char c : entry)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          std::string_view("_.,:=/+@%-").find(c) != std::string_view::npos))
      return false;
  return !entry.empty();
}

}  // namespace

// Blocks: each host's slots in order, then round again while ranks remain. Local ranks
// count in rank order within a host. Without --hosts every rank is local.
RemoteLaunch::RemoteLaunch(const Options& options)
    : options_(options),
      locations_(static_cast<std::size_t>(options.nranks)),
      tokens_(static_cast<std::size_t>(options.nranks)) {
  if (options_.hosts.empty()) {
    for (int r = 0; r < options_.nranks; ++r) {
      locations_[r].local_rank = r;
      locations_[r].local_size = options_.nranks;
    }
    return;
  }
  std::vector<int> on_host(options_.hosts.size(), 0);
  std::size_t host = 0;
  int used = 0;
  for (RankLocation& location : locations_) {
    while (used >= options_.hosts[host].slots) {
      host = (host + 1) % options_.hosts.size();
      used = 0;
    }
    location.host = static_cast<int>(host);
    location.local_rank = on_host[host]++;
    ++used;
  }
  for (RankLocation& location : locations_) location.local_size = on_host[location.host];
}

bool RemoteLaunch::issue_tokens(std::string& error) {
  if (!carries_environment()) return true;
  for (std::string& token : tokens_) {
    std::optional<std::string> secret = random_secret();
    if (!secret) {
      error = "cannot read random bytes for the job key";
      return false;
    }
    token = std::move(*secret);
  }
  return true;
}

// The rank's argv: the program, or with --hosts the launch command run by the shell
//   /bin/sh -c 'exec <launch with {host}> env SLUICE_K=V... "$@"' sluicerun-launch prog args...
// so the launch command may use shell syntax and the program's arguments stay intact.
// The `env` prefix carries every SLUICE_* variable of the rank's environment (rank, store
// address, the user's settings) on the command line itself: a launcher such as ssh starts
// the program with the remote host's environment, not ours. The job key is the exception:
// the rank gets a one-time launch token instead, on its standard input (a command line is
// public: ps shows it to every user of both hosts), and the key over the store connection.
// What goes on a remote rank's command line: the SLUICE_* variables but the job key, and
// what -x / -genv set.
bool RemoteLaunch::passed_on(const std::string& entry) const {
  if (entry.starts_with("SLUICE_")) return !entry.starts_with("SLUICE_JOB_KEY=");
  const std::string_view name(entry.data(), entry.find('='));
  for (const std::string& e : options_.exports)
    if (std::string_view(e.data(), e.find('=')) == name) return true;
  return false;
}

std::vector<std::string> RemoteLaunch::argv_for(int rank,
                                                const std::vector<std::string>& env) const {
  const RankLocation& location = locations_[rank];
  if (location.host < 0) return options_.command;
  std::string launch = options_.launch;
  const std::string& host = options_.hosts[location.host].name;
  for (auto at = launch.find("{host}"); at != std::string::npos;
       at = launch.find("{host}", at + host.size()))
    launch.replace(at, 6, host);
  std::string prefix;
  if (!options_.launch_keeps_env) {
    prefix = " env";
    for (const std::string& entry : env)
      if (passed_on(entry)) prefix += " " + entry;  // shell-safe: check_environment checked
    prefix += " SLUICE_LAUNCH_TOKEN=stdin";         // the token itself: stdin_text()
  }
  std::vector<std::string> argv = {"/bin/sh", "-c", "exec " + launch + prefix + " \"$@\"",
                                   "sluicerun-launch"};
  argv.insert(argv.end(), options_.command.begin(), options_.command.end());
  return argv;
}

std::string RemoteLaunch::stdin_text(int rank) const {
  return tokens_[rank].empty() ? std::string() : tokens_[rank] + "\n";
}

bool RemoteLaunch::check_environment(const std::vector<std::string>& env,
                                     std::string& error) const {
  if (!carries_environment()) return true;
  for (const std::string& entry : env)
    if (passed_on(entry) && !shell_safe(entry)) {
      error = "--launch: " + entry.substr(0, entry.find('=')) +
              " has characters a remote shell would interpret (allowed: letters, digits and "
              "_.,:=/+@%-); it cannot be passed on the launch command line";
      return false;
    }
  return true;
}

}  // namespace sluicerun
