// Engine construction and teardown, and what it reports about itself.
#include "core/engine.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "core/progress/progress_thread.hpp"
#include "proto/reliable/reliable_channel.hpp"
#include "util/log.hpp"

namespace sluice::detail {

void Engine::fail(const std::string& what) {
  throw std::runtime_error("sluice: " + what);
}

Engine::Engine(std::unique_ptr<BootClient> boot) : boot_(std::move(boot)) {
  std::vector<std::string> problems;
  config_ = Config::from_environment(problems);
  for (const auto& p : problems) std::fprintf(stderr, "sluice: warning: %s\n", p.c_str());

  if (!boot_) fail("no bootstrap client");
  boot_->set_failure_poll_interval(
      static_cast<uint64_t>(config_.get_seconds("PMIX_FAILURE_POLL") * 1e9));
  rank_ = boot_->rank();
  size_ = boot_->size();
  util::log_state().rank = rank_;
  const std::string level = config_.get_string("LOG_LEVEL");
  util::log_state().level = level == "error"   ? util::LogLevel::error
                            : level == "info"  ? util::LogLevel::info
                            : level == "debug" ? util::LogLevel::debug
                                               : util::LogLevel::warn;
  spin_ns_ = static_cast<uint64_t>(config_.get_seconds("SPIN_TIME") * 1e9);
  max_sleep_ns_ =
      std::max<uint64_t>(1000, static_cast<uint64_t>(config_.get_seconds("BACKOFF_MAX") * 1e9));
  print_stats_ = config_.get_bool("STATS");

  proto::Thresholds th;
  th.eager_limit = config_.get_size("EAGER_LIMIT");
  th.get_threshold = config_.get_size("RNDV_GET_THRESHOLD");
  th.get_max = config_.get_size("RNDV_GET_MAX");
  th.push_max = config_.get_size("RNDV_PUSH_MAX");
  th.coll_get_max = config_.get_size("RNDV_COLL_GET_MAX");
  const std::string rndv = config_.get_string("RNDV_MODE");
  th.rndv = rndv == "get" || rndv == "cma" ? proto::Thresholds::RndvMode::get
            : rndv == "pipeline"           ? proto::Thresholds::RndvMode::pipeline
                                           : proto::Thresholds::RndvMode::automatic;
  wire_up(th);
}

Engine::~Engine() {
  finalize();
}

void Engine::finalize() {
  // The application finishes alone: stop the thread first (it never waits for the lock,
  // so joining it while the caller holds the lock is safe).
  if (progress_thread_) {
    if (print_stats_) std::fprintf(stderr, "%s", progress_thread_->stats_text().c_str());
    progress_thread_.reset();
    engine_lock().enable(false);
  }
  // Sends the user detached must still reach their peers; then agree that everyone is
  // done before the segments go away.
  auto bo = make_backoff();
  while (active_sends_ > abandoned_sends_ || p2p_->has_outbound()) {
    if (progress())
      bo.reset();
    else
      bo.pause();
  }
  barrier();
  quiesce_network();
  if (print_stats_) std::fprintf(stderr, "%s", stats_report().c_str());
  boot_->finalize();
  while (unexpected_list_) {
    unexpected_.remove(unexpected_list_->match);
    delete take_stored(&unexpected_list_->match);
  }
}

std::string_view Engine::driver_name(int peer) const {
  if (peer < 0 || peer >= size_) return "none";
  return p2p_->route(peer)->name();
}

std::string Engine::peer_address(int peer) const {
  if (peer < 0 || peer >= size_) return {};
  const drivers::Endpoint* ep = peer_endpoint_[static_cast<std::size_t>(peer)];
  return ep ? ep->peer_address(peer) : std::string();
}

std::string Engine::stats_report() const {
  const proto::ProtoStats& ps = p2p_->stats();
  std::ostringstream o;
  o << "sluice rank " << rank_ << " statistics\n";
  for (const auto& d : drivers_) o << "  driver " << d->name() << ": " << d->stats_text() << "\n";
  const proto::Thresholds& th = p2p_->thresholds();
  o << "  thresholds: eager <= " << th.eager_limit << " B (SLUICE_EAGER_LIMIT), then ";
  switch (th.rndv) {
    case proto::Thresholds::RndvMode::pipeline:
      o << "rendezvous by pipelined copy (SLUICE_RNDV_MODE=pipeline)\n";
      break;
    case proto::Thresholds::RndvMode::get:
      o << "rendezvous by get where the driver can (SLUICE_RNDV_MODE=get)\n";
      break;
    case proto::Thresholds::RndvMode::automatic:
      o << "pipelined copy below " << th.get_threshold << " B (SLUICE_RNDV_GET_THRESHOLD), get ";
      if (th.get_max == SIZE_MAX)
        o << "from there (no upper bound: local ranks outnumber CPUs)\n";
      else
        o << "up to " << th.get_max << " B (SLUICE_RNDV_GET_MAX), pipelined copy above\n";
      break;
  }
  for (proto::Protocol p : {proto::Protocol::eager, proto::Protocol::rndv_get,
                            proto::Protocol::rndv_pipeline, proto::Protocol::rndv_push}) {
    int i = static_cast<int>(p);
    o << "  protocol " << proto::protocol_name(p) << ": sent " << ps.sent[i] << " msgs / "
      << ps.sent_bytes[i] << " B, received " << ps.received[i] << " msgs\n";
  }
  o << "  pipelined fragments sent: " << ps.fragments << ", bytes pulled by get: " << ps.get_bytes
    << ", sends queued on a full driver: " << ps.driver_full
    << ", pushed messages stashed (no receive yet): " << ps.pushed_unexpected << "\n";
  o << "  matching: " << stats_.expected << " expected, " << stats_.unexpected
    << " unexpected (queue high-water " << stats_.max_unexpected << "), truncated " << ps.truncated
    << "\n";
  if (progress_thread_)
    o << "  progress thread: cpus " << progress_thread_->cpus_text() << ", completed "
      << stats_.thread_completions << " requests\n";
  return o.str();
}

}  // namespace sluice::detail
