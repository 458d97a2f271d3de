// Sluice native C++ API: what the library would do here, and why (for tools such as
// sluice-info and sluice-demo, and for tests). Read-only; nothing here is on a data path.
//
//   sluice::Session s;
//   for (const auto& r : sluice::introspect::routes(s)) std::printf("%d -> %s\n", r.peer,
//   r.driver.c_str()); auto table = sluice::introspect::config();  // no Session needed
#pragma once

#include <sluice/sluice.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::introspect {

// One configuration key (SLUICE_<key>) with the value in force.
struct ConfigEntry {
  std::string key;                   // with the SLUICE_ prefix
  std::string type;                  // bool, int, bytes, time, string, choice
  std::string value;                 // in force
  std::string default_value;         // the table's
  std::string help;                  // one line
  std::string choices;               // for choice: "a|b|c"
  std::string source;                // "default", "SLUICE_<KEY>", or "SLUICE_<OLD> (alias of ...)"
  std::vector<std::string> aliases;  // former names that still set it (with SLUICE_)
  // Numeric keys (int, bytes, time): the values accepted; anything else stops the start-up
  // with an error naming the key, the value and `range`.
  bool has_range = false;
  int64_t min = 0;        // in the key's unit: the integer, bytes, or nanoseconds
  int64_t max = 0;        // a RAM-relative bound resolved for this machine
  bool or_zero = false;   // 0 is accepted too (a special meaning the help names)
  std::string range;      // "2..16384", "0 or 512..65507", "4K..RAM/16 (= 1536M here)"
  std::string range_doc;  // the same without this machine's figures (for the docs)
};

// A component's keys: "core", "p2p" (protocols), "reliable", "net", then each driver's.
struct ConfigComponent {
  std::string name;
  std::string title;
  bool is_driver = false;
  std::vector<ConfigEntry> keys;
};

// The whole table with the values of this process's environment; `problems` (if given)
// gets the unknown keys (with a did-you-mean), `errors` the values that would stop a
// start-up (unparsable, empty, out of range), one line each; without `errors`, those go to
// `problems` too.
std::vector<ConfigComponent> config(std::vector<std::string>* problems = nullptr,
                                    std::vector<std::string>* errors = nullptr);

// A registered driver component.
struct DriverInfo {
  std::string name;   // as SLUICE_DRIVERS lists it
  std::string title;  // one line
  bool same_host_only = false;
  bool on_by_default = false;
};
std::vector<DriverInfo> drivers();

// Which driver serves a peer, and where it is reached.
struct Route {
  int peer = 0;
  std::string driver;              // e.g. "shm", "tcp", "udp+rel", "self"
  std::string address;             // e.g. "10.0.0.2:40123"; "" when the driver has none
  std::size_t inline_payload = 0;  // the driver's caps
  std::size_t max_packet = 0;
  bool one_sided_get = false;
  bool reliable = false;  // after stacking (the reliability layer makes it so)
};
std::vector<Route> routes(const Session& s);

// The protocol a message of a size takes towards a peer, and why.
struct ProtocolChoice {
  std::size_t from = 0;  // first size of the range this choice covers
  std::string protocol;  // eager, rndv_get, rndv_pipeline, rndv_push
  std::string why;       // one line naming the limits and keys that decide it
};
// The ranges of sizes (ascending, each up to the next one's `from`) and their protocols.
std::vector<ProtocolChoice> protocols(const Session& s, int peer);
// The protocol one message of `size` bytes takes towards `peer`.
std::string protocol_for(const Session& s, int peer, std::size_t size);

// The thresholds in force (after start-up adjustments, e.g. oversubscription).
struct Thresholds {
  std::size_t eager_limit = 0;
  std::size_t get_threshold = 0;
  std::size_t get_max = 0;  // SIZE_MAX: no upper bound
  std::size_t push_max = 0;
  std::string rndv_mode;  // auto, get, pipeline
};
Thresholds thresholds(const Session& s);
// How large messages on registration-capable routes are registered (SLUICE_REG_STRATEGY),
// why, and the registration caches' state: one line.
std::string registration(const Session& s);
// "off", or the emulated registration cost in force ("EMULATED 68 us + 200 ns/page
// (SLUICE_REG_EMULATE)"): every figure that depends on registration must say it.
std::string registration_emulation(const Session& s);
// For benchmarks that compare strategies in one run: switches this rank's registration
// strategy (a SLUICE_REG_STRATEGY name) and, when not 0, the fixed pipeline's chunk
// (SLUICE_REG_PIPELINE_CHUNK). Only between messages (none in flight), on every rank at
// once. False for an unknown name.
bool set_registration_strategy(Session& s, std::string_view strategy,
                               std::size_t pipeline_chunk = 0);
// Whether the route to `peer` registers memory for large messages (its driver pins).
bool route_registers(const Session& s, int peer);
// [NewMadeleine]'s cost model in force: a sluice-tune profile (SLUICE_TUNE_PROFILE) or the
// built-in defaults, with the staged strategies' parameters in force.
struct CostModelInfo {
  std::string source;       // the profile's path, or "built-in defaults"
  std::string reg_emulate;  // the registration cost the profile was measured with ("off")
  std::size_t c0 = 0;       // superpipeline: first chunk
  double q = 0;             // ... growth ratio
  std::size_t block = 0;    // b: sub-block (drivers whose receiver copies out of staging)
  std::size_t pipeline_chunk = 0;
  unsigned staging_buffers = 0;
  bool has_driver = false;     // model_info(s, peer): the model has figures for its driver
  std::size_t staged_min = 0;  // ... below it the staged strategies copy (SIZE_MAX: always)
};
CostModelInfo model_info(const Session& s, int peer);
// The model's predicted time in microseconds of one message of `size` bytes towards `peer`
// by `protocol` (copy, register, cache (a reused registration), ondemand, pipeline,
// superpipeline); negative for an unknown protocol name.
double predict_us(const Session& s, int peer, std::string_view protocol, std::size_t size);
// The protocol (a name predict_us takes) the registration strategy in force runs for one
// message of `size` bytes towards `peer` on a route that registers memory, and why.
struct PlannedProtocol {
  std::string protocol;
  std::string why;
};
PlannedProtocol planned_protocol(const Session& s, int peer, std::size_t size);

// A text attribute a component reports beside its counters ("ofi.provider"), or "" when
// this rank has none by that name.
std::string attribute(const Session& s, std::string_view name);

}  // namespace sluice::introspect
