// Requests: one per nonblocking operation, pooled (no allocation per message once warm).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/matching.hpp"
#include "proto/p2p.hpp"
#include "sluice/sluice.hpp"

namespace sluice::detail {

enum class RequestState : uint8_t {
  free,      // in the pool
  active,    // posted / in flight
  complete,  // finished; status valid
};

struct RequestImpl {
  proto::Transfer xfer;  // first member: the protocol's id maps back to the request
  MatchEntry match;      // posted receives only
  RequestState state = RequestState::free;
  bool detached = false;   // the user dropped the handle; release on completion
  bool posted = false;     // in the posted-receive queue
  bool abandoned = false;  // a failed collective's send finalize no longer waits for
  std::unique_ptr<std::byte[]> kept_copy;  // an abandoned pipelined send's own copy of the data
  Status status;
  RequestImpl* next_free = nullptr;
};

class RequestPool {
 public:
  [[gnu::always_inline]] RequestImpl* get() {
    if (!free_) grow();
    RequestImpl* r = free_;
    free_ = r->next_free;
    r->xfer = proto::Transfer{};
    r->state = RequestState::active;
    r->detached = false;
    r->posted = false;
    r->abandoned = false;
    r->status = Status{};
    ++in_use_;
    return r;
  }
  void put(RequestImpl* r) {
    r->kept_copy.reset();
    r->state = RequestState::free;
    r->next_free = free_;
    free_ = r;
    --in_use_;
  }
  std::size_t in_use() const { return in_use_; }
  // Every request the pool owns, free or not (rare paths only: peer failure).
  template <class F>
  void for_each(F&& f) {
    for (auto& chunk : chunks_)
      for (std::size_t i = 0; i < kChunk; ++i) f(&chunk[i]);
  }

 private:
  static constexpr std::size_t kChunk = 256;
  void grow() {
    chunks_.push_back(std::make_unique<RequestImpl[]>(kChunk));
    RequestImpl* c = chunks_.back().get();
    for (std::size_t i = 0; i < kChunk; ++i) {
      c[i].next_free = free_;
      free_ = &c[i];
    }
  }
  std::vector<std::unique_ptr<RequestImpl[]>> chunks_;
  RequestImpl* free_ = nullptr;
  std::size_t in_use_ = 0;
};

}  // namespace sluice::detail
