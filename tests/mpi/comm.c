/* Communicators and groups: dup/idup/split/split_type/create/free/compare, names, groups,
 * and traffic isolation between communicators. */
/* SLUICE_TEST_RANKS: 1 2 3 4 8 */
#include <string.h>

#include "check.h"

static int rank, size;

/* Ring exchange on comm; checks each rank hears its left neighbour's world rank. */
static void ring_check(MPI_Comm comm, const char* what) {
  int r, n;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &n);
  int out = rank, in = -1;
  MPI_Status st;
  MPI_Sendrecv(&out, 1, MPI_INT, (r + 1) % n, 3, &in, 1, MPI_INT, (r - 1 + n) % n, 3, comm, &st);
  /* the left neighbour's world rank, through the groups */
  MPI_Group wg, cg;
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  MPI_Comm_group(comm, &cg);
  int lr = (r - 1 + n) % n, lw = -1;
  MPI_Group_translate_ranks(cg, 1, &lr, wg, &lw);
  CHECK(in == lw && st.MPI_SOURCE == lr, "%s: got %d from %d, expected %d from %d", what, in,
        st.MPI_SOURCE, lw, lr);
  MPI_Group_free(&wg);
  MPI_Group_free(&cg);
}

static void dup_and_isolation(void) {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int result = -1;
  MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
  CHECK(result == MPI_CONGRUENT, "compare world/dup %d", result);
  MPI_Comm_compare(dup, dup, &result);
  CHECK(result == MPI_IDENT, "compare dup/dup %d", result);
  int r, n;
  MPI_Comm_rank(dup, &r);
  MPI_Comm_size(dup, &n);
  CHECK(r == rank && n == size, "dup rank %d size %d", r, n);

  /* the same envelope on two communicators never crosses */
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  int a = 1000 + rank, b = 2000 + rank, got_a = -1, got_b = -1;
  MPI_Request reqs[4];
  MPI_Isend(&b, 1, MPI_INT, right, 7, dup, &reqs[0]);
  MPI_Isend(&a, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &reqs[1]);
  MPI_Irecv(&got_a, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[2]);
  MPI_Irecv(&got_b, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &reqs[3]);
  MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
  CHECK(got_a == 1000 + left && got_b == 2000 + left, "isolation a=%d b=%d", got_a, got_b);
  ring_check(dup, "dup");

  /* the error handler is inherited, the name is not */
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  MPI_Comm dup2;
  MPI_Comm_dup(dup, &dup2);
  MPI_Errhandler eh;
  MPI_Comm_get_errhandler(dup2, &eh);
  CHECK(eh == MPI_ERRORS_RETURN, "errhandler not inherited by dup");
  MPI_Errhandler_free(&eh);
  MPI_Comm_free(&dup2);
  MPI_Comm_free(&dup);
  CHECK(dup == MPI_COMM_NULL, "comm_free did not null");

  MPI_Request req;
  MPI_Comm idup;
  MPI_Comm_idup(MPI_COMM_WORLD, &idup, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  MPI_Comm_compare(MPI_COMM_WORLD, idup, &result);
  CHECK(result == MPI_CONGRUENT, "compare world/idup %d", result);
  ring_check(idup, "idup");
  MPI_Comm_free(&idup);
}

static void split(void) {
  /* by parity, keys reversing the order */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &half);
  int r, n;
  MPI_Comm_rank(half, &r);
  MPI_Comm_size(half, &n);
  const int expect_n = (size - rank % 2 + 1) / 2;
  CHECK(n == expect_n, "split size %d expected %d", n, expect_n);
  /* highest world rank of my parity gets rank 0 */
  const int highest = (size - 1) - ((size - 1 - rank % 2) % 2);
  CHECK(r == (highest - rank) / 2, "split rank %d (world %d)", r, rank);
  int result;
  MPI_Comm_compare(MPI_COMM_WORLD, half, &result);
  CHECK(result == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "compare world/half %d", result);
  ring_check(half, "split");

  /* a split of a split, and MPI_UNDEFINED */
  MPI_Comm quarter;
  MPI_Comm_split(half, r == 0 ? MPI_UNDEFINED : 0, r, &quarter);
  if (r == 0) {
    CHECK(quarter == MPI_COMM_NULL, "MPI_UNDEFINED color gave a communicator");
  } else {
    int qn;
    MPI_Comm_size(quarter, &qn);
    CHECK(qn == n - 1, "quarter size %d", qn);
    ring_check(quarter, "split of split");
    MPI_Comm_free(&quarter);
  }
  MPI_Comm_free(&half);

  /* all the same color and key: order of the parent */
  MPI_Comm same;
  MPI_Comm_split(MPI_COMM_WORLD, 5, 0, &same);
  MPI_Comm_compare(MPI_COMM_WORLD, same, &result);
  CHECK(result == MPI_CONGRUENT, "split same color compare %d", result);
  MPI_Comm_free(&same);

  /* reversed order: similar (for size > 1) */
  MPI_Comm rev;
  MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &rev);
  MPI_Comm_compare(MPI_COMM_WORLD, rev, &result);
  CHECK(result == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "reversed compare %d", result);
  MPI_Comm_rank(rev, &r);
  CHECK(r == size - 1 - rank, "reversed rank %d", r);
  ring_check(rev, "reversed");
  MPI_Comm_free(&rev);

  /* shared memory: every rank of this test runs on one host */
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &n);
  MPI_Comm_rank(node, &r);
  CHECK(n == size && r == rank, "split_type shared size %d rank %d", n, r);
  MPI_Comm_free(&node);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, rank, MPI_INFO_NULL, &node);
  CHECK(node == MPI_COMM_NULL, "split_type MPI_UNDEFINED");
}

static void create(void) {
  MPI_Group world, evens;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int n_even = (size + 1) / 2;
  int ranks[64];
  for (int i = 0; i < n_even; ++i) ranks[i] = 2 * i;
  MPI_Group_incl(world, n_even, ranks, &evens);
  MPI_Comm comm;
  MPI_Comm_create(MPI_COMM_WORLD, evens, &comm);
  if (rank % 2 == 0) {
    CHECK(comm != MPI_COMM_NULL, "even rank got no communicator");
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    CHECK(r == rank / 2 && n == n_even, "create rank %d size %d", r, n);
    ring_check(comm, "create");
    MPI_Group g;
    MPI_Comm_group(comm, &g);
    int result;
    MPI_Group_compare(g, evens, &result);
    CHECK(result == MPI_IDENT, "create group compare %d", result);
    MPI_Group_free(&g);
    MPI_Comm_free(&comm);
  } else {
    CHECK(comm == MPI_COMM_NULL, "odd rank got a communicator");
  }
  MPI_Group_free(&evens);
  MPI_Group_free(&world);
}

static void groups(void) {
  MPI_Group world, g1, g2, u, in, diff, empty;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int n, r;
  MPI_Group_size(world, &n);
  MPI_Group_rank(world, &r);
  CHECK(n == size && r == rank, "world group size %d rank %d", n, r);

  /* g1 = ranks 0..half-1 reversed, g2 = everyone except rank 0 */
  int half = (size + 1) / 2, ranks[64];
  for (int i = 0; i < half; ++i) ranks[i] = half - 1 - i;
  MPI_Group_incl(world, half, ranks, &g1);
  int zero = 0;
  MPI_Group_excl(world, 1, &zero, &g2);
  MPI_Group_size(g2, &n);
  CHECK(n == size - 1, "excl size %d", n);
  MPI_Group_rank(g2, &r);
  CHECK(r == (rank == 0 ? MPI_UNDEFINED : rank - 1), "excl rank %d", r);
  MPI_Group_rank(g1, &r);
  CHECK(r == (rank < half ? half - 1 - rank : MPI_UNDEFINED), "incl rank %d", r);

  MPI_Group_union(g1, g2, &u);
  MPI_Group_size(u, &n);
  CHECK(n == size, "union size %d", n);
  /* union order: g1's members first (reversed half), then g2's others ascending */
  int probe[64], out[64];
  for (int i = 0; i < size; ++i) probe[i] = i;
  MPI_Group_translate_ranks(u, size, probe, world, out);
  int ok = 1;
  for (int i = 0; i < size; ++i) ok &= out[i] == (i < half ? half - 1 - i : i);
  CHECK(ok, "union order");

  MPI_Group_intersection(g1, g2, &in);
  MPI_Group_size(in, &n);
  CHECK(n == half - 1, "intersection size %d", n);
  MPI_Group_difference(g1, g2, &diff);
  MPI_Group_size(diff, &n);
  CHECK(n == 1, "difference size %d", n);
  MPI_Group_translate_ranks(diff, 1, &zero, world, out);
  CHECK(out[0] == 0, "difference member %d", out[0]);
  MPI_Group_difference(world, world, &empty);
  MPI_Group_size(empty, &n);
  CHECK(n == 0, "empty difference size %d", n);
  int result;
  MPI_Group_compare(empty, MPI_GROUP_EMPTY, &result);
  CHECK(result == MPI_IDENT, "empty compare %d", result);

  /* translate with PROC_NULL and non-members */
  int in_ranks[2] = {0, MPI_PROC_NULL}, out_ranks[2];
  MPI_Group_translate_ranks(world, 2, in_ranks, g2, out_ranks);
  CHECK(size == 1 /* MPICH: empty g2 */ ||
            (out_ranks[0] == MPI_UNDEFINED && out_ranks[1] == MPI_PROC_NULL),
        "translate %d %d", out_ranks[0], out_ranks[1]);

  MPI_Group_compare(world, u, &result);
  CHECK(result == (half <= 1 ? MPI_IDENT : MPI_SIMILAR), "world/union compare %d", result);
  MPI_Group_compare(world, world, &result);
  CHECK(result == MPI_IDENT, "world/world compare %d", result);
  if (size > 1) {
    MPI_Group_compare(world, g2, &result);
    CHECK(result == MPI_UNEQUAL, "world/g2 compare %d", result);
  }
  /* ranges: every other rank from the last down, and the complement */
  int range[1][3] = {{size - 1, 0, -2}};
  MPI_Group down, rest;
  MPI_Group_range_incl(world, 1, range, &down);
  MPI_Group_range_excl(world, 1, range, &rest);
  int nd, nr;
  MPI_Group_size(down, &nd);
  MPI_Group_size(rest, &nr);
  CHECK(nd == (size + 1) / 2 && nd + nr == size, "range sizes %d %d", nd, nr);
  int first = 0, first_world = -1;
  MPI_Group_translate_ranks(down, 1, &first, world, &first_world);
  CHECK(first_world == size - 1, "range_incl first member %d", first_world);
  MPI_Group_free(&down);
  if (rest != MPI_GROUP_EMPTY) MPI_Group_free(&rest);

  MPI_Group_free(&g1);
  MPI_Group_free(&g2);
  MPI_Group_free(&u);
  MPI_Group_free(&in);
  MPI_Group_free(&diff);
  if (empty != MPI_GROUP_EMPTY) MPI_Group_free(&empty);
  MPI_Group_free(&world);
  CHECK(world == MPI_GROUP_NULL, "group_free did not null");
}

static void names(void) {
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
  CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world name '%s'", name);
  MPI_Comm_get_name(MPI_COMM_SELF, name, &len);
  CHECK(strcmp(name, "MPI_COMM_SELF") == 0, "self name '%s'", name);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_get_name(dup, name, &len);
  CHECK(len == 0, "dup has a name '%s'", name);
  MPI_Comm_set_name(dup, "solver");
  MPI_Comm_get_name(dup, name, &len);
  CHECK(strcmp(name, "solver") == 0 && len == 6, "set name '%s'", name);
  int flag = -1;
  MPI_Comm_test_inter(dup, &flag);
  CHECK(flag == 0, "test_inter %d", flag);
  MPI_Comm_free(&dup);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "mpi_assert_no_any_tag", "false");
  MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup);
  MPI_Info_free(&info);
  int result;
  MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
  CHECK(result == MPI_CONGRUENT, "dup_with_info compare %d", result);
  ring_check(dup, "dup_with_info");
  MPI_Comm_get_info(dup, &info);
  CHECK(info != MPI_INFO_NULL, "get_info returned MPI_INFO_NULL");
  MPI_Info_free(&info);
  MPI_Comm_free(&dup);
  int n;
  MPI_Comm_size(MPI_COMM_SELF, &n);
  CHECK(n == 1, "self size %d", n);
  ring_check(MPI_COMM_SELF, "self");
}

/* Many communicators created and freed: context ids never collide. */
static void many(void) {
  MPI_Comm comms[20];
  for (int i = 0; i < 20; ++i) {
    if (i % 2)
      MPI_Comm_dup(i ? comms[i - 1] : MPI_COMM_WORLD, &comms[i]);
    else
      MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &comms[i]);
  }
  for (int i = 0; i < 20; ++i) ring_check(comms[i], "many");
  for (int i = 0; i < 20; ++i) MPI_Comm_free(&comms[i]);
}

/* Two Comm_idup in flight at once, started in opposite orders by even and odd ranks (legal:
 * they are on different communicators): the new communicators must not share traffic. */
static void concurrent_idup(void) {
  MPI_Comm c1, c2, n1, n2;
  MPI_Comm_dup(MPI_COMM_WORLD, &c1);
  MPI_Comm_dup(MPI_COMM_WORLD, &c2);
  MPI_Request reqs[2];
  if (rank % 2 == 0) {
    MPI_Comm_idup(c1, &n1, &reqs[0]);
    MPI_Comm_idup(c2, &n2, &reqs[1]);
  } else {
    MPI_Comm_idup(c2, &n2, &reqs[1]);
    MPI_Comm_idup(c1, &n1, &reqs[0]);
  }
  /* Even ranks wait for c2's copy first, odd ranks for c1's: each waits on an operation
   * the other side only advances if waiting on one request progresses the others. */
  MPI_Wait(&reqs[rank % 2 == 0 ? 1 : 0], MPI_STATUS_IGNORE);
  MPI_Wait(&reqs[rank % 2 == 0 ? 0 : 1], MPI_STATUS_IGNORE);
  const int right = (rank + 1) % size, left = (rank - 1 + size) % size;
  int a = 100 + rank, b = 200 + rank, got_a = -1, got_b = -1;
  MPI_Request r[4];
  MPI_Irecv(&got_b, 1, MPI_INT, left, 1, n2, &r[0]);
  MPI_Irecv(&got_a, 1, MPI_INT, left, 1, n1, &r[1]);
  MPI_Isend(&a, 1, MPI_INT, right, 1, n1, &r[2]);
  MPI_Isend(&b, 1, MPI_INT, right, 1, n2, &r[3]);
  MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
  CHECK(got_a == 100 + left && got_b == 200 + left, "concurrent idup: a=%d b=%d", got_a, got_b);
  ring_check(n1, "idup 1");
  ring_check(n2, "idup 2");
  MPI_Comm_free(&n1);
  MPI_Comm_free(&n2);
  MPI_Comm_free(&c1);
  MPI_Comm_free(&c2);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  dup_and_isolation();
  split();
  create();
  groups();
  names();
  many();
  concurrent_idup();
  MPI_Finalize();
  return check_exit("comm");
}
