// A peer that stops answering (SIGSTOP: its sockets stay open, nothing reaches it) over
// udp: the reliability layer's peer timeout (SLUICE_REL_PEER_TIMEOUT, set short by the
// test) declares it dead, and rank 0's pending receive from it and rendezvous send to it
// complete with Errc::peer_dead instead of hanging. Rank 0 then ends the stopped rank with
// SIGKILL, so the job fails (as it must) with the launcher naming rank 1.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "sluice/sluice.hpp"

int main() {
  sluice::Session s;
  if (s.size() != 2) {
    std::fprintf(stderr, "mp_peer_dead: needs 2 ranks\n");
    return 2;
  }
  int pid = getpid();
  std::span<std::byte> pid_bytes{reinterpret_cast<std::byte*>(&pid), sizeof pid};
  if (s.rank() == 1) {
    if (s.send(pid_bytes, 0, 1) != sluice::Errc::ok) return 3;
    raise(SIGSTOP);  // silent from here on, until rank 0 kills us
    return 4;
  }
  if (s.recv(pid_bytes, 1, 1) != sluice::Errc::ok) return 5;
  std::vector<std::byte> in(64), out(4 << 20);
  const auto t0 = std::chrono::steady_clock::now();
  sluice::Request r = s.irecv(in, 1, 5);
  sluice::Request w = s.isend(out, 1, 6);  // rendezvous: the rts is never acknowledged
  const sluice::Errc er = s.wait(r);
  const sluice::Errc ew = s.wait(w);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (er == sluice::Errc::peer_dead && ew == sluice::Errc::peer_dead)
    std::fprintf(stderr, "rank 0: receive and send failed with peer_dead after %.2f s\n", secs);
  else
    std::fprintf(stderr, "rank 0: unexpected results: recv %s, send %s\n",
                 std::string(sluice::to_string(er)).c_str(),
                 std::string(sluice::to_string(ew)).c_str());
  kill(pid, SIGKILL);
  sleep(30);  // the launcher ends the job now
  return 6;
}
