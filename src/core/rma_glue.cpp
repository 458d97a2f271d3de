#include "core/rma_glue.hpp"

#include "util/log.hpp"

namespace sluice::detail {

RmaGlue::RmaGlue(Engine& e) : engine_(e), proto_(*this, e.rank()) {
  for (int peer = 0; peer < e.size(); ++peer) proto_.set_route(peer, e.p2p().route(peer));
  proto_.set_one_sided(e.config().get_string("RMA_PATH") != "packets");
  e.demux_.attach(proto::rma::kProtocolId, drivers::kRmaTypes, proto_);
  proto_.register_stats(e.stats_registry());
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
