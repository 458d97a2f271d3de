/*
 * mpi_mrate.c - multi-pair message rate and bandwidth, the way common suites measure it.
 *
 * Plain C, MPI-1 calls only, so it builds with Debian's Open MPI and MPICH and with Sluice's
 * mpicc. With N ranks (N even), rank i < N/2 sends to rank i + N/2. Per size and repetition,
 * each sender posts W Isends of the size back to back from one buffer, each receiver W
 * Irecvs into one buffer; both Waitall; each receiver then answers with a 1-byte ack. One
 * repetition moves N/2 * W messages; rank 0 times it from its first Isend to its ack.
 * All pairs start each repetition together (a barrier before the timed loop, then lockstep
 * through the acks).
 *
 * Per size (medians over repetitions, after warm-ups):
 *   rate_Mmsgs   messages per second over all pairs, in millions
 *   bw_MBps      bytes per second over all pairs, 10^6 B/s
 *   rate_best_Mmsgs  the best repetition
 *
 * Usage: mpirun -n N mpi_mrate [--json] [--sizes a,b,c] [--window W] [--reps R]
 *                               [--iters I] [--impl NAME]
 *   --sizes   default 8
 *   --window  messages per pair and repetition (default 64)
 *   --reps    timed repetitions per size (default 100), each of --iters windows (default 20)
 */
#define _GNU_SOURCE
#include <mpi.h>

#include "peer_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_DATA 11
#define TAG_ACK 12

static const char* detect_impl(void) {
#if defined(OPEN_MPI)
  return "openmpi";
#elif defined(MPICH_VERSION) || defined(MPICH_NAME)
  return "mpich";
#else
  static char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(lib, &len);
  if (strstr(lib, "Sluice") || strstr(lib, "sluice")) return "sluice";
  return "unknown";
#endif
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  int json = 0, window = 64, reps = 100, iters = 20;
  const char* impl = NULL;
  const char* sizes_arg = "8";
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--json")) {
      json = 1;
    } else if (v && !strcmp(a, "--sizes")) {
      sizes_arg = v;
      ++i;
    } else if (v && !strcmp(a, "--impl")) {
      impl = v;
      ++i;
    } else if (v && (!strcmp(a, "--window") || !strcmp(a, "--reps") || !strcmp(a, "--iters"))) {
      char* end = NULL;
      long n = strtol(v, &end, 10);
      if (*end != '\0' || n < 1 || n > 1000000) {
        if (rank == 0) fprintf(stderr, "mpi_mrate: bad value for %s: '%s'\n", a, v);
        MPI_Finalize();
        return 2;
      }
      if (!strcmp(a, "--window")) window = (int)n;
      if (!strcmp(a, "--reps")) reps = (int)n;
      if (!strcmp(a, "--iters")) iters = (int)n;
      ++i;
    } else {
      if (rank == 0)
        fprintf(stderr,
                "usage: mpirun -n N mpi_mrate [--json] [--sizes a,b,c] [--window W] "
                "[--reps R] [--iters I] [--impl NAME]\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (nranks < 2 || nranks % 2) {
    if (rank == 0) fprintf(stderr, "mpi_mrate: needs an even number of ranks, got %d\n", nranks);
    MPI_Finalize();
    return 2;
  }
  if (!impl) impl = detect_impl();
  const int pairs = nranks / 2;
  const int sender = rank < pairs;
  const int peer = sender ? rank + pairs : rank - pairs;

  /* Sizes: a comma-separated list with K/M suffixes (peer_util.h's parse_size). */
  char* list = strdup(sizes_arg);
  char* save = NULL;
  MPI_Request* req = (MPI_Request*)malloc(sizeof(MPI_Request) * (size_t)window);
  double* t = (double*)malloc(sizeof(double) * (size_t)reps);
  if (rank == 0 && !json)
    printf("# mpi_mrate impl=%s ranks=%d pairs=%d window=%d\n%12s %14s %14s %12s\n", impl, nranks,
           pairs, window, "size", "rate_Mmsgs", "best_Mmsgs", "bw_MBps");
  for (char* tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    size_t size = 0;
    if (parse_size(tok, &size) != 0 || size > (size_t)1 << 30) {
      if (rank == 0) fprintf(stderr, "mpi_mrate: bad size '%s'\n", tok);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char* buf = (char*)malloc(size ? size : 1);
    memset(buf, rank + 1, size ? size : 1);
    char ack = 0;
    const int warm = 3;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < warm + reps; ++r) {
      double t0 = MPI_Wtime();
      for (int it = 0; it < iters; ++it) {
        for (int w = 0; w < window; ++w) {
          if (sender)
            MPI_Isend(buf, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[w]);
          else
            MPI_Irecv(buf, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[w]);
        }
        MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
        if (sender)
          MPI_Recv(&ack, 1, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
          MPI_Send(&ack, 1, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD);
      }
      double dt = MPI_Wtime() - t0;
      if (r >= warm) t[r - warm] = (double)pairs * window * iters / dt / 1e6;
    }
    free(buf);
    if (rank != 0) continue;
    double best = t[0];
    for (int i = 0; i < reps; ++i)
      if (t[i] > best) best = t[i];
    const double rate = median(t, reps);
    if (json)
      printf("{\"bench\":\"mrate\",\"impl\":\"%s\",\"ranks\":%d,\"pairs\":%d,\"size\":%zu,"
             "\"window\":%d,\"rate_Mmsgs\":%.3f,\"rate_best_Mmsgs\":%.3f,\"bw_MBps\":%.1f}\n",
             impl, nranks, pairs, size, window, rate, best, rate * (double)size);
    else
      printf("%12zu %14.3f %14.3f %12.1f\n", size, rate, best, rate * (double)size);
    fflush(stdout);
  }
  free(list);
  free(req);
  free(t);
  MPI_Finalize();
  return 0;
}
