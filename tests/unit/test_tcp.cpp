// The tcp driver with two "ranks" in this process over loopback: lazy connection with the
// simultaneous-connect race, ordering and integrity through a backlog, orderly close vs
// peer death, and strangers (wrong key, garbage, data before the handshake) refused and
// counted while the job's own traffic carries on.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "drivers/tcp/tcp_driver.hpp"
#include "proto/p2p.hpp"
#include "stats_text.hpp"

using sluice::test::counter;

namespace {

using namespace sluice;
using drivers::IoStatus;
using drivers::TcpDriver;
using drivers::TcpParams;

struct Got {
  int src;
  std::vector<std::byte> header, payload;
};

class Sink final : public drivers::PacketSink {
 public:
  void on_packet(int src, std::span<const std::byte> h, std::span<const std::byte> p) override {
    got.push_back({src, {h.begin(), h.end()}, {p.begin(), p.end()}});
  }
  std::vector<Got> got;
};

std::array<uint8_t, 16> key_of(uint8_t seed) {
  std::array<uint8_t, 16> k{};
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = static_cast<uint8_t>(seed + i * 17);
  return k;
}

TcpParams params(int rank, std::vector<int>* dead) {
  TcpParams p;
  p.rank = rank;
  p.size = 2;
  p.key = key_of(1);
  p.max_packet = 64 * 1024;
  p.queue_limit = 256 * 1024;
  p.on_peer_dead = [dead](int peer) { dead->push_back(peer); };
  return p;
}

sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

std::byte pattern(int msg, std::size_t i) {
  return static_cast<std::byte>((msg * 31 + i * 7 + (i >> 8)) & 0xFF);
}

std::size_t size_of(int msg) {
  return msg % 5 == 0 ? 60000 + static_cast<std::size_t>(msg)
                      : static_cast<std::size_t>(msg * 37 % 3000);
}

struct Pair {
  std::vector<int> dead[2];
  std::unique_ptr<TcpDriver> d[2];
  Sink sink[2];
  Pair() {
    for (int r = 0; r < 2; ++r) d[r] = std::make_unique<TcpDriver>(params(r, &dead[r]));
    d[0]->set_peer_address(1, loopback(d[1]->port()));
    d[1]->set_peer_address(0, loopback(d[0]->port()));
  }
  void poll() {
    for (int r = 0; r < 2; ++r)
      if (d[r]) d[r]->poll(sink[r], 64);
  }
  template <class Pred>
  bool poll_until(Pred done) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      poll();
    }
    return true;
  }
};

// Both ranks send at once, before either has polled: two connections cross; the lower
// rank's wins, nothing is lost, and everything arrives in order and intact.
TEST(Tcp, SimultaneousConnectOrderAndIntegrity) {
  Pair p;
  constexpr int kMsgs = 300;
  int next[2] = {0, 0};
  std::vector<std::vector<std::byte>> bufs(kMsgs);
  for (int m = 0; m < kMsgs; ++m) {
    bufs[m].resize(size_of(m));
    for (std::size_t i = 0; i < bufs[m].size(); ++i) bufs[m][i] = pattern(m, i);
  }
  auto pump = [&](int r) {
    while (next[r] < kMsgs) {
      const int m = next[r];
      const int32_t hdr[2] = {m, r};
      const IoStatus s =
          p.d[r]->send(1 - r, {reinterpret_cast<const std::byte*>(hdr), sizeof hdr}, bufs[m]);
      ASSERT_NE(s, IoStatus::failed);
      if (s == IoStatus::again) return;
      ++next[r];
    }
  };
  pump(0);
  pump(1);
  ASSERT_TRUE(p.poll_until([&] {
    pump(0);
    pump(1);
    return p.sink[0].got.size() == kMsgs && p.sink[1].got.size() == kMsgs;
  }));
  for (int r = 0; r < 2; ++r)
    for (int m = 0; m < kMsgs; ++m) {
      const Got& g = p.sink[r].got[m];
      ASSERT_EQ(g.src, 1 - r);
      int32_t hdr[2];
      ASSERT_EQ(g.header.size(), sizeof hdr);
      std::memcpy(hdr, g.header.data(), sizeof hdr);
      ASSERT_EQ(hdr[0], m) << "out of order at rank " << r;
      ASSERT_EQ(g.payload, bufs[m]) << "message " << m << " damaged";
    }
  EXPECT_EQ(counter(*p.d[0], "tcp.races_lost") + counter(*p.d[1], "tcp.races_lost"), 1u);
  EXPECT_EQ(counter(*p.d[1], "tcp.races_lost"), 1u);  // rank 1 dropped its own connection
  EXPECT_TRUE(p.dead[0].empty());
  EXPECT_TRUE(p.dead[1].empty());
}

// A peer that vanishes (process death: sockets closed without bye) is declared dead;
// one that says bye first is merely closed.
TEST(Tcp, PeerDeathVersusOrderlyClose) {
  for (bool orderly : {false, true}) {
    Pair p;
    const std::byte x[4] = {};
    ASSERT_EQ(p.d[0]->send(1, x, {}), IoStatus::done);
    ASSERT_TRUE(p.poll_until([&] { return p.sink[1].got.size() == 1; }));
    if (orderly) p.d[1]->drain(100'000'000);
    p.d[1].reset();
    ASSERT_TRUE(
        p.poll_until([&] { return orderly ? p.d[0]->stats().closed == 1 : !p.dead[0].empty(); }));
    if (orderly) {
      EXPECT_TRUE(p.dead[0].empty());
    } else {
      EXPECT_EQ(p.dead[0], std::vector<int>{1});
      EXPECT_TRUE(p.d[0]->peer_dead(1));
    }
    EXPECT_EQ(p.d[0]->send(1, x, {}), IoStatus::failed);
  }
}

// Raw connections that do not carry the job's key, or speak garbage, are closed and
// counted; the ranks' own traffic is unaffected.
TEST(Tcp, StrangersAreRefusedAndCounted) {
  Pair p;
  const uint16_t port = p.d[1]->port();
  auto stranger = [&](std::vector<std::byte> bytes) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = loopback(port);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
    return fd;
  };
  auto hello = [&](std::array<uint8_t, 16> key, int rank) {
    struct {
      drivers::tcp::FrameHeader h;
      drivers::tcp::Hello hello;
    } m{};
    m.h.payload_len = sizeof m.hello;
    m.h.type = drivers::tcp::FrameType::hello;
    m.hello.rank = rank;
    m.hello.size = 2;
    std::memcpy(m.hello.key, key.data(), 16);
    std::vector<std::byte> v(sizeof m);
    std::memcpy(v.data(), &m, sizeof m);
    return v;
  };
  std::vector<int> fds;
  fds.push_back(stranger(hello(key_of(9), 0)));  // wrong key
  std::vector<std::byte> garbage(64, std::byte{0xAB});
  fds.push_back(stranger(garbage));    // not a frame
  std::vector<std::byte> data(8 + 4);  // a data frame before any hello
  drivers::tcp::FrameHeader fh;
  fh.header_len = 4;
  std::memcpy(data.data(), &fh, sizeof fh);
  fds.push_back(stranger(data));
  auto bad_rank = hello(key_of(1), 7);  // right key, impossible rank
  fds.push_back(stranger(bad_rank));

  // The job talks meanwhile.
  const std::byte x[8] = {std::byte{1}};
  ASSERT_EQ(p.d[0]->send(1, x, x), IoStatus::done);
  ASSERT_TRUE(p.poll_until([&] {
    return p.sink[1].got.size() == 1 && p.d[1]->stats().bad_key == 1 &&
           p.d[1]->stats().malformed == 2 && counter(*p.d[1], "tcp.unproven.rejected") == 1;
  }));
  for (int fd : fds) {  // each was closed by the driver (reset if it sent more than a hello)
    char c;
    const ssize_t n = recv(fd, &c, 1, 0);
    EXPECT_TRUE(n == 0 || (n < 0 && errno == ECONNRESET)) << n << " " << std::strerror(errno);
    close(fd);
  }
  ASSERT_EQ(p.d[1]->send(0, x, x), IoStatus::done);
  ASSERT_TRUE(p.poll_until([&] { return p.sink[0].got.size() == 1; }));
  EXPECT_EQ(p.sink[0].got[0].payload, std::vector<std::byte>(x, x + 8));
  EXPECT_TRUE(p.dead[0].empty() && p.dead[1].empty());
}

int raw_connect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = loopback(port);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  return fd;
}

// True once the driver closed the connection (EOF or reset); waits at most `seconds`.
bool closed_within(int fd, Pair& p, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    p.poll();
    char c;
    const ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return true;
  }
  return false;
}

// A frame header announcing a large payload before any hello closes the connection at
// once: nothing is allocated for it, and it does not wait for the stranger timeout.
TEST(Tcp, LargeFrameBeforeHelloIsRefusedAtOnce) {
  Pair p;
  drivers::tcp::FrameHeader fh;
  fh.header_len = 200;
  fh.payload_len = 60000;  // within max_packet: a legal frame, were the key proven
  const int fd = raw_connect(p.d[1]->port());
  ASSERT_EQ(send(fd, &fh, sizeof fh, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof fh));
  EXPECT_TRUE(closed_within(fd, p, 5));
  EXPECT_EQ(counter(*p.d[1], "tcp.unproven.rejected"), 1u);
  close(fd);
}

// At most handshake_limit accepted connections wait for their hello: a new one closes the
// oldest silent one; the ranks' own connection, whose hello came, is never the one closed.
TEST(Tcp, HandshakeLimitClosesTheOldestSilentConnection) {
  std::vector<int> dead[2];
  std::unique_ptr<TcpDriver> d[2];
  for (int r = 0; r < 2; ++r) {
    TcpParams tp = params(r, &dead[r]);
    tp.handshake_limit = 3;
    d[r] = std::make_unique<TcpDriver>(tp);
  }
  d[0]->set_peer_address(1, loopback(d[1]->port()));
  d[1]->set_peer_address(0, loopback(d[0]->port()));
  Sink sink[2];
  // Rank 0 connects and says hello before rank 1 has accepted anything; strangers follow.
  const std::byte x[8] = {std::byte{3}};
  ASSERT_EQ(d[0]->send(1, x, x), IoStatus::done);
  for (int i = 0; i < 20; ++i) d[0]->poll(sink[0], 64);
  std::vector<int> fds;
  for (int i = 0; i < 10; ++i) fds.push_back(raw_connect(d[1]->port()));
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (sink[1].got.size() < 1 && std::chrono::steady_clock::now() < end) {
    d[0]->poll(sink[0], 64);
    d[1]->poll(sink[1], 64);
  }
  ASSERT_EQ(sink[1].got.size(), 1u);
  EXPECT_LE(counter(*d[1], "tcp.unproven.peak"), 3u);
  EXPECT_GE(counter(*d[1], "tcp.unproven.evicted"), 7u);
  int closed = 0;
  for (int fd : fds) {
    char c;
    const ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
    closed += n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
    close(fd);
  }
  EXPECT_GE(closed, 7);
  EXPECT_TRUE(dead[0].empty() && dead[1].empty());
}

// A connection that never proves the key is closed after handshake_timeout_ns.
TEST(Tcp, SilentConnectionTimesOut) {
  std::vector<int> dead;
  TcpParams tp = params(1, &dead);
  tp.handshake_timeout_ns = 50'000'000;
  TcpDriver d(tp);
  Sink sink;
  const int fd = raw_connect(d.port());
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool closed = false;
  while (!closed && std::chrono::steady_clock::now() < end) {
    d.poll(sink, 64);
    char c;
    const ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
    closed = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }
  EXPECT_TRUE(closed);
  EXPECT_EQ(counter(d, "tcp.unproven.timed_out"), 1u);
  close(fd);
}

// The lower rank's connection is never refused, so its queued packet follows the hello at
// once, before the hello_ack. The ack must still authenticate the acceptor: an impostor
// listening at the peer's address that answers with the wrong key, or sends data before
// any ack, gets the peer declared dead and has nothing delivered.
TEST(Tcp, LowerRankSendsWithHelloButStillChecksTheAck) {
  for (bool data_first : {false, true}) {
    std::vector<int> dead;
    TcpDriver d(params(0, &dead));
    Sink sink;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = loopback(0);
    ASSERT_EQ(bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(listen(lfd, 4), 0);
    socklen_t len = sizeof a;
    getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
    d.set_peer_address(1, a);
    const std::byte x[4] = {std::byte{7}, std::byte{7}, std::byte{7}, std::byte{7}};
    ASSERT_EQ(d.send(1, x, {}), IoStatus::done);  // queued; starts the connection
    d.poll(sink, 64);
    int fd = accept(lfd, nullptr, nullptr);
    ASSERT_GE(fd, 0);
    // Hello (40 bytes), then the data frame (8 + 4), without any answer from us yet.
    constexpr std::size_t kHello = sizeof(drivers::tcp::FrameHeader) + sizeof(drivers::tcp::Hello);
    std::vector<std::byte> in(kHello + 12);
    std::size_t got = 0;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (got < in.size() && std::chrono::steady_clock::now() < end) {
      d.poll(sink, 64);
      const ssize_t n = recv(fd, in.data() + got, in.size() - got, MSG_DONTWAIT);
      if (n > 0) got += static_cast<std::size_t>(n);
    }
    ASSERT_EQ(got, in.size()) << "the data did not follow the hello";
    drivers::tcp::FrameHeader fh;
    std::memcpy(&fh, in.data() + kHello, sizeof fh);
    EXPECT_EQ(fh.type, drivers::tcp::FrameType::data);
    // The impostor's answer: data before the ack, or an ack with the wrong key.
    struct {
      drivers::tcp::FrameHeader h;
      drivers::tcp::Hello hello;
    } m{};
    m.h.payload_len = sizeof m.hello;
    m.h.type = drivers::tcp::FrameType::hello_ack;
    m.hello.rank = 1;
    m.hello.size = 2;
    const auto wrong = key_of(9);
    std::memcpy(m.hello.key, wrong.data(), 16);
    drivers::tcp::FrameHeader dh;
    dh.header_len = 4;
    std::vector<std::byte> answer(sizeof dh + 4);
    std::memcpy(answer.data(), &dh, sizeof dh);
    if (!data_first) {
      answer.resize(sizeof m);
      std::memcpy(answer.data(), &m, sizeof m);
    }
    ASSERT_EQ(send(fd, answer.data(), answer.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(answer.size()));
    const auto end2 = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (dead.empty() && std::chrono::steady_clock::now() < end2) d.poll(sink, 64);
    EXPECT_EQ(dead, std::vector<int>{1});
    EXPECT_TRUE(sink.got.empty());
    EXPECT_EQ(data_first ? counter(d, "tcp.unproven.rejected") : counter(d, "tcp.bad_key"), 1u);
    close(fd);
    close(lfd);
  }
}

// The protocols over two tcp drivers: a pipelined-rendezvous message leaves in fragments of
// max_packet from the first one (DriverCaps::whole_fragments: no small-first ramp, which on
// a byte stream only adds frames and syscalls), large ones received in place, intact.
class P2pRank final : public proto::Upcalls {
 public:
  P2pRank() : p2p(*this, proto::Thresholds{}) {}
  void on_incoming(const proto::Incoming& m) override {
    ASSERT_FALSE(posted.empty()) << "no receive posted";
    proto::Transfer& r = *posted.front();
    posted.pop_front();
    p2p.deliver(r, m);
  }
  void transfer_complete(proto::Transfer&, Errc err) override {
    EXPECT_EQ(err, Errc::ok);
    ++completed;
  }
  proto::PointToPoint p2p;
  std::deque<proto::Transfer*> posted;
  int completed = 0;
};

TEST(Tcp, RendezvousFragmentsAreWholePackets) {
  Pair pp;
  P2pRank rank[2];
  for (int r = 0; r < 2; ++r) rank[r].p2p.set_route(1 - r, pp.d[r].get());
  ASSERT_TRUE(pp.d[0]->caps().whole_fragments);
  const std::size_t chunk = pp.d[0]->caps().max_packet;  // 64 KiB here
  constexpr int kMessages = 3;
  const std::size_t sizes[kMessages] = {16 * chunk, 16 * chunk + 1000, 5 * chunk / 2};
  ASSERT_EQ(rank[0].p2p.choose(1, sizes[0]), proto::Protocol::rndv_pipeline);
  std::vector<std::byte> out[kMessages], in[kMessages];
  proto::Transfer sends[kMessages], recvs[kMessages];
  std::size_t want_fragments = 0;
  for (int i = 0; i < kMessages; ++i) {
    out[i].resize(sizes[i]);
    for (std::size_t k = 0; k < sizes[i]; ++k) out[i][k] = pattern(i, k);
    in[i].assign(sizes[i], std::byte{0xEE});
    sends[i].peer = 1;
    sends[i].tag = i;
    sends[i].buf = out[i].data();
    sends[i].len = sizes[i];
    recvs[i].role = proto::Transfer::Role::recv;
    recvs[i].peer = 0;
    recvs[i].tag = i;
    recvs[i].buf = in[i].data();
    recvs[i].len = sizes[i];
    rank[1].posted.push_back(&recvs[i]);
    want_fragments += (sizes[i] + chunk - 1) / chunk;
  }
  for (auto& s : sends) rank[0].p2p.start_send(s);
  // (Not Pair::poll_until: its polls would hand the packets to the Pair's sinks.)
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((rank[0].completed < kMessages || rank[1].completed < kMessages) &&
         std::chrono::steady_clock::now() < end) {
    for (int r = 0; r < 2; ++r) {
      pp.d[r]->poll(rank[r].p2p, 64);
      rank[r].p2p.progress_outbound();
    }
  }
  ASSERT_EQ(rank[0].completed, kMessages) << sluice::test::stats_text(*pp.d[0]);
  ASSERT_EQ(rank[1].completed, kMessages) << sluice::test::stats_text(*pp.d[1]);
  for (int i = 0; i < kMessages; ++i) EXPECT_TRUE(in[i] == out[i]) << "message " << i;
  // 16 + 17 + 3 fragments; with the 8 KiB-first ramp 19 + 20 + 6.
  EXPECT_EQ(sluice::test::component_counter(rank[0].p2p, "p2p.fragments_sent"), want_fragments);
  // Every message went by pipelined rendezvous, none eagerly.
  EXPECT_EQ(sluice::test::component_counter(rank[0].p2p, "p2p.rndv_pipeline.messages_sent"),
            static_cast<std::uint64_t>(kMessages));
  EXPECT_EQ(sluice::test::component_counter(rank[1].p2p, "p2p.rndv_pipeline.messages_received"),
            static_cast<std::uint64_t>(kMessages));
  EXPECT_EQ(sluice::test::component_counter(rank[1].p2p, "p2p.eager.messages_received"), 0u);
  EXPECT_GT(counter(*pp.d[1], "tcp.placed"), 0u);
}

}  // namespace
