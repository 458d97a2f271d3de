// MPI collective bindings over the collective schedules of src/coll.
//
// Each binding checks its arguments (errors go through the communicator's handler), turns
// its buffers into contiguous bytes — the user's buffer itself for contiguous datatypes, a
// staging buffer packed now and/or unpacked at completion otherwise — and starts one
// schedule. The blocking form waits for it; the I-form wraps it in an AsyncOp request
// whose completion does the unpacking. Datatypes and ops are retained while an operation
// is pending, so MPI_Type_free / MPI_Op_free right after an I-call are safe.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "coll/coll.hpp"
#include "mpi/big_lock.hpp"
#include "mpi/datatype.hpp"
#include "mpi/mpi_internal.hpp"
#include "mpi/op.hpp"

namespace sluice::mpi {
namespace {

using B = std::byte;

// ---- the collective group of a communicator ----------------------------------------------

// One coll::Group per communicator, keyed by its collective context id: comm.cpp agrees
// new context ids above every member's previous ones, so an id is never reused within a
// process and an entry can never be mistaken for a later communicator's (whose sequence
// numbers must start at 0 on every member).
// The communicator caches a pointer to its entry.
[[gnu::noinline]] coll::Group& find_group(MPI_Comm comm) {
  static std::unordered_map<uint32_t, std::unique_ptr<coll::Group>> groups;
  std::unique_ptr<coll::Group>& g = groups[comm->coll_ctx];
  if (!g) {
    g = std::make_unique<coll::Group>();
    g->rank = comm->rank;
    g->size = comm->size;
    g->world = comm->world;
    g->ctx = comm->coll_ctx;
  }
  comm->coll_group = g.get();
  return *g;
}

inline coll::Group& group_of(MPI_Comm comm) {
  if (comm->coll_group) [[likely]]
    return *comm->coll_group;
  return find_group(comm);
}

// ---- reductions ------------------------------------------------------------------------

// ---- one collective in flight ----------------------------------------------------------

class CollOp final : public AsyncOp {
 public:
  CollOp() = default;
  CollOp(const CollOp&) = delete;
  CollOp& operator=(const CollOp&) = delete;
  ~CollOp() override {
    if (sched_) {
      coll::wait(sched_);  // buffers below must outlive the schedule
      coll::release(sched_);
    }
    release_refs();
  }

  bool test() override {
    if (finished_) return true;
    if (!coll::poll(sched_)) return false;
    const Errc e = coll::error(sched_);
    error_ = e == Errc::ok ? MPI_SUCCESS : errc_to_class(e);
    coll::release(sched_);
    sched_ = nullptr;
    if (extras_ && error_ == MPI_SUCCESS)
      for (const Unpack& u : extras_->unpacks)
        dt_unpack(u.type, u.from, u.count * u.type->size, u.to, u.count);
    release_refs();
    finished_ = true;
    return true;
  }
  int error() const override { return error_; }

  void start(coll::Schedule* s) { sched_ = s; }

  B* stage(std::size_t bytes) {
    auto& st = extras().staging;
    st.emplace_back(new B[bytes == 0 ? 1 : bytes]);
    return st.back().get();
  }
  void unpack_later(MPI_Datatype t, const B* from, void* to, std::size_t count) {
    if (count == 0) return;
    retain(t);
    extras().unpacks.push_back({t, from, to, count});
  }
  void retain(MPI_Datatype t) {
    if (t->predefined) return;  // never freed; keeps small collectives allocation-free
    dt_retain(t);
    extras().types.push_back(t);
  }

  // The reducer for `op` over `type`; valid as long as this object.
  coll::Reducer reducer(MPI_Op op, MPI_Datatype type) {
    if (!op->predefined) {
      op_retain(op);
      op_ = op;
    }
    retain(type);
    red_.op = op;
    red_.type = type;
    PackedReduceFn direct = op_direct_kernel(op, type);
    return coll::Reducer{direct ? direct : packed_reduce_fn, &red_, type->size, op->commutative};
  }

 private:
  struct Unpack {
    MPI_Datatype type;
    const B* from;
    void* to;
    std::size_t count;
  };
  // Only non-contiguous or derived datatypes need these: the common case allocates nothing.
  struct Extras {
    std::vector<std::unique_ptr<B[]>> staging;
    std::vector<Unpack> unpacks;
    std::vector<MPI_Datatype> types;
  };
  Extras& extras() {
    if (!extras_) extras_ = std::make_unique<Extras>();
    return *extras_;
  }
  void release_refs() {
    if (extras_) {
      for (MPI_Datatype t : extras_->types) dt_release(t);
      extras_->types.clear();
    }
    if (op_) op_release(op_);
    op_ = nullptr;
  }

  coll::Schedule* sched_ = nullptr;
  bool finished_ = false;
  int error_ = MPI_SUCCESS;
  MPI_Op op_ = nullptr;  // retained user op
  PackedReducer red_;
  std::unique_ptr<Extras> extras_;
};

// ---- buffers as bytes -------------------------------------------------------------------

// Counts are MPI_Count and the v/w arrays templates over their element types (int, or
// MPI_Count and MPI_Aint for the MPI-4.0 _c forms): the int bindings and the _c ones share
// every function below.
std::size_t bytes_of(MPI_Count count, MPI_Datatype t) {
  return static_cast<std::size_t>(count) * dt_size(t);
}

// `count` elements of `type` at `buf` as contiguous bytes: the buffer itself when the type
// is contiguous, else a staging buffer, packed now when `in`, unpacked at completion when
// `out`.
[[gnu::noinline]] B* staged_view(CollOp& op, const void* buf, std::size_t count, MPI_Datatype type,
                                 bool in, bool out) {
  B* s = op.stage(count * type->size);
  if (in) dt_pack(type, buf, count, s);
  if (out) op.unpack_later(type, s, const_cast<void*>(buf), count);
  return s;
}
inline B* view(CollOp& op, const void* buf, std::size_t count, MPI_Datatype type, bool in,
               bool out) {
  if (type->contiguous) [[likely]]
    return static_cast<B*>(const_cast<void*>(buf)) + type->true_lb;
  return staged_view(op, buf, count, type, in, out);
}

// Per-rank blocks (v- and w-variants) as one base pointer plus byte counts and offsets.
struct Blocks {
  B* base = nullptr;
  std::vector<std::size_t> bytes, displs;
};

// Block i: counts[i] elements of types[i] (types[0] for all when `one_type`) at
// buf + displs[i] * unit[i] bytes (unit = the type's extent for v-variants, 1 for w).
template <class C, class D>
Blocks blocks(CollOp& op, const void* buf, int P, const C counts[], const D displs[],
              const MPI_Datatype types[], bool one_type, bool byte_displs, bool in, bool out) {
  Blocks b;
  b.bytes.resize(P);
  b.displs.resize(P);
  auto type_of = [&](int i) { return types[one_type ? 0 : i]; };
  auto addr_of = [&](int i) {
    const MPI_Aint unit = byte_displs ? 1 : dt_extent(type_of(i));
    return static_cast<const B*>(buf) + static_cast<MPI_Aint>(displs[i]) * unit;
  };
  bool contiguous = true;
  for (int i = 0; i < P && contiguous; ++i)
    contiguous = counts[i] == 0 || dt_is_contiguous(type_of(i));
  if (contiguous) {
    // Offsets from the lowest block, so negative displacements work too.
    const B* low = nullptr;
    for (int i = 0; i < P; ++i) {
      b.bytes[i] = bytes_of(counts[i], type_of(i));
      if (b.bytes[i] == 0) continue;
      const B* at = addr_of(i) + dt_true_lb(type_of(i));
      if (!low || at < low) low = at;
    }
    b.base = const_cast<B*>(low);
    for (int i = 0; i < P; ++i)
      b.displs[i] =
          b.bytes[i] ? static_cast<std::size_t>(addr_of(i) + dt_true_lb(type_of(i)) - low) : 0;
    return b;
  }
  std::size_t total = 0;
  for (int i = 0; i < P; ++i) {
    b.bytes[i] = bytes_of(counts[i], type_of(i));
    b.displs[i] = total;
    total += b.bytes[i];
  }
  b.base = op.stage(total);
  for (int i = 0; i < P; ++i) {
    if (counts[i] == 0) continue;
    void* at = const_cast<B*>(addr_of(i));
    if (in) dt_pack(type_of(i), at, counts[i], b.base + b.displs[i]);
    if (out) op.unpack_later(type_of(i), b.base + b.displs[i], at, counts[i]);
  }
  return b;
}

// ---- argument checks --------------------------------------------------------------------

int check_buffer_type(MPI_Comm comm, MPI_Count count, MPI_Datatype type, const char* fn) {
  if (int rc = check_count(comm, count, fn)) return rc;
  return check_type(comm, type, fn);
}

int check_op(MPI_Comm comm, MPI_Op op, MPI_Datatype type, const char* fn) {
  if (!op) return raise(comm, MPI_ERR_OP, fn, "invalid operation MPI_OP_NULL");
  if (op_check(op, type) != MPI_SUCCESS)
    return raise(comm, MPI_ERR_OP, fn, "operation not defined for this datatype");
  return MPI_SUCCESS;
}

template <class C, class D>
int check_counts(MPI_Comm comm, int P, const C counts[], const D displs[], const char* fn) {
  if (!counts) return raise(comm, MPI_ERR_COUNT, fn, "null counts array");
  for (int i = 0; i < P; ++i)
    if (counts[i] < 0)
      return raisef(comm, MPI_ERR_COUNT, fn, "invalid count %lld for rank %d",
                    static_cast<long long>(counts[i]), i);
  if (displs == nullptr && P > 0) return raise(comm, MPI_ERR_ARG, fn, "null displacements array");
  return MPI_SUCCESS;
}

int in_place_error(MPI_Comm comm, const char* fn) {
  return raise(comm, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed here");
}

int check_request(MPI_Comm comm, MPI_Request* req, const char* fn) {
  if (!req) return raise(comm, MPI_ERR_ARG, fn, "request is NULL");
  return MPI_SUCCESS;
}

bool in_place(const void* p) {
  return p == MPI_IN_PLACE;
}

// ---- the collectives: check, stage, start ------------------------------------------------

int start_barrier(CollOp& op, MPI_Comm comm, const char* fn) {
  if (int rc = check_comm(comm, fn)) return rc;
  op.start(coll::ibarrier(group_of(comm)));
  return MPI_SUCCESS;
}

int start_bcast(CollOp& op, void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm,
                const char* fn) {
  if (int rc = check_comm(comm, fn)) return rc;
  if (int rc = check_buffer_type(comm, count, type, fn)) return rc;
  if (int rc = check_root(comm, root, fn)) return rc;
  const bool is_root = comm->rank == root;
  B* b = view(op, buf, count, type, is_root, !is_root);
  op.start(coll::ibcast(group_of(comm), b, bytes_of(count, type), root));
  return MPI_SUCCESS;
}

int start_reduce(CollOp& op, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type,
                 MPI_Op mop, int root, MPI_Comm comm, const char* fn) {
  if (int rc = check_comm(comm, fn)) return rc;
  if (int rc = check_buffer_type(comm, count, type, fn)) return rc;
  if (int rc = check_op(comm, mop, type, fn)) return rc;
  if (int rc = check_root(comm, root, fn)) return rc;
  const bool is_root = comm->rank == root;
  const bool ip = in_place(sendbuf);
  if (ip && !is_root) return in_place_error(comm, fn);
  if (is_root && !ip && count > 0 && sendbuf == recvbuf)
    return raise(comm, MPI_ERR_BUFFER, fn, "sendbuf and recvbuf are the same (use MPI_IN_PLACE)");
  coll::Reducer red = op.reducer(mop, type);
  const B* s = ip ? nullptr : view(op, sendbuf, count, type, true, false);
  B* r = is_root ? view(op, recvbuf, count, type, ip, true) : nullptr;
  op.start(coll::ireduce(group_of(comm), s, r, count, red, root));
  return MPI_SUCCESS;
}

int start_allreduce(CollOp& op, const void* sendbuf, void* recvbuf, MPI_Count count,
                    MPI_Datatype type, MPI_Op mop, MPI_Comm comm, const char* fn) {
  if (int rc = check_comm(comm, fn)) return rc;
  if (int rc = check_buffer_type(comm, count, type, fn)) return rc;
  if (int rc = check_op(comm, mop, type, fn)) return rc;
  const bool ip = in_place(sendbuf);
  if (!ip && count > 0 && sendbuf == recvbuf)
    return raise(comm, MPI_ERR_BUFFER, fn, "sendbuf and recvbuf are the same (use MPI_IN_PLACE)");
  coll::Reducer red = op.reducer(mop, type);
  const B* s = ip ? nullptr : view(op, sendbuf, count, type, true, false);
  B* r = view(op, recvbuf, count, type, ip, true);
  op.start(coll::iallreduce(group_of(comm), s, r, count, red));
  return MPI_SUCCESS;
}

int start_gather(CollOp& op, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                 void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 const char* fn) {
  if (int rc = check_comm(comm, fn)) return rc;
  if (int rc = check_root(comm, root, fn)) return rc;
  const bool is_root = comm->rank == root, ip = in_place(sendbuf);
  if (ip && !is_root) return in_place_error(comm, fn);
  if (!ip)
    if (int rc = check_buffer_type(comm, sendcount, sendtype, fn)) return rc;
  if (is_root)
    if (int rc = check_buffer_type(comm, recvcount, recvtype, fn)) return rc;
  const std::size_t block = is_root ? bytes_of(recvcount, recvtype) : bytes_of(sendcount, sendtype);
  const B* s = ip ? nullptr : view(op, sendbuf, sendcount, sendtype, true, false);
  B* r = is_root ? view(op, recvbuf, static_cast<std::size_t>(recvcount) * comm->size, recvtype, ip,
                        true)
                 : nullptr;
  op.start(coll::igather(group_of(comm), s, r, block, root));
  return MPI_SUCCESS;
}

template <class C, class D>
int start_gatherv(CollOp& op, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                  void* recvbuf, const C recvcounts[], const D displs[], MPI_Datatype recvtype,
                  int root, MPI_Comm comm, const char* fn) {
  if (int rc = check_comm(comm, fn)) return rc;
  if (int rc = check_root(comm, root, fn)) return rc;
  const bool is_root = comm->rank == root, ip = in_place(sendbuf);
  if (ip && !is_root) return in_place_error(comm, fn);
  if (!ip)
    if (int rc = check_buffer_type(comm, sendcount, sendtype, fn)) return rc;
  Blocks rb;
  if (is_root) {
    if (int rc = check_type(comm, recvtype, fn)) return rc;
    if (int rc = check_counts(comm, comm->size, recvcounts, displs, fn)) return rc;
    const MPI_Datatype t[1] = {recvtype};
    rb = blocks(op, recvbuf, comm->size, recvcounts, displs, t, true, false, ip, true);
  }
  const B* s = ip ? nullptr : view(op, sendbuf, sendcount, sendtype, true, false);
  op.start(coll::igatherv(group_of(comm), s, ip ? 0 : bytes_of(sendcount, sendtype), rb.base,
                          rb.bytes, rb.displs, root));
  return MPI_SUCCESS;
}

int start_scatter(CollOp& op, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                  void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                  MPI_Comm comm, const char* fn) {
  if (int rc = check_comm(comm, fn)) return rc;
  if (int rc = check_root(comm, root, fn)) return rc;
  const bool is_root = comm->rank == root, ip = in_place(recvbuf);
  if (ip && !is_root) return in_place_error(comm, fn);
  if (is_root)
    if (int rc = check_buffer_type(comm, sendcount, sendtype, fn)) return rc;
  if (!ip)
    if (int rc = check_buffer_type(comm, recvcount, recvtype, fn)) return rc;
  const std::size_t block = is_root ? bytes_of(sendcount, sendtype) : bytes_of(recvcount, recvtype);
  const B* s = is_root ? view(op, sendbuf, static_cast<std::size_t>(sendcount) * comm->size,
                              sendtype, true, false)
                       : nullptr;
  B* r = ip ? nullptr : view(op, recvbuf, recvcount, recvtype, false, true);
  op.start(coll::iscatter(group_of(comm), s, r, block, root));
  return MPI_SUCCESS;
}

template <class C, class D>
int start_scatterv(CollOp& op, const void* sendbuf, const C sendcounts[], const D displs[],
                   MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, const char* fn) {
  if (int rc = check_comm(comm, fn)) return rc;
  if (int rc = check_root(comm, root, fn)) return rc;
  const bool is_root = comm->rank == root, ip = in_place(recvbuf);
  if (ip && !is_root) return in_place_error(comm, fn);
  if (!ip)
    if (int rc = check_buffer_type(comm, recvcount, recvtype, fn)) return rc;
  Blocks sb;
  if (is_root) {
    if (int rc = check_type(comm, sendtype, fn)) return rc;
    if (int rc = check_counts(comm, comm->size, sendcounts, displs, fn)) return rc;
    const MPI_Datatype t[1] = {sendtype};
    sb = blocks(op, sendbuf, comm->size, sendcounts, displs, t, true, false, true, false);
  }
  B* r = ip ? nullptr : view(op, recvbuf, recvcount, recvtype, false, true);
  op.start(coll::iscatterv(group_of(comm), sb.base, sb.bytes, sb.displs, r,
                           ip ? 0 : bytes_of(recvcount, recvtype), root));
  return MPI_SUCCESS;
}

int start_allgather(CollOp& op, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                    void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                    const char* fn) {
  if (int rc = check_comm(comm, fn)) return rc;
  const bool ip = in_place(sendbuf);
  if (!ip)
    if (int rc = check_buffer_type(comm, sendcount, sendtype, fn)) return rc;
  if (int rc = check_buffer_type(comm, recvcount, recvtype, fn)) return rc;
  const B* s = ip ? nullptr : view(op, sendbuf, sendcount, sendtype, true, false);
  B* r = view(op, recvbuf, static_cast<std::size_t>(recvcount) * comm->size, recvtype, ip, true);
  op.start(coll::iallgather(group_of(comm), s, r, bytes_of(recvcount, recvtype)));
  return MPI_SUCCESS;
}

template <class C, class D>
int start_allgatherv(CollOp& op, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                     void* recvbuf, const C recvcounts[], const D displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, const char* fn) {
  if (int rc = check_comm(comm, fn)) return rc;
  const bool ip = in_place(sendbuf);
  if (!ip)
    if (int rc = check_buffer_type(comm, sendcount, sendtype, fn)) return rc;
  if (int rc = check_type(comm, recvtype, fn)) return rc;
  if (int rc = check_counts(comm, comm->size, recvcounts, displs, fn)) return rc;
  const MPI_Datatype t[1] = {recvtype};
  Blocks rb = blocks(op, recvbuf, comm->size, recvcounts, displs, t, true, false, ip, true);
  const B* s = ip ? nullptr : view(op, sendbuf, sendcount, sendtype, true, false);
  op.start(coll::iallgatherv(group_of(comm), s,
                             ip ? rb.bytes[comm->rank] : bytes_of(sendcount, sendtype), rb.base,
                             rb.bytes, rb.displs));
  return MPI_SUCCESS;
}

int start_alltoall(CollOp& op, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                   void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                   const char* fn) {
  if (int rc = check_comm(comm, fn)) return rc;
  const bool ip = in_place(sendbuf);
  if (!ip)
    if (int rc = check_buffer_type(comm, sendcount, sendtype, fn)) return rc;
  if (int rc = check_buffer_type(comm, recvcount, recvtype, fn)) return rc;
  const std::size_t P = comm->size;
  const B* s =
      ip ? nullptr
         : view(op, sendbuf, static_cast<std::size_t>(sendcount) * P, sendtype, true, false);
  B* r = view(op, recvbuf, static_cast<std::size_t>(recvcount) * P, recvtype, ip, true);
  op.start(coll::ialltoall(group_of(comm), s, r, bytes_of(recvcount, recvtype)));
  return MPI_SUCCESS;
}

// Alltoallv (one type per side, displacements in extents) and Alltoallw (a type per peer,
// displacements in bytes) share this.
template <class C, class D>
int start_alltoallvw(CollOp& op, const void* sendbuf, const C sendcounts[], const D sdispls[],
                     const MPI_Datatype sendtypes[], void* recvbuf, const C recvcounts[],
                     const D rdispls[], const MPI_Datatype recvtypes[], bool w, MPI_Comm comm,
                     const char* fn) {
  if (int rc = check_comm(comm, fn)) return rc;
  const int P = comm->size;
  const bool ip = in_place(sendbuf);
  auto check_side = [&](const C counts[], const D displs[], const MPI_Datatype types[]) {
    if (int rc = check_counts(comm, P, counts, displs, fn)) return rc;
    if (!types) return raise(comm, MPI_ERR_TYPE, fn, "null datatype array");
    for (int i = 0; i < (w ? P : 1); ++i)
      if (int rc = check_type(comm, types[i], fn)) return rc;
    return MPI_SUCCESS;
  };
  if (!ip)
    if (int rc = check_side(sendcounts, sdispls, sendtypes)) return rc;
  if (int rc = check_side(recvcounts, rdispls, recvtypes)) return rc;
  Blocks rb = blocks(op, recvbuf, P, recvcounts, rdispls, recvtypes, !w, w, ip, true);
  if (ip) {
    op.start(coll::ialltoallv(group_of(comm), nullptr, {}, {}, rb.base, rb.bytes, rb.displs));
  } else {
    Blocks sb = blocks(op, sendbuf, P, sendcounts, sdispls, sendtypes, !w, w, true, false);
    op.start(coll::ialltoallv(group_of(comm), sb.base, sb.bytes, sb.displs, rb.base, rb.bytes,
                              rb.displs));
  }
  return MPI_SUCCESS;
}

template <class C>
int start_reduce_scatter(CollOp& op, const void* sendbuf, void* recvbuf, const C recvcounts[],
                         MPI_Datatype type, MPI_Op mop, MPI_Comm comm, const char* fn) {
  if (int rc = check_comm(comm, fn)) return rc;
  if (int rc = check_type(comm, type, fn)) return rc;
  if (int rc = check_op(comm, mop, type, fn)) return rc;
  if (!recvcounts) return raise(comm, MPI_ERR_COUNT, fn, "null recvcounts array");
  const int P = comm->size;
  std::vector<std::size_t> counts(P);
  std::size_t total = 0;
  for (int i = 0; i < P; ++i) {
    if (recvcounts[i] < 0)
      return raisef(comm, MPI_ERR_COUNT, fn, "invalid count %lld for rank %d",
                    static_cast<long long>(recvcounts[i]), i);
    counts[i] = static_cast<std::size_t>(recvcounts[i]);
    total += counts[i];
  }
  const bool ip = in_place(sendbuf);
  coll::Reducer red = op.reducer(mop, type);
  const B* s = ip ? nullptr : view(op, sendbuf, total, type, true, false);
  B* r;
  if (ip) {  // recvbuf holds the whole input; only our block is the result
    r = view(op, recvbuf, total, type, true, false);
    if (!dt_is_contiguous(type)) op.unpack_later(type, r, recvbuf, counts[comm->rank]);
  } else {
    r = view(op, recvbuf, counts[comm->rank], type, false, true);
  }
  op.start(coll::ireduce_scatter(group_of(comm), s, r, counts, red));
  return MPI_SUCCESS;
}

int start_reduce_scatter_block(CollOp& op, const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                               MPI_Datatype type, MPI_Op mop, MPI_Comm comm, const char* fn) {
  if (int rc = check_comm(comm, fn)) return rc;
  if (int rc = check_buffer_type(comm, recvcount, type, fn)) return rc;
  if (int rc = check_op(comm, mop, type, fn)) return rc;
  const std::size_t total = static_cast<std::size_t>(recvcount) * comm->size;
  const bool ip = in_place(sendbuf);
  coll::Reducer red = op.reducer(mop, type);
  const B* s = ip ? nullptr : view(op, sendbuf, total, type, true, false);
  B* r;
  if (ip) {
    r = view(op, recvbuf, total, type, true, false);
    if (!dt_is_contiguous(type)) op.unpack_later(type, r, recvbuf, recvcount);
  } else {
    r = view(op, recvbuf, recvcount, type, false, true);
  }
  op.start(coll::ireduce_scatter_block(group_of(comm), s, r, recvcount, red));
  return MPI_SUCCESS;
}

int start_scan(CollOp& op, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type,
               MPI_Op mop, MPI_Comm comm, bool exclusive, const char* fn) {
  if (int rc = check_comm(comm, fn)) return rc;
  if (int rc = check_buffer_type(comm, count, type, fn)) return rc;
  if (int rc = check_op(comm, mop, type, fn)) return rc;
  const bool ip = in_place(sendbuf);
  if (!ip && count > 0 && sendbuf == recvbuf)
    return raise(comm, MPI_ERR_BUFFER, fn, "sendbuf and recvbuf are the same (use MPI_IN_PLACE)");
  coll::Reducer red = op.reducer(mop, type);
  const B* s = ip ? nullptr : view(op, sendbuf, count, type, true, false);
  // Exscan leaves rank 0's recvbuf alone.
  B* r = view(op, recvbuf, count, type, ip, !(exclusive && comm->rank == 0));
  coll::Group& g = group_of(comm);
  op.start(exclusive ? coll::iexscan(g, s, r, count, red) : coll::iscan(g, s, r, count, red));
  return MPI_SUCCESS;
}

// ---- the MPI-4.0 _c forms on intercommunicators ---------------------------------------------

// inter.cpp works with int counts and displacements: a _c collective on an intercommunicator
// calls the int form when every count and displacement it reads fits, else raises
// MPI_ERR_COUNT.
class Narrow {
 public:
  Narrow(MPI_Comm comm, const char* fn) : comm_(comm), fn_(fn) { arrays_.reserve(4); }
  int operator()(MPI_Count v) {
    if (v < INT_MIN || v > INT_MAX) fits_ = false;
    return static_cast<int>(v);
  }
  // The first n elements of `a` (n = 0 where the argument is not significant).
  template <class T>
  const int* array(const T* a, int n) {
    if (!a) return nullptr;
    std::vector<int>& v = arrays_.emplace_back(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) v[i] = (*this)(a[i]);
    return v.data();
  }
  int error() const {
    if (fits_) return MPI_SUCCESS;
    return raise(comm_, MPI_ERR_COUNT, fn_,
                 "a count or displacement beyond INT_MAX on an intercommunicator (not supported)");
  }

 private:
  MPI_Comm comm_;
  const char* fn_;
  std::vector<std::vector<int>> arrays_;  // reserved: the pointers handed out stay valid
  bool fits_ = true;
};

// The number of elements of a root-side array of a rooted collective on an intercommunicator.
int root_side(MPI_Comm comm, int root) {
  return root == MPI_ROOT ? comm->size : 0;
}

// ---- blocking and nonblocking completion ---------------------------------------------------

int finish_blocking(MPI_Comm comm, CollOp& op, const char* fn) {
  if (!op.test()) block_until([&op] { return op.test(); });
  if (op.error() != MPI_SUCCESS) {
    const char* what = error_string(op.error());
    return raisef(comm, op.error(), fn, "collective failed: %s", what ? what : "error");
  }
  return MPI_SUCCESS;
}

int finish_nonblocking(MPI_Comm comm, std::unique_ptr<CollOp> op, MPI_Request* request) {
  *request = make_async_request(comm, std::move(op));
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace sluice::mpi

using namespace sluice::mpi;

// Every binding holds the MPI_THREAD_MULTIPLE lock (SLUICE_MPI_CALL, declared first so it
// is released last); block_until drops it between progress passes. Blocking: a CollOp on
// the stack, started and waited for. Nonblocking: on the heap, handed to a request.
#define SLUICE_BLOCKING(fn, comm, ...)               \
  do {                                               \
    SLUICE_MPI_CALL;                                 \
    if (int rc_ = check_intra(comm, fn)) return rc_; \
    CollOp op_;                                      \
    if (int rc_ = __VA_ARGS__) return rc_;           \
    return finish_blocking(comm, op_, fn);           \
  } while (0)
#define SLUICE_NONBLOCKING(fn, comm, request, ...)                \
  do {                                                            \
    SLUICE_MPI_CALL;                                              \
    if (int rc_ = check_comm(comm, fn)) return rc_;               \
    if (int rc_ = check_intra(comm, fn)) return rc_;              \
    if (int rc_ = check_request(comm, request, fn)) return rc_;   \
    auto holder_ = std::make_unique<CollOp>();                    \
    CollOp& op_ = *holder_;                                       \
    if (int rc_ = __VA_ARGS__) return rc_;                        \
    return finish_nonblocking(comm, std::move(holder_), request); \
  } while (0)

// Tells MPI_Init_thread that the collectives take the lock, so MPI_THREAD_MULTIPLE can be
// provided (env.cpp references it weakly).
extern "C" const int sluice_mpi_coll_thread_safe = 1;

extern "C" {

int PMPI_Barrier(MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]]
    return inter_collective(comm, InterCollective::barrier, {});
  SLUICE_BLOCKING("MPI_Barrier", comm, start_barrier(op_, comm, "MPI_Barrier"));
}
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]]
    return inter_icollective(comm, InterCollective::barrier, {}, request);
  SLUICE_NONBLOCKING("MPI_Ibarrier", comm, request, start_barrier(op_, comm, "MPI_Ibarrier"));
}

int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]]
    return inter_collective(comm, InterCollective::bcast,
                            {.recvbuf = buffer, .count = count, .type = datatype, .root = root});
  SLUICE_BLOCKING("MPI_Bcast", comm,
                  start_bcast(op_, buffer, count, datatype, root, comm, "MPI_Bcast"));
}
int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]]
    return inter_icollective(comm, InterCollective::bcast,
                             {.recvbuf = buffer, .count = count, .type = datatype, .root = root},
                             request);
  SLUICE_NONBLOCKING("MPI_Ibcast", comm, request,
                     start_bcast(op_, buffer, count, datatype, root, comm, "MPI_Ibcast"));
}

int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]]
    return inter_collective(comm, InterCollective::reduce,
                            {.sendbuf = sendbuf,
                             .recvbuf = recvbuf,
                             .count = count,
                             .type = datatype,
                             .op = op,
                             .root = root});
  SLUICE_BLOCKING(
      "MPI_Reduce", comm,
      start_reduce(op_, sendbuf, recvbuf, count, datatype, op, root, comm, "MPI_Reduce"));
}
int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]]
    return inter_icollective(comm, InterCollective::reduce,
                             {.sendbuf = sendbuf,
                              .recvbuf = recvbuf,
                              .count = count,
                              .type = datatype,
                              .op = op,
                              .root = root},
                             request);
  SLUICE_NONBLOCKING(
      "MPI_Ireduce", comm, request,
      start_reduce(op_, sendbuf, recvbuf, count, datatype, op, root, comm, "MPI_Ireduce"));
}

int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]]
    return inter_collective(
        comm, InterCollective::allreduce,
        {.sendbuf = sendbuf, .recvbuf = recvbuf, .count = count, .type = datatype, .op = op});
  SLUICE_BLOCKING(
      "MPI_Allreduce", comm,
      start_allreduce(op_, sendbuf, recvbuf, count, datatype, op, comm, "MPI_Allreduce"));
}
int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]]
    return inter_icollective(
        comm, InterCollective::allreduce,
        {.sendbuf = sendbuf, .recvbuf = recvbuf, .count = count, .type = datatype, .op = op},
        request);
  SLUICE_NONBLOCKING(
      "MPI_Iallreduce", comm, request,
      start_allreduce(op_, sendbuf, recvbuf, count, datatype, op, comm, "MPI_Iallreduce"));
}

int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]]
    return inter_collective(comm, InterCollective::gather,
                            {.sendbuf = sendbuf,
                             .recvbuf = recvbuf,
                             .count = sendcount,
                             .type = sendtype,
                             .recvcount = recvcount,
                             .recvtype = recvtype,
                             .root = root});
  SLUICE_BLOCKING("MPI_Gather", comm,
                  start_gather(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                               root, comm, "MPI_Gather"));
}
int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]]
    return inter_icollective(comm, InterCollective::gather,
                             {.sendbuf = sendbuf,
                              .recvbuf = recvbuf,
                              .count = sendcount,
                              .type = sendtype,
                              .recvcount = recvcount,
                              .recvtype = recvtype,
                              .root = root},
                             request);
  SLUICE_NONBLOCKING("MPI_Igather", comm, request,
                     start_gather(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                  root, comm, "MPI_Igather"));
}

int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]]
    return inter_collective(comm, InterCollective::gatherv,
                            {.sendbuf = sendbuf,
                             .recvbuf = recvbuf,
                             .count = sendcount,
                             .type = sendtype,
                             .recvtype = recvtype,
                             .root = root,
                             .recvcounts = recvcounts,
                             .rdispls = displs});
  SLUICE_BLOCKING("MPI_Gatherv", comm,
                  start_gatherv(op_, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                recvtype, root, comm, "MPI_Gatherv"));
}
int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]]
    return inter_icollective(comm, InterCollective::gatherv,
                             {.sendbuf = sendbuf,
                              .recvbuf = recvbuf,
                              .count = sendcount,
                              .type = sendtype,
                              .recvtype = recvtype,
                              .root = root,
                              .recvcounts = recvcounts,
                              .rdispls = displs},
                             request);
  SLUICE_NONBLOCKING("MPI_Igatherv", comm, request,
                     start_gatherv(op_, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                   recvtype, root, comm, "MPI_Igatherv"));
}

int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]]
    return inter_collective(comm, InterCollective::scatter,
                            {.sendbuf = sendbuf,
                             .recvbuf = recvbuf,
                             .count = sendcount,
                             .type = sendtype,
                             .recvcount = recvcount,
                             .recvtype = recvtype,
                             .root = root});
  SLUICE_BLOCKING("MPI_Scatter", comm,
                  start_scatter(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                root, comm, "MPI_Scatter"));
}
int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]]
    return inter_icollective(comm, InterCollective::scatter,
                             {.sendbuf = sendbuf,
                              .recvbuf = recvbuf,
                              .count = sendcount,
                              .type = sendtype,
                              .recvcount = recvcount,
                              .recvtype = recvtype,
                              .root = root},
                             request);
  SLUICE_NONBLOCKING("MPI_Iscatter", comm, request,
                     start_scatter(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   root, comm, "MPI_Iscatter"));
}

int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]]
    return inter_collective(comm, InterCollective::scatterv,
                            {.sendbuf = sendbuf,
                             .recvbuf = recvbuf,
                             .type = sendtype,
                             .recvcount = recvcount,
                             .recvtype = recvtype,
                             .root = root,
                             .sendcounts = sendcounts,
                             .sdispls = displs});
  SLUICE_BLOCKING("MPI_Scatterv", comm,
                  start_scatterv(op_, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                 recvtype, root, comm, "MPI_Scatterv"));
}
int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]]
    return inter_icollective(comm, InterCollective::scatterv,
                             {.sendbuf = sendbuf,
                              .recvbuf = recvbuf,
                              .type = sendtype,
                              .recvcount = recvcount,
                              .recvtype = recvtype,
                              .root = root,
                              .sendcounts = sendcounts,
                              .sdispls = displs},
                             request);
  SLUICE_NONBLOCKING("MPI_Iscatterv", comm, request,
                     start_scatterv(op_, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                    recvtype, root, comm, "MPI_Iscatterv"));
}

int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]]
    return inter_collective(comm, InterCollective::allgather,
                            {.sendbuf = sendbuf,
                             .recvbuf = recvbuf,
                             .count = sendcount,
                             .type = sendtype,
                             .recvcount = recvcount,
                             .recvtype = recvtype});
  SLUICE_BLOCKING("MPI_Allgather", comm,
                  start_allgather(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                  comm, "MPI_Allgather"));
}
int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]]
    return inter_icollective(comm, InterCollective::allgather,
                             {.sendbuf = sendbuf,
                              .recvbuf = recvbuf,
                              .count = sendcount,
                              .type = sendtype,
                              .recvcount = recvcount,
                              .recvtype = recvtype},
                             request);
  SLUICE_NONBLOCKING("MPI_Iallgather", comm, request,
                     start_allgather(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                     recvtype, comm, "MPI_Iallgather"));
}

int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]]
    return inter_collective(comm, InterCollective::allgatherv,
                            {.sendbuf = sendbuf,
                             .recvbuf = recvbuf,
                             .count = sendcount,
                             .type = sendtype,
                             .recvtype = recvtype,
                             .recvcounts = recvcounts,
                             .rdispls = displs});
  SLUICE_BLOCKING("MPI_Allgatherv", comm,
                  start_allgatherv(op_, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                   recvtype, comm, "MPI_Allgatherv"));
}
int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]]
    return inter_icollective(comm, InterCollective::allgatherv,
                             {.sendbuf = sendbuf,
                              .recvbuf = recvbuf,
                              .count = sendcount,
                              .type = sendtype,
                              .recvtype = recvtype,
                              .recvcounts = recvcounts,
                              .rdispls = displs},
                             request);
  SLUICE_NONBLOCKING("MPI_Iallgatherv", comm, request,
                     start_allgatherv(op_, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                      displs, recvtype, comm, "MPI_Iallgatherv"));
}

int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]]
    return inter_collective(comm, InterCollective::alltoall,
                            {.sendbuf = sendbuf,
                             .recvbuf = recvbuf,
                             .count = sendcount,
                             .type = sendtype,
                             .recvcount = recvcount,
                             .recvtype = recvtype});
  SLUICE_BLOCKING("MPI_Alltoall", comm,
                  start_alltoall(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 comm, "MPI_Alltoall"));
}
int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]]
    return inter_icollective(comm, InterCollective::alltoall,
                             {.sendbuf = sendbuf,
                              .recvbuf = recvbuf,
                              .count = sendcount,
                              .type = sendtype,
                              .recvcount = recvcount,
                              .recvtype = recvtype},
                             request);
  SLUICE_NONBLOCKING("MPI_Ialltoall", comm, request,
                     start_alltoall(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm, "MPI_Ialltoall"));
}

int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]]
    return inter_collective(comm, InterCollective::alltoallv,
                            {.sendbuf = sendbuf,
                             .recvbuf = recvbuf,
                             .type = sendtype,
                             .recvtype = recvtype,
                             .sendcounts = sendcounts,
                             .sdispls = sdispls,
                             .recvcounts = recvcounts,
                             .rdispls = rdispls});
  const MPI_Datatype st[1] = {sendtype}, rt[1] = {recvtype};
  SLUICE_BLOCKING("MPI_Alltoallv", comm,
                  start_alltoallvw(op_, sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts,
                                   rdispls, rt, false, comm, "MPI_Alltoallv"));
}
int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]]
    return inter_icollective(comm, InterCollective::alltoallv,
                             {.sendbuf = sendbuf,
                              .recvbuf = recvbuf,
                              .type = sendtype,
                              .recvtype = recvtype,
                              .sendcounts = sendcounts,
                              .sdispls = sdispls,
                              .recvcounts = recvcounts,
                              .rdispls = rdispls},
                             request);
  const MPI_Datatype st[1] = {sendtype}, rt[1] = {recvtype};
  SLUICE_NONBLOCKING("MPI_Ialltoallv", comm, request,
                     start_alltoallvw(op_, sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts,
                                      rdispls, rt, false, comm, "MPI_Ialltoallv"));
}

int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]]
    return inter_collective(comm, InterCollective::alltoallw,
                            {.sendbuf = sendbuf,
                             .recvbuf = recvbuf,
                             .sendcounts = sendcounts,
                             .sdispls = sdispls,
                             .recvcounts = recvcounts,
                             .rdispls = rdispls,
                             .sendtypes = sendtypes,
                             .recvtypes = recvtypes});
  SLUICE_BLOCKING("MPI_Alltoallw", comm,
                  start_alltoallvw(op_, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                   recvcounts, rdispls, recvtypes, true, comm, "MPI_Alltoallw"));
}
int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]]
    return inter_icollective(comm, InterCollective::alltoallw,
                             {.sendbuf = sendbuf,
                              .recvbuf = recvbuf,
                              .sendcounts = sendcounts,
                              .sdispls = sdispls,
                              .recvcounts = recvcounts,
                              .rdispls = rdispls,
                              .sendtypes = sendtypes,
                              .recvtypes = recvtypes},
                             request);
  SLUICE_NONBLOCKING(
      "MPI_Ialltoallw", comm, request,
      start_alltoallvw(op_, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                       recvtypes, true, comm, "MPI_Ialltoallw"));
}

int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]]
    return inter_collective(comm, InterCollective::reduce_scatter,
                            {.sendbuf = sendbuf,
                             .recvbuf = recvbuf,
                             .type = datatype,
                             .op = op,
                             .recvcounts = recvcounts});
  SLUICE_BLOCKING("MPI_Reduce_scatter", comm,
                  start_reduce_scatter(op_, sendbuf, recvbuf, recvcounts, datatype, op, comm,
                                       "MPI_Reduce_scatter"));
}
int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]]
    return inter_icollective(comm, InterCollective::reduce_scatter,
                             {.sendbuf = sendbuf,
                              .recvbuf = recvbuf,
                              .type = datatype,
                              .op = op,
                              .recvcounts = recvcounts},
                             request);
  SLUICE_NONBLOCKING("MPI_Ireduce_scatter", comm, request,
                     start_reduce_scatter(op_, sendbuf, recvbuf, recvcounts, datatype, op, comm,
                                          "MPI_Ireduce_scatter"));
}

int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]]
    return inter_collective(comm, InterCollective::reduce_scatter_block,
                            {.sendbuf = sendbuf,
                             .recvbuf = recvbuf,
                             .type = datatype,
                             .recvcount = recvcount,
                             .op = op});
  SLUICE_BLOCKING("MPI_Reduce_scatter_block", comm,
                  start_reduce_scatter_block(op_, sendbuf, recvbuf, recvcount, datatype, op, comm,
                                             "MPI_Reduce_scatter_block"));
}
int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]]
    return inter_icollective(comm, InterCollective::reduce_scatter_block,
                             {.sendbuf = sendbuf,
                              .recvbuf = recvbuf,
                              .type = datatype,
                              .recvcount = recvcount,
                              .op = op},
                             request);
  SLUICE_NONBLOCKING("MPI_Ireduce_scatter_block", comm, request,
                     start_reduce_scatter_block(op_, sendbuf, recvbuf, recvcount, datatype, op,
                                                comm, "MPI_Ireduce_scatter_block"));
}

int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm) {
  SLUICE_BLOCKING("MPI_Scan", comm,
                  start_scan(op_, sendbuf, recvbuf, count, datatype, op, comm, false, "MPI_Scan"));
}
int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request* request) {
  SLUICE_NONBLOCKING(
      "MPI_Iscan", comm, request,
      start_scan(op_, sendbuf, recvbuf, count, datatype, op, comm, false, "MPI_Iscan"));
}

int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm) {
  SLUICE_BLOCKING("MPI_Exscan", comm,
                  start_scan(op_, sendbuf, recvbuf, count, datatype, op, comm, true, "MPI_Exscan"));
}
int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request* request) {
  SLUICE_NONBLOCKING(
      "MPI_Iexscan", comm, request,
      start_scan(op_, sendbuf, recvbuf, count, datatype, op, comm, true, "MPI_Iexscan"));
}

// ---- MPI-4.0 large counts: the start_* functions above with MPI_Count counts and MPI_Aint
// displacements; on an intercommunicator, the int form after narrowing (Narrow).

int PMPI_Bcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Bcast_c");
    const int c = n(count);
    if (int rc = n.error()) return rc;
    return PMPI_Bcast(buffer, c, datatype, root, comm);
  }
  SLUICE_BLOCKING("MPI_Bcast_c", comm,
                  start_bcast(op_, buffer, count, datatype, root, comm, "MPI_Bcast_c"));
}
int PMPI_Ibcast_c(void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                  MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Ibcast_c");
    const int c = n(count);
    if (int rc = n.error()) return rc;
    return PMPI_Ibcast(buffer, c, datatype, root, comm, request);
  }
  SLUICE_NONBLOCKING("MPI_Ibcast_c", comm, request,
                     start_bcast(op_, buffer, count, datatype, root, comm, "MPI_Ibcast_c"));
}

int PMPI_Reduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, int root, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Reduce_c");
    const int c = n(count);
    if (int rc = n.error()) return rc;
    return PMPI_Reduce(sendbuf, recvbuf, c, datatype, op, root, comm);
  }
  SLUICE_BLOCKING(
      "MPI_Reduce_c", comm,
      start_reduce(op_, sendbuf, recvbuf, count, datatype, op, root, comm, "MPI_Reduce_c"));
}
int PMPI_Ireduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Ireduce_c");
    const int c = n(count);
    if (int rc = n.error()) return rc;
    return PMPI_Ireduce(sendbuf, recvbuf, c, datatype, op, root, comm, request);
  }
  SLUICE_NONBLOCKING(
      "MPI_Ireduce_c", comm, request,
      start_reduce(op_, sendbuf, recvbuf, count, datatype, op, root, comm, "MPI_Ireduce_c"));
}

int PMPI_Allreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Allreduce_c");
    const int c = n(count);
    if (int rc = n.error()) return rc;
    return PMPI_Allreduce(sendbuf, recvbuf, c, datatype, op, comm);
  }
  SLUICE_BLOCKING(
      "MPI_Allreduce_c", comm,
      start_allreduce(op_, sendbuf, recvbuf, count, datatype, op, comm, "MPI_Allreduce_c"));
}
int PMPI_Iallreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Iallreduce_c");
    const int c = n(count);
    if (int rc = n.error()) return rc;
    return PMPI_Iallreduce(sendbuf, recvbuf, c, datatype, op, comm, request);
  }
  SLUICE_NONBLOCKING(
      "MPI_Iallreduce_c", comm, request,
      start_allreduce(op_, sendbuf, recvbuf, count, datatype, op, comm, "MPI_Iallreduce_c"));
}

int PMPI_Gather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Gather_c");
    const int sc = n(sendcount), rc_ = n(recvcount);
    if (int rc = n.error()) return rc;
    return PMPI_Gather(sendbuf, sc, sendtype, recvbuf, rc_, recvtype, root, comm);
  }
  SLUICE_BLOCKING("MPI_Gather_c", comm,
                  start_gather(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                               root, comm, "MPI_Gather_c"));
}
int PMPI_Igather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Igather_c");
    const int sc = n(sendcount), rc_ = n(recvcount);
    if (int rc = n.error()) return rc;
    return PMPI_Igather(sendbuf, sc, sendtype, recvbuf, rc_, recvtype, root, comm, request);
  }
  SLUICE_NONBLOCKING("MPI_Igather_c", comm, request,
                     start_gather(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                  root, comm, "MPI_Igather_c"));
}

int PMPI_Gatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                   int root, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Gatherv_c");
    const int sc = n(sendcount), P = root_side(comm, root);
    const int *rcs = n.array(recvcounts, P), *ds = n.array(displs, P);
    if (int rc = n.error()) return rc;
    return PMPI_Gatherv(sendbuf, sc, sendtype, recvbuf, rcs, ds, recvtype, root, comm);
  }
  SLUICE_BLOCKING("MPI_Gatherv_c", comm,
                  start_gatherv(op_, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                recvtype, root, comm, "MPI_Gatherv_c"));
}
int PMPI_Igatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                    int root, MPI_Comm comm, MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Igatherv_c");
    const int sc = n(sendcount), P = root_side(comm, root);
    const int *rcs = n.array(recvcounts, P), *ds = n.array(displs, P);
    if (int rc = n.error()) return rc;
    return PMPI_Igatherv(sendbuf, sc, sendtype, recvbuf, rcs, ds, recvtype, root, comm, request);
  }
  SLUICE_NONBLOCKING("MPI_Igatherv_c", comm, request,
                     start_gatherv(op_, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                   recvtype, root, comm, "MPI_Igatherv_c"));
}

int PMPI_Scatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Scatter_c");
    const int sc = n(sendcount), rc_ = n(recvcount);
    if (int rc = n.error()) return rc;
    return PMPI_Scatter(sendbuf, sc, sendtype, recvbuf, rc_, recvtype, root, comm);
  }
  SLUICE_BLOCKING("MPI_Scatter_c", comm,
                  start_scatter(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                root, comm, "MPI_Scatter_c"));
}
int PMPI_Iscatter_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Iscatter_c");
    const int sc = n(sendcount), rc_ = n(recvcount);
    if (int rc = n.error()) return rc;
    return PMPI_Iscatter(sendbuf, sc, sendtype, recvbuf, rc_, recvtype, root, comm, request);
  }
  SLUICE_NONBLOCKING("MPI_Iscatter_c", comm, request,
                     start_scatter(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                   root, comm, "MPI_Iscatter_c"));
}

int PMPI_Scatterv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                    MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Scatterv_c");
    const int P = root_side(comm, root), rc_ = n(recvcount);
    const int *scs = n.array(sendcounts, P), *ds = n.array(displs, P);
    if (int rc = n.error()) return rc;
    return PMPI_Scatterv(sendbuf, scs, ds, sendtype, recvbuf, rc_, recvtype, root, comm);
  }
  SLUICE_BLOCKING("MPI_Scatterv_c", comm,
                  start_scatterv(op_, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                 recvtype, root, comm, "MPI_Scatterv_c"));
}
int PMPI_Iscatterv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                     MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Iscatterv_c");
    const int P = root_side(comm, root), rc_ = n(recvcount);
    const int *scs = n.array(sendcounts, P), *ds = n.array(displs, P);
    if (int rc = n.error()) return rc;
    return PMPI_Iscatterv(sendbuf, scs, ds, sendtype, recvbuf, rc_, recvtype, root, comm, request);
  }
  SLUICE_NONBLOCKING("MPI_Iscatterv_c", comm, request,
                     start_scatterv(op_, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                                    recvtype, root, comm, "MPI_Iscatterv_c"));
}

int PMPI_Allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Allgather_c");
    const int sc = n(sendcount), rc_ = n(recvcount);
    if (int rc = n.error()) return rc;
    return PMPI_Allgather(sendbuf, sc, sendtype, recvbuf, rc_, recvtype, comm);
  }
  SLUICE_BLOCKING("MPI_Allgather_c", comm,
                  start_allgather(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                  comm, "MPI_Allgather_c"));
}
int PMPI_Iallgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Iallgather_c");
    const int sc = n(sendcount), rc_ = n(recvcount);
    if (int rc = n.error()) return rc;
    return PMPI_Iallgather(sendbuf, sc, sendtype, recvbuf, rc_, recvtype, comm, request);
  }
  SLUICE_NONBLOCKING("MPI_Iallgather_c", comm, request,
                     start_allgather(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                     recvtype, comm, "MPI_Iallgather_c"));
}

int PMPI_Allgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                      MPI_Datatype recvtype, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Allgatherv_c");
    const int sc = n(sendcount);
    const int *rcs = n.array(recvcounts, comm->size), *ds = n.array(displs, comm->size);
    if (int rc = n.error()) return rc;
    return PMPI_Allgatherv(sendbuf, sc, sendtype, recvbuf, rcs, ds, recvtype, comm);
  }
  SLUICE_BLOCKING("MPI_Allgatherv_c", comm,
                  start_allgatherv(op_, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                                   recvtype, comm, "MPI_Allgatherv_c"));
}
int PMPI_Iallgatherv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Iallgatherv_c");
    const int sc = n(sendcount);
    const int *rcs = n.array(recvcounts, comm->size), *ds = n.array(displs, comm->size);
    if (int rc = n.error()) return rc;
    return PMPI_Iallgatherv(sendbuf, sc, sendtype, recvbuf, rcs, ds, recvtype, comm, request);
  }
  SLUICE_NONBLOCKING("MPI_Iallgatherv_c", comm, request,
                     start_allgatherv(op_, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                                      displs, recvtype, comm, "MPI_Iallgatherv_c"));
}

int PMPI_Alltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Alltoall_c");
    const int sc = n(sendcount), rc_ = n(recvcount);
    if (int rc = n.error()) return rc;
    return PMPI_Alltoall(sendbuf, sc, sendtype, recvbuf, rc_, recvtype, comm);
  }
  SLUICE_BLOCKING("MPI_Alltoall_c", comm,
                  start_alltoall(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                 comm, "MPI_Alltoall_c"));
}
int PMPI_Ialltoall_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Ialltoall_c");
    const int sc = n(sendcount), rc_ = n(recvcount);
    if (int rc = n.error()) return rc;
    return PMPI_Ialltoall(sendbuf, sc, sendtype, recvbuf, rc_, recvtype, comm, request);
  }
  SLUICE_NONBLOCKING("MPI_Ialltoall_c", comm, request,
                     start_alltoall(op_, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                                    comm, "MPI_Ialltoall_c"));
}

int PMPI_Alltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Alltoallv_c");
    const int P = comm->size;
    const int *scs = n.array(sendcounts, P), *sds = n.array(sdispls, P);
    const int *rcs = n.array(recvcounts, P), *rds = n.array(rdispls, P);
    if (int rc = n.error()) return rc;
    return PMPI_Alltoallv(sendbuf, scs, sds, sendtype, recvbuf, rcs, rds, recvtype, comm);
  }
  const MPI_Datatype st[1] = {sendtype}, rt[1] = {recvtype};
  SLUICE_BLOCKING("MPI_Alltoallv_c", comm,
                  start_alltoallvw(op_, sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts,
                                   rdispls, rt, false, comm, "MPI_Alltoallv_c"));
}
int PMPI_Ialltoallv_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      MPI_Datatype sendtype, void* recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Ialltoallv_c");
    const int P = comm->size;
    const int *scs = n.array(sendcounts, P), *sds = n.array(sdispls, P);
    const int *rcs = n.array(recvcounts, P), *rds = n.array(rdispls, P);
    if (int rc = n.error()) return rc;
    return PMPI_Ialltoallv(sendbuf, scs, sds, sendtype, recvbuf, rcs, rds, recvtype, comm, request);
  }
  const MPI_Datatype st[1] = {sendtype}, rt[1] = {recvtype};
  SLUICE_NONBLOCKING("MPI_Ialltoallv_c", comm, request,
                     start_alltoallvw(op_, sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts,
                                      rdispls, rt, false, comm, "MPI_Ialltoallv_c"));
}

int PMPI_Alltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Alltoallw_c");
    const int P = comm->size;
    const int *scs = n.array(sendcounts, P), *sds = n.array(sdispls, P);
    const int *rcs = n.array(recvcounts, P), *rds = n.array(rdispls, P);
    if (int rc = n.error()) return rc;
    return PMPI_Alltoallw(sendbuf, scs, sds, sendtypes, recvbuf, rcs, rds, recvtypes, comm);
  }
  SLUICE_BLOCKING("MPI_Alltoallw_c", comm,
                  start_alltoallvw(op_, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                                   recvcounts, rdispls, recvtypes, true, comm, "MPI_Alltoallw_c"));
}
int PMPI_Ialltoallw_c(const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                      MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Ialltoallw_c");
    const int P = comm->size;
    const int *scs = n.array(sendcounts, P), *sds = n.array(sdispls, P);
    const int *rcs = n.array(recvcounts, P), *rds = n.array(rdispls, P);
    if (int rc = n.error()) return rc;
    return PMPI_Ialltoallw(sendbuf, scs, sds, sendtypes, recvbuf, rcs, rds, recvtypes, comm,
                           request);
  }
  SLUICE_NONBLOCKING(
      "MPI_Ialltoallw_c", comm, request,
      start_alltoallvw(op_, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                       recvtypes, true, comm, "MPI_Ialltoallw_c"));
}

int PMPI_Reduce_scatter_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[],
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Reduce_scatter_c");
    const int* rcs = n.array(recvcounts, inter_local_size(comm));
    if (int rc = n.error()) return rc;
    return PMPI_Reduce_scatter(sendbuf, recvbuf, rcs, datatype, op, comm);
  }
  SLUICE_BLOCKING("MPI_Reduce_scatter_c", comm,
                  start_reduce_scatter(op_, sendbuf, recvbuf, recvcounts, datatype, op, comm,
                                       "MPI_Reduce_scatter_c"));
}
int PMPI_Ireduce_scatter_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[],
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Ireduce_scatter_c");
    const int* rcs = n.array(recvcounts, inter_local_size(comm));
    if (int rc = n.error()) return rc;
    return PMPI_Ireduce_scatter(sendbuf, recvbuf, rcs, datatype, op, comm, request);
  }
  SLUICE_NONBLOCKING("MPI_Ireduce_scatter_c", comm, request,
                     start_reduce_scatter(op_, sendbuf, recvbuf, recvcounts, datatype, op, comm,
                                          "MPI_Ireduce_scatter_c"));
}

int PMPI_Reduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Reduce_scatter_block_c");
    const int c = n(recvcount);
    if (int rc = n.error()) return rc;
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, c, datatype, op, comm);
  }
  SLUICE_BLOCKING("MPI_Reduce_scatter_block_c", comm,
                  start_reduce_scatter_block(op_, sendbuf, recvbuf, recvcount, datatype, op, comm,
                                             "MPI_Reduce_scatter_block_c"));
}
int PMPI_Ireduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                 MPI_Request* request) {
  if (comm && comm->inter) [[unlikely]] {
    Narrow n(comm, "MPI_Ireduce_scatter_block_c");
    const int c = n(recvcount);
    if (int rc = n.error()) return rc;
    return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, c, datatype, op, comm, request);
  }
  SLUICE_NONBLOCKING("MPI_Ireduce_scatter_block_c", comm, request,
                     start_reduce_scatter_block(op_, sendbuf, recvbuf, recvcount, datatype, op,
                                                comm, "MPI_Ireduce_scatter_block_c"));
}

int PMPI_Scan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                MPI_Op op, MPI_Comm comm) {
  SLUICE_BLOCKING(
      "MPI_Scan_c", comm,
      start_scan(op_, sendbuf, recvbuf, count, datatype, op, comm, false, "MPI_Scan_c"));
}
int PMPI_Iscan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  SLUICE_NONBLOCKING(
      "MPI_Iscan_c", comm, request,
      start_scan(op_, sendbuf, recvbuf, count, datatype, op, comm, false, "MPI_Iscan_c"));
}

int PMPI_Exscan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm) {
  SLUICE_BLOCKING(
      "MPI_Exscan_c", comm,
      start_scan(op_, sendbuf, recvbuf, count, datatype, op, comm, true, "MPI_Exscan_c"));
}
int PMPI_Iexscan_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  SLUICE_NONBLOCKING(
      "MPI_Iexscan_c", comm, request,
      start_scan(op_, sendbuf, recvbuf, count, datatype, op, comm, true, "MPI_Iexscan_c"));
}

}  // extern "C"

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Barrier = PMPI_Barrier
#pragma weak MPI_Ibarrier = PMPI_Ibarrier
#pragma weak MPI_Bcast = PMPI_Bcast
#pragma weak MPI_Ibcast = PMPI_Ibcast
#pragma weak MPI_Reduce = PMPI_Reduce
#pragma weak MPI_Ireduce = PMPI_Ireduce
#pragma weak MPI_Allreduce = PMPI_Allreduce
#pragma weak MPI_Iallreduce = PMPI_Iallreduce
#pragma weak MPI_Gather = PMPI_Gather
#pragma weak MPI_Igather = PMPI_Igather
#pragma weak MPI_Gatherv = PMPI_Gatherv
#pragma weak MPI_Igatherv = PMPI_Igatherv
#pragma weak MPI_Scatter = PMPI_Scatter
#pragma weak MPI_Iscatter = PMPI_Iscatter
#pragma weak MPI_Scatterv = PMPI_Scatterv
#pragma weak MPI_Iscatterv = PMPI_Iscatterv
#pragma weak MPI_Allgather = PMPI_Allgather
#pragma weak MPI_Iallgather = PMPI_Iallgather
#pragma weak MPI_Allgatherv = PMPI_Allgatherv
#pragma weak MPI_Iallgatherv = PMPI_Iallgatherv
#pragma weak MPI_Alltoall = PMPI_Alltoall
#pragma weak MPI_Ialltoall = PMPI_Ialltoall
#pragma weak MPI_Alltoallv = PMPI_Alltoallv
#pragma weak MPI_Ialltoallv = PMPI_Ialltoallv
#pragma weak MPI_Alltoallw = PMPI_Alltoallw
#pragma weak MPI_Ialltoallw = PMPI_Ialltoallw
#pragma weak MPI_Reduce_scatter = PMPI_Reduce_scatter
#pragma weak MPI_Ireduce_scatter = PMPI_Ireduce_scatter
#pragma weak MPI_Reduce_scatter_block = PMPI_Reduce_scatter_block
#pragma weak MPI_Ireduce_scatter_block = PMPI_Ireduce_scatter_block
#pragma weak MPI_Scan = PMPI_Scan
#pragma weak MPI_Iscan = PMPI_Iscan
#pragma weak MPI_Exscan = PMPI_Exscan
#pragma weak MPI_Iexscan = PMPI_Iexscan
#pragma weak MPI_Bcast_c = PMPI_Bcast_c
#pragma weak MPI_Ibcast_c = PMPI_Ibcast_c
#pragma weak MPI_Reduce_c = PMPI_Reduce_c
#pragma weak MPI_Ireduce_c = PMPI_Ireduce_c
#pragma weak MPI_Allreduce_c = PMPI_Allreduce_c
#pragma weak MPI_Iallreduce_c = PMPI_Iallreduce_c
#pragma weak MPI_Gather_c = PMPI_Gather_c
#pragma weak MPI_Igather_c = PMPI_Igather_c
#pragma weak MPI_Gatherv_c = PMPI_Gatherv_c
#pragma weak MPI_Igatherv_c = PMPI_Igatherv_c
#pragma weak MPI_Scatter_c = PMPI_Scatter_c
#pragma weak MPI_Iscatter_c = PMPI_Iscatter_c
#pragma weak MPI_Scatterv_c = PMPI_Scatterv_c
#pragma weak MPI_Iscatterv_c = PMPI_Iscatterv_c
#pragma weak MPI_Allgather_c = PMPI_Allgather_c
#pragma weak MPI_Iallgather_c = PMPI_Iallgather_c
#pragma weak MPI_Allgatherv_c = PMPI_Allgatherv_c
#pragma weak MPI_Iallgatherv_c = PMPI_Iallgatherv_c
#pragma weak MPI_Alltoall_c = PMPI_Alltoall_c
#pragma weak MPI_Ialltoall_c = PMPI_Ialltoall_c
#pragma weak MPI_Alltoallv_c = PMPI_Alltoallv_c
#pragma weak MPI_Ialltoallv_c = PMPI_Ialltoallv_c
#pragma weak MPI_Alltoallw_c = PMPI_Alltoallw_c
#pragma weak MPI_Ialltoallw_c = PMPI_Ialltoallw_c
#pragma weak MPI_Reduce_scatter_c = PMPI_Reduce_scatter_c
#pragma weak MPI_Ireduce_scatter_c = PMPI_Ireduce_scatter_c
#pragma weak MPI_Reduce_scatter_block_c = PMPI_Reduce_scatter_block_c
#pragma weak MPI_Ireduce_scatter_block_c = PMPI_Ireduce_scatter_block_c
#pragma weak MPI_Scan_c = PMPI_Scan_c
#pragma weak MPI_Iscan_c = PMPI_Iscan_c
#pragma weak MPI_Exscan_c = PMPI_Exscan_c
#pragma weak MPI_Iexscan_c = PMPI_Iexscan_c
