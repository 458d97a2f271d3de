// A rank of a native-API job leaves with its Session still open while rank 0 waits in a
// receive from it. The Session's destructor runs at exit and must not wait for the others
// (they are not finalizing): the rank leaves, and the launcher ends the job ("exited with
// status S before calling finalize"), or under --enable-recovery rank 0's receive fails with
// peer_dead and rank 0 prints "mp_leave: rank 0: ...".
//
//   mp_leave          the Session is held in a global pointer; rank 1 calls exit(3)
//   mp_leave static   the Session is a function-local static (destroyed by exit(), after
//                     every handler the library registered while constructing it); rank 1
//                     returns 0 from main
//   mp_leave static-finalize   the same Session, but every rank calls Session::finalize()
//                     and returns 0: the job succeeds
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "sluice/sluice.hpp"

namespace {

std::unique_ptr<sluice::Session> g_session;

sluice::Session& static_session() {
  static sluice::Session session;
  return session;
}

}  // namespace

int main(int argc, char** argv) {
  const bool finalize = argc > 1 && std::strcmp(argv[1], "static-finalize") == 0;
  const bool use_static = finalize || (argc > 1 && std::strcmp(argv[1], "static") == 0);
  if (!use_static) g_session = std::make_unique<sluice::Session>();
  sluice::Session& s = use_static ? static_session() : *g_session;
  if (s.size() < 2) return 2;
  if (s.barrier() != sluice::Errc::ok) return 1;
  if (finalize) {
    s.finalize();
    std::printf("mp_leave: rank %d finalized\n", s.rank());
    return 0;
  }
  if (s.rank() == 1) {
    usleep(200 * 1000);  // rank 0 waits by now
    if (use_static) return 0;
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
    // (Over tcp rank 0 learns of the leaving from the closed connection, maybe before the
    // launcher reaps rank 1: give the launcher the time to judge rank 1's exit first.)
    if (use_static) sleep(2);
  }
  if (!use_static) g_session.reset();
  return 0;
}
