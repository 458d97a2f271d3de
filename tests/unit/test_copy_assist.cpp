// Two cores copy (src/mem/copy_assist): the caller's and the helper's chunks, data and
// bookkeeping. The slot tests call serve() directly (deterministic); with the helper thread
// which side copies which chunk is a race, so only invariants are checked (every byte right,
// the helper's bytes counted once).
#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "mem/copy_assist.hpp"

namespace {

using sluice::mem::CopyAssistSlot;
using sluice::mem::CopyHelper;

std::vector<std::byte> pattern(std::size_t n, unsigned seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 131 + seed) & 0xff);
  return v;
}

TEST(CopyAssist, HelperCopiesEveryChunkItClaims) {
  const std::size_t n = 300 * 1024 + 123;
  std::vector<std::byte> src = pattern(n + 7, 1), dst(n);
  CopyAssistSlot slot;
  ASSERT_TRUE(slot.open(dst.data(), src.data() + 7, n, 64 * 1024));
  EXPECT_TRUE(slot.posted());
  // The helper comes first and takes every chunk; the caller finds none left.
  EXPECT_EQ(slot.serve(), n);
  EXPECT_FALSE(slot.posted());
  EXPECT_EQ(slot.finish(), n);
  EXPECT_EQ(std::memcmp(dst.data(), src.data() + 7, n), 0);
  // Released: a late helper finds nothing; the next copy starts over.
  EXPECT_EQ(slot.serve(), 0u);
  std::memset(dst.data(), 0, n);
  ASSERT_TRUE(slot.open(dst.data(), src.data() + 7, n, 64 * 1024));
  EXPECT_EQ(slot.finish(), 0u);  // nobody helped
  EXPECT_EQ(std::memcmp(dst.data(), src.data() + 7, n), 0);
}

TEST(CopyAssist, OneCallerAtATime) {
  const std::size_t n = 1 << 20;
  std::vector<std::byte> src = pattern(n, 9), dst(n);
  CopyAssistSlot slot;
  ASSERT_TRUE(slot.open(dst.data(), src.data(), n, 64 * 1024));
  std::vector<std::byte> other(16);
  EXPECT_FALSE(slot.open(other.data(), src.data(), other.size(), 4096));
  EXPECT_FALSE(slot.open(dst.data(), src.data(), 0, 4096));
  EXPECT_EQ(slot.finish(), 0u);
  EXPECT_EQ(std::memcmp(dst.data(), src.data(), n), 0);
  EXPECT_FALSE(slot.posted());
}

TEST(CopyAssist, ChunksAreBoundedAndCoverTheRange) {
  // At most kMaxChunks chunks: a 64-byte chunk request on 1 MiB + 5 grows.
  const std::size_t n = (1 << 20) + 5;
  std::vector<std::byte> src = pattern(n, 3), dst(n);
  CopyAssistSlot slot;
  ASSERT_TRUE(slot.open(dst.data(), src.data(), n, 64));
  EXPECT_LE(slot.nchunks.load(), CopyAssistSlot::kMaxChunks);
  EXPECT_GE(slot.chunk.load() * slot.nchunks.load(), n);
  EXPECT_EQ(slot.chunk.load() % 64, 0u);
  EXPECT_EQ(slot.serve(), n);
  EXPECT_EQ(slot.finish(), n);
  EXPECT_EQ(std::memcmp(dst.data(), src.data(), n), 0);
}

TEST(CopyAssist, ConcurrentHelperKeepsDataAndCountsAgree) {
  const std::size_t n = 2 << 20;
  std::vector<std::byte> src = pattern(n, 7);
  CopyAssistSlot slot;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> served{0};
  std::thread helper([&] {
    while (!stop.load(std::memory_order_relaxed))
      if (slot.posted()) served += slot.serve();
  });
  uint64_t helped = 0;
  std::vector<std::byte> dst(n);
  for (int i = 0; i < 200; ++i) {
    const std::size_t len = (std::size_t{1} << 16) + static_cast<std::size_t>(i) * 9973;
    const std::size_t off = static_cast<std::size_t>(i) * 4099 % (n - len);
    std::memset(dst.data(), 0, len);
    const bool opened = slot.open(dst.data(), src.data() + off, len, 16 * 1024);
    EXPECT_TRUE(opened) << "copy " << i;
    if (!opened) break;
    helped += slot.finish();
    const bool same = std::memcmp(dst.data(), src.data() + off, len) == 0;
    EXPECT_TRUE(same) << "copy " << i;
    if (!same) break;
  }
  stop = true;
  helper.join();
  EXPECT_EQ(helped, served.load());
}

TEST(CopyAssist, ProcessHelperCopies) {
  std::unique_ptr<CopyHelper> h = CopyHelper::start();
  if (!h) GTEST_SKIP() << "one CPU: no helper";
  const std::size_t n = 3 << 20;
  std::vector<std::byte> src = pattern(n, 11), dst(n);
  uint64_t helped = 0;
  for (int i = 0; i < 50; ++i) {
    const std::size_t len = n - static_cast<std::size_t>(i) * 4097;
    std::memset(dst.data(), 0, len);
    helped += h->copy(dst.data(), src.data() + i, len, 64 * 1024);
    ASSERT_EQ(std::memcmp(dst.data(), src.data() + i, len), 0) << "copy " << i;
  }
  EXPECT_LE(helped, 50 * n);
}

}  // namespace
