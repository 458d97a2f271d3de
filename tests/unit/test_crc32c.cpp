#include "util/crc32c.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace {

using sluice::util::crc32c;
using sluice::util::crc32c_extend;
using sluice::util::crc32c_extend_hardware;
using sluice::util::crc32c_extend_software;

std::uint32_t crc_of(std::string_view s) {
  return crc32c(s.data(), s.size());
}

std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
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

}  // namespace
