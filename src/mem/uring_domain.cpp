#include "mem/uring_domain.hpp"

#include <sys/uio.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "mem/reg_emulation.hpp"

namespace sluice::mem {

namespace {

// Until calibrated: the fit `sluice-bench regcost` measured on the development machine
// (kernel 6.18, 4 KiB pages): lambda_reg = 0.35 us, B_reg = 64 GB/s (64 ns per page).
constexpr RegistrationCost kDefaultCost{.latency_ns = 350, .ns_per_byte = 1.0 / 63.7};

// Fills (iov_base set) or clears (iov_base null) one slot in place.
int update_slot(io_uring& ring, unsigned slot, void* base, std::size_t length) {
  iovec iov{base, length};
  const __u64 tag = 0;  // no CQE when the kernel finally drops the old buffer
  return io_uring_register_buffers_update_tag(&ring, slot, &iov, &tag, 1);
}

}  // namespace

UringDomain::UringDomain(unsigned slots)
    : region_store_(new Region[slots]), regions_(region_store_.get(), slots), cost_(kDefaultCost) {
  free_.reserve(slots);
  for (unsigned i = slots; i-- > 0;) free_.push_back(i);  // slot 0 first
  for (unsigned i = 0; i < slots; ++i) {
    regions_[i].domain = this;
    regions_[i].local.value = i;
  }
}

std::unique_ptr<UringDomain> UringDomain::open(const UringDomainParams& params, std::string& why) {
  if (params.slots == 0 || params.slots > 16384) {
    why = "io_uring: the registered-buffer table holds 1 to 16384 slots";
    return nullptr;
  }
  std::unique_ptr<UringDomain> d(new UringDomain(params.slots));
  if (int rc = io_uring_queue_init(params.ring_entries, &d->ring_, 0); rc < 0) {
    why = std::string("io_uring_queue_init: ") + std::strerror(-rc);
    return nullptr;
  }
  d->ring_ready_ = true;
  if (int rc = io_uring_register_buffers_sparse(&d->ring_, params.slots); rc < 0) {
    why = std::string("io_uring_register_buffers_sparse: ") + std::strerror(-rc) +
          (rc == -EINVAL ? " (kernel older than 5.19?)" : "");
    return nullptr;
  }
  return d;
}

UringDomain::~UringDomain() {
  // Exiting the ring unregisters the table: every slot still filled is unpinned (a
  // Registration must not outlive its domain; its owner, the driver, outlives them).
  if (ring_ready_) io_uring_queue_exit(&ring_);
}

Errc UringDomain::register_memory(std::span<const std::byte> buf, Registration& out) {
  if (buf.empty() || buf.size() > kMaxRegistration) return Errc::invalid_argument;
  unsigned slot;
  {
    std::lock_guard lock(mutex_);
    if (free_.empty()) {
      ++failures_;
      return Errc::no_memory;
    }
    slot = free_.back();
    free_.pop_back();
  }
  // The pinning syscall runs outside the lock: it is the slow part, and the kernel
  // serialises table updates itself.
  void* base = const_cast<std::byte*>(buf.data());
  const auto start = std::chrono::steady_clock::now();
  const int rc = update_slot(ring_, slot, base, buf.size());
  if (rc >= 0) pad_registration(start, buf.size());  // SLUICE_REG_EMULATE (reg_emulation.hpp)
  std::lock_guard lock(mutex_);
  if (rc < 0) {
    free_.push_back(slot);
    ++failures_;
    last_error_ = -rc;
    return rc == -ENOMEM ? Errc::no_memory : Errc::internal;
  }
  Region& r = regions_[slot];
  r.refs.store(1, std::memory_order_relaxed);
  r.base = const_cast<std::byte*>(buf.data());
  r.length = buf.size();
  r.remote_key = 0;  // io_uring has no remote access: a peer cannot use the key
  pinned_bytes_ += buf.size();
  ++registrations_;
  out = Registration::adopt(&r);
  return Errc::ok;
}

void UringDomain::deregister(Region* r) {
  const auto slot = static_cast<unsigned>(r->local.value);
  // Clearing cannot fail for a valid slot on a live ring; if it did, the slot stays out of
  // the free list rather than be handed out while still holding the old pages.
  const int rc = update_slot(ring_, slot, nullptr, 0);
  std::lock_guard lock(mutex_);
  pinned_bytes_ -= r->length;
  r->base = nullptr;
  r->length = 0;
  if (rc >= 0)
    free_.push_back(slot);
  else
    last_error_ = -rc;
}

RegistrationCost UringDomain::cost() const {
  std::lock_guard lock(mutex_);
  return cost_;
}

void UringDomain::set_cost(const RegistrationCost& c) {
  std::lock_guard lock(mutex_);
  cost_ = c;
}

bool UringDomain::holds(const Registration& reg) const {
  return reg.pinned() && holds(reg.local_key().value, reg.base(), reg.length());
}

bool UringDomain::holds(uint64_t slot, const std::byte* base, std::size_t length) const {
  if (slot >= regions_.size()) return false;
  std::lock_guard lock(mutex_);
  const Region& r = regions_[slot];
  return r.base == base && r.length == length && r.length != 0;
}

int UringDomain::last_error() const {
  std::lock_guard lock(mutex_);
  return last_error_;
}

unsigned UringDomain::slots_in_use() const {
  std::lock_guard lock(mutex_);
  return slots() - static_cast<unsigned>(free_.size());
}

uint64_t UringDomain::pinned_bytes() const {
  std::lock_guard lock(mutex_);
  return pinned_bytes_;
}

uint64_t UringDomain::registrations() const {
  std::lock_guard lock(mutex_);
  return registrations_;
}

uint64_t UringDomain::failures() const {
  std::lock_guard lock(mutex_);
  return failures_;
}

}  // namespace sluice::mem
