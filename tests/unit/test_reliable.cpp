// The reliability layer over an in-memory lossy wire. Time is a fake clock advanced by
// the test loop (so every run sees the same faults and the same timer firings, however
// loaded the machine), except in one test that uses the real clock. Every loop is also
// bounded by wall-clock time so a bug fails the test instead of hanging it.
#include "proto/reliable/reliable_channel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "drivers/fault/fault_driver.hpp"
#include "drivers/fault/loopback_wire.hpp"
#include "drivers/loopback.hpp"
#include "proto/reliable/wire.hpp"
#include "stats_text.hpp"

using sluice::test::counter;
#include "util/crc32c.hpp"

namespace {

using sluice::drivers::Driver;
using sluice::drivers::FaultConfig;
using sluice::drivers::FaultDriver;
using sluice::drivers::IoStatus;
using sluice::drivers::LoopbackWire;
using sluice::drivers::LoopbackWireOptions;
using sluice::drivers::PacketSink;
using namespace sluice::proto::reliable;

constexpr auto kWallLimit = std::chrono::seconds(60);

std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Message `index` from `from`: its sizes and bytes are a pure function of (from, index),
// so the receiver can rebuild and compare them.
struct Message {
  std::vector<std::byte> header;
  std::vector<std::byte> payload;
};
Message make_message(int from, std::uint32_t index, std::size_t max_header,
                     std::size_t max_payload) {
  std::uint64_t s = (static_cast<std::uint64_t>(from) << 32) ^ index ^ 0xABCDEF;
  Message m;
  const std::size_t hlen = 8 + splitmix(s) % (max_header - 8 + 1);
  std::size_t plen = splitmix(s) % (max_payload + 1);
  if (index % 17 == 0) plen = 0;  // empty payloads are messages too
  if (index % 19 == 0) plen = max_payload;
  m.header.resize(hlen);
  m.payload.resize(plen);
  std::memcpy(m.header.data(), &index, 4);
  const std::uint32_t f = static_cast<std::uint32_t>(from);
  std::memcpy(m.header.data() + 4, &f, 4);
  for (std::size_t i = 8; i < hlen; ++i) m.header[i] = static_cast<std::byte>(splitmix(s));
  for (auto& b : m.payload) b = static_cast<std::byte>(splitmix(s));
  return m;
}

// Checks every arrival against the message it must be: exactly once and in order.
class Checker final : public PacketSink {
 public:
  Checker(std::size_t max_header, std::size_t max_payload)
      : max_header_(max_header), max_payload_(max_payload) {}
  void on_packet(int src, std::span<const std::byte> header,
                 std::span<const std::byte> payload) override {
    ASSERT_GE(header.size(), 8u);
    std::uint32_t index = 0, from = 0;
    std::memcpy(&index, header.data(), 4);
    std::memcpy(&from, header.data() + 4, 4);
    ASSERT_EQ(static_cast<int>(from), src);
    ASSERT_EQ(index, next) << "out of order, lost or duplicated";
    const Message want = make_message(src, index, max_header_, max_payload_);
    ASSERT_EQ(header.size(), want.header.size());
    ASSERT_EQ(payload.size(), want.payload.size());
    ASSERT_TRUE(std::equal(header.begin(), header.end(), want.header.begin()));
    ASSERT_TRUE(std::equal(payload.begin(), payload.end(), want.payload.begin()));
    ++next;
  }
  std::uint32_t next = 0;

 private:
  std::size_t max_header_, max_payload_;
};

class CountingSink final : public PacketSink {
 public:
  void on_packet(int, std::span<const std::byte>, std::span<const std::byte>) override { ++count; }
  int count = 0;
};

// Two ranks joined by a LoopbackWire, each behind a FaultDriver and a ReliableChannel.
struct Pair {
  std::uint64_t clock = 1'000'000;
  LoopbackWire wire;
  FaultDriver* fault[2] = {};
  std::unique_ptr<ReliableChannel> ch[2];
  std::vector<int> died[2];

  Pair(const FaultConfig& faults, ReliableConfig cfg, LoopbackWireOptions wire_opts = {},
       bool real_clock = false)
      : wire(2, wire_opts) {
    for (int r = 0; r < 2; ++r) {
      FaultConfig fc = faults;
      fc.seed = faults.seed * 2 + static_cast<std::uint64_t>(r);
      auto fd = std::make_unique<FaultDriver>(wire.endpoint(r), fc);
      fault[r] = fd.get();
      ReliableConfig c = cfg;
      if (!real_clock) c.clock = [this] { return clock; };
      c.on_peer_dead = [this, r](int peer) { died[r].push_back(peer); };
      ch[r] = std::make_unique<ReliableChannel>(std::move(fd), c);
    }
  }
  bool settled() const { return fault[0]->held() == 0 && fault[1]->held() == 0; }
};

// Two ranks joined by two wires (rails), each rail behind its own FaultDriver.
struct DualRailPair {
  std::uint64_t clock = 1'000'000;
  LoopbackWire wire[2] = {LoopbackWire(2), LoopbackWire(2)};
  FaultDriver* fault[2][2] = {};  // [rank][rail]
  std::unique_ptr<ReliableChannel> ch[2];

  DualRailPair(const FaultConfig& faults, ReliableConfig cfg) {
    for (int r = 0; r < 2; ++r) {
      std::vector<std::unique_ptr<Driver>> rails;
      for (int rail = 0; rail < 2; ++rail) {
        FaultConfig fc = faults;
        fc.seed = faults.seed * 4 + static_cast<std::uint64_t>(2 * r + rail);
        auto fd = std::make_unique<FaultDriver>(wire[rail].endpoint(r), fc);
        fault[r][rail] = fd.get();
        rails.push_back(std::move(fd));
      }
      cfg.clock = [this] { return clock; };
      ch[r] = std::make_unique<ReliableChannel>(std::move(rails), cfg);
    }
  }
  bool settled() const {
    for (auto& per_rank : fault)
      for (FaultDriver* f : per_rank)
        if (f->held() != 0) return false;
    return true;
  }
};

ReliableConfig test_config() {
  ReliableConfig c;
  c.job_key = 0x5EC2E7C0FFEEull;
  c.min_rto_ns = 500'000;
  c.initial_rto_ns = 1'000'000;
  return c;
}

struct RunResult {
  bool finished = false;
  std::uint64_t iterations = 0;
};

// Both ranks send `count` messages to each other while polling; the fake clock advances
// `step_ns` per round. Returns when everything arrived and both channels are quiet.
template <class P>
RunResult exchange(P& pair, std::uint32_t count, std::uint64_t step_ns = 5'000,
                   int poll_budget = 16, const std::function<void(std::uint32_t)>& each_round = {},
                   std::size_t header_cap = 64) {
  const std::size_t max_header = std::min(pair.ch[0]->caps().max_header, header_cap);
  const std::size_t max_payload = pair.ch[0]->caps().max_packet;
  Checker checker[2] = {{max_header, max_payload}, {max_header, max_payload}};
  std::uint32_t sent[2] = {0, 0};
  RunResult result;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < kWallLimit) {
    ++result.iterations;
    for (int r = 0; r < 2; ++r) {
      // Offer 1..4 messages each round; stop at the first `again` (window full).
      const std::uint64_t offer = 1 + (result.iterations + static_cast<std::uint64_t>(r)) % 4;
      for (std::uint64_t k = 0; k < offer && sent[r] < count; ++k) {
        const Message m = make_message(r, sent[r], max_header, max_payload);
        const IoStatus s = pair.ch[r]->send(1 - r, m.header, m.payload);
        EXPECT_NE(s, IoStatus::failed);
        if (s != IoStatus::done) break;
        ++sent[r];
      }
    }
    for (int r = 0; r < 2; ++r) pair.ch[r]->poll(checker[r], poll_budget);
    if (::testing::Test::HasFatalFailure()) return result;
    if (each_round) each_round(checker[1].next);
    if (sent[0] == count && sent[1] == count && checker[0].next == count &&
        checker[1].next == count && pair.ch[0]->quiescent() && pair.ch[1]->quiescent() &&
        pair.settled()) {
      result.finished = true;
      return result;
    }
    pair.clock += step_ns;
  }
  return result;
}

// ---- wire format ----------------------------------------------------------------------

// The injector's four independent fault rates, for the tests that set all of them.
FaultConfig faults(std::uint64_t seed, double drop, double reorder, double duplicate,
                   double corrupt) {
  FaultConfig f;
  f.seed = seed;
  f.drop = drop;
  f.reorder = reorder;
  f.duplicate = duplicate;
  f.corrupt = corrupt;
  return f;
}

TEST(ReliableWire, HeaderLayoutIsDocumented) {
  EXPECT_EQ(sizeof(RelHeader), 48u);
  EXPECT_TRUE(seq_before(0xFFFFFFF0u, 5u));
  EXPECT_TRUE(seq_after(5u, 0xFFFFFFF0u));
  EXPECT_FALSE(seq_before(7u, 7u));
}

TEST(ReliableWire, PacketCrcCoversZeroedHeaderUpperHeaderAndPayload) {
  // The definition, byte by byte, for packets below and above the size that is summed from
  // a gathered copy; the crc field's own value never matters.
  for (std::size_t upper_len : {0u, 4u, 100u})
    for (std::size_t payload_len : {0u, 8u, 150u, 300u, 4000u}) {
      std::vector<std::byte> upper(upper_len), payload(payload_len);
      for (std::size_t i = 0; i < upper_len; ++i) upper[i] = std::byte(i * 7 + 1);
      for (std::size_t i = 0; i < payload_len; ++i) payload[i] = std::byte(i * 13 + 5);
      RelHeader h;
      h.seq = 12345;
      h.ack = 678;
      h.job_key = 0xfeedfacecafebeefull;
      h.upper_header_len = static_cast<std::uint16_t>(upper_len);
      h.payload_len = static_cast<std::uint32_t>(payload_len);
      std::vector<std::byte> all(sizeof h);
      std::memcpy(all.data(), &h, sizeof h);
      all.insert(all.end(), upper.begin(), upper.end());
      all.insert(all.end(), payload.begin(), payload.end());
      const std::uint32_t want = sluice::util::crc32c(all);
      EXPECT_EQ(packet_crc(h, upper, payload), want) << upper_len << " + " << payload_len;
      h.crc = 0xdeadbeef;
      EXPECT_EQ(packet_crc(h, upper, payload), want) << upper_len << " + " << payload_len;
      if (payload_len > 0) {
        payload.back() ^= std::byte{1};
        EXPECT_NE(packet_crc(h, upper, payload), want) << upper_len << " + " << payload_len;
      }
    }
}

TEST(ReliableWire, ParserRejectsMalformedHeaders) {
  RelHeader good;
  good.type = RelType::data;
  good.upper_header_len = 4;
  good.payload_len = 10;
  std::vector<std::byte> bytes(sizeof good + 4);
  std::memcpy(bytes.data(), &good, sizeof good);
  RelHeader out;
  EXPECT_EQ(parse_header(bytes, 10, out), ParseResult::ok);
  EXPECT_EQ(parse_header(std::span(bytes).first(47), 10, out), ParseResult::too_short);
  EXPECT_EQ(parse_header({}, 0, out), ParseResult::too_short);
  EXPECT_EQ(parse_header(bytes, 9, out), ParseResult::bad_length);
  EXPECT_EQ(parse_header(std::span(bytes).first(50), 10, out), ParseResult::bad_length);

  auto mutate = [&](auto fn) {
    RelHeader h = good;
    fn(h);
    std::vector<std::byte> b = bytes;
    std::memcpy(b.data(), &h, sizeof h);
    return parse_header(b, 10, out);
  };
  EXPECT_EQ(mutate([](RelHeader& h) { h.magic = 0x1234; }), ParseResult::bad_magic);
  EXPECT_EQ(mutate([](RelHeader& h) { h.version = 9; }), ParseResult::bad_version);
  EXPECT_EQ(mutate([](RelHeader& h) { h.type = static_cast<RelType>(0); }), ParseResult::bad_type);
  EXPECT_EQ(mutate([](RelHeader& h) { h.type = static_cast<RelType>(77); }), ParseResult::bad_type);
  EXPECT_EQ(mutate([](RelHeader& h) { h.flags = 0x80; }), ParseResult::bad_flags);
  EXPECT_EQ(mutate([](RelHeader& h) { h.reserved = 1; }), ParseResult::bad_flags);
  EXPECT_EQ(mutate([](RelHeader& h) { h.upper_header_len = 0xFFFF; }), ParseResult::bad_length);
  EXPECT_EQ(mutate([](RelHeader& h) { h.type = RelType::ack; }), ParseResult::bad_length);
  // split_crc: the payload's CRC follows the upper header (4 bytes), data packets only.
  EXPECT_EQ(mutate([](RelHeader& h) { h.flags = rel_flags::split_crc; }), ParseResult::bad_length);
  EXPECT_EQ(mutate([](RelHeader& h) {
              h.flags = rel_flags::split_crc;
              h.upper_header_len = 0;
            }),
            ParseResult::ok);
  EXPECT_EQ(mutate([](RelHeader& h) {
              h.flags = rel_flags::split_crc;
              h.type = RelType::ack;
              h.upper_header_len = 0;
              h.payload_len = 0;
            }),
            ParseResult::bad_flags);
  // unchecked (no payload CRC computed): only with split_crc, whose 4 bytes it leaves zero.
  EXPECT_EQ(mutate([](RelHeader& h) { h.flags = rel_flags::unchecked; }), ParseResult::bad_flags);
  EXPECT_EQ(mutate([](RelHeader& h) {
              h.flags = rel_flags::split_crc | rel_flags::unchecked;
              h.upper_header_len = 0;
            }),
            ParseResult::ok);
  RelHeader split = good;
  split.flags = rel_flags::split_crc;
  split.upper_header_len = 0;
  std::memcpy(bytes.data(), &split, sizeof split);
  EXPECT_EQ(parse_header(std::span(bytes).first(50), 10, out), ParseResult::bad_length);
}

// ---- delivery -------------------------------------------------------------------------

TEST(Reliable, PresentsAReliableOrderedDriver) {
  Pair pair({}, test_config());
  const auto& caps = pair.ch[0]->caps();
  EXPECT_TRUE(caps.reliable);
  EXPECT_TRUE(caps.ordered);
  EXPECT_EQ(caps.max_header, 256u - sizeof(RelHeader) - kPayloadCrcBytes);  // room for split_crc
  EXPECT_EQ(caps.max_packet, 1400u);
  EXPECT_EQ(pair.ch[0]->name(), "fault(wire)+rel");
  EXPECT_EQ(pair.ch[0]->next_timer_ns(), UINT64_MAX);
}

TEST(Reliable, ForwardsOneSidedGetAndWorksOverAnyDriver) {
  // Over the loopback-to-self driver (which can read memory): packets to ourselves go
  // through the reliability layer, get() goes straight to the driver.
  ReliableConfig c = test_config();
  ReliableChannel ch(
      std::make_unique<FaultDriver>(std::make_unique<sluice::drivers::LoopbackDriver>(0),
                                    FaultConfig{.seed = 1, .drop = 0.3}),
      c);
  EXPECT_TRUE(ch.caps().rdma_get);
  EXPECT_TRUE(ch.caps().rdma_put);
  const std::uint64_t secret = 0x1122334455667788ull;
  std::uint64_t copy = 0;
  const auto key =
      sluice::mem::Registration::host(std::as_bytes(std::span(&secret, 1))).remote_key();
  EXPECT_EQ(ch.post_get(0, std::as_writable_bytes(std::span(&copy, 1)), {}, key, 0, {}),
            IoStatus::done);
  EXPECT_EQ(copy, secret);
  // Past the remote key's length: refused, nothing read.
  copy = 0;
  EXPECT_EQ(ch.post_get(0, std::as_writable_bytes(std::span(&copy, 1)), {}, key, 4, {}),
            IoStatus::failed);
  EXPECT_EQ(copy, 0u);
  const std::byte hdr[8] = {};
  CountingSink sink;
  int sent = 0;
  const auto start = std::chrono::steady_clock::now();
  while (sink.count < 200 && std::chrono::steady_clock::now() - start < kWallLimit) {
    if (sent < 200 && ch.send(0, hdr, {}) == IoStatus::done) ++sent;
    ch.poll(sink, 8);
  }
  EXPECT_EQ(sink.count, 200);

  LoopbackWire wire(1);  // the wire cannot read memory, so neither can the channel
  ReliableChannel no_get(wire.endpoint(0), c);
  EXPECT_FALSE(no_get.caps().rdma_get);
  EXPECT_EQ(no_get.post_get(0, std::as_writable_bytes(std::span(&copy, 1)), {}, key, 0, {}),
            IoStatus::failed);
}

TEST(Reliable, RejectsBadConfiguration) {
  LoopbackWire wire(1);
  ReliableConfig c;
  c.window = 0;
  EXPECT_THROW(ReliableChannel(wire.endpoint(0), c), std::invalid_argument);
  c.window = kMaxWindow + 1;
  EXPECT_THROW(ReliableChannel(wire.endpoint(0), c), std::invalid_argument);
  LoopbackWireOptions tiny;
  tiny.max_header = 48;
  LoopbackWire small(1, tiny);
  EXPECT_THROW(ReliableChannel(small.endpoint(0), ReliableConfig{}), std::invalid_argument);
}

TEST(Reliable, CleanWireDeliversEverythingWithoutRetransmission) {
  Pair pair({}, test_config());
  const RunResult r = exchange(pair, 3000);
  ASSERT_TRUE(r.finished) << sluice::test::stats_text(*pair.ch[0]);
  for (int i = 0; i < 2; ++i) {
    const ReliableStats& s = pair.ch[i]->stats();
    EXPECT_EQ(s.data_sent, 3000u);
    EXPECT_EQ(s.delivered, 3000u);
    EXPECT_EQ(s.retransmit_timeout, 0u);
    EXPECT_EQ(s.retransmit_fast, 0u);
    EXPECT_EQ(s.duplicates + s.corrupt + s.bad_key + s.malformed, 0u);
    EXPECT_GT(s.acks_piggybacked, 0u);  // traffic both ways carries the acks
    EXPECT_GT(s.rtt_samples, 0u);
    EXPECT_GT(pair.ch[i]->srtt_ns(1 - i), 0u);
  }
}

struct FaultCase {
  const char* name;
  double drop, duplicate, reorder, corrupt;
};

class ReliableUnderFaults : public ::testing::TestWithParam<FaultCase> {};

TEST_P(ReliableUnderFaults, EveryMessageArrivesOnceInOrderIntact) {
  const FaultCase fc = GetParam();
  FaultConfig f;
  f.seed = 1234;
  f.drop = fc.drop;
  f.duplicate = fc.duplicate;
  f.reorder = fc.reorder;
  f.corrupt = fc.corrupt;
  Pair pair(f, test_config());
  const RunResult r = exchange(pair, 4000);
  ASSERT_TRUE(r.finished) << sluice::test::stats_text(*pair.ch[0]) << "\n"
                          << sluice::test::stats_text(*pair.ch[1]);
  for (int i = 0; i < 2; ++i) {
    const ReliableStats& s = pair.ch[i]->stats();
    const auto& fs = pair.fault[1 - i]->stats();  // faults on packets coming to rank i
    EXPECT_EQ(s.delivered, 4000u);
    if (fc.drop > 0) {
      EXPECT_GT(counter(*pair.fault[1 - i], "fault.dropped"), 0u);
    }
    if (fc.drop > 0 || fc.reorder > 0) {
      EXPECT_GT(counter(*pair.ch[1 - i], "rel.retransmits_fast"), 0u);
      EXPECT_GT(s.out_of_order, 0u);
    }
    if (fc.duplicate > 0) {
      EXPECT_GT(s.duplicates, 0u);
    }
    if (fc.corrupt > 0) {
      EXPECT_GT(fs.corrupted, 0u);
      EXPECT_GT(s.corrupt + s.malformed, 0u);  // a flipped length bit is caught earlier
    }
    EXPECT_EQ(s.bad_key, 0u);
    EXPECT_TRUE(pair.ch[i]->dead_peers().empty());
  }
  // The counters that prove each mechanism ran (visible with ctest -V).
  std::printf("  %s rounds=%llu\n  rank0 %s\n  rank1 %s\n", fc.name,
              static_cast<unsigned long long>(r.iterations),
              sluice::test::stats_text(*pair.ch[0]).c_str(),
              sluice::test::stats_text(*pair.ch[1]).c_str());
}

INSTANTIATE_TEST_SUITE_P(Faults, ReliableUnderFaults,
                         ::testing::Values(FaultCase{"none", 0, 0, 0, 0},
                                           FaultCase{"loss5", 0.05, 0, 0, 0},
                                           FaultCase{"loss5_mixed", 0.05, 0.02, 0.05, 0.02},
                                           FaultCase{"loss20_mixed", 0.20, 0.05, 0.10, 0.05},
                                           FaultCase{"reorder_only", 0, 0, 0.30, 0},
                                           FaultCase{"duplicate_only", 0, 0.5, 0, 0},
                                           FaultCase{"corrupt_only", 0, 0, 0, 0.2}),
                         [](const auto& info) { return std::string(info.param.name); });

// The same exchange on the real clock: timings vary with the machine's load, the outcome
// must not.
TEST(Reliable, LossyExchangeOnRealClock) {
  const FaultConfig f = faults(4242, 0.05, 0.05, 0.02, 0.02);
  Pair pair(f, test_config(), {}, /*real_clock=*/true);
  const RunResult r = exchange(pair, 2000);
  ASSERT_TRUE(r.finished) << sluice::test::stats_text(*pair.ch[0]) << "\n"
                          << sluice::test::stats_text(*pair.ch[1]);
  EXPECT_EQ(counter(*pair.ch[0], "rel.delivered"), 2000u);
  EXPECT_EQ(counter(*pair.ch[1], "rel.delivered"), 2000u);
  EXPECT_TRUE(pair.ch[0]->dead_peers().empty());
}

TEST(Reliable, BurstLossIsRepaired) {
  FaultConfig f;
  f.seed = 8;
  f.burst_enter = 0.01;  // a burst every ~100 packets,
  f.burst_exit = 0.1;    // ~10 packets long
  f.reorder = 0.02;
  Pair pair(f, test_config());
  const RunResult r = exchange(pair, 3000);
  ASSERT_TRUE(r.finished) << sluice::test::stats_text(*pair.ch[0]);
  EXPECT_GT(counter(*pair.fault[0], "fault.bursts"), 5u);
  EXPECT_EQ(counter(*pair.ch[1], "rel.delivered"), 3000u);
  std::printf("  rank0 %s\n", sluice::test::stats_text(*pair.ch[0]).c_str());
}

TEST(Reliable, SequenceNumbersWrapAround) {
  ReliableConfig c = test_config();
  c.initial_seq = 0xFFFFFF00u;  // wraps after 256 packets
  FaultConfig f;
  f.seed = 99;
  f.drop = 0.1;
  f.reorder = 0.1;
  Pair pair(f, c);
  const RunResult r = exchange(pair, 1500);
  ASSERT_TRUE(r.finished) << sluice::test::stats_text(*pair.ch[0]);
  EXPECT_EQ(counter(*pair.ch[1], "rel.delivered"), 1500u);
}

TEST(Reliable, LargeDatagramsAndSmallWindow) {
  ReliableConfig c = test_config();
  c.window = 8;
  LoopbackWireOptions w;
  w.max_packet = 60000;
  w.max_header = 128;
  FaultConfig f;
  f.seed = 5;
  f.drop = 0.05;
  f.reorder = 0.05;
  f.corrupt = 0.05;
  Pair pair(f, c, w);
  const RunResult r = exchange(pair, 400);
  ASSERT_TRUE(r.finished) << sluice::test::stats_text(*pair.ch[0]);
}

// Upper headers up to the wire's limit (204 B here): most packet headers exceed the 128 B a
// TxPacket holds inline and live on the heap, mixed with inline ones in the same ring, and
// are resent under loss, reordering and corruption.
TEST(Reliable, HeadersBeyondTheInlineSizeSurviveFaults) {
  FaultConfig f;
  f.seed = 77;
  f.drop = 0.05;
  f.duplicate = 0.02;
  f.reorder = 0.05;
  f.corrupt = 0.02;
  Pair pair(f, test_config());
  ASSERT_GT(pair.ch[0]->caps().max_header, 128u);
  const RunResult r = exchange(pair, 2000, 5'000, 16, {}, SIZE_MAX);
  ASSERT_TRUE(r.finished) << sluice::test::stats_text(*pair.ch[0]) << "\n"
                          << sluice::test::stats_text(*pair.ch[1]);
  EXPECT_GT(counter(*pair.ch[0], "rel.retransmits_fast") +
                counter(*pair.ch[0], "rel.retransmits_timeout"),
            0u);
}

TEST(Reliable, PollBudgetIsHonouredAndOrderKept) {
  FaultConfig f;
  f.seed = 3;
  f.reorder = 0.3;
  Pair pair(f, test_config());
  const RunResult r = exchange(pair, 1000, 5'000, /*poll_budget=*/1);
  ASSERT_TRUE(r.finished) << sluice::test::stats_text(*pair.ch[1]);
}

// Rank 1 answers every message from inside on_packet, as the protocol layer does (a CTS
// in reply to an RTS): sends re-enter the channel while it is delivering, and the acks
// ride on the echoes.
class EchoSink final : public PacketSink {
 public:
  explicit EchoSink(ReliableChannel& ch) : ch_(ch) {}
  void on_packet(int src, std::span<const std::byte> header,
                 std::span<const std::byte> payload) override {
    Message m{{header.begin(), header.end()}, {payload.begin(), payload.end()}};
    if (backlog.empty() && ch_.send(src, m.header, m.payload) == IoStatus::done) return;
    backlog.push_back(std::move(m));  // window full: send after this poll
  }
  void retry(int peer) {
    while (!backlog.empty() &&
           ch_.send(peer, backlog.front().header, backlog.front().payload) == IoStatus::done)
      backlog.erase(backlog.begin());
  }
  std::vector<Message> backlog;

 private:
  ReliableChannel& ch_;
};

class EchoChecker final : public PacketSink {
 public:
  EchoChecker(std::size_t max_header, std::size_t max_payload)
      : max_header_(max_header), max_payload_(max_payload) {}
  void on_packet(int src, std::span<const std::byte> header,
                 std::span<const std::byte> payload) override {
    ASSERT_EQ(src, 1);
    std::uint32_t index = 0;
    std::memcpy(&index, header.data(), 4);
    ASSERT_EQ(index, next);
    const Message want = make_message(0, index, max_header_, max_payload_);
    ASSERT_TRUE(std::equal(header.begin(), header.end(), want.header.begin(), want.header.end()));
    ASSERT_TRUE(
        std::equal(payload.begin(), payload.end(), want.payload.begin(), want.payload.end()));
    ++next;
  }
  std::uint32_t next = 0;

 private:
  std::size_t max_header_, max_payload_;
};

TEST(Reliable, EchoFromInsideTheSinkUnderFaults) {
  const FaultConfig f = faults(77, 0.1, 0.1, 0.05, 0.05);
  Pair pair(f, test_config());
  const std::size_t max_header = 64, max_payload = pair.ch[0]->caps().max_packet;
  EchoSink echo(*pair.ch[1]);
  EchoChecker checker(max_header, max_payload);
  constexpr std::uint32_t kCount = 2000;
  std::uint32_t sent = 0;
  const auto start = std::chrono::steady_clock::now();
  while (checker.next < kCount && std::chrono::steady_clock::now() - start < kWallLimit) {
    while (sent < kCount) {
      const Message m = make_message(0, sent, max_header, max_payload);
      if (pair.ch[0]->send(1, m.header, m.payload) != IoStatus::done) break;
      ++sent;
    }
    pair.ch[1]->poll(echo, 8);
    echo.retry(0);
    pair.ch[0]->poll(checker, 8);
    if (HasFatalFailure()) return;
    pair.clock += 5'000;
  }
  ASSERT_EQ(checker.next, kCount) << sluice::test::stats_text(*pair.ch[0]);
  EXPECT_GT(counter(*pair.ch[1], "rel.acks_piggybacked"), 0u);
  EXPECT_GT(counter(*pair.ch[0], "rel.window_full") + counter(*pair.ch[1], "rel.window_full"), 0u);
}

// send_tracked keeps no copy: retransmissions read the caller's memory, any packet the
// peer sends after delivering a lent one acknowledges it, and the acknowledgement is
// reported as the lent packet's local completion, exactly once. The test then scribbles
// over the payload: had the channel read it again (a resend after the completion), the
// receiver's checker would see the damage (or the CRC would drop it forever: no delivery).
class LentAnswerSink final : public PacketSink {
 public:
  LentAnswerSink(ReliableChannel& ch, const std::uint32_t& sent, std::vector<Message>& lent)
      : ch_(ch), sent_(sent), lent_(lent) {}
  void on_completion(sluice::drivers::CompletionToken token, sluice::Errc status) override {
    ASSERT_EQ(status, sluice::Errc::ok);
    ASSERT_EQ(token.protocol, sluice::drivers::ProtocolId::p2p);
    ASSERT_GE(token.id, 1u);
    const std::uint64_t index = token.id - 1;
    ASSERT_LT(index, sent_);
    if (completed.size() <= index) completed.resize(index + 1, 0);
    ASSERT_EQ(completed[index], 0) << "completed twice";
    completed[index] = 1;
    ++completions;
    for (auto& b : lent_[index].payload) b = ~b;  // the buffer is the caller's again
  }
  std::vector<char> completed;
  std::uint32_t completions = 0;
  void on_packet(int src, std::span<const std::byte> header, std::span<const std::byte>) override {
    ASSERT_EQ(src, 1);
    std::uint32_t index = 0;
    std::memcpy(&index, header.data(), 4);
    ASSERT_EQ(index, answered);
    // Messages 0..index were delivered before this answer was sent: none may be in flight.
    ASSERT_LE(ch_.in_flight(1), static_cast<std::size_t>(sent_ - index - 1));
    ++answered;
  }
  std::uint32_t answered = 0;

 private:
  ReliableChannel& ch_;
  const std::uint32_t& sent_;
  std::vector<Message>& lent_;
};

class AnsweringChecker final : public PacketSink {
 public:
  AnsweringChecker(ReliableChannel& ch, std::size_t max_header, std::size_t max_payload)
      : ch_(ch), check_(max_header, max_payload) {}
  void on_packet(int src, std::span<const std::byte> header,
                 std::span<const std::byte> payload) override {
    check_.on_packet(src, header, payload);
    std::byte answer[8] = {};
    std::memcpy(answer, header.data(), 4);
    backlog.emplace_back(answer, answer + 8);
    retry();
  }
  void retry() {
    while (!backlog.empty() && ch_.send(0, backlog.front(), {}) == IoStatus::done)
      backlog.erase(backlog.begin());
  }
  std::uint32_t delivered() const { return check_.next; }
  std::vector<std::vector<std::byte>> backlog;

 private:
  ReliableChannel& ch_;
  Checker check_;
};

TEST(Reliable, LentPayloadsAreResentFromTheCallersMemoryAndCompleteOnAck) {
  const FaultConfig f = faults(91, 0.2, 0.1, 0.05, 0.05);
  Pair pair(f, test_config());
  ASSERT_TRUE(pair.ch[0]->caps().lends_payload);
  const std::size_t max_header = 64, max_payload = pair.ch[0]->caps().max_packet;
  constexpr std::uint32_t kCount = 1500;
  std::vector<Message> lent;  // the callers' buffers: alive until answered
  lent.reserve(kCount);
  std::uint32_t sent = 0;
  AnsweringChecker receiver(*pair.ch[1], max_header, max_payload);
  LentAnswerSink answers(*pair.ch[0], sent, lent);
  const auto start = std::chrono::steady_clock::now();
  while (answers.answered < kCount && std::chrono::steady_clock::now() - start < kWallLimit) {
    while (sent < kCount) {
      if (lent.size() == sent) lent.push_back(make_message(0, sent, max_header, max_payload));
      const sluice::drivers::CompletionToken token{sent + 1u, sluice::drivers::ProtocolId::p2p};
      const IoStatus s =
          pair.ch[0]->send_tracked(1, lent[sent].header, lent[sent].payload, {}, token);
      if (s == IoStatus::again) break;
      ASSERT_EQ(s, IoStatus::posted);
      ++sent;
    }
    pair.ch[1]->poll(receiver, 8);
    receiver.retry();
    pair.ch[0]->poll(answers, 8);
    if (HasFatalFailure()) return;
    pair.clock += 5'000;
  }
  ASSERT_EQ(receiver.delivered(), kCount) << sluice::test::stats_text(*pair.ch[1]);
  ASSERT_EQ(answers.answered, kCount) << sluice::test::stats_text(*pair.ch[0]);
  // Every answer acknowledged its packet; the last acks may still be in flight.
  for (int i = 0; i < 200 && answers.completions < kCount; ++i) {
    pair.ch[1]->poll(receiver, 8);
    pair.ch[0]->poll(answers, 8);
    pair.clock += 100'000;
  }
  EXPECT_EQ(answers.completions, kCount) << sluice::test::stats_text(*pair.ch[0]);
  const ReliableStats& st = pair.ch[0]->stats();
  EXPECT_GT(st.retransmit_fast + st.retransmit_timeout + st.tail_probes, 0u);
  EXPECT_GT(counter(*pair.ch[1], "rel.corrupt"), 0u);
}

// A route that declares itself intact (Driver::intact: loopback) or not, forwarding the rest.
class IntactRoute final : public Driver {
 public:
  IntactRoute(std::unique_ptr<Driver> inner, bool intact)
      : inner_(std::move(inner)), intact_(intact) {}
  std::string_view name() const override { return "intact-route"; }
  const sluice::drivers::DriverCaps& caps() const override { return inner_->caps(); }
  bool reaches(int peer) const override { return inner_->reaches(peer); }
  bool intact(int) const override { return intact_; }
  IoStatus send(int peer, std::span<const std::byte> header,
                std::span<const std::byte> payload) override {
    return inner_->send(peer, header, payload);
  }
  int poll(PacketSink& sink, int budget) override { return inner_->poll(sink, budget); }

 private:
  std::unique_ptr<Driver> inner_;
  bool intact_;
};

// Rank 0 sends `count` lent messages to rank 1 over routes that are intact or not, as each
// side says; every one must arrive once, in order, with its bytes.
struct LentRun {
  std::uint64_t clock = 1'000'000;
  std::unique_ptr<ReliableChannel> ch[2];
};
// `trusts[r]`: rank r's trust_intact_routes (SLUICE_REL_TRUST_LOOPBACK).
void lend_over_routes(bool sender_intact, bool receiver_intact, const FaultConfig& f,
                      std::uint32_t count, LentRun& run,
                      std::array<bool, 2> trusts = {true, true}) {
  LoopbackWire wire(2);
  for (int r = 0; r < 2; ++r) {
    ReliableConfig c = test_config();
    c.clock = [&run] { return run.clock; };
    c.trust_intact_routes = trusts[static_cast<std::size_t>(r)];
    FaultConfig fc = f;
    fc.seed = f.seed * 2 + static_cast<std::uint64_t>(r);
    auto route = std::make_unique<IntactRoute>(std::make_unique<FaultDriver>(wire.endpoint(r), fc),
                                               r == 0 ? sender_intact : receiver_intact);
    run.ch[r] = std::make_unique<ReliableChannel>(std::move(route), c);
  }
  ReliableChannel& tx = *run.ch[0];
  ReliableChannel& rx = *run.ch[1];
  const std::size_t max_header = 64, max_payload = tx.caps().max_packet;
  std::vector<Message> lent;  // the callers' buffers: alive until acknowledged
  lent.reserve(count);
  Checker receiver(max_header, max_payload);
  CountingSink sender;
  std::uint32_t sent = 0;
  const auto start = std::chrono::steady_clock::now();
  while ((receiver.next < count || !tx.quiescent()) &&
         std::chrono::steady_clock::now() - start < kWallLimit) {
    while (sent < count) {
      if (lent.size() == sent) lent.push_back(make_message(0, sent, max_header, max_payload));
      const sluice::drivers::CompletionToken token{sent + 1u, sluice::drivers::ProtocolId::p2p};
      const IoStatus s = tx.send_tracked(1, lent[sent].header, lent[sent].payload, {}, token);
      if (s == IoStatus::again) break;
      ASSERT_EQ(s, IoStatus::posted);
      ++sent;
    }
    rx.poll(receiver, 8);
    tx.poll(sender, 8);
    if (::testing::Test::HasFatalFailure()) return;
    run.clock += 5'000;
  }
  ASSERT_EQ(receiver.next, count) << sluice::test::stats_text(rx);
  ASSERT_TRUE(tx.quiescent()) << sluice::test::stats_text(tx);
}

TEST(Reliable, IntactRoutesCarryLentPayloadsWithoutTheirCrc) {
  LentRun run;
  lend_over_routes(true, true, FaultConfig{}, 300, run);
  if (HasFatalFailure()) return;
  ReliableChannel* ch[2] = {run.ch[0].get(), run.ch[1].get()};
  EXPECT_GT(counter(*ch[0], "rel.payload_unchecked"), 0u);
  EXPECT_EQ(counter(*ch[1], "rel.unchecked_refused"), 0u);
  EXPECT_EQ(counter(*ch[1], "rel.corrupt"), 0u);
}

TEST(Reliable, RoutesThatMayDamagePacketsKeepThePayloadCrc) {
  // Neither side intact, with corruption: every lent payload carries its CRC and the
  // damaged ones are caught.
  LentRun run;
  lend_over_routes(false, false, faults(17, 0.02, 0.0, 0.0, 0.1), 300, run);
  if (HasFatalFailure()) return;
  ReliableChannel* ch[2] = {run.ch[0].get(), run.ch[1].get()};
  EXPECT_EQ(counter(*ch[0], "rel.payload_unchecked"), 0u);
  EXPECT_GT(counter(*ch[1], "rel.corrupt"), 0u);
}

TEST(Reliable, UncheckedPayloadsToAReceiverThatDoesNotTrustItsRouteAreResentWithTheirCrc) {
  LentRun run;
  lend_over_routes(true, false, FaultConfig{}, 200, run);
  if (HasFatalFailure()) return;
  ReliableChannel* ch[2] = {run.ch[0].get(), run.ch[1].get()};
  EXPECT_GT(counter(*ch[0], "rel.payload_unchecked"), 0u);
  EXPECT_GT(counter(*ch[1], "rel.unchecked_refused"), 0u);
  const ReliableStats& st = ch[0]->stats();
  EXPECT_GT(st.retransmit_fast + st.retransmit_timeout + st.tail_probes, 0u);
}

TEST(Reliable, ASenderThatDistrustsIntactRoutesKeepsThePayloadCrc) {
  LentRun run;
  lend_over_routes(true, true, FaultConfig{}, 200, run, {false, true});
  if (HasFatalFailure()) return;
  EXPECT_EQ(counter(*run.ch[0], "rel.payload_unchecked"), 0u);
  EXPECT_EQ(counter(*run.ch[1], "rel.unchecked_refused"), 0u);
}

TEST(Reliable, AReceiverThatDistrustsIntactRoutesRefusesUncheckedPayloadsAndGetsThemResent) {
  LentRun run;
  lend_over_routes(true, true, FaultConfig{}, 200, run, {true, false});
  if (HasFatalFailure()) return;
  EXPECT_GT(counter(*run.ch[0], "rel.payload_unchecked"), 0u);
  EXPECT_GT(counter(*run.ch[1], "rel.unchecked_refused"), 0u);
}

TEST(Reliable, ThreeRanksAllToAllUnderFaults) {
  constexpr int kRanks = 3;
  constexpr std::uint32_t kCount = 800;  // per ordered pair
  std::uint64_t clock = 0;
  LoopbackWire wire(kRanks);
  std::unique_ptr<ReliableChannel> ch[kRanks];
  for (int r = 0; r < kRanks; ++r) {
    const FaultConfig f = faults(500 + static_cast<std::uint64_t>(r), 0.1, 0.1, 0.02, 0.02);
    ReliableConfig c = test_config();
    c.window = 16;
    c.clock = [&clock] { return clock; };
    ch[r] =
        std::make_unique<ReliableChannel>(std::make_unique<FaultDriver>(wire.endpoint(r), f), c);
  }
  // Per-source in-order check at each receiver.
  struct PerSource final : PacketSink {
    std::uint32_t next[kRanks] = {};
    int me = 0;
    void on_packet(int src, std::span<const std::byte> header,
                   std::span<const std::byte> payload) override {
      std::uint32_t index = 0, from = 0, to = 0;
      ASSERT_EQ(header.size(), 12u);
      std::memcpy(&index, header.data(), 4);
      std::memcpy(&from, header.data() + 4, 4);
      std::memcpy(&to, header.data() + 8, 4);
      ASSERT_EQ(static_cast<int>(from), src);
      ASSERT_EQ(static_cast<int>(to), me);
      ASSERT_EQ(index, next[src]);
      ASSERT_EQ(payload.size(), index % 300);
      for (std::size_t i = 0; i < payload.size(); ++i)
        ASSERT_EQ(payload[i], static_cast<std::byte>(index + i + from * 7));
      ++next[src];
    }
  } sink[kRanks];
  std::uint32_t sent[kRanks][kRanks] = {};
  auto all_done = [&] {
    for (int r = 0; r < kRanks; ++r)
      for (int s = 0; s < kRanks; ++s)
        if (r != s && sink[r].next[s] < kCount) return false;
    return true;
  };
  for (int r = 0; r < kRanks; ++r) sink[r].me = r;
  const auto start = std::chrono::steady_clock::now();
  while (!all_done() && std::chrono::steady_clock::now() - start < kWallLimit) {
    for (int r = 0; r < kRanks; ++r) {
      for (int d = 0; d < kRanks; ++d) {
        if (d == r) continue;
        while (sent[r][d] < kCount) {
          const std::uint32_t i = sent[r][d];
          std::uint32_t hdr[3] = {i, static_cast<std::uint32_t>(r), static_cast<std::uint32_t>(d)};
          std::vector<std::byte> payload(i % 300);
          for (std::size_t k = 0; k < payload.size(); ++k)
            payload[k] = static_cast<std::byte>(i + k + static_cast<std::uint32_t>(r) * 7);
          if (ch[r]->send(d, std::as_bytes(std::span(hdr)), payload) != IoStatus::done) break;
          ++sent[r][d];
        }
      }
      ch[r]->poll(sink[r], 32);
      if (HasFatalFailure()) return;
    }
    clock += 5'000;
  }
  ASSERT_TRUE(all_done());
  for (int r = 0; r < kRanks; ++r) EXPECT_TRUE(ch[r]->dead_peers().empty());
}

// ---- multi-rail ----------------------------------------------------------------------

TEST(ReliableRails, StripesOverBothRailsAndFailsOverWhenOneGoesDark) {
  FaultConfig f;
  f.seed = 31;
  f.drop = 0.02;
  f.reorder = 0.02;
  ReliableConfig c = test_config();
  c.rail_retry_ns = 20'000'000;  // 20 ms of fake time
  DualRailPair pair(f, c);
  EXPECT_EQ(pair.ch[0]->name(), "fault(wire)*2+rel");
  EXPECT_EQ(pair.ch[0]->rails(), 2u);

  std::uint64_t before_cut[2] = {}, at_cut_clock = 0;
  bool cut = false, healed = false;
  const RunResult r = exchange(pair, 4000, 5'000, 16, [&](std::uint32_t delivered) {
    if (!cut && delivered >= 1000) {  // rail 0 goes dark both ways, mid-run
      cut = true;
      at_cut_clock = pair.clock;
      before_cut[0] = pair.ch[0]->stats().rail_packets[0];
      before_cut[1] = pair.ch[0]->stats().rail_packets[1];
      pair.fault[0][0]->set_blackhole(true);
      pair.fault[1][0]->set_blackhole(true);
    }
    if (cut && !healed && delivered >= 3000) {  // and comes back
      healed = true;
      pair.fault[0][0]->set_blackhole(false);
      pair.fault[1][0]->set_blackhole(false);
    }
  });
  ASSERT_TRUE(r.finished) << sluice::test::stats_text(*pair.ch[0]) << "\n"
                          << sluice::test::stats_text(*pair.ch[1]);
  ASSERT_TRUE(cut && healed);
  std::printf("  rank0 %s\n  rank1 %s\n", sluice::test::stats_text(*pair.ch[0]).c_str(),
              sluice::test::stats_text(*pair.ch[1]).c_str());
  for (int i = 0; i < 2; ++i) {
    const ReliableStats& s = pair.ch[i]->stats();
    EXPECT_EQ(s.delivered, 4000u);
    EXPECT_GE(s.rail_failovers, 1u);  // each side noticed rail 0 died
    EXPECT_TRUE(pair.ch[i]->dead_peers().empty());
  }
  // Both rails carried a fair share before the cut.
  EXPECT_GT(before_cut[0], before_cut[1] / 3);
  EXPECT_GT(before_cut[1], before_cut[0] / 3);
  (void)at_cut_clock;
}

TEST(ReliableRails, RailComesBackAfterRetryInterval) {
  ReliableConfig c = test_config();
  c.rail_retry_ns = 2'000'000;
  DualRailPair pair({}, c);
  pair.fault[0][1]->set_blackhole(true);
  pair.fault[1][1]->set_blackhole(true);
  ASSERT_TRUE(exchange(pair, 500).finished);
  EXPECT_FALSE(pair.ch[0]->rail_up(1, 1));
  EXPECT_TRUE(pair.ch[0]->rail_up(1, 0));
  pair.fault[0][1]->set_blackhole(false);
  pair.fault[1][1]->set_blackhole(false);
  pair.clock += 3'000'000;
  ASSERT_TRUE(exchange(pair, 500).finished);  // messages restart at 0: a second checker
  EXPECT_TRUE(pair.ch[0]->rail_up(1, 1));
  EXPECT_GE(counter(*pair.ch[0], "rel.rail_recoveries"), 1u);
}

// ---- window, fast retransmit ----------------------------------------------------------

TEST(Reliable, WindowBoundsPacketsInFlight) {
  ReliableConfig c = test_config();
  c.window = 16;
  Pair pair({}, c);
  const std::byte hdr[8] = {};
  int accepted = 0;
  for (int i = 0; i < 100; ++i) {
    const IoStatus s = pair.ch[0]->send(1, hdr, {});
    if (s == IoStatus::again) break;
    ASSERT_EQ(s, IoStatus::done);
    ++accepted;
  }
  EXPECT_EQ(accepted, 16);
  EXPECT_EQ(pair.ch[0]->in_flight(1), 16u);
  EXPECT_EQ(pair.ch[0]->send(1, hdr, {}), IoStatus::again);
  EXPECT_GE(counter(*pair.ch[0], "rel.window_full"), 2u);
  // Once the peer acknowledges, room opens again.
  CountingSink sink;
  for (int i = 0; i < 50 && pair.ch[0]->in_flight(1) > 0; ++i) {
    pair.ch[1]->poll(sink, 64);
    pair.ch[0]->poll(sink, 64);
    pair.clock += 20'000;
  }
  EXPECT_EQ(sink.count, 16);
  EXPECT_EQ(pair.ch[0]->in_flight(1), 0u);
  EXPECT_EQ(pair.ch[0]->send(1, hdr, {}), IoStatus::done);
}

// A receiver that lags behind (its caller's poll budget spent while poll drains the socket
// before a timer) buffers in-order packets it has not delivered. Its cumulative ack may
// cover them, but only so far that the sender's next window still fits in the receive
// ring: before, the ack covered all of them, the sender ran past the ring and the
// receiver dropped its own arrivals as beyond_window (with windows above 128, runs longer
// than the selective acks cover, repaired one timeout at a time: a stall).
TEST(Reliable, LaggingReceiverAcksNoFurtherThanItsRingHolds) {
  constexpr std::uint32_t kCount = 1000;
  std::uint64_t clock = 1'000'000;
  LoopbackWire wire(3);
  std::unique_ptr<ReliableChannel> ch[3];
  for (int r = 0; r < 3; ++r) {
    ReliableConfig c = test_config();
    c.window = 128;
    c.max_rto_ns = 2'000'000;
    c.clock = [&clock] { return clock; };
    ch[r] = std::make_unique<ReliableChannel>(
        std::make_unique<FaultDriver>(wire.endpoint(r), FaultConfig{}), c);
  }
  // Rank 1 keeps a packet to rank 2 unacknowledged (the link is down), so each of its
  // polls after a clock jump finds a resend due and drains its socket into the ring.
  wire.set_link(1, 2, false);
  const std::byte hdr[4] = {};
  ASSERT_EQ(ch[1]->send(2, hdr, {}), IoStatus::done);

  Checker checker(64, 200);
  CountingSink acks;
  std::uint32_t sent = 0;
  for (int round = 0; round < 200 && checker.next < kCount; ++round) {
    while (sent < kCount) {
      const Message m = make_message(0, sent, 64, 200);
      const IoStatus s = ch[0]->send(1, m.header, m.payload);
      ASSERT_NE(s, IoStatus::failed);
      if (s != IoStatus::done) break;
      ++sent;
    }
    clock += 10'000'000;
    // The first rounds rank 1 delivers nothing (budget 0), then catches up.
    ch[1]->poll(checker, round < 6 ? 0 : 64);
    if (HasFatalFailure()) return;
    ch[0]->poll(acks, 64);
    EXPECT_EQ(counter(*ch[1], "rel.beyond_window"), 0u) << "round " << round;
    if (HasFailure()) return;
  }
  EXPECT_EQ(checker.next, kCount) << sluice::test::stats_text(*ch[1]);
  EXPECT_EQ(counter(*ch[1], "rel.beyond_window"), 0u);
  EXPECT_TRUE(ch[0]->dead_peers().empty());
}

TEST(Reliable, WindowBoundsBytesInFlight) {
  ReliableConfig c = test_config();
  c.window = 128;
  c.window_bytes = 10'000;
  Pair pair({}, c);
  const std::byte hdr[8] = {};
  std::vector<std::byte> payload(1000);
  int accepted = 0;
  while (pair.ch[0]->send(1, hdr, payload) == IoStatus::done) ++accepted;
  // Each packet costs 48 + 8 + 1000 bytes of retained copy: nine fit in 10 000.
  EXPECT_EQ(accepted, 9);
}

TEST(Reliable, OneLostPacketIsRepairedByFastRetransmit) {
  Pair pair({}, test_config());
  const std::byte hdr[8] = {};
  for (int i = 0; i < 10; ++i) {
    pair.fault[0]->set_blackhole(i == 3);  // lose exactly packet 3
    ASSERT_EQ(pair.ch[0]->send(1, hdr, {}), IoStatus::done);
  }
  pair.fault[0]->set_blackhole(false);
  CountingSink sink;
  for (int i = 0; i < 100 && !(pair.ch[0]->quiescent() && pair.ch[1]->quiescent()); ++i) {
    pair.ch[1]->poll(sink, 64);
    pair.ch[0]->poll(sink, 64);
    pair.clock += 2'000;  // 200 us in all: well under the RTO
  }
  EXPECT_EQ(sink.count, 10);
  EXPECT_EQ(counter(*pair.ch[0], "rel.retransmits_fast"), 1u);
  EXPECT_EQ(counter(*pair.ch[0], "rel.retransmits_timeout"), 0u);
  EXPECT_EQ(counter(*pair.ch[1], "rel.nacks"), 1u);  // the receiver re-requested the gap once
  EXPECT_EQ(counter(*pair.ch[1], "rel.out_of_order"), 6u);
}

TEST(Reliable, LostTailIsRepairedByATailProbeBeforeTheTimeout) {
  Pair pair({}, test_config());
  ASSERT_TRUE(exchange(pair, 50).finished);  // RTT samples exist now
  const std::uint64_t rto = pair.ch[0]->rto_ns(1);
  const std::byte hdr[8] = {};
  for (int i = 0; i < 5; ++i) {
    pair.fault[0]->set_blackhole(i >= 3);  // the last two of a burst vanish
    ASSERT_EQ(pair.ch[0]->send(1, hdr, {}), IoStatus::done);
  }
  pair.fault[0]->set_blackhole(false);
  const std::uint64_t t0 = pair.clock;
  CountingSink sink;
  while (sink.count < 5 && pair.clock - t0 < 10 * rto) {
    pair.clock += 2'000;
    pair.ch[1]->poll(sink, 16);
    pair.ch[0]->poll(sink, 16);
  }
  EXPECT_EQ(sink.count, 5);
  EXPECT_LT(pair.clock - t0, rto);  // repaired before the RTO would have fired
  EXPECT_EQ(counter(*pair.ch[0], "rel.tail_probes"), 1u);
  EXPECT_EQ(counter(*pair.ch[0], "rel.retransmits_fast"), 1u);  // packet 3, exposed by the probe
  EXPECT_EQ(counter(*pair.ch[0], "rel.retransmits_timeout"), 0u);
}

TEST(Reliable, LostTailIsRepairedByTimeoutWithBackoff) {
  Pair pair({}, test_config());
  const std::byte hdr[8] = {};
  pair.fault[0]->set_blackhole(true);
  ASSERT_EQ(pair.ch[0]->send(1, hdr, {}), IoStatus::done);  // lost, nothing follows it
  const std::uint64_t rto = pair.ch[0]->next_timer_ns();
  EXPECT_GT(rto, 0u);
  EXPECT_LE(rto, 1'000'000u);  // the initial RTO
  CountingSink sink;
  // Three timeouts while still blackholed: each waits twice as long as the one before.
  std::uint64_t last = 0, gaps[3] = {};
  for (int k = 0; k < 3; ++k) {
    const std::uint64_t before = pair.ch[0]->stats().retransmit_timeout;
    const std::uint64_t t0 = pair.clock;
    while (pair.ch[0]->stats().retransmit_timeout == before) {
      pair.clock += 10'000;
      pair.ch[0]->poll(sink, 8);
    }
    gaps[k] = pair.clock - t0;
    (void)last;
  }
  EXPECT_GT(gaps[1], gaps[0] * 3 / 2);
  EXPECT_GT(gaps[2], gaps[1] * 3 / 2);
  pair.fault[0]->set_blackhole(false);
  for (int i = 0; i < 2000 && sink.count == 0; ++i) {
    pair.clock += 10'000;
    pair.ch[0]->poll(sink, 8);
    pair.ch[1]->poll(sink, 8);
  }
  EXPECT_EQ(sink.count, 1);
}

TEST(Reliable, SpuriousTimeoutAfterAStallIsDetectedAndDoesNotResendTheWindow) {
  ReliableConfig cfg = test_config();
  cfg.ack_every = 1;  // the receiver acks each arrival at once: partial acks during recovery
  Pair pair({}, cfg);
  const std::byte hdr[8] = {};
  for (int i = 0; i < 8; ++i) ASSERT_EQ(pair.ch[0]->send(1, hdr, {}), IoStatus::done);
  // The receiver is descheduled: nothing arrives at it, nothing is lost. The sender's
  // timeout fires and resends the oldest packet.
  CountingSink sink;
  while (pair.ch[0]->stats().retransmit_timeout == 0) {
    pair.clock += 10'000;
    pair.ch[0]->poll(sink, 64);
  }
  // The receiver wakes up and reads two packets (the originals 0 and 1) and acks them.
  pair.ch[1]->poll(sink, 2);
  pair.ch[0]->poll(sink, 64);
  // The ack of packet 0 may be for the original: packets 2..7, sent before the resend,
  // are not presumed lost (they are on their way).
  EXPECT_EQ(counter(*pair.ch[0], "rel.retransmits_fast"), 0u);
  for (int i = 0; i < 100 && !(pair.ch[0]->quiescent() && pair.ch[1]->quiescent()); ++i) {
    pair.clock += 2'000;
    pair.ch[1]->poll(sink, 64);
    pair.ch[0]->poll(sink, 64);
  }
  EXPECT_EQ(sink.count, 8);
  EXPECT_EQ(counter(*pair.ch[0], "rel.retransmits_timeout"), 1u);
  EXPECT_EQ(counter(*pair.ch[0], "rel.retransmits_fast"), 0u);
  EXPECT_EQ(counter(*pair.ch[1], "rel.duplicates"), 1u);  // the resent packet 0
  EXPECT_EQ(counter(*pair.ch[0], "rel.spurious"), 1u);    // reported back (D-SACK) and counted
}

TEST(Reliable, AcksWaitingInTheDriverAreReadBeforeTheTimeoutFires) {
  Pair pair({}, test_config());
  const std::byte hdr[8] = {};
  for (int i = 0; i < 8; ++i) ASSERT_EQ(pair.ch[0]->send(1, hdr, {}), IoStatus::done);
  CountingSink sink;
  pair.ch[1]->poll(sink, 64);  // receives all 8 and acks them (ack_every)
  pair.clock += 2 * pair.ch[0]->rto_ns(1);
  // The sender comes back long after its RTO with no budget for deliveries: the acks in
  // its driver still count before the timer is judged.
  pair.ch[0]->poll(sink, 0);
  EXPECT_EQ(counter(*pair.ch[0], "rel.retransmits_timeout"), 0u);
  EXPECT_EQ(pair.ch[0]->in_flight(1), 0u);
  EXPECT_GT(counter(*pair.ch[0], "rel.drained"), 0u);
  EXPECT_EQ(sink.count, 8);
}

// ---- peer death, keepalive ------------------------------------------------------------

TEST(Reliable, SilentPeerIsDeclaredDeadWithinTheTimeout) {
  ReliableConfig c = test_config();
  c.peer_timeout_ns = 50'000'000;  // 50 ms of fake time
  Pair pair({}, c);
  ASSERT_TRUE(exchange(pair, 50).finished);

  // From now on rank 1 hears nothing and says nothing: it has gone silent.
  pair.fault[0]->set_blackhole(true);
  pair.fault[1]->set_blackhole(true);
  const std::uint64_t silent_at = pair.clock;
  const std::byte hdr[8] = {};
  ASSERT_EQ(pair.ch[0]->send(1, hdr, {}), IoStatus::done);
  CountingSink sink;
  const auto start = std::chrono::steady_clock::now();
  while (pair.ch[0]->dead_peers().empty() &&
         std::chrono::steady_clock::now() - start < kWallLimit) {
    pair.clock += 100'000;
    pair.ch[0]->poll(sink, 8);
    pair.ch[1]->poll(sink, 8);
  }
  ASSERT_EQ(pair.ch[0]->dead_peers(), std::vector<int>{1});
  EXPECT_EQ(pair.died[0], std::vector<int>{1});  // callback ran exactly once
  EXPECT_TRUE(pair.ch[0]->peer_dead(1));
  EXPECT_GE(pair.clock - silent_at, c.peer_timeout_ns);
  EXPECT_LE(pair.clock - silent_at, c.peer_timeout_ns + 200'000);
  EXPECT_GT(counter(*pair.ch[0], "rel.retransmits_timeout"), 0u);
  EXPECT_EQ(pair.ch[0]->send(1, hdr, {}), IoStatus::failed);
  EXPECT_EQ(pair.ch[0]->in_flight(1), 0u);
  EXPECT_EQ(counter(*pair.ch[0], "rel.peers_dead"), 1u);
  // Nothing from a dead peer is delivered, even if it talks again.
  pair.fault[1]->set_blackhole(false);
  pair.fault[0]->set_blackhole(false);
  ASSERT_EQ(pair.ch[1]->send(0, hdr, {}), IoStatus::done);
  const int before = sink.count;
  for (int i = 0; i < 10; ++i) pair.ch[0]->poll(sink, 8);
  EXPECT_EQ(sink.count, before);
  EXPECT_GT(counter(*pair.ch[0], "rel.from_dead"), 0u);
}

TEST(Reliable, PeerThatStopsPollingIsDeclaredDeadOnRealClock) {
  ReliableConfig c = test_config();
  c.peer_timeout_ns = 300'000'000;  // 300 ms
  c.min_rto_ns = 1'000'000;
  Pair pair({}, c, {}, /*real_clock=*/true);
  const std::byte hdr[8] = {};
  ASSERT_EQ(pair.ch[0]->send(1, hdr, {}), IoStatus::done);
  CountingSink sink;
  // Rank 1 never polls: it is "killed".
  const auto start = std::chrono::steady_clock::now();
  while (pair.ch[0]->dead_peers().empty() &&
         std::chrono::steady_clock::now() - start < kWallLimit) {
    pair.ch[0]->poll(sink, 8);
    if (!pair.ch[0]->dead_peers().empty()) break;
    const std::uint64_t wait = pair.ch[0]->next_timer_ns();
    ASSERT_NE(wait, UINT64_MAX);  // something is armed while a packet is unacknowledged
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<std::uint64_t>(wait, 5'000'000)));
  }
  EXPECT_EQ(pair.ch[0]->dead_peers(), std::vector<int>{1});
  EXPECT_EQ(pair.ch[0]->send(1, hdr, {}), IoStatus::failed);
}

TEST(Reliable, KeepaliveDetectsADeadIdlePeerAndSparesALiveOne) {
  ReliableConfig c = test_config();
  c.peer_timeout_ns = 20'000'000;
  c.keepalive_ns = 2'000'000;
  Pair pair({}, c);
  ASSERT_TRUE(exchange(pair, 20).finished);
  CountingSink sink;
  // Both idle but polling: probes keep each side assured for ten timeouts.
  for (int i = 0; i < 2000; ++i) {
    pair.clock += 100'000;
    pair.ch[0]->poll(sink, 8);
    pair.ch[1]->poll(sink, 8);
  }
  EXPECT_TRUE(pair.ch[0]->dead_peers().empty());
  EXPECT_TRUE(pair.ch[1]->dead_peers().empty());
  EXPECT_GT(counter(*pair.ch[0], "rel.probes") + counter(*pair.ch[1], "rel.probes"), 0u);
  // Rank 1 stops polling with nothing in flight: rank 0 still finds out.
  for (int i = 0; i < 1000 && pair.ch[0]->dead_peers().empty(); ++i) {
    pair.clock += 100'000;
    pair.ch[0]->poll(sink, 8);
  }
  EXPECT_EQ(pair.ch[0]->dead_peers(), std::vector<int>{1});
}

// ---- job key, malformed input ---------------------------------------------------------

TEST(Reliable, WrongJobKeyIsDroppedAndCounted) {
  LoopbackWire wire(2);
  std::uint64_t clock = 0;
  ReliableConfig a = test_config(), b = test_config();
  a.clock = b.clock = [&] { return clock; };
  b.job_key = a.job_key ^ 1;  // a stranger
  ReliableChannel ours(wire.endpoint(0), a), stranger(wire.endpoint(1), b);
  const std::byte hdr[8] = {};
  for (int i = 0; i < 5; ++i) ASSERT_EQ(stranger.send(0, hdr, {}), IoStatus::done);
  CountingSink sink;
  for (int i = 0; i < 20; ++i) {
    ours.poll(sink, 8);
    stranger.poll(sink, 8);
    clock += 100'000;
  }
  EXPECT_EQ(sink.count, 0);
  EXPECT_GE(ours.stats().bad_key, 5u);  // and their retransmissions
  EXPECT_EQ(ours.stats().delivered, 0u);
}

std::vector<std::byte> craft(const ReliableConfig& c, RelType type, std::uint32_t seq,
                             std::span<const std::byte> upper, std::span<const std::byte> payload,
                             std::uint32_t ack = 0) {
  RelHeader h;
  h.type = type;
  h.job_key = c.job_key;
  h.seq = seq;
  h.ack = ack;
  h.upper_header_len = static_cast<std::uint16_t>(upper.size());
  h.payload_len = static_cast<std::uint32_t>(payload.size());
  h.crc = packet_crc(h, upper, payload);
  std::vector<std::byte> bytes(sizeof h + upper.size());
  std::memcpy(bytes.data(), &h, sizeof h);
  if (!upper.empty()) std::memcpy(bytes.data() + sizeof h, upper.data(), upper.size());
  return bytes;
}

TEST(Reliable, MalformedAndTruncatedPacketsAreRejected) {
  LoopbackWire wire(2);
  std::uint64_t clock = 0;
  ReliableConfig c = test_config();
  c.clock = [&] { return clock; };
  ReliableChannel ch(wire.endpoint(0), c);
  CountingSink sink;
  const std::byte upper[4] = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  const std::byte payload[6] = {};
  const auto good = craft(c, RelType::data, 0, upper, payload);

  // Truncations of a valid packet, at every length.
  for (std::size_t n = 0; n < good.size(); ++n)
    wire.inject(0, 1, std::span(good).first(n), payload);
  // Payload shorter or longer than announced.
  wire.inject(0, 1, good, std::span(payload).first(5));
  const std::byte longer[7] = {};
  wire.inject(0, 1, good, longer);
  // Each header byte damaged in turn: bad magic/version/type/flags/lengths, else bad CRC.
  for (std::size_t i = 0; i < good.size(); ++i) {
    auto bad = good;
    bad[i] ^= std::byte{0x40};
    wire.inject(0, 1, bad, payload);
  }
  // Random garbage of every size up to 200 bytes.
  std::uint64_t s = 17;
  for (int i = 0; i < 5000; ++i) {
    std::vector<std::byte> junk(splitmix(s) % 200);
    for (auto& b : junk) b = static_cast<std::byte>(splitmix(s));
    std::vector<std::byte> junk_payload(splitmix(s) % 32);
    wire.inject(0, 1, junk, junk_payload);
  }
  while (wire.queued(0) > 0) ch.poll(sink, 64);
  EXPECT_EQ(sink.count, 0);
  const ReliableStats& st = ch.stats();
  EXPECT_GT(st.malformed, 0u);
  EXPECT_GT(st.corrupt, 0u);
  EXPECT_EQ(st.malformed + st.corrupt + st.bad_key, good.size() + 2 + good.size() + 5000);

  // The intact packet is accepted and delivered once, even when sent twice.
  wire.inject(0, 1, good, payload);
  wire.inject(0, 1, good, payload);
  while (wire.queued(0) > 0) ch.poll(sink, 64);
  EXPECT_EQ(sink.count, 1);
  EXPECT_EQ(counter(ch, "rel.duplicates"), 1u);
  // An ack acknowledging data never sent is ignored, not trusted.
  wire.inject(0, 1, craft(c, RelType::ack, 0, {}, {}, 12345), {});
  // A data packet far beyond the receive window is dropped.
  wire.inject(0, 1, craft(c, RelType::data, 100000, upper, payload), payload);
  while (wire.queued(0) > 0) ch.poll(sink, 64);
  EXPECT_EQ(sink.count, 1);
  EXPECT_EQ(counter(ch, "rel.beyond_window"), 1u);
}

// ---- the fault injector itself --------------------------------------------------------

TEST(FaultDriver, SameSeedSameFaults) {
  auto run = [](std::uint64_t seed) {
    LoopbackWire wire(2, {.max_header = 64, .max_packet = 64, .inbox_limit = 100000});
    FaultConfig f{.seed = seed, .drop = 0.2, .duplicate = 0.1, .reorder = 0.1, .corrupt = 0.1};
    FaultDriver fd(wire.endpoint(0), f);
    auto rx = wire.endpoint(1);
    const std::byte h[16] = {};
    for (int i = 0; i < 2000; ++i) fd.send(1, h, {});
    for (int i = 0; i < 20; ++i) {
      CountingSink sink;
      fd.poll(sink, 0);
    }
    CountingSink sink;
    while (rx->poll(sink, 100) > 0) {
    }
    const auto& s = fd.stats();
    return std::vector<std::uint64_t>{s.passed,     s.dropped,
                                      s.duplicated, s.reordered,
                                      s.corrupted,  static_cast<std::uint64_t>(sink.count)};
  };
  const auto a = run(11), b = run(11), c = run(12);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NEAR(static_cast<double>(a[1]) / 2000.0, 0.2, 0.05);
  EXPECT_EQ(a[0] + a[2], a[5]);  // everything passed or duplicated reached the wire
}

}  // namespace
