// Configuration keys as data: the typed entries each component (core, a protocol, a driver)
// declares in its own table, and the read-only view a component gets of the values in
// force. Core's Config (core/config.hpp) collects the tables and reads the environment.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <unistd.h>

namespace sluice::util {

enum class ConfigType {
  boolean,   // 1/0, yes/no, on/off, true/false
  integer,   // signed 64-bit
  size,      // bytes, suffixes K/KiB, M/MiB, G/GiB (binary), e.g. "64K"
  duration,  // seconds; suffixes ns, us, ms, s; a bare number is seconds
  string,
  choice,  // one of a '|'-separated list in `choices`
};

// The values a numeric key (integer, size, duration) accepts, written in the key's own form
// ("1", "4K", "50us"). A value outside is a start-up error naming the key, the value and
// the range: nothing is clamped silently. Boolean, string and choice keys have none.
struct ConfigRange {
  std::string_view min;
  // A size may say "RAM/N": the machine's physical memory divided by N (for memory that
  // grows with the value: no single number is sane on both a laptop and a large node).
  std::string_view max;
  bool or_zero = false;  // 0 is valid too, below min: a special meaning the help names
};

// Physical memory of this machine in bytes (what "RAM/N" bounds divide).
inline uint64_t physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  // Unknown (never on Linux): 1 GiB, so that RAM-relative limits stay modest.
  if (pages <= 0 || page <= 0) return uint64_t{1} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
}

struct ConfigKey {
  std::string_view name;  // without the SLUICE_ prefix, upper case, e.g. "EAGER_LIMIT"
  ConfigType type;
  std::string_view default_value;
  ConfigRange range;              // numeric keys only
  std::string_view help;          // one line
  std::string_view choices = {};  // for ConfigType::choice
};

// A key's former name that still works (documented as an alias).
struct ConfigAlias {
  std::string_view old_name;  // e.g. "SHM_CMA_THRESHOLD"
  std::string_view name;      // the key it sets, e.g. "RNDV_GET_THRESHOLD"
};

// One component's keys, as the docs and sluice-info group them.
struct ConfigGroup {
  std::string_view component;  // "core", "p2p", "shm", ...
  std::string_view title;      // one line: what the component is
  std::span<const ConfigKey> keys;
  std::span<const ConfigAlias> aliases = {};
};

// Typed read access to the values in force. A name must be one of the tables' keys (or an
// alias) read with the getter of its type, else the process aborts: a programming error.
class ConfigValues {
 public:
  virtual bool get_bool(std::string_view name) const = 0;
  virtual int64_t get_int(std::string_view name) const = 0;
  virtual uint64_t get_size(std::string_view name) const = 0;
  virtual double get_seconds(std::string_view name) const = 0;
  virtual std::string get_string(std::string_view name) const = 0;  // also for choice
  // Whether the value came from the environment (not the default).
  virtual bool is_set(std::string_view name) const = 0;

 protected:
  ~ConfigValues() = default;
};

}  // namespace sluice::util
