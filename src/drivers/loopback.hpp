// Loopback for messages a rank sends to itself: packets queue in process memory and are
// delivered on the next poll; get and put are plain memcpys of our own memory, done at once.
// Every rank has one (not a component: SLUICE_DRIVERS does not list it); it shows as "self".
#pragma once

#include <cstring>
#include <deque>
#include <vector>

#include "drivers/driver.hpp"

namespace sluice::drivers {

class LoopbackDriver final : public Driver {
 public:
  explicit LoopbackDriver(int my_rank) : rank_(my_rank) {
    caps_.max_header = 256;
    caps_.max_packet = std::size_t{1} << 40;
    caps_.inline_payload = caps_.max_packet;
    caps_.reliable = caps_.ordered = caps_.rdma_get = caps_.rdma_put = true;
  }
  static constexpr std::string_view kName = "self";
  std::string_view name() const override { return kName; }
  const DriverCaps& caps() const override { return caps_; }
  bool reaches(int peer) const override { return peer == rank_; }

  IoStatus send(int, std::span<const std::byte> header,
                std::span<const std::byte> payload) override {
    Packet p;
    p.header.assign(header.begin(), header.end());
    p.payload.assign(payload.begin(), payload.end());
    queue_.push_back(std::move(p));
    return IoStatus::done;
  }
  bool idle() const { return queue_.empty(); }
  int poll(PacketSink& sink, int budget) override {
    int n = 0;
    while (n < budget && !queue_.empty()) {
      // Take it off the queue first: the sink may send to ourselves again.
      Packet p = std::move(queue_.front());
      queue_.pop_front();
      sink.on_packet(rank_, p.header, p.payload);
      ++n;
    }
    return n;
  }
  IoStatus post_get(int, std::span<std::byte> local, const mem::Registration&,
                    const mem::RemoteKey& remote, uint64_t offset, CompletionToken) override {
    if (!remote.covers(offset, local.size())) return IoStatus::failed;
    if (!local.empty())
      std::memcpy(local.data(), reinterpret_cast<const void*>(remote.addr + offset), local.size());
    return IoStatus::done;
  }
  IoStatus post_put(int, std::span<const std::byte> local, const mem::Registration&,
                    const mem::RemoteKey& remote, uint64_t offset, CompletionToken) override {
    if (!remote.covers(offset, local.size())) return IoStatus::failed;
    if (!local.empty())
      std::memcpy(reinterpret_cast<void*>(remote.addr + offset), local.data(), local.size());
    return IoStatus::done;
  }

 private:
  struct Packet {
    std::vector<std::byte> header;
    std::vector<std::byte> payload;
  };
  int rank_;
  DriverCaps caps_;
  std::deque<Packet> queue_;
};

}  // namespace sluice::drivers
