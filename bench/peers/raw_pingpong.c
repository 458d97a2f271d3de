/*
 * raw_pingpong.c - the kernel's floor for a loopback ping-pong: two processes, one TCP
 * connection (TCP_NODELAY) or two UDP sockets, nonblocking send / recv spinning in user
 * space, no protocol of its own. What a runtime on these sockets cannot beat.
 *
 * Usage: raw_pingpong tcp|udp [--sizes a,b,c] [--iters N] [--json]
 *   (forks: the parent is the pinger on CPU 0, the child the ponger on CPU 1)
 *        raw_pingpong tcp|udp --listen IP:PORT [--cpu C] [--sizes ...] [--iters N]
 *        raw_pingpong tcp|udp --connect IP:PORT [--cpu C] [--sizes ...] [--iters N] [--json]
 *   (two separate processes, e.g. in two network namespaces: the listener is the ponger,
 *   the connecting side the pinger and reporter; both must be given the same sizes/iters)
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

/* "10.77.1.1:5000" -> address; 0 on success. */
static int parse_addr(const char* text, struct sockaddr_in* a) {
  char host[64];
  const char* colon = strrchr(text, ':');
  if (!colon || (size_t)(colon - text) >= sizeof host) return -1;
  memcpy(host, text, (size_t)(colon - text));
  host[colon - text] = '\0';
  memset(a, 0, sizeof *a);
  a->sin_family = AF_INET;
  a->sin_port = htons((unsigned short)atoi(colon + 1));
  return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
}

/* Two-process mode: the listener (ponger) accepts one TCP connection, or learns the UDP
 * client's address from its first datagram; the connecting side (pinger) retries until
 * the listener is up. Returns the connected socket. */
static int open_pair(int stream, int listen_side, const struct sockaddr_in* addr) {
  int one = 1;
  if (listen_side) {
    int l = socket(AF_INET, stream ? SOCK_STREAM : SOCK_DGRAM, 0);
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (l < 0 || bind(l, (const struct sockaddr*)addr, sizeof *addr)) die("bind");
    if (stream) {
      if (listen(l, 1)) die("listen");
      int f = accept(l, NULL, NULL);
      if (f < 0) die("accept");
      close(l);
      setsockopt(f, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      return f;
    }
    struct sockaddr_in peer;
    socklen_t len = sizeof peer;
    char hello;
    if (recvfrom(l, &hello, 1, 0, (struct sockaddr*)&peer, &len) < 0) die("recvfrom");
    if (connect(l, (struct sockaddr*)&peer, len)) die("connect");
    if (send(l, &hello, 1, 0) != 1) die("send hello");
    return l;
  }
  int f = socket(AF_INET, stream ? SOCK_STREAM : SOCK_DGRAM, 0);
  if (f < 0) die("socket");
  for (int attempt = 0; attempt < 200; ++attempt) {
    if (stream) {
      if (connect(f, (const struct sockaddr*)addr, sizeof *addr) == 0) {
        setsockopt(f, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        return f;
      }
      close(f); /* a failed connect leaves the socket unusable */
      f = socket(AF_INET, SOCK_STREAM, 0);
      if (f < 0) die("socket");
    } else {
      /* UDP: one socket (one port, the listener answers to it), hello until answered;
       * a late second hello reaches the listener as a 1-byte datagram, which xrecv skips. */
      if (attempt == 0 && connect(f, (const struct sockaddr*)addr, sizeof *addr)) die("connect");
      struct timeval tv = {.tv_sec = 0, .tv_usec = 50000};
      setsockopt(f, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      char hello = 'h';
      send(f, &hello, 1, 0);
      if (recv(f, &hello, 1, 0) == 1) {
        tv.tv_usec = 0;
        setsockopt(f, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        return f;
      }
    }
    usleep(50000);
  }
  fprintf(stderr, "raw_pingpong: no listener answered\n");
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
    if (k == 0 && stream) die("eof");
    if (!stream && (size_t)k != n && n > 1) continue; /* a stray 1-byte hello */
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
  int iters = 20000, json = 0, cpu = -1;
  const char *listen_at = NULL, *connect_to = NULL;
  for (int i = 2; i < argc; ++i) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
      sizes = argv[++i];
    else if (!strcmp(argv[i], "--listen") && i + 1 < argc)
      listen_at = argv[++i];
    else if (!strcmp(argv[i], "--connect") && i + 1 < argc)
      connect_to = argv[++i];
    else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
      cpu = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--json"))
      json = 1;
  }
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  int fd[2] = {-1, -1};
  const int two_process = listen_at || connect_to;
  if (two_process) {
    if ((listen_at && connect_to) || parse_addr(listen_at ? listen_at : connect_to, &a)) {
      fprintf(stderr, "raw_pingpong: give one of --listen / --connect IP:PORT\n");
      return 2;
    }
  } else if (stream) {
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
  pid_t child = -1;
  int me, f;
  if (two_process) {
    me = listen_at != NULL; /* the listener pongs */
    if (cpu >= 0) pin(cpu);
    f = open_pair(stream, me, &a);
  } else {
    child = fork();
    me = child == 0;
    pin(me);
    f = fd[me];
    close(fd[1 - me]);
  }
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
        printf(
            "{\"bench\":\"pingpong\",\"impl\":\"raw-%s\",\"size\":%zu,\"iters\":%d,"
            "\"lat_us\":%.3f,\"best_us\":%.3f}\n",
            argv[1], s, iters, t[iters / 2], t[0]);
      else
        printf("raw %s %zu B: median %.3f us, best %.3f us\n", argv[1], s, t[iters / 2], t[0]);
      fflush(stdout);
    }
  }
  if (me == 0 && child > 0) waitpid(child, NULL, 0);
  close(f);
  return 0;
}
