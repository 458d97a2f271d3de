// The Fortran binding's C side (libmpifort): what the generated routines
// (fortran_glue.cpp, from gen_fortran.py) and the hand-written ones (fortran_manual.cpp)
// share — argument conversions between Fortran's INTEGER handles, status arrays, blank-
// padded strings and sentinel variables and the C binding's.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "mpi/fortran/handles.hpp"

extern "C" {
// The sentinels of mpif.h / the mpi module: Fortran common blocks (gfortran names them
// with one trailing underscore), defined in sentinels.cpp. Reached only through these
// declarations, so the library addresses the one instance the program links.
extern MPI_Fint sluice_mpif_bottom_[1];
extern MPI_Fint sluice_mpif_in_place_[1];
extern MPI_Fint sluice_mpif_status_ign_[6];
extern MPI_Fint sluice_mpif_statuses_ign_[6];
extern MPI_Fint sluice_mpif_unweighted_[1];
extern MPI_Fint sluice_mpif_weights_empty_[1];
}

// A choice buffer: Fortran's MPI_BOTTOM and MPI_IN_PLACE become C's.
inline void* sluice_fortran_buf(const void* buf) {
  if (buf == sluice_mpif_bottom_) return MPI_BOTTOM;
  if (buf == sluice_mpif_in_place_) return MPI_IN_PLACE;
  return const_cast<void*>(buf);
}

// Dist_graph weights (read, or written by MPI_Dist_graph_neighbors): Fortran's
// MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY become C's.
inline int* sluice_fortran_weights(const MPI_Fint* w) {
  if (w == sluice_mpif_unweighted_) return MPI_UNWEIGHTED;
  if (w == sluice_mpif_weights_empty_) return MPI_WEIGHTS_EMPTY;
  return const_cast<int*>(w);
}

// After a call that may free or complete the handle in *f (C object `before`, now `after`).
template <typename Handle>
inline void sluice_fortran_update(int kind, MPI_Fint* f, Handle before, Handle after) {
  if (after == before) return;
  sluice_fortran_release(kind, *f);
  *f = after ? (kind == SLUICE_FH_REQUEST ? sluice_fortran_c2f_new(kind, after)
                                          : sluice_fortran_c2f(kind, after))
             : 0;
}

// The number of processes a (w) collective's per-process arrays have on `comm`.
int sluice_fortran_peer_count(MPI_Comm comm);
// In-degree (recv != 0) or out-degree of a communicator with a topology.
int sluice_fortran_neighbor_count(MPI_Comm comm, int recv);

namespace sluice::fortran {

// Storage for n elements, on the stack up to a few dozen (Waitall in a loop allocates
// nothing).
template <typename T>
class SmallArray {
 public:
  explicit SmallArray(int n) : n_(n < 0 ? 0 : n) {
    if (n_ > kInline) heap_.resize(n_);
  }
  T* data() { return n_ > kInline ? heap_.data() : inline_; }
  const T* data() const { return n_ > kInline ? heap_.data() : inline_; }
  int size() const { return n_; }

 private:
  static constexpr int kInline = 32;
  int n_;
  T inline_[kInline] = {};
  std::vector<T> heap_;
};

// An array of n handles converted from Fortran (from == nullptr: output only).
template <typename Handle>
class HandleArray {
 public:
  HandleArray(int kind, const MPI_Fint* from, int n) : kind_(kind), c_(n), before_(from ? n : 0) {
    if (!from) return;
    for (int i = 0; i < c_.size(); ++i) {
      c_.data()[i] = static_cast<Handle>(sluice_fortran_f2c(kind, from[i]));
      before_.data()[i] = c_.data()[i];
    }
  }
  Handle* data() { return c_.data(); }
  const Handle* data() const { return c_.data(); }
  // Requests: those freed or completed by the call lose their integer.
  void update(MPI_Fint* f) {
    for (int i = 0; i < c_.size(); ++i)
      sluice_fortran_update(kind_, &f[i], before_.data()[i], c_.data()[i]);
  }
  void copy_out(MPI_Fint* f) {
    for (int i = 0; i < c_.size(); ++i) f[i] = sluice_fortran_c2f(kind_, c_.data()[i]);
  }

 private:
  int kind_;
  SmallArray<Handle> c_, before_;
};

// INTEGER status(MPI_STATUS_SIZE) or statuses(MPI_STATUS_SIZE, n): the bytes of C's
// MPI_Status, copied (a Fortran INTEGER array is only 4-byte aligned).
static_assert(sizeof(MPI_Status) == 6 * sizeof(MPI_Fint), "MPI_STATUS_SIZE is 6");
class StatusArg {
 public:
  StatusArg(MPI_Fint* f, int n)
      : ignore_(f == sluice_mpif_status_ign_ || f == sluice_mpif_statuses_ign_), c_(n) {
    if (!ignore_ && c_.size() > 0) std::memcpy(c_.data(), f, sizeof(MPI_Status) * c_.size());
  }
  MPI_Status* get() { return ignore_ ? MPI_STATUS_IGNORE : c_.data(); }
  void copy_out(MPI_Fint* f) {
    if (!ignore_ && c_.size() > 0) std::memcpy(f, c_.data(), sizeof(MPI_Status) * c_.size());
  }

 private:
  bool ignore_;
  SmallArray<MPI_Status> c_;
};

// CHARACTER(LEN=*) in: without trailing blanks.
class InString {
 public:
  InString(const char* s, size_t len) {
    while (len > 0 && s[len - 1] == ' ') --len;
    s_.assign(s, len);
  }
  const char* c_str() const { return s_.c_str(); }

 private:
  std::string s_;
};

// CHARACTER(LEN=*) out: the C function writes a terminated string into a buffer at least as
// long as any MPI_MAX_* length; the Fortran variable gets it blank-padded (or cut).
class OutString {
 public:
  OutString(char* f, size_t len) : f_(f), len_(len), buf_(std::max<size_t>(len, 1024) + 1, '\0') {}
  char* data() { return buf_.data(); }
  int clamp(int n) const { return std::min<int>(n, static_cast<int>(buf_.size()) - 1); }
  void copy_out() {
    const size_t n = std::min(std::strlen(buf_.data()), len_);
    std::memcpy(f_, buf_.data(), n);
    std::memset(f_ + n, ' ', len_ - n);
  }

 private:
  char* f_;
  size_t len_;
  std::vector<char> buf_;
};

}  // namespace sluice::fortran
