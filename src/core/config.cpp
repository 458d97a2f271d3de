// Configuration: the typed table of SLUICE_* keys, value parsers, and "did you mean".
#include "core/config.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "core/boot_client.hpp"

extern char** environ;

namespace sluice::detail {
namespace {

using T = ConfigType;

// The one table of every key (the only global: constant data).
constexpr ConfigKey kTable[] = {
    {"DRIVERS", T::string, "shm,tcp",
     "comma list of drivers (shm, tcp, udp) in preference order: each peer gets the first that "
     "reaches it (shm: same host only); \"self\" is always used for the own rank"},
    {"SHM_CELL_SIZE", T::size, "8K",
     "bytes per shared-memory ring cell; eager messages travel inline in one cell"},
    {"SHM_RING_CELLS", T::integer, "64",
     "cells per ring (count), one ring per ordered pair of local ranks"},
    {"EAGER_LIMIT", T::size, "4K",
     "largest message (bytes) sent eagerly on shm; larger ones use rendezvous; clamped to the "
     "cell payload"},
    {"SHM_RNDV", T::choice, "auto",
     "rendezvous data path: pipeline = copy through shared bulk slots, cma = single copy "
     "(process_vm_readv), auto = cma from SHM_CMA_THRESHOLD up to SHM_CMA_MAX, the pipeline "
     "elsewhere (measured crossovers in docs/PERFORMANCE.md)",
     "auto|cma|pipeline"},
    {"SHM_CMA_THRESHOLD", T::size, "32K",
     "message size (bytes) from which SHM_RNDV=auto uses CMA instead of the pipeline"},
    {"SHM_CMA_MAX", T::size, "512K",
     "largest message SHM_RNDV=auto moves by CMA; larger ones take the pipeline (CMA pins "
     "the sender's pages per call; no upper bound when local ranks outnumber CPUs)"},
    {"SHM_COLL_CMA_MAX", T::size, "4M",
     "collective schedules' sends (SHM_RNDV=auto) move by CMA up to this size even above "
     "SHM_CMA_MAX: every rank of a collective copies, so one copy per message beats the "
     "two-copy pipeline there (docs/PERFORMANCE.md)"},
    {"SHM_PUSH_MAX", T::size, "0",
     "largest message the sender pushes through the bulk slots right after its rendezvous "
     "request, without waiting for the receiver (0: never); the receiver copies it out, or "
     "stashes it until its receive is posted. Synchronous sends never push"},
    {"SHM_PIPE_CHUNK", T::size, "8K", "bytes per pipelined fragment / shared bulk slot"},
    {"SHM_PIPE_SLOTS", T::integer, "16", "bulk slots (count) per ordered pair of local ranks"},
    {"SPIN_TIME", T::duration, "50us",
     "how long a blocked wait polls before it starts to yield and sleep"},
    {"BACKOFF_MAX", T::duration, "1ms", "longest sleep between polls of a long-blocked wait"},
    {"STATS", T::boolean, "0", "print per-rank statistics to stderr at finalize"},
    {"LOG_LEVEL", T::choice, "warn", "messages printed to stderr at this level and above",
     "error|warn|info|debug"},
    {"NET_IF", T::string, "",
     "network interface whose IPv4 addresses tcp/udp publish to peers (empty: every interface "
     "that is up)"},
    {"NET_ADDR", T::string, "",
     "the one IPv4 address tcp/udp publish to peers (empty: the interfaces' addresses)"},
    {"TCP_MAX_PACKET", T::size, "512K",
     "payload bytes per tcp frame, i.e. per pipelined rendezvous fragment"},
    {"TCP_QUEUE_LIMIT", T::size, "16M",
     "bytes queued per tcp peer in user space before sends wait for the socket to drain"},
    {"TCP_SOCKET_BUFFER", T::size, "0", "SO_SNDBUF/SO_RCVBUF of tcp sockets; 0: kernel autotuning"},
    {"TCP_CONNECT_TIMEOUT", T::duration, "30s",
     "how long tcp keeps trying to connect to a peer before declaring it dead"},
    {"PMIX_FAILURE_POLL", T::duration, "200ms",
     "under a PMIx launcher, how often (at most) a rank asks for the job's process table to "
     "learn of failed ranks (a round trip to the launcher per rank)"},
    {"UDP_DATAGRAM", T::size, "0",
     "bytes per udp datagram; 0: from the path MTU (65507 on loopback, 1472 on a 1500 MTU link)"},
    {"UDP_RX_BUFFERS", T::integer, "64",
     "udp receive pool: datagram buffers filled per recvmmsg call (count)"},
    {"UDP_SEND_SOCKETS", T::integer, "4", "udp send sockets used round-robin (count)"},
    {"UDP_GSO", T::boolean, "1",
     "udp segmentation offload: a run of full-size datagrams to one peer goes out in one "
     "sendmsg (UDP_SEGMENT); off by itself where the kernel or route refuses it"},
    {"UDP_GRO", T::boolean, "1",
     "udp receive offload (UDP_GRO): coalesced reads, split here; receive buffers are then "
     "64 KiB each (pool: UDP_RX_BUFFERS x 64 KiB)"},
    {"UDP_CONNECT", T::boolean, "1",
     "udp in a 2-process job: receive and send through one socket connected to the peer (the "
     "kernel's early demux, as a raw connected socket); an unconnected one shares the port for "
     "anything else"},
    {"UDP_SOCKET_BUFFER", T::size, "8M",
     "udp SO_RCVBUF (and SO_SNDBUF, split over the send sockets); forced beyond rmem_max when "
     "permitted"},
    {"UDP_RAILS", T::string, "",
     "udp multi-rail: comma-separated interfaces, one rail each (e.g. eth0,eth1); traffic is "
     "striped over them and fails over when one stops delivering (empty: one rail)"},
    {"UDP_FAULT", T::string, "",
     "test only: damage udp packets below the reliability layer with the seeded injector, e.g. "
     "\"drop=0.2,duplicate=0.01,reorder=0.05,corrupt=0.01,seed=7\" (seed defaults to rank+1)"},
    {"REL_WINDOW", T::integer, "0",
     "reliability layer (udp): unacknowledged packets per peer (1..128); 0: "
     "REL_WINDOW_BYTES / datagram payload, 64..128"},
    {"REL_WINDOW_BYTES", T::size, "2M", "reliability layer (udp): unacknowledged bytes per peer"},
    {"REL_MIN_RTO", T::duration, "2ms", "reliability layer (udp): smallest retransmission timeout"},
    {"REL_DELAYED_ACK", T::duration, "50us",
     "reliability layer (udp): how long an ack waits for reverse traffic to ride on"},
    {"REL_PEER_TIMEOUT", T::duration, "30s",
     "reliability layer (udp): a peer that acknowledges nothing this long is declared dead"},
    {"PROGRESS_THREAD", T::choice, "off",
     "a thread per rank that progresses communication while the application computes; auto = "
     "on when a core is free for it (per sluicerun's placement, else fewer ranks than CPUs)",
     "off|on|auto"},
    {"PROGRESS_CPUS", T::string, "",
     "CPUs (OS indices, e.g. 1 or 2-3) the progress thread is bound to; sluicerun --bind "
     "numa|bind sets it; empty: not bound"},
    {"PROGRESS_SPIN", T::duration, "20us",
     "how long an idle progress thread polls before it sleeps in the driver's doorbell (0 "
     "when it shares a CPU with its rank, unless set)"},
    {"REPORT_BINDINGS", T::boolean, "0",
     "each rank prints the CPUs it and its progress thread run on, at init (sluicerun "
     "--report-bindings)"},
};

constexpr std::string_view kPrefix = "SLUICE_";

const ConfigKey* lookup(std::string_view name) {
  for (const ConfigKey& k : kTable)
    if (k.name == name) return &k;
  return nullptr;
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

std::span<const ConfigKey> config_table() {
  return kTable;
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
  std::string_view best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const ConfigKey& k : kTable) {
    const std::size_t d = edit_distance(name, k.name);
    // Close enough to be a typo: about a third of the name, and always 2 edits.
    const std::size_t limit = std::max<std::size_t>(2, k.name.size() / 3);
    if (d <= limit && d < best_distance) {
      best = k.name;
      best_distance = d;
    }
  }
  return std::string(best);
}

Config::Config() {
  for (const ConfigKey& k : kTable) {
    values_[std::string(k.name)] = std::string(k.default_value);
    set_[std::string(k.name)] = false;
  }
}

Config Config::from_environment(std::vector<std::string>& problems) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, kPrefix.data(), kPrefix.size()) == 0) env.emplace_back(*e);
  return from_strings(env, problems);
}

Config Config::from_strings(std::span<const std::string> env, std::vector<std::string>& problems) {
  Config config;
  for (const std::string& entry : env) {
    std::string_view text = entry;
    if (!text.starts_with(kPrefix)) continue;  // not ours
    const std::size_t eq = text.find('=');
    const std::string_view name = text.substr(kPrefix.size(), eq - kPrefix.size());
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view{} : text.substr(eq + 1);
    const ConfigKey* key = lookup(name);
    if (!key) {
      if (is_launcher_variable(name)) continue;  // set by sluicerun, not configuration
      const std::string guess = closest_config_key(name);
      std::string line = "unknown configuration key SLUICE_" + std::string(name);
      line +=
          guess.empty() ? " (see sluice-info --config)" : " (did you mean SLUICE_" + guess + "?)";
      problems.push_back(std::move(line));
      continue;
    }
    std::string canonical;
    if (!validate(*key, value, canonical)) {
      problems.push_back("bad value SLUICE_" + std::string(name) + "=\"" + std::string(value) +
                         "\": expected " + expected_form(*key) + "; keeping the default " +
                         std::string(key->default_value));
      continue;
    }
    config.values_[std::string(name)] = std::move(canonical);
    config.set_[std::string(name)] = true;
  }
  return config;
}

bool Config::get_bool(std::string_view name) const {
  checked(name, T::boolean, T::boolean);
  bool v = false;
  parse_bool(values_.find(name)->second, v);
  return v;
}

int64_t Config::get_int(std::string_view name) const {
  checked(name, T::integer, T::integer);
  int64_t v = 0;
  parse_int(values_.find(name)->second, v);
  return v;
}

uint64_t Config::get_size(std::string_view name) const {
  checked(name, T::size, T::size);
  uint64_t v = 0;
  parse_size(values_.find(name)->second, v);
  return v;
}

double Config::get_seconds(std::string_view name) const {
  checked(name, T::duration, T::duration);
  double v = 0;
  parse_duration(values_.find(name)->second, v);
  return v;
}

std::string Config::get_string(std::string_view name) const {
  checked(name, T::string, T::choice);
  return values_.find(name)->second;
}

std::string Config::value_text(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) misuse(name, "is not in the configuration table");
  return it->second;
}

bool Config::is_set(std::string_view name) const {
  auto it = set_.find(name);
  if (it == set_.end()) misuse(name, "is not in the configuration table");
  return it->second;
}

}  // namespace sluice::detail
