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
//  - each arm's observed cost: the median of its last kSamples send times, per byte;
//  - until an arm has kMinSamples observations, the cost model's prediction, scaled by how
//    the observed arms compare with their own predictions.
// Whether a buffer is in the cache is asked first (RegistrationCache::lookup): a registered
// buffer is sent by the cheapest of cached, superpipeline and copy. A buffer that is not
// compares the four others, a registering arm credited with what its registration saves the
// sends expected to reuse it (reuse/(1-reuse) of them, at most kMaxFutureUses). Every
// kExplorePeriod-th miss explores: a registering arm if none was chosen (else a buffer that
// starts being reused would never be registered to show it; these probes back off, doubling
// their period up to 16 times, while no hit follows), else the arm observed least recently
// among those within kExploreWithin of the best. On hits, superpipeline and copy are
// observed at first and then once in kHitRefreshPeriod hits (the less recent of the two).
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
  static constexpr unsigned kMinSamples = 2;
  static constexpr unsigned kExplorePeriod = 16;
  static constexpr unsigned kMaxBackoff = 4;  // registering probes: at most every 256 misses
  static constexpr unsigned kHitRefreshPeriod = 64;
  static constexpr double kExploreWithin = 1.5;
  static constexpr double kWarmupWithin = 4.0;  // arms predicted worse are not tried at all
  static constexpr double kReuseWeight = 1.0 / 8;
  static constexpr double kMaxFutureUses = 16;

  explicit AdaptiveSelector(const RegCostModel& model) : model_(&model) {}
  void set_model(const RegCostModel& model) { model_ = &model; }
  const RegCostModel& model() const { return *model_; }

  static uint8_t pattern_of(std::size_t bytes);
  // The arm for a send of `bytes` whose buffer is (`cached`) or is not in the cache.
  AdaptiveDecision choose(std::size_t bytes, bool cached);
  // The send `d` chose took `ns` nanoseconds (its start to its local completion).
  void observe(const AdaptiveDecision& d, std::size_t bytes, double ns);

  // What the selector expects an arm to cost for `bytes` now (observed, else predicted).
  double estimate_ns(AdaptiveArm arm, std::size_t bytes) const;
  double reuse_rate(std::size_t bytes) const { return patterns_[pattern_of(bytes)].reuse; }
  unsigned samples(AdaptiveArm arm, std::size_t bytes) const {
    return patterns_[pattern_of(bytes)].arms[static_cast<std::size_t>(arm)].n;
  }
  // One line per pattern used: its sends, reuse rate, each arm's estimate and last choice.
  std::string describe() const;

 private:
  struct Arm {
    std::array<double, kSamples> per_byte{};  // ns per byte, a ring
    uint8_t n = 0;                            // samples held (up to kSamples)
    uint8_t next = 0;
    uint64_t last = 0;  // the pattern's decision count when last chosen
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
  };
  double observed_ns(const Pattern& p, AdaptiveArm arm, std::size_t bytes) const;
  double estimate(const Pattern& p, AdaptiveArm arm, std::size_t bytes) const;
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
