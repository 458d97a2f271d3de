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
      us = model_.predict(CostProtocol::cached, *d, bytes).us +
           model_.reg.us(static_cast<double>(bytes));
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

}  // namespace

uint8_t AdaptiveSelector::pattern_of(std::size_t bytes) {
  const unsigned k = bytes ? static_cast<unsigned>(std::bit_width(bytes)) - 1 : 0;
  return static_cast<uint8_t>(std::min<unsigned>(k, kPatterns - 1));
}

double AdaptiveSelector::observed_ns(const Pattern& p, AdaptiveArm arm, std::size_t bytes) const {
  const Arm& a = p.arms[static_cast<std::size_t>(arm)];
  std::array<double, kSamples> v{};
  std::copy_n(a.per_byte.begin(), a.n, v.begin());
  // The lower median: one slow sample among two (a loaded machine) does not decide.
  return lower_median(v.data(), a.n) * static_cast<double>(bytes);
}

double AdaptiveSelector::estimate(const Pattern& p, AdaptiveArm arm, std::size_t bytes) const {
  if (p.arms[static_cast<std::size_t>(arm)].n >= kMinSamples) return observed_ns(p, arm, bytes);
  // Not observed enough: the model, scaled by how the observed arms compare with it (the
  // model's figures are defaults; their ratios say more than their values).
  std::array<double, kAdaptiveArms> ratios{};
  std::size_t n = 0;
  for (std::size_t i = 0; i < kAdaptiveArms; ++i) {
    const auto a = static_cast<AdaptiveArm>(i);
    if (p.arms[i].n < kMinSamples) continue;
    const double pred = model_->predict_ns(a, bytes);
    if (pred > 0) ratios[n++] = observed_ns(p, a, bytes) / pred;
  }
  double scale = 1;
  if (n > 0) scale = lower_median(ratios.data(), n);
  return model_->predict_ns(arm, bytes) * scale;
}

double AdaptiveSelector::estimate_ns(AdaptiveArm arm, std::size_t bytes) const {
  return estimate(patterns_[pattern_of(bytes)], arm, bytes);
}

AdaptiveDecision AdaptiveSelector::choose(std::size_t bytes, bool cached) {
  AdaptiveDecision d;
  d.pattern = pattern_of(bytes);
  Pattern& p = patterns_[d.pattern];
  ++p.decisions;
  // Once some send of the pattern registered its buffer, each send says whether its buffer
  // was still (or again) registered: the reuse the cache sees.
  if (p.registered) p.reuse += kReuseWeight * ((cached ? 1.0 : 0.0) - p.reuse);
  if (cached) p.backoff = 0;

  if (cached) {
    // Registered already: the cached path, unless observations say copying is cheaper even
    // so (on loopback the kernel copies zero-copy sends anyway). Those two are observed on
    // hits too: at first, then one hit in kHitRefreshPeriod for the less recent of them.
    ++p.hits;
    constexpr AdaptiveArm kCandidates[] = {AdaptiveArm::cached, AdaptiveArm::superpipeline,
                                           AdaptiveArm::copy};
    d.arm = AdaptiveArm::cached;
    d.reason = AdaptiveReason::hit;
    const Arm& cached_arm = p.arms[static_cast<std::size_t>(AdaptiveArm::cached)];
    if (cached_arm.n < kMinSamples) return pick(p, d);
    const double hit_est = estimate(p, AdaptiveArm::cached, bytes);
    double best = hit_est;
    for (AdaptiveArm a : kCandidates) {
      const double e = estimate(p, a, bytes);
      if (e < best) {
        best = e;
        d.arm = a;
        d.reason = AdaptiveReason::cost;
      }
    }
    const Arm& sp = p.arms[static_cast<std::size_t>(AdaptiveArm::superpipeline)];
    const Arm& cp = p.arms[static_cast<std::size_t>(AdaptiveArm::copy)];
    const AdaptiveArm older = sp.last <= cp.last ? AdaptiveArm::superpipeline : AdaptiveArm::copy;
    const Arm& o = p.arms[static_cast<std::size_t>(older)];
    if (older != d.arm && estimate(p, older, bytes) <= kWarmupWithin * best &&
        (o.n < kMinSamples || p.hits % kHitRefreshPeriod == 0)) {
      d.arm = older;
      d.reason = AdaptiveReason::explore;
    }
    return pick(p, d);
  }

  ++p.misses;
  constexpr AdaptiveArm kCandidates[] = {AdaptiveArm::cache_miss, AdaptiveArm::ondemand_miss,
                                         AdaptiveArm::superpipeline, AdaptiveArm::copy};
  std::array<double, 4> est{};
  double best_est = 1e300;
  for (std::size_t i = 0; i < 4; ++i) {
    est[i] = estimate(p, kCandidates[i], bytes);
    best_est = std::min(best_est, est[i]);
  }
  // Warm-up: every arm not hopeless by the model gets kMinSamples observations, cheapest
  // prediction first.
  {
    std::size_t want = 4;
    for (std::size_t i = 0; i < 4; ++i)
      if (p.arms[static_cast<std::size_t>(kCandidates[i])].n < kMinSamples &&
          est[i] <= kWarmupWithin * best_est && (want == 4 || est[i] < est[want]))
        want = i;
    if (want < 4) {
      d.arm = kCandidates[want];
      d.reason = AdaptiveReason::explore;
      return pick(p, d);
    }
  }
  // A registering arm is credited with what a later send of the same buffer saves: the
  // cached path instead of the cheaper of superpipeline and copy, times the expected number
  // of such sends, reuse / (1 - reuse) (a buffer reused with probability r is sent
  // 1 / (1 - r) times in all).
  const double plain = std::min(est[2], est[3]);
  const double saved = std::max(0.0, plain - estimate(p, AdaptiveArm::cached, bytes));
  const double r = std::min(p.reuse, kMaxFutureUses / (1 + kMaxFutureUses));
  const double credit = saved * r / (1 - r);
  std::size_t best = 0;
  double best_eff = 1e300;
  for (std::size_t i = 0; i < 4; ++i) {
    const double eff = est[i] - (registers(kCandidates[i]) ? credit : 0.0);
    if (eff < best_eff) {
      best_eff = eff;
      best = i;
    }
  }
  d.arm = kCandidates[best];
  d.reason = registers(d.arm) && est[best] > plain ? AdaptiveReason::reuse : AdaptiveReason::cost;
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
    {
      // Refresh the arm observed least recently among those nearly as good.
      std::size_t stale = 4;
      for (std::size_t i = 0; i < 4; ++i) {
        if (i == best || est[i] > kExploreWithin * est[best]) continue;
        if (stale == 4 || p.arms[static_cast<std::size_t>(kCandidates[i])].last <
                              p.arms[static_cast<std::size_t>(kCandidates[stale])].last)
          stale = i;
      }
      if (stale < 4) {
        d.arm = kCandidates[stale];
        d.reason = AdaptiveReason::explore;
      }
    }
  }
  return pick(p, d);
}

AdaptiveDecision AdaptiveSelector::pick(Pattern& p, AdaptiveDecision d) {
  p.arms[static_cast<std::size_t>(d.arm)].last = p.decisions;
  p.last = d.arm;
  if (registers(d.arm)) p.registered = true;
  return d;
}

void AdaptiveSelector::observe(const AdaptiveDecision& d, std::size_t bytes, double ns) {
  if (bytes == 0 || !(ns > 0) || d.arm == AdaptiveArm::count) return;
  Arm& a = patterns_[d.pattern].arms[static_cast<std::size_t>(d.arm)];
  a.per_byte[a.next] = ns / static_cast<double>(bytes);
  a.next = static_cast<uint8_t>((a.next + 1) % kSamples);
  if (a.n < kSamples) ++a.n;
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
    for (std::size_t i = 0; i < kAdaptiveArms; ++i) {
      const auto a = static_cast<AdaptiveArm>(i);
      std::snprintf(buf, sizeof buf, " %s %.1f us%s", adaptive_arm_name(a),
                    estimate(p, a, probe) / 1e3, p.arms[i].n >= kMinSamples ? "" : " (model)");
      out += buf;
    }
  }
  return out.empty() ? "no send yet" : out;
}

}  // namespace sluice::proto
