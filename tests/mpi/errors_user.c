/* Error classes, codes and strings the program adds (MPI_Add_error_class/code/string):
 * numbering above MPI_ERR_LASTCODE and MPI_LASTUSEDCODE (the largest class), the class of a code,
 * the strings (empty until set), the same values on every rank, codes of predefined classes, a user
 * code through an error handler, and the argument errors. */
/* SLUICE_TEST_RANKS: 1 3 */
#include <string.h>

#include "check.h"

static int handled_code = 0;
static void remember(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  handled_code = *code;
}

static int last_used(void) {
  int* value = NULL;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &value, &flag);
  CHECK(flag, "MPI_LASTUSEDCODE not set");
  return flag ? *value : -1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CHECK(last_used() >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d below MPI_ERR_LASTCODE", last_used());

  int cls = -1, code1 = -1, code2 = -1, arg_code = -1, cls_of = -1, len = -1;
  char text[MPI_MAX_ERROR_STRING];
  MPI_Add_error_class(&cls);
  CHECK(cls > MPI_ERR_LASTCODE, "new class %d not above MPI_ERR_LASTCODE", cls);
  CHECK(last_used() >= cls, "MPI_LASTUSEDCODE %d below the new class %d", last_used(), cls);
  MPI_Add_error_code(cls, &code1);
  MPI_Add_error_code(cls, &code2);
  CHECK(code1 != cls && code2 != cls && code1 != code2, "codes %d %d class %d", code1, code2, cls);

  MPI_Error_class(code1, &cls_of);
  CHECK(cls_of == cls, "class of code %d is %d, not %d", code1, cls_of, cls);
  MPI_Error_class(cls, &cls_of);
  CHECK(cls_of == cls, "class of class %d is %d", cls, cls_of);

  /* No string yet: the empty string. */
  strcpy(text, "stale");
  MPI_Error_string(code2, text, &len);
  CHECK(len == 0 && text[0] == '\0', "unset string is '%s' (%d)", text, len);
  MPI_Add_error_string(cls, "sluice test class");
  MPI_Add_error_string(code1, "sluice test code one");
  MPI_Add_error_string(code1, "sluice test code one, replaced");
  MPI_Error_string(cls, text, &len);
  CHECK(strcmp(text, "sluice test class") == 0 && len == (int)strlen(text), "class string '%s'",
        text);
  MPI_Error_string(code1, text, &len);
  CHECK(strcmp(text, "sluice test code one, replaced") == 0, "code string '%s'", text);

  /* A code in a predefined class. */
  MPI_Add_error_code(MPI_ERR_ARG, &arg_code);
  MPI_Error_class(arg_code, &cls_of);
  CHECK(cls_of == MPI_ERR_ARG, "class of %d is %d, not MPI_ERR_ARG", arg_code, cls_of);

  /* Every rank made the same calls in the same order: the same numbers everywhere. */
  int mine[4] = {cls, code1, code2, arg_code}, lo[4], hi[4];
  MPI_Allreduce(mine, lo, 4, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, hi, 4, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK(memcmp(lo, hi, sizeof lo) == 0, "ranks numbered their classes and codes differently");

  /* A user code through an error handler, and through MPI_ERRORS_RETURN. */
  MPI_Errhandler handler;
  MPI_Comm_create_errhandler(remember, &handler);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, handler);
  MPI_Comm_call_errhandler(dup, code2);
  CHECK(handled_code == code2, "the handler saw %d, not %d", handled_code, code2);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  int rc = MPI_Comm_call_errhandler(dup, code1);
  CHECK(rc == MPI_SUCCESS, "MPI_Comm_call_errhandler returned %d", rc);
  MPI_Errhandler_free(&handler);
  MPI_Comm_free(&dup);

#ifdef SLUICE_MPI
  /* Erroneous calls (MPI-3.1 §8.5) that Sluice reports; other MPIs need not. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int bad = -1;
  rc = MPI_Add_error_string(MPI_ERR_ARG, "predefined");
  CHECK(rc != MPI_SUCCESS, "a string for a predefined class was accepted");
  rc = MPI_Add_error_code(code1, &bad);
  CHECK(rc != MPI_SUCCESS, "a code for a code (%d) was accepted", code1);
  rc = MPI_Error_class(hi[3] + 1000, &cls_of);
  CHECK(rc != MPI_SUCCESS, "an unknown code got a class");
#endif

  MPI_Finalize();
  return check_exit("errors_user");
}
