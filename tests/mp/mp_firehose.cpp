// Firehose over a real driver (run with SLUICE_RMA_FIREHOSE=on and small SLUICE_FIREHOSE_*
// budgets, shm with SLUICE_RMA_PATH=packets, tcp or udp, 2-4 ranks):
//   workingset  every rank puts to and gets from every other one over a working set larger
//               than M + MAXVICTIM (firehoses move, victims are reused and unpinned), with
//               every byte verified; then a working set that fits: all hits.
//   freed       rank 0 frees parts of a registered (dynamic) region: memory replaced by a
//               new mapping at the same address gets the later puts (the stale firehoses are
//               refused, moved again), memory unmapped for good makes puts and gets fail
//               with remote_access and the target carries on.
//
//   strategies  the comparison strategies (run with SLUICE_RMA_FIREHOSE=rndv, rndv-unpin or
//               pin-all): the same verified puts and gets, and each one's bookkeeping (every
//               op handshakes or none does, released pins, pinned memory).
//   inline      8-byte puts each to a bucket not mapped yet: every one misses and travels
//               inside its move request, and lands.
//
//   mp_firehose workingset | freed | strategies | inline
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "check.hpp"
#include "sluice/rma.hpp"
#include "sluice/sluice.hpp"

using namespace sluice;

namespace {

constexpr int kKeyTag = 910;
constexpr std::size_t kB = 64 * 1024;  // SLUICE_FIREHOSE_BUCKET in the tests' environment

std::vector<RemoteKey> exchange_keys(Session& s, const RegisteredMemory& mem) {
  const int n = s.size();
  std::vector<std::array<std::byte, RemoteKey::packed_size>> in(static_cast<std::size_t>(n));
  const auto mine = mem.remote_key().pack();
  std::vector<Request> reqs;
  for (int p = 0; p < n; ++p) {
    reqs.push_back(s.irecv(in[static_cast<std::size_t>(p)], p, kKeyTag));
    reqs.push_back(s.isend(mine, p, kKeyTag));
  }
  CHECK(s.waitall(reqs) == Errc::ok, "key exchange");
  std::vector<RemoteKey> keys;
  for (auto& k : in) keys.push_back(RemoteKey::unpack(std::span<const std::byte, 24>(k)));
  return keys;
}

Errc wait(Session& s, Request r) {
  return s.wait(r);
}

uint64_t counter(Session& s, const char* name) {
  const auto v = s.counter(name);
  CHECK(v.has_value(), "no counter %s (is SLUICE_RMA_FIREHOSE=on?)", name);
  return *v;
}

uint64_t env_size(const char* name) {
  const char* v = std::getenv(name);
  CHECK(v, "%s must be set", name);
  uint64_t n = std::strtoull(v, nullptr, 10);
  const char u = v[std::strlen(v) - 1];
  if (u == 'K') n <<= 10;
  if (u == 'M') n <<= 20;
  return n;
}

void test_workingset(Session& s, Rma& rma) {
  const int n = s.size(), me = s.rank();
  const uint64_t m = env_size("SLUICE_FIREHOSE_M"), victims = env_size("SLUICE_FIREHOSE_MAXVICTIM");
  // Each origin owns a slice of every target's region; the target-side working set (all
  // slices) is larger than M + MAXVICTIM.
  const std::size_t slice = ((m + victims) / static_cast<std::size_t>(n - 1) / kB + 4) * kB;
  std::vector<std::byte> region(slice * static_cast<std::size_t>(n));
  RegisteredMemory mem;
  CHECK(rma.register_memory(region, mem) == Errc::ok, "register");
  const auto keys = exchange_keys(s, mem);
  // What this rank wrote into its slice at each target (the source of its puts too).
  std::vector<std::vector<std::byte>> shadow(static_cast<std::size_t>(n),
                                             std::vector<std::byte>(slice));
  std::mt19937_64 rng(static_cast<uint64_t>(me) * 7919 + 1);
  s.barrier();
  const auto target_of = [&](int i) { return (me + 1 + i % (n - 1)) % n; };
  const auto base_of = [&] { return static_cast<uint64_t>(me) * slice; };
  constexpr int kOps = 1200, kWindow = 4;
  std::vector<std::byte> got;
  for (int i = 0; i < kOps; ++i) {
    const int t = target_of(i);
    auto& sh = shadow[static_cast<std::size_t>(t)];
    const std::size_t len = rng() % 4 == 0 ? 1 + rng() % (2 * kB) : 1 + rng() % 512;
    const std::size_t off = rng() % (slice - len);
    for (std::size_t k = 0; k < len; ++k) sh[off + k] = static_cast<std::byte>(rng());
    CHECK(rma.put({sh.data() + off, len}, t, keys[static_cast<std::size_t>(t)], base_of() + off) ==
              Errc::ok,
          "put");
    if (i % kWindow == kWindow - 1) {
      CHECK(rma.flush() == Errc::ok, "flush after op %d", i);
      // A get of a random range, compared with what was put.
      const std::size_t glen = 1 + rng() % kB, goff = rng() % (slice - glen);
      got.assign(glen, std::byte{0});
      CHECK(wait(s, rma.iget(got, t, keys[static_cast<std::size_t>(t)], base_of() + goff)) ==
                Errc::ok,
            "get");
      CHECK(std::memcmp(got.data(), sh.data() + goff, glen) == 0, "get %zu bytes at %zu from %d",
            glen, goff, t);
    }
  }
  CHECK(rma.flush() == Errc::ok, "flush");
  s.barrier();
  // Every byte of every slice, read back through firehoses.
  for (int t = 0; t < n; ++t) {
    if (t == me) continue;
    got.assign(slice, std::byte{0});
    for (std::size_t off = 0; off < slice; off += kB)
      CHECK(rma.get({got.data() + off, std::min(kB, slice - off)}, t,
                    keys[static_cast<std::size_t>(t)], base_of() + off) == Errc::ok,
            "get");
    CHECK(rma.flush() == Errc::ok, "final gets");
    CHECK(std::memcmp(got.data(), shadow[static_cast<std::size_t>(t)].data(), slice) == 0,
          "slice at rank %d differs", t);
  }
  s.barrier();
  const uint64_t peak = counter(s, "firehose.pinned_peak");
  CHECK(peak <= m + victims, "pinned peak %llu > M + MAXVICTIM", (unsigned long long)peak);
  CHECK(counter(s, "firehose.pinned_bytes") <= m + victims, "pinned bytes over the bound");
  CHECK(counter(s, "firehose.hits") > 0, "no firehose hit");
  CHECK(counter(s, "firehose.moves") > 0, "no move");
  CHECK(counter(s, "firehose.recycled") > 0, "the working set never made firehoses move");
  CHECK(counter(s, "firehose.stale_retries") == 0, "stale retries with no memory freed");
  CHECK(counter(s, "firehose.refused_moves") == 0, "a move was refused");

  // A working set within the firehoses: after the first moves, every op hits.
  s.barrier();
  const uint64_t hits0 = counter(s, "firehose.hits"), misses0 = counter(s, "firehose.misses");
  constexpr int kFit = 300;
  for (int i = 0; i < kFit; ++i) {
    const int t = target_of(i);
    auto& sh = shadow[static_cast<std::size_t>(t)];
    const std::size_t off = rng() % (kB - 64);
    for (std::size_t k = 0; k < 64; ++k) sh[off + k] = static_cast<std::byte>(rng());
    CHECK(wait(s, rma.iput({sh.data() + off, 64}, t, keys[static_cast<std::size_t>(t)],
                           base_of() + off)) == Errc::ok,
          "fitting put");
  }
  const uint64_t hits = counter(s, "firehose.hits") - hits0;
  const uint64_t misses = counter(s, "firehose.misses") - misses0;
  CHECK(misses <= static_cast<uint64_t>(2 * (n - 1)) && hits + misses == kFit,
        "fitting working set: %llu hits, %llu misses", (unsigned long long)hits,
        (unsigned long long)misses);
  s.barrier();
  if (me == 0) {
    std::printf(
        "firehose: hits %llu misses %llu moves %llu recycled %llu victims_reused "
        "%llu unpins %llu peak %llu\n",
        (unsigned long long)counter(s, "firehose.hits"),
        (unsigned long long)counter(s, "firehose.misses"),
        (unsigned long long)counter(s, "firehose.moves"),
        (unsigned long long)counter(s, "firehose.recycled"),
        (unsigned long long)counter(s, "firehose.victims_reused"),
        (unsigned long long)counter(s, "firehose.unpins"), (unsigned long long)peak);
  }
}

// Puts and gets between every pair over `slice` bytes per origin, verified. Returns the
// number of this rank's ops to other ranks.
uint64_t verified_traffic(Session& s, Rma& rma, std::size_t slice, int ops) {
  const int n = s.size(), me = s.rank();
  std::vector<std::byte> region(slice * static_cast<std::size_t>(n));
  RegisteredMemory mem;
  CHECK(rma.register_memory(region, mem) == Errc::ok, "register");
  const auto keys = exchange_keys(s, mem);
  std::vector<std::vector<std::byte>> shadow(static_cast<std::size_t>(n),
                                             std::vector<std::byte>(slice));
  std::mt19937_64 rng(static_cast<uint64_t>(me) * 104729 + 3);
  const auto base = static_cast<uint64_t>(me) * slice;
  uint64_t count = 0;
  std::vector<std::byte> got;
  s.barrier();
  for (int i = 0; i < ops; ++i) {
    const int t = (me + 1 + i % (n - 1)) % n;
    const RemoteKey& key = keys[static_cast<std::size_t>(t)];
    auto& sh = shadow[static_cast<std::size_t>(t)];
    const std::size_t len = 1 + rng() % (i % 3 == 0 ? 2 * kB : 256);
    const std::size_t off = rng() % (slice - len);
    for (std::size_t k = 0; k < len; ++k) sh[off + k] = static_cast<std::byte>(rng());
    CHECK(rma.put({sh.data() + off, len}, t, key, base + off) == Errc::ok, "put");
    ++count;
    if (i % 4 == 3) {
      CHECK(rma.flush() == Errc::ok, "flush");
      const std::size_t glen = 1 + rng() % kB, goff = rng() % (slice - glen);
      got.assign(glen, std::byte{0});
      CHECK(wait(s, rma.iget(got, t, key, base + goff)) == Errc::ok, "get");
      ++count;
      CHECK(std::memcmp(got.data(), sh.data() + goff, glen) == 0, "get %zu at %zu from %d", glen,
            goff, t);
    }
  }
  CHECK(rma.flush() == Errc::ok, "flush");
  // A message to every peer behind this rank's last one-sided packets (a release, say) on
  // the same ordered route: once a rank has them all, it has handled those packets.
  std::vector<Request> reqs;
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    reqs.push_back(s.irecv(std::span<std::byte>(), p, kKeyTag + 1));
    reqs.push_back(s.isend(std::span<const std::byte>(), p, kKeyTag + 1));
  }
  CHECK(s.waitall(reqs) == Errc::ok, "drain exchange");
  s.barrier();
  return count;
}

void test_strategies(Session& s, Rma& rma) {
  const char* mode = std::getenv("SLUICE_RMA_FIREHOSE");
  CHECK(mode, "SLUICE_RMA_FIREHOSE must be set");
  const std::string strategy = mode ? mode : "";
  const std::size_t slice = 24 * kB;
  const uint64_t pinned_before = counter(s, "pinning.pinned_bytes");
  const uint64_t ops = verified_traffic(s, rma, slice, 240);
  const uint64_t direct = counter(s, "pinning.direct_ops");
  const uint64_t handshake = counter(s, "pinning.handshake_ops");
  const uint64_t fallbacks = counter(s, "pinning.fallbacks");
  CHECK(direct + handshake + fallbacks == ops,
        "%llu ops, %llu direct + %llu handshake + %llu plain", (unsigned long long)ops,
        (unsigned long long)direct, (unsigned long long)handshake, (unsigned long long)fallbacks);
  CHECK(fallbacks == 0, "%llu ops fell back to plain packets", (unsigned long long)fallbacks);
  const uint64_t pinned = counter(s, "pinning.pinned_bytes");
  const uint64_t region = slice * static_cast<uint64_t>(s.size());
  if (strategy == "pin-all") {
    CHECK(handshake == 0 && counter(s, "pinning.handshakes") == 0, "pin-all handshook");
    // The region of this test was pinned whole while registered, and unpinned with it
    // (verified_traffic deregistered it on return).
    CHECK(counter(s, "pinning.pinned_peak") >= pinned_before + region,
          "pin-all: peak %llu bytes pinned, region %llu",
          (unsigned long long)counter(s, "pinning.pinned_peak"), (unsigned long long)region);
    CHECK(pinned == pinned_before, "pin-all: %llu bytes still pinned after deregistration",
          (unsigned long long)pinned);
  } else {
    CHECK(direct == 0, "rendezvous sent %llu ops without a handshake", (unsigned long long)direct);
    CHECK(counter(s, "pinning.handshakes") == handshake, "one pin request per op");
    CHECK(counter(s, "pinning.requests_served") > 0, "no pin request served");
    if (strategy == "rndv-unpin") {
      // Every op released its pins once complete; all peers are done (barrier): none left.
      CHECK(counter(s, "pinning.releases") == handshake, "%llu releases for %llu ops",
            (unsigned long long)counter(s, "pinning.releases"), (unsigned long long)handshake);
      CHECK(pinned == pinned_before, "rndv-unpin: %llu bytes still pinned",
            (unsigned long long)pinned);
      CHECK(counter(s, "pinning.unpins") > 0, "nothing unpinned");
    } else {
      CHECK(counter(s, "pinning.releases") == 0, "rndv released pins");
      CHECK(counter(s, "pinning.unpins") == 0, "rndv unpinned");
      CHECK(pinned > pinned_before && pinned <= pinned_before + region + kB,
            "rndv: %llu bytes pinned", (unsigned long long)pinned);
    }
  }
  s.barrier();
}

void test_inline(Session& s, Rma& rma) {
  const int n = s.size(), me = s.rank();
  constexpr std::size_t kPuts = 6;  // buckets per origin, within F for 2-4 ranks
  std::vector<std::byte> region((kPuts * static_cast<std::size_t>(n) + 1) * kB);
  RegisteredMemory mem;
  CHECK(rma.register_memory(region, mem) == Errc::ok, "register");
  const auto keys = exchange_keys(s, mem);
  const int t = (me + 1) % n;
  // Offsets from a bucket boundary of the target's region, one bucket per put.
  const auto first = [](const RemoteKey& k) { return (k.addr + kB - 1) / kB * kB - k.addr; };
  const uint64_t inline0 = counter(s, "firehose.inline_puts");
  const uint64_t misses0 = counter(s, "firehose.misses");
  s.barrier();
  for (std::size_t k = 0; k < kPuts; ++k) {
    const uint64_t v = 0x1000 * static_cast<uint64_t>(me + 1) + k;
    const std::size_t off = first(keys[static_cast<std::size_t>(t)]) +
                            (static_cast<std::size_t>(me) * kPuts + k) * kB + 8 * k;
    CHECK(wait(s, rma.iput(std::as_bytes(std::span(&v, 1)), t, keys[static_cast<std::size_t>(t)],
                           off)) == Errc::ok,
          "inline put %zu", k);
  }
  CHECK(counter(s, "firehose.misses") - misses0 == kPuts, "every put to a new bucket misses");
  CHECK(counter(s, "firehose.inline_puts") - inline0 == kPuts, "%llu of %zu puts inline",
        (unsigned long long)(counter(s, "firehose.inline_puts") - inline0), kPuts);
  s.barrier();
  const int from = (me + n - 1) % n;
  for (std::size_t k = 0; k < kPuts; ++k) {
    uint64_t v = 0;
    std::memcpy(&v,
                region.data() + first(mem.remote_key()) +
                    (static_cast<std::size_t>(from) * kPuts + k) * kB + 8 * k,
                8);
    CHECK(v == 0x1000 * static_cast<uint64_t>(from + 1) + k, "put %zu from %d: %llx", k, from,
          (unsigned long long)v);
  }
  CHECK(counter(s, "firehose.inline_served") >= kPuts, "target wrote %llu inline puts",
        (unsigned long long)counter(s, "firehose.inline_served"));
  s.barrier();
}

void fill(std::byte* p, std::size_t n, int seed) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>((i * 31 + 7 * seed) & 0xff);
}

void test_freed(Session& s, Rma& rma) {
  const int n = s.size(), me = s.rank();
  // Rank 0's dynamic region: 12 buckets of its own mapping, registered as one.
  constexpr std::size_t kBuckets = 12, kLen = kBuckets * kB;
  std::byte* region = nullptr;
  std::vector<std::byte> none(8);
  RegisteredMemory mem;
  if (me == 0) {
    void* p = mmap(nullptr, kLen + kB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED, "mmap");
    region = reinterpret_cast<std::byte*>((reinterpret_cast<uintptr_t>(p) + kB - 1) / kB * kB);
    std::memset(region, 0, kLen);
    CHECK(rma.register_memory({region, kLen}, mem) == Errc::ok, "register");
  } else {
    CHECK(rma.register_memory(none, mem) == Errc::ok, "register");
  }
  const RemoteKey key = exchange_keys(s, mem)[0];
  // Each origin writes its own 4 KiB in every bucket.
  const std::size_t part = 4096;
  const auto at = [&](std::size_t bucket) {
    return bucket * kB + static_cast<std::size_t>(me) * part;
  };
  std::vector<std::byte> a(part), b(part), got(part);
  fill(a.data(), part, 1 + me);
  fill(b.data(), part, 100 + me);
  if (me != 0) {
    for (std::size_t k = 0; k < kBuckets; ++k)
      CHECK(wait(s, rma.iput(a, 0, key, at(k))) == Errc::ok, "put A to bucket %zu", k);
  }
  s.barrier();
  if (me == 0) {
    for (int o = 1; o < n; ++o)
      for (std::size_t k = 0; k < kBuckets; ++k) {
        std::vector<std::byte> want(part);
        fill(want.data(), part, 1 + o);
        CHECK(std::memcmp(region + k * kB + static_cast<std::size_t>(o) * part, want.data(),
                          part) == 0,
              "A from %d in bucket %zu", o, k);
      }
    // Buckets 4-7: freed and replaced by new (zeroed) memory at the same addresses.
    void* again = mmap(region + 4 * kB, 4 * kB, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK(again == region + 4 * kB, "mmap fixed");
    // Buckets 8-11: freed for good.
    CHECK(munmap(region + 8 * kB, 4 * kB) == 0, "munmap");
  }
  s.barrier();
  if (me != 0) {
    const uint64_t stale0 = counter(s, "firehose.stale_retries");
    // The replaced memory gets the new data (its firehoses were stale: moved again).
    for (std::size_t k = 4; k < 8; ++k)
      CHECK(wait(s, rma.iput(b, 0, key, at(k))) == Errc::ok, "put B to replaced bucket %zu", k);
    CHECK(counter(s, "firehose.stale_retries") > stale0, "no stale firehose was refused");
    // The unmapped memory: puts and gets fail, never written.
    for (std::size_t k = 8; k < kBuckets; ++k) {
      const Errc e = wait(s, rma.iput(b, 0, key, at(k)));
      CHECK(e == Errc::remote_access, "put to freed bucket %zu: %s", k,
            std::string(to_string(e)).c_str());
      const Errc g = wait(s, rma.iget(got, 0, key, at(k)));
      CHECK(g == Errc::remote_access, "get from freed bucket %zu: %s", k,
            std::string(to_string(g)).c_str());
    }
    // The rest of the region still works, through its firehoses.
    for (std::size_t k = 0; k < 4; ++k) {
      CHECK(wait(s, rma.iput(b, 0, key, at(k))) == Errc::ok, "put B to bucket %zu", k);
      CHECK(wait(s, rma.iget(got, 0, key, at(k))) == Errc::ok, "get bucket %zu", k);
      CHECK(std::memcmp(got.data(), b.data(), part) == 0, "get back bucket %zu", k);
    }
  }
  s.barrier();
  if (me == 0) {
    CHECK(counter(s, "firehose.invalidations") >= 8, "freed buckets not invalidated: %llu",
          (unsigned long long)counter(s, "firehose.invalidations"));
    CHECK(counter(s, "firehose.refused_stale") > 0, "no access through a stale firehose refused");
    for (int o = 1; o < n; ++o)
      for (std::size_t k = 0; k < 8; ++k) {
        std::vector<std::byte> want(part);
        fill(want.data(), part, 100 + o);
        CHECK(std::memcmp(region + k * kB + static_cast<std::size_t>(o) * part, want.data(),
                          part) == 0,
              "B from %d in bucket %zu", o, k);
      }
    // In the replaced buckets, nothing but the new puts: the rest is still zero.
    for (std::size_t k = 4; k < 8; ++k)
      for (std::size_t i = 0; i < kB; ++i) {
        const std::size_t owner = i / part;
        if (owner >= 1 && owner < static_cast<std::size_t>(n)) continue;
        CHECK(region[k * kB + i] == std::byte{0}, "stale byte in replaced bucket %zu at %zu", k, i);
      }
    std::printf("firehose freed: invalidations %llu refused_stale %llu\n",
                (unsigned long long)counter(s, "firehose.invalidations"),
                (unsigned long long)counter(s, "firehose.refused_stale"));
  }
  s.barrier();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "workingset";
  Session s;
  test::g_rank = s.rank();
  CHECK(s.size() >= 2, "needs 2 ranks or more");
  {
    Rma rma(s);
    if (which == "workingset") test_workingset(s, rma);
    if (which == "freed") test_freed(s, rma);
    if (which == "strategies") test_strategies(s, rma);
    if (which == "inline") test_inline(s, rma);
  }
  if (s.rank() == 0) std::printf("mp_firehose %s ok: %d ranks\n", which.c_str(), s.size());
  return 0;
}
