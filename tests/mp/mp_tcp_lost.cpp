// A tcp connection lost mid-run while both processes live on (rank 1 shuts its sockets
// to rank 0 down): each side sees EOF without a bye, declares the other dead, and its
// pending receive and rendezvous send complete with Errc::peer_dead instead of hanging.
// Needs SLUICE_DRIVERS=tcp and 2 ranks.
#include <arpa/inet.h>
#include <dirent.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.hpp"
#include "core/engine.hpp"
#include "sluice/sluice.hpp"

namespace {

int port_of(const std::string& addr) {
  return std::atoi(addr.substr(addr.rfind(':') + 1).c_str());
}

// Shuts down every connected TCP socket of this process with `port` at either end.
int shut_down_connections(int port_a, int port_b) {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  while (dirent* e = d ? readdir(d) : nullptr) {
    const int fd = std::atoi(e->d_name);
    sockaddr_in me{}, peer{};
    socklen_t l1 = sizeof me, l2 = sizeof peer;
    int type = 0;
    socklen_t lt = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &lt) != 0 || type != SOCK_STREAM) continue;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&me), &l1) != 0 || me.sin_family != AF_INET)
      continue;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &l2) != 0) continue;
    const int ports[2] = {ntohs(me.sin_port), ntohs(peer.sin_port)};
    for (int p : ports)
      if (p == port_a || p == port_b) {
        shutdown(fd, SHUT_RDWR);
        ++n;
        break;
      }
  }
  if (d) closedir(d);
  return n;
}

}  // namespace

int main() {
  sluice::Session s;
  sluice::test::g_rank = s.rank();
  CHECK(s.size() == 2, "needs 2 ranks");
  auto* eng = sluice::detail::current_engine();
  CHECK(s.driver_name(1 - s.rank()) == "tcp", "needs SLUICE_DRIVERS=tcp");
  char addr[64] = {};
  if (s.rank() == 0) {
    // Tell rank 1 where it listens (as rank 0 sees it): the connection has one of the two
    // listening ports at one end, whichever rank opened it.
    std::snprintf(addr, sizeof addr, "%s", eng->peer_address(1).c_str());
    CHECK(s.send(std::as_bytes(std::span(addr)), 1, 1) == sluice::Errc::ok, "send");
  } else {
    CHECK(s.recv(std::as_writable_bytes(std::span(addr)), 0, 1) == sluice::Errc::ok, "recv");
    const int n = shut_down_connections(port_of(addr), port_of(eng->peer_address(0)));
    CHECK(n >= 1, "found no connection to rank 0 to shut down");
  }
  std::vector<std::byte> in(64), out(4 << 20);
  sluice::Request r = s.irecv(in, 1 - s.rank(), 5);
  sluice::Request w = s.isend(out, 1 - s.rank(), 6);  // rendezvous: never answered
  const sluice::Errc er = s.wait(r);
  const sluice::Errc ew = s.wait(w);
  CHECK(er == sluice::Errc::peer_dead, "receive ended with %s",
        std::string(sluice::to_string(er)).c_str());
  CHECK(ew == sluice::Errc::peer_dead, "send ended with %s",
        std::string(sluice::to_string(ew)).c_str());
  std::fprintf(stderr, "rank %d: receive and send failed with peer_dead\n", s.rank());
  return 0;
}
