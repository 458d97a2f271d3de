// The state behind strategies ondemand, superpipeline and pipeline (PointToPoint's
// reg_pipeline.cpp): private to proto.
//
// ondemand ([Open-MX] overlapped on-demand pinning). A send's buffer is split into chunks of
// growing size (kFirstPinChunk doubling up to kMaxPinChunk, boundaries on page addresses so
// chunks of one buffer never share a page: the cache keeps them as separate entries). After
// the rendezvous request is out, the send's PinJob goes to the PinningThread, which registers
// the chunks in order through the registration cache (a chunk pinned by an earlier message is
// a hit; invalidation keeps it honest) and publishes each one. A fragment whose chunk is
// published leaves zero-copy from that registration; one whose chunk is not is an overlap
// miss: it leaves by the driver's copy path at once rather than waiting ([Open-MX] drops
// the packet and lets retransmission recover; a copy is the cheaper recovery here).
//
// superpipeline / pipeline ([NewMadeleine] section 4). Each pinning domain gets N staging
// buffers, registered once. A send copies chunk i into a free buffer and sends it from there
// zero-copy; while that chunk is on the wire the next one is copied into the next buffer.
// The buffer is free again on the chunk's local completion (the driver let go of its pages):
// that is the flow control that folds the pipeline into N buffers. Chunk i has C_0 q^i bytes
// (superpipeline) or a fixed size (pipeline), at most one buffer; chunk 0 is copied as soon
// as the rendezvous request is out, during the round trip.
// The receiving side of a stream driver needs no staging: the kernel's receive copy puts the
// bytes in place, so [NewMadeleine]'s receive-side sub-block flags have nothing to do here.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "mem/registration.hpp"
#include "proto/p2p.hpp"

namespace sluice::proto {

inline constexpr std::size_t kFirstPinChunk = 64 * 1024;
inline constexpr std::size_t kMaxPinChunk = 4 * 1024 * 1024;

struct PinJob {
  mem::Domain* domain = nullptr;  // the route's cache (or its domain when there is none)
  std::byte* base = nullptr;
  std::size_t length = 0;
  std::vector<std::size_t> ends;  // chunk k covers [ends[k-1], ends[k]) (offsets from base)
  std::unique_ptr<mem::Registration[]> regs;  // chunk k's, written before `ready` passes k
  std::atomic<std::size_t> ready{0};          // chunks [0, ready) are done (pinned or refused)
  std::atomic<bool> cancelled{false};         // the send is over: stop pinning
  // Held by the pinning thread across each chunk's registration and by the send's end while
  // it sets `cancelled`: once a send has completed, nothing pins its pages any more (the
  // application may unmap or mremap them at once; a registration racing with that made
  // mremap fail with EFAULT, the range being split by the monitor's userfaultfd).
  std::mutex mu;
};

struct PinningThread {
  PinningThread();
  ~PinningThread();
  PinningThread(const PinningThread&) = delete;
  PinningThread& operator=(const PinningThread&) = delete;
  void submit(std::shared_ptr<PinJob> job);

  std::atomic<uint64_t> chunks_pinned{0};   // chunks registered (cache hit or fresh pin)
  std::atomic<uint64_t> chunks_failed{0};   // chunks the domain refused (sent by copy)
  std::atomic<uint64_t> chunks_skipped{0};  // chunks not pinned: their send was over first
  std::atomic<uint64_t> bytes_pinned{0};

 private:
  void run();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<PinJob>> queue_;
  bool stop_ = false;
  std::thread thread_;
};

struct RegPipe {
  bool staged = false;  // superpipeline / pipeline; else ondemand
  bool fixed = false;   // pipeline: fixed chunks (else C_0 q^i)
  // ondemand
  std::shared_ptr<PinJob> job;
  std::size_t chunk = 0;  // the chunk the next fragment starts in
  // staged
  std::size_t index = 0;                // the next chunk's number i
  struct StagingSlot* ahead = nullptr;  // copied at offset `ahead_offset`, not sent yet
  std::size_t ahead_offset = 0;
  std::size_t ahead_len = 0;
};

struct StagingSlot {
  std::byte* buf = nullptr;
  mem::Registration reg;
  Transfer* owner = nullptr;  // the send whose chunk is in flight from here (null: none)
  bool busy = false;
};

struct StagingPool {
  StagingPool(mem::Domain& domain, unsigned buffers, std::size_t capacity);
  ~StagingPool();
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;
  StagingSlot* take();  // a free, registered buffer, or null
  mem::Domain* domain;
  std::size_t capacity;  // bytes per buffer
  std::byte* memory = nullptr;
  std::size_t bytes = 0;
  std::vector<StagingSlot> slots;  // never resized after construction: addresses are tokens
  bool registered = false;         // every buffer registered (else the pool is not used)
};

}  // namespace sluice::proto
