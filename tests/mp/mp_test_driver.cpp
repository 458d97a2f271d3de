// A driver added from outside the library: "testdgram" moves packets over AF_UNIX datagram
// sockets (abstract names, published through the bootstrap like a network driver's
// address). The test registers it, names it in SLUICE_DRIVERS, and checks that the engine
// routes peers to it (or, by locality, to shm on the same fake host), stacks the
// reliability layer on it when its caps say unreliable, and that messages of every
// protocol arrive intact. Adding a driver takes its folder and one registration line; here
// the registration line is register_driver_component() below.
//   mp_test_driver reliable|unreliable|hosts
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "drivers/registry.hpp"
#include "sluice/sluice.hpp"

namespace {

using namespace sluice;

bool g_unreliable = false;  // caps().reliable = false: the engine must stack the reliability layer

class TestDgramDriver final : public drivers::Driver {
 public:
  TestDgramDriver(int rank, int size, std::string job) : rank_(rank), peers_(size), job_(job) {
    caps_.max_header = 512;
    caps_.max_packet = 16384;
    caps_.inline_payload = 2048;
    caps_.reliable = caps_.ordered = !g_unreliable;
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const std::string name = address_of(rank);
    sockaddr_un a = to_sockaddr(name);
    int buf = 4 << 20;
    setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&a), addr_len(name)) != 0) ok_ = false;
  }
  ~TestDgramDriver() override {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return ok_; }
  std::string address_of(int rank) const {
    return "sluice-testdgram-" + job_ + "-" + std::to_string(rank);
  }
  void set_peer(int peer, std::string name) {
    peers_[static_cast<std::size_t>(peer)] = std::move(name);
  }
  const std::string& peer_name(int peer) const { return peers_[static_cast<std::size_t>(peer)]; }

  std::string_view name() const override { return "testdgram"; }
  const drivers::DriverCaps& caps() const override { return caps_; }
  bool reaches(int peer) const override { return !peers_[static_cast<std::size_t>(peer)].empty(); }
  drivers::IoStatus send(int peer, std::span<const std::byte> header,
                         std::span<const std::byte> payload) override {
    // [src rank u32][header length u32][header][payload]
    uint32_t meta[2] = {static_cast<uint32_t>(rank_), static_cast<uint32_t>(header.size())};
    iovec iov[3] = {{meta, sizeof meta},
                    {const_cast<std::byte*>(header.data()), header.size()},
                    {const_cast<std::byte*>(payload.data()), payload.size()}};
    const std::string& name = peers_[static_cast<std::size_t>(peer)];
    sockaddr_un a = to_sockaddr(name);
    msghdr mh{};
    mh.msg_name = &a;
    mh.msg_namelen = addr_len(name);
    mh.msg_iov = iov;
    mh.msg_iovlen = 3;
    if (sendmsg(fd_, &mh, 0) >= 0) return drivers::IoStatus::done;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
      return drivers::IoStatus::again;
    return drivers::IoStatus::failed;
  }
  int poll(drivers::PacketSink& sink, int budget) override {
    int n = 0;
    while (n < budget) {
      const ssize_t got = recv(fd_, rx_.data(), rx_.size(), 0);
      if (got < static_cast<ssize_t>(8)) break;
      uint32_t meta[2];
      std::memcpy(meta, rx_.data(), sizeof meta);
      if (8 + meta[1] > static_cast<std::size_t>(got)) break;
      const std::span<const std::byte> all(rx_.data(), static_cast<std::size_t>(got));
      sink.on_packet(static_cast<int>(meta[0]), all.subspan(8, meta[1]), all.subspan(8 + meta[1]));
      ++n;
    }
    return n;
  }

 private:
  static sockaddr_un to_sockaddr(const std::string& name) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path + 1, name.data(), std::min(name.size(), sizeof a.sun_path - 2));
    return a;
  }
  static socklen_t addr_len(const std::string& name) {
    return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  }
  int rank_;
  std::vector<std::string> peers_;
  std::string job_;
  drivers::DriverCaps caps_;
  int fd_ = -1;
  bool ok_ = true;
  std::vector<std::byte> rx_ = std::vector<std::byte>(1 << 17);
};

class TestDgramEndpoint final : public drivers::Endpoint {
 public:
  TestDgramEndpoint(std::unique_ptr<TestDgramDriver> d, std::vector<int> peers)
      : driver_(std::move(d)), raw_(driver_.get()), peers_(std::move(peers)) {}
  std::string connect(drivers::WireupServices& w) override {
    for (int r : peers_) {
      std::string name;
      if (!w.lookup("testdgram", r, name))
        return "testdgram: rank " + std::to_string(r) + " published nothing";
      raw_->set_peer(r, name);
    }
    return {};
  }
  std::vector<std::unique_ptr<drivers::Driver>> take_rails() override {
    std::vector<std::unique_ptr<drivers::Driver>> v;
    v.push_back(std::move(driver_));
    return v;
  }
  std::string peer_address(int peer) const override { return "@" + raw_->peer_name(peer); }

 private:
  std::unique_ptr<TestDgramDriver> driver_;
  TestDgramDriver* raw_;
  std::vector<int> peers_;
};

std::unique_ptr<drivers::Endpoint> open_testdgram(drivers::WireupServices& w,
                                                  std::span<const int> peers, std::string& err) {
  auto d = std::make_unique<TestDgramDriver>(w.rank(), w.size(), w.job_id());
  if (!d->ok()) {
    err = std::string("cannot bind: ") + std::strerror(errno);
    return nullptr;
  }
  if (!w.publish("testdgram", d->address_of(w.rank()))) {
    err = "bootstrap put failed";
    return nullptr;
  }
  return std::make_unique<TestDgramEndpoint>(std::move(d),
                                             std::vector<int>(peers.begin(), peers.end()));
}

constexpr util::ConfigKey kKeys[] = {
    {"TESTDGRAM_UNUSED",
     util::ConfigType::size,
     "0",
     {"0", "1M"},
     "a test driver's own key (unused)"},
};

const drivers::DriverComponent kTestDgram = {
    .name = "testdgram",
    .title = "test only: AF_UNIX datagrams (tests/mp/mp_test_driver.cpp)",
    .locality = drivers::Locality::any,
    .config = kKeys,
    .aliases = {},
    .open = open_testdgram,
};

int failures = 0;
void check(bool ok, const char* what, int rank) {
  if (!ok) {
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what);
    ++failures;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "reliable";
  g_unreliable = mode == "unreliable";
  drivers::register_driver_component(kTestDgram);  // the one registration line
  setenv("SLUICE_DRIVERS", mode == "hosts" ? "shm,testdgram" : "testdgram", 1);
  Session s;
  const int me = s.rank(), n = s.size();
  // Routes: testdgram (under the reliability layer when unreliable); with two fake hosts
  // (SLUICE_HOST_ID = rank / 2), shm for the peer on the same host.
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    std::string want = g_unreliable ? "testdgram+rel" : "testdgram";
    if (mode == "hosts" && p / 2 == me / 2) want = "shm";
    const std::string got(s.driver_name(p));
    if (got != want)
      std::fprintf(stderr, "rank %d: peer %d via '%s', expected '%s'\n", me, p, got.c_str(),
                   want.c_str());
    check(got == want, "route", me);
  }
  // Every protocol: empty, eager, pipelined rendezvous (no get on this driver), large.
  for (std::size_t size : {std::size_t{0}, std::size_t{8}, std::size_t{3000}, std::size_t{100000},
                           std::size_t{1} << 20}) {
    std::vector<std::vector<unsigned char>> in(n), out(n);
    std::vector<Request> reqs;
    for (int p = 0; p < n; ++p) {
      in[p].assign(size, 0);
      out[p].resize(size);
      for (std::size_t i = 0; i < size; ++i) out[p][i] = static_cast<unsigned char>(me * 7 + p + i);
      reqs.push_back(s.irecv(std::as_writable_bytes(std::span(in[p])), p, 5));
    }
    for (int p = 0; p < n; ++p) reqs.push_back(s.isend(std::as_bytes(std::span(out[p])), p, 5));
    check(s.waitall(reqs) == Errc::ok, "waitall", me);
    for (int p = 0; p < n; ++p)
      for (std::size_t i = 0; i < size; ++i)
        if (in[p][i] != static_cast<unsigned char>(p * 7 + me + i)) {
          check(false, "payload", me);
          break;
        }
  }
  s.barrier();
  if (me == 0 && failures == 0) std::printf("mp_test_driver %s: %d ranks ok\n", mode.c_str(), n);
  return failures == 0 ? 0 : 1;
}
