/* Sessions next to the World Model: sessions opened and closed repeatedly between MPI_Init
 * and MPI_Finalize (a library using its own session inside an MPI_Init program), and a
 * session kept open across MPI_Finalize, whose communicator still works after it (MPI-4.0
 * §11.3: the last finalization ends MPI). */
/* SLUICE_TEST_RANKS: 1 2 3 4 */
#include <mpi.h>
#include <stdio.h>

static int failures = 0;
#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* A library's communicator from its own session over mpi://WORLD. */
static MPI_Comm library_comm(MPI_Session* s, const char* tag) {
  MPI_Group g;
  MPI_Comm c = MPI_COMM_NULL;
  CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, s) == MPI_SUCCESS, "%s", "init");
  MPI_Group_from_session_pset(*s, "mpi://WORLD", &g);
  CHECK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) == MPI_SUCCESS,
        "%s", tag);
  MPI_Group_free(&g);
  return c;
}

int main(int argc, char** argv) {
  int provided, rank, size, flag = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  for (int round = 0; round < 4; ++round) {
    MPI_Session s;
    MPI_Comm c = library_comm(&s, "org.sluice.test.session_world.round");
    int crank = -1, sum = -1;
    MPI_Comm_rank(c, &crank);
    CHECK(crank == rank, "round %d: rank %d in the session's WORLD, %d in MPI_COMM_WORLD", round,
          crank, rank);
    MPI_Allreduce(&round, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK(sum == round * size, "round %d: allreduce %d", round, sum);
    MPI_Comm_free(&c);
    CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "round %d: finalize", round);
    /* MPI_COMM_WORLD is untouched by the session's end. */
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(sum == size - 1, "round %d: world allreduce %d", round, sum);
  }

  MPI_Session kept;
  MPI_Comm c = library_comm(&kept, "org.sluice.test.session_world.kept");
  MPI_Finalize();
  MPI_Finalized(&flag);
  CHECK(flag, "%s", "MPI_Finalized after MPI_Finalize");
  int sum = -1;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, c);
  CHECK(sum == size * (size - 1) / 2, "allreduce after MPI_Finalize: %d", sum);
  MPI_Comm_free(&c);
  CHECK(MPI_Session_finalize(&kept) == MPI_SUCCESS, "%s", "finalize the kept session");
  if (failures) fprintf(stderr, "session_world: %d checks failed\n", failures);
  return failures ? 1 : 0;
}
