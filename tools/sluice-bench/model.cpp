// sluice-bench model: [NewMadeleine]'s cost model against measurement. Per size (default
// 64 KiB .. 16 MiB, doubling) and protocol (copy path, register-per-message, a reused
// registration, the fixed pipeline, the superpipeline), the best half round trip of --iters
// on reused buffers (the median too, in JSON) next to what the model in force (a sluice-tune
// profile, SLUICE_TUNE_PROFILE, or the built-in defaults) predicts, and the relative error. The
// strategy is switched on both ranks between messages, each protocol exactly (the profile's
// thresholds off).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench.hpp"
#include "rtt.hpp"

namespace sluice::bench {
int run_model(Session& s, const Options& o) {
  if (s.size() != 2) {
    if (s.rank() == 0) std::fprintf(stderr, "sluice-bench model: needs 2 ranks\n");
    return 2;
  }
  const int peer = s.rank() ^ 1;
  std::vector<std::size_t> sizes = o.sizes;
  if (sizes.empty())
    for (std::size_t z = 64 * 1024; z <= std::min<std::size_t>(o.max_size, 16u << 20); z *= 2)
      sizes.push_back(z);
  std::vector<std::string> protocols = o.strategies;
  if (protocols.empty()) protocols = {"copy", "register", "cache", "pipeline", "superpipeline"};
  const std::string emulate = reg_emulation_label(s);
  const introspect::CostModelInfo info = introspect::model_info(s, peer);
  const std::string driver(s.driver_name(peer));
  const bool registers = introspect::route_registers(s, peer);
  if (s.rank() == 0) {
    if (o.json)
      std::printf(
          "{\"bench\":\"model\",\"driver\":\"%s\",\"route_registers\":%s,\"model\":\"%s\","
          "\"model_reg_emulate\":\"%s\",\"c0\":%zu,\"q\":%.4g,\"pipeline_chunk\":%zu,"
          "\"reg_emulate\":\"%s\"}\n",
          driver.c_str(), registers ? "true" : "false", info.source.c_str(),
          info.reg_emulate.c_str(), info.c0, info.q, info.pipeline_chunk, emulate.c_str());
    else
      std::printf(
          "# sluice-bench model driver=%s route registers memory: %s\n# model: %s (measured "
          "with registration cost %s); C_0 %zu B, q %.3g, pipeline chunk %zu B\n"
          "# registration cost of this run: %s\n"
          "# best half round trip of --iters, reused buffers: measured / predicted us (error)\n",
          driver.c_str(), registers ? "yes" : "no", info.source.c_str(), info.reg_emulate.c_str(),
          info.c0, info.q, info.pipeline_chunk, emulate.c_str());
  }
  if (s.rank() == 0 && !o.json) {
    std::printf("%10s", "size");
    for (const auto& p : protocols) std::printf(" %28s", p.c_str());
    std::printf("\n");
  }
  std::vector<Series> series;
  for (const auto& p : protocols) {
    series.push_back({p + " measured", {}, false});
    series.push_back({p + " predicted", {}, true});
  }
  std::map<std::string, double> worst;  // protocol -> largest |error|
  for (std::size_t size : sizes) {
    Mapping a(size), b(size);
    std::memset(a.span().data(), 1, size);
    std::memset(b.span().data(), 2, size);
    const int iters = o.iters > 0
                          ? o.iters
                          : static_cast<int>(std::clamp<std::size_t>((64u << 20) / size, 5, 30));
    if (s.rank() == 0 && !o.json) std::printf("%10zu", size);
    for (std::size_t k = 0; k < protocols.size(); ++k) {
      const std::string& p = protocols[k];
      if (!use_strategy(s, p, p == "pipeline" ? info.pipeline_chunk : 0)) {
        if (s.rank() == 0)
          std::fprintf(stderr, "sluice-bench model: unknown protocol %s\n", p.c_str());
        return 2;
      }
      std::vector<double> t;
      half_round_trip(s, a.span(), b.span());  // warm-up (pages, the cache's registration)
      sync_hot(s);
      for (int i = 0; i < iters; ++i) t.push_back(half_round_trip(s, a.span(), b.span()));
      // Best of n (as sluice-tune measures): the median of a loaded machine is its load.
      const double measured = *std::min_element(t.begin(), t.end());
      const double med = median(t);
      const double predicted = introspect::predict_us(s, peer, p, size);
      if (s.rank() != 0) continue;
      const double err = predicted > 0 ? (predicted - measured) / measured : 0;
      worst[p] = std::max(worst[p], std::abs(err));
      const double z = static_cast<double>(size);
      series[2 * k].points.emplace_back(z, z / measured);
      series[2 * k + 1].points.emplace_back(z, z / predicted);
      if (o.json)
        std::printf(
            "{\"bench\":\"model\",\"protocol\":\"%s\",\"size\":%zu,\"iters\":%d,"
            "\"measured_us\":%.3f,\"predicted_us\":%.3f,\"error\":%.4f,\"median_us\":%.3f,"
            "\"reg_emulate\":\"%s\"}\n",
            p.c_str(), size, iters, measured, predicted, err, med, emulate.c_str());
      else
        std::printf(" %11.1f / %8.1f (%+4.0f%%)", measured, predicted, 100 * err);
      std::fflush(stdout);
    }
    if (s.rank() == 0 && !o.json) std::printf("\n");
  }
  if (s.rank() != 0) return 0;
  for (const auto& p : protocols) {
    if (o.json)
      std::printf("{\"bench\":\"model\",\"protocol\":\"%s\",\"max_error\":%.4f,\"within_25\":%s}\n",
                  p.c_str(), worst[p], worst[p] <= 0.25 ? "true" : "false");
    else
      std::printf("# %-14s largest error %5.1f %%%s\n", p.c_str(), 100 * worst[p],
                  worst[p] <= 0.25 ? "" : "  (beyond 25 %)");
  }
  if (!o.plot.empty()) {
    const std::string err =
        plot_series(series,
                    "sluice-bench model over " + driver + " (" + info.source + ")" +
                        (emulate == "off" ? std::string() : ", registration " + emulate),
                    "ping-pong bandwidth (MB/s), dashed: predicted", o.plot);
    if (!err.empty()) {
      std::fprintf(stderr, "sluice-bench model: --plot: %s\n", err.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace sluice::bench
