// Test helpers: a component's counters through the statistics registry, by name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "drivers/driver.hpp"
#include "util/stats.hpp"

namespace sluice::test {

// One driver's (and its stacked drivers') counters as the finalize report prints them.
inline std::string stats_text(const drivers::Driver& d) {
  util::StatsRegistry reg;
  d.register_stats(reg, d.name());
  return reg.text(d.name());
}

// A driver's counter by full name ("rel.retransmits_fast", "udp.datagrams_received"); the
// test fails if the driver has no such counter.
inline std::uint64_t counter(const drivers::Driver& d, std::string_view name) {
  util::StatsRegistry reg;
  d.register_stats(reg, d.name());
  const auto v = reg.value(name);
  if (!v) ADD_FAILURE() << "no counter " << name << " in " << reg.text(d.name());
  return v.value_or(0);
}

// The same for a component that registers itself without a name (proto::PointToPoint:
// "p2p.eager.messages_sent", "p2p.rndv_pipeline.messages_received", ...).
template <class Component>
std::uint64_t component_counter(const Component& c, std::string_view name) {
  util::StatsRegistry reg;
  c.register_stats(reg);
  const auto v = reg.value(name);
  if (!v) ADD_FAILURE() << "no counter " << name << " in " << reg.text("component");
  return v.value_or(0);
}

}  // namespace sluice::test
