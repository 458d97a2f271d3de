// Point-to-point protocols over any reliable, ordered driver: eager copy, rendezvous by
// one-sided get (single copy, when the driver can read peer memory), rendezvous by
// pipelined fragments (when it cannot, or below the get threshold), and pushed rendezvous
// (drivers that take pushes, up to push_max: the sender streams the fragments right after the rts,
// so it copies in its own call while the receiver copies out in its own — nobody waits for the
// other side to enter the library, which is what lets a nonblocking collective overlap). The
// strategy that picks one per message lives in choose(); its reasons are counted in ProtoStats.
//
// The protocol layer knows nothing of tag matching: it hands every arriving match packet
// (eager, rts) up through Upcalls::on_incoming, and the core calls deliver() once it has
// found (or later posts) the receive that matches.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "drivers/driver.hpp"
#include "mem/registration_cache.hpp"
#include "proto/cost_model.hpp"
#include "proto/reg_adaptive.hpp"
#include "proto/wire.hpp"
#include "util/stats.hpp"

namespace sluice::proto {

enum class Protocol : uint8_t { none, eager, rndv_get, rndv_pipeline, rndv_push };
const char* protocol_name(Protocol p);

// A send's state under strategy ondemand / superpipeline / pipeline, the pinning thread and
// the staging buffers (reg_pipeline.hpp).
struct RegPipe;
struct PinningThread;
struct StagingPool;

// Protocol state of one message, embedded in the core's request.
struct Transfer {
  enum class Role : uint8_t { send, recv };
  Role role = Role::send;
  Protocol protocol = Protocol::none;
  bool sync = false;    // send completes only once matched (MPI_Ssend)
  bool queued = false;  // first packet still waiting for room in the driver
  bool coll = false;    // a collective schedule's send (Thresholds::coll_get_max)
  // A send whose cancellation was asked of the receiver (cancel_send): its answer names this
  // transfer, so a completion that comes first is held (with its error) until the answer.
  enum class Cancel : uint8_t { none, asked, held };
  Cancel cancel = Cancel::none;
  uint8_t held_err = 0;  // the held completion's Errc
  int peer = -1;
  uint32_t ctx = 0;
  int32_t tag = 0;
  std::byte* buf = nullptr;  // user buffer (read-only for sends)
  std::size_t len = 0;       // buffer length (send: message size)
  uint64_t remote_id = 0;    // the other side's Transfer address
  std::size_t offset = 0;    // pipeline: bytes sent / received so far
  std::size_t length = 0;    // pipeline: bytes to move (after truncation)
  uint64_t fin_req = 0;      // get receive: the sender's id to send fin to
  uint32_t lent = 0;         // pipeline send: fragments the driver still reads (no local
                             // completion yet)
  // The buffer's registration in the route's memory domain (rendezvous only; empty for
  // eager): its remote key travels in the rts / cts.
  mem::Registration reg;
  // A pipelined send on a pinning route under strategy ondemand, superpipeline or pipeline:
  // its pinning job or staging state (reg_pipeline.cpp); null otherwise.
  RegPipe* pipe = nullptr;
  // Strategy adaptive: the arm chosen for this send (an AdaptiveArm; kNoAdaptiveArm: none),
  // its pattern, and when it started (steady clock, ns): its time is observed at completion.
  uint8_t adaptive_arm = 0xff;
  uint8_t adaptive_pattern = 0;
  int64_t adaptive_start_ns = 0;
};
inline constexpr uint8_t kNoAdaptiveArm = 0xff;

// A match packet that arrived (eager or rts), as the core stores and matches it.
struct Incoming {
  int src = -1;
  uint32_t ctx = 0;
  int32_t tag = 0;
  PacketType type = PacketType::eager;
  std::size_t size = 0;                // full message size
  std::span<const std::byte> payload;  // eager data (valid during on_incoming only)
  uint64_t sender_req = 0;             // rts
  mem::RemoteKey key;                  // rts: the sender's buffer (path get)
  uint64_t push_rx = 0;                // rts, path push: the receiver's PushRx, for deliver
  RndvPath path = RndvPath::pipeline;
  bool sync = false;
};

struct ProtoStats {
  uint64_t sent[5] = {};  // messages sent, by Protocol
  uint64_t sent_bytes[5] = {};
  uint64_t received[5] = {};       // messages delivered into a receive, by Protocol
  uint64_t pushed_unexpected = 0;  // pushed messages that arrived before their receive (stashed)
  uint64_t fragments = 0;          // pipelined data packets sent
  uint64_t driver_full = 0;        // sends that found the driver full and queued
  uint64_t get_bytes = 0;          // bytes pulled by one-sided get
  uint64_t truncated = 0;
  uint64_t gets_deferred = 0;      // gets the driver posted (completed later, not at once)
  uint64_t gets_again = 0;         // gets the driver had no room for (retried)
  uint64_t local_completions = 0;  // lent fragments the driver reported free
  uint64_t unknown_packets = 0;    // packets of a type p2p does not know: rejected
  uint64_t sync_acks = 0;          // eager synchronous messages received and acknowledged
  // Send cancellation (MPI_Cancel): sends withdrawn before their first packet left, cancel
  // requests sent, answered "withdrawn" and answered "too late"; on the receiving side,
  // messages withdrawn from the unexpected queue.
  uint64_t cancelled_local = 0;
  uint64_t cancel_requests = 0;
  uint64_t cancelled_remote = 0;
  uint64_t cancel_too_late = 0;
  uint64_t withdrawn = 0;
};

struct Thresholds {
  std::size_t eager_limit = 4096;
  std::size_t get_threshold = 32768;  // automatic: rendezvous at or above this uses get
  bool get_threshold_chosen = false;  // set by the user (else DriverCaps::get_threshold wins)
  std::size_t get_max = SIZE_MAX;     // ... and up to this size (inclusive)
  bool get_max_chosen = false;   // get_max set by the user (else DriverCaps::get_any_size wins)
  std::size_t push_max = 0;      // caps().takes_push: non-sync rendezvous up to this size is pushed
  std::size_t coll_get_max = 0;  // automatic: a collective's send uses get up to this
  enum class RndvMode : uint8_t { automatic, get, pipeline } rndv = RndvMode::automatic;
};

// How a large message on a registration-capable route (a driver whose memory domain pins:
// caps().needs_registration, today the socket driver's io_uring zero-copy) gets its registration
// (SLUICE_REG_STRATEGY). Routes whose driver pins nothing use host memory whatever this says.
enum class RegStrategy : uint8_t {
  copy,         // no registration: the driver's copy path, as for host memory
  per_message,  // "register": pinned before, unpinned after every message ([NewMadeleine]'s T_reg
                // each time)
  cache,  // through a RegistrationCache over the driver's domain (pin once, reuse, invalidate)
  // [Open-MX]'s overlapped on-demand pinning: the rendezvous request leaves first, a pinning
  // thread pins the buffer in growing chunks (through the cache), fragments whose chunk is
  // pinned go zero-copy, the others (overlap misses) by the copy path.
  ondemand,
  // [NewMadeleine]'s superpipeline: copy through N pre-registered staging buffers, chunk i of
  // C_0 q^i bytes copied while chunk i-1 is on the wire; chunk 0 during the rendezvous.
  superpipeline,
  pipeline,  // the same with a fixed chunk size (the plain copy pipeline)
  // Per send, the cheapest of cache (a registered buffer, or one registered now), ondemand,
  // superpipeline and copy by predicted cost, from the cache's hits and each one's observed
  // time ([NewMadeleine]'s future work; reg_adaptive.hpp).
  adaptive,
};
const char* reg_strategy_name(RegStrategy s);
// The strategy named `name` (as reg_strategy_name says it); false if there is none.
bool parse_reg_strategy(std::string_view name, RegStrategy& out);

// The staged (copy-through-registered-buffers) protocols' parameters.
struct StagedOptions {
  std::size_t c0 = 12 * 1024;     // superpipeline: first chunk (SLUICE_REG_SUPERPIPELINE_C0)
  double q = 1.5;                 // ... growth ratio (SLUICE_REG_SUPERPIPELINE_Q)
  std::size_t chunk = 64 * 1024;  // pipeline: fixed chunk (SLUICE_REG_PIPELINE_CHUNK)
  unsigned buffers = 3;           // staging buffers per domain (SLUICE_REG_STAGING_BUFFERS)
};

struct RegOptions {
  RegStrategy strategy = RegStrategy::cache;
  bool chosen = false;  // set explicitly (SLUICE_REG_STRATEGY), not the default
  mem::CacheOptions cache;
  StagedOptions staged;
  // [NewMadeleine]'s cost model: a sluice-tune profile (SLUICE_TUNE_PROFILE) or the built-in
  // defaults. The staged options above come from it unless set by their own keys.
  CostModel model;
  bool tuned = false;  // `model` is a profile's
  // The staged strategies send a message below its driver's model.staged_min by the copy
  // path ([NewMadeleine]: the pipelines only for large messages). Off for a benchmark that
  // times one protocol exactly (introspect::set_registration_strategy).
  bool thresholds = true;
};

// What the registration strategy did: buffers (sends and rendezvous receives) on
// registration-capable routes, by what ran for them.
struct RegStats {
  uint64_t copy = 0;        // moved by the copy path because the strategy says copy
  uint64_t registered = 0;  // registered for this message alone (strategy register)
  uint64_t cached = 0;      // registered through the cache (hit, miss or uncached fallback)
  uint64_t failed = 0;      // registration refused (no slot, RLIMIT_MEMLOCK ...): copied
  // MPI_Alloc_mem memory: registered once when allocated, kept until freed.
  uint64_t persistent_hits = 0;           // buffers found inside such memory (no registering)
  uint64_t persistent_registrations = 0;  // registrations made for it (one per region and domain)
  uint64_t persistent_regions = 0;        // regions live now
  uint64_t persistent_bytes = 0;          // their bytes
  // Strategy ondemand (sends; progress thread). The pinning thread's own counters are in
  // PinningThread (reg_pipeline.hpp).
  uint64_t ondemand = 0;            // sends pinned on demand
  uint64_t ondemand_zc_frags = 0;   // fragments sent from a chunk already pinned
  uint64_t overlap_misses = 0;      // fragments whose chunk was not pinned yet: copy path
  uint64_t overlap_miss_bytes = 0;  // their bytes
  // Strategies superpipeline and pipeline (sends).
  uint64_t staged = 0;              // sends copied through the staging buffers
  uint64_t staged_chunks = 0;       // chunks copied and sent
  uint64_t staged_early = 0;        // first chunks copied during the rendezvous round trip
  uint64_t staging_waits = 0;       // times a chunk waited for a free staging buffer
  uint64_t staged_below_min = 0;    // sends below the model's staged_min: copy path instead
  uint64_t unregistered_recvs = 0;  // rendezvous receives on those strategies (never pinned)
  // Strategy adaptive (sends): what it chose (by AdaptiveArm) and why (by AdaptiveReason).
  uint64_t adaptive[kAdaptiveArms] = {};
  uint64_t adaptive_reasons[kAdaptiveReasons] = {};
  uint64_t adaptive_found = 0;   // sends whose buffer the cache held already (its hit rate)
  uint64_t adaptive_missed = 0;  // ... and did not
};

class Upcalls {
 public:
  virtual void on_incoming(const Incoming& msg) = 0;
  virtual void transfer_complete(Transfer& t, Errc err) = 0;
  // A send withdrawn by cancel_send: the receiver never sees it.
  virtual void transfer_cancelled(Transfer& t) { transfer_complete(t, Errc::cancelled); }
  // The sender `src` withdraws its message `sender_req` (sent with ctx, tag): true when it
  // was still unmatched here and is now removed (no receive or probe will see it).
  virtual bool withdraw_incoming(int /*src*/, uint32_t /*ctx*/, int32_t /*tag*/,
                                 uint64_t /*sender_req*/) {
    return false;
  }

 protected:
  ~Upcalls() = default;
};

// The protocol id and first-byte range under which PointToPoint attaches to a demux.
inline constexpr drivers::ProtocolId kProtocolId = drivers::ProtocolId::p2p;

class PointToPoint final : public drivers::PacketSink {
 public:
  PointToPoint(Upcalls& up, const Thresholds& th);  // out of line: members of incomplete type

  // The registration strategy; before the routes are set (set_route makes the caches).
  void set_registration(const RegOptions& o) { reg_opts_ = o; }
  const RegOptions& registration() const { return reg_opts_; }
  // One line for `sluice-info --protocols`: the strategy, why, and the caches' state.
  std::string registration_summary() const;
  // Strategy adaptive's models and what each selector learnt (part of the summary above).
  std::string adaptive_summary() const;
  // Routes: which driver serves each world rank.
  void set_route(int peer, drivers::Driver* d);
  ~PointToPoint();
  drivers::Driver* route(int peer) const { return routes_[static_cast<std::size_t>(peer)]; }

  // Which protocol a message of `size` bytes to `peer` uses.
  Protocol choose(int peer, std::size_t size) const;
  // Where automatic rendezvous switches to get on a route with these caps.
  std::size_t get_threshold(const drivers::DriverCaps& caps) const {
    return caps.get_threshold != 0 && !th_.get_threshold_chosen ? caps.get_threshold
                                                                : th_.get_threshold;
  }
  // Which of the cost model's protocols the registration strategy runs for such a message
  // (copy on a route that registers nothing), and why (reg_pipeline.cpp).
  CostProtocol planned(int peer, std::size_t size, std::string& why) const;

  // Start a send. Completion comes through Upcalls::transfer_complete (possibly at once,
  // from inside this call, for an eager message that found room).
  void start_send(Transfer& t);
  // An eager, non-synchronous send done now or not at all: done when the driver took it
  // (nothing to complete later), again when it must go through start_send (not eager,
  // sends to the peer already waiting, or no room), failed when the peer is dead. Takes
  // no Transfer: the fastest path builds no protocol state (no registration) at all.
  // Inline: the message-rate path.
  drivers::IoStatus try_inject(int peer, uint32_t ctx, int32_t tag,
                               std::span<const std::byte> buf) {
    drivers::Driver* d = route(peer);
    if (buf.size() > std::min(th_.eager_limit, d->caps().inline_payload))
      return drivers::IoStatus::again;  // choose(): not eager
    if (!queues_[static_cast<std::size_t>(peer)].waiting.empty()) return drivers::IoStatus::again;
    const MatchHeader h{PacketType::eager, 0, 0, ctx, tag, static_cast<uint32_t>(buf.size())};
    const drivers::IoStatus s =
        d->send(peer, {reinterpret_cast<const std::byte*>(&h), sizeof h}, buf);
    if (s == drivers::IoStatus::done) {
      ++stats_.sent[static_cast<int>(Protocol::eager)];
      stats_.sent_bytes[static_cast<int>(Protocol::eager)] += buf.size();
    }
    return s;
  }
  // Cancellation of a started send (MPI_Cancel, MPI-3.1 §3.8.4).
  enum class CancelOutcome : uint8_t {
    cancelled,  // withdrawn here (its first packet had not left): complete, cancelled
    asked,      // the receiver decides (an unanswered rts or eager_sync): completes later,
                // cancelled or normally
    too_late,   // out and not withdrawable (eager, pushed, streaming): completes normally
  };
  CancelOutcome cancel_send(Transfer& t);
  // Feed a matched receive with the message it matched.
  void deliver(Transfer& recv, const Incoming& msg);

  // Retry what the drivers had no room for; true if anything moved.
  bool progress_outbound();
  bool has_outbound() const { return !active_peers_.empty(); }
  // The driver declared `peer` unreachable: complete its queued sends with peer_dead.
  void fail_peer(int peer);

  // PacketSink
  void on_packet(int src, std::span<const std::byte> header,
                 std::span<const std::byte> payload) override;
  drivers::Placement placement(int src, std::span<const std::byte> header,
                               std::size_t payload_size) override;
  // A posted get finished (its receive completes) or a lent fragment is free again.
  void on_completion(drivers::CompletionToken token, Errc status) override;

  // Registers `buf` once in every pinning domain of the routes and keeps it (MPI_Alloc_mem):
  // rendezvous buffers inside it use that registration, under any strategy but copy.
  // Returns how many domains registered it (0: no route pins, nothing to do).
  std::size_t register_persistent(std::span<const std::byte> buf);
  // Releases what register_persistent(buf starting at `base`) made; false if unknown.
  bool release_persistent(const void* base);

  const ProtoStats& stats() const { return stats_; }
  const RegStats& reg_stats() const { return reg_stats_; }
  // Registers the counters above and the thresholds as component "p2p" (p2p_stats.cpp).
  void register_stats(util::StatsRegistry& reg) const;
  const Thresholds& thresholds() const { return th_; }

 private:
  struct Control {  // a small protocol packet that found no room
    std::byte bytes[sizeof(CtsHeader)];
    uint8_t len;
  };
  // A pushed message on the receiving side, from its rts until a receive has all of it.
  // Heap-allocated: its address travels in Incoming::push_rx through the core's
  // unexpected queue back to deliver().
  struct PushRx {
    int src = -1;
    uint64_t sender_id = 0;
    std::size_t size = 0;                // message size
    std::size_t received = 0;            // bytes arrived so far
    Transfer* target = nullptr;          // the matched receive, or null while unexpected
    std::unique_ptr<std::byte[]> stash;  // arrived bytes while unexpected
    std::size_t stash_cap = 0;
    bool failed = false;  // the sender died before the last fragment
  };
  struct PendingGet {  // a get the driver had no room for
    Transfer* recv;
    mem::RemoteKey key;
  };
  struct PeerQueue {
    std::deque<Control> control;
    std::deque<PendingGet> gets;
    std::deque<Transfer*> waiting;    // sends whose first packet is not out yet (in order)
    std::deque<Transfer*> streaming;  // pipelined sends with fragments left
    bool active = false;
  };

  drivers::IoStatus send_first_packet(Transfer& t);
  void complete(Transfer& t, Errc err) {
    if (t.cancel != Transfer::Cancel::none) [[unlikely]]
      if (hold_for_cancel(t, err)) return;
    if (t.adaptive_arm != kNoAdaptiveArm) adaptive_done(t, err);
    if (t.pipe) end_pipe(t);
    t.reg.reset();  // a pinning domain unpins here, not when the request is reused
    up_.transfer_complete(t, err);
  }
  // A completion of a send whose cancel request is unanswered: held (true) until the answer.
  bool hold_for_cancel(Transfer& t, Errc err);
  void on_cancel_answer(uint64_t sender_req, bool withdrawn);
  void finish_cancelled(Transfer& t);  // releases what the send holds, then the upcall
  Protocol pull_protocol(const drivers::DriverCaps& caps, std::size_t size) const;
  void send_control(int peer, const void* hdr, std::size_t len);
  bool push_fragments(Transfer& t);  // true when every fragment is out
  void mark_active(int peer);
  // After the first packet of t went out: pushed rendezvous streams its fragments now.
  void first_packet_sent(Transfer& t);
  void on_push_data(int src, uint64_t sender_id, std::size_t offset,
                    std::span<const std::byte> payload);
  void finish_push(PushRx* p);  // every byte arrived and a receive has it: complete, free
  // Posts the get of a matched rendezvous-by-get receive; false when the driver said again.
  bool start_get(Transfer& r, const mem::RemoteKey& key);
  void finish_get(Transfer& r, Errc err);  // data in place (or failed): fin, complete
  // r.buf registered in the route's memory domain (a host handle when it pins nothing).
  Errc register_buffer(Transfer& t);
  // The pinning route's half of register_buffer: the strategy decides (large messages only).
  Errc register_pinned(drivers::Driver& d, std::span<const std::byte> buf, mem::Registration& out,
                       RegStrategy s);
  // Strategy adaptive's register_buffer (a pinning route): asks the selector of the route's
  // domain, runs the arm it chose, and notes the send's start.
  Errc register_adaptive(Transfer& t, drivers::Driver& d, std::span<const std::byte> buf);
  // A send under adaptive completed: its time goes to the selector.
  void adaptive_done(Transfer& t, Errc err);
  AdaptiveDomain& adaptive_for(drivers::Driver& d);
  mem::RegistrationCache* cache_for(mem::Domain& domain);
  // Whether `buf` lies inside MPI_Alloc_mem memory (registered once: every strategy uses that).
  bool in_persistent(std::span<const std::byte> buf) const;
  // Strategies ondemand, superpipeline and pipeline (reg_pipeline.cpp).
  bool pipe_strategy() const {
    return reg_opts_.strategy == RegStrategy::ondemand ||
           reg_opts_.strategy == RegStrategy::superpipeline ||
           reg_opts_.strategy == RegStrategy::pipeline;
  }
  // register_buffer of such a send (`s`: one of them): no pinning now.
  void begin_pipe(Transfer& t, RegStrategy s);
  void pipe_rts_sent(Transfer& t);  // the rts is out: start pinning / copy chunk 0
  bool push_piped(Transfer& t);     // push_fragments for such a send
  bool push_ondemand(Transfer& t);
  bool push_staged(Transfer& t);
  void on_staging_completion(uint64_t token_id, Errc status);
  void end_pipe(Transfer& t);
  StagingPool* staging_for(drivers::Driver& d);
  // Stash buffers are recycled: a fresh 64 KiB-1 MiB allocation per unexpected message
  // costs page faults (the heap trims, large blocks are mmapped) each time.
  void take_stash(PushRx* p);
  void give_back_stash(PushRx* p);

  Upcalls& up_;
  Thresholds th_;
  std::vector<drivers::Driver*> routes_;
  std::vector<PeerQueue> queues_;
  std::vector<int> active_peers_;
  std::vector<bool> push_ok_;    // by peer: its route takes pushed rendezvous (caps)
  std::vector<PushRx*> pushes_;  // receiving side, owned; few (one per message in flight)
  std::vector<std::pair<std::size_t, std::unique_ptr<std::byte[]>>> spare_stash_;
  ProtoStats stats_;
  RegOptions reg_opts_;
  RegStats reg_stats_;
  // One cache per pinning domain (a driver's), made by set_route under strategy cache.
  std::vector<std::pair<mem::Domain*, std::unique_ptr<mem::RegistrationCache>>> caches_;
  struct Persistent {
    uintptr_t end = 0;
    std::vector<std::pair<mem::Domain*, mem::Registration>> regs;  // one per pinning domain
  };
  std::map<uintptr_t, Persistent> persistent_;         // by start address (MPI_Alloc_mem memory)
  std::unique_ptr<PinningThread> pinner_;              // strategy ondemand, started at first use
  std::vector<std::unique_ptr<StagingPool>> staging_;  // one per pinning domain
  // Strategy adaptive: a cost model and a selector per pinning domain.
  std::vector<std::pair<mem::Domain*, std::unique_ptr<AdaptiveDomain>>> adaptive_;
};

}  // namespace sluice::proto
