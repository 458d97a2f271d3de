/* C <-> Fortran handle conversion (MPI_Comm_c2f/f2c and kin, MPI_Status_c2f/f2c): every
 * handle kind converts to an integer and back to the same handle, a handle converts to
 * the same integer every time, null handles stay null, and a status keeps its fields. */
/* SLUICE_TEST_RANKS: 1 2 */
#include "check.h"

#define ROUND_TRIP(kind, handle)                                                              \
  do {                                                                                        \
    const MPI_Fint f_ = MPI_##kind##_c2f(handle);                                             \
    CHECK(MPI_##kind##_f2c(f_) == (handle), "%s: %s -> %d -> another handle", #kind, #handle, \
          (int)f_);                                                                           \
    CHECK(MPI_##kind##_c2f(handle) == f_, "%s: %s converts to two integers", #kind, #handle); \
  } while (0)

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  ROUND_TRIP(Comm, MPI_COMM_WORLD);
  ROUND_TRIP(Comm, MPI_COMM_SELF);
  ROUND_TRIP(Comm, dup);
  CHECK(MPI_Comm_c2f(MPI_COMM_WORLD) != MPI_Comm_c2f(dup), "two communicators, one integer");
  CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_NULL)) == MPI_COMM_NULL, "MPI_COMM_NULL");

  MPI_Group group;
  MPI_Comm_group(dup, &group);
  ROUND_TRIP(Group, group);
  ROUND_TRIP(Group, MPI_GROUP_EMPTY);

  MPI_Datatype vec;
  MPI_Type_vector(2, 1, 3, MPI_DOUBLE, &vec);
  MPI_Type_commit(&vec);
  ROUND_TRIP(Type, MPI_INT);
  ROUND_TRIP(Type, MPI_DOUBLE);
  ROUND_TRIP(Type, vec);
  CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DATATYPE_NULL)) == MPI_DATATYPE_NULL, "MPI_DATATYPE_NULL");

  ROUND_TRIP(Op, MPI_SUM);
  ROUND_TRIP(Op, MPI_MAXLOC);
  ROUND_TRIP(Errhandler, MPI_ERRORS_RETURN);
  MPI_Info info;
  MPI_Info_create(&info);
  ROUND_TRIP(Info, info);
  ROUND_TRIP(Message, MPI_MESSAGE_NO_PROC);
  CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL, "null message");

  /* A request converted while pending, completed through the converted-back handle. */
  int in = 0;
  MPI_Request req;
  MPI_Irecv(&in, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &req);
  MPI_Request back = MPI_Request_f2c(MPI_Request_c2f(req));
  CHECK(back == req, "request round trip");
  MPI_Status st;
  MPI_Wait(&back, &st);

  /* Statuses: C -> Fortran integers -> C keeps what the program reads. */
  MPI_Fint fst[sizeof(MPI_Status) / sizeof(MPI_Fint) + 8];
  MPI_Status st2;
  st.MPI_SOURCE = 3, st.MPI_TAG = 17, st.MPI_ERROR = MPI_ERR_TRUNCATE;
  MPI_Status_set_elements(&st, MPI_INT, 5);
  MPI_Status_c2f(&st, fst);
  MPI_Status_f2c(fst, &st2);
  int count = -1;
  MPI_Get_count(&st2, MPI_INT, &count);
  CHECK(st2.MPI_SOURCE == 3 && st2.MPI_TAG == 17 && st2.MPI_ERROR == MPI_ERR_TRUNCATE && count == 5,
        "status round trip: source %d tag %d error %d count %d", st2.MPI_SOURCE, st2.MPI_TAG,
        st2.MPI_ERROR, count);

  MPI_Info_free(&info);
  MPI_Type_free(&vec);
  MPI_Group_free(&group);
  MPI_Comm_free(&dup);
  MPI_Finalize();
  return check_exit("handle_convert");
}
