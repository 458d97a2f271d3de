/* Intercommunicators: Intercomm_create (over MPI_COMM_WORLD as the peer communicator),
 * Comm_test_inter, Comm_size/rank/group (local), Comm_remote_size/group, point-to-point
 * between the groups, Barrier, Bcast (MPI_ROOT / MPI_PROC_NULL), Allreduce, Allgather and
 * Alltoall, and the rooted and v/w ones (Reduce, Gather(v), Scatter(v), Allgatherv,
 * Alltoallv/w, Reduce_scatter(_block)) across the groups, Comm_dup of an intercommunicator,
 * Intercomm_merge (high and tie), and Comm_create_group (called by the group's members only).
 * Groups: even and odd world ranks. */
/* SLUICE_TEST_RANKS: 2 3 4 8 */
#include <stdlib.h>

#include "check.h"

static int rank, size;

/* World ranks of group `color` (0: even, 1: odd), in order. */
static int group_members(int color, int* out) {
  int n = 0;
  for (int r = color; r < size; r += 2) out[n++] = r;
  return n;
}

static void collectives(MPI_Comm inter, int color, const int* remote, int nremote, int nlocal,
                        int lrank, const char* what) {
  MPI_Barrier(inter);

  /* Bcast from group 0's rank 0, then from group 1's last rank */
  for (int from = 0; from < 2; ++from) {
    const int root_local = from == 0 ? 0 : nlocal - 1; /* meaningful in the root group */
    const int root_remote = from == 0 ? 0 : nremote - 1;
    int buf[3] = {-1, -1, -1};
    int root;
    if (color == from) {
      root = lrank == root_local ? MPI_ROOT : MPI_PROC_NULL;
      if (root == MPI_ROOT) buf[0] = 11, buf[1] = 22, buf[2] = 33 + from;
    } else {
      root = root_remote;
    }
    MPI_Bcast(buf, 3, MPI_INT, root, inter);
    if (color != from)
      CHECK(buf[0] == 11 && buf[1] == 22 && buf[2] == 33 + from,
            "%s: bcast from group %d: %d %d %d", what, from, buf[0], buf[1], buf[2]);
    else if (root == MPI_PROC_NULL)
      CHECK(buf[0] == -1, "%s: bcast touched a non-root of the root group", what);
  }

  /* Allreduce: each group gets the other group's sum of world ranks (and max) */
  int in[2] = {rank, rank}, out[2] = {-1, -1};
  MPI_Allreduce(in, out, 1, MPI_INT, MPI_SUM, inter);
  MPI_Allreduce(in + 1, out + 1, 1, MPI_INT, MPI_MAX, inter);
  int want_sum = 0, want_max = -1;
  for (int j = 0; j < nremote; ++j) {
    want_sum += remote[j];
    if (remote[j] > want_max) want_max = remote[j];
  }
  CHECK(out[0] == want_sum && out[1] == want_max, "%s: allreduce %d %d, want %d %d", what, out[0],
        out[1], want_sum, want_max);

  /* Allgather: the other group's world ranks, in its rank order (two ints each) */
  int mine[2] = {rank, 100 + rank};
  int* all = malloc(sizeof(int) * 2 * nremote);
  MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, inter);
  for (int j = 0; j < nremote; ++j)
    CHECK(all[2 * j] == remote[j] && all[2 * j + 1] == 100 + remote[j],
          "%s: allgather block %d = %d %d", what, j, all[2 * j], all[2 * j + 1]);

  /* Alltoall: block j to remote rank j holds 1000*rank + j */
  int* sb = malloc(sizeof(int) * nremote);
  int* rb = malloc(sizeof(int) * nremote);
  for (int j = 0; j < nremote; ++j) {
    sb[j] = 1000 * rank + j;
    rb[j] = -1;
  }
  MPI_Alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, inter);
  for (int j = 0; j < nremote; ++j)
    CHECK(rb[j] == 1000 * remote[j] + lrank, "%s: alltoall block %d = %d, want %d", what, j, rb[j],
          1000 * remote[j] + lrank);
  free(all);
  free(sb);
  free(rb);
}

/* The root-semantics collectives: for each root group g (0, then 1) the root is the last
 * rank of g, the rest of g passes MPI_PROC_NULL, the other group the root's rank. */
static void rooted(MPI_Comm inter, int color, const int* remote, int nremote, const int* local,
                   int nlocal, int lrank, const char* what) {
  for (int g = 0; g < 2; ++g) {
    const int in_root_group = color == g;
    const int root_rank = (in_root_group ? nlocal : nremote) - 1;
    const int is_root = in_root_group && lrank == root_rank;
    const int root = in_root_group ? (is_root ? MPI_ROOT : MPI_PROC_NULL) : root_rank;
    /* the contributing group's world ranks, seen from the root */
    const int* senders = remote;
    const int nsend = nremote;

    int red = -1, mine = rank;
    MPI_Reduce(&mine, &red, 1, MPI_INT, MPI_SUM, root, inter);
    if (is_root) {
      int want = 0;
      for (int j = 0; j < nsend; ++j) want += senders[j];
      CHECK(red == want, "%s: reduce to group %d = %d, want %d", what, g, red, want);
    }

    int* buf = malloc(sizeof(int) * 3 * (nsend + nlocal + 1));
    for (int i = 0; i < 3 * (nsend + nlocal + 1); ++i) buf[i] = -1;
    MPI_Gather(&mine, 1, MPI_INT, buf, 1, MPI_INT, root, inter);
    if (is_root)
      for (int j = 0; j < nsend; ++j)
        CHECK(buf[j] == senders[j], "%s: gather [%d] = %d", what, j, buf[j]);

    /* Gatherv: two ints from each, at displacement 3j */
    int two[2] = {rank, -rank};
    int* counts = malloc(sizeof(int) * (nsend + 1));
    int* displs = malloc(sizeof(int) * (nsend + 1));
    for (int j = 0; j < nsend; ++j) {
      counts[j] = 2;
      displs[j] = 3 * j;
    }
    for (int i = 0; i < 3 * (nsend + nlocal + 1); ++i) buf[i] = -1;
    MPI_Gatherv(two, 2, MPI_INT, buf, counts, displs, MPI_INT, root, inter);
    if (is_root)
      for (int j = 0; j < nsend; ++j)
        CHECK(buf[3 * j] == senders[j] && buf[3 * j + 1] == -senders[j] && buf[3 * j + 2] == -1,
              "%s: gatherv block %d = %d %d %d", what, j, buf[3 * j], buf[3 * j + 1],
              buf[3 * j + 2]);

    /* Scatter: remote rank j gets 10*j + 7; Scatterv: j gets (j, j+1) from displacement 3j */
    for (int j = 0; j < nsend; ++j) buf[j] = 10 * j + 7;
    int got = -1;
    MPI_Scatter(buf, 1, MPI_INT, &got, 1, MPI_INT, root, inter);
    if (!in_root_group)
      CHECK(got == 10 * lrank + 7, "%s: scatter got %d, want %d", what, got, 10 * lrank + 7);
    for (int j = 0; j < nsend; ++j) {
      buf[3 * j] = j;
      buf[3 * j + 1] = j + 1;
    }
    int gotv[2] = {-1, -1};
    MPI_Scatterv(buf, counts, displs, MPI_INT, gotv, 2, MPI_INT, root, inter);
    if (!in_root_group)
      CHECK(gotv[0] == lrank && gotv[1] == lrank + 1, "%s: scatterv got %d %d", what, gotv[0],
            gotv[1]);
    free(counts);
    free(displs);
    free(buf);
  }
  (void)local;

  /* Allgatherv: one int from each remote process, at displacement 2j */
  int* rc = malloc(sizeof(int) * nremote);
  int* rd = malloc(sizeof(int) * nremote);
  int* sc = malloc(sizeof(int) * nremote);
  int* sd = malloc(sizeof(int) * nremote);
  int* out = malloc(sizeof(int) * 2 * nremote);
  int* in = malloc(sizeof(int) * 2 * nremote);
  for (int j = 0; j < nremote; ++j) {
    rc[j] = sc[j] = 1;
    rd[j] = sd[j] = 2 * j;
    out[2 * j] = 1000 * rank + j;
    in[2 * j] = in[2 * j + 1] = -1;
  }
  MPI_Allgatherv(&rank, 1, MPI_INT, in, rc, rd, MPI_INT, inter);
  for (int j = 0; j < nremote; ++j)
    CHECK(in[2 * j] == remote[j] && in[2 * j + 1] == -1, "%s: allgatherv [%d] = %d", what, j,
          in[2 * j]);
  for (int j = 0; j < 2 * nremote; ++j) in[j] = -1;
  MPI_Alltoallv(out, sc, sd, MPI_INT, in, rc, rd, MPI_INT, inter);
  for (int j = 0; j < nremote; ++j)
    CHECK(in[2 * j] == 1000 * remote[j] + lrank, "%s: alltoallv [%d] = %d", what, j, in[2 * j]);
  /* Alltoallw: byte displacements, one type per block */
  MPI_Datatype* types = malloc(sizeof(MPI_Datatype) * nremote);
  for (int j = 0; j < nremote; ++j) {
    sd[j] = rd[j] = 2 * j * (int)sizeof(int);
    types[j] = MPI_INT;
    in[2 * j] = -1;
  }
  MPI_Alltoallw(out, sc, sd, types, in, rc, rd, types, inter);
  for (int j = 0; j < nremote; ++j)
    CHECK(in[2 * j] == 1000 * remote[j] + lrank, "%s: alltoallw [%d] = %d", what, j, in[2 * j]);

  /* Reduce_scatter_block: each group's vectors have nlocal * recvcount elements, the same
   * count in both groups, so recvcount = nremote here; element k is 100*rank + k. I receive
   * block lrank of the other group's sum. */
  const int total = nlocal * nremote;
  int* vec = malloc(sizeof(int) * total);
  int* blk = malloc(sizeof(int) * nremote);
  for (int k = 0; k < total; ++k) vec[k] = 100 * rank + k;
  MPI_Reduce_scatter_block(vec, blk, nremote, MPI_INT, MPI_SUM, inter);
  int rsum = 0;
  for (int j = 0; j < nremote; ++j) rsum += remote[j];
  for (int m = 0; m < nremote; ++m) {
    const int k = lrank * nremote + m;
    CHECK(blk[m] == 100 * rsum + nremote * k, "%s: reduce_scatter_block [%d] = %d, want %d", what,
          m, blk[m], 100 * rsum + nremote * k);
  }
  /* Reduce_scatter: the same vectors, split unevenly by my group's recvcounts: one element
   * to each rank but the last, which gets the rest */
  int* counts = malloc(sizeof(int) * nlocal);
  for (int i = 0; i < nlocal; ++i) counts[i] = i == nlocal - 1 ? total - (nlocal - 1) : 1;
  int* part = malloc(sizeof(int) * total);
  for (int k = 0; k < total; ++k) part[k] = -1;
  MPI_Reduce_scatter(vec, part, counts, MPI_INT, MPI_SUM, inter);
  const int first = lrank; /* offset of my block: one element per lower rank */
  for (int m = 0; m < counts[lrank]; ++m) {
    const int k = first + m;
    CHECK(part[m] == 100 * rsum + nremote * k, "%s: reduce_scatter [%d] = %d, want %d", what, m,
          part[m], 100 * rsum + nremote * k);
  }
  free(counts);
  free(part);
  free(vec);
  free(blk);
  free(rc);
  free(rd);
  free(sc);
  free(sd);
  free(out);
  free(in);
  free(types);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int color = rank % 2;
  int* local = malloc(sizeof(int) * size);
  int* remote = malloc(sizeof(int) * size);
  const int nlocal = group_members(color, local);
  const int nremote = group_members(1 - color, remote);
  const int lrank = rank / 2;

  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 77, &inter);

  int flag = -1, n = -1, r = -1;
  MPI_Comm_test_inter(inter, &flag);
  CHECK(flag, "test_inter %d", flag);
  MPI_Comm_test_inter(half, &flag);
  CHECK(!flag, "test_inter(intra) %d", flag);
  MPI_Comm_size(inter, &n);
  MPI_Comm_rank(inter, &r);
  CHECK(n == nlocal && r == lrank, "local size %d rank %d, want %d %d", n, r, nlocal, lrank);
  MPI_Comm_remote_size(inter, &n);
  CHECK(n == nremote, "remote size %d, want %d", n, nremote);

  /* the groups, through world ranks */
  MPI_Group wg, lg, rg;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Comm_group(inter, &lg);
  MPI_Comm_remote_group(inter, &rg);
  int* idx = malloc(sizeof(int) * size);
  int* w = malloc(sizeof(int) * size);
  for (int i = 0; i < size; ++i) idx[i] = i;
  MPI_Group_translate_ranks(rg, nremote, idx, wg, w);
  for (int j = 0; j < nremote; ++j)
    CHECK(w[j] == remote[j], "remote group rank %d is world %d, want %d", j, w[j], remote[j]);
  MPI_Group_translate_ranks(lg, nlocal, idx, wg, w);
  for (int j = 0; j < nlocal; ++j)
    CHECK(w[j] == local[j], "local group rank %d is world %d, want %d", j, w[j], local[j]);
  MPI_Group_free(&wg);
  MPI_Group_free(&lg);
  MPI_Group_free(&rg);

  /* point-to-point: local rank i sends its world rank to remote rank i % nremote; every
   * remote sender that targets me is received by source rank */
  int v = rank;
  MPI_Request sreq;
  MPI_Isend(&v, 1, MPI_INT, lrank % nremote, 9, inter, &sreq);
  /* remote rank j targets my rank j % nlocal */
  for (int j = 0; j < nremote; ++j) {
    if (j % nlocal != lrank) continue;
    int got = -1;
    MPI_Status st;
    MPI_Recv(&got, 1, MPI_INT, j, 9, inter, &st);
    CHECK(got == remote[j] && st.MPI_SOURCE == j, "p2p from remote %d: %d (source %d)", j, got,
          st.MPI_SOURCE);
  }
  MPI_Wait(&sreq, MPI_STATUS_IGNORE);

  collectives(inter, color, remote, nremote, nlocal, lrank, "inter");
  rooted(inter, color, remote, nremote, local, nlocal, lrank, "inter");

  MPI_Comm dup;
  MPI_Comm_dup(inter, &dup);
  MPI_Comm_test_inter(dup, &flag);
  MPI_Comm_remote_size(dup, &n);
  CHECK(flag && n == nremote, "dup: test_inter %d remote size %d", flag, n);
  collectives(dup, color, remote, nremote, nlocal, lrank, "dup");

  /* merge: the group passing high = 0 first */
  for (int tie = 0; tie < 2; ++tie) {
    MPI_Comm merged;
    const int high = tie ? 0 : 1 - color; /* group 1 first unless tied */
    MPI_Intercomm_merge(inter, high, &merged);
    int mr = -1, ms = -1;
    MPI_Comm_size(merged, &ms);
    MPI_Comm_rank(merged, &mr);
    /* without a tie, group 1 (odd) comes first; with one, the group holding world rank 0 */
    const int first_color = tie ? 0 : 1;
    const int nfirst = first_color == 0 ? (size + 1) / 2 : size / 2;
    const int want = color == first_color ? lrank : nfirst + lrank;
    CHECK(ms == size && mr == want, "merge (tie %d): size %d rank %d, want %d", tie, ms, mr, want);
    MPI_Comm_test_inter(merged, &flag);
    CHECK(!flag, "merged is an intercommunicator");
    int sum = -1;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged);
    CHECK(sum == size * (size - 1) / 2, "merged allreduce %d", sum);
    /* a ring on the merged communicator: the left neighbour's merged rank comes back */
    int left = -1, me = mr;
    MPI_Sendrecv(&me, 1, MPI_INT, (mr + 1) % ms, 3, &left, 1, MPI_INT, (mr - 1 + ms) % ms, 3,
                 merged, MPI_STATUS_IGNORE);
    CHECK(left == (mr - 1 + ms) % ms, "merged ring %d", left);
    MPI_Comm_free(&merged);
  }
  MPI_Comm_free(&dup);
  MPI_Comm_free(&inter);

  /* Comm_create_group: each parity makes its own communicator; only members call */
  MPI_Group wgroup, pgroup;
  MPI_Comm_group(MPI_COMM_WORLD, &wgroup);
  MPI_Group_incl(wgroup, nlocal, local, &pgroup);
  MPI_Comm cg;
  MPI_Comm_create_group(MPI_COMM_WORLD, pgroup, 40 + color, &cg);
  MPI_Comm_size(cg, &n);
  MPI_Comm_rank(cg, &r);
  CHECK(n == nlocal && r == lrank, "create_group size %d rank %d", n, r);
  int gsum = -1, wsum = 0;
  for (int j = 0; j < nlocal; ++j) wsum += local[j];
  MPI_Allreduce(&rank, &gsum, 1, MPI_INT, MPI_SUM, cg);
  CHECK(gsum == wsum, "create_group allreduce %d, want %d", gsum, wsum);
  MPI_Comm_free(&cg);
  MPI_Group_free(&pgroup);
  MPI_Group_free(&wgroup);

  MPI_Comm_free(&half);
  free(local);
  free(remote);
  free(idx);
  free(w);
  MPI_Finalize();
  return check_exit("intercomm");
}
