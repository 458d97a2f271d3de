// The ofi driver as a component: its keys, and wire-up (open the libfabric endpoint and
// publish its address before the first fence; insert the peers' addresses in the address
// vector after it; on msg endpoints: publish the passive endpoint's address, connect on the
// first send). A dgram endpoint is unreliable: the engine stacks the reliability layer on
// it, as on the udp driver.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "drivers/fault/fault_driver.hpp"
#include "drivers/ofi/ofi_driver.hpp"
#include "drivers/registry.hpp"

namespace sluice::drivers {

namespace {

using T = util::ConfigType;

constexpr util::ConfigKey kKeys[] = {
    {"OFI_PROVIDER",
     T::string,
     "",
     {},
     "libfabric provider, as fi_info names it (e.g. \"tcp;ofi_rxm\", shm, udp, "
     "\"verbs;ofi_rxm\", efa, cxi); empty: the first fi_getinfo offers (not shm in a job "
     "spanning hosts)"},
    {"OFI_ENDPOINT",
     T::choice,
     "auto",
     {},
     "libfabric endpoint type: rdm (reliable datagrams), dgram (unreliable: Sluice's "
     "reliability layer on top), msg (connections, made on the first send to a peer), or "
     "auto (rdm, else dgram, else msg; a named provider's own endpoints before those layered "
     "over it)",
     "auto|rdm|dgram|msg"},
    {"OFI_DOMAIN",
     T::string,
     "",
     {},
     "libfabric domain (NIC or interface, e.g. mlx5_0, eth0, lo); empty: the provider's first"},
    {"OFI_MAX_PACKET",
     T::size,
     "64K",
     {"4K", "16M"},
     "payload bytes per ofi message, i.e. per pipelined rendezvous fragment (capped by the "
     "provider's max_msg_size: 1472 B datagrams on udp)"},
    {"OFI_RX_BUFFERS",
     T::integer,
     "64",
     {"4", "4096"},
     "receive buffers posted to the ofi endpoint (count, each OFI_MAX_PACKET and a header; "
     "on msg endpoints per connection)"},
    {"OFI_TX_BUFFERS",
     T::integer,
     "64",
     {"4", "4096"},
     "send buffers of the ofi endpoint (count): sends larger than the provider's inject size "
     "are copied into one until their completion"},
    {"OFI_RMA",
     T::choice,
     "auto",
     {},
     "one-sided operations through libfabric: auto = where the rdm endpoint offers FI_RMA, "
     "rendezvous reads the sender's buffer with fi_read (user memory registered by fi_mr_reg "
     "under Sluice's registration cache); off = messages only (the pipelined rendezvous)",
     "auto|off"},
    {"OFI_EAGER_MAX",
     T::size,
     "0",
     {"64", "16M", true},
     "largest eager payload over ofi (capped by OFI_MAX_PACKET and SLUICE_EAGER_LIMIT); 0 = "
     "from the provider's caps: what fi_inject carries on a host-local provider with FI_RMA "
     "(shm, which then reads every larger message with fi_read), else the protocol's limit"},
    {"OFI_FAULT",
     T::string,
     "",
     {},
     "test only: damage ofi packets below the reliability layer with the seeded injector "
     "(the reliability layer is then stacked on any endpoint type), e.g. "
     "\"drop=0.2,duplicate=0.01,reorder=0.05,corrupt=0.01,seed=7\" (seed defaults to rank+1)"},
};

// SLUICE_OFI_FAULT's items (the syntax of SLUICE_UDP_FAULT); false and `err` on a bad one.
bool parse_fault(const std::string& text, int rank, FaultConfig& fc, std::string& err) {
  fc.seed = static_cast<uint64_t>(rank) + 1;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const std::string k = item.substr(0, eq);
    const double v = eq == std::string::npos ? -1 : std::atof(item.c_str() + eq + 1);
    if (v < 0 || (k != "seed" && v > 1)) {
      err = "SLUICE_OFI_FAULT: bad item '" + item + "'";
      return false;
    }
    if (k == "drop")
      fc.drop = v;
    else if (k == "duplicate")
      fc.duplicate = v;
    else if (k == "reorder")
      fc.reorder = v;
    else if (k == "corrupt")
      fc.corrupt = v;
    else if (k == "seed")
      fc.seed = static_cast<uint64_t>(v) * 1000 + static_cast<uint64_t>(rank);
    else {
      err = "SLUICE_OFI_FAULT: unknown item '" + k + "' (drop, duplicate, reorder, corrupt, seed)";
      return false;
    }
  }
  return true;
}

class OfiEndpoint final : public Endpoint {
 public:
  OfiEndpoint(std::unique_ptr<OfiDriver> d, std::vector<int> peers)
      : driver_(std::move(d)), raw_(driver_.get()), peers_(std::move(peers)) {}

  std::string connect(WireupServices& w) override {
    const std::span<const int> local = w.local_ranks();
    const bool same_host_only = raw_->description().provider == "shm";
    for (int r : peers_) {
      std::string text;
      if (!w.lookup("ofi", r, text))
        return "bootstrap: rank " + std::to_string(r) +
               " published no ofi address (are SLUICE_DRIVERS and SLUICE_OFI_* the same on "
               "every rank?)";
      // shm reaches this host only: another host's rank stays unreachable (the engine then
      // names it, or routes it to another driver in SLUICE_DRIVERS).
      if (same_host_only && std::find(local.begin(), local.end(), r) == local.end()) continue;
      const std::string err = raw_->set_peer_address(r, text);
      if (!err.empty()) return "ofi (" + raw_->description().provider + "): " + err;
    }
    return {};
  }
  std::vector<std::unique_ptr<Driver>> take_rails() override {
    std::vector<std::unique_ptr<Driver>> v;
    std::unique_ptr<Driver> d = std::move(driver_);
    // Seeded faults under the reliability layer (tests of the whole stack).
    if (fault_) d = std::make_unique<FaultDriver>(std::move(d), *fault_);
    v.push_back(std::move(d));
    return v;
  }
  std::string peer_address(int peer) const override { return raw_->peer_address(peer); }
  void drain(uint64_t timeout_ns) override { raw_->drain(timeout_ns); }

 private:
  std::unique_ptr<OfiDriver> driver_;
  OfiDriver* raw_;  // owned by the engine after take_rails()
  std::vector<int> peers_;

 public:
  std::unique_ptr<FaultConfig> fault_;
};

std::unique_ptr<Endpoint> open_ofi(WireupServices& w, std::span<const int> peers,
                                   std::string& err) {
  // Only Sluice's registration cache watches the address space (its invalidation is
  // tested); libfabric's own MR cache stays off unless the user asked for it.
  setenv("FI_MR_CACHE_MAX_COUNT", "0", 0);
  const util::ConfigValues& c = w.config();
  OfiParams p;
  p.rank = w.rank();
  p.size = w.size();
  p.provider = c.get_string("OFI_PROVIDER");
  p.domain = c.get_string("OFI_DOMAIN");
  const std::string type = c.get_string("OFI_ENDPOINT");
  p.endpoint = type == "rdm"     ? OfiEndpointType::rdm
               : type == "dgram" ? OfiEndpointType::dgram
               : type == "msg"   ? OfiEndpointType::msg
                                 : OfiEndpointType::automatic;
  p.rma = c.get_string("OFI_RMA") != "off";
  p.job_key = w.job_key();
  p.single_host = static_cast<int>(w.local_ranks().size()) == w.size();
  p.max_packet = c.get_size("OFI_MAX_PACKET");
  p.eager_max = c.get_size("OFI_EAGER_MAX");
  p.rx_buffers = static_cast<std::size_t>(c.get_int("OFI_RX_BUFFERS"));
  p.tx_buffers = static_cast<std::size_t>(c.get_int("OFI_TX_BUFFERS"));
  p.on_peer_dead = [&w](int peer) { w.peer_dead(peer); };
  std::unique_ptr<FaultConfig> fault;
  if (const std::string f = c.get_string("OFI_FAULT"); !f.empty()) {
    fault = std::make_unique<FaultConfig>();
    if (!parse_fault(f, w.rank(), *fault, err)) return nullptr;
  }
  std::unique_ptr<OfiDriver> d;
  try {
    d = std::make_unique<OfiDriver>(std::move(p));
  } catch (const std::runtime_error& e) {
    err = e.what();
    return nullptr;
  }
  if (!w.publish("ofi", d->address())) {
    err = "bootstrap put failed";
    return nullptr;
  }
  auto ep =
      std::make_unique<OfiEndpoint>(std::move(d), std::vector<int>(peers.begin(), peers.end()));
  ep->fault_ = std::move(fault);
  return ep;
}

}  // namespace

extern const DriverComponent kOfiComponent = {
    .name = "ofi",
    .title =
        "libfabric endpoints (rdm; msg connected lazily; dgram under the reliability layer): "
        "InfiniBand, EFA, Slingshot, tcp, shm",
    .locality = Locality::any,
    .config = kKeys,
    .aliases = {},
    .open = open_ofi,
    .on_by_default = false,
};

}  // namespace sluice::drivers
