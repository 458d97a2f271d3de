// The public Session/Request API: thin handles over the process's one Engine.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>

#include "core/engine.hpp"
#include "sluice/sluice.hpp"

namespace sluice {

namespace {
std::atomic<bool> exiting{false};
void mark_exiting() {
  exiting.store(true, std::memory_order_relaxed);
}
// Serializes the engine against its progress thread (a no-op while the thread is off).
}  // namespace

namespace detail {
// The one Engine of the process (Request handles reach it through here).
Engine* g_current_engine = nullptr;

bool process_exiting() {
  return exiting.load(std::memory_order_relaxed);
}

Engine* open_engine(std::unique_ptr<BootClient> boot) {
  if (detail::g_current_engine) throw std::runtime_error("sluice: only one Session per process");
  // Registered now, so that it runs before the destructors registered earlier (a Session
  // held in a global pointer).
  static const bool registered = std::atexit(mark_exiting) == 0;
  (void)registered;
  // A static Session registers its destructor only once its constructor returns, after
  // that handler, so exit() would destroy it first and its finalize would wait for ranks
  // that may never come. exit() destroys the calling thread's thread_local objects before
  // any atexit handler or static destructor runs: this one marks the exit first. Only in
  // the main thread, whose thread_locals die only with the process.
  struct ExitSentinel {
    ~ExitSentinel() { mark_exiting(); }
  };
  if (::gettid() == ::getpid()) {
    static thread_local ExitSentinel sentinel;
    (void)sentinel;
  }
  detail::g_current_engine = new Engine(std::move(boot));
  return detail::g_current_engine;
}
}  // namespace detail

Request& Request::operator=(Request&& o) noexcept {
  detail::EngineGuard guard;
  if (this != &o) {
    if (impl_ && detail::g_current_engine) detail::g_current_engine->release(impl_);
    impl_ = o.impl_;
    o.impl_ = nullptr;
  }
  return *this;
}

Request::~Request() {
  detail::EngineGuard guard;
  if (impl_ && detail::g_current_engine) detail::g_current_engine->release(impl_);
}

// Session::Session() is the composition root, above the boot layer: src/api/session.cpp.

Session::~Session() {
  delete engine_;
  detail::g_current_engine = nullptr;
}

void Session::finalize() {
  detail::EngineGuard guard;
  engine_->finalize();
}

int Session::rank() const {
  return engine_->rank();
}
int Session::size() const {
  return engine_->size();
}

Request Session::isend(std::span<const std::byte> buf, int dest, int tag, ContextId ctx) {
  detail::EngineGuard guard;
  Errc err;
  return Request(engine_->isend(buf, dest, tag, ctx, false, err));
}

Request Session::issend(std::span<const std::byte> buf, int dest, int tag, ContextId ctx) {
  detail::EngineGuard guard;
  Errc err;
  return Request(engine_->isend(buf, dest, tag, ctx, true, err));
}

Request Session::irecv(std::span<std::byte> buf, int source, int tag, ContextId ctx) {
  detail::EngineGuard guard;
  Errc err;
  return Request(engine_->irecv(buf, source, tag, ctx, err));
}

Errc Session::send(std::span<const std::byte> buf, int dest, int tag, ContextId ctx) {
  detail::EngineGuard guard;
  return engine_->send(buf, dest, tag, ctx);
}

Errc Session::recv(std::span<std::byte> buf, int source, int tag, Status* status, ContextId ctx) {
  detail::EngineGuard guard;
  return engine_->recv(buf, source, tag, ctx, status);
}

bool Session::iprobe(int source, int tag, Status* status, ContextId ctx) {
  detail::EngineGuard guard;
  return engine_->iprobe(source, tag, ctx, status);
}

Errc Session::probe(int source, int tag, Status* status, ContextId ctx) {
  detail::EngineGuard guard;
  if ((source != any_source && (source < 0 || source >= size())) || (tag != any_tag && tag < 0))
    return Errc::invalid_argument;
  auto bo = engine_->make_backoff();
  while (!engine_->iprobe(source, tag, ctx, status)) {
    if (Errc e = engine_->probe_failure(source, ctx); e != Errc::ok) return e;  // never comes
    bo.pause();
  }
  return Errc::ok;
}

Errc Session::wait(Request& req, Status* status) {
  detail::EngineGuard guard;
  if (!req.impl_) return Errc::invalid_argument;
  Errc e = engine_->wait(req.impl_, status);
  req.impl_ = nullptr;
  return e;
}

bool Session::test(Request& req, Status* status) {
  detail::EngineGuard guard;
  if (!req.impl_) return false;
  if (!engine_->test(req.impl_, status)) return false;
  req.impl_ = nullptr;
  return true;
}

Errc Session::waitall(std::span<Request> reqs, std::span<Status> statuses) {
  detail::EngineGuard guard;
  Errc first = Errc::ok;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    Status st;
    Errc e = reqs[i].impl_ ? wait(reqs[i], &st) : Errc::ok;
    if (i < statuses.size()) statuses[i] = st;
    if (first == Errc::ok && e != Errc::ok) first = e;
  }
  return first;
}

int Session::waitany(std::span<Request> reqs, Status* status) {
  detail::EngineGuard guard;
  bool any_valid = false;
  for (auto& r : reqs) any_valid |= r.valid();
  if (!any_valid) return -1;
  auto bo = engine_->make_backoff();
  for (;;) {
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      if (reqs[i].impl_ && reqs[i].impl_->state == detail::RequestState::complete) {
        wait(reqs[i], status);
        return static_cast<int>(i);
      }
    }
    if (engine_->progress())
      bo.reset();
    else
      bo.pause();
  }
}

bool Session::cancel(Request& req) {
  detail::EngineGuard guard;
  if (!req.impl_) return false;
  return req.impl_->xfer.role == proto::Transfer::Role::send ? engine_->cancel_send(req.impl_)
                                                             : engine_->cancel(req.impl_);
}

Errc Session::barrier() {
  detail::EngineGuard guard;
  return engine_->barrier();
}
std::size_t Session::ack_failures(ContextId ctx) {
  detail::EngineGuard guard;
  return engine_->ack_failures(ctx);
}
std::vector<int> Session::failed_ranks() const {
  detail::EngineGuard guard;
  engine_->progress();
  return engine_->failed_ranks();
}
void Session::progress() {
  detail::EngineGuard guard;
  engine_->progress();
}
std::string_view Session::driver_name(int peer) const {
  return engine_->driver_name(peer);
}
std::string Session::stats_report() const {
  detail::EngineGuard guard;
  return engine_->stats_report();
}
std::optional<std::uint64_t> Session::counter(std::string_view name) const {
  detail::EngineGuard guard;
  return engine_->stats_registry().value(name);
}

}  // namespace sluice
