// Tag matching engine (see matching.hpp for the semantics).
//
// Design and complexity (n = queued entries, B = non-empty exact keys in one wildcard group):
//  * Every entry is keyed by (ctx, src, tag); a wildcard field is stored literally as -1, so
//    one open-addressing table of "bins" serves exact and wildcard keys alike. A bin is a
//    FIFO (prev/next links). Bins are pooled, kept while empty (a key that recurs costs no
//    allocation) and purged only when the table needs to grow: amortised O(1), no
//    allocation per entry. Each table also caches the last bin it returned. Hash costs are
//    expected O(1). Each queue orders its entries by its own push counter (seq).
//  * Not thread-safe, not even find() (it updates the cache): the caller serialises.
//  * PostedQueue: push O(1). take(ctx,src,tag) looks at the heads of at most four bins,
//    (src,tag), (src,*), (*,tag), (*,*), skipping wildcard kinds the queue does not hold, and
//    removes the smallest seq: O(1). remove O(1).
//  * UnexpectedQueue: entries are concrete. Besides its exact bin, an entry is linked
//    (aux_prev/aux_next) into its context's arrival list, which answers (*,*) in O(1).
//    Per (ctx,src) and per (ctx,tag) "groups" keep a binary min-heap of their non-empty
//    bins ordered by the bin head's seq, answering (src,*) and (*,tag) in O(1).
//    push: O(1) (a bin that becomes non-empty holds the largest seq, so it enters the heaps
//    at the end without sifting). find: O(1). take/remove: O(1), plus O(log B) when the
//    removed entry was the head of its bin (the bin's key in two heaps changes).
#include "core/matching.hpp"

#include <cassert>
#include <memory>
#include <utility>
#include <vector>

namespace sluice::detail {
namespace {

struct Key {
  uint32_t ctx;
  int32_t src;
  int32_t tag;
  bool operator==(const Key&) const = default;
};

inline uint64_t hash_key(Key k) {
  uint64_t h = ((uint64_t{k.ctx} << 32) | uint32_t(k.src)) * 0x9E3779B97F4A7C15ull;
  h ^= uint64_t{uint32_t(k.tag)} * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 32);
}

// Intrusive FIFO over one pair of MatchEntry links.
template <MatchEntry* MatchEntry::*Prev, MatchEntry* MatchEntry::*Next>
struct List {
  MatchEntry* head = nullptr;
  MatchEntry* tail = nullptr;

  void push_back(MatchEntry* e) {
    e->*Prev = tail;
    e->*Next = nullptr;
    if (tail)
      tail->*Next = e;
    else
      head = e;
    tail = e;
  }
  void erase(MatchEntry* e) {
    MatchEntry* p = e->*Prev;
    MatchEntry* n = e->*Next;
    if (p)
      p->*Next = n;
    else
      head = n;
    if (n)
      n->*Prev = p;
    else
      tail = p;
    e->*Prev = nullptr;
    e->*Next = nullptr;
  }
};
using BinList = List<&MatchEntry::prev, &MatchEntry::next>;
using AuxList = List<&MatchEntry::aux_prev, &MatchEntry::aux_next>;

// Free-list pool: objects are allocated in chunks and recycled, never freed one by one.
template <class T>
class Pool {
 public:
  T* get() {
    if (!free_) grow();
    T* t = free_;
    free_ = t->pool_next;
    t->pool_next = nullptr;
    return t;
  }
  void put(T* t) {
    t->pool_next = free_;
    free_ = t;
  }

 private:
  void grow() {
    auto chunk = std::make_unique<T[]>(chunk_size_);
    for (std::size_t i = chunk_size_; i-- > 0;) put(&chunk[i]);
    chunks_.push_back(std::move(chunk));
    if (chunk_size_ < 4096) chunk_size_ *= 2;
  }
  std::vector<std::unique_ptr<T[]>> chunks_;
  T* free_ = nullptr;
  std::size_t chunk_size_ = 16;
};

// Open-addressing (linear probing) map Key -> T*, with T from an owned pool.
// T provides: key, pool_next, reset(Key), idle() (may be dropped), release() (before drop).
// Nothing is erased between rebuilds, so there are no tombstones; a rebuild (only when an
// insert would pass half load) drops idle objects and resizes to load <= 1/4.
template <class T>
class Table {
 public:
  Table() : slots_(kMinCapacity) {}

  // The cached bin inline, the probing out of line: the hit path then needs no registers
  // saved (a message stream repeats its key).
  T* find(Key k) const {
    if (last_ && last_->key == k) [[likely]]
      return last_;
    return find_probe(k);
  }

  // Returns the object for `k` and whether it was just created (reset, otherwise blank).
  // An idle object met on the way takes the new key in place: traffic that uses a fresh
  // key each time (a collective's tag) then recycles slots instead of filling the table
  // toward a rebuild. The moved key was idle, so nothing is lost; k's probe path passes
  // through the slot, so k is found there.
  std::pair<T*, bool> find_or_create(Key k) {
    if (last_ && last_->key == k) [[likely]]
      return {last_, false};
    return find_or_create_probe(k);
  }

 private:
  [[gnu::noinline]] T* find_probe(Key k) const {
    for (std::size_t i = hash_key(k) & mask();; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (!s.value) return nullptr;
      if (s.key == k) return last_ = s.value;
    }
  }
  [[gnu::noinline]] std::pair<T*, bool> find_or_create_probe(Key k) {
    std::size_t idle = kNone;
    std::size_t i = hash_key(k) & mask();
    for (; slots_[i].value; i = (i + 1) & mask()) {
      if (slots_[i].key == k) return {last_ = slots_[i].value, false};
      if (idle == kNone && slots_[i].value->idle()) idle = i;
    }
    if (idle != kNone) {
      T* t = slots_[idle].value;
      t->release();
      t->reset(k);
      slots_[idle].key = k;
      return {last_ = t, true};
    }
    return {create(k, i), true};
  }

  static constexpr std::size_t kMinCapacity = 64;
  static constexpr std::size_t kNone = ~std::size_t{0};
  struct Slot {
    Key key{};
    T* value = nullptr;
  };
  std::size_t mask() const { return slots_.size() - 1; }
  std::size_t probe(Key k) const {
    std::size_t i = hash_key(k) & mask();
    while (slots_[i].value && !(slots_[i].key == k)) i = (i + 1) & mask();
    return i;
  }
  // Cold paths stay out of line so that the hit path needs no register spills.
  [[gnu::noinline]] T* create(Key k, std::size_t i) {
    if ((used_ + 1) * 2 > slots_.size()) {
      rebuild();
      i = probe(k);
    }
    T* t = pool_.get();
    t->reset(k);
    slots_[i] = Slot{k, t};
    ++used_;
    return last_ = t;
  }
  [[gnu::noinline]] void rebuild() {
    std::vector<T*>& live = live_scratch_;
    live.clear();
    for (Slot& s : slots_) {
      if (!s.value) continue;
      if (s.value->idle()) {
        s.value->release();
        pool_.put(s.value);
      } else {
        live.push_back(s.value);
      }
    }
    std::size_t capacity = kMinCapacity;
    while (capacity < (live.size() + 1) * 4) capacity *= 2;
    slots_.assign(capacity, Slot{});
    used_ = live.size();
    for (T* t : live) slots_[probe(t->key)] = Slot{t->key, t};
    last_ = nullptr;
  }

  std::vector<Slot> slots_;
  std::size_t used_ = 0;
  mutable T* last_ = nullptr;
  std::vector<T*> live_scratch_;  // reused by rebuild(): no allocation per rebuild
  Pool<T> pool_;
};

}  // namespace

// ---------------------------------------------------------------------------------------
// PostedQueue

namespace {
struct PostedBin {
  Key key{};
  BinList list;
  PostedBin* pool_next = nullptr;
  void reset(Key k) {
    key = k;
    list = {};
  }
  bool idle() const { return list.head == nullptr; }
  void release() {}
};
}  // namespace

struct PostedQueue::Impl {
  Table<PostedBin> bins;
  uint64_t seq = 0;
  std::size_t size = 0;
  // How many queued receives use each wildcard kind: lets take() skip absent kinds.
  std::size_t any_src = 0;  // (*, tag)
  std::size_t any_tag = 0;  // (src, *)
  std::size_t any_both = 0;

  void count(const MatchEntry& e, std::ptrdiff_t delta) {
    if (e.src != kAnySource && e.tag != kAnyTag) return;  // the common, exact case
    bool ws = e.src == kAnySource, wt = e.tag == kAnyTag;
    if (ws && wt)
      any_both += delta;
    else if (ws)
      any_src += delta;
    else if (wt)
      any_tag += delta;
  }
  void consider(Key k, MatchEntry*& best) const {
    PostedBin* b = bins.find(k);
    if (b && b->list.head && (!best || b->list.head->seq < best->seq)) best = b->list.head;
  }
  // The earliest of `best` and the heads of the wildcard bins that the arrival matches.
  [[gnu::noinline]] MatchEntry* earliest_wildcard(uint32_t ctx, int32_t src, int32_t tag,
                                                  MatchEntry* best) const {
    if (any_tag) consider(Key{ctx, src, kAnyTag}, best);
    if (any_src) consider(Key{ctx, kAnySource, tag}, best);
    if (any_both) consider(Key{ctx, kAnySource, kAnyTag}, best);
    return best;
  }
  [[gnu::noinline]] MatchEntry* take_with_wildcards(uint32_t ctx, int32_t src, int32_t tag) {
    PostedBin* exact = bins.find(Key{ctx, src, tag});
    MatchEntry* best = earliest_wildcard(ctx, src, tag, exact ? exact->list.head : nullptr);
    if (best) erase(*best);
    return best;
  }
  void erase(MatchEntry& e) {
    static_cast<PostedBin*>(e.bin)->list.erase(&e);
    e.bin = nullptr;
    count(e, -1);
    --size;
  }
};

PostedQueue::PostedQueue() : impl_(new Impl), size_(&impl_->size) {}
PostedQueue::~PostedQueue() {
  delete impl_;
}

void PostedQueue::push(MatchEntry& e) {
  assert(e.bin == nullptr && "entry already queued");
  Impl& q = *impl_;
  e.seq = ++q.seq;
  PostedBin* b = q.bins.find_or_create(Key{e.ctx, e.src, e.tag}).first;
  b->list.push_back(&e);
  e.bin = b;
  q.count(e, +1);
  ++q.size;
}

MatchEntry* PostedQueue::take(uint32_t ctx, int32_t src, int32_t tag) {
  Impl& q = *impl_;
  if (q.size == 0) return nullptr;
  // With wildcard receives queued, out of line: the exact-only case then saves no registers.
  if (q.any_src | q.any_tag | q.any_both) [[unlikely]]
    return q.take_with_wildcards(ctx, src, tag);
  PostedBin* exact = q.bins.find(Key{ctx, src, tag});
  MatchEntry* best = exact ? exact->list.head : nullptr;
  if (best) q.erase(*best);
  return best;
}

bool PostedQueue::remove(MatchEntry& e) {
  if (e.bin == nullptr) return false;
  impl_->erase(e);
  return true;
}

// ---------------------------------------------------------------------------------------
// UnexpectedQueue

namespace {
struct UnexpectedBin;

// Heap element: the bin's head seq is copied in so that sifting touches only the array.
struct HeapItem {
  uint64_t seq;
  UnexpectedBin* bin;
};

// A wildcard index: (ctx, src, *) or (ctx, *, tag) keep a heap of their non-empty bins;
// (ctx, *, *) keeps the context's arrival list. `refs` counts bins pointing here.
struct Group {
  Key key{};
  std::size_t refs = 0;
  std::vector<HeapItem> heap;
  AuxList arrivals;
  Group* pool_next = nullptr;
  void reset(Key k) {
    key = k;
    refs = 0;
    heap.clear();
    arrivals = {};
  }
  bool idle() const { return refs == 0; }
  void release() {}
};

struct UnexpectedBin {
  Key key{};
  BinList list;
  Group* by_src = nullptr;
  Group* by_tag = nullptr;
  Group* by_ctx = nullptr;
  uint32_t pos_src = 0;  // index in by_src->heap while non-empty
  uint32_t pos_tag = 0;  // index in by_tag->heap while non-empty
  UnexpectedBin* pool_next = nullptr;
  void reset(Key k) {
    key = k;
    list = {};
    by_src = by_tag = by_ctx = nullptr;
  }
  bool idle() const { return list.head == nullptr; }
  void release() {
    --by_src->refs;
    --by_tag->refs;
    --by_ctx->refs;
  }
};

// Min-heap of bins by head seq; Pos names the bin's index field for this heap.
template <uint32_t UnexpectedBin::*Pos>
struct BinHeap {
  using Heap = std::vector<HeapItem>;
  static void place(Heap& h, std::size_t i, HeapItem item) {
    h[i] = item;
    item.bin->*Pos = static_cast<uint32_t>(i);
  }
  static void sift_up(Heap& h, std::size_t i) {
    const HeapItem item = h[i];
    while (i > 0) {
      std::size_t parent = (i - 1) / 2;
      if (h[parent].seq <= item.seq) break;
      place(h, i, h[parent]);
      i = parent;
    }
    place(h, i, item);
  }
  static void sift_down(Heap& h, std::size_t i) {
    const HeapItem item = h[i];
    const std::size_t n = h.size();
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && h[child + 1].seq < h[child].seq) ++child;
      if (item.seq <= h[child].seq) break;
      place(h, i, h[child]);
      i = child;
    }
    place(h, i, item);
  }
  static void insert(Heap& h, UnexpectedBin* b) {
    h.push_back(HeapItem{b->list.head->seq, b});
    sift_up(h, h.size() - 1);  // O(1) in practice: a newly non-empty bin has the max key
  }
  // The bin's head changed to a later entry: its key grew.
  static void head_advanced(Heap& h, UnexpectedBin* b) {
    const std::size_t i = b->*Pos;
    h[i].seq = b->list.head->seq;
    sift_down(h, i);
  }
  static void erase(Heap& h, UnexpectedBin* b) {
    const std::size_t i = b->*Pos;
    const HeapItem last = h.back();
    h.pop_back();
    if (last.bin == b) return;
    place(h, i, last);
    sift_down(h, i);
    sift_up(h, last.bin->*Pos);
  }
};
using SrcHeap = BinHeap<&UnexpectedBin::pos_src>;
using TagHeap = BinHeap<&UnexpectedBin::pos_tag>;
}  // namespace

struct UnexpectedQueue::Impl {
  Table<UnexpectedBin> bins;
  Table<Group> groups;
  uint64_t seq = 0;
  std::size_t size = 0;

  Group* group(Key k) {
    Group* g = groups.find_or_create(k).first;
    ++g->refs;  // immediately: a later group insert may purge unreferenced groups
    return g;
  }

  MatchEntry* find(uint32_t ctx, int32_t src, int32_t tag) const {
    if (size == 0) return nullptr;
    if (src != kAnySource && tag != kAnyTag) {
      UnexpectedBin* b = bins.find(Key{ctx, src, tag});
      return b ? b->list.head : nullptr;
    }
    Group* g = groups.find(Key{ctx, src, tag});
    if (!g) return nullptr;
    if (src == kAnySource && tag == kAnyTag) return g->arrivals.head;
    return g->heap.empty() ? nullptr : g->heap.front().bin->list.head;
  }

  void erase(MatchEntry& e) {
    auto* b = static_cast<UnexpectedBin*>(e.bin);
    const bool was_head = b->list.head == &e;
    b->list.erase(&e);
    b->by_ctx->arrivals.erase(&e);
    e.bin = nullptr;
    e.aux_bin = nullptr;
    --size;
    if (!was_head) return;  // the bin's heap key (its head's seq) is unchanged
    if (b->list.head == nullptr) {
      SrcHeap::erase(b->by_src->heap, b);
      TagHeap::erase(b->by_tag->heap, b);
    } else {
      SrcHeap::head_advanced(b->by_src->heap, b);
      TagHeap::head_advanced(b->by_tag->heap, b);
    }
  }
};

UnexpectedQueue::UnexpectedQueue() : impl_(new Impl), size_(&impl_->size) {}
UnexpectedQueue::~UnexpectedQueue() {
  delete impl_;
}

void UnexpectedQueue::push(MatchEntry& e) {
  assert(e.bin == nullptr && "entry already queued");
  assert(e.src != kAnySource && e.tag != kAnyTag && "unexpected messages are concrete");
  Impl& q = *impl_;
  e.seq = ++q.seq;
  auto [b, created] = q.bins.find_or_create(Key{e.ctx, e.src, e.tag});
  if (created) {
    b->by_src = q.group(Key{e.ctx, e.src, kAnyTag});
    b->by_tag = q.group(Key{e.ctx, kAnySource, e.tag});
    b->by_ctx = q.group(Key{e.ctx, kAnySource, kAnyTag});
  }
  const bool was_empty = b->list.head == nullptr;
  b->list.push_back(&e);
  b->by_ctx->arrivals.push_back(&e);
  e.bin = b;
  e.aux_bin = b->by_ctx;
  if (was_empty) {
    SrcHeap::insert(b->by_src->heap, b);
    TagHeap::insert(b->by_tag->heap, b);
  }
  ++q.size;
}

MatchEntry* UnexpectedQueue::find(uint32_t ctx, int32_t src, int32_t tag) const {
  return impl_->find(ctx, src, tag);
}

MatchEntry* UnexpectedQueue::take(uint32_t ctx, int32_t src, int32_t tag) {
  MatchEntry* e = impl_->find(ctx, src, tag);
  if (e) impl_->erase(*e);
  return e;
}

void UnexpectedQueue::remove(MatchEntry& e) {
  if (e.bin) impl_->erase(e);
}

}  // namespace sluice::detail
