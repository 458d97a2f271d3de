/*
 * mpi_nbc_overlap.c - overlap of nonblocking collectives with computation, IMB-NBC's method,
 * built with any MPI (Sluice's mpicc, Debian's Open MPI and MPICH).
 *
 * Per operation and size, every time the mean over `iters` calls (after warm-up), each
 * repetition starting from a barrier, the slowest rank's mean (MAX over ranks, outside
 * the timed region); the fastest repetition is reported (--stat median for the median):
 * on a shared machine, other jobs only ever add time.
 *   t_pure   start the operation, wait for it                   (the operation alone)
 *   t_cpu    compute for t_pure (calibrated per rank), no MPI     (the computation alone)
 *   t_ovrl   start, compute the same amount, wait (no MPI call in between: only a progress
 *            thread or hardware can advance the operation meanwhile)
 *   overlap  = max(0, min(1, (t_pure + t_cpu - t_ovrl) / min(t_pure, t_cpu)))
 *
 * Ceiling (reported as "ceiling"): when the process's cores are all busy computing, the
 * data copies of a shared-memory transfer still need CPU time on them. With C the CPU time
 * of the copies of the busiest rank (bytes copied x memcpy time per byte, measured here at
 * the same size; bytes copied = bytes sent + bytes received + local block, i.e. the two-copy
 * pipelined path), the best possible t_ovrl is max(t_pure, t_cpu + C), which gives
 * ceiling = (t_pure + t_cpu - max(t_pure, t_cpu + C)) / min(t_pure, t_cpu), clipped to [0,1].
 *
 * Operations (size = bytes per rank block for gather/scatter/alltoall, whole buffer for
 * bcast/allreduce/sendrecv; allreduce is MPI_FLOAT MPI_SUM):
 *   ibcast igather iscatter ialltoall iallreduce isendrecv (Isend+Irecv with rank^1)
 *
 * Usage: mpirun -n P mpi_nbc_overlap [--json] [--ops ialltoall,igather] [--sizes 1,64K,1M]
 *                                    [--reps N] [--time S] [--impl NAME] [--label TEXT]
 *                                    [--stat min|median]
 * Defaults: every op; sizes 1 B, 64 B, 1 KiB, 16 KiB, 64 KiB, 256 KiB, 1 MiB, 4 MiB; 5 reps;
 * each repetition aims at --time seconds (default 0.05).
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>

#include "peer_util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile double g_sink;

/* A dependent floating-point chain: pure CPU, no memory traffic (the copies get the bus). */
static void compute(long n) {
  double a = 1.0;
  const double b = 1.0000001;
  for (long i = 0; i < n; ++i) a = a * b + 1e-9;
  g_sink = a;
}

enum op { IBCAST, IGATHER, ISCATTER, IALLTOALL, IALLREDUCE, ISENDRECV, NOPS };
static const char* op_names[NOPS] = {"ibcast",    "igather",    "iscatter",
                                     "ialltoall", "iallreduce", "isendrecv"};

struct bufs {
  char* s;
  char* r;
  size_t bytes;
};

static int me, P;

static void start(int op, size_t size, struct bufs* b, MPI_Request* req, int* nreq) {
  const int cnt = (int)size;
  *nreq = 1;
  switch (op) {
    case IBCAST:
      MPI_Ibcast(b->s, cnt, MPI_BYTE, 0, MPI_COMM_WORLD, req);
      break;
    case IGATHER:
      MPI_Igather(b->s, cnt, MPI_BYTE, b->r, cnt, MPI_BYTE, 0, MPI_COMM_WORLD, req);
      break;
    case ISCATTER:
      MPI_Iscatter(b->s, cnt, MPI_BYTE, b->r, cnt, MPI_BYTE, 0, MPI_COMM_WORLD, req);
      break;
    case IALLTOALL:
      MPI_Ialltoall(b->s, cnt, MPI_BYTE, b->r, cnt, MPI_BYTE, MPI_COMM_WORLD, req);
      break;
    case IALLREDUCE:
      MPI_Iallreduce(b->s, b->r, (int)(size / sizeof(float)), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                     req);
      break;
    case ISENDRECV: {
      const int peer = me ^ 1;
      if (peer >= P) {
        *nreq = 0;
        break;
      }
      MPI_Irecv(b->r, cnt, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &req[0]);
      MPI_Isend(b->s, cnt, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &req[1]);
      *nreq = 2;
      break;
    }
  }
}

/* Bytes this rank copies for one operation on the two-copy shared-memory path. */
static double bytes_copied(int op, size_t s) {
  const double S = (double)s;
  int log2p = 0;
  while ((1 << log2p) < P) ++log2p;
  switch (op) {
    case IBCAST:
      return me == 0 ? log2p * S : 2 * S; /* binomial tree: root sends log P */
    case IGATHER:
    case ISCATTER:
      return me == 0 ? (double)P * S : S;
    case IALLTOALL:
      return (2.0 * (P - 1) + 1) * S;
    case IALLREDUCE:
      return 2.0 * log2p * S + S; /* recursive doubling, plus the result */
    case ISENDRECV:
      return (me ^ 1) < P ? 2 * S : 0;
  }
  return 0;
}

/* One repetition's mean time per call of `what`: 0 pure, 1 cpu, 2 overlapped. */
static double measure(int what, int op, size_t size, struct bufs* b, int iters, long ncpu) {
  MPI_Request req[2];
  int nreq;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    if (what != 1) start(op, size, b, req, &nreq);
    if (what != 0) compute(ncpu);
    if (what != 1) MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
  }
  double mine = (MPI_Wtime() - t0) / iters, slowest;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

static int g_use_median = 0;
static double median(double* v, int n) {
  qsort(v, n, sizeof(double), cmp_double);
  return g_use_median ? v[n / 2] : v[0];
}

static double ns_per_iter; /* compute() calibration */
static double copy_ns_per_byte(size_t s) {
  if (s == 0) return 0;
  char* a = malloc(s);
  char* c = malloc(s);
  memset(a, 1, s);
  memset(c, 2, s);
  int n = (int)(64 * 1048576 / s);
  if (n < 8) n = 8;
  if (n > 100000) n = 100000;
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
      memcpy(i & 1 ? c : a, i & 1 ? a : c, s);
      g_sink += (i & 1 ? c : a)[s / 2];
    }
    double t = (MPI_Wtime() - t0) / n;
    if (t < best) best = t;
  }
  free(a);
  free(c);
  return best * 1e9 / (double)s;
}

static void run(int op, size_t size, int reps, double rep_time, int json, const char* impl,
                const char* label) {
  if (op == IALLREDUCE && size < sizeof(float)) return; /* no whole element */
  struct bufs b;
  b.bytes = size * (size_t)P;
  b.s = malloc(b.bytes ? b.bytes : 1);
  b.r = malloc(b.bytes ? b.bytes : 1);
  memset(b.s, me + 1, b.bytes);
  memset(b.r, 0, b.bytes);
  MPI_Request req[2];
  int nreq;
  /* Warm-up, then the iteration count from rank 0's estimate (all ranks must agree). */
  double t0 = MPI_Wtime();
  for (int i = 0; i < 5; ++i) {
    start(op, size, &b, req, &nreq);
    MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
  }
  double est = (MPI_Wtime() - t0) / 5;
  int iters = (int)(rep_time / (est > 1e-7 ? est : 1e-7));
  if (iters < 3) iters = 3;
  if (iters > 5000) iters = 5000;
  MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);

  /* Correctness guard on the warm-up's result. */
  int bad = 0;
  if (size > 0) {
    if (op == IALLTOALL || (op == IGATHER && me == 0))
      for (int r = 0; r < P; ++r) bad |= b.r[(size_t)r * size] != (char)(r + 1);
    if (op == ISCATTER && me != 0) bad |= b.r[0] != 1;
    if (op == ISENDRECV && (me ^ 1) < P) bad |= b.r[size - 1] != (char)((me ^ 1) + 1);
  }
  if (bad) {
    fprintf(stderr, "mpi_nbc_overlap: %s %zu B: wrong data on rank %d\n", op_names[op], size, me);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  double* tp = malloc(reps * sizeof(double));
  double* tc = malloc(reps * sizeof(double));
  double* to = malloc(reps * sizeof(double));
  for (int r = 0; r < reps; ++r) tp[r] = measure(0, op, size, &b, iters, 0);
  const double t_pure = median(tp, reps);
  /* Calibrate this rank's compute to t_pure (the slowest rank's time): start from the
   * startup estimate, then correct it twice against the measured time (the machine's load
   * and frequency change the rate). */
  long ncpu = (long)(t_pure * 1e9 / ns_per_iter);
  for (int k = 0; k < 2 && ncpu > 0; ++k) {
    const int n = iters < 20 ? iters : 20;
    double c0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) compute(ncpu);
    const double t = (MPI_Wtime() - c0) / n;
    if (t > 0) ncpu = (long)((double)ncpu * t_pure / t);
  }
  for (int r = 0; r < reps; ++r) {
    tc[r] = measure(1, op, size, &b, iters, ncpu);
    to[r] = measure(2, op, size, &b, iters, ncpu);
  }
  const double t_cpu = median(tc, reps), t_ovrl = median(to, reps);
  const double mn = t_pure < t_cpu ? t_pure : t_cpu;
  double overlap = mn > 0 ? (t_pure + t_cpu - t_ovrl) / mn : 0;
  overlap = overlap < 0 ? 0 : overlap > 1 ? 1 : overlap;

  double copy = bytes_copied(op, size) * copy_ns_per_byte(size) * 1e-9, copy_max;
  MPI_Allreduce(&copy, &copy_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const double best_ovrl = t_pure > t_cpu + copy_max ? t_pure : t_cpu + copy_max;
  double ceiling = mn > 0 ? (t_pure + t_cpu - best_ovrl) / mn : 0;
  ceiling = ceiling < 0 ? 0 : ceiling > 1 ? 1 : ceiling;

  if (me == 0) {
    if (json)
      printf(
          "{\"bench\":\"nbc-overlap\",\"impl\":\"%s\",\"label\":\"%s\",\"op\":\"%s\","
          "\"ranks\":%d,\"size\":%zu,\"iters\":%d,\"reps\":%d,\"t_pure_us\":%.3f,"
          "\"t_cpu_us\":%.3f,\"t_ovrl_us\":%.3f,\"copy_us\":%.3f,\"overlap\":%.3f,"
          "\"ceiling\":%.3f}\n",
          impl, label, op_names[op], P, size, iters, reps, t_pure * 1e6, t_cpu * 1e6, t_ovrl * 1e6,
          copy_max * 1e6, overlap, ceiling);
    else
      printf(
          "%-10s %-8s %-10s ranks=%d size=%-8zu t_pure=%9.2fus t_cpu=%9.2fus "
          "t_ovrl=%9.2fus copy=%8.2fus overlap=%5.1f%% ceiling=%5.1f%%\n",
          op_names[op], impl, label, P, size, t_pure * 1e6, t_cpu * 1e6, t_ovrl * 1e6,
          copy_max * 1e6, overlap * 100, ceiling * 100);
    fflush(stdout);
  }
  free(tp);
  free(tc);
  free(to);
  free(b.s);
  free(b.r);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  int json = 0, reps = 5;
  double rep_time = 0.05;
  const char* impl = "mpi";
  const char* label = "";
  const char* ops = "ibcast,igather,iscatter,ialltoall,iallreduce,isendrecv";
  const char* sizes = "1,64,1K,16K,64K,256K,1M,4M";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--json"))
      json = 1;
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--time") && i + 1 < argc)
      rep_time = atof(argv[++i]);
    else if (!strcmp(argv[i], "--impl") && i + 1 < argc)
      impl = argv[++i];
    else if (!strcmp(argv[i], "--stat") && i + 1 < argc)
      g_use_median = !strcmp(argv[++i], "median");
    else if (!strcmp(argv[i], "--label") && i + 1 < argc)
      label = argv[++i];
    else if (!strcmp(argv[i], "--ops") && i + 1 < argc)
      ops = argv[++i];
    else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
      sizes = argv[++i];
    else {
      fprintf(stderr, "mpi_nbc_overlap: unknown argument '%s'\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  if (reps < 1) reps = 1;
  /* Calibrate compute(): ns per iteration, best of 5 runs of ~10 ms. */
  ns_per_iter = 1e30;
  for (int r = 0; r < 5; ++r) {
    const long n = 4000000;
    double t0 = MPI_Wtime();
    compute(n);
    double ns = (MPI_Wtime() - t0) * 1e9 / n;
    if (ns < ns_per_iter) ns_per_iter = ns;
  }
  char* op_list = strdup(ops);
  char* save_op = NULL;
  for (char* o = strtok_r(op_list, ",", &save_op); o; o = strtok_r(NULL, ",", &save_op)) {
    int op = -1;
    for (int k = 0; k < NOPS; ++k)
      if (!strcmp(o, op_names[k])) op = k;
    if (op < 0) {
      fprintf(stderr, "mpi_nbc_overlap: unknown op '%s'\n", o);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char* size_list = strdup(sizes);
    char* save = NULL;
    for (char* s = strtok_r(size_list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
      size_t v = 0;
      if (parse_size(s, &v)) {
        fprintf(stderr, "mpi_nbc_overlap: bad size '%s'\n", s);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      run(op, v, reps, rep_time, json, impl, label);
    }
    free(size_list);
  }
  free(op_list);
  MPI_Finalize();
  return 0;
}
