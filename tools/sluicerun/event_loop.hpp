// The launcher's one event loop: an epoll set over the bootstrap listener and connections,
// the signalfd and the ranks' output pipes. Each part of the launcher registers its own
// descriptors with a tag saying where an event comes from; the job dispatches on the tag.
#pragma once

#include <sys/epoll.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "posix.hpp"

namespace sluicerun {

using Clock = std::chrono::steady_clock;

// Where an epoll event comes from: the kind in the high half of the tag, an id (rank or
// connection) in the low half.
enum class Source : std::uint32_t { listener, signals, rank_stdout, rank_stderr, connection };

inline std::uint64_t event_tag(Source source, std::uint64_t id) {
  return (static_cast<std::uint64_t>(source) << 32) | (id & 0xffffffffu);
}
inline Source source_of(std::uint64_t tag) {
  return static_cast<Source>(tag >> 32);
}
inline std::uint32_t id_of(std::uint64_t tag) {
  return static_cast<std::uint32_t>(tag);
}

// Owns the epoll descriptor.
class EventLoop {
 public:
  bool open(std::string& error);

  void watch(int fd, std::uint32_t events, std::uint64_t tag);
  void rewatch(int fd, std::uint32_t events, std::uint64_t tag);
  void unwatch(int fd);

  // epoll_wait into `events`: the number of events, or -1 with errno set.
  int wait(std::span<epoll_event> events, int timeout_ms);

 private:
  UniqueFd epoll_;
};

}  // namespace sluicerun
