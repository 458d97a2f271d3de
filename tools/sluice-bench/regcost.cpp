// regcost: what registering memory costs, next to copying it ([NewMadeleine] section 2 and
// its figure 1). For each size, the uring memory domain registers (pins) and deregisters
// an already-touched buffer many times; memcpy copies the same bytes. Then
// T_reg(L) = lambda_reg + L / B_reg is fitted to the registration times (least squares on
// relative error, so small sizes weigh as much as large ones), once for registration alone
// and once for registration + deregistration (what an uncached use pays).
//
// Runs in rank 0 alone (the other ranks return at once): it measures the local kernel.
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sluice/sluice.hpp>
#include <string>
#include <vector>

#include "bench.hpp"
#include "mem/uring_domain.hpp"
#include "rtt.hpp"

namespace sluice::bench {

namespace {

using Clock = std::chrono::steady_clock;

double ns_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

// Weighted least squares of y = a + b x with weights 1 / y^2 (relative error).
RegFit fit(const std::vector<RegcostResult>& rs, bool with_dereg) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& r : rs) {
    const double x = static_cast<double>(r.size);
    const double y = with_dereg ? r.reg_ns + r.dereg_ns : r.reg_ns;
    if (y <= 0) continue;
    const double w = 1 / (y * y);
    sw += w;
    sx += w * x;
    sy += w * y;
    sxx += w * x * x;
    sxy += w * x * y;
  }
  RegFit f;
  const double det = sw * sxx - sx * sx;
  if (rs.size() < 2 || det == 0) return f;
  const double b = (sw * sxy - sx * sy) / det;  // ns per byte
  f.latency_us = (sy - b * sx) / sw / 1000;
  f.bandwidth_MBps = b > 0 ? 1000 / b : 0;  // bytes/ns -> 10^6 B/s
  f.ns_per_page = b * 4096;
  return f;
}

}  // namespace

int run_regcost(Session& session, const Options& o) {
  if (session.rank() != 0) return 0;
  std::string why;
  auto domain = mem::UringDomain::open({.slots = 16, .ring_entries = 8}, why);
  if (!domain) {
    std::fprintf(stderr, "sluice-bench regcost: the uring domain is unavailable: %s\n",
                 why.c_str());
    return 1;
  }
  std::vector<std::size_t> sizes = o.sizes;
  if (sizes.empty())
    for (std::size_t s = 4096; s <= (std::size_t{64} << 20); s *= 2) sizes.push_back(s);
  const std::size_t largest = *std::max_element(sizes.begin(), sizes.end());
  if (largest > mem::UringDomain::kMaxRegistration) {
    std::fprintf(stderr, "sluice-bench regcost: sizes above 1 GiB cannot be registered\n");
    return 2;
  }
  // Two touched buffers (the copy's source and destination); registration pins the first.
  auto map = [&] {
    void* p = mmap(nullptr, largest, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return static_cast<std::byte*>(nullptr);
    std::memset(p, 1, largest);
    return static_cast<std::byte*>(p);
  };
  std::byte* src = map();
  std::byte* dst = map();
  if (!src || !dst) {
    std::fprintf(stderr, "sluice-bench regcost: cannot map %zu bytes\n", largest);
    return 1;
  }

  std::vector<RegcostResult> results;
  for (std::size_t size : sizes) {
    // About 256 MiB registered per size, between 5 and 1000 repetitions.
    const int reps = o.iters > 0 ? o.iters
                                 : static_cast<int>(std::clamp<double>(
                                       256.0 * 1024 * 1024 / static_cast<double>(size), 5, 1000));
    std::vector<double> reg(reps), dereg(reps), copy(reps);
    for (int i = 0; i < reps; ++i) {
      mem::Registration r;
      auto t0 = Clock::now();
      const Errc e = domain->register_memory({src, size}, r);
      reg[i] = ns_since(t0);
      if (e != Errc::ok) {
        std::fprintf(stderr, "sluice-bench regcost: registering %zu bytes failed: %s (errno %d)\n",
                     size, std::string(to_string(e)).c_str(), domain->last_error());
        return 1;
      }
      t0 = Clock::now();
      r.reset();
      dereg[i] = ns_since(t0);
      t0 = Clock::now();
      std::memcpy(dst, src, size);
      copy[i] = ns_since(t0);
      asm volatile("" ::"r"(dst) : "memory");  // keep the copy
    }
    RegcostResult res;
    res.size = size;
    res.reps = reps;
    res.reg_ns = median(reg);
    res.dereg_ns = median(dereg);
    res.memcpy_ns = median(copy);
    results.push_back(res);
    if (o.progress) std::fprintf(stderr, "\rregcost: %zu bytes done   ", size), std::fflush(stderr);
  }
  if (o.progress) std::fprintf(stderr, "\r%40s\r", "");
  munmap(src, largest);
  munmap(dst, largest);

  const RegFit reg_fit = fit(results, false);
  const RegFit full_fit = fit(results, true);
  auto mbps = [](std::size_t size, double ns) { return ns > 0 ? size / ns * 1000 : 0; };
  if (o.json) {
    for (const auto& r : results)
      std::printf(
          "{\"bench\":\"regcost\",\"domain\":\"uring\",\"size\":%zu,\"reps\":%d,"
          "\"reg_us\":%.3f,\"dereg_us\":%.3f,\"memcpy_us\":%.3f,\"reg_MBps\":%.1f,"
          "\"memcpy_MBps\":%.1f,\"reg_emulate\":\"%s\"}\n",
          r.size, r.reps, r.reg_ns / 1000, r.dereg_ns / 1000, r.memcpy_ns / 1000,
          mbps(r.size, r.reg_ns), mbps(r.size, r.memcpy_ns), reg_emulation_label(session).c_str());
    std::printf(
        "{\"bench\":\"regcost\",\"reg_emulate\":\"%s\",\"fit\":\"T_reg(L) = lambda_reg + L / "
        "B_reg\","
        "\"lambda_reg_us\":%.3f,\"B_reg_MBps\":%.1f,\"ns_per_page\":%.1f,"
        "\"lambda_regdereg_us\":%.3f,\"B_regdereg_MBps\":%.1f,\"regdereg_ns_per_page\":%.1f}\n",
        reg_emulation_label(session).c_str(), reg_fit.latency_us, reg_fit.bandwidth_MBps,
        reg_fit.ns_per_page, full_fit.latency_us, full_fit.bandwidth_MBps, full_fit.ns_per_page);
  } else {
    std::printf("# regcost: uring domain (io_uring registered buffers), medians, touched memory\n");
    std::printf("# registration cost: %s\n", reg_emulation_label(session).c_str());
    std::printf("%12s %6s %11s %11s %11s %11s %12s %12s\n", "size", "reps", "reg_us", "dereg_us",
                "reg+dereg", "memcpy_us", "reg_MB/s", "memcpy_MB/s");
    for (const auto& r : results)
      std::printf("%12zu %6d %11.2f %11.2f %11.2f %11.2f %12.0f %12.0f\n", r.size, r.reps,
                  r.reg_ns / 1000, r.dereg_ns / 1000, (r.reg_ns + r.dereg_ns) / 1000,
                  r.memcpy_ns / 1000, mbps(r.size, r.reg_ns), mbps(r.size, r.memcpy_ns));
    if (reg_fit.bandwidth_MBps <= 0) {
      std::printf("# fit T_reg(L) = lambda_reg + L / B_reg: needs two different sizes or more\n");
    } else {
      std::printf(
          "# fit T_reg(L) = lambda_reg + L / B_reg (least squares, relative error):\n"
          "#   registration:                  lambda_reg = %.2f us, B_reg = %.0f MB/s (%.1f ns per "
          "4 KiB page)\n"
          "#   registration + deregistration: lambda     = %.2f us, B     = %.0f MB/s (%.1f ns per "
          "4 KiB page)\n"
          "# [NewMadeleine] InfiniBand: lambda_reg = 68 us, 200 ns per page\n",
          reg_fit.latency_us, reg_fit.bandwidth_MBps, reg_fit.ns_per_page, full_fit.latency_us,
          full_fit.bandwidth_MBps, full_fit.ns_per_page);
    }
  }
  if (!o.plot.empty()) {
    std::string err = plot_regcost(results, reg_fit, reg_emulation_label(session), o.plot);
    if (!err.empty()) {
      std::fprintf(stderr, "sluice-bench regcost: --plot: %s\n", err.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace sluice::bench
