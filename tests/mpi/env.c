/* Environment: init/finalize state, thread level, versions, timers, info objects,
 * predefined attributes, error handlers, memory allocation. */
/* SLUICE_TEST_RANKS: 1 2 4 */
#include <string.h>

#include "check.h"

static int handler_calls = 0;
static int handler_code = 0;
static void count_errors(MPI_Comm* comm, int* code, ...) {
  ++handler_calls;
  handler_code = *code;
}

static int deletes = 0;
static int self_deleted_at_finalize = 0;
static int count_delete(MPI_Comm comm, int keyval, void* value, void* extra) {
  ++deletes;
  *(int*)extra += *(int*)value;
  return MPI_SUCCESS;
}
static int self_delete(MPI_Comm comm, int keyval, void* value, void* extra) {
  int finalized = 1;
  MPI_Finalized(&finalized);
  if (!finalized) self_deleted_at_finalize = 1;
  return MPI_SUCCESS;
}

/* User attributes: set/get, copied by dup with MPI_COMM_DUP_FN, not with
 * MPI_COMM_NULL_COPY_FN, deleted on free with the callback. */
static int bomb_delete_ok;
static int bomb_copy(MPI_Comm c, int k, void* extra, void* in, void* out, int* flag) {
  (void)c, (void)k, (void)extra, (void)in, (void)out, (void)flag;
  return MPI_ERR_OTHER;
}
static int bomb_delete(MPI_Comm c, int k, void* value, void* extra) {
  (void)c, (void)k, (void)value, (void)extra;
  return bomb_delete_ok ? MPI_SUCCESS : MPI_ERR_OTHER;
}

static void attributes(void) {
  int copied_key, private_key, sum = 0, flag = -1;
  MPI_Comm_create_keyval(MPI_COMM_DUP_FN, count_delete, &copied_key, &sum);
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &private_key, NULL);
  static int v1 = 5, v2 = 7;
  MPI_Comm a, b;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_set_attr(a, copied_key, &v1);
  MPI_Comm_set_attr(a, private_key, &v2);
  int* got = NULL;
  MPI_Comm_get_attr(a, copied_key, &got, &flag);
  CHECK(flag && got == &v1, "get copied attr flag %d", flag);
  MPI_Comm_dup(a, &b);
  MPI_Comm_get_attr(b, copied_key, &got, &flag);
  CHECK(flag && got == &v1, "dup did not copy the attribute");
  MPI_Comm_get_attr(b, private_key, &got, &flag);
  CHECK(!flag, "NULL_COPY attribute was copied");
  MPI_Comm_free_keyval(&private_key);
  CHECK(private_key == MPI_KEYVAL_INVALID, "free_keyval did not reset");
  MPI_Comm_free(&b);
  CHECK(deletes == 1 && sum == 5, "delete on free: %d calls sum %d", deletes, sum);
  MPI_Comm_delete_attr(a, copied_key);
  CHECK(deletes == 2 && sum == 10, "delete_attr: %d calls sum %d", deletes, sum);
  MPI_Comm_get_attr(a, copied_key, &got, &flag);
  CHECK(!flag, "attribute still there after delete_attr");
  MPI_Comm_free(&a);
  CHECK(deletes == 2, "free after delete_attr called the callback again");
  MPI_Comm_free_keyval(&copied_key);

  /* Failing callbacks: a delete that fails keeps the attribute, a copy that fails fails
   * the dup with the callback's error and no new communicator. */
  int bomb_key;
  bomb_delete_ok = 0;
  MPI_Comm_create_keyval(bomb_copy, bomb_delete, &bomb_key, NULL);
  MPI_Comm c, d = MPI_COMM_WORLD;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  MPI_Comm_set_attr(c, bomb_key, &v1);
  int err = MPI_Comm_delete_attr(c, bomb_key);
  CHECK(err != MPI_SUCCESS, "a failing delete callback must fail delete_attr");
  MPI_Comm_get_attr(c, bomb_key, &got, &flag);
  CHECK(flag && got == &v1, "the attribute must survive a failed delete");
  err = MPI_Comm_dup(c, &d);
  int cls = -1;
  MPI_Error_class(err, &cls);
  CHECK(cls == MPI_ERR_OTHER && d == MPI_COMM_NULL, "dup with a failing copy: class %d", cls);
  bomb_delete_ok = 1;
  MPI_Comm_free(&c);
  MPI_Comm_free_keyval(&bomb_key);

  int self_key;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &self_key, NULL);
  MPI_Comm_set_attr(MPI_COMM_SELF, self_key, NULL);
  MPI_Comm_free_keyval(&self_key); /* the attribute keeps the keyval alive */
}

int main(int argc, char** argv) {
  int flag = -1;
  MPI_Initialized(&flag);
  if (flag != 0) return 2;
  int provided = -1;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) return 3;
  CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "provided %d", provided);
  int queried = -1;
  MPI_Query_thread(&queried);
  CHECK(queried == provided, "query %d provided %d", queried, provided);
  MPI_Is_thread_main(&flag);
  CHECK(flag == 1, "is_thread_main %d", flag);
  MPI_Initialized(&flag);
  CHECK(flag == 1, "initialized %d", flag);
  MPI_Finalized(&flag);
  CHECK(flag == 0, "finalized %d", flag);

  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int version, subversion;
  MPI_Get_version(&version, &subversion);
  CHECK(version >= 3 && subversion >= 0, "version %d.%d", version, subversion);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = -1;
  MPI_Get_library_version(lib, &len);
  CHECK(len > 0 && (int)strlen(lib) == len, "library version length %d", len);
#ifdef SLUICE_MPI
  {
    /* The library names the standard version MPI_Get_version gives (MPI-4.0 only once it
       is complete: docs/MPI.md). */
    char want[32];
    snprintf(want, sizeof want, "(MPI %d.%d,", version, subversion);
    CHECK(strstr(lib, want) != NULL, "library version \"%s\" does not say %s", lib, want);
  }
#endif
  char host[MPI_MAX_PROCESSOR_NAME];
  MPI_Get_processor_name(host, &len);
  CHECK(len > 0 && (int)strlen(host) == len, "processor name length %d", len);

  double t0 = MPI_Wtime(), tick = MPI_Wtick();
  CHECK(tick > 0 && tick < 1, "wtick %g", tick);
  double t1 = t0;
  while (t1 - t0 < 0.01) t1 = MPI_Wtime();
  CHECK(t1 > t0, "wtime did not advance");

  /* error classes and strings */
  char msg[MPI_MAX_ERROR_STRING];
  MPI_Error_string(MPI_ERR_RANK, msg, &len);
  CHECK(len > 0 && (int)strlen(msg) == len, "error string length %d", len);
  MPI_Error_string(MPI_SUCCESS, msg, &len);
  CHECK(len > 0, "success string");
  int cls = -1;
  MPI_Error_class(MPI_ERR_TAG, &cls);
  CHECK(cls == MPI_ERR_TAG, "class %d", cls);
  MPI_Error_class(MPI_SUCCESS, &cls);
  CHECK(cls == MPI_SUCCESS, "class %d", cls);

  /* info objects */
  MPI_Info info, copy;
  MPI_Info_create(&info);
  int nkeys = -1;
  MPI_Info_get_nkeys(info, &nkeys);
  CHECK(nkeys == 0, "nkeys %d", nkeys);
  MPI_Info_set(info, "alpha", "one");
  MPI_Info_set(info, "beta", "two");
  MPI_Info_set(info, "gamma", "three");
  MPI_Info_set(info, "beta", "deux"); /* replaces */
  MPI_Info_get_nkeys(info, &nkeys);
  CHECK(nkeys == 3, "nkeys %d", nkeys);
  char value[MPI_MAX_INFO_VAL + 1];
  MPI_Info_get(info, "beta", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(flag && strcmp(value, "deux") == 0, "beta=%s flag %d", value, flag);
  MPI_Info_get(info, "gamma", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(flag && strcmp(value, "three") == 0, "gamma=%s", value);
  MPI_Info_get(info, "delta", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(!flag, "delta found");
  int vlen = -1;
  MPI_Info_get_valuelen(info, "alpha", &vlen, &flag);
  CHECK(flag && vlen == 3, "valuelen %d", vlen);
  int seen = 0;
  for (int i = 0; i < nkeys; ++i) {
    char key[MPI_MAX_INFO_KEY + 1];
    MPI_Info_get_nthkey(info, i, key);
    if (!strcmp(key, "alpha")) seen |= 1;
    if (!strcmp(key, "beta")) seen |= 2;
    if (!strcmp(key, "gamma")) seen |= 4;
  }
  CHECK(seen == 7, "nthkey saw %d", seen);
  MPI_Info_dup(info, &copy);
  MPI_Info_delete(info, "alpha");
  MPI_Info_get_nkeys(info, &nkeys);
  CHECK(nkeys == 2, "nkeys after delete %d", nkeys);
  MPI_Info_get_nkeys(copy, &nkeys);
  CHECK(nkeys == 3, "dup nkeys %d", nkeys);
  MPI_Info_get(copy, "alpha", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(flag && strcmp(value, "one") == 0, "dup alpha=%s", value);
  MPI_Info_free(&info);
  MPI_Info_free(&copy);
  CHECK(info == MPI_INFO_NULL && copy == MPI_INFO_NULL, "info not nulled");

  /* predefined attributes */
  int* attr = NULL;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &attr, &flag);
  CHECK(flag && *attr >= 32767, "tag_ub flag %d value %d", flag, flag ? *attr : 0);
  MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &attr, &flag); /* deprecated name */
  CHECK(flag && *attr >= 32767, "attr_get tag_ub");
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &attr, &flag);
  CHECK(!flag || *attr == 0 || *attr == 1, "wtime_is_global %d", *attr);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &attr, &flag);
  CHECK(!flag || *attr >= size, "universe size %d < %d", *attr, size);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &attr, &flag);
  CHECK(!flag || *attr >= 0, "appnum %d", *attr);

  /* error handlers */
  MPI_Errhandler eh;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
  CHECK(eh == MPI_ERRORS_ARE_FATAL, "world handler is not MPI_ERRORS_ARE_FATAL");
  MPI_Errhandler_free(&eh);
  CHECK(eh == MPI_ERRHANDLER_NULL, "errhandler not nulled");
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh);
  CHECK(eh == MPI_ERRORS_RETURN, "self handler not MPI_ERRORS_RETURN");
  MPI_Errhandler_free(&eh);
  int rc = MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_OTHER);
  CHECK(rc == MPI_SUCCESS, "call_errhandler with ERRORS_RETURN returned %d", rc);
  MPI_Errhandler mine;
  MPI_Comm_create_errhandler(count_errors, &mine);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, mine);
  MPI_Errhandler_free(&mine); /* the communicator keeps it alive */
  MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_ARG);
  CHECK(handler_calls == 1 && handler_code == MPI_ERR_ARG, "user handler calls %d code %d",
        handler_calls, handler_code);
  /* a real error through the user handler: invalid rank on MPI_COMM_SELF */
  int dummy = 0;
  rc = MPI_Send(&dummy, 1, MPI_INT, 5, 0, MPI_COMM_SELF);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_RANK, "send to rank 5 of MPI_COMM_SELF gave class %d", cls);
  CHECK(handler_calls == 2, "user handler calls %d", handler_calls);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);

  /* memory */
  double* mem = NULL;
  rc = MPI_Alloc_mem(1000 * sizeof(double), MPI_INFO_NULL, &mem);
  CHECK(rc == MPI_SUCCESS && mem != NULL, "alloc_mem rc %d", rc);
  for (int i = 0; i < 1000; ++i) mem[i] = i;
  CHECK(mem[999] == 999.0, "alloc_mem content");
  MPI_Free_mem(mem);

  MPI_Pcontrol(1);
  MPI_Pcontrol(0);
  attributes();

  MPI_Finalize();
  MPI_Finalized(&flag);
  if (flag != 1) ++check_failures;
  if (!self_deleted_at_finalize) {
    fprintf(stderr, "MPI_COMM_SELF attribute not deleted at the start of MPI_Finalize\n");
    ++check_failures;
  }
  return check_exit("env");
}
