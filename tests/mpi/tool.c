/* The MPI tool information interface (MPI-3.1 §14.3): initialized before MPI_Init and used
 * after MPI_Finalize; every control variable, performance variable and category enumerated,
 * looked up by name, read through a handle; the string protocol; sessions, handles, start,
 * stop, read, reset, readreset, write; the error codes of misuse.
 * Under Sluice also the values themselves: SLUICE_EAGER_LIMIT reads what the environment set
 * (expected value as "--eager N", default 4096), the eager-message counter moves by exactly the
 * messages sent below that limit and not at all for larger ones, the threshold pvar (a level)
 * equals the cvar, LOG_LEVEL and SPIN_TIME written before MPI_Init are in force after it, a
 * key read at start-up refuses writes, and the counters keep their final values after
 * MPI_Finalize. */
/* SLUICE_TEST_RANKS: 1 2 4 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank = -1; /* MPI_Comm_rank cannot be called before MPI_Init or after MPI_Finalize */
static int failures = 0;
#define TCHECK(cond, ...)                                                                      \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", rank, __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                            \
      fprintf(stderr, "\n");                                                                   \
      ++failures;                                                                              \
    }                                                                                          \
  } while (0)

static int valid_cvar_type(MPI_Datatype t) {
  return t == MPI_INT || t == MPI_UNSIGNED || t == MPI_UNSIGNED_LONG ||
         t == MPI_UNSIGNED_LONG_LONG || t == MPI_COUNT || t == MPI_CHAR || t == MPI_DOUBLE;
}

/* Every cvar: info (with the string protocol), index by name, a handle and a read. */
static void enumerate_cvars(void) {
  int num = -1;
  TCHECK(MPI_T_cvar_get_num(&num) == MPI_SUCCESS && num >= 0, "num %d", num);
  for (int i = 0; i < num; ++i) {
    char name[256], desc[1024];
    int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope;
    MPI_Datatype type;
    MPI_T_enum en;
    TCHECK(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &en, desc, &desc_len, &bind,
                               &scope) == MPI_SUCCESS,
           "cvar %d", i);
    TCHECK(name_len == (int)strlen(name) + 1, "cvar %d name_len %d for '%s'", i, name_len, name);
    TCHECK(valid_cvar_type(type), "cvar %s: datatype not one MPI_T allows", name);
    TCHECK(scope >= MPI_T_SCOPE_CONSTANT && scope <= MPI_T_SCOPE_ALL_EQ, "cvar %s scope %d", name,
           scope);
    int needed = 0; /* length query: 0 in, length with the terminator out */
    TCHECK(MPI_T_cvar_get_info(i, NULL, &needed, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
                   MPI_SUCCESS &&
               needed == (int)strlen(name) + 1,
           "cvar %s: length query gave %d", name, needed);
    int index = -1;
    TCHECK(MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS && index == i,
           "cvar %s: index %d, expected %d", name, index, i);
    if (en != MPI_T_ENUM_NULL) {
      int items = 0;
      TCHECK(MPI_T_enum_get_info(en, &items, NULL, NULL) == MPI_SUCCESS && items > 0,
             "cvar %s: enum with %d items", name, items);
    }
    if (bind != MPI_T_BIND_NO_OBJECT) continue; /* needs an object of the bound kind */
    MPI_T_cvar_handle h;
    int count = 0;
    TCHECK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count) == MPI_SUCCESS, "cvar %s alloc", name);
    TCHECK(count >= 1 || type == MPI_CHAR, "cvar %s count %d", name, count);
    if (count >= 1 && count < 65536) {
      char* buf = calloc((size_t)count, 16);
      TCHECK(MPI_T_cvar_read(h, buf) == MPI_SUCCESS, "cvar %s read", name);
      free(buf);
    }
    TCHECK(MPI_T_cvar_handle_free(&h) == MPI_SUCCESS && h == MPI_T_CVAR_HANDLE_NULL, "cvar %s free",
           name);
  }
  int index = 0;
  TCHECK(MPI_T_cvar_get_index("no such variable, surely", &index) == MPI_T_ERR_INVALID_NAME, "%s",
         "unknown cvar name");
  char name[8];
  int len = sizeof name;
  TCHECK(MPI_T_cvar_get_info(num, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
             MPI_T_ERR_INVALID_INDEX,
         "%s", "cvar index past the end");
}

/* Every category: the indices it lists are valid. */
static void enumerate_categories(void) {
  int ncat = -1, ncvar = 0, npvar = 0, stamp = -1, stamp2 = -1;
  TCHECK(MPI_T_category_get_num(&ncat) == MPI_SUCCESS && ncat >= 0, "num %d", ncat);
  MPI_T_cvar_get_num(&ncvar);
  MPI_T_pvar_get_num(&npvar);
  TCHECK(MPI_T_category_changed(&stamp) == MPI_SUCCESS, "%s", "changed");
  for (int c = 0; c < ncat; ++c) {
    char name[256];
    int len = sizeof name, nc = -1, np = -1, nk = -1;
    TCHECK(MPI_T_category_get_info(c, name, &len, NULL, NULL, &nc, &np, &nk) == MPI_SUCCESS,
           "category %d", c);
    int index = -1;
    TCHECK(MPI_T_category_get_index(name, &index) == MPI_SUCCESS && index == c,
           "category %s index %d", name, index);
    int* list = malloc(sizeof(int) * (size_t)(nc + np + nk + 1));
    if (nc > 0) {
      TCHECK(MPI_T_category_get_cvars(c, nc, list) == MPI_SUCCESS, "%s", name);
      for (int i = 0; i < nc; ++i)
        TCHECK(list[i] >= 0 && list[i] < ncvar, "%s cvar %d", name, list[i]);
    }
    if (np > 0) {
      TCHECK(MPI_T_category_get_pvars(c, np, list) == MPI_SUCCESS, "%s", name);
      for (int i = 0; i < np; ++i)
        TCHECK(list[i] >= 0 && list[i] < npvar, "%s pvar %d", name, list[i]);
    }
    if (nk > 0) {
      TCHECK(MPI_T_category_get_categories(c, nk, list) == MPI_SUCCESS, "%s", name);
      for (int i = 0; i < nk; ++i)
        TCHECK(list[i] >= 0 && list[i] < ncat && list[i] != c, "%s sub %d", name, list[i]);
    }
    free(list);
  }
  TCHECK(MPI_T_category_changed(&stamp2) == MPI_SUCCESS && stamp2 == stamp,
         "stamp %d then %d with nothing added", stamp, stamp2);
}

/* Every pvar bound to no object: info, index by name and class, a handle, a read. */
static void enumerate_pvars(MPI_T_pvar_session s) {
  int num = -1;
  TCHECK(MPI_T_pvar_get_num(&num) == MPI_SUCCESS && num >= 0, "num %d", num);
  for (int i = 0; i < num; ++i) {
    char name[256];
    int name_len = sizeof name, verbosity, var_class, bind, readonly, continuous, atomic;
    MPI_Datatype type;
    MPI_T_enum en;
    TCHECK(MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &type, &en, NULL, NULL,
                               &bind, &readonly, &continuous, &atomic) == MPI_SUCCESS,
           "pvar %d", i);
    TCHECK(var_class >= MPI_T_PVAR_CLASS_STATE && var_class <= MPI_T_PVAR_CLASS_GENERIC,
           "pvar %s class %d", name, var_class);
    int index = -1;
    TCHECK(MPI_T_pvar_get_index(name, var_class, &index) == MPI_SUCCESS && index == i,
           "pvar %s index %d, expected %d", name, index, i);
    if (bind != MPI_T_BIND_NO_OBJECT) continue;
    MPI_T_pvar_handle h;
    int count = 0;
    if (MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count) != MPI_SUCCESS) {
      TCHECK(0, "pvar %s alloc", name);
      continue;
    }
    if (count >= 1 && count < 65536) {
      char* buf = calloc((size_t)count, 16);
      TCHECK(MPI_T_pvar_read(s, h, buf) == MPI_SUCCESS, "pvar %s read", name);
      free(buf);
    }
    TCHECK(MPI_T_pvar_handle_free(s, &h) == MPI_SUCCESS && h == MPI_T_PVAR_HANDLE_NULL,
           "pvar %s free", name);
  }
}

#ifdef SLUICE_MPI
static int cvar_handle(const char* name, MPI_T_cvar_handle* h) {
  int index = -1, count = 0;
  if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS) {
    TCHECK(0, "no cvar %s", name);
    return 0;
  }
  TCHECK(MPI_T_cvar_handle_alloc(index, NULL, h, &count) == MPI_SUCCESS, "%s", name);
  return 1;
}

static unsigned long long read_eager_limit(void) {
  MPI_T_cvar_handle h;
  unsigned long long v = 0;
  if (!cvar_handle("SLUICE_EAGER_LIMIT", &h)) return 0;
  TCHECK(MPI_T_cvar_read(h, &v) == MPI_SUCCESS, "%s", "read");
  const unsigned long long big = 1 << 20;
  TCHECK(MPI_T_cvar_write(h, &big) == MPI_T_ERR_CVAR_SET_NEVER, "%s",
         "a key read at start-up refuses writes");
  MPI_T_cvar_handle_free(&h);
  return v;
}

/* Before MPI_Init: values from the environment; LOG_LEVEL and SPIN_TIME written for MPI_Init. */
static void before_init(unsigned long long expect_eager) {
  TCHECK(read_eager_limit() == expect_eager, "SLUICE_EAGER_LIMIT before MPI_Init, expected %llu",
         expect_eager);
  int index, datatype_ok, items = 0, value = -1, num = -1;
  char item[32];
  int len = sizeof item;
  MPI_Datatype type;
  MPI_T_enum en;
  TCHECK(MPI_T_cvar_get_index("SLUICE_LOG_LEVEL", &index) == MPI_SUCCESS, "%s", "LOG_LEVEL");
  MPI_T_cvar_get_info(index, NULL, NULL, NULL, &type, &en, NULL, NULL, NULL, NULL);
  datatype_ok = type == MPI_INT && en != MPI_T_ENUM_NULL;
  TCHECK(datatype_ok, "%s", "LOG_LEVEL is an enumeration");
  if (datatype_ok) {
    TCHECK(MPI_T_enum_get_info(en, &items, NULL, NULL) == MPI_SUCCESS && items == 4, "items %d",
           items);
    TCHECK(MPI_T_enum_get_item(en, 0, &value, item, &len) == MPI_SUCCESS && value == 0 &&
               strcmp(item, "error") == 0 && len == 6,
           "item 0: %d '%s' len %d", value, item, len);
    TCHECK(MPI_T_enum_get_item(en, 4, &value, item, &len) == MPI_T_ERR_INVALID_ITEM, "%s",
           "item past the end");
  }
  MPI_T_cvar_handle h;
  if (cvar_handle("SLUICE_LOG_LEVEL", &h)) {
    TCHECK(MPI_T_cvar_read(h, &value) == MPI_SUCCESS && value == 1, "default warn, read %d", value);
    value = 0; /* error */
    TCHECK(MPI_T_cvar_write(h, &value) == MPI_SUCCESS, "%s", "LOG_LEVEL write");
    value = 9;
    TCHECK(MPI_T_cvar_write(h, &value) == MPI_T_ERR_INVALID, "%s", "LOG_LEVEL out of range");
    MPI_T_cvar_handle_free(&h);
  }
  if (cvar_handle("SLUICE_SPIN_TIME", &h)) {
    const double spin = 0.0002, too_long = 11.0;
    TCHECK(MPI_T_cvar_write(h, &spin) == MPI_SUCCESS, "%s", "SPIN_TIME write");
    TCHECK(MPI_T_cvar_write(h, &too_long) == MPI_T_ERR_INVALID, "%s", "SPIN_TIME beyond 10s");
    MPI_T_cvar_handle_free(&h);
  }
  TCHECK(MPI_T_pvar_get_num(&num) == MPI_SUCCESS && num == 0, "%d pvars before MPI_Init", num);
}

static int pvar_handle(MPI_T_pvar_session s, const char* name, int var_class,
                       MPI_T_pvar_handle* h) {
  int index = -1, count = 0;
  if (MPI_T_pvar_get_index(name, var_class, &index) != MPI_SUCCESS) {
    TCHECK(0, "no pvar %s of class %d", name, var_class);
    return 0;
  }
  TCHECK(MPI_T_pvar_handle_alloc(s, index, NULL, h, &count) == MPI_SUCCESS && count == 1, "%s",
         name);
  return 1;
}

static unsigned long long pread(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
  unsigned long long v = ~0ull;
  TCHECK(MPI_T_pvar_read(s, h, &v) == MPI_SUCCESS, "%s", "pvar read");
  return v;
}

/* Rank 0 sends `n` messages of `bytes` to its right neighbour (itself alone): the eager
 * counter of the sender counts them iff they are within the eager limit. */
static void message_counters(MPI_T_pvar_session s, int size, unsigned long long eager_limit) {
  int index;
  TCHECK(MPI_T_cvar_get_index("SLUICE_LOG_LEVEL", &index) == MPI_SUCCESS, "%s", "");
  MPI_T_cvar_handle ch;
  int level = -1;
  double spin = -1;
  if (cvar_handle("SLUICE_LOG_LEVEL", &ch)) {
    MPI_T_cvar_read(ch, &level);
    MPI_T_cvar_handle_free(&ch);
  }
  TCHECK(level == 0, "LOG_LEVEL written before MPI_Init: %d in force", level);
  if (cvar_handle("SLUICE_SPIN_TIME", &ch)) {
    MPI_T_cvar_read(ch, &spin);
    MPI_T_cvar_handle_free(&ch);
  }
  TCHECK(spin > 0.000199 && spin < 0.000201, "SPIN_TIME written before MPI_Init: %g in force",
         spin);

  MPI_T_pvar_handle sent, sent_bytes, received, limit;
  if (!pvar_handle(s, "p2p.eager.messages_sent", MPI_T_PVAR_CLASS_COUNTER, &sent) ||
      !pvar_handle(s, "p2p.eager.bytes_sent", MPI_T_PVAR_CLASS_COUNTER, &sent_bytes) ||
      !pvar_handle(s, "p2p.eager.messages_received", MPI_T_PVAR_CLASS_COUNTER, &received) ||
      !pvar_handle(s, "p2p.threshold.eager_limit", MPI_T_PVAR_CLASS_LEVEL, &limit))
    return;
  TCHECK(pread(s, limit) == eager_limit, "threshold pvar %llu, cvar %llu", pread(s, limit),
         eager_limit);
  TCHECK(MPI_T_pvar_start(s, limit) == MPI_T_ERR_PVAR_NO_STARTSTOP, "%s", "a level");
  TCHECK(MPI_T_pvar_reset(s, limit) == MPI_T_ERR_PVAR_NO_WRITE, "%s", "a level");
  TCHECK(pread(s, sent) == 0, "%s", "a counter not started reads 0");

  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  const int sizes[] = {100, 3000};
  enum { kMessages = 7 };
  static char out[3000], in[3000];
  for (int k = 0; k < 2; ++k) {
    MPI_Barrier(MPI_COMM_WORLD);
    TCHECK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS, "%s", "reset all");
    TCHECK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS, "%s", "start all");
    /* Only point-to-point between start and stop: rank 0 to its right neighbour. */
    for (int m = 0; m < kMessages; ++m) {
      MPI_Request r = MPI_REQUEST_NULL;
      if (rank == right && rank == 0) {
        MPI_Irecv(in, sizes[k], MPI_CHAR, 0, m, MPI_COMM_WORLD, &r);
        MPI_Send(out, sizes[k], MPI_CHAR, 0, m, MPI_COMM_WORLD);
      } else if (rank == 0) {
        MPI_Send(out, sizes[k], MPI_CHAR, right, m, MPI_COMM_WORLD);
      } else if (left == 0) {
        MPI_Recv(in, sizes[k], MPI_CHAR, 0, m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    TCHECK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS, "%s", "stop all");
    const int eager = (unsigned long long)sizes[k] <= eager_limit;
    const unsigned long long expect_sent = rank == 0 && eager ? kMessages : 0;
    const unsigned long long expect_recv = left == 0 && eager ? kMessages : 0;
    TCHECK(pread(s, sent) == expect_sent, "%d B: eager sends %llu, expected %llu", sizes[k],
           pread(s, sent), expect_sent);
    TCHECK(pread(s, sent_bytes) == expect_sent * (unsigned long long)sizes[k],
           "%d B: eager bytes %llu", sizes[k], pread(s, sent_bytes));
    TCHECK(pread(s, received) == expect_recv, "%d B: eager receives %llu, expected %llu", sizes[k],
           pread(s, received), expect_recv);
  }
  /* A stopped handle keeps its value; write and readreset act on the handle only. */
  const unsigned long long five = 5;
  unsigned long long v = 0;
  TCHECK(MPI_T_pvar_write(s, sent, &five) == MPI_SUCCESS && pread(s, sent) == 5, "%s", "write");
  TCHECK(MPI_T_pvar_readreset(s, sent, &v) == MPI_SUCCESS && v == 5 && pread(s, sent) == 0,
         "readreset gave %llu", v);
  TCHECK(MPI_T_pvar_write(s, limit, &five) == MPI_T_ERR_PVAR_NO_WRITE, "%s", "a level");
  MPI_T_pvar_handle_free(s, &limit);
  MPI_T_pvar_handle_free(s, &sent_bytes);
  MPI_T_pvar_handle_free(s, &received);
  TCHECK(MPI_T_pvar_read(s, limit, &v) == MPI_T_ERR_INVALID_HANDLE, "%s", "a freed handle");
  /* Left started across MPI_Finalize: counts this rank's eager sends up to the end. */
  MPI_T_pvar_start(s, sent);
}
#endif

int main(int argc, char** argv) {
  unsigned long long expect_eager = 4096;
  for (int i = 1; i + 1 < argc; ++i)
    if (strcmp(argv[i], "--eager") == 0) expect_eager = strtoull(argv[i + 1], NULL, 10);
  (void)expect_eager;

  int provided = -1, num = 0;
  TCHECK(MPI_T_cvar_get_num(&num) == MPI_T_ERR_NOT_INITIALIZED, "%s", "before MPI_T_init_thread");
  TCHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "%s", "MPI_T_init_thread");
  TCHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE, "provided %d", provided);
  enumerate_cvars();
#ifdef SLUICE_MPI
  before_init(expect_eager);
#endif

  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* Initialized twice: needs two MPI_T_finalize calls. */
  TCHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "%s", "again");
  enumerate_cvars();
  enumerate_categories();
  MPI_T_pvar_session s, s2;
  TCHECK(MPI_T_pvar_session_create(&s) == MPI_SUCCESS, "%s", "session");
  TCHECK(MPI_T_pvar_session_create(&s2) == MPI_SUCCESS, "%s", "session 2");
  enumerate_pvars(s);
  TCHECK(MPI_T_pvar_start(s2, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS, "%s", "empty session");
  TCHECK(MPI_T_pvar_session_free(&s2) == MPI_SUCCESS && s2 == MPI_T_PVAR_SESSION_NULL, "%s",
         "free");
#ifdef SLUICE_MPI
  int npvar = 0;
  MPI_T_pvar_get_num(&npvar);
  TCHECK(npvar > 10, "only %d pvars after MPI_Init", npvar);
  const unsigned long long eager_limit = read_eager_limit();
  TCHECK(eager_limit == expect_eager, "SLUICE_EAGER_LIMIT %llu, expected %llu", eager_limit,
         expect_eager);
  message_counters(s, size, eager_limit);
  MPI_T_pvar_handle sent;
  int index = -1, count;
  MPI_T_pvar_get_index("p2p.eager.messages_sent", MPI_T_PVAR_CLASS_COUNTER, &index);
  MPI_T_pvar_handle_alloc(s, index, NULL, &sent, &count);
  MPI_T_pvar_start(s, sent);
  /* Every rank sends 3 eager messages to its right neighbour (MPI_Sendrecv). */
  int token = rank, got = -1;
  for (int i = 0; i < 3; ++i)
    MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_T_pvar_stop(s, sent);
  const unsigned long long before_finalize = pread(s, sent);
  TCHECK(before_finalize == 3, "3 sends counted as %llu", before_finalize);
  MPI_T_pvar_start(s, sent);
#endif
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();

  /* After MPI_Finalize: the interface still answers. */
  enumerate_cvars();
  enumerate_categories();
#ifdef SLUICE_MPI
  TCHECK(read_eager_limit() == expect_eager, "%s", "SLUICE_EAGER_LIMIT after MPI_Finalize");
  /* Started before MPI_Finalize: includes what finalize itself sent, never less. */
  const unsigned long long after = pread(s, sent);
  TCHECK(after >= 3, "after MPI_Finalize the counter reads %llu", after);
  TCHECK(pread(s, sent) == after, "%s", "the final value stays");
  MPI_T_pvar_stop(s, sent);
#endif
  TCHECK(MPI_T_pvar_session_free(&s) == MPI_SUCCESS, "%s", "free after finalize");
  TCHECK(MPI_T_finalize() == MPI_SUCCESS, "%s", "first MPI_T_finalize");
  TCHECK(MPI_T_finalize() == MPI_SUCCESS, "%s", "second MPI_T_finalize");
  TCHECK(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED, "%s", "one too many");
  if (failures) fprintf(stderr, "tool: %d checks failed\n", failures);
  return failures ? 1 : 0;
}
