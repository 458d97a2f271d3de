#include "drivers/udp/udp_driver.hpp"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/sock_diag.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "util/log.hpp"
#include "util/stats.hpp"

namespace sluice::drivers {

namespace {

// Datagrams at least this large are worth a peek (one more syscall) to be read in place.
constexpr std::size_t kPlaceMin = 16 * 1024;
// Datagrams up to this size are sent from one contiguous copy (send's fast path).
constexpr std::size_t kFlatMax = 512;
// The kernel's limits for one UDP_SEGMENT send: UDP_MAX_SEGMENTS (64 before Linux 6.9,
// 128 since) and one IPv4 datagram's worth of UDP payload.
constexpr std::size_t kGsoMaxSegments = 64;
constexpr std::size_t kGsoMaxBytes = 65507;
// A GRO read holds at most one IPv4 datagram's worth of segments; its cmsg is one int.
constexpr std::size_t kGroBuffer = 65535;
constexpr std::size_t kGroControl = CMSG_SPACE(sizeof(int));
// Connected pair: the unconnected socket is read every this many polls (strangers and the
// peer's early datagrams only), and on every poll this long after it held a peer datagram.
constexpr uint32_t kStrayEvery = 64;
constexpr uint32_t kStrayHot = 4096;

// Newer than some liburing headers (kernel 6.2 ABI).
#ifndef IORING_SEND_ZC_REPORT_USAGE
#define IORING_SEND_ZC_REPORT_USAGE (1U << 3)
#endif
#ifndef IORING_NOTIF_USAGE_ZC_COPIED
#define IORING_NOTIF_USAGE_ZC_COPIED (1U << 31)
#endif

// io_uring user_data: what a CQE belongs to (kind << 32 | operation index).
constexpr uint64_t kCqeHead = 1;  // the headers' SEND; only failures post
constexpr uint64_t kCqeZc = 2;    // the payload's SEND_ZC
constexpr uint32_t kMaxZcOps = 128;

bool loopback_address(const sockaddr_in& a) {
  return (ntohl(a.sin_addr.s_addr) >> 24) == 127;
}

std::size_t set_buffer(int fd, int opt, int force_opt, std::size_t want) {
  int v = static_cast<int>(want);
  // Forcing needs CAP_NET_ADMIN; otherwise the kernel caps at net.core.[rw]mem_max.
  if (setsockopt(fd, SOL_SOCKET, force_opt, &v, sizeof v) != 0)
    setsockopt(fd, SOL_SOCKET, opt, &v, sizeof v);
  int got = 0;
  socklen_t len = sizeof got;
  getsockopt(fd, SOL_SOCKET, opt, &got, &len);
  return static_cast<std::size_t>(got);
}

}  // namespace

UdpDriver::UdpDriver(UdpParams params) : params_(params) {
  if (params_.datagram < sizeof(udp::UdpHeader) + params_.max_header + 64 ||
      params_.datagram > 65507)
    throw std::runtime_error("udp: datagram size must be " +
                             std::to_string(sizeof(udp::UdpHeader) + params_.max_header + 64) +
                             "..65507 bytes");
  params_.rx_datagram = std::max(params_.rx_datagram, params_.datagram);
  if (params_.rx_buffers == 0) params_.rx_buffers = 1;
  if (params_.send_sockets == 0) params_.send_sockets = 1;
  caps_.max_header = params_.max_header;
  caps_.max_packet = params_.datagram - sizeof(udp::UdpHeader) - params_.max_header;
  caps_.inline_payload = caps_.max_packet;
  caps_.reliable = caps_.ordered = false;
  peers_.resize(static_cast<std::size_t>(params_.size));

  rx_ = util::UniqueFd(socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!rx_) throw std::runtime_error(std::string("udp: socket: ") + std::strerror(errno));
  int one = 1, zero = 0;
  // Connected pair: rx_ and stray_ share the port. rx_ binds without SO_REUSEPORT: a port-0
  // bind with it may return a port another socket of the same user holds with it (another
  // rank, another job), and the two then split each other's datagrams. The option is set
  // for stray_'s bind only, and cleared again on both so that no later bind can join them.
  const bool pair = params_.connect_pair && params_.size == 2;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr = params_.bind_addr;
  if (bind(rx_.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    throw std::runtime_error("udp: bind " + net::to_string(sa) + ": " + std::strerror(errno));
  socklen_t len = sizeof sa;
  getsockname(rx_.get(), reinterpret_cast<sockaddr*>(&sa), &len);
  port_ = ntohs(sa.sin_port);
  if (pair && setsockopt(rx_.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) == 0) {
    stray_ = util::UniqueFd(socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!stray_ || setsockopt(stray_.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0 ||
        bind(stray_.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 ||
        setsockopt(stray_.get(), SOL_SOCKET, SO_REUSEPORT, &zero, sizeof zero) != 0)
      stray_.reset();  // no pair then: rx_ stays the one unconnected socket
    else               // it carries all of the peer's packets now and then (before the connect)
      set_buffer(stray_.get(), SO_RCVBUF, SO_RCVBUFFORCE, params_.socket_buffer / 8);
    setsockopt(rx_.get(), SOL_SOCKET, SO_REUSEPORT, &zero, sizeof zero);
  }
  rcvbuf_ = set_buffer(rx_.get(), SO_RCVBUF, SO_RCVBUFFORCE, params_.socket_buffer);
  // Coalesced reads need buffers that hold a whole super-packet (else it is truncated).
  gro_ = params_.gro && setsockopt(rx_.get(), SOL_UDP, UDP_GRO, &one, sizeof one) == 0;
  if (gro_) params_.rx_datagram = std::max(params_.rx_datagram, kGroBuffer);

  for (std::size_t i = 0; i < params_.send_sockets; ++i) {
    util::UniqueFd fd(socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd) throw std::runtime_error(std::string("udp: socket: ") + std::strerror(errno));
    // Bound now when an address is configured (else the first send binds it to 0.0.0.0).
    sockaddr_in own{};
    own.sin_family = AF_INET;
    own.sin_addr = params_.bind_addr;
    if (own.sin_addr.s_addr != htonl(INADDR_ANY) &&
        bind(fd.get(), reinterpret_cast<sockaddr*>(&own), sizeof own) != 0)
      throw std::runtime_error("udp: bind " + net::to_string(own) + ": " + std::strerror(errno));
    set_buffer(fd.get(), SO_SNDBUF, SO_SNDBUFFORCE, params_.socket_buffer / params_.send_sockets);
    tx_.push_back(std::move(fd));
  }
  tx_peer_.assign(tx_.size(), -1);
  // A kernel without UDP_SEGMENT (< 4.18) refuses the option: no GSO then.
  int no_gso = 0;
  gso_ = params_.gso && setsockopt(tx_[0].get(), SOL_UDP, UDP_SEGMENT, &no_gso, sizeof no_gso) == 0;

  peek_.resize(sizeof(udp::UdpHeader) + params_.max_header);
  const std::size_t n = params_.rx_buffers;
  pool_.resize(n * params_.rx_datagram);
  iov_.resize(n);
  msgs_.resize(n);
  if (gro_) control_.resize(n * kGroControl);
  for (std::size_t i = 0; i < n; ++i) {
    iov_[i] = {pool_.data() + i * params_.rx_datagram, params_.rx_datagram};
    msghdr& mh = msgs_[i].msg_hdr;
    mh = msghdr{};
    mh.msg_iov = &iov_[i];
    mh.msg_iovlen = 1;
    if (gro_) {
      mh.msg_control = control_.data() + i * kGroControl;
      mh.msg_controllen = kGroControl;
    }
  }
  zc_peers_.resize(static_cast<std::size_t>(params_.size));
  if (params_.zerocopy != UdpZeroCopy::off) open_uring();
}

UdpDriver::~UdpDriver() = default;

void UdpDriver::open_uring() {
  std::string why;
  auto domain = net::open_send_zc_domain(2 * kMaxZcOps, why);
  if (!domain) {
    zc_why_ = why;
    if (params_.zerocopy == UdpZeroCopy::on)
      throw std::runtime_error("udp: SLUICE_UDP_ZEROCOPY=on, but " + why);
    util::log(util::LogLevel::info, "udp: zero-copy sends off: %s", why.c_str());
    return;
  }
  uring_ = std::move(domain);
  zc_ops_.resize(kMaxZcOps);
  for (uint32_t i = kMaxZcOps; i-- > 0;) zc_free_.push_back(i);
  zc_head_stride_ = sizeof(udp::UdpHeader) + params_.max_header;
  zc_heads_.resize(kMaxZcOps * zc_head_stride_);
  zc_done_.reserve(kMaxZcOps);
}

mem::Domain& UdpDriver::memory_domain() {
  // (auto with only loopback peers registers nothing: host memory, as without io_uring)
  return caps_.needs_registration ? static_cast<mem::Domain&>(*uring_) : mem::host_domain();
}

void UdpDriver::set_peer_address(int peer, const sockaddr_in& addr) {
  peers_.at(static_cast<std::size_t>(peer)) = addr;
  ZcPeer& z = zc_peers_[static_cast<std::size_t>(peer)];
  z.fd.reset();  // connected to the old address
  z.on = uring_ && peer != params_.rank &&
         (params_.zerocopy == UdpZeroCopy::on || !loopback_address(addr));
  if (z.on) caps_.needs_registration = caps_.lends_payload = true;
  if (stray_ && peer != params_.rank) {
    // The one peer: rx_ takes only its datagrams from now on and sends to it.
    pair_peer_ = -1;
    if (connect(rx_.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
      pair_peer_ = peer;
      set_buffer(rx_.get(), SO_SNDBUF, SO_SNDBUFFORCE, params_.socket_buffer);
    }
  }
  for (std::size_t k = 0; k < tx_.size(); ++k)
    if (tx_peer_[k] == peer) {  // a new address: dissolve the old association
      sockaddr unspec{};
      unspec.sa_family = AF_UNSPEC;
      connect(tx_[k].get(), &unspec, sizeof unspec);
      tx_peer_[k] = -1;
    }
}

std::string UdpDriver::peer_address(int peer) const {
  return net::to_string(peers_.at(static_cast<std::size_t>(peer)));
}

std::size_t UdpDriver::path_mtu(const sockaddr_in& addr) {
  util::UniqueFd fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd || connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    return 0;
  int mtu = 0;
  socklen_t len = sizeof mtu;
  if (getsockopt(fd.get(), IPPROTO_IP, IP_MTU, &mtu, &len) != 0 || mtu <= 0) return 0;
  return static_cast<std::size_t>(mtu);
}

void UdpDriver::set_datagram(std::size_t bytes) {
  const std::size_t lo = sizeof(udp::UdpHeader) + params_.max_header + 64;
  params_.datagram = std::clamp(bytes, lo, std::min<std::size_t>(params_.rx_datagram, 65507));
  caps_.max_packet = params_.datagram - sizeof(udp::UdpHeader) - params_.max_header;
  caps_.inline_payload = caps_.max_packet;
}

bool UdpDriver::reaches(int peer) const {
  return peer >= 0 && peer < params_.size && peer != params_.rank &&
         peers_[static_cast<std::size_t>(peer)].sin_port != 0;
}

int UdpDriver::pick_socket(int peer, msghdr& mh, bool& connected) {
  if (peer == pair_peer_ && !zc_pair_busy_) {
    connected = true;
    return rx_.get();
  }
  const std::size_t k = next_tx_;
  next_tx_ = next_tx_ + 1 == tx_.size() ? 0 : next_tx_ + 1;
  const int fd = tx_[k].get();
  const sockaddr_in& to = peers_[static_cast<std::size_t>(peer)];
  if (tx_peer_[k] < 0 && connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0)
    tx_peer_[k] = peer;
  connected = tx_peer_[k] == peer;
  if (!connected) {  // a connected UDP socket still sends to any address it is given
    mh.msg_name = const_cast<sockaddr_in*>(&to);
    mh.msg_namelen = sizeof(sockaddr_in);
  }
  return fd;
}

IoStatus UdpDriver::send(int peer, std::span<const std::byte> header,
                         std::span<const std::byte> payload) {
  if (!reaches(peer) || header.empty() || header.size() > caps_.max_header ||
      payload.size() > caps_.max_packet)
    return IoStatus::failed;
  udp::UdpHeader h;
  h.src = params_.rank;
  h.header_len = static_cast<uint16_t>(header.size());
  iovec iov[3] = {{&h, sizeof h},
                  {const_cast<std::byte*>(header.data()), header.size()},
                  {const_cast<std::byte*>(payload.data()), payload.size()}};
  msghdr mh{};
  mh.msg_iov = iov;
  mh.msg_iovlen = payload.empty() ? 2 : 3;
  bool connected;
  const int fd = pick_socket(peer, mh, connected);
  ssize_t sent;
  const std::size_t total = sizeof h + header.size() + payload.size();
  if (total <= kFlatMax) {
    // A small packet is copied into one buffer and sent with sendto: no msghdr and iovec
    // copy-in (~100 ns per call, as recv saves on the receive side).
    std::byte flat[kFlatMax];
    std::memcpy(flat, &h, sizeof h);
    std::memcpy(flat + sizeof h, header.data(), header.size());
    if (!payload.empty())
      std::memcpy(flat + sizeof h + header.size(), payload.data(), payload.size());
    sent = sendto(fd, flat, total, MSG_DONTWAIT | MSG_NOSIGNAL,
                  static_cast<const sockaddr*>(mh.msg_name), mh.msg_namelen);
  } else {
    sent = sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
  }
  if (sent < 0) {
    // Transient conditions only: an unreachable host shows up as silence, which the
    // reliability layer's peer timeout turns into a dead peer.
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EINTR) {
      ++stats_.send_again;
      return IoStatus::again;
    }
    ++stats_.send_errors;
    return IoStatus::again;
  }
  ++stats_.sent;
  stats_.sent_connected += connected;
  stats_.sent_bytes += payload.size();
  return IoStatus::done;
}

int UdpDriver::zc_socket(int peer) {
  if (peer == pair_peer_) return rx_.get();
  ZcPeer& z = zc_peers_[static_cast<std::size_t>(peer)];
  if (!z.fd) {
    util::UniqueFd fd(socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    sockaddr_in own{};
    own.sin_family = AF_INET;
    own.sin_addr = params_.bind_addr;
    const sockaddr_in& to = peers_[static_cast<std::size_t>(peer)];
    if (!fd ||
        (own.sin_addr.s_addr != htonl(INADDR_ANY) &&
         bind(fd.get(), reinterpret_cast<sockaddr*>(&own), sizeof own) != 0) ||
        connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0)
      return -1;
    set_buffer(fd.get(), SO_SNDBUF, SO_SNDBUFFORCE, params_.socket_buffer / params_.send_sockets);
    z.fd = std::move(fd);
  }
  return z.fd.get();
}

bool UdpDriver::lends(int peer, std::size_t bytes) const {
  return uring_ && bytes >= params_.zerocopy_min && reaches(peer) &&
         zc_peers_[static_cast<std::size_t>(peer)].on;
}

bool UdpDriver::intact(int peer) const {
  return reaches(peer) && loopback_address(peers_[static_cast<std::size_t>(peer)]);
}

IoStatus UdpDriver::send_tracked(int peer, std::span<const std::byte> header,
                                 std::span<const std::byte> payload, const mem::Registration& reg,
                                 CompletionToken token) {
  if (!uring_ || payload.size() < params_.zerocopy_min || !reaches(peer) || !reg.pinned())
    return send(peer, header, payload);
  ZcPeer& z = zc_peers_[static_cast<std::size_t>(peer)];
  const int fd = z.on && reg.covers(payload) && uring_->holds(reg) ? zc_socket(peer) : -1;
  if (fd < 0) {
    const IoStatus s = send(peer, header, payload);
    if (s == IoStatus::done) ++stats_.zc_fallbacks;
    return s;
  }
  if (header.empty() || header.size() > caps_.max_header || payload.size() > caps_.max_packet)
    return IoStatus::failed;
  if (z.busy || zc_free_.empty()) reap_uring();
  if (z.busy || zc_free_.empty()) {
    ++stats_.send_again;
    return IoStatus::again;
  }
  io_uring& ring = uring_->ring();
  io_uring_sqe* head_sqe = io_uring_get_sqe(&ring);
  io_uring_sqe* zc_sqe = head_sqe ? io_uring_get_sqe(&ring) : nullptr;
  if (!zc_sqe) return IoStatus::again;  // (never: every call submits what it prepared)
  const uint32_t index = zc_free_.back();
  zc_free_.pop_back();
  zc_ops_[index] = ZcOp{token, peer, static_cast<uint32_t>(payload.size())};
  std::byte* head = zc_heads_.data() + index * zc_head_stride_;
  udp::UdpHeader h;
  h.src = params_.rank;
  h.header_len = static_cast<uint16_t>(header.size());
  std::memcpy(head, &h, sizeof h);
  std::memcpy(head + sizeof h, header.data(), header.size());
  // The headers are copied and corked (MSG_MORE); the SEND_ZC appends the payload from the
  // pinned pages and ends the datagram. Linked: the payload follows only a sent header.
  io_uring_prep_send(head_sqe, fd, head, sizeof h + header.size(), MSG_MORE | MSG_NOSIGNAL);
  head_sqe->flags |= IOSQE_IO_LINK | IOSQE_CQE_SKIP_SUCCESS;
  head_sqe->user_data = kCqeHead << 32 | index;
  io_uring_prep_send_zc_fixed(zc_sqe, fd, payload.data(), payload.size(), MSG_NOSIGNAL,
                              IORING_SEND_ZC_REPORT_USAGE,
                              static_cast<unsigned>(reg.local_key().value));
  zc_sqe->user_data = kCqeZc << 32 | index;
  if (io_uring_submit(&ring) < 0) {
    util::log(util::LogLevel::warn, "udp: io_uring_submit failed (%s): zero-copy off",
              std::strerror(errno));
    zc_ops_[index] = ZcOp{};
    zc_free_.push_back(index);
    for (auto& q : zc_peers_) q.on = false;
    const IoStatus s = send(peer, header, payload);
    if (s == IoStatus::done) ++stats_.zc_fallbacks;
    return s;
  }
  z.busy = true;
  if (peer == pair_peer_) zc_pair_busy_ = true;
  ++zc_inflight_;
  ++stats_.sent;
  stats_.sent_connected += 1;
  stats_.sent_bytes += payload.size();
  ++stats_.zc_sends;
  stats_.zc_bytes += payload.size();
  // The pair usually completes inside the submit (UDP sends do not wait): free the socket.
  reap_uring();
  return IoStatus::posted;
}

void UdpDriver::finish_zc(uint32_t index) {
  ZcOp& op = zc_ops_[index];
  zc_done_.push_back({op.token, op.status});
  op = ZcOp{};
  zc_free_.push_back(index);
  --zc_inflight_;
}

void UdpDriver::reap_uring() {
  io_uring& ring = uring_->ring();
  io_uring_cqe* cqe;
  unsigned head;
  unsigned seen = 0;
  io_uring_for_each_cqe(&ring, head, cqe) {
    ++seen;
    const uint64_t kind = cqe->user_data >> 32;
    const auto index = static_cast<uint32_t>(cqe->user_data);
    if (kind != kCqeZc) continue;  // a failed header's send: its SEND_ZC is cancelled too
    ZcOp& op = zc_ops_[index];
    ZcPeer& z = zc_peers_[static_cast<std::size_t>(op.peer)];
    if (cqe->flags & IORING_CQE_F_NOTIF) {
      // The kernel let go of the pages: the memory is the caller's again.
      const bool copied = static_cast<uint32_t>(cqe->res) & IORING_NOTIF_USAGE_ZC_COPIED;
      stats_.zc_copied += copied;
      if (z.judged < kZcJudged) {
        ++z.judged;
        z.copied += copied;
        // auto: a route whose kernel copied every one of the first sends gains nothing from
        // zero-copy (and pays for the notifications): back to the copy path.
        if (z.judged == kZcJudged && z.copied == kZcJudged &&
            params_.zerocopy == UdpZeroCopy::automatic && z.on) {
          z.on = false;
          ++stats_.zc_peers_off;
        }
      }
      finish_zc(index);
      continue;
    }
    // The pair's result: the datagram is in the socket, or it failed (the reliability layer
    // resends it).
    z.busy = false;
    if (op.peer == pair_peer_) zc_pair_busy_ = false;
    if (cqe->res != static_cast<int>(op.len)) {
      op.status = Errc::internal;
      ++stats_.send_errors;
      // A header left corked (its payload failed) leaves alone now; the receiver drops it.
      if (cqe->res != -ECANCELED) {
        const int fd = zc_socket(op.peer);
        if (fd >= 0) ::send(fd, nullptr, 0, MSG_DONTWAIT | MSG_NOSIGNAL);
      }
    }
    if (!(cqe->flags & IORING_CQE_F_MORE)) finish_zc(index);
  }
  io_uring_cq_advance(&ring, seen);
}

bool UdpDriver::valid_packet(int peer, const PacketRef& p) const {
  return reaches(peer) && !p.header.empty() && p.header.size() <= caps_.max_header &&
         p.payload.size() <= caps_.max_packet;
}

IoStatus UdpDriver::send_batch(int peer, std::span<const PacketRef> packets, std::size_t& sent) {
  auto datagram = [](const PacketRef& p) {
    return sizeof(udp::UdpHeader) + p.header.size() + p.payload.size();
  };
  sent = 0;
  while (sent < packets.size()) {
    // A run for one UDP_SEGMENT send: datagrams of the first one's size, the last may be
    // shorter (the kernel cuts the buffer at gso_size).
    const std::size_t seg = datagram(packets[sent]);
    std::size_t n = 1, total = seg;
    if (gso_ && valid_packet(peer, packets[sent])) {
      while (sent + n < packets.size() && n < kGsoMaxSegments) {
        const PacketRef& q = packets[sent + n];
        const std::size_t b = datagram(q);
        if (b > seg || total + b > kGsoMaxBytes || !valid_packet(peer, q)) break;
        total += b;
        ++n;
        if (b < seg) break;
      }
    }
    if (n == 1) {
      const IoStatus s = send(peer, packets[sent].header, packets[sent].payload);
      if (s != IoStatus::done) return s;
      ++sent;
      continue;
    }
    gso_hdr_.resize(n);
    gso_iov_.resize(3 * n);
    std::size_t payload_bytes = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const PacketRef& q = packets[sent + i];
      gso_hdr_[i] = udp::UdpHeader{};
      gso_hdr_[i].src = params_.rank;
      gso_hdr_[i].header_len = static_cast<uint16_t>(q.header.size());
      gso_iov_[3 * i] = {&gso_hdr_[i], sizeof(udp::UdpHeader)};
      gso_iov_[3 * i + 1] = {const_cast<std::byte*>(q.header.data()), q.header.size()};
      gso_iov_[3 * i + 2] = {const_cast<std::byte*>(q.payload.data()), q.payload.size()};
      payload_bytes += q.payload.size();
    }
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(uint16_t))] = {};
    msghdr mh{};
    mh.msg_iov = gso_iov_.data();
    mh.msg_iovlen = 3 * n;
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    const uint16_t gso_size = static_cast<uint16_t>(seg);
    std::memcpy(CMSG_DATA(c), &gso_size, sizeof gso_size);
    bool connected;
    const int fd = pick_socket(peer, mh, connected);
    if (sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EINTR) {
        ++stats_.send_again;
        return IoStatus::again;
      }
      if (errno == EIO || errno == EINVAL || errno == EMSGSIZE || errno == ENOPROTOOPT ||
          errno == EOPNOTSUPP) {
        // No checksum offload on the route, or a kernel / path that refuses this size:
        // segmentation offload is off from now on; the run goes out datagram by datagram.
        gso_ = false;
        continue;
      }
      ++stats_.send_errors;
      return IoStatus::again;
    }
    sent += n;
    stats_.sent += n;
    stats_.sent_connected += connected ? n : 0;
    stats_.sent_bytes += payload_bytes;
    ++stats_.gso_sends;
    stats_.gso_segments += n;
  }
  return IoStatus::done;
}

std::size_t UdpDriver::gro_segment(msghdr& mh) {
  for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
      int size = 0;
      std::memcpy(&size, CMSG_DATA(c), sizeof size);
      return size > 0 ? static_cast<std::size_t>(size) : 0;
    }
  return 0;
}

bool UdpDriver::deliver(std::span<const std::byte> bytes, PacketSink& sink) {
  udp::Datagram d;
  if (!udp::parse_datagram(bytes, params_.size, caps_.max_header, d) || d.src == params_.rank) {
    ++stats_.malformed;
    return false;
  }
  ++stats_.received;
  stats_.received_bytes += d.payload.size();
  sink.on_packet(d.src, d.header, d.payload);
  return true;
}

int UdpDriver::receive_batch(int max) {
  // The pool's headers are set up once (constructor); the kernel only rewrites the
  // flags and lengths of the entries it fills, restored by reset_pool().
  const std::size_t n =
      std::min({static_cast<std::size_t>(std::max(max, 1)), msgs_.size(), batch_});
  int got;
  if (n == 1 && gro_) {  // the UDP_GRO cmsg needs recvmsg's control space
    const ssize_t len = recvmsg(rx_.get(), &msgs_[0].msg_hdr, MSG_DONTWAIT);
    got = len < 0 ? -1 : 1;
    if (len >= 0) msgs_[0].msg_len = static_cast<unsigned>(len);
  } else if (n == 1) {
    // The latency path: recv skips recvmmsg's batch bookkeeping and recvmsg's copy-in of the
    // msghdr and iovec (~100 ns per call, found or not). MSG_TRUNC: the full length.
    const ssize_t len =
        recv(rx_.get(), pool_.data(), params_.rx_datagram, MSG_DONTWAIT | MSG_TRUNC);
    got = len < 0 ? -1 : 1;
    if (len >= 0) {
      const bool cut = static_cast<std::size_t>(len) > params_.rx_datagram;
      msgs_[0].msg_len = static_cast<unsigned>(cut ? params_.rx_datagram : len);
      msgs_[0].msg_hdr.msg_flags = cut ? MSG_TRUNC : 0;
    }
  } else {
    got = recvmmsg(rx_.get(), msgs_.data(), static_cast<unsigned>(n), MSG_DONTWAIT, nullptr);
  }
  if (got <= 0) {
    batch_ = 1;
    return 0;
  }
  batch_ = static_cast<std::size_t>(got) == n ? 2 * n : static_cast<std::size_t>(got);
  dirty_count_ = static_cast<std::size_t>(got);
  ++stats_.batches;
  return got;
}

const UdpStats& UdpDriver::stats() const {
  // The socket's drop counter (what SO_RXQ_OVFL would report per datagram), cumulative.
  auto drops = [](int fd) -> uint64_t {
    uint32_t mem[SK_MEMINFO_VARS] = {};
    socklen_t len = sizeof mem;
    if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len) != 0 ||
        len <= SK_MEMINFO_DROPS * sizeof(uint32_t))
      return 0;
    return mem[SK_MEMINFO_DROPS];
  };
  stats_.kernel_drops = drops(rx_.get()) + drops(stray_.get());
  return stats_;
}

UdpDriver::Placed UdpDriver::receive_placed(PacketSink& sink) {
  iovec piov{peek_.data(), peek_.size()};
  msghdr ph{};
  ph.msg_iov = &piov;
  ph.msg_iovlen = 1;
  alignas(cmsghdr) char control[kGroControl];
  if (gro_) {
    ph.msg_control = control;
    ph.msg_controllen = sizeof control;
  }
  // MSG_TRUNC: the datagram's full length, though only its headers are copied.
  const ssize_t len = recvmsg(rx_.get(), &ph, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
  if (len < 0) return Placed::nothing;
  const std::size_t full = static_cast<std::size_t>(len);
  if (full < kPlaceMin || (gro_ && gro_segment(ph) != 0)) {
    placing_ = false;  // the stream is over (or coalesced small datagrams): the pool reads
    return Placed::fallback;
  }
  udp::Datagram d;
  if (full > params_.rx_datagram ||
      !udp::parse_datagram({peek_.data(), std::min(full, peek_.size())}, params_.size,
                           caps_.max_header, d) ||
      d.src == params_.rank)
    return Placed::fallback;  // the pool path rejects and counts it
  const std::size_t head = sizeof(udp::UdpHeader) + d.header.size();
  const std::size_t payload_size = full - head;
  // (A registration the placement may carry is not used: no fixed-buffer receive can split
  // a datagram between its headers and registered memory; udp_driver.hpp.)
  const std::span<std::byte> dest = sink.placement(d.src, d.header, payload_size).bytes;
  if (dest.size() != payload_size || payload_size == 0) {
    placing_ = false;
    return Placed::fallback;
  }
  // Headers into the peek buffer again (the same bytes), the payload into its place.
  iovec iov[2] = {{peek_.data(), head}, {dest.data(), payload_size}};
  msghdr mh{};
  mh.msg_iov = iov;
  mh.msg_iovlen = 2;
  const ssize_t got = recvmsg(rx_.get(), &mh, MSG_DONTWAIT);
  if (got < 0) return Placed::nothing;
  ++stats_.batches;
  // This socket has one reader: the datagram read is the one peeked at. Check anyway.
  udp::Datagram again;
  if (static_cast<std::size_t>(got) != full || (mh.msg_flags & MSG_TRUNC) ||
      !udp::parse_datagram({peek_.data(), head}, params_.size, caps_.max_header, again) ||
      again.src != d.src || again.header.size() != d.header.size()) {
    ++stats_.malformed;
    return Placed::done;
  }
  ++stats_.received;
  ++stats_.placed;
  stats_.placed_bytes += payload_size;
  stats_.received_bytes += payload_size;
  sink.on_packet(again.src, again.header, dest);
  return Placed::done;
}

int UdpDriver::receive_stray(PacketSink& sink, int budget) {
  // One datagram at a time into pool entry 0 (delivered before the next read; rx_'s batch
  // reuses the entry only after this returns). No UDP_GRO on stray_: the kernel segments.
  int delivered = 0;
  bool peer_seen = false;
  for (int i = 0; i < budget; ++i) {
    const ssize_t len =
        recv(stray_.get(), pool_.data(), params_.rx_datagram, MSG_DONTWAIT | MSG_TRUNC);
    if (len < 0) break;
    ++stats_.stray;
    if (static_cast<std::size_t>(len) > params_.rx_datagram) {
      ++stats_.malformed;
      continue;
    }
    const std::span<const std::byte> bytes{pool_.data(), static_cast<std::size_t>(len)};
    udp::Datagram d;
    peer_seen = peer_seen || (udp::parse_datagram(bytes, params_.size, caps_.max_header, d) &&
                              d.src == pair_peer_);
    delivered += deliver(bytes, sink);
  }
  // The peer's traffic lands here (before the connect, or from a source address other than
  // the one rx_ is connected to): read this socket on every poll for a while.
  if (peer_seen) stray_hot_ = kStrayHot;
  return delivered;
}

void UdpDriver::reset_pool() {
  for (std::size_t i = 0; i < dirty_count_; ++i) {
    msgs_[i].msg_hdr.msg_flags = 0;
    if (gro_) msgs_[i].msg_hdr.msg_controllen = kGroControl;
  }
  dirty_count_ = 0;
}

int UdpDriver::poll(PacketSink& sink, int budget) {
  if (dirty_count_) reset_pool();
  int delivered = 0;
  if (zc_inflight_ || !zc_done_.empty()) {
    if (zc_inflight_) reap_uring();
    for (const ZcDone& d : zc_done_) sink.on_completion(d.token, d.status);
    delivered = static_cast<int>(zc_done_.size());
    zc_done_.clear();
  }
  // Before the connect both sockets share the port's traffic (reuseport): read both.
  if (stray_ && (pair_peer_ < 0 || stray_hot_ > 0 || ++stray_tick_ >= kStrayEvery)) {
    stray_tick_ = 0;
    if (stray_hot_ > 0) --stray_hot_;
    delivered = receive_stray(sink, budget);
    if (delivered >= budget) return delivered;
  }
  while (placing_ && delivered < budget) {
    const Placed r = receive_placed(sink);
    if (r == Placed::nothing) return delivered;
    if (r == Placed::fallback) break;
    ++delivered;
  }
  if (delivered >= budget) return delivered;
  const int got = receive_batch(budget - delivered);
  for (int i = 0; i < got; ++i) {
    mmsghdr& m = msgs_[static_cast<std::size_t>(i)];
    const std::span<const std::byte> bytes{
        pool_.data() + static_cast<std::size_t>(i) * params_.rx_datagram, m.msg_len};
    if (m.msg_hdr.msg_flags & MSG_TRUNC) {
      ++stats_.malformed;
      continue;
    }
    const std::size_t stride = gro_ ? gro_segment(m.msg_hdr) : 0;
    if (stride != 0 && stride < bytes.size()) {  // coalesced: one datagram per stride
      ++stats_.gro_reads;
      for (std::size_t off = 0; off < bytes.size(); off += stride) {
        ++stats_.gro_segments;
        delivered += deliver(bytes.subspan(off, std::min(stride, bytes.size() - off)), sink);
      }
      continue;
    }
    if (m.msg_len >= kPlaceMin) placing_ = true;  // a stream: peek at the next ones
    delivered += deliver(bytes, sink);
  }
  return delivered;
}

bool UdpDriver::block(uint64_t timeout_ns) {
  // The ring's fd is readable while completions wait: zero-copy notifications wake it too.
  pollfd p[3] = {{rx_.get(), POLLIN, 0},
                 {stray_.get(), POLLIN, 0},
                 {uring_ ? uring_->ring().ring_fd : -1, POLLIN, 0}};
  timespec ts{static_cast<time_t>(timeout_ns / 1000000000u),
              static_cast<long>(timeout_ns % 1000000000u)};
  ppoll(p, 3, &ts, nullptr);
  if (stray_ && (p[1].revents & POLLIN)) stray_tick_ = kStrayEvery;  // read it next poll
  return true;
}

void UdpDriver::register_stats(util::StatsRegistry& reg, std::string_view c) const {
  using util::Unit;
  reg.add(c, "datagrams_sent", Unit::count, &stats_.sent, "datagrams sent");
  reg.add(c, "bytes_sent", Unit::bytes, &stats_.sent_bytes, "bytes sent");
  reg.add(c, "datagrams_received", Unit::count, &stats_.received, "datagrams received");
  reg.add(c, "bytes_received", Unit::bytes, &stats_.received_bytes, "bytes received");
  reg.add(c, "batches", Unit::count, &stats_.batches, "sendmmsg calls");
  reg.add(c, "send_again", Unit::count, &stats_.send_again,
          "sends the socket refused for now (EAGAIN)");
  reg.add(c, "send_errors", Unit::count, &stats_.send_errors, "sends that failed");
  reg.add(c, "malformed", Unit::count, &stats_.malformed, "datagrams dropped as invalid");
  reg.add(c, "sent_connected", Unit::count, &stats_.sent_connected,
          "of datagrams_sent: over a socket connected to the peer");
  reg.add(c, "placed", Unit::count, &stats_.placed,
          "of datagrams_received: payload read straight into its placement");
  reg.add(c, "placed_bytes", Unit::bytes, &stats_.placed_bytes,
          "payload bytes recvmsg scattered straight into their placement (the kernel's one copy; "
          "never by a fixed-buffer read: see the udp driver's header)");
  reg.add(c, "gso_sends", Unit::count, &stats_.gso_sends,
          "sendmsg calls carrying several datagrams (UDP_SEGMENT)");
  reg.add(c, "gso_segments", Unit::count, &stats_.gso_segments, "of datagrams_sent: sent in those");
  reg.add(c, "gro_reads", Unit::count, &stats_.gro_reads,
          "reads returning several coalesced datagrams (UDP_GRO)");
  reg.add(c, "gro_segments", Unit::count, &stats_.gro_segments,
          "of datagrams_received: received in those");
  reg.add(c, "stray", Unit::count, &stats_.stray, "datagrams read from the unconnected socket");
  reg.add(
      c, "kernel_drops", Unit::count, [this] { return stats().kernel_drops; },
      "datagrams the kernel dropped on the receive socket (SO_RXQ_OVFL)");
  reg.add(
      c, "datagram", Unit::bytes, [this] { return static_cast<uint64_t>(params_.datagram); },
      "bytes per datagram");
  reg.add(
      c, "rcvbuf", Unit::bytes, [this] { return static_cast<uint64_t>(rcvbuf_); },
      "receive socket buffer granted");
  reg.add(
      c, "send_sockets", Unit::count, [this] { return static_cast<uint64_t>(tx_.size()); },
      "send sockets");
  reg.add(c, "zerocopy.sends", Unit::count, &stats_.zc_sends,
          "datagram payloads sent by io_uring SEND_ZC from a registered buffer");
  reg.add(c, "zerocopy.bytes", Unit::bytes, &stats_.zc_bytes, "payload bytes sent zero-copy");
  reg.add(c, "zerocopy.copied", Unit::count, &stats_.zc_copied,
          "zero-copy sends the kernel copied after all (IORING_NOTIF_USAGE_ZC_COPIED, "
          "SO_EE_CODE_ZEROCOPY_COPIED): loopback, veth, no scatter-gather");
  reg.add(c, "zerocopy.fallbacks", Unit::count, &stats_.zc_fallbacks,
          "tracked sends from registered memory that took the copy path");
  reg.add(c, "zerocopy.peers_off", Unit::count, &stats_.zc_peers_off,
          "peers switched to the copy path because the kernel copied every judged send (auto)");
  reg.add_info(c, "zerocopy", [this] {
    return uring_ ? std::string("io_uring SEND_ZC (") +
                        (params_.zerocopy == UdpZeroCopy::on ? "on" : "auto") + ")"
                  : "off" + (zc_why_.empty() ? std::string() : " (" + zc_why_ + ")");
  });
  reg.add_info(
      c, "offload",
      [this] {
        return std::string(gso_ ? "gso" : "no-gso") + "," + (gro_ ? "gro" : "no-gro") + "," +
               (paired() ? "paired" : "unpaired");
      },
      "segmentation/receive offload in use, connected pair");
}

}  // namespace sluice::drivers
