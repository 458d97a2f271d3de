// The native one-sided API (sluice/rma.hpp) with 1..n ranks over whatever driver the job
// uses: remote atomics from every rank, a compare-and-swap lock, puts and gets of sizes
// across fragment boundaries, active messages of each kind with replies, refused accesses,
// and (case `progress`) a target that only sleeps while its progress thread serves the rest.
//
//   mp_rma all | counter | lock | putget | am | errors | progress
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "check.hpp"
#include "sluice/rma.hpp"
#include "sluice/sluice.hpp"

using namespace sluice;

namespace {

constexpr int kKeyTag = 900;

// Every rank's remote key for `mem`, by rank.
std::vector<RemoteKey> exchange_keys(Session& s, const RegisteredMemory& mem) {
  const int n = s.size();
  std::vector<std::array<std::byte, RemoteKey::packed_size>> in(static_cast<std::size_t>(n));
  const auto mine = mem.remote_key().pack();
  std::vector<Request> reqs;
  for (int p = 0; p < n; ++p) {
    reqs.push_back(s.irecv(in[static_cast<std::size_t>(p)], p, kKeyTag));
    reqs.push_back(s.isend(mine, p, kKeyTag));
  }
  const Errc e = s.waitall(reqs);
  CHECK(e == Errc::ok, "key exchange: %s", std::string(to_string(e)).c_str());
  std::vector<RemoteKey> keys;
  for (auto& k : in) keys.push_back(RemoteKey::unpack(std::span<const std::byte, 24>(k)));
  return keys;
}

template <class T>
std::span<std::byte> bytes_of(std::vector<T>& v) {
  return std::as_writable_bytes(std::span(v));
}

Errc wait(Session& s, Request r) {
  return s.wait(r);
}

// Gathers `values` of every rank at rank 0 (others return empty).
std::vector<uint64_t> gather(Session& s, const std::vector<uint64_t>& values) {
  std::vector<uint64_t> all;
  if (s.rank() != 0) {
    CHECK(s.send(std::as_bytes(std::span(values)), 0, 901) == Errc::ok, "gather send");
    return all;
  }
  all = values;
  for (int p = 1; p < s.size(); ++p) {
    std::vector<uint64_t> got(values.size());
    CHECK(s.recv(bytes_of(got), p, 901) == Errc::ok, "gather recv");
    all.insert(all.end(), got.begin(), got.end());
  }
  return all;
}

// Atomics from every rank on rank 0's words: fetch-and-add (64 and 32 bit) where every old
// value is seen exactly once, a CAS-increment loop, and swaps whose old values chain.
void test_counter(Session& s, Rma& rma) {
  const int n = s.size(), me = s.rank();
  std::vector<uint64_t> words(8, 0);
  words[3] = 1000;                                   // 64-bit swap slot
  reinterpret_cast<uint32_t*>(&words[4])[0] = 2000;  // 32-bit swap slot
  RegisteredMemory mem;
  CHECK(rma.register_memory(bytes_of(words), mem) == Errc::ok, "register");
  const auto keys = exchange_keys(s, mem);
  s.barrier();
  const RemoteKey& k0 = keys[0];
  constexpr int kIters = 150;
  std::vector<uint64_t> olds64, olds32;
  for (int i = 0; i < kIters; ++i) {
    uint64_t o64 = 0;
    uint32_t o32 = 0;
    Request a = rma.fetch_add<uint64_t>(0, k0, 0, 1, &o64);
    Request b = rma.fetch_add<uint32_t>(0, k0, 8, 1, &o32);
    CHECK(s.wait(a) == Errc::ok && s.wait(b) == Errc::ok, "fetch_add");
    olds64.push_back(o64);
    olds32.push_back(o32);
    // Increment word 2 with a compare-and-swap loop (64 bit).
    uint64_t seen = 0;
    for (;;) {
      uint64_t old = 0;
      CHECK(wait(s, rma.compare_swap<uint64_t>(0, k0, 16, seen, seen + 1, &old)) == Errc::ok,
            "cas");
      if (old == seen) break;
      seen = old;
    }
    // And each rank's own neighbour: fetch-and-add on a signed 32-bit word (word 5).
    int32_t onext = 0;
    CHECK(wait(s, rma.fetch_add<int32_t>((me + 1) % n, keys[static_cast<std::size_t>((me + 1) % n)],
                                         40, -1, &onext)) == Errc::ok,
          "neighbour fetch_add");
  }
  uint64_t sw64 = 0;
  uint32_t sw32 = 0;
  CHECK(wait(s, rma.swap<uint64_t>(0, k0, 24, static_cast<uint64_t>(me), &sw64)) == Errc::ok,
        "swap64");
  CHECK(wait(s, rma.swap<uint32_t>(0, k0, 32, static_cast<uint32_t>(me + 10), &sw32)) == Errc::ok,
        "swap32");
  CHECK(rma.flush() == Errc::ok, "flush");
  s.barrier();
  CHECK(static_cast<int32_t>(reinterpret_cast<uint32_t*>(&words[5])[0]) == -kIters,
        "neighbour counter %d", static_cast<int32_t>(reinterpret_cast<uint32_t*>(&words[5])[0]));
  const auto all64 = gather(s, olds64);
  const auto all32 = gather(s, olds32);
  const auto swaps = gather(s, {sw64, sw32});
  if (me == 0) {
    const uint64_t total = static_cast<uint64_t>(n) * kIters;
    CHECK(words[0] == total, "64-bit counter %llu, expected %llu",
          static_cast<unsigned long long>(words[0]), static_cast<unsigned long long>(total));
    CHECK(reinterpret_cast<uint32_t*>(&words[1])[0] == total, "32-bit counter %u",
          reinterpret_cast<uint32_t*>(&words[1])[0]);
    CHECK(words[2] == total, "cas counter %llu", static_cast<unsigned long long>(words[2]));
    for (const auto* all : {&all64, &all32}) {
      std::vector<uint64_t> sorted = *all;
      std::sort(sorted.begin(), sorted.end());
      for (uint64_t i = 0; i < total; ++i)
        CHECK(sorted[i] == i, "fetch_add old values not a permutation at %llu",
              static_cast<unsigned long long>(i));
    }
    // Swaps: the old values plus the final one are the initial value and every rank's.
    std::vector<uint64_t> chain64{words[3]}, chain32{reinterpret_cast<uint32_t*>(&words[4])[0]};
    for (int p = 0; p < n; ++p) {
      chain64.push_back(swaps[static_cast<std::size_t>(2 * p)]);
      chain32.push_back(swaps[static_cast<std::size_t>(2 * p + 1)]);
    }
    std::vector<uint64_t> want64{1000}, want32{2000};
    for (int p = 0; p < n; ++p) {
      want64.push_back(static_cast<uint64_t>(p));
      want32.push_back(static_cast<uint64_t>(p + 10));
    }
    for (auto* v : {&chain64, &want64, &chain32, &want32}) std::sort(v->begin(), v->end());
    CHECK(chain64 == want64 && chain32 == want32, "swap chain broken");
  }
  s.barrier();
}

// A lock on rank 0 (32-bit compare-and-swap, released by swap) protecting a read-modify-
// write done by get and put: no increment may be lost.
void test_lock(Session& s, Rma& rma) {
  const int n = s.size(), me = s.rank();
  std::vector<uint64_t> words(4, 0);
  RegisteredMemory mem;
  CHECK(rma.register_memory(bytes_of(words), mem) == Errc::ok, "register");
  const auto keys = exchange_keys(s, mem);
  s.barrier();
  const RemoteKey& k0 = keys[0];
  constexpr int kIters = 60;
  const auto tag = static_cast<uint32_t>(me + 1);
  for (int i = 0; i < kIters; ++i) {
    for (;;) {
      uint32_t old = 0;
      CHECK(wait(s, rma.compare_swap<uint32_t>(0, k0, 0, 0, tag, &old)) == Errc::ok, "lock cas");
      if (old == 0) break;
      s.progress();
    }
    uint64_t value = 0;
    CHECK(wait(s, rma.iget(std::as_writable_bytes(std::span(&value, 1)), 0, k0, 8)) == Errc::ok,
          "get");
    ++value;
    CHECK(wait(s, rma.iput(std::as_bytes(std::span(&value, 1)), 0, k0, 8)) == Errc::ok, "put");
    uint32_t held = 0;
    CHECK(wait(s, rma.swap<uint32_t>(0, k0, 0, 0, &held)) == Errc::ok, "unlock");
    CHECK(held == tag, "lock held by %u, not by me (%u)", held, tag);
  }
  s.barrier();
  if (me == 0)
    CHECK(words[1] == static_cast<uint64_t>(n) * kIters, "lost updates: %llu of %d",
          static_cast<unsigned long long>(words[1]), n * kIters);
  s.barrier();
}

std::byte pattern(std::size_t i, int from, std::size_t size) {
  return static_cast<std::byte>((i * 131 + static_cast<std::size_t>(from) * 17 + size * 7 + 3) &
                                0xff);
}

// Whether puts and gets to `peer` take the ofi driver's fi_write / fi_read (the endpoint
// offers FI_RMA and nothing forces packets).
bool ofi_one_sided(Session& s, int peer) {
  const char* path = std::getenv("SLUICE_RMA_PATH");
  // The shm provider gives no wait object: the engine naps there, and one-sided operations
  // stay packets (RmaProtocol::registered_path).
  const char* provider = std::getenv("SLUICE_OFI_PROVIDER");
  return s.driver_name(peer) == "ofi" && s.counter("ofi.rma_enabled").value_or(0) == 1 &&
         !(path && std::string_view(path) == "packets") &&
         !(provider && std::string_view(provider) == "shm");
}

// Puts to the next rank and gets from the previous one's window, 8 B to several MiB
// (crossing every driver's fragment size), at an unaligned offset; request-based and
// implicit (flush) alternately.
void test_putget(Session& s, Rma& rma) {
  const int n = s.size(), me = s.rank();
  const std::vector<std::size_t> sizes{
      8, 100, 1400, 4096, 65536 + 13, std::size_t{1} << 20, (std::size_t{3} << 20) + 7};
  const std::size_t window = sizes.back() + 64;
  std::vector<std::byte> win(window), src(window), back(window);
  RegisteredMemory mem;
  CHECK(rma.register_memory(win, mem) == Errc::ok, "register");
  const auto keys = exchange_keys(s, mem);
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  const RemoteKey& knext = keys[static_cast<std::size_t>(next)];
  const RemoteKey& kprev = keys[static_cast<std::size_t>(prev)];
  constexpr std::size_t kOff = 7;
  s.barrier();
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const std::size_t size = sizes[k];
    for (std::size_t i = 0; i < size; ++i) src[i] = pattern(i, me, size);
    if (k % 2 == 0) {
      CHECK(wait(s, rma.iput({src.data(), size}, next, knext, kOff)) == Errc::ok, "iput %zu", size);
    } else {
      CHECK(rma.put({src.data(), size}, next, knext, kOff) == Errc::ok, "put %zu", size);
      CHECK(rma.flush(next) == Errc::ok, "flush %zu", size);
    }
    s.barrier();  // every put of this size is in place
    for (std::size_t i = 0; i < size; ++i)
      CHECK(win[kOff + i] == pattern(i, prev, size), "put of %zu from %d: byte %zu", size, prev, i);
    // Read back what our own put wrote into the next rank, and the previous rank's window.
    std::fill(back.begin(), back.end(), std::byte{0});
    if (k % 2 == 0) {
      CHECK(wait(s, rma.iget({back.data(), size}, next, knext, kOff)) == Errc::ok, "iget %zu",
            size);
    } else {
      CHECK(rma.get({back.data(), size}, next, knext, kOff) == Errc::ok, "get %zu", size);
      CHECK(rma.flush() == Errc::ok, "flush get %zu", size);
    }
    CHECK(std::memcmp(back.data(), src.data(), size) == 0, "get of %zu from %d differs", size,
          next);
    std::vector<std::byte> prevdata(size);
    CHECK(wait(s, rma.iget(prevdata, prev, kprev, kOff)) == Errc::ok, "iget prev %zu", size);
    for (std::size_t i = 0; i < size; ++i)
      CHECK(prevdata[i] == pattern(i, (prev + n - 1) % n, size), "get prev %zu byte %zu", size, i);
    s.barrier();  // nobody overwrites a window still being read
  }
  // Many small implicit puts in flight at once, one flush.
  std::vector<uint64_t> vals(512);
  for (std::size_t i = 0; i < vals.size(); ++i) vals[i] = (static_cast<uint64_t>(me) << 32) | i;
  for (std::size_t i = 0; i < vals.size(); ++i)
    CHECK(rma.put(std::as_bytes(std::span(&vals[i], 1)), next, knext, 8 * i) == Errc::ok, "put");
  CHECK(rma.flush() == Errc::ok, "flush many");
  s.barrier();
  for (std::size_t i = 0; i < vals.size(); ++i) {
    uint64_t v;
    std::memcpy(&v, win.data() + 8 * i, 8);
    CHECK(v == ((static_cast<uint64_t>(prev) << 32) | i), "small put %zu", i);
  }
  // Over a network driver the target's engine carried the puts out.
  const std::string_view drv = s.driver_name(prev);
  if (drv.substr(0, 3) == "tcp" || drv.substr(0, 3) == "udp")
    CHECK(s.counter("rma.served_puts").value_or(0) > 0, "no put served over %.*s",
          static_cast<int>(drv.size()), drv.data());
  // Over ofi with FI_RMA the puts and gets were fi_write / fi_read into the target's
  // registered window: the target registered it for a peer's key request, served nothing.
  if (ofi_one_sided(s, next)) {
    CHECK(s.counter("ofi.rma_writes").value_or(0) > 0, "no fi_write over ofi");
    CHECK(s.counter("ofi.rma_reads").value_or(0) > 0, "no fi_read over ofi");
    CHECK(s.counter("rma.one_sided_puts").value_or(0) > 0, "no one-sided put over ofi");
    CHECK(s.counter("rma.one_sided_gets").value_or(0) > 0, "no one-sided get over ofi");
    CHECK(s.counter("rma.key_requests").value_or(0) > 0, "no key request over ofi");
    CHECK(s.counter("rma.exposed_regions").value_or(0) > 0, "window not registered for peers");
  }
  s.barrier();
}

// Active messages of each kind to every rank (self too), each answered by a reply of the
// same kind; the long ones land in registered memory on both sides.
struct AmState {
  std::vector<RemoteKey> keys;
  std::vector<std::byte> inbox;    // long requests land at [src * kLong, ...)
  std::vector<std::byte> replies;  // long replies land at [target * kLong, ...)
  std::atomic<int> short_replies{0}, medium_replies{0}, long_replies{0};
  std::atomic<int> requests_handled{0};
  std::atomic<int> bad{0};
  int me = 0;
  std::vector<RemoteKey> reply_keys;  // every rank's `replies`
};
constexpr std::size_t kLong = 200 * 1024 + 3;
AmState g_am;

std::byte am_byte(std::size_t i, int from, int kind) {
  return static_cast<std::byte>((i * 7 + static_cast<std::size_t>(from) * 31 + kind * 11) & 0xff);
}

std::vector<AmHandler> am_handlers() {
  return {
      // 0: short request: reply_short(1) with args[0] * 2 + source
      [](AmToken& t, std::span<const uint64_t> args, std::span<std::byte> payload) {
        if (args.size() != 2 || !payload.empty() || t.is_reply()) ++g_am.bad;
        ++g_am.requests_handled;
        const uint64_t r[1] = {args[0] * 2 + static_cast<uint64_t>(t.source())};
        if (t.reply_short(1, r) != Errc::ok) ++g_am.bad;
        if (t.reply_short(1, r) == Errc::ok) ++g_am.bad;  // one reply only
      },
      // 1: short reply
      [](AmToken& t, std::span<const uint64_t> args, std::span<std::byte>) {
        const auto me = static_cast<uint64_t>(g_am.me);
        if (!t.is_reply() || args.size() != 1 || args[0] != 2 * (me + 5) + me) ++g_am.bad;
        ++g_am.short_replies;
      },
      // 2: medium request: verify, then echo it back reversed (reply_medium 3)
      [](AmToken& t, std::span<const uint64_t> args, std::span<std::byte> payload) {
        if (args.size() != 1 || payload.size() != args[0]) ++g_am.bad;
        for (std::size_t i = 0; i < payload.size(); ++i)
          if (payload[i] != am_byte(i, t.source(), 2)) {
            ++g_am.bad;
            break;
          }
        ++g_am.requests_handled;
        std::reverse(payload.begin(), payload.end());  // the handler's own copy
        const uint64_t r[1] = {payload.size()};
        if (t.reply_medium(3, r, payload) != Errc::ok) ++g_am.bad;
      },
      // 3: medium reply
      [](AmToken& t, std::span<const uint64_t> args, std::span<std::byte> payload) {
        const int me = g_am.me;
        if (!t.is_reply() || args.size() != 1 || payload.size() != args[0]) ++g_am.bad;
        for (std::size_t i = 0; i < payload.size(); ++i)
          if (payload[payload.size() - 1 - i] != am_byte(i, me, 2)) {
            ++g_am.bad;
            break;
          }
        ++g_am.medium_replies;
      },
      // 4: long request: the data is in our inbox; reply_long it into the source's replies
      [](AmToken& t, std::span<const uint64_t> args, std::span<std::byte> payload) {
        const auto src = static_cast<std::size_t>(t.source());
        if (args.size() != 3 || payload.size() != kLong ||
            payload.data() != g_am.inbox.data() + src * kLong)
          ++g_am.bad;
        for (std::size_t i = 0; i < payload.size(); ++i)
          if (payload[i] != am_byte(i, t.source(), 4)) {
            ++g_am.bad;
            break;
          }
        ++g_am.requests_handled;
        const uint64_t r[1] = {7};
        if (t.reply_long(5, r, payload, g_am.reply_keys[src],
                         static_cast<uint64_t>(g_am.me) * kLong) != Errc::ok)
          ++g_am.bad;
      },
      // 5: long reply
      [](AmToken& t, std::span<const uint64_t> args, std::span<std::byte> payload) {
        const auto from = static_cast<std::size_t>(t.source());
        if (!t.is_reply() || args.size() != 1 || args[0] != 7 || payload.size() != kLong ||
            payload.data() != g_am.replies.data() + from * kLong)
          ++g_am.bad;
        for (std::size_t i = 0; i < payload.size(); ++i)
          if (payload[i] != am_byte(i, g_am.me, 4)) {
            ++g_am.bad;
            break;
          }
        ++g_am.long_replies;
      },
  };
}

void test_am(Session& s, Rma& rma) {
  const int n = s.size(), me = s.rank();
  g_am.me = me;
  g_am.inbox.assign(kLong * static_cast<std::size_t>(n), std::byte{0});
  g_am.replies.assign(kLong * static_cast<std::size_t>(n), std::byte{0});
  RegisteredMemory inbox, replies;
  CHECK(rma.register_memory(g_am.inbox, inbox) == Errc::ok, "register inbox");
  CHECK(rma.register_memory(g_am.replies, replies) == Errc::ok, "register replies");
  g_am.keys = exchange_keys(s, inbox);
  g_am.reply_keys = exchange_keys(s, replies);
  s.barrier();
  std::vector<std::byte> data(kLong);
  for (int p = 0; p < n; ++p) {
    const uint64_t a[2] = {static_cast<uint64_t>(me + 5), 42};
    CHECK(rma.am_short(p, 0, a) == Errc::ok, "am_short");
    const std::size_t med = std::min<std::size_t>(rma.max_medium(p, 1), 4096);
    CHECK(med >= 256, "max_medium %zu", med);
    for (std::size_t i = 0; i < med; ++i) data[i] = am_byte(i, me, 2);
    const uint64_t m[1] = {med};
    CHECK(rma.am_medium(p, 2, m, {data.data(), med}) == Errc::ok, "am_medium");
    std::vector<std::byte> too_big(rma.max_medium(p, 1) + 1);
    CHECK(rma.am_medium(p, 2, m, too_big) == Errc::invalid_argument, "oversized medium");
    for (std::size_t i = 0; i < kLong; ++i) data[i] = am_byte(i, me, 4);
    const uint64_t l[3] = {1, 2, 3};
    CHECK(rma.am_long(p, 4, l, data, g_am.keys[static_cast<std::size_t>(p)],
                      static_cast<uint64_t>(me) * kLong) == Errc::ok,
          "am_long");
    // Past the key's end: refused here, nothing sent.
    CHECK(rma.am_long(p, 4, l, data, g_am.keys[static_cast<std::size_t>(p)],
                      static_cast<uint64_t>(n) * kLong - 10) == Errc::remote_access,
          "am_long out of bounds");
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (g_am.short_replies < n || g_am.medium_replies < n || g_am.long_replies < n) {
    s.progress();
    CHECK(std::chrono::steady_clock::now() < deadline, "replies: %d short %d medium %d long",
          g_am.short_replies.load(), g_am.medium_replies.load(), g_am.long_replies.load());
  }
  CHECK(rma.flush() == Errc::ok, "flush");
  s.barrier();
  while (g_am.requests_handled < 3 * n) s.progress();  // (all arrived before the barrier)
  CHECK(g_am.bad == 0, "%d bad active messages", g_am.bad.load());
  s.barrier();
}

// Bad keys and out-of-bounds ranges fail with remote_access; every target carries on.
void test_errors(Session& s, Rma& rma) {
  const int n = s.size(), me = s.rank();
  std::vector<uint64_t> words(16, 0);
  RegisteredMemory mem;
  CHECK(rma.register_memory(bytes_of(words), mem) == Errc::ok, "register");
  const auto keys = exchange_keys(s, mem);
  s.barrier();
  for (int p = 0; p < n; ++p) {
    const RemoteKey& k = keys[static_cast<std::size_t>(p)];
    uint64_t v = 5, old = 0;
    auto one = std::as_writable_bytes(std::span(&v, 1));
    // Past the key's range: refused at the origin.
    CHECK(wait(s, rma.iput(one, p, k, k.length - 4)) == Errc::remote_access, "oob iput");
    CHECK(wait(s, rma.iget(one, p, k, k.length)) == Errc::remote_access, "oob iget");
    CHECK(rma.put(one, p, k, k.length + 100) == Errc::remote_access, "oob put");
    CHECK(wait(s, rma.fetch_add<uint64_t>(p, k, k.length, 1, &old)) == Errc::remote_access,
          "oob atomic");
    CHECK(wait(s, rma.fetch_add<uint64_t>(p, k, 4, 1, &old)) == Errc::invalid_argument,
          "misaligned atomic");
    CHECK(wait(s, rma.iput(one, n + 3, k, 0)) == Errc::invalid_argument, "bad rank");
    // A key the target never handed out, naming unmapped memory: the target (or the kernel,
    // for CMA) refuses; nobody crashes.
    const RemoteKey bogus{8, 4096, 0x7777777};
    CHECK(wait(s, rma.iput(one, p, bogus, 0)) == Errc::remote_access, "bogus iput to %d", p);
    CHECK(wait(s, rma.iget(one, p, bogus, 0)) == Errc::remote_access, "bogus iget from %d", p);
    CHECK(wait(s, rma.fetch_add<uint64_t>(p, bogus, 0, 1, &old)) == Errc::remote_access,
          "bogus atomic");
    CHECK(rma.put(one, p, bogus, 64) == Errc::ok, "implicit bogus put starts");
    CHECK(rma.flush(p) == Errc::remote_access, "flush reports the implicit put's error");
    CHECK(rma.flush(p) == Errc::ok, "the error was reported once");
    // A real key stretched past its registration: only the target's table can tell, and
    // it does wherever the target executes (everything but CMA, which trusts the key).
    if (s.driver_name(p) != "shm") {
      RemoteKey stretched = k;
      stretched.length += 4096;
      CHECK(wait(s, rma.iput(one, p, stretched, k.length)) == Errc::remote_access,
            "stretched iput to %d", p);
      CHECK(wait(s, rma.iget(one, p, stretched, k.length + 8)) == Errc::remote_access,
            "stretched iget from %d", p);
    }
    // The target is fine: a valid access works (over ofi's fi_write too: the bad accesses
    // above were refused before reaching the provider, the connection is intact).
    uint64_t good = 0;
    CHECK(wait(s, rma.iput(std::as_bytes(std::span(&good, 1)), p, k, 8 * 15)) == Errc::ok,
          "valid put after errors to %d", p);
    CHECK(
        wait(s, rma.fetch_add<uint64_t>(p, k, 8 * static_cast<uint64_t>(me), 1, &old)) == Errc::ok,
        "valid atomic after errors");
  }
  if (n > 1 && ofi_one_sided(s, (me + 1) % n)) {
    CHECK(s.counter("rma.refused_local").value_or(0) > 0, "no access refused at the origin");
    CHECK(s.counter("ofi.rma_errors").value_or(0) == 0, "a bad access reached the provider");
    CHECK(s.counter("ofi.rma_writes").value_or(0) > 0, "the valid put was no fi_write");
  }
  s.barrier();
  for (int p = 0; p < n; ++p) CHECK(words[static_cast<std::size_t>(p)] == 1, "word %d", p);
  // A deregistered region is refused from then on (emulated paths and the own rank).
  mem.reset();
  s.barrier();
  for (int p = 0; p < n; ++p) {
    if (s.driver_name(p) == "shm") continue;
    uint64_t old = 0;
    CHECK(wait(s, rma.fetch_add<uint64_t>(p, keys[static_cast<std::size_t>(p)], 0, 1, &old)) ==
              Errc::remote_access,
          "atomic on deregistered memory of %d", p);
  }
  s.barrier();
}

// Rank 0 only sleeps after the set-up: its progress thread serves puts, gets, atomics and
// active messages (with replies) from every other rank.
std::atomic<int> g_progress_ams{0};
void test_progress(Session& s, Rma& rma) {
  const int n = s.size(), me = s.rank();
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  std::vector<std::byte> win(kBytes * static_cast<std::size_t>(n) + 64);
  RegisteredMemory mem;
  CHECK(rma.register_memory(win, mem) == Errc::ok, "register");
  const auto keys = exchange_keys(s, mem);
  s.barrier();
  auto* done = reinterpret_cast<uint64_t*>(win.data() + win.size() - 64);
  if (me == 0) {
    // No Sluice call until every other rank said it is done (a fetch_add on `done`).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(150);
    while (__atomic_load_n(done, __ATOMIC_ACQUIRE) < static_cast<uint64_t>(n - 1)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      CHECK(std::chrono::steady_clock::now() < deadline, "target: only %llu of %d done",
            static_cast<unsigned long long>(__atomic_load_n(done, __ATOMIC_ACQUIRE)), n - 1);
    }
    CHECK(g_progress_ams == n - 1, "handlers ran %d times", g_progress_ams.load());
    for (int p = 1; p < n; ++p)
      for (std::size_t i = 0; i < kBytes; i += 4099)
        CHECK(win[static_cast<std::size_t>(p) * kBytes + i] == pattern(i, p, kBytes),
              "put from %d byte %zu", p, i);
  } else {
    const RemoteKey& k0 = keys[0];
    std::vector<std::byte> src(kBytes), back(kBytes);
    for (std::size_t i = 0; i < kBytes; ++i) src[i] = pattern(i, me, kBytes);
    const uint64_t at = static_cast<uint64_t>(me) * kBytes;
    CHECK(wait(s, rma.iput(src, 0, k0, at)) == Errc::ok, "put");
    CHECK(wait(s, rma.iget(back, 0, k0, at)) == Errc::ok, "get");
    CHECK(back == src, "get differs");
    uint64_t old = 0;
    CHECK(wait(s, rma.fetch_add<uint64_t>(0, k0, 0, 1, &old)) == Errc::ok, "fetch_add");
    const uint64_t a[2] = {static_cast<uint64_t>(me + 5), 1};
    g_am.me = me;
    CHECK(rma.am_short(0, 0, a) == Errc::ok, "am");
    while (g_am.short_replies < 1) s.progress();
    CHECK(g_am.bad == 0, "bad reply");
    CHECK(wait(s, rma.fetch_add<uint64_t>(0, k0, win.size() - 64, 1, &old)) == Errc::ok, "done");
  }
  s.barrier();
  if (me == 0) {
    CHECK(s.counter("rma.served_atomics").value_or(0) >= static_cast<uint64_t>(2 * (n - 1)),
          "atomics served %llu",
          static_cast<unsigned long long>(s.counter("rma.served_atomics").value_or(0)));
  }
  s.barrier();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "all";
  Session s;
  test::g_rank = s.rank();
  std::vector<AmHandler> handlers = am_handlers();
  if (which == "progress") {
    // Handler 0 counts on the target, which never calls into Sluice itself meanwhile.
    handlers[0] = [](AmToken& t, std::span<const uint64_t> args, std::span<std::byte>) {
      ++g_progress_ams;
      const uint64_t r[1] = {args[0] * 2 + static_cast<uint64_t>(t.source())};
      t.reply_short(1, r);
    };
  }
  {
    Rma rma(s, handlers);
    const bool all = which == "all";
    if (all || which == "counter") test_counter(s, rma);
    if (all || which == "lock") test_lock(s, rma);
    if (all || which == "putget") test_putget(s, rma);
    if (all || which == "am") test_am(s, rma);
    if (all || which == "errors") test_errors(s, rma);
    if (which == "progress") test_progress(s, rma);
  }
  if (s.rank() == 0) std::printf("mp_rma %s ok: %d ranks\n", which.c_str(), s.size());
  return 0;
}
