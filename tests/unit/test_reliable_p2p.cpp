// The point-to-point protocols (proto/p2p, unchanged) over ReliableChannel over the fault
// injector over the in-memory wire: eager, synchronous and pipelined-rendezvous messages
// of random sizes (0 B .. 4 MiB) under 20 % loss plus duplication, reordering and
// corruption arrive exactly once, in order, intact. Two "ranks" live in this process;
// the fake clock advances with the loop, so the run is the same on any machine.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "drivers/fault/fault_driver.hpp"
#include "drivers/fault/loopback_wire.hpp"
#include "proto/p2p.hpp"
#include "proto/reliable/reliable_channel.hpp"
#include "stats_text.hpp"

using sluice::test::counter;

namespace {

using namespace sluice;
using drivers::FaultConfig;
using drivers::FaultDriver;
using drivers::LoopbackWire;
using proto::reliable::ReliableChannel;
using proto::reliable::ReliableConfig;

std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::size_t size_of_message(int index) {
  if (index == 40 || index == 170) return std::size_t{4} << 20;  // two 4 MiB messages
  std::uint64_t s = static_cast<std::uint64_t>(index) * 7919;
  switch (splitmix(s) % 4) {
    case 0:
      return splitmix(s) % 64;  // tiny, often empty
    case 1:
      return splitmix(s) % 1400;  // eager
    case 2:
      return 1400 + splitmix(s) % 16384;  // small rendezvous
    default:
      return splitmix(s) % (256 << 10);  // up to 256 KiB
  }
}

std::byte byte_at(int index, std::size_t i) {
  return static_cast<std::byte>((static_cast<std::size_t>(index) * 131 + i * 7 + (i >> 9)) & 0xFF);
}

// A rank: the protocol layer plus the minimal matching the core would do (receives are
// posted in tag order and messages arrive in order, so FIFO matching suffices).
class Rank final : public proto::Upcalls {
 public:
  Rank() : p2p(*this, proto::Thresholds{}) {}

  void on_incoming(const proto::Incoming& m) override {
    Stored s{m, {m.payload.begin(), m.payload.end()}};
    unexpected.push_back(std::move(s));
    match();
  }
  void transfer_complete(proto::Transfer& t, Errc err) override {
    EXPECT_EQ(err, Errc::ok);
    ++completed;
    if (t.role == proto::Transfer::Role::recv) done_recvs.push_back(&t);
    // A completed send's buffer is the user's again: scribble on it, so a driver that
    // still read it (a retransmission of a lent fragment) would deliver wrong bytes.
    if (t.role == proto::Transfer::Role::send && t.len) std::memset(t.buf, 0xA5, t.len);
  }
  void post(proto::Transfer& r) {
    posted.push_back(&r);
    match();
  }

  proto::PointToPoint p2p;
  int completed = 0;
  std::vector<proto::Transfer*> done_recvs;

 private:
  struct Stored {
    proto::Incoming msg;
    std::vector<std::byte> payload;  // eager data outlives on_incoming here
  };
  void match() {
    while (!posted.empty() && !unexpected.empty()) {
      proto::Transfer& r = *posted.front();
      Stored s = std::move(unexpected.front());
      posted.pop_front();
      unexpected.pop_front();
      ASSERT_EQ(s.msg.tag, r.tag) << "messages overtook each other";
      s.msg.payload = s.payload;
      p2p.deliver(r, s.msg);
    }
  }
  std::deque<proto::Transfer*> posted;
  std::deque<Stored> unexpected;
};

TEST(ReliableP2P, RandomSizesUpTo4MiBUnderTwentyPercentLoss) {
  constexpr int kMessages = 200;
  std::uint64_t clock = 0;
  LoopbackWire wire(2);
  std::unique_ptr<ReliableChannel> ch[2];
  for (int r = 0; r < 2; ++r) {
    FaultConfig f;
    f.seed = 2026 + static_cast<std::uint64_t>(r);
    f.drop = 0.20;
    f.duplicate = 0.02;
    f.reorder = 0.05;
    f.corrupt = 0.02;
    ReliableConfig c;
    c.job_key = 0xD00D;
    c.min_rto_ns = 500'000;
    c.initial_rto_ns = 1'000'000;
    c.clock = [&clock] { return clock; };
    ch[r] =
        std::make_unique<ReliableChannel>(std::make_unique<FaultDriver>(wire.endpoint(r), f), c);
  }
  Rank rank[2];
  for (int r = 0; r < 2; ++r) rank[r].p2p.set_route(1 - r, ch[r].get());
  ASSERT_EQ(rank[0].p2p.choose(1, 100), proto::Protocol::eager);
  ASSERT_EQ(rank[0].p2p.choose(1, 100000), proto::Protocol::rndv_pipeline);

  std::vector<std::vector<std::byte>> send_buf(kMessages), recv_buf(kMessages);
  std::vector<proto::Transfer> sends(kMessages), recvs(kMessages);
  for (int i = 0; i < kMessages; ++i) {
    const std::size_t n = size_of_message(i);
    send_buf[i].resize(n);
    for (std::size_t k = 0; k < n; ++k) send_buf[i][k] = byte_at(i, k);
    recv_buf[i].assign(n, std::byte{0xEE});
    proto::Transfer& s = sends[i];
    s.peer = 1;
    s.tag = i;
    s.sync = i % 10 == 3;  // some MPI_Ssend-style messages
    s.buf = send_buf[i].data();
    s.len = n;
    proto::Transfer& r = recvs[i];
    r.peer = 0;
    r.tag = i;
    r.buf = recv_buf[i].data();
    r.len = n;
    rank[1].post(r);
  }

  int started = 0;
  const auto start = std::chrono::steady_clock::now();
  while ((rank[0].completed < kMessages || rank[1].completed < kMessages) &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(120)) {
    // Keep a few messages in flight, as an application with nonblocking sends would.
    while (started < kMessages && started - rank[0].completed < 8)
      rank[0].p2p.start_send(sends[started++]);
    for (int r = 0; r < 2; ++r) {
      ch[r]->poll(rank[r].p2p, 64);
      rank[r].p2p.progress_outbound();
    }
    if (HasFatalFailure()) return;
    clock += 5'000;
  }
  ASSERT_EQ(rank[0].completed, kMessages) << sluice::test::stats_text(*ch[0]);
  ASSERT_EQ(rank[1].completed, kMessages) << sluice::test::stats_text(*ch[1]);
  for (int i = 0; i < kMessages; ++i)
    for (std::size_t k = 0; k < recv_buf[i].size(); ++k)
      ASSERT_EQ(recv_buf[i][k], byte_at(i, k)) << "message " << i << " differs at " << k;
  // Every receive completed exactly once (matching order is checked in Rank::match; an
  // eager receive may complete before an earlier rendezvous one, as in MPI).
  std::vector<int> times(kMessages, 0);
  for (const proto::Transfer* t : rank[1].done_recvs) ++times[static_cast<std::size_t>(t->tag)];
  EXPECT_EQ(times, std::vector<int>(kMessages, 1));

  EXPECT_GT(counter(*ch[0], "rel.retransmits_fast") + counter(*ch[0], "rel.retransmits_timeout"),
            0u);
  EXPECT_GT(counter(*ch[0], "fault.dropped"), 0u);
  // Both protocols ran over the lossy channel, and the synchronous eager sends were acked.
  using sluice::test::component_counter;
  EXPECT_GT(component_counter(rank[1].p2p, "p2p.eager.messages_received"), 0u);
  EXPECT_GT(component_counter(rank[1].p2p, "p2p.rndv_pipeline.messages_received"), 0u);
  EXPECT_EQ(component_counter(rank[1].p2p, "p2p.eager.messages_received") +
                component_counter(rank[1].p2p, "p2p.rndv_pipeline.messages_received"),
            static_cast<std::uint64_t>(kMessages));
  EXPECT_GT(component_counter(rank[1].p2p, "p2p.eager.sync_acks"), 0u);
  EXPECT_GT(counter(*ch[1], "rel.corrupt"), 0u);
  EXPECT_GT(counter(*ch[1], "rel.duplicates"), 0u);
  std::printf("  rank0 %s\n  rank1 %s\n", sluice::test::stats_text(*ch[0]).c_str(),
              sluice::test::stats_text(*ch[1]).c_str());
}

}  // namespace
