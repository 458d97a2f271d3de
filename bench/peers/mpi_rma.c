/*
 * mpi_rma.c - MPI one-sided benchmark in the style of OSU's one-sided tests, built with any
 * MPI's compiler wrapper (Sluice's build/bin/mpicc, mpicc.openmpi, mpicc.mpich). Two ranks:
 * rank 0 is the origin, rank 1 the target (which only synchronises).
 *
 *   put-lat-flush   8 B (--lat-size) MPI_Put + MPI_Win_flush per iteration inside one
 *                   MPI_Win_lock_all epoch (osu_put_latency -s flush)
 *   put-lat-fence   MPI_Put then MPI_Win_fence on both ranks per iteration
 *                   (osu_put_latency -s fence): the fence's synchronisation included
 *   fop-lat         MPI_Fetch_and_op (MPI_SUM, 8 B) + flush per iteration
 *   acc-rate        8 B MPI_Accumulate (MPI_SUM), windows of 64 then a flush: operations/s
 *   get-bw          MPI_Get of each size, windows of 64 then a flush (osu_get_bw -s flush):
 *                   bytes/s, for --sizes (default 1K..4M, powers of 4)
 *
 * Buffers: one window and one origin buffer of the largest size, reused for every size and
 * iteration (as OSU does); --fresh gives every size a new window and origin buffer, never
 * touched before the measurement (first-touch and registration costs included).
 * --win allocate|create: MPI_Win_allocate (default) or MPI_Win_create over malloc'd memory.
 * --per-size: also, for every size, put-lat and get-lat (one MPI_Put / MPI_Get + flush per
 * iteration, us) and put-bw (as get-bw with MPI_Put), at most 2000 windows per size.
 * Output: a table, or with --json one object per line:
 *   {"impl":..., "test":"get-bw", "size":1048576, "win":"allocate", "fresh":false,
 *    "value":..., "unit":"MB/s"}
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_util.h"

#define WINDOW 64

static int rank;
static int json = 0, fresh = 0, use_create = 0, per_size = 0;
static const char* impl = "mpi";

static void emit(const char* test, size_t size, double value, const char* unit) {
  if (rank != 0) return;
  if (json)
    printf("{\"impl\":\"%s\",\"test\":\"%s\",\"size\":%zu,\"win\":\"%s\",\"fresh\":%s,"
           "\"value\":%.4f,\"unit\":\"%s\"}\n",
           impl, test, size, use_create ? "create" : "allocate", fresh ? "true" : "false", value,
           unit);
  else
    printf("%-14s %10zu %14.3f %s\n", test, size, value, unit);
  fflush(stdout);
}

typedef struct {
  MPI_Win win;
  char* base;
  void* user; /* --win create: the malloc'd window memory */
} window;

static void win_open(window* w, size_t bytes) {
  if (use_create) {
    w->user = malloc(bytes ? bytes : 1);
    w->base = w->user;
    MPI_Win_create(w->base, (MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->win);
  } else {
    w->user = NULL;
    MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w->base, &w->win);
  }
  if (!fresh) memset(w->base, 1, bytes);
}

static void win_close(window* w) {
  MPI_Win_free(&w->win);
  free(w->user);
}

static void put_lat_flush(window* w, char* buf, size_t size, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = 0;
  if (rank == 0) {
    MPI_Win_lock_all(0, w->win);
    for (int i = 0; i < iters + iters / 10; ++i) {
      if (i == iters / 10) t0 = MPI_Wtime();
      MPI_Put(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, w->win);
      MPI_Win_flush(1, w->win);
    }
    double t = MPI_Wtime() - t0;
    MPI_Win_unlock_all(w->win);
    emit("put-lat-flush", size, t / iters * 1e6, "us");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void put_lat_fence(window* w, char* buf, size_t size, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = 0;
  MPI_Win_fence(0, w->win);
  for (int i = 0; i < iters + iters / 10; ++i) {
    if (i == iters / 10) t0 = MPI_Wtime();
    if (rank == 0) MPI_Put(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, w->win);
    MPI_Win_fence(0, w->win);
  }
  double t = MPI_Wtime() - t0;
  MPI_Win_fence(MPI_MODE_NOSUCCEED, w->win);
  emit("put-lat-fence", size, t / iters * 1e6, "us");
  MPI_Barrier(MPI_COMM_WORLD);
}

static void fop_lat(window* w, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    int64_t one = 1, old = 0;
    double t0 = 0;
    MPI_Win_lock_all(0, w->win);
    for (int i = 0; i < iters + iters / 10; ++i) {
      if (i == iters / 10) t0 = MPI_Wtime();
      MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, 0, MPI_SUM, w->win);
      MPI_Win_flush(1, w->win);
    }
    double t = MPI_Wtime() - t0;
    MPI_Win_unlock_all(w->win);
    emit("fop-lat", 8, t / iters * 1e6, "us");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void acc_rate(window* w, int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    int64_t one = 1;
    double t0 = 0;
    MPI_Win_lock_all(0, w->win);
    for (int i = 0; i < iters + iters / 10; ++i) {
      if (i == iters / 10) t0 = MPI_Wtime();
      for (int k = 0; k < WINDOW; ++k)
        MPI_Accumulate(&one, 1, MPI_INT64_T, 1, 8 * k, 1, MPI_INT64_T, MPI_SUM, w->win);
      MPI_Win_flush(1, w->win);
    }
    double t = MPI_Wtime() - t0;
    MPI_Win_unlock_all(w->win);
    emit("acc-rate", 8, (double)iters * WINDOW / t / 1e6, "Mops/s");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* One op of `size` bytes + flush per iteration (put-lat / get-lat). */
static void op_lat(window* w, char* buf, size_t size, int iters, int put) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    double t0 = 0;
    MPI_Win_lock_all(0, w->win);
    int warm = iters / 10 ? iters / 10 : 1;
    for (int i = 0; i < iters + warm; ++i) {
      if (i == warm) t0 = MPI_Wtime();
      if (put)
        MPI_Put(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, w->win);
      else
        MPI_Get(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, w->win);
      MPI_Win_flush(1, w->win);
    }
    double t = MPI_Wtime() - t0;
    MPI_Win_unlock_all(w->win);
    emit(put ? "put-lat" : "get-lat", size, t / iters * 1e6, "us");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* put-bw / get-bw: windows of WINDOW puts (gets) of `size` bytes, then a flush. */
static void window_bw(window* w, char* buf, size_t size, int iters, int put) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    double t0 = 0;
    MPI_Win_lock_all(0, w->win);
    int warm = iters / 10 ? iters / 10 : 1;
    for (int i = 0; i < iters + warm; ++i) {
      if (i == warm) t0 = MPI_Wtime();
      for (int k = 0; k < WINDOW; ++k) {
        if (put)
          MPI_Put(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, w->win);
        else
          MPI_Get(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, w->win);
      }
      MPI_Win_flush(1, w->win);
    }
    double t = MPI_Wtime() - t0;
    MPI_Win_unlock_all(w->win);
    emit(put ? "put-bw" : "get-bw", size, (double)size * WINDOW * iters / t / 1e6, "MB/s");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  size_t sizes[64];
  int nsizes = 0;
  size_t lat_size = 8;
  int lat_iters = 20000;
  for (size_t s = 1024; s <= 4u << 20; s *= 4) sizes[nsizes++] = s;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else if (!strcmp(argv[i], "--fresh")) {
      fresh = 1;
    } else if (!strcmp(argv[i], "--per-size")) {
      per_size = 1;
    } else if (!strcmp(argv[i], "--win") && i + 1 < argc) {
      use_create = !strcmp(argv[++i], "create");
    } else if (!strcmp(argv[i], "--impl") && i + 1 < argc) {
      impl = argv[++i];
    } else if (!strcmp(argv[i], "--lat-iters") && i + 1 < argc) {
      lat_iters = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      nsizes = 0;
      char* list = strdup(argv[++i]);
      for (char* tok = strtok(list, ","); tok && nsizes < 64; tok = strtok(NULL, ","))
        if (parse_size(tok, &sizes[nsizes]) == 0) ++nsizes;
      free(list);
    } else {
      if (rank == 0)
        fprintf(stderr,
                "usage: mpi_rma [--json] [--fresh] [--win allocate|create] [--impl NAME] "
                "[--sizes 1K,1M,...] [--lat-iters N] [--per-size]\n");
      MPI_Finalize();
      return 2;
    }
  }
  if (nranks != 2) {
    if (rank == 0) fprintf(stderr, "mpi_rma: run with 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  size_t max = 4096;
  for (int i = 0; i < nsizes; ++i)
    if (sizes[i] > max) max = sizes[i];
  char* buf = malloc(max);
  memset(buf, 2, max);
  if (!json && rank == 0) printf("%-14s %10s %14s\n", "# test", "size", "value");

  window w;
  win_open(&w, fresh ? 4096 : max);
  put_lat_flush(&w, buf, lat_size, lat_iters);
  put_lat_fence(&w, buf, lat_size, lat_iters / 4);
  fop_lat(&w, lat_iters / 2);
  acc_rate(&w, lat_iters / 20);
  if (fresh) win_close(&w);
  for (int i = 0; i < nsizes; ++i) {
    size_t size = sizes[i];
    char* origin = buf;
    if (fresh) {
      origin = malloc(size);
      win_open(&w, size);
    }
    /* About 256 MiB per size, at least 5 windows. */
    size_t per = size * WINDOW;
    int iters = (int)((256u << 20) / per);
    if (iters < 5) iters = 5;
    if (per_size && iters > 2000) iters = 2000; /* small sizes: ~128 K ops, not millions */
    window_bw(&w, origin, size, iters, 0);
    if (per_size) {
      window_bw(&w, origin, size, iters, 1);
      int lat = (int)((64u << 20) / size);
      if (lat > lat_iters) lat = lat_iters;
      if (lat < 20) lat = 20;
      op_lat(&w, origin, size, lat, 1);
      op_lat(&w, origin, size, lat, 0);
    }
    if (fresh) {
      win_close(&w);
      free(origin);
    }
  }
  if (!fresh) win_close(&w);
  free(buf);
  MPI_Finalize();
  return 0;
}
