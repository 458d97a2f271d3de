// Core side of one-sided communication: owns the RMA protocol once a process opens an Rma
// context, attaches it to the packet demultiplexer beside p2p, progresses its queue as an
// engine hook, turns its completions into requests and hands active messages to the
// handler table of the open context (the public sluice::Rma, core/rma.cpp).
//
// The protocol is attached on first use, not at start-up: while p2p is the only protocol
// the drivers hand packets straight to it (no demux call per message, see drivers/driver.hpp);
// a job that never opens an Rma keeps that. Opening one is collective, so no rank sends a
// one-sided packet to a rank that has not attached yet.
#pragma once

#include <functional>
#include <memory>

#include "core/engine.hpp"
#include "proto/rma/rma.hpp"

namespace sluice::mem {
class UringDomain;
}

namespace sluice::detail {

class RmaGlue final : public proto::rma::RmaUpcalls, public ProgressHook {
 public:
  explicit RmaGlue(Engine& e);
  ~RmaGlue();
  RmaGlue(const RmaGlue&) = delete;
  RmaGlue& operator=(const RmaGlue&) = delete;

  proto::rma::RmaProtocol& proto() { return proto_; }
  Engine& engine() { return engine_; }

  // A request for a one-sided op (counted as a send: finalize waits for it). Its address
  // is the `user` id the protocol completes.
  RequestImpl* new_request();
  static uint64_t user_of(RequestImpl* r) { return reinterpret_cast<uint64_t>(r); }
  // A request already complete with `err` (the op never started).
  RequestImpl* failed(Errc err) { return engine_.failed_request(err); }

  // An Rma context opens / closes: while open, this rank serves peers (the progress thread
  // keeps polling instead of parking) and `dispatch` receives active messages.
  void open(std::function<void(const proto::rma::AmArrival&)> dispatch);
  void close();
  bool serving() const { return serving_; }
  // MPI windows on the native path that exist in this process (mpi/win.cpp): the last one's
  // free stops serving.
  int& native_windows() { return native_windows_; }

  // An implicit op or an active message was posted: wake a parked progress thread.
  void work_posted() { engine_.note_work(); }

  void fail_peer(int peer) { proto_.fail_peer(peer); }

  // proto::rma::RmaUpcalls
  void rma_complete(uint64_t user, Errc err) override;
  void on_am(const proto::rma::AmArrival& am) override;
  // ProgressHook
  bool progress() override { return proto_.progress(); }
  bool busy() const override { return proto_.busy(); }
  // Peers may put, get or send active messages at any time: with a progress thread, keep
  // polling the drivers (a doorbell or a short sleep) rather than parking until the
  // application posts work, so the target application never has to call anything.
  bool linger() const override { return serving_; }

 private:
  // Firehose: sets the protocol's tables up from SLUICE_RMA_FIREHOSE and SLUICE_FIREHOSE_*.
  void setup_firehose();

  Engine& engine_;
  // Pins the buckets Firehose keeps for peers; declared before the protocol, which holds
  // registrations of it until it is destroyed.
  std::unique_ptr<mem::UringDomain> fh_domain_;
  proto::rma::RmaProtocol proto_;
  std::function<void(const proto::rma::AmArrival&)> dispatch_;
  bool serving_ = false;
  bool hooked_ = false;
  int native_windows_ = 0;
};

}  // namespace sluice::detail
