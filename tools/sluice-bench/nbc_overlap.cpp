// sluice-bench nbc-overlap: overlap of nonblocking collectives (and Isend/Irecv) with
// computation, Intel IMB-NBC's method, through Sluice's public collectives API
// (sluice/collectives.hpp). The same method as bench/peers/mpi_nbc_overlap.c, which runs it
// through MPI on Sluice, Open MPI and MPICH; see that file for the ceiling.
//
//   t_pure   start, wait                          (the operation alone)
//   t_cpu    compute for t_pure, calibrated per rank, no Sluice call
//   t_ovrl   start, compute the same amount, wait (nothing calls Sluice in between: only
//            the progress thread can advance the operation)
//   overlap  = max(0, min(1, (t_pure + t_cpu - t_ovrl) / min(t_pure, t_cpu)))
// Each time: mean over `iters` calls of the slowest rank; the fastest of --reps repetitions
// (default 5; on a shared machine other jobs only add time). Sizes: bytes per rank block
// (gather, scatter, alltoall) or of the whole buffer (bcast, allreduce of floats, sendrecv).
// Policies come from the configuration: SLUICE_PROGRESS_THREAD and sluicerun --bind.
#include <sluice/collectives.hpp>
#include <sluice/sluice.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench.hpp"
#include "sizes.hpp"

namespace sluice::bench {

namespace {

using Clock = std::chrono::steady_clock;

double now() {
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

volatile double g_sink;

// A dependent floating-point chain: pure CPU, no memory traffic.
void compute(long n) {
  double a = 1.0;
  for (long i = 0; i < n; ++i) a = a * 1.0000001 + 1e-9;
  g_sink = a;
}

enum class Op { ibcast, igather, iscatter, ialltoall, iallreduce, isendrecv };
constexpr const char* kOpNames[] = {"ibcast",    "igather",    "iscatter",
                                    "ialltoall", "iallreduce", "isendrecv"};

class Runner {
 public:
  Runner(Session& s, Collectives& c) : s_(s), c_(c) {}

  // Starts one operation; finish() waits for it. sb and rb hold size() blocks of `size`.
  void start(Op op, std::size_t size, std::byte* sb, std::byte* rb) {
    op_ = op;
    const std::size_t all = size * static_cast<std::size_t>(c_.size());
    switch (op) {
      case Op::ibcast:
        req_ = c_.ibcast({sb, size}, 0);
        break;
      case Op::igather:
        req_ = c_.igather({sb, size}, {rb, all}, 0);
        break;
      case Op::iscatter:
        req_ = c_.iscatter({sb, all}, {rb, size}, 0);
        break;
      case Op::ialltoall:
        req_ = c_.ialltoall({sb, all}, {rb, all});
        break;
      case Op::iallreduce: {
        const std::size_t bytes = size / sizeof(float) * sizeof(float);
        req_ = c_.iallreduce({sb, bytes}, {rb, bytes}, Element::f32, ReduceOp::sum);
        break;
      }
      case Op::isendrecv: {
        const int peer = c_.rank() ^ 1;
        if (peer < c_.size()) {
          reqs_[0] = s_.irecv({rb, size}, peer, 5);
          reqs_[1] = s_.isend({sb, size}, peer, 5);
        }
        break;
      }
    }
  }
  bool finish() {
    if (op_ == Op::isendrecv) return s_.waitall(reqs_) == Errc::ok;
    return req_.wait() == Errc::ok;
  }
  double max_over_ranks(double v) {
    double out = 0;
    c_.allreduce(std::as_bytes(std::span(&v, 1)), std::as_writable_bytes(std::span(&out, 1)),
                 Element::f64, ReduceOp::max);
    return out;
  }

 private:
  Session& s_;
  Collectives& c_;
  Op op_ = Op::ibcast;
  CollRequest req_;
  Request reqs_[2];
};

// Bytes this rank copies for one operation on the two-copy shared-memory path.
double bytes_copied(Op op, std::size_t s, int rank, int P) {
  const double S = static_cast<double>(s);
  int log2p = 0;
  while ((1 << log2p) < P) ++log2p;
  switch (op) {
    case Op::ibcast:
      return rank == 0 ? log2p * S : 2 * S;
    case Op::igather:
    case Op::iscatter:
      return rank == 0 ? P * S : S;
    case Op::ialltoall:
      return (2.0 * (P - 1) + 1) * S;
    case Op::iallreduce:
      return 2.0 * log2p * S + S;
    case Op::isendrecv:
      return (rank ^ 1) < P ? 2 * S : 0;
  }
  return 0;
}

double copy_ns_per_byte(std::size_t s) {
  if (s == 0) return 0;
  std::vector<std::byte> a(s, std::byte{1}), c(s, std::byte{2});
  const int n = std::clamp<long>(64L * 1048576 / static_cast<long>(s), 8, 100000);
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    double t0 = now();
    for (int i = 0; i < n; ++i) {
      std::memcpy(i & 1 ? c.data() : a.data(), i & 1 ? a.data() : c.data(), s);
      g_sink = g_sink + static_cast<double>((i & 1 ? c : a)[s / 2]);
    }
    best = std::min(best, (now() - t0) / n);
  }
  return best * 1e9 / static_cast<double>(s);
}

}  // namespace

int run_nbc_overlap(Session& session, const Options& options) {
  const int rank = session.rank(), P = session.size();
  Collectives world(session);  // a context of its own, away from the p2p traffic on 0
  Runner run(session, world);
  const int reps = options.reps > 0 ? options.reps : 5;
  std::vector<std::size_t> sizes = options.sizes;
  if (sizes.empty())
    for (std::size_t s : {1, 64, 1024, 16384, 65536, 262144, 1048576, 4194304}) sizes.push_back(s);
  std::vector<Op> ops;
  for (std::size_t k = 0; k < std::size(kOpNames); ++k)
    if (options.ops.empty() ||
        ("," + options.ops + ",").find(std::string(",") + kOpNames[k] + ",") != std::string::npos)
      ops.push_back(static_cast<Op>(k));
  if (ops.empty()) {
    if (rank == 0)
      std::fprintf(stderr, "sluice-bench: no known op in --ops '%s'\n", options.ops.c_str());
    return 2;
  }
  const char* thread = std::getenv("SLUICE_PROGRESS_THREAD");
  const std::string driver(session.driver_name(P > 1 ? 1 - std::min(rank, 1) : 0));

  double ns_per_iter = 1e30;  // compute() calibration
  for (int r = 0; r < 5; ++r) {
    const long n = 4000000;
    double t0 = now();
    compute(n);
    ns_per_iter = std::min(ns_per_iter, (now() - t0) * 1e9 / n);
  }

  bool ok = true;
  for (Op op : ops) {
    for (std::size_t size : sizes) {
      if (op == Op::iallreduce && size < sizeof(float)) continue;
      std::vector<std::byte> sb(size * P, std::byte(rank + 1)), rb(size * P, std::byte{0});
      // Warm-up, then rank 0's iteration count (every rank must run the same number).
      double t0 = now();
      for (int i = 0; i < 5; ++i) {
        run.start(op, size, sb.data(), rb.data());
        ok &= run.finish();
      }
      double est = (now() - t0) / 5;
      int iters = std::clamp(static_cast<int>(0.05 / std::max(est, 1e-7)), 3, 5000);
      if (options.iters > 0) iters = options.iters;
      iters = static_cast<int>(run.max_over_ranks(rank == 0 ? iters : 0));
      if (size > 0 && (op == Op::ialltoall || (op == Op::igather && rank == 0)))
        for (int r = 0; r < P; ++r) ok &= rb[r * size] == std::byte(r + 1);

      auto measure = [&](int what, long ncpu) {
        session.barrier();
        double start = now();
        for (int i = 0; i < iters; ++i) {
          if (what != 1) run.start(op, size, sb.data(), rb.data());
          if (what != 0) compute(ncpu);
          if (what != 1) ok &= run.finish();
        }
        return run.max_over_ranks((now() - start) / iters);
      };
      std::vector<double> tp, tc, to;
      for (int r = 0; r < reps; ++r) tp.push_back(measure(0, 0));
      const double t_pure = *std::min_element(tp.begin(), tp.end());
      long ncpu = static_cast<long>(t_pure * 1e9 / ns_per_iter);
      for (int k = 0; k < 2 && ncpu > 0; ++k) {
        const int n = std::min(iters, 20);
        double c0 = now();
        for (int i = 0; i < n; ++i) compute(ncpu);
        const double t = (now() - c0) / n;
        if (t > 0) ncpu = static_cast<long>(static_cast<double>(ncpu) * t_pure / t);
      }
      for (int r = 0; r < reps; ++r) {
        tc.push_back(measure(1, ncpu));
        to.push_back(measure(2, ncpu));
      }
      const double t_cpu = *std::min_element(tc.begin(), tc.end());
      const double t_ovrl = *std::min_element(to.begin(), to.end());
      const double mn = std::min(t_pure, t_cpu);
      const double overlap = mn > 0 ? std::clamp((t_pure + t_cpu - t_ovrl) / mn, 0.0, 1.0) : 0.0;
      const double copy =
          run.max_over_ranks(bytes_copied(op, size, rank, P) * copy_ns_per_byte(size) * 1e-9);
      const double best_ovrl = std::max(t_pure, t_cpu + copy);
      const double ceiling = mn > 0 ? std::clamp((t_pure + t_cpu - best_ovrl) / mn, 0.0, 1.0) : 0.0;
      if (rank != 0) continue;
      const char* name = kOpNames[static_cast<int>(op)];
      if (options.json)
        std::printf(
            "{\"bench\":\"nbc-overlap\",\"impl\":\"sluice\",\"driver\":\"%s\",\"op\":\"%s\","
            "\"ranks\":%d,\"size\":%zu,\"iters\":%d,\"reps\":%d,\"progress_thread\":\"%s\","
            "\"t_pure_us\":%.3f,\"t_cpu_us\":%.3f,\"t_ovrl_us\":%.3f,\"copy_us\":%.3f,"
            "\"overlap\":%.3f,\"ceiling\":%.3f}\n",
            driver.c_str(), name, P, size, iters, reps, thread ? thread : "off", t_pure * 1e6,
            t_cpu * 1e6, t_ovrl * 1e6, copy * 1e6, overlap, ceiling);
      else
        std::printf(
            "%-10s ranks=%d size=%-8zu t_pure=%9.2fus t_cpu=%9.2fus t_ovrl=%9.2fus "
            "copy=%8.2fus overlap=%5.1f%% ceiling=%5.1f%%\n",
            name, P, size, t_pure * 1e6, t_cpu * 1e6, t_ovrl * 1e6, copy * 1e6, overlap * 100,
            ceiling * 100);
      std::fflush(stdout);
    }
  }
  if (!ok)
    std::fprintf(stderr, "sluice-bench: rank %d: an operation failed or gave wrong data\n", rank);
  return ok ? 0 : 1;
}

}  // namespace sluice::bench
