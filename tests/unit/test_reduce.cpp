// One reduction-kernel library for the native collectives and MPI: both compute the same
// bits, and signed integer overflow wraps (two's complement) instead of being undefined
// behaviour — run under the UBSan build (-DSLUICE_SANITIZE=ON) this reports nothing.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "coll/reduce_kernels.hpp"
#include "coll/reducers.hpp"
#include "mpi/datatype.hpp"
#include "mpi/op.hpp"

namespace {

using sluice::Element;
using sluice::ReduceOp;

// inout = in op inout through the native collectives' reducer.
template <class T>
void native(Element e, ReduceOp op, const std::vector<T>& in, std::vector<T>& inout) {
  sluice::coll::Reducer r;
  ASSERT_TRUE(sluice::coll::make_reducer(e, op, r));
  ASSERT_EQ(r.elem_size, sizeof(T));
  r.fn(in.data(), inout.data(), in.size(), r.arg);
}

// The same through MPI's predefined op (the general dispatch and the collectives' direct
// kernel).
template <class T>
void mpi(MPI_Op op, MPI_Datatype dt, const std::vector<T>& in, std::vector<T>& inout) {
  ASSERT_EQ(sluice::mpi::op_check(op, dt), MPI_SUCCESS);
  sluice::mpi::op_apply(op, dt, in.data(), inout.data(), in.size());
}
template <class T>
void mpi_direct(MPI_Op op, MPI_Datatype dt, const std::vector<T>& in, std::vector<T>& inout) {
  auto fn = sluice::mpi::op_direct_kernel(op, dt);
  ASSERT_NE(fn, nullptr);
  fn(in.data(), inout.data(), in.size(), nullptr);
}

TEST(ReduceWrap, IntMaxPlusOneIsIntMinThroughBothApis) {
  const std::vector<std::int32_t> in{INT_MAX, INT_MIN, -1, INT_MAX};
  const std::vector<std::int32_t> start{1, -1, INT_MIN, INT_MAX};
  const std::vector<std::int32_t> want{INT_MIN, INT_MAX, INT_MAX, -2};
  std::vector<std::int32_t> a = start, b = start, c = start;
  native(Element::i32, ReduceOp::sum, in, a);
  mpi(MPI_SUM, MPI_INT, in, b);
  mpi_direct(MPI_SUM, MPI_INT, in, c);
  EXPECT_EQ(a, want);
  EXPECT_EQ(b, want);
  EXPECT_EQ(c, want);
}

TEST(ReduceWrap, Int64SumAndProductWrap) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  const std::vector<std::int64_t> in{kMax, kMax, kMin};
  for (auto [op, mop] : {std::pair{ReduceOp::sum, MPI_SUM}, std::pair{ReduceOp::prod, MPI_PROD}}) {
    std::vector<std::int64_t> a{1, 2, -1}, b = a, c = a;
    native(Element::i64, op, in, a);
    mpi(mop, MPI_INT64_T, in, b);
    mpi_direct(mop, MPI_INT64_T, in, c);
    const std::vector<std::int64_t> want = op == ReduceOp::sum
                                               ? std::vector<std::int64_t>{kMin, kMin + 1, kMax}
                                               : std::vector<std::int64_t>{kMax, -2, kMin};
    EXPECT_EQ(a, want);
    EXPECT_EQ(b, want);
    EXPECT_EQ(c, want);
  }
}

TEST(ReduceWrap, NarrowSignedTypesWrapInMpi) {
  // MPI's types below int: the kernels compute in unsigned int, never in signed int.
  std::vector<std::int8_t> a8{127, -128}, b8{1, -1};
  mpi(MPI_SUM, MPI_INT8_T, a8, b8);
  EXPECT_EQ(b8, (std::vector<std::int8_t>{-128, 127}));
  std::vector<std::int16_t> a16{SHRT_MAX, SHRT_MIN}, b16{SHRT_MAX, 2};
  mpi(MPI_PROD, MPI_SHORT, a16, b16);
  EXPECT_EQ(b16, (std::vector<std::int16_t>{1, 0}));
}

// Every (type, op) the native API offers gives the same bits as MPI's op on random data,
// extremes included.
template <class T>
void same_bits(Element e, MPI_Datatype dt) {
  std::mt19937_64 rng(42);
  std::vector<T> in(257), inout(257);
  for (std::size_t i = 0; i < in.size(); ++i) {
    if constexpr (std::is_integral_v<T>) {
      in[i] = static_cast<T>(rng());
      inout[i] = static_cast<T>(rng());
    } else {
      in[i] = static_cast<T>(std::uniform_real_distribution<double>(-1e6, 1e6)(rng));
      inout[i] = static_cast<T>(std::uniform_real_distribution<double>(-1e6, 1e6)(rng));
    }
  }
  in[0] = std::numeric_limits<T>::max();
  inout[0] = std::numeric_limits<T>::max();
  in[1] = std::numeric_limits<T>::lowest();
  inout[1] = std::numeric_limits<T>::lowest();
  const std::pair<ReduceOp, MPI_Op> ops[] = {{ReduceOp::sum, MPI_SUM},
                                             {ReduceOp::prod, MPI_PROD},
                                             {ReduceOp::min, MPI_MIN},
                                             {ReduceOp::max, MPI_MAX}};
  for (auto [op, mop] : ops) {
    std::vector<T> a = inout, b = inout;
    native(e, op, in, a);
    mpi(mop, dt, in, b);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(T)), 0)
        << "element type " << static_cast<int>(e) << " op " << static_cast<int>(op);
  }
}

TEST(ReduceWrap, NativeAndMpiAgreeOnEveryPair) {
  same_bits<std::int32_t>(Element::i32, MPI_INT32_T);
  same_bits<std::int64_t>(Element::i64, MPI_INT64_T);
  same_bits<std::uint32_t>(Element::u32, MPI_UINT32_T);
  same_bits<std::uint64_t>(Element::u64, MPI_UINT64_T);
  same_bits<float>(Element::f32, MPI_FLOAT);
  same_bits<double>(Element::f64, MPI_DOUBLE);
}

TEST(ReduceWrap, MisalignedBuffersGiveTheSameValues) {
  // The collectives' reducer on packed buffers at any offset (memcpy path).
  alignas(8) unsigned char in[1 + 2 * sizeof(std::int32_t)], inout[1 + 2 * sizeof(std::int32_t)];
  const std::int32_t a[2] = {INT_MAX, 5}, b[2] = {1, 6};
  std::memcpy(in + 1, a, sizeof a);
  std::memcpy(inout + 1, b, sizeof b);
  sluice::coll::Reducer r;
  ASSERT_TRUE(sluice::coll::make_reducer(Element::i32, ReduceOp::sum, r));
  r.fn(in + 1, inout + 1, 2, nullptr);
  std::int32_t got[2];
  std::memcpy(got, inout + 1, sizeof got);
  EXPECT_EQ(got[0], INT_MIN);
  EXPECT_EQ(got[1], 11);
}

}  // namespace
