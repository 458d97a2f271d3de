// The MPI_THREAD_MULTIPLE lock ("big lock") and the blocking wait that drops it.
//
// The engine is single-threaded; its engine lock (core/engine_lock.hpp) is on only while a
// progress thread runs, so under MULTIPLE one process-wide, re-entrant lock also serializes
// MPI calls: every binding entry point starts with SLUICE_MPI_CALL, which takes both, and
// every blocking MPI call waits through block_until(), which drops both between progress
// passes so that other threads' calls proceed while one thread is blocked. Below MULTIPLE
// the process-wide lock is skipped (g_threaded is false) and block_until() spins inline.
#pragma once

#include <functional>

#include "core/engine.hpp"

namespace sluice::mpi {

// The process's engine (between MPI_Init and MPI_Finalize). Inline: every call uses it.
inline detail::Engine& engine() {
  return *detail::current_engine();
}

extern bool g_threaded;  // MPI_THREAD_MULTIPLE was provided: calls take the big lock
void big_lock();
void big_unlock();

// Held for the duration of an MPI call (re-entrant: MPI functions may call each other).
// With a progress thread (SLUICE_PROGRESS_THREAD) it also holds the engine lock, taken
// after the big lock (block_until drops both, engine lock first).
class CallGuard {
 public:
  CallGuard() : locked_(g_threaded) {
    if (locked_) big_lock();
    engine_locked_ = detail::engine_lock().lock();
  }
  ~CallGuard() {
    detail::engine_lock().unlock(engine_locked_);
    if (locked_) big_unlock();
  }
  CallGuard(const CallGuard&) = delete;
  CallGuard& operator=(const CallGuard&) = delete;

 private:
  bool locked_;
  bool engine_locked_;
};
#define SLUICE_MPI_CALL ::sluice::mpi::CallGuard sluice_mpi_call_guard_

// One progress pass of the engine plus the MPI layer's own background work (buffered
// sends, freed-but-active requests). True if anything moved. Defined in p2p.cpp.
bool progress();
// The MULTIPLE variant of block_until: drops the big lock between passes.
void block_until_threaded(const std::function<bool()>& done);
// Blocks until done() is true, progressing with the engine's backoff. Every blocking
// MPI call waits through here (one place to change for a thread-level lock). A template
// so the single-threaded spin loop calls done() inline, not through a std::function.
template <class Done>
void block_until(Done&& done) {
  if (done()) return;
  if (g_threaded) {
    block_until_threaded(std::function<bool()>(std::ref(done)));
    return;
  }
  auto bo = engine().make_backoff();
  while (!done()) {
    if (progress())
      bo.reset();
    else
      bo.pause();
  }
}

}  // namespace sluice::mpi
