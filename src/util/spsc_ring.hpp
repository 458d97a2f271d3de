// Lock-free single-producer/single-consumer ring of fixed-size cells living in memory the
// caller provides (a shared segment between two processes, or any buffer in tests).
//
// Each cell starts with a sequence word (Vyukov's bounded queue, specialised for one
// producer and one consumer): cell i is free for the producer's position p when
// seq == p, and full for the consumer's position c when seq == c + 1. The consumer frees
// it for the next lap by storing c + ncells. Only the cell's own line moves between the
// cores per message; positions are private to each side, so no shared head/tail counter
// bounces. A small message (header inline) fits in the first cache line of its cell.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

namespace sluice::util {

class SpscRing {
 public:
  // Cell layout: [seq:8][len:4][tag:4][payload ...]
  static constexpr std::size_t kCellHeader = 16;

  static std::size_t bytes_needed(std::size_t ncells, std::size_t cell_size) {
    return ncells * cell_size;
  }
  // Initialise the memory (done once by the side that creates the segment).
  static void format(void* mem, std::size_t ncells, std::size_t cell_size) {
    auto* base = static_cast<std::byte*>(mem);
    for (std::size_t i = 0; i < ncells; ++i) {
      new (base + i * cell_size) std::atomic<uint64_t>(i);
    }
  }

  SpscRing() = default;
  // ncells must be a power of two; cell_size a multiple of 64.
  SpscRing(void* mem, std::size_t ncells, std::size_t cell_size)
      : base_(static_cast<std::byte*>(mem)), mask_(ncells - 1), cell_size_(cell_size) {}

  std::size_t payload_capacity() const { return cell_size_ - kCellHeader; }
  std::size_t ncells() const { return mask_ + 1; }

  // Producer: payload area of the next cell if it is free, else nullptr.
  std::byte* try_reserve() {
    std::byte* cell = cell_at(tail_);
    if (seq(cell).load(std::memory_order_acquire) != tail_) return nullptr;
    return cell + kCellHeader;
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
  bool ready() const {
    return seq(cell_at(head_)).load(std::memory_order_acquire) == head_ + 1;
  }
  void release() {
    std::byte* cell = cell_at(head_);
    seq(cell).store(head_ + mask_ + 1, std::memory_order_release);
    ++head_;
  }

 private:
  std::byte* cell_at(uint64_t pos) const { return base_ + (pos & mask_) * cell_size_; }
  static std::atomic<uint64_t>& seq(std::byte* cell) {
    return *std::launder(reinterpret_cast<std::atomic<uint64_t>*>(cell));
  }

  std::byte* base_ = nullptr;
  uint64_t mask_ = 0;
  std::size_t cell_size_ = 0;
  uint64_t tail_ = 0;  // producer position (private to the producer)
  uint64_t head_ = 0;  // consumer position (private to the consumer)
};

}  // namespace sluice::util
