/* Reduction operators through MPI_Reduce_local: every predefined op on every type group the
 * standard allows, MAXLOC/MINLOC tie rule, user-defined (non-commutative) ops, derived
 * contiguous types, and MPI_ERR_OP for op/type pairs the standard does not define. */
/* SLUICE_TEST_RANKS: 1 2 */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

enum { N = 6 };

/* Applies op to in/inout for every element and compares with the C expression. */
#define CHECK_OP(T, DT, OP, EXPR)                                         \
  do {                                                                    \
    T in_[N], io_[N], want_[N];                                           \
    for (int i_ = 0; i_ < N; ++i_) {                                      \
      in_[i_] = (T)va[i_];                                                \
      io_[i_] = (T)vb[i_];                                                \
      T x = in_[i_], y = io_[i_];                                         \
      want_[i_] = (T)(EXPR);                                              \
    }                                                                     \
    int rc_ = MPI_Reduce_local(in_, io_, N, DT, OP);                      \
    CHECK(rc_ == MPI_SUCCESS, "%s %s: rc %d", #DT, #OP, rc_);             \
    int same_ = 1; /* compare values: long double has padding bytes */    \
    for (int i_ = 0; i_ < N; ++i_) same_ = same_ && io_[i_] == want_[i_]; \
    CHECK(same_, "%s %s: wrong result", #DT, #OP);                        \
  } while (0)

static const long long va[N] = {0, 1, 7, 12, 3, 100};
static const long long vb[N] = {0, 0, 7, 10, 9, 27};

#define INTEGER_OPS(T, DT)                           \
  do {                                               \
    CHECK_OP(T, DT, MPI_SUM, x + y);                 \
    CHECK_OP(T, DT, MPI_PROD, x* y);                 \
    CHECK_OP(T, DT, MPI_MAX, x > y ? x : y);         \
    CHECK_OP(T, DT, MPI_MIN, x < y ? x : y);         \
    CHECK_OP(T, DT, MPI_LAND, (x != 0) && (y != 0)); \
    CHECK_OP(T, DT, MPI_LOR, (x != 0) || (y != 0));  \
    CHECK_OP(T, DT, MPI_LXOR, (x != 0) != (y != 0)); \
    CHECK_OP(T, DT, MPI_BAND, x& y);                 \
    CHECK_OP(T, DT, MPI_BOR, x | y);                 \
    CHECK_OP(T, DT, MPI_BXOR, x ^ y);                \
  } while (0)

#define FLOAT_OPS(T, DT)                     \
  do {                                       \
    CHECK_OP(T, DT, MPI_SUM, x + y);         \
    CHECK_OP(T, DT, MPI_PROD, x* y);         \
    CHECK_OP(T, DT, MPI_MAX, x > y ? x : y); \
    CHECK_OP(T, DT, MPI_MIN, x < y ? x : y); \
  } while (0)

static void integers(void) {
  INTEGER_OPS(signed char, MPI_SIGNED_CHAR);
  INTEGER_OPS(unsigned char, MPI_UNSIGNED_CHAR);
  INTEGER_OPS(short, MPI_SHORT);
  INTEGER_OPS(unsigned short, MPI_UNSIGNED_SHORT);
  INTEGER_OPS(int, MPI_INT);
  INTEGER_OPS(unsigned, MPI_UNSIGNED);
  INTEGER_OPS(long, MPI_LONG);
  INTEGER_OPS(unsigned long, MPI_UNSIGNED_LONG);
  INTEGER_OPS(long long, MPI_LONG_LONG);
  INTEGER_OPS(long long, MPI_LONG_LONG_INT);
  INTEGER_OPS(unsigned long long, MPI_UNSIGNED_LONG_LONG);
  INTEGER_OPS(int8_t, MPI_INT8_T);
  INTEGER_OPS(int16_t, MPI_INT16_T);
  INTEGER_OPS(int32_t, MPI_INT32_T);
  INTEGER_OPS(int64_t, MPI_INT64_T);
  INTEGER_OPS(uint8_t, MPI_UINT8_T);
  INTEGER_OPS(uint16_t, MPI_UINT16_T);
  INTEGER_OPS(uint32_t, MPI_UINT32_T);
  INTEGER_OPS(uint64_t, MPI_UINT64_T);
  INTEGER_OPS(MPI_Aint, MPI_AINT);
  INTEGER_OPS(MPI_Offset, MPI_OFFSET);
  INTEGER_OPS(MPI_Count, MPI_COUNT);
  /* MPI_BYTE: bitwise only. */
  CHECK_OP(unsigned char, MPI_BYTE, MPI_BAND, x& y);
  CHECK_OP(unsigned char, MPI_BYTE, MPI_BOR, x | y);
  CHECK_OP(unsigned char, MPI_BYTE, MPI_BXOR, x ^ y);
  /* Negative values and wrap-around. */
  int a[3] = {-5, 2147483647, -1}, b[3] = {3, 1, -7};
  MPI_Reduce_local(a, b, 3, MPI_INT, MPI_MAX);
  CHECK(b[0] == 3 && b[1] == 2147483647 && b[2] == -1, "int max with negatives");
}

static void floats(void) {
  FLOAT_OPS(float, MPI_FLOAT);
  FLOAT_OPS(double, MPI_DOUBLE);
  FLOAT_OPS(long double, MPI_LONG_DOUBLE);
  float _Complex fa[2] = {1 + 2 * I, 3 - I}, fb[2] = {2 - I, 1 + I};
  double _Complex da[2] = {1 + 2 * I, 3 - I}, db[2] = {2 - I, 1 + I};
  long double _Complex la[2] = {1 + 2 * I, 3 - I}, lb[2] = {2 - I, 1 + I};
  MPI_Reduce_local(fa, fb, 2, MPI_C_FLOAT_COMPLEX, MPI_SUM);
  CHECK(fb[0] == 3 + I && fb[1] == 4, "float complex sum");
  MPI_Reduce_local(da, db, 2, MPI_C_DOUBLE_COMPLEX, MPI_PROD);
  CHECK(db[0] == 4 + 3 * I && db[1] == 4 + 2 * I, "double complex prod");
  MPI_Reduce_local(la, lb, 2, MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM);
  CHECK(lb[0] == 3 + I && lb[1] == 4, "long double complex sum");
  MPI_Reduce_local(fa, fb, 1, MPI_C_COMPLEX, MPI_PROD);
  CHECK(fb[0] == (1 + 2 * I) * (3 + I), "MPI_C_COMPLEX prod");
}

static void logicals(void) {
  bool a[4] = {false, false, true, true};
  bool band_[4] = {false, true, false, true}, bor_[4], bxor_[4];
  memcpy(bor_, band_, sizeof band_);
  memcpy(bxor_, band_, sizeof band_);
  MPI_Reduce_local(a, band_, 4, MPI_C_BOOL, MPI_LAND);
  MPI_Reduce_local(a, bor_, 4, MPI_C_BOOL, MPI_LOR);
  MPI_Reduce_local(a, bxor_, 4, MPI_C_BOOL, MPI_LXOR);
  CHECK(!band_[0] && !band_[1] && !band_[2] && band_[3], "C_BOOL land");
  CHECK(!bor_[0] && bor_[1] && bor_[2] && bor_[3], "C_BOOL lor");
  CHECK(!bxor_[0] && bxor_[1] && bxor_[2] && !bxor_[3], "C_BOOL lxor");
}

/* MAXLOC/MINLOC: larger (smaller) value wins; on equal values the lower index. */
#define PAIR_OPS(V, DT)                                                                        \
  do {                                                                                         \
    struct {                                                                                   \
      V v;                                                                                     \
      int i;                                                                                   \
    } in_[3] = {{(V)5, 1}, {(V)2, 7}, {(V)4, 9}}, mx_[3] = {{(V)3, 0}, {(V)2, 3}, {(V)8, 2}},  \
      mn_[3];                                                                                  \
    memcpy(mn_, mx_, sizeof mx_);                                                              \
    MPI_Reduce_local(in_, mx_, 3, DT, MPI_MAXLOC);                                             \
    MPI_Reduce_local(in_, mn_, 3, DT, MPI_MINLOC);                                             \
    CHECK(mx_[0].v == 5 && mx_[0].i == 1 && mx_[1].v == 2 && mx_[1].i == 3 && mx_[2].v == 8 && \
              mx_[2].i == 2,                                                                   \
          "%s maxloc", #DT);                                                                   \
    CHECK(mn_[0].v == 3 && mn_[0].i == 0 && mn_[1].v == 2 && mn_[1].i == 3 && mn_[2].v == 4 && \
              mn_[2].i == 9,                                                                   \
          "%s minloc", #DT);                                                                   \
  } while (0)

static void pairs(void) {
  PAIR_OPS(float, MPI_FLOAT_INT);
  PAIR_OPS(double, MPI_DOUBLE_INT);
  PAIR_OPS(long, MPI_LONG_INT);
  PAIR_OPS(int, MPI_2INT);
  PAIR_OPS(short, MPI_SHORT_INT);
  PAIR_OPS(long double, MPI_LONG_DOUBLE_INT);
}

/* Non-commutative user op: inout = in * 10 + inout shows the argument order. */
static void shift_op(void* in, void* inout, int* len, MPI_Datatype* dt) {
  int* a = in;
  int* b = inout;
  CHECK(*dt == MPI_INT, "user op got another datatype");
  for (int i = 0; i < *len; ++i) b[i] = a[i] * 10 + b[i];
}

static void user_ops(void) {
  MPI_Op op, op2;
  MPI_Op_create(shift_op, 0, &op);
  MPI_Op_create(shift_op, 1, &op2);
  int commute;
  MPI_Op_commutative(op, &commute);
  CHECK(commute == 0, "non-commutative op reports %d", commute);
  MPI_Op_commutative(op2, &commute);
  CHECK(commute == 1, "commutative op reports %d", commute);
  MPI_Op_commutative(MPI_SUM, &commute);
  CHECK(commute == 1, "MPI_SUM commutative");
  int a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  MPI_Reduce_local(a, b, 4, MPI_INT, op);
  CHECK(b[0] == 15 && b[3] == 48, "user op order: %d %d", b[0], b[3]);
  MPI_Op_free(&op);
  MPI_Op_free(&op2);
  CHECK(op == MPI_OP_NULL && op2 == MPI_OP_NULL, "Op_free must null the handle");
}

/* Sluice extension: predefined ops also apply to derived types whose elements are runs of
 * one predefined type (MPICH, like the standard, accepts only predefined types). */
static void derived(void) {
#ifdef SLUICE_MPI
  MPI_Datatype three;
  MPI_Type_contiguous(3, MPI_DOUBLE, &three);
  MPI_Type_commit(&three);
  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {10, 20, 30, 40, 50, 60};
  int rc = MPI_Reduce_local(a, b, 2, three, MPI_SUM);
  CHECK(rc == MPI_SUCCESS && b[0] == 11 && b[5] == 66, "contiguous(3, double) sum");
  MPI_Type_free(&three);
#endif
}

static void rejected(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int ia[2] = {1, 2}, ib[2] = {3, 4}, cls, rc;
  float fa[2] = {1, 2}, fb[2] = {3, 4};
  rc = MPI_Reduce_local(ia, ib, 1, MPI_2INT, MPI_SUM);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OP, "MPI_SUM on MPI_2INT: class %d", cls);
  rc = MPI_Reduce_local(fa, fb, 2, MPI_FLOAT, MPI_BAND);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OP, "MPI_BAND on MPI_FLOAT: class %d", cls);
  rc = MPI_Reduce_local(ia, ib, 2, MPI_INT, MPI_MAXLOC);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OP, "MPI_MAXLOC on MPI_INT: class %d", cls);
#ifdef SLUICE_MPI /* MPICH accepts this pair and then fails an internal assertion */
  rc = MPI_Reduce_local(fa, fb, 2, MPI_FLOAT, MPI_LAND);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OP, "MPI_LAND on MPI_FLOAT: class %d", cls);
#endif
  rc = MPI_Reduce_local(ia, ib, 2, MPI_INT, MPI_OP_NULL);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OP, "MPI_OP_NULL: class %d", cls);
  CHECK(ib[0] == 3 && ib[1] == 4 && fb[0] == 3, "rejected ops must not touch inout");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  integers();
  floats();
  logicals();
  pairs();
  user_ops();
  derived();
  rejected();
  MPI_Finalize();
  return check_exit("op_local");
}
