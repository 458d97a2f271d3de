// MPI one-sided communication (MPI-3.1 chapter 11): windows, RMA operations, epochs,
// window attributes, names and error handlers.
//
// Two ways to reach a target's window memory, chosen per window:
//   shared   MPI_Win_allocate and MPI_Win_allocate_shared when every member of the
//            communicator is on this host: one shared segment holds every rank's memory and
//            control block, mapped by all of them (as [OpenMPI]'s osc/sm). Put and get are
//            memcpy, locks and the accumulate lock are CPU atomics on the control blocks; the
//            target runs nothing.
//   native   MPI_Win_create (user memory), MPI_Win_create_dynamic, and MPI_Win_allocate across
//            hosts: the window memory and a small control block are registered with the
//            native one-sided protocol (proto/rma): put and get through it (CMA on shared
//            memory, packets served by the target's engine elsewhere), locks and the
//            accumulate lock through its remote atomics.
// One algorithm over both: passive-target locks are a 64-bit word per target (shared holders
// counted, kExclusive added by the exclusive holder), as [OpenMPI]'s osc/rdma does;
// accumulate-type operations (Accumulate, Get_accumulate, Fetch_and_op, Compare_and_swap)
// run under a per-target accumulate lock, so they are atomic per element with respect to
// each other from every origin (MPI-3.1 §11.7.1) whatever the op, type or datatype layout.
// Active target: fence is completion of this rank's operations plus a barrier; post/start/
// complete/wait are zero-byte messages on the window's private communicator.
// Memory model: MPI_WIN_UNIFIED (puts land in the window memory itself on every path).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/rma_copy.hpp"
#include "core/rma_glue.hpp"
#include "mpi/big_lock.hpp"
#include "mpi/datatype.hpp"
#include "mpi/mpi_internal.hpp"
#include "mpi/op.hpp"

namespace {

constexpr uint32_t kWinMagic = 0x534c5749;  // "SLWI"
constexpr int64_t kExclusive = int64_t{1} << 40;
// Dynamic windows: attached regions listed in the control block itself; more go to an
// overflow array the owner registers separately (WinCtl::more).
constexpr std::size_t kInlineAttached = 64;

// One attached region of a dynamic window, as its owner publishes it.
struct DynEntry {
  uint64_t addr = 0, len = 0, key = 0;
};

// Per-rank control block: the lock word, the accumulate lock and (dynamic windows) the
// directory of attached regions. In the shared segment or registered with the native
// protocol; always accessed atomically (CPU atomics or the protocol's remote atomics).
struct alignas(64) WinCtl {
  int64_t lock = 0;
  int64_t acc = 0;
  uint64_t n_attached = 0;  // slots in use (some may be empty after a detach)
  uint64_t pad = 0;
  DynEntry more;  // the overflow array: slots kInlineAttached.. (addr, bytes, region key)
  DynEntry attached[kInlineAttached];
};
constexpr uint64_t kLockOffset = offsetof(WinCtl, lock);
constexpr uint64_t kAccOffset = offsetof(WinCtl, acc);

struct WinTarget {
  int world = 0;
  std::byte* base = nullptr;  // shared: where its memory is mapped in this process
  MPI_Aint size = 0;
  int disp_unit = 1;
  WinCtl* ctl = nullptr;                     // shared
  sluice::mem::RemoteKey data{}, ctl_key{};  // native
  // native, dynamic: the directory read from its control block (refreshed at every
  // synchronization call, after which newly attached memory may be accessed).
  std::vector<DynEntry> dir;
  bool dir_valid = false;
  uint8_t lock_mode = 0;  // kLockShared / kLockExclusive (| kLockNoCheck) while locked
};
constexpr uint8_t kLockShared = 1, kLockExclusive = 2, kLockNoCheck = 4;

// What Win_create/allocate publish to the other members.
struct WinPeerInfo {
  uint64_t base = 0;
  int64_t size = 0;
  int64_t disp_unit = 1;
  sluice::mem::RemoteKey data{}, ctl{};
};

}  // namespace

struct sluice_win_s {
  uint32_t magic = 0;
  MPI_Comm comm = nullptr;  // private duplicate of the creating communicator
  int flavor = MPI_WIN_FLAVOR_CREATE;
  int model = MPI_WIN_UNIFIED;
  bool shared = false;  // targets reached through the shared segment
  void* base = nullptr;
  MPI_Aint size = 0;
  int disp_unit = 1;
  std::vector<WinTarget> targets;  // by comm rank
  // shared segment
  void* seg = nullptr;
  std::size_t seg_len = 0;
  // native
  std::unique_ptr<WinCtl> own_ctl;
  uint64_t data_region = 0, ctl_region = 0;
  std::vector<uint64_t> attached_regions;  // dynamic: region ids, one per slot
  // dynamic: the overflow arrays of the directory (slots from kInlineAttached on), the last
  // the current one. Earlier ones stay registered until the window is freed: an origin may
  // still be reading one.
  std::vector<std::unique_ptr<DynEntry[]>> more;
  std::vector<uint64_t> more_regions;
  std::size_t more_cap = 0;
  DynEntry& slot_entry(std::size_t i) {
    return i < kInlineAttached ? ctl->attached[i] : more.back()[i - kInlineAttached];
  }
  void* own_mem = nullptr;  // Win_allocate (native): our allocation
  std::size_t own_mem_len = 0;
  WinCtl* ctl = nullptr;  // own control block
  // epochs
  int n_locked = 0;
  bool lock_all = false;
  bool lock_all_nocheck = false;
  bool fence_epoch = false;
  std::vector<int> access_group;    // Win_start's targets (comm ranks)
  std::vector<int> exposure_group;  // Win_post's origins
  std::vector<MPI_Request> post_reqs;
  bool started = false, posted = false;
  // attributes, name, error handler, info
  MPI_Errhandler errh = nullptr;
  std::string name;
  std::vector<std::pair<int, void*>> attrs;
  std::vector<std::pair<std::string, std::string>> info;
  MPI_Aint attr_size = 0;
  int attr_disp_unit = 1, attr_flavor = 0, attr_model = MPI_WIN_UNIFIED;

  bool valid() const { return magic == kWinMagic; }
};

namespace sluice::mpi {
namespace {

// ---- errors ------------------------------------------------------------------------------

const char* win_label(MPI_Win w) {
  return w->name.empty() ? "window" : w->name.c_str();
}

int win_raise_v(MPI_Win w, int errclass, const char* function, const char* fmt, va_list ap) {
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  if (!w || !w->valid()) return raise(nullptr, errclass, function, buf);
  switch (w->errh->kind) {
    case sluice_errhandler_s::Kind::ret:
      return errclass;
    case sluice_errhandler_s::Kind::user: {
      int code = errclass;
      MPI_Win handle = w;
      reinterpret_cast<MPI_Win_errhandler_function*>(w->errh->fn)(&handle, &code);
      return errclass;
    }
    case sluice_errhandler_s::Kind::fatal:
      break;
  }
  const char* cls = error_string(errclass);
  abort_job(errclass, std::string(function) + ": " + buf + " [" + (cls ? cls : "?") +
                          "] (MPI_ERRORS_ARE_FATAL on " + win_label(w) + ")");
}

__attribute__((format(printf, 4, 5))) int win_raise(MPI_Win w, int errclass, const char* function,
                                                    const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = win_raise_v(w, errclass, function, fmt, ap);
  va_end(ap);
  return rc;
}

int check_win(MPI_Win w, const char* function) {
  if (!initialized()) abort_not_initialized(function);
  if (w && w->valid()) [[likely]]
    return MPI_SUCCESS;
  return raise(nullptr, MPI_ERR_WIN, function,
               w ? "invalid window (freed or not a window)" : "invalid window MPI_WIN_NULL");
}

// ---- two cores copy (shared windows) --------------------------------------------------------

// Copies `bytes` from `src` to `dst` (one of them in a shared window). From WIN_ASSIST bytes
// on, a helper thread of this process on another CPU copies part of it (core/rma_copy.hpp):
// when ranks are bound to cores, the CPU of a rank that waits meanwhile. Not for the own
// rank's memory: no other rank need be waiting then.
void window_copy(MPI_Win w, int target, std::byte* dst, const std::byte* src, std::size_t bytes) {
  if (target == w->comm->rank) {
    std::memcpy(dst, src, bytes);
    return;
  }
  engine().copy_assist().copy(dst, src, bytes);
}

// ---- native transport --------------------------------------------------------------------

detail::RmaGlue& glue() {
  detail::RmaGlue& g = engine().rma();
  // Windows serve peers from the engine's progress (and keep a progress thread polling).
  // Active messages are not used by the MPI layer.
  if (!g.serving()) g.open([](const proto::rma::AmArrival&) {});
  return g;
}

int wait_native(MPI_Win w, int world_target, const char* function) {
  proto::rma::RmaProtocol& p = glue().proto();
  block_until([&] { return p.outstanding(world_target) == 0; });
  if (Errc e = p.take_error(world_target); e != Errc::ok)
    return win_raise(w, MPI_ERR_RMA_RANGE, function,
                     "a one-sided operation failed at the target (%s)",
                     std::string(to_string(e)).c_str());
  return MPI_SUCCESS;
}

// An atomic on a 64-bit word of a target's control block: the old value.
int64_t ctl_atomic(MPI_Win w, int target, uint64_t offset, proto::rma::AtomicOp op, int64_t operand,
                   int64_t compare) {
  WinTarget& t = w->targets[static_cast<std::size_t>(target)];
  if (w->shared) {
    auto* word = reinterpret_cast<int64_t*>(reinterpret_cast<std::byte*>(t.ctl) + offset);
    switch (op) {
      case proto::rma::AtomicOp::fetch_add:
        return __atomic_fetch_add(word, operand, __ATOMIC_ACQ_REL);
      case proto::rma::AtomicOp::compare_swap: {
        int64_t expected = compare;
        __atomic_compare_exchange_n(word, &expected, operand, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE);
        return expected;
      }
      case proto::rma::AtomicOp::swap:
        return __atomic_exchange_n(word, operand, __ATOMIC_ACQ_REL);
    }
    return 0;
  }
  int64_t old = 0;
  proto::rma::RmaProtocol& p = glue().proto();
  if (p.atomic(t.world, op, 8, t.ctl_key, offset, static_cast<uint64_t>(operand),
               static_cast<uint64_t>(compare), &old, 0) != Errc::ok)
    return kExclusive;  // not reached (the key and offset are ours): reads as "held"
  wait_native(w, t.world, "MPI_Win_lock");
  return old;
}

bool try_lock(MPI_Win w, int target, bool exclusive) {
  using proto::rma::AtomicOp;
  if (exclusive)
    return ctl_atomic(w, target, kLockOffset, AtomicOp::compare_swap, kExclusive, 0) == 0;
  if (ctl_atomic(w, target, kLockOffset, AtomicOp::fetch_add, 1, 0) < kExclusive) return true;
  ctl_atomic(w, target, kLockOffset, AtomicOp::fetch_add, -1, 0);
  return false;
}

void acquire_lock(MPI_Win w, int target, bool exclusive) {
  block_until([&] { return try_lock(w, target, exclusive); });
}

void release_lock(MPI_Win w, int target, bool exclusive) {
  ctl_atomic(w, target, kLockOffset, proto::rma::AtomicOp::fetch_add, exclusive ? -kExclusive : -1,
             0);
}

void acquire_acc(MPI_Win w, int target) {
  block_until([&] {
    return ctl_atomic(w, target, kAccOffset, proto::rma::AtomicOp::compare_swap, 1, 0) == 0;
  });
}

void release_acc(MPI_Win w, int target) {
  if (w->shared) {
    __atomic_store_n(&w->targets[static_cast<std::size_t>(target)].ctl->acc, int64_t{0},
                     __ATOMIC_RELEASE);
    return;
  }
  ctl_atomic(w, target, kAccOffset, proto::rma::AtomicOp::swap, 0, 0);
}

// Completes this rank's operations towards `target` (-1: every target) at the target.
int complete_ops(MPI_Win w, int target, const char* function) {
  if (w->shared) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return MPI_SUCCESS;
  }
  return wait_native(w, target < 0 ? -1 : w->targets[static_cast<std::size_t>(target)].world,
                     function);
}

// ---- target addressing -------------------------------------------------------------------

// The bytes a target datatype covers, one block at a time, in packed order:
// fn(offset from the element base, length).
template <class Fn>
void for_each_block(MPI_Datatype t, std::size_t count, Fn&& fn) {
  if (dt_is_contiguous(t)) {
    if (count * t->size != 0) fn(dt_true_lb(t), count * t->size);
    return;
  }
  const MPI_Aint extent = dt_extent(t);
  for (std::size_t e = 0; e < count; ++e)
    for (std::size_t r = 0; r < t->reps; ++r)
      for (const Run& run : t->runs)
        for (std::size_t i = 0; i < run.count; ++i)
          fn(static_cast<MPI_Aint>(e) * extent + static_cast<MPI_Aint>(r) * t->rep_stride +
                 run.offset + static_cast<MPI_Aint>(i) * run.stride,
             run.length);
}

// Where an access lands: for shared windows `local` points at the target's memory; for
// native ones `key` and `offset` name it. Checks the range against the window.
struct Where {
  std::byte* local = nullptr;
  sluice::mem::RemoteKey key{};
  uint64_t offset = 0;  // byte offset of the displacement within key
};

int dyn_directory(MPI_Win w, WinTarget& t, const char* function) {
  if (t.dir_valid) return MPI_SUCCESS;
  proto::rma::RmaProtocol& p = glue().proto();
  // The owner may grow its overflow array meanwhile (the old one stays readable, but the
  // control block may be read half-updated): a failed read of the array starts over.
  for (int attempt = 0;; ++attempt) {
    WinCtl copy;
    if (p.get(t.world, {reinterpret_cast<std::byte*>(&copy), sizeof copy}, t.ctl_key, 0, 0) !=
        Errc::ok)
      return win_raise(w, MPI_ERR_RMA_RANGE, function, "cannot read the target's directory");
    if (int rc = wait_native(w, t.world, function)) return rc;
    const uint64_t n = copy.n_attached;
    t.dir.assign(copy.attached, copy.attached + std::min<uint64_t>(n, kInlineAttached));
    if (n > kInlineAttached) {
      const uint64_t extra = n - kInlineAttached;
      if (extra * sizeof(DynEntry) <= copy.more.len) {
        t.dir.resize(n);
        const Errc e = p.get(t.world,
                             {reinterpret_cast<std::byte*>(t.dir.data() + kInlineAttached),
                              extra * sizeof(DynEntry)},
                             {copy.more.addr, copy.more.len, copy.more.key}, 0, 0);
        if (e == Errc::ok) {
          block_until([&] { return p.outstanding(t.world) == 0; });
          if (p.take_error(t.world) == Errc::ok) break;
        }
      }
      if (attempt == 8)
        return win_raise(w, MPI_ERR_RMA_RANGE, function,
                         "cannot read the directory of attached memory of world rank %d", t.world);
      t.dir.clear();
      continue;
    }
    break;
  }
  t.dir_valid = true;
  return MPI_SUCCESS;
}

// Counts are MPI_Count: the int bindings and the MPI-4.0 _c ones share everything below.
int locate(MPI_Win w, int target, MPI_Aint disp, MPI_Datatype type, MPI_Count count,
           const char* function, Where& out) {
  WinTarget& t = w->targets[static_cast<std::size_t>(target)];
  if (count == 0) return MPI_SUCCESS;
  const MPI_Aint lo = dt_true_lb(type);
  const MPI_Aint span = (count - 1) * dt_extent(type) + dt_true_extent(type);
  if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
    const uint64_t first = static_cast<uint64_t>(disp + lo);
    // A directory read at an earlier synchronisation may predate the attach (the program may
    // have learnt of it by a message since): on a miss, read it again once.
    for (int pass = 0; pass < 2; ++pass) {
      if (pass == 1) {
        if (!t.dir_valid) break;
        t.dir_valid = false;
      }
      const bool had = t.dir_valid;
      if (int rc = dyn_directory(w, t, function)) return rc;
      for (const DynEntry& d : t.dir) {
        if (d.key && first >= d.addr && first + static_cast<uint64_t>(span) <= d.addr + d.len) {
          out.key = {d.addr, d.len, d.key};
          out.offset = static_cast<uint64_t>(disp) - d.addr;
          return MPI_SUCCESS;
        }
      }
      if (!had) break;  // just read: nothing newer to find
    }
    return win_raise(w, MPI_ERR_RMA_RANGE, function,
                     "address %#lx (+%ld bytes) is not in memory rank %d attached",
                     static_cast<unsigned long>(first), static_cast<long>(span), target);
  }
  const MPI_Aint offset = disp * t.disp_unit;
  if (disp < 0 || offset + lo < 0 || offset + lo + span > t.size)
    return win_raise(w, MPI_ERR_RMA_RANGE, function,
                     "displacement %ld (%ld bytes) out of rank %d's window of %ld bytes",
                     static_cast<long>(disp), static_cast<long>(span), target,
                     static_cast<long>(t.size));
  if (w->shared)
    out.local = t.base + offset;
  else {
    out.key = t.data;
    out.offset = static_cast<uint64_t>(offset);
  }
  return MPI_SUCCESS;
}

bool in_access_epoch(MPI_Win w, int target) {
  return w->fence_epoch || w->lock_all ||
         w->targets[static_cast<std::size_t>(target)].lock_mode != 0 ||
         (w->started && std::find(w->access_group.begin(), w->access_group.end(), target) !=
                            w->access_group.end());
}

// Common checks of the RMA calls: MPI_SUCCESS, or the raised error. `proc_null` is set
// for MPI_PROC_NULL (nothing to do).
int check_rma(MPI_Win w, int target, const char* function, bool& proc_null) {
  proc_null = false;
  if (int rc = check_win(w, function)) return rc;
  if (target == MPI_PROC_NULL) {
    proc_null = true;
    return MPI_SUCCESS;
  }
  if (target < 0 || target >= w->comm->size)
    return win_raise(w, MPI_ERR_RANK, function, "invalid target rank %d (window of %d ranks)",
                     target, w->comm->size);
  if (!in_access_epoch(w, target))
    return win_raise(w, MPI_ERR_RMA_SYNC, function,
                     "no access epoch to rank %d is open (fence, lock, lock_all or start)", target);
  return MPI_SUCCESS;
}

int check_dt(MPI_Win w, MPI_Datatype t, MPI_Count count, const char* function) {
  if (!t || !(t->predefined || t->committed))
    return win_raise(w, MPI_ERR_TYPE, function, "invalid datatype");
  if (count < 0) return win_raise(w, MPI_ERR_COUNT, function, "invalid count %lld", count);
  return MPI_SUCCESS;
}

// ---- the data movements --------------------------------------------------------------

// Moves packed bytes to (put) or from (get) the target's memory laid out as `tt`.
int move_packed(MPI_Win w, int target, const Where& at, MPI_Datatype tt, MPI_Count tcount,
                std::byte* packed, bool put, const char* function) {
  if (w->shared) {
    if (put)
      dt_unpack(tt, packed, static_cast<std::size_t>(tcount) * dt_size(tt), at.local,
                static_cast<std::size_t>(tcount));
    else
      dt_pack(tt, at.local, static_cast<std::size_t>(tcount), packed);
    return MPI_SUCCESS;
  }
  proto::rma::RmaProtocol& p = glue().proto();
  const int world = w->targets[static_cast<std::size_t>(target)].world;
  std::size_t done = 0;
  Errc err = Errc::ok;
  for_each_block(tt, static_cast<std::size_t>(tcount), [&](MPI_Aint off, std::size_t len) {
    if (err != Errc::ok) return;
    const uint64_t o = at.offset + static_cast<uint64_t>(off);
    err = put ? p.put(world, {packed + done, len}, at.key, o, 0)
              : p.get(world, {packed + done, len}, at.key, o, 0);
    done += len;
  });
  if (err != Errc::ok)
    return win_raise(w, MPI_ERR_RMA_RANGE, function, "access outside rank %d's memory", target);
  return MPI_SUCCESS;
}

int do_put(MPI_Win w, const void* origin, MPI_Count ocount, MPI_Datatype ot, int target,
           MPI_Aint disp, MPI_Count tcount, MPI_Datatype tt, const char* function) {
  if (int rc = check_dt(w, ot, ocount, function)) return rc;
  if (int rc = check_dt(w, tt, tcount, function)) return rc;
  const std::size_t bytes = static_cast<std::size_t>(ocount) * dt_size(ot);
  if (bytes != static_cast<std::size_t>(tcount) * dt_size(tt))
    return win_raise(w, MPI_ERR_TRUNCATE, function,
                     "origin (%zu bytes) and target (%zu bytes) signatures differ", bytes,
                     static_cast<std::size_t>(tcount) * dt_size(tt));
  if (bytes == 0) return MPI_SUCCESS;
  Where at;
  if (int rc = locate(w, target, disp, tt, tcount, function, at)) return rc;
  const bool ocontig = dt_is_contiguous(ot), tcontig = dt_is_contiguous(tt);
  const auto* src = static_cast<const std::byte*>(origin);
  if (w->shared && ocontig && tcontig) {
    std::byte* dst = at.local + dt_true_lb(tt);
    src += dt_true_lb(ot);
    if (bytes == 8)  // one store: what an 8-byte put is on a shared window
      __builtin_memcpy(dst, src, 8);
    else
      window_copy(w, target, dst, src, bytes);
    return MPI_SUCCESS;
  }
  if (!w->shared && ocontig && tcontig) {
    proto::rma::RmaProtocol& p = glue().proto();
    if (p.put(w->targets[static_cast<std::size_t>(target)].world, {src + dt_true_lb(ot), bytes},
              at.key, at.offset + static_cast<uint64_t>(dt_true_lb(tt)), 0) != Errc::ok)
      return win_raise(w, MPI_ERR_RMA_RANGE, function, "access outside rank %d's memory", target);
    return MPI_SUCCESS;
  }
  std::byte* packed;
  std::unique_ptr<std::byte[]> tmp;
  if (ocontig) {
    packed = const_cast<std::byte*>(src + dt_true_lb(ot));
  } else {
    tmp.reset(new std::byte[bytes]);
    dt_pack(ot, origin, static_cast<std::size_t>(ocount), tmp.get());
    packed = tmp.get();
  }
  int rc = move_packed(w, target, at, tt, tcount, packed, true, function);
  // A staged origin is freed on return: complete the transfer first.
  if (!rc && tmp && !w->shared) rc = complete_ops(w, target, function);
  return rc;
}

// Completes this window's operations to `target` (-1: all).
int complete(MPI_Win w, int target, const char* function) {
  return complete_ops(w, target, function);
}

int do_get(MPI_Win w, void* origin, MPI_Count ocount, MPI_Datatype ot, int target, MPI_Aint disp,
           MPI_Count tcount, MPI_Datatype tt, const char* function) {
  if (int rc = check_dt(w, ot, ocount, function)) return rc;
  if (int rc = check_dt(w, tt, tcount, function)) return rc;
  const std::size_t bytes = static_cast<std::size_t>(ocount) * dt_size(ot);
  if (bytes != static_cast<std::size_t>(tcount) * dt_size(tt))
    return win_raise(w, MPI_ERR_TRUNCATE, function,
                     "origin (%zu bytes) and target (%zu bytes) signatures differ", bytes,
                     static_cast<std::size_t>(tcount) * dt_size(tt));
  if (bytes == 0) return MPI_SUCCESS;
  Where at;
  if (int rc = locate(w, target, disp, tt, tcount, function, at)) return rc;
  const bool ocontig = dt_is_contiguous(ot), tcontig = dt_is_contiguous(tt);
  auto* dst = static_cast<std::byte*>(origin);
  if (w->shared && ocontig && tcontig) {
    window_copy(w, target, dst + dt_true_lb(ot), at.local + dt_true_lb(tt), bytes);
    return MPI_SUCCESS;
  }
  if (!w->shared && ocontig && tcontig) {
    proto::rma::RmaProtocol& p = glue().proto();
    if (p.get(w->targets[static_cast<std::size_t>(target)].world, {dst + dt_true_lb(ot), bytes},
              at.key, at.offset + static_cast<uint64_t>(dt_true_lb(tt)), 0) != Errc::ok)
      return win_raise(w, MPI_ERR_RMA_RANGE, function, "access outside rank %d's memory", target);
    return MPI_SUCCESS;
  }
  if (ocontig) return move_packed(w, target, at, tt, tcount, dst + dt_true_lb(ot), false, function);
  std::unique_ptr<std::byte[]> tmp(new std::byte[bytes]);
  if (int rc = move_packed(w, target, at, tt, tcount, tmp.get(), false, function)) return rc;
  // A non-contiguous origin is filled from the staging once the data is here.
  if (!w->shared)
    if (int rc = complete_ops(w, target, function)) return rc;
  dt_unpack(ot, tmp.get(), bytes, origin, static_cast<std::size_t>(ocount));
  return MPI_SUCCESS;
}

// The predefined type an accumulate applies its op to, or null: every basic element of a
// derived type must be of that one type (MPI-3.1 §11.3.4), gaps allowed (a vector of it).
MPI_Datatype basic_of(MPI_Datatype t) {
  if (t->predefined) return t;
  if (t->op_base) return const_cast<MPI_Datatype>(t->op_base);
  MPI_Datatype found = nullptr;
  for (MPI_Datatype child : t->args_type) {
    MPI_Datatype b = basic_of(child);
    if (!b || (found && b != found)) return nullptr;
    found = b;
  }
  return found;
}

// Accumulate-type operation: under the target's accumulate lock, the target data (laid out
// as tt) is read into `result` (packed, when not null) and combined with `origin_packed`
// (when op is not MPI_NO_OP).
int do_accumulate(MPI_Win w, const std::byte* origin_packed, std::byte* result_packed,
                  std::size_t bytes, int target, MPI_Aint disp, MPI_Count tcount, MPI_Datatype tt,
                  MPI_Op op, MPI_Datatype basic, const char* function) {
  if (bytes == 0) return MPI_SUCCESS;
  Where at;
  if (int rc = locate(w, target, disp, tt, tcount, function, at)) return rc;
  const std::size_t n = bytes / dt_size(basic);
  acquire_acc(w, target);
  int rc = MPI_SUCCESS;
  if (w->shared && dt_is_contiguous(tt) &&
      dt_size(basic) == static_cast<std::size_t>(dt_extent(basic))) {
    std::byte* data = at.local + dt_true_lb(tt);
    if (result_packed) std::memcpy(result_packed, data, bytes);
    if (op != MPI_NO_OP) op_apply_packed(op, basic, origin_packed, data, n);
  } else {
    std::unique_ptr<std::byte[]> cur(new std::byte[bytes]);
    rc = move_packed(w, target, at, tt, tcount, cur.get(), false, function);
    if (!rc) rc = complete_ops(w, target, function);
    if (!rc) {
      if (result_packed) std::memcpy(result_packed, cur.get(), bytes);
      if (op != MPI_NO_OP) {
        op_apply_packed(op, basic, origin_packed, cur.get(), n);
        rc = move_packed(w, target, at, tt, tcount, cur.get(), true, function);
        if (!rc) rc = complete_ops(w, target, function);
      }
    }
  }
  if (w->shared) std::atomic_thread_fence(std::memory_order_release);
  release_acc(w, target);
  return rc;
}

int check_acc_op(MPI_Win w, MPI_Op op, MPI_Datatype t, const char* function, MPI_Datatype& basic) {
  if (!op || !op->predefined)
    return win_raise(w, MPI_ERR_OP, function,
                     "accumulate operations take predefined ops only (MPI-3.1 §11.3.4)");
  basic = basic_of(t);
  if (!basic)
    return win_raise(w, MPI_ERR_TYPE, function,
                     "the datatype is not built from one predefined type");
  if (op_check(op, basic) != MPI_SUCCESS)
    return win_raise(w, MPI_ERR_OP, function, "op not defined for datatype %s",
                     basic->name.c_str());
  return MPI_SUCCESS;
}

int accumulate(MPI_Win w, const void* origin, MPI_Count ocount, MPI_Datatype ot, void* result,
               MPI_Count rcount, MPI_Datatype rt, int target, MPI_Aint disp, MPI_Count tcount,
               MPI_Datatype tt, MPI_Op op, const char* function) {
  if (op != MPI_NO_OP) {
    if (int rc = check_dt(w, ot, ocount, function)) return rc;
  }
  if (int rc = check_dt(w, tt, tcount, function)) return rc;
  if (result) {
    if (int rc = check_dt(w, rt, rcount, function)) return rc;
  }
  MPI_Datatype basic = nullptr;
  if (int rc = check_acc_op(w, op, tt, function, basic)) return rc;
  const std::size_t bytes = static_cast<std::size_t>(tcount) * dt_size(tt);
  if (op != MPI_NO_OP && static_cast<std::size_t>(ocount) * dt_size(ot) != bytes)
    return win_raise(w, MPI_ERR_TRUNCATE, function, "origin and target signatures differ");
  if (result && static_cast<std::size_t>(rcount) * dt_size(rt) != bytes)
    return win_raise(w, MPI_ERR_TRUNCATE, function, "result and target signatures differ");
  std::unique_ptr<std::byte[]> opacked, rpacked;
  const std::byte* in = nullptr;
  if (op != MPI_NO_OP && bytes) {
    if (dt_is_contiguous(ot)) {
      in = static_cast<const std::byte*>(origin) + dt_true_lb(ot);
    } else {
      opacked.reset(new std::byte[bytes]);
      dt_pack(ot, origin, static_cast<std::size_t>(ocount), opacked.get());
      in = opacked.get();
    }
  }
  std::byte* out = nullptr;
  if (result && bytes) {
    if (dt_is_contiguous(rt)) {
      out = static_cast<std::byte*>(result) + dt_true_lb(rt);
    } else {
      rpacked.reset(new std::byte[bytes]);
      out = rpacked.get();
    }
  }
  int rc = do_accumulate(w, in, out, bytes, target, disp, tcount, tt, op, basic, function);
  if (!rc && rpacked) dt_unpack(rt, rpacked.get(), bytes, result, static_cast<std::size_t>(rcount));
  return rc;
}

// ---- creation and destruction --------------------------------------------------------

bool all_on_this_host(MPI_Comm comm) {
  for (int r : comm->world)
    if (!engine().same_host(r)) return false;
  return true;
}

MPI_Win new_win(MPI_Comm comm, int flavor, int& rc) {
  MPI_Comm dup = nullptr;
  rc = dup_hidden(comm, &dup);
  if (rc) return nullptr;
  auto* w = new sluice_win_s;
  w->magic = kWinMagic;
  w->comm = dup;
  w->flavor = flavor;
  w->errh = MPI_ERRORS_ARE_FATAL;
  w->targets.resize(static_cast<std::size_t>(comm->size));
  for (int r = 0; r < comm->size; ++r)
    w->targets[static_cast<std::size_t>(r)].world = comm->world[static_cast<std::size_t>(r)];
  return w;
}

// The window hints of MPI-3.1 §11.2.1 (and MPI-4.0's mpi_accumulate_granularity): the ones
// MPI_Win_get_info reports. Other keys are ignored, as the standard allows.
bool is_win_hint(const std::string& key) {
  static const char* const kHints[] = {"no_locks",
                                       "accumulate_ordering",
                                       "accumulate_ops",
                                       "same_size",
                                       "same_disp_unit",
                                       "alloc_shared_noncontig",
                                       "mpi_accumulate_granularity"};
  for (const char* h : kHints)
    if (key == h) return true;
  return false;
}

// Sets (or adds) the hints of `info` that are window hints.
void merge_info(MPI_Win w, MPI_Info info) {
  if (!info || info == MPI_INFO_NULL) return;
  for (const auto& kv : info->entries) {
    if (!is_win_hint(kv.first)) continue;
    auto it = std::find_if(w->info.begin(), w->info.end(),
                           [&](const auto& e) { return e.first == kv.first; });
    if (it != w->info.end())
      it->second = kv.second;
    else
      w->info.push_back(kv);
  }
}

// A new window's hints: the standard's defaults, then the creator's.
void take_info(MPI_Win w, MPI_Info info) {
  w->info = {{"no_locks", "false"},
             {"accumulate_ordering", "rar,raw,war,waw"},
             {"accumulate_ops", "same_op_no_op"},
             {"same_size", "false"},
             {"same_disp_unit", "false"}};
  if (w->flavor == MPI_WIN_FLAVOR_SHARED) w->info.emplace_back("alloc_shared_noncontig", "false");
  merge_info(w, info);
}

// Native windows: registers `mem` and a control block, exchanges keys.
int setup_native(MPI_Win w, std::byte* mem, std::size_t len) {
  detail::RmaGlue& g = glue();
  w->own_ctl = std::make_unique<WinCtl>();
  w->ctl = w->own_ctl.get();
  ++g.native_windows();  // while there is one, the protocol serves peers
  w->ctl_region = g.proto().add_region(reinterpret_cast<std::byte*>(w->ctl), sizeof(WinCtl));
  WinPeerInfo mine;
  mine.base = reinterpret_cast<uint64_t>(mem);
  mine.size = static_cast<int64_t>(len);
  mine.disp_unit = w->disp_unit;
  if (mem && len) {
    w->data_region = g.proto().add_region(mem, len);
    mine.data = {reinterpret_cast<uint64_t>(mem), len, w->data_region};
  }
  mine.ctl = {reinterpret_cast<uint64_t>(w->ctl), sizeof(WinCtl), w->ctl_region};
  std::vector<WinPeerInfo> all(static_cast<std::size_t>(w->comm->size));
  if (int rc =
          PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, w->comm))
    return rc;
  for (std::size_t r = 0; r < all.size(); ++r) {
    WinTarget& t = w->targets[r];
    t.size = static_cast<MPI_Aint>(all[r].size);
    t.disp_unit = static_cast<int>(all[r].disp_unit);
    t.data = all[r].data;
    t.ctl_key = all[r].ctl;
  }
  return MPI_SUCCESS;
}

// Shared windows: one segment with every rank's control block then memory; rank 0 creates
// it, the others map it by name, and the name is gone once all have it.
int setup_shared(MPI_Win w, MPI_Aint size, bool contiguous, const char* function) {
  const int n = w->comm->size;
  std::vector<int64_t> sizes(static_cast<std::size_t>(n));
  const int64_t mine = size;
  if (int rc = PMPI_Allgather(&mine, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T, w->comm))
    return rc;
  std::vector<int64_t> disp_units(static_cast<std::size_t>(n));
  const int64_t du = w->disp_unit;
  if (int rc = PMPI_Allgather(&du, 1, MPI_INT64_T, disp_units.data(), 1, MPI_INT64_T, w->comm))
    return rc;
  const std::size_t ctl_bytes = sizeof(WinCtl) * static_cast<std::size_t>(n);
  std::vector<std::size_t> offsets(static_cast<std::size_t>(n));
  std::size_t at = (ctl_bytes + 4095) & ~std::size_t{4095};
  for (int r = 0; r < n; ++r) {
    if (!contiguous) at = (at + 63) & ~std::size_t{63};
    offsets[static_cast<std::size_t>(r)] = at;
    at += static_cast<std::size_t>(sizes[static_cast<std::size_t>(r)]);
  }
  const std::size_t total = std::max<std::size_t>(at, 1);
  char name[64] = {};
  int ok = 1;
  int fd = -1;
  if (w->comm->rank == 0) {
    static int counter = 0;
    std::snprintf(name, sizeof name, "/sluice-win-%d-%d", static_cast<int>(getpid()), counter++);
    fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(total)) != 0) ok = 0;
  }
  if (int rc = PMPI_Bcast(name, sizeof name, MPI_CHAR, 0, w->comm)) return rc;
  if (w->comm->rank != 0) fd = shm_open(name, O_RDWR, 0600);
  void* p = fd >= 0 ? mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  if (fd >= 0) close(fd);
  if (p == MAP_FAILED) ok = 0;
  int all_ok = 0;
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, w->comm);
  if (w->comm->rank == 0 && name[0]) shm_unlink(name);
  if (!all_ok) {
    if (p != MAP_FAILED) munmap(p, total);
    return win_raise(w, MPI_ERR_NO_MEM, function, "cannot create a shared segment of %zu bytes",
                     total);
  }
  w->seg = p;
  w->seg_len = total;
  w->shared = true;
  auto* base = static_cast<std::byte*>(p);
  for (int r = 0; r < n; ++r) {
    WinTarget& t = w->targets[static_cast<std::size_t>(r)];
    t.ctl = reinterpret_cast<WinCtl*>(base) + r;
    t.base = base + offsets[static_cast<std::size_t>(r)];
    t.size = static_cast<MPI_Aint>(sizes[static_cast<std::size_t>(r)]);
    t.disp_unit = static_cast<int>(disp_units[static_cast<std::size_t>(r)]);
  }
  w->ctl = w->targets[static_cast<std::size_t>(w->comm->rank)].ctl;
  w->base = size ? w->targets[static_cast<std::size_t>(w->comm->rank)].base : nullptr;
  engine().copy_assist().start_helper();
  return MPI_SUCCESS;
}

void finish_create(MPI_Win w, MPI_Win* out) {
  w->attr_size = w->size;
  w->attr_disp_unit = w->disp_unit;
  w->attr_flavor = w->flavor;
  w->attr_model = w->model;
  *out = w;
}

int create_common(MPI_Comm comm, MPI_Aint size, int disp_unit, MPI_Info info,
                  const char* function) {
  if (int rc = check_comm(comm, function)) return rc;
  if (int rc = check_intra(comm, function)) return rc;
  if (size < 0)
    return raisef(comm, MPI_ERR_SIZE, function, "invalid size %ld", static_cast<long>(size));
  if (disp_unit <= 0)
    return raisef(comm, MPI_ERR_DISP, function, "invalid displacement unit %d", disp_unit);
  (void)info;
  return MPI_SUCCESS;
}

void destroy_win(MPI_Win w) {
  detail::RmaGlue* g = engine().rma_if_open();
  if (g) {
    if (w->data_region) g->proto().remove_region(w->data_region);
    if (w->ctl_region) g->proto().remove_region(w->ctl_region);
    for (uint64_t id : w->attached_regions)
      if (id) g->proto().remove_region(id);
    for (uint64_t id : w->more_regions) g->proto().remove_region(id);
    // The last native window: stop serving (no peer targets this process any more: every
    // window's members completed their operations before MPI_Win_free's barrier), once the
    // replies still queued for a full driver are out.
    if (w->ctl_region && --g->native_windows() == 0 && g->serving()) {
      block_until([&] { return !g->proto().busy(); });
      g->close();
    }
  }
  if (w->seg) munmap(w->seg, w->seg_len);
  if (w->own_mem) munmap(w->own_mem, w->own_mem_len);
  for (MPI_Request& r : w->post_reqs)
    if (r != MPI_REQUEST_NULL) PMPI_Request_free(&r);
  errh_release(w->errh);
  destroy_comm(w->comm);
  w->magic = 0;
  delete w;
}

// ---- attributes ---------------------------------------------------------------------

struct WinKeyval {
  MPI_Win_copy_attr_function* copy;
  MPI_Win_delete_attr_function* del;
  void* extra;
  int refs;            // the user's handle (until freed) + every attribute set with it
  bool freed = false;  // the user's handle is gone (freed once)
};
std::map<int, WinKeyval> g_win_keyvals;
int g_next_win_keyval = 0x20000;

void win_keyval_release(int key) {
  auto it = g_win_keyvals.find(key);
  if (it != g_win_keyvals.end() && --it->second.refs == 0) g_win_keyvals.erase(it);
}

int delete_one_attr(MPI_Win w, std::size_t i) {
  auto [key, val] = w->attrs[i];
  auto it = g_win_keyvals.find(key);
  if (it != g_win_keyvals.end() && it->second.del) {
    if (int rc = it->second.del(w, key, val, it->second.extra); rc != MPI_SUCCESS) return rc;
  }
  w->attrs.erase(w->attrs.begin() + static_cast<std::ptrdiff_t>(i));
  win_keyval_release(key);
  return MPI_SUCCESS;
}

// A request that is complete when made (the R-operations complete before they return).
class DoneOp final : public AsyncOp {
 public:
  explicit DoneOp(int err) : err_(err) {}
  bool test() override { return true; }
  int error() const override { return err_; }

 private:
  int err_;
};

int done_request(MPI_Win w, int rc, MPI_Request* request) {
  *request = make_async_request(w->comm, std::make_unique<DoneOp>(rc));
  return rc;
}

int group_to_comm_ranks(MPI_Win w, MPI_Group group, std::vector<int>& out, const char* function) {
  out.clear();
  if (!group) return win_raise(w, MPI_ERR_GROUP, function, "invalid group MPI_GROUP_NULL");
  for (int world : group->world) {
    const int r = w->comm->comm_rank_of(world);
    if (r < 0)
      return win_raise(w, MPI_ERR_GROUP, function, "the group has a process outside the window");
    out.push_back(r);
  }
  return MPI_SUCCESS;
}

constexpr int kTagPost = 1, kTagComplete = 2;

}  // namespace
}  // namespace sluice::mpi

using namespace sluice::mpi;

// ---- window creation ----------------------------------------------------------------------

// The MPI-4.0 _c forms take an MPI_Aint displacement unit; windows keep an int one (as the
// MPI_WIN_DISP_UNIT attribute is), so a larger unit is refused.
static int disp_unit_c(MPI_Comm comm, MPI_Aint disp_unit, int& out, const char* fn) {
  if (disp_unit > INT_MAX)
    return raisef(comm, MPI_ERR_DISP, fn, "displacement unit %ld beyond INT_MAX (not supported)",
                  static_cast<long>(disp_unit));
  out = static_cast<int>(disp_unit);
  return MPI_SUCCESS;
}

static int win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                      MPI_Win* win, const char* fn) {
  if (int rc = create_common(comm, size, disp_unit, info, fn)) return rc;
  if (!win) return raise(comm, MPI_ERR_ARG, fn, "win is NULL");
  int rc = MPI_SUCCESS;
  MPI_Win w = new_win(comm, MPI_WIN_FLAVOR_CREATE, rc);
  if (!w) return rc;
  w->base = base;
  w->size = size;
  w->disp_unit = disp_unit;
  take_info(w, info);
  if ((rc = setup_native(w, static_cast<std::byte*>(base), static_cast<std::size_t>(size)))) {
    destroy_win(w);
    return rc;
  }
  finish_create(w, win);
  return MPI_SUCCESS;
}

int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win* win) {
  SLUICE_MPI_CALL;
  return win_create(base, size, disp_unit, info, comm, win, "MPI_Win_create");
}

int PMPI_Win_create_c(void* base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                      MPI_Win* win) {
  SLUICE_MPI_CALL;
  int du = 0;
  if (int rc = disp_unit_c(comm, disp_unit, du, "MPI_Win_create_c")) return rc;
  return win_create(base, size, du, info, comm, win, "MPI_Win_create_c");
}

static int allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                    MPI_Win* win, bool shared_required, const char* fn) {
  if (int rc = create_common(comm, size, disp_unit, info, fn)) return rc;
  if (!win || !baseptr) return raise(comm, MPI_ERR_ARG, fn, "win or baseptr is NULL");
  const bool local = all_on_this_host(comm);
  if (shared_required && !local)
    return raise(comm, MPI_ERR_RMA_SHARED, fn,
                 "the communicator spans hosts: no shared memory between all its processes");
  int rc = MPI_SUCCESS;
  MPI_Win w = new_win(comm, shared_required ? MPI_WIN_FLAVOR_SHARED : MPI_WIN_FLAVOR_ALLOCATE, rc);
  if (!w) return rc;
  w->size = size;
  w->disp_unit = disp_unit;
  take_info(w, info);
  // MPI_Win_allocate_shared memory is contiguous across ranks unless asked otherwise.
  bool contiguous = shared_required;
  for (auto& [k, v] : w->info)
    if (k == "alloc_shared_noncontig" && v == "true") contiguous = false;
  if (local) {
    rc = setup_shared(w, size, contiguous, fn);
  } else {
    const std::size_t len = static_cast<std::size_t>(size);
    if (len) {
      const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
      w->own_mem_len = (len + page - 1) & ~(page - 1);
      void* p =
          mmap(nullptr, w->own_mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) {
        w->own_mem_len = 0;
        rc = raise(comm, MPI_ERR_NO_MEM, fn, "cannot allocate the window memory");
      } else {
        w->own_mem = p;
        w->base = p;
      }
    }
    if (!rc) rc = setup_native(w, static_cast<std::byte*>(w->base), len);
  }
  if (rc) {
    destroy_win(w);
    return rc;
  }
  *static_cast<void**>(baseptr) = w->base;
  finish_create(w, win);
  return MPI_SUCCESS;
}

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr,
                      MPI_Win* win) {
  SLUICE_MPI_CALL;
  return allocate(size, disp_unit, info, comm, baseptr, win, false, "MPI_Win_allocate");
}

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void* baseptr, MPI_Win* win) {
  SLUICE_MPI_CALL;
  return allocate(size, disp_unit, info, comm, baseptr, win, true, "MPI_Win_allocate_shared");
}

int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                        void* baseptr, MPI_Win* win) {
  SLUICE_MPI_CALL;
  int du = 0;
  if (int rc = disp_unit_c(comm, disp_unit, du, "MPI_Win_allocate_c")) return rc;
  return allocate(size, du, info, comm, baseptr, win, false, "MPI_Win_allocate_c");
}

int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                               void* baseptr, MPI_Win* win) {
  SLUICE_MPI_CALL;
  int du = 0;
  if (int rc = disp_unit_c(comm, disp_unit, du, "MPI_Win_allocate_shared_c")) return rc;
  return allocate(size, du, info, comm, baseptr, win, true, "MPI_Win_allocate_shared_c");
}

static int shared_query(MPI_Win win, int rank, MPI_Aint* size, MPI_Aint* disp_unit, void* baseptr,
                        const char* fn) {
  if (int rc = check_win(win, fn)) return rc;
  if (!size || !disp_unit || !baseptr)
    return win_raise(win, MPI_ERR_ARG, fn, "size, disp_unit or baseptr is NULL");
  if (!win->shared)
    return win_raise(win, MPI_ERR_RMA_FLAVOR, fn, "the window is not in shared memory");
  if (rank == MPI_PROC_NULL) {
    rank = 0;
    for (int r = 0; r < win->comm->size; ++r)
      if (win->targets[static_cast<std::size_t>(r)].size > 0) {
        rank = r;
        break;
      }
  } else if (rank < 0 || rank >= win->comm->size) {
    return win_raise(win, MPI_ERR_RANK, fn, "invalid rank %d", rank);
  }
  const WinTarget& t = win->targets[static_cast<std::size_t>(rank)];
  *size = t.size;
  *disp_unit = t.disp_unit;
  *static_cast<void**>(baseptr) = t.size ? t.base : nullptr;
  return MPI_SUCCESS;
}

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint* size, int* disp_unit, void* baseptr) {
  SLUICE_MPI_CALL;
  MPI_Aint du = 0;
  if (int rc = shared_query(win, rank, size, &du, baseptr, "MPI_Win_shared_query")) return rc;
  if (!disp_unit) return win_raise(win, MPI_ERR_ARG, "MPI_Win_shared_query", "disp_unit is NULL");
  *disp_unit = static_cast<int>(du);  // windows keep an int unit
  return MPI_SUCCESS;
}

int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint* size, MPI_Aint* disp_unit,
                            void* baseptr) {
  SLUICE_MPI_CALL;
  return shared_query(win, rank, size, disp_unit, baseptr, "MPI_Win_shared_query_c");
}

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_create_dynamic";
  if (int rc = create_common(comm, 0, 1, info, fn)) return rc;
  if (!win) return raise(comm, MPI_ERR_ARG, fn, "win is NULL");
  int rc = MPI_SUCCESS;
  MPI_Win w = new_win(comm, MPI_WIN_FLAVOR_DYNAMIC, rc);
  if (!w) return rc;
  take_info(w, info);
  if ((rc = setup_native(w, nullptr, 0))) {
    destroy_win(w);
    return rc;
  }
  w->base = MPI_BOTTOM;
  finish_create(w, win);
  return MPI_SUCCESS;
}

int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_attach";
  if (int rc = check_win(win, fn)) return rc;
  if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
    return win_raise(win, MPI_ERR_RMA_FLAVOR, fn, "the window was not created dynamic");
  if (size < 0)
    return win_raise(win, MPI_ERR_SIZE, fn, "invalid size %ld", static_cast<long>(size));
  if (size == 0) return MPI_SUCCESS;
  std::size_t slot = win->attached_regions.size();
  for (std::size_t i = 0; i < win->attached_regions.size(); ++i)
    if (!win->attached_regions[i]) {
      slot = i;
      break;
    }
  if (slot >= kInlineAttached + win->more_cap) {
    // Grow the overflow array: a new one, registered, then published in the control block.
    // The old one stays registered (an origin may be reading it) until the window is freed.
    const std::size_t cap = win->more_cap ? 2 * win->more_cap : kInlineAttached;
    auto grown = std::make_unique<DynEntry[]>(cap);
    if (win->more_cap) std::copy_n(win->more.back().get(), win->more_cap, grown.get());
    const std::size_t bytes = cap * sizeof(DynEntry);
    const uint64_t rid =
        glue().proto().add_region(reinterpret_cast<std::byte*>(grown.get()), bytes);
    win->ctl->more = {reinterpret_cast<uint64_t>(grown.get()), bytes, rid};
    win->more.push_back(std::move(grown));
    win->more_regions.push_back(rid);
    win->more_cap = cap;
  }
  const uint64_t id =
      glue().proto().add_region(static_cast<std::byte*>(base), static_cast<std::size_t>(size));
  if (slot == win->attached_regions.size()) win->attached_regions.push_back(0);
  win->attached_regions[slot] = id;
  win->slot_entry(slot) = {reinterpret_cast<uint64_t>(base), static_cast<uint64_t>(size), id};
  __atomic_store_n(&win->ctl->n_attached, static_cast<uint64_t>(win->attached_regions.size()),
                   __ATOMIC_RELEASE);
  return MPI_SUCCESS;
}

int PMPI_Win_detach(MPI_Win win, const void* base) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_detach";
  if (int rc = check_win(win, fn)) return rc;
  if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC)
    return win_raise(win, MPI_ERR_RMA_FLAVOR, fn, "the window was not created dynamic");
  for (std::size_t i = 0; i < win->attached_regions.size(); ++i) {
    if (win->attached_regions[i] && win->slot_entry(i).addr == reinterpret_cast<uint64_t>(base)) {
      glue().proto().remove_region(win->attached_regions[i]);
      win->attached_regions[i] = 0;
      win->slot_entry(i) = {};
      return MPI_SUCCESS;
    }
  }
  return win_raise(win, MPI_ERR_RMA_ATTACH, fn, "%p is not attached", base);
}

int PMPI_Win_free(MPI_Win* win) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_free";
  if (!win) return raise(nullptr, MPI_ERR_ARG, fn, "win is NULL");
  if (int rc = check_win(*win, fn)) return rc;
  MPI_Win w = *win;
  if (w->n_locked || w->lock_all || w->started || w->posted)
    return win_raise(w, MPI_ERR_RMA_SYNC, fn, "an epoch is still open on the window");
  int rc = complete(w, -1, fn);
  // Nobody accesses this rank's memory once every member is here.
  if (int b = PMPI_Barrier(w->comm); !rc) rc = b;
  while (!w->attrs.empty())
    if (delete_one_attr(w, 0) != MPI_SUCCESS) w->attrs.erase(w->attrs.begin());
  destroy_win(w);
  *win = MPI_WIN_NULL;
  return rc;
}

int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  SLUICE_MPI_CALL;
  if (int rc = check_win(win, "MPI_Win_get_group")) return rc;
  auto* g = new sluice_group_s;
  g->world = win->comm->world;
  *group = g;
  return MPI_SUCCESS;
}

int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  SLUICE_MPI_CALL;
  if (int rc = check_win(win, "MPI_Win_get_info")) return rc;
  auto* i = new sluice_info_s;
  i->entries = win->info;
  *info_used = i;
  return MPI_SUCCESS;
}

int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
  SLUICE_MPI_CALL;
  if (int rc = check_win(win, "MPI_Win_set_info")) return rc;
  merge_info(win, info);
  return MPI_SUCCESS;
}

// ---- communication --------------------------------------------------------------------------

int PMPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Put", none); rc || none) return rc;
  return do_put(win, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                target_count, target_datatype, "MPI_Put");
}

int PMPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Get", none); rc || none) return rc;
  return do_get(win, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                target_count, target_datatype, "MPI_Get");
}

int PMPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Accumulate", none); rc || none) return rc;
  return accumulate(win, origin_addr, origin_count, origin_datatype, nullptr, 0, nullptr,
                    target_rank, target_disp, target_count, target_datatype, op, "MPI_Accumulate");
}

int PMPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void* result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Get_accumulate", none); rc || none) return rc;
  return accumulate(win, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                    result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                    "MPI_Get_accumulate");
}

int PMPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Fetch_and_op", none); rc || none) return rc;
  if (!datatype || !datatype->predefined)
    return win_raise(win, MPI_ERR_TYPE, "MPI_Fetch_and_op", "the datatype must be predefined");
  return accumulate(win, origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
                    target_disp, 1, datatype, op, "MPI_Fetch_and_op");
}

int PMPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Win win) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Compare_and_swap";
  bool none;
  if (int rc = check_rma(win, target_rank, fn, none); rc || none) return rc;
  if (!datatype || !datatype->predefined ||
      !(datatype->type_class == TypeClass::c_integer ||
        datatype->type_class == TypeClass::logical || datatype->type_class == TypeClass::byte))
    return win_raise(win, MPI_ERR_TYPE, fn,
                     "the datatype must be a C integer, logical or byte type");
  Where at;
  if (int rc = locate(win, target_rank, target_disp, datatype, 1, fn, at)) return rc;
  const std::size_t n = dt_size(datatype);
  acquire_acc(win, target_rank);
  int rc = MPI_SUCCESS;
  std::byte cur[16];
  if (win->shared) {
    std::memcpy(cur, at.local, n);
    if (std::memcmp(cur, compare_addr, n) == 0) std::memcpy(at.local, origin_addr, n);
    std::atomic_thread_fence(std::memory_order_release);
  } else {
    sluice::proto::rma::RmaProtocol& p = glue().proto();
    const int world = win->targets[static_cast<std::size_t>(target_rank)].world;
    p.get(world, {cur, n}, at.key, at.offset, 0);
    rc = complete_ops(win, target_rank, fn);
    if (!rc && std::memcmp(cur, compare_addr, n) == 0) {
      p.put(world, {static_cast<const std::byte*>(origin_addr), n}, at.key, at.offset, 0);
      rc = complete_ops(win, target_rank, fn);
    }
  }
  release_acc(win, target_rank);
  std::memcpy(result_addr, cur, n);
  return rc;
}

int PMPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request* request) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Rput", none)) return rc;
  int rc = none ? MPI_SUCCESS
                : do_put(win, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                         target_count, target_datatype, "MPI_Rput");
  if (!rc && !none) rc = complete(win, target_rank, "MPI_Rput");
  return done_request(win, rc, request);
}

int PMPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request* request) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Rget", none)) return rc;
  int rc = none ? MPI_SUCCESS
                : do_get(win, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                         target_count, target_datatype, "MPI_Rget");
  if (!rc && !none) rc = complete(win, target_rank, "MPI_Rget");
  return done_request(win, rc, request);
}

int PMPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Raccumulate", none)) return rc;
  int rc = none ? MPI_SUCCESS
                : accumulate(win, origin_addr, origin_count, origin_datatype, nullptr, 0, nullptr,
                             target_rank, target_disp, target_count, target_datatype, op,
                             "MPI_Raccumulate");
  return done_request(win, rc, request);
}

int PMPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void* result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                         MPI_Request* request) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Rget_accumulate", none)) return rc;
  int rc = none ? MPI_SUCCESS
                : accumulate(win, origin_addr, origin_count, origin_datatype, result_addr,
                             result_count, result_datatype, target_rank, target_disp, target_count,
                             target_datatype, op, "MPI_Rget_accumulate");
  return done_request(win, rc, request);
}

// The MPI-4.0 large-count forms: the same code with MPI_Count counts.

int PMPI_Put_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Put_c", none); rc || none) return rc;
  return do_put(win, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                target_count, target_datatype, "MPI_Put_c");
}

int PMPI_Get_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Get_c", none); rc || none) return rc;
  return do_get(win, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                target_count, target_datatype, "MPI_Get_c");
}

int PMPI_Accumulate_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Accumulate_c", none); rc || none) return rc;
  return accumulate(win, origin_addr, origin_count, origin_datatype, nullptr, 0, nullptr,
                    target_rank, target_disp, target_count, target_datatype, op,
                    "MPI_Accumulate_c");
}

int PMPI_Get_accumulate_c(const void* origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void* result_addr, MPI_Count result_count,
                          MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Get_accumulate_c", none); rc || none) return rc;
  return accumulate(win, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                    result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                    "MPI_Get_accumulate_c");
}

int PMPI_Rput_c(const void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Rput_c", none)) return rc;
  int rc = none ? MPI_SUCCESS
                : do_put(win, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                         target_count, target_datatype, "MPI_Rput_c");
  if (!rc && !none) rc = complete(win, target_rank, "MPI_Rput_c");
  return done_request(win, rc, request);
}

int PMPI_Rget_c(void* origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Rget_c", none)) return rc;
  int rc = none ? MPI_SUCCESS
                : do_get(win, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                         target_count, target_datatype, "MPI_Rget_c");
  if (!rc && !none) rc = complete(win, target_rank, "MPI_Rget_c");
  return done_request(win, rc, request);
}

int PMPI_Raccumulate_c(const void* origin_addr, MPI_Count origin_count,
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                       MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                       MPI_Request* request) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Raccumulate_c", none)) return rc;
  int rc = none ? MPI_SUCCESS
                : accumulate(win, origin_addr, origin_count, origin_datatype, nullptr, 0, nullptr,
                             target_rank, target_disp, target_count, target_datatype, op,
                             "MPI_Raccumulate_c");
  return done_request(win, rc, request);
}

int PMPI_Rget_accumulate_c(const void* origin_addr, MPI_Count origin_count,
                           MPI_Datatype origin_datatype, void* result_addr, MPI_Count result_count,
                           MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                           MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                           MPI_Win win, MPI_Request* request) {
  SLUICE_MPI_CALL;
  bool none;
  if (int rc = check_rma(win, target_rank, "MPI_Rget_accumulate_c", none)) return rc;
  int rc = none ? MPI_SUCCESS
                : accumulate(win, origin_addr, origin_count, origin_datatype, result_addr,
                             result_count, result_datatype, target_rank, target_disp, target_count,
                             target_datatype, op, "MPI_Rget_accumulate_c");
  return done_request(win, rc, request);
}

// ---- synchronization ------------------------------------------------------------------------

static void new_epoch(MPI_Win w) {
  for (WinTarget& t : w->targets) t.dir_valid = false;
}

int PMPI_Win_fence(int assertion, MPI_Win win) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_fence";
  if (int rc = check_win(win, fn)) return rc;
  if (win->n_locked || win->lock_all || win->started || win->posted)
    return win_raise(win, MPI_ERR_RMA_SYNC, fn, "a lock or PSCW epoch is open on the window");
  int rc = complete(win, -1, fn);
  if (int b = PMPI_Barrier(win->comm); !rc) rc = b;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  win->fence_epoch = !(assertion & MPI_MODE_NOSUCCEED);
  new_epoch(win);
  return rc;
}

int PMPI_Win_lock(int lock_type, int rank, int assertion, MPI_Win win) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_lock";
  if (int rc = check_win(win, fn)) return rc;
  if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
    return win_raise(win, MPI_ERR_LOCKTYPE, fn, "invalid lock type %d", lock_type);
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0 || rank >= win->comm->size)
    return win_raise(win, MPI_ERR_RANK, fn, "invalid rank %d", rank);
  WinTarget& t = win->targets[static_cast<std::size_t>(rank)];
  if (t.lock_mode || win->lock_all || win->started)
    return win_raise(win, MPI_ERR_RMA_SYNC, fn, "rank %d is already in an access epoch", rank);
  win->fence_epoch = false;  // a fence sequence ended with the last fence
  const bool excl = lock_type == MPI_LOCK_EXCLUSIVE;
  const bool nocheck = assertion & MPI_MODE_NOCHECK;
  if (!nocheck) acquire_lock(win, rank, excl);
  t.lock_mode =
      static_cast<uint8_t>((excl ? kLockExclusive : kLockShared) | (nocheck ? kLockNoCheck : 0));
  t.dir_valid = false;
  ++win->n_locked;
  return MPI_SUCCESS;
}

int PMPI_Win_unlock(int rank, MPI_Win win) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_unlock";
  if (int rc = check_win(win, fn)) return rc;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  if (rank < 0 || rank >= win->comm->size)
    return win_raise(win, MPI_ERR_RANK, fn, "invalid rank %d", rank);
  WinTarget& t = win->targets[static_cast<std::size_t>(rank)];
  if (!t.lock_mode) return win_raise(win, MPI_ERR_RMA_SYNC, fn, "rank %d is not locked", rank);
  int rc = complete(win, rank, fn);
  if (!(t.lock_mode & kLockNoCheck)) release_lock(win, rank, t.lock_mode & kLockExclusive);
  t.lock_mode = 0;
  --win->n_locked;
  return rc;
}

int PMPI_Win_lock_all(int assertion, MPI_Win win) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_lock_all";
  if (int rc = check_win(win, fn)) return rc;
  if (win->n_locked || win->lock_all || win->started)
    return win_raise(win, MPI_ERR_RMA_SYNC, fn, "an access epoch is already open");
  win->fence_epoch = false;
  win->lock_all_nocheck = assertion & MPI_MODE_NOCHECK;
  if (!win->lock_all_nocheck)
    for (int r = 0; r < win->comm->size; ++r) acquire_lock(win, r, false);
  win->lock_all = true;
  new_epoch(win);
  return MPI_SUCCESS;
}

int PMPI_Win_unlock_all(MPI_Win win) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_unlock_all";
  if (int rc = check_win(win, fn)) return rc;
  if (!win->lock_all) return win_raise(win, MPI_ERR_RMA_SYNC, fn, "no lock_all epoch is open");
  int rc = complete(win, -1, fn);
  if (!win->lock_all_nocheck)
    for (int r = 0; r < win->comm->size; ++r) release_lock(win, r, false);
  win->lock_all = false;
  return rc;
}

static int flush_call(MPI_Win win, int rank, const char* fn) {
  if (int rc = check_win(win, fn)) return rc;
  if (rank != -1) {
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    if (rank < 0 || rank >= win->comm->size)
      return win_raise(win, MPI_ERR_RANK, fn, "invalid rank %d", rank);
    if (!win->lock_all && !win->targets[static_cast<std::size_t>(rank)].lock_mode)
      return win_raise(win, MPI_ERR_RMA_SYNC, fn, "no passive-target epoch to rank %d", rank);
  } else if (!win->lock_all && !win->n_locked) {
    return win_raise(win, MPI_ERR_RMA_SYNC, fn, "no passive-target epoch is open");
  }
  int rc = complete(win, rank, fn);
  new_epoch(win);
  return rc;
}

int PMPI_Win_flush(int rank, MPI_Win win) {
  SLUICE_MPI_CALL;
  if (rank == -1) rank = -3;  // not the internal "all" marker: reported as invalid
  return flush_call(win, rank, "MPI_Win_flush");
}

int PMPI_Win_flush_all(MPI_Win win) {
  SLUICE_MPI_CALL;
  return flush_call(win, -1, "MPI_Win_flush_all");
}

// Local completion is not cheaper than remote completion on any path here.
int PMPI_Win_flush_local(int rank, MPI_Win win) {
  SLUICE_MPI_CALL;
  if (rank == -1) rank = -3;
  return flush_call(win, rank, "MPI_Win_flush_local");
}

int PMPI_Win_flush_local_all(MPI_Win win) {
  SLUICE_MPI_CALL;
  return flush_call(win, -1, "MPI_Win_flush_local_all");
}

int PMPI_Win_sync(MPI_Win win) {
  SLUICE_MPI_CALL;
  if (int rc = check_win(win, "MPI_Win_sync")) return rc;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  new_epoch(win);
  return MPI_SUCCESS;
}

int PMPI_Win_post(MPI_Group group, int assertion, MPI_Win win) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_post";
  (void)assertion;
  if (int rc = check_win(win, fn)) return rc;
  if (win->posted) return win_raise(win, MPI_ERR_RMA_SYNC, fn, "an exposure epoch is already open");
  win->fence_epoch = false;
  if (int rc = group_to_comm_ranks(win, group, win->exposure_group, fn)) return rc;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  static char token = 0;
  for (int origin : win->exposure_group) {
    MPI_Request r;
    PMPI_Irecv(nullptr, 0, MPI_BYTE, origin, kTagComplete, win->comm, &r);
    win->post_reqs.push_back(r);
    PMPI_Isend(&token, 0, MPI_BYTE, origin, kTagPost, win->comm, &r);
    win->post_reqs.push_back(r);
  }
  win->posted = true;
  return MPI_SUCCESS;
}

int PMPI_Win_start(MPI_Group group, int assertion, MPI_Win win) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_start";
  (void)assertion;
  if (int rc = check_win(win, fn)) return rc;
  if (win->started || win->lock_all || win->n_locked)
    return win_raise(win, MPI_ERR_RMA_SYNC, fn, "an access epoch is already open");
  win->fence_epoch = false;
  std::vector<int> targets;
  if (int rc = group_to_comm_ranks(win, group, targets, fn)) return rc;
  for (int t : targets)
    if (int rc = PMPI_Recv(nullptr, 0, MPI_BYTE, t, kTagPost, win->comm, MPI_STATUS_IGNORE))
      return rc;
  win->access_group = std::move(targets);
  win->started = true;
  new_epoch(win);
  return MPI_SUCCESS;
}

int PMPI_Win_complete(MPI_Win win) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_complete";
  if (int rc = check_win(win, fn)) return rc;
  if (!win->started) return win_raise(win, MPI_ERR_RMA_SYNC, fn, "no access epoch (Win_start)");
  int rc = complete(win, -1, fn);
  static char token = 0;
  for (int t : win->access_group)
    if (int s = PMPI_Send(&token, 0, MPI_BYTE, t, kTagComplete, win->comm); !rc) rc = s;
  win->access_group.clear();
  win->started = false;
  return rc;
}

int PMPI_Win_wait(MPI_Win win) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_wait";
  if (int rc = check_win(win, fn)) return rc;
  if (!win->posted) return win_raise(win, MPI_ERR_RMA_SYNC, fn, "no exposure epoch (Win_post)");
  int rc = PMPI_Waitall(static_cast<int>(win->post_reqs.size()), win->post_reqs.data(),
                        MPI_STATUSES_IGNORE);
  win->post_reqs.clear();
  win->exposure_group.clear();
  win->posted = false;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return rc;
}

int PMPI_Win_test(MPI_Win win, int* flag) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_test";
  if (int rc = check_win(win, fn)) return rc;
  if (!win->posted) return win_raise(win, MPI_ERR_RMA_SYNC, fn, "no exposure epoch (Win_post)");
  int rc = PMPI_Testall(static_cast<int>(win->post_reqs.size()), win->post_reqs.data(), flag,
                        MPI_STATUSES_IGNORE);
  if (!rc && *flag) {
    win->post_reqs.clear();
    win->exposure_group.clear();
    win->posted = false;
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
  return rc;
}

// ---- attributes, names, error handlers ------------------------------------------------------

int sluice_win_null_copy_fn(MPI_Win, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}
int sluice_win_dup_fn(MPI_Win, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
int sluice_win_null_delete_fn(MPI_Win, int, void*, void*) {
  return MPI_SUCCESS;
}

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* win_copy_attr_fn,
                           MPI_Win_delete_attr_function* win_delete_attr_fn, int* win_keyval,
                           void* extra_state) {
  SLUICE_MPI_CALL;
  if (!win_keyval) return raise(nullptr, MPI_ERR_ARG, "MPI_Win_create_keyval", "keyval is NULL");
  const int key = g_next_win_keyval++;
  g_win_keyvals[key] = {win_copy_attr_fn, win_delete_attr_fn, extra_state, 1, false};
  *win_keyval = key;
  return MPI_SUCCESS;
}

int PMPI_Win_free_keyval(int* win_keyval) {
  SLUICE_MPI_CALL;
  auto it = win_keyval ? g_win_keyvals.find(*win_keyval) : g_win_keyvals.end();
  if (it == g_win_keyvals.end())
    return raise(nullptr, MPI_ERR_KEYVAL, "MPI_Win_free_keyval", "invalid window keyval");
  // Freeing it again (through a copy of the handle, or from a delete callback) while
  // attributes keep it alive is erroneous but harmless, as for communicator keyvals
  // (attr.cpp): MPICH and Open MPI ignore it. Only the first free drops the handle's reference.
  if (!it->second.freed) {
    it->second.freed = true;
    win_keyval_release(*win_keyval);
  }
  *win_keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void* attribute_val) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_set_attr";
  if (int rc = check_win(win, fn)) return rc;
  auto kv = g_win_keyvals.find(win_keyval);
  if (kv == g_win_keyvals.end())
    return win_raise(win, MPI_ERR_KEYVAL, fn, "invalid window keyval %d", win_keyval);
  for (std::size_t i = 0; i < win->attrs.size(); ++i)
    if (win->attrs[i].first == win_keyval) {
      if (int rc = delete_one_attr(win, i)) return win_raise(win, rc, fn, "delete callback failed");
      break;
    }
  ++kv->second.refs;
  win->attrs.emplace_back(win_keyval, attribute_val);
  return MPI_SUCCESS;
}

int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void* attribute_val, int* flag) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_get_attr";
  if (int rc = check_win(win, fn)) return rc;
  auto* out = static_cast<void**>(attribute_val);
  *flag = 1;
  switch (win_keyval) {
    case MPI_WIN_BASE:
      *out = win->base;
      return MPI_SUCCESS;
    case MPI_WIN_SIZE:
      *out = &win->attr_size;
      return MPI_SUCCESS;
    case MPI_WIN_DISP_UNIT:
      *out = &win->attr_disp_unit;
      return MPI_SUCCESS;
    case MPI_WIN_CREATE_FLAVOR:
      *out = &win->attr_flavor;
      return MPI_SUCCESS;
    case MPI_WIN_MODEL:
      *out = &win->attr_model;
      return MPI_SUCCESS;
    default:
      break;
  }
  *flag = 0;
  if (!g_win_keyvals.count(win_keyval))
    return win_raise(win, MPI_ERR_KEYVAL, fn, "invalid window keyval %d", win_keyval);
  for (auto& [k, v] : win->attrs)
    if (k == win_keyval) {
      *out = v;
      *flag = 1;
    }
  return MPI_SUCCESS;
}

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval) {
  SLUICE_MPI_CALL;
  constexpr const char* fn = "MPI_Win_delete_attr";
  if (int rc = check_win(win, fn)) return rc;
  for (std::size_t i = 0; i < win->attrs.size(); ++i)
    if (win->attrs[i].first == win_keyval) {
      if (int rc = delete_one_attr(win, i)) return win_raise(win, rc, fn, "delete callback failed");
      return MPI_SUCCESS;
    }
  return win_raise(win, MPI_ERR_KEYVAL, fn, "no attribute for keyval %d", win_keyval);
}

int PMPI_Win_set_name(MPI_Win win, const char* win_name) {
  SLUICE_MPI_CALL;
  if (int rc = check_win(win, "MPI_Win_set_name")) return rc;
  win->name = std::string(win_name).substr(0, MPI_MAX_OBJECT_NAME - 1);
  return MPI_SUCCESS;
}

int PMPI_Win_get_name(MPI_Win win, char* win_name, int* resultlen) {
  SLUICE_MPI_CALL;
  if (int rc = check_win(win, "MPI_Win_get_name")) return rc;
  std::memcpy(win_name, win->name.c_str(), win->name.size() + 1);
  *resultlen = static_cast<int>(win->name.size());
  return MPI_SUCCESS;
}

int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* win_errhandler_fn,
                               MPI_Errhandler* errhandler) {
  SLUICE_MPI_CALL;
  if (!win_errhandler_fn || !errhandler)
    return raise(nullptr, MPI_ERR_ARG, "MPI_Win_create_errhandler", "NULL argument");
  auto* h = new sluice_errhandler_s;
  h->kind = sluice_errhandler_s::Kind::user;
  h->fn = reinterpret_cast<MPI_Comm_errhandler_function*>(win_errhandler_fn);
  *errhandler = h;
  return MPI_SUCCESS;
}

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  SLUICE_MPI_CALL;
  if (int rc = check_win(win, "MPI_Win_set_errhandler")) return rc;
  if (!errhandler)
    return win_raise(win, MPI_ERR_ARG, "MPI_Win_set_errhandler",
                     "invalid errhandler MPI_ERRHANDLER_NULL");
  if (!errhandler->predefined) ++errhandler->refs;
  errh_release(win->errh);
  win->errh = errhandler;
  return MPI_SUCCESS;
}

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  SLUICE_MPI_CALL;
  if (int rc = check_win(win, "MPI_Win_get_errhandler")) return rc;
  if (!win->errh->predefined) ++win->errh->refs;
  *errhandler = win->errh;
  return MPI_SUCCESS;
}

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  SLUICE_MPI_CALL;
  if (int rc = check_win(win, "MPI_Win_call_errhandler")) return rc;
  win_raise(win, errorcode, "MPI_Win_call_errhandler", "called by the program");
  return MPI_SUCCESS;
}

#pragma weak MPI_Win_create = PMPI_Win_create
#pragma weak MPI_Win_allocate = PMPI_Win_allocate
#pragma weak MPI_Win_allocate_shared = PMPI_Win_allocate_shared
#pragma weak MPI_Win_shared_query = PMPI_Win_shared_query
#pragma weak MPI_Win_create_dynamic = PMPI_Win_create_dynamic
#pragma weak MPI_Win_attach = PMPI_Win_attach
#pragma weak MPI_Win_detach = PMPI_Win_detach
#pragma weak MPI_Win_free = PMPI_Win_free
#pragma weak MPI_Win_get_group = PMPI_Win_get_group
#pragma weak MPI_Win_get_info = PMPI_Win_get_info
#pragma weak MPI_Win_set_info = PMPI_Win_set_info
#pragma weak MPI_Put = PMPI_Put
#pragma weak MPI_Get = PMPI_Get
#pragma weak MPI_Accumulate = PMPI_Accumulate
#pragma weak MPI_Get_accumulate = PMPI_Get_accumulate
#pragma weak MPI_Fetch_and_op = PMPI_Fetch_and_op
#pragma weak MPI_Compare_and_swap = PMPI_Compare_and_swap
#pragma weak MPI_Rput = PMPI_Rput
#pragma weak MPI_Rget = PMPI_Rget
#pragma weak MPI_Raccumulate = PMPI_Raccumulate
#pragma weak MPI_Rget_accumulate = PMPI_Rget_accumulate
#pragma weak MPI_Win_fence = PMPI_Win_fence
#pragma weak MPI_Win_lock = PMPI_Win_lock
#pragma weak MPI_Win_unlock = PMPI_Win_unlock
#pragma weak MPI_Win_lock_all = PMPI_Win_lock_all
#pragma weak MPI_Win_unlock_all = PMPI_Win_unlock_all
#pragma weak MPI_Win_flush = PMPI_Win_flush
#pragma weak MPI_Win_flush_all = PMPI_Win_flush_all
#pragma weak MPI_Win_flush_local = PMPI_Win_flush_local
#pragma weak MPI_Win_flush_local_all = PMPI_Win_flush_local_all
#pragma weak MPI_Win_sync = PMPI_Win_sync
#pragma weak MPI_Win_post = PMPI_Win_post
#pragma weak MPI_Win_start = PMPI_Win_start
#pragma weak MPI_Win_complete = PMPI_Win_complete
#pragma weak MPI_Win_wait = PMPI_Win_wait
#pragma weak MPI_Win_test = PMPI_Win_test
#pragma weak MPI_Win_create_keyval = PMPI_Win_create_keyval
#pragma weak MPI_Win_free_keyval = PMPI_Win_free_keyval
#pragma weak MPI_Win_set_attr = PMPI_Win_set_attr
#pragma weak MPI_Win_get_attr = PMPI_Win_get_attr
#pragma weak MPI_Win_delete_attr = PMPI_Win_delete_attr
#pragma weak MPI_Win_set_name = PMPI_Win_set_name
#pragma weak MPI_Win_get_name = PMPI_Win_get_name
#pragma weak MPI_Win_create_errhandler = PMPI_Win_create_errhandler
#pragma weak MPI_Win_set_errhandler = PMPI_Win_set_errhandler
#pragma weak MPI_Win_get_errhandler = PMPI_Win_get_errhandler
#pragma weak MPI_Win_call_errhandler = PMPI_Win_call_errhandler
#pragma weak MPI_Win_create_c = PMPI_Win_create_c
#pragma weak MPI_Win_allocate_c = PMPI_Win_allocate_c
#pragma weak MPI_Win_allocate_shared_c = PMPI_Win_allocate_shared_c
#pragma weak MPI_Win_shared_query_c = PMPI_Win_shared_query_c
#pragma weak MPI_Put_c = PMPI_Put_c
#pragma weak MPI_Get_c = PMPI_Get_c
#pragma weak MPI_Accumulate_c = PMPI_Accumulate_c
#pragma weak MPI_Get_accumulate_c = PMPI_Get_accumulate_c
#pragma weak MPI_Rput_c = PMPI_Rput_c
#pragma weak MPI_Rget_c = PMPI_Rget_c
#pragma weak MPI_Raccumulate_c = PMPI_Raccumulate_c
#pragma weak MPI_Rget_accumulate_c = PMPI_Rget_accumulate_c
