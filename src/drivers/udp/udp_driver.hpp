// UDP driver: connectionless and unreliable (the engine stacks proto/reliable on it).
//
// Receiving: one socket per process, bound to INADDR_ANY (or the configured address), with a fixed
// pool of receive buffers filled by recvmmsg (as many datagrams as the previous call found,
// doubling while batches come back full); kernel drops (SO_MEMINFO, read on demand) and malformed
// datagrams are counted. UDP_GRO reads are split at the segment size.
// Sending: K send sockets (bound to the configured address, if any) used round-robin
// ([OpenMPI-UD]'s send queues), one sendmsg per packet with driver header, packet header and
// payload as separate iovecs (no copy); each send socket is connect()ed to the first peer it sends
// to, so the socket count stays K whatever the number of peers. A full socket answers
// IoStatus::again. send_batch() sends a run of packets to one peer as one UDP_SEGMENT (GSO)
// sendmsg; a kernel or route that refuses it turns GSO off for good. Datagram size: up to ~64 KiB
// on loopback, the path MTU otherwise (path_mtu()); larger messages are fragmented by the protocol
// layer (caps().max_packet). Connected pair (2-process jobs): the receive socket is connect()ed to
// the peer and carries everything (the kernel's early demux then skips a route lookup per
// datagram); an unconnected SO_REUSEPORT twin catches strangers and early datagrams. All socket I/O
// is in send(), send_batch() and receive_batch(), and in send_tracked() for zero-copy (below).
// Design and limits: docs/drivers/udp.md; measured choices: docs/PERFORMANCE.md.
//
// Zero-copy (UdpParams::zerocopy). A tracked send (the reliability layer's transmission of a
// rendezvous fragment) whose payload lies in a registration of this driver's memory domain
// (the uring domain: pages pinned in an io_uring fixed-buffer table) leaves through io_uring:
// the driver and packet headers as a SEND with MSG_MORE (the socket corks them), linked to a
// SEND_ZC of the payload from the fixed buffer, which completes the datagram. The call returns
// posted; on_completion(token) follows once the notification says the kernel let go of the
// pages (after the send's own result: a failed send is reported the same way, status
// internal; the reliability layer resends it). One such pair is in a socket at a time: until
// its result is in, the socket takes nothing else (the pair socket's regular sends use a send
// socket meanwhile). Sockets: the connected pair socket for the pair peer, else one socket per
// peer connected to it, made on first use. `auto` uses zero-copy only for peers not on a
// loopback address, and judges each peer by its first kZcJudged notifications: if the kernel
// copied every one (veth, loopback, no scatter-gather: SO_EE_CODE_ZEROCOPY_COPIED), that peer
// goes back to the copy path (zerocopy.peers_off).
//
// Receiving in place, and why not into registered memory. Once large datagrams stream in
// (kPlaceMin), each one's headers are peeked at (recvmsg MSG_PEEK into a small buffer), the
// sink names the payload's place (PacketSink::placement, through the reliability layer), and
// one recvmsg scatters the datagram: headers into the small buffer, payload straight into the
// destination (placed, placed_bytes): the kernel's one copy, none in user space. A
// registration the placement carries is NOT used, because no io_uring fixed-buffer receive can
// split a datagram between its headers and registered memory (probed on a UDP socket, kernel
// 6.18): IORING_OP_RECV and RECVMSG with IORING_RECVSEND_FIXED_BUF fail with -EINVAL
// (registered buffers are a send-side option there); IORING_OP_READ_FIXED reads the whole
// datagram, Sluice's headers first, into the one fixed buffer, so the headers would land on
// the destination's first bytes (or, read at an offset before it, on bytes that are not the
// fragment's); IORING_OP_READV_FIXED (6.15) splits a datagram only when every iovec lies in the
// same registered buffer (a header iovec outside it: -EFAULT), so the headers would again
// overwrite registered user memory; and zero-copy receive (RECV_ZC) needs a NIC queue with
// header split bound to the ring as a zcrx queue, and serves TCP only. So over udp
// the receive buffer's registration moves no byte: a stale one cannot corrupt a receive
// (tests/netns reg_stale_unsafe_recv.udp.h2 shows none arrives without invalidation), and the
// pinning it costs buys nothing there.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "drivers/driver.hpp"
#include "drivers/net/net.hpp"
#include "drivers/udp/udp_wire.hpp"
#include "mem/uring_domain.hpp"
#include "util/unique_fd.hpp"

namespace sluice::drivers {

enum class UdpZeroCopy : uint8_t {
  off,        // every payload is copied by sendmsg
  on,         // registered fragments leave by io_uring SEND_ZC; io_uring required
  automatic,  // like on where io_uring works, for peers not on a loopback address, while the
              // kernel does not copy every zero-copy send to them
};

struct UdpParams {
  int rank = 0;
  int size = 1;
  std::size_t datagram = 1472;           // bytes per datagram sent, driver header included
  std::size_t rx_datagram = 1472;        // receive buffer per datagram (>= any peer's datagram)
  std::size_t max_header = 112;          // packet header per datagram
  std::size_t rx_buffers = 64;           // receive pool (datagrams)
  std::size_t send_sockets = 4;          // K
  std::size_t socket_buffer = 8u << 20;  // SO_RCVBUF / SO_SNDBUF wanted (forced if allowed)
  bool gso = true;                       // send_batch() as UDP_SEGMENT sends
  bool gro = true;                       // UDP_GRO on the receive socket (64 KiB buffers)
  bool connect_pair = true;              // size == 2: one socket connected to the peer
  in_addr bind_addr{htonl(INADDR_ANY)};  // every socket's address (SLUICE_NET_IF / NET_ADDR)
  UdpZeroCopy zerocopy = UdpZeroCopy::off;
  std::size_t zerocopy_min = 16 * 1024;  // smaller tracked payloads are copied
};

struct UdpStats {
  uint64_t sent = 0, sent_bytes = 0, received = 0, received_bytes = 0;
  uint64_t send_again = 0, send_errors = 0, batches = 0, malformed = 0, kernel_drops = 0;
  uint64_t sent_connected = 0;  // of `sent`: over a send socket connected to the peer
  uint64_t placed = 0;          // of `received`: payload read straight into its placement
  uint64_t placed_bytes = 0;    // ... their payload bytes
  uint64_t gso_sends = 0;       // sendmsg calls carrying several datagrams (UDP_SEGMENT)
  uint64_t gso_segments = 0;    // of `sent`: datagrams that went out in those
  uint64_t gro_reads = 0;       // reads that returned several coalesced datagrams
  uint64_t gro_segments = 0;    // of `received`: datagrams that came in those
  uint64_t stray = 0;           // of `received` + `malformed`: read from the unconnected socket
  // Zero-copy: SEND_ZC submitted, their payload bytes, notifications that said the kernel
  // copied after all, tracked sends from registered memory that took the copy path, peers
  // switched off by `auto`.
  uint64_t zc_sends = 0, zc_bytes = 0, zc_copied = 0, zc_fallbacks = 0, zc_peers_off = 0;
};

class UdpDriver final : public Driver {
 public:
  // Creates and binds the sockets. Throws std::runtime_error.
  explicit UdpDriver(UdpParams params);
  ~UdpDriver() override;
  UdpDriver(const UdpDriver&) = delete;
  UdpDriver& operator=(const UdpDriver&) = delete;

  uint16_t port() const { return port_; }
  void set_peer_address(int peer, const sockaddr_in& addr);
  std::string peer_address(int peer) const;
  // The route MTU towards `addr` (IP_MTU of a connected probe socket), 0 if unknown.
  static std::size_t path_mtu(const sockaddr_in& addr);
  // Bytes per datagram sent (<= rx_datagram); before anything is sent, as caps change.
  void set_datagram(std::size_t bytes);

  std::string_view name() const override { return "udp"; }
  const DriverCaps& caps() const override { return caps_; }
  bool reaches(int peer) const override;
  IoStatus send(int peer, std::span<const std::byte> header,
                std::span<const std::byte> payload) override;
  IoStatus send_batch(int peer, std::span<const PacketRef> packets, std::size_t& sent) override;
  // Zero-copy from `reg` (see above): posted, or the copy path's answer.
  IoStatus send_tracked(int peer, std::span<const std::byte> header,
                        std::span<const std::byte> payload, const mem::Registration& reg,
                        CompletionToken token) override;
  // Under the zero-copy minimum, without io_uring, or for a peer `auto` switched off: no.
  bool lends(int peer, std::size_t bytes) const override;
  // A peer on a loopback address: datagrams go memory to memory.
  bool intact(int peer) const override;
  mem::Domain& memory_domain() override;
  int poll(PacketSink& sink, int budget) override;
  bool block(uint64_t timeout_ns) override;
  void register_stats(util::StatsRegistry& reg, std::string_view component) const override;
  const UdpStats& stats() const;  // refreshes kernel_drops
  std::size_t receive_buffer_bytes() const { return rcvbuf_; }
  bool gso() const { return gso_; }
  bool gro() const { return gro_; }
  bool paired() const { return pair_peer_ >= 0; }
  // Whether zero-copy sends are available (io_uring with SEND_ZC), and the reason if not.
  bool zerocopy() const { return uring_ != nullptr; }
  const std::string& zerocopy_unavailable() const { return zc_why_; }
  // Notifications per peer that `auto` judges (all copied: the peer goes back to copying).
  static constexpr uint32_t kZcJudged = 16;

 private:
  int receive_batch(int max);
  int receive_stray(PacketSink& sink, int budget);  // connected pair: the unconnected socket
  // The next send socket round-robin (connected to `peer` if it is free); sets mh's address
  // unless the socket is connected to `peer`.
  int pick_socket(int peer, msghdr& mh, bool& connected);
  void reset_pool();
  enum class Placed : uint8_t { nothing, done, fallback };
  Placed receive_placed(PacketSink& sink);
  static std::size_t gro_segment(msghdr& mh);  // the UDP_GRO stride of a read, 0: none
  bool valid_packet(int peer, const PacketRef& p) const;
  // One datagram of a read (a whole read, or one segment of a coalesced one) to the sink.
  bool deliver(std::span<const std::byte> bytes, PacketSink& sink);
  void open_uring();
  int zc_socket(int peer);  // the socket zero-copy sends to `peer` go through, -1: none
  // Reads the ring's completions; finished operations' tokens go to zc_done_.
  void reap_uring();
  void finish_zc(uint32_t index);

  // Zero-copy state of one peer.
  struct ZcPeer {
    bool on = false;      // zero-copy sends to this peer
    bool busy = false;    // a header + SEND_ZC pair is in its socket: nothing else may go
    uint32_t judged = 0;  // notifications seen (auto judges the first kZcJudged)
    uint32_t copied = 0;  // ... of which the kernel copied
    util::UniqueFd fd;    // its own socket (not the pair peer: rx_)
  };
  // One header + SEND_ZC pair in flight: its result CQE, then (IORING_CQE_F_MORE) the
  // notification.
  struct ZcOp {
    CompletionToken token;
    int peer = -1;
    uint32_t len = 0;
    Errc status = Errc::ok;
  };

  UdpParams params_;
  DriverCaps caps_;
  util::UniqueFd rx_;
  util::UniqueFd stray_;     // connected pair: shares rx_'s port, unconnected (else empty)
  int pair_peer_ = -1;       // connected pair: the peer rx_ is connected to, -1: none
  uint32_t stray_tick_ = 0;  // polls since stray_ was last read
  uint32_t stray_hot_ = 0;   // polls left that read stray_ every time
  std::vector<util::UniqueFd> tx_;
  std::vector<int> tx_peer_;  // the peer each send socket is connected to, -1: none
  std::size_t next_tx_ = 0;
  uint16_t port_ = 0;
  std::size_t rcvbuf_ = 0;
  std::vector<sockaddr_in> peers_;
  // The receive pool: rx_buffers datagram buffers, their iovecs and headers.
  std::vector<std::byte> pool_;
  std::vector<iovec> iov_;
  std::vector<mmsghdr> msgs_;
  std::vector<std::byte> control_;  // gro: UDP_GRO cmsg space per pool entry
  std::size_t dirty_count_ = 0;     // pool entries the last recvmmsg filled
  std::size_t batch_ = 1;           // datagrams to ask the next recvmmsg for
  // Large datagrams (a rendezvous stream) are peeked at first, so that the payload of one
  // whose destination the sink knows is read straight there (no copy out of the pool).
  // Entered on a large datagram, left on a small one: small-message latency never peeks.
  bool placing_ = false;
  std::vector<std::byte> peek_;  // UdpHeader + max_header
  bool gso_ = false;
  bool gro_ = false;
  std::vector<iovec> gso_iov_;  // send_batch's iovecs and driver headers (one per segment)
  std::vector<udp::UdpHeader> gso_hdr_;
  mutable UdpStats stats_;  // mutable: kernel_drops is read from the socket on demand
  std::unique_ptr<mem::UringDomain> uring_;  // zero-copy: the domain and its ring (null: off)
  std::string zc_why_;                       // why zero-copy is unavailable
  std::vector<ZcPeer> zc_peers_;
  std::vector<ZcOp> zc_ops_;
  std::vector<uint32_t> zc_free_;
  std::vector<std::byte> zc_heads_;  // per operation: its UdpHeader + packet header
  std::size_t zc_head_stride_ = 0;
  uint32_t zc_inflight_ = 0;
  bool zc_pair_busy_ = false;  // rx_ holds a corked header: regular sends avoid it
  struct ZcDone {
    CompletionToken token;
    Errc status;
  };
  std::vector<ZcDone> zc_done_;  // finished, reported by the next poll
};

}  // namespace sluice::drivers
