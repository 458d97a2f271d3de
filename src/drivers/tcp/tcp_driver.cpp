#include "drivers/tcp/tcp_driver.hpp"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "util/log.hpp"
// (liburing comes with mem/uring_domain.hpp, through tcp_driver.hpp.)
#include "util/stats.hpp"

namespace sluice::drivers {

namespace {

// Input buffer per connection: small at first (most peers only ever exchange a handshake
// and small messages; 256 KiB for each cost ~265 KiB RSS per peer, zeroed at connect time),
// doubled whenever a read fills it, up to kMaxInput (bulk payloads are received in place).
constexpr std::size_t kMinInput = 4 * 1024;
constexpr std::size_t kMaxInput = 256 * 1024;
// A backlogged connection copies payloads up to kCopyLimit into its queue; larger ones wait
// (IoStatus::again) instead of being copied.
constexpr std::size_t kCopyLimit = 16 * 1024;
constexpr std::size_t kPlaceMin = 32 * 1024;  // frames from this size are received in place
constexpr std::size_t kSmallFrame = 256;      // frames up to this size leave in one send()
constexpr std::size_t kLowat = 128 * 1024;    // bytes worth a recv during an in-place receive
constexpr std::size_t kDirectPoll = 8;        // up to this many connections: recv each
                                              // instead of asking epoll first
constexpr uint64_t kRetryNs = 20'000'000;     // between connect attempts
// All a connection may be read before it proved the job key: one hello frame.
constexpr std::size_t kHelloFrame = sizeof(tcp::FrameHeader) + sizeof(tcp::Hello);

// Newer than some liburing headers (kernel 6.2 ABI).
#ifndef IORING_SEND_ZC_REPORT_USAGE
#define IORING_SEND_ZC_REPORT_USAGE (1U << 3)
#endif
#ifndef IORING_NOTIF_USAGE_ZC_COPIED
#define IORING_NOTIF_USAGE_ZC_COPIED (1U << 31)
#endif

// io_uring user_data: what a CQE belongs to (kind << 32 | index).
constexpr uint64_t kCqeHead = 1;  // the headers' SEND (index: peer); only failures post
constexpr uint64_t kCqeZc = 2;    // a SEND_ZC (index: its ZcOp)
constexpr uint64_t kCqeRead = 3;  // a READ_FIXED into a placement (always reaped at once)
constexpr uint32_t kMaxZcOps = 128;

bool loopback_address(const sockaddr_in& a) {
  return (ntohl(a.sin_addr.s_addr) >> 24) == 127;
}

void tune_socket(int fd, std::size_t buf) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (buf) {
    int b = static_cast<int>(buf);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &b, sizeof b);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &b, sizeof b);
  }
}

}  // namespace

TcpDriver::TcpDriver(TcpParams params) : params_(std::move(params)) {
  caps_.max_header = std::min<std::size_t>(params_.max_header, 0xFFFF);
  caps_.max_packet = params_.max_packet;
  caps_.inline_payload = params_.max_packet;
  caps_.reliable = caps_.ordered = true;
  caps_.whole_fragments = true;  // large payloads are received in place (start_direct)
  peers_.resize(static_cast<std::size_t>(params_.size));

  listen_fd_ = util::UniqueFd(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listen_fd_) throw std::runtime_error(std::string("tcp: socket: ") + std::strerror(errno));
  int one = 1;
  setsockopt(listen_fd_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr = params_.bind_addr;
  if (bind(listen_fd_.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
      listen(listen_fd_.get(), 1024) != 0)
    throw std::runtime_error("tcp: bind/listen on " + net::to_string(sa) + ": " +
                             std::strerror(errno));
  socklen_t len = sizeof sa;
  getsockname(listen_fd_.get(), reinterpret_cast<sockaddr*>(&sa), &len);
  port_ = ntohs(sa.sin_port);

  epoll_fd_ = util::UniqueFd(epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_fd_) throw std::runtime_error(std::string("tcp: epoll: ") + std::strerror(errno));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;  // the listener
  epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, listen_fd_.get(), &ev);
  if (params_.zerocopy != TcpZeroCopy::off) open_uring();
}

TcpDriver::~TcpDriver() = default;

void TcpDriver::open_uring() {
  std::string why;
  auto domain = net::open_send_zc_domain(2 * kMaxZcOps, why);
  if (!domain) {
    zc_why_ = why;
    if (params_.zerocopy == TcpZeroCopy::on)
      throw std::runtime_error("tcp: SLUICE_TCP_ZEROCOPY=on, but " + why);
    util::log(util::LogLevel::info, "tcp: zero-copy sends off: %s", why.c_str());
    return;
  }
  uring_ = std::move(domain);
  read_fixed_ = params_.read_fixed;
  zc_later_.reserve(kMaxZcOps);  // a reap never allocates
  zc_ops_.resize(kMaxZcOps);
  for (uint32_t i = kMaxZcOps; i-- > 0;) zc_free_.push_back(i);
  // The ring's fd is readable while CQEs wait: block() wakes for notifications too.
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = &uring_tag_;
  epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, uring_->ring().ring_fd, &ev);
}

mem::Domain& TcpDriver::memory_domain() {
  // (auto with only loopback peers registers nothing: host memory, as without io_uring)
  return caps_.needs_registration ? static_cast<mem::Domain&>(*uring_) : mem::host_domain();
}

void TcpDriver::set_peer_address(int peer, const sockaddr_in& addr) {
  Peer& p = peers_.at(static_cast<std::size_t>(peer));
  p.addr = addr;
  p.zc = uring_ && (params_.zerocopy == TcpZeroCopy::on || !loopback_address(addr));
  if (p.zc) caps_.needs_registration = caps_.lends_payload = true;
}

std::string TcpDriver::peer_address(int peer) const {
  return net::to_string(peers_.at(static_cast<std::size_t>(peer)).addr);
}

bool TcpDriver::reaches(int peer) const {
  return peer >= 0 && peer < params_.size && peer != params_.rank &&
         peers_[static_cast<std::size_t>(peer)].addr.sin_port != 0;
}

bool TcpDriver::peer_dead(int peer) const {
  return peers_.at(static_cast<std::size_t>(peer)).state == PeerState::dead;
}

TcpDriver::Conn* TcpDriver::add_conn(int fd, bool outgoing, int peer) {
  auto c = std::make_unique<Conn>();
  c->fd = util::UniqueFd(fd);
  c->outgoing = outgoing;
  c->peer = peer;
  c->since = net::monotonic_ns();
  c->state = outgoing ? ConnState::connecting : ConnState::awaiting_hello;
  epoll_event ev{};
  ev.events = EPOLLIN | (outgoing ? EPOLLOUT : 0u);
  c->want_out = outgoing;
  ev.data.ptr = c.get();
  epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &ev);
  conns_.push_back(std::move(c));
  return conns_.back().get();
}

void TcpDriver::set_want_out(Conn& c, bool on) {
  if (c.want_out == on || c.broken) return;
  c.want_out = on;
  epoll_event ev{};
  ev.events = EPOLLIN | (on ? EPOLLOUT : 0u);
  ev.data.ptr = &c;
  epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, c.fd.get(), &ev);
}

void TcpDriver::start_connect(int peer) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (p.deadline == 0) p.deadline = net::monotonic_ns() + params_.connect_timeout_ns;
  p.state = PeerState::connecting;
  if (std::find(handshakes_.begin(), handshakes_.end(), peer) == handshakes_.end())
    handshakes_.push_back(peer);
  handshaking_.store(true, std::memory_order_release);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    p.retry_at = net::monotonic_ns() + kRetryNs;
    return;
  }
  tune_socket(fd, params_.socket_buffer);
  Conn* c = add_conn(fd, true, peer);
  p.conn = c;
  ++stats_.connects;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&p.addr), sizeof p.addr) == 0) {
    on_connected(*c);
  } else if (errno != EINPROGRESS) {
    conn_failed(*c, false);
  }
}

void TcpDriver::on_connected(Conn& c) {
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(c.fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0 || !send_hello(c, tcp::FrameType::hello)) {
    conn_failed(c, false);
    return;
  }
  c.state = ConnState::hello_sent;
  set_want_out(c, false);
  // The lower rank's connection always wins a race, so the peer never refuses it: its
  // queued packets follow the hello at once instead of a round trip later (under
  // oversubscription each round trip waits for both processes to be scheduled). The
  // hello_ack must still come first on the stream and carry the key (awaiting_ack).
  if (c.peer > params_.rank) {
    c.awaiting_ack = true;
    established(peers_[static_cast<std::size_t>(c.peer)], c);
  }
}

bool TcpDriver::send_hello(Conn& c, tcp::FrameType type) {
  struct {
    tcp::FrameHeader h;
    tcp::Hello hello;
  } msg{};
  msg.h.payload_len = sizeof(tcp::Hello);
  msg.h.type = type;
  msg.hello.rank = params_.rank;
  msg.hello.size = params_.size;
  std::memcpy(msg.hello.key, params_.key.data(), 16);
  // A fresh socket always takes 40 bytes; anything less is a broken connection.
  return ::send(c.fd.get(), &msg, sizeof msg, MSG_NOSIGNAL | MSG_DONTWAIT) ==
         static_cast<ssize_t>(sizeof msg);
}

void TcpDriver::accept_all(PacketSink& sink) {
  for (;;) {
    int fd = accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a connection that died in the backlog
    if (static_cast<std::size_t>(strangers_) >= params_.handshake_limit) make_room(sink);
    tune_socket(fd, params_.socket_buffer);
    add_conn(fd, false, -1);
    ++stats_.accepts;
    ++strangers_;
    stats_.unproven_peak = std::max(stats_.unproven_peak, static_cast<uint64_t>(strangers_));
  }
}

void TcpDriver::make_room(PacketSink& sink) {
  // conns_ is in accept order: the first one still waiting for its hello is the oldest.
  // A peer's hello may be sitting in its socket unread: read it first (that is at most the
  // hello frame, nothing is delivered), and close the connection only if it is still silent.
  for (auto& c : conns_) {
    if (c->broken || c->state != ConnState::awaiting_hello) continue;
    int delivered = 0;
    handle_events(*c, EPOLLIN, sink, delivered, 0);
    if (!c->broken && c->state == ConnState::awaiting_hello) {
      ++stats_.unproven_evicted;
      conn_failed(*c, false);
    }
    if (static_cast<std::size_t>(strangers_) < params_.handshake_limit) return;
  }
}

void TcpDriver::established(Peer& p, Conn& c) {
  c.state = ConnState::up;
  p.conn = &c;
  p.state = PeerState::up;
  p.deadline = 0;
  up_.push_back(&c);
  if (p.out_off < p.out.size() && !write_out(p, c)) conn_failed(c, false);
}

bool TcpDriver::on_control(Conn& c, const tcp::Frame& f) {
  tcp::Hello h;
  switch (f.type) {
    case tcp::FrameType::hello: {
      if (c.outgoing || c.state != ConnState::awaiting_hello) break;
      if (!tcp::parse_hello(f.payload, params_.size, h) || h.rank == params_.rank) break;
      if (std::memcmp(h.key, params_.key.data(), 16) != 0) {
        ++stats_.bad_key;
        return false;
      }
      --strangers_;
      c.state = ConnState::connecting;  // no longer a stranger; not up yet
      Peer& p = peers_[static_cast<std::size_t>(h.rank)];
      if (p.state == PeerState::dead || p.state == PeerState::closed || p.state == PeerState::up)
        return false;
      if (p.conn) {
        // Both sides connected at once: the lower rank's connection wins.
        if (h.rank > params_.rank) return false;
        Conn* mine = p.conn;
        p.conn = nullptr;
        mine->peer = -1;
        conn_failed(*mine, false);
        ++stats_.races_lost;
      }
      c.peer = h.rank;
      if (p.deadline == 0) p.deadline = net::monotonic_ns() + params_.connect_timeout_ns;
      if (!send_hello(c, tcp::FrameType::hello_ack)) return false;
      established(p, c);
      return true;
    }
    case tcp::FrameType::hello_ack: {
      const bool optimistic = c.state == ConnState::up && c.awaiting_ack;
      if (!c.outgoing || (c.state != ConnState::hello_sent && !optimistic)) break;
      if (!tcp::parse_hello(f.payload, params_.size, h) || h.rank != c.peer) break;
      if (std::memcmp(h.key, params_.key.data(), 16) != 0) {
        ++stats_.bad_key;
        return false;
      }
      c.awaiting_ack = false;
      if (!optimistic) established(peers_[static_cast<std::size_t>(c.peer)], c);
      return true;
    }
    case tcp::FrameType::bye:
      if (c.state != ConnState::up) break;
      c.state = ConnState::closing;
      peers_[static_cast<std::size_t>(c.peer)].state = PeerState::closed;
      return true;
    case tcp::FrameType::data:
      break;
  }
  ++stats_.malformed;
  return false;
}

ssize_t TcpDriver::read_into_fixed(Conn& c, std::byte* at, std::size_t len) {
  io_uring& ring = uring_->ring();
  io_uring_sqe* sqe = io_uring_get_sqe(&ring);
  if (!sqe) {  // (never: every call submits what it prepared)
    errno = EAGAIN;
    return -1;
  }
  len = std::min<std::size_t>(len, 1u << 30);
  io_uring_prep_read_fixed(sqe, c.fd.get(), at, static_cast<unsigned>(len), 0,
                           static_cast<int>(c.fixed_slot));
  // Completes inside the submit: with the bytes there, or -EAGAIN rather than waiting in the
  // kernel for them (poll() asks the socket first, as before a recv()).
  sqe->rw_flags = RWF_NOWAIT;
  sqe->user_data = kCqeRead << 32;
  read_reaped_ = false;
  if (const int rc = io_uring_submit(&ring); rc < 0) {
    errno = -rc;
    return -1;
  }
  int ignored = 0;
  for (int spins = 0;; ++spins) {
    reap_uring(nullptr, ignored, Report::later);
    if (read_reaped_) break;
    io_uring_cqe* cqe;  // (RWF_NOWAIT: its CQE is posted before the submit returns)
    if (spins == 0) continue;
    if (const int rc = io_uring_wait_cqe(&ring, &cqe); rc < 0 && rc != -EINTR) {
      errno = -rc;
      return -1;
    }
  }
  ++stats_.fixed_reads;
  if (read_res_ < 0) {
    errno = -read_res_;
    return -1;
  }
  stats_.fixed_bytes += static_cast<std::size_t>(read_res_);
  return read_res_;
}

bool TcpDriver::read_in(Conn& c) {
  if (c.direct_size) {
    // A large payload goes straight to where the protocol wants it (no staging copy): into
    // its registration by READ_FIXED, or by recv().
    std::byte* at = c.direct_dest + c.direct_got;
    const std::size_t len = c.direct_size - c.direct_got;
    ssize_t n = -1;
    if (c.fixed_slot != Conn::kNoSlot) {
      // The slot must still hold the range the placement named (a weak reference).
      if (uring_->holds(c.fixed_slot, c.fixed_base, c.fixed_length)) {
        n = read_into_fixed(c, at, len);
      } else {
        errno = EFAULT;
      }
      if (n < 0 && (errno == EFAULT || errno == EINVAL || errno == EOPNOTSUPP || errno == ESPIPE ||
                    errno == EBADF)) {
        // The slot changed, or the kernel refused the fixed buffer or the operation: this
        // payload goes by recv(), and READ_FIXED stays off unless it was the buffer (EFAULT).
        ++stats_.fixed_fallbacks;
        if (errno != EFAULT) {
          util::log(util::LogLevel::info, "tcp: READ_FIXED refused (%s): receiving by recv()",
                    std::strerror(errno));
          read_fixed_ = false;
        }
        c.fixed_slot = Conn::kNoSlot;
      }
    }
    if (c.fixed_slot == Conn::kNoSlot) n = ::recv(c.fd.get(), at, len, 0);
    ++stats_.reads;
    if (n > 0) {
      c.direct_got += static_cast<std::size_t>(n);
      const std::size_t left = c.direct_size - c.direct_got;
      set_lowat(c, left ? std::min(left, kLowat) : 1);
      return true;
    }
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
  }
  // Before the key is proven, room for the hello frame only (strangers cost 40 bytes).
  const bool trusted = proven(c);
  if (c.in.size() < (trusted ? kMinInput : kHelloFrame))
    c.in.resize(trusted ? kMinInput : kHelloFrame);
  if (c.in_len == c.in.size()) return true;  // full of frames the budget left: no room yet
  const std::size_t room = c.in.size() - c.in_len;
  std::size_t want = room;
  // Streaming large frames: read just the next frame's headers, so its payload is not
  // staged here and copied again, but received in place (start_direct).
  if (c.streaming && c.in_len == 0)
    want = std::min(want, sizeof(tcp::FrameHeader) + caps_.max_header);
  const ssize_t n = ::recv(c.fd.get(), c.in.data() + c.in_len, want, 0);
  ++stats_.reads;
  if (n > 0) {
    c.in_len += static_cast<std::size_t>(n);
    if (static_cast<std::size_t>(n) == room && trusted && c.in.size() < kMaxInput)
      c.in.resize(c.in.size() * 2);  // more may be waiting: a larger read next time
    return true;
  }
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
  return false;
}

void TcpDriver::process_input(Conn& c, PacketSink& sink, int& delivered, int budget) {
  std::size_t pos = 0;
  bool ack_now = false;
  int bare = 0;  // payload-less data frames delivered by this call
  c.pending = false;
  if (c.direct_size) {
    if (c.direct_got < c.direct_size) return;
    const std::span<const std::byte> payload{c.direct_dest, c.direct_size};
    c.direct_size = c.direct_got = 0;
    c.streaming = true;
    c.fixed_stream = c.fixed_slot != Conn::kNoSlot;
    if (c.fixed_slot != Conn::kNoSlot) {
      ++stats_.fixed_payloads;
      c.fixed_slot = Conn::kNoSlot;
    }
    // Acknowledge the payload now rather than after the delayed-ACK timer: a zero-copy
    // sender's buffer is handed back only once every byte of it is acknowledged (its skbs
    // stay in the retransmit queue until then), and the small control packets both ways
    // make the kernel treat the connection as interactive and delay ACKs (up to 40 ms; over
    // veth with SEND_ZC: 17 ms per 100 KiB message, 0.2 ms with this). One syscall per
    // large payload received in place.
    const int one = 1;
    setsockopt(c.fd.get(), IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
    ++stats_.received;
    ++stats_.placed;
    stats_.received_bytes += payload.size();
    ++delivered;
    sink.on_packet(c.peer, c.direct_header, payload);
  }
  while (!c.broken) {
    tcp::Frame f;
    const auto r = tcp::parse_frame({c.in.data() + pos, c.in_len - pos}, caps_.max_header,
                                    caps_.max_packet, f);
    if (r != tcp::FrameParse::malformed && f.total != 0 && f.type == tcp::FrameType::data &&
        !proven(c)) {
      // Data before the handshake (a header announcing a payload, or a whole frame): not
      // ours, and nothing is allocated for it.
      ++stats_.unproven_rejected;
      conn_failed(c, false);
      return;
    }
    if (r == tcp::FrameParse::need_more) {
      // (f.total is 0 while the frame header itself is incomplete; a control frame is a
      // hello at most, which the buffer always holds.)
      if (f.type == tcp::FrameType::data && c.state == ConnState::up &&
          f.total >= sizeof(tcp::FrameHeader) + kPlaceMin && start_direct(c, pos, sink)) {
        c.in_len = pos;  // everything after pos now sits in the destination
        break;
      }
      if (f.total > c.in.size()) c.in.resize(f.total);  // a frame larger than the buffer
      break;
    }
    if (r == tcp::FrameParse::malformed) {
      ++stats_.malformed;
      conn_failed(c, false);
      return;
    }
    if (f.type == tcp::FrameType::data) {
      if (c.state != ConnState::up) {  // after the peer's bye
        ++stats_.malformed;
        conn_failed(c, false);
        return;
      }
      if (delivered >= budget) {
        c.pending = true;
        pending_.push_back(&c);
        break;
      }
      ++stats_.received;
      stats_.received_bytes += f.payload.size();
      ++delivered;
      // A frame from the buffer ends streaming, except a lone payload-less one (a rendezvous'
      // rts, cts or fin) after a payload read by READ_FIXED: then the next large payload is
      // read in place whole too, none of it staged here. (Not on the recv() path: reading
      // only headers ahead there costs a mid-size message more syscalls than the copy saves,
      // 64 KiB ping-pong +3 us on loopback.)
      if (!c.fixed_stream || !f.payload.empty() || ++bare > 1) c.streaming = c.fixed_stream = false;
      ack_now |= f.payload.size() >= kPlaceMin;
      sink.on_packet(c.peer, f.header, f.payload);
    } else if (!on_control(c, f)) {
      conn_failed(c, false);
      return;
    }
    pos += f.total;
  }
  if (ack_now && !c.broken) {
    // A large payload that arrived whole in the input buffer: acknowledge it now too, as one
    // received in place (a zero-copy sender, e.g. a staged pipeline reusing its few staging
    // buffers, waits for the ACK). One syscall per batch read.
    const int one = 1;
    setsockopt(c.fd.get(), IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
  }
  if (pos > 0 && !c.broken) {
    // Usually every frame was consumed: nothing to move.
    if (pos < c.in_len) std::memmove(c.in.data(), c.in.data() + pos, c.in_len - pos);
    c.in_len -= pos;
  }
}

void TcpDriver::set_lowat(Conn& c, std::size_t bytes) {
  if (c.lowat == bytes) return;
  int v = static_cast<int>(bytes);
  setsockopt(c.fd.get(), SOL_SOCKET, SO_RCVLOWAT, &v, sizeof v);
  c.lowat = bytes;
}

bool TcpDriver::start_direct(Conn& c, std::size_t pos, PacketSink& sink) {
  tcp::FrameHeader h;
  if (c.in_len - pos < sizeof h) return false;
  std::memcpy(&h, c.in.data() + pos, sizeof h);
  const std::size_t have = c.in_len - pos - sizeof h;
  if (have < h.header_len) return false;  // the packet header is not in yet
  const std::span<const std::byte> header{c.in.data() + pos + sizeof h, h.header_len};
  const Placement place = sink.placement(c.peer, header, h.payload_len);
  if (place.bytes.size() != h.payload_len) return false;
  c.direct_header.assign(header.begin(), header.end());
  c.direct_dest = place.bytes.data();
  c.direct_size = h.payload_len;
  c.direct_got = have - h.header_len;
  // Bytes already in the buffer are copied over (the first frame of a stream: afterwards
  // only the headers are read ahead, `streaming`); the rest is read in place.
  std::memcpy(c.direct_dest, header.data() + header.size(), c.direct_got);
  stats_.placed_staged_bytes += c.direct_got;
  stats_.placed_bytes += c.direct_size - c.direct_got;
  // Into the receiver's registration by READ_FIXED when it is one of this ring's fixed
  // buffers (its slot and range kept, checked before each read).
  c.fixed_slot = Conn::kNoSlot;
  if (read_fixed_ && place.reg && place.reg->covers(place.bytes)) {
    if (uring_->holds(*place.reg)) {
      c.fixed_slot = place.reg->local_key().value;
      c.fixed_base = place.reg->base();
      c.fixed_length = place.reg->length();
    } else {
      ++stats_.fixed_fallbacks;  // another domain's (or a stale slot): recv()
    }
  }
  set_lowat(c, std::min(c.direct_size - c.direct_got, kLowat));
  return true;
}

bool TcpDriver::write_out(Peer& p, Conn& c) {
  if (p.zc_busy) return true;  // after the SEND_ZC on its way (reap_uring flushes then)
  while (p.out_off < p.out.size()) {
    const ssize_t n = ::send(c.fd.get(), p.out.data() + p.out_off, p.out.size() - p.out_off,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    ++stats_.writes;
    if (n > 0) {
      p.out_off += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
    return false;
  }
  if (p.out_off == p.out.size()) {
    p.out.clear();
    p.out_off = 0;
    set_want_out(c, false);
  } else {
    if (p.out_off > (1u << 20) && p.out_off * 2 > p.out.size()) {
      p.out.erase(p.out.begin(), p.out.begin() + static_cast<std::ptrdiff_t>(p.out_off));
      p.out_off = 0;
    }
    set_want_out(c, true);
  }
  return true;
}

void TcpDriver::enqueue(Peer& p, std::span<const std::byte> a, std::span<const std::byte> b,
                        std::span<const std::byte> c, std::size_t skip) {
  for (auto s : {a, b, c}) {
    if (skip >= s.size()) {
      skip -= s.size();
      continue;
    }
    p.out.insert(p.out.end(), s.begin() + static_cast<std::ptrdiff_t>(skip), s.end());
    stats_.queued_bytes += s.size() - skip;
    skip = 0;
  }
}

IoStatus TcpDriver::send(int peer, std::span<const std::byte> header,
                         std::span<const std::byte> payload) {
  if (!reaches(peer)) return IoStatus::failed;
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (p.state == PeerState::dead || p.state == PeerState::closed) return IoStatus::failed;
  if (header.empty() || header.size() > caps_.max_header || payload.size() > caps_.max_packet)
    return IoStatus::failed;
  tcp::FrameHeader fh;
  fh.payload_len = static_cast<uint32_t>(payload.size());
  fh.header_len = static_cast<uint16_t>(header.size());
  const std::span<const std::byte> fb{reinterpret_cast<const std::byte*>(&fh), sizeof fh};
  const std::size_t total = sizeof fh + header.size() + payload.size();

  if (p.state == PeerState::up && p.out_off == p.out.size() && !p.zc_busy) {
    // Idle connection: straight to the kernel. A small frame is copied into one buffer and
    // leaves in one send(): a sendmsg with three iovecs costs ~0.2-0.35 µs more in the kernel
    // (measured in situ between namespace hosts, docs/PERFORMANCE.md); larger frames go out
    // as they are, header and payload as three iovecs.
    const bool small = total <= kSmallFrame;
    std::array<std::byte, kSmallFrame> copy;
    ssize_t n;
    if (small) {
      std::memcpy(copy.data(), &fh, sizeof fh);
      std::memcpy(copy.data() + sizeof fh, header.data(), header.size());
      if (!payload.empty())
        std::memcpy(copy.data() + sizeof fh + header.size(), payload.data(), payload.size());
      n = ::send(p.conn->fd.get(), copy.data(), total, MSG_NOSIGNAL | MSG_DONTWAIT);
    } else {
      iovec iov[3] = {{const_cast<std::byte*>(fb.data()), fb.size()},
                      {const_cast<std::byte*>(header.data()), header.size()},
                      {const_cast<std::byte*>(payload.data()), payload.size()}};
      msghdr mh{};
      mh.msg_iov = iov;
      mh.msg_iovlen = payload.empty() ? 2 : 3;
      n = sendmsg(p.conn->fd.get(), &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    ++stats_.writes;
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        conn_failed(*p.conn, false);
        return IoStatus::failed;
      }
      n = 0;
    }
    ++stats_.sent;
    stats_.sent_bytes += payload.size();
    if (static_cast<std::size_t>(n) == total) return IoStatus::done;
    if (small)
      enqueue(p, {copy.data(), total}, {}, {}, static_cast<std::size_t>(n));
    else
      enqueue(p, fb, header, payload, static_cast<std::size_t>(n));
    set_want_out(*p.conn, true);
    return IoStatus::done;
  }
  // A backlog (the socket is full, or the connection is not up yet). Small packets queue
  // behind it and leave together with it, several per send (batching); a large payload is
  // refused instead of copied: the caller keeps its buffer and retries when there is room.
  const std::size_t queued = p.out.size() - p.out_off;
  if (queued >= params_.queue_limit || (payload.size() > kCopyLimit && (queued > 0 || p.zc_busy))) {
    ++stats_.full;
    return IoStatus::again;
  }
  enqueue(p, fb, header, payload, 0);
  ++stats_.sent;
  stats_.sent_bytes += payload.size();
  if (p.state == PeerState::idle) start_connect(peer);
  return IoStatus::done;
}

IoStatus TcpDriver::copy_fallback(int peer, std::span<const std::byte> header,
                                  std::span<const std::byte> payload) {
  const IoStatus s = send(peer, header, payload);
  if (s == IoStatus::done) ++stats_.zc_fallbacks;  // counted once, not per retry
  return s;
}

IoStatus TcpDriver::send_tracked(int peer, std::span<const std::byte> header,
                                 std::span<const std::byte> payload, const mem::Registration& reg,
                                 CompletionToken token) {
  if (!uring_ || payload.size() < params_.zerocopy_min) return send(peer, header, payload);
  if (!reaches(peer) || !peers_[static_cast<std::size_t>(peer)].zc || !reg.covers(payload) ||
      !uring_->holds(reg)) {
    return copy_fallback(peer, header, payload);
  }
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (p.state != PeerState::up || !p.conn) {
    // Not connected yet (or gone): the copy path queues or fails it.
    return copy_fallback(peer, header, payload);
  }
  if (header.empty() || header.size() > caps_.max_header || payload.size() > caps_.max_packet)
    return IoStatus::failed;
  if (p.zc_busy || p.out_off < p.out.size() || zc_free_.empty()) {
    ++stats_.full;
    return IoStatus::again;
  }
  io_uring& ring = uring_->ring();
  io_uring_sqe* head_sqe = io_uring_get_sqe(&ring);
  io_uring_sqe* zc_sqe = head_sqe ? io_uring_get_sqe(&ring) : nullptr;
  if (!zc_sqe) return IoStatus::again;  // (never: every call submits what it prepared)
  tcp::FrameHeader fh;
  fh.payload_len = static_cast<uint32_t>(payload.size());
  fh.header_len = static_cast<uint16_t>(header.size());
  p.zc_head.resize(sizeof fh + header.size());
  std::memcpy(p.zc_head.data(), &fh, sizeof fh);
  std::memcpy(p.zc_head.data() + sizeof fh, header.data(), header.size());
  const uint32_t index = zc_free_.back();
  zc_free_.pop_back();
  zc_ops_[index] = ZcOp{token, peer, static_cast<uint32_t>(payload.size())};
  const int fd = p.conn->fd.get();
  // The headers first (copied: they are small), linked so the payload follows them on the
  // stream; a successful headers' send posts no CQE.
  io_uring_prep_send(head_sqe, fd, p.zc_head.data(), p.zc_head.size(), MSG_NOSIGNAL | MSG_WAITALL);
  head_sqe->flags |= IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
  head_sqe->user_data = kCqeHead << 32 | static_cast<uint32_t>(peer);
  io_uring_prep_send_zc_fixed(zc_sqe, fd, payload.data(), payload.size(),
                              MSG_NOSIGNAL | MSG_WAITALL, IORING_SEND_ZC_REPORT_USAGE,
                              static_cast<unsigned>(reg.local_key().value));
  zc_sqe->user_data = kCqeZc << 32 | index;
  if (io_uring_submit(&ring) < 0) {
    // Nothing was taken (the SQEs stay queued only if submit got that far: drop the ring
    // path for good rather than guess).
    util::log(util::LogLevel::warn, "tcp: io_uring_submit failed (%s): zero-copy off",
              std::strerror(errno));
    zc_ops_[index] = ZcOp{};
    zc_free_.push_back(index);
    for (auto& q : peers_) q.zc = false;
    return copy_fallback(peer, header, payload);
  }
  p.zc_busy = true;
  ++zc_inflight_;
  ++stats_.writes;
  ++stats_.sent;
  stats_.sent_bytes += payload.size();
  ++stats_.zc_sends;
  stats_.zc_bytes += payload.size();
  return IoStatus::posted;
}

void TcpDriver::finish_zc(uint32_t index, PacketSink* sink, int& completed, Report report) {
  ZcOp& op = zc_ops_[index];
  if (!op.silent && report == Report::now) {
    sink->on_completion(op.token, op.status);
    ++completed;
  } else if (!op.silent && report == Report::later) {
    zc_later_.push_back({op.token, op.status, op.peer});  // (capacity kMaxZcOps: no allocation)
  }
  op = ZcOp{};
  zc_free_.push_back(index);
  --zc_inflight_;
}

void TcpDriver::reap_uring(PacketSink* sink, int& completed, Report report) {
  io_uring& ring = uring_->ring();
  io_uring_cqe* cqe;
  unsigned head;
  unsigned seen = 0;
  io_uring_for_each_cqe(&ring, head, cqe) {
    ++seen;
    const uint64_t kind = cqe->user_data >> 32;
    const auto index = static_cast<uint32_t>(cqe->user_data);
    if (kind == kCqeRead) {
      read_res_ = cqe->res;
      read_reaped_ = true;
      continue;
    }
    if (kind != kCqeZc) continue;  // a failed headers' send: its SEND_ZC is cancelled too
    ZcOp& op = zc_ops_[index];
    if (cqe->flags & IORING_CQE_F_NOTIF) {
      // The kernel let go of the pages: the buffer is the caller's again.
      const bool copied = static_cast<uint32_t>(cqe->res) & IORING_NOTIF_USAGE_ZC_COPIED;
      stats_.zc_copied += copied;
      Peer& p = peers_[static_cast<std::size_t>(op.peer)];
      if (p.zc_judged < kZcJudged) {
        ++p.zc_judged;
        p.zc_copied += copied;
        // auto: a route whose kernel copied every one of the first sends gains nothing from
        // zero-copy (the copy path is as good and cheaper): back to it.
        if (p.zc_judged == kZcJudged && p.zc_copied == kZcJudged &&
            params_.zerocopy == TcpZeroCopy::automatic && p.zc) {
          p.zc = false;
          ++stats_.zc_peers_off;
        }
      }
      finish_zc(index, sink, completed, report);
      continue;
    }
    // The send's result: the payload is in the socket (all of it: MSG_WAITALL), or failed.
    Peer& p = peers_[static_cast<std::size_t>(op.peer)];
    p.zc_busy = false;
    if (cqe->res != static_cast<int>(op.len)) {
      op.status = Errc::peer_dead;
      errno = cqe->res < 0 ? -cqe->res : EPIPE;
      if (p.conn && !p.conn->broken) conn_failed(*p.conn, false);
    } else if (p.conn && p.out_off < p.out.size() && !write_out(p, *p.conn)) {
      conn_failed(*p.conn, false);
    }
    if (!(cqe->flags & IORING_CQE_F_MORE)) finish_zc(index, sink, completed, report);
  }
  io_uring_cq_advance(&ring, seen);
}

void TcpDriver::conn_failed(Conn& c, bool eof) {
  if (c.broken) return;
  c.broken = true;
  need_reap_ = true;
  epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, c.fd.get(), nullptr);
  if (c.state == ConnState::awaiting_hello) --strangers_;
  if (c.peer < 0) return;
  Peer& p = peers_[static_cast<std::size_t>(c.peer)];
  if (p.conn != &c) return;
  p.conn = nullptr;
  if (p.state == PeerState::closed) {
    ++stats_.closed;
    return;
  }
  if (p.state == PeerState::up || c.state == ConnState::up || c.state == ConnState::closing) {
    util::log(util::LogLevel::info, "tcp: connection to rank %d lost (%s)", c.peer,
              eof ? "EOF" : std::strerror(errno));
    declare_dead(c.peer);
    return;
  }
  // A connection attempt that failed before the handshake finished.
  if (c.peer < params_.rank && c.state == ConnState::hello_sent) {
    // The lower rank refused our hello because its own connection is on the way.
    p.state = PeerState::waiting;
    ++stats_.races_lost;
  } else {
    p.state = PeerState::connecting;
    p.retry_at = net::monotonic_ns() + kRetryNs;
  }
}

void TcpDriver::declare_dead(int peer) {
  Peer& p = peers_[static_cast<std::size_t>(peer)];
  if (p.state == PeerState::dead) return;
  p.state = PeerState::dead;
  p.out.clear();
  p.out_off = 0;
  if (p.conn) {
    Conn* c = p.conn;
    p.conn = nullptr;
    conn_failed(*c, false);
  }
  p.zc_busy = false;
  // Zero-copy sends still in the kernel complete silently: the core fails the peer's
  // requests itself (and those reaped but not reported yet are dropped).
  if (zc_inflight_)
    for (auto& op : zc_ops_)
      if (op.peer == peer) op.silent = true;
  std::erase_if(zc_later_, [peer](const ZcLater& z) { return z.peer == peer; });
  ++stats_.peers_dead;
  if (params_.on_peer_dead) params_.on_peer_dead(peer);
}

void TcpDriver::check_timers() {
  const uint64_t now = net::monotonic_ns();
  for (std::size_t i = 0; i < handshakes_.size();) {
    const int peer = handshakes_[i];
    Peer& p = peers_[static_cast<std::size_t>(peer)];
    if (p.state != PeerState::connecting && p.state != PeerState::waiting) {
      handshakes_[i] = handshakes_.back();
      handshakes_.pop_back();
      continue;
    }
    ++i;
    if (now >= p.deadline) {
      util::log(util::LogLevel::warn, "tcp: no connection to rank %d (%s) within the timeout", peer,
                net::to_string(p.addr).c_str());
      declare_dead(peer);
    } else if (p.state == PeerState::connecting && !p.conn && now >= p.retry_at) {
      start_connect(peer);
    }
  }
  if (strangers_ > 0)
    for (auto& c : conns_)
      if (!c->broken && c->state == ConnState::awaiting_hello &&
          now - c->since > params_.handshake_timeout_ns) {
        ++stats_.unproven_timed_out;
        conn_failed(*c, false);
      }
}

void TcpDriver::reap() {
  need_reap_ = false;
  std::erase_if(pending_, [](Conn* c) { return c->broken; });
  std::erase_if(up_, [](Conn* c) { return c->broken; });
  std::erase_if(conns_, [](const std::unique_ptr<Conn>& c) { return c->broken; });
}

void TcpDriver::handle_events(Conn& c, uint32_t events, PacketSink& sink, int& delivered,
                              int budget) {
  if (c.broken) return;
  if (c.state == ConnState::connecting && c.outgoing) {
    if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) on_connected(c);
    if (c.broken || !(events & EPOLLIN)) return;
  }
  if ((events & EPOLLOUT) && c.state == ConnState::up) {
    Peer& p = peers_[static_cast<std::size_t>(c.peer)];
    if (!write_out(p, c)) {
      conn_failed(c, false);
      return;
    }
  }
  if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
    const uint64_t reads = stats_.reads;
    const std::size_t had = c.in_len, got = c.direct_got;
    const bool ok = read_in(c);
    const int saved = errno;
    // A spinning poll whose recv found nothing new has nothing to parse: frames never wait
    // in the buffer for anything but more bytes (or the budget: c.pending).
    const bool fresh = !ok || stats_.reads == reads || c.in_len != had || c.direct_got != got;
    if (!c.pending && fresh) process_input(c, sink, delivered, ok ? budget : INT32_MAX);
    if (!ok && !c.broken) {
      errno = saved;
      conn_failed(c, true);
    }
  }
}

int TcpDriver::poll(PacketSink& sink, int budget) {
  int delivered = 0;
  if (!zc_later_.empty()) {  // reaped by a READ_FIXED since the last poll
    for (const ZcLater& z : zc_later_) sink.on_completion(z.token, z.status);
    delivered += static_cast<int>(zc_later_.size());
    zc_later_.clear();
  }
  if (zc_inflight_) reap_uring(&sink, delivered);
  if (!pending_.empty()) {
    std::vector<Conn*> again;
    again.swap(pending_);
    for (Conn* c : again)
      if (!c->broken) process_input(*c, sink, delivered, budget);
  }
  // Few connections: one recv per connection and poll is cheaper than epoll_wait + recv
  // (the latency path); epoll still runs every few polls for the listener, handshakes and
  // hang-ups, and always once there are many connections.
  const bool direct = up_.size() <= kDirectPoll;
  if (direct) {
    for (std::size_t i = 0; i < up_.size(); ++i) {
      Conn& c = *up_[i];
      if (c.broken || c.pending) continue;
      Peer& p = peers_[static_cast<std::size_t>(c.peer)];
      if (p.out_off < p.out.size() && !write_out(p, c)) {
        conn_failed(c, false);
        continue;
      }
      if (c.direct_size) {
        // Receiving a large payload in place: recv only once SO_RCVLOWAT bytes are there
        // (tcp_poll takes no socket lock, recv does: spinning on recv slows the sender).
        pollfd pf{c.fd.get(), POLLIN, 0};
        if (::poll(&pf, 1, 0) <= 0) continue;
      }
      handle_events(c, EPOLLIN, sink, delivered, budget);
    }
  }
  // The periodic epoll_wait is a syscall: not between a delivered message and the caller's
  // reply, but on the next empty poll (or every 1024th poll under a steady stream).
  if ((++epoll_polls_ & 63) == 0) epoll_owed_ = true;
  if (!direct || (epoll_owed_ && (delivered == 0 || (epoll_polls_ & 1023) == 0)) ||
      !handshakes_.empty() || strangers_ > 0 || up_.empty()) {
    epoll_owed_ = false;
    epoll_event evs[64];
    const int n = epoll_wait(epoll_fd_.get(), evs, 64, 0);
    for (int i = 0; i < n; ++i) {
      if (!evs[i].data.ptr)
        accept_all(sink);
      else if (evs[i].data.ptr == &uring_tag_)
        continue;  // CQEs: reaped at the top of poll
      else
        handle_events(*static_cast<Conn*>(evs[i].data.ptr), evs[i].events, sink, delivered, budget);
    }
  }
  if (!handshakes_.empty() || strangers_ > 0) {
    if ((++timer_polls_ & 63) == 0 || timers_owed_.exchange(false, std::memory_order_acq_rel))
      check_timers();
  }
  if (need_reap_) reap();
  work_waiting_.store(!pending_.empty() || !zc_later_.empty() ||
                          (zc_inflight_ && io_uring_cq_ready(&uring_->ring())),
                      std::memory_order_release);
  handshaking_.store(!handshakes_.empty(), std::memory_order_release);
  return delivered;
}

bool TcpDriver::block(uint64_t timeout_ns) {
  // Called by the progress thread without the engine lock: only the published flags and the
  // epoll fd (the ring's completions wake it too: uring_tag_).
  if (work_waiting_.load(std::memory_order_acquire)) return true;
  const bool handshaking = handshaking_.load(std::memory_order_acquire);
  if (handshaking) timeout_ns = std::min<uint64_t>(timeout_ns, kRetryNs);
  timespec ts{static_cast<time_t>(timeout_ns / 1000000000u),
              static_cast<long>(timeout_ns % 1000000000u)};
  epoll_event ev;
  // Level-triggered: whatever woke us is reported again to the poll that follows.
  epoll_pwait2(epoll_fd_.get(), &ev, 1, &ts, nullptr);
  if (handshaking) timers_owed_.store(true, std::memory_order_release);
  return true;
}

bool TcpDriver::drain(uint64_t timeout_ns) {
  const uint64_t deadline = net::monotonic_ns() + timeout_ns;
  const tcp::FrameHeader bye{0, 0, tcp::FrameType::bye, 0};
  const std::span<const std::byte> bb{reinterpret_cast<const std::byte*>(&bye), sizeof bye};
  for (auto& p : peers_)
    if (p.state == PeerState::up && p.conn) enqueue(p, bb, {}, {}, 0);
  // Write everything out, then half-close and read until each peer closes too, so that
  // neither side's close resets a connection with bytes still unread.
  bool all = false;
  std::vector<std::byte> sink_buf(64 * 1024);
  while (net::monotonic_ns() < deadline) {
    all = true;
    int ignored = 0;
    if (zc_inflight_)  // every request completed before drain
      reap_uring(nullptr, ignored, Report::drop);
    for (auto& p : peers_) {
      if (!p.conn || p.conn->broken) continue;
      Conn& c = *p.conn;
      if (p.zc_busy) {
        all = false;
        continue;
      }
      if (p.out_off < p.out.size()) {
        if (!write_out(p, c)) {
          conn_failed(c, false);
          continue;
        }
        if (p.out_off < p.out.size()) {
          all = false;
          continue;
        }
      }
      if (!c.half_closed) {
        shutdown(c.fd.get(), SHUT_WR);
        c.half_closed = true;
      }
      const ssize_t n = ::recv(c.fd.get(), sink_buf.data(), sink_buf.size(), MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        c.broken = true;  // done with it
        p.conn = nullptr;
        continue;
      }
      all = false;
    }
    if (all) break;
    epoll_event ev;
    epoll_wait(epoll_fd_.get(), &ev, 1, 1);
  }
  return all;
}

void TcpDriver::register_stats(util::StatsRegistry& reg, std::string_view c) const {
  using util::Unit;
  reg.add(c, "packets_sent", Unit::count, &stats_.sent, "packets sent");
  reg.add(c, "bytes_sent", Unit::bytes, &stats_.sent_bytes, "header and payload bytes sent");
  reg.add(c, "packets_received", Unit::count, &stats_.received, "packets received");
  reg.add(c, "bytes_received", Unit::bytes, &stats_.received_bytes, "bytes received");
  reg.add(c, "placed", Unit::count, &stats_.placed,
          "payloads read straight into their destination");
  reg.add(c, "placed_bytes", Unit::bytes, &stats_.placed_bytes,
          "payload bytes read straight into their destination (recv or READ_FIXED)");
  reg.add(c, "placed_staged_bytes", Unit::bytes, &stats_.placed_staged_bytes,
          "bytes of payloads received in place that the input buffer held already (copied over)");
  reg.add(c, "read_fixed.payloads", Unit::count, &stats_.fixed_payloads,
          "payloads read by io_uring READ_FIXED into the receiver's registration");
  reg.add(c, "read_fixed.bytes", Unit::bytes, &stats_.fixed_bytes,
          "bytes read by READ_FIXED into registered receive buffers (no copy in user space)");
  reg.add(c, "read_fixed.reads", Unit::count, &stats_.fixed_reads, "READ_FIXED operations");
  reg.add(c, "read_fixed.fallbacks", Unit::count, &stats_.fixed_fallbacks,
          "placements with a registration received by recv() instead (refused, not this ring's)");
  reg.add(c, "writes", Unit::count, &stats_.writes, "write/sendmsg calls");
  reg.add(c, "reads", Unit::count, &stats_.reads, "read calls");
  reg.add(c, "queued_bytes", Unit::bytes, &stats_.queued_bytes,
          "bytes queued in user space for a full socket");
  reg.add(c, "full", Unit::count, &stats_.full,
          "sends refused: the per-peer queue limit was reached");
  reg.add(c, "connects", Unit::count, &stats_.connects, "connections initiated");
  reg.add(c, "accepts", Unit::count, &stats_.accepts, "connections accepted");
  reg.add(c, "races_lost", Unit::count, &stats_.races_lost,
          "simultaneous connects resolved by dropping ours");
  reg.add(c, "bad_key", Unit::count, &stats_.bad_key, "frames with another job's key");
  reg.add(c, "malformed", Unit::count, &stats_.malformed, "structurally invalid frames");
  reg.add(c, "unproven.rejected", Unit::count, &stats_.unproven_rejected,
          "connections closed for sending data before proving the job key");
  reg.add(c, "unproven.evicted", Unit::count, &stats_.unproven_evicted,
          "silent unproven connections closed to stay within TCP_HANDSHAKE_LIMIT");
  reg.add(c, "unproven.timed_out", Unit::count, &stats_.unproven_timed_out,
          "connections closed for not proving the job key within TCP_HANDSHAKE_TIMEOUT");
  reg.add(c, "unproven.peak", Unit::count, &stats_.unproven_peak,
          "most accepted connections waiting for their hello at once");
  reg.set_kind(std::string(c) + ".unproven.peak", util::Kind::high_water);
  reg.add(c, "peers_dead", Unit::count, &stats_.peers_dead, "peers declared dead");
  reg.add(c, "closed", Unit::count, &stats_.closed, "orderly closes by peers");
  reg.add(c, "zerocopy.sends", Unit::count, &stats_.zc_sends,
          "payloads sent by io_uring SEND_ZC from a registered buffer");
  reg.add(c, "zerocopy.bytes", Unit::bytes, &stats_.zc_bytes, "payload bytes sent zero-copy");
  reg.add(c, "zerocopy.copied", Unit::count, &stats_.zc_copied,
          "zero-copy sends the kernel copied after all (IORING_NOTIF_USAGE_ZC_COPIED, "
          "SO_EE_CODE_ZEROCOPY_COPIED): loopback, veth, no scatter-gather");
  reg.add(c, "zerocopy.fallbacks", Unit::count, &stats_.zc_fallbacks,
          "tracked sends that took the copy path (unregistered, peer not connected)");
  reg.add(c, "zerocopy.peers_off", Unit::count, &stats_.zc_peers_off,
          "peers switched to the copy path because the kernel copied (auto)");
  reg.add_info(c, "zerocopy", [this] {
    return uring_ ? std::string("io_uring SEND_ZC (") +
                        (params_.zerocopy == TcpZeroCopy::on ? "on" : "auto") + ")" +
                        (read_fixed_ ? ", READ_FIXED receives into registered buffers" : "")
                  : "off" + (zc_why_.empty() ? std::string() : " (" + zc_why_ + ")");
  });
}

}  // namespace sluice::drivers
