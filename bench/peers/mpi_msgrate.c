/*
 * mpi_msgrate.c - two-rank MPI message rate: windows of nonblocking small messages.
 *
 * Plain C, MPI-1 calls only, so it builds with any MPI (Debian's Open MPI and MPICH, and
 * Sluice's mpicc). One window: rank 0 posts W MPI_Isend of S bytes from one buffer, rank 1
 * W MPI_Irecv into one buffer, both MPI_Waitall, then rank 1 sends a 0-byte ack that rank 0
 * receives before the next window (as the common message-rate suites do). The rate is
 * W * iters messages over the time of the timed windows, median and best of --reps runs.
 *
 * --count-mode is for counting instructions (callgrind on both ranks, two --iters values
 * differenced; same host only): the ranks then order each window through a flag page in
 * POSIX shared memory, waiting for each other with nanosleep outside MPI, so that no rank
 * ever waits inside MPI: rank 1 posts its W receives and says so; rank 0 then sends and
 * completes its W sends and says so; only then does rank 1 call MPI_Waitall, with every
 * message already in its inbox. Idle progress polls, whose number depends on timing, are
 * thereby kept out of the counts, and the three calls' inclusive counts
 * (callgrind_annotate --inclusive=yes) measure the request path per message: Isend, Irecv,
 * and Waitall doing the matching, delivery and completion. No MPI control messages are
 * sent. Not a rate: the sleeps dominate the time.
 *
 * Usage: mpirun -n 2 mpi_msgrate [--size S] [--window W] [--iters N] [--reps N]
 *                                [--warmup N] [--count-mode] [--json]
 */
#define _GNU_SOURCE
#include <mpi.h>

#include "peer_util.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define TAG_DATA 1
#define TAG_ACK 2

struct options {
  size_t size;
  int window;
  int iters;
  int reps;
  int warmup;
  int count_mode;
  int json;
};

static void usage(FILE* f) {
  fprintf(f,
          "usage: mpirun -n 2 mpi_msgrate [options]\n"
          "  --size S       message size in bytes, K/M suffixes accepted (default 8)\n"
          "  --window W     messages per window (default 64)\n"
          "  --iters N      timed windows per repetition (default 10000)\n"
          "  --reps N       repetitions, median and best reported (default 5)\n"
          "  --warmup N     untimed windows first (default 100)\n"
          "  --count-mode   for instruction counts (see the file's comment): no rank\n"
          "                 waits inside MPI; same host only; no rate printed\n"
          "  --json         one JSON object instead of a line of text\n");
}

static int parse_int(const char* s, long lo, long hi, long* out) {
  char* end = NULL;
  long v = strtol(s, &end, 10);
  if (!s[0] || *end != '\0' || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

/* 0 on success, 1 for --help, 2 on a bad argument. */
static int parse_args(int argc, char** argv, struct options* o, int rank) {
  o->size = 8;
  o->window = 64;
  o->iters = 10000;
  o->reps = 5;
  o->warmup = 100;
  o->count_mode = 0;
  o->json = 0;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      if (rank == 0) usage(stdout);
      return 1;
    }
    if (!strcmp(a, "--json")) {
      o->json = 1;
      continue;
    }
    if (!strcmp(a, "--count-mode")) {
      o->count_mode = 1;
      continue;
    }
    long v = 0;
    int bad = !val;
    if (!bad && !strcmp(a, "--size")) {
      bad = parse_size(val, &o->size) != 0 || o->size > ((size_t)1 << 30);
    } else if (!bad && !strcmp(a, "--window")) {
      bad = parse_int(val, 1, 1 << 20, &v);
      o->window = (int)v;
    } else if (!bad && !strcmp(a, "--iters")) {
      bad = parse_int(val, 1, 1L << 30, &v);
      o->iters = (int)v;
    } else if (!bad && !strcmp(a, "--reps")) {
      bad = parse_int(val, 1, 1000, &v);
      o->reps = (int)v;
    } else if (!bad && !strcmp(a, "--warmup")) {
      bad = parse_int(val, 0, 1L << 30, &v);
      o->warmup = (int)v;
    } else {
      if (rank == 0) {
        fprintf(stderr, "mpi_msgrate: unknown argument or missing value '%s'\n", a);
        usage(stderr);
      }
      return 2;
    }
    if (bad) {
      if (rank == 0) fprintf(stderr, "mpi_msgrate: bad value for %s: '%s'\n", a, val ? val : "");
      return 2;
    }
    ++i;
  }
  return 0;
}

/* --count-mode: the two ranks' progress through the windows, in shared memory. */
struct flags {
  _Atomic long posted; /* windows whose receives rank 1 has posted */
  _Atomic long sent;   /* windows whose sends rank 0 has completed */
};

/* Maps the flag page: rank 0 creates it under a name derived from its pid, rank 1 opens
 * it; removed from the namespace once both have it mapped. */
static struct flags* map_flags(int rank) {
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char name[64];
  snprintf(name, sizeof name, "/mpi_msgrate.%d", pid);
  int fd = -1;
  if (rank == 0) {
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd >= 0 && ftruncate(fd, sizeof(struct flags)) != 0) {
      close(fd);
      fd = -1;
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) fd = shm_open(name, O_RDWR, 0600);
  void* p = fd < 0 ? MAP_FAILED
                   : mmap(NULL, sizeof(struct flags), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (fd >= 0) close(fd);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) shm_unlink(name);
  if (p == MAP_FAILED) {
    fprintf(stderr, "mpi_msgrate: cannot map the flag page %s (--count-mode is same-host)\n",
            name);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return (struct flags*)p;
}

/* Waits outside MPI (no progress calls) until *v reaches `until`. */
static void await(_Atomic long* v, long until) {
  const struct timespec ts = {0, 20000};
  while (atomic_load_explicit(v, memory_order_acquire) < until) nanosleep(&ts, NULL);
}

/* One window as the rate is measured: rank 0 sends, rank 1 receives, then the ack. */
static void window(int rank, const struct options* o, char* buf, MPI_Request* reqs) {
  const int w = o->window, n = (int)o->size;
  if (rank == 0) {
    for (int i = 0; i < w; ++i) MPI_Isend(buf, n, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &reqs[i]);
    MPI_Waitall(w, reqs, MPI_STATUSES_IGNORE);
    MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    for (int i = 0; i < w; ++i) MPI_Irecv(buf, n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &reqs[i]);
    MPI_Waitall(w, reqs, MPI_STATUSES_IGNORE);
    MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ACK, MPI_COMM_WORLD);
  }
}

/* Window k in --count-mode: receives posted before the data is sent, and no rank waiting
 * inside MPI. */
static void counted_window(int rank, const struct options* o, char* buf, MPI_Request* reqs,
                           struct flags* f, long k) {
  const int w = o->window, n = (int)o->size;
  if (rank == 0) {
    await(&f->posted, k);
    for (int i = 0; i < w; ++i) MPI_Isend(buf, n, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &reqs[i]);
    MPI_Waitall(w, reqs, MPI_STATUSES_IGNORE);
    atomic_store_explicit(&f->sent, k, memory_order_release);
  } else {
    for (int i = 0; i < w; ++i) MPI_Irecv(buf, n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &reqs[i]);
    atomic_store_explicit(&f->posted, k, memory_order_release);
    await(&f->sent, k);
    MPI_Waitall(w, reqs, MPI_STATUSES_IGNORE);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  struct options o;
  const int pa = parse_args(argc, argv, &o, rank);
  if (pa != 0 || size != 2) {
    if (pa == 0 && rank == 0) fprintf(stderr, "mpi_msgrate: needs exactly 2 ranks\n");
    MPI_Finalize();
    return pa == 1 ? 0 : 2;
  }
  char* buf = (char*)calloc(o.size ? o.size : 1, 1);
  MPI_Request* reqs = (MPI_Request*)calloc((size_t)o.window, sizeof(MPI_Request));
  if (!buf || !reqs) {
    fprintf(stderr, "mpi_msgrate: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  if (o.count_mode) {
    struct flags* f = map_flags(rank);
    const long total = (long)o.warmup + o.iters;
    for (long k = 1; k <= total; ++k) counted_window(rank, &o, buf, reqs, f, k);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
      printf("mpi_msgrate: count mode, %ld windows of %d x %zu B (count instructions)\n", total,
             o.window, o.size);
    munmap(f, sizeof *f);
    free(buf);
    free(reqs);
    MPI_Finalize();
    return 0;
  }

  for (int i = 0; i < o.warmup; ++i) window(rank, &o, buf, reqs);
  double* rates = (double*)calloc((size_t)o.reps, sizeof(double));
  for (int r = 0; r < o.reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < o.iters; ++i) window(rank, &o, buf, reqs);
    const double t = MPI_Wtime() - t0;
    rates[r] = (double)o.window * o.iters / t;
  }
  if (rank == 0) {
    qsort(rates, (size_t)o.reps, sizeof(double), cmp_double);
    const double median = rates[o.reps / 2], best = rates[o.reps - 1];
    if (o.json)
      printf("{\"size\": %zu, \"window\": %d, \"iters\": %d, \"reps\": %d, "
             "\"msgs_per_s\": %.0f, \"best_msgs_per_s\": %.0f, \"MBps\": %.2f}\n",
             o.size, o.window, o.iters, o.reps, median, best, median * (double)o.size / 1e6);
    else
      printf("size %zu B  window %d  rate %.3f Mmsg/s (median of %d), best %.3f, %.2f MB/s\n",
             o.size, o.window, median / 1e6, o.reps, best / 1e6, median * (double)o.size / 1e6);
  }
  free(rates);
  free(buf);
  free(reqs);
  MPI_Finalize();
  return 0;
}
