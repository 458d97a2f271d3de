/*
 * mpi_pingpong.c - two-rank MPI ping-pong latency, windowed and bidirectional bandwidth.
 *
 * Plain C, MPI-1 calls only (Send, Recv, Isend, Irecv, Waitall, Barrier, Wtime), so it
 * builds with any MPI: Debian's Open MPI and MPICH, and Sluice's own mpicc. It measures
 * exactly what `sluice-bench pingpong` measures and prints the same JSON fields, so the
 * numbers of the three implementations can be compared line by line.
 *
 * Per message size:
 *   first_us  half round-trip time of the very first ping-pong, on buffers that were
 *             freshly mapped for this size and never touched (first-touch page faults,
 *             registration / pinning costs and cache misses all land here). Connection
 *             setup is not: a few warm-up messages on another buffer precede the sweep.
 *   best_us   smallest half round-trip time over the timed iterations (after warm-ups).
 *   lat_us    median half round-trip time over the timed iterations.
 *   bw_MBps   windowed streaming bandwidth, median over repetitions: the sender posts
 *             W Isends of the size back to back, the receiver W Irecvs; both Waitall,
 *             then the receiver sends a 1-byte ack. One repetition = W*size bytes over
 *             the time from the first Isend to the ack's arrival. 1 MB/s = 10^6 B/s.
 *   bw_best_MBps  the best repetition.
 *   bibw_MBps  bidirectional windowed bandwidth, median over repetitions: both ranks post
 *             W Irecvs and W Isends of the size, then Waitall; one repetition = 2*W*size
 *             bytes over rank 0's time from its first Irecv to its Waitall's return.
 *   bibw_best_MBps  the best repetition.
 *
 * Buffers: by default one send and one receive buffer of the largest size, allocated and
 * written once before the sweep and reused for every size and message (as common suites
 * do: the data stays cache-hot where it fits). --fresh maps new, never-touched buffers for
 * every size instead, so first_us includes first-touch page faults and registration.
 *
 * Sizes default to 1 B .. 16 MiB in 5 % steps (round(1.05^i), deduplicated, plus the
 * maximum), as in the first-touch vs best-time sweeps of [NewMadeleine]. The same sequence is
 * produced by tools/sluice-bench/sizes.hpp.
 *
 * Usage: mpirun -n 2 mpi_pingpong [--json] [--sizes a,b,c] [--max-size S] [--iters N]
 *                                  [--reps N] [--window W] [--fresh] [--no-bibw]
 *                                  [--impl NAME] [--no-progress] [--verbose]
 */
#define _GNU_SOURCE
#include <mpi.h>

#include "peer_util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef __linux__
#include <sched.h>
#endif

#define TAG_PING 1
#define TAG_BW 2
#define TAG_ACK 3
#define TAG_BIBW 4

/* Per-size iteration budgets (unless --iters / --reps fix the counts): small sizes run
 * DEFAULT_ITERS / DEFAULT_REPS, large ones are cut so each size moves about this many
 * bytes, and never run fewer than the minimum. */
#define DEFAULT_ITERS 1000
#define DEFAULT_REPS 100
#define LAT_BUDGET_BYTES (256.0 * 1024 * 1024)
#define BW_BUDGET_BYTES (1024.0 * 1024 * 1024)
#define LAT_MIN_ITERS 10
#define BW_MIN_REPS 3

struct options {
  int json;
  int iters;  /* latency iterations: 0 = adapt to the size */
  int reps;   /* bandwidth repetitions: 0 = adapt to the size */
  int window; /* messages in flight per bandwidth repetition */
  int progress;
  int verbose;
  int fresh; /* new buffers per size instead of one reused pair */
  int bibw;  /* measure bidirectional bandwidth too */
  const char* impl;
  size_t max_size;
  size_t* sizes;
  size_t nsizes;
};

/* ---- size sweep: same sequence as tools/sluice-bench/sizes.hpp ---------------------- */

/* round(1.05^i) for i = 0, 1, ... while <= max_size, deduplicated, then max_size itself
 * if the sequence did not land on it. Returns the count; writes at most cap entries. */
static size_t sweep_sizes(size_t max_size, size_t* out, size_t cap) {
  size_t n = 0, prev = 0;
  for (int i = 0;; ++i) {
    double x = pow(1.05, (double)i);
    if (x > (double)max_size + 0.5) break;
    size_t s = (size_t)llround(x);
    if (s > max_size) break;
    if (s != prev) {
      if (n < cap) out[n] = s;
      ++n;
      prev = s;
    }
  }
  if (prev != max_size) {
    if (n < cap) out[n] = max_size;
    ++n;
  }
  return n;
}

static int parse_size_list(const char* arg, struct options* o) {
  size_t cap = 1;
  for (const char* p = arg; *p; ++p)
    if (*p == ',') ++cap;
  o->sizes = (size_t*)calloc(cap, sizeof(size_t));
  o->nsizes = 0;
  char* copy = strdup(arg);
  char* save = NULL;
  for (char* tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (parse_size(tok, &o->sizes[o->nsizes]) != 0) {
      free(copy);
      return -1;
    }
    ++o->nsizes;
  }
  free(copy);
  return o->nsizes > 0 ? 0 : -1;
}

static void usage(FILE* f) {
  fprintf(f,
          "usage: mpirun -n 2 mpi_pingpong [options]\n"
          "  --json           one JSON object per size and line (default: a table)\n"
          "  --sizes a,b,c    message sizes in bytes, K/M/G suffixes (binary) accepted\n"
          "                   default: 1 B .. --max-size in 5%% steps (powers of 1.05)\n"
          "  --max-size S     largest size of the default sweep (default 16M)\n"
          "  --iters N        latency iterations per size (default: 1000, fewer for\n"
          "                   large sizes so that a full sweep stays short)\n"
          "  --reps N         bandwidth repetitions per size (default: 100, fewer for\n"
          "                   large sizes)\n"
          "  --window W       messages in flight per bandwidth repetition (default 64)\n"
          "  --fresh          new, never-touched buffers for every size (default: one\n"
          "                   pair of the largest size, written once and reused)\n"
          "  --no-bibw        skip the bidirectional bandwidth\n"
          "  --impl NAME      implementation name for the output (default: detected)\n"
          "  --no-progress    no progress line on stderr\n"
          "  --verbose        print each rank's CPU binding on stderr\n");
}

/* Returns 0 on success, 1 if help was requested, 2 on a bad argument. */
static int parse_args(int argc, char** argv, struct options* o, int rank) {
  o->json = 0;
  o->iters = 0;
  o->reps = 0;
  o->window = 64;
  o->progress = 1;
  o->verbose = 0;
  o->fresh = 0;
  o->bibw = 1;
  o->impl = NULL;
  o->max_size = (size_t)16 << 20;
  o->sizes = NULL;
  o->nsizes = 0;
  const char* sizes_arg = NULL;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* val = (i + 1 < argc) ? argv[i + 1] : NULL;
    int takes_value = 1;
    if (!strcmp(a, "--json")) {
      o->json = 1;
      takes_value = 0;
    } else if (!strcmp(a, "--no-progress")) {
      o->progress = 0;
      takes_value = 0;
    } else if (!strcmp(a, "--verbose")) {
      o->verbose = 1;
      takes_value = 0;
    } else if (!strcmp(a, "--fresh")) {
      o->fresh = 1;
      takes_value = 0;
    } else if (!strcmp(a, "--no-bibw")) {
      o->bibw = 0;
      takes_value = 0;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      if (rank == 0) usage(stdout);
      return 1;
    } else if (!strcmp(a, "--sizes") || !strcmp(a, "--max-size") || !strcmp(a, "--iters") ||
               !strcmp(a, "--reps") || !strcmp(a, "--window") || !strcmp(a, "--impl")) {
      if (!val) {
        if (rank == 0) fprintf(stderr, "mpi_pingpong: %s needs a value\n", a);
        return 2;
      }
      int bad = 0;
      if (!strcmp(a, "--sizes")) {
        sizes_arg = val;
      } else if (!strcmp(a, "--max-size")) {
        bad = parse_size(val, &o->max_size) != 0 || o->max_size == 0;
      } else if (!strcmp(a, "--impl")) {
        o->impl = val;
      } else {
        char* end = NULL;
        long v = strtol(val, &end, 10);
        bad = (*end != '\0' || v < 1 || v > 100000000);
        if (!strcmp(a, "--iters")) o->iters = (int)v;
        if (!strcmp(a, "--reps")) o->reps = (int)v;
        if (!strcmp(a, "--window")) o->window = (int)v;
      }
      if (bad) {
        if (rank == 0) fprintf(stderr, "mpi_pingpong: bad value for %s: '%s'\n", a, val);
        return 2;
      }
    } else {
      takes_value = 0;
      if (rank == 0) {
        fprintf(stderr, "mpi_pingpong: unknown argument '%s'\n", a);
        usage(stderr);
      }
      return 2;
    }
    if (takes_value) ++i;
  }
  if (sizes_arg) {
    if (parse_size_list(sizes_arg, o) != 0) {
      if (rank == 0) fprintf(stderr, "mpi_pingpong: bad --sizes list '%s'\n", sizes_arg);
      return 2;
    }
  } else {
    size_t n = sweep_sizes(o->max_size, NULL, 0);
    o->sizes = (size_t*)calloc(n, sizeof(size_t));
    o->nsizes = sweep_sizes(o->max_size, o->sizes, n);
  }
  if (o->window > 4096) {
    if (rank == 0) fprintf(stderr, "mpi_pingpong: --window must be <= 4096\n");
    return 2;
  }
  return 0;
}

/* ---- helpers --------------------------------------------------------------------------- */

static const char* detect_impl(void) {
#if defined(OPEN_MPI)
  return "openmpi";
#elif defined(MPICH_VERSION) || defined(MPICH_NAME)
  return "mpich";
#elif defined(MPI_MAX_LIBRARY_VERSION_STRING)
  static char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(lib, &len);
  if (strstr(lib, "Sluice") || strstr(lib, "sluice")) return "sluice";
  if (strstr(lib, "Open MPI")) return "openmpi";
  if (strstr(lib, "MPICH")) return "mpich";
  return "unknown";
#else
  return "unknown";
#endif
}

/* Fresh anonymous mapping: never touched by this process until the benchmark uses it. */
static void* map_fresh(size_t size) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t len = size == 0 ? page : (size + page - 1) / page * page;
  void* p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static void unmap(void* p, size_t size) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t len = size == 0 ? page : (size + page - 1) / page * page;
  munmap(p, len);
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), cmp_double);
  return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int lat_iters(size_t size, int fixed) {
  if (fixed > 0) return fixed;
  double n = LAT_BUDGET_BYTES / (double)(size ? size : 1);
  if (n > DEFAULT_ITERS) n = DEFAULT_ITERS;
  if (n < LAT_MIN_ITERS) n = LAT_MIN_ITERS;
  return (int)n;
}

static int bw_reps(size_t size, int window, int fixed) {
  if (fixed > 0) return fixed;
  double n = BW_BUDGET_BYTES / ((double)(size ? size : 1) * window);
  if (n > DEFAULT_REPS) n = DEFAULT_REPS;
  if (n < BW_MIN_REPS) n = BW_MIN_REPS;
  return (int)n;
}

static void human_size(size_t s, char* buf, size_t len) {
  if (s >= ((size_t)1 << 20))
    snprintf(buf, len, "%.1f MiB", (double)s / (1 << 20));
  else if (s >= 1024)
    snprintf(buf, len, "%.1f KiB", (double)s / 1024);
  else
    snprintf(buf, len, "%zu B", s);
}

/* Progress line "[ 37/300] 4.2 KiB", redrawn in place: on stderr when it is a terminal,
 * else on /dev/tty (launchers forward a rank's stderr line by line through a pipe), else
 * nowhere. It ends with '\r' so result lines forwarded later overwrite it. */
static int progress_open(void) {
  if (isatty(2)) return 2;
  return open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC);
}

static void progress_show(int fd, size_t index, size_t total, size_t size) {
  char hs[32], line[96];
  if (fd < 0) return;
  human_size(size, hs, sizeof hs);
  int n = snprintf(line, sizeof line, "\r\033[K[%3zu/%zu] %s\r", index + 1, total, hs);
  if (n > 0 && write(fd, line, (size_t)n) < 0) return;
}

static void progress_clear(int fd) {
  if (fd >= 0 && write(fd, "\r\033[K", 4) < 0) return;
}

static void report_binding(int rank) {
#ifdef __linux__
  cpu_set_t set;
  char cpus[256] = "";
  size_t off = 0;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE && off + 8 < sizeof(cpus); ++c)
      if (CPU_ISSET(c, &set)) off += (size_t)snprintf(cpus + off, sizeof(cpus) - off, "%s%d",
                                                       off ? "," : "", c);
  }
  fprintf(stderr, "mpi_pingpong: rank %d pid %d allowed cpus {%s}, running on cpu %d\n", rank,
          (int)getpid(), cpus, sched_getcpu());
#else
  fprintf(stderr, "mpi_pingpong: rank %d pid %d (binding not reported on this OS)\n", rank,
          (int)getpid());
#endif
}

/* ---- the measurement -------------------------------------------------------------------- */

/* First contact: a few ping-pongs of each protocol class (small, medium, the largest size)
 * on a separate, touched buffer, so that connection setup and lazy initialisation inside
 * the library are not charged to the first size's first_us. */
static void warm_up_connection(size_t max_size, int rank) {
  size_t sizes[3] = {1, 65536, max_size};
  size_t len = max_size > 65536 ? max_size : 65536;
  char* buf = (char*)malloc(len);
  memset(buf, 0, len);
  int peer = 1 - rank;
  for (int k = 0; k < 3; ++k) {
    int count = (int)sizes[k];
    for (int i = 0; i < 2; ++i) {
      if (rank == 0) {
        MPI_Send(buf, count, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD);
        MPI_Recv(buf, count, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, count, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, count, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD);
      }
    }
  }
  free(buf);
}

struct result {
  int iters, reps;
  double first_us, best_us, lat_us, avg_us, bw_MBps, bw_best_MBps, bibw_MBps, bibw_best_MBps;
};

/* The reused pair (default): allocated for the largest size and written once. */
static char *shared_sbuf, *shared_rbuf;

static void measure(size_t size, const struct options* o, int rank, struct result* r) {
  int peer = 1 - rank;
  int count = (int)size; /* MPI-1 counts are int; sizes beyond 2 GiB are not supported */
  char* sbuf = o->fresh ? (char*)map_fresh(size) : shared_sbuf;
  char* rbuf = o->fresh ? (char*)map_fresh(size) : shared_rbuf;
  if (!sbuf || !rbuf) {
    fprintf(stderr, "mpi_pingpong: rank %d: cannot map %zu bytes\n", rank, size);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  r->iters = lat_iters(size, o->iters);
  r->reps = bw_reps(size, o->window, o->reps);
  int warm = r->iters >= 100 ? 10 : 2;

  /* 1. The first ping-pong of this size (on never-touched buffers with --fresh). */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    double t0 = MPI_Wtime();
    MPI_Send(sbuf, count, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD);
    MPI_Recv(rbuf, count, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    r->first_us = (MPI_Wtime() - t0) * 1e6 / 2;
  } else {
    MPI_Recv(rbuf, count, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(sbuf, count, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD);
  }
  /* Give fresh buffers defined contents now that the first touch has been measured. */
  if (o->fresh) memset(sbuf, rank + 1, size);

  /* 2. Warm-ups, then timed iterations, each round trip timed on its own. */
  double* t = (double*)malloc(sizeof(double) * (size_t)(r->iters > r->reps ? r->iters : r->reps));
  for (int i = 0; i < warm + r->iters; ++i) {
    if (i == warm) MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      double t0 = MPI_Wtime();
      MPI_Send(sbuf, count, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD);
      MPI_Recv(rbuf, count, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (i >= warm) t[i - warm] = (MPI_Wtime() - t0) * 1e6 / 2;
    } else {
      MPI_Recv(rbuf, count, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(sbuf, count, MPI_BYTE, peer, TAG_PING, MPI_COMM_WORLD);
    }
  }
  if (rank == 0) {
    double sum = 0, best = t[0];
    for (int i = 0; i < r->iters; ++i) {
      sum += t[i];
      if (t[i] < best) best = t[i];
    }
    r->avg_us = sum / r->iters;
    r->best_us = best;
    r->lat_us = median(t, r->iters);
  }

  /* 3. Windowed bandwidth: W messages in flight, then a 1-byte ack. */
  MPI_Request* req = (MPI_Request*)malloc(sizeof(MPI_Request) * (size_t)o->window);
  char ack = 0;
  int bw_warm = r->reps >= 10 ? 2 : 1;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int rep = 0; rep < bw_warm + r->reps; ++rep) {
    if (rank == 0) {
      double t0 = MPI_Wtime();
      for (int w = 0; w < o->window; ++w)
        MPI_Isend(sbuf, count, MPI_BYTE, peer, TAG_BW, MPI_COMM_WORLD, &req[w]);
      MPI_Waitall(o->window, req, MPI_STATUSES_IGNORE);
      MPI_Recv(&ack, 1, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      double dt = MPI_Wtime() - t0;
      if (rep >= bw_warm) t[rep - bw_warm] = (double)size * o->window / dt / 1e6;
    } else {
      for (int w = 0; w < o->window; ++w)
        MPI_Irecv(rbuf, count, MPI_BYTE, peer, TAG_BW, MPI_COMM_WORLD, &req[w]);
      MPI_Waitall(o->window, req, MPI_STATUSES_IGNORE);
      MPI_Send(&ack, 1, MPI_BYTE, peer, TAG_ACK, MPI_COMM_WORLD);
    }
  }
  if (rank == 0) {
    double best = t[0];
    for (int i = 0; i < r->reps; ++i)
      if (t[i] > best) best = t[i];
    r->bw_best_MBps = best;
    r->bw_MBps = median(t, r->reps);
  }

  /* 4. Bidirectional: both ranks receive W and send W at once. */
  if (o->bibw) {
    MPI_Request* both = (MPI_Request*)malloc(sizeof(MPI_Request) * 2 * (size_t)o->window);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int rep = 0; rep < bw_warm + r->reps; ++rep) {
      double t0 = MPI_Wtime();
      for (int w = 0; w < o->window; ++w)
        MPI_Irecv(rbuf, count, MPI_BYTE, peer, TAG_BIBW, MPI_COMM_WORLD, &both[w]);
      for (int w = 0; w < o->window; ++w)
        MPI_Isend(sbuf, count, MPI_BYTE, peer, TAG_BIBW, MPI_COMM_WORLD, &both[o->window + w]);
      MPI_Waitall(2 * o->window, both, MPI_STATUSES_IGNORE);
      double dt = MPI_Wtime() - t0;
      if (rep >= bw_warm) t[rep - bw_warm] = 2.0 * (double)size * o->window / dt / 1e6;
    }
    if (rank == 0) {
      double best = t[0];
      for (int i = 0; i < r->reps; ++i)
        if (t[i] > best) best = t[i];
      r->bibw_best_MBps = best;
      r->bibw_MBps = median(t, r->reps);
    }
    free(both);
  }
  free(req);
  free(t);
  if (o->fresh) {
    unmap(sbuf, size);
    unmap(rbuf, size);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);

  struct options o;
  int rc = parse_args(argc, argv, &o, rank);
  if (rc != 0) {
    MPI_Finalize();
    return rc == 1 ? 0 : 2;
  }
  if (nranks != 2) {
    if (rank == 0) fprintf(stderr, "mpi_pingpong: needs exactly 2 ranks, got %d\n", nranks);
    MPI_Finalize();
    return 2;
  }
  for (size_t i = 0; i < o.nsizes; ++i) {
    if (o.sizes[i] > (size_t)0x7fffffff) {
      if (rank == 0) fprintf(stderr, "mpi_pingpong: size %zu exceeds an int count\n", o.sizes[i]);
      MPI_Finalize();
      return 2;
    }
  }
  const char* impl = o.impl ? o.impl : detect_impl();
  if (o.verbose) {
    report_binding(rank);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  int progress = (o.progress && rank == 0 && o.nsizes > 1) ? progress_open() : -1;
  size_t max_size = 1;
  for (size_t i = 0; i < o.nsizes; ++i)
    if (o.sizes[i] > max_size) max_size = o.sizes[i];
  warm_up_connection(max_size, rank);
  if (!o.fresh) {
    shared_sbuf = (char*)malloc(max_size);
    shared_rbuf = (char*)malloc(max_size);
    if (!shared_sbuf || !shared_rbuf) {
      fprintf(stderr, "mpi_pingpong: rank %d: cannot allocate %zu bytes\n", rank, max_size);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(shared_sbuf, rank + 1, max_size);
    memset(shared_rbuf, 0, max_size);
  }

  if (rank == 0 && !o.json) {
    printf("# mpi_pingpong impl=%s ranks=2 window=%d buffers=%s (lat: half round trip; bw: "
           "10^6 B/s)\n",
           impl, o.window, o.fresh ? "fresh" : "reused");
    printf("%12s %7s %10s %10s %10s %6s %12s %12s %12s\n", "size", "iters", "lat_us", "best_us",
           "first_us", "reps", "bw_MBps", "bw_best_MBps", "bibw_MBps");
  }
  for (size_t i = 0; i < o.nsizes; ++i) {
    size_t size = o.sizes[i];
    progress_show(progress, i, o.nsizes, size);
    struct result r;
    memset(&r, 0, sizeof r);
    measure(size, &o, rank, &r);
    if (rank != 0) continue;
    if (o.json) {
      printf("{\"bench\":\"pingpong\",\"impl\":\"%s\",\"driver\":\"shm\",\"size\":%zu,"
             "\"iters\":%d,\"lat_us\":%.3f,\"first_us\":%.3f,\"best_us\":%.3f,"
             "\"avg_us\":%.3f,\"bw_MBps\":%.1f,\"bw_best_MBps\":%.1f,"
             "\"bibw_MBps\":%.1f,\"bibw_best_MBps\":%.1f,\"window\":%d,"
             "\"reps\":%d,\"buffers\":\"%s\"}\n",
             impl, size, r.iters, r.lat_us, r.first_us, r.best_us, r.avg_us, r.bw_MBps,
             r.bw_best_MBps, r.bibw_MBps, r.bibw_best_MBps, o.window, r.reps,
             o.fresh ? "fresh" : "reused");
    } else {
      printf("%12zu %7d %10.3f %10.3f %10.3f %6d %12.1f %12.1f %12.1f\n", size, r.iters,
             r.lat_us, r.best_us, r.first_us, r.reps, r.bw_MBps, r.bw_best_MBps, r.bibw_MBps);
    }
    fflush(stdout);
  }
  progress_clear(progress);
  if (progress > 2) close(progress);
  free(o.sizes);
  free(shared_sbuf);
  free(shared_rbuf);
  MPI_Finalize();
  return 0;
}
