// Configuration: the typed table of SLUICE_* keys, value parsers, and "did you mean".
#include "core/config.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/boot_client.hpp"
#include "drivers/registry.hpp"
#include "mem/registration_cache.hpp"

extern char** environ;

namespace sluice::detail {
namespace {

using T = ConfigType;

// Core: waiting, logging, driver choice, the progress thread. (A function: the DRIVERS
// default comes from the registry.)
std::span<const ConfigKey> core_keys() {
  static const ConfigKey keys[] = {
      {"DRIVERS",
       T::string,
       drivers::default_driver_list(),
       {},
       "comma list of drivers (sluice-info --drivers) in preference order: each peer gets the "
       "first that reaches it (same-host drivers: local peers only); the own rank always uses the "
       "loopback"},
      {"SPIN_TIME",
       T::duration,
       "50us",
       {"0", "10s"},
       "how long a blocked wait polls before it starts to yield and sleep (0 when local ranks "
       "outnumber CPUs, unless set)"},
      {"BACKOFF_MAX",
       T::duration,
       "1ms",
       {"1us", "100ms"},
       "longest sleep between polls of a long-blocked wait (at most 100ms: every wait may "
       "oversleep by this much)"},
      {"STATS",
       T::choice,
       "0",
       {},
       "per-rank statistics at finalize: 1 = a readable report to stderr, json = one JSON object "
       "per rank on one line (counter names: docs/CONFIGURATION.md, Statistics)",
       "0|1|json"},
      {"STATS_FILE",
       T::string,
       "",
       {},
       "where SLUICE_STATS writes instead of stderr: a file path in which %r becomes the rank "
       "(appended to)"},
      {"LOG_LEVEL",
       T::choice,
       "warn",
       {},
       "messages printed to stderr at this level and above",
       "error|warn|info|debug"},
      {"PMIX_FAILURE_POLL",
       T::duration,
       "200ms",
       {"1ms", "600s"},
       "under a PMIx launcher, how often (at most) a rank asks for the job's process table to "
       "learn of failed ranks (a round trip to the launcher per rank)"},
      {"PROGRESS_THREAD",
       T::choice,
       "off",
       {},
       "a thread per rank that progresses communication while the application computes; auto = "
       "on when a core is free for it (per sluicerun's placement, else fewer ranks than CPUs)",
       "off|on|auto"},
      {"PROGRESS_CPUS",
       T::string,
       "",
       {},
       "CPUs (OS indices, e.g. 1 or 2-3) the progress thread is bound to; sluicerun --bind "
       "numa|bind sets it; empty: not bound"},
      {"PROGRESS_SPIN",
       T::duration,
       "20us",
       {"0", "10s"},
       "how long an idle progress thread polls before it sleeps in the driver's doorbell (0 "
       "when it shares a CPU with its rank, unless set)"},
      {"REPORT_BINDINGS",
       T::boolean,
       "0",
       {},
       "each rank prints the CPUs it and its progress thread run on, at init (sluicerun "
       "--report-bindings)"},
      {"RMA_PATH",
       T::choice,
       "auto",
       {},
       "how one-sided puts and gets (sluice/rma.hpp) reach a peer's memory: auto = through the "
       "driver where it can (a one-sided get/put: CMA, the own rank's memcpy), else as packets the "
       "target's "
       "engine carries out; packets = always the latter (docs/RMA.md)",
       "auto|packets"},
      {"WIN_ASSIST",
       T::size,
       "256K",
       {"0", "1G"},
       "MPI windows in one shared segment (MPI_Win_allocate on one host): smallest contiguous "
       "get or put that a helper thread of the origin, on another CPU, copies part of (two "
       "cores copy: the CPU of a bound rank that waits meanwhile); 0 = one memcpy, no thread "
       "(docs/RMA.md)"},
      {"WIN_ASSIST_CHUNK",
       T::size,
       "64K",
       {"4K", "64M"},
       "MPI windows: the unit of work the origin and its copy helper claim (WIN_ASSIST)"},
      {"RMA_FIREHOSE",
       T::choice,
       "off",
       {},
       "Firehose remote pinning for one-sided puts and gets that travel as packets (no CMA): "
       "on = the target keeps buckets of registered memory pinned under a per-peer budget, a "
       "put or get to a mapped bucket needs no handshake, a miss moves firehoses first "
       "(docs/RMA.md); for comparison ([GASNet-Firehose] 4.2): rndv = each op asks the target "
       "to pin its buckets and waits for the reply, nothing unpinned; rndv-unpin = the same, "
       "released after the op; pin-all = every registered region pinned whole when registered",
       "on|off|rndv|rndv-unpin|pin-all"},
      {"FIREHOSE_M",
       T::size,
       "32M",
       {"1M", "RAM/4"},
       "Firehose: bytes each rank pins for its peers' firehoses (M), shared evenly: F = M / "
       "(FIREHOSE_BUCKET * (ranks - 1)) firehoses per peer"},
      {"FIREHOSE_MAXVICTIM",
       T::size,
       "8M",
       {"0", "RAM/4"},
       "Firehose: bytes of buckets no firehose maps any more that stay pinned (the victim "
       "FIFO, lazy unpinning); pinned memory never exceeds FIREHOSE_M + FIREHOSE_MAXVICTIM"},
      {"FIREHOSE_BUCKET",
       T::size,
       "64K",
       {"4K", "64M"},
       "Firehose: bucket size, the unit pinned and mapped (rounded up to a multiple of the "
       "page size)"},
      {"FIREHOSE_THRESHOLD",
       T::size,
       "0",
       {"0", "1G"},
       "Firehose: smallest put or get that goes through a firehose; smaller ones travel as "
       "plain packets"},
      {"COLL_TUNING",
       T::string,
       "",
       {},
       "overrides of the collective algorithm thresholds for measurements: comma list of "
       "field=value (sizes in bytes) with the fields of coll::Tuning (docs/COLLECTIVES.md), "
       "e.g. bcast_linear_max_procs=0,alltoall_at_once_total=4194304; every rank the same"},
  };
  return keys;
}

// Point-to-point protocols: where eager ends and which rendezvous runs (any driver).
constexpr ConfigKey kP2pKeys[] = {
    {"EAGER_LIMIT",
     T::size,
     "4K",
     {"0", "1G"},
     "largest message (bytes) sent eagerly; larger ones use rendezvous; clamped to the "
     "driver's inline payload"},
    {"RNDV_MODE",
     T::choice,
     "auto",
     {},
     "rendezvous data path on a driver with one-sided get: pipeline = pipelined copy through "
     "the driver, get = single copy by the receiver (cma: the same), auto = get from "
     "RNDV_GET_THRESHOLD up to RNDV_GET_MAX, the pipeline elsewhere (measured crossovers in "
     "docs/PERFORMANCE.md)",
     "auto|get|cma|pipeline"},
    {"RNDV_GET_THRESHOLD",
     T::size,
     "32K",
     {"0", "RAM/1"},
     "message size (bytes) from which RNDV_MODE=auto uses get instead of the pipeline"},
    {"RNDV_GET_MAX",
     T::size,
     "512K",
     {"0", "RAM/1"},
     "largest message RNDV_MODE=auto moves by get; larger ones take the pipeline (a get by "
     "CMA pins the sender's pages per call; no upper bound when local ranks outnumber CPUs)"},
    {"RNDV_COLL_GET_MAX",
     T::size,
     "4M",
     {"0", "RAM/1"},
     "collective schedules' sends (RNDV_MODE=auto) move by get up to this size even above "
     "RNDV_GET_MAX: every rank of a collective copies, so one copy per message beats the "
     "two-copy pipeline there (docs/PERFORMANCE.md)"},
    {"RNDV_PUSH_MAX",
     T::size,
     "512K",
     {"0", "RAM/16"},
     "largest message the sender pushes right after its rendezvous request, without waiting "
     "for the receiver, on a driver that takes pushed fragments (0: never); the receiver "
     "copies it out, or stashes it until its receive is posted. Synchronous sends and "
     "collective schedules never push; 0 when local ranks outnumber CPUs (unless set)"},
    {"REG_STRATEGY",
     T::choice,
     "cache",
     {},
     "how a rendezvous buffer on a route whose driver registers memory (a zero-copy path) is "
     "registered: copy = not at all, the driver's copy path; register = pinned and unpinned "
     "for each message; cache = through the registration cache (pinned once, kept while its "
     "pages stay, invalidated by SLUICE_REG_CACHE_MONITOR); ondemand = the rendezvous request "
     "leaves first and a pinning thread pins the buffer in growing chunks through the cache, "
     "fragments whose chunk is not pinned yet go by copy ([Open-MX]); superpipeline = copied "
     "through pre-registered staging buffers in chunks growing as C_0 q^i, each copy overlapping "
     "the previous chunk's send ([NewMadeleine]); pipeline = the same with fixed chunks; "
     "adaptive = per send the cheapest of these by the cache's hits and each one's observed "
     "time (docs/DESIGN.md); routes that pin nothing always copy",
     "copy|register|cache|ondemand|superpipeline|pipeline|adaptive"},
    {"REG_SUPERPIPELINE_C0",
     T::size,
     "12K",
     {"4K", "4M"},
     "strategy superpipeline: the first chunk, copied during the rendezvous round trip"},
    {"REG_SUPERPIPELINE_Q",
     T::string,
     "1.5",
     {},
     "strategy superpipeline: chunk i has C_0 q^i bytes (at most one staging buffer); a number "
     "from 1 (a fixed pipeline of C_0) to 4"},
    {"REG_PIPELINE_CHUNK",
     T::size,
     "64K",
     {"4K", "4M"},
     "strategy pipeline: the fixed chunk size (at most one staging buffer: the driver's packet)"},
    {"REG_STAGING_BUFFERS",
     T::integer,
     "3",
     {"2", "16"},
     "strategies superpipeline and pipeline: pre-registered staging buffers per pinning domain "
     "(each the driver's packet size); a chunk waits for a free one (flow control)"},
    {"TUNE_PROFILE",
     T::string,
     "auto",
     {},
     "the cost model profile sluice-tune writes ([NewMadeleine]'s model fitted on this "
     "machine, docs/TUNING.md): its C_0, q, pipeline chunk, staging buffers and per-driver "
     "thresholds become the staged strategies' (a REG_* key set explicitly still wins); auto = "
     "$XDG_CONFIG_HOME/sluice/tune.profile (else ~/.config/sluice/tune.profile) when it exists, "
     "else built-in defaults; off = built-in defaults; anything else is the profile's path. A "
     "profile that cannot be read or parsed stops the start-up"},
};

// The protocol-level keys' former, driver-named names (they keep working).
constexpr ConfigAlias kP2pAliases[] = {
    {"SHM_RNDV", "RNDV_MODE"},         {"SHM_CMA_THRESHOLD", "RNDV_GET_THRESHOLD"},
    {"SHM_CMA_MAX", "RNDV_GET_MAX"},   {"SHM_COLL_CMA_MAX", "RNDV_COLL_GET_MAX"},
    {"SHM_PUSH_MAX", "RNDV_PUSH_MAX"},
};

// The reliability layer the engine stacks on a driver whose caps say unreliable.
constexpr ConfigKey kReliableKeys[] = {
    {"REL_WINDOW",
     T::integer,
     "0",
     {"1", "128", true},
     "reliability layer: unacknowledged packets per peer (128: what the selective acks "
     "cover); 0: REL_WINDOW_BYTES / datagram payload, 64..128"},
    {"REL_WINDOW_BYTES",
     T::size,
     "2M",
     {"4K", "RAM/64"},
     "reliability layer: unacknowledged bytes per peer (kept for retransmission)"},
    {"REL_MIN_RTO",
     T::duration,
     "2ms",
     {"10us", "10s"},
     "reliability layer: smallest retransmission timeout (10us: the timer granularity)"},
    {"REL_DELAYED_ACK",
     T::duration,
     "50us",
     {"0", "100ms"},
     "reliability layer: how long an ack waits for reverse traffic to ride on"},
    {"REL_PEER_TIMEOUT",
     T::duration,
     "30s",
     {"1s", "86400s"},
     "reliability layer: a peer that acknowledges nothing this long is declared dead"},
    {"REL_TRUST_LOOPBACK",
     T::boolean,
     "1",
     {},
     "reliability layer: copied payloads to a peer on a loopback address (an intact route) go "
     "without their CRC32C, as the kernel skips its own checksums there; 0: every payload "
     "carries it, and packets without one are refused (the sender resends them with it)"},
};

constexpr std::string_view kPrefix = "SLUICE_";

const ConfigKey* lookup(std::string_view name) {
  return find_config_key(name);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && lower(a) == lower(b);
}

// Length of the unsigned decimal ("12", "1.5") at the start of `s`, 0 if there is none.
std::size_t decimal_length(std::string_view s) {
  auto digit = [&](std::size_t i) {
    return i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));
  };
  std::size_t n = 0;
  while (digit(n)) ++n;
  if (n == 0) return 0;
  if (n < s.size() && s[n] == '.') {
    if (!digit(n + 1)) return 0;
    ++n;
    while (digit(n)) ++n;
  }
  return n;
}

bool parse_int(std::string_view text, int64_t& out) {
  text = trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

bool parse_choice(std::string_view text, std::string_view choices, std::string& out) {
  text = trim(text);
  while (!choices.empty()) {
    std::size_t bar = choices.find('|');
    std::string_view c = choices.substr(0, bar);
    if (iequals(c, text)) {
      out = lower(c);
      return true;
    }
    if (bar == std::string_view::npos) break;
    choices.remove_prefix(bar + 1);
  }
  return false;
}

// Checks `text` against the key's type; on success `canonical` is the value to store.
bool validate(const ConfigKey& key, std::string_view text, std::string& canonical) {
  canonical = std::string(trim(text));
  uint64_t size;
  double seconds;
  bool flag;
  int64_t integer;
  switch (key.type) {
    case T::boolean:
      return parse_bool(text, flag);
    case T::integer:
      return parse_int(text, integer);
    case T::size:
      return parse_size(text, size);
    case T::duration:
      return parse_duration(text, seconds);
    case T::string:
      canonical = std::string(text);
      return true;
    case T::choice:
      return parse_choice(text, key.choices, canonical);
  }
  return false;
}

// A parsed numeric value in the key's unit (integer, bytes, nanoseconds), as a long double
// so that values far outside any range (2^64 bytes, 10^12 s) still compare correctly.
bool numeric_value(const ConfigKey& key, std::string_view text, long double& out) {
  switch (key.type) {
    case T::integer: {
      int64_t v;
      if (!parse_int(text, v)) return false;
      out = static_cast<long double>(v);
      return true;
    }
    case T::size: {
      uint64_t v;
      if (!parse_size(text, v)) return false;
      out = static_cast<long double>(v);
      return true;
    }
    case T::duration: {
      double v;
      if (!parse_duration(text, v)) return false;
      // Whole nanoseconds: "1us" must equal a bound of 1000ns exactly.
      out = std::roundl(static_cast<long double>(v) * 1e9L);
      return true;
    }
    default:
      return false;
  }
}

// A range bound as written in the table ("4K", "RAM/16"), in the key's unit.
bool bound_value(const ConfigKey& key, std::string_view text, int64_t& out) {
  if (key.type == T::size && text.starts_with("RAM/")) {
    int64_t divisor = 0;
    if (!parse_int(text.substr(4), divisor) || divisor <= 0) return false;
    // Whole MiB: a bound people can read back ("1506M") and type.
    out = static_cast<int64_t>(physical_memory() / static_cast<uint64_t>(divisor) &
                               ~((uint64_t{1} << 20) - 1));
    return true;
  }
  long double v;
  if (!numeric_value(key, text, v)) return false;
  out = static_cast<int64_t>(v);
  return true;
}

// A size in its shortest exact form with a binary suffix ("1536M", "4K", "1000").
std::string size_text(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T"};
  std::size_t u = 0;
  while (u + 1 < std::size(kUnits) && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + kUnits[u];
}
std::string expected_form(const ConfigKey& key) {
  switch (key.type) {
    case T::boolean:
      return "a boolean (1/0, yes/no, on/off, true/false)";
    case T::integer:
      return "an integer";
    case T::size:
      return "a size in bytes (e.g. 4096, 64K, 4KiB, 1M, 2G)";
    case T::duration:
      return "a duration (e.g. 100ns, 50us, 1ms, 1.5s; a bare number is seconds)";
    case T::string:
      return "a string";
    case T::choice: {
      std::string s = "one of ";
      for (char c : key.choices) s += c == '|' ? std::string(", ") : std::string(1, c);
      return s;
    }
  }
  return "?";
}

// Restricted Damerau-Levenshtein (optimal string alignment) distance.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::size_t> d((n + 1) * (m + 1));
  auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * (m + 1) + j]; };
  for (std::size_t i = 0; i <= n; ++i) at(i, 0) = i;
  for (std::size_t j = 0; j <= m; ++j) at(0, j) = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
    }
  }
  return at(n, m);
}

[[noreturn]] void misuse(std::string_view name, const char* what) {
  std::fprintf(stderr, "sluice: internal error: configuration key \"%.*s\" %s\n",
               static_cast<int>(name.size()), name.data(), what);
  std::abort();
}

// Looks up `name` for a typed getter; aborts on a programming error.
const ConfigKey& checked(std::string_view name, ConfigType a, ConfigType b) {
  const ConfigKey* key = lookup(name);
  if (!key) misuse(name, "is not in the configuration table");
  if (key->type != a && key->type != b) misuse(name, "is read with a getter of the wrong type");
  return *key;
}

}  // namespace

std::vector<ConfigGroup> config_groups() {
  std::vector<ConfigGroup> g = {
      {"core", "waiting, logging, driver choice, the progress thread", core_keys()},
      {"p2p", "point-to-point protocols: eager and rendezvous thresholds (any driver)", kP2pKeys,
       kP2pAliases},
      {"reliable", "the reliability layer, stacked on any driver whose caps say unreliable",
       kReliableKeys},
      {"mem", "memory registration: the registration cache and its invalidation monitor",
       mem::registration_cache_config()},
  };
  for (const ConfigGroup& shared : drivers::driver_shared_config()) g.push_back(shared);
  for (const drivers::DriverComponent* d : drivers::driver_components())
    g.push_back({d->name, d->title, d->config, d->aliases});
  return g;
}

std::vector<ConfigKey> config_table() {
  std::vector<ConfigKey> all;
  for (const ConfigGroup& g : config_groups()) all.insert(all.end(), g.keys.begin(), g.keys.end());
  return all;
}

const ConfigAlias* find_config_alias(std::string_view name) {
  // The groups' spans point at constant data, so the pointer outlives the vector.
  for (const ConfigGroup& g : config_groups())
    for (const ConfigAlias& a : g.aliases)
      if (a.old_name == name) return &a;
  return nullptr;
}

const ConfigKey* find_config_key(std::string_view name) {
  if (const ConfigAlias* a = find_config_alias(name)) name = a->name;
  for (const ConfigGroup& g : config_groups())
    for (const ConfigKey& k : g.keys)
      if (k.name == name) return &k;
  return nullptr;
}

bool parse_size(std::string_view text, uint64_t& out) {
  std::string_view s = trim(text);
  const std::size_t n = decimal_length(s);
  if (n == 0) return false;
  const std::string_view number = s.substr(0, n);
  const std::string unit = lower(trim(s.substr(n)));
  // Binary multiples: "K", "KB", "KiB" (any case) all mean 1024; "B" or nothing is bytes.
  unsigned shift = 0;
  if (!unit.empty() && unit != "b") {
    const std::string_view rest = std::string_view(unit).substr(1);
    if (!(rest.empty() || rest == "b" || rest == "ib")) return false;
    switch (unit[0]) {
      case 'k':
        shift = 10;
        break;
      case 'm':
        shift = 20;
        break;
      case 'g':
        shift = 30;
        break;
      case 't':
        shift = 40;
        break;
      default:
        return false;
    }
  }
  const std::size_t dot = number.find('.');
  uint64_t whole = 0;
  const std::string_view whole_text = number.substr(0, dot);
  auto [end, ec] = std::from_chars(whole_text.data(), whole_text.data() + whole_text.size(), whole);
  if (ec != std::errc{} || whole > (std::numeric_limits<uint64_t>::max() >> shift)) return false;
  uint64_t bytes = whole << shift;
  if (dot != std::string_view::npos) {
    // A fraction needs a unit ("1.5M"): a size is a whole number of bytes.
    if (shift == 0) return false;
    double fraction = 0;
    std::from_chars(number.data() + dot, number.data() + number.size(), fraction);
    bytes += static_cast<uint64_t>(fraction * static_cast<double>(uint64_t{1} << shift));
  }
  out = bytes;
  return true;
}

bool parse_duration(std::string_view text, double& seconds) {
  std::string_view s = trim(text);
  const std::size_t n = decimal_length(s);
  double number = 0;
  if (n == 0 || std::from_chars(s.data(), s.data() + n, number).ec != std::errc{}) return false;
  const std::string unit = lower(trim(s.substr(n)));
  double scale;
  if (unit.empty() || unit == "s")
    scale = 1;
  else if (unit == "ms")
    scale = 1e-3;
  else if (unit == "us")
    scale = 1e-6;
  else if (unit == "ns")
    scale = 1e-9;
  else
    return false;
  seconds = number * scale;
  return true;
}

bool parse_bool(std::string_view text, bool& out) {
  const std::string s = lower(trim(text));
  if (s == "1" || s == "yes" || s == "on" || s == "true") {
    out = true;
    return true;
  }
  if (s == "0" || s == "no" || s == "off" || s == "false") {
    out = false;
    return true;
  }
  return false;
}

std::string closest_config_key(std::string_view unknown) {
  std::string name = upper(unknown);
  if (std::string_view(name).starts_with(kPrefix)) name.erase(0, kPrefix.size());
  std::vector<std::string_view> candidates;  // every key, and the former names that still work
  for (const ConfigGroup& g : config_groups()) {
    for (const ConfigKey& k : g.keys) candidates.push_back(k.name);
    for (const ConfigAlias& a : g.aliases) candidates.push_back(a.old_name);
  }
  std::string_view best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (std::string_view c : candidates) {
    const std::size_t d = edit_distance(name, c);
    // Close enough to be a typo: about a third of the name, and always 2 edits.
    const std::size_t limit = std::max<std::size_t>(2, c.size() / 3);
    if (d <= limit && d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return std::string(best);
}

Config::Config() {
  for (const ConfigKey& k : config_table()) {
    values_[std::string(k.name)] = std::string(k.default_value);
    set_[std::string(k.name)] = {};
  }
}

Config Config::from_environment(std::vector<std::string>& warnings,
                                std::vector<std::string>& errors) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, kPrefix.data(), kPrefix.size()) == 0) env.emplace_back(*e);
  return from_strings(env, warnings, errors);
}

Config Config::from_strings(std::span<const std::string> env, std::vector<std::string>& warnings,
                            std::vector<std::string>& errors) {
  Config config;
  std::vector<std::string_view> set_by_name;  // keys set under their own name: no alias overrides
  for (const std::string& entry : env) {
    std::string_view text = entry;
    if (!text.starts_with(kPrefix)) continue;  // not ours
    const std::size_t eq = text.find('=');
    const std::string_view name = text.substr(kPrefix.size(), eq - kPrefix.size());
    const ConfigAlias* alias = find_config_alias(name);
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view{} : text.substr(eq + 1);
    const ConfigKey* key = lookup(name);
    if (!key) {
      if (is_launcher_variable(name)) continue;  // set by sluicerun, not configuration
      const std::string guess = closest_config_key(name);
      std::string line = "unknown configuration key SLUICE_" + std::string(name);
      line +=
          guess.empty() ? " (see sluice-info --config)" : " (did you mean SLUICE_" + guess + "?)";
      warnings.push_back(std::move(line));
      continue;
    }
    const std::string range = key->range.min.empty() ? "" : range_text(*key, true);
    const std::string bad =
        "bad value SLUICE_" + std::string(name) + "=\"" + std::string(value) + "\": ";
    std::string canonical;
    if (!validate(*key, value, canonical)) {
      errors.push_back(bad + "expected " + expected_form(*key) +
                       (range.empty() ? "" : " in " + range));
      continue;
    }
    long double number;
    NumericRange r;
    if (numeric_value(*key, value, number) && numeric_range(*key, r) &&
        !(r.or_zero && number == 0) &&
        (number < static_cast<long double>(r.min) || number > static_cast<long double>(r.max))) {
      errors.push_back(bad + "out of range " + range);
      continue;
    }
    if (alias && std::find(set_by_name.begin(), set_by_name.end(), key->name) != set_by_name.end())
      continue;  // the key's own name wins over its former one
    if (!alias) set_by_name.push_back(key->name);
    config.values_[std::string(key->name)] = std::move(canonical);
    config.set_[std::string(key->name)] =
        "SLUICE_" + std::string(name) +
        (alias ? " (alias of SLUICE_" + std::string(key->name) + ")" : "");
  }
  return config;
}

bool numeric_range(const ConfigKey& key, NumericRange& out) {
  if (key.range.min.empty() || key.range.max.empty()) return false;
  if (!bound_value(key, key.range.min, out.min) || !bound_value(key, key.range.max, out.max))
    misuse(key.name, "has a range that does not parse");
  out.or_zero = key.range.or_zero;
  return true;
}

std::string range_text(const ConfigKey& key, bool this_machine) {
  if (key.range.min.empty()) return {};
  std::string s = key.range.or_zero ? "0 or " : "";
  s += std::string(key.range.min) + ".." + std::string(key.range.max);
  NumericRange r;
  if (this_machine && key.range.max.starts_with("RAM/") && numeric_range(key, r))
    s += " (= " + size_text(static_cast<uint64_t>(r.max)) + " here)";
  return s;
}

bool Config::get_bool(std::string_view name) const {
  bool v = false;
  parse_bool(values_.find(checked(name, T::boolean, T::boolean).name)->second, v);
  return v;
}

int64_t Config::get_int(std::string_view name) const {
  int64_t v = 0;
  parse_int(values_.find(checked(name, T::integer, T::integer).name)->second, v);
  return v;
}

uint64_t Config::get_size(std::string_view name) const {
  uint64_t v = 0;
  parse_size(values_.find(checked(name, T::size, T::size).name)->second, v);
  return v;
}

double Config::get_seconds(std::string_view name) const {
  double v = 0;
  parse_duration(values_.find(checked(name, T::duration, T::duration).name)->second, v);
  return v;
}

std::string Config::get_string(std::string_view name) const {
  return values_.find(checked(name, T::string, T::choice).name)->second;
}

std::string Config::value_text(std::string_view name) const {
  if (const ConfigAlias* a = find_config_alias(name)) name = a->name;
  auto it = values_.find(name);
  if (it == values_.end()) misuse(name, "is not in the configuration table");
  return it->second;
}

bool Config::is_set(std::string_view name) const {
  return !source_of(name).empty();
}

std::string Config::source(std::string_view name) const {
  const std::string& s = source_of(name);
  return s.empty() ? "default" : s;
}

const std::string& Config::source_of(std::string_view name) const {
  if (const ConfigAlias* a = find_config_alias(name)) name = a->name;
  auto it = set_.find(name);
  if (it == set_.end()) misuse(name, "is not in the configuration table");
  return it->second;
}

}  // namespace sluice::detail
