// The job side of tcp_flood.py: a tcp job that keeps exchanging verified messages while a
// stranger floods every rank's listener with connections (frame headers announcing large
// payloads, and silent ones). Each rank publishes its pid, and the next rank's listening
// address, as files in $FLOOD_DIR; the stranger creates $FLOOD_DIR/done when it has
// finished. Then each rank checks that its statistics counted the rejects:
//   tcp.unproven.rejected >= $FLOOD_LARGE (every header announcing a payload before a hello),
//   tcp.unproven.evicted + timed_out >= $FLOOD_SILENT (every silent connection closed),
//   tcp.unproven.peak <= $SLUICE_TCP_HANDSHAKE_LIMIT (default 256).
// The stranger measures the ranks' memory itself (/proc/<pid>/status).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "check.hpp"
#include "core/engine.hpp"
#include "sluice/sluice.hpp"

namespace {

using sluice::Errc;

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// Written under a temporary name and renamed, so the stranger never reads half a file.
void publish(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string tmp = dir + "/." + name + ".tmp";
  {
    std::ofstream f(tmp);
    f << text << "\n";
  }
  CHECK(std::rename(tmp.c_str(), (dir + "/" + name).c_str()) == 0, "rename %s", name.c_str());
}

unsigned char pattern(int round, int from, std::size_t i) {
  return static_cast<unsigned char>(round * 7 + from * 31 + i * 13 + (i >> 9));
}

// One round: every rank sends `size` bytes to the next and receives from the previous.
void ring_round(sluice::Session& s, int round, std::vector<unsigned char>& out,
                std::vector<unsigned char>& in, std::size_t size) {
  const int n = s.size(), r = s.rank();
  const int next = (r + 1) % n, prev = (r + n - 1) % n;
  for (std::size_t i = 0; i < size; ++i) out[i] = pattern(round, r, i);
  sluice::Request rq = s.irecv(std::as_writable_bytes(std::span(in.data(), size)), prev, 5);
  CHECK(s.send(std::as_bytes(std::span(out.data(), size)), next, 5) == Errc::ok, "send round %d",
        round);
  sluice::Status st;
  CHECK(s.wait(rq, &st) == Errc::ok, "recv round %d", round);
  CHECK(st.size == size, "round %d: %zu bytes, want %zu", round, st.size, size);
  for (std::size_t i = 0; i < size; ++i)
    CHECK(in[i] == pattern(round, prev, i), "round %d: byte %zu from rank %d damaged", round, i,
          prev);
}

}  // namespace

int main() {
  sluice::Session s;
  sluice::test::g_rank = s.rank();
  const int n = s.size(), r = s.rank();
  CHECK(n >= 2, "needs 2 ranks or more");
  const char* dir_env = std::getenv("FLOOD_DIR");
  CHECK(dir_env && *dir_env, "FLOOD_DIR is not set");
  const std::string dir = dir_env;
  const int next = (r + 1) % n;
  CHECK(std::string(s.driver_name(next)) == "tcp", "rank %d is served by %s, want tcp", next,
        std::string(s.driver_name(next)).c_str());

  constexpr std::size_t kSizes[] = {0, 8, 4096, 70000, 1 << 20};
  std::vector<unsigned char> out(1 << 20), in(1 << 20);
  int round = 0;
  // Warm up: connections open, buffers at their steady size, before the stranger measures.
  for (int k = 0; k < 4; ++k)
    for (std::size_t size : kSizes) ring_round(s, round++, out, in, size);
  CHECK(s.barrier() == Errc::ok, "barrier");

  publish(dir, "addr" + std::to_string(next), sluice::detail::current_engine()->peer_address(next));
  publish(dir, "pid" + std::to_string(r), std::to_string(getpid()));

  // Under the flood: rounds go on until the stranger says it is done (rank 0 looks and
  // tells the others, so that every rank stops after the same round).
  for (;;) {
    unsigned char stop = 0;
    if (r == 0) {
      stop = access((dir + "/done").c_str(), F_OK) == 0 ? 1 : 0;
      for (int p = 1; p < n; ++p)
        CHECK(s.send(std::as_bytes(std::span(&stop, 1)), p, 6) == Errc::ok, "send stop");
    } else {
      CHECK(s.recv(std::as_writable_bytes(std::span(&stop, 1)), 0, 6) == Errc::ok, "recv stop");
    }
    if (stop) break;
    ring_round(s, round, out, in, kSizes[static_cast<std::size_t>(round) % std::size(kSizes)]);
    ++round;
    if (round % 64 == 0) usleep(1000);  // leave the stranger some CPU on a 2-core host
  }

  const auto count = [&](const char* name) { return s.counter(name).value_or(0); };
  const uint64_t rejected = count("tcp.unproven.rejected");
  const uint64_t evicted = count("tcp.unproven.evicted");
  const uint64_t timed_out = count("tcp.unproven.timed_out");
  const uint64_t peak = count("tcp.unproven.peak");
  std::printf(
      "flood: rank %d: %d rounds, unproven rejected=%llu evicted=%llu timed_out=%llu "
      "peak=%llu\n",
      r, round, static_cast<unsigned long long>(rejected), static_cast<unsigned long long>(evicted),
      static_cast<unsigned long long>(timed_out), static_cast<unsigned long long>(peak));
  CHECK(s.counter("tcp.unproven.rejected").has_value(), "no tcp.unproven.* counters");
  CHECK(rejected >= env_or("FLOOD_LARGE", 0), "rejected %llu, want %llu or more",
        static_cast<unsigned long long>(rejected),
        static_cast<unsigned long long>(env_or("FLOOD_LARGE", 0)));
  CHECK(evicted + timed_out >= env_or("FLOOD_SILENT", 0), "silent connections closed: %llu",
        static_cast<unsigned long long>(evicted + timed_out));
  CHECK(peak <= env_or("SLUICE_TCP_HANDSHAKE_LIMIT", 256), "peak %llu",
        static_cast<unsigned long long>(peak));
  std::printf("flood: rank %d ok\n", r);
  return 0;
}
