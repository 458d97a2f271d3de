/* The MPI-1 attribute names (MPI_Keyval_create/free, MPI_Attr_put/get/delete) and the
 * predefined callbacks MPI_DUP_FN, MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN: an attribute is
 * copied by MPI_Comm_dup only with MPI_DUP_FN, a user delete callback runs on delete and on
 * free. */
#include "check.h"

static int deletes = 0;

static int count_delete(MPI_Comm comm, int keyval, void* value, void* extra) {
  (void)comm;
  (void)keyval;
  ++deletes;
  CHECK(*(int*)extra == 42 && value != NULL, "delete callback arguments");
  return MPI_SUCCESS;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  static int extra = 42, a = 1, b = 2;
  int kdup = MPI_KEYVAL_INVALID, knull = MPI_KEYVAL_INVALID, flag = -1;
  void* v = NULL;
  MPI_Keyval_create(MPI_DUP_FN, count_delete, &kdup, &extra);
  MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &knull, NULL);
  CHECK(kdup != MPI_KEYVAL_INVALID && knull != MPI_KEYVAL_INVALID && kdup != knull, "keyvals");

  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Attr_put(c, kdup, &a);
  MPI_Attr_put(c, knull, &b);
  MPI_Attr_get(c, kdup, &v, &flag);
  CHECK(flag && v == &a, "get kdup: flag %d", flag);

  MPI_Comm d;
  MPI_Comm_dup(c, &d);
  MPI_Attr_get(d, kdup, &v, &flag);
  CHECK(flag && v == &a, "MPI_DUP_FN did not copy: flag %d", flag);
  MPI_Attr_get(d, knull, &v, &flag);
  CHECK(!flag, "MPI_NULL_COPY_FN copied the attribute");

  MPI_Attr_delete(c, kdup);
  CHECK(deletes == 1, "deletes after Attr_delete %d", deletes);
  MPI_Attr_get(c, kdup, &v, &flag);
  CHECK(!flag, "attribute still there after Attr_delete");
  MPI_Comm_free(&d); /* its copy goes through the delete callback */
  CHECK(deletes == 2, "deletes after free %d", deletes);
  MPI_Attr_delete(c, knull);
  MPI_Comm_free(&c);
  MPI_Keyval_free(&kdup);
  MPI_Keyval_free(&knull);
  CHECK(kdup == MPI_KEYVAL_INVALID && knull == MPI_KEYVAL_INVALID, "Keyval_free did not reset");
  MPI_Finalize();
  return check_exit("attr_mpi1");
}
