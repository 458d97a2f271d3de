#include "options.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace sluicerun {

namespace {

constexpr int max_ranks = 4096;
constexpr int usage_error_status = 2;

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

}  // namespace

std::string usage_text() {
  return "usage: sluicerun -n N [--bind auto|none|core|numa|bind] [--report-bindings]\n"
         "                 [--tag-output] [--timeout S] [--] prog [args...]\n"
         "  -n, -np N        number of ranks to start on this host\n"
         "  --bind auto|none|core  bind rank r to core r % ncores (default auto: core when\n"
         "                   there are at least as many cores as ranks, else none)\n"
         "  --bind numa      paper 004: ranks spread over the NUMA nodes, each progress thread\n"
         "                   on a free core of its rank's node (its rank's core if none)\n"
         "  --bind bind      ranks scattered over the host, progress threads on their rank's core\n"
         "  --report-bindings  every rank prints the CPUs it and its progress thread run on\n"
         "  --tag-output     prefix every output line with [rank]\n"
         "  --timeout S      kill the job if it runs longer than S seconds (exit status 124)\n"
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
    } else if (name == "--report-bindings") {
      options.report_bindings = true;
    } else if (name == "--tag-output") {
      options.tag_output = true;
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
  if (!have_ranks) return usage_error("the number of ranks (-n N) is required");
  if (i >= argc) return usage_error("no program to run");
  options.command.assign(argv + i, argv + argc);
  return {std::move(options), {}, 0};
}

}  // namespace sluicerun
