// sluice-bench cannon: Cannon's matrix multiplication with the partial results accumulated
// on remote ranks by puts, in the spirit of [GASNet-Firehose] Table 3: how the pinning
// strategy of the packet path (SLUICE_RMA_FIREHOSE: on, rndv, rndv-unpin, pin-all, off)
// shapes an application's puts.
//
// q x q ranks (P = q^2), N x N doubles in b x b blocks (b = N / q). Rank (i, j) starts with
// A(i, i+j) and B(i+j, j) (Cannon's alignment); at each of the q steps it multiplies its
// blocks and puts the partial product of C(i, j), row by row, into the slot for that step at
// the rank that owns C(i, j), which is not itself but its neighbour ((i+1) mod q, j) (results
// "accumulated on remote nodes"); then it shifts its A block left and its B block up, again
// row by row by puts. Every put is blocking (an iput waited for: its latency is timed). After
// the last step each owner sums its slots and checks C against the product computed
// directly (small integers: exact). Reported (rank 0, totals over all ranks): puts, the share
// sent with no handshake (one-sided), handshakes (Firehose moves, rendezvous pin requests),
// their mean time, mean put latency, and the runtime.
//
//   SLUICE_RMA_PATH=packets SLUICE_RMA_FIREHOSE=on sluicerun -n 4 sluice-bench cannon
//       [--sizes N] [--json]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sluice/collectives.hpp>
#include <sluice/rma.hpp>
#include <sluice/sluice.hpp>
#include <string>
#include <vector>

#include "bench.hpp"

namespace sluice::bench {

namespace {

constexpr int kTag = 951;

uint64_t value(const Session& s, const char* name) {
  return s.counter(name).value_or(0);
}

double a_at(std::size_t r, std::size_t c) {
  return static_cast<double>((r * 7 + c * 3) % 4);
}
double b_at(std::size_t r, std::size_t c) {
  return static_cast<double>((r * 5 + c * 11) % 3);
}

}  // namespace

int run_cannon(Session& s, const Options& o) {
  const int p = s.size(), me = s.rank();
  const int q = static_cast<int>(std::lround(std::sqrt(static_cast<double>(p))));
  if (q * q != p) {
    if (me == 0) std::fprintf(stderr, "sluice-bench cannon: needs a square number of ranks\n");
    return 2;
  }
  const std::size_t n = o.sizes.empty() ? 256 : o.sizes.front();
  if (n % static_cast<std::size_t>(q) != 0 || n == 0) {
    if (me == 0) std::fprintf(stderr, "sluice-bench cannon: N must be a multiple of %d\n", q);
    return 2;
  }
  const std::size_t b = n / static_cast<std::size_t>(q), bb = b * b, row = b * sizeof(double);
  const int i = me / q, j = me % q;
  const auto rank_of = [q](int r, int c) { return ((r + q) % q) * q + (c + q) % q; };

  Rma rma(s);
  // Registered: A and B receive buffers (the next step's blocks), and q slots of C.
  std::vector<double> mem(2 * bb + static_cast<std::size_t>(q) * bb, 0.0);
  RegisteredMemory reg;
  if (rma.register_memory(std::as_writable_bytes(std::span(mem)), reg) != Errc::ok) return 1;
  std::vector<RemoteKey> keys(static_cast<std::size_t>(p));
  {
    const auto mine = reg.remote_key().pack();
    std::vector<std::array<std::byte, RemoteKey::packed_size>> in(static_cast<std::size_t>(p));
    std::vector<Request> reqs;
    for (int r = 0; r < p; ++r) {
      reqs.push_back(s.irecv(in[static_cast<std::size_t>(r)], r, kTag));
      reqs.push_back(s.isend(mine, r, kTag));
    }
    if (s.waitall(reqs) != Errc::ok) return 1;
    for (int r = 0; r < p; ++r)
      keys[static_cast<std::size_t>(r)] = RemoteKey::unpack(
          std::span<const std::byte, RemoteKey::packed_size>(in[static_cast<std::size_t>(r)]));
  }
  const uint64_t a_off = 0, b_off = bb * sizeof(double), c_off = 2 * bb * sizeof(double);

  // Cannon's alignment: A(i, i+j), B(i+j, j).
  std::vector<double> a(bb), bm(bb), part(bb);
  const std::size_t k0 = static_cast<std::size_t>((i + j) % q);
  for (std::size_t r = 0; r < b; ++r)
    for (std::size_t c = 0; c < b; ++c) {
      a[r * b + c] = a_at(static_cast<std::size_t>(i) * b + r, k0 * b + c);
      bm[r * b + c] = b_at(k0 * b + r, static_cast<std::size_t>(j) * b + c);
    }
  Collectives coll(s);
  const uint64_t puts0 = value(s, "rma.puts"), direct0 = value(s, "pinning.direct_ops"),
                 hs_ops0 = value(s, "pinning.handshake_ops"), hs0 = value(s, "pinning.handshakes"),
                 hs_ns0 = value(s, "pinning.handshake_time");
  double lat_sum = 0;
  uint64_t my_puts = 0;
  const auto put_row = [&](const double* src, int target, uint64_t off) -> bool {
    const auto t0 = std::chrono::steady_clock::now();
    Request r = rma.iput(std::as_bytes(std::span(src, b)), target,
                         keys[static_cast<std::size_t>(target)], off);
    if (s.wait(r) != Errc::ok) return false;
    lat_sum +=
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    ++my_puts;
    return true;
  };
  if (coll.barrier() != Errc::ok) return 1;
  const auto start = std::chrono::steady_clock::now();
  const int owner = rank_of(i + 1, j);  // who accumulates C(i, j)
  for (int step = 0; step < q; ++step) {
    std::fill(part.begin(), part.end(), 0.0);
    for (std::size_t r = 0; r < b; ++r)
      for (std::size_t k = 0; k < b; ++k) {
        const double x = a[r * b + k];
        const double* brow = &bm[k * b];
        double* prow = &part[r * b];
        for (std::size_t c = 0; c < b; ++c) prow[c] += x * brow[c];
      }
    for (std::size_t r = 0; r < b; ++r)
      if (!put_row(&part[r * b], owner,
                   c_off + (static_cast<uint64_t>(step) * bb + r * b) * sizeof(double)))
        return 1;
    if (step + 1 < q) {
      // Shift: A to the left neighbour, B to the one above.
      for (std::size_t r = 0; r < b; ++r) {
        if (!put_row(&a[r * b], rank_of(i, j - 1), a_off + r * row)) return 1;
        if (!put_row(&bm[r * b], rank_of(i - 1, j), b_off + r * row)) return 1;
      }
    }
    if (coll.barrier() != Errc::ok) return 1;
    std::copy(mem.begin(), mem.begin() + static_cast<std::ptrdiff_t>(bb), a.begin());
    std::copy(mem.begin() + static_cast<std::ptrdiff_t>(bb),
              mem.begin() + static_cast<std::ptrdiff_t>(2 * bb), bm.begin());
    if (coll.barrier() != Errc::ok) return 1;
  }
  const double runtime =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // This rank owns C(i - 1, j): the sum of its slots, against the direct product.
  const std::size_t ci = static_cast<std::size_t>((i - 1 + q) % q),
                    cj = static_cast<std::size_t>(j);
  uint64_t wrong = 0;
  for (std::size_t r = 0; r < b; ++r)
    for (std::size_t c = 0; c < b; ++c) {
      double sum = 0, want = 0;
      for (int k = 0; k < q; ++k) sum += mem[2 * bb + static_cast<std::size_t>(k) * bb + r * b + c];
      for (std::size_t k = 0; k < n; ++k) want += a_at(ci * b + r, k) * b_at(k, cj * b + c);
      wrong += sum != want;
    }
  uint64_t mine[8] = {value(s, "rma.puts") - puts0,
                      value(s, "pinning.direct_ops") - direct0,
                      value(s, "pinning.handshake_ops") - hs_ops0,
                      value(s, "pinning.handshakes") - hs0,
                      value(s, "pinning.handshake_time") - hs_ns0,
                      static_cast<uint64_t>(lat_sum * 1000),
                      wrong,
                      static_cast<uint64_t>(runtime * 1e9)};
  uint64_t all[8] = {};
  if (coll.allreduce(std::as_bytes(std::span(mine)), std::as_writable_bytes(std::span(all)),
                     Element::u64, ReduceOp::sum) != Errc::ok)
    return 1;
  (void)my_puts;
  if (me == 0) {
    const char* mode = std::getenv("SLUICE_RMA_FIREHOSE");
    const bool pinning = s.counter("pinning.direct_ops").has_value();
    const std::string strategy = !pinning ? "off" : (mode && *mode ? mode : "on");
    const double puts = static_cast<double>(all[0]);
    const double one_sided = puts > 0 ? static_cast<double>(all[1]) / puts : 0;
    const double move_us = all[3] ? static_cast<double>(all[4]) / 1000.0 / all[3] : 0;
    const double lat_us = puts > 0 ? static_cast<double>(all[5]) / 1000.0 / puts : 0;
    const double rt = static_cast<double>(all[7]) / 1e9 / p;  // mean over ranks
    if (o.json)
      std::printf(
          "{\"bench\":\"cannon\",\"driver\":\"%s\",\"strategy\":\"%s\",\"n\":%zu,\"ranks\":%d,"
          "\"puts\":%llu,\"one_sided_puts\":%llu,\"one_sided\":%.4f,\"handshake_puts\":%llu,"
          "\"moves\":%llu,\"move_avg_us\":%.2f,\"put_lat_us\":%.2f,\"runtime_s\":%.4f,"
          "\"verified\":%s}\n",
          std::string(s.driver_name(p > 1 ? 1 : 0)).c_str(), strategy.c_str(), n, p,
          (unsigned long long)all[0], (unsigned long long)all[1], one_sided,
          (unsigned long long)all[2], (unsigned long long)all[3], move_us, lat_us, rt,
          all[6] == 0 ? "true" : "false");
    else
      std::printf(
          "cannon N=%zu ranks=%d strategy=%s: %llu puts, one-sided %llu (%.2f %%), "
          "handshake %llu, moves %llu (avg %.2f us), put latency %.2f us, runtime %.4f s, %s\n",
          n, p, strategy.c_str(), (unsigned long long)all[0], (unsigned long long)all[1],
          one_sided * 100, (unsigned long long)all[2], (unsigned long long)all[3], move_us, lat_us,
          rt, all[6] == 0 ? "verified" : "WRONG RESULT");
  }
  return all[6] == 0 ? 0 : 1;
}

}  // namespace sluice::bench
