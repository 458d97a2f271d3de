// Engine wire-up: which driver component serves each peer (SLUICE_DRIVERS order, locality,
// then reaches()), the components' open / connect / connected steps around the two
// bootstrap fences, the reliability layer stacked on unreliable drivers, and the routes.
// No driver is named here: they come from the registry (src/drivers/registry.hpp).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/engine.hpp"
#include "drivers/loopback.hpp"
#include "drivers/net/net.hpp"
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
// the shared-memory mount, so the hostname alone cannot tell hosts apart), else hostname + boot id.
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

std::string component_names() {
  std::string s;
  for (const drivers::DriverComponent* c : drivers::driver_components())
    s += (s.empty() ? "" : ", ") + std::string(c->name);
  return s;
}

}  // namespace

std::string Engine::job_id() const {
  return boot_->job_id();
}

std::string Engine::job_key() const {
  return boot_->job_key();
}

bool Engine::publish(std::string_view key, std::string_view value) {
  return boot_->put(std::string(key) + "/" + std::to_string(rank_), value) == Errc::ok;
}

bool Engine::lookup(std::string_view key, int rank, std::string& value) {
  return boot_->get(std::string(key) + "/" + std::to_string(rank), value);
}

void Engine::wire_up(proto::Thresholds th, const proto::RegOptions& reg) {
  // The components in preference order (the loopback's name is accepted: always there).
  std::vector<const drivers::DriverComponent*> order;
  for (const auto& d : split_list(config_.get_string("DRIVERS"))) {
    if (d == drivers::LoopbackDriver::kName) continue;
    const drivers::DriverComponent* c = drivers::find_driver_component(d);
    if (!c)
      fail("unknown driver '" + d + "' in SLUICE_DRIVERS (available: " + component_names() + ")");
    if (std::find(order.begin(), order.end(), c) == order.end()) order.push_back(c);
  }
  // Who is on this host.
  const std::string me = host_identity();
  if (boot_->put("host/" + std::to_string(rank_), me) != Errc::ok || boot_->fence() != Errc::ok)
    fail("bootstrap exchange failed");
  for (int r = 0; r < size_; ++r) {
    std::string h;
    if (r == rank_)
      h = me;
    else if (!boot_->get("host/" + std::to_string(r), h))
      fail("bootstrap: no host identity for rank " + std::to_string(r));
    if (h == me) local_.push_back(r);
  }
  // Each peer's component: the first in preference order whose locality admits it.
  std::vector<std::vector<int>> peers_of(order.size());
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const bool is_local = std::binary_search(local_.begin(), local_.end(), r);
    for (std::size_t i = 0; i < order.size(); ++i)
      if (order[i]->locality == drivers::Locality::any || is_local) {
        peers_of[i].push_back(r);
        break;
      }
  }

  // More local ranks than CPUs: a rank that polls holds the CPU its peer needs, so yield
  // after every fruitless poll (as Open MPI's yield_when_idle does; 4-rank Allreduce on
  // 2 cores: 20 µs with a 2 µs spin, 7 µs yielding at once), and sleep only after a few
  // thousand yields. The user's SLUICE_SPIN_TIME still wins.
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus > 0 && static_cast<long>(local_.size()) > cpus) {
    yield_rounds_ = 2000;
    if (!config_.is_set("SPIN_TIME")) spin_ns_ = 0;
    // The pipelined copy needs sender and receiver running at the same time, which ranks
    // sharing a core rarely are; a single copy by the receiver (CMA) does not (4 ranks on
    // 2 cores, Alltoall 64 KiB: 120-880 us pipelined, 83 us with CMA): CMA at every size.
    if (!config_.is_set("RNDV_GET_MAX")) th.get_max = SIZE_MAX;
    // Pushing too: the sender fills the staging slots, then waits for a receiver that is
    // not running.
    if (!config_.is_set("RNDV_PUSH_MAX")) th.push_max = 0;
  }

  p2p_ = std::make_unique<proto::PointToPoint>(*this, th);
  p2p_->set_registration(reg);
  demux_.attach_fast(proto::kProtocolId, drivers::kP2pTypes, *p2p_);
  auto loopback = std::make_unique<drivers::LoopbackDriver>(rank_);
  for (int r = 0; r < size_; ++r) p2p_->set_route(r, nullptr);
  p2p_->set_route(rank_, loopback.get());
  loopback_ = loopback.get();
  drivers_.push_back(std::move(loopback));

  // Open what some peer needs (publish), fence, connect, fence, connected. Every rank runs
  // the same fences, whether or not it opened anything.
  std::vector<std::size_t> opened;  // index into `order` of endpoints_[i]
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (peers_of[i].empty()) continue;
    std::string err;
    std::unique_ptr<drivers::Endpoint> ep = order[i]->open(*this, peers_of[i], err);
    if (!ep) fail(std::string(order[i]->name) + ": " + err);
    endpoints_.push_back(std::move(ep));
    opened.push_back(i);
  }
  if (boot_->fence() != Errc::ok) fail("bootstrap fence failed");
  for (std::size_t e = 0; e < endpoints_.size(); ++e) {
    const std::string err = endpoints_[e]->connect(*this);
    if (!err.empty()) fail(err);
  }
  if (boot_->fence() != Errc::ok) fail("bootstrap fence failed");
  for (auto& ep : endpoints_) ep->connected(*this);

  // Each endpoint's routed driver: itself, or the reliability layer over its rails.
  std::vector<drivers::Driver*> routed(endpoints_.size());
  for (std::size_t e = 0; e < endpoints_.size(); ++e) {
    std::vector<std::unique_ptr<drivers::Driver>> rails = endpoints_[e]->take_rails();
    if (rails.empty()) fail(std::string(order[opened[e]]->name) + ": opened no driver");
    std::unique_ptr<drivers::Driver> d;
    if (rails[0]->caps().reliable && rails[0]->caps().ordered) {
      if (rails.size() != 1)
        fail(std::string(order[opened[e]]->name) + ": several rails need the reliability layer");
      d = std::move(rails[0]);
    } else {
      if (rel_)
        fail("only one driver may run under the reliability layer (SLUICE_DRIVERS=" +
             config_.get_string("DRIVERS") + ")");
      d = make_reliable(std::move(rails), *endpoints_[e]);
      rel_blocker_ = endpoints_[e]->unlocked_blocker();
    }
    routed[e] = d.get();
    drivers_.push_back(std::move(d));
  }
  // Routes: the component chosen for the peer if its driver reaches it, else the first
  // opened one (preference order) that does.
  peer_endpoint_.assign(static_cast<std::size_t>(size_), nullptr);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    std::size_t pick = endpoints_.size();
    for (std::size_t e = 0; e < endpoints_.size(); ++e) {
      const auto& mine = peers_of[opened[e]];
      if (std::find(mine.begin(), mine.end(), r) != mine.end() && routed[e]->reaches(r)) pick = e;
    }
    for (std::size_t e = 0; e < endpoints_.size() && pick == endpoints_.size(); ++e)
      if (routed[e]->reaches(r)) pick = e;
    if (pick == endpoints_.size())
      fail("no driver reaches rank " + std::to_string(r) +
           " (SLUICE_DRIVERS=" + config_.get_string("DRIVERS") + ")");
    p2p_->set_route(r, routed[pick]);
    peer_endpoint_[static_cast<std::size_t>(r)] = endpoints_[pick].get();
  }
  // One driver besides the loopback: waits block in it (doorbell, epoll, ppoll); with
  // several, short sleeps.
  if (drivers_.size() == 2) blocking_driver_ = drivers_.back().get();
  // Nothing wakes a nap early: a wait shorter than the longest nap (a rendezvous whose peer
  // copies 1 MiB, ~80 us, beyond the default 50 us spin) would oversleep by up to a nap and
  // the timer's slack (the reply found 70-80 us late on a libfabric provider without a wait
  // object). Spin for as long as the longest nap instead, while each rank has a CPU of its
  // own.
  if (blocking_driver_ && blocking_driver_->caps().naps && yield_rounds_ == 0 &&
      !config_.is_set("SPIN_TIME"))
    spin_ns_ = std::max(spin_ns_, max_sleep_ns_);
  peer_failed_.assign(static_cast<std::size_t>(size_), false);
  start_progress_thread(static_cast<int>(local_.size()));
}

std::unique_ptr<drivers::Driver> Engine::make_reliable(
    std::vector<std::unique_ptr<drivers::Driver>> rails, const drivers::Endpoint& ep) {
  if (rails.size() > proto::reliable::kMaxRails)
    fail("at most " + std::to_string(proto::reliable::kMaxRails) +
         " rails under the reliability layer");
  std::array<uint8_t, 16> key{};
  if (!drivers::net::parse_job_key(boot_->job_key(), key))
    fail(
        "the reliability layer needs the job key (SLUICE_JOB_KEY, 32 hex digits, set by "
        "sluicerun)");
  proto::reliable::ReliableConfig rc;
  rc.job_key = drivers::net::fold_job_key(key);
  rc.window_bytes = config_.get_size("REL_WINDOW_BYTES");
  // Auto: the byte window bounds memory, so the packet window follows the datagram size
  // (1472 B datagrams: 128 packets, the most selective acks cover; 64 KiB ones: 64).
  const int64_t window = config_.get_int("REL_WINDOW");
  rc.window = static_cast<uint32_t>(
      window > 0 ? std::min<int64_t>(window, proto::reliable::kMaxWindow)
                 : std::clamp<uint64_t>(rc.window_bytes / rails[0]->caps().max_packet, 64,
                                        proto::reliable::kMaxWindow));
  rc.min_rto_ns =
      std::max<uint64_t>(1000, static_cast<uint64_t>(config_.get_seconds("REL_MIN_RTO") * 1e9));
  rc.max_rto_ns = std::max(rc.max_rto_ns, rc.min_rto_ns);
  rc.initial_rto_ns = std::max(rc.initial_rto_ns, rc.min_rto_ns);
  rc.delayed_ack_ns = static_cast<uint64_t>(config_.get_seconds("REL_DELAYED_ACK") * 1e9);
  rc.peer_timeout_ns = std::max<uint64_t>(
      1000000, static_cast<uint64_t>(config_.get_seconds("REL_PEER_TIMEOUT") * 1e9));
  rc.on_peer_dead = [this](int peer) { dead_pending_.push_back(peer); };
  rc.cork = ep.coalesces_runs();
  rc.trust_intact_routes = config_.get_bool("REL_TRUST_LOOPBACK");
  try {
    auto rel = std::make_unique<proto::reliable::ReliableChannel>(std::move(rails), std::move(rc));
    rel_ = rel.get();
    return rel;
  } catch (const std::exception& e) {
    fail(std::string("reliability layer: ") + e.what());
  }
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
  for (auto& ep : endpoints_) ep->drain(5'000'000'000ull);
}

}  // namespace sluice::detail
