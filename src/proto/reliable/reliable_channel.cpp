#include "proto/reliable/reliable_channel.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "util/crc32c.hpp"
#include "util/stats.hpp"

namespace sluice::proto::reliable {

using drivers::IoStatus;

namespace {

constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kRtoGranularityNs = 10'000;
constexpr unsigned kMaxBackoff = 30;
constexpr std::size_t kSpareBytes = 8u << 20;

std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

RelHeader load_rel(std::span<const std::byte> h) {
  RelHeader r;
  std::memcpy(&r, h.data(), sizeof r);
  return r;
}

void store_rel(std::span<std::byte> h, const RelHeader& r) {
  std::memcpy(h.data(), &r, sizeof r);
}

}  // namespace

// Adapts the inner driver's deliveries to on_raw, carrying the caller's sink and budget.
class ReliableChannel::Intake final : public drivers::PacketSink {
 public:
  Intake(ReliableChannel& ch, drivers::PacketSink& sink, int& delivered, int budget)
      : ch_(ch), sink_(sink), delivered_(delivered), budget_(budget) {}
  void on_packet(int src, std::span<const std::byte> header,
                 std::span<const std::byte> payload) override {
    ch_.on_raw(src, header, payload, sink_, delivered_, budget_);
  }
  drivers::Placement placement(int src, std::span<const std::byte> header,
                               std::size_t payload_size) override {
    return ch_.placement_for(src, header, payload_size, sink_, delivered_, budget_);
  }
  // A rail's own one-sided operations complete to the protocol above; the channel's own
  // tokens (no protocol) are zero-copy transmissions the rail let go of.
  void on_completion(drivers::CompletionToken token, Errc status) override {
    if (token.protocol == drivers::ProtocolId::none) return ch_.zc_released(token.id);
    sink_.on_completion(token, status);
  }

 private:
  ReliableChannel& ch_;
  drivers::PacketSink& sink_;
  int& delivered_;
  int budget_;
};

namespace {
std::vector<std::unique_ptr<drivers::Driver>> one_rail(std::unique_ptr<drivers::Driver> d) {
  std::vector<std::unique_ptr<drivers::Driver>> v;
  v.push_back(std::move(d));
  return v;
}
}  // namespace

ReliableChannel::ReliableChannel(std::unique_ptr<drivers::Driver> inner, ReliableConfig config)
    : ReliableChannel(one_rail(std::move(inner)), std::move(config)) {}

ReliableChannel::ReliableChannel(std::vector<std::unique_ptr<drivers::Driver>> rails,
                                 ReliableConfig config)
    : rails_(std::move(rails)), cfg_(std::move(config)) {
  if (rails_.empty() || rails_.size() > kMaxRails)
    throw std::invalid_argument("ReliableChannel: need 1..4 inner drivers");
  for (const auto& r : rails_)
    if (!r) throw std::invalid_argument("ReliableChannel: no inner driver");
  if (cfg_.window < 1 || cfg_.window > kMaxWindow)
    throw std::invalid_argument("ReliableChannel: window must be 1.." + std::to_string(kMaxWindow) +
                                " packets");
  if (cfg_.min_rto_ns == 0 || cfg_.min_rto_ns > cfg_.max_rto_ns)
    throw std::invalid_argument("ReliableChannel: need 0 < min_rto <= max_rto");
  if (cfg_.peer_timeout_ns == 0) throw std::invalid_argument("ReliableChannel: peer timeout 0");
  if (cfg_.ack_every == 0) cfg_.ack_every = 1;
  if (cfg_.rail_fail_after == 0) cfg_.rail_fail_after = 1;
  caps_ = rails_[0]->caps();
  for (const auto& r : rails_) {  // what every rail can carry
    const drivers::DriverCaps& c = r->caps();
    caps_.max_header = std::min(caps_.max_header, c.max_header);
    caps_.max_packet = std::min(caps_.max_packet, c.max_packet);
    caps_.inline_payload = std::min(caps_.inline_payload, c.inline_payload);
    caps_.rdma_get = caps_.rdma_get && c.rdma_get;
  }
  if (caps_.max_header <= sizeof(RelHeader) + kPayloadCrcBytes)
    throw std::invalid_argument("ReliableChannel: inner driver's headers are too small");
  // Room for the payload CRC of split_crc packets (send_tracked) after the upper header.
  caps_.max_header =
      std::min<std::size_t>(caps_.max_header - sizeof(RelHeader) - kPayloadCrcBytes, 0xFFFF);
  caps_.max_packet = std::min<std::size_t>(caps_.max_packet, 0xFFFFFFFFu);
  caps_.reliable = true;
  caps_.ordered = true;
  caps_.lends_payload = true;
  // Zero-copy needs the registration in the rail's domain: one rail only.
  zc_rail_ = rails_.size() == 1 && rails_[0]->caps().needs_registration;
  caps_.needs_registration = zc_rail_;
  caps_.rdma_put =
      std::all_of(rails_.begin(), rails_.end(), [](const auto& r) { return r->caps().rdma_put; });
  name_ = std::string(rails_[0]->name());
  if (rails_.size() > 1) name_ += "*" + std::to_string(rails_.size());
  name_ += "+rel";
  ring_size_ = std::bit_ceil(2 * cfg_.window);
  // A corked run is one GSO send's worth of full-size datagrams (65507 bytes, <= 64).
  const std::size_t datagram = rails_[0]->caps().max_header + rails_[0]->caps().max_packet + 16;
  cork_limit_ = static_cast<std::uint32_t>(std::clamp<std::size_t>(65507 / datagram, 1, 64));
}

ReliableChannel::~ReliableChannel() = default;

mem::Domain& ReliableChannel::memory_domain() {
  return zc_rail_ ? rails_[0]->memory_domain() : mem::host_domain();
}

bool ReliableChannel::reaches(int rank) const {
  for (const auto& r : rails_)
    if (r->reaches(rank)) return true;
  return false;
}

bool ReliableChannel::rail_up(int rank, std::size_t rail) const {
  const Peer* p = find_peer(rank);
  return rail < rails_.size() && (!p || !p->rail[rail].down);
}

std::uint64_t ReliableChannel::now() const {
  return cfg_.clock ? cfg_.clock() : steady_ns();
}

ReliableChannel::Peer* ReliableChannel::find_peer(int rank) {
  auto it = peers_.find(rank);
  return it == peers_.end() ? nullptr : &it->second;
}

const ReliableChannel::Peer* ReliableChannel::find_peer(int rank) const {
  auto it = peers_.find(rank);
  return it == peers_.end() ? nullptr : &it->second;
}

ReliableChannel::Peer& ReliableChannel::peer(int rank) {
  // Traffic comes in runs to and from one peer: remember the last one (map nodes are stable).
  if (last_peer_ && last_peer_->rank == rank) return *last_peer_;
  auto [it, fresh] = peers_.try_emplace(rank);
  last_peer_ = &it->second;
  Peer& p = it->second;
  if (fresh) {
    p.rank = rank;
    p.next_seq = p.una = p.next_deliver = cfg_.initial_seq;
    p.rto = std::clamp(cfg_.initial_rto_ns, cfg_.min_rto_ns, cfg_.max_rto_ns);
    p.last_heard = now_;
  }
  return p;
}

void ReliableChannel::arm(Peer& p, std::uint64_t deadline) {
  if (deadline == kNever) return;
  next_deadline_ = std::min(next_deadline_, deadline);
  if (!p.in_timer_list) {  // timers only ever visit peers with something armed
    p.in_timer_list = true;
    timer_list_.push_back(p.rank);
  }
}

bool ReliableChannel::peer_dead(int rank) const {
  const Peer* p = find_peer(rank);
  return p && p->state == PeerState::dead;
}

bool ReliableChannel::quiescent() const {
  for (const auto& [rank, p] : peers_)
    if (p.state == PeerState::alive && (!p.flight.empty() || p.buffered > 0 || p.ack_pending))
      return false;
  return true;
}

std::size_t ReliableChannel::in_flight(int rank) const {
  const Peer* p = find_peer(rank);
  return p ? p->flight.size() : 0;
}

std::uint64_t ReliableChannel::srtt_ns(int rank) const {
  const Peer* p = find_peer(rank);
  return p ? p->srtt : 0;
}

std::uint64_t ReliableChannel::rto_ns(int rank) const {
  const Peer* p = find_peer(rank);
  return p ? p->rto : 0;
}

std::vector<std::byte> ReliableChannel::take_buffer(std::span<const std::byte> contents) {
  std::vector<std::byte> buf;
  if (!spare_.empty()) {
    buf = std::move(spare_.back());
    spare_.pop_back();
    spare_bytes_ -= buf.capacity();
  }
  buf.assign(contents.begin(), contents.end());
  return buf;
}

void ReliableChannel::give_buffer(std::vector<std::byte>&& buf) {
  if (buf.capacity() == 0 || spare_bytes_ + buf.capacity() > kSpareBytes) {
    std::vector<std::byte>().swap(buf);
    return;
  }
  spare_bytes_ += buf.capacity();
  spare_.push_back(std::move(buf));
}

// ---- sending -------------------------------------------------------------------------

namespace {
std::uint64_t backed_off(std::uint64_t rto, unsigned backoff, std::uint64_t cap) {
  for (unsigned i = 0; i < backoff && rto < cap; ++i) rto *= 2;
  return std::min(rto, cap);
}
}  // namespace

void ReliableChannel::fill_ack(Peer& p, RelHeader& h) const {
  std::uint32_t cum = p.next_deliver;
  h.sack[0] = h.sack[1] = 0;
  if (p.buffered > 0) {
    const std::uint32_t mask = static_cast<std::uint32_t>(p.ring.size()) - 1;
    auto has = [&](std::uint32_t seq) {
      const RxSlot& s = p.ring[seq & mask];
      return s.full && s.seq == seq;
    };
    // Budget-deferred packets are received, just not delivered: acknowledged, but only so
    // far that a full window past the ack still fits in the ring. Acking them all let the
    // sender run ring_size_ + window past next_deliver, and a receiver that lagged then
    // dropped its own arrivals (beyond_window) in long runs, which only timeouts repaired.
    const std::uint32_t limit = p.next_deliver + (ring_size_ - cfg_.window);
    while (cum != limit && has(cum)) ++cum;
    for (std::uint32_t i = 0; i < kSackBits; ++i)
      if (has(cum + 1 + i)) h.sack[i / 64] |= std::uint64_t{1} << (i % 64);
  }
  h.ack = cum;
}

void ReliableChannel::acked_out(Peer& p) {
  p.ack_pending = p.ack_now = p.nack = false;
  p.unacked_rx = 0;
  p.ack_deadline = 0;
}

int ReliableChannel::pick_rail(Peer& p, int avoid) {
  const int n = static_cast<int>(rails_.size());
  if (n == 1) return 0;
  int avoided = -1, down = -1;
  for (int k = 0; k < n; ++k) {
    const int r = (p.next_rail + k) % n;
    if (!rails_[static_cast<std::size_t>(r)]->reaches(p.rank)) continue;
    RailHealth& h = p.rail[static_cast<std::size_t>(r)];
    if (h.down && now_ < h.retry_at) {
      if (down < 0) down = r;
      continue;
    }
    if (r == avoid) {
      avoided = r;
      continue;
    }
    p.next_rail = static_cast<std::uint8_t>((r + 1) % n);
    if (h.down) h.retry_at = now_ + cfg_.rail_retry_ns;  // one trial packet per interval
    return r;
  }
  if (avoided >= 0) return avoided;
  return down >= 0 ? down : 0;  // every rail is down: keep trying; the peer timeout decides
}

void ReliableChannel::rail_lost(Peer& p, int rail) {
  if (rails_.size() == 1) return;
  RailHealth& h = p.rail[static_cast<std::size_t>(rail)];
  if (++h.losses >= cfg_.rail_fail_after && !h.down) {
    h.down = true;
    h.retry_at = now_ + cfg_.rail_retry_ns;
    ++stats_.rail_failovers;
  }
}

void ReliableChannel::rail_acked(Peer& p, int rail) {
  if (rails_.size() == 1) return;
  RailHealth& h = p.rail[static_cast<std::size_t>(rail)];
  h.losses = 0;
  if (h.down) {
    h.down = false;
    ++stats_.rail_recoveries;
  }
}

bool ReliableChannel::route_intact(int rank) const {
  if (!cfg_.trust_intact_routes) return false;
  for (const auto& r : rails_)
    if (!r->intact(rank)) return false;
  return true;
}

void ReliableChannel::seal(Peer& p, TxPacket& pkt, std::uint8_t flags) {
  RelHeader h = load_rel(pkt.header);
  if ((h.flags & rel_flags::unchecked) && pkt.transmissions > 0) {
    // A retransmission carries the payload CRC: the receiver may have dropped the first
    // transmission because its route from us is not intact (one that may damage packets).
    const std::uint32_t pcrc = util::crc32c(pkt.body());
    std::memcpy(pkt.header.data() + sizeof(RelHeader) + h.upper_header_len, &pcrc, sizeof pcrc);
    h.flags &= static_cast<std::uint8_t>(~rel_flags::unchecked);
  }
  h.flags = flags | (h.flags & (rel_flags::split_crc | rel_flags::unchecked));
  fill_ack(p, h);
  const std::span<const std::byte> tail(pkt.header.data() + sizeof(RelHeader),
                                        pkt.header.size() - sizeof(RelHeader));
  const std::span<const std::byte> body = pkt.body();
  // split_crc: the payload's CRC sits in the header (computed once); resends re-sum 100 B.
  h.crc = (h.flags & rel_flags::split_crc) ? packet_crc(h, tail, {}) : packet_crc(h, tail, body);
  store_rel({pkt.header.data(), pkt.header.size()}, h);
}

void ReliableChannel::went_out(Peer& p, TxPacket& pkt, int rail) {
  if (p.ack_pending) ++stats_.acks_piggybacked;
  acked_out(p);
  ++pkt.transmissions;
  pkt.last_sent = now_;
  pkt.xmit_order = ++p.xmit_counter;
  if (pkt.transmissions == 1) pkt.first_order = pkt.xmit_order;
  pkt.rail = static_cast<std::uint8_t>(rail);
  pkt.loss_noted = false;
  ++stats_.rail_packets[rail];
}

IoStatus ReliableChannel::transmit(Peer& p, TxPacket& pkt, std::uint8_t flags, int avoid_rail) {
  seal(p, pkt, flags);
  const int rail = pick_rail(p, avoid_rail);
  const IoStatus s = rail_send(p, pkt, rail);
  if (s == IoStatus::done) went_out(p, pkt, rail);
  return s;
}

IoStatus ReliableChannel::rail_send(Peer& p, TxPacket& pkt, int rail) {
  drivers::Driver& d = *rails_[static_cast<std::size_t>(rail)];
  // Only a first transmission goes zero-copy. A resend is copied: it reads the buffer as it
  // is now, so a packet whose zero-copy payload the receiver rejected (the payload CRC, taken
  // from the buffer, did not match the pinned pages sent: a stale registration) gets through.
  if (!pkt.reg || pkt.transmissions > 0) return d.send(p.rank, pkt.header, pkt.body());
  const std::uint64_t id = zc_next_;
  const IoStatus s =
      d.send_tracked(p.rank, pkt.header, pkt.body(), *pkt.reg, {id, drivers::ProtocolId::none});
  if (s != IoStatus::posted) return s;  // copied (done), or not sent
  ++zc_next_;
  zc_out_.push_back(id);
  pkt.zc_last = id;
  return IoStatus::done;
}

void ReliableChannel::lent_done(const Peer& p, const TxPacket& t) {
  if (t.token.protocol == drivers::ProtocolId::none) return;
  // The rail may still read the memory for an earlier transmission (ids below zc_last are
  // held too: waiting for them as well is simpler and costs next to nothing).
  if (t.zc_last != 0 && !zc_out_.empty() && zc_out_.front() <= t.zc_last)
    held_.push_back({t.token, t.zc_last, p.rank});
  else
    completed_.push_back(t.token);
}

void ReliableChannel::zc_released(std::uint64_t id) {
  // Released mostly in order: the id is near the front.
  const auto it = std::find(zc_out_.begin(), zc_out_.end(), id);
  if (it != zc_out_.end()) zc_out_.erase(it);
  if (held_.empty()) return;
  const std::uint64_t low = zc_out_.empty() ? UINT64_MAX : zc_out_.front();
  std::size_t keep = 0;
  for (const Held& h : held_) {
    if (h.zc < low)
      completed_.push_back(h.token);
    else
      held_[keep++] = h;
  }
  held_.resize(keep);
}

void ReliableChannel::flush_corked(int except) {
  // A run the rail had no room for stays listed, for the next poll: none is ever orphaned.
  std::size_t keep = 0;
  for (std::size_t i = 0; i < corked_.size(); ++i) {
    Peer* p = find_peer(corked_[i]);
    if (!p || p->state != PeerState::alive || p->unsent == 0) continue;
    if (corked_[i] != except) flush_peer(*p);
    if (p->state == PeerState::alive && p->unsent > 0) corked_[keep++] = corked_[i];
  }
  corked_.resize(keep);
}

void ReliableChannel::flush_peer(Peer& p) {
  if (p.state != PeerState::alive || p.unsent == 0) return;
  if (now_stale_) {  // send_data did not read the clock for packets that joined a run
    now_ = now();
    now_stale_ = false;
  }
  const std::size_t first = p.flight.size() - p.unsent;
  batch_.clear();
  bool zc = false;
  for (std::size_t i = first; i < p.flight.size(); ++i) {
    TxPacket& t = p.flight[i];
    seal(p, t, 0);
    batch_.push_back({t.header, t.body()});
    zc = zc || t.reg;
  }
  const int rail = pick_rail(p, -1);
  std::size_t sent = 0;
  IoStatus s = IoStatus::done;
  if (zc) {  // zero-copy packets leave one by one (each names its registration)
    for (std::size_t i = first; i < p.flight.size(); ++i, ++sent) {
      s = rail_send(p, p.flight[i], rail);
      if (s != IoStatus::done) break;
    }
  } else {
    s = rails_[static_cast<std::size_t>(rail)]->send_batch(p.rank, batch_, sent);
  }
  for (std::size_t i = 0; i < sent; ++i) went_out(p, p.flight[first + i], rail);
  p.unsent -= static_cast<std::uint32_t>(sent);
  if (sent > 0) {
    ++stats_.batches;
    // The tail loss probe counts from the newest packet that really went out.
    if (!p.probe_sent) p.probe_deadline = now_ + probe_timeout(p);
  }
  if (s == IoStatus::failed) declare_dead(p);
}

bool ReliableChannel::send_control(Peer& p, RelType type, std::uint8_t flags) {
  RelHeader h;
  h.type = type;
  h.flags = flags;
  h.job_key = cfg_.job_key;
  h.seq = p.next_seq;
  const bool dsack = type == RelType::ack && p.dup_pending;
  if (dsack) {
    h.flags |= rel_flags::dup;
    h.seq = p.dup_seq;
  }
  fill_ack(p, h);
  h.crc = packet_crc(h, {}, {});
  scratch_.resize(sizeof h);
  store_rel(scratch_, h);
  const int rail = pick_rail(p, -1);
  const IoStatus s = rails_[static_cast<std::size_t>(rail)]->send(p.rank, scratch_, {});
  if (s == IoStatus::failed) declare_dead(p);
  if (s != IoStatus::done) return false;
  if (dsack) p.dup_pending = false;
  ++stats_.rail_packets[rail];
  if (type == RelType::ack) {
    ++stats_.acks_standalone;
    if (flags & rel_flags::nack) ++stats_.nacks_sent;
  } else if (type == RelType::probe) {
    ++stats_.probes_sent;
  }
  acked_out(p);
  return true;
}

void ReliableChannel::retransmit(Peer& p, TxPacket& pkt, Resend why) {
  // A tail probe is a guess, not a detected loss: it does not count against the rail.
  if (why != Resend::tail_probe && !pkt.loss_noted) {
    pkt.loss_noted = true;
    rail_lost(p, pkt.rail);
  }
  // Ask for an immediate ack: the sender is already recovering, don't add the ack delay.
  const IoStatus s = transmit(p, pkt, rel_flags::ack_request, pkt.rail);
  if (s == IoStatus::done) {
    p.last_retransmit = now_;
    if (why != Resend::tail_probe) {  // a probe is expected to arrive twice
      p.rtx_check = true;
      p.rtx_timeout = why == Resend::timeout;
      p.rtx_backoff = p.backoff;
      p.rtx_seq = pkt.seq;
    }
    switch (why) {
      case Resend::timeout:
        ++stats_.retransmit_timeout;
        break;
      case Resend::fast:
        ++stats_.retransmit_fast;
        break;
      case Resend::tail_probe:
        ++stats_.tail_probes;
        break;
    }
  } else if (s == IoStatus::failed) {
    declare_dead(p);
  }  // again: the retransmission timer tries later
}

IoStatus ReliableChannel::send(int rank, std::span<const std::byte> header,
                               std::span<const std::byte> payload) {
  return send_data(rank, header, payload, false, {});
}

IoStatus ReliableChannel::send_tracked(int rank, std::span<const std::byte> header,
                                       std::span<const std::byte> payload,
                                       const mem::Registration& reg,
                                       drivers::CompletionToken token) {
  // The registration outlives the packet: the caller keeps it until the local completion.
  // A payload the rail would copy anyway travels as a plain lent packet: it keeps the
  // corked run's single GSO send (a registered packet leaves on its own).
  const mem::Registration* zc =
      zc_rail_ && reg.pinned() && reg.covers(payload) && rails_[0]->lends(rank, payload.size())
          ? &reg
          : nullptr;
  const IoStatus s = send_data(rank, header, payload, true, token, zc);
  return s == IoStatus::done ? IoStatus::posted : s;
}

IoStatus ReliableChannel::send_data(int rank, std::span<const std::byte> header,
                                    std::span<const std::byte> payload, bool lend,
                                    drivers::CompletionToken token, const mem::Registration* reg) {
  // A packet joining a corked run leaves with the run, and flush_peer reads the clock for
  // it: one clock read per GSO send instead of one per packet (~3 % of a 1 MiB sender).
  const bool joins_run = last_peer_ && last_peer_->rank == rank && last_peer_->unsent > 0;
  if (joins_run) {
    now_stale_ = true;
  } else {
    now_ = now();
    now_stale_ = false;
  }
  Peer& p = peer(rank);
  if (p.state == PeerState::dead) return IoStatus::failed;
  if (header.size() > caps_.max_header || payload.size() > caps_.max_packet)
    return IoStatus::failed;
  // A full-size packet (a bulk stream's fragment) is corked; any packet to the corked peer
  // joins its run (a shorter one ends it, as the last GSO segment); another peer's first
  // sends the run.
  const bool full = cfg_.cork && !payload.empty() && payload.size() == caps_.max_packet;
  if (!corked_.empty() && (corked_.size() > 1 || corked_[0] != rank)) flush_corked(rank);
  const bool corked = full || p.unsent > 0;
  const std::size_t bytes = sizeof(RelHeader) + header.size() + payload.size();
  if (p.flight.size() >= cfg_.window ||
      (!p.flight.empty() && p.flight_bytes + bytes > cfg_.window_bytes)) {
    ++stats_.window_full;
    return IoStatus::again;
  }

  TxPacket pkt;
  pkt.seq = p.next_seq;
  pkt.header.resize(sizeof(RelHeader) + header.size() + (lend ? kPayloadCrcBytes : 0));
  RelHeader h;
  h.type = RelType::data;
  if (lend) {  // split checksums: the receiver may place the payload before checking it
    // Over an intact route a copied payload goes without its CRC (~20 % of each side's time
    // at 1 MiB on loopback). A zero-copy one keeps it: the CRC, taken from the buffer, is
    // what rejects pinned pages that no longer back it.
    const bool unchecked = reg == nullptr && route_intact(rank);
    h.flags = rel_flags::split_crc | (unchecked ? rel_flags::unchecked : 0);
    const std::uint32_t pcrc = unchecked ? 0 : util::crc32c(payload);
    std::memcpy(pkt.header.data() + sizeof(RelHeader) + header.size(), &pcrc, sizeof pcrc);
    stats_.payload_unchecked += unchecked;
  }
  h.upper_header_len = static_cast<std::uint16_t>(header.size());
  h.payload_len = static_cast<std::uint32_t>(payload.size());
  h.job_key = cfg_.job_key;
  h.seq = pkt.seq;
  store_rel({pkt.header.data(), pkt.header.size()}, h);
  if (!header.empty())
    std::memcpy(pkt.header.data() + sizeof(RelHeader), header.data(), header.size());
  if (lend) {
    pkt.lent = payload;
    pkt.token = token;
    pkt.reg = reg;
  } else
    pkt.payload = take_buffer(payload);

  const IoStatus s = corked ? IoStatus::done : transmit(p, pkt, 0);
  if (s != IoStatus::done) {  // nothing was consumed: the caller retries
    give_buffer(std::move(pkt.payload));
    if (s == IoStatus::failed) declare_dead(p);
    return s;
  }

  pkt.first_sent = now_;
  if (p.flight.empty()) {
    p.waiting_since = now_;
    p.rto_deadline = now_ + backed_off(p.rto, p.backoff, cfg_.max_rto_ns);
  }
  if (!p.probe_sent) p.probe_deadline = now_ + probe_timeout(p);  // from the newest packet
  p.flight_bytes += pkt.bytes();
  p.flight.push_back(std::move(pkt));
  ++p.next_seq;
  p.talked = true;
  ++stats_.data_sent;
  stats_.bytes_sent += header.size() + payload.size();
  arm(p, peer_deadline(p));
  if (corked) {
    if (++p.unsent == 1 && std::find(corked_.begin(), corked_.end(), rank) == corked_.end())
      corked_.push_back(rank);
    if (!full || p.unsent >= cork_limit_) flush_peer(p);
    if (p.state == PeerState::dead) return IoStatus::failed;
  }
  return IoStatus::done;
}

// ---- receiving -----------------------------------------------------------------------

int ReliableChannel::poll(drivers::PacketSink& sink, int budget) {
  now_ = now();
  now_stale_ = false;
  if (!corked_.empty()) flush_corked();
  int delivered = 0;
  if (!ready_list_.empty()) {
    std::vector<int> ready;
    ready.swap(ready_list_);
    for (int rank : ready) {
      Peer* p = find_peer(rank);
      if (!p) continue;
      p->in_ready_list = false;
      if (delivered < budget) {
        delivered += drain(*p, sink, budget - delivered);
      } else if (p->state == PeerState::alive && p->buffered > 0) {
        p->in_ready_list = true;
        ready_list_.push_back(rank);
      }
    }
  }
  const std::size_t nrails = rails_.size();
  for (std::size_t k = 0; k < nrails && delivered < budget; ++k) {
    Intake intake(*this, sink, delivered, budget);
    const std::size_t r = poll_start_ + k;  // no division on the polling path (~15 ns each)
    rails_[r < nrails ? r : r - nrails]->poll(intake, budget - delivered);
  }
  if (++poll_start_ >= nrails) poll_start_ = 0;
  if (now_ >= next_deadline_) {
    // Acks may be waiting in the socket (this process was descheduled, or the budget
    // ran out): read them before judging what has timed out.
    if (resend_due()) drain_rails(sink, delivered, budget);
    run_timers();
  }
  flush_acks();
  if (!completed_.empty()) {
    // Swapped out first: a completion handler may send, and a send never acks, but keep
    // the list stable anyway.
    completing_.swap(completed_);
    for (const drivers::CompletionToken& t : completing_) sink.on_completion(t, Errc::ok);
    delivered += static_cast<int>(completing_.size());
    completing_.clear();
  }
  return delivered;
}

bool ReliableChannel::resend_due() const {
  for (int rank : timer_list_) {
    const Peer* p = find_peer(rank);
    if (p && p->state == PeerState::alive && !p->flight.empty() &&
        ((p->rto_deadline && now_ >= p->rto_deadline) ||
         (p->probe_deadline && !p->probe_sent && now_ >= p->probe_deadline)))
      return true;
  }
  return false;
}

void ReliableChannel::drain_rails(drivers::PacketSink& sink, int& delivered, int budget) {
  constexpr int kBatch = 64;
  // In-order data within the caller's budget is delivered, the rest buffered in the receive
  // ring (it holds two windows) for the next poll; acks are processed now. Bounded: a
  // sender cannot keep us here.
  const int cap = static_cast<int>(ring_size_) * std::max<int>(1, static_cast<int>(peers_.size()));
  for (const auto& rail : rails_) {
    Intake intake(*this, sink, delivered, budget);
    for (int seen = 0; seen < cap;) {
      const std::uint32_t before = raw_seen_;
      rail->poll(intake, kBatch);
      const int n = static_cast<int>(raw_seen_ - before);
      stats_.drained += static_cast<std::uint64_t>(n);
      seen += n;
      if (n < kBatch) break;
    }
  }
}

void ReliableChannel::on_raw(int src, std::span<const std::byte> header,
                             std::span<const std::byte> payload, drivers::PacketSink& sink,
                             int& delivered, int budget) {
  ++raw_seen_;
  RelHeader h;
  if (parse_header(header, payload.size(), h) != ParseResult::ok) {
    ++stats_.malformed;
    return;
  }
  const auto tail = header.subspan(sizeof(RelHeader));
  const bool split = (h.flags & rel_flags::split_crc) != 0;
  if ((split ? packet_crc(h, tail, {}) : packet_crc(h, tail, payload)) != h.crc) {
    ++stats_.corrupt;
    return;
  }
  const auto upper = tail.first(h.upper_header_len);
  std::uint32_t payload_crc = 0;  // split: checked once the packet is known to be new
  if (split) std::memcpy(&payload_crc, tail.data() + h.upper_header_len, sizeof payload_crc);
  if (h.job_key != cfg_.job_key) {
    ++stats_.bad_key;
    return;
  }
  Peer& p = peer(src);
  if (p.state == PeerState::dead) {
    ++stats_.from_dead;
    return;
  }
  p.last_heard = now_;
  if (!p.talked) {
    p.talked = true;
    arm(p, peer_deadline(p));
  }
  if (h.type == RelType::ack && (h.flags & rel_flags::dup)) on_dsack(p, h.seq);
  process_ack(p, h);
  if (p.state == PeerState::dead) return;
  switch (h.type) {
    case RelType::data:
      if (h.flags & rel_flags::unchecked) {
        // No payload CRC: trusted only over a route that cannot damage it here (its
        // retransmission carries one). Its acknowledgement fields were good: used above.
        if (!route_intact(src)) {
          ++stats_.unchecked_refused;
          break;
        }
        on_data(p, h, upper, payload, false, 0, sink, delivered, budget);
        break;
      }
      on_data(p, h, upper, payload, split, payload_crc, sink, delivered, budget);
      break;
    case RelType::probe:
      request_ack(p, false);
      break;
    case RelType::ack:
      if (h.flags & rel_flags::ack_request) request_ack(p, false);
      break;
  }
}

std::uint64_t ReliableChannel::probe_timeout(const Peer& p) const {
  // Two RTTs plus the receiver's ack delay; before any RTT sample, the RTO decides alone.
  if (p.srtt == 0) return kNever / 2;
  return std::min(2 * p.srtt + cfg_.delayed_ack_ns + kRtoGranularityNs, p.rto);
}

void ReliableChannel::on_dsack(Peer& p, std::uint32_t seq) {
  if (!p.rtx_check || seq != p.rtx_seq) return;
  p.rtx_check = false;
  ++stats_.spurious;
  // The timeout was too short, not the path lossy: undo its backoff (Eifel's response).
  // No RTT sample from it: a duplicate made by the network looks the same as a late
  // original, and a wrong sample would inflate the RTO under real loss.
  if (p.rtx_timeout) p.backoff = std::min(p.backoff, p.rtx_backoff);
}

void ReliableChannel::on_duplicate(Peer& p, std::uint32_t seq) {
  ++stats_.duplicates;
  p.dup_pending = true;  // tell the sender (D-SACK): its resend may have been spurious
  p.dup_seq = seq;
  request_ack(p, false);  // our ack was probably lost: repeat it now
}

void ReliableChannel::rtt_sample(Peer& p, std::uint64_t r) {
  r = std::max<std::uint64_t>(r, 1);
  if (p.srtt == 0) {
    p.srtt = r;
    p.rttvar = r / 2;
  } else {
    const std::uint64_t diff = p.srtt > r ? p.srtt - r : r - p.srtt;
    p.rttvar = (3 * p.rttvar + diff) / 4;
    p.srtt = (7 * p.srtt + r) / 8;
  }
  p.rto = std::clamp(p.srtt + std::max(4 * p.rttvar, kRtoGranularityNs), cfg_.min_rto_ns,
                     cfg_.max_rto_ns);
  ++stats_.rtt_samples;
}

void ReliableChannel::process_ack(Peer& p, const RelHeader& h) {
  const std::uint32_t cum = h.ack;
  // Acknowledges what we never sent (corked packets included): ignore.
  if (seq_after(cum, p.next_seq - p.unsent)) return;

  bool progress = false;
  std::uint64_t newest_xmit = 0;  // latest transmission known to have arrived
  bool have_sample = false;
  std::uint64_t sample_sent = 0;
  auto newly_acked = [&](const TxPacket& t) {
    progress = true;
    rail_acked(p, t.rail);
    // An ack of a resent packet may be for the original: trust only the first sending.
    newest_xmit = std::max(newest_xmit, t.transmissions > 1 ? t.first_order : t.xmit_order);
    // Karn: a resent packet's ack is ambiguous, never a sample. Nor is one for a packet
    // sent before our latest retransmission: that ack may have been lost and only
    // repeated because the retransmission asked for it, which would time the RTO itself.
    if (t.transmissions == 1 && t.last_sent > p.last_retransmit &&
        (!have_sample || t.last_sent > sample_sent)) {
      have_sample = true;
      sample_sent = t.last_sent;
    }
  };

  while (!p.flight.empty() && seq_before(p.flight.front().seq, cum)) {
    TxPacket& t = p.flight.front();
    progress = true;
    if (!t.sacked) {
      newly_acked(t);
      lent_done(p, t);
    }
    p.flight_bytes -= t.bytes();
    give_buffer(std::move(t.payload));
    p.flight.pop_front();
  }
  if (seq_after(cum, p.una)) p.una = cum;

  if ((h.sack[0] | h.sack[1]) != 0) {
    for (std::size_t i = 0; i < p.flight.size(); ++i) {
      TxPacket& t = p.flight[i];
      const std::uint32_t bit = t.seq - cum - 1;
      if (t.transmissions == 0 || (seq_after(t.seq, cum) && bit >= kSackBits)) break;
      if (bit >= kSackBits) continue;  // at or before a stale cumulative point
      if (t.sacked || !((h.sack[bit / 64] >> (bit % 64)) & 1u)) continue;
      newly_acked(t);
      // A lent payload is no longer read: its owner may have it back (local completion),
      // once a zero-copy rail has let go of it too.
      lent_done(p, t);
      t.sacked = true;  // the receiver never discards what it buffered: free the copy
      p.flight_bytes -= t.body().size();
      give_buffer(std::move(t.payload));
      t.payload.clear();  // a moved-from vector is valid but unspecified: make it empty
      t.lent = {};
      t.reg = nullptr;
    }
  }

  if (have_sample) rtt_sample(p, now_ - sample_sent);
  if (progress) {
    p.backoff = 0;
    p.waiting_since = now_;
    p.rto_deadline = p.flight.empty() ? 0 : now_ + p.rto;
    p.probe_sent = false;
    p.probe_deadline = p.flight.empty() ? 0 : now_ + probe_timeout(p);
    arm(p, peer_deadline(p));
  }
  if (newest_xmit == 0) return;
  // Fast retransmission: a packet sent after this one's last transmission has arrived,
  // so this one is presumed lost ([Open-MX]: re-request optimistically, don't wait).
  for (std::size_t i = 0; i < p.flight.size(); ++i) {
    TxPacket& t = p.flight[i];
    // First transmissions go in seq order: from here on every packet (resent or not, or
    // still corked) went out after the newest arrival. Keeps a large window O(losses).
    if (t.transmissions == 0 || t.first_order >= newest_xmit) break;
    if (t.sacked || t.xmit_order >= newest_xmit) continue;
    retransmit(p, t, Resend::fast);
    if (p.state == PeerState::dead) return;
  }
}

void ReliableChannel::request_ack(Peer& p, bool nack) {
  p.ack_pending = true;
  p.ack_now = true;
  if (nack) p.nack = true;
  if (!p.in_ack_list) {
    p.in_ack_list = true;
    ack_list_.push_back(p.rank);
  }
}

void ReliableChannel::on_data(Peer& p, const RelHeader& h, std::span<const std::byte> upper,
                              std::span<const std::byte> payload, bool check_payload,
                              std::uint32_t payload_crc, drivers::PacketSink& sink, int& delivered,
                              int budget) {
  const std::uint32_t seq = h.seq;
  if (seq_before(seq, p.next_deliver)) {
    on_duplicate(p, seq);
    return;
  }
  const std::uint32_t offset = seq - p.next_deliver;
  if (offset >= ring_size_) {
    ++stats_.beyond_window;
    return;
  }
  if (offset >= p.ring.size()) grow_ring(p, offset);
  const std::uint32_t mask = static_cast<std::uint32_t>(p.ring.size()) - 1;
  RxSlot& slot = p.ring[seq & mask];
  if (slot.full) {  // same seq: the ring spans the whole acceptance range
    on_duplicate(p, seq);
    return;
  }
  // split_crc: the header was intact; the payload (perhaps already in its placement, which
  // only this packet fills) is checked here, once the packet is known to be new.
  if (check_payload && util::crc32c(payload) != payload_crc) {
    ++stats_.corrupt;
    return;
  }

  // Acknowledgement policy for a new arrival.
  p.ack_pending = true;
  if (h.flags & rel_flags::ack_request) request_ack(p, false);
  if (++p.unacked_rx >= cfg_.ack_every) {
    request_ack(p, false);
  } else if (p.ack_deadline == 0) {
    p.ack_deadline = now_ + cfg_.delayed_ack_ns;
    arm(p, p.ack_deadline);
  }

  if (offset == 0 && delivered < budget) {
    const bool fills_gap = p.buffered > 0;
    ++p.next_deliver;
    ++delivered;
    ++stats_.delivered;
    sink.on_packet(p.rank, upper, payload);
    if (fills_gap && p.state == PeerState::alive) {
      request_ack(p, false);  // the sender is waiting to hear the hole is filled
      delivered += drain(p, sink, budget - delivered);
    }
    return;
  }

  // In sequence: nothing missing before it, only undelivered (the caller's budget is
  // spent, or poll drained the driver before timers): not a gap, no nack.
  const RxSlot& prev = p.ring[(seq - 1) & mask];
  const bool in_seq = offset == 0 || (prev.full && prev.seq == seq - 1 && prev.in_seq);
  slot.full = true;
  slot.in_seq = in_seq;
  slot.seq = seq;
  slot.header = take_buffer(upper);
  slot.payload = take_buffer(payload);
  ++p.buffered;
  if (in_seq) {  // deliver next poll
    if (!p.in_ready_list) {
      p.in_ready_list = true;
      ready_list_.push_back(p.rank);
    }
    return;
  }
  ++stats_.out_of_order;
  // A gap: re-request it at once, once per cumulative point ([Open-MX]).
  if (!p.nacked || p.nacked_at != p.next_deliver) {
    p.nacked = true;
    p.nacked_at = p.next_deliver;
    request_ack(p, true);
  }
}

drivers::Placement ReliableChannel::placement_for(int src, std::span<const std::byte> header,
                                                  std::size_t payload_size,
                                                  drivers::PacketSink& sink, int delivered,
                                                  int budget) {
  // Only for the next in-order packet, deliverable now, of a split_crc packet whose header
  // checks out: its placement (a fragment's slot in the user's buffer) is then trusted,
  // and nothing but this packet (or a resend of it) writes there. Anything else is read
  // into the driver's own buffers and goes through on_raw as usual.
  if (delivered >= budget) return {};
  RelHeader h;
  if (parse_header(header, payload_size, h) != ParseResult::ok || !(h.flags & rel_flags::split_crc))
    return {};
  const auto tail = header.subspan(sizeof(RelHeader));
  if (packet_crc(h, tail, {}) != h.crc || h.job_key != cfg_.job_key) return {};
  const Peer* p = find_peer(src);
  if (!p || p->state != PeerState::alive || h.seq != p->next_deliver) return {};
  if (!p->ring.empty() && p->ring[h.seq & (p->ring.size() - 1)].full) return {};  // deferred
  return sink.placement(src, tail.first(h.upper_header_len), payload_size);
}

void ReliableChannel::grow_ring(Peer& p, std::uint32_t offset) {
  // Small first (a peer that exchanges a message or two costs little), doubling up to
  // ring_size_; buffered packets move to their slot under the new mask.
  const std::size_t size = std::min<std::size_t>(
      ring_size_, std::max<std::size_t>(16, std::bit_ceil(std::size_t{offset} + 1)));
  std::vector<RxSlot> bigger(size);
  for (RxSlot& s : p.ring)
    if (s.full) bigger[s.seq & (size - 1)] = std::move(s);
  p.ring.swap(bigger);
}

int ReliableChannel::drain(Peer& p, drivers::PacketSink& sink, int budget) {
  int n = 0;
  const std::uint32_t mask = static_cast<std::uint32_t>(p.ring.size()) - 1;
  while (p.state == PeerState::alive && p.buffered > 0 && n < budget) {
    RxSlot& s = p.ring[p.next_deliver & mask];
    if (!s.full || s.seq != p.next_deliver) break;
    // Move the packet out first: the sink may send, and a send may declare p dead.
    std::vector<std::byte> header = std::move(s.header);
    std::vector<std::byte> payload = std::move(s.payload);
    s.full = false;
    s.header.clear();
    s.payload.clear();
    --p.buffered;
    ++p.next_deliver;
    ++n;
    ++stats_.delivered;
    sink.on_packet(p.rank, header, payload);
    give_buffer(std::move(header));
    give_buffer(std::move(payload));
  }
  if (p.state == PeerState::alive && p.buffered > 0 && !p.in_ready_list) {
    const RxSlot& s = p.ring[p.next_deliver & mask];
    if (s.full && s.seq == p.next_deliver) {
      p.in_ready_list = true;
      ready_list_.push_back(p.rank);
    }
  }
  return n;
}

void ReliableChannel::flush_acks() {
  if (ack_list_.empty()) return;
  std::vector<int> list;
  list.swap(ack_list_);
  std::vector<int> retry;
  for (int rank : list) {
    Peer* p = find_peer(rank);
    if (!p) continue;
    p->in_ack_list = false;
    if (p->state != PeerState::alive || (!(p->ack_now && p->ack_pending) && !p->dup_pending))
      continue;
    if (!send_control(*p, RelType::ack, p->nack ? rel_flags::nack : 0) &&
        p->state == PeerState::alive)
      retry.push_back(rank);  // the inner driver is full: try again next poll
  }
  for (int rank : retry) {
    Peer* p = find_peer(rank);
    if (p && !p->in_ack_list) {
      p->in_ack_list = true;
      ack_list_.push_back(rank);
    }
  }
}

// ---- timers --------------------------------------------------------------------------

std::uint64_t ReliableChannel::peer_deadline(const Peer& p) const {
  if (p.state != PeerState::alive) return kNever;
  std::uint64_t d = kNever;
  if (!p.flight.empty()) {
    d = std::min(d, p.waiting_since + cfg_.peer_timeout_ns);
    if (p.rto_deadline) d = std::min(d, p.rto_deadline);
    if (p.probe_deadline && !p.probe_sent) d = std::min(d, p.probe_deadline);
  }
  if (p.ack_pending && p.ack_deadline) d = std::min(d, p.ack_deadline);
  if (cfg_.keepalive_ns && p.talked) {
    d = std::min(d, p.last_heard + cfg_.peer_timeout_ns);
    if (p.flight.empty()) d = std::min(d, std::max(p.last_heard + cfg_.keepalive_ns, p.next_probe));
  }
  return d;
}

void ReliableChannel::run_timers() {
  next_deadline_ = kNever;
  std::vector<int> ranks;  // swapped out: a dead-peer callback may send and arm peers
  ranks.swap(timer_list_);

  for (int rank : ranks) {
    Peer* pp = find_peer(rank);
    if (!pp) continue;
    pp->in_timer_list = false;
    if (pp->state != PeerState::alive) continue;
    Peer& p = *pp;
    const bool silent_in_flight =
        !p.flight.empty() && now_ - p.waiting_since >= cfg_.peer_timeout_ns;
    const bool silent_idle =
        cfg_.keepalive_ns && p.talked && now_ - p.last_heard >= cfg_.peer_timeout_ns;
    if (silent_in_flight || silent_idle) {
      declare_dead(p);
      continue;
    }

    // Tail loss probe: resend the newest packet, so that if the tail of a burst was lost
    // the ack it draws (with its selective bits) triggers fast retransmission of the rest
    // about one RTT later, instead of a full RTO.
    if (!p.flight.empty() && !p.probe_sent && p.probe_deadline && now_ >= p.probe_deadline &&
        (p.rto_deadline == 0 || p.probe_deadline < p.rto_deadline)) {
      std::size_t last = p.flight.size() - p.unsent;  // corked packets are not out yet
      while (last > 0 && p.flight[last - 1].sacked) --last;
      p.probe_sent = true;
      p.probe_deadline = 0;
      if (last > 0) retransmit(p, p.flight[last - 1], Resend::tail_probe);
      if (p.state != PeerState::alive) continue;
    }

    if (!p.flight.empty() && p.rto_deadline && now_ >= p.rto_deadline) {
      const std::size_t out = p.flight.size() - p.unsent;
      std::size_t first = 0;
      while (first < out && p.flight[first].sacked) ++first;
      if (first < out)
        retransmit(p, p.flight[first], Resend::timeout);
      else if (p.unsent == 0)  // everything is buffered at the peer; only its ack is missing
        send_control(p, RelType::probe, rel_flags::ack_request);
      if (p.state != PeerState::alive) continue;
      if (p.backoff < kMaxBackoff) ++p.backoff;
      p.rto_deadline = now_ + backed_off(p.rto, p.backoff, cfg_.max_rto_ns);
    }

    if (p.ack_pending && p.ack_deadline && now_ >= p.ack_deadline) {
      if (!send_control(p, RelType::ack, p.nack ? rel_flags::nack : 0)) {
        if (p.state != PeerState::alive) continue;
        p.ack_deadline = now_;  // inner driver full: retry at the next poll
      }
    }

    if (cfg_.keepalive_ns && p.talked && p.flight.empty() &&
        now_ - p.last_heard >= cfg_.keepalive_ns && now_ >= p.next_probe) {
      send_control(p, RelType::probe, rel_flags::ack_request);
      if (p.state != PeerState::alive) continue;
      p.next_probe = now_ + cfg_.keepalive_ns;
    }
    arm(p, peer_deadline(p));
  }
}

void ReliableChannel::declare_dead(Peer& p) {
  if (p.state == PeerState::dead) return;
  p.state = PeerState::dead;
  p.flight.clear();
  p.flight_bytes = 0;
  p.unsent = 0;
  p.ring.clear();
  p.buffered = 0;
  p.dup_pending = false;
  // Held completions of its lent packets are dropped too: the core fails its requests.
  std::erase_if(held_, [&](const Held& h) { return h.rank == p.rank; });
  acked_out(p);
  ++stats_.peers_dead;
  dead_peers_.push_back(p.rank);
  if (cfg_.on_peer_dead) cfg_.on_peer_dead(p.rank);
}

void ReliableChannel::mark_dead(int peer) {
  if (Peer* p = find_peer(peer)) declare_dead(*p);
}

std::uint64_t ReliableChannel::next_timer_ns() const {
  if (!corked_.empty() || !ack_list_.empty() || !ready_list_.empty()) return 0;
  if (next_deadline_ == kNever) return kNever;
  const std::uint64_t t = now();
  return next_deadline_ > t ? next_deadline_ - t : 0;
}

IoStatus ReliableChannel::post_get(int rank, std::span<std::byte> local,
                                   const mem::Registration& local_reg, const mem::RemoteKey& remote,
                                   std::uint64_t offset, drivers::CompletionToken token) {
  if (!caps_.rdma_get || peer_dead(rank)) return IoStatus::failed;
  for (const auto& r : rails_)
    if (r->reaches(rank)) return r->post_get(rank, local, local_reg, remote, offset, token);
  return IoStatus::failed;
}

IoStatus ReliableChannel::post_put(int rank, std::span<const std::byte> local,
                                   const mem::Registration& local_reg, const mem::RemoteKey& remote,
                                   std::uint64_t offset, drivers::CompletionToken token) {
  if (!caps_.rdma_put || peer_dead(rank)) return IoStatus::failed;
  for (const auto& r : rails_)
    if (r->reaches(rank)) return r->post_put(rank, local, local_reg, remote, offset, token);
  return IoStatus::failed;
}

bool ReliableChannel::block(std::uint64_t timeout_ns) {
  const std::uint64_t t = std::min(timeout_ns, next_timer_ns());
  if (t == 0) return true;
  return rails_.size() == 1 && rails_[0]->block(t);  // one driver to sleep in, or none
}

void ReliableChannel::register_stats(util::StatsRegistry& reg, std::string_view) const {
  using util::Unit;
  const std::string_view c = "rel";  // a layer over the rails, whatever they are called
  reg.add(c, "packets_sent", Unit::count, &stats_.data_sent, "data packets, first transmissions");
  reg.add(c, "bytes_sent", Unit::bytes, &stats_.bytes_sent,
          "upper header and payload bytes of those");
  reg.add(c, "delivered", Unit::count, &stats_.delivered, "data packets handed up");
  reg.add(c, "retransmits_timeout", Unit::count, &stats_.retransmit_timeout,
          "packets resent because the RTO expired");
  reg.add(c, "retransmits_fast", Unit::count, &stats_.retransmit_fast,
          "packets resent because a later one was acked");
  reg.add(c, "tail_probes", Unit::count, &stats_.tail_probes,
          "newest packet resent to draw an ack (tail loss)");
  reg.add(c, "spurious", Unit::count, &stats_.spurious,
          "resends the peer reported as duplicates (D-SACK)");
  reg.add(c, "drained", Unit::count, &stats_.drained, "packets read before a resend timer fired");
  reg.add(c, "duplicates", Unit::count, &stats_.duplicates,
          "data packets already received, dropped");
  reg.add(c, "corrupt", Unit::count, &stats_.corrupt, "packets failing the CRC, dropped");
  reg.add(c, "payload_unchecked", Unit::count, &stats_.payload_unchecked,
          "lent data packets sent without a payload CRC (an intact route: loopback)");
  reg.add(c, "unchecked_refused", Unit::count, &stats_.unchecked_refused,
          "packets without a payload CRC over a route not intact here, dropped (resent with it)");
  reg.add(c, "bad_key", Unit::count, &stats_.bad_key,
          "intact packets with another job's key, dropped");
  reg.add(c, "malformed", Unit::count, &stats_.malformed, "structurally invalid packets, dropped");
  reg.add(c, "beyond_window", Unit::count, &stats_.beyond_window,
          "packets past the receive window, dropped");
  reg.add(c, "from_dead", Unit::count, &stats_.from_dead,
          "packets from a peer declared dead, dropped");
  reg.add(c, "out_of_order", Unit::count, &stats_.out_of_order, "arrivals buffered ahead of a gap");
  reg.add(c, "acks_piggybacked", Unit::count, &stats_.acks_piggybacked,
          "acks carried by data packets");
  reg.add(c, "acks_standalone", Unit::count, &stats_.acks_standalone,
          "ack packets (nacks included)");
  reg.add(c, "nacks", Unit::count, &stats_.nacks_sent,
          "ack packets flagged nack (gap re-requests)");
  reg.add(c, "probes", Unit::count, &stats_.probes_sent, "keepalive probes");
  reg.add(c, "window_full", Unit::count, &stats_.window_full, "sends refused: window full");
  reg.add(c, "batches", Unit::count, &stats_.batches,
          "corked runs handed to a rail in one send_batch");
  reg.add(c, "rtt_samples", Unit::count, &stats_.rtt_samples, "round-trip time samples");
  reg.add(c, "peers_dead", Unit::count, &stats_.peers_dead, "peers declared dead");
  reg.add(
      c, "srtt_mean", Unit::nanoseconds,
      [this] {
        std::uint64_t sum = 0, n = 0;
        for (const auto& [rank, p] : peers_)
          if (p.srtt) sum += p.srtt, ++n;
        return n ? sum / n : 0;
      },
      "smoothed round-trip time, mean over the peers with a sample");
  if (rails_.size() > 1) {
    for (std::size_t r = 0; r < rails_.size(); ++r)
      reg.add(c, "rail" + std::to_string(r) + "_packets", Unit::count, &stats_.rail_packets[r],
              "packets (all types) sent over this rail");
    reg.add(c, "rail_failovers", Unit::count, &stats_.rail_failovers,
            "rails taken out of a peer's rotation");
    reg.add(c, "rail_recoveries", Unit::count, &stats_.rail_recoveries, "rails brought back");
  }
  for (std::size_t r = 0; r < rails_.size(); ++r) {
    std::string name(rails_[r]->name());
    if (rails_.size() > 1) name += "." + std::to_string(r);
    rails_[r]->register_stats(reg, name);
  }
}

}  // namespace sluice::proto::reliable
