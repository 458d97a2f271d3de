/* Blocking collectives against locally computed values: every collective, every root,
 * MPI_IN_PLACE where allowed, zero counts, v/w variants with gaps, non-contiguous
 * datatypes, a sub-communicator, and argument errors under MPI_ERRORS_RETURN. */
/* SLUICE_TEST_RANKS: 1 2 3 4 5 8 */
#include <stdint.h>
#include <string.h>

#include "check.h"

static int rank, size;

static int val(int r, int i) {
  return r * 1000 + i * 3 + 1;
}

static void test_barrier_bcast(MPI_Comm comm) {
  int me, P;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &P);
  CHECK(MPI_Barrier(comm) == MPI_SUCCESS, "barrier");
  static const int counts[] = {0, 1, 5, 1000, 5000, 100000};
  for (int c = 0; c < 6; ++c) {
    int n = counts[c];
    int* buf = malloc((n + 1) * sizeof(int));
    for (int root = 0; root < P; ++root) {
      for (int i = 0; i < n; ++i) buf[i] = me == root ? val(root, i) : -1;
      MPI_Bcast(buf, n, MPI_INT, root, comm);
      for (int i = 0; i < n; ++i)
        if (buf[i] != val(root, i)) {
          CHECK(0, "bcast n=%d root=%d: buf[%d]=%d", n, root, i, buf[i]);
          break;
        }
    }
    free(buf);
  }
}

static void test_reductions(MPI_Comm comm) {
  int me, P;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &P);
  static const int counts[] = {0, 1, 7, 300, 1025, 20000};
  for (int c = 0; c < 6; ++c) {
    int n = counts[c];
    double* in = malloc((n + 1) * sizeof(double));
    double* out = malloc((n + 1) * sizeof(double));
    for (int i = 0; i < n; ++i) in[i] = val(me, i);
      /* expected sum over ranks r of (r*1000 + 3i + 1) */
#define SUM_ALL(i) (1000.0 * P * (P - 1) / 2 + (double)P * (3 * (i) + 1))
    for (int root = 0; root < P; ++root) {
      for (int i = 0; i < n; ++i) out[i] = -1;
      MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, root, comm);
      if (me == root)
        for (int i = 0; i < n; ++i)
          if (out[i] != SUM_ALL(i)) {
            CHECK(0, "reduce n=%d root=%d: out[%d]=%g", n, root, i, out[i]);
            break;
          }
          /* in place at the root */
#ifdef MPICH_VERSION
      /* MPICH 4.0.2 crashes in an in-place MPI_Reduce rooted elsewhere than rank 0. */
      if (root != 0) continue;
#endif
      if (me == root) {
        memcpy(out, in, n * sizeof(double));
        MPI_Reduce(MPI_IN_PLACE, out, n, MPI_DOUBLE, MPI_SUM, root, comm);
        for (int i = 0; i < n; ++i)
          if (out[i] != SUM_ALL(i)) {
            CHECK(0, "reduce in place n=%d root=%d: out[%d]=%g", n, root, i, out[i]);
            break;
          }
      } else {
        MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, root, comm); /* recvbuf ignored here */
      }
    }
    MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm);
    for (int i = 0; i < n; ++i)
      if (out[i] != SUM_ALL(i)) {
        CHECK(0, "allreduce n=%d: out[%d]=%g", n, i, out[i]);
        break;
      }
    memcpy(out, in, n * sizeof(double));
    MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_DOUBLE, MPI_MAX, comm);
    for (int i = 0; i < n; ++i)
      if (out[i] != val(P - 1, i)) {
        CHECK(0, "allreduce max in place n=%d: out[%d]=%g", n, i, out[i]);
        break;
      }
    /* scan / exscan: prefix sums */
    MPI_Scan(in, out, n, MPI_DOUBLE, MPI_SUM, comm);
    for (int i = 0; i < n; ++i) {
      double want = 1000.0 * me * (me + 1) / 2 + (double)(me + 1) * (3 * i + 1);
      if (out[i] != want) {
        CHECK(0, "scan n=%d: out[%d]=%g want %g", n, i, out[i], want);
        break;
      }
    }
    memcpy(out, in, n * sizeof(double));
    MPI_Exscan(MPI_IN_PLACE, out, n, MPI_DOUBLE, MPI_SUM, comm);
    if (me > 0)
      for (int i = 0; i < n; ++i) {
        double want = 1000.0 * (me - 1) * me / 2 + (double)me * (3 * i + 1);
        if (out[i] != want) {
          CHECK(0, "exscan in place n=%d: out[%d]=%g want %g", n, i, out[i], want);
          break;
        }
      }
    free(in);
    free(out);
  }
  /* reduce_scatter and reduce_scatter_block, with and without MPI_IN_PLACE */
  for (int base = 0; base < 3; ++base) {
    int* rc = malloc(P * sizeof(int));
    int total = 0, off = 0;
    for (int i = 0; i < P; ++i) {
      rc[i] = base == 0 ? 0 : (i % 3 == 1 ? 0 : base * 40 + i);
      if (i < me) off += rc[i];
      total += rc[i];
    }
    long long* in = malloc((total + 1) * sizeof(long long));
    long long* out = malloc((total + 1) * sizeof(long long));
    for (int i = 0; i < total; ++i) in[i] = (long long)me * 100000 + i;
    for (int ip = 0; ip < 2; ++ip) {
      if (ip) {
        memcpy(out, in, total * sizeof(long long));
        MPI_Reduce_scatter(MPI_IN_PLACE, out, rc, MPI_LONG_LONG, MPI_SUM, comm);
      } else {
        MPI_Reduce_scatter(in, out, rc, MPI_LONG_LONG, MPI_SUM, comm);
      }
      for (int i = 0; i < rc[me]; ++i) {
        long long want = 100000LL * P * (P - 1) / 2 + (long long)P * (off + i);
        if (out[i] != want) {
          CHECK(0, "reduce_scatter base=%d ip=%d: out[%d]=%lld want %lld", base, ip, i, out[i],
                want);
          break;
        }
      }
    }
    int blk = base * 33;
    long long* bin = malloc((P * blk + 1) * sizeof(long long));
    long long* bout = malloc((P * blk + 1) * sizeof(long long));
    for (int i = 0; i < P * blk; ++i) bin[i] = (long long)me * 7 + i;
    MPI_Reduce_scatter_block(bin, bout, blk, MPI_LONG_LONG, MPI_SUM, comm);
    for (int i = 0; i < blk; ++i) {
      long long want = 7LL * P * (P - 1) / 2 + (long long)P * (me * blk + i);
      if (bout[i] != want) {
        CHECK(0, "reduce_scatter_block blk=%d: out[%d]=%lld", blk, i, bout[i]);
        break;
      }
    }
    free(bin);
    free(bout);
    free(in);
    free(out);
    free(rc);
  }
}

static void test_gather_scatter(MPI_Comm comm) {
  int me, P;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &P);
  static const int counts[] = {0, 1, 10, 3000, 20000};
  for (int c = 0; c < 5; ++c) {
    int n = counts[c];
    int* mine = malloc((n + 1) * sizeof(int));
    int* all = malloc(((size_t)n * P + 1) * sizeof(int));
    for (int i = 0; i < n; ++i) mine[i] = val(me, i);
    for (int root = 0; root < P; ++root) {
      for (int ip = 0; ip < 2; ++ip) {
        for (int i = 0; i < n * P; ++i) all[i] = -1;
        if (ip && me == root) {
          memcpy(all + (size_t)me * n, mine, n * sizeof(int));
          MPI_Gather(MPI_IN_PLACE, n, MPI_INT, all, n, MPI_INT, root, comm);
        } else {
          MPI_Gather(mine, n, MPI_INT, all, n, MPI_INT, root, comm);
        }
        if (me == root)
          for (int r = 0; r < P; ++r)
            for (int i = 0; i < n; ++i)
              if (all[(size_t)r * n + i] != val(r, i)) {
                CHECK(0, "gather n=%d root=%d ip=%d: block %d [%d]=%d", n, root, ip, r, i,
                      all[(size_t)r * n + i]);
                r = P;
                break;
              }
        /* scatter back: block r = val(r + 7, i) */
        if (me == root)
          for (int r = 0; r < P; ++r)
            for (int i = 0; i < n; ++i) all[(size_t)r * n + i] = val(r + 7, i);
        for (int i = 0; i < n; ++i) mine[i] = -1;
        if (ip && me == root)
          MPI_Scatter(all, n, MPI_INT, MPI_IN_PLACE, n, MPI_INT, root, comm);
        else
          MPI_Scatter(all, n, MPI_INT, mine, n, MPI_INT, root, comm);
        if (!(ip && me == root))
          for (int i = 0; i < n; ++i)
            if (mine[i] != val(me + 7, i)) {
              CHECK(0, "scatter n=%d root=%d: [%d]=%d", n, root, i, mine[i]);
              break;
            }
        for (int i = 0; i < n; ++i) mine[i] = val(me, i);
      }
    }
    /* allgather, in place or not */
    for (int ip = 0; ip < 2; ++ip) {
      for (int i = 0; i < n * P; ++i) all[i] = -1;
      if (ip) {
        memcpy(all + (size_t)me * n, mine, n * sizeof(int));
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, n, MPI_INT, comm);
      } else {
        MPI_Allgather(mine, n, MPI_INT, all, n, MPI_INT, comm);
      }
      for (int r = 0; r < P; ++r)
        for (int i = 0; i < n; ++i)
          if (all[(size_t)r * n + i] != val(r, i)) {
            CHECK(0, "allgather n=%d ip=%d: block %d [%d]=%d", n, ip, r, i, all[(size_t)r * n + i]);
            r = P;
            break;
          }
    }
    /* alltoall: block for rank d from rank s = val(s * 31 + d, i) */
    int* snd = malloc(((size_t)n * P + 1) * sizeof(int));
    for (int ip = 0; ip < 2; ++ip) {
      for (int d = 0; d < P; ++d)
        for (int i = 0; i < n; ++i) snd[(size_t)d * n + i] = val(me * 31 + d, i);
      if (ip) {
        memcpy(all, snd, (size_t)n * P * sizeof(int));
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, n, MPI_INT, comm);
      } else {
        MPI_Alltoall(snd, n, MPI_INT, all, n, MPI_INT, comm);
      }
      for (int s = 0; s < P; ++s)
        for (int i = 0; i < n; ++i)
          if (all[(size_t)s * n + i] != val(s * 31 + me, i)) {
            CHECK(0, "alltoall n=%d ip=%d: block %d [%d]=%d", n, ip, s, i, all[(size_t)s * n + i]);
            s = P;
            break;
          }
    }
    free(snd);
    free(mine);
    free(all);
  }
}

/* v-variants: rank r contributes cnt(r) ints; blocks stored in reverse order with gaps. */
static int cnt(int r, int salt) {
  return (r + salt) % 4 == 1 ? 0 : 1 + (r * 13 + salt) % 50;
}

static void test_v(MPI_Comm comm) {
  int me, P;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &P);
  int* counts = malloc(P * sizeof(int));
  int* displs = malloc(P * sizeof(int));
  for (int salt = 0; salt < 3; ++salt) {
    int at = 2;
    for (int r = P - 1; r >= 0; --r) {
      counts[r] = cnt(r, salt);
      displs[r] = at;
      at += counts[r] + 3;
    }
    int total = at;
    int* buf = malloc(total * sizeof(int));
    int* mine = malloc((counts[me] + 1) * sizeof(int));
    for (int i = 0; i < counts[me]; ++i) mine[i] = val(me, i + salt);
    for (int root = 0; root < P; ++root) {
      for (int i = 0; i < total; ++i) buf[i] = -1;
      MPI_Gatherv(mine, counts[me], MPI_INT, buf, counts, displs, MPI_INT, root, comm);
      if (me == root) {
        for (int r = 0; r < P; ++r)
          for (int i = 0; i < counts[r]; ++i)
            CHECK(buf[displs[r] + i] == val(r, i + salt), "gatherv salt=%d root=%d block %d", salt,
                  root, r);
        CHECK(buf[0] == -1 && buf[1] == -1, "gatherv wrote into a gap");
      }
      for (int i = 0; i < counts[me]; ++i) mine[i] = -1;
      if (me == root)
        for (int r = 0; r < P; ++r)
          for (int i = 0; i < counts[r]; ++i) buf[displs[r] + i] = val(r + 5, i);
      MPI_Scatterv(buf, counts, displs, MPI_INT, mine, counts[me], MPI_INT, root, comm);
      for (int i = 0; i < counts[me]; ++i)
        CHECK(mine[i] == val(me + 5, i), "scatterv salt=%d root=%d [%d]=%d", salt, root, i,
              mine[i]);
      for (int i = 0; i < counts[me]; ++i) mine[i] = val(me, i + salt);
    }
#ifdef MPICH_VERSION
    /* MPICH 4.0 drops the block of a 1-rank Allgatherv with a non-zero displacement. */
    if (P == 1) {
      free(buf);
      free(mine);
      continue;
    }
#endif
    for (int ip = 0; ip < 2; ++ip) {
      for (int i = 0; i < total; ++i) buf[i] = -1;
      if (ip) {
        memcpy(buf + displs[me], mine, counts[me] * sizeof(int));
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_INT, comm);
      } else {
        MPI_Allgatherv(mine, counts[me], MPI_INT, buf, counts, displs, MPI_INT, comm);
      }
      for (int r = 0; r < P; ++r)
        for (int i = 0; i < counts[r]; ++i)
          CHECK(buf[displs[r] + i] == val(r, i + salt), "allgatherv salt=%d ip=%d block %d", salt,
                ip, r);
    }
    free(buf);
    free(mine);
  }
  /* alltoallv: s sends (s + 2d) % 5 * 10 ints to d; and alltoallw with the same layout in
     bytes, receiving into a strided vector type for one peer */
  int *sc = malloc(P * sizeof(int)), *sd = malloc(P * sizeof(int));
  int *rc = malloc(P * sizeof(int)), *rd = malloc(P * sizeof(int));
  int st = 0, rt = 1;
  for (int d = 0; d < P; ++d) {
    sc[d] = (me + 2 * d) % 5 * 10;
    sd[d] = st;
    st += sc[d] + 1;
  }
  for (int s = P - 1; s >= 0; --s) {
    rc[s] = (s + 2 * me) % 5 * 10;
    rd[s] = rt;
    rt += rc[s] + 2;
  }
  int* sb = malloc((st + 1) * sizeof(int));
  int* rb = malloc((rt + 1) * sizeof(int));
  for (int d = 0; d < P; ++d)
    for (int i = 0; i < sc[d]; ++i) sb[sd[d] + i] = val(me * 17 + d, i);
  for (int i = 0; i < rt; ++i) rb[i] = -1;
  MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm);
  for (int s = 0; s < P; ++s)
    for (int i = 0; i < rc[s]; ++i)
      CHECK(rb[rd[s] + i] == val(s * 17 + me, i), "alltoallv from %d [%d]=%d", s, i, rb[rd[s] + i]);
  CHECK(rb[0] == -1, "alltoallv wrote into a gap");
  MPI_Datatype* types = malloc(P * sizeof(MPI_Datatype));
  int *sdb = malloc(P * sizeof(int)), *rdb = malloc(P * sizeof(int));
  for (int i = 0; i < P; ++i) {
    types[i] = MPI_INT;
    sdb[i] = sd[i] * (int)sizeof(int);
    rdb[i] = rd[i] * (int)sizeof(int);
  }
  for (int i = 0; i < rt; ++i) rb[i] = -1;
  MPI_Alltoallw(sb, sc, sdb, types, rb, rc, rdb, types, comm);
  for (int s = 0; s < P; ++s)
    for (int i = 0; i < rc[s]; ++i)
      CHECK(rb[rd[s] + i] == val(s * 17 + me, i), "alltoallw from %d [%d]=%d", s, i, rb[rd[s] + i]);
  free(types);
  free(sdb);
  free(rdb);
  free(sb);
  free(rb);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
  free(counts);
  free(displs);
}

/* A user op over the spaced pairs below: called with the derived type, its layout. */
static void add_ints(void* in, void* inout, int* len, MPI_Datatype* type) {
  MPI_Aint lb, extent;
  MPI_Type_get_extent(*type, &lb, &extent);
  for (int e = 0; e < *len; ++e) {
    int* x = (int*)((char*)in + e * extent);
    int* y = (int*)((char*)inout + e * extent);
    y[0] += x[0];
    y[1] += x[1];
  }
}

/* A column of a 6x4 row-major matrix (a vector type) through bcast, gather and allreduce. */
static void test_noncontiguous(MPI_Comm comm) {
  int me, P;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &P);
  MPI_Datatype col, col_r;
  MPI_Type_vector(6, 1, 4, MPI_INT, &col);
  MPI_Type_create_resized(col, 0, sizeof(int), &col_r);
  MPI_Type_commit(&col);
  MPI_Type_commit(&col_r);
  int m[24];
  for (int i = 0; i < 24; ++i) m[i] = me == 0 ? i : -1;
  MPI_Bcast(m, 1, col, 0, comm); /* column 0 only */
  for (int r = 0; r < 6; ++r) CHECK(m[r * 4] == r * 4, "bcast column: row %d = %d", r, m[r * 4]);
  if (me != 0) CHECK(m[1] == -1, "bcast column touched column 1");
  /* allreduce over pairs of ints spaced 3 ints apart (a contiguous pair resized to 3 ints:
     non-contiguous as a buffer, but a run of one predefined type per element) */
  MPI_Datatype pair, pair_r;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_create_resized(pair, 0, 3 * sizeof(int), &pair_r);
  MPI_Type_commit(&pair_r);
  int a[24], b[24];
  for (int i = 0; i < 24; ++i) {
    a[i] = me + i;
    b[i] = -7;
  }
  MPI_Op add;
  MPI_Op_create(add_ints, 1, &add);
  for (int k = 0; k < 2; ++k) {
#ifdef MPICH_VERSION
    if (k == 0) continue; /* MPICH allows predefined ops on predefined types only */
#endif
    for (int i = 0; i < 24; ++i) b[i] = -7;
    MPI_Allreduce(a, b, 8, pair_r, k == 0 ? MPI_SUM : add, comm);
    for (int i = 0; i < 24; ++i) {
      int want = i % 3 == 2 ? -7 : P * i + P * (P - 1) / 2;
      CHECK(b[i] == want, "allreduce (%s) of spaced pairs: [%d] = %d, want %d",
            k == 0 ? "MPI_SUM" : "user op", i, b[i], want);
    }
  }
  MPI_Op_free(&add);
  MPI_Type_free(&pair);
  MPI_Type_free(&pair_r);
  /* gather: each rank's 6 ints into column `rank` of a 6 x P matrix at the root */
  int* g = malloc(6 * P * sizeof(int));
  MPI_Datatype gcol, gcol_r;
  MPI_Type_vector(6, 1, P, MPI_INT, &gcol);
  MPI_Type_create_resized(gcol, 0, sizeof(int), &gcol_r);
  MPI_Type_commit(&gcol_r);
  int mine[6];
  for (int i = 0; i < 6; ++i) mine[i] = me * 10 + i;
  MPI_Gather(mine, 6, MPI_INT, g, 1, gcol_r, P - 1, comm);
  if (me == P - 1)
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < P; ++c)
        CHECK(g[r * P + c] == c * 10 + r, "gather into columns: [%d][%d] = %d", r, c, g[r * P + c]);
  free(g);
  MPI_Type_free(&gcol);
  MPI_Type_free(&gcol_r);
  MPI_Type_free(&col);
  MPI_Type_free(&col_r);
}

static void test_errors(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int x = 1, y = 0, cls;
  int rc = MPI_Bcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_ROOT, "bcast with root %d: class %d", size, cls);
  rc = MPI_Bcast(&x, -1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_COUNT, "bcast with count -1: class %d", cls);
  rc = MPI_Bcast(&x, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_TYPE, "bcast with MPI_DATATYPE_NULL: class %d", cls);
  rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_OP, "allreduce with MPI_OP_NULL: class %d", cls);
  rc = MPI_Barrier(MPI_COMM_NULL);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_COMM, "barrier on MPI_COMM_NULL: class %d", cls);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int pass = 0; pass < 2; ++pass) {
    /* pass 1: the even ranks in reverse order (a different group and rank mapping) */
    MPI_Comm comm = MPI_COMM_WORLD;
    if (pass == 1) {
      MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &comm);
      if (rank % 2 == 1) {
        MPI_Comm_free(&comm);
        continue;
      }
    }
    test_barrier_bcast(comm);
    test_reductions(comm);
    test_gather_scatter(comm);
    test_v(comm);
    test_noncontiguous(comm);
    if (pass == 1) MPI_Comm_free(&comm);
  }
  test_errors();
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return check_exit("coll_basic");
}
