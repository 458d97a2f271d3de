// libFuzzer target for the reliability layer's receive path: the RelHeader parser and
// everything behind it (ack processing, reordering buffer, timers), fed arbitrary packets.
//
// Input: a sequence of records  [flags u8][header_len u8][payload_len u8][clock step u8]
//        [header_len bytes][payload_len bytes]
// flags bit 0: repair the packet (correct job key and CRC) so it gets past the integrity
// checks and drives the sequence/ack state machine with arbitrary seq, ack and sack fields;
// flags bit 1: before injecting, the channel sends one packet of its own (so acks have
// something to acknowledge). Without bit 0 the bytes go in raw: the parser must reject
// them without reading out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "drivers/fault/loopback_wire.hpp"
#include "proto/reliable/reliable_channel.hpp"
#include "proto/reliable/wire.hpp"

namespace {

using namespace sluice::proto::reliable;
using sluice::drivers::LoopbackWire;

class Sink final : public sluice::drivers::PacketSink {
 public:
  void on_packet(int, std::span<const std::byte> header,
                 std::span<const std::byte> payload) override {
    // Touch every byte so ASan sees any out-of-bounds span.
    for (std::byte b : header) sum += static_cast<unsigned>(b);
    for (std::byte b : payload) sum += static_cast<unsigned>(b);
    ++count;
  }
  unsigned sum = 0;
  unsigned count = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The bare parser on the whole input, split at the first byte's value.
  {
    const auto* bytes = reinterpret_cast<const std::byte*>(data);
    const std::size_t split = size ? data[0] % (size + 1) : 0;
    RelHeader h;
    (void)parse_header({bytes, split}, size - split, h);
  }

  std::uint64_t clock = 0;
  LoopbackWire wire(2, {.max_header = 200, .max_packet = 300, .inbox_limit = 64});
  ReliableConfig cfg;
  cfg.job_key = 0xF00D;
  cfg.window = 8;
  cfg.clock = [&clock] { return clock; };
  cfg.peer_timeout_ns = 5'000'000;
  cfg.keepalive_ns = 1'000'000;
  ReliableChannel ch(wire.endpoint(0), cfg);
  Sink sink;
  std::uint32_t delivered_before = 0;

  std::size_t pos = 0;
  std::vector<std::byte> header, payload;
  while (pos + 4 <= size) {
    const std::uint8_t flags = data[pos];
    const std::size_t hlen = data[pos + 1];
    const std::size_t plen = data[pos + 2];
    clock += std::uint64_t{data[pos + 3]} * 20'000;
    pos += 4;
    if (pos + hlen + plen > size) break;
    header.assign(reinterpret_cast<const std::byte*>(data + pos),
                  reinterpret_cast<const std::byte*>(data + pos + hlen));
    pos += hlen;
    payload.assign(reinterpret_cast<const std::byte*>(data + pos),
                   reinterpret_cast<const std::byte*>(data + pos + plen));
    pos += plen;

    if (flags & 2) {
      const std::byte h[4] = {};
      (void)ch.send(1, h, std::span(payload).first(std::min<std::size_t>(payload.size(), 16)));
    }
    if ((flags & 1) && header.size() >= sizeof(RelHeader)) {
      RelHeader h;
      std::memcpy(&h, header.data(), sizeof h);
      h.magic = kRelMagic;
      h.version = kRelVersion;
      h.reserved = 0;
      h.flags &= rel_flags::known;
      h.type = static_cast<RelType>(1 + static_cast<std::uint8_t>(h.type) % 3);
      if (h.type != RelType::data) {
        header.resize(sizeof h);
        payload.clear();
      }
      h.upper_header_len = static_cast<std::uint16_t>(header.size() - sizeof h);
      h.payload_len = static_cast<std::uint32_t>(payload.size());
      h.job_key = cfg.job_key;
      h.seq %= 64;  // keep sequence numbers near the window so data gets buffered
      h.ack %= 64;
      const std::span<const std::byte> upper(header.data() + sizeof h, header.size() - sizeof h);
      h.crc = packet_crc(h, upper, payload);
      std::memcpy(header.data(), &h, sizeof h);
    }
    wire.inject(0, 1, header, payload);
    ch.poll(sink, 1 + flags % 4);
    if (sink.count < delivered_before) __builtin_trap();
    delivered_before = sink.count;
    (void)ch.next_timer_ns();
  }
  for (int i = 0; i < 4; ++i) ch.poll(sink, 64);
  if (ch.stats().delivered != sink.count) __builtin_trap();
  return 0;
}
