// sluice-bench rma-ws: one-sided put latency and bandwidth against the size of the remote
// working set, in the manner of [GASNet-Firehose] section 4.4. Rank 0 puts into rank 1's
// registered memory at uniformly random places within the first W bytes, for each working
// set W:
//
//   latency    8-byte puts, each waited for (median and mean)
//   bandwidth  64 KiB puts (at random 64 KiB-aligned places), 8 in flight, then a flush;
//              the median of 8 groups
//
// each after a warm-up of the same length (Firehose's steady state), with rank 0's Firehose
// counters over the measured part (hit rate, one-sided share of the puts, moves, mean move
// time) and rank 1's pinned memory. `fits`: W <= M + MAXVICTIM. Run with
// SLUICE_RMA_FIREHOSE=on (off: the plain packet path; rndv, rndv-unpin, pin-all: the
// comparison strategies of [GASNet-Firehose] 4.2, whose every op handshakes, or none) on a
// route without CMA (tcp, udp, or shm with SLUICE_RMA_PATH=packets). The counters are the
// "pinning" ones every strategy reports: a hit is an op sent without a handshake, a move a
// handshake (a Firehose move, a rendezvous pin request).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sluice/rma.hpp>
#include <sluice/sluice.hpp>
#include <string>
#include <vector>

#include "bench.hpp"
#include "sizes.hpp"

namespace sluice::bench {

namespace {

constexpr std::size_t kBwSize = 64 * 1024;
constexpr int kBwWindow = 8;
constexpr int kTag = 950;

uint64_t value(const Session& s, const char* name) {
  return s.counter(name).value_or(0);
}

std::size_t env_size(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  return parse_size(v).value_or(fallback);
}

struct Row {
  std::size_t ws = 0;
  bool fits = false;
  int iters = 0;
  double lat_us = 0, lat_avg_us = 0, hit_rate = 0, one_sided = 0, move_avg_us = 0;
  uint64_t moves = 0;
  double bw_MBps = 0, bw_hit_rate = 0;
  uint64_t bw_moves = 0;
  uint64_t pinned = 0, pinned_peak = 0;
};

struct Counters {
  uint64_t hits, misses, moves, move_ns, puts;
  explicit Counters(const Session& s)
      : hits(value(s, "pinning.direct_ops")),
        misses(value(s, "pinning.handshake_ops")),
        moves(value(s, "pinning.handshakes")),
        move_ns(value(s, "pinning.handshake_time")),
        puts(value(s, "rma.puts")) {}
};

std::string plot_rma_ws(const std::vector<Row>& rows, std::size_t bound, const std::string& title,
                        const std::string& png) {
  char dir_template[] = "/tmp/sluice-bench-plot-XXXXXX";
  if (!mkdtemp(dir_template)) return "cannot create a temporary directory";
  const std::filesystem::path dir(dir_template);
  const auto data = dir / "rma_ws.dat", script = dir / "rma_ws.gp";
  {
    std::ofstream f(data);
    f << "# ws_MiB lat_us hit_rate bw_MBps bw_hit_rate\n";
    for (const Row& r : rows)
      f << static_cast<double>(r.ws) / (1 << 20) << ' ' << r.lat_us << ' ' << r.hit_rate * 100
        << ' ' << r.bw_MBps << ' ' << r.bw_hit_rate * 100 << '\n';
  }
  {
    std::ofstream f(script);
    f << "set terminal png size 1000,900\n"
      << "set output '" << png << "'\n"
      << "set multiplot layout 2,1 title '" << title << "'\n"
      << "set logscale x 2\nset grid\nset xlabel 'remote working set (MiB)'\n"
      << "set y2label 'firehose hit rate (%)'\nset y2range [0:105]\nset ytics nomirror\n"
      << "set y2tics\nset key bottom left\nset style data linespoints\n"
      << "set arrow from " << static_cast<double>(bound) / (1 << 20) << ", graph 0 to "
      << static_cast<double>(bound) / (1 << 20) << ", graph 1 nohead dt 2\n"
      << "set ylabel '8-byte put latency (us, median)'\n"
      << "plot '" << data.string() << "' using 1:2 title 'latency' lw 2, '' using 1:3 axes x1y2 "
      << "title 'hit rate' dt 3\n"
      << "set ylabel '64 KiB put bandwidth (MB/s)'\n"
      << "plot '" << data.string() << "' using 1:4 title 'bandwidth' lw 2, '' using 1:5 axes "
      << "x1y2 title 'hit rate' dt 3\n"
      << "unset multiplot\n";
  }
  const std::string cmd = "gnuplot '" + script.string() + "'";
  if (std::system(cmd.c_str()) != 0) return "gnuplot failed (script kept in " + dir.string() + ")";
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return {};
}

}  // namespace

int run_rma_ws(Session& s, const Options& o) {
  if (s.size() != 2) {
    if (s.rank() == 0) std::fprintf(stderr, "sluice-bench rma-ws: needs 2 ranks\n");
    return 2;
  }
  const std::size_t m = env_size("SLUICE_FIREHOSE_M", std::size_t{32} << 20);
  const std::size_t victims = env_size("SLUICE_FIREHOSE_MAXVICTIM", std::size_t{8} << 20);
  const std::size_t bound = m + victims;
  std::vector<std::size_t> sets = o.sizes;
  if (sets.empty()) {
    for (std::size_t w = std::size_t{1} << 20; w < bound / 2; w *= 2) sets.push_back(w);
    for (double f : {0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0})
      sets.push_back(static_cast<std::size_t>(static_cast<double>(bound) * f) / kBwSize * kBwSize);
    std::sort(sets.begin(), sets.end());
    sets.erase(std::unique(sets.begin(), sets.end()), sets.end());
  }
  const std::size_t max_ws = *std::max_element(sets.begin(), sets.end());
  const int iters = o.iters > 0 ? o.iters : 2000;
  const int bw_ops = o.reps > 0 ? o.reps : 512;

  Rma rma(s);
  std::vector<std::byte> region(s.rank() == 1 ? max_ws : 0);
  std::vector<std::byte> src(kBwSize * kBwWindow, std::byte{0x5a});
  RegisteredMemory mem;
  if (rma.register_memory(region, mem) != Errc::ok) return 1;
  RemoteKey key;
  auto packed = mem.remote_key().pack();
  if (s.rank() == 1) {
    if (s.send(packed, 0, kTag) != Errc::ok) return 1;
  } else {
    if (s.recv(packed, 1, kTag) != Errc::ok) return 1;
    key = RemoteKey::unpack(packed);
  }
  const bool pinning = s.counter("pinning.direct_ops").has_value();
  const bool firehose = s.counter("firehose.hits").has_value();
  const char* mode = std::getenv("SLUICE_RMA_FIREHOSE");
  const std::string strategy = !pinning   ? "off"
                               : firehose ? "firehose"
                                          : std::string(mode ? mode : "?");
  if (s.rank() == 0) {
    if (!o.json)
      std::printf(
          "# sluice-bench rma-ws driver=%s strategy=%s M=%zu MAXVICTIM=%zu (fits: ws <= %zu)\n"
          "%10s %5s %8s %8s %8s %9s %7s %9s %9s %8s %7s %10s %10s\n",
          std::string(s.driver_name(1)).c_str(), strategy.c_str(), m, victims, bound, "ws", "fits",
          "lat_us", "avg_us", "hit_rate", "one_sided", "moves", "move_us", "bw_MBps", "bw_hit",
          "bw_mov", "pinned", "peak");
  }
  std::vector<Row> rows;
  std::mt19937_64 rng(42);
  for (const std::size_t ws : sets) {
    Row r;
    r.ws = ws;
    r.fits = ws <= bound;
    r.iters = iters;
    if (s.rank() == 0) {
      std::uniform_int_distribution<std::size_t> place(0, ws / 8 - 1);
      std::vector<double> lat;
      lat.reserve(static_cast<std::size_t>(iters));
      for (int phase = 0; phase < 2; ++phase) {  // warm-up, then measured
        const Counters c0(s);
        lat.clear();
        for (int i = 0; i < iters; ++i) {
          const auto t0 = std::chrono::steady_clock::now();
          Request q = rma.iput({src.data(), 8}, 1, key, place(rng) * 8);
          if (s.wait(q) != Errc::ok) return 1;
          lat.push_back(
              std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                  .count());
        }
        const Counters c1(s);
        const uint64_t h = c1.hits - c0.hits, mi = c1.misses - c0.misses;
        r.hit_rate = h + mi ? static_cast<double>(h) / static_cast<double>(h + mi) : 0;
        r.one_sided = static_cast<double>(h) / static_cast<double>(c1.puts - c0.puts);
        r.moves = c1.moves - c0.moves;
        r.move_avg_us =
            r.moves ? static_cast<double>(c1.move_ns - c0.move_ns) / 1000.0 / r.moves : 0;
      }
      std::sort(lat.begin(), lat.end());
      r.lat_us = lat[lat.size() / 2];
      double sum = 0;
      for (double v : lat) sum += v;
      r.lat_avg_us = sum / static_cast<double>(lat.size());
      const std::size_t chunks = std::max<std::size_t>(ws / kBwSize, 1);
      std::uniform_int_distribution<std::size_t> chunk(0, chunks - 1);
      // Bandwidth: the median of 8 groups of puts (a loaded machine stalls some), after a
      // warm-up of the same length.
      constexpr int kGroups = 8;
      const int per_group = std::max(bw_ops / kGroups / kBwWindow, 1) * kBwWindow;
      const std::size_t n = std::min(kBwSize, ws);
      std::vector<double> group_bw;
      for (int phase = 0; phase < 2; ++phase) {
        const Counters c0(s);
        group_bw.clear();
        for (int g = 0; g < kGroups; ++g) {
          const auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < per_group; ++i) {
            const std::size_t slot = static_cast<std::size_t>(i % kBwWindow);
            if (rma.put({src.data() + slot * kBwSize, n}, 1, key, chunk(rng) * kBwSize) != Errc::ok)
              return 1;
            if (slot == kBwWindow - 1 && rma.flush() != Errc::ok) return 1;
          }
          if (rma.flush() != Errc::ok) return 1;
          const double secs =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          group_bw.push_back(static_cast<double>(n) * per_group / secs / 1e6);
        }
        const Counters c1(s);
        const uint64_t h = c1.hits - c0.hits, mi = c1.misses - c0.misses;
        std::sort(group_bw.begin(), group_bw.end());
        r.bw_MBps = group_bw[group_bw.size() / 2];
        r.bw_hit_rate = h + mi ? static_cast<double>(h) / static_cast<double>(h + mi) : 0;
        r.bw_moves = c1.moves - c0.moves;
      }
      uint64_t pinned[2] = {0, 0};
      if (s.send(std::span<const std::byte>(), 1, kTag) != Errc::ok) return 1;
      if (s.recv(std::as_writable_bytes(std::span(pinned)), 1, kTag) != Errc::ok) return 1;
      r.pinned = pinned[0];
      r.pinned_peak = pinned[1];
      rows.push_back(r);
      if (o.json) {
        std::printf(
            "{\"bench\":\"rma-ws\",\"driver\":\"%s\",\"strategy\":\"%s\",\"firehose\":%s,"
            "\"ws\":%zu,\"fits\":%s,"
            "\"M\":%zu,\"maxvictim\":%zu,\"iters\":%d,\"lat_us\":%.3f,\"lat_avg_us\":%.3f,"
            "\"hit_rate\":%.4f,\"one_sided\":%.4f,\"moves\":%llu,\"move_avg_us\":%.2f,"
            "\"bw_MBps\":%.1f,\"bw_hit_rate\":%.4f,\"bw_moves\":%llu,\"pinned_bytes\":%llu,"
            "\"pinned_peak\":%llu}\n",
            std::string(s.driver_name(1)).c_str(), strategy.c_str(), firehose ? "true" : "false",
            ws, r.fits ? "true" : "false", m, victims, iters, r.lat_us, r.lat_avg_us, r.hit_rate,
            r.one_sided, (unsigned long long)r.moves, r.move_avg_us, r.bw_MBps, r.bw_hit_rate,
            (unsigned long long)r.bw_moves, (unsigned long long)r.pinned,
            (unsigned long long)r.pinned_peak);
      } else {
        std::printf("%10s %5s %8.2f %8.2f %8.4f %9.4f %7llu %9.2f %9.1f %8.4f %7llu %10s %10s\n",
                    human_size(ws).c_str(), r.fits ? "yes" : "no", r.lat_us, r.lat_avg_us,
                    r.hit_rate, r.one_sided, (unsigned long long)r.moves, r.move_avg_us, r.bw_MBps,
                    r.bw_hit_rate, (unsigned long long)r.bw_moves, human_size(r.pinned).c_str(),
                    human_size(r.pinned_peak).c_str());
      }
      std::fflush(stdout);
    } else {
      // The target serves inside this receive; then reports its pinned memory.
      if (s.recv(std::span<std::byte>(), 0, kTag) != Errc::ok) return 1;
      const uint64_t pinned[2] = {value(s, "pinning.pinned_bytes"),
                                  value(s, "pinning.pinned_peak")};
      if (s.send(std::as_bytes(std::span(pinned)), 0, kTag) != Errc::ok) return 1;
    }
  }
  if (s.rank() == 0 && !o.plot.empty()) {
    const std::string err = plot_rma_ws(
        rows, bound,
        "sluice-bench rma-ws over " + std::string(s.driver_name(1)) +
            (firehose  ? ", Firehose M=" + human_size(m) + " MAXVICTIM=" + human_size(victims)
             : pinning ? ", strategy " + strategy
                       : ", Firehose off"),
        o.plot);
    if (!err.empty()) {
      std::fprintf(stderr, "sluice-bench rma-ws: %s\n", err.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace sluice::bench
