// The shm driver as a component: its keys, and wire-up (create the segment before the
// first fence, map the peers' after it, unlink the name after the second).
#include <memory>

#include "drivers/registry.hpp"
#include "drivers/shm/shm_driver.hpp"
#include "util/log.hpp"

namespace sluice::drivers {

namespace {

using T = util::ConfigType;

constexpr util::ConfigKey kKeys[] = {
    {"SHM_CELL_SIZE",
     T::size,
     "8K",
     {"256", "1M"},
     "bytes per shared-memory ring cell (rounded up to a multiple of 64); eager messages travel "
     "inline in one cell"},
    {"SHM_RING_CELLS",
     T::integer,
     "64",
     {"2", "16384"},
     "cells per ring (count, rounded up to a power of two), one ring per ordered pair of local "
     "ranks"},
    {"SHM_PIPE_CHUNK",
     T::size,
     "32K",
     {"256", "16M"},
     "bytes per pipelined fragment / shared bulk slot (at least SHM_CELL_SIZE: raised to it)"},
    {"SHM_PIPE_SLOTS",
     T::integer,
     "8",
     {"1", "1024"},
     "bulk slots (count) per ordered pair of local ranks; all local ranks' rings and slots "
     "together must fit in a quarter of physical memory"},
};

class ShmEndpoint final : public Endpoint {
 public:
  explicit ShmEndpoint(std::unique_ptr<ShmDriver> d) : driver_(std::move(d)), raw_(driver_.get()) {}
  std::string connect(WireupServices& w) override { return raw_->attach(w.job_id()); }
  void connected(WireupServices& w) override {
    raw_->unlink_name();
    const std::string mode = w.config().get_string("RNDV_MODE");
    if (!raw_->cma_available() && (mode == "get" || mode == "cma"))
      util::log(util::LogLevel::warn,
                "SLUICE_RNDV_MODE=get but process_vm_readv is not permitted here; "
                "shm uses the pipelined copy");
  }
  std::vector<std::unique_ptr<Driver>> take_rails() override {
    std::vector<std::unique_ptr<Driver>> v;
    v.push_back(std::move(driver_));
    return v;
  }

 private:
  std::unique_ptr<ShmDriver> driver_;
  ShmDriver* raw_;
};

std::unique_ptr<Endpoint> open_shm(WireupServices& w, std::span<const int>, std::string& err) {
  const util::ConfigValues& c = w.config();
  ShmParams sp;
  sp.cell_size = c.get_size("SHM_CELL_SIZE");
  sp.ring_cells = static_cast<std::size_t>(c.get_int("SHM_RING_CELLS"));
  sp.bulk_slot_size = c.get_size("SHM_PIPE_CHUNK");
  sp.bulk_slots = static_cast<std::size_t>(c.get_int("SHM_PIPE_SLOTS"));
  const std::span<const int> local = w.local_ranks();
  auto d = std::make_unique<ShmDriver>(w.rank(), std::vector<int>(local.begin(), local.end()), sp);
  // Each key is within its range, but their product may not be: every local rank maps every
  // other's segment, and the rings are touched as they are formatted. Refuse before creating.
  const uint64_t all = static_cast<uint64_t>(d->segment_bytes()) * local.size();
  if (all > util::physical_memory() / 4) {
    err = "shared-memory segments of " + std::to_string(all >> 20) + " MiB in all (" +
          std::to_string(local.size()) +
          " local ranks, SLUICE_SHM_CELL_SIZE x SLUICE_SHM_RING_CELLS + SLUICE_SHM_PIPE_CHUNK x "
          "SLUICE_SHM_PIPE_SLOTS per pair) exceed a quarter of physical memory (" +
          std::to_string(util::physical_memory() >> 20) + " MiB); lower those keys";
    return nullptr;
  }
  err = d->create(w.job_id());
  if (!err.empty()) return nullptr;
  return std::make_unique<ShmEndpoint>(std::move(d));
}

}  // namespace

extern const DriverComponent kShmComponent = {
    .name = "shm",
    .title = "shared memory between the ranks of one host (rings, bulk slots, CMA get)",
    .locality = Locality::same_host,
    .config = kKeys,
    .aliases = {},
    .open = open_shm,
    .on_by_default = true,
};

}  // namespace sluice::drivers
