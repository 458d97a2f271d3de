#include "core/engine.hpp"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <new>
#include <sstream>
#include <stdexcept>

#include "core/progress/progress_thread.hpp"
#include "drivers/fault/fault_driver.hpp"
#include "drivers/net/net.hpp"
#include "drivers/self/self_driver.hpp"
#include "drivers/shm/shm_driver.hpp"
#include "drivers/tcp/tcp_driver.hpp"
#include "drivers/udp/udp_driver.hpp"
#include "proto/reliable/reliable_channel.hpp"
#include "util/cpu.hpp"
#include "util/log.hpp"

namespace sluice::detail {

namespace {

// Reserved context ids (the MPI layer allocates from 0 upwards).
constexpr uint32_t kBarrierContext = 0xfffffffeu;

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

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("sluice: " + what);
}

}  // namespace

Engine::Engine() {
  std::vector<std::string> problems;
  config_ = Config::from_environment(problems);
  for (const auto& p : problems) std::fprintf(stderr, "sluice: warning: %s\n", p.c_str());

  std::string err;
  boot_ = BootClient::from_environment(err);
  if (!boot_) fail("cannot join the job: " + err);
  boot_->set_failure_poll_interval(
      static_cast<uint64_t>(config_.get_seconds("PMIX_FAILURE_POLL") * 1e9));
  rank_ = boot_->rank();
  size_ = boot_->size();
  util::log_state().rank = rank_;
  const std::string level = config_.get_string("LOG_LEVEL");
  util::log_state().level = level == "error"   ? util::LogLevel::error
                            : level == "info"  ? util::LogLevel::info
                            : level == "debug" ? util::LogLevel::debug
                                               : util::LogLevel::warn;
  spin_ns_ = static_cast<uint64_t>(config_.get_seconds("SPIN_TIME") * 1e9);
  max_sleep_ns_ =
      std::max<uint64_t>(1000, static_cast<uint64_t>(config_.get_seconds("BACKOFF_MAX") * 1e9));
  stats_mode_ = config_.get_string("STATS");

  proto::Thresholds th;
  th.eager_limit = config_.get_size("EAGER_LIMIT");
  th.get_threshold = config_.get_size("SHM_CMA_THRESHOLD");
  th.get_max = config_.get_size("SHM_CMA_MAX");
  th.push_max = config_.get_size("SHM_PUSH_MAX");
  th.coll_get_max = config_.get_size("SHM_COLL_CMA_MAX");
  const std::string rndv = config_.get_string("SHM_RNDV");
  th.rndv = rndv == "cma"        ? proto::Thresholds::RndvMode::get
            : rndv == "pipeline" ? proto::Thresholds::RndvMode::pipeline
                                 : proto::Thresholds::RndvMode::automatic;

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
  register_stats();
}

void Engine::start_progress_thread(int local_ranks) {
  const std::string mode = config_.get_string("PROGRESS_THREAD");
  std::vector<unsigned> cpus;
  const std::string cpu_text = config_.get_string("PROGRESS_CPUS");
  if (!cpu_text.empty() && !parse_cpu_list(cpu_text, cpus))
    util::log(util::LogLevel::warn,
              "SLUICE_PROGRESS_CPUS='%s' is not a CPU list (e.g. 1 or 2-3,6); thread not bound",
              cpu_text.c_str());
  const std::vector<unsigned> mine = current_thread_cpus();
  bool on = mode == "on";
  if (mode == "auto") {
    // A free core for the thread: the launcher's placement gave it CPUs other than the
    // rank's; without a placement, fewer local ranks than CPUs.
    const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    on = !cpus.empty() ? cpus != mine : local_ranks < ncpu;
  }
  if (on) {
    // Sharing a CPU with the rank (or with anyone, on an oversubscribed host), every
    // nanosecond the thread spins is taken from the application's computation: it sleeps at
    // once and relies on the doorbell. On a CPU of its own a short spin costs nothing.
    const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    bool shares = 2L * local_ranks > ncpu || (cpus.empty() && mine.size() == 1);
    for (unsigned c : cpus) shares |= std::find(mine.begin(), mine.end(), c) != mine.end();
    const auto spin = static_cast<uint64_t>(config_.get_seconds("PROGRESS_SPIN") * 1e9);
    engine_lock().enable(true);
    progress_thread_ = std::make_unique<ProgressThread>(*this, progress_stats_, cpus,
                                                        config_.is_set("PROGRESS_SPIN") ? spin
                                                        : shares                        ? 0
                                                                                        : spin,
                                                        max_sleep_ns_, shares);
  }
  if (config_.get_bool("REPORT_BINDINGS")) {
    // Read back from the kernel: what runs where, not what was planned.
    std::printf("rank %d: cpus %s | progress thread: %s\n", rank_, cpu_list_text(mine).c_str(),
                progress_thread_ ? ("cpus " + progress_thread_->cpus_text()).c_str() : "off");
    std::fflush(stdout);
  }
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

void Engine::fail_peer(int peer) {
  if (peer == rank_ || peer < 0 || peer >= size_) return;
  if (peer_failed_.empty() || peer_failed_[static_cast<std::size_t>(peer)]) return;
  peer_failed_[static_cast<std::size_t>(peer)] = true;
  failed_order_.push_back(peer);
  util::log(util::LogLevel::warn, "rank %d is unreachable: its requests fail", peer);
  // Sends still queued for the driver, then everything else that waits on the peer: posted
  // receives naming it, any-source receives on a context it belongs to (ULFM: they could
  // wait forever for a message only it would have sent), rendezvous sends waiting for its
  // answer, receives mid-pipeline.
  p2p_->fail_peer(peer);
  if (rel_) rel_->mark_dead(peer);  // no retransmissions to it, nor a wait for its acks
  auto fail = [&](RequestImpl* r) {
    if (r->state != RequestState::active) return;
    if (r->posted) {
      if (r->match.src != peer && (r->match.src != any_source || !context_has(r->match.ctx, peer)))
        return;
      if (r == recv_slot_)
        recv_slot_ = nullptr;
      else
        posted_.remove(r->match);
      r->posted = false;
      r->status.source = peer;
      complete_request(r, Errc::peer_dead);
      return;
    }
    if (r->xfer.peer == peer && r->xfer.protocol != proto::Protocol::none)
      complete_request(r, Errc::peer_dead);
  };
  pool_.for_each(fail);
  if (blocking_recv_) fail(blocking_recv_);
}

void Engine::drain_drivers() {
  // A failure notice can overtake the dead rank's last messages: they may still wait in a
  // socket or ring here. They were sent before it died, so they are delivered (in order)
  // before its receives start to fail. Bounded, since live peers may keep sending.
  for (int pass = 0; pass < 4096; ++pass) {
    int got = 0;
    for (std::size_t i = 1; i < drivers_.size(); ++i) got += drivers_[i]->poll(*p2p_, 64);
    if (got == 0) break;
  }
}

bool Engine::context_has(uint32_t ctx, int peer) const {
  auto it = contexts_.find(ctx);
  if (it == contexts_.end() || it->second.members.empty()) return true;
  return std::binary_search(it->second.members.begin(), it->second.members.end(), peer);
}

int Engine::unacked_failure(uint32_t ctx) const {
  if (failed_order_.empty()) return -1;
  auto it = contexts_.find(ctx);
  const std::size_t acked = it == contexts_.end() ? 0 : it->second.acked;
  for (std::size_t i = acked; i < failed_order_.size(); ++i)
    if (context_has(ctx, failed_order_[i])) return failed_order_[i];
  return -1;
}

void Engine::set_context_members(uint32_t ctx, std::vector<int> world_ranks) {
  std::sort(world_ranks.begin(), world_ranks.end());
  ContextFailures& c = contexts_[ctx];
  c.members = std::move(world_ranks);
  c.acked = 0;
}

void Engine::forget_context(uint32_t ctx) {
  contexts_.erase(ctx);
}

std::size_t Engine::ack_failures(uint32_t ctx) {
  progress();  // take in the failures already reported
  contexts_[ctx].acked = failed_order_.size();
  return failed_order_.size();
}

Errc Engine::probe_failure(int src, uint32_t ctx) const {
  if (failed_order_.empty()) return Errc::ok;
  if (src == any_source) return unacked_failure(ctx) >= 0 ? Errc::peer_dead : Errc::ok;
  return src >= 0 && src < size_ && peer_failed(src) ? Errc::peer_dead : Errc::ok;
}

void Engine::poll_launcher_notices() {
  boot_->take_failed_ranks(dead_pending_);
}

Engine::~Engine() {
  finalize();
}

void Engine::finalize() {
  // The application finishes alone: stop the thread first (it never waits for the lock,
  // so joining it while the caller holds the lock is safe).
  if (progress_thread_) {
    progress_thread_.reset();
    engine_lock().enable(false);
  }
  // Sends the user detached must still reach their peers; then agree that everyone is
  // done before the segments go away.
  auto bo = make_backoff();
  while (active_sends_ > abandoned_sends_ || p2p_->has_outbound()) {
    if (progress())
      bo.reset();
    else
      bo.pause();
  }
  barrier();
  quiesce_network();
  report_stats();
  boot_->finalize();
  while (unexpected_list_) {
    unexpected_.remove(unexpected_list_->match);
    delete take_stored(&unexpected_list_->match);
  }
}

UnexpectedMsg* Engine::take_stored(MatchEntry* e) {
  auto* u = static_cast<UnexpectedMsg*>(e->owner);
  if (u->prev)
    u->prev->next = u->next;
  else
    unexpected_list_ = u->next;
  if (u->next) u->next->prev = u->prev;
  return u;
}

Errc Engine::check_peer(int peer, bool allow_any) const {
  if (allow_any && peer == any_source) return Errc::ok;
  return peer >= 0 && peer < size_ ? Errc::ok : Errc::invalid_argument;
}

Errc Engine::check_tag(int tag, bool allow_any) {
  if (allow_any && tag == any_tag) return Errc::ok;
  return tag >= 0 ? Errc::ok : Errc::invalid_argument;
}

RequestImpl* Engine::isend(std::span<const std::byte> buf, int dest, int tag, uint32_t ctx,
                           bool sync, Errc& err, bool coll) {
  err = check_peer(dest, false);
  if (err == Errc::ok) err = check_tag(tag, false);
  if (err != Errc::ok) return failed_request(err);
  RequestImpl* r = pool_.get();
  proto::Transfer& t = r->xfer;
  t.peer = dest;
  t.ctx = ctx;
  t.tag = tag;
  t.sync = sync;
  t.coll = coll;
  t.buf = const_cast<std::byte*>(buf.data());  // sends only read it
  t.len = buf.size();
  ++active_sends_;
  if (peer_failed(dest)) [[unlikely]] {
    complete_request(r, Errc::peer_dead);
    return r;
  }
  p2p_->start_send(t);
  note_work();
  return r;
}

RequestImpl* Engine::isend_or_inject(std::span<const std::byte> buf, int dest, int tag,
                                     uint32_t ctx, Errc& err, bool coll) {
  err = check_peer(dest, false);
  if (err == Errc::ok) err = check_tag(tag, false);
  if (err != Errc::ok) return failed_request(err);
  // A known-dead peer fails at once in isend, whatever its driver would still accept.
  if (peer_failed(dest)) [[unlikely]]
    return isend(buf, dest, tag, ctx, false, err);
  proto::Transfer t;
  t.peer = dest;
  t.ctx = ctx;
  t.tag = tag;
  t.buf = const_cast<std::byte*>(buf.data());  // sends only read it
  t.len = buf.size();
  if (p2p_->try_inject(t) == drivers::IoStatus::done) {
    note_work();
    return nullptr;
  }
  return isend(buf, dest, tag, ctx, false, err, coll);  // queued, rendezvous or a dead peer
}

Errc Engine::send(std::span<const std::byte> buf, int dest, int tag, uint32_t ctx) {
  Errc err = check_peer(dest, false);
  if (err == Errc::ok) err = check_tag(tag, false);
  if (err != Errc::ok) return err;
  if (peer_failed(dest)) [[unlikely]]
    return Errc::peer_dead;
  // An eager message the driver takes at once needs no request at all.
  {
    proto::Transfer t;
    t.peer = dest;
    t.ctx = ctx;
    t.tag = tag;
    t.buf = const_cast<std::byte*>(buf.data());
    t.len = buf.size();
    if (p2p_->try_inject(t) == drivers::IoStatus::done) return Errc::ok;
  }
  // Else a request on the stack (the driver is full, a rendezvous, a failed peer).
  RequestImpl local;
  local.state = RequestState::active;
  proto::Transfer& t = local.xfer;
  t.peer = dest;
  t.ctx = ctx;
  t.tag = tag;
  t.buf = const_cast<std::byte*>(buf.data());
  t.len = buf.size();
  ++active_sends_;
  p2p_->start_send(t);
  if (local.state != RequestState::complete) {
    auto bo = make_backoff();
    while (local.state != RequestState::complete) {
      if (progress())
        bo.reset();
      else
        bo.pause();
      // A rendezvous waiting for the peer's answer is in no queue fail_peer() scans.
      if (local.state != RequestState::complete && peer_failed(dest))
        complete_request(&local, Errc::peer_dead);
    }
  }
  return local.status.error;
}

RequestImpl* Engine::irecv(std::span<std::byte> buf, int src, int tag, uint32_t ctx, Errc& err) {
  err = check_peer(src, true);
  if (err == Errc::ok) err = check_tag(tag, true);
  if (err != Errc::ok) return failed_request(err);
  RequestImpl* r = pool_.get();
  start_recv(r, buf, src, tag, ctx);
  return r;
}

Errc Engine::recv(std::span<std::byte> buf, int src, int tag, uint32_t ctx, Status* st) {
  Errc err = check_peer(src, true);
  if (err == Errc::ok) err = check_tag(tag, true);
  if (err != Errc::ok) return err;
  // A request on the stack instead of the pool's; fail_peer() sees it through blocking_recv_
  // (one at a time: the caller holds the engine for the whole call).
  RequestImpl local;
  local.state = RequestState::active;
  start_recv(&local, buf, src, tag, ctx, true);
  if (local.state != RequestState::complete) {
    blocking_recv_ = &local;
    auto bo = make_backoff();
    while (local.state != RequestState::complete) {
      if (progress())
        bo.reset();
      else
        bo.pause();
    }
    blocking_recv_ = nullptr;
  }
  if (st) *st = local.status;
  drop_needless_ring();
  return local.status.error;
}

void Engine::start_recv(RequestImpl* r, std::span<std::byte> buf, int src, int tag, uint32_t ctx,
                        bool blocking) {
  proto::Transfer& t = r->xfer;
  t.role = proto::Transfer::Role::recv;
  t.buf = buf.data();
  t.len = buf.size();
  ++active_recvs_;
  note_work();
  if (!unexpected_.empty()) {
    if (MatchEntry* e = unexpected_.take(ctx, src, tag)) {
      UnexpectedMsg* u = take_stored(e);
      r->status.source = u->info.src;
      r->status.tag = u->info.tag;
      r->status.size = u->info.size;
      p2p_->deliver(t, u->info);
      recycle(u);
      return;
    }
  }
  if (!failed_order_.empty()) [[unlikely]] {
    // Nothing more can come from a dead source; an any-source receive could wait forever
    // for a message only an unacknowledged dead member would have sent (ULFM semantics).
    const int dead = src == any_source ? unacked_failure(ctx) : peer_failed(src) ? src : -1;
    if (dead >= 0) {
      r->status.source = dead;
      complete_request(r, Errc::peer_dead);
      return;
    }
  }
  r->match.ctx = ctx;
  r->match.src = src;
  r->match.tag = tag;
  r->match.owner = r;
  r->posted = true;
  // With no other receive posted, a blocking one waits in the slot: the oldest posted
  // receive (anything posted meanwhile is younger), matched without the queue's hashing.
  if (blocking && posted_.empty() && !recv_slot_) {
    recv_slot_ = r;
    return;
  }
  posted_.push(r->match);
}

void Engine::deliver_matched(RequestImpl* r, const proto::Incoming& msg) {
  ++stats_.expected;
  r->posted = false;
  r->status.source = msg.src;
  r->status.tag = msg.tag;
  r->status.size = msg.size;
  p2p_->deliver(r->xfer, msg);
}

void Engine::on_incoming(const proto::Incoming& msg) {
  if (RequestImpl* r = recv_slot_) {
    const MatchEntry& m = r->match;
    if (m.ctx == msg.ctx && (m.src == msg.src || m.src == any_source) &&
        (m.tag == msg.tag || m.tag == any_tag)) {
      recv_slot_ = nullptr;
      deliver_matched(r, msg);
      return;
    }
  }
  if (!posted_.empty()) {
    if (MatchEntry* e = posted_.take(msg.ctx, msg.src, msg.tag)) {
      deliver_matched(static_cast<RequestImpl*>(e->owner), msg);
      return;
    }
  }
  ++stats_.unexpected;
  UnexpectedMsg* u = new_unexpected();
  u->info = msg;
  u->data.assign(msg.payload.begin(), msg.payload.end());  // also empties a recycled buffer
  u->info.payload = u->data;
  u->match.ctx = msg.ctx;
  u->match.src = msg.src;
  u->match.tag = msg.tag;
  u->match.owner = u;
  u->next = unexpected_list_;
  if (unexpected_list_) unexpected_list_->prev = u;
  unexpected_list_ = u;
  unexpected_.push(u->match);
  stats_.max_unexpected = std::max<uint64_t>(stats_.max_unexpected, unexpected_.size());
}

// Unexpected messages are common (a peer runs ahead by one collective), so their records
// and payload buffers are recycled instead of costing two allocations per message.
UnexpectedMsg* Engine::new_unexpected() {
  if (spare_unexpected_.empty()) return new UnexpectedMsg;
  UnexpectedMsg* u = spare_unexpected_.back().release();
  spare_unexpected_.pop_back();
  return u;
}

void Engine::recycle(UnexpectedMsg* u) {
  constexpr std::size_t kMaxSpares = 1024, kMaxKeptPayload = 64 * 1024;
  if (spare_unexpected_.size() >= kMaxSpares) {
    delete u;
    return;
  }
  if (u->data.capacity() > kMaxKeptPayload) std::vector<std::byte>().swap(u->data);
  u->prev = u->next = nullptr;
  spare_unexpected_.emplace_back(u);
}

RequestImpl* Engine::failed_request(Errc err) {
  // Bad arguments still give the caller a request, already complete with the error, so
  // the error surfaces at wait/test like any other.
  RequestImpl* r = pool_.get();
  r->xfer.role = proto::Transfer::Role::recv;
  ++active_recvs_;
  complete_request(r, err);
  return r;
}

void Engine::transfer_complete(proto::Transfer& t, Errc err) {
  // Transfer is the first member of RequestImpl.
  complete_request(reinterpret_cast<RequestImpl*>(&t), err);
}

void Engine::complete_request(RequestImpl* r, Errc err) {
  if (r->xfer.role == proto::Transfer::Role::send)
    --active_sends_;
  else
    --active_recvs_;
  stats_.thread_completions += in_thread_pass_;
  r->status.error = err;
  r->state = RequestState::complete;
  if (r->detached) {
    abandoned_sends_ -= r->abandoned;
    pool_.put(r);
  }
}

bool Engine::iprobe(int src, int tag, uint32_t ctx, Status* st) {
  progress();
  if (unexpected_.empty()) return false;
  MatchEntry* e = unexpected_.find(ctx, src, tag);
  if (!e) return false;
  if (st) {
    auto* u = static_cast<UnexpectedMsg*>(e->owner);
    st->source = u->info.src;
    st->tag = u->info.tag;
    st->size = u->info.size;
    st->error = Errc::ok;
    st->cancelled = false;
  }
  return true;
}

UnexpectedMsg* Engine::mprobe(int src, int tag, uint32_t ctx, Status* st) {
  if (!iprobe(src, tag, ctx, st)) return nullptr;
  return take_stored(unexpected_.take(ctx, src, tag));
}

RequestImpl* Engine::mrecv(UnexpectedMsg* u, std::span<std::byte> buf) {
  RequestImpl* r = pool_.get();
  r->xfer.role = proto::Transfer::Role::recv;
  ++active_recvs_;
  note_work();
  r->xfer.buf = buf.data();
  r->xfer.len = buf.size();
  r->status.source = u->info.src;
  r->status.tag = u->info.tag;
  r->status.size = u->info.size;
  p2p_->deliver(r->xfer, u->info);
  recycle(u);
  return r;
}

void Engine::sleep_for(uint64_t ns) {
  // The shm doorbell only hears local peers; with other drivers present, a short sleep
  // keeps them polled.
  // A send waiting for room may miss the peer's wake-up if the room appeared just before
  // we went to sleep (the peer only rings sleepers): keep such sleeps short.
  if (p2p_->has_outbound()) ns = std::min<uint64_t>(ns, 50000);
  if (rel_) ns = std::min<uint64_t>(ns, rel_->next_timer_ns());  // don't sleep past an RTO
  if (blocking_driver_ && drivers_.size() == 2 && blocking_driver_->block(ns)) return;
  timespec ts{static_cast<time_t>(ns / 1000000000u), static_cast<long>(ns % 1000000000u)};
  nanosleep(&ts, nullptr);
}

bool Engine::needs_progress() const {
  if (active_sends_ > 0 || active_recvs_ > 0 || p2p_->has_outbound()) return true;
  // An eager send over udp completes at once, but its packets wait for acks (and may need
  // a retransmission); an arrival may owe a delayed ack: the reliability timers need a pass.
  if (rel_ && !rel_->quiescent()) return true;
  for (const ProgressHook* h : hooks_)
    if (h->busy()) return true;
  return false;
}

bool Engine::network_quiescent() const {
  return !rel_ || rel_->quiescent();
}

bool Engine::park_if_idle(uint32_t& bell) {
  if (needs_progress()) return false;
  for (const ProgressHook* h : hooks_)
    if (h->linger()) return false;
  bell = work_bell_.load(std::memory_order_acquire);
  thread_parked_ = true;
  return true;
}

void Engine::wake_parked_thread() {
  thread_parked_ = false;
  engine_lock().ring_on_unlock(&work_bell_);
}

void Engine::keep_parked_if_idle() {
  if (needs_progress()) return;
  engine_lock().cancel_ring();
  thread_parked_ = true;
}

void EngineLock::ring(std::atomic<uint32_t>* bell) {
  bell->fetch_add(1, std::memory_order_release);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(bell), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void Engine::thread_pass_done() {
  // Read by thread_sleep() without the lock: when the next reliability timer is due.
  const uint64_t due = rel_ ? rel_->next_timer_ns() : UINT64_MAX;
  thread_timer_due_.store(due == UINT64_MAX ? UINT64_MAX : util::now_ns() + due,
                          std::memory_order_relaxed);
}

bool Engine::thread_sleep_wakes() const {
  if (drivers_.size() != 2) return false;
  return rel_ ? rel_->rails() == 1 && udp_ != nullptr : blocking_driver_ != nullptr;
}

void Engine::thread_sleep(uint64_t ns) {
  if (rel_) {
    // Wake for the nearest retransmission / delayed-ack / probe deadline, not later.
    const uint64_t due = thread_timer_due_.load(std::memory_order_relaxed);
    if (due != UINT64_MAX) {
      const uint64_t now = util::now_ns();
      if (due <= now) return;
      ns = std::min(ns, due - now);
    }
    // ReliableChannel::block (and a fault injector's) read engine state: sleep in the one
    // rail's socket directly (a ppoll on a fixed fd).
    if (drivers_.size() == 2 && rel_->rails() == 1 && udp_ && udp_->block(ns)) return;
  } else if (blocking_driver_ && drivers_.size() == 2 && blocking_driver_->block(ns)) {
    return;
  }
  timespec ts{static_cast<time_t>(ns / 1000000000u), static_cast<long>(ns % 1000000000u)};
  nanosleep(&ts, nullptr);
}

bool Engine::progress() {
  ++stats_.polls;
  int n = 0;
  // The launcher's failure notices: a clock read every 64 passes, a recv every 10 ms.
  if ((stats_.polls & 63) == 0) [[unlikely]] {
    const uint64_t now = drivers::net::monotonic_ns();
    if (now - last_notice_poll_ns_ >= 10'000'000) {
      last_notice_poll_ns_ = now;
      poll_launcher_notices();
    }
  }
  // drivers_[0] is the self driver, almost always idle: look before calling it.
  if (!self_->idle()) n += self_->poll(*p2p_, 64);
  for (std::size_t i = 1; i < drivers_.size(); ++i) n += drivers_[i]->poll(*p2p_, 64);
  if (!dead_pending_.empty()) {
    drain_drivers();
    std::vector<int> dead;
    dead.swap(dead_pending_);
    for (int peer : dead) fail_peer(peer);
    ++n;
  }
  if (p2p_->has_outbound()) n += p2p_->progress_outbound() ? 1 : 0;
  if (!hooks_.empty())
    for (std::size_t i = 0; i < hooks_.size(); ++i) n += hooks_[i]->progress() ? 1 : 0;
  return n > 0;
}

Errc Engine::wait(RequestImpl* r, Status* st) {
  if (r->state != RequestState::complete) {
    auto bo = make_backoff();
    while (r->state != RequestState::complete) {
      if (progress())
        bo.reset();
      else
        bo.pause();
    }
  }
  if (st) *st = r->status;
  Errc e = r->status.error;
  pool_.put(r);
  drop_needless_ring();
  return e;
}

bool Engine::test(RequestImpl* r, Status* st) {
  if (r->state != RequestState::complete) progress();
  if (r->state != RequestState::complete) return false;
  if (st) *st = r->status;
  pool_.put(r);
  drop_needless_ring();
  return true;
}

bool Engine::cancel(RequestImpl* r) {
  if (r->state != RequestState::active || !r->posted) return false;
  posted_.remove(r->match);
  r->posted = false;
  r->status.cancelled = true;
  r->status.source = any_source;
  r->status.tag = any_tag;
  r->status.size = 0;
  complete_request(r, Errc::ok);
  return true;
}

void Engine::release(RequestImpl* r) {
  if (r->state == RequestState::complete)
    pool_.put(r);
  else
    r->detached = true;
}

bool Engine::abandon(RequestImpl* r) {
  const proto::Transfer& t = r->xfer;
  if (r->state != RequestState::active || t.role != proto::Transfer::Role::send || t.queued)
    return false;
  // Sent its rts and waits for a cts (pipeline: remote_id still 0) or a fin (get).
  const bool awaiting_peer = t.protocol == proto::Protocol::rndv_get ||
                             (t.protocol == proto::Protocol::rndv_pipeline && t.remote_id == 0);
  if (!awaiting_peer) return false;
  // A late cts would stream the fragments from the caller's buffer after the collective
  // returned, when it may be freed: stream them from a copy of our own instead (the failure
  // path only). A get reads the address the rts published, so it keeps the caller's buffer.
  if (t.protocol == proto::Protocol::rndv_pipeline && t.len > 0) {
    r->kept_copy.reset(new (std::nothrow) std::byte[t.len]);
    if (!r->kept_copy) return false;  // then the caller waits for it instead
    std::memcpy(r->kept_copy.get(), t.buf, t.len);
    r->xfer.buf = r->kept_copy.get();
  }
  r->detached = true;
  r->abandoned = true;
  ++abandoned_sends_;
  return true;
}

Errc Engine::barrier() {
  // Dissemination barrier (Hensgen, Finkel, Manber): ceil(log2 P) rounds of zero-byte
  // messages; works for any P.
  Errc result = Errc::ok;
  int round = 0;
  for (int k = 1; k < size_; k <<= 1, ++round) {
    int to = (rank_ + k) % size_;
    int from = (rank_ - k + size_) % size_;
    Errc e1;
    RequestImpl* rr = irecv({}, from, round, kBarrierContext, e1);
    Errc e2 = send({}, to, round, kBarrierContext);
    Errc e3 = rr ? wait(rr, nullptr) : e1;
    if (result == Errc::ok) result = e2 != Errc::ok ? e2 : e3;
  }
  ++barrier_epoch_;
  // The world has a dead member: fails on every survivor, as the collective schedules do,
  // not only on those that exchanged a message with it.
  if (result == Errc::ok && !failed_order_.empty()) [[unlikely]]
    result = Errc::peer_dead;
  return result;
}

std::string_view Engine::driver_name(int peer) const {
  if (peer < 0 || peer >= size_) return "none";
  return p2p_->route(peer)->name();
}

std::string Engine::peer_address(int peer) const {
  if (peer < 0 || peer >= size_) return {};
  const drivers::Driver* d = p2p_->route(peer);
  if (tcp_ && d == tcp_) return tcp_->peer_address(peer);
  if (rel_ && d == rel_) return udp_->peer_address(peer);
  return {};
}

}  // namespace sluice::detail
