// Wire headers of the point-to-point protocols. Every packet starts with a one-byte
// PacketType from the p2p range of first bytes (drivers::kP2pTypes, 0x01..0x3f: the
// ProtocolDemux routes by it); the driver carries the header and the payload separately.
// Little-endian, no padding the compiler chooses (every struct is static_asserted).
//
//   eager       MatchHeader + payload (the whole message)       sender done at once
//   eager_sync  MatchHeader + sender id + payload; receiver answers sync_ack (MPI_Ssend)
//   rts         RtsHeader (match info, size, sender id, the packed remote key of the
//               sender's registered buffer)                        rendezvous start
//   cts         CtsHeader: receiver matched, send `length` bytes as data fragments; carries
//               the packed remote key of the receiver's buffer (for a put-based rendezvous)
//   data        DataHeader + fragment payload (pipelined copy)
//   fin         FinHeader: receiver pulled the data itself (one-sided get) — sender done
//   push_data   DataHeader (receiver_req = the *sender's* id) + fragment of a pushed
//               rendezvous: the sender streams the message right after its rts
//               (path push) without waiting for a cts; the receiver places or stashes it
//   sync_ack    FinHeader: eager_sync matched — sender done
//   cancel_req  CancelHeader: the sender withdraws a message whose rts (or eager_sync) is out
//               and not yet answered (MPI_Cancel of a send); the receiver removes it from its
//               unexpected messages if no receive has matched it ([MPICH]'s send cancel)
//   cancel_ack  FinHeader, pad[0] = 1 when the message was withdrawn, 0 when too late (it
//               matched: its cts, fin or sync_ack went out before this answer, same order)
//
// A pipelined send over a lending driver (the reliability layer) completes on the local
// completions of its fragments (their acknowledgements), not on a packet from the receiver.
//
// Byte layouts:
//   MatchHeader  0 type | 1 flags | 2 reserved(2) | 4 ctx | 8 tag | 12 size32          = 16
//   RtsHeader    0 MatchHeader (flags = RndvPath, reserved = 1 if sync) | 16 size |
//                24 sender_req | 32 RemoteKey{addr, length, key}                      = 56
//   CtsHeader    0 type | 1 pad(7) | 8 sender_req | 16 receiver_req | 24 length |
//                32 RemoteKey of the receiver's buffer (zero: none)                   = 56
//   DataHeader   0 type | 1 pad(7) | 8 receiver_req (push_data: sender's id) | 16 offset = 24
//   FinHeader    0 type | 1 pad(7) | 8 sender_req                                     = 16
//   CancelHeader 0 type | 1 pad(3) | 4 ctx | 8 tag | 12 pad(4) | 16 sender_req          = 24
// 56 bytes is what the tightest driver leaves the protocol: a 1500-byte-MTU datagram
// driver gives 112 header bytes, the reliability header and payload CRC take 48 + 4 (60
// left). The remote key must fit there.
//
// Request ids are the sender's (or receiver's) own request addresses, echoed back
// verbatim; a request stays alive until every packet that names it has arrived.
#pragma once

#include <cstdint>

#include "mem/registration.hpp"

namespace sluice::proto {

enum class PacketType : uint8_t {
  eager = 1,
  eager_sync,
  rts,
  cts,
  data,
  fin,
  sync_ack,
  push_data,
  cancel_req,
  cancel_ack,
};

struct MatchHeader {
  PacketType type;
  uint8_t flags;
  uint16_t reserved;
  uint32_t ctx;
  int32_t tag;
  uint32_t size32;  // eager size (fits: eager messages are small)
};
static_assert(sizeof(MatchHeader) == 16);

enum class RndvPath : uint8_t { pipeline = 0, get = 1, push = 2 };

struct RtsHeader {
  MatchHeader match;  // flags: the RndvPath; reserved: 1 for a synchronous send; size32 unused
  uint64_t size;
  uint64_t sender_req;
  mem::RemoteKey key;  // the sender's buffer, for a one-sided get (path get)
};
static_assert(sizeof(RtsHeader) == 56);

struct CtsHeader {
  PacketType type;
  uint8_t pad[7];
  uint64_t sender_req;
  uint64_t receiver_req;
  uint64_t length;     // bytes the receiver wants (less than the message when truncated)
  mem::RemoteKey key;  // the receiver's buffer (a put-based rendezvous may write it)
};
static_assert(sizeof(CtsHeader) == 56);

struct DataHeader {
  PacketType type;
  uint8_t pad[7];
  uint64_t receiver_req;
  uint64_t offset;
};
static_assert(sizeof(DataHeader) == 24);

struct FinHeader {
  PacketType type;
  uint8_t pad[7];
  uint64_t sender_req;
};
static_assert(sizeof(FinHeader) == 16);

struct CancelHeader {
  PacketType type;
  uint8_t pad[3];
  uint32_t ctx;  // the withdrawn message's match key, so that the receiver looks in one bin
  int32_t tag;
  uint32_t pad2;
  uint64_t sender_req;
};
static_assert(sizeof(CancelHeader) == 24);

}  // namespace sluice::proto
