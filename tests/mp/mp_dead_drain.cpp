// Messages a rank sent before it died are still delivered (run with `sluicerun -n 3
// --enable-recovery`, any driver). Rank 1 sends many small messages to rank 0 and is
// SIGKILLed; rank 0 takes all but the last DRAIN_TAIL of them, then sleeps, so the rest
// wait in its socket or ring when the launcher's failure notice arrives. Everything the local host
// already holds from the dead rank must be matched (in order, intact) before receives from it fail
// with peer_dead, and a live rank's traffic is unaffected. Rank 0 prints "rank 0: drained ok"; the
// job's exit status is the killed rank's, so the test expects a failing job with that line.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.hpp"
#include "sluice/sluice.hpp"

namespace {

constexpr int kMessages = 2000;

// Messages left for after the sleep (DRAIN_TAIL, default 48): over tcp nearly all of them
// can wait in rank 0's socket; over udp at most a window, over shm at most a ring.
int tail() {
  const char* t = std::getenv("DRAIN_TAIL");
  const int n = t ? std::atoi(t) : 48;
  return n > 0 && n <= kMessages ? n : 48;
}

std::string text(sluice::Errc e) {
  return std::string(sluice::to_string(e));
}

int value(int src, int i) {
  return src * 1'000'000 + i * 7 + 3;
}

}  // namespace

int main() {
  sluice::Session s;
  sluice::test::g_rank = s.rank();
  CHECK(s.size() == 3, "needs 3 ranks");
  const int messages = kMessages;
  int v = 0;
  auto bytes = std::as_writable_bytes(std::span(&v, 1));
  if (s.rank() != 0) {
    for (int i = 0; i < messages; ++i) {
      v = value(s.rank(), i);
      CHECK(s.send(bytes, 0, i) == sluice::Errc::ok, "send %d", i);
    }
    if (s.rank() == 1) {
      // Sends complete once buffered: drive progress a while so the bytes leave this
      // process (a tcp connection opens lazily), then die before any finalize.
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
      while (std::chrono::steady_clock::now() < until) s.progress();
      kill(getpid(), SIGKILL);
      return 1;
    }
    CHECK(s.recv(bytes, 0, messages) == sluice::Errc::ok, "done from rank 0");
    return 0;
  }
  int delivered = 0;
  for (int i = 0; i < messages; ++i) {
    // Let rank 1 send the rest and die, and the launcher's notice arrive, before looking.
    if (i == messages - tail()) sleep(2);
    const sluice::Errc e = s.recv(bytes, 1, i);
    if (e != sluice::Errc::ok) {
      std::fprintf(stderr, "rank 0: message %d of %d from the dead rank: %s\n", i, messages,
                   text(e).c_str());
      break;
    }
    CHECK(v == value(1, i), "message %d from rank 1 holds %d", i, v);
    ++delivered;
  }
  std::fprintf(stderr, "rank 0: %d of %d messages from the dead rank delivered\n", delivered,
               messages);
  CHECK(delivered == messages, "messages from the dead rank were lost");
  const sluice::Errc e = s.recv(bytes, 1, messages);
  CHECK(e == sluice::Errc::peer_dead, "a receive beyond them ended with %s", text(e).c_str());
  for (int i = 0; i < messages; ++i) {
    CHECK(s.recv(bytes, 2, i) == sluice::Errc::ok && v == value(2, i), "message %d, rank 2", i);
  }
  CHECK(s.send(bytes, 2, messages) == sluice::Errc::ok, "done to rank 2");
  std::fprintf(stderr, "rank 0: drained ok\n");
  return 0;
}
