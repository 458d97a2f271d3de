// Small RAII wrappers and helpers over POSIX calls used by the launcher.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>

#include "util/unique_fd.hpp"

namespace sluicerun {

// The tree's one owning file descriptor type.
using sluice::util::UniqueFd;

// Writes everything, waiting (in poll, not spinning) if `fd` is non-blocking and full.
// Returns false when the destination is gone (e.g. EPIPE).
bool write_all(int fd, std::string_view data);

// Sets O_NONBLOCK; false on failure.
bool set_nonblocking(int fd);

// "Killed", "Segmentation fault", ...
std::string signal_name(int signo);

}  // namespace sluicerun
