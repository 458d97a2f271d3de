// Blocking receives (Session::recv, the engine's request-free path) that are already waiting
// when their peer is SIGKILLed (run with `sluicerun -n 4 --enable-recovery`, any driver):
//  - a receive naming the rank that dies completes with Errc::peer_dead;
//  - after ack_failures(), an any-source receive waiting when a member dies completes with
//    peer_dead and names it;
//  - after the second ack, a blocking receive from the live rank works, and so does a
//    receive posted behind a pending irecv (the ordinary posted queue).
// The dying ranks sleep before the kill only so that rank 0 is likely already waiting
// (either order must pass). Rank 0 prints "rank 0: blocking receives ok"; the job's status
// is a killed rank's, so the test expects a failing job with that line in its output.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "check.hpp"
#include "sluice/sluice.hpp"

namespace {

std::string text(sluice::Errc e) {
  return std::string(sluice::to_string(e));
}

}  // namespace

int main() {
  sluice::Session s;
  sluice::test::g_rank = s.rank();
  CHECK(s.size() == 4, "needs 4 ranks");
  int v = 0;
  auto bytes = std::as_writable_bytes(std::span(&v, 1));
  if (s.rank() >= 2) {
    CHECK(s.recv(bytes, 0, 1) == sluice::Errc::ok, "go");
    usleep(300000);
    kill(getpid(), SIGKILL);
    return 1;
  }
  if (s.rank() == 1) {
    CHECK(s.recv(bytes, 0, 1) == sluice::Errc::ok, "go");
    v = 7;
    CHECK(s.send(bytes, 0, 7) == sluice::Errc::ok, "to the any-source receive");
    v = 8;
    CHECK(s.send(bytes, 0, 8) == sluice::Errc::ok, "to the irecv");
    v = 9;
    CHECK(s.send(bytes, 0, 8) == sluice::Errc::ok, "to the receive behind it");
    return 0;
  }
  int in = 0;
  auto in_bytes = std::as_writable_bytes(std::span(&in, 1));
  sluice::Status st;
  CHECK(s.send(bytes, 2, 1) == sluice::Errc::ok, "go to rank 2");
  sluice::Errc e = s.recv(in_bytes, 2, 5, &st);
  CHECK(e == sluice::Errc::peer_dead, "receive from rank 2 ended with %s", text(e).c_str());
  CHECK(s.ack_failures() == 1, "first ack");

  CHECK(s.send(bytes, 3, 1) == sluice::Errc::ok, "go to rank 3");
  e = s.recv(in_bytes, sluice::any_source, 6, &st);
  CHECK(e == sluice::Errc::peer_dead, "any-source receive ended with %s", text(e).c_str());
  CHECK(st.source == 3, "failed receive names rank %d, not the dead rank 3", st.source);
  CHECK(s.ack_failures() == 2, "second ack");

  CHECK(s.send(bytes, 1, 1) == sluice::Errc::ok, "go to rank 1");
  e = s.recv(in_bytes, sluice::any_source, 7, &st);
  CHECK(e == sluice::Errc::ok && in == 7 && st.source == 1, "from rank 1: %s, value %d, source %d",
        text(e).c_str(), in, st.source);
  int first = 0;
  sluice::Request r = s.irecv(std::as_writable_bytes(std::span(&first, 1)), 1, 8);
  e = s.recv(in_bytes, 1, 8, &st);
  CHECK(e == sluice::Errc::ok && in == 9, "receive behind the irecv: %s, value %d", text(e).c_str(),
        in);
  CHECK(s.wait(r) == sluice::Errc::ok && first == 8, "irecv got %d (posted first: 8)", first);
  std::fprintf(stderr, "rank 0: blocking receives ok\n");
  return 0;
}
