// Unit tests for the typed configuration table: defaults, parsers, problems reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "drivers/registry.hpp"

namespace sluice::detail {

namespace {

// Unknown keys and bad values both land in `problems` (warnings first).
Config parse(std::vector<std::string> env, std::vector<std::string>& problems) {
  std::vector<std::string> errors;
  Config c = Config::from_strings(env, problems, errors);
  problems.insert(problems.end(), errors.begin(), errors.end());
  return c;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(ConfigTable, EveryKeyIsWellFormedAndItsDefaultParses) {
  std::set<std::string_view> names;
  for (const ConfigKey& k : config_table()) {
    EXPECT_TRUE(names.insert(k.name).second) << "duplicate " << k.name;
    EXPECT_FALSE(k.help.empty()) << k.name;
    EXPECT_EQ(k.help.find('\n'), std::string_view::npos) << k.name;
    EXPECT_EQ(k.type == ConfigType::choice, !k.choices.empty()) << k.name;
    for (char c : k.name) EXPECT_TRUE((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
    // A default given as the value of its own variable must be accepted silently.
    std::vector<std::string> problems;
    Config c =
        parse({"SLUICE_" + std::string(k.name) + "=" + std::string(k.default_value)}, problems);
    EXPECT_TRUE(problems.empty()) << k.name << ": " << (problems.empty() ? "" : problems[0]);
  }
  // A lower bound, not an exact count: every branch that adds a key used to conflict on the
  // count. That each key is documented is checked by the docs test (CONFIGURATION.md).
  EXPECT_GE(names.size(), 75u);
}

TEST(ConfigDefaults, TypedValues) {
  Config c;
  EXPECT_EQ(c.get_string("DRIVERS"), "shm,tcp");
  EXPECT_EQ(c.get_int("UDP_SEND_SOCKETS"), 4);
  EXPECT_EQ(c.get_size("TCP_MAX_PACKET"), 512u * 1024);
  EXPECT_EQ(c.get_size("SHM_CELL_SIZE"), 8192u);
  EXPECT_EQ(c.get_int("SHM_RING_CELLS"), 64);
  EXPECT_EQ(c.get_size("EAGER_LIMIT"), 4096u);
  EXPECT_EQ(c.get_string("SHM_RNDV"), "auto");
  EXPECT_EQ(c.get_size("SHM_CMA_THRESHOLD"), 32768u);
  EXPECT_EQ(c.get_size("SHM_PIPE_CHUNK"), 32768u);
  EXPECT_EQ(c.get_int("SHM_PIPE_SLOTS"), 8);
  EXPECT_DOUBLE_EQ(c.get_seconds("SPIN_TIME"), 50e-6);
  EXPECT_DOUBLE_EQ(c.get_seconds("BACKOFF_MAX"), 1e-3);
  EXPECT_EQ(c.get_string("STATS"), "0");
  EXPECT_EQ(c.get_string("LOG_LEVEL"), "warn");
  EXPECT_DOUBLE_EQ(c.get_seconds("BACKOFF_MAX"), 1e-3);
  EXPECT_FALSE(c.is_set("EAGER_LIMIT"));
  EXPECT_EQ(c.value_text("EAGER_LIMIT"), "4K");
}

TEST(ConfigParse, Sizes) {
  uint64_t v = 0;
  const std::pair<const char*, uint64_t> good[] = {
      {"4096", 4096},  {"4K", 4096},      {"4KiB", 4096},     {"4k", 4096},       {"4KB", 4096},
      {"1M", 1 << 20}, {"1MiB", 1 << 20}, {"2G", 2ull << 30}, {"1.5M", 3 << 19},  {" 64K ", 65536},
      {"0", 0},        {"16 KiB", 16384}, {"12B", 12},        {"1T", 1ull << 40},
  };
  for (auto [text, want] : good) {
    EXPECT_TRUE(parse_size(text, v)) << text;
    EXPECT_EQ(v, want) << text;
  }
  for (const char* bad : {"", "K", "-4K", "4X", "4KiBB", "1.5", "four", "4K4", ".5K", "1e3",
                          "99999999999999999999", "20000000000G"})
    EXPECT_FALSE(parse_size(bad, v)) << bad;
}

TEST(ConfigParse, Durations) {
  double s = 0;
  const std::pair<const char*, double> good[] = {
      {"50us", 50e-6}, {"1ms", 1e-3},  {"2s", 2.0},     {"1.5s", 1.5}, {"100ns", 100e-9},
      {"3", 3.0},      {"0.25", 0.25}, {"10 MS", 1e-2}, {"0", 0.0},
  };
  for (auto [text, want] : good) {
    EXPECT_TRUE(parse_duration(text, s)) << text;
    EXPECT_DOUBLE_EQ(s, want) << text;
  }
  for (const char* bad : {"", "s", "-1s", "5min", "1.s", "fast", "1h", "1 2s"})
    EXPECT_FALSE(parse_duration(bad, s)) << bad;
}

TEST(ConfigParse, Booleans) {
  bool b = false;
  for (const char* t : {"1", "yes", "on", "true", "TRUE", "Yes", "On"}) {
    EXPECT_TRUE(parse_bool(t, b)) << t;
    EXPECT_TRUE(b) << t;
  }
  for (const char* f : {"0", "no", "off", "false", "FALSE", "No"}) {
    EXPECT_TRUE(parse_bool(f, b)) << f;
    EXPECT_FALSE(b) << f;
  }
  for (const char* bad : {"", "2", "y", "enable", "truee"}) EXPECT_FALSE(parse_bool(bad, b)) << bad;
}

TEST(ConfigEnv, GoodValuesOfEachType) {
  std::vector<std::string> problems;
  Config c = parse({"SLUICE_DRIVERS=shm,tcp", "SLUICE_EAGER_LIMIT=16384",
                    "SLUICE_SHM_RING_CELLS=128", "SLUICE_SPIN_TIME=1ms", "SLUICE_STATS=JSON",
                    "SLUICE_SHM_RNDV=CMA", "SLUICE_LOG_LEVEL=Debug"},
                   problems);
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(c.get_string("DRIVERS"), "shm,tcp");
  EXPECT_EQ(c.get_size("EAGER_LIMIT"), 16384u);
  EXPECT_TRUE(c.is_set("EAGER_LIMIT"));
  EXPECT_EQ(c.get_int("SHM_RING_CELLS"), 128);
  EXPECT_DOUBLE_EQ(c.get_seconds("SPIN_TIME"), 1e-3);
  EXPECT_EQ(c.get_string("STATS"), "json");
  EXPECT_EQ(c.get_string("SHM_RNDV"), "cma");  // choices are stored lower-case
  EXPECT_EQ(c.get_string("LOG_LEVEL"), "debug");
  EXPECT_FALSE(c.is_set("BACKOFF_MAX"));
}

TEST(ConfigEnv, LaterSettingWins) {
  std::vector<std::string> problems;
  Config c = parse({"SLUICE_EAGER_LIMIT=1K", "SLUICE_EAGER_LIMIT=2K"}, problems);
  EXPECT_EQ(c.get_size("EAGER_LIMIT"), 2048u);
}

TEST(ConfigEnv, BadValuesKeepDefaultAndNameKeyValueAndForm) {
  std::vector<std::string> problems;
  Config c = parse({"SLUICE_EAGER_LIMIT=lots", "SLUICE_SHM_RING_CELLS=12x", "SLUICE_SPIN_TIME=5min",
                    "SLUICE_UDP_GSO=maybe", "SLUICE_SHM_RNDV=rdma"},
                   problems);
  ASSERT_EQ(problems.size(), 5u);
  EXPECT_TRUE(contains(problems[0], "SLUICE_EAGER_LIMIT")) << problems[0];
  EXPECT_TRUE(contains(problems[0], "lots")) << problems[0];
  EXPECT_TRUE(contains(problems[0], "size")) << problems[0];
  EXPECT_TRUE(contains(problems[1], "integer")) << problems[1];
  EXPECT_TRUE(contains(problems[2], "duration")) << problems[2];
  EXPECT_TRUE(contains(problems[3], "boolean")) << problems[3];
  EXPECT_TRUE(contains(problems[4], "auto, get, cma, pipeline")) << problems[4];
  EXPECT_EQ(c.get_size("EAGER_LIMIT"), 4096u);
  EXPECT_EQ(c.get_int("SHM_RING_CELLS"), 64);
  EXPECT_DOUBLE_EQ(c.get_seconds("SPIN_TIME"), 50e-6);
  EXPECT_TRUE(c.get_bool("UDP_GSO"));
  EXPECT_EQ(c.get_string("SHM_RNDV"), "auto");
  EXPECT_FALSE(c.is_set("EAGER_LIMIT"));
}

TEST(ConfigTable, EveryNumericKeyHasARangeHoldingItsDefault) {
  for (const ConfigKey& k : config_table()) {
    const bool numeric = k.type == ConfigType::integer || k.type == ConfigType::size ||
                         k.type == ConfigType::duration;
    NumericRange r;
    EXPECT_EQ(numeric_range(k, r), numeric) << k.name;
    if (!numeric) continue;
    EXPECT_LE(r.min, r.max) << k.name;
    // The default is accepted (the first test), so it lies inside.
    EXPECT_FALSE(range_text(k, false).empty()) << k.name;
  }
}

TEST(ConfigEnv, OutOfRangeValuesAreErrorsNamingKeyValueAndRange) {
  std::vector<std::string> warnings, errors;
  Config c = Config::from_strings(
      std::vector<std::string>{"SLUICE_SHM_RING_CELLS=-1", "SLUICE_UDP_SEND_SOCKETS=-1",
                               "SLUICE_REL_WINDOW=1000", "SLUICE_TCP_QUEUE_LIMIT=0",
                               "SLUICE_SHM_CELL_SIZE=100G",
                               "SLUICE_SPIN_TIME=", "SLUICE_UDP_RX_BUFFERS=abc"},
      warnings, errors);
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(errors.size(), 7u);
  EXPECT_EQ(errors[0], "bad value SLUICE_SHM_RING_CELLS=\"-1\": out of range 2..16384");
  EXPECT_EQ(errors[1], "bad value SLUICE_UDP_SEND_SOCKETS=\"-1\": out of range 1..64");
  EXPECT_EQ(errors[2], "bad value SLUICE_REL_WINDOW=\"1000\": out of range 0 or 1..128");
  EXPECT_TRUE(contains(errors[3], "SLUICE_TCP_QUEUE_LIMIT=\"0\": out of range 4K..RAM/16 (= "))
      << errors[3];
  EXPECT_EQ(errors[4], "bad value SLUICE_SHM_CELL_SIZE=\"100G\": out of range 256..1M");
  EXPECT_TRUE(contains(errors[5], "SLUICE_SPIN_TIME=\"\": expected a duration")) << errors[5];
  EXPECT_TRUE(contains(errors[5], " in 0..10s")) << errors[5];
  EXPECT_TRUE(contains(errors[6], "SLUICE_UDP_RX_BUFFERS=\"abc\": expected an integer in 1..1024"))
      << errors[6];
  EXPECT_EQ(c.get_int("SHM_RING_CELLS"), 64);  // not set: the engine refuses to start
  EXPECT_FALSE(c.is_set("SHM_RING_CELLS"));
}

TEST(ConfigEnv, RangeBoundsAreInclusiveAndZeroWhereAllowed) {
  std::vector<std::string> warnings, errors;
  Config c = Config::from_strings(
      std::vector<std::string>{"SLUICE_SHM_RING_CELLS=2", "SLUICE_UDP_SEND_SOCKETS=64",
                               "SLUICE_REL_WINDOW=0", "SLUICE_UDP_DATAGRAM=0",
                               "SLUICE_BACKOFF_MAX=1us", "SLUICE_REL_MIN_RTO=10000ns"},
      warnings, errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(c.get_int("SHM_RING_CELLS"), 2);
  errors.clear();
  Config::from_strings(std::vector<std::string>{"SLUICE_UDP_DATAGRAM=511",
                                                "SLUICE_BACKOFF_MAX=999ns", "SLUICE_REL_WINDOW=-1"},
                       warnings, errors);
  EXPECT_EQ(errors.size(), 3u);
}

TEST(ConfigRange, RamRelativeBoundFollowsPhysicalMemory) {
  const ConfigKey* k = find_config_key("TCP_QUEUE_LIMIT");
  ASSERT_NE(k, nullptr);
  NumericRange r;
  ASSERT_TRUE(numeric_range(*k, r));
  EXPECT_EQ(static_cast<uint64_t>(r.max), physical_memory() / 16 / (1 << 20) * (1 << 20));
  EXPECT_EQ(range_text(*k, false), "4K..RAM/16");
}

TEST(ConfigEnv, UnknownKeySuggestsClosest) {
  std::vector<std::string> problems;
  parse({"SLUICE_EAGER_LIMT=8K"}, problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_TRUE(contains(problems[0], "SLUICE_EAGER_LIMT")) << problems[0];
  EXPECT_TRUE(contains(problems[0], "did you mean SLUICE_EAGER_LIMIT?")) << problems[0];

  EXPECT_EQ(closest_config_key("EAGER_LIMT"), "EAGER_LIMIT");
  EXPECT_EQ(closest_config_key("SLUICE_EAGER_LIMT"), "EAGER_LIMIT");
  EXPECT_EQ(closest_config_key("EAGRE_LIMIT"), "EAGER_LIMIT");  // transposition
  EXPECT_EQ(closest_config_key("eager_limit"), "EAGER_LIMIT");
  EXPECT_EQ(closest_config_key("SHM_PIPE_SLOT"), "SHM_PIPE_SLOTS");
  EXPECT_EQ(closest_config_key("STAT"), "STATS");
  EXPECT_EQ(closest_config_key("FOO"), "");
  EXPECT_EQ(closest_config_key("COMPLETELY_DIFFERENT"), "");
}

TEST(ConfigEnv, UnknownKeyWithoutCloseMatchPointsToSluiceInfo) {
  std::vector<std::string> problems;
  parse({"SLUICE_FOO=1"}, problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "unknown configuration key SLUICE_FOO (see sluice-info --config)");
}

TEST(ConfigEnv, LauncherVariablesAndForeignVariablesAreNotReported) {
  std::vector<std::string> problems;
  Config c = parse({"SLUICE_RANK=0", "SLUICE_SIZE=4", "SLUICE_LOCAL_RANK=0", "SLUICE_LOCAL_SIZE=4",
                    "SLUICE_JOB_ID=abc", "SLUICE_JOB_KEY=00", "SLUICE_BOOT_ADDR=/tmp/x.sock",
                    "PATH=/usr/bin", "EAGER_LIMIT=1", "MY_SLUICE_X=1", "OMPI_COMM_WORLD_RANK=0"},
                   problems);
  EXPECT_TRUE(problems.empty()) << problems.front();
  EXPECT_EQ(c.get_size("EAGER_LIMIT"), 4096u);
}

TEST(ConfigEnv, FromEnvironmentReadsProcessEnvironment) {
  ::setenv("SLUICE_BACKOFF_MAX", "2.5ms", 1);
  ::setenv("SLUICE_LOG_LEVL", "info", 1);
  std::vector<std::string> problems;
  std::vector<std::string> errors;
  Config c = Config::from_environment(problems, errors);
  EXPECT_TRUE(errors.empty());
  ::unsetenv("SLUICE_BACKOFF_MAX");
  ::unsetenv("SLUICE_LOG_LEVL");
  EXPECT_DOUBLE_EQ(c.get_seconds("BACKOFF_MAX"), 2.5e-3);
  bool reported = false;
  for (const std::string& p : problems) reported |= contains(p, "did you mean SLUICE_LOG_LEVEL?");
  EXPECT_TRUE(reported);
}

TEST(ConfigGetterMisuseDeathTest, WrongTypeOrUnknownNameAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Config c;
  EXPECT_DEATH(c.get_int("EAGER_LIMIT"), "wrong type");
  EXPECT_DEATH(c.get_size("NO_SUCH_KEY"), "not in the configuration table");
  EXPECT_DEATH(c.get_bool("DRIVERS"), "wrong type");
}

TEST(ConfigAliases, FormerProtocolKeysStillWork) {
  // The rendezvous thresholds were named after shm; they apply to any driver with get.
  std::vector<std::string> problems;
  Config c = parse({"SLUICE_SHM_CMA_THRESHOLD=64K", "SLUICE_SHM_RNDV=cma", "SLUICE_SHM_CMA_MAX=1M",
                    "SLUICE_SHM_COLL_CMA_MAX=8M", "SLUICE_SHM_PUSH_MAX=16K"},
                   problems);
  EXPECT_TRUE(problems.empty()) << problems.front();
  EXPECT_EQ(c.get_size("RNDV_GET_THRESHOLD"), 65536u);
  EXPECT_EQ(c.get_string("RNDV_MODE"), "cma");
  EXPECT_EQ(c.get_size("RNDV_GET_MAX"), 1u << 20);
  EXPECT_EQ(c.get_size("RNDV_COLL_GET_MAX"), 8u << 20);
  EXPECT_EQ(c.get_size("RNDV_PUSH_MAX"), 16384u);
  EXPECT_TRUE(c.is_set("RNDV_GET_MAX"));
  EXPECT_TRUE(c.is_set("SHM_CMA_MAX"));  // the alias reads its key
  EXPECT_EQ(c.get_size("SHM_CMA_MAX"), 1u << 20);
  EXPECT_EQ(c.source("RNDV_GET_MAX"), "SLUICE_SHM_CMA_MAX (alias of SLUICE_RNDV_GET_MAX)");
  EXPECT_EQ(c.source("EAGER_LIMIT"), "default");
}

TEST(ConfigAliases, TheKeysOwnNameWinsInAnyOrder) {
  std::vector<std::string> problems;
  Config a = parse({"SLUICE_RNDV_GET_MAX=2M", "SLUICE_SHM_CMA_MAX=1M"}, problems);
  Config b = parse({"SLUICE_SHM_CMA_MAX=1M", "SLUICE_RNDV_GET_MAX=2M"}, problems);
  EXPECT_EQ(a.get_size("RNDV_GET_MAX"), 2u << 20);
  EXPECT_EQ(b.get_size("RNDV_GET_MAX"), 2u << 20);
  EXPECT_EQ(b.source("RNDV_GET_MAX"), "SLUICE_RNDV_GET_MAX");
  EXPECT_EQ(closest_config_key("SHM_CMA_THRESHLD"), "SHM_CMA_THRESHOLD");
}

TEST(ConfigGroups, EachDriverComponentOwnsItsPrefixedKeys) {
  // A driver's keys are SLUICE_<NAME>_*, in its own table, and appear in config_table().
  const std::vector<ConfigKey> all = config_table();
  std::size_t drivers_seen = 0;
  for (const drivers::DriverComponent* d : drivers::driver_components()) {
    ++drivers_seen;
    std::string prefix;
    for (char ch : d->name)
      prefix += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    prefix += "_";
    for (const ConfigKey& k : d->config) {
      EXPECT_TRUE(k.name.starts_with(prefix)) << d->name << ": " << k.name;
      EXPECT_NE(std::find_if(all.begin(), all.end(),
                             [&](const ConfigKey& a) { return a.name == k.name; }),
                all.end());
    }
  }
  EXPECT_GE(drivers_seen, 3u);
  // The groups are core, p2p, reliable, the drivers' shared keys, then one per driver.
  const std::vector<ConfigGroup> groups = config_groups();
  ASSERT_GE(groups.size(), 3u + drivers_seen);
  EXPECT_EQ(groups[0].component, "core");
  EXPECT_EQ(groups[1].component, "p2p");
  EXPECT_EQ(groups[2].component, "reliable");
}

}  // namespace
}  // namespace sluice::detail
