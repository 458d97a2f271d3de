// Engine peer-failure handling (ULFM-style): failing the requests that wait on a dead
// peer, per-context acknowledgement, the launcher's failure notices.
#include "core/engine.hpp"

#include <algorithm>

#include "core/rma_glue.hpp"
#include "proto/reliable/reliable_channel.hpp"
#include "util/log.hpp"

namespace sluice::detail {

void Engine::fail_peer(int peer) {
  if (peer == rank_ || peer < 0 || peer >= size_) return;
  if (peer_failed_.empty() || peer_failed_[static_cast<std::size_t>(peer)]) return;
  peer_failed_[static_cast<std::size_t>(peer)] = true;
  failed_order_.push_back(peer);
  util::log(util::LogLevel::warn, "rank %d is unreachable: its requests fail", peer);
  // Sends still queued for the driver, then everything else that waits on the peer: posted
  // receives naming it, any-source receives on a context it belongs to (ULFM: they could
  // wait forever for a message only it would have sent), rendezvous sends waiting for its
  // answer, receives mid-pipeline.
  p2p_->fail_peer(peer);
  if (rma_) rma_->fail_peer(peer);
  if (rel_) rel_->mark_dead(peer);  // no retransmissions to it, nor a wait for its acks
  auto fail = [&](RequestImpl* r) {
    if (r->state != RequestState::active) return;
    if (r->posted) {
      if (r->match.src != peer && (r->match.src != any_source || !context_has(r->match.ctx, peer)))
        return;
      if (r == recv_slot_)
        recv_slot_ = nullptr;
      else
        posted_.remove(r->match);
      r->posted = false;
      r->status.source = peer;
      complete_request(r, Errc::peer_dead);
      return;
    }
    if (r->xfer.peer == peer && r->xfer.protocol != proto::Protocol::none)
      complete_request(r, Errc::peer_dead);
  };
  pool_.for_each(fail);
  if (blocking_recv_) fail(blocking_recv_);
}

void Engine::drain_drivers() {
  // A failure notice can overtake the dead rank's last messages: they may still wait in a
  // socket or ring here. They were sent before it died, so they are delivered (in order)
  // before its receives start to fail. Bounded, since live peers may keep sending.
  for (int pass = 0; pass < 4096; ++pass) {
    int got = 0;
    for (std::size_t i = 1; i < drivers_.size(); ++i) got += drivers_[i]->poll(demux_.entry(), 64);
    if (got == 0) break;
  }
}

bool Engine::context_has(uint32_t ctx, int peer) const {
  auto it = contexts_.find(ctx);
  if (it == contexts_.end() || it->second.members.empty()) return true;
  return std::binary_search(it->second.members.begin(), it->second.members.end(), peer);
}

int Engine::unacked_failure(uint32_t ctx) const {
  if (failed_order_.empty()) return -1;
  auto it = contexts_.find(ctx);
  const std::size_t acked = it == contexts_.end() ? 0 : it->second.acked;
  for (std::size_t i = acked; i < failed_order_.size(); ++i)
    if (context_has(ctx, failed_order_[i])) return failed_order_[i];
  return -1;
}

void Engine::set_context_members(uint32_t ctx, std::vector<int> world_ranks) {
  std::sort(world_ranks.begin(), world_ranks.end());
  ContextFailures& c = contexts_[ctx];
  c.members = std::move(world_ranks);
  c.acked = 0;
}

void Engine::forget_context(uint32_t ctx) {
  contexts_.erase(ctx);
}

std::size_t Engine::ack_failures(uint32_t ctx) {
  progress();  // take in the failures already reported
  contexts_[ctx].acked = failed_order_.size();
  return failed_order_.size();
}

Errc Engine::probe_failure(int src, uint32_t ctx) const {
  if (failed_order_.empty()) return Errc::ok;
  if (src == any_source) return unacked_failure(ctx) >= 0 ? Errc::peer_dead : Errc::ok;
  return src >= 0 && src < size_ && peer_failed(src) ? Errc::peer_dead : Errc::ok;
}

void Engine::poll_launcher_notices() {
  boot_->take_failed_ranks(dead_pending_);
}

}  // namespace sluice::detail
