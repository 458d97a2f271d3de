/* MPI-4.0 additions: MPI_Isendrecv, MPI_Isendrecv_replace (eager and rendezvous sizes, a
 * derived datatype, MPI_PROC_NULL, completion by Wait, Test loops and Waitall), MPI_Info_get_string
 * (the buflen protocol), MPI_Info_create_env (before MPI_Init) and MPI_Comm_idup_with_info. */
/* SLUICE_TEST_RANKS: 1 2 3 4 */
/* SLUICE_TEST_NO_PEER: Debian's Open MPI 4.1 has no MPI-4.0 functions, and its MPICH 4.0.2
   fills an MPI_Isendrecv request's status from the send half, asserts in MPI_Type_free after
   MPI_Isendrecv_replace on a derived type and crashes in ucp_tag_send_nbx with MPI_INT. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void ring_isendrecv(int rank, int size, int n) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int* out = malloc(sizeof(int) * (size_t)n);
  int* in = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; ++i) {
    out[i] = rank * 1000003 + i;
    in[i] = -1;
  }
  MPI_Request req;
  MPI_Status st;
  CHECK(MPI_Isendrecv(out, n, MPI_INT, right, 7, in, n, MPI_INT, left, 7, MPI_COMM_WORLD, &req) ==
            MPI_SUCCESS,
        "%s", "");
  int flag = 0;
  while (!flag) CHECK(MPI_Test(&req, &flag, &st) == MPI_SUCCESS, "%s", "");
  CHECK(req == MPI_REQUEST_NULL, "%s", "");
  CHECK(st.MPI_SOURCE == left, "%s", "");
  CHECK(st.MPI_TAG == 7, "%s", "");
  int count = -1;
  MPI_Get_count(&st, MPI_INT, &count);
  CHECK(count == n, "%s", "");
  for (int i = 0; i < n; ++i) CHECK(in[i] == left * 1000003 + i, "%s", "");
  free(out);
  free(in);
}

static void ring_replace(int rank, int size, int n) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  /* Every other int of a 2n array: a derived type, packed before the receive lands. */
  const int stride = 2;
  MPI_Datatype every_other;
  MPI_Type_vector(n, 1, stride, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  int* buf = malloc(sizeof(int) * (size_t)stride * (size_t)n);
  for (int i = 0; i < stride * n; ++i) buf[i] = (i % stride) ? -7 : rank * 1000003 + i / stride;
  MPI_Request req;
  MPI_Status st;
  CHECK(MPI_Isendrecv_replace(buf, 1, every_other, right, 9, left, 9, MPI_COMM_WORLD, &req) ==
            MPI_SUCCESS,
        "%s", "");
  CHECK(MPI_Wait(&req, &st) == MPI_SUCCESS, "%s", "");
  CHECK(st.MPI_SOURCE == left, "%s", "");
  for (int i = 0; i < stride * n; ++i)
    CHECK(buf[i] == ((i % stride) ? -7 : left * 1000003 + i / stride), "%s", "");
  MPI_Type_free(&every_other);
  free(buf);
}

static void proc_null(void) {
  int x = 5, y = 6;
  MPI_Request req[2];
  MPI_Status st[2];
  CHECK(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, &y, 1, MPI_INT, MPI_PROC_NULL, 1,
                      MPI_COMM_WORLD, &req[0]) == MPI_SUCCESS,
        "%s", "");
  CHECK(MPI_Isendrecv_replace(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD,
                              &req[1]) == MPI_SUCCESS,
        "%s", "");
  CHECK(MPI_Waitall(2, req, st) == MPI_SUCCESS, "%s", "");
  for (int i = 0; i < 2; ++i) {
    CHECK(st[i].MPI_SOURCE == MPI_PROC_NULL, "%s", "");
    int count = -1;
    MPI_Get_count(&st[i], MPI_INT, &count);
    CHECK(count == 0, "%s", "");
  }
  CHECK(x == 5 && y == 6, "%s", "");
}

static void info_string(void) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "greeting", "hello");
  int flag = 0, buflen = 0;
  CHECK(MPI_Info_get_string(info, "greeting", &buflen, NULL, &flag) == MPI_SUCCESS, "%s", "");
  CHECK(flag == 1 && buflen == 6, "%s", "");
  char small[3] = "xx";
  buflen = 3;
  CHECK(MPI_Info_get_string(info, "greeting", &buflen, small, &flag) == MPI_SUCCESS, "%s", "");
  CHECK(flag == 1 && buflen == 6 && strcmp(small, "he") == 0, "%s", "");
  char big[32];
  buflen = (int)sizeof big;
  CHECK(MPI_Info_get_string(info, "greeting", &buflen, big, &flag) == MPI_SUCCESS, "%s", "");
  CHECK(flag == 1 && buflen == 6 && strcmp(big, "hello") == 0, "%s", "");
  buflen = 11;
  CHECK(MPI_Info_get_string(info, "absent", &buflen, big, &flag) == MPI_SUCCESS, "%s", "");
  CHECK(flag == 0 && buflen == 11, "%s", "");
  MPI_Info_free(&info);
}

int main(int argc, char** argv) {
  /* Allowed before MPI_Init (MPI-4.0 §11.2.3). */
  MPI_Info env;
  CHECK(MPI_Info_create_env(argc, argv, &env) == MPI_SUCCESS, "%s", "");
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  char command[4096];
  int flag = 0, len = (int)sizeof command;
  CHECK(MPI_Info_get_string(env, "command", &len, command, &flag) == MPI_SUCCESS, "%s", "");
  if (flag) CHECK(strcmp(command, argv[0]) == 0 || strstr(argv[0], command) != NULL, "%s", "");
  MPI_Info_free(&env);

  ring_isendrecv(rank, size, 10);
  ring_isendrecv(rank, size, 300000); /* 1.2 MB: rendezvous */
  ring_replace(rank, size, 10);
  ring_replace(rank, size, 100000);
  proc_null();
  info_string();

  MPI_Info hints;
  MPI_Info_create(&hints);
  MPI_Info_set(hints, "mpi_assert_no_any_tag", "true");
  MPI_Comm dup;
  MPI_Request req;
  CHECK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, hints, &dup, &req) == MPI_SUCCESS, "%s", "");
  CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "%s", "");
  int result = -1;
  MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
  CHECK(result == MPI_CONGRUENT, "%s", "");
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, dup);
  CHECK(sum == size, "%s", "");
  MPI_Comm_free(&dup);
  MPI_Info_free(&hints);

  MPI_Finalize();
  if (rank == 0 && !check_failures) printf("mpi4: ok (%d ranks)\n", size);
  return check_exit("mpi4");
}
