/* MPI-4.0 sessions without MPI_Init: MPI_Session_init with a thread level asked in the info
 * and found in MPI_Session_get_info, the process sets mpi://WORLD and mpi://SELF (names,
 * lengths, mpi_size), groups from them and communicators from those groups (a reduction over
 * WORLD, a message to oneself over SELF), an intercommunicator from two groups, two sessions
 * open at once, the session error handlers, and MPI_Initialized false throughout (the World
 * Model is not initialized). */
/* SLUICE_TEST_RANKS: 1 2 3 4 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int handler_calls = 0, handler_code = 0;
static void on_error(MPI_Session* session, int* code, ...) {
  (void)session;
  ++handler_calls;
  handler_code = *code;
}

int main(void) {
  MPI_Session s = MPI_SESSION_NULL;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "thread_level", "MPI_THREAD_SERIALIZED");
  CHECK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS && s != MPI_SESSION_NULL, "%s",
        "MPI_Session_init");
  MPI_Info_free(&info);
  int flag = 1;
  MPI_Initialized(&flag);
  CHECK(!flag, "%s", "MPI_Initialized is false with only a session");

  MPI_Info used;
  char value[MPI_MAX_INFO_VAL + 1] = "";
  CHECK(MPI_Session_get_info(s, &used) == MPI_SUCCESS, "%s", "get_info");
  MPI_Info_get(used, "thread_level", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(flag && (strcmp(value, "MPI_THREAD_SERIALIZED") == 0 ||
                 strcmp(value, "MPI_THREAD_MULTIPLE") == 0),
        "thread_level %s", value);
  MPI_Info_free(&used);

  /* The process sets: WORLD and SELF among them, names with their lengths. */
  int npsets = 0, world_index = -1, self_index = -1;
  MPI_Session_get_num_psets(s, MPI_INFO_NULL, &npsets);
  CHECK(npsets >= 2, "%d process sets", npsets);
  for (int i = 0; i < npsets; ++i) {
    int len = 0;
    MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL);
    char* name = malloc((size_t)len);
    MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name);
    CHECK((int)strlen(name) + 1 == len, "pset %d: %s, length %d", i, name, len);
    if (strcmp(name, "mpi://WORLD") == 0) world_index = i;
    if (strcmp(name, "mpi://SELF") == 0) self_index = i;
    free(name);
  }
  CHECK(world_index >= 0 && self_index >= 0, "WORLD %d SELF %d", world_index, self_index);
  MPI_Info pinfo;
  MPI_Session_get_pset_info(s, "mpi://WORLD", &pinfo);
  MPI_Info_get(pinfo, "mpi_size", MPI_MAX_INFO_VAL, value, &flag);
  const int world_size = flag ? atoi(value) : -1;
  MPI_Info_free(&pinfo);
  MPI_Session_get_pset_info(s, "mpi://SELF", &pinfo);
  MPI_Info_get(pinfo, "mpi_size", MPI_MAX_INFO_VAL, value, &flag);
  CHECK(flag && atoi(value) == 1, "SELF mpi_size %s", value);
  MPI_Info_free(&pinfo);

  /* A communicator over WORLD: its size is the set's, a reduction works on it. */
  MPI_Group wgroup;
  MPI_Comm world;
  CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &wgroup) == MPI_SUCCESS, "%s", "group");
  CHECK(MPI_Comm_create_from_group(wgroup, "org.sluice.test.session.world", MPI_INFO_NULL,
                                   MPI_ERRORS_RETURN, &world) == MPI_SUCCESS,
        "%s", "Comm_create_from_group WORLD");
  int rank, size;
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  CHECK(size == world_size, "size %d, mpi_size %d", size, world_size);
  int sum = -1;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, world);
  CHECK(sum == size * (size - 1) / 2, "allreduce %d", sum);

  /* SELF: a message to oneself. */
  MPI_Group sgroup;
  MPI_Comm self;
  MPI_Group_from_session_pset(s, "mpi://SELF", &sgroup);
  CHECK(MPI_Comm_create_from_group(sgroup, "org.sluice.test.session.self", MPI_INFO_NULL,
                                   MPI_ERRORS_RETURN, &self) == MPI_SUCCESS,
        "%s", "Comm_create_from_group SELF");
  int ssize = 0, out = 40 + rank, in = -1;
  MPI_Comm_size(self, &ssize);
  CHECK(ssize == 1, "SELF size %d", ssize);
  MPI_Request req;
  MPI_Irecv(&in, 1, MPI_INT, 0, 5, self, &req);
  MPI_Send(&out, 1, MPI_INT, 0, 5, self);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  CHECK(in == out, "self message %d", in);

  /* An intercommunicator between the even and the odd ranks of WORLD. */
  if (size >= 2) {
    int nodd = size / 2, neven = size - nodd;
    int* evens = malloc(sizeof(int) * (size_t)neven);
    int* odds = malloc(sizeof(int) * (size_t)nodd);
    for (int i = 0; i < neven; ++i) evens[i] = 2 * i;
    for (int i = 0; i < nodd; ++i) odds[i] = 2 * i + 1;
    MPI_Group even_group, odd_group;
    MPI_Group_incl(wgroup, neven, evens, &even_group);
    MPI_Group_incl(wgroup, nodd, odds, &odd_group);
    const int even = rank % 2 == 0;
    MPI_Comm inter;
    CHECK(MPI_Intercomm_create_from_groups(even ? even_group : odd_group, 0,
                                           even ? odd_group : even_group, 0,
                                           "org.sluice.test.session.inter", MPI_INFO_NULL,
                                           MPI_ERRORS_RETURN, &inter) == MPI_SUCCESS,
          "%s", "Intercomm_create_from_groups");
    int remote = 0, is_inter = 0;
    MPI_Comm_test_inter(inter, &is_inter);
    MPI_Comm_remote_size(inter, &remote);
    CHECK(is_inter && remote == (even ? nodd : neven), "remote size %d", remote);
    /* Each side's rank 0 sends its world rank to the other side's rank 0. */
    int lrank;
    MPI_Comm_rank(inter, &lrank);
    if (lrank == 0) {
      int got = -1;
      MPI_Sendrecv(&rank, 1, MPI_INT, 0, 9, &got, 1, MPI_INT, 0, 9, inter, MPI_STATUS_IGNORE);
      CHECK(got == (even ? 1 : 0), "leader exchange %d", got);
    }
    MPI_Comm_free(&inter);
    MPI_Group_free(&even_group);
    MPI_Group_free(&odd_group);
    free(evens);
    free(odds);
  }

  /* A second session at the same time, with its own communicator; closing it leaves the
     first working. */
  MPI_Session s2 = MPI_SESSION_NULL;
  CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2) == MPI_SUCCESS, "%s", "second");
  MPI_Group wgroup2;
  MPI_Comm world2;
  MPI_Group_from_session_pset(s2, "mpi://WORLD", &wgroup2);
  MPI_Comm_create_from_group(wgroup2, "org.sluice.test.session.second", MPI_INFO_NULL,
                             MPI_ERRORS_RETURN, &world2);
  int max = -1;
  MPI_Allreduce(&rank, &max, 1, MPI_INT, MPI_MAX, world2);
  CHECK(max == size - 1, "second session allreduce %d", max);
  MPI_Comm_free(&world2);
  MPI_Group_free(&wgroup2);
  CHECK(MPI_Session_finalize(&s2) == MPI_SUCCESS && s2 == MPI_SESSION_NULL, "%s",
        "finalize second");
  MPI_Barrier(world);

  /* Session error handlers: a handler written here gets the code MPI_Session_call_errhandler
     passes; MPI_Session_get_errhandler returns what was set. */
  MPI_Errhandler eh, got;
  CHECK(MPI_Session_create_errhandler(on_error, &eh) == MPI_SUCCESS, "%s", "create_errhandler");
  MPI_Session_set_errhandler(s, eh);
  MPI_Session_get_errhandler(s, &got);
  CHECK(got == eh, "%s", "get_errhandler");
  MPI_Errhandler_free(&got);
  MPI_Session_call_errhandler(s, MPI_ERR_OTHER);
  CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER, "handler calls %d code %d",
        handler_calls, handler_code);
  MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN);
  MPI_Errhandler_free(&eh);

  MPI_Comm_free(&self);
  MPI_Comm_free(&world);
  MPI_Group_free(&sgroup);
  MPI_Group_free(&wgroup);
  CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS && s == MPI_SESSION_NULL, "%s", "finalize");
  if (failures) fprintf(stderr, "session: %d checks failed\n", failures);
  return failures ? 1 : 0;
}
