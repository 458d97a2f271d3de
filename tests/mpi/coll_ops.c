/* Every predefined reduction op on the types it allows (a few per group), through
 * Allreduce, Reduce (every root), Scan and Reduce_scatter_block; MAXLOC/MINLOC on the pair
 * types; a non-commutative user op (2x2 matrix product) that must come out in rank order
 * through Reduce, Allreduce, Scan, Exscan and Reduce_scatter_block. */
/* SLUICE_TEST_RANKS: 1 2 3 4 5 8 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

static int me, P;
#define N 37 /* elements per test: odd, not a power of two */

/* Contribution of rank r at element i: small values so sums and products are exact. */
static int contrib(int r, int i) {
  return 1 + (r * 5 + i * 3) % 7;
}
static int prod_contrib(int r, int i) {
  return 1 + (r + i) % 2;
}

enum { OSUM, OPROD, OMAX, OMIN, OLAND, OLOR, OLXOR, OBAND, OBOR, OBXOR };
static const char* names[] = {"SUM", "PROD", "MAX",  "MIN", "LAND",
                              "LOR", "LXOR", "BAND", "BOR", "BXOR"};
static MPI_Op ops[10];

/* Expected result over ranks lo..hi as a long long. */
static long long expect(int op, int lo, int hi, int i) {
  long long acc = op == OPROD ? prod_contrib(lo, i) : contrib(lo, i);
  for (int r = lo + 1; r <= hi; ++r) {
    long long v = op == OPROD ? prod_contrib(r, i) : contrib(r, i);
    switch (op) {
      case OSUM:
        acc += v;
        break;
      case OPROD:
        acc *= v;
        break;
      case OMAX:
        acc = v > acc ? v : acc;
        break;
      case OMIN:
        acc = v < acc ? v : acc;
        break;
      case OLAND:
        acc = (acc != 0) && (v % 3 != 0);
        break;
      case OLOR:
        acc = (acc != 0) || (v % 3 != 0);
        break;
      case OLXOR:
        acc = (acc != 0) != (v % 3 != 0);
        break;
      case OBAND:
        acc &= v;
        break;
      case OBOR:
        acc |= v;
        break;
      case OBXOR:
        acc ^= v;
        break;
    }
  }
  return acc;
}
/* Logical ops use (contrib % 3 != 0) as the truth value; normalise the first operand too. */
static long long input(int op, int r, int i) {
  if (op == OPROD) return prod_contrib(r, i);
  if (op == OLAND || op == OLOR || op == OLXOR) return contrib(r, i) % 3 != 0;
  return contrib(r, i);
}
static long long expected(int op, int lo, int hi, int i) {
  if (op == OLAND || op == OLOR || op == OLXOR) {
    long long acc = input(op, lo, i);
    for (int r = lo + 1; r <= hi; ++r) {
      long long v = input(op, r, i);
      acc = op == OLAND ? (acc && v) : op == OLOR ? (acc || v) : (acc != v);
    }
    return acc;
  }
  return expect(op, lo, hi, i);
}

/* One type: fill, run every collective, compare. T is the C type. */
#define TEST_TYPE(T, MPITYPE, opmask)                                                              \
  do {                                                                                             \
    for (int op = 0; op < 10; ++op) {                                                              \
      if (!((opmask) & (1 << op))) continue;                                                       \
      T in[N], out[N], blk[N * 8];                                                                 \
      for (int i = 0; i < N; ++i) in[i] = (T)input(op, me, i);                                     \
      MPI_Allreduce(in, out, N, MPITYPE, ops[op], MPI_COMM_WORLD);                                 \
      for (int i = 0; i < N; ++i)                                                                  \
        CHECK(out[i] == (T)expected(op, 0, P - 1, i), "allreduce %s %s [%d]", names[op], #MPITYPE, \
              i);                                                                                  \
      for (int root = 0; root < P; ++root) {                                                       \
        memset(out, 0, sizeof out);                                                                \
        MPI_Reduce(in, out, N, MPITYPE, ops[op], root, MPI_COMM_WORLD);                            \
        if (me == root)                                                                            \
          for (int i = 0; i < N; ++i)                                                              \
            CHECK(out[i] == (T)expected(op, 0, P - 1, i), "reduce %s %s root %d [%d]", names[op],  \
                  #MPITYPE, root, i);                                                              \
      }                                                                                            \
      MPI_Scan(in, out, N, MPITYPE, ops[op], MPI_COMM_WORLD);                                      \
      for (int i = 0; i < N; ++i)                                                                  \
        CHECK(out[i] == (T)expected(op, 0, me, i), "scan %s %s [%d]", names[op], #MPITYPE, i);     \
      if (P <= 8) {                                                                                \
        const int per = N / P;                                                                     \
        T rin[N];                                                                                  \
        for (int i = 0; i < per * P; ++i) rin[i] = (T)input(op, me, i);                            \
        MPI_Reduce_scatter_block(rin, blk, per, MPITYPE, ops[op], MPI_COMM_WORLD);                 \
        for (int i = 0; i < per; ++i)                                                              \
          CHECK(blk[i] == (T)expected(op, 0, P - 1, me * per + i),                                 \
                "reduce_scatter_block %s %s [%d]", names[op], #MPITYPE, i);                        \
      }                                                                                            \
    }                                                                                              \
  } while (0)

#define ARITH ((1 << OSUM) | (1 << OPROD) | (1 << OMAX) | (1 << OMIN))
#define LOGIC ((1 << OLAND) | (1 << OLOR) | (1 << OLXOR))
#define BITS ((1 << OBAND) | (1 << OBOR) | (1 << OBXOR))

static void predefined(void) {
  TEST_TYPE(int, MPI_INT, ARITH | LOGIC | BITS);
  TEST_TYPE(unsigned, MPI_UNSIGNED, ARITH | LOGIC | BITS);
  TEST_TYPE(short, MPI_SHORT, ARITH | BITS);
  TEST_TYPE(long long, MPI_LONG_LONG, ARITH | LOGIC | BITS);
  TEST_TYPE(unsigned char, MPI_UNSIGNED_CHAR, ARITH | BITS);
  TEST_TYPE(signed char, MPI_SIGNED_CHAR, ARITH);
  TEST_TYPE(int64_t, MPI_INT64_T, ARITH | BITS);
  TEST_TYPE(uint16_t, MPI_UINT16_T, ARITH | BITS);
  TEST_TYPE(float, MPI_FLOAT, ARITH);
  TEST_TYPE(double, MPI_DOUBLE, ARITH);
  TEST_TYPE(long double, MPI_LONG_DOUBLE, ARITH);
  TEST_TYPE(bool, MPI_C_BOOL, LOGIC);
  TEST_TYPE(unsigned char, MPI_BYTE, BITS);
}

/* MAXLOC / MINLOC: value = contrib, index = rank; ties resolve to the lowest index. */
#define TEST_LOC(T, MPITYPE)                                                               \
  do {                                                                                     \
    T in[N], out[N];                                                                       \
    for (int i = 0; i < N; ++i) {                                                          \
      in[i].v = contrib(me, i) % 4;                                                        \
      in[i].k = me;                                                                        \
    }                                                                                      \
    for (int m = 0; m < 2; ++m) {                                                          \
      MPI_Allreduce(in, out, N, MPITYPE, m ? MPI_MINLOC : MPI_MAXLOC, MPI_COMM_WORLD);     \
      for (int i = 0; i < N; ++i) {                                                        \
        int best = 0;                                                                      \
        for (int r = 1; r < P; ++r) {                                                      \
          int a = contrib(r, i) % 4, b = contrib(best, i) % 4;                             \
          if (m ? a < b : a > b) best = r;                                                 \
        }                                                                                  \
        CHECK(out[i].v == contrib(best, i) % 4 && out[i].k == best, "%s %s [%d]: (%g,%d)", \
              m ? "MINLOC" : "MAXLOC", #MPITYPE, i, (double)out[i].v, (int)out[i].k);      \
      }                                                                                    \
    }                                                                                      \
  } while (0)

struct int_int {
  int v, k;
};
struct double_int {
  double v;
  int k;
};
struct float_int {
  float v;
  int k;
};
struct long_int {
  long v;
  int k;
};
struct short_int {
  short v;
  int k;
};

static void locs(void) {
  TEST_LOC(struct int_int, MPI_2INT);
  TEST_LOC(struct double_int, MPI_DOUBLE_INT);
  TEST_LOC(struct float_int, MPI_FLOAT_INT);
  TEST_LOC(struct long_int, MPI_LONG_INT);
  TEST_LOC(struct short_int, MPI_SHORT_INT);
}

/* Non-commutative: 2x2 integer matrices (wrapping), inout = in x inout. */
typedef struct {
  unsigned a, b, c, d;
} mat;
static mat mmul(mat x, mat y) {
  mat r = {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
           x.c * y.b + x.d * y.d};
  return r;
}
static mat matrix(int r, int i) {
  unsigned s = (unsigned)(r * 131 + i * 17);
  mat m = {1 + s % 5, 1 + (s / 5) % 3, (s / 15) % 4, 1 + (s / 60) % 2};
  return m;
}
static mat product(int lo, int hi, int i) {
  mat m = {1, 0, 0, 1};
  for (int r = lo; r <= hi; ++r) m = mmul(m, matrix(r, i));
  return m;
}
static void matmul(void* in, void* inout, int* len, MPI_Datatype* type) {
  mat* x = in;
  mat* y = inout;
  for (int i = 0; i < *len; ++i) y[i] = mmul(x[i], y[i]);
}
static int same(mat x, mat y) {
  return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d;
}

static void noncommutative(void) {
  MPI_Datatype mt;
  MPI_Type_contiguous(4, MPI_UNSIGNED, &mt);
  MPI_Type_commit(&mt);
  MPI_Op op;
  MPI_Op_create(matmul, 0, &op);
  static const int counts[] = {1, 5, 700};
  for (int c = 0; c < 3; ++c) {
    const int n = counts[c];
    mat* in = malloc(n * sizeof(mat));
    mat* out = malloc(n * P * sizeof(mat));
    for (int i = 0; i < n; ++i) in[i] = matrix(me, i);
    MPI_Allreduce(in, out, n, mt, op, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i)
      CHECK(same(out[i], product(0, P - 1, i)), "allreduce matmul n=%d [%d]", n, i);
    for (int root = 0; root < P; ++root) {
      MPI_Reduce(in, out, n, mt, op, root, MPI_COMM_WORLD);
      if (me == root)
        for (int i = 0; i < n; ++i)
          CHECK(same(out[i], product(0, P - 1, i)), "reduce matmul n=%d root %d [%d]", n, root, i);
    }
    MPI_Scan(in, out, n, mt, op, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i)
      CHECK(same(out[i], product(0, me, i)), "scan matmul n=%d [%d]", n, i);
    MPI_Exscan(in, out, n, mt, op, MPI_COMM_WORLD);
    if (me > 0)
      for (int i = 0; i < n; ++i)
        CHECK(same(out[i], product(0, me - 1, i)), "exscan matmul n=%d [%d]", n, i);
    mat* all = malloc(n * P * sizeof(mat));
    for (int i = 0; i < n * P; ++i) all[i] = matrix(me, i);
    MPI_Reduce_scatter_block(all, out, n, mt, op, MPI_COMM_WORLD);
    for (int i = 0; i < n; ++i)
      CHECK(same(out[i], product(0, P - 1, me * n + i)), "reduce_scatter_block matmul n=%d [%d]", n,
            i);
    free(all);
    free(in);
    free(out);
  }
  MPI_Op_free(&op);
  MPI_Type_free(&mt);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Op o[10] = {MPI_SUM, MPI_PROD, MPI_MAX,  MPI_MIN, MPI_LAND,
                  MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
  memcpy(ops, o, sizeof o);
  predefined();
  locs();
  noncommutative();
  MPI_Finalize();
  return check_exit("coll_ops");
}
