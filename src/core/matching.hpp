// Tag matching: posted receives and unexpected messages, keyed by (context, source, tag).
//
// Semantics (MPI non-overtaking): among the posted receives that match an arrival, the
// one posted first wins; among the unexpected messages that match a receive/probe, the one
// that arrived first wins. Wildcards: src == kAnySource, tag == kAnyTag (posted side only).
// No operation may scan every entry: exact keys go through hash bins, wildcard receives
// through their own ordered lists, and a global sequence number decides between them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice::detail {

inline constexpr int32_t kAnySource = -1;
inline constexpr int32_t kAnyTag = -1;

// Intrusive entry embedded in a request (posted side) or an unexpected message.
// The engine never allocates per entry; it may allocate bins for new keys.
struct MatchEntry {
  uint32_t ctx = 0;
  int32_t src = 0;
  int32_t tag = 0;
  void* owner = nullptr;  // the request or unexpected message that embeds this entry
  // engine-private (order and links)
  uint64_t seq = 0;
  MatchEntry* prev = nullptr;
  MatchEntry* next = nullptr;
  MatchEntry* aux_prev = nullptr;
  MatchEntry* aux_next = nullptr;
  void* bin = nullptr;
  void* aux_bin = nullptr;
};

// Posted receives: entries may hold wildcards; queries are concrete arrivals.
class PostedQueue {
 public:
  PostedQueue();
  ~PostedQueue();
  PostedQueue(const PostedQueue&) = delete;
  PostedQueue& operator=(const PostedQueue&) = delete;

  void push(MatchEntry& e);
  // Earliest-posted entry matching the concrete (ctx, src, tag), removed; nullptr if none.
  MatchEntry* take(uint32_t ctx, int32_t src, int32_t tag);
  // Remove a specific entry (cancel). Returns false if it is not queued.
  bool remove(MatchEntry& e);
  // Inline: the engine asks on every receive and arrival.
  std::size_t size() const { return *size_; }
  bool empty() const { return size() == 0; }

 private:
  struct Impl;
  Impl* impl_;
  const std::size_t* size_;  // impl_->size
};

// Unexpected messages: entries are concrete; queries may hold wildcards.
class UnexpectedQueue {
 public:
  UnexpectedQueue();
  ~UnexpectedQueue();
  UnexpectedQueue(const UnexpectedQueue&) = delete;
  UnexpectedQueue& operator=(const UnexpectedQueue&) = delete;

  void push(MatchEntry& e);
  // Earliest-arrived entry matching (ctx, src|kAnySource, tag|kAnyTag); not removed.
  MatchEntry* find(uint32_t ctx, int32_t src, int32_t tag) const;
  // Same, removed.
  MatchEntry* take(uint32_t ctx, int32_t src, int32_t tag);
  // The earliest entry of the concrete key (ctx, src, tag) for which pred(entry) holds; not
  // removed. Walks that key's entries in arrival order (a key's bin is linked by
  // prev/next): for a sender's cancel request, which names its message by more than the key.
  template <class Pred>
  MatchEntry* find_exact_if(uint32_t ctx, int32_t src, int32_t tag, Pred pred) const {
    for (MatchEntry* e = find(ctx, src, tag); e; e = e->next)
      if (pred(*e)) return e;
    return nullptr;
  }
  void remove(MatchEntry& e);
  // Inline: the engine asks on every receive and arrival.
  std::size_t size() const { return *size_; }
  bool empty() const { return size() == 0; }

 private:
  struct Impl;
  Impl* impl_;
  const std::size_t* size_;  // impl_->size
};

}  // namespace sluice::detail
