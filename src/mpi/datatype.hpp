// MPI datatypes: the predefined types, the derived-type engine and the pack/unpack
// kernels the point-to-point and collective layers use.
//
// Every type is flattened when it is constructed (not at commit: an uncommitted type may
// be the child of another constructor, which needs its layout anyway; commit is then O(1))
// into a precompiled list of byte runs for one element: adjacent blocks merged, equal-length
// equally-spaced blocks folded into one strided run, and a regular repetition of a
// multi-run pattern kept as (runs x reps) instead of being expanded. Packing is then a loop
// of memcpy calls that never interprets the constructor tree. Derived types copy what they
// need from their children, so freeing a child never invalidates a parent; a type itself
// stays alive while anything holds a reference (dt_retain/dt_release), e.g. a pending
// request after MPI_Type_free.
//
// Extents follow MPI-3.1 §4.1: create_struct pads the extent to the strictest member
// alignment (as a C compiler pads a struct) unless a member has bounds set by
// create_resized; lb/ub of every constructor come from the members' lb/ub.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::mpi {

// What a reduction operator may do with a predefined type (MPI-3.1 §5.9.2 groups).
enum class TypeClass : std::uint8_t {
  none,       // derived types, MPI_WCHAR, MPI_PACKED, MPI_CHARACTER: no predefined op applies
  character,  // MPI_CHAR: MAX/MIN/SUM/PROD as a signed char, as Open MPI and MPICH allow
  c_integer,  // C integers, fixed-width integers, MPI_AINT/OFFSET/COUNT
  floating,   // float, double, long double
  complex,    // C complex types
  logical,    // MPI_C_BOOL
  byte,       // MPI_BYTE
  pair,       // MPI_2INT, MPI_FLOAT_INT, ... (MAXLOC/MINLOC)
};

// The machine representation of a predefined type: what the op kernels switch on.
enum class Scalar : std::uint8_t {
  none,
  i8,
  u8,
  i16,
  u16,
  i32,
  u32,
  i64,
  u64,
  f32,
  f64,
  f80,   // f80: x86 long double (16 bytes of storage)
  f128,  // IEEE binary128 (__float128): gfortran's REAL(16)
  i128,  // __int128: gfortran's INTEGER(16)
  c32,
  c64,
  c80,
  c128,  // complex of float, double, long double, binary128
  boolean,
  pair_float_int,
  pair_double_int,
  pair_long_int,
  pair_int_int,
  pair_short_int,
  pair_long_double_int,
  pair_float_float,    // MPI_2REAL
  pair_double_double,  // MPI_2DOUBLE_PRECISION
};

// `count` blocks of `length` bytes, the i-th at `offset + i * stride` (relative to the
// buffer address of an element).
struct Run {
  MPI_Aint offset;
  std::size_t length;
  std::size_t count;
  MPI_Aint stride;
};

// Basic-element signature, run-length encoded: `count` basic elements of `size` bytes.
struct SigRun {
  std::size_t size;
  std::size_t count;
};

}  // namespace sluice::mpi

// The object an MPI_Datatype points to.
struct sluice_datatype_s {
  std::atomic<long> refs{1};
  int combiner = MPI_COMBINER_NAMED;
  bool predefined = false;
  bool committed = false;
  bool explicit_bounds = false;  // lb/ub set by create_resized (suppresses struct padding)
  std::size_t size = 0;          // bytes of data in one element
  MPI_Aint lb = 0, ub = 0;
  MPI_Aint true_lb = 0, true_ub = 0;
  std::size_t align = 1;  // alignment used for create_struct's extent padding
  // Data of one element: `runs` repeated `reps` times at `rep_stride` bytes.
  std::vector<sluice::mpi::Run> runs;
  std::size_t reps = 1;
  MPI_Aint rep_stride = 0;
  bool contiguous = false;  // count elements are one run of count*size bytes at buf+true_lb
  // Basic elements of one element: `sig` repeated `sig_reps` times.
  std::vector<sluice::mpi::SigRun> sig;
  std::size_t sig_reps = 1;
  std::size_t n_basic = 0;  // basic elements per element
  // Reductions: set when one element is `op_count` consecutive `op_base` values starting
  // at true_lb (predefined types: op_base == this, op_count == 1).
  const sluice_datatype_s* op_base = nullptr;
  std::size_t op_count = 0;
  // Predefined types only.
  sluice::mpi::TypeClass type_class = sluice::mpi::TypeClass::none;
  sluice::mpi::Scalar scalar = sluice::mpi::Scalar::none;
  std::string name;  // MPI_Type_set_name; predefined types carry their MPI name
  // The constructor's arguments, for MPI_Type_get_envelope / MPI_Type_get_contents
  // (MPI-3.1 §4.1.13). Derived types among them are retained while this type lives.
  std::vector<int> args_int;
  std::vector<MPI_Aint> args_addr;
  std::vector<MPI_Datatype> args_type;
  // Types made by the MPI-4.0 large-count constructors (MPI_Type_vector_c ...) keep their
  // counts, block lengths and displacements here instead (MPI-4.0 §5.1.13's layout: the
  // integers left are ndims/order/size/rank/distribs/dargs/psizes); never empty for them.
  std::vector<MPI_Count> args_large;
  // User attributes (type_attr.cpp): (keyval, value) in the order set.
  std::vector<std::pair<int, void*>> attrs;

  sluice_datatype_s() = default;
  sluice_datatype_s(const sluice_datatype_s&) = delete;
  sluice_datatype_s& operator=(const sluice_datatype_s&) = delete;
  ~sluice_datatype_s();

  MPI_Aint extent() const { return ub - lb; }
};

namespace sluice::mpi {

// ---- contract used by point-to-point and collectives -------------------------------
// Inline (the point-to-point fast paths read them per message).
// count elements = one run of count*size bytes at buf+true_lb
inline bool dt_is_contiguous(MPI_Datatype t) {
  return t->contiguous;
}
// bytes of data in one element (MPI_Type_size)
inline std::size_t dt_size(MPI_Datatype t) {
  return t->size;
}
MPI_Aint dt_extent(MPI_Datatype);
inline MPI_Aint dt_true_lb(MPI_Datatype t) {
  return t->true_lb;
}
// Packs `count` elements at `buf` into `out`; returns bytes written (count*size).
std::size_t dt_pack(MPI_Datatype, const void* buf, std::size_t count, void* out);
// Unpacks min(bytes, count*size) bytes from `in` into `count` elements at `buf`;
// returns bytes consumed.
std::size_t dt_unpack(MPI_Datatype, const void* in, std::size_t bytes, void* buf,
                      std::size_t count);
// Basic elements in `bytes` of packed data (MPI_Get_elements); SIZE_MAX when `bytes`
// ends inside a basic element (the caller reports MPI_UNDEFINED).
std::size_t dt_elements(MPI_Datatype, std::size_t bytes);
// MPI_SUCCESS, or MPI_ERR_TYPE for a null or uncommitted derived type.
int dt_check(MPI_Datatype);

// ---- extras ----------------------------------------------------------------------------
// Fragments of the packed stream, for pipelining a large non-contiguous message without
// staging all of it: pack/unpack bytes [first, first + bytes) of the packed form of the
// elements at `buf` (first + bytes <= count * size for the caller's count). Fragment
// boundaries may fall anywhere, also inside a basic element.
void dt_pack_range(MPI_Datatype, const void* buf, std::size_t first, std::size_t bytes, void* out);
void dt_unpack_range(MPI_Datatype, const void* in, std::size_t first, std::size_t bytes, void* buf);
// Reference counting: a pending operation retains its datatype so MPI_Type_free may be
// called before it completes. No-ops on predefined types (inline: one test per message).
inline void dt_retain(MPI_Datatype t) {
  if (t && !t->predefined) t->refs.fetch_add(1, std::memory_order_relaxed);
}
inline void dt_release(MPI_Datatype t) {
  if (!t || t->predefined) return;
  if (t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete t;
}
MPI_Aint dt_true_extent(MPI_Datatype);
std::size_t dt_basic_count(MPI_Datatype);  // basic elements in one element

// ---- constructors (the MPI_Type_* bindings validate arguments, then call these) --------
// Each returns a new uncommitted type with one reference.
MPI_Datatype dt_contiguous(std::size_t count, MPI_Datatype old);
MPI_Datatype dt_hvector(std::size_t count, std::size_t blocklength, MPI_Aint stride_bytes,
                        MPI_Datatype old, int combiner);
MPI_Datatype dt_hindexed(std::size_t count, const std::size_t* blocklengths,
                         const MPI_Aint* displacements_bytes, MPI_Datatype old, int combiner);
MPI_Datatype dt_struct(std::size_t count, const std::size_t* blocklengths,
                       const MPI_Aint* displacements, const MPI_Datatype* types);
MPI_Datatype dt_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent);
// `order` is MPI_ORDER_C or MPI_ORDER_FORTRAN; arguments already validated.
MPI_Datatype dt_subarray(int ndims, const MPI_Count* sizes, const MPI_Count* subsizes,
                         const MPI_Count* starts, int order, MPI_Datatype old);
// The block of a distributed array one process holds (MPI-3.1 §4.1.4); arguments already
// validated, `dargs` resolved (no MPI_DISTRIBUTE_DFLT_DARG).
MPI_Datatype dt_darray(int size, int rank, int ndims, const MPI_Count* gsizes, const int* distribs,
                       const MPI_Count* dargs, const int* psizes, int order, MPI_Datatype old);
MPI_Datatype dt_dup(MPI_Datatype old);

}  // namespace sluice::mpi
