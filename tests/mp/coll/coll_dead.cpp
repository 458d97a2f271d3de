// Sluice's own collective API (src/coll) when a rank is SIGKILLed mid-run, under
// `sluicerun -n 4 --enable-recovery` (docs/DESIGN.md "Peer failure"): each iteration
// starts three nonblocking collectives on the world group (barrier, 64 KiB allreduce,
// alltoall) and then finishes them. Checked on every survivor:
//  - the collectives in flight when the rank dies complete with Errc::peer_dead, also on
//    ranks that exchange no message with it (none hangs);
//  - later collectives on a group containing the dead rank complete at once with peer_dead
//    (Session::barrier too), those on a group without it work (result checked).
// Rank 0 prints "coll_dead: ok" at the end; the job's exit status is the killed rank's.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../check.hpp"
#include "coll/coll.hpp"
#include "sluice/sluice.hpp"

using sluice::Errc;
namespace coll = sluice::coll;

namespace {

constexpr uint32_t kWorldCtx = 0x7100'0000;
constexpr uint32_t kLiveCtx = 0x7100'0001;
constexpr std::size_t kCount = 16384;  // ints: 64 KiB, a rendezvous over every driver
constexpr int kMaxIters = 1000000;

void sum_ints(const void* in, void* inout, std::size_t n, const void*) {
  auto* a = static_cast<const int*>(in);
  auto* b = static_cast<int*>(inout);
  for (std::size_t i = 0; i < n; ++i) b[i] += a[i];
}

std::string text(Errc e) {
  return std::string(sluice::to_string(e));
}

}  // namespace

int main(int argc, char** argv) {
  sluice::Session session;
  sluice::test::g_rank = session.rank();
  const int P = session.size(), me = session.rank();
  CHECK(P >= 3, "needs at least 3 ranks");
  const int victim = P - 1;
  const int kill_at = argc > 1 ? std::atoi(argv[1]) : 20;
  coll::Group world;
  world.rank = me;
  world.size = P;
  world.ctx = kWorldCtx;
  for (int i = 0; i < P; ++i) world.world.push_back(i);
  const coll::Reducer sum{sum_ints, nullptr, sizeof(int), true};

  std::vector<int> in(kCount, me), out(kCount), a2a_in(256 * P, me), a2a_out(256 * P);
  int iter = 0;
  Errc err = Errc::ok;
  for (; iter < kMaxIters && err == Errc::ok; ++iter) {
    if (me == victim && iter == kill_at) kill(getpid(), SIGKILL);
    coll::Schedule* s[3] = {
        coll::ibarrier(world),
        coll::iallreduce(world, in.data(), out.data(), kCount, sum),
        coll::ialltoall(world, a2a_in.data(), a2a_out.data(), 256 * sizeof(int)),
    };
    for (coll::Schedule* x : s) {
      const Errc e = coll::finish(x);
      if (err == Errc::ok) err = e;
    }
    if (err == Errc::ok)
      CHECK(out[0] == P * (P - 1) / 2 && out[kCount - 1] == out[0], "allreduce %d", out[0]);
  }
  CHECK(err == Errc::peer_dead, "iteration %d ended with %s", iter - 1, text(err).c_str());
  std::fprintf(stderr, "rank %d: collectives failed with peer_dead in iteration %d\n", me,
               iter - 1);

  // Later collectives on the world group fail at once (no partner to wait for).
  for (coll::Schedule* x : {coll::ibarrier(world), coll::ibcast(world, in.data(), 64, 0),
                            coll::iallreduce(world, in.data(), out.data(), kCount, sum)}) {
    const Errc e = coll::finish(x);
    CHECK(e == Errc::peer_dead, "later collective on the world: %s", text(e).c_str());
  }
  // The Session's world barrier likewise (it still synchronises the survivors).
  const Errc b = session.barrier();
  CHECK(b == Errc::peer_dead, "Session::barrier after the failure: %s", text(b).c_str());
  // A group without the dead rank works.
  coll::Group live;
  live.rank = me;
  live.size = P - 1;
  live.ctx = kLiveCtx;
  for (int i = 0; i < P - 1; ++i) live.world.push_back(i);
  int mine = me, total = 0;
  const Errc e = coll::finish(coll::iallreduce(live, &mine, &total, 1, sum));
  CHECK(e == Errc::ok && total == (P - 1) * (P - 2) / 2, "allreduce without the dead rank: %s, %d",
        text(e).c_str(), total);
  CHECK(coll::finish(coll::ibarrier(live)) == Errc::ok, "barrier without the dead rank");
  if (me == 0) std::fprintf(stderr, "coll_dead: ok\n");
  return 0;
}
