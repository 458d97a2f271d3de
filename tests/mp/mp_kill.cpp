// A rank killed by SIGKILL in the middle of communication: the others are blocked in a
// receive from it, and the launcher must end the job with a message, not hang.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "sluice/sluice.hpp"

int main() {
  sluice::Session s;
  std::vector<std::byte> buf(1 << 20);
  // One real exchange first, so the victim dies with traffic in flight.
  if (s.rank() == 1) s.send(buf, 0, 1);
  if (s.rank() == 0) s.recv(buf, 1, 1);
  if (s.rank() == 1) {
    sluice::Request r = s.isend(buf, 0, 2);  // a rendezvous rank 0 never completes
    kill(getpid(), SIGKILL);
  }
  // Everyone else waits for a message that will never come.
  s.recv(buf, 1, 3);
  std::fprintf(stderr, "rank %d: unexpectedly received\n", s.rank());
  return 1;
}
