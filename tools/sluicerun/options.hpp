// Command line of sluicerun.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sluicerun {

// automatic: bind to cores when every rank gets one, otherwise leave placement to the kernel.
// numa / scatter: [MPC-Threads]' placements (src/coll/placement.hpp: policies numa and bind),
// which also give each rank's progress thread its CPUs (SLUICE_PROGRESS_CPUS).
enum class BindPolicy { automatic, none, core, numa, scatter };

// A host of a multi-host job and how many ranks it takes per round of placement.
struct HostSlots {
  std::string name;
  int slots = 1;
};

struct Options {
  int nranks = 0;
  // Multi-host (--hosts): ranks fill each host's slots in order (blocks), and go round
  // again if -n asks for more ranks than slots. Empty: every rank on this host.
  std::vector<HostSlots> hosts;
  std::string launch;  // command prefix with {host}, e.g. "ip netns exec {host}"
  // The launch command passes the environment through (ip netns exec, sudo -E): no
  // `env SLUICE_...` prefix, so the job key stays off command lines.
  bool launch_keeps_env = false;
  std::string boot_addr;  // IP[:PORT] the bootstrap TCP listener binds (empty: derived)
  BindPolicy bind = BindPolicy::automatic;
  bool tag_output = false;
  bool report_bindings = false;
  // --enable-recovery: a rank that dies does not end the job; the others are told (their
  // requests involving it fail, ULFM-style) and run on. Exit status: the first failure's.
  bool recovery = false;
  // Bootstrap connections that have not proven the job key yet (strangers): how many may
  // wait at once (a new one beyond closes the oldest silent one; unset: the number of
  // ranks + 64, so that a job's own ranks, all connecting at start, never need evicting) and
  // for how long.
  std::optional<int> handshake_limit;
  double handshake_timeout_seconds = 10;
  // --stats text|json: the launcher's counters (boot.*) on stderr when the job ends.
  enum class Stats { none, text, json } stats = Stats::none;
  std::optional<double> timeout_seconds;  // --timeout, else MPIEXEC_TIMEOUT
  std::string timeout_text;               // as the user wrote it, for messages
  // -x NAME[=VALUE], -genv/-env NAME VALUE: "NAME=VALUE" set in every rank's environment
  // (and passed on the launch command line of --hosts jobs, like the SLUICE_* variables).
  std::vector<std::string> exports;
  std::vector<std::string> command;  // program and its arguments
};

// What parse_options decided: run with `options`, or print `message` and exit with
// `exit_status` (help, version, usage error).
struct ParseResult {
  std::optional<Options> options;
  std::string message;
  int exit_status = 0;
};

ParseResult parse_options(int argc, char** argv);

std::string usage_text();

}  // namespace sluicerun
