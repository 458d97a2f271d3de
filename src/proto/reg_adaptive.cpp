// Strategy adaptive: what reg_adaptive.hpp describes.
#include "proto/reg_adaptive.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

namespace sluice::proto {

const char* adaptive_arm_name(AdaptiveArm a) {
  switch (a) {
    case AdaptiveArm::cached:
      return "cached";
    case AdaptiveArm::cache_miss:
      return "cache_miss";
    case AdaptiveArm::ondemand_miss:
      return "ondemand_miss";
    case AdaptiveArm::superpipeline:
      return "superpipeline";
    case AdaptiveArm::copy:
      return "copy";
    case AdaptiveArm::count:
      break;
  }
  return "?";
}

const char* adaptive_reason_name(AdaptiveReason r) {
  switch (r) {
    case AdaptiveReason::hit:
      return "hit";
    case AdaptiveReason::cost:
      return "cost";
    case AdaptiveReason::reuse:
      return "reuse";
    case AdaptiveReason::explore:
      return "explore";
    case AdaptiveReason::count:
      break;
  }
  return "?";
}

// ---- the simple model ----

double SimpleCostModel::predict_ns(AdaptiveArm arm, std::size_t bytes) const {
  const double L = static_cast<double>(bytes);
  const double zerocopy = p_.net_latency_ns + L * p_.zerocopy_ns_per_byte;
  switch (arm) {
    case AdaptiveArm::cached:
      return zerocopy;
    case AdaptiveArm::cache_miss:
      return p_.reg.estimate_ns(bytes) + zerocopy;
    case AdaptiveArm::ondemand_miss: {
      // The first chunk's pinning runs during the rendezvous round trip (2 λ_net); what it
      // takes beyond that delays the zero-copy start (the fragments meanwhile go by copy).
      const double first = p_.reg.estimate_ns(std::min(bytes, p_.first_pin_chunk));
      return zerocopy + std::max(0.0, first - 2 * p_.net_latency_ns);
    }
    case AdaptiveArm::superpipeline: {
      // [NewMadeleine] equation 9 without sub-blocks (the stream drivers receive in place):
      // the first chunk's copy (hidden by the rendezvous when small), n = log_q(1 + L/C_0
      // (q - 1)) gaps, and copy overlapped with sending: the slower of the two sets the pace.
      const double c0 = static_cast<double>(p_.c0);
      const double q = std::max(p_.q, 1.0001);
      const double n = std::ceil(std::log1p(L / c0 * (q - 1)) / std::log(q));
      const double first =
          std::max(0.0, std::min(L, c0) * p_.copy_ns_per_byte - 2 * p_.net_latency_ns);
      return p_.net_latency_ns + L * std::max(p_.copy_ns_per_byte, p_.zerocopy_ns_per_byte) +
             first + n * p_.gap_ns;
    }
    case AdaptiveArm::copy:
      return p_.net_latency_ns + L * p_.net_ns_per_byte;
    case AdaptiveArm::count:
      break;
  }
  return 0;
}

std::string SimpleCostModel::describe() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "simple model: lambda_reg %.2f us, B_reg %.1f GB/s, B_copy %.1f GB/s, B_net %.1f "
                "GB/s (zero-copy %.1f), lambda_net %.1f us, g %.1f us",
                p_.reg.latency_ns / 1e3, p_.reg.ns_per_byte > 0 ? 1.0 / p_.reg.ns_per_byte : 0.0,
                1.0 / p_.copy_ns_per_byte, 1.0 / p_.net_ns_per_byte, 1.0 / p_.zerocopy_ns_per_byte,
                p_.net_latency_ns / 1e3, p_.gap_ns / 1e3);
  return buf;
}

// ---- the calibrated model ----

double CalibratedCostModel::predict_ns(AdaptiveArm arm, std::size_t bytes) const {
  const DriverCost* d = model_.driver(driver_);
  if (!d) return 0;
  double us = 0;
  switch (arm) {
    case AdaptiveArm::cached:
      us = model_.predict(CostProtocol::cached, *d, bytes).us;
      break;
    case AdaptiveArm::cache_miss:
      us = model_.miss_us(*d, bytes);
      break;
    case AdaptiveArm::ondemand_miss:
      us = model_.predict(CostProtocol::ondemand, *d, bytes).us;
      break;
    case AdaptiveArm::superpipeline:
      us = model_.predict(CostProtocol::superpipeline, *d, bytes).us;
      break;
    case AdaptiveArm::copy:
    case AdaptiveArm::count:
      us = model_.predict(CostProtocol::copy, *d, bytes).us;
      break;
  }
  return us * 1e3;
}

std::string CalibratedCostModel::describe() const {
  const DriverCost* d = model_.driver(driver_);
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "model %s for %s: lambda_reg %.2f us, B_reg %.0f MB/s, copy path %.0f MB/s, "
                "zero-copy %.0f MB/s, lambda_net %.1f us, g %.1f us",
                model_.source.c_str(), driver_.c_str(), model_.reg.latency_us, model_.reg.MBps,
                d ? d->copy_MBps : 0.0, d ? d->zc_MBps : 0.0, d ? d->lambda_us : 0.0,
                d ? d->gap_us : 0.0);
  return buf;
}

// ---- the selector ----

namespace {

// The lower median of v[0, n): a few values, sorted in place by insertion (std::sort on
// such small arrays trips GCC 12's -Warray-bounds).
double lower_median(double* v, std::size_t n) {
  for (std::size_t i = 1; i < n; ++i)
    for (std::size_t j = i; j > 0 && v[j - 1] > v[j]; --j) std::swap(v[j - 1], v[j]);
  return v[(n - 1) / 2];
}

constexpr std::size_t idx(AdaptiveArm a) {
  return static_cast<std::size_t>(a);
}

}  // namespace

uint8_t AdaptiveSelector::pattern_of(std::size_t bytes) {
  const unsigned k = bytes ? static_cast<unsigned>(std::bit_width(bytes)) - 1 : 0;
  return static_cast<uint8_t>(std::min<unsigned>(k, kPatterns - 1));
}

AdaptiveSelector::Observed AdaptiveSelector::observed(const Pattern& p, AdaptiveArm arm) const {
  const Arm& a = p.arms[idx(arm)];
  if (p.decisions <= a.summary_until) return a.summary;  // nothing came or expired since
  std::array<double, kSamples> v{};
  Observed o;
  uint64_t until = UINT64_MAX;
  for (std::size_t i = 0; i < a.n; ++i)
    if (p.decisions - a.at[i] <= kMaxAge) {
      v[o.n++] = a.per_byte[i];
      until = std::min(until, a.at[i] + kMaxAge);
    }
  if (o.n > 0) {
    // The lower median: one slow sample among two (a loaded machine) does not decide.
    o.median = lower_median(v.data(), o.n);
    o.fastest = v[0];  // sorted by lower_median
  }
  a.summary = o;
  a.summary_until = until;
  return o;
}

unsigned AdaptiveSelector::samples(AdaptiveArm arm, std::size_t bytes) const {
  return observed(patterns_[pattern_of(bytes)], arm).n;
}

AdaptiveSelector::View AdaptiveSelector::view(const Pattern& p,
                                              const std::array<double, kAdaptiveArms>& pred,
                                              std::size_t bytes) const {
  View v;
  v.bytes = static_cast<double>(bytes);
  for (std::size_t i = 0; i < kAdaptiveArms; ++i)
    v.obs[i] = observed(p, static_cast<AdaptiveArm>(i));
  // An arm not observed enough: the model, scaled by how the observed arms compare with it
  // (the model's figures are defaults; their ratios say more than their values).
  std::array<double, kAdaptiveArms> ratios{};
  std::size_t n = 0;
  for (std::size_t i = 0; i < kAdaptiveArms; ++i)
    if (v.obs[i].n >= kMinSamples && pred[i] > 0) ratios[n++] = v.obs[i].median * v.bytes / pred[i];
  const double scale = n > 0 ? lower_median(ratios.data(), n) : 1.0;
  for (std::size_t i = 0; i < kAdaptiveArms; ++i)
    v.est[i] = v.obs[i].n >= kMinSamples ? v.obs[i].median * v.bytes : pred[i] * scale;
  return v;
}

AdaptiveSelector::View AdaptiveSelector::view(const Pattern& p, std::size_t bytes) const {
  std::array<double, kAdaptiveArms> pred{};
  for (std::size_t i = 0; i < kAdaptiveArms; ++i)
    pred[i] = model_->predict_ns(static_cast<AdaptiveArm>(i), bytes);
  return view(p, pred, bytes);
}

double AdaptiveSelector::estimate_ns(AdaptiveArm arm, std::size_t bytes) const {
  return view(patterns_[pattern_of(bytes)], bytes).estimate(arm);
}

namespace {

// The cheapest of `n` costs, the one in use (`incumbent`, or n: none) kept unless another
// is cheaper by more than `margin`.
std::size_t cheapest(const double* cost, std::size_t n, std::size_t incumbent, double margin) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (cost[i] < cost[best]) best = i;
  if (incumbent < n && cost[incumbent] <= cost[best] * (1 + margin)) return incumbent;
  return best;
}

template <std::size_t N>
std::size_t index_of(const AdaptiveArm (&arms)[N], AdaptiveArm a) {
  for (std::size_t i = 0; i < N; ++i)
    if (arms[i] == a) return i;
  return N;
}

}  // namespace

AdaptiveDecision AdaptiveSelector::choose(std::size_t bytes, bool cached) {
  AdaptiveDecision d;
  d.pattern = pattern_of(bytes);
  Pattern& p = patterns_[d.pattern];
  ++p.decisions;
  // Once some send of the pattern registered its buffer, each send says whether its buffer
  // was still (or again) registered: the reuse the cache sees.
  if (p.registered) p.reuse += kReuseWeight * ((cached ? 1.0 : 0.0) - p.reuse);
  if (p.pred_bytes != bytes) {
    for (std::size_t i = 0; i < kAdaptiveArms; ++i)
      p.pred[i] = model_->predict_ns(static_cast<AdaptiveArm>(i), bytes);
    p.pred_bytes = bytes;
  }
  const View v = view(p, p.pred, bytes);
  if (cached) {
    p.backoff = 0;
    ++p.hits;
    return choose_hit(p, v, d);
  }
  ++p.misses;
  return choose_miss(p, v, d);
}

AdaptiveDecision AdaptiveSelector::choose_hit(Pattern& p, const View& v, AdaptiveDecision d) {
  // Registered already: the cached path, unless observations say copying is cheaper even
  // so (on loopback the kernel copies zero-copy sends anyway).
  constexpr AdaptiveArm kCandidates[] = {AdaptiveArm::cached, AdaptiveArm::superpipeline,
                                         AdaptiveArm::copy};
  constexpr std::size_t kN = 3;
  d.arm = AdaptiveArm::cached;
  d.reason = AdaptiveReason::hit;
  if (v.of(AdaptiveArm::cached).n < kMinSamples) return pick(p, d);
  std::array<double, kN> est{};
  for (std::size_t i = 0; i < kN; ++i) est[i] = v.estimate(kCandidates[i]);
  const std::size_t best =
      cheapest(est.data(), kN, index_of(kCandidates, p.hit_choice), kSwitchMargin);
  d.arm = kCandidates[best];
  d.reason = best == 0 ? AdaptiveReason::hit : AdaptiveReason::cost;
  p.hit_choice = d.arm;
  // Observations (a reused buffer's send: no first touch is slowed): first every arm not
  // hopeless whose samples are too few or disagree, the cheapest-looking first; then once in
  // kHitRefreshPeriod hits the least recently observed of those within kExploreWithin.
  std::size_t want = kN;
  for (std::size_t i = 0; i < kN; ++i) {
    if (i == best || v.of(kCandidates[i]).settled()) continue;
    const double e = v.optimistic(kCandidates[i]);
    if (e <= kWarmupWithin * est[best] && (want == kN || e < v.optimistic(kCandidates[want])))
      want = i;
  }
  if (want == kN && p.hits % kHitRefreshPeriod == 0) {
    for (std::size_t i = 0; i < kN; ++i) {
      if (i == best || est[i] > kExploreWithin * est[best]) continue;
      if (want == kN || p.arms[idx(kCandidates[i])].last < p.arms[idx(kCandidates[want])].last)
        want = i;
    }
  }
  if (want < kN) {
    d.arm = kCandidates[want];
    d.reason = AdaptiveReason::explore;
  }
  return pick(p, d);
}

AdaptiveDecision AdaptiveSelector::choose_miss(Pattern& p, const View& v, AdaptiveDecision d) {
  constexpr AdaptiveArm kCandidates[] = {AdaptiveArm::cache_miss, AdaptiveArm::ondemand_miss,
                                         AdaptiveArm::superpipeline, AdaptiveArm::copy};
  constexpr std::size_t kN = 4;
  std::array<double, kN> est{};
  for (std::size_t i = 0; i < kN; ++i) est[i] = v.estimate(kCandidates[i]);
  // A registering arm is credited with what a later send of the same buffer saves: the
  // cached path instead of the cheaper of superpipeline and copy, times the expected number
  // of such sends, reuse / (1 - reuse) (a buffer reused with probability r is sent
  // 1 / (1 - r) times in all).
  const double plain = std::min(est[2], est[3]);
  const double saved = std::max(0.0, plain - v.estimate(AdaptiveArm::cached));
  const double r = std::min(p.reuse, kMaxFutureUses / (1 + kMaxFutureUses));
  const double credit = saved * r / (1 - r);
  std::array<double, kN> eff{};
  for (std::size_t i = 0; i < kN; ++i) eff[i] = est[i] - (registers(kCandidates[i]) ? credit : 0.0);
  const std::size_t best =
      cheapest(eff.data(), kN, index_of(kCandidates, p.miss_choice), kSwitchMargin);
  d.arm = kCandidates[best];
  d.reason = registers(d.arm) && est[best] > plain ? AdaptiveReason::reuse : AdaptiveReason::cost;
  p.miss_choice = d.arm;

  // Explore only where misses are the steady state (a pattern whose buffers come back
  // amortises its first touches over the hits; exploring would slow exactly those), and
  // never before the pattern has an observation: its first send trusts the model.
  bool any_observed = false;
  for (std::size_t i = 0; i < kAdaptiveArms; ++i) any_observed = any_observed || v.obs[i].n > 0;
  if (!any_observed || p.reuse >= kExploreMissesBelow) return pick(p, d);

  // Warm-up: every arm not hopeless whose samples are too few or disagree, the
  // cheapest-looking first.
  {
    std::size_t want = kN;
    for (std::size_t i = 0; i < kN; ++i) {
      if (i == best || v.of(kCandidates[i]).settled()) continue;
      const double e = v.optimistic(kCandidates[i]);
      if (e <= kWarmupWithin * est[best] && (want == kN || e < v.optimistic(kCandidates[want])))
        want = i;
    }
    if (want < kN) {
      d.arm = kCandidates[want];
      d.reason = AdaptiveReason::explore;
      return pick(p, d);
    }
  }
  if (p.misses >= p.next_probe && !registers(d.arm)) {
    // Register one buffer now and then: whether buffers come back shows only in the cache.
    // Each such probe that no hit follows doubles the wait for the next (up to 16 times
    // kExplorePeriod): an application that never reuses pays for few of them.
    d.arm = est[0] <= est[1] ? AdaptiveArm::cache_miss : AdaptiveArm::ondemand_miss;
    d.reason = AdaptiveReason::explore;
    p.next_probe = p.misses + (uint64_t{kExplorePeriod} << std::min(p.backoff, kMaxBackoff));
    ++p.backoff;
    return pick(p, d);
  }
  if (p.misses >= p.next_refresh) {
    p.next_refresh = p.misses + kExplorePeriod;
    // Refresh the arm observed least recently among those nearly as good.
    std::size_t stale = kN;
    for (std::size_t i = 0; i < kN; ++i) {
      if (i == best || est[i] > kExploreWithin * est[best]) continue;
      if (stale == kN || p.arms[idx(kCandidates[i])].last < p.arms[idx(kCandidates[stale])].last)
        stale = i;
    }
    if (stale < kN) {
      d.arm = kCandidates[stale];
      d.reason = AdaptiveReason::explore;
    }
  }
  return pick(p, d);
}

AdaptiveDecision AdaptiveSelector::pick(Pattern& p, AdaptiveDecision d) {
  p.arms[idx(d.arm)].last = p.decisions;
  p.last = d.arm;
  if (registers(d.arm)) p.registered = true;
  return d;
}

void AdaptiveSelector::observe(const AdaptiveDecision& d, std::size_t bytes, double ns) {
  if (bytes == 0 || !(ns > 0) || d.arm == AdaptiveArm::count) return;
  Pattern& p = patterns_[d.pattern];
  Arm& a = p.arms[idx(d.arm)];
  a.per_byte[a.next] = ns / static_cast<double>(bytes);
  a.at[a.next] = p.decisions;
  a.next = static_cast<uint8_t>((a.next + 1) % kSamples);
  if (a.n < kSamples) ++a.n;
  a.summary_until = 0;
}

std::string AdaptiveSelector::describe() const {
  std::string out;
  char buf[160];
  for (std::size_t k = 0; k < kPatterns; ++k) {
    const Pattern& p = patterns_[k];
    if (p.decisions == 0) continue;
    const std::size_t lo = std::size_t{1} << k;
    const std::size_t probe = lo + lo / 2;
    std::snprintf(buf, sizeof buf, "%s%zu B..: %llu sends, reuse %.2f, last %s;",
                  out.empty() ? "" : " | ", lo, static_cast<unsigned long long>(p.decisions),
                  p.reuse, p.last == AdaptiveArm::count ? "-" : adaptive_arm_name(p.last));
    out += buf;
    const View v = view(p, probe);
    for (std::size_t i = 0; i < kAdaptiveArms; ++i) {
      const auto a = static_cast<AdaptiveArm>(i);
      std::snprintf(buf, sizeof buf, " %s %.1f us%s", adaptive_arm_name(a), v.estimate(a) / 1e3,
                    v.obs[i].n >= kMinSamples ? "" : " (model)");
      out += buf;
    }
  }
  return out.empty() ? "no send yet" : out;
}

}  // namespace sluice::proto
