// Wire headers of the point-to-point protocols. Every packet starts with a one-byte
// PacketType; the driver carries the header and the payload separately.
//
//   eager       MatchHeader + payload (the whole message)       sender done at once
//   eager_sync  MatchHeader + payload; receiver answers sync_ack   (MPI_Ssend)
//   rts         RtsHeader (match info, size, sender's address)   rendezvous start
//   cts         CtsHeader: receiver matched, send `length` bytes as data fragments
//   data        DataHeader + fragment payload (pipelined copy)
//   fin         FinHeader: receiver pulled the data itself (CMA get) — sender done;
//               also after the last data fragment when the rts asked (fin_after_data)
//   push_data   DataHeader (receiver_req = the *sender's* id) + fragment of a pushed
//               rendezvous: the sender streams the message right after its rts
//               (path push) without waiting for a cts; the receiver places or stashes it
//   sync_ack    FinHeader: eager_sync matched — sender done
//
// Request ids are the sender's (or receiver's) own request addresses, echoed back
// verbatim; a request stays alive until every packet that names it has arrived.
#pragma once

#include <cstdint>

namespace sluice::proto {

enum class PacketType : uint8_t { eager = 1, eager_sync, rts, cts, data, fin, sync_ack, push_data };

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
  MatchHeader match;  // size32 unused
  uint64_t size;
  uint64_t sender_req;
  uint64_t sender_addr;  // buffer address in the sender, for get()
  RndvPath path;
  uint8_t sync;
  uint8_t fin_after_data;  // pipeline over a lending driver: the receiver sends fin once all
                           // data arrived (the sender's buffer is read until then)
  uint8_t pad[5];
};

struct CtsHeader {
  PacketType type;
  uint8_t pad[7];
  uint64_t sender_req;
  uint64_t receiver_req;
  uint64_t length;  // bytes the receiver wants (less than the message when truncated)
};

struct DataHeader {
  PacketType type;
  uint8_t pad[7];
  uint64_t receiver_req;
  uint64_t offset;
};

struct FinHeader {
  PacketType type;
  uint8_t pad[7];
  uint64_t sender_req;
};

}  // namespace sluice::proto
