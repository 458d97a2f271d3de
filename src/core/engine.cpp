#include "core/engine.hpp"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "core/progress/progress_thread.hpp"
#include "drivers/self/self_driver.hpp"
#include "drivers/shm/shm_driver.hpp"
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
  print_stats_ = config_.get_bool("STATS");

  proto::Thresholds th;
  th.eager_limit = config_.get_size("EAGER_LIMIT");
  th.get_threshold = config_.get_size("SHM_CMA_THRESHOLD");
  const std::string rndv = config_.get_string("SHM_RNDV");
  th.rndv = rndv == "cma"        ? proto::Thresholds::RndvMode::get
            : rndv == "pipeline" ? proto::Thresholds::RndvMode::pipeline
                                 : proto::Thresholds::RndvMode::automatic;

  // Which drivers, and who is on this host.
  bool want_shm = false;
  for (const auto& d : split_list(config_.get_string("DRIVERS"))) {
    if (d == "shm")
      want_shm = true;
    else if (d != "self")
      fail("unknown driver '" + d + "' in SLUICE_DRIVERS (available: shm)");
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
    // 2 cores, Alltoall 64 KiB: 120-880 us pipelined, 83 us with CMA).
    if (!config_.is_set("SHM_RNDV")) th.rndv = proto::Thresholds::RndvMode::automatic;
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
  if (want_shm && local.size() > 1) {
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
      if (r != rank_) p2p_->set_route(r, shm.get());
    blocking_driver_ = shm.get();
    drivers_.push_back(std::move(shm));
  }
  for (int r = 0; r < size_; ++r)
    if (!p2p_->route(r))
      fail("no driver reaches rank " + std::to_string(r) +
           " (SLUICE_DRIVERS=" + config_.get_string("DRIVERS") + ")");
  start_progress_thread(static_cast<int>(local.size()));
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
    progress_thread_ = std::make_unique<ProgressThread>(*this, cpus,
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

Engine::~Engine() {
  finalize();
}

void Engine::finalize() {
  // The application finishes alone: stop the thread first (it never waits for the lock,
  // so joining it while the caller holds the lock is safe).
  if (progress_thread_) {
    if (print_stats_) std::fprintf(stderr, "%s", progress_thread_->stats_text().c_str());
    progress_thread_.reset();
    engine_lock().enable(false);
  }
  // Sends the user detached must still reach their peers; then agree that everyone is
  // done before the segments go away.
  auto bo = make_backoff();
  while (active_sends_ > 0 || p2p_->has_outbound()) {
    if (progress())
      bo.reset();
    else
      bo.pause();
  }
  barrier();
  if (print_stats_) std::fprintf(stderr, "%s", stats_report().c_str());
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
                           bool sync, Errc& err) {
  err = check_peer(dest, false);
  if (err == Errc::ok) err = check_tag(tag, false);
  if (err != Errc::ok) return failed_request(err);
  RequestImpl* r = pool_.get();
  proto::Transfer& t = r->xfer;
  t.peer = dest;
  t.ctx = ctx;
  t.tag = tag;
  t.sync = sync;
  t.buf = const_cast<std::byte*>(buf.data());  // sends only read it
  t.len = buf.size();
  ++active_sends_;
  p2p_->start_send(t);
  note_work();
  return r;
}

Errc Engine::send(std::span<const std::byte> buf, int dest, int tag, uint32_t ctx) {
  Errc err = check_peer(dest, false);
  if (err == Errc::ok) err = check_tag(tag, false);
  if (err != Errc::ok) return err;
  // A request on the stack: an eager send that finds room completes inside start_send.
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
    }
  }
  return local.status.error;
}

RequestImpl* Engine::irecv(std::span<std::byte> buf, int src, int tag, uint32_t ctx, Errc& err) {
  err = check_peer(src, true);
  if (err == Errc::ok) err = check_tag(tag, true);
  if (err != Errc::ok) return failed_request(err);
  RequestImpl* r = pool_.get();
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
      return r;
    }
  }
  r->match.ctx = ctx;
  r->match.src = src;
  r->match.tag = tag;
  r->match.owner = r;
  r->posted = true;
  posted_.push(r->match);
  return r;
}

void Engine::on_incoming(const proto::Incoming& msg) {
  if (!posted_.empty()) {
    if (MatchEntry* e = posted_.take(msg.ctx, msg.src, msg.tag)) {
      ++stats_.expected;
      auto* r = static_cast<RequestImpl*>(e->owner);
      r->posted = false;
      r->status.source = msg.src;
      r->status.tag = msg.tag;
      r->status.size = msg.size;
      p2p_->deliver(r->xfer, msg);
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
  if (r->detached) pool_.put(r);
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
  if (blocking_driver_ && drivers_.size() == 2 && blocking_driver_->block(ns)) return;
  timespec ts{static_cast<time_t>(ns / 1000000000u), static_cast<long>(ns % 1000000000u)};
  nanosleep(&ts, nullptr);
}

bool Engine::needs_progress() const {
  if (active_sends_ > 0 || active_recvs_ > 0 || p2p_->has_outbound()) return true;
  for (const ProgressHook* h : hooks_)
    if (h->busy()) return true;
  return false;
}

bool Engine::park_if_idle(uint32_t& bell) {
  if (needs_progress()) return false;
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

void Engine::thread_sleep(uint64_t ns) {
  if (blocking_driver_ && drivers_.size() == 2 && blocking_driver_->block(ns)) return;
  timespec ts{static_cast<time_t>(ns / 1000000000u), static_cast<long>(ns % 1000000000u)};
  nanosleep(&ts, nullptr);
}

bool Engine::progress() {
  ++stats_.polls;
  int n = 0;
  // drivers_[0] is the self driver, almost always idle: look before calling it.
  if (!self_->idle()) n += self_->poll(*p2p_, 64);
  for (std::size_t i = 1; i < drivers_.size(); ++i) n += drivers_[i]->poll(*p2p_, 64);
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
  return result;
}

std::string_view Engine::driver_name(int peer) const {
  if (peer < 0 || peer >= size_) return "none";
  return p2p_->route(peer)->name();
}

std::string Engine::stats_report() const {
  const proto::ProtoStats& ps = p2p_->stats();
  std::ostringstream o;
  o << "sluice rank " << rank_ << " statistics\n";
  for (const auto& d : drivers_) o << "  driver " << d->name() << ": " << d->stats_text() << "\n";
  const proto::Thresholds& th = p2p_->thresholds();
  o << "  thresholds: eager <= " << th.eager_limit << " B (SLUICE_EAGER_LIMIT), then ";
  switch (th.rndv) {
    case proto::Thresholds::RndvMode::pipeline:
      o << "rendezvous by pipelined copy (SLUICE_SHM_RNDV=pipeline)\n";
      break;
    case proto::Thresholds::RndvMode::get:
      o << "rendezvous by get where the driver can (SLUICE_SHM_RNDV=cma)\n";
      break;
    case proto::Thresholds::RndvMode::automatic:
      o << "pipelined copy below " << th.get_threshold
        << " B and get from there (SLUICE_SHM_RNDV=auto)\n";
      break;
  }
  for (proto::Protocol p :
       {proto::Protocol::eager, proto::Protocol::rndv_get, proto::Protocol::rndv_pipeline}) {
    int i = static_cast<int>(p);
    o << "  protocol " << proto::protocol_name(p) << ": sent " << ps.sent[i] << " msgs / "
      << ps.sent_bytes[i] << " B, received " << ps.received[i] << " msgs\n";
  }
  o << "  pipelined fragments sent: " << ps.fragments << ", bytes pulled by get: " << ps.get_bytes
    << ", sends queued on a full driver: " << ps.driver_full << "\n";
  o << "  matching: " << stats_.expected << " expected, " << stats_.unexpected
    << " unexpected (queue high-water " << stats_.max_unexpected << "), truncated " << ps.truncated
    << "\n";
  if (progress_thread_)
    o << "  progress thread: cpus " << progress_thread_->cpus_text() << ", completed "
      << stats_.thread_completions << " requests\n";
  return o.str();
}

}  // namespace sluice::detail
