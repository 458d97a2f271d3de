// Fortran handle tables (see handles.hpp).
//
// A table is a fixed array of chunk pointers; chunks are allocated once and never move,
// so a lookup (f2c, on every Fortran call) reads two words without a lock while another
// thread adds a slot. Adding and releasing take the table's mutex; a slot's object is
// published with release order after the chunk exists.
#include "mpi/fortran/handles.hpp"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace {

// The predefined objects of each kind, in the order of their Fortran integers (slot 0,
// the null handle, first). Generated from mpi.h (gen_fortran.py) like mpif.h itself.
#include "fortran_predefined.inc"

class HandleTable {
 public:
  HandleTable(void* const* predefined, size_t count) : predefined_count_(static_cast<int>(count)) {
    for (int i = 0; i < predefined_count_; ++i) {
      slot(i).store(predefined[i], std::memory_order_relaxed);
      if (predefined[i]) index_of_.emplace(predefined[i], Entry{i, 0});
    }
    next_.store(predefined_count_, std::memory_order_release);
  }

  void* f2c(MPI_Fint f) const {
    if (f <= 0 || f >= next_.load(std::memory_order_acquire)) return nullptr;
    const auto* chunk = chunks_[static_cast<unsigned>(f) / kChunk].load(std::memory_order_acquire);
    return chunk ? chunk[static_cast<unsigned>(f) % kChunk].load(std::memory_order_acquire)
                 : nullptr;
  }

  // fresh: the object has no slot yet (no lookup, not entered in the map); borrow: no new
  // reference when it has one.
  MPI_Fint c2f(void* c, bool fresh, bool borrow = false) {
    if (!c) return 0;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!fresh) {
      auto it = index_of_.find(c);
      if (it != index_of_.end()) {
        if (!borrow && it->second.index >= predefined_count_) ++it->second.refs;
        return it->second.index;
      }
    }
    MPI_Fint f;
    if (!free_.empty()) {
      f = free_.back();
      free_.pop_back();
    } else {
      f = next_.load(std::memory_order_relaxed);
      if (static_cast<unsigned>(f) >= kChunk * kMaxChunks) return 0;  // 4 M live handles
      if (!chunks_[f / kChunk].load(std::memory_order_relaxed)) {
        storage_.push_back(std::make_unique<std::atomic<void*>[]>(kChunk));
        chunks_[f / kChunk].store(storage_.back().get(), std::memory_order_release);
      }
    }
    slot(f).store(c, std::memory_order_release);
    if (f == next_.load(std::memory_order_relaxed)) next_.store(f + 1, std::memory_order_release);
    if (!fresh) index_of_[c] = Entry{f, 1};
    return f;
  }

  void release(MPI_Fint f) {
    if (f < predefined_count_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (f >= next_.load(std::memory_order_relaxed)) return;
    void* c = slot(f).load(std::memory_order_relaxed);
    if (!c) return;
    auto it = index_of_.find(c);
    if (it != index_of_.end() && it->second.index == f && --it->second.refs > 0) return;
    if (it != index_of_.end() && it->second.index == f) index_of_.erase(it);
    slot(f).store(nullptr, std::memory_order_release);
    free_.push_back(f);
  }

 private:
  static constexpr unsigned kChunk = 1024, kMaxChunks = 4096;
  struct Entry {
    MPI_Fint index;
    int refs;
  };

  std::atomic<void*>& slot(MPI_Fint f) {
    auto* chunk = chunks_[static_cast<unsigned>(f) / kChunk].load(std::memory_order_relaxed);
    if (!chunk) {  // only while constructing (predefined slots)
      storage_.push_back(std::make_unique<std::atomic<void*>[]>(kChunk));
      chunk = storage_.back().get();
      chunks_[static_cast<unsigned>(f) / kChunk].store(chunk, std::memory_order_release);
    }
    return chunk[static_cast<unsigned>(f) % kChunk];
  }

  const int predefined_count_;
  std::array<std::atomic<std::atomic<void*>*>, kMaxChunks> chunks_{};
  std::atomic<MPI_Fint> next_{0};
  std::mutex mutex_;
  std::vector<std::unique_ptr<std::atomic<void*>[]>> storage_;
  std::vector<MPI_Fint> free_;
  std::unordered_map<void*, Entry> index_of_;
};

HandleTable& table(int kind) {
  // Constructed on first use: Fortran programs may convert before MPI_Init (constants).
  static HandleTable tables[SLUICE_FH_KINDS] = {
      {kPredefinedComm, std::size(kPredefinedComm)},
      {kPredefinedGroup, std::size(kPredefinedGroup)},
      {kPredefinedDatatype, std::size(kPredefinedDatatype)},
      {kPredefinedOp, std::size(kPredefinedOp)},
      {kPredefinedRequest, std::size(kPredefinedRequest)},
      {kPredefinedErrhandler, std::size(kPredefinedErrhandler)},
      {kPredefinedInfo, std::size(kPredefinedInfo)},
      {kPredefinedMessage, std::size(kPredefinedMessage)},
      {kPredefinedWin, std::size(kPredefinedWin)},
      {kPredefinedSession, std::size(kPredefinedSession)},
  };
  return tables[kind];
}

}  // namespace

extern "C" {

void* sluice_fortran_f2c(int kind, MPI_Fint f) {
  return table(kind).f2c(f);
}
MPI_Fint sluice_fortran_c2f(int kind, void* c) {
  return table(kind).c2f(c, false);
}
MPI_Fint sluice_fortran_c2f_borrow(int kind, void* c) {
  return table(kind).c2f(c, false, true);
}
MPI_Fint sluice_fortran_c2f_new(int kind, void* c) {
  return table(kind).c2f(c, true);
}
void sluice_fortran_release(int kind, MPI_Fint f) {
  table(kind).release(f);
}

}  // extern "C"
