// The shared-memory ring under a real concurrent producer and consumer (two threads, the
// same memory the shm driver shares between processes).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "util/spsc_ring.hpp"

using sluice::util::SpscRing;

namespace {

struct RingMemory {
  RingMemory(std::size_t cells, std::size_t cell) : mem(SpscRing::bytes_needed(cells, cell) + 64) {
    base = reinterpret_cast<std::byte*>((reinterpret_cast<uintptr_t>(mem.data()) + 63) &
                                        ~uintptr_t{63});
    SpscRing::format(base, cells, cell);
  }
  std::vector<std::byte> mem;
  std::byte* base;
};

}  // namespace

TEST(SpscRing, FifoAndFull) {
  RingMemory m(4, 64);
  SpscRing prod(m.base, 4, 64), cons(m.base, 4, 64);
  uint32_t len, user;
  EXPECT_EQ(cons.peek(len, user), nullptr);
  for (uint32_t i = 0; i < 4; ++i) {
    std::byte* p = prod.try_reserve();
    ASSERT_NE(p, nullptr);
    std::memcpy(p, &i, 4);
    prod.commit(4, i + 100);
  }
  EXPECT_EQ(prod.try_reserve(), nullptr) << "a full ring must refuse a fifth cell";
  for (uint32_t i = 0; i < 4; ++i) {
    const std::byte* p = cons.peek(len, user);
    ASSERT_NE(p, nullptr);
    uint32_t v;
    std::memcpy(&v, p, 4);
    EXPECT_EQ(v, i);
    EXPECT_EQ(len, 4u);
    EXPECT_EQ(user, i + 100);
    cons.release();
    EXPECT_NE(prod.try_reserve(), nullptr) << "a released cell is free again";
  }
  EXPECT_EQ(cons.peek(len, user), nullptr);
}

// Two threads hammer the ring; every message arrives once, in order, with its contents
// intact (variable lengths so partially written cells would show).
TEST(SpscRing, ConcurrentProducerConsumer) {
  constexpr std::size_t kCells = 8, kCell = 256;
  constexpr uint64_t kMessages = 1'000'000;
  RingMemory m(kCells, kCell);
  SpscRing prod(m.base, kCells, kCell), cons(m.base, kCells, kCell);
  std::atomic<bool> failed{false};

  std::thread producer([&] {
    for (uint64_t i = 0; i < kMessages; ++i) {
      std::byte* p;
      while (!(p = prod.try_reserve())) std::this_thread::yield();
      const uint32_t len = 8 + static_cast<uint32_t>(i % (kCell - SpscRing::kCellHeader - 8));
      std::memcpy(p, &i, 8);
      for (uint32_t k = 8; k < len; ++k) p[k] = static_cast<std::byte>(i + k);
      prod.commit(len, static_cast<uint32_t>(i));
    }
  });
  uint64_t next = 0;
  while (next < kMessages && !failed) {
    uint32_t len, user;
    const std::byte* p = cons.peek(len, user);
    if (!p) {
      std::this_thread::yield();
      continue;
    }
    uint64_t v;
    std::memcpy(&v, p, 8);
    if (v != next || user != static_cast<uint32_t>(next)) failed = true;
    for (uint32_t k = 8; k < len && !failed; ++k)
      if (p[k] != static_cast<std::byte>(next + k)) failed = true;
    cons.release();
    ++next;
  }
  producer.join();
  EXPECT_FALSE(failed) << "message " << next << " out of order or corrupted";
  EXPECT_EQ(next, kMessages);
}
