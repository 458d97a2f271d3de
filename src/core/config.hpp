// Configuration: one typed table of SLUICE_* keys (name, type with units, default, help).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::detail {

enum class ConfigType {
  boolean,   // 1/0, yes/no, on/off, true/false
  integer,   // signed 64-bit
  size,      // bytes, suffixes K/KiB, M/MiB, G/GiB (binary), e.g. "64K"
  duration,  // seconds; suffixes ns, us, ms, s; a bare number is seconds
  string,
  choice,  // one of a '|'-separated list in `choices`
};

struct ConfigKey {
  std::string_view name;  // without the SLUICE_ prefix, upper case, e.g. "EAGER_LIMIT"
  ConfigType type;
  std::string_view default_value;
  std::string_view help;          // one line
  std::string_view choices = {};  // for ConfigType::choice
};

// The table of every key Sluice knows.
std::span<const ConfigKey> config_table();

class Config {
 public:
  // Defaults only.
  Config();
  // Reads SLUICE_* from the environment. Unknown SLUICE_* keys and unparsable values are
  // appended to `problems` as one clear line each ("unknown key SLUICE_EAGER_LIMT (did you
  // mean SLUICE_EAGER_LIMIT?)"); the default is kept for a bad value.
  static Config from_environment(std::vector<std::string>& problems);
  // Same, from an explicit list of "SLUICE_KEY=value" strings (for tests).
  static Config from_strings(std::span<const std::string> env, std::vector<std::string>& problems);

  // Typed getters; `name` must be in the table with the matching type (else std::abort:
  // that is a programming error, not user input).
  bool get_bool(std::string_view name) const;
  int64_t get_int(std::string_view name) const;
  uint64_t get_size(std::string_view name) const;
  double get_seconds(std::string_view name) const;
  std::string get_string(std::string_view name) const;  // also for choice

  // Text value in force and whether it came from the environment.
  std::string value_text(std::string_view name) const;
  bool is_set(std::string_view name) const;

 private:
  std::map<std::string, std::string, std::less<>> values_;  // name -> text value
  std::map<std::string, bool, std::less<>> set_;
};

// Closest known key name to `unknown` (edit distance), or empty if nothing is close.
std::string closest_config_key(std::string_view unknown);

// Parsers used by Config (exposed for unit tests). Return false on bad input.
bool parse_size(std::string_view text, uint64_t& out);
bool parse_duration(std::string_view text, double& seconds);
bool parse_bool(std::string_view text, bool& out);

}  // namespace sluice::detail
