// libFuzzer target for the udp driver's datagram parser (drivers/udp/udp_wire.hpp):
// arbitrary datagrams, job sizes and header limits; every span it returns is read in full
// (ASan) and must lie inside the datagram.
//
// Input: [job size u8][max_header u8] then the datagram.
#include <cstddef>
#include <cstdint>

#include "drivers/udp/udp_wire.hpp"

using namespace sluice::drivers::udp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const int job_size = data[0];
  const std::size_t max_header = data[1];
  const std::span<const std::byte> d{reinterpret_cast<const std::byte*>(data + 2), size - 2};
  Datagram g;
  if (!parse_datagram(d, job_size, max_header, g)) return 0;
  if (g.src < 0 || g.src >= job_size || g.header.empty() || g.header.size() > max_header ||
      g.header.data() < d.data() || g.payload.data() + g.payload.size() != d.data() + d.size() ||
      sizeof(UdpHeader) + g.header.size() + g.payload.size() != d.size())
    __builtin_trap();
  unsigned sum = 0;
  for (std::byte b : g.header) sum += static_cast<unsigned>(b);
  for (std::byte b : g.payload) sum += static_cast<unsigned>(b);
  return static_cast<int>(sum & 0);
}
