// sluice-bench is: an application in the style of NAS IS (integer sort), which
// [NewMadeleine] ran because its large buffers are rarely reused (under 5 % registration-cache
// hits there), per registration strategy. Each iteration, on every rank:
//
//   1. keys: --sizes bytes of 32-bit keys, each the sum of four uniform numbers scaled to
//      [0, kMaxKey) (IS's generator: a bell-shaped distribution, so buckets are uneven);
//      two keys are changed per iteration, as IS does;
//   2. bucket counts: how many keys go to each rank (rank i owns the key range i/P of it),
//      exchanged with an alltoall;
//   3. the keys themselves, packed by destination, exchanged with an alltoallv (built from
//      irecv/isend to every rank and a waitall: the native API has no alltoallv);
//   4. a local counting sort of the received keys (IS's ranking), checked: every key in
//      this rank's range and in order, and no key lost (an allreduce of the counts).
//
// --pattern never (default): the send and receive buffers of steps 3 and 4 are fresh
// mappings every iteration, unmapped after it (IS's buffers, from the registration cache's
// point of view); always: allocated once. Time per iteration: the slowest rank's, median over
// --iters iterations (default 10) after one untimed. Per strategy (--strategies, default all
// seven) also the registration cache's lookups and hit rate on rank 0, and under adaptive
// what it chose. The emulated registration cost, when on, is said in every output.
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sluice/collectives.hpp>
#include <sluice/introspect.hpp>
#include <sluice/sluice.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench.hpp"
#include "rtt.hpp"

namespace sluice::bench {

namespace {

constexpr uint32_t kMaxKey = 1u << 23;

// An anonymous mapping of `n` 32-bit keys (fresh pages), unmapped on destruction.
class KeyBuffer {
 public:
  explicit KeyBuffer(std::size_t n) : bytes_(std::max<std::size_t>(n, 1) * sizeof(uint32_t)) {
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("is: cannot map " + std::to_string(bytes_));
    data_ = static_cast<uint32_t*>(p);
  }
  ~KeyBuffer() { munmap(data_, bytes_); }
  KeyBuffer(const KeyBuffer&) = delete;
  KeyBuffer& operator=(const KeyBuffer&) = delete;
  uint32_t* data() { return data_; }

 private:
  std::size_t bytes_;
  uint32_t* data_;
};

// IS's key generator in spirit: a linear congruential sequence, four draws per key.
struct KeyGen {
  uint64_t state;
  double next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) * (1.0 / 9007199254740992.0);
  }
  uint32_t key() {
    const double x = next() + next() + next() + next();
    return std::min<uint32_t>(kMaxKey - 1, static_cast<uint32_t>(x * (kMaxKey / 4)));
  }
};

uint64_t value(const Session& s, const std::string& name) {
  return s.counter(name).value_or(0);
}

struct Run {
  double s_per_iter = 0;
  uint64_t hits = 0, misses = 0;
  std::string adaptive;  // what adaptive chose, or ""
};

class IntegerSort {
 public:
  IntegerSort(Session& s, Collectives& c, std::size_t keys, bool fresh)
      : s_(s), c_(c), n_(keys), fresh_(fresh), p_(static_cast<std::size_t>(s.size())) {
    keys_.resize(n_);
    KeyGen g{0x5eed0000ull + static_cast<uint64_t>(s.rank())};
    for (auto& k : keys_) k = g.key();
    scount_.resize(p_);
    rcount_.resize(p_);
    if (!fresh_) {
      send_ = std::make_unique<KeyBuffer>(n_);
      recv_ = std::make_unique<KeyBuffer>(n_ * 2);  // room for uneven buckets
    }
  }

  // One iteration; throws on a wrong result.
  void iterate(int it) {
    const auto rank = static_cast<std::size_t>(s_.rank());
    keys_[static_cast<std::size_t>(it) % n_] = static_cast<uint32_t>(it);
    keys_[(static_cast<std::size_t>(it) + n_ / 2) % n_] = kMaxKey - 1 - static_cast<uint32_t>(it);
    // 1-2: bucket counts, exchanged.
    std::fill(scount_.begin(), scount_.end(), 0);
    for (uint32_t k : keys_) ++scount_[owner(k)];
    if (c_.ialltoall(std::as_bytes(std::span(scount_)), std::as_writable_bytes(std::span(rcount_)))
            .wait() != Errc::ok)
      throw std::runtime_error("is: alltoall failed");
    std::size_t received = 0;
    for (uint64_t r : rcount_) received += r;
    // 3: pack by destination, alltoallv.
    std::unique_ptr<KeyBuffer> send_fresh, recv_fresh;
    if (fresh_) {
      send_fresh = std::make_unique<KeyBuffer>(n_);
      recv_fresh = std::make_unique<KeyBuffer>(received);
    } else if (received > 2 * n_) {
      throw std::runtime_error("is: buckets too uneven for the kept receive buffer");
    }
    uint32_t* sb = fresh_ ? send_fresh->data() : send_->data();
    uint32_t* rb = fresh_ ? recv_fresh->data() : recv_->data();
    std::vector<std::size_t> sdispl(p_ + 1, 0), rdispl(p_ + 1, 0);
    for (std::size_t i = 0; i < p_; ++i) {
      sdispl[i + 1] = sdispl[i] + scount_[i];
      rdispl[i + 1] = rdispl[i] + rcount_[i];
    }
    std::vector<std::size_t> cursor(sdispl.begin(), sdispl.end() - 1);
    for (uint32_t k : keys_) sb[cursor[owner(k)]++] = k;
    std::vector<Request> reqs;
    reqs.reserve(2 * p_);
    constexpr int kTag = 4242;
    for (std::size_t i = 0; i < p_; ++i) {  // receives first, then sends from rank+1 on
      const std::size_t peer = (rank + p_ - i) % p_;
      reqs.push_back(s_.irecv(std::as_writable_bytes(std::span(rb + rdispl[peer], rcount_[peer])),
                              static_cast<int>(peer), kTag));
    }
    for (std::size_t i = 0; i < p_; ++i) {
      const std::size_t peer = (rank + i) % p_;
      reqs.push_back(s_.isend(std::as_bytes(std::span(sb + sdispl[peer], scount_[peer])),
                              static_cast<int>(peer), kTag));
    }
    if (s_.waitall(reqs) != Errc::ok) throw std::runtime_error("is: alltoallv failed");
    // 4: rank the keys (counting sort over this rank's key range), and check.
    const uint32_t lo = static_cast<uint32_t>(uint64_t{kMaxKey} * rank / p_);
    const uint32_t hi = static_cast<uint32_t>(uint64_t{kMaxKey} * (rank + 1) / p_);
    hist_.assign(hi - lo, 0);
    for (std::size_t i = 0; i < received; ++i) {
      if (rb[i] < lo || rb[i] >= hi) throw std::runtime_error("is: a key in the wrong bucket");
      ++hist_[rb[i] - lo];
    }
    std::size_t out = 0;
    for (std::size_t v = 0; v < hist_.size(); ++v)
      for (uint32_t c = 0; c < hist_[v]; ++c) rb[out++] = lo + static_cast<uint32_t>(v);
    for (std::size_t i = 1; i < received; ++i)
      if (rb[i - 1] > rb[i]) throw std::runtime_error("is: keys not sorted");
    uint64_t mine = received, total = 0;
    c_.allreduce(std::as_bytes(std::span(&mine, 1)), std::as_writable_bytes(std::span(&total, 1)),
                 Element::u64, ReduceOp::sum);
    if (total != n_ * p_) throw std::runtime_error("is: keys lost in the exchange");
  }

 private:
  std::size_t owner(uint32_t k) const {
    return static_cast<std::size_t>(uint64_t{k} * p_ / kMaxKey);
  }

  Session& s_;
  Collectives& c_;
  std::size_t n_;
  bool fresh_;
  std::size_t p_;
  std::vector<uint32_t> keys_;
  std::vector<uint64_t> scount_, rcount_;
  std::vector<uint32_t> hist_;
  std::unique_ptr<KeyBuffer> send_, recv_;
};

double max_over_ranks(Collectives& c, double v) {
  double out = 0;
  c.allreduce(std::as_bytes(std::span(&v, 1)), std::as_writable_bytes(std::span(&out, 1)),
              Element::f64, ReduceOp::max);
  return out;
}

}  // namespace

int run_is(Session& s, const Options& o) {
  if (s.size() < 2) {
    if (s.rank() == 0) std::fprintf(stderr, "sluice-bench is: needs 2 ranks or more\n");
    return 2;
  }
  if (o.pattern != "never" && o.pattern != "always" && o.pattern_given) {
    if (s.rank() == 0) std::fprintf(stderr, "sluice-bench is: --pattern never or always\n");
    return 2;
  }
  const bool fresh = !o.pattern_given || o.pattern == "never";
  std::vector<std::string> strategies = o.strategies;
  if (strategies.empty())
    strategies = {"copy", "register", "cache", "ondemand", "superpipeline", "pipeline", "adaptive"};
  std::vector<std::size_t> sizes = o.sizes;
  if (sizes.empty()) sizes = {std::size_t{16} << 20};
  const int iters = o.iters > 0 ? o.iters : 10;
  const std::string emulate = reg_emulation_label(s);
  const bool registers = introspect::route_registers(s, (s.rank() + 1) % s.size());
  Collectives c(s);
  if (s.rank() == 0) {
    if (o.json)
      std::printf(
          "{\"bench\":\"is\",\"ranks\":%d,\"driver\":\"%s\",\"route_registers\":%s,"
          "\"pattern\":\"%s\",\"iters\":%d,\"reg_emulate\":\"%s\"}\n",
          s.size(), std::string(s.driver_name(1)).c_str(), registers ? "true" : "false",
          fresh ? "never" : "always", iters, emulate.c_str());
    else
      std::printf(
          "# sluice-bench is: %d ranks, driver=%s (route registers memory: %s), buffers %s,"
          " median of %d iterations (slowest rank)\n# registration cost: %s\n"
          "%-14s %12s %12s %11s %9s %9s %8s  %s\n",
          s.size(), std::string(s.driver_name(1)).c_str(), registers ? "yes" : "no",
          fresh ? "fresh every iteration" : "allocated once", iters, emulate.c_str(), "strategy",
          "key_bytes", "ms_per_iter", "Mkeys/s", "hits", "misses", "hit_rate", "adaptive chose");
  }
  std::vector<Series> series;
  for (const std::string& name : strategies) {
    if (!use_strategy(s, name)) {
      if (s.rank() == 0) std::fprintf(stderr, "sluice-bench is: bad strategy '%s'\n", name.c_str());
      return 2;
    }
    Series line{name, {}, false};
    for (std::size_t bytes : sizes) {
      const std::size_t keys = std::max<std::size_t>(bytes / sizeof(uint32_t), s.size());
      IntegerSort sort(s, c, keys, fresh);
      sort.iterate(0);  // untimed (as IS's first ranking)
      const char* arms[] = {"cached", "cache", "ondemand", "superpipeline", "copy"};
      uint64_t arm0[5];
      for (int a = 0; a < 5; ++a) arm0[a] = value(s, std::string("reg.adaptive.") + arms[a]);
      const uint64_t h0 = value(s, "rcache.hits"), m0 = value(s, "rcache.misses");
      std::vector<double> times;
      for (int it = 1; it <= iters; ++it) {
        if (s.barrier() != Errc::ok) return 1;
        const auto t0 = std::chrono::steady_clock::now();
        sort.iterate(it);
        const double t =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        times.push_back(max_over_ranks(c, t));
      }
      std::sort(times.begin(), times.end());
      Run r;
      r.s_per_iter = times[times.size() / 2];
      r.hits = value(s, "rcache.hits") - h0;
      r.misses = value(s, "rcache.misses") - m0;
      for (int a = 0; a < 5; ++a)
        if (const uint64_t d = value(s, std::string("reg.adaptive.") + arms[a]) - arm0[a])
          r.adaptive +=
              (r.adaptive.empty() ? "" : ",") + std::string(arms[a]) + "=" + std::to_string(d);
      if (s.rank() != 0) continue;
      const double lookups = static_cast<double>(r.hits + r.misses);
      const double hit_rate = lookups > 0 ? static_cast<double>(r.hits) / lookups : 0.0;
      const double mkeys = static_cast<double>(keys) * s.size() / r.s_per_iter / 1e6;
      line.points.emplace_back(static_cast<double>(bytes), r.s_per_iter * 1e3);
      if (o.json)
        std::printf(
            "{\"bench\":\"is\",\"strategy\":\"%s\",\"key_bytes\":%zu,\"ms_per_iter\":%.3f,"
            "\"Mkeys_per_s\":%.2f,\"hits\":%llu,\"misses\":%llu,\"hit_rate\":%.4f,"
            "\"adaptive\":\"%s\",\"reg_emulate\":\"%s\"}\n",
            name.c_str(), bytes, r.s_per_iter * 1e3, mkeys, (unsigned long long)r.hits,
            (unsigned long long)r.misses, hit_rate, r.adaptive.c_str(), emulate.c_str());
      else
        std::printf("%-14s %12zu %12.3f %11.1f %9llu %9llu %8.3f  %s\n", name.c_str(), bytes,
                    r.s_per_iter * 1e3, mkeys, (unsigned long long)r.hits,
                    (unsigned long long)r.misses, hit_rate,
                    r.adaptive.empty() ? "-" : r.adaptive.c_str());
      std::fflush(stdout);
    }
    series.push_back(std::move(line));
  }
  if (s.rank() == 0 && !o.plot.empty()) {
    const std::string err =
        plot_series(series,
                    "sluice-bench is over " + std::string(s.driver_name(1)) + ", " +
                        std::to_string(s.size()) + " ranks, buffers " + (fresh ? "fresh" : "kept") +
                        (emulate == "off" ? std::string() : ", registration " + emulate),
                    "time per iteration (ms)", o.plot, "bytes of keys per rank");
    if (!err.empty()) {
      std::fprintf(stderr, "sluice-bench is: --plot: %s\n", err.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace sluice::bench
