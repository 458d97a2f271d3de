/*
 * raw_pingpong.c - the kernel's floor for a loopback ping-pong: two processes, one TCP
 * connection (TCP_NODELAY) or two UDP sockets, nonblocking send / recv spinning in user
 * space, no protocol of its own. What a runtime on these sockets cannot beat.
 *
 * Usage: raw_pingpong tcp|udp [--sizes a,b,c] [--iters N] [--json]
 *   (forks: the parent is the pinger on CPU 0, the child the ponger on CPU 1)
 * Prints per size the median half round trip (lat_us) and the best (best_us), as JSON
 * lines with --json (impl "raw-tcp" / "raw-udp"). UDP sizes are limited to 65507 bytes.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "peer_util.h"

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  sched_setaffinity(0, sizeof s, &s);
}

static void die(const char* what) {
  perror(what);
  exit(1);
}

/* Moves exactly n bytes (TCP may split; UDP is one datagram), spinning on EAGAIN. */
static void xsend(int fd, const char* b, size_t n, int stream) {
  size_t off = 0;
  while (off < n) {
    ssize_t k = send(fd, b + off, n - off, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (k < 0) {
      if (errno == EAGAIN || errno == ENOBUFS) continue;
      die("send");
    }
    off += (size_t)k;
    if (!stream) return;
  }
}
static void xrecv(int fd, char* b, size_t n, int stream) {
  size_t off = 0;
  while (off < n) {
    ssize_t k = recv(fd, b + off, n - off, MSG_DONTWAIT);
    if (k < 0) {
      if (errno == EAGAIN) continue;
      die("recv");
    }
    if (k == 0) die("eof");
    off += (size_t)k;
    if (!stream) return;
  }
}

int main(int argc, char** argv) {
  if (argc < 2 || (strcmp(argv[1], "tcp") && strcmp(argv[1], "udp"))) {
    fprintf(stderr, "usage: raw_pingpong tcp|udp [--sizes a,b] [--iters N] [--json]\n");
    return 2;
  }
  const int stream = !strcmp(argv[1], "tcp");
  const char* sizes = "8";
  int iters = 20000, json = 0;
  for (int i = 2; i < argc; ++i) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) sizes = argv[++i];
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--json")) json = 1;
  }
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  int fd[2];
  if (stream) {
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr*)&a, sizeof a) || listen(l, 1)) die("listen");
    getsockname(l, (struct sockaddr*)&a, &len);
    fd[0] = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd[0], (struct sockaddr*)&a, sizeof a)) die("connect");
    fd[1] = accept(l, NULL, NULL);
    close(l);
    int one = 1;
    for (int k = 0; k < 2; ++k) setsockopt(fd[k], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  } else {
    struct sockaddr_in b[2];
    for (int k = 0; k < 2; ++k) {
      fd[k] = socket(AF_INET, SOCK_DGRAM, 0);
      b[k] = a;
      if (bind(fd[k], (struct sockaddr*)&b[k], sizeof b[k])) die("bind");
      len = sizeof b[k];
      getsockname(fd[k], (struct sockaddr*)&b[k], &len);
    }
    for (int k = 0; k < 2; ++k)
      if (connect(fd[k], (struct sockaddr*)&b[1 - k], sizeof b[1 - k])) die("connect");
  }
  size_t list[64], n = 0, max = 0;
  char* copy = strdup(sizes);
  for (char* tok = strtok(copy, ","); tok && n < 64; tok = strtok(NULL, ",")) {
    if (parse_size(tok, &list[n])) {
      fprintf(stderr, "raw_pingpong: bad size '%s'\n", tok);
      return 2;
    }
    if (list[n] > max) max = list[n];
    ++n;
  }
  char* buf = calloc(1, max ? max : 1);
  pid_t child = fork();
  const int me = child == 0;
  pin(me);
  const int f = fd[me];
  close(fd[1 - me]);
  double* t = malloc(sizeof(double) * (size_t)iters);
  for (size_t k = 0; k < n; ++k) {
    const size_t s = list[k];
    if (!stream && s > 65507) continue;
    const int warm = iters / 10 + 10;
    for (int i = -warm; i < iters; ++i) {
      const double t0 = now_us();
      if (me == 0) {
        xsend(f, buf, s, stream);
        xrecv(f, buf, s, stream);
      } else {
        xrecv(f, buf, s, stream);
        xsend(f, buf, s, stream);
      }
      if (i >= 0) t[i] = (now_us() - t0) / 2;
    }
    if (me == 0) {
      qsort(t, (size_t)iters, sizeof *t, cmp_double);
      if (json)
        printf("{\"bench\":\"pingpong\",\"impl\":\"raw-%s\",\"size\":%zu,\"iters\":%d,"
               "\"lat_us\":%.3f,\"best_us\":%.3f}\n",
               argv[1], s, iters, t[iters / 2], t[0]);
      else
        printf("raw %s %zu B: median %.3f us, best %.3f us\n", argv[1], s, t[iters / 2], t[0]);
      fflush(stdout);
    }
  }
  if (me == 0) waitpid(child, NULL, 0);
  return 0;
}
