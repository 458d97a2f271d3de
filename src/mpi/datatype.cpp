// Datatype engine: predefined types, flattening of derived types into run lists, and the
// pack/unpack kernels. See datatype.hpp for the representation.
#include "mpi/datatype.hpp"

#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>

using Type = sluice_datatype_s;

// ---- predefined type objects (named in mpi.h) ------------------------------------------
// Zero-initialised statically (every member has a constant initialiser) and filled in by
// init_predefined() below during libmpi's static initialisation.
sluice_datatype_s sluice_dt_char;
sluice_datatype_s sluice_dt_signed_char;
sluice_datatype_s sluice_dt_unsigned_char;
sluice_datatype_s sluice_dt_byte;
sluice_datatype_s sluice_dt_wchar;
sluice_datatype_s sluice_dt_short;
sluice_datatype_s sluice_dt_unsigned_short;
sluice_datatype_s sluice_dt_int;
sluice_datatype_s sluice_dt_unsigned;
sluice_datatype_s sluice_dt_long;
sluice_datatype_s sluice_dt_unsigned_long;
sluice_datatype_s sluice_dt_long_long;
sluice_datatype_s sluice_dt_unsigned_long_long;
sluice_datatype_s sluice_dt_float;
sluice_datatype_s sluice_dt_double;
sluice_datatype_s sluice_dt_long_double;
sluice_datatype_s sluice_dt_c_bool;
sluice_datatype_s sluice_dt_int8_t;
sluice_datatype_s sluice_dt_int16_t;
sluice_datatype_s sluice_dt_int32_t;
sluice_datatype_s sluice_dt_int64_t;
sluice_datatype_s sluice_dt_uint8_t;
sluice_datatype_s sluice_dt_uint16_t;
sluice_datatype_s sluice_dt_uint32_t;
sluice_datatype_s sluice_dt_uint64_t;
sluice_datatype_s sluice_dt_c_float_complex;
sluice_datatype_s sluice_dt_c_double_complex;
sluice_datatype_s sluice_dt_c_long_double_complex;
sluice_datatype_s sluice_dt_packed;
sluice_datatype_s sluice_dt_aint;
sluice_datatype_s sluice_dt_offset;
sluice_datatype_s sluice_dt_count;
sluice_datatype_s sluice_dt_float_int;
sluice_datatype_s sluice_dt_double_int;
sluice_datatype_s sluice_dt_long_int;
sluice_datatype_s sluice_dt_2int;
sluice_datatype_s sluice_dt_short_int;
sluice_datatype_s sluice_dt_long_double_int;
sluice_datatype_s sluice_dt_integer;
sluice_datatype_s sluice_dt_real;
sluice_datatype_s sluice_dt_double_precision;
sluice_datatype_s sluice_dt_complex;
sluice_datatype_s sluice_dt_double_complex;
sluice_datatype_s sluice_dt_logical;
sluice_datatype_s sluice_dt_character;
sluice_datatype_s sluice_dt_real4;
sluice_datatype_s sluice_dt_real8;
sluice_datatype_s sluice_dt_integer1;
sluice_datatype_s sluice_dt_integer2;
sluice_datatype_s sluice_dt_integer4;
sluice_datatype_s sluice_dt_integer8;
sluice_datatype_s sluice_dt_complex8;
sluice_datatype_s sluice_dt_complex16;
sluice_datatype_s sluice_dt_real16;
sluice_datatype_s sluice_dt_complex32;
sluice_datatype_s sluice_dt_integer16;
sluice_datatype_s sluice_dt_2integer;
sluice_datatype_s sluice_dt_2real;
sluice_datatype_s sluice_dt_2double_precision;
sluice_datatype_s sluice_dt_cxx_bool;
sluice_datatype_s sluice_dt_cxx_float_complex;
sluice_datatype_s sluice_dt_cxx_double_complex;
sluice_datatype_s sluice_dt_cxx_long_double_complex;

namespace sluice::mpi {
namespace {

// Address arithmetic that also works from MPI_BOTTOM (a null base with absolute offsets).
inline char* at(const void* base, MPI_Aint offset) {
  return reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(base) +
                                 static_cast<std::uintptr_t>(offset));
}

// ---- run lists ---------------------------------------------------------------------------

// Appends blocks in typemap order, merging what can be merged: a block adjacent to the
// previous one extends it; equal-length blocks at a constant spacing become one strided run.
class RunBuilder {
 public:
  explicit RunBuilder(std::vector<Run>& runs) : runs_(runs) {}

  void block(MPI_Aint offset, std::size_t length) {
    if (length == 0) return;
    if (!runs_.empty()) {
      Run& last = runs_.back();
      if (last.count == 1 && last.offset + static_cast<MPI_Aint>(last.length) == offset) {
        last.length += length;
        return;
      }
      if (last.length == length) {
        if (last.count == 1) {
          last.count = 2;
          last.stride = offset - last.offset;
          return;
        }
        if (offset == last.offset + static_cast<MPI_Aint>(last.count) * last.stride) {
          ++last.count;
          return;
        }
      }
    }
    runs_.push_back({offset, length, 1, 0});
  }

  void run(Run r) {
    if (r.length == 0 || r.count == 0) return;
    if (r.count > 1 && r.stride == static_cast<MPI_Aint>(r.length)) {
      r = {r.offset, r.length * r.count, 1, 0};
    }
    if (r.count == 1) return block(r.offset, r.length);
    if (!runs_.empty()) {
      Run& last = runs_.back();
      if (last.length == r.length) {
        if (last.count == 1 && r.offset - last.offset == r.stride) {
          last.count = r.count + 1;
          last.stride = r.stride;
          return;
        }
        if (last.count > 1 && last.stride == r.stride &&
            r.offset == last.offset + static_cast<MPI_Aint>(last.count) * last.stride) {
          last.count += r.count;
          return;
        }
      }
    }
    runs_.push_back(r);
  }

 private:
  std::vector<Run>& runs_;
};

// The data of one element as (runs × reps); the flattening works on these.
struct Layout {
  std::vector<Run> runs;
  std::size_t reps = 1;
  MPI_Aint rep_stride = 0;
};

Layout layout_of(const Type& t) {
  return {t.runs, t.reps, t.rep_stride};
}

// Appends every run of `l` shifted by `shift`, expanding its repetitions.
void append_expanded(RunBuilder& b, const Layout& l, MPI_Aint shift) {
  for (std::size_t r = 0; r < l.reps; ++r) {
    MPI_Aint base = shift + static_cast<MPI_Aint>(r) * l.rep_stride;
    for (Run run : l.runs) {
      run.offset += base;
      b.run(run);
    }
  }
}

// `count` copies of `inner`, the i-th shifted by i*stride. A single run is expanded (so its
// copies merge); anything else becomes a repetition, keeping the list short.
Layout repeat(const Layout& inner, std::size_t count, MPI_Aint stride) {
  if (count == 1) return inner;
  Layout out;
  if (count == 0 || inner.runs.empty()) return out;
  if (inner.runs.size() == 1 && inner.reps == 1) {
    // The copies continue the run's own spacing (or the block is repeated): one run, O(1).
    // Otherwise copies of a strided run never merge, so they become repetitions below.
    const Run& r = inner.runs[0];
    if (r.count == 1 || static_cast<MPI_Aint>(r.count) * r.stride == stride) {
      RunBuilder b(out.runs);
      b.run({r.offset, r.length, r.count * count, r.count == 1 ? stride : r.stride});
      return out;
    }
  }
  if (inner.reps == 1) return {inner.runs, count, stride};
  if (inner.rep_stride * static_cast<MPI_Aint>(inner.reps) == stride) {
    return {inner.runs, inner.reps * count, inner.rep_stride};
  }
  out.runs.clear();
  RunBuilder b(out.runs);
  append_expanded(b, inner, 0);
  out.reps = count;
  out.rep_stride = stride;
  return out;
}

// ---- signatures --------------------------------------------------------------------------

struct Signature {
  std::vector<SigRun> sig;
  std::size_t reps = 1;
};

void append_sig(std::vector<SigRun>& out, SigRun s) {
  if (s.count == 0) return;
  if (!out.empty() && out.back().size == s.size) {
    out.back().count += s.count;
  } else {
    out.push_back(s);
  }
}

void append_sig_expanded(std::vector<SigRun>& out, const Signature& s, std::size_t times) {
  if (s.sig.size() == 1) {
    append_sig(out, {s.sig[0].size, s.sig[0].count * s.reps * times});
    return;
  }
  for (std::size_t t = 0; t < s.reps * times; ++t) {
    for (const SigRun& r : s.sig) append_sig(out, r);
  }
}

Signature repeat_sig(const Signature& inner, std::size_t count) {
  if (count == 0 || inner.sig.empty()) return {};
  if (inner.sig.size() == 1)
    return {{{inner.sig[0].size, inner.sig[0].count * inner.reps * count}}, 1};
  return {inner.sig, inner.reps * count};
}

// ---- building derived types ------------------------------------------------------------

// `count` consecutive elements of `type` starting at byte displacement `disp`.
struct Placement {
  MPI_Aint disp;
  std::size_t count;
  const Type* type;
};

// Where the data of a type's op values starts, relative to an element's address.
MPI_Aint op_start(const Type& t) {
  return t.true_lb;
}

// Fills every derived field of `t` except the layout (runs/reps) from the placements:
// size, bounds, alignment, signature, and the reduction base.
void derive_common(Type& t, const std::vector<Placement>& ps) {
  bool any = false, any_data = false;
  std::size_t size = 0;
  MPI_Aint lb = 0, ub = 0, tlb = 0, tub = 0;
  std::size_t align = 1;
  bool explicit_bounds = false;
  std::size_t n_basic = 0;
  for (const Placement& p : ps) {
    const Type& c = *p.type;
    align = std::max(align, c.align);
    explicit_bounds = explicit_bounds || c.explicit_bounds;
    if (p.count == 0) continue;
    MPI_Aint span = static_cast<MPI_Aint>(p.count - 1) * c.extent();
    MPI_Aint lo = p.disp + std::min<MPI_Aint>(0, span);
    MPI_Aint hi = p.disp + std::max<MPI_Aint>(0, span);
    MPI_Aint l = lo + c.lb, u = hi + c.ub, tl = lo + c.true_lb, tu = hi + c.true_ub;
    lb = any ? std::min(lb, l) : l;
    ub = any ? std::max(ub, u) : u;
    any = true;
    // True bounds cover data only: a member without data does not widen them.
    if (c.size > 0) {
      tlb = any_data ? std::min(tlb, tl) : tl;
      tub = any_data ? std::max(tub, tu) : tu;
      any_data = true;
    }
    size += p.count * c.size;
    n_basic += p.count * c.n_basic;
  }
  t.size = size;
  t.lb = lb, t.ub = ub, t.true_lb = tlb, t.true_ub = tub;
  t.align = align;
  t.explicit_bounds = explicit_bounds;
  t.n_basic = n_basic;

  // Reductions: every placement must be made of the same op base, and all values must form
  // one progression of op-base extents starting at true_lb.
  const Type* base = nullptr;
  std::size_t op_count = 0;
  MPI_Aint next = 0;
  bool ok = true;
  for (const Placement& p : ps) {
    const Type& c = *p.type;
    if (p.count == 0) continue;
    if (!c.op_base || (base && c.op_base != base)) {
      ok = false;
      break;
    }
    base = c.op_base;
    MPI_Aint value_span = static_cast<MPI_Aint>(c.op_count) * base->extent();
    if (p.count > 1 && c.extent() != value_span) {
      ok = false;
      break;
    }
    MPI_Aint start = p.disp + op_start(c);
    if (op_count > 0 && start != next) {
      ok = false;
      break;
    }
    next = start + static_cast<MPI_Aint>(p.count) * value_span;
    op_count += p.count * c.op_count;
  }
  if (ok && base && op_count > 0) {
    t.op_base = base;
    t.op_count = op_count;
  }
}

void finish(Type& t) {
  t.contiguous = t.size == 0 || (t.reps == 1 && t.runs.size() == 1 && t.runs[0].count == 1 &&
                                 t.runs[0].length == t.size && t.runs[0].offset == t.true_lb &&
                                 t.extent() == static_cast<MPI_Aint>(t.size));
}

// The general constructor: concatenates the placements in order (indexed, struct, ...).
Type* build(int combiner, const std::vector<Placement>& ps) {
  auto* t = new Type;
  t->combiner = combiner;
  derive_common(*t, ps);
  RunBuilder b(t->runs);
  for (const Placement& p : ps) {
    if (p.count == 0) continue;
    Layout block = repeat(layout_of(*p.type), p.count, p.type->extent());
    append_expanded(b, block, p.disp);
  }
  for (const Placement& p : ps) {
    if (p.count == 0) continue;
    Signature cs{p.type->sig, p.type->sig_reps};
    append_sig_expanded(t->sig, cs, p.count);
  }
  finish(*t);
  return t;
}

// Regular repetition: `count` blocks of `blocklength` elements of `old`, `stride` bytes
// apart (contiguous, vector, hvector). Keeps the repetition instead of expanding it.
Type* build_strided(int combiner, std::size_t count, std::size_t blocklength, MPI_Aint stride,
                    const Type& old) {
  auto* t = new Type;
  t->combiner = combiner;
  if (count <= 2) {
    std::vector<Placement> ps;
    for (std::size_t i = 0; i < count; ++i) {
      ps.push_back({static_cast<MPI_Aint>(i) * stride, blocklength, &old});
    }
    derive_common(*t, ps);
  } else {
    // Bounds come from the first and last block (no per-block list for huge counts); the
    // sums and the reduction base follow from the regular spacing.
    derive_common(*t, {{0, blocklength, &old},
                       {static_cast<MPI_Aint>(count - 1) * stride, blocklength, &old}});
    t->size = count * blocklength * old.size;
    t->n_basic = count * blocklength * old.n_basic;
    t->op_base = nullptr;
    t->op_count = 0;
    if (old.op_base && blocklength > 0) {
      MPI_Aint value_span = static_cast<MPI_Aint>(old.op_count) * old.op_base->extent();
      bool dense_block = blocklength == 1 || old.extent() == value_span;
      if (dense_block && stride == static_cast<MPI_Aint>(blocklength) * value_span) {
        t->op_base = old.op_base;
        t->op_count = count * blocklength * old.op_count;
      }
    }
  }
  Layout block = repeat(layout_of(old), blocklength, old.extent());
  Layout all = repeat(block, count, stride);
  t->runs = std::move(all.runs);
  t->reps = all.reps;
  t->rep_stride = all.rep_stride;
  if (t->runs.empty()) t->reps = 1, t->rep_stride = 0;
  Signature s = repeat_sig({old.sig, old.sig_reps}, blocklength * count);
  t->sig = std::move(s.sig);
  t->sig_reps = s.reps;
  finish(*t);
  return t;
}

// ---- predefined types -----------------------------------------------------------------

template <typename T>
void set_basic(Type& t, TypeClass cls, Scalar s) {
  t.predefined = true;
  t.committed = true;
  t.combiner = MPI_COMBINER_NAMED;
  t.size = sizeof(T);
  t.lb = 0, t.ub = sizeof(T), t.true_lb = 0, t.true_ub = sizeof(T);
  t.align = alignof(T);
  t.runs = {{0, sizeof(T), 1, 0}};
  t.sig = {{sizeof(T), 1}};
  t.n_basic = 1;
  t.contiguous = true;
  t.op_base = &t;
  t.op_count = 1;
  t.type_class = cls;
  t.scalar = s;
}

// MAXLOC/MINLOC pair types: the layout of the C struct {V value; I index;} (I is int for
// the C pairs, the value's type for the Fortran ones).
template <typename V, typename I = int>
void set_pair(Type& t, Scalar s) {
  struct P {
    V value;
    I index;
  };
  t.predefined = true;
  t.committed = true;
  t.combiner = MPI_COMBINER_NAMED;
  t.size = sizeof(V) + sizeof(I);
  t.lb = 0, t.ub = sizeof(P), t.true_lb = 0, t.true_ub = offsetof(P, index) + sizeof(I);
  t.align = alignof(P);
  RunBuilder b(t.runs);
  b.block(0, sizeof(V));
  b.block(offsetof(P, index), sizeof(I));
  t.sig.clear();
  append_sig(t.sig, {sizeof(V), 1});
  append_sig(t.sig, {sizeof(I), 1});
  t.n_basic = 2;
  t.contiguous = t.extent() == static_cast<MPI_Aint>(t.size) && t.runs.size() == 1;
  t.op_base = &t;
  t.op_count = 1;
  t.type_class = TypeClass::pair;
  t.scalar = s;
}

template <typename T>
constexpr Scalar int_scalar() {
  constexpr bool s = std::numeric_limits<T>::is_signed;
  switch (sizeof(T)) {
    case 1:
      return s ? Scalar::i8 : Scalar::u8;
    case 2:
      return s ? Scalar::i16 : Scalar::u16;
    case 4:
      return s ? Scalar::i32 : Scalar::u32;
    default:
      return s ? Scalar::i64 : Scalar::u64;
  }
}

template <typename T>
void set_int(Type& t) {
  set_basic<T>(t, TypeClass::c_integer, int_scalar<T>());
}

const bool predefined_ready = [] {
  static_assert(sizeof(long double) == 16, "x86-64 long double layout assumed");
  // MPI-3.1 §5.9.2 defines no reduction on MPI_CHAR; Sluice allows the arithmetic ones
  // (as Open MPI and MPICH do: programs and benchmarks expect it).
  set_basic<char>(sluice_dt_char, TypeClass::character, Scalar::i8);
  set_basic<wchar_t>(sluice_dt_wchar, TypeClass::none, Scalar::i32);
  set_basic<unsigned char>(sluice_dt_packed, TypeClass::none, Scalar::u8);
  set_basic<unsigned char>(sluice_dt_byte, TypeClass::byte, Scalar::u8);
  set_int<signed char>(sluice_dt_signed_char);
  set_int<unsigned char>(sluice_dt_unsigned_char);
  set_int<short>(sluice_dt_short);
  set_int<unsigned short>(sluice_dt_unsigned_short);
  set_int<int>(sluice_dt_int);
  set_int<unsigned>(sluice_dt_unsigned);
  set_int<long>(sluice_dt_long);
  set_int<unsigned long>(sluice_dt_unsigned_long);
  set_int<long long>(sluice_dt_long_long);
  set_int<unsigned long long>(sluice_dt_unsigned_long_long);
  set_int<std::int8_t>(sluice_dt_int8_t);
  set_int<std::int16_t>(sluice_dt_int16_t);
  set_int<std::int32_t>(sluice_dt_int32_t);
  set_int<std::int64_t>(sluice_dt_int64_t);
  set_int<std::uint8_t>(sluice_dt_uint8_t);
  set_int<std::uint16_t>(sluice_dt_uint16_t);
  set_int<std::uint32_t>(sluice_dt_uint32_t);
  set_int<std::uint64_t>(sluice_dt_uint64_t);
  set_int<MPI_Aint>(sluice_dt_aint);
  set_int<MPI_Offset>(sluice_dt_offset);
  set_int<MPI_Count>(sluice_dt_count);
  set_basic<float>(sluice_dt_float, TypeClass::floating, Scalar::f32);
  set_basic<double>(sluice_dt_double, TypeClass::floating, Scalar::f64);
  set_basic<long double>(sluice_dt_long_double, TypeClass::floating, Scalar::f80);
  set_basic<bool>(sluice_dt_c_bool, TypeClass::logical, Scalar::boolean);
  set_basic<std::complex<float>>(sluice_dt_c_float_complex, TypeClass::complex, Scalar::c32);
  set_basic<std::complex<double>>(sluice_dt_c_double_complex, TypeClass::complex, Scalar::c64);
  set_basic<std::complex<long double>>(sluice_dt_c_long_double_complex, TypeClass::complex,
                                       Scalar::c80);
  set_pair<float>(sluice_dt_float_int, Scalar::pair_float_int);
  set_pair<double>(sluice_dt_double_int, Scalar::pair_double_int);
  set_pair<long>(sluice_dt_long_int, Scalar::pair_long_int);
  set_pair<int>(sluice_dt_2int, Scalar::pair_int_int);
  set_pair<short>(sluice_dt_short_int, Scalar::pair_short_int);
  set_pair<long double>(sluice_dt_long_double_int, Scalar::pair_long_double_int);
  sluice_dt_char.name = "MPI_CHAR";
  sluice_dt_signed_char.name = "MPI_SIGNED_CHAR";
  sluice_dt_unsigned_char.name = "MPI_UNSIGNED_CHAR";
  sluice_dt_byte.name = "MPI_BYTE";
  sluice_dt_wchar.name = "MPI_WCHAR";
  sluice_dt_short.name = "MPI_SHORT";
  sluice_dt_unsigned_short.name = "MPI_UNSIGNED_SHORT";
  sluice_dt_int.name = "MPI_INT";
  sluice_dt_unsigned.name = "MPI_UNSIGNED";
  sluice_dt_long.name = "MPI_LONG";
  sluice_dt_unsigned_long.name = "MPI_UNSIGNED_LONG";
  // One object serves two names; MPI_Type_get_name gives the one MPICH gives (its test suite
  // accepts it for both handles): MPI_LONG_LONG_INT, MPI_C_COMPLEX.
  sluice_dt_long_long.name = "MPI_LONG_LONG_INT";
  sluice_dt_unsigned_long_long.name = "MPI_UNSIGNED_LONG_LONG";
  sluice_dt_float.name = "MPI_FLOAT";
  sluice_dt_double.name = "MPI_DOUBLE";
  sluice_dt_long_double.name = "MPI_LONG_DOUBLE";
  sluice_dt_c_bool.name = "MPI_C_BOOL";
  sluice_dt_int8_t.name = "MPI_INT8_T";
  sluice_dt_int16_t.name = "MPI_INT16_T";
  sluice_dt_int32_t.name = "MPI_INT32_T";
  sluice_dt_int64_t.name = "MPI_INT64_T";
  sluice_dt_uint8_t.name = "MPI_UINT8_T";
  sluice_dt_uint16_t.name = "MPI_UINT16_T";
  sluice_dt_uint32_t.name = "MPI_UINT32_T";
  sluice_dt_uint64_t.name = "MPI_UINT64_T";
  sluice_dt_c_float_complex.name = "MPI_C_COMPLEX";
  sluice_dt_c_double_complex.name = "MPI_C_DOUBLE_COMPLEX";
  sluice_dt_c_long_double_complex.name = "MPI_C_LONG_DOUBLE_COMPLEX";
  sluice_dt_packed.name = "MPI_PACKED";
  sluice_dt_aint.name = "MPI_AINT";
  sluice_dt_offset.name = "MPI_OFFSET";
  sluice_dt_count.name = "MPI_COUNT";
  sluice_dt_float_int.name = "MPI_FLOAT_INT";
  sluice_dt_double_int.name = "MPI_DOUBLE_INT";
  sluice_dt_long_int.name = "MPI_LONG_INT";
  sluice_dt_2int.name = "MPI_2INT";
  sluice_dt_short_int.name = "MPI_SHORT_INT";
  sluice_dt_long_double_int.name = "MPI_LONG_DOUBLE_INT";

  // Fortran types with gfortran's default kinds (INTEGER, REAL, LOGICAL: 4 bytes; DOUBLE
  // PRECISION: 8), for C code that exchanges Fortran data. The reduction groups follow
  // MPI-3.1 §5.9.2 (Fortran integer ~ C integer; LOGICAL takes the logical ops, 0 is
  // .FALSE.); CHARACTER, like MPI_WCHAR, has none.
  set_int<std::int32_t>(sluice_dt_integer);
  set_basic<float>(sluice_dt_real, TypeClass::floating, Scalar::f32);
  set_basic<double>(sluice_dt_double_precision, TypeClass::floating, Scalar::f64);
  set_basic<std::complex<float>>(sluice_dt_complex, TypeClass::complex, Scalar::c32);
  set_basic<std::complex<double>>(sluice_dt_double_complex, TypeClass::complex, Scalar::c64);
  set_basic<std::int32_t>(sluice_dt_logical, TypeClass::logical, Scalar::i32);
  set_basic<char>(sluice_dt_character, TypeClass::none, Scalar::i8);
  set_basic<float>(sluice_dt_real4, TypeClass::floating, Scalar::f32);
  set_basic<double>(sluice_dt_real8, TypeClass::floating, Scalar::f64);
  set_int<std::int8_t>(sluice_dt_integer1);
  set_int<std::int16_t>(sluice_dt_integer2);
  set_int<std::int32_t>(sluice_dt_integer4);
  set_int<std::int64_t>(sluice_dt_integer8);
  set_basic<std::complex<float>>(sluice_dt_complex8, TypeClass::complex, Scalar::c32);
  set_basic<std::complex<double>>(sluice_dt_complex16, TypeClass::complex, Scalar::c64);
  // gfortran's 16-byte kinds (x86-64): REAL(16) is IEEE binary128, GCC's __float128 (not
  // the x87 long double of MPI_LONG_DOUBLE and REAL(10)); INTEGER(16) is __int128.
  set_basic<__float128>(sluice_dt_real16, TypeClass::floating, Scalar::f128);
  set_basic<std::complex<__float128>>(sluice_dt_complex32, TypeClass::complex, Scalar::c128);
  set_basic<__int128>(sluice_dt_integer16, TypeClass::c_integer, Scalar::i128);
  set_pair<std::int32_t>(sluice_dt_2integer, Scalar::pair_int_int);
  set_pair<float, float>(sluice_dt_2real, Scalar::pair_float_float);
  set_pair<double, double>(sluice_dt_2double_precision, Scalar::pair_double_double);
  // C++ bool and std::complex have the C types' layouts.
  set_basic<bool>(sluice_dt_cxx_bool, TypeClass::logical, Scalar::boolean);
  set_basic<std::complex<float>>(sluice_dt_cxx_float_complex, TypeClass::complex, Scalar::c32);
  set_basic<std::complex<double>>(sluice_dt_cxx_double_complex, TypeClass::complex, Scalar::c64);
  set_basic<std::complex<long double>>(sluice_dt_cxx_long_double_complex, TypeClass::complex,
                                       Scalar::c80);
  sluice_dt_integer.name = "MPI_INTEGER";
  sluice_dt_real.name = "MPI_REAL";
  sluice_dt_double_precision.name = "MPI_DOUBLE_PRECISION";
  sluice_dt_complex.name = "MPI_COMPLEX";
  sluice_dt_double_complex.name = "MPI_DOUBLE_COMPLEX";
  sluice_dt_logical.name = "MPI_LOGICAL";
  sluice_dt_character.name = "MPI_CHARACTER";
  sluice_dt_real4.name = "MPI_REAL4";
  sluice_dt_real8.name = "MPI_REAL8";
  sluice_dt_integer1.name = "MPI_INTEGER1";
  sluice_dt_integer2.name = "MPI_INTEGER2";
  sluice_dt_integer4.name = "MPI_INTEGER4";
  sluice_dt_integer8.name = "MPI_INTEGER8";
  sluice_dt_complex8.name = "MPI_COMPLEX8";
  sluice_dt_complex16.name = "MPI_COMPLEX16";
  sluice_dt_real16.name = "MPI_REAL16";
  sluice_dt_complex32.name = "MPI_COMPLEX32";
  sluice_dt_integer16.name = "MPI_INTEGER16";
  sluice_dt_2integer.name = "MPI_2INTEGER";
  sluice_dt_2real.name = "MPI_2REAL";
  sluice_dt_2double_precision.name = "MPI_2DOUBLE_PRECISION";
  sluice_dt_cxx_bool.name = "MPI_CXX_BOOL";
  sluice_dt_cxx_float_complex.name = "MPI_CXX_FLOAT_COMPLEX";
  sluice_dt_cxx_double_complex.name = "MPI_CXX_DOUBLE_COMPLEX";
  sluice_dt_cxx_long_double_complex.name = "MPI_CXX_LONG_DOUBLE_COMPLEX";
  return true;
}();

// ---- copy kernels --------------------------------------------------------------------------

// Copies n <= 64 bytes between non-overlapping buffers with two possibly overlapping
// fixed-size moves: inlined moves instead of a memcpy call per small block.
inline void copy_small(char* dst, const char* src, std::size_t n) {
  if (n >= 16) {
    if (n >= 32) {
      std::memcpy(dst, src, 32);
      std::memcpy(dst + n - 32, src + n - 32, 32);
    } else {
      std::memcpy(dst, src, 16);
      std::memcpy(dst + n - 16, src + n - 16, 16);
    }
  } else if (n >= 8) {
    std::memcpy(dst, src, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(dst, src, 4);
    std::memcpy(dst + n - 4, src + n - 4, 4);
  } else if (n >= 2) {
    std::memcpy(dst, src, 2);
    std::memcpy(dst + n - 2, src + n - 2, 2);
  } else if (n == 1) {
    *dst = *src;
  }
}

// One block between memory and the packed stream.
template <bool kPack>
inline void copy_block(char* mem, char* packed, std::size_t len) {
  char* dst = kPack ? packed : mem;
  const char* src = kPack ? mem : packed;
  if (len <= 64) {
    copy_small(dst, src, len);
  } else {
    std::memcpy(dst, src, len);
  }
}

template <bool kPack, std::size_t kLen>
inline void copy_bytes_fixed(char* mem, char* packed) {
  if constexpr (kPack) {
    std::memcpy(packed, mem, kLen);
  } else {
    std::memcpy(mem, packed, kLen);
  }
}

// Copies `count` blocks of `len` bytes spaced `stride` apart in memory to/from consecutive
// packed bytes. Common lengths get fixed-size copies the compiler turns into moves.
template <bool kPack, std::size_t kLen>
inline char* strided_fixed(char* mem, MPI_Aint stride, std::size_t count, char* packed) {
  for (std::size_t i = 0; i < count; ++i, mem += stride, packed += kLen) {
    if constexpr (kPack) {
      std::memcpy(packed, mem, kLen);
    } else {
      std::memcpy(mem, packed, kLen);
    }
  }
  return packed;
}

template <bool kPack>
inline char* strided(char* mem, MPI_Aint stride, std::size_t len, std::size_t count, char* packed) {
  if (count == 1) {
    copy_block<kPack>(mem, packed, len);
    return packed + len;
  }
  switch (len) {
    case 4:
      return strided_fixed<kPack, 4>(mem, stride, count, packed);
    case 8:
      return strided_fixed<kPack, 8>(mem, stride, count, packed);
    case 16:
      return strided_fixed<kPack, 16>(mem, stride, count, packed);
    default:
      for (std::size_t i = 0; i < count; ++i, mem += stride, packed += len) {
        copy_block<kPack>(mem, packed, len);
      }
      return packed;
  }
}

// Copies `n` whole elements.
template <bool kPack>
char* copy_elements(const Type& t, const void* buf, std::size_t n, char* packed) {
  if (n == 0 || t.size == 0) return packed;
  if (t.contiguous) {
    std::size_t bytes = n * t.size;
    char* mem = at(buf, t.true_lb);
    if constexpr (kPack) {
      std::memcpy(packed, mem, bytes);
    } else {
      std::memcpy(mem, packed, bytes);
    }
    return packed + bytes;
  }
  const MPI_Aint extent = t.extent();
  if (t.reps == 1 && t.runs.size() == 1) {
    const Run& r = t.runs[0];
    // One block per element: the elements themselves form a strided run.
    if (r.count == 1) return strided<kPack>(at(buf, r.offset), extent, r.length, n, packed);
    // One strided run per element that continues into the next element.
    if (static_cast<MPI_Aint>(r.count) * r.stride == extent) {
      return strided<kPack>(at(buf, r.offset), r.stride, r.length, r.count * n, packed);
    }
  }
  // Struct-like elements (a few single blocks): keep the blocks in locals, because every
  // byte store through `packed` may alias the run list and would force reloads.
  constexpr std::size_t kFew = 8;
  if (t.reps == 1 && t.runs.size() <= kFew) {
    bool singles = true;
    for (const Run& r : t.runs) singles = singles && r.count == 1;
    if (singles) {
      MPI_Aint off[kFew];
      std::size_t len[kFew];
      const std::size_t k = t.runs.size();
      for (std::size_t j = 0; j < k; ++j) off[j] = t.runs[j].offset, len[j] = t.runs[j].length;
      char* elem = at(buf, 0);
      for (std::size_t e = 0; e < n; ++e, elem += extent) {
        for (std::size_t j = 0; j < k; ++j) {
          char* mem = elem + off[j];
          switch (len[j]) {  // the usual member sizes as single moves
            case 4:
              copy_bytes_fixed<kPack, 4>(mem, packed);
              break;
            case 8:
              copy_bytes_fixed<kPack, 8>(mem, packed);
              break;
            case 16:
              copy_bytes_fixed<kPack, 16>(mem, packed);
              break;
            default:
              copy_block<kPack>(mem, packed, len[j]);
          }
          packed += len[j];
        }
      }
      return packed;
    }
  }
  for (std::size_t e = 0; e < n; ++e) {
    char* elem = at(buf, static_cast<MPI_Aint>(e) * extent);
    for (std::size_t rep = 0; rep < t.reps; ++rep) {
      char* base = elem + static_cast<MPI_Aint>(rep) * t.rep_stride;
      for (const Run& r : t.runs) {
        if (r.count == 1) {  // struct members: mostly single small blocks
          copy_block<kPack>(base + r.offset, packed, r.length);
          packed += r.length;
        } else {
          packed = strided<kPack>(base + r.offset, r.stride, r.length, r.count, packed);
        }
      }
    }
  }
  return packed;
}

template <bool kPack>
inline void copy_bytes(char* mem, char* packed, std::size_t len) {
  if constexpr (kPack) {
    std::memcpy(packed, mem, len);
  } else {
    std::memcpy(mem, packed, len);
  }
}

// Copies `bytes` of the element at `elem`, starting `skip` bytes into its packed form;
// skip + bytes <= size. Skips whole repetitions and runs arithmetically.
template <bool kPack>
char* copy_within(const Type& t, char* elem, std::size_t skip, std::size_t bytes, char* packed) {
  std::size_t unit = 0;  // packed bytes of one repetition
  for (const Run& r : t.runs) unit += r.length * r.count;
  if (unit == 0) return packed;
  std::size_t rep = skip / unit;
  skip %= unit;
  for (; rep < t.reps && bytes > 0; ++rep) {
    char* base = elem + static_cast<MPI_Aint>(rep) * t.rep_stride;
    for (const Run& r : t.runs) {
      const std::size_t total = r.length * r.count;
      if (skip >= total) {
        skip -= total;
        continue;
      }
      std::size_t i = skip / r.length;
      const std::size_t within = skip % r.length;
      skip = 0;
      char* mem = base + r.offset + static_cast<MPI_Aint>(i) * r.stride;
      if (within > 0) {  // finish a block begun by the previous fragment
        std::size_t len = std::min(r.length - within, bytes);
        copy_bytes<kPack>(mem + within, packed, len);
        packed += len, bytes -= len, ++i, mem += r.stride;
        if (bytes == 0) return packed;
      }
      std::size_t full = std::min(r.count - i, bytes / r.length);
      if (full > 0) {
        packed = strided<kPack>(mem, r.stride, r.length, full, packed);
        i += full, mem += static_cast<MPI_Aint>(full) * r.stride, bytes -= full * r.length;
      }
      if (bytes == 0) return packed;
      if (i < r.count) {  // the fragment ends inside this block
        copy_bytes<kPack>(mem, packed, bytes);
        return packed + bytes;
      }
    }
  }
  return packed;
}

// Copies bytes [first, first + bytes) of the packed form of elements at `buf`.
template <bool kPack>
void copy_range(const Type& t, const void* buf, std::size_t first, std::size_t bytes,
                char* packed) {
  const std::size_t size = t.size;
  if (size == 0 || bytes == 0) return;
  const MPI_Aint extent = t.extent();
  std::size_t e = first / size;
  const std::size_t off = first % size;
  if (off > 0) {
    std::size_t n = std::min(size - off, bytes);
    packed = copy_within<kPack>(t, at(buf, static_cast<MPI_Aint>(e) * extent), off, n, packed);
    bytes -= n, ++e;
  }
  const std::size_t whole = bytes / size;
  packed = copy_elements<kPack>(t, at(buf, static_cast<MPI_Aint>(e) * extent), whole, packed);
  e += whole, bytes -= whole * size;
  if (bytes > 0)
    copy_within<kPack>(t, at(buf, static_cast<MPI_Aint>(e) * extent), 0, bytes, packed);
}

}  // namespace

// ---- contract ---------------------------------------------------------------------------

MPI_Aint dt_extent(MPI_Datatype t) {
  return t->extent();
}
MPI_Aint dt_true_extent(MPI_Datatype t) {
  return t->true_ub - t->true_lb;
}
std::size_t dt_basic_count(MPI_Datatype t) {
  return t->n_basic;
}

std::size_t dt_pack(MPI_Datatype t, const void* buf, std::size_t count, void* out) {
  char* end = copy_elements<true>(*t, buf, count, static_cast<char*>(out));
  return static_cast<std::size_t>(end - static_cast<char*>(out));
}

std::size_t dt_unpack(MPI_Datatype t, const void* in, std::size_t bytes, void* buf,
                      std::size_t count) {
  bytes = std::min(bytes, count * t->size);
  copy_range<false>(*t, buf, 0, bytes, const_cast<char*>(static_cast<const char*>(in)));
  return bytes;
}

void dt_pack_range(MPI_Datatype t, const void* buf, std::size_t first, std::size_t bytes,
                   void* out) {
  copy_range<true>(*t, buf, first, bytes, static_cast<char*>(out));
}

void dt_unpack_range(MPI_Datatype t, const void* in, std::size_t first, std::size_t bytes,
                     void* buf) {
  copy_range<false>(*t, buf, first, bytes, const_cast<char*>(static_cast<const char*>(in)));
}

std::size_t dt_elements(MPI_Datatype t, std::size_t bytes) {
  if (t->size == 0) return 0;
  std::size_t n = (bytes / t->size) * t->n_basic;
  std::size_t rest = bytes % t->size;
  if (rest == 0) return n;
  std::size_t unit_bytes = 0, unit_count = 0;
  for (const SigRun& s : t->sig) unit_bytes += s.size * s.count, unit_count += s.count;
  n += (rest / unit_bytes) * unit_count;
  rest %= unit_bytes;
  for (const SigRun& s : t->sig) {
    std::size_t take = rest / s.size;
    if (take < s.count) {
      n += take;
      rest -= take * s.size;
      break;
    }
    n += s.count;
    rest -= s.count * s.size;
  }
  return rest == 0 ? n : SIZE_MAX;
}

int dt_check(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return MPI_ERR_TYPE;
  if (!t->predefined && !t->committed) return MPI_ERR_TYPE;
  return MPI_SUCCESS;
}

}  // namespace sluice::mpi

sluice_datatype_s::~sluice_datatype_s() {
  for (MPI_Datatype t : args_type) sluice::mpi::dt_release(t);
}

namespace sluice::mpi {

// ---- constructors -------------------------------------------------------------------------

MPI_Datatype dt_contiguous(std::size_t count, MPI_Datatype old) {
  return build_strided(MPI_COMBINER_CONTIGUOUS, 1, count, 0, *old);
}

MPI_Datatype dt_hvector(std::size_t count, std::size_t blocklength, MPI_Aint stride_bytes,
                        MPI_Datatype old, int combiner) {
  return build_strided(combiner, count, blocklength, stride_bytes, *old);
}

MPI_Datatype dt_hindexed(std::size_t count, const std::size_t* blocklengths,
                         const MPI_Aint* displacements_bytes, MPI_Datatype old, int combiner) {
  std::vector<Placement> ps;
  ps.reserve(count);
  for (std::size_t i = 0; i < count; ++i)
    ps.push_back({displacements_bytes[i], blocklengths[i], old});
  return build(combiner, ps);
}

MPI_Datatype dt_struct(std::size_t count, const std::size_t* blocklengths,
                       const MPI_Aint* displacements, const MPI_Datatype* types) {
  std::vector<Placement> ps;
  ps.reserve(count);
  for (std::size_t i = 0; i < count; ++i)
    ps.push_back({displacements[i], blocklengths[i], types[i]});
  Type* t = build(MPI_COMBINER_STRUCT, ps);
  // MPI-3.1 §4.1.6: the extent is padded to the strictest alignment of the members, as the
  // C compiler pads a struct, unless a member carries explicitly set bounds.
  if (!t->explicit_bounds && t->align > 1) {
    MPI_Aint a = static_cast<MPI_Aint>(t->align);
    MPI_Aint rem = ((t->extent() % a) + a) % a;
    if (rem != 0) t->ub += a - rem;
    finish(*t);
  }
  return t;
}

MPI_Datatype dt_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent) {
  Type* t = dt_dup(old);
  t->combiner = MPI_COMBINER_RESIZED;
  t->committed = false;
  t->lb = lb;
  t->ub = lb + extent;
  t->explicit_bounds = true;
  finish(*t);
  return t;
}

MPI_Datatype dt_subarray(int ndims, const MPI_Count* sizes, const MPI_Count* subsizes,
                         const MPI_Count* starts, int order, MPI_Datatype old) {
  // Work in C order (last dimension fastest); Fortran order is the reversed dimensions.
  std::vector<std::size_t> size(ndims), sub(ndims), start(ndims);
  for (int d = 0; d < ndims; ++d) {
    int src = order == MPI_ORDER_C ? d : ndims - 1 - d;
    size[d] = static_cast<std::size_t>(sizes[src]);
    sub[d] = static_cast<std::size_t>(subsizes[src]);
    start[d] = static_cast<std::size_t>(starts[src]);
  }
  const MPI_Aint ext = old->extent();
  // Byte stride of each dimension in the full array.
  std::vector<MPI_Aint> stride(ndims);
  MPI_Aint s = ext;
  for (int d = ndims - 1; d >= 0; --d) stride[d] = s, s *= static_cast<MPI_Aint>(size[d]);
  const MPI_Aint full_extent = s;
  // One placement per row of the innermost dimension, in C order.
  std::size_t rows = 1;
  for (int d = 0; d + 1 < ndims; ++d) rows *= sub[d];
  std::vector<Placement> ps;
  ps.reserve(rows);
  std::vector<std::size_t> idx(ndims, 0);
  for (std::size_t r = 0; r < rows && sub[ndims - 1] > 0; ++r) {
    MPI_Aint disp = 0;
    for (int d = 0; d < ndims; ++d) disp += static_cast<MPI_Aint>(start[d] + idx[d]) * stride[d];
    ps.push_back({disp, sub[ndims - 1], old});
    for (int d = ndims - 2; d >= 0; --d) {
      if (++idx[d] < sub[d]) break;
      idx[d] = 0;
    }
  }
  Type* inner = build(MPI_COMBINER_SUBARRAY, ps);
  Type* t = dt_resized(inner, 0, full_extent);
  dt_release(inner);
  t->combiner = MPI_COMBINER_SUBARRAY;
  return t;
}

MPI_Datatype dt_darray(int size, int rank, int ndims, const MPI_Count* gsizes, const int* distribs,
                       const MPI_Count* dargs, const int* psizes, int order, MPI_Datatype old) {
  // The process grid is row-major whatever the array's order (as MPI_Cart_create's).
  std::vector<int> coord(ndims);
  for (int d = ndims - 1, r = rank; d >= 0; --d) coord[d] = r % psizes[d], r /= psizes[d];
  (void)size;
  // Per dimension, in C order (last fastest): the runs of global indices this process holds,
  // increasing (block: one run; cyclic(k): every p-th run of k; none: the whole dimension).
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> held(ndims);  // (start, length)
  std::vector<MPI_Aint> stride(ndims);
  MPI_Aint s = old->extent();
  for (int d = ndims - 1; d >= 0; --d) {
    const int src = order == MPI_ORDER_C ? d : ndims - 1 - d;
    const auto g = static_cast<std::size_t>(gsizes[src]);
    const auto p = static_cast<std::size_t>(psizes[src]);
    const auto r = static_cast<std::size_t>(coord[src]);
    const auto k = static_cast<std::size_t>(dargs[src]);
    auto& runs = held[d];
    if (distribs[src] == MPI_DISTRIBUTE_NONE) {
      runs.emplace_back(0, g);
    } else if (distribs[src] == MPI_DISTRIBUTE_BLOCK) {
      if (r * k < g) runs.emplace_back(r * k, std::min(k, g - r * k));
    } else {
      for (std::size_t start = r * k; start < g; start += p * k)
        runs.emplace_back(start, std::min(k, g - start));
    }
    stride[d] = s;
    s *= static_cast<MPI_Aint>(g);
  }
  const MPI_Aint full_extent = s;
  // One placement per innermost run, the outer dimensions' held indices in increasing order:
  // the type map runs through the local block in array order.
  std::vector<std::vector<std::size_t>> outer(ndims);
  bool empty = false;
  for (int d = 0; d < ndims; ++d) {
    for (const auto& [start, len] : held[d])
      for (std::size_t i = 0; i < len; ++i) outer[d].push_back(start + i);
    empty = empty || outer[d].empty();
  }
  std::vector<Placement> ps;
  std::vector<std::size_t> idx(ndims, 0);
  while (!empty) {
    MPI_Aint base = 0;
    for (int d = 0; d + 1 < ndims; ++d) base += static_cast<MPI_Aint>(outer[d][idx[d]]) * stride[d];
    for (const auto& [start, len] : held[ndims - 1])
      ps.push_back({base + static_cast<MPI_Aint>(start) * stride[ndims - 1], len, old});
    int d = ndims - 2;
    for (; d >= 0; --d) {
      if (++idx[d] < outer[d].size()) break;
      idx[d] = 0;
    }
    if (d < 0) break;
  }
  Type* inner = build(MPI_COMBINER_DARRAY, ps);
  Type* t = dt_resized(inner, 0, full_extent);
  dt_release(inner);
  t->combiner = MPI_COMBINER_DARRAY;
  return t;
}

MPI_Datatype dt_dup(MPI_Datatype old) {
  auto* t = new Type;
  t->combiner = MPI_COMBINER_DUP;
  t->committed = old->committed;
  t->explicit_bounds = old->explicit_bounds;
  t->size = old->size;
  t->lb = old->lb, t->ub = old->ub, t->true_lb = old->true_lb, t->true_ub = old->true_ub;
  t->align = old->align;
  t->runs = old->runs;
  t->reps = old->reps;
  t->rep_stride = old->rep_stride;
  t->contiguous = old->contiguous;
  t->sig = old->sig;
  t->sig_reps = old->sig_reps;
  t->n_basic = old->n_basic;
  t->op_base = old->op_base;
  t->op_count = old->op_count;
  return t;
}

}  // namespace sluice::mpi
