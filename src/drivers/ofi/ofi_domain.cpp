// The ofi memory domain (see ofi_domain.hpp).
#include "drivers/ofi/ofi_domain.hpp"

#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#include <chrono>
#include <new>

#include "drivers/ofi/ofi_loader.hpp"
#include "mem/reg_emulation.hpp"

namespace sluice::drivers {

namespace {

// A registration: the Region every handle shares, and the provider's memory region.
struct OfiRegion : mem::Region {
  fid_mr* mr = nullptr;
};

// Until calibrated (sluice-bench regcost): a guess between the software providers here
// (tcp, shm: a table insert, nothing pinned) and a NIC's pinning (verbs pins every page,
// as the io_uring domain's fit: ~64 ns per page).
constexpr mem::RegistrationCost kDefaultCost{.latency_ns = 2000, .ns_per_byte = 1.0 / 63.7};

}  // namespace

OfiDomain::OfiDomain(fid_domain* domain, fid_ep* ep, int mr_mode, uint64_t access,
                     std::size_t max_registrations)
    : domain_(domain),
      ep_(ep),
      mr_mode_(mr_mode),
      access_(access),
      max_registrations_(max_registrations ? max_registrations : SIZE_MAX),
      cost_(kDefaultCost) {}

Errc OfiDomain::register_memory(std::span<const std::byte> buf, mem::Registration& out) {
  if (buf.empty()) return Errc::invalid_argument;
  auto* r = new (std::nothrow) OfiRegion;
  if (!r) return Errc::no_memory;
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  // Without FI_MR_PROV_KEY the key is ours to choose: unique while the domain lives.
  const uint64_t requested = (mr_mode_ & FI_MR_PROV_KEY) ? 0 : next_key_++;
  fid_mr* mr = nullptr;
  int rc = fi_mr_reg(domain_, buf.data(), buf.size(), access_, 0, requested, 0, &mr, nullptr);
  if (rc == 0 && ep_ && (mr_mode_ & FI_MR_ENDPOINT)) {
    rc = fi_mr_bind(mr, &ep_->fid, 0);
    if (rc == 0) rc = fi_mr_enable(mr);
  }
  if (rc != 0) {
    if (mr) fi_close(&mr->fid);
    last_error_ = ofi::strerror(-rc);
    lock.unlock();
    delete r;
    stats_.failures.fetch_add(1, std::memory_order_relaxed);
    return rc == -FI_EINVAL ? Errc::invalid_argument : Errc::no_memory;
  }
  const uint64_t key = fi_mr_key(mr);
  void* desc = fi_mr_desc(mr);
  lock.unlock();
  mem::pad_registration(start, buf.size());  // SLUICE_REG_EMULATE (reg_emulation.hpp)
  r->domain = this;
  r->base = const_cast<std::byte*>(buf.data());
  r->length = buf.size();
  r->local.value = reinterpret_cast<uint64_t>(desc);
  r->remote_key = key;
  r->offset_addressed = (mr_mode_ & FI_MR_VIRT_ADDR) == 0;
  r->mr = mr;
  stats_.registrations.fetch_add(1, std::memory_order_relaxed);
  stats_.live.fetch_add(1, std::memory_order_relaxed);
  stats_.bytes.fetch_add(buf.size(), std::memory_order_relaxed);
  out = mem::Registration::adopt(r);
  return Errc::ok;
}

void OfiDomain::deregister(mem::Region* region) {
  auto* r = static_cast<OfiRegion*>(region);
  {
    std::lock_guard lock(mutex_);
    fi_close(&r->mr->fid);
  }
  stats_.live.fetch_sub(1, std::memory_order_relaxed);
  stats_.bytes.fetch_sub(r->length, std::memory_order_relaxed);
  delete r;
}

std::string OfiDomain::last_error() const {
  std::lock_guard lock(mutex_);
  return last_error_;
}

}  // namespace sluice::drivers
