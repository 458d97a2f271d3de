// The udp driver under the reliability layer, two "ranks" in this process over loopback:
// Reliable(Fault(udp)) with 20 % loss plus duplication, reordering and corruption still
// delivers every packet exactly once, in order, intact; strangers' datagrams (garbage,
// a valid udp header over garbage, an intact packet with another job's key) are dropped
// and counted at the layer that catches them, and the ranks' traffic is unaffected.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "drivers/fault/fault_driver.hpp"
#include "drivers/udp/udp_driver.hpp"
#include "proto/reliable/reliable_channel.hpp"
#include "stats_text.hpp"
#include "util/unique_fd.hpp"

using sluice::test::counter;

namespace {

using namespace sluice;
using drivers::IoStatus;
using drivers::UdpDriver;
using drivers::UdpParams;
using proto::reliable::ReliableChannel;
using proto::reliable::ReliableConfig;

constexpr uint64_t kKey = 0x1234567890abcdefull;

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

sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

struct Pair {
  UdpDriver* udp[2] = {};
  std::unique_ptr<ReliableChannel> ch[2];
  Sink sink[2];
  explicit Pair(double loss, std::size_t datagram) {
    std::unique_ptr<UdpDriver> u[2];
    for (int r = 0; r < 2; ++r) {
      UdpParams up;
      up.rank = r;
      up.size = 2;
      up.datagram = up.rx_datagram = datagram;
      up.rx_buffers = 16;
      up.send_sockets = 2;
      u[r] = std::make_unique<UdpDriver>(up);
      udp[r] = u[r].get();
    }
    for (int r = 0; r < 2; ++r) u[r]->set_peer_address(1 - r, loopback(u[1 - r]->port()));
    for (int r = 0; r < 2; ++r) {
      drivers::FaultConfig fc;
      fc.seed = 7 + static_cast<uint64_t>(r);
      fc.drop = loss;
      fc.duplicate = loss / 4;
      fc.reorder = loss / 2;
      fc.corrupt = loss / 4;
      ReliableConfig rc;
      rc.job_key = kKey;
      rc.min_rto_ns = 1'000'000;
      ch[r] = std::make_unique<ReliableChannel>(
          std::make_unique<drivers::FaultDriver>(std::move(u[r]), fc), rc);
    }
  }
  template <class Pred>
  bool poll_until(Pred done) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) {
        for (int r = 0; r < 2; ++r)
          std::fprintf(stderr, "rank %d got %zu: %s\n", r, sink[r].got.size(),
                       sluice::test::stats_text(*ch[r]).c_str());
        return false;
      }
      for (int r = 0; r < 2; ++r) ch[r]->poll(sink[r], 64);
    }
    return true;
  }
};

std::byte pattern(int msg, std::size_t i) {
  return static_cast<std::byte>((msg * 29 + i * 5 + (i >> 7)) & 0xFF);
}

TEST(Udp, ReliableOverLossyUdpDeliversExactlyOnceInOrder) {
  Pair p(0.20, 9000);
  const std::size_t max = p.ch[0]->caps().max_packet;
  ASSERT_GT(max, 8000u);
  constexpr int kMsgs = 600;
  std::vector<std::vector<std::byte>> bufs(kMsgs);
  for (int m = 0; m < kMsgs; ++m) {
    bufs[m].resize(static_cast<std::size_t>(m * 977) % (max + 1));
    for (std::size_t i = 0; i < bufs[m].size(); ++i) bufs[m][i] = pattern(m, i);
  }
  int next[2] = {0, 0};
  auto pump = [&](int r) {
    while (next[r] < kMsgs) {
      const int32_t hdr[2] = {next[r], r};
      const IoStatus s = p.ch[r]->send(1 - r, {reinterpret_cast<const std::byte*>(hdr), sizeof hdr},
                                       bufs[next[r]]);
      ASSERT_NE(s, IoStatus::failed);
      if (s == IoStatus::again) return;
      ++next[r];
    }
  };
  ASSERT_TRUE(p.poll_until([&] {
    pump(0);
    pump(1);
    return p.sink[0].got.size() >= kMsgs && p.sink[1].got.size() >= kMsgs;
  }));
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(p.sink[r].got.size(), static_cast<std::size_t>(kMsgs));
    for (int m = 0; m < kMsgs; ++m) {
      const Got& g = p.sink[r].got[m];
      int32_t hdr[2];
      ASSERT_EQ(g.header.size(), sizeof hdr);
      std::memcpy(hdr, g.header.data(), sizeof hdr);
      ASSERT_EQ(hdr[0], m);
      ASSERT_EQ(g.payload, bufs[m]);
    }
  }
  const auto& st = p.ch[0]->stats();
  EXPECT_GT(st.retransmit_timeout + st.retransmit_fast + st.tail_probes, 0u);
  EXPECT_GT(st.corrupt + counter(*p.ch[1], "rel.corrupt"), 0u);
  EXPECT_GT(counter(*p.udp[0], "udp.datagrams_received"), 0u);
}

// Lent fragments (split_crc) of a stream are read by the udp driver straight into the
// place the receiver's sink names for them (peek, placement, recvmsg into it): the payload
// handed up is that very memory, and every byte arrives once, in order, intact.
class PlacingSink final : public drivers::PacketSink {
 public:
  explicit PlacingSink(std::span<std::byte> dest) : dest_(dest) {}
  drivers::Placement placement(int, std::span<const std::byte> h, std::size_t n) override {
    if (h.size() != sizeof(uint64_t)) return {};
    uint64_t off;
    std::memcpy(&off, h.data(), sizeof off);
    if (off > dest_.size() || n > dest_.size() - off) return {};
    return {dest_.subspan(off, n)};
  }
  void on_packet(int, std::span<const std::byte> h, std::span<const std::byte> p) override {
    uint64_t off;
    ASSERT_EQ(h.size(), sizeof off);
    std::memcpy(&off, h.data(), sizeof off);
    ASSERT_EQ(off, next) << "out of order, lost or duplicated";
    ASSERT_LE(p.size(), dest_.size() - off);
    if (p.data() == dest_.data() + off)
      ++placed;
    else
      std::memcpy(dest_.data() + off, p.data(), p.size());
    next += p.size();
  }
  uint64_t next = 0;
  int placed = 0;

 private:
  std::span<std::byte> dest_;
};

TEST(Udp, LentFragmentsAreReceivedInPlace) {
  std::unique_ptr<UdpDriver> u[2];
  UdpDriver* udp[2];
  for (int r = 0; r < 2; ++r) {
    UdpParams up;
    up.rank = r;
    up.size = 2;
    up.datagram = up.rx_datagram = 32 * 1024;
    up.rx_buffers = 16;
    u[r] = std::make_unique<UdpDriver>(up);
    udp[r] = u[r].get();
  }
  for (int r = 0; r < 2; ++r) u[r]->set_peer_address(1 - r, loopback(u[1 - r]->port()));
  std::unique_ptr<ReliableChannel> ch[2];
  for (int r = 0; r < 2; ++r) {
    ReliableConfig rc;
    rc.job_key = kKey;
    ch[r] = std::make_unique<ReliableChannel>(std::move(u[r]), rc);
  }
  const std::size_t frag = ch[0]->caps().max_packet;
  ASSERT_GT(frag, 16u * 1024);
  std::vector<std::byte> src(8u << 20), dst(src.size(), std::byte{0xEE});
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = pattern(3, i);
  PlacingSink placing(dst);
  Sink unused;
  uint64_t off = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (placing.next < src.size() && std::chrono::steady_clock::now() < end) {
    while (off < src.size()) {
      const std::size_t n = std::min(frag, src.size() - off);
      const IoStatus s =
          ch[0]->send_tracked(1, {reinterpret_cast<const std::byte*>(&off), sizeof off},
                              std::span<const std::byte>(src).subspan(off, n), {}, {});
      ASSERT_NE(s, IoStatus::failed);
      if (s == IoStatus::again) break;
      off += n;
    }
    ch[1]->poll(placing, 64);
    ch[0]->poll(unused, 64);
    if (HasFatalFailure()) return;
  }
  ASSERT_EQ(placing.next, src.size()) << sluice::test::stats_text(*ch[1]);
  ASSERT_TRUE(dst == src);
  EXPECT_GT(placing.placed, 0);
  EXPECT_EQ(static_cast<uint64_t>(placing.placed), counter(*udp[1], "udp.placed"));
  EXPECT_TRUE(unused.got.empty());
}

TEST(Udp, StrangersDatagramsAreDroppedAndCounted) {
  Pair p(0.0, 1472);
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  const sockaddr_in to = loopback(p.udp[1]->port());
  auto shoot = [&](const std::vector<std::byte>& d) {
    ASSERT_EQ(sendto(fd, d.data(), d.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to),
              static_cast<ssize_t>(d.size()));
  };
  shoot(std::vector<std::byte>(100, std::byte{0x5A}));  // garbage: udp layer
  shoot(std::vector<std::byte>(3, std::byte{0}));       // runt: udp layer
  drivers::udp::UdpHeader uh;
  uh.src = 0;
  uh.header_len = 60;
  std::vector<std::byte> d(sizeof uh + 60, std::byte{0x11});
  std::memcpy(d.data(), &uh, sizeof uh);
  shoot(d);  // udp header over garbage: reliability layer, malformed
  // An intact, well-formed packet with another job's key.
  proto::reliable::RelHeader rh;
  rh.upper_header_len = 12;
  rh.job_key = kKey ^ 1;
  const std::byte upper[12] = {std::byte{1}};
  rh.crc = proto::reliable::packet_crc(rh, upper, {});
  uh.header_len = sizeof rh + sizeof upper;
  d.assign(sizeof uh + uh.header_len, std::byte{0});
  std::memcpy(d.data(), &uh, sizeof uh);
  std::memcpy(d.data() + sizeof uh, &rh, sizeof rh);
  std::memcpy(d.data() + sizeof uh + sizeof rh, upper, sizeof upper);
  shoot(d);
  close(fd);

  const std::byte x[16] = {std::byte{3}};
  ASSERT_EQ(p.ch[0]->send(1, x, x), IoStatus::done);
  ASSERT_TRUE(p.poll_until([&] {
    return p.sink[1].got.size() == 1 && p.udp[1]->stats().malformed == 2 &&
           p.ch[1]->stats().malformed == 1 && p.ch[1]->stats().bad_key == 1;
  }));
  EXPECT_EQ(p.sink[1].got[0].payload, std::vector<std::byte>(x, x + 16));
  EXPECT_EQ(counter(*p.ch[1], "rel.peers_dead"), 0u);
  // A 2-rank pair: the receive socket is connected to the peer, so the strangers came in
  // through its unconnected twin on the same port.
  EXPECT_TRUE(p.udp[1]->paired());
  EXPECT_EQ(counter(*p.udp[1], "udp.stray"), 4u);
}

// Connected pair (2-rank job): every datagram between two paired drivers travels between
// the two connected receive sockets (none through the unconnected twin); a peer that does
// not pair (it sends from its send sockets, other source ports) still gets through, by the
// twin; and both directions deliver everything.
TEST(Udp, ConnectedPairTakesThePeerAndItsTwinTheRest) {
  auto make = [](int rank, bool pair) {
    UdpParams up;
    up.rank = rank;
    up.size = 2;
    up.connect_pair = pair;
    return std::make_unique<UdpDriver>(up);
  };
  auto exchange = [](UdpDriver& a, UdpDriver& b, int n) {
    Sink sa, sb;
    const std::byte h[8] = {std::byte{7}};
    const std::byte x[32] = {std::byte{9}};
    for (int i = 0; i < n; ++i) {
      while (a.send(1, h, x) != IoStatus::done) {
      }
      while (b.send(0, h, x) != IoStatus::done) {
      }
    }
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while ((sa.got.size() < static_cast<std::size_t>(n) ||
            sb.got.size() < static_cast<std::size_t>(n)) &&
           std::chrono::steady_clock::now() < end) {
      a.poll(sa, 64);
      b.poll(sb, 64);
    }
    EXPECT_EQ(sa.got.size(), static_cast<std::size_t>(n));
    EXPECT_EQ(sb.got.size(), static_cast<std::size_t>(n));
    for (const Got& g : sb.got) EXPECT_EQ(g.src, 0);
  };
  {
    auto a = make(0, true), b = make(1, true);
    a->set_peer_address(1, loopback(b->port()));
    b->set_peer_address(0, loopback(a->port()));
    ASSERT_TRUE(a->paired());
    ASSERT_TRUE(b->paired());
    exchange(*a, *b, 100);
    EXPECT_EQ(counter(*a, "udp.stray"), 0u);
    EXPECT_EQ(counter(*b, "udp.stray"), 0u);
    EXPECT_EQ(counter(*a, "udp.sent_connected"), 100u);
  }
  {
    auto a = make(0, false), b = make(1, true);
    a->set_peer_address(1, loopback(b->port()));
    b->set_peer_address(0, loopback(a->port()));
    EXPECT_FALSE(a->paired());
    ASSERT_TRUE(b->paired());
    exchange(*a, *b, 100);
    EXPECT_EQ(counter(*b, "udp.stray"),
              100u);  // a's send sockets are not the address b connected to
    EXPECT_EQ(counter(*a, "udp.stray"), 0u);
  }
}

// A port-0 bind with SO_REUSEPORT may return a port that another socket of the same user
// holds with SO_REUSEPORT (the kernel counts a group it could join as free): two ranks, of
// one job or of two, then shared a port and split each other's datagrams, and a 2-rank udp
// job once saw its peer go silent until the peer timeout. A paired driver's port is its
// own: not one of thousands of such sockets already bound, nor taken by later such binds.
TEST(Udp, PairedPortIsSharedWithNoOtherSocket) {
  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
  const std::size_t others = std::min<std::size_t>(4000, lim.rlim_cur / 2);
  auto bind_reuseport = [] {
    util::UniqueFd fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    int one = 1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof a;
    if (!fd || setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0 ||
        bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0)
      fd.reset();
    return std::pair{std::move(fd), ntohs(a.sin_port)};
  };
  std::vector<util::UniqueFd> held;
  std::set<uint16_t> taken;
  for (std::size_t i = 0; i < others; ++i) {
    auto [fd, port] = bind_reuseport();
    if (!fd) break;
    taken.insert(port);
    held.push_back(std::move(fd));
  }
  ASSERT_GT(held.size(), others / 2);
  std::vector<std::unique_ptr<UdpDriver>> drivers;
  std::set<uint16_t> ours;
  for (int i = 0; i < 40; ++i) {
    UdpParams up;
    up.rank = 0;
    up.size = 2;
    up.connect_pair = true;
    up.send_sockets = 1;
    drivers.push_back(std::make_unique<UdpDriver>(up));
    EXPECT_EQ(taken.count(drivers.back()->port()), 0u)
        << "driver bound to port " << drivers.back()->port() << ", held by another socket";
    ours.insert(drivers.back()->port());
  }
  EXPECT_EQ(ours.size(), drivers.size());
  held.clear();
  for (std::size_t i = 0; i < others; ++i) {
    auto [fd, port] = bind_reuseport();
    if (!fd) break;
    EXPECT_EQ(ours.count(port), 0u) << "a later SO_REUSEPORT bind joined a driver's port " << port;
    held.push_back(std::move(fd));
  }
}

// A bulk stream at MTU-1500 datagram size (1472 B), lent like the rendezvous fragments:
// the reliability layer corks full-size fragments and the udp driver sends each run as
// one UDP_SEGMENT sendmsg; a receiver with UDP_GRO reads the super-packets whole and
// splits them. Every combination of GSO / GRO on either side (a GRO-less receiver gets
// the kernel's segmented datagrams) and the in-library fault injector under the layer
// (batches then go out one send at a time) deliver every byte once, in order, intact.
struct StreamCase {
  bool gso, gro, faults;
};

void stream_at_mtu_datagrams(const StreamCase& sc) {
  SCOPED_TRACE(std::string("gso=") + (sc.gso ? "1" : "0") + " gro=" + (sc.gro ? "1" : "0") +
               " faults=" + (sc.faults ? "1" : "0"));
  std::unique_ptr<UdpDriver> u[2];
  UdpDriver* udp[2];
  for (int r = 0; r < 2; ++r) {
    UdpParams up;
    up.rank = r;
    up.size = 2;
    up.datagram = up.rx_datagram = 1472;
    up.rx_buffers = 16;
    up.send_sockets = 2;
    up.gso = sc.gso;
    up.gro = sc.gro;
    u[r] = std::make_unique<UdpDriver>(up);
    udp[r] = u[r].get();
  }
  for (int r = 0; r < 2; ++r) u[r]->set_peer_address(1 - r, loopback(u[1 - r]->port()));
  if (sc.gso && !udp[0]->gso()) GTEST_SKIP() << "the kernel has no UDP_SEGMENT";
  if (sc.gro && !udp[1]->gro()) GTEST_SKIP() << "the kernel has no UDP_GRO";
  std::unique_ptr<ReliableChannel> ch[2];
  for (int r = 0; r < 2; ++r) {
    ReliableConfig rc;
    rc.job_key = kKey;
    rc.min_rto_ns = 1'000'000;
    rc.window = 128;
    rc.window_bytes = 2u << 20;
    std::unique_ptr<drivers::Driver> wire = std::move(u[r]);
    if (sc.faults) {
      drivers::FaultConfig fc;
      fc.seed = 11 + static_cast<uint64_t>(r);
      fc.drop = 0.05;
      fc.duplicate = 0.01;
      fc.reorder = 0.02;
      fc.corrupt = 0.01;
      wire = std::make_unique<drivers::FaultDriver>(std::move(wire), fc);
    }
    ch[r] = std::make_unique<ReliableChannel>(std::move(wire), rc);
  }
  const std::size_t frag = ch[0]->caps().max_packet;
  ASSERT_LT(frag, 1472u);
  // Not a multiple of the fragment: the last one is short (a shorter last GSO segment).
  std::vector<std::byte> src((2u << 20) + 777), dst(src.size(), std::byte{0xEE});
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = pattern(5, i);
  Sink in, unused;
  std::size_t got = 0;
  uint64_t off = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (got < src.size() && std::chrono::steady_clock::now() < end) {
    while (off < src.size()) {
      const std::size_t n = std::min(frag, src.size() - off);
      const IoStatus s =
          ch[0]->send_tracked(1, {reinterpret_cast<const std::byte*>(&off), sizeof off},
                              std::span<const std::byte>(src).subspan(off, n), {}, {});
      ASSERT_NE(s, IoStatus::failed);
      if (s == IoStatus::again) break;
      off += n;
    }
    ch[1]->poll(in, 64);
    for (const Got& g : in.got) {
      uint64_t at;
      ASSERT_EQ(g.header.size(), sizeof at);
      std::memcpy(&at, g.header.data(), sizeof at);
      ASSERT_EQ(at, got) << "out of order, lost or duplicated";
      ASSERT_LE(g.payload.size(), src.size() - got);
      std::memcpy(dst.data() + got, g.payload.data(), g.payload.size());
      got += g.payload.size();
    }
    in.got.clear();
    ch[0]->poll(unused, 64);
  }
  ASSERT_EQ(got, src.size()) << sluice::test::stats_text(*ch[0]) << "\n"
                             << sluice::test::stats_text(*ch[1]);
  ASSERT_TRUE(dst == src);
  EXPECT_TRUE(unused.got.empty());
  const auto& tx = udp[0]->stats();
  const auto& rx = udp[1]->stats();
  EXPECT_GT(counter(*ch[0], "rel.batches"), 0u);  // the layer corked runs of fragments
  if (sc.gso && !sc.faults) {
    EXPECT_GT(tx.gso_sends, 0u);
    EXPECT_GT(tx.gso_segments, 2 * tx.gso_sends);  // several datagrams per sendmsg
  } else {
    EXPECT_EQ(tx.gso_sends, 0u);
  }
  // Loopback hands a GSO super-packet to a GRO socket whole: one read, many datagrams.
  if (sc.gso && sc.gro && !sc.faults) {
    EXPECT_GT(rx.gro_reads, 0u);
    EXPECT_GT(rx.gro_segments, 2 * rx.gro_reads);
  }
  if (!sc.gro) {
    EXPECT_EQ(rx.gro_reads, 0u);
  }
  EXPECT_EQ(rx.malformed, 0u);
}

TEST(Udp, GsoBatchesAndGroReadsCarryAStreamAtMtuDatagrams) {
  for (const StreamCase sc : {StreamCase{true, true, false}, StreamCase{true, false, false},
                              StreamCase{false, true, false}, StreamCase{true, true, true}}) {
    stream_at_mtu_datagrams(sc);
    if (HasFatalFailure() || IsSkipped()) return;
  }
}

TEST(Udp, KernelDropsAreCounted) {
  // A receive buffer far smaller than what arrives while nobody reads: the kernel drops the
  // overflow, and the statistics show exactly what the socket lost.
  UdpParams up;
  up.rank = 1;
  up.size = 2;
  up.socket_buffer = 4096;
  UdpDriver udp(up);
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  const sockaddr_in to = loopback(udp.port());
  drivers::udp::UdpHeader uh;
  uh.src = 0;
  uh.header_len = 60;
  std::vector<std::byte> d(1400, std::byte{0x11});
  std::memcpy(d.data(), &uh, sizeof uh);
  constexpr int kSent = 200;
  for (int i = 0; i < kSent; ++i)
    ASSERT_EQ(sendto(fd, d.data(), d.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to),
              static_cast<ssize_t>(d.size()));
  close(fd);
  Sink sink;
  while (udp.poll(sink, 64) > 0) {
  }
  EXPECT_GT(counter(udp, "udp.kernel_drops"), 0u);
  EXPECT_EQ(counter(udp, "udp.datagrams_received") + counter(udp, "udp.kernel_drops"),
            static_cast<uint64_t>(kSent));
  EXPECT_EQ(sink.got.size(), counter(udp, "udp.datagrams_received"));
  EXPECT_NE(sluice::test::stats_text(udp).find("kernel_drops=" +
                                               std::to_string(udp.stats().kernel_drops)),
            std::string::npos);
}

TEST(Udp, OversizedDatagramIsMalformed) {
  // Longer than the receive buffer: cut by the kernel, so counted and dropped, never parsed.
  UdpParams up;
  up.rank = 1;
  up.size = 2;
  up.gro = false;  // with UDP_GRO the buffers are 64 KiB: no datagram is longer
  UdpDriver udp(up);
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  const sockaddr_in to = loopback(udp.port());
  drivers::udp::UdpHeader uh;
  uh.src = 0;
  uh.header_len = 60;
  std::vector<std::byte> d(up.rx_datagram + 1, std::byte{0x11});
  std::memcpy(d.data(), &uh, sizeof uh);
  ASSERT_EQ(sendto(fd, d.data(), d.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to),
            static_cast<ssize_t>(d.size()));
  close(fd);
  Sink sink;
  for (int i = 0; i < 1000 && udp.stats().malformed == 0; ++i) udp.poll(sink, 1);
  EXPECT_EQ(counter(udp, "udp.malformed"), 1u);
  EXPECT_EQ(counter(udp, "udp.datagrams_received"), 0u);
  EXPECT_TRUE(sink.got.empty());
}

}  // namespace
