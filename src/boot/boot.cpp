// Bootstrap client: the launcher's key-value store over a Unix socket (see boot_wire.hpp
// for the protocol), or a local store when the process runs as a singleton.
#include "boot/boot.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>

#include "boot/boot_wire.hpp"
#include "boot/pmix_client.hpp"
#include "util/unique_fd.hpp"

namespace sluice::detail {

namespace {

using bootwire::Frame;
using bootwire::FrameReader;
using bootwire::MsgType;

// Exit status for abort(): its low byte, but never 0, so an aborted job never looks
// successful to the shell.
int abort_exit_status(int code) {
  int status = code & 0xff;
  return status == 0 ? 1 : status;
}

std::string random_job_key() {
  std::random_device random;
  char key[33];
  std::snprintf(key, sizeof key, "%08x%08x%08x%08x", random(), random(), random(), random());
  return key;
}

bool valid_job_key(std::string_view key) {
  return key.size() == 32 && key.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

bool parse_int(const char* text, int& out) {
  if (text == nullptr || *text == '\0') return false;
  const char* end = text + std::strlen(text);
  auto [ptr, ec] = std::from_chars(text, end, out);
  return ec == std::errc() && ptr == end;
}

// Reads SLUICE_<name> as an integer >= min_value, or explains why it cannot.
bool read_int_variable(const char* name, int min_value, int& out, std::string& error) {
  std::string full = std::string("SLUICE_") + name;
  const char* text = std::getenv(full.c_str());
  if (text == nullptr) {
    error = full + " is not set (it is set by sluicerun for every rank)";
    return false;
  }
  if (!parse_int(text, out) || out < min_value) {
    error = full + "='" + text + "' is not a valid value";
    return false;
  }
  return true;
}

class SingletonClient final : public IdentifiedBootClient {
 public:
  SingletonClient() {
    std::random_device random;
    char id[64];
    std::snprintf(id, sizeof id, "singleton-%ld-%08x", static_cast<long>(getpid()), random());
    id_.job_id = id;
    id_.job_key = random_job_key();
  }

  // Alone in the job, a put is visible at once and fence has nobody to wait for.
  Errc put(std::string_view key, std::string_view value) override {
    if (!bootwire::put_fits(key, value)) return Errc::invalid_argument;
    std::lock_guard lock(mutex_);
    store_[std::string(key)] = std::string(value);
    return Errc::ok;
  }
  Errc fence() override { return Errc::ok; }
  bool get(std::string_view key, std::string& value) override {
    std::lock_guard lock(mutex_);
    auto it = store_.find(std::string(key));
    if (it == store_.end()) return false;
    value = it->second;
    return true;
  }
  Errc finalize() override { return Errc::ok; }
  void abort(int code, std::string_view reason) override {
    std::fprintf(stderr, "sluice: abort (code %d): %.*s\n", code, static_cast<int>(reason.size()),
                 reason.data());
    std::fflush(nullptr);
    std::_Exit(abort_exit_status(code));
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::string> store_;
};

class LauncherClient final : public IdentifiedBootClient {
 public:
  LauncherClient(util::UniqueFd socket, JobIdentity id) : socket_(std::move(socket)) {
    id_ = std::move(id);
  }

  // Closing without finalize() is how the launcher learns that this rank failed.
  ~LauncherClient() override { close_socket(); }

  // Ranks must not outlive their launcher, also when the launch command forks (sshd, a shell
  // that runs the program as its child), where the parent-death signal reaches only the
  // launch command: a thread sleeps in poll() for the store connection's hang-up (it never
  // reads, so requests and notices are unaffected) and ends the process when the launcher
  // is gone. Stopped before every orderly close (finalize, abort, the destructor).
  void watch_launcher() {
    if (parent_is_launcher()) return;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    stop_read_ = util::UniqueFd(fds[0]);
    stop_write_ = util::UniqueFd(fds[1]);
    const int sock = socket_.get(), stop = stop_read_.get(), rank = id_.rank;
    watchdog_ = std::thread([sock, stop, rank] {
      for (;;) {
        pollfd p[2] = {{sock, POLLRDHUP, 0}, {stop, POLLIN, 0}};
        if (::poll(p, 2, -1) < 0) {
          if (errno == EINTR) continue;
          return;
        }
        if (p[1].revents) return;  // stopped
        if (p[0].revents & (POLLRDHUP | POLLHUP | POLLERR)) {
          std::fprintf(stderr,
                       "sluice: rank %d: the launcher closed the bootstrap connection (it is "
                       "gone); exiting\n",
                       rank);
          std::fflush(nullptr);
          std::_Exit(1);
        }
      }
    });
  }

  // A rank that sluicerun started itself (its parent, at the other end of the unix socket)
  // needs no thread: the parent-death signal ends it with the launcher. A second thread
  // would make every socket call of the process pay glibc's cancellation bookkeeping (two
  // atomic operations per call, on the latency path of every network driver).
  bool parent_is_launcher() const {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(socket_.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0 ||
        cred.pid != ::getppid())
      return false;
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return false;
    return ::getppid() == cred.pid;  // else the launcher died before the signal was armed
  }

  // Sends hello and waits for the launcher's verdict.
  bool handshake(std::string& error) {
    std::string payload;
    bootwire::append_u32(payload, static_cast<std::uint32_t>(id_.rank));
    payload += id_.job_key;  // over TCP this is what keeps strangers out of the store
    payload += id_.job_id;
    Frame reply;
    if (request(MsgType::hello, payload, reply) != Errc::ok) {
      error = "the launcher closed the bootstrap connection during the handshake";
      return false;
    }
    if (reply.type == MsgType::hello_ok) {
      // The job key, which a rank started with a launch token learns only here.
      if (!valid_job_key(reply.payload)) {
        error = "the launcher's hello_ok carries no valid job key";
        return false;
      }
      id_.job_key = reply.payload;
      return true;
    }
    error = reply.type == MsgType::reject ? "the launcher rejected this rank: " + reply.payload
                                          : "unexpected reply from the launcher";
    return false;
  }

  Errc put(std::string_view key, std::string_view value) override {
    if (!bootwire::put_fits(key, value)) return Errc::invalid_argument;
    std::string payload;
    payload.reserve(4 + key.size() + value.size());
    bootwire::append_u32(payload, static_cast<std::uint32_t>(key.size()));
    payload.append(key);
    payload.append(value);
    std::lock_guard lock(mutex_);
    return send_frame(bootwire::make_frame(MsgType::put, payload));
  }

  Errc fence() override {
    std::lock_guard lock(mutex_);
    Frame reply;
    if (Errc e = request(MsgType::fence, {}, reply); e != Errc::ok) return e;
    if (reply.type != MsgType::fence_ok) return Errc::peer_dead;  // fence_failed
    cache_.clear();  // values may have been replaced by this fence
    return Errc::ok;
  }

  bool get(std::string_view key, std::string& value) override {
    if (key.empty() || key.size() > bootwire::max_key_size) return false;
    std::lock_guard lock(mutex_);
    std::string key_text(key);
    if (auto it = cache_.find(key_text); it != cache_.end()) {
      value = it->second;
      return true;
    }
    Frame reply;
    if (request(MsgType::get, key, reply) != Errc::ok) return false;
    if (reply.type != MsgType::get_found) return false;
    value = reply.payload;
    cache_.emplace(std::move(key_text), std::move(reply.payload));
    return true;
  }

  Errc finalize() override {
    std::lock_guard lock(mutex_);
    if (finalized_) return Errc::ok;
    stop_watching();  // the launcher closes the connection after finalize_ok
    Frame reply;
    Errc e = request(MsgType::finalize, {}, reply);
    if (e == Errc::ok && reply.type != MsgType::finalize_ok) e = Errc::internal;
    finalized_ = true;
    close_socket();
    return e;
  }

  void take_failed_ranks(std::vector<int>& out) override {
    // Never waits: a request in flight on another thread collects the notices itself.
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) return;
    while (socket_.valid()) {
      Frame frame;
      if (reader_.next(frame) == FrameReader::Status::frame) {
        note_failure(frame);  // outside a request nothing else may arrive
        continue;
      }
      char buffer[4096];
      const ssize_t n = ::recv(socket_.get(), buffer, sizeof buffer, MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) mark_broken();
        break;
      }
      reader_.feed(buffer, static_cast<std::size_t>(n));
    }
    out.insert(out.end(), failed_.begin(), failed_.end());
    failed_.clear();
  }

  void abort(int code, std::string_view reason) override {
    stop_watching();  // the launcher ends the job now, closing the connection
    {
      std::lock_guard lock(mutex_);
      std::string payload;
      bootwire::append_u32(payload, static_cast<std::uint32_t>(code));
      payload.append(reason);
      Frame reply;
      // Wait (bounded) until the launcher has recorded the abort, so the job reports it
      // rather than this process's exit.
      if (send_frame(bootwire::make_frame(MsgType::abort, payload)) != Errc::ok ||
          receive_frame(reply, 5000) != Errc::ok) {
        std::fprintf(stderr, "sluice: rank %d abort (code %d): %.*s\n", id_.rank, code,
                     static_cast<int>(reason.size()), reason.data());
      }
    }
    std::fflush(nullptr);
    std::_Exit(abort_exit_status(code));
  }

 private:
  void stop_watching() {
    if (!watchdog_.joinable()) return;
    const char c = 0;
    (void)!::write(stop_write_.get(), &c, 1);
    watchdog_.join();
  }
  // The watchdog polls the socket: it stops before the descriptor goes.
  void close_socket() {
    stop_watching();
    socket_.reset();
  }

  // A broken connection stays broken: every later call reports peer_dead at once.
  Errc mark_broken() {
    close_socket();
    return Errc::peer_dead;
  }

  Errc send_frame(const std::string& frame) {
    if (!socket_.valid()) return Errc::peer_dead;
    std::size_t sent = 0;
    while (sent < frame.size()) {
      ssize_t n = ::send(socket_.get(), frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return mark_broken();
      sent += static_cast<std::size_t>(n);
    }
    return Errc::ok;
  }

  // Blocks in poll (no spinning) until a whole frame arrives; timeout_ms < 0 waits forever.
  Errc receive_frame(Frame& frame, int timeout_ms = -1) {
    for (;;) {
      if (!socket_.valid()) return Errc::peer_dead;
      switch (reader_.next(frame)) {
        case FrameReader::Status::frame:
          if (note_failure(frame)) continue;
          return Errc::ok;
        case FrameReader::Status::oversized:
          return mark_broken();
        case FrameReader::Status::incomplete:
          break;
      }
      pollfd p{socket_.get(), POLLIN, 0};
      int ready = ::poll(&p, 1, timeout_ms);
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) return Errc::cancelled;
      if (ready < 0) return mark_broken();
      char buffer[65536];
      ssize_t n = ::recv(socket_.get(), buffer, sizeof buffer, 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) return mark_broken();
      reader_.feed(buffer, static_cast<std::size_t>(n));
    }
  }

  // A failure notice is not a reply: remember the rank for take_failed_ranks().
  bool note_failure(const Frame& frame) {
    if (frame.type != MsgType::proc_failed) return false;
    std::string_view payload(frame.payload);
    std::uint32_t rank = 0;
    if (bootwire::take_u32(payload, rank) && rank < static_cast<std::uint32_t>(id_.size))
      failed_.push_back(static_cast<int>(rank));
    return true;
  }

  Errc request(MsgType type, std::string_view payload, Frame& reply) {
    if (Errc e = send_frame(bootwire::make_frame(type, payload)); e != Errc::ok) return e;
    return receive_frame(reply);
  }

  std::mutex mutex_;  // one request in flight on the socket at a time
  util::UniqueFd socket_;
  std::thread watchdog_;  // watch_launcher()
  util::UniqueFd stop_read_, stop_write_;
  FrameReader reader_;
  bool finalized_ = false;
  std::vector<int> failed_;  // failure notices not yet taken
  // Values fetched since the last fence; they cannot change until the next one.
  std::unordered_map<std::string, std::string> cache_;
};

util::UniqueFd connect_unix_socket(const std::string& path, std::string& error) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) {
    error = "SLUICE_BOOT_ADDR is too long for a Unix socket path: " + path;
    return {};
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  util::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) {
    error = std::string("cannot create a socket: ") + std::strerror(errno);
    return {};
  }
  while (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    if (errno == EINTR) continue;
    error = "cannot connect to the launcher at " + path + ": " + std::strerror(errno);
    return {};
  }
  return fd;
}

// "tcp:IP:PORT" (IPv4, or [IPv6]:PORT): the launcher of a multi-host job.
util::UniqueFd connect_tcp_socket(std::string_view address, std::string& error) {
  std::string_view rest = address.substr(4);
  std::string host, port;
  if (rest.starts_with("[")) {
    auto close = rest.find("]:");
    if (close != std::string_view::npos) {
      host = rest.substr(1, close - 1);
      port = rest.substr(close + 2);
    }
  } else if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  if (host.empty() || port.empty()) {
    error = "SLUICE_BOOT_ADDR=" + std::string(address) + " is not tcp:HOST:PORT";
    return {};
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    error =
        "cannot resolve the launcher address " + std::string(address) + ": " + ::gai_strerror(rc);
    return {};
  }
  util::UniqueFd fd;
  for (addrinfo* a = found; a != nullptr && !fd; a = a->ai_next) {
    fd.reset(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd) continue;
    int rc;
    do rc = ::connect(fd.get(), a->ai_addr, a->ai_addrlen);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      error =
          "cannot connect to the launcher at " + std::string(address) + ": " + std::strerror(errno);
      fd.reset();
    }
  }
  ::freeaddrinfo(found);
  if (fd) {
    int one = 1;  // requests are small and each waits for its reply
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  } else if (error.empty()) {
    error = "cannot connect to the launcher at " + std::string(address);
  }
  return fd;
}

std::string joined_with_token;  // launch_token_used()

// How long a rank waits for its launch token on standard input: as long as the launcher
// waits for its hello.
constexpr int launch_token_timeout_ms = 10000;

// Reads the launch token line sluicerun writes first on the rank's standard input, one
// byte at a time so that nothing after the line (rank 0 gets the launcher's input next) is
// taken from the program.
bool read_launch_token(std::string& token, std::string& error) {
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(launch_token_timeout_ms);
  token.clear();
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          give_up - std::chrono::steady_clock::now())
                          .count();
    pollfd p{STDIN_FILENO, POLLIN, 0};
    const int ready = left > 0 ? ::poll(&p, 1, static_cast<int>(left)) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      error =
          "SLUICE_LAUNCH_TOKEN=stdin: no launch token on standard input within 10 s (the "
          "launch command must pass standard input through; ssh -n does not)";
      return false;
    }
    char c = 0;
    const ssize_t n = ready > 0 ? ::read(STDIN_FILENO, &c, 1) : -1;
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      error =
          "SLUICE_LAUNCH_TOKEN=stdin: standard input ended before the launch token (the "
          "launch command must pass standard input through; ssh -n does not)";
      return false;
    }
    if (c == '\n') return true;
    if (token.size() > bootwire::job_key_size) {
      error = "SLUICE_LAUNCH_TOKEN=stdin: standard input does not start with a launch token";
      return false;
    }
    token += c;
  }
}

}  // namespace

const std::string& launch_token_used() {
  return joined_with_token;
}

std::unique_ptr<BootClient> join_job(std::string& error, bool exit_when_launcher_gone) {
  const char* address = std::getenv("SLUICE_BOOT_ADDR");
  if ((address == nullptr || *address == '\0') && pmix_in_environment())
    return make_pmix_client(error);  // started by mpirun / srun with PMIx, not sluicerun
  if (address == nullptr || *address == '\0') {
    // A size > 1 without an address means a broken launch, not a singleton.
    const char* size_text = std::getenv("SLUICE_SIZE");
    int size = 1;
    if (size_text != nullptr && (!parse_int(size_text, size) || size != 1)) {
      error = std::string("SLUICE_SIZE=") + size_text +
              " but SLUICE_BOOT_ADDR is not set: start the job with sluicerun";
      return nullptr;
    }
    return std::make_unique<SingletonClient>();
  }

  int rank = 0, size = 0, local_rank = 0, local_size = 0;
  if (!read_int_variable("SIZE", 1, size, error) || !read_int_variable("RANK", 0, rank, error) ||
      !read_int_variable("LOCAL_SIZE", 1, local_size, error) ||
      !read_int_variable("LOCAL_RANK", 0, local_rank, error))
    return nullptr;
  if (rank >= size || local_rank >= local_size || local_size > size) {
    error = "inconsistent launcher variables: SLUICE_RANK=" + std::to_string(rank) +
            " SLUICE_SIZE=" + std::to_string(size) +
            " SLUICE_LOCAL_RANK=" + std::to_string(local_rank) +
            " SLUICE_LOCAL_SIZE=" + std::to_string(local_size);
    return nullptr;
  }
  const char* job_id = std::getenv("SLUICE_JOB_ID");
  if (job_id == nullptr || *job_id == '\0') {
    error = "SLUICE_JOB_ID is not set (it is set by sluicerun for every rank)";
    return nullptr;
  }

  // The secret hello proves this rank with: the job key, or with `sluicerun --hosts
  // --launch` a one-time launch token, which comes on standard input
  // (SLUICE_LAUNCH_TOKEN=stdin): neither ever goes on a command line.
  std::string job_key;
  if (const char* token = std::getenv("SLUICE_LAUNCH_TOKEN")) {
    if (std::string_view(token) == "stdin") {
      if (!read_launch_token(job_key, error)) return nullptr;
      joined_with_token = job_key;
    } else {
      job_key = token;
    }
  } else if (const char* key = std::getenv("SLUICE_JOB_KEY")) {
    job_key = key;
  }
  if (!valid_job_key(job_key)) {
    error =
        "SLUICE_JOB_KEY (or SLUICE_LAUNCH_TOKEN) is not set or not 32 lowercase hex digits "
        "(sluicerun sets it)";
    return nullptr;
  }

  std::string_view where(address);
  util::UniqueFd fd = where.starts_with("tcp:") ? connect_tcp_socket(where, error)
                                                : connect_unix_socket(address, error);
  if (!fd) return nullptr;
  auto client = std::make_unique<LauncherClient>(
      std::move(fd), JobIdentity{rank, size, local_rank, local_size, job_id, job_key});
  if (!client->handshake(error)) return nullptr;
  if (exit_when_launcher_gone) client->watch_launcher();
  return client;
}

}  // namespace sluice::detail
