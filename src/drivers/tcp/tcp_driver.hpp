// TCP driver: one connection per peer, opened lazily by the first packet sent to it
// (packets queue meanwhile). Reliable and ordered (the kernel's TCP), so the protocols run
// on it directly.
//
// Connection setup. Both sides may connect to each other at once; the connection opened
// by the LOWER rank wins: an acceptor that has its own connection to the peer under way
// (or up) refuses the hello of a higher-ranked peer by closing it, and drops its own
// connection for a lower-ranked peer's hello. A higher rank whose connection is refused
// before the hello_ack waits for the lower rank's (it must be on its way). Handshake: the
// initiator sends hello (its rank, job size, the 128-bit job key), the acceptor checks it
// and answers hello_ack with its own; only then does data flow to the initiator. A lower
// rank's connection is never refused, so its queued data follows its hello at once (one
// round trip less per connection); a higher rank's waits for the hello_ack. Anything else
// closes the connection and is counted (bad_key, malformed). Wire format: tcp_wire.hpp.
//
// I/O. Nonblocking sockets with TCP_NODELAY, one epoll set (listener + connections) that
// block() sleeps in. A packet to an idle connection goes out in one syscall: a small frame (up
// to 256 B) copied into one buffer and sent with send() (cheaper in the kernel than a sendmsg), a
// larger one with sendmsg (frame header, header, payload as three iovecs); whatever the kernel
// does not take is copied into the peer's output queue; while it is not empty, small packets
// append to it (a backlog leaves in one send per flush: several packets per syscall) and large
// ones get IoStatus::again, so a payload is copied at most once per full socket, not for every
// fragment. Input is read into one buffer per connection, as much as is there, and frames are
// delivered straight from it. Socket I/O goes through write_out() and read_in(), and through
// io_uring for zero-copy sends and registered receives (below).
//
// Receiving in place. A data frame of kPlaceMin (32 KiB) or more whose payload is not all in
// the input buffer yet is offered to the sink (PacketSink::placement: a rendezvous fragment's
// place in the receive buffer); if it names one, the rest of the payload is read straight
// there (start_direct), SO_RCVLOWAT set so that each read takes a worthwhile amount, and the
// payload handed up is that memory (placed, placed_bytes; the few bytes the buffer held
// already are copied over: placed_staged_bytes). After such a frame the connection reads only
// the next frame's headers first (`streaming`), so the next large payload lands in place
// whole; any other frame ends that, except, after a payload read by READ_FIXED, a lone
// payload-less one (the next message's rts / cts), so a run of registered receives has no
// byte staged. When the
// placement carries a registration in this driver's domain (the receiver registered its
// buffer under strategy cache or register, or it is MPI_Alloc_mem memory) and
// TcpParams::read_fixed, the payload is read with io_uring IORING_OP_READ_FIXED on the socket
// into that fixed buffer instead of recv(): the kernel copies from the socket into the pages
// the registration pinned, and no CPU copy in user space touches the payload
// (read_fixed.payloads, read_fixed.bytes). Each READ_FIXED carries RWF_NOWAIT, so it completes
// inside its submit (data there, or -EAGAIN) like the recv() it replaces and never stays in
// the kernel: a connection that fails, or a receive that ends, leaves nothing in flight. The
// driver keeps the registration's slot and range and checks before each read that the slot
// still holds them (the receiver's own handle keeps it for the frame); a registration not of
// this ring, or one the kernel refuses, falls back to recv() (read_fixed.fallbacks). The
// same consequence as for sends holds: a registration pins the pages it was made on, so a
// stale one (the buffer freed and mapped anew at the same address) receives into the old
// pages, and the application never sees the bytes: the receiver's registration cache must be
// invalidated when its buffers go (tests/netns/reg_stale.cpp proves it can fail).
//
// Zero-copy (TcpParams::zerocopy). A rendezvous fragment sent with send_tracked() from a
// buffer registered in the driver's memory domain (the uring domain: its pages pinned in
// an io_uring fixed-buffer table) leaves through io_uring: the frame and packet headers as
// a plain SEND linked to a SEND_ZC of the payload from the fixed buffer
// (IORING_RECVSEND_FIXED_BUF), both with MSG_WAITALL so the kernel sends all of it. The
// call returns posted; the send completes (PacketSink::on_completion) when the
// notification CQE says the kernel let go of the pages. While one is on the way to the
// socket, nothing else is written to that peer (small packets queue, large ones get
// again), which keeps the byte stream in order. `auto` uses it for peers reached over a
// real network only: to a loopback address the kernel copies anyway (the notification's
// IORING_NOTIF_USAGE_ZC_COPIED, counted as zerocopy.copied), and so it stops for a peer whose
// first kZcJudged notifications all say the kernel copied (veth, a route without
// scatter-gather: zerocopy.peers_off). The epoll path is unchanged and stays the path
// for everything else.
//
// Strangers. Until a connection has proven the job key (the acceptor checked the hello, the
// initiator the hello_ack) it is read at most one hello frame (40 B) at a time into a buffer
// of that size, and any frame but the handshake closes it (unproven_rejected): a frame header
// announcing a large payload costs nothing. At most handshake_limit accepted connections may
// be unproven at once (a new one closes the oldest, after a last look for its hello:
// unproven_evicted), each for handshake_timeout_ns (unproven_timed_out).
//
// Failure. EOF, reset or a write error on an established connection (without a prior bye)
// declares the peer dead: send() then returns IoStatus::failed, queued packets are
// dropped, and on_peer_dead tells the engine, which fails the peer's requests.
#pragma once

#include <netinet/in.h>
#include <atomic>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "drivers/driver.hpp"
#include "drivers/net/net.hpp"
#include "drivers/tcp/tcp_wire.hpp"
#include "mem/uring_domain.hpp"
#include "util/unique_fd.hpp"

namespace sluice::drivers {

enum class TcpZeroCopy : uint8_t {
  off,        // every payload goes through the socket's copy (epoll path only)
  on,         // registered rendezvous payloads leave by io_uring SEND_ZC; io_uring required
  automatic,  // like on where io_uring works, for peers not on a loopback address
};

struct TcpParams {
  int rank = 0;
  int size = 1;
  std::array<uint8_t, 16> key{};
  std::size_t max_packet = 512 * 1024;  // payload per frame (pipelined fragment size)
  std::size_t max_header = 256;         // upper-layer header per frame
  std::size_t queue_limit = 16u << 20;  // queued bytes per peer before send() says again
  std::size_t socket_buffer = 0;        // SO_SNDBUF / SO_RCVBUF, 0: kernel autotuning
  uint64_t connect_timeout_ns = 30'000'000'000;
  TcpZeroCopy zerocopy = TcpZeroCopy::off;
  std::size_t zerocopy_min = 32 * 1024;  // smaller tracked payloads are copied
  // Accepted connections that have not proven the job key yet: at most this many (the
  // oldest is closed to make room), each for at most handshake_timeout_ns.
  std::size_t handshake_limit = 256;
  uint64_t handshake_timeout_ns = 10'000'000'000;
  // Placed payloads whose placement names a registration of this driver's domain are read
  // with io_uring READ_FIXED into it (needs io_uring: zerocopy not off); false: recv().
  bool read_fixed = true;
  in_addr bind_addr{htonl(INADDR_ANY)};  // the listener's address (SLUICE_NET_IF / NET_ADDR)
  std::function<void(int peer)> on_peer_dead;
};

struct TcpStats {
  uint64_t sent = 0, sent_bytes = 0, received = 0, received_bytes = 0, placed = 0;
  uint64_t writes = 0, reads = 0, queued_bytes = 0, max_batch = 0;
  uint64_t connects = 0, accepts = 0, races_lost = 0, full = 0;
  uint64_t bad_key = 0, malformed = 0, peers_dead = 0, closed = 0;
  // Zero-copy: SEND_ZC submitted, their payload bytes, notifications that said the kernel
  // copied after all, tracked sends that took the copy path, peers switched off by `auto`.
  uint64_t zc_sends = 0, zc_bytes = 0, zc_copied = 0, zc_fallbacks = 0, zc_peers_off = 0;
  // Connections that had not proven the job key: closed for sending anything but the
  // handshake, closed to make room (handshake_limit), closed silent (handshake_timeout_ns);
  // the most open at once.
  uint64_t unproven_rejected = 0, unproven_evicted = 0, unproven_timed_out = 0;
  uint64_t unproven_peak = 0;
  // Receiving in place: payload bytes read straight into their placement (either way), and
  // those of them that had been read into the input buffer first and were copied over.
  uint64_t placed_bytes = 0, placed_staged_bytes = 0;
  // ... of which by READ_FIXED into the placement's registration: payloads, bytes, READ_FIXED
  // operations, and placements with a registration that went by recv() after all.
  uint64_t fixed_payloads = 0, fixed_bytes = 0, fixed_reads = 0, fixed_fallbacks = 0;
};

class TcpDriver final : public Driver {
 public:
  // Creates the listening socket (params.bind_addr, ephemeral port). Throws
  // std::runtime_error.
  explicit TcpDriver(TcpParams params);
  ~TcpDriver() override;
  TcpDriver(const TcpDriver&) = delete;
  TcpDriver& operator=(const TcpDriver&) = delete;

  uint16_t port() const { return port_; }
  // Where each peer listens (after the bootstrap exchange); a zero port: unreachable.
  void set_peer_address(int peer, const sockaddr_in& addr);
  std::string peer_address(int peer) const;

  std::string_view name() const override { return "tcp"; }
  const DriverCaps& caps() const override { return caps_; }
  bool reaches(int peer) const override;
  IoStatus send(int peer, std::span<const std::byte> header,
                std::span<const std::byte> payload) override;
  IoStatus send_tracked(int peer, std::span<const std::byte> header,
                        std::span<const std::byte> payload, const mem::Registration& reg,
                        CompletionToken token) override;
  mem::Domain& memory_domain() override;
  int poll(PacketSink& sink, int budget) override;
  bool block(uint64_t timeout_ns) override;
  void register_stats(util::StatsRegistry& reg, std::string_view component) const override;

  // Writes out queued bytes and says bye to every connected peer, waiting at most
  // `timeout_ns` for the kernel to take them (finalize). True when everything left.
  bool drain(uint64_t timeout_ns);
  const TcpStats& stats() const { return stats_; }
  bool peer_dead(int peer) const;
  // Whether zero-copy sends are available (io_uring with SEND_ZC), and the reason if not.
  bool zerocopy() const { return uring_ != nullptr; }
  const std::string& zerocopy_unavailable() const { return zc_why_; }
  // Whether placed payloads with a registration are read by io_uring READ_FIXED.
  bool read_fixed() const { return read_fixed_; }
  // Notifications per peer that `auto` judges (all copied: the peer goes back to copying).
  static constexpr uint32_t kZcJudged = 16;

 private:
  enum class ConnState : uint8_t { connecting, hello_sent, awaiting_hello, up, closing };
  struct Conn {
    util::UniqueFd fd;
    ConnState state = ConnState::connecting;
    int peer = -1;  // known for outgoing, after the hello for incoming
    bool outgoing = false;
    bool broken = false;        // to be closed at the end of this poll
    bool pending = false;       // holds unparsed complete frames (budget ran out)
    bool want_out = false;      // EPOLLOUT registered
    bool half_closed = false;   // drain(): our side shut down
    bool awaiting_ack = false;  // up before the peer's hello_ack (lower rank's connection)
    uint64_t since = 0;         // when it was opened (strangers that stay silent are dropped)
    std::vector<std::byte> in;
    std::size_t in_len = 0;
    // A large payload being received in place (PacketSink::placement): its packet header
    // and where the bytes go.
    std::vector<std::byte> direct_header;
    std::byte* direct_dest = nullptr;
    std::size_t direct_size = 0, direct_got = 0;
    // READ_FIXED into this fixed-buffer slot, registered as [fixed_base, + fixed_length),
    // or recv() (no slot). Kept weakly: the receiver's handle keeps the registration alive
    // for the frame, and each read checks the slot still holds that range.
    static constexpr uint64_t kNoSlot = ~uint64_t{0};
    uint64_t fixed_slot = kNoSlot;
    const std::byte* fixed_base = nullptr;
    std::size_t fixed_length = 0;
    std::size_t lowat = 1;      // SO_RCVLOWAT in force
    bool streaming = false;     // the last frame was received in place: expect another
    bool fixed_stream = false;  // ... by READ_FIXED: streaming survives a lone rts/cts/fin
  };
  enum class PeerState : uint8_t { idle, connecting, waiting, up, closed, dead };
  struct Peer {
    PeerState state = PeerState::idle;
    sockaddr_in addr{};
    Conn* conn = nullptr;        // the winning (or only) connection once up, else the attempt
    std::vector<std::byte> out;  // queued frames
    std::size_t out_off = 0;
    uint64_t deadline = 0;           // connecting / waiting: give up at
    uint64_t retry_at = 0;           // connecting without an attempt under way: try again at
    bool zc = false;                 // zero-copy sends to this peer
    bool zc_busy = false;            // a SEND_ZC is on its way into the socket: nothing else may go
    std::vector<std::byte> zc_head;  // frame + packet header of that send
    uint32_t zc_judged = 0;          // notifications seen (auto judges the first kZcJudged)
    uint32_t zc_copied = 0;          // ... of which the kernel copied
  };
  // One SEND_ZC in flight: its result CQE, then (IORING_CQE_F_MORE) the notification.
  struct ZcOp {
    CompletionToken token;
    int peer = -1;
    uint32_t len = 0;
    Errc status = Errc::ok;
    bool silent = false;  // the peer was declared dead: report nothing (the core failed it)
  };

  void start_connect(int peer);
  void on_connected(Conn& c);
  void accept_all(PacketSink& sink);
  void make_room(PacketSink& sink);  // at handshake_limit: close the oldest unproven conn
  void handle_events(Conn& c, uint32_t events, PacketSink& sink, int& delivered, int budget);
  bool read_in(Conn& c);  // false: EOF or error
  // One READ_FIXED of `len` bytes at `at` into c.fixed_slot's buffer, done within the call:
  // as recv() answers (bytes, 0 at EOF, -1 with errno).
  ssize_t read_into_fixed(Conn& c, std::byte* at, std::size_t len);
  bool write_out(Peer& p, Conn& c);  // flush the queue; false: error
  void process_input(Conn& c, PacketSink& sink, int& delivered, int budget);
  bool start_direct(Conn& c, std::size_t pos, PacketSink& sink);
  // The peer has shown the job key on this connection (its hello or hello_ack was checked).
  static bool proven(const Conn& c) {
    return (c.state == ConnState::up && !c.awaiting_ack) || c.state == ConnState::closing;
  }
  void set_lowat(Conn& c, std::size_t bytes);
  bool on_control(Conn& c, const tcp::Frame& f);  // false: close the connection
  void established(Peer& p, Conn& c);
  void conn_failed(Conn& c, bool eof);
  void declare_dead(int peer);
  void enqueue(Peer& p, std::span<const std::byte> a, std::span<const std::byte> b,
               std::span<const std::byte> c, std::size_t skip);
  bool send_hello(Conn& c, tcp::FrameType type);
  void set_want_out(Conn& c, bool on);
  void reap();
  void open_uring();
  // A tracked send that cannot go zero-copy: the copy path (counted when it went out).
  IoStatus copy_fallback(int peer, std::span<const std::byte> header,
                         std::span<const std::byte> payload);
  // Reads the ring's completions. Zero-copy sends that finished are reported to `sink`, or
  // (read_into_fixed, which has no sink) kept in zc_later_ for the next poll, or dropped (drain).
  enum class Report : uint8_t { now, later, drop };
  void reap_uring(PacketSink* sink, int& completed, Report report = Report::now);
  void finish_zc(uint32_t index, PacketSink* sink, int& completed, Report report);
  void check_timers();
  Conn* add_conn(int fd, bool outgoing, int peer);

  TcpParams params_;
  DriverCaps caps_;
  util::UniqueFd listen_fd_;
  util::UniqueFd epoll_fd_;
  uint16_t port_ = 0;
  std::vector<Peer> peers_;
  std::vector<std::unique_ptr<Conn>> conns_;
  std::vector<Conn*> up_;        // established connections
  std::vector<Conn*> pending_;   // conns holding complete frames the budget left
  std::vector<int> handshakes_;  // peers connecting or waiting (their timers run)
  int strangers_ = 0;            // accepted conns that have not said hello yet
  bool need_reap_ = false;
  uint64_t timer_polls_ = 0;
  // What block() may read: the progress thread calls it without the engine lock while the
  // application thread polls. poll() publishes them; block() never touches the containers
  // or runs timers, it asks the next poll() to (timers_owed_).
  std::atomic<bool> work_waiting_{false};  // frames held back by the budget (pending_)
  std::atomic<bool> handshaking_{false};   // peers connecting or waiting (handshakes_)
  std::atomic<bool> timers_owed_{false};
  uint64_t epoll_polls_ = 0;
  bool epoll_owed_ = false;  // the periodic epoll_wait is due
  TcpStats stats_;
  std::unique_ptr<mem::UringDomain> uring_;  // zero-copy: the domain and ring (null: off)
  std::string zc_why_;                       // why zero-copy is unavailable
  std::vector<ZcOp> zc_ops_;
  std::vector<uint32_t> zc_free_;
  uint32_t zc_inflight_ = 0;
  struct ZcLater {
    CompletionToken token;
    Errc status;
    int peer;
  };
  std::vector<ZcLater> zc_later_;  // finished while a READ_FIXED reaped (reported by poll)
  bool read_fixed_ = false;        // READ_FIXED for placements with our registration
  int read_res_ = 0;               // the READ_FIXED's result, once reaped
  bool read_reaped_ = false;
  char uring_tag_ = 0;  // epoll data for the ring's fd (CQEs ready wake block())
};

}  // namespace sluice::drivers
