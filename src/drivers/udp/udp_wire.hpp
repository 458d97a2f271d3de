// Wire format of the udp driver: one packet per datagram.
//
//   off size field        meaning
//   --- ---- ------------ -----------------------------------------------------------
//    0   2   magic        0x4455 ("UD" in memory); anything else -> malformed
//    2   1   version      1
//    3   1   flags        0
//    4   4   src          sender's world rank, in [0, job size)
//    8   2   header_len   bytes of packet header after these 12 (1..max_header)
//   10   2   reserved     0
//   12   header_len bytes of header, then the payload (the rest of the datagram)
//
// The driver is unreliable and unauthenticated by itself: the reliability layer above it
// (proto/reliable) checks the job key and a CRC32C over everything it hands up, so a
// stranger's datagram that passes this parser is still dropped (and counted) there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace sluice::drivers::udp {

inline constexpr uint16_t kMagic = 0x4455;
inline constexpr uint8_t kVersion = 1;

struct UdpHeader {
  uint16_t magic = kMagic;
  uint8_t version = kVersion;
  uint8_t flags = 0;
  int32_t src = -1;
  uint16_t header_len = 0;
  uint16_t reserved = 0;
};
static_assert(sizeof(UdpHeader) == 12);

struct Datagram {
  int src = -1;
  std::span<const std::byte> header;
  std::span<const std::byte> payload;
};

// Parses one received datagram; false when malformed. Never reads past `d`.
inline bool parse_datagram(std::span<const std::byte> d, int job_size, std::size_t max_header,
                           Datagram& out) {
  if (d.size() < sizeof(UdpHeader)) return false;
  UdpHeader h;
  std::memcpy(&h, d.data(), sizeof h);
  if (h.magic != kMagic || h.version != kVersion || h.flags != 0 || h.reserved != 0) return false;
  if (h.src < 0 || h.src >= job_size) return false;
  if (h.header_len == 0 || h.header_len > max_header) return false;
  if (d.size() - sizeof(UdpHeader) < h.header_len) return false;
  out.src = h.src;
  out.header = d.subspan(sizeof(UdpHeader), h.header_len);
  out.payload = d.subspan(sizeof(UdpHeader) + h.header_len);
  return true;
}

}  // namespace sluice::drivers::udp
