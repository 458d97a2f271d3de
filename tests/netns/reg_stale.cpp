// Stale-data test of the registration cache wired into the protocols: 2 ranks (one per
// namespace host, SLUICE_DRIVERS=tcp or udp, SLUICE_TCP_ZEROCOPY / SLUICE_UDP_ZEROCOPY=on,
// SLUICE_REG_STRATEGY=cache).
// For CYCLES cycles, rank 0 allocates a buffer, fills it with a pattern unique to the cycle,
// sends it (rendezvous, io_uring SEND_ZC from the registration the cache hands out) and
// frees it; rank 1 receives into a buffer allocated and freed the same ways, and checks
// every byte. The allocation kinds bring buffers back at addresses used before, on new pages:
//
//   malloc    glibc malloc/free with a 32 KiB mmap threshold (mallopt): mmap/munmap per block
//   mmap      mmap/munmap directly
//   mremap    a fresh mapping, sent from, then moved away by mremap (its pages go elsewhere)
//   dontneed  one mapping kept, MADV_DONTNEED before each fill (new zero pages on refault)
//   memalign  posix_memalign(4096)/free (mmapped above the threshold)
//
// A cached registration that survived one of these would pin the old pages, and SEND_ZC would
// send them. Over tcp the receiver would see an earlier cycle's pattern (stale bytes). Over
// udp the reliability layer's payload CRC, taken from the buffer as the sender sees it, does
// not match the old pages: the receiver drops each such datagram as corrupt (rel.corrupt,
// counted here per cycle as stale datagrams) and the copied resend delivers the right bytes;
// both count as stale data on the wire.
//
// The receiver. Over tcp under strategy cache the receiver registers its buffer through its
// own cache, and the driver reads the payload with io_uring READ_FIXED into that registration
// (tcp.read_fixed.payloads, checked > 0 on rank 1): a stale receive registration makes the
// kernel write into the old pages, and the application sees its 0xee fill instead of the
// data. --fixed-sender isolates that side: rank 0 sends every cycle from one buffer kept for
// the whole run (its registration never goes stale), so stale bytes can only come from the
// receiver. Over udp no fixed-buffer receive exists (udp_driver.hpp): the kernel scatters
// each datagram into the buffer's current pages, so with --fixed-sender even a cache without
// invalidation delivers no stale byte there (the udp twin checks exactly that).
//
// The same runs under SLUICE_REG_STRATEGY=ondemand (the sender's chunks pinned in the
// background through the cache, sent zero-copy once pinned) and superpipeline (chunks
// copied into staging buffers registered once), and adaptive (per send one of those, or
// the cache, or copy: the cache is asked first whether the buffer is registered, and a stale
// entry found there would send old pages): the counters checked follow the strategy.
//
//   reg_stale CYCLES            no stale byte and no stale datagram: exit 1 on any
//   reg_stale CYCLES --expect-stale   (with SLUICE_REG_CACHE_MONITOR=unsafe-none: the test
//                                     knob that keeps caching without invalidation) exit 1
//                                     unless every kind put stale data on the wire: the
//                                     proof the test can fail
//   ... --fixed-sender                rank 0 sends from one buffer kept all along: only the
//                                     receiver's buffers come back at old addresses
#include <malloc.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "../mp/check.hpp"
#include "sluice/sluice.hpp"

namespace {

enum Kind { kMalloc, kMmap, kMremap, kDontneed, kMemalign, kKinds };
const char* const kKindName[kKinds] = {"malloc", "mmap", "mremap", "dontneed", "memalign"};
// One size per kind, so a freed block's addresses come back for the next one of its kind.
constexpr std::size_t kSize[kKinds] = {96 * 1024 + 40, 128 * 1024, 64 * 1024, 160 * 1024,
                                       200 * 1024 + 8};
constexpr std::size_t kMaxSize = 256 * 1024;

uint64_t word(uint64_t cycle, uint64_t j) {
  return (cycle << 40) ^ (j * 0x9E3779B97F4A7C15ull) ^ 0x5a5a5a5a5a5a5a5aull;
}

void fill(std::byte* p, std::size_t n, uint64_t cycle) {
  for (std::size_t j = 0; j * 8 < n; ++j) {
    const uint64_t w = word(cycle, j);
    std::memcpy(p + j * 8, &w, std::min<std::size_t>(8, n - j * 8));
  }
}

std::size_t wrong_bytes(const std::byte* p, std::size_t n, uint64_t cycle) {
  std::size_t bad = 0;
  for (std::size_t j = 0; j * 8 < n; ++j) {
    const uint64_t w = word(cycle, j);
    const std::size_t k = std::min<std::size_t>(8, n - j * 8);
    if (std::memcmp(p + j * 8, &w, k) == 0) continue;
    for (std::size_t b = 0; b < k; ++b)
      bad += p[j * 8 + b] != reinterpret_cast<const std::byte*>(&w)[b];
  }
  return bad;
}

// The buffers of one rank, by kind.
struct Buffers {
  std::byte* dontneed = nullptr;    // kept for the whole run
  std::byte* mremap_dst = nullptr;  // where mremap moves the buffers to (replaced each time)
  std::set<uintptr_t> seen[kKinds];
  uint64_t reused[kKinds] = {};
  uint64_t own_mapping[kKinds] = {};  // malloc, memalign: blocks glibc mmapped for themselves

  Buffers() {
    dontneed = map(kMaxSize);
    mremap_dst = map(kMaxSize);
  }
  static std::byte* map(std::size_t n) {
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED, "mmap %zu", n);
    return static_cast<std::byte*>(p);
  }
  std::byte* get(Kind k) {
    std::byte* p = nullptr;
    switch (k) {
      case kMalloc:
        p = static_cast<std::byte*>(std::malloc(kSize[k]));
        break;
      case kMmap:
      case kMremap:
        p = map(kSize[k]);
        break;
      case kDontneed:
        CHECK(madvise(dontneed, kSize[k], MADV_DONTNEED) == 0, "madvise");
        p = dontneed;
        break;
      case kMemalign: {
        void* q = nullptr;
        CHECK(posix_memalign(&q, 4096, kSize[k]) == 0, "posix_memalign");
        p = static_cast<std::byte*>(q);
        break;
      }
      case kKinds:
        break;
    }
    CHECK(p, "allocation of %zu bytes", kSize[k]);
    // glibc marks a block it mmapped by itself with bit 1 (IS_MMAPPED) of its size word.
    if ((k == kMalloc || k == kMemalign) && (reinterpret_cast<const std::size_t*>(p)[-1] & 2))
      ++own_mapping[k];
    if (!seen[k].insert(reinterpret_cast<uintptr_t>(p)).second) ++reused[k];
    return p;
  }
  void put(Kind k, std::byte* p) {
    switch (k) {
      case kMalloc:
      case kMemalign:
        std::free(p);
        break;
      case kMmap:
        munmap(p, kSize[k]);
        break;
      case kMremap: {
        // The pages move to mremap_dst (replacing what was there); p's addresses are free.
        void* q = mremap(p, kSize[k], kSize[k], MREMAP_MAYMOVE | MREMAP_FIXED, mremap_dst);
        CHECK(q == mremap_dst, "mremap: %s", std::strerror(errno));
        break;
      }
      case kDontneed:
      case kKinds:
        break;
    }
  }
};

uint64_t counter(const sluice::Session& s, const char* name) {
  return s.counter(name).value_or(0);
}

}  // namespace

int main(int argc, char** argv) {
  // Every block from 32 KiB up is its own mapping, unmapped at free (and the threshold stays:
  // setting it turns glibc's dynamic threshold off).
  mallopt(M_MMAP_THRESHOLD, 32 * 1024);
  // ... and the heap's top keeps no 96 KiB spare to serve them from instead (glibc takes a
  // large request from the top chunk when it fits, mmapping only when it does not).
  mallopt(M_TOP_PAD, 0);
  mallopt(M_TRIM_THRESHOLD, 32 * 1024);
  sluice::Session s;
  sluice::test::g_rank = s.rank();
  CHECK(s.size() == 2, "needs 2 ranks");
  CHECK(argc >= 2, "usage: reg_stale CYCLES [--expect-stale] [--fixed-sender]");
  const long cycles = std::atol(argv[1]);
  bool expect_stale = false, fixed_sender = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    CHECK(a == "--expect-stale" || a == "--fixed-sender", "unknown argument %s", argv[i]);
    (a == "--expect-stale" ? expect_stale : fixed_sender) = true;
  }
  const char* monitor = std::getenv("SLUICE_REG_CACHE_MONITOR");
  const bool invalidating = !monitor || std::string(monitor) != "unsafe-none";
  CHECK(cycles >= kKinds, "at least %d cycles", kKinds);

  // The driver under test (its zero-copy counters): SLUICE_DRIVERS=tcp or udp.
  const char* drivers = std::getenv("SLUICE_DRIVERS");
  const std::string driver = drivers && std::string(drivers) == "udp" ? "udp" : "tcp";
  Buffers bufs;
  // --fixed-sender: rank 0's one buffer, filled anew every cycle (same pages all along).
  std::byte* kept = fixed_sender && s.rank() == 0 ? Buffers::map(kMaxSize) : nullptr;
  uint64_t stale_bytes = 0, stale_messages = 0, stale_by_kind[kKinds] = {};
  uint64_t stale_datagrams = 0, datagrams_by_kind[kKinds] = {};
  for (long c = 0; c < cycles; ++c) {
    const Kind k = static_cast<Kind>(c % kKinds);
    const std::size_t n = kSize[k];
    std::byte* p = kept ? kept : bufs.get(k);
    const int tag = static_cast<int>(c % 30000);
    if (s.rank() == 0) {
      fill(p, n, static_cast<uint64_t>(c));
      CHECK(s.send({p, n}, 1, tag) == sluice::Errc::ok, "send of cycle %ld", c);
    } else {
      std::memset(p, 0xee, n);  // nothing left from an earlier cycle can pass for this one
      sluice::Status st;
      const uint64_t corrupt = counter(s, "rel.corrupt");  // udp: rejected by the payload CRC
      CHECK(s.recv({p, n}, 0, tag, &st) == sluice::Errc::ok, "receive of cycle %ld", c);
      if (const uint64_t d = counter(s, "rel.corrupt") - corrupt) {
        if (stale_datagrams == 0)
          std::fprintf(stderr, "rank 1: cycle %ld (%s): %llu datagrams rejected by the CRC\n", c,
                       kKindName[k], (unsigned long long)d);
        stale_datagrams += d;
        datagrams_by_kind[k] += d;
      }
      CHECK(st.size == n, "cycle %ld: %zu bytes, not %zu", c, st.size, n);
      if (const std::size_t bad = wrong_bytes(p, n, static_cast<uint64_t>(c))) {
        if (stale_messages < 5)
          std::fprintf(stderr, "rank 1: cycle %ld (%s): %zu of %zu bytes stale\n", c, kKindName[k],
                       bad, n);
        stale_bytes += bad;
        ++stale_messages;
        stale_by_kind[k] += bad;
      }
    }
    if (!kept) bufs.put(k, p);
  }
  CHECK(s.barrier() == sluice::Errc::ok, "barrier");

  const uint64_t zc_sends = counter(s, (driver + ".zerocopy.sends").c_str());
  const char* env = std::getenv("SLUICE_REG_STRATEGY");
  const std::string strategy = env ? env : "cache";
  const uint64_t cached = counter(s, "reg.strategy.cache");
  const uint64_t ondemand = counter(s, "reg.strategy.ondemand");
  const uint64_t staged = counter(s, "reg.strategy.staged");
  const uint64_t hits = counter(s, "rcache.hits"), misses = counter(s, "rcache.misses");
  const uint64_t invalidations = counter(s, "rcache.invalidations");
  std::string reuse;
  for (int k = 0; k < kKinds; ++k)
    reuse += std::string(k ? " " : "") + kKindName[k] + "=" + std::to_string(bufs.reused[k]);
  std::printf(
      "rank %d: %ld cycles, strategy %s, addresses reused: %s; reg.strategy.cache=%llu "
      "reg.strategy.ondemand=%llu reg.strategy.staged=%llu rcache.hits=%llu misses=%llu "
      "invalidations=%llu %s.zerocopy.sends=%llu reg.ondemand.overlap_misses=%llu\n",
      s.rank(), cycles, strategy.c_str(), reuse.c_str(), (unsigned long long)cached,
      (unsigned long long)ondemand, (unsigned long long)staged, (unsigned long long)hits,
      (unsigned long long)misses, (unsigned long long)invalidations, driver.c_str(),
      (unsigned long long)zc_sends, (unsigned long long)counter(s, "reg.ondemand.overlap_misses"));
  // Every kind must really have brought addresses back (else the test proves nothing), and
  // malloc's and posix_memalign's blocks must be mappings of their own (unmapped at free).
  if (!kept) {
    for (int k = 0; k < kKinds; ++k)
      CHECK(bufs.reused[k] > 0, "%s never returned an address used before", kKindName[k]);
    std::printf("rank %d: glibc mmapped malloc=%llu memalign=%llu of %ld blocks each\n", s.rank(),
                (unsigned long long)bufs.own_mapping[kMalloc],
                (unsigned long long)bufs.own_mapping[kMemalign], cycles / kKinds);
    CHECK(bufs.own_mapping[kMalloc] > 0 && bufs.own_mapping[kMemalign] > 0,
          "glibc never mmapped a block for malloc or posix_memalign");
  }
  // The receiver's side of the registered path: over tcp under strategy cache the payloads
  // were read by READ_FIXED into the registrations its cache handed out (the first of a run
  // may come by recv(), its headers and a first part read ahead with them).
  if (s.rank() == 1 && driver == "tcp") {
    const uint64_t fixed = counter(s, "tcp.read_fixed.payloads");
    std::printf(
        "rank 1: tcp.placed=%llu tcp.read_fixed.payloads=%llu tcp.read_fixed.bytes=%llu "
        "tcp.placed_staged_bytes=%llu tcp.read_fixed.fallbacks=%llu\n",
        (unsigned long long)counter(s, "tcp.placed"), (unsigned long long)fixed,
        (unsigned long long)counter(s, "tcp.read_fixed.bytes"),
        (unsigned long long)counter(s, "tcp.placed_staged_bytes"),
        (unsigned long long)counter(s, "tcp.read_fixed.fallbacks"));
    if (strategy == "cache")
      CHECK(fixed > 0, "no payload was received by READ_FIXED into a registered buffer");
  }
  const auto all = static_cast<uint64_t>(cycles);
  if (strategy == "cache") {
    CHECK(cached >= all, "not every buffer went through the cache");
    if (s.rank() == 0)
      CHECK(zc_sends >= all, "not every message left by SEND_ZC (%llu)",
            (unsigned long long)zc_sends);
  } else if (s.rank() == 0) {
    // Only the sender registers under these strategies; some fragments leave by copy (an
    // overlap miss, a chunk below the driver's zero-copy minimum), most by SEND_ZC.
    if (strategy == "ondemand") {
      CHECK(ondemand >= all, "not every send was pinned on demand (%llu)",
            (unsigned long long)ondemand);
    } else if (strategy == "adaptive") {
      uint64_t chosen = 0;
      std::string by_arm;
      for (const char* arm : {"cached", "cache", "ondemand", "superpipeline", "copy"}) {
        const uint64_t v = counter(s, (std::string("reg.adaptive.") + arm).c_str());
        chosen += v;
        by_arm += std::string(" ") + arm + "=" + std::to_string(v);
      }
      std::printf("rank 0: adaptive chose%s\n", by_arm.c_str());
      CHECK(chosen >= all, "adaptive chose for %llu of the sends only", (unsigned long long)chosen);
    } else {
      CHECK(staged >= all, "not every send was staged (%llu)", (unsigned long long)staged);
    }
    CHECK(zc_sends > 0, "no fragment left by SEND_ZC");
  }

  if (s.rank() == 1) {
    std::string by_kind;
    for (int k = 0; k < kKinds; ++k)
      by_kind += std::string(k ? " " : "") + kKindName[k] + "=" + std::to_string(stale_by_kind[k]);
    std::printf("stale bytes: %llu in %llu of %ld messages (%s)\n", (unsigned long long)stale_bytes,
                (unsigned long long)stale_messages, cycles, by_kind.c_str());
    by_kind.clear();
    for (int k = 0; k < kKinds; ++k)
      by_kind +=
          std::string(k ? " " : "") + kKindName[k] + "=" + std::to_string(datagrams_by_kind[k]);
    std::printf("stale datagrams (rejected by the payload CRC): %llu (%s)\n",
                (unsigned long long)stale_datagrams, by_kind.c_str());
    if (expect_stale)  // every kind brings new pages under an old registration
      for (int k = 0; k < kKinds; ++k)
        CHECK(stale_by_kind[k] > 0 || datagrams_by_kind[k] > 0,
              "no stale data from %s although invalidation is off", kKindName[k]);
    else
      CHECK(stale_bytes == 0 && stale_datagrams == 0, "stale data received");
  }
  // The cache runs on both ranks under strategy cache, on the sender under ondemand, and not
  // at all under the staged strategies (their buffers are registered once and never freed).
  if (invalidating && !kept &&
      (strategy == "cache" ||
       ((strategy == "ondemand" || strategy == "adaptive") && s.rank() == 0)))
    CHECK(invalidations > 0, "the cache saw no invalidation");
  return 0;
}
