/*
 * mpi_coll.c - collective latency benchmark: MPI_Bcast (MPI_BYTE, root 0), MPI_Allreduce
 * (MPI_DOUBLE, MPI_SUM) and MPI_Alltoall (MPI_BYTE), built with any MPI (Sluice's mpicc,
 * Debian's Open MPI and MPICH) so the implementations can be compared line by line.
 *
 * Per operation and size: `reps` repetitions of `iters` back-to-back calls (after warm-up
 * calls), each repetition starting from a barrier. A repetition's time per call is the
 * slowest rank's (reduced with MAX outside the timed region).
 *   lat_us   median over repetitions of the time per call
 *   best_us  the fastest repetition
 * Sizes: Bcast — bytes broadcast; Allreduce — bytes of the whole vector (8 B = one double);
 * Alltoall — bytes sent to each peer.
 *
 * Iterations: --iters N (default by size: 2000 up to 4 KiB, 300 up to 64 KiB, 50 above),
 * lowered so that one repetition takes about --rep-ms milliseconds (default 30) at the
 * speed of the warm-up (itself bounded by two calls timed before it): a stack that
 * collapses (MPICH busy-polling on oversubscribed cores, milliseconds per call) then still
 * finishes in seconds. At least 3 calls per repetition.
 *
 * Correctness: after the timed repetitions every rank clears its receive buffer and one
 * more call runs with fresh data (a new value per rank and element); every element is
 * checked, so a collective that moves nothing cannot look fast. A wrong element aborts.
 *
 * Usage: mpirun -n P mpi_coll [--json] [--ops bcast,allreduce,alltoall] [--sizes 8,64K]
 *                             [--iters N] [--reps N] [--rep-ms MS] [--impl NAME]
 * Defaults: all three ops; Bcast and Allreduce 8 B, 64 KiB and 1 MiB; Alltoall 8 B, 1 KiB,
 * 64 KiB and 1 MiB.
 */
#define _POSIX_C_SOURCE 200809L /* strdup, strtok_r under -std=c11 */
#include <mpi.h>

#include "peer_util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op_kind { OP_BCAST, OP_ALLREDUCE, OP_ALLTOALL };

/* Iterations per repetition: fewer for large messages so each size takes similar time. */
static int iters_for(size_t bytes) {
  if (bytes <= 4096) return 2000;
  if (bytes <= 65536) return 300;
  return 50;
}

/* Calls that fit in rep_ms at the slowest rank's `secs` per call, 3..max_iters (a
 * collective: every rank calls it). */
static int fit_iters(double secs, double rep_ms, int max_iters) {
  double slowest;
  MPI_Allreduce(&secs, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rep_ms <= 0 || slowest <= 0) return max_iters;
  const double fit = rep_ms * 1e-3 / slowest;
  if (fit >= max_iters) return max_iters;
  return fit < 3 ? 3 : (int)fit;
}

/* The byte rank `src` sends to rank `dst` at offset i of the block, for salt `salt`. */
static unsigned char pattern(int src, int dst, size_t i, int salt) {
  return (unsigned char)(src * 131 + dst * 17 + (int)(i % 251) + salt * 7 + 1);
}

struct bufs {
  enum op_kind kind;
  int me, P;
  size_t count; /* elements (bytes for bcast/alltoall, doubles for allreduce) per call */
  char* sbuf;
  char* rbuf;
};

static void call(const struct bufs* b) {
  switch (b->kind) {
    case OP_BCAST:
      MPI_Bcast(b->rbuf, (int)b->count, MPI_BYTE, 0, MPI_COMM_WORLD);
      break;
    case OP_ALLREDUCE:
      MPI_Allreduce(b->sbuf, b->rbuf, (int)b->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      break;
    case OP_ALLTOALL:
      MPI_Alltoall(b->sbuf, (int)b->count, MPI_BYTE, b->rbuf, (int)b->count, MPI_BYTE,
                   MPI_COMM_WORLD);
      break;
  }
}

/* Fills the send side with data for salt `salt`; clears what the call must write. */
static void fill(const struct bufs* b, size_t bytes, int salt) {
  switch (b->kind) {
    case OP_BCAST:
      for (size_t i = 0; i < b->count; ++i)
        b->rbuf[i] = b->me == 0 ? (char)pattern(0, 0, i, salt) : 0;
      break;
    case OP_ALLREDUCE:
      for (size_t i = 0; i < b->count; ++i) ((double*)b->sbuf)[i] = b->me + (double)i + salt;
      memset(b->rbuf, 0, bytes);
      break;
    case OP_ALLTOALL:
      for (int d = 0; d < b->P; ++d)
        for (size_t i = 0; i < b->count; ++i)
          b->sbuf[(size_t)d * b->count + i] = (char)pattern(b->me, d, i, salt);
      memset(b->rbuf, 0, bytes);
      break;
  }
}

/* Number of wrong elements after a call with salt `salt` (0: correct). */
static size_t wrong(const struct bufs* b, int salt, size_t* first) {
  size_t bad = 0;
  switch (b->kind) {
    case OP_BCAST:
      for (size_t i = 0; i < b->count; ++i)
        if ((unsigned char)b->rbuf[i] != pattern(0, 0, i, salt) && !bad++) *first = i;
      break;
    case OP_ALLREDUCE: {
      /* Sum over ranks r of (r + i + salt): small integers, exact in a double. */
      const double P = b->P;
      for (size_t i = 0; i < b->count; ++i) {
        const double want = P * (P - 1) / 2 + P * ((double)i + salt);
        if (((double*)b->rbuf)[i] != want && !bad++) *first = i;
      }
      break;
    }
    case OP_ALLTOALL:
      for (int s = 0; s < b->P; ++s)
        for (size_t i = 0; i < b->count; ++i)
          if ((unsigned char)b->rbuf[(size_t)s * b->count + i] != pattern(s, b->me, i, salt) &&
              !bad++)
            *first = (size_t)s * b->count + i;
      break;
  }
  return bad;
}

static void run(const char* op, enum op_kind kind, size_t size, int fixed_iters, int reps,
                double rep_ms, int json, const char* impl) {
  struct bufs b = {.kind = kind};
  MPI_Comm_rank(MPI_COMM_WORLD, &b.me);
  MPI_Comm_size(MPI_COMM_WORLD, &b.P);
  size_t bytes;
  if (kind == OP_ALLREDUCE) {
    b.count = (size + sizeof(double) - 1) / sizeof(double);
    bytes = b.count * sizeof(double);
  } else {
    b.count = size;
    bytes = kind == OP_ALLTOALL ? size * (size_t)b.P : size;
  }
  b.sbuf = malloc(bytes ? bytes : 1);
  b.rbuf = malloc(bytes ? bytes : 1);
  memset(b.sbuf, 0, bytes);
  fill(&b, bytes, 0);

  /* The iteration count, the same on every rank: two calls timed after a first, cold one
   * bound the warm-up; the warm-up, timed, bounds the calls per repetition. */
  const int max_iters =
      fixed_iters > 0 ? fixed_iters : iters_for(kind == OP_ALLTOALL ? bytes : size);
  call(&b);
  double t0 = MPI_Wtime();
  call(&b);
  call(&b);
  double est = (MPI_Wtime() - t0) / 2;
  int iters = fit_iters(est, rep_ms, max_iters);
  const int warm = iters / 10 + 5;
  t0 = MPI_Wtime();
  for (int i = 0; i < warm; ++i) call(&b);
  est = (MPI_Wtime() - t0) / warm;
  iters = fit_iters(est, rep_ms, max_iters);

  double* t = malloc(reps * sizeof(double));
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) call(&b);
    double mine = (MPI_Wtime() - t0) / iters, slowest;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    t[r] = slowest * 1e6;
  }

  /* Correctness guard: a benchmark of wrong results is worthless. */
  fill(&b, bytes, 1);
  call(&b);
  size_t first = 0;
  const size_t bad = wrong(&b, 1, &first);
  if (bad) {
    fprintf(stderr, "mpi_coll: %s size %zu: rank %d has %zu wrong elements (first at %zu)\n", op,
            size, b.me, bad, first);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  qsort(t, reps, sizeof(double), cmp_double);
  if (b.me == 0) {
    if (json)
      printf(
          "{\"bench\":\"%s\",\"impl\":\"%s\",\"ranks\":%d,\"size\":%zu,\"iters\":%d,"
          "\"reps\":%d,\"lat_us\":%.3f,\"best_us\":%.3f}\n",
          op, impl, b.P, size, iters, reps, t[reps / 2], t[0]);
    else
      printf("%-10s %-8s ranks=%d size=%-8zu iters=%-5d lat_us=%10.3f best_us=%10.3f\n", op, impl,
             b.P, size, iters, t[reps / 2], t[0]);
    fflush(stdout);
  }
  free(t);
  free(b.sbuf);
  free(b.rbuf);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int json = 0, iters = 0, reps = 11;
  double rep_ms = 30;
  const char* impl = "mpi";
  const char* ops = "bcast,allreduce,alltoall";
  const char* sizes = NULL;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--json"))
      json = 1;
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--rep-ms") && i + 1 < argc)
      rep_ms = atof(argv[++i]);
    else if (!strcmp(argv[i], "--impl") && i + 1 < argc)
      impl = argv[++i];
    else if (!strcmp(argv[i], "--ops") && i + 1 < argc)
      ops = argv[++i];
    else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
      sizes = argv[++i];
    else {
      fprintf(stderr, "mpi_coll: unknown argument '%s'\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  if (reps < 1) reps = 1;
  char* op_list = strdup(ops);
  char* op_save = NULL;
  for (char* op = strtok_r(op_list, ",", &op_save); op; op = strtok_r(NULL, ",", &op_save)) {
    enum op_kind kind;
    const char* list;
    if (!strcmp(op, "bcast")) {
      kind = OP_BCAST;
      list = "8,64K,1M";
    } else if (!strcmp(op, "allreduce")) {
      kind = OP_ALLREDUCE;
      list = "8,64K,1M";
    } else if (!strcmp(op, "alltoall")) {
      kind = OP_ALLTOALL;
      list = "8,1K,64K,1M";
    } else {
      fprintf(stderr, "mpi_coll: unknown op '%s' (bcast, allreduce, alltoall)\n", op);
      MPI_Abort(MPI_COMM_WORLD, 1);
      return 1;
    }
    char* size_list = strdup(sizes ? sizes : list);
    char* save = NULL;
    for (char* s = strtok_r(size_list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
      size_t v = 0;
      if (parse_size(s, &v) || v > INT32_MAX / 8) {
        fprintf(stderr, "mpi_coll: bad size '%s'\n", s);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      run(op, kind, v, iters, reps, rep_ms, json, impl);
    }
    free(size_list);
  }
  free(op_list);
  MPI_Finalize();
  return 0;
}
