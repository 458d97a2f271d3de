// Shared by firsttouch and pipeline: fresh mappings and one timed round trip between ranks
// 0 and 1, and switching the registration strategy on both ranks.
#pragma once

#include <sys/mman.h>
#include <unistd.h>
#include <sluice/introspect.hpp>
#include <sluice/sluice.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace sluice::bench {

// The median of `v` (the mean of the two middle values for an even count; 0 when empty).
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// An anonymous mapping nothing has touched: the first message from it pays the page faults
// and any registration a new application buffer pays.
class Mapping {
 public:
  explicit Mapping(std::size_t size) : size_(size) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    len_ = size == 0 ? page : (size + page - 1) / page * page;
    void* p = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("cannot map " + std::to_string(size) + " bytes");
    data_ = static_cast<std::byte*>(p);
  }
  ~Mapping() { munmap(data_, len_); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  std::span<std::byte> span() { return {data_, size_}; }

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0, len_ = 0;
};

// Half a round trip in microseconds on rank 0 (0 on rank 1).
inline double half_round_trip(Session& s, std::span<std::byte> sbuf, std::span<std::byte> rbuf) {
  auto ok = [](Errc e) {
    if (e != Errc::ok) throw std::runtime_error("message failed: " + std::string(to_string(e)));
  };
  if (s.rank() == 0) {
    const auto t0 = std::chrono::steady_clock::now();
    ok(s.send(sbuf, 1, 7));
    ok(s.recv(rbuf, 1, 7));
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
               .count() /
           2;
  }
  ok(s.recv(rbuf, 0, 7));
  ok(s.send(sbuf, 0, 7));
  return 0;
}

// A few 8-byte round trips: both ranks awake and polling before a timed one (after a
// barrier a rank may still be waking up: milliseconds on a loaded machine).
inline void sync_hot(Session& s) {
  std::byte b[8] = {};
  for (int i = 0; i < 3; ++i) half_round_trip(s, b, b);
}

// Both ranks switch at once (between messages). False for an unknown strategy name.
inline bool use_strategy(Session& s, const std::string& name, std::size_t chunk = 0) {
  if (s.barrier() != Errc::ok) return false;
  const bool ok = introspect::set_registration_strategy(s, name, chunk);
  return s.barrier() == Errc::ok && ok;
}

}  // namespace sluice::bench
