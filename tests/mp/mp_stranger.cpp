// A stranger's traffic to a running job: rank 0 plays the stranger
// towards rank 1's network address with raw sockets, then the ranks exchange verified
// messages. Over tcp: connections with a wrong key, with garbage, and with a data frame
// before any handshake, each closed by rank 1. Over udp: garbage, a runt, a valid udp
// header over garbage, and an intact packet with another job's key. The job's results
// are unaffected, and rank 1's statistics count every reject at the layer that caught it.
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "check.hpp"
#include "core/engine.hpp"
#include "drivers/tcp/tcp_wire.hpp"
#include "drivers/udp/udp_wire.hpp"
#include "proto/reliable/wire.hpp"
#include "sluice/sluice.hpp"

namespace {

using sluice::Errc;

sockaddr_in parse_addr(const std::string& s) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  const auto colon = s.rfind(':');
  inet_pton(AF_INET, s.substr(0, colon).c_str(), &a.sin_addr);
  a.sin_port = htons(static_cast<uint16_t>(std::stoi(s.substr(colon + 1))));
  return a;
}

std::vector<std::byte> bytes_of(const void* p, std::size_t n) {
  std::vector<std::byte> v(n);
  std::memcpy(v.data(), p, n);
  return v;
}

void tcp_strangers(const sockaddr_in& to) {
  std::vector<std::vector<std::byte>> attempts;
  struct {
    sluice::drivers::tcp::FrameHeader h;
    sluice::drivers::tcp::Hello hello;
  } hello{};
  hello.h.payload_len = sizeof hello.hello;
  hello.h.type = sluice::drivers::tcp::FrameType::hello;
  hello.hello.rank = 0;
  hello.hello.size = 2;
  std::memset(hello.hello.key, 0x42, sizeof hello.hello.key);  // not the job's key
  attempts.push_back(bytes_of(&hello, sizeof hello));
  attempts.emplace_back(100, std::byte{0xEE});  // garbage
  sluice::drivers::tcp::FrameHeader data;
  data.header_len = 16;
  data.payload_len = 16;
  std::vector<std::byte> d = bytes_of(&data, sizeof data);
  d.resize(d.size() + 32, std::byte{1});
  attempts.push_back(d);  // data before any handshake
  for (const auto& a : attempts) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0, "connect");
    CHECK(send(fd, a.data(), a.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(a.size()), "send");
    timeval tv{30, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char c;
    // Closed: EOF, or a reset when rank 1 closed it with bytes unread (more than a hello).
    const ssize_t n = recv(fd, &c, 1, 0);
    CHECK(n == 0 || (n < 0 && errno == ECONNRESET),
          "rank 1 did not close the stranger's connection");
    close(fd);
  }
}

void udp_strangers(const sockaddr_in& to) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  auto shoot = [&](const std::vector<std::byte>& d) {
    CHECK(sendto(fd, d.data(), d.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to) ==
              static_cast<ssize_t>(d.size()),
          "sendto");
  };
  shoot(std::vector<std::byte>(200, std::byte{0x77}));
  shoot(std::vector<std::byte>(5, std::byte{0}));
  sluice::drivers::udp::UdpHeader uh;
  uh.src = 0;
  uh.header_len = 64;
  std::vector<std::byte> d = bytes_of(&uh, sizeof uh);
  d.resize(d.size() + 64, std::byte{0x33});
  shoot(d);
  sluice::proto::reliable::RelHeader rh;
  rh.upper_header_len = 16;
  rh.job_key = 0x0123456789abcdefull;  // some other job
  const std::byte upper[16] = {std::byte{1}};
  rh.crc = sluice::proto::reliable::packet_crc(rh, upper, {});
  uh.header_len = sizeof rh + sizeof upper;
  d = bytes_of(&uh, sizeof uh);
  const auto r = bytes_of(&rh, sizeof rh);
  d.insert(d.end(), r.begin(), r.end());
  d.insert(d.end(), upper, upper + sizeof upper);
  shoot(d);
  close(fd);
}

}  // namespace

int main() {
  sluice::Session s;
  sluice::test::g_rank = s.rank();
  CHECK(s.size() == 2, "needs 2 ranks");
  auto* eng = sluice::detail::current_engine();
  const std::string drv(s.driver_name(1 - s.rank()));
  const bool tcp = drv == "tcp";
  CHECK(tcp || drv == "udp+rel", "peer served by %s, want tcp or udp", drv.c_str());
  std::byte token[4] = {};
  if (s.rank() == 0) {
    const sockaddr_in to = parse_addr(eng->peer_address(1));
    if (tcp)
      tcp_strangers(to);
    else
      udp_strangers(to);
    CHECK(s.send(token, 1, 7) == Errc::ok, "send token");
  } else {
    CHECK(s.recv(token, 0, 7) == Errc::ok, "recv token");
    // Datagrams sent before the token were queued before it: give progress a moment to
    // count them (they are processed in arrival order; the wait only absorbs batching).
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    const auto count = [&](const char* name) { return s.counter(name).value_or(0); };
    for (;;) {
      // tcp: the wrong key, the garbage, the data frame before any hello.
      const bool all = tcp ? count("tcp.bad_key") >= 1 && count("tcp.malformed") >= 1 &&
                                 count("tcp.unproven.rejected") >= 1
                           : count("udp.malformed") >= 2 && count("rel.malformed") >= 1 &&
                                 count("rel.bad_key") >= 1;
      if (all) break;
      CHECK(std::chrono::steady_clock::now() < end, "rejects not counted: %s",
            s.stats_report().c_str());
      s.progress();
    }
  }
  // The job itself is unaffected: messages both ways, verified.
  for (std::size_t size :
       {std::size_t{0}, std::size_t{100}, std::size_t{70000}, std::size_t{1} << 20}) {
    std::vector<unsigned char> out(size), in(size);
    for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<unsigned char>(i * 13 + size);
    sluice::Request r = s.irecv(std::as_writable_bytes(std::span(in)), 1 - s.rank(), 9);
    CHECK(s.send(std::as_bytes(std::span(out)), 1 - s.rank(), 9) == Errc::ok, "send %zu", size);
    CHECK(s.wait(r) == Errc::ok, "recv %zu", size);
    CHECK(in == out, "message of %zu bytes damaged", size);
  }
  if (s.rank() == 1) std::fprintf(stderr, "mp_stranger %s: ok, rejects counted\n", drv.c_str());
  return 0;
}
