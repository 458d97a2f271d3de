#include "core/rma_glue.hpp"

#include <algorithm>
#include <string>

#include "mem/invalidation_monitor.hpp"
#include "mem/uring_domain.hpp"
#include "util/log.hpp"

namespace sluice::detail {

RmaGlue::RmaGlue(Engine& e) : engine_(e), proto_(*this, e.rank()) {
  for (int peer = 0; peer < e.size(); ++peer) proto_.set_route(peer, e.p2p().route(peer));
  proto_.set_one_sided(e.config().get_string("RMA_PATH") != "packets");
  e.demux_.attach(proto::rma::kProtocolId, drivers::kRmaTypes, proto_);
  setup_firehose();
  proto_.register_stats(e.stats_registry());
}

void RmaGlue::setup_firehose() {
  const Config& c = engine_.config();
  const std::string mode = c.get_string("RMA_FIREHOSE");
  if (mode == "off" || engine_.size() < 2) return;
  const proto::rma::PinStrategy strategy = mode == "rndv" ? proto::rma::PinStrategy::rndv_keep
                                           : mode == "rndv-unpin"
                                               ? proto::rma::PinStrategy::rndv_unpin
                                           : mode == "pin-all" ? proto::rma::PinStrategy::pin_all
                                                               : proto::rma::PinStrategy::firehose;
  mem::FirehoseParams p;
  const std::size_t page = mem::page_size();
  p.bucket_bytes = (c.get_size("FIREHOSE_BUCKET") + page - 1) / page * page;
  p.m_bytes = c.get_size("FIREHOSE_M");
  p.maxvictim_bytes = c.get_size("FIREHOSE_MAXVICTIM");
  p.nodes = engine_.size();
  if (p.validate() != Errc::ok) {
    util::log(util::LogLevel::warn,
              "Firehose off: SLUICE_FIREHOSE_M (%zu) gives no firehose of %zu bytes per peer "
              "among %d ranks",
              p.m_bytes, p.bucket_bytes, p.nodes);
    return;
  }
  // Real pinning (io_uring registered buffers), one slot per bucket (mapped or victim) and a
  // few for a bucket being re-pinned wider; the host domain (bookkeeping only) without it.
  // The rendezvous baselines pin without a bound: as many slots as the domain allows.
  const std::size_t buckets = strategy == proto::rma::PinStrategy::firehose
                                  ? (p.m_bytes + p.maxvictim_bytes) / p.bucket_bytes + 8
                                  : std::size_t{16384};
  std::string why;
  fh_domain_ = mem::UringDomain::open(
      {static_cast<unsigned>(std::min<std::size_t>(buckets, 16384)), 32}, why);
  if (!fh_domain_)
    util::log(util::LogLevel::info, "Firehose pins nothing (host domain): %s", why.c_str());
  mem::Domain& domain = fh_domain_ ? static_cast<mem::Domain&>(*fh_domain_) : mem::host_domain();
  mem::InvalidationMonitor& monitor = mem::InvalidationMonitor::shared();
  if (!monitor.working())
    util::log(util::LogLevel::warn,
              "Firehose: no invalidation monitor (%s): a bucket whose memory is freed stays "
              "mapped",
              monitor.status().c_str());
  proto_.enable_pinning(strategy, p, c.get_size("FIREHOSE_THRESHOLD"), domain,
                        monitor.working() ? &monitor : nullptr);
  engine_.stats_registry().add_info(
      "firehose", "config",
      [p, strategy, d = std::string(domain.name())] {
        return "strategy=" + std::string(proto::rma::to_string(strategy)) +
               " M=" + std::to_string(p.m_bytes) +
               " MAXVICTIM=" + std::to_string(p.maxvictim_bytes) +
               " B=" + std::to_string(p.bucket_bytes) +
               " F=" + std::to_string(p.firehoses_per_node()) + " domain=" + d;
      },
      "Firehose parameters in force and the domain that pins");
}

RmaGlue::~RmaGlue() {
  if (hooked_) engine_.remove_progress_hook(this);
}

RmaGlue& Engine::rma() {
  if (!rma_) rma_ = std::make_unique<RmaGlue>(*this);
  return *rma_;
}

RequestImpl* RmaGlue::new_request() {
  RequestImpl* r = engine_.pool_.get();
  r->xfer.role = proto::Transfer::Role::send;
  ++engine_.active_sends_;
  engine_.note_work();
  return r;
}

void RmaGlue::rma_complete(uint64_t user, Errc err) {
  engine_.complete_request(reinterpret_cast<RequestImpl*>(user), err);
}

void RmaGlue::on_am(const proto::rma::AmArrival& am) {
  if (dispatch_) {
    dispatch_(am);
    return;
  }
  util::log(util::LogLevel::warn,
            "an active message from rank %d arrived while no Rma context is open: dropped", am.src);
}

void RmaGlue::open(std::function<void(const proto::rma::AmArrival&)> dispatch) {
  dispatch_ = std::move(dispatch);
  serving_ = true;
  if (!hooked_) {
    engine_.add_progress_hook(this);
    hooked_ = true;
  }
}

void RmaGlue::close() {
  dispatch_ = nullptr;
  serving_ = false;
  if (hooked_) {
    engine_.remove_progress_hook(this);
    hooked_ = false;
  }
}

}  // namespace sluice::detail
