// The one-sided protocol: puts, gets, remote atomics and active messages between ranks.
//
// Paths, decided per operation from the route's caps:
//   one-sided  put / get through the driver's post_put / post_get when it can reach the
//              target's memory itself (caps rdma_put / rdma_get: CMA on shared memory, a
//              memcpy to the own rank). The target runs nothing.
//   emulated   otherwise (socket drivers, shared memory without CMA): the op travels as
//              packets that the target's engine carries out in its progress pass (put
//              fragments then an ack; a get request answered by reply fragments). With a
//              progress thread the target application calls nothing.
//   atomics    always executed by the target's engine, whatever the driver: CMA cannot do
//              an atomic read-modify-write, and user memory is not in a shared segment, so
//              one executor (the target's engine, serialized by its lock) is what makes
//              atomics from every rank atomic with respect to each other.
//   active messages  always packets; the handler runs in the target's progress pass.
//
//   firehose   (when enabled) a put or get on the packet path whose size reaches the
//              threshold goes through Firehose ([GASNet-Firehose], mem/firehose.hpp): the
//              target pins buckets of its memory for the origin under a bounded budget. A
//              hit (every bucket already mapped) goes out as is, with no handshake and no
//              registration at the target, which checks the mapping and writes (the
//              one-sided case of a pinning network); a miss sends a move request just
//              ahead of the op on the same ordered route (the op does not wait for the
//              reply). An op refused as stale (memory freed at the target) moves again, at
//              most twice; one that cannot get firehoses travels as plain packets.
//
// Target memory is named by a region id (handed out by add_region, carried in remote keys):
// the target checks every emulated access against its own table, so an unknown key or a
// range outside the region is answered with Errc::remote_access, never touched.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "drivers/driver.hpp"
#include "mem/firehose.hpp"
#include "proto/rma/wire.hpp"
#include "util/stats.hpp"

namespace sluice::proto::rma {

inline constexpr drivers::ProtocolId kProtocolId = drivers::ProtocolId::rma;
inline constexpr std::size_t kMaxAmArgs = 16;
// A medium active message is one packet of at most this (arguments included), copied into
// a buffer for its handler: bounded even where the driver's packets are not (self).
inline constexpr std::size_t kMaxMediumPacket = 64 * 1024;

// An active message the target's engine hands up (valid during the call).
struct AmArrival {
  int src = -1;
  bool reply = false;
  uint8_t handler = 0;
  AmKind kind = AmKind::short_am;
  std::span<const uint64_t> args;
  std::span<std::byte> payload;  // medium: a copy of the data; long: where it was deposited
};

class RmaUpcalls {
 public:
  // A request-based op (user != 0) finished.
  virtual void rma_complete(uint64_t user, Errc err) = 0;
  virtual void on_am(const AmArrival& am) = 0;

 protected:
  ~RmaUpcalls() = default;
};

struct RmaStats {
  uint64_t puts = 0, put_bytes = 0, gets = 0, get_bytes = 0;
  uint64_t one_sided_puts = 0, one_sided_gets = 0;  // through the driver, target idle
  uint64_t atomics = 0;
  uint64_t served_puts = 0, served_gets = 0, served_atomics = 0;  // as a target
  uint64_t am_sent = 0, am_handled = 0;
  uint64_t refused = 0;  // accesses this target refused (unknown region, out of bounds)
  uint64_t queued = 0;   // packets that found the driver full and waited
  uint64_t unknown_packets = 0;
};

// Firehose figures of the protocol (the tables keep their own: mem::FirehoseStats and
// mem::BucketStats).
// How memory the packet path writes into is pinned at the target (SLUICE_RMA_FIREHOSE).
enum class PinStrategy : uint8_t { firehose, rndv_unpin, rndv_keep, pin_all };
const char* to_string(PinStrategy s);

// The figures every strategy reports (under "pinning"), for comparing them.
struct PinProtoStats {
  uint64_t direct_ops = 0;     // eligible ops sent with no handshake (pin-all)
  uint64_t handshake_ops = 0;  // eligible ops that asked the target first (rendezvous)
  uint64_t handshakes = 0;     // pin requests sent (rendezvous)
  uint64_t handshake_replies = 0;
  uint64_t handshake_ns = 0;  // sum of request-to-reply times
  uint64_t releases = 0;      // release requests sent (rendezvous with unpin)
};

struct FirehoseProtoStats {
  uint64_t ops = 0;            // puts and gets that went through firehoses
  uint64_t fallbacks = 0;      // eligible ops sent as plain packets (no room, too many buckets)
  uint64_t stale_retries = 0;  // ops the target refused as stale, moved again
  uint64_t move_replies = 0;
  uint64_t move_ns = 0;        // sum of move round trips (request sent to reply handled)
  uint64_t refused_stale = 0;  // as the target: accesses through a firehose it does not map
  uint64_t inline_puts = 0;    // small puts sent inside their move request
  uint64_t inline_served = 0;  // as the target: such puts written
};

class RmaProtocol final : public drivers::PacketSink {
 public:
  RmaProtocol(RmaUpcalls& up, int my_rank) : up_(up), rank_(my_rank) {}
  ~RmaProtocol();
  RmaProtocol(const RmaProtocol&) = delete;
  RmaProtocol& operator=(const RmaProtocol&) = delete;

  void set_route(int peer, drivers::Driver* d);
  // false: puts and gets always travel as packets, even where the driver could reach the
  // target's memory itself (SLUICE_RMA_PATH=packets).
  void set_one_sided(bool on) { one_sided_ = on; }
  drivers::Driver* route(int peer) const { return routes_[static_cast<std::size_t>(peer)]; }

  // Turns Firehose on for puts and gets of at least `threshold` bytes on the packet path.
  // `domain` pins this rank's buckets (it must outlive the protocol); `monitor` (may be
  // null) invalidates buckets whose memory is freed. invalid_argument: bad parameters.
  Errc enable_firehose(const mem::FirehoseParams& params, std::size_t threshold,
                       mem::Domain& domain, mem::InvalidationMonitor* monitor);
  // The same, with one of the comparison strategies instead of Firehose (firehose: as
  // enable_firehose). Buckets are params.bucket_bytes.
  Errc enable_pinning(PinStrategy strategy, const mem::FirehoseParams& params,
                      std::size_t threshold, mem::Domain& domain,
                      mem::InvalidationMonitor* monitor);
  bool firehose_enabled() const { return hoses_ != nullptr; }
  bool pinning_enabled() const { return hoses_ != nullptr || pins_ != nullptr; }
  PinStrategy pin_strategy() const { return strategy_; }
  const mem::PinTable* pin_table() const { return pins_.get(); }
  const PinProtoStats& pin_stats() const { return pin_stats_; }
  const mem::FirehoseTable* firehose_table() const { return hoses_.get(); }
  const mem::BucketTable* bucket_table() const { return buckets_.get(); }

  // Target memory. Ids start at 1 and are never reused.
  uint64_t add_region(std::byte* base, std::size_t length);
  void remove_region(uint64_t id);

  // Origin operations. `user` names the request to complete (rma_complete), 0 for an
  // implicit op that only flush() waits for. Argument errors return at once (nothing
  // started); otherwise Errc::ok and the completion follows (possibly from inside the
  // call). `key` is the target's remote key.
  Errc put(int peer, std::span<const std::byte> src, const mem::RemoteKey& key, uint64_t offset,
           uint64_t user);
  Errc get(int peer, std::span<std::byte> dst, const mem::RemoteKey& key, uint64_t offset,
           uint64_t user);
  // result: where the old value goes (4 or 8 bytes, `width`); may be null.
  Errc atomic(int peer, AtomicOp op, unsigned width, const mem::RemoteKey& key, uint64_t offset,
              uint64_t operand, uint64_t compare, void* result, uint64_t user);
  // Active message; returns once `args` and `payload` may be reused. long: the payload goes
  // to `key`/`offset` at the target first.
  Errc am(int peer, bool reply, AmKind kind, uint8_t handler, std::span<const uint64_t> args,
          std::span<const std::byte> payload, const mem::RemoteKey& key, uint64_t offset);
  // The largest medium payload to `peer` with `nargs` arguments (one packet).
  std::size_t max_medium(int peer, std::size_t nargs) const;

  // Ops to `peer` (-1: any) not yet complete, and the first error of the finished implicit
  // ones since the last call (then cleared).
  uint64_t outstanding(int peer) const;
  Errc take_error(int peer);

  bool progress();  // retries what the drivers had no room for
  bool busy() const { return !out_.empty() || live_ops_ > 0; }
  void fail_peer(int peer);

  void on_packet(int src, std::span<const std::byte> header,
                 std::span<const std::byte> payload) override;
  drivers::Placement placement(int src, std::span<const std::byte> header,
                               std::size_t payload_size) override;
  void on_completion(drivers::CompletionToken token, Errc status) override;

  const RmaStats& stats() const { return stats_; }
  void register_stats(util::StatsRegistry& reg) const;

 private:
  struct Op {
    enum class Kind : uint8_t { put, get, atomic } kind = Kind::put;
    uint8_t width = 0;
    int peer = -1;
    Errc err = Errc::ok;
    uint64_t user = 0;
    std::byte* buf = nullptr;  // get: destination
    std::size_t len = 0;
    std::size_t received = 0;  // get: bytes arrived
    void* result = nullptr;    // atomic
    Op* next_free = nullptr;
    bool live = false;
    // For a reissue (a stale firehose): the source, the target's key and offset.
    const std::byte* src = nullptr;
    mem::RemoteKey key;
    uint64_t offset = 0;
    bool fh = false;           // holds firehose references on its range
    bool rndv = false;         // the target pinned its buckets (rendezvous)
    uint8_t attempts = 0;      // firehose attempts so far
    Errc move_err = Errc::ok;  // the target refused the move this op sent
  };
  struct Region {
    std::byte* base;
    std::size_t length;
  };
  // A packet (or a run of fragments) waiting for room in the driver.
  struct Pending {
    int peer = -1;
    uint8_t hlen = 0;
    std::byte hdr[kMaxHeader];
    std::vector<std::byte> owned;     // a copied payload
    const std::byte* data = nullptr;  // stream: fragments of data[done, len), not owned
    std::size_t len = 0, done = 0, frag = 0;
    uint8_t last_flags = 0;  // stream: added to the final fragment's flags
    bool stream = false;
    bool started = false;  // stream: a fragment went out (a zero-length one still sends one)
  };

  Op* new_op(Op::Kind kind, int peer, uint64_t user);
  void finish(Op* op, Errc err);
  static uint64_t id_of(const Op* op) { return reinterpret_cast<uint64_t>(op); }
  Op* op_of(uint64_t id) const;  // nullptr unless a live op of ours
  const Region* region(uint64_t id, uint64_t offset, std::size_t n) const;
  Errc io_error(int peer) const;

  // Sends now or queues behind what waits (per-driver order is kept by one FIFO).
  // false: the driver failed it (the peer is unreachable).
  bool send(int peer, const void* hdr, std::size_t hlen, std::span<const std::byte> payload);
  // Fragments of `data` at max_packet, each with `hdr` (a DataHeader) whose offset advances
  // from its initial value; the last one gets `last_flags`. Not copied: `data` must stay
  // valid until sent (put sources until the op completes; target regions; copy otherwise).
  bool send_stream(int peer, const DataHeader& hdr, std::span<const std::byte> data,
                   uint8_t last_flags, bool copy);
  drivers::IoStatus send_fragment(Pending& p);
  std::size_t fragment_size(int peer) const;

  void on_put(int src, const DataHeader& h, std::span<const std::byte> payload);
  void on_get_req(int src, const GetHeader& h);
  void on_get_reply(const DataHeader& h, std::span<const std::byte> payload);
  void on_atomic(int src, const AtomicHeader& h);
  void on_am(int src, const AmHeader& h, std::span<const std::byte> payload);
  void on_move(int src, const MoveHeader& h, std::span<const std::byte> payload);
  void on_move_reply(int src, const MoveHeader& h, std::span<const std::byte> payload);

  void issue_put(Op* op);
  void issue_get(Op* op);
  // Takes firehoses for `op` (sending the move a miss needs). plain: none taken (plain
  // packets); through: send the op flagged; inlined: a small put went inside the move.
  enum class FhPath : uint8_t { plain, through, inlined };
  FhPath firehose_acquire(Op* op);
  // The target refused `op` as stale: moves again, falls back or fails it.
  void firehose_retry(Op* op);
  bool firehose_wanted(const Op* op) const;
  // Rendezvous: asks the target to pin the op's buckets; its data follows the reply. False:
  // too many buckets for one packet (plain packets then).
  bool rndv_request(Op* op);
  void rndv_release(Op* op);
  // The buckets [addr, addr + len) touches.
  void buckets_of(uint64_t addr, std::size_t len, std::vector<uint64_t>& out) const;
  // The target's side of a pin request: `pins` (bucket addresses) clamped to the pages of
  // `region` into fh_pins_; remote_access if a bucket is outside it.
  Errc clamp_pins(uint64_t region, std::span<const uint64_t> pins);
  void on_rndv_pin(int src, const MoveHeader& h, std::span<const std::byte> payload);
  void on_rndv_pin_reply(const MoveHeader& h);
  void on_rndv_release(const MoveHeader& h, std::span<const std::byte> payload);
  // Whether the target side lets `src` touch [addr, addr + n) through its firehoses.
  bool firehose_mapped(int src, const std::byte* addr, std::size_t n);

  RmaUpcalls& up_;
  int rank_;
  bool one_sided_ = true;
  std::vector<drivers::Driver*> routes_;
  std::unordered_map<uint64_t, Region> regions_;
  uint64_t next_region_ = 1;
  std::vector<std::unique_ptr<Op[]>> chunks_;
  Op* free_ = nullptr;
  uint64_t live_ops_ = 0;
  std::vector<uint64_t> outstanding_;  // by peer
  std::vector<Errc> errors_;           // by peer: first error of an implicit op
  std::deque<Pending> out_;
  std::vector<std::byte> am_buf_;      // medium payloads copied for the handler
  std::vector<std::byte> am_scratch_;  // an outgoing am's arguments and data, contiguous
  RmaStats stats_;

  std::unique_ptr<mem::FirehoseTable> hoses_;  // origin side
  std::unique_ptr<mem::BucketTable> buckets_;  // target side
  std::unique_ptr<mem::PinTable> pins_;        // the comparison strategies' target side
  PinStrategy strategy_ = PinStrategy::firehose;
  mem::FirehoseParams fh_params_;
  PinProtoStats pin_stats_;
  std::size_t fh_threshold_ = 0;
  std::vector<uint64_t> fh_release_, fh_pin_;
  std::vector<mem::BucketTable::Pin> fh_pins_;
  std::vector<uint64_t> fh_payload_;
  std::vector<std::byte> fh_bytes_;  // a move with an inline put
  FirehoseProtoStats fh_stats_;
};

}  // namespace sluice::proto::rma
