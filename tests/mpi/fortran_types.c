/* The Fortran datatypes usable from C (MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION,
 * MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_LOGICAL, MPI_CHARACTER, the sized MPI_REALn,
 * MPI_INTEGERn, MPI_COMPLEXn, and the pairs MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION)
 * and the MPI_CXX_* types: sizes, names, point-to-point on a ring, and the reductions the
 * standard defines on them (MPI-3.1 §5.9.2), checked against computed values. gfortran's
 * default kinds: INTEGER, REAL and LOGICAL are 4 bytes, .TRUE. is 1. */
/* SLUICE_TEST_RANKS: 1 2 3 4 8 */
#include <complex.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

static int rank, size;

static void sizes_and_names(void) {
  static const struct {
    MPI_Datatype t;
    int size;
    const char* name;
  } types[] = {
      {MPI_INTEGER, 4, "MPI_INTEGER"},
      {MPI_REAL, 4, "MPI_REAL"},
      {MPI_DOUBLE_PRECISION, 8, "MPI_DOUBLE_PRECISION"},
      {MPI_COMPLEX, 8, "MPI_COMPLEX"},
      {MPI_DOUBLE_COMPLEX, 16, "MPI_DOUBLE_COMPLEX"},
      {MPI_LOGICAL, 4, "MPI_LOGICAL"},
      {MPI_CHARACTER, 1, "MPI_CHARACTER"},
      {MPI_REAL4, 4, "MPI_REAL4"},
      {MPI_REAL8, 8, "MPI_REAL8"},
      {MPI_INTEGER1, 1, "MPI_INTEGER1"},
      {MPI_INTEGER2, 2, "MPI_INTEGER2"},
      {MPI_INTEGER4, 4, "MPI_INTEGER4"},
      {MPI_INTEGER8, 8, "MPI_INTEGER8"},
      {MPI_COMPLEX8, 8, "MPI_COMPLEX8"},
      {MPI_COMPLEX16, 16, "MPI_COMPLEX16"},
      {MPI_2INTEGER, 8, "MPI_2INTEGER"},
      {MPI_2REAL, 8, "MPI_2REAL"},
      {MPI_2DOUBLE_PRECISION, 16, "MPI_2DOUBLE_PRECISION"},
      {MPI_CXX_BOOL, 1, "MPI_CXX_BOOL"},
      {MPI_CXX_FLOAT_COMPLEX, 8, "MPI_CXX_FLOAT_COMPLEX"},
      {MPI_CXX_DOUBLE_COMPLEX, 16, "MPI_CXX_DOUBLE_COMPLEX"},
      {MPI_CXX_LONG_DOUBLE_COMPLEX, 2 * (int)sizeof(long double), "MPI_CXX_LONG_DOUBLE_COMPLEX"},
  };
  for (unsigned i = 0; i < sizeof types / sizeof types[0]; ++i) {
    int sz = -1, len = 0;
    MPI_Aint lb = -1, extent = -1;
    char name[MPI_MAX_OBJECT_NAME] = "";
    MPI_Type_size(types[i].t, &sz);
    MPI_Type_get_extent(types[i].t, &lb, &extent);
    MPI_Type_get_name(types[i].t, name, &len);
    CHECK(sz == types[i].size, "%s: size %d, want %d", types[i].name, sz, types[i].size);
    CHECK(lb == 0 && extent == types[i].size, "%s: lb %ld extent %ld", types[i].name, (long)lb,
          (long)extent);
    CHECK(strcmp(name, types[i].name) == 0, "%s: name \"%s\"", types[i].name, name);
  }
}

/* Each rank sends `bytes` of a pattern to its right neighbour as `count` elements of `t`. */
static void ring(MPI_Datatype t, int count, int elem, const char* what) {
  unsigned char out[256], in[256];
  const int bytes = count * elem;
  const int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  for (int i = 0; i < bytes; ++i) {
    out[i] = (unsigned char)(rank * 31 + i);
    in[i] = 0xee;
  }
  MPI_Status st;
  MPI_Sendrecv(out, count, t, right, 5, in, count, t, left, 5, MPI_COMM_WORLD, &st);
  int got = -1;
  MPI_Get_count(&st, t, &got);
  CHECK(got == count, "%s: Get_count %d, want %d", what, got, count);
  for (int i = 0; i < bytes; ++i)
    if (in[i] != (unsigned char)(left * 31 + i)) {
      CHECK(0, "%s: byte %d = %u, want %u", what, i, in[i], (unsigned char)(left * 31 + i));
      break;
    }
}

static void point_to_point(void) {
  ring(MPI_INTEGER, 16, 4, "MPI_INTEGER");
  ring(MPI_DOUBLE_PRECISION, 8, 8, "MPI_DOUBLE_PRECISION");
  ring(MPI_DOUBLE_COMPLEX, 5, 16, "MPI_DOUBLE_COMPLEX");
  ring(MPI_LOGICAL, 3, 4, "MPI_LOGICAL");
  ring(MPI_CHARACTER, 33, 1, "MPI_CHARACTER");
  ring(MPI_INTEGER2, 7, 2, "MPI_INTEGER2");
  ring(MPI_INTEGER8, 4, 8, "MPI_INTEGER8");
  ring(MPI_COMPLEX8, 6, 8, "MPI_COMPLEX8");
  ring(MPI_2DOUBLE_PRECISION, 3, 16, "MPI_2DOUBLE_PRECISION");
  ring(MPI_CXX_BOOL, 9, 1, "MPI_CXX_BOOL");
  ring(MPI_CXX_DOUBLE_COMPLEX, 2, 16, "MPI_CXX_DOUBLE_COMPLEX");
}

static void reductions(void) {
  const int rs = size * (size - 1) / 2; /* sum of ranks */
  int32_t in4[3] = {rank, 2 * rank + 1, -rank}, out4[3];
  MPI_Allreduce(in4, out4, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD);
  CHECK(out4[0] == rs && out4[1] == 2 * rs + size && out4[2] == -rs, "INTEGER sum %d %d %d",
        out4[0], out4[1], out4[2]);
  MPI_Allreduce(in4, out4, 3, MPI_INTEGER4, MPI_MAX, MPI_COMM_WORLD);
  CHECK(out4[0] == size - 1 && out4[2] == 0, "INTEGER4 max %d %d", out4[0], out4[2]);
  int8_t in1 = (int8_t)(rank - 3), out1;
  MPI_Allreduce(&in1, &out1, 1, MPI_INTEGER1, MPI_MIN, MPI_COMM_WORLD);
  CHECK(out1 == -3, "INTEGER1 min %d", out1);
  int16_t in2 = (int16_t)(100 * rank), out2;
  MPI_Allreduce(&in2, &out2, 1, MPI_INTEGER2, MPI_SUM, MPI_COMM_WORLD);
  CHECK(out2 == 100 * rs, "INTEGER2 sum %d", out2);
  int64_t in8 = ((int64_t)1 << 40) * (rank + 1), out8;
  MPI_Allreduce(&in8, &out8, 1, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD);
  CHECK(out8 == ((int64_t)1 << 40) * (rs + size), "INTEGER8 sum %lld", (long long)out8);

  float fr = 0.5f * rank, frs;
  MPI_Allreduce(&fr, &frs, 1, MPI_REAL, MPI_SUM, MPI_COMM_WORLD);
  CHECK(frs == 0.5f * rs, "REAL sum %g", frs);
  MPI_Allreduce(&fr, &frs, 1, MPI_REAL4, MPI_MAX, MPI_COMM_WORLD);
  CHECK(frs == 0.5f * (size - 1), "REAL4 max %g", frs);
  double dr = rank + 1.0, drp;
  MPI_Allreduce(&dr, &drp, 1, MPI_DOUBLE_PRECISION, MPI_PROD, MPI_COMM_WORLD);
  double fact = 1;
  for (int r = 1; r <= size; ++r) fact *= r;
  CHECK(drp == fact, "DOUBLE_PRECISION prod %g, want %g", drp, fact);
  MPI_Allreduce(&dr, &drp, 1, MPI_REAL8, MPI_MIN, MPI_COMM_WORLD);
  CHECK(drp == 1.0, "REAL8 min %g", drp);

  float _Complex cf = rank + 2.0f * I, cfs;
  MPI_Allreduce(&cf, &cfs, 1, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
  CHECK(crealf(cfs) == rs && cimagf(cfs) == 2.0f * size, "COMPLEX sum %g%+gi", crealf(cfs),
        cimagf(cfs));
  MPI_Allreduce(&cf, &cfs, 1, MPI_COMPLEX8, MPI_SUM, MPI_COMM_WORLD);
  CHECK(crealf(cfs) == rs && cimagf(cfs) == 2.0f * size, "COMPLEX8 sum %g%+gi", crealf(cfs),
        cimagf(cfs));
  MPI_Allreduce(&cf, &cfs, 1, MPI_CXX_FLOAT_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
  CHECK(crealf(cfs) == rs && cimagf(cfs) == 2.0f * size, "CXX_FLOAT_COMPLEX sum %g%+gi",
        crealf(cfs), cimagf(cfs));
  double _Complex cd = I, cdp; /* i^size */
  MPI_Allreduce(&cd, &cdp, 1, MPI_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD);
  static const double re[4] = {1, 0, -1, 0}, im[4] = {0, 1, 0, -1};
  CHECK(creal(cdp) == re[size % 4] && cimag(cdp) == im[size % 4], "DOUBLE_COMPLEX prod %g%+gi",
        creal(cdp), cimag(cdp));
  MPI_Allreduce(&cd, &cdp, 1, MPI_COMPLEX16, MPI_PROD, MPI_COMM_WORLD);
  CHECK(creal(cdp) == re[size % 4] && cimag(cdp) == im[size % 4], "COMPLEX16 prod %g%+gi",
        creal(cdp), cimag(cdp));
  MPI_Allreduce(&cd, &cdp, 1, MPI_CXX_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
  CHECK(creal(cdp) == 0 && cimag(cdp) == size, "CXX_DOUBLE_COMPLEX sum %g%+gi", creal(cdp),
        cimag(cdp));
  long double _Complex cl = rank + 0.5L * I, cls;
  MPI_Allreduce(&cl, &cls, 1, MPI_CXX_LONG_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
  CHECK(creall(cls) == rs && cimagl(cls) == 0.5L * size, "CXX_LONG_DOUBLE_COMPLEX sum");

  /* LOGICAL: 1 is .TRUE., 0 .FALSE. */
  int32_t l[3] = {rank == 0, 1, 0}, land[3], lor[3], lxor[3];
  MPI_Allreduce(l, land, 3, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD);
  MPI_Allreduce(l, lor, 3, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD);
  MPI_Allreduce(l, lxor, 3, MPI_LOGICAL, MPI_LXOR, MPI_COMM_WORLD);
  CHECK(!!land[0] == (size == 1) && !!land[1] && !land[2], "LOGICAL land %d %d %d", land[0],
        land[1], land[2]);
  CHECK(!!lor[0] && !!lor[1] && !lor[2], "LOGICAL lor %d %d %d", lor[0], lor[1], lor[2]);
  CHECK(!!lxor[0] && !!lxor[1] == (size % 2 == 1) && !lxor[2], "LOGICAL lxor %d %d %d", lxor[0],
        lxor[1], lxor[2]);
  _Bool b = rank == size - 1, bor = 0, band = 1;
  MPI_Allreduce(&b, &bor, 1, MPI_CXX_BOOL, MPI_LOR, MPI_COMM_WORLD);
  MPI_Allreduce(&b, &band, 1, MPI_CXX_BOOL, MPI_LAND, MPI_COMM_WORLD);
  CHECK(bor && band == (size == 1), "CXX_BOOL lor %d land %d", bor, band);

  /* MAXLOC / MINLOC on the Fortran pairs: (value, index) of the same type; ties take the
   * lower index */
  int32_t pi[2] = {rank % 2 ? 50 : rank, 10 * rank}, pio[2];
  MPI_Allreduce(pi, pio, 1, MPI_2INTEGER, MPI_MAXLOC, MPI_COMM_WORLD);
  const int want_v = size > 1 ? 50 : 0, want_i = size > 1 ? 10 : 0;
  CHECK(pio[0] == want_v && pio[1] == want_i, "2INTEGER maxloc (%d,%d)", pio[0], pio[1]);
  float pf[4] = {(float)(rank % 3), (float)rank, -(float)rank, (float)rank}, pfo[4];
  MPI_Allreduce(pf, pfo, 2, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD);
  CHECK(pfo[0] == 0.0f && pfo[1] == 0.0f, "2REAL minloc[0] (%g,%g)", pfo[0], pfo[1]);
  CHECK(pfo[2] == -(float)(size - 1) && pfo[3] == (float)(size - 1), "2REAL minloc[1] (%g,%g)",
        pfo[2], pfo[3]);
  double pd[2] = {rank == size / 2 ? 9.5 : 1.0, 100.0 + rank}, pdo[2];
  MPI_Allreduce(pd, pdo, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD);
  CHECK(pdo[0] == 9.5 && pdo[1] == 100.0 + size / 2, "2DOUBLE_PRECISION maxloc (%g,%g)", pdo[0],
        pdo[1]);
  MPI_Allreduce(pd, pdo, 1, MPI_2DOUBLE_PRECISION, MPI_MINLOC, MPI_COMM_WORLD);
  const double min_v = size > 1 ? 1.0 : 9.5;
  const double min_i = size > 1 ? (size / 2 == 0 ? 101.0 : 100.0) : 100.0;
  CHECK(pdo[0] == min_v && pdo[1] == min_i, "2DOUBLE_PRECISION minloc (%g,%g)", pdo[0], pdo[1]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  sizes_and_names();
  point_to_point();
  reductions();
  MPI_Finalize();
  return check_exit("fortran_types");
}
