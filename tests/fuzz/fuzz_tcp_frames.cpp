// libFuzzer target for the tcp driver's wire parser (drivers/tcp/tcp_wire.hpp): the input
// is a byte stream as a connection would deliver it, cut into reads of arbitrary sizes;
// frames are reassembled exactly as TcpDriver::process_input does (parse at the front,
// need_more -> wait for the next read, growing the buffer to the announced frame size,
// malformed -> the connection is dropped), and every span handed up is read in full so
// ASan catches any out-of-bounds view. Hello payloads go through parse_hello.
//
// Input: [job size u8][max_header u8][read size seed u8] then the stream.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "drivers/tcp/tcp_wire.hpp"

using namespace sluice::drivers::tcp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const int job_size = data[0];
  const std::size_t max_header = data[1] + 1u;
  const std::size_t max_payload = 4096;
  std::uint8_t seed = data[2];
  const auto* stream = reinterpret_cast<const std::byte*>(data + 3);
  const std::size_t n = size - 3;

  std::vector<std::byte> in(64);  // small on purpose: growth is exercised
  std::size_t in_len = 0, pos_in_stream = 0;
  unsigned sum = 0;
  while (pos_in_stream < n) {
    // One read: up to the free space, of a pseudo-random length.
    seed = static_cast<std::uint8_t>(seed * 37 + 11);
    const std::size_t room = in.size() - in_len;
    const std::size_t chunk =
        std::min({room, n - pos_in_stream, static_cast<std::size_t>(seed % 97 + 1)});
    std::memcpy(in.data() + in_len, stream + pos_in_stream, chunk);
    in_len += chunk;
    pos_in_stream += chunk;
    std::size_t pos = 0;
    for (;;) {
      Frame f;
      const auto r = parse_frame({in.data() + pos, in_len - pos}, max_header, max_payload, f);
      if (r == FrameParse::malformed) return 0;  // the driver closes the connection
      if (r == FrameParse::need_more) {
        if (f.total > in.size()) in.resize(f.total);
        break;
      }
      if (f.total > in_len - pos || f.total < sizeof(FrameHeader)) __builtin_trap();
      for (std::byte b : f.header) sum += static_cast<unsigned>(b);
      for (std::byte b : f.payload) sum += static_cast<unsigned>(b);
      if (f.type == FrameType::hello || f.type == FrameType::hello_ack) {
        Hello h;
        if (parse_hello(f.payload, job_size, h) && (h.rank < 0 || h.rank >= job_size))
          __builtin_trap();
      }
      pos += f.total;
    }
    std::memmove(in.data(), in.data() + pos, in_len - pos);
    in_len -= pos;
    if (in.size() == in_len) in.resize(in.size() * 2);  // cannot happen: growth covers it
  }
  return static_cast<int>(sum & 0);
}
