// Strategy adaptive's decision logic (src/proto/reg_adaptive.hpp), with synthetic costs: no
// driver, no clock. The "machine" below gives each arm a fixed time; the selector is fed
// those times and must settle on the cheapest arm for the reuse pattern it is shown, and
// come back when the pattern changes.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <map>

#include "proto/reg_adaptive.hpp"

namespace sluice::proto {
namespace {

constexpr std::size_t kSize = 1 << 20;

// A model that knows nothing (every arm predicted the same): all knowledge comes from
// observations.
class FlatModel final : public RegCostModel {
 public:
  double predict_ns(AdaptiveArm, std::size_t) const override { return 100000; }
  std::string describe() const override { return "flat"; }
};

// Fixed per-arm times (ns) of the synthetic machine.
struct Machine {
  std::array<double, kAdaptiveArms> ns{};
  double of(AdaptiveArm a) const { return ns[static_cast<std::size_t>(a)]; }
};

// Sends `n` messages; `cached(i)` says whether message i's buffer is in the cache before the
// selector is asked (a registering arm then makes the next one of the same buffer a hit,
// which the callers model). Returns how often each arm ran.
template <class Cached>
std::map<AdaptiveArm, int> run(AdaptiveSelector& s, const Machine& m, int n, Cached cached) {
  std::map<AdaptiveArm, int> used;
  for (int i = 0; i < n; ++i) {
    const AdaptiveDecision d = s.choose(kSize, cached(i));
    ++used[d.arm];
    s.observe(d, kSize, m.of(d.arm));
  }
  return used;
}

TEST(RegAdaptive, PicksTheCheapestArmForBuffersNeverReused) {
  FlatModel model;
  AdaptiveSelector s(model);
  Machine m;
  m.ns = {50e3, 400e3, 120e3, 90e3, 150e3};  // cached, cache_miss, ondemand, superpipeline, copy
  run(s, m, 64, [](int) { return false; });  // warm-up and learning
  const auto used = run(s, m, 160, [](int) { return false; });
  // Exploration: a refresh every kExplorePeriod misses, registering probes backed off.
  EXPECT_GE(used.at(AdaptiveArm::superpipeline), 160 - 2 * 160 / 16);
  EXPECT_LT(s.reuse_rate(kSize), 0.1);
}

TEST(RegAdaptive, PicksTheCachedPathForAReusedBuffer) {
  FlatModel model;
  AdaptiveSelector s(model);
  Machine m;
  m.ns = {50e3, 400e3, 120e3, 90e3, 150e3};
  // One buffer: once a registering arm ran, every later send finds it in the cache.
  bool registered = false;
  std::map<AdaptiveArm, int> used;
  for (int i = 0; i < 200; ++i) {
    const AdaptiveDecision d = s.choose(kSize, registered);
    if (i >= 100) ++used[d.arm];
    if (registers(d.arm)) registered = true;
    s.observe(d, kSize, m.of(d.arm));
  }
  // Superpipeline and copy are observed once in kHitRefreshPeriod hits.
  EXPECT_GE(used[AdaptiveArm::cached], 100 - 2 * 100 / AdaptiveSelector::kHitRefreshPeriod);
  EXPECT_GT(s.reuse_rate(kSize), 0.9);
}

TEST(RegAdaptive, CheapRegistrationIsWorthItEvenWithoutReuse) {
  // Registering on the critical path costs little (io_uring here): cache_miss is the
  // cheapest for fresh buffers and is chosen by cost.
  FlatModel model;
  AdaptiveSelector s(model);
  Machine m;
  m.ns = {50e3, 60e3, 80e3, 90e3, 150e3};
  run(s, m, 64, [](int) { return false; });
  int cache_miss = 0;
  for (int i = 0; i < 100; ++i) {
    const AdaptiveDecision d = s.choose(kSize, false);
    if (d.arm == AdaptiveArm::cache_miss) {
      ++cache_miss;
      EXPECT_EQ(d.reason, AdaptiveReason::cost);
    }
    s.observe(d, kSize, m.of(d.arm));
  }
  EXPECT_GE(cache_miss, 100 - 2 * 100 / 16);
}

TEST(RegAdaptive, ExpectedReuseJustifiesADearRegistration) {
  // Half the buffers come back (the reuse rate settles near 0.5): registering a missed one
  // (400 us) beats the superpipeline (90 us) once what it saves later counts
  // (90 - 50 = 40 us per reuse) — not here, 400 > 90 + 40. With registration at 120 us
  // it is: 120 - 40 < 90.
  FlatModel model;
  for (const double reg_ns : {400e3, 120e3}) {
    AdaptiveSelector s(model);
    Machine m;
    m.ns = {50e3, reg_ns, 1e9, 90e3, 150e3};  // ondemand made hopeless: two-way choice
    std::array<bool, 8> in_cache{};
    std::map<AdaptiveArm, int> used;
    for (int i = 0; i < 800; ++i) {
      const std::size_t b = static_cast<std::size_t>(i % 8);
      if (i % 2 == 1) in_cache[b] = false;  // odd messages use a fresh buffer
      const AdaptiveDecision d = s.choose(kSize, in_cache[b]);
      if (registers(d.arm)) in_cache[b] = true;
      if (i >= 400 && !in_cache[b]) ++used[d.arm];
      if (i >= 400 && registers(d.arm)) ++used[d.arm];
      s.observe(d, kSize, m.of(d.arm));
    }
    if (reg_ns > 200e3)
      EXPECT_GT(used[AdaptiveArm::superpipeline], used[AdaptiveArm::cache_miss]) << reg_ns;
    else
      EXPECT_GT(used[AdaptiveArm::cache_miss], used[AdaptiveArm::superpipeline]) << reg_ns;
  }
}

TEST(RegAdaptive, SwitchesBackWhenThePatternChanges) {
  FlatModel model;
  AdaptiveSelector s(model);
  Machine m;
  m.ns = {50e3, 400e3, 120e3, 90e3, 150e3};
  // Phase 1: one reused buffer -> the cached path.
  bool registered = false;
  auto reused = [&](int n) {
    std::map<AdaptiveArm, int> used;
    for (int i = 0; i < n; ++i) {
      const AdaptiveDecision d = s.choose(kSize, registered);
      ++used[d.arm];
      if (registers(d.arm)) registered = true;
      s.observe(d, kSize, m.of(d.arm));
    }
    return used;
  };
  reused(100);
  EXPECT_GE(reused(50)[AdaptiveArm::cached], 48);
  // Phase 2: fresh buffers only -> after a few misses, the superpipeline.
  run(s, m, 40, [](int) { return false; });
  const auto fresh = run(s, m, 100, [](int) { return false; });
  EXPECT_GE(fresh.at(AdaptiveArm::superpipeline), 100 - 2 * 100 / 16);
  EXPECT_LT(s.reuse_rate(kSize), 0.2);
  // Phase 3: one reused buffer again (not registered now): a registering probe (backed off
  // to at most every 16 kExplorePeriod misses) puts it in the cache, and from then on it is
  // a hit.
  registered = false;
  reused((AdaptiveSelector::kExplorePeriod << AdaptiveSelector::kMaxBackoff) + 1);
  EXPECT_TRUE(registered);
  EXPECT_GE(reused(50)[AdaptiveArm::cached], 48);
}

TEST(RegAdaptive, FollowsTheModelBeforeAnyObservation) {
  // A model that makes registration dear (the emulated InfiniBand cost) and a fresh
  // selector: the first choice for a fresh buffer is an observation of the cheapest
  // predicted arm, not the registering one.
  SimpleCostParams p;
  p.reg = {68000, 200.0 / 4096};
  SimpleCostModel model(p);
  AdaptiveSelector s(model);
  const std::size_t small = 64 * 1024;
  EXPECT_GT(model.predict_ns(AdaptiveArm::cache_miss, small),
            model.predict_ns(AdaptiveArm::superpipeline, small));
  const AdaptiveDecision d = s.choose(small, false);
  EXPECT_NE(d.arm, AdaptiveArm::cache_miss);
  // Chosen by the model, not explored: nothing is known yet to explore from.
  EXPECT_EQ(d.reason, AdaptiveReason::cost);
  AdaptiveArm cheapest = AdaptiveArm::cache_miss;
  for (const AdaptiveArm a :
       {AdaptiveArm::ondemand_miss, AdaptiveArm::superpipeline, AdaptiveArm::copy})
    if (model.predict_ns(a, small) < model.predict_ns(cheapest, small)) cheapest = a;
  EXPECT_EQ(d.arm, cheapest);
  // With io_uring's real cost, registering is the cheapest prediction for fresh buffers.
  SimpleCostParams cheap;
  cheap.reg = {350, 1.0 / 63.7};
  SimpleCostModel cheap_model(cheap);
  EXPECT_LT(cheap_model.predict_ns(AdaptiveArm::cache_miss, kSize),
            cheap_model.predict_ns(AdaptiveArm::copy, kSize));
}

TEST(RegAdaptive, CalibratedModelTimesAMissAsTheCachedPathPlusARegistration) {
  CostModel m;  // the built-in defaults (a profile's figures in a run with one)
  CalibratedCostModel c(m, "tcp");
  for (const std::size_t size : {std::size_t{64} << 10, kSize, std::size_t{16} << 20}) {
    const double miss = c.predict_ns(AdaptiveArm::cache_miss, size);
    const double hit = c.predict_ns(AdaptiveArm::cached, size);
    EXPECT_NEAR(miss - hit, m.reg.us(static_cast<double>(size)) * 1e3, 1.0) << size;
    EXPECT_GT(c.predict_ns(AdaptiveArm::copy, size), 0) << size;
    EXPECT_GT(c.predict_ns(AdaptiveArm::superpipeline, size), 0) << size;
  }
  EXPECT_NE(c.describe().find("for tcp"), std::string::npos) << c.describe();
}

TEST(RegAdaptive, PatternsAreSizeClasses) {
  EXPECT_EQ(AdaptiveSelector::pattern_of(65536), AdaptiveSelector::pattern_of(131071));
  EXPECT_NE(AdaptiveSelector::pattern_of(65536), AdaptiveSelector::pattern_of(131072));
  // What one class learns does not move another's choice.
  FlatModel model;
  AdaptiveSelector s(model);
  Machine m;
  m.ns = {50e3, 400e3, 120e3, 90e3, 150e3};
  run(s, m, 100, [](int) { return false; });
  EXPECT_EQ(s.samples(AdaptiveArm::superpipeline, 64 * 1024), 0u);
  EXPECT_GT(s.samples(AdaptiveArm::superpipeline, kSize), 0u);
  EXPECT_NE(s.describe().find("1048576 B..: 100 sends"), std::string::npos) << s.describe();
}

TEST(RegAdaptive, AFreshBufferOfAReusedPatternIsNotAnExploration) {
  // sluice-bench firsttouch's pattern with the emulated InfiniBand cost: fresh buffers, each
  // sent 20 times. Every buffer's first send (a miss) is decided by the model and what was
  // observed, never spent on an exploration: the first touch is what the benchmark times.
  SimpleCostParams p;
  p.reg = {68000, 200.0 / 4096};
  SimpleCostModel model(p);
  AdaptiveSelector s(model);
  Machine m;
  m.ns = {100e3, 300e3, 130e3, 140e3, 150e3};
  for (int rep = 0; rep < 8; ++rep) {
    bool registered = false;
    for (int i = 0; i < 20; ++i) {
      const AdaptiveDecision d = s.choose(kSize, registered);
      if (i == 0) {
        EXPECT_NE(d.reason, AdaptiveReason::explore) << "rep " << rep;
        EXPECT_FALSE(registered);
      }
      if (registers(d.arm)) registered = true;
      s.observe(d, kSize, m.of(d.arm));
    }
  }
  EXPECT_GT(s.reuse_rate(kSize), 0.5);
}

TEST(RegAdaptive, TwoSlowSamplesDoNotCondemnAnArm) {
  // The cached path's first two sends hit a burst of load (10x slower); its samples then
  // disagree, so it is observed again until they agree, and wins.
  FlatModel model;
  AdaptiveSelector s(model);
  Machine m;
  m.ns = {50e3, 400e3, 120e3, 90e3, 150e3};
  bool registered = false;
  int slow = 2;
  std::map<AdaptiveArm, int> used;
  for (int i = 0; i < 200; ++i) {
    const AdaptiveDecision d = s.choose(kSize, registered);
    if (i >= 100) ++used[d.arm];
    if (registers(d.arm)) registered = true;
    double ns = m.of(d.arm);
    if (d.arm == AdaptiveArm::cached && slow > 0) {
      --slow;
      ns *= 10;
    }
    s.observe(d, kSize, ns);
  }
  EXPECT_GE(used[AdaptiveArm::cached], 100 - 2 * 100 / AdaptiveSelector::kHitRefreshPeriod);
}

TEST(RegAdaptive, OldSamplesDecay) {
  // The cached path is slow for a while (samples that agree: condemned rightly), then the
  // machine changes. Its old samples expire after kMaxAge decisions, it is observed again
  // and chosen.
  FlatModel model;
  AdaptiveSelector s(model);
  Machine m;
  m.ns = {500e3, 400e3, 120e3, 90e3, 150e3};
  bool registered = false;
  auto reused = [&](int n) {
    std::map<AdaptiveArm, int> used;
    for (int i = 0; i < n; ++i) {
      const AdaptiveDecision d = s.choose(kSize, registered);
      ++used[d.arm];
      if (registers(d.arm)) registered = true;
      s.observe(d, kSize, m.of(d.arm));
    }
    return used;
  };
  EXPECT_GE(reused(300)[AdaptiveArm::superpipeline], 250);
  m.ns[static_cast<std::size_t>(AdaptiveArm::cached)] = 50e3;
  reused(1200);  // kMaxAge (1024) and some
  EXPECT_GE(reused(100)[AdaptiveArm::cached], 95);
}

TEST(RegAdaptive, NearlyEqualArmsDoNotFlipOnNoise) {
  // Superpipeline and copy within 0.5 % of each other, each sample +-2 % of noise: the arm in
  // use stays (kSwitchMargin) instead of following every crossing of the two medians.
  FlatModel model;
  AdaptiveSelector s(model);
  Machine m;
  m.ns = {1e9, 1e9, 1e9, 100e3, 100.5e3};
  uint32_t seed = 12345;
  auto noise = [&] {
    seed = seed * 1664525u + 1013904223u;
    return 1.0 + 0.02 * (static_cast<double>(seed >> 8) / double(1 << 24) * 2 - 1);
  };
  AdaptiveArm prev = AdaptiveArm::count;
  int switches = 0;
  for (int i = 0; i < 2000; ++i) {
    const AdaptiveDecision d = s.choose(kSize, false);
    if (i >= 100 && d.reason != AdaptiveReason::explore) {
      if (prev != AdaptiveArm::count && d.arm != prev) ++switches;
      prev = d.arm;
    }
    s.observe(d, kSize, m.of(d.arm) * noise());
  }
  EXPECT_LE(switches, 2);
}

TEST(RegAdaptive, RegisterIsAMissPlusTheReceiversRegistrationAndTheRelease) {
  // One definition of a cache miss for the model and the selector: strategy register's time
  // is adaptive's cache_miss plus what register alone pays (the receiver's registration and
  // the sender's release), with the emulated cost as with the real one.
  for (const LinearCost reg : {LinearCost{0.35, 58000}, LinearCost{68, 4096.0 / 0.2}}) {
    CostModel m;
    m.reg = reg;
    const DriverCost& d = *m.driver("tcp");
    CalibratedCostModel c(m, "tcp");
    for (const std::size_t size : {std::size_t{64} << 10, kSize, std::size_t{16} << 20}) {
      const double x = static_cast<double>(size);
      EXPECT_NEAR(c.predict_ns(AdaptiveArm::cache_miss, size), m.miss_us(d, size) * 1e3, 1e-6);
      EXPECT_NEAR(m.predict(CostProtocol::register_each, d, size).us,
                  m.miss_us(d, size) + m.reg.us(x) + m.dereg.us(x), 1e-9)
          << size;
    }
  }
}

}  // namespace
}  // namespace sluice::proto
