#include "proto/p2p.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "mem/reg_emulation.hpp"
#include "proto/reg_pipeline.hpp"
#include "util/small_copy.hpp"

namespace sluice::proto {

using drivers::IoStatus;

const char* protocol_name(Protocol p) {
  switch (p) {
    case Protocol::none:
      return "none";
    case Protocol::eager:
      return "eager";
    case Protocol::rndv_get:
      return "rndv-get";
    case Protocol::rndv_pipeline:
      return "rndv-pipeline";
    case Protocol::rndv_push:
      return "rndv-push";
  }
  return "?";
}

const char* reg_strategy_name(RegStrategy s) {
  switch (s) {
    case RegStrategy::copy:
      return "copy";
    case RegStrategy::per_message:
      return "register";
    case RegStrategy::cache:
      return "cache";
    case RegStrategy::ondemand:
      return "ondemand";
    case RegStrategy::superpipeline:
      return "superpipeline";
    case RegStrategy::pipeline:
      return "pipeline";
    case RegStrategy::adaptive:
      return "adaptive";
  }
  return "?";
}

bool parse_reg_strategy(std::string_view name, RegStrategy& out) {
  for (RegStrategy s :
       {RegStrategy::copy, RegStrategy::per_message, RegStrategy::cache, RegStrategy::ondemand,
        RegStrategy::superpipeline, RegStrategy::pipeline, RegStrategy::adaptive})
    if (name == reg_strategy_name(s)) {
      out = s;
      return true;
    }
  return false;
}

namespace {

template <class T>
std::span<const std::byte> bytes_of(const T& v) {
  return {reinterpret_cast<const std::byte*>(&v), sizeof(T)};
}

template <class T>
T read_header(std::span<const std::byte> h) {
  T v;
  std::memcpy(&v, h.data(), sizeof(T));
  return v;
}

Transfer& transfer_from_id(uint64_t id) {
  return *reinterpret_cast<Transfer*>(id);
}
uint64_t id_of(Transfer& t) {
  return reinterpret_cast<uint64_t>(&t);
}

}  // namespace

void PointToPoint::set_route(int peer, drivers::Driver* d) {
  if (static_cast<std::size_t>(peer) >= routes_.size()) {
    routes_.resize(static_cast<std::size_t>(peer) + 1, nullptr);
    queues_.resize(static_cast<std::size_t>(peer) + 1);
    push_ok_.resize(static_cast<std::size_t>(peer) + 1, false);
  }
  routes_[static_cast<std::size_t>(peer)] = d;
  // A pinning route under strategy cache gets its domain's cache now (not on the first
  // message: its statistics exist from the start, and no message pays for making it).
  const RegStrategy rs = reg_opts_.strategy;
  if (d && d->caps().needs_registration &&
      (rs == RegStrategy::cache || rs == RegStrategy::ondemand || rs == RegStrategy::adaptive))
    cache_for(d->memory_domain());
  // ... and under the staged strategies its staging buffers (registered once, up front).
  if (d && d->caps().needs_registration &&
      (rs == RegStrategy::superpipeline || rs == RegStrategy::pipeline ||
       rs == RegStrategy::adaptive))
    staging_for(*d);
  if (d && d->caps().needs_registration && rs == RegStrategy::adaptive) {
    adaptive_for(*d);
    // Its ondemand arm's pinning thread, started now: not in the first such send's time.
    if (!pinner_) pinner_ = std::make_unique<PinningThread>();
  }
  // Pushing fills receiver-side buffers before the receiver asked (DriverCaps::takes_push).
  push_ok_[static_cast<std::size_t>(peer)] = d && d->caps().takes_push;
}

PointToPoint::PointToPoint(Upcalls& up, const Thresholds& th) : up_(up), th_(th) {}

PointToPoint::~PointToPoint() {
  for (PushRx* p : pushes_) delete p;
}

Protocol PointToPoint::choose(int peer, std::size_t size) const {
  const drivers::DriverCaps& caps = route(peer)->caps();
  if (size <= std::min(th_.eager_limit, caps.inline_payload)) return Protocol::eager;
  if (size <= th_.push_max && push_ok_[static_cast<std::size_t>(peer)]) return Protocol::rndv_push;
  return pull_protocol(caps, size);
}

Protocol PointToPoint::pull_protocol(const drivers::DriverCaps& caps, std::size_t size) const {
  if (!caps.rdma_get || th_.rndv == Thresholds::RndvMode::pipeline) return Protocol::rndv_pipeline;
  const bool below_max = size <= th_.get_max || (caps.get_any_size && !th_.get_max_chosen);
  if (th_.rndv == Thresholds::RndvMode::get || (size >= get_threshold(caps) && below_max))
    return Protocol::rndv_get;
  return Protocol::rndv_pipeline;
}

IoStatus PointToPoint::send_first_packet(Transfer& t) {
  drivers::Driver* d = route(t.peer);
  if (t.protocol == Protocol::eager) {
    MatchHeader h{t.sync ? PacketType::eager_sync : PacketType::eager,
                  0,
                  0,
                  t.ctx,
                  t.tag,
                  static_cast<uint32_t>(t.len)};
    if (t.sync) {
      // The receiver echoes our id back in sync_ack: append it after the match header.
      struct {
        MatchHeader m;
        uint64_t id;
      } hs{h, id_of(t)};
      return d->send(t.peer, bytes_of(hs), {t.buf, t.len});
    }
    return d->send(t.peer, bytes_of(h), {t.buf, t.len});
  }
  const RndvPath path = t.protocol == Protocol::rndv_get    ? RndvPath::get
                        : t.protocol == Protocol::rndv_push ? RndvPath::push
                                                            : RndvPath::pipeline;
  RtsHeader r{};
  r.match = MatchHeader{
      PacketType::rts, static_cast<uint8_t>(path), static_cast<uint16_t>(t.sync), t.ctx, t.tag, 0};
  r.size = t.len;
  r.sender_req = id_of(t);
  // Exactly the message: the registration may be a cache entry's, page-aligned and larger.
  r.key = t.reg.remote_key_for({t.buf, t.len});
  return d->send(t.peer, bytes_of(r), {});
}

void PointToPoint::start_send(Transfer& t) {
  t.role = Transfer::Role::send;
  t.adaptive_arm = kNoAdaptiveArm;
  t.protocol = choose(t.peer, t.len);
  // A pushed send completes when its bytes are out, before any match: Ssend pulls instead.
  // Collective schedules pull too: every rank of one copies at once, and their choice
  // (below) was measured against the pull protocols.
  if (t.protocol == Protocol::rndv_push && (t.sync || t.coll))
    t.protocol = pull_protocol(route(t.peer)->caps(), t.len);
  // Collectives: every rank copies, so the pipeline's two copies cost twice the CPU of one
  // get (the ping-pong reason for get_max, both cores copying in parallel, does not hold).
  if (t.coll && t.protocol == Protocol::rndv_pipeline && t.len <= th_.coll_get_max &&
      t.len >= get_threshold(route(t.peer)->caps()) &&
      th_.rndv == Thresholds::RndvMode::automatic && route(t.peer)->caps().rdma_get)
    t.protocol = Protocol::rndv_get;
  t.offset = 0;
  t.lent = 0;
  // The peer reads a get's buffer through its remote key; a lending driver reads the
  // fragments' payload after send returns. A domain that cannot register it: copy instead.
  if (t.protocol != Protocol::eager && register_buffer(t) != Errc::ok &&
      t.protocol == Protocol::rndv_get)
    t.protocol = Protocol::rndv_pipeline;
  ++stats_.sent[static_cast<int>(t.protocol)];
  stats_.sent_bytes[static_cast<int>(t.protocol)] += t.len;
  PeerQueue& q = queues_[static_cast<std::size_t>(t.peer)];
  // Non-overtaking: once one send to this peer waits, later ones wait behind it.
  if (q.waiting.empty()) {
    IoStatus s = send_first_packet(t);
    if (s == IoStatus::done) {
      first_packet_sent(t);
      return;
    }
    if (s == IoStatus::failed) {
      complete(t, Errc::peer_dead);
      return;
    }
  }
  ++stats_.driver_full;
  t.queued = true;
  q.waiting.push_back(&t);
  mark_active(t.peer);
}

Errc PointToPoint::register_buffer(Transfer& t) {
  drivers::Driver* d = route(t.peer);
  const std::span<const std::byte> buf{t.buf, t.role == Transfer::Role::send ? t.len : t.length};
  if (!d->caps().needs_registration) {  // inline: no virtual call for host memory
    t.reg = mem::Registration::host(buf);
    return Errc::ok;
  }
  if (reg_opts_.strategy == RegStrategy::adaptive) return register_adaptive(t, *d, buf);
  if (pipe_strategy() && t.protocol == Protocol::rndv_pipeline && !in_persistent(buf)) {
    if (t.role == Transfer::Role::send) {
      begin_pipe(t, reg_opts_.strategy);  // pinned in the background (ondemand) or never
    } else {
      // These strategies keep pinning off the critical path: a registered destination (which a
      // stream driver reads into with io_uring READ_FIXED) would be pinned before the cts
      // leaves. The stream drivers receive into the plain buffer instead (the kernel's one
      // copy either way).
      ++reg_stats_.unregistered_recvs;
      t.reg = mem::Registration::host(buf);
    }
    return Errc::ok;
  }
  return register_pinned(*d, buf, t.reg, reg_opts_.strategy);
}

Errc PointToPoint::register_adaptive(Transfer& t, drivers::Driver& d,
                                     std::span<const std::byte> buf) {
  if (t.role == Transfer::Role::recv) {
    // Unregistered, as under ondemand and the staged strategies: pinning the destination
    // would put a registration before the cts; the stream drivers receive into the plain
    // buffer (the kernel's one copy, as READ_FIXED's).
    ++reg_stats_.unregistered_recvs;
    t.reg = mem::Registration::host(buf);
    return Errc::ok;
  }
  // A get reads the buffer in place, and MPI_Alloc_mem memory is registered already.
  if (t.protocol != Protocol::rndv_pipeline || in_persistent(buf))
    return register_pinned(d, buf, t.reg, RegStrategy::cache);
  mem::RegistrationCache* cache = cache_for(d.memory_domain());
  mem::Registration found;
  const std::size_t covering = cache ? cache->lookup(buf, found) : 0;
  AdaptiveDomain& ad = adaptive_for(d);
  const AdaptiveDecision dec = ad.selector.choose(buf.size(), covering > 0);
  ++(covering > 0 ? reg_stats_.adaptive_found : reg_stats_.adaptive_missed);
  ++reg_stats_.adaptive[static_cast<std::size_t>(dec.arm)];
  ++reg_stats_.adaptive_reasons[static_cast<std::size_t>(dec.reason)];
  t.adaptive_arm = static_cast<uint8_t>(dec.arm);
  t.adaptive_pattern = dec.pattern;
  t.adaptive_start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
  switch (dec.arm) {
    case AdaptiveArm::cached:
      if (covering == 1) {  // one entry: strategy cache's path, without a second lookup
        ++reg_stats_.cached;
        t.reg = std::move(found);
        return Errc::ok;
      }
      // Covered by the chunks an ondemand send pinned: registering it whole merges them into
      // one entry (pinned once more), so that its next sends are single lookups.
      return register_pinned(d, buf, t.reg, RegStrategy::cache);
    case AdaptiveArm::cache_miss:
      return register_pinned(d, buf, t.reg, RegStrategy::cache);
    case AdaptiveArm::ondemand_miss:
      begin_pipe(t, RegStrategy::ondemand);
      return Errc::ok;
    case AdaptiveArm::superpipeline:
      begin_pipe(t, RegStrategy::superpipeline);
      return Errc::ok;
    case AdaptiveArm::copy:
    case AdaptiveArm::count:
      break;
  }
  return register_pinned(d, buf, t.reg, RegStrategy::copy);
}

void PointToPoint::adaptive_done(Transfer& t, Errc err) {
  const auto arm = static_cast<AdaptiveArm>(t.adaptive_arm);
  t.adaptive_arm = kNoAdaptiveArm;
  drivers::Driver* d = route(t.peer);
  if (err != Errc::ok || !d) return;
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  AdaptiveDecision dec;
  dec.arm = arm;
  dec.pattern = t.adaptive_pattern;
  adaptive_for(*d).selector.observe(dec, t.len, static_cast<double>(now - t.adaptive_start_ns));
}

AdaptiveDomain& PointToPoint::adaptive_for(drivers::Driver& d) {
  mem::Domain& domain = d.memory_domain();
  for (auto& [dom, a] : adaptive_)
    if (dom == &domain) return *a;
  // The calibrated model (a profile's, or its defaults) for this driver; the simple one
  // where it has no figures for it. Either with the emulated registration cost when
  // SLUICE_REG_EMULATE makes registering dearer than the model says.
  const mem::RegEmulation& e = mem::reg_emulation();
  std::unique_ptr<RegCostModel> model;
  if (reg_opts_.model.driver(d.name())) {
    CostModel m = reg_opts_.model;
    if (e.active()) {
      m.reg.latency_us = std::max(m.reg.latency_us, e.latency_ns / 1e3);
      const double emulated_MBps = e.ns_per_page > 0 ? 4096.0 * 1e3 / e.ns_per_page : 0;
      if (emulated_MBps > 0 && (m.reg.MBps <= 0 || m.reg.MBps > emulated_MBps))
        m.reg.MBps = emulated_MBps;
    }
    model = std::make_unique<CalibratedCostModel>(std::move(m), std::string(d.name()));
  } else {
    SimpleCostParams p;
    p.reg = domain.cost();
    if (e.active()) {
      p.reg.latency_ns = std::max(p.reg.latency_ns, e.latency_ns);
      p.reg.ns_per_byte = std::max(p.reg.ns_per_byte, e.ns_per_page / 4096.0);
    }
    p.c0 = reg_opts_.staged.c0;
    p.q = reg_opts_.staged.q;
    p.first_pin_chunk = kFirstPinChunk;
    model = std::make_unique<SimpleCostModel>(p);
  }
  adaptive_.emplace_back(&domain, std::make_unique<AdaptiveDomain>(std::move(model)));
  return *adaptive_.back().second;
}

Errc PointToPoint::register_pinned(drivers::Driver& d, std::span<const std::byte> buf,
                                   mem::Registration& out, RegStrategy strategy) {
  if (strategy == RegStrategy::copy) {
    // A host handle: push_fragments then sends with send(), the driver's copy path.
    ++reg_stats_.copy;
    out = mem::Registration::host(buf);
    return Errc::ok;
  }
  mem::Domain& domain = d.memory_domain();
  if (!persistent_.empty()) {  // MPI_Alloc_mem memory: registered once, kept
    const auto lo = reinterpret_cast<uintptr_t>(buf.data());
    auto it = persistent_.upper_bound(lo);
    if (it != persistent_.begin() && lo + buf.size() <= std::prev(it)->second.end) {
      for (const auto& [dom, r] : std::prev(it)->second.regs)
        if (dom == &domain) {
          ++reg_stats_.persistent_hits;
          out = r;
          return Errc::ok;
        }
    }
  }
  Errc e;
  if (strategy != RegStrategy::per_message) {
    ++reg_stats_.cached;
    mem::RegistrationCache* c = cache_for(domain);
    e = c ? c->register_memory(buf, out) : domain.register_memory(buf, out);
  } else {
    ++reg_stats_.registered;
    e = domain.register_memory(buf, out);
  }
  if (e != Errc::ok) {
    ++reg_stats_.failed;
    out = mem::Registration::host(buf);  // the copy path moves it
  }
  return e;
}

bool PointToPoint::in_persistent(std::span<const std::byte> buf) const {
  if (persistent_.empty()) return false;
  const auto lo = reinterpret_cast<uintptr_t>(buf.data());
  auto it = persistent_.upper_bound(lo);
  return it != persistent_.begin() && lo + buf.size() <= std::prev(it)->second.end;
}

mem::RegistrationCache* PointToPoint::cache_for(mem::Domain& domain) {
  for (auto& [dom, cache] : caches_)
    if (dom == &domain) return cache.get();
  mem::CacheOptions o = reg_opts_.cache;
  // Leave the domain room for uncached registrations (a full cache's fallback) and for
  // MPI_Alloc_mem memory: the cache keeps at most half its table.
  o.max_entries = std::min(o.max_entries, std::max<std::size_t>(1, domain.max_registrations() / 2));
  caches_.emplace_back(&domain, std::make_unique<mem::RegistrationCache>(domain, o));
  return caches_.back().second.get();
}

std::size_t PointToPoint::register_persistent(std::span<const std::byte> buf) {
  if (buf.empty()) return 0;
  Persistent p;
  p.end = reinterpret_cast<uintptr_t>(buf.data()) + buf.size();
  std::vector<mem::Domain*> done;
  for (drivers::Driver* d : routes_) {
    if (!d || !d->caps().needs_registration) continue;
    mem::Domain& domain = d->memory_domain();
    if (std::find(done.begin(), done.end(), &domain) != done.end()) continue;
    done.push_back(&domain);
    mem::Registration r;
    if (domain.register_memory(buf, r) != Errc::ok) continue;  // messages register as usual
    ++reg_stats_.persistent_registrations;
    p.regs.emplace_back(&domain, std::move(r));
  }
  const std::size_t n = p.regs.size();
  if (n == 0) return 0;
  ++reg_stats_.persistent_regions;
  reg_stats_.persistent_bytes += buf.size();
  persistent_[reinterpret_cast<uintptr_t>(buf.data())] = std::move(p);
  return n;
}

bool PointToPoint::release_persistent(const void* base) {
  auto it = persistent_.find(reinterpret_cast<uintptr_t>(base));
  if (it == persistent_.end()) return false;
  --reg_stats_.persistent_regions;
  reg_stats_.persistent_bytes -= it->second.end - it->first;
  persistent_.erase(it);  // a send still using it holds its own handle: unpinned after it
  return true;
}

void PointToPoint::send_control(int peer, const void* hdr, std::size_t len) {
  PeerQueue& q = queues_[static_cast<std::size_t>(peer)];
  if (q.control.empty()) {
    IoStatus s = route(peer)->send(peer, {static_cast<const std::byte*>(hdr), len}, {});
    if (s != IoStatus::again) return;  // a failed peer is reported through its transfers
  }
  Control c;
  std::memcpy(c.bytes, hdr, len);
  c.len = static_cast<uint8_t>(len);
  q.control.push_back(c);
  mark_active(peer);
}

void PointToPoint::first_packet_sent(Transfer& t) {
  if (t.protocol == Protocol::eager) {
    if (!t.sync) up_.transfer_complete(t, Errc::ok);
    return;
  }
  if (t.pipe) pipe_rts_sent(t);  // pin in the background / copy chunk 0 during the round trip
  if (t.protocol != Protocol::rndv_push) return;  // waits for the receiver's cts or fin
  t.offset = 0;
  t.length = t.len;
  t.remote_id = id_of(t);  // push_data names the sender's transfer
  PeerQueue& q = queues_[static_cast<std::size_t>(t.peer)];
  if (q.streaming.empty() && push_fragments(t)) return;
  q.streaming.push_back(&t);
  mark_active(t.peer);
}

void PointToPoint::mark_active(int peer) {
  PeerQueue& q = queues_[static_cast<std::size_t>(peer)];
  if (!q.active) {
    q.active = true;
    active_peers_.push_back(peer);
  }
}

bool PointToPoint::push_fragments(Transfer& t) {
  if (t.pipe) return push_piped(t);
  drivers::Driver* d = route(t.peer);
  const std::size_t chunk = d->caps().max_packet;
  // A lending driver (the reliability layer) sends straight from the user's buffer and
  // resends from it until acknowledged: the send completes on the local completions of its
  // fragments.
  // (Not when the driver pins and this buffer is not registered: strategy copy, or a refused
  // registration, takes the copy path directly.)
  const bool lend = d->caps().lends_payload && (!d->caps().needs_registration || t.reg.pinned());
  // Fragments start at 8 KiB and double up to the driver's packet size: the receiver starts
  // copying out after the first 8 KiB rather than a whole chunk, which halves a 64 KiB
  // message's pipeline fill, while large messages still move in full chunks (Alltoall
  // 64 KiB on 2 ranks: 19 -> 16 us; 1 MiB bandwidth unchanged).
  // (Not for drivers that want whole fragments: byte streams, DriverCaps::whole_fragments.)
  constexpr std::size_t kFirstFragment = 8 * 1024;
  const bool whole = d->caps().whole_fragments;
  while (t.offset < t.length) {
    const std::size_t ramp = whole ? chunk : std::max(kFirstFragment, t.offset);
    std::size_t n = std::min({chunk, ramp, t.length - t.offset});
    DataHeader h{t.protocol == Protocol::rndv_push ? PacketType::push_data : PacketType::data,
                 {},
                 t.remote_id,
                 t.offset};
    const std::span<const std::byte> part{t.buf + t.offset, n};
    IoStatus s = lend ? d->send_tracked(t.peer, bytes_of(h), part, t.reg, {id_of(t), kProtocolId})
                      : d->send(t.peer, bytes_of(h), part);
    if (s == IoStatus::again) return false;
    if (s == IoStatus::failed) {
      t.offset = t.length;
      if (t.lent == 0) complete(t, Errc::peer_dead);
      t.lent = 0;  // the driver reports nothing for a dead peer
      return true;
    }
    if (s == IoStatus::posted) ++t.lent;
    t.offset += n;
    ++stats_.fragments;
  }
  if (t.lent > 0) return true;  // out, not yet free: the last local completion completes it
  // Every byte sits in the receiver's memory (or the driver's copy) now: the buffer is free.
  complete(t, Errc::ok);
  return true;
}

bool PointToPoint::progress_outbound() {
  bool moved = false;
  for (std::size_t i = 0; i < active_peers_.size();) {
    int peer = active_peers_[i];
    PeerQueue& q = queues_[static_cast<std::size_t>(peer)];
    drivers::Driver* d = route(peer);
    while (!q.control.empty()) {
      const Control& c = q.control.front();
      if (d->send(peer, {c.bytes, c.len}, {}) == IoStatus::again) break;
      q.control.pop_front();
      moved = true;
    }
    while (!q.gets.empty()) {
      const PendingGet g = q.gets.front();
      if (!start_get(*g.recv, g.key)) break;
      q.gets.pop_front();
      moved = true;
    }
    while (!q.waiting.empty()) {
      Transfer& t = *q.waiting.front();
      IoStatus s = send_first_packet(t);
      if (s == IoStatus::again) break;
      q.waiting.pop_front();
      t.queued = false;
      moved = true;
      if (s == IoStatus::failed)
        complete(t, Errc::peer_dead);
      else
        first_packet_sent(t);
    }
    while (!q.streaming.empty()) {
      std::size_t before = q.streaming.front()->offset;
      bool finished = push_fragments(*q.streaming.front());
      if (q.streaming.empty()) break;
      if (finished) {
        q.streaming.pop_front();
        moved = true;
      } else {
        moved |= q.streaming.front()->offset != before;
        break;
      }
    }
    if (q.control.empty() && q.gets.empty() && q.waiting.empty() && q.streaming.empty()) {
      q.active = false;
      active_peers_[i] = active_peers_.back();
      active_peers_.pop_back();
    } else {
      ++i;
    }
  }
  return moved;
}

PointToPoint::CancelOutcome PointToPoint::cancel_send(Transfer& t) {
  if (t.role != Transfer::Role::send) return CancelOutcome::too_late;
  if (t.cancel != Transfer::Cancel::none) return CancelOutcome::asked;  // asked before
  if (t.queued) {  // nothing on the wire yet: withdrawn here
    std::erase(queues_[static_cast<std::size_t>(t.peer)].waiting, &t);
    t.queued = false;
    ++stats_.cancelled_local;
    finish_cancelled(t);
    return CancelOutcome::cancelled;
  }
  // Out, and the receiver has not answered: a synchronous eager message (no sync_ack yet), a
  // get rendezvous (no fin yet; the receiver may be reading) or a pipelined one before its
  // cts. The receiver still holds it unmatched, or has answered already (its answer is on
  // the way, before ours). A pushed send completes without the receiver (its bytes follow
  // the rts unasked) and a pipelined one after its cts streams: too late for both.
  const bool awaiting_receiver = (t.protocol == Protocol::eager && t.sync) ||
                                 t.protocol == Protocol::rndv_get ||
                                 (t.protocol == Protocol::rndv_pipeline && t.remote_id == 0);
  if (!awaiting_receiver) return CancelOutcome::too_late;
  CancelHeader c{PacketType::cancel_req, {}, t.ctx, t.tag, 0, id_of(t)};
  t.cancel = Transfer::Cancel::asked;
  ++stats_.cancel_requests;
  // A dead peer never answers: the core fails the send with it (as any send waiting for it).
  send_control(t.peer, &c, sizeof c);
  return CancelOutcome::asked;
}

bool PointToPoint::hold_for_cancel(Transfer& t, Errc err) {
  // A failed peer will not answer; anything else completes with the answer.
  if (t.cancel != Transfer::Cancel::asked || err == Errc::peer_dead) return false;
  t.cancel = Transfer::Cancel::held;
  t.held_err = static_cast<uint8_t>(err);
  return true;
}

void PointToPoint::on_cancel_answer(uint64_t sender_req, bool withdrawn) {
  Transfer& t = transfer_from_id(sender_req);
  if (t.cancel == Transfer::Cancel::none) {  // no request of ours waits for it
    ++stats_.unknown_packets;
    return;
  }
  const bool held = t.cancel == Transfer::Cancel::held;
  t.cancel = Transfer::Cancel::none;
  // Withdrawn means nothing matched it, so nothing completed it: no cts, fin or sync_ack
  // comes. Held means it matched (the receiver cannot have withdrawn it then).
  if (withdrawn && !held) {
    ++stats_.cancelled_remote;
    finish_cancelled(t);
    return;
  }
  ++stats_.cancel_too_late;
  if (held) complete(t, static_cast<Errc>(t.held_err));
  // else its cts or fin is still to come and completes it as usual
}

void PointToPoint::finish_cancelled(Transfer& t) {
  t.cancel = Transfer::Cancel::none;
  t.adaptive_arm = kNoAdaptiveArm;  // no time to observe
  if (t.pipe) end_pipe(t);
  t.reg.reset();
  up_.transfer_cancelled(t);
}

void PointToPoint::deliver(Transfer& r, const Incoming& m) {
  r.role = Transfer::Role::recv;
  r.peer = m.src;
  const std::size_t n = std::min(r.len, m.size);
  const Errc err = m.size > r.len ? Errc::truncated : Errc::ok;
  if (err != Errc::ok) ++stats_.truncated;
  if (m.type != PacketType::rts) {
    r.protocol = Protocol::eager;
    ++stats_.received[static_cast<int>(Protocol::eager)];
    util::copy_small(r.buf, m.payload.data(), n);
    if (m.sync) {
      ++stats_.sync_acks;
      FinHeader f{PacketType::sync_ack, {}, m.sender_req};
      send_control(m.src, &f, sizeof f);
    }
    up_.transfer_complete(r, err);
    return;
  }
  if (m.path == RndvPath::push) {
    auto* p = reinterpret_cast<PushRx*>(m.push_rx);
    r.protocol = Protocol::rndv_push;
    ++stats_.received[static_cast<int>(Protocol::rndv_push)];
    r.offset = 0;
    r.length = n;
    r.remote_id = err != Errc::ok ? 1 : 0;  // remember the truncation for completion
    if (p->stash) {  // arrived before this receive: the bytes so far wait in the stash
      std::memcpy(r.buf, p->stash.get(), std::min(p->received, n));
      give_back_stash(p);
    }
    p->target = &r;
    if (p->received == p->size) {
      finish_push(p);
    } else if (p->failed) {
      std::erase(pushes_, p);
      delete p;
      up_.transfer_complete(r, Errc::peer_dead);
    }
    return;
  }
  if (m.path == RndvPath::get) {
    r.protocol = Protocol::rndv_get;
    ++stats_.received[static_cast<int>(Protocol::rndv_get)];
    r.length = n;
    r.fin_req = m.sender_req;
    r.remote_id = err != Errc::ok ? 1 : 0;  // remember the truncation for completion
    if (n == 0) {
      finish_get(r, Errc::ok);
    } else if (!start_get(r, m.key)) {  // no room in the driver: progress_outbound retries
      queues_[static_cast<std::size_t>(r.peer)].gets.push_back({&r, m.key});
      mark_active(r.peer);
    }
    return;
  }
  r.protocol = Protocol::rndv_pipeline;
  ++stats_.received[static_cast<int>(Protocol::rndv_pipeline)];
  r.offset = 0;
  r.length = n;
  r.fin_req = 0;
  mem::RemoteKey key{};
  if (n > 0 && register_buffer(r) == Errc::ok) key = r.reg.remote_key_for({r.buf, n});
  CtsHeader c{PacketType::cts, {}, m.sender_req, id_of(r), n, key};
  send_control(m.src, &c, sizeof c);
  if (n == 0)
    up_.transfer_complete(r, err);
  else if (err != Errc::ok)
    r.remote_id = 1;  // remember the truncation for completion
  else
    r.remote_id = 0;
}

bool PointToPoint::start_get(Transfer& r, const mem::RemoteKey& key) {
  if (r.reg.empty()) {
    const Errc e = register_buffer(r);
    if (e != Errc::ok) {
      finish_get(r, e);
      return true;
    }
  }
  switch (
      route(r.peer)->post_get(r.peer, {r.buf, r.length}, r.reg, key, 0, {id_of(r), kProtocolId})) {
    case IoStatus::done:  // a CMA read or a memcpy: the bytes are here already
      stats_.get_bytes += r.length;
      finish_get(r, Errc::ok);
      return true;
    case IoStatus::posted:  // on_completion finishes it
      ++stats_.gets_deferred;
      return true;
    case IoStatus::again:
      ++stats_.gets_again;
      return false;
    case IoStatus::failed:
      finish_get(r, Errc::peer_dead);
      return true;
  }
  return true;
}

void PointToPoint::finish_get(Transfer& r, Errc err) {
  // The sender's buffer is no longer read: release it (also when the get failed).
  FinHeader f{PacketType::fin, {}, r.fin_req};
  send_control(r.peer, &f, sizeof f);
  complete(r, err != Errc::ok ? err : r.remote_id == 1 ? Errc::truncated : Errc::ok);
}

void PointToPoint::on_completion(drivers::CompletionToken token, Errc status) {
  if (token.id & 1) {  // a staging buffer's chunk (reg_pipeline.cpp)
    on_staging_completion(token.id, status);
    return;
  }
  Transfer& t = transfer_from_id(token.id);
  if (t.role == Transfer::Role::recv) {  // a posted get
    if (status == Errc::ok) stats_.get_bytes += t.length;
    finish_get(t, status);
    return;
  }
  // A lent fragment of a pipelined send is free: the send completes with its last one,
  // once every fragment is out.
  ++stats_.local_completions;
  if (t.lent == 0) return;  // already completed (failed): nothing waits for it
  if (--t.lent == 0 && t.offset >= t.length) complete(t, status);
}

void PointToPoint::on_packet(int src, std::span<const std::byte> header,
                             std::span<const std::byte> payload) {
  // Polled directly when p2p is the only protocol (ProtocolDemux::entry): an empty header
  // is rejected here like a type of another protocol (both fall to the end).
  const auto type = static_cast<PacketType>(header.empty() ? std::byte{0} : header[0]);
  switch (type) {
    case PacketType::eager:
    case PacketType::eager_sync: {
      auto h = read_header<MatchHeader>(header);
      Incoming m;
      m.src = src;
      m.ctx = h.ctx;
      m.tag = h.tag;
      m.type = type;
      m.size = h.size32;
      m.payload = payload;
      if (type == PacketType::eager_sync) {
        m.sync = true;
        std::memcpy(&m.sender_req, header.data() + sizeof(MatchHeader), 8);
      }
      up_.on_incoming(m);
      return;
    }
    case PacketType::rts: {
      auto h = read_header<RtsHeader>(header);
      Incoming m;
      m.src = src;
      m.ctx = h.match.ctx;
      m.tag = h.match.tag;
      m.type = type;
      m.size = h.size;
      m.sender_req = h.sender_req;
      m.key = h.key;
      m.path = static_cast<RndvPath>(h.match.flags);
      m.sync = h.match.reserved != 0;
      if (m.path != RndvPath::push) {
        up_.on_incoming(m);
        return;
      }
      auto* p = new PushRx;
      p->src = src;
      p->sender_id = h.sender_req;
      p->size = h.size;
      pushes_.push_back(p);
      m.push_rx = reinterpret_cast<uint64_t>(p);
      up_.on_incoming(m);  // may deliver() into a posted receive at once
      if (!p->target) {
        // No receive yet: keep the fragments until one matches (the one extra copy).
        take_stash(p);
        ++stats_.pushed_unexpected;
      }
      return;
    }
    case PacketType::cts: {
      auto h = read_header<CtsHeader>(header);
      Transfer& t = transfer_from_id(h.sender_req);
      t.remote_id = h.receiver_req;
      t.length = h.length;
      t.offset = 0;
      PeerQueue& q = queues_[static_cast<std::size_t>(t.peer)];
      if (q.streaming.empty() && push_fragments(t)) return;
      q.streaming.push_back(&t);
      mark_active(t.peer);
      return;
    }
    case PacketType::data: {
      auto h = read_header<DataHeader>(header);
      Transfer& r = transfer_from_id(h.receiver_req);
      if (payload.data() != r.buf + h.offset)  // not already received in place
        std::memcpy(r.buf + h.offset, payload.data(), payload.size());
      r.offset += payload.size();
      if (r.offset >= r.length) complete(r, r.remote_id == 1 ? Errc::truncated : Errc::ok);
      return;
    }
    case PacketType::push_data: {
      auto h = read_header<DataHeader>(header);
      on_push_data(src, h.receiver_req, h.offset, payload);
      return;
    }
    case PacketType::fin:
    case PacketType::sync_ack: {
      auto h = read_header<FinHeader>(header);
      complete(transfer_from_id(h.sender_req), Errc::ok);
      return;
    }
    case PacketType::cancel_req: {
      auto h = read_header<CancelHeader>(header);
      const bool withdrawn = up_.withdraw_incoming(src, h.ctx, h.tag, h.sender_req);
      if (withdrawn) ++stats_.withdrawn;
      FinHeader a{PacketType::cancel_ack, {static_cast<uint8_t>(withdrawn)}, h.sender_req};
      send_control(src, &a, sizeof a);
      return;
    }
    case PacketType::cancel_ack: {
      auto h = read_header<FinHeader>(header);
      on_cancel_answer(h.sender_req, h.pad[0] != 0);
      return;
    }
  }
  // A type in p2p's range that this version does not know: never guess its layout.
  ++stats_.unknown_packets;
}

void PointToPoint::on_push_data(int src, uint64_t sender_id, std::size_t offset,
                                std::span<const std::byte> payload) {
  // Fragments of one message come in order after its rts; the sender reuses an id only
  // once every fragment of the earlier message is out, so one incomplete entry matches.
  PushRx* p = nullptr;
  for (PushRx* q : pushes_)
    if (q->src == src && q->sender_id == sender_id && q->received < q->size) {
      p = q;
      break;
    }
  if (!p || offset > p->size || payload.size() > p->size - offset) return;  // not ours: drop
  if (Transfer* r = p->target) {
    if (offset < r->length)
      std::memcpy(r->buf + offset, payload.data(), std::min(payload.size(), r->length - offset));
  } else {
    std::memcpy(p->stash.get() + offset, payload.data(), payload.size());
  }
  p->received += payload.size();
  if (p->received == p->size && p->target) finish_push(p);
}

void PointToPoint::take_stash(PushRx* p) {
  for (auto& [cap, buf] : spare_stash_)
    if (cap >= p->size) {
      p->stash_cap = cap;
      p->stash = std::move(buf);
      std::swap(buf, spare_stash_.back().second);
      std::swap(cap, spare_stash_.back().first);
      spare_stash_.pop_back();
      return;
    }
  p->stash.reset(new std::byte[p->size]);
  p->stash_cap = p->size;
}

void PointToPoint::give_back_stash(PushRx* p) {
  constexpr std::size_t kMaxSpares = 8;
  if (spare_stash_.size() < kMaxSpares)
    spare_stash_.emplace_back(p->stash_cap, std::move(p->stash));
  p->stash.reset();
  p->stash_cap = 0;
}

void PointToPoint::finish_push(PushRx* p) {
  Transfer& r = *p->target;
  std::erase(pushes_, p);
  delete p;
  up_.transfer_complete(r, r.remote_id == 1 ? Errc::truncated : Errc::ok);
}

drivers::Placement PointToPoint::placement(int src, std::span<const std::byte> header,
                                           std::size_t payload_size) {
  if (header.size() != sizeof(DataHeader) || header[0] != std::byte{uint8_t(PacketType::data)})
    return {};
  const auto h = read_header<DataHeader>(header);
  Transfer& r = transfer_from_id(h.receiver_req);
  if (h.offset > r.length || payload_size > r.length - h.offset) return {};
  // The destination's registration in the route's domain (made in deliver() under strategy
  // register or cache, or MPI_Alloc_mem memory's): a driver that receives into registered
  // memory reads the fragment into it (io_uring READ_FIXED), so its payload is never copied
  // here.
  return {{r.buf + h.offset, payload_size}, r.reg.pinned() ? &r.reg : nullptr};
}

void PointToPoint::fail_peer(int peer) {
  if (static_cast<std::size_t>(peer) >= queues_.size()) return;
  PeerQueue& q = queues_[static_cast<std::size_t>(peer)];
  q.control.clear();
  q.gets.clear();  // their receives fail with the peer (the core fails every request on it)
  std::deque<Transfer*> waiting, streaming;
  waiting.swap(q.waiting);
  streaming.swap(q.streaming);
  for (Transfer* t : waiting) {
    t->queued = false;
    complete(*t, Errc::peer_dead);
  }
  for (Transfer* t : streaming) complete(*t, Errc::peer_dead);
  // Pushed messages cut short: a matched receive fails with the peer (the core fails every
  // request on it); an unmatched one stays matchable and fails when a receive takes it.
  // Complete ones keep their data.
  for (std::size_t i = 0; i < pushes_.size();) {
    PushRx* p = pushes_[i];
    if (p->src != peer || p->received == p->size) {
      ++i;
    } else if (p->target) {
      pushes_.erase(pushes_.begin() + static_cast<std::ptrdiff_t>(i));
      delete p;
    } else {
      p->failed = true;
      ++i;
    }
  }
}

}  // namespace sluice::proto
