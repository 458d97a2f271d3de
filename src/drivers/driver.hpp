// The driver contract: a driver moves opaque packets between processes and, when it can,
// reads a peer's memory directly (one-sided get). It never parses protocol headers.
//
// A packet is a (header, payload) pair. The driver keeps the split: the receiver's sink
// gets exactly the header bytes the sender gave, and the payload separately, so a
// protocol can send a fragment of user data without first gluing it to its header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "util/errc.hpp"

namespace sluice::drivers {

struct DriverCaps {
  std::size_t max_header = 0;      // largest header a packet may carry
  std::size_t max_packet = 0;      // largest payload in one packet
  std::size_t inline_payload = 0;  // payload bytes that travel with the header in one slot
  bool reliable = false;           // packets are never lost, duplicated or corrupted
  bool ordered = false;            // packets to one peer arrive in the order sent
  bool rdma_get = false;           // get() reads remote memory without the peer's help
  bool needs_registration = false;
  // send_lent() keeps reading the payload after it returns done, until the peer has
  // acknowledged the packet (it resends from it), and every packet the peer sends after
  // delivering ours carries that acknowledgement: once the peer's answer to the data has
  // been delivered, the payload is no longer read (the reliability layer; no copy kept).
  bool lends_payload = false;
  // Pipelined fragments go out at max_packet from the first one, without the protocol's
  // small-first ramp: a byte-stream driver that receives large payloads in place (tcp) copies
  // them out as the kernel hands them over, so a small first fragment only costs one more
  // frame and syscall on each side (and its staging copy).
  bool whole_fragments = false;
  // A rendezvous may be pushed (fragments sent right after the request, unasked): they wait
  // in receiver-side buffers the sender may fill (shm bulk slots). On a socket driver they
  // would sit in kernel buffers, which the socket protocols do not expect.
  bool takes_push = false;
};

enum class IoStatus {
  done,    // the packet is on its way; the caller's buffers may be reused
  again,   // no room right now (ring or slots full): retry after progress
  failed,  // the peer is unreachable
};

// One packet of a send_batch().
struct PacketRef {
  std::span<const std::byte> header;
  std::span<const std::byte> payload;
};

// Receives the packets a driver polls in.
class PacketSink {
 public:
  virtual void on_packet(int src, std::span<const std::byte> header,
                         std::span<const std::byte> payload) = 0;
  // Where the payload of a packet with this header should land, if the receiver already
  // knows (a rendezvous fragment: its place in the user's buffer); empty for no preference.
  // A driver that can receive straight into memory (tcp) may ask before the payload
  // arrives and then calls on_packet with `payload` being exactly the returned span.
  virtual std::span<std::byte> placement(int src, std::span<const std::byte> header,
                                         std::size_t payload_size) {
    return {};
  }

 protected:
  ~PacketSink() = default;
};

class Driver {
 public:
  virtual ~Driver() = default;
  virtual std::string_view name() const = 0;
  virtual const DriverCaps& caps() const = 0;
  // Whether this driver can reach `peer` (world rank).
  virtual bool reaches(int peer) const = 0;

  virtual IoStatus send(int peer, std::span<const std::byte> header,
                        std::span<const std::byte> payload) = 0;
  // Like send(), but with caps().lends_payload the payload stays the caller's and is read
  // until the peer acknowledges it (see DriverCaps); other drivers copy as send() does.
  virtual IoStatus send_lent(int peer, std::span<const std::byte> header,
                             std::span<const std::byte> payload) {
    return send(peer, header, payload);
  }
  // Sends `packets` to `peer` in order, each as send() would (the buffers may be reused on
  // return); `sent` tells how many went out, a prefix. Returns done when all did, else the
  // status of the first that did not. A driver may coalesce them (udp: one GSO sendmsg).
  virtual IoStatus send_batch(int peer, std::span<const PacketRef> packets, std::size_t& sent) {
    for (sent = 0; sent < packets.size(); ++sent) {
      const IoStatus s = send(peer, packets[sent].header, packets[sent].payload);
      if (s != IoStatus::done) return s;
    }
    return IoStatus::done;
  }
  // Deliver up to `budget` arrived packets to `sink`; returns how many.
  virtual int poll(PacketSink& sink, int budget) = 0;

  // One-sided read of `local.size()` bytes at `remote_addr` in `peer`'s address space.
  virtual Errc get(int peer, std::span<std::byte> local, std::uint64_t remote_addr) {
    return Errc::invalid_argument;
  }
  // Sleep until a peer hands us work or `timeout_ns` passes. Returns false if this driver
  // cannot block (the caller then sleeps for a while instead).
  virtual bool block(std::uint64_t timeout_ns) { return false; }
  // One line of counters for statistics reports.
  virtual std::string stats_text() const { return {}; }
};

}  // namespace sluice::drivers
