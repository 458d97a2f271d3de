// Registration-cost emulation (SLUICE_REG_EMULATE=λ_us,ns_per_page): makes every real
// registration of a pinning domain take at least λ + pages · ns_per_page, so that the
// protocols can be studied in the regime the papers measured ([NewMadeleine]: InfiniBand's
// ibv_reg_mr at 68 µs + 200 ns per 4 KiB page) on a machine where io_uring pins in well
// under a microsecond. The difference to the target is spent busy-waiting on the
// registering thread, not sleeping: a real registration is CPU time in the kernel, and a
// sleep's timer slack (tens of µs) would swamp the emulated latency. Real pinning still
// happens; only its duration is stretched.
//
// Process-wide: set once at start-up (the engine, from the configuration) before any
// registration, then read by every pinning domain. Everything that reports a registration
// cost says when it was emulated (describe(), the statistics' "reg.emulate").
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::mem {

struct RegEmulation {
  double latency_ns = 0;   // target fixed cost of one registration
  double ns_per_page = 0;  // target cost of each 4 KiB page
  bool active() const { return latency_ns > 0 || ns_per_page > 0; }
  // Target time for registering `bytes`.
  double target_ns(std::size_t bytes) const {
    const double pages = static_cast<double>((bytes + 4095) / 4096);
    return latency_ns + ns_per_page * pages;
  }
  // "off", or "EMULATED 68 us + 200 ns/page (SLUICE_REG_EMULATE)".
  std::string describe() const;
};

// Parses "λ_us,ns_per_page" (e.g. "68,200"); "" or "off" is no emulation. False, with `why`,
// for anything else (negative or non-numeric values, a missing comma).
bool parse_reg_emulation(std::string_view text, RegEmulation& out, std::string& why);

// The emulation in force (process-wide).
void set_reg_emulation(const RegEmulation& e);
const RegEmulation& reg_emulation();
// Emulated time added so far, over every registration of the process.
uint64_t reg_emulation_added_ns();

// Called by a pinning domain right after a real registration of `bytes` that started at
// `start`: busy-waits until the emulated target time has passed. Nothing when inactive.
void pad_registration(std::chrono::steady_clock::time_point start, std::size_t bytes);

}  // namespace sluice::mem
