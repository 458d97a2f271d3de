#include "util/crc32c.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

namespace {

using sluice::util::crc32c;
using sluice::util::crc32c_extend;
using sluice::util::crc32c_extend_hardware;
using sluice::util::crc32c_extend_software;
using sluice::util::crc32c_extend_sse42;

std::uint32_t crc_of(std::string_view s) {
  return crc32c(s.data(), s.size());
}

std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Every path (software table, hardware, sse4.2 alone, the dispatcher) gives the same CRC for
// each length, at a random alignment (offset < 64) and a random starting register.
void expect_paths_agree(const std::vector<unsigned char>& data,
                        const std::vector<std::size_t>& lens, std::uint64_t& seed) {
  for (std::size_t len : lens) {
    const std::size_t offset = splitmix(seed) % 64;
    const std::uint32_t init = static_cast<std::uint32_t>(splitmix(seed));
    const unsigned char* p = data.data() + offset;
    const std::uint32_t ref = crc32c_extend_software(init, p, len);
    ASSERT_EQ(crc32c_extend_hardware(init, p, len), ref) << "offset " << offset << " len " << len;
    ASSERT_EQ(crc32c_extend_sse42(init, p, len), ref) << "offset " << offset << " len " << len;
    ASSERT_EQ(crc32c_extend(init, p, len), ref) << "offset " << offset << " len " << len;
  }
}

// RFC 3720 (iSCSI) appendix B.4 and the common check value.
TEST(Crc32c, StandardVectors) {
  EXPECT_EQ(crc_of(""), 0x00000000u);
  EXPECT_EQ(crc_of("123456789"), 0xE3069283u);
  EXPECT_EQ(crc_of("The quick brown fox jumps over the lazy dog"), 0x22620404u);

  std::vector<unsigned char> buf(32, 0x00);
  EXPECT_EQ(crc32c(buf.data(), buf.size()), 0x8A9136AAu);
  std::fill(buf.begin(), buf.end(), 0xFF);
  EXPECT_EQ(crc32c(buf.data(), buf.size()), 0x62A8AB43u);
  for (int i = 0; i < 32; ++i) buf[static_cast<std::size_t>(i)] = static_cast<unsigned char>(i);
  EXPECT_EQ(crc32c(buf.data(), buf.size()), 0x46DD794Eu);
  for (int i = 0; i < 32; ++i)
    buf[static_cast<std::size_t>(i)] = static_cast<unsigned char>(31 - i);
  EXPECT_EQ(crc32c(buf.data(), buf.size()), 0x113FDB5Cu);
}

TEST(Crc32c, BothImplementationsMatchTheVectors) {
  const char* s = "123456789";
  EXPECT_EQ(crc32c_extend_software(0, s, 9), 0xE3069283u);
  EXPECT_EQ(crc32c_extend_hardware(0, s, 9), 0xE3069283u);
  if (!sluice::util::crc32c_hardware_available())
    GTEST_LOG_(INFO) << "no SSE4.2: hardware path falls back to the table";
}

TEST(Crc32c, HardwareEqualsSoftwareOnRandomData) {
  std::uint64_t seed = 42;
  std::vector<unsigned char> data(70000);
  for (auto& b : data) b = static_cast<unsigned char>(splitmix(seed));
  for (int round = 0; round < 2000; ++round) {
    const std::size_t offset = splitmix(seed) % 64;  // every alignment
    const std::size_t len =
        round < 100 ? static_cast<std::size_t>(round) : splitmix(seed) % (data.size() - offset);
    const std::uint32_t init = static_cast<std::uint32_t>(splitmix(seed));
    ASSERT_EQ(crc32c_extend_software(init, data.data() + offset, len),
              crc32c_extend_hardware(init, data.data() + offset, len))
        << "offset " << offset << " len " << len;
  }
}

TEST(Crc32c, ExtendEqualsWholeBuffer) {
  std::uint64_t seed = 7;
  std::vector<unsigned char> data(5000);
  for (auto& b : data) b = static_cast<unsigned char>(splitmix(seed));
  const std::uint32_t whole = crc32c(data.data(), data.size());
  for (int round = 0; round < 200; ++round) {
    const std::size_t a = splitmix(seed) % data.size();
    const std::size_t b = a + splitmix(seed) % (data.size() - a);
    std::uint32_t c = crc32c(data.data(), a);
    c = crc32c_extend(c, data.data() + a, b - a);
    c = crc32c_extend(c, data.data() + b, data.size() - b);
    ASSERT_EQ(c, whole);
  }
}

TEST(Crc32c, DetectsEverySingleBitFlip) {
  std::vector<unsigned char> data(256);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 7);
  const std::uint32_t good = crc32c(data.data(), data.size());
  for (std::size_t bit = 0; bit < data.size() * 8; ++bit) {
    data[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    ASSERT_NE(crc32c(data.data(), data.size()), good) << bit;
    data[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
  }
}

// Long buffers take the PCLMULQDQ-folding + crc32 hybrid (blocks of 32768 and 4096 bytes)
// when the CPU has it: lengths up to 200 KiB cross every block boundary and tail case.
TEST(Crc32c, LongBuffersAllPathsAgree) {
  if (!sluice::util::crc32c_folding_available())
    GTEST_LOG_(INFO) << "no PCLMULQDQ: the hardware path is the crc32 instruction alone";
  std::uint64_t seed = 1234;
  std::vector<unsigned char> data(200 * 1024 + 64);
  for (auto& b : data) b = static_cast<unsigned char>(splitmix(seed));
  std::vector<std::size_t> lens;
  for (std::size_t base : {std::size_t{4096}, std::size_t{32768}, std::size_t{32768 + 4096}})
    for (std::size_t d = 0; d < 20; ++d) {
      lens.push_back(base + d - 10);
      lens.push_back(2 * base + d - 10);
    }
  for (int i = 0; i < 300; ++i) lens.push_back(splitmix(seed) % (200 * 1024 + 1));
  lens.push_back(200 * 1024);
  expect_paths_agree(data, lens, seed);
}

// Chaining over long pieces: the fold path's incoming register and the split points.
TEST(Crc32c, ExtendChainsOverLongPieces) {
  std::uint64_t seed = 99;
  std::vector<unsigned char> data(200 * 1024);
  for (auto& b : data) b = static_cast<unsigned char>(splitmix(seed));
  const std::uint32_t whole = crc32c_extend_software(0, data.data(), data.size());
  ASSERT_EQ(crc32c(data.data(), data.size()), whole);
  for (int round = 0; round < 60; ++round) {
    std::size_t pos = 0;
    std::uint32_t c = 0;
    while (pos < data.size()) {
      const std::size_t piece = std::min(data.size() - pos, splitmix(seed) % 40000);
      c = crc32c_extend(c, data.data() + pos, piece);
      pos += piece;
    }
    ASSERT_EQ(c, whole) << round;
  }
}

// Large known vectors: a flipped bit anywhere in a long buffer changes the CRC, and the
// RFC 3720 all-zero / all-ones patterns repeated to 64 KiB agree with the table reference.
TEST(Crc32c, LongPatternsMatchTable) {
  for (unsigned char fill : {0x00, 0xFF, 0x5A}) {
    std::vector<unsigned char> buf(65536, fill);
    EXPECT_EQ(crc32c(buf.data(), buf.size()), crc32c_extend_software(0, buf.data(), buf.size()));
  }
  std::vector<unsigned char> buf(40000, 0);
  const std::uint32_t good = crc32c(buf.data(), buf.size());
  for (std::size_t byte : {std::size_t{0}, std::size_t{3}, std::size_t{32767}, std::size_t{32768},
                           std::size_t{30000}, std::size_t{39999}}) {
    buf[byte] ^= 0x10;
    EXPECT_NE(crc32c(buf.data(), buf.size()), good) << byte;
    EXPECT_EQ(crc32c(buf.data(), buf.size()), crc32c_extend_software(0, buf.data(), buf.size()));
    buf[byte] ^= 0x10;
  }
}

// Throughput, not a check: run by hand under measure.sh with
//   build-n/bin/test_crc32c --gtest_also_run_disabled_tests --gtest_filter='*Throughput*'
TEST(Crc32c, DISABLED_Throughput) {
  std::vector<unsigned char> buf(1 << 20);
  std::vector<unsigned char> dst(1 << 20);
  std::uint64_t seed = 5;
  for (auto& b : buf) b = static_cast<unsigned char>(splitmix(seed));
  using Fn = std::uint32_t (*)(std::uint32_t, const void*, std::size_t);
  struct Impl {
    const char* name;
    Fn fn;
  };
  const Impl impls[] = {{"sse42 (old)", crc32c_extend_sse42},
                        {"hardware (new)", crc32c_extend_hardware}};
  for (std::size_t size : {std::size_t{1536}, std::size_t{65536}, std::size_t{1} << 20}) {
    const std::size_t reps = (std::size_t{2} << 30) / size;  // 2 GiB per figure
    for (const Impl& impl : impls) {
      std::uint32_t sink = 0;
      const auto t0 = std::chrono::steady_clock::now();
      for (std::size_t r = 0; r < reps; ++r) sink ^= impl.fn(sink, buf.data(), size);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("%-15s %8zu B  %6.1f GB/s  (%08x)\n", impl.name, size,
                  static_cast<double>(reps * size) / s / 1e9, sink);
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t r = 0; r < reps; ++r) {
      std::memcpy(dst.data(), buf.data(), size);
      asm volatile("" ::"r"(dst.data()) : "memory");
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-15s %8zu B  %6.1f GB/s\n", "memcpy", size,
                static_cast<double>(reps * size) / s / 1e9);
  }
}

}  // namespace

// Packet-sized buffers (a 1500-MTU payload, ~1.4 KB) take three equal streams merged by
// carry-less multiplication: every length up to 2 KiB, and lengths up to past the
// 3 x 8 KiB long-block tier (no PCLMULQDQ: the 256-byte tier), at every register value.
TEST(Crc32c, PacketLengthsThreeStreamsAgree) {
  std::uint64_t seed = 4321;
  std::vector<unsigned char> data(3 * 8192 + 256);
  for (auto& b : data) b = static_cast<unsigned char>(splitmix(seed));
  std::vector<std::size_t> lens;
  for (std::size_t len = 0; len <= 2048; ++len) lens.push_back(len);
  for (int i = 0; i < 400; ++i) lens.push_back(splitmix(seed) % (3 * 8192 + 128));
  expect_paths_agree(data, lens, seed);
}
