// The "external32" data representation (MPI-3.1 §13.5.2): MPI_Pack_external,
// MPI_Unpack_external, MPI_Pack_external_size. Big-endian, IEEE formats, fixed sizes that
// differ from x86-64's for some types (MPI_LONG and MPI_UNSIGNED_LONG are 4 bytes,
// MPI_WCHAR 2, MPI_LONG_DOUBLE the 16-byte IEEE binary128). The datatype's typemap is
// walked from its constructor arguments (the same ones MPI_Type_get_contents returns), one
// basic value at a time: these calls are for portable files and messages, not the fast path.
#include <bit>
#include <cstdint>
#include <cstring>

#include "mpi/big_lock.hpp"
#include "mpi/datatype.hpp"
#include "mpi/mpi_internal.hpp"

static_assert(std::endian::native == std::endian::little, "external32 conversion assumes x86-64");

namespace sluice::mpi {
namespace {

// How one basic value converts.
enum class Conv : std::uint8_t { copy, swap, long4, ulong4, wchar2, binary128 };
struct Value {
  MPI_Aint offset;     // from the element's address
  std::size_t native;  // bytes in memory
  std::size_t wire;    // bytes in external32
  Conv conv;
};

// The basic values of a predefined type at `at`; false for a type external32 lacks.
template <typename F>
bool predefined_values(MPI_Datatype t, MPI_Aint at, F& visit) {
  auto plain = [&](MPI_Aint off, std::size_t n) {
    visit(Value{at + off, n, n, n == 1 ? Conv::copy : Conv::swap});
  };
  if (t == MPI_LONG || t == MPI_LONG_INT) {
    visit(Value{at, 8, 4, Conv::long4});
    if (t == MPI_LONG_INT) plain(8, 4);
    return true;
  }
  if (t == MPI_UNSIGNED_LONG) return visit(Value{at, 8, 4, Conv::ulong4}), true;
  if (t == MPI_WCHAR) return visit(Value{at, 4, 2, Conv::wchar2}), true;
  switch (t->scalar) {
    case Scalar::none:
      return false;
    case Scalar::f80:
      visit(Value{at, 16, 16, Conv::binary128});
      return true;
    case Scalar::c32:
    case Scalar::c64:
    case Scalar::c128:  // two binary128 halves, each byte-swapped
      plain(0, t->size / 2), plain(static_cast<MPI_Aint>(t->size / 2), t->size / 2);
      return true;
    case Scalar::c80:
      visit(Value{at, 16, 16, Conv::binary128}), visit(Value{at + 16, 16, 16, Conv::binary128});
      return true;
    case Scalar::pair_float_int:
    case Scalar::pair_int_int:
    case Scalar::pair_float_float:
      return plain(0, 4), plain(4, 4), true;
    case Scalar::pair_double_int:
      return plain(0, 8), plain(8, 4), true;
    case Scalar::pair_double_double:
      return plain(0, 8), plain(8, 8), true;
    case Scalar::pair_short_int:
      return plain(0, 2), plain(4, 4), true;
    case Scalar::pair_long_double_int:
      visit(Value{at, 16, 16, Conv::binary128});
      return plain(16, 4), true;
    case Scalar::pair_long_int:  // handled above
      return false;
    default:
      plain(0, t->size);
      return true;
  }
}

// Visits every basic value of one element of `t` placed at `at`, in typemap order.
// False for a type external32 (or this walk) does not handle: MPI_Type_create_darray.
template <typename F>
bool walk(MPI_Datatype t, MPI_Aint at, F& visit) {
  const auto& types = t->args_type;
  // The constructor's counts and displacements, from wherever the envelope keeps them:
  // a large-count constructor (MPI_Type_vector_c ...) keeps all of them in args_large, the
  // others keep counts in args_int and byte displacements in args_addr (MPI-4.0 §5.1.13).
  const bool large = !t->args_large.empty();
  auto I = [&](std::size_t k) -> MPI_Count {
    return large ? t->args_large[k] : static_cast<MPI_Count>(t->args_int[k]);
  };
  // Byte displacement k of an h-constructor: in args_large after the `skip` counts before it.
  auto A = [&](std::size_t k, std::size_t skip) -> MPI_Aint {
    return large ? static_cast<MPI_Aint>(t->args_large[skip + k]) : t->args_addr[k];
  };
  auto repeat = [&](MPI_Datatype child, MPI_Aint from, std::size_t n) {
    for (std::size_t j = 0; j < n; ++j)
      if (!walk(child, from + static_cast<MPI_Aint>(j) * dt_extent(child), visit)) return false;
    return true;
  };
  switch (t->combiner) {
    case MPI_COMBINER_NAMED:
      return predefined_values(t, at, visit);
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
      return walk(types[0], at, visit);
    case MPI_COMBINER_CONTIGUOUS:
      return repeat(types[0], at, static_cast<std::size_t>(I(0)));
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
      const MPI_Aint stride = t->combiner == MPI_COMBINER_VECTOR
                                  ? static_cast<MPI_Aint>(I(2)) * dt_extent(types[0])
                                  : A(0, 2);
      for (MPI_Count i = 0; i < I(0); ++i)
        if (!repeat(types[0], at + i * stride, static_cast<std::size_t>(I(1)))) return false;
      return true;
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
      const auto n = static_cast<std::size_t>(I(0));
      const bool block =
          t->combiner == MPI_COMBINER_INDEXED_BLOCK || t->combiner == MPI_COMBINER_HINDEXED_BLOCK;
      const bool in_bytes =
          t->combiner == MPI_COMBINER_HINDEXED || t->combiner == MPI_COMBINER_HINDEXED_BLOCK;
      const std::size_t disp_at = block ? 2 : 1 + n;  // where displacements start in the counts
      for (std::size_t i = 0; i < n; ++i) {
        const MPI_Count length = block ? I(1) : I(1 + i);
        const MPI_Aint disp =
            in_bytes ? A(i, disp_at) : static_cast<MPI_Aint>(I(disp_at + i)) * dt_extent(types[0]);
        if (!repeat(types[0], at + disp, static_cast<std::size_t>(length))) return false;
      }
      return true;
    }
    case MPI_COMBINER_STRUCT: {
      const auto n = static_cast<std::size_t>(I(0));
      for (std::size_t i = 0; i < n; ++i)
        if (!repeat(types[i], at + A(i, 1 + n), static_cast<std::size_t>(I(1 + i)))) return false;
      return true;
    }
    case MPI_COMBINER_SUBARRAY: {
      // args_int: ndims, sizes, subsizes, starts, order; large: ints ndims, order and the
      // three arrays as large counts.
      const int ndims = t->args_int[0];
      const std::size_t first = large ? 0 : 1;
      auto sizes = [&](int d) { return I(first + d); };
      auto subsizes = [&](int d) { return I(first + ndims + d); };
      auto starts = [&](int d) { return I(first + 2 * ndims + d); };
      const int order = large ? t->args_int[1] : t->args_int[1 + 3 * ndims];
      const bool c_order = order == MPI_ORDER_C;
      std::vector<MPI_Aint> stride(ndims);  // in elements of the old type
      MPI_Aint s = 1;
      for (int k = 0; k < ndims; ++k) {
        const int d = c_order ? ndims - 1 - k : k;  // fastest dimension first
        stride[d] = s;
        s *= sizes(d);
      }
      std::vector<MPI_Count> idx(ndims, 0);
      for (int d = 0; d < ndims; ++d)
        if (subsizes(d) == 0) return true;
      while (true) {
        MPI_Aint element = 0;
        for (int d = 0; d < ndims; ++d) element += (starts(d) + idx[d]) * stride[d];
        if (!walk(types[0], at + element * dt_extent(types[0]), visit)) return false;
        int k = 0;  // next index, fastest dimension first
        for (; k < ndims; ++k) {
          const int d = c_order ? ndims - 1 - k : k;
          if (++idx[d] < subsizes(d)) break;
          idx[d] = 0;
        }
        if (k == ndims) return true;
      }
    }
    default:
      return false;
  }
}

void put_big_endian(std::uint64_t v, std::size_t n, std::byte* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = std::byte(v >> (8 * (n - 1 - i)));
}
std::uint64_t get_big_endian(const std::byte* in, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = v << 8 | std::to_integer<std::uint64_t>(in[i]);
  return v;
}

// x87 80-bit extended <-> IEEE binary128: the same sign, exponent and bias; the x87
// explicit integer bit goes, the 63 fraction bits lead binary128's 112.
void to_binary128(const std::byte* x87, std::byte* out) {
  std::uint64_t mantissa;
  std::uint16_t sign_exp;
  std::memcpy(&mantissa, x87, 8);
  std::memcpy(&sign_exp, x87 + 8, 2);
  const std::uint64_t fraction = mantissa & 0x7fffffffffffffffULL;
  put_big_endian(std::uint64_t{sign_exp} << 48 | fraction >> 15, 8, out);
  put_big_endian(fraction << 49, 8, out + 8);
}
void from_binary128(const std::byte* in, std::byte* x87) {
  const std::uint64_t hi = get_big_endian(in, 8), lo = get_big_endian(in + 8, 8);
  const auto sign_exp = static_cast<std::uint16_t>(hi >> 48);
  const std::uint64_t fraction = (hi & 0xffffffffffffULL) << 15 | lo >> 49;
  const std::uint64_t integer_bit = (sign_exp & 0x7fff) != 0 ? 1ULL << 63 : 0;
  const std::uint64_t mantissa = integer_bit | fraction;
  std::memset(x87, 0, 16);
  std::memcpy(x87, &mantissa, 8);
  std::memcpy(x87 + 8, &sign_exp, 2);
}

void pack_value(const Value& v, const std::byte* native, std::byte* wire) {
  switch (v.conv) {
    case Conv::copy:
      std::memcpy(wire, native, v.wire);
      return;
    case Conv::swap:
      for (std::size_t i = 0; i < v.wire; ++i) wire[i] = native[v.wire - 1 - i];
      return;
    case Conv::long4:
    case Conv::ulong4: {
      std::uint64_t x;
      std::memcpy(&x, native, 8);
      put_big_endian(x, 4, wire);  // the low 32 bits, as MPICH does
      return;
    }
    case Conv::wchar2: {
      std::uint32_t x;
      std::memcpy(&x, native, 4);
      put_big_endian(x, 2, wire);
      return;
    }
    case Conv::binary128:
      to_binary128(native, wire);
      return;
  }
}

void unpack_value(const Value& v, const std::byte* wire, std::byte* native) {
  switch (v.conv) {
    case Conv::copy:
      std::memcpy(native, wire, v.native);
      return;
    case Conv::swap:
      for (std::size_t i = 0; i < v.native; ++i) native[i] = wire[v.native - 1 - i];
      return;
    case Conv::long4: {
      const auto x = static_cast<std::int64_t>(static_cast<std::int32_t>(get_big_endian(wire, 4)));
      std::memcpy(native, &x, 8);
      return;
    }
    case Conv::ulong4: {
      const std::uint64_t x = get_big_endian(wire, 4);
      std::memcpy(native, &x, 8);
      return;
    }
    case Conv::wchar2: {
      const auto x = static_cast<std::uint32_t>(get_big_endian(wire, 2));
      std::memcpy(native, &x, 4);
      return;
    }
    case Conv::binary128:
      from_binary128(wire, native);
      return;
  }
}

// Checks shared by the three calls; on success `bytes` is the external32 size of
// `count` elements.
int prepare(const char* f, const char* datarep, MPI_Aint count, MPI_Datatype type,
            MPI_Aint* bytes) {
  if (!datarep || std::strcmp(datarep, "external32") != 0)
    return raisef(nullptr, MPI_ERR_UNSUPPORTED_DATAREP, f,
                  "data representation '%s' (only "
                  "\"external32\")",
                  datarep ? datarep : "(null)");
  if (count < 0) return raisef(nullptr, MPI_ERR_COUNT, f, "invalid count %ld", long(count));
  if (dt_check(type) != MPI_SUCCESS)
    return raise(nullptr, MPI_ERR_TYPE, f, "invalid or uncommitted datatype");
  MPI_Aint one = 0;
  auto add = [&](const Value& v) { one += static_cast<MPI_Aint>(v.wire); };
  if (!walk(type, 0, add))
    return raise(nullptr, MPI_ERR_TYPE, f,
                 "datatype has no external32 form in Sluice "
                 "(built with MPI_Type_create_darray, or from MPI_PACKED)");
  *bytes = one * count;
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace sluice::mpi

using namespace sluice::mpi;

extern "C" {

// The int bindings and the MPI-4.0 _c ones share these (MPI_Count counts and positions).
static int pack_external(const char* f, const char datarep[], const void* inbuf, MPI_Count incount,
                         MPI_Datatype datatype, void* outbuf, MPI_Count outsize,
                         MPI_Count* position) {
  MPI_Aint bytes = 0;
  if (int rc = prepare(f, datarep, incount, datatype, &bytes)) return rc;
  if (!position) return raise(nullptr, MPI_ERR_ARG, f, "position is NULL");
  if (*position < 0 || *position + bytes > outsize)
    return raisef(nullptr, MPI_ERR_TRUNCATE, f, "%ld bytes at position %lld overrun outsize %lld",
                  long(bytes), *position, outsize);
  auto* out = static_cast<std::byte*>(outbuf) + *position;
  const auto* in = static_cast<const std::byte*>(inbuf);
  auto pack = [&](const Value& v) {
    pack_value(v, in + v.offset, out);
    out += v.wire;
  };
  for (MPI_Count i = 0; i < incount; ++i) walk(datatype, i * dt_extent(datatype), pack);
  *position += bytes;
  return MPI_SUCCESS;
}

static int unpack_external(const char* f, const char datarep[], const void* inbuf, MPI_Count insize,
                           MPI_Count* position, void* outbuf, MPI_Count outcount,
                           MPI_Datatype datatype) {
  MPI_Aint bytes = 0;
  if (int rc = prepare(f, datarep, outcount, datatype, &bytes)) return rc;
  if (!position) return raise(nullptr, MPI_ERR_ARG, f, "position is NULL");
  if (*position < 0 || *position + bytes > insize)
    return raisef(nullptr, MPI_ERR_TRUNCATE, f, "%ld bytes at position %lld overrun insize %lld",
                  long(bytes), *position, insize);
  const auto* in = static_cast<const std::byte*>(inbuf) + *position;
  auto* out = static_cast<std::byte*>(outbuf);
  auto unpack = [&](const Value& v) {
    unpack_value(v, in, out + v.offset);
    in += v.wire;
  };
  for (MPI_Count i = 0; i < outcount; ++i) walk(datatype, i * dt_extent(datatype), unpack);
  *position += bytes;
  return MPI_SUCCESS;
}

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint* size) {
  SLUICE_MPI_CALL;
  if (!size) return raise(nullptr, MPI_ERR_ARG, "MPI_Pack_external_size", "size is NULL");
  return prepare("MPI_Pack_external_size", datarep, incount, datatype, size);
}

int PMPI_Pack_external_size_c(const char* datarep, MPI_Count incount, MPI_Datatype datatype,
                              MPI_Count* size) {
  SLUICE_MPI_CALL;
  if (!size) return raise(nullptr, MPI_ERR_ARG, "MPI_Pack_external_size_c", "size is NULL");
  MPI_Aint bytes = 0;
  if (int rc = prepare("MPI_Pack_external_size_c", datarep, incount, datatype, &bytes)) return rc;
  *size = bytes;
  return MPI_SUCCESS;
}

int PMPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype,
                       void* outbuf, MPI_Aint outsize, MPI_Aint* position) {
  SLUICE_MPI_CALL;
  if (!position) return raise(nullptr, MPI_ERR_ARG, "MPI_Pack_external", "position is NULL");
  MPI_Count pos = *position;
  const int rc =
      pack_external("MPI_Pack_external", datarep, inbuf, incount, datatype, outbuf, outsize, &pos);
  *position = static_cast<MPI_Aint>(pos);
  return rc;
}

int PMPI_Pack_external_c(const char* datarep, const void* inbuf, MPI_Count incount,
                         MPI_Datatype datatype, void* outbuf, MPI_Count outsize,
                         MPI_Count* position) {
  SLUICE_MPI_CALL;
  return pack_external("MPI_Pack_external_c", datarep, inbuf, incount, datatype, outbuf, outsize,
                       position);
}

int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize,
                         MPI_Aint* position, void* outbuf, int outcount, MPI_Datatype datatype) {
  SLUICE_MPI_CALL;
  if (!position) return raise(nullptr, MPI_ERR_ARG, "MPI_Unpack_external", "position is NULL");
  MPI_Count pos = *position;
  const int rc = unpack_external("MPI_Unpack_external", datarep, inbuf, insize, &pos, outbuf,
                                 outcount, datatype);
  *position = static_cast<MPI_Aint>(pos);
  return rc;
}

int PMPI_Unpack_external_c(const char datarep[], const void* inbuf, MPI_Count insize,
                           MPI_Count* position, void* outbuf, MPI_Count outcount,
                           MPI_Datatype datatype) {
  SLUICE_MPI_CALL;
  return unpack_external("MPI_Unpack_external_c", datarep, inbuf, insize, position, outbuf,
                         outcount, datatype);
}

}  // extern "C"

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Pack_external_size = PMPI_Pack_external_size
#pragma weak MPI_Pack_external = PMPI_Pack_external
#pragma weak MPI_Unpack_external = PMPI_Unpack_external
#pragma weak MPI_Pack_external_size_c = PMPI_Pack_external_size_c
#pragma weak MPI_Pack_external_c = PMPI_Pack_external_c
#pragma weak MPI_Unpack_external_c = PMPI_Unpack_external_c
