// The MPI_THREAD_MULTIPLE lock (see big_lock.hpp).
#include "mpi/big_lock.hpp"

#include <mutex>
#include <thread>

#include "util/backoff.hpp"

namespace sluice::mpi {

namespace {
std::recursive_mutex g_big_mutex;
thread_local int t_lock_depth = 0;  // how many CallGuards this thread holds
}  // namespace

bool g_threaded = false;

void big_lock() {
  g_big_mutex.lock();
  ++t_lock_depth;
}

void big_unlock() {
  --t_lock_depth;
  g_big_mutex.unlock();
}

void block_until_threaded(const std::function<bool()>& done) {
  // MULTIPLE: let other threads in between passes. The wait sleeps with nanosleep, not the
  // engine's driver doorbell, because another thread may be inside the engine meanwhile.
  // The engine's values as adjusted at start-up (oversubscription), not the raw keys.
  util::Backoff bo(engine().spin_ns(), engine().max_sleep_ns(), nullptr);
  while (!done()) {
    const bool moved = progress();
    const int depth = t_lock_depth;
    const int engine_depth = detail::engine_lock().unlock_all();  // progress thread's lock
    for (int i = 0; i < depth; ++i) big_unlock();
    if (moved)
      bo.reset();
    else
      bo.pause();
    if (depth) std::this_thread::yield();
    for (int i = 0; i < depth; ++i) big_lock();
    detail::engine_lock().relock(engine_depth);
  }
}

}  // namespace sluice::mpi
