#include "options.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace sluicerun {

namespace {

constexpr int max_ranks = 4096;
constexpr int usage_error_status = 2;
constexpr int min_handshake_limit = 1, max_handshake_limit = 65536;
constexpr double min_handshake_seconds = 0.1, max_handshake_seconds = 3600;

ParseResult usage_error(const std::string& what) {
  return {std::nullopt, "sluicerun: " + what + "\n" + usage_text(), usage_error_status};
}

bool parse_rank_count(std::string_view text, int& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && out >= 1 && out <= max_ranks;
}

bool parse_seconds(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return *end == '\0' && std::isfinite(out) && out > 0;
}

// Host names go into a shell command line: keep them to characters that need no quoting.
bool valid_host_name(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '_' || c == '.'))
      return false;
  return true;
}

bool valid_variable_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

// "h1,h2" or "h1:2,h2:2".
bool parse_hosts(std::string_view text, std::vector<HostSlots>& hosts, std::string& problem) {
  while (!text.empty()) {
    auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    HostSlots host;
    auto colon = item.find(':');
    host.name = std::string(item.substr(0, colon));
    if (colon != std::string_view::npos && !parse_rank_count(item.substr(colon + 1), host.slots)) {
      problem = "bad slot count in '" + std::string(item) + "'";
      return false;
    }
    if (!valid_host_name(host.name)) {
      problem = "bad host name '" + host.name + "' (letters, digits, '-', '_', '.')";
      return false;
    }
    hosts.push_back(std::move(host));
  }
  if (hosts.empty()) problem = "--hosts needs at least one host";
  return !hosts.empty();
}

}  // namespace

std::string usage_text() {
  return "usage: sluicerun -n N [--bind auto|none|core|numa|bind] [--report-bindings]\n"
         "                 [--tag-output] [--timeout S] [--enable-recovery] [--] prog [args...]\n"
         "       sluicerun --hosts H1[:SLOTS],H2[:SLOTS],... --launch 'CMD {host}' [-n N]\n"
         "                 [--boot-addr IP[:PORT]] [options] [--] prog [args...]\n"
         "  -n, -np N        number of ranks (with --hosts: default the total of the slots)\n"
         "  --hosts LIST     run on these hosts: ranks fill each host's slots (default 1) in\n"
         "                   order, in blocks, going round again if N exceeds the slots\n"
         "  --launch CMD     how to start a rank on a host, {host} replaced by its name, e.g.\n"
         "                   'ip netns exec {host}' or 'ssh {host}'; the rank's SLUICE_* "
         "variables\n"
         "                   go on its command line (env K=V ... prog), visible in ps; the\n"
         "                   job key does not: a one-time token per rank stands in for it,\n"
         "                   sent on the rank's standard input (the launch command must\n"
         "                   pass it through, as ssh does without -n)\n"
         "  --launch-keeps-env  the launch command passes the environment through (ip netns\n"
         "                   exec, sudo -E): no env prefix at all\n"
         "  --boot-addr IP[:PORT]  where the bootstrap store listens (TCP) for --hosts jobs\n"
         "                   (default: the first non-loopback IPv4 address, else 127.0.0.1)\n"
         "  --bind auto|none|core  bind rank r to core r % ncores (default auto: core when\n"
         "                   there are at least as many cores as ranks, else none)\n"
         "  --bind numa      ranks spread over the NUMA nodes, each progress thread on a\n"
         "                   free core of its rank's node (its rank's core if none)\n"
         "  --bind bind      ranks scattered over the host, progress threads on their rank's core\n"
         "  --report-bindings  every rank prints the CPUs it and its progress thread run on\n"
         "  --enable-recovery  a rank that dies does not end the job: the others are told and\n"
         "                   their requests involving it fail (MPIX_ERR_PROC_FAILED); the\n"
         "                   exit status is the first failure's (alias --disable-auto-cleanup)\n"
         "  --tag-output     prefix every output line with [rank]\n"
         "  --timeout S      kill the job if it runs longer than S seconds (exit status 124);\n"
         "                   without it, MPIEXEC_TIMEOUT (seconds) if set\n"
         "  -x NAME[=VALUE]  set NAME in every rank's environment (its value here when no\n"
         "                   VALUE is given); also -genv NAME VALUE, -env NAME VALUE\n"
         "  --map-by core|numa|socket|package  the same as --bind core / --bind numa\n"
         "  --oversubscribe  accepted: sluicerun never refuses more ranks than cores\n"
         "  -V, --version    print the version\n"
         "  --boot-handshake-limit N  bootstrap connections that may wait at once to prove\n"
         "                   the job key (1..65536, default: the ranks + 64); a new one beyond\n"
         "                   it closes the oldest silent one\n"
         "  --boot-handshake-timeout S  how long such a connection may take (0.1..3600,\n"
         "                   default 10)\n"
         "  --stats text|json  the launcher's counters (boot.*) on stderr when the job ends\n"
         "                   (json: one line, {\"rank\":-1,\"counters\":{...}})\n"
         "  -h, --help       show this help\n";
}

ParseResult parse_options(int argc, char** argv) {
  Options options;
  bool have_ranks = false;
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.empty() || arg[0] != '-') break;  // the program
    // Accept both "--opt value" and "--opt=value".
    std::string name = arg, inline_value;
    bool has_inline_value = false;
    if (auto eq = arg.find('='); eq != std::string::npos && arg.rfind("--", 0) == 0) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
      has_inline_value = true;
    }
    auto take_value = [&](std::string& value) {
      if (has_inline_value) {
        value = inline_value;
        return true;
      }
      if (i + 1 >= argc) return false;
      value = argv[++i];
      return true;
    };

    std::string value;
    if (name == "-h" || name == "--help") {
      return {std::nullopt, usage_text(), 0};
    } else if (name == "-V" || name == "--version") {
      std::string_view self = argv[0];
      self = self.substr(self.rfind('/') == std::string_view::npos ? 0 : self.rfind('/') + 1);
      return {std::nullopt, std::string(self) + " (Sluice) " SLUICE_VERSION "\n", 0};
    } else if (name == "--oversubscribe") {
      // Nothing to allow: ranks beyond the cores run unbound (--bind auto).
    } else if (name == "-x") {
      if (!take_value(value)) return usage_error("-x needs NAME or NAME=VALUE");
      const auto eq = value.find('=');
      const std::string var = value.substr(0, eq);
      if (!valid_variable_name(var)) return usage_error("-x: bad variable name '" + var + "'");
      if (eq == std::string::npos) {
        const char* here = std::getenv(var.c_str());
        if (!here) return usage_error("-x " + var + ": not set in this environment");
        value = var + "=" + here;
      }
      options.exports.push_back(value);
    } else if (name == "-genv" || name == "-env" || name == "--genv") {
      if (i + 2 >= argc) return usage_error(name + " needs NAME VALUE");
      const std::string var = argv[++i];
      if (!valid_variable_name(var)) return usage_error(name + ": bad variable name '" + var + "'");
      options.exports.push_back(var + "=" + argv[++i]);
    } else if (name == "--map-by") {
      if (!take_value(value)) return usage_error("--map-by needs core, numa, socket or package");
      if (value == "core")
        options.bind = BindPolicy::core;
      else if (value == "numa" || value == "socket" || value == "package")
        options.bind = BindPolicy::numa;
      else
        return usage_error("--map-by '" + value +
                           "': only core (= --bind core) and numa, socket, package (= --bind "
                           "numa) have a Sluice equivalent");
    } else if (name == "-n" || name == "-np" || name == "--np" || name == "--n") {
      if (!take_value(value)) return usage_error(name + " needs a number of ranks");
      if (!parse_rank_count(value, options.nranks))
        return usage_error("bad number of ranks '" + value + "' (1.." + std::to_string(max_ranks) +
                           ")");
      have_ranks = true;
    } else if (name == "--bind" || name == "--bind-to") {
      if (!take_value(value)) return usage_error(name + " needs auto, none, core, numa or bind");
      if (value == "numa") {
        options.bind = BindPolicy::numa;
      } else if (value == "bind") {
        options.bind = BindPolicy::scatter;
      } else if (value == "none") {
        options.bind = BindPolicy::none;
      } else if (value == "auto") {
        options.bind = BindPolicy::automatic;
      } else if (value == "core") {
        options.bind = BindPolicy::core;
      } else {
        return usage_error("bad binding '" + value + "' (auto, none, core, numa or bind)");
      }
    } else if (name == "--hosts" || name == "--host" || name == "-H") {
      std::string problem;
      if (!take_value(value)) return usage_error(name + " needs a list of hosts");
      if (!parse_hosts(value, options.hosts, problem)) return usage_error(problem);
    } else if (name == "--launch") {
      if (!take_value(value)) return usage_error("--launch needs a command");
      if (value.find("{host}") == std::string::npos)
        return usage_error("--launch '" + value + "' has no {host} in it");
      options.launch = value;
    } else if (name == "--launch-keeps-env") {
      options.launch_keeps_env = true;
    } else if (name == "--boot-addr") {
      if (!take_value(value) || value.empty()) return usage_error("--boot-addr needs an address");
      options.boot_addr = value;
    } else if (name == "--report-bindings") {
      options.report_bindings = true;
    } else if (name == "--enable-recovery" || name == "--disable-auto-cleanup") {
      options.recovery = true;
    } else if (name == "--tag-output") {
      options.tag_output = true;
    } else if (name == "--boot-handshake-limit") {
      if (!take_value(value)) return usage_error(name + " needs a number of connections");
      int limit = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), limit);
      options.handshake_limit = limit;
      if (ec != std::errc() || ptr != value.data() + value.size() || limit < min_handshake_limit ||
          limit > max_handshake_limit)
        return usage_error("bad value --boot-handshake-limit '" + value + "': out of range " +
                           std::to_string(min_handshake_limit) + ".." +
                           std::to_string(max_handshake_limit));
    } else if (name == "--boot-handshake-timeout") {
      if (!take_value(value)) return usage_error(name + " needs a number of seconds");
      double& seconds = options.handshake_timeout_seconds;
      if (!parse_seconds(value, seconds) || seconds < min_handshake_seconds ||
          seconds > max_handshake_seconds)
        return usage_error("bad value --boot-handshake-timeout '" + value +
                           "': out of range 0.1..3600 (seconds)");
    } else if (name == "--stats") {
      if (!take_value(value)) return usage_error("--stats needs text or json");
      if (value == "text" || value == "1")
        options.stats = Options::Stats::text;
      else if (value == "json")
        options.stats = Options::Stats::json;
      else
        return usage_error("bad value --stats '" + value + "' (text or json)");
    } else if (name == "--timeout") {
      double seconds = 0;
      if (!take_value(value)) return usage_error("--timeout needs a number of seconds");
      if (!parse_seconds(value, seconds))
        return usage_error("bad timeout '" + value + "' (a positive number of seconds)");
      options.timeout_seconds = seconds;
      options.timeout_text = value;
    } else {
      return usage_error("unknown option '" + arg + "'");
    }
  }
  if (!options.hosts.empty()) {
    if (options.launch.empty()) return usage_error("--hosts needs --launch 'CMD {host}'");
    if (!have_ranks) {
      long total = 0;
      for (const HostSlots& host : options.hosts) total += host.slots;
      if (total > max_ranks)
        return usage_error("the hosts have more than " + std::to_string(max_ranks) + " slots");
      options.nranks = static_cast<int>(total);
      have_ranks = true;
    }
  } else if (!options.launch.empty() || !options.boot_addr.empty() || options.launch_keeps_env) {
    return usage_error("--launch, --launch-keeps-env and --boot-addr need --hosts");
  }
  if (!have_ranks) return usage_error("the number of ranks (-n N) is required");
  // Open MPI's and MPICH's variable for a job time limit, when --timeout is not given.
  if (const char* limit = std::getenv("MPIEXEC_TIMEOUT"); limit && !options.timeout_seconds) {
    double seconds = 0;
    if (!parse_seconds(limit, seconds))
      return usage_error("bad MPIEXEC_TIMEOUT '" + std::string(limit) +
                         "' (a positive number of seconds)");
    options.timeout_seconds = seconds;
    options.timeout_text = limit;
  }
  if (i >= argc) return usage_error("no program to run");
  options.command.assign(argv + i, argv + argc);
  return {std::move(options), {}, 0};
}

}  // namespace sluicerun
