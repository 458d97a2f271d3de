/* The external32 representation: MPI_Pack_external / MPI_Unpack_external /
 * MPI_Pack_external_size, checked byte for byte against the standard's format (big-endian,
 * IEEE, MPI_LONG as 4 bytes, MPI_LONG_DOUBLE as binary128) for predefined types and for
 * vector, struct and subarray types, and round trips back to the native values. */
/* SLUICE_TEST_RANKS: 1 2 */
#include <complex.h>
#include <stddef.h>
#include <string.h>

#include "check.h"

static unsigned char buf[256];

/* Packs `count` of `type` at `in` and checks the bytes against `expect` (n bytes). */
static void expect_bytes(const char* what, const void* in, int count, MPI_Datatype type,
                         const unsigned char* expect, MPI_Aint n) {
  MPI_Aint size = -1, position = 0;
  MPI_Pack_external_size("external32", count, type, &size);
  CHECK(size == n, "%s: external32 size %ld, expected %ld", what, (long)size, (long)n);
  memset(buf, 0xee, sizeof buf);
  MPI_Pack_external("external32", in, count, type, buf, sizeof buf, &position);
  CHECK(position == n, "%s: position %ld after packing, expected %ld", what, (long)position,
        (long)n);
  int bad = -1;
  for (MPI_Aint i = 0; i < n && bad < 0; ++i)
    if (buf[i] != expect[i]) bad = (int)i;
  CHECK(bad < 0, "%s: byte %d is %02x, expected %02x", what, bad, bad < 0 ? 0 : buf[bad],
        bad < 0 ? 0 : expect[bad]);
}

/* Unpacks what expect_bytes left in buf into `out`. */
static void unpack_back(const void* unused, int count, MPI_Datatype type, void* out, MPI_Aint n) {
  (void)unused;
  MPI_Aint position = 0;
  MPI_Unpack_external("external32", buf, n, &position, out, count, type);
  CHECK(position == n, "unpack position %ld, expected %ld", (long)position, (long)n);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);

  {
    const int v[2] = {0x01020304, -2};
    const unsigned char e[] = {1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe};
    int back[2] = {0, 0};
    expect_bytes("int", v, 2, MPI_INT, e, sizeof e);
    unpack_back(v, 2, MPI_INT, back, sizeof e);
    CHECK(back[0] == v[0] && back[1] == v[1], "int round trip %x %d", back[0], back[1]);
  }
  {
    const short v = 0x0102;
    const unsigned char e[] = {1, 2};
    expect_bytes("short", &v, 1, MPI_SHORT, e, sizeof e);
  }
  {
    /* 4 bytes in external32: the low 32 bits; a small negative value survives. */
    const long v[2] = {0x11223344L, -5L};
    const unsigned char e[] = {0x11, 0x22, 0x33, 0x44, 0xff, 0xff, 0xff, 0xfb};
    long back[2] = {0, 0};
    expect_bytes("long", v, 2, MPI_LONG, e, sizeof e);
    unpack_back(v, 2, MPI_LONG, back, sizeof e);
    CHECK(back[0] == v[0] && back[1] == v[1], "long round trip %ld %ld", back[0], back[1]);
  }
  {
    const double v = 1.0;
    const unsigned char e[] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0};
    double back = 0;
    expect_bytes("double", &v, 1, MPI_DOUBLE, e, sizeof e);
    unpack_back(&v, 1, MPI_DOUBLE, &back, sizeof e);
    CHECK(back == 1.0, "double round trip %g", back);
  }
  {
    const long double v[2] = {1.5L, -0.375L};
    unsigned char e[32] = {0x3f, 0xff, 0x80};
    e[16] = 0xbf, e[17] = 0xfd, e[18] = 0x80; /* -1.1b x 2^-2 */
    long double back[2] = {0, 0};
    expect_bytes("long double", v, 2, MPI_LONG_DOUBLE, e, sizeof e);
    unpack_back(v, 2, MPI_LONG_DOUBLE, back, sizeof e);
    CHECK(back[0] == v[0] && back[1] == v[1], "long double round trip %Lg %Lg", back[0], back[1]);
  }
  {
    const float complex v = 1.0f - 2.0f * I;
    const unsigned char e[] = {0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0};
    expect_bytes("float complex", &v, 1, MPI_C_FLOAT_COMPLEX, e, sizeof e);
  }
  {
    /* A vector picks every other int. */
    const int v[4] = {1, 2, 3, 4};
    const unsigned char e[] = {0, 0, 0, 1, 0, 0, 0, 3};
    int back[4] = {0, 0, 0, 0};
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    expect_bytes("vector", v, 1, vec, e, sizeof e);
    unpack_back(v, 1, vec, back, sizeof e);
    CHECK(back[0] == 1 && back[1] == 0 && back[2] == 3 && back[3] == 0, "vector round trip");
    MPI_Type_free(&vec);
  }
  {
    /* A struct with padding in memory and none on the wire, two elements (the peer MPICH
     * 4.0 dies on such a struct in MPI_Pack_external_size: Sluice only). */
    struct s {
      char c;
      double d;
      short h;
    } v[2] = {{'A', 2.0, 0x0506}, {'B', -2.0, 0x0708}}, back[2];
    const int lengths[3] = {1, 1, 1};
    const MPI_Aint disps[3] = {offsetof(struct s, c), offsetof(struct s, d), offsetof(struct s, h)};
    const MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_SHORT};
    MPI_Datatype st;
    MPI_Type_create_struct(3, lengths, disps, types, &st);
    MPI_Type_commit(&st);
#ifdef SLUICE_MPI
    const unsigned char e[] = {'A', 0x40, 0, 0, 0, 0, 0, 0, 0, 5, 6,
                               'B', 0xc0, 0, 0, 0, 0, 0, 0, 0, 7, 8};
    expect_bytes("struct", v, 2, st, e, sizeof e);
    memset(back, 0, sizeof back);
    unpack_back(v, 2, st, back, sizeof e);
    CHECK(back[1].c == 'B' && back[1].d == -2.0 && back[1].h == 0x0708 && back[0].c == 'A',
          "struct round trip");
#else
    (void)v, (void)back;
#endif
    MPI_Type_free(&st);
  }
  {
    /* A 2x2 block at (1,1) of a 3x4 C array of ints: 5 6 9 10. */
    int v[12], back[12];
    for (int i = 0; i < 12; ++i) v[i] = i;
    const int sizes[2] = {3, 4}, subsizes[2] = {2, 2}, starts[2] = {1, 1};
    MPI_Datatype sub;
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &sub);
    MPI_Type_commit(&sub);
    const unsigned char e[] = {0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0, 9, 0, 0, 0, 10};
    expect_bytes("subarray", v, 1, sub, e, sizeof e);
    memset(back, 0, sizeof back);
    unpack_back(v, 1, sub, back, sizeof e);
    CHECK(back[5] == 5 && back[6] == 6 && back[9] == 9 && back[10] == 10 && back[0] == 0 &&
              back[7] == 0,
          "subarray round trip");
    MPI_Type_free(&sub);
  }
  {
    /* Successive packs append at the position. */
    const int a = 7;
    const double b = 0.5;
    MPI_Aint position = 0;
    MPI_Pack_external("external32", &a, 1, MPI_INT, buf, sizeof buf, &position);
    MPI_Pack_external("external32", &b, 1, MPI_DOUBLE, buf, sizeof buf, &position);
    CHECK(position == 12 && buf[3] == 7 && buf[4] == 0x3f && buf[5] == 0xe0,
          "appended packs: position %ld", (long)position);
  }
#ifdef SLUICE_MPI
  {
    /* Sluice's own answers where MPI-3.1 leaves room: pair types, a wrong datarep. */
    const struct {
      double d;
      int i;
    } v = {1.0, 3};
    const unsigned char e[] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3};
    expect_bytes("MPI_DOUBLE_INT", &v, 1, MPI_DOUBLE_INT, e, sizeof e);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Aint size = 0;
    const int rc = MPI_Pack_external_size("native", 1, MPI_INT, &size);
    CHECK(rc == MPI_ERR_UNSUPPORTED_DATAREP, "datarep \"native\" gave %d", rc);
  }
#endif

  MPI_Finalize();
  return check_exit("pack_external");
}
