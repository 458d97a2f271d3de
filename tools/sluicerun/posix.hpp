// Small RAII wrappers and helpers over POSIX calls used by the launcher.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

namespace sluicerun {

// Owns one file descriptor; closes it when destroyed.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Writes everything, waiting (in poll, not spinning) if `fd` is non-blocking and full.
// Returns false when the destination is gone (e.g. EPIPE).
bool write_all(int fd, std::string_view data);

// Sets O_NONBLOCK; false on failure.
bool set_nonblocking(int fd);

// "Killed", "Segmentation fault", ...
std::string signal_name(int signo);

}  // namespace sluicerun
