/* The error classes added after MPI-3.1's: the tool interface's MPI_T_ERR_* and MPI-4.0's
 * MPI_ERR_PROC_ABORTED, MPI_ERR_VALUE_TOO_LARGE and MPI_ERR_SESSION are classes (their own
 * class), distinct, within MPI_ERR_LASTCODE, and each has its own text. */
/* SLUICE_TEST_RANKS: 1 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#ifdef SLUICE_MPI
#define SLUICE 1
#else
#define SLUICE 0
#endif

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int classes[] = {
      MPI_ERR_PROC_ABORTED,       MPI_ERR_VALUE_TOO_LARGE,   MPI_ERR_SESSION,
      MPI_T_ERR_MEMORY,           MPI_T_ERR_NOT_INITIALIZED, MPI_T_ERR_CANNOT_INIT,
      MPI_T_ERR_INVALID_INDEX,    MPI_T_ERR_INVALID_ITEM,    MPI_T_ERR_INVALID_HANDLE,
      MPI_T_ERR_OUT_OF_HANDLES,   MPI_T_ERR_OUT_OF_SESSIONS, MPI_T_ERR_INVALID_SESSION,
      MPI_T_ERR_CVAR_SET_NOT_NOW, MPI_T_ERR_CVAR_SET_NEVER,  MPI_T_ERR_PVAR_NO_STARTSTOP,
      MPI_T_ERR_PVAR_NO_WRITE,    MPI_T_ERR_PVAR_NO_ATOMIC,  MPI_T_ERR_INVALID_NAME,
      MPI_T_ERR_INVALID};
  enum { n = sizeof classes / sizeof classes[0] };
  char text[n][MPI_MAX_ERROR_STRING];
  for (int i = 0; i < n; ++i) {
    int cls = -1, len = -1;
    CHECK(classes[i] > MPI_SUCCESS && classes[i] <= MPI_ERR_LASTCODE, "class %d outside 1..%d",
          classes[i], MPI_ERR_LASTCODE);
    CHECK(MPI_Error_class(classes[i], &cls) == MPI_SUCCESS && cls == classes[i],
          "class of %d is %d", classes[i], cls);
    CHECK(MPI_Error_string(classes[i], text[i], &len) == MPI_SUCCESS && len > 0 &&
              len == (int)strlen(text[i]),
          "text of %d", classes[i]);
    for (int j = 0; j < i; ++j) {
      CHECK(classes[j] != classes[i], "classes %d and %d are equal", j, i);
      /* MPICH 4.0.2 has no text for these classes ("Unknown error class"). */
      CHECK(!SLUICE || strcmp(text[j], text[i]) != 0, "classes %d and %d have the same text '%s'",
            classes[j], classes[i], text[i]);
    }
  }
  /* Classes added now come after every predefined one. */
  int added = -1;
  MPI_Add_error_class(&added);
  for (int i = 0; i < n; ++i)
    CHECK(added > classes[i], "added class %d not above %d", added, classes[i]);
  MPI_Finalize();
  return check_exit("errors_mpi4");
}
