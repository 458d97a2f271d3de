// The public one-sided API (sluice/rma.hpp): thin calls into the engine's RMA protocol.
#include "sluice/rma.hpp"

#include <stdexcept>

#include "core/engine.hpp"
#include "core/rma_glue.hpp"
#include "util/log.hpp"

namespace sluice {

namespace {

detail::RmaGlue* glue() {
  detail::Engine* e = detail::current_engine();
  return e ? e->rma_if_open() : nullptr;
}

mem::RemoteKey to_mem(const RemoteKey& k) {
  return mem::RemoteKey{k.addr, k.length, k.key};
}

}  // namespace

// ---- RegisteredMemory ---------------------------------------------------------------------

RegisteredMemory& RegisteredMemory::operator=(RegisteredMemory&& o) noexcept {
  if (this != &o) {
    reset();
    base_ = o.base_;
    length_ = o.length_;
    id_ = o.id_;
    o.base_ = nullptr;
    o.length_ = 0;
    o.id_ = 0;
  }
  return *this;
}

void RegisteredMemory::reset() {
  if (id_) {
    detail::EngineGuard guard;
    if (detail::RmaGlue* g = glue()) g->proto().remove_region(id_);
  }
  base_ = nullptr;
  length_ = 0;
  id_ = 0;
}

// ---- Rma ----------------------------------------------------------------------------------

Rma::Rma(Session& session, std::vector<AmHandler> handlers)
    : session_(session), handlers_(std::move(handlers)) {
  if (handlers_.size() > 256) throw std::runtime_error("sluice: more than 256 AM handlers");
  {
    detail::EngineGuard guard;
    detail::Engine* e = detail::current_engine();
    if (!e) throw std::runtime_error("sluice: Rma needs an open Session");
    detail::RmaGlue& g = e->rma();
    if (g.serving()) throw std::runtime_error("sluice: only one Rma context at a time");
    g.open([this](const proto::rma::AmArrival& am) {
      if (am.handler >= handlers_.size() || !handlers_[am.handler]) {
        util::log(util::LogLevel::warn,
                  "active message from rank %d for handler %u, which is not registered: dropped",
                  am.src, static_cast<unsigned>(am.handler));
        return;
      }
      AmToken token(am.src, am.reply);
      handlers_[am.handler](token, am.args, am.payload);
    });
  }
  // Every rank has attached before anyone sends a one-sided packet.
  session_.barrier();
}

Rma::~Rma() {
  flush();
  // Peers finished their operations on this rank's memory once they pass the barrier too.
  session_.barrier();
  detail::EngineGuard guard;
  if (detail::RmaGlue* g = glue()) {
    auto bo = g->engine().make_backoff();
    while (g->proto().busy()) {  // replies still queued for a full driver
      if (g->engine().progress())
        bo.reset();
      else
        bo.pause();
    }
    g->close();
  }
}

Errc Rma::check_target(int target) const {
  return target >= 0 && target < session_.size() ? Errc::ok : Errc::invalid_argument;
}

Errc Rma::register_memory(std::span<std::byte> memory, RegisteredMemory& out) {
  detail::EngineGuard guard;
  detail::RmaGlue* g = glue();
  if (!g) return Errc::invalid_argument;
  RegisteredMemory r;
  r.base_ = memory.data();
  r.length_ = memory.size();
  r.id_ = g->proto().add_region(memory.data(), memory.size());
  out = std::move(r);
  return Errc::ok;
}

Request Rma::iput(std::span<const std::byte> src, int target, const RemoteKey& key,
                  std::uint64_t offset) {
  detail::EngineGuard guard;
  detail::RmaGlue& g = *glue();
  if (Errc e = check_target(target); e != Errc::ok) return Request(g.failed(e));
  detail::RequestImpl* r = g.new_request();
  if (Errc e = g.proto().put(target, src, to_mem(key), offset, g.user_of(r)); e != Errc::ok) {
    g.rma_complete(g.user_of(r), e);
  }
  return Request(r);
}

Request Rma::iget(std::span<std::byte> dst, int target, const RemoteKey& key,
                  std::uint64_t offset) {
  detail::EngineGuard guard;
  detail::RmaGlue& g = *glue();
  if (Errc e = check_target(target); e != Errc::ok) return Request(g.failed(e));
  detail::RequestImpl* r = g.new_request();
  if (Errc e = g.proto().get(target, dst, to_mem(key), offset, g.user_of(r)); e != Errc::ok) {
    g.rma_complete(g.user_of(r), e);
  }
  return Request(r);
}

Errc Rma::put(std::span<const std::byte> src, int target, const RemoteKey& key,
              std::uint64_t offset) {
  detail::EngineGuard guard;
  if (Errc e = check_target(target); e != Errc::ok) return e;
  detail::RmaGlue& g = *glue();
  g.work_posted();
  return g.proto().put(target, src, to_mem(key), offset, 0);
}

Errc Rma::get(std::span<std::byte> dst, int target, const RemoteKey& key, std::uint64_t offset) {
  detail::EngineGuard guard;
  if (Errc e = check_target(target); e != Errc::ok) return e;
  detail::RmaGlue& g = *glue();
  g.work_posted();
  return g.proto().get(target, dst, to_mem(key), offset, 0);
}

Errc Rma::flush(int target) {
  if (target != any_source && check_target(target) != Errc::ok) return Errc::invalid_argument;
  detail::EngineGuard guard;
  detail::RmaGlue* g = glue();
  if (!g) return Errc::invalid_argument;
  detail::Engine& e = g->engine();
  auto bo = e.make_backoff();
  while (g->proto().outstanding(target) > 0) {
    if (e.progress())
      bo.reset();
    else
      bo.pause();
  }
  return g->proto().take_error(target);
}

Request Rma::atomic(int op, unsigned width, int target, const RemoteKey& key, std::uint64_t offset,
                    std::uint64_t operand, std::uint64_t compare, void* old) {
  detail::EngineGuard guard;
  detail::RmaGlue& g = *glue();
  if (Errc e = check_target(target); e != Errc::ok) return Request(g.failed(e));
  detail::RequestImpl* r = g.new_request();
  if (Errc e = g.proto().atomic(target, static_cast<proto::rma::AtomicOp>(op), width, to_mem(key),
                                offset, operand, compare, old, g.user_of(r));
      e != Errc::ok) {
    g.rma_complete(g.user_of(r), e);
  }
  return Request(r);
}

Errc Rma::am_short(int target, unsigned handler, std::span<const std::uint64_t> args) {
  if (Errc e = check_target(target); e != Errc::ok || handler > 255) return Errc::invalid_argument;
  detail::EngineGuard guard;
  detail::RmaGlue& g = *glue();
  g.work_posted();
  return g.proto().am(target, false, proto::rma::AmKind::short_am, static_cast<uint8_t>(handler),
                      args, {}, {}, 0);
}

Errc Rma::am_medium(int target, unsigned handler, std::span<const std::uint64_t> args,
                    std::span<const std::byte> payload) {
  if (Errc e = check_target(target); e != Errc::ok || handler > 255) return Errc::invalid_argument;
  detail::EngineGuard guard;
  detail::RmaGlue& g = *glue();
  g.work_posted();
  return g.proto().am(target, false, proto::rma::AmKind::medium, static_cast<uint8_t>(handler),
                      args, payload, {}, 0);
}

Errc Rma::am_long(int target, unsigned handler, std::span<const std::uint64_t> args,
                  std::span<const std::byte> payload, const RemoteKey& dest, std::uint64_t offset) {
  if (Errc e = check_target(target); e != Errc::ok || handler > 255) return Errc::invalid_argument;
  detail::EngineGuard guard;
  detail::RmaGlue& g = *glue();
  g.work_posted();
  return g.proto().am(target, false, proto::rma::AmKind::long_am, static_cast<uint8_t>(handler),
                      args, payload, to_mem(dest), offset);
}

std::size_t Rma::max_medium(int target, std::size_t nargs) const {
  if (check_target(target) != Errc::ok) return 0;
  detail::EngineGuard guard;
  detail::RmaGlue* g = glue();
  return g ? g->proto().max_medium(target, nargs) : 0;
}

// ---- AmToken ------------------------------------------------------------------------------

Errc AmToken::may_reply() {
  if (reply_ || replied_) return Errc::invalid_argument;
  replied_ = true;
  return Errc::ok;
}

Errc AmToken::reply_short(unsigned handler, std::span<const std::uint64_t> args) {
  if (handler > 255 || may_reply() != Errc::ok) return Errc::invalid_argument;
  detail::EngineGuard guard;
  return glue()->proto().am(source_, true, proto::rma::AmKind::short_am,
                            static_cast<uint8_t>(handler), args, {}, {}, 0);
}

Errc AmToken::reply_medium(unsigned handler, std::span<const std::uint64_t> args,
                           std::span<const std::byte> payload) {
  if (handler > 255 || may_reply() != Errc::ok) return Errc::invalid_argument;
  detail::EngineGuard guard;
  return glue()->proto().am(source_, true, proto::rma::AmKind::medium,
                            static_cast<uint8_t>(handler), args, payload, {}, 0);
}

Errc AmToken::reply_long(unsigned handler, std::span<const std::uint64_t> args,
                         std::span<const std::byte> payload, const RemoteKey& dest,
                         std::uint64_t offset) {
  if (handler > 255 || may_reply() != Errc::ok) return Errc::invalid_argument;
  detail::EngineGuard guard;
  return glue()->proto().am(source_, true, proto::rma::AmKind::long_am,
                            static_cast<uint8_t>(handler), args, payload, to_mem(dest), offset);
}

}  // namespace sluice
