// Engine point-to-point glue: the request calls, matching of arrivals against posted
// receives, the unexpected queue, completion.
#include "core/engine.hpp"

#include <algorithm>
#include <cstring>
#include <new>

namespace sluice::detail {

namespace {

// Reserved context ids (the MPI layer allocates from 0 upwards).
constexpr uint32_t kBarrierContext = 0xfffffffeu;

}  // namespace

UnexpectedMsg* Engine::take_stored(MatchEntry* e) {
  auto* u = static_cast<UnexpectedMsg*>(e->owner);
  if (u->prev)
    u->prev->next = u->next;
  else
    unexpected_list_ = u->next;
  if (u->next) u->next->prev = u->prev;
  return u;
}

// Out of line, as before: recv() points recv_slot_ at its own stack request, which GCC
// flags as a dangling pointer once this is inlined there (recv clears it before returning).
[[gnu::noinline]] void Engine::start_recv(RequestImpl* r, std::span<std::byte> buf, int src,
                                          int tag, uint32_t ctx, bool blocking) {
  if (!begin_recv(r, buf, src, tag, ctx)) return;
  // With no other receive posted, a blocking one waits in the slot: the oldest posted
  // receive (anything posted meanwhile is younger), matched without the queue's hashing.
  if (blocking && posted_.empty() && !recv_slot_) {
    recv_slot_ = r;
    return;
  }
  posted_.push(r->match);
}

bool Engine::recv_from_unexpected(RequestImpl* r, int src, int tag, uint32_t ctx) {
  MatchEntry* e = unexpected_.take(ctx, src, tag);
  if (!e) return false;
  UnexpectedMsg* u = take_stored(e);
  r->status.source = u->info.src;
  r->status.tag = u->info.tag;
  r->status.size = u->info.size;
  p2p_->deliver(r->xfer, u->info);
  recycle(u);
  return true;
}

bool Engine::recv_from_dead(RequestImpl* r, int src, uint32_t ctx) {
  // Nothing more can come from a dead source; an any-source receive could wait forever
  // for a message only an unacknowledged dead member would have sent (ULFM semantics).
  const int dead = src == any_source ? unacked_failure(ctx) : peer_failed(src) ? src : -1;
  if (dead < 0) return false;
  r->status.source = dead;
  complete_request(r, Errc::peer_dead);
  return true;
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

Errc Engine::send(std::span<const std::byte> buf, int dest, int tag, uint32_t ctx) {
  Errc err = check_peer(dest, false);
  if (err == Errc::ok) err = check_tag(tag, false);
  if (err != Errc::ok) return err;
  if (peer_failed(dest)) [[unlikely]]
    return Errc::peer_dead;
  // An eager message the driver takes at once needs no request at all.
  if (p2p_->try_inject(dest, ctx, tag, buf) == drivers::IoStatus::done) return Errc::ok;
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
  store_unexpected(msg);
}

// Out of line: a matched arrival, the hot case, then needs no registers saved for this.
void Engine::store_unexpected(const proto::Incoming& msg) {
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

void Engine::transfer_cancelled(proto::Transfer& t) {
  RequestImpl* r = reinterpret_cast<RequestImpl*>(&t);
  r->status.cancelled = true;
  complete_request(r, Errc::ok);
}

bool Engine::withdraw_incoming(int src, uint32_t ctx, int32_t tag, uint64_t sender_req) {
  // Only the messages whose sender waits for an answer carry its id: an rts that is not
  // pushed, or a synchronous eager message. One taken by MPI_Mprobe is matched: not here.
  MatchEntry* e = unexpected_.find_exact_if(ctx, src, tag, [sender_req](const MatchEntry& m) {
    const proto::Incoming& in = static_cast<const UnexpectedMsg*>(m.owner)->info;
    return in.sender_req == sender_req &&
           ((in.type == proto::PacketType::rts && in.path != proto::RndvPath::push) || in.sync);
  });
  if (!e) return false;
  unexpected_.remove(*e);
  recycle(take_stored(e));
  return true;
}

bool Engine::cancel_send(RequestImpl* r) {
  if (r->state != RequestState::active || r->xfer.role != proto::Transfer::Role::send) return false;
  const auto outcome = p2p_->cancel_send(r->xfer);
  note_work();  // the answer needs progress (a parked progress thread wakes)
  return outcome != proto::PointToPoint::CancelOutcome::too_late;
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
    r->xfer.reg = mem::Registration::host({r->xfer.buf, t.len});  // its fragments' memory now
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

void Engine::keep_registered(std::span<const std::byte> buf) {
  EngineGuard guard;  // the progress thread registers rendezvous buffers too
  p2p_->register_persistent(buf);
}

void Engine::release_registered(const void* base) {
  EngineGuard guard;
  p2p_->release_persistent(base);
}

}  // namespace sluice::detail
