// Wire headers of the one-sided protocol (puts, gets, remote atomics and active messages
// that the target's engine carries out when the driver cannot reach the target's memory
// itself). Every packet starts with a type from the rma range of first bytes
// (drivers::kRmaTypes, 0x40..0x7f). Little-endian, no compiler padding (static_asserted).
//
//   put          DataHeader + fragment: write at `offset` of the target's region `region`;
//                flags: last (the op's final fragment), ack (answer put_ack when last, or
//                at once on an error). A long active message's payload travels as puts
//                without ack, followed by its am packet (drivers are ordered).
//   put_ack      AckHeader: the op's fragments are in place (or `status` says why not)
//   get_req      GetHeader: read `length` bytes at `offset` of `region`
//   get_reply    DataHeader (offset = place in the origin's buffer) + fragment; `status`
//                set and no payload when the target refused the read
//   atomic_req   AtomicHeader: fetch-and-add / compare-and-swap / swap on 4 or 8 bytes
//   atomic_reply AtomicReply: the old value
//   am           AmHeader + payload: nargs 64-bit arguments, then (medium) the data; a
//                long one names the region and range its data was deposited at
//   fh_move      MoveHeader + nrelease then npin bucket addresses: a Firehose move (the
//                firehoses the origin stops mapping, the buckets of `region` it wants
//                pinned); sent just before the put / get_req that needed it
//                With kMoveInlinePut a small put travels inside it ([GASNet-Firehose]
//                3.2): after the lists, its offset (8 bytes) and inline_len data bytes,
//                written once the buckets are mapped; no put packet follows
//   fh_move_reply MoveHeader + the npin bucket addresses: pinned (status ok) or not; for an
//                inline put, put_status says whether it was written (the op completes)
//   rndv_pin     MoveHeader + npin bucket addresses of `region`: pin them for the op `op`
//                (the rendezvous strategies); its data is sent once the reply came
//   rndv_pin_reply MoveHeader: pinned (status ok) or not
//   rndv_release MoveHeader + npin bucket addresses: the op is over, drop its pins
//   key_req      KeyHeader (region): a driver that writes the target's memory itself but
//                needs it registered (libfabric's fi_write / fi_read) asks what the region is
//                before the origin's first access to it: the origin then checks every access
//                against the answer, so a forged or stretched key never reaches the provider
//   key_reply    KeyHeader: status ok with the region's base, length and the driver
//                domain's remote key (daddr, dkey); remote_access (no such region), or
//                kStatusPackets (not registrable there: keep the packets)
//   key_revoke   KeyHeader (region): the region was deregistered; the origin refuses
//                later accesses through it locally
//
// A put fragment or get_req with kFlagFirehose goes through firehoses: the target checks
// that the origin maps every bucket it touches and answers kStatusStale if not (a bucket
// whose memory changed since), so that the origin moves again.
//
// Byte layouts:
//   DataHeader   0 type | 1 flags | 2 status | 3 pad(5) | 8 op | 16 region | 24 offset   = 32
//   AckHeader    0 type | 1 flags | 2 status | 3 pad(5) | 8 op                          = 16
//   GetHeader    0 type | 1 flags | 2 pad(6) | 8 op | 16 region | 24 offset | 32 length          =
//   40 AtomicHeader 0 type | 1 op | 2 width | 3 pad(5) | 8 op id | 16 region | 24 offset |
//                32 operand | 40 compare                                              = 48
//   AtomicReply  0 type | 1 flags | 2 status | 3 pad(5) | 8 op | 16 result             = 24
//   AmHeader     0 type | 1 kind | 2 handler | 3 nargs | 4 flags | 5 pad(3) | 8 region |
//                16 offset | 24 length                                                = 32
//   MoveHeader   0 type | 1 status | 2 flags | 3 put_status | 4 nrelease | 8 npin |
//                12 inline_len | 16 op |
//                24 region | 32 sent (origin's clock, echoed)                         = 40
//   KeyHeader    0 type | 1 status | 2 pad(6) | 8 region | 16 base | 24 length |
//                32 daddr | 40 dkey                                                   = 48
// All fit in the 56 header bytes the tightest driver (a datagram driver under the reliability
// layer) leaves a protocol. Op ids are the origin's op addresses, echoed back verbatim; region ids
// are the target's, handed out in remote keys (RemoteKey::key), never reused.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sluice::proto::rma {

enum class RmaType : uint8_t {
  put = 0x40,
  put_ack,
  get_req,
  get_reply,
  atomic_req,
  atomic_reply,
  am,
  fh_move,
  fh_move_reply,
  rndv_pin,
  rndv_pin_reply,
  rndv_release,
  key_req,
  key_reply,
  key_revoke,
};

inline constexpr uint8_t kFlagLast = 1;      // put: the op's final fragment
inline constexpr uint8_t kFlagAck = 2;       // put: answer with put_ack
inline constexpr uint8_t kFlagReply = 1;     // am: a reply (from inside a handler)
inline constexpr uint8_t kFlagFirehose = 4;  // put, get_req: through firehoses
// A status (beside the Errc values) answering a firehose access to a bucket the origin does
// not map (any more): move again.
inline constexpr uint8_t kStatusStale = 0xf0;
// key_reply: the region cannot be registered in the driver's domain: use packets.
inline constexpr uint8_t kStatusPackets = 0xf1;
inline constexpr uint8_t kMoveInlinePut = 1;  // MoveHeader::flags
// Puts up to this size travel inside the move request their miss sends.
inline constexpr std::size_t kMaxInlinePut = 1024;

struct DataHeader {
  RmaType type;
  uint8_t flags;
  uint8_t status;  // an Errc
  uint8_t pad[5];
  uint64_t op;
  uint64_t region;
  uint64_t offset;
};
static_assert(sizeof(DataHeader) == 32);

struct AckHeader {
  RmaType type;
  uint8_t flags;
  uint8_t status;
  uint8_t pad[5];
  uint64_t op;
};
static_assert(sizeof(AckHeader) == 16);

struct GetHeader {
  RmaType type;
  uint8_t flags;
  uint8_t pad[6];
  uint64_t op;
  uint64_t region;
  uint64_t offset;
  uint64_t length;
};
static_assert(sizeof(GetHeader) == 40);

enum class AtomicOp : uint8_t { fetch_add = 0, compare_swap = 1, swap = 2 };

struct AtomicHeader {
  RmaType type;
  AtomicOp op;
  uint8_t width;  // 4 or 8
  uint8_t pad[5];
  uint64_t op_id;
  uint64_t region;
  uint64_t offset;
  uint64_t operand;
  uint64_t compare;
};
static_assert(sizeof(AtomicHeader) == 48);

struct AtomicReply {
  RmaType type;
  uint8_t flags;
  uint8_t status;
  uint8_t pad[5];
  uint64_t op;
  uint64_t result;
};
static_assert(sizeof(AtomicReply) == 24);

enum class AmKind : uint8_t { short_am = 0, medium = 1, long_am = 2 };

struct AmHeader {
  RmaType type;
  AmKind kind;
  uint8_t handler;
  uint8_t nargs;
  uint8_t flags;
  uint8_t pad[3];
  uint64_t region;  // long: where the data was deposited
  uint64_t offset;
  uint64_t length;  // long: data bytes; medium: data bytes after the arguments
};
static_assert(sizeof(AmHeader) == 32);

struct MoveHeader {
  RmaType type;
  uint8_t status;
  uint8_t flags;       // kMoveInlinePut
  uint8_t put_status;  // reply to an inline put: its own status (an Errc or kStatusStale)
  uint32_t nrelease;
  uint32_t npin;
  uint32_t inline_len;  // an inline put's data bytes
  uint64_t op;
  uint64_t region;
  uint64_t sent;
};
static_assert(sizeof(MoveHeader) == 40);

struct KeyHeader {
  RmaType type;
  uint8_t status;
  uint8_t pad[6];
  uint64_t region;
  uint64_t base;    // the owner's virtual address of the region's first byte
  uint64_t length;  // the region's bytes: every access is checked against it
  uint64_t daddr;   // the domain's address of the first byte (mem::RemoteKey::addr)
  uint64_t dkey;    // the domain's key (fi_mr_key)
};
static_assert(sizeof(KeyHeader) == 48);

inline constexpr std::size_t kMaxHeader = sizeof(AtomicHeader);
static_assert(sizeof(KeyHeader) <= kMaxHeader);

}  // namespace sluice::proto::rma
