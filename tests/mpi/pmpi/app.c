/* The application a profiling library (prof.c) watches: it makes a known number of calls of
 * the functions prof.c counts, and many calls of others that libmpi implements with the
 * counted ones (Sendrecv, collectives, Testall, communicator and topology constructors,
 * intercommunicators). A tool must see exactly the application's calls, each forwarded to
 * PMPI_ (the data arrive), and none of the library's own; a call the application makes as
 * PMPI_Send is not counted. Prints "pmpi: ok" from rank 0. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* Defined by prof.c: resolved at link time (link order) or found in the preloaded library. */
long prof_calls(const char* name) __attribute__((weak));

static int failures = 0;
#define CHECK(cond, ...)                                            \
  do {                                                              \
    if (!(cond)) {                                                  \
      fprintf(stderr, "pmpi: rank %d: ", rank);                     \
      fprintf(stderr, __VA_ARGS__);                                 \
      fprintf(stderr, " (%s:%d: %s)\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                   \
    }                                                               \
  } while (0)

int main(int argc, char** argv) {
  int rank = -1, size = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  long (*calls)(const char*) = prof_calls;
  if (!calls) calls = (long (*)(const char*))dlsym(RTLD_DEFAULT, "prof_calls");
  if (!calls) {
    fprintf(stderr, "pmpi: rank %d: no profiling library in the process (prof_calls)\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  enum { kRing = 5, kShifts = 3 };

  /* kRing ring passes with MPI_Send/MPI_Recv (rank 0 sends first), 1 with PMPI_Send. */
  for (int i = 0; i <= kRing; ++i) {
    int out = rank * 100 + i, in = -1;
    if (rank == 0)
      i < kRing ? MPI_Send(&out, 1, MPI_INT, right, i, MPI_COMM_WORLD)
                : PMPI_Send(&out, 1, MPI_INT, right, i, MPI_COMM_WORLD);
    MPI_Recv(&in, 1, MPI_INT, left, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank != 0)
      i < kRing ? MPI_Send(&out, 1, MPI_INT, right, i, MPI_COMM_WORLD)
                : PMPI_Send(&out, 1, MPI_INT, right, i, MPI_COMM_WORLD);
    CHECK(in == left * 100 + i, "ring pass %d received %d", i, in);
  }
  for (int i = 0; i < kShifts; ++i) {
    int out = rank + i, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, right, 7, &in, 1, MPI_INT, left, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    CHECK(in == left + i, "shift %d received %d", i, in);
  }
  {
    int out = rank, in = -1;
    MPI_Request reqs[2];
    MPI_Status statuses[2];
    MPI_Irecv(&in, 1, MPI_INT, left, 8, MPI_COMM_WORLD, &reqs[1]);
    MPI_Isend(&out, 1, MPI_INT, right, 8, MPI_COMM_WORLD, &reqs[0]);
    MPI_Waitall(2, reqs, statuses);
    CHECK(in == left, "Isend/Irecv received %d", in);
    /* Testall on finished requests (libmpi's Testall once called its Waitall). */
    int flag = 0;
    MPI_Irecv(&in, 1, MPI_INT, MPI_PROC_NULL, 9, MPI_COMM_WORLD, &reqs[0]);
    do MPI_Testall(1, reqs, &flag, statuses);
    while (!flag);
  }
  int root_value = rank == 0 ? 42 : 0, sum = 0;
  MPI_Bcast(&root_value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  CHECK(root_value == 42, "Bcast gave %d", root_value);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(sum == size * (size - 1) / 2, "Allreduce gave %d", sum);
  MPI_Barrier(MPI_COMM_WORLD);

  /* Not counted, implemented with counted functions inside libraries. */
  {
    int total = -1, gathered[64], dims[1] = {0}, periods[1] = {1};
    MPI_Reduce(&rank, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Allgather(&rank, 1, MPI_INT, gathered, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Comm dup, cart, graph, half, inter;
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &dup);
    MPI_Dims_create(size, 1, dims);
    MPI_Cart_create(dup, 1, dims, periods, 1, &cart);
    const int dest = right;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &dest,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph);
    MPI_Message msg;
    int probed = -1;
    MPI_Request self_send; /* counted: one more MPI_Isend, one MPI_Wait */
    MPI_Isend(&rank, 1, MPI_INT, 0, 10, MPI_COMM_SELF, &self_send);
    MPI_Mprobe(0, 10, MPI_COMM_SELF, &msg, MPI_STATUS_IGNORE);
    MPI_Mrecv(&probed, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
    MPI_Wait(&self_send, MPI_STATUS_IGNORE);
    CHECK(probed == rank, "Mrecv gave %d", probed);
    if (size >= 2) {
      MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
      MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 11, &inter);
      int remote_sum = -1;
      MPI_Allreduce(&rank, &remote_sum, 1, MPI_INT, MPI_SUM, inter); /* counted */
      MPI_Comm_free(&inter);
      MPI_Comm_free(&half);
    }
    MPI_Comm_free(&graph);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&dup);
  }

  const int intercomm = size >= 2 ? 1 : 0;
  const struct {
    const char* name;
    long expected;
  } expect[] = {
      {"MPI_Init", 1},
      {"MPI_Comm_size", 1},
      {"MPI_Send", kRing},
      {"MPI_Recv", kRing + 1},
      {"MPI_Isend", 2},
      {"MPI_Irecv", 2},
      {"MPI_Wait", 1},
      {"MPI_Waitall", 1},
      {"MPI_Sendrecv", kShifts},
      {"MPI_Bcast", 1},
      {"MPI_Allreduce", 1 + intercomm},
      {"MPI_Barrier", 1},
  };
  for (size_t i = 0; i < sizeof expect / sizeof expect[0]; ++i) {
    const long got = calls(expect[i].name);
    CHECK(got == expect[i].expected, "the tool saw %ld calls of %s, the application made %ld", got,
          expect[i].name, expect[i].expected);
  }

  int all_failures = 0;
  PMPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 0 && all_failures == 0) printf("pmpi: ok (%d ranks)\n", size);
  return all_failures ? 1 : 0;
}
