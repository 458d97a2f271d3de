/* Large gets and puts on an MPI_Win_allocate window within one host, which Sluice splits
   between the origin and a helper thread on another CPU (two cores copy: WIN_ASSIST). Every
   rank is an origin in turn while the others wait; each byte is checked, odd sizes and
   unaligned displacements included. Sluice's bookkeeping: every get and put of at least the
   threshold was split (none when the machine has a single CPU: no helper), and the helper
   copied at most their bytes. Which side copied which chunk depends on timing: not checked. */
/* SLUICE_TEST_RANKS: 2 3 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define WIN_BYTES (4 << 20)

static unsigned char at(int owner, int round, size_t i) {
  return (unsigned char)(owner * 37 + round * 11 + i * 7 + (i >> 9));
}

#ifdef MPIX_SLUICE_COUNTER
static unsigned long long counter(const char* name) {
  unsigned long long v = 0;
  CHECK(MPIX_Sluice_counter(name, &v) == MPI_SUCCESS, "no counter %s", name);
  return v;
}
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  unsigned char* base = NULL;
  MPI_Win win;
  MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  for (size_t i = 0; i < WIN_BYTES; ++i) base[i] = at(rank, 0, i);
  MPI_Barrier(MPI_COMM_WORLD);

  static const size_t sizes[] = {1000, 256 * 1024, 300 * 1024 + 7, 1 << 20, (3 << 20) + 4095};
  static const size_t disps[] = {0, 1, 4096, 65536 + 3};
  const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
  const int ndisps = (int)(sizeof disps / sizeof disps[0]);
  unsigned char* buf = malloc(WIN_BYTES + 64);
  unsigned long long large = 0, large_bytes = 0; /* this rank's gets and puts >= 256 KiB */

  for (int origin = 0; origin < size; ++origin) {
    const int target = (origin + 1) % size;
    if (rank == origin && target != origin) {
      MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
      for (int s = 0; s < nsizes; ++s)
        for (int d = 0; d < ndisps; ++d) {
          const size_t n = sizes[s], disp = disps[d];
          if (disp + n > WIN_BYTES) continue;
          unsigned char* dst = buf + (s + d) % 64; /* unaligned origin buffers too */
          memset(dst, 0, n);
          MPI_Get(dst, (int)n, MPI_BYTE, target, (MPI_Aint)disp, (int)n, MPI_BYTE, win);
          MPI_Win_flush(target, win);
          large += n >= 256 * 1024;
          large_bytes += n >= 256 * 1024 ? n : 0;
          for (size_t i = 0; i < n; ++i)
            if (dst[i] != at(target, 0, disp + i)) {
              CHECK(0, "get of %zu at %zu from %d: byte %zu is %u, not %u", n, disp, target, i,
                    dst[i], at(target, 0, disp + i));
              break;
            }
        }
      MPI_Win_unlock(target, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  /* Puts: origin writes a new pattern over the target's whole window in pieces of every size
     (round 1), then the target checks its memory. */
  for (int origin = 0; origin < size; ++origin) {
    const int target = (origin + 1) % size;
    if (rank == origin && target != origin) {
      for (size_t i = 0; i < WIN_BYTES; ++i) buf[i + 5] = at(target, 1, i);
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
      size_t done = 0;
      for (int k = 0; done < WIN_BYTES; ++k) {
        size_t n = sizes[k % nsizes];
        if (n > WIN_BYTES - done) n = WIN_BYTES - done;
        MPI_Put(buf + 5 + done, (int)n, MPI_BYTE, target, (MPI_Aint)done, (int)n, MPI_BYTE, win);
        large += n >= 256 * 1024;
        large_bytes += n >= 256 * 1024 ? n : 0;
        done += n;
      }
      MPI_Win_unlock(target, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == target && target != origin) {
      for (size_t i = 0; i < WIN_BYTES; ++i)
        if (base[i] != at(rank, 1, i)) {
          CHECK(0, "after %d's puts byte %zu is %u, not %u", origin, i, base[i], at(rank, 1, i));
          break;
        }
      for (size_t i = 0; i < WIN_BYTES; ++i) base[i] = at(rank, 0, i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

#ifdef MPIX_SLUICE_COUNTER
  {
    /* Every large op was split with the helper (one caller per process at a time), and the
       helper copied at most what those ops moved. */
    const char* assist = getenv("SLUICE_WIN_ASSIST");
    const unsigned long long ops = counter("win.assist_ops");
    const unsigned long long helped = counter("win.assist_helped_bytes");
    if (!assist)
      CHECK(ops == large || ops == 0, "%llu large gets and puts, %llu split", large, ops);
    else if (strcmp(assist, "0") == 0)
      CHECK(ops == 0, "help is off, yet %llu split", ops);
    CHECK(helped <= large_bytes, "helper copied %llu of %llu bytes", helped, large_bytes);
    CHECK(counter("win.assist_helped_ops") <= ops, "more ops helped than split");
  }
#endif
  free(buf);
  MPI_Win_free(&win);
  MPI_Finalize();
  return check_exit("rma_assist");
}
