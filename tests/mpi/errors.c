/* Bad input with MPI_ERRORS_RETURN: each error comes back with the right class. */
/* SLUICE_TEST_RANKS: 2 4 */
#include "check.h"

static int class_of(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int buf[16] = {0};
  int rc;

  rc = MPI_Send(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
  CHECK(class_of(rc) == MPI_ERR_RANK, "send to rank %d: class %d", size, class_of(rc));
  rc = MPI_Send(buf, 1, MPI_INT, -7, 0, MPI_COMM_WORLD);
  CHECK(class_of(rc) == MPI_ERR_RANK, "send to rank -7: class %d", class_of(rc));
  rc = MPI_Recv(buf, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(class_of(rc) == MPI_ERR_RANK, "recv from bad rank: class %d", class_of(rc));
  rc = MPI_Send(buf, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
  CHECK(class_of(rc) == MPI_ERR_TAG, "negative tag: class %d", class_of(rc));
  MPI_Request req;
  rc = MPI_Irecv(buf, 1, MPI_INT, 0, -9, MPI_COMM_WORLD, &req);
  CHECK(class_of(rc) == MPI_ERR_TAG, "irecv negative tag: class %d", class_of(rc));
  rc = MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  CHECK(class_of(rc) == MPI_ERR_COUNT, "negative count: class %d", class_of(rc));
  rc = MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD);
  CHECK(class_of(rc) == MPI_ERR_TYPE, "null datatype: class %d", class_of(rc));
  MPI_Datatype uncommitted;
  MPI_Type_contiguous(2, MPI_INT, &uncommitted);
  rc = MPI_Send(buf, 1, uncommitted, 0, 0, MPI_COMM_WORLD);
  CHECK(class_of(rc) == MPI_ERR_TYPE, "uncommitted datatype: class %d", class_of(rc));
  MPI_Type_free(&uncommitted);
  rc = MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
  CHECK(class_of(rc) == MPI_ERR_COMM, "null communicator: class %d", class_of(rc));
  int flag;
  rc = MPI_Iprobe(size, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  CHECK(class_of(rc) == MPI_ERR_RANK, "iprobe bad rank: class %d", class_of(rc));

  /* truncation: rank 0 sends 10 ints, rank 1 has room for 5 */
  if (rank == 0) {
    MPI_Send(buf, 10, MPI_INT, 1, 1, MPI_COMM_WORLD);
    MPI_Send(buf, 10, MPI_INT, 1, 2, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Status st;
    rc = MPI_Recv(buf, 5, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
    CHECK(class_of(rc) == MPI_ERR_TRUNCATE, "truncated recv: class %d", class_of(rc));
    MPI_Request r;
    MPI_Status sts[1];
    MPI_Irecv(buf, 5, MPI_INT, 0, 2, MPI_COMM_WORLD, &r);
    rc = MPI_Waitall(1, &r, sts);
    CHECK(class_of(rc) == MPI_ERR_IN_STATUS, "waitall truncated: class %d", class_of(rc));
    CHECK(class_of(sts[0].MPI_ERROR) == MPI_ERR_TRUNCATE, "waitall status error class %d",
          class_of(sts[0].MPI_ERROR));
  }

  /* errors on a communicator use that communicator's handler */
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  rc = MPI_Send(buf, 1, MPI_INT, 99, 0, dup);
  CHECK(class_of(rc) == MPI_ERR_RANK, "dup inherits ERRORS_RETURN: class %d", class_of(rc));
  MPI_Comm_free(&dup);

  /* the request still works after errors */
  int v = rank, got = -1;
  MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 9, &got, 1, MPI_INT, (rank - 1 + size) % size, 9,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK(got == (rank - 1 + size) % size, "sendrecv after errors %d", got);

  MPI_Finalize();
  return check_exit("errors");
}
