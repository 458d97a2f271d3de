// The `uring` memory domain: registration that really pins, through io_uring's registered
// (fixed) buffer table. The kernel pins every page with pin_user_pages(FOLL_LONGTERM), the
// same call InfiniBand's ibv_reg_mr makes, and the pages stay pinned (and mapped into the
// ring) until the slot is cleared: the behaviour and the cost a pinning network has.
//
// One ring per domain, with a sparse table of `slots` entries created empty
// (io_uring_register_buffers_sparse) and filled / cleared one slot at a time in place
// (io_uring_register_buffers_update_tag), so registering never rebuilds the table. A
// Registration's local key is its slot index: what a fixed-buffer operation on this ring
// (SEND_ZC with IORING_RECVSEND_FIXED_BUF, READ_FIXED) names. Fixed buffers belong to one
// ring, so the drivers that send from a domain's registrations submit on its ring (ring()):
// a driver owns its domain (tcp: one per driver), and the protocol registers in the
// driver's memory_domain().
//
// Pinned-memory accounting. The kernel charges pinned pages to the process's pinned_vm
// (/proc/self/status VmPin) always, and to RLIMIT_MEMLOCK only for a process without
// CAP_IPC_LOCK: there a registration past the limit fails with ENOMEM (Errc::no_memory),
// which the protocol answers by copying. Root (CAP_IPC_LOCK) is not limited.
//
// Threads: register_memory and the last release of a Registration may run on any thread
// (the slot free list is under a mutex; the register syscall is serialised by the kernel).
// A slot released while a fixed-buffer operation still uses it is safe: the kernel keeps
// the old pages pinned until that operation lets go of them.
#pragma once

#include <liburing.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "mem/registration.hpp"

namespace sluice::mem {

struct UringDomainParams {
  unsigned slots = 1024;        // registered-buffer table size (kernel maximum 16384)
  unsigned ring_entries = 256;  // submission queue entries of the domain's ring
};

class UringDomain final : public Domain {
 public:
  // Largest buffer one slot may hold (the kernel's limit per registered buffer).
  static constexpr std::size_t kMaxRegistration = std::size_t{1} << 30;

  // Creates the ring and its empty table. nullptr and `why` set when io_uring is
  // unavailable (old kernel, io_uring_disabled, seccomp) or the table cannot be made.
  static std::unique_ptr<UringDomain> open(const UringDomainParams& params, std::string& why);
  ~UringDomain() override;
  UringDomain(const UringDomain&) = delete;
  UringDomain& operator=(const UringDomain&) = delete;

  std::string_view name() const override { return "uring"; }
  bool pins() const override { return true; }
  // Pins `buf` into a free slot. invalid_argument: empty or larger than kMaxRegistration;
  // no_memory: no free slot, or the kernel refused (RLIMIT_MEMLOCK without CAP_IPC_LOCK,
  // out of memory); internal: another kernel error (e.g. EFAULT: not mapped memory).
  Errc register_memory(std::span<const std::byte> buf, Registration& out) override;
  RegistrationCost cost() const override;
  std::size_t max_registrations() const override { return regions_.size(); }
  // Replaces the cost model (a calibration, e.g. sluice-bench regcost's fit).
  void set_cost(const RegistrationCost& c);

  // The ring whose fixed-buffer table holds this domain's registrations. Only the owning
  // driver submits on it and reaps it (one thread).
  io_uring& ring() { return ring_; }
  // Whether `reg` is a live registration of this domain (its slot holds exactly that range):
  // what a driver checks before naming the slot in a fixed-buffer operation.
  bool holds(const Registration& reg) const;
  // Whether `slot` holds exactly [base, base + length) now: the same check for a driver that
  // kept only a registration's slot and range (a weak reference: it holds no count on it).
  bool holds(uint64_t slot, const std::byte* base, std::size_t length) const;
  // The errno of the last failed kernel registration (0 if none).
  int last_error() const;

  unsigned slots() const { return static_cast<unsigned>(regions_.size()); }
  unsigned slots_in_use() const;
  uint64_t pinned_bytes() const;
  uint64_t registrations() const;  // registrations made so far
  uint64_t failures() const;       // registrations refused

 protected:
  void deregister(Region* r) override;

 private:
  explicit UringDomain(unsigned slots);

  io_uring ring_{};
  bool ring_ready_ = false;
  std::unique_ptr<Region[]> region_store_;
  std::span<Region> regions_;
  mutable std::mutex mutex_;  // free_, the counters, cost_
  std::vector<unsigned> free_;
  uint64_t pinned_bytes_ = 0;
  uint64_t registrations_ = 0;
  uint64_t failures_ = 0;
  int last_error_ = 0;
  RegistrationCost cost_;
};

}  // namespace sluice::mem
