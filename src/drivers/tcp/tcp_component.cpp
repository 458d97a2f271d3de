// The tcp driver as a component: its keys, and wire-up (listen and publish before the
// first fence, learn the peers' addresses after it; connections open on first use).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "drivers/net/net.hpp"
#include "drivers/registry.hpp"
#include "drivers/tcp/tcp_driver.hpp"

namespace sluice::drivers {

namespace {

// The smaller of net.core.rmem_max and wmem_max (what SO_RCVBUF / SO_SNDBUF may ask for); 0
// when unknown.
std::size_t socket_buffer_max() {
  std::size_t m = SIZE_MAX;
  for (const char* path : {"/proc/sys/net/core/rmem_max", "/proc/sys/net/core/wmem_max"}) {
    std::FILE* f = std::fopen(path, "r");
    unsigned long long v = 0;
    const bool ok = f && std::fscanf(f, "%llu", &v) == 1;
    if (f) std::fclose(f);
    m = ok ? std::min<std::size_t>(m, v) : 0;
  }
  return m;
}

using T = util::ConfigType;

constexpr util::ConfigKey kKeys[] = {
    {"TCP_MAX_PACKET",
     T::size,
     "512K",
     {"4K", "16M"},
     "payload bytes per tcp frame, i.e. per pipelined rendezvous fragment (a receiver holds "
     "one whole frame per connection)"},
    {"TCP_QUEUE_LIMIT",
     T::size,
     "16M",
     {"4K", "RAM/16"},
     "bytes queued per tcp peer in user space before sends wait for the socket to drain"},
    {"TCP_SOCKET_BUFFER",
     T::size,
     "4M",
     {"4K", "1G", true},
     "SO_SNDBUF/SO_RCVBUF of tcp sockets (the kernel caps it at [rw]mem_max); the default "
     "only where net.core.rmem_max and wmem_max allow it whole, else autotuning; 0: kernel "
     "autotuning"},
    {"TCP_CONNECT_TIMEOUT",
     T::duration,
     "30s",
     {"1s", "3600s"},
     "how long tcp keeps trying to connect to a peer before declaring it dead"},
    {"TCP_ZEROCOPY",
     T::choice,
     "auto",
     {},
     "rendezvous payloads sent by io_uring SEND_ZC from registered memory: on, off, or auto "
     "(peers not on a loopback address, until the kernel reports it copied every one of the first "
     "16)",
     "auto|on|off"},
    {"TCP_ZEROCOPY_MIN",
     T::size,
     "32K",
     {"4K", "16M"},
     "smallest payload tcp sends zero-copy (smaller tracked sends are copied)"},
    {"TCP_READ_FIXED",
     T::choice,
     "on",
     {},
     "rendezvous payloads whose receive buffer is registered in tcp's io_uring domain (strategy "
     "cache or register, with TCP_ZEROCOPY on, or auto to a non-loopback peer) are read with "
     "io_uring READ_FIXED into it: on, or off (recv into the same place)",
     "on|off"},
    {"TCP_HANDSHAKE_LIMIT",
     T::integer,
     "256",
     {"1", "65536"},
     "accepted tcp connections that may wait at once for their hello (the job key); a new one "
     "beyond it closes the oldest silent one"},
    {"TCP_HANDSHAKE_TIMEOUT",
     T::duration,
     "10s",
     {"100ms", "3600s"},
     "how long an accepted tcp connection may take to prove the job key"},
};

class TcpEndpoint final : public Endpoint {
 public:
  TcpEndpoint(std::unique_ptr<TcpDriver> d, std::vector<int> peers, std::vector<net::IfAddr> mine)
      : driver_(std::move(d)),
        raw_(driver_.get()),
        peers_(std::move(peers)),
        mine_(std::move(mine)) {}

  std::string connect(WireupServices& w) override {
    const std::span<const int> local = w.local_ranks();
    for (int r : peers_) {
      std::string text;
      uint16_t port = 0;
      std::vector<net::IfAddr> addrs;
      if (!w.lookup("tcp", r, text) || !net::parse_published(text, port, addrs))
        return "bootstrap: rank " + std::to_string(r) +
               " published no tcp address (is SLUICE_DRIVERS the same on every rank?)";
      const bool same_host = std::find(local.begin(), local.end(), r) != local.end();
      raw_->set_peer_address(r, net::choose_address(port, addrs, mine_, same_host));
    }
    return {};
  }
  std::vector<std::unique_ptr<Driver>> take_rails() override {
    std::vector<std::unique_ptr<Driver>> v;
    v.push_back(std::move(driver_));
    return v;
  }
  std::string peer_address(int peer) const override { return raw_->peer_address(peer); }
  void drain(uint64_t timeout_ns) override { raw_->drain(timeout_ns); }

 private:
  std::unique_ptr<TcpDriver> driver_;
  TcpDriver* raw_;  // owned by the engine after take_rails()
  std::vector<int> peers_;
  std::vector<net::IfAddr> mine_;
};

std::unique_ptr<Endpoint> open_tcp(WireupServices& w, std::span<const int> peers,
                                   std::string& err) {
  const util::ConfigValues& c = w.config();
  TcpParams tp;
  if (!net::parse_job_key(w.job_key(), tp.key)) {
    err = "the network drivers need the job key (SLUICE_JOB_KEY, 32 hex digits, set by sluicerun)";
    return nullptr;
  }
  std::vector<net::IfAddr> mine = net::configured_addresses(c, err);
  if (mine.empty()) {
    err = "network drivers: " + err;
    return nullptr;
  }
  err.clear();
  tp.bind_addr = net::bind_address(net::addresses_restricted(c), mine);
  tp.rank = w.rank();
  tp.size = w.size();
  tp.max_packet = c.get_size("TCP_MAX_PACKET");
  tp.queue_limit = c.get_size("TCP_QUEUE_LIMIT");
  tp.socket_buffer = c.get_size("TCP_SOCKET_BUFFER");
  // Fixed 4 MiB buffers: 1 MiB ping-pong on loopback 103-169 us median vs 129-235 with
  // autotuning, windowed bandwidth no lower (interleaved, loaded; cause not pinned down). A
  // fixed buffer the kernel caps smaller (stock rmem_max: 208 KiB) would be worse than
  // autotuning, so the default applies only where it fits whole; a value set is used as is.
  if (!c.is_set("TCP_SOCKET_BUFFER") && tp.socket_buffer > socket_buffer_max())
    tp.socket_buffer = 0;
  tp.connect_timeout_ns = static_cast<uint64_t>(c.get_seconds("TCP_CONNECT_TIMEOUT") * 1e9);
  const std::string zc = c.get_string("TCP_ZEROCOPY");
  tp.zerocopy = zc == "on"    ? TcpZeroCopy::on
                : zc == "off" ? TcpZeroCopy::off
                              : TcpZeroCopy::automatic;
  tp.zerocopy_min = c.get_size("TCP_ZEROCOPY_MIN");
  tp.read_fixed = c.get_string("TCP_READ_FIXED") == "on";
  tp.handshake_limit = static_cast<std::size_t>(c.get_int("TCP_HANDSHAKE_LIMIT"));
  tp.handshake_timeout_ns = static_cast<uint64_t>(c.get_seconds("TCP_HANDSHAKE_TIMEOUT") * 1e9);
  tp.on_peer_dead = [&w](int peer) { w.peer_dead(peer); };
  std::unique_ptr<TcpDriver> d;
  try {
    d = std::make_unique<TcpDriver>(tp);
  } catch (const std::runtime_error& e) {
    err = e.what();
    return nullptr;
  }
  if (!w.publish("tcp", net::format_published(d->port(), mine))) {
    err = "bootstrap put failed";
    return nullptr;
  }
  return std::make_unique<TcpEndpoint>(std::move(d), std::vector<int>(peers.begin(), peers.end()),
                                       std::move(mine));
}

}  // namespace

extern const DriverComponent kTcpComponent = {
    .name = "tcp",
    .title = "TCP sockets to any rank (one connection per peer, frames placed in place)",
    .locality = Locality::any,
    .config = kKeys,
    .aliases = {},
    .open = open_tcp,
    .on_by_default = true,
};

}  // namespace sluice::drivers
