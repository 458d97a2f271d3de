/* MPI_Alloc_mem / MPI_Free_mem: the memory is usable for messages of every size, and (Sluice,
   over a route that registers memory, e.g. SLUICE_DRIVERS=tcp SLUICE_TCP_ZEROCOPY=on with
   ALLOC_MEM_EXPECT_REGISTERED=1) it is registered once when allocated, used by every
   rendezvous message from or into it without registering again, and released by
   MPI_Free_mem. Without such a route nothing is registered (checked too). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define LEN (1 << 20)
#define ROUNDS 20

#ifdef MPIX_SLUICE_COUNTER
static unsigned long long counter(const char* name) {
  unsigned long long v = 0;
  CHECK(MPIX_Sluice_counter(name, &v) == MPI_SUCCESS, "no counter %s", name);
  return v;
}
#endif

static unsigned char pattern(int round, size_t i) {
  return (unsigned char)(round * 131 + i * 7 + (i >> 12));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* expect_env = getenv("ALLOC_MEM_EXPECT_REGISTERED");
  const int expect_registered = expect_env && atoi(expect_env) == 1;

  unsigned char* buf = NULL;
  CHECK(MPI_Alloc_mem(LEN, MPI_INFO_NULL, &buf) == MPI_SUCCESS && buf, "MPI_Alloc_mem");
  unsigned char* small = NULL;
  CHECK(MPI_Alloc_mem(64, MPI_INFO_NULL, &small) == MPI_SUCCESS && small, "MPI_Alloc_mem(64)");
#ifdef MPIX_SLUICE_COUNTER
  const unsigned long long regs = counter("reg.alloc_mem.registrations");
  const unsigned long long regions = counter("reg.alloc_mem.regions");
  if (expect_registered) {
    /* One pinning domain (tcp's): one registration per allocation from 32 KiB (the small
       one comes from malloc, unregistered), made now. */
    CHECK(regions == 1 && regs == 1, "regions %llu, registrations %llu (want 1, 1)", regions, regs);
  } else {
    CHECK(regions == 0, "registered %llu regions without a pinning route", regions);
  }
  const unsigned long long hits0 = counter("reg.alloc_mem.hits");
  const unsigned long long cached0 = counter("reg.strategy.cache");
  const unsigned long long registered0 = counter("reg.strategy.register");
#endif

  /* Rank 0 sends from its allocation, the last rank receives into its own (rendezvous at
     1 MiB), both for ROUNDS rounds; then the other way with a small message. */
  const int peer = size - 1;
  for (int r = 0; r < ROUNDS && size > 1; ++r) {
    if (rank == 0) {
      for (size_t i = 0; i < LEN; ++i) buf[i] = pattern(r, i);
      MPI_Send(buf, LEN, MPI_BYTE, peer, r, MPI_COMM_WORLD);
    } else if (rank == peer) {
      memset(buf, 0, LEN);
      MPI_Recv(buf, LEN, MPI_BYTE, 0, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (size_t i = 0; i < LEN; ++i)
        CHECK(buf[i] == pattern(r, i), "round %d byte %zu: %u, want %u", r, i, buf[i],
              pattern(r, i));
    }
  }
  if (size > 1) {
    if (rank == peer) {
      small[0] = 42;
      MPI_Send(small, 1, MPI_BYTE, 0, 99, MPI_COMM_WORLD);
    } else if (rank == 0) {
      MPI_Recv(small, 1, MPI_BYTE, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(small[0] == 42, "small message");
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);

#ifdef MPIX_SLUICE_COUNTER
  if (expect_registered && (rank == 0 || rank == peer) && size > 1) {
    /* Every 1 MiB message used the kept registration: no registration per message. */
    const unsigned long long hits = counter("reg.alloc_mem.hits") - hits0;
    CHECK(hits >= ROUNDS, "only %llu of %d messages used the kept registration", hits, ROUNDS);
    CHECK(
        counter("reg.strategy.cache") == cached0 && counter("reg.strategy.register") == registered0,
        "messages from MPI_Alloc_mem memory were registered again");
    CHECK(counter("reg.alloc_mem.registrations") == regs, "registered again");
  }
#endif
  CHECK(MPI_Free_mem(buf) == MPI_SUCCESS, "MPI_Free_mem");
  CHECK(MPI_Free_mem(small) == MPI_SUCCESS, "MPI_Free_mem(small)");
#ifdef MPIX_SLUICE_COUNTER
  CHECK(counter("reg.alloc_mem.regions") == 0 && counter("reg.alloc_mem.bytes") == 0,
        "MPI_Free_mem left %llu regions registered", counter("reg.alloc_mem.regions"));
  if (rank == 0 && !check_failures)
    printf("alloc_mem: ok (registrations %llu, kept-registration hits %llu)\n",
           counter("reg.alloc_mem.registrations"), counter("reg.alloc_mem.hits"));
#else
  if (rank == 0 && !check_failures) printf("alloc_mem: ok\n");
#endif
  MPI_Finalize();
  return check_exit("alloc_mem");
}
