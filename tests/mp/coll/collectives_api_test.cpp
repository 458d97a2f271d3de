// The public collectives API (include/sluice/collectives.hpp), through public headers only:
// every operation's result checked on every rank, several collectives in flight at once
// and waited out of order, typed reductions, refused arguments. Prints one line per rank.
#include <sluice/collectives.hpp>
#include <sluice/sluice.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

int g_failures = 0;

void check(bool ok, const char* what, int rank) {
  if (!ok) {
    std::fprintf(stderr, "collectives_api: rank %d: FAILED: %s\n", rank, what);
    ++g_failures;
  }
}

template <class T>
std::span<const std::byte> in(const std::vector<T>& v) {
  return std::as_bytes(std::span(v));
}
template <class T>
std::span<std::byte> out(std::vector<T>& v) {
  return std::as_writable_bytes(std::span(v));
}

// Value of element i of rank r's contribution: distinct per (rank, element).
std::int64_t value(int r, std::size_t i) {
  return 1000 * static_cast<std::int64_t>(r) + static_cast<std::int64_t>(i);
}

}  // namespace

int main() {
  sluice::Session s;
  sluice::Collectives world(s);
  const int me = world.rank(), P = world.size();
  const auto n = static_cast<std::size_t>(P);
  const std::size_t block = 3000;  // int64 elements per block: 24 KB, above the eager limit

  check(world.barrier() == sluice::Errc::ok, "barrier", me);

  // Gather, scatter, alltoall and allgather in flight together, waited in reverse order.
  std::vector<std::int64_t> mine(block), gathered(block * n), scatter_src(block * n),
      scattered(block), a2a_src(block * n), a2a_dst(block * n), allg(block * n);
  for (std::size_t i = 0; i < block; ++i) mine[i] = value(me, i);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t i = 0; i < block; ++i) {
      scatter_src[r * block + i] = value(static_cast<int>(r), i) + 7;
      a2a_src[r * block + i] = value(me, i) * 10 + static_cast<std::int64_t>(r);
    }
  const int root = P - 1;
  std::vector<sluice::CollRequest> reqs;
  reqs.push_back(world.igather(in(mine), out(gathered), root));
  reqs.push_back(world.iscatter(in(scatter_src), out(scattered), root));
  reqs.push_back(world.ialltoall(in(a2a_src), out(a2a_dst)));
  reqs.push_back(world.iallgather(in(mine), out(allg)));
  for (auto it = reqs.rbegin(); it != reqs.rend(); ++it)
    check(it->wait() == sluice::Errc::ok, "nonblocking wait", me);
  bool ok = true;
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t i = 0; i < block; ++i) {
      if (me == root) ok &= gathered[r * block + i] == value(static_cast<int>(r), i);
      ok &= allg[r * block + i] == value(static_cast<int>(r), i);
      ok &= a2a_dst[r * block + i] == value(static_cast<int>(r), i) * 10 + me;
    }
  for (std::size_t i = 0; i < block; ++i) ok &= scattered[i] == value(me, i) + 7;
  check(ok, "gather / scatter / alltoall / allgather contents", me);

  // Broadcast from every root in turn.
  for (int r = 0; r < P; ++r) {
    std::vector<std::int64_t> b(block, me == r ? r + 1 : -1);
    check(world.ibcast(out(b), r).wait() == sluice::Errc::ok, "bcast", me);
    bool same = true;
    for (auto v : b) same &= v == r + 1;
    check(same, "bcast contents", me);
  }

  // Reductions: every type and operation.
  std::vector<double> d(5, me + 1.5), dsum(5), dmax(5);
  check(world.allreduce(in(d), out(dsum), sluice::Element::f64, sluice::ReduceOp::sum) ==
            sluice::Errc::ok,
        "allreduce f64 sum", me);
  check(world.iallreduce(in(d), out(dmax), sluice::Element::f64, sluice::ReduceOp::max).wait() ==
            sluice::Errc::ok,
        "allreduce f64 max", me);
  double expect_sum = 0;
  for (int r = 0; r < P; ++r) expect_sum += r + 1.5;
  check(dsum[4] == expect_sum && dmax[0] == P - 1 + 1.5, "f64 results", me);
  std::vector<std::int32_t> iv(4, me - 1), imin(4), iprod(4);
  world.allreduce(in(iv), out(imin), sluice::Element::i32, sluice::ReduceOp::min);
  check(imin[3] == -1, "i32 min", me);
  // Signed overflow wraps (two's complement; the kernel library MPI uses too): rank 0
  // gives INT32_MAX, every other rank 1.
  std::vector<std::int32_t> wv(3, me == 0 ? INT32_MAX : 1), wsum(3);
  check(world.allreduce(in(wv), out(wsum), sluice::Element::i32, sluice::ReduceOp::sum) ==
            sluice::Errc::ok,
        "allreduce i32 sum", me);
  const auto want_wrap = static_cast<std::int32_t>(static_cast<std::uint32_t>(INT32_MAX) +
                                                   static_cast<std::uint32_t>(P - 1));
  check(wsum[0] == want_wrap && wsum[2] == want_wrap, "i32 sum wraps past INT32_MAX", me);
  std::vector<std::int64_t> pv(2, me == 0 ? INT64_MAX : 2), pprod(2);
  world.allreduce(in(pv), out(pprod), sluice::Element::i64, sluice::ReduceOp::prod);
  std::uint64_t want_prod = static_cast<std::uint64_t>(INT64_MAX);
  for (int r = 1; r < P; ++r) want_prod *= 2u;
  check(pprod[1] == static_cast<std::int64_t>(want_prod), "i64 prod wraps", me);
  std::vector<std::uint64_t> uv(2, static_cast<std::uint64_t>(me) + 2), uprod(2);
  world.allreduce(in(uv), out(uprod), sluice::Element::u64, sluice::ReduceOp::prod);
  std::uint64_t expect_prod = 1;
  for (int r = 0; r < P; ++r) expect_prod *= static_cast<std::uint64_t>(r) + 2;
  check(uprod[1] == expect_prod, "u64 prod", me);
  std::vector<float> fv(3, 1.0f), fsum(3);
  check(world.ireduce(in(fv), out(fsum), sluice::Element::f32, sluice::ReduceOp::sum, 0).wait() ==
            sluice::Errc::ok,
        "reduce", me);
  check(me != 0 || fsum[2] == static_cast<float>(P), "f32 reduce at root", me);

  // A request dropped without wait still completes (the next barrier needs it out of the way).
  std::vector<std::int64_t> detached_buf(16, me == 0 ? 42 : 0);  // outlives the request
  { sluice::CollRequest dropped = world.ibcast(out(detached_buf), 0); }
  check(world.barrier() == sluice::Errc::ok, "barrier after a detached collective", me);
  // No content check here: a later barrier does not order a detached collective (a tree
  // bcast's forwarder may still be on its way to us), only finalize drains it.

  // Refused before anything starts: same answer on every rank, nothing sent.
  std::vector<std::int64_t> small(block - 1);
  sluice::CollRequest bad = world.ialltoall(in(a2a_src), out(small));
  check(bad.valid() && bad.test(), "refused request is valid and done", me);
  check(bad.wait() == sluice::Errc::invalid_argument, "mismatched alltoall buffers refused", me);
  check(world.ibcast(out(small), P).wait() == sluice::Errc::invalid_argument, "root out of range",
        me);
  check(sluice::CollRequest().wait() == sluice::Errc::invalid_argument, "empty request", me);
  check(world.barrier() == sluice::Errc::ok, "final barrier", me);

  std::printf("collectives_api: rank %d of %d %s\n", me, P, g_failures == 0 ? "ok" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}
