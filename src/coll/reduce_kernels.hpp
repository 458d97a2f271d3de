// The reduction kernels: one typed loop per (operation, element type), shared by the native
// collectives (collectives.cpp) and the MPI binding's predefined ops (mpi/op.cpp), so both
// compute the same values.
//
// Signed integer sum and product wrap around (two's complement, computed in the unsigned
// type), as MPI implementations do in practice: overflow is defined, never UB, and
// INT_MAX + 1 reduces to INT_MIN through either API. Floating types use the IEEE
// operations; max is `x > y ? x : y` and min `x < y ? x : y` for every type (with a NaN
// the second operand wins).
//
// Header-only templates: each caller instantiates what it needs; the loops vectorise.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

// Release builds use -O2, whose "very cheap" vectoriser cost model refuses any loop that
// needs an epilogue; the kernels here are worth the dynamic model.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("vect-cost-model=dynamic")
#endif

namespace sluice::coll::kernels {

enum class Op : std::uint8_t { max, min, sum, prod, land, lor, lxor, band, bor, bxor };

template <class T>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<std::complex<T>> = true;

// x op y. For integers, arithmetic runs in an unsigned type at least as wide as unsigned
// int (narrow types would otherwise promote to signed int and overflow there).
template <class T, Op K>
inline T combine(T x, T y) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
    if constexpr (K == Op::max) return x > y ? x : y;
    if constexpr (K == Op::min) return x < y ? x : y;
    if constexpr (K == Op::sum)
      return static_cast<T>(static_cast<W>(static_cast<U>(x)) + static_cast<W>(static_cast<U>(y)));
    if constexpr (K == Op::prod)
      return static_cast<T>(static_cast<W>(static_cast<U>(x)) * static_cast<W>(static_cast<U>(y)));
    if constexpr (K == Op::land) return T((x != 0) & (y != 0));
    if constexpr (K == Op::lor) return T((x != 0) | (y != 0));
    if constexpr (K == Op::lxor) return T((x != 0) ^ (y != 0));
    if constexpr (K == Op::band) return T(x & y);
    if constexpr (K == Op::bor) return T(x | y);
    if constexpr (K == Op::bxor) return T(x ^ y);
  } else if constexpr (is_complex_v<T>) {
    static_assert(K == Op::sum || K == Op::prod, "complex values have sum and prod only");
    if constexpr (K == Op::sum) return x + y;
    if constexpr (K == Op::prod) return x * y;
  } else {
    static_assert(K == Op::max || K == Op::min || K == Op::sum || K == Op::prod,
                  "floating values have max, min, sum and prod only");
    if constexpr (K == Op::max) return x > y ? x : y;
    if constexpr (K == Op::min) return x < y ? x : y;
    if constexpr (K == Op::sum) return x + y;
    if constexpr (K == Op::prod) return x * y;
  }
}

// Whether combine<T, K> exists.
template <class T, Op K>
inline constexpr bool defined_v = std::is_integral_v<T> ||
                                  (is_complex_v<T> ? (K == Op::sum || K == Op::prod)
                                                   : (K == Op::max || K == Op::min ||
                                                      K == Op::sum || K == Op::prod));

// inout[i] = in[i] op inout[i] for i < n, on naturally aligned arrays of T. `in` holds the
// lower rank's contribution.
template <class T, Op K>
inline void apply(const void* in, void* inout, std::size_t n) {
  const T* __restrict a = static_cast<const T*>(in);
  T* __restrict b = static_cast<T*>(inout);
  for (std::size_t i = 0; i < n; ++i) b[i] = combine<T, K>(a[i], b[i]);
}

// The same with the operation chosen at run time; operations not defined for T do nothing
// (the caller validated the pair).
template <class T>
inline void apply(Op k, const void* in, void* inout, std::size_t n) {
  switch (k) {
#define SLUICE_REDUCE_CASE(K)                                 \
  case K:                                                     \
    if constexpr (defined_v<T, K>) apply<T, K>(in, inout, n); \
    return;
    SLUICE_REDUCE_CASE(Op::max)
    SLUICE_REDUCE_CASE(Op::min)
    SLUICE_REDUCE_CASE(Op::sum)
    SLUICE_REDUCE_CASE(Op::prod)
    SLUICE_REDUCE_CASE(Op::land)
    SLUICE_REDUCE_CASE(Op::lor)
    SLUICE_REDUCE_CASE(Op::lxor)
    SLUICE_REDUCE_CASE(Op::band)
    SLUICE_REDUCE_CASE(Op::bor)
    SLUICE_REDUCE_CASE(Op::bxor)
#undef SLUICE_REDUCE_CASE
  }
}

// A collective's reducer (coll::Reducer::fn signature; the last argument is unused) for
// packed buffers of any alignment: the typed loop when both are aligned, else values
// loaded with memcpy.
template <class T, Op K>
void reduce_packed(const void* in, void* inout, std::size_t n, const void*) {
  const auto addr = reinterpret_cast<std::uintptr_t>(in) | reinterpret_cast<std::uintptr_t>(inout);
  if (addr % alignof(T) == 0) [[likely]] {
    apply<T, K>(in, inout, n);
    return;
  }
  const char* a = static_cast<const char*>(in);
  char* b = static_cast<char*>(inout);
  for (std::size_t i = 0; i < n; ++i, a += sizeof(T), b += sizeof(T)) {
    T x, y;
    std::memcpy(&x, a, sizeof(T));
    std::memcpy(&y, b, sizeof(T));
    y = combine<T, K>(x, y);
    std::memcpy(b, &y, sizeof(T));
  }
}

using ReduceFn = void (*)(const void* in, void* inout, std::size_t n, const void*);

// reduce_packed<T, k> for the four arithmetic operations; nullptr for the others.
template <class T>
ReduceFn arithmetic_reducer(Op k) {
  switch (k) {
    case Op::sum:
      return reduce_packed<T, Op::sum>;
    case Op::prod:
      return reduce_packed<T, Op::prod>;
    case Op::max:
      return reduce_packed<T, Op::max>;
    case Op::min:
      return reduce_packed<T, Op::min>;
    default:
      return nullptr;
  }
}

}  // namespace sluice::coll::kernels

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
