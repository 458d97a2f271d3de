/*
 * mpi_coll.c - collective latency benchmark: MPI_Allreduce (MPI_DOUBLE, MPI_SUM) and
 * MPI_Alltoall (MPI_BYTE), built with any MPI (Sluice's mpicc, Debian's Open MPI and MPICH)
 * so the implementations can be compared line by line.
 *
 * Per operation and size: `reps` repetitions of `iters` back-to-back calls (after warm-up
 * calls), each repetition starting from a barrier. A repetition's time per call is the
 * slowest rank's (reduced with MAX outside the timed region).
 *   lat_us   median over repetitions of the time per call
 *   best_us  the fastest repetition
 * Sizes: Allreduce — bytes of the whole vector (8 B = one double); Alltoall — bytes sent
 * to each peer.
 *
 * Usage: mpirun -n P mpi_coll [--json] [--ops allreduce,alltoall] [--sizes 8,64K]
 *                             [--iters N] [--reps N] [--impl NAME]
 * Defaults: both ops; Allreduce 8 B and 64 KiB, Alltoall 1 KiB and 64 KiB.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, strtok_r under -std=c11 */
#include <mpi.h>

#include "peer_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Iterations per repetition: fewer for large messages so each size takes similar time. */
static int iters_for(size_t bytes, int fixed) {
  if (fixed > 0) return fixed;
  if (bytes <= 4096) return 2000;
  if (bytes <= 65536) return 300;
  return 50;
}

static void run(const char* op, size_t size, int fixed_iters, int reps, int json,
                const char* impl) {
  int me, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const int alltoall = strcmp(op, "alltoall") == 0;
  const size_t count = alltoall ? size : (size + sizeof(double) - 1) / sizeof(double);
  const size_t bytes = alltoall ? size * (size_t)P : count * sizeof(double);
  char* sbuf = malloc(bytes ? bytes : 1);
  char* rbuf = malloc(bytes ? bytes : 1);
  memset(sbuf, 1, bytes);
  memset(rbuf, 0, bytes);
  if (!alltoall)
    for (size_t i = 0; i < count; ++i) ((double*)sbuf)[i] = me + (double)i;
  const int iters = iters_for(alltoall ? size * P : bytes, fixed_iters);
  double* t = malloc(reps * sizeof(double));
#define CALL()                                                                            \
  do {                                                                                    \
    if (alltoall)                                                                         \
      MPI_Alltoall(sbuf, (int)count, MPI_BYTE, rbuf, (int)count, MPI_BYTE, MPI_COMM_WORLD); \
    else                                                                                  \
      MPI_Allreduce(sbuf, rbuf, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);         \
  } while (0)
  for (int i = 0; i < iters / 10 + 5; ++i) CALL();
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) CALL();
    double mine = (MPI_Wtime() - t0) / iters, slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    t[r] = slowest * 1e6;
  }
  /* Correctness guard: a benchmark of wrong results is worthless. */
  if (!alltoall && count > 0) {
    double want = (double)P * (P - 1) / 2;
    if (((double*)rbuf)[0] != want) {
      fprintf(stderr, "mpi_coll: allreduce gave %g, want %g\n", ((double*)rbuf)[0], want);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  qsort(t, reps, sizeof(double), cmp_double);
  if (me == 0) {
    if (json)
      printf("{\"bench\":\"%s\",\"impl\":\"%s\",\"ranks\":%d,\"size\":%zu,\"iters\":%d,"
             "\"reps\":%d,\"lat_us\":%.3f,\"best_us\":%.3f}\n",
             op, impl, P, size, iters, reps, t[reps / 2], t[0]);
    else
      printf("%-10s %-8s ranks=%d size=%-8zu lat_us=%10.3f best_us=%10.3f\n", op, impl, P,
             size, t[reps / 2], t[0]);
    fflush(stdout);
  }
  free(t);
  free(sbuf);
  free(rbuf);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int json = 0, iters = 0, reps = 11;
  const char* impl = "mpi";
  const char* ops = "allreduce,alltoall";
  const char* sizes = NULL;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--json")) json = 1;
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--impl") && i + 1 < argc) impl = argv[++i];
    else if (!strcmp(argv[i], "--ops") && i + 1 < argc) ops = argv[++i];
    else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = argv[++i];
    else {
      fprintf(stderr, "mpi_coll: unknown argument '%s'\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  if (reps < 1) reps = 1;
  char* op_list = strdup(ops);
  for (char* op = strtok(op_list, ","); op; op = strtok(NULL, ",")) {
    if (strcmp(op, "allreduce") && strcmp(op, "alltoall")) {
      fprintf(stderr, "mpi_coll: unknown op '%s' (allreduce, alltoall)\n", op);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const char* list = sizes ? sizes : (!strcmp(op, "allreduce") ? "8,64K" : "1K,64K");
    char* size_list = strdup(list);
    char* save = NULL;
    for (char* s = strtok_r(size_list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
      size_t v = 0;
      if (parse_size(s, &v)) {
        fprintf(stderr, "mpi_coll: bad size '%s'\n", s);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      run(op, v, iters, reps, json, impl);
    }
    free(size_list);
  }
  free(op_list);
  MPI_Finalize();
  return 0;
}
