// Remote launch (--hosts, --launch): which host each rank runs on, the command line that
// starts it there (the launch command with {host}, and an `env SLUICE_...` prefix when the
// launch command does not pass the environment through), and the one-time launch tokens
// that stand in for the job key, passed on the rank's standard input (never on a command
// line). Without --hosts every rank runs
// here and its command line is the program's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "options.hpp"

namespace sluicerun {

// Where a rank runs: its host (index in Options::hosts, -1: this host) and its place among
// the ranks of that host.
struct RankLocation {
  int host = -1;
  int local_rank = 0;
  int local_size = 1;
};

class RemoteLaunch {
 public:
  // Places the ranks: each host's slots in order, then round again while ranks remain.
  explicit RemoteLaunch(const Options& options);

  // Issues the launch tokens when the command line carries the environment; false when
  // the kernel gives no random bytes.
  bool issue_tokens(std::string& error);

  const RankLocation& location(int rank) const { return locations_[rank]; }
  // The rank's launch token (empty: it proves itself with the job key from its environment).
  const std::string& launch_token(int rank) const { return tokens_[rank]; }

  // What the rank must read first on its standard input (SLUICE_LAUNCH_TOKEN=stdin): its
  // launch token and a newline; empty when it has none.
  std::string stdin_text(int rank) const;

  // The rank's argv, given its environment (see remote_launch.cpp).
  std::vector<std::string> argv_for(int rank, const std::vector<std::string>& env) const;

  // With --hosts and no --launch-keeps-env, every SLUICE_* variable of `env` (and what -x
  // set) goes on the launch command line: fails when one is not shell-safe.
  bool check_environment(const std::vector<std::string>& env, std::string& error) const;

 private:
  bool carries_environment() const { return !options_.hosts.empty() && !options_.launch_keeps_env; }
  bool passed_on(const std::string& entry) const;  // goes on the launch command line

  const Options& options_;
  std::vector<RankLocation> locations_;
  std::vector<std::string> tokens_;
};

}  // namespace sluicerun
