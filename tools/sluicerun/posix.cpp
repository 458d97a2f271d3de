#include "posix.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/random.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace sluicerun {

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, -1);
    } else {
      return false;
    }
  }
  return true;
}

bool set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

std::string signal_name(int signo) {
  const char* description = ::strsignal(signo);
  return description ? description : "unknown signal";
}

void report(const std::string& message) {
  write_all(STDERR_FILENO, "sluicerun: " + message + "\n");
}

std::optional<std::string> random_secret() {
  std::uint64_t random[2] = {0, 0};
  if (getrandom(random, sizeof random, 0) != sizeof random) return std::nullopt;
  char key[40];
  std::snprintf(key, sizeof key, "%016llx%016llx", static_cast<unsigned long long>(random[0]),
                static_cast<unsigned long long>(random[1]));
  return key;
}

}  // namespace sluicerun
