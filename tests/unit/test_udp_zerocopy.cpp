// udp zero-copy sends (io_uring: the headers corked by a SEND with MSG_MORE, linked to a
// SEND_ZC of the payload from the fixed buffer of a uring-domain registration), under the
// reliability layer, two "ranks" in this process over loopback:
//   - fragments lent from registered memory leave zero-copy, arrive intact and in order, and
//     each completes locally exactly once; on loopback the kernel copies every one of them
//     (zerocopy.copied == zerocopy.sends);
//   - with the receiver silent, resends are copied, and no fragment completes before it is
//     acknowledged (and its zero-copy transmission released);
//   - the registration really is what is sent: after munmap + mmap at the same address, a
//     send through the old registration carries the OLD pages, which the payload CRC
//     rejects at the receiver (rel.corrupt), and the copied resend delivers the new bytes;
//   - auto leaves loopback peers on the copy path (host memory, no registration).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "drivers/udp/udp_driver.hpp"
#include "proto/reliable/reliable_channel.hpp"
#include "stats_text.hpp"

using sluice::test::counter;

namespace {

using namespace sluice;
using drivers::CompletionToken;
using drivers::IoStatus;
using drivers::UdpDriver;
using drivers::UdpParams;
using drivers::UdpZeroCopy;
using proto::reliable::ReliableChannel;
using proto::reliable::ReliableConfig;

constexpr uint64_t kKey = 0x5eedf00d12345678ull;
constexpr std::size_t kLen = 256 * 1024;
constexpr std::size_t kZcMin = 4096;

struct Got {
  std::vector<std::byte> header, payload;
};

class Sink final : public drivers::PacketSink {
 public:
  void on_packet(int, std::span<const std::byte> h, std::span<const std::byte> p) override {
    got.push_back({{h.begin(), h.end()}, {p.begin(), p.end()}});
  }
  void on_completion(CompletionToken token, Errc status) override {
    ++completions[token.id];
    EXPECT_EQ(status, Errc::ok);
  }
  std::vector<Got> got;
  std::map<uint64_t, int> completions;
};

sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

struct Pair {
  explicit Pair(UdpZeroCopy mode, bool connect_pair = true, std::size_t datagram = 65507) {
    std::unique_ptr<UdpDriver> u[2];
    for (int r = 0; r < 2; ++r) {
      UdpParams up;
      up.rank = r;
      up.size = 2;
      up.zerocopy = mode;
      up.zerocopy_min = kZcMin;
      up.connect_pair = connect_pair;
      up.datagram = up.rx_datagram = datagram;  // loopback: 64 KiB fragments
      u[r] = std::make_unique<UdpDriver>(up);
      udp[r] = u[r].get();
    }
    for (int r = 0; r < 2; ++r) u[r]->set_peer_address(1 - r, loopback(u[1 - r]->port()));
    for (int r = 0; r < 2; ++r) {
      ReliableConfig rc;
      rc.job_key = kKey;
      rc.min_rto_ns = 1'000'000;
      rc.initial_rto_ns = 1'000'000;
      ch[r] = std::make_unique<ReliableChannel>(std::move(u[r]), rc);
    }
  }
  template <class Pred>
  bool poll_until(Pred done, bool poll_receiver = true) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      ch[0]->poll(sink[0], 64);
      if (poll_receiver) ch[1]->poll(sink[1], 64);
    }
    return true;
  }
  // Sends buf in fragments of the channel's packet size, lent (tracked) from `reg`; returns
  // the number of fragments. Token ids: first_id, first_id + 1, ...
  std::size_t send(std::span<const std::byte> buf, const mem::Registration& reg, uint64_t first_id,
                   bool poll_receiver = true) {
    const std::size_t chunk = ch[0]->caps().max_packet;
    std::size_t n = 0;
    for (std::size_t off = 0; off < buf.size();) {
      const std::size_t len = std::min(chunk, buf.size() - off);
      const uint64_t hdr[2] = {first_id + n, off};
      const IoStatus s =
          ch[0]->send_tracked(1, {reinterpret_cast<const std::byte*>(hdr), sizeof hdr},
                              buf.subspan(off, len), reg, {first_id + n, drivers::ProtocolId::p2p});
      EXPECT_NE(s, IoStatus::failed);
      if (s == IoStatus::again) {
        ch[0]->poll(sink[0], 64);
        if (poll_receiver) ch[1]->poll(sink[1], 64);
        continue;
      }
      EXPECT_EQ(s, IoStatus::posted);
      off += len;
      ++n;
      big += len >= kZcMin;
    }
    return n;
  }
  // Payload bytes received (in order) since fragment `from`.
  std::vector<std::byte> received(std::size_t from) const {
    std::vector<std::byte> out;
    for (std::size_t i = from; i < sink[1].got.size(); ++i)
      out.insert(out.end(), sink[1].got[i].payload.begin(), sink[1].got[i].payload.end());
    return out;
  }
  UdpDriver* udp[2] = {};
  std::unique_ptr<ReliableChannel> ch[2];
  Sink sink[2];
  std::size_t big = 0;  // fragments sent so far of at least kZcMin bytes (the rest is copied)
};

std::byte pattern(int round, std::size_t i) {
  return static_cast<std::byte>((round * 31 + i * 7 + (i >> 9)) & 0xFF);
}
void fill(std::byte* p, std::size_t n, int round) {
  for (std::size_t i = 0; i < n; ++i) p[i] = pattern(round, i);
}
bool matches(const std::vector<std::byte>& got, std::size_t n, int round) {
  if (got.size() != n) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (got[i] != pattern(round, i)) return false;
  return true;
}
std::byte* map_at(void* hint, std::size_t n) {
  const int fixed = hint ? MAP_FIXED_NOREPLACE : 0;
  void* p = mmap(hint, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | fixed, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
}

class UdpZeroCopyPaired : public testing::TestWithParam<bool> {};

// Paired: through the connected receive socket; unpaired: through a socket of the peer's own.
TEST_P(UdpZeroCopyPaired, LentFragmentsLeaveZeroCopyAndCompleteOnce) {
  Pair pr(UdpZeroCopy::on, GetParam());
  EXPECT_EQ(pr.udp[0]->paired(), GetParam());
  ASSERT_TRUE(pr.udp[0]->zerocopy()) << pr.udp[0]->zerocopy_unavailable();
  EXPECT_TRUE(pr.ch[0]->caps().needs_registration);
  EXPECT_EQ(pr.ch[0]->memory_domain().name(), "uring");
  std::vector<std::byte> buf(kLen);
  fill(buf.data(), kLen, 1);
  mem::Registration reg;
  ASSERT_EQ(pr.ch[0]->memory_domain().register_memory(buf, reg), Errc::ok);
  const std::size_t n = pr.send(buf, reg, 0);
  ASSERT_TRUE(pr.poll_until([&] { return pr.sink[0].completions.size() == n; }));
  EXPECT_TRUE(matches(pr.received(0), kLen, 1));
  for (const auto& [id, times] : pr.sink[0].completions) EXPECT_EQ(times, 1) << "token " << id;
  const uint64_t sends = counter(*pr.ch[0], "udp.zerocopy.sends");
  EXPECT_EQ(sends, pr.big);
  // Loopback: the kernel copies every zero-copy send when it delivers it locally.
  EXPECT_EQ(counter(*pr.ch[0], "udp.zerocopy.copied"), sends);
  EXPECT_EQ(counter(*pr.ch[0], "udp.zerocopy.peers_off"), 0u);  // `on` never switches off
}

INSTANTIATE_TEST_SUITE_P(Udp, UdpZeroCopyPaired, testing::Bool());

// MTU-sized datagrams (a real network's 1500 bytes): every fragment is under the zero-copy
// minimum, so none is lent to the rail, and the registered fragments still leave in the
// corked runs' GSO sends instead of one sendmsg each (which made 1 MiB over udp 8x slower
// between two hosts at MTU 1500).
TEST(UdpZeroCopy, FragmentsUnderTheMinimumKeepTheirGsoRuns) {
  Pair pr(UdpZeroCopy::on, true, 1472);
  ASSERT_TRUE(pr.udp[0]->zerocopy()) << pr.udp[0]->zerocopy_unavailable();
  ASSERT_TRUE(pr.udp[0]->gso());
  ASSERT_LT(pr.ch[0]->caps().max_packet, kZcMin);
  std::vector<std::byte> buf(kLen);
  fill(buf.data(), kLen, 4);
  mem::Registration reg;
  ASSERT_EQ(pr.ch[0]->memory_domain().register_memory(buf, reg), Errc::ok);
  const std::size_t n = pr.send(buf, reg, 0);
  ASSERT_TRUE(pr.poll_until([&] { return pr.sink[0].completions.size() == n; }));
  EXPECT_TRUE(matches(pr.received(0), kLen, 4));
  for (const auto& [id, times] : pr.sink[0].completions) EXPECT_EQ(times, 1) << "token " << id;
  EXPECT_EQ(counter(*pr.ch[0], "udp.zerocopy.sends"), 0u);
  EXPECT_EQ(counter(*pr.ch[0], "udp.zerocopy.fallbacks"), 0u);
  EXPECT_GT(counter(*pr.ch[0], "udp.gso_sends"), 0u);
  EXPECT_GT(counter(*pr.ch[0], "udp.gso_segments"), n / 2);
}

TEST(UdpZeroCopy, ResendsAreCopiedAndCompletionWaitsForTheAck) {
  Pair pr(UdpZeroCopy::on);
  ASSERT_TRUE(pr.udp[0]->zerocopy()) << pr.udp[0]->zerocopy_unavailable();
  std::vector<std::byte> buf(kLen);
  fill(buf.data(), kLen, 2);
  mem::Registration reg;
  ASSERT_EQ(pr.ch[0]->memory_domain().register_memory(buf, reg), Errc::ok);
  const std::size_t n = pr.send(buf, reg, 100, false);
  // The receiver is silent: timeouts and tail probes resend (copied), and nothing completes
  // (nothing was acknowledged). Poll until a resend has gone out (at least 30 ms, at most 20 s:
  // on a loaded machine 30 ms may hold too few polls for the first timeout to fire).
  const auto resends = [&] {
    return counter(*pr.ch[0], "rel.retransmits_timeout") + counter(*pr.ch[0], "rel.tail_probes");
  };
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() < start + std::chrono::milliseconds(30) ||
         (resends() == 0 && std::chrono::steady_clock::now() < start + std::chrono::seconds(20)))
    pr.ch[0]->poll(pr.sink[0], 64);
  EXPECT_TRUE(pr.sink[0].completions.empty());
  EXPECT_GT(resends(), 0u);
  EXPECT_EQ(counter(*pr.ch[0], "udp.zerocopy.sends"), pr.big) << "only first transmissions";
  ASSERT_TRUE(pr.poll_until([&] { return pr.sink[0].completions.size() == n; }));
  EXPECT_TRUE(matches(pr.received(0), kLen, 2));
  for (const auto& [id, times] : pr.sink[0].completions) EXPECT_EQ(times, 1) << "token " << id;
}

// The registration holds the pages it pinned, not the address: after the application unmaps
// and maps new memory at the same address, a send through the old registration puts the OLD
// pages on the wire (what a registration cache must never let happen). Over udp the payload
// CRC, taken from the buffer as the application sees it, does not match them: the receiver
// drops those datagrams as corrupt and the copied resends deliver the right bytes.
TEST(UdpZeroCopy, StaleRegistrationSendsTheOldPagesWhichThePayloadCrcRejects) {
  Pair pr(UdpZeroCopy::on);
  ASSERT_TRUE(pr.udp[0]->zerocopy()) << pr.udp[0]->zerocopy_unavailable();
  std::byte* a = map_at(nullptr, kLen);
  ASSERT_TRUE(a);
  fill(a, kLen, 1);
  mem::Registration stale;
  ASSERT_EQ(pr.ch[0]->memory_domain().register_memory({a, kLen}, stale), Errc::ok);
  std::size_t n = pr.send({a, kLen}, stale, 0);
  ASSERT_TRUE(pr.poll_until([&] { return pr.sink[0].completions.size() == n; }));
  EXPECT_TRUE(matches(pr.received(0), kLen, 1));
  EXPECT_EQ(counter(*pr.ch[1], "rel.corrupt"), 0u);

  ASSERT_EQ(munmap(a, kLen), 0);
  std::byte* b = map_at(a, kLen);
  ASSERT_EQ(b, a) << "could not map again at the same address";
  fill(b, kLen, 2);  // what the application now holds at that address
  const std::size_t first = pr.sink[1].got.size();
  const uint64_t zc_before = counter(*pr.ch[0], "udp.zerocopy.sends");
  const std::size_t big_before = pr.big;
  n += pr.send({b, kLen}, stale, 1000);
  const std::size_t m = pr.big - big_before;
  ASSERT_TRUE(pr.poll_until([&] { return pr.sink[0].completions.size() == n; }));
  EXPECT_EQ(counter(*pr.ch[0], "udp.zerocopy.sends") - zc_before, m);
  EXPECT_EQ(counter(*pr.ch[1], "rel.corrupt"), m)
      << "every zero-copy datagram carried the old pages";
  EXPECT_TRUE(matches(pr.received(first), kLen, 2)) << "the resends carry what is there now";

  mem::Registration fresh;
  ASSERT_EQ(pr.ch[0]->memory_domain().register_memory({b, kLen}, fresh), Errc::ok);
  const std::size_t second = pr.sink[1].got.size();
  n += pr.send({b, kLen}, fresh, 2000);
  ASSERT_TRUE(pr.poll_until([&] { return pr.sink[0].completions.size() == n; }));
  EXPECT_TRUE(matches(pr.received(second), kLen, 2));
  EXPECT_EQ(counter(*pr.ch[1], "rel.corrupt"), m) << "a fresh registration sends what is there";
  stale.reset();
  fresh.reset();
  munmap(b, kLen);
}

// auto: to a loopback peer the kernel would copy anyway, so the driver stays on host memory.
TEST(UdpZeroCopy, AutoLeavesLoopbackPeersOnTheCopyPath) {
  Pair pr(UdpZeroCopy::automatic);
  EXPECT_FALSE(pr.ch[0]->caps().needs_registration);
  EXPECT_EQ(pr.ch[0]->memory_domain().name(), "host");
  std::vector<std::byte> buf(kLen);
  fill(buf.data(), kLen, 3);
  const std::size_t n = pr.send(buf, mem::Registration::host(buf), 0);
  ASSERT_TRUE(pr.poll_until([&] { return pr.sink[0].completions.size() == n; }));
  EXPECT_TRUE(matches(pr.received(0), kLen, 3));
  EXPECT_EQ(counter(*pr.ch[0], "udp.zerocopy.sends"), 0u);
}

}  // namespace
