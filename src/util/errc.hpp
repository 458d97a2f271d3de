// Errc: the status every layer returns on the data path (no exceptions there). Defined at
// the bottom layer so drivers and protocols need nothing above util; the public header
// include/sluice/sluice.hpp re-exports it (include/sluice/errc.hpp is a link to this file).
#ifndef SLUICE_UTIL_ERRC_HPP
#define SLUICE_UTIL_ERRC_HPP
// (An include guard, not #pragma once: this file is reached under two names.)

#include <string_view>

namespace sluice {

enum class Errc : int {
  ok = 0,
  truncated,         // receive buffer shorter than the message; Status::size has the real size
  peer_dead,         // the peer this operation involves has failed
  invalid_argument,  // bad rank, tag, buffer or request
  no_memory,
  cancelled,
  internal,
  // a one-sided access the target refused: unknown remote key, or a range outside the
  // registered memory it names
  remote_access,
};

std::string_view to_string(Errc e);

}  // namespace sluice

#endif  // SLUICE_UTIL_ERRC_HPP
