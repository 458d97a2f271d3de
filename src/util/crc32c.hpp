// CRC32C ([CRC32C], polynomial 0x1EDC6F41, reflected 0x82F63B78): the checksum the
// reliability layer puts on every packet. Uses the SSE4.2 `crc32` instruction when the CPU
// has it (checked once at run time; binaries are built for any x86-64), on long buffers
// together with PCLMULQDQ folding when the CPU has that too (which also merges the three
// crc32 streams of packet-sized buffers), and a slicing-by-8 table otherwise. Standard check value:
// crc32c("123456789") == 0xE3069283.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace sluice::util {

// Extends a finished CRC32C value `crc` (0 for an empty prefix) over `n` more bytes, so
// crc32c(a+b) == crc32c_extend(crc32c(a), b): a packet's header and payload need not be
// contiguous.
std::uint32_t crc32c_extend(std::uint32_t crc, const void* data, std::size_t n);

inline std::uint32_t crc32c(const void* data, std::size_t n) {
  return crc32c_extend(0, data, n);
}
inline std::uint32_t crc32c(std::span<const std::byte> bytes) {
  return crc32c_extend(0, bytes.data(), bytes.size());
}

// The implementations, exposed so tests can check that they agree.
std::uint32_t crc32c_extend_software(std::uint32_t crc, const void* data, std::size_t n);
// Requires crc32c_hardware_available(); falls back to software when it is not. Uses
// PCLMULQDQ folding on long buffers when crc32c_folding_available().
std::uint32_t crc32c_extend_hardware(std::uint32_t crc, const void* data, std::size_t n);
// The `crc32` instruction alone (3 interleaved streams), never folding: the fallback path.
std::uint32_t crc32c_extend_sse42(std::uint32_t crc, const void* data, std::size_t n);
bool crc32c_hardware_available();
bool crc32c_folding_available();

}  // namespace sluice::util
