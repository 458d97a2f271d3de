// sluice-bench firsttouch: the first round trip on never-used buffers against the best one,
// per registration strategy ([NewMadeleine] figure 7). The buffers are fresh mappings written
// once before the first round trip: never registered, but with their pages present. A strategy that
// registers on the critical path (register, cache) pays pinning on the first touch; one that copies
// through pre-registered buffers (superpipeline, pipeline) or pins in the background (ondemand)
// should not. With SLUICE_REG_EMULATE the registration cost is the emulated one: the output
// says so.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench.hpp"
#include "rtt.hpp"

namespace sluice::bench {

int run_firsttouch(Session& s, const Options& o) {
  if (s.size() != 2) {
    if (s.rank() == 0) std::fprintf(stderr, "sluice-bench firsttouch: needs 2 ranks\n");
    return 2;
  }
  std::vector<std::string> strategies = o.strategies;
  if (strategies.empty())
    strategies = {"copy", "register", "cache", "ondemand", "superpipeline", "pipeline", "adaptive"};
  std::vector<std::size_t> sizes = o.sizes;
  if (sizes.empty())
    for (std::size_t z = 32 * 1024; z <= o.max_size; z *= 2) sizes.push_back(z);
  const int iters = o.iters > 0 ? o.iters : 20;
  const int reps = o.reps > 0 ? o.reps : 5;
  const std::string emulate = reg_emulation_label(s);
  const bool registers = introspect::route_registers(s, s.rank() ^ 1);
  if (s.rank() == 0) {
    if (o.json) {
      std::printf(
          "{\"bench\":\"firsttouch\",\"driver\":\"%s\",\"route_registers\":%s,"
          "\"reg_emulate\":\"%s\",\"iters\":%d,\"reps\":%d}\n",
          std::string(s.driver_name(1)).c_str(), registers ? "true" : "false", emulate.c_str(),
          iters, reps);
    } else {
      std::printf(
          "# sluice-bench firsttouch driver=%s route registers memory: %s, %d round trips on"
          " each of %d fresh buffer pairs per size (first: median of the pairs' first)\n"
          "# registration cost: %s\n",
          std::string(s.driver_name(1)).c_str(), registers ? "yes" : "no", iters, reps,
          emulate.c_str());
      std::printf("%-14s %10s %11s %11s %11s %11s %8s\n", "strategy", "size", "first_us", "best_us",
                  "first_MBps", "best_MBps", "first/best");
    }
  }
  std::vector<Series> series;
  for (const std::string& name : strategies) {
    if (!use_strategy(s, name)) {
      if (s.rank() == 0)
        std::fprintf(stderr, "sluice-bench firsttouch: bad strategy '%s'\n", name.c_str());
      return 2;
    }
    Series first{name + " first", {}, true}, best{name + " best", {}, false};
    {  // once per strategy, untimed: what a process pays once (staging buffers, the pinning
       // thread, the connection) is not a buffer's first touch
      Mapping w(sizes.back());
      std::memset(w.span().data(), 0, sizes.back());
      half_round_trip(s, w.span(), w.span());
    }
    for (std::size_t size : sizes) {
      // `reps` pairs of fresh mappings, each written once: their pages exist (no page fault
      // on the first round trip, as for a buffer the application has just filled) but were
      // never registered. first = the median over the pairs of their first round trip (one
      // sample each is at the mercy of a loaded machine), best = the fastest of all.
      std::vector<double> firsts;
      double t_best = 1e300;
      for (int r = 0; r < reps; ++r) {
        Mapping sbuf(size), rbuf(size);
        std::memset(sbuf.span().data(), 1, size);
        std::memset(rbuf.span().data(), 0, size);
        if (s.barrier() != Errc::ok) return 1;
        sync_hot(s);
        for (int i = 0; i < iters; ++i) {
          const double t = half_round_trip(s, sbuf.span(), rbuf.span());
          if (i == 0) firsts.push_back(t);
          t_best = std::min(t_best, t);
        }
      }
      std::sort(firsts.begin(), firsts.end());
      const double t_first = firsts[firsts.size() / 2];
      if (s.rank() != 0) continue;
      const double z = static_cast<double>(size);
      const double bw_first = z / t_first, bw_best = z / t_best;
      first.points.emplace_back(z, bw_first);
      best.points.emplace_back(z, bw_best);
      if (o.json)
        std::printf(
            "{\"bench\":\"firsttouch\",\"strategy\":\"%s\",\"size\":%zu,"
            "\"first_us\":%.3f,\"best_us\":%.3f,\"first_MBps\":%.1f,\"best_MBps\":%.1f,"
            "\"reg_emulate\":\"%s\"}\n",
            name.c_str(), size, t_first, t_best, bw_first, bw_best, emulate.c_str());
      else
        std::printf("%-14s %10zu %11.2f %11.2f %11.1f %11.1f %8.3f\n", name.c_str(), size, t_first,
                    t_best, bw_first, bw_best, bw_first / bw_best);
      std::fflush(stdout);
    }
    series.push_back(std::move(first));
    series.push_back(std::move(best));
  }
  if (s.rank() == 0 && !o.plot.empty()) {
    const std::string err =
        plot_series(series,
                    "sluice-bench firsttouch over " + std::string(s.driver_name(1)) +
                        (emulate == "off" ? std::string() : ", registration " + emulate),
                    "ping-pong bandwidth (MB/s)", o.plot);
    if (!err.empty()) {
      std::fprintf(stderr, "sluice-bench firsttouch: --plot: %s\n", err.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace sluice::bench
