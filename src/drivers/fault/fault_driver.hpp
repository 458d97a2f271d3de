// FaultDriver: a Driver decorator that damages outgoing packets on purpose, with a seeded
// PRNG so every run of a test sees the same faults. Per packet, independently:
//   drop       the packet vanishes (send still reports done, like a lossy network)
//   corrupt    one random bit of the header or payload is flipped
//   reorder    the packet is held back and released 1..max_hold operations later
//              (an operation is any send() or poll() on this driver)
//   duplicate  the packet is sent twice
//   bursts     a two-state (Gilbert) loss model: each packet may start a burst
//              (burst_enter), during which every packet is dropped until it ends
//              (burst_exit per packet; mean burst length 1 / burst_exit)
// set_blackhole(true) drops everything from then on: a peer that went silent.
// It wraps any driver and reports the inner driver's caps with reliable = ordered = false.
#pragma once

#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "drivers/driver.hpp"

namespace sluice::drivers {

struct FaultConfig {
  std::uint64_t seed = 1;
  double drop = 0.0;  // probabilities in [0, 1]
  double duplicate = 0.0;
  double reorder = 0.0;
  double corrupt = 0.0;
  std::uint32_t max_hold = 8;  // operations a reordered packet is held for, at most
  double burst_enter = 0.0;    // probability a packet starts a loss burst
  double burst_exit = 0.25;    // probability a burst ends at each packet
};

struct FaultStats {
  std::uint64_t passed = 0;   // sent to the inner driver (including damaged ones)
  std::uint64_t dropped = 0;  // including bursts
  std::uint64_t bursts = 0;
  std::uint64_t duplicated = 0;
  std::uint64_t reordered = 0;
  std::uint64_t corrupted = 0;
};

class FaultDriver final : public Driver {
 public:
  FaultDriver(std::unique_ptr<Driver> inner, FaultConfig config)
      : inner_(std::move(inner)), cfg_(config), rng_state_(config.seed) {
    if (!inner_) throw std::invalid_argument("FaultDriver: no inner driver");
    if (cfg_.max_hold == 0) cfg_.max_hold = 1;
    caps_ = inner_->caps();
    caps_.reliable = caps_.ordered = false;  // whatever the inner driver promised
    name_ = "fault(" + std::string(inner_->name()) + ")";
  }

  std::string_view name() const override { return name_; }
  const DriverCaps& caps() const override { return caps_; }
  bool reaches(int peer) const override { return inner_->reaches(peer); }

  IoStatus send(int peer, std::span<const std::byte> header,
                std::span<const std::byte> payload) override {
    release_held();
    if (in_burst_) {
      in_burst_ = !chance(cfg_.burst_exit);
    } else if (chance(cfg_.burst_enter)) {
      in_burst_ = true;
      ++stats_.bursts;
    }
    if (blackhole_ || in_burst_ || chance(cfg_.drop)) {
      ++stats_.dropped;
      return IoStatus::done;
    }
    const bool corrupt = chance(cfg_.corrupt);
    const bool hold = chance(cfg_.reorder);
    const bool dup = chance(cfg_.duplicate);
    if (!corrupt && !hold) {
      IoStatus s = inner_->send(peer, header, payload);
      if (s != IoStatus::done) return s;
      ++stats_.passed;
      if (dup && inner_->send(peer, header, payload) == IoStatus::done) ++stats_.duplicated;
      return s;
    }
    Held h{peer, {header.begin(), header.end()}, {payload.begin(), payload.end()}, 0};
    if (corrupt) {
      flip_random_bit(h);
      ++stats_.corrupted;
    }
    if (hold) {
      h.countdown = 1 + static_cast<std::uint32_t>(next() % cfg_.max_hold);
      held_.push_back(std::move(h));
      ++stats_.reordered;
      if (dup) {  // the duplicate goes now, the original later
        if (inner_->send(peer, header, payload) == IoStatus::done) ++stats_.duplicated;
      }
      return IoStatus::done;
    }
    IoStatus s = inner_->send(peer, h.header, h.payload);
    if (s != IoStatus::done) return s;
    ++stats_.passed;
    if (dup && inner_->send(peer, h.header, h.payload) == IoStatus::done) ++stats_.duplicated;
    return s;
  }

  int poll(PacketSink& sink, int budget) override {
    release_held();
    return inner_->poll(sink, budget);
  }
  // Faults apply to packets only; one-sided operations go straight through.
  mem::Domain& memory_domain() override { return inner_->memory_domain(); }
  IoStatus post_get(int peer, std::span<std::byte> local, const mem::Registration& local_reg,
                    const mem::RemoteKey& remote, uint64_t offset, CompletionToken token) override {
    return inner_->post_get(peer, local, local_reg, remote, offset, token);
  }
  IoStatus post_put(int peer, std::span<const std::byte> local, const mem::Registration& local_reg,
                    const mem::RemoteKey& remote, uint64_t offset, CompletionToken token) override {
    return inner_->post_put(peer, local, local_reg, remote, offset, token);
  }
  bool block(std::uint64_t timeout_ns) override {
    return held_.empty() ? inner_->block(timeout_ns) : true;
  }

  // Drop every packet from now on (or stop doing so).
  void set_blackhole(bool on) { blackhole_ = on; }
  void set_config(const FaultConfig& c) {
    cfg_.drop = c.drop;
    cfg_.duplicate = c.duplicate;
    cfg_.reorder = c.reorder;
    cfg_.corrupt = c.corrupt;
    cfg_.max_hold = c.max_hold ? c.max_hold : 1;
    cfg_.burst_enter = c.burst_enter;
    cfg_.burst_exit = c.burst_exit;
  }
  const FaultStats& stats() const { return stats_; }
  std::size_t held() const { return held_.size(); }
  Driver& inner() { return *inner_; }

  std::string stats_text() const override {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "fault: passed=%llu dropped=%llu dup=%llu reordered=%llu "
                  "corrupted=%llu",
                  static_cast<unsigned long long>(stats_.passed),
                  static_cast<unsigned long long>(stats_.dropped),
                  static_cast<unsigned long long>(stats_.duplicated),
                  static_cast<unsigned long long>(stats_.reordered),
                  static_cast<unsigned long long>(stats_.corrupted));
    return buf;
  }

 private:
  struct Held {
    int peer;
    std::vector<std::byte> header;
    std::vector<std::byte> payload;
    std::uint32_t countdown;
  };

  // splitmix64: tiny, seedable, and the same sequence on every platform (unlike the
  // standard distributions).
  std::uint64_t next() {
    std::uint64_t z = (rng_state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  bool chance(double p) {
    if (p <= 0.0) return false;
    return static_cast<double>(next() >> 11) * 0x1.0p-53 < p;
  }
  void flip_random_bit(Held& h) {
    const std::size_t bits = (h.header.size() + h.payload.size()) * 8;
    if (bits == 0) return;
    std::size_t bit = static_cast<std::size_t>(next() % bits);
    auto& bytes = bit < h.header.size() * 8 ? h.header : h.payload;
    if (&bytes == &h.payload) bit -= h.header.size() * 8;
    bytes[bit / 8] ^= static_cast<std::byte>(1u << (bit % 8));
  }
  // Counts one operation down on every held packet and sends those whose time has come.
  void release_held() {
    for (std::size_t i = 0; i < held_.size();) {
      Held& h = held_[i];
      if (h.countdown > 0) --h.countdown;
      if (h.countdown > 0) {
        ++i;
        continue;
      }
      if (blackhole_) {
        ++stats_.dropped;
      } else if (inner_->send(h.peer, h.header, h.payload) == IoStatus::again) {
        ++i;  // inner full: try again at the next operation
        continue;
      } else {
        ++stats_.passed;
      }
      held_.erase(held_.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  std::unique_ptr<Driver> inner_;
  FaultConfig cfg_;
  std::uint64_t rng_state_;
  DriverCaps caps_;
  std::string name_;
  bool blackhole_ = false;
  bool in_burst_ = false;
  FaultStats stats_;
  std::deque<Held> held_;
};

}  // namespace sluice::drivers
