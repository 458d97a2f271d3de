#include "util/errc.hpp"

namespace sluice {

std::string_view to_string(Errc e) {
  switch (e) {
    case Errc::ok:
      return "success";
    case Errc::truncated:
      return "message truncated: receive buffer too small";
    case Errc::peer_dead:
      return "peer process failed";
    case Errc::invalid_argument:
      return "invalid argument";
    case Errc::no_memory:
      return "out of memory";
    case Errc::cancelled:
      return "operation cancelled";
    case Errc::internal:
      return "internal error";
    case Errc::remote_access:
      return "remote access refused: unknown remote key or outside the registered memory";
  }
  return "unknown error";
}

}  // namespace sluice
