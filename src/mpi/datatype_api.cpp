// C bindings for datatypes, packing and user-defined reduction operators:
// argument checking and error reporting here, the work in datatype.cpp and op.cpp.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>
#include <vector>

#include "mpi/datatype.hpp"
#include "mpi/mpi_internal.hpp"
#include "mpi/op.hpp"

namespace sluice::mpi {
namespace {

// Errors go through the communicator's error handler; calls not tied to a communicator
// use MPI_COMM_WORLD's (MPI-3.1 §8.3), which raise() picks for a null comm.
int fail(const char* func, int code, const char* what, MPI_Comm comm = MPI_COMM_NULL) {
  return raise(comm, code, func, what);
}

// Checks shared by every constructor; `old` may be an uncommitted derived type.
int check_newtype(const char* func, MPI_Datatype old, MPI_Datatype* newtype) {
  if (old == MPI_DATATYPE_NULL) return fail(func, MPI_ERR_TYPE, "oldtype is MPI_DATATYPE_NULL");
  if (newtype == nullptr) return fail(func, MPI_ERR_ARG, "newtype is NULL");
  return MPI_SUCCESS;
}

int check_nonneg(const char* func, MPI_Count count) {
  return count < 0 ? raisef(MPI_COMM_NULL, MPI_ERR_COUNT, func, "count %lld is negative", count)
                   : MPI_SUCCESS;
}

int check_blocklength(const char* func, MPI_Count blocklength) {
  return blocklength < 0 ? raisef(MPI_COMM_NULL, MPI_ERR_ARG, func, "block length %lld is negative",
                                  blocklength)
                         : MPI_SUCCESS;
}

// The constructors are templates over their count type: int for the MPI-3.1 bindings,
// MPI_Count for the MPI-4.0 _c ones (which keep their arguments in args_large).
template <class T>
inline constexpr bool kLarge = std::is_same_v<T, MPI_Count>;

int check_committed(const char* func, MPI_Datatype t, MPI_Comm comm = MPI_COMM_NULL) {
  if (t == MPI_DATATYPE_NULL)
    return fail(func, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL", comm);
  if (dt_check(t) != MPI_SUCCESS) {
    return fail(func, MPI_ERR_TYPE, "datatype is not committed (call MPI_Type_commit)", comm);
  }
  return MPI_SUCCESS;
}

// Keeps a new type's constructor arguments for MPI_Type_get_contents.
void record_args(MPI_Datatype t, std::vector<int> ints, std::vector<MPI_Aint> addrs,
                 std::vector<MPI_Datatype> types, std::vector<MPI_Count> large = {});

// MPI_Type_create_f90_*: one type per distinct argument list, kept for the whole run (the
// standard makes them predefined: never freed), the layout of a sized Fortran type, its
// envelope the F90 combiner with the arguments.
MPI_Datatype f90_type(int combiner, std::vector<int> ints, MPI_Datatype base) {
  struct Made {
    std::mutex mu;
    std::map<std::pair<int, std::vector<int>>, MPI_Datatype> types;
    ~Made() {
      for (auto& [args, t] : types) dt_release(t);  // at exit: no program uses them any more
    }
  };
  static Made made;
  std::lock_guard lock(made.mu);
  MPI_Datatype& t = made.types[{combiner, ints}];
  if (!t) {
    t = dt_dup(base);
    t->combiner = combiner;
    t->committed = true;
    t->args_int = std::move(ints);
  }
  return t;
}

// SELECTED_REAL_KIND(p, r) among the 4- and 8-byte kinds (precision 6 and 15 digits, range
// 37 and 307); MPI_UNDEFINED leaves p or r free. Null when neither suffices.
// SELECTED_REAL_KIND(p, r) of gfortran on x86-64: REAL(4), (8), (10) — the x87 format of
// C's long double — and (16), IEEE binary128.
MPI_Datatype f90_real_base(int p, int r, MPI_Datatype four, MPI_Datatype eight, MPI_Datatype ten,
                           MPI_Datatype sixteen) {
  if (p == MPI_UNDEFINED) p = 0;
  if (r == MPI_UNDEFINED) r = 0;
  if (p <= 6 && r <= 37) return four;
  if (p <= 15 && r <= 307) return eight;
  if (p <= 18 && r <= 4931) return ten;
  if (p <= 33 && r <= 4931) return sixteen;
  return MPI_DATATYPE_NULL;
}

void record_args(MPI_Datatype t, std::vector<int> ints, std::vector<MPI_Aint> addrs,
                 std::vector<MPI_Datatype> types, std::vector<MPI_Count> large) {
  for (MPI_Datatype d : types) dt_retain(d);
  t->args_int = std::move(ints);
  t->args_addr = std::move(addrs);
  t->args_type = std::move(types);
  t->args_large = std::move(large);
}

// Blocks given in units of old's extent, converted to bytes for the engine. T: the count
// type (int or MPI_Count); D: the displacement type (int or T for element displacements,
// MPI_Aint or MPI_Count for byte displacements).
template <class T, class D>
int indexed(const char* func, T count, const T* blocklengths, const D* displacements,
            bool disp_in_bytes, MPI_Datatype old, MPI_Datatype* newtype, int combiner,
            T single_blocklength = -1) {
  if (int rc = check_nonneg(func, count)) return rc;
  if (int rc = check_newtype(func, old, newtype)) return rc;
  if (count > 0 && displacements == nullptr) {
    return fail(func, MPI_ERR_ARG, "array_of_displacements is NULL");
  }
  if (count > 0 && single_blocklength < 0 && blocklengths == nullptr) {
    return fail(func, MPI_ERR_ARG, "array_of_blocklengths is NULL");
  }
  const auto n = static_cast<std::size_t>(count);
  std::vector<std::size_t> lengths(n);
  std::vector<MPI_Aint> disps(n);
  const MPI_Aint extent = dt_extent(old);
  for (std::size_t i = 0; i < n; ++i) {
    const T len = single_blocklength >= 0 ? single_blocklength : blocklengths[i];
    if (int rc = check_blocklength(func, len)) return rc;
    lengths[i] = static_cast<std::size_t>(len);
    disps[i] = disp_in_bytes ? static_cast<MPI_Aint>(displacements[i])
                             : static_cast<MPI_Aint>(displacements[i]) * extent;
  }
  *newtype = dt_hindexed(n, lengths.data(), disps.data(), old, combiner);
  // The envelope (MPI-3.1 §4.1.13, MPI-4.0 §5.1.13): count, block length(s), displacements;
  // byte displacements are addresses, except for the large-count constructors.
  std::vector<T> counts{count};
  if (single_blocklength >= 0)
    counts.push_back(single_blocklength);
  else
    counts.insert(counts.end(), blocklengths, blocklengths + n);
  std::vector<MPI_Aint> addrs;
  if (kLarge<T> || !disp_in_bytes)
    counts.insert(counts.end(), displacements, displacements + n);
  else
    addrs.assign(displacements, displacements + n);
  if constexpr (kLarge<T>)
    record_args(*newtype, {}, {}, {old}, std::move(counts));
  else
    record_args(*newtype, std::move(counts), std::move(addrs), {old});
  return MPI_SUCCESS;
}

template <class T>
int contiguous(const char* f, T count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (int rc = check_nonneg(f, count)) return rc;
  if (int rc = check_newtype(f, oldtype, newtype)) return rc;
  *newtype = dt_contiguous(static_cast<std::size_t>(count), oldtype);
  if constexpr (kLarge<T>)
    record_args(*newtype, {}, {}, {oldtype}, {count});
  else
    record_args(*newtype, {count}, {}, {oldtype});
  return MPI_SUCCESS;
}

// Vector (stride in elements of oldtype) and hvector (stride in bytes: S is MPI_Aint, or
// MPI_Count for the _c form).
template <class T, class S>
int vector_type(const char* f, T count, T blocklength, S stride, bool stride_in_bytes,
                MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (int rc = check_nonneg(f, count)) return rc;
  if (int rc = check_blocklength(f, blocklength)) return rc;
  if (int rc = check_newtype(f, oldtype, newtype)) return rc;
  const MPI_Aint bytes = stride_in_bytes ? static_cast<MPI_Aint>(stride)
                                         : static_cast<MPI_Aint>(stride) * dt_extent(oldtype);
  *newtype =
      dt_hvector(static_cast<std::size_t>(count), static_cast<std::size_t>(blocklength), bytes,
                 oldtype, stride_in_bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR);
  if constexpr (kLarge<T>)
    record_args(*newtype, {}, {}, {oldtype}, {count, blocklength, stride});
  else if (stride_in_bytes)
    record_args(*newtype, {count, blocklength}, {static_cast<MPI_Aint>(stride)}, {oldtype});
  else
    record_args(*newtype, {count, blocklength, static_cast<int>(stride)}, {}, {oldtype});
  return MPI_SUCCESS;
}

template <class T, class D>
int create_struct(const char* f, T count, const T array_of_blocklengths[],
                  const D array_of_displacements[], const MPI_Datatype array_of_types[],
                  MPI_Datatype* newtype) {
  if (int rc = check_nonneg(f, count)) return rc;
  if (newtype == nullptr) return fail(f, MPI_ERR_ARG, "newtype is NULL");
  if (count > 0 && (!array_of_blocklengths || !array_of_displacements || !array_of_types)) {
    return fail(f, MPI_ERR_ARG, "an argument array is NULL");
  }
  const auto n = static_cast<std::size_t>(count);
  std::vector<std::size_t> lengths(n);
  std::vector<MPI_Aint> disps(array_of_displacements, array_of_displacements + n);
  for (std::size_t i = 0; i < n; ++i) {
    if (int rc = check_blocklength(f, array_of_blocklengths[i])) return rc;
    if (array_of_types[i] == MPI_DATATYPE_NULL) {
      return fail(f, MPI_ERR_TYPE, "array_of_types contains MPI_DATATYPE_NULL");
    }
    lengths[i] = static_cast<std::size_t>(array_of_blocklengths[i]);
  }
  *newtype = dt_struct(n, lengths.data(), disps.data(), array_of_types);
  std::vector<T> counts{count};
  counts.insert(counts.end(), array_of_blocklengths, array_of_blocklengths + n);
  if constexpr (kLarge<T>) {
    counts.insert(counts.end(), array_of_displacements, array_of_displacements + n);
    record_args(*newtype, {}, {}, {array_of_types, array_of_types + n}, std::move(counts));
  } else {
    record_args(*newtype, std::move(counts), std::move(disps),
                {array_of_types, array_of_types + n});
  }
  return MPI_SUCCESS;
}

template <class T>
int subarray(const char* f, int ndims, const T array_of_sizes[], const T array_of_subsizes[],
             const T array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (ndims <= 0) return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f, "ndims %d must be positive", ndims);
  if (int rc = check_newtype(f, oldtype, newtype)) return rc;
  if (!array_of_sizes || !array_of_subsizes || !array_of_starts) {
    return fail(f, MPI_ERR_ARG, "an argument array is NULL");
  }
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) {
    return fail(f, MPI_ERR_ARG, "order is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN");
  }
  for (int d = 0; d < ndims; ++d) {
    const auto size = static_cast<long long>(array_of_sizes[d]);
    const auto sub = static_cast<long long>(array_of_subsizes[d]);
    const auto start = static_cast<long long>(array_of_starts[d]);
    if (size <= 0) {
      return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f, "array_of_sizes[%d] = %lld must be positive", d,
                    size);
    }
    if (sub < 0 || sub > size) {
      return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f, "array_of_subsizes[%d] = %lld outside [0, %lld]",
                    d, sub, size);
    }
    if (start < 0 || start > size - sub) {
      return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f,
                    "array_of_starts[%d] = %lld with subsize %lld exceeds array size %lld", d,
                    start, sub, size);
    }
  }
  std::vector<MPI_Count> dims;  // sizes, subsizes, starts
  for (const T* a : {array_of_sizes, array_of_subsizes, array_of_starts})
    dims.insert(dims.end(), a, a + ndims);
  *newtype =
      dt_subarray(ndims, dims.data(), dims.data() + ndims, dims.data() + 2 * ndims, order, oldtype);
  if constexpr (kLarge<T>) {
    record_args(*newtype, {ndims, order}, {}, {oldtype}, std::move(dims));
  } else {
    std::vector<int> ints{ndims};
    ints.insert(ints.end(), dims.begin(), dims.end());
    ints.push_back(order);
    record_args(*newtype, std::move(ints), {}, {oldtype});
  }
  return MPI_SUCCESS;
}

// G: the type of the global sizes (int, or MPI_Count for the _c form).
template <class G>
int darray(const char* f, int size, int rank, int ndims, const G array_of_gsizes[],
           const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
           int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (size <= 0) return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f, "size %d must be positive", size);
  if (rank < 0 || rank >= size)
    return raisef(MPI_COMM_NULL, MPI_ERR_RANK, f, "rank %d outside [0, %d)", rank, size);
  if (ndims <= 0) return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f, "ndims %d must be positive", ndims);
  if (int rc = check_newtype(f, oldtype, newtype)) return rc;
  if (!array_of_gsizes || !array_of_distribs || !array_of_dargs || !array_of_psizes)
    return fail(f, MPI_ERR_ARG, "an argument array is NULL");
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
    return fail(f, MPI_ERR_ARG, "order is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN");
  std::vector<MPI_Count> gsizes(array_of_gsizes, array_of_gsizes + ndims), dargs(ndims);
  long long procs = 1;
  for (int d = 0; d < ndims; ++d) {
    const long long g = gsizes[d];
    const int p = array_of_psizes[d], dist = array_of_distribs[d];
    const int darg = array_of_dargs[d];
    if (g <= 0 || p <= 0)
      return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f,
                    "array_of_gsizes[%d] = %lld and array_of_psizes[%d] = %d must be positive", d,
                    g, d, p);
    procs *= p;
    if (dist == MPI_DISTRIBUTE_NONE) {
      if (p != 1)
        return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f,
                      "dimension %d is not distributed (MPI_DISTRIBUTE_NONE) over %d processes", d,
                      p);
      dargs[d] = g;
    } else if (dist == MPI_DISTRIBUTE_BLOCK || dist == MPI_DISTRIBUTE_CYCLIC) {
      if (darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0)
        return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f, "array_of_dargs[%d] = %d must be positive", d,
                      darg);
      if (dist == MPI_DISTRIBUTE_BLOCK) {
        // Default: ceil(g / p); a given block size must cover the dimension.
        dargs[d] = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
        if (dargs[d] * p < g)
          return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f,
                        "dimension %d: %d blocks of %lld do not cover its %lld elements", d, p,
                        dargs[d], g);
      } else {
        dargs[d] = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
      }
    } else {
      return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f, "array_of_distribs[%d] = %d is no distribution",
                    d, dist);
    }
  }
  if (procs != size)
    return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f, "the process grid has %lld processes, size is %d",
                  procs, size);
  *newtype = dt_darray(size, rank, ndims, gsizes.data(), array_of_distribs, dargs.data(),
                       array_of_psizes, order, oldtype);
  // MPI-4.0 §5.1.13: the large-count form keeps the global sizes as large counts.
  std::vector<int> ints{size, rank, ndims};
  if constexpr (!kLarge<G>) ints.insert(ints.end(), array_of_gsizes, array_of_gsizes + ndims);
  for (const int* a : {array_of_distribs, array_of_dargs, array_of_psizes})
    ints.insert(ints.end(), a, a + ndims);
  ints.push_back(order);
  if constexpr (kLarge<G>)
    record_args(*newtype, std::move(ints), {}, {oldtype}, std::move(gsizes));
  else
    record_args(*newtype, std::move(ints), {}, {oldtype});
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace sluice::mpi

using namespace sluice::mpi;

extern "C" {

// ---- constructors ------------------------------------------------------------------------

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return contiguous("MPI_Type_contiguous", count, oldtype, newtype);
}

int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return contiguous("MPI_Type_contiguous_c", count, oldtype, newtype);
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype* newtype) {
  return vector_type("MPI_Type_vector", count, blocklength, stride, false, oldtype, newtype);
}

int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                       MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return vector_type("MPI_Type_vector_c", count, blocklength, stride, false, oldtype, newtype);
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
  return vector_type("MPI_Type_create_hvector", count, blocklength, stride, true, oldtype, newtype);
}

int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                               MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return vector_type("MPI_Type_create_hvector_c", count, blocklength, stride, true, oldtype,
                     newtype);
}

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype* newtype) {
  return indexed("MPI_Type_indexed", count, array_of_blocklengths, array_of_displacements, false,
                 oldtype, newtype, MPI_COMBINER_INDEXED);
}

int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                        const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                        MPI_Datatype* newtype) {
  return indexed("MPI_Type_indexed_c", count, array_of_blocklengths, array_of_displacements, false,
                 oldtype, newtype, MPI_COMBINER_INDEXED);
}

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype* newtype) {
  return indexed("MPI_Type_create_hindexed", count, array_of_blocklengths, array_of_displacements,
                 true, oldtype, newtype, MPI_COMBINER_HINDEXED);
}

int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                MPI_Datatype* newtype) {
  return indexed("MPI_Type_create_hindexed_c", count, array_of_blocklengths, array_of_displacements,
                 true, oldtype, newtype, MPI_COMBINER_HINDEXED);
}

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype* newtype) {
  constexpr const char* f = "MPI_Type_create_indexed_block";
  if (int rc = check_blocklength(f, blocklength)) return rc;
  return indexed(f, count, static_cast<const int*>(nullptr), array_of_displacements, false, oldtype,
                 newtype, MPI_COMBINER_INDEXED_BLOCK, blocklength);
}

int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                     const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                     MPI_Datatype* newtype) {
  constexpr const char* f = "MPI_Type_create_indexed_block_c";
  if (int rc = check_blocklength(f, blocklength)) return rc;
  return indexed(f, count, static_cast<const MPI_Count*>(nullptr), array_of_displacements, false,
                 oldtype, newtype, MPI_COMBINER_INDEXED_BLOCK, blocklength);
}

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype* newtype) {
  constexpr const char* f = "MPI_Type_create_hindexed_block";
  if (int rc = check_blocklength(f, blocklength)) return rc;
  return indexed(f, count, static_cast<const int*>(nullptr), array_of_displacements, true, oldtype,
                 newtype, MPI_COMBINER_HINDEXED_BLOCK, blocklength);
}

int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                      const MPI_Count array_of_displacements[],
                                      MPI_Datatype oldtype, MPI_Datatype* newtype) {
  constexpr const char* f = "MPI_Type_create_hindexed_block_c";
  if (int rc = check_blocklength(f, blocklength)) return rc;
  return indexed(f, count, static_cast<const MPI_Count*>(nullptr), array_of_displacements, true,
                 oldtype, newtype, MPI_COMBINER_HINDEXED_BLOCK, blocklength);
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  return create_struct("MPI_Type_create_struct", count, array_of_blocklengths,
                       array_of_displacements, array_of_types, newtype);
}

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[],
                              const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  return create_struct("MPI_Type_create_struct_c", count, array_of_blocklengths,
                       array_of_displacements, array_of_types, newtype);
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype* newtype) {
  if (int rc = check_newtype("MPI_Type_create_resized", oldtype, newtype)) return rc;
  *newtype = dt_resized(oldtype, lb, extent);
  record_args(*newtype, {}, {lb, extent}, {oldtype});
  return MPI_SUCCESS;
}

int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                               MPI_Datatype* newtype) {
  if (int rc = check_newtype("MPI_Type_create_resized_c", oldtype, newtype)) return rc;
  *newtype = dt_resized(oldtype, static_cast<MPI_Aint>(lb), static_cast<MPI_Aint>(extent));
  record_args(*newtype, {}, {}, {oldtype}, {lb, extent});
  return MPI_SUCCESS;
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype* newtype) {
  return subarray("MPI_Type_create_subarray", ndims, array_of_sizes, array_of_subsizes,
                  array_of_starts, order, oldtype, newtype);
}

int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                                const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                                MPI_Datatype* newtype) {
  return subarray("MPI_Type_create_subarray_c", ndims, array_of_sizes, array_of_subsizes,
                  array_of_starts, order, oldtype, newtype);
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype* newtype) {
  return darray("MPI_Type_create_darray", size, rank, ndims, array_of_gsizes, array_of_distribs,
                array_of_dargs, array_of_psizes, order, oldtype, newtype);
}

int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[], const int array_of_dargs[],
                              const int array_of_psizes[], int order, MPI_Datatype oldtype,
                              MPI_Datatype* newtype) {
  return darray("MPI_Type_create_darray_c", size, rank, ndims, array_of_gsizes, array_of_distribs,
                array_of_dargs, array_of_psizes, order, oldtype, newtype);
}

int PMPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
  constexpr const char* f = "MPI_Type_create_f90_integer";
  if (!newtype) return fail(f, MPI_ERR_ARG, "newtype is NULL");
  // SELECTED_INT_KIND(r): the smallest integer with at least r decimal digits.
  const MPI_Datatype base = r <= 2    ? MPI_INTEGER1
                            : r <= 4  ? MPI_INTEGER2
                            : r <= 9  ? MPI_INTEGER4
                            : r <= 18 ? MPI_INTEGER8
                            : r <= 38 ? MPI_INTEGER16
                                      : MPI_DATATYPE_NULL;
  if (!base)
    return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f,
                  "no integer of %d decimal digits (at most 38: MPI_INTEGER16)", r);
  *newtype = f90_type(MPI_COMBINER_F90_INTEGER, {r}, base);
  return MPI_SUCCESS;
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
  constexpr const char* f = "MPI_Type_create_f90_real";
  if (!newtype) return fail(f, MPI_ERR_ARG, "newtype is NULL");
  const MPI_Datatype base = f90_real_base(p, r, MPI_REAL4, MPI_REAL8, MPI_LONG_DOUBLE, MPI_REAL16);
  if (!base)
    return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f,
                  "no real of precision %d and range %d (at most 33 and 4931: MPI_REAL16)", p, r);
  *newtype = f90_type(MPI_COMBINER_F90_REAL, {p, r}, base);
  return MPI_SUCCESS;
}

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
  constexpr const char* f = "MPI_Type_create_f90_complex";
  if (!newtype) return fail(f, MPI_ERR_ARG, "newtype is NULL");
  const MPI_Datatype base =
      f90_real_base(p, r, MPI_COMPLEX8, MPI_COMPLEX16, MPI_C_LONG_DOUBLE_COMPLEX, MPI_COMPLEX32);
  if (!base)
    return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f,
                  "no complex of precision %d and range %d (at most 33 and 4931: MPI_COMPLEX32)", p,
                  r);
  *newtype = f90_type(MPI_COMBINER_F90_COMPLEX, {p, r}, base);
  return MPI_SUCCESS;
}

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
  constexpr const char* f = "MPI_Type_match_size";
  if (!datatype) return fail(f, MPI_ERR_ARG, "datatype is NULL");
  MPI_Datatype found = MPI_DATATYPE_NULL;
  switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
      found = size == 1    ? MPI_INTEGER1
              : size == 2  ? MPI_INTEGER2
              : size == 4  ? MPI_INTEGER4
              : size == 8  ? MPI_INTEGER8
              : size == 16 ? MPI_INTEGER16
                           : MPI_DATATYPE_NULL;
      break;
    case MPI_TYPECLASS_REAL:
      found = size == 4    ? MPI_REAL4
              : size == 8  ? MPI_REAL8
              : size == 16 ? MPI_REAL16
                           : MPI_DATATYPE_NULL;
      break;
    case MPI_TYPECLASS_COMPLEX:
      found = size == 8    ? MPI_COMPLEX8
              : size == 16 ? MPI_COMPLEX16
              : size == 32 ? MPI_COMPLEX32
                           : MPI_DATATYPE_NULL;
      break;
    default:
      return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f, "typeclass %d is no MPI_TYPECLASS_", typeclass);
  }
  if (!found)
    return raisef(MPI_COMM_NULL, MPI_ERR_ARG, f, "no type of class %d with %d bytes", typeclass,
                  size);
  *datatype = found;
  return MPI_SUCCESS;
}

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (int rc = check_newtype("MPI_Type_dup", oldtype, newtype)) return rc;
  *newtype = dt_dup(oldtype);
  record_args(*newtype, {}, {}, {oldtype});
  if (int rc = type_copy_attrs(oldtype, *newtype)) {
    dt_release(*newtype);
    *newtype = MPI_DATATYPE_NULL;
    return fail("MPI_Type_dup", rc, "attribute copy callback failed");
  }
  return MPI_SUCCESS;
}

static int get_envelope(const char* f, MPI_Datatype datatype, MPI_Count* num_integers,
                        MPI_Count* num_addresses, MPI_Count* num_large_counts,
                        MPI_Count* num_datatypes, int* combiner) {
  if (datatype == MPI_DATATYPE_NULL) return fail(f, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  if (!num_integers || !num_addresses || !num_datatypes || !combiner)
    return fail(f, MPI_ERR_ARG, "an output argument is NULL");
  *num_integers = static_cast<MPI_Count>(datatype->args_int.size());
  *num_addresses = static_cast<MPI_Count>(datatype->args_addr.size());
  *num_large_counts = static_cast<MPI_Count>(datatype->args_large.size());
  *num_datatypes = static_cast<MPI_Count>(datatype->args_type.size());
  *combiner = datatype->predefined ? MPI_COMBINER_NAMED : datatype->combiner;
  return MPI_SUCCESS;
}

int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses,
                           int* num_datatypes, int* combiner) {
  constexpr const char* f = "MPI_Type_get_envelope";
  MPI_Count ni = 0, na = 0, nc = 0, nd = 0;
  if (!num_integers || !num_addresses || !num_datatypes)
    return fail(f, MPI_ERR_ARG, "an output argument is NULL");
  if (int rc = get_envelope(f, datatype, &ni, &na, &nc, &nd, combiner)) return rc;
  // A type made by a large-count constructor has arguments only the _c form returns.
  if (nc > 0)
    return fail(
        f, MPI_ERR_TYPE,
        "the datatype was built by a large-count constructor (use MPI_Type_get_envelope_c)");
  *num_integers = static_cast<int>(ni);
  *num_addresses = static_cast<int>(na);
  *num_datatypes = static_cast<int>(nd);
  return MPI_SUCCESS;
}

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count* num_integers,
                             MPI_Count* num_addresses, MPI_Count* num_large_counts,
                             MPI_Count* num_datatypes, int* combiner) {
  constexpr const char* f = "MPI_Type_get_envelope_c";
  if (!num_large_counts) return fail(f, MPI_ERR_ARG, "an output argument is NULL");
  return get_envelope(f, datatype, num_integers, num_addresses, num_large_counts, num_datatypes,
                      combiner);
}

static int get_contents(const char* f, MPI_Datatype datatype, MPI_Count max_integers,
                        MPI_Count max_addresses, MPI_Count max_large_counts,
                        MPI_Count max_datatypes, int array_of_integers[],
                        MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                        MPI_Datatype array_of_datatypes[]) {
  if (datatype == MPI_DATATYPE_NULL) return fail(f, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  if (datatype->predefined)
    return fail(f, MPI_ERR_TYPE,
                "a predefined datatype has no contents (combiner MPI_COMBINER_NAMED)");
  const auto& ints = datatype->args_int;
  const auto& addrs = datatype->args_addr;
  const auto& large = datatype->args_large;
  const auto& types = datatype->args_type;
  if (max_integers < static_cast<MPI_Count>(ints.size()) ||
      max_addresses < static_cast<MPI_Count>(addrs.size()) ||
      max_large_counts < static_cast<MPI_Count>(large.size()) ||
      max_datatypes < static_cast<MPI_Count>(types.size()))
    return fail(f, MPI_ERR_ARG, "an output array is smaller than MPI_Type_get_envelope said");
  if ((!ints.empty() && !array_of_integers) || (!addrs.empty() && !array_of_addresses) ||
      (!large.empty() && !array_of_large_counts) || (!types.empty() && !array_of_datatypes))
    return fail(f, MPI_ERR_ARG, "an output array is NULL");
  std::copy(ints.begin(), ints.end(), array_of_integers);
  std::copy(addrs.begin(), addrs.end(), array_of_addresses);
  std::copy(large.begin(), large.end(), array_of_large_counts);
  // Derived types come back as new references the caller frees (MPI-3.1 §4.1.13).
  for (std::size_t i = 0; i < types.size(); ++i) {
    dt_retain(types[i]);
    array_of_datatypes[i] = types[i];
  }
  return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]) {
  constexpr const char* f = "MPI_Type_get_contents";
  if (datatype != MPI_DATATYPE_NULL && !datatype->args_large.empty())
    return fail(
        f, MPI_ERR_TYPE,
        "the datatype was built by a large-count constructor (use MPI_Type_get_contents_c)");
  return get_contents(f, datatype, max_integers, max_addresses, 0, max_datatypes, array_of_integers,
                      array_of_addresses, nullptr, array_of_datatypes);
}

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count max_large_counts, MPI_Count max_datatypes,
                             int array_of_integers[], MPI_Aint array_of_addresses[],
                             MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[]) {
  return get_contents("MPI_Type_get_contents_c", datatype, max_integers, max_addresses,
                      max_large_counts, max_datatypes, array_of_integers, array_of_addresses,
                      array_of_large_counts, array_of_datatypes);
}

int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  constexpr const char* f = "MPI_Type_set_name";
  if (datatype == MPI_DATATYPE_NULL) return fail(f, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  if (type_name == nullptr) return fail(f, MPI_ERR_ARG, "type_name is NULL");
  datatype->name.assign(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  constexpr const char* f = "MPI_Type_get_name";
  if (datatype == MPI_DATATYPE_NULL) return fail(f, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  if (type_name == nullptr || resultlen == nullptr)
    return fail(f, MPI_ERR_ARG, "type_name or resultlen is NULL");
  std::snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s", datatype->name.c_str());
  *resultlen = static_cast<int>(std::strlen(type_name));
  return MPI_SUCCESS;
}

int PMPI_Type_commit(MPI_Datatype* datatype) {
  constexpr const char* f = "MPI_Type_commit";
  if (datatype == nullptr || *datatype == MPI_DATATYPE_NULL) {
    return fail(f, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  }
  // Flattening already happened at construction; commit only marks the type usable.
  if (!(*datatype)->predefined) (*datatype)->committed = true;
  return MPI_SUCCESS;
}

int PMPI_Type_free(MPI_Datatype* datatype) {
  constexpr const char* f = "MPI_Type_free";
  if (datatype == nullptr || *datatype == MPI_DATATYPE_NULL) {
    return fail(f, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  }
  if ((*datatype)->predefined) return fail(f, MPI_ERR_TYPE, "cannot free a predefined datatype");
  if (int rc = type_delete_attrs(*datatype)) return fail(f, rc, "attribute delete callback failed");
  dt_release(*datatype);
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

// ---- queries ----------------------------------------------------------------------------------

int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  constexpr const char* f = "MPI_Type_size";
  if (datatype == MPI_DATATYPE_NULL) return fail(f, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  if (size == nullptr) return fail(f, MPI_ERR_ARG, "size is NULL");
  std::size_t s = dt_size(datatype);
  *size = s > INT_MAX ? MPI_UNDEFINED : static_cast<int>(s);
  return MPI_SUCCESS;
}

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  constexpr const char* f = "MPI_Type_size_x";
  if (datatype == MPI_DATATYPE_NULL) return fail(f, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  if (size == nullptr) return fail(f, MPI_ERR_ARG, "size is NULL");
  *size = static_cast<MPI_Count>(dt_size(datatype));
  return MPI_SUCCESS;
}

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count* size) {
  constexpr const char* f = "MPI_Type_size_c";
  if (datatype == MPI_DATATYPE_NULL) return fail(f, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  if (size == nullptr) return fail(f, MPI_ERR_ARG, "size is NULL");
  *size = static_cast<MPI_Count>(dt_size(datatype));
  return MPI_SUCCESS;
}

int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  constexpr const char* f = "MPI_Type_get_extent_c";
  if (datatype == MPI_DATATYPE_NULL) return fail(f, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  if (!lb || !extent) return fail(f, MPI_ERR_ARG, "lb or extent is NULL");
  *lb = datatype->lb;
  *extent = datatype->extent();
  return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  constexpr const char* f = "MPI_Type_get_true_extent_c";
  if (datatype == MPI_DATATYPE_NULL) return fail(f, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  if (!true_lb || !true_extent) return fail(f, MPI_ERR_ARG, "true_lb or true_extent is NULL");
  *true_lb = dt_true_lb(datatype);
  *true_extent = dt_true_extent(datatype);
  return MPI_SUCCESS;
}

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  constexpr const char* f = "MPI_Type_get_extent";
  if (datatype == MPI_DATATYPE_NULL) return fail(f, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  if (!lb || !extent) return fail(f, MPI_ERR_ARG, "lb or extent is NULL");
  *lb = datatype->lb;
  *extent = datatype->extent();
  return MPI_SUCCESS;
}

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  constexpr const char* f = "MPI_Type_get_extent_x";
  if (datatype == MPI_DATATYPE_NULL) return fail(f, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  if (!lb || !extent) return fail(f, MPI_ERR_ARG, "lb or extent is NULL");
  *lb = datatype->lb;
  *extent = datatype->extent();
  return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  constexpr const char* f = "MPI_Type_get_true_extent";
  if (datatype == MPI_DATATYPE_NULL) return fail(f, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  if (!true_lb || !true_extent) return fail(f, MPI_ERR_ARG, "true_lb or true_extent is NULL");
  *true_lb = dt_true_lb(datatype);
  *true_extent = dt_true_extent(datatype);
  return MPI_SUCCESS;
}

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  constexpr const char* f = "MPI_Type_get_true_extent_x";
  if (datatype == MPI_DATATYPE_NULL) return fail(f, MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  if (!true_lb || !true_extent) return fail(f, MPI_ERR_ARG, "true_lb or true_extent is NULL");
  *true_lb = dt_true_lb(datatype);
  *true_extent = dt_true_extent(datatype);
  return MPI_SUCCESS;
}

int PMPI_Get_address(const void* location, MPI_Aint* address) {
  if (address == nullptr) return fail("MPI_Get_address", MPI_ERR_ARG, "address is NULL");
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(base) +
                               static_cast<std::uintptr_t>(disp));
}

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(addr1) -
                               static_cast<std::uintptr_t>(addr2));
}

// ---- packing ------------------------------------------------------------------------------------

static int pack(const char* f, const void* inbuf, MPI_Count incount, MPI_Datatype datatype,
                void* outbuf, MPI_Count outsize, MPI_Count* position, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return fail(f, MPI_ERR_COMM, "comm is MPI_COMM_NULL");
  if (incount < 0) return raisef(comm, MPI_ERR_COUNT, f, "incount %lld is negative", incount);
  if (int rc = check_committed(f, datatype, comm)) return rc;
  if (position == nullptr) return fail(f, MPI_ERR_ARG, "position is NULL", comm);
  if (outsize < 0 || *position < 0 || *position > outsize) {
    return fail(f, MPI_ERR_ARG, "position outside [0, outsize]", comm);
  }
  std::size_t need = static_cast<std::size_t>(incount) * dt_size(datatype);
  if (need > static_cast<std::size_t>(outsize - *position)) {
    return raisef(comm, MPI_ERR_TRUNCATE, f,
                  "%zu packed bytes do not fit: position %lld, outsize %lld", need, *position,
                  outsize);
  }
  if (need > 0) {
    dt_pack(datatype, inbuf, static_cast<std::size_t>(incount),
            static_cast<char*>(outbuf) + *position);
  }
  *position += static_cast<MPI_Count>(need);
  return MPI_SUCCESS;
}

static int unpack(const char* f, const void* inbuf, MPI_Count insize, MPI_Count* position,
                  void* outbuf, MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return fail(f, MPI_ERR_COMM, "comm is MPI_COMM_NULL");
  if (outcount < 0) return raisef(comm, MPI_ERR_COUNT, f, "outcount %lld is negative", outcount);
  if (int rc = check_committed(f, datatype, comm)) return rc;
  if (position == nullptr) return fail(f, MPI_ERR_ARG, "position is NULL", comm);
  if (insize < 0 || *position < 0 || *position > insize) {
    return fail(f, MPI_ERR_ARG, "position outside [0, insize]", comm);
  }
  std::size_t need = static_cast<std::size_t>(outcount) * dt_size(datatype);
  if (need > static_cast<std::size_t>(insize - *position)) {
    return raisef(comm, MPI_ERR_TRUNCATE, f,
                  "outcount needs %zu bytes but inbuf has %lld after position %lld", need,
                  insize - *position, *position);
  }
  if (need > 0) {
    dt_unpack(datatype, static_cast<const char*>(inbuf) + *position, need, outbuf,
              static_cast<std::size_t>(outcount));
  }
  *position += static_cast<MPI_Count>(need);
  return MPI_SUCCESS;
}

int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
              int* position, MPI_Comm comm) {
  if (position == nullptr) return fail("MPI_Pack", MPI_ERR_ARG, "position is NULL", comm);
  MPI_Count pos = *position;
  const int rc = pack("MPI_Pack", inbuf, incount, datatype, outbuf, outsize, &pos, comm);
  *position = static_cast<int>(pos);  // at most outsize
  return rc;
}

int PMPI_Pack_c(const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf,
                MPI_Count outsize, MPI_Count* position, MPI_Comm comm) {
  return pack("MPI_Pack_c", inbuf, incount, datatype, outbuf, outsize, position, comm);
}

int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm) {
  if (position == nullptr) return fail("MPI_Unpack", MPI_ERR_ARG, "position is NULL", comm);
  MPI_Count pos = *position;
  const int rc = unpack("MPI_Unpack", inbuf, insize, &pos, outbuf, outcount, datatype, comm);
  *position = static_cast<int>(pos);  // at most insize
  return rc;
}

int PMPI_Unpack_c(const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf,
                  MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm) {
  return unpack("MPI_Unpack_c", inbuf, insize, position, outbuf, outcount, datatype, comm);
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  constexpr const char* f = "MPI_Pack_size";
  if (comm == MPI_COMM_NULL) return fail(f, MPI_ERR_COMM, "comm is MPI_COMM_NULL");
  if (incount < 0) return raisef(comm, MPI_ERR_COUNT, f, "incount %d is negative", incount);
  if (int rc = check_committed(f, datatype, comm)) return rc;
  if (size == nullptr) return fail(f, MPI_ERR_ARG, "size is NULL", comm);
  std::size_t bytes = static_cast<std::size_t>(incount) * dt_size(datatype);
  if (bytes > INT_MAX) return fail(f, MPI_ERR_COUNT, "packed size exceeds INT_MAX", comm);
  *size = static_cast<int>(bytes);
  return MPI_SUCCESS;
}

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count* size) {
  constexpr const char* f = "MPI_Pack_size_c";
  if (comm == MPI_COMM_NULL) return fail(f, MPI_ERR_COMM, "comm is MPI_COMM_NULL");
  if (incount < 0) return raisef(comm, MPI_ERR_COUNT, f, "incount %lld is negative", incount);
  if (int rc = check_committed(f, datatype, comm)) return rc;
  if (size == nullptr) return fail(f, MPI_ERR_ARG, "size is NULL", comm);
  *size = incount * static_cast<MPI_Count>(dt_size(datatype));
  return MPI_SUCCESS;
}

// ---- user-defined operators -------------------------------------------------------------------

int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  constexpr const char* f = "MPI_Op_create";
  if (user_fn == nullptr) return fail(f, MPI_ERR_ARG, "user_fn is NULL");
  if (op == nullptr) return fail(f, MPI_ERR_ARG, "op is NULL");
  *op = op_create(user_fn, nullptr, commute != 0);
  return MPI_SUCCESS;
}

int PMPI_Op_create_c(MPI_User_function_c* user_fn, int commute, MPI_Op* op) {
  constexpr const char* f = "MPI_Op_create_c";
  if (user_fn == nullptr) return fail(f, MPI_ERR_ARG, "user_fn is NULL");
  if (op == nullptr) return fail(f, MPI_ERR_ARG, "op is NULL");
  *op = op_create(nullptr, user_fn, commute != 0);
  return MPI_SUCCESS;
}

int PMPI_Op_free(MPI_Op* op) {
  constexpr const char* f = "MPI_Op_free";
  if (op == nullptr || *op == MPI_OP_NULL) return fail(f, MPI_ERR_OP, "op is MPI_OP_NULL");
  if ((*op)->predefined) return fail(f, MPI_ERR_OP, "cannot free a predefined op");
  op_release(*op);
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}

int PMPI_Op_commutative(MPI_Op op, int* commute) {
  constexpr const char* f = "MPI_Op_commutative";
  if (op == MPI_OP_NULL) return fail(f, MPI_ERR_OP, "op is MPI_OP_NULL");
  if (commute == nullptr) return fail(f, MPI_ERR_ARG, "commute is NULL");
  *commute = op_is_commutative(op) ? 1 : 0;
  return MPI_SUCCESS;
}

// Applies an op locally (MPI-2.2), which is also how the op kernels are tested without
// collectives.
static int reduce_local(const char* f, const void* inbuf, void* inoutbuf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Op op) {
  if (count < 0) return fail(f, MPI_ERR_COUNT, "count is negative");
  if (int rc = check_committed(f, datatype)) return rc;
  if (op == MPI_OP_NULL) return fail(f, MPI_ERR_OP, "op is MPI_OP_NULL");
  if (op_check(op, datatype) != MPI_SUCCESS) {
    return fail(f, MPI_ERR_OP, "the predefined op is not defined for this datatype");
  }
  if (count > 0 && (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)) {
    return fail(f, MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed");
  }
  op_apply(op, datatype, inbuf, inoutbuf, static_cast<std::size_t>(count));
  return MPI_SUCCESS;
}

int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op) {
  return reduce_local("MPI_Reduce_local", inbuf, inoutbuf, count, datatype, op);
}

int PMPI_Reduce_local_c(const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Op op) {
  return reduce_local("MPI_Reduce_local_c", inbuf, inoutbuf, count, datatype, op);
}

}  // extern "C"

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Type_contiguous = PMPI_Type_contiguous
#pragma weak MPI_Type_vector = PMPI_Type_vector
#pragma weak MPI_Type_create_hvector = PMPI_Type_create_hvector
#pragma weak MPI_Type_indexed = PMPI_Type_indexed
#pragma weak MPI_Type_create_hindexed = PMPI_Type_create_hindexed
#pragma weak MPI_Type_create_indexed_block = PMPI_Type_create_indexed_block
#pragma weak MPI_Type_create_hindexed_block = PMPI_Type_create_hindexed_block
#pragma weak MPI_Type_create_struct = PMPI_Type_create_struct
#pragma weak MPI_Type_create_resized = PMPI_Type_create_resized
#pragma weak MPI_Type_create_subarray = PMPI_Type_create_subarray
#pragma weak MPI_Type_create_darray = PMPI_Type_create_darray
#pragma weak MPI_Type_create_f90_integer = PMPI_Type_create_f90_integer
#pragma weak MPI_Type_create_f90_real = PMPI_Type_create_f90_real
#pragma weak MPI_Type_create_f90_complex = PMPI_Type_create_f90_complex
#pragma weak MPI_Type_match_size = PMPI_Type_match_size
#pragma weak MPI_Type_dup = PMPI_Type_dup
#pragma weak MPI_Type_get_envelope = PMPI_Type_get_envelope
#pragma weak MPI_Type_get_contents = PMPI_Type_get_contents
#pragma weak MPI_Type_set_name = PMPI_Type_set_name
#pragma weak MPI_Type_get_name = PMPI_Type_get_name
#pragma weak MPI_Type_commit = PMPI_Type_commit
#pragma weak MPI_Type_free = PMPI_Type_free
#pragma weak MPI_Type_size = PMPI_Type_size
#pragma weak MPI_Type_size_x = PMPI_Type_size_x
#pragma weak MPI_Type_size_c = PMPI_Type_size_c
#pragma weak MPI_Type_get_extent_c = PMPI_Type_get_extent_c
#pragma weak MPI_Type_get_true_extent_c = PMPI_Type_get_true_extent_c
#pragma weak MPI_Type_get_extent = PMPI_Type_get_extent
#pragma weak MPI_Type_get_extent_x = PMPI_Type_get_extent_x
#pragma weak MPI_Type_get_true_extent = PMPI_Type_get_true_extent
#pragma weak MPI_Type_get_true_extent_x = PMPI_Type_get_true_extent_x
#pragma weak MPI_Get_address = PMPI_Get_address
#pragma weak MPI_Aint_add = PMPI_Aint_add
#pragma weak MPI_Aint_diff = PMPI_Aint_diff
#pragma weak MPI_Pack = PMPI_Pack
#pragma weak MPI_Unpack = PMPI_Unpack
#pragma weak MPI_Pack_size = PMPI_Pack_size
#pragma weak MPI_Pack_size_c = PMPI_Pack_size_c
#pragma weak MPI_Op_create = PMPI_Op_create
#pragma weak MPI_Op_free = PMPI_Op_free
#pragma weak MPI_Op_commutative = PMPI_Op_commutative
#pragma weak MPI_Reduce_local = PMPI_Reduce_local
#pragma weak MPI_Type_contiguous_c = PMPI_Type_contiguous_c
#pragma weak MPI_Type_vector_c = PMPI_Type_vector_c
#pragma weak MPI_Type_create_hvector_c = PMPI_Type_create_hvector_c
#pragma weak MPI_Type_indexed_c = PMPI_Type_indexed_c
#pragma weak MPI_Type_create_hindexed_c = PMPI_Type_create_hindexed_c
#pragma weak MPI_Type_create_indexed_block_c = PMPI_Type_create_indexed_block_c
#pragma weak MPI_Type_create_hindexed_block_c = PMPI_Type_create_hindexed_block_c
#pragma weak MPI_Type_create_struct_c = PMPI_Type_create_struct_c
#pragma weak MPI_Type_create_resized_c = PMPI_Type_create_resized_c
#pragma weak MPI_Type_create_subarray_c = PMPI_Type_create_subarray_c
#pragma weak MPI_Type_create_darray_c = PMPI_Type_create_darray_c
#pragma weak MPI_Type_get_envelope_c = PMPI_Type_get_envelope_c
#pragma weak MPI_Type_get_contents_c = PMPI_Type_get_contents_c
#pragma weak MPI_Pack_c = PMPI_Pack_c
#pragma weak MPI_Unpack_c = PMPI_Unpack_c
#pragma weak MPI_Op_create_c = PMPI_Op_create_c
#pragma weak MPI_Reduce_local_c = PMPI_Reduce_local_c
