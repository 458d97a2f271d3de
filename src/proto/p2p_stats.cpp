// PointToPoint's counters and thresholds in the statistics registry.
#include <algorithm>
#include <cstdio>
#include <string>

#include "mem/reg_emulation.hpp"
#include "proto/p2p.hpp"
#include "proto/reg_pipeline.hpp"

namespace sluice::proto {

namespace {
// Counter-name form of a protocol: "rndv_get" (protocol_name says "rndv-get").
std::string counter_group(Protocol p) {
  std::string s = protocol_name(p);
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}
}  // namespace

void PointToPoint::register_stats(util::StatsRegistry& reg) const {
  using util::Unit;
  for (Protocol p :
       {Protocol::eager, Protocol::rndv_get, Protocol::rndv_pipeline, Protocol::rndv_push}) {
    const int i = static_cast<int>(p);
    const std::string group = counter_group(p);  // "p2p.<group>.<counter>"
    reg.add("p2p", group + ".messages_sent", Unit::count, &stats_.sent[i],
            "messages sent by this protocol");
    reg.add("p2p", group + ".bytes_sent", Unit::bytes, &stats_.sent_bytes[i],
            "payload bytes of those");
    reg.add("p2p", group + ".messages_received", Unit::count, &stats_.received[i],
            "messages delivered into a receive by this protocol");
  }
  reg.add("p2p", "eager.sync_acks", Unit::count, &stats_.sync_acks,
          "synchronous eager messages received and acknowledged (MPI_Ssend)");
  reg.add("p2p", "cancel.local", Unit::count, &stats_.cancelled_local,
          "sends cancelled before their first packet left (MPI_Cancel)");
  reg.add("p2p", "cancel.requests", Unit::count, &stats_.cancel_requests,
          "cancel requests sent for sends whose rts or synchronous eager message was out");
  reg.add("p2p", "cancel.withdrawn", Unit::count, &stats_.cancelled_remote,
          "... that the receiver answered withdrawn (the send is cancelled)");
  reg.add("p2p", "cancel.too_late", Unit::count, &stats_.cancel_too_late,
          "... that the receiver answered too late (the message had matched)");
  reg.add("p2p", "cancel.removed", Unit::count, &stats_.withdrawn,
          "unexpected messages this rank removed at their sender's cancel request");
  reg.add("p2p", "fragments_sent", Unit::count, &stats_.fragments,
          "pipelined rendezvous data packets sent");
  reg.add("p2p", "get_bytes", Unit::bytes, &stats_.get_bytes, "bytes pulled by one-sided get");
  reg.add("p2p", "driver_full", Unit::count, &stats_.driver_full,
          "sends that found the driver full and queued");
  reg.add("p2p", "pushed_unexpected", Unit::count, &stats_.pushed_unexpected,
          "pushed messages stashed because no receive was posted yet");
  reg.add("p2p", "truncated", Unit::count, &stats_.truncated, "receives truncated");
  reg.add("p2p", "gets_deferred", Unit::count, &stats_.gets_deferred,
          "gets the driver posted to complete later");
  reg.add("p2p", "gets_again", Unit::count, &stats_.gets_again,
          "gets the driver had no room for (retried)");
  reg.add("p2p", "local_completions", Unit::count, &stats_.local_completions,
          "lent fragments the driver reported free");
  reg.add("p2p", "unknown_packets", Unit::count, &stats_.unknown_packets,
          "packets of a type p2p does not know, rejected");
  // The registration strategy and what it did (large messages on pinning routes only).
  reg.add_info(
      "reg", "strategy", [this] { return registration_summary(); },
      "how large messages on registration-capable routes are registered (SLUICE_REG_STRATEGY)");
  reg.add_info(
      "reg", "emulate", [] { return mem::reg_emulation().describe(); },
      "registration cost emulation (SLUICE_REG_EMULATE): when not off, every registration time "
      "and every figure depending on it is EMULATED");
  reg.add(
      "reg", "emulated_ns", Unit::nanoseconds, [] { return mem::reg_emulation_added_ns(); },
      "time added to real registrations by SLUICE_REG_EMULATE (busy-waiting)");
  reg.add("reg", "strategy.copy", Unit::count, &reg_stats_.copy,
          "buffers moved by the copy path because the strategy is copy");
  reg.add("reg", "strategy.register", Unit::count, &reg_stats_.registered,
          "buffers registered for their message alone (strategy register)");
  reg.add("reg", "strategy.cache", Unit::count, &reg_stats_.cached,
          "buffers registered through the registration cache (strategy cache)");
  reg.add("reg", "strategy.ondemand", Unit::count, &reg_stats_.ondemand,
          "sends pinned on demand in the background (strategy ondemand)");
  reg.add("reg", "ondemand.zerocopy_fragments", Unit::count, &reg_stats_.ondemand_zc_frags,
          "ondemand: fragments sent from a chunk already pinned");
  reg.add("reg", "ondemand.overlap_misses", Unit::count, &reg_stats_.overlap_misses,
          "ondemand: fragments needed before their chunk was pinned, sent by the copy path");
  reg.add("reg", "ondemand.overlap_miss_bytes", Unit::bytes, &reg_stats_.overlap_miss_bytes,
          "ondemand: their bytes");
  struct PinCounter {
    const char* name;
    Unit unit;
    const std::atomic<uint64_t> PinningThread::*field;
    const char* help;
  };
  static constexpr PinCounter kPinCounters[] = {
      {"ondemand.chunks_pinned", Unit::count, &PinningThread::chunks_pinned,
       "ondemand: chunks the pinning thread registered (through the cache: hits included)"},
      {"ondemand.chunks_failed", Unit::count, &PinningThread::chunks_failed,
       "ondemand: chunks the domain refused (their fragments went by copy)"},
      {"ondemand.chunks_skipped", Unit::count, &PinningThread::chunks_skipped,
       "ondemand: chunks left unpinned because their send was over first"},
      {"ondemand.bytes_pinned", Unit::bytes, &PinningThread::bytes_pinned,
       "ondemand: bytes of the chunks registered"},
  };
  for (const PinCounter& c : kPinCounters)
    reg.add(
        "reg", c.name, c.unit,
        [this, field = c.field]() -> uint64_t {
          return pinner_ ? ((*pinner_).*field).load(std::memory_order_relaxed) : 0;
        },
        c.help);
  reg.add("reg", "strategy.staged", Unit::count, &reg_stats_.staged,
          "sends copied through the staging buffers (strategies superpipeline and pipeline)");
  reg.add("reg", "staged.chunks", Unit::count, &reg_stats_.staged_chunks,
          "staged: chunks copied into a staging buffer and sent");
  reg.add("reg", "staged.early_chunks", Unit::count, &reg_stats_.staged_early,
          "staged: first chunks copied during the rendezvous round trip");
  reg.add("reg", "staged.buffer_waits", Unit::count, &reg_stats_.staging_waits,
          "staged: times a chunk waited for a staging buffer to come back (flow control)");
  reg.add("reg", "staged.below_min", Unit::count, &reg_stats_.staged_below_min,
          "staged: sends below the tuned model's crossover (staged_min), sent by copy instead");
  reg.add_info(
      "reg", "model", [this] { return reg_opts_.model.source; },
      "the cost model in force: a sluice-tune profile (SLUICE_TUNE_PROFILE) or built-in defaults");
  reg.add("reg", "unregistered_receives", Unit::count, &reg_stats_.unregistered_recvs,
          "rendezvous receives under ondemand/superpipeline/pipeline (received by copy)");
  // Strategy adaptive: what it chose and why (what it believes: reg.strategy's text).
  static constexpr const char* kArmCounter[kAdaptiveArms][2] = {
      {"adaptive.cached", "adaptive: sends whose buffer was registered already (zero-copy)"},
      {"adaptive.cache", "adaptive: sends registered through the cache first (a miss)"},
      {"adaptive.ondemand", "adaptive: sends pinned on demand in the background (a miss)"},
      {"adaptive.superpipeline", "adaptive: sends copied through the staging buffers"},
      {"adaptive.copy", "adaptive: sends by the driver's copy path"},
  };
  for (std::size_t i = 0; i < kAdaptiveArms; ++i)
    reg.add("reg", kArmCounter[i][0], Unit::count, &reg_stats_.adaptive[i], kArmCounter[i][1]);
  static constexpr const char* kReasonCounter[kAdaptiveReasons][2] = {
      {"adaptive.reason.hit", "adaptive: choices made because the buffer was registered"},
      {"adaptive.reason.cost", "adaptive: choices of the cheapest predicted cost"},
      {"adaptive.reason.reuse",
       "adaptive: registrations chosen for what they save the buffer's expected reuses"},
      {"adaptive.reason.explore", "adaptive: choices made to observe an arm's cost"},
  };
  for (std::size_t i = 0; i < kAdaptiveReasons; ++i)
    reg.add("reg", kReasonCounter[i][0], Unit::count, &reg_stats_.adaptive_reasons[i],
            kReasonCounter[i][1]);
  reg.add("reg", "adaptive.lookup.found", Unit::count, &reg_stats_.adaptive_found,
          "adaptive: sends whose buffer the cache held already (whole, or in ondemand's chunks)");
  reg.add("reg", "adaptive.lookup.missed", Unit::count, &reg_stats_.adaptive_missed,
          "adaptive: sends whose buffer the cache did not hold");
  reg.add("reg", "failed", Unit::count, &reg_stats_.failed,
          "registrations refused (no slot, memlock limit): those buffers were copied");
  reg.add("reg", "alloc_mem.hits", Unit::count, &reg_stats_.persistent_hits,
          "buffers inside MPI_Alloc_mem memory, sent with its kept registration");
  reg.add("reg", "alloc_mem.registrations", Unit::count, &reg_stats_.persistent_registrations,
          "registrations made for MPI_Alloc_mem memory (once per allocation and domain)");
  reg.add("reg", "alloc_mem.regions", Unit::count, &reg_stats_.persistent_regions,
          "MPI_Alloc_mem allocations registered now");
  reg.add("reg", "alloc_mem.bytes", Unit::bytes, &reg_stats_.persistent_bytes, "their bytes");
  reg.set_kind("reg.alloc_mem.regions", util::Kind::level);
  reg.set_kind("reg.alloc_mem.bytes", util::Kind::level);
  // The caches' counters, summed over the pinning domains (one cache each).
  struct CacheCounter {
    const char* name;
    Unit unit;
    const std::atomic<uint64_t> mem::CacheStats::*field;
    const char* help;
  };
  static constexpr CacheCounter kCacheCounters[] = {
      {"hits", Unit::count, &mem::CacheStats::hits, "lookups served by a cached registration"},
      {"misses", Unit::count, &mem::CacheStats::misses, "lookups that found no cached entry"},
      {"evictions", Unit::count, &mem::CacheStats::evictions,
       "idle entries unpinned to make room (least recently used first)"},
      {"invalidations", Unit::count, &mem::CacheStats::invalidations,
       "entries dropped because their pages were unmapped, removed or moved"},
      {"uncached", Unit::count, &mem::CacheStats::uncached,
       "registrations made uncached (cache off or full, range busy or unsupported)"},
      {"pinned_bytes", Unit::bytes, &mem::CacheStats::pinned_bytes,
       "bytes the caches' entries pin now"},
      {"pinned_bytes_peak", Unit::bytes, &mem::CacheStats::pinned_bytes_peak,
       "most bytes a cache's entries pinned at once (largest over the caches)"},
      {"entries", Unit::count, &mem::CacheStats::entries, "entries pinned now"},
  };
  for (const CacheCounter& c : kCacheCounters)
    reg.add(
        "rcache", c.name, c.unit,
        [this, field = c.field, peak = c.field == &mem::CacheStats::pinned_bytes_peak] {
          uint64_t sum = 0;
          for (const auto& [domain, cache] : caches_) {
            const uint64_t v = (cache->stats().*field).load(std::memory_order_relaxed);
            sum = peak ? std::max(sum, v) : sum + v;
          }
          return sum;
        },
        c.help);
  reg.set_kind("rcache.pinned_bytes", util::Kind::level);
  reg.set_kind("rcache.pinned_bytes_peak", util::Kind::high_water);
  reg.set_kind("rcache.entries", util::Kind::level);
  reg.add_info(
      "rcache", "state",
      [this]() -> std::string {
        if (caches_.empty()) return "none (no pinning route under strategy cache)";
        std::string s;
        for (const auto& [domain, cache] : caches_)
          s += (s.empty() ? "" : "; ") + std::string(domain->name()) + ": " + cache->state();
        return s;
      },
      "the registration caches (one per pinning domain) and whether they run");
  // The thresholds in force, beside the counters they explain.
  reg.add(
      "p2p", "threshold.eager_limit", Unit::bytes,
      [this] { return static_cast<uint64_t>(th_.eager_limit); },
      "largest eager message (SLUICE_EAGER_LIMIT)");
  reg.add_info(
      "p2p", "threshold.rndv",
      [this]() -> std::string {
        switch (th_.rndv) {
          case Thresholds::RndvMode::pipeline:
            return "pipeline";
          case Thresholds::RndvMode::get:
            return "get";
          case Thresholds::RndvMode::automatic:
            return "auto(get " + std::to_string(th_.get_threshold) + ".." +
                   (th_.get_max == SIZE_MAX ? std::string("unbounded")
                                            : std::to_string(th_.get_max)) +
                   " B, pipeline elsewhere)";
        }
        return "?";
      },
      "rendezvous path choice (SLUICE_RNDV_MODE, RNDV_GET_THRESHOLD, RNDV_GET_MAX)");
  reg.add(
      "p2p", "threshold.push_max", Unit::bytes,
      [this] { return static_cast<uint64_t>(th_.push_max); },
      "largest pushed rendezvous (SLUICE_RNDV_PUSH_MAX)");
  reg.set_kind("p2p.threshold.eager_limit", util::Kind::level);
  reg.set_kind("p2p.threshold.push_max", util::Kind::level);
}

std::string PointToPoint::registration_summary() const {
  std::string s = reg_strategy_name(reg_opts_.strategy);
  s += reg_opts_.chosen ? " (SLUICE_REG_STRATEGY)" : " (default";
  if (!reg_opts_.chosen) {
    switch (reg_opts_.strategy) {
      case RegStrategy::adaptive:
        s += ": per send the cheapest of the cached registration, registering through the "
             "cache, on-demand pinning, the superpipeline and copy, by the cache's hits and each "
             "one's observed time)";
        break;
      case RegStrategy::cache:
        s += ": of the strategies that register, which a zero-copy route needs, the fastest "
             "measured (a reused buffer is pinned once) and correct (userfaultfd invalidation; "
             "without a working monitor it registers per message). Where the kernel copies "
             "zero-copy sends anyway (loopback, veth) copy is faster, and the driver's "
             "zero-copy auto mode already sends by copy there)";
        break;
      default:
        s += ")";
    }
  }
  bool pinning = false;
  for (drivers::Driver* d : routes_) pinning |= d && d->caps().needs_registration;
  if (!pinning) s += "; no route registers memory now: every message is copied";
  if (reg_opts_.strategy == RegStrategy::superpipeline ||
      reg_opts_.strategy == RegStrategy::pipeline) {
    char b[160];
    std::snprintf(b, sizeof b, "; C_0 %zu B, q %.3g, pipeline chunk %zu B, %u staging buffers",
                  reg_opts_.staged.c0, reg_opts_.staged.q, reg_opts_.staged.chunk,
                  reg_opts_.staged.buffers);
    s += b;
  }
  s += "; model: " + reg_opts_.model.source;
  if (reg_opts_.strategy == RegStrategy::adaptive) s += "; " + adaptive_summary();
  return s;
}

std::string PointToPoint::adaptive_summary() const {
  if (adaptive_.empty()) return "adaptive: no pinning route";
  std::string s;
  for (const auto& [domain, a] : adaptive_)
    s += (s.empty() ? "" : "; ") + std::string(domain->name()) + ": " + a->model->describe() +
         "; " + a->selector.describe();
  return s;
}

}  // namespace sluice::proto
