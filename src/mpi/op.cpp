// Predefined ops over MPI datatypes. One switch per call picks a typed loop from the
// reduction-kernel library the native collectives use too (coll/reduce_kernels.hpp), so
// both wrap signed integer overflow the same way; MAXLOC/MINLOC pairs are MPI's own.

#include "mpi/op.hpp"

#include <algorithm>
#include <climits>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#include "coll/reduce_kernels.hpp"
#include "mpi/datatype.hpp"

using sluice::mpi::OpKind;

// Aggregate initialisation keeps these constant-initialised (no static-init ordering).
sluice_op_s sluice_op_max{{1}, OpKind::max, true, true, nullptr};
sluice_op_s sluice_op_min{{1}, OpKind::min, true, true, nullptr};
sluice_op_s sluice_op_sum{{1}, OpKind::sum, true, true, nullptr};
sluice_op_s sluice_op_prod{{1}, OpKind::prod, true, true, nullptr};
sluice_op_s sluice_op_land{{1}, OpKind::land, true, true, nullptr};
sluice_op_s sluice_op_band{{1}, OpKind::band, true, true, nullptr};
sluice_op_s sluice_op_lor{{1}, OpKind::lor, true, true, nullptr};
sluice_op_s sluice_op_bor{{1}, OpKind::bor, true, true, nullptr};
sluice_op_s sluice_op_lxor{{1}, OpKind::lxor, true, true, nullptr};
sluice_op_s sluice_op_bxor{{1}, OpKind::bxor, true, true, nullptr};
sluice_op_s sluice_op_maxloc{{1}, OpKind::maxloc, true, true, nullptr};
sluice_op_s sluice_op_minloc{{1}, OpKind::minloc, true, true, nullptr};
sluice_op_s sluice_op_replace{{1}, OpKind::replace, true, false, nullptr};
sluice_op_s sluice_op_no_op{{1}, OpKind::no_op, true, true, nullptr};

namespace sluice::mpi {
namespace {

inline const char* at(const void* base, MPI_Aint offset) {
  return reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(base) +
                                       static_cast<std::uintptr_t>(offset));
}
inline char* at(void* base, MPI_Aint offset) {
  return reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(base) +
                                 static_cast<std::uintptr_t>(offset));
}

namespace kernels = coll::kernels;

// The kernel library's operation for a predefined arithmetic/logical/bitwise op.
kernels::Op kernel_op(OpKind k) {
  switch (k) {
    case OpKind::max:
      return kernels::Op::max;
    case OpKind::min:
      return kernels::Op::min;
    case OpKind::sum:
      return kernels::Op::sum;
    case OpKind::prod:
      return kernels::Op::prod;
    case OpKind::land:
      return kernels::Op::land;
    case OpKind::lor:
      return kernels::Op::lor;
    case OpKind::lxor:
      return kernels::Op::lxor;
    case OpKind::band:
      return kernels::Op::band;
    case OpKind::bor:
      return kernels::Op::bor;
    case OpKind::bxor:
      return kernels::Op::bxor;
    default:
      return kernels::Op::max;  // not reached: callers dispatch maxloc/minloc/replace/no_op/user
  }
}

bool has_kernel(OpKind k) {
  return k <= OpKind::bxor;  // max .. bxor: the kernel library's operations
}

template <typename T>
void typed_kernel(OpKind k, const void* in, void* inout, std::size_t n) {
  if (has_kernel(k)) kernels::apply<T>(kernel_op(k), in, inout, n);
}

// C _Bool, read as bytes so a non-0/1 byte cannot be undefined behaviour: the logical ops
// only (bitwise ones are not defined on MPI_C_BOOL / logical types).
void bool_kernel(OpKind k, const void* in, void* inout, std::size_t n) {
  if (k == OpKind::land || k == OpKind::lor || k == OpKind::lxor)
    kernels::apply<unsigned char>(kernel_op(k), in, inout, n);
}

// gfortran's INTEGER(16). __int128 is no std::is_integral type in strict C++20, so the kernel
// library does not take it: the same semantics here (sum and product wrap, computed unsigned).
void int128_kernel(OpKind k, const void* in, void* inout, std::size_t n) {
  using S = __int128;
  using U = unsigned __int128;
  const S* a = static_cast<const S*>(in);
  S* b = static_cast<S*>(inout);
  for (std::size_t i = 0; i < n; ++i) {
    const S x = a[i], y = b[i];
    switch (k) {
      case OpKind::max:
        b[i] = x > y ? x : y;
        break;
      case OpKind::min:
        b[i] = x < y ? x : y;
        break;
      case OpKind::sum:
        b[i] = static_cast<S>(static_cast<U>(x) + static_cast<U>(y));
        break;
      case OpKind::prod:
        b[i] = static_cast<S>(static_cast<U>(x) * static_cast<U>(y));
        break;
      case OpKind::land:
        b[i] = (x != 0) & (y != 0);
        break;
      case OpKind::lor:
        b[i] = (x != 0) | (y != 0);
        break;
      case OpKind::lxor:
        b[i] = (x != 0) ^ (y != 0);
        break;
      case OpKind::band:
        b[i] = x & y;
        break;
      case OpKind::bor:
        b[i] = x | y;
        break;
      case OpKind::bxor:
        b[i] = x ^ y;
        break;
      default:
        return;
    }
  }
}

// MAXLOC/MINLOC on {V value; I index;}; on equal values the lower index wins.
template <typename V, typename I = int>
void pair_kernel(OpKind k, const void* in, void* inout, std::size_t n) {
  struct P {
    V value;
    I index;
  };
  const P* a = static_cast<const P*>(in);
  P* b = static_cast<P*>(inout);
  if (k == OpKind::maxloc) {
    for (std::size_t i = 0; i < n; ++i) {
      if (a[i].value > b[i].value) {
        b[i].value = a[i].value;  // member-wise: padding bytes are not data
        b[i].index = a[i].index;
      } else if (a[i].value == b[i].value && a[i].index < b[i].index) {
        b[i].index = a[i].index;
      }
    }
  } else if (k == OpKind::minloc) {
    for (std::size_t i = 0; i < n; ++i) {
      if (a[i].value < b[i].value) {
        b[i].value = a[i].value;  // member-wise: padding bytes are not data
        b[i].index = a[i].index;
      } else if (a[i].value == b[i].value && a[i].index < b[i].index) {
        b[i].index = a[i].index;
      }
    }
  }
}

// MAXLOC/MINLOC on packed pairs: value then index with no padding between elements.
template <typename V, typename I = int>
void packed_pair_kernel(OpKind k, const void* in, void* inout, std::size_t n) {
  constexpr std::size_t kStride = sizeof(V) + sizeof(I);
  const char* a = static_cast<const char*>(in);
  char* b = static_cast<char*>(inout);
  for (std::size_t i = 0; i < n; ++i, a += kStride, b += kStride) {
    V av, bv;
    I ai, bi;
    std::memcpy(&av, a, sizeof(V));
    std::memcpy(&bv, b, sizeof(V));
    std::memcpy(&ai, a + sizeof(V), sizeof(I));
    std::memcpy(&bi, b + sizeof(V), sizeof(I));
    bool a_wins = k == OpKind::maxloc ? av > bv : av < bv;
    if (a_wins) {
      std::memcpy(b, a, kStride);
    } else if (av == bv && ai < bi) {
      std::memcpy(b + sizeof(V), &ai, sizeof(I));
    }
  }
}

void packed_pair(OpKind k, const sluice_datatype_s& base, const void* in, void* inout,
                 std::size_t n) {
  switch (base.scalar) {
    case Scalar::pair_float_int:
      return packed_pair_kernel<float>(k, in, inout, n);
    case Scalar::pair_double_int:
      return packed_pair_kernel<double>(k, in, inout, n);
    case Scalar::pair_long_int:
      return packed_pair_kernel<long>(k, in, inout, n);
    case Scalar::pair_int_int:
      return packed_pair_kernel<int>(k, in, inout, n);
    case Scalar::pair_short_int:
      return packed_pair_kernel<short>(k, in, inout, n);
    case Scalar::pair_long_double_int:
      return packed_pair_kernel<long double>(k, in, inout, n);
    case Scalar::pair_float_float:
      return packed_pair_kernel<float, float>(k, in, inout, n);
    case Scalar::pair_double_double:
      return packed_pair_kernel<double, double>(k, in, inout, n);
    default:
      return;
  }
}

// `n` consecutive values of the predefined type `base`.
void kernel(OpKind k, const sluice_datatype_s& base, const void* in, void* inout, std::size_t n) {
  switch (base.scalar) {
    case Scalar::i8:
      return typed_kernel<std::int8_t>(k, in, inout, n);
    case Scalar::u8:
      if (base.type_class == TypeClass::logical) return bool_kernel(k, in, inout, n);
      return typed_kernel<std::uint8_t>(k, in, inout, n);
    case Scalar::i16:
      return typed_kernel<std::int16_t>(k, in, inout, n);
    case Scalar::u16:
      return typed_kernel<std::uint16_t>(k, in, inout, n);
    case Scalar::i32:
      return typed_kernel<std::int32_t>(k, in, inout, n);
    case Scalar::u32:
      return typed_kernel<std::uint32_t>(k, in, inout, n);
    case Scalar::i64:
      return typed_kernel<std::int64_t>(k, in, inout, n);
    case Scalar::u64:
      return typed_kernel<std::uint64_t>(k, in, inout, n);
    case Scalar::f32:
      return typed_kernel<float>(k, in, inout, n);
    case Scalar::f64:
      return typed_kernel<double>(k, in, inout, n);
    case Scalar::f80:
      return typed_kernel<long double>(k, in, inout, n);
    case Scalar::f128:
      return typed_kernel<__float128>(k, in, inout, n);
    case Scalar::i128:
      return int128_kernel(k, in, inout, n);
    case Scalar::c32:
      return typed_kernel<std::complex<float>>(k, in, inout, n);
    case Scalar::c64:
      return typed_kernel<std::complex<double>>(k, in, inout, n);
    case Scalar::c80:
      return typed_kernel<std::complex<long double>>(k, in, inout, n);
    case Scalar::c128:
      return typed_kernel<std::complex<__float128>>(k, in, inout, n);
    case Scalar::boolean:
      return bool_kernel(k, in, inout, n);
    case Scalar::pair_float_int:
      return pair_kernel<float>(k, in, inout, n);
    case Scalar::pair_double_int:
      return pair_kernel<double>(k, in, inout, n);
    case Scalar::pair_long_int:
      return pair_kernel<long>(k, in, inout, n);
    case Scalar::pair_int_int:
      return pair_kernel<int>(k, in, inout, n);
    case Scalar::pair_short_int:
      return pair_kernel<short>(k, in, inout, n);
    case Scalar::pair_long_double_int:
      return pair_kernel<long double>(k, in, inout, n);
    case Scalar::pair_float_float:
      return pair_kernel<float, float>(k, in, inout, n);
    case Scalar::pair_double_double:
      return pair_kernel<double, double>(k, in, inout, n);
    case Scalar::none:
      return;
  }
}

// The typed kernels need naturally aligned values (GCC's vectorised loops may even use
// aligned vector loads after peeling). Derived types can place values anywhere, so
// misaligned buffers go through aligned scratch, a chunk at a time.
void aligned_kernel(OpKind k, const sluice_datatype_s& base, const void* in, void* inout,
                    std::size_t n) {
  const auto addr = reinterpret_cast<std::uintptr_t>(in) | reinterpret_cast<std::uintptr_t>(inout);
  if (addr % base.align == 0) return kernel(k, base, in, inout, n);
  constexpr std::size_t kScratch = 4096;
  alignas(64) unsigned char a[kScratch], b[kScratch];
  const std::size_t step = static_cast<std::size_t>(base.extent());
  const std::size_t per_chunk = kScratch / step;
  const char* src = static_cast<const char*>(in);
  char* dst = static_cast<char*>(inout);
  for (std::size_t done = 0; done < n;) {
    const std::size_t m = std::min(per_chunk, n - done);
    // Up to the last value's data end (true_ub), not its trailing padding.
    const std::size_t bytes = (m - 1) * step + static_cast<std::size_t>(base.true_ub);
    std::memcpy(a, src + done * step, bytes);
    std::memcpy(b, dst + done * step, bytes);
    kernel(k, base, a, b, m);
    std::memcpy(dst + done * step, b, bytes);
    done += m;
  }
}

// MPI-3.1 §5.9.2: which groups of types each predefined op is defined on.
bool allowed(OpKind k, TypeClass c) {
  switch (k) {
    case OpKind::max:
    case OpKind::min:
      return c == TypeClass::c_integer || c == TypeClass::floating || c == TypeClass::character;
    case OpKind::sum:
    case OpKind::prod:
      return c == TypeClass::c_integer || c == TypeClass::floating || c == TypeClass::complex ||
             c == TypeClass::character;
    case OpKind::land:
    case OpKind::lor:
    case OpKind::lxor:
      return c == TypeClass::c_integer || c == TypeClass::logical;
    case OpKind::band:
    case OpKind::bor:
    case OpKind::bxor:
      return c == TypeClass::c_integer || c == TypeClass::byte;
    case OpKind::maxloc:
    case OpKind::minloc:
      return c == TypeClass::pair;
    case OpKind::replace:
    case OpKind::no_op:
    case OpKind::user:
      return true;
  }
  return false;
}

void call_user(MPI_Op op, MPI_Datatype dt, const void* in, void* inout, std::size_t count) {
  if (op->user_fn_c) {  // MPI_Op_create_c: one call, an MPI_Count length
    MPI_Count len = static_cast<MPI_Count>(count);
    MPI_Datatype type = dt;
    op->user_fn_c(const_cast<void*>(in), inout, &len, &type);
    return;
  }
  // The user function takes an int length: hand it at most INT_MAX elements at a time.
  const MPI_Aint extent = dt->extent();
  std::size_t done = 0;
  while (done < count) {
    std::size_t chunk = std::min<std::size_t>(count - done, INT_MAX);
    int len = static_cast<int>(chunk);
    MPI_Datatype type = dt;
    MPI_Aint off = static_cast<MPI_Aint>(done) * extent;
    op->user_fn(const_cast<char*>(at(in, off)), at(inout, off), &len, &type);
    done += chunk;
  }
}

}  // namespace

int op_check(MPI_Op op, MPI_Datatype dt) {
  if (op == MPI_OP_NULL) return MPI_ERR_OP;
  if (dt == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  if (!op->predefined || op->kind == OpKind::replace || op->kind == OpKind::no_op) {
    return MPI_SUCCESS;
  }
  if (!dt->op_base) return MPI_ERR_OP;
  return allowed(op->kind, dt->op_base->type_class) ? MPI_SUCCESS : MPI_ERR_OP;
}

bool op_is_commutative(MPI_Op op) {
  return op->commutative;
}

void op_apply(MPI_Op op, MPI_Datatype dt, const void* in, void* inout, std::size_t count) {
  if (count == 0) return;
  switch (op->kind) {
    case OpKind::user:
      return call_user(op, dt, in, inout, count);
    case OpKind::no_op:
      return;
    case OpKind::replace: {
      // inout takes in's data, following the datatype's layout on both sides.
      if (dt_is_contiguous(dt)) {
        std::memmove(at(inout, dt->true_lb), at(in, dt->true_lb), count * dt->size);
      } else {
        std::vector<char> tmp(count * dt->size);
        dt_pack(dt, in, count, tmp.data());
        dt_unpack(dt, tmp.data(), tmp.size(), inout, count);
      }
      return;
    }
    default:
      break;
  }
  const sluice_datatype_s& base = *dt->op_base;
  const MPI_Aint base_extent = base.extent();
  const std::size_t per = dt->op_count;
  const MPI_Aint extent = dt->extent();
  if (extent == static_cast<MPI_Aint>(per) * base_extent) {
    // Values continue from one element into the next: one kernel call.
    return aligned_kernel(op->kind, base, at(in, dt->true_lb), at(inout, dt->true_lb), count * per);
  }
  for (std::size_t e = 0; e < count; ++e) {
    MPI_Aint off = static_cast<MPI_Aint>(e) * extent + dt->true_lb;
    aligned_kernel(op->kind, base, at(in, off), at(inout, off), per);
  }
}

void op_apply_packed(MPI_Op op, MPI_Datatype dt, const void* in, void* inout, std::size_t count) {
  if (count == 0) return;
  const MPI_Aint lb = dt->true_lb;
  switch (op->kind) {
    case OpKind::no_op:
      return;
    case OpKind::replace:
      std::memmove(inout, in, count * dt->size);
      return;
    case OpKind::user: {
      if (dt->contiguous) {
        // Packed bytes are the data itself; the element address is true_lb before it.
        return call_user(op, dt, at(in, -lb), at(inout, -lb), count);
      }
      // The user function expects the type's layout: unpack, apply, pack back.
      const MPI_Aint extent = dt->extent();
      const MPI_Aint span = (dt->true_ub - lb) +
                            static_cast<MPI_Aint>(count - 1) * std::max<MPI_Aint>(extent, 0) -
                            std::min<MPI_Aint>(0, static_cast<MPI_Aint>(count - 1) * extent);
      std::vector<char> xa(span), xb(span);
      // Element 0's address such that every element's data lands inside the scratch.
      const MPI_Aint origin =
          -lb - std::min<MPI_Aint>(0, static_cast<MPI_Aint>(count - 1) * extent);
      const std::size_t bytes = count * dt->size;
      dt_unpack(dt, in, bytes, xa.data() + origin, count);
      dt_unpack(dt, inout, bytes, xb.data() + origin, count);
      call_user(op, dt, xa.data() + origin, xb.data() + origin, count);
      dt_pack(dt, xb.data() + origin, count, inout);
      return;
    }
    default:
      break;
  }
  const sluice_datatype_s& base = *dt->op_base;
  const std::size_t n = count * dt->op_count;
  if (base.type_class == TypeClass::pair && !base.contiguous) {
    return packed_pair(op->kind, base, in, inout, n);
  }
  aligned_kernel(op->kind, base, in, inout, n);
}

namespace {

// Direct kernels for the common reductions (sum/prod/max/min on the arithmetic scalar
// types): the collective calls them without going through op_apply_packed's dispatch,
// which costs more than adding one double.
template <typename T>
PackedReduceFn direct_for(OpKind k) {
  return has_kernel(k) ? kernels::arithmetic_reducer<T>(kernel_op(k)) : nullptr;
}

}  // namespace

PackedReduceFn op_direct_kernel(MPI_Op op, MPI_Datatype dt) {
  if (!op->predefined || !dt->predefined || dt->op_base != dt) return nullptr;
  switch (dt->scalar) {
    case Scalar::i32:
      return direct_for<std::int32_t>(op->kind);
    case Scalar::u32:
      return direct_for<std::uint32_t>(op->kind);
    case Scalar::i64:
      return direct_for<std::int64_t>(op->kind);
    case Scalar::u64:
      return direct_for<std::uint64_t>(op->kind);
    case Scalar::f32:
      return direct_for<float>(op->kind);
    case Scalar::f64:
      return direct_for<double>(op->kind);
    default:
      return nullptr;
  }
}

void op_retain(MPI_Op op) {
  if (op && !op->predefined) op->refs.fetch_add(1, std::memory_order_relaxed);
}

void op_release(MPI_Op op) {
  if (!op || op->predefined) return;
  if (op->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete op;
}

MPI_Op op_create(MPI_User_function* fn, MPI_User_function_c* fn_c, bool commutative) {
  auto* op = new sluice_op_s;
  op->kind = OpKind::user;
  op->commutative = commutative;
  op->user_fn = fn;
  op->user_fn_c = fn_c;
  return op;
}

void packed_reduce_fn(const void* in, void* inout, std::size_t count, const void* arg) {
  auto* r = static_cast<const PackedReducer*>(arg);
  op_apply_packed(r->op, r->type, in, inout, count);
}

}  // namespace sluice::mpi
