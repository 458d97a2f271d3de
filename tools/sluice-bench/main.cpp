// sluice-bench: Sluice's benchmarks, written against the public C++ API (nbc-overlap also
// uses the internal collective schedules, see nbc_overlap.cpp).
//
//   sluicerun -n 2 sluice-bench pingpong [--json] [--sizes 8,64K,1M] [--iters N]
//                                        [--window W] [--plot FILE.png] [--no-progress]
//   sluicerun -n N sluice-bench allconn [--json]
//   sluice-bench regcost [--json] [--sizes 4K,1M] [--iters N] [--plot FILE.png]
//   sluicerun -n 2 sluice-bench reuse [--pattern always|never|mixed] [--sizes 1M] [--iters N]
//                                     [--strategies copy,cache,adaptive,... [--reps N]] [--json]
//   sluicerun -n 2 sluice-bench firsttouch [--strategies copy,cache,...] [--sizes ...] [--iters N]
//                                          [--json] [--plot FILE.png]
//   sluicerun -n 2 sluice-bench pipeline [--sizes ...] [--iters N] [--json] [--plot FILE.png]
//   sluicerun -n 2 sluice-bench model [--strategies ...] [--sizes ...] [--iters N] [--json]
//                                     [--plot FILE.png]
//   sluicerun -n N sluice-bench is [--strategies ...] [--sizes 16M] [--iters N]
//                                  [--pattern never|always] [--json] [--plot FILE.png]
//   sluicerun -n 2 sluice-bench rma-ws [--sizes 1M,64M] [--iters N] [--reps N] [--json]
//                                      [--plot FILE.png]
//   sluicerun -n 4 sluice-bench cannon [--sizes N] [--json]
//
// Only rank 0 prints. Bad usage exits with status 2, a failed run with 1.
#include <sluice/sluice.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench.hpp"
#include "sizes.hpp"

namespace {

using sluice::bench::Options;

struct Benchmark {
  std::string_view name;
  std::string_view help;
  int (*run)(sluice::Session&, const Options&, double init_us);
};

constexpr Benchmark benchmarks[] = {
    {"pingpong", "two ranks: first / best / median half round trip and windowed bandwidth per size",
     [](sluice::Session& s, const Options& o, double) {
       return sluice::bench::run_pingpong(s, o);
     }},
    {"allconn", "N ranks: each sends 0 B to every other in ring order; time and memory per process",
     sluice::bench::run_allconn},
    {"nbc-overlap",
     "IMB-NBC overlap of ibcast, igather, iscatter, ialltoall, iallreduce, isend/irecv with\n"
     "              computation (t_pure, t_cpu, t_ovrl, overlap, ceiling) per size",
     [](sluice::Session& s, const Options& o, double) {
       return sluice::bench::run_nbc_overlap(s, o);
     }},
    {"regcost",
     "registration + deregistration time of the uring domain vs size, next to memcpy, and\n"
     "              the fit T_reg(L) = lambda_reg + L / B_reg (rank 0; default 4K .. 64M)",
     [](sluice::Session& s, const Options& o, double) { return sluice::bench::run_regcost(s, o); }},
    {"reuse",
     "two ranks: messages from buffers reused always, never or mixed (--pattern) under the\n"
     "              registration strategy in force (SLUICE_REG_STRATEGY): time per message,\n"
     "              bandwidth, cache hits / misses / invalidations (default 1M x 1000)",
     [](sluice::Session& s, const Options& o, double) { return sluice::bench::run_reuse(s, o); }},
    {"firsttouch",
     "two ranks: first and best round trip per registration strategy on fresh buffers\n"
     "              (--strategies, default all; [NewMadeleine] figure 7; default 32K .. 16M)",
     [](sluice::Session& s, const Options& o, double) {
       return sluice::bench::run_firsttouch(s, o);
     }},
    {"pipeline",
     "two ranks: copy path, register-per-message, fixed pipeline at its best chunk and\n"
     "              superpipeline, median round trip per size ([NewMadeleine] figure 6)",
     [](sluice::Session& s, const Options& o, double) {
       return sluice::bench::run_pipeline(s, o);
     }},
    {"is",
     "N ranks: NAS IS-style bucket sort (keys by alltoallv, buffers fresh every iteration\n"
     "              unless --pattern always) per registration strategy (--strategies): time\n"
     "              per iteration and registration-cache hit rate (--sizes: key bytes per rank,\n"
     "              default 16M; --iters, default 10)",
     [](sluice::Session& s, const Options& o, double) { return sluice::bench::run_is(s, o); }},
    {"model",
     "two ranks: [NewMadeleine]'s cost model (sluice-tune's profile or the defaults)\n"
     "              against measurement: copy, register, cache, pipeline, superpipeline\n"
     "              (--strategies), predicted and measured per size (default 64K .. 16M)",
     [](sluice::Session& s, const Options& o, double) { return sluice::bench::run_model(s, o); }},
    {"rma-ws",
     "two ranks: 8-byte put latency and 64 KiB put bandwidth vs the remote working set\n"
     "              (--sizes: working sets; default 1M .. 4 (M + MAXVICTIM)), with Firehose's\n"
     "              hit rate, one-sided share, moves and pinned memory (--iters puts per\n"
     "              latency point, default 2000; --reps puts per bandwidth point, default 512)",
     [](sluice::Session& s, const Options& o, double) { return sluice::bench::run_rma_ws(s, o); }},
    {"cannon",
     "q x q ranks: Cannon's matrix multiplication (--sizes N, default 256) with partial\n"
     "              results accumulated on remote ranks by blocking puts: puts, one-sided share,\n"
     "              moves, put latency and runtime under SLUICE_RMA_FIREHOSE's strategy",
     [](sluice::Session& s, const Options& o, double) { return sluice::bench::run_cannon(s, o); }},
};

std::string usage() {
  std::string u =
      "usage: sluicerun -n 2 sluice-bench <benchmark> [options]\n"
      "benchmarks:\n";
  for (const auto& b : benchmarks)
    u += "  " + std::string(b.name) + std::string(12 - b.name.size(), ' ') + std::string(b.help) +
         "\n";
  u += "options:\n"
       "  --json            one JSON object per size and line (default: a table)\n"
       "  --sizes LIST      comma-separated sizes in bytes, K/M/G suffixes (binary);\n"
       "                    default: 1 B .. --max-size in 5% steps (powers of 1.05)\n"
       "  --max-size S      largest size of the default sweep (default 16M)\n"
       "  --iters N         latency iterations per size (default 1000, fewer for large sizes);\n"
       "                    regcost: registrations per size\n"
       "  --reps N          bandwidth repetitions per size (default 100, fewer for large sizes)\n"
       "  --window W        messages in flight per bandwidth repetition (default 64)\n"
       "  --plot FILE.png   draw bandwidth against size with gnuplot\n"
       "  --ops LIST        nbc-overlap: operations to run (default all)\n"
       "  --pattern P       reuse: always, never or mixed (default always); is: never or always\n"
       "  --strategies LIST firsttouch, pipeline, model, is, reuse: registration strategies to\n"
       "                    compare\n"
       "  --no-progress     no progress line on stderr (shown only when stderr is a terminal)\n"
       "  -h, --help        show this help\n";
  return u;
}

struct Parsed {
  const Benchmark* bench = nullptr;
  Options options;
  std::string error;  // non-empty: bad usage
  bool help = false;
};

std::optional<int> parse_count(std::string_view s, int max) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < 1 || v > max) return std::nullopt;
  return v;
}

Parsed parse(int argc, char** argv) {
  Parsed p;
  Options& o = p.options;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view name = arg;
    std::optional<std::string_view> inline_value;
    if (arg.starts_with("--")) {
      if (auto eq = arg.find('='); eq != std::string_view::npos) {
        name = arg.substr(0, eq);
        inline_value = arg.substr(eq + 1);
      }
    }
    auto value = [&]() -> std::optional<std::string_view> {
      if (inline_value) return inline_value;
      if (i + 1 < argc) return std::string_view(argv[++i]);
      return std::nullopt;
    };
    auto flag = [&](bool& field, bool set) {
      if (inline_value) {
        p.error = std::string(name) + " takes no value";
      } else {
        field = set;
      }
    };
    if (name == "-h" || name == "--help") {
      p.help = true;
    } else if (name == "--json") {
      flag(o.json, true);
    } else if (name == "--no-progress") {
      flag(o.progress, false);
    } else if (name == "--sizes" || name == "--max-size" || name == "--iters" || name == "--reps" ||
               name == "--window" || name == "--plot" || name == "--ops" || name == "--pattern" ||
               name == "--strategies") {
      auto v = value();
      if (!v) {
        p.error = std::string(name) + " needs a value";
      } else if (name == "--sizes") {
        auto list = sluice::bench::parse_size_list(*v);
        if (!list)
          p.error = "bad --sizes list '" + std::string(*v) + "' (e.g. 8,4K,1M)";
        else
          o.sizes = *list;
      } else if (name == "--max-size") {
        auto s = sluice::bench::parse_size(*v);
        if (!s || *s == 0)
          p.error = "bad --max-size '" + std::string(*v) + "'";
        else
          o.max_size = *s;
      } else if (name == "--strategies") {
        o.strategies.clear();
        std::string_view rest = *v;
        while (!rest.empty()) {
          const auto comma = rest.find(',');
          o.strategies.emplace_back(rest.substr(0, comma));
          rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        }
        if (o.strategies.empty()) p.error = "--strategies needs a list";
      } else if (name == "--ops") {
        o.ops = std::string(*v);
      } else if (name == "--pattern") {
        if (*v != "always" && *v != "never" && *v != "mixed")
          p.error = "bad --pattern '" + std::string(*v) + "' (always, never or mixed)";
        o.pattern = std::string(*v);
        o.pattern_given = true;
      } else if (name == "--plot") {
        if (v->empty()) p.error = "--plot needs a file name";
        o.plot = std::string(*v);
      } else {
        int max = name == "--window" ? 4096 : 100000000;
        auto n = parse_count(*v, max);
        if (!n) {
          p.error = "bad value for " + std::string(name) + ": '" + std::string(*v) + "' (1.." +
                    std::to_string(max) + ")";
        } else if (name == "--iters") {
          o.iters = *n;
        } else if (name == "--reps") {
          o.reps = *n;
        } else {
          o.window = *n;
        }
      }
    } else if (arg.starts_with("-")) {
      p.error = "unknown option '" + std::string(arg) + "'";
    } else if (!p.bench) {
      for (const auto& b : benchmarks)
        if (b.name == arg) p.bench = &b;
      if (!p.bench) p.error = "unknown benchmark '" + std::string(arg) + "'";
    } else {
      p.error = "unexpected argument '" + std::string(arg) + "'";
    }
    if (!p.error.empty()) return p;
  }
  if (!p.bench && !p.help) p.error = "no benchmark given";
  return p;
}

// Under the launcher every rank parses the same arguments; only rank 0 should talk. A usage
// problem is found before the job is joined, so join it just to learn the rank (a process
// that cannot join is on its own and prints).
bool is_rank0() {
  try {
    sluice::Session s;
    return s.rank() == 0;
  } catch (const std::exception&) {
    return true;
  }
}

}  // namespace

int main(int argc, char** argv) {
  Parsed p = parse(argc, argv);
  if (p.help || !p.error.empty()) {
    bool ok = p.error.empty();
    if (is_rank0()) {
      if (!ok) std::fprintf(stderr, "sluice-bench: %s\n", p.error.c_str());
      std::fputs(usage().c_str(), ok ? stdout : stderr);
    }
    return ok ? 0 : 2;
  }
  try {
    auto t0 = std::chrono::steady_clock::now();
    sluice::Session session;
    double init_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    return p.bench->run(session, p.options, init_us);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice-bench: %s\n", e.what());
    return 1;
  }
}
