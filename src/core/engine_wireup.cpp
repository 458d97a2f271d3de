// Engine wire-up: driver selection per peer, the shm segment exchange, the network
// drivers (published before the bootstrap fence, connected after it) and the routes.
#include "core/engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "drivers/fault/fault_driver.hpp"
#include "drivers/net/net.hpp"
#include "drivers/self/self_driver.hpp"
#include "drivers/shm/shm_driver.hpp"
#include "drivers/tcp/tcp_driver.hpp"
#include "drivers/udp/udp_driver.hpp"
#include "proto/reliable/reliable_channel.hpp"
#include "util/log.hpp"

namespace sluice::detail {

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// Host identity: set by a multi-host launcher (network namespaces share the hostname and
// /dev/shm, so the hostname alone cannot tell hosts apart), else hostname + boot id.
std::string host_identity() {
  if (const char* h = std::getenv("SLUICE_HOST_ID")) return h;
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::string id = name;
  std::ifstream boot_id("/proc/sys/kernel/random/boot_id");
  std::string b;
  if (boot_id >> b) id += "/" + b;
  return id;
}

}  // namespace

// Driver selection and wire-up: which driver serves each peer, the shared-memory
// segments, the network drivers and the routes.
void Engine::wire_up(proto::Thresholds th) {
  std::string err;
  // Which drivers, and who is on this host.
  bool want_shm = false;
  std::vector<std::string> order;  // preference order, without "self"
  for (const auto& d : split_list(config_.get_string("DRIVERS"))) {
    if (d == "shm")
      want_shm = true;
    else if (d != "self" && d != "tcp" && d != "udp")
      fail("unknown driver '" + d + "' in SLUICE_DRIVERS (available: shm, tcp, udp)");
    if (d != "self" && std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
  }
  const std::string me = host_identity();
  if (boot_->put("host/" + std::to_string(rank_), me) != Errc::ok || boot_->fence() != Errc::ok)
    fail("bootstrap exchange failed");
  std::vector<int> local;
  for (int r = 0; r < size_; ++r) {
    std::string h;
    if (r == rank_)
      h = me;
    else if (!boot_->get("host/" + std::to_string(r), h))
      fail("bootstrap: no host identity for rank " + std::to_string(r));
    if (h == me) local.push_back(r);
  }
  // Each peer's driver: the first in preference order that reaches it (shm: same host).
  std::vector<std::string> kind(static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const bool is_local = std::find(local.begin(), local.end(), r) != local.end();
    for (const auto& d : order)
      if (d != "shm" || is_local) {
        kind[static_cast<std::size_t>(r)] = d;
        break;
      }
  }
  const bool need_tcp = std::find(kind.begin(), kind.end(), "tcp") != kind.end();
  const bool need_udp = std::find(kind.begin(), kind.end(), "udp") != kind.end();
  const bool shm_serves = want_shm && std::find(kind.begin(), kind.end(), "shm") != kind.end();
  open_network(need_tcp, need_udp);

  // More local ranks than CPUs: a rank that polls holds the CPU its peer needs, so yield
  // after every fruitless poll (as Open MPI's yield_when_idle does; 4-rank Allreduce on
  // 2 cores: 20 µs with a 2 µs spin, 7 µs yielding at once), and sleep only after a few
  // thousand yields. The user's SLUICE_SPIN_TIME still wins.
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus > 0 && static_cast<long>(local.size()) > cpus) {
    yield_rounds_ = 2000;
    if (!config_.is_set("SPIN_TIME")) spin_ns_ = 0;
    // The pipelined copy needs sender and receiver running at the same time, which ranks
    // sharing a core rarely are; a single copy by the receiver (CMA) does not (4 ranks on
    // 2 cores, Alltoall 64 KiB: 120-880 us pipelined, 83 us with CMA): CMA at every size.
    if (!config_.is_set("SHM_CMA_MAX")) th.get_max = SIZE_MAX;
  }

  p2p_ = std::make_unique<proto::PointToPoint>(*this, th);
  demux_.attach(proto::kProtocolId, drivers::kP2pTypes, *p2p_);
  auto self = std::make_unique<drivers::SelfDriver>(rank_);
  for (int r = 0; r < size_; ++r) p2p_->set_route(r, nullptr);
  p2p_->set_route(rank_, self.get());
  self_ = self.get();
  drivers_.push_back(std::move(self));

  // Shared memory: create our segment, fence, map the peers', fence, unlink our name.
  // Every rank runs the same fences, whether or not it has local peers.
  std::unique_ptr<drivers::ShmDriver> shm;
  if (shm_serves && local.size() > 1) {
    drivers::ShmParams sp;
    sp.cell_size = config_.get_size("SHM_CELL_SIZE");
    sp.ring_cells = static_cast<std::size_t>(config_.get_int("SHM_RING_CELLS"));
    sp.bulk_slot_size = config_.get_size("SHM_PIPE_CHUNK");
    sp.bulk_slots = static_cast<std::size_t>(config_.get_int("SHM_PIPE_SLOTS"));
    shm = std::make_unique<drivers::ShmDriver>(rank_, local, sp);
    err = shm->create(boot_->job_id());
    if (!err.empty()) fail(err);
  }
  if (boot_->fence() != Errc::ok) fail("bootstrap fence failed");
  connect_network(kind, local);
  if (shm) {
    err = shm->attach(boot_->job_id());
    if (!err.empty()) fail(err);
  }
  if (boot_->fence() != Errc::ok) fail("bootstrap fence failed");
  if (shm) {
    shm->unlink_name();
    if (!shm->cma_available() && th.rndv == proto::Thresholds::RndvMode::get)
      util::log(util::LogLevel::warn,
                "SLUICE_SHM_RNDV=cma but process_vm_readv is not permitted here; "
                "using the pipelined copy");
    for (int r : local)
      if (r != rank_ && kind[static_cast<std::size_t>(r)] == "shm") p2p_->set_route(r, shm.get());
    blocking_driver_ = shm.get();
    drivers_.push_back(std::move(shm));
  }
  route_network(kind);
  for (int r = 0; r < size_; ++r)
    if (!p2p_->route(r))
      fail("no driver reaches rank " + std::to_string(r) +
           " (SLUICE_DRIVERS=" + config_.get_string("DRIVERS") + ")");
  start_progress_thread(static_cast<int>(local.size()));
}

void Engine::open_network(bool need_tcp, bool need_udp) {
  if (!need_tcp && !need_udp) return;
  std::array<uint8_t, 16> key{};
  if (!drivers::net::parse_job_key(boot_->job_key(), key))
    fail("the network drivers need the job key (SLUICE_JOB_KEY, 32 hex digits, set by sluicerun)");
  std::string err;
  my_addrs_ = drivers::net::local_addresses(config_.get_string("NET_IF"),
                                            config_.get_string("NET_ADDR"), err);
  if (my_addrs_.empty()) fail("network drivers: " + err);
  try {
    if (need_tcp) {
      drivers::TcpParams tp;
      tp.rank = rank_;
      tp.size = size_;
      tp.key = key;
      tp.max_packet = std::max<uint64_t>(4096, config_.get_size("TCP_MAX_PACKET"));
      tp.queue_limit = config_.get_size("TCP_QUEUE_LIMIT");
      tp.socket_buffer = config_.get_size("TCP_SOCKET_BUFFER");
      tp.connect_timeout_ns =
          static_cast<uint64_t>(config_.get_seconds("TCP_CONNECT_TIMEOUT") * 1e9);
      tp.on_peer_dead = [this](int peer) { dead_pending_.push_back(peer); };
      tcp_owned_ = std::make_unique<drivers::TcpDriver>(tp);
      tcp_ = tcp_owned_.get();
      if (boot_->put("tcp/" + std::to_string(rank_),
                     drivers::net::format_published(tcp_->port(), my_addrs_)) != Errc::ok)
        fail("bootstrap put failed");
    }
    if (need_udp) {
      drivers::UdpParams up;
      up.rank = rank_;
      up.size = size_;
      const uint64_t dg = config_.get_size("UDP_DATAGRAM");
      up.datagram = up.rx_datagram = dg ? dg : 65507;  // auto: sized after the exchange
      up.rx_buffers =
          static_cast<std::size_t>(std::max<int64_t>(1, config_.get_int("UDP_RX_BUFFERS")));
      up.send_sockets =
          static_cast<std::size_t>(std::max<int64_t>(1, config_.get_int("UDP_SEND_SOCKETS")));
      up.socket_buffer = config_.get_size("UDP_SOCKET_BUFFER");
      up.gso = config_.get_bool("UDP_GSO");
      up.gro = config_.get_bool("UDP_GRO");
      up.connect_pair = config_.get_bool("UDP_CONNECT");
      udp_owned_ = std::make_unique<drivers::UdpDriver>(up);
      udp_ = udp_owned_.get();
      job_key64_ = drivers::net::fold_job_key(key);
      // Multi-rail: rail i is its own udp driver publishing only interface i's addresses
      // (boot key "udp/<rank>" for rail 0, "udp.rail<i>/<rank>" for the others).
      const std::vector<std::string> rails = split_list(config_.get_string("UDP_RAILS"));
      if (rails.size() > proto::reliable::kMaxRails)
        fail("SLUICE_UDP_RAILS: at most " + std::to_string(proto::reliable::kMaxRails) + " rails");
      std::vector<drivers::net::IfAddr> rail0 = my_addrs_;
      for (std::size_t i = 0; i < rails.size(); ++i) {
        std::vector<drivers::net::IfAddr> addrs = drivers::net::local_addresses(rails[i], "", err);
        if (addrs.empty()) fail("SLUICE_UDP_RAILS: interface " + rails[i] + ": " + err);
        if (i == 0) {
          rail0 = std::move(addrs);
          continue;
        }
        udp_rails_owned_.push_back(std::make_unique<drivers::UdpDriver>(up));
        if (boot_->put("udp.rail" + std::to_string(i) + "/" + std::to_string(rank_),
                       drivers::net::format_published(udp_rails_owned_.back()->port(), addrs)) !=
            Errc::ok)
          fail("bootstrap put failed");
        rail_addrs_.push_back(std::move(addrs));
      }
      if (boot_->put("udp/" + std::to_string(rank_),
                     drivers::net::format_published(udp_->port(), rail0)) != Errc::ok)
        fail("bootstrap put failed");
    }
  } catch (const std::runtime_error& e) {
    fail(e.what());
  }
}

void Engine::connect_network(const std::vector<std::string>& kind, const std::vector<int>& local) {
  std::size_t mtu = 0;
  for (int r = 0; r < size_; ++r) {
    const std::string& k = kind[static_cast<std::size_t>(r)];
    if (k != "tcp" && k != "udp") continue;
    std::string text;
    uint16_t port = 0;
    std::vector<drivers::net::IfAddr> addrs;
    if (!boot_->get(k + "/" + std::to_string(r), text) ||
        !drivers::net::parse_published(text, port, addrs))
      fail("bootstrap: rank " + std::to_string(r) + " published no " + k +
           " address (is SLUICE_DRIVERS the same on every rank?)");
    const bool same_host = std::find(local.begin(), local.end(), r) != local.end();
    const sockaddr_in sa = drivers::net::choose_address(port, addrs, my_addrs_, same_host);
    if (k == "tcp") {
      tcp_->set_peer_address(r, sa);
    } else {
      udp_->set_peer_address(r, sa);
      const std::size_t m = drivers::UdpDriver::path_mtu(sa);
      mtu = std::min(mtu ? mtu : SIZE_MAX, m ? m : 1500);
      for (std::size_t i = 0; i < udp_rails_owned_.size(); ++i) {  // SLUICE_UDP_RAILS
        const std::string rail_key = "udp.rail" + std::to_string(i + 1) + "/" + std::to_string(r);
        if (!boot_->get(rail_key, text) || !drivers::net::parse_published(text, port, addrs))
          fail("bootstrap: rank " + std::to_string(r) + " published no " + rail_key +
               " address (is SLUICE_UDP_RAILS the same on every rank?)");
        const sockaddr_in rail_sa =
            drivers::net::choose_address(port, addrs, rail_addrs_[i], same_host);
        udp_rails_owned_[i]->set_peer_address(r, rail_sa);
        const std::size_t rm = drivers::UdpDriver::path_mtu(rail_sa);
        mtu = std::min(mtu, rm ? rm : 1500);
      }
    }
  }
  if (udp_) {
    // Datagrams that fit the path MTU (IP fragments would multiply the loss rate).
    if (!config_.is_set("UDP_DATAGRAM") || config_.get_size("UDP_DATAGRAM") == 0) {
      udp_->set_datagram(std::min<std::size_t>(65507, (mtu ? mtu : 1500) - 28));
      for (auto& rail : udp_rails_owned_)
        rail->set_datagram(std::min<std::size_t>(65507, (mtu ? mtu : 1500) - 28));
    }
    proto::reliable::ReliableConfig rc;
    rc.job_key = job_key64_;
    rc.window_bytes = config_.get_size("REL_WINDOW_BYTES");
    // Auto: the byte window bounds memory, so the packet window follows the datagram size
    // (1472 B datagrams: 128 packets, the most selective acks cover; 64 KiB ones: 64).
    const int64_t window = config_.get_int("REL_WINDOW");
    rc.window = static_cast<uint32_t>(
        window > 0 ? std::min<int64_t>(window, proto::reliable::kMaxWindow)
                   : std::clamp<uint64_t>(rc.window_bytes / udp_->caps().max_packet, 64,
                                          proto::reliable::kMaxWindow));
    rc.min_rto_ns =
        std::max<uint64_t>(1000, static_cast<uint64_t>(config_.get_seconds("REL_MIN_RTO") * 1e9));
    rc.max_rto_ns = std::max(rc.max_rto_ns, rc.min_rto_ns);
    rc.initial_rto_ns = std::max(rc.initial_rto_ns, rc.min_rto_ns);
    rc.delayed_ack_ns = static_cast<uint64_t>(config_.get_seconds("REL_DELAYED_ACK") * 1e9);
    rc.peer_timeout_ns = std::max<uint64_t>(
        1000000, static_cast<uint64_t>(config_.get_seconds("REL_PEER_TIMEOUT") * 1e9));
    rc.on_peer_dead = [this](int peer) { dead_pending_.push_back(peer); };
    const std::string fault = config_.get_string("UDP_FAULT");
    // Corking only pays when a run leaves in one GSO send: without it (or under the fault
    // driver, which sends packet by packet) held packets only wait.
    rc.cork = udp_->gso() && fault.empty();
    for (auto& rail : udp_rails_owned_) rc.cork = rc.cork && rail->gso();
    std::unique_ptr<drivers::Driver> wire = std::move(udp_owned_);
    if (!fault.empty()) {
      // Seeded in-library faults under the reliability layer (tests of the whole stack).
      drivers::FaultConfig fc;
      fc.seed = static_cast<uint64_t>(rank_) + 1;
      for (const auto& item : split_list(fault)) {
        const auto eq = item.find('=');
        const std::string k = item.substr(0, eq);
        const double v = eq == std::string::npos ? -1 : std::atof(item.c_str() + eq + 1);
        if (v < 0 || (k != "seed" && v > 1)) fail("SLUICE_UDP_FAULT: bad item '" + item + "'");
        if (k == "drop")
          fc.drop = v;
        else if (k == "duplicate")
          fc.duplicate = v;
        else if (k == "reorder")
          fc.reorder = v;
        else if (k == "corrupt")
          fc.corrupt = v;
        else if (k == "seed")
          fc.seed = static_cast<uint64_t>(v) * 1000 + static_cast<uint64_t>(rank_);
        else
          fail("SLUICE_UDP_FAULT: unknown item '" + k +
               "' (drop, duplicate, reorder, corrupt, seed)");
      }
      wire = std::make_unique<drivers::FaultDriver>(std::move(wire), fc);
    }
    try {
      std::vector<std::unique_ptr<drivers::Driver>> rails;
      rails.push_back(std::move(wire));  // rail 0, under the fault injector if asked
      for (auto& rail : udp_rails_owned_) rails.push_back(std::move(rail));
      udp_rails_owned_.clear();
      rel_owned_ =
          std::make_unique<proto::reliable::ReliableChannel>(std::move(rails), std::move(rc));
    } catch (const std::exception& e) {
      fail(std::string("udp: ") + e.what());
    }
    rel_ = rel_owned_.get();
  }
}

void Engine::route_network(const std::vector<std::string>& kind) {
  for (int r = 0; r < size_; ++r) {
    const std::string& k = kind[static_cast<std::size_t>(r)];
    if (k == "tcp") p2p_->set_route(r, tcp_);
    if (k == "udp") p2p_->set_route(r, rel_);
  }
  if (tcp_owned_) drivers_.push_back(std::move(tcp_owned_));
  if (rel_owned_) drivers_.push_back(std::move(rel_owned_));
  // One driver besides self: waits block in it (epoll / ppoll); with several, short sleeps.
  if (drivers_.size() == 2) blocking_driver_ = drivers_.back().get();
  peer_failed_.assign(static_cast<std::size_t>(size_), false);
}

void Engine::quiesce_network() {
  // The last packets and acks must get out before the sockets close.
  if (rel_) {
    const uint64_t deadline = drivers::net::monotonic_ns() + 2'000'000'000ull;
    auto bo = make_backoff();
    while (!rel_->quiescent() && drivers::net::monotonic_ns() < deadline) {
      if (progress())
        bo.reset();
      else
        bo.pause();
    }
  }
  if (tcp_) tcp_->drain(5'000'000'000ull);
}

}  // namespace sluice::detail
