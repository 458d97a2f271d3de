// Multi-process point-to-point tests, run under sluicerun with 1..8 ranks:
//   mp_p2p <case>   (ordering | wildcards | outstanding | integrity | truncation | probe |
//                    ssend | cancel | self | badargs | all), or several cases comma-separated
// Each case checks its results and exits non-zero on the first mismatch, naming it.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "check.hpp"
#include "sluice/sluice.hpp"

using sluice::Errc;
using sluice::Request;
using sluice::Session;
using sluice::Status;

namespace {

using ::sluice::test::g_rank;

std::span<const std::byte> cbytes(const void* p, std::size_t n) {
  return {static_cast<const std::byte*>(p), n};
}
std::span<std::byte> wbytes(void* p, std::size_t n) {
  return {static_cast<std::byte*>(p), n};
}

// Deterministic content: byte i of the message (src, dst, id) — detects misplaced,
// stale or swapped data, not just wrong length.
uint8_t pattern(int src, int dst, int id, std::size_t i) {
  uint64_t x = (static_cast<uint64_t>(src) << 40) ^ (static_cast<uint64_t>(dst) << 32) ^
               static_cast<uint64_t>(id) * 0x9e3779b97f4a7c15ull ^ i * 0x100000001b3ull;
  x ^= x >> 29;
  return static_cast<uint8_t>(x * 0xbf58476d1ce4e5b9ull >> 56);
}
void fill(std::vector<uint8_t>& b, int src, int dst, int id) {
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = pattern(src, dst, id, i);
}
std::size_t first_mismatch(const std::vector<uint8_t>& b, std::size_t n, int src, int dst, int id) {
  for (std::size_t i = 0; i < n; ++i)
    if (b[i] != pattern(src, dst, id, i)) return i;
  return SIZE_MAX;
}

// ---- protocol counters: every run proves which protocols carried its messages ----------
uint64_t counter(Session& s, const std::string& name) {
  const auto v = s.counter(name);
  CHECK(v.has_value(), "no statistics counter %s", name.c_str());
  return *v;
}

// Messages this rank received, by protocol (p2p.<protocol>.messages_received).
struct Received {
  uint64_t eager, get, pipeline, push, sync_acks;
};
Received received(Session& s) {
  return {counter(s, "p2p.eager.messages_received"), counter(s, "p2p.rndv_get.messages_received"),
          counter(s, "p2p.rndv_pipeline.messages_received"),
          counter(s, "p2p.rndv_push.messages_received"), counter(s, "p2p.eager.sync_acks")};
}

// After messages of every size (eager to 64 MiB) arrived from `from`: the protocols the
// settings and the driver serving `from` call for must each have carried some, and the
// ones they exclude none.
void check_protocols_ran(Session& s, int from, const Received& before) {
  const Received now = received(s);
  const uint64_t eager = now.eager - before.eager, get = now.get - before.get,
                 pipeline = now.pipeline - before.pipeline, push = now.push - before.push;
  const std::string drv(s.driver_name(from));
  CHECK(eager > 0, "no eager message from %d (driver %s)", from, drv.c_str());
  const char* rndv_env = std::getenv("SLUICE_RNDV_MODE");
  if (drv == "ofi" && counter(s, "ofi.rma_enabled") == 1 &&
      !(rndv_env && std::string(rndv_env) == "pipeline")) {
    // The provider offers FI_RMA: rendezvous by fi_read from the get threshold up (no upper
    // bound), pipelined below it; the buffers registered through the ofi domain. A host-local
    // provider (shm) reads every rendezvous (the driver's get threshold: its eager limit + 1).
    const bool get_all = counter(s, "ofi.get_threshold") != 0;
    CHECK(get > 0 && (pipeline > 0) != get_all && push == 0,
          "ofi with RMA (get threshold %llu): get=%llu pipeline=%llu push=%llu",
          (unsigned long long)counter(s, "ofi.get_threshold"), (unsigned long long)get,
          (unsigned long long)pipeline, (unsigned long long)push);
    CHECK(counter(s, "ofi.rma_reads") > 0, "rendezvous by get without an fi_read");
    CHECK(counter(s, "ofi.rma_read_bytes") > 0, "fi_read moved nothing");
    CHECK(counter(s, "ofi.mr_registrations") > 0, "no buffer registered through fi_mr_reg");
    return;
  }
  if (drv != "shm") {
    // tcp, udp (under the reliability layer) and ofi without FI_RMA (or with
    // SLUICE_OFI_RMA=off) cannot read peer memory: pipelined.
    CHECK(pipeline > 0 && get == 0 && push == 0,
          "driver %s: rendezvous get=%llu pipeline=%llu push=%llu", drv.c_str(),
          (unsigned long long)get, (unsigned long long)pipeline, (unsigned long long)push);
    return;
  }
  CHECK(counter(s, "shm.packets_received") > 0, "shm carried nothing");
  // Pushed up to the threshold in force (the default, or 0 when ranks outnumber CPUs).
  if (counter(s, "p2p.threshold.push_max") > 0) {
    CHECK(push > 0, "RNDV_PUSH_MAX in force but no pushed rendezvous (get=%llu pipeline=%llu)",
          (unsigned long long)get, (unsigned long long)pipeline);
    return;
  }
  const bool cma = counter(s, "shm.cma_available") == 1;
  // SLUICE_RNDV_MODE, or its former name SLUICE_SHM_RNDV ("cma" for get).
  const char* mode_env = std::getenv("SLUICE_RNDV_MODE");
  if (!mode_env) mode_env = std::getenv("SLUICE_SHM_RNDV");
  std::string mode = mode_env ? mode_env : "auto";
  std::transform(mode.begin(), mode.end(), mode.begin(), ::tolower);
  if (mode == "cma") mode = "get";
  CHECK(push == 0, "pushed rendezvous with RNDV_PUSH_MAX 0");
  if (mode == "pipeline" || !cma) {
    CHECK(pipeline > 0 && get == 0, "%s: get=%llu pipeline=%llu",
          cma ? "RNDV_MODE=pipeline" : "no CMA", (unsigned long long)get,
          (unsigned long long)pipeline);
  } else if (mode == "get") {
    CHECK(get > 0 && pipeline == 0, "RNDV_MODE=get: get=%llu pipeline=%llu",
          (unsigned long long)get, (unsigned long long)pipeline);
    CHECK(counter(s, "shm.cma_reads") > 0, "rendezvous by get without a CMA read");
  } else {
    // auto: the pipeline below SHM_CMA_THRESHOLD (and above SHM_CMA_MAX), get between.
    CHECK(get > 0 && pipeline > 0, "RNDV_MODE=auto: get=%llu pipeline=%llu",
          (unsigned long long)get, (unsigned long long)pipeline);
  }
}

// Messages from one source on one tag must arrive in send order, whatever protocol each
// uses (eager messages overtaking a rendezvous would be a bug).
void test_ordering(Session& s) {
  const int n = s.size(), me = s.rank();
  const std::vector<std::size_t> sizes = {8, 100, 5000, 70000, 0, 3, 200000, 16};
  const int per_peer = 64;
  std::vector<std::vector<uint8_t>> sbuf;
  std::vector<Request> reqs;
  for (int peer = 0; peer < n; ++peer) {
    for (int k = 0; k < per_peer; ++k) {
      std::vector<uint8_t> b(sizes[k % sizes.size()] + sizeof(int));
      fill(b, me, peer, k);
      std::memcpy(b.data(), &k, sizeof k);
      sbuf.push_back(std::move(b));
    }
  }
  std::size_t idx = 0;
  for (int peer = 0; peer < n; ++peer)
    for (int k = 0; k < per_peer; ++k, ++idx)
      reqs.push_back(s.isend(cbytes(sbuf[idx].data(), sbuf[idx].size()), peer, 5));
  for (int peer = 0; peer < n; ++peer) {
    for (int k = 0; k < per_peer; ++k) {
      std::vector<uint8_t> b(200000 + sizeof(int));
      Status st;
      CHECK(s.recv(wbytes(b.data(), b.size()), peer, 5, &st) == Errc::ok, "recv");
      int got;
      std::memcpy(&got, b.data(), sizeof got);
      CHECK(got == k, "from %d expected message %d first, got %d", peer, k, got);
      CHECK(st.size == sizes[k % sizes.size()] + sizeof(int), "size");
      CHECK(st.source == peer && st.tag == 5, "status");
    }
  }
  CHECK(s.waitall(reqs) == Errc::ok, "waitall");
}

void test_wildcards(Session& s) {
  const int n = s.size(), me = s.rank();
  // Everyone sends rank 0 two messages: tag = 100 + rank, then tag 7.
  if (me != 0) {
    int v = me;
    CHECK(s.send(cbytes(&v, sizeof v), 0, 100 + me) == Errc::ok, "send");
    v = 1000 + me;
    CHECK(s.send(cbytes(&v, sizeof v), 0, 7) == Errc::ok, "send");
  } else {
    // any_source, specific tag 7: n-1 messages, each sender once.
    std::vector<int> seen(n, 0);
    for (int i = 1; i < n; ++i) {
      int v;
      Status st;
      CHECK(s.recv(wbytes(&v, sizeof v), sluice::any_source, 7, &st) == Errc::ok, "recv");
      CHECK(st.tag == 7 && v == 1000 + st.source, "any_source payload %d from %d", v, st.source);
      ++seen[st.source];
    }
    // any_tag from a specific source must give that source's first message (tag 100+src):
    // they were sent before tag 7, and non-overtaking holds for wildcards too.
    for (int src = 1; src < n; ++src) {
      int v;
      Status st;
      CHECK(s.recv(wbytes(&v, sizeof v), src, sluice::any_tag, &st) == Errc::ok, "recv");
      CHECK(st.tag == 100 + src && v == src, "any_tag got tag %d value %d", st.tag, v);
      CHECK(seen[src] == 1, "each sender seen once");
    }
  }
  s.barrier();
  // any_source + any_tag, posted before the messages exist.
  if (me == 0) {
    std::vector<int> vals(n);
    std::vector<Request> r;
    for (int i = 1; i < n; ++i)
      r.push_back(s.irecv(wbytes(&vals[i], sizeof(int)), sluice::any_source, sluice::any_tag));
    s.barrier();
    std::vector<Status> st(r.size());
    CHECK(s.waitall(r, st) == Errc::ok, "waitall");
    std::vector<int> seen(n, 0);
    for (std::size_t i = 0; i < st.size(); ++i) {
      CHECK(st[i].tag == 300 + st[i].source, "tag");
      ++seen[st[i].source];
    }
    for (int i = 1; i < n; ++i) CHECK(seen[i] == 1, "source %d seen %d times", i, seen[i]);
  } else {
    s.barrier();
    int v = me;
    CHECK(s.send(cbytes(&v, sizeof v), 0, 300 + me) == Errc::ok, "send");
  }
}

// 10 000 outstanding requests per rank: receives posted in one order, sends in another.
void test_outstanding(Session& s) {
  const int n = s.size(), me = s.rank();
  if (n < 2) return;
  const int count = 10000;
  const int to = (me + 1) % n, from = (me - 1 + n) % n;
  std::vector<int> in(count, -1), out(count);
  std::vector<Request> r;
  r.reserve(2 * count);
  for (int i = 0; i < count; ++i) r.push_back(s.irecv(wbytes(&in[i], sizeof(int)), from, i));
  for (int i = count - 1; i >= 0; --i) {
    out[i] = i * 7 + me;
    r.push_back(s.isend(cbytes(&out[i], sizeof(int)), to, i));
  }
  CHECK(s.waitall(r) == Errc::ok, "waitall");
  for (int i = 0; i < count; ++i) CHECK(in[i] == i * 7 + from, "tag %d got %d", i, in[i]);
}

// Sizes from 1 B to 64 MiB, across every protocol; contents verified byte by byte.
void test_integrity(Session& s) {
  const int n = s.size(), me = s.rank();
  std::vector<std::size_t> sizes;
  for (std::size_t sz = 1; sz <= (64u << 20); sz *= 4) {
    sizes.push_back(sz);
    if (sz > 1) sizes.push_back(sz - 1);
    sizes.push_back(sz + 13);
  }
  sizes.push_back(64u << 20);
  const int to = (me + 1) % n, from = (me - 1 + n) % n;
  const Received before = received(s);
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const std::size_t sz = sizes[k];
    if (sz > (64u << 20)) continue;
    std::vector<uint8_t> sb(sz), rb(sz + 64, 0xEE);
    fill(sb, me, to, static_cast<int>(k));
    Request rr = s.irecv(wbytes(rb.data(), rb.size()), from, static_cast<int>(k));
    Request sr = s.isend(cbytes(sb.data(), sb.size()), to, static_cast<int>(k));
    Status st;
    CHECK(s.wait(rr, &st) == Errc::ok, "recv %zu", sz);
    CHECK(s.wait(sr) == Errc::ok, "send %zu", sz);
    CHECK(st.size == sz && st.source == from, "status size %zu expected %zu", st.size, sz);
    std::size_t bad = first_mismatch(rb, sz, from, me, static_cast<int>(k));
    CHECK(bad == SIZE_MAX, "size %zu: byte %zu corrupted", sz, bad);
    CHECK(rb[sz] == 0xEE, "size %zu: wrote past the message", sz);
  }
  if (from != me) check_protocols_ran(s, from, before);
}

// A receive buffer shorter than the message: Errc::truncated, real size in the status,
// and the bytes that fit are delivered (eager, and both rendezvous paths).
void test_truncation(Session& s) {
  const int n = s.size(), me = s.rank();
  if (n < 2) return;
  const std::vector<std::size_t> sizes = {100, 6000, 50000, 1u << 20};
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const std::size_t sz = sizes[k];
    if (me == 0) {
      std::vector<uint8_t> sb(sz);
      fill(sb, 0, 1, static_cast<int>(k));
      CHECK(s.send(cbytes(sb.data(), sz), 1, 9) == Errc::ok, "send of a truncated message");
    } else if (me == 1) {
      std::vector<uint8_t> rb(sz / 2 + 64, 0xEE);
      Status st;
      Errc e = s.recv(wbytes(rb.data(), sz / 2), 0, 9, &st);
      CHECK(e == Errc::truncated, "size %zu: expected truncated, got %s", sz,
            std::string(sluice::to_string(e)).c_str());
      CHECK(st.size == sz, "truncated status carries the real size: %zu vs %zu", st.size, sz);
      CHECK(st.error == Errc::truncated, "status error");
      CHECK(first_mismatch(rb, sz / 2, 0, 1, static_cast<int>(k)) == SIZE_MAX, "prefix");
      CHECK(rb[sz / 2] == 0xEE, "no write past the buffer");
    }
    s.barrier();
  }
}

void test_probe(Session& s) {
  const int n = s.size(), me = s.rank();
  if (n < 2) return;
  if (me == 1) {
    std::vector<uint8_t> a(1234), b(100000);
    fill(a, 1, 0, 1);
    fill(b, 1, 0, 2);
    // Nonblocking: a rendezvous send may wait for its match, and rank 0 matches tag 12
    // before tag 11.
    std::vector<Request> r;
    r.push_back(s.isend(cbytes(a.data(), a.size()), 0, 11));
    r.push_back(s.isend(cbytes(b.data(), b.size()), 0, 12));
    CHECK(s.waitall(r) == Errc::ok, "sends");
  } else if (me == 0) {
    Status st;
    CHECK(s.probe(1, 12, &st) == Errc::ok, "probe");
    CHECK(st.size == 100000 && st.tag == 12 && st.source == 1, "probe status %zu", st.size);
    CHECK(s.probe(sluice::any_source, sluice::any_tag, &st) == Errc::ok, "probe any");
    CHECK(st.tag == 11 && st.size == 1234, "earliest first: tag %d", st.tag);
    Status none;
    CHECK(!s.iprobe(1, 13, &none), "iprobe finds no tag 13");
    std::vector<uint8_t> rb(st.size);
    CHECK(s.recv(wbytes(rb.data(), rb.size()), 1, 11, &st) == Errc::ok, "recv");
    CHECK(first_mismatch(rb, rb.size(), 1, 0, 1) == SIZE_MAX, "probe then recv content");
    rb.resize(100000);
    CHECK(s.recv(wbytes(rb.data(), rb.size()), 1, 12, &st) == Errc::ok, "recv");
    CHECK(first_mismatch(rb, rb.size(), 1, 0, 2) == SIZE_MAX, "probe then recv content");
  }
  s.barrier();
}

// A synchronous send completes only after the receive matched it.
void test_ssend(Session& s) {
  const int n = s.size(), me = s.rank();
  if (n < 2) return;
  for (std::size_t sz : {8u, 100000u}) {
    if (me == 0) {
      std::vector<uint8_t> b(sz, 1);
      Request r = s.issend(cbytes(b.data(), sz), 1, 21);
      // The receiver posts only after the barrier, so the send cannot be done yet.
      for (int i = 0; i < 2000; ++i) CHECK(!s.test(r), "ssend completed before the match");
      s.barrier();
      CHECK(s.wait(r) == Errc::ok, "ssend");
    } else {
      s.barrier();
      if (me == 1) {
        std::vector<uint8_t> b(sz);
        const Received before = received(s);
        CHECK(s.recv(wbytes(b.data(), sz), 0, 21) == Errc::ok, "recv");
        const Received after = received(s);
        if (sz == 8) {
          // Eager synchronous: the receiver acknowledged the match.
          CHECK(after.eager >= before.eager + 1 && after.sync_acks == before.sync_acks + 1,
                "8 B ssend: eager %llu -> %llu, sync acks %llu -> %llu",
                (unsigned long long)before.eager, (unsigned long long)after.eager,
                (unsigned long long)before.sync_acks, (unsigned long long)after.sync_acks);
        } else {
          // Synchronous rendezvous: pulled (get or pipeline), never pushed.
          CHECK(after.get + after.pipeline == before.get + before.pipeline + 1 &&
                    after.push == before.push,
                "100000 B ssend: not one pulled rendezvous");
        }
      }
    }
    s.barrier();
  }
}

// Send cancellation (Session::cancel of a send): rank 0 to rank 1, the others idle.
//  - a 2 MiB rendezvous and an 8 B synchronous send, both unmatched: cancelled (withdrawn by
//    the receiver, or locally when still queued); a later message on the same tag is the
//    first the receiver sees there, and its count of removed messages grew by the sender's
//    count of withdrawn ones;
//  - a 2 MiB rendezvous into a receive posted before: too late, received intact;
//  - an 8 B eager send: out at once, not cancellable, received.
void test_cancel(Session& s) {
  const int n = s.size(), me = s.rank();
  if (n < 2) return;
  constexpr std::size_t kBig = 2u << 20;
  // A pushed rendezvous completes without the receiver: not cancellable (SHM_PUSH_MAX set
  // above 2 MiB), so the unmatched 2 MiB round needs a pull.
  const bool big_pushed = counter(s, "p2p.threshold.push_max") >= kBig;
  // Totals since here (a barrier's progress may remove a message before a round starts).
  const uint64_t local0 = counter(s, "p2p.cancel.local");
  const uint64_t withdrawn0 = counter(s, "p2p.cancel.withdrawn");
  const uint64_t removed0 = counter(s, "p2p.cancel.removed");
  uint64_t cancelled = 0;
  s.barrier();
  for (int round = big_pushed ? 1 : 0; round < 2; ++round) {
    const std::size_t sz = round == 0 ? kBig : 8;
    const int tag = 31 + round;
    if (me == 0) {
      std::vector<uint8_t> b(sz);
      fill(b, 0, 1, tag);
      Request r = round == 0 ? s.isend(cbytes(b.data(), sz), 1, tag)
                             : s.issend(cbytes(b.data(), sz), 1, tag);
      CHECK(s.cancel(r), "cancel of an unmatched %zu B send refused", sz);
      Status st;
      CHECK(s.wait(r, &st) == Errc::ok && st.cancelled, "%zu B send not cancelled", sz);
      const uint64_t deltas[2] = {counter(s, "p2p.cancel.local") - local0,
                                  counter(s, "p2p.cancel.withdrawn") - withdrawn0};
      ++cancelled;
      CHECK(deltas[0] + deltas[1] == cancelled, "cancel counters: local +%llu, withdrawn +%llu",
            (unsigned long long)deltas[0], (unsigned long long)deltas[1]);
      CHECK(s.send(cbytes(deltas, sizeof deltas), 1, 30) == Errc::ok, "send counters");
      const uint64_t marker = 0x5eed0000u + static_cast<unsigned>(tag);
      CHECK(s.send(cbytes(&marker, 8), 1, tag) == Errc::ok, "send the later message");
    } else if (me == 1) {
      uint64_t deltas[2] = {};
      CHECK(s.recv(wbytes(deltas, sizeof deltas), 0, 30) == Errc::ok, "recv counters");
      std::vector<uint8_t> b(kBig);
      Status st;
      CHECK(s.recv(wbytes(b.data(), kBig), 0, tag, &st) == Errc::ok, "recv on the tag");
      uint64_t got = 0;
      std::memcpy(&got, b.data(), 8);
      CHECK(st.size == 8 && got == 0x5eed0000u + static_cast<unsigned>(tag),
            "round %d: the first message on the tag is not the later one (%zu B)", round, st.size);
      CHECK(counter(s, "p2p.cancel.removed") - removed0 == deltas[1],
            "round %d: removed +%llu, the sender's withdrawn +%llu", round,
            (unsigned long long)(counter(s, "p2p.cancel.removed") - removed0),
            (unsigned long long)deltas[1]);
    }
    s.barrier();
  }
  // Too late: matched on arrival. Then an eager message, out at once.
  for (int round = 0; round < 2; ++round) {
    const std::size_t sz = round == 0 ? kBig : 8;
    const int tag = 33 + round;
    std::vector<uint8_t> b(sz);
    Request rr;
    if (me == 1 && round == 0) rr = s.irecv(wbytes(b.data(), sz), 0, tag);
    s.barrier();
    if (me == 0) {
      fill(b, 0, 1, tag);
      const uint64_t local_before = counter(s, "p2p.cancel.local");
      Request r = s.isend(cbytes(b.data(), sz), 1, tag);
      const bool asked = s.cancel(r);
      CHECK(round == 0 || !asked, "cancel of an eager send that is out accepted");
      Status st;
      CHECK(s.wait(r, &st) == Errc::ok, "%zu B send", sz);
      if (st.cancelled) {
        // Allowed only before anything left (a connection still being set up, a full
        // driver): the receive still waits, so the message goes again.
        CHECK(counter(s, "p2p.cancel.local") == local_before + 1,
              "%zu B send matched on arrival, yet cancelled", sz);
        CHECK(s.send(cbytes(b.data(), sz), 1, tag) == Errc::ok, "resend");
      }
    } else if (me == 1) {
      Status st;
      const Errc e = round == 0 ? s.wait(rr, &st) : s.recv(wbytes(b.data(), sz), 0, tag, &st);
      CHECK(e == Errc::ok && st.size == sz && first_mismatch(b, sz, 0, 1, tag) == SIZE_MAX,
            "%zu B message not cancelled arrived wrong", sz);
    }
    s.barrier();
  }
}

void test_self(Session& s) {
  const int me = s.rank();
  for (std::size_t sz : {0u, 8u, 5000u, 1u << 20}) {
    std::vector<uint8_t> a(sz), b(sz);
    fill(a, me, me, 3);
    Request r = s.irecv(wbytes(b.data(), sz), me, 31);
    CHECK(s.send(cbytes(a.data(), sz), me, 31) == Errc::ok, "self send");
    CHECK(s.wait(r) == Errc::ok, "self recv");
    CHECK(a == b, "self data %zu", sz);
  }
}

void test_badargs(Session& s) {
  int v = 0;
  Request r = s.isend(cbytes(&v, sizeof v), s.size(), 0);
  CHECK(s.wait(r) == Errc::invalid_argument, "send to rank == size");
  r = s.isend(cbytes(&v, sizeof v), 0, -5);
  CHECK(s.wait(r) == Errc::invalid_argument, "negative tag");
  CHECK(s.recv(wbytes(&v, sizeof v), -7, 0) == Errc::invalid_argument, "bad source");
  Request c = s.irecv(wbytes(&v, sizeof v), 0, 999);
  CHECK(s.cancel(c), "cancel a posted receive");
  Status st;
  CHECK(s.wait(c, &st) == Errc::ok && st.cancelled, "cancelled status");
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = argc > 1 ? argv[1] : "all";
  Session s;
  g_rank = s.rank();
  const std::vector<std::pair<std::string, std::function<void(Session&)>>> cases = {
      {"ordering", test_ordering},
      {"wildcards", test_wildcards},
      {"outstanding", test_outstanding},
      {"integrity", test_integrity},
      {"truncation", test_truncation},
      {"probe", test_probe},
      {"ssend", test_ssend},
      {"cancel", test_cancel},
      {"self", test_self},
      {"badargs", test_badargs}};
  int passed = 0;
  bool found = false;
  for (const auto& [name, fn] : cases) {
    // One case, "all", or a comma-separated list of cases.
    if (which != "all" && ("," + which + ",").find("," + name + ",") == std::string::npos) continue;
    found = true;
    fn(s);
    CHECK(s.barrier() == Errc::ok, "barrier after %s", name.c_str());
    ++passed;
    if (s.rank() == 0) std::printf("mp_p2p %s: ok (%d ranks)\n", name.c_str(), s.size());
  }
  if (!found) {
    std::fprintf(stderr, "mp_p2p: unknown case '%s'\n", which.c_str());
    return 2;
  }
  if (which != "self" && which != "badargs" && s.size() > 1 &&
      (std::getenv("SLUICE_UDP_FAULT") || std::getenv("SLUICE_OFI_FAULT"))) {
    // The injector dropped packets and the reliability layer repaired the losses.
    CHECK(counter(s, "fault.dropped") > 0, "SLUICE_UDP_FAULT / OFI_FAULT set but nothing dropped");
    CHECK(counter(s, "rel.retransmits_timeout") + counter(s, "rel.retransmits_fast") +
                  counter(s, "rel.tail_probes") >
              0,
          "packets dropped but nothing retransmitted");
  }
  if (std::getenv("SLUICE_TEST_PRINT_STATS") && s.rank() == 0)
    std::fprintf(stderr, "%s", s.stats_report().c_str());
  return 0;
}
