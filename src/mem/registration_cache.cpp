#include "mem/registration_cache.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <new>
#include <utility>

#include "util/log.hpp"
#include "util/stats.hpp"

namespace sluice::mem {

namespace {

using T = util::ConfigType;

constexpr util::ConfigKey kKeys[] = {
    {"REG_CACHE_MAX_BYTES",
     T::size,
     "256M",
     {"1M", "RAM/2"},
     "most bytes the registration cache keeps pinned (entries in use or idle; uncached fallbacks "
     "not counted)"},
    {"REG_CACHE_MAX_ENTRIES",
     T::integer,
     "4096",
     {"1", "1048576"},
     "most registrations the registration cache keeps"},
    {"REG_CACHE_MONITOR",
     T::choice,
     "uffd",
     {},
     "how the registration cache learns that cached memory was unmapped or replaced: uffd = "
     "userfaultfd events (the cache is off where they are unavailable); off = no cache, every "
     "registration uncached; unsafe-none = TEST ONLY: a cache never invalidated, which sends "
     "stale data (for the tests that must see it)",
     "uffd|off|unsafe-none"},
    {"REG_EMULATE",
     T::string,
     "off",
     {},
     "emulate a slower registration: 'latency_us,ns_per_page' (e.g. 68,200, InfiniBand as "
     "[NewMadeleine] measured it) makes every real registration last at least that long, "
     "busy-waiting for the difference; every statistic and benchmark output made with it says "
     "EMULATED; off = real cost"},
};

uintptr_t page_size() {
  static const uintptr_t page = [] {
    const long p = ::sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<uintptr_t>(p) : uintptr_t{4096};
  }();
  return page;
}

// Says once per process that caches run off (or unsafe).
void say_once(util::LogLevel level, const std::string& what) {
  static std::atomic<bool> said{false};
  if (!said.exchange(true)) util::log(level, "registration cache %s", what.c_str());
}

void raise_peak(std::atomic<uint64_t>& peak, uint64_t value) {
  uint64_t cur = peak.load(std::memory_order_relaxed);
  while (value > cur && !peak.compare_exchange_weak(cur, value, std::memory_order_relaxed)) {
  }
}

}  // namespace

std::span<const util::ConfigKey> registration_cache_config() {
  return kKeys;
}

CacheOptions CacheOptions::from_config(const util::ConfigValues& config,
                                       std::vector<std::string>& problems) {
  CacheOptions o;
  const uint64_t bytes = config.get_size("REG_CACHE_MAX_BYTES");
  o.max_bytes = std::clamp<uint64_t>(bytes, kMinBytes, kMaxBytes);
  if (o.max_bytes != bytes)
    problems.push_back("SLUICE_REG_CACHE_MAX_BYTES=" + std::to_string(bytes) +
                       " is outside 1M..1T; using " + std::to_string(o.max_bytes));
  const int64_t n = config.get_int("REG_CACHE_MAX_ENTRIES");
  o.max_entries = static_cast<std::size_t>(std::clamp<int64_t>(n, 1, kMaxEntries));
  if (static_cast<int64_t>(o.max_entries) != n)
    problems.push_back("SLUICE_REG_CACHE_MAX_ENTRIES=" + std::to_string(n) +
                       " is outside 1..1048576; using " + std::to_string(o.max_entries));
  const std::string m = config.get_string("REG_CACHE_MONITOR");
  o.monitor = m == "off"           ? CacheMonitor::off
              : m == "unsafe-none" ? CacheMonitor::unsafe_none
                                   : CacheMonitor::uffd;
  return o;
}

// One cached registration. The Region base is what handles point at (its domain is the
// cache, so the last release comes back to deregister()).
struct RegistrationCache::Entry : Region {
  Registration inner;  // the inner domain's handle: the pin itself
  uintptr_t start = 0;
  uintptr_t end = 0;
  Entry* prev = nullptr;  // LRU links, while in the map
  Entry* next = nullptr;
  Entry* reap_next = nullptr;  // in a list of entries to unpin after unlocking
  bool in_map = false;
  Map::node_type node;  // the map node while the entry is not in the map
};

RegistrationCache::RegistrationCache(Domain& inner, CacheOptions options,
                                     InvalidationMonitor* monitor)
    : inner_(inner), options_(options) {
  options_.max_bytes = std::clamp(options_.max_bytes, std::size_t{1}, CacheOptions::kMaxBytes);
  options_.max_entries =
      std::clamp(options_.max_entries, std::size_t{1}, CacheOptions::kMaxEntries);
  switch (options_.monitor) {
    case CacheMonitor::off:
      off_reason_ = "SLUICE_REG_CACHE_MONITOR=off";
      say_once(util::LogLevel::info,
               "off (SLUICE_REG_CACHE_MONITOR=off): every registration is "
               "made uncached");
      return;
    case CacheMonitor::unsafe_none:
      say_once(util::LogLevel::warn,
               "runs without invalidation (SLUICE_REG_CACHE_MONITOR=unsafe-none): memory unmapped "
               "and mapped again is sent stale");
      enabled_.store(true, std::memory_order_release);
      return;
    case CacheMonitor::uffd:
      break;
  }
  InvalidationMonitor* m = monitor ? monitor : &InvalidationMonitor::shared();
  if (!m->working()) {
    turn_off("off: no working invalidation monitor (" + m->status() + ")");
    return;
  }
  if (!m->subscribe(this)) {
    turn_off("off: the invalidation monitor has no room for another cache");
    return;
  }
  monitor_ = m;
  enabled_.store(true, std::memory_order_release);
}

RegistrationCache::~RegistrationCache() {
  if (monitor_) monitor_->unsubscribe(this);
  flush();
  reap();
}

std::string RegistrationCache::state() const {
  std::lock_guard lk(mu_);
  if (!enabled_.load(std::memory_order_acquire)) return off_reason_;
  if (!monitor_) return "on, never invalidated (SLUICE_REG_CACHE_MONITOR=unsafe-none)";
  return "on (" + monitor_->status() + ")";
}

std::size_t RegistrationCache::size() const {
  std::lock_guard lk(mu_);
  return map_.size();
}

void RegistrationCache::register_stats(util::StatsRegistry& registry, std::string_view c) {
  using util::Unit;
  registry.add(c, "hits", Unit::count, &stats_.hits, "lookups served by a cached registration");
  registry.add(c, "misses", Unit::count, &stats_.misses, "lookups that found no cached entry");
  registry.add(c, "evictions", Unit::count, &stats_.evictions,
               "idle entries unpinned to make room (least recently used first)");
  registry.add(c, "invalidations", Unit::count, &stats_.invalidations,
               "entries dropped because their pages were unmapped, removed or moved");
  registry.add(c, "uncached", Unit::count, &stats_.uncached,
               "registrations made uncached (cache off or full, range busy or unsupported)");
  registry.add(c, "watch_busy", Unit::count, &stats_.watch_busy,
               "ranges another userfaultfd already watches (made uncached)");
  registry.add(c, "raced", Unit::count, &stats_.raced,
               "ranges invalidated while being registered (made uncached)");
  registry.add(c, "pinned_bytes", Unit::bytes, &stats_.pinned_bytes,
               "bytes the cache's entries pin now");
  registry.add(c, "pinned_bytes_peak", Unit::bytes, &stats_.pinned_bytes_peak,
               "most bytes the cache's entries pinned at once");
  registry.add(c, "entries", Unit::count, &stats_.entries, "entries pinned now");
  const std::string prefix = std::string(c) + ".";
  registry.set_kind(prefix + "pinned_bytes", util::Kind::level);
  registry.set_kind(prefix + "pinned_bytes_peak", util::Kind::high_water);
  registry.set_kind(prefix + "entries", util::Kind::level);
  registry.add_info(
      c, "state", [this] { return state(); }, "whether the cache runs, and how");
}

Errc RegistrationCache::uncached(std::span<const std::byte> buf, Registration& out) {
  stats_.uncached.fetch_add(1, std::memory_order_relaxed);
  return inner_.register_memory(buf, out);
}

bool RegistrationCache::usable() {
  if (!enabled_.load(std::memory_order_acquire)) return false;
  if (monitor_ && !monitor_->working()) {
    turn_off("off: the invalidation monitor stopped (" + monitor_->status() + ")");
    return false;
  }
  return true;
}

void RegistrationCache::turn_off(std::string why) {
  Entry* idle = nullptr;
  {
    std::lock_guard lk(mu_);
    if (!off_reason_.empty()) return;
    off_reason_ = why;
    enabled_.store(false, std::memory_order_release);
    while (lru_head_) {
      Entry* e = lru_head_;
      unlink(e);
      drop_cache_ref(e, idle);
    }
  }
  destroy_list(idle);
  say_once(util::LogLevel::warn, why + ": every registration is made uncached");
}

// An event the monitor has read but not yet delivered may concern what we are about to
// look up (its unmapper may be the caller, already released): wait for its delivery.
void RegistrationCache::settle(std::unique_lock<std::mutex>& lk) {
  if (!monitor_) return;
  const uint64_t phase = monitor_->phase();
  if ((phase & 1) == 0) return;
  lk.unlock();
  monitor_->wait_phase_change(phase);
  lk.lock();
}

RegistrationCache::Entry* RegistrationCache::find_containing(uintptr_t lo, uintptr_t hi) const {
  auto it = map_.upper_bound(lo);
  if (it == map_.begin()) return nullptr;
  Entry* e = std::prev(it)->second;
  return hi <= e->end ? e : nullptr;
}

void RegistrationCache::hit(Entry* e) {
  e->refs.fetch_add(1, std::memory_order_relaxed);
  stats_.hits.fetch_add(1, std::memory_order_relaxed);
  if (lru_head_ == e) return;
  // Move to the front of the LRU list.
  e->prev->next = e->next;
  if (e->next)
    e->next->prev = e->prev;
  else
    lru_tail_ = e->prev;
  e->prev = nullptr;
  e->next = lru_head_;
  lru_head_->prev = e;
  lru_head_ = e;
}

// Takes `e` out of the map and the LRU list; its node stays with it (nothing is freed).
void RegistrationCache::unlink(Entry* e) {
  e->node = map_.extract(e->start);
  e->in_map = false;
  if (e->prev)
    e->prev->next = e->next;
  else
    lru_head_ = e->next;
  if (e->next)
    e->next->prev = e->prev;
  else
    lru_tail_ = e->prev;
  e->prev = e->next = nullptr;
}

// Drops the cache's reference on an unlinked entry: if it was the last, the entry joins
// `idle_list` to be unpinned after unlocking; otherwise its last handle unpins it.
void RegistrationCache::drop_cache_ref(Entry* e, Entry*& idle_list) {
  if (e->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    e->reap_next = idle_list;
    idle_list = e;
  }
}

bool RegistrationCache::invalidated_since(uint64_t seq, uintptr_t a, uintptr_t b) const {
  if (inv_seq_ == seq) return false;
  if (inv_seq_ - seq > kRecent) return true;  // too many to tell: assume it was ours
  for (uint64_t s = seq + 1; s <= inv_seq_; ++s) {
    const InvalidatedRange& r = recent_[s % kRecent];
    if (r.start < b && a < r.end) return true;
  }
  return false;
}

// Charges `bytes` and one entry against the limits, or charges nothing.
bool RegistrationCache::reserve(std::size_t bytes) {
  uint64_t cur = stats_.pinned_bytes.load(std::memory_order_relaxed);
  do {
    if (cur + bytes > options_.max_bytes) return false;
  } while (!stats_.pinned_bytes.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed));
  uint64_t n = stats_.entries.load(std::memory_order_relaxed);
  do {
    if (n + 1 > options_.max_entries) {
      stats_.pinned_bytes.fetch_sub(bytes, std::memory_order_relaxed);
      return false;
    }
  } while (!stats_.entries.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
  raise_peak(stats_.pinned_bytes_peak, cur + bytes);
  return true;
}

// Unpins and frees an entry nobody references (never under mu_: it frees memory).
void RegistrationCache::destroy(Entry* e) {
  e->inner.reset();
  stats_.pinned_bytes.fetch_sub(e->end - e->start, std::memory_order_relaxed);
  stats_.entries.fetch_sub(1, std::memory_order_relaxed);
  delete e;
}

void RegistrationCache::destroy_list(Entry*& list) {
  while (list) {
    Entry* next = list->reap_next;
    destroy(list);
    list = next;
  }
}

void RegistrationCache::reap() {
  Entry* list = nullptr;
  {
    std::lock_guard lk(mu_);
    list = std::exchange(reap_, nullptr);
    reap_pending_.store(false, std::memory_order_relaxed);
  }
  destroy_list(list);
}

void RegistrationCache::flush() {
  Entry* idle = nullptr;
  {
    std::lock_guard lk(mu_);
    while (lru_head_) {
      Entry* e = lru_head_;
      unlink(e);
      drop_cache_ref(e, idle);
    }
  }
  destroy_list(idle);
}

// The last handle on an entry no longer in the map went away.
void RegistrationCache::deregister(Region* r) {
  destroy(static_cast<Entry*>(r));
}

// Monitor thread: it has already read the event. Only unlinking and marking happen here;
// idle entries wait in reap_ for the next caller to unpin and free them.
void RegistrationCache::invalidate(uintptr_t start, uintptr_t end) {
  std::lock_guard lk(mu_);
  ++inv_seq_;
  recent_[inv_seq_ % kRecent] = {start, end};
  auto it = map_.upper_bound(start);
  if (it != map_.begin() && std::prev(it)->second->end > start) --it;
  bool reaped = false;
  while (it != map_.end() && it->first < end) {
    Entry* e = it->second;
    ++it;
    unlink(e);
    stats_.invalidations.fetch_add(1, std::memory_order_relaxed);
    Entry* before = reap_;
    drop_cache_ref(e, reap_);
    reaped |= reap_ != before;
  }
  if (reaped) reap_pending_.store(true, std::memory_order_relaxed);
}

std::size_t RegistrationCache::lookup(std::span<const std::byte> buf, Registration& out) {
  if (buf.empty()) return 0;
  std::size_t covering = 0;
  const Errc e = acquire(buf, out, &covering);
  return e == Errc::ok ? covering : 0;
}

Errc RegistrationCache::register_memory(std::span<const std::byte> buf, Registration& out) {
  return acquire(buf, out, nullptr);
}

Errc RegistrationCache::acquire(std::span<const std::byte> buf, Registration& out,
                                std::size_t* lookup_only) {
  if (buf.empty()) return inner_.register_memory(buf, out);
  if (reap_pending_.load(std::memory_order_relaxed)) reap();
  if (!usable()) return lookup_only ? Errc::cancelled : uncached(buf, out);

  const uintptr_t page = page_size();
  const uintptr_t lo = reinterpret_cast<uintptr_t>(buf.data());
  const uintptr_t hi = lo + buf.size();
  uintptr_t a = lo & ~(page - 1);
  uintptr_t b = (hi + page - 1) & ~(page - 1);
  // Is the buffer still the memory our entries were made for? (An unmap elsewhere may have
  // freed these addresses and not yet queued its event; see invalidation_monitor.hpp.)
  bool replaced = false;
  if (monitor_) {
    for (;;) {
      // The kernel's answer costs ~0.1 us per page, so only the first and the last page
      // are asked about: a fresh mapping under the buffer covers one of them unless the
      // buffer spans three mappings (see the header).
      InvalidationMonitor::Check c = monitor_->check(a, page);
      if (c == InvalidationMonitor::Check::ok && b - a > page) c = monitor_->check(b - page, page);
      if (c == InvalidationMonitor::Check::changing) {
        sched_yield();
        continue;
      }
      if (c == InvalidationMonitor::Check::off)
        return lookup_only ? Errc::cancelled : uncached(buf, out);
      replaced = c == InvalidationMonitor::Check::unwatched;
      break;
    }
  }
  Entry* idle = nullptr;
  uint64_t seq = 0;
  InvalidationMonitor::Watch watched = InvalidationMonitor::Watch::ok;
  {
    std::unique_lock lk(mu_);
    settle(lk);
    if (!enabled_.load(std::memory_order_acquire)) {
      lk.unlock();
      return lookup_only ? Errc::cancelled : uncached(buf, out);
    }
    if (replaced) {
      // Entries over a fresh mapping are stale even though no event has told us yet.
      auto it = map_.upper_bound(a);
      if (it != map_.begin() && std::prev(it)->second->end > a) --it;
      while (it != map_.end() && it->first < b) {
        Entry* e = it->second;
        ++it;
        unlink(e);
        stats_.invalidations.fetch_add(1, std::memory_order_relaxed);
        drop_cache_ref(e, idle);
      }
    }
    if (Entry* e = find_containing(lo, hi)) {
      hit(e);
      lk.unlock();
      destroy_list(idle);
      out = Registration::adopt(e);
      if (lookup_only) *lookup_only = 1;
      return Errc::ok;
    }
    if (lookup_only) {
      // Adjacent entries that together cover the buffer (the chunks strategy ondemand
      // pinned): the caller may send through them chunk by chunk. Nothing is counted.
      std::size_t n = 0;
      uintptr_t cursor = lo;
      auto it = map_.upper_bound(lo);
      if (it != map_.begin()) --it;
      for (; it != map_.end() && it->second->start <= cursor && cursor < hi; ++it) {
        if (it->second->end <= cursor) continue;
        cursor = it->second->end;
        ++n;
      }
      lk.unlock();
      destroy_list(idle);
      if (cursor < hi) return Errc::cancelled;
      *lookup_only = n;
      return Errc::ok;
    }
    stats_.misses.fetch_add(1, std::memory_order_relaxed);
    // The new entry covers the union with every entry it overlaps (entries stay disjoint).
    auto first = map_.upper_bound(a);
    if (first != map_.begin() && std::prev(first)->second->end > a) --first;
    auto last = first;
    while (last != map_.end() && last->first < b) {
      a = std::min(a, last->second->start);
      b = std::max(b, last->second->end);
      ++last;
    }
    const std::size_t length = b - a;
    if (length > options_.max_bytes) {
      lk.unlock();
      return uncached(buf, out);
    }
    while (first != last) {
      Entry* e = first->second;
      ++first;
      unlink(e);
      drop_cache_ref(e, idle);
    }
    // Evict idle entries, least recently used first, until the new one fits.
    uint64_t freeing = 0, freeing_entries = 0;
    for (Entry* e = idle; e; e = e->reap_next) {
      freeing += e->end - e->start;
      ++freeing_entries;
    }
    for (Entry* e = lru_tail_; e;) {
      const uint64_t pinned = stats_.pinned_bytes.load(std::memory_order_relaxed) - freeing;
      const uint64_t entries = stats_.entries.load(std::memory_order_relaxed) - freeing_entries;
      if (pinned + length <= options_.max_bytes && entries + 1 <= options_.max_entries) break;
      Entry* prev = e->prev;
      if (e->refs.load(std::memory_order_acquire) == 1) {  // idle: only the cache's reference
        unlink(e);
        drop_cache_ref(e, idle);
        freeing += e->end - e->start;
        ++freeing_entries;
        stats_.evictions.fetch_add(1, std::memory_order_relaxed);
      }
      e = prev;
    }
    // Watch before pinning: an unmap from here on is an event we compare `seq` against.
    if (monitor_) watched = monitor_->watch(a, length);
    seq = inv_seq_;
  }
  destroy_list(idle);
  if (watched != InvalidationMonitor::Watch::ok) {
    if (watched == InvalidationMonitor::Watch::busy)
      stats_.watch_busy.fetch_add(1, std::memory_order_relaxed);
    return uncached(buf, out);
  }
  if (!reserve(b - a)) return uncached(buf, out);
  Entry* e = new (std::nothrow) Entry;
  if (!e) {
    stats_.pinned_bytes.fetch_sub(b - a, std::memory_order_relaxed);
    stats_.entries.fetch_sub(1, std::memory_order_relaxed);
    return uncached(buf, out);
  }
  e->domain = this;
  e->base = reinterpret_cast<std::byte*>(a);
  e->length = b - a;
  e->start = a;
  e->end = b;
  {
    Map node_maker;  // allocates the map node here, outside the lock
    node_maker.emplace(a, e);
    e->node = node_maker.extract(node_maker.begin());
  }
  if (inner_.register_memory({reinterpret_cast<const std::byte*>(a), b - a}, e->inner) !=
      Errc::ok) {
    destroy(e);
    return uncached(buf, out);
  }
  e->local = e->inner.local_key();
  e->remote_key = e->inner.remote_key().key;
  e->offset_addressed = e->inner.offset_addressed();  // the entry starts where the pin does

  Entry* winner = nullptr;
  bool raced = false;
  {
    std::unique_lock lk(mu_);
    settle(lk);
    if (!enabled_.load(std::memory_order_acquire) || invalidated_since(seq, a, b)) {
      raced = true;
    } else if ((winner = find_containing(lo, hi))) {
      hit(winner);  // another thread registered it meanwhile
    } else {
      auto it = map_.upper_bound(a);
      if (it != map_.begin() && std::prev(it)->second->end > a) --it;
      while (it != map_.end() && it->first < b) {
        Entry* old = it->second;
        ++it;
        unlink(old);
        drop_cache_ref(old, idle);
      }
      e->refs.store(2, std::memory_order_relaxed);  // the cache's and the caller's
      map_.insert(std::move(e->node));
      e->in_map = true;
      e->next = lru_head_;
      if (lru_head_)
        lru_head_->prev = e;
      else
        lru_tail_ = e;
      lru_head_ = e;
    }
  }
  destroy_list(idle);
  if (raced) {
    stats_.raced.fetch_add(1, std::memory_order_relaxed);
    destroy(e);
    return uncached(buf, out);
  }
  if (winner) {
    destroy(e);
    out = Registration::adopt(winner);
    return Errc::ok;
  }
  out = Registration::adopt(e);
  return Errc::ok;
}

}  // namespace sluice::mem
