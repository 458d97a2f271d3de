// tcp zero-copy sends (io_uring SEND_ZC from the fixed buffer of a uring-domain
// registration), two "ranks" in this process over loopback:
//   - a tracked send from registered memory is posted and completes once, on the
//     notification; packets sent meanwhile keep their order on the stream; the kernel's
//     "copied after all" reports are counted (on loopback it always copies);
//   - the consequence a registration cache must guard against: the registration pins the
//     pages it was made on, so after munmap + mmap at the same address, or MADV_DONTNEED,
//     a send through the stale registration carries the OLD bytes, not what the
//     application now sees at that address;
//   - auto leaves loopback peers on the copy path (host memory, no registration);
//   - a large payload whose placement names a registration in the receiver's domain is read
//     by io_uring READ_FIXED into it (tcp.read_fixed.*), and a stale receive registration
//     makes the kernel write into the old pages: the application never sees the bytes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "drivers/tcp/tcp_driver.hpp"
#include "util/stats.hpp"

namespace {

using namespace sluice;
using drivers::CompletionToken;
using drivers::IoStatus;
using drivers::TcpDriver;
using drivers::TcpParams;
using drivers::TcpZeroCopy;

struct Got {
  std::vector<std::byte> header, payload;
};

class Sink final : public drivers::PacketSink {
 public:
  void on_packet(int, std::span<const std::byte> h, std::span<const std::byte> p) override {
    got.push_back({{h.begin(), h.end()}, {p.begin(), p.end()}});
  }
  void on_completion(CompletionToken token, Errc status) override {
    completions.push_back({token.id, status});
  }
  std::vector<Got> got;
  std::vector<std::pair<uint64_t, Errc>> completions;
};

sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

struct Pair {
  explicit Pair(TcpZeroCopy mode, std::vector<int>* dead0 = nullptr, bool read_fixed = true) {
    for (int r = 0; r < 2; ++r) {
      TcpParams p;
      p.rank = r;
      p.size = 2;
      for (std::size_t i = 0; i < p.key.size(); ++i) p.key[i] = static_cast<uint8_t>(9 + i);
      p.max_packet = 256 * 1024;
      p.zerocopy = mode;
      p.zerocopy_min = 4096;
      p.socket_buffer = 64 * 1024;  // a full socket within a few sends
      p.read_fixed = read_fixed;
      if (r == 0 && dead0) p.on_peer_dead = [dead0](int peer) { dead0->push_back(peer); };
      d[r] = std::make_unique<TcpDriver>(p);
    }
    d[0]->set_peer_address(1, loopback(d[1]->port()));
    d[1]->set_peer_address(0, loopback(d[0]->port()));
    d[0]->register_stats(stats, "tcp");
    d[1]->register_stats(stats1, "tcp");
  }
  template <class Pred>
  bool poll_until(Pred done) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      for (int r = 0; r < 2; ++r)
        if (d[r]) d[r]->poll(sink[r], 64);
    }
    return true;
  }
  // Sends one tracked packet from rank 0 and waits for its arrival and (if posted) its
  // local completion. Returns the status send_tracked gave.
  IoStatus send_and_wait(std::span<const std::byte> payload, const mem::Registration& reg,
                         uint64_t id) {
    const std::byte header[4] = {std::byte{0x11}, std::byte(id), std::byte{0}, std::byte{0}};
    IoStatus s;
    const std::size_t want = sink[1].got.size() + 1;
    const std::size_t done = sink[0].completions.size();
    EXPECT_TRUE(poll_until([&] {
      s = d[0]->send_tracked(1, header, payload, reg, {id, drivers::ProtocolId::p2p});
      return s != IoStatus::again;
    }));
    EXPECT_TRUE(poll_until([&] {
      return sink[1].got.size() >= want &&
             (s != IoStatus::posted || sink[0].completions.size() > done);
    }));
    return s;
  }
  std::unique_ptr<TcpDriver> d[2];
  Sink sink[2];
  util::StatsRegistry stats, stats1;  // rank 0's, rank 1's
};

std::byte pattern(int round, std::size_t i) {
  return static_cast<std::byte>((round * 71 + i * 13 + (i >> 9)) & 0xFF);
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

constexpr std::size_t kLen = 128 * 1024;

std::byte* map_at(void* hint, std::size_t n) {
  const int fixed = hint ? MAP_FIXED_NOREPLACE : 0;
  void* p = mmap(hint, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | fixed, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
}

TEST(TcpZeroCopy, TrackedSendsCompleteOnTheNotificationInStreamOrder) {
  Pair pr(TcpZeroCopy::on);
  ASSERT_TRUE(pr.d[0]->zerocopy()) << pr.d[0]->zerocopy_unavailable();
  EXPECT_TRUE(pr.d[0]->caps().needs_registration);
  EXPECT_TRUE(pr.d[0]->caps().lends_payload);
  EXPECT_EQ(pr.d[0]->memory_domain().name(), "uring");
  // Connect first: before the connection is up a tracked send takes the copy path.
  const std::byte hello[2] = {std::byte{0x11}, std::byte{0}};
  ASSERT_EQ(pr.d[0]->send(1, hello, {}), IoStatus::done);
  ASSERT_TRUE(pr.poll_until([&] { return pr.sink[1].got.size() == 1; }));

  constexpr int kRounds = 16;
  std::vector<std::byte> buf(kRounds * kLen);
  for (int r = 0; r < kRounds; ++r) fill(buf.data() + r * kLen, kLen, r);
  mem::Registration reg;
  ASSERT_EQ(pr.d[0]->memory_domain().register_memory(buf, reg), Errc::ok);
  int posted = 0;
  for (int r = 0; r < kRounds; ++r) {
    const std::byte h[2] = {std::byte{0x11}, std::byte(r + 1)};
    IoStatus s;
    ASSERT_TRUE(pr.poll_until([&] {
      s = pr.d[0]->send_tracked(1, h, {buf.data() + r * kLen, kLen}, reg,
                                {static_cast<uint64_t>(r), drivers::ProtocolId::p2p});
      return s != IoStatus::again;
    }));
    ASSERT_NE(s, IoStatus::failed);
    posted += s == IoStatus::posted;
    // A small packet right behind it: it must not overtake the payload on the stream.
    const std::byte small[3] = {std::byte{0x12}, std::byte(r + 1), std::byte{7}};
    ASSERT_EQ(pr.d[0]->send(1, small, small), IoStatus::done);
  }
  EXPECT_EQ(posted, kRounds);
  ASSERT_TRUE(pr.poll_until([&] {
    return pr.sink[1].got.size() == 1 + 2 * kRounds &&
           static_cast<int>(pr.sink[0].completions.size()) == posted;
  }));
  for (int r = 0; r < kRounds; ++r) {
    const Got& big = pr.sink[1].got[1 + 2 * r];
    const Got& small = pr.sink[1].got[2 + 2 * r];
    ASSERT_EQ(big.header.size(), 2u);
    EXPECT_EQ(big.header[1], std::byte(r + 1)) << "round " << r;
    EXPECT_TRUE(matches(big.payload, kLen, r)) << "round " << r;
    ASSERT_EQ(small.header.size(), 3u);
    EXPECT_EQ(small.header[0], std::byte{0x12});
    EXPECT_EQ(small.header[1], std::byte(r + 1));
  }
  std::vector<bool> seen(kRounds);
  for (const auto& [id, status] : pr.sink[0].completions) {
    EXPECT_EQ(status, Errc::ok);
    ASSERT_LT(id, static_cast<uint64_t>(kRounds));
    EXPECT_FALSE(seen[id]) << "completion " << id << " twice";
    seen[id] = true;
  }
  EXPECT_EQ(pr.stats.value("tcp.zerocopy.sends"), static_cast<uint64_t>(posted));
  EXPECT_EQ(pr.stats.value("tcp.zerocopy.bytes"), static_cast<uint64_t>(posted) * kLen);
  // Loopback: the receiving socket gets the sender's pages, so the kernel copies them
  // before the notification (skb_orphan_frags_rx) and says so.
  EXPECT_EQ(pr.stats.value("tcp.zerocopy.copied"), static_cast<uint64_t>(posted));
  RecordProperty("zc_copied", static_cast<int>(*pr.stats.value("tcp.zerocopy.copied")));
}

// The registration holds the pages it pinned, not the address: after the application
// unmaps and maps new memory at the same address, a send through the old registration
// reads the old pages.
TEST(TcpZeroCopy, StaleRegistrationSendsTheOldPagesAfterMunmapAndRemap) {
  Pair pr(TcpZeroCopy::on);
  ASSERT_TRUE(pr.d[0]->zerocopy()) << pr.d[0]->zerocopy_unavailable();
  std::byte* a = map_at(nullptr, kLen);
  ASSERT_TRUE(a);
  fill(a, kLen, 1);
  mem::Registration stale;
  ASSERT_EQ(pr.d[0]->memory_domain().register_memory({a, kLen}, stale), Errc::ok);
  // Connects (copy path) and then sends zero-copy: both carry round 1.
  pr.send_and_wait({a, kLen}, stale, 1);
  EXPECT_EQ(pr.send_and_wait({a, kLen}, stale, 2), IoStatus::posted);
  ASSERT_EQ(pr.sink[1].got.size(), 2u);
  EXPECT_TRUE(matches(pr.sink[1].got[1].payload, kLen, 1));

  ASSERT_EQ(munmap(a, kLen), 0);
  std::byte* b = map_at(a, kLen);
  ASSERT_EQ(b, a) << "could not map again at the same address";
  fill(b, kLen, 2);  // what the application now holds at that address
  EXPECT_EQ(pr.send_and_wait({b, kLen}, stale, 3), IoStatus::posted);
  ASSERT_EQ(pr.sink[1].got.size(), 3u);
  EXPECT_TRUE(matches(pr.sink[1].got[2].payload, kLen, 1))
      << "the stale registration should send the old pages (round 1)";
  EXPECT_FALSE(matches(pr.sink[1].got[2].payload, kLen, 2));

  // A fresh registration of the new mapping sends what is there now.
  mem::Registration fresh;
  ASSERT_EQ(pr.d[0]->memory_domain().register_memory({b, kLen}, fresh), Errc::ok);
  EXPECT_EQ(pr.send_and_wait({b, kLen}, fresh, 4), IoStatus::posted);
  EXPECT_TRUE(matches(pr.sink[1].got[3].payload, kLen, 2));
  stale.reset();
  fresh.reset();
  munmap(b, kLen);
}

// MADV_DONTNEED drops the process's mapping of the pages (later reads fault in zero pages);
// the pinned pages live on in the registration and are what it sends.
TEST(TcpZeroCopy, StaleRegistrationSendsTheOldPagesAfterMadvDontneed) {
  Pair pr(TcpZeroCopy::on);
  ASSERT_TRUE(pr.d[0]->zerocopy()) << pr.d[0]->zerocopy_unavailable();
  std::byte* a = map_at(nullptr, kLen);
  ASSERT_TRUE(a);
  fill(a, kLen, 5);
  mem::Registration stale;
  ASSERT_EQ(pr.d[0]->memory_domain().register_memory({a, kLen}, stale), Errc::ok);
  pr.send_and_wait({a, kLen}, stale, 1);
  ASSERT_EQ(madvise(a, kLen, MADV_DONTNEED), 0);
  EXPECT_EQ(a[100], std::byte{0}) << "after MADV_DONTNEED the application sees zero pages";
  fill(a, kLen, 6);
  EXPECT_EQ(pr.send_and_wait({a, kLen}, stale, 2), IoStatus::posted);
  ASSERT_EQ(pr.sink[1].got.size(), 2u);
  EXPECT_TRUE(matches(pr.sink[1].got[1].payload, kLen, 5))
      << "the stale registration should send the old pages (round 5)";
  stale.reset();
  munmap(a, kLen);
}

// A peer lost while zero-copy sends to it are still in the kernel: it is declared dead,
// sends to it fail, and the sends in flight report nothing after that (the core fails the
// peer's requests itself, and the protocol may have let go of them), never twice.
TEST(TcpZeroCopy, PeerLostWithSendsInFlightReportsNothingAfterTheDeath) {
  std::vector<int> dead;
  Pair pr(TcpZeroCopy::on, &dead);
  ASSERT_TRUE(pr.d[0]->zerocopy()) << pr.d[0]->zerocopy_unavailable();
  std::vector<std::byte> buf(8 * kLen);
  fill(buf.data(), buf.size(), 9);
  mem::Registration reg;
  ASSERT_EQ(pr.d[0]->memory_domain().register_memory(buf, reg), Errc::ok);
  pr.send_and_wait({buf.data(), kLen}, reg, 0);  // connected (copy path) and delivered
  // The receiver stops reading: the socket fills and a SEND_ZC stays in the kernel.
  int posted = 0;
  const std::byte h[2] = {std::byte{0x11}, std::byte{1}};
  for (uint64_t i = 1; i <= 32; ++i) {
    IoStatus s = IoStatus::again;
    for (int spin = 0; spin < 1000 && s == IoStatus::again; ++spin) {
      s = pr.d[0]->send_tracked(1, h, {buf.data() + (i % 8) * kLen, kLen}, reg,
                                {i, drivers::ProtocolId::p2p});
      pr.d[0]->poll(pr.sink[0], 64);
    }
    if (s != IoStatus::posted) break;  // the socket is full: one is stuck in the kernel
    ++posted;
  }
  ASSERT_GT(posted, 0);
  pr.d[1].reset();  // the peer vanishes without a goodbye
  std::size_t at_death = 0;
  ASSERT_TRUE(pr.poll_until([&] {
    at_death = pr.sink[0].completions.size();
    return !dead.empty();
  }));
  EXPECT_EQ(dead[0], 1);
  EXPECT_EQ(pr.d[0]->send_tracked(1, h, {buf.data(), kLen}, reg, {99, drivers::ProtocolId::p2p}),
            IoStatus::failed);
  for (int k = 0; k < 200; ++k) pr.d[0]->poll(pr.sink[0], 64);
  EXPECT_EQ(pr.sink[0].completions.size(), at_death) << "a completion after the death report";
  std::vector<int> times(40);
  for (const auto& [id, status] : pr.sink[0].completions) {
    ASSERT_LT(id, times.size());
    EXPECT_EQ(++times[id], 1) << "completion " << id << " twice";
  }
}

// auto: to a loopback peer the kernel would copy anyway, so the driver stays on host
// memory and the copy path.
TEST(TcpZeroCopy, AutoLeavesLoopbackPeersOnTheCopyPath) {
  Pair pr(TcpZeroCopy::automatic);
  EXPECT_FALSE(pr.d[0]->caps().needs_registration);
  EXPECT_FALSE(pr.d[0]->caps().lends_payload);
  std::vector<std::byte> buf(kLen);
  fill(buf.data(), kLen, 3);
  EXPECT_EQ(pr.send_and_wait(buf, mem::Registration::host(buf), 1), IoStatus::done);
  EXPECT_TRUE(matches(pr.sink[1].got[0].payload, kLen, 3));
  EXPECT_EQ(pr.stats.value("tcp.zerocopy.sends"), 0u);
}

// Rank 1's sink for the placement tests: packets whose header starts 0x21 carry their offset
// in `dest` (bytes 1-4) and are placed there, with `reg` (rank 1's registration of it).
class PlacingSink final : public drivers::PacketSink {
 public:
  void on_packet(int, std::span<const std::byte> h, std::span<const std::byte> p) override {
    in_place += !dest.empty() && p.data() >= dest.data() && p.data() < dest.data() + dest.size();
    got.push_back({{h.begin(), h.end()}, {p.begin(), p.end()}});
  }
  drivers::Placement placement(int, std::span<const std::byte> h, std::size_t n) override {
    if (h.size() != 5 || h[0] != std::byte{0x21}) return {};
    uint32_t off;
    std::memcpy(&off, h.data() + 1, 4);
    if (off > dest.size() || n > dest.size() - off) return {};
    return {dest.subspan(off, n), reg.empty() ? nullptr : &reg};
  }
  std::span<std::byte> dest;
  mem::Registration reg;
  std::vector<Got> got;
  int in_place = 0;
};

// Sends `rounds` payloads of `len` bytes from rank 0 (plain sends: the copy path) to offsets
// round * len of rank 1's placement, polling rank 1 with `sink`.
void send_placed(Pair& pr, PlacingSink& sink, const std::byte* src, std::size_t len, int rounds) {
  const std::size_t want = sink.got.size() + static_cast<std::size_t>(rounds);
  for (int r = 0; r < rounds; ++r) {
    std::byte h[5] = {std::byte{0x21}};
    const auto off = static_cast<uint32_t>(r * len);
    std::memcpy(h + 1, &off, 4);
    IoStatus s = IoStatus::again;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while ((s = pr.d[0]->send(1, h, {src + r * len, len})) == IoStatus::again) {
      ASSERT_LT(std::chrono::steady_clock::now(), end);
      pr.d[0]->poll(pr.sink[0], 64);
      pr.d[1]->poll(sink, 64);
    }
    ASSERT_EQ(s, IoStatus::done);
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (sink.got.size() < want) {
    ASSERT_LT(std::chrono::steady_clock::now(), end);
    pr.d[0]->poll(pr.sink[0], 64);
    pr.d[1]->poll(sink, 64);
  }
}

// The receive side of registered memory: rank 1 registers its destination in its own
// domain and names it in the placement; the payloads are read by READ_FIXED into it (after
// the first, whose headers came with a first part of it, only headers are read ahead), and
// what is handed up is that memory, holding every byte.
TEST(TcpZeroCopy, PlacedPayloadsAreReadByReadFixedIntoTheReceiversRegistration) {
  Pair pr(TcpZeroCopy::on);
  ASSERT_TRUE(pr.d[1]->zerocopy()) << pr.d[1]->zerocopy_unavailable();
  ASSERT_TRUE(pr.d[1]->read_fixed());
  constexpr int kRounds = 12;
  std::vector<std::byte> src(kRounds * kLen), dst(kRounds * kLen, std::byte{0xee});
  for (int r = 0; r < kRounds; ++r) fill(src.data() + r * kLen, kLen, r);
  PlacingSink sink;
  sink.dest = dst;
  ASSERT_EQ(pr.d[1]->memory_domain().register_memory(dst, sink.reg), Errc::ok);
  send_placed(pr, sink, src.data(), kLen, kRounds);
  ASSERT_EQ(sink.got.size(), static_cast<std::size_t>(kRounds));
  for (int r = 0; r < kRounds; ++r) {
    EXPECT_TRUE(matches(sink.got[r].payload, kLen, r)) << "round " << r;
    EXPECT_TRUE(
        std::equal(dst.begin() + r * kLen, dst.begin() + (r + 1) * kLen, src.begin() + r * kLen))
        << "round " << r << " not in its place";
  }
  EXPECT_EQ(sink.in_place, kRounds);
  const uint64_t fixed = pr.stats1.value("tcp.read_fixed.payloads").value_or(0);
  EXPECT_GE(fixed, static_cast<uint64_t>(kRounds - 1)) << "READ_FIXED was not used";
  EXPECT_EQ(pr.stats1.value("tcp.placed"), static_cast<uint64_t>(kRounds));
  EXPECT_EQ(pr.stats1.value("tcp.read_fixed.fallbacks"), 0u);
  // Every placed byte came either by READ_FIXED or with the headers of its frame.
  EXPECT_EQ(*pr.stats1.value("tcp.read_fixed.bytes") + *pr.stats1.value("tcp.placed_staged_bytes"),
            kRounds * kLen);
  RecordProperty("read_fixed_payloads", static_cast<int>(fixed));
}

// Without a registration in the placement (or with READ_FIXED off) the same payloads are
// received in place by recv(): nothing is counted as READ_FIXED.
TEST(TcpZeroCopy, PlacementsWithoutARegistrationAreReceivedByRecv) {
  for (const bool read_fixed : {true, false}) {
    Pair pr(TcpZeroCopy::on, nullptr, read_fixed);
    ASSERT_TRUE(pr.d[1]->zerocopy()) << pr.d[1]->zerocopy_unavailable();
    constexpr int kRounds = 6;
    std::vector<std::byte> src(kRounds * kLen), dst(kRounds * kLen);
    for (int r = 0; r < kRounds; ++r) fill(src.data() + r * kLen, kLen, r);
    PlacingSink sink;
    sink.dest = dst;
    if (!read_fixed) {  // a registration READ_FIXED off must leave alone
      ASSERT_EQ(pr.d[1]->memory_domain().register_memory(dst, sink.reg), Errc::ok);
    }
    send_placed(pr, sink, src.data(), kLen, kRounds);
    for (int r = 0; r < kRounds; ++r) EXPECT_TRUE(matches(sink.got[r].payload, kLen, r));
    EXPECT_EQ(sink.in_place, kRounds);
    EXPECT_EQ(pr.stats1.value("tcp.read_fixed.payloads"), 0u);
    EXPECT_EQ(pr.stats1.value("tcp.read_fixed.reads"), 0u);
    EXPECT_EQ(*pr.stats1.value("tcp.placed_bytes") + *pr.stats1.value("tcp.placed_staged_bytes"),
              kRounds * kLen);
  }
}

// What a receiver's registration cache must guard against: a receive registration pins the
// pages it was made on. After munmap + mmap at the same address, READ_FIXED through the old
// registration writes the payload into the old pages; the application, looking at the
// address, sees what it had put there, not the message.
TEST(TcpZeroCopy, StaleReceiveRegistrationWritesIntoTheOldPages) {
  Pair pr(TcpZeroCopy::on);
  ASSERT_TRUE(pr.d[1]->zerocopy()) << pr.d[1]->zerocopy_unavailable();
  constexpr int kRounds = 4;
  const std::size_t bytes = kRounds * kLen;
  std::vector<std::byte> src(bytes);
  for (int r = 0; r < kRounds; ++r) fill(src.data() + r * kLen, kLen, 20 + r);
  std::byte* a = map_at(nullptr, bytes);
  ASSERT_TRUE(a);
  PlacingSink sink;
  sink.dest = {a, bytes};
  ASSERT_EQ(pr.d[1]->memory_domain().register_memory(sink.dest, sink.reg), Errc::ok);
  // Through the live registration: every round lands.
  send_placed(pr, sink, src.data(), kLen, kRounds);
  EXPECT_TRUE(std::equal(a, a + bytes, src.begin()));

  ASSERT_EQ(munmap(a, bytes), 0);
  std::byte* b = map_at(a, bytes);
  ASSERT_EQ(b, a) << "could not map again at the same address";
  std::memset(b, 0xee, bytes);
  const uint64_t fixed0 = *pr.stats1.value("tcp.read_fixed.payloads");
  send_placed(pr, sink, src.data(), kLen, kRounds);  // sink.reg: the stale registration
  EXPECT_GT(*pr.stats1.value("tcp.read_fixed.payloads"), fixed0);
  std::size_t unchanged = 0;
  for (std::size_t i = 0; i < bytes; ++i) unchanged += b[i] == std::byte{0xee};
  EXPECT_GT(unchanged, bytes / 2)
      << "the stale registration should have received into the "
         "old pages, leaving the new ones as the application filled them";
  // A fresh registration of the new mapping receives into it.
  sink.reg.reset();
  ASSERT_EQ(pr.d[1]->memory_domain().register_memory(sink.dest, sink.reg), Errc::ok);
  send_placed(pr, sink, src.data(), kLen, kRounds);
  EXPECT_TRUE(std::equal(b, b + bytes, src.begin()));
  sink.reg.reset();
  munmap(b, bytes);
}

}  // namespace
