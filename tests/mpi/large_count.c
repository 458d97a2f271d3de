/* The MPI-4.0 large-count (_c) functions at ordinary sizes, each checked against expected values:
 * point-to-point in every mode (blocking, nonblocking, persistent, buffered with
 * MPI_Buffer_attach_c/detach_c, Sendrecv(_replace)_c, Mprobe with Mrecv_c/Imrecv_c,
 * MPI_Get_count_c), the collectives (blocking, nonblocking, persistent; v and w variants with
 * MPI_Count counts and MPI_Aint displacements), neighbourhood collectives on a ring, user ops
 * made by MPI_Op_create_c, the datatype constructors with their large-count envelopes and
 * contents, Pack_c/Unpack_c, Pack_external_c, and one-sided communication (Win_create_c,
 * Win_allocate_c, Win_allocate_shared_c with Win_shared_query_c, Put/Get/Accumulate/
 * Get_accumulate and the request-based forms). Counts beyond INT_MAX: large_count_huge.c. */
/* SLUICE_TEST_RANKS: 1 2 3 4 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, size;

static void p2p(void) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  enum { N = 1000, BIG = 100000 }; /* BIG: a rendezvous-sized message */
  int* out = malloc(sizeof(int) * BIG);
  int* in = malloc(sizeof(int) * BIG);
  for (int i = 0; i < BIG; ++i) out[i] = rank * 1000003 + i;
  MPI_Status st;
  MPI_Count count = -1;

  /* Blocking sends in each mode, received by a nonblocking receive posted first (so any number
     of ranks, one included, is deadlock-free); the barrier lets the ready send go. */
  for (int mode = 0; mode < 4; ++mode) {
    memset(in, 0xff, sizeof(int) * BIG);
    const MPI_Count n = mode == 0 ? BIG : N;
    void* attached = NULL;
    if (mode == 3) {
      const MPI_Count bytes = n * (MPI_Count)sizeof(int) + MPI_BSEND_OVERHEAD;
      attached = malloc((size_t)bytes);
      CHECK(MPI_Buffer_attach_c(attached, bytes) == MPI_SUCCESS, "%s", "attach_c");
    }
    MPI_Request r;
    MPI_Irecv_c(in, n, MPI_INT, left, 1, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    if (mode == 0) MPI_Send_c(out, n, MPI_INT, right, 1, MPI_COMM_WORLD);
    if (mode == 1) MPI_Ssend_c(out, n, MPI_INT, right, 1, MPI_COMM_WORLD);
    if (mode == 2) MPI_Rsend_c(out, n, MPI_INT, right, 1, MPI_COMM_WORLD);
    if (mode == 3) MPI_Bsend_c(out, n, MPI_INT, right, 1, MPI_COMM_WORLD);
    MPI_Wait(&r, &st);
    MPI_Get_count_c(&st, MPI_INT, &count);
    CHECK(count == n, "mode %d: count %lld", mode, (long long)count);
    CHECK(st.MPI_SOURCE == left, "mode %d: source %d", mode, st.MPI_SOURCE);
    for (MPI_Count i = 0; i < n; ++i)
      if (in[i] != left * 1000003 + (int)i) {
        CHECK(0, "mode %d: element %lld is %d", mode, (long long)i, in[i]);
        break;
      }
    if (mode == 3) {
      void* back = NULL;
      MPI_Count bytes = 0;
      CHECK(MPI_Buffer_detach_c(&back, &bytes) == MPI_SUCCESS, "%s", "detach_c");
      CHECK(back == attached && bytes == n * (MPI_Count)sizeof(int) + MPI_BSEND_OVERHEAD,
            "detach_c gave %p, %lld bytes", back, (long long)bytes);
      free(attached);
    }
  }

  /* A blocking receive, of a rendezvous-sized message and of a short one. */
  for (int k = 0; k < 2; ++k) {
    const MPI_Count n = k ? 3 : BIG;
    memset(in, 0, sizeof(int) * BIG);
    MPI_Request r;
    MPI_Isend_c(out, n, MPI_INT, right, 2, MPI_COMM_WORLD, &r);
    MPI_Recv_c(in, BIG, MPI_INT, left, 2, MPI_COMM_WORLD, &st);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Get_count_c(&st, MPI_INT, &count);
    CHECK(count == n && in[n - 1] == left * 1000003 + (int)n - 1, "recv_c: %lld, %d",
          (long long)count, in[n - 1]);
  }

  /* Nonblocking sends in every mode, all posted at once. */
  {
    MPI_Request r[8];
    int* in4 = malloc(sizeof(int) * 4 * N);
    for (int k = 0; k < 4; ++k)
      MPI_Irecv_c(in4 + k * N, N, MPI_INT, left, 3 + k, MPI_COMM_WORLD, &r[k]);
    int* buf = malloc(sizeof(int) * N + MPI_BSEND_OVERHEAD);
    MPI_Buffer_attach(buf, (int)(sizeof(int) * N + MPI_BSEND_OVERHEAD));
    MPI_Barrier(MPI_COMM_WORLD); /* every receive posted: the ready send may go */
    MPI_Isend_c(out, N, MPI_INT, right, 3, MPI_COMM_WORLD, &r[4]);
    MPI_Issend_c(out + N, N, MPI_INT, right, 4, MPI_COMM_WORLD, &r[5]);
    MPI_Ibsend_c(out + 2 * N, N, MPI_INT, right, 5, MPI_COMM_WORLD, &r[6]);
    MPI_Irsend_c(out + 3 * N, N, MPI_INT, right, 6, MPI_COMM_WORLD, &r[7]);
    MPI_Waitall(8, r, MPI_STATUSES_IGNORE);
    void* back;
    int bytes;
    MPI_Buffer_detach(&back, &bytes);
    free(buf);
    for (int i = 0; i < 4 * N; ++i)
      if (in4[i] != left * 1000003 + i) {
        CHECK(0, "nonblocking: element %d is %d", i, in4[i]);
        break;
      }
    free(in4);
  }

  /* Persistent requests, started twice. */
  {
    MPI_Request r[2];
    MPI_Recv_init_c(in, N, MPI_INT, left, 6, MPI_COMM_WORLD, &r[0]);
    MPI_Send_init_c(out, N, MPI_INT, right, 6, MPI_COMM_WORLD, &r[1]);
    for (int round = 0; round < 2; ++round) {
      memset(in, 0, sizeof(int) * N);
      MPI_Startall(2, r);
      MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
      CHECK(in[N - 1] == left * 1000003 + N - 1, "persistent round %d: %d", round, in[N - 1]);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    MPI_Request s[3];
    MPI_Ssend_init_c(out, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &s[0]);
    MPI_Rsend_init_c(out, 1, MPI_INT, right, 8, MPI_COMM_WORLD, &s[1]);
    MPI_Bsend_init_c(out, 1, MPI_INT, right, 9, MPI_COMM_WORLD, &s[2]);
    int got[3] = {0, 0, 0};
    MPI_Request rr[3];
    for (int k = 0; k < 3; ++k)
      MPI_Irecv_c(&got[k], 1, MPI_INT, left, 7 + k, MPI_COMM_WORLD, &rr[k]);
    int* buf = malloc(64 + MPI_BSEND_OVERHEAD);
    MPI_Buffer_attach(buf, 64 + MPI_BSEND_OVERHEAD);
    MPI_Barrier(MPI_COMM_WORLD); /* every receive posted: the ready send may go */
    MPI_Startall(3, s);
    MPI_Waitall(3, s, MPI_STATUSES_IGNORE);
    MPI_Waitall(3, rr, MPI_STATUSES_IGNORE);
    void* back;
    int bytes;
    MPI_Buffer_detach(&back, &bytes);
    free(buf);
    for (int k = 0; k < 3; ++k) {
      CHECK(got[k] == left * 1000003, "persistent mode %d: %d", k, got[k]);
      MPI_Request_free(&s[k]);
    }
  }

  /* Sendrecv_c, Sendrecv_replace_c on a strided type. */
  {
    memset(in, 0, sizeof(int) * N);
    MPI_Sendrecv_c(out, N, MPI_INT, right, 10, in, N, MPI_INT, left, 10, MPI_COMM_WORLD, &st);
    MPI_Get_count_c(&st, MPI_INT, &count);
    CHECK(count == N && in[N - 1] == left * 1000003 + N - 1, "sendrecv_c: %lld, %d",
          (long long)count, in[N - 1]);
    MPI_Datatype every_other;
    MPI_Type_vector_c(N, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    for (int i = 0; i < 2 * N; ++i) in[i] = (i % 2) ? -7 : rank * 1000003 + i / 2;
    MPI_Sendrecv_replace_c(in, 1, every_other, right, 11, left, 11, MPI_COMM_WORLD, &st);
    for (int i = 0; i < 2 * N; ++i)
      if (in[i] != ((i % 2) ? -7 : left * 1000003 + i / 2)) {
        CHECK(0, "sendrecv_replace_c: element %d is %d", i, in[i]);
        break;
      }
#ifdef SLUICE_MPI
    /* MPICH 4.0.2 fills an MPI_Isendrecv status from the send half and breaks on
       MPI_Isendrecv_replace (see mpi4.c): checked under Sluice only. */
    MPI_Request r;
    for (int i = 0; i < 2 * N; ++i) in[i] = (i % 2) ? -7 : rank * 1000003 + i / 2;
    MPI_Isendrecv_replace_c(in, 1, every_other, right, 12, left, 12, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    CHECK(in[2 * N - 2] == left * 1000003 + N - 1, "isendrecv_replace_c: %d", in[2 * N - 2]);
    memset(in, 0, sizeof(int) * N);
    MPI_Isendrecv_c(out, N, MPI_INT, right, 13, in, N, MPI_INT, left, 13, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    MPI_Get_count_c(&st, MPI_INT, &count);
    CHECK(count == N && st.MPI_SOURCE == left && in[N - 1] == left * 1000003 + N - 1,
          "isendrecv_c: %lld from %d, %d", (long long)count, st.MPI_SOURCE, in[N - 1]);
#endif
    MPI_Type_free(&every_other);
  }

  /* Matched probes: Mrecv_c and Imrecv_c. */
  {
    MPI_Request sends[2];
    MPI_Isend_c(out, 5, MPI_INT, right, 14, MPI_COMM_WORLD, &sends[0]);
    MPI_Isend_c(out + 5, 6, MPI_INT, right, 15, MPI_COMM_WORLD, &sends[1]);
    MPI_Message m;
    MPI_Mprobe(left, 14, MPI_COMM_WORLD, &m, &st);
    MPI_Get_count_c(&st, MPI_INT, &count);
    CHECK(count == 5, "mprobe count %lld", (long long)count);
    MPI_Mrecv_c(in, count, MPI_INT, &m, &st);
    CHECK(in[4] == left * 1000003 + 4, "mrecv_c: %d", in[4]);
    MPI_Mprobe(left, 15, MPI_COMM_WORLD, &m, &st);
    MPI_Request r;
    MPI_Imrecv_c(in, 6, MPI_INT, &m, &r);
    MPI_Wait(&r, &st);
    MPI_Get_count_c(&st, MPI_INT, &count);
    CHECK(count == 6 && in[5] == left * 1000003 + 10, "imrecv_c: %lld, %d", (long long)count,
          in[5]);
    MPI_Waitall(2, sends, MPI_STATUSES_IGNORE);
  }
  free(out);
  free(in);
}

/* A user op with an MPI_Count length: element-wise sum of ints, counting its calls. */
static int user_calls;
static void user_sum(void* in, void* inout, MPI_Count* len, MPI_Datatype* type) {
  (void)type;
  ++user_calls;
  for (MPI_Count i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

static void collectives(void) {
  enum { N = 7 };
  const int P = size;
  int* a = malloc(sizeof(int) * (size_t)(N * P * P + 64));
  int* b = malloc(sizeof(int) * (size_t)(N * P * P + 64));
  MPI_Request r;

  /* Bcast_c, Ibcast_c, Bcast_init_c from the last rank. */
  for (int form = 0; form < 3; ++form) {
    for (int i = 0; i < N; ++i) a[i] = rank == P - 1 ? 100 * form + i : -1;
    if (form == 0) MPI_Bcast_c(a, N, MPI_INT, P - 1, MPI_COMM_WORLD);
    if (form == 1) {
      MPI_Ibcast_c(a, N, MPI_INT, P - 1, MPI_COMM_WORLD, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    if (form == 2) {
      MPI_Bcast_init_c(a, N, MPI_INT, P - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
      MPI_Start(&r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      MPI_Request_free(&r);
    }
    for (int i = 0; i < N; ++i) CHECK(a[i] == 100 * form + i, "bcast form %d: %d", form, a[i]);
  }

  /* Reductions: sum of rank + i over the ranks is P*i + P(P-1)/2. */
  const int tri = P * (P - 1) / 2;
  for (int i = 0; i < N; ++i) a[i] = rank + i;
  MPI_Reduce_c(a, b, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    for (int i = 0; i < N; ++i) CHECK(b[i] == P * i + tri, "reduce_c %d: %d", i, b[i]);
  memset(b, 0, sizeof(int) * N);
  MPI_Iallreduce_c(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int i = 0; i < N; ++i) CHECK(b[i] == P * i + tri, "iallreduce_c %d: %d", i, b[i]);
  memset(b, 0, sizeof(int) * N);
  MPI_Allreduce_init_c(a, b, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
  MPI_Start(&r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  MPI_Request_free(&r);
  for (int i = 0; i < N; ++i) CHECK(b[i] == P - 1 + i, "allreduce_init_c %d: %d", i, b[i]);
  MPI_Scan_c(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i)
    CHECK(b[i] == (rank + 1) * i + rank * (rank + 1) / 2, "scan_c %d: %d", i, b[i]);
  MPI_Exscan_c(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank > 0)
    for (int i = 0; i < N; ++i)
      CHECK(b[i] == rank * i + rank * (rank - 1) / 2, "exscan_c %d: %d", i, b[i]);

  /* A user op made by MPI_Op_create_c, in Allreduce_c and Reduce_local_c. */
  MPI_Op op;
  MPI_Op_create_c(user_sum, 1, &op);
  for (int i = 0; i < N; ++i) a[i] = rank + i;
  MPI_Allreduce_c(a, b, N, MPI_INT, op, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) CHECK(b[i] == P * i + tri, "op_create_c allreduce %d: %d", i, b[i]);
  user_calls = 0;
  for (int i = 0; i < N; ++i) a[i] = 3, b[i] = i;
  MPI_Reduce_local_c(a, b, N, MPI_INT, op);
  CHECK(user_calls == 1, "reduce_local_c called the op %d times", user_calls);
  for (int i = 0; i < N; ++i) CHECK(b[i] == 3 + i, "reduce_local_c %d: %d", i, b[i]);
  MPI_Op_free(&op);

  /* Gather(v)_c, Scatter(v)_c, Allgather(v)_c: rank j contributes j+1 values j*100+k. */
  {
    MPI_Count* counts = malloc(sizeof(MPI_Count) * (size_t)P);
    MPI_Aint* displs = malloc(sizeof(MPI_Aint) * (size_t)P);
    MPI_Aint total = 0;
    for (int j = 0; j < P; ++j) {
      counts[j] = j + 1;
      displs[j] = total + j; /* a gap of j ints before each block */
      total += j + 1 + j;
    }
    int mine[64];
    for (int k = 0; k <= rank; ++k) mine[k] = rank * 100 + k;
    for (int form = 0; form < 3; ++form) {
      for (MPI_Aint i = 0; i < total; ++i) b[i] = -1;
      if (form == 0)
        MPI_Gatherv_c(mine, rank + 1, MPI_INT, b, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
      if (form == 1) {
        MPI_Igatherv_c(mine, rank + 1, MPI_INT, b, counts, displs, MPI_INT, 0, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      }
      if (form == 2) {
        MPI_Allgatherv_c(mine, rank + 1, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD);
      }
      if (rank == 0 || form == 2)
        for (int j = 0; j < P; ++j)
          for (int k = 0; k <= j; ++k)
            CHECK(b[displs[j] + k] == j * 100 + k, "gatherv form %d [%d][%d]: %d", form, j, k,
                  b[displs[j] + k]);
    }
    for (MPI_Aint i = 0; i < total; ++i) a[i] = (int)i;
    memset(mine, 0, sizeof mine);
    MPI_Scatterv_c(a, counts, displs, MPI_INT, mine, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int k = 0; k <= rank; ++k)
      CHECK(mine[k] == displs[rank] + k, "scatterv_c %d: %d", k, mine[k]);
    memset(mine, 0, sizeof mine);
    MPI_Iscatterv_c(a, counts, displs, MPI_INT, mine, rank + 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int k = 0; k <= rank; ++k)
      CHECK(mine[k] == displs[rank] + k, "iscatterv_c %d: %d", k, mine[k]);
    free(counts);
    free(displs);
  }
  for (int i = 0; i < N; ++i) a[i] = rank * 10 + i;
  MPI_Gather_c(a, N, MPI_INT, b, N, MPI_INT, P - 1, MPI_COMM_WORLD);
  if (rank == P - 1)
    for (int j = 0; j < P * N; ++j) CHECK(b[j] == (j / N) * 10 + j % N, "gather_c %d: %d", j, b[j]);
  MPI_Allgather_c(a, N, MPI_INT, b, N, MPI_INT, MPI_COMM_WORLD);
  for (int j = 0; j < P * N; ++j)
    CHECK(b[j] == (j / N) * 10 + j % N, "allgather_c %d: %d", j, b[j]);
  for (int j = 0; j < P * N; ++j) a[j] = j;
  MPI_Scatter_c(a, N, MPI_INT, b, N, MPI_INT, 0, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) CHECK(b[i] == rank * N + i, "scatter_c %d: %d", i, b[i]);

  /* Alltoall(v,w)_c: block for rank j is j*1000 + rank*10 + k. */
  for (int j = 0; j < P; ++j)
    for (int k = 0; k < N; ++k) a[j * N + k] = j * 1000 + rank * 10 + k;
  MPI_Ialltoall_c(a, N, MPI_INT, b, N, MPI_INT, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int j = 0; j < P; ++j)
    for (int k = 0; k < N; ++k)
      CHECK(b[j * N + k] == rank * 1000 + j * 10 + k, "ialltoall_c [%d][%d]: %d", j, k,
            b[j * N + k]);
  {
    MPI_Count* c = malloc(sizeof(MPI_Count) * (size_t)P);
    MPI_Aint* d = malloc(sizeof(MPI_Aint) * (size_t)P);
    MPI_Aint* dbytes = malloc(sizeof(MPI_Aint) * (size_t)P);
    MPI_Datatype* t = malloc(sizeof(MPI_Datatype) * (size_t)P);
    for (int j = 0; j < P; ++j) {
      c[j] = N;
      d[j] = (MPI_Aint)(P - 1 - j) * N; /* blocks in reverse order */
      dbytes[j] = d[j] * (MPI_Aint)sizeof(int);
      t[j] = MPI_INT;
    }
    for (int j = 0; j < P; ++j)
      for (int k = 0; k < N; ++k) a[d[j] + k] = j * 1000 + rank * 10 + k;
    MPI_Alltoallv_c(a, c, d, MPI_INT, b, c, d, MPI_INT, MPI_COMM_WORLD);
    for (int j = 0; j < P; ++j)
      for (int k = 0; k < N; ++k)
        CHECK(b[d[j] + k] == rank * 1000 + j * 10 + k, "alltoallv_c [%d][%d]: %d", j, k,
              b[d[j] + k]);
    memset(b, 0, sizeof(int) * (size_t)(P * N));
    MPI_Alltoallw_init_c(a, c, dbytes, t, b, c, dbytes, t, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    MPI_Start(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Request_free(&r);
    for (int j = 0; j < P; ++j)
      for (int k = 0; k < N; ++k)
        CHECK(b[d[j] + k] == rank * 1000 + j * 10 + k, "alltoallw_init_c [%d][%d]: %d", j, k,
              b[d[j] + k]);

    /* Reduce_scatter_c: rank j gets j+1 sums. */
    MPI_Count total = 0;
    for (int j = 0; j < P; ++j) c[j] = j + 1, total += j + 1;
    for (MPI_Count i = 0; i < total; ++i) a[i] = (int)i + rank;
    MPI_Reduce_scatter_c(a, b, c, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    const int first = rank * (rank + 1) / 2;
    for (int k = 0; k <= rank; ++k)
      CHECK(b[k] == P * (first + k) + tri, "reduce_scatter_c %d: %d", k, b[k]);
    for (int i = 0; i < 2 * P; ++i) a[i] = i + rank;
    MPI_Reduce_scatter_block_c(a, b, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int k = 0; k < 2; ++k)
      CHECK(b[k] == P * (2 * rank + k) + tri, "reduce_scatter_block_c %d: %d", k, b[k]);
    free(c);
    free(d);
    free(dbytes);
    free(t);
  }
  free(a);
  free(b);
}

/* Neighbourhood collectives on a periodic ring: left neighbour first, then right. */
static void neighbors(void) {
  MPI_Comm ring;
  int dims[1] = {size}, periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
  int left, right;
  MPI_Cart_shift(ring, 0, 1, &left, &right);
  enum { N = 3 };
  int out[2 * N], in[2 * N];
  for (int k = 0; k < N; ++k) out[k] = rank * 10 + k;
  MPI_Neighbor_allgather_c(out, N, MPI_INT, in, N, MPI_INT, ring);
  for (int k = 0; k < N; ++k)
    CHECK(in[k] == left * 10 + k && in[N + k] == right * 10 + k, "neighbor_allgather_c %d", k);
  MPI_Count counts[2] = {N, N};
  MPI_Aint displs[2] = {N, 0}; /* swapped */
  memset(in, 0, sizeof in);
  MPI_Request r;
  MPI_Ineighbor_allgatherv_c(out, N, MPI_INT, in, counts, displs, MPI_INT, ring, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  for (int k = 0; k < N; ++k)
    CHECK(in[N + k] == left * 10 + k && in[k] == right * 10 + k, "ineighbor_allgatherv_c %d", k);
    /* Alltoall: the block sent towards -1 is received by the left neighbour as its +1 block.
       MPICH 4.0.2 pairs them the other way when left == right (see topo_cart.c). */
#ifndef SLUICE_MPI
  if (size <= 2) {
    MPI_Comm_free(&ring);
    return;
  }
#endif
  for (int k = 0; k < N; ++k) out[k] = rank * 10 + k, out[N + k] = rank * 10 + 5 + k;
  MPI_Neighbor_alltoall_init_c(out, N, MPI_INT, in, N, MPI_INT, ring, MPI_INFO_NULL, &r);
  MPI_Start(&r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  MPI_Request_free(&r);
  for (int k = 0; k < N; ++k)
    CHECK(in[k] == left * 10 + 5 + k && in[N + k] == right * 10 + k,
          "neighbor_alltoall_c %d: %d %d", k, in[k], in[N + k]);
  MPI_Aint sd[2] = {0, N}, bd[2] = {0, N * (MPI_Aint)sizeof(int)};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  memset(in, 0, sizeof in);
  MPI_Neighbor_alltoallv_c(out, counts, sd, MPI_INT, in, counts, sd, MPI_INT, ring);
  for (int k = 0; k < N; ++k)
    CHECK(in[k] == left * 10 + 5 + k && in[N + k] == right * 10 + k, "neighbor_alltoallv_c %d", k);
  memset(in, 0, sizeof in);
  MPI_Neighbor_alltoallw_c(out, counts, bd, types, in, counts, bd, types, ring);
  for (int k = 0; k < N; ++k)
    CHECK(in[k] == left * 10 + 5 + k && in[N + k] == right * 10 + k, "neighbor_alltoallw_c %d", k);
  MPI_Comm_free(&ring);
}

/* The envelope and contents of a type made by a large-count constructor. */
static void expect_large(MPI_Datatype t, int combiner, int ni, int na, int nc, int nd,
                         const MPI_Count* counts, const char* what) {
  MPI_Count i = -1, a = -1, c = -1, d = -1;
  int comb = -1;
  MPI_Type_get_envelope_c(t, &i, &a, &c, &d, &comb);
  CHECK(comb == combiner && i == ni && a == na && c == nc && d == nd,
        "%s: envelope %d %lld %lld %lld %lld", what, comb, (long long)i, (long long)a, (long long)c,
        (long long)d);
  if (c != nc || nc > 16 || i > 16 || d > 4) return;
  int ints[16];
  MPI_Aint addrs[4];
  MPI_Count large[16];
  MPI_Datatype types[4];
  MPI_Type_get_contents_c(t, i, a, c, d, ints, addrs, large, types);
  for (int k = 0; k < nc; ++k)
    CHECK(large[k] == counts[k], "%s: large count %d is %lld, not %lld", what, k,
          (long long)large[k], (long long)counts[k]);
  for (int k = 0; k < d; ++k) {
    int ti, ta, td, tc;
    MPI_Type_get_envelope(types[k], &ti, &ta, &td, &tc);
    if (tc != MPI_COMBINER_NAMED) MPI_Type_free(&types[k]);
  }
}

static void datatypes(void) {
  /* Constructors: each type picks ints out of 0..99 and is checked by packing. */
  int src[100];
  for (int i = 0; i < 100; ++i) src[i] = i;
  int packed[100];
  MPI_Datatype t;
  MPI_Count pos;

  MPI_Type_contiguous_c(5, MPI_INT, &t);
  MPI_Type_commit(&t);
  expect_large(t, MPI_COMBINER_CONTIGUOUS, 0, 0, 1, 1, (MPI_Count[]){5}, "contiguous_c");
  MPI_Type_free(&t);

  MPI_Type_vector_c(3, 2, 5, MPI_INT, &t); /* 0 1 5 6 10 11 */
  MPI_Type_commit(&t);
  expect_large(t, MPI_COMBINER_VECTOR, 0, 0, 3, 1, (MPI_Count[]){3, 2, 5}, "vector_c");
  pos = 0;
  MPI_Pack_c(src, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD);
  CHECK(pos == 6 * (MPI_Count)sizeof(int), "pack_c position %lld", (long long)pos);
  const int vec[6] = {0, 1, 5, 6, 10, 11};
  for (int k = 0; k < 6; ++k) CHECK(packed[k] == vec[k], "vector_c element %d: %d", k, packed[k]);
  {
    int back[100] = {0};
    MPI_Count at = 0;
    MPI_Unpack_c(packed, pos, &at, back, 1, t, MPI_COMM_WORLD);
    CHECK(at == pos && back[10] == 10 && back[11] == 11 && back[2] == 0, "unpack_c");
  }
  MPI_Type_free(&t);

  MPI_Type_create_hvector_c(2, 3, 40, MPI_INT, &t); /* 0 1 2 10 11 12 */
  MPI_Type_commit(&t);
  expect_large(t, MPI_COMBINER_HVECTOR, 0, 0, 3, 1, (MPI_Count[]){2, 3, 40}, "hvector_c");
  pos = 0;
  MPI_Pack_c(src, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD);
  CHECK(packed[3] == 10 && packed[5] == 12, "hvector_c: %d %d", packed[3], packed[5]);
  MPI_Type_free(&t);

  const MPI_Count bl[3] = {1, 2, 3}, disp[3] = {4, 20, 50};
  MPI_Type_indexed_c(3, bl, disp, MPI_INT, &t); /* 4 20 21 50 51 52 */
  MPI_Type_commit(&t);
  expect_large(t, MPI_COMBINER_INDEXED, 0, 0, 7, 1, (MPI_Count[]){3, 1, 2, 3, 4, 20, 50},
               "indexed_c");
  pos = 0;
  MPI_Pack_c(src, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD);
  const int idx[6] = {4, 20, 21, 50, 51, 52};
  for (int k = 0; k < 6; ++k) CHECK(packed[k] == idx[k], "indexed_c element %d: %d", k, packed[k]);
  /* The same type through external32: big-endian ints. */
  {
    unsigned char ext[64];
    MPI_Count esize = 0, at = 0;
    MPI_Pack_external_size_c("external32", 1, t, &esize);
    CHECK(esize == 24, "pack_external_size_c %lld", (long long)esize);
    MPI_Pack_external_c("external32", src, 1, t, ext, sizeof ext, &at);
    CHECK(at == 24 && ext[3] == 4 && ext[7] == 20 && ext[23] == 52 && ext[0] == 0,
          "pack_external_c: %lld, %d %d %d", (long long)at, ext[3], ext[7], ext[23]);
    int back[100] = {0};
    MPI_Count from = 0;
    MPI_Unpack_external_c("external32", ext, at, &from, back, 1, t);
    CHECK(from == 24 && back[4] == 4 && back[52] == 52 && back[5] == 0, "unpack_external_c");
  }
  MPI_Type_free(&t);

  const MPI_Count hdisp[3] = {16, 80, 200};
  MPI_Type_create_hindexed_c(3, bl, hdisp, MPI_INT, &t); /* 4 20 21 50 51 52 */
  MPI_Type_commit(&t);
  expect_large(t, MPI_COMBINER_HINDEXED, 0, 0, 7, 1, (MPI_Count[]){3, 1, 2, 3, 16, 80, 200},
               "hindexed_c");
  pos = 0;
  MPI_Pack_c(src, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD);
  for (int k = 0; k < 6; ++k) CHECK(packed[k] == idx[k], "hindexed_c element %d: %d", k, packed[k]);
  MPI_Type_free(&t);

  MPI_Type_create_indexed_block_c(3, 2, disp, MPI_INT, &t); /* 4 5 20 21 50 51 */
  MPI_Type_commit(&t);
  expect_large(t, MPI_COMBINER_INDEXED_BLOCK, 0, 0, 5, 1, (MPI_Count[]){3, 2, 4, 20, 50},
               "indexed_block_c");
  pos = 0;
  MPI_Pack_c(src, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD);
  CHECK(packed[1] == 5 && packed[3] == 21 && packed[5] == 51, "indexed_block_c");
  MPI_Type_free(&t);

  MPI_Type_create_hindexed_block_c(3, 2, hdisp, MPI_INT, &t);
  MPI_Type_commit(&t);
  expect_large(t, MPI_COMBINER_HINDEXED_BLOCK, 0, 0, 5, 1, (MPI_Count[]){3, 2, 16, 80, 200},
               "hindexed_block_c");
  pos = 0;
  MPI_Pack_c(src, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD);
  CHECK(packed[1] == 5 && packed[3] == 21 && packed[5] == 51, "hindexed_block_c");
  MPI_Type_free(&t);

  {
    const MPI_Count sbl[2] = {1, 2}, sdisp[2] = {8, 40};
    const MPI_Datatype st[2] = {MPI_INT, MPI_INT};
    MPI_Type_create_struct_c(2, sbl, sdisp, st, &t); /* 2 10 11 */
    MPI_Type_commit(&t);
    expect_large(t, MPI_COMBINER_STRUCT, 0, 0, 5, 2, (MPI_Count[]){2, 1, 2, 8, 40}, "struct_c");
    pos = 0;
    MPI_Pack_c(src, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD);
    CHECK(packed[0] == 2 && packed[1] == 10 && packed[2] == 11, "struct_c: %d %d %d", packed[0],
          packed[1], packed[2]);
    MPI_Type_free(&t);
  }

  MPI_Type_create_resized_c(MPI_INT, -4, 12, &t);
  MPI_Type_commit(&t);
  expect_large(t, MPI_COMBINER_RESIZED, 0, 0, 2, 1, (MPI_Count[]){-4, 12}, "resized_c");
  {
    MPI_Count lb, extent;
    MPI_Type_get_extent_c(t, &lb, &extent);
    CHECK(lb == -4 && extent == 12, "resized_c extent %lld %lld", (long long)lb, (long long)extent);
  }
  MPI_Type_free(&t);

  {
    /* A 4x5 C array of ints, the 2x3 block at (1, 2): 7 8 9 12 13 14. */
    const MPI_Count sizes[2] = {4, 5}, sub[2] = {2, 3}, start[2] = {1, 2};
    MPI_Type_create_subarray_c(2, sizes, sub, start, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_commit(&t);
    expect_large(t, MPI_COMBINER_SUBARRAY, 2, 0, 6, 1, (MPI_Count[]){4, 5, 2, 3, 1, 2},
                 "subarray_c");
    pos = 0;
    MPI_Pack_c(src, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD);
    const int sa[6] = {7, 8, 9, 12, 13, 14};
    for (int k = 0; k < 6; ++k) CHECK(packed[k] == sa[k], "subarray_c %d: %d", k, packed[k]);
    MPI_Type_free(&t);
  }
  {
    /* 8 elements in blocks over 2 processes, as rank 1 of 2: elements 4..7. */
    const MPI_Count g[1] = {8};
    const int dist[1] = {MPI_DISTRIBUTE_BLOCK}, darg[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {2};
    MPI_Type_create_darray_c(2, 1, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_commit(&t);
    expect_large(t, MPI_COMBINER_DARRAY, 7, 0, 1, 1, (MPI_Count[]){8}, "darray_c");
    MPI_Count s = 0, lb, extent;
    MPI_Type_size_c(t, &s);
    MPI_Type_get_extent_c(t, &lb, &extent);
    CHECK(s == 16 && extent == 32, "darray_c size %lld extent %lld", (long long)s,
          (long long)extent);
    pos = 0;
    MPI_Pack_c(src, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD);
    CHECK(packed[0] == 4 && packed[3] == 7, "darray_c: %d %d", packed[0], packed[3]);
    MPI_Type_free(&t);
  }
  /* An int-constructed type has no large counts in its _c envelope. */
  MPI_Type_vector(2, 1, 3, MPI_INT, &t);
  {
    MPI_Count i, a, c, d;
    int comb;
    MPI_Type_get_envelope_c(t, &i, &a, &c, &d, &comb);
    CHECK(comb == MPI_COMBINER_VECTOR && i == 3 && a == 0 && c == 0 && d == 1,
          "int vector envelope_c %lld %lld %lld %lld", (long long)i, (long long)a, (long long)c,
          (long long)d);
  }
  MPI_Type_free(&t);
}

static void one_sided(void) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  enum { N = 64 };
  MPI_Win win;
  int* mem;
  MPI_Win_allocate_c(N * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                     &win);
  for (int i = 0; i < N; ++i) mem[i] = -1;
  int out[N], got[N];
  for (int i = 0; i < N; ++i) out[i] = rank * 1000 + i;
  MPI_Win_fence(0, win);
  MPI_Put_c(out, 16, MPI_INT, right, 0, 16, MPI_INT, win);
  MPI_Win_fence(0, win);
  for (int i = 0; i < 16; ++i) CHECK(mem[i] == left * 1000 + i, "put_c %d: %d", i, mem[i]);
  MPI_Get_c(got, 16, MPI_INT, right, 0, 16, MPI_INT, win);
  MPI_Win_fence(0, win);
  for (int i = 0; i < 16; ++i) CHECK(got[i] == rank * 1000 + i, "get_c %d: %d", i, got[i]);
  /* Every rank adds 1 to slot 32..35 of rank 0; then fetches them back. */
  const int ones[4] = {1, 1, 1, 1};
  for (int i = 32; i < 36; ++i) mem[i] = 0;
  MPI_Win_fence(0, win);
  MPI_Accumulate_c(ones, 4, MPI_INT, 0, 32, 4, MPI_INT, MPI_SUM, win);
  MPI_Win_fence(0, win);
  if (rank == 0)
    for (int i = 32; i < 36; ++i) CHECK(mem[i] == size, "accumulate_c %d: %d", i, mem[i]);
  MPI_Barrier(MPI_COMM_WORLD); /* rank 0 has read its slots: the next epoch may change them */
  MPI_Win_lock_all(0, win);
  int old[4];
  MPI_Get_accumulate_c(ones, 4, MPI_INT, old, 4, MPI_INT, 0, 32, 4, MPI_INT, MPI_SUM, win);
  MPI_Win_flush(0, win);
  /* Between the fence's value and everything the other ranks add in this epoch. */
  CHECK(old[0] >= size && old[0] < 3 * size, "get_accumulate_c: %d", old[0]);
  MPI_Request r[4];
  int got2[4] = {0}, old2[4] = {0};
  MPI_Rput_c(out, 4, MPI_INT, right, 40, 4, MPI_INT, win, &r[0]);
  MPI_Rget_c(got2, 4, MPI_INT, rank, 0, 4, MPI_INT, win, &r[1]);
  MPI_Raccumulate_c(ones, 4, MPI_INT, 0, 32, 4, MPI_INT, MPI_SUM, win, &r[2]);
  MPI_Rget_accumulate_c(NULL, 0, MPI_INT, old2, 4, MPI_INT, 0, 32, 4, MPI_INT, MPI_NO_OP, win,
                        &r[3]);
  MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
  MPI_Win_flush_all(win);
  CHECK(got2[3] == left * 1000 + 3, "rget_c: %d", got2[3]);
  CHECK(old2[0] >= size, "rget_accumulate_c: %d", old2[0]);
  MPI_Barrier(MPI_COMM_WORLD); /* every operation is complete at its target */
  MPI_Win_sync(win);
  for (int i = 40; i < 44; ++i) CHECK(mem[i] == left * 1000 + i - 40, "rput_c %d: %d", i, mem[i]);
  if (rank == 0)
    for (int i = 32; i < 36; ++i) CHECK(mem[i] == 3 * size, "raccumulate_c %d: %d", i, mem[i]);
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);

  /* Win_create_c over the program's memory, displacement unit 8: slot k is bytes 8k. */
  long long area[8] = {0};
  MPI_Win_create_c(area, sizeof area, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  long long v = 7000 + rank;
  MPI_Win_fence(0, win);
  MPI_Put_c(&v, 1, MPI_LONG_LONG, right, 5, 1, MPI_LONG_LONG, win);
  MPI_Win_fence(0, win);
  CHECK(area[5] == 7000 + left, "win_create_c put: %lld", area[5]);
  MPI_Win_free(&win);

  /* Win_allocate_shared_c among the processes of this host, and Win_shared_query_c. */
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int nrank, nsize;
  MPI_Comm_rank(node, &nrank);
  MPI_Comm_size(node, &nsize);
  int* base;
  MPI_Win_allocate_shared_c(2 * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, node, &base,
                            &win);
  MPI_Win_lock_all(0, win);
  base[0] = nrank, base[1] = 10 * nrank;
  MPI_Win_sync(win);
  MPI_Barrier(node);
  MPI_Win_sync(win);
  for (int q = 0; q < nsize; ++q) {
    MPI_Aint qsize = 0, qunit = 0;
    int* qbase = NULL;
    MPI_Win_shared_query_c(win, q, &qsize, &qunit, &qbase);
    CHECK(qsize == 2 * (MPI_Aint)sizeof(int) && qunit == sizeof(int), "shared_query_c %d: %ld %ld",
          q, (long)qsize, (long)qunit);
    CHECK(qbase && qbase[0] == q && qbase[1] == 10 * q, "shared_query_c base of %d", q);
  }
  MPI_Win_unlock_all(win);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  p2p();
  collectives();
  neighbors();
  datatypes();
  one_sided();
  MPI_Finalize();
  return check_exit("large_count");
}
