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
// With --strategies (and --sizes, --reps) it compares strategies in one job instead, each
// with its own buffers, interleaved over the rounds: the median time per message per
// strategy and size, the cache's hit rate, and what adaptive chose.
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sluice/introspect.hpp>
#include <sluice/sluice.hpp>
#include <string>
#include <vector>

#include "bench.hpp"
#include "rtt.hpp"

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

namespace {

// --strategies: every strategy and size in one job, interleaved (--reps rounds, each
// strategy in turn with its own buffers), median time per message over the rounds: on a
// loaded machine the strategies then share the same moments. One line per strategy and size.
int compare_strategies(Session& s, const Options& o) {
  const std::string& pattern = o.pattern;
  std::vector<std::size_t> sizes = o.sizes;
  if (sizes.empty()) sizes = {std::size_t{1} << 20};
  const int reps = o.reps > 0 ? o.reps : 3;
  const std::string emulate = reg_emulation_label(s);
  // On loopback SLUICE_TCP_ZEROCOPY=auto never registers: every strategy is then the copy
  // path, which the JSON says (route_registers).
  const bool route_registers = introspect::route_registers(s, s.rank() ^ 1);
  constexpr int kPool = 8;
  const char* names[] = {"rcache.hits", "rcache.misses"};
  const char* arms[] = {"cached", "cache", "ondemand", "superpipeline", "copy"};
  for (std::size_t size : sizes) {
    const int iters =
        o.iters > 0
            ? o.iters
            : static_cast<int>(std::clamp<std::size_t>((std::size_t{256} << 20) / size, 16, 400));
    const std::size_t n = o.strategies.size();
    std::vector<std::vector<std::byte*>> pools(n);
    for (auto& pool : pools) {
      pool.assign(pattern == "mixed" ? kPool : 1, nullptr);
      for (auto& b : pool)
        if (!(b = fresh(size))) return 1;
    }
    std::vector<std::byte> sink(s.rank() == 1 ? size : 0);
    std::vector<std::vector<double>> us(n);
    std::vector<uint64_t> hits(n), misses(n);
    std::vector<std::array<uint64_t, 5>> chose(n, std::array<uint64_t, 5>{});
    for (int rep = 0; rep < reps; ++rep) {
      for (std::size_t k = 0; k < n; ++k) {
        if (!use_strategy(s, o.strategies[k])) {
          if (s.rank() == 0)
            std::fprintf(stderr, "sluice-bench reuse: bad strategy '%s'\n",
                         o.strategies[k].c_str());
          return 2;
        }
        uint64_t before[2], arm0[5];
        for (int i = 0; i < 2; ++i) before[i] = value(s, names[i]);
        for (int a = 0; a < 5; ++a)
          arm0[a] = value(s, (std::string("reg.adaptive.") + arms[a]).c_str());
        if (s.barrier() != Errc::ok) return 1;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < iters; ++i) {
          if (s.rank() == 0) {
            std::byte*& b = pools[k][static_cast<std::size_t>(i) % pools[k].size()];
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
        const double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        us[k].push_back(secs * 1e6 / iters);
        hits[k] += value(s, names[0]) - before[0];
        misses[k] += value(s, names[1]) - before[1];
        for (int a = 0; a < 5; ++a)
          chose[k][a] += value(s, (std::string("reg.adaptive.") + arms[a]).c_str()) - arm0[a];
      }
    }
    for (auto& pool : pools)
      for (auto* b : pool) munmap(b, size);
    if (s.rank() != 0) continue;
    for (std::size_t k = 0; k < n; ++k) {
      std::sort(us[k].begin(), us[k].end());
      const double med = us[k][us[k].size() / 2];
      const double lookups = static_cast<double>(hits[k] + misses[k]);
      const double hit_rate = lookups > 0 ? static_cast<double>(hits[k]) / lookups : 0.0;
      std::string adaptive;
      for (int a = 0; a < 5; ++a)
        if (chose[k][a])
          adaptive += (adaptive.empty() ? "" : ",") + std::string(arms[a]) + "=" +
                      std::to_string(chose[k][a]);
      if (o.json)
        std::printf(
            "{\"bench\":\"reuse\",\"pattern\":\"%s\",\"strategy\":\"%s\",\"driver\":\"%s\","
            "\"route_registers\":%s,\"size\":%zu,\"iters\":%d,\"reps\":%d,\"us_per_msg\":%.3f,"
            "\"MBps\":%.1f,"
            "\"us_min\":%.3f,\"us_max\":%.3f,\"hits\":%llu,\"misses\":%llu,\"hit_rate\":%.4f,"
            "\"adaptive\":\"%s\",\"reg_emulate\":\"%s\"}\n",
            pattern.c_str(), o.strategies[k].c_str(), std::string(s.driver_name(1)).c_str(),
            route_registers ? "true" : "false", size, iters, reps, med,
            static_cast<double>(size) / med, us[k].front(), us[k].back(),
            (unsigned long long)hits[k], (unsigned long long)misses[k], hit_rate, adaptive.c_str(),
            emulate.c_str());
      else
        std::printf("%-8s %-14s %10zu %6d %11.2f %9.1f %8.3f  %s\n", pattern.c_str(),
                    o.strategies[k].c_str(), size, iters, med, static_cast<double>(size) / med,
                    hit_rate, adaptive.c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int run_reuse(Session& s, const Options& o) {
  if (s.size() != 2) {
    if (s.rank() == 0) std::fprintf(stderr, "sluice-bench reuse: needs 2 ranks\n");
    return 2;
  }
  if (!o.strategies.empty()) {
    if (s.rank() == 0 && !o.json)
      std::printf(
          "# sluice-bench reuse driver=%s, strategies interleaved, %s rounds\n"
          "# registration cost: %s\n%-8s %-14s %10s %6s %11s %9s %8s  %s\n",
          std::string(s.driver_name(1)).c_str(), o.reps > 0 ? std::to_string(o.reps).c_str() : "3",
          reg_emulation_label(s).c_str(), "pattern", "strategy", "size", "iters", "us_per_msg",
          "MBps", "hit_rate", "adaptive chose");
    return compare_strategies(s, o);
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
