// The MPI-4.0 large-count point-to-point entry points (MPI_Send_c, MPI_Isend_c, ...): the
// same operations as the int forms, through the MPI_Count implementations of p2p.cpp
// (p2p.hpp says why they live in their own file).
#include "mpi/big_lock.hpp"
#include "mpi/mpi_internal.hpp"
#include "mpi/p2p.hpp"

using namespace sluice::mpi;

extern "C" {

int PMPI_Send_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm) {
  SLUICE_MPI_CALL;
  return p2p::send(buf, count, datatype, dest, tag, comm, SendMode::standard, "MPI_Send_c");
}

int PMPI_Ssend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm) {
  SLUICE_MPI_CALL;
  return p2p::send(buf, count, datatype, dest, tag, comm, SendMode::sync, "MPI_Ssend_c");
}

int PMPI_Rsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm) {
  SLUICE_MPI_CALL;
  return p2p::send(buf, count, datatype, dest, tag, comm, SendMode::ready, "MPI_Rsend_c");
}

int PMPI_Bsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm) {
  SLUICE_MPI_CALL;
  return p2p::send(buf, count, datatype, dest, tag, comm, SendMode::buffered, "MPI_Bsend_c");
}

int PMPI_Buffer_attach_c(void* buffer, MPI_Count size) {
  SLUICE_MPI_CALL;
  return p2p::buffer_attach(buffer, size, "MPI_Buffer_attach_c");
}

int PMPI_Buffer_detach_c(void* buffer_addr, MPI_Count* size) {
  SLUICE_MPI_CALL;
  return p2p::buffer_detach(buffer_addr, size, "MPI_Buffer_detach_c");
}

int PMPI_Recv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                MPI_Comm comm, MPI_Status* status) {
  SLUICE_MPI_CALL;
  return p2p::recv(buf, count, datatype, source, tag, comm, status, "MPI_Recv_c");
}

int PMPI_Isend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::isend(buf, count, datatype, dest, tag, comm, request, SendMode::standard,
                    "MPI_Isend_c");
}

int PMPI_Issend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::isend(buf, count, datatype, dest, tag, comm, request, SendMode::sync, "MPI_Issend_c");
}

int PMPI_Irsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::isend(buf, count, datatype, dest, tag, comm, request, SendMode::ready,
                    "MPI_Irsend_c");
}

int PMPI_Ibsend_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                  MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::isend(buf, count, datatype, dest, tag, comm, request, SendMode::buffered,
                    "MPI_Ibsend_c");
}

int PMPI_Irecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                 MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::irecv(buf, count, datatype, source, tag, comm, request, "MPI_Irecv_c");
}

int PMPI_Sendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  SLUICE_MPI_CALL;
  return p2p::sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                       source, recvtag, comm, status, "MPI_Sendrecv_c");
}

int PMPI_Sendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                            int sendtag, int source, int recvtag, MPI_Comm comm,
                            MPI_Status* status) {
  SLUICE_MPI_CALL;
  return p2p::sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, status,
                               "MPI_Sendrecv_replace_c");
}

int PMPI_Isendrecv_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                     int sendtag, void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                     int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::isendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                        source, recvtag, comm, request, "MPI_Isendrecv_c");
}

int PMPI_Isendrecv_replace_c(void* buf, MPI_Count count, MPI_Datatype datatype, int dest,
                             int sendtag, int source, int recvtag, MPI_Comm comm,
                             MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::isendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm, request,
                                "MPI_Isendrecv_replace_c");
}

int PMPI_Mrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message,
                 MPI_Status* status) {
  SLUICE_MPI_CALL;
  return p2p::mrecv(buf, count, datatype, message, status, "MPI_Mrecv_c");
}

int PMPI_Imrecv_c(void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message,
                  MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::imrecv(buf, count, datatype, message, request, "MPI_Imrecv_c");
}

int PMPI_Get_count_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  SLUICE_MPI_CALL;
  return p2p::get_count(status, datatype, count, "MPI_Get_count_c");
}

int PMPI_Get_elements_c(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  SLUICE_MPI_CALL;
  return p2p::get_elements(status, datatype, count, "MPI_Get_elements_c");
}

int PMPI_Send_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::persistent_init(buf, count, datatype, dest, tag, comm, request,
                              sluice_request_s::Kind::send, SendMode::standard, "MPI_Send_init_c");
}

int PMPI_Ssend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::persistent_init(buf, count, datatype, dest, tag, comm, request,
                              sluice_request_s::Kind::send, SendMode::sync, "MPI_Ssend_init_c");
}

int PMPI_Bsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::persistent_init(buf, count, datatype, dest, tag, comm, request,
                              sluice_request_s::Kind::send, SendMode::buffered, "MPI_Bsend_init_c");
}

int PMPI_Rsend_init_c(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::persistent_init(buf, count, datatype, dest, tag, comm, request,
                              sluice_request_s::Kind::send, SendMode::ready, "MPI_Rsend_init_c");
}

int PMPI_Recv_init_c(void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, MPI_Request* request) {
  SLUICE_MPI_CALL;
  return p2p::persistent_init(buf, count, datatype, source, tag, comm, request,
                              sluice_request_s::Kind::recv, SendMode::standard, "MPI_Recv_init_c");
}

}  // extern "C"

// The MPI_ names: weak, so a profiling library defining them comes first (MPI-3.1
// §14.2); it reaches these definitions as PMPI_.
#pragma weak MPI_Send_c = PMPI_Send_c
#pragma weak MPI_Ssend_c = PMPI_Ssend_c
#pragma weak MPI_Rsend_c = PMPI_Rsend_c
#pragma weak MPI_Bsend_c = PMPI_Bsend_c
#pragma weak MPI_Buffer_attach_c = PMPI_Buffer_attach_c
#pragma weak MPI_Buffer_detach_c = PMPI_Buffer_detach_c
#pragma weak MPI_Recv_c = PMPI_Recv_c
#pragma weak MPI_Isend_c = PMPI_Isend_c
#pragma weak MPI_Issend_c = PMPI_Issend_c
#pragma weak MPI_Irsend_c = PMPI_Irsend_c
#pragma weak MPI_Ibsend_c = PMPI_Ibsend_c
#pragma weak MPI_Irecv_c = PMPI_Irecv_c
#pragma weak MPI_Sendrecv_c = PMPI_Sendrecv_c
#pragma weak MPI_Sendrecv_replace_c = PMPI_Sendrecv_replace_c
#pragma weak MPI_Isendrecv_c = PMPI_Isendrecv_c
#pragma weak MPI_Isendrecv_replace_c = PMPI_Isendrecv_replace_c
#pragma weak MPI_Mrecv_c = PMPI_Mrecv_c
#pragma weak MPI_Imrecv_c = PMPI_Imrecv_c
#pragma weak MPI_Get_count_c = PMPI_Get_count_c
#pragma weak MPI_Get_elements_c = PMPI_Get_elements_c
#pragma weak MPI_Send_init_c = PMPI_Send_init_c
#pragma weak MPI_Ssend_init_c = PMPI_Ssend_init_c
#pragma weak MPI_Bsend_init_c = PMPI_Bsend_init_c
#pragma weak MPI_Rsend_init_c = PMPI_Rsend_init_c
#pragma weak MPI_Recv_init_c = PMPI_Recv_init_c
