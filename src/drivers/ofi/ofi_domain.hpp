// The `ofi` memory domain: registration through libfabric (fi_mr_reg), so that the
// registration cache, the superpipeline's staging buffers, on-demand pinning and Firehose
// register user memory for the ofi driver through the same mem::Domain interface as for
// io_uring. It lives with the driver (drivers may depend on mem, not the reverse): it needs
// the driver's libfabric domain and endpoint.
//
// The provider's mr_mode bits, as fi_getinfo returned them for the chosen endpoint:
//   FI_MR_LOCAL      local buffers of fi_read / fi_write need a descriptor: LocalKey holds
//                    fi_mr_desc (the driver registers a buffer it is handed unregistered)
//   FI_MR_VIRT_ADDR  a peer addresses registered memory by virtual address; without it by
//                    offset from the registration's start (Region::offset_addressed, so
//                    Registration::remote_key_for gives the peer the right address)
//   FI_MR_PROV_KEY   the provider picks the key (fi_mr_key); without it Sluice requests one,
//                    from a counter that never reuses a key while the driver is open
//   FI_MR_ALLOCATED  only allocated (mapped) memory: user buffers are; nothing else to do
//   FI_MR_ENDPOINT   a registration is bound to the endpoint (fi_mr_bind) and enabled
//                    (fi_mr_enable) before use (rdm: the one endpoint; msg endpoints are
//                    asked for without it)
//   FI_MR_RAW        not honoured: the RMA endpoint is asked for without it, so a provider
//                    that needs raw keys (fi_mr_raw_attr / fi_mr_map_raw) runs without RMA and
//                    this domain (the pipelined protocol moves everything, as before)
//
// libfabric's own MR cache is off (FI_MR_CACHE_MAX_COUNT=0, set before fi_getinfo): Sluice's
// RegistrationCache over this domain is the only one watching the address space, so every
// register_memory here is a real fi_mr_reg and every deregister a real fi_close.
//
// Threads: register_memory and the last release of a handle may run outside the engine's
// lock (the ondemand strategy's pinning thread): they are serialised by a mutex here, and the
// endpoint is asked for FI_THREAD_DOMAIN, under which tcp;ofi_rxm and shm lock their MR maps
// themselves (not checked on other providers).
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "mem/registration.hpp"

namespace sluice::drivers {

struct OfiDomainStats {
  std::atomic<uint64_t> registrations{0};  // fi_mr_reg calls that succeeded
  std::atomic<uint64_t> failures{0};       // ... that failed (or a key that did not fit)
  std::atomic<uint64_t> live{0};           // registrations not yet closed
  std::atomic<uint64_t> bytes{0};          // their bytes
};

class OfiDomain final : public mem::Domain {
 public:
  // `ep`: the endpoint registrations are bound to under FI_MR_ENDPOINT (null on msg: no
  // binding asked for). `access`: FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE.
  OfiDomain(fid_domain* domain, fid_ep* ep, int mr_mode, uint64_t access,
            std::size_t max_registrations);
  ~OfiDomain() override = default;
  OfiDomain(const OfiDomain&) = delete;
  OfiDomain& operator=(const OfiDomain&) = delete;

  std::string_view name() const override { return "ofi"; }
  bool pins() const override { return true; }
  // invalid_argument: empty; no_memory: the provider refused (its MR table is full, or
  // pinning failed): the protocol then copies.
  Errc register_memory(std::span<const std::byte> buf, mem::Registration& out) override;
  mem::RegistrationCost cost() const override { return cost_; }
  std::size_t max_registrations() const override { return max_registrations_; }

  int mr_mode() const { return mr_mode_; }
  const OfiDomainStats& stats() const { return stats_; }
  // The errno-style text of the last failed fi_mr_reg (empty if none).
  std::string last_error() const;

 protected:
  void deregister(mem::Region* r) override;

 private:
  fid_domain* domain_;
  fid_ep* ep_;
  int mr_mode_;
  uint64_t access_;
  std::size_t max_registrations_;
  mem::RegistrationCost cost_;
  mutable std::mutex mutex_;     // the provider's domain calls; next_key_, last_error_
  uint64_t next_key_ = 0x10000;  // requested keys (no FI_MR_PROV_KEY); the pools use 1
  std::string last_error_;
  OfiDomainStats stats_;
};

}  // namespace sluice::drivers
