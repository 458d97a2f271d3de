/*
 * copy_ceiling.c - what a single copy can reach on this machine, without any MPI.
 *
 * Intra-node MPI bandwidth is bounded by one memory copy per message: either a CMA
 * process_vm_readv from the peer's buffer (Open MPI vader's and UCX's single-copy path)
 * or a memcpy through shared memory (copy-in/copy-out does two). This program measures
 * both, from a process bound to CPU 0: CMA reads the buffer of a process bound to CPU 1,
 * memcpy copies within the process. Warm buffers, best of 5 runs per size.
 *
 * Build and run: cc -O2 -o copy_ceiling copy_ceiling.c && ./copy_ceiling [size...]
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void bind_to(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  if (sched_setaffinity(0, sizeof s, &s) != 0) perror("copy_ceiling: sched_setaffinity");
}

int main(int argc, char** argv) {
  size_t sizes[32] = {8, 4096, 65536, 1 << 20, 4 << 20, 16 << 20};
  int nsizes = 6;
  if (argc > 1) {
    nsizes = 0;
    for (int i = 1; i < argc && nsizes < 32; ++i) sizes[nsizes++] = strtoull(argv[i], NULL, 0);
  }
  size_t max = 0;
  for (int i = 0; i < nsizes; ++i)
    if (sizes[i] > max) max = sizes[i];

  char* src = mmap(NULL, max, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (src == MAP_FAILED) return 1;
  memset(src, 1, max);
  pid_t child = fork();
  if (child == 0) {
    bind_to(1);
    for (;;) pause();
  }
  bind_to(0);
  char* dst = malloc(max);
  memset(dst, 0, max);
  printf("%10s %14s %10s %18s\n", "size", "CMA_MBps", "CMA_us", "memcpy_MBps");
  for (int k = 0; k < nsizes; ++k) {
    size_t s = sizes[k];
    long n = (long)(1e9 / (double)s);
    if (n > 200000) n = 200000;
    if (n < 20) n = 20;
    double cma = 1e30, cpy = 1e30;
    for (int r = 0; r < 5; ++r) {
      double t0 = now();
      for (long i = 0; i < n; ++i) {
        struct iovec l = {dst, s}, rm = {src, s};
        if (process_vm_readv(child, &l, 1, &rm, 1, 0) != (ssize_t)s) {
          perror("copy_ceiling: process_vm_readv");
          kill(child, SIGKILL);
          return 1;
        }
      }
      double dt = now() - t0;
      if (dt < cma) cma = dt;
      t0 = now();
      for (long i = 0; i < n; ++i) {
        memcpy(dst, src, s);
        __asm__ volatile("" : : "r"(dst) : "memory");
      }
      dt = now() - t0;
      if (dt < cpy) cpy = dt;
    }
    printf("%10zu %14.1f %10.3f %18.1f\n", s, (double)s * n / cma / 1e6, cma / n * 1e6,
           (double)s * n / cpy / 1e6);
  }
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  return 0;
}
