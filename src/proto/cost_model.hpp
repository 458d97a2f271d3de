// The cost model of [NewMadeleine] (section 2 and 4, equations 1-9) as a value type: what a
// large message costs on a pinning route under each way of getting it into registered
// memory, from a few measured figures of this machine (sluice-tune fits them and writes a
// profile; without one, built-in defaults). The strategy code reads the parameters it
// chooses (C_0, q, b, the fixed pipeline's chunk, the size below which copying wins), and
// the adaptive strategy, sluice-info --protocols and sluice-bench model ask predict().
//
// The paper's terms, as Sluice measures them:
//   T_reg(L) = λ_reg + L / B_reg              registration (eq. of section 2); the release
//                                             the same way (λ_dereg, B_dereg)
//   T_copy(L) = L / B_copy(L)                 memcpy, B_copy depending on the data set L
//                                             (caches), a measured table
//   T_net(L) = λ_net + L / B_net              the network. A stream driver has two paths:
//                                             its copy path (send() copies into the kernel)
//                                             and its zero-copy path (registered memory); each
//                                             has its B and a per-message overhead o on top of
//                                             the rendezvous' 3 λ_net (rts, cts, data)
//   g                                         the gap: the cost of one more chunk
// and per protocol (the half round trip of one rendezvous message):
//   copy            3 λ + o_copy + L / B_copy_path        (the naive copy: the copies are
//                                                          the kernel's, folded in B)
//   cached          3 λ + o_zc + L / B_zc                 (a registration reused)
//   register        miss + T_reg(L) + T_dereg(L)          (pinned at both ends, released)
//     where miss = cached + T_reg(L)                      (the sender registers through the
//                                                          cache and keeps it: adaptive's
//                                                          cache_miss arm, and strategy
//                                                          cache's first send of a buffer)
//   pipeline        eq. 1 with chunk C                    (first chunk copied during the
//   superpipeline   eq. 8/9 with C_i = C_0 q^i (eq. 5-7)   rendezvous round trip)
//   ondemand        cached, bounded below by the pinning thread (an approximation)
// The two pipelines are computed by running the chunk sequence through a two-stage model
// (copy, then send; N staging buffers, each free again when its chunk has left), which is
// eq. 1 / 8 when the copy is faster than the network and stays right when it is not or when
// chunks are capped at a staging buffer. A stream driver's receiver has no copy-out (the
// kernel places the bytes), so the last sub-block term b / B_copy of eq. 9 is 0 there; b is
// chosen and kept for a driver that writes into the receiver's memory.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::proto {

// The protocols the model times.
enum class CostProtocol : uint8_t {
  copy,
  register_each,
  cached,
  ondemand,
  pipeline,
  superpipeline
};
inline constexpr CostProtocol kCostProtocols[] = {
    CostProtocol::copy,     CostProtocol::register_each, CostProtocol::cached,
    CostProtocol::ondemand, CostProtocol::pipeline,      CostProtocol::superpipeline};
// "copy", "register", "cache", "ondemand", "pipeline", "superpipeline": the names of the
// SLUICE_REG_STRATEGY that runs each ("cache" timed on a reused buffer).
const char* cost_protocol_name(CostProtocol p);
bool parse_cost_protocol(std::string_view name, CostProtocol& out);

// T(L) = latency + L / bandwidth. Times in microseconds, bandwidths in 10^6 bytes per second
// (bytes per microsecond).
struct LinearCost {
  double latency_us = 0;
  double MBps = 0;  // 0: free per byte
  double us(double bytes) const { return latency_us + (MBps > 0 ? bytes / MBps : 0); }
};

// One driver's network, measured between two ranks of this machine.
struct DriverCost {
  std::string driver;       // as SLUICE_DRIVERS names it; "*": any driver (the built-in defaults)
  double lambda_us = 20;    // one-way latency of a small message (λ_net)
  double copy_MBps = 1000;  // copy path bandwidth
  double copy_over_us = 0;  // copy path per-message overhead beyond 3 λ
  double zc_MBps = 1000;    // zero-copy path bandwidth (B_net)
  double zc_over_us = 0;    // zero-copy path per-message overhead beyond 3 λ
  double gap_us = 5;        // g: one more chunk (staged protocols)
  // The share of the staged protocols' sender copy that the network does not hide: 0 where a
  // NIC moves the bytes ([NewMadeleine]'s assumption), near 1 on loopback, where the kernel's
  // copy and the staging copy share the same CPUs. Fitted with g.
  double copy_serial = 0;
  std::size_t max_chunk = std::size_t{1} << 20;  // a staging buffer (the driver's packet)
  bool recv_copy = false;  // the receiver copies out of staging (sub-blocks; not streams)
  // The two paths' measured rendezvous times (size, µs), ascending. On loopback "the
  // network" is the kernel copying, whose bandwidth depends on L for the reasons B_copy(L)
  // does ([NewMadeleine] section 2): where measured, the paths follow these points
  // (log-log between them, the fitted line beyond them); empty: the line alone.
  std::vector<std::pair<std::size_t, double>> copy_points, zc_points;
  // Rendezvous messages below this size go by the copy path under the staged strategies
  // (the model's crossover; 0: always staged).
  std::size_t staged_min = 0;

  double copy_path_us(std::size_t L) const;  // 3 λ + o_copy + L / B_copy-path, or the points
  double zc_path_us(std::size_t L) const;    // 3 λ + o_zc + L / B_zc, or the points
  double zc_MBps_at(std::size_t L) const;    // B_net for a message of L bytes (the data set)
};

// What a protocol's time is made of at one size.
struct Prediction {
  double us = 0;
  std::size_t chunks = 0;  // pipelines: chunks sent
};

class CostModel {
 public:
  // Built-in defaults ([NewMadeleine]'s hard-wired C_0 = 12 KiB, q = 1.5; this machine's
  // registration as docs/PERFORMANCE.md measured it; a rough memcpy and network). Inline:
  // the unit tests that compile p2p.cpp alone link without this file's .cpp.
  CostModel() {
    copy_table = {{4096, 20000}, {std::size_t{1} << 20, 12000}, {std::size_t{16} << 20, 6000}};
    // The name built by push_back: GCC 12 under -fsanitize=address -O2 reports a
    // -Wrestrict false positive for a string literal assigned here.
    DriverCost& any = drivers.emplace_back();
    any.driver.push_back('*');
    any.max_chunk = std::size_t{512} << 10;
  }

  // ---- measured ----
  LinearCost reg{0.35, 58000};    // T_reg
  LinearCost dereg{0.3, 180000};  // the release of a registration
  // B_copy(L): (L, MB/s) points ascending in L; between points log-linear, outside clamped.
  std::vector<std::pair<std::size_t, double>> copy_table;
  std::vector<DriverCost> drivers;
  std::string reg_emulate = "off";           // the registration cost was emulated (label) or "off"
  std::string source = "built-in defaults";  // or the profile's path
  // ---- chosen (by choose_parameters, or the defaults) ----
  std::size_t c0 = 12 * 1024;
  double q = 1.5;
  std::size_t block = 4096;  // b
  std::size_t pipeline_chunk = 64 * 1024;
  unsigned staging_buffers = 3;

  double copy_MBps(std::size_t L) const;
  // The driver's figures, or null when the model has none for it (a stacked driver, named
  // "<driver>+<layer>", is its base driver; "*" stands for any).
  const DriverCost* driver(std::string_view name) const {
    name = name.substr(0, name.find('+'));
    for (const DriverCost& d : drivers)
      if (d.driver == name || d.driver == "*") return &d;
    return nullptr;
  }
  // The time of `p` for an L-byte message over driver `d` (its figures; by name: a driver the
  // model does not know takes the first one's). Pipelines use c0, q and pipeline_chunk.
  Prediction predict(CostProtocol p, const DriverCost& d, std::size_t L) const;
  Prediction predict(CostProtocol p, std::string_view driver, std::size_t L) const;
  // A send whose buffer the cache does not hold, registered on the critical path and kept
  // (not released per message; adaptive's receiver does not register): cached +
  // T_reg(L). `register` is this plus the receiver's registration and the release.
  double miss_us(const DriverCost& d, std::size_t L) const {
    return predict(CostProtocol::cached, d, L).us + reg.us(static_cast<double>(L));
  }
  // The packets the zero-copy path cuts an L-byte message into (max_chunk each).
  static std::size_t min_chunks(const DriverCost& d, std::size_t L);
  // The staged protocols with explicit chunking (q = 1: the fixed pipeline of chunk c0).
  Prediction staged(const DriverCost& d, std::size_t L, std::size_t c0, double q) const;

  // [NewMadeleine] eq. 3, 5, 7 and the rendezvous-overlap rule for C_0.
  double optimal_chunk(const DriverCost& d, std::size_t L) const;  // eq. 3
  double ratio_q(const DriverCost& d, std::size_t L) const;        // eq. 5: B_copy / B_net
  static double chunks_for(std::size_t L, double c0, double q);    // eq. 7
  double overlap_c0(const DriverCost& d, std::size_t L) const;     // C_0 = B_copy 2 λ_net

  // Chooses c0, q, block, pipeline_chunk and every driver's staged_min from the measured
  // figures: the paper's rules as starting point, then the (C_0, q) of a small grid that
  // minimises the superpipeline's predicted time over 64 KiB .. 16 MiB.
  void choose_parameters();
};

// A NIC that moves the bytes itself (DMA from registered memory, [NewMadeleine]'s setting),
// for predicting hardware this machine does not have: one-way latency λ_net, bandwidth B_net,
// g per extra chunk, the machine's B_copy(L) from `m`. Its copy path is the paper's naive copy
// protocol (the sender copies into a pre-registered buffer, the NIC sends, the receiver copies
// out, nothing overlapped): 3 λ + 2 L / B_copy(L) + L / B_net, kept as points (B_copy(L)
// varies) with the line fitted to them; zero-copy is 3 λ + L / B_net; the staging copy is
// hidden by the NIC (κ = 0); the receiver copies out of staging (eq. 9's last sub-block);
// a staging buffer is 4 MiB as in reg_pipeline.cpp.
DriverCost nic_driver(const CostModel& m, std::string name, double lambda_us, double MBps,
                      double gap_us);

// The fixed pipeline's measured times at one size (pipe_len) and several chunks -> d.gap_us (g)
// and d.copy_serial (κ): least squares of what the model without gaps and with the copy
// hidden leaves unexplained, r(C) = κ L / B_copy(L) + g n(C) (slope g, intercept κ). κ is a
// share of one copy, so it is kept within [0, 1]: on a loaded loopback the intercept also
// takes the scheduler's delays (fits of 4 to 9 were seen), which are not a copy and made every
// staged prediction 30-130 % too slow; with κ at 1, g is refitted on what remains.
void fit_gap_and_serial(const CostModel& m, DriverCost& d, std::size_t pipe_len,
                        const std::vector<std::pair<std::size_t, double>>& chunk_us);

// Least squares of y = a + b x with weights 1 / y^2 (relative error: small sizes weigh as
// much as large ones). Returns T(x) = a + x / B as a LinearCost ({0, 0} with fewer than two
// distinct x). Used on (bytes, µs) points.
LinearCost fit_linear(const std::vector<std::pair<double, double>>& points);

// The profile file: `key = value` lines, '#' comments (format in docs/TUNING.md).
std::string profile_text(const CostModel& m);
// Parses a profile. False with `why` ("line 7: ..."), the model untouched, on anything
// wrong: unknown or missing keys, numbers that do not parse or are out of range, a version
// other than 1.
bool parse_profile(std::string_view text, CostModel& out, std::string& why);
// Reads / writes a file (why: the path and the reason).
bool load_profile(const std::string& path, CostModel& out, std::string& why);
bool save_profile(const std::string& path, const CostModel& m, std::string& why);
// Where sluice-tune writes and the engine looks when SLUICE_TUNE_PROFILE is empty:
// $XDG_CONFIG_HOME/sluice/tune.profile, else $HOME/.config/sluice/tune.profile ("" if
// neither is set).
std::string default_profile_path();

}  // namespace sluice::proto
