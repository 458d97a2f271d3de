// The driver contract (v2): a driver moves opaque packets between processes, reads and
// writes a peer's registered memory when it can (one-sided get / put), and tells the
// protocol when an operation it accepted has finished. It never parses protocol headers
// beyond the first byte's routing done by ProtocolDemux.
//
// A packet is a (header, payload) pair. The driver keeps the split: the receiver's sink
// gets exactly the header bytes the sender gave, and the payload separately, so a
// protocol can send a fragment of user data without first gluing it to its header.
//
// Completions. An operation that cannot finish inside the call (a one-sided get a NIC or
// io_uring carries out, a send whose payload the driver keeps reading: io_uring SEND_ZC,
// RDMA, the reliability layer's resends) returns IoStatus::posted; the driver later
// reports it exactly once through PacketSink::on_completion from inside a poll(), with the
// CompletionToken the protocol gave. An operation that finished at once returns done and
// is never reported (shm CMA and self complete gets at once: no completion object, no
// allocation, no extra call).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "mem/registration.hpp"
#include "util/errc.hpp"

namespace sluice::util {
class StatsRegistry;  // util/stats.hpp
}

namespace sluice::drivers {

struct DriverCaps {
  std::size_t max_header = 0;      // largest header a packet may carry
  std::size_t max_packet = 0;      // largest payload in one packet
  std::size_t inline_payload = 0;  // payload bytes that travel with the header in one slot
  bool reliable = false;           // packets are never lost, duplicated or corrupted
  bool ordered = false;            // packets to one peer arrive in the order sent
  bool rdma_get = false;           // post_get() reads remote memory without the peer's help
  bool rdma_put = false;           // post_put() writes remote memory without the peer's help
  // Memory must be registered in memory_domain() before a driver may move it zero-copy
  // (get/put buffers, tracked sends). False for host-memory drivers (self, shm, tcp, udp).
  bool needs_registration = false;
  // send_tracked() may keep reading the payload after it returns (IoStatus::posted) and
  // reports the buffer free through a local completion (the reliability layer: when the
  // peer acknowledged the packet; io_uring SEND_ZC: on the notification). Without it,
  // send_tracked() is send(): the payload is copied or on the wire when it returns.
  bool lends_payload = false;
  // Pipelined fragments go out at max_packet from the first one, without the protocol's
  // small-first ramp: a byte-stream driver that receives large payloads in place (tcp) copies
  // them out as the kernel hands them over, so a small first fragment only costs one more
  // frame and syscall on each side (and its staging copy).
  bool whole_fragments = false;
  // A rendezvous may be pushed (fragments sent right after the request, unasked): they wait
  // in receiver-side buffers the sender may fill (shm bulk slots). On a socket driver they
  // would sit in kernel buffers, which the socket protocols do not expect.
  bool takes_push = false;
  // A get costs neither CPU a copy (a NIC or a libfabric provider reads on the peer's
  // behalf): rendezvous by get at every size from the get threshold; RNDV_GET_MAX, the size
  // where one CMA copy loses to the two-core pipeline, applies only when the user set it.
  bool get_any_size = false;
  // The smallest rendezvous the driver wants moved by get, 0: the protocol's
  // (SLUICE_RNDV_GET_THRESHOLD). A driver whose get is one local copy while its pipeline
  // costs three (ofi over shm) asks for get from its eager limit up; the user's
  // SLUICE_RNDV_GET_THRESHOLD still wins.
  std::size_t get_threshold = 0;
  // block() cannot sleep (no wait object: ofi over shm): a blocked rank naps instead, and a
  // nap cannot be cut short by an arrival. The engine then spins up to SLUICE_BACKOFF_MAX
  // before napping (unless SLUICE_SPIN_TIME is set or ranks outnumber CPUs).
  bool naps = false;
};

enum class IoStatus {
  done,    // finished: the packet is on its way / the data moved; buffers may be reused
  again,   // no room right now (ring, slots or queue full): retry after progress
  failed,  // the peer is unreachable (or the operation is not supported / out of bounds)
  posted,  // accepted, not finished: a completion with the caller's token follows
};

// Which protocol a packet or completion belongs to. The first header byte of every packet
// is a type from its protocol's range (ProtocolDemux routes by it).
enum class ProtocolId : uint8_t { none = 0, p2p = 1, rma = 2, am = 3 };
// First-byte ranges by protocol: p2p [0x01, 0x3f], rma [0x40, 0x7f], am [0x80, 0xbf];
// 0x00 and [0xc0, 0xff] are reserved (a packet starting with them is rejected).
struct TypeRange {
  uint8_t first, last;
};
inline constexpr TypeRange kP2pTypes{0x01, 0x3f};
inline constexpr TypeRange kRmaTypes{0x40, 0x7f};
inline constexpr TypeRange kAmTypes{0x80, 0xbf};

// Names a posted operation to its protocol: `id` is the protocol's (a request address),
// `protocol` routes the completion. Carried verbatim by the driver.
struct CompletionToken {
  uint64_t id = 0;
  ProtocolId protocol = ProtocolId::none;
};

// One packet of a send_batch().
struct PacketRef {
  std::span<const std::byte> header;
  std::span<const std::byte> payload;
};

// Where a packet's payload should land (PacketSink::placement): `bytes`, and the
// registration of them in the driver's memory_domain() when the receiver has one (a
// rendezvous destination registered under the registration strategy), else null. A driver
// that receives into registered memory reads the payload into that registration (tcp:
// io_uring READ_FIXED on the fixed buffer); the others, or without one, receive into
// `bytes` as plain memory. The receiver's handle keeps `reg` alive until on_packet for this
// packet returns (a driver reading over several polls need not hold a count on it).
struct Placement {
  std::span<std::byte> bytes;
  const mem::Registration* reg = nullptr;
};

// Receives the packets and completions a driver polls in.
class PacketSink {
 public:
  virtual void on_packet(int src, std::span<const std::byte> header,
                         std::span<const std::byte> payload) = 0;
  // Where the payload of a packet with this header should land, if the receiver already
  // knows (a rendezvous fragment: its place in the user's buffer); empty bytes for no
  // preference. A driver that can receive straight into memory (tcp, udp) may ask before
  // the payload arrives and then calls on_packet with `payload` being exactly those bytes.
  virtual Placement placement(int src, std::span<const std::byte> header,
                              std::size_t payload_size) {
    return {};
  }
  // A posted operation (get, put, tracked send) finished: ok, or the error that ended it
  // (peer_dead when the peer was lost first). Reported once, from inside poll().
  virtual void on_completion(CompletionToken token, Errc status) {}

 protected:
  ~PacketSink() = default;
};

class Driver {
 public:
  virtual ~Driver() = default;
  virtual std::string_view name() const = 0;
  virtual const DriverCaps& caps() const = 0;
  // Whether this driver can reach `peer` (world rank).
  virtual bool reaches(int peer) const = 0;
  // Where get/put/tracked-send buffers are registered. Host memory unless the driver
  // says otherwise (caps().needs_registration).
  virtual mem::Domain& memory_domain() { return mem::host_domain(); }

  // Returns done, again or failed (never posted): on done the buffers may be reused.
  virtual IoStatus send(int peer, std::span<const std::byte> header,
                        std::span<const std::byte> payload) = 0;
  // Like send(), but with caps().lends_payload the driver may keep reading `payload` (in
  // `reg`, registered in memory_domain()) after returning posted, until it reports
  // on_completion(token): the local send completion. The header is always copied.
  virtual IoStatus send_tracked(int peer, std::span<const std::byte> header,
                                std::span<const std::byte> payload, const mem::Registration& reg,
                                CompletionToken token) {
    return send(peer, header, payload);
  }
  // Whether send_tracked() of a `bytes` payload to `peer` would lend it (zero-copy) now,
  // rather than copy it as send() does. A layer that batches copied packets (the reliability
  // layer's GSO runs) asks first, so a payload the driver would copy anyway keeps the batch.
  virtual bool lends(int peer, std::size_t bytes) const { return caps().lends_payload; }
  // Whether every packet between this process and `peer` arrives exactly as sent or not at
  // all: a route that moves packets memory to memory (a loopback address), on which the
  // kernel checks no checksum of its own either. The reliability layer then skips its
  // payload CRC32C for copied payloads to that peer (as the kernel skips UDP's and TCP's
  // checksums on loopback). A driver that may damage packets (fault injection) says no.
  virtual bool intact(int peer) const { return false; }
  // Sends `packets` to `peer` in order, each as send() would (the buffers may be reused on
  // return); `sent` tells how many went out, a prefix. Returns done when all did, else the
  // status of the first that did not. A driver may coalesce them (udp: one GSO sendmsg).
  virtual IoStatus send_batch(int peer, std::span<const PacketRef> packets, std::size_t& sent) {
    for (sent = 0; sent < packets.size(); ++sent) {
      const IoStatus s = send(peer, packets[sent].header, packets[sent].payload);
      if (s != IoStatus::done) return s;
    }
    return IoStatus::done;
  }
  // Deliver up to `budget` arrived packets, and the completions that are ready, to `sink`;
  // returns how many packets and completions.
  virtual int poll(PacketSink& sink, int budget) = 0;

  // One-sided read of `local.size()` bytes at `offset` into the peer's memory that `remote`
  // describes, into `local` (inside `local_reg`). done: the bytes are in `local`; posted: a
  // completion with `token` follows; again: retry after progress; failed: unreachable peer,
  // unsupported (caps().rdma_get false) or outside `remote`.
  virtual IoStatus post_get(int peer, std::span<std::byte> local,
                            const mem::Registration& local_reg, const mem::RemoteKey& remote,
                            uint64_t offset, CompletionToken token) {
    return IoStatus::failed;
  }
  // One-sided write of `local` to `offset` in the peer's memory `remote` describes; as
  // post_get (caps().rdma_put). done/completion: `local` may be reused and the bytes are
  // in the peer's memory.
  virtual IoStatus post_put(int peer, std::span<const std::byte> local,
                            const mem::Registration& local_reg, const mem::RemoteKey& remote,
                            uint64_t offset, CompletionToken token) {
    return IoStatus::failed;
  }
  // Sleep until a peer hands us work or `timeout_ns` passes. Returns false if this driver
  // cannot block (the caller then sleeps for a while instead).
  virtual bool block(std::uint64_t timeout_ns) { return false; }
  // Registers the driver's counters (util/stats.hpp) under `component` (its name, or a
  // name its stacking layer gives it). Pointers to members: the driver outlives them.
  virtual void register_stats(util::StatsRegistry& reg, std::string_view component) const {}
};

// Routes packets by their first header byte and completions by their token to the sink of
// the protocol that owns them. A packet no protocol claims (an unknown type, an empty
// header) is counted and rejected, never handed to a protocol that would misparse it.
//
// `Fast` (a final sink class, attached with attach_fast) is the hot protocol: its range is
// tested first and its handler called directly, not through a second virtual call (the
// demux would otherwise cost every small message ~2 ns: 8 B message rate -5 % on shm).
//
// Drivers are polled with entry(): while the fast protocol is the only one attached, that
// is the protocol itself, which then rejects and counts every packet outside its types
// (an empty header too) and is the only one that posts operations, so nothing needs
// routing and a packet costs no demux call at all (13 instructions and a call less per
// shm 8 B message). Attaching a second protocol makes entry() the demux.
template <class Fast = void>
class ProtocolDemux final : public PacketSink {
  using FastSink = std::conditional_t<std::is_void_v<Fast>, PacketSink, Fast>;

 public:
  ProtocolDemux() = default;
  ProtocolDemux(const ProtocolDemux&) = delete;  // entry_ may point at *this
  ProtocolDemux& operator=(const ProtocolDemux&) = delete;

  void attach_fast(ProtocolId protocol, TypeRange types,
                   FastSink& sink) requires(!std::is_void_v<Fast>) {
    fast_ = &sink;
    fast_types_ = types;
    attach(protocol, types, sink);
  }
  // `sink` receives packets whose first byte is in `types` and completions for `protocol`.
  void attach(ProtocolId protocol, TypeRange types, PacketSink& sink) {
    for (unsigned t = types.first; t <= types.last; ++t) by_type_[t] = &sink;
    PacketSink*& slot = by_protocol_[static_cast<uint8_t>(protocol)];
    if (!slot) ++protocols_;
    slot = &sink;
    entry_ = fast_ && protocols_ == 1 ? static_cast<PacketSink*>(fast_) : this;
  }
  // The sink to poll drivers with (see above).
  PacketSink& entry() { return *entry_; }
  void on_packet(int src, std::span<const std::byte> header,
                 std::span<const std::byte> payload) override {
    if constexpr (!std::is_void_v<Fast>) {
      if (fast_ && !header.empty() && static_cast<uint8_t>(header[0]) >= fast_types_.first &&
          static_cast<uint8_t>(header[0]) <= fast_types_.last)
        return fast_->Fast::on_packet(src, header, payload);
    }
    PacketSink* s = header.empty() ? nullptr : by_type_[static_cast<uint8_t>(header[0])];
    if (!s) {
      ++rejected_;
      return;
    }
    s->on_packet(src, header, payload);
  }
  Placement placement(int src, std::span<const std::byte> header,
                      std::size_t payload_size) override {
    PacketSink* s = header.empty() ? nullptr : by_type_[static_cast<uint8_t>(header[0])];
    return s ? s->placement(src, header, payload_size) : Placement{};
  }
  void on_completion(CompletionToken token, Errc status) override {
    PacketSink* s = by_protocol_[static_cast<uint8_t>(token.protocol)];
    if (!s) {
      ++rejected_completions_;
      return;
    }
    s->on_completion(token, status);
  }
  // Packets that no protocol claimed (dropped after counting).
  uint64_t rejected() const { return rejected_; }
  uint64_t rejected_completions() const { return rejected_completions_; }

 private:
  FastSink* fast_ = nullptr;
  PacketSink* entry_ = this;
  int protocols_ = 0;  // protocols attached
  TypeRange fast_types_{1, 0};
  std::array<PacketSink*, 256> by_type_{};
  std::array<PacketSink*, 256> by_protocol_{};
  uint64_t rejected_ = 0;
  uint64_t rejected_completions_ = 0;
};

}  // namespace sluice::drivers
