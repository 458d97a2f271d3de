// Statistics as data: a registry of named counters that reports are generated from.
//
// Components keep their counters as plain integers (or the atomics they already had) and
// increment them on the hot path as before; once, when they are set up, they register a
// pointer to each with a name, a unit and one line of help. The registry only reads them
// when a report is asked for: the finalize report (SLUICE_STATS=1), one JSON object per
// rank (SLUICE_STATS=json) and lookups by name (tests, tools).
//
// Names are "<component>.<name>" with dots for sub-groups, e.g. "p2p.eager.messages_sent",
// "shm.packets_sent", "rel.retransmits_timeout". A component that goes away before the
// registry unregisters itself (remove_component).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::util {

enum class Unit : std::uint8_t {
  count,  // events, messages, packets
  bytes,
  nanoseconds,
};
std::string_view unit_symbol(Unit u);  // "", "B", "ns"

// What a counter's value means to a tool that reads it over time (MPI_T performance variables
// report it as their class): most only grow; a component marks the others after adding them.
enum class Kind : std::uint8_t {
  counter,     // only grows: events, bytes moved (the default)
  level,       // an amount in use now or a setting in force: goes up and down
  high_water,  // the largest a level has been
};

class StatsRegistry {
 public:
  StatsRegistry() = default;
  StatsRegistry(const StatsRegistry&) = delete;
  StatsRegistry& operator=(const StatsRegistry&) = delete;

  // A counter the component increments itself; the pointer must stay valid until the
  // component is removed or the registry is destroyed.
  void add(std::string_view component, std::string_view name, Unit unit, const std::uint64_t* value,
           std::string_view help = {});
  void add(std::string_view component, std::string_view name, Unit unit,
           const std::atomic<std::uint64_t>* value, std::string_view help = {});
  // A value computed when read (a gauge or a figure derived from others, e.g. a mean).
  void add(std::string_view component, std::string_view name, Unit unit,
           std::function<std::uint64_t()> read, std::string_view help = {});
  // A text attribute reported beside the counters (a mode, an availability, CPU list).
  void add_info(std::string_view component, std::string_view name,
                std::function<std::string()> read, std::string_view help = {});
  // Marks the counter "<component>.<name>" (added before) as a level or high-water mark.
  void set_kind(std::string_view full_name, Kind kind);
  // Forgets every counter and attribute of `component`.
  void remove_component(std::string_view component);

  // The current value of "<component>.<name>"; nullopt if no such counter.
  std::optional<std::uint64_t> value(std::string_view full_name) const;
  // The current text of an attribute; nullopt if no such attribute.
  std::optional<std::string> info(std::string_view full_name) const;
  // Every counter's full name, in registration order.
  std::vector<std::string> names() const;
  // Every counter (not the attributes) as a tool lists it, in registration order.
  struct Description {
    std::string name;  // full name
    std::string component;
    Unit unit = Unit::count;
    Kind kind = Kind::counter;
    std::string help;
  };
  std::vector<Description> describe() const;

  // The human report: a title line, then one line per group (a full name less its last
  // part), "  p2p.eager: messages_sent=3 bytes_sent=24 B messages_received=3".
  std::string text(std::string_view title) const;
  // One JSON object on one line (no newline):
  // {"rank":0,"counters":{"p2p.eager.messages_sent":3,...},"units":{"p2p.eager.bytes_sent":"B",...},
  //  "info":{"p2p.threshold.rndv":"auto(...)",...}}; "units" lists the counters that are not plain
  //  counts.
  std::string json(int rank) const;

 private:
  struct Entry {
    std::string component;
    std::string name;  // full name: component + "." + name
    Unit unit = Unit::count;
    Kind kind = Kind::counter;
    std::string help;
    const std::uint64_t* plain = nullptr;
    const std::atomic<std::uint64_t>* atomic = nullptr;
    std::function<std::uint64_t()> computed;
    std::function<std::string()> text;  // set for attributes only
    bool is_info() const { return static_cast<bool>(text); }
    std::uint64_t read() const;
  };
  Entry& push(std::string_view component, std::string_view name, Unit unit, std::string_view help);
  const Entry* find(std::string_view full_name) const;

  std::vector<Entry> entries_;
};

}  // namespace sluice::util
