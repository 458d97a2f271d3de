// Wire format and timers of the reliability layer (ReliableChannel), which makes any
// unreliable packet driver (datagram sockets, libfabric DGRAM) reliable and ordered.
//
// Why it exists: [OpenMPI-UD] runs MPI over connectionless unreliable
// datagrams and keeps reliability in software — acknowledgements, an ACK timeout and
// retransmission — so per-peer state stays small and startup needs no connections. [Open-MX]
// adds optimistic re-request: when later packets arrive while an earlier one
// is missing, ask for it at once instead of waiting for the timeout. Unlike go-back-N we
// acknowledge selectively, so one loss costs one retransmission, not a window's worth.
//
// ---------------------------------------------------------------------------------------
// PACKET LAYOUT
//
// Every packet the channel hands to the inner driver is
//
//     driver header  = RelHeader (48 bytes)  ||  upper layer's header (upper_header_len)
//     driver payload = upper layer's payload (payload_len bytes, untouched, zero-copy split)
//
// RelHeader, all integers little-endian, naturally aligned, no padding:
//
//   off size field             meaning
//   --- ---- ----------------- ---------------------------------------------------------
//    0   2   magic             0x5352 ("RS" in memory): not ours -> malformed
//    2   1   version           1
//    3   1   type              RelType: data=1, ack=2, probe=3; anything else -> malformed
//    4   1   flags             RelFlags bits; unknown bits -> malformed
//    5   1   reserved          must be 0
//    6   2   upper_header_len  bytes of upper header after RelHeader; must equal
//                              driver_header_size - 48 (0 unless type == data), or
//                              driver_header_size - 52 with flag split_crc
//    8   4   payload_len       must equal the driver payload size (0 unless data)
//   12   4   crc               CRC32C over RelHeader (with crc = 0) || upper header ||
//                              payload: corruption anywhere drops the packet (split_crc:
//                              over the driver header only, see the flag)
//   16   8   job_key           per-job secret: a packet with another key is dropped and
//                              counted (checked after the CRC, so a damaged key counts as
//                              corruption, a foreign sender's intact packet as bad key)
//   24   4   seq               data: this packet's sequence number (per sender->receiver
//                              pair, starts at ReliableConfig::initial_seq, wraps mod 2^32,
//                              compared by serial-number arithmetic); ack/probe: the
//                              sender's next unsent seq (informational)
//   28   4   ack               cumulative ack: every seq before `ack` has been received
//                              from the packet's destination (it is the next seq expected;
//                              received but undelivered packets count only up to the next
//                              seq to deliver + ring - window, so the sender's next window
//                              always fits in the receive ring: flow control)
//   32  16   sack[2]           selective acks: bit i (sack[i / 64] bit i % 64) set means
//                              seq ack + 1 + i has been received and is buffered. Covers
//                              128 seqs, so the window is at most 128 packets.
//
// Every packet, of any type, carries ack + sack: acknowledgements ride on reverse data
// ("piggybacked") whenever there is some, and otherwise go out as a type=ack packet.
//
// Types:
//   data   one upper-layer packet (header + payload) to deliver exactly once, in order.
//   ack    acknowledgement only. With flag nack it is [Open-MX]'s optimistic re-request:
//          the receiver saw a gap (a later seq arrived while `ack` is missing) and asks for
//          the holes now.
//   probe  keepalive (only when ReliableConfig::keepalive_ns != 0): "are you alive?";
//          the receiver answers with an ack at once.
// Flags:
//   nack         (0x01) the ack reports a new gap: retransmit the holes now.
//   ack_request  (0x02) answer with an ack at once instead of waiting for the delayed-ack
//                timer (set on retransmissions and probes, so recovery is not slowed).
//   split_crc    (0x08, data only) the packet's checksums are split: `crc` covers RelHeader
//                || upper header || the 4 bytes after it, which are the CRC32C of the payload
//                (so upper_header_len = driver_header_size - 52). The receiver can trust
//                the header before it has checked the payload, and so let the payload land
//                straight in its destination (PacketSink::placement); a bad payload is then
//                caught by the payload CRC. Used for lent packets (send_tracked: pipelined
//                fragments), whose retransmissions then re-checksum only the header.
//   unchecked    (0x10, data with split_crc only) the payload CRC was not computed (its 4
//                bytes are zero): the sender's route to the receiver is intact
//                (Driver::intact: loopback, memory to memory), and the payload was copied,
//                not sent zero-copy from a registration. A receiver accepts it only if its
//                own route from the sender is intact too (else it drops it, counted as
//                unchecked_refused, keeping its ack fields); a
//                retransmission always carries the payload CRC, so a mismatched pair still
//                gets every packet through.
//   dup          (0x04, ack only) a D-SACK: data packet `seq` arrived again after it had
//                been received. A sender that resent that packet on a timeout or a fast
//                retransmission learns the resend was probably spurious (the original
//                was only late; a copy duplicated by the network looks the same): it
//                counts it and undoes the timeout's backoff.
//
// Receive-side checks, in order, each a counted drop: too short / bad magic / version /
// type / flags / reserved / lengths (malformed) -> CRC (corrupt) -> job key (bad_key) ->
// peer already declared dead (from_dead) -> seq before the delivery point or already
// buffered (duplicate, answered with an immediate ack) -> seq beyond the receive buffer
// (beyond_window) -> split_crc: payload CRC (corrupt). Nothing is read past the sizes the
// driver reported. A driver that asks PacketSink::placement before reading a payload gets a
// destination only for a split_crc data packet whose header CRC and key check out and
// whose seq is the next to deliver (so only that packet, or a resend of it, writes there).
//
// Memory per peer is bounded: the sender keeps at most `window` packets (and
// window_bytes) for retransmission; the receiver buffers at most 2 x window packets
// (out-of-order arrivals plus in-order ones the caller's poll budget left undelivered).
//
// ---------------------------------------------------------------------------------------
// TIMERS (all driven from poll(); no threads. next_timer_ns() tells a blocking wait how
// long it may sleep.)
//
//   delayed ack      An in-order arrival arms it (delayed_ack_ns, default 50 us); any
//                    packet we send to that peer before it fires carries the ack and
//                    disarms it. It is bypassed (ack sent at the end of the current poll)
//                    after ack_every in-order packets, on a gap (with nack), on a
//                    duplicate, when a gap is filled, and on ack_request.
//   retransmission   One per peer, armed while packets are unacknowledged. RTO from
//   timeout (RTO)    measured RTT, Jacobson/Karels [RTO]: first sample R gives SRTT = R,
//                    RTTVAR = R/2; later SRTT += (R - SRTT)/8, RTTVAR += (|SRTT - R| -
//                    RTTVAR)/4; RTO = SRTT + max(4 RTTVAR, 10 us), clamped to
//                    [min_rto_ns, max_rto_ns]; initial_rto_ns before any sample. Karn's
//                    rule: only packets transmitted once give samples, and only if sent
//                    after our latest retransmission (whose ack_request may repeat an ack
//                    that was lost, which would time the RTO, not the path). On expiry the
//                    oldest unacknowledged, un-sacked packet is resent and the timer
//                    doubles (exponential backoff, capped at max_rto_ns); any ack progress
//                    resets the backoff.
//   tail loss probe  Armed with each new packet and on ack progress, once an RTT is known:
//                    PTO = min(2 SRTT + delayed_ack_ns + 10 us, RTO). If it expires first,
//                    the newest unacknowledged packet is resent (with ack_request), once
//                    per ack progress: when the tail of a burst is lost there is no later
//                    packet to reveal the gap, and the probe's ack lets fast retransmission
//                    repair it in about one RTT instead of an RTO.
//   fast retransmit  Not a timer: when an ack (cumulative or selective) covers a packet
//                    whose last transmission came after a hole's last transmission, the
//                    hole is presumed lost and resent at once (a time-ordered variant of
//                    "three duplicate acks", which works with windows of any size). The
//                    ack of a packet sent more than once is ambiguous (it may be for the
//                    original): it counts as evidence from the first transmission only,
//                    so a spurious timeout or probe does not make every packet sent
//                    before it look lost (a whole window resent after a scheduling stall).
//                    Before a timeout or probe fires, poll() drains the inner drivers
//                    (arrivals beyond the caller's budget are buffered): acks that sat in
//                    the socket while this process was descheduled count first.
//   peer timeout     While packets are unacknowledged, if no ack makes progress for
//                    peer_timeout_ns (default 30 s) the peer is declared dead: its pending
//                    packets are discarded, send() returns IoStatus::failed, poll()
//                    delivers nothing more from it, dead_peers() lists it and the
//                    on_peer_dead callback runs once. With keepalive_ns != 0 a peer we
//                    have talked to that stays silent for keepalive_ns is probed, and one
//                    silent for peer_timeout_ns is declared dead even with nothing in
//                    flight (so a receive from a crashed peer cannot hang).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

namespace sluice::proto::reliable {

static_assert(std::endian::native == std::endian::little,
              "RelHeader is copied as-is: the wire is little-endian");

inline constexpr std::uint16_t kRelMagic = 0x5352;
inline constexpr std::uint8_t kRelVersion = 1;
inline constexpr std::size_t kSackBits = 128;
inline constexpr std::size_t kPayloadCrcBytes = 4;  // after the upper header (split_crc)

enum class RelType : std::uint8_t { data = 1, ack = 2, probe = 3 };

namespace rel_flags {
inline constexpr std::uint8_t nack = 0x01;
inline constexpr std::uint8_t ack_request = 0x02;
inline constexpr std::uint8_t dup = 0x04;
inline constexpr std::uint8_t split_crc = 0x08;
inline constexpr std::uint8_t unchecked = 0x10;
inline constexpr std::uint8_t known = nack | ack_request | dup | split_crc | unchecked;
}  // namespace rel_flags

struct RelHeader {
  std::uint16_t magic = kRelMagic;
  std::uint8_t version = kRelVersion;
  RelType type = RelType::data;
  std::uint8_t flags = 0;
  std::uint8_t reserved = 0;
  std::uint16_t upper_header_len = 0;
  std::uint32_t payload_len = 0;
  std::uint32_t crc = 0;
  std::uint64_t job_key = 0;
  std::uint32_t seq = 0;
  std::uint32_t ack = 0;
  std::uint64_t sack[2] = {0, 0};
};
static_assert(sizeof(RelHeader) == 48);
static_assert(offsetof(RelHeader, crc) == 12 && offsetof(RelHeader, job_key) == 16 &&
              offsetof(RelHeader, seq) == 24 && offsetof(RelHeader, sack) == 32);

enum class ParseResult : std::uint8_t {
  ok,
  too_short,
  bad_magic,
  bad_version,
  bad_type,
  bad_flags,
  bad_length,
};
const char* to_string(ParseResult r);

// Validates the structure of a received packet (not its CRC or key) and copies the
// RelHeader out. Reads only header[0, header.size()); never trusts a length field.
ParseResult parse_header(std::span<const std::byte> header, std::size_t payload_size,
                         RelHeader& out);

// CRC32C of a packet as defined above; `rel` is taken with its crc field as zero.
std::uint32_t packet_crc(const RelHeader& rel, std::span<const std::byte> upper_header,
                         std::span<const std::byte> payload);

// Serial-number arithmetic [RFC1982] on 32-bit sequence numbers.
inline bool seq_before(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::int32_t>(a - b) < 0;
}
inline bool seq_after(std::uint32_t a, std::uint32_t b) {
  return seq_before(b, a);
}

}  // namespace sluice::proto::reliable
