// Firehose bookkeeping (src/mem/firehose): F per node, bucket reference counts, the victim
// FIFO's order and bound, the initiator's recycling, the M + MAXVICTIM bound under a random
// workload from several nodes, and invalidation of a bucket whose memory is freed.
#include <sys/mman.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "mem/firehose.hpp"
#include "mem/invalidation_monitor.hpp"

namespace {

using sluice::Errc;
using namespace sluice::mem;

constexpr std::size_t kB = 64 * 1024;

// Pins nothing; counts what is held.
class CountingDomain final : public Domain {
 public:
  std::string_view name() const override { return "counting"; }
  bool pins() const override { return true; }
  Errc register_memory(std::span<const std::byte> buf, Registration& out) override {
    if (fail) return Errc::no_memory;
    auto* r = new Region;
    r->domain = this;
    r->base = const_cast<std::byte*>(buf.data());
    r->length = buf.size();
    held += buf.size();
    ++registrations;
    out = Registration::adopt(r);
    return Errc::ok;
  }
  RegistrationCost cost() const override { return {}; }
  uint64_t held = 0;
  uint64_t registrations = 0;
  bool fail = false;

 protected:
  void deregister(Region* r) override {
    held -= r->length;
    delete r;
  }
};

// Anonymous memory aligned to the bucket size.
struct Arena {
  explicit Arena(std::size_t bytes) : size(bytes) {
    raw = static_cast<std::byte*>(mmap(nullptr, bytes + kB, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
    base = reinterpret_cast<std::byte*>((reinterpret_cast<uintptr_t>(raw) + kB - 1) / kB * kB);
  }
  ~Arena() { munmap(raw, size + kB); }
  uint64_t bucket(std::size_t i) const { return reinterpret_cast<uint64_t>(base) + i * kB; }
  BucketTable::Pin pin(std::size_t i) const { return {bucket(i), bucket(i), bucket(i) + kB}; }
  std::byte* raw;
  std::byte* base;
  std::size_t size;
};

FirehoseParams params(std::size_t m_buckets, std::size_t victims, int nodes) {
  FirehoseParams p;
  p.bucket_bytes = kB;
  p.m_bytes = m_buckets * kB;
  p.maxvictim_bytes = victims * kB;
  p.nodes = nodes;
  return p;
}

TEST(Firehose, FirehosesPerNode) {
  EXPECT_EQ(params(16, 0, 2).firehoses_per_node(), 16u);
  EXPECT_EQ(params(16, 0, 5).firehoses_per_node(), 4u);
  EXPECT_EQ(params(16, 0, 4).firehoses_per_node(), 5u);  // floor(16 / 3)
  EXPECT_EQ(params(16, 0, 1).firehoses_per_node(), 0u);
  EXPECT_EQ(params(16, 0, 18).validate(), Errc::invalid_argument);  // F would be 0
  FirehoseParams odd = params(16, 0, 2);
  odd.bucket_bytes = page_size() + 1;
  EXPECT_EQ(odd.validate(), Errc::invalid_argument);
  EXPECT_EQ(params(16, 4, 3).validate(), Errc::ok);
  EXPECT_EQ(params(16, 4, 3).max_victims(), 4u);
}

TEST(Firehose, TargetRefusesMoreThanF) {
  Arena a(32 * kB);
  CountingDomain d;
  BucketTable t(d, params(4, 2, 3), nullptr);  // F = 2 per node
  const BucketTable::Pin three[] = {a.pin(0), a.pin(1), a.pin(2)};
  EXPECT_EQ(t.move(1, {}, three), Errc::no_memory);
  EXPECT_EQ(t.pinned_buckets(), 0u);
  EXPECT_EQ(t.move(1, {}, std::span(three, 2)), Errc::ok);
  EXPECT_EQ(t.firehoses(1), 2u);
  const uint64_t rel[] = {a.bucket(0)};
  EXPECT_EQ(t.move(1, rel, std::span(three + 2, 1)), Errc::ok);  // a move: one out, one in
  EXPECT_EQ(t.firehoses(1), 2u);
}

TEST(Firehose, BucketRefcounts) {
  Arena a(8 * kB);
  CountingDomain d;
  BucketTable t(d, params(8, 4, 3), nullptr);
  const BucketTable::Pin p0[] = {a.pin(0)};
  ASSERT_EQ(t.move(1, {}, p0), Errc::ok);
  ASSERT_EQ(t.move(2, {}, p0), Errc::ok);
  EXPECT_EQ(t.refs(a.bucket(0)), 2u);
  EXPECT_EQ(d.registrations, 1u);  // the second firehose shares the pinned bucket
  EXPECT_EQ(t.stats().shared, 1u);
  EXPECT_TRUE(t.mapped(1, a.bucket(0) + 100, 200));
  EXPECT_FALSE(t.mapped(0, a.bucket(0), 8));  // node 0 maps nothing
  const uint64_t r0[] = {a.bucket(0)};
  ASSERT_EQ(t.move(1, r0, {}), Errc::ok);
  EXPECT_EQ(t.refs(a.bucket(0)), 1u);
  EXPECT_FALSE(t.mapped(1, a.bucket(0), 8));
  EXPECT_TRUE(t.mapped(2, a.bucket(0), 8));
  EXPECT_EQ(t.victims(), 0u);
  ASSERT_EQ(t.move(2, r0, {}), Errc::ok);
  EXPECT_EQ(t.refs(a.bucket(0)), 0u);
  EXPECT_TRUE(t.pinned(a.bucket(0)));  // lazily kept: a victim
  EXPECT_EQ(t.victims(), 1u);
  // Releasing what a node does not map changes nothing.
  ASSERT_EQ(t.move(2, r0, {}), Errc::ok);
  EXPECT_EQ(t.victims(), 1u);
  EXPECT_EQ(t.pinned_bytes(), kB);
  EXPECT_EQ(d.held, kB);
}

TEST(Firehose, VictimFifoOrderAndBound) {
  Arena a(8 * kB);
  CountingDomain d;
  BucketTable t(d, params(8, 2, 2), nullptr);  // MAXVICTIM: 2 buckets
  const BucketTable::Pin pins[] = {a.pin(0), a.pin(1), a.pin(2)};
  ASSERT_EQ(t.move(1, {}, pins), Errc::ok);
  EXPECT_EQ(d.registrations, 3u);
  for (std::size_t i = 0; i < 2; ++i) {
    const uint64_t r[] = {a.bucket(i)};
    ASSERT_EQ(t.move(1, r, {}), Errc::ok);
  }
  EXPECT_EQ(t.victim_order(), (std::vector<uint64_t>{a.bucket(1), a.bucket(0)}));  // head first
  const uint64_t r2[] = {a.bucket(2)};
  ASSERT_EQ(t.move(1, r2, {}), Errc::ok);
  // Over MAXVICTIM: the tail (the oldest victim, bucket 0) is unpinned.
  EXPECT_EQ(t.victim_order(), (std::vector<uint64_t>{a.bucket(2), a.bucket(1)}));
  EXPECT_FALSE(t.pinned(a.bucket(0)));
  EXPECT_EQ(d.held, 2 * kB);
  // A move to a victim takes it back without pinning.
  const BucketTable::Pin p1[] = {a.pin(1)};
  ASSERT_EQ(t.move(1, {}, p1), Errc::ok);
  EXPECT_EQ(d.registrations, 3u);
  EXPECT_EQ(t.stats().victims_reused, 1u);
  EXPECT_EQ(t.victim_order(), (std::vector<uint64_t>{a.bucket(2)}));
  EXPECT_EQ(t.refs(a.bucket(1)), 1u);
}

TEST(Firehose, MoveIsAllOrNothing) {
  Arena a(8 * kB);
  CountingDomain d;
  BucketTable t(d, params(8, 2, 2), nullptr);
  // Bucket 1's memory is gone: the move fails and bucket 0 is not left mapped.
  ASSERT_EQ(munmap(a.base + kB, kB), 0);
  const BucketTable::Pin pins[] = {a.pin(0), a.pin(1)};
  EXPECT_EQ(t.move(1, {}, pins), Errc::remote_access);
  EXPECT_EQ(t.firehoses(1), 0u);
  EXPECT_FALSE(t.mapped(1, a.bucket(0), 1));
  EXPECT_LE(t.victims(), 2u);
  d.fail = true;
  const BucketTable::Pin p2[] = {a.pin(2)};
  EXPECT_EQ(t.move(1, {}, p2), Errc::no_memory);
  EXPECT_EQ(t.firehoses(1), 0u);
}

TEST(Firehose, PartialBucketPinsOnlyItsPagesAndGrows) {
  Arena a(4 * kB);
  CountingDomain d;
  BucketTable t(d, params(8, 2, 2), nullptr);
  const uint64_t page = page_size();
  const BucketTable::Pin head[] = {{a.bucket(0), a.bucket(0), a.bucket(0) + page}};
  ASSERT_EQ(t.move(1, {}, head), Errc::ok);
  EXPECT_EQ(t.pinned_bytes(), page);
  EXPECT_TRUE(t.mapped(1, a.bucket(0), page));
  EXPECT_FALSE(t.mapped(1, a.bucket(0), page + 1));  // past the pinned pages
  const BucketTable::Pin whole[] = {a.pin(0)};
  ASSERT_EQ(t.move(1, {}, whole), Errc::ok);  // same firehose, wider pin
  EXPECT_EQ(t.firehoses(1), 1u);
  EXPECT_EQ(t.pinned_bytes(), kB);
  EXPECT_EQ(d.held, kB);
  EXPECT_TRUE(t.mapped(1, a.bucket(0), kB));
}

TEST(Firehose, InitiatorRecyclesOldestUnreferenced) {
  FirehoseTable f(params(3, 0, 2));  // F = 3
  const uint64_t base = 1ull << 32;
  std::vector<uint64_t> rel, pin;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(f.acquire(1, base + i * kB, 8, rel, pin), FirehoseTable::Acquire::miss);
    EXPECT_EQ(pin, (std::vector<uint64_t>{base + i * kB}));
    EXPECT_TRUE(rel.empty());
    f.confirm(1, pin, true);
  }
  EXPECT_EQ(f.acquire(1, base + 1 * kB, 8, rel, pin), FirehoseTable::Acquire::hit);
  EXPECT_EQ(f.refs(1, base + kB), 2u);
  for (int i : {0, 1, 1, 2}) f.release(1, base + i * kB, 8);  // FIFO: 0, 1, 2
  EXPECT_EQ(f.refs(1, base + kB), 0u);
  EXPECT_TRUE(f.mapped(1, base + kB));
  // A fourth bucket: the oldest unreferenced firehose (bucket 0) moves.
  ASSERT_EQ(f.acquire(1, base + 3 * kB, 8, rel, pin), FirehoseTable::Acquire::miss);
  EXPECT_EQ(rel, (std::vector<uint64_t>{base}));
  EXPECT_FALSE(f.mapped(1, base));
  EXPECT_EQ(f.firehoses(1), 3u);
  // Held by operations, none can move: no room, nothing taken.
  ASSERT_EQ(f.acquire(1, base + kB, 2 * kB, rel, pin), FirehoseTable::Acquire::hit);
  EXPECT_EQ(f.acquire(1, base + 5 * kB, 8, rel, pin), FirehoseTable::Acquire::no_room);
  EXPECT_EQ(f.refs(1, base + kB), 1u);
  EXPECT_EQ(f.firehoses(1), 3u);
  // A range needing more firehoses than F never fits; a range half-mapped gives back refs.
  EXPECT_EQ(f.acquire(1, base + 2 * kB, 3 * kB, rel, pin), FirehoseTable::Acquire::no_room);
  EXPECT_EQ(f.refs(1, base + 2 * kB), 1u);
  // The target said stale: forgotten, the next acquire moves again.
  f.release(1, base + kB, 2 * kB);
  f.forget(1, base + kB, 8);
  EXPECT_FALSE(f.mapped(1, base + kB));
  EXPECT_EQ(f.firehoses(1), 2u);
  ASSERT_EQ(f.acquire(1, base + kB, 8, rel, pin), FirehoseTable::Acquire::miss);
  EXPECT_EQ(pin, (std::vector<uint64_t>{base + kB}));
  // A failed move forgets its firehoses once no operation holds them.
  f.confirm(1, pin, false);
  EXPECT_FALSE(f.mapped(1, base + kB));
  f.release(1, base + kB, 8);
  EXPECT_EQ(f.firehoses(1), 2u);
}

// Several initiators against one target with a working set far larger than M: thousands of
// operations, some held in flight; after every step pinned memory stays within
// M + MAXVICTIM, each node within F, and every firehose an initiator believes mapped is
// mapped at the target.
TEST(Firehose, BoundUnderRandomWorkload) {
  constexpr int kNodes = 4;
  constexpr std::size_t kM = 24, kVictims = 6, kWorkingSet = 200;
  Arena a(kWorkingSet * kB);
  CountingDomain d;
  const FirehoseParams p = params(kM, kVictims, kNodes);
  const std::size_t F = p.firehoses_per_node();  // 8
  BucketTable target(d, p, nullptr);
  std::vector<FirehoseTable> init(kNodes, FirehoseTable(p));
  struct Held {
    int node;
    uint64_t addr;
    std::size_t len;
  };
  std::vector<Held> held;
  std::mt19937_64 rng(1234);
  std::vector<uint64_t> rel, pin;
  std::size_t hits = 0, misses = 0;
  for (int step = 0; step < 20000; ++step) {
    if (!held.empty() && (rng() % 2 == 0 || held.size() > 12)) {
      const std::size_t i = rng() % held.size();
      init[held[i].node].release(held[i].node, held[i].addr, held[i].len);
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
      continue;
    }
    const int node = 1 + static_cast<int>(rng() % (kNodes - 1));
    // Mostly within a hot set that fits, sometimes anywhere in the large working set.
    const std::size_t span = rng() % 4 == 0 ? kWorkingSet : 10;
    const uint64_t off = (rng() % (span * kB - 3 * kB));
    const std::size_t len = 1 + rng() % (2 * kB);
    const uint64_t addr = a.bucket(0) + off;
    const auto r = init[node].acquire(node, addr, len, rel, pin);
    if (r == FirehoseTable::Acquire::no_room) continue;
    if (r == FirehoseTable::Acquire::miss) {
      ++misses;
      std::vector<BucketTable::Pin> pins;
      for (uint64_t b : pin) pins.push_back({b, b, b + kB});
      const Errc e = target.move(node, rel, pins);
      ASSERT_EQ(e, Errc::ok) << "step " << step;
      init[node].confirm(node, pin, true);
    } else {
      ++hits;
    }
    ASSERT_TRUE(target.mapped(node, addr, len)) << "step " << step;
    held.push_back({node, addr, len});
    ASSERT_LE(target.pinned_bytes(), p.m_bytes + p.maxvictim_bytes) << "step " << step;
    ASSERT_EQ(d.held, target.pinned_bytes());
    ASSERT_LE(target.victims(), kVictims);
    for (int n = 1; n < kNodes; ++n) {
      ASSERT_LE(init[n].firehoses(n), F);
      ASSERT_LE(target.firehoses(n), F);
      ASSERT_EQ(target.firehoses(n), init[n].firehoses(n));
    }
  }
  EXPECT_GT(hits, 1000u);
  EXPECT_GT(misses, 1000u);
  EXPECT_GT(target.stats().victims_reused, 0u);
  EXPECT_GT(target.stats().unpins, 0u);
  EXPECT_EQ(target.stats().pinned_peak <= p.m_bytes + p.maxvictim_bytes, true);
}

TEST(Firehose, FreedBucketIsInvalidated) {
  InvalidationMonitor monitor;
  if (!monitor.working()) GTEST_SKIP() << monitor.status();
  Arena a(8 * kB);
  CountingDomain d;
  BucketTable t(d, params(8, 4, 2), &monitor);
  const BucketTable::Pin pins[] = {a.pin(0), a.pin(1)};
  ASSERT_EQ(t.move(1, {}, pins), Errc::ok);
  const uint64_t r1[] = {a.bucket(1)};
  ASSERT_EQ(t.move(1, r1, {}), Errc::ok);  // bucket 1: a victim
  ASSERT_TRUE(t.mapped(1, a.bucket(0), kB));
  // The owner frees both buckets' memory (bucket 0 mapped by a firehose, bucket 1 a victim).
  ASSERT_EQ(munmap(a.base, 2 * kB), 0);
  t.process_invalidations();
  EXPECT_FALSE(t.mapped(1, a.bucket(0), 1));
  EXPECT_FALSE(t.pinned(a.bucket(0)));
  EXPECT_FALSE(t.pinned(a.bucket(1)));
  EXPECT_EQ(t.victims(), 0u);
  EXPECT_EQ(t.firehoses(1), 0u);
  EXPECT_EQ(t.stats().invalidations, 2u);
  EXPECT_EQ(t.pinned_bytes(), 0u);
  EXPECT_EQ(d.held, 0u);
  // Mapping it again: unmapped memory is refused, new memory at the address is pinned anew
  // (not the victim that held the old pages).
  const BucketTable::Pin p1[] = {a.pin(1)};
  EXPECT_EQ(t.move(1, {}, p1), Errc::remote_access);
  void* again =
      mmap(a.base, 2 * kB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  ASSERT_EQ(again, static_cast<void*>(a.base));
  const uint64_t regs = d.registrations;
  ASSERT_EQ(t.move(1, {}, p1), Errc::ok);
  EXPECT_EQ(d.registrations, regs + 1);
  EXPECT_EQ(t.stats().victims_reused, 0u);
  EXPECT_TRUE(t.mapped(1, a.bucket(1), kB));
}

}  // namespace
