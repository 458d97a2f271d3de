// With SLUICE_NET_ADDR or SLUICE_NET_IF set, the network drivers' sockets bind that address,
// not 0.0.0.0: after every pair of ranks has exchanged messages, each rank looks at every
// IPv4 socket it holds (/proc/self/fd, getsockname) and checks that it is bound to
// $BIND_EXPECT (e.g. 127.0.0.1), with a port. Run over tcp and over udp.
#include <arpa/inet.h>
#include <dirent.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.hpp"
#include "sluice/sluice.hpp"

int main() {
  sluice::Session s;
  sluice::test::g_rank = s.rank();
  const char* expect = std::getenv("BIND_EXPECT");
  CHECK(expect && *expect, "BIND_EXPECT is not set");
  const int n = s.size(), r = s.rank();
  for (int peer = 0; peer < n; ++peer) {
    if (peer == r) continue;
    CHECK(std::string(s.driver_name(peer)) != "shm", "peer %d on shm: set SLUICE_DRIVERS", peer);
    std::vector<int> out(4096, r), in(4096, -1);
    sluice::Request rq = s.irecv(std::as_writable_bytes(std::span(in)), peer, 1);
    CHECK(s.send(std::as_bytes(std::span(out)), peer, 1) == sluice::Errc::ok, "send to %d", peer);
    CHECK(s.wait(rq) == sluice::Errc::ok, "recv from %d", peer);
    CHECK(in[4095] == peer, "message from %d damaged", peer);
  }
  int inet = 0;
  DIR* d = opendir("/proc/self/fd");
  CHECK(d, "opendir");
  while (dirent* e = readdir(d)) {
    const int fd = std::atoi(e->d_name);
    if (e->d_name[0] == '.' || fd == dirfd(d)) continue;
    sockaddr_in a{};
    socklen_t len = sizeof a;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0 || a.sin_family != AF_INET)
      continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
    int type = 0;
    socklen_t tl = sizeof type;
    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl);
    CHECK(std::string(text) == expect && a.sin_port != 0, "%s socket fd %d is bound to %s:%u",
          type == SOCK_STREAM ? "tcp" : "udp", fd, text, ntohs(a.sin_port));
    ++inet;
  }
  closedir(d);
  CHECK(inet > 0, "no IPv4 socket found");
  CHECK(s.barrier() == sluice::Errc::ok, "barrier");
  std::printf("mp_bind: rank %d: %d IPv4 sockets, all bound to %s\n", r, inet, expect);
  return 0;
}
