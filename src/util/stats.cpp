// The statistics registry (see stats.hpp): reports generated from registered counters.
#include "util/stats.hpp"

#include <algorithm>
#include <cstdio>

namespace sluice::util {

std::string_view unit_symbol(Unit u) {
  switch (u) {
    case Unit::count:
      return "";
    case Unit::bytes:
      return "B";
    case Unit::nanoseconds:
      return "ns";
  }
  return "";
}

std::uint64_t StatsRegistry::Entry::read() const {
  if (plain) return *plain;
  if (atomic) return atomic->load(std::memory_order_relaxed);
  if (computed) return computed();
  return 0;
}

StatsRegistry::Entry& StatsRegistry::push(std::string_view component, std::string_view name,
                                          Unit unit, std::string_view help) {
  Entry& e = entries_.emplace_back();
  e.component = component;
  e.name.reserve(component.size() + 1 + name.size());
  e.name.append(component).append(".").append(name);
  e.unit = unit;
  e.help = help;
  return e;
}

void StatsRegistry::add(std::string_view component, std::string_view name, Unit unit,
                        const std::uint64_t* value, std::string_view help) {
  push(component, name, unit, help).plain = value;
}

void StatsRegistry::add(std::string_view component, std::string_view name, Unit unit,
                        const std::atomic<std::uint64_t>* value, std::string_view help) {
  push(component, name, unit, help).atomic = value;
}

void StatsRegistry::add(std::string_view component, std::string_view name, Unit unit,
                        std::function<std::uint64_t()> read, std::string_view help) {
  push(component, name, unit, help).computed = std::move(read);
}

void StatsRegistry::add_info(std::string_view component, std::string_view name,
                             std::function<std::string()> read, std::string_view help) {
  push(component, name, Unit::count, help).text = std::move(read);
}

void StatsRegistry::set_kind(std::string_view full_name, Kind kind) {
  for (Entry& e : entries_)
    if (e.name == full_name && !e.is_info()) e.kind = kind;
}

std::vector<StatsRegistry::Description> StatsRegistry::describe() const {
  std::vector<Description> out;
  for (const Entry& e : entries_)
    if (!e.is_info()) out.push_back({e.name, e.component, e.unit, e.kind, e.help});
  return out;
}

void StatsRegistry::remove_component(std::string_view component) {
  std::erase_if(entries_, [&](const Entry& e) { return e.component == component; });
}

const StatsRegistry::Entry* StatsRegistry::find(std::string_view full_name) const {
  for (const Entry& e : entries_)
    if (e.name == full_name) return &e;
  return nullptr;
}

std::optional<std::uint64_t> StatsRegistry::value(std::string_view full_name) const {
  const Entry* e = find(full_name);
  if (!e || e->is_info()) return std::nullopt;
  return e->read();
}

std::optional<std::string> StatsRegistry::info(std::string_view full_name) const {
  const Entry* e = find(full_name);
  if (!e || !e->is_info()) return std::nullopt;
  return e->text();
}

std::vector<std::string> StatsRegistry::names() const {
  std::vector<std::string> out;
  for (const Entry& e : entries_)
    if (!e.is_info()) out.push_back(e.name);
  return out;
}

namespace {

// "p2p.eager.messages_sent" -> group "p2p.eager", leaf "messages_sent".
std::string_view group_of(std::string_view full) {
  const auto dot = full.rfind('.');
  return dot == std::string_view::npos ? std::string_view{} : full.substr(0, dot);
}

void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace

std::string StatsRegistry::text(std::string_view title) const {
  std::string out;
  out.append(title).append("\n");
  // Groups in order of first registration; within a group, registration order.
  std::vector<std::string_view> groups;
  for (const Entry& e : entries_) {
    const std::string_view g = group_of(e.name);
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
  }
  for (std::string_view g : groups) {
    out.append("  ").append(g).append(":");
    for (const Entry& e : entries_) {
      if (group_of(e.name) != g) continue;
      out.append(" ").append(std::string_view(e.name).substr(g.size() + 1)).append("=");
      if (e.is_info()) {
        out += e.text();
        continue;
      }
      out += std::to_string(e.read());
      const std::string_view sym = unit_symbol(e.unit);
      if (!sym.empty()) out.append(" ").append(sym);
    }
    out += "\n";
  }
  return out;
}

std::string StatsRegistry::json(int rank) const {
  std::string out = "{\"rank\":" + std::to_string(rank) + ",\"counters\":{";
  bool first = true;
  for (const Entry& e : entries_) {
    if (e.is_info()) continue;
    if (!first) out += ',';
    first = false;
    append_json_string(out, e.name);
    out += ':';
    out += std::to_string(e.read());
  }
  out += "},\"units\":{";
  first = true;
  for (const Entry& e : entries_) {
    if (e.is_info() || e.unit == Unit::count) continue;
    if (!first) out += ',';
    first = false;
    append_json_string(out, e.name);
    out += ':';
    append_json_string(out, unit_symbol(e.unit));
  }
  out += "},\"info\":{";
  first = true;
  for (const Entry& e : entries_) {
    if (!e.is_info()) continue;
    if (!first) out += ',';
    first = false;
    append_json_string(out, e.name);
    out += ':';
    append_json_string(out, e.text());
  }
  out += "}}";
  return out;
}

}  // namespace sluice::util
