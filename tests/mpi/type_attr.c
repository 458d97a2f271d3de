/* Attributes on datatypes: MPI_Type_create_keyval/set/get/delete_attr/free_keyval, copy
 * callbacks through MPI_Type_dup (MPI_TYPE_DUP_FN, MPI_TYPE_NULL_COPY_FN and a user one),
 * delete callbacks on replace, delete and MPI_Type_free, attributes on a predefined type,
 * and a keyval freed while an attribute still uses it. */
/* SLUICE_TEST_RANKS: 1 2 */
#include "check.h"

static int deletes = 0, copies = 0;
static void* last_deleted = NULL;
static long deleted_sum = 0; /* of the values deleted */

static int count_delete(MPI_Datatype type, int keyval, void* value, void* extra) {
  (void)type, (void)keyval;
  ++deletes;
  last_deleted = value;
  deleted_sum += (long)(size_t)value;
  CHECK(extra == &deletes, "delete callback got extra_state %p", extra);
  return MPI_SUCCESS;
}
static int double_copy(MPI_Datatype type, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)type, (void)keyval, (void)extra;
  ++copies;
  *(void**)out = (char*)in + 1; /* a different value, to tell copies apart */
  *flag = 1;
  return MPI_SUCCESS;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  static char a, b, c;
  int key_user, key_dup, key_none, flag = -1;
  void* got = NULL;
  MPI_Type_create_keyval(double_copy, count_delete, &key_user, &deletes);
  MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &key_dup, NULL);
  MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, count_delete, &key_none, &deletes);

  MPI_Datatype vec, dup;
  MPI_Type_vector(3, 2, 4, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  MPI_Type_get_attr(vec, key_user, &got, &flag);
  CHECK(flag == 0, "attribute present before set");
  MPI_Type_set_attr(vec, key_user, &a);
  MPI_Type_set_attr(vec, key_dup, &b);
  MPI_Type_set_attr(vec, key_none, &c);
  MPI_Type_get_attr(vec, key_user, &got, &flag);
  CHECK(flag == 1 && got == &a, "get_attr gave %d/%p", flag, got);

  /* Replacing runs the delete callback on the old value. */
  MPI_Type_set_attr(vec, key_user, &b);
  CHECK(deletes == 1 && last_deleted == &a, "replace: %d deletes, last %p", deletes, last_deleted);
  MPI_Type_set_attr(vec, key_user, &a);
  deletes = 0;

  /* Type_dup: user copy (a + 1), DUP_FN (same), NULL_COPY_FN (not copied). */
  MPI_Type_dup(vec, &dup);
  CHECK(copies == 1, "%d copy callbacks", copies);
  MPI_Type_get_attr(dup, key_user, &got, &flag);
  CHECK(flag == 1 && got == &a + 1, "dup: user attribute %d/%p", flag, got);
  MPI_Type_get_attr(dup, key_dup, &got, &flag);
  CHECK(flag == 1 && got == &b, "dup: MPI_TYPE_DUP_FN attribute %d/%p", flag, got);
  MPI_Type_get_attr(dup, key_none, &got, &flag);
  CHECK(flag == 0, "dup: MPI_TYPE_NULL_COPY_FN attribute was copied");

  /* Delete one: its callback; then it is gone. */
  MPI_Type_delete_attr(vec, key_none);
  CHECK(deletes == 1 && last_deleted == &c, "delete_attr: %d deletes", deletes);
  MPI_Type_get_attr(vec, key_none, &got, &flag);
  CHECK(flag == 0, "deleted attribute still there");

  /* Type_free runs the remaining delete callbacks, even with the keyval freed already. */
  MPI_Type_free_keyval(&key_user);
  CHECK(key_user == MPI_KEYVAL_INVALID, "free_keyval did not reset the keyval");
  deletes = 0;
  deleted_sum = 0;
  MPI_Type_free(&vec);
  MPI_Type_free(&dup);
  /* By now both are freed (MPICH runs vec's callbacks when dup, built from it, goes). */
  CHECK(deletes == 2 && deleted_sum == 2 * (long)(size_t)&a + 1,
        "Type_free: %d delete callbacks for the two user attributes", deletes);

  /* A predefined type takes attributes too. */
  MPI_Type_set_attr(MPI_DOUBLE, key_dup, &c);
  MPI_Type_get_attr(MPI_DOUBLE, key_dup, &got, &flag);
  CHECK(flag == 1 && got == &c, "MPI_DOUBLE attribute %d/%p", flag, got);
  MPI_Type_delete_attr(MPI_DOUBLE, key_dup);
  MPI_Type_get_attr(MPI_DOUBLE, key_dup, &got, &flag);
  CHECK(flag == 0, "MPI_DOUBLE attribute not deleted");

  MPI_Type_free_keyval(&key_dup);
  MPI_Type_free_keyval(&key_none);
  MPI_Finalize();
  return check_exit("type_attr");
}
