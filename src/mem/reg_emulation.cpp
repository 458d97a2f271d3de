#include "mem/reg_emulation.hpp"

#include <charconv>
#include <cstdio>

namespace sluice::mem {

namespace {
RegEmulation g_emulation;  // written once at start-up, before any registration
std::atomic<bool> g_active{false};
std::atomic<uint64_t> g_added_ns{0};

bool parse_number(std::string_view s, double& v) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc{} && end == s.data() + s.size() && v >= 0 && v < 1e9;
}
}  // namespace

std::string RegEmulation::describe() const {
  if (!active()) return "off";
  char buf[128];
  std::snprintf(buf, sizeof buf, "EMULATED %g us + %g ns/page (SLUICE_REG_EMULATE)",
                latency_ns / 1000, ns_per_page);
  return buf;
}

bool parse_reg_emulation(std::string_view text, RegEmulation& out, std::string& why) {
  out = RegEmulation{};
  if (text.empty() || text == "off") return true;
  const auto comma = text.find(',');
  double lat_us = 0, per_page = 0;
  if (comma == std::string_view::npos || !parse_number(text.substr(0, comma), lat_us) ||
      !parse_number(text.substr(comma + 1), per_page)) {
    why = "SLUICE_REG_EMULATE=" + std::string(text) +
          ": expected 'latency_us,ns_per_page' (e.g. 68,200), non-negative numbers, or off";
    return false;
  }
  out.latency_ns = lat_us * 1000;
  out.ns_per_page = per_page;
  return true;
}

void set_reg_emulation(const RegEmulation& e) {
  g_emulation = e;
  g_active.store(e.active(), std::memory_order_release);
}

const RegEmulation& reg_emulation() {
  static const RegEmulation off;
  return g_active.load(std::memory_order_acquire) ? g_emulation : off;
}

uint64_t reg_emulation_added_ns() {
  return g_added_ns.load(std::memory_order_relaxed);
}

void pad_registration(std::chrono::steady_clock::time_point start, std::size_t bytes) {
  if (!g_active.load(std::memory_order_acquire)) return;
  using namespace std::chrono;
  const auto target = start + nanoseconds(static_cast<int64_t>(g_emulation.target_ns(bytes)));
  auto now = steady_clock::now();
  if (now >= target) return;  // the real registration already took longer
  g_added_ns.fetch_add(static_cast<uint64_t>(duration_cast<nanoseconds>(target - now).count()),
                       std::memory_order_relaxed);
  while (steady_clock::now() < target) {
  }
}

}  // namespace sluice::mem
