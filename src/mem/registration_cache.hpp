// RegistrationCache: keeps registrations of any Domain alive after their last use, so an
// application that sends from the same buffers again pays for pinning once (the pin-down
// cache of [Open-MX] and [GASNet-Firehose], shaped like UCX's rcache and libfabric's MR
// cache). It is itself a Domain: protocols ask it for a Registration as they would ask
// the domain underneath.
//
//  - Entries cover page-aligned ranges, disjoint, in a std::map keyed by start: a lookup
//    is one upper_bound (the entry that starts at or before the buffer), never a scan. A
//    miss on a range that overlaps entries registers their union and retires them.
//  - Each entry's Region is refcounted by its handles plus one reference the cache holds
//    while the entry is in the map; an entry is idle when only the cache's reference is
//    left. Idle entries stay registered (lazy deregistration) until evicted in LRU order.
//  - Limits: pinned bytes (every entry the cache made, in use or idle, until unpinned;
//    charged before pinning, so the limit holds at every instant) and entry count. A miss
//    that does not fit evicts idle entries, then falls back to an uncached registration
//    (the inner domain's own handle, released at its last use, not counted here).
//  - Invalidation (InvalidationMonitor) removes entries whose pages changed: idle ones are
//    unpinned, ones in use are marked dead (no lookup finds them) and unpinned at their
//    last release. Before trusting an entry, a lookup asks the monitor whether the
//    buffer's first and last pages are still the watched memory with no unmap in flight
//    (InvalidationMonitor::check: an address freed by munmap can be mapped again by
//    another thread before that munmap's event exists). Not asked about: the pages in
//    between, so a buffer spanning three mappings whose middle one was replaced while its
//    event is not yet queued could still hit a stale entry. It fails closed: with no working
//    monitor the cache turns itself off (every registration uncached) and says so once.
//
// Lock rule: `mu_` is taken by the monitor thread after it has read an event, so nothing
// done under it may unmap or free memory (a free can trim the heap, i.e. unmap): entries
// and map nodes are allocated before locking and freed after unlocking; pinning and
// unpinning happen outside the lock as well.
//
// The cache must outlive every handle it gave out (as any Domain must).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mem/invalidation_monitor.hpp"
#include "mem/registration.hpp"
#include "util/config_key.hpp"

namespace sluice::util {
class StatsRegistry;
}

namespace sluice::mem {

// The cache's configuration keys (group "mem"): REG_CACHE_MAX_BYTES, REG_CACHE_MAX_ENTRIES,
// REG_CACHE_MONITOR; and REG_EMULATE, read by the engine (mem/reg_emulation.hpp).
std::span<const util::ConfigKey> registration_cache_config();

enum class CacheMonitor {
  uffd,         // userfaultfd invalidation; the cache is off where that is unavailable
  off,          // no cache: every registration uncached
  unsafe_none,  // a cache that is never invalidated: stale data (tests that prove it)
};

struct CacheOptions {
  static constexpr std::size_t kMinBytes = std::size_t{1} << 20;
  static constexpr std::size_t kMaxBytes = std::size_t{1} << 40;
  static constexpr std::size_t kMaxEntries = std::size_t{1} << 20;

  std::size_t max_bytes = std::size_t{256} << 20;
  std::size_t max_entries = 4096;
  CacheMonitor monitor = CacheMonitor::uffd;

  // From the keys in force; a value out of range is clamped into it, with one line in
  // `problems`.
  static CacheOptions from_config(const util::ConfigValues& config,
                                  std::vector<std::string>& problems);
};

struct CacheStats {
  std::atomic<uint64_t> hits{0};
  std::atomic<uint64_t> misses{0};
  std::atomic<uint64_t> evictions{0};      // idle entries dropped to make room
  std::atomic<uint64_t> invalidations{0};  // entries removed because their pages changed
  std::atomic<uint64_t> uncached{0};       // registrations handed out uncached, any reason
  std::atomic<uint64_t> watch_busy{0};     // ... of which: range watched by another uffd
  std::atomic<uint64_t> raced{0};          // ... of which: invalidated while being registered
  std::atomic<uint64_t> pinned_bytes{0};   // charged now (pinned, or about to be)
  std::atomic<uint64_t> pinned_bytes_peak{0};
  std::atomic<uint64_t> entries{0};  // entries made and not yet unpinned
};

class RegistrationCache final : public Domain, private InvalidationSink {
 public:
  // `monitor`: the invalidation source for CacheMonitor::uffd (nullptr: the shared one).
  RegistrationCache(Domain& inner, CacheOptions options, InvalidationMonitor* monitor = nullptr);
  ~RegistrationCache() override;
  RegistrationCache(const RegistrationCache&) = delete;
  RegistrationCache& operator=(const RegistrationCache&) = delete;

  std::string_view name() const override { return "cache"; }
  bool pins() const override { return inner_.pins(); }
  // A handle covering `buf`: a cached entry's (possibly a larger range), or uncached.
  Errc register_memory(std::span<const std::byte> buf, Registration& out) override;
  RegistrationCost cost() const override { return inner_.cost(); }
  // Whether `buf` is registered already, registering nothing (what the adaptive strategy asks
  // before it decides how to send it): 1 when one entry covers it (its handle in `out`,
  // counted as a hit), n > 1 when n adjacent entries together cover it (the chunks strategy
  // ondemand pinned; `out` untouched, nothing counted), 0 when it is not (nothing counted).
  std::size_t lookup(std::span<const std::byte> buf, Registration& out);

  // Whether lookups use the cache (false: turned off, see state()).
  bool enabled() const { return enabled_.load(std::memory_order_acquire); }
  // "on (<monitor status>)" or "off: <why>".
  std::string state() const;
  const CacheStats& stats() const { return stats_; }
  const CacheOptions& options() const { return options_; }
  // Entries in the map now (live, findable).
  std::size_t size() const;

  // Registers the statistics as "<component>.hits" ... and "<component>.state".
  void register_stats(util::StatsRegistry& registry, std::string_view component = "regcache");

  // Unpins every idle entry and forgets the ones in use (they unpin at their last release).
  void flush();

 private:
  struct Entry;
  using Map = std::map<uintptr_t, Entry*>;
  struct InvalidatedRange {
    uintptr_t start = 0, end = 0;
  };
  static constexpr std::size_t kRecent = 64;

  void deregister(Region* r) override;
  void invalidate(uintptr_t start, uintptr_t end) override;  // monitor thread

  // register_memory's body; with `lookup_only` set, lookup()'s (never registers).
  Errc acquire(std::span<const std::byte> buf, Registration& out, std::size_t* lookup_only);
  Errc uncached(std::span<const std::byte> buf, Registration& out);
  bool usable();
  void turn_off(std::string why);
  void settle(std::unique_lock<std::mutex>& lk);
  Entry* find_containing(uintptr_t lo, uintptr_t hi) const;
  void hit(Entry* e);
  void unlink(Entry* e);
  void drop_cache_ref(Entry* e, Entry*& idle_list);
  bool invalidated_since(uint64_t seq, uintptr_t a, uintptr_t b) const;
  bool reserve(std::size_t bytes);
  void destroy(Entry* e);
  void destroy_list(Entry*& list);  // empties `list`
  void reap();

  Domain& inner_;
  CacheOptions options_;
  InvalidationMonitor* monitor_ = nullptr;  // null: unsafe_none, or off
  std::atomic<bool> enabled_{false};
  std::string off_reason_;  // written once, before enabled_ goes false for good
  CacheStats stats_;

  mutable std::mutex mu_;
  Map map_;
  Entry* lru_head_ = nullptr;  // most recently used
  Entry* lru_tail_ = nullptr;
  Entry* reap_ = nullptr;  // unpinned after unlocking by the next caller
  std::atomic<bool> reap_pending_{false};
  uint64_t inv_seq_ = 0;
  InvalidatedRange recent_[kRecent];
};

}  // namespace sluice::mem
