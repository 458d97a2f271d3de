// Built by tests/install against the installed native API (pkg-config and find_package).
#include <sluice/rma.hpp>
#include <sluice/sluice.hpp>

#include <cstdint>
#include <cstdio>
#include <span>

int main() {
  sluice::Session s;
  int value = s.rank() * 10;
  {
    // The one-sided API links from the prefix too: an atomic on the own memory.
    sluice::Rma rma(s);
    std::uint64_t word = 41, old = 0;
    sluice::RegisteredMemory mem;
    if (rma.register_memory(std::as_writable_bytes(std::span(&word, 1)), mem) != sluice::Errc::ok)
      return 1;
    sluice::Request r = rma.fetch_add<std::uint64_t>(s.rank(), mem.remote_key(), 0, 1, &old);
    if (s.wait(r) != sluice::Errc::ok || old != 41 || word != 42) return 1;
  }
  if (s.size() > 1) {
    if (s.rank() == 0) {
      int got = -1;
      if (s.recv(std::as_writable_bytes(std::span(&got, 1)), 1, 3) != sluice::Errc::ok) return 1;
      std::printf("native ok: size %d got %d\n", s.size(), got);
      return got == 10 ? 0 : 1;
    }
    if (s.rank() == 1 && s.send(std::as_bytes(std::span(&value, 1)), 0, 3) != sluice::Errc::ok)
      return 1;
  } else {
    std::printf("native ok: size 1\n");
  }
  return 0;
}
