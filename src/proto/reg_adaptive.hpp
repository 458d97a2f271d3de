// Strategy adaptive (SLUICE_REG_STRATEGY=adaptive): [NewMadeleine]'s future work, to watch
// the registration cache's hits and misses and choose between strategies by the observed
// behaviour of the application. For each large send on a registration-capable route it
// picks one of
//
//   cached         the buffer is registered already (the cache holds it: one entry, sent
//                  zero-copy as strategy cache does; or the chunks ondemand pinned before,
//                  merged into one entry by registering it whole)
//   cache_miss     registered now through the cache, on the critical path, then zero-copy
//   ondemand_miss  pinned in the background while the rendezvous runs ([Open-MX])
//   superpipeline  copied through the pre-registered staging buffers ([NewMadeleine])
//   copy           the driver's copy path (no registration at all)
//
// by predicted cost. Sends are grouped into patterns by size class (2^k to 2^(k+1)-1 bytes);
// per pattern the selector keeps
//  - the reuse rate: of the sends that could have found their buffer registered (it was
//    registered by an earlier send: a registering arm ran, or the buffer was in the cache),
//    the share that did; an exponential average over recent sends, so it follows a change;
//  - each arm's observed cost: the lower median of its last kSamples send times per byte,
//    counting only samples from the pattern's last kMaxAge decisions (old ones decay: a
//    machine that changed, or a burst of load, is forgotten);
//  - until an arm has kMinSamples such observations, the cost model's prediction, scaled by
//    how the observed arms compare with their own predictions.
// An arm is judged by its samples once they agree (the median within kAgree of the fastest,
// or kSamples of them): until then it is observed again when its fastest sample says it
// could be competitive, so two slow samples on a loaded machine condemn nothing. Between
// arms whose estimates are within kSwitchMargin the one in use stays (noise does not flip it).
// Whether a buffer is in the cache is asked first (RegistrationCache::lookup): a registered
// buffer is sent by the cheapest of cached, superpipeline and copy. A buffer that is not
// compares the four others, a registering arm credited with what its registration saves the
// sends expected to reuse it (reuse/(1-reuse) of them, at most kMaxFutureUses).
// Exploration stays off a buffer's first touch: the first send of a pattern goes by the
// model (nothing to explore from), and misses are explored only where they are the
// pattern's steady state (reuse below kExploreMissesBelow); where buffers come back, a miss
// is a first touch that the later hits amortise, and is decided by the estimates alone. The
// cached, superpipeline and copy arms are observed on hits instead (a reused buffer's send):
// at first, then the least recently observed of those within kExploreWithin once in
// kHitRefreshPeriod hits. Where misses are explored, every kExplorePeriod-th one explores: a
// registering arm if none was chosen (else a buffer that starts being reused would never be
// registered to show it; these probes back off, doubling their period up to 16 times, while
// no hit follows), else the arm observed least recently among those within kExploreWithin.
//
// The selector is plain logic (no clock, no driver): PointToPoint times the sends and feeds
// observe(). The cost model behind the predictions is an interface (RegCostModel): the
// calibrated [NewMadeleine] model of cost_model.hpp (CalibratedCostModel), or for a driver
// it has no figures for, the simple model below (the memory domain's registration cost and
// default copy and network figures); either with SLUICE_REG_EMULATE's cost when dearer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "mem/registration.hpp"
#include "proto/cost_model.hpp"

namespace sluice::proto {

enum class AdaptiveArm : uint8_t { cached, cache_miss, ondemand_miss, superpipeline, copy, count };
inline constexpr std::size_t kAdaptiveArms = static_cast<std::size_t>(AdaptiveArm::count);
const char* adaptive_arm_name(AdaptiveArm a);
// Whether the arm leaves the buffer registered in the cache (later sends of it can hit).
constexpr bool registers(AdaptiveArm a) {
  return a == AdaptiveArm::cache_miss || a == AdaptiveArm::ondemand_miss;
}

// Why an arm was chosen (counted per reason).
enum class AdaptiveReason : uint8_t {
  hit,      // the buffer was registered already and the cached path is the cheapest
  cost,     // the cheapest prediction for a buffer not registered
  reuse,    // a registering arm, cheapest only with what it saves the expected reuses
  explore,  // an observation wanted (warm-up, stale arm, or a registration to see reuse)
  count
};
inline constexpr std::size_t kAdaptiveReasons = static_cast<std::size_t>(AdaptiveReason::count);
const char* adaptive_reason_name(AdaptiveReason r);

// Predicted time of one send by an arm: the interface the adaptive strategy asks.
class RegCostModel {
 public:
  virtual ~RegCostModel() = default;
  virtual double predict_ns(AdaptiveArm arm, std::size_t bytes) const = 0;
  // One line: the parameters in force.
  virtual std::string describe() const = 0;
};

// [NewMadeleine]'s model (section 2 to 4) with default figures: T_reg(L) = λ_reg + L/B_reg
// from the domain (or SLUICE_REG_EMULATE's target when larger), T_net(L) = λ_net + L/B_net,
// a copy at B_copy, the superpipeline's equation 9 and the rendezvous round trip 2 λ_net
// that on-demand pinning hides.
struct SimpleCostParams {
  mem::RegistrationCost reg;                // λ_reg and 1/B_reg
  double copy_ns_per_byte = 0.1;            // B_copy 10 GB/s
  double net_ns_per_byte = 0.2;             // B_net 5 GB/s by the driver's copy path
  double zerocopy_ns_per_byte = 0.15;       // ... sending from registered memory saves a copy
  double net_latency_ns = 15000;            // λ_net (one way, through the kernel)
  double gap_ns = 1500;                     // g: one more chunk (a syscall and a header)
  std::size_t c0 = 12 * 1024;               // superpipeline's first chunk
  double q = 1.5;                           // ... growth ratio
  std::size_t first_pin_chunk = 64 * 1024;  // ondemand's first chunk
};

class SimpleCostModel final : public RegCostModel {
 public:
  explicit SimpleCostModel(const SimpleCostParams& p) : p_(p) {}
  double predict_ns(AdaptiveArm arm, std::size_t bytes) const override;
  std::string describe() const override;
  const SimpleCostParams& params() const { return p_; }

 private:
  SimpleCostParams p_;
};

// The calibrated model (cost_model.hpp: a sluice-tune profile, or its built-in defaults) as
// the selector asks it, for one driver: what PointToPoint uses when the model has figures
// for the route's driver (SimpleCostModel otherwise). cache_miss is the cached protocol
// plus one registration (not released on the critical path).
class CalibratedCostModel final : public RegCostModel {
 public:
  CalibratedCostModel(CostModel model, std::string driver)
      : model_(std::move(model)), driver_(std::move(driver)) {}
  double predict_ns(AdaptiveArm arm, std::size_t bytes) const override;
  std::string describe() const override;

 private:
  CostModel model_;
  std::string driver_;
};

struct AdaptiveDecision {
  AdaptiveArm arm = AdaptiveArm::copy;
  AdaptiveReason reason = AdaptiveReason::cost;
  uint8_t pattern = 0;
};

class AdaptiveSelector {
 public:
  static constexpr std::size_t kPatterns = 48;  // size classes 2^0 .. 2^47
  static constexpr std::size_t kSamples = 8;
  static constexpr unsigned kMinSamples = 3;
  static constexpr double kAgree = 1.5;      // samples agree: their median within this of the min
  static constexpr uint64_t kMaxAge = 1024;  // a sample counts for this many decisions
  static constexpr double kSwitchMargin = 0.03;
  static constexpr unsigned kExplorePeriod = 32;
  static constexpr unsigned kMaxBackoff = 4;  // registering probes: at most every 512 misses
  static constexpr unsigned kHitRefreshPeriod = 64;
  static constexpr double kExploreWithin = 1.5;
  static constexpr double kWarmupWithin = 4.0;  // arms predicted worse are not tried at all
  static constexpr double kExploreMissesBelow = 0.5;
  static constexpr double kReuseWeight = 1.0 / 8;
  static constexpr double kMaxFutureUses = 16;

  explicit AdaptiveSelector(const RegCostModel& model) : model_(&model) {}
  void set_model(const RegCostModel& model) {
    model_ = &model;
    for (Pattern& p : patterns_) p.pred_bytes = 0;
  }
  const RegCostModel& model() const { return *model_; }

  static uint8_t pattern_of(std::size_t bytes);
  // The arm for a send of `bytes` whose buffer is (`cached`) or is not in the cache.
  AdaptiveDecision choose(std::size_t bytes, bool cached);
  // The send `d` chose took `ns` nanoseconds (its start to its local completion).
  void observe(const AdaptiveDecision& d, std::size_t bytes, double ns);

  // What the selector expects an arm to cost for `bytes` now (observed, else predicted).
  double estimate_ns(AdaptiveArm arm, std::size_t bytes) const;
  double reuse_rate(std::size_t bytes) const { return patterns_[pattern_of(bytes)].reuse; }
  // The arm's samples that still count (not older than kMaxAge decisions).
  unsigned samples(AdaptiveArm arm, std::size_t bytes) const;
  // One line per pattern used: its sends, reuse rate, each arm's estimate and last choice.
  std::string describe() const;

 private:
  // An arm's samples that count, summarised.
  struct Observed {
    unsigned n = 0;      // fresh samples
    double median = 0;   // their lower median, ns per byte
    double fastest = 0;  // their minimum, ns per byte
    bool settled() const {
      return n >= kMinSamples && (n >= kSamples || median <= kAgree * fastest);
    }
  };
  struct Arm {
    std::array<double, kSamples> per_byte{};  // ns per byte, a ring
    std::array<uint64_t, kSamples> at{};      // ... taken at this decision count
    uint8_t n = 0;                            // samples held (up to kSamples)
    uint8_t next = 0;
    uint64_t last = 0;  // the pattern's decision count when last chosen
    // observed() of the samples, valid while the decision count is at most summary_until
    // (when the oldest counted sample expires) and no sample came (0: not valid).
    mutable Observed summary;
    mutable uint64_t summary_until = 0;
  };
  struct Pattern {
    std::array<Arm, kAdaptiveArms> arms{};
    double reuse = 0;         // see the header comment
    bool registered = false;  // some send of this pattern registered its buffer
    uint64_t decisions = 0;
    uint64_t misses = 0;
    uint64_t hits = 0;
    uint64_t next_refresh = kExplorePeriod;  // the miss count of the next refresh
    uint64_t next_probe = kExplorePeriod;    // ... of the next registering probe
    unsigned backoff = 0;                    // registering probes since the last hit
    AdaptiveArm last = AdaptiveArm::count;
    AdaptiveArm hit_choice = AdaptiveArm::count;   // the arm in use for hits (not explored)
    AdaptiveArm miss_choice = AdaptiveArm::count;  // ... for misses
    // The model's predictions for pred_bytes (a send size repeats: not asked again).
    std::size_t pred_bytes = 0;
    std::array<double, kAdaptiveArms> pred{};
  };
  // What one decision knows of a pattern: each arm's observations and estimate (computed once
  // per decision: this runs on every large send).
  struct View {
    std::array<Observed, kAdaptiveArms> obs{};
    std::array<double, kAdaptiveArms> est{};  // ns
    double bytes = 0;
    const Observed& of(AdaptiveArm a) const { return obs[static_cast<std::size_t>(a)]; }
    double estimate(AdaptiveArm a) const { return est[static_cast<std::size_t>(a)]; }
    // The lowest the arm may cost: its fastest fresh sample while its samples disagree.
    double optimistic(AdaptiveArm a) const {
      const Observed& o = of(a);
      return o.n >= kMinSamples && !o.settled() ? o.fastest * bytes : estimate(a);
    }
  };
  Observed observed(const Pattern& p, AdaptiveArm arm) const;
  View view(const Pattern& p, const std::array<double, kAdaptiveArms>& pred,
            std::size_t bytes) const;
  View view(const Pattern& p, std::size_t bytes) const;  // asks the model
  AdaptiveDecision choose_hit(Pattern& p, const View& v, AdaptiveDecision d);
  AdaptiveDecision choose_miss(Pattern& p, const View& v, AdaptiveDecision d);
  AdaptiveDecision pick(Pattern& p, AdaptiveDecision d);

  const RegCostModel* model_;
  std::array<Pattern, kPatterns> patterns_{};
};

// A pinning domain's model and selector (PointToPoint keeps one per domain).
struct AdaptiveDomain {
  explicit AdaptiveDomain(std::unique_ptr<RegCostModel> m)
      : model(std::move(m)), selector(*model) {}
  std::unique_ptr<RegCostModel> model;
  AdaptiveSelector selector;
};

}  // namespace sluice::proto
