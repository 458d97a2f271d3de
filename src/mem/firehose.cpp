// Firehose bookkeeping (see firehose.hpp): the target's bucket table with its victim FIFO,
// and the initiator's firehose table.
#include "mem/firehose.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>

namespace sluice::mem {

std::size_t page_size() {
  static const std::size_t page = [] {
    const long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<std::size_t>(p) : std::size_t{4096};
  }();
  return page;
}

Errc FirehoseParams::validate() const {
  if (bucket_bytes == 0 || bucket_bytes % page_size() != 0) return Errc::invalid_argument;
  if (nodes >= 2 && firehoses_per_node() == 0) return Errc::invalid_argument;
  return Errc::ok;
}

// ---- BucketTable ----------------------------------------------------------------------------

BucketTable::BucketTable(Domain& domain, const FirehoseParams& params, InvalidationMonitor* monitor)
    : domain_(domain), params_(params), monitor_(monitor) {
  per_node_.resize(static_cast<std::size_t>(std::max(params_.nodes, 1)), 0);
  if (monitor_ && !monitor_->subscribe(this)) monitor_ = nullptr;
}

BucketTable::~BucketTable() {
  if (monitor_) monitor_->unsubscribe(this);
  maps_.clear();
  buckets_.clear();  // unpins
}

std::size_t BucketTable::firehoses(int node) const {
  const auto i = static_cast<std::size_t>(node);
  return i < per_node_.size() ? per_node_[i] : 0;
}

uint32_t BucketTable::refs(uint64_t bucket) const {
  auto it = buckets_.find(bucket);
  return it == buckets_.end() ? 0 : it->second.refs;
}

std::vector<uint64_t> BucketTable::victim_order() const {
  std::vector<uint64_t> out;
  for (const Bucket* b = fifo_head_; b; b = b->next) out.push_back(b->addr);
  return out;
}

void BucketTable::fifo_push_head(Bucket* b) {
  b->prev = nullptr;
  b->next = fifo_head_;
  if (fifo_head_) fifo_head_->prev = b;
  fifo_head_ = b;
  if (!fifo_tail_) fifo_tail_ = b;
  ++victim_count_;
}

void BucketTable::fifo_unlink(Bucket* b) {
  if (b->prev)
    b->prev->next = b->next;
  else
    fifo_head_ = b->next;
  if (b->next)
    b->next->prev = b->prev;
  else
    fifo_tail_ = b->prev;
  b->prev = b->next = nullptr;
  --victim_count_;
}

void BucketTable::add_pinned(uint64_t n) {
  stats_.pinned_bytes += n;
  stats_.pinned_peak = std::max(stats_.pinned_peak, stats_.pinned_bytes);
}

void BucketTable::unpin(Bucket* b) {
  if (b->refs == 0) fifo_unlink(b);
  stats_.pinned_bytes -= b->hi - b->lo;
  ++stats_.unpins;
  buckets_.erase(b->addr);  // the Registration goes: unpinned
}

void BucketTable::unref(Bucket* b) {
  if (--b->refs != 0) return;
  // Lazy unpinning: kept pinned at the FIFO's head; the oldest victims go past MAXVICTIM.
  fifo_push_head(b);
  while (victim_count_ > params_.max_victims()) unpin(fifo_tail_);
}

Errc BucketTable::pin_range(uint64_t lo, uint64_t hi, Registration& out) {
  // Memory that is not mapped (freed since it was registered) must never be pinned nor
  // written: mincore fails with ENOMEM on any unmapped page of the range.
  std::vector<unsigned char> vec((hi - lo) / page_size() + 1);
  if (mincore(reinterpret_cast<void*>(lo), hi - lo, vec.data()) != 0) return Errc::remote_access;
  const Errc e = domain_.register_memory(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(lo), hi - lo), out);
  if (e == Errc::internal || e == Errc::invalid_argument) return Errc::remote_access;
  if (e != Errc::ok) return e;
  ++stats_.pins;
  if (monitor_) (void)monitor_->watch(lo, hi - lo);
  return Errc::ok;
}

Errc BucketTable::move(int node, std::span<const uint64_t> release, std::span<const Pin> pin) {
  process_invalidations();
  ++stats_.moves;
  const auto n = static_cast<std::size_t>(node);
  if (n >= per_node_.size()) return Errc::invalid_argument;
  for (const uint64_t r : release) {
    auto it = maps_.find(map_key(node, params_.bucket_of(r)));
    if (it == maps_.end()) continue;  // not (or no longer: invalidated) mapped by it
    Bucket* b = it->second;
    maps_.erase(it);
    --per_node_[n];
    unref(b);
  }
  const uint64_t B = params_.bucket_bytes;
  const uint64_t page = page_size();
  std::size_t fresh = 0;
  for (const Pin& p : pin) {
    if (p.bucket % B != 0 || p.lo < p.bucket || p.hi > p.bucket + B || p.lo >= p.hi ||
        p.lo % page != 0 || p.hi % page != 0) {
      ++stats_.refused;
      return Errc::invalid_argument;
    }
    fresh += maps_.count(map_key(node, p.bucket)) == 0;
  }
  if (per_node_[n] + fresh > params_.firehoses_per_node()) {
    ++stats_.refused;
    return Errc::no_memory;  // the node asks for more than its F firehoses
  }
  const uint64_t limit = params_.m_bytes + params_.maxvictim_bytes;
  std::size_t done = 0;
  Errc err = Errc::ok;
  std::vector<uint64_t> added;
  for (; done < pin.size(); ++done) {
    const Pin& p = pin[done];
    const uint64_t k = map_key(node, p.bucket);
    auto mit = maps_.find(k);
    Bucket* b = mit == maps_.end() ? nullptr : mit->second;
    if (!b) {
      auto bit = buckets_.find(p.bucket);
      if (bit != buckets_.end()) b = &bit->second;
    }
    if (b && (p.lo < b->lo || p.hi > b->hi)) {
      // Pinned over fewer pages than this move needs (another registration's clip): pin
      // the union in place of the old range.
      const uint64_t lo = std::min(p.lo, b->lo), hi = std::max(p.hi, b->hi);
      Registration r;
      if ((err = pin_range(lo, hi, r)) != Errc::ok) break;
      stats_.pinned_bytes -= b->hi - b->lo;
      add_pinned(hi - lo);
      b->reg = std::move(r);
      b->lo = lo;
      b->hi = hi;
    }
    if (mit != maps_.end()) continue;  // already this node's firehose: nothing to add
    if (b) {
      if (b->refs == 0) {
        fifo_unlink(b);
        ++stats_.victims_reused;
      } else {
        ++stats_.shared;
      }
    } else {
      // A new bucket: evict victims first so that pinned memory stays within M + MAXVICTIM.
      while (stats_.pinned_bytes + (p.hi - p.lo) > limit && fifo_tail_) unpin(fifo_tail_);
      if (stats_.pinned_bytes + (p.hi - p.lo) > limit) {
        err = Errc::no_memory;
        break;
      }
      Registration r;
      if ((err = pin_range(p.lo, p.hi, r)) != Errc::ok) break;
      Bucket& nb = buckets_[p.bucket];
      nb.addr = p.bucket;
      nb.lo = p.lo;
      nb.hi = p.hi;
      nb.reg = std::move(r);
      add_pinned(p.hi - p.lo);
      b = &nb;
    }
    ++b->refs;
    maps_.emplace(k, b);
    ++per_node_[n];
    added.push_back(p.bucket);
  }
  if (err == Errc::ok) return Errc::ok;
  ++stats_.refused;
  // All or nothing: undo the mappings this move added (by address: an unref may unpin).
  for (const uint64_t bucket : added) {
    auto it = maps_.find(map_key(node, bucket));
    if (it == maps_.end()) continue;
    Bucket* b = it->second;
    maps_.erase(it);
    --per_node_[n];
    unref(b);
  }
  return err;
}

bool BucketTable::mapped(int node, uint64_t addr, std::size_t len) const {
  if (len == 0) return true;
  const uint64_t B = params_.bucket_bytes;
  const uint64_t end = addr + len;
  for (uint64_t b = params_.bucket_of(addr); b < end; b += B) {
    auto it = maps_.find(map_key(node, b));
    if (it == maps_.end()) return false;
    const uint64_t lo = std::max(addr, b), hi = std::min(end, b + B);
    if (lo < it->second->lo || hi > it->second->hi) return false;
  }
  return true;
}

void BucketTable::drop_node(int node) {
  std::vector<Bucket*> mine;
  for (auto it = maps_.begin(); it != maps_.end();) {
    if (static_cast<int>(it->first >> 44) == node) {
      mine.push_back(it->second);
      it = maps_.erase(it);
    } else {
      ++it;
    }
  }
  per_node_[static_cast<std::size_t>(node)] = 0;
  for (Bucket* b : mine) unref(b);
}

void BucketTable::invalidate(uintptr_t start, uintptr_t end) {
  // Monitor thread: record only (no allocation, nothing that can unmap).
  std::lock_guard<std::mutex> lk(inv_mu_);
  if (inv_count_ < kPending)
    inv_[inv_count_++] = {start, end};
  else
    inv_overflow_ = true;
  inv_pending_.store(true, std::memory_order_release);
}

void BucketTable::process_invalidations() {
  if (monitor_) {
    // Events read from the kernel but not yet recorded: the unmapper already runs on.
    const uint64_t ph = monitor_->phase();
    if (ph & 1) monitor_->wait_phase_change(ph);
  }
  if (!inv_pending_.load(std::memory_order_acquire)) return;
  std::array<std::pair<uint64_t, uint64_t>, kPending> ranges;
  std::size_t count = 0;
  bool overflow = false;
  {
    std::lock_guard<std::mutex> lk(inv_mu_);
    count = inv_count_;
    std::copy_n(inv_.begin(), count, ranges.begin());
    overflow = inv_overflow_;
    inv_count_ = 0;
    inv_overflow_ = false;
    inv_pending_.store(false, std::memory_order_relaxed);
  }
  if (overflow) {
    drop_range(0, UINT64_MAX);
    return;
  }
  for (std::size_t i = 0; i < count; ++i) drop_range(ranges[i].first, ranges[i].second);
}

void BucketTable::drop_range(uint64_t start, uint64_t end) {
  if (start >= end || buckets_.empty()) return;
  std::vector<Bucket*> hit;
  const uint64_t B = params_.bucket_bytes;
  if ((end - start) / B > buckets_.size()) {
    for (auto& [addr, b] : buckets_)
      if (b.lo < end && start < b.hi) hit.push_back(&b);
  } else {
    for (uint64_t a = params_.bucket_of(start); a < end; a += B) {
      auto it = buckets_.find(a);
      if (it != buckets_.end() && it->second.lo < end && start < it->second.hi)
        hit.push_back(&it->second);
    }
  }
  for (Bucket* b : hit) {
    // Every firehose on it goes: their owners learn it at their next access (stale).
    for (std::size_t n = 0; n < per_node_.size(); ++n) {
      auto it = maps_.find(map_key(static_cast<int>(n), b->addr));
      if (it == maps_.end()) continue;
      maps_.erase(it);
      --per_node_[n];
    }
    if (b->refs != 0) {
      b->refs = 0;
      fifo_push_head(b);  // so that unpin() unlinks it like any victim
    }
    ++stats_.invalidations;
    unpin(b);
  }
}

// ---- FirehoseTable --------------------------------------------------------------------------

FirehoseTable::FirehoseTable(const FirehoseParams& params) : params_(params) {
  nodes_.resize(static_cast<std::size_t>(std::max(params_.nodes, 1)));
}

FirehoseTable::Node& FirehoseTable::node(int n) {
  return nodes_[static_cast<std::size_t>(n)];
}

std::size_t FirehoseTable::firehoses(int n) const {
  return nodes_[static_cast<std::size_t>(n)].count;
}

uint32_t FirehoseTable::refs(int n, uint64_t bucket) const {
  auto it = hoses_.find(key(n, bucket));
  return it == hoses_.end() ? 0 : it->second.refs;
}

bool FirehoseTable::mapped(int n, uint64_t bucket) const {
  auto it = hoses_.find(key(n, bucket));
  return it != hoses_.end() && it->second.state != State::stale;
}

void FirehoseTable::unlink(Hose* h) {
  Node& nd = node(h->node);
  if (h->prev)
    h->prev->next = h->next;
  else
    nd.head = h->next;
  if (h->next)
    h->next->prev = h->prev;
  else
    nd.tail = h->prev;
  h->prev = h->next = nullptr;
}

void FirehoseTable::push_tail(Hose* h) {
  Node& nd = node(h->node);
  h->next = nullptr;
  h->prev = nd.tail;
  if (nd.tail) nd.tail->next = h;
  nd.tail = h;
  if (!nd.head) nd.head = h;
}

void FirehoseTable::erase(Hose* h) {
  if (h->refs == 0) unlink(h);
  --node(h->node).count;
  hoses_.erase(key(h->node, h->bucket));
}

FirehoseTable::Acquire FirehoseTable::acquire(int n, uint64_t addr, std::size_t len,
                                              std::vector<uint64_t>& release,
                                              std::vector<uint64_t>& pin) {
  release.clear();
  pin.clear();
  const uint64_t B = params_.bucket_bytes;
  const uint64_t first = params_.bucket_of(addr);
  const uint64_t end = addr + std::max<std::size_t>(len, 1);
  Node& nd = node(n);
  // References on the firehoses the range already has (taking them off the FIFO, so the
  // recycling below never picks one of this range); the rest need new ones.
  scratch_.clear();
  for (uint64_t b = first; b < end; b += B) {
    auto it = hoses_.find(key(n, b));
    if (it == hoses_.end()) {
      scratch_.push_back(b);
      continue;
    }
    Hose& h = it->second;
    if (h.refs++ == 0) unlink(&h);
    if (h.state == State::stale) {
      h.state = State::pending;  // mapped again by this operation's move
      pin.push_back(b);
    }
  }
  std::size_t recyclable = 0;
  for (const Hose* h = nd.head; h && recyclable < scratch_.size(); h = h->next) ++recyclable;
  const std::size_t F = params_.firehoses_per_node();
  if (scratch_.size() > (F - std::min(F, nd.count)) + recyclable) {
    // Not enough firehoses free: give back what was taken.
    for (const uint64_t b : pin) hoses_.find(key(n, b))->second.state = State::stale;
    pin.clear();
    this->release(n, addr, len);
    // release() dropped references on the range's existing firehoses only; those it could
    // not find (scratch_) were never taken.
    ++stats_.no_room;
    return Acquire::no_room;
  }
  for (const uint64_t b : scratch_) {
    if (nd.count >= F) {
      Hose* victim = nd.head;  // the oldest unreferenced firehose
      release.push_back(victim->bucket);
      erase(victim);
      ++stats_.recycled;
    }
    Hose& h = hoses_[key(n, b)];
    h.bucket = b;
    h.node = n;
    h.refs = 1;
    h.state = State::pending;
    ++nd.count;
    pin.push_back(b);
  }
  if (pin.empty()) {
    ++stats_.hits;
    return Acquire::hit;
  }
  ++stats_.misses;
  ++stats_.moves;
  stats_.moved_buckets += pin.size();
  return Acquire::miss;
}

void FirehoseTable::release(int n, uint64_t addr, std::size_t len) {
  const uint64_t B = params_.bucket_bytes;
  const uint64_t end = addr + std::max<std::size_t>(len, 1);
  for (uint64_t b = params_.bucket_of(addr); b < end; b += B) {
    auto it = hoses_.find(key(n, b));
    if (it == hoses_.end() || it->second.refs == 0) continue;
    Hose& h = it->second;
    if (--h.refs != 0) continue;
    if (h.state == State::stale) {
      h.refs = 0;
      --node(n).count;
      hoses_.erase(it);
    } else {
      push_tail(&h);  // stays mapped, recycled last
    }
  }
}

void FirehoseTable::confirm(int n, std::span<const uint64_t> buckets, bool ok) {
  for (const uint64_t b : buckets) {
    auto it = hoses_.find(key(n, b));
    if (it == hoses_.end()) continue;
    Hose& h = it->second;
    if (ok) {
      if (h.state == State::pending) h.state = State::live;
    } else if (h.refs == 0) {
      erase(&h);
    } else {
      h.state = State::stale;
    }
  }
}

void FirehoseTable::forget(int n, uint64_t addr, std::size_t len) {
  const uint64_t B = params_.bucket_bytes;
  const uint64_t end = addr + std::max<std::size_t>(len, 1);
  for (uint64_t b = params_.bucket_of(addr); b < end; b += B) {
    auto it = hoses_.find(key(n, b));
    if (it == hoses_.end()) continue;
    if (it->second.refs == 0)
      erase(&it->second);
    else
      it->second.state = State::stale;
  }
}

void FirehoseTable::drop_node(int n) {
  std::erase_if(hoses_, [n](const auto& kv) { return kv.second.node == n; });
  nodes_[static_cast<std::size_t>(n)] = Node{};
}

// ---- PinTable -------------------------------------------------------------------------------

Errc PinTable::pin_pages(uint64_t lo, uint64_t hi, Registration& out) {
  std::vector<unsigned char> vec((hi - lo) / page_size() + 1);
  if (mincore(reinterpret_cast<void*>(lo), hi - lo, vec.data()) != 0) return Errc::remote_access;
  const Errc e = domain_.register_memory(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(lo), hi - lo), out);
  if (e == Errc::internal || e == Errc::invalid_argument) return Errc::remote_access;
  if (e == Errc::ok) ++stats_.pins;
  return e;
}

void PinTable::add_pinned(uint64_t n) {
  stats_.pinned_bytes += n;
  stats_.pinned_peak = std::max(stats_.pinned_peak, stats_.pinned_bytes);
}

uint32_t PinTable::refs(uint64_t bucket) const {
  auto it = buckets_.find(bucket);
  return it == buckets_.end() ? 0 : it->second.refs;
}

Errc PinTable::pin(std::span<const BucketTable::Pin> pins) {
  ++stats_.requests;
  const uint64_t page = page_size();
  for (const BucketTable::Pin& p : pins)
    if (p.bucket % bucket_bytes_ != 0 || p.lo < p.bucket || p.hi > p.bucket + bucket_bytes_ ||
        p.lo >= p.hi || p.lo % page != 0 || p.hi % page != 0) {
      ++stats_.refused;
      return Errc::invalid_argument;
    }
  std::size_t done = 0;
  Errc err = Errc::ok;
  for (; done < pins.size(); ++done) {
    const BucketTable::Pin& p = pins[done];
    auto it = buckets_.find(p.bucket);
    if (it != buckets_.end() && it->second.bytes >= p.hi - p.lo) {
      ++it->second.refs;
      continue;
    }
    // New, or pinned narrower before (another region's part of the bucket): pin again.
    Registration r;
    if ((err = pin_pages(p.lo, p.hi, r)) != Errc::ok) break;
    Pinned& b = buckets_[p.bucket];
    stats_.pinned_bytes -= b.bytes;
    add_pinned(p.hi - p.lo);
    b.bytes = p.hi - p.lo;
    b.reg = std::move(r);
    ++b.refs;
  }
  if (err == Errc::ok) return Errc::ok;
  ++stats_.refused;
  std::vector<uint64_t> undo;
  for (std::size_t i = 0; i < done; ++i) undo.push_back(pins[i].bucket);
  release(undo);
  return err;
}

void PinTable::release(std::span<const uint64_t> buckets) {
  for (const uint64_t b : buckets) {
    auto it = buckets_.find(b);
    if (it == buckets_.end() || it->second.refs == 0) continue;
    if (--it->second.refs != 0 || !unpin_) continue;
    stats_.pinned_bytes -= it->second.bytes;
    ++stats_.unpins;
    buckets_.erase(it);  // unpinned with its Registration
  }
}

Errc PinTable::pin_region(uint64_t id, uint64_t lo, uint64_t hi) {
  if (lo >= hi) return Errc::ok;
  Registration r;
  if (Errc e = pin_pages(lo, hi, r); e != Errc::ok) {
    ++stats_.refused;
    return e;
  }
  Pinned& p = regions_[id];
  p.bytes = hi - lo;
  p.reg = std::move(r);
  add_pinned(hi - lo);
  return Errc::ok;
}

void PinTable::unpin_region(uint64_t id) {
  auto it = regions_.find(id);
  if (it == regions_.end()) return;
  stats_.pinned_bytes -= it->second.bytes;
  ++stats_.unpins;
  regions_.erase(it);
}

}  // namespace sluice::mem
