// Handle conversion between C and Fortran (MPI-3.1 §17.2.4): the Fortran integer of a C
// handle and back, through the tables the Fortran binding uses (fortran/handles.hpp), so
// C and Fortran code in one program see the same integers. A status converts as its
// bytes: Fortran's MPI_STATUS_SIZE integers are C's MPI_Status.
#include <cstddef>
#include <cstring>

#include "mpi/big_lock.hpp"
#include "mpi/fortran/handles.hpp"
#include "mpi/mpi_internal.hpp"

static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "a status is whole Fortran integers");
// The mpi_f08 status is the same integers (mpi.h): converting is a copy, like Status_c2f.
static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status) &&
                  offsetof(MPI_F08_status, MPI_SOURCE) == offsetof(MPI_Status, MPI_SOURCE) &&
                  offsetof(MPI_F08_status, MPI_TAG) == offsetof(MPI_Status, MPI_TAG) &&
                  offsetof(MPI_F08_status, MPI_ERROR) == offsetof(MPI_Status, MPI_ERROR),
              "MPI_F08_status mirrors MPI_Status");

using namespace sluice::mpi;

extern "C" {

MPI_Fint PMPI_Comm_c2f(MPI_Comm handle) {
  SLUICE_MPI_CALL;
  return sluice_fortran_c2f(SLUICE_FH_COMM, handle);
}

MPI_Comm PMPI_Comm_f2c(MPI_Fint handle) {
  SLUICE_MPI_CALL;
  return static_cast<MPI_Comm>(sluice_fortran_f2c(SLUICE_FH_COMM, handle));
}

MPI_Fint PMPI_Group_c2f(MPI_Group handle) {
  SLUICE_MPI_CALL;
  return sluice_fortran_c2f(SLUICE_FH_GROUP, handle);
}

MPI_Group PMPI_Group_f2c(MPI_Fint handle) {
  SLUICE_MPI_CALL;
  return static_cast<MPI_Group>(sluice_fortran_f2c(SLUICE_FH_GROUP, handle));
}

MPI_Fint PMPI_Type_c2f(MPI_Datatype handle) {
  SLUICE_MPI_CALL;
  return sluice_fortran_c2f(SLUICE_FH_DATATYPE, handle);
}

MPI_Datatype PMPI_Type_f2c(MPI_Fint handle) {
  SLUICE_MPI_CALL;
  return static_cast<MPI_Datatype>(sluice_fortran_f2c(SLUICE_FH_DATATYPE, handle));
}

MPI_Fint PMPI_Op_c2f(MPI_Op handle) {
  SLUICE_MPI_CALL;
  return sluice_fortran_c2f(SLUICE_FH_OP, handle);
}

MPI_Op PMPI_Op_f2c(MPI_Fint handle) {
  SLUICE_MPI_CALL;
  return static_cast<MPI_Op>(sluice_fortran_f2c(SLUICE_FH_OP, handle));
}

MPI_Fint PMPI_Request_c2f(MPI_Request handle) {
  SLUICE_MPI_CALL;
  return sluice_fortran_c2f(SLUICE_FH_REQUEST, handle);
}

MPI_Request PMPI_Request_f2c(MPI_Fint handle) {
  SLUICE_MPI_CALL;
  return static_cast<MPI_Request>(sluice_fortran_f2c(SLUICE_FH_REQUEST, handle));
}

MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler handle) {
  SLUICE_MPI_CALL;
  return sluice_fortran_c2f(SLUICE_FH_ERRHANDLER, handle);
}

MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint handle) {
  SLUICE_MPI_CALL;
  return static_cast<MPI_Errhandler>(sluice_fortran_f2c(SLUICE_FH_ERRHANDLER, handle));
}

MPI_Fint PMPI_Info_c2f(MPI_Info handle) {
  SLUICE_MPI_CALL;
  return sluice_fortran_c2f(SLUICE_FH_INFO, handle);
}

MPI_Info PMPI_Info_f2c(MPI_Fint handle) {
  SLUICE_MPI_CALL;
  return static_cast<MPI_Info>(sluice_fortran_f2c(SLUICE_FH_INFO, handle));
}

MPI_Fint PMPI_Message_c2f(MPI_Message handle) {
  SLUICE_MPI_CALL;
  return sluice_fortran_c2f(SLUICE_FH_MESSAGE, handle);
}

MPI_Message PMPI_Message_f2c(MPI_Fint handle) {
  SLUICE_MPI_CALL;
  return static_cast<MPI_Message>(sluice_fortran_f2c(SLUICE_FH_MESSAGE, handle));
}

MPI_Fint PMPI_Win_c2f(MPI_Win handle) {
  SLUICE_MPI_CALL;
  return sluice_fortran_c2f(SLUICE_FH_WIN, handle);
}

MPI_Win PMPI_Win_f2c(MPI_Fint handle) {
  SLUICE_MPI_CALL;
  return static_cast<MPI_Win>(sluice_fortran_f2c(SLUICE_FH_WIN, handle));
}

int PMPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status) {
  SLUICE_MPI_CALL;
  if (!c_status || !f_status)
    return raise(nullptr, MPI_ERR_ARG, "MPI_Status_c2f", "a status is NULL (or an IGNORE)");
  std::memcpy(f_status, c_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}

int PMPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status) {
  SLUICE_MPI_CALL;
  if (!c_status || !f_status)
    return raise(nullptr, MPI_ERR_ARG, "MPI_Status_f2c", "a status is NULL (or an IGNORE)");
  std::memcpy(c_status, f_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}

int PMPI_Status_c2f08(const MPI_Status* c_status, MPI_F08_status* f08_status) {
  SLUICE_MPI_CALL;
  if (!c_status || !f08_status)
    return raise(nullptr, MPI_ERR_ARG, "MPI_Status_c2f08", "a status is NULL (or an IGNORE)");
  std::memcpy(f08_status, c_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}

int PMPI_Status_f082c(const MPI_F08_status* f08_status, MPI_Status* c_status) {
  SLUICE_MPI_CALL;
  if (!f08_status || !c_status)
    return raise(nullptr, MPI_ERR_ARG, "MPI_Status_f082c", "a status is NULL (or an IGNORE)");
  std::memcpy(c_status, f08_status, sizeof(MPI_Status));
  return MPI_SUCCESS;
}

}  // extern "C"

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Comm_c2f = PMPI_Comm_c2f
#pragma weak MPI_Comm_f2c = PMPI_Comm_f2c
#pragma weak MPI_Group_c2f = PMPI_Group_c2f
#pragma weak MPI_Group_f2c = PMPI_Group_f2c
#pragma weak MPI_Type_c2f = PMPI_Type_c2f
#pragma weak MPI_Type_f2c = PMPI_Type_f2c
#pragma weak MPI_Op_c2f = PMPI_Op_c2f
#pragma weak MPI_Op_f2c = PMPI_Op_f2c
#pragma weak MPI_Request_c2f = PMPI_Request_c2f
#pragma weak MPI_Request_f2c = PMPI_Request_f2c
#pragma weak MPI_Errhandler_c2f = PMPI_Errhandler_c2f
#pragma weak MPI_Errhandler_f2c = PMPI_Errhandler_f2c
#pragma weak MPI_Info_c2f = PMPI_Info_c2f
#pragma weak MPI_Info_f2c = PMPI_Info_f2c
#pragma weak MPI_Message_c2f = PMPI_Message_c2f
#pragma weak MPI_Win_c2f = PMPI_Win_c2f
#pragma weak MPI_Win_f2c = PMPI_Win_f2c
#pragma weak MPI_Message_f2c = PMPI_Message_f2c
#pragma weak MPI_Status_c2f = PMPI_Status_c2f
#pragma weak MPI_Status_c2f08 = PMPI_Status_c2f08
#pragma weak MPI_Status_f082c = PMPI_Status_f082c
#pragma weak MPI_Status_f2c = PMPI_Status_f2c
