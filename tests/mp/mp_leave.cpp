// A rank of a native-API job calls exit(3) while its Session, held in a global pointer, is
// still open, and rank 0 waits in a receive from it. The Session's destructor runs at exit and
// must not wait for the others (they are not finalizing): the rank leaves, and the launcher
// ends the job ("exited with status 3 before calling finalize"), or under --enable-recovery
// rank 0's receive fails with peer_dead and rank 0 prints "mp_leave: rank 0: ...".
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "sluice/sluice.hpp"

std::unique_ptr<sluice::Session> g_session;

int main() {
  g_session = std::make_unique<sluice::Session>();
  sluice::Session& s = *g_session;
  if (s.size() < 2) return 2;
  if (s.barrier() != sluice::Errc::ok) return 1;
  if (s.rank() == 1) {
    usleep(200 * 1000);  // rank 0 waits by now
    std::exit(3);
  }
  if (s.rank() == 0) {
    int v = 0;
    const sluice::Errc e = s.recv(std::as_writable_bytes(std::span(&v, 1)), 1, 1);
    if (e != sluice::Errc::peer_dead) {
      std::fprintf(stderr, "mp_leave: rank 0: the receive from rank 1 returned %s\n",
                   std::string(sluice::to_string(e)).c_str());
      return 1;
    }
    std::fprintf(stderr, "mp_leave: rank 0: the receive from rank 1 failed with peer_dead\n");
  }
  g_session.reset();
  return 0;
}
