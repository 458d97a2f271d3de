/* Freeing a keyval again through a copy of its handle, or from its own delete callback, while
 * an attribute keeps it alive: erroneous by the standard, ignored by MPICH and Open MPI, and
 * so by Sluice (programs and MPICH's test suite rely on it). The attribute still works and its
 * delete callback still runs, once per attribute. Communicator, datatype and window keyvals. */
/* SLUICE_TEST_RANKS: 1 2 */
#include <mpi.h>

#include "check.h"

static int comm_deletes = 0, type_deletes = 0, win_deletes = 0;

static int comm_delete(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm, (void)value, (void)extra;
  ++comm_deletes;
  MPI_Comm_free_keyval(&keyval); /* frees it (again) from inside the callback */
  return MPI_SUCCESS;
}

static int type_delete(MPI_Datatype type, int keyval, void* value, void* extra) {
  (void)type, (void)keyval, (void)value, (void)extra;
  ++type_deletes;
  return MPI_SUCCESS;
}

static int win_delete(MPI_Win win, int keyval, void* value, void* extra) {
  (void)win, (void)value, (void)extra;
  ++win_deletes;
  MPI_Win_free_keyval(&keyval); /* frees it (again) from inside the callback */
  return MPI_SUCCESS;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  MPI_Comm dup1, dup2;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup1);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup2);
  int key = MPI_KEYVAL_INVALID, copy;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_delete, &key, NULL);
  copy = key;
  static int v1 = 1, v2 = 2;
  MPI_Comm_set_attr(dup1, key, &v1);
  MPI_Comm_set_attr(dup2, key, &v2);
  CHECK(MPI_Comm_free(&dup1) == MPI_SUCCESS && comm_deletes == 1, "deletes %d", comm_deletes);
  CHECK(MPI_Comm_free_keyval(&key) == MPI_SUCCESS && key == MPI_KEYVAL_INVALID, "%s",
        "second free");
  CHECK(MPI_Comm_free_keyval(&copy) == MPI_SUCCESS, "%s", "third free, through the copy");
  CHECK(MPI_Comm_free(&dup2) == MPI_SUCCESS && comm_deletes == 2, "deletes %d", comm_deletes);

  MPI_Datatype t;
  MPI_Type_contiguous(2, MPI_INT, &t);
  int tkey, tcopy;
  MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_delete, &tkey, NULL);
  tcopy = tkey;
  MPI_Type_set_attr(t, tkey, &v1);
  CHECK(MPI_Type_free_keyval(&tkey) == MPI_SUCCESS, "%s", "type keyval free");
  CHECK(MPI_Type_free_keyval(&tcopy) == MPI_SUCCESS, "%s", "type keyval free through the copy");
  MPI_Type_free(&t);
  CHECK(type_deletes == 1, "type deletes %d", type_deletes);

  /* windows: MPICH's keyval_double_free_win */
  int* mem[2];
  MPI_Win win[2];
  for (int i = 0; i < 2; ++i) {
    MPI_Alloc_mem(sizeof(int), MPI_INFO_NULL, &mem[i]);
    MPI_Win_create(mem[i], sizeof(int), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win[i]);
    MPI_Win_set_errhandler(win[i], MPI_ERRORS_RETURN);
  }
  int wkey = MPI_KEYVAL_INVALID, wcopy;
  MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_delete, &wkey, NULL);
  wcopy = wkey;
  MPI_Win_set_attr(win[0], wkey, &v1);
  MPI_Win_set_attr(win[1], wkey, &v2);
  CHECK(MPI_Win_free(&win[0]) == MPI_SUCCESS && win_deletes == 1, "win deletes %d", win_deletes);
  CHECK(MPI_Win_free_keyval(&wkey) == MPI_SUCCESS && wkey == MPI_KEYVAL_INVALID, "%s",
        "second window keyval free");
  CHECK(MPI_Win_free_keyval(&wcopy) == MPI_SUCCESS, "%s", "third free, through the copy");
  CHECK(MPI_Win_free(&win[1]) == MPI_SUCCESS && win_deletes == 2, "win deletes %d", win_deletes);
  MPI_Free_mem(mem[0]);
  MPI_Free_mem(mem[1]);

  MPI_Finalize();
  return check_exit("keyval_double_free");
}
