/* NULL arguments with MPI_ERRORS_RETURN: a NULL buffer with a non-zero count is
   MPI_ERR_BUFFER, a NULL request (or flag, index, message) pointer and a NULL status where
   one must be read are MPI_ERR_ARG (as MPICH answers); none of them crashes. A NULL buffer
   with count 0, or with a datatype of absolute addresses (MPI_BOTTOM), is valid. */
/* SLUICE_TEST_RANKS: 1 2 */
#include "check.h"

static int class_of(int rc) {
  int cls = -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

#define EXPECT_CLASS(call, want)                                                           \
  do {                                                                                     \
    int rc_ = (call);                                                                      \
    CHECK(class_of(rc_) == (want), "%s: class %d, want %d", #call, class_of(rc_), (want)); \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  /* Errors tied to no communicator go to MPI_COMM_SELF (MPI-4) or MPI_COMM_WORLD. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int buf[4] = {1, 2, 3, 4};
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Status st;
  int flag = 0, n = 0;

  /* NULL buffers with a count. */
  EXPECT_CLASS(MPI_Send(NULL, 4, MPI_INT, rank, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  EXPECT_CLASS(MPI_Ssend(NULL, 1, MPI_INT, rank, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  EXPECT_CLASS(MPI_Isend(NULL, 4, MPI_INT, rank, 0, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER);
  EXPECT_CLASS(MPI_Recv(NULL, 4, MPI_INT, rank, 0, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER);
  EXPECT_CLASS(MPI_Irecv(NULL, 4, MPI_INT, rank, 0, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER);
  EXPECT_CLASS(
      MPI_Sendrecv(NULL, 4, MPI_INT, rank, 0, buf, 4, MPI_INT, rank, 0, MPI_COMM_WORLD, &st),
      MPI_ERR_BUFFER);
  EXPECT_CLASS(
      MPI_Sendrecv(buf, 4, MPI_INT, rank, 0, NULL, 4, MPI_INT, rank, 0, MPI_COMM_WORLD, &st),
      MPI_ERR_BUFFER);
  EXPECT_CLASS(MPI_Send_init(NULL, 4, MPI_INT, rank, 0, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER);
  EXPECT_CLASS(MPI_Recv_init(NULL, 4, MPI_INT, rank, 0, MPI_COMM_WORLD, &req), MPI_ERR_BUFFER);
  CHECK(req == MPI_REQUEST_NULL, "a failed call created a request");

  /* Valid: count 0 from NULL, and absolute addresses from MPI_BOTTOM. */
  EXPECT_CLASS(
      MPI_Sendrecv(NULL, 0, MPI_INT, rank, 1, NULL, 0, MPI_INT, rank, 1, MPI_COMM_WORLD, &st),
      MPI_SUCCESS);
  int out = 42, in = 0;
  MPI_Aint addr_out, addr_in;
  MPI_Get_address(&out, &addr_out);
  MPI_Get_address(&in, &addr_in);
  MPI_Datatype at_out, at_in;
  int one = 1;
  MPI_Type_create_struct(1, &one, &addr_out, (MPI_Datatype[]){MPI_INT}, &at_out);
  MPI_Type_create_struct(1, &one, &addr_in, (MPI_Datatype[]){MPI_INT}, &at_in);
  MPI_Type_commit(&at_out);
  MPI_Type_commit(&at_in);
  EXPECT_CLASS(MPI_Sendrecv(MPI_BOTTOM, 1, at_out, rank, 2, MPI_BOTTOM, 1, at_in, rank, 2,
                            MPI_COMM_WORLD, &st),
               MPI_SUCCESS);
  CHECK(in == 42, "MPI_BOTTOM receive: %d", in);
  MPI_Type_free(&at_out);
  MPI_Type_free(&at_in);

  /* NULL request pointers. */
  EXPECT_CLASS(MPI_Isend(buf, 4, MPI_INT, rank, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Irecv(buf, 4, MPI_INT, rank, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Send_init(buf, 4, MPI_INT, rank, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Ibarrier(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Wait(NULL, &st), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Test(NULL, &flag, &st), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Request_free(NULL), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Start(NULL), MPI_ERR_ARG);
  MPI_Request* volatile no_requests = NULL; /* opaque: no compile-time overflow warning */
  EXPECT_CLASS(MPI_Waitall(2, no_requests, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Testall(2, no_requests, &flag, MPI_STATUSES_IGNORE), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Waitany(2, no_requests, &n, &st), MPI_ERR_ARG);

  /* NULL flag / index / message / status where the call must write or read one. */
  req = MPI_REQUEST_NULL;
  EXPECT_CLASS(MPI_Test(&req, NULL, &st), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, NULL, &st), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Improbe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, NULL, &st), MPI_ERR_ARG);
#ifdef SLUICE_MPI
  /* MPI_STATUS_IGNORE is no status to read (MPICH, whose MPI_STATUS_IGNORE is address 1,
     crashes here: not compared). */
  EXPECT_CLASS(MPI_Get_count(MPI_STATUS_IGNORE, MPI_INT, &n), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Get_elements(MPI_STATUS_IGNORE, MPI_INT, &n), MPI_ERR_ARG);
  EXPECT_CLASS(MPI_Test_cancelled(MPI_STATUS_IGNORE, &flag), MPI_ERR_ARG);
  MPI_Status_set_elements(&st, MPI_INT, 3);
  EXPECT_CLASS(MPI_Get_count(&st, MPI_INT, NULL), MPI_ERR_ARG);
#endif

  /* Still working after all that. */
  int got[4] = {0};
  EXPECT_CLASS(
      MPI_Sendrecv(buf, 4, MPI_INT, rank, 3, got, 4, MPI_INT, rank, 3, MPI_COMM_WORLD, &st),
      MPI_SUCCESS);
  CHECK(got[3] == 4, "exchange after the errors: %d", got[3]);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return check_exit("args_null");
}
