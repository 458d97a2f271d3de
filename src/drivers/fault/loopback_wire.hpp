// An in-memory datagram "wire" joining N endpoints in one process: each endpoint is a
// Driver whose send() queues a copy of the packet in the destination's inbox and whose
// poll() hands its own inbox to the sink. Semantics are those of an unreliable datagram
// network (caps: reliable = ordered = false): a full inbox or a link that is down drops
// the packet silently. Deterministic and single-threaded; used to test the reliability
// layer and the fault injector without sockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "drivers/driver.hpp"

namespace sluice::drivers {

struct LoopbackWireOptions {
  std::size_t max_header = 256;
  std::size_t max_packet = 1400;   // largest payload, like a datagram under a 1500 MTU
  std::size_t inbox_limit = 1024;  // packets queued per endpoint before drops
};

class LoopbackWire {
 public:
  LoopbackWire(int endpoints, LoopbackWireOptions options = {})
      : state_(std::make_shared<State>(endpoints, options)) {}

  // A driver for endpoint `rank` (0 <= rank < endpoints). Each may be taken any number of
  // times; the wire's state lives as long as any endpoint or the wire itself.
  std::unique_ptr<Driver> endpoint(int rank) { return std::make_unique<Endpoint>(state_, rank); }

  // Links are directional and start up. A down link drops everything sent over it.
  void set_link(int from, int to, bool up) { state_->link(from, to) = up; }
  // Puts raw bytes straight into `dst`'s inbox as if `src` had sent them.
  void inject(int dst, int src, std::span<const std::byte> header,
              std::span<const std::byte> payload) {
    state_->push(dst, src, header, payload, /*force=*/true);
  }
  std::size_t queued(int rank) const { return state_->inboxes.at(rank).size(); }
  std::uint64_t dropped() const { return state_->dropped; }
  std::uint64_t carried() const { return state_->carried; }

 private:
  struct Packet {
    int src;
    std::vector<std::byte> header;
    std::vector<std::byte> payload;
  };
  struct State {
    State(int n, LoopbackWireOptions o)
        : options(o),
          inboxes(static_cast<std::size_t>(n)),
          links(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), true),
          size(n) {
      if (n <= 0) throw std::invalid_argument("LoopbackWire: need at least one endpoint");
    }
    std::vector<bool>::reference link(int from, int to) {
      return links.at(static_cast<std::size_t>(from) * static_cast<std::size_t>(size) +
                      static_cast<std::size_t>(to));
    }
    void push(int dst, int src, std::span<const std::byte> header,
              std::span<const std::byte> payload, bool force) {
      auto& inbox = inboxes.at(static_cast<std::size_t>(dst));
      if (!force && (!link(src, dst) || inbox.size() >= options.inbox_limit)) {
        ++dropped;
        return;
      }
      inbox.push_back(
          Packet{src, {header.begin(), header.end()}, {payload.begin(), payload.end()}});
      ++carried;
    }
    LoopbackWireOptions options;
    std::vector<std::deque<Packet>> inboxes;
    std::vector<bool> links;
    int size;
    std::uint64_t dropped = 0;
    std::uint64_t carried = 0;
  };

  class Endpoint final : public Driver {
   public:
    Endpoint(std::shared_ptr<State> state, int rank) : state_(std::move(state)), rank_(rank) {
      if (rank < 0 || rank >= state_->size)
        throw std::invalid_argument("LoopbackWire: no such endpoint");
      caps_.max_header = state_->options.max_header;
      caps_.max_packet = state_->options.max_packet;
      caps_.inline_payload = state_->options.max_packet;
    }
    std::string_view name() const override { return "wire"; }
    const DriverCaps& caps() const override { return caps_; }
    bool reaches(int peer) const override { return peer >= 0 && peer < state_->size; }
    IoStatus send(int peer, std::span<const std::byte> header,
                  std::span<const std::byte> payload) override {
      if (!reaches(peer) || header.size() > caps_.max_header || payload.size() > caps_.max_packet)
        return IoStatus::failed;
      state_->push(peer, rank_, header, payload, /*force=*/false);
      return IoStatus::done;
    }
    int poll(PacketSink& sink, int budget) override {
      auto& inbox = state_->inboxes[static_cast<std::size_t>(rank_)];
      int n = 0;
      while (n < budget && !inbox.empty()) {
        Packet p = std::move(inbox.front());  // off the queue first: the sink may send
        inbox.pop_front();
        sink.on_packet(p.src, p.header, p.payload);
        ++n;
      }
      return n;
    }

   private:
    std::shared_ptr<State> state_;
    int rank_;
    DriverCaps caps_;
  };

  std::shared_ptr<State> state_;
};

}  // namespace sluice::drivers
