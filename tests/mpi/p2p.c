/* Point-to-point: send modes, sizes across protocols, derived types, probes, matched
 * probes, the wait/test families, persistent requests, cancel, MPI_PROC_NULL, Bsend. */
/* SLUICE_TEST_RANKS: 1 2 3 4 8 */
#include <string.h>

#include "check.h"

static int rank, size, left, right;

static void fill(int* v, int n, int seed) {
  for (int i = 0; i < n; ++i) v[i] = seed * 1000003 + i;
}
static int verify(const int* v, int n, int seed) {
  for (int i = 0; i < n; ++i)
    if (v[i] != seed * 1000003 + i) return i;
  return -1;
}

/* Standard sends of several sizes around a ring (eager, rendezvous, empty). */
static void ring_sizes(void) {
  const int sizes[] = {0, 1, 100, 1024, 5000, 70000, 300000};
  for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
    const int n = sizes[k];
    int* out = malloc((n + 1) * sizeof(int));
    int* in = malloc((n + 1) * sizeof(int));
    fill(out, n, rank);
    memset(in, 0xff, (n + 1) * sizeof(int));
    MPI_Request req;
    MPI_Status st;
    MPI_Irecv(in, n, MPI_INT, left, 10 + k, MPI_COMM_WORLD, &req);
    MPI_Send(out, n, MPI_INT, right, 10 + k, MPI_COMM_WORLD);
    MPI_Wait(&req, &st);
    CHECK(req == MPI_REQUEST_NULL, "request not nulled");
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == n, "size %d: count %d", n, count);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == (int)(10 + k), "size %d: source %d tag %d", n,
          st.MPI_SOURCE, st.MPI_TAG);
    int bad = verify(in, n, left);
    CHECK(bad < 0, "size %d: wrong element %d", n, bad);
    free(out);
    free(in);
  }
}

/* Ssend, Rsend (receive posted first, confirmed by a token), Issend, Irsend. */
static void send_modes(void) {
  int out[64], in[64];
  MPI_Request req, reqs[2];
  fill(out, 64, rank + 7);
  MPI_Irecv(in, 64, MPI_INT, left, 20, MPI_COMM_WORLD, &req);
  MPI_Ssend(out, 64, MPI_INT, right, 20, MPI_COMM_WORLD);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  CHECK(verify(in, 64, left + 7) < 0, "ssend data");

  /* ready send: my right neighbour posts its receive, then tells me */
  MPI_Irecv(in, 64, MPI_INT, left, 21, MPI_COMM_WORLD, &req);
  MPI_Sendrecv(NULL, 0, MPI_INT, left, 22, NULL, 0, MPI_INT, right, 22, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Rsend(out, 64, MPI_INT, right, 21, MPI_COMM_WORLD);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  CHECK(verify(in, 64, left + 7) < 0, "rsend data");

  MPI_Irecv(in, 64, MPI_INT, left, 23, MPI_COMM_WORLD, &reqs[0]);
  MPI_Issend(out, 64, MPI_INT, right, 23, MPI_COMM_WORLD, &reqs[1]);
  MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  CHECK(verify(in, 64, left + 7) < 0, "issend data");

  MPI_Irecv(in, 64, MPI_INT, left, 24, MPI_COMM_WORLD, &reqs[0]);
  MPI_Sendrecv(NULL, 0, MPI_INT, left, 25, NULL, 0, MPI_INT, right, 25, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Irsend(out, 64, MPI_INT, right, 24, MPI_COMM_WORLD, &reqs[1]);
  MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  CHECK(verify(in, 64, left + 7) < 0, "irsend data");

  /* Ssend to self with the receive posted first */
  if (size == 1) {
    MPI_Irecv(in, 64, MPI_INT, 0, 26, MPI_COMM_WORLD, &req);
    MPI_Ssend(out, 64, MPI_INT, 0, 26, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(verify(in, 64, 7) < 0, "ssend self data");
  }
}

/* Buffered sends through an attached buffer. */
static void buffered(void) {
  int packsize = 0;
  MPI_Pack_size(1000, MPI_INT, MPI_COMM_WORLD, &packsize);
  const int bufsize = 3 * (packsize + MPI_BSEND_OVERHEAD);
  char* buf = malloc(bufsize);
  MPI_Buffer_attach(buf, bufsize);
  int out[3][1000], in[1000];
  for (int m = 0; m < 3; ++m) fill(out[m], 1000, rank * 10 + m);
  MPI_Bsend(out[0], 1000, MPI_INT, right, 30, MPI_COMM_WORLD);
  MPI_Bsend(out[1], 1000, MPI_INT, right, 31, MPI_COMM_WORLD);
  MPI_Request req;
  MPI_Ibsend(out[2], 1000, MPI_INT, right, 32, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  memset(out, 0, sizeof out); /* the data were copied */
  for (int m = 0; m < 3; ++m) {
    MPI_Recv(in, 1000, MPI_INT, left, 30 + m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(verify(in, 1000, left * 10 + m) < 0, "bsend message %d", m);
  }
  void* detached = NULL;
  int detached_size = 0;
  MPI_Buffer_detach(&detached, &detached_size);
  CHECK(detached == buf && detached_size == bufsize, "detach gave %p/%d", detached, detached_size);
  free(buf);
}

/* Derived (non-contiguous) types on both sides. */
static void derived(void) {
  MPI_Datatype vec;
  MPI_Type_vector(500, 1, 2, MPI_INT, &vec); /* every other int */
  MPI_Type_commit(&vec);
  int out[1000], in[1000], plain[500];
  for (int i = 0; i < 1000; ++i) out[i] = rank * 100000 + i;
  MPI_Request req;
  MPI_Status st;
  /* vector -> contiguous */
  MPI_Irecv(plain, 500, MPI_INT, left, 40, MPI_COMM_WORLD, &req);
  MPI_Send(out, 1, vec, right, 40, MPI_COMM_WORLD);
  MPI_Wait(&req, &st);
  int ok = 1;
  for (int i = 0; i < 500; ++i) ok &= plain[i] == left * 100000 + 2 * i;
  CHECK(ok, "vector -> contiguous");
  /* contiguous -> vector */
  for (int i = 0; i < 1000; ++i) in[i] = -1;
  MPI_Irecv(in, 1, vec, left, 41, MPI_COMM_WORLD, &req);
  for (int i = 0; i < 500; ++i) plain[i] = rank * 7 + i;
  MPI_Send(plain, 500, MPI_INT, right, 41, MPI_COMM_WORLD);
  MPI_Wait(&req, &st);
  ok = 1;
  for (int i = 0; i < 1000; ++i) ok &= in[i] == (i % 2 ? -1 : left * 7 + i / 2);
  CHECK(ok, "contiguous -> vector");
  int count = -1, elements = -1;
  MPI_Get_count(&st, vec, &count);
  MPI_Get_elements(&st, vec, &elements);
  CHECK(count == 1 && elements == 500, "count %d elements %d", count, elements);
  MPI_Count elements_x = -1;
  MPI_Get_elements_x(&st, MPI_INT, &elements_x);
  CHECK(elements_x == 500, "elements_x %lld", (long long)elements_x);
  MPI_Type_free(&vec);
}

/* Probe and Iprobe with messages of unknown size; Mprobe/Improbe + Mrecv/Imrecv. */
static void probes(void) {
  int out[64];
  fill(out, 64, rank);
  MPI_Request sreq;
  MPI_Isend(out, rank + 1, MPI_INT, right, 50, MPI_COMM_WORLD, &sreq);
  MPI_Status st;
  MPI_Probe(MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &st);
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(st.MPI_SOURCE == left && count == left + 1, "probe source %d count %d", st.MPI_SOURCE,
        count);
  int in[64];
  MPI_Recv(in, count, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(verify(in, count, left) < 0, "probed data");
  MPI_Wait(&sreq, MPI_STATUS_IGNORE);

  MPI_Isend(out, rank + 1, MPI_INT, right, 51, MPI_COMM_WORLD, &sreq);
  int flag = 0;
  while (!flag) MPI_Iprobe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
  CHECK(st.MPI_TAG == 51, "iprobe tag %d", st.MPI_TAG);
  MPI_Recv(in, 64, MPI_INT, left, 51, MPI_COMM_WORLD, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(count == left + 1, "iprobe recv count %d", count);
  MPI_Wait(&sreq, MPI_STATUS_IGNORE);

  /* matched probe: a second message with the same envelope must not steal the first */
  int a = 100 + rank, b = 200 + rank;
  MPI_Request two[2];
  MPI_Isend(&a, 1, MPI_INT, right, 52, MPI_COMM_WORLD, &two[0]);
  MPI_Isend(&b, 1, MPI_INT, right, 52, MPI_COMM_WORLD, &two[1]);
  MPI_Message msg;
  MPI_Mprobe(left, 52, MPI_COMM_WORLD, &msg, &st);
  CHECK(msg != MPI_MESSAGE_NULL && st.MPI_SOURCE == left, "mprobe");
  int got_b = -1, got_a = -1;
  MPI_Recv(&got_b, 1, MPI_INT, left, 52, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Mrecv(&got_a, 1, MPI_INT, &msg, &st);
  CHECK(msg == MPI_MESSAGE_NULL, "message not nulled");
  CHECK(got_a == 100 + left && got_b == 200 + left, "mprobe order a=%d b=%d", got_a, got_b);
  MPI_Waitall(2, two, MPI_STATUSES_IGNORE);

  MPI_Isend(out, 10, MPI_INT, right, 53, MPI_COMM_WORLD, &sreq);
  flag = 0;
  while (!flag) MPI_Improbe(MPI_ANY_SOURCE, 53, MPI_COMM_WORLD, &flag, &msg, &st);
  MPI_Request rreq;
  MPI_Imrecv(in, 64, MPI_INT, &msg, &rreq);
  MPI_Wait(&rreq, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(count == 10 && verify(in, 10, left) < 0 && st.MPI_SOURCE == left, "imrecv count %d", count);
  MPI_Wait(&sreq, MPI_STATUS_IGNORE);

  /* A call that returns one status leaves its MPI_ERROR field alone (MPI-3.1 section 3.2.5):
   * probes, receives and waits, from a real source and from MPI_PROC_NULL. */
  MPI_Status es;
  MPI_Isend(out, 3, MPI_INT, right, 55, MPI_COMM_WORLD, &sreq);
  es.MPI_ERROR = MPI_ERR_DIMS;
  MPI_Probe(left, 55, MPI_COMM_WORLD, &es);
  CHECK(es.MPI_SOURCE == left, "probe source %d", es.MPI_SOURCE);
#ifdef SLUICE_MPI /* MPICH 4.0.2's MPI_Probe sets it (its Recv, Wait and Mprobe do not) */
  CHECK(es.MPI_ERROR == MPI_ERR_DIMS, "probe wrote MPI_ERROR %d", es.MPI_ERROR);
#endif
  es.MPI_ERROR = MPI_ERR_DIMS;
  MPI_Recv(in, 3, MPI_INT, left, 55, MPI_COMM_WORLD, &es);
  CHECK(es.MPI_ERROR == MPI_ERR_DIMS, "recv wrote MPI_ERROR %d", es.MPI_ERROR);
  es.MPI_ERROR = MPI_ERR_DIMS;
  MPI_Wait(&sreq, &es);
  CHECK(es.MPI_ERROR == MPI_ERR_DIMS, "wait wrote MPI_ERROR %d", es.MPI_ERROR);
  es.MPI_ERROR = MPI_ERR_DIMS;
  MPI_Mprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &msg, &es);
  CHECK(
      es.MPI_ERROR == MPI_ERR_DIMS && es.MPI_SOURCE == MPI_PROC_NULL && msg == MPI_MESSAGE_NO_PROC,
      "mprobe(PROC_NULL) wrote MPI_ERROR %d", es.MPI_ERROR);
  es.MPI_ERROR = MPI_ERR_DIMS;
  MPI_Mrecv(in, 0, MPI_INT, &msg, &es);
  CHECK(es.MPI_ERROR == MPI_ERR_DIMS && es.MPI_SOURCE == MPI_PROC_NULL, "mrecv(NO_PROC) %d",
        es.MPI_ERROR);
  es.MPI_ERROR = MPI_ERR_DIMS;
  MPI_Iprobe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &flag, &es);
  CHECK(flag && es.MPI_ERROR == MPI_ERR_DIMS, "iprobe(PROC_NULL) wrote MPI_ERROR %d", es.MPI_ERROR);

  /* large message through a matched probe (rendezvous) */
  const int n = 200000;
  int* big = malloc(n * sizeof(int));
  int* bigin = malloc(n * sizeof(int));
  fill(big, n, rank);
  MPI_Isend(big, n, MPI_INT, right, 54, MPI_COMM_WORLD, &sreq);
  MPI_Mprobe(left, 54, MPI_COMM_WORLD, &msg, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(count == n, "big mprobe count %d", count);
  MPI_Mrecv(bigin, n, MPI_INT, &msg, MPI_STATUS_IGNORE);
  CHECK(verify(bigin, n, left) < 0, "big mrecv data");
  MPI_Wait(&sreq, MPI_STATUS_IGNORE);
  free(big);
  free(bigin);
}

/* Every rank sends one message to every rank; receives completed through each family. */
static void completion_families(void) {
  int* in = malloc(size * sizeof(int));
  int* out = malloc(size * sizeof(int));
  MPI_Request* rr = malloc(size * sizeof(MPI_Request));
  MPI_Request* sr = malloc(size * sizeof(MPI_Request));
  MPI_Status* sts = malloc(size * sizeof(MPI_Status));
  int* idx = malloc(size * sizeof(int));
  for (int family = 0; family < 5; ++family) {
    const int tag = 60 + family;
    for (int p = 0; p < size; ++p) {
      in[p] = -1;
      out[p] = rank * 1000 + p * 10 + family;
      MPI_Irecv(&in[p], 1, MPI_INT, p, tag, MPI_COMM_WORLD, &rr[p]);
    }
    for (int p = 0; p < size; ++p) MPI_Isend(&out[p], 1, MPI_INT, p, tag, MPI_COMM_WORLD, &sr[p]);
    int done = 0;
    if (family == 0) { /* Waitany */
      while (done < size) {
        int i;
        MPI_Status st;
        MPI_Waitany(size, rr, &i, &st);
        CHECK(i >= 0 && i < size && rr[i] == MPI_REQUEST_NULL && st.MPI_SOURCE == i,
              "waitany %d source %d", i, st.MPI_SOURCE);
        ++done;
      }
      int i;
      MPI_Waitany(size, rr, &i, MPI_STATUS_IGNORE);
      CHECK(i == MPI_UNDEFINED, "waitany on all-null gave %d", i);
    } else if (family == 1) { /* Waitsome */
      while (done < size) {
        int outcount;
        MPI_Waitsome(size, rr, &outcount, idx, sts);
        CHECK(outcount >= 1, "waitsome outcount %d", outcount);
        for (int k = 0; k < outcount; ++k)
          CHECK(sts[k].MPI_SOURCE == idx[k], "waitsome status %d", k);
        done += outcount;
      }
      int outcount;
      MPI_Waitsome(size, rr, &outcount, idx, sts);
      CHECK(outcount == MPI_UNDEFINED, "waitsome on all-null %d", outcount);
    } else if (family == 2) { /* Testall */
      int flag = 0;
      while (!flag) MPI_Testall(size, rr, &flag, sts);
      for (int p = 0; p < size; ++p) CHECK(sts[p].MPI_SOURCE == p, "testall status %d", p);
    } else if (family == 3) { /* Testany */
      while (done < size) {
        int i, flag;
        MPI_Status st;
        MPI_Testany(size, rr, &i, &flag, &st);
        if (flag) {
          CHECK(i >= 0 && st.MPI_SOURCE == i, "testany %d", i);
          ++done;
        }
      }
      int i, flag;
      MPI_Testany(size, rr, &i, &flag, MPI_STATUS_IGNORE);
      CHECK(flag && i == MPI_UNDEFINED, "testany on all-null");
    } else { /* Testsome + Test */
      while (done < size) {
        int outcount;
        MPI_Testsome(size, rr, &outcount, idx, MPI_STATUSES_IGNORE);
        if (outcount > 0) done += outcount;
      }
      MPI_Request none = MPI_REQUEST_NULL;
      int flag = 0;
      MPI_Test(&none, &flag, MPI_STATUS_IGNORE);
      CHECK(flag, "test on null request");
    }
    for (int p = 0; p < size; ++p)
      CHECK(in[p] == p * 1000 + rank * 10 + family, "family %d from %d: %d", family, p, in[p]);
    for (int p = 0; p < size; ++p) {
      int flag = 0;
      while (!flag) MPI_Test(&sr[p], &flag, MPI_STATUS_IGNORE);
    }
  }
  free(in), free(out), free(rr), free(sr), free(sts), free(idx);
}

/* Persistent requests, reused with new data. */
static void persistent(void) {
  int out[16], in[16];
  MPI_Request reqs[2];
  MPI_Recv_init(in, 16, MPI_INT, left, 70, MPI_COMM_WORLD, &reqs[0]);
  MPI_Send_init(out, 16, MPI_INT, right, 70, MPI_COMM_WORLD, &reqs[1]);
  for (int it = 0; it < 5; ++it) {
    fill(out, 16, rank + 100 * it);
    MPI_Startall(2, reqs);
    MPI_Status sts[2];
    MPI_Waitall(2, reqs, sts);
    CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL, "persistent nulled");
    CHECK(verify(in, 16, left + 100 * it) < 0, "persistent iteration %d", it);
    CHECK(sts[0].MPI_SOURCE == left, "persistent status source %d", sts[0].MPI_SOURCE);
  }
  /* waiting on an inactive persistent request returns at once */
  MPI_Status st;
  MPI_Wait(&reqs[0], &st);
  CHECK(reqs[0] != MPI_REQUEST_NULL, "inactive persistent nulled");
  MPI_Request_free(&reqs[0]);
  MPI_Request_free(&reqs[1]);
  CHECK(reqs[0] == MPI_REQUEST_NULL, "request_free did not null");

  MPI_Request s;
  MPI_Ssend_init(out, 16, MPI_INT, right, 71, MPI_COMM_WORLD, &s);
  MPI_Request r;
  MPI_Irecv(in, 16, MPI_INT, left, 71, MPI_COMM_WORLD, &r);
  fill(out, 16, rank + 5);
  MPI_Start(&s);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  MPI_Wait(&s, MPI_STATUS_IGNORE);
  CHECK(verify(in, 16, left + 5) < 0, "ssend_init data");
  MPI_Request_free(&s);
}

/* Cancel of a receive that never matches; Request_get_status; Request_free of a send. */
static void cancel_and_status(void) {
  int x = -1;
  MPI_Request r;
  MPI_Status st;
  MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r);
  MPI_Cancel(&r);
  MPI_Wait(&r, &st);
  int flag = 0;
  MPI_Test_cancelled(&st, &flag);
  CHECK(flag, "receive not cancelled");
  CHECK(x == -1, "cancelled receive wrote data");

  int v = rank, got = -1;
  MPI_Request s;
  MPI_Irecv(&got, 1, MPI_INT, left, 80, MPI_COMM_WORLD, &r);
  MPI_Isend(&v, 1, MPI_INT, right, 80, MPI_COMM_WORLD, &s);
  flag = 0;
  while (!flag) MPI_Request_get_status(r, &flag, &st);
  CHECK(r != MPI_REQUEST_NULL && st.MPI_SOURCE == left, "get_status");
  MPI_Wait(&r, MPI_STATUS_IGNORE); /* still valid after get_status */
  CHECK(got == left, "get_status data %d", got);
  MPI_Test_cancelled(&st, &flag);
  CHECK(!flag, "completed receive reported cancelled");
  MPI_Wait(&s, MPI_STATUS_IGNORE);

  /* a freed send still arrives */
  static int freed_send_value;
  freed_send_value = rank + 42;
  MPI_Isend(&freed_send_value, 1, MPI_INT, right, 81, MPI_COMM_WORLD, &s);
  MPI_Request_free(&s);
  CHECK(s == MPI_REQUEST_NULL, "request_free");
  MPI_Recv(&got, 1, MPI_INT, left, 81, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(got == left + 42, "freed send value %d", got);
}

static void proc_null(void) {
  int x = 5;
  MPI_Status st;
  MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
  MPI_Recv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0 && x == 5,
        "recv from PROC_NULL: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, count);
  MPI_Request r;
  MPI_Irecv(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, &st);
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(count == 0 && x == 5, "irecv PROC_NULL count %d", count);
  MPI_Sendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, &x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD,
               &st);
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL && x == 5, "sendrecv PROC_NULL");
  int flag = 0;
  MPI_Iprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &flag, &st);
  CHECK(flag && st.MPI_SOURCE == MPI_PROC_NULL, "iprobe PROC_NULL");
  MPI_Message msg;
  MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st);
  CHECK(msg == MPI_MESSAGE_NO_PROC, "mprobe PROC_NULL");
  MPI_Mrecv(&x, 1, MPI_INT, &msg, &st);
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL && msg == MPI_MESSAGE_NULL, "mrecv PROC_NULL");
}

static void sendrecv(void) {
  int out[100], in[100];
  fill(out, 100, rank);
  MPI_Status st;
  MPI_Sendrecv(out, 100, MPI_INT, right, 90, in, 100, MPI_INT, left, 90, MPI_COMM_WORLD, &st);
  CHECK(verify(in, 100, left) < 0 && st.MPI_SOURCE == left, "sendrecv");
  MPI_Sendrecv_replace(out, 100, MPI_INT, right, 91, left, 91, MPI_COMM_WORLD, &st);
  CHECK(verify(out, 100, left) < 0, "sendrecv_replace");
  /* wildcard source and tag */
  MPI_Sendrecv(out, 1, MPI_INT, right, 92, in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
               MPI_COMM_WORLD, &st);
  CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 92, "wildcard sendrecv %d/%d", st.MPI_SOURCE,
        st.MPI_TAG);
}

/* Messages on the same envelope arrive in order (non-overtaking), including wildcards. */
static void ordering(void) {
  enum { N = 50 };
  int out[N], in[N];
  MPI_Request s[N];
  for (int i = 0; i < N; ++i) {
    out[i] = i;
    MPI_Isend(&out[i], 1, MPI_INT, right, 95, MPI_COMM_WORLD, &s[i]);
  }
  for (int i = 0; i < N; ++i)
    MPI_Recv(&in[i], 1, MPI_INT, i % 2 ? MPI_ANY_SOURCE : left, i % 3 ? MPI_ANY_TAG : 95,
             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Waitall(N, s, MPI_STATUSES_IGNORE);
  int ok = 1;
  for (int i = 0; i < N; ++i) ok &= in[i] == i;
  CHECK(ok, "messages overtook each other");
}

/* MPI_BOTTOM with a type whose displacements are absolute addresses. */
static void bottom(void) {
  int out[4], in[4] = {-1, -1, -1, -1};
  for (int i = 0; i < 4; ++i) out[i] = rank * 10 + i;
  MPI_Aint out_addr, in_addr;
  MPI_Get_address(out, &out_addr);
  MPI_Get_address(in, &in_addr);
  int len = 4;
  MPI_Datatype at_out, at_in, base = MPI_INT;
  MPI_Type_create_struct(1, &len, &out_addr, &base, &at_out);
  MPI_Type_create_struct(1, &len, &in_addr, &base, &at_in);
  MPI_Type_commit(&at_out);
  MPI_Type_commit(&at_in);
  MPI_Request r;
  MPI_Irecv(MPI_BOTTOM, 1, at_in, left, 97, MPI_COMM_WORLD, &r);
  MPI_Send(MPI_BOTTOM, 1, at_out, right, 97, MPI_COMM_WORLD);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  int ok = 1;
  for (int i = 0; i < 4; ++i) ok &= in[i] == left * 10 + i;
  CHECK(ok, "MPI_BOTTOM transfer");
  MPI_Type_free(&at_out);
  MPI_Type_free(&at_in);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  right = (rank + 1) % size;
  left = (rank - 1 + size) % size;
  ring_sizes();
  send_modes();
  buffered();
  derived();
  probes();
  completion_families();
  persistent();
  cancel_and_status();
  proc_null();
  sendrecv();
  ordering();
  bottom();
  MPI_Finalize();
  return check_exit("p2p");
}
