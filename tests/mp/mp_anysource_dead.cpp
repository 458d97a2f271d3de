// A rank SIGKILLed while rank 0 is blocked in an any-source receive (run with
// `sluicerun -n 3 --enable-recovery`, any driver). ULFM semantics, checked step by step:
//  - the pending any-source receive completes with Errc::peer_dead (no hang);
//  - a later any-source receive fails the same way while the failure is unacknowledged,
//    but one that matches a message already arrived from a live rank still succeeds;
//  - receives from and sends to the dead rank fail; after ack_failures() any-source
//    receives work again, and traffic with the live rank is unaffected.
// Rank 0 prints "rank 0: any-source ok" at the end; the job's exit status is the killed
// rank's (137), so the test expects a failing job with that line in its output.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

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
  CHECK(s.size() == 3, "needs 3 ranks");
  int v = 0;
  auto bytes = std::as_writable_bytes(std::span(&v, 1));
  if (s.rank() == 2) {
    // Wait until rank 0 has posted its any-source receive, then die.
    CHECK(s.recv(bytes, 0, 1) == sluice::Errc::ok, "go");
    kill(getpid(), SIGKILL);
    return 1;
  }
  if (s.rank() == 1) {
    v = 7;
    CHECK(s.send(bytes, 0, 7) == sluice::Errc::ok, "early message");
    v = 8;
    CHECK(s.send(bytes, 0, 8) == sluice::Errc::ok, "marker");
    // After rank 0 acknowledged the failure: a message for its any-source receive.
    CHECK(s.recv(bytes, 0, 9) == sluice::Errc::ok, "ack notice");
    v = 10;
    CHECK(s.send(bytes, 0, 10) == sluice::Errc::ok, "after ack");
    return 0;
  }
  // Rank 1's tag-7 message arrived before its tag-8 one (non-overtaking): it is stored.
  CHECK(s.recv(bytes, 1, 8) == sluice::Errc::ok && v == 8, "marker from rank 1");

  int in = 0;
  auto in_bytes = std::as_writable_bytes(std::span(&in, 1));
  sluice::Request pending = s.irecv(in_bytes, sluice::any_source, 5);
  v = 1;
  CHECK(s.send(bytes, 2, 1) == sluice::Errc::ok, "go to rank 2");
  const auto t0 = std::chrono::steady_clock::now();
  sluice::Status st;
  sluice::Errc e = s.wait(pending, &st);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(e == sluice::Errc::peer_dead, "pending any-source receive ended with %s", text(e).c_str());
  CHECK(st.source == 2, "failed receive names rank %d, not the dead rank 2", st.source);
  std::fprintf(stderr, "rank 0: pending any-source receive failed with peer_dead after %.2f s\n",
               secs);

  e = s.recv(in_bytes, sluice::any_source, 5);
  CHECK(e == sluice::Errc::peer_dead, "later any-source receive ended with %s", text(e).c_str());
  e = s.probe(sluice::any_source, 5, &st);
  CHECK(e == sluice::Errc::peer_dead, "any-source probe ended with %s", text(e).c_str());
  e = s.recv(in_bytes, sluice::any_source, 7, &st);
  CHECK(e == sluice::Errc::ok && in == 7 && st.source == 1,
        "an arrived message did not match: %s, value %d, source %d", text(e).c_str(), in,
        st.source);
  e = s.recv(in_bytes, 2, 3);
  CHECK(e == sluice::Errc::peer_dead, "receive from the dead rank ended with %s", text(e).c_str());
  e = s.send(bytes, 2, 3);
  CHECK(e == sluice::Errc::peer_dead, "send to the dead rank ended with %s", text(e).c_str());
  const std::vector<int> failed = s.failed_ranks();
  CHECK(failed.size() == 1 && failed[0] == 2, "failed_ranks() has %zu entries", failed.size());

  CHECK(s.ack_failures() == 1, "ack_failures()");
  CHECK(s.send(bytes, 1, 9) == sluice::Errc::ok, "ack notice to rank 1");
  e = s.recv(in_bytes, sluice::any_source, 10, &st);
  CHECK(e == sluice::Errc::ok && in == 10 && st.source == 1,
        "any-source receive after the ack: %s, value %d, source %d", text(e).c_str(), in,
        st.source);
  std::fprintf(stderr, "rank 0: any-source ok\n");
  return 0;
}
