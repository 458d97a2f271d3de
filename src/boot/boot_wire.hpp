// Wire protocol between BootClient (in every rank) and the launcher (sluicerun).
//
// Each rank opens one stream socket to the launcher when it starts and keeps it until
// finalize: a Unix socket on one host, TCP with `sluicerun --hosts` (SLUICE_BOOT_ADDR is
// then tcp:IP:PORT). A connection that closes without FINALIZE tells the launcher the rank
// died. Every message is a frame: an 8-byte header {uint32 type, uint32 payload_length},
// little-endian (ranks may run on other hosts), then payload_length bytes.
//
//   client -> launcher                      launcher -> client
//   hello     u32 rank, job key or the      hello_ok (the job key) | reject (reason)
//             rank's one-time launch token
//             (32 hex digits), job id bytes
//   put       u32 key_len, key, value       (no reply; ordered before the next fence)
//   fence                                   fence_ok when every rank has sent fence
//                                           | fence_failed (reason text)
//   get       key                           get_found (value) | get_missing
//   finalize                                finalize_ok
//   abort     i32 code, reason text         abort_ok (then the launcher ends the job)
//                                           proc_failed  u32 rank: unsolicited, at any time
//                                           (also between a request and its reply), sent
//                                           to every rank when one dies under
//                                           `sluicerun --enable-recovery`
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
  proc_failed = 109,
};

inline constexpr std::size_t header_size = 8;
inline constexpr std::size_t max_key_size = 4096;
inline constexpr std::size_t max_value_size = 1u << 20;

// What every client's put() accepts.
inline bool put_fits(std::string_view key, std::string_view value) {
  return !key.empty() && key.size() <= max_key_size && value.size() <= max_value_size;
}
// Anything longer is a protocol error (guards the launcher against garbage lengths).
inline constexpr std::size_t max_payload_size = 4 + max_key_size + max_value_size;
// Until hello is accepted a connection is a stranger: its frames must be hello-sized.
inline constexpr std::size_t job_key_size = 32;
inline constexpr std::size_t max_hello_size = 4 + job_key_size + 256;

inline void append_u32(std::string& out, std::uint32_t v) {
  const char bytes[4] = {static_cast<char>(v), static_cast<char>(v >> 8),
                         static_cast<char>(v >> 16), static_cast<char>(v >> 24)};
  out.append(bytes, 4);
}

// Pops a little-endian u32 from the front of `in`; false if too short.
inline bool take_u32(std::string_view& in, std::uint32_t& v) {
  if (in.size() < 4) return false;
  v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  in.remove_prefix(4);
  return true;
}

// Compares secrets in time independent of where they first differ.
inline bool same_secret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
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

  // Frames longer than `limit` are refused (the launcher lowers it for strangers).
  void set_limit(std::size_t limit) { limit_ = limit; }
  // Bytes fed but not yet returned in a frame.
  std::size_t buffered() const { return buffer_.size() - consumed_; }

  Status next(Frame& frame) {
    std::string_view view(buffer_);
    view.remove_prefix(consumed_);
    std::uint32_t type = 0, length = 0;
    if (!take_u32(view, type) || !take_u32(view, length)) return compact(Status::incomplete);
    if (length > limit_) return Status::oversized;
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
  std::size_t limit_ = max_payload_size;
};

}  // namespace sluice::detail::bootwire
