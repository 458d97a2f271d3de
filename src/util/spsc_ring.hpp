// Lock-free single-producer/single-consumer ring of fixed-size cells living in memory the
// caller provides (a shared segment between two processes, or any buffer in tests).
//
//   memory = control line (released counter, written by the consumer) | cell 0 | cell 1 ...
//   cell   = [seq:8][len:4][user:4][payload ...]
//
// The producer marks the cell for position p full by storing seq = p + 1 after the
// payload (release). The consumer at position c waits for seq == c + 1, so a value left
// from an earlier lap never matches and cells are never reset: cell lines only travel
// producer -> consumer. The consumer publishes how far it got in `released`; the producer
// reads that line only when its cached copy says the ring is full (once per lap at most),
// so the common send path never waits for a cache line from the consumer. A small
// message with its header fits in the first cache line of its cell.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

namespace sluice::util {

class SpscRing {
 public:
  static constexpr std::size_t kCellHeader = 16;
  static constexpr std::size_t kControlBytes = 64;

  static std::size_t bytes_needed(std::size_t ncells, std::size_t cell_size) {
    return kControlBytes + ncells * cell_size;
  }
  // Initialise the memory (done once by the side that creates the segment).
  static void format(void* mem, std::size_t ncells, std::size_t cell_size) {
    auto* base = static_cast<std::byte*>(mem);
    new (base) std::atomic<uint64_t>(0);
    for (std::size_t i = 0; i < ncells; ++i)
      new (base + kControlBytes + i * cell_size) std::atomic<uint64_t>(0);
  }

  SpscRing() = default;
  // ncells must be a power of two; cell_size a multiple of 64.
  SpscRing(void* mem, std::size_t ncells, std::size_t cell_size)
      : released_(std::launder(static_cast<std::atomic<uint64_t>*>(mem))),
        cells_(static_cast<std::byte*>(mem) + kControlBytes),
        mask_(ncells - 1),
        cell_size_(cell_size) {}

  std::size_t payload_capacity() const { return cell_size_ - kCellHeader; }
  std::size_t ncells() const { return mask_ + 1; }

  // Producer: payload area of the next cell if it is free, else nullptr.
  std::byte* try_reserve() {
    if (tail_ - cached_released_ > mask_) {
      cached_released_ = released_->load(std::memory_order_acquire);
      if (tail_ - cached_released_ > mask_) return nullptr;
    }
    return cell_at(tail_) + kCellHeader;
  }
  // Producer: publish the reserved cell with `len` payload bytes and a 32-bit user word.
  void commit(uint32_t len, uint32_t user) {
    std::byte* cell = cell_at(tail_);
    std::memcpy(cell + 8, &len, 4);
    std::memcpy(cell + 12, &user, 4);
    seq(cell).store(tail_ + 1, std::memory_order_release);
    ++tail_;
  }

  // Consumer: the next full cell, or nullptr. Payload stays valid until release().
  const std::byte* peek(uint32_t& len, uint32_t& user) const {
    std::byte* cell = cell_at(head_);
    if (seq(cell).load(std::memory_order_acquire) != head_ + 1) return nullptr;
    std::memcpy(&len, cell + 8, 4);
    std::memcpy(&user, cell + 12, 4);
    return cell + kCellHeader;
  }
  // Cheap check whether the next cell is full (for polling many rings).
  bool ready() const { return seq(cell_at(head_)).load(std::memory_order_acquire) == head_ + 1; }
  // The same from a thread other than the consumer (a progress thread about to sleep while
  // the application polls): reads the published position, never the consumer's own.
  bool ready_shared() const {
    const uint64_t h = released_->load(std::memory_order_acquire);
    return seq(cell_at(h)).load(std::memory_order_acquire) == h + 1;
  }
  void release() {
    ++head_;
    released_->store(head_, std::memory_order_release);
  }

 private:
  std::byte* cell_at(uint64_t pos) const { return cells_ + (pos & mask_) * cell_size_; }
  static std::atomic<uint64_t>& seq(std::byte* cell) {
    return *std::launder(reinterpret_cast<std::atomic<uint64_t>*>(cell));
  }

  std::atomic<uint64_t>* released_ = nullptr;
  std::byte* cells_ = nullptr;
  uint64_t mask_ = 0;
  std::size_t cell_size_ = 0;
  uint64_t tail_ = 0;             // producer position (private to the producer)
  uint64_t cached_released_ = 0;  // producer's last view of `released`
  uint64_t head_ = 0;             // consumer position (private to the consumer)
};

}  // namespace sluice::util
