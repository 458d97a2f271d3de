// Reduction operators: the predefined MPI_Op objects, user-defined ops, and the kernels
// collectives (and later RMA accumulate) apply.
//
// Predefined ops apply to predefined datatypes and to derived types whose element is a
// run of consecutive values of ONE predefined type (contiguous/vector/indexed/struct/resized
// combinations that reduce to that; see sluice_datatype_s::op_base). Anything else needs a
// user-defined op.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace sluice::mpi {

enum class OpKind : std::uint8_t {
  max,
  min,
  sum,
  prod,
  land,
  band,
  lor,
  bor,
  lxor,
  bxor,
  maxloc,
  minloc,
  replace,
  no_op,
  user,
};

}  // namespace sluice::mpi

// The object an MPI_Op points to.
struct sluice_op_s {
  std::atomic<long> refs{1};
  sluice::mpi::OpKind kind = sluice::mpi::OpKind::user;
  bool predefined = false;
  bool commutative = true;
  MPI_User_function* user_fn = nullptr;
  MPI_User_function_c* user_fn_c = nullptr;  // MPI_Op_create_c: MPI_Count length
};

namespace sluice::mpi {

// MPI_SUCCESS or MPI_ERR_OP (null op, or a predefined op not defined for the datatype).
int op_check(MPI_Op, MPI_Datatype);
bool op_is_commutative(MPI_Op);
// inout = in (op) inout, element-wise over `count` elements of `datatype`; `in` is the
// contribution of the lower rank: reduce(in=a, inout=b) leaves b = a op b.
void op_apply(MPI_Op, MPI_Datatype, const void* in, void* inout, std::size_t count);

// The same on packed data (what dt_pack produces: count*dt_size(datatype) bytes per
// buffer), as collectives hold it. Pair types lose their padding when packed
// (MPI_DOUBLE_INT packs to 12 bytes), so this is not op_apply on the base type.
void op_apply_packed(MPI_Op, MPI_Datatype, const void* in, void* inout, std::size_t count);

// A kernel equivalent to op_apply_packed for this pair that skips its dispatch, for the
// common predefined ops on arithmetic predefined types; nullptr for everything else. The
// last argument is ignored (the signature is the collectives' reducer signature).
using PackedReduceFn = void (*)(const void* in, void* inout, std::size_t count, const void*);
PackedReduceFn op_direct_kernel(MPI_Op, MPI_Datatype);

// The collectives' reducer argument for an (op, datatype) pair, and the PackedReduceFn that
// applies it with op_apply_packed (arg: a PackedReducer).
struct PackedReducer {
  MPI_Op op = nullptr;
  MPI_Datatype type = nullptr;
};
void packed_reduce_fn(const void* in, void* inout, std::size_t count, const void* arg);

// Reference counting for user ops, so a pending nonblocking collective survives Op_free.
void op_retain(MPI_Op);
void op_release(MPI_Op);
// Exactly one of `fn` (MPI_Op_create) and `fn_c` (MPI_Op_create_c) is set.
MPI_Op op_create(MPI_User_function* fn, MPI_User_function_c* fn_c, bool commutative);
inline MPI_Op op_create(MPI_User_function* fn, bool commutative) {
  return op_create(fn, nullptr, commutative);
}

}  // namespace sluice::mpi
