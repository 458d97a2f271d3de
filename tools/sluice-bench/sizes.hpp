// Message-size sweeps shared by sluice-bench and the peer MPI benchmark
// (bench/peers/mpi_pingpong.c carries a C copy of sweep_sizes: keep them identical).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::bench {

// round(1.05^i) for i = 0, 1, ... while <= max_size, deduplicated, then max_size itself if
// the sequence did not land on it: 5 % steps, as in [NewMadeleine]'s first-touch sweeps.
// 1 B .. 16 MiB gives 300 sizes.
inline std::vector<std::size_t> sweep_sizes(std::size_t max_size) {
  std::vector<std::size_t> out;
  std::size_t prev = 0;
  for (int i = 0;; ++i) {
    double x = std::pow(1.05, static_cast<double>(i));
    if (x > static_cast<double>(max_size) + 0.5) break;
    auto s = static_cast<std::size_t>(std::llround(x));
    if (s > max_size) break;
    if (s != prev) {
      out.push_back(s);
      prev = s;
    }
  }
  if (prev != max_size) out.push_back(max_size);
  return out;
}

// "65536", "64K", "4M", "1G", "64KiB" (binary multiples).
inline std::optional<std::size_t> parse_size(std::string_view s) {
  std::size_t i = 0;
  unsigned long long v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    unsigned long long next = v * 10 + static_cast<unsigned>(s[i] - '0');
    if (next / 10 != v) return std::nullopt;  // overflow
    v = next;
    ++i;
  }
  if (i == 0) return std::nullopt;
  unsigned shift = 0;
  if (i < s.size()) {
    switch (s[i]) {
      case 'k':
      case 'K':
        shift = 10;
        ++i;
        break;
      case 'm':
      case 'M':
        shift = 20;
        ++i;
        break;
      case 'g':
      case 'G':
        shift = 30;
        ++i;
        break;
      default:
        break;
    }
  }
  if (shift && i < s.size() && s[i] == 'i') ++i;
  if (i < s.size() && (s[i] == 'B' || s[i] == 'b')) ++i;
  if (i != s.size()) return std::nullopt;
  if (shift && v > (~0ULL >> shift)) return std::nullopt;
  return static_cast<std::size_t>(v << shift);
}

// "8,64K,1M" -> {8, 65536, 1048576}; nullopt on any bad or empty element.
inline std::optional<std::vector<std::size_t>> parse_size_list(std::string_view s) {
  std::vector<std::size_t> out;
  while (true) {
    std::size_t comma = s.find(',');
    auto one = parse_size(s.substr(0, comma));
    if (!one) return std::nullopt;
    out.push_back(*one);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

// 1536 -> "1.5 KiB", 4194304 -> "4.0 MiB", 100 -> "100 B".
inline std::string human_size(std::size_t s) {
  char buf[32];
  if (s >= (std::size_t{1} << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(s) / (1 << 20));
  else if (s >= 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(s) / 1024);
  else
    std::snprintf(buf, sizeof buf, "%zu B", s);
  return buf;
}

}  // namespace sluice::bench
