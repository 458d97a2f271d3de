#include "util/crc32c.hpp"

#include <array>
#include <bit>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define SLUICE_CRC32C_X86 1
#endif

namespace sluice::util {
namespace {

constexpr std::uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

// Slicing-by-8 tables: table[k][b] is the CRC of byte b followed by k zero bytes.
struct Tables {
  std::array<std::array<std::uint32_t, 256>, 8> t{};
  constexpr Tables() {
    for (std::uint32_t b = 0; b < 256; ++b) {
      std::uint32_t c = b;
      for (int i = 0; i < 8; ++i) c = (c >> 1) ^ ((c & 1u) ? kPoly : 0u);
      t[0][b] = c;
    }
    for (std::uint32_t b = 0; b < 256; ++b)
      for (std::size_t k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
  }
};
constexpr Tables kTables;

std::uint64_t load_le64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

#ifdef SLUICE_CRC32C_X86
__attribute__((target("sse4.2"))) std::uint32_t hw_extend(std::uint32_t crc, const void* data,
                                                          std::size_t n) {
  auto p = static_cast<const unsigned char*>(data);
  std::uint64_t c = ~crc;
  while (n > 0 && (reinterpret_cast<std::uintptr_t>(p) & 7u) != 0) {
    c = _mm_crc32_u8(static_cast<std::uint32_t>(c), *p++);
    --n;
  }
  while (n >= 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = _mm_crc32_u8(static_cast<std::uint32_t>(c), *p++);
  return ~static_cast<std::uint32_t>(c);
}

bool detect_hardware() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}
#endif

}  // namespace

std::uint32_t crc32c_extend_software(std::uint32_t crc, const void* data, std::size_t n) {
  const auto& t = kTables.t;
  auto p = static_cast<const unsigned char*>(data);
  std::uint32_t c = ~crc;
  while (n >= 8) {
    std::uint64_t v = load_le64(p) ^ c;
    c = t[7][v & 0xFF] ^ t[6][(v >> 8) & 0xFF] ^ t[5][(v >> 16) & 0xFF] ^ t[4][(v >> 24) & 0xFF] ^
        t[3][(v >> 32) & 0xFF] ^ t[2][(v >> 40) & 0xFF] ^ t[1][(v >> 48) & 0xFF] ^
        t[0][(v >> 56) & 0xFF];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xFF];
  return ~c;
}

bool crc32c_hardware_available() {
#ifdef SLUICE_CRC32C_X86
  static const bool available = detect_hardware();
  return available;
#else
  return false;
#endif
}

std::uint32_t crc32c_extend_hardware(std::uint32_t crc, const void* data, std::size_t n) {
#ifdef SLUICE_CRC32C_X86
  if (crc32c_hardware_available()) return hw_extend(crc, data, n);
#endif
  return crc32c_extend_software(crc, data, n);
}

std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t n) {
#ifdef SLUICE_CRC32C_X86
  static const bool hw = crc32c_hardware_available();
  if (hw) return hw_extend(crc, data, n);
#endif
  return crc32c_extend_software(crc, data, n);
}

}  // namespace sluice::util
