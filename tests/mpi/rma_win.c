/* MPI one-sided communication, for each way of making a window (MPI_Win_allocate,
   MPI_Win_create on user memory, MPI_Win_allocate_shared, MPI_Win_create_dynamic): puts and
   gets with verified data under fence, lock/unlock and post/start/complete/wait; a shared
   counter incremented by every rank with MPI_Fetch_and_op and with MPI_Accumulate;
   accumulate from all ranks; read-modify-write under an exclusive lock that loses no
   update; compare-and-swap; get-accumulate; request-based operations; derived datatypes on
   the target side; the window attributes, name and error handler. The windows live on a
   communicator whose ranks are MPI_COMM_WORLD's in reverse order. */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define N 64      /* longs and doubles per rank in the window */
#define ROUNDS 50 /* increments per rank */

enum flavor { ALLOCATE, CREATE, SHARED, DYNAMIC, NFLAVORS };
static const char* flavor_name[] = {"allocate", "create", "allocate_shared", "dynamic"};

static int rank, size;
/* The windows' communicator: MPI_COMM_WORLD in reverse order, so that a window rank is not
   the process's rank in MPI_COMM_WORLD. */
static MPI_Comm comm;

typedef struct {
  long cnt[N];
  double d[N];
} layout;

static MPI_Win win;
static layout* mine;
static void* user_mem;
static MPI_Aint* bases; /* dynamic: each rank's address of its layout */

static MPI_Aint disp_of(int target, MPI_Aint byte_offset) {
  return bases ? bases[target] + byte_offset : byte_offset;
}

static void make_window(int f) {
  bases = NULL;
  user_mem = NULL;
  switch (f) {
    case ALLOCATE:
      MPI_Win_allocate(sizeof(layout), 1, MPI_INFO_NULL, comm, &mine, &win);
      break;
    case CREATE:
      MPI_Alloc_mem(sizeof(layout), MPI_INFO_NULL, &user_mem);
      mine = user_mem;
      MPI_Win_create(mine, sizeof(layout), 1, MPI_INFO_NULL, comm, &win);
      break;
    case SHARED:
      MPI_Win_allocate_shared(sizeof(layout), 1, MPI_INFO_NULL, comm, &mine, &win);
      break;
    case DYNAMIC: {
      MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win);
      user_mem = malloc(sizeof(layout));
      mine = user_mem;
      MPI_Win_attach(win, mine, sizeof(layout));
      MPI_Aint a;
      MPI_Get_address(mine, &a);
      bases = malloc(sizeof(MPI_Aint) * (size_t)size);
      MPI_Allgather(&a, 1, MPI_AINT, bases, 1, MPI_AINT, comm);
      break;
    }
  }
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  memset(mine, 0, sizeof(layout));
  MPI_Win_unlock(rank, win);
  MPI_Barrier(comm);
}

static void free_window(int f) {
  if (f == DYNAMIC) MPI_Win_detach(win, mine);
  MPI_Win_free(&win);
  CHECK(win == MPI_WIN_NULL, "Win_free did not reset the handle");
  if (f == CREATE) MPI_Free_mem(user_mem);
  if (f == DYNAMIC) free(user_mem);
  free(bases);
  bases = NULL;
}

#define OFF_CNT(i) ((MPI_Aint)offsetof(layout, cnt) + (MPI_Aint)(i) * (MPI_Aint)sizeof(long))
#define OFF_D(i) ((MPI_Aint)offsetof(layout, d) + (MPI_Aint)(i) * (MPI_Aint)sizeof(double))

static void test_fence(int f) {
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double src[N], got[N];
  for (int i = 0; i < N; ++i) src[i] = rank * 1000 + i;
  MPI_Win_fence(0, win);
  MPI_Put(src, N, MPI_DOUBLE, right, disp_of(right, OFF_D(0)), N, MPI_DOUBLE, win);
  MPI_Win_fence(0, win);
  for (int i = 0; i < N; ++i)
    CHECK(mine->d[i] == left * 1000 + i, "%s fence put: d[%d] = %g", flavor_name[f], i, mine->d[i]);
  MPI_Get(got, N, MPI_DOUBLE, left, disp_of(left, OFF_D(0)), N, MPI_DOUBLE, win);
  MPI_Win_fence(0, win);
  int left2 = (left + size - 1) % size;
  for (int i = 0; i < N; ++i)
    CHECK(got[i] == left2 * 1000 + i, "%s fence get: got[%d] = %g", flavor_name[f], i, got[i]);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
}

static void test_lock_put_get(int f) {
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double src[N], got[N];
  for (int i = 0; i < N; ++i) src[i] = -(rank * 100 + i);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
  MPI_Put(src, N, MPI_DOUBLE, right, disp_of(right, OFF_D(0)), N, MPI_DOUBLE, win);
  MPI_Win_unlock(right, win);
  MPI_Barrier(comm);
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  for (int i = 0; i < N; ++i)
    CHECK(mine->d[i] == -(left * 100 + i), "%s lock put: d[%d] = %g", flavor_name[f], i,
          mine->d[i]);
  MPI_Win_unlock(rank, win);
  MPI_Barrier(comm);
  MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
  MPI_Get(got, N, MPI_DOUBLE, left, disp_of(left, OFF_D(0)), N, MPI_DOUBLE, win);
  MPI_Win_flush(left, win);
  MPI_Win_unlock(left, win);
  int left2 = (left + size - 1) % size;
  for (int i = 0; i < N; ++i)
    CHECK(got[i] == -(left2 * 100 + i), "%s lock get: got[%d] = %g", flavor_name[f], i, got[i]);
  MPI_Barrier(comm);
}

static void test_pscw(int f) {
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Group world_group, from, to;
  MPI_Comm_group(comm, &world_group);
  MPI_Group_incl(world_group, 1, &left, &from);
  MPI_Group_incl(world_group, 1, &right, &to);
  long v[4] = {rank + 7, rank + 8, rank + 9, rank + 10};
  MPI_Win_post(from, 0, win);
  MPI_Win_start(to, 0, win);
  MPI_Put(v, 4, MPI_LONG, right, disp_of(right, OFF_CNT(N - 4)), 4, MPI_LONG, win);
  MPI_Win_complete(win);
  if (rank % 2) {
    MPI_Win_wait(win);
  } else {
    int flag = 0;
    while (!flag) MPI_Win_test(win, &flag);
  }
  for (int i = 0; i < 4; ++i)
    CHECK(mine->cnt[N - 4 + i] == left + 7 + i, "%s pscw: cnt[%d] = %ld", flavor_name[f], N - 4 + i,
          mine->cnt[N - 4 + i]);
  MPI_Group_free(&from);
  MPI_Group_free(&to);
  MPI_Group_free(&world_group);
  MPI_Barrier(comm);
}

static int cmp_long(const void* a, const void* b) {
  long x = *(const long*)a, y = *(const long*)b;
  return (x > y) - (x < y);
}

static void test_counter(int f) {
  /* cnt[0]: Fetch_and_op; cnt[1]: Accumulate; both on rank 0, from every rank. */
  long one = 1, olds[ROUNDS];
  MPI_Win_lock_all(0, win);
  for (int i = 0; i < ROUNDS; ++i) {
    MPI_Fetch_and_op(&one, &olds[i], MPI_LONG, 0, disp_of(0, OFF_CNT(0)), MPI_SUM, win);
    MPI_Accumulate(&one, 1, MPI_LONG, 0, disp_of(0, OFF_CNT(1)), 1, MPI_LONG, MPI_SUM, win);
    MPI_Win_flush(0, win);
  }
  MPI_Win_unlock_all(win);
  /* The old values of the fetch-and-add counter are 0 .. size*ROUNDS-1, each once. */
  long* all = malloc(sizeof(long) * (size_t)(size * ROUNDS));
  MPI_Allgather(olds, ROUNDS, MPI_LONG, all, ROUNDS, MPI_LONG, comm);
  qsort(all, (size_t)(size * ROUNDS), sizeof(long), cmp_long);
  for (int i = 0; i < size * ROUNDS; ++i)
    CHECK(all[i] == i, "%s fetch_and_op: sorted old value %d is %ld", flavor_name[f], i, all[i]);
  free(all);
  MPI_Barrier(comm);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    CHECK(mine->cnt[0] == (long)size * ROUNDS, "%s fetch_and_op counter %ld, expected %ld",
          flavor_name[f], mine->cnt[0], (long)size * ROUNDS);
    CHECK(mine->cnt[1] == (long)size * ROUNDS, "%s accumulate counter %ld, expected %ld",
          flavor_name[f], mine->cnt[1], (long)size * ROUNDS);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(comm);
}

static void test_accumulate_all(int f) {
  double contrib[N];
  for (int i = 0; i < N; ++i) contrib[i] = rank + 0.5 * i;
  int last = size - 1;
  MPI_Win_fence(0, win);
  memset(mine->d, 0, sizeof mine->d);
  MPI_Win_fence(0, win);
  MPI_Accumulate(contrib, N, MPI_DOUBLE, last, disp_of(last, OFF_D(0)), N, MPI_DOUBLE, MPI_SUM,
                 win);
  MPI_Win_fence(0, win);
  if (rank == last)
    for (int i = 0; i < N; ++i) {
      double expect = size * (size - 1) / 2.0 + size * 0.5 * i;
      CHECK(mine->d[i] == expect, "%s accumulate sum d[%d] = %g, expected %g", flavor_name[f], i,
            mine->d[i], expect);
    }
  /* MPI_MAX through a vector target type (every other long). */
  long vals[N / 2];
  for (int i = 0; i < N / 2; ++i) vals[i] = rank * 10 + i;
  MPI_Datatype every_other;
  MPI_Type_vector(N / 2, 1, 2, MPI_LONG, &every_other);
  MPI_Type_commit(&every_other);
  memset(mine->cnt, 0, sizeof mine->cnt);
  MPI_Win_fence(0, win);
  MPI_Accumulate(vals, N / 2, MPI_LONG, 0, disp_of(0, OFF_CNT(0)), 1, every_other, MPI_MAX, win);
  MPI_Win_fence(0, win);
  if (rank == 0)
    for (int i = 0; i < N; ++i) {
      long expect = i % 2 ? 0 : (size - 1) * 10 + i / 2;
      CHECK(mine->cnt[i] == expect, "%s accumulate max cnt[%d] = %ld, expected %ld", flavor_name[f],
            i, mine->cnt[i], expect);
    }
  /* Put through the vector type on the target, get it back through it. */
  long back[N / 2];
  for (int i = 0; i < N / 2; ++i) vals[i] = i;
  if (rank == 0)
    MPI_Put(vals, N / 2, MPI_LONG, last, disp_of(last, OFF_CNT(1)), 1, every_other, win);
  MPI_Win_fence(0, win);
  if (rank == last)
    for (int i = 0; i < N / 2; ++i)
      CHECK(mine->cnt[1 + 2 * i] == i, "%s vector put cnt[%d] = %ld", flavor_name[f], 1 + 2 * i,
            mine->cnt[1 + 2 * i]);
  if (rank == 0)
    MPI_Get(back, N / 2, MPI_LONG, last, disp_of(last, OFF_CNT(1)), 1, every_other, win);
  MPI_Win_fence(0, win);
  if (rank == 0)
    for (int i = 0; i < N / 2; ++i)
      CHECK(back[i] == i, "%s vector get back[%d] = %ld", flavor_name[f], i, back[i]);
  /* Derived origin types: get the strided longs into every other slot of `spread`, and put
     them from there contiguously into cnt[N/2..N) of the target. */
  long spread[N];
  for (int i = 0; i < N; ++i) spread[i] = -7;
  if (rank == 0)
    MPI_Get(spread, 1, every_other, last, disp_of(last, OFF_CNT(1)), 1, every_other, win);
  MPI_Win_fence(0, win);
  if (rank == 0) {
    for (int i = 0; i < N; ++i)
      CHECK(spread[i] == (i % 2 ? -7 : i / 2), "%s vector origin get spread[%d] = %ld",
            flavor_name[f], i, spread[i]);
    MPI_Put(spread, 1, every_other, last, disp_of(last, OFF_CNT(N / 2)), N / 2, MPI_LONG, win);
  }
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (rank == last)
    for (int i = 0; i < N / 2; ++i)
      CHECK(mine->cnt[N / 2 + i] == i, "%s vector origin put cnt[%d] = %ld", flavor_name[f],
            N / 2 + i, mine->cnt[N / 2 + i]);
  MPI_Type_free(&every_other);
  MPI_Barrier(comm);
}

static void test_exclusive_rmw(int f) {
  /* Get, add one, put back under an exclusive lock: no update is lost. */
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    mine->cnt[2] = 0;
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(comm);
  for (int i = 0; i < ROUNDS; ++i) {
    long v = -1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Get(&v, 1, MPI_LONG, 0, disp_of(0, OFF_CNT(2)), 1, MPI_LONG, win);
    MPI_Win_flush(0, win);
    ++v;
    MPI_Put(&v, 1, MPI_LONG, 0, disp_of(0, OFF_CNT(2)), 1, MPI_LONG, win);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(comm);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    CHECK(mine->cnt[2] == (long)size * ROUNDS, "%s exclusive rmw: %ld, expected %ld",
          flavor_name[f], mine->cnt[2], (long)size * ROUNDS);
    MPI_Win_unlock(0, win);
  }
  MPI_Barrier(comm);
}

static void test_cas_getacc_requests(int f) {
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
  for (int i = 0; i < N; ++i) mine->cnt[i] = -1;
  MPI_Win_unlock(rank, win);
  MPI_Barrier(comm);
  /* Every rank tries to claim cnt[3] on rank 0: exactly one succeeds. */
  long me = rank, expect = -1, old = 0;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  MPI_Compare_and_swap(&me, &expect, &old, MPI_LONG, 0, disp_of(0, OFF_CNT(3)), win);
  MPI_Win_unlock(0, win);
  int won = old == -1, winners = 0;
  MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, comm);
  CHECK(winners == 1, "%s compare_and_swap: %d winners", flavor_name[f], winners);
  /* Get_accumulate with MPI_SUM on cnt[4] (starts at -1): the old values are distinct. */
  long add = 1, prev = 0;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  MPI_Get_accumulate(&add, 1, MPI_LONG, &prev, 1, MPI_LONG, 0, disp_of(0, OFF_CNT(4)), 1, MPI_LONG,
                     MPI_SUM, win);
  MPI_Win_unlock(0, win);
  long* all = malloc(sizeof(long) * (size_t)size);
  MPI_Allgather(&prev, 1, MPI_LONG, all, 1, MPI_LONG, comm);
  qsort(all, (size_t)size, sizeof(long), cmp_long);
  for (int i = 0; i < size; ++i)
    CHECK(all[i] == i - 1, "%s get_accumulate: sorted old %d is %ld", flavor_name[f], i, all[i]);
  free(all);
  /* Fetch with MPI_NO_OP reads the counter. */
  MPI_Barrier(comm);
  long now = 0;
  MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
  MPI_Fetch_and_op(NULL, &now, MPI_LONG, 0, disp_of(0, OFF_CNT(4)), MPI_NO_OP, win);
  MPI_Win_unlock(0, win);
  CHECK(now == size - 1, "%s fetch no_op: %ld", flavor_name[f], now);
  /* Request-based put, get and accumulate. */
  int right = (rank + 1) % size;
  double x[4] = {1.5, 2.5, 3.5, rank}, y[4] = {0};
  MPI_Request reqs[3];
  MPI_Barrier(comm);
  MPI_Win_lock_all(0, win);
  MPI_Rput(x, 4, MPI_DOUBLE, right, disp_of(right, OFF_D(8)), 4, MPI_DOUBLE, win, &reqs[0]);
  MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
  MPI_Win_flush(right, win);
  MPI_Rget(y, 4, MPI_DOUBLE, right, disp_of(right, OFF_D(8)), 4, MPI_DOUBLE, win, &reqs[1]);
  MPI_Raccumulate(x, 4, MPI_DOUBLE, right, disp_of(right, OFF_D(16)), 4, MPI_DOUBLE, MPI_REPLACE,
                  win, &reqs[2]);
  MPI_Waitall(2, &reqs[1], MPI_STATUSES_IGNORE);
  MPI_Win_unlock_all(win);
  for (int i = 0; i < 4; ++i) CHECK(y[i] == x[i], "%s rget y[%d] = %g", flavor_name[f], i, y[i]);
  MPI_Barrier(comm);
  int left = (rank + size - 1) % size;
  MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
  CHECK(mine->d[16 + 3] == left, "%s raccumulate replace: %g", flavor_name[f], mine->d[19]);
  MPI_Win_unlock(rank, win);
  MPI_Barrier(comm);
}

static void test_attrs(int f) {
  void* base;
  MPI_Aint* wsize;
  int *unit, *flavor, *model, flag;
  MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
  CHECK(flag && (f == DYNAMIC || base == (void*)mine), "%s WIN_BASE %p vs %p", flavor_name[f], base,
        (void*)mine);
  MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag);
  CHECK(flag && *wsize == (f == DYNAMIC ? 0 : (MPI_Aint)sizeof(layout)), "%s WIN_SIZE %ld",
        flavor_name[f], (long)*wsize);
  MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag);
  CHECK(flag && *unit == 1, "%s WIN_DISP_UNIT %d", flavor_name[f], *unit);
  MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
  static const int flavors[] = {MPI_WIN_FLAVOR_ALLOCATE, MPI_WIN_FLAVOR_CREATE,
                                MPI_WIN_FLAVOR_SHARED, MPI_WIN_FLAVOR_DYNAMIC};
  CHECK(flag && *flavor == flavors[f], "%s WIN_CREATE_FLAVOR %d", flavor_name[f], *flavor);
  MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
  CHECK(flag && (*model == MPI_WIN_UNIFIED || *model == MPI_WIN_SEPARATE), "%s WIN_MODEL",
        flavor_name[f]);
  int key;
  static int payload = 42;
  MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &key, NULL);
  MPI_Win_set_attr(win, key, &payload);
  int* got = NULL;
  MPI_Win_get_attr(win, key, &got, &flag);
  CHECK(flag && got == &payload, "%s user attribute", flavor_name[f]);
  MPI_Win_delete_attr(win, key);
  MPI_Win_get_attr(win, key, &got, &flag);
  CHECK(!flag, "%s deleted attribute still there", flavor_name[f]);
  MPI_Win_free_keyval(&key);
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  MPI_Win_set_name(win, "rma-test-window");
  MPI_Win_get_name(win, name, &len);
  CHECK(len == 15 && strcmp(name, "rma-test-window") == 0, "%s name '%s'", flavor_name[f], name);
  MPI_Group g;
  MPI_Win_get_group(win, &g);
  int gsize;
  MPI_Group_size(g, &gsize);
  CHECK(gsize == size, "%s group size %d", flavor_name[f], gsize);
  MPI_Group_free(&g);
  /* Errors come back through the window's handler. */
  MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
  double d = 0;
  MPI_Win_lock_all(0, win);
  int rc = MPI_Put(&d, 1, MPI_DOUBLE, size + 3, 0, 1, MPI_DOUBLE, win);
  CHECK(rc != MPI_SUCCESS, "%s put to rank %d succeeded", flavor_name[f], size + 3);
  int cls = 0;
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RANK, "%s bad rank gives class %d", flavor_name[f], cls);
#ifdef MPIX_SLUICE_COUNTER /* the peers do not all check the range */
  if (f != DYNAMIC) {
    rc = MPI_Put(&d, 1, MPI_DOUBLE, 0, sizeof(layout), 1, MPI_DOUBLE, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_RMA_RANGE, "%s put past the window gives class %d", flavor_name[f], cls);
  }
#endif
  MPI_Win_unlock_all(win);
  MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
  MPI_Barrier(comm);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int world_rank, world_size;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &comm);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  for (int f = 0; f < NFLAVORS; ++f) {
    make_window(f);
    test_fence(f);
    test_lock_put_get(f);
    test_pscw(f);
    test_counter(f);
    test_accumulate_all(f);
    test_exclusive_rmw(f);
    test_cas_getacc_requests(f);
    test_attrs(f);
    free_window(f);
  }
#ifdef MPIX_SLUICE_COUNTER
  /* TEST_OFI_RMA=1 (the ofi tests over tcp;ofi_rxm and shm): the windows' puts and
     gets were fi_write / fi_read into the target's registered memory. */
  if (size > 1 && getenv("TEST_OFI_RMA")) {
    unsigned long long writes = 0, reads = 0, exposed = 0;
    MPIX_Sluice_counter("ofi.rma_writes", &writes);
    MPIX_Sluice_counter("ofi.rma_reads", &reads);
    MPIX_Sluice_counter("rma.exposed_regions", &exposed);
    MPI_Allreduce(MPI_IN_PLACE, &exposed, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
    CHECK(writes > 0 && reads > 0, "windows over ofi: %llu fi_write, %llu fi_read", writes, reads);
    CHECK(exposed > 0, "%s", "no window registered for peers over ofi");
  }
#endif
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return check_exit("rma_win");
}
