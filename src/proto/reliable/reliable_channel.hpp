// ReliableChannel: a Driver that wraps an unreliable Driver (datagram sockets, libfabric
// DGRAM, a loss injector) and presents a reliable, ordered one (caps().reliable = ordered = true),
// so the protocols above (proto/p2p) run over it unchanged. Named "<inner>+rel".
//
// Per peer: sequence numbers, cumulative + selective acks (piggybacked, else delayed),
// RTO from measured RTT with backoff, fast retransmission and receiver NACKs on gaps,
// tail loss probes, a sliding window that bounds memory (send() returns IoStatus::again
// when it is full), duplicate suppression, in-order delivery, CRC32C, a per-job key, and
// a peer timeout that declares silent peers dead (send() then fails; dead_peers() and
// on_peer_dead tell the engine, which fails their requests with Errc::peer_dead).
//
// Multi-rail ([OpenMPI-UD]'s failover): given several inner drivers that reach the same
// peers (e.g. one datagram driver per network interface), the channel stripes packets over
// them round-robin, per peer. A rail that loses rail_fail_after packets in a row (no ack
// for anything sent over it in between) is taken out of the rotation for that peer and
// retransmissions go over the others; after rail_retry_ns one packet tries it again, and
// an ack for a packet sent over it brings it back. Sequence numbers span all rails, so
// nothing is lost or delivered twice across a switch.
//
// Usage by the engine: wrap each unreliable driver (or set of rails), route peers to the
// channel like any driver, and fail the requests of peers reported by on_peer_dead /
// dead_peers() with Errc::peer_dead. Before destroying a channel, poll until quiescent()
// (or a deadline) so the last packets and acks get out. The inner drivers should map
// transient conditions (ENOBUFS, EAGAIN) to IoStatus::again: failed means unreachable and
// declares the peer dead.
//
// The wire format and every timer are documented in proto/reliable/wire.hpp.
// Single-threaded, like every driver: the caller serialises send/poll.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "drivers/driver.hpp"
#include "proto/reliable/wire.hpp"

namespace sluice::proto::reliable {

struct ReliableConfig {
  std::uint64_t job_key = 0;                       // per-job secret carried by every packet
  std::uint32_t window = 64;                       // unacknowledged packets per peer
                                                   // (1..kMaxWindow)
  std::size_t window_bytes = 4u << 20;             // unacknowledged bytes per peer (headers +
                                                   // payloads; one packet always fits)
  std::uint64_t delayed_ack_ns = 50'000;           // ack delay when nothing rides back
  std::uint32_t ack_every = 4;                     // ack at once after this many in-order arrivals
  std::uint64_t initial_rto_ns = 5'000'000;        // before the first RTT sample
  std::uint64_t min_rto_ns = 2'000'000;            // floor: scheduling noise on shared cores
  std::uint64_t max_rto_ns = 500'000'000;          // backoff cap
  std::uint64_t peer_timeout_ns = 30'000'000'000;  // no ack progress this long -> dead
  std::uint64_t keepalive_ns = 0;                  // 0: never probe idle peers
  std::uint32_t initial_seq = 0;                   // first sequence number (both sides agree)
  std::uint32_t rail_fail_after = 8;               // losses in a row that take a rail out
  std::uint64_t rail_retry_ns = 100'000'000;       // then try it again after this long
  // Full-size data packets to one peer are held back (corked) and handed to the rail in one
  // send_batch() (datagram sockets: one GSO sendmsg) when the run is long enough, a smaller packet
  // or another peer's comes, or at the next poll / timer query; false: one send() each.
  bool cork = true;
  // Copied payloads to a peer whose every rail is intact (Driver::intact: a datagram driver to a
  // loopback address) go without their CRC32C, and such packets are accepted; false: every payload
  // carries its CRC and packets without one are refused (resent with it).
  bool trust_intact_routes = true;
  // Monotonic nanoseconds; empty means std::chrono::steady_clock. Tests pass a fake clock.
  std::function<std::uint64_t()> clock;
  // Called once per peer when it is declared dead (from inside poll or send).
  std::function<void(int peer)> on_peer_dead;
};

inline constexpr std::size_t kMaxRails = 4;
// The selective acks cover 128 seqs. Windows beyond them (1024 tried, packets past the
// sack range acked cumulatively only) gave no more bandwidth at MTU 1500 with GSO and made
// a 6-rank netns stress run crawl: a run of more than 128 lost packets is repaired one
// timeout at a time, since nothing past the sack range can prove a hole lost (fast
// retransmission needs that evidence). Capped here until the sender can repair such runs.
// Re-measured with the lagging-receiver ack fix, MTU 1500: 256 a few % more,
// 512 / 1024 less or no more; the sender is CPU-bound there, not window-bound (PERFORMANCE.md).
inline constexpr std::uint32_t kMaxWindow = kSackBits;

struct ReliableStats {
  std::uint64_t data_sent = 0;           // data packets, first transmissions
  std::uint64_t bytes_sent = 0;          // upper header + payload bytes of those
  std::uint64_t delivered = 0;           // data packets handed to the sink
  std::uint64_t retransmit_timeout = 0;  // resent because the RTO expired
  std::uint64_t retransmit_fast = 0;     // resent because a later packet was acked
  std::uint64_t tail_probes = 0;         // newest packet resent to draw an ack (tail loss)
  std::uint64_t spurious = 0;            // timeout / fast resends the peer reported as
                                         // duplicates (D-SACK): the original was only late
  std::uint64_t drained = 0;             // packets read before a resend timer fired (poll)
  std::uint64_t duplicates = 0;          // data packets already received, dropped
  std::uint64_t corrupt = 0;             // CRC mismatch, dropped
  std::uint64_t payload_unchecked = 0;   // lent packets sent without payload CRC (intact route)
  std::uint64_t unchecked_refused = 0;   // such packets over a route not intact here, dropped
  std::uint64_t bad_key = 0;             // intact packet with another job's key, dropped
  std::uint64_t malformed = 0;           // structurally invalid, dropped
  std::uint64_t beyond_window = 0;       // seq past the receive buffer, dropped
  std::uint64_t from_dead = 0;           // arrived from a peer declared dead, dropped
  std::uint64_t out_of_order = 0;        // arrivals buffered ahead of a gap
  std::uint64_t acks_piggybacked = 0;    // acks that rode on data packets
  std::uint64_t acks_standalone = 0;     // ack packets (including nacks)
  std::uint64_t nacks_sent = 0;          // ack packets flagged nack (gap re-requests)
  std::uint64_t probes_sent = 0;         // keepalive probes
  std::uint64_t window_full = 0;         // send() answered again: window full
  std::uint64_t batches = 0;             // corked runs handed to a rail in one send_batch
  std::uint64_t rtt_samples = 0;
  std::uint64_t peers_dead = 0;
  std::uint64_t rail_failovers = 0;            // a rail taken out of a peer's rotation
  std::uint64_t rail_recoveries = 0;           // and brought back
  std::uint64_t rail_packets[kMaxRails] = {};  // packets (all types) sent over each rail
};

class ReliableChannel final : public drivers::Driver {
 public:
  // Throws std::invalid_argument when the config is out of range or the inner driver's
  // headers are too small to carry a RelHeader.
  ReliableChannel(std::unique_ptr<drivers::Driver> inner, ReliableConfig config);
  // Several rails (1..kMaxRails) to the same peers.
  ReliableChannel(std::vector<std::unique_ptr<drivers::Driver>> rails, ReliableConfig config);
  ~ReliableChannel() override;
  ReliableChannel(const ReliableChannel&) = delete;
  ReliableChannel& operator=(const ReliableChannel&) = delete;

  std::string_view name() const override { return name_; }
  const drivers::DriverCaps& caps() const override { return caps_; }
  bool reaches(int peer) const override;

  drivers::IoStatus send(int peer, std::span<const std::byte> header,
                         std::span<const std::byte> payload) override;
  // No copy: the payload is resent from the caller's memory until acknowledged (caps()
  // .lends_payload) and the call returns posted; the acknowledgement (cumulative or
  // selective) is the local completion, reported with `token` from a later poll(). A peer
  // declared dead reports no completions (its requests fail through on_peer_dead).
  // Zero-copy rail (one rail whose caps say needs_registration; memory_domain() is its
  // domain): the first transmission of a payload inside a pinned `reg` is handed to the rail
  // by send_tracked, and the rail may read the pinned pages after returning (io_uring
  // SEND_ZC) until it reports that transmission released. Resends are copied from the buffer
  // as it is then (send()): the payload CRC is taken from the buffer, so pinned pages that no
  // longer back it (a stale registration) are rejected by the receiver as corrupt, and the
  // resend delivers the right bytes. The local completion needs both: the packet
  // acknowledged (by any transmission), and its zero-copy transmission released by the rail
  // (it may still sit in a queue when a resend's ack comes). Until then the memory must stay
  // valid and unchanged.
  drivers::IoStatus send_tracked(int peer, std::span<const std::byte> header,
                                 std::span<const std::byte> payload, const mem::Registration& reg,
                                 drivers::CompletionToken token) override;
  int poll(drivers::PacketSink& sink, int budget) override;
  // One-sided operations bypass the packet path: forwarded to a rail that can do them
  // (caps() reports rdma_get / rdma_put only when every rail can); its completions reach
  // the sink through poll().
  mem::Domain& memory_domain() override;
  drivers::IoStatus post_get(int peer, std::span<std::byte> local,
                             const mem::Registration& local_reg, const mem::RemoteKey& remote,
                             std::uint64_t offset, drivers::CompletionToken token) override;
  drivers::IoStatus post_put(int peer, std::span<const std::byte> local,
                             const mem::Registration& local_reg, const mem::RemoteKey& remote,
                             std::uint64_t offset, drivers::CompletionToken token) override;
  // Sleeps in the inner driver no longer than the next timer allows.
  bool block(std::uint64_t timeout_ns) override;
  void register_stats(util::StatsRegistry& reg, std::string_view component) const override;

  // Nanoseconds from now until the next timer is due (0 if overdue), or UINT64_MAX when
  // none is armed: how long a blocking wait may sleep before it must poll again.
  std::uint64_t next_timer_ns() const;

  std::vector<int> dead_peers() const { return dead_peers_; }
  bool peer_dead(int peer) const;
  // Another source (the launcher) reported `peer` dead: stop retransmitting to it and
  // drop its state, as if its timeout had expired (on_peer_dead is called too).
  void mark_dead(int peer);
  // True when nothing is unacknowledged, buffered or waiting to be acked, for any peer.
  bool quiescent() const;
  std::size_t in_flight(int peer) const;  // unacknowledged packets to `peer`
  std::uint64_t srtt_ns(int peer) const;  // smoothed RTT (0 before the first sample)
  std::uint64_t rto_ns(int peer) const;
  const ReliableStats& stats() const { return stats_; }
  drivers::Driver& inner(std::size_t rail = 0) { return *rails_.at(rail); }
  std::size_t rails() const { return rails_.size(); }
  // Whether `rail` is in `peer`'s rotation (false once taken out after losses).
  bool rail_up(int peer, std::size_t rail) const;

 private:
  // A data packet's header bytes: inline up to kInline (every header over the datagram driver's
  // default 112 B limit fits), on the heap beyond. No allocation, pool trip or zero fill
  // per packet on the sender's path. The inline bytes are left uninitialised on purpose.
  class HeaderBuf {
   public:
    static constexpr std::size_t kInline = 128;
    HeaderBuf() {}  // NOLINT: not = default, so the inline array is not zeroed
    HeaderBuf(HeaderBuf&& o) noexcept { *this = std::move(o); }
    HeaderBuf& operator=(HeaderBuf&& o) noexcept {
      if (this == &o) return *this;
      size_ = o.size_;
      if (size_ <= kInline) {
        std::copy_n(o.inline_.data(), size_, inline_.data());
      } else {
        heap_ = std::move(o.heap_);
      }
      o.size_ = 0;
      return *this;
    }
    // Sets the size; the contents are unspecified until written.
    void resize(std::size_t n) {
      size_ = n;
      if (n > kInline) heap_.resize(n);
    }
    std::byte* data() { return size_ <= kInline ? inline_.data() : heap_.data(); }
    const std::byte* data() const { return size_ <= kInline ? inline_.data() : heap_.data(); }
    std::size_t size() const { return size_; }
    operator std::span<const std::byte>() const { return {data(), size_}; }

   private:
    std::size_t size_ = 0;
    std::array<std::byte, kInline> inline_;
    std::vector<std::byte> heap_;
  };
  struct TxPacket {
    std::uint32_t seq = 0;
    HeaderBuf header;                        // RelHeader + upper header, rewritten on each send
    std::vector<std::byte> payload;          // freed once selectively acknowledged
    std::span<const std::byte> lent;         // send_tracked: the caller's payload, not a copy
    drivers::CompletionToken token;          // ... reported once acknowledged
    const mem::Registration* reg = nullptr;  // lent from a zero-copy rail's registration
    std::uint64_t zc_last = 0;               // its latest zero-copy transmission (0: none)
    std::uint64_t first_sent = 0;
    std::uint64_t last_sent = 0;
    std::uint64_t xmit_order = 0;   // per-peer transmission counter at the last send
    std::uint64_t first_order = 0;  // ... and at the first
    std::uint32_t transmissions = 0;
    std::uint8_t rail = 0;    // of the last transmission
    bool loss_noted = false;  // that transmission was already counted lost on its rail
    bool sacked = false;
    std::span<const std::byte> body() const {
      return lent.empty() ? std::span<const std::byte>(payload) : lent;
    }
    std::size_t bytes() const { return header.size() + body().size(); }
  };
  // Packets in flight to one peer, oldest first: a ring that grows on demand (up to the
  // window), so a peer we have only exchanged a message or two with costs little memory.
  class TxRing {
   public:
    bool empty() const { return count_ == 0; }
    std::size_t size() const { return count_; }
    TxPacket& operator[](std::size_t i) { return slots_[(head_ + i) & (slots_.size() - 1)]; }
    TxPacket& front() { return (*this)[0]; }
    void push_back(TxPacket&& t) {
      if (count_ == slots_.size()) grow();
      (*this)[count_] = std::move(t);
      ++count_;
    }
    void pop_front() {
      front() = TxPacket{};
      head_ = (head_ + 1) & (slots_.size() - 1);
      --count_;
    }
    void clear() {
      std::vector<TxPacket>().swap(slots_);
      head_ = count_ = 0;
    }

   private:
    void grow() {  // capacity stays a power of two
      std::vector<TxPacket> bigger(std::max<std::size_t>(4, slots_.size() * 2));
      for (std::size_t i = 0; i < count_; ++i) bigger[i] = std::move((*this)[i]);
      slots_.swap(bigger);
      head_ = 0;
    }
    std::vector<TxPacket> slots_;
    std::size_t head_ = 0, count_ = 0;
  };
  struct RxSlot {
    bool full = false;
    bool in_seq = false;  // nothing was missing before it when it arrived
    std::uint32_t seq = 0;
    std::vector<std::byte> header;  // upper header only
    std::vector<std::byte> payload;
  };
  enum class PeerState : std::uint8_t { alive, dead };
  struct RailHealth {
    std::uint32_t losses = 0;  // in a row, with no ack for this rail in between
    bool down = false;
    std::uint64_t retry_at = 0;
  };
  struct Peer {
    int rank = -1;
    PeerState state = PeerState::alive;
    // send side
    std::uint32_t next_seq = 0;  // next sequence number to assign
    std::uint32_t una = 0;       // oldest unacknowledged
    TxRing flight;               // seqs una .. next_seq-1, in order
    std::size_t flight_bytes = 0;
    std::uint64_t xmit_counter = 0;
    std::uint64_t srtt = 0, rttvar = 0, rto = 0;
    unsigned backoff = 0;
    std::uint64_t last_retransmit = 0;  // time of the latest retransmission
    // The latest timeout / fast resend, until a D-SACK shows it spurious or another follows.
    bool rtx_check = false;
    bool rtx_timeout = false;
    unsigned rtx_backoff = 0;  // backoff before that timeout
    std::uint32_t rtx_seq = 0;
    std::uint64_t probe_deadline = 0;  // tail loss probe, 0: disarmed
    bool probe_sent = false;           // one probe per ack progress
    std::uint64_t rto_deadline = 0;    // 0: disarmed
    std::uint64_t waiting_since = 0;   // last ack progress (or start of the flight)
    std::uint32_t unsent = 0;          // newest packets of the flight not yet transmitted
    // receive side
    std::uint32_t next_deliver = 0;  // next seq the sink gets
    std::vector<RxSlot> ring;        // out-of-order (and budget-deferred) arrivals; grows
                                     // on demand (power of two) up to ring_size_
    std::uint32_t buffered = 0;
    bool ack_pending = false;
    bool ack_now = false;  // send at the end of this poll
    bool nack = false;     // that ack reports a new gap
    std::uint32_t unacked_rx = 0;
    std::uint64_t ack_deadline = 0;  // 0: disarmed
    bool nacked = false;             // a nack was sent for the current cumulative point
    bool dup_pending = false;        // a duplicate arrived: report it (D-SACK) in an ack
    std::uint32_t dup_seq = 0;
    std::uint32_t nacked_at = 0;
    bool in_ack_list = false;
    bool in_ready_list = false;
    bool in_timer_list = false;
    // rails
    std::array<RailHealth, kMaxRails> rail{};
    std::uint8_t next_rail = 0;
    // liveness
    bool talked = false;  // any packet exchanged (keepalive applies)
    std::uint64_t last_heard = 0;
    std::uint64_t next_probe = 0;
  };
  class Intake;

  std::uint64_t now() const;
  Peer& peer(int rank);
  Peer* find_peer(int rank);
  const Peer* find_peer(int rank) const;
  void arm(Peer& p, std::uint64_t deadline);  // p has a timer due at `deadline`

  // Fills ack + sack from `p`'s receive state.
  void fill_ack(Peer& p, RelHeader& h) const;
  void acked_out(Peer& p);  // an ack went out to p: disarm its delayed ack
  drivers::IoStatus transmit(Peer& p, TxPacket& pkt, std::uint8_t flags, int avoid_rail = -1);
  // One transmission on `rail`: send(), or send_tracked() for a zero-copy packet (posted
  // answers are recorded and returned as done).
  drivers::IoStatus rail_send(Peer& p, TxPacket& pkt, int rail);
  void lent_done(const Peer& p, const TxPacket& t);       // acknowledged: complete, or hold
  void zc_released(std::uint64_t id);                     // the rail let go of a transmission
  void seal(Peer& p, TxPacket& pkt, std::uint8_t flags);  // ack fields + CRC into the header
  // Every rail's route to `rank` is intact (Driver::intact): payload CRCs may be skipped.
  bool route_intact(int rank) const;
  void went_out(Peer& p, TxPacket& pkt, int rail);  // bookkeeping of a transmission
  void flush_corked(int except = -1);  // hands every corked run (but `except`'s) to a rail
  void flush_peer(Peer& p);            // hands p's corked run to a rail
  void grow_ring(Peer& p, std::uint32_t offset);
  drivers::IoStatus send_data(int peer, std::span<const std::byte> header,
                              std::span<const std::byte> payload, bool lend,
                              drivers::CompletionToken token,
                              const mem::Registration* reg = nullptr);
  int pick_rail(Peer& p, int avoid);
  void rail_lost(Peer& p, int rail);
  void rail_acked(Peer& p, int rail);
  bool send_control(Peer& p, RelType type, std::uint8_t flags);
  enum class Resend : std::uint8_t { timeout, fast, tail_probe };
  void retransmit(Peer& p, TxPacket& pkt, Resend why);
  std::uint64_t probe_timeout(const Peer& p) const;

  void on_raw(int src, std::span<const std::byte> header, std::span<const std::byte> payload,
              drivers::PacketSink& sink, int& delivered, int budget);
  void process_ack(Peer& p, const RelHeader& h);
  void on_dsack(Peer& p, std::uint32_t seq);
  void on_duplicate(Peer& p, std::uint32_t seq);
  bool resend_due() const;  // a retransmission timeout or tail probe is due now
  void drain_rails(drivers::PacketSink& sink, int& delivered, int budget);
  void on_data(Peer& p, const RelHeader& h, std::span<const std::byte> upper,
               std::span<const std::byte> payload, bool check_payload, std::uint32_t payload_crc,
               drivers::PacketSink& sink, int& delivered, int budget);
  drivers::Placement placement_for(int src, std::span<const std::byte> header,
                                   std::size_t payload_size, drivers::PacketSink& sink,
                                   int delivered, int budget);
  int drain(Peer& p, drivers::PacketSink& sink, int budget);
  void request_ack(Peer& p, bool nack);
  void flush_acks();
  void run_timers();
  std::uint64_t peer_deadline(const Peer& p) const;
  void declare_dead(Peer& p);
  void rtt_sample(Peer& p, std::uint64_t r);

  std::vector<std::unique_ptr<drivers::Driver>> rails_;
  std::size_t poll_start_ = 0;  // rail polled first, rotating
  ReliableConfig cfg_;
  std::string name_;
  drivers::DriverCaps caps_;
  std::uint32_t ring_size_ = 0;   // power of two >= 2 * window: a receive ring's largest size
  std::vector<int> corked_;       // peers whose flight may end in unsent packets
  std::uint32_t cork_limit_ = 1;  // packets per corked run (one GSO send's worth)
  std::vector<drivers::PacketRef> batch_;
  std::unordered_map<int, Peer> peers_;
  Peer* last_peer_ = nullptr;    // peer() cache
  std::vector<int> ack_list_;    // peers with ack_now set
  std::vector<int> ready_list_;  // peers with deliverable buffered packets
  std::vector<int> timer_list_;  // peers with an armed timer (some may have expired)
  std::vector<int> dead_peers_;
  std::uint64_t now_ = 0;                     // clock at the start of the current call
  std::uint32_t raw_seen_ = 0;                // packets the inner drivers handed us (wraps)
  std::uint64_t next_deadline_ = UINT64_MAX;  // earliest armed timer (may be early, never late)
  ReliableStats stats_;
  // send_data skipped the clock (its packet joined a corked run): flush_peer reads it.
  bool now_stale_ = false;
  std::vector<std::byte> scratch_;  // header assembly for control packets
  // Lent packets acknowledged since the last poll's end: their local completions.
  std::vector<drivers::CompletionToken> completed_, completing_;
  // Zero-copy rail: transmissions it holds (ids ascending), and acknowledged lent packets
  // whose latest transmission it still holds.
  bool zc_rail_ = false;
  std::uint64_t zc_next_ = 1;
  std::vector<std::uint64_t> zc_out_;
  struct Held {
    drivers::CompletionToken token;
    std::uint64_t zc = 0;
    int rank = -1;
  };
  std::vector<Held> held_;
  // Packet buffers recycled between sends and arrivals, so the steady state allocates
  // nothing; bounded by kSpareBytes of capacity.
  std::vector<std::vector<std::byte>> spare_;
  std::size_t spare_bytes_ = 0;
  std::vector<std::byte> take_buffer(std::span<const std::byte> contents);
  void give_buffer(std::vector<std::byte>&& buf);
};

}  // namespace sluice::proto::reliable
