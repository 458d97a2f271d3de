// Firehose ([GASNet-Firehose]): a distributed budget of pinned memory for one-sided access
// over a network that can only write into pinned (registered) pages.
//
// Every node may pin at most M bytes on behalf of its peers. It guarantees each of the
// other nodes F = floor(M / (B * (nodes - 1))) "firehoses": mappings of one remote bucket of
// B bytes (a multiple of the page size). A node owns its firehoses into every peer and
// moves them itself; while a firehose is mapped the peer keeps the bucket pinned, so an
// operation whose whole range is mapped (a hit) needs no handshake and no registration at
// the target. A miss sends one move request: the buckets it stops mapping and the ones it
// wants; the target unpins / pins and confirms.
//
// Two tables, one per role (paper's Table 1):
//   BucketTable    the target's: one entry per pinned local bucket with a reference count
//                  (the firehoses mapped on it), and the victim FIFO of buckets no firehose
//                  maps any more but kept pinned (lazy unpinning) up to MAXVICTIM bytes. A
//                  bucket whose last firehose goes joins the FIFO's head; past MAXVICTIM the
//                  tail is unpinned; a move to a bucket in the FIFO takes it back without
//                  pinning (a victim reused). Pinned bytes never exceed M + MAXVICTIM: the
//                  referenced buckets are at most the peers' firehoses (F each, enforced
//                  here), the rest are victims.
//   FirehoseTable  the initiator's: per (target node, bucket) a firehose with a reference
//                  count (operations in flight through it) and the FIFO of unreferenced
//                  firehoses still mapped, recycled oldest first once all F are in use.
//
// Differences from the paper: the target also remembers which node maps which bucket
// (a hash set), so it can refuse an access through a firehose the node does not hold and
// enforce F per node instead of trusting the peers; a bucket is pinned only over the pages
// of the registered memory the move names (a bucket may reach past an allocation into
// unmapped space); and a bucket whose memory is unmapped or replaced is invalidated
// through the InvalidationMonitor (userfaultfd), which GASNet's implementation left open:
// the bucket is unpinned and forgotten, and the next access through a firehose on it is
// refused as stale so that the initiator moves again (pinning the new pages, or failing if
// there are none).
//
// Threads: both tables belong to the engine (one thread at a time). The monitor thread only
// records invalidated ranges in a fixed array (no allocation, see invalidation_monitor.hpp);
// the engine applies them in process_invalidations().
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "mem/invalidation_monitor.hpp"
#include "mem/registration.hpp"
#include "util/errc.hpp"

namespace sluice::mem {

struct FirehoseParams {
  std::size_t bucket_bytes = std::size_t{64} << 10;    // B
  std::size_t m_bytes = std::size_t{32} << 20;         // M
  std::size_t maxvictim_bytes = std::size_t{8} << 20;  // MAXVICTIM
  int nodes = 2;

  // F: firehoses each node owns into every other node (0 for a single node).
  std::size_t firehoses_per_node() const {
    if (nodes < 2 || bucket_bytes == 0) return 0;
    return m_bytes / (bucket_bytes * static_cast<std::size_t>(nodes - 1));
  }
  std::size_t max_victims() const { return bucket_bytes ? maxvictim_bytes / bucket_bytes : 0; }
  // invalid_argument unless B is a positive multiple of the page size and F >= 1.
  Errc validate() const;
  uint64_t bucket_of(uint64_t addr) const { return addr - addr % bucket_bytes; }
};

std::size_t page_size();

struct BucketStats {
  uint64_t moves = 0;           // move requests served
  uint64_t pins = 0;            // buckets pinned (domain registrations)
  uint64_t victims_reused = 0;  // firehoses attached to a bucket taken back from the FIFO
  uint64_t shared = 0;          // firehoses attached to a bucket already referenced
  uint64_t unpins = 0;          // buckets unpinned (FIFO overflow, invalidation)
  uint64_t invalidations = 0;   // buckets dropped because their memory changed
  uint64_t refused = 0;         // moves refused (unmapped memory, over F, pin failed)
  uint64_t pinned_bytes = 0;
  uint64_t pinned_peak = 0;
};

class BucketTable final : private InvalidationSink {
 public:
  // A bucket to map, and the page-aligned part of it [lo, hi) to pin.
  struct Pin {
    uint64_t bucket = 0;
    uint64_t lo = 0, hi = 0;
  };

  // `domain` pins the buckets (it must outlive the table); `monitor` (may be null: no
  // invalidation) tells of freed memory.
  BucketTable(Domain& domain, const FirehoseParams& params, InvalidationMonitor* monitor);
  ~BucketTable();
  BucketTable(const BucketTable&) = delete;
  BucketTable& operator=(const BucketTable&) = delete;

  // A move request from `node`: its firehoses on `release` go (buckets it does not map are
  // ignored), then new ones are mapped on `pin`. The pins are all-or-nothing: on an error
  // none of them is mapped (the releases stand). remote_access: memory that is not mapped;
  // no_memory: more than F firehoses for `node`, or the domain refused to pin.
  Errc move(int node, std::span<const uint64_t> release, std::span<const Pin> pin);
  // Whether `node` maps firehoses over every byte of [addr, addr + len): what the target
  // checks before it writes or reads for a firehose access.
  bool mapped(int node, uint64_t addr, std::size_t len) const;
  // Drops every firehose of `node` (it failed or left).
  void drop_node(int node);
  // Applies the invalidations the monitor recorded (cheap when there are none).
  void process_invalidations();

  const FirehoseParams& params() const { return params_; }
  const BucketStats& stats() const { return stats_; }
  uint64_t pinned_bytes() const { return stats_.pinned_bytes; }
  std::size_t pinned_buckets() const { return buckets_.size(); }
  std::size_t victims() const { return victim_count_; }
  std::size_t firehoses(int node) const;
  // 0 when the bucket is not pinned.
  uint32_t refs(uint64_t bucket) const;
  bool pinned(uint64_t bucket) const { return buckets_.count(bucket) != 0; }
  // The victim FIFO, head (most recently released) first.
  std::vector<uint64_t> victim_order() const;

 private:
  struct Bucket {
    uint64_t addr = 0;
    uint64_t lo = 0, hi = 0;  // the pinned part
    uint32_t refs = 0;
    Registration reg;
    Bucket* prev = nullptr;  // victim FIFO links (only while refs == 0)
    Bucket* next = nullptr;
  };
  uint64_t map_key(int node, uint64_t bucket) const {
    return (static_cast<uint64_t>(node) << 44) | (bucket / params_.bucket_bytes);
  }
  void invalidate(uintptr_t start, uintptr_t end) override;  // monitor thread
  void fifo_push_head(Bucket* b);
  void fifo_unlink(Bucket* b);
  void unref(Bucket* b);
  void unpin(Bucket* b);  // erases it
  void drop_range(uint64_t start, uint64_t end);
  Errc pin_range(uint64_t lo, uint64_t hi, Registration& out);
  void add_pinned(uint64_t n);

  Domain& domain_;
  FirehoseParams params_;
  InvalidationMonitor* monitor_;
  std::unordered_map<uint64_t, Bucket> buckets_;  // by bucket address
  std::unordered_map<uint64_t, Bucket*> maps_;    // map_key(node, bucket): a firehose
  std::vector<std::size_t> per_node_;
  Bucket* fifo_head_ = nullptr;
  Bucket* fifo_tail_ = nullptr;
  std::size_t victim_count_ = 0;
  BucketStats stats_;

  // Filled by the monitor thread, drained by the engine. Held only to copy ranges in or
  // out (never across anything that allocates or unmaps).
  static constexpr std::size_t kPending = 64;
  std::mutex inv_mu_;
  std::array<std::pair<uint64_t, uint64_t>, kPending> inv_{};
  std::size_t inv_count_ = 0;
  bool inv_overflow_ = false;
  std::atomic<bool> inv_pending_{false};
};

// The strategies [GASNet-Firehose] section 4.2 compares Firehose with, and pin-everything
// (section 3.3), target side: buckets pinned on request, each with a reference count (ops in
// flight may share a bucket).
//   rendezvous with unpin     each op asks for its buckets first (a round trip) and, once it
//                             completed, for their release: unpinned at the last reference
//   rendezvous without unpin  the same without the release: nothing is ever unpinned, so
//                             pinned memory grows with the working set, unbounded (the
//                             paper's baseline that "cheats" past M + MAXVICTIM)
//   pin everything            a registered region is pinned whole when registered and until
//                             deregistered; no op asks for anything
// No invalidation monitor here: these are measurement baselines.
struct PinStats {
  uint64_t requests = 0;  // pin requests served (rendezvous)
  uint64_t pins = 0;      // registrations made (buckets, or whole regions)
  uint64_t unpins = 0;
  uint64_t refused = 0;
  uint64_t pinned_bytes = 0;
  uint64_t pinned_peak = 0;
};

class PinTable {
 public:
  // `unpin`: release() unpins a bucket at its last reference (rendezvous with unpin).
  PinTable(Domain& domain, std::size_t bucket_bytes, bool unpin)
      : domain_(domain), bucket_bytes_(bucket_bytes), unpin_(unpin) {}
  PinTable(const PinTable&) = delete;
  PinTable& operator=(const PinTable&) = delete;

  // Pins (or references) every bucket of `pins`. All or nothing.
  Errc pin(std::span<const BucketTable::Pin> pins);
  // Drops one reference per bucket (ignored when never pinned or when keeping everything).
  void release(std::span<const uint64_t> buckets);
  // Pin everything: the page range of a registered region, until unpin_region(id).
  Errc pin_region(uint64_t id, uint64_t lo, uint64_t hi);
  void unpin_region(uint64_t id);

  bool pinned(uint64_t bucket) const { return buckets_.count(bucket) != 0; }
  uint32_t refs(uint64_t bucket) const;
  const PinStats& stats() const { return stats_; }

 private:
  struct Pinned {
    uint32_t refs = 0;
    uint64_t bytes = 0;
    Registration reg;
  };
  Errc pin_pages(uint64_t lo, uint64_t hi, Registration& out);
  void add_pinned(uint64_t n);

  Domain& domain_;
  std::size_t bucket_bytes_;
  bool unpin_;
  std::unordered_map<uint64_t, Pinned> buckets_;  // by bucket address
  std::unordered_map<uint64_t, Pinned> regions_;  // by region id
  PinStats stats_;
};

struct FirehoseStats {
  uint64_t hits = 0;    // operations whose range was mapped
  uint64_t misses = 0;  // operations that needed a move
  uint64_t moves = 0;   // move requests sent
  uint64_t moved_buckets = 0;
  uint64_t recycled = 0;  // firehoses unmapped to make room (in a move's release list)
  uint64_t no_room = 0;   // operations that found too few free firehoses
};

class FirehoseTable {
 public:
  enum class Acquire {
    hit,      // every bucket mapped (or being mapped by an earlier move)
    miss,     // `pin` lists the buckets to map; `release` the firehoses recycled for them
    no_room,  // more buckets than free firehoses: nothing taken
  };

  explicit FirehoseTable(const FirehoseParams& params);

  // For an operation on [addr, addr + len) at `node`: one reference on a firehose per
  // bucket of the range. A firehose is pending from the move that maps it until confirm();
  // operations behind it on the same ordered route may already use it.
  Acquire acquire(int node, uint64_t addr, std::size_t len, std::vector<uint64_t>& release,
                  std::vector<uint64_t>& pin);
  // The operation is over: drops its references (unreferenced firehoses stay mapped).
  void release(int node, uint64_t addr, std::size_t len);
  // The target answered a move: `ok` maps the buckets, otherwise they are forgotten.
  void confirm(int node, std::span<const uint64_t> buckets, bool ok);
  // The target no longer maps these buckets (their memory changed): forgotten, so the next
  // acquire moves again. Call after release() of the operation that learned it.
  void forget(int node, uint64_t addr, std::size_t len);
  void drop_node(int node);

  const FirehoseParams& params() const { return params_; }
  const FirehoseStats& stats() const { return stats_; }
  std::size_t firehoses(int node) const;
  uint32_t refs(int node, uint64_t bucket) const;
  bool mapped(int node, uint64_t bucket) const;

 private:
  enum class State : uint8_t { pending, live, stale };
  struct Hose {
    uint64_t bucket = 0;
    int node = 0;
    uint32_t refs = 0;
    State state = State::pending;
    Hose* prev = nullptr;  // the node's FIFO of unreferenced firehoses
    Hose* next = nullptr;
  };
  struct Node {
    std::size_t count = 0;
    Hose* head = nullptr;  // oldest unreferenced: recycled first
    Hose* tail = nullptr;
  };
  uint64_t key(int node, uint64_t bucket) const {
    return (static_cast<uint64_t>(node) << 44) | (bucket / params_.bucket_bytes);
  }
  Node& node(int n);
  void unlink(Hose* h);
  void push_tail(Hose* h);
  void erase(Hose* h);

  FirehoseParams params_;
  std::unordered_map<uint64_t, Hose> hoses_;
  std::vector<Node> nodes_;
  FirehoseStats stats_;
  std::vector<uint64_t> scratch_;
};

}  // namespace sluice::mem
