#include "event_loop.hpp"

#include <cerrno>
#include <cstring>

namespace sluicerun {

bool EventLoop::open(std::string& error) {
  epoll_.reset(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll_.valid()) {
    error = std::string("epoll_create1: ") + std::strerror(errno);
    return false;
  }
  return true;
}

void EventLoop::watch(int fd, std::uint32_t events, std::uint64_t tag) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = tag;
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &event);
}

void EventLoop::rewatch(int fd, std::uint32_t events, std::uint64_t tag) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = tag;
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, fd, &event);
}

void EventLoop::unwatch(int fd) {
  ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

int EventLoop::wait(std::span<epoll_event> events, int timeout_ms) {
  return ::epoll_wait(epoll_.get(), events.data(), static_cast<int>(events.size()), timeout_ms);
}

}  // namespace sluicerun
