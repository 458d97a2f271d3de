// Datatype engine and reduction kernels, checked against a reference model that keeps
// each type's full typemap (offset and size of every basic element) and copies byte by byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "mpi/datatype.hpp"
#include "mpi/op.hpp"

using namespace sluice::mpi;

namespace {

// ---- reference model ------------------------------------------------------------------------

struct Entry {
  MPI_Aint offset;
  std::size_t size;
};

struct Ref {
  std::vector<Entry> map;  // typemap in order
  MPI_Aint lb = 0, ub = 0;
  std::size_t align = 1;
  bool explicit_bounds = false;
  MPI_Aint extent() const { return ub - lb; }
  std::size_t size() const {
    std::size_t s = 0;
    for (const Entry& e : map) s += e.size;
    return s;
  }
  MPI_Aint true_lb() const {
    MPI_Aint v = map.empty() ? 0 : map[0].offset;
    for (const Entry& e : map) v = std::min(v, e.offset);
    return v;
  }
  MPI_Aint true_ub() const {
    MPI_Aint v = map.empty() ? 0 : map[0].offset + MPI_Aint(map[0].size);
    for (const Entry& e : map) v = std::max(v, e.offset + MPI_Aint(e.size));
    return v;
  }
};

Ref ref_basic(MPI_Datatype t) {
  Ref r;
  // Predefined types: one entry per basic element of the C type (pairs have two).
  if (t == MPI_DOUBLE_INT) {
    r.map = {{0, 8}, {8, 4}};
  } else if (t == MPI_SHORT_INT) {
    r.map = {{0, 2}, {4, 4}};
  } else if (t == MPI_2INT) {
    r.map = {{0, 4}, {4, 4}};
  } else {
    r.map = {{0, dt_size(t)}};
  }
  r.lb = 0;
  r.ub = dt_extent(t);
  r.align = t == MPI_DOUBLE_INT ? 8 : t == MPI_SHORT_INT || t == MPI_2INT ? 4 : dt_size(t);
  return r;
}

struct Block {
  MPI_Aint disp;
  std::size_t count;
  const Ref* type;
};

Ref ref_blocks(const std::vector<Block>& blocks) {
  Ref r;
  bool any = false;
  for (const Block& b : blocks) {
    r.align = std::max(r.align, b.type->align);
    r.explicit_bounds = r.explicit_bounds || b.type->explicit_bounds;
    for (std::size_t j = 0; j < b.count; ++j) {
      MPI_Aint base = b.disp + MPI_Aint(j) * b.type->extent();
      for (const Entry& e : b.type->map) r.map.push_back({base + e.offset, e.size});
      MPI_Aint l = base + b.type->lb, u = base + b.type->ub;
      r.lb = any ? std::min(r.lb, l) : l;
      r.ub = any ? std::max(r.ub, u) : u;
      any = true;
    }
  }
  return r;
}

Ref ref_struct(const std::vector<Block>& blocks) {
  Ref r = ref_blocks(blocks);
  if (!r.explicit_bounds) {
    MPI_Aint a = MPI_Aint(r.align);
    while (r.extent() % a != 0) ++r.ub;
  }
  return r;
}

Ref ref_resized(const Ref& old, MPI_Aint lb, MPI_Aint extent) {
  Ref r = old;
  r.lb = lb;
  r.ub = lb + extent;
  r.explicit_bounds = true;
  return r;
}

// A derived type under test with its reference model; owns one reference to the type.
struct Typed {
  MPI_Datatype type;
  Ref ref;
  Typed(MPI_Datatype t, Ref r) : type(t), ref(std::move(r)) {}
  Typed(const Typed&) = delete;
  Typed& operator=(const Typed&) = delete;
  ~Typed() { dt_release(type); }
};
using TypedPtr = std::shared_ptr<Typed>;

TypedPtr basic(MPI_Datatype t) {
  return std::make_shared<Typed>(t, ref_basic(t));
}

// A buffer large enough for `count` elements of `r`, addressed so that offsets (which may
// be negative) stay inside it. Filled with a byte pattern.
struct Buffer {
  std::vector<unsigned char> bytes;
  MPI_Aint origin = 0;  // index of the element-0 address
  Buffer(const Ref& r, std::size_t count, unsigned seed) {
    MPI_Aint lo = 0, hi = 0;
    for (std::size_t e = 0; e < std::max<std::size_t>(count, 1); ++e) {
      MPI_Aint base = MPI_Aint(e) * r.extent();
      for (const Entry& x : r.map) {
        lo = std::min(lo, base + x.offset);
        hi = std::max(hi, base + x.offset + MPI_Aint(x.size));
      }
    }
    origin = -lo + 16;
    bytes.resize(std::size_t(hi - lo) + 32);
    std::mt19937 rng(seed);
    for (auto& b : bytes) b = static_cast<unsigned char>(rng());
  }
  unsigned char* base() { return bytes.data() + origin; }
};

std::vector<unsigned char> ref_pack(const Ref& r, const unsigned char* buf, std::size_t count) {
  std::vector<unsigned char> out;
  for (std::size_t e = 0; e < count; ++e) {
    for (const Entry& x : r.map) {
      const unsigned char* p = buf + MPI_Aint(e) * r.extent() + x.offset;
      for (std::size_t i = 0; i < x.size; ++i) out.push_back(p[i]);
    }
  }
  return out;
}

void ref_unpack(const Ref& r, const unsigned char* in, std::size_t bytes, unsigned char* buf,
                std::size_t count) {
  std::size_t k = 0;
  for (std::size_t e = 0; e < count; ++e) {
    for (const Entry& x : r.map) {
      unsigned char* p = buf + MPI_Aint(e) * r.extent() + x.offset;
      for (std::size_t i = 0; i < x.size; ++i, ++k) {
        if (k == bytes) return;
        p[i] = in[k];
      }
    }
  }
}

std::size_t ref_elements(const Ref& r, std::size_t bytes) {
  std::size_t n = 0;
  if (r.size() == 0) return 0;
  for (;;) {
    for (const Entry& x : r.map) {
      if (bytes == 0) return n;
      if (bytes < x.size) return SIZE_MAX;
      bytes -= x.size;
      ++n;
    }
  }
}

// Checks size, bounds, pack, unpack (whole and partial) and element counts against the model.
void check_type(const Typed& t, std::size_t count, const std::string& what) {
  SCOPED_TRACE(what);
  const Ref& r = t.ref;
  ASSERT_EQ(dt_size(t.type), r.size());
  ASSERT_EQ(t.type->lb, r.lb);
  ASSERT_EQ(dt_extent(t.type), r.extent());
  if (!r.map.empty() && r.size() > 0) {
    ASSERT_EQ(dt_true_lb(t.type), r.true_lb());
    ASSERT_EQ(dt_true_extent(t.type), r.true_ub() - r.true_lb());
  }
  ASSERT_EQ(dt_basic_count(t.type), r.map.size());

  Buffer src(r, count, 1);
  std::vector<unsigned char> packed(count * r.size() + 1, 0xEE);
  std::size_t n = dt_pack(t.type, src.base(), count, packed.data());
  ASSERT_EQ(n, count * r.size());
  packed.resize(n);
  ASSERT_EQ(packed, ref_pack(r, src.base(), count));

  // Unpack into a patterned buffer: bytes outside the typemap must survive.
  Buffer got(r, count, 2), want(r, count, 2);
  ASSERT_EQ(dt_unpack(t.type, packed.data(), n, got.base(), count), n);
  ref_unpack(r, packed.data(), n, want.base(), count);
  ASSERT_EQ(got.bytes, want.bytes);

  // Partial unpack stops in the middle of an element.
  if (n > 3) {
    std::size_t part = n / 2 + 1;
    Buffer got2(r, count, 3), want2(r, count, 3);
    ASSERT_EQ(dt_unpack(t.type, packed.data(), part, got2.base(), count), part);
    ref_unpack(r, packed.data(), part, want2.base(), count);
    ASSERT_EQ(got2.bytes, want2.bytes);
  }

  // Fragments of the packed stream at arbitrary boundaries reassemble the same bytes.
  {
    std::mt19937 rng(unsigned(n * 7 + count));
    std::vector<unsigned char> pieces(n, 0);
    Buffer frag(r, count, 4), frag_want(r, count, 4);
    std::size_t first = 0;
    while (first < n) {
      std::size_t len = std::min<std::size_t>(n - first, 1 + rng() % 13);
      dt_pack_range(t.type, src.base(), first, len, pieces.data() + first);
      dt_unpack_range(t.type, packed.data() + first, first, len, frag.base());
      first += len;
    }
    ASSERT_EQ(pieces, packed);
    ref_unpack(r, packed.data(), n, frag_want.base(), count);
    ASSERT_EQ(frag.bytes, frag_want.bytes);
  }

  for (std::size_t bytes : {std::size_t(0), std::size_t(1), n / 3, n / 2, n ? n - 1 : 0, n}) {
    ASSERT_EQ(dt_elements(t.type, bytes), ref_elements(r, bytes)) << "bytes=" << bytes;
  }
}

// ---- random nested types ------------------------------------------------------------------

class Generator {
 public:
  explicit Generator(unsigned seed) : rng_(seed) {}

  TypedPtr make(int depth) {
    if (depth == 0 || pick(4) == 0) return leaf();
    switch (pick(10)) {
      case 0: {
        auto c = make(depth - 1);
        std::size_t n = pick(4);
        return wrap(dt_contiguous(n, c->type), ref_blocks({{0, n, &c->ref}}));
      }
      case 1:
      case 2: {
        auto c = make(depth - 1);
        std::size_t count = pick(4) + 1, bl = pick(3);
        int stride = int(pick(5)) - 1;  // includes negative and overlapping strides
        std::vector<Block> bs;
        for (std::size_t i = 0; i < count; ++i) {
          bs.push_back({MPI_Aint(i) * stride * c->ref.extent(), bl, &c->ref});
        }
        return wrap(dt_hvector(count, bl, stride * c->ref.extent(), c->type, MPI_COMBINER_VECTOR),
                    ref_blocks(bs));
      }
      case 3: {
        auto c = make(depth - 1);
        std::size_t count = pick(4) + 1, bl = pick(3) + 1;
        MPI_Aint stride = MPI_Aint(pick(40)) - 8;
        std::vector<Block> bs;
        for (std::size_t i = 0; i < count; ++i) bs.push_back({MPI_Aint(i) * stride, bl, &c->ref});
        return wrap(dt_hvector(count, bl, stride, c->type, MPI_COMBINER_HVECTOR), ref_blocks(bs));
      }
      case 4:
      case 5: {
        auto c = make(depth - 1);
        std::size_t count = pick(5);
        std::vector<std::size_t> bl(count);
        std::vector<MPI_Aint> disp(count);
        std::vector<Block> bs;
        bool bytes = pick(2);
        for (std::size_t i = 0; i < count; ++i) {
          bl[i] = pick(3);
          disp[i] = (MPI_Aint(pick(12)) - 3) * (bytes ? 1 : c->ref.extent());
          bs.push_back({disp[i], bl[i], &c->ref});
        }
        return wrap(dt_hindexed(count, bl.data(), disp.data(), c->type, MPI_COMBINER_HINDEXED),
                    ref_blocks(bs));
      }
      case 6:
      case 7: {
        std::size_t count = pick(3) + 1;
        std::vector<TypedPtr> kids;
        std::vector<std::size_t> bl(count);
        std::vector<MPI_Aint> disp(count);
        std::vector<MPI_Datatype> types(count);
        std::vector<Block> bs;
        MPI_Aint at = 0;
        for (std::size_t i = 0; i < count; ++i) {
          kids.push_back(make(depth - 1));
          bl[i] = pick(3) + 1;
          disp[i] = at + MPI_Aint(pick(8));
          at = disp[i] + MPI_Aint(bl[i]) * kids[i]->ref.extent();
          types[i] = kids[i]->type;
          bs.push_back({disp[i], bl[i], &kids[i]->ref});
        }
        return wrap(dt_struct(count, bl.data(), disp.data(), types.data()), ref_struct(bs));
      }
      case 8: {
        auto c = make(depth - 1);
        MPI_Aint lb = MPI_Aint(pick(8)) - 4;
        MPI_Aint ext = c->ref.extent() + MPI_Aint(pick(16));
        return wrap(dt_resized(c->type, lb, ext), ref_resized(c->ref, lb, ext));
      }
      default: {
        auto c = make(depth - 1);
        return wrap(dt_dup(c->type), c->ref);
      }
    }
  }

 private:
  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_);
  }

  TypedPtr leaf() {
    static const MPI_Datatype leaves[] = {MPI_CHAR,      MPI_SHORT,       MPI_INT,
                                          MPI_DOUBLE,    MPI_LONG_DOUBLE, MPI_DOUBLE_INT,
                                          MPI_SHORT_INT, MPI_2INT};
    return basic(leaves[pick(std::size(leaves))]);
  }

  static TypedPtr wrap(MPI_Datatype t, Ref r) { return std::make_shared<Typed>(t, std::move(r)); }

  std::mt19937 rng_;
};

// ---- constructors
// ---------------------------------------------------------------------------------

TEST(Predefined, SizesAndExtentsFollowC) {
  EXPECT_EQ(dt_size(MPI_INT), sizeof(int));
  EXPECT_EQ(dt_size(MPI_LONG_DOUBLE), 16u);
  EXPECT_EQ(dt_size(MPI_C_BOOL), 1u);
  EXPECT_EQ(dt_size(MPI_C_LONG_DOUBLE_COMPLEX), 32u);
  EXPECT_EQ(dt_size(MPI_AINT), sizeof(MPI_Aint));
  EXPECT_EQ(dt_size(MPI_COUNT), 8u);
  EXPECT_EQ(dt_size(MPI_WCHAR), sizeof(wchar_t));
  EXPECT_EQ(dt_size(MPI_DOUBLE_INT), 12u);
  EXPECT_EQ(dt_extent(MPI_DOUBLE_INT), 16);
  EXPECT_EQ(dt_size(MPI_SHORT_INT), 6u);
  EXPECT_EQ(dt_extent(MPI_SHORT_INT), 8);
  EXPECT_EQ(dt_size(MPI_LONG_DOUBLE_INT), 20u);
  EXPECT_EQ(dt_extent(MPI_LONG_DOUBLE_INT), 32);
  EXPECT_EQ(dt_size(MPI_2INT), 8u);
  EXPECT_TRUE(dt_is_contiguous(MPI_2INT));
  EXPECT_FALSE(dt_is_contiguous(MPI_DOUBLE_INT));
  EXPECT_TRUE(dt_is_contiguous(MPI_DOUBLE));
  EXPECT_EQ(dt_check(MPI_INT), MPI_SUCCESS);
  EXPECT_EQ(dt_check(MPI_DATATYPE_NULL), MPI_ERR_TYPE);
  EXPECT_EQ(dt_elements(MPI_DOUBLE_INT, 24), 4u);
  EXPECT_EQ(dt_elements(MPI_DOUBLE_INT, 20), 3u);
  EXPECT_EQ(dt_elements(MPI_DOUBLE_INT, 18), SIZE_MAX);
  EXPECT_EQ(dt_elements(MPI_INT, 6), SIZE_MAX);
}

TEST(Constructors, VectorOfContiguousBlocksMergesIntoOneRun) {
  // A vector whose stride equals its block length is one block of memory.
  MPI_Datatype v = dt_hvector(1000, 1, 4, MPI_INT, MPI_COMBINER_VECTOR);
  EXPECT_EQ(v->runs.size(), 1u);
  EXPECT_EQ(v->runs[0].length, 4000u);
  EXPECT_TRUE(dt_is_contiguous(v));
  EXPECT_EQ(dt_check(v), MPI_ERR_TYPE);  // not committed yet
  v->committed = true;
  EXPECT_EQ(dt_check(v), MPI_SUCCESS);
  dt_release(v);
}

TEST(Constructors, ColumnIsOneStridedRun) {
  // Column of a 100x50 double matrix.
  MPI_Datatype col = dt_hvector(100, 1, 50 * 8, MPI_DOUBLE, MPI_COMBINER_VECTOR);
  ASSERT_EQ(col->runs.size(), 1u);
  EXPECT_EQ(col->runs[0].count, 100u);
  EXPECT_EQ(col->runs[0].stride, 400);
  EXPECT_EQ(dt_size(col), 800u);
  EXPECT_EQ(dt_extent(col), 99 * 400 + 8);
  EXPECT_FALSE(dt_is_contiguous(col));
  std::vector<double> m(100 * 50);
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = double(i);
  std::vector<double> out(100);
  EXPECT_EQ(dt_pack(col, m.data() + 7, 1, out.data()), 800u);
  for (int r = 0; r < 100; ++r) EXPECT_EQ(out[r], double(r * 50 + 7));
  dt_release(col);
}

TEST(Constructors, ContiguousOfStructKeepsRepetitionInsteadOfExpanding) {
  MPI_Datatype c = dt_contiguous(1'000'000, MPI_SHORT_INT);
  EXPECT_LE(c->runs.size(), 2u);
  EXPECT_EQ(c->reps, 1'000'000u);
  EXPECT_EQ(dt_size(c), 6'000'000u);
  EXPECT_EQ(dt_extent(c), 8'000'000);
  EXPECT_EQ(dt_basic_count(c), 2'000'000u);
  EXPECT_EQ(dt_elements(c, 6'000'000 + 6), 2'000'002u);
  dt_release(c);
}

TEST(Constructors, StructPadsExtentLikeTheCCompiler) {
  struct S {
    double d;
    char c;
  };
  std::size_t bl[] = {1, 1};
  MPI_Aint disp[] = {offsetof(S, d), offsetof(S, c)};
  MPI_Datatype types[] = {MPI_DOUBLE, MPI_CHAR};
  MPI_Datatype s = dt_struct(2, bl, disp, types);
  EXPECT_EQ(dt_size(s), 9u);
  EXPECT_EQ(dt_extent(s), MPI_Aint(sizeof(S)));
  EXPECT_EQ(dt_true_extent(s), 9);
  // A resized member suppresses padding (explicit bounds win).
  MPI_Datatype r = dt_resized(MPI_CHAR, 0, 3);
  MPI_Datatype types2[] = {MPI_DOUBLE, r};
  MPI_Datatype s2 = dt_struct(2, bl, disp, types2);
  EXPECT_EQ(dt_extent(s2), 11);
  dt_release(s);
  dt_release(s2);
  dt_release(r);
}

TEST(Constructors, ResizedChangesBoundsNotData) {
  MPI_Datatype r = dt_resized(MPI_INT, -4, 16);
  EXPECT_EQ(r->lb, -4);
  EXPECT_EQ(dt_extent(r), 16);
  EXPECT_EQ(dt_true_lb(r), 0);
  EXPECT_EQ(dt_true_extent(r), 4);
  EXPECT_EQ(dt_size(r), 4u);
  EXPECT_FALSE(dt_is_contiguous(r));
  int data[12];
  for (int i = 0; i < 12; ++i) data[i] = i;
  int out[3];
  dt_pack(r, data, 3, out);
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 4);
  EXPECT_EQ(out[2], 8);
  dt_release(r);
}

TEST(Constructors, SubarrayCAndFortranOrder) {
  // 4x5 int array, 2x3 subarray starting at (1,2).
  MPI_Count sizes[] = {4, 5}, subs[] = {2, 3}, starts[] = {1, 2};
  MPI_Datatype c = dt_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT);
  EXPECT_EQ(dt_size(c), 24u);
  EXPECT_EQ(c->lb, 0);
  EXPECT_EQ(dt_extent(c), 80);
  EXPECT_EQ(dt_true_lb(c), (1 * 5 + 2) * 4);
  EXPECT_EQ(dt_true_extent(c), ((2 * 5 + 4) - (1 * 5 + 2) + 1) * 4);
  int a[20];
  for (int i = 0; i < 20; ++i) a[i] = i;
  int out[6];
  dt_pack(c, a, 1, out);
  const int want_c[] = {7, 8, 9, 12, 13, 14};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], want_c[i]);
  // Fortran order: dimension 0 is fastest. sizes {4,5}: element (i,j) at i + 4j.
  MPI_Datatype f = dt_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT);
  dt_pack(f, a, 1, out);
  const int want_f[] = {1 + 8, 2 + 8, 1 + 12, 2 + 12, 1 + 16, 2 + 16};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], want_f[i]);
  // Two subarrays back to back step by the full array.
  int two[40];
  for (int i = 0; i < 40; ++i) two[i] = i;
  int out2[12];
  dt_pack(c, two, 2, out2);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out2[6 + i], want_c[i] + 20);
  dt_release(c);
  dt_release(f);
}

TEST(Constructors, ThreeDimensionalSubarrayMatchesReference) {
  MPI_Count sizes[] = {6, 7, 8}, subs[] = {3, 4, 5}, starts[] = {2, 1, 3};
  for (int order : {MPI_ORDER_C, MPI_ORDER_FORTRAN}) {
    MPI_Datatype t = dt_subarray(3, sizes, subs, starts, order, MPI_DOUBLE);
    std::vector<double> a(6 * 7 * 8);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = double(i);
    std::vector<double> out(3 * 4 * 5);
    dt_pack(t, a.data(), 1, out.data());
    std::size_t k = 0;
    // Iterate in the order's slowest-to-fastest dimension.
    for (int x = 0; x < 3; ++x)
      for (int y = 0; y < 4; ++y)
        for (int z = 0; z < 5; ++z) {
          int i0, i1, i2;
          std::size_t idx;
          if (order == MPI_ORDER_C) {
            i0 = starts[0] + x, i1 = starts[1] + y, i2 = starts[2] + z;
            idx = (std::size_t(i0) * 7 + i1) * 8 + i2;
            ASSERT_EQ(out[k++], a[idx]);
          }
        }
    if (order == MPI_ORDER_FORTRAN) {
      for (int z = 0; z < 5; ++z)
        for (int y = 0; y < 4; ++y)
          for (int x = 0; x < 3; ++x) {
            std::size_t idx = std::size_t(starts[0] + x) +
                              6 * (std::size_t(starts[1] + y) + 7 * std::size_t(starts[2] + z));
            ASSERT_EQ(out[k++], a[idx]);
          }
    }
    EXPECT_EQ(dt_extent(t), 6 * 7 * 8 * 8);
    dt_release(t);
  }
}

TEST(Constructors, IndexedBlockAndEmptyTypes) {
  std::size_t bl[] = {2, 2, 2};
  MPI_Aint disp[] = {0, 12, 4};  // in bytes; out of order on purpose
  MPI_Datatype t = dt_hindexed(3, bl, disp, MPI_SHORT, MPI_COMBINER_HINDEXED_BLOCK);
  EXPECT_EQ(dt_size(t), 12u);
  EXPECT_EQ(t->lb, 0);
  EXPECT_EQ(dt_extent(t), 16);
  short in[8] = {0, 1, 2, 3, 4, 5, 6, 7}, out[6];
  dt_pack(t, in, 1, out);
  const short want[] = {0, 1, 6, 7, 2, 3};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], want[i]);
  dt_release(t);

  MPI_Datatype empty = dt_contiguous(0, MPI_INT);
  EXPECT_EQ(dt_size(empty), 0u);
  EXPECT_EQ(dt_extent(empty), 0);
  EXPECT_EQ(dt_pack(empty, nullptr, 10, nullptr), 0u);
  EXPECT_EQ(dt_elements(empty, 0), 0u);
  dt_release(empty);
}

TEST(Constructors, AbsoluteAddressesFromBottom) {
  // hindexed with absolute addresses, used with a null (MPI_BOTTOM) buffer.
  int a = 11;
  double b = 2.5;
  std::size_t bl[] = {1, 1};
  MPI_Aint disp[] = {reinterpret_cast<MPI_Aint>(&a), reinterpret_cast<MPI_Aint>(&b)};
  MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE};
  MPI_Datatype s = dt_struct(2, bl, disp, types);
  unsigned char packed[12];
  ASSERT_EQ(dt_pack(s, MPI_BOTTOM, 1, packed), 12u);
  int a2;
  double b2;
  std::memcpy(&a2, packed, 4);
  std::memcpy(&b2, packed + 4, 8);
  EXPECT_EQ(a2, 11);
  EXPECT_EQ(b2, 2.5);
  a = 0, b = 0;
  dt_unpack(s, packed, 12, MPI_BOTTOM, 1);
  EXPECT_EQ(a, 11);
  EXPECT_EQ(b, 2.5);
  dt_release(s);
}

TEST(Constructors, FreedChildStaysValidInsideParent) {
  MPI_Datatype child = dt_hvector(3, 1, 8, MPI_INT, MPI_COMBINER_VECTOR);
  MPI_Datatype parent = dt_contiguous(2, child);
  dt_release(child);  // MPI_Type_free on the child
  EXPECT_EQ(dt_size(parent), 24u);
  int in[12], out[6];
  for (int i = 0; i < 12; ++i) in[i] = i;
  dt_pack(parent, in, 1, out);
  // child extent = 2*8+4 = 20 bytes = 5 ints: elements at 0,2,4 then 5,7,9.
  const int want[] = {0, 2, 4, 5, 7, 9};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], want[i]);
  // A retained type survives its handle's release.
  dt_retain(parent);
  dt_release(parent);
  EXPECT_EQ(dt_size(parent), 24u);
  dt_release(parent);
}

TEST(Constructors, DupKeepsLayoutAndCommitState) {
  MPI_Datatype v = dt_hvector(4, 2, 24, MPI_FLOAT, MPI_COMBINER_HVECTOR);
  v->committed = true;
  MPI_Datatype d = dt_dup(v);
  EXPECT_TRUE(d->committed);
  EXPECT_EQ(dt_size(d), dt_size(v));
  EXPECT_EQ(dt_extent(d), dt_extent(v));
  MPI_Datatype dp = dt_dup(MPI_INT);
  EXPECT_FALSE(dp->predefined);
  EXPECT_TRUE(dt_is_contiguous(dp));
  EXPECT_EQ(op_check(MPI_SUM, dp), MPI_SUCCESS);
  dt_release(d);
  dt_release(v);
  dt_release(dp);
}

TEST(RandomTypes, PackUnpackMatchReferenceModel) {
  for (unsigned seed = 0; seed < 3000; ++seed) {
    Generator g(seed);
    TypedPtr t = g.make(3);
    for (std::size_t count : {1, 3}) {
      check_type(*t, count, "seed " + std::to_string(seed) + " count " + std::to_string(count));
      if (HasFatalFailure()) return;
    }
  }
}

TEST(RandomTypes, BasicTypesAndSimpleBuildsMatchReference) {
  auto i = basic(MPI_INT);
  check_type(*i, 5, "int");
  auto di = basic(MPI_DOUBLE_INT);
  check_type(*di, 4, "double_int");
  auto si = basic(MPI_SHORT_INT);
  check_type(*si, 4, "short_int");
}

// ---- reduction operators
// -------------------------------------------------------------------------

// The op groups of MPI-3.1 §5.9.2, written out independently of op.cpp, plus `character`:
// MPI_CHAR, which Sluice (like Open MPI and MPICH) lets MAX/MIN/SUM/PROD reduce.
enum class Group { integer, floating, complex, logical, byte, pair, character, none };

struct NamedType {
  MPI_Datatype t;
  Group g;
};

const std::vector<NamedType>& all_types() {
  static const std::vector<NamedType> v = {
      {MPI_CHAR, Group::character},
      {MPI_WCHAR, Group::none},
      {MPI_PACKED, Group::none},
      {MPI_BYTE, Group::byte},
      {MPI_SIGNED_CHAR, Group::integer},
      {MPI_UNSIGNED_CHAR, Group::integer},
      {MPI_SHORT, Group::integer},
      {MPI_UNSIGNED_SHORT, Group::integer},
      {MPI_INT, Group::integer},
      {MPI_UNSIGNED, Group::integer},
      {MPI_LONG, Group::integer},
      {MPI_UNSIGNED_LONG, Group::integer},
      {MPI_LONG_LONG, Group::integer},
      {MPI_UNSIGNED_LONG_LONG, Group::integer},
      {MPI_INT8_T, Group::integer},
      {MPI_INT16_T, Group::integer},
      {MPI_INT32_T, Group::integer},
      {MPI_INT64_T, Group::integer},
      {MPI_UINT8_T, Group::integer},
      {MPI_UINT16_T, Group::integer},
      {MPI_UINT32_T, Group::integer},
      {MPI_UINT64_T, Group::integer},
      {MPI_AINT, Group::integer},
      {MPI_OFFSET, Group::integer},
      {MPI_COUNT, Group::integer},
      {MPI_FLOAT, Group::floating},
      {MPI_DOUBLE, Group::floating},
      {MPI_LONG_DOUBLE, Group::floating},
      {MPI_C_BOOL, Group::logical},
      {MPI_C_FLOAT_COMPLEX, Group::complex},
      {MPI_C_DOUBLE_COMPLEX, Group::complex},
      {MPI_C_LONG_DOUBLE_COMPLEX, Group::complex},
      {MPI_FLOAT_INT, Group::pair},
      {MPI_DOUBLE_INT, Group::pair},
      {MPI_LONG_INT, Group::pair},
      {MPI_2INT, Group::pair},
      {MPI_SHORT_INT, Group::pair},
      {MPI_LONG_DOUBLE_INT, Group::pair},
      // Fortran types from C (Fortran integers in the integer group, as Sluice defines them)
      // and the C++ types
      {MPI_INTEGER, Group::integer},
      {MPI_INTEGER1, Group::integer},
      {MPI_INTEGER2, Group::integer},
      {MPI_INTEGER4, Group::integer},
      {MPI_INTEGER8, Group::integer},
      {MPI_REAL, Group::floating},
      {MPI_DOUBLE_PRECISION, Group::floating},
      {MPI_REAL4, Group::floating},
      {MPI_REAL8, Group::floating},
      {MPI_COMPLEX, Group::complex},
      {MPI_DOUBLE_COMPLEX, Group::complex},
      {MPI_COMPLEX8, Group::complex},
      {MPI_COMPLEX16, Group::complex},
      {MPI_LOGICAL, Group::logical},
      {MPI_CHARACTER, Group::none},
      {MPI_2INTEGER, Group::pair},
      {MPI_2REAL, Group::pair},
      {MPI_2DOUBLE_PRECISION, Group::pair},
      {MPI_CXX_BOOL, Group::logical},
      {MPI_CXX_FLOAT_COMPLEX, Group::complex},
      {MPI_CXX_DOUBLE_COMPLEX, Group::complex},
      {MPI_CXX_LONG_DOUBLE_COMPLEX, Group::complex},
  };
  return v;
}

struct NamedOp {
  MPI_Op op;
  std::vector<Group> groups;
};

const std::vector<NamedOp>& all_ops() {
  using G = Group;
  static const std::vector<NamedOp> v = {
      {MPI_MAX, {G::integer, G::floating, G::character}},
      {MPI_MIN, {G::integer, G::floating, G::character}},
      {MPI_SUM, {G::integer, G::floating, G::complex, G::character}},
      {MPI_PROD, {G::integer, G::floating, G::complex, G::character}},
      {MPI_LAND, {G::integer, G::logical}},
      {MPI_LOR, {G::integer, G::logical}},
      {MPI_LXOR, {G::integer, G::logical}},
      {MPI_BAND, {G::integer, G::byte}},
      {MPI_BOR, {G::integer, G::byte}},
      {MPI_BXOR, {G::integer, G::byte}},
      {MPI_MAXLOC, {G::pair}},
      {MPI_MINLOC, {G::pair}},
  };
  return v;
}

TEST(Ops, CheckAcceptsExactlyTheStandardCombinations) {
  for (const NamedOp& o : all_ops()) {
    for (const NamedType& t : all_types()) {
      bool ok = std::find(o.groups.begin(), o.groups.end(), t.g) != o.groups.end();
      EXPECT_EQ(op_check(o.op, t.t), ok ? MPI_SUCCESS : MPI_ERR_OP)
          << "op " << int(o.op->kind) << " type size " << dt_size(t.t);
    }
  }
  EXPECT_EQ(op_check(MPI_OP_NULL, MPI_INT), MPI_ERR_OP);
  EXPECT_EQ(op_check(MPI_REPLACE, MPI_DOUBLE_INT), MPI_SUCCESS);
  EXPECT_EQ(op_check(MPI_NO_OP, MPI_CHAR), MPI_SUCCESS);
  // Derived types: a contiguous run of one type is fine, a mixed struct is not.
  MPI_Datatype c = dt_contiguous(3, MPI_DOUBLE);
  EXPECT_EQ(op_check(MPI_SUM, c), MPI_SUCCESS);
  EXPECT_EQ(op_check(MPI_BAND, c), MPI_ERR_OP);
  std::size_t bl[] = {1, 1};
  MPI_Aint disp[] = {0, 8};
  MPI_Datatype types[] = {MPI_DOUBLE, MPI_INT};
  MPI_Datatype s = dt_struct(2, bl, disp, types);
  EXPECT_EQ(op_check(MPI_SUM, s), MPI_ERR_OP);
  EXPECT_EQ(op_check(MPI_MAXLOC, s), MPI_ERR_OP);
  MPI_Op user = op_create([](void*, void*, int*, MPI_Datatype*) {}, false);
  EXPECT_EQ(op_check(user, s), MPI_SUCCESS);
  EXPECT_FALSE(op_is_commutative(user));
  EXPECT_TRUE(op_is_commutative(MPI_SUM));
  op_release(user);
  dt_release(c);
  dt_release(s);
}

template <typename T>
std::vector<T> random_values(std::size_t n, unsigned seed, bool small) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    auto r = rng();
    if constexpr (std::is_floating_point_v<T>) {
      x = T(double(int64_t(r % 2001) - 1000) / 8);
    } else if (small) {
      x = T(r % 4);  // exercises logical ops' zero/non-zero and equal values
    } else {
      x = T(r);
    }
  }
  return v;
}

template <typename T>
T ref_int(MPI_Op op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  if (op == MPI_MAX) return std::max(a, b);
  if (op == MPI_MIN) return std::min(a, b);
  if (op == MPI_SUM) return T(U(U(a) + U(b)));
  if (op == MPI_PROD) return T(U((unsigned long long)(U(a)) * (unsigned long long)(U(b))));
  if (op == MPI_LAND) return T(a && b);
  if (op == MPI_LOR) return T(a || b);
  if (op == MPI_LXOR) return T(bool(a) != bool(b));
  if (op == MPI_BAND) return T(a & b);
  if (op == MPI_BOR) return T(a | b);
  if (op == MPI_BXOR) return T(a ^ b);
  ADD_FAILURE();
  return 0;
}

template <typename T>
void check_int_ops(MPI_Datatype t) {
  for (std::size_t n : {1, 7, 64, 1001}) {
    for (bool small : {false, true}) {
      for (const NamedOp& o : all_ops()) {
        if (op_check(o.op, t) != MPI_SUCCESS) continue;
        auto a = random_values<T>(n, 1 + n, small), b = random_values<T>(n, 2 + n, small);
        auto got = b;
        op_apply(o.op, t, a.data(), got.data(), n);
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(got[i], ref_int<T>(o.op, a[i], b[i])) << "i=" << i << " op " << int(o.op->kind);
        }
      }
    }
  }
}

TEST(Ops, IntegerKernelsMatchReference) {
  check_int_ops<signed char>(MPI_SIGNED_CHAR);
  check_int_ops<unsigned char>(MPI_UNSIGNED_CHAR);
  check_int_ops<short>(MPI_SHORT);
  check_int_ops<unsigned short>(MPI_UNSIGNED_SHORT);
  check_int_ops<int>(MPI_INT);
  check_int_ops<unsigned>(MPI_UNSIGNED);
  check_int_ops<long>(MPI_LONG);
  check_int_ops<unsigned long>(MPI_UNSIGNED_LONG);
  check_int_ops<long long>(MPI_LONG_LONG);
  check_int_ops<unsigned long long>(MPI_UNSIGNED_LONG_LONG);
  check_int_ops<std::int8_t>(MPI_INT8_T);
  check_int_ops<std::int16_t>(MPI_INT16_T);
  check_int_ops<std::int32_t>(MPI_INT32_T);
  check_int_ops<std::int64_t>(MPI_INT64_T);
  check_int_ops<std::uint8_t>(MPI_UINT8_T);
  check_int_ops<std::uint16_t>(MPI_UINT16_T);
  check_int_ops<std::uint32_t>(MPI_UINT32_T);
  check_int_ops<std::uint64_t>(MPI_UINT64_T);
  check_int_ops<MPI_Aint>(MPI_AINT);
  check_int_ops<MPI_Offset>(MPI_OFFSET);
  check_int_ops<MPI_Count>(MPI_COUNT);
}

TEST(Ops, ByteBitwise) {
  auto a = random_values<unsigned char>(100, 5, false),
       b = random_values<unsigned char>(100, 6, false);
  for (MPI_Op op : {MPI_BAND, MPI_BOR, MPI_BXOR}) {
    auto got = b;
    op_apply(op, MPI_BYTE, a.data(), got.data(), 100);
    for (int i = 0; i < 100; ++i) ASSERT_EQ(got[i], ref_int<unsigned char>(op, a[i], b[i]));
  }
}

template <typename T>
void check_float_ops(MPI_Datatype t) {
  for (std::size_t n : {1, 9, 1000}) {
    auto a = random_values<T>(n, 3, false), b = random_values<T>(n, 4, false);
    for (MPI_Op op : {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD}) {
      auto got = b;
      op_apply(op, t, a.data(), got.data(), n);
      for (std::size_t i = 0; i < n; ++i) {
        T want = op == MPI_MAX   ? std::max(a[i], b[i])
                 : op == MPI_MIN ? std::min(a[i], b[i])
                 : op == MPI_SUM ? a[i] + b[i]
                                 : a[i] * b[i];
        ASSERT_EQ(got[i], want);
      }
    }
  }
}

TEST(Ops, FloatingKernelsMatchReference) {
  check_float_ops<float>(MPI_FLOAT);
  check_float_ops<double>(MPI_DOUBLE);
  check_float_ops<long double>(MPI_LONG_DOUBLE);
}

template <typename T>
void check_complex_ops(MPI_Datatype t) {
  using C = std::complex<T>;
  std::size_t n = 33;
  auto re = random_values<T>(2 * n, 7, false), im = random_values<T>(2 * n, 8, false);
  std::vector<C> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) a[i] = C(re[i], im[i]), b[i] = C(re[n + i], im[n + i]);
  for (MPI_Op op : {MPI_SUM, MPI_PROD}) {
    auto got = b;
    op_apply(op, t, a.data(), got.data(), n);
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(got[i], op == MPI_SUM ? a[i] + b[i] : a[i] * b[i]);
  }
}

TEST(Ops, ComplexKernelsMatchReference) {
  check_complex_ops<float>(MPI_C_FLOAT_COMPLEX);
  check_complex_ops<double>(MPI_C_DOUBLE_COMPLEX);
  check_complex_ops<long double>(MPI_C_LONG_DOUBLE_COMPLEX);
}

TEST(Ops, BoolLogical) {
  bool a[4] = {false, false, true, true}, b[4] = {false, true, false, true};
  bool want_and[4] = {false, false, false, true}, want_or[4] = {false, true, true, true},
       want_xor[4] = {false, true, true, false};
  for (auto [op, want] : {std::pair{MPI_LAND, want_and}, std::pair{MPI_LOR, want_or},
                          std::pair{MPI_LXOR, want_xor}}) {
    bool got[4];
    std::copy(b, b + 4, got);
    op_apply(op, MPI_C_BOOL, a, got, 4);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i], want[i]);
  }
}

template <typename V>
void check_pair_ops(MPI_Datatype t) {
  struct P {
    V v;
    int i;
  };
  std::mt19937 rng(9);
  std::size_t n = 200;
  std::vector<P> a(n), b(n);
  for (std::size_t k = 0; k < n; ++k) {
    a[k] = {V(rng() % 5), int(rng() % 10)};
    b[k] = {V(rng() % 5), int(rng() % 10)};
  }
  for (MPI_Op op : {MPI_MAXLOC, MPI_MINLOC}) {
    auto got = b;
    op_apply(op, t, a.data(), got.data(), n);
    for (std::size_t k = 0; k < n; ++k) {
      bool a_wins = op == MPI_MAXLOC ? a[k].v > b[k].v : a[k].v < b[k].v;
      V wv = a_wins ? a[k].v : (a[k].v == b[k].v ? a[k].v : b[k].v);
      int wi = a_wins ? a[k].i : (a[k].v == b[k].v ? std::min(a[k].i, b[k].i) : b[k].i);
      ASSERT_EQ(got[k].v, wv);
      ASSERT_EQ(got[k].i, wi);
    }
  }
}

TEST(Ops, MaxlocMinlocLowerIndexWinsTies) {
  check_pair_ops<float>(MPI_FLOAT_INT);
  check_pair_ops<double>(MPI_DOUBLE_INT);
  check_pair_ops<long>(MPI_LONG_INT);
  check_pair_ops<int>(MPI_2INT);
  check_pair_ops<short>(MPI_SHORT_INT);
  check_pair_ops<long double>(MPI_LONG_DOUBLE_INT);
}

TEST(Ops, DerivedTypesOfOneBasicType) {
  // contiguous(3, int): 4 elements = 12 ints.
  MPI_Datatype c = dt_contiguous(3, MPI_INT);
  std::vector<int> a(12), b(12);
  for (int i = 0; i < 12; ++i) a[i] = i, b[i] = 100 * i;
  op_apply(MPI_SUM, c, a.data(), b.data(), 4);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(b[i], 101 * i);
  // Resized int with extent 8: only every other int takes part.
  MPI_Datatype r = dt_resized(MPI_INT, 0, 8);
  EXPECT_EQ(op_check(MPI_MAX, r), MPI_SUCCESS);
  for (int i = 0; i < 12; ++i) a[i] = 1000, b[i] = i;
  op_apply(MPI_MAX, r, a.data(), b.data(), 6);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(b[i], i % 2 == 0 ? 1000 : i);
  // contiguous of a pair type with padding.
  MPI_Datatype cp = dt_contiguous(2, MPI_DOUBLE_INT);
  EXPECT_EQ(op_check(MPI_MAXLOC, cp), MPI_SUCCESS);
  struct DI {
    double v;
    int i;
  } x[4] = {{1, 0}, {5, 0}, {3, 0}, {0, 0}}, y[4] = {{2, 1}, {5, 1}, {1, 1}, {0, 1}};
  op_apply(MPI_MAXLOC, cp, x, y, 2);
  EXPECT_EQ(y[0].v, 2);
  EXPECT_EQ(y[0].i, 1);
  EXPECT_EQ(y[1].i, 0);
  EXPECT_EQ(y[2].v, 3);
  EXPECT_EQ(y[3].i, 0);
  // A vector with gaps is not a run of values: rejected.
  MPI_Datatype v = dt_hvector(2, 1, 8, MPI_INT, MPI_COMBINER_VECTOR);
  EXPECT_EQ(op_check(MPI_SUM, v), MPI_ERR_OP);
  dt_release(c);
  dt_release(r);
  dt_release(cp);
  dt_release(v);
}

TEST(Ops, ReplaceFollowsLayoutAndNoOpLeavesTarget) {
  MPI_Datatype v = dt_hvector(3, 1, 8, MPI_INT, MPI_COMBINER_VECTOR);
  int a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {0, 0, 0, 0, 0, 0};
  op_apply(MPI_REPLACE, v, a, b, 1);
  const int want[] = {1, 0, 3, 0, 5, 0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(b[i], want[i]);
  op_apply(MPI_NO_OP, v, a, b, 1);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(b[i], want[i]);
  dt_release(v);
}

// Non-commutative user op: records the argument order.
void concat_op(void* in, void* inout, int* len, MPI_Datatype* dt) {
  auto* a = static_cast<int*>(in);
  auto* b = static_cast<int*>(inout);
  ASSERT_EQ(*dt, MPI_INT);
  for (int i = 0; i < *len; ++i) b[i] = a[i] * 10 + b[i];
}

TEST(Ops, UserFunctionGetsInThenInout) {
  MPI_Op op = op_create(concat_op, false);
  int a[3] = {1, 2, 3}, b[3] = {4, 5, 6};
  op_apply(op, MPI_INT, a, b, 3);
  EXPECT_EQ(b[0], 14);
  EXPECT_EQ(b[1], 25);
  EXPECT_EQ(b[2], 36);
  op_retain(op);   // a pending collective
  op_release(op);  // MPI_Op_free
  op_apply(op, MPI_INT, a, b, 1);
  EXPECT_EQ(b[0], 24);
  op_release(op);
}

}  // namespace

namespace {

TEST(Constructors, HugeCountsAreBuiltWithoutPerBlockWork) {
  // 2^31 blocks: must neither allocate per block nor loop per block.
  const std::size_t n = std::size_t(1) << 31;
  MPI_Datatype v = dt_hvector(n, 1, 16, MPI_DOUBLE, MPI_COMBINER_VECTOR);
  ASSERT_EQ(v->runs.size(), 1u);
  EXPECT_EQ(v->runs[0].count, n);
  EXPECT_EQ(dt_size(v), n * 8);
  EXPECT_EQ(dt_extent(v), MPI_Aint(n - 1) * 16 + 8);
  EXPECT_EQ(op_check(MPI_SUM, v), MPI_ERR_OP);
  MPI_Datatype c = dt_hvector(n, 2, 8, MPI_INT, MPI_COMBINER_HVECTOR);
  EXPECT_TRUE(dt_is_contiguous(c));
  EXPECT_EQ(op_check(MPI_SUM, c), MPI_SUCCESS);
  EXPECT_EQ(c->op_count, 2 * n);
  // Vector of a strided vector: rows of a column block keep one repetition level.
  MPI_Datatype inner = dt_hvector(4, 1, 32, MPI_FLOAT, MPI_COMBINER_VECTOR);
  MPI_Datatype outer = dt_hvector(1000, 1, 1000, inner, MPI_COMBINER_HVECTOR);
  EXPECT_EQ(outer->runs.size(), 1u);
  EXPECT_EQ(outer->reps, 1000u);
  dt_release(v);
  dt_release(c);
  dt_release(inner);
  dt_release(outer);
}

// The random types must reach every layout shape the engine has (else the model test
// proves less than it seems).
TEST(RandomTypes, GeneratorCoversRepetitionsAndStridedRuns) {
  int reps = 0, strided = 0, multi = 0, op_derived = 0;
  for (unsigned seed = 0; seed < 3000; ++seed) {
    Generator g(seed);
    TypedPtr t = g.make(3);
    reps += t->type->reps > 1;
    multi += t->type->runs.size() > 1;
    op_derived += !t->type->predefined && t->type->op_base != nullptr;
    for (const sluice::mpi::Run& r : t->type->runs) {
      if (r.count > 1) {
        ++strided;
        break;
      }
    }
  }
  EXPECT_GT(reps, 100);
  EXPECT_GT(strided, 100);
  EXPECT_GT(multi, 100);
  EXPECT_GT(op_derived, 100);
}

}  // namespace

namespace {

// Reduction on packed buffers must equal: unpack, op_apply in the layout, pack.
void check_packed(MPI_Op op, MPI_Datatype t, const void* a, const void* b, std::size_t count,
                  std::size_t layout_bytes) {
  std::vector<char> pa(count * dt_size(t)), pb(pa.size());
  dt_pack(t, a, count, pa.data());
  dt_pack(t, b, count, pb.data());
  std::vector<char> lb(static_cast<const char*>(b), static_cast<const char*>(b) + layout_bytes);
  op_apply(op, t, a, lb.data(), count);
  std::vector<char> want(pa.size());
  dt_pack(t, lb.data(), count, want.data());
  op_apply_packed(op, t, pa.data(), pb.data(), count);
  EXPECT_EQ(pb, want) << "op " << int(op->kind);
}

void add_ints(void* in, void* inout, int* len, MPI_Datatype* dt) {
  // Works in the type's layout: every other int of a vector(2,1,2) element.
  auto* a = static_cast<int*>(in);
  auto* b = static_cast<int*>(inout);
  MPI_Aint ext = dt_extent(*dt) / MPI_Aint(sizeof(int));
  for (int e = 0; e < *len; ++e) {
    b[e * ext] += a[e * ext];
    b[e * ext + 2] += a[e * ext + 2];
  }
}

TEST(Ops, PackedBuffersMatchLayoutReduction) {
  struct DI {
    double v;
    int i;
  };
  DI a[4] = {{1, 0}, {5, 3}, {2, 2}, {7, 1}}, b[4] = {{1, 4}, {4, 0}, {2, 1}, {9, 0}};
  check_packed(MPI_MAXLOC, MPI_DOUBLE_INT, a, b, 4, sizeof b);
  check_packed(MPI_MINLOC, MPI_DOUBLE_INT, a, b, 4, sizeof b);
  MPI_Datatype c2 = dt_contiguous(2, MPI_DOUBLE_INT);
  check_packed(MPI_MAXLOC, c2, a, b, 2, sizeof b);
  struct SI {
    short v;
    int i;
  } sa[3] = {{1, 5}, {3, 3}, {3, 1}}, sb[3] = {{2, 0}, {3, 2}, {0, 7}};
  check_packed(MPI_MAXLOC, MPI_SHORT_INT, sa, sb, 3, sizeof sb);
  check_packed(MPI_MINLOC, MPI_SHORT_INT, sa, sb, 3, sizeof sb);
  long double la[6] = {1, 2, 3, 4, 5, 6}, lb2[6] = {6, 5, 4, 3, 2, 1};
  check_packed(MPI_SUM, MPI_LONG_DOUBLE, la, lb2, 6, sizeof lb2);
  // Resized int (every other int): packed values are dense.
  MPI_Datatype r = dt_resized(MPI_INT, 0, 8);
  int ia[8] = {1, 2, 3, 4, 5, 6, 7, 8}, ib[8] = {10, 20, 30, 40, 50, 60, 70, 80};
  check_packed(MPI_SUM, r, ia, ib, 4, sizeof ib);
  check_packed(MPI_REPLACE, r, ia, ib, 4, sizeof ib);
  // User ops: contiguous type and a non-contiguous one.
  MPI_Op user = op_create(add_ints, true);
  MPI_Datatype v = dt_hvector(2, 1, 8, MPI_INT, MPI_COMBINER_VECTOR);  // ints 0 and 2
  MPI_Datatype vr = dt_resized(v, 0, 16);
  check_packed(user, vr, ia, ib, 2, sizeof ib);
  op_release(user);
  dt_release(c2);
  dt_release(r);
  dt_release(v);
  dt_release(vr);
}

}  // namespace

namespace {

TEST(Pack, LargeFragmentsOfRepeatedStridedTypes) {
  // Two columns of a 1000x9 matrix of doubles per element, 3 elements, packed in fragments
  // with boundaries inside doubles and inside repetitions.
  MPI_Datatype col = dt_hvector(1000, 2, 9 * 8, MPI_DOUBLE, MPI_COMBINER_VECTOR);
  MPI_Datatype elems = dt_resized(col, 0, 9 * 8 * 1000);
  MPI_Datatype pair = dt_hvector(2, 1, 4 * 8, col, MPI_COMBINER_HVECTOR);  // repetitions
  for (MPI_Datatype t : {elems, pair}) {
    const std::size_t count = t == elems ? 3 : 1;
    std::vector<double> m(9 * 1000 * 3 + 64);
    for (std::size_t i = 0; i < m.size(); ++i) m[i] = double(i);
    const std::size_t n = count * dt_size(t);
    std::vector<char> whole(n), frags(n);
    dt_pack(t, m.data(), count, whole.data());
    for (std::size_t first = 0, k = 0; first < n; ++k) {
      std::size_t len = std::min(n - first, std::size_t(5003 + 977 * k));
      dt_pack_range(t, m.data(), first, len, frags.data() + first);
      first += len;
    }
    EXPECT_EQ(frags, whole);
    std::vector<double> back(m.size(), -1.0), want(m.size(), -1.0);
    dt_unpack(t, whole.data(), n, want.data(), count);
    for (std::size_t first = 0, k = 0; first < n; ++k) {
      std::size_t len = std::min(n - first, std::size_t(3331 + 17 * k));
      dt_unpack_range(t, whole.data() + first, first, len, back.data());
      first += len;
    }
    EXPECT_EQ(back, want);
  }
  dt_release(col);
  dt_release(elems);
  dt_release(pair);
}

}  // namespace

namespace {

TEST(Pack, EveryBlockLengthUpTo130) {
  // Exercises each small-copy size class, strided and single-block paths.
  for (std::size_t len = 1; len <= 130; ++len) {
    for (std::size_t count : {1, 3}) {
      std::vector<Block> bs;
      auto c = basic(MPI_CHAR);
      for (std::size_t i = 0; i < count; ++i) bs.push_back({MPI_Aint(i * (len + 3)), len, &c->ref});
      Typed t(dt_hvector(count, len, MPI_Aint(len + 3), MPI_CHAR, MPI_COMBINER_HVECTOR),
              ref_blocks(bs));
      check_type(t, 2, "len " + std::to_string(len));
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace

namespace {

// Packed-stream reference for MPI_MAX / MPI_MAXLOC on `n` values of a predefined base.
template <typename V>
void ref_max_values(const char* a, char* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    V x, y;
    std::memcpy(&x, a + i * sizeof(V), sizeof(V));
    std::memcpy(&y, b + i * sizeof(V), sizeof(V));
    V r = x > y ? x : y;
    std::memcpy(b + i * sizeof(V), &r, sizeof(V));
  }
}

template <typename V>
void ref_maxloc_values(const char* a, char* b, std::size_t n) {
  const std::size_t step = sizeof(V) + sizeof(int);
  for (std::size_t i = 0; i < n; ++i) {
    V x, y;
    int xi, yi;
    std::memcpy(&x, a + i * step, sizeof(V));
    std::memcpy(&y, b + i * step, sizeof(V));
    std::memcpy(&xi, a + i * step + sizeof(V), sizeof(int));
    std::memcpy(&yi, b + i * step + sizeof(V), sizeof(int));
    if (x > y || (x == y && xi < yi)) {
      std::memcpy(b + i * step, &x, sizeof(V));
      std::memcpy(b + i * step + sizeof(V), &xi, sizeof(int));
    }
  }
}

// For every random type that claims a reduction base, applying MPI_MAX/MPI_MAXLOC in the
// type's layout equals the reference applied to the packed values, and leaves the bytes
// outside the typemap alone.
TEST(RandomTypes, ReductionsOnDerivedTypesMatchPackedReference) {
  int checked = 0;
  for (unsigned seed = 0; seed < 3000; ++seed) {
    Generator g(seed);
    TypedPtr t = g.make(3);
    const sluice_datatype_s* base = t->type->op_base;
    if (t->type->predefined || !base || dt_size(t->type) == 0) continue;
    MPI_Op op = base->type_class == TypeClass::pair ? MPI_MAXLOC : MPI_MAX;
    if (op_check(op, t->type) != MPI_SUCCESS) continue;
    // Overlapping typemaps make "apply in place" ill-defined; skip them.
    std::vector<Entry> sorted = t->ref.map;
    std::sort(sorted.begin(), sorted.end(), [](auto& x, auto& y) { return x.offset < y.offset; });
    bool overlap = false;
    for (std::size_t i = 1; i < sorted.size(); ++i) {
      overlap |= sorted[i].offset < sorted[i - 1].offset + MPI_Aint(sorted[i - 1].size);
    }
    const std::size_t count = 2;
    if (overlap || (count > 1 && t->ref.extent() < t->ref.true_ub() - t->ref.true_lb())) continue;
    Buffer a(t->ref, count, seed * 3 + 1), b(t->ref, count, seed * 3 + 2);
    // Small integer-valued doubles avoid NaN payload differences; ints keep ties likely.
    auto tame = [&](Buffer& buf) {
      std::vector<unsigned char> p(count * dt_size(t->type));
      dt_pack(t->type, buf.base(), count, p.data());
      std::mt19937 rng(seed);
      if (base == MPI_DOUBLE || base == MPI_DOUBLE_INT) {
        std::size_t step = base == MPI_DOUBLE ? 8 : 12;
        for (std::size_t off = 0; off + 8 <= p.size(); off += step) {
          double v = double(rng() % 5);
          std::memcpy(&p[off], &v, 8);
        }
      }
      dt_unpack(t->type, p.data(), p.size(), buf.base(), count);
    };
    tame(a);
    tame(b);
    std::vector<unsigned char> pa(count * dt_size(t->type)), pb(pa.size());
    dt_pack(t->type, a.base(), count, pa.data());
    dt_pack(t->type, b.base(), count, pb.data());
    const std::size_t n = count * t->type->op_count;
    const char* ca = reinterpret_cast<const char*>(pa.data());
    char* cb = reinterpret_cast<char*>(pb.data());
    if (base == MPI_INT)
      ref_max_values<int>(ca, cb, n);
    else if (base == MPI_SHORT)
      ref_max_values<short>(ca, cb, n);
    else if (base == MPI_DOUBLE)
      ref_max_values<double>(ca, cb, n);
    else if (base == MPI_2INT)
      ref_maxloc_values<int>(ca, cb, n);
    else if (base == MPI_SHORT_INT)
      ref_maxloc_values<short>(ca, cb, n);
    else if (base == MPI_DOUBLE_INT)
      ref_maxloc_values<double>(ca, cb, n);
    else
      continue;  // long double: padding bytes make byte comparison meaningless
    Buffer want(t->ref, count, seed * 3 + 2);
    tame(want);
    dt_unpack(t->type, pb.data(), pb.size(), want.base(), count);
    op_apply(op, t->type, a.base(), b.base(), count);
    ASSERT_EQ(b.bytes, want.bytes) << "seed " << seed;
    ++checked;
  }
  EXPECT_GT(checked, 50);
}

}  // namespace

namespace {

TEST(Ops, MisalignedValuesAreReducedCorrectly) {
  // Doubles and pairs at odd addresses (a derived type may put them anywhere).
  alignas(16) unsigned char abuf[8 * 100 + 1], bbuf[8 * 100 + 1];
  std::vector<double> a(100), b(100);
  for (int i = 0; i < 100; ++i) a[i] = i, b[i] = 100 - i;
  std::memcpy(abuf + 1, a.data(), 800);
  std::memcpy(bbuf + 1, b.data(), 800);
  op_apply(MPI_MAX, MPI_DOUBLE, abuf + 1, bbuf + 1, 100);
  std::memcpy(b.data(), bbuf + 1, 800);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(b[i], std::max(100.0 - i, double(i)));

  struct SI {
    short v;
    int i;
  };
  alignas(16) unsigned char sa[sizeof(SI) * 600 + 3], sb[sizeof(SI) * 600 + 3];
  std::vector<SI> x(600), y(600);
  for (int i = 0; i < 600; ++i) x[i] = {short(i % 7), i}, y[i] = {short(i % 5), 1000 + i};
  std::memcpy(sa + 3, x.data(), sizeof(SI) * 600);
  std::memcpy(sb + 3, y.data(), sizeof(SI) * 600);
  op_apply(MPI_MAXLOC, MPI_SHORT_INT, sa + 3, sb + 3, 600);  // spans several scratch chunks
  std::memcpy(y.data(), sb + 3, sizeof(SI) * 600);
  for (int i = 0; i < 600; ++i) {
    short xv = short(i % 7), yv = short(i % 5);
    EXPECT_EQ(y[i].v, std::max(xv, yv));
    EXPECT_EQ(y[i].i, xv >= yv ? i : 1000 + i);
  }
}

}  // namespace
