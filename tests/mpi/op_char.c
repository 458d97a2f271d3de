/* MPI_SUM/PROD/MAX/MIN on the C character types: MPI_SIGNED_CHAR and MPI_UNSIGNED_CHAR are
 * C integers (MPI-3.1 §5.9.2); MPI_CHAR is outside every group of the standard, but Open MPI
 * and MPICH reduce it as a (signed on x86) char and programs expect that, so Sluice does too.
 * The portable part keeps values where the peers agree; two checks run under Sluice only,
 * because the peers differ there: MPICH 4.0.2 (ch4) compares MPI_UNSIGNED_CHAR as signed
 * in MPI_MAX, and Open MPI 4.1.4 saturates 8-bit sums instead of wrapping (C's unsigned
 * arithmetic, which Sluice follows). */
/* SLUICE_TEST_RANKS: 1 2 3 4 8 */
#include "check.h"

static int rank, size;

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  enum { N = 64 };
  char c[N], cr[N];
  signed char s[N], sr[N];
  unsigned char u[N], ur[N];
  const int rs = size * (size - 1) / 2;
  for (int i = 0; i < N; ++i) {
    c[i] = (char)(i % 16 - 8 + rank);
    s[i] = (signed char)(8 - i % 16 - rank);
    u[i] = (unsigned char)(i % 16 + rank);
  }
  /* SUM, without overflow */
  int rc = MPI_Allreduce(c, cr, N, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
  CHECK(rc == MPI_SUCCESS, "MPI_SUM on MPI_CHAR rejected (%d)", rc);
  for (int i = 0; i < N && rc == MPI_SUCCESS; ++i) {
    const int want = (i % 16 - 8) * size + rs;
    CHECK(cr[i] == want, "char sum [%d] = %d, want %d", i, cr[i], want);
  }
  rc = MPI_Allreduce(s, sr, N, MPI_SIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD);
  CHECK(rc == MPI_SUCCESS, "MPI_SUM on MPI_SIGNED_CHAR rejected (%d)", rc);
  for (int i = 0; i < N; ++i) {
    const int want = (8 - i % 16) * size - rs;
    CHECK(sr[i] == want, "signed char sum [%d] = %d, want %d", i, sr[i], want);
  }
  rc = MPI_Allreduce(u, ur, N, MPI_UNSIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD);
  CHECK(rc == MPI_SUCCESS, "MPI_SUM on MPI_UNSIGNED_CHAR rejected (%d)", rc);
  for (int i = 0; i < N; ++i) {
    const int want = (i % 16) * size + rs;
    CHECK(ur[i] == want, "unsigned char sum [%d] = %u, want %d", i, ur[i], want);
  }

  /* MAX / MIN: signed for MPI_CHAR and MPI_SIGNED_CHAR */
  for (int i = 0; i < N; ++i) {
    c[i] = (char)(rank % 2 ? -(i + rank) : i + rank);
    u[i] = (unsigned char)(rank % 2 ? 120 - rank : rank + i);
  }
  rc = MPI_Allreduce(c, cr, N, MPI_CHAR, MPI_MAX, MPI_COMM_WORLD);
  CHECK(rc == MPI_SUCCESS, "MPI_MAX on MPI_CHAR rejected (%d)", rc);
  for (int i = 0; i < N && rc == MPI_SUCCESS; ++i) {
    int want = -1000;
    for (int r = 0; r < size; ++r) {
      const int v = r % 2 ? -(i + r) : i + r;
      if (v > want) want = v;
    }
    CHECK(cr[i] == want, "char max [%d] = %d, want %d", i, cr[i], want);
  }
  rc = MPI_Allreduce(c, cr, N, MPI_CHAR, MPI_MIN, MPI_COMM_WORLD);
  CHECK(rc == MPI_SUCCESS, "MPI_MIN on MPI_CHAR rejected (%d)", rc);
  for (int i = 0; i < N && rc == MPI_SUCCESS; ++i) {
    int want = 1000;
    for (int r = 0; r < size; ++r) {
      const int v = r % 2 ? -(i + r) : i + r;
      if (v < want) want = v;
    }
    CHECK(cr[i] == want, "char min [%d] = %d, want %d", i, cr[i], want);
  }
  MPI_Allreduce(c, sr, N, MPI_SIGNED_CHAR, MPI_MIN, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) CHECK(sr[i] == cr[i], "signed char min [%d] = %d", i, sr[i]);
  MPI_Allreduce(u, ur, N, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) {
    int want = 0;
    for (int r = 0; r < size; ++r) {
      const int v = r % 2 ? 120 - r : r + i;
      if (v > want) want = v;
    }
    CHECK(ur[i] == want, "unsigned char max [%d] = %d, want %d", i, ur[i], want);
  }

  /* PROD on MPI_CHAR, a Reduce to the last rank */
  char p = (char)(rank % 3 == 0 ? 1 : (rank % 3 == 1 ? -1 : 2)), pr = 0;
  rc = MPI_Reduce(&p, &pr, 1, MPI_CHAR, MPI_PROD, size - 1, MPI_COMM_WORLD);
  CHECK(rc == MPI_SUCCESS, "MPI_PROD on MPI_CHAR rejected (%d)", rc);
  if (rank == size - 1 && rc == MPI_SUCCESS) {
    int want = 1;
    for (int r = 0; r < size; ++r) want *= r % 3 == 0 ? 1 : (r % 3 == 1 ? -1 : 2);
    CHECK(pr == want, "char prod = %d, want %d", pr, want);
  }

#ifdef SLUICE_MPI
  /* unsigned comparison above 127, and 8-bit arithmetic wrapping modulo 256 */
  for (int i = 0; i < N; ++i) u[i] = (unsigned char)(rank % 2 ? 250 - rank : rank + i);
  MPI_Allreduce(u, ur, N, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) {
    const int want = size > 1 ? 249 : i;
    CHECK(ur[i] == want, "unsigned char max > 127 [%d] = %d, want %d", i, ur[i], want);
  }
  for (int i = 0; i < N; ++i) u[i] = (unsigned char)(i * 4 + rank);
  MPI_Allreduce(u, ur, N, MPI_UNSIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < N; ++i) {
    const unsigned char want = (unsigned char)((i * 4) * size + rs);
    CHECK(ur[i] == want, "unsigned char wrapping sum [%d] = %u, want %u", i, ur[i], want);
  }
  signed char sp = (signed char)(rank + 3), spr = 0;
  MPI_Allreduce(&sp, &spr, 1, MPI_SIGNED_CHAR, MPI_PROD, MPI_COMM_WORLD);
  unsigned want = 1;
  for (int r = 0; r < size; ++r) want *= (unsigned)(r + 3);
  CHECK(spr == (signed char)(want & 0xff), "signed char wrapping prod = %d, want %d", spr,
        (signed char)(want & 0xff));
#endif

  MPI_Finalize();
  return check_exit("op_char");
}
