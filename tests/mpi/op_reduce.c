/* Reduction operators inside collectives: Reduce/Allreduce/Scan with predefined ops on
 * integer, floating, complex, logical and pair types (MAXLOC/MINLOC on padded pairs such
 * as MPI_DOUBLE_INT), and a non-commutative user op whose result depends on rank order. */
/* SLUICE_TEST_RANKS: 1 2 3 4 8 */
#include <complex.h>
#include <stdbool.h>
#include <string.h>

#include "check.h"

static int rank, size;

static void integer_and_float(void) {
  enum { N = 1000 };
  static long long l[N], lr[N];
  static double d[N], dr[N];
  static unsigned u[N], ur[N];
  for (int i = 0; i < N; ++i) {
    l[i] = (long long)rank * i - 7;
    d[i] = rank + i * 0.5;
    u[i] = 1u << ((rank + i) % 32);
  }
  MPI_Allreduce(l, lr, N, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(d, dr, N, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(u, ur, N, MPI_UNSIGNED, MPI_BOR, MPI_COMM_WORLD);
  long long rs = (long long)size * (size - 1) / 2;
  for (int i = 0; i < N; ++i) {
    CHECK(lr[i] == rs * i - 7LL * size, "long long sum [%d] = %lld", i, lr[i]);
    CHECK(dr[i] == size - 1 + i * 0.5, "double max [%d] = %g", i, dr[i]);
    unsigned want = 0;
    for (int r = 0; r < size; ++r) want |= 1u << ((r + i) % 32);
    CHECK(ur[i] == want, "unsigned bor [%d] = %x", i, ur[i]);
  }
  float f = (float)(rank + 1), fprod;
  MPI_Reduce(&f, &fprod, 1, MPI_FLOAT, MPI_PROD, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    float want = 1;
    for (int r = 1; r <= size; ++r) want *= r;
    CHECK(fprod == want, "float prod %g want %g", fprod, want);
  }
}

static void complex_and_logical(void) {
  double _Complex z = rank + 1.0 * I, zs;
  MPI_Allreduce(&z, &zs, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
  CHECK(creal(zs) == size * (size - 1) / 2.0 && cimag(zs) == size, "complex sum %g%+gi", creal(zs),
        cimag(zs));
  bool mine = rank == 0, any, all;
  MPI_Allreduce(&mine, &any, 1, MPI_C_BOOL, MPI_LOR, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &all, 1, MPI_C_BOOL, MPI_LAND, MPI_COMM_WORLD);
  CHECK(any && all == (size == 1), "C_BOOL lor/land");
  int odd = rank % 2, parity;
  MPI_Allreduce(&odd, &parity, 1, MPI_INT, MPI_LXOR, MPI_COMM_WORLD);
  CHECK(parity == (size / 2) % 2, "int lxor %d", parity);
}

/* MAXLOC/MINLOC: every rank has the same maximum at two indices -> the lowest index wins. */
static void locations(void) {
  enum { N = 7 };
  struct {
    double v;
    int i;
  } d[N], dmax[N], dmin[N];
  struct {
    short v;
    int i;
  } s[N], smax[N];
  struct {
    long double v;
    int i;
  } ld[N], ldmin[N];
  for (int k = 0; k < N; ++k) {
    d[k].v = (rank * 7 + k) % size; /* a permutation of 0..size-1 per k */
    d[k].i = rank;
    s[k].v = (short)(k == 3 ? 5 : rank);
    s[k].i = 100 - rank;
    ld[k].v = (rank + k) % size;
    ld[k].i = rank;
  }
  MPI_Allreduce(d, dmax, N, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
  MPI_Allreduce(d, dmin, N, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
  MPI_Allreduce(s, smax, N, MPI_SHORT_INT, MPI_MAXLOC, MPI_COMM_WORLD);
  MPI_Allreduce(ld, ldmin, N, MPI_LONG_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
  for (int k = 0; k < N; ++k) {
    int wmax = -1, wmin = -1;
    for (int r = 0; r < size; ++r) {
      if ((r * 7 + k) % size == size - 1 && wmax < 0) wmax = r;
      if ((r * 7 + k) % size == 0 && wmin < 0) wmin = r;
    }
    CHECK(dmax[k].v == size - 1 && dmax[k].i == wmax, "double_int maxloc [%d] = %g@%d", k,
          dmax[k].v, dmax[k].i);
    CHECK(dmin[k].v == 0 && dmin[k].i == wmin, "double_int minloc [%d] = %g@%d", k, dmin[k].v,
          dmin[k].i);
    /* k == 3: every rank holds 5, so the lowest index (100 - (size - 1)) wins the tie. */
    int wantv = k == 3 ? 5 : size - 1;
    CHECK(smax[k].v == wantv && smax[k].i == 100 - (size - 1), "short_int maxloc [%d] = %d@%d", k,
          smax[k].v, smax[k].i);
    int lwin = -1;
    for (int r = 0; r < size && lwin < 0; ++r)
      if ((r + k) % size == 0) lwin = r;
    CHECK(ldmin[k].v == 0 && ldmin[k].i == lwin, "long_double_int minloc [%d]", k);
  }
}

/* 2x2 integer matrix product: associative, not commutative. */
static void matmul(void* in, void* inout, int* len, MPI_Datatype* dt) {
  int* a = in;
  int* b = inout;
  for (int e = 0; e < *len; ++e, a += 4, b += 4) {
    int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                a[2] * b[1] + a[3] * b[3]};
    memcpy(b, c, sizeof c);
  }
}

/* Product, in rank order, of the two matrices each rank r <= upto contributes. */
static void expected_product(int upto, int want[2][4]) {
  int one[4] = {1, 0, 0, 1};
  memcpy(want[0], one, sizeof one);
  memcpy(want[1], one, sizeof one);
  for (int r = 0; r <= upto; ++r) {
    int x[2][4] = {{1, r, 0, 1}, {1, 0, r, 1}};
    int len = 2;
    MPI_Datatype dt = MPI_INT;
    /* want = want * x, i.e. matmul(in=want, inout=x) then copy back. */
    matmul(want, x, &len, &dt);
    memcpy(want, x, sizeof x);
  }
}

static void user_noncommutative(void) {
  MPI_Op op;
  MPI_Op_create(matmul, 0, &op);
  MPI_Datatype mat;
  MPI_Type_contiguous(4, MPI_INT, &mat);
  MPI_Type_commit(&mat);
  /* Rank r contributes [[1, r], [0, 1]] and [[1, 0], [r, 1]]; products must be in rank order. */
  int m[2][4] = {{1, rank, 0, 1}, {1, 0, rank, 1}}, res[2][4], scan[2][4], want[2][4];
  MPI_Reduce(m, res, 2, mat, op, 0, MPI_COMM_WORLD);
  MPI_Scan(m, scan, 2, mat, op, MPI_COMM_WORLD);
  expected_product(rank, want);
  CHECK(memcmp(scan, want, sizeof want) == 0, "scan of matrices wrong at rank %d", rank);
  if (rank == 0) {
    expected_product(size - 1, want);
    CHECK(memcmp(res, want, sizeof want) == 0, "reduce of matrices not in rank order");
  }
  MPI_Type_free(&mat);
  MPI_Op_free(&op);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  integer_and_float();
  complex_and_logical();
  locations();
  user_noncommutative();
  MPI_Finalize();
  return check_exit("op_reduce");
}
