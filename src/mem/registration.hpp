// Memory handles: what a driver needs to know about a buffer before it may move it without
// the CPU's help (a NIC's DMA, io_uring fixed buffers, a peer's CMA read).
//
//   Domain        registers memory for one driver family (host, uring, ofi ...): pins it if
//                 the hardware needs that, and says what a registration costs.
//   Registration  an RAII, reference-counted handle on one registered range: a local key
//                 for this process's driver, and a remote key to hand to a peer.
//   RemoteKey     a fixed-size, trivially copyable blob describing registered memory to a
//                 peer (address, length, domain key): protocols copy it into wire headers.
//
// The `host` domain pins nothing and needs no bookkeeping: its registrations are two words
// and cost nothing to make, copy or drop (no allocation, no atomic), which is what keeps
// the shm and socket paths as fast as before handles existed. A pinning domain gives each
// registration a refcounted Region that it frees (unpins) when the last handle goes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include "util/errc.hpp"

namespace sluice::mem {

// Describes registered memory to a peer. Interpreted by the memory domain of the driver
// that serves that peer (both ends run the same driver): `addr` is the domain's address of
// the first byte: the owner's virtual address (CMA, libfabric's FI_MR_VIRT_ADDR), or its
// offset into the registration where the domain addresses registrations by offset
// (libfabric without FI_MR_VIRT_ADDR); `length` bounds every access (a one-sided operation
// past it fails), `key` is the domain's access key (0 for host memory: CMA needs none; an
// rkey or fi_mr_key elsewhere). A driver reads or writes at `addr + offset`.
struct RemoteKey {
  uint64_t addr = 0;
  uint64_t length = 0;
  uint64_t key = 0;
  // Whether [offset, offset + n) lies inside the described memory.
  bool covers(uint64_t offset, std::size_t n) const {
    return offset <= length && n <= length - offset;
  }
};
inline constexpr std::size_t kRemoteKeyBytes = 24;
static_assert(sizeof(RemoteKey) == kRemoteKeyBytes && std::is_trivially_copyable_v<RemoteKey>,
              "RemoteKey travels in wire headers by memcpy");

// The local side's key: what the driver hands its hardware (an io_uring fixed-buffer
// index, an lkey / fi_mr_desc). Zero in the host domain.
struct LocalKey {
  uint64_t value = 0;
};

class Domain;

// State of one registration in a pinning domain, shared by every handle on it.
struct Region {
  std::atomic<uint32_t> refs{1};
  Domain* domain = nullptr;
  std::byte* base = nullptr;
  std::size_t length = 0;
  LocalKey local;
  uint64_t remote_key = 0;
  // A peer names this registration's bytes by their offset from `base`, not by their
  // virtual address (libfabric providers without FI_MR_VIRT_ADDR).
  bool offset_addressed = false;
};

// A handle on registered memory. Empty (default) means "not registered": valid for
// drivers whose caps say needs_registration = false. Copies share the registration;
// the memory stays registered until the last copy is gone.
class Registration {
 public:
  Registration() = default;
  // Host memory: nothing pinned, nothing counted.
  static Registration host(std::span<const std::byte> buf) {
    Registration r;
    r.base_ = const_cast<std::byte*>(buf.data());
    r.length_ = buf.size();
    return r;
  }
  // A pinning domain's handle: adopts one reference on `region`.
  static Registration adopt(Region* region) {
    Registration r;
    r.region_ = region;
    r.base_ = region->base;
    r.length_ = region->length;
    return r;
  }
  Registration(const Registration& o) : region_(o.region_), base_(o.base_), length_(o.length_) {
    if (region_) region_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  Registration(Registration&& o) noexcept : region_(o.region_), base_(o.base_), length_(o.length_) {
    o.region_ = nullptr;
    o.base_ = nullptr;
    o.length_ = 0;
  }
  Registration& operator=(Registration o) noexcept {
    std::swap(region_, o.region_);
    std::swap(base_, o.base_);
    std::swap(length_, o.length_);
    return *this;
  }
  ~Registration() { reset(); }
  void reset() {
    if (region_) release(region_);
    region_ = nullptr;
    base_ = nullptr;
    length_ = 0;
  }

  bool empty() const { return base_ == nullptr && length_ == 0; }
  std::byte* base() const { return base_; }
  std::size_t length() const { return length_; }
  bool pinned() const { return region_ != nullptr; }
  LocalKey local_key() const { return region_ ? region_->local : LocalKey{}; }
  bool offset_addressed() const { return region_ && region_->offset_addressed; }
  // The whole registration, as a peer addresses it.
  RemoteKey remote_key() const {
    return RemoteKey{offset_addressed() ? 0 : reinterpret_cast<uint64_t>(base_), length_,
                     region_ ? region_->remote_key : 0};
  }
  // Exactly `buf` (inside this registration, which may be larger: a cache entry covers
  // whole pages), as a peer addresses it: what a protocol hands a peer that will read or
  // write `buf` at offsets from 0. Empty when `buf` is not inside.
  RemoteKey remote_key_for(std::span<const std::byte> buf) const {
    if (empty() || !covers(buf)) return RemoteKey{};
    RemoteKey k = remote_key();
    k.addr += static_cast<uint64_t>(buf.data() - base_);
    k.length = buf.size();
    return k;
  }
  // Whether `buf` lies inside the registered range.
  bool covers(std::span<const std::byte> buf) const {
    return buf.data() >= base_ && buf.data() + buf.size() <= base_ + length_;
  }
  uint32_t use_count() const {
    return region_ ? region_->refs.load(std::memory_order_relaxed) : (empty() ? 0 : 1);
  }

 private:
  static void release(Region* r);
  Region* region_ = nullptr;
  std::byte* base_ = nullptr;
  std::size_t length_ = 0;
};

// What registering `bytes` bytes costs, as paper [NewMadeleine] section 2 models it:
// T_reg(L) = latency + L * per_byte. The protocols compare it with a copy.
struct RegistrationCost {
  double latency_ns = 0;
  double ns_per_byte = 0;
  double estimate_ns(std::size_t bytes) const {
    return latency_ns + ns_per_byte * static_cast<double>(bytes);
  }
};

class Domain {
 public:
  virtual ~Domain() = default;
  virtual std::string_view name() const = 0;
  // Whether registrations pin pages (and so cost something and must be released).
  virtual bool pins() const = 0;
  // Registers `buf` into `out` (replacing what it held). No exceptions: a status.
  virtual Errc register_memory(std::span<const std::byte> buf, Registration& out) = 0;
  // The cost estimate hook: a calibrated model (or a guess) of register_memory's time.
  virtual RegistrationCost cost() const = 0;
  // How many registrations may exist at once (a pinning domain's table size).
  virtual std::size_t max_registrations() const { return SIZE_MAX; }

 protected:
  friend class Registration;
  // The last handle on `r` went away: unpin and free it.
  virtual void deregister(Region* r) = 0;
};

// Pins nothing: today's drivers (self, shm through CMA, tcp and udp copying through the
// kernel) read and write plain process memory.
class HostDomain final : public Domain {
 public:
  std::string_view name() const override { return "host"; }
  bool pins() const override { return false; }
  Errc register_memory(std::span<const std::byte> buf, Registration& out) override {
    out = Registration::host(buf);
    return Errc::ok;
  }
  RegistrationCost cost() const override { return {}; }

 protected:
  void deregister(Region*) override {}
};

// The process-wide host domain (stateless). Inline, so every layer's unit tests link
// without a mem library.
inline HostDomain& host_domain() {
  static HostDomain domain;
  return domain;
}

inline void Registration::release(Region* r) {
  if (r->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) r->domain->deregister(r);
}

}  // namespace sluice::mem
