/* Persistent buffered and ready sends (MPI_Bsend_init, MPI_Rsend_init), restarted with new
 * data: a ring where each rank's receive is posted (and a barrier passed) before the ready
 * send starts; buffered sends complete at once and free their buffer space for the next. */
/* SLUICE_TEST_RANKS: 1 2 3 4 */
#include <string.h>

#include "check.h"

enum { N = 300, ROUNDS = 6 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;

  /* Room for one buffered message at a time: each round's must free it for the next. */
  int bufsize = 0;
  MPI_Pack_size(N, MPI_INT, MPI_COMM_WORLD, &bufsize);
  bufsize += MPI_BSEND_OVERHEAD;
  char* attached = malloc(bufsize);
  MPI_Buffer_attach(attached, bufsize);

  int out[N], in[N];
  MPI_Request bsend, rsend, recv;
  MPI_Bsend_init(out, N, MPI_INT, right, 1, MPI_COMM_WORLD, &bsend);
  MPI_Rsend_init(out, N, MPI_INT, right, 2, MPI_COMM_WORLD, &rsend);
  for (int round = 0; round < ROUNDS; ++round) {
    const int buffered = round % 2 == 0;
    MPI_Recv_init(in, N, MPI_INT, left, buffered ? 1 : 2, MPI_COMM_WORLD, &recv);
    MPI_Start(&recv);
    MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted: a ready send is legal */
    for (int i = 0; i < N; ++i) out[i] = rank * 1000 + round * 10 + i % 7;
    MPI_Request send = buffered ? bsend : rsend;
    MPI_Start(&send);
    MPI_Status st;
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    CHECK(send != MPI_REQUEST_NULL, "a persistent request was freed by MPI_Wait");
    if (buffered) memset(out, 0xff, sizeof out); /* the buffered copy went out, not this */
    MPI_Wait(&recv, &st);
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N && st.MPI_SOURCE == left && st.MPI_TAG == (buffered ? 1 : 2),
          "round %d: count %d source %d tag %d", round, count, st.MPI_SOURCE, st.MPI_TAG);
    int bad = -1;
    for (int i = 0; i < N && bad < 0; ++i)
      if (in[i] != left * 1000 + round * 10 + i % 7) bad = i;
    CHECK(bad < 0, "round %d: element %d is %d", round, bad, bad < 0 ? 0 : in[bad]);
    MPI_Request_free(&recv);
    MPI_Barrier(MPI_COMM_WORLD); /* nobody's next ready send overtakes this round */
  }
  MPI_Request_free(&bsend);
  MPI_Request_free(&rsend);
  CHECK(bsend == MPI_REQUEST_NULL && rsend == MPI_REQUEST_NULL, "Request_free did not null");

  /* A persistent send to MPI_PROC_NULL completes at once with an empty status. */
  MPI_Request null_send;
  MPI_Rsend_init(out, N, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &null_send);
  MPI_Start(&null_send);
  MPI_Wait(&null_send, MPI_STATUS_IGNORE);
  MPI_Request_free(&null_send);

  void* detached;
  int detached_size;
  MPI_Buffer_detach(&detached, &detached_size);
  CHECK(detached == attached && detached_size == bufsize, "Buffer_detach gave %p/%d", detached,
        detached_size);
  free(attached);
  MPI_Finalize();
  return check_exit("persistent_modes");
}
