// Two cores copy: large copies into or out of a co-located rank's shared memory (MPI windows
// in one shared segment) split between the calling thread and a copy helper thread on another
// CPU (mem/copy_assist.hpp). One per engine: the configuration (SLUICE_WIN_ASSIST,
// SLUICE_WIN_ASSIST_CHUNK), the helper thread (started on the first large copy, joined when
// the engine goes) and the counters win.assist_*.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "mem/copy_assist.hpp"

namespace sluice::detail {

class Engine;

class CopyAssist {
 public:
  explicit CopyAssist(Engine& e);
  ~CopyAssist();
  CopyAssist(const CopyAssist&) = delete;
  CopyAssist& operator=(const CopyAssist&) = delete;

  // Copies `n` bytes from `src` to `dst`; from the threshold on, the helper takes a part
  // when it runs.
  void copy(std::byte* dst, const std::byte* src, std::size_t n) {
    if (min_ == 0 || n < min_) {
      __builtin_memcpy(dst, src, n);
      return;
    }
    copy_large(dst, src, n);
  }
  // Starts the helper thread now (else at the first large copy): when a shared window is
  // made, so that it runs on its CPU before the first copy needs it.
  void start_helper();

 private:
  void copy_large(std::byte* dst, const std::byte* src, std::size_t n);

  std::size_t min_ = 0;    // SLUICE_WIN_ASSIST: smallest copy offered to the helper, 0 = off
  std::size_t chunk_ = 0;  // SLUICE_WIN_ASSIST_CHUNK
  bool started_ = false;   // the helper was asked for (it may not exist: one CPU)
  std::unique_ptr<mem::CopyHelper> helper_;
  struct Stats {
    uint64_t ops = 0;           // copies offered to the helper
    uint64_t helped_ops = 0;    // those it copied a part of
    uint64_t helped_bytes = 0;  // bytes it copied
  } stats_;
};

}  // namespace sluice::detail
