// Configuration: the SLUICE_* keys of every component (core, protocols, each driver in its
// own table, src/drivers/registry.hpp), read once from the environment at start-up.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/config_key.hpp"

namespace sluice::detail {

using util::ConfigAlias;
using util::ConfigGroup;
using util::ConfigKey;
using util::ConfigType;
using util::physical_memory;

// Every component's keys, in the order the docs list them: core, the protocols, the
// reliability layer, the drivers' shared keys, then each registered driver's own table.
std::vector<ConfigGroup> config_groups();
// The keys of every group, flattened.
std::vector<ConfigKey> config_table();
// The key `name` (or the key an alias of that name sets), nullptr if unknown.
const ConfigKey* find_config_key(std::string_view name);
// The alias `name` is, or nullptr.
const ConfigAlias* find_config_alias(std::string_view name);

class Config final : public util::ConfigValues {
 public:
  // Defaults only.
  Config();
  // Reads SLUICE_* from the environment. Unknown SLUICE_* keys are appended to `warnings`
  // ("unknown configuration key SLUICE_EAGER_LIMT (did you mean SLUICE_EAGER_LIMIT?)");
  // values that do not parse, are empty or lie outside the key's range to `errors`, one line
  // each naming the key, the value and the range (the default stays in the Config, but the
  // engine refuses to start: a job must not run with other settings than were asked for).
  static Config from_environment(std::vector<std::string>& warnings,
                                 std::vector<std::string>& errors);
  // Same, from an explicit list of "SLUICE_KEY=value" strings (for tests).
  static Config from_strings(std::span<const std::string> env, std::vector<std::string>& warnings,
                             std::vector<std::string>& errors);

  // Typed getters; `name` must be in the table with the matching type (else std::abort:
  // that is a programming error, not user input).
  // An alias (a key's former name) reads the key it sets.
  bool get_bool(std::string_view name) const override;
  int64_t get_int(std::string_view name) const override;
  uint64_t get_size(std::string_view name) const override;
  double get_seconds(std::string_view name) const override;
  std::string get_string(std::string_view name) const override;  // also for choice

  // Text value in force and whether it came from the environment.
  std::string value_text(std::string_view name) const;
  bool is_set(std::string_view name) const override;
  // Where the value came from: "default", "SLUICE_<KEY>", or "SLUICE_<ALIAS> (alias)".
  std::string source(std::string_view name) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;    // name -> text value
  const std::string& source_of(std::string_view name) const;  // "" for the default
  std::map<std::string, std::string, std::less<>> set_;       // name -> variable that set it
};

// A numeric key's valid values in its unit: the integer, bytes, or nanoseconds ("RAM/N"
// resolved for this machine). False for keys without a range (bool, string, choice).
struct NumericRange {
  int64_t min = 0;
  int64_t max = 0;
  bool or_zero = false;  // 0 is valid too
};
bool numeric_range(const ConfigKey& key, NumericRange& out);
// The range as people read it: "2..16384", "0 or 512..65507", "4K..RAM/16"; with
// `this_machine`, a RAM-relative bound also says what it is here ("RAM/16 = 1536M").
std::string range_text(const ConfigKey& key, bool this_machine);

// Closest known key name to `unknown` (edit distance), or empty if nothing is close.
std::string closest_config_key(std::string_view unknown);

// Parsers used by Config (exposed for unit tests). Return false on bad input.
bool parse_size(std::string_view text, uint64_t& out);
bool parse_duration(std::string_view text, double& seconds);
bool parse_bool(std::string_view text, bool& out);

}  // namespace sluice::detail
