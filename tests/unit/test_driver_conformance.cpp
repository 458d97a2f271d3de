// Driver conformance suite, in the spirit of libfabric's fabtests: every driver the engine
// can route to, built in this process as two endpoints that reach each other, must keep
// the contract of drivers/driver.hpp. Parameterised over driver factories: self, shm (two
// drivers on one host's segments), tcp (loopback), udp under the reliability layer.
//
//   - packets arrive intact with their header/payload split, in order where caps promise
//   - zero-size payloads and payloads of exactly max_packet
//   - `again` under back-pressure, then success once the receiver made progress
//   - placement: a payload the sink placed arrives exactly in the span it returned
//   - one-sided get / put (where caps say so), bounds-checked by the remote key, done at
//     once or completed later; and through a decorator that defers every completion
//   - local completion of tracked sends (posted only where caps().lends_payload)
//   - the point-to-point protocols over the driver (eager, pipelined and get rendezvous),
//     with immediate and deferred get completions
//   - peer loss: a vanished peer gives failed or a peer-dead report, never a hang
// plus the protocol demultiplexer and the registration handles.
//
// Every wait is bounded by wall-clock time, so a broken driver fails instead of hanging.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "drivers/driver.hpp"
#include "drivers/loopback.hpp"
#include "drivers/ofi/ofi_driver.hpp"
#include "drivers/shm/shm_driver.hpp"
#include "drivers/tcp/tcp_driver.hpp"
#include "drivers/udp/udp_driver.hpp"
#include "mem/registration.hpp"
#include "proto/p2p.hpp"
#include "proto/reliable/reliable_channel.hpp"

namespace {

using namespace sluice;
using drivers::CompletionToken;
using drivers::Driver;
using drivers::IoStatus;
using drivers::ProtocolId;

constexpr auto kWallLimit = std::chrono::seconds(30);

// ---- endpoints ----------------------------------------------------------------------

// Two endpoints of one driver: `a` sends to rank `rb`, `b` to rank `ra`. For self, a == b.
struct Endpoints {
  std::vector<std::unique_ptr<Driver>> owned;
  Driver* a = nullptr;
  Driver* b = nullptr;
  int ra = 0, rb = 1;
  std::shared_ptr<std::vector<int>> dead_a = std::make_shared<std::vector<int>>();
  // Makes b vanish as a dying process would (no goodbye); empty when the driver has no
  // way to notice on its own, with the reason in no_kill.
  std::function<void()> kill_b;
  std::string no_kill;
  bool same() const { return a == b; }
};

using Factory = std::function<std::unique_ptr<Endpoints>()>;
struct DriverCase {
  std::string name;
  Factory make;
};
void PrintTo(const DriverCase& c, std::ostream* os) {
  *os << c.name;
}

std::unique_ptr<Endpoints> make_self() {
  auto e = std::make_unique<Endpoints>();
  e->owned.push_back(std::make_unique<drivers::LoopbackDriver>(0));
  e->a = e->b = e->owned[0].get();
  e->ra = e->rb = 0;
  e->no_kill = "a rank cannot lose itself";
  return e;
}

std::unique_ptr<Endpoints> make_shm() {
  static std::atomic<int> counter{0};
  const std::string job = "conf" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  drivers::ShmParams params;
  params.ring_cells = 16;  // small, so back-pressure is reachable quickly
  params.bulk_slots = 4;
  auto e = std::make_unique<Endpoints>();
  std::unique_ptr<drivers::ShmDriver> d[2];
  for (int r = 0; r < 2; ++r) {
    d[r] = std::make_unique<drivers::ShmDriver>(r, std::vector<int>{0, 1}, params);
    const std::string err = d[r]->create(job);
    EXPECT_EQ(err, "");
  }
  for (int r = 0; r < 2; ++r) EXPECT_EQ(d[r]->attach(job), "");
  for (int r = 0; r < 2; ++r) d[r]->unlink_name();
  e->a = d[0].get();
  e->b = d[1].get();
  for (auto& x : d) e->owned.push_back(std::move(x));
  e->no_kill = "shm learns of a dead peer from the launcher, not from the rings";
  return e;
}

sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

std::unique_ptr<Endpoints> make_tcp_mode(drivers::TcpZeroCopy zerocopy) {
  auto e = std::make_unique<Endpoints>();
  std::unique_ptr<drivers::TcpDriver> d[2];
  for (int r = 0; r < 2; ++r) {
    drivers::TcpParams p;
    p.rank = r;
    p.size = 2;
    for (std::size_t i = 0; i < p.key.size(); ++i) p.key[i] = static_cast<uint8_t>(3 + i * 5);
    p.max_packet = 256 * 1024;
    p.queue_limit = 1u << 20;  // back-pressure within a few MiB
    p.socket_buffer = 256 * 1024;
    p.zerocopy = zerocopy;
    p.zerocopy_min = 16 * 1024;
    if (r == 0) p.on_peer_dead = [dead = e->dead_a](int peer) { dead->push_back(peer); };
    d[r] = std::make_unique<drivers::TcpDriver>(p);
  }
  d[0]->set_peer_address(1, loopback(d[1]->port()));
  d[1]->set_peer_address(0, loopback(d[0]->port()));
  e->a = d[0].get();
  e->b = d[1].get();
  for (auto& x : d) e->owned.push_back(std::move(x));
  Endpoints* ep = e.get();
  e->kill_b = [ep] {
    ep->owned[1].reset();  // sockets closed without a goodbye
    ep->b = nullptr;
  };
  return e;
}

std::unique_ptr<Endpoints> make_tcp() {
  return make_tcp_mode(drivers::TcpZeroCopy::off);
}
// Registered rendezvous payloads leave by io_uring SEND_ZC from the fixed buffer.
std::unique_ptr<Endpoints> make_tcp_zc() {
  return make_tcp_mode(drivers::TcpZeroCopy::on);
}

std::unique_ptr<Endpoints> make_udp_mode(drivers::UdpZeroCopy zerocopy) {
  auto e = std::make_unique<Endpoints>();
  std::unique_ptr<drivers::UdpDriver> u[2];
  for (int r = 0; r < 2; ++r) {
    drivers::UdpParams up;
    up.rank = r;
    up.size = 2;
    up.rx_buffers = 64;
    up.send_sockets = 2;
    up.zerocopy = zerocopy;
    up.zerocopy_min = 4096;
    if (zerocopy == drivers::UdpZeroCopy::on) up.datagram = up.rx_datagram = 65507;
    u[r] = std::make_unique<drivers::UdpDriver>(up);
  }
  for (int r = 0; r < 2; ++r) u[r]->set_peer_address(1 - r, loopback(u[1 - r]->port()));
  for (int r = 0; r < 2; ++r) {
    proto::reliable::ReliableConfig rc;
    rc.job_key = 0x5eed5eed5eedull;
    rc.window = 32;
    rc.min_rto_ns = 1'000'000;
    rc.peer_timeout_ns = 400'000'000;  // a lost peer is declared dead quickly
    if (r == 0) rc.on_peer_dead = [dead = e->dead_a](int peer) { dead->push_back(peer); };
    e->owned.push_back(std::make_unique<proto::reliable::ReliableChannel>(std::move(u[r]), rc));
  }
  e->a = e->owned[0].get();
  e->b = e->owned[1].get();
  Endpoints* ep = e.get();
  e->kill_b = [ep] {
    ep->owned[1].reset();
    ep->b = nullptr;
  };
  return e;
}

std::unique_ptr<Endpoints> make_udp_rel() {
  return make_udp_mode(drivers::UdpZeroCopy::off);
}

// Registered fragments leave by io_uring (corked headers + SEND_ZC from the fixed buffer).
std::unique_ptr<Endpoints> make_udp_rel_zc() {
  return make_udp_mode(drivers::UdpZeroCopy::on);
}

// libfabric: two endpoints of one provider in this process. rdm over tcp;ofi_rxm and msg
// over tcp as they are (msg: a peer closing its endpoint shuts the connection down, and
// sends to it fail); dgram over the udp provider under the reliability layer.
std::unique_ptr<Endpoints> make_ofi(const char* provider, drivers::OfiEndpointType type) {
  auto e = std::make_unique<Endpoints>();
  std::unique_ptr<drivers::OfiDriver> d[2];
  for (int r = 0; r < 2; ++r) {
    drivers::OfiParams p;
    p.rank = r;
    p.size = 2;
    p.provider = provider;
    p.endpoint = type;
    if (r == 0) p.on_peer_dead = [dead = e->dead_a](int peer) { dead->push_back(peer); };
    d[r] = std::make_unique<drivers::OfiDriver>(p);
  }
  for (int r = 0; r < 2; ++r) {
    const std::string err = d[r]->set_peer_address(1 - r, d[1 - r]->address());
    EXPECT_TRUE(err.empty()) << err;
  }
  if (type == drivers::OfiEndpointType::rdm) {
    for (auto& x : d) e->owned.push_back(std::move(x));
    e->no_kill = "an rdm ofi endpoint learns of a dead peer from the launcher";
  } else if (type == drivers::OfiEndpointType::msg) {
    for (auto& x : d) e->owned.push_back(std::move(x));
    Endpoints* ep = e.get();
    e->kill_b = [ep] {
      ep->owned[1].reset();
      ep->b = nullptr;
    };
  } else {
    for (int r = 0; r < 2; ++r) {
      proto::reliable::ReliableConfig rc;
      rc.job_key = 0x5eed5eed5eedull;
      rc.window = 32;
      rc.min_rto_ns = 1'000'000;
      rc.peer_timeout_ns = 400'000'000;
      if (r == 0) rc.on_peer_dead = [dead = e->dead_a](int peer) { dead->push_back(peer); };
      e->owned.push_back(std::make_unique<proto::reliable::ReliableChannel>(std::move(d[r]), rc));
    }
    Endpoints* ep = e.get();
    e->kill_b = [ep] {
      ep->owned[1].reset();
      ep->b = nullptr;
    };
  }
  e->a = e->owned[0].get();
  e->b = e->owned[1].get();
  return e;
}

std::unique_ptr<Endpoints> make_ofi_rxm() {
  return make_ofi("tcp;ofi_rxm", drivers::OfiEndpointType::rdm);
}
std::unique_ptr<Endpoints> make_ofi_msg() {
  return make_ofi("tcp", drivers::OfiEndpointType::msg);
}
std::unique_ptr<Endpoints> make_ofi_dgram() {
  return make_ofi("udp", drivers::OfiEndpointType::dgram);
}

// ---- a decorator that defers every one-sided completion -----------------------------

// Queues get/put and carries them out at the next poll() only, then reports the
// completion: what a NIC or io_uring does. Packets pass straight through.
class DeferringDriver final : public Driver {
 public:
  explicit DeferringDriver(Driver& inner) : inner_(inner) {}
  std::string_view name() const override { return "deferred"; }
  const drivers::DriverCaps& caps() const override { return inner_.caps(); }
  bool reaches(int peer) const override { return inner_.reaches(peer); }
  mem::Domain& memory_domain() override { return inner_.memory_domain(); }
  IoStatus send(int peer, std::span<const std::byte> h, std::span<const std::byte> p) override {
    return inner_.send(peer, h, p);
  }
  IoStatus send_tracked(int peer, std::span<const std::byte> h, std::span<const std::byte> p,
                        const mem::Registration& reg, CompletionToken token) override {
    return inner_.send_tracked(peer, h, p, reg, token);
  }
  IoStatus post_get(int peer, std::span<std::byte> local, const mem::Registration& reg,
                    const mem::RemoteKey& remote, uint64_t offset, CompletionToken token) override {
    ops_.push_back({true, peer, local, reg, remote, offset, token});
    ++posted;
    return IoStatus::posted;
  }
  IoStatus post_put(int peer, std::span<const std::byte> local, const mem::Registration& reg,
                    const mem::RemoteKey& remote, uint64_t offset, CompletionToken token) override {
    ops_.push_back({false,
                    peer,
                    {const_cast<std::byte*>(local.data()), local.size()},
                    reg,
                    remote,
                    offset,
                    token});
    ++posted;
    return IoStatus::posted;
  }
  int poll(drivers::PacketSink& sink, int budget) override {
    int n = 0;
    while (!ops_.empty()) {
      Op op = ops_.front();
      const IoStatus s =
          op.get ? inner_.post_get(op.peer, op.local, op.reg, op.remote, op.offset, op.token)
                 : inner_.post_put(op.peer, op.local, op.reg, op.remote, op.offset, op.token);
      if (s == IoStatus::again) break;
      ops_.pop_front();
      if (s == IoStatus::posted) continue;  // the inner driver reports it through its poll
      sink.on_completion(op.token, s == IoStatus::done ? Errc::ok : Errc::peer_dead);
      ++n;
    }
    return n + inner_.poll(sink, budget);
  }
  std::size_t pending() const { return ops_.size(); }
  int posted = 0;

 private:
  struct Op {
    bool get;
    int peer;
    std::span<std::byte> local;
    mem::Registration reg;
    mem::RemoteKey remote;
    uint64_t offset;
    CompletionToken token;
  };
  Driver& inner_;
  std::deque<Op> ops_;
};

// ---- a recording sink ---------------------------------------------------------------

struct Got {
  int src;
  std::vector<std::byte> header, payload;
  const std::byte* payload_at;
};

class Recorder final : public drivers::PacketSink {
 public:
  void on_packet(int src, std::span<const std::byte> h, std::span<const std::byte> p) override {
    got.push_back({src, {h.begin(), h.end()}, {p.begin(), p.end()}, p.data()});
    if (!placed_spans.empty()) {
      // A payload inside a span we handed out must be exactly that span.
      for (const auto& s : placed_spans)
        if (p.data() >= s.data() && p.data() < s.data() + s.size()) {
          EXPECT_EQ(p.data(), s.data());
          EXPECT_EQ(p.size(), s.size());
          ++in_place;
        }
    }
  }
  drivers::Placement placement(int, std::span<const std::byte> h, std::size_t size) override {
    if (!place_into || h.size() < 8) return {};
    uint32_t index = 0;
    std::memcpy(&index, h.data() + 4, 4);
    std::byte* dst = place_into(index, size);
    if (!dst) return {};
    placed_spans.emplace_back(dst, size);
    return {{dst, size}};
  }
  void on_completion(CompletionToken token, Errc status) override {
    completions.push_back({token, status});
  }
  int completed(uint64_t id) const {
    return static_cast<int>(std::count_if(completions.begin(), completions.end(),
                                          [&](const auto& c) { return c.first.id == id; }));
  }
  std::vector<Got> got;
  std::vector<std::pair<CompletionToken, Errc>> completions;
  std::function<std::byte*(uint32_t index, std::size_t size)> place_into;
  std::vector<std::span<std::byte>> placed_spans;
  int in_place = 0;
};

std::byte pattern(uint32_t msg, std::size_t i) {
  return static_cast<std::byte>((msg * 131u + i * 7u + (i >> 9)) & 0xFF);
}

// Header: type byte (a p2p-range value, so a demux would route it), then the index.
std::vector<std::byte> header_for(uint32_t index, std::size_t len) {
  std::vector<std::byte> h(std::max<std::size_t>(len, 8));
  h[0] = std::byte{0x3e};
  std::memcpy(h.data() + 4, &index, 4);
  for (std::size_t i = 8; i < h.size(); ++i) h[i] = pattern(index ^ 0x55u, i);
  return h;
}
std::vector<std::byte> payload_for(uint32_t index, std::size_t len) {
  std::vector<std::byte> p(len);
  for (std::size_t i = 0; i < len; ++i) p[i] = pattern(index, i);
  return p;
}

class Conformance : public ::testing::TestWithParam<DriverCase> {
 protected:
  void SetUp() override {
    e_ = GetParam().make();
    ASSERT_TRUE(e_ && e_->a && e_->b);
    ASSERT_TRUE(e_->a->reaches(e_->rb));
    ASSERT_TRUE(e_->b->reaches(e_->ra));
  }
  const drivers::DriverCaps& caps() const { return e_->a->caps(); }
  void poll_once(Driver* a, Driver* b) {
    a->poll(sink_a_, 64);
    if (b && b != a) b->poll(sink_b_, 64);
  }
  void poll_once() { poll_once(e_->a, e_->b); }
  // Receiver-side recorder: for self, a's own.
  Recorder& rx() { return e_->same() ? sink_a_ : sink_b_; }
  template <class Pred>
  bool poll_until(Pred done) {
    const auto end = std::chrono::steady_clock::now() + kWallLimit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      poll_once();
    }
    return true;
  }
  // Sends until accepted, polling both sides meanwhile; false if it failed.
  bool send_retrying(std::span<const std::byte> h, std::span<const std::byte> p) {
    const auto end = std::chrono::steady_clock::now() + kWallLimit;
    for (;;) {
      const IoStatus s = e_->a->send(e_->rb, h, p);
      EXPECT_NE(s, IoStatus::posted) << "send() never returns posted";
      if (s == IoStatus::done) return true;
      if (s == IoStatus::failed || std::chrono::steady_clock::now() > end) return false;
      poll_once();
    }
  }
  // The largest payload the tests send in one packet: max_packet, capped for self.
  std::size_t big() const { return std::min<std::size_t>(caps().max_packet, 4u << 20); }
  std::size_t hdr_max() const { return std::min<std::size_t>(caps().max_header, 56); }

  std::unique_ptr<Endpoints> e_;
  Recorder sink_a_, sink_b_;
};

TEST_P(Conformance, CapsAreConsistent) {
  EXPECT_GE(caps().max_header, sizeof(proto::RtsHeader)) << "the rendezvous header must fit";
  EXPECT_GT(caps().max_packet, 0u);
  EXPECT_LE(caps().inline_payload, caps().max_packet);
  EXPECT_TRUE(caps().reliable) << "the engine routes only to reliable drivers (or +rel)";
  // A driver that works on host memory says so; one that needs registration names a
  // pinning domain (tcp zero-copy: uring).
  if (caps().needs_registration) {
    EXPECT_NE(e_->a->memory_domain().name(), "host");
    EXPECT_TRUE(e_->a->memory_domain().pins());
  } else {
    EXPECT_EQ(e_->a->memory_domain().name(), "host");
    EXPECT_FALSE(e_->a->memory_domain().pins());
  }
}

TEST_P(Conformance, PacketsArriveIntactWithTheirSplitInOrder) {
  const std::size_t sizes[] = {0, 1, 7, caps().inline_payload, caps().inline_payload + 1, big()};
  constexpr uint32_t kCount = 120;
  std::vector<std::vector<std::byte>> hs, ps;
  for (uint32_t i = 0; i < kCount; ++i) {
    const std::size_t plen = std::min(sizes[i % std::size(sizes)], big());
    hs.push_back(header_for(i, 8 + i % (hdr_max() - 7)));
    ps.push_back(payload_for(i, plen));
    ASSERT_TRUE(send_retrying(hs.back(), ps.back())) << "packet " << i;
  }
  ASSERT_TRUE(poll_until([&] { return rx().got.size() >= kCount; }))
      << "delivered " << rx().got.size() << " of " << kCount;
  ASSERT_EQ(rx().got.size(), kCount) << "duplicates";
  for (uint32_t i = 0; i < kCount; ++i) {
    const Got& g = rx().got[i];
    uint32_t index = 0;
    std::memcpy(&index, g.header.data() + 4, 4);
    if (caps().ordered) {
      ASSERT_EQ(index, i) << "out of order";
    }
    ASSERT_LT(index, kCount);
    EXPECT_EQ(g.src, e_->ra);
    EXPECT_EQ(g.header, hs[index]) << "header of packet " << index << " (split kept?)";
    EXPECT_EQ(g.payload, ps[index]) << "payload of packet " << index;
  }
}

TEST_P(Conformance, ZeroSizePayloadAndLargestPacket) {
  const auto h0 = header_for(0, 8), h1 = header_for(1, hdr_max());
  const auto p1 = payload_for(1, big());
  ASSERT_TRUE(send_retrying(h0, {}));
  ASSERT_TRUE(send_retrying(h1, p1));
  ASSERT_TRUE(poll_until([&] { return rx().got.size() >= 2; }));
  EXPECT_EQ(rx().got[0].header, h0);
  EXPECT_TRUE(rx().got[0].payload.empty());
  EXPECT_EQ(rx().got[1].header, h1);
  EXPECT_EQ(rx().got[1].payload, p1);
  // One byte past the limits: refused as failed (never truncated, never again forever).
  if (caps().max_packet < (std::size_t{1} << 30)) {
    std::vector<std::byte> over(caps().max_packet + 1);
    EXPECT_EQ(e_->a->send(e_->rb, h0, over), IoStatus::failed);
  }
}

TEST_P(Conformance, AgainUnderBackPressureThenSuccessAfterProgress) {
  // Fill the path to b without letting b poll: a bounded driver must say again.
  const std::size_t plen = std::min<std::size_t>(big(), 64 * 1024);
  std::vector<std::vector<std::byte>> ps;
  uint32_t sent = 0;
  bool saw_again = false;
  const auto end = std::chrono::steady_clock::now() + kWallLimit;
  // At most 64 MiB in flight: a driver that queues without bound (self) is skipped.
  while (!saw_again && sent * plen < (64u << 20) && std::chrono::steady_clock::now() < end) {
    if (ps.size() == sent) ps.push_back(payload_for(sent, plen));
    const IoStatus s = e_->a->send(e_->rb, header_for(sent, 16), ps[sent]);
    ASSERT_NE(s, IoStatus::failed) << "after " << sent << " packets";
    if (s == IoStatus::again) {
      saw_again = true;
    } else {
      ++sent;
      if (sent % 8 == 0 && !e_->same()) e_->a->poll(sink_a_, 64);  // a's own progress only
    }
  }
  if (!saw_again) GTEST_SKIP() << GetParam().name << " queues without bound (" << sent << " sent)";
  // Now let b make progress: the same packet goes through, and everything arrives.
  const auto retry = header_for(sent, 16);
  ASSERT_TRUE(send_retrying(retry, ps[sent]));
  ++sent;
  ASSERT_TRUE(poll_until([&] { return rx().got.size() >= sent; }))
      << rx().got.size() << " of " << sent;
  for (uint32_t i = 0; i < sent; ++i) {
    uint32_t index = 0;
    std::memcpy(&index, rx().got[i].header.data() + 4, 4);
    ASSERT_EQ(index, i);
    ASSERT_EQ(rx().got[i].payload, ps[i]);
  }
}

TEST_P(Conformance, PlacedPayloadsLandExactlyWhereTheSinkSaid) {
  constexpr uint32_t kCount = 16;
  const std::size_t plen = big();
  std::vector<std::vector<std::byte>> dst(kCount, std::vector<std::byte>(plen, std::byte{0xEE}));
  rx().place_into = [&](uint32_t index, std::size_t size) -> std::byte* {
    return index < kCount && size == plen ? dst[index].data() : nullptr;
  };
  std::vector<std::vector<std::byte>> ps;
  for (uint32_t i = 0; i < kCount; ++i) {
    ps.push_back(payload_for(i, plen));
    ASSERT_TRUE(send_retrying(header_for(i, 16), ps.back()));
  }
  ASSERT_TRUE(poll_until([&] { return rx().got.size() >= kCount; }));
  for (uint32_t i = 0; i < kCount; ++i) {
    EXPECT_EQ(rx().got[i].payload, ps[i]);
    // A driver that used the placement put the bytes there; one that did not left it alone.
    if (rx().got[i].payload_at == dst[i].data())
      EXPECT_EQ(dst[i], ps[i]);
    else
      EXPECT_TRUE(std::all_of(dst[i].begin(), dst[i].end(),
                              [](std::byte b) { return b == std::byte{0xEE}; }));
  }
  RecordProperty("placed_in_place", rx().in_place);
}

// A get of b's registered buffer by a, straight or through the deferring decorator.
void one_sided_get(Driver* a, Driver* b, int rb, Recorder& sink_a, std::function<void()> poll) {
  const std::size_t n = 3 * 65536 + 17;
  std::vector<std::byte> remote = payload_for(7, n + 4096), local(n, std::byte{0});
  mem::Registration rreg, lreg;
  ASSERT_EQ(b->memory_domain().register_memory(remote, rreg), Errc::ok);
  ASSERT_EQ(a->memory_domain().register_memory(local, lreg), Errc::ok);
  const mem::RemoteKey key = rreg.remote_key();
  const CompletionToken token{42, ProtocolId::p2p};
  // again (a provider still connecting, a full queue): retry after progress.
  IoStatus s = a->post_get(rb, local, lreg, key, 100, token);
  for (auto end = std::chrono::steady_clock::now() + kWallLimit;
       s == IoStatus::again && std::chrono::steady_clock::now() < end;
       s = a->post_get(rb, local, lreg, key, 100, token))
    poll();
  ASSERT_TRUE(s == IoStatus::done || s == IoStatus::posted);
  if (s == IoStatus::posted) {
    const auto end = std::chrono::steady_clock::now() + kWallLimit;
    while (sink_a.completed(42) == 0 && std::chrono::steady_clock::now() < end) poll();
    ASSERT_EQ(sink_a.completed(42), 1);
    EXPECT_EQ(sink_a.completions.back().second, Errc::ok);
  }
  EXPECT_TRUE(std::equal(local.begin(), local.end(), remote.begin() + 100));
  // Outside the remote key: refused before any byte moves.
  std::fill(local.begin(), local.end(), std::byte{0});
  mem::RemoteKey small = key;
  small.length = n;
  const IoStatus bad = a->post_get(rb, local, lreg, small, 1, {43, ProtocolId::p2p});
  if (bad == IoStatus::posted) {
    const auto end = std::chrono::steady_clock::now() + kWallLimit;
    while (sink_a.completed(43) == 0 && std::chrono::steady_clock::now() < end) poll();
    ASSERT_EQ(sink_a.completed(43), 1);
    EXPECT_NE(sink_a.completions.back().second, Errc::ok);
  } else {
    EXPECT_EQ(bad, IoStatus::failed);
  }
  EXPECT_TRUE(
      std::all_of(local.begin(), local.end(), [](std::byte x) { return x == std::byte{0}; }));
}

TEST_P(Conformance, GetReadsTheRemoteRegistration) {
  if (!caps().rdma_get) {
    EXPECT_EQ(e_->a->post_get(e_->rb, {}, {}, {}, 0, {}), IoStatus::failed);
    GTEST_SKIP() << "no one-sided get (caps().rdma_get false): refused as failed";
  }
  one_sided_get(e_->a, e_->b, e_->rb, sink_a_, [&] { poll_once(); });
}

TEST_P(Conformance, DeferredGetCompletesThroughPoll) {
  if (!caps().rdma_get) GTEST_SKIP() << "no one-sided get";
  DeferringDriver deferred(*e_->a);
  one_sided_get(&deferred, e_->b, e_->rb, sink_a_, [&] { poll_once(&deferred, e_->b); });
  EXPECT_EQ(deferred.posted, 2);
  EXPECT_EQ(deferred.pending(), 0u);
}

TEST_P(Conformance, PutWritesTheRemoteRegistration) {
  if (!caps().rdma_put) {
    EXPECT_EQ(e_->a->post_put(e_->rb, {}, {}, {}, 0, {}), IoStatus::failed);
    GTEST_SKIP() << "no one-sided put (caps().rdma_put false): refused as failed";
  }
  for (bool defer : {false, true}) {
    DeferringDriver deferred(*e_->a);
    Driver* a = defer ? &deferred : e_->a;
    const std::size_t n = 200000;
    std::vector<std::byte> remote(n + 64, std::byte{0}), local = payload_for(9, n);
    // Where the driver asks for it (a NIC's or libfabric's remote key), both buffers are
    // registered in its domain; host memory elsewhere (CMA, a memcpy).
    mem::Registration rreg = mem::Registration::host(remote);
    mem::Registration lreg = mem::Registration::host(local);
    if (caps().needs_registration) {
      ASSERT_EQ(e_->b->memory_domain().register_memory(remote, rreg), Errc::ok);
      ASSERT_EQ(e_->a->memory_domain().register_memory(local, lreg), Errc::ok);
    }
    const CompletionToken token{defer ? 77u : 76u, ProtocolId::p2p};
    IoStatus s = a->post_put(e_->rb, local, lreg, rreg.remote_key(), 32, token);
    for (auto end = std::chrono::steady_clock::now() + kWallLimit;
         s == IoStatus::again && std::chrono::steady_clock::now() < end;
         s = a->post_put(e_->rb, local, lreg, rreg.remote_key(), 32, token))
      poll_once(a, e_->b);  // again: a provider still connecting, a full queue
    ASSERT_TRUE(s == IoStatus::done || s == IoStatus::posted);
    if (s == IoStatus::posted) {
      EXPECT_TRUE(std::all_of(remote.begin(), remote.end(), [](std::byte x) {
        return x == std::byte{0};
      })) << "a deferred put moved bytes before its completion";
      ASSERT_TRUE(poll_until([&] {
        poll_once(a, e_->b);
        return sink_a_.completed(token.id) == 1;
      }));
    }
    EXPECT_TRUE(std::equal(local.begin(), local.end(), remote.begin() + 32));
    EXPECT_TRUE(std::all_of(remote.begin(), remote.begin() + 32,
                            [](std::byte x) { return x == std::byte{0}; }));
    mem::RemoteKey small = rreg.remote_key();
    small.length = n;  // 32 + n > n: out of bounds
    std::vector<std::byte> before = remote;
    const IoStatus bad = e_->a->post_put(e_->rb, local, {}, small, 32, {});
    EXPECT_EQ(bad, IoStatus::failed);
    EXPECT_EQ(remote, before);
  }
}

TEST_P(Conformance, TrackedSendsCompleteLocallyExactlyOnce) {
  constexpr uint32_t kCount = 64;
  const std::size_t plen = std::min<std::size_t>(big(), 32 * 1024);
  std::vector<std::vector<std::byte>> ps;
  ps.reserve(kCount);
  std::vector<mem::Registration> regs;
  regs.reserve(kCount);
  int posted = 0;
  for (uint32_t i = 0; i < kCount; ++i) {
    ps.push_back(payload_for(i, plen));
    const auto h = header_for(i, 16);
    // The payload is registered in the driver's domain where the driver asks for it (the
    // registration may go as soon as the send completes; the driver's memory stays).
    regs.emplace_back();
    if (caps().needs_registration)
      ASSERT_EQ(e_->a->memory_domain().register_memory(ps[i], regs.back()), Errc::ok);
    else
      regs.back() = mem::Registration::host(ps[i]);
    const auto end = std::chrono::steady_clock::now() + kWallLimit;
    IoStatus s;
    while ((s = e_->a->send_tracked(e_->rb, h, ps[i], regs.back(), {1000u + i, ProtocolId::p2p})) ==
               IoStatus::again &&
           std::chrono::steady_clock::now() < end)
      poll_once();
    ASSERT_NE(s, IoStatus::failed);
    ASSERT_NE(s, IoStatus::again);
    if (s == IoStatus::posted) {
      EXPECT_TRUE(caps().lends_payload) << "posted from a driver that does not lend";
      ++posted;
    }
  }
  ASSERT_TRUE(poll_until([&] {
    return rx().got.size() >= kCount && static_cast<int>(sink_a_.completions.size()) >= posted;
  })) << sink_a_.completions.size()
      << " of " << posted << " local completions";
  for (uint32_t i = 0; i < kCount; ++i) EXPECT_EQ(rx().got[i].payload, ps[i]);
  for (int k = 0; k < 20; ++k) poll_once();  // nothing more may come
  EXPECT_EQ(static_cast<int>(sink_a_.completions.size()), posted);
  for (const auto& [token, status] : sink_a_.completions) {
    EXPECT_EQ(status, Errc::ok);
    EXPECT_EQ(sink_a_.completed(token.id), 1) << "completion " << token.id << " repeated";
  }
  if (caps().lends_payload) {
    EXPECT_GT(posted, 0);
  }
  RecordProperty("posted", posted);
}

TEST_P(Conformance, LostPeerGivesFailedOrADeathReportNotAHang) {
  if (!e_->kill_b) GTEST_SKIP() << e_->no_kill;
  const auto h = header_for(0, 16);
  ASSERT_TRUE(send_retrying(h, {}));
  ASSERT_TRUE(poll_until([&] { return !rx().got.empty(); }));
  e_->kill_b();
  bool failed = false;
  const auto end = std::chrono::steady_clock::now() + kWallLimit;
  while (!failed && e_->dead_a->empty() && std::chrono::steady_clock::now() < end) {
    const IoStatus s = e_->a->send(e_->rb, h, {});
    failed = s == IoStatus::failed;
    e_->a->poll(sink_a_, 64);
  }
  EXPECT_TRUE(failed || !e_->dead_a->empty()) << "no failure within " << kWallLimit.count() << " s";
  if (!e_->dead_a->empty()) {
    EXPECT_EQ((*e_->dead_a)[0], e_->rb);
    // Once reported dead, sends fail at once (no silent drops, no again forever).
    EXPECT_EQ(e_->a->send(e_->rb, h, {}), IoStatus::failed);
  }
}

// ---- the point-to-point protocols over the driver ------------------------------------

// A rank for the protocol layer: FIFO matching (tags in order), as test_reliable_p2p.
class Rank final : public proto::Upcalls {
 public:
  explicit Rank(const proto::Thresholds& th) : p2p(*this, th) {
    demux.attach_fast(proto::kProtocolId, drivers::kP2pTypes, p2p);
  }
  void on_incoming(const proto::Incoming& m) override {
    unexpected.push_back({m, {m.payload.begin(), m.payload.end()}});
    match();
  }
  void transfer_complete(proto::Transfer& t, Errc err) override {
    EXPECT_EQ(err, Errc::ok);
    ++completed;
    // The buffer is the user's again: scribble on a send's, so a driver still reading it
    // (a lent fragment resent after its completion) would deliver wrong bytes.
    if (t.role == proto::Transfer::Role::send && t.len) std::memset(t.buf, 0xA5, t.len);
  }
  void post(proto::Transfer& r) {
    posted.push_back(&r);
    match();
  }
  proto::PointToPoint p2p;
  drivers::ProtocolDemux<proto::PointToPoint> demux;
  int completed = 0;

 private:
  struct Stored {
    proto::Incoming msg;
    std::vector<std::byte> payload;
  };
  void match() {
    while (!posted.empty() && !unexpected.empty()) {
      proto::Transfer& r = *posted.front();
      Stored s = std::move(unexpected.front());
      posted.pop_front();
      unexpected.pop_front();
      ASSERT_EQ(s.msg.tag, r.tag);
      s.msg.payload = s.payload;
      p2p.deliver(r, s.msg);
    }
  }
  std::deque<proto::Transfer*> posted;
  std::deque<Stored> unexpected;
};

void run_p2p(Endpoints& e, Driver* a, Driver* b, proto::Thresholds::RndvMode mode,
             proto::Protocol want_rndv) {
  proto::Thresholds th;
  th.rndv = mode;
  Rank ra(th), rb_storage(th);
  Rank& rb = e.same() ? ra : rb_storage;
  ra.p2p.set_route(e.rb, a);
  if (!e.same()) rb.p2p.set_route(e.ra, b);
  const std::size_t sizes[] = {0, 100, 4096, 65536 + 3, 1u << 20};
  constexpr int kCount = static_cast<int>(std::size(sizes));
  std::vector<std::vector<std::byte>> src(kCount), dst(kCount), expect(kCount);
  std::deque<proto::Transfer> sends(kCount), recvs(kCount);
  for (int i = 0; i < kCount; ++i) {
    src[i] = payload_for(static_cast<uint32_t>(i), sizes[i]);
    expect[i] = src[i];  // src is scribbled on once its send completes
    dst[i].assign(sizes[i], std::byte{0xEE});
    proto::Transfer& r = recvs[static_cast<std::size_t>(i)];
    r.role = proto::Transfer::Role::recv;
    r.tag = i;
    r.buf = dst[i].data();
    r.len = dst[i].size();
    rb.post(r);
  }
  for (int i = 0; i < kCount; ++i) {
    proto::Transfer& t = sends[static_cast<std::size_t>(i)];
    t.peer = e.rb;
    t.tag = i;
    t.buf = src[i].data();
    t.len = src[i].size();
    ra.p2p.start_send(t);
  }
  const int want = e.same() ? 2 * kCount : kCount;
  const auto end = std::chrono::steady_clock::now() + kWallLimit;
  while ((ra.completed < want || (!e.same() && rb.completed < kCount)) &&
         std::chrono::steady_clock::now() < end) {
    a->poll(ra.demux, 64);
    if (!e.same()) b->poll(rb.demux, 64);
    ra.p2p.progress_outbound();
    if (!e.same()) rb.p2p.progress_outbound();
  }
  ASSERT_EQ(ra.completed, want) << "sends (and self receives) completed";
  if (!e.same()) {
    ASSERT_EQ(rb.completed, kCount) << "receives completed";
  }
  for (int i = 0; i < kCount; ++i)
    EXPECT_EQ(dst[i], expect[i]) << "message of " << sizes[i] << " B";
  const proto::ProtoStats& st = rb.p2p.stats();
  EXPECT_GT(st.received[static_cast<int>(proto::Protocol::eager)], 0u);
  EXPECT_GT(st.received[static_cast<int>(want_rndv)], 0u) << proto::protocol_name(want_rndv);
  EXPECT_EQ(st.unknown_packets, 0u);
}

TEST_P(Conformance, PointToPointPipelinedRendezvous) {
  run_p2p(*e_, e_->a, e_->b, proto::Thresholds::RndvMode::pipeline, proto::Protocol::rndv_pipeline);
}

TEST_P(Conformance, PointToPointRendezvousByGetImmediateAndDeferred) {
  if (!caps().rdma_get) GTEST_SKIP() << "no one-sided get";
  run_p2p(*e_, e_->a, e_->b, proto::Thresholds::RndvMode::get, proto::Protocol::rndv_get);
  if (HasFatalFailure()) return;
  // The receiver's get completes later, through poll: the same messages still arrive.
  DeferringDriver da(*e_->a), db(*e_->b);
  Driver* b = e_->same() ? static_cast<Driver*>(&da) : &db;
  run_p2p(*e_, &da, b, proto::Thresholds::RndvMode::get, proto::Protocol::rndv_get);
  EXPECT_GT(da.posted + (e_->same() ? 0 : db.posted), 0) << "no get was deferred";
}

std::string case_name(const ::testing::TestParamInfo<DriverCase>& info) {
  return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(Drivers, Conformance,
                         ::testing::Values(DriverCase{"self", make_self},
                                           DriverCase{"shm", make_shm}, DriverCase{"tcp", make_tcp},
                                           DriverCase{"tcp_zc", make_tcp_zc},
                                           DriverCase{"udp_rel", make_udp_rel},
                                           DriverCase{"udp_rel_zc", make_udp_rel_zc},
                                           DriverCase{"ofi_rxm", make_ofi_rxm},
                                           DriverCase{"ofi_msg", make_ofi_msg},
                                           DriverCase{"ofi_dgram_rel", make_ofi_dgram}),
                         case_name);

// ---- the demultiplexer and the handles -----------------------------------------------

TEST(ProtocolDemux, RoutesByFirstByteAndTokenAndRejectsTheRest) {
  Recorder p2p, rma;
  drivers::ProtocolDemux<> demux;
  demux.attach(ProtocolId::p2p, drivers::kP2pTypes, p2p);
  demux.attach(ProtocolId::rma, drivers::kRmaTypes, rma);
  const std::byte to_p2p[] = {std::byte{0x01}, std::byte{9}};
  const std::byte to_rma[] = {std::byte{0x40}};
  const std::byte unknown[] = {std::byte{0xC5}, std::byte{1}};  // reserved range
  const std::byte am[] = {std::byte{0x80}};                     // am: nobody attached
  demux.on_packet(3, to_p2p, {});
  demux.on_packet(3, to_rma, {});
  demux.on_packet(3, unknown, {});
  demux.on_packet(3, am, {});
  demux.on_packet(3, {}, {});  // no header at all
  EXPECT_EQ(p2p.got.size(), 1u);
  EXPECT_EQ(rma.got.size(), 1u);
  EXPECT_EQ(demux.rejected(), 3u);
  demux.on_completion({5, ProtocolId::rma}, Errc::ok);
  demux.on_completion({6, ProtocolId::am}, Errc::ok);
  EXPECT_EQ(rma.completed(5), 1);
  EXPECT_EQ(p2p.completions.size(), 0u);
  EXPECT_EQ(demux.rejected_completions(), 1u);
}

TEST(ProtocolDemux, PointToPointCountsTypesItDoesNotKnow) {
  Rank r(proto::Thresholds{});
  drivers::LoopbackDriver self(0);
  r.p2p.set_route(0, &self);
  const std::byte future_type[] = {std::byte{0x3f}, std::byte{0}, std::byte{0}, std::byte{0}};
  ASSERT_EQ(self.send(0, future_type, {}), IoStatus::done);
  self.poll(r.demux, 8);
  EXPECT_EQ(r.p2p.stats().unknown_packets, 1u);
  EXPECT_EQ(r.completed, 0);
}

// Alone, the fast protocol is polled directly (no demux call per packet); it then rejects
// and counts what a demux would have: another protocol's types and an empty header.
TEST(ProtocolDemux, EntryIsTheFastProtocolWhileItIsTheOnlyOne) {
  Rank r(proto::Thresholds{});
  EXPECT_EQ(&r.demux.entry(), static_cast<drivers::PacketSink*>(&r.p2p));
  drivers::LoopbackDriver self(0);
  r.p2p.set_route(0, &self);
  const std::byte rma_type[] = {std::byte{0x40}, std::byte{0}, std::byte{0}, std::byte{0}};
  ASSERT_EQ(self.send(0, rma_type, {}), IoStatus::done);
  ASSERT_EQ(self.send(0, {}, {}), IoStatus::done);
  EXPECT_EQ(self.poll(r.demux.entry(), 8), 2);
  EXPECT_EQ(r.p2p.stats().unknown_packets, 2u);
  EXPECT_EQ(r.completed, 0);
  // A second protocol: packets go through the demux again, and reach it.
  Recorder rma;
  r.demux.attach(ProtocolId::rma, drivers::kRmaTypes, rma);
  EXPECT_EQ(&r.demux.entry(), static_cast<drivers::PacketSink*>(&r.demux));
  ASSERT_EQ(self.send(0, rma_type, {}), IoStatus::done);
  self.poll(r.demux.entry(), 8);
  EXPECT_EQ(rma.got.size(), 1u);
  EXPECT_EQ(r.p2p.stats().unknown_packets, 2u);
}

// A pinning domain stand-in: counts registrations and releases.
class CountingDomain final : public mem::Domain {
 public:
  std::string_view name() const override { return "counting"; }
  bool pins() const override { return true; }
  Errc register_memory(std::span<const std::byte> buf, mem::Registration& out) override {
    auto* r = new mem::Region;
    r->domain = this;
    r->base = const_cast<std::byte*>(buf.data());
    r->length = buf.size();
    r->local.value = ++registered;
    r->remote_key = 0xABC0 + registered;
    r->offset_addressed = offset_addressed;
    out = mem::Registration::adopt(r);
    return Errc::ok;
  }
  mem::RegistrationCost cost() const override { return {1000.0, 0.01}; }
  int registered = 0, released = 0;
  bool offset_addressed = false;  // like libfabric without FI_MR_VIRT_ADDR

 protected:
  void deregister(mem::Region* r) override {
    ++released;
    delete r;
  }
};

TEST(Registration, HostHandlesAreFreeAndDescribeTheirMemory) {
  std::vector<std::byte> buf(4096);
  mem::Registration r;
  EXPECT_TRUE(r.empty());
  ASSERT_EQ(mem::host_domain().register_memory(buf, r), Errc::ok);
  EXPECT_FALSE(r.pinned());
  const mem::RemoteKey k = r.remote_key();
  EXPECT_EQ(k.addr, reinterpret_cast<uint64_t>(buf.data()));
  EXPECT_EQ(k.length, buf.size());
  EXPECT_EQ(k.key, 0u);
  EXPECT_TRUE(k.covers(4000, 96));
  EXPECT_FALSE(k.covers(4000, 97));
  EXPECT_FALSE(k.covers(5000, 0));
  EXPECT_TRUE(r.covers(std::span(buf).subspan(10, 100)));
  EXPECT_EQ(mem::host_domain().cost().estimate_ns(1 << 20), 0.0);
}

TEST(Registration, PinnedHandlesAreRefcountedAndReleasedOnce) {
  CountingDomain d;
  std::vector<std::byte> buf(8192);
  {
    mem::Registration a;
    ASSERT_EQ(d.register_memory(buf, a), Errc::ok);
    EXPECT_TRUE(a.pinned());
    EXPECT_EQ(a.local_key().value, 1u);
    EXPECT_EQ(a.remote_key().key, 0xABC1u);
    mem::Registration b = a;  // shares
    EXPECT_EQ(a.use_count(), 2u);
    {
      mem::Registration c = std::move(b);
      EXPECT_TRUE(b.empty());
      EXPECT_EQ(c.use_count(), 2u);
    }
    EXPECT_EQ(d.released, 0);
    EXPECT_EQ(a.use_count(), 1u);
    a = mem::Registration::host(buf);  // replacing drops the last reference
    EXPECT_EQ(d.released, 1);
  }
  EXPECT_EQ(d.released, 1);
  EXPECT_NEAR(d.cost().estimate_ns(1000), 1010.0, 1e-9);
}

// A protocol hands a peer a key for exactly its buffer, which may sit anywhere inside a
// larger registration (a cache entry covers whole pages): the key's address carries the
// buffer's place, by virtual address or by offset into the registration.
TEST(Registration, RemoteKeyForDescribesExactlyTheBuffer) {
  std::vector<std::byte> buf(8192);
  const auto inner = std::span(buf).subspan(100, 3000);
  const mem::Registration h = mem::Registration::host(buf);
  mem::RemoteKey k = h.remote_key_for(inner);
  EXPECT_EQ(k.addr, reinterpret_cast<uint64_t>(buf.data()) + 100);
  EXPECT_EQ(k.length, 3000u);
  EXPECT_EQ(k.key, 0u);
  for (bool by_offset : {false, true}) {
    CountingDomain d;
    d.offset_addressed = by_offset;
    mem::Registration r;
    ASSERT_EQ(d.register_memory(buf, r), Errc::ok);
    EXPECT_EQ(r.offset_addressed(), by_offset);
    k = r.remote_key_for(inner);
    EXPECT_EQ(k.addr, (by_offset ? 0 : reinterpret_cast<uint64_t>(buf.data())) + 100);
    EXPECT_EQ(k.length, 3000u);
    EXPECT_EQ(k.key, r.remote_key().key);
    EXPECT_EQ(r.remote_key().addr, by_offset ? 0 : reinterpret_cast<uint64_t>(buf.data()));
    // Not inside: no key at all.
    std::vector<std::byte> other(16);
    k = r.remote_key_for(other);
    EXPECT_EQ(k.length, 0u);
    EXPECT_EQ(k.key, 0u);
  }
}

}  // namespace
