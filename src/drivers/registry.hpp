// Drivers as components (in the manner of UCX's UCT_TL_DEFINE and libfabric's
// struct fi_provider): each src/drivers/<name>/ describes itself in one DriverComponent
// (name, locality, its SLUICE_<NAME>_* config table, open) and registry.cpp lists them.
// The engine loops over the list, opens the components some peer needs, and routes each
// peer to the first opened driver, in SLUICE_DRIVERS order, that reaches it; it stacks the
// reliability layer on a driver whose caps say unreliable. Adding a driver is one folder
// plus one line in registry.cpp.
//
// Wire-up follows the bootstrap's two fences:
//   open()      before fence 1: create the driver, publish its address;
//   connect()   after fence 1: read the peers' addresses and connect (or map) them;
//   connected() after fence 2: every peer has connected; drop what only wire-up needed.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/driver.hpp"
#include "util/config_key.hpp"

namespace sluice::drivers {

// What the engine lends a component during wire-up.
class WireupServices {
 public:
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // World ranks on this host, sorted, the own rank included.
  virtual std::span<const int> local_ranks() const = 0;
  virtual const util::ConfigValues& config() const = 0;
  virtual std::string job_id() const = 0;
  virtual std::string job_key() const = 0;  // 32 hex digits (sluicerun), may be empty
  // Bootstrap exchange: publish under "<key>/<own rank>", read "<key>/<rank>" after fence 1.
  virtual bool publish(std::string_view key, std::string_view value) = 0;
  virtual bool lookup(std::string_view key, int rank, std::string& value) = 0;
  // A driver learned that `peer` is gone (queued; its requests fail at the next progress).
  virtual void peer_dead(int peer) = 0;

 protected:
  ~WireupServices() = default;
};

// One opened component: its drivers during wire-up, and what the engine asks of it later.
class Endpoint {
 public:
  virtual ~Endpoint() = default;
  // After fence 1. Returns an error text, empty on success.
  virtual std::string connect(WireupServices& w) = 0;
  // After fence 2.
  virtual void connected(WireupServices& w) {}
  // The drivers serving the component's peers: one, or one per rail (same peers, striped by
  // the reliability layer). The engine takes them once, after connect().
  virtual std::vector<std::unique_ptr<Driver>> take_rails() = 0;
  // Under the reliability layer: whether a run of packets to a peer leaves in one send
  // (corking then pays, e.g. UDP_SEGMENT).
  virtual bool coalesces_runs() const { return false; }
  // A driver whose block() reads no engine state (the progress thread sleeps in it
  // without the engine lock), or nullptr.
  virtual Driver* unlocked_blocker() const { return nullptr; }
  // The address `peer` is reached at (e.g. "ip:port"), or "".
  virtual std::string peer_address(int peer) const { return {}; }
  // At finalize, after the last progress: let queued bytes leave within `timeout_ns`.
  virtual void drain(uint64_t timeout_ns) {}
  // The rails' datagram payload for the reliability layer's packet window; 0: caps().
  virtual std::size_t rel_packet() const { return 0; }
};

enum class Locality {
  same_host,  // reaches only ranks on this host (shared memory)
  any,        // reaches any rank (network)
};

struct DriverComponent {
  std::string_view name;   // what SLUICE_DRIVERS lists; also its config prefix, upper case
  std::string_view title;  // one line for sluice-info and the docs
  Locality locality;
  std::span<const util::ConfigKey> config;  // SLUICE_<NAME>_* keys
  std::span<const util::ConfigAlias> aliases;
  // Before fence 1: create the driver for `peers` (the ranks the engine gives it) and
  // publish its address. nullptr and `err` set on failure. Called on every rank that has a
  // peer for it (the same on every rank when SLUICE_DRIVERS is).
  std::unique_ptr<Endpoint> (*open)(WireupServices& w, std::span<const int> peers,
                                    std::string& err);
  // Listed in SLUICE_DRIVERS' default (in registry order).
  bool on_by_default = false;
};

// The components, built-in ones first in registry.cpp's order, then any registered later.
std::span<const DriverComponent* const> driver_components();
const DriverComponent* find_driver_component(std::string_view name);
// SLUICE_DRIVERS' default: the components on by default, comma-separated, registry order.
std::string_view default_driver_list();
// Adds a component after the built-in ones (tests, plug-ins); before the Session starts.
void register_driver_component(const DriverComponent& c);

// Config groups that belong to no one driver (shared by several: the network interface
// choice), listed with the drivers' own tables.
std::span<const util::ConfigGroup> driver_shared_config();

}  // namespace sluice::drivers
