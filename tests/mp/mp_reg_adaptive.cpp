// Strategy adaptive between two ranks (SLUICE_REG_STRATEGY=adaptive, tcp or udp zero-copy
// forced on): the data of every message is checked while the application's buffer reuse
// changes under the selector, and the counters show that it followed the change.
//
//   phase 1  one buffer, rewritten and sent again and again (the cache's best case)
//   phase 2  a fresh mapping for every message, unmapped after it (never a hit)
//   phase 3  one (new) buffer reused again: 600 messages, enough for the probes that register
//            a buffer to see whether it comes back (after phase 2 they are backed off to at
//            most one in 256 misses of a size class)
//
// Sizes alternate between 256 KiB and 1 MiB + 123 B (several superpipeline chunks and
// on-demand pinning chunks). The receiver checks every byte of every message. Checked from
// the counters (rank 0): in phases 1 and 3 the cache held the buffer for some sends
// (reg.adaptive.lookup.found grows: a registering choice put it there), and every send was
// decided by the selector. Nothing is timed: the choices themselves depend on the machine.
//
//   mp_reg_adaptive [MESSAGES_PER_PHASE]   (default 60)
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check.hpp"
#include "sluice/sluice.hpp"

namespace {

constexpr std::size_t kSizes[2] = {256 * 1024, 1024 * 1024 + 123};
constexpr std::size_t kMax = 1024 * 1024 + 123;
constexpr int kPhase3 = 600;
const char* const kArms[] = {"cached", "cache", "ondemand", "superpipeline", "copy"};

uint64_t word(uint64_t msg, uint64_t j) {
  return (msg << 40) ^ (j * 0x9E3779B97F4A7C15ull) ^ 0xa5a5a5a5a5a5a5a5ull;
}

void fill(std::byte* p, std::size_t n, uint64_t msg) {
  for (std::size_t j = 0; j * 8 < n; ++j) {
    const uint64_t w = word(msg, j);
    std::memcpy(p + j * 8, &w, std::min<std::size_t>(8, n - j * 8));
  }
}

bool intact(const std::byte* p, std::size_t n, uint64_t msg) {
  for (std::size_t j = 0; j * 8 < n; ++j) {
    const uint64_t w = word(msg, j);
    if (std::memcmp(p + j * 8, &w, std::min<std::size_t>(8, n - j * 8)) != 0) return false;
  }
  return true;
}

std::byte* map(std::size_t n) {
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED, "mmap %zu", n);
  return static_cast<std::byte*>(p);
}

uint64_t counter(const sluice::Session& s, const std::string& name) {
  return s.counter(name).value_or(0);
}

}  // namespace

int main(int argc, char** argv) {
  sluice::Session s;
  sluice::test::g_rank = s.rank();
  CHECK(s.size() == 2, "needs 2 ranks");
  const int per_phase = argc >= 2 ? std::atoi(argv[1]) : 60;
  CHECK(per_phase >= 20, "at least 20 messages per phase");
  std::vector<std::byte> sink(kMax);
  uint64_t msg = 0;
  uint64_t found_by_phase[3] = {}, decided = 0;
  const int length[3] = {per_phase, per_phase, kPhase3};
  for (int phase = 0; phase < 3; ++phase) {
    const uint64_t found0 = counter(s, "reg.adaptive.lookup.found");
    std::byte* kept = phase == 1 ? nullptr : map(kMax);
    for (int i = 0; i < length[phase]; ++i, ++msg) {
      const std::size_t n = kSizes[i % 2];
      const int tag = static_cast<int>(msg % 30000);
      if (s.rank() == 0) {
        std::byte* b = kept ? kept : map(n);
        fill(b, n, msg);
        CHECK(s.send({b, n}, 1, tag) == sluice::Errc::ok, "send %llu", (unsigned long long)msg);
        if (!kept) munmap(b, n);
      } else {
        std::memset(sink.data(), 0xee, n);
        sluice::Status st;
        CHECK(s.recv({sink.data(), n}, 0, tag, &st) == sluice::Errc::ok, "recv %llu",
              (unsigned long long)msg);
        CHECK(st.size == n, "message %llu: %zu bytes, not %zu", (unsigned long long)msg, st.size,
              n);
        CHECK(intact(sink.data(), n, msg), "message %llu (phase %d, %zu B): wrong bytes",
              (unsigned long long)msg, phase + 1, n);
      }
    }
    CHECK(s.barrier() == sluice::Errc::ok, "barrier");
    if (kept) munmap(kept, kMax);
    found_by_phase[phase] = counter(s, "reg.adaptive.lookup.found") - found0;
    if (s.rank() == 0) {
      std::string arms;
      for (const char* a : kArms)
        arms += std::string(" ") + a + "=" +
                std::to_string(counter(s, std::string("reg.adaptive.") + a));
      std::printf("rank 0: phase %d: buffer found in the cache for %llu of %d sends; so far:%s\n",
                  phase + 1, (unsigned long long)found_by_phase[phase], length[phase],
                  arms.c_str());
    }
  }
  if (s.rank() == 0) {
    for (const char* a : kArms) decided += counter(s, std::string("reg.adaptive.") + a);
    CHECK(decided == msg, "%llu sends decided, not %llu", (unsigned long long)decided,
          (unsigned long long)msg);
    CHECK(found_by_phase[0] > 0, "phase 1: the reused buffer was never found in the cache");
    CHECK(found_by_phase[2] > 0, "phase 3: the reused buffer was never found in the cache");
    std::printf("reg_adaptive: ok (%s)\n", std::string(s.driver_name(1)).c_str());
  }
  return 0;
}
