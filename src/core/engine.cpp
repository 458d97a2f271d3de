// Engine construction and teardown, and what it reports about itself.
#include "core/engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "core/progress/progress_thread.hpp"
#include "core/rma_copy.hpp"
#include "core/rma_glue.hpp"
#include "mem/reg_emulation.hpp"
#include "proto/reliable/reliable_channel.hpp"
#include "util/log.hpp"

namespace sluice::detail {

void Engine::fail(const std::string& what) {
  throw std::runtime_error("sluice: " + what);
}

Engine::Engine(std::unique_ptr<BootClient> boot) : boot_(std::move(boot)) {
  std::vector<std::string> warnings, errors;
  config_ = Config::from_environment(warnings, errors);
  for (const auto& w : warnings) std::fprintf(stderr, "sluice: warning: %s\n", w.c_str());
  // A bad value stops the start-up here, before any segment or socket exists: running with
  // other settings than were asked for hides the mistake (and some values cannot work).
  if (!errors.empty()) {
    std::string what = "configuration: ";
    for (std::size_t i = 0; i < errors.size(); ++i) what += (i ? "; " : "") + errors[i];
    fail(what + " (sluice-info --config lists every key's range)");
  }

  // Strings with a syntax are checked here too, before anything exists.
  if (const std::string cpus = config_.get_string("PROGRESS_CPUS"); !cpus.empty()) {
    std::vector<unsigned> list;
    if (!parse_cpu_list(cpus, list))
      fail("configuration: SLUICE_PROGRESS_CPUS=\"" + cpus +
           "\" is not a CPU list (OS indices, e.g. 1 or 2-3,6)");
  }

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
  stats_mode_ = config_.get_string("STATS");
  check_stats_file();

  proto::Thresholds th;
  th.eager_limit = config_.get_size("EAGER_LIMIT");
  th.get_threshold = config_.get_size("RNDV_GET_THRESHOLD");
  th.get_threshold_chosen = config_.is_set("RNDV_GET_THRESHOLD");
  th.get_max = config_.get_size("RNDV_GET_MAX");
  th.get_max_chosen = config_.is_set("RNDV_GET_MAX");
  th.push_max = config_.get_size("RNDV_PUSH_MAX");
  th.coll_get_max = config_.get_size("RNDV_COLL_GET_MAX");
  const std::string rndv = config_.get_string("RNDV_MODE");
  th.rndv = rndv == "get" || rndv == "cma" ? proto::Thresholds::RndvMode::get
            : rndv == "pipeline"           ? proto::Thresholds::RndvMode::pipeline
                                           : proto::Thresholds::RndvMode::automatic;
  proto::RegOptions reg;
  const std::string strategy = config_.get_string("REG_STRATEGY");
  if (!proto::parse_reg_strategy(strategy, reg.strategy)) reg.strategy = proto::RegStrategy::cache;
  reg.staged.c0 = config_.get_size("REG_SUPERPIPELINE_C0");
  reg.staged.chunk = config_.get_size("REG_PIPELINE_CHUNK");
  reg.staged.buffers = static_cast<unsigned>(config_.get_int("REG_STAGING_BUFFERS"));
  {
    const std::string q = config_.get_string("REG_SUPERPIPELINE_Q");
    char* end = nullptr;
    const double v = std::strtod(q.c_str(), &end);
    if (end == q.c_str() || *end != '\0' || !(v >= 1.0 && v <= 4.0))
      fail("configuration: SLUICE_REG_SUPERPIPELINE_Q=" + q + ": a number from 1 to 4");
    reg.staged.q = v;
  }
  reg.chosen = config_.is_set("REG_STRATEGY");
  std::vector<std::string> cache_problems;  // ranges were checked at start-up already
  reg.cache = mem::CacheOptions::from_config(config_, cache_problems);
  // Process-wide, set before any driver registers memory.
  mem::RegEmulation emulate;
  std::string emulate_why;
  if (!mem::parse_reg_emulation(config_.get_string("REG_EMULATE"), emulate, emulate_why))
    fail("configuration: " + emulate_why);
  mem::set_reg_emulation(emulate);
  load_cost_model(reg);
  wire_up(th, reg);
  register_stats();
}

void Engine::load_cost_model(proto::RegOptions& reg) {
  const std::string key = config_.get_string("TUNE_PROFILE");
  const std::string path = key == "auto"  ? proto::default_profile_path()
                           : key == "off" ? std::string()
                                          : key;
  const bool named = key != "auto" && key != "off";
  if (!path.empty() && (named || ::access(path.c_str(), F_OK) == 0)) {
    std::string why;
    if (!proto::load_profile(path, reg.model, why))
      fail("configuration: SLUICE_TUNE_PROFILE=" + key + ": " + why);
    reg.tuned = true;
    if (!config_.is_set("REG_SUPERPIPELINE_C0")) reg.staged.c0 = reg.model.c0;
    if (!config_.is_set("REG_SUPERPIPELINE_Q")) reg.staged.q = reg.model.q;
    if (!config_.is_set("REG_PIPELINE_CHUNK")) reg.staged.chunk = reg.model.pipeline_chunk;
    if (!config_.is_set("REG_STAGING_BUFFERS")) reg.staged.buffers = reg.model.staging_buffers;
    const std::string now = mem::reg_emulation().describe();
    if (reg.model.reg_emulate != now)
      util::log(util::LogLevel::warn,
                "the cost model profile %s was measured with registration cost '%s', this run "
                "has '%s': its predictions do not hold here",
                path.c_str(), reg.model.reg_emulate.c_str(), now.c_str());
  }
  // The model predicts what runs: the staged options in force, whatever set them.
  reg.model.c0 = reg.staged.c0;
  reg.model.q = reg.staged.q;
  reg.model.pipeline_chunk = reg.staged.chunk;
  reg.model.staging_buffers = reg.staged.buffers;
}

Engine::~Engine() {
  if (!finalized_) {
    if (process_exiting())
      leave();
    else
      finalize();
  }
  while (unexpected_list_) {
    unexpected_.remove(unexpected_list_->match);
    delete take_stored(&unexpected_list_->match);
  }
}

void Engine::leave() {
  finalized_ = true;
  if (progress_thread_) {
    progress_thread_.reset();
    engine_lock().enable(false);
  }
  util::log(util::LogLevel::warn,
            "the process exits without finalize (MPI_Finalize, Session::finalize() or the "
            "Session's end; a static Session needs Session::finalize()): leaving "
            "the job without waiting for the other ranks");
  report_stats();
}

void Engine::abort(int code, std::string_view reason) {
  std::fflush(nullptr);
  boot_->abort(code, reason);
  std::_Exit(code & 0xff ? code & 0xff : 1);  // (abort() does not return)
}

void Engine::finalize() {
  if (finalized_) return;
  finalized_ = true;
  // The application finishes alone: stop the thread first (it never waits for the lock,
  // so joining it while the caller holds the lock is safe).
  if (progress_thread_) {
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
  report_stats();
  boot_->finalize();
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

}  // namespace sluice::detail
