// sluice-tune: measures this machine, fits [NewMadeleine]'s cost model (equations 1-9) and
// writes the profile the registration strategies load (SLUICE_TUNE_PROFILE; docs/TUNING.md).
//
//   sluice-tune [--quick] [--output FILE] [--drivers tcp,udp] [--json]
//   sluice-tune --check FILE      parse a profile, print what it holds (exit 1 if bad)
//   sluice-tune --predict [--profile FILE] [--net LAMBDA_US,MBPS[,GAP_US]]
//               [--reg LAMBDA_US,MBPS] [--sizes LIST] [--json]
//                                 what the model predicts per protocol and size, measuring
//                                 nothing: for the profile's drivers, or (--net) for a NIC
//                                 that reads registered memory, with this machine's B_copy(L)
//                                 and registration cost (or --reg's)
//
// What it measures:
//   - in this process: registration and its release in the uring domain (T_reg, fitted as
//     λ + L / B; under SLUICE_REG_EMULATE the emulated cost, and the profile says so), and
//     memcpy bandwidth B_copy(L) from 4 KiB to 256 MiB (16 MiB with --quick);
//   - per driver, in a 2-rank job it launches through sluicerun (this binary again, with
//     --worker, zero-copy forced on so the route registers): the one-way small-message
//     latency λ_net, the rendezvous time by the copy path and from a reused registration
//     (fitted as 3 λ + o + L / B: bandwidth B and per-message overhead o of each path; the
//     measured points are kept too, B_net(L) as B_copy(L)), best of n round trips, and
//     the fixed pipeline at several chunk sizes (the gap g per chunk, by least squares on
//     what eq. 1 leaves unexplained).
// Then CostModel::choose_parameters picks C_0, q, b, the fixed pipeline's chunk and each
// driver's staged_min, and the profile is written.
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sluice/introspect.hpp>
#include <sluice/sluice.hpp>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "mem/reg_emulation.hpp"
#include "mem/uring_domain.hpp"
#include "proto/cost_model.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using sluice::proto::CostModel;
using sluice::proto::DriverCost;
using sluice::proto::LinearCost;

double ns_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Round trips between ranks 0 and 1 (as sluice-bench's; tools share no internals).
namespace bench {

// A touched anonymous mapping.
class Mapping {
 public:
  explicit Mapping(std::size_t size) : size_(size), len_((size + 4095) / 4096 * 4096) {
    void* p = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("cannot map " + std::to_string(size) + " bytes");
    data_ = static_cast<std::byte*>(p);
    std::memset(data_, 1, len_);
  }
  ~Mapping() { munmap(data_, len_); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  std::span<std::byte> span() { return {data_, size_}; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0, len_ = 0;
};

// Half a round trip in microseconds on rank 0 (0 on rank 1).
double half_round_trip(sluice::Session& s, std::span<std::byte> sbuf, std::span<std::byte> rbuf) {
  auto ok = [](sluice::Errc e) {
    if (e != sluice::Errc::ok)
      throw std::runtime_error("message failed: " + std::string(sluice::to_string(e)));
  };
  if (s.rank() == 0) {
    const auto t0 = Clock::now();
    ok(s.send(sbuf, 1, 7));
    ok(s.recv(rbuf, 1, 7));
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / 2;
  }
  ok(s.recv(rbuf, 0, 7));
  ok(s.send(sbuf, 0, 7));
  return 0;
}

void sync_hot(sluice::Session& s) {
  std::byte b[8] = {};
  for (int i = 0; i < 3; ++i) half_round_trip(s, b, b);
}

// Both ranks switch at once, between messages.
bool use_strategy(sluice::Session& s, const std::string& name, std::size_t chunk = 0) {
  if (s.barrier() != sluice::Errc::ok) return false;
  const bool ok = sluice::introspect::set_registration_strategy(s, name, chunk);
  return s.barrier() == sluice::Errc::ok && ok;
}

}  // namespace bench

struct Args {
  bool quick = false;
  bool json = false;
  bool worker = false;
  std::string output;
  std::string check;
  std::vector<std::string> drivers = {"tcp", "udp"};
  // --predict
  bool predict = false;
  std::string profile;             // empty: SLUICE_TUNE_PROFILE / the default path
  std::vector<double> net, reg;    // {λ_us, MB/s[, g_us]}, {λ_us, MB/s}; empty: none
  std::vector<std::size_t> sizes;  // empty: 64 KiB .. 16 MiB, doubling
};

// ---- the worker: one driver between two ranks (rank 0 prints "key value..." lines) ----

int run_worker(const Args& a) {
  sluice::Session s;
  namespace introspect = sluice::introspect;
  if (s.size() != 2) {
    std::fprintf(stderr, "sluice-tune --worker: needs 2 ranks\n");
    return 2;
  }
  const int peer = s.rank() ^ 1;
  if (!introspect::route_registers(s, peer)) {
    if (s.rank() == 0) std::printf("no_registration\n");
    return 0;
  }
  const auto routes = introspect::routes(s);
  const std::size_t max_packet = routes.at(static_cast<std::size_t>(peer)).max_packet;
  if (s.rank() == 0)
    std::printf("driver %s\nmax_packet %zu\n",
                routes.at(static_cast<std::size_t>(peer)).driver.c_str(), max_packet);
  // λ: small eager messages, half a round trip.
  {
    std::byte b[8] = {};
    const int n = a.quick ? 200 : 2000;
    std::vector<double> t;
    for (int i = 0; i < 20; ++i) bench::half_round_trip(s, b, b);
    for (int i = 0; i < n; ++i) t.push_back(bench::half_round_trip(s, b, b));
    // The 10th percentile: near the best, robust against the odd fast outlier.
    std::sort(t.begin(), t.end());
    if (s.rank() == 0) std::printf("lambda %.4f\n", t[t.size() / 10]);
  }
  std::vector<std::size_t> sizes;
  for (std::size_t z = 64 << 10; z <= (a.quick ? (4u << 20) : (16u << 20)); z *= a.quick ? 4 : 2)
    sizes.push_back(z);
  const std::size_t budget = a.quick ? (16u << 20) : (128u << 20);
  auto iters = [&](std::size_t size) {
    return static_cast<int>(std::clamp<std::size_t>(budget / size, a.quick ? 3 : 5, 40));
  };
  // The best of n round trips: what the machine can do, the figure least disturbed by other
  // processes on a loaded machine (sluice-bench model compares against the same).
  auto measure = [&](bench::Mapping& x, bench::Mapping& y, int n) {
    std::vector<double> t;
    bench::half_round_trip(s, x.span(), y.span());  // warm-up: pages, registration, connection
    bench::sync_hot(s);
    for (int i = 0; i < n; ++i) t.push_back(bench::half_round_trip(s, x.span(), y.span()));
    return *std::min_element(t.begin(), t.end());
  };
  for (std::size_t size : sizes) {
    bench::Mapping x(size), y(size);
    for (const char* strategy : {"copy", "cache"}) {
      if (!bench::use_strategy(s, strategy)) return 1;
      const double us = measure(x, y, iters(size));
      if (s.rank() == 0) std::printf("%s %zu %.4f\n", strategy, size, us);
      std::fflush(stdout);
    }
  }
  // The fixed pipeline at several chunks, at 1 MiB (below the sizes where a loaded loopback's
  // times jump): the gap per chunk and the copy's unhidden share.
  const std::size_t L = 1u << 20;
  bench::Mapping x(L), y(L);
  for (std::size_t chunk : {16u << 10, 32u << 10, 64u << 10, 128u << 10, 256u << 10, 512u << 10}) {
    if (!bench::use_strategy(s, "pipeline", chunk)) return 1;
    const double us = measure(x, y, a.quick ? 10 : 30);
    if (s.rank() == 0) std::printf("pipeline %zu %zu %.4f\n", L, chunk, us);
    std::fflush(stdout);
  }
  return 0;
}

// ---- this process: registration and memcpy ----

bool measure_registration(const Args& a, CostModel& m, std::string& why) {
  auto domain = sluice::mem::UringDomain::open({.slots = 16, .ring_entries = 8}, why);
  if (!domain) {
    why = "the uring domain is unavailable: " + why;
    return false;
  }
  const std::size_t largest = a.quick ? (4u << 20) : (64u << 20);
  void* p = mmap(nullptr, largest, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    why = "cannot map memory";
    return false;
  }
  std::memset(p, 1, largest);
  auto* buf = static_cast<std::byte*>(p);
  std::vector<std::pair<double, double>> reg, dereg;
  for (std::size_t size = 4096; size <= largest; size *= 4) {
    const int reps = static_cast<int>(std::clamp<double>(
        (a.quick ? 32.0 : 256.0) * (1 << 20) / static_cast<double>(size), 5, 500));
    std::vector<double> r(reps), d(reps);
    for (int i = 0; i < reps; ++i) {
      sluice::mem::Registration h;
      auto t0 = Clock::now();
      if (domain->register_memory({buf, size}, h) != sluice::Errc::ok) {
        why = "registering " + std::to_string(size) + " bytes failed (errno " +
              std::to_string(domain->last_error()) + ")";
        munmap(p, largest);
        return false;
      }
      r[i] = ns_since(t0) / 1000;
      t0 = Clock::now();
      h.reset();
      d[i] = ns_since(t0) / 1000;
    }
    reg.emplace_back(static_cast<double>(size), median(r));
    dereg.emplace_back(static_cast<double>(size), median(d));
  }
  munmap(p, largest);
  m.reg = sluice::proto::fit_linear(reg);
  m.dereg = sluice::proto::fit_linear(dereg);
  if (m.reg.MBps <= 0 || m.dereg.MBps <= 0) {
    why = "registration times do not grow with size: no fit";
    return false;
  }
  m.reg.latency_us = std::max(0.0, m.reg.latency_us);
  m.dereg.latency_us = std::max(0.0, m.dereg.latency_us);
  return true;
}

bool measure_copy(const Args& a, CostModel& m, std::string& why) {
  const std::size_t largest = a.quick ? (16u << 20) : (256u << 20);
  auto map = [&] {
    void* p = mmap(nullptr, largest, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return static_cast<std::byte*>(nullptr);
    std::memset(p, 1, largest);
    return static_cast<std::byte*>(p);
  };
  std::byte* src = map();
  std::byte* dst = map();
  if (!src || !dst) {
    why = "cannot map 2 x " + std::to_string(largest) + " bytes for the copy";
    return false;
  }
  m.copy_table.clear();
  for (std::size_t size = 4096; size <= largest; size *= 4) {
    const int reps = static_cast<int>(std::clamp<double>(
        (a.quick ? 64.0 : 1024.0) * (1 << 20) / static_cast<double>(size), 3, 2000));
    std::vector<double> t(reps);
    for (int i = 0; i < reps; ++i) {
      const auto t0 = Clock::now();
      std::memcpy(dst, src, size);
      t[i] = ns_since(t0) / 1000;
      asm volatile("" ::"r"(dst) : "memory");
    }
    m.copy_table.emplace_back(size, static_cast<double>(size) / median(t));
  }
  munmap(src, largest);
  munmap(dst, largest);
  return true;
}

// ---- one driver through a 2-rank job ----

std::string self_dir() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<std::size_t>(n));
  return p.substr(0, p.rfind('/'));
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Fits one driver from the worker's lines. False with `why`; `skip` when the route
// registers nothing (the model has nothing to say about it).
bool measure_driver(const Args& a, const std::string& name, CostModel& m, DriverCost& d,
                    std::string& why, bool& skip) {
  const std::string dir = self_dir();
  const std::string cmd = "'" + dir + "/sluicerun' -n 2 --timeout 900 env SLUICE_DRIVERS=" + name +
                          " SLUICE_" + upper(name) +
                          "_ZEROCOPY=on SLUICE_TUNE_PROFILE=off SLUICE_REG_STRATEGY=cache '" + dir +
                          "/sluice-tune' --worker" + (a.quick ? " --quick" : "");
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) {
    why = "cannot run " + cmd;
    return false;
  }
  std::vector<std::pair<double, double>> copy, cached;
  std::vector<std::pair<std::size_t, double>> pipe;  // (chunk, us)
  std::size_t pipe_len = 0, max_packet = 0;
  double lambda = -1;
  skip = false;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "no_registration") {
      skip = true;
    } else if (key == "lambda") {
      in >> lambda;
    } else if (key == "max_packet") {
      in >> max_packet;
    } else if (key == "copy" || key == "cache") {
      double size = 0, us = 0;
      in >> size >> us;
      (key == "copy" ? copy : cached).emplace_back(size, us);
    } else if (key == "pipeline") {
      std::size_t chunk = 0;
      double us = 0;
      in >> pipe_len >> chunk >> us;
      pipe.emplace_back(chunk, us);
    }
  }
  const int status = pclose(f);
  if (skip) return true;
  if (status != 0 || lambda < 0 || copy.size() < 2 || cached.size() < 2 || pipe.empty()) {
    why = "the 2-rank measurement failed (exit status " + std::to_string(status) + "): " + cmd;
    return false;
  }
  d.driver = name;
  d.lambda_us = lambda;
  const LinearCost c = sluice::proto::fit_linear(copy);
  const LinearCost z = sluice::proto::fit_linear(cached);
  if (c.MBps <= 0 || z.MBps <= 0) {
    why = "the rendezvous times do not grow with size: no fit";
    return false;
  }
  d.copy_MBps = c.MBps;
  d.copy_over_us = c.latency_us - 3 * lambda;
  d.zc_MBps = z.MBps;
  d.zc_over_us = z.latency_us - 3 * lambda;
  for (const auto& [L, us] : copy) d.copy_points.emplace_back(static_cast<std::size_t>(L), us);
  for (const auto& [L, us] : cached) d.zc_points.emplace_back(static_cast<std::size_t>(L), us);
  const std::size_t page = 4096;
  d.max_chunk = std::max(page, std::min<std::size_t>(max_packet, 4u << 20) / page * page);
  d.recv_copy = false;  // stream drivers: the kernel places received bytes
  sluice::proto::fit_gap_and_serial(m, d, pipe_len, pipe);
  if (!a.json) {
    std::printf(
        "# %s: lambda_net %.1f us; copy path %.0f MB/s + %.1f us; zero-copy path %.0f "
        "MB/s + %.1f us; gap %.2f us per chunk; unhidden copy share %.2f; staging buffer %zu B\n",
        name.c_str(), d.lambda_us, d.copy_MBps, d.copy_over_us, d.zc_MBps, d.zc_over_us, d.gap_us,
        d.copy_serial, d.max_chunk);
    std::printf("#   %10s %12s %12s %12s %12s\n", "size", "copy us", "fit", "cache us", "fit");
    for (std::size_t i = 0; i < copy.size() && i < cached.size(); ++i) {
      const double L = copy[i].first;
      std::printf("#   %10.0f %12.1f %12.1f %12.1f %12.1f\n", L, copy[i].second, c.us(L),
                  cached[i].second, z.us(L));
    }
  }
  return true;
}

int check_profile(const std::string& path) {
  CostModel m;
  std::string why;
  if (!sluice::proto::load_profile(path, m, why)) {
    std::fprintf(stderr, "sluice-tune: bad profile %s\n", why.c_str());
    return 1;
  }
  std::printf(
      "profile %s: registration %s; C_0 %zu B, q %.3g, b %zu B, pipeline chunk %zu B, "
      "%u staging buffers\n",
      path.c_str(), m.reg_emulate.c_str(), m.c0, m.q, m.block, m.pipeline_chunk, m.staging_buffers);
  for (const DriverCost& d : m.drivers)
    std::printf("  %s: staged protocols from %s\n", d.driver.c_str(),
                d.staged_min == SIZE_MAX ? "no size (copying is predicted faster)"
                                         : (std::to_string(d.staged_min) + " B").c_str());
  return 0;
}

// ---- --predict: the model's times, nothing measured ----

std::string human_size(std::size_t z) {
  if (z >= (1u << 20) && z % (1u << 20) == 0) return std::to_string(z >> 20) + "M";
  if (z >= 1024 && z % 1024 == 0) return std::to_string(z >> 10) + "K";
  return std::to_string(z);
}

int run_predict(const Args& a) {
  using sluice::proto::CostProtocol;
  CostModel m;
  std::string path = a.profile;
  if (path.empty()) {
    const char* env = std::getenv("SLUICE_TUNE_PROFILE");
    if (env && *env && std::strcmp(env, "auto") != 0) path = env;
    if (path.empty()) {
      path = sluice::proto::default_profile_path();
      if (!path.empty() && access(path.c_str(), R_OK) != 0) path.clear();
    }
    if (path == "off") path.clear();
  }
  std::string why;
  if (!path.empty() && !sluice::proto::load_profile(path, m, why)) {
    std::fprintf(stderr, "sluice-tune: bad profile %s\n", why.c_str());
    return 1;
  }
  if (a.reg.size() == 2) {
    m.reg = {a.reg[0], a.reg[1]};
    m.reg_emulate = "given (--reg)";
  }
  std::string net = "the profile's drivers";
  if (!a.net.empty()) {
    const double gap = a.net.size() > 2 ? a.net[2] : 1.0;
    m.drivers = {sluice::proto::nic_driver(m, "nic", a.net[0], a.net[1], gap)};
    char b[160];
    std::snprintf(b, sizeof b, "a NIC: lambda_net %.3g us, B_net %.0f MB/s, g %.3g us", a.net[0],
                  a.net[1], gap);
    net = b;
  }
  m.choose_parameters();
  std::vector<std::size_t> sizes = a.sizes;
  if (sizes.empty())
    for (std::size_t z = 64 << 10; z <= (16u << 20); z *= 2) sizes.push_back(z);
  const CostProtocol protos[] = {CostProtocol::copy,     CostProtocol::register_each,
                                 CostProtocol::cached,   CostProtocol::ondemand,
                                 CostProtocol::pipeline, CostProtocol::superpipeline};
  if (!a.json) {
    std::printf(
        "# sluice-tune --predict: model %s; registration %s: T_reg = %.3g us + L / %.0f MB/s; "
        "network: %s\n# chosen: C_0 = %zu B, q = %.3g, b = %zu B, fixed pipeline chunk %zu B; "
        "half round trip in us; cache* = cache on a buffer's first touch (registered on the "
        "critical path); ft = first-touch bandwidth over best (superpipeline: 1, its staging "
        "buffers are registered once)\n",
        m.source.c_str(), m.reg_emulate.c_str(), m.reg.latency_us, m.reg.MBps, net.c_str(), m.c0,
        m.q, m.block, m.pipeline_chunk);
  } else {
    std::printf(
        "{\"tool\":\"sluice-tune\",\"predict\":true,\"model\":\"%s\",\"reg_emulate\":\"%s\","
        "\"lambda_reg_us\":%.4g,\"B_reg_MBps\":%.6g,\"network\":\"%s\",\"c0\":%zu,\"q\":%.4g,"
        "\"b\":%zu,\"pipeline_chunk\":%zu}\n",
        m.source.c_str(), m.reg_emulate.c_str(), m.reg.latency_us, m.reg.MBps, net.c_str(), m.c0,
        m.q, m.block, m.pipeline_chunk);
  }
  for (const DriverCost& d : m.drivers) {
    if (!a.json) {
      std::printf("\n## %s\n\n| size |", d.driver.c_str());
      for (CostProtocol p : protos) std::printf(" %s |", sluice::proto::cost_protocol_name(p));
      std::printf(
          " cache* | fastest (reused) | fastest (first touch) | ft cache | ft superpipeline |\n|");
      for (int i = 0; i < 12; ++i) std::printf("---|");
      std::printf("\n");
    }
    for (std::size_t L : sizes) {
      double t[6];
      for (int i = 0; i < 6; ++i) t[i] = m.predict(protos[i], d, L).us;
      const double miss = m.miss_us(d, L);
      // Reused buffers: every protocol at its best. First touch: cache (and ondemand, which
      // pins then) pays its registration; the copy protocols and register are unchanged.
      int best = 0, best_first = 0;
      double first[6];
      for (int i = 0; i < 6; ++i) {
        first[i] = protos[i] == CostProtocol::cached ? miss : t[i];
        if (t[i] < t[best]) best = i;
        if (first[i] < first[best_first]) best_first = i;
      }
      const double ft_cache = t[2] / miss;
      if (a.json) {
        std::printf("{\"driver\":\"%s\",\"size\":%zu", d.driver.c_str(), L);
        for (int i = 0; i < 6; ++i)
          std::printf(",\"%s_us\":%.3f", sluice::proto::cost_protocol_name(protos[i]), t[i]);
        std::printf(
            ",\"cache_first_us\":%.3f,\"fastest\":\"%s\",\"fastest_first\":\"%s\","
            "\"ft_cache\":%.4f,\"ft_superpipeline\":1}\n",
            miss, sluice::proto::cost_protocol_name(protos[best]),
            sluice::proto::cost_protocol_name(protos[best_first]), ft_cache);
      } else {
        std::printf("| %s |", human_size(L).c_str());
        for (int i = 0; i < 6; ++i) std::printf(" %.1f |", t[i]);
        std::printf(" %.1f | %s | %s | %.2f | 1.00 |\n", miss,
                    sluice::proto::cost_protocol_name(protos[best]),
                    sluice::proto::cost_protocol_name(protos[best_first]), ft_cache);
      }
    }
  }
  return 0;
}

bool parse_numbers(const std::string& s, std::vector<double>& out) {
  out.clear();
  std::stringstream ss(s);
  for (std::string v; std::getline(ss, v, ',');) {
    char* end = nullptr;
    const double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(x >= 0)) return false;
    out.push_back(x);
  }
  return true;
}

bool parse_sizes(const std::string& s, std::vector<std::size_t>& out) {
  out.clear();
  std::stringstream ss(s);
  for (std::string v; std::getline(ss, v, ',');) {
    char* end = nullptr;
    const unsigned long long x = std::strtoull(v.c_str(), &end, 10);
    std::size_t mult = 1;
    if (*end == 'K' || *end == 'k')
      mult = 1024, ++end;
    else if (*end == 'M' || *end == 'm')
      mult = 1u << 20, ++end;
    if (v.empty() || *end != '\0' || x == 0) return false;
    out.push_back(static_cast<std::size_t>(x) * mult);
  }
  return !out.empty();
}

int usage(FILE* to, int status) {
  std::fprintf(
      to,
      "usage: sluice-tune [--quick] [--output FILE] [--drivers tcp,udp] [--json]\n"
      "       sluice-tune --check FILE\n"
      "       sluice-tune --predict [--profile FILE] [--net LAMBDA_US,MBPS[,GAP_US]]\n"
      "                   [--reg LAMBDA_US,MBPS] [--sizes 64K,1M,...] [--json]\n"
      "  --quick          fewer sizes and repetitions (seconds, not minutes)\n"
      "  --output FILE    where to write the profile (default: SLUICE_TUNE_PROFILE when\n"
      "                   it names a file, else %s)\n"
      "  --drivers LIST   drivers to measure (default tcp,udp; each through a 2-rank\n"
      "                   job on this host with its zero-copy path forced on)\n"
      "  --json           the fitted figures as one JSON object\n"
      "  --check FILE     parse a profile and print it; exit 1 if it is bad\n"
      "  --predict        measure nothing: the model's time per protocol and size for\n"
      "                   the profile's drivers (--profile FILE, else as the engine finds\n"
      "                   it), or with --net for a NIC that reads registered memory\n"
      "                   (one-way latency, bandwidth, gap per chunk: default 1 us);\n"
      "                   --reg replaces the registration cost\n"
      "Under SLUICE_REG_EMULATE the registration cost measured is the emulated one; the\n"
      "output and the profile say so.\n",
      sluice::proto::default_profile_path().c_str());
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "sluice-tune: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--quick") {
      a.quick = true;
    } else if (arg == "--json") {
      a.json = true;
    } else if (arg == "--worker") {
      a.worker = true;
    } else if (arg == "--output") {
      a.output = value();
    } else if (arg == "--check") {
      a.check = value();
    } else if (arg == "--predict") {
      a.predict = true;
    } else if (arg == "--profile") {
      a.profile = value();
    } else if (arg == "--net") {
      if (!parse_numbers(value(), a.net) || a.net.size() < 2 || a.net.size() > 3 ||
          !(a.net[1] > 0)) {
        std::fprintf(stderr, "sluice-tune: --net LAMBDA_US,MBPS[,GAP_US]\n");
        return 2;
      }
    } else if (arg == "--reg") {
      if (!parse_numbers(value(), a.reg) || a.reg.size() != 2 || !(a.reg[1] > 0)) {
        std::fprintf(stderr, "sluice-tune: --reg LAMBDA_US,MBPS\n");
        return 2;
      }
    } else if (arg == "--sizes") {
      if (!parse_sizes(value(), a.sizes)) {
        std::fprintf(stderr, "sluice-tune: --sizes: a list like 64K,1M,16M\n");
        return 2;
      }
    } else if (arg == "--drivers") {
      a.drivers.clear();
      std::stringstream ss(value());
      for (std::string d; std::getline(ss, d, ',');)
        if (!d.empty()) a.drivers.push_back(d);
      if (a.drivers.empty()) return usage(stderr, 2);
    } else if (arg == "-h" || arg == "--help") {
      return usage(stdout, 0);
    } else {
      std::fprintf(stderr, "sluice-tune: unknown argument '%s'\n", arg.c_str());
      return usage(stderr, 2);
    }
  }
  if (!a.check.empty()) return check_profile(a.check);
  if (a.predict) return run_predict(a);
  if (a.worker) {
    try {
      return run_worker(a);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "sluice-tune --worker: %s\n", e.what());
      return 1;
    }
  }
  if (a.output.empty()) {
    const char* env = std::getenv("SLUICE_TUNE_PROFILE");
    if (env && *env && std::strcmp(env, "auto") != 0 && std::strcmp(env, "off") != 0)
      a.output = env;
    else
      a.output = sluice::proto::default_profile_path();
  }
  if (a.output.empty()) {
    std::fprintf(stderr, "sluice-tune: no HOME or XDG_CONFIG_HOME: give --output FILE\n");
    return 2;
  }
  // The registration cost this process measures: real, or SLUICE_REG_EMULATE's.
  sluice::mem::RegEmulation emulate;
  std::string why;
  const char* emu = std::getenv("SLUICE_REG_EMULATE");
  if (!sluice::mem::parse_reg_emulation(emu ? emu : "", emulate, why)) {
    std::fprintf(stderr, "sluice-tune: SLUICE_REG_EMULATE: %s\n", why.c_str());
    return 2;
  }
  sluice::mem::set_reg_emulation(emulate);

  CostModel m;
  m.reg_emulate = emulate.describe();
  if (!a.json)
    std::printf("# sluice-tune%s: registration cost %s\n", a.quick ? " --quick" : "",
                m.reg_emulate.c_str());
  if (!measure_registration(a, m, why)) {
    std::fprintf(stderr, "sluice-tune: %s\n", why.c_str());
    return 1;
  }
  if (!a.json)
    std::printf(
        "# T_reg(L) = %.2f us + L / %.0f MB/s (%.1f ns per 4 KiB page)%s; release %.2f "
        "us + L / %.0f MB/s\n",
        m.reg.latency_us, m.reg.MBps, 4096e3 / m.reg.MBps, emulate.active() ? " EMULATED" : "",
        m.dereg.latency_us, m.dereg.MBps);
  if (!measure_copy(a, m, why)) {
    std::fprintf(stderr, "sluice-tune: %s\n", why.c_str());
    return 1;
  }
  if (!a.json) {
    std::printf("# B_copy(L):");
    for (const auto& [L, bw] : m.copy_table) std::printf(" %zuK %.0f", L >> 10, bw);
    std::printf(" (MB/s)\n");
  }
  m.drivers.clear();
  for (const std::string& name : a.drivers) {
    DriverCost d;
    bool skip = false;
    if (!measure_driver(a, name, m, d, why, skip)) {
      std::fprintf(stderr, "sluice-tune: %s: %s\n", name.c_str(), why.c_str());
      return 1;
    }
    if (skip) {
      if (!a.json)
        std::printf("# %s: the route registers no memory: the model does not apply\n",
                    name.c_str());
      continue;
    }
    m.drivers.push_back(d);
  }
  if (m.drivers.empty()) {
    std::fprintf(stderr, "sluice-tune: no driver measured (none registers memory)\n");
    return 1;
  }
  m.choose_parameters();
  if (const auto slash = a.output.rfind('/'); slash != std::string::npos && slash > 0) {
    // ~/.config/sluice may not exist yet (one level is enough for the default path)
    const std::string dir = a.output.substr(0, slash);
    mkdir(dir.substr(0, dir.rfind('/')).c_str(), 0755);
    mkdir(dir.c_str(), 0755);
  }
  if (!sluice::proto::save_profile(a.output, m, why)) {
    std::fprintf(stderr, "sluice-tune: cannot write the profile: %s\n", why.c_str());
    return 1;
  }
  if (a.json) {
    std::printf(
        "{\"tool\":\"sluice-tune\",\"profile\":\"%s\",\"reg_emulate\":\"%s\","
        "\"lambda_reg_us\":%.3f,\"B_reg_MBps\":%.0f,\"c0\":%zu,\"q\":%.3g,\"b\":%zu,"
        "\"pipeline_chunk\":%zu",
        a.output.c_str(), m.reg_emulate.c_str(), m.reg.latency_us, m.reg.MBps, m.c0, m.q, m.block,
        m.pipeline_chunk);
    for (const DriverCost& d : m.drivers)
      std::printf(
          ",\"%s\":{\"lambda_net_us\":%.2f,\"copy_MBps\":%.0f,\"copy_over_us\":%.2f,"
          "\"zc_MBps\":%.0f,\"zc_over_us\":%.2f,\"gap_us\":%.3f,\"staged_min\":%s}",
          d.driver.c_str(), d.lambda_us, d.copy_MBps, d.copy_over_us, d.zc_MBps, d.zc_over_us,
          d.gap_us, d.staged_min == SIZE_MAX ? "null" : std::to_string(d.staged_min).c_str());
    std::printf("}\n");
  } else {
    std::printf("# chosen: C_0 = %zu B, q = %.3g, b = %zu B, fixed pipeline chunk %zu B\n", m.c0,
                m.q, m.block, m.pipeline_chunk);
    for (const DriverCost& d : m.drivers)
      std::printf("# %s: staged protocols from %s\n", d.driver.c_str(),
                  d.staged_min == SIZE_MAX ? "no size (copying is predicted faster everywhere)"
                                           : (std::to_string(d.staged_min) + " B").c_str());
    std::printf("profile written: %s\n", a.output.c_str());
  }
  return 0;
}
