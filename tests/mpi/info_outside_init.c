/* Info objects before MPI_Init and after MPI_Finalize (MPI-4.0 §11.2.1): created, set, read,
 * duplicated and freed outside the MPI_Init..MPI_Finalize window, and an object made before
 * MPI_Init still usable between them and after. MPI_Info_create_env gives the same answers
 * before, during and after. */
/* SLUICE_TEST_RANKS: 1 2 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;
/* No CHECK from check.h: it asks MPI_COMM_WORLD for the rank, which needs MPI_Init. */
#define EXPECT(cond, what)                                      \
  do {                                                          \
    if (!(cond)) {                                              \
      fprintf(stderr, "info_outside_init: failed: %s\n", what); \
      ++failures;                                               \
    }                                                           \
  } while (0)

static void expect_value(MPI_Info info, const char* key, const char* value, const char* when) {
  char buf[MPI_MAX_INFO_VAL + 1];
  int buflen = sizeof buf, flag = 0;
  MPI_Info_get_string(info, key, &buflen, buf, &flag);
  if (!value) {
    EXPECT(!flag, when);
    return;
  }
  EXPECT(flag && strcmp(buf, value) == 0 && buflen == (int)strlen(value) + 1, when);
}

static void same_env(MPI_Info a, MPI_Info b, const char* when) {
  const char* keys[] = {"command", "argv", "maxprocs", "wdir"};
  for (int k = 0; k < 4; ++k) {
    char va[MPI_MAX_INFO_VAL + 1], vb[MPI_MAX_INFO_VAL + 1];
    int la = sizeof va, lb = sizeof vb, fa = 0, fb = 0;
    MPI_Info_get_string(a, keys[k], &la, va, &fa);
    MPI_Info_get_string(b, keys[k], &lb, vb, &fb);
    EXPECT(fa == fb && (!fa || strcmp(va, vb) == 0), when);
  }
}

int main(int argc, char** argv) {
  MPI_Info before, copy, env_before;
  EXPECT(MPI_Info_create(&before) == MPI_SUCCESS, "create before init");
  MPI_Info_set(before, "alpha", "one");
  MPI_Info_set(before, "beta", "two");
  expect_value(before, "alpha", "one", "get before init");
  MPI_Info_dup(before, &copy);
  MPI_Info_delete(copy, "alpha");
  int nkeys = -1;
  MPI_Info_get_nkeys(copy, &nkeys);
  EXPECT(nkeys == 1, "nkeys of the copy before init");
  char key[MPI_MAX_INFO_KEY + 1];
  MPI_Info_get_nthkey(copy, 0, key);
  EXPECT(strcmp(key, "beta") == 0, "nthkey before init");
  int valuelen = 0, flag = 0;
  MPI_Info_get_valuelen(before, "beta", &valuelen, &flag);
  EXPECT(flag && valuelen == 3, "valuelen before init");
  MPI_Info_create_env(argc, argv, &env_before);

  MPI_Init(&argc, &argv);
  expect_value(before, "beta", "two", "an object made before init, during");
  MPI_Info_set(before, "gamma", "three");
  MPI_Info env_during;
  MPI_Info_create_env(argc, argv, &env_during);
  same_env(env_before, env_during, "create_env before and during");
  MPI_Info_free(&env_during);
  MPI_Finalize();

  expect_value(before, "gamma", "three", "get after finalize");
  expect_value(copy, "alpha", NULL, "the copy after finalize");
  MPI_Info_set(copy, "delta", "four");
  expect_value(copy, "delta", "four", "set after finalize");
  MPI_Info env_after;
  MPI_Info_create_env(argc, argv, &env_after);
  same_env(env_before, env_after, "create_env before and after");
  EXPECT(MPI_Info_free(&before) == MPI_SUCCESS && before == MPI_INFO_NULL, "free after finalize");
  MPI_Info_free(&copy);
  MPI_Info_free(&env_before);
  MPI_Info_free(&env_after);
  /* Objects can still be made after MPI_Finalize. */
  MPI_Info late;
  EXPECT(MPI_Info_create(&late) == MPI_SUCCESS, "create after finalize");
  MPI_Info_free(&late);
  if (failures) fprintf(stderr, "info_outside_init: %d checks failed\n", failures);
  return failures ? 1 : 0;
}
