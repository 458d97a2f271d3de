// Unit tests for tag matching: MPI ordering rules, wildcards, cancel, scale, and a
// randomized comparison against a linear-scan reference model.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <vector>

#include "core/matching.hpp"

namespace sluice::detail {
namespace {

constexpr int32_t kAny = -1;

MatchEntry entry(uint32_t ctx, int32_t src, int32_t tag) {
  MatchEntry e;
  e.ctx = ctx;
  e.src = src;
  e.tag = tag;
  return e;
}

// ---- posted receives ---------------------------------------------------------------------

TEST(MatchPosted, ExactMatch) {
  PostedQueue q;
  MatchEntry a = entry(0, 1, 5);
  q.push(a);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.take(0, 1, 6), nullptr);
  EXPECT_EQ(q.take(0, 2, 5), nullptr);
  EXPECT_EQ(q.take(1, 1, 5), nullptr);
  EXPECT_EQ(q.take(0, 1, 5), &a);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.take(0, 1, 5), nullptr);
}

TEST(MatchPosted, EachWildcardKind) {
  PostedQueue q;
  MatchEntry any_tag = entry(0, 3, kAny);
  MatchEntry any_src = entry(0, kAny, 9);
  MatchEntry any_both = entry(0, kAny, kAny);
  q.push(any_tag);
  q.push(any_src);
  q.push(any_both);
  EXPECT_EQ(q.take(0, 3, 100), &any_tag);  // only (3,*) and (*,*) match; (3,*) posted first
  EXPECT_EQ(q.take(0, 4, 9), &any_src);    // (*,9) posted before (*,*)
  EXPECT_EQ(q.take(0, 4, 8), &any_both);
  EXPECT_TRUE(q.empty());
}

TEST(MatchPosted, InternalNegativeTagsAreNotWildcards) {
  PostedQueue q;
  MatchEntry internal = entry(0, 1, -7);
  q.push(internal);
  EXPECT_EQ(q.take(0, 1, 7), nullptr);
  EXPECT_EQ(q.take(0, 1, -7), &internal);
}

TEST(MatchPosted, EarliestPostedWinsAcrossExactAndWildcardLists) {
  PostedQueue q;
  MatchEntry w = entry(0, kAny, kAny);
  MatchEntry e1 = entry(0, 1, 1);
  MatchEntry t = entry(0, 1, kAny);
  MatchEntry e2 = entry(0, 1, 1);
  MatchEntry s = entry(0, kAny, 1);
  q.push(w);
  q.push(e1);
  q.push(t);
  q.push(e2);
  q.push(s);
  EXPECT_EQ(q.take(0, 1, 1), &w);
  EXPECT_EQ(q.take(0, 1, 1), &e1);
  EXPECT_EQ(q.take(0, 1, 1), &t);
  EXPECT_EQ(q.take(0, 1, 1), &e2);
  EXPECT_EQ(q.take(0, 1, 1), &s);
  EXPECT_EQ(q.take(0, 1, 1), nullptr);
}

TEST(MatchPosted, SameKeyIsFifo) {
  PostedQueue q;
  std::vector<MatchEntry> v(5, entry(2, 4, 4));
  for (auto& e : v) q.push(e);
  for (auto& e : v) EXPECT_EQ(q.take(2, 4, 4), &e);
}

TEST(MatchPosted, ContextsIsolate) {
  PostedQueue q;
  MatchEntry c1 = entry(1, kAny, kAny);
  MatchEntry c2 = entry(2, 0, 0);
  q.push(c1);
  q.push(c2);
  EXPECT_EQ(q.take(3, 0, 0), nullptr);
  EXPECT_EQ(q.take(2, 0, 0), &c2);
  EXPECT_EQ(q.take(2, 0, 0), nullptr);
  EXPECT_EQ(q.take(1, 0, 0), &c1);
}

TEST(MatchPosted, RemoveCancels) {
  PostedQueue q;
  MatchEntry a = entry(0, 1, 1);
  MatchEntry b = entry(0, kAny, 1);
  MatchEntry c = entry(0, 1, 1);
  q.push(a);
  q.push(b);
  q.push(c);
  EXPECT_TRUE(q.remove(b));
  EXPECT_FALSE(q.remove(b));  // not queued any more
  EXPECT_TRUE(q.remove(a));
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.take(0, 1, 1), &c);
  EXPECT_EQ(q.take(0, 2, 1), nullptr);  // the cancelled wildcard no longer matches
  MatchEntry never = entry(0, 1, 1);
  EXPECT_FALSE(q.remove(never));
}

TEST(MatchPosted, EntryCanBeReusedAfterTake) {
  PostedQueue q;
  MatchEntry a = entry(0, 1, 1);
  for (int i = 0; i < 3; ++i) {
    q.push(a);
    EXPECT_EQ(q.take(0, 1, 1), &a);
  }
  EXPECT_TRUE(q.empty());
}

TEST(MatchPosted, TenThousandDistinctTagsReverseArrivals) {
  constexpr int kN = 10000;
  PostedQueue q;
  std::vector<MatchEntry> v(kN);
  for (int i = 0; i < kN; ++i) {
    v[i] = entry(0, 1, i);
    q.push(v[i]);
  }
  for (int i = kN - 1; i >= 0; --i) {
    MatchEntry* e = q.take(0, 1, i);
    ASSERT_EQ(e, &v[i]) << "tag " << i;
  }
  EXPECT_TRUE(q.empty());
}

// ---- unexpected messages -----------------------------------------------------------------

TEST(MatchUnexpected, ExactMatchFindDoesNotRemove) {
  UnexpectedQueue q;
  MatchEntry a = entry(0, 1, 5);
  q.push(a);
  EXPECT_EQ(q.find(0, 1, 6), nullptr);
  EXPECT_EQ(q.find(0, 1, 5), &a);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.take(0, 1, 5), &a);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.find(0, 1, 5), nullptr);
}

TEST(MatchUnexpected, WildcardQueriesPickEarliestArrival) {
  UnexpectedQueue q;
  MatchEntry m1 = entry(0, 2, 7);
  MatchEntry m2 = entry(0, 1, 8);
  MatchEntry m3 = entry(0, 1, 7);
  MatchEntry m4 = entry(0, 2, 8);
  for (MatchEntry* m : {&m1, &m2, &m3, &m4}) q.push(*m);
  EXPECT_EQ(q.find(0, kAny, kAny), &m1);
  EXPECT_EQ(q.find(0, 1, kAny), &m2);
  EXPECT_EQ(q.find(0, kAny, 8), &m2);
  EXPECT_EQ(q.find(0, kAny, 7), &m1);
  EXPECT_EQ(q.find(0, 2, kAny), &m1);
  EXPECT_EQ(q.take(0, kAny, 7), &m1);
  EXPECT_EQ(q.find(0, 2, kAny), &m4);
  EXPECT_EQ(q.find(0, kAny, 7), &m3);
  EXPECT_EQ(q.take(0, kAny, kAny), &m2);
  EXPECT_EQ(q.take(0, 1, kAny), &m3);
  EXPECT_EQ(q.take(0, kAny, kAny), &m4);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.find(0, kAny, kAny), nullptr);
  EXPECT_EQ(q.find(0, 2, kAny), nullptr);
  EXPECT_EQ(q.find(0, kAny, 8), nullptr);
}

TEST(MatchUnexpected, ContextsIsolate) {
  UnexpectedQueue q;
  MatchEntry a = entry(1, 0, 0);
  MatchEntry b = entry(2, 0, 0);
  q.push(a);
  q.push(b);
  EXPECT_EQ(q.find(3, kAny, kAny), nullptr);
  EXPECT_EQ(q.find(2, kAny, kAny), &b);
  EXPECT_EQ(q.find(2, 0, kAny), &b);
  EXPECT_EQ(q.find(2, kAny, 0), &b);
  EXPECT_EQ(q.take(1, 0, 0), &a);
  EXPECT_EQ(q.find(1, kAny, kAny), nullptr);
}

TEST(MatchUnexpected, RemoveMiddleAndHead) {
  UnexpectedQueue q;
  MatchEntry a = entry(0, 1, 1);
  MatchEntry b = entry(0, 1, 1);
  MatchEntry c = entry(0, 2, 1);
  q.push(a);
  q.push(b);
  q.push(c);
  q.remove(b);  // middle of its bin: no heap change
  EXPECT_EQ(q.size(), 2u);
  q.remove(a);  // head of its bin
  EXPECT_EQ(q.find(0, kAny, 1), &c);
  EXPECT_EQ(q.find(0, 1, kAny), nullptr);
  q.remove(a);  // already removed: ignored
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.take(0, kAny, kAny), &c);
}

TEST(MatchUnexpected, ManyTagsFromOneSourceAnySourceQueries) {
  constexpr int kN = 10000;
  UnexpectedQueue q;
  std::vector<MatchEntry> v(kN);
  for (int i = 0; i < kN; ++i) {
    v[i] = entry(0, i % 3, i);
    q.push(v[i]);
  }
  for (int i = kN - 1; i >= 0; --i) ASSERT_EQ(q.take(0, kAny, i), &v[i]);
  EXPECT_TRUE(q.empty());
}

// ---- randomized comparison with a reference model ----------------------------------------

bool matches(const MatchEntry& pattern, uint32_t ctx, int32_t src, int32_t tag) {
  return pattern.ctx == ctx && (pattern.src == kAny || pattern.src == src) &&
         (pattern.tag == kAny || pattern.tag == tag);
}

struct RandomSpace {
  uint32_t contexts;
  int32_t sources;
  int32_t tags;
};

void randomized(uint32_t seed, RandomSpace space, int operations) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int32_t>(rng() % static_cast<uint32_t>(n)); };
  auto wild = [&](int32_t v) { return pick(4) == 0 ? kAny : v; };
  // Internal (negative) tags share the space; -1 is the wildcard, so skip it.
  auto a_tag = [&]() {
    int32_t t = pick(space.tags) - 2;
    return t == -1 ? space.tags : t;
  };

  std::deque<MatchEntry> storage;  // stable addresses
  std::vector<MatchEntry*> free_entries;
  auto make = [&](uint32_t ctx, int32_t src, int32_t tag) {
    MatchEntry* e;
    if (!free_entries.empty()) {
      e = free_entries.back();
      free_entries.pop_back();
    } else {
      e = &storage.emplace_back();
    }
    e->ctx = ctx;
    e->src = src;
    e->tag = tag;
    return e;
  };

  PostedQueue posted;
  UnexpectedQueue unexpected;
  std::vector<MatchEntry*> ref_posted, ref_unexpected;  // in push order

  for (int op = 0; op < operations; ++op) {
    const uint32_t ctx = static_cast<uint32_t>(pick(static_cast<int>(space.contexts)));
    const int32_t src = pick(space.sources);
    const int32_t tag = a_tag();
    switch (pick(8)) {
      case 0:
      case 1: {  // post a receive, maybe with wildcards
        MatchEntry* e = make(ctx, wild(src), wild(tag));
        posted.push(*e);
        ref_posted.push_back(e);
        break;
      }
      case 2: {  // a message arrives: match a posted receive, else it is unexpected
        auto it = std::find_if(ref_posted.begin(), ref_posted.end(),
                               [&](MatchEntry* p) { return matches(*p, ctx, src, tag); });
        MatchEntry* expected = it == ref_posted.end() ? nullptr : *it;
        MatchEntry* got = posted.take(ctx, src, tag);
        ASSERT_EQ(got, expected) << "posted take op " << op;
        if (got) {
          ref_posted.erase(it);
          free_entries.push_back(got);
        } else {
          MatchEntry* e = make(ctx, src, tag);
          unexpected.push(*e);
          ref_unexpected.push_back(e);
        }
        break;
      }
      case 3: {  // a receive or probe looks for an unexpected message
        const int32_t qs = wild(src), qt = wild(tag);
        MatchEntry query = entry(ctx, qs, qt);
        auto it = std::find_if(ref_unexpected.begin(), ref_unexpected.end(), [&](MatchEntry* m) {
          return matches(query, m->ctx, m->src, m->tag);
        });
        MatchEntry* expected = it == ref_unexpected.end() ? nullptr : *it;
        ASSERT_EQ(unexpected.find(ctx, qs, qt), expected) << "unexpected find op " << op;
        if (pick(2) == 0) {
          ASSERT_EQ(unexpected.take(ctx, qs, qt), expected) << "unexpected take op " << op;
          if (expected) {
            ref_unexpected.erase(it);
            free_entries.push_back(expected);
          }
        }
        break;
      }
      case 4:
      case 5: {  // an unexpected message arrives directly
        MatchEntry* e = make(ctx, src, tag);
        unexpected.push(*e);
        ref_unexpected.push_back(e);
        break;
      }
      case 6: {  // cancel a posted receive
        if (ref_posted.empty()) break;
        std::size_t i = static_cast<std::size_t>(pick(static_cast<int>(ref_posted.size())));
        MatchEntry* e = ref_posted[i];
        ASSERT_TRUE(posted.remove(*e));
        ASSERT_FALSE(posted.remove(*e));
        ref_posted.erase(ref_posted.begin() + static_cast<std::ptrdiff_t>(i));
        free_entries.push_back(e);
        break;
      }
      case 7: {  // drop an unexpected message (e.g. its peer died)
        if (ref_unexpected.empty()) break;
        std::size_t i = static_cast<std::size_t>(pick(static_cast<int>(ref_unexpected.size())));
        MatchEntry* e = ref_unexpected[i];
        unexpected.remove(*e);
        ref_unexpected.erase(ref_unexpected.begin() + static_cast<std::ptrdiff_t>(i));
        free_entries.push_back(e);
        break;
      }
    }
    ASSERT_EQ(posted.size(), ref_posted.size());
    ASSERT_EQ(unexpected.size(), ref_unexpected.size());
  }
  // Drain both and check the order once more.
  for (MatchEntry* m : std::vector<MatchEntry*>(ref_unexpected))
    ASSERT_EQ(unexpected.take(m->ctx, kAny, kAny), m);
  EXPECT_TRUE(unexpected.empty());
  while (!ref_posted.empty()) {
    MatchEntry* p = ref_posted.front();
    const int32_t src = p->src == kAny ? 0 : p->src, tag = p->tag == kAny ? 0 : p->tag;
    auto it = std::find_if(ref_posted.begin(), ref_posted.end(),
                           [&](MatchEntry* r) { return matches(*r, p->ctx, src, tag); });
    ASSERT_EQ(posted.take(p->ctx, src, tag), *it);
    ref_posted.erase(it);
  }
  EXPECT_TRUE(posted.empty());
}

TEST(MatchRandom, SmallKeySpaceManyCollisions) {
  for (uint32_t seed = 1; seed <= 5; ++seed) randomized(seed, {2, 4, 6}, 20000);
}

TEST(MatchRandom, LargeKeySpaceManyBins) {
  // Many distinct keys: exercises table growth, bin purging and deep heaps.
  for (uint32_t seed = 11; seed <= 13; ++seed) randomized(seed, {3, 16, 400}, 20000);
}

// ---- scale (behaviour only; timing belongs in sluice-bench) ------------------------------

TEST(MatchScale, HundredThousandOperationsComplete) {
  constexpr int kN = 50000;
  std::vector<MatchEntry> recvs(kN), msgs(kN);
  PostedQueue posted;
  UnexpectedQueue unexpected;
  // Posted: mixed exact and any-source receives, matched by arrivals in reverse tag order.
  for (int i = 0; i < kN; ++i) {
    recvs[i] = entry(0, i % 2 ? kAny : i % 7, i);
    posted.push(recvs[i]);
  }
  for (int i = kN - 1; i >= 0; --i) ASSERT_EQ(posted.take(0, i % 7, i), &recvs[i]);
  // Unexpected: many messages from few sources, drained by any-tag then any-source queries.
  for (int i = 0; i < kN; ++i) {
    msgs[i] = entry(0, i % 5, kN - i);
    unexpected.push(msgs[i]);
  }
  for (int i = 0; i < kN / 2; ++i) ASSERT_EQ(unexpected.take(0, i % 5, kAny), &msgs[i]);
  for (int i = kN - 1; i >= kN / 2; --i) ASSERT_EQ(unexpected.take(0, kAny, kN - i), &msgs[i]);
  EXPECT_TRUE(posted.empty());
  EXPECT_TRUE(unexpected.empty());
}

TEST(MatchScale, EverNewTagsDoNotAccumulateState) {
  // One message in flight with a fresh tag each time: bins are recycled, not leaked
  // (under ASan a leak or use-after-free in the purge would show here).
  PostedQueue posted;
  UnexpectedQueue unexpected;
  MatchEntry r, m;
  for (int i = 0; i < 200000; ++i) {
    r = entry(static_cast<uint32_t>(i % 3), i % 4, i);
    posted.push(r);
    ASSERT_EQ(posted.take(r.ctx, r.src, r.tag), &r);
    m = entry(static_cast<uint32_t>(i % 3), i % 4, i);
    unexpected.push(m);
    ASSERT_EQ(unexpected.take(m.ctx, i % 2 ? kAny : m.src, i % 3 ? kAny : m.tag), &m);
  }
  EXPECT_TRUE(posted.empty());
  EXPECT_TRUE(unexpected.empty());
}

}  // namespace
}  // namespace sluice::detail
