// Small RAII wrappers and helpers over POSIX calls used by the launcher.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <optional>
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

// The launcher's diagnostics: one line "sluicerun: <message>" on stderr.
void report(const std::string& message);

// 128 random bits as 32 hex digits (the job key, launch tokens); nullopt when the kernel
// gives no random bytes.
std::optional<std::string> random_secret();

}  // namespace sluicerun
