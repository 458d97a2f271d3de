#include "store_server.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace sluicerun {

namespace {

namespace wire = sluice::detail::bootwire;

// Without --boot-handshake-limit: room for every rank of the job (they all connect at start)
// and this many more.
constexpr int default_extra_handshakes = 64;
// Stranger events reported one by one; the rest are counted (boot.unproven.*) and summed up.
constexpr int stranger_reports_shown = 5;

UniqueFd listen_on(const std::string& path, std::string& error) {
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!listener.valid()) {
    error = std::string("cannot create the bootstrap socket: ") + std::strerror(errno);
    return {};
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  // Created 0600 from the start (umask), not chmod-ed after a window of exposure.
  mode_t old_mask = ::umask(0177);
  int bound = ::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::umask(old_mask);
  if (bound != 0 || ::listen(listener.get(), SOMAXCONN) != 0) {
    error = "cannot listen on " + path + ": " + std::strerror(errno);
    return {};
  }
  return listener;
}

// The first non-loopback IPv4 address of an interface that is up: where hosts of a
// multi-host job can most likely reach this launcher. 127.0.0.1 if there is none.
std::string default_boot_ip() {
  ifaddrs* list = nullptr;
  std::string found = "127.0.0.1";
  if (::getifaddrs(&list) != 0) return found;
  for (ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET) continue;
    if ((a->ifa_flags & IFF_UP) == 0 || (a->ifa_flags & IFF_LOOPBACK) != 0) continue;
    char text[INET_ADDRSTRLEN];
    auto* in = reinterpret_cast<sockaddr_in*>(a->ifa_addr);
    if (::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) != nullptr) {
      found = text;
      break;
    }
  }
  ::freeifaddrs(list);
  return found;
}

// Listens on TCP at "IP[:PORT]" (IPv4; port 0 or none: any free port). `advertised` becomes
// the rank's SLUICE_BOOT_ADDR, tcp:IP:PORT.
UniqueFd listen_on_tcp(const std::string& where, std::string& advertised, std::string& error) {
  std::string ip = where, port_text = "0";
  if (auto colon = where.find(':'); colon != std::string::npos) {
    ip = where.substr(0, colon);
    port_text = where.substr(colon + 1);
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  char* end = nullptr;
  unsigned long port = std::strtoul(port_text.c_str(), &end, 10);
  if (::inet_pton(AF_INET, ip.c_str(), &address.sin_addr) != 1 || *end != '\0' || port > 65535) {
    error = "--boot-addr " + where + " is not IPv4-ADDRESS[:PORT]";
    return {};
  }
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  int one = 1;
  if (!listener.valid() ||
      ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      ::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener.get(), SOMAXCONN) != 0) {
    error = "cannot listen on TCP " + where + ": " + std::strerror(errno);
    return {};
  }
  socklen_t length = sizeof address;
  ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &length);
  advertised = "tcp:" + ip + ":" + std::to_string(ntohs(address.sin_port));
  return listener;
}

}  // namespace

// ---- the socket directory ----

void StoreServer::BootDirectory::remove() {
  if (!socket_path_.empty()) ::unlink(socket_path_.c_str());
  if (!directory_.empty()) ::rmdir(directory_.c_str());
  socket_path_.clear();
  directory_.clear();
}

namespace {

// A launcher killed with SIGKILL cannot remove its socket directory. The next start removes
// such leftovers in `base`: directories named sluicerun-XXXXXX, owned by this user, whose
// boot.sock, older than a second, no one listens on any more (connect is refused). A live
// job's socket accepts, so it is never touched.
void remove_stale_directories(const std::string& base) {
  DIR* dir = ::opendir(base.c_str());
  if (dir == nullptr) return;
  while (dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (!name.starts_with("sluicerun-") || name.size() != 16) continue;
    const std::string path = base + "/" + name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid())
      continue;
    const std::string socket_path = path + "/boot.sock";
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof address.sun_path) continue;
    // A socket made this very second may belong to a job between its bind and its listen.
    struct stat sock {};
    if (::lstat(socket_path.c_str(), &sock) != 0 || !S_ISSOCK(sock.st_mode) ||
        sock.st_mtime + 1 >= ::time(nullptr))
      continue;
    std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    const bool refused =
        ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 &&
        errno == ECONNREFUSED;
    ::close(fd);
    if (!refused) continue;  // alive, or not ours to judge (no socket: a job starting up)
    ::unlink(socket_path.c_str());
    ::rmdir(path.c_str());
  }
  ::closedir(dir);
}

}  // namespace

bool StoreServer::BootDirectory::create(std::string& error) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::vector<std::string> bases;
  if (tmpdir != nullptr && *tmpdir == '/') bases.push_back(tmpdir);
  bases.push_back("/tmp");
  for (const std::string& base : bases) {
    std::string candidate = base + "/sluicerun-XXXXXX";
    // The socket path must fit sun_path; a long TMPDIR falls back to /tmp.
    if (candidate.size() + 16 >= sizeof(sockaddr_un::sun_path)) continue;
    remove_stale_directories(base);
    if (::mkdtemp(candidate.data()) == nullptr) {
      error = "cannot create a temporary directory in " + base + ": " + std::strerror(errno);
      continue;
    }
    directory_ = candidate;
    socket_path_ = directory_ + "/boot.sock";
    return true;
  }
  if (error.empty()) error = "no temporary directory with a short enough path";
  return false;
}

// ---- setup ----

StoreServer::StoreServer(const Options& options, std::string job_id, std::string job_key,
                         EventLoop& loop, Job& job)
    : options_(options),
      job_id_(std::move(job_id)),
      job_key_(std::move(job_key)),
      loop_(loop),
      job_(job),
      sessions_(static_cast<std::size_t>(options.nranks)),
      handshake_limit_(static_cast<std::size_t>(
          options.handshake_limit.value_or(options.nranks + default_extra_handshakes))) {}

bool StoreServer::listen(std::string& error) {
  if (options_.hosts.empty()) {
    if (!boot_directory_.create(error)) return false;
    listener_ = listen_on(boot_directory_.socket_path(), error);
    address_ = boot_directory_.socket_path();
  } else {
    // Ranks on other hosts reach the store over TCP; the job key in hello keeps everyone
    // else out.
    listener_ = listen_on_tcp(options_.boot_addr.empty() ? default_boot_ip() : options_.boot_addr,
                              address_, error);
  }
  if (!listener_.valid()) return false;
  loop_.watch(listener_.get(), EPOLLIN, event_tag(Source::listener, 0));
  return true;
}

void StoreServer::accept_launch_token(int rank, std::string token) {
  sessions_[rank].launch_token = std::move(token);
}

// ---- connections ----

void StoreServer::accept_connections() {
  for (;;) {
    int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN, or a transient error (EMFILE) that the next event retries
    }
    if (unproven_ >= handshake_limit_) make_room_for_stranger();
    std::uint32_t id = next_connection_id_++;
    Connection& connection = connections_[id];
    connection.socket.reset(fd);
    connection.accepted_at = Clock::now();
    connection.reader.set_limit(wire::max_hello_size);
    ++unproven_;
    ++unproven_stats_.accepted;
    unproven_stats_.peak = std::max<std::uint64_t>(unproven_stats_.peak, unproven_);
    if (!options_.hosts.empty()) {
      // A host that vanishes (link down, power) is noticed even without a child exit.
      int on = 1, idle = 10, interval = 5, probes = 3;
      ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
      ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
      ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
      ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    }
    loop_.watch(fd, EPOLLIN, event_tag(Source::connection, id));
  }
}

void StoreServer::on_connection_event(std::uint32_t id, std::uint32_t events) {
  if (events & EPOLLOUT) flush_outbox(id);
  if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) read_connection(id, false);
}

void StoreServer::read_what_rank_left(int rank) {
  if (sessions_[rank].connection_id) read_connection(*sessions_[rank].connection_id, true);
}

// Reads and handles frames. Normally a bounded batch (level-triggered epoll calls again);
// `until_closed` reads everything a dead rank left behind.
void StoreServer::read_connection(std::uint32_t id, bool until_closed) {
  char buffer[65536];
  for (int batch = 0; until_closed || batch < 16; ++batch) {
    auto it = connections_.find(id);
    if (it == connections_.end()) return;
    // A connection that has not proven the job key gets no more than a hello frame read
    // (the reader holds at most that much for it); the rest waits in its socket.
    std::size_t want = sizeof buffer;
    if (it->second.rank < 0)
      want = std::max<std::size_t>(
          1, wire::header_size + wire::max_hello_size - it->second.reader.buffered());
    ssize_t n = ::recv(it->second.socket.get(), buffer, std::min(want, sizeof buffer), 0);
    if (n < 0 && errno == EINTR) continue;
    // Nothing more for now (for a dead rank: a forked child may still hold the socket).
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      on_disconnect(id);
      return;
    }
    it->second.reader.feed(buffer, static_cast<std::size_t>(n));
    wire::Frame frame;
    for (;;) {
      auto found = connections_.find(id);  // a handler may close the connection
      if (found == connections_.end()) return;
      auto status = found->second.reader.next(frame);
      if (status == wire::FrameReader::Status::incomplete) break;
      if (status == wire::FrameReader::Status::oversized) {
        protocol_error(id, "message too large");
        return;
      }
      handle_frame(id, frame);
    }
  }
}

void StoreServer::handle_frame(std::uint32_t id, wire::Frame& frame) {
  Connection& connection = connections_.at(id);
  if (connection.rank < 0) {
    if (frame.type != wire::MsgType::hello) return protocol_error(id, "expected hello");
    return handle_hello(id, frame.payload);
  }
  const int rank = connection.rank;
  RankSession& session = sessions_[rank];
  std::string_view payload(frame.payload);
  switch (frame.type) {
    case wire::MsgType::put: {
      std::uint32_t key_size = 0;
      if (!wire::take_u32(payload, key_size) || key_size > payload.size() || key_size == 0)
        return protocol_error(id, "malformed put");
      pending_puts_.emplace_back(std::string(payload.substr(0, key_size)),
                                 std::string(payload.substr(key_size)));
      return;
    }
    case wire::MsgType::fence: {
      if (session.in_fence) return protocol_error(id, "fence while already in a fence");
      session.in_fence = true;
      if (++ranks_in_fence_ == options_.nranks)
        complete_fence();
      else
        fail_fence_if_stuck();
      return;
    }
    case wire::MsgType::get: {
      auto it = store_.find(frame.payload);
      if (it == store_.end())
        send_frame(id, wire::make_frame(wire::MsgType::get_missing));
      else
        send_frame(id, wire::make_frame(wire::MsgType::get_found, it->second));
      return;
    }
    case wire::MsgType::finalize:
      session.finalized = true;
      send_frame(id, wire::make_frame(wire::MsgType::finalize_ok));
      fail_fence_if_stuck();
      return;
    case wire::MsgType::abort: {
      std::uint32_t code = 0;
      if (!wire::take_u32(payload, code)) return protocol_error(id, "malformed abort");
      int signed_code = static_cast<int>(code);
      send_frame(id, wire::make_frame(wire::MsgType::abort_ok));
      int status = signed_code & 0xff;
      job_.rank_aborted(status == 0 ? 1 : status,
                        "rank " + std::to_string(rank) + " called abort (code " +
                            std::to_string(signed_code) + "): " + std::string(payload));
      return;
    }
    default:
      return protocol_error(id, "unknown message type");
  }
}

void StoreServer::handle_hello(std::uint32_t id, std::string_view payload) {
  std::uint32_t rank_index = 0;
  if (!wire::take_u32(payload, rank_index) || payload.size() < wire::job_key_size)
    return protocol_error(id, "malformed hello");
  std::string_view key = payload.substr(0, wire::job_key_size);
  payload.remove_prefix(wire::job_key_size);
  // A launch token is good once, for its own rank: whoever shows it first gets the slot,
  // so a stolen token can at worst make the real rank fail (and the job end), never let a
  // stranger in unnoticed.
  const bool by_token = rank_index < static_cast<std::uint32_t>(options_.nranks) &&
                        !sessions_[rank_index].launch_token.empty() &&
                        wire::same_secret(key, sessions_[rank_index].launch_token);
  const bool spent = rank_index < static_cast<std::uint32_t>(options_.nranks) &&
                     !sessions_[rank_index].spent_token.empty() &&
                     wire::same_secret(key, sessions_[rank_index].spent_token);
  std::string problem;
  if (spent)  // (whoever holds it has seen it used: this reveals nothing new)
    problem = "rank " + std::to_string(rank_index) +
              "'s launch token was already used: another process joined as rank " +
              std::to_string(rank_index) + " with it first";
  else if (!by_token && !wire::same_secret(key, job_key_))
    problem = "wrong job key";  // says nothing about this job to a stranger
  else if (payload != job_id_)
    problem = "job id " + std::string(payload) + " is not this job's (" + job_id_ + ")";
  else if (rank_index >= static_cast<std::uint32_t>(options_.nranks))
    problem = "rank " + std::to_string(rank_index) + " is out of range";
  else if (sessions_[rank_index].joined)
    problem = "rank " + std::to_string(rank_index) + " has already connected once";
  if (!problem.empty()) {
    ++unproven_stats_.rejected;
    // A stranger's failure is counted, and reported only the first few times; one that
    // concerns a real rank of this job (spent token, job id, rank) always.
    if (problem == "wrong job key")
      report_stranger("rejected a bootstrap connection: " + problem);
    else
      report("rejected a bootstrap connection: " + problem);
    Connection& connection = connections_.at(id);
    send_frame(id, wire::make_frame(wire::MsgType::reject, problem));
    connection.close_after_flush = true;
    if (connection.outbox.empty()) close_connection(id);
    return;
  }
  RankSession& session = sessions_[rank_index];
  connections_.at(id).rank = static_cast<int>(rank_index);
  connections_.at(id).reader.set_limit(wire::max_payload_size);
  --unproven_;
  session.joined = true;
  session.connection_id = id;
  // Every rank is connected: the socket's name has served. (Before the last rank's
  // hello_ok: by the time every rank has joined, nothing is left for a SIGKILL to strand.)
  if (++ranks_joined_ == options_.nranks) boot_directory_.remove();
  if (by_token) session.spent_token = std::move(session.launch_token);
  session.launch_token.clear();  // spent
  send_frame(id, wire::make_frame(wire::MsgType::hello_ok, job_key_));
}

// ---- fences and failures ----

void StoreServer::complete_fence() {
  for (auto& [key, value] : pending_puts_) store_[std::move(key)] = std::move(value);
  pending_puts_.clear();
  ranks_in_fence_ = 0;
  for (RankSession& session : sessions_) {
    session.in_fence = false;
    if (session.connection_id)
      send_frame(*session.connection_id, wire::make_frame(wire::MsgType::fence_ok));
  }
}

// A fence needs every rank; one that finalized or exited will never come. Fail the fence
// (the waiting ranks' fence() returns an error) rather than let them hang.
void StoreServer::fail_fence_if_stuck() {
  if (ranks_in_fence_ == 0) return;
  int missing = -1;
  for (int r = 0; r < options_.nranks; ++r)
    if (!sessions_[r].in_fence && (sessions_[r].finalized || job_.has_exited(r))) missing = r;
  if (missing < 0) return;
  std::string reason = job_.who(missing) +
                       (sessions_[missing].finalized ? " finalized" : " exited") +
                       " while other ranks wait in a fence, so the fence can never complete";
  report(reason);
  ranks_in_fence_ = 0;
  for (RankSession& session : sessions_) {
    if (!session.in_fence) continue;
    session.in_fence = false;
    if (session.connection_id)
      send_frame(*session.connection_id, wire::make_frame(wire::MsgType::fence_failed, reason));
  }
}

void StoreServer::notify_failure(int failed) {
  if (sessions_[failed].failure_notified) return;
  sessions_[failed].failure_notified = true;
  std::string payload;
  wire::append_u32(payload, static_cast<std::uint32_t>(failed));
  const std::string frame = wire::make_frame(wire::MsgType::proc_failed, payload);
  for (int r = 0; r < options_.nranks; ++r)
    if (r != failed && sessions_[r].connection_id && !sessions_[r].finalized)
      send_frame(*sessions_[r].connection_id, frame);
}

// ---- sending and closing ----

void StoreServer::send_frame(std::uint32_t id, const std::string& frame) {
  Connection& connection = connections_.at(id);
  std::string_view rest(frame);
  if (connection.outbox.empty()) {
    ssize_t n =
        ::send(connection.socket.get(), frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno != EAGAIN && errno != EINTR) return;  // gone: the read side sees EOF
    if (n > 0) rest.remove_prefix(static_cast<std::size_t>(n));
    if (rest.empty()) return;
    loop_.rewatch(connection.socket.get(), EPOLLIN | EPOLLOUT, event_tag(Source::connection, id));
  }
  connection.outbox.append(rest);
}

void StoreServer::flush_outbox(std::uint32_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& connection = it->second;
  while (!connection.outbox.empty()) {
    ssize_t n = ::send(connection.socket.get(), connection.outbox.data(), connection.outbox.size(),
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n < 0) {
      connection.outbox.clear();
      break;
    }
    connection.outbox.erase(0, static_cast<std::size_t>(n));
  }
  if (connection.close_after_flush) return close_connection(id);
  loop_.rewatch(connection.socket.get(), EPOLLIN, event_tag(Source::connection, id));
}

void StoreServer::protocol_error(std::uint32_t id, const std::string& what) {
  int rank = connections_.at(id).rank;
  if (rank >= 0) {
    report("protocol error on the bootstrap connection of rank " + std::to_string(rank) + ": " +
           what + "; closing it");
  } else {
    ++unproven_stats_.rejected;
    report_stranger("protocol error on the bootstrap connection of an unidentified process: " +
                    what + "; closing it");
  }
  on_disconnect(id);
}

void StoreServer::report_stranger(const std::string& message) {
  if (stranger_reports_ < stranger_reports_shown)
    report(message);
  else if (stranger_reports_ == stranger_reports_shown)
    report(
        "more bootstrap connections that do not prove the job key: counted (boot.unproven.*, "
        "sluicerun --stats), not reported one by one");
  ++stranger_reports_;
}

// At --boot-handshake-limit: closes the oldest connection still waiting for its hello,
// after a last look at what it sent (a rank's hello may be sitting in its socket).
void StoreServer::make_room_for_stranger() {
  while (unproven_ >= handshake_limit_) {
    std::optional<std::uint32_t> oldest;
    for (const auto& [id, connection] : connections_)
      if (connection.rank < 0 && (!oldest || id < *oldest)) oldest = id;
    if (!oldest) return;
    read_connection(*oldest, false);
    auto it = connections_.find(*oldest);
    if (it == connections_.end() || it->second.rank >= 0) continue;
    if (!it->second.close_after_flush) {  // (a rejected one was counted already)
      ++unproven_stats_.evicted;
      report_stranger("closed the oldest bootstrap connection that has not sent a hello (" +
                      std::to_string(handshake_limit_) + " may wait at once)");
    }
    close_connection(*oldest);
  }
}

void StoreServer::report_stranger_summary() const {
  if (stranger_reports_ <= stranger_reports_shown) return;
  const UnprovenStats& u = unproven_stats_;
  report("closed " + std::to_string(u.rejected + u.evicted + u.timed_out) +
         " bootstrap connections that did not prove the job key (rejected " +
         std::to_string(u.rejected) + ", evicted " + std::to_string(u.evicted) + ", timed out " +
         std::to_string(u.timed_out) + ")");
}

void StoreServer::register_stats(sluice::util::StatsRegistry& registry) const {
  using sluice::util::Unit;
  registry.add("boot", "unproven.accepted", Unit::count, &unproven_stats_.accepted,
               "bootstrap connections accepted (ranks and strangers)");
  registry.add("boot", "unproven.rejected", Unit::count, &unproven_stats_.rejected,
               "connections closed for a wrong hello or another frame before it");
  registry.add("boot", "unproven.evicted", Unit::count, &unproven_stats_.evicted,
               "silent connections closed to stay within --boot-handshake-limit");
  registry.add("boot", "unproven.timed_out", Unit::count, &unproven_stats_.timed_out,
               "connections closed for sending no hello within --boot-handshake-timeout");
  registry.add("boot", "unproven.peak", Unit::count, &unproven_stats_.peak,
               "most connections waiting for their hello at once");
}

void StoreServer::on_disconnect(std::uint32_t id) {
  int rank = connections_.at(id).rank;
  close_connection(id);
  if (rank < 0) return;
  sessions_[rank].connection_id.reset();
  if (!sessions_[rank].finalized) job_.connection_lost(rank);
}

void StoreServer::close_connection(std::uint32_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  loop_.unwatch(it->second.socket.get());
  if (it->second.rank >= 0)
    sessions_[it->second.rank].connection_id.reset();
  else
    --unproven_;
  connections_.erase(it);
}

// ---- hello deadlines ----

Clock::duration StoreServer::hello_timeout() const {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options_.handshake_timeout_seconds));
}

std::optional<Clock::time_point> StoreServer::next_hello_deadline() const {
  if (unproven_ == 0) return std::nullopt;
  std::optional<Clock::time_point> next;
  for (const auto& [id, connection] : connections_)
    if (connection.rank < 0 && (!next || connection.accepted_at + hello_timeout() < *next))
      next = connection.accepted_at + hello_timeout();
  return next;
}

void StoreServer::close_silent_connections(Clock::time_point now) {
  if (unproven_ == 0) return;
  std::vector<std::uint32_t> silent;
  for (const auto& [id, connection] : connections_)
    if (connection.rank < 0 && now >= connection.accepted_at + hello_timeout())
      silent.push_back(id);
  for (std::uint32_t id : silent) {
    ++unproven_stats_.timed_out;
    report_stranger("closed a bootstrap connection that sent no hello");
    close_connection(id);
  }
}

}  // namespace sluicerun
