// sluice-bench pipeline: the ways of getting a message into registered memory side by side
// ([NewMadeleine] figure 6): the driver's copy path (strategy copy), registering every
// message (register), the fixed-chunk copy pipeline at its best chunk (pipeline, every
// chunk of --chunks tried per size) and the superpipeline. Median half round trip per size
// on reused buffers (registration per message does not depend on reuse; the copies do not
// either).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench.hpp"
#include "rtt.hpp"

namespace sluice::bench {
int run_pipeline(Session& s, const Options& o) {
  if (s.size() != 2) {
    if (s.rank() == 0) std::fprintf(stderr, "sluice-bench pipeline: needs 2 ranks\n");
    return 2;
  }
  std::vector<std::size_t> sizes = o.sizes;
  if (sizes.empty())
    for (std::size_t z = 32 * 1024; z <= o.max_size; z *= 2) sizes.push_back(z);
  const int iters = o.iters > 0 ? o.iters : 30;
  const std::vector<std::size_t> chunks = {16 << 10,  32 << 10,  64 << 10,
                                           128 << 10, 256 << 10, 512 << 10};
  const std::string emulate = reg_emulation_label(s);
  const bool registers = introspect::route_registers(s, s.rank() ^ 1);
  if (s.rank() == 0) {
    if (o.json)
      std::printf(
          "{\"bench\":\"pipeline\",\"driver\":\"%s\",\"route_registers\":%s,"
          "\"reg_emulate\":\"%s\",\"iters\":%d}\n",
          std::string(s.driver_name(1)).c_str(), registers ? "true" : "false", emulate.c_str(),
          iters);
    else
      std::printf(
          "# sluice-bench pipeline driver=%s route registers memory: %s, median of %d "
          "round trips\n# registration cost: %s\n%10s %11s %11s %11s %9s %11s  (MB/s)\n",
          std::string(s.driver_name(1)).c_str(), registers ? "yes" : "no", iters, emulate.c_str(),
          "size", "copy", "register", "pipeline", "chunk", "superpipe");
  }
  Series copy{"copy path", {}}, reg{"register per message", {}}, pipe{"pipeline (best chunk)", {}},
      super{"superpipeline", {}};
  auto measure = [&](Mapping& a, Mapping& b) {
    std::vector<double> t;
    half_round_trip(s, a.span(), b.span());  // warm-up (pages, connection)
    for (int i = 0; i < iters; ++i) t.push_back(half_round_trip(s, a.span(), b.span()));
    return median(t);
  };
  for (std::size_t size : sizes) {
    Mapping a(size), b(size);
    auto run = [&](const char* strategy, std::size_t chunk = 0) {
      if (!use_strategy(s, strategy, chunk)) throw std::runtime_error("cannot switch strategy");
      return measure(a, b);
    };
    const double t_copy = run("copy");
    const double t_reg = run("register");
    double t_pipe = 1e300;
    std::size_t best_chunk = 0;
    for (std::size_t c : chunks) {
      const double t = run("pipeline", c);
      if (t < t_pipe) t_pipe = t, best_chunk = c;
    }
    const double t_super = run("superpipeline");
    if (s.rank() != 0) continue;
    const double z = static_cast<double>(size);
    copy.points.emplace_back(z, z / t_copy);
    reg.points.emplace_back(z, z / t_reg);
    pipe.points.emplace_back(z, z / t_pipe);
    super.points.emplace_back(z, z / t_super);
    if (o.json)
      std::printf(
          "{\"bench\":\"pipeline\",\"size\":%zu,\"copy_us\":%.3f,\"register_us\":%.3f,"
          "\"pipeline_us\":%.3f,\"pipeline_chunk\":%zu,\"superpipeline_us\":%.3f,"
          "\"reg_emulate\":\"%s\"}\n",
          size, t_copy, t_reg, t_pipe, best_chunk, t_super, emulate.c_str());
    else
      std::printf("%10zu %11.1f %11.1f %11.1f %9zu %11.1f\n", size, z / t_copy, z / t_reg,
                  z / t_pipe, best_chunk, z / t_super);
    std::fflush(stdout);
  }
  if (s.rank() == 0 && !o.plot.empty()) {
    const std::string err =
        plot_series({copy, reg, pipe, super},
                    "sluice-bench pipeline over " + std::string(s.driver_name(1)) +
                        (emulate == "off" ? std::string() : ", registration " + emulate),
                    "ping-pong bandwidth (MB/s)", o.plot);
    if (!err.empty()) {
      std::fprintf(stderr, "sluice-bench pipeline: --plot: %s\n", err.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace sluice::bench
