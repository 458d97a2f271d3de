/*
 * mpi_allconn.c - [OpenMPI-UD]'s startup benchmark for any MPI (the peer of
 * `sluice-bench allconn`, same method and JSON fields).
 *
 * Right after MPI_Init and a barrier, every rank sends a 0-byte message to every other
 * rank in ring order (rank r posts receives from everyone, then sends to r+1, r+2, ...,
 * r-1) and waits for all of them, so lazy connection setup is part of the time. Reported
 * over all ranks: time_us (slowest rank), init_us (slowest MPI_Init), and per process
 * afterwards: rss_kB (VmRSS), sockbuf_kB (SO_SNDBUF + SO_RCVBUF summed over the process's
 * sockets: what the kernel lets them hold), mem_kB (the sum), sockets.
 *
 * Usage: mpirun -n N mpi_allconn [--impl NAME]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static double resident_kB(void) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  double kB = 0;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) kB = strtod(line + 6, NULL);
  if (f) fclose(f);
  return kB;
}

static void socket_buffers(double* kB, double* count) {
  *kB = 0;
  *count = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    int fd = atoi(e->d_name);
    if (fd == dirfd(d)) continue;
    char path[64], link[64] = {0};
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    if (readlink(path, link, sizeof link - 1) <= 0 || strncmp(link, "socket:", 7) != 0) continue;
    int snd = 0, rcv = 0;
    socklen_t len = sizeof snd;
    if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, &len) != 0) continue;
    len = sizeof rcv;
    if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, &len) != 0) continue;
    *kB += ((double)snd + rcv) / 1024.0;
    *count += 1;
  }
  closedir(d);
}

int main(int argc, char** argv) {
  double t_init = now_us();
  MPI_Init(&argc, &argv);
  t_init = now_us() - t_init;
  const char* impl = "mpi";
  for (int i = 1; i + 1 < argc; ++i)
    if (strcmp(argv[i], "--impl") == 0) impl = argv[i + 1];
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Request* reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)n);
  char none = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now_us();
  int k, count = 0;
  for (k = 1; k < n; ++k)
    MPI_Irecv(&none, 0, MPI_BYTE, (me - k + n) % n, 11, MPI_COMM_WORLD, &reqs[count++]);
  for (k = 1; k < n; ++k)
    MPI_Isend(&none, 0, MPI_BYTE, (me + k) % n, 11, MPI_COMM_WORLD, &reqs[count++]);
  MPI_Waitall(count, reqs, MPI_STATUSES_IGNORE);
  double mine[5];
  mine[0] = now_us() - t0;
  mine[1] = t_init;
  mine[2] = resident_kB();
  socket_buffers(&mine[3], &mine[4]);
  double max[5], sum[5];
  MPI_Reduce(mine, max, 5, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(mine, sum, 5, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me == 0)
    printf("{\"bench\":\"allconn\",\"impl\":\"%s\",\"driver\":\"%s\",\"size\":0,\"iters\":1,"
           "\"n\":%d,\"cpus\":%ld,\"time_us\":%.1f,\"init_us\":%.1f,\"rss_kB\":%.0f,"
           "\"rss_kB_max\":%.0f,\"sockbuf_kB\":%.0f,\"sockbuf_kB_max\":%.0f,\"mem_kB\":%.0f,"
           "\"sockets\":%.1f}\n",
           impl, impl, n, sysconf(_SC_NPROCESSORS_ONLN), max[0], max[1], sum[2] / n, max[2],
           sum[3] / n, max[3], (sum[2] + sum[3]) / n, sum[4] / n);
  free(reqs);
  MPI_Finalize();
  return 0;
}
