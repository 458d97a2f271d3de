// Two cores copy one transfer: a large memcpy split into chunks that the calling thread and
// a helper thread of the same process claim from one counter, the helper running on another
// CPU (when the job binds ranks to cores: a CPU another rank is bound to, used while that
// rank waits). One copy of a buffer larger than a core's L2 cache runs at what one core
// moves from L3; two cores each moving half of it (their halves in their own L2) go faster.
//
// Why a thread of the origin process and not the peer rank itself: the destination of a get
// is the origin's private memory, which only the origin's threads can write with a plain
// copy; the peer could only reach it through CMA (process_vm_writev), measured at ~2.6 GB/s
// on the development VM against ~55 GB/s for memcpy: a chunk copied that way takes longer
// than the origin's whole copy.
//
// Nobody waits for help: the caller claims chunks until none is left, so a helper that is
// not running (its CPU busy, asleep) never delays the copy; the caller waits only for chunks
// the helper claimed, which it is copying at that moment. Claims carry the copy's
// generation, so a helper that read an old copy's fields cannot claim a chunk of the next.
// The caller takes chunks from the front, the helper from the back: in a repeated transfer
// each keeps copying the same part, which stays in its own cache.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace sluice::mem {

// One copy in progress, shared by the caller and the helper. The chunks not yet claimed are
// a range [front, back) in one word: the caller takes them one at a time from the front; the
// helper, when it comes, takes half of what is left from the back in one claim and keeps
// those in a second word, [lo, hi), copying from hi down, while the caller, once the front
// meets them, takes them from lo up. Each side mostly touches its own word, so the two
// cores do not pass a cache line back and forth for every chunk (a cross-core transfer costs
// ~50-100 ns here, a 64 KiB chunk ~1 us).
struct CopyAssistSlot {
  // Caller: posts a copy of `n` bytes (false: help is busy with another copy, or n == 0:
  // copy alone).
  bool open(std::byte* dst, const std::byte* src, uint64_t n, uint64_t chunk);
  // Caller: copies chunks until none is left, waits for the helper's claimed ones, releases
  // the slot. Returns the bytes the helper copied.
  uint64_t finish();
  // Helper: copies chunks of a posted copy while any is left; never waits. Returns bytes.
  uint64_t serve();
  // Cheap check for the helper's loop.
  bool posted() const {
    const uint64_t c = claim.load(std::memory_order_relaxed);
    return (c >> 32) != 0 && (c & 0xffff) < (c >> 16 & 0xffff);
  }

  static constexpr uint32_t kMaxChunks = 1024;
  static constexpr uint32_t kClosed = 0xffffffffu;

  // What the copy is (written by open() while the claim word is closed).
  alignas(64) std::atomic<uint32_t> owner{0};  // 0 free, 1 a caller holds it
  std::atomic<uint32_t> nchunks{0};
  std::atomic<uint64_t> dst{0};
  std::atomic<uint64_t> src{0};
  std::atomic<uint64_t> len{0};
  std::atomic<uint64_t> chunk{0};
  // generation << 32 | back << 16 | front: the unclaimed chunks (kClosed in the low half:
  // nothing to take while the fields above change)
  alignas(64) std::atomic<uint64_t> claim{0};
  // generation << 32 | hi << 16 | lo: the helper's claimed chunks not started yet
  alignas(64) std::atomic<uint64_t> held{0};
  // The helper's results (the caller reads them when it has nothing left to copy).
  alignas(64) std::atomic<uint32_t> helped{0};  // chunks the helper finished
  std::atomic<uint64_t> helped_bytes{0};
  // The caller's own.
  alignas(64) uint64_t gen = 0;
  uint32_t mine = 0;
};

// A helper thread and its slot (core/rma_copy.hpp keeps one per engine).
class CopyHelper {
 public:
  // Starts the thread on a CPU other than the caller's; nullptr when there is none.
  static std::unique_ptr<CopyHelper> start();
  // Copies `n` bytes, the helper taking a part when it runs. Returns the bytes it copied
  // (0 also when the helper was busy: the caller copied alone).
  uint64_t copy(std::byte* dst, const std::byte* src, std::size_t n, std::size_t chunk);
  ~CopyHelper();
  CopyHelper(const CopyHelper&) = delete;
  CopyHelper& operator=(const CopyHelper&) = delete;

 private:
  CopyHelper() = default;
  void run();

  CopyAssistSlot slot_;
  std::atomic<uint32_t> bell_{0};
  std::atomic<uint32_t> sleeping_{0};
  std::atomic<bool> stop_{false};
  pthread_t thread_{};
  bool running_ = false;
};

}  // namespace sluice::mem
