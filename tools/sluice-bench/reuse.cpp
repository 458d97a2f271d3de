// sluice-bench reuse: what registration costs an application by how it reuses its send
// buffers, under the registration strategy in force (SLUICE_REG_STRATEGY; run once per
// strategy). Rank 0 sends --iters messages of one size (default 1 MiB) to rank 1:
//
//   always  one buffer, sent again and again (a solver's halo buffer: the cache's best case)
//   never   a fresh mapping for every message, the last one unmapped first (the addresses
//           usually come back, on new pages: every cached entry must be invalidated)
//   mixed   8 buffers in turn; every other message replaces its buffer first
//
// Reported (rank 0): time per message, bandwidth, and the registration counters of rank 0
// over the run (cache hits, misses, invalidations, hit rate; buffers per strategy). Only
// routes whose driver registers memory use a strategy (sluice-info --protocols says which:
// tcp with SLUICE_TCP_ZEROCOPY=on, or auto to a non-loopback peer).
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <sluice/introspect.hpp>
#include <sluice/sluice.hpp>
#include <string>
#include <vector>

#include "bench.hpp"

namespace sluice::bench {

namespace {

std::byte* fresh(std::size_t n) {
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  std::memset(p, 0x5a, n);  // an application writes its data before sending it
  return static_cast<std::byte*>(p);
}

uint64_t value(const Session& s, const char* name) {
  return s.counter(name).value_or(0);
}

}  // namespace

std::string reg_emulation_label(const Session& s) {
  return introspect::registration_emulation(s);
}

int run_reuse(Session& s, const Options& o) {
  if (s.size() != 2) {
    if (s.rank() == 0) std::fprintf(stderr, "sluice-bench reuse: needs 2 ranks\n");
    return 2;
  }
  const std::size_t size = o.sizes.empty() ? std::size_t{1} << 20 : o.sizes.front();
  const int iters = o.iters > 0 ? o.iters : 1000;
  const std::string& pattern = o.pattern;
  constexpr int kPool = 8;
  std::vector<std::byte*> pool(pattern == "mixed" ? kPool : 1, nullptr);
  for (auto& b : pool)
    if (!(b = fresh(size))) return 1;
  std::vector<std::byte> sink(s.rank() == 1 ? size : 0);

  const char* names[] = {"rcache.hits",       "rcache.misses",         "rcache.invalidations",
                         "reg.strategy.copy", "reg.strategy.register", "reg.strategy.cache"};
  uint64_t before[6];
  for (int i = 0; i < 6; ++i) before[i] = value(s, names[i]);
  if (s.barrier() != Errc::ok) return 1;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    if (s.rank() == 0) {
      std::byte*& b = pool[static_cast<std::size_t>(i) % pool.size()];
      if (pattern == "never" || (pattern == "mixed" && i % 2 == 1)) {
        munmap(b, size);
        if (!(b = fresh(size))) return 1;
      }
      if (s.send({b, size}, 1, 0) != Errc::ok) return 1;
    } else {
      if (s.recv(sink, 0, 0) != Errc::ok) return 1;
    }
  }
  if (s.barrier() != Errc::ok) return 1;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t d[6];
  for (int i = 0; i < 6; ++i) d[i] = value(s, names[i]) - before[i];
  for (auto* b : pool) munmap(b, size);
  if (s.rank() != 0) return 0;

  std::string strategy = introspect::registration(s);
  strategy = strategy.substr(0, strategy.find(' '));
  const bool registers = introspect::route_registers(s, 1);
  const double us = secs * 1e6 / iters;
  const double mbps = static_cast<double>(size) * iters / secs / 1e6;
  const double hit_rate =
      d[0] + d[1] ? static_cast<double>(d[0]) / static_cast<double>(d[0] + d[1]) : 0.0;
  if (o.json) {
    std::printf(
        "{\"bench\":\"reuse\",\"pattern\":\"%s\",\"strategy\":\"%s\",\"route_registers\":%s,"
        "\"size\":%zu,\"iters\":%d,\"us_per_msg\":%.3f,\"MBps\":%.1f,\"hits\":%llu,"
        "\"misses\":%llu,\"invalidations\":%llu,\"hit_rate\":%.4f,\"copy\":%llu,"
        "\"register\":%llu,\"cache\":%llu,\"reg_emulate\":\"%s\"}\n",
        pattern.c_str(), strategy.c_str(), registers ? "true" : "false", size, iters, us, mbps,
        (unsigned long long)d[0], (unsigned long long)d[1], (unsigned long long)d[2], hit_rate,
        (unsigned long long)d[3], (unsigned long long)d[4], (unsigned long long)d[5],
        reg_emulation_label(s).c_str());
  } else {
    std::printf("# sluice-bench reuse driver=%s route registers memory: %s (rank 0's counters)\n",
                std::string(s.driver_name(1)).c_str(), registers ? "yes" : "no");
    std::printf("# registration cost: %s\n", reg_emulation_label(s).c_str());
    std::printf("%-8s %-9s %10s %7s %11s %9s %8s %8s %8s %8s\n", "pattern", "strategy", "size",
                "iters", "us_per_msg", "MBps", "hits", "misses", "invalid", "hit_rate");
    std::printf("%-8s %-9s %10zu %7d %11.2f %9.1f %8llu %8llu %8llu %8.3f\n", pattern.c_str(),
                strategy.c_str(), size, iters, us, mbps, (unsigned long long)d[0],
                (unsigned long long)d[1], (unsigned long long)d[2], hit_rate);
  }
  return 0;
}

}  // namespace sluice::bench
