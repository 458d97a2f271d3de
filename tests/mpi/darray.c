/* MPI_Type_create_darray (MPI-3.1 §4.1.4): the type map of each process's block, read back by
 * packing a global array whose element i holds i, against hand-computed index lists for block
 * (default and given size), cyclic (default and cyclic(k)) and undistributed dimensions, in
 * C and Fortran order, 1 to 3 dimensions; the extent (the whole array), the size, the envelope
 * and contents, a send of one block, and the argument errors. */
/* SLUICE_TEST_RANKS: 1 2 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define MAX_ELEMS 64

struct Case {
  const char* what;
  int size, rank, ndims;
  int gsizes[3], distribs[3], dargs[3], psizes[3];
  int order;
  int n;                 /* expected elements */
  int expect[MAX_ELEMS]; /* global indices (in the array's memory order), type-map order */
};

#define B MPI_DISTRIBUTE_BLOCK
#define C MPI_DISTRIBUTE_CYCLIC
#define N MPI_DISTRIBUTE_NONE
#define D MPI_DISTRIBUTE_DFLT_DARG

static const struct Case cases[] = {
    /* 10 elements in blocks of ceil(10/3) = 4: 0-3, 4-7, 8-9. */
    {"block 10/3 rank 0", 3, 0, 1, {10}, {B}, {D}, {3}, MPI_ORDER_C, 4, {0, 1, 2, 3}},
    {"block 10/3 rank 1", 3, 1, 1, {10}, {B}, {D}, {3}, MPI_ORDER_C, 4, {4, 5, 6, 7}},
    {"block 10/3 rank 2", 3, 2, 1, {10}, {B}, {D}, {3}, MPI_ORDER_C, 2, {8, 9}},
    /* Block size 5 given over 3 processes: the last one holds nothing. */
    {"block(5) 10/3 rank 2", 3, 2, 1, {10}, {B}, {5}, {3}, MPI_ORDER_C, 0, {0}},
    {"block(5) 10/3 rank 1", 3, 1, 1, {10}, {B}, {5}, {3}, MPI_ORDER_C, 5, {5, 6, 7, 8, 9}},
    /* Cyclic(1): every third element. */
    {"cyclic 7/3 rank 0", 3, 0, 1, {7}, {C}, {D}, {3}, MPI_ORDER_C, 3, {0, 3, 6}},
    {"cyclic 7/3 rank 2", 3, 2, 1, {7}, {C}, {D}, {3}, MPI_ORDER_C, 2, {2, 5}},
    /* Cyclic(2) over 3: blocks of 2 at (r + 3j) * 2. */
    {"cyclic(2) 10/3 rank 0", 3, 0, 1, {10}, {C}, {2}, {3}, MPI_ORDER_C, 4, {0, 1, 6, 7}},
    {"cyclic(2) 10/3 rank 1", 3, 1, 1, {10}, {C}, {2}, {3}, MPI_ORDER_C, 4, {2, 3, 8, 9}},
    {"cyclic(2) 10/3 rank 2", 3, 2, 1, {10}, {C}, {2}, {3}, MPI_ORDER_C, 2, {4, 5}},
    /* 4x6, C order (element (i,j) at 6i + j), rows block over 2, columns cyclic(2) over 2;
       process grid row-major: rank = 2 * row coordinate + column coordinate. */
    {"4x6 C block x cyclic(2) rank 3",
     4,
     3,
     2,
     {4, 6},
     {B, C},
     {D, 2},
     {2, 2},
     MPI_ORDER_C,
     4,
     {14, 15, 20, 21}},
    {"4x6 C block x cyclic(2) rank 1",
     4,
     1,
     2,
     {4, 6},
     {B, C},
     {D, 2},
     {2, 2},
     MPI_ORDER_C,
     4,
     {2, 3, 8, 9}},
    {"4x6 C block x cyclic(2) rank 2",
     4,
     2,
     2,
     {4, 6},
     {B, C},
     {D, 2},
     {2, 2},
     MPI_ORDER_C,
     8,
     {12, 13, 16, 17, 18, 19, 22, 23}},
    /* 4x6, Fortran order (element (i,j) at i + 4j), rows cyclic over 2, columns whole. */
    {"4x6 Fortran cyclic x none rank 1",
     2,
     1,
     2,
     {4, 6},
     {C, N},
     {D, D},
     {2, 1},
     MPI_ORDER_FORTRAN,
     12,
     {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23}},
    /* The same array and distribution in C order: rows i = 1, 3 of 6 elements each. */
    {"4x6 C cyclic x none rank 1",
     2,
     1,
     2,
     {4, 6},
     {C, N},
     {D, D},
     {2, 1},
     MPI_ORDER_C,
     12,
     {6, 7, 8, 9, 10, 11, 18, 19, 20, 21, 22, 23}},
    /* 4x6 Fortran order, block x block over 2x2, rank 1 = coordinates (0, 1): rows 0-1,
       columns 3-5. */
    {"4x6 Fortran block x block rank 1",
     4,
     1,
     2,
     {4, 6},
     {B, B},
     {D, D},
     {2, 2},
     MPI_ORDER_FORTRAN,
     6,
     {12, 13, 16, 17, 20, 21}},
    /* 3x2x5 C order (element (i,j,k) at 10i + 5j + k), none x block(1) x block(3), grid
       1x2x2, rank 2 = coordinates (0, 1, 0): j = 1, k = 0-2. */
    {"3x2x5 C none x block(1) x block(3) rank 2",
     4,
     2,
     3,
     {3, 2, 5},
     {N, B, B},
     {D, 1, 3},
     {1, 2, 2},
     MPI_ORDER_C,
     9,
     {5, 6, 7, 15, 16, 17, 25, 26, 27}},
};

static void check_case(const struct Case* c) {
  MPI_Datatype t;
  int rc = MPI_Type_create_darray(c->size, c->rank, c->ndims, c->gsizes, c->distribs, c->dargs,
                                  c->psizes, c->order, MPI_INT, &t);
  CHECK(rc == MPI_SUCCESS, "%s: rc %d", c->what, rc);
  if (rc != MPI_SUCCESS) return;
  MPI_Type_commit(&t);
  int total = 1;
  for (int d = 0; d < c->ndims; ++d) total *= c->gsizes[d];
  MPI_Aint lb, extent;
  int size;
  MPI_Type_get_extent(t, &lb, &extent);
  MPI_Type_size(t, &size);
  CHECK(lb == 0 && extent == (MPI_Aint)(total * sizeof(int)), "%s: lb %ld extent %ld", c->what,
        (long)lb, (long)extent);
  CHECK(size == c->n * (int)sizeof(int), "%s: size %d, expected %d elements", c->what, size, c->n);

  int global[MAX_ELEMS], packed[MAX_ELEMS];
  for (int i = 0; i < total; ++i) global[i] = i;
  int pos = 0;
  memset(packed, -1, sizeof packed);
  MPI_Pack(global, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD);
  CHECK(pos == size, "%s: packed %d bytes", c->what, pos);
  for (int i = 0; i < c->n; ++i)
    CHECK(packed[i] == c->expect[i], "%s: element %d is %d, expected %d", c->what, i, packed[i],
          c->expect[i]);

  /* Unpacking puts them back at their places, and nothing elsewhere. */
  int back[MAX_ELEMS];
  for (int i = 0; i < total; ++i) back[i] = -1;
  pos = 0;
  MPI_Unpack(packed, sizeof packed, &pos, back, 1, t, MPI_COMM_WORLD);
  int held = 0;
  for (int i = 0; i < total; ++i) {
    int expected = -1;
    for (int k = 0; k < c->n; ++k)
      if (c->expect[k] == i) expected = i;
    held += expected >= 0;
    CHECK(back[i] == expected, "%s: unpacked element %d is %d", c->what, i, back[i]);
  }
  CHECK(held == c->n, "%s", c->what);

  int ni, na, nd, combiner;
  MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_DARRAY && ni == 4 * c->ndims + 4 && na == 0 && nd == 1,
        "%s: envelope %d %d %d combiner %d", c->what, ni, na, nd, combiner);
  if (combiner == MPI_COMBINER_DARRAY && ni <= 16 && nd == 1) {
    int ints[16];
    MPI_Aint addr[1];
    MPI_Datatype types[1];
    MPI_Type_get_contents(t, ni, 0, 1, ints, addr, types);
    CHECK(ints[0] == c->size && ints[1] == c->rank && ints[2] == c->ndims, "%s: contents", c->what);
    for (int d = 0; d < c->ndims; ++d)
      CHECK(ints[3 + d] == c->gsizes[d] && ints[3 + c->ndims + d] == c->distribs[d] &&
                ints[3 + 2 * c->ndims + d] == c->dargs[d] &&
                ints[3 + 3 * c->ndims + d] == c->psizes[d],
            "%s: contents of dimension %d", c->what, d);
    CHECK(ints[3 + 4 * c->ndims] == c->order && types[0] == MPI_INT, "%s: order/type", c->what);
  }
  MPI_Type_free(&t);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) check_case(&cases[i]);

  /* A block sent with the darray type arrives where the receiver's type puts it: each rank of
     a 1-D cyclic(2) distribution over the job sends its part of a 12-element array to rank 0,
     which assembles the whole array. */
  {
    int g[1] = {12}, dist[1] = {C}, darg[1] = {2}, ps[1] = {nprocs};
    MPI_Datatype mine;
    MPI_Type_create_darray(nprocs, rank, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &mine);
    MPI_Type_commit(&mine);
    int src[12], dst[12];
    for (int i = 0; i < 12; ++i) src[i] = 100 + i, dst[i] = -1;
    MPI_Request req;
    MPI_Isend(src, 1, mine, 0, 5, MPI_COMM_WORLD, &req);
    if (rank == 0) {
      for (int r = 0; r < nprocs; ++r) {
        MPI_Datatype theirs;
        MPI_Type_create_darray(nprocs, r, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &theirs);
        MPI_Type_commit(&theirs);
        MPI_Recv(dst, 1, theirs, r, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Type_free(&theirs);
      }
      for (int i = 0; i < 12; ++i)
        CHECK(dst[i] == 100 + i, "assembled element %d is %d", i, dst[i]);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Type_free(&mine);
  }

  /* Argument errors. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  {
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int g[1] = {10}, dist[1] = {B}, darg[1] = {3}, ps[1] = {3};
    CHECK(
        MPI_Type_create_darray(3, 0, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS,
        "%s", "3 blocks of 3 cannot hold 10 elements");
#ifdef SLUICE_MPI /* MPICH 4.0.2 does not check that the grid has `size` processes */
    int ps2[1] = {2};
    darg[0] = D;
    CHECK(MPI_Type_create_darray(3, 0, 1, g, dist, darg, ps2, MPI_ORDER_C, MPI_INT, &t) !=
              MPI_SUCCESS,
          "%s", "a grid of 2 for size 3");
#endif
    CHECK(
        MPI_Type_create_darray(3, 3, 1, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t) != MPI_SUCCESS,
        "%s", "rank 3 of 3");
  }
  MPI_Finalize();
  return check_exit("darray");
}
