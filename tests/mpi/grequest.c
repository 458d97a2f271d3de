/* Generalized requests: MPI_Grequest_start/complete with the query, free and cancel
 * callbacks (call order, status from the query function, its error), completion from
 * another thread while MPI_Wait blocks, MPI_Request_free before completion, and a
 * generalized request among others in MPI_Waitall / MPI_Testany. */
/* SLUICE_TEST_RANKS: 1 2 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "check.h"

struct state {
  char log[16]; /* callbacks in call order: q(uery), f(ree), c/C (cancel, not/complete) */
  int cancelled;
  int query_error;
};

static void note(struct state* s, char c) {
  size_t n = strlen(s->log);
  if (n + 1 < sizeof s->log) s->log[n] = c, s->log[n + 1] = '\0';
}
static int query(void* extra, MPI_Status* status) {
  struct state* s = extra;
  note(s, 'q');
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  MPI_Status_set_elements(status, MPI_BYTE, 42);
  MPI_Status_set_cancelled(status, s->cancelled);
  return s->query_error;
}
static int free_fn(void* extra) {
  note(extra, 'f');
  return MPI_SUCCESS;
}
static int cancel_fn(void* extra, int complete) {
  struct state* s = extra;
  note(s, complete ? 'C' : 'c');
  if (!complete) s->cancelled = 1;
  return MPI_SUCCESS;
}

static void* complete_later(void* request) {
  struct timespec ts = {0, 20 * 1000 * 1000};
  nanosleep(&ts, NULL);
  MPI_Grequest_complete(*(MPI_Request*)request);
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);

  /* Complete, then wait: query then free, the query function's status. */
  {
    struct state s = {"", 0, MPI_SUCCESS};
    MPI_Request r;
    MPI_Grequest_start(query, free_fn, cancel_fn, &s, &r);
    int flag = 1;
    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag && r != MPI_REQUEST_NULL, "incomplete generalized request tested complete");
    CHECK(s.log[0] == '\0', "callbacks before completion: %s", s.log);
    MPI_Grequest_complete(r);
    MPI_Status st;
    MPI_Wait(&r, &st);
    int count = -1, cancelled = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(r == MPI_REQUEST_NULL, "not freed by MPI_Wait");
    CHECK(strcmp(s.log, "qf") == 0, "callbacks %s, expected qf", s.log);
    CHECK(count == 42 && cancelled == 0 && st.MPI_SOURCE == MPI_UNDEFINED,
          "status: count %d cancelled %d source %d", count, cancelled, st.MPI_SOURCE);
  }
  /* Completed by another thread while this one waits. */
  if (provided == MPI_THREAD_MULTIPLE) {
    struct state s = {"", 0, MPI_SUCCESS};
    MPI_Request r;
    MPI_Grequest_start(query, free_fn, cancel_fn, &s, &r);
    MPI_Request copy = r;
    pthread_t t;
    pthread_create(&t, NULL, complete_later, &copy);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    pthread_join(t, NULL);
    CHECK(strcmp(s.log, "qf") == 0, "threaded: callbacks %s", s.log);
  }
  /* Cancelled before completion: cancel_fn(complete = 0), the query reports it. */
  {
    struct state s = {"", 0, MPI_SUCCESS};
    MPI_Request r;
    MPI_Grequest_start(query, free_fn, cancel_fn, &s, &r);
    MPI_Cancel(&r);
    MPI_Grequest_complete(r);
    MPI_Status st;
    MPI_Wait(&r, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(strcmp(s.log, "cqf") == 0 && cancelled, "cancel: callbacks %s cancelled %d", s.log,
          cancelled);
  }
  /* Freed before completion: one free callback, no query. */
  {
    struct state s = {"", 0, MPI_SUCCESS};
    MPI_Request r, handle;
    MPI_Grequest_start(query, free_fn, cancel_fn, &s, &r);
    handle = r;
    MPI_Request_free(&r);
    CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free did not null the handle");
    /* Sluice runs the free callback at completion, MPICH already at MPI_Request_free. */
    MPI_Grequest_complete(handle);
    CHECK(strcmp(s.log, "f") == 0, "freed, then completed: callbacks %s, expected f", s.log);
  }
  /* Among other requests: Testany finds nothing, Waitall completes both. */
  {
    struct state s = {"", 0, MPI_SUCCESS};
    MPI_Request rs[2];
    int in = 0, index = -2, flag = 1;
    MPI_Grequest_start(query, free_fn, cancel_fn, &s, &rs[0]);
    MPI_Irecv(&in, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rs[1]);
    MPI_Wait(&rs[1], MPI_STATUS_IGNORE);
    MPI_Testany(2, rs, &index, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "Testany completed an incomplete generalized request (index %d)", index);
    MPI_Grequest_complete(rs[0]);
    MPI_Status sts[2];
    MPI_Waitall(2, rs, sts);
    CHECK(rs[0] == MPI_REQUEST_NULL && strcmp(s.log, "qf") == 0, "Waitall: callbacks %s", s.log);
  }
  /* The query function's error is the completion's error. */
  {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    struct state s = {"", 0, MPI_ERR_OTHER};
    MPI_Request r;
    MPI_Grequest_start(query, free_fn, cancel_fn, &s, &r);
    MPI_Grequest_complete(r);
    MPI_Status st;
    int rc = MPI_Wait(&r, &st), cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER, "MPI_Wait returned %d (class %d), not MPI_ERR_OTHER", rc, cls);
  }

  MPI_Finalize();
  return check_exit("grequest");
}
