/* MPI_Cancel of sends (MPI-3.1 §3.8.4), both outcomes. Ranks pair up (0->1, 2->3; an odd last
 * rank only joins the barriers). For each case the sender starts a send, cancels it, waits,
 * asks MPI_Test_cancelled, tells the receiver the outcome (tag CTRL), then sends a later
 * one-int message with the same tag. The receiver, which posts no receive for that tag
 * before it knows the outcome:
 *   - cancelled: never sees the message; the later one is the first to arrive on the tag;
 *   - not cancelled: receives the message intact, then the later one.
 * Any MPI may answer either way for most cases (the test then checks only consistency);
 * under Sluice the outcome is known and checked too:
 *   A  Isend of 8 ints (eager, delivered at once)              not cancelled
 *   B  Isend of 2 MiB, no receive posted (rendezvous request)  cancelled
 *   C  Issend of 8 ints, no receive posted                     cancelled
 *   D  Isend of 2 MiB, receive posted before (matched)         not cancelled
 *   E  Send_init 2 MiB: Start + Cancel, then Start again       cancelled, then received
 *   F  Ibsend of 2 MiB into an attached buffer                 cancelled (its space freed)
 *   G  Isend of 64 KiB (may be pushed without the receiver)    either
 * Sluice's wait for a cancelled rendezvous needs the receiver's answer: the receiver is in
 * MPI (a blocking receive of the outcome) meanwhile. */
/* SLUICE_TEST_RANKS: 2 3 4 */
#include <string.h>

#include "check.h"

#ifndef MPICH_SKIP
#define MPICH_SKIP "BCEFG"
#endif

enum { CTRL = 1000, MARK = -7, SMALL = 8, BIG = 2 * 1024 * 1024 / 4, MID = 64 * 1024 / 4 };

static int value(int c, int i) {
  return c * 1000003 + i * 7 + 1;
}
static void fill(int* b, int n, int c) {
  for (int i = 0; i < n; ++i) b[i] = value(c, i);
}
static int intact(const int* b, int n, int c) {
  for (int i = 0; i < n; ++i)
    if (b[i] != value(c, i)) return 0;
  return 1;
}

/* The sender's side after the send of case c completed: tell the outcome, send the later
 * message on the same tag. */
static void sender_after(int c, int flag, int peer) {
  MPI_Send(&flag, 1, MPI_INT, peer, CTRL + c, MPI_COMM_WORLD);
  int mark = MARK;
  MPI_Send(&mark, 1, MPI_INT, peer, c, MPI_COMM_WORLD);
}

/* The receiver's side of case c (message of n ints), when it posted no receive before. */
static int receiver_side(int c, int n, int peer, int* buf) {
  int flag = -1, mark = 0, count = -1;
  MPI_Status st;
  MPI_Recv(&flag, 1, MPI_INT, peer, CTRL + c, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (!flag) {
    memset(buf, 0, (size_t)n * sizeof(int));
    MPI_Recv(buf, n, MPI_INT, peer, c, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == n && intact(buf, n, c), "case %d: not cancelled, but received %d of %d ints%s",
          c, count, n, count == n ? " corrupted" : "");
  }
  MPI_Recv(&mark, 1, MPI_INT, peer, c, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(mark == MARK && count == 1,
        "case %d: %s, the next message on the tag is %d (%d ints), not the later marker", c,
        flag ? "cancelled" : "received", mark, count);
  return flag;
}

static void expect(int c, int flag, int want) {
#ifdef SLUICE_MPI
  CHECK(flag == want, "case %d: MPI_Test_cancelled says %d, Sluice should give %d", c, flag, want);
#else
  (void)c, (void)flag, (void)want;
#endif
}

/* Whether to run case c (SEND_CANCEL_SKIP="BG" skips B and G). MPICH 4.0.2 (ch4:ucx) never
 * completes the wait of a cancelled send whose message is unmatched at the receiver (B, C, E,
 * F, G hang there; its own pt2pt/scancel times out too): the peer run has A and D only. */
static int run_case(int c) {
  const char* skip = getenv("SEND_CANCEL_SKIP");
  if (skip && strchr(skip, 'A' + c)) return 0;
#ifdef MPICH_VERSION
  if (strchr(MPICH_SKIP, 'A' + c)) return 0;
#endif
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int sender = rank % 2 == 0 && rank + 1 < size;
  const int receiver = rank % 2 == 1;
  const int peer = sender ? rank + 1 : rank - 1;
  int* big = malloc((size_t)BIG * sizeof(int));
  int* rbuf = malloc((size_t)BIG * sizeof(int));
  int small[SMALL];
  MPI_Request req;
  MPI_Status st;
  int flag;

  /* A: eager, out at once. */
  if (!run_case(0)) {
  } else if (sender) {
    fill(small, SMALL, 0);
    MPI_Isend(small, SMALL, MPI_INT, peer, 0, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &flag);
    expect(0, flag, 0);
    sender_after(0, flag, peer);
  } else if (receiver) {
    expect(0, receiver_side(0, SMALL, peer, rbuf), 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* B: rendezvous, unmatched. */
  if (!run_case(1)) {
  } else if (sender) {
    fill(big, BIG, 1);
    MPI_Isend(big, BIG, MPI_INT, peer, 1, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &flag);
    expect(1, flag, 1);
    sender_after(1, flag, peer);
  } else if (receiver) {
    expect(1, receiver_side(1, BIG, peer, rbuf), 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* C: synchronous eager, unmatched. */
  if (!run_case(2)) {
  } else if (sender) {
    fill(small, SMALL, 2);
    MPI_Issend(small, SMALL, MPI_INT, peer, 2, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &flag);
    expect(2, flag, 1);
    sender_after(2, flag, peer);
  } else if (receiver) {
    expect(2, receiver_side(2, SMALL, peer, rbuf), 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* D: rendezvous whose receive was posted before it started: matched on arrival. */
  if (run_case(3)) {
    MPI_Request rreq = MPI_REQUEST_NULL;
    if (receiver) {
      memset(rbuf, 0, (size_t)BIG * sizeof(int));
      MPI_Irecv(rbuf, BIG, MPI_INT, peer, 3, MPI_COMM_WORLD, &rreq);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (sender) {
      fill(big, BIG, 3);
      MPI_Isend(big, BIG, MPI_INT, peer, 3, MPI_COMM_WORLD, &req);
      MPI_Cancel(&req);
      MPI_Wait(&req, &st);
      MPI_Test_cancelled(&st, &flag);
      expect(3, flag, 0);
      sender_after(3, flag, peer);
    } else if (receiver) {
      int count = -1, mark = 0;
      MPI_Recv(&flag, 1, MPI_INT, peer, CTRL + 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Wait(&rreq, &st);
      MPI_Get_count(&st, MPI_INT, &count);
      if (!flag) {
        CHECK(count == BIG && intact(rbuf, BIG, 3), "case 3: received %d of %d ints", count, BIG);
        MPI_Recv(&mark, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else { /* cancelled before it matched: the posted receive took the later message */
        mark = rbuf[0];
        CHECK(count == 1, "case 3: cancelled, the posted receive got %d ints", count);
      }
      CHECK(mark == MARK, "case 3: marker %d", mark);
      expect(3, flag, 0);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* E: persistent: cancelled in its first round, received in its second. */
  if (!run_case(4)) {
  } else if (sender) {
    fill(big, BIG, 4);
    MPI_Send_init(big, BIG, MPI_INT, peer, 4, MPI_COMM_WORLD, &req);
    MPI_Start(&req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &flag);
    expect(4, flag, 1);
    sender_after(4, flag, peer);
    MPI_Start(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(!flag, "case 4: the second round, not cancelled, says cancelled");
    MPI_Request_free(&req);
  } else if (receiver) {
    expect(4, receiver_side(4, BIG, peer, rbuf), 1);
    memset(rbuf, 0, (size_t)BIG * sizeof(int));
    MPI_Recv(rbuf, BIG, MPI_INT, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(intact(rbuf, BIG, 4), "case 4: the second round arrived corrupted");
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* F: buffered: room for one message only, so a cancelled one must give its space back. */
  if (!run_case(5)) {
  } else if (sender) {
    int bufsize = 0;
    MPI_Pack_size(BIG, MPI_INT, MPI_COMM_WORLD, &bufsize);
    bufsize += MPI_BSEND_OVERHEAD;
    char* attached = malloc((size_t)bufsize);
    MPI_Buffer_attach(attached, bufsize);
    fill(big, BIG, 5);
    MPI_Ibsend(big, BIG, MPI_INT, peer, 5, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &flag);
    expect(5, flag, 1);
    sender_after(5, flag, peer);
    if (flag) { /* its space is free again: a second buffered send fits */
      MPI_Bsend(big, BIG, MPI_INT, peer, 5, MPI_COMM_WORLD);
    }
    void* detached;
    MPI_Buffer_detach(&detached, &bufsize);
    free(detached);
  } else if (receiver) {
    const int cancelled = receiver_side(5, BIG, peer, rbuf);
    expect(5, cancelled, 1);
    if (cancelled) {
      memset(rbuf, 0, (size_t)BIG * sizeof(int));
      MPI_Recv(rbuf, BIG, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(intact(rbuf, BIG, 5), "case 5: the buffered send after the cancelled one corrupted");
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);

  /* G: a mid-size rendezvous: either outcome, consistent. */
  if (!run_case(6)) {
  } else if (sender) {
    fill(big, MID, 6);
    MPI_Isend(big, MID, MPI_INT, peer, 6, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &flag);
    sender_after(6, flag, peer);
  } else if (receiver) {
    receiver_side(6, MID, peer, rbuf);
  }
  MPI_Barrier(MPI_COMM_WORLD);

  free(big);
  free(rbuf);
  MPI_Finalize();
  return check_exit("send_cancel");
}
