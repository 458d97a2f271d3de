// Wire format of the tcp driver. A connection carries a stream of frames:
//
//   off size field        meaning
//   --- ---- ------------ -----------------------------------------------------------
//    0   4   payload_len  bytes of payload after the header (<= the driver's max_packet)
//    4   2   header_len   bytes of upper-layer header after this one (<= max_header)
//    6   1   type         FrameType; anything else -> malformed, connection closed
//    7   1   flags        0 (nonzero -> malformed)
//    8   header_len bytes of header, then payload_len bytes of payload
//
// Little-endian (the only byte order Sluice runs on; a mixed-endian job fails the
// handshake's magic check). The first frame on a connection is the initiator's hello, the
// acceptor answers hello_ack; both carry a Hello payload with the job key, and nothing
// else may come first: a wrong key, wrong magic, bad rank or any other frame closes the
// connection and is counted. bye announces an orderly close (finalize), so the EOF that
// follows is not a failure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace sluice::drivers::tcp {

enum class FrameType : uint8_t { data = 1, hello = 2, hello_ack = 3, bye = 4 };

struct FrameHeader {
  uint32_t payload_len = 0;
  uint16_t header_len = 0;
  FrameType type = FrameType::data;
  uint8_t flags = 0;
};
static_assert(sizeof(FrameHeader) == 8);

inline constexpr uint32_t kHelloMagic = 0x43544C53;  // "SLTC"
inline constexpr uint16_t kHelloVersion = 1;

struct Hello {
  uint32_t magic = kHelloMagic;
  uint16_t version = kHelloVersion;
  uint16_t reserved = 0;
  int32_t rank = -1;
  int32_t size = 0;
  uint8_t key[16] = {};
};
static_assert(sizeof(Hello) == 32);

struct Frame {
  FrameType type = FrameType::data;
  std::span<const std::byte> header;
  std::span<const std::byte> payload;
  std::size_t total = 0;  // bytes the frame occupies in the stream
};

enum class FrameParse { ok, need_more, malformed };

// Parses the frame at the start of `buf`. need_more: `buf` holds only part of it
// (out.total then tells how many bytes the whole frame needs, once the header is in).
// Never reads past buf.
inline FrameParse parse_frame(std::span<const std::byte> buf, std::size_t max_header,
                              std::size_t max_payload, Frame& out) {
  if (buf.size() < sizeof(FrameHeader)) return FrameParse::need_more;
  FrameHeader h;
  std::memcpy(&h, buf.data(), sizeof h);
  const auto t = static_cast<uint8_t>(h.type);
  if (t < 1 || t > 4 || h.flags != 0) return FrameParse::malformed;
  if (h.header_len > max_header || h.payload_len > max_payload) return FrameParse::malformed;
  if (h.type != FrameType::data) {
    // Control frames: hello / hello_ack carry exactly a Hello, bye nothing.
    const std::size_t want = h.type == FrameType::bye ? 0 : sizeof(Hello);
    if (h.header_len != 0 || h.payload_len != want) return FrameParse::malformed;
  } else if (h.header_len == 0) {
    return FrameParse::malformed;  // every upper-layer packet has a header
  }
  out.type = h.type;
  out.total = sizeof(FrameHeader) + h.header_len + std::size_t{h.payload_len};
  if (buf.size() < out.total) return FrameParse::need_more;
  out.header = buf.subspan(sizeof(FrameHeader), h.header_len);
  out.payload = buf.subspan(sizeof(FrameHeader) + h.header_len, h.payload_len);
  return FrameParse::ok;
}

// Checks a hello / hello_ack payload: magic, version, rank in [0, size), size == job
// size. The key is compared by the caller (counted separately).
inline bool parse_hello(std::span<const std::byte> payload, int job_size, Hello& out) {
  if (payload.size() != sizeof(Hello)) return false;
  std::memcpy(&out, payload.data(), sizeof out);
  return out.magic == kHelloMagic && out.version == kHelloVersion && out.reserved == 0 &&
         out.size == job_size && out.rank >= 0 && out.rank < job_size;
}

}  // namespace sluice::drivers::tcp
