/* Nonblocking collectives: every I-form, several outstanding at once on one communicator
 * (completed with Waitall, Testall polling, Waitany and Wait in reverse order), results
 * checked against expected values; MPI_IN_PLACE forms; a datatype freed while pending. */
/* SLUICE_TEST_RANKS: 1 2 3 4 7 8 */
#include <string.h>

#include "check.h"

static int me, P;

static int val(int r, int i) {
  return r * 1000 + i * 3 + 1;
}

#define NREQ 16

static void run_all(int n, int mode) {
  MPI_Request req[NREQ];
  int nreq = 0;
  int* bc = malloc((n + 1) * sizeof(int));
  for (int i = 0; i < n; ++i) bc[i] = me == P - 1 ? val(P - 1, i) : -1;
  long long* ar_in = malloc((n + 1) * sizeof(long long));
  long long* ar_out = malloc((n + 1) * sizeof(long long));
  long long* ar_ip = malloc((n + 1) * sizeof(long long));
  long long* red_out = malloc((n + 1) * sizeof(long long));
  long long* scan_out = malloc((n + 1) * sizeof(long long));
  long long* exscan_out = malloc((n + 1) * sizeof(long long));
  for (int i = 0; i < n; ++i) ar_ip[i] = ar_in[i] = val(me, i);
  int* ga = malloc(((size_t)n * P + 1) * sizeof(int));
  int* mine = malloc((n + 1) * sizeof(int));
  int* sc_out = malloc((n + 1) * sizeof(int));
  int* ag = malloc(((size_t)n * P + 1) * sizeof(int));
  int* a2a_in = malloc(((size_t)n * P + 1) * sizeof(int));
  int* a2a_out = malloc(((size_t)n * P + 1) * sizeof(int));
  int* sc_in = malloc(((size_t)n * P + 1) * sizeof(int));
  for (int i = 0; i < n; ++i) mine[i] = val(me, i);
  for (int d = 0; d < P; ++d)
    for (int i = 0; i < n; ++i) {
      a2a_in[(size_t)d * n + i] = val(me * 31 + d, i);
      sc_in[(size_t)d * n + i] = val(d + 9, i);
    }
  int* rs_counts = malloc(P * sizeof(int));
  int rs_total = 0, rs_off = 0;
  for (int i = 0; i < P; ++i) {
    rs_counts[i] = n / 2 + i % 2;
    if (i < me) rs_off += rs_counts[i];
    rs_total += rs_counts[i];
  }
  long long* rs_in = malloc((rs_total + 1) * sizeof(long long));
  long long* rs_out = malloc((rs_counts[me] + 1) * sizeof(long long));
  for (int i = 0; i < rs_total; ++i) rs_in[i] = (long long)me * 100 + i;
  int* agv_counts = malloc(P * sizeof(int));
  int* agv_displs = malloc(P * sizeof(int));
  int agv_total = 0;
  for (int r = P - 1; r >= 0; --r) {
    agv_counts[r] = (r * 7 + n) % 13;
    agv_displs[r] = agv_total;
    agv_total += agv_counts[r] + 1;
  }
  int* agv = malloc((agv_total + 1) * sizeof(int));
  int* agv_mine = malloc(13 * sizeof(int));
  for (int i = 0; i < agv_counts[me]; ++i) agv_mine[i] = val(me, i + 3);

  MPI_Ibarrier(MPI_COMM_WORLD, &req[nreq++]);
  MPI_Ibcast(bc, n, MPI_INT, P - 1, MPI_COMM_WORLD, &req[nreq++]);
  MPI_Iallreduce(ar_in, ar_out, n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &req[nreq++]);
  MPI_Iallreduce(MPI_IN_PLACE, ar_ip, n, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD, &req[nreq++]);
  MPI_Ireduce(ar_in, red_out, n, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD, &req[nreq++]);
  MPI_Iscan(ar_in, scan_out, n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &req[nreq++]);
  MPI_Iexscan(ar_in, exscan_out, n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD, &req[nreq++]);
  MPI_Igather(mine, n, MPI_INT, ga, n, MPI_INT, P / 2, MPI_COMM_WORLD, &req[nreq++]);
  MPI_Iscatter(sc_in, n, MPI_INT, sc_out, n, MPI_INT, 0, MPI_COMM_WORLD, &req[nreq++]);
  MPI_Iallgather(mine, n, MPI_INT, ag, n, MPI_INT, MPI_COMM_WORLD, &req[nreq++]);
  MPI_Iallgatherv(agv_mine, agv_counts[me], MPI_INT, agv, agv_counts, agv_displs, MPI_INT,
                  MPI_COMM_WORLD, &req[nreq++]);
  MPI_Ialltoall(a2a_in, n, MPI_INT, a2a_out, n, MPI_INT, MPI_COMM_WORLD, &req[nreq++]);
  MPI_Ireduce_scatter(rs_in, rs_out, rs_counts, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD,
                      &req[nreq++]);
  MPI_Ibarrier(MPI_COMM_WORLD, &req[nreq++]);

  if (mode == 0) {
    MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
  } else if (mode == 1) {
    int flag = 0;
    while (!flag) MPI_Testall(nreq, req, &flag, MPI_STATUSES_IGNORE);
  } else if (mode == 2) {
    for (int k = 0; k < nreq; ++k) {
      int idx;
      MPI_Waitany(nreq, req, &idx, MPI_STATUS_IGNORE);
      CHECK(idx != MPI_UNDEFINED, "waitany returned MPI_UNDEFINED with %d left", nreq - k);
    }
  } else {
    for (int k = nreq - 1; k >= 0; --k) MPI_Wait(&req[k], MPI_STATUS_IGNORE);
  }
  for (int k = 0; k < nreq; ++k) CHECK(req[k] == MPI_REQUEST_NULL, "request %d not freed", k);

  for (int i = 0; i < n; ++i) {
    CHECK(bc[i] == val(P - 1, i), "ibcast n=%d mode=%d [%d]=%d", n, mode, i, bc[i]);
    long long sum = 1000LL * P * (P - 1) / 2 + (long long)P * (3 * i + 1);
    CHECK(ar_out[i] == sum, "iallreduce n=%d mode=%d [%d]=%lld", n, mode, i, ar_out[i]);
    CHECK(ar_ip[i] == val(P - 1, i), "iallreduce in place n=%d [%d]=%lld", n, i, ar_ip[i]);
    if (me == 0) CHECK(red_out[i] == sum, "ireduce n=%d [%d]=%lld", n, i, red_out[i]);
    long long pre = 1000LL * me * (me + 1) / 2 + (long long)(me + 1) * (3 * i + 1);
    CHECK(scan_out[i] == pre, "iscan n=%d [%d]=%lld", n, i, scan_out[i]);
    if (me > 0)
      CHECK(exscan_out[i] == pre - val(me, i), "iexscan n=%d [%d]=%lld", n, i, exscan_out[i]);
    CHECK(sc_out[i] == val(me + 9, i), "iscatter n=%d [%d]=%d", n, i, sc_out[i]);
    if (n > 0 && i > 4) break; /* the rest of the per-element checks on a prefix only */
  }
  for (int r = 0; r < P; ++r)
    for (int i = 0; i < n; ++i) {
      if (me == P / 2)
        CHECK(ga[(size_t)r * n + i] == val(r, i), "igather n=%d block %d [%d]", n, r, i);
      CHECK(ag[(size_t)r * n + i] == val(r, i), "iallgather n=%d block %d [%d]", n, r, i);
      CHECK(a2a_out[(size_t)r * n + i] == val(r * 31 + me, i), "ialltoall n=%d block %d [%d]", n, r,
            i);
    }
  for (int r = 0; r < P; ++r)
    for (int i = 0; i < agv_counts[r]; ++i)
      CHECK(agv[agv_displs[r] + i] == val(r, i + 3), "iallgatherv block %d [%d]", r, i);
  for (int i = 0; i < rs_counts[me]; ++i)
    CHECK(rs_out[i] == 100LL * P * (P - 1) / 2 + (long long)P * (rs_off + i),
          "ireduce_scatter [%d]=%lld", i, rs_out[i]);

  free(bc), free(ar_in), free(ar_out), free(ar_ip), free(red_out), free(scan_out);
  free(exscan_out), free(ga), free(mine), free(sc_out), free(ag), free(a2a_in), free(a2a_out);
  free(sc_in), free(rs_counts), free(rs_in), free(rs_out), free(agv_counts), free(agv_displs);
  free(agv), free(agv_mine);
}

/* A strided type freed right after the I-call: the operation must still use it. */
static void freed_type(void) {
  MPI_Datatype vec;
  MPI_Type_vector(4, 1, 3, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int buf[12];
  for (int i = 0; i < 12; ++i) buf[i] = me == 0 ? 100 + i : -1;
  MPI_Request r;
  MPI_Ibcast(buf, 1, vec, 0, MPI_COMM_WORLD, &r);
  MPI_Type_free(&vec);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int i = 0; i < 12; ++i) {
    int want = i % 3 == 0 || me == 0 ? 100 + i : -1;
    CHECK(buf[i] == want, "ibcast with freed vector type: [%d]=%d want %d", i, buf[i], want);
  }
}

/* Many outstanding allreduces, completed in a scrambled order. */
static void many(void) {
  enum { K = 32 };
  MPI_Request req[K];
  int in[K], out[K];
  for (int k = 0; k < K; ++k) {
    in[k] = me + k;
    MPI_Iallreduce(&in[k], &out[k], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[k]);
  }
  for (int k = 0; k < K; ++k) MPI_Wait(&req[(k * 7) % K], MPI_STATUS_IGNORE);
  for (int k = 0; k < K; ++k)
    CHECK(out[k] == P * (P - 1) / 2 + P * k, "allreduce %d of %d: %d", k, K, out[k]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  static const int sizes[] = {0, 1, 33, 2000, 20000};
  for (int s = 0; s < 5; ++s)
    for (int mode = 0; mode < 4; ++mode) run_all(sizes[s], mode);
  freed_type();
  many();
  MPI_Finalize();
  return check_exit("coll_nonblocking");
}
