// The ofi driver's thresholds follow the provider's caps (docs/drivers/ofi.md, "Thresholds"):
// two ranks over SLUICE_DRIVERS=ofi; rank 0 sends messages on both sides of each threshold
// and the counters say which protocol and which libfabric call each one took.
//
//   mp_ofi_thresholds EAGER_MAX GET_THRESHOLD
//
// EAGER_MAX: the driver's largest eager payload (ofi.eager_max) the provider's caps should
// give; GET_THRESHOLD: its get threshold (ofi.get_threshold; 0: the protocol's). E.g. shm
// (inject_size 4096, host-local FI_RMA): 4020 4021; tcp;ofi_rxm: 65536 0.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "check.hpp"
#include "sluice/sluice.hpp"

namespace {

uint64_t counter(const sluice::Session& s, const char* name) {
  const auto v = s.counter(name);
  CHECK(v.has_value(), "no counter %s", name);
  return *v;
}

// Rank 0 sends `size` bytes to rank 1; on rank 0, the protocol it took and whether its
// packet went by fi_inject.
struct Took {
  std::string protocol;
  bool injected = false;
};

Took send_one(sluice::Session& s, std::size_t size) {
  std::vector<std::byte> buf(size, std::byte{7});
  Took t;
  const char* kProtocols[] = {"eager", "rndv_get", "rndv_pipeline", "rndv_push"};
  std::vector<uint64_t> before;
  for (const char* p : kProtocols)
    before.push_back(counter(s, (std::string("p2p.") + p + ".messages_sent").c_str()));
  const uint64_t injected = counter(s, "ofi.injected");
  if (s.rank() == 0) {
    CHECK(s.send(buf, 1, 5) == sluice::Errc::ok, "send %zu", size);
  } else {
    CHECK(s.recv(buf, 0, 5) == sluice::Errc::ok, "recv %zu", size);
  }
  for (std::size_t i = 0; i < before.size(); ++i)
    if (counter(s, (std::string("p2p.") + kProtocols[i] + ".messages_sent").c_str()) > before[i])
      t.protocol = kProtocols[i];
  t.injected = counter(s, "ofi.injected") > injected;
  CHECK(s.barrier() == sluice::Errc::ok, "barrier");
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  CHECK(argc == 3, "usage: mp_ofi_thresholds EAGER_MAX GET_THRESHOLD");
  const auto want_eager = static_cast<uint64_t>(std::strtoull(argv[1], nullptr, 10));
  const auto want_get = static_cast<uint64_t>(std::strtoull(argv[2], nullptr, 10));
  sluice::Session s;
  sluice::test::g_rank = s.rank();
  CHECK(s.size() == 2, "two ranks");
  CHECK(s.driver_name(1 - s.rank()) == "ofi", "the peer is served by ofi");
  const uint64_t eager_max = counter(s, "ofi.eager_max");
  const uint64_t get_from = counter(s, "ofi.get_threshold");
  const uint64_t inject = counter(s, "ofi.inject_limit");
  CHECK(eager_max == want_eager, "ofi.eager_max %llu, the caps give %llu",
        static_cast<unsigned long long>(eager_max), static_cast<unsigned long long>(want_eager));
  CHECK(get_from == want_get, "ofi.get_threshold %llu, the caps give %llu",
        static_cast<unsigned long long>(get_from), static_cast<unsigned long long>(want_get));
  const uint64_t limit = std::min<uint64_t>(eager_max, counter(s, "p2p.threshold.eager_limit"));

  // Eager up to the limit, rendezvous above: by fi_read from the driver's get threshold,
  // else the pipeline below the protocol's (32 KiB by default).
  Took t = send_one(s, limit);
  if (s.rank() == 0)
    CHECK(t.protocol == "eager", "%llu B took %s", (unsigned long long)limit, t.protocol.c_str());
  t = send_one(s, limit + 1);
  const char* above = get_from != 0 ? "rndv_get" : "rndv_pipeline";
  if (s.rank() == 0)
    CHECK(t.protocol == above, "%llu B took %s, not %s", (unsigned long long)(limit + 1),
          t.protocol.c_str(), above);

  // fi_inject carries a packet whose eager header (16 B) and payload fit the inject limit;
  // one byte more takes a send buffer and a completion.
  if (inject > 16) {
    const std::size_t fits = std::min<uint64_t>(inject - 16, limit);
    t = send_one(s, fits);
    if (s.rank() == 0)
      CHECK(t.protocol == "eager" && t.injected, "%zu B: %s, injected %d", fits, t.protocol.c_str(),
            int(t.injected));
    if (fits < limit) {
      t = send_one(s, fits + 1);
      if (s.rank() == 0)
        CHECK(t.protocol == "eager" && !t.injected, "%zu B: %s, injected %d", fits + 1,
              t.protocol.c_str(), int(t.injected));
    }
  }
  if (s.rank() == 0)
    std::printf("mp_ofi_thresholds: eager up to %llu B, get from %llu, inject %llu B: ok\n",
                (unsigned long long)limit, (unsigned long long)get_from,
                (unsigned long long)inject);
  return 0;
}
