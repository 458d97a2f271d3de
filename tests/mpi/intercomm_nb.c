/* Intercommunicators, the rest: every nonblocking collective (started together, completed in
 * a different order on each group, one with a non-contiguous datatype), persistent
 * collectives, Comm_idup and Comm_idup_with_info (MPI_INFO_NULL too), Comm_split (with
 * MPI_UNDEFINED and a color the other group lacks) and Comm_create (a subgroup, and an empty
 * group giving MPI_COMM_NULL everywhere) on an intercommunicator.
 * Groups of uneven sizes: group 0 is the first ceil(size/3) world ranks, group 1 the rest
 * (at 1 rank, group 1 would be empty: the test needs 2). */
/* SLUICE_TEST_RANKS: 2 3 5 8 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int rank, size;
static int color, nlocal, nremote, lrank;
static int local[64], remote[64]; /* world ranks of the groups, in group rank order */

/* Root arguments for a rooted collective whose root is rank `root_rank` of group `g`. */
static int root_arg(int g, int root_rank) {
  if (color == g) return lrank == root_rank ? MPI_ROOT : MPI_PROC_NULL;
  return root_rank;
}

static int sum_of(const int* w, int n) {
  int s = 0;
  for (int i = 0; i < n; ++i) s += w[i];
  return s;
}

enum { kOps = 16 };

/* Starts every nonblocking collective on `inter`, completes them in forward order on group 0
 * and in reverse on group 1, then checks the results. */
static void nonblocking(MPI_Comm inter, const char* what) {
  MPI_Request req[kOps];
  int n = 0;
  const int R = nremote, L = nlocal;

  MPI_Ibarrier(inter, &req[n++]);

  /* Ibcast from group 0's rank 0, a vector type (every other int). (Rank 0: Debian's MPICH
   * 4.0.2 loses an intercommunicator Ibcast whose root is another rank; intercomm.c covers
   * such roots with the blocking Bcast, and Iscatter below has one.) */
  MPI_Datatype vec;
  MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int bc[6] = {-1, -1, -1, -1, -1, -1};
  const int bc_root = root_arg(0, 0);
  if (bc_root == MPI_ROOT) bc[0] = 5, bc[2] = 6, bc[4] = 7;
  MPI_Ibcast(bc, 1, vec, bc_root, inter, &req[n++]);
  MPI_Type_free(&vec); /* pending operations keep it */

  /* Ireduce to group 1's rank 0 */
  int red_in = rank, red_out = -1;
  const int red_root = root_arg(1, 0);
  MPI_Ireduce(&red_in, &red_out, 1, MPI_INT, MPI_SUM, red_root, inter, &req[n++]);

  /* Iallreduce: max and sum of (world rank, 1) */
  int ar_in[2] = {rank, 1}, ar_out[2] = {-1, -1};
  MPI_Iallreduce(ar_in, ar_out, 2, MPI_INT, MPI_SUM, inter, &req[n++]);

  /* Igather / Igatherv to group 0's rank 0 */
  const int g_root = root_arg(0, 0);
  int* gat = malloc(sizeof(int) * 3 * 64);
  int* gatv = malloc(sizeof(int) * 3 * 64);
  for (int i = 0; i < 3 * 64; ++i) gat[i] = gatv[i] = -1;
  int two[2] = {rank, -rank};
  MPI_Igather(two, 2, MPI_INT, gat, 2, MPI_INT, g_root, inter, &req[n++]);
  int cnt[64], dsp[64];
  for (int j = 0; j < 64; ++j) {
    cnt[j] = j % 2 + 1; /* 1 or 2 ints from remote rank j */
    dsp[j] = 3 * j;
  }
  MPI_Igatherv(two, lrank % 2 + 1, MPI_INT, gatv, cnt, dsp, MPI_INT, g_root, inter, &req[n++]);

  /* Iscatter / Iscatterv from group 1's last rank */
  const int s_root = root_arg(1, (color == 1 ? L : R) - 1);
  int sc_src[3 * 64], sc_got = -1, scv_got[2] = {-1, -1};
  for (int j = 0; j < 3 * 64; ++j) sc_src[j] = 100 + j;
  MPI_Iscatter(sc_src, 1, MPI_INT, &sc_got, 1, MPI_INT, s_root, inter, &req[n++]);
  MPI_Iscatterv(sc_src, cnt, dsp, MPI_INT, scv_got, lrank % 2 + 1, MPI_INT, s_root, inter,
                &req[n++]);

  /* Iallgather / Iallgatherv: the other group's world ranks */
  int ag[64], agv[3 * 64];
  for (int j = 0; j < 3 * 64; ++j) agv[j] = -1;
  MPI_Iallgather(&rank, 1, MPI_INT, ag, 1, MPI_INT, inter, &req[n++]);
  MPI_Iallgatherv(two, lrank % 2 + 1, MPI_INT, agv, cnt, dsp, MPI_INT, inter, &req[n++]);

  /* Ialltoall(v/w): block j to remote rank j is 1000 * rank + j */
  int a2a_out[64], a2a_in[64], a2av_in[64], a2aw_in[64];
  int ones[64], idx[64], bdsp[64];
  MPI_Datatype types[64];
  for (int j = 0; j < R; ++j) {
    a2a_out[j] = 1000 * rank + j;
    a2a_in[j] = a2av_in[j] = a2aw_in[j] = -1;
    ones[j] = 1;
    idx[j] = j;
    bdsp[j] = j * (int)sizeof(int);
    types[j] = MPI_INT;
  }
  MPI_Ialltoall(a2a_out, 1, MPI_INT, a2a_in, 1, MPI_INT, inter, &req[n++]);
  MPI_Ialltoallv(a2a_out, ones, idx, MPI_INT, a2av_in, ones, idx, MPI_INT, inter, &req[n++]);
  MPI_Ialltoallw(a2a_out, ones, bdsp, types, a2aw_in, ones, bdsp, types, inter, &req[n++]);

  /* Ireduce_scatter_block / Ireduce_scatter: vectors of L * R elements (the same total in
   * both groups), element k = 10 * rank + k; block variant: R elements each; the other:
   * my group's counts, rank i gets i + 1 elements but the last, which gets the rest. */
  const int total = L * R;
  int* vecin = malloc(sizeof(int) * total);
  int* rsb = malloc(sizeof(int) * total);
  int* rs = malloc(sizeof(int) * total);
  int rcounts[64];
  for (int k = 0; k < total; ++k) vecin[k] = 10 * rank + k, rsb[k] = rs[k] = -1;
  int left = total, first = 0;
  for (int i = 0; i < L; ++i) {
    rcounts[i] = i == L - 1 ? left : (i + 1 < left ? i + 1 : left);
    if (i < lrank) first += rcounts[i];
    left -= rcounts[i];
  }
  MPI_Ireduce_scatter_block(vecin, rsb, R, MPI_INT, MPI_SUM, inter, &req[n++]);
  MPI_Ireduce_scatter(vecin, rs, rcounts, MPI_INT, MPI_SUM, inter, &req[n++]);

  if (color == 0) {
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
  } else {
    for (int i = n - 1; i >= 0; --i) MPI_Wait(&req[i], MPI_STATUS_IGNORE);
  }

  /* checks */
  if (color == 1) {
    CHECK(bc[0] == 5 && bc[2] == 6 && bc[4] == 7 && bc[1] == -1 && bc[3] == -1,
          "%s: ibcast %d %d %d %d %d", what, bc[0], bc[1], bc[2], bc[3], bc[4]);
  } else if (bc_root == MPI_PROC_NULL) {
    CHECK(bc[0] == -1, "%s: ibcast touched a non-root of the root group", what);
  }
  if (red_root == MPI_ROOT)
    CHECK(red_out == sum_of(remote, R), "%s: ireduce %d, want %d", what, red_out,
          sum_of(remote, R));
  else
    CHECK(red_out == -1, "%s: ireduce wrote at a non-root %d", what, red_out);
  CHECK(ar_out[0] == sum_of(remote, R) && ar_out[1] == R, "%s: iallreduce %d %d, want %d %d", what,
        ar_out[0], ar_out[1], sum_of(remote, R), R);
  if (g_root == MPI_ROOT) {
    for (int j = 0; j < R; ++j) {
      CHECK(gat[2 * j] == remote[j] && gat[2 * j + 1] == -remote[j], "%s: igather [%d] %d %d", what,
            j, gat[2 * j], gat[2 * j + 1]);
      CHECK(gatv[3 * j] == remote[j] && gatv[3 * j + 1] == (j % 2 ? -remote[j] : -1) &&
                gatv[3 * j + 2] == -1,
            "%s: igatherv [%d] %d %d %d", what, j, gatv[3 * j], gatv[3 * j + 1], gatv[3 * j + 2]);
    }
  }
  if (color == 0) {
    CHECK(sc_got == 100 + lrank, "%s: iscatter %d, want %d", what, sc_got, 100 + lrank);
    CHECK(scv_got[0] == 100 + 3 * lrank && scv_got[1] == (lrank % 2 ? 100 + 3 * lrank + 1 : -1),
          "%s: iscatterv %d %d", what, scv_got[0], scv_got[1]);
  }
  for (int j = 0; j < R; ++j) {
    CHECK(ag[j] == remote[j], "%s: iallgather [%d] %d, want %d", what, j, ag[j], remote[j]);
    CHECK(agv[3 * j] == remote[j] && agv[3 * j + 1] == (j % 2 ? -remote[j] : -1),
          "%s: iallgatherv [%d] %d %d", what, j, agv[3 * j], agv[3 * j + 1]);
    const int want = 1000 * remote[j] + lrank;
    CHECK(a2a_in[j] == want && a2av_in[j] == want && a2aw_in[j] == want,
          "%s: ialltoall(v/w) [%d] %d %d %d, want %d", what, j, a2a_in[j], a2av_in[j], a2aw_in[j],
          want);
  }
  const int rsum = sum_of(remote, R);
  for (int m = 0; m < R; ++m) {
    const int k = lrank * R + m;
    CHECK(rsb[m] == 10 * rsum + R * k, "%s: ireduce_scatter_block [%d] %d, want %d", what, m,
          rsb[m], 10 * rsum + R * k);
  }
  for (int m = 0; m < rcounts[lrank]; ++m) {
    const int k = first + m;
    CHECK(rs[m] == 10 * rsum + R * k, "%s: ireduce_scatter [%d] %d, want %d", what, m, rs[m],
          10 * rsum + R * k);
  }
  CHECK(rcounts[lrank] >= total || rs[rcounts[lrank]] == -1, "%s: ireduce_scatter wrote past",
        what);
  free(gat);
  free(gatv);
  free(vecin);
  free(rsb);
  free(rs);
}

/* Persistent collectives: Allreduce_init and Bcast_init (MPI_ROOT in group 1), started
 * three times with new values. */
static void persistent(MPI_Comm inter) {
  int in = 0, out = -1, b = -1;
  MPI_Request r[2];
  const int root = root_arg(1, 0);
  MPI_Allreduce_init(&in, &out, 1, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &r[0]);
  MPI_Bcast_init(&b, 1, MPI_INT, root, inter, MPI_INFO_NULL, &r[1]);
  for (int it = 0; it < 3; ++it) {
    in = rank * (it + 1);
    b = root == MPI_ROOT ? 40 + it : -1;
    MPI_Startall(2, r);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    CHECK(out == sum_of(remote, nremote) * (it + 1), "persistent allreduce %d: %d", it, out);
    if (color == 0) CHECK(b == 40 + it, "persistent bcast %d: %d", it, b);
  }
  MPI_Request_free(&r[0]);
  MPI_Request_free(&r[1]);
}

/* An intercommunicator's shape and a collective across it: `lw`/`rw` are the expected
 * local and remote groups (world ranks). */
static void check_inter(MPI_Comm c, const int* lw, int nl, const int* rw, int nr,
                        const char* what) {
  int flag = 0, n = -1, r = -1, rn = -1;
  MPI_Comm_test_inter(c, &flag);
  MPI_Comm_size(c, &n);
  MPI_Comm_rank(c, &r);
  MPI_Comm_remote_size(c, &rn);
  CHECK(flag && n == nl && rn == nr && r >= 0 && r < nl && lw[r] == rank,
        "%s: inter %d size %d rank %d remote %d, want %d %d", what, flag, n, r, rn, nl, nr);
  /* the remote group in order, through Allgather across */
  int* got = malloc(sizeof(int) * (nr + 1));
  MPI_Allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, c);
  for (int j = 0; j < nr; ++j)
    CHECK(got[j] == rw[j], "%s: remote rank %d is world %d, want %d", what, j, got[j], rw[j]);
  /* and point-to-point: local rank 0 of each side sends to remote rank 0 */
  if (r == 0) {
    int v = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, 0, 5, &v, 1, MPI_INT, 0, 5, c, MPI_STATUS_IGNORE);
    CHECK(v == rw[0], "%s: p2p from remote 0: %d, want %d", what, v, rw[0]);
  }
  free(got);
}

static void constructors(MPI_Comm inter) {
  /* two idups at once, one with MPI_INFO_NULL, then a collective on each */
  MPI_Comm d1, d2;
  MPI_Request r[2];
  MPI_Comm_idup(inter, &d1, &r[0]);
  MPI_Comm_idup_with_info(inter, MPI_INFO_NULL, &d2, &r[1]);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  check_inter(d1, local, nlocal, remote, nremote, "idup");
  check_inter(d2, local, nlocal, remote, nremote, "idup_with_info");
  int s = -1;
  MPI_Request ar;
  MPI_Iallreduce(&rank, &s, 1, MPI_INT, MPI_SUM, d2, &ar);
  MPI_Wait(&ar, MPI_STATUS_IGNORE);
  CHECK(s == sum_of(remote, nremote), "idup iallreduce %d", s);
  MPI_Comm_free(&d1);
  MPI_Comm_free(&d2);

  /* split: color = group rank % 3 (rank 2 of a group passes MPI_UNDEFINED), key = -rank:
   * reversed order. A color only one group has gives MPI_COMM_NULL there. */
  const int c = lrank % 3 == 2 ? MPI_UNDEFINED : lrank % 3;
  MPI_Comm sp;
  MPI_Comm_split(inter, c, -lrank, &sp);
  if (c == MPI_UNDEFINED) {
    CHECK(sp == MPI_COMM_NULL, "split: MPI_UNDEFINED got a communicator");
  } else {
    int lw[64], rw[64], nl = 0, nr = 0;
    for (int i = nlocal - 1; i >= 0; --i)
      if (i % 3 == c) lw[nl++] = local[i];
    for (int i = nremote - 1; i >= 0; --i)
      if (i % 3 == c) rw[nr++] = remote[i];
    if (nr == 0) {
      CHECK(sp == MPI_COMM_NULL, "split: color %d with an empty remote side", c);
    } else {
      CHECK(sp != MPI_COMM_NULL, "split: color %d gave MPI_COMM_NULL", c);
      if (sp != MPI_COMM_NULL) check_inter(sp, lw, nl, rw, nr, "split");
    }
  }
  if (sp != MPI_COMM_NULL) MPI_Comm_free(&sp);

  /* create: group 0 passes its ranks but the last (all of them at one rank), group 1 its
   * odd ranks plus rank 0 in reverse order */
  MPI_Group lg, sub;
  MPI_Comm_group(inter, &lg);
  int ranks[64], nsub = 0;
  if (color == 0) {
    for (int i = 0; i < (nlocal > 1 ? nlocal - 1 : 1); ++i) ranks[nsub++] = i;
  } else {
    for (int i = nlocal - 1; i >= 0; --i)
      if (i % 2 == 1 || i == 0) ranks[nsub++] = i;
  }
  MPI_Group_incl(lg, nsub, ranks, &sub);
  MPI_Comm cr;
  MPI_Comm_create(inter, sub, &cr);
  int lw[64], rw[64], nr = 0;
  for (int i = 0; i < nsub; ++i) lw[i] = local[ranks[i]];
  if (color == 1) {
    for (int i = 0; i < (nremote > 1 ? nremote - 1 : 1); ++i) rw[nr++] = remote[i];
  } else {
    for (int i = nremote - 1; i >= 0; --i)
      if (i % 2 == 1 || i == 0) rw[nr++] = remote[i];
  }
  int in_sub = 0;
  for (int i = 0; i < nsub; ++i) in_sub |= ranks[i] == lrank;
  if (in_sub) {
    CHECK(cr != MPI_COMM_NULL, "create: member got MPI_COMM_NULL");
    if (cr != MPI_COMM_NULL) check_inter(cr, lw, nsub, rw, nr, "create");
  } else {
    CHECK(cr == MPI_COMM_NULL, "create: non-member got a communicator");
  }
  if (cr != MPI_COMM_NULL) MPI_Comm_free(&cr);
  MPI_Group_free(&sub);

  /* create with an empty group on one side: MPI_COMM_NULL everywhere */
  MPI_Comm none;
  MPI_Comm_create(inter, color == 0 ? MPI_GROUP_EMPTY : lg, &none);
  CHECK(none == MPI_COMM_NULL, "create with an empty side gave a communicator");
  if (none != MPI_COMM_NULL) MPI_Comm_free(&none);
  MPI_Group_free(&lg);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2 || size > 64) {
    fprintf(stderr, "intercomm_nb needs 2 to 64 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int n0 = (size + 2) / 3;
  color = rank < n0 ? 0 : 1;
  nlocal = nremote = 0;
  for (int w = 0; w < size; ++w) {
    if ((w < n0 ? 0 : 1) == color)
      local[nlocal++] = w;
    else
      remote[nremote++] = w;
  }
  lrank = color == 0 ? rank : rank - n0;

  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color == 0 ? n0 : 0, 12, &inter);

  nonblocking(inter, "inter");
  persistent(inter);
  constructors(inter);
  /* the collectives still pair up after all of the above */
  nonblocking(inter, "after");

  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
  MPI_Finalize();
  return check_exit("intercomm_nb");
}
