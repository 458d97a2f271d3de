// The one-sided protocol (see rma.hpp): origin operations, the target's execution of
// emulated ones, and the queue of packets that found their driver full.
#include "proto/rma/rma.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "util/log.hpp"

namespace sluice::proto::rma {

namespace {

template <class H>
bool read_header(std::span<const std::byte> header, H& h) {
  if (header.size() < sizeof(H)) return false;
  std::memcpy(&h, header.data(), sizeof(H));
  return true;
}

mem::Registration host_reg(std::span<const std::byte> buf) {
  return mem::Registration::host(buf);
}

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Firehose attempts of one op: a stale answer (memory changed at the target) moves again;
// a third one fails it.
constexpr uint8_t kMaxFirehoseAttempts = 3;
constexpr uint8_t kPlainPackets = 0xff;  // Op::attempts: the target could not pin, go plain

}  // namespace

RmaProtocol::~RmaProtocol() = default;

void RmaProtocol::set_route(int peer, drivers::Driver* d) {
  const auto i = static_cast<std::size_t>(peer);
  if (routes_.size() <= i) {
    routes_.resize(i + 1, nullptr);
    exposures_.resize(i + 1);
    outstanding_.resize(i + 1, 0);
    errors_.resize(i + 1, Errc::ok);
  }
  routes_[i] = d;
}

uint64_t RmaProtocol::add_region(std::byte* base, std::size_t length) {
  const uint64_t id = next_region_++;
  Region& r = regions_[id];
  r.base = base;
  r.length = length;
  if (pins_ && strategy_ == PinStrategy::pin_all && length) {
    // Pin everything: the whole region, now (a failure leaves it unpinned: plain packets
    // serve it the same).
    const uint64_t page = mem::page_size();
    const auto lo = reinterpret_cast<uint64_t>(base) / page * page;
    const uint64_t hi = (reinterpret_cast<uint64_t>(base) + length + page - 1) / page * page;
    (void)pins_->pin_region(id, lo, hi);
  }
  return id;
}

void RmaProtocol::remove_region(uint64_t id) {
  auto it = regions_.find(id);
  if (it == regions_.end()) return;
  // Peers handed its registered key refuse later accesses through it themselves (an access
  // already on its way when the revoke arrives is the program's race, as with any RDMA
  // key deregistered under a peer's write). The registration goes with the region.
  for (int peer : it->second.exposed_to) {
    KeyHeader k{};
    k.type = RmaType::key_revoke;
    k.region = id;
    (void)send(peer, &k, sizeof k, {});
  }
  regions_.erase(it);
  if (pins_) pins_->unpin_region(id);
}

const char* to_string(PinStrategy s) {
  switch (s) {
    case PinStrategy::firehose:
      return "firehose";
    case PinStrategy::rndv_unpin:
      return "rndv-unpin";
    case PinStrategy::rndv_keep:
      return "rndv";
    case PinStrategy::pin_all:
      return "pin-all";
  }
  return "?";
}

const RmaProtocol::Region* RmaProtocol::region(uint64_t id, uint64_t offset, std::size_t n) const {
  auto it = regions_.find(id);
  if (it == regions_.end()) return nullptr;
  const mem::RemoteKey k{0, it->second.length, 0};
  return k.covers(offset, n) ? &it->second : nullptr;
}

RmaProtocol::Op* RmaProtocol::new_op(Op::Kind kind, int peer, uint64_t user) {
  if (!free_) {
    constexpr std::size_t kChunk = 128;
    chunks_.push_back(std::make_unique<Op[]>(kChunk));
    for (std::size_t i = 0; i < kChunk; ++i) {
      chunks_.back()[i].next_free = free_;
      free_ = &chunks_.back()[i];
    }
  }
  Op* op = free_;
  free_ = op->next_free;
  *op = Op{};
  op->kind = kind;
  op->peer = peer;
  op->user = user;
  op->live = true;
  ++live_ops_;
  ++outstanding_[static_cast<std::size_t>(peer)];
  return op;
}

RmaProtocol::Op* RmaProtocol::op_of(uint64_t id) const {
  // Ids are our own op addresses echoed back by the peer; a late answer for an op that was
  // already failed (peer_dead) finds it not live.
  Op* op = reinterpret_cast<Op*>(id);
  return op && op->live ? op : nullptr;
}

void RmaProtocol::finish(Op* op, Errc err) {
  if (op->fh) {
    hoses_->release(op->peer, op->key.addr + op->offset, op->len);
    op->fh = false;
  }
  if (op->rndv) {
    op->rndv = false;
    if (strategy_ == PinStrategy::rndv_unpin && err != Errc::peer_dead) rndv_release(op);
  }
  const auto peer = static_cast<std::size_t>(op->peer);
  --outstanding_[peer];
  --live_ops_;
  const uint64_t user = op->user;
  if (!user && err != Errc::ok && errors_[peer] == Errc::ok) errors_[peer] = err;
  op->live = false;
  op->next_free = free_;
  free_ = op;
  if (user) up_.rma_complete(user, err);
}

uint64_t RmaProtocol::outstanding(int peer) const {
  return peer < 0 ? live_ops_ : outstanding_[static_cast<std::size_t>(peer)];
}

Errc RmaProtocol::take_error(int peer) {
  Errc first = Errc::ok;
  for (std::size_t i = 0; i < errors_.size(); ++i) {
    if (peer >= 0 && i != static_cast<std::size_t>(peer)) continue;
    if (first == Errc::ok) first = errors_[i];
    errors_[i] = Errc::ok;
  }
  return first;
}

std::size_t RmaProtocol::fragment_size(int peer) const {
  return std::max<std::size_t>(1, route(peer)->caps().max_packet);
}

std::size_t RmaProtocol::max_medium(int peer, std::size_t nargs) const {
  const std::size_t n = std::min(route(peer)->caps().max_packet, kMaxMediumPacket);
  return n > nargs * 8 ? n - nargs * 8 : 0;
}

// ---- sending ------------------------------------------------------------------------------

bool RmaProtocol::send(int peer, const void* hdr, std::size_t hlen,
                       std::span<const std::byte> payload) {
  if (out_.empty()) {
    const drivers::IoStatus s =
        route(peer)->send(peer, {static_cast<const std::byte*>(hdr), hlen}, payload);
    if (s == drivers::IoStatus::done) return true;
    if (s == drivers::IoStatus::failed) return false;
  }
  // No room (or older packets wait: they go first, so each peer sees the order we sent).
  ++stats_.queued;
  Pending& p = out_.emplace_back();
  p.peer = peer;
  p.hlen = static_cast<uint8_t>(hlen);
  std::memcpy(p.hdr, hdr, hlen);
  p.owned.assign(payload.begin(), payload.end());
  return true;
}

drivers::IoStatus RmaProtocol::send_fragment(Pending& p) {
  const std::size_t n = std::min(p.frag, p.len - p.done);
  DataHeader h;
  std::memcpy(&h, p.hdr, sizeof h);
  h.offset += p.done;
  if (p.done + n == p.len) h.flags |= p.last_flags;
  const drivers::IoStatus s = route(p.peer)->send(
      p.peer, {reinterpret_cast<const std::byte*>(&h), sizeof h}, {p.data + p.done, n});
  if (s == drivers::IoStatus::done) {
    p.done += n;
    p.started = true;
  }
  return s;
}

bool RmaProtocol::send_stream(int peer, const DataHeader& hdr, std::span<const std::byte> data,
                              uint8_t last_flags, bool copy) {
  Pending p;
  p.peer = peer;
  p.hlen = sizeof hdr;
  std::memcpy(p.hdr, &hdr, sizeof hdr);
  p.data = data.data();
  p.len = data.size();
  p.frag = fragment_size(peer);
  p.last_flags = last_flags;
  p.stream = true;
  if (out_.empty()) {
    while (!p.started || p.done < p.len) {
      const drivers::IoStatus s = send_fragment(p);
      if (s == drivers::IoStatus::failed) return false;
      if (s != drivers::IoStatus::done) break;
    }
    if (p.started && p.done == p.len) return true;
  }
  ++stats_.queued;
  Pending& q = out_.emplace_back(std::move(p));
  if (copy) {
    // The caller reuses its buffer on return: keep what is left, as a stream of its own.
    q.owned.assign(q.data + q.done, q.data + q.len);
    DataHeader h;
    std::memcpy(&h, q.hdr, sizeof h);
    h.offset += q.done;
    std::memcpy(q.hdr, &h, sizeof h);
    q.data = q.owned.data();
    q.len -= q.done;
    q.done = 0;
  }
  return true;
}

bool RmaProtocol::progress() {
  bool moved = slot_wait_.empty() ? false : retry_registered();
  while (!out_.empty()) {
    Pending& p = out_.front();
    drivers::IoStatus s = drivers::IoStatus::done;
    if (p.stream) {
      while (s == drivers::IoStatus::done && (!p.started || p.done < p.len)) {
        s = send_fragment(p);
        moved |= s == drivers::IoStatus::done;
      }
    } else {
      s = route(p.peer)->send(p.peer, {p.hdr, p.hlen}, p.owned);
      moved |= s == drivers::IoStatus::done;
    }
    if (s == drivers::IoStatus::again) break;
    // Done, or failed (an unreachable peer: its ops fail through fail_peer).
    out_.pop_front();
  }
  return moved;
}

void RmaProtocol::fail_peer(int peer) {
  std::erase_if(out_, [peer](const Pending& p) { return p.peer == peer; });
  exposures_[static_cast<std::size_t>(peer)].clear();  // its waiting ops fail below
  std::erase_if(slot_wait_, [peer](const Op* op) { return op->peer == peer; });
  for (auto& chunk : chunks_)
    for (std::size_t i = 0; i < 128; ++i)
      if (chunk[i].live && chunk[i].peer == peer) finish(&chunk[i], Errc::peer_dead);
  if (hoses_) hoses_->drop_node(peer);
  if (buckets_) buckets_->drop_node(peer);
}

Errc RmaProtocol::io_error(int peer) const {
  (void)peer;
  // The driver refused the one-sided access: the remote key does not name memory of the
  // peer (EFAULT), or the peer is gone (its failure is reported to the engine as well).
  return Errc::remote_access;
}

// ---- origin operations --------------------------------------------------------------------

Errc RmaProtocol::put(int peer, std::span<const std::byte> src, const mem::RemoteKey& key,
                      uint64_t offset, uint64_t user) {
  if (!key.covers(offset, src.size())) return Errc::remote_access;
  Op* op = new_op(Op::Kind::put, peer, user);
  op->src = src.data();
  op->len = src.size();
  op->key = key;
  op->offset = offset;
  ++stats_.puts;
  stats_.put_bytes += src.size();
  drivers::Driver* d = route(peer);
  if (peer == rank_) {
    // Our own memory: checked against our table (a bad key must not crash us either).
    const Region* r = region(key.key, offset, src.size());
    if (!r || reinterpret_cast<uint64_t>(r->base) != key.addr) {
      finish(op, Errc::remote_access);
      return Errc::ok;
    }
  }
  if (one_sided_ && d->caps().rdma_put && !d->caps().needs_registration) {
    const drivers::IoStatus s =
        d->post_put(peer, src, host_reg(src), key, offset, {id_of(op), kProtocolId});
    if (s == drivers::IoStatus::done || s == drivers::IoStatus::posted) {
      ++stats_.one_sided_puts;
      if (s == drivers::IoStatus::done) finish(op, Errc::ok);
      return Errc::ok;
    }
    if (s == drivers::IoStatus::failed) {
      finish(op, io_error(peer));
      return Errc::ok;
    }
    // again: no room for a one-sided write now; the packets below need none.
  }
  if (registered_path(d)) {
    start_registered(op);
    return Errc::ok;
  }
  issue_put(op);
  return Errc::ok;
}

void RmaProtocol::issue_put(Op* op) {
  DataHeader h{};
  h.type = RmaType::put;
  h.flags = kFlagAck;
  h.op = id_of(op);
  h.region = op->key.key;
  h.offset = op->offset;
  if (firehose_wanted(op)) {
    if (hoses_) {
      const FhPath f = firehose_acquire(op);
      if (f == FhPath::inlined) return;  // the data went inside the move
      if (f == FhPath::through) h.flags |= kFlagFirehose;
    } else if (strategy_ == PinStrategy::pin_all) {
      ++pin_stats_.direct_ops;
    } else if (!op->rndv && rndv_request(op)) {
      return;  // the data goes once the target pinned
    }
  }
  if (!send_stream(op->peer, h, {op->src, op->len}, kFlagLast, false)) finish(op, Errc::peer_dead);
}

Errc RmaProtocol::get(int peer, std::span<std::byte> dst, const mem::RemoteKey& key,
                      uint64_t offset, uint64_t user) {
  if (!key.covers(offset, dst.size())) return Errc::remote_access;
  Op* op = new_op(Op::Kind::get, peer, user);
  op->buf = dst.data();
  op->len = dst.size();
  op->key = key;
  op->offset = offset;
  ++stats_.gets;
  stats_.get_bytes += dst.size();
  drivers::Driver* d = route(peer);
  if (peer == rank_) {
    const Region* r = region(key.key, offset, dst.size());
    if (!r || reinterpret_cast<uint64_t>(r->base) != key.addr) {
      finish(op, Errc::remote_access);
      return Errc::ok;
    }
  }
  if (dst.empty()) {
    finish(op, Errc::ok);
    return Errc::ok;
  }
  if (one_sided_ && d->caps().rdma_get && !d->caps().needs_registration) {
    const drivers::IoStatus s =
        d->post_get(peer, dst, host_reg(dst), key, offset, {id_of(op), kProtocolId});
    if (s == drivers::IoStatus::done || s == drivers::IoStatus::posted) {
      ++stats_.one_sided_gets;
      if (s == drivers::IoStatus::done) finish(op, Errc::ok);
      return Errc::ok;
    }
    if (s == drivers::IoStatus::failed) {
      finish(op, io_error(peer));
      return Errc::ok;
    }
  }
  if (registered_path(d)) {
    start_registered(op);
    return Errc::ok;
  }
  issue_get(op);
  return Errc::ok;
}

void RmaProtocol::issue_get(Op* op) {
  GetHeader h{};
  h.type = RmaType::get_req;
  h.op = id_of(op);
  h.region = op->key.key;
  h.offset = op->offset;
  h.length = op->len;
  op->received = 0;
  if (firehose_wanted(op)) {
    if (hoses_) {
      if (firehose_acquire(op) == FhPath::through) h.flags |= kFlagFirehose;
    } else if (strategy_ == PinStrategy::pin_all) {
      ++pin_stats_.direct_ops;
    } else if (!op->rndv && rndv_request(op)) {
      return;  // the request goes once the target pinned
    }
  }
  if (!send(op->peer, &h, sizeof h, {})) finish(op, Errc::peer_dead);
}

// ---- registered one-sided path (libfabric) ------------------------------------------------------

bool RmaProtocol::registered_path(const drivers::Driver* d) const {
  const drivers::DriverCaps& c = d->caps();
  // Not over a driver that naps (no wait object, as a libfabric provider may lack). Its provider
  // carries out a fi_write at the target only when the target's engine polls, and that work
  // produces no completion the engine sees, so a target blocked in a wait naps through it:
  // an 8 B put + flush took ~1 ms against ~0.5 us as packets (which wake the target's loop).
  return one_sided_ && c.rdma_put && c.rdma_get && c.needs_registration && !c.naps;
}

void RmaProtocol::start_registered(Op* op) {
  auto& table = exposures_[static_cast<std::size_t>(op->peer)];
  auto [it, fresh] = table.try_emplace(op->key.key);
  Exposure& x = it->second;
  switch (x.state) {
    case Exposure::State::pending: {
      op->next_wait = nullptr;
      if (x.tail)
        x.tail->next_wait = op;
      else
        x.head = op;
      x.tail = op;
      if (!fresh) return;
      KeyHeader k{};
      k.type = RmaType::key_req;
      k.region = op->key.key;
      ++stats_.key_requests;
      if (!send(op->peer, &k, sizeof k, {})) {
        table.erase(it);
        finish(op, Errc::peer_dead);
      }
      return;
    }
    case Exposure::State::ready:
      if (!slot_wait_.empty() || !post_registered(op, x)) slot_wait_.push_back(op);
      return;
    case Exposure::State::refused:
      ++stats_.refused_local;
      return finish(op, Errc::remote_access);
    case Exposure::State::packets:
      return op->kind == Op::Kind::put ? issue_put(op) : issue_get(op);
  }
}

bool RmaProtocol::post_registered(Op* op, const Exposure& x) {
  // Checked against what the target said the region is, never against the key alone (its
  // length may be stretched): nothing outside the region reaches the provider.
  const mem::RemoteKey region_bounds{0, x.length, 0};
  if (op->key.addr != x.base || !region_bounds.covers(op->offset, op->len)) {
    ++stats_.refused_local;
    finish(op, Errc::remote_access);
    return true;
  }
  drivers::Driver* d = route(op->peer);
  const bool put = op->kind == Op::Kind::put;
  const drivers::CompletionToken token{id_of(op), kProtocolId};
  const drivers::IoStatus s =
      put ? d->post_put(op->peer, {op->src, op->len}, host_reg({op->src, op->len}), x.dkey,
                        op->offset, token)
          : d->post_get(op->peer, {op->buf, op->len}, host_reg({op->buf, op->len}), x.dkey,
                        op->offset, token);
  if (s == drivers::IoStatus::done || s == drivers::IoStatus::posted) {
    ++(put ? stats_.one_sided_puts : stats_.one_sided_gets);
    if (s == drivers::IoStatus::done) finish(op, Errc::ok);
    return true;
  }
  // No operation slot or the provider's queue is full: retried after progress frees one.
  if (s == drivers::IoStatus::again) return false;
  // A local failure (too large for one fi_write, the local buffer not registrable):
  // packets, which the target checks again.
  put ? issue_put(op) : issue_get(op);
  return true;
}

bool RmaProtocol::retry_registered() {
  bool moved = false;
  while (!slot_wait_.empty()) {
    Op* op = slot_wait_.front();
    auto& table = exposures_[static_cast<std::size_t>(op->peer)];
    auto it = table.find(op->key.key);
    if (it == table.end() || it->second.state != Exposure::State::ready) {
      // Revoked meanwhile: refused here, as any later access.
      slot_wait_.pop_front();
      ++stats_.refused_local;
      finish(op, Errc::remote_access);
      moved = true;
      continue;
    }
    if (!post_registered(op, it->second)) break;
    slot_wait_.pop_front();
    moved = true;
  }
  return moved;
}

void RmaProtocol::on_key_req(int src, const KeyHeader& h) {
  KeyHeader a{};
  a.type = RmaType::key_reply;
  a.region = h.region;
  auto it = regions_.find(h.region);
  if (it == regions_.end()) {
    ++stats_.refused;
    a.status = static_cast<uint8_t>(Errc::remote_access);
    (void)send(src, &a, sizeof a, {});
    return;
  }
  Region& r = it->second;
  mem::Domain& domain = route(src)->memory_domain();
  if (r.length && !r.domain && domain.register_memory({r.base, r.length}, r.reg) == Errc::ok) {
    r.domain = &domain;
    ++stats_.exposed_regions;
  }
  if (r.length && r.domain != &domain) {
    // Not registrable (the provider refused) or registered for another driver's domain:
    // the packets serve it.
    a.status = kStatusPackets;
    (void)send(src, &a, sizeof a, {});
    return;
  }
  a.base = reinterpret_cast<uint64_t>(r.base);
  a.length = r.length;
  const mem::RemoteKey k = r.reg.remote_key();
  a.daddr = k.addr;
  a.dkey = k.key;
  if (std::find(r.exposed_to.begin(), r.exposed_to.end(), src) == r.exposed_to.end())
    r.exposed_to.push_back(src);
  ++stats_.keys_served;
  (void)send(src, &a, sizeof a, {});
}

void RmaProtocol::on_key_reply(int src, const KeyHeader& h) {
  auto& table = exposures_[static_cast<std::size_t>(src)];
  auto it = table.find(h.region);
  if (it == table.end() || it->second.state != Exposure::State::pending) return;
  Exposure& x = it->second;
  if (h.status == 0) {
    x.state = Exposure::State::ready;
    x.base = h.base;
    x.length = h.length;
    x.dkey = mem::RemoteKey{h.daddr, h.length, h.dkey};
  } else {
    x.state = h.status == kStatusPackets ? Exposure::State::packets : Exposure::State::refused;
  }
  Op* op = x.head;
  x.head = x.tail = nullptr;
  const Exposure answer = x;  // the ops below may complete requests; keep no reference
  while (op) {
    Op* next = op->next_wait;
    op->next_wait = nullptr;
    switch (answer.state) {
      case Exposure::State::ready:
        if (!slot_wait_.empty() || !post_registered(op, answer)) slot_wait_.push_back(op);
        break;
      case Exposure::State::packets:
        op->kind == Op::Kind::put ? issue_put(op) : issue_get(op);
        break;
      default:
        ++stats_.refused_local;
        finish(op, Errc::remote_access);
        break;
    }
    op = next;
  }
}

void RmaProtocol::on_key_revoke(int src, const KeyHeader& h) {
  auto& table = exposures_[static_cast<std::size_t>(src)];
  auto it = table.find(h.region);
  if (it != table.end() && it->second.state != Exposure::State::pending)
    it->second.state = Exposure::State::refused;
}

// ---- Firehose -----------------------------------------------------------------------------

Errc RmaProtocol::enable_firehose(const mem::FirehoseParams& params, std::size_t threshold,
                                  mem::Domain& domain, mem::InvalidationMonitor* monitor) {
  return enable_pinning(PinStrategy::firehose, params, threshold, domain, monitor);
}

Errc RmaProtocol::enable_pinning(PinStrategy strategy, const mem::FirehoseParams& params,
                                 std::size_t threshold, mem::Domain& domain,
                                 mem::InvalidationMonitor* monitor) {
  if (params.validate() != Errc::ok) return Errc::invalid_argument;
  strategy_ = strategy;
  fh_params_ = params;
  fh_threshold_ = threshold;
  if (strategy == PinStrategy::firehose) {
    hoses_ = std::make_unique<mem::FirehoseTable>(params);
    buckets_ = std::make_unique<mem::BucketTable>(domain, params, monitor);
  } else {
    pins_ = std::make_unique<mem::PinTable>(domain, params.bucket_bytes,
                                            strategy == PinStrategy::rndv_unpin);
  }
  return Errc::ok;
}

bool RmaProtocol::firehose_wanted(const Op* op) const {
  return (hoses_ || pins_) && op->peer != rank_ && op->len > 0 && op->len >= fh_threshold_ &&
         op->attempts != kPlainPackets;
}

void RmaProtocol::buckets_of(uint64_t addr, std::size_t len, std::vector<uint64_t>& out) const {
  out.clear();
  if (len == 0) return;
  for (uint64_t b = fh_params_.bucket_of(addr); b < addr + len; b += fh_params_.bucket_bytes)
    out.push_back(b);
}

bool RmaProtocol::rndv_request(Op* op) {
  buckets_of(op->key.addr + op->offset, op->len, fh_pin_);
  if (sizeof(MoveHeader) + 8 * fh_pin_.size() > route(op->peer)->caps().max_packet) {
    ++fh_stats_.fallbacks;
    return false;
  }
  MoveHeader m{};
  m.type = RmaType::rndv_pin;
  m.npin = static_cast<uint32_t>(fh_pin_.size());
  m.op = id_of(op);
  m.region = op->key.key;
  m.sent = now_ns();
  ++pin_stats_.handshake_ops;
  ++pin_stats_.handshakes;
  if (!send(op->peer, &m, sizeof m, std::as_bytes(std::span(fh_pin_)))) {
    finish(op, Errc::peer_dead);
    return true;
  }
  return true;
}

void RmaProtocol::rndv_release(Op* op) {
  buckets_of(op->key.addr + op->offset, op->len, fh_pin_);
  MoveHeader m{};
  m.type = RmaType::rndv_release;
  m.npin = static_cast<uint32_t>(fh_pin_.size());
  m.region = op->key.key;
  ++pin_stats_.releases;
  (void)send(op->peer, &m, sizeof m, std::as_bytes(std::span(fh_pin_)));
}

Errc RmaProtocol::clamp_pins(uint64_t region_id, std::span<const uint64_t> pins) {
  fh_pins_.clear();
  auto it = regions_.find(region_id);
  if (it == regions_.end()) return Errc::remote_access;
  const uint64_t B = fh_params_.bucket_bytes;
  const uint64_t page = mem::page_size();
  const auto base = reinterpret_cast<uint64_t>(it->second.base);
  const uint64_t plo = base - base % page;
  const uint64_t phi = (base + it->second.length + page - 1) / page * page;
  for (const uint64_t b : pins) {
    const uint64_t lo = std::max(b, plo), hi = std::min(b + B, phi);
    if (b % B != 0 || lo >= hi) {
      fh_pins_.clear();
      return Errc::remote_access;
    }
    fh_pins_.push_back({b, lo, hi});
  }
  return Errc::ok;
}

void RmaProtocol::on_rndv_pin(int src, const MoveHeader& h, std::span<const std::byte> payload) {
  if (payload.size() != std::size_t{h.npin} * 8) {
    ++stats_.unknown_packets;
    return;
  }
  fh_payload_.resize(h.npin);
  if (h.npin) std::memcpy(fh_payload_.data(), payload.data(), payload.size());
  Errc e = pins_ ? clamp_pins(h.region, fh_payload_) : Errc::invalid_argument;
  if (e == Errc::ok) e = pins_->pin(fh_pins_);
  MoveHeader r{};
  r.type = RmaType::rndv_pin_reply;
  r.status = static_cast<uint8_t>(e);
  r.op = h.op;
  r.region = h.region;
  r.sent = h.sent;
  send(src, &r, sizeof r, {});
}

void RmaProtocol::on_rndv_pin_reply(const MoveHeader& h) {
  ++pin_stats_.handshake_replies;
  pin_stats_.handshake_ns += now_ns() - h.sent;
  Op* op = op_of(h.op);
  if (!op) return;
  if (h.status == 0) {
    op->rndv = true;
  } else {
    op->attempts = kPlainPackets;  // the target could not pin: plain packets
    ++fh_stats_.fallbacks;
  }
  if (op->kind == Op::Kind::put)
    issue_put(op);
  else
    issue_get(op);
}

void RmaProtocol::on_rndv_release(const MoveHeader& h, std::span<const std::byte> payload) {
  if (!pins_ || payload.size() != std::size_t{h.npin} * 8) {
    ++stats_.unknown_packets;
    return;
  }
  fh_payload_.resize(h.npin);
  if (h.npin) std::memcpy(fh_payload_.data(), payload.data(), payload.size());
  pins_->release(fh_payload_);
}

RmaProtocol::FhPath RmaProtocol::firehose_acquire(Op* op) {
  const mem::FirehoseParams& p = hoses_->params();
  const uint64_t addr = op->key.addr + op->offset;
  const uint64_t buckets =
      (p.bucket_of(addr + op->len - 1) - p.bucket_of(addr)) / p.bucket_bytes + 1;
  // The move must fit in one packet (a release and a pin per bucket at most), and the op in
  // the node's firehoses.
  if (buckets > p.firehoses_per_node() ||
      sizeof(MoveHeader) + 16 * buckets > route(op->peer)->caps().max_packet) {
    ++fh_stats_.fallbacks;
    return FhPath::plain;
  }
  const auto r = hoses_->acquire(op->peer, addr, op->len, fh_release_, fh_pin_);
  if (r == mem::FirehoseTable::Acquire::no_room) {
    ++fh_stats_.fallbacks;
    return FhPath::plain;
  }
  op->fh = true;
  ++fh_stats_.ops;
  if (r == mem::FirehoseTable::Acquire::hit) return FhPath::through;
  MoveHeader m{};
  m.type = RmaType::fh_move;
  m.nrelease = static_cast<uint32_t>(fh_release_.size());
  m.npin = static_cast<uint32_t>(fh_pin_.size());
  m.op = id_of(op);
  m.region = op->key.key;
  m.sent = now_ns();
  fh_payload_.assign(fh_release_.begin(), fh_release_.end());
  fh_payload_.insert(fh_payload_.end(), fh_pin_.begin(), fh_pin_.end());
  const std::size_t lists = fh_payload_.size() * 8;
  if (op->kind == Op::Kind::put && op->len <= kMaxInlinePut &&
      sizeof m + lists + 8 + op->len <= route(op->peer)->caps().max_packet) {
    // A small put rides in the move ([GASNet-Firehose] 3.2): one message, and the move's
    // reply completes it.
    m.flags = kMoveInlinePut;
    m.inline_len = static_cast<uint32_t>(op->len);
    fh_bytes_.resize(lists + 8 + op->len);
    if (lists) std::memcpy(fh_bytes_.data(), fh_payload_.data(), lists);
    std::memcpy(fh_bytes_.data() + lists, &op->offset, 8);
    std::memcpy(fh_bytes_.data() + lists + 8, op->src, op->len);
    ++fh_stats_.inline_puts;
    if (!send(op->peer, &m, sizeof m, fh_bytes_)) finish(op, Errc::peer_dead);
    return FhPath::inlined;
  }
  // Ahead of the op on the same ordered route: the target pins before the op arrives. A
  // failed send (the peer is gone) fails the op's own packets too.
  (void)send(op->peer, &m, sizeof m, std::as_bytes(std::span(fh_payload_)));
  return FhPath::through;
}

void RmaProtocol::firehose_retry(Op* op) {
  ++fh_stats_.stale_retries;
  const uint64_t addr = op->key.addr + op->offset;
  if (op->fh) {
    hoses_->release(op->peer, addr, op->len);
    op->fh = false;
  }
  hoses_->forget(op->peer, addr, op->len);
  op->err = Errc::ok;
  const Errc moved = op->move_err;
  op->move_err = Errc::ok;
  if (op->attempts != kPlainPackets) ++op->attempts;
  // Memory the target does not have (freed): the op fails; never written blindly.
  if (moved == Errc::remote_access ||
      (moved == Errc::ok && op->attempts >= kMaxFirehoseAttempts && op->attempts != kPlainPackets))
    return finish(op, Errc::remote_access);
  if (moved != Errc::ok) {
    // The target could not pin (its domain's limit, or it runs without Firehose): the op
    // goes as plain packets, carried out without a pinned bucket.
    op->attempts = kPlainPackets;
    ++fh_stats_.fallbacks;
  }
  if (op->kind == Op::Kind::put)
    issue_put(op);
  else
    issue_get(op);
}

bool RmaProtocol::firehose_mapped(int src, const std::byte* addr, std::size_t n) {
  if (!buckets_) return false;
  buckets_->process_invalidations();
  return buckets_->mapped(src, reinterpret_cast<uint64_t>(addr), n);
}

void RmaProtocol::on_move(int src, const MoveHeader& h, std::span<const std::byte> payload) {
  const std::size_t n = std::size_t{h.nrelease} + h.npin;
  const bool inlined = (h.flags & kMoveInlinePut) != 0;
  const std::size_t extra = inlined ? 8 + std::size_t{h.inline_len} : 0;
  if (h.nrelease > payload.size() || h.npin > payload.size() || payload.size() != n * 8 + extra) {
    ++stats_.unknown_packets;
    return;
  }
  fh_payload_.resize(n);
  if (n) std::memcpy(fh_payload_.data(), payload.data(), n * 8);
  const std::span<const uint64_t> release(fh_payload_.data(), h.nrelease);
  const std::span<const uint64_t> pins(fh_payload_.data() + h.nrelease, h.npin);
  Errc e = Errc::ok;
  if (!buckets_) {
    e = Errc::invalid_argument;  // this rank runs without Firehose
  } else {
    // Each bucket is pinned over the pages of the registered memory it belongs to only.
    fh_pins_.clear();
    auto it = regions_.find(h.region);
    if (it == regions_.end()) {
      e = Errc::remote_access;
    } else {
      const uint64_t B = buckets_->params().bucket_bytes;
      const uint64_t page = mem::page_size();
      const auto base = reinterpret_cast<uint64_t>(it->second.base);
      const uint64_t plo = base - base % page;
      const uint64_t phi = (base + it->second.length + page - 1) / page * page;
      for (const uint64_t b : pins) {
        const uint64_t lo = std::max(b, plo), hi = std::min(b + B, phi);
        if (b % B != 0 || lo >= hi) {
          e = Errc::remote_access;
          break;
        }
        fh_pins_.push_back({b, lo, hi});
      }
    }
    if (e != Errc::ok) fh_pins_.clear();  // the releases stand
    const Errc m = buckets_->move(src, release, fh_pins_);
    if (e == Errc::ok) e = m;
  }
  MoveHeader r{};
  if (inlined) {
    // The put inside: written once its buckets are mapped for the sender, as a put through
    // firehoses would be.
    uint8_t ps = static_cast<uint8_t>(e);
    if (e == Errc::ok) {
      uint64_t off = 0;
      std::memcpy(&off, payload.data() + n * 8, 8);
      const std::byte* data = payload.data() + n * 8 + 8;
      const Region* reg = region(h.region, off, h.inline_len);
      if (!reg) {
        ++stats_.refused;
        ps = static_cast<uint8_t>(Errc::remote_access);
      } else if (!firehose_mapped(src, reg->base + off, h.inline_len)) {
        ++fh_stats_.refused_stale;
        ps = kStatusStale;
      } else {
        if (h.inline_len) std::memcpy(reg->base + off, data, h.inline_len);
        ++stats_.served_puts;
        ++fh_stats_.inline_served;
      }
    }
    r.flags = kMoveInlinePut;
    r.put_status = ps;
  }
  r.type = RmaType::fh_move_reply;
  r.status = static_cast<uint8_t>(e);
  r.npin = h.npin;
  r.op = h.op;
  r.region = h.region;
  r.sent = h.sent;
  send(src, &r, sizeof r, std::as_bytes(pins));
}

void RmaProtocol::on_move_reply(int src, const MoveHeader& h, std::span<const std::byte> payload) {
  if (!hoses_ || payload.size() != std::size_t{h.npin} * 8) {
    ++stats_.unknown_packets;
    return;
  }
  fh_payload_.resize(h.npin);
  if (h.npin) std::memcpy(fh_payload_.data(), payload.data(), payload.size());
  hoses_->confirm(src, fh_payload_, h.status == 0);
  ++fh_stats_.move_replies;
  fh_stats_.move_ns += now_ns() - h.sent;
  Op* op = op_of(h.op);
  if (h.status != 0 && op) op->move_err = static_cast<Errc>(h.status);
  if (!(h.flags & kMoveInlinePut) || !op) return;
  // The put that travelled inside: written, or moved again (firehose_retry decides from the
  // move's status: refused memory fails it, a target that could not pin sends it plain).
  if (h.put_status == 0) return finish(op, Errc::ok);
  firehose_retry(op);
}

Errc RmaProtocol::atomic(int peer, AtomicOp aop, unsigned width, const mem::RemoteKey& key,
                         uint64_t offset, uint64_t operand, uint64_t compare, void* result,
                         uint64_t user) {
  if (width != 4 && width != 8) return Errc::invalid_argument;
  if ((key.addr + offset) % width != 0) return Errc::invalid_argument;  // misaligned
  if (!key.covers(offset, width)) return Errc::remote_access;
  Op* op = new_op(Op::Kind::atomic, peer, user);
  op->width = static_cast<uint8_t>(width);
  op->result = result;
  ++stats_.atomics;
  AtomicHeader h{};
  h.type = RmaType::atomic_req;
  h.op = aop;
  h.width = static_cast<uint8_t>(width);
  h.op_id = id_of(op);
  h.region = key.key;
  h.offset = offset;
  h.operand = operand;
  h.compare = compare;
  if (!send(peer, &h, sizeof h, {})) finish(op, Errc::peer_dead);
  return Errc::ok;
}

Errc RmaProtocol::am(int peer, bool reply, AmKind kind, uint8_t handler,
                     std::span<const uint64_t> args, std::span<const std::byte> payload,
                     const mem::RemoteKey& key, uint64_t offset) {
  if (args.size() > kMaxAmArgs) return Errc::invalid_argument;
  const std::size_t arg_bytes = args.size() * sizeof(uint64_t);
  AmHeader h{};
  h.type = RmaType::am;
  h.kind = kind;
  h.handler = handler;
  h.nargs = static_cast<uint8_t>(args.size());
  h.flags = reply ? kFlagReply : 0;
  if (kind == AmKind::medium && payload.size() > max_medium(peer, args.size()))
    return Errc::invalid_argument;
  if (kind == AmKind::long_am) {
    if (!key.covers(offset, payload.size())) return Errc::remote_access;
    h.region = key.key;
    h.offset = offset;
    h.length = payload.size();
    // The data first, as puts without ack (the target deposits them in its region); the am
    // packet follows on the same ordered route.
    DataHeader d{};
    d.type = RmaType::put;
    d.region = key.key;
    d.offset = offset;
    if (!payload.empty() && !send_stream(peer, d, payload, kFlagLast, true)) return Errc::peer_dead;
  }
  am_scratch_.resize(arg_bytes + (kind == AmKind::medium ? payload.size() : 0));
  if (arg_bytes) std::memcpy(am_scratch_.data(), args.data(), arg_bytes);
  if (kind == AmKind::medium) {
    h.length = payload.size();
    if (!payload.empty())
      std::memcpy(am_scratch_.data() + arg_bytes, payload.data(), payload.size());
  }
  ++stats_.am_sent;
  return send(peer, &h, sizeof h, am_scratch_) ? Errc::ok : Errc::peer_dead;
}

// ---- arrivals -----------------------------------------------------------------------------

drivers::Placement RmaProtocol::placement(int src, std::span<const std::byte> header,
                                          std::size_t payload_size) {
  DataHeader h;
  if (!read_header(header, h) || h.status != 0) return {};
  if (h.type == RmaType::put) {
    // Straight into the target region (a byte-stream driver then copies only once).
    const Region* r = region(h.region, h.offset, payload_size);
    if (!r) return {};
    std::byte* dst = r->base + h.offset;
    // Through a firehose: only into buckets pinned for the sender (else on_put refuses).
    if ((h.flags & kFlagFirehose) && !firehose_mapped(src, dst, payload_size)) return {};
    return {{dst, payload_size}};
  }
  if (h.type == RmaType::get_reply) {
    const Op* op = op_of(h.op);
    if (op && op->kind == Op::Kind::get && h.offset <= op->len &&
        payload_size <= op->len - h.offset)
      return {{op->buf + h.offset, payload_size}};
  }
  return {};
}

void RmaProtocol::on_packet(int src, std::span<const std::byte> header,
                            std::span<const std::byte> payload) {
  const auto type = header.empty() ? RmaType{} : static_cast<RmaType>(header[0]);
  switch (type) {
    case RmaType::put: {
      DataHeader h;
      if (read_header(header, h)) return on_put(src, h, payload);
      break;
    }
    case RmaType::put_ack: {
      AckHeader h;
      if (!read_header(header, h)) break;
      if (Op* op = op_of(h.op)) {
        if (h.status != 0 && op->err == Errc::ok) op->err = static_cast<Errc>(h.status);
        if (h.flags & kFlagLast) {
          if (static_cast<uint8_t>(op->err) == kStatusStale)
            firehose_retry(op);
          else
            finish(op, op->err);
        }
      }
      return;
    }
    case RmaType::get_req: {
      GetHeader h;
      if (read_header(header, h)) return on_get_req(src, h);
      break;
    }
    case RmaType::get_reply: {
      DataHeader h;
      if (read_header(header, h)) return on_get_reply(h, payload);
      break;
    }
    case RmaType::atomic_req: {
      AtomicHeader h;
      if (read_header(header, h)) return on_atomic(src, h);
      break;
    }
    case RmaType::atomic_reply: {
      AtomicReply h;
      if (!read_header(header, h)) break;
      if (Op* op = op_of(h.op)) {
        if (h.status == 0 && op->result) {
          if (op->width == 4) {
            const auto v = static_cast<uint32_t>(h.result);
            std::memcpy(op->result, &v, 4);
          } else {
            std::memcpy(op->result, &h.result, 8);
          }
        }
        finish(op, static_cast<Errc>(h.status));
      }
      return;
    }
    case RmaType::am: {
      AmHeader h;
      if (read_header(header, h)) return on_am(src, h, payload);
      break;
    }
    case RmaType::fh_move: {
      MoveHeader h;
      if (read_header(header, h)) return on_move(src, h, payload);
      break;
    }
    case RmaType::fh_move_reply: {
      MoveHeader h;
      if (read_header(header, h)) return on_move_reply(src, h, payload);
      break;
    }
    case RmaType::rndv_pin: {
      MoveHeader h;
      if (read_header(header, h)) return on_rndv_pin(src, h, payload);
      break;
    }
    case RmaType::rndv_pin_reply: {
      MoveHeader h;
      if (read_header(header, h)) return on_rndv_pin_reply(h);
      break;
    }
    case RmaType::rndv_release: {
      MoveHeader h;
      if (read_header(header, h)) return on_rndv_release(h, payload);
      break;
    }
    case RmaType::key_req: {
      KeyHeader h;
      if (read_header(header, h)) return on_key_req(src, h);
      break;
    }
    case RmaType::key_reply: {
      KeyHeader h;
      if (read_header(header, h)) return on_key_reply(src, h);
      break;
    }
    case RmaType::key_revoke: {
      KeyHeader h;
      if (read_header(header, h)) return on_key_revoke(src, h);
      break;
    }
  }
  ++stats_.unknown_packets;
}

void RmaProtocol::on_put(int src, const DataHeader& h, std::span<const std::byte> payload) {
  const Region* r = region(h.region, h.offset, payload.size());
  Errc err = Errc::ok;
  if (r && (h.flags & kFlagFirehose) && r->base + h.offset != payload.data() &&
      !firehose_mapped(src, r->base + h.offset, payload.size())) {
    // Not (or no longer) pinned for the sender: nothing written, the origin moves again.
    ++fh_stats_.refused_stale;
    err = static_cast<Errc>(kStatusStale);
  } else if (r) {
    std::byte* dst = r->base + h.offset;
    if (dst != payload.data() && !payload.empty()) std::memcpy(dst, payload.data(), payload.size());
    if (h.flags & kFlagLast) ++stats_.served_puts;
  } else {
    ++stats_.refused;
    err = Errc::remote_access;
  }
  if (!(h.flags & kFlagAck)) {
    if (err != Errc::ok)
      util::log(util::LogLevel::warn,
                "rank %d's active message data was refused: no such registered memory here", src);
    return;
  }
  // Answer on the last fragment, or at once on an error (then once more with the last).
  if (err == Errc::ok && !(h.flags & kFlagLast)) return;
  AckHeader a{};
  a.type = RmaType::put_ack;
  a.flags = h.flags & kFlagLast;
  a.status = static_cast<uint8_t>(err);
  a.op = h.op;
  send(src, &a, sizeof a, {});
}

void RmaProtocol::on_get_req(int src, const GetHeader& h) {
  DataHeader d{};
  d.type = RmaType::get_reply;
  d.op = h.op;
  const Region* r = region(h.region, h.offset, h.length);
  if (!r) {
    ++stats_.refused;
    d.flags = kFlagLast;
    d.status = static_cast<uint8_t>(Errc::remote_access);
    send(src, &d, sizeof d, {});
    return;
  }
  if ((h.flags & kFlagFirehose) && !firehose_mapped(src, r->base + h.offset, h.length)) {
    ++fh_stats_.refused_stale;
    d.flags = kFlagLast;
    d.status = kStatusStale;
    send(src, &d, sizeof d, {});
    return;
  }
  ++stats_.served_gets;
  send_stream(src, d, {r->base + h.offset, h.length}, kFlagLast, false);
}

void RmaProtocol::on_get_reply(const DataHeader& h, std::span<const std::byte> payload) {
  Op* op = op_of(h.op);
  if (!op || op->kind != Op::Kind::get) return;
  if (h.status == kStatusStale) return firehose_retry(op);
  if (h.status != 0) return finish(op, static_cast<Errc>(h.status));
  if (h.offset > op->len || payload.size() > op->len - h.offset) return finish(op, Errc::internal);
  std::byte* dst = op->buf + h.offset;
  if (dst != payload.data() && !payload.empty()) std::memcpy(dst, payload.data(), payload.size());
  op->received += payload.size();
  if (op->received == op->len) finish(op, Errc::ok);
}

void RmaProtocol::on_atomic(int src, const AtomicHeader& h) {
  AtomicReply a{};
  a.type = RmaType::atomic_reply;
  a.op = h.op_id;
  const Region* r = (h.width == 4 || h.width == 8) ? region(h.region, h.offset, h.width) : nullptr;
  if (!r || reinterpret_cast<uintptr_t>(r->base + h.offset) % h.width != 0) {
    ++stats_.refused;
    a.status = static_cast<uint8_t>(Errc::remote_access);
    send(src, &a, sizeof a, {});
    return;
  }
  ++stats_.served_atomics;
  // Every remote atomic on this memory runs here, one at a time (the engine is single-
  // threaded); the __atomic builtins also keep the owner's own atomic loads coherent.
  auto apply = [&](auto* p, auto operand, auto compare) -> uint64_t {
    switch (h.op) {
      case AtomicOp::fetch_add:
        return __atomic_fetch_add(p, operand, __ATOMIC_SEQ_CST);
      case AtomicOp::compare_swap:
        __atomic_compare_exchange_n(p, &compare, operand, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
        return compare;  // the old value, swapped or not
      case AtomicOp::swap:
        return __atomic_exchange_n(p, operand, __ATOMIC_SEQ_CST);
    }
    a.status = static_cast<uint8_t>(Errc::invalid_argument);
    return 0;
  };
  std::byte* at = r->base + h.offset;
  if (h.width == 4)
    a.result = apply(reinterpret_cast<uint32_t*>(at), static_cast<uint32_t>(h.operand),
                     static_cast<uint32_t>(h.compare));
  else
    a.result = apply(reinterpret_cast<uint64_t*>(at), h.operand, h.compare);
  send(src, &a, sizeof a, {});
}

void RmaProtocol::on_am(int src, const AmHeader& h, std::span<const std::byte> payload) {
  const std::size_t arg_bytes = std::size_t{h.nargs} * sizeof(uint64_t);
  if (h.nargs > kMaxAmArgs || payload.size() < arg_bytes) {
    ++stats_.unknown_packets;
    return;
  }
  uint64_t args[kMaxAmArgs];
  if (arg_bytes) std::memcpy(args, payload.data(), arg_bytes);
  AmArrival a;
  a.src = src;
  a.reply = (h.flags & kFlagReply) != 0;
  a.handler = h.handler;
  a.kind = h.kind;
  a.args = {args, h.nargs};
  std::vector<std::byte> copy;  // a medium payload, handed over as a writable copy
  if (h.kind == AmKind::medium) {
    // A handler may send (its reply) before returning, and a reply to ourselves comes back
    // through a later poll, never nested: one buffer serves, reused across messages.
    copy.swap(am_buf_);
    copy.assign(payload.begin() + static_cast<std::ptrdiff_t>(arg_bytes), payload.end());
    a.payload = copy;
  } else if (h.kind == AmKind::long_am) {
    const Region* r = region(h.region, h.offset, h.length);
    if (!r) {
      ++stats_.refused;
      util::log(util::LogLevel::warn,
                "rank %d's long active message names no registered memory here: dropped", src);
      return;
    }
    a.payload = {r->base + h.offset, h.length};
  } else if (h.kind != AmKind::short_am) {
    ++stats_.unknown_packets;
    return;
  }
  ++stats_.am_handled;
  up_.on_am(a);
  if (h.kind == AmKind::medium) copy.swap(am_buf_);
}

void RmaProtocol::on_completion(drivers::CompletionToken token, Errc status) {
  if (Op* op = op_of(token.id)) finish(op, status == Errc::ok ? Errc::ok : status);
}

void RmaProtocol::register_stats(util::StatsRegistry& reg) const {
  using util::Unit;
  reg.add("rma", "puts", Unit::count, &stats_.puts, "puts started");
  reg.add("rma", "put_bytes", Unit::bytes, &stats_.put_bytes, "bytes of those");
  reg.add("rma", "gets", Unit::count, &stats_.gets, "gets started");
  reg.add("rma", "get_bytes", Unit::bytes, &stats_.get_bytes, "bytes of those");
  reg.add("rma", "one_sided_puts", Unit::count, &stats_.one_sided_puts,
          "puts the driver wrote into the target's memory itself (the target ran nothing)");
  reg.add("rma", "one_sided_gets", Unit::count, &stats_.one_sided_gets,
          "gets the driver read from the target's memory itself");
  reg.add("rma", "atomics", Unit::count, &stats_.atomics, "remote atomics started");
  reg.add("rma", "served_puts", Unit::count, &stats_.served_puts,
          "puts this rank's engine carried out as the target");
  reg.add("rma", "served_gets", Unit::count, &stats_.served_gets,
          "gets this rank's engine answered as the target");
  reg.add("rma", "served_atomics", Unit::count, &stats_.served_atomics,
          "atomics this rank's engine executed as the target");
  reg.add("rma", "am_sent", Unit::count, &stats_.am_sent, "active messages sent (replies too)");
  reg.add("rma", "am_handled", Unit::count, &stats_.am_handled, "active message handlers run");
  reg.add("rma", "refused", Unit::count, &stats_.refused,
          "accesses refused as the target: unknown remote key or outside its memory");
  reg.add("rma", "queued", Unit::count, &stats_.queued,
          "packets (or runs of fragments) that found the driver full and waited");
  reg.add("rma", "unknown_packets", Unit::count, &stats_.unknown_packets,
          "malformed one-sided packets dropped");
  reg.add("rma", "key_requests", Unit::count, &stats_.key_requests,
          "registered one-sided path (libfabric): regions asked of their target before the first "
          "fi_write / fi_read into them");
  reg.add("rma", "keys_served", Unit::count, &stats_.keys_served,
          "registered one-sided path: regions described to a peer as the target");
  reg.add("rma", "exposed_regions", Unit::count, &stats_.exposed_regions,
          "registered one-sided path: regions this target registered in the driver's domain");
  reg.add("rma", "refused_local", Unit::count, &stats_.refused_local,
          "registered one-sided path: accesses refused at the origin against the target's "
          "description (never posted)");
  if (pins_) {
    const mem::PinStats& t = pins_->stats();
    const PinProtoStats& ps = pin_stats_;
    reg.add_info(
        "pinning", "strategy", [this] { return std::string(to_string(strategy_)); },
        "how the packet path's target memory is pinned (SLUICE_RMA_FIREHOSE)");
    reg.add("pinning", "direct_ops", Unit::count, &ps.direct_ops,
            "eligible puts and gets sent with no handshake (pinned already)");
    reg.add("pinning", "handshake_ops", Unit::count, &ps.handshake_ops,
            "eligible puts and gets that asked the target to pin first");
    reg.add("pinning", "handshakes", Unit::count, &ps.handshakes, "pin requests sent");
    reg.add("pinning", "handshake_time", Unit::nanoseconds, &ps.handshake_ns,
            "sum of the pin requests' round trips");
    reg.add(
        "pinning", "handshake_avg", Unit::nanoseconds,
        [&ps] { return ps.handshake_replies ? ps.handshake_ns / ps.handshake_replies : 0; },
        "mean pin request round trip");
    reg.add("pinning", "releases", Unit::count, &ps.releases,
            "release requests sent (rendezvous with unpin)");
    reg.add("pinning", "fallbacks", Unit::count, &fh_stats_.fallbacks,
            "eligible puts and gets sent as plain packets (too many buckets, target refused)");
    reg.add("pinning", "requests_served", Unit::count, &t.requests,
            "pin requests served as the target");
    reg.add("pinning", "pins", Unit::count, &t.pins, "registrations made (buckets or regions)");
    reg.add("pinning", "unpins", Unit::count, &t.unpins, "registrations released");
    reg.add("pinning", "pinned_bytes", Unit::bytes, &t.pinned_bytes, "bytes pinned now for peers");
    reg.add("pinning", "pinned_peak", Unit::bytes, &t.pinned_peak, "most bytes pinned at once");
    return;
  }
  if (!hoses_) return;
  const mem::FirehoseStats& o = hoses_->stats();
  {
    // The figures every strategy reports, for comparing them (rma-ws, cannon).
    const mem::BucketStats& t = buckets_->stats();
    reg.add_info(
        "pinning", "strategy", [] { return std::string("firehose"); },
        "how the packet path's target memory is pinned (SLUICE_RMA_FIREHOSE)");
    reg.add("pinning", "direct_ops", Unit::count, &o.hits,
            "eligible puts and gets sent with no handshake (firehose hits)");
    reg.add("pinning", "handshake_ops", Unit::count, &o.misses,
            "eligible puts and gets that needed a handshake (firehose misses)");
    reg.add("pinning", "handshakes", Unit::count, &o.moves, "move requests sent");
    reg.add("pinning", "handshake_time", Unit::nanoseconds, &fh_stats_.move_ns,
            "sum of the moves' round trips");
    reg.add(
        "pinning", "handshake_avg", Unit::nanoseconds,
        [this] { return fh_stats_.move_replies ? fh_stats_.move_ns / fh_stats_.move_replies : 0; },
        "mean move round trip");
    reg.add("pinning", "pinned_bytes", Unit::bytes, &t.pinned_bytes, "bytes pinned now for peers");
    reg.add("pinning", "pinned_peak", Unit::bytes, &t.pinned_peak, "most bytes pinned at once");
    reg.add("pinning", "unpins", Unit::count, &t.unpins, "buckets unpinned");
  }
  const mem::BucketStats& t = buckets_->stats();
  reg.add("firehose", "hits", Unit::count, &o.hits,
          "puts and gets whose target range was mapped by firehoses (no handshake)");
  reg.add("firehose", "misses", Unit::count, &o.misses, "puts and gets that needed a move");
  reg.add("firehose", "moves", Unit::count, &o.moves, "move requests sent");
  reg.add("firehose", "moved_buckets", Unit::count, &o.moved_buckets,
          "buckets those moves asked to map");
  reg.add("firehose", "recycled", Unit::count, &o.recycled,
          "firehoses unmapped by a move to make room (the oldest unreferenced)");
  reg.add(
      "firehose", "one_sided_permille", Unit::count,
      [&o] { return o.hits + o.misses ? o.hits * 1000 / (o.hits + o.misses) : 0; },
      "share of firehose puts and gets that were hits, per mille");
  reg.add("firehose", "fallbacks", Unit::count, &fh_stats_.fallbacks,
          "eligible puts and gets sent as plain packets (no free firehose, too many buckets, "
          "the target could not pin)");
  reg.add("firehose", "stale_retries", Unit::count, &fh_stats_.stale_retries,
          "ops the target refused through a firehose it no longer maps (memory freed), moved "
          "again");
  reg.add(
      "firehose", "move_avg", Unit::nanoseconds,
      [this] { return fh_stats_.move_replies ? fh_stats_.move_ns / fh_stats_.move_replies : 0; },
      "mean move round trip (request sent to reply handled)");
  reg.add("firehose", "move_time", Unit::nanoseconds, &fh_stats_.move_ns,
          "sum of the move round trips");
  reg.add("firehose", "served_moves", Unit::count, &t.moves, "move requests served as the target");
  reg.add("firehose", "pins", Unit::count, &t.pins, "buckets pinned (registrations made)");
  reg.add("firehose", "victims_reused", Unit::count, &t.victims_reused,
          "firehoses mapped on a bucket taken back from the victim FIFO (no pinning)");
  reg.add("firehose", "shared", Unit::count, &t.shared,
          "firehoses mapped on a bucket another peer's firehose already held");
  reg.add("firehose", "unpins", Unit::count, &t.unpins, "buckets unpinned");
  reg.add("firehose", "invalidations", Unit::count, &t.invalidations,
          "buckets dropped because their memory was freed or replaced");
  reg.add("firehose", "refused_moves", Unit::count, &t.refused,
          "moves refused (unmapped memory, over F, the domain could not pin)");
  reg.add("firehose", "inline_puts", Unit::count, &fh_stats_.inline_puts,
          "small puts sent inside the move request their miss needed (no put packet)");
  reg.add("firehose", "inline_served", Unit::count, &fh_stats_.inline_served,
          "puts written from inside a move request, as the target");
  reg.add("firehose", "refused_stale", Unit::count, &fh_stats_.refused_stale,
          "accesses refused because the sender maps no firehose there (any more)");
  reg.add("firehose", "pinned_bytes", Unit::bytes, &t.pinned_bytes,
          "bytes pinned now for peers' firehoses (mapped or victims)");
  reg.add("firehose", "pinned_peak", Unit::bytes, &t.pinned_peak,
          "most bytes pinned at once (never above FIREHOSE_M + FIREHOSE_MAXVICTIM)");
  reg.add(
      "firehose", "victims", Unit::count,
      [this] { return static_cast<uint64_t>(buckets_->victims()); },
      "buckets in the victim FIFO now");
}

}  // namespace sluice::proto::rma
