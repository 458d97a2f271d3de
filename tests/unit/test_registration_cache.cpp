// RegistrationCache and InvalidationMonitor: interval lookup, refcounts and LRU order,
// the pinned-bytes limit, invalidation by munmap / MADV_DONTNEED / mremap / glibc free
// (each shown to fail when invalidation is forced off), failing closed, EBUSY, threads.
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <malloc.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include <atomic>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "mem/invalidation_monitor.hpp"
#include "mem/registration_cache.hpp"
#include "util/config_key.hpp"
#include "util/stats.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SLUICE_SANITIZER_ALLOCATOR 1
#endif

namespace {

using sluice::Errc;
using namespace sluice::mem;

constexpr std::size_t kPage = 4096;

uint64_t hash_bytes(const std::byte* p, std::size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<uint64_t>(p[i])) * 1099511628211ull;
  return h;
}

// A pinning domain that pins nothing but records what a pin would hold: each
// registration's remote key is a hash of the memory's contents when it was registered
// (so a handle whose key differs from the memory's hash now is stale), and counts
// registrations, deregistrations and bytes "pinned".
class CountingDomain final : public Domain {
 public:
  std::string_view name() const override { return "counting"; }
  bool pins() const override { return true; }
  Errc register_memory(std::span<const std::byte> buf, Registration& out) override {
    auto* r = new Region;
    r->domain = this;
    r->base = const_cast<std::byte*>(buf.data());
    r->length = buf.size();
    r->local.value = next_key.fetch_add(1) + 1;
    r->remote_key = hash_bytes(buf.data(), buf.size());
    registers.fetch_add(1);
    const uint64_t now = pinned.fetch_add(buf.size()) + buf.size();
    uint64_t peak = pinned_peak.load();
    while (now > peak && !pinned_peak.compare_exchange_weak(peak, now)) {
    }
    {
      std::lock_guard lk(mu);
      log.push_back({true, reinterpret_cast<uintptr_t>(buf.data()), buf.size()});
    }
    out = Registration::adopt(r);
    return Errc::ok;
  }
  RegistrationCost cost() const override { return {1000, 0.05}; }

  struct Call {
    bool reg;
    uintptr_t base;
    std::size_t length;
  };
  std::atomic<uint64_t> next_key{0}, registers{0}, deregisters{0}, pinned{0}, pinned_peak{0};
  std::mutex mu;
  std::vector<Call> log;
  uintptr_t last_deregistered() {
    std::lock_guard lk(mu);
    for (auto it = log.rbegin(); it != log.rend(); ++it)
      if (!it->reg) return it->base;
    return 0;
  }

 protected:
  void deregister(Region* r) override {
    deregisters.fetch_add(1);
    pinned.fetch_sub(r->length);
    {
      std::lock_guard lk(mu);
      log.push_back({false, reinterpret_cast<uintptr_t>(r->base), r->length});
    }
    delete r;
  }
};

// Fresh pages; `at`: at that address if it is free (else wherever the kernel says).
std::byte* map_pages(std::size_t pages, void* at = nullptr) {
  void* p = mmap(at, pages * kPage, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);
  if (p == MAP_FAILED && at)  // some sanitizers refuse the flag: a plain hint then
    p = mmap(at, pages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
}

Registration get(RegistrationCache& c, const void* p, std::size_t n) {
  Registration r;
  EXPECT_EQ(c.register_memory({static_cast<const std::byte*>(p), n}, r), Errc::ok);
  EXPECT_TRUE(r.covers({static_cast<const std::byte*>(p), n}));
  return r;
}

// A registration is stale if its memory is no longer mapped, or now holds other contents
// than when it was registered (the tests keep contents fixed while a mapping lives).
bool stale(const Registration& r) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(r.base()) & ~(kPage - 1);
  const std::size_t n = reinterpret_cast<uintptr_t>(r.base()) + r.length() - a;
  std::vector<unsigned char> resident(n / kPage + 1);
  if (mincore(reinterpret_cast<void*>(a), n, resident.data()) != 0) return true;  // unmapped
  return r.remote_key().key != hash_bytes(r.base(), r.length());
}

CacheOptions unsafe_options(std::size_t bytes = 64 << 20, std::size_t entries = 1024) {
  CacheOptions o;
  o.max_bytes = bytes;
  o.max_entries = entries;
  o.monitor = CacheMonitor::unsafe_none;
  return o;
}

TEST(RegistrationCache, IntervalLookupContainedAdjacentOverlapping) {
  CountingDomain d;
  RegistrationCache c(d, unsafe_options());
  std::byte* p = map_pages(16);
  ASSERT_NE(p, nullptr);
  {
    Registration a = get(c, p + kPage + 100, 2 * kPage - 200);  // pages 1-2
    EXPECT_EQ(a.base(), p + kPage);
    EXPECT_EQ(a.length(), 2 * kPage);
    EXPECT_EQ(c.stats().misses.load(), 1u);
    // Contained (any bytes of pages 1-2): a hit on the same registration.
    Registration b = get(c, p + 2 * kPage + 5, 10);
    EXPECT_EQ(b.local_key().value, a.local_key().value);
    EXPECT_EQ(c.stats().hits.load(), 1u);
    // Adjacent (page 3): a separate entry.
    Registration adj = get(c, p + 3 * kPage, kPage);
    EXPECT_NE(adj.local_key().value, a.local_key().value);
    EXPECT_EQ(c.size(), 2u);
    // Adjacent below (page 0), not touching page 1's entry.
    Registration below = get(c, p, kPage);
    EXPECT_EQ(c.size(), 3u);
    EXPECT_EQ(c.stats().misses.load(), 3u);
    // Overlapping pages 2-5: merged with the entries of pages 1-2 and 3 into pages 1-5.
    Registration m = get(c, p + 2 * kPage, 4 * kPage);
    EXPECT_EQ(m.base(), p + kPage);
    EXPECT_EQ(m.length(), 5 * kPage);
    EXPECT_EQ(c.size(), 2u);  // page 0, pages 1-5
    // The old entries are still held (in use) and stay registered until released.
    EXPECT_EQ(d.registers.load() - d.deregisters.load(), 4u);
  }
  // Released: the retired entries are unpinned, the live ones stay (lazy deregistration).
  EXPECT_EQ(d.registers.load() - d.deregisters.load(), 2u);
  Registration again = get(c, p + kPage, kPage);
  EXPECT_EQ(again.base(), p + kPage);
  EXPECT_EQ(again.length(), 5 * kPage);
  EXPECT_EQ(c.stats().misses.load(), 4u);
  again.reset();
  c.flush();
  EXPECT_EQ(d.registers.load(), d.deregisters.load());
  EXPECT_EQ(d.pinned.load(), 0u);
  munmap(p, 16 * kPage);
}

TEST(RegistrationCache, RefcountsAndLruEvictionOrder) {
  CountingDomain d;
  RegistrationCache c(d, unsafe_options(64 << 20, 3));
  std::byte* p = map_pages(16);
  ASSERT_NE(p, nullptr);
  auto page = [&](int i) { return p + 2 * i * kPage; };  // not adjacent, one page each
  {
    Registration a = get(c, page(0), kPage);
    Registration a2 = a;           // copies share the registration
    EXPECT_EQ(a.use_count(), 3u);  // two handles and the cache's reference
  }
  get(c, page(1), kPage);
  get(c, page(2), kPage);
  get(c, page(0), kPage);  // hit: page 0 becomes the most recently used
  EXPECT_EQ(c.stats().hits.load(), 1u);
  EXPECT_EQ(d.deregisters.load(), 0u);  // idle entries stay registered
  // Full (3 entries): the least recently used idle entry (page 1) goes.
  get(c, page(3), kPage);
  ASSERT_EQ(d.deregisters.load(), 1u);
  EXPECT_EQ(d.last_deregistered(), reinterpret_cast<uintptr_t>(page(1)));
  // Recency now 3, 0, 2. With page 2 in use, the next eviction skips it and takes page 0.
  Registration held = get(c, page(2), kPage);  // hit: recency 2, 3, 0
  Registration held_again = get(c, page(2), kPage);
  get(c, page(3), kPage);  // recency 3, 2, 0
  get(c, page(4), kPage);
  ASSERT_EQ(d.deregisters.load(), 2u);
  EXPECT_EQ(d.last_deregistered(), reinterpret_cast<uintptr_t>(page(0)));
  EXPECT_EQ(c.stats().evictions.load(), 2u);
  // Page 2 in use and tail of the list: a miss now evicts page 3 (idle), not page 2.
  get(c, page(5), kPage);
  EXPECT_EQ(d.last_deregistered(), reinterpret_cast<uintptr_t>(page(3)));
  held.reset();
  held_again.reset();
  const uint64_t hits = c.stats().hits.load();
  get(c, page(2), kPage);  // still cached after its last release
  EXPECT_EQ(c.stats().hits.load(), hits + 1);
  c.flush();
  EXPECT_EQ(d.registers.load(), d.deregisters.load());
  munmap(p, 16 * kPage);
}

TEST(RegistrationCache, PinnedBytesNeverExceedTheLimit) {
  CountingDomain d;
  constexpr std::size_t kLimit = 24 * kPage;
  RegistrationCache c(d, unsafe_options(kLimit, 6));
  sluice::util::StatsRegistry stats;
  c.register_stats(stats);
  constexpr std::size_t kArena = 256;
  std::byte* p = map_pages(kArena);
  ASSERT_NE(p, nullptr);
  std::mt19937 rng(12345);
  std::vector<Registration> held;
  for (int i = 0; i < 5000; ++i) {
    const std::size_t len = 1 + rng() % (12 * kPage);
    const std::size_t off = rng() % (kArena * kPage - len);
    held.push_back(get(c, p + off, len));
    if (held.size() > 4 || rng() % 3 == 0) held.erase(held.begin() + rng() % held.size());
    ASSERT_LE(c.stats().pinned_bytes.load(), kLimit);
    ASSERT_LE(c.stats().entries.load(), 6u);
  }
  EXPECT_LE(*stats.value("regcache.pinned_bytes_peak"), kLimit);
  EXPECT_GT(*stats.value("regcache.pinned_bytes_peak"), kLimit / 2);  // the limit was pressed
  EXPECT_GT(*stats.value("regcache.evictions"), 0u);
  EXPECT_GT(*stats.value("regcache.uncached"), 0u);
  EXPECT_GT(*stats.value("regcache.hits"), 0u);
  // The domain saw at most the limit plus what uncached handles (at most 5, 12 pages each) held.
  EXPECT_LE(d.pinned_peak.load(), kLimit + 5 * 12 * kPage);
  held.clear();
  c.flush();
  EXPECT_EQ(d.pinned.load(), 0u);
  EXPECT_EQ(d.registers.load(), d.deregisters.load());
  munmap(p, kArena * kPage);
}

TEST(RegistrationCache, FailsClosedWithoutAMonitor) {
  CountingDomain d;
  InvalidationMonitor off(InvalidationMonitor::Mode::off);
  EXPECT_FALSE(off.working());
  CacheOptions o;
  RegistrationCache c(d, o, &off);
  EXPECT_FALSE(c.enabled());
  EXPECT_NE(c.state().find("off"), std::string::npos) << c.state();
  std::byte* p = map_pages(4);
  ASSERT_NE(p, nullptr);
  for (int i = 0; i < 3; ++i) get(c, p, 2 * kPage);
  EXPECT_EQ(c.stats().uncached.load(), 3u);
  EXPECT_EQ(c.stats().hits.load(), 0u);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(d.registers.load(), 3u);
  EXPECT_EQ(d.deregisters.load(), 3u);
  CacheOptions configured_off;
  configured_off.monitor = CacheMonitor::off;
  RegistrationCache c2(d, configured_off);
  EXPECT_FALSE(c2.enabled());
  munmap(p, 4 * kPage);
}

TEST(RegistrationCache, OptionsFromConfigClampRanges) {
  struct Fake final : sluice::util::ConfigValues {
    std::map<std::string, std::string, std::less<>> v;
    bool get_bool(std::string_view) const override { return false; }
    int64_t get_int(std::string_view n) const override { return std::stoll(v.find(n)->second); }
    uint64_t get_size(std::string_view n) const override { return std::stoull(v.find(n)->second); }
    double get_seconds(std::string_view) const override { return 0; }
    std::string get_string(std::string_view n) const override { return v.find(n)->second; }
    bool is_set(std::string_view) const override { return true; }
  } cfg;
  // Every key the options read is in the table.
  for (const auto& k : registration_cache_config()) cfg.v[std::string(k.name)] = "";
  cfg.v["REG_CACHE_MAX_BYTES"] = "1024";
  cfg.v["REG_CACHE_MAX_ENTRIES"] = "0";
  cfg.v["REG_CACHE_MONITOR"] = "unsafe-none";
  std::vector<std::string> problems;
  const CacheOptions o = CacheOptions::from_config(cfg, problems);
  EXPECT_EQ(o.max_bytes, CacheOptions::kMinBytes);
  EXPECT_EQ(o.max_entries, 1u);
  EXPECT_EQ(o.monitor, CacheMonitor::unsafe_none);
  EXPECT_EQ(problems.size(), 2u);
  cfg.v["REG_CACHE_MAX_BYTES"] = std::to_string(64 << 20);
  cfg.v["REG_CACHE_MAX_ENTRIES"] = "100";
  cfg.v["REG_CACHE_MONITOR"] = "uffd";
  problems.clear();
  const CacheOptions ok = CacheOptions::from_config(cfg, problems);
  EXPECT_EQ(ok.max_bytes, std::size_t{64} << 20);
  EXPECT_EQ(ok.max_entries, 100u);
  EXPECT_EQ(ok.monitor, CacheMonitor::uffd);
  EXPECT_TRUE(problems.empty());
}

// --- invalidation -------------------------------------------------------------------

// One cache with the userfaultfd monitor (its own, so tests do not share watches) or,
// with `invalidation` false, the same cache never invalidated: the stale case must show.
struct Fixture {
  explicit Fixture(bool invalidation)
      : monitor(invalidation ? InvalidationMonitor::Mode::uffd : InvalidationMonitor::Mode::off),
        cache(domain, options(invalidation), &monitor) {}
  static CacheOptions options(bool invalidation) {
    CacheOptions o;
    o.monitor = invalidation ? CacheMonitor::uffd : CacheMonitor::unsafe_none;
    return o;
  }
  CountingDomain domain;
  InvalidationMonitor monitor;
  RegistrationCache cache;
};

void fill(std::byte* p, std::size_t n, uint64_t cycle) {
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    const uint64_t v = cycle * 0x9E3779B97F4A7C15ull + i;
    std::memcpy(p + i, &v, 8);
  }
}

enum class Change { munmap, dontneed, mremap, glibc_free };

// Registers a buffer (released, so the entry is idle, or still held), changes its mapping
// with `how`, gets memory at the same address again with new contents, and looks it up.
// Returns whether that lookup returned a stale registration; nothing if the memory did not
// come back at the same address (another thread of the process took it first).
std::optional<bool> stale_after(Change how, bool invalidation, bool hold_across) {
  Fixture f(invalidation);
  if (invalidation && !f.cache.enabled()) {
    ADD_FAILURE() << "cache off: " << f.cache.state();
    return std::nullopt;
  }
  // glibc serves a request above the mmap threshold from free heap memory if it has
  // enough; 4 MiB is more than the test's heap holds, so the block is a mapping of its own.
  const std::size_t kLen = how == Change::glibc_free ? std::size_t{4} << 20 : 64 * 1024;
  std::byte* p = nullptr;
  if (how == Change::glibc_free) {
    mallopt(M_MMAP_THRESHOLD, 32 * 1024);
    p = static_cast<std::byte*>(malloc(kLen));
  } else {
    p = map_pages(kLen / kPage);
  }
  EXPECT_NE(p, nullptr);
  fill(p, kLen, 1);
  Registration first = get(f.cache, p, kLen);
  EXPECT_FALSE(stale(first));
  EXPECT_EQ(get(f.cache, p, kLen).local_key().value, first.local_key().value);  // a hit
  const uint64_t first_key = first.local_key().value;
  if (!hold_across) first.reset();

  std::byte* q = nullptr;
  switch (how) {
    case Change::munmap:
      munmap(p, kLen);
      q = map_pages(kLen / kPage, p);
      break;
    case Change::dontneed:
      madvise(p, kLen, MADV_DONTNEED);  // the same mapping, fresh zero pages
      q = p;
      break;
    case Change::mremap: {
      std::byte* dst = map_pages(kLen / kPage);
      void* moved = mremap(p, kLen, kLen, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
      EXPECT_EQ(moved, dst);
      q = map_pages(kLen / kPage, p);
      munmap(dst, kLen);
      break;
    }
    case Change::glibc_free: {
      void* page = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(p) & ~(kPage - 1));
      free(p);
      unsigned char v = 0;
      EXPECT_NE(mincore(page, kPage, &v), 0) << "glibc's free did not unmap the block";
      q = static_cast<std::byte*>(malloc(kLen));
      break;
    }
  }
  if (q != p) {
    if (how == Change::glibc_free)
      free(q);
    else if (q)
      munmap(q, kLen);
    return std::nullopt;
  }
  fill(q, kLen, 2);
  Registration second = get(f.cache, q, kLen);
  const bool was_stale = stale(second);
  if (invalidation) {
    EXPECT_NE(second.local_key().value, first_key);
    EXPECT_GE(f.cache.stats().invalidations.load(), 1u);
    EXPECT_EQ(f.cache.stats().misses.load(), 2u);
  }
  if (hold_across) {
    // The entry invalidated in use was kept pinned for its holder and goes with it.
    const uint64_t before = f.domain.deregisters.load();
    first.reset();
    if (invalidation) {
      EXPECT_EQ(f.domain.deregisters.load(), before + 1);
    }
  }
  second.reset();
  if (how == Change::glibc_free)
    free(q);
  else
    munmap(q, kLen);
  return was_stale;
}

// The address must come back for the check to mean anything. Without sanitizers nothing
// else in the process maps memory meanwhile, so that is a failure; a sanitizer's runtime
// may take the range, and the case is skipped then.
#ifdef SLUICE_SANITIZER_ALLOCATOR
#define ADDRESS_NOT_REUSED() GTEST_SKIP() << "the address was taken by the sanitizer's runtime"
#else
#define ADDRESS_NOT_REUSED() FAIL() << "the memory did not come back at the same address"
#endif
#define EXPECT_STALE(expected, ...)                           \
  do {                                                        \
    const std::optional<bool> got = stale_after(__VA_ARGS__); \
    if (!got) ADDRESS_NOT_REUSED();                           \
    EXPECT_EQ(*got, expected);                                \
  } while (0)

TEST(RegistrationCacheInvalidation, MunmapThenMapAgainMisses) {
  EXPECT_STALE(false, Change::munmap, true, false);
  EXPECT_STALE(false, Change::munmap, true, true);
}
TEST(RegistrationCacheInvalidation, MunmapStaleWithInvalidationOff) {
  EXPECT_STALE(true, Change::munmap, false, false);
}
TEST(RegistrationCacheInvalidation, DontneedMisses) {
  EXPECT_STALE(false, Change::dontneed, true, false);
  EXPECT_STALE(false, Change::dontneed, true, true);
}
TEST(RegistrationCacheInvalidation, DontneedStaleWithInvalidationOff) {
  EXPECT_STALE(true, Change::dontneed, false, false);
}
TEST(RegistrationCacheInvalidation, MremapMovingPagesMisses) {
  EXPECT_STALE(false, Change::mremap, true, false);
  EXPECT_STALE(false, Change::mremap, true, true);
}
TEST(RegistrationCacheInvalidation, MremapStaleWithInvalidationOff) {
  EXPECT_STALE(true, Change::mremap, false, false);
}
TEST(RegistrationCacheInvalidation, GlibcFreeOfLargeBlockMisses) {
#ifdef SLUICE_SANITIZER_ALLOCATOR
  GTEST_SKIP() << "the sanitizer's allocator replaces glibc malloc";
#endif
  EXPECT_STALE(false, Change::glibc_free, true, false);
  EXPECT_STALE(false, Change::glibc_free, true, true);
}
TEST(RegistrationCacheInvalidation, GlibcFreeStaleWithInvalidationOff) {
#ifdef SLUICE_SANITIZER_ALLOCATOR
  GTEST_SKIP() << "the sanitizer's allocator replaces glibc malloc";
#endif
  EXPECT_STALE(true, Change::glibc_free, false, false);
}

// A range another userfaultfd watches cannot be watched again: registered uncached.
TEST(RegistrationCacheInvalidation, RangeWatchedElsewhereIsUncached) {
  InvalidationMonitor other;
  ASSERT_TRUE(other.working()) << other.status();
  std::byte* p = map_pages(4);
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(other.watch(reinterpret_cast<uintptr_t>(p), 4 * kPage), InvalidationMonitor::Watch::ok);
  Fixture f(true);
  get(f.cache, p, 4 * kPage);
  get(f.cache, p, 4 * kPage);
  EXPECT_EQ(f.cache.stats().watch_busy.load(), 2u);
  EXPECT_EQ(f.cache.stats().uncached.load(), 2u);
  EXPECT_EQ(f.cache.size(), 0u);
  munmap(p, 4 * kPage);
}

// The kernel rule the monitor is built on: an unmapping thread does not return before its
// event has been read. Checked on a raw userfaultfd with no timing: once poll() says the
// event is queued, the unmapper must still be inside munmap until we read it.
TEST(InvalidationMonitorRules, UnmapperWaitsForTheRead) {
  const int fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY));
  if (fd < 0) GTEST_SKIP() << "userfaultfd: " << std::strerror(errno);
  uffdio_api api{};
  api.api = UFFD_API;
  api.features = UFFD_FEATURE_EVENT_UNMAP;
  ASSERT_EQ(ioctl(fd, UFFDIO_API, &api), 0);
  std::byte* p = map_pages(4);
  uffdio_register reg{};
  reg.range.start = reinterpret_cast<uintptr_t>(p);
  reg.range.len = 4 * kPage;
  reg.mode = UFFDIO_REGISTER_MODE_WP;
  ASSERT_EQ(ioctl(fd, UFFDIO_REGISTER, &reg), 0);
  std::atomic<bool> returned{false};
  std::thread t([&] {
    munmap(p, 4 * kPage);
    returned = true;
  });
  pollfd pfd{fd, POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, -1), 1);
  EXPECT_FALSE(returned.load());  // queued, unread: the unmapper is still blocked
  uffd_msg msg{};
  ASSERT_EQ(read(fd, &msg, sizeof msg), static_cast<ssize_t>(sizeof msg));
  EXPECT_EQ(msg.event, UFFD_EVENT_UNMAP);
  t.join();  // released by the read
  EXPECT_TRUE(returned.load());
  close(fd);
}

// A second monitor cannot watch what the first watches (EBUSY), as the cache relies on.
TEST(InvalidationMonitorRules, SecondMonitorGetsBusy) {
  InvalidationMonitor a, b;
  ASSERT_TRUE(a.working()) << a.status();
  std::byte* p = map_pages(2);
  const auto start = reinterpret_cast<uintptr_t>(p);
  EXPECT_EQ(a.watch(start, 2 * kPage), InvalidationMonitor::Watch::ok);
  EXPECT_EQ(a.watch(start, 2 * kPage), InvalidationMonitor::Watch::ok);  // idempotent
  EXPECT_EQ(b.watch(start, 2 * kPage), InvalidationMonitor::Watch::busy);
  munmap(p, 2 * kPage);  // a's thread reads the event and lets this return
}

// --- threads ------------------------------------------------------------------------

// Four threads register, release and free at once, over private buffers that come and go
// (mmap/munmap and large mallocs, reused at the same addresses) and one shared region:
// no lookup may return a stale registration, and nothing leaks.
TEST(RegistrationCacheThreads, RegisterReleaseFreeConcurrently) {
  CountingDomain d;
  InvalidationMonitor monitor;
  ASSERT_TRUE(monitor.working()) << monitor.status();
  {
    CacheOptions o;
    o.max_bytes = 2 << 20;  // small: evictions and uncached fallbacks happen too
    o.max_entries = 24;
    RegistrationCache c(d, o, &monitor);
    ASSERT_TRUE(c.enabled());
    constexpr std::size_t kShared = 64;
    std::byte* shared = map_pages(kShared);
    fill(shared, kShared * kPage, 7);
    std::atomic<int> stale_seen{0};
    // Contents stay fixed while a buffer lives, so a hash mismatch can only mean a stale
    // entry. Every private buffer is its own mapping: glibc would serve mallocs of this size
    // from heap memory it reuses in place (same pages, new contents: not stale, but the
    // hash could not tell); the glibc case is the single-threaded test above.
    auto worker = [&](int id) {
      std::mt19937 rng(id);
      for (int i = 0; i < 300; ++i) {
        const std::size_t len = (40 + rng() % 120) * 1024;
        std::byte* p = map_pages(len / kPage + 1);
        fill(p, len, static_cast<uint64_t>(id) << 32 | static_cast<uint64_t>(i));
        for (int k = 0; k < 3; ++k) {
          Registration r = get(c, p, len);
          if (stale(r)) stale_seen.fetch_add(1);
          const std::size_t off = (rng() % (kShared - 8)) * kPage + rng() % kPage;
          Registration s = get(c, shared + off, 1 + rng() % (6 * kPage));
          if (stale(s)) stale_seen.fetch_add(1);
        }
        munmap(p, (len / kPage + 1) * kPage);
      }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back(worker, t);
    for (auto& t : threads) t.join();
    EXPECT_EQ(stale_seen.load(), 0);
    EXPECT_GT(c.stats().hits.load(), 0u);
    EXPECT_LE(c.stats().pinned_bytes_peak.load(), o.max_bytes);
    munmap(shared, kShared * kPage);
  }
  EXPECT_EQ(d.pinned.load(), 0u);
  EXPECT_EQ(d.registers.load(), d.deregisters.load());
}

}  // namespace
