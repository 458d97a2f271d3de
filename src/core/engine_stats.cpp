// The engine's statistics: registering every component's counters once at start-up, and
// the reports generated from them (SLUICE_STATS=1: text to stderr; =json: one JSON object
// per rank, one line; SLUICE_STATS_FILE: to a file per rank instead).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/engine.hpp"
#include "util/log.hpp"

namespace sluice::detail {

void Engine::register_stats() {
  using util::Unit;
  util::StatsRegistry& reg = stats_registry_;
  for (const auto& d : drivers_) d->register_stats(reg, d->name());
  p2p_->register_stats(reg);
  reg.add("match", "expected", Unit::count, &stats_.expected,
          "arrivals that found a posted receive");
  reg.add("match", "unexpected", Unit::count, &stats_.unexpected,
          "arrivals that found none (stored)");
  reg.add("match", "unexpected_max", Unit::count, &stats_.max_unexpected,
          "high-water mark of the unexpected queue");
  reg.set_kind("match.unexpected_max", util::Kind::high_water);
  if (progress_thread_) {
    progress_cpus_ = progress_thread_->cpus_text();
    reg.add_info(
        "progress", "cpus", [this] { return progress_cpus_; },
        "CPUs the progress thread ran on (read back from the kernel)");
    reg.add("progress", "passes", Unit::count, &progress_stats_.passes,
            "progress passes the thread ran");
    reg.add("progress", "passes_moved", Unit::count, &progress_stats_.moved,
            "of those: passes that moved something");
    reg.add("progress", "engine_busy", Unit::count, &progress_stats_.lock_busy,
            "times the application held the engine");
    reg.add("progress", "parks", Unit::count, &progress_stats_.parks,
            "times the thread parked (no work in flight)");
    reg.add("progress", "doorbell_sleeps", Unit::count, &progress_stats_.doorbell,
            "sleeps in the driver's doorbell");
    reg.add("progress", "completed_requests", Unit::count, &stats_.thread_completions,
            "requests completed during a progress-thread pass");
  }
}

std::string Engine::stats_report() const {
  return stats_registry_.text("sluice rank " + std::to_string(rank_) + " statistics");
}

// SLUICE_STATS_FILE with "%r" replaced by the rank; without it every rank appends to the
// same file (one line each: an O_APPEND write of one buffer does not interleave with the
// other ranks').
std::string Engine::stats_file_path() const {
  const std::string pattern = config_.get_string("STATS_FILE");
  std::string path;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'r') {
      path += std::to_string(rank_);
      ++i;
    } else {
      path += pattern[i];
    }
  }
  return path;
}

void Engine::check_stats_file() const {
  if (stats_mode_ != "1" && stats_mode_ != "json") return;
  const std::string path = stats_file_path();
  if (path.empty()) return;
  // Found out now rather than at finalize, when the run's statistics would go to stderr.
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    fail("configuration: SLUICE_STATS_FILE=\"" + config_.get_string("STATS_FILE") +
         "\": cannot create files in " + dir + " (" + std::strerror(errno) + ")");
}

void Engine::report_stats() const {
  if (stats_mode_ != "1" && stats_mode_ != "json") return;
  std::string out = stats_mode_ == "json" ? stats_registry_.json(rank_) + "\n" : stats_report();
  const std::string path = stats_file_path();
  if (path.empty()) {
    std::fputs(out.c_str(), stderr);
    return;
  }
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (!f) {
    util::log(util::LogLevel::warn, "SLUICE_STATS_FILE: cannot open %s; statistics to stderr",
              path.c_str());
    std::fputs(out.c_str(), stderr);
    return;
  }
  std::setvbuf(f, nullptr, _IOFBF, out.size() + 1);  // one write for the whole report
  std::fputs(out.c_str(), f);
  std::fclose(f);
}

}  // namespace sluice::detail
