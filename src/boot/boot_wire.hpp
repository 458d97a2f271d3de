// Wire protocol between BootClient (in every rank) and the launcher (sluicerun).
//
// Each rank opens one SOCK_STREAM Unix socket to the launcher when it starts and keeps it
// until finalize; a connection that closes without FINALIZE tells the launcher the rank
// died. Every message is a frame: an 8-byte header {uint32 type, uint32 payload_length} in
// host byte order (both ends are on the same host), then payload_length bytes.
//
//   client -> launcher                      launcher -> client
//   hello     i32 rank, job id bytes        hello_ok | reject (reason text)
//   put       u32 key_len, key, value       (no reply; ordered before the next fence)
//   fence                                   fence_ok when every rank has sent fence
//                                           | fence_failed (reason text)
//   get       key                           get_found (value) | get_missing
//   finalize                                finalize_ok
//   abort     i32 code, reason text         abort_ok (then the launcher ends the job)
//
// The launcher buffers puts and commits them to the job's store when a fence completes,
// so a get sees exactly the values put before the last completed fence. Values are
// arbitrary bytes (length-prefixed, never delimited).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace sluice::detail::bootwire {

enum class MsgType : std::uint32_t {
  hello = 1,
  put = 2,
  fence = 3,
  get = 4,
  finalize = 5,
  abort = 6,

  hello_ok = 101,
  reject = 102,
  fence_ok = 103,
  fence_failed = 104,
  get_found = 105,
  get_missing = 106,
  finalize_ok = 107,
  abort_ok = 108,
};

inline constexpr std::size_t header_size = 8;
inline constexpr std::size_t max_key_size = 4096;
inline constexpr std::size_t max_value_size = 1u << 20;
// Anything longer is a protocol error (guards the launcher against garbage lengths).
inline constexpr std::size_t max_payload_size = 4 + max_key_size + max_value_size;

inline void append_u32(std::string& out, std::uint32_t v) {
  char bytes[4];
  std::memcpy(bytes, &v, 4);
  out.append(bytes, 4);
}

// Pops a u32 from the front of `in`; false if too short.
inline bool take_u32(std::string_view& in, std::uint32_t& v) {
  if (in.size() < 4) return false;
  std::memcpy(&v, in.data(), 4);
  in.remove_prefix(4);
  return true;
}

inline void append_frame(std::string& out, MsgType type, std::string_view payload) {
  append_u32(out, static_cast<std::uint32_t>(type));
  append_u32(out, static_cast<std::uint32_t>(payload.size()));
  out.append(payload);
}

inline std::string make_frame(MsgType type, std::string_view payload = {}) {
  std::string out;
  out.reserve(header_size + payload.size());
  append_frame(out, type, payload);
  return out;
}

struct Frame {
  MsgType type{};
  std::string payload;
};

// Reassembles frames from a byte stream that arrives in arbitrary pieces.
class FrameReader {
 public:
  void feed(const char* data, std::size_t n) { buffer_.append(data, n); }

  // Result of next(): a whole frame, not yet enough bytes, or a length that is too big.
  enum class Status { frame, incomplete, oversized };

  Status next(Frame& frame) {
    std::string_view view(buffer_);
    view.remove_prefix(consumed_);
    std::uint32_t type = 0, length = 0;
    if (!take_u32(view, type) || !take_u32(view, length)) return compact(Status::incomplete);
    if (length > max_payload_size) return Status::oversized;
    if (view.size() < length) return compact(Status::incomplete);
    frame.type = static_cast<MsgType>(type);
    frame.payload.assign(view.data(), length);
    consumed_ += header_size + length;
    return Status::frame;
  }

 private:
  // Drops consumed bytes only when waiting for more, so parsing a batch stays linear.
  Status compact(Status s) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
    return s;
  }

  std::string buffer_;
  std::size_t consumed_ = 0;
};

}  // namespace sluice::detail::bootwire
