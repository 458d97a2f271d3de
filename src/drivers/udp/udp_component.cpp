// The udp driver as a component: its keys, wire-up (sockets and their addresses published
// before the first fence; the peers' addresses and the path MTU after it), multi-rail
// (SLUICE_UDP_RAILS: one driver per interface) and the seeded fault injector under the
// reliability layer (SLUICE_UDP_FAULT). udp is unreliable: the engine stacks the
// reliability layer on the rails this component hands over.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "drivers/fault/fault_driver.hpp"
#include "drivers/net/net.hpp"
#include "drivers/registry.hpp"
#include "drivers/udp/udp_driver.hpp"

namespace sluice::drivers {

namespace {

using T = util::ConfigType;

constexpr util::ConfigKey kKeys[] = {
    {"UDP_DATAGRAM",
     T::size,
     "0",
     {"512", "65507", true},
     "bytes per udp datagram (at most the path MTU's); 0: from the path MTU (65507 on "
     "loopback, 1472 on a 1500 MTU link)"},
    {"UDP_RX_BUFFERS",
     T::integer,
     "64",
     {"1", "1024"},
     "udp receive pool: datagram buffers filled per recvmmsg call (count)"},
    {"UDP_SEND_SOCKETS", T::integer, "4", {"1", "64"}, "udp send sockets used round-robin (count)"},
    {"UDP_GSO",
     T::boolean,
     "1",
     {},
     "udp segmentation offload: a run of full-size datagrams to one peer goes out in one "
     "sendmsg (UDP_SEGMENT); off by itself where the kernel or route refuses it"},
    {"UDP_GRO",
     T::boolean,
     "1",
     {},
     "udp receive offload (UDP_GRO): coalesced reads, split here; receive buffers are then "
     "64 KiB each (pool: UDP_RX_BUFFERS x 64 KiB)"},
    {"UDP_CONNECT",
     T::boolean,
     "1",
     {},
     "udp in a 2-process job: receive and send through one socket connected to the peer (the "
     "kernel's early demux, as a raw connected socket); an unconnected one shares the port for "
     "anything else"},
    {"UDP_SOCKET_BUFFER",
     T::size,
     "8M",
     {"64K", "1G"},
     "udp SO_RCVBUF (and SO_SNDBUF, split over the send sockets); forced beyond rmem_max when "
     "permitted"},
    {"UDP_ZEROCOPY",
     T::choice,
     "auto",
     {},
     "rendezvous fragments sent by io_uring SEND_ZC from registered memory (single rail): on, "
     "off, or auto (peers not on a loopback address, until the kernel reports it copied every "
     "one of the first 16)",
     "auto|on|off"},
    {"UDP_ZEROCOPY_MIN",
     T::size,
     "16K",
     {"1K", "64K"},
     "smallest fragment payload udp sends zero-copy (smaller ones are copied by sendmsg)"},
    {"UDP_RAILS",
     T::string,
     "",
     {},
     "udp multi-rail: comma-separated interfaces, one rail each (e.g. eth0,eth1); traffic is "
     "striped over them and fails over when one stops delivering (empty: one rail)"},
    {"UDP_FAULT",
     T::string,
     "",
     {},
     "test only: damage udp packets below the reliability layer with the seeded injector, e.g. "
     "\"drop=0.2,duplicate=0.01,reorder=0.05,corrupt=0.01,seed=7\" (seed defaults to rank+1)"},
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// SLUICE_UDP_FAULT's items; false and `err` on a bad one.
bool parse_fault(const std::string& text, int rank, FaultConfig& fc, std::string& err) {
  fc.seed = static_cast<uint64_t>(rank) + 1;
  for (const auto& item : split_list(text)) {
    const auto eq = item.find('=');
    const std::string k = item.substr(0, eq);
    const double v = eq == std::string::npos ? -1 : std::atof(item.c_str() + eq + 1);
    if (v < 0 || (k != "seed" && v > 1)) {
      err = "SLUICE_UDP_FAULT: bad item '" + item + "'";
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
      err = "SLUICE_UDP_FAULT: unknown item '" + k + "' (drop, duplicate, reorder, corrupt, seed)";
      return false;
    }
  }
  return true;
}

class UdpEndpoint final : public Endpoint {
 public:
  std::string connect(WireupServices& w) override {
    const std::span<const int> local = w.local_ranks();
    std::size_t mtu = 0;
    for (int r : peers_) {
      const bool same_host = std::find(local.begin(), local.end(), r) != local.end();
      for (std::size_t i = 0; i < rails_.size(); ++i) {
        // Boot key "udp" for rail 0, "udp.rail<i>" for the others.
        const std::string key = i == 0 ? "udp" : "udp.rail" + std::to_string(i);
        std::string text;
        uint16_t port = 0;
        std::vector<net::IfAddr> addrs;
        if (!w.lookup(key, r, text) || !net::parse_published(text, port, addrs))
          return "bootstrap: rank " + std::to_string(r) + " published no " + key + "/" +
                 std::to_string(r) + " address (are SLUICE_DRIVERS and SLUICE_UDP_RAILS the " +
                 "same on every rank?)";
        const sockaddr_in sa = net::choose_address(port, addrs, rail_addrs_[i], same_host);
        rails_[i]->set_peer_address(r, sa);
        const std::size_t m = UdpDriver::path_mtu(sa);
        mtu = std::min(mtu ? mtu : SIZE_MAX, m ? m : 1500);
      }
    }
    // Datagrams that fit the path MTU (IP fragments would multiply the loss rate).
    const util::ConfigValues& c = w.config();
    if (!c.is_set("UDP_DATAGRAM") || c.get_size("UDP_DATAGRAM") == 0)
      for (UdpDriver* rail : rails_)
        rail->set_datagram(std::min<std::size_t>(65507, (mtu ? mtu : 1500) - 28));
    return {};
  }
  std::vector<std::unique_ptr<Driver>> take_rails() override {
    std::vector<std::unique_ptr<Driver>> v;
    std::unique_ptr<Driver> wire = std::move(owned_[0]);
    // Seeded in-library faults under the reliability layer (tests of the whole stack).
    if (fault_) wire = std::make_unique<FaultDriver>(std::move(wire), *fault_);
    v.push_back(std::move(wire));  // rail 0, under the fault injector if asked
    for (std::size_t i = 1; i < owned_.size(); ++i) v.push_back(std::move(owned_[i]));
    owned_.clear();
    return v;
  }
  // Corking only pays when a run leaves in one GSO send: without it (or under the fault
  // injector, which sends packet by packet) held packets only wait.
  bool coalesces_runs() const override {
    if (fault_) return false;
    for (UdpDriver* rail : rails_)
      if (!rail->gso()) return false;
    return true;
  }
  // ReliableChannel::block (and a fault injector's) read engine state: with one rail the
  // progress thread sleeps in its socket directly (a ppoll on a fixed fd).
  Driver* unlocked_blocker() const override { return rails_.size() == 1 ? rails_[0] : nullptr; }
  std::string peer_address(int peer) const override { return rails_[0]->peer_address(peer); }

  std::vector<int> peers_;
  std::vector<std::unique_ptr<UdpDriver>> owned_;  // until take_rails()
  std::vector<UdpDriver*> rails_;                  // owned by the engine after take_rails()
  std::vector<std::vector<net::IfAddr>> rail_addrs_;
  std::unique_ptr<FaultConfig> fault_;
};

std::unique_ptr<Endpoint> open_udp(WireupServices& w, std::span<const int> peers,
                                   std::string& err) {
  const util::ConfigValues& c = w.config();
  std::array<uint8_t, 16> key{};
  if (!net::parse_job_key(w.job_key(), key)) {
    err = "the network drivers need the job key (SLUICE_JOB_KEY, 32 hex digits, set by sluicerun)";
    return nullptr;
  }
  std::vector<net::IfAddr> mine = net::configured_addresses(c, err);
  if (mine.empty()) {
    err = "network drivers: " + err;
    return nullptr;
  }
  err.clear();
  auto ep = std::make_unique<UdpEndpoint>();
  ep->peers_.assign(peers.begin(), peers.end());
  const std::string fault = c.get_string("UDP_FAULT");
  if (!fault.empty()) {
    ep->fault_ = std::make_unique<FaultConfig>();
    if (!parse_fault(fault, w.rank(), *ep->fault_, err)) return nullptr;
  }
  UdpParams up;
  up.rank = w.rank();
  up.size = w.size();
  const uint64_t dg = c.get_size("UDP_DATAGRAM");
  up.datagram = up.rx_datagram = dg ? dg : 65507;  // auto: sized after the exchange
  up.rx_buffers = static_cast<std::size_t>(c.get_int("UDP_RX_BUFFERS"));
  up.send_sockets = static_cast<std::size_t>(c.get_int("UDP_SEND_SOCKETS"));
  up.socket_buffer = c.get_size("UDP_SOCKET_BUFFER");
  up.gso = c.get_bool("UDP_GSO");
  up.gro = c.get_bool("UDP_GRO");
  up.connect_pair = c.get_bool("UDP_CONNECT");
  const std::string zc = c.get_string("UDP_ZEROCOPY");
  up.zerocopy = zc == "on"    ? UdpZeroCopy::on
                : zc == "off" ? UdpZeroCopy::off
                              : UdpZeroCopy::automatic;
  up.zerocopy_min = c.get_size("UDP_ZEROCOPY_MIN");
  // Multi-rail: rail i is its own udp driver publishing only interface i's addresses.
  const std::vector<std::string> rails = split_list(c.get_string("UDP_RAILS"));
  ep->rail_addrs_.push_back(mine);
  // Zero-copy sends name a registration in one rail's domain: a single rail only.
  if (rails.size() > 1) up.zerocopy = UdpZeroCopy::off;
  for (std::size_t i = 0; i < rails.size(); ++i) {
    std::vector<net::IfAddr> addrs = net::local_addresses(rails[i], "", err);
    if (addrs.empty()) {
      err = "SLUICE_UDP_RAILS: interface " + rails[i] + ": " + err;
      return nullptr;
    }
    err.clear();
    if (i == 0)
      ep->rail_addrs_[0] = std::move(addrs);
    else
      ep->rail_addrs_.push_back(std::move(addrs));
  }
  try {
    for (std::size_t i = 0; i < ep->rail_addrs_.size(); ++i) {
      // A rail's interface, or SLUICE_NET_IF / NET_ADDR, is the one address it binds.
      up.bind_addr =
          net::bind_address(!rails.empty() || net::addresses_restricted(c), ep->rail_addrs_[i]);
      ep->owned_.push_back(std::make_unique<UdpDriver>(up));
      ep->rails_.push_back(ep->owned_.back().get());
      const std::string boot_key = i == 0 ? "udp" : "udp.rail" + std::to_string(i);
      if (!w.publish(boot_key, net::format_published(ep->rails_[i]->port(), ep->rail_addrs_[i]))) {
        err = "bootstrap put failed";
        return nullptr;
      }
    }
  } catch (const std::runtime_error& e) {
    err = e.what();
    return nullptr;
  }
  return ep;
}

}  // namespace

extern const DriverComponent kUdpComponent = {
    .name = "udp",
    .title = "UDP datagrams to any rank, under the reliability layer (GSO/GRO, multi-rail)",
    .locality = Locality::any,
    .config = kKeys,
    .aliases = {},
    .open = open_udp,
    .on_by_default = false,
};

}  // namespace sluice::drivers
