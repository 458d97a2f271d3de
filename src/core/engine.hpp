// The Engine is the one Context of a process: it owns the bootstrap connection, the
// drivers, the protocol layer, the matching queues and the request pool, and it drives
// progress. The public Session is a thin handle to it.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/boot_client.hpp"
#include "core/config.hpp"
#include "core/engine_lock.hpp"
#include "core/matching.hpp"
#include "core/progress/progress_thread.hpp"
#include "core/request.hpp"
#include "drivers/driver.hpp"
#include "drivers/registry.hpp"
#include "proto/p2p.hpp"
#include "util/backoff.hpp"
#include "util/stats.hpp"

namespace sluice::drivers {
class LoopbackDriver;
}  // namespace sluice::drivers
namespace sluice::proto::reliable {
class ReliableChannel;
}
namespace sluice::proto::rma {
class RmaProtocol;
}

namespace sluice::detail {

// A message that arrived before its receive was posted.
struct UnexpectedMsg {
  MatchEntry match;
  proto::Incoming info;           // payload span points into `data`
  std::vector<std::byte> data;    // eager payload copy
  UnexpectedMsg* prev = nullptr;  // list of every stored message, to free at finalize
  UnexpectedMsg* next = nullptr;
};

struct EngineStats {
  uint64_t unexpected = 0;      // match packets that found no posted receive
  uint64_t expected = 0;        // ... that found one
  uint64_t max_unexpected = 0;  // high-water mark of the unexpected queue
  uint64_t polls = 0;
  uint64_t thread_completions = 0;  // requests completed during a progress-thread pass
};

class ProgressThread;
class RmaGlue;     // core/rma_glue.hpp
class CopyAssist;  // core/rma_copy.hpp

// Work the engine advances on every progress pass besides the drivers (collective
// schedules, later RMA epochs). progress() returns true if it moved anything.
class ProgressHook {
 public:
  virtual bool progress() = 0;
  // Whether it has work in flight (a hook may stay registered while idle); the progress
  // thread parks only when no hook is busy.
  virtual bool busy() const { return true; }
  // Idle, but more work is likely soon (e.g. the next collective of a loop): the progress
  // thread then waits in the driver's doorbell instead of parking, so that posting that
  // work needs no wake-up of its own (the peer's first packet wakes it).
  virtual bool linger() const { return false; }

 protected:
  ~ProgressHook() = default;
};

class Engine final : public proto::Upcalls, public util::Sleeper, private drivers::WireupServices {
 public:
  // Wires up the job `boot` has joined (core never creates a boot client: the composition
  // root does, see open_engine()). Throws std::runtime_error when the job cannot be joined.
  explicit Engine(std::unique_ptr<BootClient> boot);
  // Finalizes, unless finalize() ran already; while the process exits (process_exiting())
  // it leaves instead: no destructor at exit may wait for the other ranks.
  ~Engine();

  // Leaves the job with the others: drains this rank's sends, a barrier with every rank,
  // bye on the connections, then tells the launcher. Once; later calls do nothing.
  void finalize();
  // Ends the whole job (the launcher's abort: every rank, also under --enable-recovery).
  [[noreturn]] void abort(int code, std::string_view reason);

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // coll: a collective schedule's send (may take the single-copy get up to coll_get_max).
  RequestImpl* isend(std::span<const std::byte> buf, int dest, int tag, uint32_t ctx, bool sync,
                     Errc& err, bool coll = false);
  // isend without a request when the message goes out at once (an eager send the driver
  // took): returns nullptr then; otherwise what isend returns. For callers that only need
  // to know when their sends are done (collective schedules). coll: as for isend.
  // Inline (with proto's try_inject): the MPI message-rate path down to the driver's send.
  [[gnu::always_inline]] RequestImpl* isend_or_inject(std::span<const std::byte> buf, int dest,
                                                      int tag, uint32_t ctx, Errc& err,
                                                      bool coll = false) {
    err = check_peer(dest, false);
    if (err == Errc::ok) err = check_tag(tag, false);
    if (err != Errc::ok) [[unlikely]]
      return failed_request(err);
    // A known-dead peer fails at once in isend, whatever its driver would still accept.
    if (peer_failed(dest)) [[unlikely]]
      return isend(buf, dest, tag, ctx, false, err);
    if (p2p_->try_inject(dest, ctx, tag, buf) == drivers::IoStatus::done) [[likely]] {
      note_work();
      return nullptr;
    }
    return isend(buf, dest, tag, ctx, false, err, coll);  // queued, rendezvous or a dead peer
  }
  // Blocking send of a message that may complete at once; no request unless it must wait.
  Errc send(std::span<const std::byte> buf, int dest, int tag, uint32_t ctx);
  // Inline: the MPI message-rate path of receives.
  [[gnu::always_inline]] RequestImpl* irecv(std::span<std::byte> buf, int src, int tag,
                                            uint32_t ctx, Errc& err) {
    err = check_peer(src, true);
    if (err == Errc::ok) err = check_tag(tag, true);
    if (err != Errc::ok) [[unlikely]]
      return failed_request(err);
    RequestImpl* r = pool_.get();
    if (begin_recv(r, buf, src, tag, ctx)) posted_.push(r->match);
    return r;
  }
  // Blocking receive without a pooled request.
  Errc recv(std::span<std::byte> buf, int src, int tag, uint32_t ctx, Status* st);
  bool iprobe(int src, int tag, uint32_t ctx, Status* st);
  // Matched probe (MPI_Mprobe): removes the earliest matching unexpected message from
  // matching and returns it (nullptr if none); only mrecv() may then receive it.
  UnexpectedMsg* mprobe(int src, int tag, uint32_t ctx, Status* st);
  RequestImpl* mrecv(UnexpectedMsg* msg, std::span<std::byte> buf);

  Errc wait(RequestImpl* r, Status* st);
  bool test(RequestImpl* r, Status* st);
  // test() of a request already seen complete: its status, the request back to the pool.
  // Inline for the MPI layer's completion of every request.
  Status reap(RequestImpl* r) {
    const Status s = r->status;
    pool_.put(r);
    drop_needless_ring();
    return s;
  }
  // A receive not yet matched: cancelled now (true). False for anything else (sends too:
  // callers that fail a collective rely on it; cancel_send is the send's).
  bool cancel(RequestImpl* r);
  // A send (MPI-3.1 §3.8.4): withdrawn now if its first packet has not left; if it waits for
  // the receiver's answer (an rts or a synchronous eager message), the receiver is asked to
  // drop it while unmatched, and the send completes later, cancelled (Status::cancelled) or
  // normally (true: cancellation under way). False when it cannot be cancelled (complete,
  // eager and out, streaming, pushed, not a send): it completes normally.
  bool cancel_send(RequestImpl* r);
  void release(RequestImpl* r);  // the user dropped the handle
  // For a collective that fails because a member died: a send that waits for its peer's
  // answer (a rendezvous whose receive the live peer cancelled when its own collective
  // failed) would wait forever. Drops the handle and stops finalize from draining it; the
  // request is freed if an answer ever comes (a pipelined send streams from a copy then). False
  // (nothing done) for any other request: those complete on their own, and the caller waits for
  // them.
  bool abandon(RequestImpl* r);
  Errc barrier();

  // Process failures (ULFM-style, docs/DESIGN.md "Peer failure"). A context's members
  // decide which failures its any-source receives see; an unregistered context (the world,
  // internal ones) has every rank. Failures are acknowledged per context: an any-source
  // receive fails while the context has a dead member it has not acknowledged.
  void set_context_members(uint32_t ctx, std::vector<int> world_ranks);
  void forget_context(uint32_t ctx);
  // Acknowledges every failure known now on `ctx`; returns how many are acknowledged.
  std::size_t ack_failures(uint32_t ctx);
  // The failed ranks in the order they were detected.
  const std::vector<int>& failed_ranks() const { return failed_order_; }
  std::size_t acked_failures(uint32_t ctx) const {
    auto it = contexts_.find(ctx);
    return it == contexts_.end() ? 0 : it->second.acked;
  }
  // Error a blocking probe ends with instead of waiting forever: peer_dead when `src` is
  // a failed rank, or any_source on a context with an unacknowledged dead member.
  Errc probe_failure(int src, uint32_t ctx) const;

  // One pass over every driver and the outbound queues; true if anything happened.
  bool progress();
  util::Backoff make_backoff() {
    return util::Backoff(spin_ns_, max_sleep_ns_, this, yield_rounds_);
  }
  // util::Sleeper: block in the driver that can (a doorbell, epoll), else sleep.
  void sleep_for(uint64_t ns) override;

  void add_progress_hook(ProgressHook* h) {
    hooks_.push_back(h);
    note_work();
  }
  void remove_progress_hook(ProgressHook* h) { std::erase(hooks_, h); }

  std::string_view driver_name(int peer) const;
  // Whether `peer` (world rank) runs on this host (the own rank included).
  bool same_host(int peer) const { return std::binary_search(local_.begin(), local_.end(), peer); }
  // The address `peer` is reached at (e.g. "ip:port"), or "" when its driver has none.
  std::string peer_address(int peer) const;
  // Statistics (engine_stats.cpp): every component's counters, registered once at start.
  const util::StatsRegistry& stats_registry() const { return stats_registry_; }
  // Layers above core (collectives) register their counters here once per engine.
  util::StatsRegistry& stats_registry() { return stats_registry_; }
  std::string stats_report() const;  // the SLUICE_STATS=1 text
  const Config& config() const override { return config_; }
  // Blocked waits: poll this long before yielding/sleeping, sleep at most this long
  // (SPIN_TIME / BACKOFF_MAX as adjusted at start-up, e.g. for oversubscription).
  uint64_t spin_ns() const { return spin_ns_; }
  uint64_t max_sleep_ns() const { return max_sleep_ns_; }
  // Changes both at run time (MPI_T control variables); waits started later use them.
  void set_wait_times(uint64_t spin_ns, uint64_t max_sleep_ns) {
    spin_ns_ = spin_ns;
    max_sleep_ns_ = max_sleep_ns < 1000 ? 1000 : max_sleep_ns;
  }
  const proto::PointToPoint& p2p() const { return *p2p_; }
  proto::PointToPoint& p2p() { return *p2p_; }
  // The one-sided protocol (core/rma_glue.hpp), made and attached on first use; nullptr
  // until then. Lives as long as the engine (the demux keeps pointing at it).
  RmaGlue& rma();
  RmaGlue* rma_if_open() const { return rma_.get(); }
  // Large copies to and from co-located ranks' shared memory by two cores (core/rma_copy.hpp),
  // made on first use.
  CopyAssist& copy_assist();
  // MPI_Alloc_mem memory: registered now in every pinning domain of the routes and kept
  // (rendezvous buffers inside it use that registration) until release_registered(base).
  void keep_registered(std::span<const std::byte> buf);
  void release_registered(const void* base);

  // Progress thread support (core/progress). The thread runs progress() under the engine
  // lock; park_if_idle() (under the lock) tells it whether anything is in flight and, if
  // not, marks it parked: the next post of work rings work_bell().
  bool needs_progress() const;
  // Every packet the reliability layer sent is acknowledged, nothing buffered or owed.
  bool network_quiescent() const;
  bool park_if_idle(uint32_t& bell);
  std::atomic<uint32_t>& work_bell() { return work_bell_; }
  void set_in_thread_pass(bool on) { in_thread_pass_ = on; }
  // The doorbell sleep for the thread: reads no engine state (it runs without the lock),
  // only what thread_pass_done() (under the lock, after each pass) left for it.
  void thread_sleep(uint64_t ns);
  void thread_pass_done();
  // Whether thread_sleep() blocks in a driver that a peer's packet wakes (one driver besides
  // the loopback); else it is a plain sleep, and long ones would leave packets waiting.
  bool thread_sleep_wakes() const;
  const ProgressThread* progress_thread() const { return progress_thread_.get(); }
  const EngineStats& stats() const { return stats_; }

  friend class RmaGlue;  // makes and completes the requests of one-sided operations
  // proto::Upcalls
  void on_incoming(const proto::Incoming& msg) override;
  void transfer_complete(proto::Transfer& t, Errc err) override;
  void transfer_cancelled(proto::Transfer& t) override;
  bool withdraw_incoming(int src, uint32_t ctx, int32_t tag, uint64_t sender_req) override;

 private:
  // The process exits without finalize (exit(), a return from main with MPI initialized):
  // the others may be waiting for this rank in a receive or a collective and would never
  // join a finalize barrier, so nothing here waits for another rank. The connections close
  // without bye and the launcher is not told finalize: it sees the rank exit before it and
  // ends the job, or under --enable-recovery fails what involves the rank.
  void leave();
  bool finalized_ = false;
  // Matches or posts the receive `r` (irecv's and recv's common part).
  // blocking: recv()'s, which may take recv_slot_.
  void start_recv(RequestImpl* r, std::span<std::byte> buf, int src, int tag, uint32_t ctx,
                  bool blocking = false);
  // start_recv up to the posting: false when r was matched (or failed) at once, true when
  // it is still to be posted (its match entry filled).
  // Inline: the posting of a receive is on the message-rate path; what is rare (a stored
  // unexpected message, a dead source) is out of line.
  [[gnu::always_inline]] bool begin_recv(RequestImpl* r, std::span<std::byte> buf, int src, int tag,
                                         uint32_t ctx) {
    proto::Transfer& t = r->xfer;
    t.role = proto::Transfer::Role::recv;
    t.buf = buf.data();
    t.len = buf.size();
    ++active_recvs_;
    note_work();
    if (!unexpected_.empty() && recv_from_unexpected(r, src, tag, ctx)) return false;
    if (!failed_order_.empty()) [[unlikely]]
      if (recv_from_dead(r, src, ctx)) return false;
    r->match.ctx = ctx;
    r->match.src = src;
    r->match.tag = tag;
    r->match.owner = r;
    r->posted = true;
    return true;
  }
  // start_recv's rare cases, out of line: a stored unexpected message matches (true, r is
  // fed), or the source is dead (true, r failed).
  bool recv_from_unexpected(RequestImpl* r, int src, int tag, uint32_t ctx);
  bool recv_from_dead(RequestImpl* r, int src, uint32_t ctx);
  RequestImpl* blocking_recv_ = nullptr;  // recv()'s request on its stack while it waits
  // recv()'s request when it was posted into an empty posted_ (then the oldest posted
  // receive: on_incoming() matches it first); nullptr otherwise.
  RequestImpl* recv_slot_ = nullptr;
  // An arrival matched the posted receive `r`: its status, then the protocol's delivery.
  void deliver_matched(RequestImpl* r, const proto::Incoming& msg);
  Errc check_peer(int peer, bool allow_any) const {
    if (allow_any && peer == any_source) return Errc::ok;
    return peer >= 0 && peer < size_ ? Errc::ok : Errc::invalid_argument;
  }
  static Errc check_tag(int tag, bool allow_any) {
    if (allow_any && tag == any_tag) return Errc::ok;
    return tag >= 0 ? Errc::ok : Errc::invalid_argument;
  }
  void complete_request(RequestImpl* r, Errc err);
  // Work that needs progress was posted: wake a parked progress thread. One load when off.
  void note_work() {
    if (thread_parked_) [[unlikely]]
      wake_parked_thread();
  }
  void wake_parked_thread();
  // A blocking call finished the work that unparked the thread: leave it parked (saves a
  // wake-up and a context switch per blocking call, e.g. per ping-pong message).
  void drop_needless_ring() {
    if (engine_lock().ring_pending()) [[unlikely]]
      keep_parked_if_idle();
  }
  void keep_parked_if_idle();
  void start_progress_thread(int local_ranks);

  Config config_;
  std::unique_ptr<BootClient> boot_;
  int rank_ = 0;
  int size_ = 1;
  std::vector<std::unique_ptr<drivers::Driver>> drivers_;
  std::unique_ptr<proto::PointToPoint> p2p_;
  // Drivers deliver packets and completions here; it routes them by protocol (p2p today).
  drivers::ProtocolDemux<proto::PointToPoint> demux_;
  PostedQueue posted_;
  UnexpectedQueue unexpected_;
  RequestPool pool_;
  EngineStats stats_;
  uint64_t spin_ns_ = 50000;
  uint64_t max_sleep_ns_ = 1000000;
  uint32_t yield_rounds_ = 0;  // 2000 (and spin 0) when local ranks outnumber CPUs
  // Statistics (engine_stats.cpp). SLUICE_STATS: "0", "1" (text) or "json".
  void register_stats();
  void report_stats() const;            // at finalize, as SLUICE_STATS and SLUICE_STATS_FILE say
  std::string stats_file_path() const;  // "" for stderr
  void check_stats_file() const;        // at start-up: its directory must take a new file
  std::string stats_mode_ = "0";
  util::StatsRegistry stats_registry_;
  ProgressThreadStats progress_stats_;  // outlives the thread, for the finalize report
  std::string progress_cpus_;
  drivers::LoopbackDriver* loopback_ = nullptr;  // drivers_[0]
  drivers::Driver* blocking_driver_ = nullptr;   // the one driver whose block() we use
  uint32_t barrier_epoch_ = 0;
  int64_t active_sends_ = 0;     // sends not yet complete (finalize drains them)
  int64_t abandoned_sends_ = 0;  // ... of which abandon() took (finalize does not wait)
  UnexpectedMsg* unexpected_list_ = nullptr;
  std::vector<ProgressHook*> hooks_;
  int64_t active_recvs_ = 0;  // receives not yet complete (the progress thread parks at 0)
  bool thread_parked_ = false;
  bool in_thread_pass_ = false;
  std::atomic<uint32_t> work_bell_{0};
  std::atomic<uint64_t> thread_timer_due_{UINT64_MAX};  // util::now_ns() of the next rel timer
  std::unique_ptr<ProgressThread> progress_thread_;
  std::unique_ptr<RmaGlue> rma_;
  std::unique_ptr<CopyAssist> copy_assist_;
  UnexpectedMsg* take_stored(MatchEntry* e);
  [[gnu::noinline]] void store_unexpected(const proto::Incoming& msg);
  UnexpectedMsg* new_unexpected();
  void recycle(UnexpectedMsg* u);
  std::vector<std::unique_ptr<UnexpectedMsg>> spare_unexpected_;
  RequestImpl* failed_request(Errc err);

  // Throws std::runtime_error("sluice: " + what): the job cannot be joined.
  [[noreturn]] static void fail(const std::string& what);
  // Driver selection per peer, the components' wire-up, routes (engine_wireup.cpp).
  void wire_up(proto::Thresholds th, const proto::RegOptions& reg);
  // SLUICE_TUNE_PROFILE: the cost model, and the staged options it sets (engine.cpp).
  void load_cost_model(proto::RegOptions& reg);
  // drivers::WireupServices (rank(), size() and config() are the public ones).
  std::span<const int> local_ranks() const override { return local_; }
  std::string job_id() const override;
  std::string job_key() const override;
  bool publish(std::string_view key, std::string_view value) override;
  bool lookup(std::string_view key, int rank, std::string& value) override;
  void peer_dead(int peer) override { dead_pending_.push_back(peer); }
  // Stacks the reliability layer on an unreliable component's rails.
  std::unique_ptr<drivers::Driver> make_reliable(
      std::vector<std::unique_ptr<drivers::Driver>> rails, const drivers::Endpoint& ep);
  void quiesce_network();
  // A driver declared `peer` dead: fail every request that waits on it.
  void fail_peer(int peer);
  // Before failing peers: poll the drivers until they have nothing more to deliver.
  void drain_drivers();
  // Inline: every send and receive asks. Nothing failed is one load and a branch.
  bool peer_failed(int peer) const {
    return !failed_order_.empty() && peer_failed_[static_cast<std::size_t>(peer)];
  }
  std::vector<int> local_;  // world ranks on this host, sorted, own included
  // The opened driver components, in SLUICE_DRIVERS order (kept for introspection and
  // finalize; their drivers are in drivers_).
  std::vector<std::unique_ptr<drivers::Endpoint>> endpoints_;
  std::vector<const drivers::Endpoint*> peer_endpoint_;  // by peer; nullptr for the own rank
  proto::reliable::ReliableChannel* rel_ = nullptr;
  // The unreliable component's driver the progress thread may block in without the lock.
  drivers::Driver* rel_blocker_ = nullptr;
  std::vector<int> dead_pending_;  // reported by drivers, failed at the next progress pass
  std::vector<bool> peer_failed_;
  std::vector<int> failed_order_;  // failed ranks, in detection order
  struct ContextFailures {
    std::vector<int> members;  // sorted world ranks; empty: every rank
    std::size_t acked = 0;     // failed_order_[0, acked) acknowledged
  };
  std::unordered_map<uint32_t, ContextFailures> contexts_;
  // A dead member of `ctx` that `ctx` has not acknowledged, or -1.
  int unacked_failure(uint32_t ctx) const;
  bool context_has(uint32_t ctx, int peer) const;
  // The launcher's failure notices (sluicerun --enable-recovery) on the bootstrap socket.
  void poll_launcher_notices();
  uint64_t last_notice_poll_ns_ = 0;
};

// The process's Engine while a Session exists, else nullptr (for tools and the MPI layer).
// Inline: every MPI call reaches the engine through here.
extern Engine* g_current_engine;  // session.cpp
inline Engine* current_engine() {
  return g_current_engine;
}
// Creates the process's one Engine over a joined job and makes it current_engine(); called
// by Session's constructor (src/api), which owns it. Throws when one is open already.
Engine* open_engine(std::unique_ptr<BootClient> boot);
// True once the process has begun to exit (exit(), or a return from main): set by an atexit
// handler registered when the first Engine opens, so it runs before the destructors of
// objects that existed before (the MPI layer's Session, a Session held in a global pointer
// set in main). A Session that is itself a static object is destroyed after it, and
// finalizes as any destructor would.
bool process_exiting();

}  // namespace sluice::detail
