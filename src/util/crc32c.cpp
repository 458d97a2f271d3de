#include "util/crc32c.hpp"

#include <array>
#include <bit>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#include <wmmintrin.h>
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

// Shifting a CRC register over `len` zero bytes is linear over GF(2): a 32x32 bit matrix,
// applied here a byte at a time through four 256-entry tables. It lets three independent
// crc32 streams (the instruction has a latency of 3 cycles but a throughput of 1) be
// merged: crc(A||B) = shift(crc(A), |B|) ^ crc_raw(B). Method after Mark Adler's crc32c.c.
struct ZeroShift {
  std::array<std::array<std::uint32_t, 256>, 4> t{};

  static constexpr std::uint32_t times(const std::array<std::uint32_t, 32>& mat,
                                       std::uint32_t vec) {
    std::uint32_t sum = 0;
    for (int i = 0; vec != 0; vec >>= 1, ++i)
      if (vec & 1u) sum ^= mat[static_cast<std::size_t>(i)];
    return sum;
  }
  static constexpr std::array<std::uint32_t, 32> square(const std::array<std::uint32_t, 32>& m) {
    std::array<std::uint32_t, 32> out{};
    for (std::size_t i = 0; i < 32; ++i) out[i] = times(m, m[i]);
    return out;
  }
  // a∘b (b applied first); powers of one operator commute, so the order does not matter.
  static constexpr std::array<std::uint32_t, 32> compose(const std::array<std::uint32_t, 32>& a,
                                                         const std::array<std::uint32_t, 32>& b) {
    std::array<std::uint32_t, 32> out{};
    for (std::size_t i = 0; i < 32; ++i) out[i] = times(a, b[i]);
    return out;
  }
  explicit constexpr ZeroShift(std::size_t len_bytes) {
    std::array<std::uint32_t, 32> op{};  // one zero bit
    op[0] = kPoly;
    for (std::size_t i = 1; i < 32; ++i) op[i] = std::uint32_t{1} << (i - 1);
    op = square(square(square(op)));      // one zero byte
    std::array<std::uint32_t, 32> acc{};  // identity, then op^len_bytes by square-and-multiply
    for (std::size_t i = 0; i < 32; ++i) acc[i] = std::uint32_t{1} << i;
    for (std::size_t len = len_bytes; len != 0; len >>= 1) {
      if (len & 1u) acc = compose(op, acc);
      op = square(op);
    }
    for (std::uint32_t b = 0; b < 256; ++b)
      for (std::size_t k = 0; k < 4; ++k) t[k][b] = times(acc, b << (8 * k));
  }
  std::uint32_t apply(std::uint32_t crc) const {
    return t[0][crc & 0xFF] ^ t[1][(crc >> 8) & 0xFF] ^ t[2][(crc >> 16) & 0xFF] ^ t[3][crc >> 24];
  }
};
constexpr std::size_t kLongBlock = 8192;
constexpr std::size_t kShortBlock = 256;
constexpr ZeroShift kLongShift(kLongBlock);
constexpr ZeroShift kShortShift(kShortBlock);

// PCLMULQDQ folding ([PCLMUL-CRC], reflected variant): a 128-bit lane moved forward by F bits is
// clmul(lo64, x^(F+32) mod P) ^ clmul(hi64, x^(F-32) mod P), constants bit-reflected and shifted
// left by one because clmul of reflected operands yields the product one bit low. Computed here,
// not copied: fold_constant(544) == 0x740eef02 and fold_constant(480) == 0x9e4addf8 (the published
// CRC32C fold-by-64 pair; with the CRC32 polynomial the same formula gives Linux's R1/R2).
constexpr std::uint64_t fold_constant(unsigned exponent) {
  std::uint32_t r = 0x80000000u;  // x^0 in reflected form
  for (unsigned i = 0; i < exponent; ++i) r = (r >> 1) ^ ((r & 1u) ? kPoly : 0u);
  return std::uint64_t{r} << 1;
}
static_assert(fold_constant(544) == 0x740eef02u && fold_constant(480) == 0x9e4addf8u);

// Below kLongBlock * 3 (a 1500-MTU packet's ~1.4 KB payload above all) the buffer is cut
// into three equal streams of 8 * k bytes whatever its length, so nothing but a < 24-byte
// tail runs through one serial crc32 chain. The streams are merged with a carry-less
// multiply instead of a ZeroShift table per length: clmul(crc, x^(64k - 33) mod P) fed
// through crc32 with a zero register is crc * x^(64k) mod P, i.e. crc shifted over k
// 8-byte words. kStreamShift[k] holds x^(64k - 33) mod P (reflected), k = 1..kLongBlock / 8.
struct StreamShift {
  std::array<std::uint64_t, kLongBlock / 8 + 1> k{};
  constexpr StreamShift() {
    std::uint32_t r = 0x80000000u;  // x^0
    for (unsigned i = 0; i < 31; ++i) r = (r >> 1) ^ ((r & 1u) ? kPoly : 0u);
    for (std::size_t w = 1; w < k.size(); ++w) {
      k[w] = r;  // x^(64w - 33)
      for (unsigned i = 0; i < 64; ++i) r = (r >> 1) ^ ((r & 1u) ? kPoly : 0u);
    }
  }
};
constexpr StreamShift kStreamShift;

// Hybrid block: on Intel cores `crc32` and `pclmulqdq` issue on different ports, so one loop
// feeds both: the first kFold bytes are folded in 4 x 128-bit lanes while three `crc32`
// streams cover the 3 * kStream bytes after them. On this VM the fold alone reaches ~12 GB/s
// and the crc32 streams ~21 GB/s; a quarter of each block to the fold measured best in the
// udp A/B (40 % and 47 % were slower there). Blocks of 32768 and 4096 bytes.
template <std::size_t Iters>
struct Hybrid {
  static constexpr std::size_t kStep = 64;               // 8 x 8 B per stream per 64 B folded
  static constexpr std::size_t kStream = kStep * Iters;  // bytes per crc32 stream
  static constexpr std::size_t kFold = 64 * Iters;       // bytes folded (64 per step)
  static constexpr std::size_t kBlock = kFold + 3 * kStream;
  static constexpr ZeroShift kShift{kStream};
};

#ifdef SLUICE_CRC32C_X86
__attribute__((target("sse4.2,pclmul"))) inline __m128i fold128(__m128i x, __m128i k,
                                                                __m128i data) {
  const __m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
  const __m128i hi = _mm_clmulepi64_si128(x, k, 0x11);
  return _mm_xor_si128(_mm_xor_si128(lo, hi), data);
}

__attribute__((target("sse4.2,pclmul"))) inline __m128i load128(const unsigned char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

template <std::size_t Iters>
__attribute__((target("sse4.2,pclmul"))) std::uint64_t hybrid_blocks(std::uint64_t c,
                                                                     const unsigned char*& p,
                                                                     std::size_t& n) {
  using H = Hybrid<Iters>;
  const __m128i k64 = _mm_set_epi64x(static_cast<long long>(fold_constant(480)),
                                     static_cast<long long>(fold_constant(544)));
  const __m128i k16 = _mm_set_epi64x(static_cast<long long>(fold_constant(96)),
                                     static_cast<long long>(fold_constant(160)));
  while (n >= H::kBlock) {
    const unsigned char* f = p;
    const unsigned char* s = p + H::kFold;
    // The incoming register enters the fold through the first four bytes (CRC is linear).
    __m128i x0 = _mm_xor_si128(load128(f), _mm_cvtsi32_si128(static_cast<int>(c)));
    __m128i x1 = load128(f + 16);
    __m128i x2 = load128(f + 32);
    __m128i x3 = load128(f + 48);
    std::uint64_t c0 = 0, c1 = 0, c2 = 0;
    auto crc_step = [&](std::size_t off) __attribute__((target("sse4.2"))) {
      for (std::size_t j = 0; j < H::kStep; j += 8) {
        std::uint64_t v0, v1, v2;
        std::memcpy(&v0, s + off + j, 8);
        std::memcpy(&v1, s + H::kStream + off + j, 8);
        std::memcpy(&v2, s + 2 * H::kStream + off + j, 8);
        c0 = _mm_crc32_u64(c0, v0);
        c1 = _mm_crc32_u64(c1, v1);
        c2 = _mm_crc32_u64(c2, v2);
      }
    };
    crc_step(0);
    for (std::size_t i = 1; i < Iters; ++i) {
      f += 64;
      x0 = fold128(x0, k64, load128(f));
      x1 = fold128(x1, k64, load128(f + 16));
      x2 = fold128(x2, k64, load128(f + 32));
      x3 = fold128(x3, k64, load128(f + 48));
      crc_step(H::kStep * i);
    }
    // Four lanes into one, then the last 16 bytes through crc32 (no Barrett step needed).
    x1 = fold128(x0, k16, x1);
    x2 = fold128(x1, k16, x2);
    x3 = fold128(x2, k16, x3);
    std::uint64_t folded = _mm_crc32_u64(0, static_cast<std::uint64_t>(_mm_cvtsi128_si64(x3)));
    folded = _mm_crc32_u64(folded, static_cast<std::uint64_t>(_mm_extract_epi64(x3, 1)));
    c = H::kShift.apply(static_cast<std::uint32_t>(folded)) ^ c0;
    c = H::kShift.apply(static_cast<std::uint32_t>(c)) ^ c1;
    c = H::kShift.apply(static_cast<std::uint32_t>(c)) ^ c2;
    p += H::kBlock;
    n -= H::kBlock;
  }
  return c;
}
#endif

#ifdef SLUICE_CRC32C_X86
// Three independent crc32 chains over p[0, len), p[len, 2 len), p[2 len, 3 len) (len a
// multiple of 8): the instruction's latency is 3 cycles, its throughput 1 per cycle.
__attribute__((target("sse4.2"))) inline void three_chains(std::uint64_t& c0, std::uint64_t& c1,
                                                           std::uint64_t& c2,
                                                           const unsigned char* p,
                                                           std::size_t len) {
  for (std::size_t i = 0; i < len; i += 8) {
    std::uint64_t v0, v1, v2;
    std::memcpy(&v0, p + i, 8);
    std::memcpy(&v1, p + len + i, 8);
    std::memcpy(&v2, p + 2 * len + i, 8);
    c0 = _mm_crc32_u64(c0, v0);
    c1 = _mm_crc32_u64(c1, v1);
    c2 = _mm_crc32_u64(c2, v2);
  }
}

__attribute__((target("sse4.2"))) std::uint64_t hw_blocks(std::uint64_t c, const unsigned char*& p,
                                                          std::size_t& n, std::size_t block,
                                                          const ZeroShift& shift) {
  while (n >= 3 * block) {
    std::uint64_t c1 = 0, c2 = 0;
    three_chains(c, c1, c2, p, block);
    c = shift.apply(static_cast<std::uint32_t>(c)) ^ c1;
    c = shift.apply(static_cast<std::uint32_t>(c)) ^ c2;
    p += 3 * block;
    n -= 3 * block;
  }
  return c;
}

// Headers (~100 B) stay on one chain: below this the merge costs more than it saves.
constexpr std::size_t kThreeStreamsMin = 3 * 64;

// n in [kThreeStreamsMin, 3 * kLongBlock): three streams of equal length, merged by clmul.
__attribute__((target("sse4.2,pclmul"))) std::uint64_t three_streams(std::uint64_t c,
                                                                     const unsigned char*& p,
                                                                     std::size_t& n) {
  const std::size_t words = n / 24;  // 8-byte words per stream
  const std::size_t len = words * 8;
  std::uint64_t c1 = 0, c2 = 0;
  three_chains(c, c1, c2, p, len);
  const __m128i k = _mm_cvtsi64_si128(static_cast<long long>(kStreamShift.k[words]));
  auto shift = [&](std::uint64_t crc) __attribute__((target("sse4.2,pclmul"))) {
    const __m128i prod = _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<long long>(crc)), k, 0);
    return _mm_crc32_u64(0, static_cast<std::uint64_t>(_mm_cvtsi128_si64(prod)));
  };
  c = shift(c) ^ c1;
  c = shift(c) ^ c2;
  p += 3 * len;
  n -= 3 * len;
  return c;
}

__attribute__((target("sse4.2"))) std::uint32_t hw_extend(std::uint32_t crc, const void* data,
                                                          std::size_t n, bool fold) {
  auto p = static_cast<const unsigned char*>(data);
  std::uint64_t c = ~crc;
  // Unaligned 8-byte loads cost nothing extra on x86: no byte-wise alignment prologue.
  if (fold && n >= Hybrid<16>::kBlock) {
    c = hybrid_blocks<128>(c, p, n);
    c = hybrid_blocks<16>(c, p, n);
  }
  if (n >= 3 * kLongBlock) c = hw_blocks(c, p, n, kLongBlock, kLongShift);
  if (fold && n >= kThreeStreamsMin)  // fold: the CPU has PCLMULQDQ
    c = three_streams(c, p, n);
  else if (n >= 3 * kShortBlock)
    c = hw_blocks(c, p, n, kShortBlock, kShortShift);
  while (n >= 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
    p += 8;
    n -= 8;
  }
  std::uint32_t c32 = static_cast<std::uint32_t>(c);
  if (n & 4) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    c32 = _mm_crc32_u32(c32, v);
    p += 4;
  }
  if (n & 2) {
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    c32 = _mm_crc32_u16(c32, v);
    p += 2;
  }
  if (n & 1) c32 = _mm_crc32_u8(c32, *p);
  return ~c32;
}

bool detect_hardware() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}
bool detect_folding() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul");
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

bool crc32c_folding_available() {
#ifdef SLUICE_CRC32C_X86
  static const bool available = detect_folding();
  return available;
#else
  return false;
#endif
}

std::uint32_t crc32c_extend_sse42(std::uint32_t crc, const void* data, std::size_t n) {
#ifdef SLUICE_CRC32C_X86
  if (crc32c_hardware_available()) return hw_extend(crc, data, n, false);
#endif
  return crc32c_extend_software(crc, data, n);
}

std::uint32_t crc32c_extend_hardware(std::uint32_t crc, const void* data, std::size_t n) {
#ifdef SLUICE_CRC32C_X86
  if (crc32c_hardware_available()) return hw_extend(crc, data, n, crc32c_folding_available());
#endif
  return crc32c_extend_software(crc, data, n);
}

std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t n) {
#ifdef SLUICE_CRC32C_X86
  static const bool hw = crc32c_hardware_available();
  static const bool fold = crc32c_folding_available();
  if (hw) return hw_extend(crc, data, n, fold);
#endif
  return crc32c_extend_software(crc, data, n);
}

}  // namespace sluice::util
