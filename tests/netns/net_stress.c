/* net_stress: integrity of many random-size messages between every pair of ranks.
 *
 *   net_stress [messages-per-peer [max-size [seed]]]      (defaults 1000, 4194304, 1)
 *
 * Every rank sends `messages` messages to every other rank, with at most `window` in flight
 * per peer, sizes from a seeded distribution (mostly small, some up to max-size, 0 bytes
 * included). Each message starts with {sender, sequence number, size} and its bytes are a
 * function of those, so the receiver checks that messages from each sender arrive exactly
 * once, in order (MPI's non-overtaking rule), with the right contents. After a barrier no
 * message may be left (a duplicate would be). Prints one summary line per rank. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { window = 8, header_bytes = 12 };

static uint64_t mix(uint64_t x) { /* splitmix64's finalizer */
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

/* The size of message `seq` from `src` to `dst`: ~70 % up to 1 KiB (with 0), ~27 % up to
 * 64 KiB, ~3 % up to max_size. Both ends compute it. */
static size_t message_size(int src, int dst, int seq, uint64_t seed, size_t max_size) {
  uint64_t r = mix(seed * 1000003u + (uint64_t)src * 7919u + (uint64_t)dst * 104729u + seq);
  unsigned pick = (unsigned)(r % 100);
  uint64_t v = r >> 8;
  size_t size;
  if (pick < 70)
    size = v % 1025;
  else if (pick < 97)
    size = v % 65537;
  else
    size = v % (max_size + 1);
  return size > max_size ? max_size : size;
}

static unsigned char byte_at(int src, int seq, size_t i) {
  return (unsigned char)((i * 131u) ^ ((unsigned)src * 29u) ^ ((unsigned)seq * 7u) ^ (i >> 9));
}

static void fill(unsigned char* buf, size_t size, int src, int seq) {
  uint32_t h[3] = {(uint32_t)src, (uint32_t)seq, (uint32_t)size};
  for (size_t i = 0; i < size; ++i) buf[i] = byte_at(src, seq, i);
  memcpy(buf, h, size < header_bytes ? size : header_bytes);
}

/* Returns the number of problems found in a received message. */
static int verify(const unsigned char* buf, int count, size_t want, int src, int seq, int me) {
  if ((size_t)count != want) {
    fprintf(stderr, "net_stress: rank %d: message %d from %d has %d bytes, expected %zu\n", me, seq,
            src, count, want);
    return 1;
  }
  uint32_t h[3] = {(uint32_t)src, (uint32_t)seq, (uint32_t)want};
  size_t hn = want < header_bytes ? want : header_bytes;
  if (memcmp(buf, h, hn) != 0) {
    uint32_t got[3] = {0, 0, 0};
    memcpy(got, buf, hn);
    fprintf(stderr,
            "net_stress: rank %d: expected message %d from %d, got header {%u, %u, %u} "
            "(duplicate, lost or out of order)\n",
            me, seq, src, got[0], got[1], got[2]);
    return 1;
  }
  for (size_t i = header_bytes; i < want; ++i)
    if (buf[i] != byte_at(src, seq, i)) {
      fprintf(stderr, "net_stress: rank %d: message %d from %d corrupt at byte %zu of %zu\n", me,
              seq, src, i, want);
      return 1;
    }
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int messages = argc > 1 ? atoi(argv[1]) : 1000;
  size_t max_size = argc > 2 ? (size_t)strtoull(argv[2], NULL, 0) : 4u << 20;
  uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
  if (max_size < header_bytes) max_size = header_bytes;

  /* Requests 0 .. n*window-1 are receives, the rest sends. Slot s of peer p carries
   * messages s, s + window, s + 2 window, ... in each direction with tag s, so the k-th
   * completion of a slot is a known message. One Waitany over all of them keeps every
   * transfer progressing (no rank ever blocks on one request while its peer waits). */
  const int slots = n * window;
  unsigned char** buf = calloc((size_t)slots * 2, sizeof *buf);
  MPI_Request* req = malloc(sizeof(MPI_Request) * (size_t)slots * 2);
  int* next_msg = calloc((size_t)slots * 2, sizeof(int)); /* message on each slot now */
  int failures = 0;
  long long bytes = 0, received = 0, pending = 0;
  for (int i = 0; i < slots * 2; ++i) req[i] = MPI_REQUEST_NULL;
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    for (int s = 0; s < window && s < messages; ++s) {
      int r = p * window + s, w = slots + r;
      buf[r] = malloc(max_size);
      buf[w] = malloc(max_size);
      next_msg[r] = next_msg[w] = s;
      MPI_Irecv(buf[r], (int)max_size, MPI_BYTE, p, s, MPI_COMM_WORLD, &req[r]);
      size_t out = message_size(me, p, s, seed, max_size);
      fill(buf[w], out, me, s);
      MPI_Isend(buf[w], (int)out, MPI_BYTE, p, s, MPI_COMM_WORLD, &req[w]);
      pending += 2;
    }
  }
  while (pending > 0 && failures == 0) {
    int index = 0;
    MPI_Status status;
    MPI_Waitany(slots * 2, req, &index, &status);
    if (index == MPI_UNDEFINED) break;
    --pending;
    const int is_send = index >= slots;
    const int p = (index % slots) / window, s = index % window;
    const int msg = next_msg[index];
    if (!is_send) {
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      failures += verify(buf[index], count, message_size(p, me, msg, seed, max_size), p, msg, me);
      bytes += count;
      ++received;
      /* A mark for tests that change the network mid-run (tests/netns/failover.sh). */
      if (received == (long long)messages * (n - 1) / 2) {
        printf("net_stress: rank %d halfway\n", me);
        fflush(stdout);
        /* NET_STRESS_PAUSE_MS: give the harness time to change the network before the
         * second half runs (under load the job could otherwise finish first). */
        const char* pause = getenv("NET_STRESS_PAUSE_MS");
        if (pause && atoi(pause) > 0) {
          struct timespec ts = {atoi(pause) / 1000, (long)(atoi(pause) % 1000) * 1000000L};
          nanosleep(&ts, NULL);
        }
      }
    }
    const int next = msg + window;
    if (next < messages) {
      next_msg[index] = next;
      if (is_send) {
        size_t out = message_size(me, p, next, seed, max_size);
        fill(buf[index], out, me, next);
        MPI_Isend(buf[index], (int)out, MPI_BYTE, p, s, MPI_COMM_WORLD, &req[index]);
      } else {
        MPI_Irecv(buf[index], (int)max_size, MPI_BYTE, p, s, MPI_COMM_WORLD, &req[index]);
      }
      ++pending;
    }
  }
  if (failures) {
    /* The others would wait for messages this rank no longer receives or sends. */
    fprintf(stderr, "net_stress: rank %d: FAILED, aborting the job\n", me);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (received != (long long)messages * (n - 1) && failures == 0) {
    fprintf(stderr, "net_stress: rank %d received %lld messages, expected %lld\n", me, received,
            (long long)messages * (n - 1));
    ++failures;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (failures == 0) {
    /* Every message was consumed exactly once: nothing may be left to receive. */
    int extra = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &extra, MPI_STATUS_IGNORE);
    if (extra) {
      fprintf(stderr, "net_stress: rank %d: a message beyond the expected ones arrived\n", me);
      ++failures;
    }
  }
  long long total_fail = 0, mine = failures;
  MPI_Allreduce(&mine, &total_fail, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  printf("net_stress: rank %d received %lld messages, %lld bytes, %s\n", me, received, bytes,
         failures ? "FAILED" : "verified");
  if (me == 0)
    printf("net_stress: %d ranks, %d messages per peer, max %zu bytes: %s\n", n, messages, max_size,
           total_fail ? "FAILED" : "all verified");
  fflush(stdout);
  MPI_Finalize();
  return total_fail ? 1 : 0;
}
