// sluice-bench: options and results shared by the benchmarks and the output code.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace sluice {
class Session;
}

namespace sluice::bench {

struct Options {
  bool json = false;
  bool progress = true;            // progress line on stderr (only if stderr is a tty)
  std::vector<std::size_t> sizes;  // empty: the default sweep up to max_size
  std::size_t max_size = std::size_t{16} << 20;
  int iters = 0;  // latency iterations per size; 0 = adapt to the size
  int reps = 0;   // bandwidth repetitions per size; 0 = adapt to the size
  int window = 64;
  std::string plot;                // PNG file to draw, empty = none
  std::string ops;                 // nbc-overlap: comma list of operations, empty = all
  std::string pattern = "always";  // reuse: always | never | mixed; is: never | always
  bool pattern_given = false;      // --pattern was given (is defaults to never)
  // firsttouch / pipeline: registration strategies to compare (empty: the benchmark's list)
  std::vector<std::string> strategies;
};

// One size of a ping-pong run. Times are half round trips in microseconds; bandwidths in
// 10^6 bytes per second.
struct PingpongResult {
  std::size_t size = 0;
  int iters = 0;
  int reps = 0;
  double first_us = 0;  // first ping-pong, on never-touched buffers
  double best_us = 0;
  double lat_us = 0;  // median
  double avg_us = 0;
  double bw_MBps = 0;  // windowed streaming, median over repetitions
  double bw_best_MBps = 0;
};

// One size of a regcost run: medians in nanoseconds.
struct RegcostResult {
  std::size_t size = 0;
  int reps = 0;
  double reg_ns = 0;
  double dereg_ns = 0;
  double memcpy_ns = 0;
};
// T_reg(L) = latency + L / bandwidth.
struct RegFit {
  double latency_us = 0;
  double bandwidth_MBps = 0;
  double ns_per_page = 0;  // 4 KiB
};

// Per-size iteration counts: the full count for small sizes, fewer for large ones so a sweep
// of 1 B .. 16 MiB finishes in about a minute. Same rule as bench/peers/mpi_pingpong.c.
inline constexpr int default_iters = 1000;
inline constexpr int default_reps = 100;
inline constexpr double lat_budget_bytes = 256.0 * 1024 * 1024;
inline constexpr double bw_budget_bytes = 1024.0 * 1024 * 1024;
inline constexpr int lat_min_iters = 10;
inline constexpr int bw_min_reps = 3;

inline int lat_iters(std::size_t size, int fixed) {
  if (fixed > 0) return fixed;
  double n = lat_budget_bytes / static_cast<double>(size ? size : 1);
  if (n > default_iters) n = default_iters;
  if (n < lat_min_iters) n = lat_min_iters;
  return static_cast<int>(n);
}

inline int bw_reps(std::size_t size, int window, int fixed) {
  if (fixed > 0) return fixed;
  double n = bw_budget_bytes / (static_cast<double>(size ? size : 1) * window);
  if (n > default_reps) n = default_reps;
  if (n < bw_min_reps) n = bw_min_reps;
  return static_cast<int>(n);
}

// "off", or "EMULATED <λ> us + <n> ns/page (SLUICE_REG_EMULATE)": every benchmark whose
// figures depend on registration prints it (text: a '#' line; JSON: "reg_emulate").
std::string reg_emulation_label(const Session& session);

// The benchmarks. Each runs on every rank; only rank 0 prints. Returns the exit status.
int run_pingpong(Session& session, const Options& options);
// Every rank sends 0 bytes to every other in ring order; time, Session() time (init_us,
// measured by main) and per-process memory. Any number of ranks >= 2.
int run_allconn(Session& session, const Options& options, double init_us);
int run_nbc_overlap(Session& session, const Options& options);
// Registration (uring domain) and deregistration time against size, next to memcpy, and
// the fit of T_reg(L) = lambda_reg + L / B_reg. Rank 0 only.
int run_regcost(Session& session, const Options& options);
// Sends from reused, never reused or partly reused buffers (Options::pattern) under the
// registration strategy in force: time per message, bandwidth, cache hit rate. 2 ranks.
int run_reuse(Session& session, const Options& options);
// One-sided put latency (8 B) and bandwidth (64 KiB) against the remote working set, with
// Firehose's hit rate, one-sided share, moves and the target's pinned memory. 2 ranks.
int run_rma_ws(Session& session, const Options& options);
// Cannon's matrix multiplication with remote accumulation by puts (cannon.cpp).
int run_cannon(Session& session, const Options& options);

// First-touch vs best round trip per registration strategy ([NewMadeleine] figure 7):
// fresh buffers per size, --iters round trips (default 100); 2 ranks.
int run_firsttouch(Session& session, const Options& options);
// An IS-style application (NAS IS's bucket sort: keys per rank, bucket sizes by alltoall, the
// keys by an alltoallv, a local counting sort) per registration strategy (--strategies,
// default all): time per iteration and registration-cache hit rate. --sizes: bytes of keys
// per rank; --pattern never (default: fresh buffers every iteration, as IS's rarely reused
// ones) or always (allocated once). Any number of ranks >= 2.
int run_is(Session& session, const Options& options);
// The copy protocols side by side ([NewMadeleine] figure 6): the driver's copy path,
// register-per-message, the fixed pipeline at its best chunk, the superpipeline; 2 ranks.
int run_pipeline(Session& session, const Options& options);

// [NewMadeleine]'s cost model against measurement: per size and protocol the median half
// round trip and the model's prediction (a sluice-tune profile or the defaults); 2 ranks.
int run_model(Session& session, const Options& options);

// One line of a plot: (size, value) points.
struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;
  bool dashed = false;
};
// Draws several series against message size (log x) into a PNG.
std::string plot_series(const std::vector<Series>& series, const std::string& title,
                        const std::string& ylabel, const std::string& png,
                        const std::string& xlabel = "message size (bytes)");

// Draws bandwidth against size (log x) into a PNG with gnuplot. Returns an error message,
// empty on success.
std::string plot_pingpong(const std::vector<PingpongResult>& results, const std::string& impl,
                          const std::string& driver, const std::string& png);
// Draws registration, deregistration and memcpy time against size (log-log) with the fit.
std::string plot_regcost(const std::vector<RegcostResult>& results, const RegFit& fit,
                         const std::string& emulation, const std::string& png);

}  // namespace sluice::bench
